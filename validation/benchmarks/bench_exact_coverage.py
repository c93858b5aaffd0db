"""Exact coverage of the paper's whole independent grid: perfci against statsmodels.

The grid is section 3.1's: n = 10..250, p in {0.5, 0.6, 0.7, 0.8, 0.9, 0.95}, at 95%, for
every analytic method statsmodels also has. The peer is the natural statsmodels
computation: for each n, ``proportion_confint`` on the vector x = 0..n (vectorized in x),
then the binomial-weighted sum for each p. Both give the same numbers (checked here);
the script reports the time of each and the ratio.

Run from the repository root: ``.venv/bin/python validation/benchmarks/bench_exact_coverage.py``
"""

import time

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import perfci as pc

N = np.arange(10, 251)
P = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
METHODS = {
    "wald": "normal",
    "wilson": "wilson",
    "agresti_coull": "agresti_coull",
    "clopper_pearson": "beta",
    "jeffreys": "jeffreys",
}


def peer(method):
    out = np.empty((N.size, P.size))
    for i, n in enumerate(N):
        x = np.arange(n + 1)
        low, high = proportion_confint(x, n, alpha=0.05, method=method)
        if method == "jeffreys":  # the boundary rule perfci applies
            low, high = np.where(x == 0, 0, low), np.where(x == n, 1, high)
        pmf = stats.binom.pmf(x[:, None], n, P)
        out[i] = (pmf * ((low[:, None] <= P) & (P <= high[:, None]))).sum(0)
    return out


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main():
    print(f"{'method':<16}{'perfci (s)':>12}{'statsmodels (s)':>17}{'ratio':>8}")
    total_ours = total_peer = 0.0
    for ours, theirs in METHODS.items():
        t_ours, a = best_of(lambda o=ours: pc.exact_coverage(o, N[:, None], P))
        t_peer, b = best_of(lambda t=theirs: peer(t))
        np.testing.assert_allclose(a, b, atol=1e-10)
        total_ours += t_ours
        total_peer += t_peer
        print(f"{ours:<16}{t_ours:>12.4f}{t_peer:>17.4f}{t_peer / t_ours:>8.1f}")
    print(f"{'all five':<16}{total_ours:>12.4f}{total_peer:>17.4f}{total_peer / total_ours:>8.1f}")
    t_all, _ = best_of(lambda: [pc.exact_coverage(m, N[:, None], P) for m in pc.ANALYTIC_METHODS])
    print(f"perfci, all {len(pc.ANALYTIC_METHODS)} analytic methods on the grid: {t_all:.3f} s")


if __name__ == "__main__":
    main()
