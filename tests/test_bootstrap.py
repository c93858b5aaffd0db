import warnings

import numpy as np
import pytest
from scipy import stats

import perfci as pc
from perfci import policy
from perfci.metrics import CELL_POOLING


def gof_pvalue(values, support, pmf):
    """Chi-square goodness of fit of observed replicate values to an exact pmf."""
    observed = np.array([np.sum(np.isclose(values, v)) for v in support])
    assert observed.sum() == values.size
    expected = pmf * values.size
    keep = expected >= 5  # pool the thin tail cells
    obs = np.r_[observed[keep], observed[~keep].sum()]
    exp = np.r_[expected[keep], expected[~keep].sum()]
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


# ----------------------------------------------------------------------------- exactness


@pytest.mark.parametrize(("x", "n", "lam"), [(27, 30, 0), (19, 20, 1), (8, 40, 2)])
def test_iid_proportion_replicates_follow_the_binomial(x, n, lam):
    ci = pc.bootstrap_ci(
        [x, n - x], "proportion", pseudo_count=lam, n_resamples=20_000, rng=5, draws="resamples"
    )
    size = n + 2 * lam
    support = np.arange(size + 1) / size
    pmf = stats.binom.pmf(np.arange(size + 1), size, (x + lam) / size)
    assert gof_pvalue(ci.distribution, support, pmf) > 1e-3


def test_pseudo_counts_go_into_every_cell_for_confusion_metrics():
    # accuracy* = (tp* + tn*) / (n + 4 lam) with
    # tp* + tn* ~ Binomial(n + 4 lam, (tp + tn + 2 lam) / (n + 4 lam))
    counts, lam = np.array([30, 4, 6, 60]), 1
    size = counts.sum() + 4 * lam
    ci = pc.bootstrap_ci(counts, "accuracy", pseudo_count=lam, n_resamples=20_000, rng=2)
    pmf = stats.binom.pmf(np.arange(size + 1), size, (90 + 2 * lam) / size)
    assert gof_pvalue(ci.distribution, np.arange(size + 1) / size, pmf) > 1e-3


@pytest.mark.parametrize(
    ("x", "n", "lam", "level"),
    [(26, 30, 0, 0.95), (18, 20, 1, 0.9), (9, 10, 1, 0.95), (17, 20, 0, 0.9)],
)
def test_monte_carlo_percentile_converges_to_the_exact_interval(x, n, lam, level):
    exact = pc.bootstrap_ci(
        [x, n - x], "proportion", pseudo_count=lam, n_resamples="exact", confidence_level=level
    )
    size = n + 2 * lam
    # reference: binomial quantiles straight from scipy
    dist = stats.binom(size, (x + lam) / size)
    tails = [(1 - level) / 2, (1 + level) / 2]
    assert exact.low == dist.ppf(tails[0]) / size and exact.high == dist.ppf(tails[1]) / size
    mc = pc.bootstrap_ci(
        [x, n - x],
        "proportion",
        pseudo_count=lam,
        n_resamples=40_000,
        confidence_level=level,
        rng=11,
    )
    # With 40,000 resamples the empirical CDF has an SD below 0.0025; these cases have
    # every quantile level at least 0.01 from a step of the CDF, so the empirical
    # quantile sits on the exact one except with negligible probability.
    for q in tails:
        k = dist.ppf(q)
        assert min(abs(dist.cdf(k) - q), abs(dist.cdf(k - 1) - q)) > 0.01
    assert (mc.low, mc.high) == (exact.low, exact.high)


def test_exact_standard_error():
    ci = pc.bootstrap_ci([19, 1], "proportion", pseudo_count=1, n_resamples="exact")
    assert ci.standard_error == pytest.approx(np.sqrt(20 / 22 * 2 / 22 / 22))
    assert ci.distribution is None and ci.n_resamples == "exact"


def test_cluster_with_pseudo_person_is_drawn_among_m_plus_1():
    # Every one of m persons has a single success; the pseudo-person holds (1, 1). A
    # replicate is 1 exactly when the pseudo-person is not drawn: (m / (m + 1))^(m + 1).
    m, reps = 9, 20_000
    ci = pc.bootstrap_ci(
        np.tile([1, 0], (m, 1)),
        "proportion",
        scheme="cluster",
        pseudo_count=1,
        n_resamples=reps,
        rng=3,
    )
    assert ci.n_clusters == m
    ones = int(np.sum(ci.distribution == 1.0))
    assert stats.binomtest(ones, reps, (m / (m + 1)) ** (m + 1)).pvalue > 1e-3


def test_hierarchical_variance_has_the_two_stage_closed_form():
    # Balanced persons (n texts each): Var(p*) = S^2 / m + mean(p_i (1 - p_i)) / (m n),
    # S^2 the population variance of the person rates p_i.
    rng = np.random.default_rng(8)
    m, n = 25, 12
    y = rng.binomial(n, rng.beta(8, 2, size=m))
    p_i = y / n
    expected = p_i.var() / m + np.mean(p_i * (1 - p_i)) / (m * n)
    reps = 40_000
    ci = pc.bootstrap_ci(
        np.c_[y, n - y], "proportion", scheme="hierarchical", n_resamples=reps, rng=4
    )
    # the sampling SD of a variance estimate from B draws is about var * sqrt(2 / B)
    assert ci.standard_error**2 == pytest.approx(expected, rel=4 * np.sqrt(2 / reps) * 1.5)
    cluster = pc.bootstrap_ci(
        np.c_[y, n - y], "proportion", scheme="cluster", n_resamples=reps, rng=4
    )
    assert cluster.standard_error**2 == pytest.approx(
        p_i.var() / m, rel=4 * np.sqrt(2 / reps) * 1.5
    )


# -------------------------------------------------------------------------- metamorphic


def test_singleton_persons_give_the_iid_distribution():
    m, x = 40, 31
    persons = np.r_[np.tile([1, 0], (x, 1)), np.tile([0, 1], (m - x, 1))]
    cluster = pc.bootstrap_ci(persons, "proportion", scheme="cluster", n_resamples=20_000, rng=9)
    hierarchical = pc.bootstrap_ci(
        persons, "proportion", scheme="hierarchical", n_resamples=20_000, rng=9
    )
    # one text per person: within-person resampling is deterministic, draw for draw
    np.testing.assert_array_equal(cluster.distribution, hierarchical.distribution)
    pmf = stats.binom.pmf(np.arange(m + 1), m, x / m)
    assert gof_pvalue(cluster.distribution, np.arange(m + 1) / m, pmf) > 1e-3


def test_singleton_persons_with_confusion_cells_match_iid_quantiles():
    rng = np.random.default_rng(12)
    cells = rng.multinomial(1, [0.1, 0.03, 0.02, 0.85], size=300)  # one text per person
    iid = pc.bootstrap_ci(cells.sum(0), "f1", n_resamples=20_000, rng=1)
    for scheme in ["cluster", "hierarchical"]:
        nested = pc.bootstrap_ci(cells, "f1", scheme=scheme, n_resamples=20_000, rng=2)
        # MC SD of a 2.5% / 97.5% quantile from B draws of a near-normal statistic:
        # sqrt(q (1 - q) / B) / phi(1.96) * SE = 2.69 SE / sqrt(B); allow 4 SD of the
        # difference of two independent estimates.
        tol = 4 * 2.69 * np.hypot(iid.standard_error, nested.standard_error) / np.sqrt(20_000)
        assert nested.low == pytest.approx(iid.low, abs=tol)
        assert nested.high == pytest.approx(iid.high, abs=tol)


@pytest.mark.parametrize("scheme", ["cluster", "hierarchical"])
def test_relabelling_persons_changes_nothing(scheme):
    rng = np.random.default_rng(4)
    cells = rng.multinomial(15, [0.2, 0.05, 0.05, 0.7], size=12)
    a = pc.bootstrap_ci(
        cells, "f1", scheme=scheme, interval="bca", pseudo_count=1, n_resamples=500, rng=5
    )
    b = pc.bootstrap_ci(
        cells[rng.permutation(12)],
        "f1",
        scheme=scheme,
        interval="bca",
        pseudo_count=1,
        n_resamples=500,
        rng=5,
    )
    np.testing.assert_array_equal(a.distribution, b.distribution)
    assert (a.low, a.high) == (b.low, b.high)


