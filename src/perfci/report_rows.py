"""The rows of :func:`perfci.report` for one classifier's labels against one reference.

Per metric (the rows whose bootstraps resample alike share their draws; with
``bayes=True`` each followed by its Bayesian rows, :mod:`perfci.bayes_rows`), per class
for multi-class labels, the ``roc_auc`` row of a score, the differences between
subgroups (:func:`perfci.subgroups.compare_groups_table`), and the table they make. What
a row holds and says is in :mod:`perfci.report_table`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from . import policy
from ._core.labels import as_label_array, sorted_labels
from ._core.resampling import default_resamples
from ._core.validation import UNSET, check_real_array
from .auc import auc_ci_named
from .bayes_rows import bayes_rows
from .counting import ConfusionCounts, confusion
from .metric import (
    AVERAGED_METRICS,
    IntervalPlan,
    computed_interval,
    metric_ci_of_auc,
    plan_interval,
    shared_bootstraps,
)
from .metrics import BINARY_METRICS
from .policy import RECOMMENDED
from .report_table import assembled_table, auc_row, metric_row

__all__ = [
    "assembled_table",
    "auc_rows",
    "difference_rows",
    "metric_rows",
    "report_inputs",
    "subset_rows",
]


def metric_rows(
    counts: ConfusionCounts, metrics: list[str], options: dict, rng: np.random.Generator, where: str
) -> tuple[list[dict], list[str]]:
    """Return the rows of `metrics` on `counts`, and the metrics left out (with why).

    `options` are :func:`perfci.report`'s (the method options, ``confidence_level``,
    ``bayes_sampler`` and ``bayes_prior_sensitivity``); each metric draws from its own
    child of `rng`; `where` says which texts, in the reasons.
    """
    rows, skipped = [], []
    options = dict(options)
    bayes_sampler = options.pop("bayes_sampler")
    sensitivity = options.pop("bayes_prior_sensitivity", False)
    level = options["confidence_level"]  # also the plans': it sets the default resamples
    child_rngs = rng.spawn(len(metrics))
    plans: dict[str, tuple[IntervalPlan, np.random.Generator]] = {}
    for metric, child in zip(metrics, child_rngs, strict=True):
        try:
            # the report's options apply to the rows whose method uses them
            plans[metric] = (plan_interval(counts, metric, options=options, strict=False), child)
        except ValueError as exc:
            # Undefined metrics and too few persons are skipped from the table and named.
            skipped.append(f"{metric}{where} ({str(exc).rstrip('.')})")
    shared = shared_bootstraps(plans, level)
    for metric, (plan, child) in plans.items():
        try:
            ci = computed_interval(
                plan, confidence_level=level, rng=child, bootstrap=shared.get(metric)
            )
        except ValueError as exc:
            skipped.append(f"{metric}{where} ({str(exc).rstrip('.')})")
            continue
        rows.append(metric_row(ci))
        if bayes_sampler is not None:
            rows += bayes_rows(counts, metric, level, bayes_sampler, child, sensitivity)
    return rows, skipped


def subset_rows(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    groups: np.ndarray | None,
    positive: Any,
    metrics: list[str] | None,
    options: dict,
    rng: np.random.Generator,
    where: str,
) -> tuple[list[dict], list[str]]:
    """Return the rows of one set of texts (all, or a subgroup), and those left out.

    Binary labels: a row per binary metric; multi-class labels: a row per class and
    binary metric (its one-vs-rest metric), then a row per average over classes.
    """
    counts = confusion(y_true, y_pred, positive=positive, groups=groups)
    if counts.classes is None:  # binary labels
        chosen = [m for m in (metrics or BINARY_METRICS) if m in BINARY_METRICS]
        rows, skipped = metric_rows(counts, chosen, options, rng, where)
        return rows, skipped
    rows, skipped = [], []
    for cls in counts.classes:
        per_class = confusion(y_true, y_pred, positive=cls, groups=groups)
        chosen = [m for m in (metrics or BINARY_METRICS) if m in BINARY_METRICS]
        r, s = metric_rows(per_class, chosen, options, rng, f"{where} for class {cls!r}")
        rows += [{"class": cls, **row} for row in r]
        skipped += s
    averaged = [m for m in (metrics or AVERAGED_METRICS) if m in AVERAGED_METRICS]
    r, s = metric_rows(counts, averaged, options, rng, where)
    rows += [{"class": "", **row} for row in r]
    return rows, skipped + s


def auc_rows(
    t: np.ndarray,
    scores: np.ndarray,
    g: np.ndarray | None,
    positive: Any,
    level: float,
    where: str,
    with_class: bool,
) -> tuple[list[dict], list[str]]:
    """Return the ``roc_auc`` row of a score by the recommended interval, or why it is left out."""
    try:
        ci = metric_ci_of_auc(
            auc_ci_named(
                t,
                {"score": scores},
                g,
                method=RECOMMENDED,
                confidence_level=level,
                positive=positive,
                scheme=None,
                interval=UNSET,
                n_resamples=UNSET,
                rng=None,
                batch=None,
            )
        )
    except ValueError as exc:
        return [], [f"roc_auc{where} ({str(exc).rstrip('.')})"]
    return [auc_row(ci, with_class)], []


def report_inputs(
    t: np.ndarray, p: np.ndarray, groups: Any, score: Any, by: Any, reference: Any
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None, list[tuple[Any, np.ndarray]]]:
    """Check :func:`perfci.report`'s per-text arguments against the labels `t` and `p`.

    Return the persons, the scores and the subgroups (None where not given), and the sets
    of texts the report has rows for: all texts, then each subgroup in sorted order.
    """
    g = None if groups is None else as_label_array("groups", groups)
    scores = None
    if score is not None:
        scores = check_real_array(
            "score", score.to_numpy() if isinstance(score, pd.Series | pd.Index) else score
        )
        if scores.ndim != 1:
            raise ValueError(f"`score` must be one-dimensional; got shape {scores.shape}.")
    for name, arr in (("y_pred", p), ("groups", g), ("score", scores)):
        if arr is not None and arr.shape != t.shape:
            raise ValueError(f"`{name}` must have one value per text ({t.size}); got {arr.size}.")
    subsets: list[tuple[Any, np.ndarray]] = [("all", np.ones(t.size, dtype=bool))]
    b = None
    if by is not None:
        b = as_label_array("by", by)
        if b.shape != t.shape:
            raise ValueError(f"`by` must have one label per text ({t.size}); got {b.size}.")
        subsets += [(v, b == v) for v in sorted_labels(pd.unique(b))]
        if reference is not None:
            from .subgroups import subgroup_levels  # SciPy's stats, when it is needed

            # a reference that is not a subgroup fails before the work
            subgroup_levels(b, reference)
    return g, scores, b, subsets


def difference_rows(
    t: np.ndarray,
    p: np.ndarray,
    b: np.ndarray,
    g: np.ndarray | None,
    positive: Any,
    metrics: list[str] | None,
    reference: Any,
    level: float,
    n_resamples: int | str,
    rng: np.random.Generator,
) -> tuple[list[dict], list[str]]:
    """Return the report's rows of the differences between subgroups, and those left out."""
    from .subgroups import compare_groups_table, subgroup_cells, subgroup_levels

    multiclass = positive is None
    classes = sorted_labels(pd.unique(np.concatenate([t, p]))) if multiclass else [positive]
    chosen = [m for m in (metrics or BINARY_METRICS) if m in BINARY_METRICS]
    skipped = []
    if multiclass and any(m in AVERAGED_METRICS for m in (metrics or AVERAGED_METRICS)):
        skipped.append(
            "the differences of averages over classes (a difference between subgroups is "
            "of a binary metric: compare a class's one-vs-rest metric)"
        )
    rows: list[dict] = []
    nested = g is not None
    levels, ref_level = subgroup_levels(b, reference) if chosen else ([], None)
    for cls in classes:
        where = f" for class {cls!r}" if multiclass else ""
        cells = subgroup_cells(t, p, b, g, cls, levels) if chosen else None
        for metric, child in zip(chosen, rng.spawn(len(chosen)), strict=True):
            method = policy.recommended_group_difference(metric, nested)
            resamples = default_resamples(level) if isinstance(n_resamples, str) else n_resamples
            table, notes = compare_groups_table(
                cells,
                levels,
                ref_level,
                metric,
                nested=nested,
                method=method,
                simultaneous=None,
                level=level,
                n_resamples=resamples if method == "bootstrap" else UNSET,
                rng=child,
            )
            for row, note in zip(table.itertuples(), notes, strict=True):
                if np.isnan(row.low):
                    skipped.append(
                        f"the {metric} difference{where} of subgroup {row.subgroup!r} from "
                        f"{row.reference!r} ({note})"
                    )
                    continue
                rows.append(_difference_row(row, note, metric, cls if multiclass else None, nested))
    return rows, skipped


def _difference_row(row: Any, note: str, metric: str, cls: Any, nested: bool) -> dict:
    """Return the report row of one row of :func:`perfci.compare_groups`' table.

    `cls` is the class of multi-class labels (None for binary labels).
    """
    persons = pd.NA if not nested else int(row.persons) + int(row.persons_reference)
    both = (
        f"{row.subgroup} {row.estimate:.3f} (relevant n {row.relevant_n}"
        + ("" if not nested else f", {row.persons} persons")
        + f") minus {row.reference} {row.estimate_reference:.3f} (relevant n "
        + f"{row.relevant_n_reference}"
        + ("" if not nested else f", {row.persons_reference} persons")
        + ")"
    )
    return {
        "by": row.subgroup,
        "reference": row.reference,
        **({} if cls is None else {"class": cls}),
        "metric": metric,
        "estimate": row.difference,
        "low": row.low,
        "high": row.high,
        "method": row.method,
        "sources": "texts, persons" if nested else "texts",
        "relevant_n": int(row.relevant_n) + int(row.relevant_n_reference),
        "persons": persons,
        "icc": np.nan,
        "design_effect": np.nan,
        "n_eff": np.nan,
        "note": "; ".join(n for n in (both, note) if n),
    }
