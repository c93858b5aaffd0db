"""Paired differences of a metric between two classifiers on the same texts, on joint counts.

Each text falls in one of eight joint cells (reference, A, B; :mod:`perfci._core.joint`),
per person when texts are nested. The pieces here work on those counts, batched over data
sets, and know nothing of labels or of the policy:

- :func:`newcombe_paired_interval`, Newcombe's square-and-add interval of paired
  proportions, and :func:`paired_tables`, the paired 2 x 2 tables of a proportion metric;
- :func:`linearization` and :func:`effective_df`: the cluster-robust variance of the
  difference and its degrees of freedom, put together by :func:`robust_interval`;
- :func:`proportion_tests` (Newcombe's interval, on the effective sample size when
  nested, with the exact McNemar or Durkalski's clustered McNemar test) and
  :func:`robust_t_test` (the cluster-robust t test of every other metric);
- :func:`paired_bootstrap`, the paired bootstrap by a given scheme;
- :class:`Comparison`, the result that holds them.

:func:`perfci.comparison.compare_counts` chooses among them and assembles the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from ._core.estimands import relevant_joint_cells
from ._core.joint import TO_A, TO_B
from ._core.replicates import warn_pseudo_count
from ._core.resampling import Statistic, renumbered
from ._core.results import IntervalResult, sources_of
from ._core.validation import dataset_generators
from .analytic import proportion_ci
from .bootstrap import MIN_PERSONS, ONE_PERSON, BootstrapCI, resample_intervals
from .design import effective_clusters, t_ratio
from .metrics import (
    CELL_POOLING,
    PROPORTION_METRICS,
    difference_bound,
    metric_gradient,
    metric_values,
)

__all__ = [
    "TESTS",
    "Comparison",
    "PairedTests",
    "RobustInterval",
    "effective_df",
    "effective_persons",
    "linearization",
    "newcombe_paired_interval",
    "newcombe_rows",
    "paired_bootstrap",
    "paired_tables",
    "proportion_tests",
    "robust_interval",
    "robust_t_test",
]

# An influence that cancels to within rounding of the terms it is the sum of is zero, so
# that "no information" is recognized exactly (identical classifiers, balanced persons).
_ROUNDING = 64 * np.finfo(float).eps


#: Names of the tests of equal performance (``Comparison.test``), by kind.
TESTS = {
    "mcnemar": "exact McNemar",
    "durkalski": "Durkalski clustered McNemar",
    "robust_t": "cluster-robust t (effective persons - 1 df)",
}


@dataclass(frozen=True, repr=False)
class Comparison(IntervalResult):
    r"""The paired difference of a metric between two classifiers (A minus B).

    Numeric fields are scalars for a single data set and arrays of the batch's shape for
    a batch of data sets (see :func:`perfci.compare`).

    Attributes
    ----------
    metric : str
        The metric.
    estimate_a, estimate_b : float
        The metric of classifier A and of classifier B (on the pooled counts).
    difference : float
        ``estimate_a - estimate_b``; also `estimate`, the quantity `low` and `high` bound.
    low, high : float
        The interval of the difference by the chosen method (`method`): the paired
        bootstrap's, the cluster-robust one (`robust_low`, `robust_high`) or Newcombe's
        (`newcombe_low`, `newcombe_high`).
    confidence_level : float
        The confidence level.
    method : str
        The chosen interval with its options, e.g. ``"paired bootstrap (scheme=iid,
        interval=percentile, pseudo_count=0)"`` or ``"cluster-robust linearization
        (persons as clusters, t with G* - 1 df)"``.
    p_value : float
        Two-sided p-value of the test of equal performance named by `test`.
    test : str
        ``"exact McNemar"`` (accuracy, recall, specificity on independent texts; equals
        `mcnemar_pvalue`), ``"Durkalski clustered McNemar"`` (the same metrics on nested
        texts) or ``"cluster-robust t (effective persons - 1 df)"`` (every other metric, and with
        ``groups``; without groups each text is its own cluster).
    robust_low, robust_high : float
        The cluster-robust (linearization) interval
        ``difference -/+ t_{df} * robust_se``; NaN where `robust_se` is 0 (no
        information on the difference: a zero-width interval would claim certainty) or
        there are fewer than 2 persons (texts, without groups).
    robust_se : float
        The cluster-robust standard error of the difference (0 where the difference
        has no variation between persons; NaN where it is undefined).
    df : float
        Degrees of freedom of the robust interval and the t test: with groups
        :math:`G^* - 1` (`effective_persons` - 1, at least 1), without groups n - 1 for
        the n relevant texts.
    disagreement : float
        Share of texts on which A and B give different labels.
    n_texts : int
        Texts compared.
    persons : int or None
        Persons with at least one text (nested data), else None.
    effective_persons : float or None
        The effective number of persons :math:`G^*` of the persons' relevant texts, from
        which `df` is computed (:func:`effective_persons`; `persons` for persons of equal
        size, fewer when a few hold most texts); None without groups.
    newcombe_low, newcombe_high : float
        Newcombe's paired score interval of the difference, for accuracy, recall and
        specificity (NaN for the other metrics). On independent texts it is Newcombe's
        interval of the paired table; with ``groups`` it is Newcombe's interval of the
        table scaled to the effective sample size (see `design_effect` and the Notes of
        :func:`perfci.compare`).
    design_effect : float
        The design effect of the difference used for the nested Newcombe interval (the
        cluster-robust variance over the variance of independent texts; 1 where that is
        undefined, with a warning); NaN without groups or for the other metrics.
    mcnemar_pvalue : float
        Exact McNemar p-value (two-sided binomial test on the discordant texts) for
        accuracy, recall and specificity on independent texts; NaN otherwise (kept as
        it was; `p_value` is the test for every case).
    discordant : tuple of int
        Relevant texts that only A gets right and that only B gets right (accuracy,
        recall, specificity; (0, 0) otherwise), over all persons.
    bootstrap : BootstrapCI or None
        The paired bootstrap, whose `distribution` holds the replicate differences, when
        it is the chosen method; None otherwise (it is not computed then).
    """

    _derived: ClassVar[tuple[str, ...]] = ("sources",)
    _repr_fields: ClassVar[tuple[str, ...]] = ("estimate_a", "estimate_b", "disagreement")

    metric: str
    estimate_a: Any
    estimate_b: Any
    difference: Any
    low: Any
    high: Any
    confidence_level: float
    method: str
    p_value: Any
    test: str
    robust_low: Any
    robust_high: Any
    robust_se: Any
    df: Any
    disagreement: Any
    n_texts: Any
    persons: Any
    newcombe_low: Any
    newcombe_high: Any
    design_effect: Any
    mcnemar_pvalue: Any
    discordant: Any
    bootstrap: BootstrapCI | None
    effective_persons: Any

    _exclude: ClassVar[tuple[str, ...]] = ("bootstrap",)

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes.

        ``("texts", "persons")`` with persons, else ``("texts",)``.
        """
        return sources_of(persons=self.persons is not None)

    @property
    def estimate(self) -> Any:
        """The difference A - B (the name other results use for the point estimate)."""
        return self.difference

    def __repr__(self) -> str:
        if np.ndim(self.difference):
            return super().__repr__()
        return (
            f"Comparison(metric={self.metric!r}, difference={self.difference:.4g}, "
            f"low={self.low:.4g}, high={self.high:.4g}, estimate_a={self.estimate_a:.4g}, "
            f"estimate_b={self.estimate_b:.4g}, disagreement={self.disagreement:.4g}, "
            f"method={self.method!r})"
        )


