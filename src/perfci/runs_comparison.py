r"""The paired difference of a metric between two classifiers, with repeated runs of either.

Two classifiers labelled the same texts, one of them (or both) several times: an LLM
prompt run at a temperature above 0 against a fine-tuned model, or two prompts.
:func:`compare_runs` is what :func:`perfci.compare` computes when `pred_a` or `pred_b`
has a column per run; :func:`compare_runs_counts` is its counts-level core. The units'
part of the variance is paired (both classifiers labelled the same texts); each
classifier's runs add their own (:func:`perfci.crossed.paired_variance`). The result is
a :class:`RunsComparison`. These names are also :mod:`perfci.runs`'.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from ._core.results import IntervalResult, sources_of
from ._core.validation import UndefinedMetricWarning, check_label, check_real_array
from .crossed import (
    crossed_iv,
    paired_variance,
    person_run_cells,
    read_run_labels,
    runs_table,
    variance_components,
)
from .metrics import difference_bound
from .policy import RECOMMENDED

__all__ = ["RunsComparison", "compare_runs", "compare_runs_counts"]


@dataclass(frozen=True, repr=False)
class RunsComparison(IntervalResult):
    r"""The paired difference of a metric between two classifiers with repeated runs (A - B).

    Attributes
    ----------
    metric : str
        The metric.
    estimate_a, estimate_b : float
        Each classifier's mean over its runs of the run's metric.
    difference : float
        ``estimate_a - estimate_b`` (also :attr:`estimate`).
    low, high : float
        The interval of the difference.
    confidence_level : float
        The confidence level.
    method : str
        How the interval was computed.
    estimand : str
        ``"new_run"`` (a new run of each) or ``"these_runs"``.
    p_value : float
        Two-sided p-value of the t test of no difference (Satterthwaite's df).
    se, df : float
        Standard error of the difference and the t quantile's degrees of freedom.
    runs_a, runs_b : int
        Runs of each classifier (1: a single, fixed run).
    units : int
        Texts, or with persons the persons, with a relevant text.
    var_units, var_runs_a, var_runs_b : float
        The variance of the difference from sampling the units (paired: both
        classifiers labelled the same texts) and from sampling each classifier's runs.
    """

    _derived: ClassVar[tuple[str, ...]] = ("sources",)

    metric: str
    estimate_a: float
    estimate_b: float
    difference: float
    low: float
    high: float
    confidence_level: float
    method: str
    estimand: str
    p_value: float
    se: float
    df: float
    runs_a: int
    runs_b: int
    units: int
    var_units: float
    var_runs_a: float
    var_runs_b: float
    persons: int | None = None

    @property
    def estimate(self) -> float:
        """The difference A - B (the name other results use for the point estimate)."""
        return self.difference

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes.

        Texts; persons with groups; runs for ``"new_run"`` when a classifier has several.
        """
        runs = self.estimand == "new_run" and max(self.runs_a, self.runs_b) > 1
        return sources_of(persons=self.persons is not None, runs=runs)

    def __repr__(self) -> str:
        if np.ndim(self.difference):
            return super().__repr__()
        return (
            f"RunsComparison(metric={self.metric!r}, difference={self.difference:.4g}, "
            f"low={self.low:.4g}, high={self.high:.4g}, estimand={self.estimand!r}, "
            f"sources={self.sources!r})"
        )


def compare_runs(
    y_true: Any,
    pred_a: Any,
    pred_b: Any,
    metric: str,
    *,
    groups: Any = None,
    estimand: str = "new_run",
    positive: Any = None,
    confidence_level: float = 0.95,
) -> RunsComparison:
    r"""Paired difference of a metric between two classifiers, with repeated runs of either.

    :func:`perfci.compare` calls this function when `pred_a` or `pred_b` has a column per
    run.

    Parameters
    ----------
    y_true : array_like
        Reference labels, one per text.
    pred_a, pred_b : array_like or DataFrame
        Each classifier's labels: ``(n_texts, n_runs)``, a column per run, or one label
        per text (a single run, taken as fixed).
    metric : str
        A binary metric.
    groups : array_like, optional
        Person ids, one per text.
    estimand : {"new_run", "these_runs"}, default "new_run"
        ``"new_run"``: the difference between a new run of A and a new run of B on the
        population of texts (each classifier's runs random); ``"these_runs"``: between
        the means over these runs.
    positive : object, optional
        The positive label.
    confidence_level : float, default 0.95
        Confidence level.

    Returns
    -------
    RunsComparison
        The difference with its interval and t test, and the variance parts.

    Raises
    ------
    ValueError
        For labels of the wrong shape or coding, a metric that is not binary, an unknown
        estimand or ``"majority"`` (compare the majority votes with :func:`perfci.compare`
        instead).

    Warns
    -----
    UndefinedMetricWarning
        When the metric is undefined in a run, or there are fewer than 2 units: NaN.

    Notes
    -----
    Both classifiers labelled the same texts, so the units' part is paired: with each
    side's influence values (:func:`perfci.runs.runs_ci_counts`) averaged over its runs,
    :math:`V_{units} = \frac{m}{m-1}\sum_u (\bar z^A_u - \bar z^B_u)^2`. The two
    classifiers' runs are independent, so for ``"new_run"`` each adds its own run
    variance :math:`\max(S^2_{runs} - S^2_{noise}, 0)/R`. The interval is
    :math:`\hat d \pm t\sqrt V` with Satterthwaite's degrees of freedom, clipped to the
    range a difference of the metric can take.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> result = pc.compare(texts["human"], texts[["run1", "run2", "run3"]], texts["model_b"],
    ...                     "recall", groups=texts["person"])
    >>> print(f"{result.difference:.3f} [{result.low:.3f}, {result.high:.3f}] about "
    ...       f"{result.sources}")
    0.044 [0.004, 0.084] about ('texts', 'persons', 'runs')
    """
    import pandas as pd

    level = _compare_iv(metric, estimand, confidence_level)
    check_label("positive", positive)
    sides = {}
    for name, value in (("pred_a", pred_a), ("pred_b", pred_b)):
        if isinstance(value, pd.Series):
            arr = value.to_numpy(dtype=object)
        elif isinstance(value, pd.DataFrame) or np.ndim(np.asarray(value, dtype=object)) == 2:
            arr = runs_table(value, name)
        else:
            arr = np.asarray(value, dtype=object)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise ValueError(
                f"`{name}` must be one label per text or (n_texts, n_runs); got shape {arr.shape}."
            )
        sides[name] = arr
    is_pos, said, person = read_run_labels(y_true, sides, positive, groups)
    cells_a, cells_b = (
        np.eye(4)[cell] if person is None else person_run_cells(cell, person)
        for cell in (2 * (~said[name]) + (~is_pos)[:, None] for name in sides)
    )
    return _compare_cells(cells_a, cells_b, metric, estimand, level, nested=person is not None)


def _compare_iv(metric: Any, estimand: Any, confidence_level: Any) -> float:
    """Check the options of a comparison of runs; return the confidence level."""
    if estimand not in ("new_run", "these_runs"):
        raise ValueError(
            f"`estimand` must be one of ['new_run', 'these_runs'] for a comparison of runs; "
            f"got {estimand!r} (compare two majority votes with perfci.compare)."
        )
    level, _ = crossed_iv(metric, "recommended", confidence_level, RECOMMENDED, None)
    return level


def compare_runs_counts(
    cells_a: Any,
    cells_b: Any,
    metric: str,
    *,
    nested: bool = False,
    estimand: str = "new_run",
    confidence_level: float = 0.95,
) -> RunsComparison:
    r"""Paired difference of a metric between two classifiers' runs, from counts.

    The counts-level core of :func:`compare_runs`.

    Parameters
    ----------
    cells_a, cells_b : array_like of int
        Each classifier's confusion cells ``[tp, fp, fn, tn]`` of each unit in each of
        its runs, ``(units, runs_a, 4)`` and ``(units, runs_b, 4)``: the same units (texts,
        or with ``nested=True`` persons) in the same order, each with the same number of
        texts in every run of either classifier. One run is a single, fixed run.
    metric : str
        A binary metric.
    nested : bool, default False
        Whether the units are persons (texts nested in them) rather than texts.
    estimand : {"new_run", "these_runs"}, default "new_run"
        As in :func:`compare_runs`.
    confidence_level : float, default 0.95
        Confidence level.

    Returns
    -------
    RunsComparison
        As :func:`compare_runs`.

    Raises
    ------
    ValueError
        For cells of another shape, not whole non-negative counts, of different units, or
        whose units' texts differ between runs; and as :func:`compare_runs`.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.runs import compare_runs_counts
    >>> rng = np.random.default_rng(1)
    >>> truth = rng.random(300) < 0.4
    >>> def cells(accuracy, runs):
    ...     right = rng.random((300, runs)) < accuracy
    ...     said = np.where(right, truth[:, None], ~truth[:, None])
    ...     return np.eye(4, dtype=int)[2 * (~said) + (~truth)[:, None]]
    >>> result = compare_runs_counts(cells(0.9, 3), cells(0.8, 1), "accuracy")
    >>> print(f"{result.difference:.3f} [{result.low:.3f}, {result.high:.3f}]")
    0.064 [0.016, 0.113]
    """
    level = _compare_iv(metric, estimand, confidence_level)
    sides = [check_real_array(name, c) for name, c in (("cells_a", cells_a), ("cells_b", cells_b))]
    for name, arr in zip(("cells_a", "cells_b"), sides, strict=True):
        if arr.ndim != 3 or arr.shape[-1] != 4:
            raise ValueError(
                f"`{name}` must have shape (units, runs, 4): the confusion cells [tp, fp, fn, "
                f"tn] of each unit in each run; got shape {arr.shape}."
            )
        if np.any(arr < 0) or np.any(arr != np.floor(arr)):
            raise ValueError(f"`{name}` must be whole, non-negative counts.")
    a, b = sides
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"`cells_b` must hold the units of `cells_a` ({a.shape[0]}); got {b.shape[0]}."
        )
    texts = np.concatenate([a.sum(-1), b.sum(-1)], axis=-1)
    if np.any(texts != texts[:, :1]):
        raise ValueError(
            "`cells_a` and `cells_b` must give each unit the same number of texts in every "
            "run (both classifiers label the same texts in every run)."
        )
    return _compare_cells(a, b, metric, estimand, level, nested=nested)


