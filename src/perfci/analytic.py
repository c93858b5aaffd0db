"""Analytic confidence intervals for a binomial proportion.

The interval functions share one signature, ``(x, n, p, z, confidence_level) -> (low,
high)`` with ``p = x / n`` computed once by the caller, and broadcast over their inputs.
:data:`INTERVALS` maps each method name to its function; :func:`interval_bounds`
evaluates one on validated arrays, :func:`proportion_ci` is the public entry point and
:mod:`perfci.exact` enumerates the same functions to get exact operating characteristics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._core import registry
from ._core.blocks import any_blockwise, blockwise
from ._core.normal import two_sided_z
from ._core.results import IntervalResult
from ._core.validation import MAX_COUNT, check_confidence_level, check_real_array

__all__ = ["ANALYTIC_METHODS", "ProportionCI", "proportion_ci"]

IntervalFunction = Callable[
    [np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    tuple[np.ndarray, np.ndarray],
]


def _normal_quantile(confidence_level: np.ndarray) -> np.ndarray:
    """Return the two-sided critical value z = Phi^-1(1 - (1 - c)/2)."""
    # not scipy.special.ndtri: importing SciPy would be most of `perfci interval`'s time
    return two_sided_z(confidence_level)


def _distinct_levels(confidence_level: Any) -> np.ndarray:
    """Return the levels as given, or one 0-d level where an array repeats one value.

    The quantiles of a method depend on the level only, so they are computed on the
    level's own (unbroadcast) shape; an array holding one value everywhere (a level
    broadcast by a caller) collapses to that value, which gives the same numbers.
    """
    level = np.asarray(confidence_level, dtype=float)
    if level.ndim and level.size and bool(np.all(level == level.flat[0])):
        return np.asarray(level.flat[0])
    return level


def _wald_form(center: np.ndarray, n: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    half = z * np.sqrt(center * (1 - center) / n)
    return center - half, center + half


def _wald(x, n, p, z, level):
    return _wald_form(p, n, z)


def _wilson(x, n, p, z, level):
    z2 = z * z
    center = (x + z2 / 2) / (n + z2)
    half = z * np.sqrt(n * p * (1 - p) + z2 / 4) / (n + z2)
    # The formula gives 0 at x = 0 and 1 at x = n; set them exactly (rounding otherwise).
    return np.where(x == 0, 0.0, center - half), np.where(x == n, 1.0, center + half)


def _agresti_coull(x, n, p, z, level):
    z2 = z * z
    n_tilde = n + z2
    return _wald_form((x + z2 / 2) / n_tilde, n_tilde, z)


def _agresti_coull_plus4(x, n, p, z, level):
    return _wald_form((x + 2) / (n + 4), n + 4, z)


# The beta and logit methods import scipy.special when used, not with this module.


def _clopper_pearson(x, n, p, z, level):
    from scipy import special

    tail = (1 - level) / 2
    with np.errstate(invalid="ignore"):
        low = special.betaincinv(x, n - x + 1, tail)
        high = special.betaincinv(x + 1, n - x, 1 - tail)
    return np.where(x == 0, 0.0, low), np.where(x == n, 1.0, high)


def _jeffreys(x, n, p, z, level):
    from scipy import special

    tail = (1 - level) / 2
    low = special.betaincinv(x + 0.5, n - x + 0.5, tail)
    high = special.betaincinv(x + 0.5, n - x + 0.5, 1 - tail)
    return np.where(x == 0, 0.0, low), np.where(x == n, 1.0, high)


def _logit(x, n, p, z, level):
    from scipy import special

    # Inside (0 < x < n): logit(p) +- z / sqrt(n p (1 - p)), back through the logistic
    # function (expit, which stays finite where exp would overflow). At x = 0 and x = n
    # the logit is infinite; the ends there are R binom's (binom.confint, "logit"), which
    # are the Clopper-Pearson ends: [0, 1 - (a/2)^(1/n)] and [(a/2)^(1/n), 1].
    with np.errstate(divide="ignore", invalid="ignore"):
        center = special.logit(p)
        half = z / np.sqrt(n * p * (1 - p))
        low, high = special.expit(center - half), special.expit(center + half)
    log_root = np.log((1 - level) / 2) / n  # log of (a/2)^(1/n)
    low = np.where(x == 0, 0.0, np.where(x == n, np.exp(log_root), low))
    high = np.where(x == n, 1.0, np.where(x == 0, -np.expm1(log_root), high))
    return low, high


_FUNCTIONS: dict[str, IntervalFunction] = {
    "wald": _wald,
    "wilson": _wilson,
    "agresti_coull": _agresti_coull,
    "agresti_coull_plus4": _agresti_coull_plus4,
    "clopper_pearson": _clopper_pearson,
    "jeffreys": _jeffreys,
    "logit": _logit,
}

#: Interval functions by method name, ``f(x, n, p, z, confidence_level) -> (low, high)``
#: with ``p = x / n``, for every method of :data:`perfci._core.registry.ANALYTIC_METHOD`,
#: in its order.
INTERVALS: dict[str, IntervalFunction] = {
    name: _FUNCTIONS[name] for name in registry.ANALYTIC_METHOD
}

#: Names of the analytic interval methods.
ANALYTIC_METHODS: tuple[str, ...] = registry.ANALYTIC_METHOD.names

# Methods whose formula can leave [0, 1]; their ends are clipped and flagged.
_CAN_LEAVE_UNIT_INTERVAL = frozenset({"wald", "agresti_coull", "agresti_coull_plus4"})


def _ends(method: str) -> Callable[..., None]:
    """Return the elementwise ``(x, n, z, level, out=(p, low, high, clipped))`` of `method`."""
    interval = INTERVALS[method]
    clip = method in _CAN_LEAVE_UNIT_INTERVAL

    def ends(x, n, z, level, out):
        p = np.divide(x, n, out=out[0])
        low, high = interval(x, n, p, z, level)
        if clip:
            np.logical_or(low < 0, high > 1, out=out[3])
            np.clip(low, 0.0, 1.0, out=out[1])
            np.clip(high, 0.0, 1.0, out=out[2])
        else:
            np.copyto(out[1], low)
            np.copyto(out[2], high)
            out[3][...] = False

    return ends


def interval_bounds(
    method: str, x: np.ndarray, n: np.ndarray, confidence_level: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Estimate ``x / n``, low, high and the clipped flag for validated arrays.

    `x`, `n` and `confidence_level` broadcast; the level need not be broadcast to the
    shape of the counts. Its quantiles are computed once per level given (once in all
    for a scalar, or for an array that repeats one value), not once per element, and
    large inputs are evaluated in cache-sized blocks
    (:func:`perfci._core.blocks.blockwise`), which gives the same numbers.
    """
    level = _distinct_levels(confidence_level)
    z = _normal_quantile(level)
    p, low, high, clipped = blockwise(_ends(method), (x, n, z, level), (float, float, float, bool))
    return p, low, high, clipped


