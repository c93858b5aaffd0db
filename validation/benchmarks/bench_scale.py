"""The bootstrap engine at scale: many persons, many resamples, unequal texts per person.

Four measurements, each printed with what it checks:

1. ``pc.confusion`` + ``pc.report`` on nested labels (person rates Beta(8, 2), 30%
   prevalence, false-positive rate 0.05, persons drawn uniformly for each text), 10^4 to
   10^7 texts: with 100 texts per person (10^2 to 10^5 persons) and with 1,000 persons.
   Each size runs in a fresh subprocess, which reports its wall time (labels to table)
   and its peak resident memory (``resource.getrusage``, the labels included). Growth
   exponents are the slopes of log time against log texts. Goals: 10^7 texts in 10^5
   persons in at most 30 s and 2 GB.
2. Peak memory of ``bootstrap_ci`` with 10^5 persons (100 texts each) at 1,000 to 16,000
   resamples, cluster and hierarchical, F1 (four cells) and a proportion, each in a fresh
   subprocess. Goal: under 1 GB at any number of resamples (flat in B).
3. The hierarchical bootstrap of a proportion with 1 to 40 texts per person (50 persons,
   rates Beta(9, 1), 10,000 resamples) against the plain two-stage loop of
   ``bench_bootstrap.py`` (per resample: draw persons with replacement, then texts within
   each taken person, as one vectorized draw). And F1 with 1 to 40 texts per person
   against the same loop on four-cell rows. Timed alternately in one process (perfci,
   peer, perfci, peer, ...), 7 pairs after a warm-up; the figure is the median of the
   pair ratios (peer time / perfci time). Goal: at least 50x for the proportion.
4. A proportion with 10^5 persons of 100 texts each under person resampling, 2,000
   resamples: perfci's cost-based choice (exact parts of k persons) against forced
   simulation of the persons (no grid allowed), alternately, 5 pairs.

Run from the repository root: ``.venv/bin/python validation/benchmarks/bench_scale.py``
(about 3 minutes on 2 cores); name parts to run only those: ``unequal``, ``equal``,
``memory``, ``report``.
"""

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import perfci as pc
from perfci._core import resampling

sys.path.insert(0, os.path.dirname(__file__))
import bench_bootstrap as bb  # noqa: E402  (the plain two-stage loop and its data)

SEED = 20261201
PAIRS = 7

CHILD_REPORT = """
import json, resource, sys, time
import numpy as np
import perfci as pc
n_texts, n_persons = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(int(sys.argv[3]))
groups = rng.integers(0, n_persons, n_texts)
rate = rng.beta(8, 2, n_persons)
y_true = rng.random(n_texts) < 0.3
y_pred = np.where(y_true, rng.random(n_texts) < rate[groups], rng.random(n_texts) < 0.05)
pc.report(y_true[:2000], y_pred[:2000], groups=groups[:2000] % 20, rng=1)  # compile, import
start = time.perf_counter()
table = pc.report(y_true, y_pred, groups=groups, rng=1)
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps({"wall": wall, "peak_gb": peak, "rows": len(table)}))
"""

CHILD_BOOT = """
import json, resource, sys
import numpy as np
import perfci as pc
scheme, metric, n_resamples = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(int(sys.argv[4]))
m = 100_000
shares = [0.25, 0.03, 0.05, 0.67] if metric == "f1" else [0.8, 0.2]
cells = rng.multinomial(100, shares, size=m)
pc.bootstrap_ci(cells[:50], metric, scheme=scheme, pseudo_count=1, n_resamples=10, rng=1)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
ci = pc.bootstrap_ci(cells, metric, scheme=scheme, pseudo_count=1, n_resamples=n_resamples, rng=1)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps({"before_gb": before, "peak_gb": peak, "low": ci.low}))
"""


