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
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .cell_draws import (
    EVALUATION_ELEMENTS,
    HierarchicalTables,
    IidTables,
    expand_pooled,
    pool_matrix,
)
from .registry import MAX_RESAMPLES
from .resources import check_memory
from .streams import DataSetStreams, StreamSubset
from .validation import N_RESAMPLES

__all__ = [
    "AUTO_BATCH_ELEMENTS",
    "EXACT_GRID_CELLS",
    "MIN_RESAMPLES_PER_TAIL",
    "TAIL_RESAMPLES",
    "Statistic",
    "augment",
    "check_resample_count",
    "check_resample_size",
    "default_resamples",
    "draw_replicates",
    "draw_replicates_batch",
    "draw_replicates_many",
    "iid_jackknife",
    "jackknife",
    "min_resamples",
    "proportion_statistic",
    "renumbered",
    "replicate_cells",
    "shared_pooling",
    "weighted_multiplicities",
]

#: Largest (texts, successes) grid, before padding, of the exact person-resampling
#: distribution (a memory bound: about 50 bytes a cell while it is computed).
EXACT_GRID_CELLS = 1 << 22
#: Resamples each tail of a percentile or BCa interval must hold at least: with B
#: resamples at level c, a tail of probability (1 - c) / 2 holds B (1 - c) / 2 of them, so
#: B must be at least ``ceil(2 * MIN_RESAMPLES_PER_TAIL / (1 - c))`` (:func:`min_resamples`).
MIN_RESAMPLES_PER_TAIL = 1
#: Resamples beyond each end of a percentile interval that the default count keeps at any
#: level (:func:`default_resamples`): 2,000 keeps 10 at 99%.
TAIL_RESAMPLES = 10
#: Numbers held per batch of resamples when `batch` is None.
AUTO_BATCH_ELEMENTS = 4_000_000


# Costs that choose between exact paths and simulation, in nanoseconds, measured on a
# 2-core x86-64 machine (validation/benchmarks/bench_scale.py times the choices).
# Only speed depends on them: every path is exact.
_FFT_NS_PER_CELL = 60.0  # transforms, power, alias table, per grid cell
_FFT_FIXED_NS = 300_000.0  # set-up of the exact path
_PART_NS = 7.0  # one alias draw of a part (one uniform)
_CDF_NS = 150.0  # one binomial CDF value (scipy.special.bdtr) of one pick's distribution
_PICK_NS = {"cluster": 6.0, "hierarchical": 20.0}  # per person drawn, per resample


@dataclass(frozen=True)
class Statistic:
    """A metric as a function of flat cell counts ``(..., n_cells)``.

    `proportion` marks the pooled proportion ``cells[..., 0] / cells.sum(-1)`` of
    two-cell counts, whose person-resampling distribution can be computed exactly.
    `pooling` (one group number per cell, groups numbered from 0 in order of their first
    cell) says which cells the statistic only reads through their sum: its value is the
    same when each group's total stands in the group's first cell and its other cells
    hold 0. The iid scheme then draws the groups' totals, a multinomial over fewer cells
    (the marginal law of the resampled cells' sums, so the same distribution of the
    statistic) in fewer binomials; None reads every cell.
    """

    metric: str
    n_cells: int
    fn: Callable[[np.ndarray], np.ndarray]
    proportion: bool = False
    pooling: tuple[int, ...] | None = None


def renumbered(groups: Sequence[Hashable]) -> tuple[int, ...]:
    """Return cell groups (any labels) numbered from 0 in order of their first cell."""
    order: dict[Hashable, int] = {}
    return tuple(order.setdefault(g, len(order)) for g in groups)


def shared_pooling(statistics: Sequence[Statistic]) -> tuple[int, ...] | None:
    """Return the cell groups every statistic reads only through their sums, or None.

    Cells share a group when they do in every statistic (the partitions' common
    refinement); None when some statistic reads every cell or no two cells pool.
    """
    if not statistics or any(s.pooling is None for s in statistics):
        return None
    groups = renumbered(list(zip(*(s.pooling for s in statistics), strict=True)))
    return None if len(set(groups)) == len(groups) else groups


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
    return max(1, _resamples_for_tails(MIN_RESAMPLES_PER_TAIL, confidence_level))


