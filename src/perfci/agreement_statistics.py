r"""The agreement statistics as functions of counts, and the texts as cells of codes.

Every statistic is a function of counts of cells of texts (:func:`agreement_cells`):

- :class:`CohenKappa` of the K x K table of two annotators' codes (a cell is a pair of
  codes);
- :class:`FleissKappa` and :class:`KrippendorffAlpha` of the per-text category counts
  (how many annotators gave each code): the coincidence matrix of alpha is a sum over
  texts of per-text contributions, and so are the sums of Fleiss' kappa, so texts with
  the same category counts are one cell.

Each is called on cell counts ``(..., cells)``, the observed ones or a batch of
resamples (:func:`unit_counts` gives them, pooled or per person).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._core.labels import vote_counts as category_counts
from ._core.validation import check_memory
from .agreement_codes import Codes

__all__ = [
    "STATISTIC_NAMES",
    "Cells",
    "CohenKappa",
    "FleissKappa",
    "KrippendorffAlpha",
    "agreement_cells",
    "category_counts",
    "unit_counts",
]

#: Each statistic's name in messages and descriptions.
STATISTIC_NAMES = {
    "cohen_kappa": "Cohen's kappa",
    "fleiss_kappa": "Fleiss' kappa",
    "krippendorff_alpha": "Krippendorff's alpha",
}


def _weighted_sum(cells: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``cells @ table`` for cell counts ``(..., P)`` and ``(P, X)``, without BLAS.

    The products are added in cell order for every resample alike, so a replicate does not
    depend on how many resamples are computed at once (a matrix product's rounding can
    depend on the shapes and on the CPU).
    """
    return np.sum(cells[..., :, None] * table, axis=-2)


class CohenKappa:
    """Cohen's kappa of K x K tables given as flat cell counts ``(..., K * K)``.

    Rows are the first annotator's codes, columns the second's. In counts,
    kappa = (n tr - sum_k R_k C_k) / (n^2 - sum_k R_k C_k), exact for whole counts; NaN
    where the denominator is 0 (both annotators gave one and the same code throughout, or
    no text).
    """

    def __init__(self, k: int) -> None:
        self.k = k

    def __call__(self, cells: np.ndarray) -> np.ndarray:
        """Return kappa of each row of flat cell counts."""
        table = cells.reshape(*cells.shape[:-1], self.k, self.k)
        n = table.sum((-2, -1))
        chance = np.sum(table.sum(-1) * table.sum(-2), -1)
        observed = np.trace(table, axis1=-2, axis2=-1)
        denominator = n * n - chance
        with np.errstate(invalid="ignore", divide="ignore"):
            kappa = (n * observed - chance) / denominator
        return np.where(denominator > 0, kappa, np.nan)


class FleissKappa:
    """Fleiss' kappa of texts with m codes each, from the counts of their cells.

    Each cell is a vector of category counts (summing to m); called on cell counts
    ``(..., P)`` it returns kappa = (P_bar - P_e) / (1 - P_e), NaN where the texts hold
    fewer than two distinct codes (P_e = 1) or there is no text.
    """

    def __init__(self, patterns: np.ndarray) -> None:
        self.patterns = patterns.astype(float)
        m = float(patterns[0].sum())
        self.m = m
        self.agreement = (np.sum(self.patterns**2, -1) - m) / (m * (m - 1))

    def __call__(self, cells: np.ndarray) -> np.ndarray:
        """Return kappa of each row of cell counts."""
        texts = cells.sum(-1)
        per_code = _weighted_sum(cells, self.patterns)
        distinct = np.sum(per_code > 0, -1)
        with np.errstate(invalid="ignore", divide="ignore"):
            p_bar = _weighted_sum(cells, self.agreement[:, None])[..., 0] / texts
            shares = per_code / (self.m * texts[..., None])
            p_e = np.sum(shares * shares, -1)
            kappa = (p_bar - p_e) / (1 - p_e)
        return np.where((texts > 0) & (distinct >= 2), kappa, np.nan)


