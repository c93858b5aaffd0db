"""Sample-size planning: how many relevant texts (and persons) a target precision needs."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import xarray as xr

from ._core import registry
from ._core.deprecation import hide_parameters, positional_groups
from ._core.replicates import check_pseudo_count
from ._core.results import ResultMixin
from ._core.validation import (
    check_confidence_level,
    check_real_array,
    check_real_scalar,
)
from .analytic import proportion_ci
from .design import effective_sample_size
from .exact import exact_coverage, expected_half_width
from .metrics import compute_metric, proportion_counts, undefined_reason

__all__ = [
    "PilotEstimates",
    "PlanCoverageWarning",
    "SampleSizePlan",
    "half_width_curves",
    "pilot_estimates",
    "plan_sample_size",
    "plot_half_width_curves",
]

# Largest relevant n (or number of persons) the search considers.
_MAX_N = 1_000_000

#: The most binomial terms :func:`half_width_curves` enumerates for independent texts:
#: the sum of n + 1 over its sizes, times its metric values (about 10 s of work).
MAX_CURVE_TERMS = 10**10
#: How far below the level the exact coverage of a plan may fall before it warns: it
#: warns below ``min(level - COVERAGE_SLACK, 2 level - 1)``.
COVERAGE_SLACK = 0.05


class PlanCoverageWarning(UserWarning):
    """The planned interval meets the half-width but covers the planned value far too rarely.

    Issued by :func:`plan_sample_size` for independent texts when the exact coverage of the
    planned interval at the planned n and metric value is below
    ``min(level - 0.05, 2 level - 1)``: the half-width is met by intervals that miss (a
    pseudo count that pulls them towards 1/2, or intervals that are a single point).
    """


def _warn_low_coverage(method: str, n: int, p: float, level: float) -> None:
    """Warn with :class:`PlanCoverageWarning` when the plan's exact coverage is far too low."""
    floor = min(level - COVERAGE_SLACK, 2 * level - 1)
    coverage = float(exact_coverage(method, n, p, confidence_level=level))
    if coverage >= floor:
        return
    if method.startswith("pseudo_percentile_"):
        why = (
            f"its pseudo count {method.rsplit('_', 1)[1]} pulls every interval towards 1/2, "
            "away from the metric; plan with a smaller `pseudo_count`, or"
        )
    elif method == "percentile":
        why = "most of its intervals are a single point at so few texts; plan"
    else:
        why = "its intervals are too narrow at so few texts; plan"
    warnings.warn(
        f"the planned {100 * level:g}% {method} interval has the half-width asked for at {n} "
        f"relevant text{'s' if n != 1 else ''}, but covers a metric of {p:g} in only "
        f"{100 * coverage:.2f}% of samples (exact coverage {coverage:.4f}, below "
        f"{floor:.4g}): {why} with 'clopper_pearson', which never covers less than its "
        "level.",
        PlanCoverageWarning,
        stacklevel=3,
    )


@dataclass(frozen=True)
class SampleSizePlan(ResultMixin):
    """A sample-size plan.

    Attributes
    ----------
    relevant_n : int
        Relevant texts needed (for recall: reference positives; for precision:
        classifier positives).
    total_texts : int or None
        Texts to label, ``ceil(relevant_n / prevalence)``, when a prevalence was given.
    persons : int or None
        Persons needed (nested designs): ``ceil(relevant_n / texts_per_person)`` with
        `relevant_n` rounded up to whole persons.
    half_width : float
        The half-width achieved at `relevant_n` (expected half-width for independent
        texts; the half-width at the planned value for nested designs).
    metric_value, target_half_width, confidence_level : float
        The inputs.
    method : str
        The interval method planned for (``pseudo_percentile_<lambda>`` for the
        regularized bootstrap).
    design : str
        ``"independent"`` or ``"nested"``.
    """

    relevant_n: int
    total_texts: int | None
    persons: int | None
    half_width: float
    metric_value: float
    target_half_width: float
    confidence_level: float
    method: str
    design: str


def _check_pseudo_count(pseudo_count: Any) -> int:
    """Return `pseudo_count`: an integer, within the bootstrap's own limits."""
    if isinstance(pseudo_count, bool | np.bool_) or not isinstance(pseudo_count, int | np.integer):
        raise ValueError(f"`pseudo_count` must be a non-negative integer; got {pseudo_count!r}.")
    return check_pseudo_count(pseudo_count)  # at most MAX_PSEUDO_COUNT, as bootstrap_ci's