def _resamples_for_tails(per_tail: int, confidence_level: float) -> int:
    """Resamples that put `per_tail` of them in each tail of a level's percentile interval."""
    tail = (1.0 - float(confidence_level)) / 2.0
    # rounded before the ceiling, so that 1 - 0.95 (0.05000000000000004) gives 40, not 41
    return math.ceil(round(per_tail / tail, 6))


def default_resamples(confidence_level: float) -> int:
    """Return the bootstrap resamples drawn when `n_resamples` is left unset.

    :data:`~perfci._core.validation.N_RESAMPLES` (2,000) up to a 99% level, where it keeps
    :data:`TAIL_RESAMPLES` resamples beyond each end of a percentile interval; above 99%,
    as many as keep that many, ``ceil(2 * TAIL_RESAMPLES / (1 - confidence_level))``
    (20,000 at 99.9%, 200,000 at 99.99%), at most :data:`~perfci._core.registry.MAX_RESAMPLES`.
    A fixed count would leave the tails of a high level with one resample or none (2,000
    cannot give a 99.99% interval at all).

    Parameters
    ----------
    confidence_level : float
        The level, strictly between 0 and 1 (checked by the caller).

    Returns
    -------
    int
        The default number of resamples.

    Examples
    --------
    >>> from perfci._core.resampling import default_resamples
    >>> default_resamples(0.95), default_resamples(0.99), default_resamples(0.9999)
    (2000, 2000, 200000)
    """
    needed = _resamples_for_tails(TAIL_RESAMPLES, confidence_level)
    return min(MAX_RESAMPLES, max(N_RESAMPLES, needed))


def check_resample_count(
    n_resamples: Any,
    confidence_level: float,
    interval: str = "percentile",
    *,
    defaulted: bool = False,
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
    defaulted : bool, default False
        Whether `n_resamples` is :func:`default_resamples`' count (the user left it unset):
        only a level beyond what :data:`~perfci._core.registry.MAX_RESAMPLES` can serve is
        then too high, and the message names `confidence_level`.

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
        if defaulted:
            raise ValueError(
                f"`confidence_level` {float(confidence_level)!r} is too high for a bootstrap "
                f"interval: its tails need at least {minimum} resamples, more than the "
                f"{MAX_RESAMPLES} perfci draws; lower it or use an analytic method."
            )
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
    pooling: tuple[int, ...] | None = None,
) -> Iterator[np.ndarray]:
    """Yield the resampled cell counts, ``(b, C)`` floats per batch, in draw order.

    Parameters are those of :func:`draw_replicates`; the blocks together hold
    `n_resamples` rows whatever `batch` is, and the same rows for every `batch`.
    `pooling` (:attr:`Statistic.pooling`): draw the groups' totals (a person's cells
    pooled as well) and write each in its group's first cell.
    """
    batch = _auto_batch(augmented, scheme, batch)
    if scheme == "iid":
        pooled = augmented if pooling is None else augmented @ pool_matrix(pooling)
        texts = IidTables(pooled[None, :])
        for start in range(0, n_resamples, batch):
            b = min(batch, n_resamples - start)
            out = np.empty((b, augmented.shape[-1]))
            texts.fill(0, rng, out, pooling)
            yield out
        return
    if pooling is None:
        yield from _person_cells(augmented, scheme, n_resamples, rng, batch, None, 0)
        return
    pooled = augmented @ pool_matrix(pooling)
    for block in _person_cells(pooled, scheme, n_resamples, rng, batch, None, 0):
        out = np.empty((block.shape[0], augmented.shape[-1]))
        expand_pooled(block, pooling, out)
        yield out


