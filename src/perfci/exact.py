"""Exact operating characteristics of interval methods for a binomial proportion.

An interval method maps each possible count x = 0..n to an interval, so its coverage at a
true proportion p is the finite sum
``sum_x Binomial(x; n, p) * [low(x) <= p <= high(x)]`` and its expected half-width is
``sum_x Binomial(x; n, p) * (high(x) - low(x)) / 2``. Nothing is simulated. The sums
run over the counts that carry weight: x below and above a support about 8.6 standard
deviations wide hold at most :data:`TAIL_MASS` (1e-16) of probability on each side, so
the cost grows as n^1.5, not n^2, over a range of sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from ._core import registry
from ._core.intervals import exact_percentile_bounds
from ._core.replicates import MAX_PSEUDO_COUNT
from ._core.resources import check_memory
from ._core.results import ResultMixin
from ._core.validation import (
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

# Rows enumerated at once, intervals and (element, x) terms together: about 8 MB of
# working arrays, which keeps them in the CPU's caches and reused from chunk to chunk.
_MAX_ROWS = 2**16
# Peak bytes per row of a chunk (an interval bound or an (element, x) term, measured
# with tracemalloc), and per entry of the log-factorial table of 0..n (the integers,
# their float form and the table itself).
_BYTES_PER_ROW = 120
_BYTES_PER_LOG_FACTORIAL = 24
#: Binomial mass left out of the enumeration on each side, at most: the counts x below
#: and above the support that the Chernoff bound gives (see :func:`_support`). 0 keeps
#: every x = 0..n.
TAIL_MASS = 1e-16
# Bisection steps for the support's ends, at most: 2**-64 of [0, 1] is below 1/n for
# any n allowed; the bisection stops once every end is known to within one count.
_BISECTIONS = 64


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
    if method not in INTERVALS and _pseudo_count(method) > MAX_PSEUDO_COUNT:
        # the bootstrap's own limit: a larger prior swamps any data
        raise ValueError(
            f"`method`'s pseudo count must be at most {MAX_PSEUDO_COUNT:.0e} (a larger "
            f"prior swamps any data); got {method!r}."
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


def _support(n: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Return the smallest and largest x enumerated for each Binomial(n, p).

    The mass below the first and above the last is at most :data:`TAIL_MASS` each, by
    the Chernoff bound :math:`\Pr\{X \le k\} \le e^{-n\,D(k/n \,\|\, p)}` for
    :math:`k \le np` (and the same for :math:`\Pr\{X \ge k\}`, :math:`k \ge np`),
    :math:`D` the Kullback-Leibler divergence of two Bernoulli laws: the ends are where
    :math:`n D(a \| p)` reaches :math:`\log(1/\epsilon)`, found by bisection (one
    array operation per step for all elements), rounded outwards. The support is about
    :math:`\pm 8.6` standard deviations wide, and all of 0..n where that is wider.
    """
    lo, hi = np.zeros(n.shape, dtype=np.int64), n.copy()
    if TAIL_MASS == 0:
        return lo, hi
    needed = -np.log(TAIL_MASS)
    size = n.astype(float)
    with np.errstate(divide="ignore"):
        # n D(0 || p) and n D(1 || p): a side is cut only where even its last count
        # (0 or n) has less than the tail mass
        cut = (-size * np.log1p(-p) >= needed, -size * np.log(p) >= needed)
    for side, (keep, end) in enumerate(((lo, 0.0), (hi, 1.0))):
        where = np.flatnonzero(cut[side])
        if not where.size:
            continue
        n_cut, p_cut = size[where], p[where]
        # invariant: n D(far || p) >= needed > n D(near || p); near starts at the mode p
        far, near = np.full(where.size, end), p_cut.copy()
        for _ in range(_BISECTIONS):
            if np.all(n_cut * np.abs(near - far) < 0.5):
                break
            mid = (far + near) / 2
            divergence = special.rel_entr(mid, p_cut) + special.rel_entr(1 - mid, 1 - p_cut)
            beyond = n_cut * divergence >= needed
            np.copyto(far, mid, where=beyond)
            np.copyto(near, mid, where=~beyond)
        rounded = np.floor(n_cut * far) if side == 0 else np.ceil(n_cut * far)
        keep[where] = np.clip(rounded, 0, n_cut).astype(np.int64)
    return lo, hi


