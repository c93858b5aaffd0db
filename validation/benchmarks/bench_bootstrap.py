"""Bootstrap intervals: perfci, which resamples counts, against peers that resample rows.

Three comparisons, all with 10,000 resamples at 95%:

1. F1 of 10,000 simulated texts (prevalence 0.1, recall about 0.8, false-positive rate
   about 0.03), percentile and BCa: ``pc.bootstrap_ci`` on the confusion counts against
   ``scipy.stats.bootstrap((y_true, y_pred), f1, paired=True, vectorized=True)``. The
   scipy statistic takes boolean rows and counts with ``np.count_nonzero`` (the fastest
   of the forms tried; 0/1 integer or float rows with ``np.sum`` were slower). scipy is
   timed at several values of its ``batch`` argument (``None`` = all resamples, and for
   BCa all jackknife samples, at once) and the fastest is reported.
2. Hierarchical bootstrap of a proportion, 50 persons with 30 texts each (person rates
   from Beta(9, 1), mean 0.9), percentile interval: ``scheme="hierarchical"`` against a
   plain two-stage row resampler (a Python loop over resamples; in each, 50 persons are
   drawn with replacement and one ``rng.integers`` call draws the 30 texts of every
   drawn person, as offsets into the concatenated rows), and against a fully vectorized
   row resampler (all resamples of a batch drawn as one index array; the fastest batch
   size is reported).
3. Cluster bootstrap of the same data with BCa: ``scheme="cluster"`` against a plain
   loop that draws 50 persons and takes all their rows, and a vectorized version of it;
   the BCa jackknife leaves out one person, as perfci's does.

Each perfci timing includes building the counts from the rows. Times are the best of
three runs. The intervals of perfci and the peer come from independent random draws,
so they agree only up to Monte-Carlo error; the check allows, for F1, four standard
errors of the difference of two estimated quantiles (each with standard error
sqrt(q(1 - q)/B) / phi(z_q) times the bootstrap standard error, q the quantile level),
and for the proportion an absolute difference of 0.01.

Run from the repository root: ``.venv/bin/python validation/benchmarks/bench_bootstrap.py``
"""

import time

import numpy as np
import scipy
from scipy import special, stats

import perfci as pc

SEED = 20261130
N_RESAMPLES = 10_000
LEVEL = 0.95
REPEAT = 3
# Batch sizes tried for scipy and for the vectorized peers (None: everything at once).
SCIPY_BATCHES = (None, 10, 20, 50, 100, 250, 1000)
VECTOR_BATCHES = (50, 100, 250, 1000, N_RESAMPLES)

N_TEXTS, PREVALENCE, RECALL, FALSE_POSITIVE_RATE = 10_000, 0.1, 0.8, 0.03
N_PERSONS, TEXTS_PER_PERSON, BETA_A, BETA_B = 50, 30, 9.0, 1.0
PROPORTION_TOLERANCE = 0.01


def best_of(fn, repeat=REPEAT):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def fastest_batch(fn, batches):
    """Best-of time at each batch size; return (time, batch, result, {batch: time})."""
    timings, results = {}, {}
    for batch in batches:
        timings[batch], results[batch] = best_of(lambda b=batch: fn(b))
    batch = min(timings, key=timings.get)
    return timings[batch], batch, results[batch], timings


# -- data ---------------------------------------------------------------------------


def labelled_texts(rng):
    y_true = rng.random(N_TEXTS) < PREVALENCE
    y_pred = np.where(
        y_true, rng.random(N_TEXTS) < RECALL, rng.random(N_TEXTS) < FALSE_POSITIVE_RATE
    )
    return y_true, y_pred


def persons_rows(rng):
    """Text-level 0/1 rows, one array per person."""
    rates = rng.beta(BETA_A, BETA_B, N_PERSONS)
    successes = rng.binomial(TEXTS_PER_PERSON, rates)
    return [
        rng.permutation(np.repeat([1, 0], [y, TEXTS_PER_PERSON - y])).astype(np.int8)
        for y in successes
    ]


def per_person_counts(rows):
    y = np.array([row.sum() for row in rows])
    n = np.array([row.size for row in rows])
    return np.c_[y, n - y]


# -- peers --------------------------------------------------------------------------


def f1_rows(y_true, y_pred, axis=-1):
    tp = np.count_nonzero(y_true & y_pred, axis=axis)
    return 2 * tp / (np.count_nonzero(y_true, axis=axis) + np.count_nonzero(y_pred, axis=axis))


def scipy_f1(y_true, y_pred, method, batch):
    res = stats.bootstrap(
        (y_true, y_pred),
        f1_rows,
        paired=True,
        vectorized=True,
        n_resamples=N_RESAMPLES,
        confidence_level=LEVEL,
        method=method,
        batch=batch,
        rng=np.random.default_rng(SEED + 1),
    )
    return res.confidence_interval.low, res.confidence_interval.high, res.standard_error