def _scalar_or_array(a: np.ndarray) -> Any:
    return a[()] if a.ndim == 0 else a


@dataclass(frozen=True, repr=False)
class ProportionCI(IntervalResult):
    """An analytic confidence interval for a proportion (arrays when inputs broadcast).

    Attributes
    ----------
    estimate : float or numpy.ndarray
        The sample proportion ``x / n``.
    low, high : float or numpy.ndarray
        The interval ends.
    confidence_level : float or numpy.ndarray
        The confidence level of the interval.
    method : str
        The method name, one of :data:`ANALYTIC_METHODS`.
    successes, trials : float or numpy.ndarray
        The ``x`` and ``n`` the interval was computed from (possibly effective,
        non-integer counts); read-only arrays, which for float64 input arrays are views
        of them, not copies.
    clipped : bool or numpy.ndarray
        True where the method's formula left [0, 1] and an end was clipped.
    """

    _derived: ClassVar[tuple[str, ...]] = ("sources",)

    estimate: Any
    low: Any
    high: Any
    confidence_level: Any
    method: str
    successes: Any
    trials: Any
    clipped: Any

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes.

        Independent texts: ``("texts",)``.
        """
        return ("texts",)

    def __repr__(self) -> str:
        if np.size(self.estimate) > 6:  # a large batch: its shape, not its arrays
            return super().__repr__()

        def fmt(v: Any) -> str:
            return (
                f"{float(v):.6g}"
                if np.ndim(v) == 0
                else np.array2string(np.asarray(v), precision=6)
            )

        return (
            f"ProportionCI(method={self.method!r}, confidence_level="
            f"{fmt(self.confidence_level)}, estimate={fmt(self.estimate)}, "
            f"low={fmt(self.low)}, high={fmt(self.high)})"
        )


def _read_only(a: np.ndarray) -> np.ndarray:
    """Return a view of `a` that cannot be written through."""
    view = a.view()
    view.flags.writeable = False
    return view


def _proportion_ci_iv(
    x: Any, n: Any, method: Any, confidence_level: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return `x`, `n` and the level validated and broadcast, and the level as given."""
    registry.ANALYTIC_METHOD.check(method)
    # no copies: the result holds read-only views of float input arrays
    x = check_real_array("x", x, copy=False)
    n = check_real_array("n", n, copy=False)
    level = check_confidence_level(confidence_level)
    # reductions, not elementwise comparisons: no temporary array (the values are finite)
    if n.size and n.min() <= 0:
        raise ValueError("`n` must be positive.")
    if n.size and n.max() > MAX_COUNT:
        # beyond it the exact intervals' incomplete beta has no usable digits (NaN ends)
        raise ValueError(f"`n` must be at most {MAX_COUNT:.0e} trials; got {n.max():.3g}.")
    if x.size and x.min() < 0:
        raise ValueError("`x` must be non-negative.")
    try:
        # views: only the result's `confidence_level` field is the broadcast level
        x, n, broadcast_level = np.broadcast_arrays(x, n, level)
    except ValueError:
        raise ValueError(
            f"`x`, `n` and `confidence_level` must broadcast; got shapes "
            f"{np.shape(x)}, {np.shape(n)}, {np.shape(level)}."
        ) from None
    if any_blockwise(np.greater, (x, n)):
        raise ValueError("`x` must not exceed `n`.")
    return _read_only(x), _read_only(n), broadcast_level, level


