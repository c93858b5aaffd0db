"""Running a suite: one kernel per population kind, cell seeds, scoring, Dask execution.

Every kernel simulates its cell's data sets once and scores each method on them by
calling the public function a user would call (:func:`perfci.proportion_ci`,
:func:`perfci.clustered_proportion_ci`, :func:`perfci.bootstrap_ci`,
:func:`perfci.bayes.grid_intervals` or :func:`perfci.bayes.shared_grid_intervals`,
:func:`perfci.bayes.fit`, :func:`perfci.bayes.confusion_posterior`,
:func:`perfci.bayes.shared_nested_metric_intervals`, :func:`perfci.bayes.compare_counts`),
batched over the data sets.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from .._core import registry
from .._core.resources import available_cores, check_memory
from ..analytic import proportion_ci
from ..bootstrap import bootstrap_ci
from .populations import _nested_sample, _population_of, confusion_probabilities
from .results import _assemble, _exact_dataset, _planning_dataset
from .schema import Method, Scale, Suite, load_suite, suite_fingerprint
from .storage import (
    WriteError,
    _cell_path,
    _remove_stale_temporaries,
    _write_atomic,
    _write_dataset,
    folder_lock,
    write_text,
)


def _cell_seed(suite: Suite, scale: str, cell: dict) -> np.random.SeedSequence:
    key = f"{suite.name}|{scale}|" + "|".join(f"{k}={cell[k]!r}" for k in sorted(cell))
    digest = hashlib.sha256(key.encode()).digest()
    return np.random.SeedSequence(
        suite.seed,
        spawn_key=tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)),
    )


def _score(low, high, truth, flagged=0) -> np.ndarray:
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


def _bernoulli_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
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
        out[i] = _score(low, high, p)
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
            y,
            n,
            list(group),
            draws=draws,
            confidence_level=level,
            rng=drawn[0] if drawn else None,
        )
        for estimand, (i, _) in group.items():
            put(i, shared[estimand])
    return ends


def _nested_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    from ..design import clustered_proportion_ci

    _, truth = _population_of(suite, cell)
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    y, n = _nested_sample(suite, cell, scale.replications, data_rng)
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
            out[i] = _score(low, high, truth, flagged)
            continue
        else:
            low, high = grid[i]
        out[i] = _score(low, high, truth)
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


def _confusion_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
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
        out[i] = _score(low, high, truth)
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


def _recommended_ends(
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
    from ..metrics import RELEVANT_TEXTS, proportion_counts

    low, high = np.full(counts.shape[0], np.nan), np.full(counts.shape[0], np.nan)
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


def _infinite_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Persons drawn from an infinite population (kinds nested and nested_confusion).

    Every method sees the same data sets. For nested_confusion the cell's metric is
    computed on per-person confusion matrices (binary cells for two classes), and the
    truth is the metric of the population's text-weighted pooled confusion matrix.
    """
    from ..counting import one_vs_rest
    from ..metrics import metric_values
    from .populations import draw_confusion, draw_nested, person_parameters, population_truth

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
        if metric.startswith(("macro_", "micro_")):
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
            out[i] = _score(low, high, truth, flagged)
            continue
        if m.family == "recommended":
            ends = _recommended_ends(metric, counts, scale, level, rng)
        elif m.family == "bayes" and m.options["sampler"] == "nutpie":
            raise ValueError("nutpie is not offered for infinite populations")  # the schema says so
        elif m.family == "bayes":
            ends = grid.get(i)
        else:
            ends = _method_ends(m, metric, counts, scale, level, rng)
        if ends is None:  # the method does not apply to this metric: nothing scored
            out[i] = 0.0
            continue
        out[i] = _score(ends[0], ends[1], truth)
    return out


