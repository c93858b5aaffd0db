"""Small shared validators.

Every public function validates its input once, at its top, with these helpers. Messages
name the argument in backticks and say what was expected, so that the same text reaches
a Python user (as :class:`ValueError`) and a command-line user (as one line on stderr).

What every numeric argument refuses, whatever the function: strings (``"0.9"`` is not a
number), booleans (``True`` is not a count), None where a value is required, and NaN or
infinity. Integer arguments refuse fractions and booleans; `rng` refuses anything
:func:`numpy.random.default_rng` would not turn into a generator that can spawn streams.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from .registry import choice_message
from .streams import DataSetStreams

__all__ = [
    "MAX_COUNT",
    "N_RESAMPLES",
    "UNSET",
    "Unset",
    "UndefinedMetricWarning",
    "check_choice",
    "check_confidence_level",
    "check_label",
    "check_memory",
    "check_positive_int",
    "check_real_array",
    "check_real_scalar",
    "batch_generators",
    "check_rng",
    "dataset_generators",
    "given",
    "or_default",
    "warn_undefined",
]


#: The most texts (or pseudo counts) one data set may hold: far beyond any labelled sample,
#: and below the sizes where binomial quantiles stop converging (about 10**16) and where
#: draws overflow 64-bit integers.
MAX_COUNT = 10**15


#: Bootstrap resamples when `n_resamples` is left unset: the one home of this default.
N_RESAMPLES = 2000


class Unset:
    """The type of :data:`UNSET`, the default of an option that was not passed.

    An option whose use depends on other options (a bootstrap option beside an analytic
    method) must tell "left unset" from "passed its default value": ``n_resamples=2000``
    passed to a method that does not resample is an error, as 1999 is. Comparing with the
    default value cannot tell them apart; this sentinel can (``value is UNSET``).
    """

    _instance: Unset | None = None

    def __new__(cls) -> Unset:  # one instance, so that `is` compares it, also after pickling
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __reduce__(self) -> str:
        return "UNSET"


#: The default of an option left unset (see :class:`Unset`).
UNSET = Unset()


def given(value: Any) -> bool:
    """Whether an option was passed (is not :data:`UNSET`).

    Examples
    --------
    >>> from perfci._core.validation import UNSET, given
    >>> given(UNSET), given(2000), given(None)
    (False, True, True)
    """
    return value is not UNSET


def or_default(value: Any, default: Any) -> Any:
    """`value`, or `default` when it was left unset.

    Examples
    --------
    >>> from perfci._core.validation import N_RESAMPLES, UNSET, or_default
    >>> or_default(UNSET, N_RESAMPLES), or_default(200, N_RESAMPLES)
    (2000, 200)
    """
    return default if value is UNSET else value


class UndefinedMetricWarning(RuntimeWarning):
    """A quantity is undefined for (part of) the input and was set to NaN."""


class UndefinedMetricError(ValueError):
    """A metric is undefined for the input: its entry point answers NaN and warns why."""


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """Return `value` if it is one of `choices`, else raise a `ValueError` listing them.

    For a registered argument, :meth:`perfci._core.registry.Choices.check` does the same
    with the registry's names; both word the message with
    :func:`~perfci._core.registry.choice_message`.
    """
    choices = sorted(choices)
    if not isinstance(value, str) or value not in choices:
        raise ValueError(choice_message(name, choices, value))
    return value


def _not_a_number(value: Any) -> bool:
    return value is None or isinstance(value, str | bytes | bool | np.bool_)


def _holds_a_boolean(values: list | tuple) -> bool:
    """Whether a (nested) list or tuple holds a boolean anywhere."""
    return any(
        isinstance(v, bool | np.bool_) or (isinstance(v, list | tuple) and _holds_a_boolean(v))
        for v in values
    )


_CELLS = ("tp", "fp", "fn", "tn")


def _positional(labels: Any) -> bool:
    """Say whether pandas `labels` are the positions 0, 1, ... (no names to read)."""
    return list(labels) == list(range(len(labels)))


def cells_by_label(name: str, value: Any) -> Any:
    """Return pandas confusion cells labelled tp, fp, fn, tn in that order, else `value`.

    A Series whose index, or a DataFrame whose columns, are exactly the cell names (in
    any order) is read by label. Other labelled four-cell pandas input is refused: its
    cells would be read by position. A square DataFrame whose index is its columns is a
    k x k matrix of classes and is read as it is, as are arrays and unlabelled pandas.
    """
    labels = getattr(value, "columns", None)
    if labels is None:
        labels = getattr(value, "index", None) if hasattr(value, "to_numpy") else None
    elif getattr(value, "index", None) is not None and value.index.equals(labels):
        return value
    if labels is None or not hasattr(labels, "equals") or _positional(labels):
        return value
    given = list(labels)
    if sorted(map(str, given)) == sorted(_CELLS) and len(set(given)) == 4:
        return value[list(_CELLS)]
    if len(given) == 4:
        raise ValueError(
            f"`{name}` is labelled {given!r}: label its cells tp, fp, fn, tn or pass an array."
        )
    return value


def check_real_array(name: str, value: Any, *, copy: bool = True) -> np.ndarray:
    """Convert `value` to a float array; raise if it is not real, finite numbers.

    Strings, booleans and None are refused, also inside a sequence: ``"3"`` and ``True``
    are not numbers here, and None is not a missing value to be read as NaN. With
    ``copy=False`` a float64 array is returned as it is, not copied.
    """
    if _not_a_number(value):
        raise ValueError(f"`{name}` must be real numbers; got {value!r}.")
    if isinstance(value, list | tuple) and _holds_a_boolean(value):
        # NumPy would read [True, 20] as [1, 20]
        raise ValueError(f"`{name}` must be real numbers, not booleans; got {value!r}.")
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):  # ragged nesting, for one
        raise ValueError(f"`{name}` must be real numbers; got {value!r}.") from None
    kind = raw.dtype.kind
    if kind == "O":
        if any(_not_a_number(v) for v in raw.ravel()):
            raise ValueError(f"`{name}` must be real numbers; got {value!r}.")
    elif kind not in "iuf":
        raise ValueError(f"`{name}` must be real numbers; got {value!r}.")
    try:
        arr = raw.astype(float, copy=copy)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be real numbers; got {value!r}.") from None
    # NaN propagates through min and max, and an infinity is one of them: two reductions
    # decide finiteness without an elementwise temporary the size of the input
    if arr.size and not (np.isfinite(arr.min()) and np.isfinite(arr.max())):
        raise ValueError(f"`{name}` must be finite numbers; got NaN or infinity.")
    return arr


def check_counts_array(name: str, value: Any) -> np.ndarray:
    """Return confusion cells as a float array: :func:`check_real_array` after pandas labels.

    A Series or DataFrame of cells labelled tp, fp, fn, tn is read by its labels
    (:func:`cells_by_label`); every function that takes `counts` reads them here.
    """
    return check_real_array(name, cells_by_label(name, value))


def check_real_scalar(name: str, value: Any) -> float:
    """Return `value` as a float after checking it is one real, finite number."""
    arr = check_real_array(name, value)
    if arr.ndim:
        raise ValueError(f"`{name}` must be a single number; got {value!r}.")
    return float(arr)


def check_confidence_level(
    value: Any, name: str = "confidence_level", *, scalar: bool = False
) -> np.ndarray:
    """Return `value` as a float array after checking it lies strictly inside (0, 1).

    With ``scalar=True`` an array is refused: the function takes one level.
    """
    arr = check_real_array(name, value)
    if scalar and arr.ndim:
        raise ValueError(f"`{name}` must be a single number; got {value!r}.")
    if np.any((arr <= 0) | (arr >= 1)):
        raise ValueError(f"`{name}` must lie strictly between 0 and 1; got {value!r}.")
    return arr


def check_positive_int(name: str, value: Any, extra: str = "") -> int:
    """Return `value` as an int after checking it is an integer of at least 1.

    Booleans and whole floats (``10.0``) are refused: an integer argument takes an
    integer. `extra` names what else the caller accepts (e.g. ``" or 'exact'"``).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer{extra}; got {value!r}.")
    return int(value)


