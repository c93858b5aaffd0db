"""The validation report's comparison of many classifiers: its rows, table, figure, sentence.

With ``classifiers=`` (a table of other classifiers' labels on the same texts),
:func:`perfci.validation_report` compares each with the reported classifier by
:func:`perfci.compare_many` (the baseline the reported classifier), for every binary
metric of the table: the intervals of one metric's differences hold jointly (max-t, the
policy's adjustment), and the unadjusted intervals stand beside them. This module builds
those rows (:func:`many_comparisons`), their table (:func:`many_table`), the forest of
differences with the simultaneous and unadjusted intervals (:func:`many_figure`) and the
methods paragraph's sentence (:func:`many_sentence`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._core import registry
from .._core.recommended import MANY_ADJUSTMENT
from .tables import Marks, Table, interval, level_text, missing, number

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "MANY_COLUMNS",
    "MANY_REFERENCE",
    "classifier_columns",
    "many_comparisons",
    "many_figure",
    "many_metric",
    "many_part",
    "many_sentence",
    "many_table",
]

#: The reference the methods paragraph's sentence cites.
MANY_REFERENCE = (
    "Hothorn T, Bretz F, Westfall P (2008). Simultaneous inference in general parametric "
    "models. Biometrical Journal 50(3): 346-363."
)
#: The columns of the report's ``many`` frame.
MANY_COLUMNS = (
    "metric",
    "classifier",
    "versus",
    "estimate",
    "estimate_versus",
    "difference",
    "low",
    "high",
    "low_unadjusted",
    "high_unadjusted",
    "p_adjusted",
    "method",
)


def classifier_columns(classifiers: Any) -> dict[str, Any]:
    """Return the other classifiers as a name -> labels mapping (a table's columns).

    A name given twice (a repeated column, or mapping keys such as 1 and "1") is refused:
    one of the two would be lost.
    """
    if isinstance(classifiers, pd.DataFrame | Mapping):
        keys = list(classifiers.columns if isinstance(classifiers, pd.DataFrame) else classifiers)
        names = [str(k) for k in keys]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(
                f"`classifiers` must name each classifier once; {repeated} is given more than once."
            )
        if isinstance(classifiers, pd.DataFrame):
            return {name: classifiers.iloc[:, i] for i, name in enumerate(names)}
        return {name: classifiers[k] for name, k in zip(names, keys, strict=True)}
    raise ValueError(
        "`classifiers` must be a DataFrame or a mapping of names to labels (one column per "
        f"other classifier); got {type(classifiers).__name__}."
    )


def many_comparisons(
    y_true: Any,
    y_pred: Any,
    classifiers: Any,
    metrics: Sequence[str],
    *,
    name: str,
    groups: Any,
    positive: Any,
    confidence_level: float,
    rng: Any = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Compare each other classifier with `y_pred` on every metric; return rows and notes.

    Each metric's differences come from one :func:`perfci.compare_many` call (baseline
    `name`, the policy's adjustment) and its unadjusted twin; a metric undefined for a
    classifier is left out with a note. `rng` seeds the draws of one comparison (two
    classifiers: :func:`perfci.compare`'s recommended interval, its own twin).
    """
    from ..many import compare_many

    others = classifier_columns(classifiers)
    if name in others:
        raise ValueError(
            f"`classifiers` must not repeat the reported classifier {name!r} as a column."
        )
    if not others:
        raise ValueError("`classifiers` must hold at least one other classifier.")
    preds = {name: y_pred, **others}
    frames, left_out = [], []
    for metric in metrics:
        args = {"groups": groups, "baseline": name, "positive": positive, "rng": rng}
        try:
            joint = compare_many(y_true, preds, metric, confidence_level=confidence_level, **args)
            alone = (  # one comparison has nothing to adjust: the same interval, drawn once
                joint
                if len(others) == 1
                else compare_many(
                    y_true, preds, metric, confidence_level=confidence_level, adjust="none", **args
                )
            )
        except ValueError as exc:
            left_out.append(
                f"the comparison of the classifiers on {metric} was left out: "
                f"{str(exc).rstrip('.')}"
            )
            continue
        joint = joint.assign(
            metric=metric,
            low_unadjusted=alone["low"].to_numpy(),
            high_unadjusted=alone["high"].to_numpy(),
        )
        frames.append(joint[list(MANY_COLUMNS)])
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=MANY_COLUMNS)
    return frame, left_out


