"""Exact operating characteristics of interval methods for a binomial proportion.

An interval method maps each possible count x = 0..n to an interval, so its coverage at a
true proportion p is the finite sum
``sum_x Binomial(x; n, p) * [low(x) <= p <= high(x)]`` and its expected half-width is
``sum_x Binomial(x; n, p) * (high(x) - low(x)) / 2``. Nothing is simulated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from ._core import registry
from ._core.intervals import exact_percentile_bounds
from ._core.resources import check_memory
from ._core.results import ResultMixin
from ._core.validation import (
    MAX_COUNT,
    check_confidence_level,
    check_real_array,
)
from .analytic import INTERVALS, interval_bounds

__all__ = [
    "OperatingCharacteristics",
    "exact_coverage",
    "expected_half_width",
    "operating_characteristics",
]

# Rows of (element, x) pairs enumerated at once; bounds memory at about 100 MB.
_MAX_ROWS = 2_000_000
# Peak bytes per interval bound held, and per (element, x) term of a chunk (measured
# with tracemalloc: about 165 bytes per x for one n, 100 to 110 for many).
_BYTES_PER_BOUND = 80
_BYTES_PER_TERM = 120


@dataclass(frozen=True)
class OperatingCharacteristics(ResultMixin):
    """Exact operating characteristics of an interval method at (n, p, level).

    Attributes
    ----------
    method : str
        The interval method.
    n, p, confidence_level : numpy.ndarray
        The broadcast inputs.
    coverage : numpy.ndarray
        Probability that the interval contains p.
    miss_low : numpy.ndarray
        Probability that the whole interval lies below p (``high < p``): the interval
        underestimates.
    miss_high : numpy.ndarray
        Probability that the whole interval lies above p (``low > p``): the interval
        overestimates, the optimistic miss for a performance metric.
    expected_half_width : numpy.ndarray
        Expected value of ``(high - low) / 2``.
    """

    method: str
    n: np.ndarray
    p: np.ndarray
    confidence_level: np.ndarray
    coverage: np.ndarray
    miss_low: np.ndarray
    miss_high: np.ndarray
    expected_half_width: np.ndarray


def _pseudo_count(method: str) -> int:
    """Return the lambda of "pseudo_percentile_<lambda>" (0 for "percentile")."""
    return 0 if method == "percentile" else int(method.rsplit("_", 1)[1])


def _bounds(method: str, x: np.ndarray, n: np.ndarray, level: np.ndarray):
    if method in INTERVALS:
        return interval_bounds(method, x, n, level)[1:3]
    return exact_percentile_bounds(x, n, level, _pseudo_count(method))


def _operating_iv(method: Any, n: Any, p: Any, confidence_level: Any):
    registry.EXACT_METHOD.check(method)
    if method not in INTERVALS and _pseudo_count(method) > MAX_COUNT:
        raise ValueError(
            f"`method`'s pseudo count must be at most {MAX_COUNT:.0e}; got {method!r}."
        )
    n = check_real_array("n", n)
    p = check_real_array("p", p)
    level = check_confidence_level(confidence_level)
    if np.any(n < 1) or np.any(n != np.floor(n)):
        raise ValueError("`n` must be positive integers.")
    if np.any((p < 0) | (p > 1)):
        raise ValueError("`p` must lie in [0, 1].")
    try:
        n, p, level = np.broadcast_arrays(n, p, level)
    except ValueError:
        raise ValueError(
            f"`n`, `p` and `confidence_level` must broadcast; got shapes "
            f"{np.shape(n)}, {np.shape(p)}, {np.shape(level)}."
        ) from None
    return method, n.astype(np.int64), p, level


def _segments(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Owner index and position within the owner for rows of concatenated ranges."""
    owner = np.repeat(np.arange(sizes.size), sizes)
    starts = np.cumsum(sizes) - sizes
    return owner, np.arange(sizes.sum()) - starts[owner]


