"""The per-cell scoring kernels: one per population kind, each scoring every method of a cell.

Every kernel simulates its cell's data sets once (common random numbers: every method
sees the same data) and scores each method on them by calling the public function a user
would call (:func:`perfci.proportion_ci`, :func:`perfci.clustered_proportion_ci`,
:func:`perfci.bootstrap_ci`, :func:`perfci.bayes.grid_intervals` or
:func:`perfci.bayes.shared_grid_intervals`, :func:`perfci.bayes.fit_proportion_counts`,
:func:`perfci.bayes.confusion_posterior`, :func:`perfci.bayes.shared_nested_metric_intervals`,
:func:`perfci.bayes.compare_counts`, :func:`perfci.comparison.compare_counts`,
:func:`perfci.subgroups.compare_groups_counts`, :func:`perfci.auc.auc_ci_counts`), batched
over the data sets. A kernel returns ``(methods, 6)`` scores (:func:`score`). The kernels
of crossed designs (repeated runs, several annotators) are
:mod:`~perfci.harness.crossed_kernels`'.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import registry
from ..analytic import proportion_ci
from ..bootstrap import bootstrap_ci
from .populations import (
    confusion_probabilities,
    draw_confusion,
    draw_nested,
    draw_paired,
    draw_scored,
    nested_sample,
    paired_truth,
    person_parameters,
    population_of,
    population_truth,
    scored_truth,
)
from .schema import Method, Scale, Suite


def score(low, high, truth, flagged=0) -> np.ndarray:
    """hits, misses low and high, half-width sum, n_valid, n_flagged of intervals.

    `truth` is one value, or one per data set (broadcast against `low`), for an estimand
    about something each data set draws (the runs it saw).
    """
    low, high = np.asarray(low, float), np.asarray(high, float)
    truth = np.broadcast_to(np.asarray(truth, float), low.shape)
    valid = np.isfinite(low) & np.isfinite(high)  # an interval that could not be formed
    low, high, truth = low[valid], high[valid], truth[valid]
    return np.array(
        [
            np.sum((low <= truth) & (truth <= high)),
            np.sum(high < truth),
            np.sum(low > truth),
            np.sum(high - low) / 2,
            low.size,
            flagged,
        ],
        dtype=float,
    )


def _bootstrap_ends(
    counts: np.ndarray, metric: str, options: dict, scale: Scale, level, rng, nested=None
):
    """Interval ends of :func:`perfci.bootstrap_ci` for a batch of data sets.

    Warnings (dropped resamples, BCa fallbacks) are expected in a coverage study; the
    ends are what is scored, and an interval that cannot be formed is NaN (not valid).
    """
    nested = counts.ndim == 3 if nested is None else nested
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ci = bootstrap_ci(
            counts,
            metric,
            scheme=options.get("scheme", "iid"),
            interval=options["interval"],
            pseudo_count=options["pseudo_count"],
            n_resamples=scale.resamples,
            confidence_level=level,
            rng=rng,
            nested=nested,
        )
    return ci.low, ci.high


def bernoulli_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Analytic and bootstrap intervals of a proportion of n independent texts."""
    n, p = int(cell["n"]), float(cell["p"])
    level = suite.confidence_level
    out = np.empty((len(suite.methods), 6))
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    x = data_rng.binomial(n, p, size=scale.replications)  # the data every method sees
    counts = np.stack([x, n - x], axis=-1)
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        if m.family == "analytic":
            ci = proportion_ci(x, n, method=m.options["method"], confidence_level=level)
            low, high = ci.low, ci.high
        else:
            low, high = _bootstrap_ends(counts, "proportion", m.options, scale, level, rng)
        out[i] = score(low, high, p)
    return out


