"""The validation report's crossed designs: several annotators, or repeated runs.

With a column per annotator in `y_true` or a column per run in `y_pred`,
:func:`perfci.validation_report` still runs :func:`perfci.report` once: its rows are the
``new_annotator`` intervals of :func:`perfci.annotator_ci` or the ``new_run`` intervals of
:func:`perfci.runs.runs_ci`, each with the sources it includes. This module adds what a
reader of such a design needs beside them (:func:`crossed_parts`): the table of each
annotator, their majority, these annotators and a new one (:func:`perfci.annotator_table`,
one per metric), or each run's estimate (the metric of the run's own confusion matrix,
:func:`perfci.confusion`), the confusion matrix of each annotator or run, the data
summary; their tables (:func:`annotator_section`, :func:`runs_section`) and the methods
paragraph's sentence (:func:`crossed_sentence`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .report_parts import binary_labels, data_summary, matrix_of
from .tables import Marks, Table, all_texts, count, interval, is_bayes, level_text, number

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "CROSSED_REFERENCE",
    "CrossedParts",
    "RUNS_AS_COLUMNS",
    "annotator_section",
    "crossed_parts",
    "crossed_source",
    "listing",
    "refuse_with_crossed",
    "runs_section",
    "crossed_sentence",
]

#: The reference the sentence cites for the variance components' degrees of freedom.
CROSSED_REFERENCE = (
    "Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance "
    "components. Biometrics Bulletin, 2(6), 110–114."
)
#: The most runs whose estimates are columns of the table of intervals; more get a table.
RUNS_AS_COLUMNS = 8
#: How the two crossed designs are named in errors.
_WHAT = {
    "annotators": "several annotators (a column per annotator in `y_true`)",
    "runs": "repeated runs (a column per run in `y_pred`)",
}


def listing(items: Sequence[Any]) -> str:
    """Join names as ``a``, ``a and b``, ``a, b and c``."""
    names = [str(i) for i in items]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def crossed_source(y_true: Any, y_pred: Any) -> str | None:
    """Return the crossed design of the labels: ``"annotators"``, ``"runs"`` or None."""
    from .._core.labels import has_columns

    annotators, runs = has_columns(y_true), has_columns(y_pred)
    if annotators and runs:
        raise ValueError(
            "`y_true` with a column per annotator and `y_pred` with a column per run are not "
            "available together in validation_report: give one run (or the runs' majority "
            "vote), or one reference (perfci.report tabulates both)."
        )
    return "annotators" if annotators else "runs" if runs else None


def refuse_with_crossed(source: str | None, options: Mapping[str, Any]) -> None:
    """Refuse the options a report of a crossed design does not have, naming the first."""
    if source is None:
        return
    for name, value in options.items():
        if value is not None and value is not False:
            raise ValueError(
                f"`{name}` is not available with {_WHAT[source]} in validation_report: "
                "report against one reference and one run for it."
            )


@dataclass(frozen=True)
class CrossedParts:
    """What a report of a crossed design shows beside its table.

    Attributes
    ----------
    kind : str
        ``"annotators"`` or ``"runs"``.
    summary : dict
        The data summary (the keys of :func:`perfci.publishing.report_parts.data_summary`)
        with ``annotators`` or ``runs`` (their names) and each one's positives
        (``annotator_positives``, ``annotator_texts``; ``run_positives``).
    confusion : tuple of dict
        The confusion matrix of each annotator or run (:func:`matrix_of`).
    annotators : pandas.DataFrame or None
        :func:`perfci.annotator_table` of every metric, a ``metric`` column first.
    runs : pandas.DataFrame or None
        Each run's estimate of every metric: ``metric``, ``run``, ``estimate``.
    """

    kind: str
    summary: dict[str, Any]
    confusion: tuple[dict[str, Any], ...]
    annotators: pd.DataFrame | None
    runs: pd.DataFrame | None


def _persons(groups: Any) -> dict[str, Any]:
    """Return the persons and their numbers of texts, as the data summary gives them."""
    if groups is None:
        return {"persons": None, "texts_per_person": None}
    _, sizes = np.unique(np.asarray(groups, dtype=object).astype(str), return_counts=True)
    return {
        "persons": int(sizes.size),
        "texts_per_person": (int(sizes.min()), float(np.median(sizes)), int(sizes.max())),
    }


def crossed_parts(
    kind: str,
    y_true: Any,
    y_pred: Any,
    metrics: Sequence[str],
    *,
    names: Mapping[str, str],
    groups: Any,
    positive: Any,
    confidence_level: float,
    rng: np.random.Generator,
) -> CrossedParts:
    """Return the per-annotator or per-run parts of a report of a crossed design."""
    if kind == "annotators":
        return _annotator_parts(
            y_true, y_pred, metrics, names, groups, positive, confidence_level, rng
        )
    return _run_parts(y_true, y_pred, metrics, names, groups, positive)


def _annotator_parts(
    y_true: Any,
    y_pred: Any,
    metrics: Sequence[str],
    names: Mapping[str, str],
    groups: Any,
    positive: Any,
    level: float,
    rng: np.random.Generator,
) -> CrossedParts:
    """Each annotator's table (per metric), confusion matrix and positives."""
    import pandas as pd

    from .._core.labels import label_table
    from ..annotators import annotator_table, read_codes
    from ..counting import confusion, normalize_labels

    truth, said, chosen = read_codes(y_true, y_pred, positive)
    table = label_table("y_true", y_true)  # the codes as read_codes read them
    codes = np.asarray(table.values, dtype=object)[~table.missing]
    pred = y_pred.to_numpy() if isinstance(y_pred, pd.Series) else y_pred
    given = normalize_labels({"y_true": codes, "y_pred": pred}, positive=positive, ndim=1)
    labels = binary_labels(given.classes, chosen)
    who = (
        [str(c) for c in y_true.columns]
        if isinstance(y_true, pd.DataFrame)
        else [f"annotator {i}" for i in range(truth.shape[1])]
    )  # as perfci.annotator_table names them
    frames = []
    for metric, child in zip(metrics, rng.spawn(len(metrics)), strict=True):
        rows = annotator_table(
            y_true,
            y_pred,
            metric,
            groups=groups,
            positive=positive,
            confidence_level=level,
            rng=child,
        )
        frames.append(rows.assign(metric=metric)[["metric", *rows.columns]])
    matrices, coded, positives = [], [], []
    for a, name in enumerate(who):
        keep = ~np.isnan(truth[:, a])
        cells = confusion(truth[keep, a].astype(int), said[keep].astype(int), positive=1)
        matrices.append(matrix_of(cells, labels, name, names["y_pred"]))
        coded.append(int(keep.sum()))
        positives.append(int(np.nansum(truth[:, a])))
    summary = {
        "texts": int(truth.shape[0]),
        **_persons(groups),
        "positive": labels[0],
        "reference_positives": None,
        "classifier_positives": int(said.sum()),
        "classes": None,
        "annotators": who,
        "annotator_texts": coded,
        "annotator_positives": positives,
    }
    frame = pd.concat(frames, ignore_index=True) if frames else None
    return CrossedParts("annotators", summary, tuple(matrices), frame, None)


