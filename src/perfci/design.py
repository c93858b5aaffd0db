"""Design adjustment for texts nested in persons: ICC, design effect, effective n, df.

All functions take per-person counts: ``successes`` y_i and ``trials`` n_i (the person's
relevant texts for the metric, e.g. their reference positives for recall), with the
persons on the last axis. Leading axes are batch axes, so many data sets can be adjusted
at once; a data set with fewer persons is padded with ``trials = 0``. Persons with no
relevant text (``trials = 0``) do not count anywhere: not in the ICC, not in the mean
or size-weighted cluster size, not in the number of clusters or the degrees of freedom.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np
from scipy import special

from ._core import registry
from ._core.recommended import (
    EDGE_ICC,
    EDGE_METHOD,
    NESTED_DESIGN,
    NESTED_DF_ADJUST,
    PROPORTION_METHOD,
    RECOMMENDED,
)
from ._core.results import IntervalResult
from ._core.validation import (
    UndefinedMetricWarning,
    check_confidence_level,
    check_real_array,
    warn_undefined,
)
from .analytic import ProportionCI, interval_bounds, proportion_ci

__all__ = [
    "DESIGNS",
    "DF_ADJUSTMENTS",
    "ClusteredProportionCI",
    "clustered_proportion_ci",
    "design_effect",
    "effective_clusters",
    "effective_sample_size",
    "icc",
]

#: Design adjustments of :func:`clustered_proportion_ci` (:data:`perfci._core.registry.DESIGN`).
DESIGNS: tuple[str, ...] = registry.DESIGN.names
#: Degrees-of-freedom adjustments (None for none; :data:`perfci._core.registry.DF_ADJUST`).
DF_ADJUSTMENTS: tuple[str, ...] = registry.DF_ADJUST.names


def _chosen(choices: registry.Choices, value: Any, recommended: Any) -> Any:
    """Return `value` if `choices` has it, the policy's `recommended` for "recommended".

    `method`, `design` and `df_adjust` of :func:`clustered_proportion_ci` and
    :func:`design_effect` accept the registry's names and ``"recommended"``, the choice
    of the policy's table (:mod:`perfci._core.recommended`) for nested texts.
    """
    if isinstance(value, str) and value == RECOMMENDED:
        return recommended
    if value not in choices:
        extra = f" or {RECOMMENDED!r}" + (" or None" if choices.allow_none else "")
        raise ValueError(registry.choice_message(choices.argument, choices.names, value, extra))
    return value


def _per_person_iv(successes: Any, trials: Any) -> tuple[np.ndarray, np.ndarray]:
    y = check_real_array("successes", successes)
    n = check_real_array("trials", trials)
    if y.ndim == 0 or n.ndim == 0:
        raise ValueError("`successes` and `trials` must be per-person arrays (persons last).")
    if y.shape != n.shape:
        raise ValueError(
            f"`successes` and `trials` must have the same shape; got {y.shape} and {n.shape}."
        )
    if np.any(n < 0) or np.any(y < 0):
        raise ValueError("`successes` and `trials` must be non-negative counts.")
    for name, values in (("successes", y), ("trials", n)):
        if np.any(values != np.round(values)):
            raise ValueError(f"`{name}` must be whole numbers (texts per person).")
    if np.any(y > n):
        raise ValueError("`successes` must not exceed `trials` for any person.")
    return y, n


def anova_icc(y: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One-way ANOVA ICC (truncated at 0) and a mask of where it is not estimable."""
    contributes = n > 0
    m = contributes.sum(-1)
    total_n = n.sum(-1)
    total_y = y.sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        y2_over_n = np.where(contributes, y * y / np.where(contributes, n, 1), 0).sum(-1)
        ssb = y2_over_n - total_y**2 / total_n  # sum_i n_i (p_i - p)^2
        ssw = total_y - y2_over_n  # sum_i sum_j (Y_ij - p_i)^2 for 0/1 outcomes
        msb = ssb / (m - 1)
        msw = ssw / (total_n - m)
        n0 = (total_n - (n * n).sum(-1) / total_n) / (m - 1)
        denominator = msb + (n0 - 1) * msw
        rho = (msb - msw) / denominator
    # Rounding can leave tiny negative sums of squares; they are zero. Without any text
    # there is no "no variation": the ICC of no persons is not estimable.
    no_variation = ((total_y == 0) | (total_y == total_n)) & (m > 0)
    rho = np.where(no_variation, 0.0, np.maximum(rho, 0.0))
    not_estimable = ~no_variation & ((m < 2) | (total_n <= m))
    return np.where(not_estimable, np.nan, rho), not_estimable


