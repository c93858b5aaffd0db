"""The covariates of a performance model: terms, design matrices and covariate patterns.

A performance model (:func:`perfci.bayes.performance_model`) regresses a metric's per-text
success on covariates given as a table with one row per text (person-level covariates
are columns constant within a person). This module reads that table once
(:func:`design_of`): each term is a numeric column (standardized: centred on its mean and
divided by its SD over the texts, so that one prior scale fits every column) or a
categorical one (treatment dummies against its first level in sorted order, or
``C(name, reference)``'s); :meth:`Design.matrix` gives the standardized design of any
table with those columns (a target's), intercept first; :meth:`Design.to_original` turns
coefficient draws back to the columns' own units.

A formula is a sum of terms, ``"experienced + length + C(site)"``: a column name is
numeric unless it holds text (then categorical), ``C(name)`` makes it categorical. NumPy
and pandas only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Design", "Term", "design_of", "parse_formula", "patterns"]

_CATEGORICAL = re.compile(r"^C\(\s*([^,()]+?)\s*(?:,\s*(?:reference\s*=\s*)?(.+?)\s*)?\)$")


@dataclass(frozen=True)
class Term:
    """One covariate of the model."""

    name: str
    categorical: bool
    #: Categorical: the levels, the reference first. Numeric: empty.
    levels: tuple[Any, ...] = ()
    #: Numeric: the mean and SD the column is standardized by.
    mean: float = 0.0
    sd: float = 1.0
    #: Numeric: whether the column holds only 0 and 1 (an indicator).
    indicator: bool = False

    @property
    def columns(self) -> list[str]:
        """Return the design's columns of this term (``name`` or ``name[level]``)."""
        if self.categorical:
            return [f"{self.name}[{level}]" for level in self.levels[1:]]
        return [self.name]


@dataclass(frozen=True)
class Design:
    """The terms of a performance model and how a table becomes its design matrix."""

    terms: tuple[Term, ...]

    @property
    def columns(self) -> list[str]:
        """Return the design's column names, ``Intercept`` first."""
        return ["Intercept", *(c for t in self.terms for c in t.columns)]

    def matrix(self, table: pd.DataFrame, where: str = "`covariates`") -> np.ndarray:
        """Return the standardized design ``(rows, columns)`` of a table with the terms' columns."""
        import pandas as pd

        parts = [np.ones((len(table), 1))]
        for term in self.terms:
            if term.name not in table.columns:
                raise ValueError(f"{where} has no column {term.name!r} (a term of the model).")
            column = table[term.name]
            if column.isna().any():
                raise ValueError(
                    f"{where} column {term.name!r} has {int(column.isna().sum())} missing "
                    "value(s): every row needs every covariate."
                )
            if term.categorical:
                values = column.to_numpy(dtype=object)
                unknown = sorted({str(v) for v in values} - {str(v) for v in term.levels})
                if unknown:
                    raise ValueError(
                        f"{where} column {term.name!r} has levels {unknown} the model was not "
                        f"fit with; its levels are {[str(v) for v in term.levels]}."
                    )
                text = np.array([str(v) for v in values], dtype=object)
                parts.append(
                    np.stack([text == str(level) for level in term.levels[1:]], axis=1).astype(
                        float
                    )
                    if len(term.levels) > 1
                    else np.zeros((len(table), 0))
                )
            else:
                numbers = pd.to_numeric(column, errors="coerce")
                if numbers.isna().any():
                    raise ValueError(
                        f"{where} column {term.name!r} must hold numbers (a numeric term); "
                        f"got {column[numbers.isna()].iloc[0]!r}."
                    )
                parts.append(((numbers.to_numpy(float) - term.mean) / term.sd)[:, None])
        return np.concatenate(parts, axis=1)

    def to_original(self, beta: np.ndarray) -> np.ndarray:
        """Return coefficient draws ``(..., columns)`` in the columns' own units.

        A numeric term's coefficient is per unit of its column (the standardized one
        divided by the SD) and the intercept is the logit at zero of every numeric
        column and the reference level of every categorical one.
        """
        out = np.array(beta, dtype=float, copy=True)
        j = 1
        for term in self.terms:
            if term.categorical:
                j += len(term.levels) - 1
                continue
            out[..., j] = beta[..., j] / term.sd
            out[..., 0] -= beta[..., j] * term.mean / term.sd
            j += 1
        return out


