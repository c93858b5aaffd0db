"""Everyday use: one metric with the recommended interval, and a report of every metric.

What "recommended" means (which method for which metric and design, and the
:data:`HIERARCHICAL_MIN_TEXTS` threshold between the nested bootstraps) is decided in
:mod:`perfci.policy`; this module turns labels into counts, asks the policy, and computes.
It is the only one that dispatches on the shape of its input: a column per run (repeated
runs, :mod:`perfci.runs`) or per annotator (:mod:`perfci.annotators`), a score
(``"roc_auc"``, :mod:`perfci.auc`), or one classifier's labels against one reference
(:func:`perfci.metric_ci_counts`). The rows of :func:`report` are made in
:mod:`perfci.report_rows` (and, Bayesian, :mod:`perfci.bayes_rows`); what a row holds and
says, with the thresholds of its notes, is in :mod:`perfci.report_table`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Set
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import policy
from ._core import registry
from ._core.deprecation import hide_parameters, positional_groups
from ._core.estimands import relevant_texts
from ._core.labels import check_aligned, has_columns
from ._core.report_options import refuse_ignored_report_options
from ._core.resampling import check_resample_count
from ._core.validation import (
    UNSET,
    UndefinedMetricWarning,
    check_label,
    check_positive_int,
    check_rng,
)
from .auc import auc_ci_named
from .counting import confusion, normalize_labels
from .metric import (
    MetricCI,
    check_counts_fit_metric,
    check_level,
    interval_of_counts,
    metric_ci_iv,
    metric_ci_of_auc,
)
from .metrics import BINARY_METRICS
from .policy import HIERARCHICAL_MIN_TEXTS, RECOMMENDED
from .report_rows import (
    assembled_table,
    auc_rows,
    difference_rows,
    report_inputs,
    subset_rows,
)
from .report_table import (
    COLUMNS,
    FEW_PERSONS,
    FEW_RELEVANT_TEXTS,
    SOME_PERSONS,
    WIDE_HALF_WIDTH,
    interval_row,
    say_left_out,
)
from .weighted_tables import design_given, refuse_unset, weighted_metric_ci, weighted_report

if TYPE_CHECKING:
    from .annotators import AnnotatorsCI
    from .runs import RunsCI

__all__ = [
    "FEW_PERSONS",  # the thresholds of the report's notes: from perfci.report_table
    "FEW_RELEVANT_TEXTS",
    "HIERARCHICAL_MIN_TEXTS",
    "SOME_PERSONS",
    "WIDE_HALF_WIDTH",
    "MetricCI",  # from perfci.metric
    "metric_ci",
    "report",
]


def _report_iv(
    design: Any,
    df_adjust: Any,
    positive: Any,
    metrics: Any,
    confidence_level: Any,
    n_resamples: Any,
    rng: Any,
    bayes: Any,
    bayes_sampler: Any,
    has_score: bool,
    bayes_prior_sensitivity: Any = False,
    *,
    differences: Any = False,
    has_by: bool = False,
    reference: Any = None,
) -> tuple[dict[str, Any], list[str] | None, np.random.Generator]:
    """Check every option of :func:`report` before the labels are read.

    Return the options of the rows (the method options, the level and the Bayesian
    options), the metrics and the generator.
    """
    policy.check_options(design=design, df_adjust=df_adjust)
    check_label("positive", positive)
    level = check_level(confidence_level)
    if not isinstance(bayes, bool | np.bool_):
        raise ValueError(f"`bayes` must be True or False; got {bayes!r}.")
    if bayes:
        registry.SAMPLER.check(bayes_sampler, "bayes_sampler")
    if not isinstance(bayes_prior_sensitivity, bool | np.bool_):
        raise ValueError(
            f"`bayes_prior_sensitivity` must be True or False; got {bayes_prior_sensitivity!r}."
        )
    if bayes_prior_sensitivity and not bayes:
        raise ValueError(
            "`bayes_prior_sensitivity` needs `bayes`: it checks the Bayesian rows' prior."
        )
    if metrics is not None:
        if isinstance(metrics, str | bytes | Mapping | Set) or not isinstance(metrics, Iterable):
            raise ValueError(
                f"`metrics` must be a list of metric names (or None for all); got {metrics!r}."
            )
        metrics = list(metrics)
        if not metrics:
            raise ValueError("`metrics` must name at least one metric (or be None for all).")
        for m in metrics:
            registry.ANY_METRIC.check(m, "metrics")
        if "roc_auc" in metrics and not has_score:
            raise ValueError(
                "`metrics` names roc_auc, the AUC of a score: pass the classifier's scores "
                "as `score`."
            )
    if not (isinstance(n_resamples, str) and n_resamples == RECOMMENDED):
        # the report's bootstrap rows are never a proportion: "exact" does not apply; they
        # are percentile intervals, refused too few resamples here rather than left out
        check_positive_int("n_resamples", n_resamples, " or 'recommended'")
        check_resample_count(n_resamples, level)
    generator = check_rng(rng)
    if not isinstance(differences, bool | np.bool_):
        raise ValueError(f"`differences` must be True or False; got {differences!r}.")
    if differences and not has_by:
        raise ValueError(
            "`differences` needs `by` (a subgroup label per text): the differences are "
            "between subgroups."
        )
    check_label("reference", reference)
    if reference is not None and not differences:
        raise ValueError(
            "`reference` names the subgroup the differences are from: it needs "
            "differences=True (and `by`)."
        )
    options = {
        "method": RECOMMENDED,
        "design": design,
        "df_adjust": df_adjust,
        "n_resamples": n_resamples,
        "confidence_level": level,
        "bayes_sampler": bayes_sampler if bayes else None,
        "bayes_prior_sensitivity": bayes_prior_sensitivity,
    }
    return options, metrics, generator


def _crossed_source(
    y_true: Any, y_pred: Any, *, by: Any, differences: bool, bayes: bool, score: Any
) -> str | None:
    """Return the crossed source of :func:`report`'s labels: "annotators", "runs" or None.

    A column per annotator in `y_true` or per run in `y_pred`; the options those reports
    do not have are refused.
    """
    if has_columns(y_true):
        unsupported = {"by": by is not None, "differences": differences, "bayes": bayes}
        unsupported["score"] = score is not None
        for name, given_ in unsupported.items():
            if given_:
                raise ValueError(
                    f"`{name}` is not available with several annotators (a column per "
                    "annotator in `y_true`): report against one reference, or their majority."
                )
        return "annotators"
    if not has_columns(y_pred):
        return None
    if differences or bayes:
        raise ValueError(
            f"`{'differences' if differences else 'bayes'}` is not available with repeated "
            "runs (a column per run in `y_pred`): report one run, or their majority vote."
        )
    return "runs"


def metric_ci(
    y_true: Any,
    y_pred: Any,
    metric: str,
    *former_groups: Any,
    groups: Any = None,
    method: str = RECOMMENDED,
    positive: Any = None,
    confidence_level: float = 0.95,
    design: str | None = RECOMMENDED,
    df_adjust: str | None = RECOMMENDED,
    scheme: str | None = RECOMMENDED,
    interval: str = RECOMMENDED,
    pseudo_count: int | str = RECOMMENDED,
    n_resamples: int | str = RECOMMENDED,
    rng: Any = None,
    estimand: str | None = None,
    weights: Any = None,
    strata: Any = None,
    stratum_sizes: Any = None,
) -> MetricCI | RunsCI | AnnotatorsCI:
    """Confidence interval for one metric from labels, with the paper's recommended method.

    Parameters
    ----------
    y_true, y_pred : array_like
        Reference (human) and classifier labels, one per text; for ``"roc_auc"``,
        `y_pred` is the classifier's score of each text. A two-dimensional `y_pred`,
        ``(n_texts, n_runs)`` (a column per run of a stochastic classifier), gives the
        interval of repeated runs, :func:`perfci.runs.runs_ci`.
    metric : str
        Any name in :data:`perfci.METRICS`, or ``"roc_auc"`` (the ROC AUC of a score:
        :func:`perfci.auc_ci`).
    groups : array_like, optional
        Person ids, one per text: the texts are nested in persons.
    method : str, default "recommended"
        ``"recommended"`` (see the notes), an analytic method of
        :func:`proportion_ci` (proportion metrics only), or ``"bootstrap"``; for
        ``"roc_auc"``, ``"recommended"`` (``delong_logit``), ``"delong"``,
        ``"delong_logit"`` or ``"bootstrap"``, as in :func:`perfci.auc_ci`.
    positive : object, optional
        The positive label (as in :func:`confusion`); for multi-class labels, a class
        gives its one-vs-rest metric.
    confidence_level : float, default 0.95
        Confidence level.
    design : {"icc", "icc_weighted", "cluster_robust", None, "recommended"}, default "recommended"
        Design adjustment of analytic intervals for nested texts ("recommended":
        icc_weighted; see :func:`clustered_proportion_ci`); None treats nested texts as independent.
        Needs `groups`.
    df_adjust : {"dean_pagano", "korn_graubard", None, "recommended"}, default "recommended"
        Degrees-of-freedom adjustment of analytic intervals for nested texts
        ("recommended": dean_pagano); None for none. Needs `groups`.
    scheme : {"iid", "cluster", "hierarchical", "recommended"}, default "recommended"
        Bootstrap scheme; "recommended" (or None) is iid for independent texts (or at
        most one relevant text per person) and hierarchical for nested texts
        (:func:`perfci.policy.recommended_scheme`).
    interval : {"percentile", "bca", "recommended"}, default "recommended"
        Bootstrap interval ("recommended": percentile).
    pseudo_count : int or "recommended", default "recommended"
        Bootstrap pseudo count λ ("recommended": 1).
    n_resamples : int or "recommended", default "recommended"
        Bootstrap resamples ("recommended": 2000, more above a 99% level).
    rng : numpy.random.Generator, int or None
        Random generator or seed for the bootstrap (unused by analytic intervals).
    estimand : str, optional
        With repeated runs (a two-dimensional `y_pred`), what the interval is about:
        ``"new_run"`` (default), ``"these_runs"`` or ``"majority"`` (see
        :mod:`perfci.runs`); with several annotators (a two-dimensional `y_true`, a
        column per annotator, missing where one did not code a text, see
        :func:`perfci.annotator_ci`): ``"new_annotator"`` (default),
        ``"these_annotators"`` or ``"majority"``.
    weights : array_like, optional
        Each text's sampling weight, the inverse of its inclusion probability: the sample
        was not drawn with equal probabilities (say, 300 predicted positives and 300
        predicted negatives coded). The interval is then design-based
        (:mod:`perfci.sample_design`), about the corpus the sample represents.
    strata : array_like, optional
        Each text's sampling stratum (say, the classifier's prediction).
    stratum_sizes : mapping, array_like or float, optional
        The corpus texts of each stratum (a mapping from stratum to size, or one value
        per text, both with `strata`; one number without): the finite population
        correction, and the weights when `weights` is omitted (:math:`N_h / n_h`). With
        `weights`, each stratum's weights must add up to its size (within 1%).

    Returns
    -------
    MetricCI, RunsCI or AnnotatorsCI
        Estimate, interval, the method used (with its options), the population the
        interval is about, the sources of variation it includes, the relevant n,
        persons, ICC, design effect and n_eff: a :class:`MetricCI` for one classifier's
        labels (or a score, ``"roc_auc"``) against one reference; for repeated runs (a
        two-dimensional `y_pred`) a :class:`perfci.runs.RunsCI`; for several annotators
        (a two-dimensional `y_true`) a :class:`perfci.AnnotatorsCI`. The class follows
        the shape of the input only, never an option.

    Raises
    ------
    ValueError
        For bad labels or names, an analytic method for a non-proportion metric, an
        option the method cannot use (a bootstrap option for an analytic interval, a
        design option for the bootstrap, a nested-data option without `groups`), or
        nested data with fewer than 2 persons with a relevant text (one person says
        nothing about the population of persons); an option of the wrong type or range (a
        `positive` that is not one label, a level that is not one number in (0, 1), an
        `rng` that cannot seed a generator), even when the chosen method would not use it.

    Warns
    -----
    UndefinedMetricWarning
        For a metric undefined for the data (recall without reference positives, kappa
        when both raters put every text in one class, ...): the estimate and ends are
        NaN and `method` is ``"undefined"``, as :func:`perfci.compute_metric` gives NaN.

    Notes
    -----
    ``method="recommended"`` is :mod:`perfci.policy`'s: Agresti-Coull for proportion
    metrics (for nested texts on the df-adjusted effective sample size, with the ANOVA
    ICC and the size-weighted design effect ``design="icc_weighted"``), and the
    pseudo-count (λ = 1) percentile bootstrap for the other metrics (iid for independent
    texts, hierarchical for nested ones). Where the stress atlas found no interval that
    covers (:func:`perfci.policy.coverage_caveat`), the ``note`` of :func:`report` says
    so.

    The recommendation fills in only the options left at "recommended": an option you
    pass is used as given (``method="recommended", scheme="cluster"`` bootstraps F1 with
    the cluster bootstrap), and an option the chosen method cannot use is an error rather
    than ignored. With at most one relevant text per person the texts are a simple random
    sample, and the independent-text interval is used.

    ``"roc_auc"`` is not a function of confusion counts: it goes to
    :func:`perfci.auc_ci`, whose recommended method is DeLong's variance on the logit
    scale (:data:`perfci.policy.AUC_METHOD`) and, for texts nested in persons, the
    jackknife of persons (:data:`perfci.policy.AUC_NESTED_METHOD`). The
    options of proportion intervals (`design`, `df_adjust`, `pseudo_count`) do not apply
    to it; the bootstrap options do, with ``method="bootstrap"``.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> ci = pc.metric_ci(texts["human"], texts["model"], "precision", groups=texts["person"])
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] by {ci.method}")
    0.847 [0.778, 0.897] by agresti_coull (design=icc_weighted, df_adjust=dean_pagano)
    >>> ci = pc.metric_ci(texts["human"], texts["model"], "f1", groups=texts["person"], rng=1)
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] by {ci.method}")  # drawn ends
    0.863 [0.80, 0.91] by bootstrap (scheme=hierarchical, interval=percentile, pseudo_count=1)
    >>> ci = pc.metric_ci(texts["human"], texts["score"], "roc_auc", groups=texts["person"])
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    0.975 [0.957, 0.985]
    >>> ci.method.split(" (")[0]
    'jackknife of persons, logit scale'

    """
    check_aligned(y_true=y_true, y_pred=y_pred, groups=groups, weights=weights, strata=strata)
    groups = positional_groups(former_groups, groups, "metric_ci")
    if design_given(weights, strata, stratum_sizes):
        return weighted_metric_ci(
            y_true,
            y_pred,
            metric,
            groups=groups,
            weights=weights,
            strata=strata,
            stratum_sizes=stratum_sizes,
            method=method,
            positive=positive,
            confidence_level=confidence_level,
            rng=rng,
            unused={
                "design": design,
                "df_adjust": df_adjust,
                "scheme": scheme,
                "interval": interval,
                "pseudo_count": pseudo_count,
                "n_resamples": n_resamples,
                "estimand": estimand,
            },
        )
    registry.ANY_METRIC.check(metric)
    source = (
        None
        if metric == "roc_auc"
        else "annotators"
        if has_columns(y_true)
        else "runs"
        if has_columns(y_pred)
        else None
    )
    if source is not None:
        return _crossed_metric_ci(
            source,
            y_true,
            y_pred,
            metric,
            groups,
            method=method,
            positive=positive,
            confidence_level=confidence_level,
            estimand=estimand,
            unused={
                "design": design,
                "df_adjust": df_adjust,
                "scheme": scheme,
                "interval": interval,
                "pseudo_count": pseudo_count,
            },
            n_resamples=n_resamples,
            rng=rng,
        )
    if estimand is not None:
        raise ValueError(
            "`estimand` says what an interval of repeated runs is about: it needs `y_pred` "
            "with a column per run, (n_texts, n_runs)."
        )
    if metric == "roc_auc":
        return _auc_metric_ci(
            y_true,
            y_pred,
            groups,
            method=method,
            positive=positive,
            confidence_level=confidence_level,
            unused={"design": design, "df_adjust": df_adjust, "pseudo_count": pseudo_count},
            scheme=scheme,
            interval=interval,
            n_resamples=n_resamples,
            rng=rng,
        )
    options = {
        "method": method,
        "design": design,
        "df_adjust": df_adjust,
        "scheme": scheme,
        "interval": interval,
        "pseudo_count": pseudo_count,
    }
    level, generator = metric_ci_iv(metric, options, positive, confidence_level, rng)
    counts = confusion(y_true, y_pred, positive=positive, groups=groups)
    check_counts_fit_metric(counts, metric)
    return interval_of_counts(
        counts,
        metric,
        options={**options, "n_resamples": n_resamples},
        confidence_level=level,
        rng=generator,
        strict=True,
    )


hide_parameters(metric_ci, positional=True)


def _crossed_metric_ci(
    source: str,
    y_true: Any,
    y_pred: Any,
    metric: str,
    groups: Any,
    *,
    method: Any,
    positive: Any,
    confidence_level: Any,
    estimand: Any,
    unused: dict[str, Any],
    n_resamples: Any,
    rng: Any,
) -> Any:
    """Route :func:`metric_ci` with a crossed source of variation.

    ``"runs"`` to :func:`perfci.runs.runs_ci`, ``"annotators"`` to
    :func:`perfci.annotator_ci`.
    """
    from .annotators import annotator_ci
    from .runs import runs_ci

    if source == "annotators" and has_columns(y_pred):
        raise ValueError(
            "`y_true` with a column per annotator and `y_pred` with a column per run are not "
            "available together: give one run (or the runs' majority vote), or one reference."
        )
    registry.RUN_METHOD.check(method)
    one, where = (
        ("of one run", "repeated runs (a column per run in `y_pred`)")
        if source == "runs"
        else ("against one reference", "several annotators (a column per annotator in `y_true`)")
    )
    for name, value in unused.items():
        if not (isinstance(value, str) and value == RECOMMENDED):
            raise ValueError(
                f"`{name}` is an option of the intervals {one}; with {where} leave `{name}` unset."
            )
    interval = runs_ci if source == "runs" else annotator_ci
    if estimand is None:
        estimand = "new_run" if source == "runs" else "new_annotator"
    return interval(
        y_true,
        y_pred,
        metric,
        groups=groups,
        estimand=estimand,
        method=method,
        positive=positive,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        rng=rng,
    )


def _auc_metric_ci(
    y_true: Any,
    y_score: Any,
    groups: Any,
    *,
    method: Any,
    positive: Any,
    confidence_level: Any,
    unused: dict[str, Any],
    scheme: Any,
    interval: Any,
    n_resamples: Any,
    rng: Any,
) -> MetricCI:
    """:func:`metric_ci` of ``"roc_auc"``: :func:`perfci.auc_ci` with the policy's defaults."""
    registry.METRIC_CI_AUC_METHOD.check(method)
    for name, value in unused.items():
        if not (isinstance(value, str) and value == RECOMMENDED):
            raise ValueError(
                f"`{name}` is an option of the intervals of labels; it does not apply to "
                f"roc_auc (the AUC of a score); leave `{name}` unset."
            )
    chosen = method  # "recommended" is resolved by auc_ci's core, which sees the persons
    given: dict[str, Any] = {
        "scheme": None if scheme == RECOMMENDED else scheme,
        "interval": UNSET if interval == RECOMMENDED else interval,
        "n_resamples": UNSET if n_resamples == RECOMMENDED else n_resamples,
    }
    ci = auc_ci_named(
        y_true,
        {"y_pred": y_score},
        groups,
        method=chosen,
        confidence_level=confidence_level,
        positive=positive,
        rng=rng,
        batch=None,
        **given,
    )
    return metric_ci_of_auc(ci)