def newcombe_paired_interval(
    both: Any, only_a: Any, only_b: Any, neither: Any, confidence_level: float = 0.95
) -> tuple[Any, Any]:
    r"""Newcombe's square-and-add interval for a difference of paired proportions.

    Parameters
    ----------
    both, only_a, only_b, neither : float or array_like
        The paired 2 x 2 table: successes of both, of A only, of B only, of neither
        (arrays broadcast: one table per data set).
    confidence_level : float, default 0.95
        Confidence level.

    Returns
    -------
    low, high : float or numpy.ndarray
        Interval for :math:`p_A - p_B = (\text{only\_a} - \text{only\_b}) / N`.

    Notes
    -----
    Newcombe (1998), method 10: Wilson intervals :math:`(l_1, u_1)` for :math:`p_A` and
    :math:`(l_2, u_2)` for :math:`p_B`, combined as
    :math:`\hat\delta - \sqrt{(p_A - l_1)^2 + (u_2 - p_B)^2 - 2\hat\phi(p_A - l_1)(u_2 - p_B)}`
    and :math:`\hat\delta + \sqrt{(p_B - l_2)^2 + (u_1 - p_A)^2 - 2\hat\phi(p_B - l_2)(u_1 - p_A)}`,
    with the correlation estimate :math:`\hat\phi = (A - N/2)/\sqrt{\cdot}` if
    :math:`A = ad - bc > N/2`, 0 if :math:`0 \le A \le N/2`, and :math:`A/\sqrt{\cdot}`
    if :math:`A < 0`, where :math:`\sqrt{\cdot}` is the root of the product of the four
    margins (0 if a margin is empty); as in Fagerland, Lydersen and Laake (2017), 8.5.

    References
    ----------
    .. [1] Newcombe, R. G. (1998). Improved confidence intervals for the difference
       between binomial proportions based on paired data. Statistics in Medicine 17.
    .. [2] Fagerland, M. W., Lydersen, S. and Laake, P. (2017). Statistical Analysis of
       Contingency Tables. CRC Press.

    Examples
    --------
    >>> from perfci.comparison import newcombe_paired_interval
    >>> low, high = newcombe_paired_interval(59, 6, 16, 80)
    >>> print(f"{low:.4f} {high:.4f}")
    -0.1186 -0.0046
    """
    both, only_a, only_b, neither = (
        np.asarray(v, dtype=float) for v in (both, only_a, only_b, neither)
    )
    n = both + only_a + only_b + neither
    a_success, a_fail = both + only_a, only_b + neither
    b_success, b_fail = both + only_b, only_a + neither
    with np.errstate(invalid="ignore", divide="ignore"):
        p1, p2 = a_success / n, b_success / n
    w1 = proportion_ci(a_success, n, method="wilson", confidence_level=confidence_level)
    w2 = proportion_ci(b_success, n, method="wilson", confidence_level=confidence_level)
    margins = a_success * a_fail * b_success * b_fail
    cross = both * neither - only_a * only_b
    root = np.sqrt(np.where(margins > 0, margins, 1.0))
    phi = np.where(
        margins > 0,
        np.where(cross > n / 2, (cross - n / 2) / root, np.where(cross < 0, cross / root, 0.0)),
        0.0,
    )
    d1, e2 = p1 - w1.low, w2.high - p2
    d2, e1 = p2 - w2.low, w1.high - p1
    low = (p1 - p2) - np.sqrt(d1**2 + e2**2 - 2 * phi * d1 * e2)
    high = (p1 - p2) + np.sqrt(d2**2 + e1**2 - 2 * phi * d2 * e1)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def effective_persons(cells: np.ndarray, metric: str, nested: bool) -> np.ndarray:
    """Return the effective number of persons G* of each data set (NaN without persons).

    G* = (sum_i w_i)^2 / sum_i w_i^2 over the persons' relevant texts w_i (a text is
    relevant if it is for either classifier): Kish's effective number of clusters, the
    intercept-only case of the effective number of clusters of Carter, Schnepel and
    Steigerwald (2017); m for equal sizes, fewer when a few persons hold most texts.
    NaN where no person has a relevant text.
    """
    if not nested:
        return np.full(cells.shape[0], np.nan)
    is_relevant = relevant_joint_cells(metric)
    w = cells[..., is_relevant].sum(-1).astype(float)  # (K, persons)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(effective_clusters(w), dtype=float)


