"""A metric's difference between two independent samples of counts (subgroups).

Two disjoint samples of texts (on nested texts, of persons) give independent estimates,
so the variance of their difference is the sum of two variances. The pieces here work
on counts, batched over data sets, and know nothing of labels or of the policy:

- :func:`newcombe_interval`, Newcombe's hybrid score interval of two independent
  proportions (the Wilson interval of each, combined by square-and-add);
- :class:`Sides` and :func:`sides_of`: each sample's estimate, relevant n, persons and
  cluster-robust (linearization) variance, with its effective number of clusters;
- :func:`replicates_of`: one sample's pseudo-count bootstrap replicates;
- :func:`difference_ends`: the interval of each difference at one level, by Newcombe's
  interval, the cluster-robust t or the percentile of independent bootstraps,
  :func:`difference_se`, its standard error and df, and :func:`undefined_reasons`, why
  a difference has none;
- :class:`GroupDifference`, the result of one such difference
  (:func:`perfci.subgroups.compare_groups_counts`).

:mod:`perfci.subgroups` applies them to every subgroup against a reference.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from ._core.estimands import relevant_description, relevant_texts
from ._core.intervals import percentile_levels, type7_quantiles
from ._core.resampling import augment, draw_replicates
from ._core.results import IntervalResult, sources_of
from ._core.validation import check_confidence_level, check_real_array
from .analytic import proportion_ci
from .bootstrap import MIN_PERSONS, RATER_SYMMETRIC, canonical_cells, metric_statistic
from .design import effective_clusters
from .metrics import PROPORTION_METRICS, metric_gradient, metric_values, undefined_reason

__all__ = [
    "GroupDifference",
    "Sides",
    "difference_ends",
    "difference_se",
    "newcombe_ends",
    "newcombe_interval",
    "replicates_of",
    "robust_se",
    "sides_of",
    "undefined_reasons",
    "wilson_ends",
]

# An influence that cancels to within rounding of the terms it is the sum of is zero, so
# that a person whose rate is the pooled rate has no influence (as in perfci.compare).
_ROUNDING = 64 * np.finfo(float).eps


def newcombe_interval(
    x1: Any, n1: Any, x2: Any, n2: Any, confidence_level: float = 0.95
) -> tuple[Any, Any]:
    r"""Newcombe's hybrid score interval for a difference of two independent proportions.

    Parameters
    ----------
    x1, n1 : float or array_like
        Successes and trials of the first sample (arrays broadcast: one pair per data set).
    x2, n2 : float or array_like
        Successes and trials of the second sample.
    confidence_level : float, default 0.95
        Confidence level.

    Returns
    -------
    low, high : float or numpy.ndarray
        Interval for :math:`p_1 - p_2`; NaN where either sample has no trials.

    Raises
    ------
    ValueError
        For counts that are not real, finite and non-negative, successes above trials,
        or a level outside (0, 1).

    Notes
    -----
    Newcombe (1998), method 10 [1]_: with :math:`(l_1, u_1)` and :math:`(l_2, u_2)` the
    Wilson score intervals of :math:`\hat p_1 = x_1/n_1` and :math:`\hat p_2 = x_2/n_2` at
    the same level,

    .. math::

        L = \hat p_1 - \hat p_2 - \sqrt{(\hat p_1 - l_1)^2 + (u_2 - \hat p_2)^2}, \quad
        U = \hat p_1 - \hat p_2 + \sqrt{(u_1 - \hat p_1)^2 + (\hat p_2 - l_2)^2}.

    Each square is the Wilson interval's distance on the side that moves the difference
    that way; adding them in quadrature is the variance of a difference of independent
    estimates. It is what statsmodels' ``confint_proportions_2indep(...,
    method="newcomb")`` computes (``tests/test_subgroups.py`` checks to 1e-10).

    References
    ----------
    .. [1] Newcombe, R. G. (1998). Interval estimation for the difference between
       independent proportions: comparison of eleven methods. Statistics in Medicine
       17(8), 873-890.

    Examples
    --------
    >>> from perfci.subgroups import newcombe_interval
    >>> low, high = newcombe_interval(56, 70, 48, 80)  # Newcombe (1998), table II, example (a)
    >>> print(f"{low:.4f} {high:.4f}")
    0.0524 0.3339
    """
    x1, n1, x2, n2 = (
        check_real_array(name, v) for name, v in zip(_XN, (x1, n1, x2, n2), strict=True)
    )
    level = float(check_confidence_level(confidence_level, scalar=True))
    for (xname, x), (nname, n) in (((_XN[0], x1), (_XN[1], n1)), ((_XN[2], x2), (_XN[3], n2))):
        if np.any(x < 0) or np.any(n < 0):
            raise ValueError(f"`{xname}` and `{nname}` must be non-negative.")
        if np.any(x > n):
            raise ValueError(f"`{xname}` must not exceed `{nname}`.")
    try:
        shape = np.broadcast_shapes(x1.shape, n1.shape, x2.shape, n2.shape)
    except ValueError:
        raise ValueError("`x1`, `n1`, `x2` and `n2` must broadcast to one shape.") from None
    a, b, c, d = (np.broadcast_to(v, shape) for v in (x1, n1, x2, n2))
    low, high = newcombe_ends(a, b, c, d, level)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


_XN = ("x1", "n1", "x2", "n2")


def wilson_ends(x: np.ndarray, n: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson ends of validated counts, NaN where there are no trials."""
    some = n > 0
    ci = proportion_ci(
        np.where(some, x, 0.0), np.where(some, n, 1.0), method="wilson", confidence_level=level
    )
    return np.where(some, ci.low, np.nan), np.where(some, ci.high, np.nan)


