"""Exact coverage of the default Bayesian F1 interval on the paper's F1 grid.

With independent texts the default prior of :func:`perfci.bayes.confusion_posterior`
(``metric_jeffreys``) gives F1 = 2W / (1 + W) with W ~ Beta(tp + 1/2, fp + fn + 1/2),
so the 95% interval covers the true F1 exactly when the Beta interval of W covers
W* = F1 / (2 - F1). Given the n' = tp + fp + fn texts either rater calls positive,
tp ~ Binomial(n', W*), and n' ~ Binomial(n, p), p = P(tp) + P(fp) + P(fn) of the
population's cells: the coverage is a finite sum over (n', tp), computed here for every
cell of ``validation/suites/paper-f1.toml`` (prevalence 0.10, precision and recall 0.50
to 0.95, n = 30 to 500), with the misses on each side.

Run from the repository root::

    python validation/bayes_f1_exact.py [--prior NAME]

It prints the smallest coverage, the largest misses on each side, and the cells below
0.93, with each cell's interval taken from the library itself
(``confusion_posterior(...).interval("f1")``, one batched call per n).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
from scipy import stats

import perfci as pc
from perfci import harness

SUITE = "paper-f1"


@functools.cache
def f1_ends(n: int, level: float, prior: str) -> tuple[np.ndarray, np.ndarray]:
    """Return the F1 interval's ends at every (n', tp) of n texts: (n + 1, n + 1) arrays.

    Row n' is the number of texts relevant to F1 (tp + fp + fn), column tp; the interval
    depends on the counts only, so the cells of one n share it.
    """
    n_rel = np.arange(n + 1)
    # every (n', tp) pair: tp of n' relevant texts, the rest fp + fn
    tp = np.arange(n + 1)
    pairs = tp[None, :] <= n_rel[:, None]
    counts = np.zeros((n + 1, n + 1, 4))
    counts[..., 0] = tp[None, :]
    counts[..., 1] = np.where(pairs, n_rel[:, None] - tp[None, :], 0)
    counts[..., 3] = n - n_rel[:, None]
    with warnings.catch_warnings():
        # (n', tp) = (0, 0), where F1 has no relevant text: the prior's interval
        warnings.simplefilter("ignore", pc.bayes.PriorOnlyWarning)
        ci = pc.bayes.confusion_posterior(counts, prior=prior).interval("f1", "eti", level)
    return ci.low, ci.high


def exact_f1(n: int, precision: float, recall: float, prevalence: float, level: float, prior: str):
    """Coverage, miss below and miss above of a Bayesian F1 interval at one cell."""
    cells = harness.confusion_probabilities(prevalence, precision, recall)
    truth = 2 * precision * recall / (precision + recall)
    relevant = cells[0] + cells[1] + cells[2]
    w_star = cells[0] / relevant
    n_rel = np.arange(n + 1)
    tp = np.arange(n + 1)
    low, high = f1_ends(n, level, prior)
    pmf = stats.binom.pmf(tp[None, :], n_rel[:, None], w_star)
    pmf *= stats.binom.pmf(n_rel, n, relevant)[:, None]
    pmf = np.where(tp[None, :] <= n_rel[:, None], pmf, 0.0)
    covered = (low <= truth) & (truth <= high)
    return (
        float((pmf * covered).sum()),
        float((pmf * (high < truth)).sum()),
        float((pmf * (low > truth)).sum()),
    )


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prior", default="metric_jeffreys", help="the prior of the cells")
    prior = parser.parse_args().prior
    suite = harness.load_suite(SUITE)
    prevalence, level = suite.population["prevalence"], suite.confidence_level
    rows = []
    for cell in suite.cells("full"):
        cov, below, above = exact_f1(
            int(cell["n"]),
            float(cell["precision"]),
            float(cell["recall"]),
            prevalence,
            level,
            prior,
        )
        rows.append((cell["n"], cell["precision"], cell["recall"], cov, below, above))
    table = np.array(rows)
    worst = table[np.argmin(table[:, 3])]
    print(f"cells: {len(table)}; exact coverage of the Bayesian F1 interval, prior {prior}")
    print(f"smallest coverage {worst[3]:.4f} at n={worst[0]:.0f}, P={worst[1]}, R={worst[2]}")
    print(f"largest miss below (interval under the truth) {table[:, 4].max():.4f}")
    print(f"largest miss above (interval over the truth) {table[:, 5].max():.4f}")
    below_093 = int((table[:, 3] < 0.93).sum())
    print(f"mean coverage {table[:, 3].mean():.4f}; cells below 0.93: {below_093}")
    for n, p, r, cov, low, high in table[table[:, 3] < 0.94]:
        print(f"  n={n:.0f} P={p} R={r}: {cov:.4f} ({low:.4f} below, {high:.4f} above)")


if __name__ == "__main__":
    main()