def check_rng(rng: Any) -> np.random.Generator:
    """Return ``np.random.default_rng(rng)`` after checking `rng` can seed perfci's streams.

    Accepted: None, a non-negative integer (or a sequence of them), a
    :class:`numpy.random.SeedSequence`, a bit generator or a
    :class:`numpy.random.Generator` whose streams can be spawned. A boolean, a string, a
    float or a legacy ``RandomState`` is refused.
    """
    expected = "`rng` must be a numpy.random.Generator, a non-negative integer seed or None"
    if isinstance(rng, bool | np.bool_ | str | bytes | float | np.floating):
        raise ValueError(f"{expected}; got {rng!r}.")
    if isinstance(rng, np.random.RandomState):
        raise ValueError(
            f"{expected}; got a legacy RandomState, whose streams cannot be spawned "
            "(pass np.random.default_rng(seed))."
        )
    try:
        generator = np.random.default_rng(rng)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{expected}; got {rng!r}.") from None
    if not isinstance(generator.bit_generator.seed_seq, np.random.SeedSequence):
        raise ValueError(
            f"{expected}; got a generator whose streams cannot be spawned "
            "(pass np.random.default_rng(seed))."
        )
    return generator


def dataset_generators(rng: Any, count: int, batched: bool) -> DataSetStreams:
    """Random generators of data sets: the one rule every batched function follows.

    A single data set (no leading axes, ``batched=False``) uses
    ``np.random.default_rng(rng)`` itself; data set k of a batch of `count` (leading axes
    flattened in C order) uses ``perfci.batch_generators(rng, count)[k]``, a keyed Philox
    stream (:mod:`perfci._core.streams`), so a batched call equals the loop of single
    calls given those generators, draw for draw.
    """
    return DataSetStreams(check_rng(rng), count, batched)