def newcombe_ends(
    x1: np.ndarray, n1: np.ndarray, x2: np.ndarray, n2: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's hybrid score ends of validated counts (no checks, NaN without trials)."""
    l1, u1 = wilson_ends(x1, n1, level)
    l2, u2 = wilson_ends(x2, n2, level)
    with np.errstate(invalid="ignore", divide="ignore"):
        p1, p2 = x1 / n1, x2 / n2
    d = p1 - p2
    low = d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return np.asarray(low, dtype=float), np.asarray(high, dtype=float)


@dataclass(frozen=True)
class Sides:
    """Per-data-set summaries of one side of differences (arrays of shape (K,)).

    The estimate (NaN without relevant texts), relevant n, persons with a relevant text
    (None without persons), the cluster-robust variance of the estimate (NaN with fewer
    than 2 clusters), the effective number of clusters, and a proportion metric's
    successes and trials (None for the other metrics).
    """

    estimate: np.ndarray
    relevant_n: np.ndarray
    persons: np.ndarray | None
    variance: np.ndarray  # cluster-robust variance of the estimate
    clusters: np.ndarray  # the effective number of clusters G* (texts without persons)
    successes: np.ndarray | None
    trials: np.ndarray | None

    @property
    def effective_persons(self) -> np.ndarray:
        """Return G*, the effective number of persons of each data set (NaN without persons)."""
        if self.persons is None:
            return np.full(self.clusters.shape, np.nan)
        return self.clusters

    def take(self, index: Any) -> Sides:
        """Return the summaries of the data sets `index` (an index of the first axis)."""

        def pick(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[index]

        return Sides(
            self.estimate[index],
            self.relevant_n[index],
            pick(self.persons),
            self.variance[index],
            self.clusters[index],
            pick(self.successes),
            pick(self.trials),
        )


def sides_of(cells: np.ndarray, metric: str, nested: bool) -> Sides:
    """Estimates and cluster-robust variances of counts (K, 4) or per person (K, m, 4)."""
    total = cells.sum(-2) if nested else cells
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = metric_values(total, metric)
        grad = metric_gradient(total, metric)  # (K, 4)
    relevant = relevant_texts(cells, metric)  # (K,) or (K, m)
    relevant_n = relevant.sum(-1) if nested else relevant
    if nested:
        u = (cells * grad[:, None, :]).sum(-1)  # (K, m): person i's influence g . c_i
        scale = (cells * np.abs(grad)[:, None, :]).sum(-1)
        u = np.where(np.abs(u) <= _ROUNDING * scale, 0.0, u)
        m = np.count_nonzero(relevant, -1)
        square_sum = (u * u).sum(-1)
        w = relevant.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            clusters = effective_clusters(w)
        persons: np.ndarray | None = m
    else:
        m = relevant_n  # each relevant text is a cluster (the others have no influence)
        square_sum = (total * grad * grad).sum(-1)
        clusters = relevant_n.astype(float)
        persons = None
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = np.where(m >= 2, m / np.maximum(m - 1, 1) * square_sum, np.nan)
    successes = trials = None
    if metric in PROPORTION_METRICS:
        num, den = PROPORTION_METRICS[metric]
        successes, trials = total[..., list(num)].sum(-1), total[..., list(den)].sum(-1)
    return Sides(
        estimate=np.where(relevant_n > 0, estimate, np.nan),
        relevant_n=relevant_n.astype(np.int64),
        persons=None if persons is None else persons.astype(np.int64),
        variance=variance,
        clusters=clusters,
        successes=successes,
        trials=trials,
    )


def replicates_of(
    cells: np.ndarray,
    metric: str,
    scheme: str,
    n_resamples: int,
    generator: np.random.Generator,
    pseudo_count: int,
) -> np.ndarray:
    """Pseudo-count bootstrap replicates of one side's metric (NaN where undefined).

    `cells` is ``(4,)`` or, per person, ``(m, 4)``; the iid scheme adds persons up.
    """
    statistic = metric_statistic(metric)
    nested = cells.ndim == 2
    # canonical as in perfci.bootstrap_ci, so that each side draws what it would draw there
    symmetric = metric in RATER_SYMMETRIC
    units = canonical_cells(cells, scheme, nested=nested, rater_symmetric=symmetric)
    if units.sum() == 0 or (scheme != "iid" and units.shape[0] < MIN_PERSONS):
        return np.full(n_resamples, np.nan)
    augmented = augment(units, scheme, pseudo_count)
    with np.errstate(invalid="ignore", divide="ignore"):
        return draw_replicates(augmented, scheme, n_resamples, statistic, generator)


def difference_ends(
    method: str,
    side: Sides,
    reference: Sides,
    differences: np.ndarray | None,
    level: float,
    bound: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Return the ends of each difference (rows) at one level, by one method.

    The cluster-robust ends are clipped to [-bound, bound], the range of a difference of
    the metric (a wider interval claims nothing more, and the truth is always inside).
    """
    if method == "newcombe":
        assert side.successes is not None and side.trials is not None
        assert reference.successes is not None and reference.trials is not None
        return newcombe_ends(
            side.successes, side.trials, reference.successes, reference.trials, level
        )
    if method == "cluster_robust":
        se, df = robust_se(side, reference)
        with np.errstate(invalid="ignore"):
            q = stats.t.ppf(0.5 + level / 2, np.where(np.isfinite(df), df, 1.0))
        d = side.estimate - reference.estimate
        half = np.where(se > 0, q * se, np.nan)
        return np.maximum(d - half, -bound), np.minimum(d + half, bound)
    assert differences is not None
    ends = type7_quantiles(differences, percentile_levels(level, differences.shape[0]))
    return ends[:, 0], ends[:, 1]


def difference_se(
    method: str, side: Sides, reference: Sides, differences: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Return each difference's standard error and df as `method` has them.

    The cluster-robust standard error (Newcombe's and the cluster-robust interval) or the
    standard deviation of the bootstrap's replicate differences (rows of `differences`,
    NaN where undefined); the df of the cluster-robust t, NaN for the other methods.
    """
    se, df = robust_se(side, reference)
    if method != "cluster_robust":
        df = np.full(df.shape, np.nan)
    if method == "bootstrap":
        assert differences is not None
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            se = np.nanstd(differences, -1, ddof=1)
    return se, df


def robust_se(side: Sides, reference: Sides) -> tuple[np.ndarray, np.ndarray]:
    """Return each difference's standard error and df: the smaller G* - 1, at least 1."""
    se = np.sqrt(side.variance + reference.variance)
    df = np.maximum(np.minimum(side.clusters, reference.clusters) - 1, 1.0)
    return se, np.where(np.isfinite(se), df, np.nan)


def undefined_reasons(
    side: Sides, reference: Sides, nested: bool, metric: str, method: str
) -> list[str]:
    """Return why each difference (row) by `method` is undefined, or "" where it is defined."""
    out = []
    for k in range(side.estimate.size):
        why = []
        for name, s in (("subgroup", side), ("reference", reference)):
            if s.relevant_n[k] == 0:
                why.append(f"the {name} has no relevant texts ({relevant_description(metric)})")
            elif np.isnan(s.estimate[k]):
                why.append(f"{metric} is undefined in the {name}: {undefined_reason(metric)}")
            elif method == "cluster_robust" and not nested and s.relevant_n[k] < 2:
                why.append(f"the {name} has one relevant text (a variance between texts needs two)")
            elif nested and s.persons is not None and s.persons[k] < MIN_PERSONS:
                why.append(
                    f"the {name} has fewer than {MIN_PERSONS} persons with a relevant text "
                    "(a variance between persons needs two of them)"
                )
        out.append("; ".join(why))
    return out


@dataclass(frozen=True, repr=False)
class GroupDifference(IntervalResult):
    r"""The difference of a metric between a subgroup and a reference subgroup.

    Numeric fields are scalars for a single data set and arrays of the batch's shape for
    a batch (see :func:`perfci.subgroups.compare_groups_counts`).

    Attributes
    ----------
    metric : str
        The metric.
    estimate_subgroup, estimate_reference : float
        The metric of the subgroup and of the reference (on their pooled counts).
    difference : float
        ``estimate_subgroup - estimate_reference``; also `estimate`, the quantity `low`
        and `high` bound (as in every interval result).
    low, high : float
        The interval of the difference (NaN where it is undefined).
    confidence_level : float
        The confidence level.
    method : str
        The interval with its options.
    standard_error : float
        The standard error of the difference: the cluster-robust one
        :math:`\sqrt{v + v_0}` (Newcombe's and the cluster-robust interval), or the
        standard deviation of the bootstrap's replicate differences.
    df : float
        Degrees of freedom of the cluster-robust interval (NaN for the other methods).
    relevant_n, relevant_n_reference : int
        Relevant texts of each side (for a proportion metric, its denominator).
    persons, persons_reference : int or None
        Persons with a relevant text on each side (nested texts), else None.
    n_invalid_resamples : int
        Bootstrap resamples whose difference was undefined and dropped (0 for the other
        methods).
    effective_persons, effective_persons_reference : float or None
        The effective number of persons :math:`G^*` of each side (nested texts), as the
        cluster-robust interval's df use it (:func:`perfci.design.effective_clusters` of
        the persons' relevant texts); None for independent texts.
    """

    _derived: ClassVar[tuple[str, ...]] = ("sources",)

    metric: str
    estimate_subgroup: Any
    estimate_reference: Any
    difference: Any
    low: Any
    high: Any
    confidence_level: float
    method: str
    standard_error: Any
    df: Any
    relevant_n: Any
    relevant_n_reference: Any
    persons: Any
    persons_reference: Any
    n_invalid_resamples: Any
    effective_persons: Any
    effective_persons_reference: Any

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes.

        ``("texts", "persons")`` with persons, else ``("texts",)``.
        """
        return sources_of(persons=self.persons is not None)

    @property
    def estimate(self) -> Any:
        """Return the difference, the quantity the interval bounds."""
        return self.difference

    def __repr__(self) -> str:
        if np.ndim(self.low):
            return (
                f"GroupDifference(metric={self.metric!r}, data sets of shape "
                f"{np.shape(self.low)}, method={self.method!r})"
            )
        return (
            f"GroupDifference(metric={self.metric!r}, difference={self.difference:.4g}, "
            f"low={self.low:.4g}, high={self.high:.4g}, "
            f"estimate_subgroup={self.estimate_subgroup:.4g}, "
            f"estimate_reference={self.estimate_reference:.4g}, method={self.method!r})"
        )