def _person_cells(
    augmented: np.ndarray,
    scheme: str,
    n_resamples: int,
    rng: np.random.Generator,
    batch: int,
    hierarchical: HierarchicalTables | None,
    k: int,
) -> Iterator[np.ndarray]:
    """Blocks of resampled cells of a person scheme (`hierarchical`: tables, sample k)."""
    from . import kernels

    person_rng, text_rng = rng.spawn(2)
    m = augmented.shape[0]
    if scheme == "hierarchical" and hierarchical is None:
        hierarchical = HierarchicalTables([augmented])
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
    pooling = shared_pooling(statistics)
    blocks = replicate_cells(augmented, scheme, n_resamples, rng, batch=batch, pooling=pooling)
    for block in blocks:
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
        self.rows = max(1, min(AUTO_BATCH_ELEMENTS, EVALUATION_ELEMENTS) // n_cells)
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
    :data:`AUTO_BATCH_ELEMENTS`). Under the iid scheme, when `generators` are a batch's
    keyed streams (:class:`~perfci._core.streams.DataSetStreams`) not yet handed out,
    the data sets drawn from uniforms are drawn in compiled code, many a call, from their
    Philox keys (:meth:`IidTables.fill_keyed`): the same cells, without a generator built or a
    Python step per data set. Cells a statistic reads only through their sums
    (:attr:`Statistic.pooling`, common to all `statistics`) are drawn as their sums.
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
    pooling = shared_pooling(statistics)
    if pooling is not None:  # each sample's (or person's) groups' totals
        matrix = pool_matrix(pooling)
        if isinstance(samples, np.ndarray):
            samples = samples @ matrix
        else:
            samples = [sample @ matrix for sample in samples]
    texts = IidTables(np.stack(samples)) if scheme == "iid" else None
    hierarchical = scheme == "hierarchical" and bool(simulated)
    tables = HierarchicalTables([samples[k] for k in simulated]) if hierarchical else None
    index = {k: j for j, k in enumerate(simulated)}  # sample k's place in the tables
    keyed = np.zeros(size, dtype=bool)
    if texts is not None and isinstance(generators, DataSetStreams | StreamSubset):
        # samples drawn from uniforms, whose streams are unbuilt: in compiled code, from
        # their Philox keys, many samples a call (the same cells as the loop below)
        chosen = np.flatnonzero(texts.from_uniforms)
        keys = generators.unbuilt_keys(chosen) if chosen.size else None
        if keys is not None:
            texts.fill_keyed(chosen, keys, n_resamples, pooling, [s.fn for s in statistics], out)
            generators.mark_drawn(chosen, n_resamples * texts.conditional.shape[-1])
            keyed[chosen] = True
    for k, (sample, plan) in enumerate(zip(samples, plans, strict=True)):
        if keyed[k]:
            continue
        rng = generators[k]
        if plan is not None:
            out[0, k] = _draw_parts(plan, n_resamples, rng, batch)
            continue
        position = k * n_resamples
        step = _auto_batch(sample, scheme, batch)
        if texts is not None:
            for start in range(0, n_resamples, step):
                rows = min(step, n_resamples - start)
                texts.fill(k, rng, evaluation.space(rows), pooling)
                evaluation.add(position + start, rows)
            continue
        for block in _person_cells(sample, scheme, n_resamples, rng, step, tables, index[k]):
            if pooling is None:
                evaluation.space(block.shape[0])[:] = block
            else:
                expand_pooled(block, pooling, evaluation.space(block.shape[0]))
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


def iid_jackknife(cells: np.ndarray, statistic: Statistic) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-text-out values and weights of K data sets' cells ``(K, C)``: ``(K, C)`` each.

    Entry c leaves out one text of cell c, weighted by how many texts cell c holds; an
    empty cell has weight 0 and value 0 (:func:`jackknife` of one data set lists only the
    cells with texts, in the same order).
    """
    cells = np.asarray(cells, dtype=float)
    left_out = cells[:, None, :] - np.eye(cells.shape[-1])[None]
    present = cells > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        values = statistic.fn(np.where(present[..., None], left_out, cells[:, None, :]))
    return np.where(present, values, 0.0), np.where(present, cells, 0.0)


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