def icc(successes: Any, trials: Any) -> Any:
    r"""Intra-class correlation of binary outcomes nested in persons (one-way ANOVA).

    Parameters
    ----------
    successes : array_like
        Per-person successes y_i (persons on the last axis; leading axes are batch axes).
    trials : array_like
        Per-person relevant texts n_i, the same shape. Persons with ``n_i = 0`` are
        ignored.

    Returns
    -------
    float or numpy.ndarray
        The ANOVA estimate of the ICC, truncated at 0; one value per data set.

    Warns
    -----
    UndefinedMetricWarning
        Where the ICC is not estimable (fewer than two contributing persons, or every
        person with a single text while outcomes vary); NaN there.

    Notes
    -----
    With :math:`m` contributing persons, :math:`N = \sum n_i`, :math:`\hat p_i = y_i/n_i`
    and :math:`\hat p = \sum y_i / N`:

    .. math::

        MSB = \frac{\sum_i n_i(\hat p_i - \hat p)^2}{m - 1}, \quad
        MSW = \frac{\sum_i n_i \hat p_i (1 - \hat p_i)}{N - m}, \quad
        n_0 = \frac{N - \sum_i n_i^2 / N}{m - 1},

    .. math::

        \hat\rho = \max\left(0, \frac{MSB - MSW}{MSB + (n_0 - 1) MSW}\right).

    When every outcome is the same (all successes or all failures) there is no
    variation at all and :math:`\hat\rho = 0`.

    References
    ----------
    .. [1] Wu, S., Crespi, C. M. and Wong, W. K. (2012). Comparison of methods for
       estimating the intraclass correlation coefficient for binary responses in cancer
       prevention cluster randomized trials. Contemporary Clinical Trials 33(5).

    Examples
    --------
    >>> import perfci as pc
    >>> round(float(pc.icc([9, 5, 10, 2], [10, 10, 10, 10])), 4)
    0.4692
    >>> float(pc.icc([3, 5], [3, 5]))      # no variation at all
    0.0
    """
    y, n = _per_person_iv(successes, trials)
    rho, not_estimable = anova_icc(y, n)
    if not_estimable.any():
        warn_undefined(
            "icc",
            "it needs at least two persons with a relevant text and, when outcomes vary, "
            "at least one person with two or more texts",
            int(not_estimable.sum()),
            int(not_estimable.size),
        )
    return rho[()] if rho.ndim == 0 else rho


def t_ratio(df_adjust: str | None, level, n_texts, n_clusters) -> np.ndarray:
    """Factor multiplying n_eff for the degrees-of-freedom adjustment."""
    if df_adjust is None:
        return np.ones(np.broadcast(level, n_texts, n_clusters).shape)
    q = 0.5 + level / 2
    denominator = special.stdtrit(n_clusters - 1, q)  # Student's t quantile
    if df_adjust == "dean_pagano":
        numerator = special.ndtri(q)
    else:  # korn_graubard, as R's survey::svyciprop(method = "beta") computes it
        numerator = special.stdtrit(n_texts - 1, q)
    return (numerator / denominator) ** 2


def _effective_sample_size_iv(
    n_texts: Any,
    design_effect: Any,
    icc: Any,
    mean_cluster_size: Any,
    n_clusters: Any,
    df_adjust: Any,
    confidence_level: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    """N, the design effect, m (None without a df adjustment) and the level, broadcast."""
    registry.DF_ADJUST.check(df_adjust)
    n = check_real_array("n_texts", n_texts)
    if np.any(n <= 0):
        raise ValueError("`n_texts` must be positive.")
    level = check_confidence_level(confidence_level)
    given = {}
    for name, value in (("mean_cluster_size", mean_cluster_size), ("n_clusters", n_clusters)):
        if value is not None:
            given[name] = check_real_array(name, value)
    if "n_clusters" in given and np.any(given["n_clusters"] <= 0):
        raise ValueError("`n_clusters` must be positive (a number of persons).")
    if "mean_cluster_size" in given and np.any(given["mean_cluster_size"] < 1):
        raise ValueError("`mean_cluster_size` must be at least 1.")
    arrays = {"n_texts": n, "confidence_level": level, **given}
    if design_effect is None:
        if icc is None or not given:
            raise ValueError(
                "give `design_effect`, or `icc` with `mean_cluster_size` or `n_clusters`."
            )
        rho = check_real_array("icc", icc)
        if np.any((rho < 0) | (rho > 1)):
            raise ValueError("`icc` must lie in [0, 1].")
        arrays["icc"] = rho
    else:
        if icc is not None:
            raise ValueError("give `design_effect` or `icc`, not both.")
        deff = check_real_array("design_effect", design_effect)
        if np.any(deff <= 0):
            raise ValueError("`design_effect` must be positive.")
        arrays["design_effect"] = deff
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"`{k}` {a.shape}" for k, a in arrays.items())
        raise ValueError(f"the arguments must broadcast; got shapes {shapes}.") from None
    b = given.get("mean_cluster_size")
    m = given.get("n_clusters")
    if b is not None and m is not None:
        _check_cluster_sizes(n, b, m)
    if m is not None and np.any(n / m < 1):
        raise ValueError("`n_clusters` must not exceed `n_texts` (at least one text each).")
    if b is None and m is not None:
        b = n / m
    if m is None and b is not None:
        m = n / b
    if design_effect is None:  # `icc` came with `mean_cluster_size` or `n_clusters`
        deff = 1 + arrays["icc"] * (cast(np.ndarray, b) - 1)
    if df_adjust is not None:
        if m is None:
            raise ValueError("`n_clusters` or `mean_cluster_size` is needed for `df_adjust`.")
        if np.any(m < 2):
            raise ValueError("`df_adjust` needs at least 2 persons (df = m - 1); got fewer.")
    return (
        np.broadcast_to(n, shape),
        np.broadcast_to(deff, shape),
        None if m is None else np.broadcast_to(m, shape),
        level,
    )


