"""Intervals for differences of a metric between subgroups (fairness, sites, cohorts).

A subgroup is a set of texts (a site, a gender, a language), and the question is how
much a classifier's metric differs between subgroups: the difference of each subgroup's
metric from a reference subgroup's, with an interval. The subgroups are disjoint samples,
so the two metrics of a difference are independent (on nested texts: the persons are
nested in the subgroups), and the variance of a difference is the sum of two variances.
Three intervals of ``metric(subgroup) - metric(reference)``:

- Newcombe's hybrid score interval (Newcombe 1998, method 10) for a proportion metric on
  independent texts: the Wilson interval of each proportion, combined by square-and-add;
- the cluster-robust (linearization) interval: each subgroup's variance is that of a
  ratio estimator with its persons as clusters (each text a cluster without persons),
  with a t quantile on the smaller effective number of persons - 1 degrees of freedom;
- the bootstrap: each subgroup resampled on its own (texts, or persons for nested texts),
  and the interval the percentile interval of the replicate differences.

With more than two subgroups every difference shares the reference, so the differences
are correlated; a simultaneous band (Bonferroni, or the max-t critical value of
Dunnett's many-to-one comparisons) covers all of them at once at the stated level.

:func:`compare_groups` takes labels and returns a table; :func:`compare_groups_counts`
is the same computation on counts, batched over data sets, for one difference.
:func:`perfci.policy.recommended_group_difference` says which interval
``method="recommended"`` is.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import integrate, optimize, special, stats

from . import policy
from ._core import registry
from ._core.intervals import percentile_levels, type7_quantiles
from ._core.labels import as_label_array, listing, plain, same_label, sorted_labels
from ._core.resampling import Statistic, augment, draw_replicates
from ._core.results import ResultMixin, sources_of
from ._core.validation import (
    UndefinedMetricWarning,
    check_confidence_level,
    check_label,
    check_positive_int,
    check_real_array,
    check_rng,
    dataset_generators,
)
from .analytic import proportion_ci
from .bootstrap import MIN_PERSONS, RATER_SYMMETRIC, canonical_cells, check_resample_size
from .counting import factorize_sorted, normalize_labels
from .design import effective_clusters
from .metrics import (
    PROPORTION_METRICS,
    RELEVANT_TEXTS,
    difference_bound,
    metric_gradient,
    metric_values,
    undefined_reason,
)
from .policy import RECOMMENDED

__all__ = [
    "GROUP_METHODS",
    "SIMULTANEOUS_BANDS",
    "GroupDifference",
    "compare_groups",
    "compare_groups_counts",
    "max_t_critical_value",
    "newcombe_interval",
]

#: Interval methods of :func:`compare_groups` (:data:`perfci._core.registry.GROUP_METHOD`).
GROUP_METHODS: tuple[str, ...] = registry.GROUP_METHOD.names
#: Simultaneous bands of :func:`compare_groups` (:data:`perfci._core.registry.SIMULTANEOUS`).
SIMULTANEOUS_BANDS: tuple[str, ...] = registry.SIMULTANEOUS.names

#: The columns of :func:`compare_groups`' table (the simultaneous band's are added when
#: one is asked for).
COLUMNS = (
    "subgroup",
    "reference",
    "metric",
    "estimate",
    "estimate_reference",
    "difference",
    "low",
    "high",
    "relevant_n",
    "relevant_n_reference",
    "persons",
    "persons_reference",
    "method",
)

_N_RESAMPLES = policy.N_RESAMPLES
# Share of dropped (undefined) replicate differences above which a warning is raised.
_INVALID_WARN_SHARE = 0.10
# An influence that cancels to within rounding of the terms it is the sum of is zero, so
# that a person whose rate is the pooled rate has no influence (as in perfci.compare).
_ROUNDING = 64 * np.finfo(float).eps
# Gauss-Legendre nodes of each piece of the integral over the reference's standardized
# deviation in the max-t probability: at k = 1 the probability equals the normal and t
# distribution functions to about 1e-15 (tests/test_subgroups.py).
_NODES = np.polynomial.legendre.leggauss(48)
# Half-width, in standard deviations, of the integration range of that integral.
_RANGE = 9.0


# --------------------------------------------------------------------------- kernels


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
    low, high = _newcombe(a, b, c, d, level)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


_XN = ("x1", "n1", "x2", "n2")


def _wilson(x: np.ndarray, n: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson ends of validated counts, NaN where there are no trials."""
    some = n > 0
    ci = proportion_ci(
        np.where(some, x, 0.0), np.where(some, n, 1.0), method="wilson", confidence_level=level
    )
    return np.where(some, ci.low, np.nan), np.where(some, ci.high, np.nan)