def _run_parts(
    y_true: Any,
    y_pred: Any,
    metrics: Sequence[str],
    names: Mapping[str, str],
    groups: Any,
    positive: Any,
) -> CrossedParts:
    """Each run's confusion matrix, positives and estimate of every metric."""
    import pandas as pd

    from ..counting import confusion, normalize_labels
    from ..crossed import runs_table
    from ..metrics import compute_metric

    runs = runs_table(y_pred)
    who = (
        [str(c) for c in y_pred.columns]
        if isinstance(y_pred, pd.DataFrame)
        else [f"run {r + 1}" for r in range(runs.shape[1])]
    )
    truth_in = y_true.to_numpy() if isinstance(y_true, pd.Series) else y_true
    given = normalize_labels(
        {"y_true": truth_in, "y_pred": runs.T}, positive=positive, ndim=None
    )  # as perfci.report reads them
    t, said = np.asarray(given.values["y_true"]), np.asarray(given.values["y_pred"]).T
    labels = binary_labels(given.classes, given.positive)
    matrices, rows, positives = [], [], []
    first = None
    for r, name in enumerate(who):
        cells = confusion(t, said[:, r], groups=groups, positive=given.positive)
        first = cells if first is None else first
        matrices.append(matrix_of(cells, labels, names["y_true"], name))
        pooled = np.asarray(cells.counts).reshape(-1, 4).sum(0)
        positives.append(int(pooled[0] + pooled[1]))
        for metric in metrics:
            # the table's metrics: runs_ci left out any metric undefined in a run
            value = float(compute_metric(pooled, metric))
            rows.append({"metric": metric, "run": name, "estimate": value})
    assert first is not None  # runs_table holds at least 2 runs
    summary = data_summary(first) | {"classifier_positives": None}
    summary |= {"runs": who, "run_positives": positives}
    frame = pd.DataFrame(rows, columns=["metric", "run", "estimate"])
    return CrossedParts("runs", summary, tuple(matrices), None, frame)


# ------------------------------------------------------------------------------ tables