@pytest.mark.parametrize("scheme", pc.SCHEMES)
@pytest.mark.parametrize("interval", pc.BOOTSTRAP_INTERVALS)
def test_batch_changes_nothing(scheme, interval):
    rng = np.random.default_rng(6)
    cells = rng.multinomial(20, [0.2, 0.05, 0.1, 0.65], size=8)
    whole = pc.bootstrap_ci(
        cells,
        "kappa",
        scheme=scheme,
        interval=interval,
        pseudo_count=1,
        n_resamples=999,
        rng=21,
        nested=True,
    )
    for batch in [1, 10, 333, 5000]:
        part = pc.bootstrap_ci(
            cells,
            "kappa",
            scheme=scheme,
            interval=interval,
            pseudo_count=1,
            n_resamples=999,
            rng=21,
            batch=batch,
            nested=True,
        )
        np.testing.assert_array_equal(whole.distribution, part.distribution)
        assert (whole.low, whole.high) == (part.low, part.high)


def test_same_seed_same_result_and_generator_accepted():
    a = pc.bootstrap_ci([40, 5, 7, 100], "mcc", n_resamples=300, rng=1)
    b = pc.bootstrap_ci([40, 5, 7, 100], "mcc", n_resamples=300, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(a.distribution, b.distribution)


# ------------------------------------------------------------------ against scipy.stats


def _f1_rows(y_true, y_pred, axis=-1):
    tp = np.sum(y_true & y_pred, axis=axis)
    fp = np.sum(~y_true & y_pred, axis=axis)
    fn = np.sum(y_true & ~y_pred, axis=axis)
    return 2 * tp / (2 * tp + fp + fn)


@pytest.mark.parametrize("interval", ["percentile", "bca"])
def test_agrees_with_scipy_bootstrap_within_monte_carlo_error(interval):
    rng = np.random.default_rng(30)
    n = 400
    y_true = rng.random(n) < 0.2
    y_pred = np.where(y_true, rng.random(n) < 0.8, rng.random(n) < 0.05)
    counts = pc.confusion(y_true, y_pred).counts
    # F1 of 400 texts takes few values near the ends, so an end's MC spread over seeds
    # is lumpy: 40 seeds, not a dozen, to estimate its SD (measured: 12 seeds of one
    # stream gave half the SD of 300).
    reps, seeds = 4000, 40
    ours = [
        pc.bootstrap_ci(counts, "f1", interval=interval, n_resamples=reps, rng=s)
        for s in range(seeds)
    ]
    low = np.array([c.low for c in ours])
    high = np.array([c.high for c in ours])
    ref = stats.bootstrap(
        (y_true, y_pred),
        _f1_rows,
        paired=True,
        vectorized=True,
        n_resamples=reps,
        method="BCa" if interval == "bca" else "percentile",
        rng=np.random.default_rng(99),
    ).confidence_interval
    # Both are Monte-Carlo estimates of the same interval with the same B: the spread of
    # ours over seeds estimates the MC SD of either; allow 4 SD of the difference.
    for mine, theirs in [(low, ref.low), (high, ref.high)]:
        sd = mine.std(ddof=1)
        assert abs(mine.mean() - theirs) <= 4 * sd * np.sqrt(1 + 1 / seeds)
    assert pc.compute_metric(counts, "f1") == pytest.approx(_f1_rows(y_true, y_pred))


def test_multiclass_macro_f1_bootstrap():
    rng = np.random.default_rng(5)
    y_true = rng.choice(3, 300)
    y_pred = np.where(rng.random(300) < 0.75, y_true, rng.choice(3, 300))
    counts = pc.confusion(y_true, y_pred)
    ci = pc.bootstrap_ci(counts, "macro_f1", interval="bca", n_resamples=2000, rng=1)
    assert ci.estimate == pytest.approx(pc.compute_metric(counts, "macro_f1"))
    assert ci.low < ci.estimate < ci.high
    # resampling the k x k matrix keeps micro_f1 equal to accuracy in every replicate
    micro = pc.bootstrap_ci(counts.matrix, "micro_f1", n_resamples=500, rng=2)
    acc = pc.bootstrap_ci(
        counts.matrix.trace() * np.array([1, 0]) + np.array([0, 300 - counts.matrix.trace()]),
        "proportion",
        n_resamples=500,
        rng=2,
        draws="resamples",
    )
    assert micro.distribution.mean() == pytest.approx(acc.distribution.mean(), abs=0.01)


# ---------------------------------------------------------------------------- policies


def test_undefined_replicates_are_dropped_counted_and_warned():
    # one human positive among 51 texts: recall is undefined whenever it is not drawn
    # every defined replicate is 1: a zero-width interval, with its own warning
    with (
        pytest.warns(pc.UndefinedMetricWarning, match="recall was undefined in"),
        pytest.warns(pc.DegenerateBootstrapWarning, match="zero width"),
    ):
        ci = pc.bootstrap_ci([1, 0, 0, 50], "recall", n_resamples=2000, rng=1)
    expected = (50 / 51) ** 51 * 2000
    assert abs(ci.n_invalid_resamples - expected) < 5 * np.sqrt(expected)
    assert ci.distribution.size == 2000 - ci.n_invalid_resamples


def test_few_undefined_replicates_are_dropped_silently():
    # silently as to the dropped replicates: every defined one is 1 (zero width)
    with pytest.warns(pc.DegenerateBootstrapWarning, match="zero width") as caught:
        ci = pc.bootstrap_ci([4, 0, 0, 50], "recall", n_resamples=2000, rng=1)
    assert not any(issubclass(w.category, pc.UndefinedMetricWarning) for w in caught)
    assert 0 < ci.n_invalid_resamples < 200


def test_metric_undefined_everywhere_is_an_error():
    with pytest.raises(ValueError, match="undefined in every resample"):
        pc.bootstrap_ci([0, 5, 0, 5], "recall")


def test_undefined_estimate_with_pseudo_counts_still_gives_an_interval():
    # no reference positives: recall is undefined, but the pseudo counts define it
    # (about e^-2 = 13.5% of resamples draw neither pseudo-count cell: a second warning)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ci = pc.bootstrap_ci([0, 5, 0, 5], "recall", pseudo_count=1, n_resamples=500, rng=1)
    messages = [str(w.message) for w in caught]
    assert any("undefined on the observed counts" in m for m in messages)
    assert np.isnan(ci.estimate) and 0 <= ci.low < ci.high <= 1


def test_bca_falls_back_to_percentile_on_a_degenerate_distribution():
    with (
        pytest.warns(pc.DegenerateBootstrapWarning, match="single value"),
        pytest.warns(pc.DegenerateBootstrapWarning, match="zero width"),
    ):
        ci = pc.bootstrap_ci([20, 0], "proportion", interval="bca", n_resamples=200, rng=1)
    assert ci.bca_fallback and ci.low == ci.high == 1.0
    assert "single value" in ci.fallback_reason


def test_result_fields():
    ci = pc.bootstrap_ci([12, 3, 4, 81], "f1", interval="bca", n_resamples=1000, rng=0)
    assert ci.standard_error == pytest.approx(np.std(ci.distribution, ddof=1))
    assert np.isfinite(ci.bias_correction) and np.isfinite(ci.acceleration)
    assert ci.n_texts == 100 and ci.n_clusters is None and not ci.bca_fallback
    assert ci.half_width == pytest.approx((ci.high - ci.low) / 2)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([5, -1], "proportion"), {}, "`counts` must be non-negative"),
        (([5.5, 1], "proportion"), {}, "`counts` must be whole numbers"),
        (([5, 1, 2], "proportion"), {}, r"must hold \[successes, failures\]"),
        (([5, 1], "f1"), {}, r"must hold \[tp, fp, fn, tn\]"),
        (([5, 1], "proportion"), {"scheme": "cluster"}, "per person"),
        (([5, 1], "proportion"), {"scheme": "twostage"}, r"`scheme` must be one of \['cluster'"),
        (([5, 1], "proportion"), {"interval": "basic"}, "`interval` must be one of"),
        (([5, 1], "auc"), {}, "`metric` must be one of"),
        (([5, 1], "proportion"), {"n_resamples": 0}, "`n_resamples` must be a positive integer"),
        (([5, 1], "proportion"), {"n_resamples": 10.5}, "`n_resamples` must be a positive"),
        (([5, 1], "proportion"), {"n_resamples": "many"}, "`n_resamples` must be a positive"),
        (([1, 2, 3, 4], "f1"), {"n_resamples": "exact"}, "available for metric='proportion'"),
        (([5, 1], "proportion"), {"pseudo_count": 0.5}, "`pseudo_count` must be a non-negative"),
        (([5, 1], "proportion"), {"pseudo_count": -1}, "`pseudo_count` must be a non-negative"),
        (([5, 1], "proportion"), {"batch": 0}, "`batch` must be a positive integer"),
        (([5, 1], "proportion"), {"confidence_level": 1}, "`confidence_level`"),
        (([0, 0], "proportion"), {}, "at least one text"),
        (([5, np.nan], "proportion"), {}, "`counts` must be finite"),
    ],
)
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.bootstrap_ci(*args, **kwargs)