def _check_enumeration_size(n: np.ndarray, pair_n: np.ndarray) -> None:
    """Refuse an enumeration that would not fit in memory, before it is allocated.

    The intervals of x = 0..n are held once per distinct (n, level) (about
    :data:`_BYTES_PER_BOUND` bytes per x), and the probabilities of one chunk of elements
    at a time (about :data:`_BYTES_PER_TERM` per term; a chunk is at least one
    element's n + 1 terms).
    """
    if not n.size:
        return
    largest = int(n.max())
    terms = int(np.sum(n + 1, dtype=np.float64))
    chunk = min(terms, max(_MAX_ROWS, largest + 1))
    need = _BYTES_PER_BOUND * float(np.sum(pair_n + 1.0)) + _BYTES_PER_TERM * chunk
    check_memory(
        need + 8.0 * largest,
        f"`n` up to {largest} ({terms:,} terms of x = 0..n to enumerate)",
        "ask for a smaller `n`, or for fewer sizes at once",
    )


def _enumerate(method: str, n: np.ndarray, p: np.ndarray, level: np.ndarray):
    """Coverage, misses and expected half-width for flat validated arrays."""
    if n.size == 0:  # no (n, p, level) at all: nothing to enumerate
        return np.zeros((4, 0))
    # Each distinct (n, level) pair needs its intervals for x = 0..n only once.
    pairs, pair_of = np.unique(np.stack([n, level], axis=1), axis=0, return_inverse=True)
    pair_of = pair_of.ravel()
    pair_n = pairs[:, 0].astype(np.int64)
    _check_enumeration_size(n, pair_n)
    owner, x = _segments(pair_n + 1)
    low, high = _bounds(method, x.astype(float), pair_n[owner].astype(float), pairs[owner, 1])
    pair_start = np.cumsum(pair_n + 1) - (pair_n + 1)

    out = np.zeros((4, n.size))
    log_factorial = special.gammaln(np.arange(n.max() + 1) + 1.0)
    # Chunks of elements keep the (element, x) table within _MAX_ROWS rows.
    rows_per_element = n + 1
    cum_rows = np.cumsum(rows_per_element)
    start = 0
    while start < n.size:
        offset = cum_rows[start - 1] if start else 0
        stop = max(int(np.searchsorted(cum_rows, offset + _MAX_ROWS, side="right")), start + 1)
        idx = np.arange(start, stop)
        e_owner, e_x = _segments(rows_per_element[idx])
        elem = idx[e_owner]
        row = pair_start[pair_of[elem]] + e_x
        pe = p[elem]
        n_e = n[elem]
        # Binomial pmf from a table of log-factorials: exact to ~1e-14, and several
        # times faster than scipy.stats.binom.pmf's generic machinery.
        pmf = np.exp(
            log_factorial[n_e]
            - log_factorial[e_x]
            - log_factorial[n_e - e_x]
            + special.xlogy(e_x, pe)
            + special.xlog1py(n_e - e_x, -pe)
        )
        lo, hi = low[row], high[row]
        weights = (
            pmf * ((lo <= pe) & (pe <= hi)),
            pmf * (hi < pe),
            pmf * (lo > pe),
            pmf * (hi - lo) / 2,
        )
        for k, w in enumerate(weights):
            out[k, idx] = np.bincount(e_owner, weights=w, minlength=idx.size)
        start = stop
    return out