def _grid_ends(methods: Sequence[Method], rngs: list, y, n, level: float) -> dict[int, tuple]:
    """Interval ends of the grid rows of a cell, by method index, one posterior for all.

    The grid rows with the same ``draws`` (and every ``"mu"`` row, which draws nothing)
    share one posterior and one set of draws per data set
    (:func:`perfci.bayes.shared_grid_intervals`), drawn with the first drawn row's
    generator: each row gets what its own :func:`perfci.bayes.grid_intervals` call
    gives with that generator (``"mu"`` draws nothing; ``"population"`` and
    ``"sampled_persons"`` share their person rates). A second row of the same estimand
    and draws is its own call. Data sets with fewer than 2 persons with a relevant text
    get NaN ends.
    """
    from ..bayes import grid_intervals, shared_grid_intervals

    rows = [
        (i, m.options["estimand"], m.options.get("draws", 4000), rng)
        for i, (m, rng) in enumerate(zip(methods, rngs, strict=True))
        if m.family == "bayes" and m.options["sampler"] == "grid"
    ]
    usable = np.count_nonzero(n, axis=-1) >= 2
    nan = np.full(y.shape[0], np.nan)
    ends: dict[int, tuple] = {}
    if not rows or not usable.any():
        return {i: (nan, nan) for i, *_ in rows}
    y, n = y[usable], n[usable]

    def put(i: int, ci: Any) -> None:
        low, high = nan.copy(), nan.copy()
        low[usable], high[usable] = ci.low, ci.high
        ends[i] = (low, high)

    groups: dict[int, dict[str, tuple[int, Any]]] = {}
    # "mu" draws nothing: it joins the first drawn row's group, whatever its own draws
    drawn_draws = [d for _, e, d, _ in rows if e != "mu"]
    for i, estimand, draws, rng in rows:
        if estimand == "mu" and drawn_draws:
            draws = drawn_draws[0]
        group = groups.setdefault(draws, {})
        if estimand in group:
            put(
                i,
                grid_intervals(
                    y, n, estimand=estimand, draws=draws, confidence_level=level, rng=rng
                ),
            )
        else:
            group[estimand] = (i, rng)
    for draws, group in groups.items():
        drawn = [rng for e, (_, rng) in group.items() if e != "mu"]
        shared = shared_grid_intervals(
            y, n, list(group), draws=draws, confidence_level=level, rng=drawn[0] if drawn else None
        )
        for estimand, (i, _) in group.items():
            put(i, shared[estimand])
    return ends


def nested_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Intervals of a proportion of samples of the paper's finite nested population."""
    from ..design import clustered_proportion_ci

    _, truth = population_of(suite, cell)
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    y, n = nested_sample(suite, cell, scale.replications, data_rng)
    x_total, n_total = y.sum(1), n.sum(1)
    per_person = np.stack([y, n - y], axis=-1)  # (replications, persons, 2)
    grid = _grid_ends(suite.methods, method_rngs, y, n, level)
    out = np.empty((len(suite.methods), 6))
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        o = m.options
        if m.family == "analytic":
            analytic = proportion_ci(x_total, n_total, method=o["method"], confidence_level=level)
            low, high = analytic.low, analytic.high
        elif m.family == "clustered":
            df = None if o["df_adjust"] == "none" else o["df_adjust"]
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                clustered = clustered_proportion_ci(
                    y,
                    n,
                    method=o["method"],
                    design=o["design"],
                    df_adjust=df,
                    confidence_level=level,
                )
            low, high = clustered.low, clustered.high
        elif m.family == "bootstrap":
            low, high = _bootstrap_ends(per_person, "proportion", o, scale, level, rng)
        elif o["sampler"] == "nutpie":
            low, high, flagged = _nutpie_intervals(
                y, n, o["estimand"], o["replications"], level, rng
            )
            out[i] = score(low, high, truth, flagged)
            continue
        else:
            low, high = grid[i]
        out[i] = score(low, high, truth)
    return out


def _nutpie_intervals(y, n, estimand, replications, level, rng):
    """MCMC (nutpie) credible intervals for the first `replications` data sets of a cell.

    Every fit is one MCMC run (compiled once per worker process, refit with the data);
    flagged fits (failed diagnostics) are kept in the coverage and counted.
    """
    from ..bayes import BayesianDiagnosticsWarning, fit_proportion_counts

    k = min(replications, y.shape[0])
    low, high = np.full(k, np.nan), np.full(k, np.nan)
    flagged = 0
    seeds = rng.integers(2**31 - 1, size=k)
    for r in range(k):  # one MCMC run per data set: no way around a loop here
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BayesianDiagnosticsWarning)
            result = fit_proportion_counts(
                y[r], n[r], sampler="nutpie", draws=1000, tune=1000, chains=2, rng=int(seeds[r])
            )
        ci = result.interval(estimand, "eti", level)
        low[r], high[r] = ci.low, ci.high
        flagged += int(result.flagged)
    return low, high, flagged


