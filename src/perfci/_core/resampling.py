"""The resampling engine: bootstrap replicates drawn as counts, never as rows.

Resampling n texts with replacement from a sample with cell counts c is a single
multinomial draw, Multinomial(n, c / n); resampling persons is a draw of how often each
person is taken; resampling texts within a person taken w times is Multinomial(w n_i,
that person's cell shares). Every resample is therefore a handful of binomial draws,
whatever the number of texts.

This module serves :func:`perfci.bootstrap_ci`, :func:`perfci.compare`,
:func:`perfci.report` and the validation harness; no other module draws resamples. The
replicate cell counts of one set of draws can serve several statistics at once
(:func:`draw_replicates_many`): a report's metrics share them.

Memory: resamples are drawn in batches; a batch holds about :data:`AUTO_BATCH_ELEMENTS`
numbers (resamples x cells for ``"iid"``, resamples x persons for the person schemes, the
person picks being int32), so memory does not grow with the number of resamples.

Size: :func:`check_resample_size` refuses more resamples, or more replicates, than
memory holds, before anything is drawn; :func:`check_resample_count` refuses fewer than a
percentile or BCa interval at the confidence level needs (:func:`min_resamples`), the one
home of that rule.

Random streams: a data set's generator spawns two children, one for person draws and one
for text draws. Every stream is consumed resample by resample, so the replicates do not
depend on `batch`. Person draws are the same for ``"cluster"`` and ``"hierarchical"``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .registry import MAX_RESAMPLES
from .resources import check_memory

__all__ = [
    "AUTO_BATCH_ELEMENTS",
    "EXACT_GRID_CELLS",
    "MIN_RESAMPLES_PER_TAIL",
    "Statistic",
    "augment",
    "check_resample_count",
    "check_resample_size",
    "draw_replicates",
    "draw_replicates_batch",
    "draw_replicates_many",
    "jackknife",
    "min_resamples",
    "proportion_statistic",
    "replicate_cells",
    "weighted_multiplicities",
]

#: Largest (texts, successes) grid, before padding, of the exact person-resampling
#: distribution (a memory bound: about 50 bytes a cell while it is computed).
EXACT_GRID_CELLS = 1 << 22
#: Resamples each tail of a percentile or BCa interval must hold at least: with B
#: resamples at level c, a tail of probability (1 - c) / 2 holds B (1 - c) / 2 of them, so
#: B must be at least ``ceil(2 * MIN_RESAMPLES_PER_TAIL / (1 - c))`` (:func:`min_resamples`).
MIN_RESAMPLES_PER_TAIL = 1
#: Numbers held per batch of resamples when `batch` is None.
AUTO_BATCH_ELEMENTS = 4_000_000
# Resampled cells evaluated at once: few enough that the metric's temporaries stay in cache.
_EVALUATION_ELEMENTS = 1 << 18

# Costs that choose between exact paths and simulation, in nanoseconds, measured on a
# 2-core x86-64 machine (validation/benchmarks/bench_scale.py times the choices).
# Only speed depends on them: every path is exact.
_FFT_NS_PER_CELL = 60.0  # transforms, power, alias table, per grid cell
_FFT_FIXED_NS = 300_000.0  # set-up of the exact path
_PART_NS = 7.0  # one alias draw of a part (one uniform)
_CDF_NS = 150.0  # one binomial CDF value (scipy.special.bdtr) of one pick's distribution
_PICK_NS = {"cluster": 6.0, "hierarchical": 20.0}  # per person drawn, per resample
_BINOMIAL_NS = 100.0  # one draw of NumPy's binomial with new parameters
_PERSON_NS = 15.0  # one taken person of the hierarchical tree kernel
# The tree kernel's cost of a taken person, a fixed part and a binomial a cell walked,
# against one uniform a text for drawing its texts one by one
_TREE_PERSON_NS = 15.0
_TREE_CELL_NS = 25.0
_TEXT_NS = 7.0
# Multiplicities w up to which the (person, w) tables of the first binomial are built; a
# person is taken more often than 8 times in a resample with probability below 1e-5.
_W_TABLE = 8
# Standard deviations above which a binomial is drawn by NumPy's BTPE, not from the mode,
# and the most texts drawn from the mode (the length of its table of reciprocals).
_FROM_MODE_MAX_SD = 30.0
_FROM_MODE_MAX_TEXTS = 1 << 16
# Standard deviations of the texts left before an iid stage covered by CDF windows: n
# farther out (probability below 1e-8) are searched from the mode instead.
_WINDOW_SD = 6.0


@dataclass(frozen=True)
class Statistic:
    """A metric as a function of flat cell counts ``(..., n_cells)``.

    `proportion` marks the pooled proportion ``cells[..., 0] / cells.sum(-1)`` of
    two-cell counts, whose person-resampling distribution can be computed exactly.
    """

    metric: str
    n_cells: int
    fn: Callable[[np.ndarray], np.ndarray]
    proportion: bool = False


def proportion_statistic() -> Statistic:
    """Return the pooled proportion ``cells[..., 0] / cells.sum(-1)`` of two-cell counts.

    NaN where a resample holds no text. It is marked `proportion`: under person
    resampling its replicates may be drawn from their exact distribution.
    """

    def proportion(cells: np.ndarray) -> np.ndarray:
        total = cells.sum(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(total > 0, cells[..., 0] / np.where(total > 0, total, 1), np.nan)

    return Statistic("proportion", 2, proportion, proportion=True)


def check_resample_size(n_resamples: int, n_data_sets: int = 1) -> None:
    """Refuse too many resamples, or more replicates than fit in memory, before allocating.

    At most :data:`~perfci._core.registry.MAX_RESAMPLES` resamples are drawn. Every
    replicate is kept (``distribution``, 8 bytes each, and about twice as much while the
    interval is computed), so `n_resamples` times the number of data sets is what memory
    must hold.
    """
    if n_resamples > MAX_RESAMPLES:
        raise ValueError(
            f"`n_resamples` must be at most {MAX_RESAMPLES} (every replicate is kept, 8 "
            f"bytes each); got {n_resamples}. A few thousand resamples give an interval "
            "whose Monte-Carlo error is small; ask for fewer."
        )
    sets = "1 data set" if n_data_sets == 1 else f"{n_data_sets} data sets"
    check_memory(
        3 * 8 * n_resamples * n_data_sets,
        f"`n_resamples` = {n_resamples} for {sets}",
        "ask for fewer resamples, or pass fewer data sets per call",
    )


def min_resamples(confidence_level: float) -> int:
    """Return the fewest bootstrap resamples a percentile or BCa interval at a level takes.

    Each tail of the interval, of probability ``(1 - confidence_level) / 2``, must hold at
    least :data:`MIN_RESAMPLES_PER_TAIL` resamples: ``ceil(2 / (1 - confidence_level))``,
    40 at 95%, 200 at 99%. With fewer, an end is read off beyond the outermost replicates
    the tail cannot tell apart (with one resample, a zero-width interval that may miss the
    estimate). BCa moves the tail probabilities by the data's bias correction and
    acceleration, known only after resampling; it takes the same minimum.

    Parameters
    ----------
    confidence_level : float
        The level, strictly between 0 and 1 (checked by the caller).

    Returns
    -------
    int
        The minimum number of resamples.

    Examples
    --------
    >>> from perfci._core.resampling import min_resamples
    >>> min_resamples(0.95), min_resamples(0.99), min_resamples(0.9)
    (40, 200, 20)
    """
    tail = (1.0 - float(confidence_level)) / 2.0
    # rounded before the ceiling, so that 1 - 0.95 (0.05000000000000004) gives 40, not 41
    return max(1, math.ceil(round(MIN_RESAMPLES_PER_TAIL / tail, 6)))


def check_resample_count(
    n_resamples: Any, confidence_level: float, interval: str = "percentile"
) -> int:
    """Refuse fewer bootstrap resamples than a percentile or BCa interval at a level needs.

    The one home of the rule of :func:`min_resamples` (each tail of the interval holds a
    resample): every public function that draws a percentile or BCa interval calls it
    with its resamples and level. ``n_resamples="exact"`` (the infinite-resample limit)
    is not a count and is not checked here.

    Parameters
    ----------
    n_resamples : int
        The resamples asked for, already checked to be a positive integer.
    confidence_level : float
        The level of the interval.
    interval : {"percentile", "bca"}, default "percentile"
        The interval, for the message.

    Returns
    -------
    int
        `n_resamples`, as an int.

    Raises
    ------
    ValueError
        When `n_resamples` is below :func:`min_resamples` of `confidence_level`.

    Examples
    --------
    >>> from perfci._core.resampling import check_resample_count
    >>> check_resample_count(40, 0.95)
    40
    >>> check_resample_count(1, 0.95)
    Traceback (most recent call last):
    ...
    ValueError: `n_resamples` must be at least 40 for a 95% percentile interval (each tail needs a resample); got 1.
    """  # noqa: E501
    minimum = min_resamples(confidence_level)
    if n_resamples < minimum:
        name = "BCa" if interval == "bca" else "percentile"
        level = f"{100 * float(confidence_level):.10g}%"
        raise ValueError(
            f"`n_resamples` must be at least {minimum} for a {level} {name} interval (each "
            f"tail needs a resample); got {n_resamples}."
        )
    return int(n_resamples)


def augment(cells: np.ndarray, scheme: str, pseudo_count: int) -> np.ndarray:
    """Return the sample the bootstrap resamples: λ per cell, or a pseudo-person.

    `cells` is ``(C,)`` for ``"iid"`` and ``(m, C)`` (persons with texts) otherwise.
    """
    if scheme == "iid":
        return cells + pseudo_count
    if pseudo_count:
        return np.vstack([cells, np.full(cells.shape[-1], pseudo_count, dtype=cells.dtype)])
    return cells


def _conditional_shares(cells: np.ndarray) -> np.ndarray:
    """P(cell c | not in cells before c) for each row of cell counts, c < C - 1."""
    remaining = np.cumsum(cells[..., ::-1], axis=-1)[..., ::-1]  # counts of cells c..C-1
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(remaining > 0, cells / np.where(remaining > 0, remaining, 1), 0.0)
    return np.clip(cond[..., :-1], 0.0, 1.0)


def _padded_length(n: int) -> int:
    from scipy import fft as scipy_fft

    return int(scipy_fft.next_fast_len(n, real=True))


@dataclass(frozen=True)
class _Parts:
    """A proportion's person resample as `parts` parts of k persons (the last of `last_k`).

    One part's (texts, successes) is the sum of k independent picks, drawn from its exact
    distribution: ``full`` (``last`` for the last part) is a (share, alias, texts,
    successes) alias table of the part's outcomes, its texts counted above k n_min (the
    resample's texts are m n_min more, `texts_base`).
    """

    k: int
    parts: int
    last_k: int
    full: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    last: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    texts_base: int


def _proportion_parts(cells: np.ndarray, scheme: str, n_resamples: int) -> _Parts | None:
    """Plan the exact draw of a pooled proportion's person resamples, or None to simulate.

    A resample takes m persons independently and uniformly; each taken person i brings
    n_i texts and x successes, x = y_i (cluster) or x ~ Binomial(n_i, y_i / n_i)
    (hierarchical). The resample's (texts, successes) is therefore the sum of m iid picks,
    and the sum of any k of them has the k-fold convolution of one pick's distribution,
    computed by FFT. Persons are binned by size: a sum of k picks has ``k n_min + d j``
    texts, d the greatest common divisor of the n_i - n_min, which gives the grid's rows
    (one row, a 1-D transform, when all sizes are equal). A resample is then q = ceil(m /
    k) independent parts, each one draw from its part's exact distribution. k = m is the
    exact bootstrap distribution (one draw per resample); k = 1 draws every pick.

    k is chosen by cost: :data:`_FFT_NS_PER_CELL` per grid cell against
    :data:`_PART_NS` per drawn part, and against simulating the persons
    (:data:`_PICK_NS`); None when simulation is cheaper or no grid fits in
    :data:`EXACT_GRID_CELLS`.
    """
    from scipy import fft as scipy_fft
    from scipy import special

    from . import kernels

    m = cells.shape[0]
    sizes = cells.sum(-1).astype(np.int64)
    n_min, n_max = int(sizes.min()), int(sizes.max())
    step = int(np.gcd.reduce(sizes - n_min)) or 1
    span = (n_max - n_min) // step
    k = np.arange(1, m + 1, dtype=float)
    grid = (k * span + 1) * (k * n_max + 1)
    cost = _FFT_NS_PER_CELL * grid + n_resamples * np.ceil(m / k) * _PART_NS
    cost[grid > EXACT_GRID_CELLS] = np.inf
    best = int(np.argmin(cost))
    # one pick's distribution over (row of texts, successes), from the distinct persons
    key, count = np.unique(sizes * (n_max + 1) + cells[:, 0].astype(np.int64), return_counts=True)
    pairs = np.stack(np.divmod(key, n_max + 1), axis=-1)
    one_pick_ns = 0.0 if scheme == "cluster" else _CDF_NS * pairs.shape[0] * (n_max + 2)
    if not cost[best] + one_pick_ns + _FFT_FIXED_NS < n_resamples * m * _PICK_NS[scheme]:
        return None
    k_best = best + 1
    parts = -(-m // k_best)
    last = m - (parts - 1) * k_best
    rows, cols = k_best * span + 1, k_best * n_max + 1
    row = (pairs[:, 0] - n_min) // step
    one_pick = np.zeros((span + 1, n_max + 1))
    if scheme == "cluster":
        one_pick[row, pairs[:, 1]] = count / m
    else:
        # Binomial(n_i, y_i / n_i) from differences of its CDF (to 1e-16 absolute)
        x = np.arange(-1, n_max + 1)[None, :]
        n, p = pairs[:, :1], pairs[:, 1:] / pairs[:, :1]
        cdf = special.bdtr(np.clip(x, 0, n), n, p)
        pmf = np.diff(np.where(x < 0, 0.0, cdf), axis=-1)
        np.add.at(one_pick, row, pmf * (count / m)[:, None])
    # zero padding to fast lengths at least the full support: no wrap-around
    shape = (1 if rows == 1 else _padded_length(rows), _padded_length(cols))
    if rows == 1:
        spectrum = scipy_fft.rfft(one_pick[0], n=shape[1])[None, :]
    else:
        spectrum = scipy_fft.rfft2(one_pick, s=shape)
    del one_pick

    def table(count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        power = spectrum**count
        if rows == 1:
            total = scipy_fft.irfft(power[0], n=shape[1])[None, :cols]
        else:
            total = scipy_fft.irfft2(power, s=shape)[:rows, :cols]
        del power
        # the support of a sum of `count` picks: its rows, and no more successes than texts
        texts = count * n_min + step * np.arange(rows)[:, None]
        outside = (np.arange(rows)[:, None] > count * span) | (np.arange(cols)[None, :] > texts)
        total[outside] = 0.0
        pmf = np.maximum(total, 0.0).ravel()  # round-off leaves tiny negatives
        cell = np.flatnonzero(pmf)
        share, alias = kernels.alias_table(pmf[cell])
        above, hits = np.divmod(cell, cols)
        return share, alias, (step * above).astype(np.int64), hits.astype(np.int64)

    full = table(k_best)
    return _Parts(
        k=k_best,
        parts=parts,
        last_k=last,
        full=full,
        last=full if last == k_best else table(last),
        texts_base=m * n_min,
    )


def _unique_within(owner: np.ndarray, rows: np.ndarray, sets: int):
    """Distinct rows within each data set, in the order :func:`numpy.unique` gives them.

    `owner` is each row's data set (sorted). Returns each row's index among its data
    set's distinct rows, the distinct rows (data set after data set, each data set's in
    lexicographic order, as ``np.unique(rows_of_that_set, axis=0)`` orders them) and
    where each data set's distinct rows start (``sets + 1`` offsets).
    """
    unique, inverse = np.unique(np.c_[owner, rows], axis=0, return_inverse=True)
    starts = np.searchsorted(unique[:, 0], np.arange(sets + 1))
    return inverse.reshape(-1) - starts[owner], unique[:, 1:], starts


def _reduced(counts: np.ndarray) -> np.ndarray:
    """Each row divided by the greatest common divisor of its entries (0 rows stay 0)."""
    divisor = np.gcd.reduce(counts, axis=-1)
    return counts // np.where(divisor > 0, divisor, 1)[:, None]


class _Hierarchical:
    """Tables of the hierarchical scheme for K samples, and the kernels that use them.

    Exact ways to draw the texts of the taken persons, chosen by cost (draws differ,
    distributions do not): if a sample's persons fall into few kinds with the same cell
    shares, a kind's texts are one multinomial per resample; otherwise a person with few
    texts over many cells has them drawn one by one (one uniform each), and any other
    taken person's texts are split between two halves of the cells by a binomial drawn
    from the mode with (person, w) tables, and the last two cells of each half pool over
    persons with the same share (:func:`perfci._core.kernels.tree_resamples`).

    The tables of all samples are computed together, over their persons stacked (distinct
    rows found within each sample, in the order a sample alone gives them; the binomial
    tables once per distinct (n_i, texts in the first half) of all samples): sample k's
    tables are those it would get alone, entry for entry.
    """

    def __init__(self, samples: Sequence[np.ndarray]) -> None:
        from scipy import stats

        sets = len(samples)
        persons = np.array([len(cells) for cells in samples], dtype=np.int64)
        self.offsets = np.zeros(sets + 1, dtype=np.int64)
        np.cumsum(persons, out=self.offsets[1:])
        owner = np.repeat(np.arange(sets), persons)
        counts = np.concatenate([np.asarray(c) for c in samples]).astype(np.int64)
        n_cells = counts.shape[-1]
        self.sizes = counts.sum(-1)
        self.kind, kinds, self.kind_starts = _unique_within(owner, _reduced(counts), sets)
        n_kinds = np.diff(self.kind_starts)
        self.by_kind = n_kinds * (n_cells - 1) * _BINOMIAL_NS <= persons * _PERSON_NS
        self.kind_conditional = _conditional_shares(kinds.astype(float))
        half = n_cells // 2
        self.halves = np.array([[0, half], [half, n_cells]], dtype=np.int64)
        first = counts[:, :half].sum(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.root = first / self.sizes
        root = self.root
        # (person, w) tables of Binomial(w n_i, root_i) at its mode, computed once per
        # distinct (n_i, texts in the first half) of the samples drawn person by person
        tree = ~self.by_kind[owner]
        pairs, person_pair = np.unique(np.c_[self.sizes, first][tree], axis=0, return_inverse=True)
        w = np.arange(_W_TABLE + 1)
        n = w[None, :] * pairs[:, :1]
        p = pairs[:, 1:] / pairs[:, :1]
        mode = np.minimum(np.floor((n + 1) * p), n).astype(np.int64)
        pmf_mode = stats.binom.pmf(mode, n, p)
        by_mode = (
            (p > 0)
            & (p < 1)
            & (w[None, :] > 0)
            & (np.sqrt(n * p * (1 - p)) <= _FROM_MODE_MAX_SD)
            & (n <= _FROM_MODE_MAX_TEXTS)
            & (pmf_mode > 0)
        )
        shape = (counts.shape[0], _W_TABLE + 1)
        self.mode = np.zeros(shape, dtype=np.int64)
        self.pmf_mode, self.cdf_mode = np.zeros(shape), np.zeros(shape)
        self.by_mode = np.zeros(shape, dtype=np.bool_)
        at = person_pair.reshape(-1)
        self.mode[tree], self.pmf_mode[tree] = mode[at], pmf_mode[at]
        self.cdf_mode[tree] = stats.binom.cdf(mode, n, p)[at]
        self.by_mode[tree] = by_mode[at]
        # 1 / j up to the longest binomial drawn from the mode (the same numbers for all)
        longest = int(n[by_mode].max(initial=0))
        with np.errstate(divide="ignore"):
            self.reciprocal = 1.0 / np.arange(longest + 2, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.odds = np.where((root > 0) & (root < 1), root / (1 - root), 1.0)
        # conditional shares within each half (cells but the half's last two), and the
        # pools of the last two cells of each half
        self.conditional = np.zeros((counts.shape[0], n_cells))
        self.pools: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, int]] = []
        for h, (lo, hi) in enumerate(self.halves.tolist()):
            if hi - lo >= 3:
                self.conditional[:, lo : hi - 2] = _conditional_shares(counts[:, lo:hi])[
                    :, : hi - lo - 2
                ]
            if hi - lo >= 2:
                a, b = counts[:, hi - 2], counts[:, hi - 1]
                pool, key, starts = _unique_within(
                    owner, _reduced(np.stack([a, a + b], axis=-1)), sets
                )
                with np.errstate(divide="ignore", invalid="ignore"):
                    share = np.where(
                        key[:, 1] > 0, key[:, 0] / np.where(key[:, 1] > 0, key[:, 1], 1), 0.0
                    )
                self.pools.append((h, pool, share, starts, hi - 2))
        # persons whose texts are drawn one by one (kernels.tree_resamples), and up to
        # how many times taken: one uniform a text against a binomial a cell walked, up
        # to each half's last occupied cell
        walked = np.zeros(counts.shape[0])
        for lo, hi in self.halves.tolist():
            filled = counts[:, lo:hi] > 0
            last = np.where(filled.any(-1), hi - lo - np.argmax(filled[:, ::-1], -1), 0)
            walked += np.minimum(last, max(hi - lo - 2, 0))
        tree_ns = _TREE_PERSON_NS + _TREE_CELL_NS * walked
        upto = np.floor(tree_ns / (_TEXT_NS * np.maximum(self.sizes, 1)))
        self.direct_upto = np.where(tree, np.minimum(upto, _W_TABLE), 0).astype(np.int64)
        direct = self.direct_upto > 0
        self.text_start = np.zeros(counts.shape[0], dtype=np.int64)
        np.cumsum(np.where(direct, self.sizes, 0)[:-1], out=self.text_start[1:])
        kept = counts[direct]
        self.text_cell = np.repeat(
            np.tile(np.arange(n_cells, dtype=np.int32), kept.shape[0]), kept.ravel()
        )

    def fill(self, k: int, picks: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        """Add sample k's resampled cells of the resamples in `picks` to `out`, in order."""
        from . import kernels

        rows = slice(self.offsets[k], self.offsets[k + 1])
        if self.by_kind[k]:
            kinds = slice(self.kind_starts[k], self.kind_starts[k + 1])
            kernels.kind_resamples(
                picks, self.sizes[rows], self.kind[rows], self.kind_conditional[kinds], rng, out
            )
            return
        group = np.zeros((rows.stop - rows.start, 2), dtype=np.int64)
        shares: list[np.ndarray] = []
        cells: list[np.ndarray] = []
        for h, pool, share, starts, cell in self.pools:
            group[:, h] = pool[rows] + sum(s.size for s in shares)
            shares.append(share[starts[k] : starts[k + 1]])
            cells.append(np.full(shares[-1].size, cell, dtype=np.int64))
        kernels.tree_resamples(
            picks,
            self.sizes[rows],
            self.root[rows],
            self.odds[rows],
            self.mode[rows],
            self.pmf_mode[rows],
            self.cdf_mode[rows],
            self.by_mode[rows],
            self.reciprocal,
            self.conditional[rows],
            self.halves,
            group,
            np.concatenate(shares) if shares else np.zeros(0),
            np.concatenate(cells) if cells else np.zeros(0, dtype=np.int64),
            self.direct_upto[rows],
            self.text_start[rows],
            self.text_cell,
            rng,
            out,
        )