def _layout(rows):
    """Concatenated rows, start offset of each person, persons, texts per person."""
    flat = np.concatenate(rows)
    sizes = np.array([row.size for row in rows])
    if np.any(sizes != sizes[0]):
        raise ValueError("the row-resampling peers assume the same number of texts per person")
    return flat, np.cumsum(sizes) - sizes, len(rows), int(sizes[0])


def percentile(replicates):
    return tuple(np.quantile(replicates, [(1 - LEVEL) / 2, (1 + LEVEL) / 2]))


def bca(replicates, theta_hat, jackknife):
    """BCa interval; z0 counts ties as half (as scipy and perfci do)."""
    below = np.count_nonzero(replicates < theta_hat) + np.count_nonzero(replicates <= theta_hat)
    z0 = special.ndtri(below / (2 * replicates.size))
    dev = jackknife.mean() - jackknife
    a = (dev**3).sum() / (6 * (dev**2).sum() ** 1.5)
    z = special.ndtri([(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return tuple(np.quantile(replicates, special.ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))))


def hierarchical_plain(rows, rng):
    flat, offsets, m, k = _layout(rows)
    replicates = np.empty(N_RESAMPLES)
    for b in range(N_RESAMPLES):
        persons = rng.integers(0, m, m)
        texts = offsets[persons, None] + rng.integers(0, k, (m, k))
        replicates[b] = flat[texts].mean()
    return percentile(replicates)


def hierarchical_plain_unbalanced(rows, rng):
    """Two-stage resampling of persons with different numbers of texts (loop over resamples)."""
    sizes = np.array([row.size for row in rows])
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    flat = np.concatenate(rows)
    m = sizes.size
    replicates = np.empty(N_RESAMPLES)
    for b in range(N_RESAMPLES):
        persons = rng.integers(0, m, m)
        n = sizes[persons]
        start = np.repeat(offsets[persons], n)
        texts = start + (rng.random(n.sum()) * np.repeat(n, n)).astype(np.int64)
        replicates[b] = flat[texts].mean()
    return percentile(replicates)


def unbalanced_rows(rng):
    """Text-level 0/1 rows of 50 persons with 1 to 40 texts each."""
    sizes = rng.integers(1, 41, N_PERSONS)
    rates = rng.beta(BETA_A, BETA_B, N_PERSONS)
    return [(rng.random(n) < p).astype(np.int8) for n, p in zip(sizes, rates, strict=True)]


def hierarchical_vectorized(rows, rng, batch):
    flat, offsets, m, k = _layout(rows)
    replicates = np.empty(N_RESAMPLES)
    for start in range(0, N_RESAMPLES, batch):
        b = min(batch, N_RESAMPLES - start)
        persons = rng.integers(0, m, (b, m))
        texts = offsets[persons][..., None] + rng.integers(0, k, (b, m, k))
        replicates[start : start + b] = flat[texts].mean(axis=(1, 2))
    return percentile(replicates)


def leave_one_person_out(rows):
    flat, offsets, m, k = _layout(rows)
    return np.array([np.delete(flat, np.s_[o : o + k]).mean() for o in offsets])


def cluster_plain_bca(rows, rng):
    flat, offsets, m, k = _layout(rows)
    within = np.arange(k)
    replicates = np.empty(N_RESAMPLES)
    for b in range(N_RESAMPLES):
        persons = rng.integers(0, m, m)
        replicates[b] = flat[offsets[persons, None] + within].mean()
    return bca(replicates, flat.mean(), leave_one_person_out(rows))


def cluster_vectorized_bca(rows, rng, batch):
    flat, offsets, m, k = _layout(rows)
    within = np.arange(k)
    replicates = np.empty(N_RESAMPLES)
    for start in range(0, N_RESAMPLES, batch):
        b = min(batch, N_RESAMPLES - start)
        persons = rng.integers(0, m, (b, m))
        replicates[start : start + b] = flat[offsets[persons][..., None] + within].mean(axis=(1, 2))
    return bca(replicates, flat.mean(), leave_one_person_out(rows))


# -- perfci -------------------------------------------------------------------------


def perfci_f1(y_true, y_pred, interval):
    counts = pc.confusion(y_true, y_pred).counts
    return pc.bootstrap_ci(
        counts, "f1", interval=interval, n_resamples=N_RESAMPLES, rng=np.random.default_rng(SEED)
    )


def perfci_proportion(rows, scheme, interval):
    return pc.bootstrap_ci(
        per_person_counts(rows),
        "proportion",
        scheme=scheme,
        interval=interval,
        n_resamples=N_RESAMPLES,
        rng=np.random.default_rng(SEED),
    )


def quantile_mc_tolerance(se, n_resamples=N_RESAMPLES, k=4.0):
    """Return k standard errors of the gap between two independent quantile estimates."""
    q = np.array([(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    one = se * np.sqrt(q * (1 - q) / n_resamples) / stats.norm.pdf(stats.norm.ppf(q))
    return float(k * np.sqrt(2) * one.max())


def main():
    print(
        f"numpy {np.__version__}, scipy {scipy.__version__}; {N_RESAMPLES:,} resamples, "
        f"{LEVEL:.0%} level, best of {REPEAT}"
    )
    y_true, y_pred = labelled_texts(np.random.default_rng(SEED))
    rows = persons_rows(np.random.default_rng(SEED + 2))
    counts = pc.confusion(y_true, y_pred).counts
    print(f"texts: {N_TEXTS:,}, [tp, fp, fn, tn] = {counts.tolist()}")
    people = per_person_counts(rows)
    print(
        f"persons: {N_PERSONS} x {TEXTS_PER_PERSON} texts, pooled proportion "
        f"{people[:, 0].sum() / people.sum():.4f}"
    )

    table, checks, tuning = [], [], []
    for interval, method in [("percentile", "percentile"), ("bca", "BCa")]:
        t_ours, ci = best_of(lambda i=interval: perfci_f1(y_true, y_pred, i))
        t_peer, batch, (low, high, se), timings = fastest_batch(
            lambda b, m=method: scipy_f1(y_true, y_pred, m, b), SCIPY_BATCHES
        )
        name = f"F1 {interval}"
        tuning.append((f"scipy.stats.bootstrap, {name}", timings))
        table.append((name, f"scipy.stats.bootstrap (batch={batch})", t_ours, t_peer, 100))
        checks.append((name, ci, (low, high), quantile_mc_tolerance(se)))

    t_ours, ci = best_of(lambda: perfci_proportion(rows, "hierarchical", "percentile"))
    t_peer, peer_ci = best_of(lambda: hierarchical_plain(rows, np.random.default_rng(SEED + 1)))
    name = "hierarchical percentile"
    table.append((name, "plain two-stage loop", t_ours, t_peer, 50))
    checks.append((name + " (plain)", ci, peer_ci, PROPORTION_TOLERANCE))
    t_vec, batch, vec_ci, timings = fastest_batch(
        lambda b: hierarchical_vectorized(rows, np.random.default_rng(SEED + 1), b),
        VECTOR_BATCHES,
    )
    tuning.append((f"vectorized two-stage, {name}", timings))
    table.append((name, f"vectorized two-stage (batch={batch})", t_ours, t_vec, None))
    checks.append((name + " (vectorized)", ci, vec_ci, PROPORTION_TOLERANCE))

    # Persons with 1 to 40 texts: the exact distribution of all 50 persons has a large
    # grid, so perfci draws each resample as exact parts of a few persons (chosen by cost).
    uneven = unbalanced_rows(np.random.default_rng(SEED + 3))
    t_ours, ci = best_of(lambda: perfci_proportion(uneven, "hierarchical", "percentile"))
    t_peer, peer_ci = best_of(
        lambda: hierarchical_plain_unbalanced(uneven, np.random.default_rng(SEED + 1))
    )
    name = "hierarchical, 1-40 texts"
    table.append((name, "plain two-stage loop", t_ours, t_peer, None))
    checks.append((name + " (plain)", ci, peer_ci, PROPORTION_TOLERANCE))

    t_ours, ci = best_of(lambda: perfci_proportion(rows, "cluster", "bca"))
    t_peer, peer_ci = best_of(lambda: cluster_plain_bca(rows, np.random.default_rng(SEED + 1)))
    name = "cluster BCa"
    table.append((name, "plain cluster loop", t_ours, t_peer, None))
    checks.append((name + " (plain)", ci, peer_ci, PROPORTION_TOLERANCE))
    t_vec, batch, vec_ci, timings = fastest_batch(
        lambda b: cluster_vectorized_bca(rows, np.random.default_rng(SEED + 1), b), VECTOR_BATCHES
    )
    tuning.append((f"vectorized cluster, {name}", timings))
    table.append((name, f"vectorized cluster (batch={batch})", t_ours, t_vec, None))
    checks.append((name + " (vectorized)", ci, vec_ci, PROPORTION_TOLERANCE))

    print("\nPeer time (s) by batch size:")
    for what, timings in tuning:
        cells = ", ".join(f"{b if b is not None else 'None'}: {t:.3f}" for b, t in timings.items())
        print(f"  {what}: {cells}")

    print(f"\n{'interval':<25}{'peer':<38}{'perfci (s)':>11}{'peer (s)':>10}{'ratio':>8}  goal")
    for name, peer, t_ours, t_peer, goal in table:
        ratio = t_peer / t_ours
        verdict = "" if goal is None else f">= {goal}x: {'met' if ratio >= goal else 'NOT met'}"
        print(f"{name:<25}{peer:<38}{t_ours:>11.4f}{t_peer:>10.4f}{ratio:>8.1f}  {verdict}")

    print(f"\n{'agreement':<38}{'perfci':>20}{'peer':>20}{'max |diff|':>12}{'tol':>9}")
    for name, ci, (low, high), tol in checks:
        diff = max(abs(ci.low - low), abs(ci.high - high))
        ours, theirs = f"[{ci.low:.4f}, {ci.high:.4f}]", f"[{low:.4f}, {high:.4f}]"
        ok = "ok" if diff < tol else "DISAGREE"
        print(f"{name:<38}{ours:>20}{theirs:>20}{diff:>12.5f}{tol:>9.5f}  {ok}")


if __name__ == "__main__":
    main()
