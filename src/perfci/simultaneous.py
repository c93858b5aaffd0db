"""Simultaneous bands for many differences from one reference: Dunnett's max-t critical value.

With k subgroups compared with one reference every difference shares the reference's
estimate, so the k differences are correlated with the one-factor structure of Dunnett's
many-to-one comparisons. :func:`max_t_critical_value` is the critical value that covers
all k at once (computed by quadrature, not simulated); :func:`simultaneous_band` puts
each difference of :mod:`perfci.two_sample` at the level of Bonferroni's band or of the
max-t band, as :func:`perfci.compare_groups` does with `simultaneous`.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from scipy import integrate, optimize, special, stats

from ._core.validation import check_confidence_level, check_real_array
from .metrics import difference_bound
from .two_sample import Sides, difference_ends, wilson_ends

__all__ = ["max_t_critical_value", "simultaneous_band"]

# Gauss-Legendre nodes of each piece of the integral over the reference's standardized
# deviation in the max-t probability: at k = 1 the probability equals the normal and t
# distribution functions to about 1e-15 (tests/test_subgroups.py).
_NODES = np.polynomial.legendre.leggauss(48)


# Half-width, in standard deviations, of the integration range of that integral.
_RANGE = 9.0


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

    >>> from perfci.simultaneous import max_t_critical_value
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


def simultaneous_band(
    simultaneous: str,
    chosen: str,
    metric: str,
    sides: Sides,
    others: list[int],
    r: int,
    good: np.ndarray,
    replicates: np.ndarray | None,
    level: float,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Return the simultaneous band of the differences `good`, and what it used.

    The differences are those of the summaries `sides` at `others` from the one at `r`
    (:func:`perfci.two_sample.sides_of`; `replicates`, one row per side, for the
    bootstrap), by the interval `chosen`. Each difference of `good` gets its interval at
    level 1 - (1 - c)/k (``"bonferroni"``), or at the max-t critical value of the k
    differences (``"max_t"``); the others are NaN. The dict holds ``simultaneous_level``
    and, for max-t, ``critical_value`` (on the normal scale).
    """
    band_low = np.full(len(others), np.nan)
    band_high = np.full(len(others), np.nan)
    attrs: dict[str, Any] = {}
    k = int(good.sum())
    if not k:
        return band_low, band_high, attrs
    idx = np.flatnonzero(good)
    rows = [others[i] for i in idx]
    sub, refs = sides.take(rows), sides.take([r] * k)
    diffs = None if replicates is None else replicates[rows] - replicates[r]
    if simultaneous == "bonferroni":
        each = 1 - (1 - level) / k
    else:
        # the max-t critical value of the multivariate normal with the correlation
        # the shared reference implies, as a level for each interval (each with its
        # own df): never wider than Bonferroni's, and within 1.5% of the
        # multivariate t's at 10 df (docs/subgroups.md)
        c = _max_t(chosen, sides, rows, r, replicates, level)
        each = float(2 * stats.norm.cdf(c) - 1)
        attrs["critical_value"] = c
    lo, hi = difference_ends(chosen, sub, refs, diffs, each, bound=difference_bound(metric))
    attrs["simultaneous_level"] = each
    band_low[idx], band_high[idx] = lo, hi
    return band_low, band_high, attrs


def _max_t(
    chosen: str,
    sides: Sides,
    rows: list[int],
    r: int,
    replicates: np.ndarray | None,
    level: float,
) -> float:
    """Return the max-t critical value of the differences `rows` - `r`, on the method's variances.

    The variances are the cluster-robust ones, the Wilson intervals' ((u - l)/2z)^2, or the
    bootstrap replicates'; Bonferroni's quantile where a variance is not usable.
    """
    if chosen == "cluster_robust":
        variances = sides.variance
    elif chosen == "newcombe":
        assert sides.successes is not None and sides.trials is not None
        wl, wh = wilson_ends(sides.successes, sides.trials, level)
        z = stats.norm.ppf(0.5 + level / 2)
        variances = ((wh - wl) / (2 * z)) ** 2
    else:
        assert replicates is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            variances = np.nanvar(replicates, -1, ddof=1)
    v = variances[rows]
    v0 = float(variances[r])
    if np.any(v + v0 <= 0) or not np.all(np.isfinite(v)) or not math.isfinite(v0):
        return float(stats.norm.ppf(1 - (1 - level) / (2 * len(rows))))  # Bonferroni
    return max_t_critical_value(v, v0, level)