def _check_cluster_sizes(n: np.ndarray, b: np.ndarray, m: np.ndarray) -> None:
    """Refuse a `mean_cluster_size` that is not `n_texts` / `n_clusters` (within rounding)."""
    n, b, m = np.broadcast_arrays(n, b, m)
    off = np.abs(b - n / m) > 0.5  # a mean rounded to a whole number of texts still fits
    if np.any(off):
        at = np.unravel_index(int(np.flatnonzero(off)[0]), off.shape)
        raise ValueError(
            f"`mean_cluster_size` {b[at]:g} does not fit `n_texts` {n[at]:g} in `n_clusters` "
            f"{m[at]:g} ({n[at] / m[at]:.4g} texts each): give one of the two, or n_texts = "
            "n_clusters x mean_cluster_size (within rounding)."
        )


def effective_sample_size(
    n_texts: Any,
    *,
    design_effect: Any = None,
    icc: Any = None,
    mean_cluster_size: Any = None,
    n_clusters: Any = None,
    df_adjust: str | None = "dean_pagano",
    confidence_level: Any = 0.95,
) -> Any:
    r"""Effective sample size of nested texts, with an optional degrees-of-freedom adjustment.

    Parameters
    ----------
    n_texts : array_like
        Number of relevant texts N.
    design_effect : array_like, optional
        The design effect. If omitted, it is :math:`1 + \rho(B - 1)` from `icc` and
        `mean_cluster_size`.
    icc : array_like, optional
        Intra-class correlation :math:`\rho`.
    mean_cluster_size : array_like, optional
        Mean relevant texts per person B. Default ``n_texts / n_clusters``; given with
        `n_clusters`, it must be ``n_texts / n_clusters`` within half a text.
    n_clusters : array_like, optional
        Number of persons m, at most `n_texts`; needed for a df adjustment (df = m - 1).
        Default ``n_texts / mean_cluster_size``.
    df_adjust : {"dean_pagano", "korn_graubard", None}, default "dean_pagano"
        ``dean_pagano``: :math:`n^*_{eff} = n_{eff}(z/t_{m-1})^2`;
        ``korn_graubard``: :math:`n^*_{eff} = n_{eff}(t_{N-1}/t_{m-1})^2`; None: no
        adjustment.
    confidence_level : array_like, default 0.95
        The level whose quantiles enter the df adjustment.

    Returns
    -------
    float or numpy.ndarray
        :math:`n^*_{eff}` (or :math:`n_{eff} = N / \mathrm{DEFF}` without a df adjustment).

    Examples
    --------
    The paper's figure 7: 400 texts, ICC 0.1, 10 texts per person (40 persons).

    >>> import perfci as pc
    >>> n_star = pc.effective_sample_size(400, icc=0.1, mean_cluster_size=10)
    >>> round(float(n_star), 2)
    197.67
    >>> ci = pc.proportion_ci(0.9 * n_star, n_star, method="agresti_coull")
    >>> round(float(ci.half_width), 3)
    0.043
    """
    n_texts, deff, n_clusters, level = _effective_sample_size_iv(
        n_texts, design_effect, icc, mean_cluster_size, n_clusters, df_adjust, confidence_level
    )
    n_eff = n_texts / deff
    if df_adjust is not None:
        n_eff = n_eff * t_ratio(df_adjust, level, n_texts, n_clusters)
    return n_eff[()] if np.ndim(n_eff) == 0 else n_eff