def confusion_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Intervals of a metric (F1 by default) of confusion matrices of n texts.

    The paper's section 3.2: the bootstrap rows are :func:`perfci.bootstrap_ci`, the
    ``bayes_confusion`` rows :func:`perfci.bayes.confusion_posterior`'s intervals, both
    batched over the cell's data sets. The truth is the metric of the population's cell
    probabilities (for F1, 2 P R / (P + R)).
    """
    from ..metrics import metric_values

    precision, recall = float(cell["precision"]), float(cell["recall"])
    metric = cell.get("metric", "f1")
    probs = confusion_probabilities(suite.population["prevalence"], precision, recall)
    if metric == "f1":
        truth = 2 * precision * recall / (precision + recall)
    else:
        truth = float(metric_values(probs, metric))
    n = int(cell["n"])
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    counts = data_rng.multinomial(n, probs, size=scale.replications)  # every method's data
    out = np.empty((len(suite.methods), 6))
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        if m.family == "bayes_confusion":
            low, high = _bayes_confusion_ends(counts, metric, m.options, level, rng)
        else:
            low, high = _bootstrap_ends(counts, metric, m.options, scale, level, rng)
        out[i] = score(low, high, truth)
    return out


def _bayes_confusion_ends(counts: np.ndarray, metric: str, options: dict, level: float, rng):
    """Interval ends of :func:`perfci.bayes.confusion_posterior` for a batch of data sets.

    A data set without a text relevant to the metric gets its prior's interval (and a
    warning, expected here): it is scored like any other.
    """
    from ..bayes import PriorOnlyWarning, confusion_posterior

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PriorOnlyWarning)
        ci = confusion_posterior(counts, prior=options["prior"]).interval(
            metric, "eti", level, draws=options["draws"], rng=rng
        )
    return ci.low, ci.high


def _margins_ends(
    methods: Sequence[Method], rngs: list, metric: str, counts: np.ndarray, level: float
) -> dict[int, tuple]:
    """Interval ends and flagged fits of a cell's ``bayes_nested_confusion`` rows.

    Rows with the same prior, draws and replications share one posterior per data set
    (:func:`perfci.bayes.shared_nested_metric_intervals` with the first such row's
    generator): each gets what its own :func:`perfci.bayes.nested_metric_intervals` call
    gives. A row with ``replications = K`` scores the first K data sets of the cell only
    (``n_valid`` at most K). A data set without an interval (one person, for the
    population; no text relevant to the metric) is NaN and not counted in ``n_valid``; a
    flagged fit (a margin fell back to a pooled rate) is scored and counted in
    ``n_flagged``.
    """
    from ..bayes import shared_nested_metric_intervals

    groups: dict[tuple, list[int]] = {}
    for i, m in enumerate(methods):
        if m.family == "bayes_nested_confusion":
            key = (m.options["prior"], m.options["draws"], m.options["replications"])
            groups.setdefault(key, []).append(i)
    ends: dict[int, tuple] = {}
    for (prior, draws, replications), rows in groups.items():
        estimands = list(dict.fromkeys(methods[i].options["estimand"] for i in rows))
        some = counts[:replications] if replications else counts
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # fallbacks and one-person data sets, counted
            shared = shared_nested_metric_intervals(
                some,
                [metric],
                estimands,
                prior=prior,
                confidence_level=level,
                draws=draws,
                rng=rngs[rows[0]],
            )
        for i in rows:
            ci = shared[metric, methods[i].options["estimand"]]
            valid = np.isfinite(ci.low) & np.isfinite(ci.high)
            ends[i] = (ci.low, ci.high, int(np.sum(ci.flagged & valid)))
    return ends


def _method_ends(
    m, metric: str, counts: np.ndarray, scale: Scale, level: float, rng, *, options=None
):
    """Interval ends of one method on per-person counts ``(R, persons, cells)``.

    `counts` are ``[successes, failures]`` for the metric ``"proportion"``, else binary
    cells or k x k matrices. A method that does not apply to the metric (an analytic
    interval of F1) gives None.
    """
    from ..design import clustered_proportion_ci
    from ..metrics import proportion_counts

    o = m.options if options is None else options
    proportion = metric == "proportion" or metric in registry.PROPORTION_METRIC
    if m.family == "bootstrap":
        return _bootstrap_ends(counts, metric, o, scale, level, rng, nested=True)
    if not proportion:
        return None
    if metric == "proportion":
        y, n = counts[..., 0], counts.sum(-1)
    else:
        y, n = proportion_counts(counts, metric)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        low, high = np.full(y.shape[0], np.nan), np.full(y.shape[0], np.nan)
        if m.family == "analytic":
            some = n.sum(-1) > 0  # a data set without a relevant text has no interval
            if some.any():
                pooled = proportion_ci(
                    y[some].sum(-1), n[some].sum(-1), method=o["method"], confidence_level=level
                )
                low[some], high[some] = pooled.low, pooled.high
            return low, high
        # every data set needs two persons with a relevant text; the others are invalid
        usable = np.count_nonzero(n, axis=-1) >= 2
        if not usable.any():
            return low, high
        # the grid rows of a cell are computed together, by _grid_ends
        df = None if o["df_adjust"] == "none" else o["df_adjust"]
        ci = clustered_proportion_ci(
            y[usable],
            n[usable],
            method=o["method"],
            design=o["design"],
            df_adjust=df,
            confidence_level=level,
        )
        low[usable], high[usable] = ci.low, ci.high
        return low, high


def recommended_ends(
    metric: str, counts: np.ndarray, scale: Scale, level: float, rng, *, pooled: bool = False
):
    """Interval ends of what ``method="recommended"`` chooses for each data set.

    The choice comes from :func:`perfci.policy.recommend_for_counts`, the rule
    :func:`perfci.metric_ci` applies; each group of data sets with the same choice is
    computed in one batched call of the public function that choice names. With
    `pooled`, `counts` are each data set's pooled counts ``(R, cells)`` of texts treated
    as independent, and the choice is :func:`perfci.policy.choose_interval`'s without
    groups, what :func:`perfci.metric_ci` applies without `groups`.
    """
    from .. import policy
    from ..metrics import RELEVANT_TEXTS, proportion_counts, right_wrong_cells

    low, high = np.full(counts.shape[0], np.nan), np.full(counts.shape[0], np.nan)
    if metric == "multiclass_accuracy":  # a proportion of texts, as metric_ci reads it
        metric, counts = "accuracy", right_wrong_cells(counts)
    # a proportion is scored as the recall of its successes (any proportion metric: one
    # rule)
    name = "recall" if metric == "proportion" else metric
    if pooled:
        groups: list = [(policy.choose_interval(name), np.ones(counts.shape[0], dtype=bool))]
        counts = counts[:, None]  # one row of all texts: independent-text methods add rows up
    else:
        successes = None
        if metric == "proportion":
            relevant, successes = counts.sum(-1), counts[..., 0]
        elif counts.ndim == 4:  # k x k matrices: every text is relevant to a macro average
            relevant = counts.sum(axis=(-2, -1))
        elif metric in registry.PROPORTION_METRIC:
            successes, relevant = proportion_counts(counts, metric)
        else:
            relevant = counts[..., list(RELEVANT_TEXTS[metric][0])].sum(-1)
        # the successes let the policy see the estimate and the ICC
        groups = policy.recommend_for_counts(name, relevant, successes)
    streams = rng.spawn(len(groups))
    for (choice, mask), stream in zip(groups, streams, strict=True):
        if choice is None:
            continue  # fewer than two persons: no interval about persons
        if choice.method == "bootstrap":
            family = "bootstrap"
            options = {
                "scheme": choice.scheme,
                "interval": choice.interval,
                "pseudo_count": choice.pseudo_count,
            }
        elif choice.design is None:
            family, options = "analytic", {"method": choice.method}
        else:
            family = "clustered"
            options = {
                "method": choice.method,
                "design": choice.design,
                "df_adjust": choice.df_adjust or "none",
            }
        method = Method("recommended", family, options)
        ends = _method_ends(method, metric, counts[mask], scale, level, stream)
        if ends is not None:
            low[mask], high[mask] = ends
    return low, high


def _proportion_grid_ends(methods, rngs, metric: str, counts: np.ndarray, level: float):
    """:func:`_grid_ends` of a cell's per-person counts, for a proportion metric only."""
    from ..metrics import proportion_counts

    if metric != "proportion" and metric not in registry.PROPORTION_METRIC:
        return {}
    if metric == "proportion":
        y, n = counts[..., 0], counts.sum(-1)
    else:
        y, n = proportion_counts(counts, metric)
    return _grid_ends(methods, rngs, y, n, level)


