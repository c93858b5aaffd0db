r"""Repeated runs of a stochastic classifier: intervals whose uncertainty includes the runs.

An LLM prompt run at a temperature above 0 labels the same text differently from run to
run. With :math:`R` runs of the classifier on the same :math:`n` texts there are two
sources of variation, crossed: which texts were sampled (and, nested, which persons) and
which runs were drawn. Which of them an interval is about is its *estimand*:

- ``"new_run"`` (the default): the expected metric of a new run of the classifier on the
  population of texts, the mean over the population of runs. Texts (or persons) and
  runs are both random: the interval includes the uncertainty of having seen only R
  runs, which dominates when runs differ systematically (a run that is more lenient
  on every text).
- ``"these_runs"``: the mean over the R observed runs of each run's metric on the text
  population. Runs are fixed, texts random.
- ``"majority"``: the majority-vote classifier of the R runs (a classifier of its own);
  the texts (and persons) are random.

Stacking the runs as if they were :math:`nR` new texts gives an interval about none of
these: far too narrow, as the stress atlas shows (``validation/ATLAS.md``).

Everything works on counts: the confusion cells ``[tp, fp, fn, tn]`` of each unit (a
text, or with ``nested=True`` a person with all their texts) in each run, shape
``(*batch, units, runs, 4)``. :func:`runs_ci_counts` is the batched core, what
:func:`runs_ci` computes after the labels and what the validation harness scores.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import special, stats

from ._core import registry
from ._core.results import ResultMixin, sources_of
from ._core.validation import (
    UndefinedMetricWarning,
    check_confidence_level,
    check_label,
    check_positive_int,
    check_real_array,
    check_rng,
    dataset_generators,
)
from .analytic import proportion_ci
from .bootstrap import batch_shaped, check_resample_size
from .metrics import (
    BINARY_METRICS,
    PROPORTION_METRICS,
    RELEVANT_TEXTS,
    metric_gradient,
    metric_values,
)

__all__ = [
    "RUN_ESTIMANDS",
    "RUN_METHODS",
    "RunsCI",
    "RunsComparison",
    "compare_runs",
    "runs_ci",
    "runs_ci_counts",
]

#: What an interval of repeated runs is about (:data:`perfci._core.registry.RUN_ESTIMAND`).
RUN_ESTIMANDS: tuple[str, ...] = registry.RUN_ESTIMAND.names
#: Interval methods of repeated runs (:data:`perfci._core.registry.RUN_METHOD`).
RUN_METHODS: tuple[str, ...] = registry.RUN_METHOD.names

_N_RESAMPLES = 2000
#: Resamples drawn at once by default (each holds a weight per unit and per run).
_AUTO_BATCH_ELEMENTS = 4_000_000


@dataclass(frozen=True, repr=False)
class RunsCI(ResultMixin):
    r"""A metric of a classifier's repeated runs with its confidence interval.

    Attributes
    ----------
    metric : str
        The metric.
    estimate, low, high : float
        The estimate (the mean over runs of each run's metric; for ``"majority"`` the
        metric of the majority vote) and the interval ends.
    confidence_level : float
        The confidence level.
    method : str
        How the interval was computed, e.g. ``"variance components (texts x runs),
        agresti_coull on n_eff, t with 3.4 df"``.
    estimand : str
        ``"new_run"``, ``"these_runs"`` or ``"majority"``.
    sources : tuple of str
        The sources of variation the interval includes, e.g. ``("texts", "runs")`` or
        ``("texts", "persons", "runs")``.
    population : str
        What the interval is about, in words.
    se : float
        Standard error of the estimate (the linearized variance-components one, or the
        bootstrap SD).
    df : float
        Degrees of freedom of the t quantile (Satterthwaite's; NaN for the bootstrap).
    runs : int
        Runs of the classifier.
    units : int
        Texts, or with persons the persons with at least one text.
    n_texts : int
        Texts (each labelled in every run).
    var_units, var_runs : float
        The variance of the estimate from sampling units (texts or persons, with the
        runs' noise within them) and from sampling runs (0 when the run-to-run
        differences are no larger than their noise; NaN where not estimated).
    run_estimates : numpy.ndarray
        The metric of each run, ``(..., runs)``.
    run_sd : float
        The standard deviation of the runs' metrics (over runs, ddof 1).
    flip_share : float
        Share of texts whose label differs between at least two runs (NaN when only
        the counts per unit and run were given, which do not pair a text's runs).
    """

    _exclude: ClassVar[tuple[str, ...]] = ("run_estimates",)

    metric: str
    estimate: Any
    low: Any
    high: Any
    confidence_level: float
    method: str
    estimand: str
    sources: tuple[str, ...]
    population: str
    se: Any
    df: Any
    runs: int
    units: Any
    n_texts: Any
    var_units: Any
    var_runs: Any
    run_estimates: np.ndarray
    run_sd: Any
    flip_share: Any

    @property
    def half_width(self) -> Any:
        """Half the interval's width."""
        return (self.high - self.low) / 2

    def __repr__(self) -> str:
        if np.ndim(self.estimate):
            return (
                f"RunsCI(metric={self.metric!r}, batch of shape {np.shape(self.estimate)}, "
                f"estimand={self.estimand!r}, method={self.method!r})"
            )
        return (
            f"RunsCI(metric={self.metric!r}, estimate={self.estimate:.4g}, low={self.low:.4g}, "
            f"high={self.high:.4g}, estimand={self.estimand!r}, sources={self.sources!r}, "
            f"runs={self.runs}, run_sd={self.run_sd:.3g})"
        )


# ----------------------------------------------------------------------- the sources


def run_sources(estimand: str, nested: bool) -> tuple[str, ...]:
    """Return the sources of variation an interval of repeated runs includes.

    Examples
    --------
    >>> from perfci.runs import run_sources
    >>> run_sources("new_run", True), run_sources("these_runs", False)
    (('texts', 'persons', 'runs'), ('texts',))
    """
    registry.RUN_ESTIMAND.check(estimand)
    base = ("texts", "persons") if nested else ("texts",)
    return (*base, "runs") if estimand == "new_run" else base


def _population(estimand: str, nested: bool, runs: int) -> str:
    texts = (
        "the population of persons (new persons included) and their texts"
        if nested
        else ("the population of texts")
    )
    if estimand == "new_run":
        return (
            f"the expected metric of a new run of the classifier on {texts}: the mean over "
            f"the population of runs, of which {runs} were seen"
        )
    if estimand == "these_runs":
        return f"the mean over these {runs} runs of each run's metric on {texts}"
    return f"the metric of the majority vote of these {runs} runs on {texts}"


# ------------------------------------------------------------------------ validation


def _check_cells(cells: Any, multiplicity: Any) -> tuple[np.ndarray, np.ndarray]:
    arr = check_real_array("cells", cells)
    if arr.ndim < 3 or arr.shape[-1] != 4:
        raise ValueError(
            "`cells` must have shape (*batch, units, runs, 4): the confusion cells [tp, fp, "
            f"fn, tn] of each unit (a text or a person) in each run; got shape {arr.shape}."
        )
    if np.any(arr < 0) or np.any(arr != np.floor(arr)):
        raise ValueError("`cells` must be whole, non-negative counts.")
    if arr.shape[-2] < 2:
        raise ValueError(
            f"`cells` must hold at least 2 runs (axis -2) to include the runs' variation; "
            f"got {arr.shape[-2]}."
        )
    per_run = arr.sum(-1)
    if np.any(per_run != per_run[..., :1]):
        raise ValueError(
            "`cells` must give each unit the same number of texts in every run (every run "
            "labels the same texts)."
        )
    if multiplicity is None:
        weights = np.ones(arr.shape[:-2])
    else:
        weights = check_real_array("multiplicity", multiplicity)
        if weights.shape != arr.shape[:-2]:
            raise ValueError(
                f"`multiplicity` must have the shape of the units, {arr.shape[:-2]}; got "
                f"{weights.shape}."
            )
        if np.any(weights < 0) or np.any(weights != np.floor(weights)):
            raise ValueError("`multiplicity` must be whole, non-negative counts of units.")
    return arr.astype(float), weights.astype(float)


def _runs_iv(
    metric: Any, estimand: Any, method: Any, confidence_level: Any, n_resamples: Any, batch: Any
) -> tuple[float, int]:
    if metric not in BINARY_METRICS:
        raise ValueError(
            f"`metric` must be a binary metric, one of {sorted(BINARY_METRICS)}; got {metric!r}."
        )
    registry.RUN_ESTIMAND.check(estimand)
    registry.RUN_METHOD.check(method)
    level = float(check_confidence_level(confidence_level, scalar=True))
    resamples = check_positive_int("n_resamples", n_resamples)
    check_resample_size(resamples)
    if batch is not None:
        check_positive_int("batch", batch, " or None")
    if method != "bootstrap" and resamples != _N_RESAMPLES:
        raise ValueError(
            f"`n_resamples` is an option of the bootstrap, but `method` is {method!r}; leave "
            "it unset or pass method='bootstrap'."
        )
    return level, resamples


# ------------------------------------------------------------------------- the core


def _variance_components(
    cells: np.ndarray, weights: np.ndarray, metric: str, new_run: bool
) -> dict[str, np.ndarray]:
    """Linearized crossed (units x runs) variance of the mean of the runs' metrics.

    ``cells`` ``(B, m, R, 4)``, ``weights`` ``(B, m)`` (identical units). A unit may lack
    texts in some runs (an annotator who did not code a text): its cells there are 0 and
    the cell is not observed. Returns the estimate, the per-run metrics, the two variance
    parts and Satterthwaite's df.
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
        z = np.einsum("bmrc,bc->bmr", cells, gradient) / texts[:, None, :]
        z = np.where(np.isfinite(z), z, 0.0)
        unit_means = z.mean(-1)  # (B, m); the weighted sum over units is 0 (Euler)
        var_units = units / (units - 1) * np.einsum("bm,bm->b", weights, unit_means**2)
        run_totals = np.einsum("bm,bmr->br", weights, z)  # f(C_r) - f(C) to first order
        s2_runs = np.sum(run_totals**2, -1) / (runs - 1)
        # each unit's share of the run's relevant texts carries its part of the run effect
        relevant = cells[..., relevant_cells].sum(-1)  # (B, m, R)
        share = relevant / np.einsum("bm,bmr->br", weights, relevant)[:, None, :]
        observed = (cells.sum(-1) > 0) & has_relevant[..., None]  # (B, m, R)
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
    from .metrics import proportion_counts

    if metric in PROPORTION_METRICS:
        return proportion_counts(per_run, metric)[1]
    return per_run.sum(-1)


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
    return estimate - q_t * se, estimate + q_t * se, "t"


def _bootstrap_ends(
    cells: np.ndarray,
    weights: np.ndarray,
    metric: str,
    new_run: bool,
    level: float,
    n_resamples: int,
    generators: list[np.random.Generator],
    batch: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-way (units x runs) percentile bootstrap of the mean of the runs' metrics.

    A resample takes m units with replacement (a multinomial draw of the units'
    multiplicities) and, for ``new_run``, R runs with replacement; its value is the mean
    over the drawn runs of each run's metric on the drawn units. Returns low, high and
    the bootstrap SD.
    """
    size, m, runs = cells.shape[0], cells.shape[1], cells.shape[2]
    step = batch or max(1, _AUTO_BATCH_ELEMENTS // max(m + runs * 4, 1))
    low, high, sd = (np.full(size, np.nan) for _ in range(3))
    alpha = (1 - level) / 2
    for k, generator in enumerate(generators):  # data sets; each draws its resamples in batches
        present = (weights[k] > 0) & (cells[k].sum((-2, -1)) > 0)  # units with texts
        unit_cells, unit_weights = cells[k, present], weights[k, present]
        n_units = int(unit_weights.sum())
        if unit_cells.shape[0] < 2 or n_units < 2:
            continue
        unit_rng, run_rng = generator.spawn(2)
        shares = unit_weights / unit_weights.sum()
        values = np.empty(n_resamples)
        for start in range(0, n_resamples, step):
            b = min(step, n_resamples - start)
            drawn = unit_rng.multinomial(n_units, shares, size=b).astype(float)  # (b, m)
            per_run = np.einsum("bm,mrc->brc", drawn, unit_cells)
            run_values = metric_values(per_run, metric)  # (b, R)
            if new_run:
                taken = run_rng.multinomial(runs, np.full(runs, 1 / runs), size=b)
            else:
                taken = np.ones((b, runs))
            used = taken > 0
            total = np.sum(np.where(used, run_values, 0.0) * taken, -1) / runs
            # a resample in which a drawn run's metric is undefined is dropped
            values[start : start + b] = np.where(
                np.any(used & np.isnan(run_values), -1), np.nan, total
            )
        valid = values[~np.isnan(values)]
        if valid.size:
            low[k], high[k] = np.quantile(valid, [alpha, 1 - alpha])
            sd[k] = valid.std(ddof=1) if valid.size > 1 else np.nan
    return low, high, sd


def crossed_intervals(
    flat: np.ndarray,
    weights: np.ndarray,
    metric: str,
    *,
    new_source: bool,
    method: str,
    level: float,
    n_resamples: int,
    generators: list[np.random.Generator] | None,
    batch: int | None,
    unit: str,
    source: str,
) -> dict[str, Any]:
    """Intervals of the mean over a crossed source (runs, annotators) of its metrics.

    The engine of :func:`runs_ci_counts` and of :mod:`perfci.annotators`: `flat` is
    ``(B, units, sources, 4)``, `weights` ``(B, units)``; `new_source` adds the source's
    variance (a new run or annotator) to the units'. Warns once per kind of data set
    without an interval. Returns the variance parts, the ends, the standard error, df
    and a description.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.runs import crossed_intervals
    >>> cells = np.eye(4)[np.random.default_rng(0).integers(0, 4, (1, 50, 3))]  # 50 texts x 3 runs
    >>> out = crossed_intervals(cells, np.ones((1, 50)), "accuracy", new_source=True,
    ...                         method="recommended", level=0.95, n_resamples=2000,
    ...                         generators=None, batch=None, unit="texts", source="runs")
    >>> out["how"]
    'variance components (texts x runs), agresti_coull on n_eff (dean_pagano)'
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        parts = _variance_components(flat, weights, metric, new_source)
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
        assert generators is not None
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
    return {"parts": parts, "low": low, "high": high, "se": se, "df": df, "how": how}


def runs_ci_counts(
    cells: Any,
    metric: str,
    *,
    nested: bool = False,
    multiplicity: Any = None,
    estimand: str = "new_run",
    method: str = "recommended",
    confidence_level: float = 0.95,
    n_resamples: int = _N_RESAMPLES,
    rng: Any = None,
    batch: int | None = None,
) -> RunsCI:
    r"""Interval of a metric of repeated runs from counts: what :func:`runs_ci` computes.

    Parameters
    ----------
    cells : array_like of int
        The confusion cells ``[tp, fp, fn, tn]`` of each unit in each run, shape
        ``(*batch, units, runs, 4)``: a unit is a text (one count in each run), or with
        ``nested=True`` a person (their texts' counts in each run). Every run labels the
        same texts, so a unit's cells sum to the same number in every run. Units with no
        text are no units (a ragged batch can be padded with them).
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`).
    nested : bool, default False
        Whether the units are persons (texts nested in them) rather than texts; it
        changes the sources named in the result, not the arithmetic.
    multiplicity : array_like of int, optional
        How many identical units each row stands for, shape ``(*batch, units)`` (texts
        with the same reference label and the same label in every run are identical
        units); default one each.
    estimand : {"new_run", "these_runs"}, default "new_run"
        What the interval is about (see :mod:`perfci.runs`). ``"majority"`` needs the
        texts' labels (:func:`runs_ci`).
    method : {"recommended", "variance_components", "bootstrap"}, default "recommended"
        The linearized crossed variance-components interval (``"recommended"``; see the
        notes) or the two-way bootstrap of units and runs (percentile).
    confidence_level : float, default 0.95
        Confidence level.
    n_resamples : int, default 2000
        Bootstrap resamples (``method="bootstrap"`` only).
    rng : numpy.random.Generator, int or None
        Random generator or seed of the bootstrap; data set k of a batch draws from
        ``np.random.default_rng(rng).spawn(size)[k]``.
    batch : int, optional
        Resamples drawn at once (bounds memory; the result does not depend on it).

    Returns
    -------
    RunsCI
        Every field but the names of shape ``batch`` (floats for one data set);
        `run_estimates` of shape ``(*batch, runs)``; `flip_share` NaN (the counts do not
        pair a text's runs).

    Raises
    ------
    ValueError
        For cells of another shape or not whole non-negative counts, fewer than 2 runs,
        units whose texts differ between runs, a metric that is not binary, an unknown
        estimand or method, ``"majority"`` (labels needed), or a bootstrap option with
        another method.

    Warns
    -----
    UndefinedMetricWarning
        For data sets where a run's metric is undefined (a zero denominator) or with
        fewer than 2 units: their interval is NaN.

    Notes
    -----
    *The estimate* is the mean over runs of each run's metric, :math:`\hat\theta =
    \frac1R\sum_r f(C_r)`, :math:`C_r = \sum_u c_{ur}` the run's pooled cells.

    *Variance components.* With :math:`g = \nabla f(\bar C)` the metric's gradient at
    the runs' mean pooled cells :math:`\bar C` (:func:`perfci.metrics.metric_gradient`),
    each unit's influence in run r is :math:`z_{ur} = g \cdot c_{ur}`, and
    :math:`f(C_r) - f(\bar C) \approx Z_r = \sum_u z_{ur}`. As in a two-way crossed
    design without replication,

    .. math::

        V_{units} = \frac{m}{m - 1}\sum_u \bar z_{u\cdot}^2,\quad
        S^2_{runs} = \frac{\sum_r Z_r^2}{R - 1},\quad
        S^2_{noise} = \frac{m}{(m - 1)(R - 1)}\sum_{u, r} e_{ur}^2,

    with :math:`e_{ur} = z_{ur} - \bar z_{u\cdot} - (n_u / N) Z_r` the interaction
    residual (:math:`n_u` the unit's texts of :math:`N`). :math:`V_{units}` is the
    cluster-robust variance with the units as clusters and the runs averaged within them:
    the variance for ``"these_runs"``. For ``"new_run"`` the run effects add
    :math:`V_{runs} = \max(S^2_{runs} - S^2_{noise}, 0)/R`: the variance of the run
    totals beyond what the texts' run-to-run noise explains, truncated at 0 (with one
    text per unit this is exactly the two-way ANOVA estimate
    :math:`(MS_A + \max(MS_B - MS_E, 0))/(nR)`). The degrees of freedom are
    Satterthwaite's for :math:`V_{units} + (S^2_{runs} - S^2_{noise})/R` (m - 1, R - 1
    and (m - 1)(R - 1) df), and m - 1 when the run part is 0: with few runs that differ
    systematically they are close to R - 1, and the t quantile is wide, as it should be.
    A proportion metric's interval is Agresti-Coull on the effective sample size
    :math:`\hat\theta(1 - \hat\theta)/V` (at most the relevant texts) after Dean and
    Pagano's df adjustment, as :func:`perfci.clustered_proportion_ci` does; other metrics
    get :math:`\hat\theta \pm t\sqrt V`.

    *Bootstrap.* Each resample draws m units with replacement and, for ``"new_run"``, R
    runs with replacement (Owen's pigeonhole bootstrap for crossed designs); percentile
    interval. With few runs it cannot reflect the t distribution of R - 1 df.

    References
    ----------
    .. [1] Owen, A. B. (2007). The pigeonhole bootstrap. Annals of Applied Statistics
       1(2), 386-411.
    .. [2] Satterthwaite, F. E. (1946). An approximate distribution of estimates of
       variance components. Biometrics Bulletin 2(6), 110-114.

    Examples
    --------
    Five runs on 200 texts, one of them more lenient (the runs differ systematically):

    >>> import numpy as np
    >>> from perfci.runs import runs_ci_counts
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(200) < 0.4
    >>> lenient = np.array([0.0, 0.0, 0.1, 0.0, 0.2])
    >>> pred = rng.random((200, 5)) < np.where(truth[:, None], 0.85 + lenient / 2, lenient)
    >>> cell = 2 * (1 - pred) + (1 - truth[:, None])  # [tp, fp, fn, tn] index
    >>> cells = np.eye(4, dtype=int)[cell]  # (texts, runs, 4)
    >>> new = runs_ci_counts(cells, "precision")
    >>> these = runs_ci_counts(cells, "precision", estimand="these_runs")
    >>> print(f"{new.estimate:.3f} new run [{new.low:.3f}, {new.high:.3f}], "
    ...       f"these runs [{these.low:.3f}, {these.high:.3f}]")
    0.916 new run [0.627, 1.000], these runs [0.870, 0.948]
    >>> new.sources, these.sources
    (('texts', 'runs'), ('texts',))
    """
    level, n_resamples = _runs_iv(metric, estimand, method, confidence_level, n_resamples, batch)
    if estimand == "majority":
        raise ValueError(
            "`estimand` 'majority' is the majority vote of the runs on each text, which the "
            "counts per unit and run do not give: use runs_ci with the labels."
        )
    generator = check_rng(rng) if method == "bootstrap" else None
    arr, weights = _check_cells(cells, multiplicity)
    batch_shape = arr.shape[:-3]
    m, runs = arr.shape[-3], arr.shape[-2]
    flat = arr.reshape(-1, m, runs, 4)
    flat_weights = weights.reshape(-1, m)
    new_run = estimand == "new_run"
    crossed = crossed_intervals(
        flat,
        flat_weights,
        metric,
        new_source=new_run,
        method=method,
        level=level,
        n_resamples=n_resamples,
        generators=(
            None
            if generator is None
            else dataset_generators(generator, flat.shape[0], bool(batch_shape))
        ),
        batch=batch,
        unit="persons" if nested else "texts",
        source="runs",
    )
    parts, low, high, se, df, how = (
        crossed[k] for k in ("parts", "low", "high", "se", "df", "how")
    )
    run_sd = parts["run_values"].std(-1, ddof=1)
    texts = np.einsum("bm,bm->b", flat_weights, flat[..., 0, :].sum(-1))

    def shaped(values: np.ndarray, kind: type = float) -> Any:
        return batch_shaped(values, batch_shape, kind)

    return RunsCI(
        metric=metric,
        estimate=shaped(parts["estimate"]),
        low=shaped(low),
        high=shaped(high),
        confidence_level=level,
        method=how,
        estimand=estimand,
        sources=run_sources(estimand, nested),
        population=_population(estimand, nested, runs),
        se=shaped(se),
        df=shaped(df),
        runs=runs,
        units=shaped(parts["units"], int),
        n_texts=shaped(texts, int),
        var_units=shaped(parts["var_units"]),
        var_runs=shaped(parts["var_runs"]),
        run_estimates=parts["run_values"].reshape(*batch_shape, runs),
        run_sd=shaped(run_sd),
        flip_share=shaped(np.full(flat.shape[0], np.nan)),
    )


# ------------------------------------------------------------------------- labels


def _refuse_missing_runs(name: str, values: np.ndarray, columns: list[str] | None) -> None:
    """Raise for a missing label in a text x run table, naming the text's row and the run."""
    import pandas as pd

    missing = pd.isna(pd.DataFrame(values)).to_numpy()
    if missing.any():
        row, col = (int(v[0]) for v in np.nonzero(missing))
        run = repr(columns[col]) if columns is not None else f"{col}"
        raise ValueError(
            f"`{name}` contains missing labels (NaN or None): {int(missing.sum())} of "
            f"{missing.size}, the first at row {row}, run {run}; every run labels every text."
        )


def _pred_runs(y_pred: Any, name: str = "y_pred") -> np.ndarray:
    """Return the runs' labels as an ``(n_texts, n_runs)`` object array, or raise."""
    import pandas as pd

    columns = None
    if isinstance(y_pred, pd.DataFrame):
        values = y_pred.to_numpy(dtype=object)
        columns = [str(c) for c in y_pred.columns]
    else:
        values = np.asarray(y_pred, dtype=object)
    if values.ndim == 2:
        _refuse_missing_runs(name, values, columns)
    if values.ndim != 2:
        raise ValueError(
            "`y_pred` must be two-dimensional for repeated runs, (n_texts, n_runs): one "
            f"column per run; got shape {values.shape}."
        )
    if values.shape[1] < 2:
        raise ValueError(
            f"`y_pred` must hold at least 2 runs (columns) to include the runs' variation; "
            f"got {values.shape[1]}. With one run use perfci.metric_ci."
        )
    return values


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
    >>> from perfci.runs import person_run_cells
    >>> person_run_cells(np.array([[0, 2], [3, 3], [0, 0]]), np.array([0, 0, 1])).tolist()
    [[[1, 0, 0, 1], [0, 0, 1, 1]], [[1, 0, 0, 0], [1, 0, 0, 0]]]
    """
    m = int(person.max()) + 1 if persons is None else persons
    runs = cell.shape[1]
    flat = (person[:, None] * runs + np.arange(runs)) * 4 + cell
    flat = flat.ravel() if observed is None else flat[observed]
    return np.bincount(flat, minlength=m * runs * 4).reshape(m, runs, 4)


def majority_vote(positive_votes: np.ndarray, runs: int) -> tuple[np.ndarray, int]:
    """Return the majority-vote labels (True: positive) and the number of tied texts.

    A text is positive when more than half of the runs label it positive; a tie (an
    even number of runs split evenly) counts as negative, the label that needs no
    majority. Ties are counted so that the caller can say how many there were.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.runs import majority_vote
    >>> majority_vote(np.array([0, 1, 2, 3, 4]), 4)
    (array([False, False, False,  True,  True]), 1)
    """
    votes = np.asarray(positive_votes)
    return 2 * votes > runs, int(np.count_nonzero(2 * votes == runs))


def runs_ci(
    y_true: Any,
    y_pred: Any,
    metric: str,
    *,
    groups: Any = None,
    estimand: str = "new_run",
    method: str = "recommended",
    positive: Any = None,
    confidence_level: float = 0.95,
    n_resamples: int = _N_RESAMPLES,
    rng: Any = None,
    batch: int | None = None,
) -> RunsCI:
    r"""Confidence interval for a metric of a classifier run several times on the same texts.

    :func:`perfci.metric_ci` calls this function when `y_pred` has a column per run.

    Parameters
    ----------
    y_true : array_like
        Reference (human) labels, one per text.
    y_pred : array_like or DataFrame
        The classifier's labels, ``(n_texts, n_runs)``: one column per run, at least 2.
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`); with more than two labels, of
        the `positive` class against the rest.
    groups : array_like, optional
        Person ids, one per text: the texts are nested in persons (the units of the
        crossed design are then the persons).
    estimand : {"new_run", "these_runs", "majority"}, default "new_run"
        What the interval is about (see :mod:`perfci.runs`).
    method : {"recommended", "variance_components", "bootstrap"}, default "recommended"
        As in :func:`runs_ci_counts`. For ``"majority"`` the majority-vote labels get
        :func:`perfci.metric_ci`'s recommended interval and `method` must be
        ``"recommended"``.
    positive : object, optional
        The positive label, as in :func:`perfci.confusion`.
    confidence_level : float, default 0.95
        Confidence level.
    n_resamples, rng, batch
        Bootstrap options, as in :func:`runs_ci_counts`.

    Returns
    -------
    RunsCI
        The estimate and interval, the estimand and the `sources` it includes, each
        run's metric and their SD (`run_sd`), and the share of texts whose label flips
        between runs (`flip_share`).

    Raises
    ------
    ValueError
        For `y_pred` that is not two-dimensional with at least 2 runs, labels or ids of
        the wrong length or with missing values, and as :func:`runs_ci_counts`.

    Warns
    -----
    UndefinedMetricWarning
        Where a run's metric is undefined; for ``"majority"`` with an even number of
        runs, how many texts were tied (they count as negative).

    Notes
    -----
    Texts are the units of the crossed design (compressed: texts with the same reference
    label and the same label in every run are one unit with a multiplicity); with
    `groups` the persons are, each with their texts' cells in every run. See
    :func:`runs_ci_counts` for the intervals.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> runs = texts[["run1", "run2", "run3"]]
    >>> ci = pc.metric_ci(texts["human"], runs, "recall", groups=texts["person"])
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] about {ci.sources}")
    0.888 [0.826, 0.931] about ('texts', 'persons', 'runs')
    >>> print(f"run SD {ci.run_sd:.3f}, {ci.flip_share:.1%} of texts flip")
    run SD 0.021, 5.7% of texts flip
    """
    import pandas as pd

    from ._core.labels import as_label_array
    from .counting import normalize_labels

    level, n_resamples = _runs_iv(metric, estimand, method, confidence_level, n_resamples, batch)
    check_label("positive", positive)
    if estimand == "majority" and method != "recommended":
        raise ValueError(
            "`method` must be 'recommended' for estimand 'majority': the majority vote is one "
            "classifier, whose interval is perfci.metric_ci's."
        )
    pred = _pred_runs(y_pred)
    truth_in = y_true.to_numpy() if isinstance(y_true, pd.Series | pd.Index) else y_true
    given = normalize_labels({"y_true": truth_in, "y_pred": pred.T}, positive=positive, ndim=None)
    truth = np.asarray(given.values["y_true"])
    runs_labels = np.asarray(given.values["y_pred"]).T  # (n, R)
    if truth.ndim != 1:
        raise ValueError(f"`y_true` must be one-dimensional; got shape {truth.shape}.")
    n, runs = runs_labels.shape
    if truth.size != n:
        raise ValueError(
            f"`y_pred` must have one row per text of `y_true` ({truth.size}); got {n}."
        )
    if given.positive is None:
        raise ValueError(
            f"`positive` must name the positive class: the labels are "
            f"{given.classes.tolist()!r} and {metric} is a binary metric."
        )
    is_pos = truth == given.positive
    said = runs_labels == given.positive
    person = None
    if groups is not None:
        ids = as_label_array("groups", groups)
        if ids.shape != truth.shape:
            raise ValueError(f"`groups` must have one id per text ({n}); got {ids.size}.")
        person = pd.factorize(ids)[0]
    flips = float(np.mean(said.any(1) & ~said.all(1))) if n else math.nan
    cell = 2 * (~said) + (~is_pos)[:, None]  # (n, R): 0 tp, 1 fp, 2 fn, 3 tn
    nested = person is not None
    if estimand == "majority":
        return _majority(
            truth, said, is_pos, cell, person, metric, given.positive, level, rng, flips
        )
    if person is not None:
        cells = person_run_cells(cell, person)
        weights = None
    else:
        patterns, counts = np.unique(cell, axis=0, return_counts=True)
        cells = np.eye(4, dtype=np.int64)[patterns]  # (units, R, 4)
        weights = counts
    result = runs_ci_counts(
        cells,
        metric,
        nested=nested,
        multiplicity=weights,
        estimand=estimand,
        method=method,
        confidence_level=level,
        n_resamples=n_resamples,
        rng=rng,
        batch=batch,
    )
    from dataclasses import replace

    return replace(result, flip_share=flips, n_texts=n)


def _majority(
    truth: np.ndarray,
    said: np.ndarray,
    is_pos: np.ndarray,
    cell: np.ndarray,
    person: np.ndarray | None,
    metric: str,
    positive: Any,
    level: float,
    rng: Any,
    flips: float,
) -> RunsCI:
    """Compute the ``"majority"`` estimand: metric_ci of the majority-vote labels."""
    from .reporting import metric_ci

    runs = said.shape[1]
    vote, ties = majority_vote(said.sum(1), runs)
    if ties:
        warnings.warn(
            f"{ties} of {said.shape[0]} texts have as many positive as negative labels over "
            f"the {runs} runs; their majority vote counts as negative (an odd number of runs "
            "has no ties).",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    labels = np.where(vote, 1, 0)
    ci = metric_ci(
        is_pos.astype(int),
        labels,
        metric,
        groups=person,
        confidence_level=level,
        rng=rng,
    )
    per_run = np.bincount((cell + 4 * np.arange(runs)).ravel(), minlength=4 * runs).reshape(runs, 4)
    run_values = metric_values(per_run.astype(float), metric)
    nested = person is not None
    return RunsCI(
        metric=metric,
        estimate=ci.estimate,
        low=ci.low,
        high=ci.high,
        confidence_level=level,
        method=f"majority vote of {runs} runs; {ci.method}",
        estimand="majority",
        sources=run_sources("majority", nested),
        population=_population("majority", nested, runs),
        se=math.nan,
        df=math.nan,
        runs=runs,
        units=int(ci.persons) if nested and ci.persons is not None else int(said.shape[0]),
        n_texts=int(said.shape[0]),
        var_units=math.nan,
        var_runs=math.nan,
        run_estimates=run_values,
        run_sd=float(np.std(run_values, ddof=1)),
        flip_share=flips,
    )


# ---------------------------------------------------------------------- comparison


@dataclass(frozen=True, repr=False)
class RunsComparison(ResultMixin):
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
    side's influence values (:func:`runs_ci_counts`) averaged over its runs,
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

    from ._core.labels import as_label_array
    from .counting import normalize_labels
    from .metrics import difference_bound

    if estimand not in ("new_run", "these_runs"):
        raise ValueError(
            f"`estimand` must be one of ['new_run', 'these_runs'] for a comparison of runs; "
            f"got {estimand!r} (compare two majority votes with perfci.compare)."
        )
    level, _ = _runs_iv(metric, estimand, "recommended", confidence_level, _N_RESAMPLES, None)
    check_label("positive", positive)
    sides = []
    for name, value in (("pred_a", pred_a), ("pred_b", pred_b)):
        arr = (
            value.to_numpy(dtype=object)
            if isinstance(value, pd.Series)
            else _pred_runs(value, name)
            if isinstance(value, pd.DataFrame) or np.ndim(np.asarray(value, dtype=object)) == 2
            else np.asarray(value, dtype=object)
        )
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise ValueError(
                f"`{name}` must be one label per text or (n_texts, n_runs); got shape {arr.shape}."
            )
        sides.append(arr)
    truth_in = y_true.to_numpy() if isinstance(y_true, pd.Series | pd.Index) else y_true
    given = normalize_labels(
        {"y_true": truth_in, "pred_a": sides[0].T, "pred_b": sides[1].T},
        positive=positive,
        ndim=None,
    )
    truth = np.asarray(given.values["y_true"])
    if truth.ndim != 1:
        raise ValueError(f"`y_true` must be one-dimensional; got shape {truth.shape}.")
    n = truth.size
    labels = []
    for name in ("pred_a", "pred_b"):
        arr = np.asarray(given.values[name]).T
        if arr.shape[0] != n:
            raise ValueError(
                f"`{name}` must have one row per text of `y_true` ({n}); got {arr.shape[0]}."
            )
        labels.append(arr)
    if given.positive is None:
        raise ValueError(
            f"`positive` must name the positive class: the labels are {given.classes.tolist()!r}."
        )
    person = None
    if groups is not None:
        ids = as_label_array("groups", groups)
        if ids.shape != truth.shape:
            raise ValueError(f"`groups` must have one id per text ({n}); got {ids.size}.")
        person = pd.factorize(ids)[0]
    is_pos = truth == given.positive
    parts = []
    for arr in labels:
        said = arr == given.positive
        cell = 2 * (~said) + (~is_pos)[:, None]
        cells = np.eye(4)[cell] if person is None else person_run_cells(cell, person)
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append(
                _variance_components(
                    cells[None].astype(float),
                    np.ones((1, cells.shape[0])),
                    metric,
                    estimand == "new_run" and cells.shape[1] > 1,
                )
            )
    a, b = parts
    undefined = bool(np.isnan(a["run_values"]).any() or np.isnan(b["run_values"]).any())
    units = float(max(a["units"][0], b["units"][0]))
    with np.errstate(invalid="ignore", divide="ignore"):
        diff_means = a["unit_means"][0] - b["unit_means"][0]
        var_units = units / (units - 1) * float(np.sum(diff_means**2))
    runs_a, runs_b = len(a["run_values"][0]), len(b["run_values"][0])
    var_a = float(a["excess"][0]) / runs_a if runs_a > 1 else 0.0
    var_b = float(b["excess"][0]) / runs_b if runs_b > 1 else 0.0
    variance = var_units + var_a + var_b
    terms = var_units**2 / (units - 1) if units > 1 else math.inf
    for side, runs, extra in ((a, runs_a, var_a), (b, runs_b, var_b)):
        if extra > 0:
            terms += float(side["s2_runs"][0] / runs) ** 2 / (runs - 1)
            terms += float(side["s2_noise"][0] / runs) ** 2 / float(side["noise_df"][0])
    df = max(variance**2 / terms, 1.0) if terms > 0 and np.isfinite(terms) else units - 1
    difference = float(a["estimate"][0] - b["estimate"][0])
    se = math.sqrt(variance) if variance >= 0 else math.nan
    if undefined or units < 2 or not np.isfinite(se):
        warnings.warn(
            f"no interval of the {metric} difference: the metric is undefined in a run, or "
            "there are fewer than 2 units (texts or persons) with a relevant text.",
            UndefinedMetricWarning,
            stacklevel=2,
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
    unit = "persons" if person is not None else "texts"
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
        runs_a=runs_a,
        runs_b=runs_b,
        units=int(units),
        var_units=var_units,
        var_runs_a=var_a,
        var_runs_b=var_b,
        persons=None if person is None else int(person.max()) + 1,
    )
