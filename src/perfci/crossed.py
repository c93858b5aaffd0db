r"""The crossed engine: texts (or persons) x runs, texts (or persons) x annotators.

Repeated runs of a classifier (:mod:`perfci.runs`) and several annotators
(:mod:`perfci.annotators`) are one design: every unit (a text, or a person with all
their texts) is seen under every level of a second source of variation (a run, an
annotator), the two crossed. This module holds what both compute, on counts: the
confusion cells ``[tp, fp, fn, tn]`` of each unit under each level of the source,
``(data sets, units, sources, 4)``, with a multiplicity per unit (identical units stand
for one another) and zeros where a unit has no text under a level (an annotator who
coded none of a person's texts).

- :func:`variance_components`: the linearized crossed variance of the mean over the
  source of its metrics (units, source and their interaction), with Satterthwaite's
  degrees of freedom; :func:`paired_variance` the same for the difference of two
  classifiers that labelled the same units.
- :func:`crossed_intervals`: the intervals, analytic from the variance components or the
  two-way (pigeonhole) bootstrap of units and of the source's levels; in a tiny design
  (fewer than :data:`perfci.policy.CROSSED_TINY_RELEVANT` relevant texts per level) the
  recommended new-level interval is the one-classifier interval of the median level
  (:func:`median_level_interval`). The bootstrap draws
  through the one resampling engine
  (:func:`perfci._core.resampling.weighted_multiplicities`: the units' multiplicities,
  and the levels', as multinomial counts); its percentile ends are
  :mod:`perfci._core.intervals`'.
- :func:`person_run_cells`: the cells of each person under each level, from the texts';
  :func:`confusion_cells` those of one labelling (a majority vote, one annotator).
- :func:`runs_table` and :func:`read_run_labels`: a classifier's table of runs read (by
  the one wide-table reader, :func:`perfci._core.labels.label_table`) and brought to one
  coding with the reference, for :mod:`perfci.runs` and :mod:`perfci.runs_comparison`.

The options every interval of this design takes are checked once by :func:`crossed_iv`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import special, stats

from ._core import registry
from ._core.intervals import percentile_levels, type7_quantiles
from ._core.labels import as_label_array, label_table
from ._core.resampling import (
    AUTO_BATCH_ELEMENTS,
    check_resample_count,
    default_resamples,
    weighted_multiplicities,
)
from ._core.validation import UndefinedMetricWarning, check_confidence_level, check_positive_int
from .analytic import proportion_ci
from .bootstrap import check_resample_size
from .counting import normalize_labels
from .metric import metric_ci_counts
from .metrics import (
    BINARY_METRICS,
    PROPORTION_METRICS,
    RELEVANT_TEXTS,
    difference_bound,
    metric_gradient,
    metric_values,
    proportion_counts,
)
from .policy import CROSSED_DF_PER_RUN, CROSSED_FEW_PERSONS, CROSSED_TINY_RELEVANT, RECOMMENDED

__all__ = [
    "FewPersonsWarning",
    "TinyDesignWarning",
    "confusion_cells",
    "crossed_intervals",
    "crossed_iv",
    "median_level_interval",
    "median_levels",
    "paired_variance",
    "person_run_cells",
    "read_run_labels",
    "relevant_per_level",
    "runs_table",
    "variance_components",
]


class TinyDesignWarning(UserWarning):
    """A crossed design too small for its variance components: another interval was used."""


class FewPersonsWarning(UserWarning):
    """A crossed interval rests on few persons: it may cover less than its level."""


def crossed_iv(
    metric: Any, method: Any, confidence_level: Any, n_resamples: Any, batch: Any
) -> tuple[float, int]:
    """Check the options of a crossed interval; return the level and the resamples to draw.

    `n_resamples` left at ``"recommended"`` is :data:`perfci.policy.N_RESAMPLES`; given
    (any number, 2000 too), it must go with ``method="bootstrap"``, whose resamples must
    give each tail of the percentile interval one
    (:func:`~perfci._core.resampling.check_resample_count`).
    """
    if metric not in BINARY_METRICS:
        raise ValueError(
            f"`metric` must be a binary metric, one of {sorted(BINARY_METRICS)}; got {metric!r}."
        )
    registry.RUN_METHOD.check(method)
    level = float(check_confidence_level(confidence_level, scalar=True))
    given = not (isinstance(n_resamples, str) and n_resamples == RECOMMENDED)
    resamples = default_resamples(level)
    if given:
        resamples = check_positive_int("n_resamples", n_resamples, " or 'recommended'")
        check_resample_size(resamples)
    if batch is not None:
        check_positive_int("batch", batch, " or None")
    if method != "bootstrap" and given:
        raise ValueError(
            f"`n_resamples` is an option of the bootstrap, but `method` is {method!r}; leave "
            "it unset or pass method='bootstrap'."
        )
    if method == "bootstrap":
        check_resample_count(resamples, level, defaulted=not given)
    return level, resamples


# ----------------------------------------------------------------------- the cells


def person_run_cells(
    cell: np.ndarray,
    person: np.ndarray,
    persons: int | None = None,
    observed: np.ndarray | None = None,
) -> np.ndarray:
    """Return the confusion cells of each person in each run, ``(persons, runs, 4)``.

    `cell` ``(n_texts, runs)`` is each text's cell in each run (0 tp, 1 fp, 2 fn, 3 tn)
    and `person` its person's code 0..m-1 (`persons`, default the largest code + 1); only
    the (text, run) pairs where `observed` is True count (an annotator who coded the
    text). One bincount, no loop.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.crossed import person_run_cells
    >>> person_run_cells(np.array([[0, 2], [3, 3], [0, 0]]), np.array([0, 0, 1])).tolist()
    [[[1, 0, 0, 1], [0, 0, 1, 1]], [[1, 0, 0, 0], [1, 0, 0, 0]]]
    """
    m = int(person.max()) + 1 if persons is None else persons
    runs = cell.shape[1]
    flat = (person[:, None] * runs + np.arange(runs)) * 4 + cell
    flat = flat.ravel() if observed is None else flat[observed]
    return np.bincount(flat, minlength=m * runs * 4).reshape(m, runs, 4)


def confusion_cells(cell: np.ndarray, person: np.ndarray | None = None) -> np.ndarray:
    """Return the confusion cells of one labelling: ``(4,)``, or per person ``(persons, 4)``.

    `cell` ``(n_texts,)`` is each text's cell (0 tp, 1 fp, 2 fn, 3 tn) and `person` its
    person's code; the persons with a text come in the order of their codes (as
    :func:`perfci.confusion` orders sorted ids), persons without one are left out.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.crossed import confusion_cells
    >>> confusion_cells(np.array([0, 3, 3, 1])).tolist()
    [1, 1, 0, 2]
    >>> confusion_cells(np.array([0, 3, 3, 1]), np.array([2, 0, 2, 0])).tolist()
    [[0, 1, 0, 1], [1, 0, 0, 1]]
    """
    cell = np.asarray(cell, dtype=np.int64)
    if person is None:
        return np.bincount(cell, minlength=4)
    m = int(person.max()) + 1 if person.size else 0
    cells = np.bincount(np.asarray(person) * 4 + cell, minlength=4 * m).reshape(m, 4)
    return cells[cells.sum(-1) > 0]


# ---------------------------------------------------------------- labels of runs


def runs_table(y_pred: Any, name: str = "y_pred") -> np.ndarray:
    """Return the runs' labels as an ``(n_texts, n_runs)`` object array, or raise."""
    table = label_table(name, y_pred, column="run", entry="label", allow_missing=False)
    if table.values.shape[1] < 2:
        raise ValueError(
            f"`{name}` must hold at least 2 runs (columns) to include the runs' variation; "
            f"got {table.values.shape[1]}. With one run use perfci.metric_ci."
        )
    return np.asarray(table.values, dtype=object)


