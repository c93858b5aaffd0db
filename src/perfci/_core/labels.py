"""Label intake shared by every labels wrapper: arrays checked once, labels shown in messages.

pandas is imported inside the functions that need it (missing-value tests), so this
module loads with NumPy alone, as the rest of the core does.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = [
    "CODE_TEXTS",
    "MAX_FRACTIONAL_LABELS",
    "SHOWN",
    "as_label_array",
    "binary_code",
    "label_array",
    "factorize_sorted",
    "label_kind",
    "listing",
    "places",
    "plain",
    "same_label",
    "sorted_labels",
    "text_key",
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
    if missing.any():
        raise ValueError(
            f"{shown} contains missing values (NaN or None): {int(missing.sum())} of "
            f"{arr.size}, at {places(missing, arr.shape, rows)}; drop those texts or give "
            "them a label."
        )
    return arr


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