def annotator_section(
    frame: pd.DataFrame, confidence_level: float, digits: int, marks: Marks
) -> Table:
    """Return the table of the metric against each annotator, per metric."""
    level = level_text(confidence_level)
    rows = []
    for r in frame.to_dict("records"):
        rows.append(
            (
                str(r["metric"]),
                str(r["reference"]),
                number(r["estimate"], digits),
                interval(r["low"], r["high"], digits),
                marks.mark(str(r["method"])),
                str(r["sources"]),
                count(r["texts"]),
            )
        )
    headers = ("Metric", "Reference", "Estimate", f"{level} CI", "Method", "Sources", "Texts")
    numeric = (False, False, True, False, False, False, True)
    caption = (
        "The classifier's metric against each annotator (over the texts that annotator "
        "coded), against their majority label (texts whose codes tie left out), the mean "
        "over these annotators, and against a new annotator (the interval of the table "
        f"above), each with its {level} confidence interval and the sources of variation "
        "it includes (perfci.annotator_table)."
    )
    return Table("annotators", caption, headers, numeric, tuple(rows), grouped=True)


def runs_section(
    table: pd.DataFrame,
    runs: pd.DataFrame,
    confidence_level: float,
    digits: int,
    marks: Marks,
) -> list[Table]:
    """Return the tables of each metric's new-run interval and of each run's estimate.

    Up to :data:`RUNS_AS_COLUMNS` runs, each run's estimate is a column of the table of
    intervals; with more, a second table holds them, a row per run and a column per
    metric, so that no table is wider than the metrics (and fits a printed page).
    """
    level = level_text(confidence_level)
    main = all_texts(table)
    main = main[~main["method"].map(is_bayes).astype(bool)]
    who = list(dict.fromkeys(runs["run"]))
    by_run = {(str(r["metric"]), str(r["run"])): r["estimate"] for r in runs.to_dict("records")}
    beside = who if len(who) <= RUNS_AS_COLUMNS else []
    rows = []
    for r in main.to_dict("records"):
        metric = str(r["metric"])
        rows.append(
            (
                metric,
                number(r["estimate"], digits),
                interval(r["low"], r["high"], digits),
                marks.mark(str(r["method"])),
                str(r["sources"]),
                *(number(by_run.get((metric, run)), digits) for run in beside),
            )
        )
    headers = ("Metric", "New run", f"{level} CI", "Method", "Sources", *beside)
    numeric = (False, True, False, False, False, *([True] * len(beside)))
    caption = (
        f"Repeated runs: each metric's {level} interval about a new run of the classifier "
        "(the estimand new_run, as in the table above) with the sources of variation it "
        f"includes, and the estimate of each of the {len(who)} runs"
        + ("" if beside else " (in the table below)")
        + "; the new-run estimate is their mean."
    )
    tables = [Table("runs", caption, headers, numeric, tuple(rows))]
    if not beside:
        metrics = [str(m) for m in main["metric"]]
        tables.append(
            Table(
                "runs-per-run",
                f"The estimate of each of the {len(who)} runs, by metric.",
                ("Run", *metrics),
                (False, *([True] * len(metrics))),
                tuple(
                    (str(run), *(number(by_run.get((m, run)), digits) for m in metrics))
                    for run in who
                ),
            )
        )
    return tables


# ---------------------------------------------------------------------------- sentence


def crossed_sentence(
    kind: str, table: pd.DataFrame, summary: Mapping[str, Any], citation: str
) -> tuple[str, bool]:
    """Return the methods paragraph's sentence on a crossed design, and whether it cites."""
    main = all_texts(table)
    main = main[~main["method"].map(is_bayes).astype(bool)]
    sources = list(dict.fromkeys(s for v in main["sources"] for s in str(v).split(", ")))
    components = any(str(m).startswith("variance components") for m in main["method"])
    how = (
        " The intervals rest on the variance components of the crossed design, with "
        f"Satterthwaite's degrees of freedom {citation}."
        if components
        else ""
    )
    if kind == "annotators":
        who = summary["annotators"]
        coded = ", ".join(
            f"{name} {texts:,}" for name, texts in zip(who, summary["annotator_texts"], strict=True)
        )
        sentence = (
            f"The reference labels are those of {len(who)} annotators ({listing(who)}; texts "
            f"coded: {coded}), and each interval is about the metric against a new annotator "
            "from the population of annotators (the estimand new_annotator): annotators are a "
            "source of variation crossed with the texts, so that the intervals include the "
            f"variation of {listing(sources)}.{how} Beside them the report gives the metric "
            "against each annotator, their majority and these annotators."
        )
    else:
        who = summary["runs"]
        sentence = (
            f"The classifier was run {len(who)} times on every text ({listing(who)}), and "
            "each interval is about a new run of it on the population of texts (the "
            "estimand new_run): runs are a source of variation crossed with the texts, so "
            f"that the intervals include the variation of {listing(sources)}.{how} Beside "
            "them the report gives each run's own estimate."
        )
    return sentence, components