def read_run_labels(
    y_true: Any, preds: dict[str, np.ndarray], positive: Any, groups: Any, why: str = ""
) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray | None]:
    """Bring the reference and each classifier's runs to one coding; read the persons.

    `preds` are ``(n_texts, runs)`` tables by argument name. Returns whether each text is
    a reference positive, whether each run labels it positive (by name), and the person
    codes (None without `groups`).
    """
    import pandas as pd

    truth_in = y_true.to_numpy() if isinstance(y_true, pd.Series | pd.Index) else y_true
    given = normalize_labels(
        {"y_true": truth_in, **{k: v.T for k, v in preds.items()}}, positive=positive, ndim=None
    )
    truth = np.asarray(given.values["y_true"])
    if truth.ndim != 1:
        raise ValueError(f"`y_true` must be one-dimensional; got shape {truth.shape}.")
    n = truth.size
    labels = {}
    for name in preds:
        arr = np.asarray(given.values[name]).T
        if arr.shape[0] != n:
            raise ValueError(
                f"`{name}` must have one row per text of `y_true` ({n}); got {arr.shape[0]}."
            )
        labels[name] = arr
    if given.positive is None:
        raise ValueError(
            f"`positive` must name the positive class: the labels are "
            f"{given.classes.tolist()!r}{why}."
        )
    person = None
    if groups is not None:
        ids = as_label_array("groups", groups)
        if ids.shape != truth.shape:
            raise ValueError(f"`groups` must have one id per text ({n}); got {ids.size}.")
        person = pd.factorize(ids)[0]
    said = {name: arr == given.positive for name, arr in labels.items()}
    return truth == given.positive, said, person