def _method_name(method: str, pseudo_count: int) -> str:
    if method == "percentile":
        return f"pseudo_percentile_{pseudo_count}" if pseudo_count else "percentile"
    if pseudo_count:
        raise ValueError("`pseudo_count` applies to method='percentile' only.")
    return method


def _first_n_below(method: str, p: float, target: float, level: float) -> tuple[int, float]:
    """Smallest n whose expected half-width is at most `target` from n on (checked ahead)."""

    def hw(n: np.ndarray) -> np.ndarray:
        return np.asarray(expected_half_width(method, n, p, confidence_level=level))

    hi = 1
    while hw(np.array([hi]))[0] > target:
        hi *= 2
        if hi > _MAX_N:
            raise ValueError(
                f"`half_width` {target} needs more than {_MAX_N} relevant texts; is it too small?"
            )
    lo = max(1, hi // 2)
    # Bisection on a nearly monotone function, then an exact look at the neighbourhood:
    # discrete methods oscillate, so the answer is the first n after which every n
    # checked (60 ahead) stays within the target.
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if hw(np.array([mid]))[0] <= target:
            hi = mid
        else:
            lo = mid
    start = max(1, hi - 60)
    while True:  # the first n after the last one above the target, in windows of 121
        window = np.arange(start, start + 121)
        values = hw(window)
        above = np.flatnonzero(values > target)
        first = 0 if above.size == 0 else above[-1] + 1
        if first < window.size:
            return int(window[first]), float(values[first])
        start = int(window[-1]) + 1  # still oscillating above the target: look further on


def _check_not_degenerate(method: str, n: int, p: float, level: float) -> None:
    """Refuse a plan whose half-width is small only because intervals have zero width.

    The Wald interval is the single point [x/n, x/n] when x = 0 or x = n, so near p = 0
    or 1 its expected half-width falls under any target at a tiny n (one text at
    p = 0.95 "plans" a half-width of 0). When those zero-width intervals alone happen
    more often than the interval may miss on one side, (1 - c)/2, the plan says nothing
    about the uncertainty and is refused.
    """
    if method != "wald":
        return
    degenerate = p**n + (1 - p) ** n
    if degenerate > (1 - level) / 2:
        raise ValueError(
            f"`method` 'wald' cannot plan at a metric value of {p:g}: with {n} relevant "
            f"text{'s' if n != 1 else ''} its interval has zero width in "
            f"{100 * degenerate:.0f}% of samples (all texts successes, or none), so its "
            "expected half-width understates the uncertainty; plan with 'wilson', "
            "'agresti_coull' or 'clopper_pearson'."
        )


def _planned_design_effect(icc: Any, b: Any, cv: float) -> Any:
    """Kish's design effect for mean cluster size B and size CV: 1 + icc ((1 + cv^2) B - 1).

    With cv = 0 this is the paper's 1 + icc (B - 1), computed the same way.
    """
    return 1 + icc * ((1 + cv * cv) * b - 1)


def _check_cluster_size_cv(cluster_size_cv: Any, nested: bool) -> float:
    cv = check_real_scalar("cluster_size_cv", cluster_size_cv)
    if cv < 0:
        raise ValueError(
            f"`cluster_size_cv` must be a non-negative number (0 for equal numbers of texts "
            f"per person); got {cluster_size_cv!r}."
        )
    if cv and not nested:
        raise ValueError(
            "`cluster_size_cv` applies to nested designs: give `icc` and `texts_per_person` "
            "too, or leave it at 0."
        )
    return cv


def _check_df_adjust(df_adjust: Any, nested: bool) -> None:
    """Refuse a df adjustment other than the default's for independent texts: it is unused."""
    if not nested and df_adjust not in (None, "dean_pagano"):
        raise ValueError(
            f"`df_adjust` {df_adjust!r} adjusts a nested plan's degrees of freedom: it needs "
            "`icc` and `texts_per_person`."
        )


def _nested_plan(p, target, level, method, icc, b, df_adjust, cv):
    persons = np.arange(2, 2 + 4096)
    deff = _planned_design_effect(icc, b, cv)
    while True:
        n_texts = persons * b
        n_star = effective_sample_size(
            n_texts,
            design_effect=deff,
            n_clusters=persons,
            df_adjust=df_adjust,
            confidence_level=level,
        )
        hw = np.asarray(
            proportion_ci(p * n_star, n_star, method=method, confidence_level=level).half_width
        )
        ok = np.flatnonzero(hw <= target)
        if ok.size:
            i = ok[0]
            return int(persons[i]), int(math.ceil(n_texts[i])), float(hw[i])
        if persons[-1] > _MAX_N:
            raise ValueError(f"`half_width` {target} needs more than {_MAX_N} persons.")
        persons = persons + persons.size


def _plan_iv(
    metric_value: Any,
    half_width: Any,
    confidence_level: Any,
    method: Any,
    pseudo_count: Any,
    prevalence: Any,
    icc: Any,
    texts_per_person: Any,
    df_adjust: Any,
    cluster_size_cv: Any,
) -> tuple[float, float, float, int, float | None, float | None, float | None, float]:
    """Check every argument of :func:`plan_sample_size`: one number each, in range."""
    p = check_real_scalar("metric_value", metric_value)
    target = check_real_scalar("half_width", half_width)
    level = float(check_confidence_level(confidence_level, scalar=True))
    registry.PLAN_METHOD.check(method)
    if not 0 < p < 1:
        raise ValueError(f"`metric_value` must lie strictly between 0 and 1; got {metric_value}.")
    if not 0 < target < 0.5:
        raise ValueError(f"`half_width` must lie strictly between 0 and 0.5; got {half_width}.")
    lam = _check_pseudo_count(pseudo_count)
    registry.DF_ADJUST.check(df_adjust)
    share = None if prevalence is None else check_real_scalar("prevalence", prevalence)
    if share is not None and not 0 < share <= 1:
        raise ValueError(f"`prevalence` must lie in (0, 1]; got {prevalence}.")
    if (icc is None) != (texts_per_person is None):
        raise ValueError("a nested plan needs both `icc` and `texts_per_person`.")
    rho = b = None
    if icc is not None:
        if method not in registry.ANALYTIC_METHOD:
            raise ValueError(
                f"a nested plan needs an analytic `method`, one of "
                f"{sorted(registry.ANALYTIC_METHOD)}; got {method!r}."
            )
        rho = check_real_scalar("icc", icc)
        b = check_real_scalar("texts_per_person", texts_per_person)
        if not 0 <= rho <= 1:
            raise ValueError(f"`icc` must lie in [0, 1]; got {icc}.")
        if b < 1:
            raise ValueError(f"`texts_per_person` must be at least 1; got {texts_per_person}.")
    cv = _check_cluster_size_cv(cluster_size_cv, icc is not None)
    _check_df_adjust(df_adjust, icc is not None)
    return p, target, level, lam, share, rho, b, cv


def plan_sample_size(
    metric_value: float,
    half_width: float,
    *,
    confidence_level: float = 0.95,
    method: str = "agresti_coull",
    pseudo_count: int = 0,
    prevalence: float | None = None,
    icc: float | None = None,
    texts_per_person: float | None = None,
    df_adjust: str | None = "dean_pagano",
    cluster_size_cv: float = 0.0,
) -> SampleSizePlan:
    r"""Relevant texts (and persons) needed for a target interval half-width.

    Parameters
    ----------
    metric_value : float
        The metric value expected (e.g. a recall of 0.9), in (0, 1).
    half_width : float
        The largest acceptable half-width, in (0, 0.5).
    confidence_level : float, default 0.95
        Confidence level of the planned interval.
    method : str, default "agresti_coull"
        An analytic method, or ``"percentile"`` for the iid percentile bootstrap
        (regularized with `pseudo_count`, the paper's Table 3 uses 1).
    pseudo_count : int, default 0
        λ of the pseudo-count regularized bootstrap (method ``"percentile"`` only).
    prevalence : float, optional
        Share of labelled texts that are relevant for the metric (for recall: the
        share the reference codes positive). Gives ``total_texts``.
    icc : float, optional
        Intra-class correlation of the metric's outcomes within persons. With
        `texts_per_person`, plans a nested design.
    texts_per_person : float, optional
        Mean relevant texts per person B (nested designs).
    df_adjust : {"dean_pagano", "korn_graubard", None}, default "dean_pagano"
        Degrees-of-freedom adjustment for nested designs.
    cluster_size_cv : float, default 0
        Coefficient of variation of the relevant texts per person (standard deviation over
        persons, divisor m, over the mean B), for nested designs: 0 when every person
        contributes the same number. Unequal numbers raise the design effect (see the
        notes).

    Returns
    -------
    SampleSizePlan
        ``relevant_n``, ``total_texts`` (with a prevalence) and ``persons`` (nested).

    Raises
    ------
    ValueError
        For bad input (a `pseudo_count` above 10^6, as :func:`bootstrap_ci` refuses), and
        for a Wald plan near p = 0 or 1 whose half-width is small only because the
        planned samples often give zero-width intervals.

    Warns
    -----
    PlanCoverageWarning
        For independent texts, when the exact coverage of the planned interval at the
        planned n and metric value (:func:`exact_coverage`) is below
        ``min(confidence_level - 0.05, 2 * confidence_level - 1)``: it meets the
        half-width with intervals that miss (a large `pseudo_count` pulls them towards
        1/2). The plan is still returned.

    Notes
    -----
    *Independent texts*: the smallest relevant n whose **exact expected** half-width
    :math:`E[(\mathrm{high} - \mathrm{low})/2]`, by binomial enumeration at the planned
    value (see :func:`expected_half_width`), is at most the target, and stays so for
    the next 60 values of n (discrete methods oscillate). No normal approximation. A
    Wald plan whose intervals have zero width (x = 0 or x = n) more often than
    :math:`(1 - c)/2` is refused: its small expected half-width would be an artefact.
    The planned interval's exact coverage at that n is then checked (one enumeration):
    below :math:`\min(c - 0.05, 2c - 1)`, 5 points and twice the misses the level
    allows, the plan warns (:class:`PlanCoverageWarning`). Nested plans are not checked.

    *Nested texts*: the smallest number of persons m for which the interval of the
    method at the planned value, on :math:`n^*_{eff}` computed from
    :math:`N = mB` texts, the ICC and m persons as in :func:`effective_sample_size`,
    has a half-width at most the target (the paper's figure 7 computation). The design
    effect is

    .. math::

        \mathrm{DEFF} = 1 + \rho\left((1 + \mathrm{CV}^2) B - 1\right),

    with CV the `cluster_size_cv`: :math:`(1 + \mathrm{CV}^2) B = \sum n_i^2 / N` is the
    size-weighted cluster size of ``design="icc_weighted"`` (see
    :func:`clustered_proportion_ci`), and CV = 0 gives the paper's
    :math:`1 + \rho(B - 1)` [1]_.

    References
    ----------
    .. [1] Eldridge, S. M., Ashby, D. and Kerry, S. (2006). Sample size for cluster
       randomized trials: effect of coefficient of variation of cluster size and
       analysis method. International Journal of Epidemiology 35(5), 1292-1300.

    Examples
    --------
    The paper's Table 3: a 90% regularized bootstrap interval no wider than 0.05 on
    either side at a recall of 0.90, with a quarter of the texts positive:

    >>> import perfci as pc
    >>> plan = pc.plan_sample_size(0.9, 0.05, confidence_level=0.9, method="percentile",
    ...                            pseudo_count=1, prevalence=0.25)
    >>> plan.relevant_n, plan.total_texts
    (98, 392)

    A nested design, 10 relevant texts per person and an ICC of 0.1:

    >>> plan = pc.plan_sample_size(0.9, 0.05, icc=0.1, texts_per_person=10)
    >>> plan.persons, plan.relevant_n
    (31, 310)

    The same when the numbers of texts per person vary with a coefficient of variation
    of 0.8 (design effect 1 + 0.1 (1.64 * 10 - 1) = 2.54 instead of 1.9):

    >>> plan = pc.plan_sample_size(0.9, 0.05, icc=0.1, texts_per_person=10,
    ...                            cluster_size_cv=0.8)
    >>> plan.persons, plan.relevant_n
    (40, 400)
    """
    p, target, level, pseudo_count, prevalence, icc, texts_per_person, cv = _plan_iv(
        metric_value,
        half_width,
        confidence_level,
        method,
        pseudo_count,
        prevalence,
        icc,
        texts_per_person,
        df_adjust,
        cluster_size_cv,
    )
    name = _method_name(method, pseudo_count)

    if icc is None or texts_per_person is None:  # both or neither, checked above
        n, achieved = _first_n_below(name, p, target, level)
        _check_not_degenerate(name, n, p, level)
        _warn_low_coverage(name, n, p, level)
        persons, design = None, "independent"
    else:
        persons, n, achieved = _nested_plan(
            p, target, level, method, icc, texts_per_person, df_adjust, cv
        )
        design = "nested"
    total = None if prevalence is None else int(math.ceil(n / prevalence - 1e-9))
    return SampleSizePlan(n, total, persons, achieved, p, target, level, name, design)


@dataclass(frozen=True)
class PilotEstimates(ResultMixin):
    """What a pilot labelled set says about the quantities a sample-size plan needs.

    Attributes
    ----------
    metric : str
        The proportion metric planned for (``recall``, ``precision``, ...).
    metric_value : float
        The pilot's estimate of the metric, successes / relevant texts (for nested texts
        the pooled ratio over all texts); NaN without relevant texts.
    successes, relevant_n, n_texts : int
        The metric's successes and relevant texts, and all texts of the pilot.
    prevalence : float
        The share of the pilot's texts that are relevant, ``relevant_n / n_texts``.
    persons : int or None
        Persons with at least one relevant text (None without `groups`).
    icc : float or None
        One-way ANOVA ICC of the metric's outcomes within persons (:func:`icc`); NaN
        where it is not estimable, None without `groups`.
    texts_per_person : float or None
        Mean relevant texts per person with a relevant text, B = relevant_n / persons.
    cluster_size_cv : float or None
        Coefficient of variation of the relevant texts per person (standard deviation,
        divisor m, over B), as :func:`plan_sample_size` takes it.
    """

    metric: str
    metric_value: float
    successes: int
    relevant_n: int
    n_texts: int
    prevalence: float
    persons: int | None
    icc: float | None
    texts_per_person: float | None
    cluster_size_cv: float | None

    def plan(self, half_width: float, **options: Any) -> SampleSizePlan:
        """Plan the sample size for `half_width` from these estimates.

        Parameters
        ----------
        half_width : float
            The largest acceptable half-width, as in :func:`plan_sample_size`.
        **options
            Other arguments of :func:`plan_sample_size` (``confidence_level``,
            ``method``, ``pseudo_count``, ``df_adjust``). ``metric_value``,
            ``prevalence``, ``icc``, ``texts_per_person`` and ``cluster_size_cv`` default
            to the pilot's estimates; a value given here (not None) replaces the pilot's.

        Returns
        -------
        SampleSizePlan
            A nested plan when the pilot had persons (or `icc` is given), else a plan
            for independent texts.

        Raises
        ------
        ValueError
            When an estimate the plan needs is undefined and not given: a metric value
            of 0 or 1 (no interval width to plan at; give ``metric_value``), no relevant
            texts (give ``metric_value`` and ``prevalence``), or an ICC that is not
            estimable (give ``icc``).

        Examples
        --------
        >>> import perfci as pc
        >>> texts = pc.load_example()
        >>> pilot = pc.pilot_estimates(texts["human"], texts["model"], "recall")
        >>> pilot.plan(0.05).relevant_n
        166
        >>> pilot.plan(0.05, metric_value=0.8).relevant_n  # plan at a more cautious value
        245
        """
        given = {k: options.pop(k, None) for k in _PILOT_FIELDS}
        value = self.metric_value if given["metric_value"] is None else given["metric_value"]
        if self.relevant_n == 0 and (given["metric_value"] is None or given["prevalence"] is None):
            raise ValueError(
                f"the pilot has no relevant texts for {self.metric}: "
                f"{undefined_reason(self.metric)}; it says nothing about the metric's value "
                "or how many texts are relevant: give `metric_value` and `prevalence`."
            )
        if given["metric_value"] is None and value in (0.0, 1.0):
            raise ValueError(
                f"the pilot's {self.metric} is {value:g} ({self.successes} of "
                f"{self.relevant_n} relevant texts), where an interval has no width to plan "
                "at; give `metric_value`, the value to plan for (e.g. the low end of the "
                "pilot's interval)."
            )
        nested = self.persons is not None or given["icc"] is not None
        values: dict[str, Any] = {"prevalence": self.prevalence}
        if nested:
            rho = self.icc if given["icc"] is None else given["icc"]
            if rho is None or rho != rho:  # NaN: not estimable from the pilot
                raise ValueError(
                    "the pilot's ICC is not estimable (it needs at least two persons with a "
                    "relevant text and, when outcomes vary, one with two or more); give `icc`."
                )
            values.update(
                icc=rho,
                texts_per_person=self.texts_per_person,
                cluster_size_cv=self.cluster_size_cv or 0.0,
            )
        values.update({k: v for k, v in given.items() if v is not None and k != "metric_value"})
        return plan_sample_size(value, half_width, **values, **options)


#: Arguments of :func:`plan_sample_size` that :meth:`PilotEstimates.plan` takes from the pilot.
_PILOT_FIELDS = ("metric_value", "prevalence", "icc", "texts_per_person", "cluster_size_cv")


def pilot_estimates(
    y_true: Any,
    y_pred: Any,
    metric: str,
    *former_groups: Any,
    groups: Any = None,
    positive: Any = None,
) -> PilotEstimates:
    r"""Estimate from a pilot labelled set what :func:`plan_sample_size` needs.

    Parameters
    ----------
    y_true, y_pred : array_like
        Reference and classifier labels of the pilot's texts, read as by
        :func:`confusion`.
    metric : str
        A proportion metric (:data:`PROPORTION_METRICS`): the plan is for its relevant
        texts.
    groups : array_like, optional
        Person ids, one per text: adds the ICC, the relevant texts per person and their
        coefficient of variation.
    positive : object, optional
        The positive label, as in :func:`confusion`; needed for labels that are not a
        binary code.

    Returns
    -------
    PilotEstimates
        The estimates; :meth:`PilotEstimates.plan` plans from them.

    Warns
    -----
    UndefinedMetricWarning
        When the metric has no relevant texts (its value is NaN), or the ICC is not
        estimable (fewer than two persons with a relevant text, or every person with
        one while outcomes vary; NaN).

    Raises
    ------
    ValueError
        For labels that :func:`confusion` refuses, labels of three or more classes (a
        plan is for a binary metric: name `positive`), or a `metric` that is not a
        proportion.

    Notes
    -----
    With per-person successes :math:`y_i` and relevant texts :math:`n_i` over the m
    persons with :math:`n_i > 0`: the metric is :math:`\sum y_i / \sum n_i`, the ICC the
    one-way ANOVA estimate of :func:`icc`, :math:`B = \sum n_i / m` and
    :math:`\mathrm{CV} = \mathrm{sd}(n_i) / B` (divisor m), which is what the design
    effect :math:`1 + \rho((1 + \mathrm{CV}^2) B - 1)` of :func:`plan_sample_size` takes.
    Persons without a relevant text do not count, as in :func:`clustered_proportion_ci`.
    A pilot is small, so its estimates are uncertain: plan also at a more cautious
    metric value or ICC (``plan(..., metric_value=...)``) to see how much that matters.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> pilot = pc.pilot_estimates(texts["human"], texts["model"], "recall", groups=texts["person"])
    >>> round(pilot.metric_value, 4), pilot.relevant_n, pilot.persons
    (0.8805, 251, 39)
    >>> round(pilot.icc, 3), round(pilot.texts_per_person, 2), round(pilot.cluster_size_cv, 2)
    (0.059, 6.44, 0.62)
    >>> plan = pilot.plan(0.05)
    >>> plan.relevant_n, plan.persons, plan.total_texts
    (264, 41, 1125)
    """
    groups = positional_groups(former_groups, groups, "pilot_estimates")
    from .counting import confusion
    from .design import icc as icc_

    registry.PROPORTION_METRIC.check(metric)
    counts = confusion(y_true, y_pred, positive=positive, groups=groups)
    if counts.classes is not None:
        raise ValueError(
            f"a plan is for one binary metric, but the labels have {len(counts.classes)} "
            f"classes ({', '.join(map(str, counts.classes[:6]))}); give `positive`, the "
            "label the metric is about."
        )
    y, n = proportion_counts(counts.counts, metric)
    n_texts = counts.n_texts
    relevant = int(n.sum())
    successes = int(y.sum())
    value = float(compute_metric(counts.counts.reshape(-1, 4).sum(0), metric))
    persons = rho = b = cv = None
    if groups is not None:
        sizes = n[n > 0]
        persons = int(sizes.size)
        rho = float(icc_(y, n))
        b = float(sizes.mean()) if persons else float("nan")
        cv = float(sizes.std() / b) if persons else float("nan")
    return PilotEstimates(
        metric, value, successes, relevant, n_texts, relevant / n_texts, persons, rho, b, cv
    )


hide_parameters(pilot_estimates, positional=True)


def _half_width_curves_iv(
    n: Any,
    metric_value: Any,
    confidence_level: Any,
    method: Any,
    pseudo_count: Any,
    icc: Any,
    texts_per_person: Any,
    df_adjust: Any,
    cluster_size_cv: Any,
) -> tuple[np.ndarray, np.ndarray, float, str, np.ndarray | None, np.ndarray | None, float]:
    """Check every argument of :func:`half_width_curves`; flat arrays of the curves' axes."""
    n_arr = check_real_array("n", n).ravel()
    if np.any(n_arr < 1) or np.any(n_arr != np.round(n_arr)):
        raise ValueError(f"`n` must be positive integers (relevant texts); got {n!r}.")
    p_arr = check_real_array("metric_value", metric_value).ravel()
    if np.any((p_arr < 0) | (p_arr > 1)):
        raise ValueError(f"`metric_value` must lie in [0, 1]; got {metric_value!r}.")
    level = float(check_confidence_level(confidence_level, scalar=True))
    registry.PLAN_METHOD.check(method)
    name = _method_name(method, _check_pseudo_count(pseudo_count))
    registry.DF_ADJUST.check(df_adjust)
    if (icc is None) != (texts_per_person is None):
        raise ValueError("nested curves need both `icc` and `texts_per_person`.")
    cv = _check_cluster_size_cv(cluster_size_cv, icc is not None)
    _check_df_adjust(df_adjust, icc is not None)
    if icc is None:
        terms = (float(n_arr.sum()) + n_arr.size) * p_arr.size
        if terms > MAX_CURVE_TERMS:
            raise ValueError(
                f"`n` asks for {terms:.3g} binomial terms to enumerate (the sum of n + 1 over "
                f"the sizes, times the metric values), more than {MAX_CURVE_TERMS:.0e}; ask "
                "for fewer or smaller sizes (e.g. every 10th n)."
            )
        return n_arr.astype(np.int64), p_arr, level, name, None, None, cv
    registry.ANALYTIC_METHOD.check(method)
    rho = check_real_array("icc", icc).ravel()
    b = check_real_array("texts_per_person", texts_per_person).ravel()
    if np.any((rho < 0) | (rho > 1)):
        raise ValueError(f"`icc` must lie in [0, 1]; got {icc!r}.")
    if np.any(b < 1):
        raise ValueError(f"`texts_per_person` must be at least 1; got {texts_per_person!r}.")
    return n_arr.astype(np.int64), p_arr, level, name, rho, b, cv


def half_width_curves(
    n: Any,
    metric_value: Any,
    *,
    confidence_level: float = 0.95,
    method: str = "agresti_coull",
    pseudo_count: int = 0,
    icc: Any = None,
    texts_per_person: Any = None,
    df_adjust: str | None = "dean_pagano",
    cluster_size_cv: float = 0.0,
) -> xr.DataArray:
    r"""Half-width against the relevant n: the paper's figure 3 (independent) and 7 (nested).

    Parameters
    ----------
    n : array_like of int
        Relevant texts.
    metric_value : array_like
        Metric values (one curve each).
    confidence_level : float, default 0.95
        Confidence level.
    method : str, default "agresti_coull"
        As in :func:`plan_sample_size`.
    pseudo_count : int, default 0
        For ``method="percentile"``.
    icc, texts_per_person : array_like, optional
        For nested curves (figure 7): one curve per combination.
    df_adjust : {"dean_pagano", "korn_graubard", None}, default "dean_pagano"
        Degrees-of-freedom adjustment for nested curves.
    cluster_size_cv : float, default 0
        One coefficient of variation of the relevant texts per person for every nested
        curve, as in :func:`plan_sample_size`: the design effect is
        :math:`1 + \rho((1 + \mathrm{CV}^2) B - 1)`. Kept in the result's attributes.

    Returns
    -------
    xarray.DataArray
        Dims ``(n, metric_value)`` for independent texts: exact expected half-widths;
        ``(n, metric_value, icc, texts_per_person)`` for nested designs: half-widths at
        the metric value on the df-adjusted effective sample size (NaN where
        ``n / texts_per_person`` is below 2 persons).

    Examples
    --------
    >>> import perfci as pc
    >>> curves = pc.half_width_curves([100, 400], [0.8, 0.9])
    >>> round(curves.sel(n=400, metric_value=0.9).item(), 4)
    0.0297
    """
    n_arr, p_arr, level, name, rho, b, cv = _half_width_curves_iv(
        n,
        metric_value,
        confidence_level,
        method,
        pseudo_count,
        icc,
        texts_per_person,
        df_adjust,
        cluster_size_cv,
    )
    confidence_level = level
    if icc is None:
        values = expected_half_width(
            name, n_arr[:, None], p_arr[None, :], confidence_level=confidence_level
        )
        return xr.DataArray(
            values,
            dims=("n", "metric_value"),
            coords={"n": n_arr, "metric_value": p_arr},
            name="expected_half_width",
            attrs={"method": name, "confidence_level": confidence_level},
        )
    # nested curves: `icc` and `texts_per_person` both given (checked)
    nn, pp, rr, bb = np.meshgrid(
        n_arr, p_arr, cast(np.ndarray, rho), cast(np.ndarray, b), indexing="ij"
    )
    persons = nn / bb
    ok = persons >= 2
    values = np.full(nn.shape, np.nan)
    n_star = effective_sample_size(
        nn[ok],
        design_effect=_planned_design_effect(rr[ok], bb[ok], cv),
        n_clusters=persons[ok],
        df_adjust=df_adjust,
        confidence_level=confidence_level,
    )
    values[ok] = proportion_ci(
        pp[ok] * n_star, n_star, method=method, confidence_level=confidence_level
    ).half_width
    return xr.DataArray(
        values,
        dims=("n", "metric_value", "icc", "texts_per_person"),
        coords={"n": n_arr, "metric_value": p_arr, "icc": rho, "texts_per_person": b},
        name="half_width",
        attrs={
            "method": method,
            "confidence_level": confidence_level,
            "df_adjust": str(df_adjust),
            "cluster_size_cv": cv,
        },
    )


def _crossings(n: np.ndarray, values: np.ndarray, target: float) -> np.ndarray:
    """First n of each curve (rows of `values`) from which every n shown meets `target`.

    The rule of :func:`plan_sample_size` (oscillating curves count from their last n above
    the target), applied to the n of the curves; NaN where a curve's last n is above the
    target or undefined (no crossing in the range drawn).
    """
    above = ~(values <= target)  # NaN (too few persons) does not meet the target
    last_above = n.size - 1 - np.argmax(above[:, ::-1], axis=1)
    first_ok = np.where(above.any(axis=1), last_above + 1, 0)
    return np.where(first_ok < n.size, n[np.minimum(first_ok, n.size - 1)], np.nan)


def plot_half_width_curves(curves: xr.DataArray, ax: Any = None, *, target: Any = None) -> Any:
    """Plot curves of :func:`half_width_curves`, one line per curve, on matplotlib axes.

    Parameters
    ----------
    curves : xarray.DataArray
        The output of :func:`half_width_curves`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new 4.5 x 3 in figure's axes by default.
    target : float, optional
        A target half-width: drawn as a horizontal line, and each curve's crossing (the
        first n from which every n drawn stays at or below the target, the rule of
        :func:`plan_sample_size`) marked and given in the legend as ``n = ...``
        (``n > max`` when the curve does not reach the target in the range drawn).

    Returns
    -------
    matplotlib.axes.Axes
        The axes: one line per curve (and, with `target`, the target line and one marker
        per crossing).

    Raises
    ------
    ValueError
        If `target` is not a positive number.

    Notes
    -----
    The legend's title names the dims that tell the curves apart and its entries their
    values, in two columns beyond six curves; dims with one value are stated in the
    title only.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import perfci as pc
    >>> curves = pc.half_width_curves(range(10, 251), [0.8, 0.9])
    >>> ax = pc.plot_half_width_curves(curves, target=0.08)
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['0.8: n = 95', '0.9: n = 60']
    >>> pc.plan_sample_size(0.9, 0.08).relevant_n
    60
    >>> plt.close(ax.figure)
    """
    import matplotlib.pyplot as plt

    from .plotting import style

    if target is not None:
        target = check_real_scalar("target", target)
        if not target > 0:
            raise ValueError(f"`target` must be a positive half-width; got {target!r}.")
    others = [str(d) for d in curves.dims if d != "n"]
    varying = [d for d in others if curves.sizes[d] > 1]
    fixed = [d for d in others if curves.sizes[d] == 1]
    stacked = curves.stack(curve=others) if others else curves.expand_dims(curve=[0])
    order = np.argsort(curves["n"].values, kind="stable")  # crossings read n ascending
    n = np.asarray(curves["n"].values)[order]
    values = np.asarray(stacked.transpose("curve", "n").values, dtype=float)[:, order]
    crossing = _crossings(n, values, target) if target is not None else None
    with style():
        if ax is None:
            _, ax = plt.subplots(figsize=(4.5, 3.0))
        for i in range(stacked.sizes["curve"]):
            line = stacked.isel(curve=i)
            label = ", ".join(f"{line[d].item():g}" for d in varying) or "half-width"
            (drawn,) = ax.plot(n, values[i], lw=1.0)
            if crossing is not None:
                if np.isnan(crossing[i]):
                    label += f": n > {n.max():g}"
                else:
                    label += f": n = {crossing[i]:g}"
                    at = int(np.searchsorted(n, crossing[i]))
                    ax.plot(crossing[i], values[i, at], "o", color=drawn.get_color(), ms=3.5)
            drawn.set_label(label)
        if target is not None:
            ax.axhline(target, color="0.3", lw=0.8, ls="--", zorder=1)
            ax.annotate(
                f"target {target:g}",
                (1.0, target),
                xycoords=("axes fraction", "data"),
                xytext=(-2, 2),
                textcoords="offset points",
                ha="right",
                va="bottom",
                fontsize=7,
                color="0.3",
            )
        ax.set_xlabel("relevant n (texts used to estimate the metric)")
        ax.set_ylabel("half-width")
        title = ", ".join(varying)
        # dims of one value (not coordinates left by a selection: the caller chose them)
        fixed_text = ", ".join(f"{d} = {curves[d].item():g}" for d in fixed)
        if fixed_text:
            title = f"{title} ({fixed_text})" if title else fixed_text
        ax.legend(title=title or None, ncol=2 if stacked.sizes["curve"] > 6 else 1)
    return ax