def _subset_frames(
    t: np.ndarray,
    p: np.ndarray,
    g: np.ndarray | None,
    scores: np.ndarray | None,
    subsets: list[tuple[Any, np.ndarray]],
    *,
    runs: bool,
    by: bool,
    positive: Any,
    metrics: list[str] | None,
    options: dict[str, Any],
    rng: np.random.Generator,
) -> tuple[list[pd.DataFrame], list[str]]:
    """Return the rows of :func:`report` of each set of texts (all, then each subgroup).

    One frame per set, with a leading ``by`` column when there are subgroups, and the rows
    left out; `p` has a column per run when `runs`.
    """
    level = options["confidence_level"]
    with_auc = scores is not None and (metrics is None or "roc_auc" in metrics)
    frames, skipped = [], []
    for value, mask in subsets:
        shown = value.item() if isinstance(value, np.generic) else value
        where = "" if not by else f" in subgroup {shown!r}"
        persons = None if g is None else g[mask]
        if runs:
            rows, s = _runs_rows(t[mask], p[mask], persons, positive, metrics, level, rng, where)
        else:
            rows, s = subset_rows(t[mask], p[mask], persons, positive, metrics, options, rng, where)
        skipped += s
        if with_auc and scores is not None:
            with_class = "class" in (rows[0] if rows else {})
            r, s = auc_rows(t[mask], scores[mask], persons, positive, level, where, with_class)
            rows, skipped = rows + r, skipped + s
        frame = pd.DataFrame(rows)
        if by:
            frame.insert(0, "by", value)
        frames.append(frame)
    return frames, skipped