def _paired_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Two classifiers on the same nested texts: intervals of the paired difference.

    Each method is :func:`perfci.comparison.compare_counts` (what :func:`perfci.compare`
    computes from labels) on the cell's per-person joint counts, batched.
    """
    from ..comparison import compare_counts, recommended_methods
    from ..policy import PAIRED_PROPORTIONS
    from .populations import draw_paired, paired_truth, person_parameters

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
        out[i] = _score(low, high, truth)
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
    return _score(result.low, result.high, truth, int(np.sum(result.flagged & valid)))


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


def _subgroups_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
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
    from .populations import draw_confusion, person_parameters, population_truth

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
        out[i] = _score(result.low, result.high, truth)
    return out


def _scored_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Score the ROC AUC intervals of a classifier's score of nested texts.

    Each method is :func:`perfci.auc.auc_ci_counts` (what :func:`perfci.auc_ci`
    computes from scores) on the cell's per-person counts at each score level, batched,
    or on the pooled counts for ``counts = "pooled"`` (the texts treated as independent).
    The truth is the population AUC of the rounded score (:func:`populations.scored_truth`).
    """
    from ..auc import auc_ci_counts
    from .populations import draw_scored, person_parameters, scored_truth

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
        out[i] = _score(result.low, result.high, truth)
    return out


#: Cells of data sets that one call of :func:`perfci.runs.runs_ci_counts` (or of
#: :func:`perfci.runs.crossed_intervals`) takes at most.
_CROSSED_CHUNK_ELEMENTS = 4_000_000


