"""Credible intervals: the result every Bayesian interval is, its vocabulary, and from draws.

:class:`CredibleInterval` (estimand, kind, level, posterior median and ends), the names it
takes (:data:`ESTIMANDS`, :data:`INTERVAL_KINDS`, :func:`check_estimand` with the former
name ``"text_weighted"``), and the two ways every module of :mod:`perfci.bayes` turns
posterior draws into interval ends (:func:`interval_of_draws`, :func:`defined_interval`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core.grid import interval_from_draws
from .._core.results import IntervalResult, sources_of
from .._core.validation import check_choice

__all__ = [
    "ESTIMANDS",
    "INTERVAL_KINDS",
    "RENAMED_ESTIMANDS",
    "CredibleInterval",
    "CredibleResult",
    "check_estimand",
    "defined_interval",
    "interval_of_draws",
    "plain",
]

ESTIMANDS = ("population", "mu", "sampled_persons", "person")
#: Former names of estimands, accepted with a FutureWarning.
RENAMED_ESTIMANDS = {"text_weighted": "sampled_persons"}
INTERVAL_KINDS = ("eti", "hdi")


def check_estimand(name: str, value: Any, choices: tuple[str, ...] = ESTIMANDS) -> str:
    """Return the estimand `value` names, one of `choices`; a former name warns.

    ``"text_weighted"`` is the former name of ``"sampled_persons"``: it is accepted with a
    :class:`FutureWarning` and will be removed.
    """
    if isinstance(value, str) and value in RENAMED_ESTIMANDS:
        new = RENAMED_ESTIMANDS[value]
        warnings.warn(
            f"estimand {value!r} is now called {new!r} (it is about the sampled persons "
            f"only); the old name will be removed. For the population the frequentist "
            f"intervals are about, use 'population'.",
            FutureWarning,
            stacklevel=3,
        )
        value = new
    return check_choice(name, value, choices)


class CredibleResult(IntervalResult):
    """The base of the credible intervals: the interval protocol, about an estimand.

    A subclass has `estimand` and `confidence_level` fields; `sources` follows from the
    estimand, and `level`, the former name of `confidence_level`, still reads.
    """

    if TYPE_CHECKING:
        estimand: str
        confidence_level: float

    @property
    def level(self) -> float:
        """Return `confidence_level` (its former name, deprecated)."""
        warnings.warn("`level` is deprecated; use `confidence_level`.", FutureWarning, stacklevel=2)
        return self.confidence_level

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes.

        ``("texts", "persons")`` for an estimand about the population of persons
        (``"population"``, ``"mu"``), else ``("texts",)``.
        """
        return sources_of(persons=self.estimand in ("population", "mu"))


@dataclass(frozen=True, repr=False)
class CredibleInterval(CredibleResult):
    """A credible interval.

    Attributes
    ----------
    estimand : str
        ``"population"``, ``"mu"``, ``"sampled_persons"``, ``"person"`` or a metric name.
    kind : str
        ``"eti"`` (equal-tailed) or ``"hdi"`` (highest density).
    confidence_level : float
        The credible level (formerly `level`, still readable with a FutureWarning).
    estimate : float or numpy.ndarray
        The posterior median.
    low, high : float or numpy.ndarray
        The interval ends (one per person for ``"person"``, one per data set for
        :func:`perfci.bayes.grid_intervals` of a batch).

    Notes
    -----
    :meth:`to_dict`, :meth:`to_frame` and :meth:`to_xarray` hold every field, as for
    every perfci result (one row per person or data set for arrays).
    """

    _derived: ClassVar[tuple[str, ...]] = ("method", "sources")

    estimand: str
    kind: str
    confidence_level: float
    estimate: Any
    low: Any
    high: Any

    @property
    def method(self) -> str:
        """Return the interval with what it is of, as results name their method."""
        return f"bayes {self.kind} credible interval ({self.estimand})"


def plain(a: ArrayLike) -> Any:
    """Return a Python number (or bool) for a single value, else the array."""
    arr = np.asarray(a)
    return arr.item() if arr.ndim == 0 else arr


def interval_of_draws(
    estimand: str, draws: NDArray[np.float64], kind: str, level: float
) -> CredibleInterval:
    """Credible interval from draws on the last axis (one interval per leading index)."""
    low, mid, high = interval_from_draws(np.atleast_2d(draws), kind, level)
    if draws.ndim == 1:
        low, mid, high = low[0], mid[0], high[0]
    return CredibleInterval(estimand, kind, level, plain(mid), plain(low), plain(high))


def defined_interval(
    values: NDArray[np.float64], kind: str, level: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Low, median and high of draws (K, draws); NaN for a data set with undefined draws."""
    total = values.shape[0]
    low, mid, high = np.full(total, np.nan), np.full(total, np.nan), np.full(total, np.nan)
    defined = ~np.isnan(values).any(-1)
    if defined.any():
        low[defined], mid[defined], high[defined] = interval_from_draws(
            values[defined], kind, level
        )
    return low, mid, high