def _merged_ranges(
    group: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Merge the ranges [lo, hi] of each group into disjoint segments.

    Returns each segment's group, first and last x (segments ordered by group, then
    x), and the segment of each range. Overlapping or adjacent ranges of a group share a
    segment, so each x of a group is in exactly one segment or none.
    """
    order = np.lexsort((lo, group))
    g, a, b = group[order], lo[order], hi[order]
    # running maximum of hi within each group, on ranks so the keys cannot overflow:
    # a later group's keys exceed every earlier one's
    values, rank = np.unique(b, return_inverse=True)
    key = g * values.size + rank.ravel()
    reach = values[np.maximum.accumulate(key) - g * values.size]
    new = np.ones(g.size, dtype=bool)
    new[1:] = (g[1:] != g[:-1]) | (a[1:] > reach[:-1] + 1)
    starts = np.flatnonzero(new)
    segment_of = np.empty(g.size, dtype=np.int64)
    segment_of[order] = np.cumsum(new) - 1
    return g[starts], a[starts], np.maximum.reduceat(b, starts), segment_of


def _check_enumeration_size(largest: int, terms: int, chunk: int) -> None:
    """Refuse an enumeration that would not fit in memory, before it is allocated.

    One chunk of rows is held at a time (about :data:`_BYTES_PER_ROW` bytes per row; a
    chunk is at least one segment of x with its elements' terms), and the
    log-factorials of 0..n once (about :data:`_BYTES_PER_LOG_FACTORIAL` per entry at
    their peak).
    """
    check_memory(
        _BYTES_PER_ROW * float(chunk) + _BYTES_PER_LOG_FACTORIAL * (largest + 1.0),
        f"`n` up to {largest} ({terms:,} terms of x to enumerate)",
        "ask for a smaller `n`, or for fewer sizes at once",
    )


#: Methods whose coverage has a closed form through the binomial tests they invert: an
#: end lies on one side of p exactly when a regularized incomplete beta function at p is
#: on one side of the tail probability, so coverage needs no beta quantile.
TEST_DUALITY: dict[str, tuple[float, float]] = {
    # (shift of a, b for the lower end; for the upper end): Beta(x + s, n - x + 1 - s')
    "clopper_pearson": (0.0, 1.0),
    "jeffreys": (0.5, 0.5),
}


def _dual_terms(
    method: str, x: np.ndarray, n: np.ndarray, p: np.ndarray, level: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return whether each term's interval lies wholly below p (hi < p) or above it (lo > p).

    For Clopper-Pearson, ``lo = B^{-1}(tail; x, n - x + 1) > p`` exactly when
    ``I_p(x, n - x + 1) < tail`` (I increasing in p), and ``hi = B^{-1}(1 - tail; x + 1,
    n - x) < p`` exactly when ``I_p(x + 1, n - x) > 1 - tail``; Jeffreys alike with
    ``Beta(x + 1/2, n - x + 1/2)`` for both ends. The ends at x = 0 and x = n are 0 and 1.
    """
    low_shift, high_shift = TEST_DUALITY[method]
    tail = (1 - level) / 2
    with np.errstate(invalid="ignore"):
        above = (x > 0) & (special.betainc(x + low_shift, n - x + 1 - low_shift, p) < tail)
        below = (x < n) & (special.betainc(x + high_shift, n - x + 1 - high_shift, p) > 1 - tail)
    return below, above


def _enumerate(method: str, n: np.ndarray, p: np.ndarray, level: np.ndarray, *, width: bool = True):
    """Coverage, misses and expected half-width for flat validated arrays.

    With ``width=False`` the half-width (row 3) is NaN, and the methods of
    :data:`TEST_DUALITY` get their coverage without computing any interval.

    Only the x of each element's support carry weight (:func:`_support`; the rest is
    below :data:`TAIL_MASS` on each side). The intervals of each distinct (n, level)
    pair are computed once for the union of its elements' supports, cut into disjoint
    segments of x; chunks of whole segments, each with the elements it serves, keep the
    working arrays within :data:`_MAX_ROWS` rows.
    """
    if n.size == 0:  # no (n, p, level) at all: nothing to enumerate
        return np.zeros((4, 0))
    first, last = _support(n, p)
    rows_per_element = last - first + 1
    # distinct (n, level) pairs from one integer key, not by sorting rows
    sizes, size_of = np.unique(n, return_inverse=True)
    levels, level_of = np.unique(level, return_inverse=True)
    keys, pair_of = np.unique(size_of.ravel() * levels.size + level_of.ravel(), return_inverse=True)
    pairs = np.stack([sizes[keys // levels.size], levels[keys % levels.size]], axis=1)
    seg_pair, seg_first, seg_last, segment_of = _merged_ranges(pair_of.ravel(), first, last)
    seg_size = seg_last - seg_first + 1
    by_segment = np.argsort(segment_of, kind="stable")
    # rows of each segment: its intervals and its elements' terms
    seg_terms = np.bincount(segment_of, weights=rows_per_element, minlength=seg_size.size)
    cum_rows = np.cumsum(seg_size + seg_terms.astype(np.int64))
    cum_elements = np.cumsum(np.bincount(segment_of, minlength=seg_size.size))
    largest_chunk = int(np.max(np.diff(cum_rows, prepend=0)))
    _check_enumeration_size(
        int(n.max()),
        int(rows_per_element.sum()),
        min(int(cum_rows[-1]), max(_MAX_ROWS, largest_chunk)),
    )

    out = np.zeros((4, n.size))
    log_factorial = special.gammaln(np.arange(n.max() + 1) + 1.0)
    start = 0
    while start < seg_size.size:
        done = cum_rows[start - 1] if start else 0
        stop = max(int(np.searchsorted(cum_rows, done + _MAX_ROWS, side="right")), start + 1)
        # the intervals of x in segments start..stop-1
        sizes = seg_size[start:stop]
        dual = not width and method in TEST_DUALITY
        if not dual:
            t_owner, t_offset = _segments(sizes)
            t_pair = seg_pair[start:stop][t_owner]
            low, high = _bounds(
                method,
                (seg_first[start:stop][t_owner] + t_offset).astype(float),
                pairs[t_pair, 0],
                pairs[t_pair, 1],
            )
        table_start = np.cumsum(sizes) - sizes
        # the terms of the elements of those segments
        idx = by_segment[(cum_elements[start - 1] if start else 0) : cum_elements[stop - 1]]
        e_owner, e_offset = _segments(rows_per_element[idx])
        elem = idx[e_owner]
        e_x = first[elem] + e_offset
        segment = segment_of[elem]
        row = table_start[segment - start] + (e_x - seg_first[segment])
        pe = p[elem]
        n_e = n[elem]
        # Binomial pmf from a table of log-factorials (relative error about 2 log(n!)
        # epsilons), several times faster than scipy.stats.binom.pmf.
        pmf = np.exp(
            log_factorial[n_e]
            - log_factorial[e_x]
            - log_factorial[n_e - e_x]
            + special.xlogy(e_x, pe)
            + special.xlog1py(n_e - e_x, -pe)
        )
        if dual:
            below, above = _dual_terms(
                method, e_x.astype(float), n_e.astype(float), pe, level[elem]
            )
            weights = (pmf * (~below & ~above), pmf * below, pmf * above, np.zeros_like(pmf))
        else:
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
    if not width:
        out[3] = np.nan
    return out


def operating_characteristics(
    method: str, n: Any, p: Any, *, confidence_level: Any = 0.95
) -> OperatingCharacteristics:
    r"""Compute exact coverage, misses on each side and expected half-width of an interval method.

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
    Coverage counts the closed interval ``[low, high]``. The sums run over every x
    whose binomial probability matters: the counts left out below and above each
    element's support (where even the last count, 0 or n, has less probability) hold at
    most ``TAIL_MASS = 1e-16`` each, by the Chernoff bound [1]_, so the result is exact up
    to floating point, and the three probabilities (coverage, miss_low, miss_high) add
    up to 1 within 2e-16 and rounding. The binomial probabilities come from a table of
    log-factorials, with a relative rounding error of about :math:`2 \log(n!)` machine
    epsilons (2e-13 at n = 100, 2e-11 at n = 10,000).

    References
    ----------
    .. [1] Arratia, R. and Gordon, L. (1989). Tutorial on large deviations for the
       binomial distribution. Bulletin of Mathematical Biology 51(1), 125-131.

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
    method, n, p, level = _operating_iv(method, n, p, confidence_level)
    # coverage only: the exact intervals' coverage through the tests they invert
    cov = _enumerate(method, n.ravel(), p.ravel(), level.ravel(), width=False)[0].reshape(n.shape)
    np.minimum(cov, 1.0, out=cov)  # a sum of probabilities rounded past 1 by an ulp
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