def parse_formula(formula: str) -> list[tuple[str, bool, str | None]]:
    """Return the terms of an additive formula: (column, forced categorical, reference).

    Examples
    --------
    >>> from perfci.bayes.performance_design import parse_formula
    >>> parse_formula("length + C(site, reference='b')")
    [('length', False, None), ('site', True, "'b'")]
    """
    if not isinstance(formula, str) or not formula.strip():
        raise ValueError(f"`formula` must be a sum of terms, e.g. 'a + C(b)'; got {formula!r}.")
    text = formula.split("~", 1)[-1]
    out = []
    for part in text.split("+"):
        term = part.strip()
        match = _CATEGORICAL.match(term)
        if match:
            out.append((match.group(1).strip(), True, match.group(2)))
        elif re.fullmatch(r"[A-Za-z_][\w.]*", term):
            out.append((term, False, None))
        else:
            raise ValueError(
                f"`formula` term {term!r} is not a column name or C(name); perfci's formulas "
                "are sums of terms (no interactions or transformations: add them as columns)."
            )
    return out


def design_of(
    covariates: pd.DataFrame, formula: str | None, columns: Sequence[str] | None = None
) -> Design:
    """Read the terms of a model from the covariates table (and a formula).

    Examples
    --------
    >>> import pandas as pd
    >>> from perfci.bayes.performance_design import design_of
    >>> table = pd.DataFrame({"length": [2.0, 4.0, 6.0], "site": ["a", "b", "a"]})
    >>> design = design_of(table, None)
    >>> design.columns, design.matrix(table)[:, 1].tolist()
    (['Intercept', 'length', 'site[b]'], [-1.224744871391589, 0.0, 1.224744871391589])
    """
    import pandas as pd

    if formula is not None:
        specs = parse_formula(formula)
    else:
        names = list(covariates.columns) if columns is None else list(columns)
        specs = [(str(n), False, None) for n in names]
    seen: set[str] = set()
    terms = []
    for name, forced, reference in specs:
        if name in seen:
            raise ValueError(f"`formula` names {name!r} twice.")
        seen.add(name)
        if name not in covariates.columns:
            raise ValueError(
                f"`covariates` has no column {name!r}; its columns are "
                f"{[str(c) for c in covariates.columns]}."
            )
        column = covariates[name]
        if column.isna().any():
            raise ValueError(
                f"`covariates` column {name!r} has {int(column.isna().sum())} missing value(s): "
                "every text needs every covariate."
            )
        numeric = pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)
        if forced or not numeric:
            levels = sorted({v for v in column.to_numpy(dtype=object)}, key=str)
            if reference is not None:
                ref = reference.strip().strip("'\"")
                match = [v for v in levels if str(v) == ref]
                if not match:
                    raise ValueError(
                        f"`formula` reference {ref!r} is not a level of {name!r}: "
                        f"{[str(v) for v in levels]}."
                    )
                levels = [match[0], *(v for v in levels if v is not match[0])]
            if len(levels) < 2:
                raise ValueError(f"`covariates` column {name!r} has one level: nothing to fit.")
            terms.append(Term(name, True, tuple(levels)))
        else:
            values = column.to_numpy(dtype=float)
            sd = float(np.std(values))
            if not sd > 0:
                raise ValueError(f"`covariates` column {name!r} is constant: nothing to fit.")
            indicator = bool(np.isin(values, (0.0, 1.0)).all())
            terms.append(Term(name, False, (), float(np.mean(values)), sd, indicator))
    return Design(tuple(terms))


def patterns(
    x: np.ndarray, person: np.ndarray, successes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Collapse texts of one person and covariate pattern into binomial rows.

    Returns the rows' design ``(rows, p)``, person index, successes and trials.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.bayes.performance_design import patterns
    >>> x = np.ones((3, 1))
    >>> rows, person, hits, trials = patterns(x, np.array([0, 0, 1]), np.array([1, 0, 1]))
    >>> person.tolist(), hits.tolist(), trials.tolist()
    ([0, 1], [1.0, 1.0], [2.0, 1.0])
    """
    keys = np.concatenate([person[:, None].astype(float), x], axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    trials = np.bincount(inverse, minlength=len(unique)).astype(float)
    hits = np.bincount(inverse, weights=successes.astype(float), minlength=len(unique))
    return unique[:, 1:], unique[:, 0].astype(np.int64), hits, trials
