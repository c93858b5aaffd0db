"""Scores read once, at the edge: the data of the ROC AUC, and its counts.

What :func:`perfci.auc_ci` and :func:`perfci.compare_auc` read before any interval:

- their options (:func:`auc_options_iv`, checked before the data) and the bootstrap
  scheme the data allow (:func:`scheme_for`);
- the reference labels, the score arguments and the person ids, checked and encoded
  (:func:`read_scores`, giving :class:`Scores`);
- the counts every method works on: positives and negatives at each distinct score,
  pooled or per person (:func:`level_counts`), or of the joint (scores, label) cells of
  several scores (:func:`score_cells`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._core import registry
from ._core.labels import as_label_array
from ._core.recommended import recommended_scheme
from ._core.replicates import MIN_PERSONS, ONE_PERSON, check_bootstrap_options
from ._core.validation import (
    check_confidence_level,
    check_label,
    check_memory,
    check_real_array,
)
from .counting import factorize_sorted, normalize_labels

__all__ = [
    "ROC_AUC",
    "Scores",
    "auc_options_iv",
    "level_counts",
    "read_scores",
    "scheme_for",
    "score_cells",
]

#: The metric's name, as results and the registry spell it.
ROC_AUC = "roc_auc"


def auc_options_iv(
    method: Any,
    choices: registry.Choices,
    confidence_level: Any,
    positive: Any,
    scheme: Any,
    interval: Any,
    n_resamples: Any,
    rng: Any,
    batch: Any,
) -> tuple[float, str, int, np.random.Generator]:
    """Check the options of :func:`perfci.auc_ci` and :func:`perfci.compare_auc` before the data.

    Returns the level, the bootstrap interval and resamples (defaults filled in) and the
    generator.
    """
    choices.check(method)
    level = float(check_confidence_level(confidence_level, scalar=True))
    check_label("positive", positive)
    interval, resamples, generator = check_bootstrap_options(
        method, scheme, interval, n_resamples, rng, batch, level
    )
    return level, interval, resamples, generator


@dataclass(frozen=True)
class Scores:
    """Validated data of :func:`read_scores`: reference positives, scores, persons."""

    positive: np.ndarray  # (n,) bool
    scores: list[np.ndarray]  # each (n,) float
    person: np.ndarray | None  # (n,) int in 0..m-1
    persons: int | None

    @property
    def n_positive(self) -> int:
        """Reference positives."""
        return int(self.positive.sum())

    @property
    def n_negative(self) -> int:
        """Reference negatives."""
        return int(self.positive.size - self.positive.sum())

    @property
    def one_text_each(self) -> bool:
        """Whether every person has one text (the texts are then a simple random sample)."""
        return self.persons is not None and self.persons == self.positive.size


def read_scores(
    y_true: Any, scores: dict[str, Any], groups: Any, positive: Any, *, what: str = ROC_AUC
) -> Scores:
    """Check the reference labels, the score arguments and the person ids; encode them.

    The labels are read by :func:`perfci.counting.normalize_labels` (a 0/1 code needs no
    `positive`; two other labels need it named; with three or more, `positive` names the
    class whose one-vs-rest AUC is wanted). Each score must be one finite number per
    text. Both classes must be present: the AUC compares positives with negatives.
    """
    given = normalize_labels({"y_true": y_true}, positive=positive)
    labels = given.values["y_true"]
    if given.positive is None:
        raise ValueError(
            f"`positive` must name the positive class of `y_true`, which has "
            f"{given.classes.size} labels {given.classes.tolist()!r} (the one-vs-rest "
            f"{what} of that class is computed)."
        )
    truth = np.asarray(labels == given.positive, dtype=bool)
    n = truth.size
    arrays = []
    for name, value in scores.items():
        if isinstance(value, pd.Series | pd.Index):
            value = value.to_numpy()
        arr = check_real_array(name, value)
        if arr.ndim != 1:
            raise ValueError(f"`{name}` must be one-dimensional; got shape {arr.shape}.")
        if arr.size != n:
            raise ValueError(
                f"`{name}` must have one score per text of `y_true` ({n}); got {arr.size}."
            )
        arrays.append(arr)
    person = persons = None
    if groups is not None:
        ids = as_label_array("groups", groups)
        if ids.shape != truth.shape:
            raise ValueError(f"`groups` must have one id per text ({n}); got {ids.size}.")
        person, uniques = pd.factorize(ids)
        persons = len(uniques)
    n_pos = int(truth.sum())
    if n_pos == 0 or n_pos == n:
        raise ValueError(
            f"`y_true` must hold positive and negative texts: {what} compares the scores of "
            f"positives with those of negatives, and it is undefined with {n_pos} positive "
            f"and {n - n_pos} negative texts."
        )
    return Scores(truth, arrays, person, persons)


def scheme_for(data: Scores, scheme: str | None) -> str:
    """Return the bootstrap scheme: the named one, checked against the data, or the recommended."""
    nested = data.person is not None
    if scheme is None:
        per_person = None if not nested else data.positive.size / float(data.persons or 1)
        scheme = recommended_scheme(per_person)
    if scheme != "iid":
        if not nested:
            raise ValueError(
                f"`scheme` {scheme!r} resamples persons: it needs `groups` (person ids)."
            )
        if int(data.persons or 0) < MIN_PERSONS:
            raise ValueError(
                f"`groups` must give at least {MIN_PERSONS} persons for scheme {scheme!r}: "
                f"{ONE_PERSON}; got {data.persons}."
            )
    return scheme


def level_counts(data: Scores, scheme: str) -> tuple[np.ndarray, np.ndarray]:
    """Return the positives and negatives at each distinct score.

    ``(levels,)`` pooled for the iid scheme, else ``(persons, levels)``.
    """
    codes = np.unique(data.scores[0], return_inverse=True)[1].reshape(-1)
    levels = int(codes.max()) + 1
    if scheme == "iid":
        return (
            np.bincount(codes[data.positive], minlength=levels).astype(float),
            np.bincount(codes[~data.positive], minlength=levels).astype(float),
        )
    m = int(data.persons or 0)
    check_memory(
        "groups",
        16.0 * m * levels,
        f"the per-person counts of {m} persons x {levels} distinct scores; round the scores "
        "(fewer distinct values) or use scheme='iid'",
    )
    assert data.person is not None  # a scheme other than iid has persons (scheme_for)
    flat = data.person * levels + codes
    shape = (m, levels)
    pos = np.bincount(flat[data.positive], minlength=m * levels).reshape(shape)
    neg = np.bincount(flat[~data.positive], minlength=m * levels).reshape(shape)
    return pos.astype(float), neg.astype(float)


def _distinct_rows(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Return ``np.unique(np.stack(columns, -1), axis=0, return_inverse=True)``, faster.

    The columns are non-negative integer codes; each row is read as one number in mixed
    radix (the first column most significant), so the distinct rows come from a hashed
    1-D factorization in their lexicographic order, not from sorting every row.
    """
    radix = [int(c.max()) + 1 if c.size else 1 for c in columns]
    if math.prod(radix) >= 2**62:  # the number would overflow: sort the rows
        cells, inverse = np.unique(np.stack(columns, axis=-1), axis=0, return_inverse=True)
        return cells, inverse.reshape(-1)
    key = np.zeros(columns[0].size, dtype=np.int64)
    for column, base in zip(columns, radix, strict=True):
        key *= base
        key += column
    keys, inverse = factorize_sorted(key)
    digits = []
    for base in reversed(radix):
        keys, digit = np.divmod(keys, base)
        digits.append(digit)
    return np.stack(digits[::-1], axis=-1), inverse.reshape(-1)


def score_cells(data: Scores, per_person: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells (score levels, label) of the scores: per-person counts ``(m, K)`` or ``(K,)``.

    Returns the counts, and each cell's level index of every score ``(n_scores, K)`` and
    label ``(K,)``.
    """
    codes = [factorize_sorted(s)[1].reshape(-1) for s in data.scores]
    cells, cell_of_text = _distinct_rows([*codes, data.positive.astype(np.int64)])
    k = cells.shape[0]
    counts: np.ndarray
    if data.person is None or not per_person:
        counts = np.bincount(cell_of_text, minlength=k).astype(float)
    else:
        m = int(data.persons or 0)
        check_memory(
            "groups",
            8.0 * m * k,
            f"the per-person counts of {m} persons x {k} (score, label) cells; round the "
            "scores (fewer distinct values) or use scheme='iid'",
        )
        flat = data.person * k + cell_of_text
        counts = np.bincount(flat, minlength=m * k).reshape(m, k).astype(float)
    return counts, cells[:, :-1].T, cells[:, -1].astype(bool)
