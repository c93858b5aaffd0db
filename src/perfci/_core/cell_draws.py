"""How the texts of a resample are drawn: the tables of the iid and hierarchical schemes.

:class:`IidTables` draws the iid scheme's Multinomial(N, shares) resamples as conditional
binomials inverted from uniforms; :class:`HierarchicalTables` chooses, person by person,
an exact way to draw the texts of the persons a hierarchical resample takes. Both
compute their tables for K samples at once and fill resampled cells through the compiled
kernels of :mod:`perfci._core.kernels`; :mod:`perfci._core.resampling` decides what to
resample and evaluates the statistics. Cells a statistic reads only through their sums
are pooled here (:func:`pool_matrix`, :func:`expand_pooled`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "EVALUATION_ELEMENTS",
    "HierarchicalTables",
    "IidTables",
    "conditional_shares",
    "expand_pooled",
    "group_columns",
    "pool_matrix",
    "reduced_rows",
    "unique_within",
]

#: Resampled cells evaluated at once: few enough that the metric's temporaries stay in cache.
EVALUATION_ELEMENTS = 1 << 18

# Costs that choose between exact ways of drawing a person's texts, in nanoseconds,
# measured on a 2-core x86-64 machine (validation/benchmarks/bench_scale.py times the
# choices). Only speed depends on them: every way is exact.
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


def pool_matrix(pooling: tuple[int, ...]) -> np.ndarray:
    """Return the ``(C, G)`` 0/1 matrix that adds cells up into their groups."""
    matrix = np.zeros((len(pooling), max(pooling) + 1), dtype=np.int64)
    matrix[np.arange(len(pooling)), pooling] = 1
    return matrix


def expand_pooled(pooled: np.ndarray, pooling: tuple[int, ...], out: np.ndarray) -> None:
    """Write groups' totals ``(b, G)`` into `out` ``(b, C)``: each in its group's first cell."""
    out[:] = 0.0
    out[:, group_columns(pooling)] = pooled


def conditional_shares(cells: np.ndarray) -> np.ndarray:
    """P(cell c | not in cells before c) for each row of cell counts, c < C - 1."""
    remaining = np.cumsum(cells[..., ::-1], axis=-1)[..., ::-1]  # counts of cells c..C-1
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(remaining > 0, cells / np.where(remaining > 0, remaining, 1), 0.0)
    return np.clip(cond[..., :-1], 0.0, 1.0)


def unique_within(owner: np.ndarray, rows: np.ndarray, sets: int):
    """Distinct rows within each data set, in the order :func:`numpy.unique` gives them.

    `owner` is each row's data set (sorted). Returns each row's index among its data
    set's distinct rows, the distinct rows (data set after data set, each data set's in
    lexicographic order, as ``np.unique(rows_of_that_set, axis=0)`` orders them) and
    where each data set's distinct rows start (``sets + 1`` offsets).
    """
    unique, inverse = np.unique(np.c_[owner, rows], axis=0, return_inverse=True)
    starts = np.searchsorted(unique[:, 0], np.arange(sets + 1))
    return inverse.reshape(-1) - starts[owner], unique[:, 1:], starts


def reduced_rows(counts: np.ndarray) -> np.ndarray:
    """Each row divided by the greatest common divisor of its entries (0 rows stay 0)."""
    divisor = np.gcd.reduce(counts, axis=-1)
    return counts // np.where(divisor > 0, divisor, 1)[:, None]


class HierarchicalTables:
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
        self.kind, kinds, self.kind_starts = unique_within(owner, reduced_rows(counts), sets)
        n_kinds = np.diff(self.kind_starts)
        self.by_kind = n_kinds * (n_cells - 1) * _BINOMIAL_NS <= persons * _PERSON_NS
        self.kind_conditional = conditional_shares(kinds.astype(float))
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
                self.conditional[:, lo : hi - 2] = conditional_shares(counts[:, lo:hi])[
                    :, : hi - lo - 2
                ]
            if hi - lo >= 2:
                a, b = counts[:, hi - 2], counts[:, hi - 1]
                pool, key, starts = unique_within(
                    owner, reduced_rows(np.stack([a, a + b], axis=-1)), sets
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


class IidTables:
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
        p = self.conditional = conditional_shares(counts.astype(float))
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

    def fill(
        self,
        k: int,
        rng: np.random.Generator,
        out: np.ndarray,
        pooling: tuple[int, ...] | None = None,
    ) -> None:
        """Write sample k's next ``out.shape[0]`` resamples' cells into `out`, in order.

        With `pooling` the samples' cells are the groups' totals, each written to its
        group's first column of `out` (``(b, C)``, the other columns set to 0).
        """
        from . import kernels

        size = int(self.sizes[k])
        if not self.from_uniforms[k]:
            drawn = rng.multinomial(size, self.shares[k], size=out.shape[0])
            if pooling is None:
                out[:] = drawn
            else:
                expand_pooled(drawn, pooling, out)
            return
        if pooling is None:
            columns = np.arange(self.shares.shape[-1])
        else:
            out[:] = 0.0
            columns = group_columns(pooling)
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
            columns,
            out,
        )

    def fill_keyed(
        self,
        chosen: np.ndarray,
        keys: np.ndarray,
        n_resamples: int,
        pooling: tuple[int, ...] | None,
        functions: Sequence[Callable[[np.ndarray], np.ndarray]],
        out: np.ndarray,
    ) -> None:
        """Replicates ``out[:, chosen]`` of samples `chosen`, each from its Philox key.

        The cells of sample ``chosen[j]`` are those :meth:`fill` gives with
        ``Generator(Philox(key=keys[j]))``, drawn in compiled code for many samples at a
        time (:func:`perfci._core.kernels.iid_cells_keyed`), then the statistics'
        `functions` are
        evaluated on them; memory stays near :data:`AUTO_BATCH_ELEMENTS` numbers.
        """
        from . import kernels

        n_cells = len(pooling) if pooling is not None else self.shares.shape[-1]
        stages = self.conditional.shape[-1]
        columns = np.arange(stages + 1) if pooling is None else group_columns(pooling)
        # a few samples a call, so that their cells stay in cache while evaluated; the
        # kernel writes the same columns every time, so pooled columns stay 0
        per = max(1, EVALUATION_ELEMENTS // max(n_resamples * n_cells, 1))
        scratch = np.empty(min(n_resamples, 1024) * stages)
        buffer = np.zeros((min(per, chosen.size) * n_resamples, n_cells))
        for at in range(0, chosen.size, per):
            part = chosen[at : at + per]
            cells = buffer[: part.size * n_resamples]
            kernels.iid_cells_keyed(
                part,
                self.sizes,
                self.conditional,
                self.odds,
                self.first,
                self.base,
                keys[at : at + per],
                n_resamples,
                self.mode,
                self.pmf,
                self.cdf,
                self.reciprocal,
                self.below,
                self.window,
                columns,
                scratch,
                cells,
            )
            self._tabled = -1  # the buffers now hold the last sample's tables
            for s, function in enumerate(functions):
                out[s, part] = function(cells).reshape(part.size, n_resamples)


def group_columns(pooling: tuple[int, ...]) -> np.ndarray:
    """Return the column of each group's total: its first cell."""
    return np.array([pooling.index(g) for g in range(max(pooling) + 1)], dtype=np.int64)