def _runs_rows(
    t: np.ndarray,
    p: np.ndarray,
    g: np.ndarray | None,
    positive: Any,
    metrics: list[str] | None,
    level: float,
    rng: np.random.Generator,
    where: str,
) -> tuple[list[dict], list[str]]:
    """Rows of :func:`report` for repeated runs: each binary metric's ``new_run`` interval."""
    from .runs import runs_ci

    if positive is None:
        raise ValueError(
            "`positive` must name the positive class for a report of repeated runs: its "
            "metrics are binary (one class against the rest)."
        )
    rows: list[dict] = []
    skipped: list[str] = []
    chosen = [m for m in (metrics or BINARY_METRICS) if m in BINARY_METRICS]
    left = [m for m in (metrics or []) if m not in BINARY_METRICS]
    if left:
        skipped.append(f"{', '.join(left)}{where} (not a binary metric of repeated runs)")
    for metric, child in zip(chosen, rng.spawn(len(chosen)), strict=True):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UndefinedMetricWarning)
            ci = runs_ci(
                t, p, metric, groups=g, positive=positive, confidence_level=level, rng=child
            )
        if np.isnan(ci.low):
            reason = "; ".join(str(w.message).rstrip(".") for w in caught) or "no interval"
            skipped.append(f"{metric}{where} ({reason})")
            continue
        rows.append(
            interval_row(
                metric,
                ci.estimate,
                ci.low,
                ci.high,
                ci.method,
                int(round(float(np.mean(_relevant_per_run(t, p, positive, metric))))),
                pd.NA if g is None else int(ci.units),
                (
                    f"a new run ({ci.runs} runs seen): run SD {ci.run_sd:.3f}, "
                    f"{ci.flip_share:.1%} of texts flip between runs",
                ),
                sources=", ".join(ci.sources),
            )
        )
    return rows, skipped


