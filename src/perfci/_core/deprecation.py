"""Renamed keywords and functions: the old spelling keeps working, with a FutureWarning.

The keyword of a credible or confidence level is `confidence_level`; the Bayesian
functions called it ``level``. A function that still takes ``level=`` declares it
keyword-only with the default :data:`~perfci._core.validation.UNSET` (the one sentinel
of an option left unset) and resolves it at its top with
:func:`resolve_level`; :func:`hide_level` leaves it out of the function's signature (the
documentation and introspection show `confidence_level` only). Its `confidence_level`
defaults to :data:`DEFAULT_LEVEL`, 0.95 marked as the default, so that a level given
both ways is an error even when the new one is 0.95. :func:`renamed` makes the former
name of a function an alias that warns and names the new one.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, TypeVar, cast

from .validation import UNSET, check_confidence_level

# a TypeVar, not PEP 695 syntax: the tools that read the sources run on Python 3.11 too
F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "DEFAULT_LEVEL",
    "LEVEL_DEPRECATION",
    "UNSET",
    "hide_level",
    "hide_parameters",
    "positional_groups",
    "renamed",
    "renamed_keyword",
    "resolve_level",
]

#: The warning of a call that passes ``level=``.
LEVEL_DEPRECATION = "`level` is deprecated; use `confidence_level`"


class _DefaultLevel(float):
    """The default level, 0.95: a float that a function tells from a level it was given."""

    __slots__ = ()


#: The default `confidence_level`, 0.95. ``confidence_level is DEFAULT_LEVEL`` says the
#: caller left it out (a 0.95 the caller passes is another object).
DEFAULT_LEVEL: float = _DefaultLevel(0.95)


def resolve_level(confidence_level: Any, level: Any, stacklevel: int = 3) -> Any:
    """Return the level a call asked for: `confidence_level`, or the former ``level=``.

    With ``level`` given, it is checked under its own name (a bad value raises a
    `ValueError` naming `level`), a :class:`FutureWarning` says it is deprecated, and its
    value is returned; given with `confidence_level` too, a `ValueError` names both.
    `stacklevel` is the warning's, counted from this function (3: the caller of the
    function that resolves).

    Examples
    --------
    >>> import warnings
    >>> from perfci._core.deprecation import DEFAULT_LEVEL, UNSET, resolve_level
    >>> resolve_level(0.9, UNSET)
    0.9
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     resolve_level(DEFAULT_LEVEL, 0.8), str(caught[0].message)
    (0.8, '`level` is deprecated; use `confidence_level`.')
    """
    if level is UNSET:
        return confidence_level
    if confidence_level is not DEFAULT_LEVEL:
        raise ValueError(
            "`level` and `confidence_level` were both given; `level` is the former name of "
            "`confidence_level`: pass `confidence_level` only."
        )
    check_confidence_level(level, "level", scalar=True)
    warnings.warn(f"{LEVEL_DEPRECATION}.", FutureWarning, stacklevel=stacklevel)
    return level


def hide_parameters(function: F, *names: str, positional: bool = False) -> F:  # noqa: UP047
    """Leave former parameters out of `function`'s signature; return `function`.

    `names` are keywords kept for their former spelling; `positional` also hides the
    ``*args`` that catch an argument formerly passed by position. The function itself is
    unchanged (no wrapper: its warnings keep their stack levels); :func:`inspect.signature`,
    and with it the documentation, shows the current parameters only.
    """
    signature = inspect.signature(function)
    kept = [
        p
        for name, p in signature.parameters.items()
        if name not in names and not (positional and p.kind is p.VAR_POSITIONAL)
    ]
    setattr(function, "__signature__", signature.replace(parameters=kept))  # noqa: B010
    return function


def hide_level(function: F) -> F:  # noqa: UP047
    """Leave the former ``level`` keyword out of `function`'s signature; return `function`."""
    return hide_parameters(function, "level")


def positional_groups(former: tuple[Any, ...], groups: Any, function: str) -> Any:
    """Return the person ids of a call, also when passed by position (the former signature).

    `groups` is keyword-only, after the metric, in every labels function; a function that
    took it by position catches it in ``*former`` (hidden from its signature by
    :func:`hide_parameters`). One such argument is taken with a :class:`FutureWarning`;
    more, or one beside ``groups=``, is a `TypeError`, as Python's own would be.

    Examples
    --------
    >>> import warnings
    >>> from perfci._core.deprecation import positional_groups
    >>> positional_groups((), "ids", "metric_ci")
    'ids'
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     positional_groups(("ids",), None, "metric_ci"), caught[0].category.__name__
    ('ids', 'FutureWarning')
    """
    if not former:
        return groups
    if len(former) > 1 or groups is not None:
        raise TypeError(
            f"{function}() takes `groups` as a keyword only: pass `groups=` (got "
            f"{len(former)} more positional argument{'s' * (len(former) > 1)})."
        )
    warnings.warn(
        f"`groups` passed by position to {function}() is deprecated; pass `groups=`.",
        FutureWarning,
        stacklevel=3,
    )
    return former[0]


def renamed_keyword(new: Any, old: Any, new_name: str, old_name: str) -> Any:
    """Return the value of a renamed keyword: `new`, or the former `old` with a warning.

    `old` left :data:`UNSET` gives `new`; given, it warns (a :class:`FutureWarning`
    naming `new_name`) and is used, and given beside a `new` other than None it is a
    `ValueError` naming both.

    Examples
    --------
    >>> from perfci._core.deprecation import UNSET, renamed_keyword
    >>> renamed_keyword([0.2, 0.9], UNSET, "y_score", "score")
    [0.2, 0.9]
    """
    if old is UNSET:
        return new
    if new is not None:
        raise ValueError(
            f"`{old_name}` and `{new_name}` were both given; `{old_name}` is the former name "
            f"of `{new_name}`: pass `{new_name}` only."
        )
    warnings.warn(f"`{old_name}` is deprecated; use `{new_name}`.", FutureWarning, stacklevel=3)
    return old


def renamed(old: str, function: F) -> F:  # noqa: UP047
    """Return an alias of `function` under its former name `old` that warns when called.

    The alias takes the arguments `function` takes and returns what it returns, after a
    :class:`FutureWarning` naming the new name.

    Examples
    --------
    >>> import warnings
    >>> from perfci._core.deprecation import renamed
    >>> def total_counts(x):
    ...     return sum(x)
    >>> total = renamed("total", total_counts)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     total([1, 2]), str(caught[0].message)
    (3, '`total` is renamed `total_counts`; the old name will be removed.')
    """
    new = function.__name__
    message = f"`{old}` is renamed `{new}`; the old name will be removed."

    @functools.wraps(function)
    def alias(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(message, FutureWarning, stacklevel=2)
        return function(*args, **kwargs)

    alias.__name__ = old
    alias.__qualname__ = old
    alias.__doc__ = f"Former name of :func:`{new}`; calling it warns ({message})"
    return cast(F, alias)