def infinite_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Persons drawn from an infinite population (kinds nested and nested_confusion).

    Every method sees the same data sets. For nested_confusion the cell's metric is
    computed on per-person confusion matrices (binary cells for two classes), and the
    truth is the metric of the population's text-weighted pooled confusion matrix.
    """
    from ..counting import one_vs_rest
    from ..metrics import metric_values

    kind = suite.population["kind"]
    params = person_parameters(suite, cell)
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    shape = (scale.replications, int(params["persons"]))
    truth_value = population_truth(kind, params)
    if kind == "nested":
        metric = "proportion"
        y, n = draw_nested(params, shape, data_rng)
        counts = np.stack([y, n - y], axis=-1)
        truth = float(truth_value)
    else:
        metric = params["metric"]
        matrices = draw_confusion(params, shape, data_rng)
        if metric.startswith(("macro_", "micro_", "multiclass_")):
            counts = matrices
            truth = float(metric_values(one_vs_rest(truth_value), metric))
        else:
            # class 0 is the positive class: [tp, fp, fn, tn]
            counts = _binary_cells(matrices)
            cells = _binary_cells(truth_value)
            truth = float(metric_values(cells, metric))
    grid = _proportion_grid_ends(suite.methods, method_rngs, metric, counts, level)
    out = np.empty((len(suite.methods), 6))
    margins = _margins_ends(suite.methods, method_rngs, metric, counts, level)
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        if i in margins:
            low, high, flagged = margins[i]
            out[i] = score(low, high, truth, flagged)
            continue
        if m.family == "recommended":
            ends = recommended_ends(metric, counts, scale, level, rng)
        elif m.family == "bayes" and m.options["sampler"] == "nutpie":
            raise ValueError("nutpie is not offered for infinite populations")  # the schema says so
        elif m.family == "bayes":
            ends = grid.get(i)
        else:
            ends = _method_ends(m, metric, counts, scale, level, rng)
        if ends is None:  # the method does not apply to this metric: nothing scored
            out[i] = 0.0
            continue
        out[i] = score(ends[0], ends[1], truth)
    return out


def paired_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Two classifiers on the same nested texts: intervals of the paired difference.

    Each method is :func:`perfci.comparison.compare_counts` (what :func:`perfci.compare`
    computes from labels) on the cell's per-person joint counts, batched.
    """
    from ..comparison import compare_counts, recommended_methods
    from ..policy import PAIRED_PROPORTIONS

    params = person_parameters(suite, cell)
    metric = params["metric"]
    truth = paired_truth(params, metric)
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    joint = draw_paired(params, (scale.replications, int(params["persons"])), data_rng)
    out = np.empty((len(suite.methods), 6))
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        o = m.options
        if m.family == "bayes_comparison":
            out[i] = _bayes_comparison_score(joint, metric, o, level, rng, truth)
            continue
        if o["method"] == "newcombe" and metric not in PAIRED_PROPORTIONS:
            out[i] = 0.0  # Newcombe's interval is of paired proportions: not scored
            continue
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # the bootstrap's options only where the method is the bootstrap: compare
            # refuses options the chosen method cannot use
            bootstrap = (
                {
                    "scheme": None if o["scheme"] == "recommended" else o["scheme"],
                    "pseudo_count": o["pseudo_count"],
                    "n_resamples": scale.resamples,
                }
                if o["method"] == "bootstrap"
                else {}
            )
            if o["method"] == "recommended":
                # per data set what compare recommends for it (a batch is one choice)
                chosen = recommended_methods(joint, metric, True)
                low, high = np.full(chosen.shape, np.nan), np.full(chosen.shape, np.nan)
                kinds = sorted(set(chosen) - {None})  # None: under two persons, no interval
                for kind, stream in zip(kinds, rng.spawn(len(kinds)), strict=True):
                    mask = chosen == kind
                    resamples: dict[str, Any] = (
                        {"n_resamples": scale.resamples} if kind == "bootstrap" else {}
                    )
                    part = compare_counts(
                        joint[mask],
                        metric,
                        nested=True,
                        method=kind,
                        confidence_level=level,
                        rng=stream,
                        **resamples,
                    )
                    low[mask], high[mask] = part.low, part.high
            else:
                result = compare_counts(
                    joint,
                    metric,
                    nested=True,
                    method=o["method"],
                    confidence_level=level,
                    rng=rng,
                    **bootstrap,
                )
                low, high = result.low, result.high
        out[i] = score(low, high, truth)
    return out