def child(code, *args):
    out = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def report_scaling():
    print("1. confusion + report on nested labels (fresh process per size)")
    print(f"{'texts':>10} {'persons':>8} {'time s':>8} {'peak GB':>8} {'exponent':>9}")
    for label, persons_of in [
        ("100 texts per person", lambda n: n // 100),
        ("1,000 persons", lambda n: 1000),
    ]:
        print(f"  {label}")
        previous = None
        first = None
        for n_texts in [10**4, 10**5, 10**6, 10**7]:
            persons = persons_of(n_texts)
            r = child(CHILD_REPORT, n_texts, persons, SEED)
            slope = ""
            if previous is not None:
                slope = f"{np.log(r['wall'] / previous[1]) / np.log(n_texts / previous[0]):.2f}"
            first = first or (n_texts, r["wall"])
            previous = (n_texts, r["wall"])
            print(f"{n_texts:>10} {persons:>8} {r['wall']:>8.2f} {r['peak_gb']:>8.2f} {slope:>9}")
        overall = np.log(previous[1] / first[1]) / np.log(previous[0] / first[0])
        print(f"  growth exponent 1e4 -> 1e7 texts: {overall:.2f}")


def boot_memory():
    print("\n2. peak memory of bootstrap_ci with 100,000 persons of 100 texts (fresh process)")
    print(f"{'scheme':>13} {'metric':>10} {'resamples':>9} {'before GB':>9} {'peak GB':>8}")
    for scheme in ["cluster", "hierarchical"]:
        for metric in ["f1", "proportion"]:
            for n_resamples in [1000, 4000, 16000]:
                r = child(CHILD_BOOT, scheme, metric, n_resamples, SEED)
                print(
                    f"{scheme:>13} {metric:>10} {n_resamples:>9} {r['before_gb']:>9.2f} "
                    f"{r['peak_gb']:>8.2f}"
                )


def alternate(ours, peer, pairs=PAIRS):
    """Time ours and peer alternately; return the pair ratios and the median times."""
    ours(), peer()  # warm-up
    ratios, t_ours, t_peer = [], [], []
    for _ in range(pairs):
        t0 = time.perf_counter()
        ours()
        t1 = time.perf_counter()
        peer()
        t2 = time.perf_counter()
        t_ours.append(t1 - t0)
        t_peer.append(t2 - t1)
        ratios.append((t2 - t1) / (t1 - t0))
    return ratios, statistics.median(t_ours), statistics.median(t_peer)


def four_cell_rows(rng, sizes):
    """Per person, the cell (0..3 = tp, fp, fn, tn) of each text."""
    return [rng.choice(4, n, p=[0.25, 0.03, 0.05, 0.67]) for n in sizes]


def f1_plain_two_stage(rows, rng, n_resamples):
    sizes = np.array([row.size for row in rows])
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    flat = np.concatenate(rows)
    m = sizes.size
    replicates = np.empty(n_resamples)
    for b in range(n_resamples):
        persons = rng.integers(0, m, m)
        n = sizes[persons]
        start = np.repeat(offsets[persons], n)
        texts = start + (rng.random(n.sum()) * np.repeat(n, n)).astype(np.int64)
        tp, fp, fn, _ = np.bincount(flat[texts], minlength=4)
        replicates[b] = 2 * tp / (2 * tp + fp + fn)
    return bb.percentile(replicates)


def unequal_sizes():
    print("\n3. hierarchical bootstrap, 50 persons with 1 to 40 texts, 10,000 resamples")
    uneven = bb.unbalanced_rows(np.random.default_rng(bb.SEED + 3))
    counts = bb.per_person_counts(uneven)
    plan = resampling._proportion_parts(counts.astype(float), "hierarchical", bb.N_RESAMPLES)
    print(f"  proportion: exact parts of k = {plan.k} persons, {plan.parts} parts a resample")
    ratios, t_ours, t_peer = alternate(
        lambda: bb.perfci_proportion(uneven, "hierarchical", "percentile"),
        lambda: bb.hierarchical_plain_unbalanced(uneven, np.random.default_rng(bb.SEED + 1)),
    )
    ci = bb.perfci_proportion(uneven, "hierarchical", "percentile")
    peer = bb.hierarchical_plain_unbalanced(uneven, np.random.default_rng(bb.SEED + 1))
    report_pairs("proportion", ratios, t_ours, t_peer, (ci.low, ci.high), peer, 50)

    rng = np.random.default_rng(SEED)
    rows = four_cell_rows(rng, rng.integers(1, 41, 50))
    cells = np.array([np.bincount(r, minlength=4) for r in rows])

    def ours():
        return pc.bootstrap_ci(
            cells, "f1", scheme="hierarchical", n_resamples=bb.N_RESAMPLES, rng=SEED
        )

    ratios, t_ours, t_peer = alternate(
        ours, lambda: f1_plain_two_stage(rows, np.random.default_rng(1), bb.N_RESAMPLES)
    )
    ci = ours()
    peer = f1_plain_two_stage(rows, np.random.default_rng(1), bb.N_RESAMPLES)
    report_pairs("F1 (four cells)", ratios, t_ours, t_peer, (ci.low, ci.high), peer, None)


def report_pairs(name, ratios, t_ours, t_peer, ours_ci, peer_ci, goal):
    verdict = "" if goal is None else (" >= 50x: met" if np.median(ratios) >= goal else " < 50x")
    print(
        f"  {name}: perfci {t_ours * 1e3:.1f} ms, plain two-stage loop {t_peer * 1e3:.1f} ms "
        f"(medians); pair ratios {', '.join(f'{r:.0f}' for r in ratios)}; median "
        f"{np.median(ratios):.0f}x{verdict}"
    )
    diff = max(abs(a - b) for a, b in zip(ours_ci, peer_ci, strict=True))
    print(
        f"    intervals: perfci [{ours_ci[0]:.4f}, {ours_ci[1]:.4f}], loop "
        f"[{peer_ci[0]:.4f}, {peer_ci[1]:.4f}], max |diff| {diff:.4f} "
        f"({'ok' if diff <= bb.PROPORTION_TOLERANCE else 'DIFFERENT'} at "
        f"{bb.PROPORTION_TOLERANCE})"
    )


def equal_sizes():
    print("\n4. proportion, 100,000 persons of 100 texts, 2,000 resamples")
    rng = np.random.default_rng(SEED)
    y = rng.binomial(100, rng.beta(8, 2, 100_000))
    cells = np.c_[y, 100 - y]
    for scheme in ["cluster", "hierarchical"]:
        plan = resampling._proportion_parts(np.vstack([cells, [1, 1]]).astype(float), scheme, 2000)

        def ours(s=scheme):
            return pc.bootstrap_ci(
                cells, "proportion", scheme=s, pseudo_count=1, n_resamples=2000, rng=1
            )

        def simulated(s=scheme):
            saved = resampling.EXACT_GRID_CELLS
            resampling.EXACT_GRID_CELLS = 0
            try:
                return ours(s)
            finally:
                resampling.EXACT_GRID_CELLS = saved

        ratios, t_ours, t_sim = alternate(ours, simulated, pairs=5)
        a, b = ours(), simulated()
        print(
            f"  {scheme}: exact parts of k = {plan.k} persons ({plan.parts} a resample) "
            f"{t_ours:.3f} s, simulated persons {t_sim:.3f} s; pair ratios "
            f"{', '.join(f'{r:.0f}' for r in ratios)}, median {np.median(ratios):.0f}x; "
            f"intervals [{a.low:.5f}, {a.high:.5f}] and [{b.low:.5f}, {b.high:.5f}]"
        )


def main():
    print(
        f"numpy {np.__version__}, perfci {pc.__version__}; {os.cpu_count()} CPUs; "
        f"1-minute load average {os.getloadavg()[0]:.2f} at start"
    )
    start = time.perf_counter()
    parts = sys.argv[1:] or ["unequal", "equal", "memory", "report"]
    for name, run in [
        ("unequal", unequal_sizes),
        ("equal", equal_sizes),
        ("memory", boot_memory),
        ("report", report_scaling),
    ]:
        if name in parts:
            run()
    print(
        f"\ntotal run time {time.perf_counter() - start:.0f} s; 1-minute load average "
        f"{os.getloadavg()[0]:.2f} at end"
    )


if __name__ == "__main__":
    main()