def effective_df(cells: np.ndarray, metric: str, nested: bool, m: np.ndarray) -> np.ndarray:
    """Degrees of freedom of the cluster-robust t: the effective number of persons - 1.

    G* - 1 (:func:`effective_persons`). Without persons each text is a cluster and the
    df are n - 1. At least 1 (m - 1 where there are fewer than 2 persons, and no
    interval).
    """
    few = m < MIN_PERSONS  # no interval: the df are reported as m - 1
    if not nested:
        return (m - 1).astype(float)
    effective = effective_persons(cells, metric, nested)
    df = np.maximum(np.where(np.isfinite(effective), effective, m) - 1, 1.0)
    return np.where(few, m - 1, df)


def linearization(
    cells: np.ndarray, total: np.ndarray, metric: str, nested: bool, m: np.ndarray
) -> np.ndarray:
    """Cluster-robust variance m/(m - 1) sum_i u_i^2 of the difference, per data set.

    The influences u_i are per person (``cells`` of shape ``(K, persons, 8)``), or per
    text without groups (a text in joint cell j has influence u_j, so the sum is
    sum_j C_j u_j^2 over the pooled counts ``total``); `m` is the number of clusters.
    NaN where m < 2 or the difference is undefined.
    """
    g_a = metric_gradient(total @ TO_A, metric) @ TO_A.T  # (K, 8): d metric(A) / d cell
    g_b = metric_gradient(total @ TO_B, metric) @ TO_B.T
    grad, size = g_a - g_b, np.abs(g_a) + np.abs(g_b)
    if nested:
        u = (cells * grad[:, None, :]).sum(-1)  # (K, persons): u_i = grad . c_i
        scale = (cells * size[:, None, :]).sum(-1)
        weights = np.ones(u.shape)
    else:
        u, scale, weights = grad, size, total.astype(float)
    u = np.where(np.abs(u) <= _ROUNDING * scale, 0.0, u)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(m >= 2, m / np.maximum(m - 1, 1), np.nan)
    return factor * (weights * u * u).sum(-1)


