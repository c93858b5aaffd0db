"""One scalar key of a suite file (or one value of a grid dim): its type, range and check.

A :class:`Field` says what a valid value is, in words (:meth:`Field.describe`, the text
of the error messages and of the table in ``docs/validation.md``), and checks a value
against it. The suite's keys (:mod:`perfci.harness.schema`) and the population kinds'
keys and grid dims (:mod:`perfci.harness.kinds`) are declared as fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._core.registry import Choices

__all__ = ["Field", "field_map", "share"]


#: The exception a check raises (a subclass of `ValueError`, such as a suite's error).
_Error = type[ValueError]


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Field:
    """One scalar key of a suite file (or one value of a grid dim): its type and range.

    Attributes
    ----------
    name : str
        The key.
    help : str
        One line of help.
    type : type
        ``int``, ``float`` (an integer is accepted too), ``str`` or ``bool``. TOML tells
        them apart, so ``10.0`` is not an ``int`` and ``1`` is not a ``bool``. A string
        never holds a NUL character (U+0000), which a result file cannot store.
    required : bool
        Whether a suite must give it (for a grid dim: whether the dim must be present).
    default : object
        The value used when an optional key is absent.
    minimum, maximum : float, optional
        Bounds of a number.
    open_minimum, open_maximum : bool
        Whether the bound itself is excluded.
    choices : Choices, optional
        The allowed values of a string.
    pattern : str, optional
        A regular expression the whole string must match.
    expected : str, optional
        What a valid value is, in words, when :meth:`describe` cannot say it.
    empty : bool
        Whether a string may be empty.

    Examples
    --------
    >>> from perfci.harness.schema import SUITE_KEYS
    >>> seed = SUITE_KEYS["seed"]
    >>> seed.describe()
    'a non-negative integer'
    >>> seed.check(1.5, "seed")
    Traceback (most recent call last):
    ...
    ValueError: `seed` must be a non-negative integer; got 1.5.
    """

    name: str
    help: str
    type: type = float
    required: bool = True
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    open_minimum: bool = False
    open_maximum: bool = False
    choices: Choices | None = None
    pattern: str | None = None
    expected: str | None = None
    empty: bool = False

    def describe(self) -> str:
        """Return what a valid value is, in words (``"an integer at least 1"``)."""
        if self.expected is not None:
            return self.expected
        if self.choices is not None:
            return f"one of {sorted(self.choices.names)}"
        if self.type is bool:
            return "true or false"
        if self.type is str:
            return "a string" if self.empty else "a non-empty string"
        lo, hi = self.minimum, self.maximum
        if self.type is int:
            if lo is not None and hi is not None:
                return f"an integer from {lo} to {hi}"
            if lo == 0:
                return "a non-negative integer"
            return "an integer" if lo is None else f"an integer at least {lo}"
        if lo is not None and hi is not None:
            if self.open_minimum and self.open_maximum:
                return f"a number strictly between {_number(lo)} and {_number(hi)}"
            left, right = "(" if self.open_minimum else "[", ")" if self.open_maximum else "]"
            return f"a number in {left}{_number(lo)}, {_number(hi)}{right}"
        if lo is not None:
            return f"a number {'above' if self.open_minimum else 'at least'} {_number(lo)}"
        return "a number"

    def accepts(self, value: Any) -> bool:
        """Return True if `value` has the field's type and lies in its range."""
        if self.type is bool:
            return isinstance(value, bool)
        if self.type is str:
            if not isinstance(value, str) or not (value or self.empty) or "\x00" in value:
                return False
            if self.choices is not None and value not in self.choices:
                return False
            return self.pattern is None or re.fullmatch(self.pattern, value) is not None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.type is int and not isinstance(value, int):
            return False
        if value != value or value in (float("inf"), float("-inf")):  # NaN, infinity
            return False
        lo, hi = self.minimum, self.maximum
        if lo is not None and (value < lo or (self.open_minimum and value == lo)):
            return False
        return hi is None or not (value > hi or (self.open_maximum and value == hi))

    def check(self, value: Any, key: str | None = None, error: _Error = ValueError) -> Any:
        """Return `value` if the field accepts it, else raise `error` naming `key`.

        A string holding a NUL character (U+0000) is refused as such: a result file
        (netCDF) cannot store one, so it would fail only when the result is written,
        after every cell was computed.
        """
        if self.type is str and isinstance(value, str) and "\x00" in value:
            raise error(
                f"`{key or self.name}` must not hold a NUL character (U+0000), which a "
                f"result file (netCDF) cannot store; got {value!r}."
            )
        if not self.accepts(value):
            raise error(f"`{key or self.name}` must be {self.describe()}; got {value!r}.")
        return value


def field_map(*fields: Field) -> Mapping[str, Field]:
    """Return the fields keyed by their names, in the order given."""
    return {f.name: f for f in fields}


def share(
    name: str, help: str, *, closed_high: bool = False, default: float | None = None
) -> Field:
    """Return a share in (0, 1), optional with `default` when one is given."""
    return Field(
        name,
        help,
        float,
        default is None,
        default,
        minimum=0,
        maximum=1,
        open_minimum=True,
        open_maximum=not closed_high,
    )
