"""One metric's interval from counts, by the policy: :func:`metric_ci_counts` and :class:`MetricCI`.

This is the floor between the interval families (analytic, design, bootstrap) and the
label-level functions: it checks that a metric has an interval on given counts, asks
:mod:`perfci.policy` which method to use, and computes it. Everything above (repeated runs,
annotators, subgroups, :func:`perfci.metric_ci` and :func:`perfci.report`) calls it with
counts; it never reads labels.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from . import policy
from ._core import registry
from ._core.estimands import population_sentence, relevant_description, relevant_texts
from ._core.results import IntervalResult
from ._core.validation import (
    UndefinedMetricError,
    UndefinedMetricWarning,
    check_confidence_level,
    check_counts_array,
    check_label,
    check_rng,
)
from .analytic import ProportionCI, proportion_ci
from .auc import RocAucCI
from .bootstrap import BootstrapCI, bootstrap_ci, shared_bootstrap_cis
from .counting import ConfusionCounts, one_vs_rest
from .design import ClusteredProportionCI, clustered_proportion_ci
from .metrics import (
    BINARY_METRICS,
    METRICS,
    PROPORTION_METRICS,
    metric_values,
    proportion_counts,
    right_wrong_cells,
    undefined_reason,
)
from .policy import RECOMMENDED

if TYPE_CHECKING:  # pragma: no cover
    from .sample_design import WeightedCI

__all__ = ["AVERAGED_METRICS", "MetricCI", "metric_ci_counts"]


#: The metrics averaged over classes (``macro_*``, ``micro_*``): they take a k x k matrix.
AVERAGED_METRICS = tuple(m for m in METRICS if m not in BINARY_METRICS)


@dataclass(frozen=True, repr=False)
class MetricCI(IntervalResult):
    r"""A metric with its confidence interval, the method used and what it is about.

    Attributes
    ----------
    metric : str
        The metric.
    estimate, low, high : float
        Point estimate and interval ends.
    confidence_level : float
        The confidence level.
    method : str
        The method used, with its options, e.g.
        ``"agresti_coull (design=icc_weighted, df_adjust=dean_pagano)"``.
    population : str
        What the interval is about (the estimand).
    relevant_n : int
        The texts the metric is computed from (for proportion metrics, its
        denominator).
    persons : int or None
        Persons with at least one relevant text (nested data), else None.
    icc, design_effect, n_eff : float
        The nested-data adjustment of analytic intervals: ICC, design effect and
        :math:`n_{eff} = N/\mathrm{DEFF}` before any df adjustment (NaN where not
        applicable).
    result : ProportionCI, ClusteredProportionCI, BootstrapCI, RocAucCI or WeightedCI
        The underlying result (in :meth:`to_dict`; :meth:`to_frame` and
        :meth:`to_xarray` hold the fields above only, see the result's own). For
        ``roc_auc`` it is :func:`perfci.auc_ci`'s :class:`~perfci.RocAucCI`, and
        `relevant_n` counts every text (positives and negatives); for a weighted or
        stratified sample the design-based :class:`~perfci.sample_design.WeightedCI`
        (then `design_effect` is the relevant texts over `n_eff`).
    """

    _derived: ClassVar[tuple[str, ...]] = ("sources",)
    _exclude: ClassVar[tuple[str, ...]] = ("result",)

    metric: str
    estimate: float
    low: float
    high: float
    confidence_level: float
    method: str
    population: str
    relevant_n: int
    persons: int | None
    icc: float
    design_effect: float
    n_eff: float
    result: ProportionCI | ClusteredProportionCI | BootstrapCI | RocAucCI | WeightedCI

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes.

        Those of the underlying `result`.
        """
        return self.result.sources

    def __repr__(self) -> str:
        return (
            f"MetricCI(metric={self.metric!r}, estimate={self.estimate:.4g}, "
            f"low={self.low:.4g}, high={self.high:.4g}, confidence_level="
            f"{self.confidence_level:g}, method={self.method!r}, relevant_n={self.relevant_n}, "
            f"persons={self.persons})"
        )


def metric_ci_of_auc(ci: RocAucCI) -> MetricCI:
    """Return :func:`perfci.auc_ci`'s result as the :class:`MetricCI` of ``"roc_auc"``.

    `relevant_n` counts every text (positives and negatives); the design fields are NaN.
    """
    return MetricCI(
        metric="roc_auc",
        estimate=ci.estimate,
        low=ci.low,
        high=ci.high,
        confidence_level=ci.confidence_level,
        method=ci.description,
        population=ci.population,
        relevant_n=ci.n_positive + ci.n_negative,
        persons=ci.persons,
        icc=np.nan,
        design_effect=np.nan,
        n_eff=np.nan,
        result=ci,
    )


@dataclass(frozen=True)
class IntervalPlan:
    """What an interval of one metric needs before anything is computed."""

    metric: str
    cells: np.ndarray
    choice: policy.IntervalChoice
    nested: bool
    relevant_n: int
    persons: int | None
    independent_texts: bool
    estimate: float
    #: The metric's name in the result, where its interval is another metric's
    #: (``multiclass_accuracy`` is the accuracy of right against wrong texts).
    reported: str | None = None

    @property
    def draws(self) -> tuple | None:
        """What the bootstrap resamples, for sharing draws; None for analytic intervals."""
        c = self.choice
        if c.method != "bootstrap" or isinstance(c.n_resamples, str):
            return None
        return (c.scheme, c.interval, c.pseudo_count, c.n_resamples, self.cells.shape)


def plan_interval(
    counts: ConfusionCounts, metric: str, *, options: dict[str, Any], strict: bool
) -> IntervalPlan:
    """Check that `metric` has an interval on `counts` and choose its method.

    `options` are the method options of :func:`metric_ci` (``method``, ``design``, ...),
    passed to :func:`perfci.policy.choose_interval`.

    ``multiclass_accuracy`` is a proportion of texts, those classified right: its plan is
    that of ``"accuracy"`` on the cells ``[right, wrong, 0, 0]`` (per person when nested),
    whose accuracy it is, so it gets the recommended interval of a proportion.
    """
    if metric == "multiclass_accuracy" and counts.matrix is not None:
        cells = right_wrong_cells(counts.matrix).astype(counts.counts.dtype)
        dims = (*counts.dims[:-2], "cell")
        binary = ConfusionCounts(cells, positive=None, groups=counts.groups, dims=dims)
        plan = plan_interval(binary, "accuracy", options=options, strict=strict)
        return dataclasses.replace(plan, reported=metric)
    nested = counts.groups is not None
    cells = np.asarray(counts.matrix if metric in AVERAGED_METRICS else counts.counts, dtype=float)
    relevant = relevant_texts(cells, metric)
    relevant_n = int(relevant.sum())
    persons = int(np.count_nonzero(relevant)) if nested else None
    # One relevant text per person is a simple random sample of texts: nothing to adjust,
    # and the interval is the independent-text one.
    independent_texts = persons is None or bool(np.all(relevant <= 1))
    total = cells.sum(0) if nested else cells
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        estimate = float(
            metric_values(total if metric not in AVERAGED_METRICS else one_vs_rest(total), metric)
        )
    if np.isnan(estimate):
        raise UndefinedMetricError(
            f"`metric` {metric!r} is undefined for these labels: {undefined_reason(metric)}."
        )
    if persons is not None and persons < 2:
        raise ValueError(
            f"`groups` must give at least 2 persons with a relevant text for {metric}; "
            f"got {persons}."
        )
    if nested:
        # the one rule the harness scores: per data set, from the per-person counts
        successes = (
            proportion_counts(cells, metric)[0][None] if metric in PROPORTION_METRICS else None
        )
        [(found, _)] = policy.recommend_for_counts(
            metric, relevant[None], successes, strict=strict, **options
        )
        choice = cast(policy.IntervalChoice, found)  # two persons at least: checked above
    else:
        choice = policy.choose_interval(metric, strict=strict, **options)
    return IntervalPlan(
        metric, cells, choice, nested, relevant_n, persons, independent_texts, estimate
    )


def computed_interval(
    plan: IntervalPlan, *, confidence_level: float, rng: Any, bootstrap: BootstrapCI | None = None
) -> MetricCI:
    """Compute a plan's interval; a bootstrap plan may come with its interval drawn."""
    choice, cells, independent_texts = plan.choice, plan.cells, plan.independent_texts
    icc = design_effect = n_eff = np.nan
    if choice.method != "bootstrap":
        x, n = proportion_counts(cells, plan.metric)
        if not independent_texts and choice.design is not None:
            res: Any = clustered_proportion_ci(
                x,
                n,
                method=choice.method,
                design=choice.design,
                df_adjust=choice.df_adjust,
                confidence_level=confidence_level,
            )
            icc, design_effect, n_eff = res.icc, res.design_effect, res.n_eff
            label = choice.label
        else:
            res = proportion_ci(
                x.sum(), n.sum(), method=choice.method, confidence_level=confidence_level
            )
            label = choice.method
            independent_texts = True
    else:
        independent_texts = choice.scheme == "iid"
        # a bootstrap choice always sets its scheme, interval and resamples
        res = bootstrap or bootstrap_ci(
            cells,
            plan.metric,
            scheme=cast(str, choice.scheme),
            interval=cast(str, choice.interval),
            pseudo_count=choice.pseudo_count,
            n_resamples=cast(int | str, choice.n_resamples),
            confidence_level=confidence_level,
            rng=rng,
            nested=plan.nested,
        )
        label = choice.label
    return MetricCI(
        metric=plan.reported or plan.metric,
        estimate=plan.estimate,
        low=float(res.low),
        high=float(res.high),
        confidence_level=float(confidence_level),
        method=label,
        population=population_sentence(
            plan.metric,
            nested=not independent_texts,
            persons=plan.persons,
            detail=f"over {relevant_description(plan.metric)}",
        ),
        relevant_n=plan.relevant_n,
        persons=plan.persons,
        icc=float(icc),
        design_effect=float(design_effect),
        n_eff=float(n_eff),
        result=res,
    )


def interval_of_counts(
    counts: ConfusionCounts,
    metric: str,
    *,
    options: dict[str, Any],
    confidence_level: float,
    rng: Any,
    strict: bool,
) -> MetricCI:
    """Compute the interval of `metric` on validated counts (per person if nested).

    A metric undefined for the counts gives NaN ends and an
    :class:`~perfci.UndefinedMetricWarning` saying why, as :func:`perfci.compute_metric`.
    """
    try:
        plan = plan_interval(
            counts, metric, options={**options, "confidence_level": confidence_level}, strict=strict
        )
    except UndefinedMetricError:
        return _undefined_interval(counts, metric, confidence_level)
    return computed_interval(plan, confidence_level=confidence_level, rng=rng)


def _undefined_interval(counts: ConfusionCounts, metric: str, confidence_level: float) -> MetricCI:
    """Warn why `metric` is undefined for `counts` and return its NaN interval."""
    warnings.warn(
        f"{metric} is undefined: {undefined_reason(metric)}; its estimate and interval are NaN.",
        UndefinedMetricWarning,
        stacklevel=4,
    )
    cells = counts.matrix if metric in AVERAGED_METRICS else counts.counts
    relevant = relevant_texts(np.asarray(cells, dtype=float), metric)
    nested = counts.groups is not None
    nan = float("nan")
    return MetricCI(
        metric=metric,
        estimate=nan,
        low=nan,
        high=nan,
        confidence_level=float(confidence_level),
        method="undefined",
        population=population_sentence(
            metric, nested=nested, persons=None, detail=f"over {relevant_description(metric)}"
        ),
        relevant_n=int(relevant.sum()),
        persons=int(np.count_nonzero(relevant)) if nested else None,
        icc=nan,
        design_effect=nan,
        n_eff=nan,
        result=ProportionCI(
            estimate=nan,
            low=nan,
            high=nan,
            confidence_level=float(confidence_level),
            method="undefined",
            successes=nan,
            trials=nan,
            clipped=False,
        ),
    )


def shared_bootstraps(
    plans: dict[str, tuple[IntervalPlan, np.random.Generator]], confidence_level: float
) -> dict[str, BootstrapCI]:
    """Bootstrap intervals of a report's rows, one set of draws per way of resampling.

    The rows whose bootstrap resamples alike (scheme, pseudo count, resamples and cells)
    share the draws of the first such row's generator: the persons (and texts) are drawn
    once and every metric is read off the same resampled cells
    (:func:`perfci.bootstrap.shared_bootstrap_cis`).
    """
    groups: dict[tuple, list[str]] = {}
    for metric, (plan, _) in plans.items():
        if plan.draws is not None:
            groups.setdefault(plan.draws, []).append(metric)
    out: dict[str, BootstrapCI] = {}
    for (scheme, interval, pseudo_count, n_resamples, _), metrics in groups.items():
        if len(metrics) < 2:
            continue
        first, generator = plans[metrics[0]]
        try:
            out |= shared_bootstrap_cis(
                first.cells,
                metrics,
                scheme=scheme,
                interval=interval,
                pseudo_count=pseudo_count,
                n_resamples=n_resamples,
                confidence_level=confidence_level,
                rng=generator,
                nested=first.nested,
            )
        except ValueError:
            continue  # each row's own call says why
    return out


def check_level(confidence_level: Any) -> float:
    """`confidence_level` checked as one number in (0, 1)."""
    return float(check_confidence_level(confidence_level, scalar=True))


def metric_ci_iv(
    metric: Any, options: dict[str, Any], positive: Any, confidence_level: Any, rng: Any
) -> tuple[float, np.random.Generator]:
    """Check every option of :func:`metric_ci` before the labels are read."""
    registry.ANY_METRIC.check(metric)
    policy.check_options(**options)
    check_label("positive", positive)
    return check_level(confidence_level), check_rng(rng)


def check_counts_fit_metric(counts: ConfusionCounts, metric: str) -> None:
    """Refuse a binary metric on multi-class counts and an average on binary ones."""
    if metric in AVERAGED_METRICS and counts.matrix is None:
        raise ValueError(
            f"`metric` {metric!r} averages over classes; it needs multi-class labels "
            "(three or more classes, or `positive` left unset with `labels`)."
        )
    if metric not in AVERAGED_METRICS and counts.classes is not None:
        raise ValueError(
            f"`positive` must name the class for the binary metric {metric!r} on "
            f"multi-class labels {counts.classes.tolist()!r}."
        )


def metric_ci_counts(
    counts: Any,
    metric: str,
    *,
    nested: bool | None = None,
    method: str = RECOMMENDED,
    confidence_level: float = 0.95,
    design: str | None = RECOMMENDED,
    df_adjust: str | None = RECOMMENDED,
    scheme: str | None = RECOMMENDED,
    interval: str = RECOMMENDED,
    pseudo_count: int | str = RECOMMENDED,
    n_resamples: int | str = RECOMMENDED,
    rng: Any = None,
) -> MetricCI:
    """Confidence interval for one metric from confusion counts, by the recommended method.

    The counts-level core of :func:`perfci.metric_ci`: the same policy, the same checks and
    the same result, for counts already made (by :func:`perfci.confusion`, or by hand).

    Parameters
    ----------
    counts : ConfusionCounts or array_like
        A :class:`~perfci.ConfusionCounts` (binary or multi-class, per person with
        `groups`), or cells: ``[tp, fp, fn, tn]`` for a binary metric, the k x k matrix
        (rows: reference class, columns: classifier class) for ``macro_*``/``micro_*``;
        nested counts have one row of cells (one matrix) per person, persons on the axis
        before the cells.
    metric : str
        Any name in :data:`perfci.METRICS`.
    nested : bool, optional
        Whether array `counts` hold one row per person (texts nested in persons). Left
        unset, counts with an axis before the cells are nested. A
        :class:`~perfci.ConfusionCounts` says it itself.
    method, design, df_adjust, scheme, interval, pseudo_count, n_resamples, rng
        As in :func:`perfci.metric_ci`; each left at "recommended" follows
        :mod:`perfci.policy`.
    confidence_level : float, default 0.95
        Confidence level.

    Returns
    -------
    MetricCI
        Estimate, interval, method, the population the interval is about, relevant n,
        persons, ICC, design effect and n_eff.

    Raises
    ------
    ValueError
        For a bad name or option, counts that are not non-negative whole numbers of the
        metric's shape, or nested counts with fewer than 2 persons with a relevant text.

    Warns
    -----
    UndefinedMetricWarning
        For a metric undefined for the counts (recall without reference positives, kappa
        when chance agreement is 1, ...): the estimate and ends are NaN and `method` is
        ``"undefined"``.

    See Also
    --------
    perfci.metric_ci : the same from labels.

    Examples
    --------
    >>> import perfci as pc
    >>> ci = pc.metric_ci_counts([40, 6, 9, 345], "recall")
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] by {ci.method}")
    0.816 [0.684, 0.903] by agresti_coull
    >>> texts = pc.load_example()
    >>> counts = pc.confusion(texts["human"], texts["model"], groups=texts["person"])
    >>> ci = pc.metric_ci_counts(counts, "precision")
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    0.847 [0.778, 0.897]
    """
    options = {
        "method": method,
        "design": design,
        "df_adjust": df_adjust,
        "scheme": scheme,
        "interval": interval,
        "pseudo_count": pseudo_count,
    }
    level, generator = metric_ci_iv(metric, options, None, confidence_level, rng)
    if not isinstance(counts, ConfusionCounts):
        counts = _as_confusion_counts(counts, metric, nested)
    elif nested is not None and nested != (counts.groups is not None):
        said = "per person" if counts.groups is not None else "not per person"
        raise ValueError(f"`nested` is {nested!r}, but `counts` are {said}.")
    check_counts_fit_metric(counts, metric)
    return interval_of_counts(
        counts,
        metric,
        options={**options, "n_resamples": n_resamples},
        confidence_level=level,
        rng=generator,
        strict=True,
    )


def _as_confusion_counts(counts: Any, metric: str, nested: bool | None) -> ConfusionCounts:
    """Array cells as :class:`ConfusionCounts` (per person when nested)."""
    arr = check_counts_array("counts", counts)
    averaged = metric in AVERAGED_METRICS
    cell_ndim = 2 if averaged else 1
    if nested is None:
        nested = arr.ndim > cell_ndim
    want = cell_ndim + int(bool(nested))
    square = averaged and arr.ndim >= 2 and arr.shape[-1] == arr.shape[-2] >= 2
    if arr.ndim != want or not (square or (not averaged and arr.shape[-1] == 4)):
        what = "a k x k confusion matrix" if averaged else "the four cells [tp, fp, fn, tn]"
        persons = " per person (persons on the axis before the cells)" if nested else ""
        raise ValueError(
            f"`counts` for metric {metric!r} must hold {what}{persons}; got shape {arr.shape}."
        )
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise ValueError("`counts` must be non-negative whole numbers of texts.")
    groups = np.arange(arr.shape[0]) if nested else None
    if averaged:
        k = arr.shape[-1]
        return ConfusionCounts(
            counts=one_vs_rest(arr),
            classes=np.arange(k),
            groups=groups,
            matrix=arr,
        )
    return ConfusionCounts(counts=arr, groups=groups)