def many_part(
    classifiers: Any,
    weighted: bool,
    main: pd.DataFrame,
    y_true: Any,
    y_pred: Any,
    name: str,
    groups: Any,
    positive: Any,
    level: float,
    forest_metric: str | None,
    rng: Any = None,
) -> tuple[pd.DataFrame | None, str | None, list[str]]:
    """Compare the other `classifiers` with the reported one: rows, forest metric, notes.

    `main` holds the frequentist rows of the report over all texts: every binary metric
    of it is compared. Without `classifiers`, nothing. `rng` seeds the random draws.
    """
    if classifiers is None:
        return None, None, []
    if weighted:
        raise ValueError(
            "`classifiers` cannot be compared on a weighted design yet: compare "
            "them without `weights`, `strata` and `stratum_sizes`."
        )
    compared = [m for m in dict.fromkeys(main["metric"]) if m in registry.BINARY_METRIC]
    many, left_out = many_comparisons(
        y_true,
        y_pred,
        classifiers,
        compared,
        name=name,
        groups=groups,
        positive=positive,
        confidence_level=level,
        rng=rng,
    )
    return many, many_metric(many, forest_metric), left_out


def many_table(
    frame: pd.DataFrame, confidence_level: float, digits: int, marks: Marks, name: str
) -> Table:
    """Return the table of the differences of many classifiers from the reported one."""
    level = level_text(confidence_level)
    rows = []
    for r in frame.to_dict("records"):
        rows.append(
            (
                str(r["metric"]),
                str(r["classifier"]),
                number(r["estimate"], digits),
                number(r["difference"], digits, signed=True),
                interval(r["low"], r["high"], digits, signed=True),
                interval(r["low_unadjusted"], r["high_unadjusted"], digits, signed=True),
                "–" if missing(r["p_adjusted"]) else f"{float(r['p_adjusted']):.3g}",
                marks.mark(str(r["method"])),
            )
        )
    headers = (
        "Metric",
        "Classifier",
        "Estimate",
        f"Difference from {name}",
        f"Simultaneous {level} CI",
        f"Unadjusted {level} CI",
        "Adjusted p",
        "Method",
    )
    numeric = (False, False, True, True, False, False, True, False)
    caption = (
        f"Each other classifier compared with {name} on the same texts: the difference (the "
        f"classifier minus {name}) with its simultaneous {level} interval (the intervals of "
        "one metric hold together: max-t over the joint distribution of its differences) and "
        "the unadjusted interval of each comparison alone; the adjusted p-value tests equal "
        "performance."
    )
    return Table("many", caption, headers, numeric, tuple(rows))


def many_figure(frame: pd.DataFrame, metric: str, confidence_level: float, name: str) -> Figure:
    """Draw the forest of one metric's differences from the reported classifier."""
    from ..plotting import forest

    rows = frame[frame["metric"] == metric]
    if rows.empty:
        raise ValueError(f"`which` 'classifiers' has no comparison of {metric} to draw.")
    level = level_text(confidence_level)
    ax = forest(
        rows["difference"].to_numpy(float),
        rows["low"].to_numpy(float),
        rows["high"].to_numpy(float),
        inner=(rows["low_unadjusted"].to_numpy(float), rows["high_unadjusted"].to_numpy(float)),
        labels=[str(c) for c in rows["classifier"]],
        sort=False,
        interval_label=f"simultaneous {level} interval",
        inner_label=f"unadjusted {level} interval",
        estimate_label="difference",
        xlabel=f"{metric}: classifier minus {name}",
    )
    ax.axvline(0.0, color="0.4", linewidth=0.8, zorder=0)
    return ax.figure  # type: ignore[return-value]


def many_metric(frame: pd.DataFrame, preferred: str | None) -> str | None:
    """Return the metric the forest of differences shows: `preferred`, recall, or the first."""
    metrics = list(dict.fromkeys(frame["metric"]))
    for choice in (preferred, "recall"):
        if choice in metrics:
            return choice
    return metrics[0] if metrics else None


def many_sentence(frame: pd.DataFrame, name: str, persons: bool, citation: str) -> str:
    """Return the methods paragraph's sentence on the comparison of many classifiers."""
    others = list(dict.fromkeys(frame["classifier"]))
    listed = ", ".join(others[:-1]) + (" and " if len(others) > 1 else "") + others[-1]
    clusters = "persons as clusters" if persons else "texts as the units"
    adjust = {"max_t": "max-t", "bonferroni": "Bonferroni", "holm": "Holm"}.get(
        MANY_ADJUSTMENT, MANY_ADJUSTMENT
    )
    return (
        f"{listed} {'were' if len(others) > 1 else 'was'} compared with {name} on the same "
        "texts by the difference of each metric, with intervals that hold jointly over the "
        f"{len(others)} comparison{'s' * (len(others) > 1)} of a metric ({adjust} over the "
        f"joint cluster-robust distribution of the differences, {clusters} {citation}); the "
        "unadjusted intervals are shown beside them."
    )
