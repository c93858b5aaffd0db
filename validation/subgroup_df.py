"""Degrees of freedom of the cluster-robust interval of a difference between subgroups.

Two subgroups of persons, each person with texts and a rate of their own (a Beta with the
given ICC); the difference of the two subgroups' text-weighted rates (accuracy) gets the
cluster-robust interval of :func:`perfci.compare_groups`, with a t quantile on one of
three df rules:

- ``ws``: Welch-Satterthwaite on the two cluster-robust variances, m_g - 1 df each;
- ``min m``: the smaller m_g - 1;
- ``min G*``: the smaller G*_g - 1, with G*_g = (sum w_i)^2 / sum w_i^2 the effective
  number of persons (w_i their texts; m_g when every person has as many), what
  :func:`perfci.compare_groups` ships.

Run ``python validation/subgroup_df.py`` (about 10 seconds); it prints the markdown table
that ``docs/subgroups.md`` shows. The persons' numbers of texts are 10, or lognormal with
mean 10 and CV 1 (at least 1); sizes are unrelated to rates, so the truth is the
difference of the two mean rates.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from perfci import UndefinedMetricWarning
from perfci.subgroups import _sides, compare_groups_counts

REPLICATIONS = 10_000
TEXTS = 10
SEED = 20260301


def persons(m: int, cv: float, rate: float, icc: float, rng: np.random.Generator) -> np.ndarray:
    """Per-person counts ``(R, m, 4)`` of accuracy: [right, 0, wrong, 0]."""
    if cv > 0:
        s2 = np.log1p(cv**2)
        n = rng.lognormal(np.log(TEXTS) - s2 / 2, np.sqrt(s2), (REPLICATIONS, m))
        n = np.maximum(1, np.round(n)).astype(np.int64)
    else:
        n = np.full((REPLICATIONS, m), TEXTS)
    k = 1 / icc - 1
    p = rng.beta(rate * k, (1 - rate) * k, (REPLICATIONS, m))
    y = rng.binomial(n, p)
    zeros = np.zeros_like(y)
    return np.stack([y, zeros, n - y, zeros], -1).astype(float)


def cell(m1, rate1, m2, rate2, cv, icc, rng) -> dict[str, float]:
    a, b = persons(m1, cv, rate1, icc, rng), persons(m2, cv, rate2, icc, rng)
    sa, sb = _sides(a, "accuracy", True), _sides(b, "accuracy", True)
    d = sa.estimate - sb.estimate - (rate1 - rate2)
    se = np.sqrt(sa.variance + sb.variance)
    ok = se > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ws = (sa.variance + sb.variance) ** 2 / (
            sa.variance**2 / (m1 - 1) + sb.variance**2 / (m2 - 1)
        )
    rules = {
        "ws": ws,
        "min m": np.full(REPLICATIONS, min(m1, m2) - 1.0),
        "min G*": np.maximum(np.minimum(sa.clusters, sb.clusters) - 1, 1.0),
    }
    out = {
        name: float((np.abs(d) <= stats.t.ppf(0.975, df) * se)[ok].mean())
        for name, df in rules.items()
    }
    # the shipped interval is the min G* rule (a data set where neither subgroup varies
    # has no interval, with a warning; it is left out of every rule's coverage)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        shipped = compare_groups_counts(a, b, "accuracy", nested=True, method="cluster_robust")
    covered = (shipped.low <= rate1 - rate2) & (rate1 - rate2 <= shipped.high)
    assert abs(float(covered[ok].mean()) - out["min G*"]) < 1e-12
    out["mc_se"] = float(np.sqrt(0.95 * 0.05 / ok.sum()))
    return out


def main() -> None:
    rng = np.random.default_rng(SEED)
    designs = [
        (m1, rate, m2, rate, cv, icc)
        for (m1, m2) in [(5, 5), (10, 10), (20, 20), (5, 20), (5, 40), (10, 40), (3, 30)]
        for cv in (0.0, 1.0)
        for icc, rate in ((0.2, 0.8), (0.05, 0.9))
    ]
    # the smaller subgroup the less variable one, and the more variable one
    designs += [(5, 0.97, 40, 0.6, cv, 0.2) for cv in (0.0, 1.0)] + [
        (5, 0.6, 40, 0.95, cv, 0.2) for cv in (0.0, 1.0)
    ]
    print("| persons | rates | size CV | ICC | Welch-Satterthwaite | min m - 1 | min G* - 1 |")
    print("|---|---|---|---|---|---|---|")
    for m1, rate1, m2, rate2, cv, icc in designs:
        c = cell(m1, rate1, m2, rate2, cv, icc, rng)
        print(
            f"| {m1} / {m2} | {rate1:g} / {rate2:g} | {cv:g} | {icc:g} | {c['ws']:.3f} | "
            f"{c['min m']:.3f} | {c['min G*']:.3f} |"
        )
    print(f"\nMonte-Carlo SE of each coverage: about {c['mc_se']:.4f} ({REPLICATIONS} data sets).")


if __name__ == "__main__":
    main()