def effective_clusters(sizes: Any) -> Any:
    r"""Kish's effective number of clusters of clusters of these sizes (clusters last).

    Parameters
    ----------
    sizes : array_like
        The texts (or relevant texts) of each cluster, clusters on the last axis; any
        leading axes index data sets. Empty clusters count for nothing.

    Returns
    -------
    numpy.ndarray or float
        :math:`G^* = (\sum_i n_i)^2 / \sum_i n_i^2`: the number of clusters for equal
        sizes, fewer when a few large clusters carry the variance estimate; NaN where
        every cluster is empty. The t quantiles of perfci's cluster-robust, clustered
        AUC and crossed intervals use :math:`G^* - 1` degrees of freedom.

    Examples
    --------
    >>> from perfci.design import effective_clusters
    >>> float(effective_clusters([10, 10, 10, 10]))
    4.0
    >>> round(float(effective_clusters([37, 1, 1, 1])), 4)  # 40^2 / (37^2 + 3)
    1.1662
    """
    n = np.asarray(sizes, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = n.sum(-1) ** 2 / np.sum(n * n, axis=-1)
    return out[()] if out.ndim == 0 else out


def two_sided_quantile(level: float, df: float) -> float:
    """Return the two-sided quantile of a level: normal for infinite `df`, else Student's t.

    Examples
    --------
    >>> from perfci.design import two_sided_quantile
    >>> round(two_sided_quantile(0.95, float("inf")), 4), round(two_sided_quantile(0.95, 9), 4)
    (1.96, 2.2622)
    """
    # stdtrit is Student's t quantile, and the normal one at df = inf
    return float(special.stdtrit(df, 0.5 + level / 2))


def design_effect(successes: Any, trials: Any, *, design: str = RECOMMENDED) -> Any:
    r"""Design effect of texts nested in persons.

    Parameters
    ----------
    successes, trials : array_like
        Per-person successes and relevant texts (persons last).
    design : str, default "recommended"
        One of ``recommended``, ``icc``, ``icc_weighted``, ``cluster_robust``,
        ``persons``, ``edge``. ``recommended`` (the default): the policy's design of nested texts,
        :data:`perfci.policy.NESTED_DESIGN` (``icc_weighted``), as
        :func:`clustered_proportion_ci` and :func:`perfci.metric_ci` use.
        ``icc``: Kish's :math:`1 + \hat\rho(B - 1)` with the ANOVA ICC and B the mean
        relevant texts per contributing person (the paper's, and this function's former
        default; by name). ``icc_weighted``: the same with the size-weighted cluster size
        :math:`B_w = \sum n_i^2 / N` in place of B,
        the design effect of the pooled proportion when persons hold unequal numbers of
        texts (equal to ``icc`` when they hold the same number). ``cluster_robust``: the
        ratio of the cluster-robust (linearization) variance of :math:`\hat p` to the
        simple-random-sampling variance :math:`\hat p(1 - \hat p)/N`. ``persons``: the
        worst case, an ICC of 1, :math:`B_w` (each person counts once). ``edge``: the
        design effect of the ICC it assumes at least, :math:`1 + 0.4(B_w - 1)`
        (:data:`perfci.policy.EDGE_ICC`), the floor of its interval's width.

    Returns
    -------
    float or numpy.ndarray
        The design effect per data set.

    Warns
    -----
    UndefinedMetricWarning
        Where the design effect is undefined, NaN there: fewer than two persons with a
        relevant text (no persons at all included), or, for the ICC designs, an ICC that
        is not estimable (see :func:`icc`) with more than one text per person.

    See Also
    --------
    clustered_proportion_ci : the formulas (Notes) and the interval.

    Examples
    --------
    >>> import perfci as pc
    >>> y, n = [9, 5, 10, 2, 8], [10, 10, 10, 10, 10]
    >>> round(float(pc.design_effect(y, n)), 3)  # icc_weighted; icc too, for equal sizes
    4.477
    >>> round(float(pc.design_effect(y, n, design="cluster_robust")), 3)
    4.917

    With unequal sizes the size-weighted cluster size is the larger (here
    :math:`B = 40/4 = 10`, :math:`B_w = (2^2 + 4^2 + 6^2 + 28^2)/40 = 21`):

    >>> y, n = [1, 4, 5, 26], [2, 4, 6, 28]
    >>> round(float(pc.icc(y, n)), 4)
    0.0786
    >>> for design in ["icc", "icc_weighted"]:
    ...     print(design, round(float(pc.design_effect(y, n, design=design)), 4))
    icc 1.7074
    icc_weighted 2.5721
    """
    design = _chosen(registry.DESIGN, design, NESTED_DESIGN)
    y, n = _per_person_iv(successes, trials)
    deff = _design_statistics(y, n, design)["design_effect"]
    undefined = np.isnan(deff)
    if undefined.any():
        warn_undefined(
            "design_effect",
            "it needs at least two persons with a relevant text"
            + (
                " and, when outcomes vary, at least one person with two or more texts"
                if design in ("icc", "icc_weighted")
                else ""
            ),
            int(undefined.sum()),
            int(undefined.size),
        )
    return deff[()] if deff.ndim == 0 else deff


def _design_statistics(y: np.ndarray, n: np.ndarray, design: str) -> dict[str, np.ndarray]:
    """Estimate, ICC, design effect and n_eff (before any df adjustment) per data set.

    Persons with ``n_i = 0`` add nothing to N, m or the sum of squared sizes, so the
    mean size N / m and the size-weighted size sum n_i^2 / N are over contributing
    persons only.
    """
    contributes = n > 0
    m = contributes.sum(-1)
    total_n = n.sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = y.sum(-1) / total_n
    var = np.full(p.shape, np.nan)
    if design in ("icc", "icc_weighted"):
        rho, _ = anova_icc(y, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            # the paper's mean cluster size, or the size-weighted one (Kish)
            b = total_n / m if design == "icc" else (n * n).sum(-1) / total_n
        # With one text per person there is no clustering to adjust for (B - 1 = 0),
        # even though the ICC itself is not estimable then. B_w = 1 there too (it is 1
        # exactly when every contributing person has one text).
        deff = np.where(b == 1, 1.0, 1 + rho * (b - 1))
    elif design in ("persons", "edge"):
        # An assumed ICC, not the estimated one (reported beside it, not used): 1 for
        # persons (every text of a person says what one text says), EDGE_ICC for the
        # edge design (the floor of its width). A design of fewer than two persons has none.
        rho, _ = anova_icc(y, n)
        assumed = 1.0 if design == "persons" else EDGE_ICC
        with np.errstate(divide="ignore", invalid="ignore"):
            b = (n * n).sum(-1) / total_n
        deff = np.where(m >= 2, 1 + assumed * (b - 1), np.nan)
    else:
        b = np.full(p.shape, np.nan)
        rho = np.full(p.shape, np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            resid = y - p[..., None] * n
            var = m / (m - 1) * (resid * resid).sum(-1) / total_n**2
            deff = var / (p * (1 - p) / total_n)
        # A zero variance (every outcome the same, or every person with the same rate)
        # gives no evidence of clustering, and an n_eff of 0/0 or infinity: use 1.
        deff = np.where(var == 0, 1.0, deff)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = total_n / deff
    return {
        "estimate": p,
        "icc": rho,
        "design_effect": deff,
        "n_eff": n_eff,
        "n_texts": total_n,
        "n_clusters": m,
        "cluster_size": b,
        "variance": var,
    }


def _scalar(a: np.ndarray) -> Any:
    return a[()] if np.ndim(a) == 0 else a


@dataclass(frozen=True, repr=False)
class ClusteredProportionCI(IntervalResult):
    r"""A design-adjusted confidence interval for a proportion of nested texts.

    Attributes
    ----------
    estimate : float or numpy.ndarray
        The pooled (text-weighted) proportion :math:`\sum y_i / \sum n_i`.
    low, high : float or numpy.ndarray
        The interval ends.
    confidence_level : float or numpy.ndarray
        The confidence level.
    method : str
        The base analytic method applied to the effective counts (``"recommended"``
        resolved: ``"agresti_coull"``).
    design : str
        ``"icc"``, ``"icc_weighted"``, ``"cluster_robust"``, ``"persons"`` or
        ``"edge"``: the design used (``"recommended"`` resolved: ``"icc_weighted"``).
    df_adjust : str or None
        The degrees-of-freedom adjustment used (``"recommended"`` resolved:
        ``"dean_pagano"``).
    icc : float or numpy.ndarray
        The ANOVA ICC; NaN for ``design="cluster_robust"``, and where it is not
        estimable (one text per person, where the design effect is 1).
    design_effect : float or numpy.ndarray
        The design effect.
    cluster_size : float or numpy.ndarray
        The cluster size B in Kish's design effect :math:`1 + \rho(B - 1)`: the mean
        relevant texts per contributing person, :math:`N/m`, for ``design="icc"``; the
        size-weighted :math:`B_w = \sum n_i^2 / N` for ``design="icc_weighted"``; NaN for
        ``design="cluster_robust"``, which uses no cluster size.
    n_eff : float or numpy.ndarray
        Effective sample size ``N / design_effect``.
    n_eff_adjusted : float or numpy.ndarray
        The effective sample size after the df adjustment (equals `n_eff` without one);
        the interval is the base method on ``(estimate * n_eff_adjusted, n_eff_adjusted)``.
    df : float or numpy.ndarray
        Design degrees of freedom, ``n_clusters - 1``.
    n_clusters : int or numpy.ndarray
        Persons with at least one relevant text.
    n_texts : float or numpy.ndarray
        Relevant texts N.
    clipped : bool or numpy.ndarray
        True where the base method's formula left [0, 1].
    unadjusted : ProportionCI
        The same base method treating all texts as independent, for comparison.
    """

    _derived: ClassVar[tuple[str, ...]] = ("sources",)

    estimate: Any
    low: Any
    high: Any
    confidence_level: Any
    method: str
    design: str
    df_adjust: str | None
    icc: Any
    design_effect: Any
    cluster_size: Any
    n_eff: Any
    n_eff_adjusted: Any
    df: Any
    n_clusters: Any
    n_texts: Any
    clipped: Any
    unadjusted: ProportionCI

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes.

        Texts nested in persons: ``("texts", "persons")``.
        """
        return ("texts", "persons")

    def __repr__(self) -> str:
        if np.size(self.estimate) > 6:  # a large batch: its shape, not its arrays
            return super().__repr__()

        def fmt(v: Any) -> str:
            if np.ndim(v) == 0:
                return f"{float(v):.6g}"
            return np.array2string(np.asarray(v, dtype=float), precision=6)

        return (
            f"ClusteredProportionCI(method={self.method!r}, design={self.design!r}, "
            f"df_adjust={self.df_adjust!r}, confidence_level={fmt(self.confidence_level)}, "
            f"estimate={fmt(self.estimate)}, low={fmt(self.low)}, high={fmt(self.high)}, "
            f"design_effect={fmt(self.design_effect)}, n_eff={fmt(self.n_eff)}, "
            f"n_clusters={fmt(self.n_clusters)})"
        )


def _edge_ends(
    y: np.ndarray, n: np.ndarray, n_floor: np.ndarray, df_adjust: str | None, level: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Return the ends of ``design="edge"`` from per-person counts, and where clipped.

    On the minority side (the failures where :math:`\hat p \ge 1/2`, else the
    successes) with counts :math:`f_i`, :math:`F = \sum f_i`, :math:`k = t_{m-1}^2`
    (:math:`z^2` without a df adjustment) and :math:`n_0` the effective size of the
    assumed ICC (`n_floor`), the minority rate has the upper end

    .. math::

        \max\left(\frac{F + k/2 + \sqrt{k\,\tfrac{m}{m-1}\sum_i f_i^2 + k^2/4}}{N + k},
        \ \frac{k}{n_0 + k}\right)

    and the Wilson lower end of :math:`(F n_0 / N, n_0)`. Both are non-decreasing in
    every :math:`f_i` (the sum of squares is, and the floor depends on the sizes only), so
    one more success never lowers either end of the proportion. The floor and the lower
    end are the Wilson interval on :math:`n_0 (z/t_{m-1})^2` (Dean and Pagano's
    adjustment, whichever `df_adjust` is given), which is the Wilson form with
    :math:`k` on :math:`n_0`.
    """
    m = (n > 0).sum(-1)
    total = n.sum(-1)
    adjust = None if df_adjust is None else "dean_pagano"  # t_{m-1} for either adjustment
    n_star = n_floor * t_ratio(adjust, level, total, m)
    with np.errstate(divide="ignore", invalid="ignore"):
        near_one = y.sum(-1) / total >= 0.5
        minority = np.where(near_one[..., None], n - y, y)
        count = minority.sum(-1)
        k = special.ndtri(0.5 + level / 2) ** 2 * n_floor / n_star  # t_{m-1}^2, or z^2
        second = m / (m - 1) * (minority * minority).sum(-1)
        raw_up = (count + k / 2 + np.sqrt(k * second + k * k / 4)) / (total + k)
        _, low, _, clipped_low = interval_bounds("wilson", count / total * n_star, n_star, level)
        _, _, floor, _ = interval_bounds("wilson", np.zeros_like(n_star), n_star, level)
    up = np.maximum(raw_up, floor)
    clipped = (raw_up > 1) | clipped_low
    up = np.clip(up, 0, 1)
    return np.where(near_one, 1 - up, low), np.where(near_one, 1 - low, up), clipped


def clustered_proportion_ci(
    successes: Any,
    trials: Any,
    *,
    method: str = RECOMMENDED,
    design: str = RECOMMENDED,
    df_adjust: str | None = RECOMMENDED,
    confidence_level: Any = 0.95,
) -> ClusteredProportionCI:
    r"""Confidence interval for a proportion of texts nested in persons.

    The analytic `method` is applied to an effective sample size that accounts for the
    similarity of a person's texts (the design effect) and, optionally, for the design's
    few degrees of freedom (the number of persons minus one).

    Parameters
    ----------
    successes : array_like
        Per-person successes y_i on the last axis (e.g. each person's true positives for
        recall). Leading axes are batch axes (many data sets at once).
    trials : array_like
        Per-person relevant texts n_i, the same shape (e.g. each person's reference
        positives for recall). Persons with ``n_i = 0`` are not persons: padding a
        ragged batch with them changes nothing.
    method : str, default "recommended"
        Base analytic method, as in :func:`proportion_ci`; ``"recommended"`` is
        :data:`perfci.policy.PROPORTION_METHOD` (``"agresti_coull"``, the paper's).
    design : str, default "recommended"
        One of ``"recommended"``, ``"icc"``, ``"icc_weighted"``, ``"cluster_robust"``,
        ``"persons"``, ``"edge"``: how the design effect is estimated: the paper's ANOVA ICC with
        Kish's design effect on the mean cluster size (``icc``) or on the size-weighted
        cluster size (``icc_weighted``, for unequal numbers of texts per person), or the
        cluster-robust (linearization) variance of the ratio estimator that R's survey
        package computes for a one-stage cluster design, or the worst case of an ICC of
        1 (``persons``: n_eff is the effective number of persons). ``"recommended"``
        is :data:`perfci.policy.NESTED_DESIGN`, ``icc_weighted``: with unequal numbers
        of texts per person the paper's ``icc`` (this function's former default, still
        there by name) under-covers, in the stress atlas (``atlas-sizes``) as low as
        0.82 at 20-40 persons with a size CV of 1.5, where ``icc_weighted`` covers; for
        equal numbers the two are the same. (:func:`perfci.metric_ci` also turns to
        ``edge`` near 0 or 1 and to ``persons`` where a high ICC comes from few
        persons; this function does not.) ``edge`` takes ``method="wilson"`` only.
    df_adjust : {"recommended", "dean_pagano", "korn_graubard", None}, default "recommended"
        Degrees-of-freedom adjustment of the effective sample size, with df = m - 1;
        ``"recommended"`` is :data:`perfci.policy.NESTED_DF_ADJUST` (``"dean_pagano"``,
        the paper's).
    confidence_level : float, default 0.95
        Confidence level.

    Returns
    -------
    ClusteredProportionCI
        The interval with the ICC, design effect, the cluster size it used, effective
        sample sizes, df, number of persons, and the unadjusted interval for comparison.

    Raises
    ------
    ValueError
        For bad counts, unknown names, or fewer than two persons with a relevant text
        (neither the ICC, nor the cluster-robust variance, nor the df exist then).

    Warns
    -----
    UndefinedMetricWarning
        With ``design="cluster_robust"``, where the cluster-robust variance is zero
        (every relevant text has the same outcome, or every person the same rate): the
        design effect is then set to 1.

    Notes
    -----
    With :math:`\hat p = \sum y_i / N`, :math:`N = \sum n_i`, :math:`m` contributing
    persons and :math:`B = N/m`:

    - ``design="icc"``: :math:`\mathrm{DEFF} = 1 + \hat\rho(B - 1)` with the ANOVA ICC
      of :func:`icc`; :math:`n_{eff} = N / \mathrm{DEFF}` (the paper's form [3]_).
    - ``design="icc_weighted"``: :math:`\mathrm{DEFF} = 1 + \hat\rho(B_w - 1)` with the
      size-weighted cluster size :math:`B_w = \sum n_i^2 / N`. Under the exchangeable
      model (every pair of texts of one person correlated :math:`\rho`, texts of
      different persons independent, a common rate) the pooled proportion has

      .. math::

          \mathrm{var}(\hat p) = \frac{p(1 - p)}{N^2}\sum_i n_i\,(1 + \rho(n_i - 1))
          = \frac{p(1 - p)}{N}\left(1 + \rho\left(\frac{\sum_i n_i^2}{N} - 1\right)\right),

      so :math:`B_w` is the cluster size of the design effect [3]_ [4]_. With
      :math:`\mathrm{CV}` the coefficient of variation of the :math:`n_i` (standard
      deviation over persons, divisor m, over the mean),
      :math:`B_w = (1 + \mathrm{CV}^2) B` and :math:`\mathrm{DEFF} = 1 +
      \rho((\mathrm{CV}^2 + 1)B - 1)`, the form of Eldridge, Ashby and Kerry [5]_.
      :math:`B_w = B` when all persons hold the same number of texts, and
      :math:`B_w > B` otherwise, so the paper's ``icc`` understates the design effect
      of unequal sizes and its intervals under-cover.
    - ``design="persons"``: the worst case, an ICC of 1, with the size-weighted size:
      :math:`\mathrm{DEFF} = B_w` and :math:`n_{eff} = N^2 / \sum_i n_i^2`, Kish's
      effective number of persons (m when every person holds as many texts). It is for
      designs whose data cannot show the variation between persons (nearly every
      outcome the same, with many texts per person): there a small estimated ICC may be
      an artefact of the few persons sampled, and the interval of ``icc_weighted`` too
      narrow (see ``validation/ATLAS.md``). The result's ``icc`` is the ANOVA
      estimate, reported but not used.
    - ``design="edge"``, for estimates near 0 or 1: on the minority outcomes
      :math:`f_i` (the failures near 1), the upper end of their rate is the larger of
      :math:`(F + k/2 + \sqrt{k\,\frac{m}{m-1}\sum_i f_i^2 + k^2/4})/(N + k)`, with
      :math:`F = \sum f_i` and :math:`k = t_{m-1}^2` (:math:`z^2` without a df
      adjustment), and the Wilson upper end of no minority outcome on :math:`n_0 = N /
      (1 + 0.4(B_w - 1))`; the lower end is Wilson's on :math:`(F n_0/N, n_0)`. Both ends
      are non-decreasing in every person's successes (one more success never lowers
      them), every outcome the same included; ``docs/choosing.md`` has the atlas rows
      behind the assumed ICC of 0.4 and the width it costs without clustering. The
      result's ``design_effect`` and ``n_eff`` are those of the assumed ICC.
    - ``design="cluster_robust"``:
      :math:`\widehat{\mathrm{var}}(\hat p) = \frac{m}{m-1}\sum_i (y_i - \hat p n_i)^2 / N^2`
      and :math:`n_{eff} = \hat p(1 - \hat p)/\widehat{\mathrm{var}}(\hat p)`. Where that
      variance is zero the design effect is taken as 1, with a warning (R's survey
      package returns NaN or a zero-width interval there).
    - ``df_adjust="dean_pagano"``: :math:`n^*_{eff} = n_{eff}(z/t_{m-1})^2` (the paper's
      choice, following Dean and Pagano [2]_); ``"korn_graubard"``:
      :math:`n^*_{eff} = n_{eff}(t_{N-1}/t_{m-1})^2` [1]_, what R's
      ``survey::svyciprop(method = "beta")`` computes.

    The base method is then applied to :math:`(\hat p\, n^*_{eff},\ n^*_{eff})`.
    ``design="cluster_robust", df_adjust="korn_graubard", method="clopper_pearson"``
    reproduces ``svyciprop(~y, svydesign(ids = ~person, data = texts), method = "beta")``.

    References
    ----------
    .. [1] Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions
       with small expected number of positive counts estimated from survey data.
       Survey Methodology 24.
    .. [2] Dean, N. and Pagano, M. (2015). Evaluating confidence interval methods for
       binomial proportions in clustered surveys. Journal of Survey Statistics and
       Methodology 3(4).
    .. [3] Kish, L. (1965). Survey Sampling. Wiley.
    .. [4] Kish, L. (1987). Statistical Design for Research. Wiley.
    .. [5] Eldridge, S. M., Ashby, D. and Kerry, S. (2006). Sample size for cluster
       randomized trials: effect of coefficient of variation of cluster size and
       analysis method. International Journal of Epidemiology 35(5), 1292-1300.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> per_person = pc.confusion(texts["human"], texts["model"], groups=texts["person"])
    >>> y, n = pc.proportion_counts(per_person, "precision")
    >>> ci = pc.clustered_proportion_ci(y, n)
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]; ICC {ci.icc:.2f}, "
    ...       f"DEFF {ci.design_effect:.2f}, {ci.n_clusters} persons")
    0.847 [0.778, 0.897]; ICC 0.09, DEFF 1.71, 40 persons
    >>> print(f"{ci.method}, design={ci.design}, df_adjust={ci.df_adjust}")
    agresti_coull, design=icc_weighted, df_adjust=dean_pagano
    >>> print(f"unadjusted [{ci.unadjusted.low:.3f}, {ci.unadjusted.high:.3f}]")
    unadjusted [0.798, 0.886]

    The therapists hold 1 to 21 classifier positives each; the paper's design (by name)
    uses the mean cluster size, smaller than the size-weighted one, and so is its
    design effect:

    >>> paper = pc.clustered_proportion_ci(y, n, design="icc")
    >>> print(f"B {paper.cluster_size:.3f}, B_w {ci.cluster_size:.3f}; "
    ...       f"DEFF {paper.design_effect:.2f} [{paper.low:.3f}, {paper.high:.3f}]")
    B 6.525, B_w 8.939; DEFF 1.50 [0.783, 0.894]
    """
    design = _chosen(registry.DESIGN, design, NESTED_DESIGN)
    method = _chosen(
        registry.ANALYTIC_METHOD, method, EDGE_METHOD if design == "edge" else PROPORTION_METHOD
    )
    if design == "edge" and method != EDGE_METHOD:
        raise ValueError(
            f"`design` 'edge' is a score (Wilson-type) interval; `method` must be "
            f"{EDGE_METHOD!r} or 'recommended' with it; got {method!r}."
        )
    df_adjust = _chosen(registry.DF_ADJUST, df_adjust, NESTED_DF_ADJUST)
    level = check_confidence_level(confidence_level, scalar=True)
    y, n = _per_person_iv(successes, trials)
    m = (n > 0).sum(-1)
    if np.any(m < 2):
        raise ValueError(
            "`trials` must give at least 2 persons with a relevant text: the ICC, the "
            "cluster-robust variance and the design degrees of freedom (m - 1) do not "
            f"exist for fewer; got {int(m.min())}."
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        st = _design_statistics(y, n, design)
    if design == "cluster_robust" and np.any(zero := st["variance"] == 0):
        warnings.warn(
            "the cluster-robust variance is zero (every relevant text has the same outcome "
            f"or every person the same rate) in {int(zero.sum())} of {zero.size} data "
            "sets; using a design effect of 1 there.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    n_star = st["n_eff"] * t_ratio(df_adjust, level, st["n_texts"], st["n_clusters"])
    x_star = st["estimate"] * n_star
    if design == "edge":
        low, high, clipped = _edge_ends(y, n, st["n_eff"], df_adjust, level)
    else:
        _, low, high, clipped = interval_bounds(method, x_star, n_star, level)
    unadjusted = proportion_ci(y.sum(-1), st["n_texts"], method=method, confidence_level=level)
    return ClusteredProportionCI(
        estimate=_scalar(st["estimate"]),
        low=_scalar(np.asarray(low, dtype=float)),
        high=_scalar(np.asarray(high, dtype=float)),
        confidence_level=float(level),
        method=method,
        design=design,
        df_adjust=df_adjust,
        icc=_scalar(st["icc"]),
        design_effect=_scalar(st["design_effect"]),
        cluster_size=_scalar(st["cluster_size"]),
        n_eff=_scalar(st["n_eff"]),
        n_eff_adjusted=_scalar(n_star),
        df=_scalar(st["n_clusters"] - 1),
        n_clusters=_scalar(st["n_clusters"]),
        n_texts=_scalar(st["n_texts"]),
        clipped=_scalar(np.asarray(clipped)),
        unadjusted=unadjusted,
    )
