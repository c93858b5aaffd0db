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
:func:`runs_ci` computes after the labels and what the validation harness scores;
:func:`compare_runs_counts` the core of :func:`compare_runs`. The crossed arithmetic
(variance components, the two-way bootstrap) is :mod:`perfci.crossed`'s, shared with
several annotators (:mod:`perfci.annotators`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from ._core import registry
from ._core.labels import check_aligned, majority_of_counts
from ._core.results import IntervalResult
from ._core.validation import (
    UndefinedMetricWarning,
    check_label,
    check_real_array,
    check_rng,
    dataset_generators,
)
from .bootstrap import batch_shaped
from .crossed import (  # crossed_intervals, person_run_cells, runs_table: runs' names too
    confusion_cells,
    crossed_intervals,
    crossed_iv,
    person_run_cells,
    read_run_labels,
    runs_table,
)
from .metric import metric_ci_counts
from .metrics import metric_values
from .policy import RECOMMENDED
from .runs_comparison import RunsComparison, compare_runs, compare_runs_counts

__all__ = [
    "RUN_ESTIMANDS",
    "RUN_METHODS",
    "RunsCI",
    "RunsComparison",
    "compare_runs",
    "compare_runs_counts",
    "majority_vote",
    "runs_ci",
    "runs_ci_counts",
]

#: What an interval of repeated runs is about (:data:`perfci._core.registry.RUN_ESTIMAND`).
RUN_ESTIMANDS: tuple[str, ...] = registry.RUN_ESTIMAND.names
#: Interval methods of repeated runs (:data:`perfci._core.registry.RUN_METHOD`).
RUN_METHODS: tuple[str, ...] = registry.RUN_METHOD.names


@dataclass(frozen=True, repr=False)
class RunsCI(IntervalResult):
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
        Degrees of freedom of the t quantile (Satterthwaite's; NaN for the bootstrap and
        for a tiny design's interval of the median run).
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


def runs_iv(
    metric: Any, estimand: Any, method: Any, confidence_level: Any, n_resamples: Any, batch: Any
) -> tuple[float, int]:
    """Check the options of an interval of repeated runs; return the level and resamples."""
    registry.RUN_ESTIMAND.check(estimand)
    return crossed_iv(metric, method, confidence_level, n_resamples, batch)


# ------------------------------------------------------------------------- the core


def runs_ci_counts(
    cells: Any,
    metric: str,
    *,
    nested: bool = False,
    multiplicity: Any = None,
    estimand: str = "new_run",
    method: str = "recommended",
    confidence_level: float = 0.95,
    n_resamples: int | str = RECOMMENDED,
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
        The linearized crossed variance-components interval, the two-way bootstrap of
        units and runs (percentile), or ``"recommended"``: the variance components, and
        for ``"new_run"`` in a tiny design the median run's interval of one classifier
        (see the notes).
    confidence_level : float, default 0.95
        Confidence level.
    n_resamples : int or "recommended", default "recommended"
        Bootstrap resamples (``method="bootstrap"`` only; "recommended": 2000, more above a 99%
        level), at least ``ceil(2 / (1 - confidence_level))`` (40 at 95%: each tail of the
        percentile interval holds a resample). Any number given, 2000 too, is a bootstrap option.
    rng : numpy.random.Generator, int or None
        Random generator or seed of the bootstrap (and of the median run's interval of a
        tiny design, a bootstrap for F1); data set k of a batch draws from
        ``perfci.batch_generators(rng, size)[k]``.
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
        fewer than 2 units, and tiny designs where no method is known to cover: their
        interval is NaN.
    perfci.crossed.TinyDesignWarning
        For tiny designs (see the notes), saying which interval they got.

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
    Pagano's df adjustment, as :func:`perfci.clustered_proportion_ci` does; another metric
    in [0, 1] (F1) gets :math:`\mathrm{expit}(\mathrm{logit}\,\hat\theta \pm
    t\sqrt V / (\hat\theta(1 - \hat\theta)))`, the delta method on the logit scale (the
    plain :math:`\hat\theta \pm t\sqrt V` at 0 or 1 or a variance of 0), kappa and MCC
    :math:`\hat\theta \pm t\sqrt V`. On the logit scale the new-run F1 of 10 persons x
    10 texts and 10 runs covered 0.950 where the plain interval covered 0.929-0.938 (5-6%
    of intervals above the truth: F1's sampling distribution is skewed).

    *Bootstrap.* Each resample draws m units with replacement and, for ``"new_run"``, R
    runs with replacement (Owen's pigeonhole bootstrap for crossed designs); percentile
    interval. With few runs it cannot reflect the t distribution of R - 1 df.

    *Tiny designs.* With fewer than :data:`perfci.policy.CROSSED_TINY_RELEVANT` (8)
    relevant texts per run (:func:`perfci.crossed.relevant_per_level`: the texts each
    run's metric is computed from, for F1 those the run or the reference calls positive,
    averaged over the runs) the linearization fails: in the stress atlas (10 texts, about
    3-4 relevant per run) the variance-components interval covered the new-run F1 only
    0.89-0.92 at half-widths up to 0.63. There the recommended ``"new_run"`` interval is
    the recommended interval of one classifier (:func:`perfci.metric_ci_counts`) on the
    cells of the median run (:func:`perfci.crossed.median_level_interval`; with an even
    number of runs, or ties, the median runs' intervals joined), widened to hold the
    estimate if need be. A run's metric is a draw around the new-run truth: each run
    labels every text anew, so its one-classifier interval includes the texts'
    run-to-run noise; it does not include the systematic differences between runs
    (its target is its own run's metric), but the median run is a typical one, and the
    atlas covered 0.962-0.997 with it at half-widths of 0.32-0.40. Where the median run has
    fewer than 2 units with a relevant text, a proportion keeps the variance-components
    interval (which covered 0.99 in such data sets in simulations), and any other
    metric gets NaN with the warning that no method is known to cover (the variance
    components covered F1 about 0.75 there). ``"these_runs"``, ``"variance_components"``
    and ``"bootstrap"`` keep their intervals.

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
    level, n_resamples = runs_iv(metric, estimand, method, confidence_level, n_resamples, batch)
    if estimand == "majority":
        raise ValueError(
            "`estimand` 'majority' is the majority vote of the runs on each text, which the "
            "counts per unit and run do not give: use runs_ci with the labels."
        )
    # the recommended interval of a tiny design is the median run's, a bootstrap for F1
    generator = check_rng(rng) if method in ("bootstrap", RECOMMENDED) else None
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


def majority_vote(positive_votes: np.ndarray, runs: int) -> tuple[np.ndarray, int]:
    """Return the majority-vote labels (True: positive) and the number of tied texts.

    A text is positive when more than half of the runs label it positive; a tie (an
    even number of runs split evenly) counts as negative, the label that needs no
    majority (:func:`perfci._core.labels.majority_of_counts` with ``tie=0``). Ties are
    counted so that the caller can say how many there were.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.runs import majority_vote
    >>> majority_vote(np.array([0, 1, 2, 3, 4]), 4)
    (array([False, False, False,  True,  True]), 1)
    """
    votes = np.asarray(positive_votes)
    counts = np.stack([runs - votes, votes], axis=-1)  # negative and positive votes
    ties = int(np.count_nonzero(counts[..., 0] == counts[..., 1]))
    return majority_of_counts(counts, tie=0) == 1, ties


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
    n_resamples: int | str = RECOMMENDED,
    rng: Any = None,
    batch: int | None = None,
    source: str = "runs",
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
        As in :func:`runs_ci_counts` (a tiny design's recommended ``"new_run"`` interval
        is the median run's). For ``"majority"`` the majority-vote labels get
        :func:`perfci.metric_ci`'s recommended interval and `method` must be
        ``"recommended"``.
    positive : object, optional
        The positive label, as in :func:`perfci.confusion`.
    confidence_level : float, default 0.95
        Confidence level.
    n_resamples, rng, batch
        Bootstrap options, as in :func:`runs_ci_counts`.
    source : {"runs", "seeds"}, default "runs"
        What the columns are: runs of one classifier, or the models of one fitting recipe
        trained with different seeds (the same crossed design and arithmetic; the result
        names ``"seeds"`` among its sources and ``"new_run"`` is a new seed's model).

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
    perfci.crossed.TinyDesignWarning
        For a tiny design, as :func:`runs_ci_counts`.

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
    0.888 [0.823, 0.932] about ('texts', 'persons', 'runs')
    >>> print(f"run SD {ci.run_sd:.3f}, {ci.flip_share:.1%} of texts flip")
    run SD 0.021, 5.7% of texts flip
    """
    check_aligned(y_true=y_true, y_pred=y_pred, groups=groups)
    level, _ = runs_iv(metric, estimand, method, confidence_level, n_resamples, batch)
    registry.RUN_SOURCE.check(source)
    check_label("positive", positive)
    if estimand == "majority" and method != "recommended":
        raise ValueError(
            "`method` must be 'recommended' for estimand 'majority': the majority vote is one "
            "classifier, whose interval is perfci.metric_ci's."
        )
    is_pos, runs_said, person = read_run_labels(
        y_true,
        {"y_pred": runs_table(y_pred)},
        positive,
        groups,
        f" and {metric} is a binary metric",
    )
    said = runs_said["y_pred"]
    n = said.shape[0]
    flips = float(np.mean(said.any(1) & ~said.all(1))) if n else math.nan
    cell = 2 * (~said) + (~is_pos)[:, None]  # (n, R): 0 tp, 1 fp, 2 fn, 3 tn
    nested = person is not None
    if estimand == "majority":
        return _named(_majority(said, is_pos, cell, person, metric, level, rng, flips), source)
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
    return _named(replace(result, flip_share=flips, n_texts=n), source)


def _named(result: RunsCI, source: str) -> RunsCI:
    """Return the result with its columns named training seeds, if they are."""
    if source == "runs":
        return result
    population = result.population.replace(
        "a new run of the classifier", "the model of a new training seed of the recipe"
    )
    population = population.replace("population of runs", "population of seeds")
    population = population.replace("each run's metric", "each seed's model's metric")
    population = population.replace(" runs", " seeds")
    return replace(
        result,
        sources=tuple("seeds" if s == "runs" else s for s in result.sources),
        population=population,
    )


def _majority(
    said: np.ndarray,
    is_pos: np.ndarray,
    cell: np.ndarray,
    person: np.ndarray | None,
    metric: str,
    level: float,
    rng: Any,
    flips: float,
) -> RunsCI:
    """Compute the ``"majority"`` estimand: the recommended interval of the vote's cells."""
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
    ci = metric_ci_counts(
        confusion_cells(2 * (~vote) + ~is_pos, person),
        metric,
        nested=person is not None,
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