@pytest.mark.parametrize("scheme", ["cluster", "hierarchical"])
@pytest.mark.parametrize("pseudo_count", [0, 1])
@pytest.mark.parametrize("interval", ["percentile", "bca"])
def test_a_cluster_scheme_of_one_person_is_refused(scheme, pseudo_count, interval):
    # Before: a zero-width interval (cluster) or the iid interval of one person's texts
    # (hierarchical), presented as an interval about the population of persons.
    one = [[5, 1, 2, 30], [0, 0, 0, 0]]  # a person without texts is not a person
    with pytest.raises(ValueError, match=r"^`counts` must hold at least 2 persons.*got 1\.$"):
        pc.bootstrap_ci(
            one, "f1", scheme=scheme, pseudo_count=pseudo_count, interval=interval, rng=1
        )
    # about texts, one person's texts are texts
    iid = pc.bootstrap_ci(one, "f1", nested=True, pseudo_count=pseudo_count, rng=1)
    assert iid.low < iid.high


@pytest.mark.parametrize("scheme", ["cluster", "hierarchical"])
def test_one_person_in_a_batch_is_nan_with_a_warning_and_leaves_the_others_alone(scheme):
    counts = np.array([[[5, 1], [0, 0]], [[3, 2], [4, 1]], [[2, 0], [0, 0]]])
    with pytest.warns(pc.UndefinedMetricWarning, match="2 of 3 data sets have a single person"):
        ci = pc.bootstrap_ci(counts, "proportion", scheme=scheme, n_resamples=300, rng=4)
    assert np.isnan(ci.low[[0, 2]]).all() and np.isnan(ci.high[[0, 2]]).all()
    assert np.isnan(ci.standard_error[[0, 2]]).all()
    np.testing.assert_array_equal(ci.estimate, [5 / 6, 7 / 10, 1.0])  # still defined
    np.testing.assert_array_equal(ci.n_clusters, [1, 2, 1])
    alone = pc.bootstrap_ci(
        counts[1],
        "proportion",
        scheme=scheme,
        n_resamples=300,
        rng=pc.batch_generators(4, 3)[1],
    )
    np.testing.assert_array_equal(ci.distribution[1], alone.distribution)
    assert (ci.low[1], ci.high[1]) == (alone.low, alone.high)