def _annotators_report(
    y_true: Any,
    y_pred: Any,
    groups: Any,
    positive: Any,
    metrics: list[str] | None,
    level: float,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """:func:`report` against several annotators (and, with a column per run, runs).

    One row per binary metric with the ``new_annotator`` interval of the classifier (of
    the runs' majority vote, when there are runs); with runs, a second row per metric with
    the ``new_run`` interval against the annotators' majority. Each row's `sources` says
    which sources it includes: no one interval includes both runs and annotators.
    """
    from .annotators import annotator_ci, majority_reference, read_codes
    from .runs import majority_vote, runs_ci, runs_table

    runs = has_columns(y_pred)
    pred_runs = runs_table(y_pred) if runs else None
    first = pred_runs[:, 0] if pred_runs is not None else y_pred
    truth, said, positive = read_codes(y_true, first, positive)
    rows: list[dict] = []
    skipped: list[str] = []
    chosen = [m for m in (metrics or BINARY_METRICS) if m in BINARY_METRICS]
    if pred_runs is not None:
        given = normalize_labels({"y_pred": pred_runs.T}, positive=positive, ndim=None)
        votes = (np.asarray(given.values["y_pred"]).T == given.positive).sum(1)
        vote, ties = majority_vote(votes, pred_runs.shape[1])
        said = vote
        majority, _ = majority_reference(truth)
        keep = ~np.isnan(majority)
    for metric, child in zip(chosen, rng.spawn(len(chosen)), strict=True):
        jobs = [("annotators", None)]
        if pred_runs is not None:
            jobs.append(("runs", None))
        for kind, _ in jobs:
            ci: Any
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", UndefinedMetricWarning)
                if kind == "annotators":
                    coded = pd.DataFrame(truth.astype(object)).where(~np.isnan(truth), None)
                    ci = annotator_ci(
                        coded,
                        said.astype(int),
                        metric,
                        groups=groups,
                        positive=1,
                        confidence_level=level,
                        rng=child,
                    )
                    spread = ", ".join(f"{v:.3f}" for v in ci.annotator_estimates)
                    note = f"a new annotator ({ci.annotators} seen: {spread})"
                    if pred_runs is not None:
                        note += f"; the majority vote of {pred_runs.shape[1]} runs"
                    units = ci.persons
                else:
                    assert pred_runs is not None
                    ids = None if groups is None else np.asarray(groups, dtype=object)[keep]
                    ci = runs_ci(
                        majority[keep].astype(int),
                        (np.asarray(given.values["y_pred"]).T[keep] == given.positive).astype(int),
                        metric,
                        groups=ids,
                        positive=1,
                        confidence_level=level,
                    )
                    note = (
                        f"a new run ({ci.runs} seen, run SD {ci.run_sd:.3f}) against the "
                        f"majority of {truth.shape[1]} annotators"
                    )
                    units = None if groups is None else int(ci.units)
            if np.isnan(ci.low):
                reason = "; ".join(str(w.message).rstrip(".") for w in caught) or "no interval"
                skipped.append(f"{metric} ({kind}: {reason})")
                continue
            rows.append(
                interval_row(
                    metric,
                    ci.estimate,
                    ci.low,
                    ci.high,
                    ci.method,
                    pd.NA,
                    pd.NA if units is None else units,
                    (note,),
                    sources=", ".join(ci.sources),
                )
            )
    say_left_out(skipped, reported=bool(rows), stacklevel=4)
    table = pd.DataFrame(rows).reindex(columns=COLUMNS)
    table["persons"] = table["persons"].astype("Int64")
    table["relevant_n"] = table["relevant_n"].astype("Int64")
    return table


def _relevant_per_run(t: np.ndarray, p: np.ndarray, positive: Any, metric: str) -> np.ndarray:
    """Return the relevant texts of a metric in each run (its denominator for proportions)."""
    truth = (t == positive)[:, None]
    said = p == positive
    cell = 2 * (~said) + (~truth)  # 0 tp, 1 fp, 2 fn, 3 tn
    per_run = np.stack([(cell == c).sum(0) for c in range(4)], axis=-1)  # (runs, 4)
    return relevant_texts(per_run, metric)


def report(
    y_true: Any,
    y_pred: Any,
    *former_groups: Any,
    groups: Any = None,
    by: Any = None,
    score: Any = None,
    differences: bool = False,
    reference: Any = None,
    positive: Any = None,
    metrics: list[str] | None = None,
    confidence_level: float = 0.95,
    design: str | None = RECOMMENDED,
    df_adjust: str | None = RECOMMENDED,
    n_resamples: int | str = RECOMMENDED,
    rng: Any = None,
    bayes: bool = False,
    bayes_sampler: str = "auto",
    bayes_prior_sensitivity: bool = False,
    weights: Any = None,
    strata: Any = None,
    stratum_sizes: Any = None,
) -> pd.DataFrame:
    """Every metric with its recommended interval, in one table.

    Parameters
    ----------
    y_true, y_pred : array_like
        Reference (human) and classifier labels, one per text.
    groups : array_like, optional
        Person ids, one per text (nested texts).
    by : array_like, optional
        A subgroup label per text (e.g. gender or site): the report is repeated per
        subgroup, after the rows for all texts (``by = "all"``).
    score : array_like, optional
        The classifier's score of each text (e.g. the probability behind `y_pred`):
        adds a ``roc_auc`` row (per subgroup too) with the recommended AUC interval of
        :func:`metric_ci` (DeLong on the logit scale; clustered with `groups`).
    differences : bool, default False
        With `by`, add after the subgroups' rows one row per metric and subgroup other
        than the reference (the first subgroup in sorted order): the difference of the
        subgroup's metric from the reference's, with the interval of
        :func:`perfci.compare_groups` (``method="recommended"``). These rows have the
        reference in a column ``reference`` (empty in the other rows); see the Returns.
    reference : object, optional
        With `differences`, the subgroup the others are compared with (default the first
        in sorted order), as in :func:`perfci.compare_groups`.
    positive : object, optional
        The positive label of binary labels (as in :func:`confusion`). Multi-class
        labels give per-class one-vs-rest rows and ``macro_``/``micro_`` rows.
    metrics : list of str, optional
        Metrics to report; default all that apply (``roc_auc`` when `score` is given).
    confidence_level : float, default 0.95
        Confidence level.
    design, df_adjust : str or None, default "recommended"
        Nested-data adjustment of the rows with analytic intervals, as in
        :func:`metric_ci` (icc_weighted and dean_pagano when left to the policy).
    n_resamples : int or "recommended", default "recommended"
        Resamples of the rows with bootstrap intervals (2000 when left to the policy, more above a
        99% level), at least ``ceil(2 / (1 - confidence_level))`` (40 at 95%: each tail of the
        interval holds a resample).
    rng : numpy.random.Generator, int or None
        Random generator or seed (one child stream per row).
    bayes : bool, default False
        Add Bayesian credible intervals (equal-tailed, at `confidence_level`) below each
        metric's frequentist row, marked in ``method``: for proportion metrics on nested
        texts, the hierarchical beta-binomial's ``population`` estimand, the text-weighted
        rate of the population of persons that the frequentist row is about (see
        :mod:`perfci.bayes`; flagged fits say so in ``note``); for every other metric
        of nested texts (F1, kappa, PNA, macro averages, ...), the ``population``
        estimand of the hierarchical margins model
        (:func:`perfci.bayes.nested_metric_intervals`, the exact grid whatever
        `bayes_sampler`; a margin with fewer than 2 persons is flagged in ``note``); for
        every metric of independent texts, the posterior under the default prior
        (:func:`perfci.bayes.confusion_posterior`, closed form where there is one). A
        metric without a population posterior (one person) gets no Bayesian row.
    bayes_sampler : {"auto", "nutpie", "pymc", "grid"}, default "auto"
        Sampler of the hierarchical beta-binomial of the proportion metrics of nested
        texts: ``"auto"`` is the exact grid; the ``method`` column names the sampler
        that ran.
    bayes_prior_sensitivity : bool, default False
        With `bayes`, follow each hierarchical beta-binomial row by the interval under
        the alternative concentration prior (``"bda3"`` for the default ``"pareto"``),
        from the exact grid, whose ``note`` says whether it differs materially (an end or
        the median moving by more than 10% of the width;
        :func:`perfci.bayes.prior_sensitivity`).
    weights, strata, stratum_sizes : optional
        The design of a weighted or stratified sample, as in :func:`metric_ci`: every
        row is then design-based (:mod:`perfci.weighted_tables`), about the corpus the
        sample was drawn from (or the population of persons with `groups`), the
        subgroups of `by` as domains; the rows cover the binary metrics and
        ``prevalence``. `score`, `differences`, `bayes` and the nested options do not
        apply.

    Returns
    -------
    pandas.DataFrame
        One row per metric (per class, per subgroup) with columns ``metric``,
        ``estimate``, ``low``, ``high``, ``method``, ``relevant_n``, ``persons``, ``icc``,
        ``design_effect``, ``n_eff`` and ``note`` (plus ``by`` and ``class`` where they
        apply). Notes flag fewer than 30 relevant texts, half-widths above 0.10,
        fewer than 5 (or 10) persons, and nested designs where the stress atlas found
        no interval that covers (:func:`perfci.policy.coverage_caveat`). With
        `differences`, a column ``reference`` follows ``by``; a row with a reference is
        a difference: ``by`` is the subgroup, ``estimate``, ``low`` and ``high`` are the
        difference (subgroup minus reference) and its interval, ``relevant_n`` and
        ``persons`` count the texts and persons of both subgroups, and ``note`` gives
        both estimates with their relevant n.

    Raises
    ------
    ValueError
        For bad labels, unknown names, or an option of the wrong type or range:
        `metrics` that is not a non-empty list of names (or names ``roc_auc`` without
        `score`), a `score` that is not one finite number per text, `bayes` or
        `differences` that is not a boolean, `differences` without `by` (or, with
        `groups`, persons whose texts span subgroups),
        `n_resamples` that is not a positive integer or "recommended" (or is too few
        for the level), a `positive`
        that is not one label, a level outside (0, 1), an `rng` that cannot seed a
        generator. Options are checked before any row is computed, so a bad one is an
        error rather than a row left out.

    Warns
    -----
    UndefinedMetricWarning
        Naming the metrics left out because they are undefined for the data (or a
        subgroup), or have fewer than 2 persons with a relevant text; and the differences
        left out because they are undefined (and, for multi-class labels, that averages
        over classes have no difference rows: compare a class's one-vs-rest metric).

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> table = pc.report(texts["human"], texts["model"], groups=texts["person"], rng=1)
    >>> table[["metric", "estimate", "low", "high", "relevant_n", "persons"]].round(3).head(3)
          metric  estimate    low   high  relevant_n  persons
    0   accuracy     0.935  0.917  0.948        1069       40
    1     recall     0.880  0.821  0.923         251       39
    2  precision     0.847  0.778  0.897         261       40

    The difference between the two clinics, per metric (texts nested in therapists):

    >>> table = pc.report(texts["human"], texts["model"], groups=texts["person"],
    ...                   by=texts["site"], differences=True, metrics=["recall"], rng=1)
    >>> table[["by", "reference", "metric", "estimate", "low", "high"]].round(3)
             by reference  metric  estimate    low   high
    0       all            recall     0.880  0.821  0.923
    1  clinic_a            recall     0.860  0.760  0.924
    2  clinic_b            recall     0.907  0.826  0.954
    3  clinic_b  clinic_a  recall     0.047 -0.052  0.147
    """
    check_aligned(y_true=y_true, y_pred=y_pred, groups=groups, by=by, score=score)
    check_aligned(y_true=y_true, weights=weights, strata=strata)
    groups = positional_groups(former_groups, groups, "report")
    options, metrics, generator = _report_iv(
        design,
        df_adjust,
        positive,
        metrics,
        confidence_level,
        n_resamples,
        rng,
        bayes,
        bayes_sampler,
        score is not None,
        bayes_prior_sensitivity,
        differences=differences,
        has_by=by is not None,
        reference=reference,
    )
    level = options["confidence_level"]
    if design_given(weights, strata, stratum_sizes):
        refused = {"score": score, "design": design, "df_adjust": df_adjust}
        refused |= {"n_resamples": n_resamples, "differences": differences or None}
        refused |= {
            "bayes": bayes or None,
            "bayes_prior_sensitivity": bayes_prior_sensitivity or None,
        }
        refuse_unset(refused)
        return weighted_report(
            y_true,
            y_pred,
            groups=groups,
            weights=weights,
            strata=strata,
            stratum_sizes=stratum_sizes,
            by=by,
            metrics=metrics,
            positive=positive,
            confidence_level=level,
            rng=generator,
        )
    refuse_ignored_report_options(design, df_adjust, groups is not None, bayes, bayes_sampler)
    source = _crossed_source(
        y_true, y_pred, by=by, differences=differences, bayes=bayes, score=score
    )
    if source == "annotators":
        return _annotators_report(y_true, y_pred, groups, positive, metrics, level, generator)
    runs = source == "runs"
    # the labels are read once, for all texts, so that every subgroup has one coding
    if runs:
        from .runs import runs_table

        truth_in = y_true.to_numpy() if isinstance(y_true, pd.Series | pd.Index) else y_true
        given = normalize_labels(
            {"y_true": truth_in, "y_pred": runs_table(y_pred).T}, positive=positive, ndim=None
        )
        t, p_runs = given.values["y_true"], np.asarray(given.values["y_pred"]).T
        if t.ndim != 1 or p_runs.shape[0] != t.size:
            raise ValueError(
                f"`y_pred` must have one row per text of `y_true` ({np.size(t)}); got "
                f"{p_runs.shape[0]}."
            )
        p = p_runs[:, 0]  # the shape checks below; the rows use every run
    else:
        given = normalize_labels({"y_true": y_true, "y_pred": y_pred}, positive=positive)
        t, p = given.values["y_true"], given.values["y_pred"]
    positive = given.positive
    g, scores, b, subsets = report_inputs(t, p, groups, score, by, reference)
    frames, skipped = _subset_frames(
        t,
        p_runs if runs else p,
        g,
        scores,
        subsets,
        runs=runs,
        by=by is not None,
        positive=positive,
        metrics=metrics,
        options=options,
        rng=generator,
    )
    if differences:
        assert b is not None  # `differences` needs `by`: checked above
        rows, s = difference_rows(
            t, p, b, g, positive, metrics, reference, level, n_resamples, generator
        )
        skipped += s
        for frame in frames:
            frame.insert(1, "reference", "")
        if rows:
            frames.append(pd.DataFrame(rows))
    return assembled_table(frames, skipped)


hide_parameters(report, positional=True)