def check_label(name: str, value: Any) -> Any:
    """Return `value` if it can be one label (None too, "the default"); else raise.

    A label is one string, number or boolean; a list, array, mapping or set is not (a
    comparison with it would broadcast), nor is NaN (a missing value).
    """
    if value is None:
        return value
    if isinstance(value, list | tuple | set | frozenset | dict | np.ndarray) or not (
        isinstance(value, str | bytes | numbers.Number | np.generic)
    ):
        raise ValueError(f"`{name}` must be a single label; got {value!r}.")
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value != value:
        raise ValueError(f"`{name}` must be a label, not a missing value (NaN).")
    return value


def check_memory(name: str, n_bytes: float, how: str) -> None:
    """Raise if holding `n_bytes` for argument `name` would not fit, saying how to ask less.

    A thin form of :func:`perfci._core.resources.check_memory` (the one place that knows
    how much memory is available) for checks that name one argument.
    """
    from .resources import check_memory as check_bytes

    check_bytes(n_bytes, f"`{name}`", how)


def warn_undefined(what: str, why: str, n_undefined: int, n_total: int) -> None:
    """Warn that `what` is undefined (NaN) for `n_undefined` of `n_total` entries."""
    where = "" if n_total == 1 else f" for {n_undefined} of {n_total} entries"
    warnings.warn(
        f"{what} is undefined{where}: {why}; returning NaN.",
        UndefinedMetricWarning,
        stacklevel=3,
    )


def batch_generators(rng: Any, size: int) -> DataSetStreams:
    """Return the generator of each data set of a batch of `size`, as batched calls use them.

    Parameters
    ----------
    rng : numpy.random.Generator, int or None
        What the batched call is given.
    size : int
        Data sets in the batch (its leading axes flattened in C order).

    Returns
    -------
    Sequence of numpy.random.Generator
        Item k is what data set k draws from: a single call given it equals that data set
        of the batched call, draw for draw.

    Examples
    --------
    >>> import numpy as np
    >>> import perfci as pc
    >>> samples = np.array([[18, 2], [19, 1], [17, 3]])
    >>> batch = pc.bootstrap_ci(samples, "proportion", rng=1, nested=False)
    >>> one = pc.bootstrap_ci(samples[1], "proportion", rng=pc.batch_generators(1, 3)[1])
    >>> bool(one.low == batch.low[1] and one.high == batch.high[1])
    True
    """
    return DataSetStreams(check_rng(rng), check_positive_int("size", size), True)