def _chunks(cells: np.ndarray, rng: np.random.Generator) -> list[tuple[slice, Any]]:
    """Slices of the data sets (axis 0) of at most :data:`_CROSSED_CHUNK_ELEMENTS` cells.

    Bounds the memory of pooled texts' patterns. Each slice comes with its generator:
    `rng` itself for one chunk, else one spawned per chunk.
    """
    size = cells.shape[0]
    step = max(1, _CROSSED_CHUNK_ELEMENTS // max(int(np.prod(cells.shape[1:])), 1))
    starts = range(0, size, step)
    streams = [rng] if len(starts) == 1 else rng.spawn(len(starts))
    return [(slice(start, start + step), s) for start, s in zip(starts, streams, strict=True)]


def _runs_ends(
    cells: np.ndarray,
    multiplicity: np.ndarray | None,
    metric: str,
    options: dict,
    nested: bool,
    scale: Scale,
    level: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Interval ends of :func:`perfci.runs.runs_ci_counts` for a batch of data sets.

    The data sets go in chunks (:func:`_chunks`); one chunk is one call with `rng`,
    several spawn a generator each.
    """
    from ..runs import runs_ci_counts

    method = options["method"]
    resamples = {"n_resamples": scale.resamples} if method == "bootstrap" else {}
    low, high = np.full(cells.shape[0], np.nan), np.full(cells.shape[0], np.nan)
    for part, stream in _chunks(cells, rng):  # chunks, not data sets
        result = runs_ci_counts(
            cells[part],
            metric,
            nested=nested,
            multiplicity=None if multiplicity is None else multiplicity[part],
            estimand=options["estimand"],
            method=method,
            confidence_level=level,
            rng=stream,
            **resamples,
        )
        low[part], high[part] = result.low, result.high
    return low, high


def _runs_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Score intervals of a metric of a classifier's repeated runs, each against its truth.

    Every method sees the same simulated texts, labelled by the same runs
    (:func:`populations.draw_runs`), and is scored against the truth of its estimand
    (:func:`populations.runs_truth`: one value for ``"new_run"``, one per data set for
    ``"these_runs"`` and ``"majority"``, which are about the data set's own runs):

    - ``recommended``, ``variance_components``, ``bootstrap``:
      :func:`perfci.runs.runs_ci_counts` (what :func:`perfci.runs.runs_ci` computes) on
      the persons' cells in each run, or, pooled, on the texts as units (compressed to
      their distinct patterns with a multiplicity);
    - estimand ``"majority"``: the majority vote's cells per person (or pooled) given to
      the recommended interval of one classifier, as :func:`perfci.runs.runs_ci` gives
      them to :func:`perfci.metric_ci`;
    - ``stacked``: the runs' cells summed, as if every run's labels were more texts of
      the same persons (or pooled), given to the recommended interval of one classifier;
    - ``single_run``: the recommended interval of one classifier on the first run.

    A data set without an interval (a run's metric undefined, fewer than two persons or
    texts with a relevant text) is NaN and not counted in ``n_valid``; a majority vote
    tied between the runs counts as negative, in the data and in the truth.
    """
    from .populations import draw_runs, runs_truth

    def ends(cells, weights, metric, o, nested, scale, level, rng):
        return _runs_ends(cells, None if nested else weights, metric, o, nested, scale, level, rng)

    return _crossed_cell(
        suite, scale, cell, seed, draw_runs, runs_truth, "run_effects", "single_run", ends
    )


def _annotators_ends(
    cells: np.ndarray,
    weights: np.ndarray,
    metric: str,
    options: dict,
    nested: bool,
    scale: Scale,
    level: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Interval ends of :func:`perfci.runs.crossed_intervals` for a batch of data sets.

    What :func:`perfci.annotator_ci` computes (annotators as the crossed source, cells
    of 0 where an annotator coded none of a unit's texts), on `cells` (data sets, units,
    A, 4) with `weights` (data sets, units); in chunks as :func:`_runs_ends`, data set k
    of a chunk drawing its bootstrap from the chunk's generator's k-th spawned one.
    """
    from .._core.validation import dataset_generators
    from ..runs import crossed_intervals

    method = options["method"]
    low, high = np.full(cells.shape[0], np.nan), np.full(cells.shape[0], np.nan)
    for part, stream in _chunks(cells, rng):  # chunks, not data sets
        chunk = cells[part].astype(float)
        crossed = crossed_intervals(
            chunk,
            weights[part],
            metric,
            new_source=options["estimand"] == "new_annotator",
            method=method,
            level=level,
            n_resamples=scale.resamples,
            generators=(
                dataset_generators(stream, chunk.shape[0], True) if method == "bootstrap" else None
            ),
            batch=None,
            unit="persons" if nested else "texts",
            source="annotators",
        )
        low[part], high[part] = crossed["low"], crossed["high"]
    return low, high


def _annotators_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Score intervals of a classifier's metric against several annotators.

    Every method sees the same simulated texts, labels and codes
    (:func:`populations.draw_annotators`), and is scored against the truth of its
    estimand (:func:`populations.annotators_truth`: one value for ``"new_annotator"``,
    one per data set for ``"these_annotators"`` and ``"majority"``, which are about the
    data set's own annotators):

    - ``recommended``, ``variance_components``, ``bootstrap``:
      :func:`perfci.runs.crossed_intervals` with the annotators as the crossed source
      (what :func:`perfci.annotator_ci` computes) on the persons' cells against each
      annotator, or, pooled, on the texts as units (compressed to their distinct
      patterns with a multiplicity);
    - estimand ``"majority"``: the cells against the majority code per person (or
      pooled) given to the recommended interval of one reference, as
      :func:`perfci.annotator_ci` gives them to :func:`perfci.metric_ci`;
    - ``single``: the recommended interval of one reference against the first
      annotator's codes, over the texts they coded (the interval of a study with one
      coder);
    - ``stacked``: every (text, annotator) code as a text of its own of the same person
      (or pooled), given to the recommended interval of one reference.

    A data set without an interval (the metric undefined against an annotator or the
    reference, fewer than two persons or texts with a relevant text) is NaN and not
    counted in ``n_valid``; a text whose codes tie has no majority and is left out, in
    the data and in the truth.
    """
    from .populations import annotators_truth, draw_annotators

    def ends(cells, weights, metric, o, nested, scale, level, rng):
        if nested:
            weights = np.ones(cells.shape[:2])
        return _annotators_ends(cells, weights, metric, o, nested, scale, level, rng)

    return _crossed_cell(
        suite,
        scale,
        cell,
        seed,
        draw_annotators,
        annotators_truth,
        "annotator_effects",
        "single",
        ends,
    )


def _crossed_cell(
    suite: Suite,
    scale: Scale,
    cell: dict,
    seed,
    draw: Callable,
    truth_of: Callable,
    effects: str,
    single: str,
    ends: Callable,
) -> np.ndarray:
    """Score the methods of a crossed source (runs or annotators) in one cell.

    `draw` simulates the cell's data sets (a sample with ``person_cells()``,
    ``majority_cells()``, ``patterns()`` and the source's effects as `effects`);
    `truth_of(params, estimand, effects)` gives each estimand's truth; `single` names the
    method of the first run or annotator alone; `ends` computes the crossed intervals.
    One-reference methods (stacked, single, majority) get the recommended interval of
    one classifier against one reference.
    """
    from .populations import person_parameters

    params = person_parameters(suite, cell)
    metric = params["metric"]
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    sample = draw(params, (scale.replications, int(params["persons"])), data_rng)
    per_person = sample.person_cells()  # (data sets, persons, sources, 4)
    patterns = None  # the pooled texts' units, built once if a method takes them
    truths: dict[str, Any] = {}
    out = np.empty((len(suite.methods), 6))
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        o = m.options
        estimand, method, pooled = o["estimand"], o["method"], o["counts"] == "pooled"
        if estimand not in truths:
            truths[estimand] = truth_of(params, estimand, getattr(sample, effects))
        # the cells of one classifier against one reference, if the method takes them
        one: np.ndarray | None = None
        if method == "stacked":
            one = per_person.sum(-2)
        elif method == single:
            one = per_person[..., 0, :]
        elif estimand == "majority":  # the schema admits method "recommended" only
            one = sample.majority_cells()
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if one is not None:
                counts = one.sum(1) if pooled else one
                low, high = _recommended_ends(metric, counts, scale, level, rng, pooled=pooled)
            elif pooled:
                patterns = sample.patterns() if patterns is None else patterns
                low, high = ends(*patterns, metric, o, False, scale, level, rng)
            else:
                low, high = ends(per_person, None, metric, o, True, scale, level, rng)
        out[i] = _score(low, high, truths[estimand])
    return out


_KERNELS: dict[str, Callable] = {
    "bernoulli": _bernoulli_cell,
    "confusion": _confusion_cell,
    "nested_finite": _nested_cell,
    "nested": _infinite_cell,
    "nested_confusion": _infinite_cell,
    "paired_nested": _paired_cell,
    "subgroups_nested": _subgroups_cell,
    "scored_nested": _scored_cell,
    "runs_nested": _runs_cell,
    "annotators_nested": _annotators_cell,
}


def compute_cell(suite: Suite, scale_name: str, cell: dict) -> np.ndarray:
    """Score every method in one cell: (methods, 6) = hits, misses, half-widths, n, flags."""
    scale = suite.scales[scale_name]
    return _KERNELS[suite.population["kind"]](
        suite, scale, cell, _cell_seed(suite, scale_name, cell)
    )


def run_suite(
    suite: Suite | str,
    scale: str = "smoke",
    out: str | os.PathLike = "validation/results",
    *,
    workers: int = 1,
    scheduler: str | None = None,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> xr.Dataset:
    """Run a suite and write ``OUT/SUITE.nc``; return the result dataset.

    Parameters
    ----------
    suite : Suite or str
        A suite or its name.
    scale : str, default "smoke"
        A scale of the suite (``"smoke"``: seconds; ``"full"``: the paper's).
    out : path, default "validation/results"
        Output folder.
    workers : int, default 1
        Dask workers of an embedded LocalCluster (1: run in this process), at most the
        cores available to this process.
    scheduler : str, optional
        Address of an existing Dask scheduler (instead of `workers`); it must answer a
        Dask handshake within :data:`SCHEDULER_TIMEOUT` seconds.
    resume : bool, default False
        Keep the cells a previous run finished (in ``OUT/SUITE.cells/``), if their
        fingerprint is this suite's and scale's.
    progress : callable, optional
        Called with (cells done, cells in all) after each cell.

    Returns
    -------
    xarray.Dataset
        The result (see the module notes).

    Raises
    ------
    ValueError
        For an invalid suite, scale, `workers` or `scheduler`; for cells that `resume`
        cannot use (another suite's or scale's fingerprint, or cell files without one);
        for a scale whose cells would not fit in memory. Nothing is written.
    FolderInUseError
        If another run holds the lock of `out` (the message names its pid).
    SchedulerError
        If `scheduler` does not lead to a Dask scheduler in time.
    WriteError
        If a file cannot be written (a full disk): the earlier result file, if any, and
        every finished cell are kept, and nothing torn is left.

    Notes
    -----
    Everything is written inside `out`: ``SUITE.nc``, ``SUITE.cells/`` and, while the run
    lasts, the lock ``perfci.lock``. Temporary files a killed run left there are deleted.

    Examples
    --------
    The exact scale of the paper's independent suite takes about a second:

    >>> import tempfile
    >>> from perfci import harness
    >>> with tempfile.TemporaryDirectory() as out:
    ...     ds = harness.run_suite("paper-independent", "exact", out)
    >>> round(float(ds.sel(n=20, p=0.95, ci_method="wald")["coverage"]), 3)
    0.639
    """
    suite = load_suite(suite) if isinstance(suite, str) else suite
    if not isinstance(suite, Suite):
        raise ValueError(f"`suite` must be a Suite or a suite's name; got {suite!r}.")
    registry.SUITE_KEYS["name"].check(suite.name, "suite.name")
    if scale not in suite.scales:
        raise ValueError(f"`scale` must be one of {sorted(suite.scales)}; got {scale!r}.")
    workers = check_workers(workers)
    if scheduler is not None:
        if not isinstance(scheduler, str) or not scheduler:
            raise ValueError(
                f"`scheduler` must be an address such as 'tcp://host:8786'; got {scheduler!r}."
            )
        if workers != 1:
            raise ValueError("give `workers` or `scheduler`, not both.")
        check_scheduler(scheduler)
    if scheduler is None:
        _check_scale_memory(suite, scale, workers)
    out = Path(out)
    with folder_lock(out):
        _remove_stale_temporaries(out)
        target = out / f"{suite.name}.nc"
        if suite.scales[scale].exact:
            # Exact mode is one vectorized enumeration per method: nothing to persist per cell.
            if suite.population["kind"] == "nested_planning":
                dataset = _planning_dataset(suite, scale)
            else:
                dataset = _exact_dataset(suite, scale)
            if progress:
                progress(1, 1)
            _write_dataset(dataset, target)
            return dataset
        folder = out / f"{suite.name}.cells"
        _prepare_cells(folder, suite, scale, resume)
        cells = suite.cells(scale)
        todo = [c for c in cells if not _cell_path(folder, c).exists()]
        done = len(cells) - len(todo)
        if progress:
            progress(done, len(cells))
        for cell, scores in _execute(suite, scale, todo, workers, scheduler):
            _write_atomic(_cell_path(folder, cell), scores)
            done += 1
            if progress:
                progress(done, len(cells))
        dataset = _assemble(suite, scale, cells, folder)
        try:
            _write_dataset(dataset, target)
        except WriteError as exc:
            raise WriteError(
                exc.errno,
                f"{exc}; every cell is kept in {folder}: make room and run again with "
                "`resume` to write the result",
            ) from exc
        return dataset


def _check_scale_memory(suite: Suite, scale: str, workers: int) -> None:
    """Refuse a scale whose cells would not fit in this machine's memory, before starting.

    A cell holds its replications' bootstrap replicates (replications x resamples, with
    room to compute the intervals) and, for a nested population, a sampling key per
    replication and person of the population; each local worker holds one cell.
    """
    spec = suite.scales[scale]
    if spec.exact:  # an enumeration checks its own size
        return
    per_cell = 0.0
    if any(m.family == "bootstrap" for m in suite.methods):
        per_cell += 3 * 8.0 * spec.replications * spec.resamples
    if suite.population["kind"] == "nested_finite":
        per_cell += 3 * 8.0 * spec.replications * suite.population["persons"]
    on = f" on each of {workers} workers" if workers > 1 else ""
    check_memory(
        per_cell * workers,
        f"`scales.{scale}` of suite {suite.name!r} ({spec.replications} replications x "
        f"{spec.resamples} resamples per cell{on})",
        "ask for fewer replications or resamples in that scale"
        + (", or fewer `workers`" if workers > 1 else ""),
    )


def _prepare_cells(folder: Path, suite: Suite, scale: str, resume: bool) -> None:
    """Make `folder` hold only cells of this suite and scale, and its fingerprint.

    With `resume`, cells are kept only under the fingerprint of this suite and scale: a
    foreign fingerprint, or cell files without one (a run of another version, whose
    cells may have another seed), refuse. Without it, the fingerprint goes first, then
    the cells, so an interrupted clean-up never leaves cells that look resumable.
    """
    marker = folder / "fingerprint.txt"
    fingerprint = suite_fingerprint(suite, scale)
    folder.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(folder)  # left by a run killed while writing
    if resume:
        if marker.exists():
            if marker.read_bytes() != fingerprint.encode():
                raise ValueError(
                    f"{folder} holds cells of another version of suite {suite.name!r} or "
                    "another scale; run without `resume` to start again."
                )
        elif any(folder.glob("*.npy")):
            raise ValueError(
                f"{folder} holds cell files but no fingerprint.txt, so their suite, seed "
                "and scale are unknown and they cannot be resumed; run without `resume` "
                "to start again."
            )
    else:
        marker.unlink(missing_ok=True)
        for old in folder.glob("*.npy"):
            old.unlink()
    if not marker.exists():
        write_text(marker, fingerprint)


#: Seconds allowed to reach a scheduler given by address and to read its Dask handshake.
SCHEDULER_TIMEOUT = 5.0

#: glibc's allocator settings of the embedded LocalCluster's workers (Dask config keys):
#: freed memory up to 256 MiB stays in the heap, and blocks below 64 MiB come from it.
WORKER_MALLOC = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": str(256 << 20),
    "distributed.nanny.pre-spawn-environ.MALLOC_MMAP_THRESHOLD_": str(64 << 20),
}

# A Dask handshake is one small message; a peer announcing more is not a Dask scheduler.
_MAX_HANDSHAKE = 1 << 16


class SchedulerError(ConnectionError):
    """The `scheduler` address does not lead to a Dask scheduler.

    Attributes
    ----------
    address : str
        The address given.
    reason : str
        What went wrong, e.g. ``"refused the connection (nothing listens there)"``.
    """

    def __init__(self, address: str, reason: str) -> None:
        super().__init__(address, reason)
        self.address, self.reason = address, reason

    def message(self, argument: str = "scheduler") -> str:
        """Return the message naming `argument` (a keyword, or a flag such as ``--scheduler``)."""
        return f"`{argument}` {self.address!r} {self.reason}."

    def __str__(self) -> str:
        return self.message()


def check_scheduler(address: str, timeout: float | None = None) -> None:
    """Check that a Dask scheduler answers at `address`, within `timeout` seconds.

    For a ``tcp://`` address (or ``HOST:PORT``) this connects with a timeout and reads
    the handshake a Dask scheduler sends to every new connection: a closed port, a host
    that does not answer, or a service that is not Dask (a web server, anything that
    sends something else or nothing) is an error within `timeout` (default
    :data:`SCHEDULER_TIMEOUT`), before any work starts. Other schemes (``tls://``,
    ``ucx://``) are left to Dask's own connection, with the same timeout.

    Raises
    ------
    SchedulerError
        Naming the address and what went wrong.

    Examples
    --------
    >>> import socket
    >>> from perfci.harness.execution import SchedulerError, check_scheduler
    >>> with socket.socket() as s:  # a free port, closed again
    ...     s.bind(("127.0.0.1", 0))
    ...     port = s.getsockname()[1]
    >>> try:
    ...     check_scheduler(f"tcp://127.0.0.1:{port}")
    ... except SchedulerError as exc:
    ...     print(exc.reason)
    refused the connection (nothing listens there)
    """
    import socket
    import struct
    import time

    timeout = SCHEDULER_TIMEOUT if timeout is None else timeout
    scheme, sep, location = address.rpartition("://")
    if not sep:
        scheme, location = "tcp", address
    if scheme != "tcp":
        return
    host, _, port = location.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise SchedulerError(address, "is not an address of the form tcp://HOST:PORT")
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    except ConnectionRefusedError:
        raise SchedulerError(address, "refused the connection (nothing listens there)") from None
    except TimeoutError:
        raise SchedulerError(address, f"could not be reached within {timeout:g} s") from None
    except OSError as exc:
        raise SchedulerError(address, f"could not be reached: {exc.strerror or exc}") from None

    def receive(n: int) -> bytes:
        data = b""
        while len(data) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise ConnectionResetError
            data += chunk
        return data

    not_dask = "is not a Dask scheduler"
    with sock:
        try:
            (length,) = struct.unpack("Q", receive(8))  # Dask's frame header
            handshake = receive(length) if 0 < length <= _MAX_HANDSHAKE else b""
        except TimeoutError:
            raise SchedulerError(
                address, f"{not_dask}: it sent no Dask handshake within {timeout:g} s"
            ) from None
        except OSError:
            raise SchedulerError(
                address, f"{not_dask}: it closed the connection without a Dask handshake"
            ) from None
    if b"compression" not in handshake or b"python" not in handshake:
        raise SchedulerError(address, f"{not_dask}: its first message is not a Dask handshake")


def check_workers(workers: object, argument: str = "workers") -> int:
    """Return `workers` if it is an integer from 1 to the cores this process may use.

    Examples
    --------
    >>> from perfci.harness.execution import check_workers
    >>> check_workers(1)
    1
    >>> check_workers(0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: `workers` must be an integer from 1 to ... (the cores available); got 0.
    """
    most = available_cores()
    if (
        isinstance(workers, bool)
        or not isinstance(workers, int | np.integer)
        or not (1 <= workers <= most)
    ):
        raise ValueError(
            f"`{argument}` must be an integer from 1 to {most} (the cores available); "
            f"got {workers!r}."
        )
    return int(workers)


def _execute(suite, scale, cells, workers, scheduler) -> Iterable[tuple[dict, np.ndarray]]:
    if not cells:
        return
    if scheduler is None and workers <= 1:
        for cell in cells:
            yield cell, compute_cell(suite, scale, cell)
        return
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler is None:
        import dask

        # Dask's workers trim the heap at 64 KiB, which also pins glibc's mmap threshold
        # at 128 KiB: every array of a cell is then a fresh mapping, page-faulted in and
        # zeroed anew. Cells allocate the same few arrays again and again; keep them.
        with dask.config.set(WORKER_MALLOC):
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                scheduler_port=0,
            )
        client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout=SCHEDULER_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise SchedulerError(scheduler, f"could not be joined: {reason}") from None
    try:
        futures = {
            client.submit(compute_cell, suite, scale, cell, pure=False): i
            for i, cell in enumerate(cells)
        }
        for future in as_completed(futures):
            yield cells[futures[future]], future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