def _compare_cells(
    cells_a: np.ndarray,
    cells_b: np.ndarray,
    metric: str,
    estimand: str,
    level: float,
    *,
    nested: bool,
) -> RunsComparison:
    """Compare two classifiers' cells ``(units, runs, 4)``: the paired crossed difference."""
    parts = []
    for cells in (cells_a, cells_b):
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append(
                variance_components(
                    cells[None].astype(float),
                    np.ones((1, cells.shape[0])),
                    metric,
                    estimand == "new_run" and cells.shape[1] > 1,
                )
            )
    a, b = parts
    undefined = bool(np.isnan(a["run_values"]).any() or np.isnan(b["run_values"]).any())
    paired = paired_variance(a, b)
    units, variance, df = paired["units"], paired["variance"], paired["df"]
    difference = float(a["estimate"][0] - b["estimate"][0])
    se = math.sqrt(variance) if variance >= 0 else math.nan
    if undefined or units < 2 or not np.isfinite(se):
        warnings.warn(
            f"no interval of the {metric} difference: the metric is undefined in a run, or "
            "there are fewer than 2 units (texts or persons) with a relevant text.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        low = high = p_value = math.nan
    else:
        q = float(stats.t.ppf(0.5 + level / 2, df))
        bound = difference_bound(metric)
        low, high = max(difference - q * se, -bound), min(difference + q * se, bound)
        p_value = (
            float(2 * stats.t.sf(abs(difference) / se, df))
            if se > 0
            else (1.0 if difference == 0 else 0.0)
        )
    unit = "persons" if nested else "texts"
    return RunsComparison(
        metric=metric,
        estimate_a=float(a["estimate"][0]),
        estimate_b=float(b["estimate"][0]),
        difference=difference,
        low=float(low),
        high=float(high),
        confidence_level=level,
        method=(
            f"variance components ({unit}, paired, x each classifier's runs), t"
            if estimand == "new_run"
            else f"cluster-robust ({unit}, paired, runs averaged within them), t"
        ),
        estimand=estimand,
        p_value=float(p_value),
        se=se,
        df=float(df),
        runs_a=cells_a.shape[1],
        runs_b=cells_b.shape[1],
        units=int(units),
        var_units=paired["var_units"],
        var_runs_a=paired["var_runs_a"],
        var_runs_b=paired["var_runs_b"],
        persons=cells_a.shape[0] if nested else None,
    )