def test_rng_is_normalized_once_and_bad_ones_are_refused():
    seeded = pc.bootstrap_ci([40, 6, 9, 45], "f1", n_resamples=200, rng=3)
    generator = pc.bootstrap_ci([40, 6, 9, 45], "f1", n_resamples=200, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(seeded.distribution, generator.distribution)
    for bad in ("abc", 1.5, -1, True, np.random.RandomState(3)):
        with pytest.raises(ValueError, match=r"^`rng` must be a numpy.random.Generator"):
            pc.bootstrap_ci([40, 6, 9, 45], "f1", rng=bad)


def test_memory_sized_requests_are_refused_before_allocating(monkeypatch):
    from perfci._core import resources

    monkeypatch.setattr(resources, "_SMALL", 0)
    monkeypatch.setattr(resources, "available_memory", lambda: 20_000)
    with pytest.raises(ValueError, match=r"^`n_resamples` = 2000 for 1 data set needs .*fewer"):
        pc.bootstrap_ci([5, 1], "proportion", n_resamples=2000)
    pc.bootstrap_ci([5, 1], "proportion", n_resamples=100, rng=1)  # 1.6 kB: fine


def test_exact_coverage_of_bootstrap_percentile_methods():
    # The infinite-resample percentile coverage by enumeration equals a brute-force sum
    # over x of the exact bootstrap intervals.
    n, p, lam = 25, 0.9, 1
    x = np.arange(n + 1)
    pmf = stats.binom.pmf(x, n, p)
    hits = 0.0
    for xi, w in zip(x, pmf, strict=True):
        ci = pc.bootstrap_ci([xi, n - xi], "proportion", pseudo_count=lam, n_resamples="exact")
        hits += w * (ci.low <= p <= ci.high)
    assert pc.exact_coverage(f"pseudo_percentile_{lam}", n, p) == pytest.approx(hits, abs=1e-12)
    assert pc.exact_coverage("percentile", 20, 0.95) == pytest.approx(
        pc.exact_coverage("wald", 20, 0.95), abs=0.05
    )
    with pytest.raises(ValueError, match="'pseudo_percentile_<lambda>'"):
        pc.exact_coverage("pseudo_percentile_x", 10, 0.5)


@pytest.mark.parametrize("scheme", ["cluster", "hierarchical"])
def test_exact_person_distribution_matches_simulated_resampling(scheme, monkeypatch):
    # Proportions under person resampling are drawn from the exact distribution of the
    # resample (an m-fold convolution) when its grid is small; the simulation of persons
    # (and texts) must give the same distribution: chi-square test of homogeneity.
    from perfci._core import resampling

    sizes = np.array([2, 5, 3, 6, 4, 2, 5, 3])
    y = np.array([2, 4, 2, 6, 3, 1, 5, 3])
    cells = np.c_[y, sizes - y]
    reps = 30_000
    exact = pc.bootstrap_ci(
        cells, "proportion", scheme=scheme, pseudo_count=1, n_resamples=reps, rng=1
    )
    monkeypatch.setattr(resampling, "EXACT_GRID_CELLS", 0)
    simulated = pc.bootstrap_ci(
        cells, "proportion", scheme=scheme, pseudo_count=1, n_resamples=reps, rng=2
    )
    values = np.union1d(np.round(exact.distribution, 12), np.round(simulated.distribution, 12))
    table = np.array(
        [
            [np.sum(np.round(d, 12) == v) for v in values]
            for d in (exact.distribution, simulated.distribution)
        ]
    )
    table = table[:, table.sum(0) >= 10]
    assert stats.chi2_contingency(table).pvalue > 1e-3


# ------------------------------------------------------------------- the engine at scale


def _alias_pmf(share, alias):
    """The probabilities an alias table draws its indices with (the table inverted)."""
    k = share.size
    return (share + np.bincount(alias, weights=1 - share, minlength=k)) / k


@pytest.mark.parametrize("scheme", ["cluster", "hierarchical"])
def test_exact_parts_equal_the_enumerated_distribution(scheme, monkeypatch):
    # Three persons, so every resample (3^3 ordered picks, then binomial texts within
    # each pick for the hierarchical scheme) can be enumerated; k = m (the grid is free)
    # gives the exact distribution of a resample's (texts, successes) as one part.
    from itertools import product

    from perfci._core import resampling

    cells = np.array([[1, 1], [3, 0], [2, 2]], dtype=float)
    monkeypatch.setattr(resampling, "_FFT_NS_PER_CELL", 0.0)
    monkeypatch.setattr(resampling, "_FFT_FIXED_NS", 0.0)
    plan = resampling._proportion_parts(cells, scheme, 1000)
    assert plan is not None and (plan.k, plan.parts) == (3, 1)
    share, alias, texts, hits = plan.full
    drawn = {}
    for t, h, p in zip(texts + plan.texts_base, hits, _alias_pmf(share, alias), strict=True):
        drawn[(int(t), int(h))] = drawn.get((int(t), int(h)), 0.0) + p
    expected: dict[tuple[int, int], float] = {}
    sizes, y = cells.sum(1).astype(int), cells[:, 0].astype(int)
    for picks in product(range(3), repeat=3):
        outcomes = [
            [(y[i], 1.0)]
            if scheme == "cluster"
            else [(x, stats.binom.pmf(x, sizes[i], y[i] / sizes[i])) for x in range(sizes[i] + 1)]
            for i in picks
        ]
        for combo in product(*outcomes):
            key = (int(sizes[list(picks)].sum()), int(sum(x for x, _ in combo)))
            expected[key] = expected.get(key, 0.0) + np.prod([w for _, w in combo]) / 27
    keys = sorted(set(expected) | {k for k, v in drawn.items() if v > 1e-15})
    np.testing.assert_allclose(
        [drawn.get(k, 0.0) for k in keys], [expected.get(k, 0.0) for k in keys], atol=1e-12
    )


@pytest.mark.parametrize("scheme", ["cluster", "hierarchical"])
@pytest.mark.parametrize("one_part", [True, False])  # k = m: one part of all persons; k = 1
def test_exact_parts_and_simulated_persons_agree_within_mc_error(scheme, one_part, monkeypatch):
    # The same bootstrap distribution three ways: drawn as one exact part (k = m), as
    # single picks from their exact distribution (k = 1), and by simulating persons and
    # texts (no grid allowed). Chi-square test of homogeneity of the replicate values.
    from perfci._core import resampling

    sizes = np.array([2, 5, 3, 6, 4, 2, 5, 3, 4, 4])
    y = np.array([2, 4, 2, 6, 3, 1, 5, 3, 0, 4])
    cells = np.c_[y, sizes - y]
    reps = 30_000
    # free grids make one part of all persons cheapest; free parts make single picks
    monkeypatch.setattr(resampling, "_FFT_NS_PER_CELL", 0.0 if one_part else 1e-9)
    monkeypatch.setattr(resampling, "_PART_NS", 1.0 if one_part else 0.0)
    monkeypatch.setattr(resampling, "_FFT_FIXED_NS", 0.0)
    augmented = np.vstack([cells, [1, 1]]).astype(float)
    plan = resampling._proportion_parts(augmented, scheme, reps)
    assert plan is not None and plan.k == (augmented.shape[0] if one_part else 1)
    parts = pc.bootstrap_ci(
        cells, "proportion", scheme=scheme, pseudo_count=1, n_resamples=reps, rng=1
    )
    monkeypatch.setattr(resampling, "EXACT_GRID_CELLS", 0)
    simulated = pc.bootstrap_ci(
        cells, "proportion", scheme=scheme, pseudo_count=1, n_resamples=reps, rng=2
    )
    a, b = np.round(parts.distribution, 12), np.round(simulated.distribution, 12)
    values = np.union1d(a, b)
    table = np.array([[np.sum(d == v) for v in values] for d in (a, b)])
    table = table[:, table.sum(0) >= 10]
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_equal_sizes_give_a_one_row_grid_and_sizes_are_binned_by_their_divisor():
    from perfci._core import resampling

    equal = np.c_[np.arange(40) % 7, 6 - np.arange(40) % 7].astype(float)
    plan = resampling._proportion_parts(equal, "cluster", 2000)
    assert plan is not None and plan.texts_base == 40 * 6
    assert np.all(plan.full[2] == 0)  # one row: every part has k n texts
    # sizes 10 and 30: texts of a part are k * 10 + 20 j, a grid of k + 1 rows
    binned = np.c_[np.r_[np.full(20, 4), np.full(20, 12)], np.r_[np.full(20, 6), np.full(20, 18)]]
    plan = resampling._proportion_parts(binned.astype(float), "hierarchical", 2000)
    assert plan is not None and set(np.unique(plan.full[2] % 20)) == {0}


def test_hierarchical_kernels_follow_the_two_stage_closed_form(monkeypatch):
    # The simulated path (no grid): the closed-form variance of the hierarchical
    # bootstrap for balanced persons, S^2 / m + mean(p_i (1 - p_i)) / (m n), for a
    # proportion (two cells) and for accuracy of four cells (tp + tn), whose two
    # cells sit in different halves of the within-person split.
    from perfci._core import resampling

    monkeypatch.setattr(resampling, "EXACT_GRID_CELLS", 0)
    rng = np.random.default_rng(8)
    m, n, reps = 25, 12, 40_000
    shares = rng.dirichlet([6, 1, 2, 8], size=m)
    cells = np.array([rng.multinomial(n, s) for s in shares])
    right = cells[:, 0] + cells[:, 3]
    p_i = right / n
    expected = p_i.var() / m + np.mean(p_i * (1 - p_i)) / (m * n)
    tol = 4 * np.sqrt(2 / reps) * 1.5
    two = pc.bootstrap_ci(
        np.c_[right, n - right], "proportion", scheme="hierarchical", n_resamples=reps, rng=4
    )
    four = pc.bootstrap_ci(cells, "accuracy", scheme="hierarchical", n_resamples=reps, rng=4)
    for ci in (two, four):
        assert ci.standard_error**2 == pytest.approx(expected, rel=tol)


@pytest.mark.parametrize("by_kind", [True, False])
def test_pooled_kinds_and_per_person_draws_follow_the_closed_form(by_kind, monkeypatch):
    # Persons of three kinds (equal cell shares, 8 texts each): pooled per kind, or drawn
    # person by person (the choice is by cost; both are exact). Both have the balanced
    # two-stage variance S^2 / m + mean(p_i (1 - p_i)) / (m n) of accuracy.
    from perfci._core import cell_draws

    monkeypatch.setattr(cell_draws, "_BINOMIAL_NS", 0.0 if by_kind else 1e12)
    kinds = np.array([[2, 1, 1, 4], [3, 0, 2, 3], [1, 1, 0, 6]])
    cells = kinds[np.arange(30) % 3]
    assert cell_draws.HierarchicalTables([cells.astype(float)]).by_kind[0] == by_kind
    reps = 40_000
    ci = pc.bootstrap_ci(cells, "accuracy", scheme="hierarchical", n_resamples=reps, rng=3)
    m, n = 30, 8
    p_i = (cells[:, 0] + cells[:, 3]) / n
    expected = p_i.var() / m + np.mean(p_i * (1 - p_i)) / (m * n)
    assert ci.standard_error**2 == pytest.approx(expected, rel=4 * np.sqrt(2 / reps) * 1.5)


def test_certain_persons_give_a_degenerate_distribution():
    # Policy: every person with all texts right: each resample is 1, the interval [1, 1].
    # (with a warning: a zero-width interval does not show certainty)
    cells = np.c_[np.arange(1, 11), np.zeros(10, dtype=int)]
    with pytest.warns(pc.DegenerateBootstrapWarning, match="zero width"):
        ci = pc.bootstrap_ci(cells, "proportion", scheme="hierarchical", n_resamples=500, rng=1)
    assert np.all(ci.distribution == 1.0) and (ci.low, ci.high) == (1.0, 1.0)
    four = np.c_[np.arange(1, 11), np.zeros((10, 2), dtype=int), np.arange(10, 0, -1)]
    with pytest.warns(pc.DegenerateBootstrapWarning, match="zero width"):
        ci = pc.bootstrap_ci(four, "accuracy", scheme="hierarchical", n_resamples=500, rng=1)
    assert np.all(ci.distribution == 1.0)


@pytest.mark.parametrize(
    ("scheme", "metric", "cells_per_person"),
    [
        ("cluster", "f1", 4),
        ("hierarchical", "f1", 4),
        ("hierarchical", "proportion", 2),
        ("cluster", "proportion", 2),
    ],
)
def test_memory_bounding_batches_change_nothing(scheme, metric, cells_per_person, monkeypatch):
    # Same seed, batches of any size (the default one bounded by persons x resamples,
    # shrunk here so that it splits the resamples too): identical replicates.
    from perfci._core import resampling

    rng = np.random.default_rng(2)
    shares = [0.3, 0.05, 0.1, 0.55] if cells_per_person == 4 else [0.8, 0.2]
    cells = np.array([rng.multinomial(n, shares) for n in rng.integers(1, 60, 300)])
    whole = pc.bootstrap_ci(cells, metric, scheme=scheme, pseudo_count=1, n_resamples=700, rng=5)
    monkeypatch.setattr(resampling, "AUTO_BATCH_ELEMENTS", 301 * 7)  # 7 resamples a batch
    auto = pc.bootstrap_ci(cells, metric, scheme=scheme, pseudo_count=1, n_resamples=700, rng=5)
    np.testing.assert_array_equal(whole.distribution, auto.distribution)
    for batch in [1, 64, 699]:
        part = pc.bootstrap_ci(
            cells, metric, scheme=scheme, pseudo_count=1, n_resamples=700, rng=5, batch=batch
        )
        np.testing.assert_array_equal(whole.distribution, part.distribution)


def test_cluster_picks_are_the_persons_drawn_before():
    # The cluster scheme's draws are unchanged by the int32 picks and batching: a
    # replicate is the cells of the persons picked by the person stream, as NumPy draws
    # them (integers in [0, m) from the first child of the data set's generator).
    cells = np.random.default_rng(1).multinomial(10, [0.3, 0.1, 0.1, 0.5], size=12)
    ci = pc.bootstrap_ci(cells, "kappa", scheme="cluster", n_resamples=50, rng=7)
    canonical = cells[np.lexsort(cells.T[::-1])]
    person_rng, _ = np.random.default_rng(7).spawn(2)
    picks = person_rng.integers(0, 12, size=(50, 12))
    np.testing.assert_array_equal(
        ci.distribution, pc.compute_metric(canonical[picks].sum(1), "kappa")
    )


def test_shared_draws_equal_the_own_calls_of_rater_symmetric_metrics_and_their_law():
    from perfci.bootstrap import shared_bootstrap_cis

    texts = pc.load_example()
    cells = pc.confusion(texts["human"], texts["model"], groups=texts["person"]).counts
    metrics = ["f1", "kappa", "mcc", "balanced_accuracy"]
    kwargs = dict(scheme="hierarchical", interval="percentile", pseudo_count=1)
    reps = 20_000
    shared = shared_bootstrap_cis(
        cells, metrics, n_resamples=reps, confidence_level=0.95, rng=3, nested=True, **kwargs
    )
    for metric in ["f1", "kappa", "mcc"]:
        own = pc.bootstrap_ci(cells, metric, n_resamples=reps, rng=3, **kwargs)
        np.testing.assert_array_equal(shared[metric].distribution, own.distribution)
    # balanced accuracy is not rater-symmetric: it is read off the same resamples, whose
    # law is that of its own call (two-sample Kolmogorov-Smirnov against an independent one)
    own = pc.bootstrap_ci(cells, "balanced_accuracy", n_resamples=reps, rng=4, **kwargs)
    assert stats.ks_2samp(shared["balanced_accuracy"].distribution, own.distribution).pvalue > 1e-3
    swapped = cells[:, [0, 2, 1, 3]]
    again = shared_bootstrap_cis(
        swapped, metrics, n_resamples=reps, confidence_level=0.95, rng=3, nested=True, **kwargs
    )
    for metric in ["f1", "kappa", "mcc"]:
        np.testing.assert_array_equal(again[metric].distribution, shared[metric].distribution)


@pytest.mark.parametrize(("n", "p"), [(12, 0.5), (40, 0.97), (300, 0.02), (2000, 0.3)])
def test_binomial_from_the_mode_is_the_binomial_inverse_cdf(n, p):
    # The kernel's first split is inversion of Binomial(n, p) searched from the mode:
    # for any u it must return scipy's quantile, the smallest k with F(k) >= u (u away
    # from the jumps of F, where rounding could decide).
    from perfci._core import kernels

    mode = min(int(np.floor((n + 1) * p)), n)
    reciprocal = 1.0 / np.arange(1, n + 2, dtype=float)
    reciprocal = np.r_[np.inf, reciprocal]
    u = np.random.default_rng(n).random(3000)
    got = np.array(
        [
            kernels._from_the_mode(
                v,
                n,
                mode,
                stats.binom.pmf(mode, n, p),
                stats.binom.cdf(mode, n, p),
                p / (1 - p),
                reciprocal,
            )
            for v in u
        ]
    )
    expected = stats.binom.ppf(u, n, p)
    away = np.min(np.abs(stats.binom.cdf(np.arange(n + 1), n, p)[None, :] - u[:, None]), 1) > 1e-9
    np.testing.assert_array_equal(got[away], expected[away])


@pytest.mark.parametrize(("n", "p"), [(8, 0.1), (30, 0.8), (200, 0.04), (5, 0.5)])
def test_small_binomials_are_the_inverse_cdf_of_one_uniform(n, p):
    # Binomials with n min(p, 1 - p) <= 10 are drawn by inversion of one uniform (of the
    # smaller share, so n - K for p > 1/2): the draw is scipy's quantile of that uniform.
    from perfci._core import kernels

    small = min(p, 1 - p)
    for seed in range(300):
        u = np.random.default_rng(seed).random()
        k = stats.binom.ppf(u, n, small)
        if abs(stats.binom.cdf(k, n, small) - u) < 1e-9:
            continue  # at a jump of F, rounding could decide
        drawn = kernels._binomial(np.random.default_rng(seed), n, p)
        assert drawn == (n - k if p > 0.5 else k)


@pytest.mark.parametrize(("size", "p"), [(300, 0.5), (120, 0.03), (500, 0.96), (7, 0.3)])
def test_mode_and_window_tables_are_the_binomial_pmf_and_cdf(size, p):
    # The iid tables are built by recursion in n with basic arithmetic; scipy's binomial
    # pmf and cdf are the reference (relative 1e-11: a few hundred steps of round-off).
    from perfci._core import kernels

    shares = np.array([p])
    mode = np.zeros((1, size + 1), dtype=np.int64)
    pmf, cdf = np.zeros((1, size + 1)), np.zeros((1, size + 1))
    kernels.mode_tables(size, shares, mode, pmf, cdf)
    n = np.arange(size + 1)
    k = mode[0]
    # k is a mode: no neighbour is more likely
    for step in (-1, 1):
        assert np.all(stats.binom.pmf(k + step, n, p) <= stats.binom.pmf(k, n, p) * (1 + 1e-12))
    np.testing.assert_allclose(pmf[0], stats.binom.pmf(k, n, p), rtol=1e-11)
    np.testing.assert_allclose(cdf[0], stats.binom.cdf(k, n, p), rtol=1e-11)
    first, base = np.array([0, size + 1]), np.array([0])
    below, window = np.zeros(size + 1), np.zeros((size + 1, kernels.WINDOW))
    reciprocal = 1.0 / np.maximum(np.arange(size + 2), 1)
    kernels.window_tables(shares, mode, pmf, cdf, reciprocal, first, base, below, window)
    lo = np.maximum(k - kernels.WINDOW // 2, 0)
    at = lo[:, None] + np.arange(kernels.WINDOW)
    expected = np.where(at <= n[:, None], stats.binom.cdf(at, n[:, None], p), 1.0)
    # a CDF's error is absolute: the chance that a uniform lands on the other side
    np.testing.assert_allclose(window, expected, rtol=0, atol=1e-13)
    np.testing.assert_allclose(below, stats.binom.cdf(lo - 1, n, p), rtol=0, atol=1e-13)


@pytest.mark.parametrize(
    "cells", [[60, 12, 18, 310], [3, 0, 5, 22], [0, 0, 0, 9], [40, 40], [5, 9, 0, 1, 2, 7, 3, 0, 4]]
)
def test_iid_resamples_are_conditional_binomial_quantiles_of_their_uniforms(cells):
    # Policy: an iid resample of N texts reads C - 1 uniforms; cell c is the quantile at
    # u_c of Binomial(texts left, share of c among cells c..C-1), the last cell the rest.
    # scipy's binomial quantile is the reference, for uniforms from the generator and for
    # extreme ones (outside the CDF windows: the search from the mode).
    from perfci._core import cell_draws

    cells = np.array(cells, dtype=float)
    draw = cell_draws.IidTables(cells[None, :])
    assert draw.from_uniforms[0]
    u = np.random.default_rng(4).random((4000, cells.size - 1))
    u[:50] = np.random.default_rng(5).choice([1e-13, 1e-9, 1 - 1e-9, 1 - 1e-13], (50, u.shape[1]))
    out = np.empty((u.shape[0], cells.size))

    class Uniforms:
        def random(self, shape):
            assert shape == u.shape
            return u

    draw.fill(0, Uniforms(), out)
    left = np.full(u.shape[0], cells.sum())
    rest = np.cumsum(cells[::-1])[::-1]
    away = np.ones(u.shape[0], dtype=bool)  # u not at a jump of F, where rounding decides
    for c in range(cells.size - 1):
        p = cells[c] / rest[c] if rest[c] else 0.0
        expected = np.where(left > 0, stats.binom.ppf(u[:, c], left, p), 0)
        near = stats.binom.cdf(expected, left, p) - u[:, c]
        away &= (np.abs(near) > 1e-9) & (np.abs(near + stats.binom.pmf(expected, left, p)) > 1e-9)
        np.testing.assert_array_equal(out[away, c], expected[away])
        left = left - out[:, c]
    np.testing.assert_array_equal(out[:, -1], left)
    assert away.mean() > 0.95


def test_large_iid_samples_are_numpy_multinomials():
    # More texts than the tables cover: each resample is NumPy's multinomial, drawn from
    # the data set's generator itself (balanced accuracy: not rater-symmetric, so the
    # cells are resampled as given, and it reads every cell, so none are pooled).
    counts = np.array([60_000, 10_000, 5_000, 25_000])
    ci = pc.bootstrap_ci(counts, "balanced_accuracy", n_resamples=200, rng=3)
    drawn = np.random.default_rng(3).multinomial(counts.sum(), counts / counts.sum(), size=200)
    np.testing.assert_array_equal(ci.distribution, pc.compute_metric(drawn, "balanced_accuracy"))


def test_pooled_cells_are_the_multinomial_of_the_groups_totals():
    # Recall reads fp and tn only through their sum (CELL_POOLING): the iid resamples are
    # Multinomial(N, shares of tp, fp + tn, fn), the groups in order of their first cell.
    counts = np.array([60_000, 10_000, 5_000, 25_000])
    ci = pc.bootstrap_ci(counts, "recall", n_resamples=200, rng=3)
    groups = np.array([counts[0], counts[1] + counts[3], counts[2]])
    drawn = np.random.default_rng(3).multinomial(groups.sum(), groups / groups.sum(), size=200)
    np.testing.assert_array_equal(ci.distribution, drawn[:, 0] / (drawn[:, 0] + drawn[:, 2]))


@pytest.mark.parametrize("metric", sorted(CELL_POOLING))
def test_a_metric_reads_its_pooled_cells_only_through_their_sums(metric):
    # The declaration the iid scheme relies on: moving counts within a group (here all of
    # a group's total to any one of its cells) leaves the metric unchanged, bit for bit.
    pooling = np.array(CELL_POOLING[metric])
    cells = np.random.default_rng(5).integers(1, 30, size=(500, 4)).astype(float)
    expected = pc.compute_metric(cells, metric)
    for group in np.unique(pooling):
        members = np.flatnonzero(pooling == group)
        for target in members:
            moved = cells.copy()
            moved[:, members] = 0.0
            moved[:, target] = cells[:, members].sum(-1)
            np.testing.assert_array_equal(pc.compute_metric(moved, metric), expected)


def test_pooled_and_full_resamples_agree_in_distribution():
    # F1 drawn from (tp, fp + fn, tn) against F1 drawn from all four cells: the same law.
    # Two-sample check on the mean and on the 2.5% and 97.5% quantiles of 200,000
    # replicates each, within 5 Monte-Carlo standard errors (the quantiles' SE from the
    # binomial count of replicates below them).
    from perfci._core import resampling

    counts = np.array([12.0, 5.0, 7.0, 76.0])
    full = resampling.Statistic("f1", 4, lambda c: pc.compute_metric(c, "f1"))
    pooled = resampling.Statistic("f1", 4, full.fn, pooling=CELL_POOLING["f1"])
    b = 200_000
    a = resampling.draw_replicates(counts, "iid", b, full, np.random.default_rng(1))
    c = resampling.draw_replicates(counts, "iid", b, pooled, np.random.default_rng(2))
    se = np.sqrt(a.var() / b + c.var() / b)
    assert abs(a.mean() - c.mean()) < 5 * se
    for q in (0.025, 0.975):
        cut = np.quantile(a, q)
        share_a, share_c = np.mean(a <= cut), np.mean(c <= cut)
        p = (share_a + share_c) / 2
        assert abs(share_a - share_c) < 5 * np.sqrt(2 * p * (1 - p) / b)


@pytest.mark.parametrize("n_cells", [2, 4, 9])
def test_hierarchical_tables_of_many_samples_are_each_samples_own(n_cells, monkeypatch):
    # The tables of K samples are computed over their persons stacked; each sample's must
    # be exactly those it gets alone (both ways of drawing, by kinds and person by person).
    from perfci._core import cell_draws

    rng = np.random.default_rng(n_cells)
    samples = [
        rng.multinomial(rng.integers(1, 40), rng.dirichlet(np.ones(n_cells)), size=m).astype(float)
        for m in rng.integers(2, 30, 12)
    ]
    samples += [samples[0][:1].repeat(60, 0), np.vstack([samples[1], samples[1]])]  # kinds
    together = cell_draws.HierarchicalTables(samples)
    assert together.by_kind.any() and not together.by_kind.all()
    picks = rng.integers(0, 2, size=(5, 2), dtype=np.int32)  # persons 0 and 1 of each
    for k, sample in enumerate(samples):
        alone = cell_draws.HierarchicalTables([sample])
        assert together.by_kind[k] == alone.by_kind[0]
        drawn = []
        for tables, index in ((together, k), (alone, 0)):
            out = np.zeros((5, n_cells))
            tables.fill(index, picks, np.random.default_rng(k), out)
            drawn.append(out)
        np.testing.assert_array_equal(drawn[0], drawn[1])
        rows = slice(together.offsets[k], together.offsets[k + 1])
        for name in (
            "sizes",
            "kind",
            "root",
            "odds",
            "mode",
            "pmf_mode",
            "cdf_mode",
            "conditional",
        ):
            np.testing.assert_array_equal(getattr(together, name)[rows], getattr(alone, name))


@pytest.mark.parametrize("n_cells", [3, 5, 6])
def test_hierarchical_draws_of_odd_halves_follow_the_two_stage_closed_form(n_cells):
    # Cells split into halves of unequal sizes (a half of one cell has no pool): the
    # share of the first and last cells (in different halves) has the balanced two-stage
    # variance S^2 / m + mean(p_i (1 - p_i)) / (m n), and its mean is the pooled share.
    from perfci._core import cell_draws, resampling

    rng = np.random.default_rng(n_cells)
    m, n, reps = 25, 12, 40_000
    cells = np.array([rng.multinomial(n, s) for s in rng.dirichlet(np.ones(n_cells) * 3, m)])
    assert not cell_draws.HierarchicalTables([cells.astype(float)]).by_kind[0]

    def share(c):
        return (c[..., 0] + c[..., -1]) / c.sum(-1)

    statistic = resampling.Statistic("share", n_cells, share)
    replicates = resampling.draw_replicates(
        cells.astype(float), "hierarchical", reps, statistic, np.random.default_rng(1)
    )
    p_i = share(cells)
    expected = p_i.var() / m + np.mean(p_i * (1 - p_i)) / (m * n)
    assert replicates.var() == pytest.approx(expected, rel=4 * np.sqrt(2 / reps) * 1.5)
    assert abs(replicates.mean() - p_i.mean()) < 4 * np.sqrt(expected / reps)


@pytest.mark.parametrize("direct", [True, False])
def test_texts_drawn_one_by_one_follow_the_two_stage_closed_form(direct, monkeypatch):
    # Persons with few texts over many cells (an AUC's score levels) have their texts
    # drawn one by one, the rest by the binomial tree (the choice is by cost; both exact):
    # either way the share of cells in both halves has the balanced two-stage variance
    # S^2 / m + mean(p_i (1 - p_i)) / (m n), and its mean is the pooled share.
    from perfci._core import cell_draws, resampling

    monkeypatch.setattr(cell_draws, "_TEXT_NS", 1e-9 if direct else 1e12)
    rng = np.random.default_rng(11)
    m, n, n_cells, reps = 25, 6, 16, 40_000
    cells = np.array([rng.multinomial(n, s) for s in rng.dirichlet(np.ones(n_cells), m)])
    tables = cell_draws.HierarchicalTables([cells.astype(float)])
    # one by one up to the tables' largest multiplicity, else never
    assert np.all(tables.direct_upto == (cell_draws._W_TABLE if direct else 0))
    assert tables.text_cell.size == (cells.sum() if direct else 0)

    def share(c):
        return c[..., [0, 3, 9, 15]].sum(-1) / c.sum(-1)

    statistic = resampling.Statistic("share", n_cells, share)
    replicates = resampling.draw_replicates(
        cells.astype(float), "hierarchical", reps, statistic, np.random.default_rng(2)
    )
    p_i = share(cells)
    expected = p_i.var() / m + np.mean(p_i * (1 - p_i)) / (m * n)
    assert replicates.var() == pytest.approx(expected, rel=4 * np.sqrt(2 / reps) * 1.5)
    assert abs(replicates.mean() - p_i.mean()) < 4 * np.sqrt(expected / reps)


def test_the_cost_model_draws_few_texts_over_many_cells_one_by_one():
    # Which persons go one by one: many cells and few texts do, few cells and many texts
    # do not (the tree's binomials are then cheaper than a uniform per text).
    from perfci._core import cell_draws

    rng = np.random.default_rng(3)
    sparse = rng.multinomial(4, np.ones(40) / 40, size=10).astype(float)
    dense = rng.multinomial(60, [0.4, 0.1, 0.1, 0.4], size=10).astype(float)
    assert np.all(cell_draws.HierarchicalTables([sparse]).direct_upto >= 1)
    assert np.all(cell_draws.HierarchicalTables([dense]).direct_upto == 0)


# ------------------------------------------ per-person counts with the scheme left unset


def test_per_person_counts_with_the_scheme_unset_warn_that_persons_are_ignored():
    # Before: texts resampled as independent without a word.
    from perfci.bootstrap import PersonsIgnoredWarning

    per_person = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30]]
    message = (
        r"^`counts` are per person but `scheme` is 'iid' \(texts resampled as independent\): "
        r"pass scheme='hierarchical' \(recommended\) or 'cluster' to resample persons, or "
        r"scheme='iid' explicitly to silence this\.$"
    )
    with pytest.warns(PersonsIgnoredWarning, match=message):
        unset = pc.bootstrap_ci(per_person, "f1", nested=True, n_resamples=300, rng=1)
    assert issubclass(PersonsIgnoredWarning, UserWarning)
    texts = pc.load_example()
    counted = pc.confusion(texts["human"], texts["model"], groups=texts["person"])
    with pytest.warns(PersonsIgnoredWarning, match="scheme='hierarchical'"):
        pc.bootstrap_ci(counted, "recall", n_resamples=300, rng=1)  # nested inferred
    with pytest.warns(PersonsIgnoredWarning):
        pc.bootstrap_ci([[3, 1], [4, 0]], "proportion", nested=True, n_resamples="exact")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # the iid scheme passed: what the unset default computes, draw for draw, silently
        explicit = pc.bootstrap_ci(
            per_person, "f1", scheme="iid", nested=True, n_resamples=300, rng=1
        )
        np.testing.assert_array_equal(explicit.distribution, unset.distribution)
        assert explicit.scheme == unset.scheme == "iid"
        pc.bootstrap_ci(per_person, "f1", scheme="hierarchical", n_resamples=300, rng=1)
        pc.bootstrap_ci(np.sum(per_person, 0), "f1", n_resamples=300, rng=1)  # pooled
        # one person with texts: no population of persons to resample, texts are texts
        pc.bootstrap_ci([[5, 1, 2, 30], [0, 0, 0, 0]], "f1", nested=True, rng=1)
        # batches of independent data sets are not persons
        pc.bootstrap_ci(per_person, "f1", nested=False, n_resamples=300, rng=1)


