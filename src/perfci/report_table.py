"""The words and the shape of :func:`perfci.report`'s table.

Its columns (:data:`COLUMNS`), a row of each kind of interval (:func:`metric_row`,
:func:`auc_row`, :func:`interval_row`), and the notes a row carries, with the thresholds
they apply: fewer than :data:`FEW_RELEVANT_TEXTS` relevant texts, a half-width above
:data:`WIDE_HALF_WIDTH`, fewer than :data:`FEW_PERSONS` (or :data:`SOME_PERSONS`)
persons, and the stress atlas's caveats (:func:`perfci.policy.coverage_caveat`).
"""

from __future__ import annotations

import warnings
from typing import Any, cast

import numpy as np
import pandas as pd

from . import policy
from ._core.validation import UndefinedMetricWarning
from .auc import RocAucCI
from .bootstrap import BootstrapCI
from .design import ClusteredProportionCI
from .metric import MetricCI

__all__ = [
    "COLUMNS",
    "FEW_PERSONS",
    "FEW_RELEVANT_TEXTS",
    "SOME_PERSONS",
    "WIDE_HALF_WIDTH",
    "assembled_table",
    "auc_note",
    "auc_row",
    "flagged_note",
    "interval_row",
    "left_out",
    "metric_note",
    "metric_row",
    "say_left_out",
]

#: Relevant n below which a report says the metric cannot support a claim.
FEW_RELEVANT_TEXTS = 30
#: Half-width above which a report calls the interval wide.
WIDE_HALF_WIDTH = 0.10
#: Persons below which a report says the sample cannot speak for new persons.
FEW_PERSONS = 5
#: Persons below which a report warns that the df adjustment dominates.
SOME_PERSONS = 10


def metric_note(ci: MetricCI) -> str:
    """Return the note of a metric's row: too few texts, a wide interval, few persons."""
    notes = []
    if ci.relevant_n < FEW_RELEVANT_TEXTS:
        notes.append(
            f"only {ci.relevant_n} relevant texts: too few to support a claim about {ci.metric}"
        )
    elif ci.half_width > WIDE_HALF_WIDTH:
        notes.append(f"wide interval (half-width {ci.half_width:.2f})")
    if ci.persons is not None:
        caveat = policy.coverage_caveat(
            ci.metric,
            estimate=ci.estimate,
            persons=ci.persons,
            relevant_texts_per_person=ci.relevant_n / ci.persons,
            icc=ci.icc,
            design=getattr(ci.result, "design", None),
        )
        if caveat is not None:
            notes.append(caveat)
        if ci.persons < FEW_PERSONS:
            notes.append(f"only {ci.persons} persons: too few to speak for new persons")
        elif (
            ci.persons < SOME_PERSONS
            and isinstance(ci.result, ClusteredProportionCI)
            and ci.result.df_adjust is not None
        ):
            notes.append(f"few persons ({ci.persons}): the design df are few and the interval wide")
        elif ci.persons < SOME_PERSONS and isinstance(ci.result, BootstrapCI):
            # atlas-multiclass and atlas-paired: 0.88 at 5 persons for macro-F1 with an
            # ICC of 0.2, where no bootstrap covered 0.90
            notes.append(
                f"few persons ({ci.persons}): in the stress atlas no bootstrap interval "
                "covered 0.90 in every design with 5 persons; read it as approximate"
            )
    return "; ".join(notes)


def auc_note(ci: MetricCI) -> str:
    """Return the note of the roc_auc row: too few positives or negatives, separated classes."""
    result = cast(RocAucCI, ci.result)
    notes = []
    fewer = min(result.n_positive, result.n_negative)
    if fewer < FEW_RELEVANT_TEXTS:
        which = "positives" if result.n_positive <= result.n_negative else "negatives"
        notes.append(f"only {fewer} {which}: too few to support a claim about roc_auc")
    elif ci.half_width > WIDE_HALF_WIDTH:
        notes.append(f"wide interval (half-width {ci.half_width:.2f})")
    if np.isnan(ci.low):
        notes.append("no logit interval at an AUC of 0 or 1 (the classes are separated)")
    if ci.persons is not None and ci.persons < FEW_PERSONS:
        notes.append(f"only {ci.persons} persons: too few to speak for new persons")
    return "; ".join(notes)


def flagged_note(result: Any) -> str:
    """Return the note of a flagged Bayesian fit (its reasons), or ""."""
    return "FLAGGED: " + "; ".join(result.flag_reasons) if result.flagged else ""


#: The columns of every report row, in order (``by``, ``reference`` and ``class`` lead
#: where they apply).
COLUMNS = [
    "metric",
    "estimate",
    "low",
    "high",
    "method",
    "sources",
    "relevant_n",
    "persons",
    "icc",
    "design_effect",
    "n_eff",
    "note",
]


