"""Label intake shared by every labels wrapper: arrays checked once, labels shown in messages.

Also the two things several label layers share: the one reader of a wide table of labels
(a row per text, a column per run or annotator, missing codes allowed where they mean "did
not code": :func:`label_table`), and the one majority vote (:func:`majority_vote`, with a
`tie` rule).

pandas is imported inside the functions that need it (missing-value tests), so this
module loads with NumPy alone, as the rest of the core does.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "check_aligned",
    "CODE_TEXTS",
    "MAX_FRACTIONAL_LABELS",
    "SHOWN",
    "LabelTable",
    "as_label_array",
    "binary_code",
    "factorize_sorted",
    "has_columns",
    "label_array",
    "label_kind",
    "label_table",
    "listing",
    "majority_of_counts",
    "majority_vote",
    "places",
    "plain",
    "same_label",
    "sorted_labels",
    "text_key",
    "vote_counts",
]


#: Texts of a binary code: what a column of 0/1 numbers or booleans reads as in a file.
CODE_TEXTS = {"0": 0, "1": 1, "0.0": 0, "1.0": 1, "false": 0, "true": 1}
#: A label argument of numbers with more distinct values than this, some not whole, is
#: taken for scores and refused.
MAX_FRACTIONAL_LABELS = 2
#: Distinct labels shown in a message.
SHOWN = 6


def places(flags: np.ndarray, shape: tuple[int, ...], rows: tuple[str, int]) -> str:
    """Say where the flagged entries are: ``positions 3, 7 and 12`` (the first five)."""
    word, start = rows
    flat = np.flatnonzero(flags)
    if len(shape) > 1:
        shown = [str(tuple(int(i) + start for i in np.unravel_index(f, shape))) for f in flat[:5]]
    else:
        shown = [str(int(f) + start) for f in flat[:5]]
    if flat.size > 5:
        return f"{word}s {', '.join(shown)}, ... ({flat.size} in all)"
    if flat.size > 1:
        return f"{word}s {', '.join(shown[:-1])} and {shown[-1]}"
    return f"{word} {shown[0]}"


def label_array(
    shown: str, values: Any, *, ndim: int | None = 1, rows: tuple[str, int] = ("position", 0)
) -> np.ndarray:
    """One argument of labels or ids as an array, its shape and missing values checked.

    `shown` is how the argument is named in messages (`` `y_true` ``). `ndim` 1 asks for
    one-dimensional input; None takes any shape with texts on the last axis. Missing values
    (None, NaN, ``pd.NA``, NaT) are refused with their count and where the first ones are.
    """
    import pandas as pd

    if isinstance(values, pd.Series | pd.Index):
        arr = values.to_numpy()
    else:
        arr = np.asarray(values)
    if ndim == 1 and arr.ndim != 1:
        raise ValueError(f"{shown} must be one-dimensional; got shape {arr.shape}.")
    if ndim is None and (arr.ndim == 0 or arr.shape[-1] == 0):
        raise ValueError(f"{shown} must hold one label per text; got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{shown} must not be empty.")
    if arr.dtype.kind == "f" and np.isinf(arr).any():
        where = places(np.isinf(arr), arr.shape, rows)
        raise ValueError(f"{shown} holds infinity, which is not a label, at {where}.")
    missing = np.asarray(pd.isna(arr))
    if arr.dtype.kind in "US" and not isinstance(values, np.ndarray | pd.Series | pd.Index):
        # a list mixing text and float NaN became the text 'nan': read the values as given
        given = np.asarray(values, dtype=object)
        if given.shape == arr.shape:
            missing = np.asarray(pd.isna(given))
    if missing.any():
        raise ValueError(
            f"{shown} contains missing values (NaN or None): {int(missing.sum())} of "
            f"{arr.size}, at {places(missing, arr.shape, rows)}; drop those texts or give "
            "them a label."
        )
    return arr


def check_aligned(**arguments: Any) -> None:
    """Refuse pandas arguments of one call whose indexes differ: they pair by position.

    perfci reads labels, scores and ids as arrays, text i of one with text i of the
    other; two pandas Series (or frames) with the same values in another order, or
    with different indexes, would be paired wrongly without a word. Arguments that are
    not pandas objects (lists, arrays) are positions and are not checked.
    """
    import pandas as pd

    indexed = [
        (name, value.index)
        for name, value in arguments.items()
        if isinstance(value, pd.Series | pd.DataFrame)
    ]
    for name, index in indexed[1:]:
        first, first_index = indexed[0]
        # (of another length, the length checks that follow say what is wrong)
        if len(index) == len(first_index) and not index.equals(first_index):
            raise ValueError(
                f"`{name}` is a pandas object whose index is not `{first}`'s: perfci pairs "
                "texts by position, so they would be matched wrongly. Align them first "
                f"(e.g. `{name}.loc[{first}.index]`) or pass arrays."
            )


def as_label_array(name: str, values: Any, *, ndim: int | None = 1) -> np.ndarray:
    """:func:`label_array` of the argument called `name`."""
    return label_array(f"`{name}`", values, ndim=ndim)


def plain(value: Any) -> Any:
    """Return a NumPy scalar as the Python value it prints as (1, not np.int64(1))."""
    return value.item() if isinstance(value, np.generic) else value


def binary_code(value: Any) -> int | None:
    """Return the 0/1 of a binary code (1, 1.0, True, "1", "1.0", "true"), else None."""
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, numbers.Real):
        return 0 if value == 0 else 1 if value == 1 else None
    if isinstance(value, str):
        return CODE_TEXTS.get(value.lower())
    return None


def label_kind(value: Any) -> str:
    """Return the kind of a label: ``numbers`` (booleans too), ``text`` or ``other``."""
    if isinstance(value, bool | np.bool_ | numbers.Real):
        return "numbers"
    return "text" if isinstance(value, str) else "other"


def text_key(value: Any) -> str:
    """Return what a label reads as, whatever its type, case and surrounding whitespace."""
    value = plain(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip().casefold()


def sorted_labels(values: Any) -> list[Any]:
    """Labels sorted; labels of types that do not compare are ordered by text."""
    values = [plain(v) for v in values]
    try:
        return sorted(values)
    except TypeError:  # mixed label types: order them by their text
        return sorted(values, key=str)


def listing(values: Any) -> str:
    """Show the first few labels for a message: ``1, 2, 3, ... (9 in all)``."""
    values = list(values)
    shown = ", ".join(repr(plain(v)) for v in values[:SHOWN])
    return shown + (f", ... ({len(values)} in all)" if len(values) > SHOWN else "")


def same_label(label: Any, other: Any) -> bool:
    """Label equality without NumPy's elementwise comparison of numbers with text."""
    return label_kind(label) == label_kind(other) and bool(label == other)