def test_the_library_passes_its_scheme_to_the_bootstrap():
    # metric_ci and report choose a scheme (hierarchical or, asked, iid) and pass it on
    texts = pc.load_example()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for scheme in ("iid", "hierarchical"):
            ci = pc.metric_ci(
                texts["human"], texts["model"], "f1", groups=texts["person"], scheme=scheme,
                n_resamples=300, rng=1,
            )  # fmt: skip
            assert ci.result.scheme == scheme
        pc.report(texts["human"], texts["model"], groups=texts["person"], metrics=["f1"], rng=1)


# --------------------------------------------------------------- the resamples' floor

_rng_floor = np.random.default_rng(20261201)
_Y = _rng_floor.integers(0, 2, 120)
_A = np.where(_rng_floor.random(120) < 0.85, _Y, 1 - _Y)
_B = np.where(_rng_floor.random(120) < 0.75, _Y, 1 - _Y)
_S = 0.4 * _Y + 0.6 * _rng_floor.random(120)
_T = 0.3 * _Y + 0.7 * _rng_floor.random(120)
_JOINT = np.bincount(4 * _Y + 2 * _A + _B, minlength=8)


def _floor_calls():
    """Every public function that draws a percentile or BCa interval, given B and a level."""
    from perfci.auc import auc_ci_counts
    from perfci.comparison import compare_counts
    from perfci.runs import runs_ci_counts

    boot = {"method": "bootstrap", "rng": 1}
    runs = np.c_[_A, _B, _A]
    run_cells = np.eye(4)[np.random.default_rng(0).integers(0, 4, (60, 3))]
    return {
        "bootstrap_ci": lambda n, c: pc.bootstrap_ci(
            [40, 6, 9, 45], "f1", n_resamples=n, confidence_level=c, rng=1
        ),
        "bootstrap_ci bca": lambda n, c: pc.bootstrap_ci(
            [40, 6, 9, 45], "f1", interval="bca", n_resamples=n, confidence_level=c, rng=1
        ),
        "bootstrap_ci proportion": lambda n, c: pc.bootstrap_ci(
            [40, 6], "proportion", n_resamples=n, confidence_level=c, rng=1
        ),
        "metric_ci": lambda n, c: pc.metric_ci(
            _Y, _A, "f1", n_resamples=n, confidence_level=c, rng=1
        ),
        "metric_ci_counts": lambda n, c: pc.metric_ci_counts(
            [40, 6, 9, 45], "f1", n_resamples=n, confidence_level=c, rng=1
        ),
        "compare": lambda n, c: pc.compare(
            _Y, _A, _B, "f1", n_resamples=n, confidence_level=c, rng=1
        ),
        "compare_counts": lambda n, c: compare_counts(
            _JOINT, "f1", n_resamples=n, confidence_level=c, **boot
        ),
        "auc_ci": lambda n, c: pc.auc_ci(_Y, _S, n_resamples=n, confidence_level=c, **boot),
        "auc_ci_counts": lambda n, c: auc_ci_counts(
            [3, 5, 9, 12], [12, 9, 5, 3], n_resamples=n, confidence_level=c, **boot
        ),
        "compare_auc": lambda n, c: pc.compare_auc(
            _Y, _S, _T, n_resamples=n, confidence_level=c, **boot
        ),
        "metric_ci(roc_auc)": lambda n, c: pc.metric_ci(
            _Y, _S, "roc_auc", n_resamples=n, confidence_level=c, **boot
        ),
        "runs_ci": lambda n, c: pc.runs_ci(
            _Y, runs, "accuracy", n_resamples=n, confidence_level=c, **boot
        ),
        "runs_ci_counts": lambda n, c: runs_ci_counts(
            run_cells, "accuracy", n_resamples=n, confidence_level=c, **boot
        ),
        "annotator_ci": lambda n, c: pc.annotator_ci(
            np.c_[_Y, _A], _B, "accuracy", n_resamples=n, confidence_level=c, **boot
        ),
    }


