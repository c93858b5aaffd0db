"""The resampling engine: bootstrap replicates drawn as counts, never as rows.

Resampling n texts with replacement from a sample with cell counts c is a single
multinomial draw, Multinomial(n, c / n); resampling persons is a draw of how often each
person is taken; resampling texts within a person taken w times is Multinomial(w n_i,
that person's cell shares). Every resample is therefore a handful of binomial draws,
whatever the number of texts.

This module serves :func:`perfci.bootstrap_ci`, :func:`perfci.compare`,
:func:`perfci.report` and the validation harness; no other module draws resamples.

Random streams: a data set's generator spawns two children, one for person draws and one
for text draws (the hierarchical scheme spawns one stream per conditional-binomial stage
from the text stream). Every stream is consumed resample by resample, so the replicates
do not depend on `batch`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "AUTO_BATCH_ELEMENTS",
    "EXACT_GRID_CELLS",
    "Statistic",
    "augment",
    "draw_replicates",
    "jackknife",
]

#: Largest (texts, successes) grid for the exact person-resampling distribution.
EXACT_GRID_CELLS = 1 << 20
#: Numbers held per batch of resamples when `batch` is None (about 64 MB of floats).
AUTO_BATCH_ELEMENTS = 8_000_000


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


def augment(cells: np.ndarray, scheme: str, pseudo_count: int) -> np.ndarray:
    """Return the sample the bootstrap resamples: λ per cell, or a pseudo-person.

    `cells` is ``(C,)`` for ``"iid"`` and ``(m, C)`` (persons with texts) otherwise.
    """
    if scheme == "iid":
        return cells + pseudo_count
    if pseudo_count:
        return np.vstack([cells, np.full(cells.shape[-1], pseudo_count, dtype=cells.dtype)])
    return cells


def _conditional_shares(shares: np.ndarray) -> np.ndarray:
    """P(cell c | not in cells before c) for each row of cell shares."""
    remaining = np.cumsum(shares[..., ::-1], axis=-1)[..., ::-1]  # shares of cells c..C-1
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(remaining > 0, shares / np.where(remaining > 0, remaining, 1), 0.0)
    return np.clip(cond[..., :-1], 0.0, 1.0)


def _multinomial_by_stages(
    sizes: np.ndarray, conditional: np.ndarray, stage_rngs: list[np.random.Generator]
) -> np.ndarray:
    """Multinomial draws as C - 1 conditional binomial stages, one stream per stage.

    Each row may have its own size and shares; this is several times faster than
    ``Generator.multinomial`` with a different probability vector per row.
    """
    left = sizes.astype(np.int64)
    out = np.empty((sizes.size, conditional.shape[-1] + 1))
    for c, stage_rng in enumerate(stage_rngs):
        out[:, c] = stage_rng.binomial(left, conditional[:, c])
        left = left - out[:, c].astype(np.int64)
    out[:, -1] = left
    return out


def _exact_person_distribution(
    cells: np.ndarray, scheme: str, n_resamples: int
) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]] | None:
    """Exact bootstrap distribution of a pooled proportion under person resampling.

    A resample takes m persons independently and uniformly; each taken person i brings
    n_i texts and x successes, x = y_i (cluster) or x ~ Binomial(n_i, y_i / n_i)
    (hierarchical). The resample's (texts, successes) is therefore the sum of m iid
    pairs, and its distribution is the m-fold convolution of one pick's distribution,
    computed with a 2-D FFT. Returns the cumulative probabilities over the flattened
    grid and a function from grid cells to proportions; or None when the grid is larger
    than the m x `n_resamples` draws that simulation would need (then simulation is
    faster) or than :data:`EXACT_GRID_CELLS`.
    """
    from scipy import fft as scipy_fft
    from scipy import stats

    m = cells.shape[0]
    sizes = cells.sum(-1).astype(np.int64)
    n_min, n_max = int(sizes.min()), int(sizes.max())
    rows, cols = m * (n_max - n_min) + 1, m * n_max + 1
    if rows * cols > min(EXACT_GRID_CELLS, m * n_resamples):
        return None
    one_pick = np.zeros((n_max - n_min + 1, n_max + 1))
    if scheme == "cluster":
        np.add.at(one_pick, (sizes - n_min, cells[:, 0].astype(np.int64)), 1.0 / m)
    else:
        k = np.arange(n_max + 1)
        pmf = stats.binom.pmf(k[None, :], sizes[:, None], cells[:, :1] / sizes[:, None])
        np.add.at(one_pick, sizes - n_min, pmf / m)
    # Zero padding to fast FFT lengths at least the full support: no wrap-around.
    shape = tuple(scipy_fft.next_fast_len(k, real=True) for k in (rows, cols))
    total = scipy_fft.irfft2(scipy_fft.rfft2(one_pick, s=shape) ** m, s=shape)
    total = np.clip(total[:rows, :cols], 0.0, None)  # round-off leaves tiny negatives
    cdf = np.cumsum(total.ravel())

    def value_of(cell: np.ndarray) -> np.ndarray:
        r, s = np.divmod(cell, cols)
        return s / (r + m * n_min)

    return cdf, value_of


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
        Resamples drawn at once (memory); the replicates do not depend on it.

    Returns
    -------
    numpy.ndarray
        ``(B,)`` replicates. For a pooled proportion under person resampling with a
        small enough (texts, successes) grid, the replicates are drawn from the exact
        bootstrap distribution (one uniform each), which is the distribution resampling
        would give.
    """
    width = augmented.size if scheme == "hierarchical" else statistic.n_cells
    if batch is None:
        batch = max(1, AUTO_BATCH_ELEMENTS // max(width, 1))
    person_rng, text_rng = rng.spawn(2)
    out = np.empty(n_resamples)
    if statistic.proportion and scheme != "iid":
        exact = _exact_person_distribution(augmented, scheme, n_resamples)
        if exact is not None:
            cdf, value_of = exact
            for start in range(0, n_resamples, batch):
                u = text_rng.random(min(batch, n_resamples - start))
                cell = np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), cdf.size - 1)
                out[start : start + u.size] = value_of(cell)
            return out
    m, n_cells = (1, augmented.size) if scheme == "iid" else augmented.shape
    sizes = augmented.sum(-1).astype(np.int64)
    shares = augmented / (sizes if scheme == "iid" else sizes[:, None])
    if scheme == "hierarchical":
        conditional = _conditional_shares(shares)
        # One stream per stage keeps every stream consumed in resample order.
        stage_rngs = text_rng.spawn(n_cells - 1)
    for start in range(0, n_resamples, batch):
        b = min(batch, n_resamples - start)
        if scheme == "iid":
            drawn = text_rng.multinomial(sizes, shares, size=b)
        else:
            # How often each person is taken: m uniform draws counted per resample, the
            # Multinomial(m, 1/m) of the cluster bootstrap, and much faster to draw.
            pick = person_rng.integers(0, m, size=(b, m))
            rows = np.arange(b)[:, None] * m
            taken = np.bincount((rows + pick).ravel(), minlength=b * m).reshape(b, m)
            if scheme == "cluster":
                drawn = taken @ augmented
            else:
                # A person taken w times contributes Multinomial(w * n_i, shares_i);
                # persons not taken contribute nothing and need no draw.
                resample, person = np.nonzero(taken)
                within = _multinomial_by_stages(
                    taken[resample, person] * sizes[person], conditional[person], stage_rngs
                )
                drawn = np.stack(
                    [np.bincount(resample, weights=w, minlength=b) for w in within.T], axis=-1
                )
        out[start : start + b] = statistic.fn(np.asarray(drawn, dtype=float))
    return out


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