def proportion_ci(
    x: Any,
    n: Any,
    *,
    method: str = "agresti_coull",
    confidence_level: Any = 0.95,
) -> ProportionCI:
    r"""Analytic confidence interval for a binomial proportion.

    Parameters
    ----------
    x : array_like
        Number of successes (for a metric, its numerator: e.g. true positives for
        recall). May be non-integer, as when an effective sample size replaces `n`.
    n : array_like
        Number of trials, the metric's relevant n (for recall, the reference
        positives). Must be positive and at least `x`. `x`, `n` and `confidence_level`
        broadcast: every axis indexes independent data sets, and the result's fields
        have the broadcast shape.
    method : str, default "agresti_coull"
        One of ``"wald"``, ``"wilson"``, ``"agresti_coull"``, ``"agresti_coull_plus4"``,
        ``"clopper_pearson"``, ``"jeffreys"``, ``"logit"``.
    confidence_level : array_like, default 0.95
        Confidence level, strictly between 0 and 1.

    Returns
    -------
    ProportionCI
        Frozen result with ``estimate``, ``low``, ``high`` and ``clipped``; scalars for
        scalar input, else arrays of the broadcast shape of `x`, `n` and
        `confidence_level`.

    Raises
    ------
    ValueError
        For an unknown method, non-finite input, ``n <= 0``, ``x < 0``, ``x > n``, or a
        confidence level outside (0, 1).

    See Also
    --------
    exact_coverage : exact coverage of these methods by binomial enumeration.

    Notes
    -----
    With :math:`\hat p = x/n` and :math:`z = \Phi^{-1}(1 - (1 - c)/2)` for confidence
    level :math:`c`:

    - ``wald``: :math:`\hat p \pm z\sqrt{\hat p(1 - \hat p)/n}`.
    - ``wilson`` (score interval):
      :math:`\frac{x + z^2/2}{n + z^2} \pm \frac{z}{n + z^2}\sqrt{n\hat p(1-\hat p) + z^2/4}`.
    - ``agresti_coull``: :math:`\tilde n = n + z^2`, :math:`\tilde p = (x + z^2/2)/\tilde n`,
      :math:`\tilde p \pm z\sqrt{\tilde p(1 - \tilde p)/\tilde n}` [1]_.
    - ``agresti_coull_plus4``: the same with two successes and two failures added,
      :math:`\tilde n = n + 4`, :math:`\tilde p = (x + 2)/(n + 4)`, at every level.
    - ``clopper_pearson``: :math:`[B(\alpha/2; x, n - x + 1), B(1 - \alpha/2; x + 1, n - x)]`
      with :math:`B(q; a, b)` the beta quantile and :math:`\alpha = 1 - c`; 0 at
      :math:`x = 0` and 1 at :math:`x = n`.
    - ``jeffreys``: :math:`[B(\alpha/2; x + \frac12, n - x + \frac12),
      B(1 - \alpha/2; x + \frac12, n - x + \frac12)]`, with 0 at :math:`x = 0` and 1
      at :math:`x = n` [2]_.
    - ``logit``: the Wald interval on the logit scale, back-transformed,
      :math:`\mathrm{expit}\big(\mathrm{logit}(\hat p) \pm z/\sqrt{n\hat p(1 - \hat p)}\big)`
      with :math:`\mathrm{logit}(p) = \log(p/(1-p))` and
      :math:`\mathrm{expit}(u) = 1/(1 + e^{-u})` [2]_ [3]_. At :math:`x = 0` and
      :math:`x = n` the logit is infinite; there, as R's ``binom.logit`` (package binom)
      does, the interval is :math:`[0, 1 - (\alpha/2)^{1/n}]` and
      :math:`[(\alpha/2)^{1/n}, 1]`, which are the Clopper-Pearson ends at those counts.
      Above a level of about 0.982 (:math:`z > \log 2 / (1 - 1/\sqrt 2) \approx 2.37`)
      the interval is not monotone in :math:`x`: for large enough n its lower end at
      :math:`x = n - 1` lies below the one at :math:`x = n - 2`, and its upper end at
      :math:`x = 1` above the one at :math:`x = 2`.

    :math:`z` is the standard library's ``statistics.NormalDist().inv_cdf`` (Wichura's
    AS 241, within a few units in the last place of ``scipy.special.ndtri``), so the
    methods that need only :math:`z` do not import SciPy.

    The Wald and both Agresti-Coull formulas can leave [0, 1]; their ends are clipped
    and ``clipped`` says where; the logit interval never leaves it. The estimate is
    always :math:`\hat p`, also for intervals centred elsewhere.

    References
    ----------
    .. [1] Agresti, A. and Coull, B. A. (1998). Approximate is better than "exact" for
       interval estimation of binomial proportions. The American Statistician 52(2).
    .. [2] Brown, L. D., Cai, T. T. and DasGupta, A. (2001). Interval estimation for a
       binomial proportion. Statistical Science 16(2).
    .. [3] Dorai-Raj, S. (2014). binom: Binomial confidence intervals for several
       parameterizations. R package version 1.1-1 (``binom.logit``).

    Examples
    --------
    The paper's example: a recall of 264 of 300 human-identified positives.

    >>> import perfci as pc
    >>> ci = pc.proportion_ci(264, 300, method="wilson")
    >>> print(f"{ci.low:.3f} {ci.high:.3f}")
    0.838 0.912

    The logit interval, with R binom's ends at x = 0 (Clopper-Pearson's):

    >>> ci = pc.proportion_ci([0, 26], 30, method="logit")
    >>> ci.low.round(4), ci.high.round(4)
    (array([0.    , 0.6941]), array([0.1157, 0.949 ]))

    Inputs broadcast, here over three confidence levels:

    >>> pc.proportion_ci(26, 30, method="clopper_pearson",
    ...                  confidence_level=[0.8, 0.9, 0.95]).low.round(4)
    array([0.751 , 0.7204, 0.6928])
    """
    x, n, broadcast_level, level = _proportion_ci_iv(x, n, method, confidence_level)
    # the quantiles are computed on the level as given, not once per element
    p, low, high, clipped = interval_bounds(method, x, n, level)
    return ProportionCI(
        estimate=_scalar_or_array(p),
        low=_scalar_or_array(np.asarray(low, dtype=float)),
        high=_scalar_or_array(np.asarray(high, dtype=float)),
        confidence_level=_scalar_or_array(broadcast_level),
        method=method,
        successes=_scalar_or_array(x),
        trials=_scalar_or_array(n),
        clipped=_scalar_or_array(np.asarray(clipped)),
    )