class KrippendorffAlpha:
    r"""Krippendorff's alpha of texts from the counts of their cells (category counts).

    Each cell is a vector of category counts :math:`n_{u\cdot}` of a text with
    :math:`m_u \ge 2` codes; its coincidences are :math:`(n_{uc} n_{uk} - [c = k]
    n_{uc}) / (m_u - 1)`. Called on cell counts ``(..., P)`` it returns
    :math:`1 - (n - 1) \sum_{ck} o_{ck}\delta_{ck} / \sum_{ck} n_c n_k \delta_{ck}`, NaN
    where fewer than two distinct codes are pairable.
    """

    def __init__(self, patterns: np.ndarray, level: str, values: np.ndarray | None) -> None:
        counts = patterns.astype(float)
        k = counts.shape[-1]
        pairable = counts.sum(-1)
        outer = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k)
        coincidences = outer / (pairable - 1)[:, None, None]
        self.level = level
        self.counts = counts  # each cell's pairable values per code: o's row sums
        if level == "ordinal":
            self.coincidences = coincidences.reshape(-1, k * k)
            index = np.arange(k)
            self.lo = np.minimum(index[:, None], index[None, :])
            self.hi = np.maximum(index[:, None], index[None, :])
        else:
            self.distance = _fixed_distance(level, k, values)
            self.disagreement = np.sum(coincidences * self.distance, (-2, -1))

    def _ordinal_distance(self, n_c: np.ndarray) -> np.ndarray:
        upto = np.cumsum(n_c, -1)
        before = upto - n_c
        between = upto[..., self.hi] - before[..., self.lo]
        return (between - (n_c[..., :, None] + n_c[..., None, :]) / 2) ** 2

    def __call__(self, cells: np.ndarray) -> np.ndarray:
        """Return alpha of each row of cell counts."""
        n_c = _weighted_sum(cells, self.counts)
        n = n_c.sum(-1)
        if self.level == "ordinal":
            distance = self._ordinal_distance(n_c)
            observed = _weighted_sum(cells, self.coincidences).reshape(distance.shape)
            disagreement = np.sum(observed * distance, (-2, -1))
        else:
            distance = self.distance
            disagreement = _weighted_sum(cells, self.disagreement[:, None])[..., 0]
        expected = np.sum(n_c[..., :, None] * distance * n_c[..., None, :], (-2, -1))
        distinct = np.sum(n_c > 0, -1)
        with np.errstate(invalid="ignore", divide="ignore"):
            alpha = 1 - (n - 1) * disagreement / expected
        return np.where((distinct >= 2) & (expected > 0), alpha, np.nan)


def _fixed_distance(level: str, k: int, values: np.ndarray | None) -> np.ndarray:
    """Squared distances of the codes that do not depend on the data (not ordinal)."""
    if level == "nominal":
        return 1.0 - np.eye(k)
    assert values is not None
    a, b = values[:, None], values[None, :]
    if level == "interval":
        return (a - b) ** 2
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(total != 0, (a - b) / np.where(total != 0, total, 1.0), 0.0)
    return ratio**2


@dataclass(frozen=True)
class Cells:
    """The texts of one statistic as cells: which cell each text is, and the statistic."""

    statistic: str
    cell: np.ndarray  # (n_texts,) int: the text's cell, -1 for a text that does not enter
    n_cells: int
    fn: Any  # callable on cell counts (..., n_cells)
    width: int  # numbers held per resample by the statistic (for the default batch)

    @property
    def used(self) -> np.ndarray:
        """Whether each text enters the statistic."""
        return self.cell >= 0


def agreement_cells(data: Codes, statistic: str, level: str) -> Cells:
    """Cells of the texts for `statistic`, and the texts left out (cell -1)."""
    k = data.categories.size
    if statistic == "cohen_kappa":
        a, b = data.index[:, 0], data.index[:, 1]
        cell = np.where((a >= 0) & (b >= 0), a * k + b, -1)
        return Cells(statistic, cell, k * k, CohenKappa(k), k * k)
    counts = category_counts(data.index, k)
    coded = counts.sum(-1)
    if statistic == "fleiss_kappa":
        used = coded > 0
        sizes = np.unique(coded[used])
        if sizes.size > 1 or (sizes.size == 1 and sizes[0] < 2):
            have = f"{sizes[0]} to {sizes[-1]} codes" if sizes.size > 1 else f"{sizes[0]} code"
            raise ValueError(
                f"`statistic` 'fleiss_kappa' needs the same number of codes, at least 2, for "
                f"every text; texts of `{data.name}` have {have}. Use "
                "statistic='krippendorff_alpha', which takes missing codes."
            )
    else:
        used = coded >= 2  # a text with one code holds no pair: it adds nothing to alpha
    cell = np.full(coded.shape, -1, dtype=np.int64)
    if not used.any():
        return Cells(statistic, cell, 0, None, 1)
    patterns, inverse = np.unique(counts[used], axis=0, return_inverse=True)
    cell[used] = inverse.reshape(-1)
    fn: Any
    size = patterns.shape[0]
    if statistic == "fleiss_kappa":
        fn, width = FleissKappa(patterns), size * k
    else:
        fn = KrippendorffAlpha(patterns, level, data.values)
        width = size * (k * k if level == "ordinal" else k)
    return Cells(statistic, cell, patterns.shape[0], fn, width)


def unit_counts(cells: Cells, data: Codes, per_person: bool) -> np.ndarray:
    """Return the cell counts ``(C,)``, or per person ``(m, C)`` (persons with texts)."""
    used = cells.used
    cell = cells.cell[used]
    if not per_person:
        return np.bincount(cell, minlength=cells.n_cells).astype(float)
    assert data.person is not None
    person = pd.factorize(data.person[used])[0]
    m = int(person.max()) + 1
    check_memory(
        "groups",
        8.0 * m * cells.n_cells,
        f"the per-person counts of {m} persons x {cells.n_cells} cells of codes; use "
        "scheme='iid' or fewer categories",
    )
    flat = person * cells.n_cells + cell
    return np.bincount(flat, minlength=m * cells.n_cells).reshape(m, cells.n_cells).astype(float)