def _newcombe(
    x1: np.ndarray, n1: np.ndarray, x2: np.ndarray, n2: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    l1, u1 = _wilson(x1, n1, level)
    l2, u2 = _wilson(x2, n2, level)
    with np.errstate(invalid="ignore", divide="ignore"):
        p1, p2 = x1 / n1, x2 / n2
    d = p1 - p2
    low = d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return np.asarray(low, dtype=float), np.asarray(high, dtype=float)


def _max_abs_probability(c: float, v: np.ndarray, v0: float) -> float:
    """P(max_j |X_j - X_0| / s_j <= c) for independent N(0, v_j) and N(0, v0).

    Given X_0 = sqrt(v0) z the differences are independent, so the probability is
    ``E_z[prod_j (Phi((c s_j + x)/sd_j) - Phi((x - c s_j)/sd_j))]``, a one-dimensional
    integral over z in [-9, 9]. The factor of difference j steps from 0 to 1 around
    z = +-c s_j / sqrt(v0) over a width sd_j / sqrt(v0), which is narrow when v_j is small
    beside v0 (and a jump when v_j = 0), so the range is cut at each step and at 8 widths
    either side of it, and each piece gets Gauss-Legendre nodes: every piece's integrand
    is smooth on the piece's scale.
    """
    s, sd = np.sqrt(v + v0), np.sqrt(v)
    if v0 == 0:  # the differences are independent: |T_j| = |X_j| / sd_j
        return float((2 * special.ndtr(c) - 1) ** v.size)
    r0 = math.sqrt(v0)
    centre, width = c * s / r0, sd / r0
    cuts = np.concatenate([centre, centre - 8 * width, centre + 8 * width])
    cuts = np.unique(np.clip(np.concatenate([cuts, -cuts, [-_RANGE, _RANGE]]), -_RANGE, _RANGE))
    a, b = cuts[:-1], cuts[1:]
    nodes, weights = _NODES
    z = (a + b) / 2 + (b - a) / 2 * nodes[:, None]  # (nodes, pieces)
    w = (b - a) / 2 * weights[:, None]
    x = r0 * z[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = special.ndtr((c * s + x) / sd) - special.ndtr((x - c * s) / sd)
    # a subgroup without variance: its difference is -X_0 itself, the factor |z| <= c
    inside = np.where(sd == 0, (np.abs(z)[..., None] <= centre).astype(float), inside)
    density = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    return float((inside.prod(-1) * density * w).sum())


def max_t_critical_value(
    variances: Any,
    reference_variance: float,
    confidence_level: float = 0.95,
    *,
    df: float | None = None,
) -> float:
    r"""Return the max-t critical value of k differences from one reference (Dunnett).

    Parameters
    ----------
    variances : array_like
        The variance of each subgroup's estimate, :math:`v_1, \dots, v_k` (k >= 1).
    reference_variance : float
        The variance of the reference's estimate, :math:`v_0`.
    confidence_level : float, default 0.95
        The simultaneous level.
    df : float, optional
        Degrees of freedom of a multivariate t (a common variance scale); None for the
        multivariate normal.

    Returns
    -------
    float
        The c with :math:`P(\max_j |T_j| \le c) = ` `confidence_level`.

    Raises
    ------
    ValueError
        For variances that are not real, finite and non-negative, no variances, a level
        outside (0, 1), `df` not a positive number, or every :math:`v_j + v_0 = 0`.

    Notes
    -----
    The difference :math:`\hat d_j = \hat\theta_j - \hat\theta_0` of independent
    estimates has variance :math:`v_j + v_0`, and two differences share
    :math:`\hat\theta_0`, so :math:`T_j = \hat d_j / \sqrt{v_j + v_0}` are standard normal
    with correlation

    .. math::

        \rho_{jl} = \frac{v_0}{\sqrt{(v_j + v_0)(v_l + v_0)}},

    the one-factor structure of Dunnett's many-to-one comparisons [1]_. Given the
    reference's deviation the differences are independent, so

    .. math::

        P(\max_j |T_j| \le c) = \int \phi(z) \prod_j \Big[
        \Phi\Big(\frac{c s_j + \sqrt{v_0} z}{\sqrt{v_j}}\Big) -
        \Phi\Big(\frac{\sqrt{v_0} z - c s_j}{\sqrt{v_j}}\Big)\Big]\, dz,
        \quad s_j = \sqrt{v_j + v_0},

    computed by Gauss-Legendre quadrature on [-9, 9], the range cut where a factor steps
    (around :math:`z = \pm c s_j / \sqrt{v_0}`, sharply when :math:`v_j` is small beside
    :math:`v_0`). With `df`,
    :math:`T_j = Z_j / S` with :math:`\nu S^2 \sim \chi^2_\nu` shared by all j (the
    multivariate t of that correlation), and the probability is the integral of the
    normal one at :math:`cS` over the law of :math:`S` (adaptive quadrature). Both equal
    scipy's ``multivariate_normal.cdf`` and ``multivariate_t.cdf`` of that correlation
    matrix to their own quasi-Monte-Carlo error (about 1e-6), deterministically and fast
    (``tests/test_subgroups.py`` checks both and a brute-force simulation). c is the root
    of the probability minus the level between the single-difference quantile and the
    Bonferroni quantile (which bracket it for any correlation), by Brent's method.

    References
    ----------
    .. [1] Dunnett, C. W. (1955). A multiple comparison procedure for comparing several
       treatments with a control. Journal of the American Statistical Association
       50(272), 1096-1121.

    Examples
    --------
    Three subgroups compared with a reference of the same precision (correlation 1/2):

    >>> from perfci.subgroups import max_t_critical_value
    >>> print(f"{max_t_critical_value([1.0, 1.0, 1.0], 1.0):.4f}")
    2.3490
    >>> round(max_t_critical_value([1.0], 1.0, df=10), 4)  # one difference: the t quantile
    2.2281
    """
    v = check_real_array("variances", variances)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"`variances` must be a non-empty list of numbers; got {variances!r}.")
    v0 = float(check_real_array("reference_variance", reference_variance))
    if np.any(v < 0) or v0 < 0:
        raise ValueError("`variances` and `reference_variance` must be non-negative.")
    if np.any(v + v0 <= 0):
        raise ValueError(
            "`variances` plus `reference_variance` must be positive for every difference "
            "(a difference without variance has no t statistic)."
        )
    level = float(check_confidence_level(confidence_level, scalar=True))
    if df is not None:
        df = float(check_real_array("df", df))
        if df <= 0:
            raise ValueError(f"`df` must be a positive number or None; got {df!r}.")
    return _critical_value(v, v0, level, df)


def _critical_value(v: np.ndarray, v0: float, level: float, df: float | None) -> float:
    k = v.size
    alpha = 1 - level
    dist = stats.norm if df is None else stats.t(df)
    single, bonferroni = dist.ppf(1 - alpha / 2), dist.ppf(1 - alpha / (2 * k))
    if k == 1:
        return float(single)

    if df is None:

        def probability(c: float) -> float:
            return _max_abs_probability(c, v, v0)

    else:
        nu = float(df)
        chi = stats.chi(nu)
        root = math.sqrt(nu)

        def probability(c: float) -> float:
            def integrand(s: float) -> float:
                return _max_abs_probability(c * s, v, v0) * float(chi.pdf(s * root) * root)

            value, _ = integrate.quad(integrand, 0, np.inf, epsabs=1e-11, epsrel=1e-10, limit=200)
            return float(value)

    low_gap, high_gap = probability(single) - level, probability(bonferroni) - level
    if low_gap >= 0:  # perfectly correlated differences: the single quantile
        return float(single)
    if high_gap <= 0:
        return float(bonferroni)
    return float(optimize.brentq(lambda c: probability(c) - level, single, bonferroni, xtol=1e-9))


@dataclass(frozen=True)
class _Sides:
    """Per-data-set summaries of one side of differences (arrays of shape (K,))."""

    estimate: np.ndarray
    relevant_n: np.ndarray
    persons: np.ndarray | None
    variance: np.ndarray  # cluster-robust variance of the estimate
    clusters: np.ndarray  # the effective number of clusters G* (texts without persons)
    successes: np.ndarray | None
    trials: np.ndarray | None

    def take(self, index: Any) -> _Sides:
        def pick(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[index]

        return _Sides(
            self.estimate[index],
            self.relevant_n[index],
            pick(self.persons),
            self.variance[index],
            self.clusters[index],
            pick(self.successes),
            pick(self.trials),
        )


def _sides(cells: np.ndarray, metric: str, nested: bool) -> _Sides:
    """Estimates and cluster-robust variances of counts (K, 4) or per person (K, m, 4)."""
    total = cells.sum(-2) if nested else cells
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = metric_values(total, metric)
        grad = metric_gradient(total, metric)  # (K, 4)
    relevant = cells[..., list(RELEVANT_TEXTS[metric][0])].sum(-1)  # (K,) or (K, m)
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
    return _Sides(
        estimate=np.where(relevant_n > 0, estimate, np.nan),
        relevant_n=relevant_n.astype(np.int64),
        persons=None if persons is None else persons.astype(np.int64),
        variance=variance,
        clusters=clusters,
        successes=successes,
        trials=trials,
    )


def _replicates(
    cells: np.ndarray,
    metric: str,
    scheme: str,
    n_resamples: int,
    generator: np.random.Generator,
) -> np.ndarray:
    """Pseudo-count bootstrap replicates of one side's metric (NaN where undefined).

    `cells` is ``(4,)`` or, per person, ``(m, 4)``; the iid scheme adds persons up.
    """
    statistic = Statistic(metric, 4, lambda c: metric_values(c, metric))
    nested = cells.ndim == 2
    # canonical as in perfci.bootstrap_ci, so that each side draws what it would draw there
    symmetric = metric in RATER_SYMMETRIC
    units = canonical_cells(cells, scheme, nested=nested, rater_symmetric=symmetric)
    if units.sum() == 0 or (scheme != "iid" and units.shape[0] < MIN_PERSONS):
        return np.full(n_resamples, np.nan)
    augmented = augment(units, scheme, policy.PSEUDO_COUNT)
    with np.errstate(invalid="ignore", divide="ignore"):
        return draw_replicates(augmented, scheme, n_resamples, statistic, generator)


def _interval_at(
    method: str,
    side: _Sides,
    reference: _Sides,
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
        return _newcombe(side.successes, side.trials, reference.successes, reference.trials, level)
    if method == "cluster_robust":
        se, df = _robust_se(side, reference)
        with np.errstate(invalid="ignore"):
            q = stats.t.ppf(0.5 + level / 2, np.where(np.isfinite(df), df, 1.0))
        d = side.estimate - reference.estimate
        half = np.where(se > 0, q * se, np.nan)
        return np.maximum(d - half, -bound), np.minimum(d + half, bound)
    assert differences is not None
    ends = type7_quantiles(differences, percentile_levels(level, differences.shape[0]))
    return ends[:, 0], ends[:, 1]


def _robust_se(side: _Sides, reference: _Sides) -> tuple[np.ndarray, np.ndarray]:
    """Return each difference's standard error and df: the smaller G* - 1, at least 1."""
    se = np.sqrt(side.variance + reference.variance)
    df = np.maximum(np.minimum(side.clusters, reference.clusters) - 1, 1.0)
    return se, np.where(np.isfinite(se), df, np.nan)


def _label(method: str, nested: bool, scheme: str | None) -> str:
    if method == "newcombe":
        return "Newcombe hybrid score interval (independent texts)"
    if method == "cluster_robust":
        if nested:
            return "cluster-robust linearization (persons as clusters, t with min G* - 1 df)"
        return "cluster-robust linearization (each text a cluster, t with min n - 1 df)"
    return (
        f"independent bootstrap of each subgroup (scheme={scheme}, interval=percentile, "
        f"pseudo_count={policy.PSEUDO_COUNT})"
    )


def _choose(metric: str, method: str, nested: bool, n_resamples: int) -> str:
    chosen = (
        policy.recommended_group_difference(metric, nested) if method == RECOMMENDED else method
    )
    how = f"{chosen!r} (the recommended method)" if method == RECOMMENDED else repr(chosen)
    if chosen == "newcombe":
        if metric not in PROPORTION_METRICS:
            raise ValueError(
                f"`method` 'newcombe' is an interval for a difference of proportions "
                f"({', '.join(PROPORTION_METRICS)}); {metric} is not one. Use "
                "method='bootstrap', 'cluster_robust' or 'recommended'."
            )
        if nested:
            raise ValueError(
                "`method` 'newcombe' treats the texts as independent; with `groups` (texts "
                "nested in persons) use method='cluster_robust', 'bootstrap' or 'recommended'."
            )
    if chosen != "bootstrap" and n_resamples != _N_RESAMPLES:
        raise ValueError(
            f"`n_resamples` is an option of the bootstrap, but this comparison uses {how}; "
            "leave `n_resamples` unset or pass method='bootstrap'."
        )
    return chosen


def _scheme(relevant_n: np.ndarray, persons: np.ndarray | None) -> str:
    if persons is None:
        return "iid"
    per_person = float(relevant_n.sum()) / max(1, int(persons.sum()))
    return policy.recommended_scheme(max(1.0, per_person))


def _common_iv(
    metric: Any,
    method: Any,
    confidence_level: Any,
    n_resamples: Any,
    rng: Any,
) -> tuple[float, int, np.random.Generator]:
    registry.BINARY_METRIC.check(metric)
    registry.GROUP_METHOD.check(method)
    level = float(check_confidence_level(confidence_level, scalar=True))
    n_resamples = check_positive_int("n_resamples", n_resamples)
    check_resample_size(n_resamples)
    return level, n_resamples, check_rng(rng)


def _warn(message: str, stacklevel: int = 3) -> None:
    """Warn the caller of the public function (`stacklevel` counts from here)."""
    warnings.warn(message, UndefinedMetricWarning, stacklevel=stacklevel)


# ----------------------------------------------------------- one difference, on counts


@dataclass(frozen=True, repr=False)
class GroupDifference(ResultMixin):
    r"""The difference of a metric between a subgroup and a reference subgroup.

    Numeric fields are scalars for a single data set and arrays of the batch's shape for
    a batch (see :func:`compare_groups_counts`).

    Attributes
    ----------
    metric : str
        The metric.
    estimate, estimate_reference : float
        The metric of the subgroup and of the reference (on their pooled counts).
    difference : float
        ``estimate - estimate_reference``.
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
    """

    _derived: ClassVar[tuple[str, ...]] = ("sources",)

    metric: str
    estimate: Any
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

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes.

        ``("texts", "persons")`` with persons, else ``("texts",)``.
        """
        return sources_of(persons=self.persons is not None)

    def __repr__(self) -> str:
        if np.ndim(self.low):
            return (
                f"GroupDifference(metric={self.metric!r}, data sets of shape "
                f"{np.shape(self.low)}, method={self.method!r})"
            )
        return (
            f"GroupDifference(metric={self.metric!r}, difference={self.difference:.4g}, "
            f"low={self.low:.4g}, high={self.high:.4g}, estimate={self.estimate:.4g}, "
            f"estimate_reference={self.estimate_reference:.4g}, method={self.method!r})"
        )


def _check_cells(name: str, value: Any, nested: bool) -> np.ndarray:
    cells = check_real_array(name, value)
    need = 2 if nested else 1
    if cells.ndim < need or cells.shape[-1] != 4:
        shape = "(*batch, persons, 4)" if nested else "(*batch, 4)"
        raise ValueError(
            f"`{name}` must hold [tp, fp, fn, tn] with shape {shape}; got {cells.shape}."
        )
    if np.any(cells < 0) or np.any(cells != np.round(cells)):
        raise ValueError(f"`{name}` must hold whole non-negative numbers of texts.")
    return cells


def compare_groups_counts(
    counts: Any,
    reference_counts: Any,
    metric: str,
    *,
    nested: bool = False,
    method: str = RECOMMENDED,
    confidence_level: float = 0.95,
    n_resamples: int = _N_RESAMPLES,
    rng: Any = None,
) -> GroupDifference:
    r"""Compare a metric between two subgroups, from their counts.

    What :func:`compare_groups` computes for one subgroup and the reference after the
    labels are counted, batched over data sets.

    Parameters
    ----------
    counts, reference_counts : array_like of int
        Confusion-matrix cells ``[tp, fp, fn, tn]`` of the subgroup and of the reference:
        shape ``(*batch, 4)``, or with ``nested=True`` ``(*batch, persons, 4)`` per person
        (the two may have different numbers of persons; persons with no text are not
        persons, so a ragged batch can be padded with them). The batch shapes must agree.
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`).
    nested : bool, default False
        Whether the second-to-last axis is persons.
    method, confidence_level, n_resamples
        As in :func:`compare_groups`.
    rng : numpy.random.Generator, int or None
        Random generator or seed of the bootstrap. Data set k of a batch of K uses
        ``np.random.default_rng(rng).spawn(K)[k]`` (a single data set the generator
        itself), which spawns two streams: the subgroup's, then the reference's.

    Returns
    -------
    GroupDifference
        Fields of the batch's shape.

    Raises
    ------
    ValueError
        For counts that are not whole non-negative numbers with four cells last, batch
        shapes that differ, and as :func:`compare_groups`.

    Warns
    -----
    UndefinedMetricWarning
        Once per kind, naming how many data sets: a side with no relevant texts (or an
        undefined metric), fewer than 2 persons with a relevant text, a cluster-robust
        standard error of 0, or many undefined bootstrap differences; those intervals are
        NaN.

    Examples
    --------
    >>> from perfci.subgroups import compare_groups_counts
    >>> result = compare_groups_counts([40, 5, 10, 45], [60, 4, 5, 31], "recall")
    >>> print(f"{result.difference:.3f} [{result.low:.3f}, {result.high:.3f}]")
    -0.123 [-0.261, 0.003]
    """
    level, n_resamples, root = _common_iv(metric, method, confidence_level, n_resamples, rng)
    if not isinstance(nested, bool):
        raise ValueError(f"`nested` must be True or False; got {nested!r}.")
    cells = _check_cells("counts", counts, nested)
    ref = _check_cells("reference_counts", reference_counts, nested)
    cut = -2 if nested else -1
    batch_shape = cells.shape[:cut]
    if ref.shape[:cut] != batch_shape:
        raise ValueError(
            f"`reference_counts` must have the batch shape of `counts` ({batch_shape}); got "
            f"{ref.shape[:cut]}."
        )
    chosen = _choose(metric, method, nested, n_resamples)
    sets = math.prod(batch_shape)
    flat = cells.reshape(sets, *cells.shape[cut:])
    flat_ref = ref.reshape(sets, *ref.shape[cut:])
    side, reference = _sides(flat, metric, nested), _sides(flat_ref, metric, nested)
    single = not batch_shape
    scheme = None
    differences = None
    if chosen == "bootstrap":
        scheme = _scheme(
            np.concatenate([side.relevant_n, reference.relevant_n]),
            None
            if side.persons is None or reference.persons is None
            else np.concatenate([side.persons, reference.persons]),
        )
        differences = np.empty((sets, n_resamples))
        for k, generator in enumerate(dataset_generators(root, sets, not single)):
            mine, theirs = generator.spawn(2)
            differences[k] = _replicates(flat[k], metric, scheme, n_resamples, mine) - _replicates(
                flat_ref[k], metric, scheme, n_resamples, theirs
            )
    problems = _problems(side, reference, nested, metric, chosen)
    bad = np.array([bool(p) for p in problems], dtype=bool)
    low, high = _interval_at(
        chosen, side, reference, differences, level, bound=difference_bound(metric)
    )
    low, high = np.where(bad, np.nan, low), np.where(bad, np.nan, high)
    se, df = _robust_se(side, reference)
    n_invalid = np.zeros(sets, dtype=np.int64)
    if differences is not None:
        n_invalid = np.sum(np.isnan(differences), -1)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            se = np.nanstd(differences, -1, ddof=1)
        df = np.full(sets, np.nan)
    elif chosen == "newcombe":
        df = np.full(sets, np.nan)
    _warn_about(problems, chosen, se, n_invalid, n_resamples, bad, metric, single)

    def shaped(values: Any, kind: type = float) -> Any:
        values = np.asarray(values)
        return kind(values.reshape(-1)[0]) if single else values.reshape(batch_shape)

    return GroupDifference(
        metric=metric,
        estimate=shaped(side.estimate),
        estimate_reference=shaped(reference.estimate),
        difference=shaped(side.estimate - reference.estimate),
        low=shaped(low),
        high=shaped(high),
        confidence_level=level,
        method=_label(chosen, nested, scheme),
        standard_error=shaped(np.where(bad, np.nan, se)),
        df=shaped(np.where(bad, np.nan, df)),
        relevant_n=shaped(side.relevant_n, int),
        relevant_n_reference=shaped(reference.relevant_n, int),
        persons=None if side.persons is None else shaped(side.persons, int),
        persons_reference=None if reference.persons is None else shaped(reference.persons, int),
        n_invalid_resamples=shaped(n_invalid, int),
    )


def _problems(side: _Sides, reference: _Sides, nested: bool, metric: str, method: str) -> list[str]:
    """Why each difference (row) is undefined, or "" where it is defined."""
    out = []
    for k in range(side.estimate.size):
        why = []
        for name, s in (("subgroup", side), ("reference", reference)):
            if s.relevant_n[k] == 0:
                why.append(f"the {name} has no relevant texts ({RELEVANT_TEXTS[metric][1]})")
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


def _warn_about(
    problems: list[str],
    chosen: str,
    se: np.ndarray,
    n_invalid: np.ndarray,
    n_resamples: int,
    bad: np.ndarray,
    metric: str,
    single: bool,
) -> None:
    sets = len(problems)
    if bad.any():
        what = problems[0] if single else f"{int(bad.sum())} of {sets} data sets"
        _warn(f"the {metric} difference is undefined ({what}); returning NaN.", 4)
    if chosen == "cluster_robust":
        zero = (se == 0) & ~bad
        if zero.any():
            what = "" if single else f" for {int(zero.sum())} of {sets} data sets"
            _warn(
                f"the cluster-robust interval of the {metric} difference is undefined{what}: "
                "its standard error is zero (both subgroups without variation), and a "
                "zero-width interval would claim certainty the data do not give; returning NaN.",
                4,
            )
    if chosen == "bootstrap":
        many = (n_invalid > _INVALID_WARN_SHARE * n_resamples) & ~bad
        if many.any():
            what = (
                f"{int(n_invalid[0])} of {n_resamples} resamples"
                if single
                else f"more than {100 * _INVALID_WARN_SHARE:.0f}% of the resamples of "
                f"{int(many.sum())} of {sets} data sets"
            )
            _warn(f"the {metric} difference was undefined in {what}; they were dropped.", 4)


# --------------------------------------------------------------- every subgroup, labels


def _compare_groups_iv(
    metric: Any,
    method: Any,
    simultaneous: Any,
    reference: Any,
    positive: Any,
    confidence_level: Any,
    n_resamples: Any,
    rng: Any,
) -> tuple[float, int, np.random.Generator]:
    """Check the options of :func:`compare_groups` (the labels are checked where read)."""
    level, n_resamples, root = _common_iv(metric, method, confidence_level, n_resamples, rng)
    registry.SIMULTANEOUS.check(simultaneous)
    check_label("reference", reference)
    check_label("positive", positive)
    return level, n_resamples, root


def _levels(b: np.ndarray, reference: Any) -> tuple[list[Any], Any]:
    """Return the subgroups in sorted order and the reference (first, unless given)."""
    levels = sorted_labels(pd.unique(b))
    if len(levels) < 2:
        raise ValueError(f"`by` must hold at least 2 subgroups to compare; got one, {levels[0]!r}.")
    if reference is None:
        return levels, levels[0]
    found = [v for v in levels if same_label(v, reference)]
    if not found:
        raise ValueError(f"`reference` {reference!r} is not one of the subgroups {levels!r}.")
    return levels, found[0]


def _check_nesting(person: np.ndarray, b: np.ndarray) -> None:
    spans = pd.DataFrame({"person": person, "by": b}).groupby("person", sort=True)["by"]
    counts = spans.nunique()
    crossed = counts[counts > 1]
    if len(crossed):
        first = crossed.index[0]
        seen = listing(sorted_labels(pd.unique(b[person == first])))
        raise ValueError(
            f"`groups` must nest persons in the subgroups of `by`, a person in one subgroup; "
            f"person {plain(first)!r} has texts in subgroups {seen} ({len(crossed)} of "
            f"{len(counts)} persons span subgroups). Compare without `groups`, or by a "
            "subgroup of persons."
        )


def _tables(
    t: np.ndarray,
    p: np.ndarray,
    b: np.ndarray,
    person: np.ndarray | None,
    positive: Any,
    levels: list[Any],
) -> np.ndarray:
    """Cells per subgroup ``(L, 4)``, or per subgroup and person ``(L, persons, 4)``."""
    pos_t, pos_p = t == positive, p == positive
    cell = np.where(pos_t, np.where(pos_p, 0, 2), np.where(pos_p, 1, 3))
    level_index = np.empty(b.size, dtype=np.int64)
    for i, value in enumerate(levels):
        level_index[b == value] = i
    size = len(levels)
    if person is None:
        return np.bincount(level_index * 4 + cell, minlength=size * 4).reshape(size, 4)
    _, pid = factorize_sorted(person)
    # persons are nested in subgroups: number them within their subgroup
    within = np.zeros(b.size, dtype=np.int64)
    width = 1
    for i in range(size):
        mask = level_index == i
        _, local = factorize_sorted(pid[mask])
        within[mask] = local
        width = max(width, int(local.max()) + 1 if local.size else 1)
    flat = (level_index * width + within) * 4 + cell
    return np.bincount(flat, minlength=size * width * 4).reshape(size, width, 4)


def _compare_groups(
    t: np.ndarray,
    p: np.ndarray,
    b: np.ndarray,
    person: np.ndarray | None,
    positive: Any,
    metric: str,
    *,
    reference: Any,
    method: str,
    simultaneous: str | None,
    level: float,
    n_resamples: int,
    root: np.random.Generator,
) -> tuple[pd.DataFrame, list[str]]:
    """Return the table of :func:`compare_groups` on checked labels, and a note per row.

    A row's note says why it is NaN, or what its interval rests on ("" where nothing
    needs saying); :func:`compare_groups` warns with them, :func:`perfci.report` puts them
    in its notes.
    """
    levels, ref_level = _levels(b, reference)
    nested = person is not None
    if nested:
        assert person is not None
        _check_nesting(person, b)
    chosen = _choose(metric, method, nested, n_resamples)
    cells = _tables(t, p, b, person, positive, levels).astype(float)
    sides = _sides(cells, metric, nested)
    r = levels.index(ref_level)
    others = [i for i in range(len(levels)) if i != r]
    side, reference_side = sides.take(others), sides.take([r] * len(others))

    scheme = None
    differences = None
    if chosen == "bootstrap":
        scheme = _scheme(sides.relevant_n, sides.persons)
        generators = root.spawn(len(levels))
        replicates = np.stack(
            [
                _replicates(cells[i], metric, scheme, n_resamples, generators[i])
                for i in range(len(levels))
            ]
        )
        differences = replicates[others] - replicates[r]

    problems = _problems(side, reference_side, nested, metric, chosen)
    bad = np.array([bool(why) for why in problems], dtype=bool)
    low, high = _interval_at(
        chosen, side, reference_side, differences, level, bound=difference_bound(metric)
    )
    low, high = np.where(bad, np.nan, low), np.where(bad, np.nan, high)
    se, df = _robust_se(side, reference_side)
    # what each row's number rests on, or why it is NaN: the warnings (and report's notes)
    row_notes = list(problems)
    if chosen == "cluster_robust":
        zero = (se == 0) & ~bad
        for i in np.flatnonzero(zero):
            row_notes[i] = (
                "its cluster-robust standard error is zero (neither subgroup varies), and a "
                "zero-width interval would claim certainty the data do not give"
            )
        low, high = np.where(zero, np.nan, low), np.where(zero, np.nan, high)
        bad = bad | zero
        for i in np.flatnonzero(((side.variance == 0) ^ (reference_side.variance == 0)) & ~bad):
            still = levels[others[i]] if side.variance[i] == 0 else ref_level
            other = ref_level if side.variance[i] == 0 else levels[others[i]]
            row_notes[i] = (
                f"the cluster-robust variance of {still!r} is zero (an estimate of 0 or 1, or "
                f"every person alike): the interval rests on {other!r}'s variance alone"
            )
    if differences is not None:
        n_invalid = np.sum(np.isnan(differences), -1)
        for i in np.flatnonzero((n_invalid > _INVALID_WARN_SHARE * n_resamples) & ~bad):
            row_notes[i] = (
                f"the difference was undefined in {int(n_invalid[i])} of {n_resamples} "
                "resamples; they were dropped"
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            replicate_variance = np.nanvar(replicates, -1, ddof=1)

    table = pd.DataFrame(
        {
            "subgroup": pd.Series([levels[i] for i in others], dtype=object),
            "reference": pd.Series([ref_level] * len(others), dtype=object),
            "metric": metric,
            "estimate": side.estimate,
            "estimate_reference": reference_side.estimate,
            "difference": side.estimate - reference_side.estimate,
            "low": low,
            "high": high,
            "relevant_n": side.relevant_n,
            "relevant_n_reference": reference_side.relevant_n,
            "persons": pd.array(
                [pd.NA] * len(others) if side.persons is None else side.persons, dtype="Int64"
            ),
            "persons_reference": pd.array(
                [pd.NA] * len(others) if reference_side.persons is None else reference_side.persons,
                dtype="Int64",
            ),
            "method": _label(chosen, nested, scheme),
        }
    )
    attrs: dict[str, Any] = {
        "confidence_level": level,
        "simultaneous": simultaneous,
        "comparisons": int((~bad).sum()),
    }
    if simultaneous is not None:
        band_low = np.full(len(others), np.nan)
        band_high = np.full(len(others), np.nan)
        good = ~bad
        if chosen == "cluster_robust":
            good &= se > 0
        k = int(good.sum())
        if k:
            idx = np.flatnonzero(good)
            sub, refs = side.take(idx), reference_side.take(idx)
            diffs = None if differences is None else differences[idx]
            if simultaneous == "bonferroni":
                each = 1 - (1 - level) / k
                lo, hi = _interval_at(
                    chosen, sub, refs, diffs, each, bound=difference_bound(metric)
                )
                attrs["simultaneous_level"] = each
            else:
                # the max-t critical value of the multivariate normal with the correlation
                # the shared reference implies, as a level for each interval (each with its
                # own df): never wider than Bonferroni's, and within 1.5% of the
                # multivariate t's at 10 df (docs/subgroups.md)
                if chosen == "cluster_robust":
                    variances = sides.variance
                elif chosen == "newcombe":
                    assert sides.successes is not None and sides.trials is not None
                    wl, wh = _wilson(sides.successes, sides.trials, level)
                    z = stats.norm.ppf(0.5 + level / 2)
                    variances = ((wh - wl) / (2 * z)) ** 2
                else:
                    variances = replicate_variance
                v = variances[[others[i] for i in idx]]
                v0 = float(variances[r])
                if np.any(v + v0 <= 0) or not np.all(np.isfinite(v)) or not math.isfinite(v0):
                    c = float(stats.norm.ppf(1 - (1 - level) / (2 * k)))  # Bonferroni
                else:
                    c = _critical_value(v, v0, level, None)
                each = float(2 * stats.norm.cdf(c) - 1)
                lo, hi = _interval_at(
                    chosen, sub, refs, diffs, each, bound=difference_bound(metric)
                )
                attrs["critical_value"] = c
                attrs["simultaneous_level"] = each
            band_low[idx], band_high[idx] = lo, hi
        table["low_simultaneous"] = band_low
        table["high_simultaneous"] = band_high
    table.attrs.update(attrs)
    return table, row_notes


def compare_groups(
    y_true: Any,
    y_pred: Any,
    metric: str,
    by: Any,
    *,
    groups: Any = None,
    reference: Any = None,
    confidence_level: float = 0.95,
    method: str = RECOMMENDED,
    simultaneous: str | None = None,
    positive: Any = None,
    n_resamples: int = _N_RESAMPLES,
    rng: Any = None,
) -> pd.DataFrame:
    r"""Differences of a metric between subgroups, each with its confidence interval.

    Parameters
    ----------
    y_true, y_pred : array_like
        Reference (human) and classifier labels, one per text.
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`).
    by : array_like
        The subgroup of each text (a site, a gender, a language): at least two subgroups.
    groups : array_like, optional
        Person ids, one per text: the texts are nested in persons, and the persons in
        the subgroups (each person's texts all in one subgroup).
    reference : object, optional
        The subgroup the others are compared with; default the first in sorted order.
    confidence_level : float, default 0.95
        Confidence level of each interval (and of the simultaneous band).
    method : {"recommended", "newcombe", "cluster_robust", "bootstrap"}, default "recommended"
        The interval: Newcombe's hybrid score interval (proportion metrics on independent
        texts), the cluster-robust (linearization) interval, or the difference of two
        independent bootstraps. ``"recommended"`` is
        :func:`perfci.policy.recommended_group_difference`: Newcombe's for accuracy,
        recall, precision, specificity and npv on independent texts, the bootstrap for
        the other metrics, and the cluster-robust interval with `groups`.
    simultaneous : {"bonferroni", "max_t", None}, default None
        A band that covers every difference at once at `confidence_level`, in the columns
        ``low_simultaneous`` and ``high_simultaneous``: each interval at level
        :math:`1 - (1 - c)/k` (Bonferroni), or at the max-t critical value of the k
        correlated differences (see the Notes). With two subgroups (k = 1) the max-t band
        is the interval itself.
    positive : object, optional
        The positive label; default 1 for a binary code (0/1, False/True or their
        strings). For multi-class labels, the class whose one-vs-rest metric is compared.
    n_resamples : int, default 2000
        Resamples of each subgroup's bootstrap (``method="bootstrap"`` only).
    rng : numpy.random.Generator, int or None
        Random generator or seed of the bootstrap: the subgroups in sorted order, the
        i-th uses ``np.random.default_rng(rng).spawn(L)[i]`` of L subgroups. The other
        methods draw nothing.

    Returns
    -------
    pandas.DataFrame
        One row per subgroup other than the reference, in sorted order, with columns
        ``subgroup``, ``reference``, ``metric``, ``estimate`` (the subgroup's),
        ``estimate_reference``, ``difference`` (subgroup minus reference), ``low``,
        ``high``, ``relevant_n``, ``relevant_n_reference``, ``persons``,
        ``persons_reference`` (persons with a relevant text; missing without `groups`)
        and ``method``; with `simultaneous`, also ``low_simultaneous`` and
        ``high_simultaneous``. ``DataFrame.attrs`` holds ``confidence_level``,
        ``simultaneous``, ``comparisons`` (the k defined differences) and, with a band,
        ``simultaneous_level`` (the level of each interval of the band) and, for max-t,
        ``critical_value`` (on the normal scale).

    Raises
    ------
    ValueError
        For unknown names; labels of different lengths; a `positive` that is not one
        label; a level, number of resamples or `rng` of the wrong type or range; `by`
        with fewer than 2 subgroups; a `reference` that is not one of them; with
        `groups`, a person with texts in two subgroups; ``method="newcombe"`` for a
        metric that is not a proportion, or with `groups`; `n_resamples` other than
        its default when the chosen method is not the bootstrap.

    Warns
    -----
    UndefinedMetricWarning
        Naming the subgroups whose row is NaN: no relevant texts or an undefined metric
        in the subgroup or the reference; with `groups`, fewer than 2 persons with a
        relevant text; a cluster-robust standard error of 0. Also when a subgroup's
        cluster-robust variance is 0 (the interval then rests on the other's alone), or
        more than 10% of a bootstrap's differences are undefined (they are dropped).

    Notes
    -----
    Subgroup g has pooled counts :math:`C_g` and estimate :math:`\hat\theta_g =
    f(C_g)`; the difference is :math:`\hat d_g = \hat\theta_g - \hat\theta_0` for the
    reference 0. The subgroups hold different texts (and, nested, different persons), so
    :math:`\hat\theta_g` and :math:`\hat\theta_0` are independent.

    *Newcombe's hybrid score interval* [1]_ (proportion metrics, independent texts):
    :func:`newcombe_interval` of the two proportions' successes and relevant n.

    *Cluster-robust interval*: each subgroup's linearization variance, with person i's
    influence :math:`u_i = \nabla f(C_g) \cdot c_i` (:func:`perfci.metrics.metric_gradient`)
    and :math:`m_g` the persons with a relevant text,

    .. math::

        v_g = \frac{m_g}{m_g - 1} \sum_{i \in g} u_i^2, \qquad
        \hat d_g \pm t_{\nu_g, (1+c)/2} \sqrt{v_g + v_0}, \qquad
        \nu_g = \min(G^*_g, G^*_0) - 1,

    with :math:`G^*_g = (\sum_i w_i)^2 / \sum_i w_i^2` the effective number of persons
    (:math:`w_i` their relevant texts; :math:`m_g` when every person has as many), at
    least 1. Without `groups` each relevant text is a cluster. The df are the smaller
    subgroup's: in a simulation of two subgroups (3 to 40 persons each, 10 texts a
    person or a size CV of 1, ICC 0.05 or 0.2; ``validation/subgroup_df.py``) the
    Welch-Satterthwaite df on the two variances (:math:`m_g - 1` each) covered only
    0.80-0.92 when one subgroup had 3-5 persons and the other 20-40, the smaller
    :math:`m_g - 1` 0.89-0.93 with unequal sizes and 5 or 10 persons beside 40, and the
    smaller :math:`G^*_g - 1` at least 0.934 in every design (``docs/subgroups.md`` has
    the table; it is conservative, up to 0.996, when the smaller subgroup is also the
    less variable one).

    *Bootstrap*: each subgroup's counts are resampled on their own, with the pseudo
    count :data:`perfci.policy.PSEUDO_COUNT` (texts for independent texts; persons, then
    texts within them, with `groups`: :func:`perfci.policy.recommended_scheme`), and the
    interval is the percentile interval of the replicate differences
    :math:`\hat\theta^*_g - \hat\theta^*_0` (the reference's replicates are shared by
    every row, as its estimate is); replicates where either metric is undefined are
    dropped.

    *Simultaneous bands*. The k differences share :math:`\hat\theta_0`, so
    :math:`\mathrm{corr}(\hat d_g, \hat d_h) = v_0 / \sqrt{(v_g + v_0)(v_h + v_0)}`.
    Bonferroni's band puts each interval at level :math:`1 - (1-c)/k`, whatever the
    correlation. The max-t band uses the c with :math:`P(\max_g |T_g| \le c)` equal to the
    level for :math:`T` multivariate normal with that correlation
    (:func:`max_t_critical_value`, Dunnett's many-to-one comparison [2]_, computed by
    quadrature, not simulated), and puts each interval, by its own method, at the level
    :math:`2\Phi(c) - 1`: the cluster-robust interval with its own :math:`\nu_g` (with
    equal df this is slightly wider than the multivariate t's band, by 1.5% at 10 df and
    4% at 5), Newcombe's with its Wilson intervals, the bootstrap's percentile. The
    variances are the cluster-robust ones, the Wilson intervals' :math:`((u - l)/2z)^2`, or
    the bootstrap replicates'. The max-t band is never wider than Bonferroni's, and both
    are wider than the intervals one at a time.

    *Degenerate cases*: a subgroup (or the reference) with no relevant texts, an
    undefined metric, or (nested) fewer than 2 persons with a relevant text gets a NaN
    row with a warning, and does not count in k; a single subgroup is an error.

    References
    ----------
    .. [1] Newcombe, R. G. (1998). Interval estimation for the difference between
       independent proportions: comparison of eleven methods. Statistics in Medicine
       17(8), 873-890.
    .. [2] Dunnett, C. W. (1955). A multiple comparison procedure for comparing several
       treatments with a control. Journal of the American Statistical Association
       50(272), 1096-1121.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> table = pc.compare_groups(texts["human"], texts["model"], "recall", texts["site"])
    >>> table[["subgroup", "reference", "estimate", "estimate_reference", "difference",
    ...        "low", "high"]].round(3)
       subgroup reference  estimate  estimate_reference  difference    low   high
    0  clinic_b  clinic_a     0.907                0.86       0.047 -0.037  0.126

    With the therapists, the cluster-robust interval, on 12.4 df: the 18 therapists of
    clinic_b (fewer than clinic_a's 21 with a reflection) hold different numbers of
    reflections, and count as 13.4 therapists of equal size:

    >>> nested = pc.compare_groups(texts["human"], texts["model"], "recall", texts["site"],
    ...                            groups=texts["person"])
    >>> nested[["difference", "low", "high", "persons", "persons_reference"]].round(3)
       difference    low   high  persons  persons_reference
    0       0.047 -0.052  0.147       18                 21
    """
    level, n_resamples, root = _compare_groups_iv(
        metric, method, simultaneous, reference, positive, confidence_level, n_resamples, rng
    )
    given = normalize_labels({"y_true": y_true, "y_pred": y_pred}, positive=positive)
    t, p = given.values["y_true"], given.values["y_pred"]
    positive = given.positive
    if positive is None:
        raise ValueError(
            f"`positive` must name the positive label among {given.classes.tolist()!r}."
        )
    if p.shape != t.shape:
        raise ValueError(f"`y_pred` must have one label per text ({t.size}); got {p.size}.")
    b = as_label_array("by", by)
    if b.shape != t.shape:
        raise ValueError(f"`by` must have one label per text ({t.size}); got {b.size}.")
    person = None
    if groups is not None:
        person = as_label_array("groups", groups)
        if person.shape != t.shape:
            raise ValueError(f"`groups` must have one id per text ({t.size}); got {person.size}.")
    table, row_notes = _compare_groups(
        t,
        p,
        b,
        person,
        positive,
        metric,
        reference=reference,
        method=method,
        simultaneous=simultaneous,
        level=level,
        n_resamples=n_resamples,
        root=root,
    )
    nan = table["low"].isna().to_numpy()
    for is_nan in (True, False):
        parts = [
            f"subgroup {row.subgroup!r} against {row.reference!r}: {note}"
            for row, note, row_nan in zip(table.itertuples(), row_notes, nan, strict=True)
            if note and row_nan == is_nan
        ]
        if parts:
            tail = f"; {'their rows are' if len(parts) > 1 else 'its row is'} NaN" if is_nan else ""
            what = "undefined for" if is_nan else "computed with a caveat for"
            _warn(f"the {metric} difference is {what} " + "; ".join(parts) + tail + ".")
    return table