def _bayes_comparison_score(joint, metric: str, options: dict, level: float, rng, truth):
    """Score :func:`perfci.bayes.compare_counts` (nested) on a cell's joint counts.

    A data set without an interval is NaN (not valid); a flagged fit (a margin fell back
    to a pooled rate) is scored and counted in ``n_flagged``. With ``replications = K``
    only the first K data sets are scored.
    """
    from ..bayes import compare_counts

    replications = options["replications"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fallbacks and one-person data sets, counted
        result = compare_counts(
            joint[:replications] if replications else joint,
            metric,
            nested=True,
            estimand=options["estimand"],
            prior=options["prior"],
            confidence_level=level,
            draws=options["draws"],
            rng=rng,
        )
    valid = np.isfinite(result.low) & np.isfinite(result.high)
    return score(result.low, result.high, truth, int(np.sum(result.flagged & valid)))


def _binary_cells(matrices: np.ndarray) -> np.ndarray:
    """Cells ``[tp, fp, fn, tn]`` of the first class against the rest of k x k matrices."""
    return np.stack(
        [
            matrices[..., 0, 0],
            matrices[..., 1:, 0].sum(-1),
            matrices[..., 0, 1:].sum(-1),
            matrices[..., 1:, 1:].sum((-2, -1)),
        ],
        axis=-1,
    )


def subgroups_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Two subgroups of persons: intervals of the difference of a metric between them.

    Subgroup A has ``recall`` and ``specificity``, the reference B ``recall_b`` and
    ``specificity_b``; each draws ``persons`` persons of its own. Each method is
    :func:`perfci.subgroups.compare_groups_counts` (what :func:`perfci.compare_groups`
    computes) on the per-person counts, or on the pooled counts for ``counts = "pooled"``
    (the texts treated as independent). The truth is metric(A) - metric(B) of the
    populations' text-weighted pooled confusion matrices.
    """
    from .. import policy
    from ..metrics import metric_values
    from ..subgroups import compare_groups_counts

    params = person_parameters(suite, cell)
    metric = params["metric"]
    sides = [
        {**params, "classes": 2},
        {
            **params,
            "classes": 2,
            "recall": params["recall_b"],
            "specificity": params["specificity_b"],
        },
    ]
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    shape = (scale.replications, int(params["persons"]))
    counts, truths = [], []
    for side, stream in zip(sides, data_rng.spawn(2), strict=True):
        counts.append(_binary_cells(draw_confusion(side, shape, stream)))
        pooled = population_truth("nested_confusion", side)
        truths.append(float(metric_values(_binary_cells(pooled), metric)))
    truth = truths[0] - truths[1]
    out = np.empty((len(suite.methods), 6))
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        o = m.options
        nested = o["counts"] == "per_person"
        if o["method"] == "newcombe" and (nested or metric not in registry.PROPORTION_METRIC):
            out[i] = 0.0  # Newcombe's interval is of independent proportions: not scored
            continue
        a, b = (c if nested else c.sum(1) for c in counts)
        chosen = o["method"]
        if chosen == "recommended":
            chosen = policy.recommended_group_difference(metric, nested)
        # the resamples only where the method is the bootstrap: it refuses them otherwise
        resamples = {"n_resamples": scale.resamples} if chosen == "bootstrap" else {}
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = compare_groups_counts(
                a,
                b,
                metric,
                nested=nested,
                method=o["method"],
                confidence_level=level,
                rng=rng,
                **resamples,
            )
        out[i] = score(result.low, result.high, truth)
    return out


def scored_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Score the ROC AUC intervals of a classifier's score of nested texts.

    Each method is :func:`perfci.auc.auc_ci_counts` (what :func:`perfci.auc_ci`
    computes from scores) on the cell's per-person counts at each score level, batched,
    or on the pooled counts for ``counts = "pooled"`` (the texts treated as independent).
    The truth is the population AUC of the rounded score (:func:`populations.scored_truth`).
    """
    from ..auc import auc_ci_counts

    params = person_parameters(suite, cell)
    truth = scored_truth(params)
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    pos, neg = draw_scored(params, (scale.replications, int(params["persons"])), data_rng)
    out = np.empty((len(suite.methods), 6))
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        o = m.options
        nested = o["counts"] == "per_person"
        method = o["method"]
        bootstrap: dict[str, Any] = (
            {
                "scheme": None if o["scheme"] == "recommended" else o["scheme"],
                "n_resamples": scale.resamples,
                "rng": rng,
            }
            if method == "bootstrap"
            else {}
        )
        a, b = (pos, neg) if nested else (pos.sum(1), neg.sum(1))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = auc_ci_counts(
                a, b, nested=nested, method=method, confidence_level=level, **bootstrap
            )
        out[i] = score(result.low, result.high, truth)
    return out