FLOOR_CALLS = sorted(_floor_calls())


def test_the_floor_is_one_resample_in_each_tail():
    from perfci._core.resampling import MIN_RESAMPLES_PER_TAIL, min_resamples

    assert MIN_RESAMPLES_PER_TAIL == 1
    assert min_resamples(0.95) == 40  # 2 / 0.05, whatever 1 - 0.95 rounds to
    assert min_resamples(0.99) == 200
    assert min_resamples(0.9) == 20
    assert min_resamples(0.5) == 4
    assert min_resamples(0.999) == 2000  # the default number of resamples


@pytest.mark.parametrize("name", FLOOR_CALLS)
@pytest.mark.parametrize(("level", "below"), [(0.95, 1), (0.95, 39), (0.99, 199)])
def test_fewer_resamples_than_the_floor_are_refused_naming_n_resamples(name, level, below):
    minimum = 40 if level == 0.95 else 200
    with pytest.raises(ValueError, match=f"`n_resamples` must be at least {minimum} ") as err:
        _floor_calls()[name](below, level)
    message = str(err.value)
    assert "\n" not in message
    assert f"{level:.0%} " in message and f"got {below}." in message


@pytest.mark.parametrize("name", FLOOR_CALLS)
@pytest.mark.parametrize("level", [0.95, 0.99])
def test_the_floor_itself_gives_an_interval(name, level):
    # with few resamples the estimate may lie outside the interval: only its order is checked
    ci = _floor_calls()[name](40 if level == 0.95 else 200, level)
    assert ci.low <= ci.high


