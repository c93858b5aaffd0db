"""Small shared validators.

Every public function validates its input once, at its top, with these helpers. Messages
name the argument in backticks and say what was expected, so that the same text reaches
a Python user (as :class:`ValueError`) and a command-line user (as one line on stderr).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from .registry import choice_message

__all__ = [
    "UndefinedMetricWarning",
    "check_choice",
    "check_confidence_level",
    "check_real_array",
    "warn_undefined",
]


class UndefinedMetricWarning(RuntimeWarning):
    """A quantity is undefined for (part of) the input and was set to NaN."""


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


def check_real_array(name: str, value: Any) -> np.ndarray:
    """Convert `value` to a float array; raise if it is not real, finite numbers."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be real numbers; got {value!r}.") from None
    if arr.size and not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must be finite numbers; got NaN or infinity.")
    return arr


def check_confidence_level(value: Any, name: str = "confidence_level") -> np.ndarray:
    """Return `value` as a float array after checking it lies strictly inside (0, 1)."""
    arr = check_real_array(name, value)
    if np.any((arr <= 0) | (arr >= 1)):
        raise ValueError(f"`{name}` must lie strictly between 0 and 1; got {value!r}.")
    return arr


def warn_undefined(what: str, why: str, n_undefined: int, n_total: int) -> None:
    """Warn that `what` is undefined (NaN) for `n_undefined` of `n_total` entries."""
    where = "" if n_total == 1 else f" for {n_undefined} of {n_total} entries"
    warnings.warn(
        f"{what} is undefined{where}: {why}; returning NaN.",
        UndefinedMetricWarning,
        stacklevel=3,
    )
