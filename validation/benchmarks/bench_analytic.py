"""Analytic intervals on 10**6 (x, n) pairs: perfci against statsmodels, per method.

Data: n uniform on 1..999, x ~ Binomial(n, 0.8), at the 95% level (one scalar level, as
users pass it). perfci runs ``pc.proportion_ci(x, n, method=...)``, the peer
``statsmodels.stats.proportion.proportion_confint(x, n, alpha=0.05, method=...)`` for
every method both have. Both sides get the same float arrays and give the same ends
(checked to 1e-12; statsmodels' Jeffreys interval lacks the boundary rule, which is
applied to it before the check). Timed alternately, A B A B, 7 pairs after a warm-up;
the table shows the median time of each side and the median of the pair ratios (peer
time / perfci time).

Run from the repository root: ``.venv/bin/python validation/benchmarks/bench_analytic.py``
"""

import os

import numpy as np
import scipy
import statsmodels
from _alternate import alternate
from statsmodels.stats.proportion import proportion_confint

import perfci as pc

SIZE = 10**6
METHODS = {
    "wald": "normal",
    "wilson": "wilson",
    "agresti_coull": "agresti_coull",
    "clopper_pearson": "beta",
    "jeffreys": "jeffreys",
}


def main():
    rng = np.random.default_rng(20261201)
    n = rng.integers(1, 1000, SIZE).astype(float)
    x = rng.binomial(n.astype(np.int64), 0.8).astype(float)
    print(
        f"numpy {np.__version__}, scipy {scipy.__version__}, statsmodels "
        f"{statsmodels.__version__}; {SIZE:,} pairs, 95% level; median of 7 alternated pairs"
    )
    print(f"{'method':<17}{'perfci (s)':>11}{'statsmodels (s)':>17}{'ratio':>7}  pair ratios")
    for ours, theirs in METHODS.items():
        ci = pc.proportion_ci(x, n, method=ours)
        low, high = proportion_confint(x, n, alpha=0.05, method=theirs)
        if ours == "jeffreys":  # the boundary rule perfci applies
            low, high = np.where(x == 0, 0.0, low), np.where(x == n, 1.0, high)
        np.testing.assert_allclose(ci.low, low, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ci.high, high, rtol=0, atol=1e-12)
        t = alternate(
            lambda o=ours: pc.proportion_ci(x, n, method=o),
            lambda s=theirs: proportion_confint(x, n, alpha=0.05, method=s),
        )
        shown = " ".join(f"{r:.2f}" for r in t.ratios)
        print(f"{ours:<17}{t.ours:>11.4f}{t.peer:>17.4f}{t.ratio:>7.2f}  {shown}")
    print(f"1-minute load average at the end: {os.getloadavg()[0]:.2f} (2 CPUs)")


if __name__ == "__main__":
    main()
