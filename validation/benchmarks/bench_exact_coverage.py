"""Exact coverage: perfci against the natural statsmodels enumeration.

Two grids, at 95%:

1. Section 3.1's: n = 10..250, p in {0.5, 0.6, 0.7, 0.8, 0.9, 0.95}, for every analytic
   method statsmodels also has.
2. n = 1..10,000 at p = 0.9, one call per method.

The peer is the natural statsmodels computation: for each n, ``proportion_confint`` on
the vector x = 0..n (vectorized in x), then the binomial-weighted sum for each p. perfci
sums over each element's binomial support only (at most 1e-16 of probability left out
on each side); both give the same numbers (checked to 1e-10). Timed alternately, A B A
B, 5 pairs after a warm-up; the tables show the median time of each side and the median
of the pair ratios (peer / perfci). On grid 2 the statsmodels peer of the beta-quantile
methods (Clopper-Pearson, Jeffreys) would take minutes per run, so perfci is timed alone
there (median of 5).

Run from the repository root: ``.venv/bin/python validation/benchmarks/bench_exact_coverage.py``
"""

import os
import time
from statistics import median

import numpy as np
from _alternate import alternate
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import perfci as pc

PAPER_N = np.arange(10, 251)
PAPER_P = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
LARGE_N = np.arange(1, 10_001)
METHODS = {
    "wald": "normal",
    "wilson": "wilson",
    "agresti_coull": "agresti_coull",
    "clopper_pearson": "beta",
    "jeffreys": "jeffreys",
}
BETA_METHODS = ("clopper_pearson", "jeffreys")


def peer(method, sizes, ps):
    out = np.empty((sizes.size, ps.size))
    for i, n in enumerate(sizes):
        x = np.arange(n + 1)
        low, high = proportion_confint(x, n, alpha=0.05, method=method)
        if method == "jeffreys":  # the boundary rule perfci applies
            low, high = np.where(x == 0, 0, low), np.where(x == n, 1, high)
        pmf = stats.binom.pmf(x[:, None], n, ps)
        out[i] = (pmf * ((low[:, None] <= ps) & (ps <= high[:, None]))).sum(0)
    return out


HEADER = f"{'perfci (s)':>12}{'statsmodels (s)':>17}{'ratio':>8}  pair ratios"


def row(name, t):
    shown = " ".join(f"{r:.2f}" for r in t.ratios)
    print(f"{name:<16}{t.ours:>12.4f}{t.peer:>17.4f}{t.ratio:>8.2f}  {shown}")


def main():
    print(f"{'paper grid':<16}{HEADER}")
    for ours, theirs in METHODS.items():
        np.testing.assert_allclose(
            pc.exact_coverage(ours, PAPER_N[:, None], PAPER_P),
            peer(theirs, PAPER_N, PAPER_P),
            atol=1e-10,
        )
        t = alternate(
            lambda o=ours: pc.exact_coverage(o, PAPER_N[:, None], PAPER_P),
            lambda s=theirs: peer(s, PAPER_N, PAPER_P),
            rounds=5,
        )
        row(ours, t)

    p = np.array([0.9])
    print(f"\n{'n = 1..10,000':<16}{HEADER}")
    for ours, theirs in METHODS.items():
        if ours in BETA_METHODS:
            continue
        np.testing.assert_allclose(
            pc.exact_coverage(ours, LARGE_N[:, None], p), peer(theirs, LARGE_N, p), atol=1e-10
        )
        t = alternate(
            lambda o=ours: pc.exact_coverage(o, LARGE_N, 0.9),
            lambda s=theirs: peer(s, LARGE_N, p),
            rounds=5,
        )
        row(ours, t)
    print("perfci alone, median of 5 runs (s):")
    for method in pc.ANALYTIC_METHODS:
        pc.exact_coverage(method, LARGE_N[:50], 0.9)  # warm-up
        times = []
        for _ in range(5):
            start = time.perf_counter()
            pc.exact_coverage(method, LARGE_N, 0.9)
            times.append(time.perf_counter() - start)
        print(f"  {method:<20}{median(times):.3f}   (min {min(times):.3f})")
    print(f"1-minute load average at the end: {os.getloadavg()[0]:.2f} (2 CPUs)")


if __name__ == "__main__":
    main()