def test_the_reported_cases_are_refused():
    # one resample gave a zero-width interval beside the estimate; BCa on two resamples too
    with pytest.raises(ValueError, match="at least 40 for a 95% percentile interval"):
        pc.metric_ci(_Y, _A, "f1", n_resamples=1)
    with pytest.raises(ValueError, match="at least 40 for a 95% BCa interval"):
        pc.bootstrap_ci([40, 6], "proportion", interval="bca", n_resamples=2)


def test_exact_resamples_and_other_methods_are_not_floored():
    exact = pc.bootstrap_ci([19, 1], "proportion", n_resamples="exact", confidence_level=0.999)
    assert exact.low <= exact.high
    # the floor applies to the bootstrap only: another method refuses n_resamples as before
    with pytest.raises(ValueError, match="`n_resamples` is an option of the bootstrap"):
        pc.auc_ci(_Y, _S, method="delong", n_resamples=2000)
    # an analytic method draws nothing, at any level; a number given is refused below the
    # level's floor
    assert pc.metric_ci(_Y, _A, "recall", confidence_level=0.9999).low <= 1
    assert pc.compare(_Y, _A, _B, "accuracy", confidence_level=0.999, rng=1).low <= 1
    with pytest.raises(ValueError, match="at least 20000 for a 99.99% percentile.*got 2000"):
        pc.compare(_Y, _A, _B, "accuracy", confidence_level=0.9999, n_resamples=2000)