def paired_tables(cells: np.ndarray, metric: str) -> np.ndarray:
    """Per-unit paired tables (both, only_a, only_b, neither) on the relevant texts.

    `cells` has the joint cells last (``(..., 8)``); A or B is right on a text when it
    falls in the metric's numerator cells, and the relevant texts are its denominator
    (defined by the reference alone, so the same for A and B).
    """
    num = list(PROPORTION_METRICS[metric][0])
    den = list(PROPORTION_METRICS[metric][1])
    in_den = TO_A[:, den].sum(1) > 0
    ok_a = TO_A[:, num].sum(1) > 0
    ok_b = TO_B[:, num].sum(1) > 0
    masks = (
        in_den & ok_a & ok_b,
        in_den & ok_a & ~ok_b,
        in_den & ~ok_a & ok_b,
        in_den & ~ok_a & ~ok_b,
    )
    return np.stack([cells[..., mask].sum(-1) for mask in masks], axis=-1).astype(float)


def newcombe_rows(table: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's interval of each row of (possibly scaled) tables, NaN for empty ones."""
    some = np.isfinite(table).all(-1) & (table.sum(-1) > 0)
    both, only_a, only_b, neither = np.where(some[:, None], table, 1.0).T
    low, high = newcombe_paired_interval(both, only_a, only_b, neither, level)
    return np.where(some, low, np.nan), np.where(some, high, np.nan)


@dataclass(frozen=True)
class RobustInterval:
    """The cluster-robust (linearization) interval of each data set's difference.

    Arrays of shape (K,): the clusters `m` (persons, or texts without groups, with a
    relevant text), the `variance`, standard error `se` and degrees of freedom `df` of the
    difference, `few` (fewer than 2 clusters) and `zero` (a standard error of 0 with 2
    or more), the ends `low`, `high` (NaN where `few` or `zero`), and the effective
    persons G* the df are computed from (`effective`, NaN without persons).
    """

    m: np.ndarray
    variance: np.ndarray
    se: np.ndarray
    df: np.ndarray
    few: np.ndarray
    zero: np.ndarray
    low: np.ndarray
    high: np.ndarray
    effective: np.ndarray


def robust_interval(
    cells: np.ndarray,
    total: np.ndarray,
    diff: np.ndarray,
    metric: str,
    nested: bool,
    level: float,
) -> RobustInterval:
    """Return the cluster-robust interval of the differences `diff` of joint counts.

    `cells` ``(K, 8)`` or ``(K, persons, 8)``, `total` their pooled ``(K, 8)``; the
    interval is clipped to the range of a difference of the metric.
    """
    # the clusters of the estimator: persons (or texts) with a relevant text
    is_relevant = relevant_joint_cells(metric)
    if nested:
        m = np.count_nonzero(cells[..., is_relevant].sum(-1), -1)
    else:
        m = total[:, is_relevant].sum(-1)
    variance = linearization(cells, total, metric, nested, m)
    few = m < MIN_PERSONS
    se = np.sqrt(variance)
    zero = (se == 0) & ~few
    q = 0.5 + float(level) / 2
    # t on the effective number of persons minus one: G* = (sum w_i)^2 / sum w_i^2 of
    # the persons' relevant texts w_i (m for equal sizes); with unequal sizes a few large
    # persons carry the variance estimate, which has fewer df than m - 1
    df = effective_df(cells, metric, nested, m)
    effective = effective_persons(cells, metric, nested)
    with np.errstate(invalid="ignore"):
        t_quantile = stats.t.ppf(q, np.where(few, 1, df))
    half = np.where(zero | few, np.nan, t_quantile * se)
    # a wider interval than the metric's range claims nothing more: clip to it
    bound = difference_bound(metric)
    low, high = np.maximum(diff - half, -bound), np.minimum(diff + half, bound)
    return RobustInterval(m, variance, se, df, few, zero, low, high, effective)


@dataclass(frozen=True)
class PairedTests:
    """Newcombe's interval and the test of equal performance of each data set (K,).

    `newcombe_low`, `newcombe_high` and `design_effect` are NaN for a metric that is not
    a paired proportion (and the design effect without persons); `discordant` ``(K, 2)``
    counts the relevant texts only A and only B get right; `mcnemar` is the exact McNemar
    p-value on independent texts (else NaN); `p_value` is the test named `test`.
    """

    newcombe_low: np.ndarray
    newcombe_high: np.ndarray
    design_effect: np.ndarray
    discordant: np.ndarray
    mcnemar: np.ndarray
    p_value: np.ndarray
    test: str


def proportion_tests(
    cells: np.ndarray,
    total: np.ndarray,
    metric: str,
    nested: bool,
    level: float,
    robust: RobustInterval,
) -> PairedTests:
    """Return Newcombe's interval and the McNemar (nested: Durkalski) test of a proportion.

    With persons, Newcombe's interval is of the paired table scaled to the effective
    sample size: the cluster-robust design effect and the Dean-Pagano df factor.
    """
    sets = total.shape[0]
    tables = paired_tables(cells if nested else total[:, None, :], metric)  # (K, P, 4)
    table = tables.sum(1)
    some = table.sum(1) > 0
    discordant = np.where(some[:, None], table[:, 1:3], 0).astype(np.int64)
    n_disc = discordant.sum(1)
    # exact McNemar: two-sided binomial test of the discordant texts at 1/2, which
    # by symmetry is min(1, 2 P(X <= min(b, c)))
    tail = stats.binom.cdf(discordant.min(1), n_disc, 0.5)
    exact = np.where(some, np.where(n_disc == 0, 1.0, np.minimum(1.0, 2 * tail)), np.nan)
    if not nested:
        newcombe_low, newcombe_high = newcombe_rows(table, float(level))
        deff = np.full(sets, np.nan)
        return PairedTests(
            newcombe_low, newcombe_high, deff, discordant, exact, exact, TESTS["mcnemar"]
        )
    few, m = robust.few, robust.m
    n, only_a, only_b = table.sum(1), table[:, 1], table[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        iid = ((only_a + only_b) - (only_a - only_b) ** 2 / n) / n**2
        deff = np.where(robust.variance > 0, robust.variance / iid, 1.0)
        ratio = t_ratio("dean_pagano", level, n, np.where(few, 2, m))
        scale = np.where(few | ~some, np.nan, ratio / deff)
    deff = np.where(few | ~some, np.nan, deff)
    newcombe_low, newcombe_high = newcombe_rows(table * scale[:, None], float(level))
    delta = tables[..., 1] - tables[..., 2]  # (K, persons): b_i - c_i
    numerator, denominator = delta.sum(-1) ** 2, (delta * delta).sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        statistic = np.where(denominator > 0, numerator / denominator, 0.0)
    pvalue = np.where(few | ~some, np.nan, stats.chi2.sf(statistic, 1))
    mcnemar = np.full(sets, np.nan)
    return PairedTests(
        newcombe_low, newcombe_high, deff, discordant, mcnemar, pvalue, TESTS["durkalski"]
    )


def robust_t_test(diff: np.ndarray, robust: RobustInterval) -> PairedTests:
    """Return the cluster-robust t test of the differences (the metrics not paired proportions)."""
    sets = diff.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t_stat = diff / robust.se
        p_t = 2 * stats.t.sf(np.abs(t_stat), np.where(robust.few, 1, robust.df))
    pvalue = np.where(robust.zero | robust.few, np.nan, p_t)
    discordant = np.zeros((sets, 2), dtype=np.int64)
    nan = np.full(sets, np.nan)
    return PairedTests(
        nan, nan.copy(), nan.copy(), discordant, nan.copy(), pvalue, TESTS["robust_t"]
    )


def joint_pooling(metric: str) -> tuple[int, ...] | None:
    """Return the joint cells a difference of `metric` reads only through their sums.

    Joint cells pool when they fall in the same group of the metric's cells
    (:data:`perfci.metrics.CELL_POOLING`) for A and for B alike: moving texts between them
    changes neither classifier's group totals. None when nothing pools.
    """
    groups = CELL_POOLING.get(metric)
    if groups is None:
        return None
    a, b = np.argmax(TO_A, axis=1), np.argmax(TO_B, axis=1)
    pooling = renumbered([(groups[i], groups[j]) for i, j in zip(a, b, strict=True)])
    return None if len(set(pooling)) == len(pooling) else pooling


def paired_bootstrap(
    cells: np.ndarray,
    total: np.ndarray,
    metric: str,
    scheme: str,
    interval: str,
    pseudo_count: int,
    n_resamples: int,
    level: float,
    root: np.random.Generator,
    single: bool,
) -> tuple[dict[str, np.ndarray], str]:
    """Run the paired bootstrap by `scheme`: the engine's output and the statistic's name.

    Each replicate is metric(A) - metric(B) of the same resampled joint counts. For a
    single data set, a cluster scheme with one person, or a metric undefined in every
    resample, is refused (a ValueError).
    """

    def difference(c: np.ndarray) -> np.ndarray:
        return metric_values(c @ TO_A, metric) - metric_values(c @ TO_B, metric)

    statistic = Statistic(f"{metric} difference", 8, difference, pooling=joint_pooling(metric))
    if scheme == "iid":
        units = [c.astype(float) for c in total]
    else:
        units = [c[c.sum(1) > 0].astype(float) for c in cells]
    if single and scheme != "iid" and units[0].shape[0] < MIN_PERSONS:
        raise ValueError(
            f"`groups` must give at least {MIN_PERSONS} persons with texts for scheme "
            f"{scheme!r}: {ONE_PERSON}; got {units[0].shape[0]}."
        )
    warn_pseudo_count(total.reshape(total.shape[0], -1).sum(-1), pseudo_count * 8, single)
    parts = resample_intervals(
        units,
        statistic,
        scheme=scheme,
        interval=interval,
        pseudo_count=pseudo_count,
        n_resamples=n_resamples,
        confidence_level=level,
        generators=dataset_generators(root, len(units), not single),
        batch=None,
    )
    if single and parts["no_valid"][0]:
        raise ValueError(
            f"`metric` {metric!r} is undefined in every resample of these counts "
            "(its denominator is always zero); no interval exists."
        )
    return parts, statistic.metric