def check_distinct(name: str, values: Any) -> None:
    """Refuse a list of labels that names a label twice (1, 1.0 and True are one label).

    Every argument that lists the classes (`labels` of :func:`perfci.confusion`, ...)
    checks it here.
    """
    seen: list[Any] = []
    repeated: list[Any] = []
    for value in list(values):
        if not any(same_label(value, other) for other in seen):
            seen.append(value)
        elif not any(same_label(value, other) for other in repeated):
            repeated.append(value)
    if repeated:
        raise ValueError(f"`{name}` repeats {listing(repeated)}: give each class once.")


#: Values from which :func:`factorize_sorted` hashes rather than sorts (below, the fixed
#: cost of a hash table exceeds that of sorting).
_HASH_FROM = 10**5


def factorize_sorted(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """Return the distinct values in sorted order and the index of each value among them.

    The same as ``numpy.unique(values, return_inverse=True)`` (with the inverse in the
    shape of `values`), by hashing instead of sorting all values: the distinct values
    are found with :func:`pandas.factorize` in one pass, and only they are sorted, so the
    cost is O(n + u log u) for n values of which u are distinct, not O(n log n). Fewer
    than 100,000 values of one type are sorted with :func:`numpy.unique`, which is then
    faster.

    Parameters
    ----------
    values : array_like
        Labels or ids (numbers, text, or any mix of them), of any shape.

    Returns
    -------
    uniques : numpy.ndarray
        The distinct values, sorted, with the dtype of `values`. Values of types that do
        not compare (``1`` and ``"a"``) are ordered by their text, as labels are; they
        are kept apart (``1`` is not ``"1"``).
    codes : numpy.ndarray of intp
        For each value, its index in `uniques`, in the shape of `values`.

    Examples
    --------
    >>> from perfci.counting import factorize_sorted
    >>> factorize_sorted(["b", "a", "c", "a"])
    (array(['a', 'b', 'c'], dtype='<U1'), array([1, 0, 2, 0]))
    >>> import numpy as np
    >>> factorize_sorted(np.array([10, "x", 2, 10], dtype=object))
    (array([10, 2, 'x'], dtype=object), array([0, 2, 1, 0]))
    """
    import pandas as pd

    arr = np.asarray(values)
    if arr.dtype.kind != "O" and arr.size < _HASH_FROM:  # small: sorting is cheaper
        uniques, codes = np.unique(arr, return_inverse=True)
        return uniques, codes.reshape(arr.shape)
    if arr.dtype.kind != "O":  # one type: pandas sorts the distinct values and remaps
        codes, uniques = pd.factorize(arr.ravel(), sort=True)
        # text comes back as objects: keep the input's dtype
        return np.asarray(uniques).astype(arr.dtype, copy=False), codes.reshape(arr.shape)
    codes, uniques = pd.factorize(arr.ravel())  # codes in order of first appearance
    uniques = np.asarray(uniques)
    try:
        order = np.argsort(uniques)  # distinct values: no ties, so any sort will do
    except TypeError:  # types that do not compare: order by text (stable), as sorted_labels does
        order = np.argsort(np.array([str(v) for v in uniques.tolist()]), kind="stable")
    rank = np.empty(order.size, dtype=np.intp)
    rank[order] = np.arange(order.size)
    return uniques[order], rank[codes].reshape(arr.shape)


def has_columns(values: Any) -> bool:
    """Whether a label argument is a table, a column per run or annotator (two-dimensional).

    A :class:`pandas.DataFrame` always is; a :class:`pandas.Series` never is; anything
    else is when it is a two-dimensional array.
    """
    import pandas as pd

    if isinstance(values, pd.DataFrame):
        return True
    return not isinstance(values, pd.Series) and np.ndim(np.asarray(values, dtype=object)) == 2


# ------------------------------------------------------------------ wide tables


class LabelTable(NamedTuple):
    """A table of labels read by :func:`label_table`: a row per text, a column per source."""

    #: ``(n_texts, n_columns)``: a DataFrame's or a list's entries as objects, an array as given.
    values: np.ndarray
    #: Where a label is missing (None, NaN, ``pd.NA``, NaT), the shape of `values`.
    missing: np.ndarray
    #: The columns' names: a DataFrame's, else ``"{prefix} 1"``, ``"{prefix} 2"``, ...
    names: list[str]
    #: Whether `names` are a DataFrame's column names.
    named: bool


def _is_infinite(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isinf(value)


def label_table(
    name: str,
    values: Any,
    *,
    column: str = "annotator",
    entry: str = "code",
    prefix: str | None = None,
    allow_missing: bool = True,
) -> LabelTable:
    """Read a wide table of labels: one row per text, one column per run or annotator.

    The one reader of such tables (several annotators' codes, a classifier's repeated
    runs): a :class:`pandas.DataFrame` (its column names name the columns), a 2-D array
    or a list of rows. Checked here: that it is a table (not None, a string or a mapping;
    rows of one length; two-dimensional), that it has a row, that it holds labels (not,
    say, dates), that no entry is infinite, and, unless `allow_missing`, that no label is
    missing. How many columns it needs, and what a row without any label means, are the
    caller's.

    Parameters
    ----------
    name : str
        The argument, as messages name it (``"codes"``).
    values : DataFrame or array_like
        The table.
    column : str, default "annotator"
        What a column is, in messages: ``"annotator"`` or ``"run"``.
    entry : str, default "code"
        What an entry is, in messages: ``"code"`` or ``"label"``.
    prefix : str, optional
        Names of the columns of a table without names: ``"{prefix} 1"``, ``"{prefix} 2"``,
        ...; default `column`.
    allow_missing : bool, default True
        Whether an entry may be missing (an annotator who did not code a text); if not, a
        missing label is refused, naming its row and column.

    Returns
    -------
    LabelTable
        The entries, where they are missing, and the columns' names.

    Raises
    ------
    ValueError
        For anything that is not such a table, naming `name`.

    Examples
    --------
    >>> import pandas as pd
    >>> from perfci._core.labels import label_table
    >>> table = label_table("codes", pd.DataFrame({"ana": ["yes", None], "ben": ["no", "no"]}))
    >>> table.values.tolist(), table.missing.tolist(), table.names
    ([['yes', 'no'], [nan, 'no']], [[False, False], [True, False]], ['ana', 'ben'])
    >>> label_table("y_pred", [[1, 0], [1, None]], column="run", entry="label",
    ...             allow_missing=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: `y_pred` contains missing labels ...: 1 of 4, the first at row 1, run 1; ...
    """
    import pandas as pd

    shown, entries = f"`{name}`", f"{entry}s"
    what = f"a table of {entries}, one row per text and one column per {column}"
    named = isinstance(values, pd.DataFrame)
    names: list[str] = []
    if named:
        names = [str(c) for c in values.columns]
        repeated = [c for c in dict.fromkeys(names) if names.count(c) > 1]
        if repeated:  # two columns of one name would count as two runs or annotators
            raise ValueError(f"{shown} names the {column} {repeated[0]!r} more than once.")
        table = values.to_numpy(dtype=object)
    else:
        if values is None or isinstance(values, str | bytes | dict | set):
            raise ValueError(f"{shown} must be {what}; got {values!r}.")
        try:
            table = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
        except (TypeError, ValueError):  # ragged rows
            gap = f" (NaN or None where an {column} did not code a text)" if allow_missing else ""
            raise ValueError(
                f"{shown} must be a table of {entries} with the same number of columns in "
                f"every row{gap}."
            ) from None
    if table.ndim != 2:
        raise ValueError(f"{shown} must be {what}; got shape {table.shape}.")
    if not named:
        names = [f"{prefix or column} {j + 1}" for j in range(table.shape[1])]
    if table.shape[0] == 0:
        raise ValueError(f"{shown} must hold at least one text (row); got none.")
    if table.dtype.kind not in "biufOUS":
        raise ValueError(f"{shown} must hold labels; got an array of dtype {table.dtype}.")
    missing = np.asarray(pd.isna(table), dtype=bool)
    if not allow_missing and missing.any():
        row, col = (int(v[0]) for v in np.nonzero(missing))
        which = repr(names[col]) if named else f"{col}"
        raise ValueError(
            f"{shown} contains missing labels (NaN or None): {int(missing.sum())} of "
            f"{missing.size}, the first at row {row}, {column} {which}; every {column} labels "
            "every text."
        )
    if table.dtype.kind == "f":
        infinite = np.isinf(table)
    elif table.dtype.kind == "O" and table.size:
        infinite = np.vectorize(_is_infinite, otypes=[bool])(table)
    else:
        infinite = np.zeros(table.shape, dtype=bool)
    if infinite.any():
        row, col = (int(i) for i in np.argwhere(infinite)[0])
        raise ValueError(
            f"{shown} holds infinity, which is not a {entry}, at text {row} and {column} "
            f"{col} ({int(infinite.sum())} in all)."
        )
    return LabelTable(table, missing, names, named)


# ------------------------------------------------------------------ majority vote

#: The tie rules of :func:`majority_of_counts`: ``"none"`` (no majority), or a code.
MAJORITY_TIES = ("none",)


def vote_counts(labels: np.ndarray, categories: int | None = None) -> np.ndarray:
    """Per-text counts of each code ``(n_texts, K)`` from code indices ``(n_texts, voters)``.

    `labels` hold each voter's code index 0..K-1 for each text, -1 where the voter gave
    none; `categories` is K (default the largest index + 1). One bincount, no loop.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.labels import vote_counts
    >>> vote_counts(np.array([[0, 1, 1], [2, -1, 2]]), 3).tolist()
    [[1, 2, 0], [0, 0, 2]]
    """
    index = np.asarray(labels)
    n = index.shape[0]
    k = int(index.max(initial=-1)) + 1 if categories is None else int(categories)
    rows, _ = np.nonzero(index >= 0)
    flat = rows * k + index[index >= 0]
    return np.bincount(flat, minlength=n * k).reshape(n, k)


def majority_of_counts(counts: Any, *, tie: str | int = "none") -> np.ndarray:
    """Each text's majority code from its vote counts ``(..., K)``: the one majority vote.

    The majority code is the code with more votes than any other (a plurality; with two
    codes, more than half of the votes). A text with no vote has none (-1). A text whose
    most frequent codes tie gets `tie`: ``"none"`` leaves it without a majority (-1: the
    annotators' majority label, :func:`perfci.annotators.majority_reference`,
    :func:`perfci.agreement_report`); a code index gives it that code (0, the negative of
    a binary code: the majority vote of repeated runs, :func:`perfci.runs.majority_vote`,
    where a tie counts as the label that needs no majority).

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.labels import majority_of_counts
    >>> votes = np.array([[2, 1], [1, 1], [0, 3], [0, 0]])  # negative, positive votes
    >>> majority_of_counts(votes).tolist(), majority_of_counts(votes, tie=0).tolist()
    ([0, -1, 1, -1], [0, 0, 1, -1])
    """
    counts = np.asarray(counts)
    if not (
        (isinstance(tie, str) and tie in MAJORITY_TIES)
        or (isinstance(tie, numbers.Integral) and not isinstance(tie, bool) and tie >= 0)
    ):
        raise ValueError(
            f"`tie` must be one of {list(MAJORITY_TIES)} or a code index; got {tie!r}."
        )
    top = counts.max(-1)
    winners = np.sum(counts == top[..., None], -1)
    tied = -1 if isinstance(tie, str) else int(tie)
    return np.where(top > 0, np.where(winners == 1, counts.argmax(-1), tied), -1)


def majority_vote(
    labels: np.ndarray, categories: int | None = None, *, tie: str | int = "none"
) -> np.ndarray:
    """Each text's majority code index from its voters' code indices ``(n_texts, voters)``.

    :func:`majority_of_counts` of :func:`vote_counts`: -1 in `labels` is a missing vote,
    -1 in the result a text without a majority (no vote, or a tie with ``tie="none"``).

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.labels import majority_vote
    >>> codes = np.array([[0, 1, 1], [2, 0, -1], [-1, -1, -1]])
    >>> majority_vote(codes, 3).tolist(), majority_vote(codes, 3, tie=0).tolist()
    ([1, -1, -1], [1, 0, -1])
    """
    return majority_of_counts(vote_counts(labels, categories), tie=tie)