class _Iid:
    """Tables of the iid scheme for K samples: their conditional binomials by inversion.

    A resample of N texts is Multinomial(N, shares). When N is at most
    :data:`_FROM_MODE_MAX_TEXTS` and every conditional binomial's standard deviation at
    most :data:`_FROM_MODE_MAX_SD`, it is drawn as C - 1 binomials of the texts left, each
    the inverse CDF of one uniform (:func:`perfci._core.kernels.iid_cells`); otherwise by
    NumPy's multinomial. The n of a binomial depends on the cells before it:
    :func:`perfci._core.kernels.mode_tables` tabulates every n <= N at its mode, and
    :func:`perfci._core.kernels.window_tables` a CDF window around the mode for the n
    within :data:`_WINDOW_SD` standard deviations of their mean (the texts left are
    Binomial(N, share of the cells from c on)). The shares are computed for all samples
    at once; the tables one sample at a time, in one set of buffers.
    """

    def __init__(self, samples: np.ndarray) -> None:
        from . import kernels

        counts = np.asarray(samples, dtype=np.int64).reshape(-1, samples.shape[-1])
        self.sizes = counts.sum(-1)
        self.shares = counts / np.maximum(self.sizes, 1)[:, None]
        p = self.conditional = _conditional_shares(counts.astype(float))
        self.from_uniforms = (self.sizes <= _FROM_MODE_MAX_TEXTS) & np.all(
            np.sqrt(self.sizes[:, None] * p * (1 - p)) <= _FROM_MODE_MAX_SD, axis=-1
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            self.odds = np.where((p > 0) & (p < 1), p / (1 - p), 1.0)
        # texts left before stage c: Binomial(N, share of cells c..C-1); its likely range
        sizes = self.sizes[:, None].astype(float)
        left = np.cumsum(self.shares[:, ::-1], axis=-1)[:, ::-1][:, : p.shape[-1]]
        spread = _WINDOW_SD * np.sqrt(sizes * left * np.clip(1 - left, 0, 1))
        self.base = np.clip(np.floor(sizes * left - spread) - 1, 0, sizes).astype(np.int64)
        top = np.clip(np.ceil(sizes * left + spread) + 1, 0, sizes).astype(np.int64)
        self.first = np.zeros((counts.shape[0], p.shape[-1] + 1), dtype=np.int64)
        np.cumsum(top - self.base + 1, axis=-1, out=self.first[:, 1:])
        width = int(self.sizes[self.from_uniforms].max(initial=0)) + 1
        rows = int(self.first[self.from_uniforms, -1].max(initial=0))
        stages = p.shape[-1]
        self.mode = np.zeros((stages, width), dtype=np.int64)
        self.pmf = np.zeros((stages, width))
        self.cdf = np.zeros((stages, width))
        self.below = np.zeros(rows)
        self.window = np.zeros((rows, kernels.WINDOW))
        with np.errstate(divide="ignore"):
            self.reciprocal = 1.0 / np.arange(width + 1, dtype=float)
        self._tabled = -1  # the sample whose tables the buffers hold

    def fill(self, k: int, rng: np.random.Generator, out: np.ndarray) -> None:
        """Write sample k's next ``out.shape[0]`` resamples' cells into `out`, in order."""
        from . import kernels

        size = int(self.sizes[k])
        if not self.from_uniforms[k]:
            out[:] = rng.multinomial(size, self.shares[k], size=out.shape[0])
            return
        conditional, first, base = self.conditional[k], self.first[k], self.base[k]
        if self._tabled != k:
            kernels.mode_tables(size, conditional, self.mode, self.pmf, self.cdf)
            kernels.window_tables(
                conditional,
                self.mode,
                self.pmf,
                self.cdf,
                self.reciprocal,
                first,
                base,
                self.below,
                self.window,
            )
            self._tabled = k
        kernels.iid_cells(
            size,
            conditional,
            self.odds[k],
            self.mode,
            self.pmf,
            self.cdf,
            self.reciprocal,
            first,
            base,
            self.below,
            self.window,
            rng.random((out.shape[0], conditional.size)),
            out,
        )


def _auto_batch(augmented: np.ndarray, scheme: str, batch: int | None) -> int:
    if batch is not None:
        return batch
    # the person schemes hold int32 picks of every person per resample
    width = augmented.size if scheme == "iid" else augmented.shape[0]
    return max(1, AUTO_BATCH_ELEMENTS // max(width, 1))


def replicate_cells(
    augmented: np.ndarray,
    scheme: str,
    n_resamples: int,
    rng: np.random.Generator,
    *,
    batch: int | None = None,
) -> Iterator[np.ndarray]:
    """Yield the resampled cell counts, ``(b, C)`` floats per batch, in draw order.

    Parameters are those of :func:`draw_replicates`; the blocks together hold
    `n_resamples` rows whatever `batch` is, and the same rows for every `batch`.
    """
    batch = _auto_batch(augmented, scheme, batch)
    if scheme == "iid":
        texts = _Iid(augmented[None, :])
        for start in range(0, n_resamples, batch):
            b = min(batch, n_resamples - start)
            out = np.empty((b, augmented.shape[-1]))
            texts.fill(0, rng, out)
            yield out
        return
    yield from _person_cells(augmented, scheme, n_resamples, rng, batch, None, 0)


def _person_cells(
    augmented: np.ndarray,
    scheme: str,
    n_resamples: int,
    rng: np.random.Generator,
    batch: int,
    hierarchical: _Hierarchical | None,
    k: int,
) -> Iterator[np.ndarray]:
    """Blocks of resampled cells of a person scheme (`hierarchical`: tables, sample k)."""
    from . import kernels

    person_rng, text_rng = rng.spawn(2)
    m = augmented.shape[0]
    if scheme == "hierarchical" and hierarchical is None:
        hierarchical = _Hierarchical([augmented])
    cells = np.ascontiguousarray(augmented, dtype=float)
    for start in range(0, n_resamples, batch):
        b = min(batch, n_resamples - start)
        # which person each of the m draws of a resample takes (Multinomial(m, 1/m) counted)
        picks = person_rng.integers(0, m, size=(b, m), dtype=np.int32)
        out = np.zeros((b, augmented.shape[1]))
        if hierarchical is None:
            kernels.cluster_totals(picks, cells, out)
        else:
            hierarchical.fill(k, picks, text_rng, out)
        yield out


def _draw_parts(
    plan: _Parts, n_resamples: int, rng: np.random.Generator, batch: int | None
) -> np.ndarray:
    """Replicates of a pooled proportion drawn part by part (:func:`_proportion_parts`)."""
    from . import kernels

    _, text_rng = rng.spawn(2)
    if batch is None:
        batch = max(1, AUTO_BATCH_ELEMENTS // plan.parts)
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, batch):
        b = min(batch, n_resamples - start)
        u = text_rng.random((b, plan.parts))  # one uniform a part
        kernels.part_sums(u, plan.full, plan.last, plan.texts_base, out[start : start + b])
    return out


def draw_replicates_many(
    augmented: np.ndarray,
    scheme: str,
    n_resamples: int,
    statistics: Sequence[Statistic],
    rng: np.random.Generator,
    *,
    batch: int | None = None,
) -> np.ndarray:
    """Replicates of several statistics from one set of resamples, ``(S, B)``.

    Every statistic is evaluated on the same resampled cells, so the replicates of
    statistic s equal ``draw_replicates(..., statistics[s], rng)`` draw for draw (with a
    generator in the same state), except for a pooled proportion alone, which
    :func:`draw_replicates` may draw from its exact distribution.
    """
    out = np.empty((len(statistics), n_resamples))
    start = 0
    for block in replicate_cells(augmented, scheme, n_resamples, rng, batch=batch):
        for s, statistic in enumerate(statistics):
            out[s, start : start + block.shape[0]] = statistic.fn(block)
        start += block.shape[0]
    return out


class _Evaluation:
    """Resampled cells of many data sets, gathered in one buffer and evaluated together.

    Each statistic is a function of cell counts row by row, so evaluating the rows of
    several data sets in one call gives every row the value of its own call.
    """

    def __init__(self, statistics: Sequence[Statistic], out: np.ndarray, n_cells: int) -> None:
        self.statistics = statistics
        self.flat = out.reshape(out.shape[0], -1)  # (S, K * B): data set k's row at k * B
        self.rows = max(1, min(AUTO_BATCH_ELEMENTS, _EVALUATION_ELEMENTS) // n_cells)
        self.buffer = np.empty((self.rows, n_cells))
        self.filled = 0
        self.segments: list[tuple[int, int]] = []  # (first row of `flat`, rows)

    def space(self, rows: int) -> np.ndarray:
        """Return a view of the buffer for the next `rows` rows (flushing first if need be)."""
        if self.filled + rows > self.rows:
            self.flush()
            if rows > self.rows:  # one block larger than the buffer
                self.buffer = np.empty((rows, self.buffer.shape[1]))
                self.rows = rows
        return self.buffer[self.filled : self.filled + rows]

    def add(self, position: int, rows: int) -> None:
        """Record that the next `rows` rows of the buffer hold `flat`'s from `position`."""
        self.segments.append((position, rows))
        self.filled += rows

    def flush(self) -> None:
        """Evaluate the gathered rows and write their values where they belong."""
        if not self.filled:
            return
        block = self.buffer[: self.filled]
        for s, statistic in enumerate(self.statistics):
            values = statistic.fn(block)
            at = 0
            for position, rows in self.segments:
                self.flat[s, position : position + rows] = values[at : at + rows]
                at += rows
        self.filled = 0
        self.segments = []


def draw_replicates_batch(
    samples: Sequence[np.ndarray],
    scheme: str,
    n_resamples: int,
    statistics: Sequence[Statistic],
    generators: Sequence[np.random.Generator],
    *,
    batch: int | None = None,
) -> np.ndarray:
    """Replicates of K data sets, ``(S, K, B)``: the engine's batched entry point.

    Sample k (see :func:`augment`) is resampled with ``generators[k]``; its replicates
    equal ``draw_replicates(samples[k], ..., statistics[0], generators[k])`` for one
    statistic, else ``draw_replicates_many(samples[k], ..., statistics, generators[k])``,
    draw for draw. What is shared across data sets is the work around the draws: the iid
    scheme's shares, and the evaluation of the statistics, which runs on the resampled
    cells of many data sets at once (about 2^18 numbers, at most
    :data:`AUTO_BATCH_ELEMENTS`).
    """
    size = len(samples)
    out = np.empty((len(statistics), size, n_resamples))
    if not size:
        return out
    n_cells = samples[0].shape[-1]
    evaluation = _Evaluation(statistics, out, n_cells)
    exact = len(statistics) == 1 and statistics[0].proportion and scheme != "iid"
    plans = [
        _proportion_parts(sample, scheme, n_resamples) if exact else None for sample in samples
    ]
    simulated = [k for k, plan in enumerate(plans) if plan is None]
    texts = _Iid(np.stack(samples)) if scheme == "iid" else None
    hierarchical = scheme == "hierarchical" and bool(simulated)
    tables = _Hierarchical([samples[k] for k in simulated]) if hierarchical else None
    index = {k: j for j, k in enumerate(simulated)}  # sample k's place in the tables
    for k, (sample, rng, plan) in enumerate(zip(samples, generators, plans, strict=True)):
        if plan is not None:
            out[0, k] = _draw_parts(plan, n_resamples, rng, batch)
            continue
        position = k * n_resamples
        step = _auto_batch(sample, scheme, batch)
        if texts is not None:
            for start in range(0, n_resamples, step):
                rows = min(step, n_resamples - start)
                texts.fill(k, rng, evaluation.space(rows))
                evaluation.add(position + start, rows)
            continue
        for block in _person_cells(sample, scheme, n_resamples, rng, step, tables, index[k]):
            evaluation.space(block.shape[0])[:] = block
            evaluation.add(position, block.shape[0])
            position += block.shape[0]
    evaluation.flush()
    return out


def draw_replicates(
    augmented: np.ndarray,
    scheme: str,
    n_resamples: int,
    statistic: Statistic,
    rng: np.random.Generator,
    *,
    batch: int | None = None,
) -> np.ndarray:
    """Bootstrap replicates of one data set, in draw order (NaN where undefined).

    Parameters
    ----------
    augmented : numpy.ndarray
        The sample to resample (see :func:`augment`): ``(C,)`` for ``"iid"``, ``(m, C)``
        persons with texts for ``"cluster"`` and ``"hierarchical"``.
    scheme : {"iid", "cluster", "hierarchical"}
        What is resampled.
    n_resamples : int
        B.
    statistic : Statistic
        The metric of a resample's cells.
    rng : numpy.random.Generator
        The data set's generator; it spawns the person and text streams.
    batch : int, optional
        Resamples drawn at once (memory); the replicates do not depend on it. Default:
        about :data:`AUTO_BATCH_ELEMENTS` numbers a batch (cells, or persons, times
        resamples).

    Returns
    -------
    numpy.ndarray
        ``(B,)`` replicates. For a pooled proportion under person resampling, when its
        (texts, successes) grid costs less than simulation, the replicates are drawn from
        the exact bootstrap distribution (one uniform each), which is the distribution
        resampling would give.
    """
    if statistic.proportion and scheme != "iid":
        plan = _proportion_parts(augmented, scheme, n_resamples)
        if plan is not None:
            return _draw_parts(plan, n_resamples, rng, batch)
    return draw_replicates_many(augmented, scheme, n_resamples, (statistic,), rng, batch=batch)[0]


def jackknife(
    augmented: np.ndarray, scheme: str, statistic: Statistic
) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out values and their weights: one text of each kind, or one person."""
    cells = augmented.astype(float)
    if scheme == "iid":
        kinds = np.flatnonzero(cells > 0)
        left_out = cells[None, :] - np.eye(cells.size)[kinds]
        return statistic.fn(left_out), cells[kinds]
    total = cells.sum(0)
    return statistic.fn(total[None, :] - cells), np.ones(cells.shape[0])


def weighted_multiplicities(
    n: int, shares: np.ndarray, n_resamples: int, rng: np.random.Generator, *, batch: int
) -> Iterator[np.ndarray]:
    """Yield blocks ``(b, m)`` of Multinomial(`n`, `shares`) draws, `batch` resamples at a time.

    How often each of m units is taken in each of `n_resamples` resamples of `n` draws with
    replacement, unit j with probability ``shares[j]``: the draw of the two-way (units x
    runs, units x annotators) bootstrap of :mod:`perfci.crossed`, where a unit may stand
    for several identical ones (its share is their number over `n`), and where the runs
    are drawn the same way with equal shares. Blocks change the memory, not the draws.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.resampling import weighted_multiplicities
    >>> rng = np.random.default_rng(0)
    >>> blocks = list(weighted_multiplicities(5, np.array([0.6, 0.4]), 3, rng, batch=2))
    >>> [b.shape for b in blocks], bool(np.all(np.concatenate(blocks).sum(1) == 5))
    ([(2, 2), (1, 2)], True)
    """
    for start in range(0, n_resamples, batch):
        b = min(batch, n_resamples - start)
        yield rng.multinomial(n, shares, size=b).astype(float)