def test_the_default_resamples_grow_with_the_level():
    """2,000 up to 99% (10 resamples beyond each end there); above, as many as keep 10.

    At 99.99% the old fixed 2,000 refused every default bootstrap ("`n_resamples` must be
    at least 20000", a flag the CLI does not have).
    """
    from perfci._core.resampling import TAIL_RESAMPLES, default_resamples, min_resamples

    for level, expected in [(0.5, 2000), (0.95, 2000), (0.99, 2000), (0.995, 4000),
                            (0.999, 20000), (0.9999, 200000)]:  # fmt: skip
        assert default_resamples(level) == expected
        assert default_resamples(level) >= TAIL_RESAMPLES * min_resamples(level)
    f1 = pc.bootstrap_ci([40, 6, 9, 345], "f1", confidence_level=0.9999, rng=1)
    assert f1.n_resamples == 200000 and f1.low < f1.estimate < f1.high
    assert pc.bootstrap_ci([40, 6, 9, 345], "f1", confidence_level=0.99, rng=1).n_resamples == 2000
    # every default path: the policy's bootstrap, a comparison, subgroups, a report
    assert pc.metric_ci(_Y, _A, "f1", groups=_PERSON, confidence_level=0.9999, rng=1).low <= 1
    assert pc.compare(_Y, _A, _B, "accuracy", confidence_level=0.9999, rng=1).low <= 1
    choice = policy.choose_interval("f1", confidence_level=0.999)
    assert choice.n_resamples == 20000 and policy.choose_interval("f1").n_resamples == 2000
    table = pc.report(_Y, _A, metrics=["f1"], confidence_level=0.9999, rng=1)
    assert table["low"].notna().all()
    # beyond what the most resamples can serve the level itself is named
    with pytest.raises(ValueError, match="^`confidence_level` 0.9999999 is too high"):
        pc.bootstrap_ci([40, 6, 9, 345], "f1", confidence_level=0.9999999)


# ------------------------------------------- the floor of report, subgroups and agreement

_BY = np.where(np.arange(120) < 60, "a", "b")
_PERSON = np.arange(120) // 4  # 30 persons of 4 texts, nested in the subgroups
_CODES = np.c_[_Y, _A, _B].astype(float)
_CODES[::3, 2] = np.nan  # the third annotator left a third of the texts uncoded


def _entry_point_calls():
    """The entry points that now take the floor, each given B at 95%, with the bootstrap."""
    from perfci.subgroups import compare_groups_counts

    counts = np.array([40, 6, 9, 45])
    reference = np.array([55, 4, 6, 35])
    return {
        "report": lambda n: pc.report(_Y, _A, metrics=["f1"], n_resamples=n, rng=1),
        "compare_groups": lambda n: pc.compare_groups(
            _Y, _A, "recall", _BY, method="bootstrap", n_resamples=n, rng=1
        ),
        "compare_groups(recommended, f1)": lambda n: pc.compare_groups(
            _Y, _A, "f1", _BY, n_resamples=n, rng=1
        ),
        "compare_groups_counts": lambda n: compare_groups_counts(
            counts, reference, "f1", method="bootstrap", n_resamples=n, rng=1
        ),
        "annotator_agreement": lambda n: pc.annotator_agreement(_CODES, n_resamples=n, rng=1),
        "annotator_agreement bca": lambda n: pc.annotator_agreement(
            _CODES, interval="bca", n_resamples=n, rng=1
        ),
        "agreement_report": lambda n: pc.agreement_report(_CODES[:, :2], _B, n_resamples=n, rng=1),
    }


ENTRY_POINT_CALLS = sorted(_entry_point_calls())


@pytest.mark.parametrize("name", ENTRY_POINT_CALLS)
@pytest.mark.parametrize("below", [1, 39])
def test_the_entry_points_refuse_fewer_resamples_than_the_floor(name, below):
    with pytest.raises(ValueError, match="`n_resamples` must be at least 40 ") as err:
        _entry_point_calls()[name](below)
    message = str(err.value)
    assert "\n" not in message
    assert "95% " in message and f"got {below}." in message
    assert ("BCa" if "bca" in name else "percentile") in message


@pytest.mark.parametrize("name", ENTRY_POINT_CALLS)
def test_the_entry_points_work_at_the_floor(name):
    import pandas as pd

    with warnings.catch_warnings():
        # 40 resamples of a few dozen texts may hold one in which a statistic is undefined
        warnings.simplefilter("ignore", pc.UndefinedMetricWarning)
        result = _entry_point_calls()[name](40)
    if isinstance(result, pd.DataFrame):
        assert len(result) and (result["low"] <= result["high"]).all()
    else:
        assert result.low <= result.high


def test_the_report_refuses_too_few_resamples_before_it_reads_the_labels():
    # labels of different lengths would be an error of y_pred: the options come first
    with pytest.raises(ValueError, match="^`n_resamples` must be at least 40 "):
        pc.report(_Y, _A[:-1], n_resamples=39)
    # formerly the bootstrap rows were left out with a warning, the analytic rows kept
    with pytest.raises(ValueError, match="^`n_resamples` must be at least 200 "):
        pc.report(_Y, _A, metrics=["recall"], confidence_level=0.99, n_resamples=199)


def test_methods_that_do_not_resample_keep_refusing_n_resamples_as_before():
    from perfci.subgroups import compare_groups_counts

    bootstrap_option = "^`n_resamples` is an option of the bootstrap"
    with pytest.raises(ValueError, match=bootstrap_option):
        pc.compare_groups(_Y, _A, "recall", _BY, n_resamples=1)  # newcombe, recommended
    with pytest.raises(ValueError, match=bootstrap_option):
        pc.compare_groups(_Y, _A, "f1", _BY, groups=_PERSON, n_resamples=39)  # cluster-robust
    with pytest.raises(ValueError, match=bootstrap_option):
        compare_groups_counts([40, 6, 9, 45], [55, 4, 6, 35], "recall", n_resamples=1)
    with pytest.raises(ValueError, match=bootstrap_option):
        pc.annotator_agreement(_CODES[:, :2], method="asymptotic", n_resamples=1)
    # and they draw nothing, so the default 2000 is no floor for them at any level
    assert pc.compare_groups(_Y, _A, "recall", _BY, confidence_level=0.9999)["low"].notna().all()
    asymptotic = pc.annotator_agreement(_CODES[:, :2], method="asymptotic", confidence_level=0.9999)
    assert asymptotic.low <= asymptotic.high
