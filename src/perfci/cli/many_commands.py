"""``perfci compare --pred A B C ...`` and ``perfci rank``: many classifiers at once."""

from __future__ import annotations

import argparse
from typing import Any

from . import inputs, rendering

__all__ = ["compare_many", "rank"]


def _read(args: argparse.Namespace) -> tuple[Any, Any, Any, Any]:
    """Return the reference labels, the classifiers' table, the persons and the positive."""
    import pandas as pd

    frame = inputs.read_table(args.file, sep=args.sep)
    columns = inputs.once_each("--pred", args.pred)  # a column twice is refused
    if len(columns) < 2:
        raise ValueError(
            f"`--pred` must name two or more classifier columns to compare; got {columns}."
        )
    for column in columns:
        inputs.refuse_scores_as_labels(frame, column, "--pred", args.file)
    read = {"y_true": ("--truth", args.truth)}
    read |= {f"pred_{i}": ("--pred", column) for i, column in enumerate(columns)}
    values, positive = inputs.read_labels(args, read, frame)
    preds = pd.DataFrame({c: values[f"pred_{i}"] for i, c in enumerate(columns)})
    groups = inputs.read_column(frame, args.group, "--group", args.file)
    return values["y_true"], preds, groups, positive


def compare_many(args: argparse.Namespace) -> None:
    """``perfci compare --pred A B C ...``: differences that hold jointly."""
    from ..many import compare_many as compare_many_

    for flag, value in (
        ("--pred-a", args.pred_a),
        ("--pred-b", args.pred_b),
        ("--weight", args.weight),
        ("--stratum", args.stratum),
        ("--stratum-size", args.stratum_size),
    ):
        if value is not None:
            raise ValueError(f"`{flag}` does not go with `--pred` (many classifiers).")
    if args.method != "recommended":
        raise ValueError(
            "`--method` chooses the interval of two classifiers; with `--pred` the "
            "intervals are cluster-robust, made to hold jointly by `--adjust`."
        )
    if args.metric == "roc_auc":
        raise ValueError("`--pred` compares labels on a binary metric; roc_auc is not one.")
    truth, preds, groups, positive = _read(args)
    table = compare_many_(
        truth,
        preds,
        args.metric,
        groups=groups,
        baseline=args.baseline,
        confidence_level=args.confidence_level,
        adjust="max_t" if args.adjust is None else args.adjust,
        positive=positive,
        rng=args.seed,
    )
    rendering.print_table(table, "json" if args.json else "table")


def rank(args: argparse.Namespace) -> None:
    """``perfci rank``: the rank confidence sets of many classifiers."""
    from ..many import rank_ci

    truth, preds, groups, positive = _read(args)
    table = rank_ci(
        truth,
        preds,
        args.metric,
        groups=groups,
        confidence_level=args.confidence_level,
        positive=positive,
    )
    rendering.print_table(table, "json" if args.json else args.format)