# ------------------------------------------------------------ variance components


def variance_components(
    cells: np.ndarray,
    weights: np.ndarray,
    metric: str,
    new_run: bool,
    observed: np.ndarray | None = None,
    influence: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Linearized crossed (units x runs) variance of the mean of the runs' metrics.

    ``cells`` ``(B, m, R, 4)``, ``weights`` ``(B, m)`` (identical units). A unit may lack
    texts in some runs (an annotator who did not code a text): its cells there are 0 and
    the cell is not observed. `observed` (the shape of `cells`), when the cells hold
    imputed codes (:mod:`perfci._core.imputation`), are the cells of the codes given:
    the interaction's noise and its df come from those alone, and `influence` (the shape
    of `cells`, :attr:`perfci._core.imputation.ImputedCodes.influence` per unit) is added
    to the cells of the units' influences, so that the imputation's calibration is in
    the variance. Returns the estimate, the
    per-run metrics, the two variance parts and Satterthwaite's df (see
    :func:`perfci.runs.runs_ci_counts`, Notes).
    """
    # units with a text the metric is computed from, in any run (the others have no
    # influence and are not units: persons with no relevant text do not count)
    relevant_cells = list(RELEVANT_TEXTS[metric][0])
    has_relevant = cells[..., relevant_cells].sum((-2, -1)) > 0
    units = np.einsum("bm,bm->b", weights, has_relevant.astype(float))
    runs = cells.shape[-2]
    per_run = np.einsum("bm,bmrc->brc", weights, cells)  # (B, R, 4)
    run_values = metric_values(per_run, metric)  # (B, R)
    estimate = run_values.mean(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        # shares of each run's texts: runs with different numbers of texts weigh alike
        texts = per_run.sum(-1)  # (B, R)
        pooled = (per_run / texts[..., None]).mean(-2)  # (B, 4): the runs' mean shares
        gradient = metric_gradient(pooled, metric)  # (B, 4), at the mean shares
        varied = cells if influence is None else cells + influence
        z = np.einsum("bmrc,bc->bmr", varied, gradient) / texts[:, None, :]
        z = np.where(np.isfinite(z), z, 0.0)
        unit_means = z.mean(-1)  # (B, m); the weighted sum over units is 0 (Euler)
        var_units = units / (units - 1) * np.einsum("bm,bm->b", weights, unit_means**2)
        run_totals = np.einsum("bm,bmr->br", weights, z)  # f(C_r) - f(C) to first order
        s2_runs = np.sum(run_totals**2, -1) / (runs - 1)
        # each unit's share of the run's relevant texts carries its part of the run effect
        relevant = cells[..., relevant_cells].sum(-1)  # (B, m, R)
        share = relevant / np.einsum("bm,bmr->br", weights, relevant)[:, None, :]
        given = cells if observed is None else observed
        observed = (given.sum(-1) > 0) & has_relevant[..., None]  # (B, m, R)
        seen = observed.sum(-1)
        observed_means = np.where(seen > 0, z.sum(-1) / np.maximum(seen, 1), 0.0)
        residual = np.where(
            observed, z - observed_means[..., None] - share * run_totals[:, None, :], 0.0
        )
        # the interaction's part of the run totals' variance: (units - 1)(runs - 1) df
        # when every unit is in every run, fewer with missing cells
        cells_seen = np.einsum("bm,bmr->b", weights, observed.astype(float))
        noise_df = cells_seen - units - runs + 1
        s2_noise = cells_seen / runs * np.einsum("bm,bmr->b", weights, residual**2) / noise_df
    excess = np.maximum(s2_runs - s2_noise, 0.0) if new_run else np.zeros_like(s2_runs)
    var_runs = excess / runs
    variance = var_units + var_runs
    with np.errstate(invalid="ignore", divide="ignore"):
        parts = (
            var_units**2 / (units - 1)
            + np.where(excess > 0, (s2_runs / runs) ** 2 / (runs - 1), 0.0)
            + np.where(excess > 0, (s2_noise / runs) ** 2 / noise_df, 0.0)
        )
        df = np.where(parts > 0, variance**2 / parts, units - 1)
    if new_run:
        # a run part truncated at 0, or estimated small, rests on runs - 1 df; runs that
        # agree on every text (no run part, no noise) have no run part to doubt
        differ = np.any(cells != cells[..., :1, :], axis=(1, 2, 3))
        df = np.where(differ, np.minimum(df, CROSSED_DF_PER_RUN * (runs - 1)), df)
    return {
        "estimate": estimate,
        "run_values": run_values,
        "var_units": var_units,
        "var_runs": var_runs if new_run else np.full_like(var_runs, np.nan),
        "variance": variance,
        "df": np.maximum(df, 1.0),
        "units": units,
        "relevant": _relevant(per_run, metric).mean(-1),
        "runs": np.full(estimate.shape, float(runs)),
        "unit_means": unit_means,
        "s2_runs": s2_runs,
        "s2_noise": s2_noise,
        "noise_df": noise_df,
        "excess": excess,
    }


def _relevant(per_run: np.ndarray, metric: str) -> np.ndarray:
    """Relevant texts of a proportion metric in each run (the denominator), else all."""
    if metric in PROPORTION_METRICS:
        return proportion_counts(per_run, metric)[1]
    return per_run.sum(-1)


def paired_variance(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> dict[str, float]:
    """Return the crossed variance of the difference A - B of two classifiers on the same units.

    `a` and `b` are :func:`variance_components` of one data set each (the same units, in
    the same order). The units' part is paired (the difference of the units' mean
    influences); each classifier's runs add their own run variance, and the degrees of
    freedom are Satterthwaite's (see :func:`perfci.runs.compare_runs`, Notes).
    """
    units = float(max(a["units"][0], b["units"][0]))
    with np.errstate(invalid="ignore", divide="ignore"):
        diff_means = a["unit_means"][0] - b["unit_means"][0]
        var_units = units / (units - 1) * float(np.sum(diff_means**2))
    runs_a, runs_b = len(a["run_values"][0]), len(b["run_values"][0])
    var_a = float(a["excess"][0]) / runs_a if runs_a > 1 else 0.0
    var_b = float(b["excess"][0]) / runs_b if runs_b > 1 else 0.0
    variance = var_units + var_a + var_b
    terms = var_units**2 / (units - 1) if units > 1 else np.inf
    for side, runs, extra in ((a, runs_a, var_a), (b, runs_b, var_b)):
        if extra > 0:
            terms += float(side["s2_runs"][0] / runs) ** 2 / (runs - 1)
            terms += float(side["s2_noise"][0] / runs) ** 2 / float(side["noise_df"][0])
    df = max(variance**2 / terms, 1.0) if terms > 0 and np.isfinite(terms) else units - 1
    return {
        "units": units,
        "var_units": var_units,
        "var_runs_a": var_a,
        "var_runs_b": var_b,
        "variance": variance,
        "df": float(df),
    }


# ------------------------------------------------------------------- the intervals


def _analytic_ends(
    parts: dict[str, np.ndarray], metric: str, level: float
) -> tuple[np.ndarray, np.ndarray, str]:
    """Interval ends from the crossed variance: effective n for proportions, else t."""
    estimate, variance, df = parts["estimate"], parts["variance"], parts["df"]
    q_t = stats.t.ppf(0.5 + level / 2, df)
    if metric in PROPORTION_METRICS:
        z = special.ndtri(0.5 + level / 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            n_eff = np.where(variance > 0, estimate * (1 - estimate) / variance, parts["relevant"])
            # at most the stacked texts: runs cannot tell more than that
            n_eff = np.minimum(n_eff, parts["relevant"] * parts["runs"])
            n_star = n_eff * (z / q_t) ** 2  # Dean and Pagano's df adjustment
        ok = np.isfinite(estimate) & np.isfinite(n_star) & (n_star > 0)
        low, high = np.full(estimate.shape, np.nan), np.full(estimate.shape, np.nan)
        if ok.any():
            ci = proportion_ci(
                estimate[ok] * n_star[ok],
                n_star[ok],
                method="agresti_coull",
                confidence_level=level,
            )
            low[ok], high[ok] = ci.low, ci.high
        return low, high, "agresti_coull on n_eff (dean_pagano)"
    se = np.sqrt(variance)
    low, high = estimate - q_t * se, estimate + q_t * se
    if difference_bound(metric) == 2.0:  # kappa and MCC, in [-1, 1]: t on their own scale
        return low, high, "t"
    # a metric in [0, 1] (F1): t on the logit scale, where its sampling distribution is
    # nearer symmetric (atlas-runs, 10 persons x 10 texts, 10 runs: the plain t interval
    # covered the new-run F1 0.929-0.938, 5-6% of intervals above the truth; on the logit
    # scale 0.950, the misses balanced); at 0 or 1 (no logit) the plain interval stays
    inside = (estimate > 0) & (estimate < 1) & (se > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = special.logit(estimate)
        spread = q_t * se / (estimate * (1 - estimate))
        low = np.where(inside, special.expit(centre - spread), low)
        high = np.where(inside, special.expit(centre + spread), high)
    return low, high, "t on the logit scale"


def _bootstrap_ends(
    cells: np.ndarray,
    weights: np.ndarray,
    metric: str,
    new_run: bool,
    level: float,
    n_resamples: int,
    generators: Sequence[np.random.Generator],
    batch: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-way (units x runs) percentile bootstrap of the mean of the runs' metrics.

    A resample takes m units with replacement (a multinomial draw of the units'
    multiplicities, :func:`perfci._core.resampling.weighted_multiplicities`) and, for
    `new_run`, R runs with replacement (the same draw with equal shares); its value is the
    mean over the drawn runs of each run's metric on the drawn units. Data set k draws its
    units from ``generators[k].spawn(2)[0]`` and its runs from the second child. Returns
    low, high and the bootstrap SD.
    """
    size, m, runs = cells.shape[0], cells.shape[1], cells.shape[2]
    step = batch or max(1, AUTO_BATCH_ELEMENTS // max(m + runs * 4, 1))
    low, high, sd = (np.full(size, np.nan) for _ in range(3))
    levels = percentile_levels(level, 1)
    for k, generator in enumerate(generators):  # data sets; each draws its resamples in batches
        present = (weights[k] > 0) & (cells[k].sum((-2, -1)) > 0)  # units with texts
        unit_cells, unit_weights = cells[k, present], weights[k, present]
        n_units = int(unit_weights.sum())
        if unit_cells.shape[0] < 2 or n_units < 2:
            continue
        unit_rng, run_rng = generator.spawn(2)
        unit_draws = weighted_multiplicities(
            n_units, unit_weights / unit_weights.sum(), n_resamples, unit_rng, batch=step
        )
        run_draws = weighted_multiplicities(
            runs, np.full(runs, 1 / runs), n_resamples, run_rng, batch=step
        )
        values = np.empty(n_resamples)
        start = 0
        for drawn in unit_draws:
            b = drawn.shape[0]
            run_values = metric_values(np.einsum("bm,mrc->brc", drawn, unit_cells), metric)
            taken = next(run_draws) if new_run else np.ones((b, runs))
            used = taken > 0
            total = np.sum(np.where(used, run_values, 0.0) * taken, -1) / runs
            # a resample in which a drawn run's metric is undefined is dropped
            values[start : start + b] = np.where(
                np.any(used & np.isnan(run_values), -1), np.nan, total
            )
            start += b
        valid = values[~np.isnan(values)]
        if valid.size:
            low[k], high[k] = type7_quantiles(values[None], levels)[0]
            sd[k] = valid.std(ddof=1) if valid.size > 1 else np.nan
    return low, high, sd


# ------------------------------------------------------------------ tiny designs


def relevant_per_level(cells: np.ndarray, weights: np.ndarray, metric: str) -> np.ndarray:
    """Return the relevant texts per level of the source (run, annotator), ``(B,)``.

    The texts each level's metric is computed from (:data:`perfci.metrics.RELEVANT_TEXTS`:
    for F1 those either labelling calls positive), counted in every level and averaged
    over the levels; `cells` ``(B, units, levels, 4)``, `weights` ``(B, units)``.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.crossed import relevant_per_level
    >>> cells = np.eye(4)[[[[0, 0], [1, 3], [2, 0], [3, 3]]]]  # 4 texts x 2 runs: tp fp fn tn
    >>> weights = np.ones((1, 4))
    >>> relevant_per_level(cells, weights, "f1"), relevant_per_level(cells, weights, "recall")
    (array([2.5]), array([2.]))
    """
    relevant = cells[..., list(RELEVANT_TEXTS[metric][0])].sum(-1)  # (B, units, levels)
    return np.einsum("bm,bmr->br", weights, relevant).mean(-1)


def median_levels(values: np.ndarray) -> np.ndarray:
    """Return the levels whose metric is a median of `values` ``(levels,)``.

    The middle one of an odd number of distinct values, the two middle ones of an even
    number, and every level tied with them: which of several runs with the same metric
    is "the" median run depends on no order.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.crossed import median_levels
    >>> median_levels(np.array([0.7, 0.5, 0.9])), median_levels(np.array([0.7, 0.5, 0.9, 0.6]))
    (array([0]), array([0, 3]))
    >>> median_levels(np.array([0.5, 0.7, 0.7, 0.9, 0.7]))
    array([1, 2, 4])
    """
    ordered = np.sort(values)
    low, high = ordered[(values.size - 1) // 2], ordered[values.size // 2]
    return np.flatnonzero((values >= low) & (values <= high))


def median_level_interval(
    cells: np.ndarray,
    weights: np.ndarray,
    metric: str,
    *,
    nested: bool,
    level: float,
    rng: Any,
) -> tuple[float, float, str, int]:
    """Return the one-classifier interval of the median level of one crossed data set.

    The recommended interval of one classifier against one reference,
    :func:`perfci.metric_ci_counts`, on the cells of the median run (annotator) alone:
    `cells` ``(units, levels, 4)`` with `weights` ``(units,)``, the units persons
    (`nested`) or texts. With several median levels (:func:`median_levels`: an even
    number of levels, or ties) the interval joins theirs, from the lowest low end to the
    highest high end. Returns the ends, the one-classifier method and the number of
    median levels.

    Raises
    ------
    ValueError
        For a median level with fewer than 2 units (persons, or texts) with a relevant
        text, and as :func:`perfci.metric_ci_counts` (a median level whose metric is
        undefined).

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.crossed import median_level_interval

    Ten texts, four of them positive, labelled by three runs (cells 0 tp, 1 fp, 2 fn, 3
    tn): the runs' recalls are 0.75, 0.5 and 1, and the median run's interval is that of
    3 of 4.


    >>> cell = [[0, 0, 0], [0, 2, 0], [2, 2, 0], [0, 0, 0], [1, 3, 3]] + [[3, 3, 3]] * 5
    >>> cells = np.eye(4)[cell]  # (10 texts, 3 runs, 4)
    >>> low, high, method, k = median_level_interval(cells, np.ones(10), "recall", nested=False,
    ...                                              level=0.95, rng=None)
    >>> print(f"[{low:.3f}, {high:.3f}] by {method} of {k} run")
    [0.289, 0.966] by agresti_coull of 1 run
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        values = metric_values(np.einsum("m,mrc->rc", weights, cells), metric)
    chosen = median_levels(values)
    generator = np.random.default_rng(rng)
    lows, highs, methods = [], [], []
    relevant_cells = list(RELEVANT_TEXTS[metric][0])
    for r in chosen:
        unit_cells = np.rint(cells[:, r]).astype(np.int64)
        keep = (weights > 0) & (unit_cells.sum(-1) > 0)
        if weights @ (unit_cells[:, relevant_cells].sum(-1) > 0) < 2:
            raise ValueError(
                f"the median level has fewer than 2 {'persons' if nested else 'texts'} with "
                "a relevant text: no interval of it covers"
            )
        counts = (
            np.repeat(unit_cells[keep], np.rint(weights[keep]).astype(np.int64), axis=0)
            if nested
            else np.rint(weights @ unit_cells).astype(np.int64)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its notes are the caller's to give
            ci = metric_ci_counts(
                counts, metric, nested=nested, confidence_level=level, rng=generator
            )
        lows.append(float(ci.low))
        highs.append(float(ci.high))
        methods.append(ci.method)
    return min(lows), max(highs), "; ".join(dict.fromkeys(methods)), int(chosen.size)


def crossed_intervals(
    flat: np.ndarray,
    weights: np.ndarray,
    metric: str,
    *,
    new_source: bool,
    method: str,
    level: float,
    n_resamples: int,
    generators: Sequence[np.random.Generator] | None,
    batch: int | None,
    unit: str,
    source: str,
    observed: np.ndarray | None = None,
    influence: np.ndarray | None = None,
) -> dict[str, Any]:
    """Intervals of the mean over a crossed source (runs, annotators) of its metrics.

    The engine of :func:`perfci.runs.runs_ci_counts` and of :mod:`perfci.annotators`:
    `flat` is ``(B, units, sources, 4)``, `weights` ``(B, units)``; `new_source` adds the
    source's variance (a new run or annotator) to the units'. Where `flat` holds imputed
    codes, `observed` are the cells of the codes given (whole numbers): the interaction's
    noise is theirs, `influence` the imputation's (:func:`variance_components`), and the
    tiny-design rule counts and takes the median annotator's interval over the texts each
    one coded. The bootstrap resamples the imputed cells without calibrating again. Warns
    once per kind of data set without an interval. Returns the variance parts, the ends,
    the standard error, df and a description. With ``method="bootstrap"``, fewer
    `n_resamples` than each tail of the percentile interval needs are refused
    (:func:`~perfci._core.resampling.check_resample_count`).

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.crossed import crossed_intervals
    >>> cells = np.eye(4)[np.random.default_rng(0).integers(0, 4, (1, 50, 3))]  # 50 texts x 3 runs
    >>> out = crossed_intervals(cells, np.ones((1, 50)), "accuracy", new_source=True,
    ...                         method="recommended", level=0.95, n_resamples=2000,
    ...                         generators=None, batch=None, unit="texts", source="runs")
    >>> out["how"]
    'variance components (texts x runs), agresti_coull on n_eff (dean_pagano)'
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        parts = variance_components(flat, weights, metric, new_source, observed, influence)
    undefined = np.isnan(parts["run_values"]).any(-1)
    few = parts["units"] < 2
    if undefined.any():
        warnings.warn(
            f"{metric} is undefined in at least one of the {source} of "
            f"{int(undefined.sum())} of {undefined.size} data sets (a zero denominator); "
            "their interval is NaN.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    if (few & ~undefined).any():
        warnings.warn(
            f"{int((few & ~undefined).sum())} of {few.size} data sets have fewer than 2 "
            "units (texts or persons) with texts: no variance between them, and no interval.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    if method == "bootstrap":
        if generators is None:
            raise ValueError("`generators` must be given for method='bootstrap'.")
        check_resample_count(n_resamples, level)
        low, high, se = _bootstrap_ends(
            flat, weights, metric, new_source, level, n_resamples, generators, batch
        )
        df = np.full(low.shape, np.nan)
        how = (
            f"two-way bootstrap ({unit} x {source}), percentile"
            if new_source
            else f"bootstrap of {unit} ({source} fixed), percentile"
        )
    else:
        low, high, rule = _analytic_ends(parts, metric, level)
        se, df = np.sqrt(parts["variance"]), parts["df"]
        how = (
            f"variance components ({unit} x {source}), {rule}"
            if new_source
            else f"cluster-robust ({unit}, {source} averaged within them), {rule}"
        )
    bad = undefined | few
    low, high = (np.where(bad, np.nan, v) for v in (low, high))
    tiny = np.zeros(bad.shape, dtype=bool)
    if method == RECOMMENDED and new_source:
        coded = flat if observed is None else observed  # the texts each level coded
        tiny = (relevant_per_level(coded, weights, metric) < CROSSED_TINY_RELEVANT) & ~bad
        if tiny.any():
            low, high, df, how = _tiny_rule(
                coded,
                weights,
                metric,
                parts,
                tiny,
                (low, high, np.asarray(df, dtype=float), how),
                level=level,
                generators=generators,
                unit=unit,
                source=source,
            )
    if unit == "persons":  # a tiny design's interval is the median level's, not crossed
        how = _few_persons(parts["units"], bad | tiny, how)
    return {"parts": parts, "low": low, "high": high, "se": se, "df": df, "how": how}


def _few_persons(units: np.ndarray, bad: np.ndarray, how: str) -> str:
    """Warn of intervals on fewer than CROSSED_FEW_PERSONS persons; note it in `how`."""
    flagged = (units < CROSSED_FEW_PERSONS) & ~bad
    if not flagged.any():
        return how
    where = (
        f"{int(units[0])} persons"
        if units.size == 1
        else f"fewer persons in {int(flagged.sum())} of {units.size} data sets"
    )
    warnings.warn(
        f"The interval rests on {where}, fewer than {CROSSED_FEW_PERSONS}: the persons' "
        "variance then has few degrees of freedom, and in simulations (stress atlas, "
        "atlas-annotators-few) the recommended crossed interval covered as little as 0.92 "
        "at 5 and 7 persons with strong person effects. Read it as approximate; more "
        "persons is the remedy.",
        FewPersonsWarning,
        stacklevel=4,
    )
    note = f"few persons (fewer than {CROSSED_FEW_PERSONS}): approximate"
    return f"{how}; {note}" if units.size == 1 else how


def _tiny_rule(
    flat: np.ndarray,
    weights: np.ndarray,
    metric: str,
    parts: dict[str, np.ndarray],
    tiny: np.ndarray,
    ends: tuple[np.ndarray, np.ndarray, np.ndarray, str],
    *,
    level: float,
    generators: Sequence[np.random.Generator] | None,
    unit: str,
    source: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Put the median level's one-classifier interval in place of the tiny data sets'.

    `ends` are the crossed low, high, df and description of the batch; returns them with
    the tiny data sets' replaced (df NaN there). Each interval is widened to hold the
    estimate (the mean over the levels), should the median level's not. Where the
    median level has fewer than 2 units with a relevant text, a proportion keeps its
    variance-components interval and any other metric gets NaN (see
    :func:`perfci.runs.runs_ci_counts`, Notes). Warns with :class:`TinyDesignWarning`.
    """
    low, high, df, crossed_how = ends
    low, high, df = low.copy(), high.copy(), df.copy()
    one, of_one, levels = source[:-1], _of_one(source), flat.shape[2]
    units = "persons" if unit == "persons" else "texts"
    methods: list[str] = []
    medians: set[int] = set()
    replaced, short = np.zeros(tiny.shape, dtype=bool), np.zeros(tiny.shape, dtype=bool)
    for k in np.flatnonzero(tiny):  # the tiny data sets, one interval each
        try:
            lo, hi, used, count = median_level_interval(
                flat[k],
                weights[k],
                metric,
                nested=unit == "persons",
                level=level,
                rng=None if generators is None else generators[int(k)],
            )
        except ValueError:  # fewer than 2 units with a relevant text in the median level
            short[k] = True
            continue
        low[k], high[k] = min(lo, parts["estimate"][k]), max(hi, parts["estimate"][k])
        df[k], replaced[k] = np.nan, True
        methods.append(used)
        medians.add(count)
    refused = short & (metric not in PROPORTION_METRICS)  # a proportion keeps its interval
    low[refused] = high[refused] = np.nan
    rule = (
        f"median {one} of {levels}, the interval {of_one} ({'; '.join(dict.fromkeys(methods))})"
        if medians <= {1}
        else f"median {one}s of {levels}, their intervals {of_one} joined "
        f"({'; '.join(dict.fromkeys(methods))})"
    )
    few = f"fewer than 2 {units} with a relevant text"
    if tiny.size == 1:
        amount = (
            f"{relevant_per_level(flat, weights, metric)[0]:.1f} relevant texts per {one} "
            f"(fewer than {CROSSED_TINY_RELEVANT})"
        )
        how = f"{rule}: a tiny design, {amount}"
        if short[0]:
            how = f"{crossed_how}: a tiny design, {amount}, whose median {one} has {few}"
        if refused[0]:
            how = f"none: a tiny design, {amount}, whose median {one} has {few}"
        where = {"tiny": f"The design is tiny, {amount}", "short": "", "refused": ""}
    else:
        below = f"fewer than {CROSSED_TINY_RELEVANT} relevant texts per {one}"
        how = f"{rule}: {below}"
        if replaced.sum() < tiny.size:
            how = f"{crossed_how}; for {int(replaced.sum())} of {tiny.size} ({below}): {rule}"
        where = {
            "tiny": f"{int(replaced.sum())} of {tiny.size} data sets are tiny, with {below}",
            "short": f" ({int(short.sum())} of {tiny.size} data sets)",
            "refused": f" in {int(refused.sum())} of {tiny.size} data sets",
        }
    if replaced.any():
        median = f"{'of' if source == 'runs' else 'against'} the median {one} alone"
        warnings.warn(
            f"{where['tiny']}: there the variance components of {unit} x {source} "
            f"under-cover (stress atlas), and the interval is the recommended interval "
            f"{median} (perfci.metric_ci_counts), which covered the new-{one} metric. It "
            f"includes the texts' {one}-to-{one} noise, and the systematic differences "
            f"between {source} only as far as they move the median {one}.",
            TinyDesignWarning,
            stacklevel=4,
        )
    if (short & ~refused).any():
        warnings.warn(
            f"A tiny design{where['short']} whose median {one} has {few}, too few for an "
            f"interval {of_one}: the interval is the variance components', which covered "
            f"{metric} in such data sets in simulations (a proportion's interval on its "
            "effective sample size is wide there).",
            TinyDesignWarning,
            stacklevel=4,
        )
    if refused.any():
        warnings.warn(
            f"The interval is NaN{where['refused']}: no method is known to cover here. "
            f"Below {CROSSED_TINY_RELEVANT} relevant texts per {one} the variance "
            f"components of {metric} under-cover (stress atlas; about 0.75 where the median "
            f"{one} has {few}, in simulations), and the median {one} has {few}, too few for "
            f"an interval {of_one}.",
            UndefinedMetricWarning,
            stacklevel=4,
        )
    return low, high, df, how


def _of_one(source: str) -> str:
    return "of one run" if source == "runs" else "against one annotator"