def operating_characteristics(
    method: str, n: Any, p: Any, *, confidence_level: Any = 0.95
) -> OperatingCharacteristics:
    """Compute exact coverage, misses on each side and expected half-width of an interval method.

    Parameters
    ----------
    method : str
        An analytic method of :func:`proportion_ci`, ``"percentile"`` (the iid
        percentile bootstrap with infinitely many resamples) or
        ``"pseudo_percentile_<lambda>"`` (the same with pseudo count lambda, e.g.
        ``"pseudo_percentile_1"``).
    n : array_like of int
        Sample sizes (the relevant n), positive integers.
    p : array_like
        True proportions in [0, 1].
    confidence_level : array_like, default 0.95
        Nominal confidence level, strictly between 0 and 1.

    Returns
    -------
    OperatingCharacteristics
        Arrays of the broadcast shape of `n`, `p` and `confidence_level` (empty arrays
        for empty input).

    Raises
    ------
    ValueError
        For an unknown method, `n` not positive integers, `p` outside [0, 1], a level
        outside (0, 1), inputs that do not broadcast, or sizes whose enumeration would
        not fit in memory.

    See Also
    --------
    exact_coverage, expected_half_width

    Notes
    -----
    Coverage counts the closed interval ``[low, high]``. The sums run over every
    x = 0..n, so the result is exact up to floating point; the three probabilities
    (coverage, miss_low, miss_high) add up to 1.

    Examples
    --------
    >>> import perfci as pc
    >>> oc = pc.operating_characteristics("wald", n=20, p=0.95)
    >>> round(float(oc.coverage), 4), round(float(oc.miss_high), 4)
    (0.6389, 0.3585)
    """
    method, n, p, level = _operating_iv(method, n, p, confidence_level)
    shape = n.shape
    values = _enumerate(method, n.ravel(), p.ravel(), level.ravel()).reshape(4, *shape)
    return OperatingCharacteristics(method, n, p, level, *values)


def exact_coverage(method: str, n: Any, p: Any, *, confidence_level: Any = 0.95) -> Any:
    r"""Compute the exact coverage probability of an interval method, by binomial enumeration.

    Parameters
    ----------
    method : str
        An analytic method of :func:`proportion_ci`: ``"wald"``, ``"wilson"``,
        ``"agresti_coull"``, ``"agresti_coull_plus4"``, ``"clopper_pearson"``,
        ``"jeffreys"`` or ``"logit"``; or ``"percentile"`` /
        ``"pseudo_percentile_<lambda>"`` for the infinite-resample iid percentile bootstrap
        (see :func:`bootstrap_ci`).
    n : array_like of int
        Sample sizes, positive integers.
    p : array_like
        True proportions in [0, 1].
    confidence_level : array_like, default 0.95
        Nominal confidence level.

    Returns
    -------
    float or numpy.ndarray
        :math:`C(n, p) = \sum_{x=0}^{n} \binom{n}{x} p^x (1 - p)^{n - x}
        \,[\mathrm{low}(x) \le p \le \mathrm{high}(x)]`, with the broadcast shape of
        the inputs.

    See Also
    --------
    operating_characteristics : coverage with the misses on each side.

    Examples
    --------
    The paper's warning for a recall near 0.95 on 10 and 20 relevant texts:

    >>> import numpy as np
    >>> import perfci as pc
    >>> pc.exact_coverage("wald", n=[10, 20], p=0.95).round(3)
    array([0.4  , 0.639])

    The whole grid of the paper's section 3.1 at once:

    >>> grid = pc.exact_coverage("agresti_coull", n=np.arange(10, 251)[:, None],
    ...                          p=[0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
    >>> grid.shape, bool(grid.min() > 0.92)
    ((241, 6), True)
    """
    cov = operating_characteristics(method, n, p, confidence_level=confidence_level).coverage
    return cov[()] if cov.ndim == 0 else cov


def expected_half_width(method: str, n: Any, p: Any, *, confidence_level: Any = 0.95) -> Any:
    r"""Compute the expected half-width of an interval method, by binomial enumeration.

    Parameters
    ----------
    method : str
        As in :func:`exact_coverage`.
    n : array_like of int
        Sample sizes, positive integers.
    p : array_like
        True proportions in [0, 1].
    confidence_level : array_like, default 0.95
        Nominal confidence level.

    Returns
    -------
    float or numpy.ndarray
        :math:`E[(\mathrm{high} - \mathrm{low})/2]` under Binomial(n, p), with the
        broadcast shape of the inputs.

    Examples
    --------
    >>> import perfci as pc
    >>> round(float(pc.expected_half_width("agresti_coull", n=100, p=0.9)), 4)
    0.0607
    """
    hw = operating_characteristics(
        method, n, p, confidence_level=confidence_level
    ).expected_half_width
    return hw[()] if hw.ndim == 0 else hw
