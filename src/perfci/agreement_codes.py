"""Annotators' codes read once, at the edge: a table of codes checked and encoded.

:func:`read_codes` reads the table of :func:`perfci.annotator_agreement` and
:func:`perfci.agreement_report` (one row per text, one column per annotator, missing
where an annotator did not code a text), the code domain (`categories`) and the person
ids, and encodes every code as the index of its category (:class:`Codes`): labels are
read as everywhere in perfci (:func:`perfci.counting.normalize_labels`), and the codes
of an interval or ratio level of measurement are read as numbers.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._core.labels import as_label_array, label_table, listing, sorted_labels
from .counting import normalize_labels

__all__ = ["Codes", "read_codes"]


@dataclass(frozen=True)
class Codes:
    """Validated codes (:func:`read_codes`): category indices, -1 where missing; the persons."""

    index: np.ndarray  # (n_texts, n_annotators) int64
    categories: np.ndarray  # (K,) the codes, in order
    values: np.ndarray | None  # (K,) float: the codes as numbers (interval, ratio)
    annotators: tuple[str, ...]
    person: np.ndarray | None  # (n_texts,) int in 0..persons-1
    name: str  # the argument, for messages

    def pair(self, index: np.ndarray, annotators: tuple[str, str]) -> Codes:
        """Other codes (two columns) of the same texts, categories and persons."""
        return Codes(index, self.categories, self.values, annotators, self.person, self.name)


def read_codes(
    name: str,
    codes: Any,
    *,
    level: str,
    categories: Any,
    groups: Any,
    min_annotators: int = 2,
    prefix: str = "annotator",
    extra: dict[str, Any] | None = None,
) -> tuple[Codes, dict[str, np.ndarray]]:
    """Check codes, categories and person ids; encode the codes as category indices.

    `extra` holds further label arguments (a machine's labels) read in the same coding;
    they are returned as category indices, by name.
    """
    table, missing, names, _ = label_table(name, codes, prefix=prefix)
    n, n_annotators = table.shape
    if n_annotators < min_annotators:
        raise ValueError(
            f"`{name}` must have at least {min_annotators} annotators (columns): agreement "
            f"is between annotators; got {n_annotators}."
        )
    observed = table[~missing]
    if observed.size == 0:
        raise ValueError(
            f"`{name}` holds no code: all {table.size} entries are missing (NaN or None)."
        )
    columns: dict[str, Any] = {name: observed, **(extra or {})}
    if categories is not None:
        if isinstance(categories, str | bytes) or np.ndim(categories) != 1:
            raise ValueError(
                f"`categories` must be a list of the possible codes, in order; got {categories!r}."
            )
        columns["categories"] = list(categories)
    labels = normalize_labels(columns, infer_positive=False)
    if categories is None:
        domain = labels.classes
    else:
        domain = labels.values["categories"]
        if pd.unique(domain).size != domain.size:
            raise ValueError(f"`categories` must not repeat a code; got {listing(domain)}.")
    lookup = pd.Index(domain)
    encoded: dict[str, np.ndarray] = {}
    for key in columns:
        if key == "categories":
            continue
        index = np.asarray(lookup.get_indexer(labels.values[key]), dtype=np.int64)
        if np.any(index < 0):
            outside = pd.unique(labels.values[key][index < 0])
            raise ValueError(
                f"`categories` must hold every code; `{key}` also holds "
                f"{listing(sorted_labels(outside))}."
            )
        encoded[key] = index
    values = _code_values(name, domain, level, categories is not None)
    full = np.full((n, n_annotators), -1, dtype=np.int64)
    full[~missing] = encoded.pop(name)
    person = None
    if groups is not None:
        ids = as_label_array("groups", groups)
        if ids.size != n:
            raise ValueError(f"`groups` must have one id per text ({n}); got {ids.size}.")
        person = pd.factorize(ids)[0].astype(np.int64)
    return Codes(full, np.asarray(domain), values, tuple(names), person, name), encoded


def _code_values(name: str, domain: np.ndarray, level: str, ordered: bool) -> np.ndarray | None:
    """Return the codes as numbers (interval and ratio levels); check the ordinal order."""
    numeric = domain.dtype.kind in "iuf" or all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) for v in domain.tolist()
    )
    if level in ("interval", "ratio"):
        if not numeric:
            raise ValueError(
                f"`level_of_measurement` {level!r} needs numeric codes; `{name}` holds "
                f"{listing(sorted_labels(domain))}: use 'nominal', or 'ordinal' with `categories` "
                "in order."
            )
        values = domain.astype(float)
        if level == "ratio" and np.any(values < 0):
            raise ValueError(
                "`level_of_measurement` 'ratio' needs non-negative codes (a ratio scale has "
                f"a true zero); `{name}` holds {listing(values[values < 0])}."
            )
        return values
    if level == "ordinal" and not numeric and not ordered:
        raise ValueError(
            f"`categories` must give the order of the codes for level_of_measurement "
            f"'ordinal': `{name}` holds text codes {listing(sorted_labels(domain))}, whose "
            "alphabetical order need not be theirs."
        )
    return None