def interval_row(
    metric: str,
    estimate,
    low,
    high,
    method: str,
    relevant_n,
    persons=pd.NA,
    notes: tuple[str, ...] = (),
    sources: str | None = None,
) -> dict:
    """Return one report row of an interval without a design adjustment.

    The ICC, design effect and n_eff are NaN: a credible interval, or an interval of runs
    or annotators (`sources` default: from the persons).
    """
    return {
        "metric": metric,
        "estimate": estimate,
        "low": low,
        "high": high,
        "method": method,
        "sources": sources or ("texts" if persons is pd.NA else "texts, persons"),
        "relevant_n": relevant_n,
        "persons": persons,
        "icc": np.nan,
        "design_effect": np.nan,
        "n_eff": np.nan,
        "note": "; ".join(note for note in notes if note),
    }


def auc_row(ci: MetricCI, with_class: bool) -> dict:
    """Return the roc_auc row (with an empty ``class`` for multi-class labels)."""
    row = {
        "metric": ci.metric,
        "estimate": ci.estimate,
        "low": ci.low,
        "high": ci.high,
        "method": ci.method,
        "sources": ", ".join(ci.sources),
        "relevant_n": ci.relevant_n,
        "persons": pd.NA if ci.persons is None else ci.persons,
        "icc": np.nan,
        "design_effect": np.nan,
        "n_eff": np.nan,
        "note": auc_note(ci),
    }
    return {"class": "", **row} if with_class else row


def metric_row(ci: MetricCI) -> dict:
    """Return the row of a metric's interval, with its note."""
    return {
        "metric": ci.metric,
        "estimate": ci.estimate,
        "low": ci.low,
        "high": ci.high,
        "method": ci.method,
        "sources": ", ".join(ci.sources),
        "relevant_n": ci.relevant_n,
        "persons": pd.NA if ci.persons is None else ci.persons,
        "icc": ci.icc,
        "design_effect": ci.design_effect,
        "n_eff": ci.n_eff,
        "note": metric_note(ci),
    }


#: Rows named for each reason in the message of the rows left out; the others are counted.
SHOWN_LEFT_OUT = 5


def _what_and_why(entry: str) -> tuple[str, str]:
    """Split ``"recall in subgroup 'g1' (why)"`` at its last parenthesis into what and why.

    The reason is the trailing group of balanced parentheses after a space; an entry
    without one is all "what".
    """
    depth = 0
    for i in range(len(entry) - 1, 0, -1):
        depth += {")": 1, "(": -1}.get(entry[i], 0)
        if depth == 0:
            if i < len(entry) - 1 and entry[i] == "(" and entry[i - 1] == " ":
                return entry[: i - 1], entry[i + 1 : -1]
            break
    return entry, ""


def left_out(skipped: list[str]) -> str:
    """Say which rows were left out and why, bounded: each reason once.

    Rows left out for the same reason are counted, and the first :data:`SHOWN_LEFT_OUT`
    named ("... and 114 more"), so a report of 1000 subgroups says why once.

    Examples
    --------
    >>> from perfci.report_table import left_out
    >>> print(left_out([f"recall in {g!r} (no positives)" for g in "abcdefg"]))
    7 rows: recall in 'a', recall in 'b', recall in 'c', recall in 'd', recall in 'e' and 2 more
    (no positives)
    """
    reasons: dict[str, list[str]] = {}
    for entry in skipped:
        what, why = _what_and_why(entry)
        reasons.setdefault(why, []).append(what)
    parts = []
    for why, whats in reasons.items():
        shown = ", ".join(whats[:SHOWN_LEFT_OUT])
        if len(whats) > SHOWN_LEFT_OUT:
            shown += f" and {len(whats) - SHOWN_LEFT_OUT} more"
        count = f"{len(whats)} rows: " if len(whats) > 1 else ""
        parts.append(f"{count}{shown}" + (f" ({why})" if why else ""))
    return "; ".join(parts)


def say_left_out(skipped: list[str], *, reported: bool, stacklevel: int = 3) -> None:
    """Warn of the rows left out of a report (:func:`left_out`); raise if none was reported.

    An empty table is no report: with `skipped` and nothing `reported`, a ValueError says
    why every row was left out.
    """
    if skipped and not reported:
        raise ValueError("no metric could be reported: " + left_out(skipped))
    if skipped:
        warnings.warn(
            "left out of the report: " + left_out(skipped),
            UndefinedMetricWarning,
            stacklevel=stacklevel,
        )


def assembled_table(frames: list[pd.DataFrame], skipped: list[str]) -> pd.DataFrame:
    """Return the report's table of `frames`, warning of the rows left out (`skipped`).

    Raises a ValueError that says why when every row was left out: an empty table is
    no report.
    """
    say_left_out(skipped, reported=any(len(frame) for frame in frames), stacklevel=4)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    lead = [c for c in ("by", "reference", "class") if c in table.columns]
    table = table.reindex(columns=lead + COLUMNS)
    table["persons"] = table["persons"].astype("Int64")
    return table
