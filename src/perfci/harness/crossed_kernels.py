"""The scoring kernels of crossed designs: a classifier's repeated runs, several annotators.

Kinds ``runs_nested`` and ``annotators_nested`` share one kernel (``_crossed_cell``):
every method sees the same simulated texts, labelled by the same runs or coded by the
same annotators (:mod:`~perfci.harness.crossed_populations`), and is scored against the
truth of its estimand. The crossed intervals are :func:`perfci.runs.runs_ci_counts` and
:func:`perfci.runs.crossed_intervals` (what :func:`perfci.runs_ci` and
:func:`perfci.annotator_ci` compute); the one-reference intervals are the recommended
interval of one classifier (:func:`~perfci.harness.kernels.recommended_ends`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .crossed_populations import annotators_truth, draw_annotators, draw_runs, runs_truth
from .kernels import recommended_ends, score
from .populations import person_parameters
from .schema import Scale, Suite

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


def runs_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Score intervals of a metric of a classifier's repeated runs, each against its truth.

    Every method sees the same simulated texts, labelled by the same runs
    (:func:`populations.draw_runs`), and is scored against the truth of its estimand
    (:func:`populations.runs_truth`: one value for ``"new_run"``, one per data set for
    ``"these_runs"`` and ``"majority"``, which are about the data set's own runs):

    - ``recommended``, ``variance_components``, ``bootstrap``:
      :func:`perfci.runs.runs_ci_counts` (what :func:`perfci.runs.runs_ci` computes) on
      the persons' cells in each run, or, pooled, on the texts as units (compressed to
      their distinct patterns with a multiplicity); ``recommended`` is the median run's
      one-classifier interval in a tiny design, drawing from the method's generator;
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

    def ends(cells, weights, metric, o, nested, scale, level, rng, extras):
        # every run labels every text: nothing is imputed, `extras` is None
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
    extras: dict | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Interval ends of :func:`perfci.runs.crossed_intervals` for a batch of data sets.

    What :func:`perfci.annotator_ci` computes (annotators as the crossed source, every
    annotator's missing codes imputed), on `cells` (data sets, units, A, 4) with
    `weights` (data sets, units) and the `observed` cells and the imputation's
    `influence` in `extras` (None when nothing was imputed); in chunks as
    :func:`_runs_ends`, data set k of a chunk drawing its bootstrap from the chunk's
    generator's k-th spawned one.
    """
    from .._core.validation import dataset_generators
    from ..runs import crossed_intervals

    method = options["method"]
    extras = dict(extras or {})
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
            generators=(  # the bootstrap's, and the median annotator's of a tiny design
                dataset_generators(stream, chunk.shape[0], True)
                if method in ("bootstrap", "recommended")
                else None
            ),
            batch=None,
            unit="persons" if nested else "texts",
            source="annotators",
            **{name: value[part] for name, value in extras.items()},
        )
        low[part], high[part] = crossed["low"], crossed["high"]
    return low, high


def annotators_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
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
      patterns with a multiplicity); ``recommended`` is the median annotator's
      one-reference interval in a tiny design;
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

    def ends(cells, weights, metric, o, nested, scale, level, rng, extras):
        if nested:
            weights = np.ones(cells.shape[:2])
        return _annotators_ends(cells, weights, metric, o, nested, scale, level, rng, extras)

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
    ``majority_cells()``, ``crossed_person_cells()`` and ``crossed_patterns()`` (the
    crossed methods' cells, with the cells of the codes given where codes were imputed)
    and the source's effects as `effects`);
    `truth_of(params, estimand, effects)` gives each estimand's truth; `single` names the
    method of the first run or annotator alone; `ends` computes the crossed intervals.
    One-reference methods (stacked, single, majority) get the recommended interval of
    one classifier against one reference.
    """
    params = person_parameters(suite, cell)
    metric = params["metric"]
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    sample = draw(params, (scale.replications, int(params["persons"])), data_rng)
    per_person = sample.person_cells()  # (data sets, persons, sources, 4)
    crossed = None  # the crossed methods' cells (missing codes imputed), built once
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
                low, high = recommended_ends(metric, counts, scale, level, rng, pooled=pooled)
            elif pooled:
                patterns = sample.crossed_patterns() if patterns is None else patterns
                cells, weights, extras = patterns
                low, high = ends(cells, weights, metric, o, False, scale, level, rng, extras)
            else:
                crossed = sample.crossed_person_cells(per_person) if crossed is None else crossed
                cells, extras = crossed
                low, high = ends(cells, None, metric, o, True, scale, level, rng, extras)
        out[i] = score(low, high, truths[estimand])
    return out
