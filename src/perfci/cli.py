"""The ``perfci`` command line.

Every command prints a readable table by default and a JSON object with ``--json``.
Errors print one line to stderr and exit with status 2; there are no tracebacks for bad
input.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from .analytic import ANALYTIC_METHODS, proportion_ci
from .bootstrap import BOOTSTRAP_INTERVALS, bootstrap_ci
from .comparison import compare
from .datasets import load_example
from .exact import operating_characteristics
from .metrics import (
    BINARY_METRICS,
    METRICS,
    PROPORTION_METRICS,
)
from .planning import plan_sample_size
from .reporting import metric_ci, report

__all__ = ["main"]


class _UsageError(Exception):
    """Bad command-line usage; the message is printed as one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{self.prog}: error: {message}")


def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _emit(payload: dict[str, Any], as_json: bool, text: str) -> None:
    if as_json:
        print(json.dumps({k: _jsonable(v) for k, v in payload.items()}))
    else:
        print(text)


def _cmd_interval(args: argparse.Namespace) -> None:
    ci = proportion_ci(
        args.successes, args.trials, method=args.method, confidence_level=args.confidence_level
    )
    payload = {
        "method": ci.method,
        "confidence_level": ci.confidence_level,
        "successes": ci.successes,
        "trials": ci.trials,
        "estimate": ci.estimate,
        "low": ci.low,
        "high": ci.high,
        "clipped": ci.clipped,
    }
    text = (
        f"{ci.method} {100 * ci.confidence_level:g}% interval for {args.successes:g} of "
        f"{args.trials:g}: estimate {ci.estimate:.4f}, [{ci.low:.4f}, {ci.high:.4f}]"
        + (" (clipped to [0, 1])" if ci.clipped else "")
    )
    _emit(payload, args.json, text)


def _cmd_coverage(args: argparse.Namespace) -> None:
    oc = operating_characteristics(args.method, args.n, args.p, args.confidence_level)
    payload = {
        "method": oc.method,
        "n": oc.n,
        "p": oc.p,
        "confidence_level": oc.confidence_level,
        "coverage": oc.coverage,
        "miss_low": oc.miss_low,
        "miss_high": oc.miss_high,
        "expected_half_width": oc.expected_half_width,
    }
    text = (
        f"{oc.method} at n = {args.n}, p = {args.p:g}, nominal "
        f"{100 * args.confidence_level:g}%: exact coverage {float(oc.coverage):.4f} "
        f"(interval below p {float(oc.miss_low):.4f}, above p {float(oc.miss_high):.4f}); "
        f"expected half-width {float(oc.expected_half_width):.4f}"
    )
    _emit(payload, args.json, text)


def _n_resamples(text: str) -> int | str:
    if text == "exact":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer or 'exact', got {text!r}"
        ) from None


def _cmd_bootstrap(args: argparse.Namespace) -> None:
    if args.cells is not None:
        if args.successes is not None or args.trials is not None:
            raise ValueError("give either `--cells` or `--successes` with `--trials`, not both.")
        counts: Any = args.cells
        metric = args.metric or "f1"
    else:
        if args.successes is None or args.trials is None:
            raise ValueError("give `--cells TP FP FN TN`, or `--successes X --trials N`.")
        if args.successes > args.trials:
            raise ValueError("`--successes` must not exceed `--trials`.")
        counts = [args.successes, args.trials - args.successes]
        metric = args.metric or "proportion"
        if metric != "proportion":
            raise ValueError("`--successes`/`--trials` go with `--metric proportion`.")
    ci = bootstrap_ci(
        counts,
        metric,
        interval=args.interval,
        pseudo_count=args.pseudo_count,
        n_resamples=args.n_resamples,
        confidence_level=args.confidence_level,
        rng=args.seed,
    )
    payload = {
        "metric": ci.metric,
        "scheme": ci.scheme,
        "interval": ci.interval,
        "pseudo_count": ci.pseudo_count,
        "confidence_level": ci.confidence_level,
        "n_resamples": ci.n_resamples,
        "seed": args.seed,
        "estimate": ci.estimate,
        "low": ci.low,
        "high": ci.high,
        "standard_error": ci.standard_error,
        "n_invalid_resamples": ci.n_invalid_resamples,
        "bca_fallback": ci.bca_fallback,
        "fallback_reason": ci.fallback_reason,
    }
    label = ci.interval + (" (fell back to percentile)" if ci.bca_fallback else "")
    text = (
        f"{ci.metric}: estimate {ci.estimate:.4f}, {100 * ci.confidence_level:g}% {label} "
        f"bootstrap interval [{ci.low:.4f}, {ci.high:.4f}] (pseudo count {ci.pseudo_count}, "
        f"{ci.n_resamples} resamples, {ci.n_invalid_resamples} undefined)"
    )
    _emit(payload, args.json, text)


def _read_table(path: str) -> pd.DataFrame:
    """Read a CSV, TSV or Parquet file of labelled texts, labels kept as text."""
    suffix = Path(path).suffix.lower()
    if suffix not in (".csv", ".tsv", ".txt", ".parquet", ".pq"):
        raise ValueError(f"`FILE` {path!r} must be a .csv, .tsv or .parquet file.")
    try:
        if suffix in (".parquet", ".pq"):
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str)
    except FileNotFoundError:
        raise ValueError(f"`FILE` {path!r} does not exist.") from None
    except Exception as exc:  # pandas raises many kinds for a malformed file
        raise ValueError(f"`FILE` {path!r} could not be read: {exc}".splitlines()[0]) from None
    return frame


def _column(frame: pd.DataFrame, name: str | None, option: str, path: str) -> pd.Series | None:
    """Return a column by name, reporting its missing values by row."""
    if name is None:
        return None
    if name not in frame.columns:
        raise ValueError(
            f"`{option}` column {name!r} is not in {path}; its columns are "
            f"{list(map(str, frame.columns))}."
        )
    column = frame[name]
    missing = np.flatnonzero(column.isna().to_numpy())
    if missing.size:
        raise ValueError(
            f"column {name!r} is empty in row {missing[0] + 1} of {path} "
            f"({missing.size} empty rows); every text needs a value."
        )
    return column.astype(str) if column.dtype != object else column.map(str)


def _labels(args: argparse.Namespace, columns: list[pd.Series]) -> Any:
    """Return the positive label, checked against the declared negative label if given."""
    values = set().union(*(set(c.unique()) for c in columns))
    positive = args.positive
    if positive is None:
        for pos, pair in (
            ("1", {"0", "1"}),
            ("True", {"False", "True"}),
            ("true", {"false", "true"}),
        ):
            if values <= pair:
                positive = pos
    if positive is not None and positive not in values:
        raise ValueError(
            f"`--positive` label {positive!r} does not occur; labels: {sorted(values)}."
        )
    if args.negative is not None:
        allowed = {positive, args.negative}
        for column in columns:
            bad = np.flatnonzero(~column.isin(allowed).to_numpy())
            if bad.size:
                raise ValueError(
                    f"column {column.name!r} row {bad[0] + 1}: label {column.iloc[bad[0]]!r} is "
                    f"neither the positive {positive!r} nor the negative {args.negative!r}."
                )
    return positive


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts: full float precision, missing values as None."""
    clean = frame.astype(object).where(frame.notna(), None)
    return [{k: _jsonable(v) for k, v in row.items()} for row in clean.to_dict("records")]


def _markdown(frame: pd.DataFrame) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return "" if np.isnan(v) else f"{v:.4g}"
        return "" if v is pd.NA else str(v)

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * frame.shape[1]]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(False)]
    return "\n".join(lines)


def _print_table(frame: pd.DataFrame, fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(_records(frame)))
    elif fmt == "csv":
        print(frame.to_csv(index=False), end="")
    elif fmt == "markdown":
        print(_markdown(frame))
    else:
        shown = frame.copy()
        for col in ("estimate", "low", "high", "icc", "design_effect"):
            if col in shown:
                shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
        if "n_eff" in shown:
            shown["n_eff"] = shown["n_eff"].map(lambda v: "" if pd.isna(v) else f"{v:.1f}")
        with pd.option_context(
            "display.width", 250, "display.max_columns", None, "display.max_colwidth", 70
        ):
            print(shown.to_string(index=False))


def _cmd_report(args: argparse.Namespace) -> None:
    frame = _read_table(args.file)
    truth = _column(frame, args.truth, "--truth", args.file)
    pred = _column(frame, args.pred, "--pred", args.file)
    groups = _column(frame, args.group, "--group", args.file)
    by = _column(frame, args.by, "--by", args.file)
    positive = _labels(args, [truth, pred])
    table = report(
        truth,
        pred,
        groups,
        by=by,
        positive=positive,
        confidence_level=args.confidence_level,
        rng=args.seed,
    )
    if args.by is not None:
        table = table.rename(columns={"by": args.by})
    _print_table(table, "json" if args.json else args.format)


def _cmd_compare(args: argparse.Namespace) -> None:
    frame = _read_table(args.file)
    truth = _column(frame, args.truth, "--truth", args.file)
    pred_a = _column(frame, args.pred_a, "--pred-a", args.file)
    pred_b = _column(frame, args.pred_b, "--pred-b", args.file)
    groups = _column(frame, args.group, "--group", args.file)
    positive = _labels(args, [truth, pred_a, pred_b])
    result = compare(
        truth,
        pred_a,
        pred_b,
        args.metric,
        groups,
        positive=positive,
        confidence_level=args.confidence_level,
        rng=args.seed,
    )
    payload = _comparison_payload(result, args.pred_a, args.pred_b)
    _emit(payload, args.json, _comparison_text(payload))


def _comparison_payload(result: Any, name_a: str, name_b: str) -> dict[str, Any]:
    return {
        "metric": result.metric,
        "a": name_a,
        "b": name_b,
        "estimate_a": result.estimate_a,
        "estimate_b": result.estimate_b,
        "difference": result.difference,
        "low": result.low,
        "high": result.high,
        "confidence_level": result.confidence_level,
        "method": result.method,
        "disagreement": result.disagreement,
        "n_texts": result.n_texts,
        "persons": result.persons,
        "newcombe_low": None if np.isnan(result.newcombe_low) else result.newcombe_low,
        "newcombe_high": None if np.isnan(result.newcombe_high) else result.newcombe_high,
        "mcnemar_pvalue": None if np.isnan(result.mcnemar_pvalue) else result.mcnemar_pvalue,
    }


def _comparison_text(p: dict[str, Any]) -> str:
    text = (
        f"{p['metric']}: {p['a']} {p['estimate_a']:.4f} vs {p['b']} {p['estimate_b']:.4f}; "
        f"difference {p['difference']:+.4f}, {100 * p['confidence_level']:g}% interval "
        f"[{p['low']:+.4f}, {p['high']:+.4f}] by {p['method']}; the two disagree on "
        f"{100 * p['disagreement']:.1f}% of {p['n_texts']} texts"
    )
    if p["mcnemar_pvalue"] is not None:
        text += (
            f"; Newcombe paired interval [{p['newcombe_low']:+.4f}, {p['newcombe_high']:+.4f}], "
            f"exact McNemar p = {p['mcnemar_pvalue']:.4g}"
        )
    return text


def _cmd_bayes(args: argparse.Namespace) -> None:
    from . import bayes

    frame = _read_table(args.file)
    truth = _column(frame, args.truth, "--truth", args.file)
    pred = _column(frame, args.pred, "--pred", args.file)
    groups = _column(frame, args.group, "--group", args.file)
    positive = _labels(args, [truth, pred])
    level = args.credible_level
    result = bayes.fit_labels(
        truth, pred, groups, args.metric, positive=positive, sampler=args.sampler, rng=args.seed
    )
    frequentist = metric_ci(
        truth, pred, args.metric, groups, positive=positive, confidence_level=level
    )
    payload: dict[str, Any] = {
        "metric": args.metric,
        "sampler": args.sampler,
        "prior": result.prior,
        "credible_level": level,
        "persons": int(result.trials.size),
        "relevant_n": int(result.trials.sum()),
    }
    for estimand in ("mu", "text_weighted"):
        ci = result.interval(estimand, "eti", level)
        payload[estimand] = {"estimate": ci.estimate, "low": ci.low, "high": ci.high, "kind": "eti"}
    payload["diagnostics"] = {
        **{
            k: (None if isinstance(v, float) and np.isnan(v) else v)
            for k, v in result.diagnostics.items()
        },
        "flagged": result.flagged,
        "flag_reasons": list(result.flag_reasons),
    }
    payload["frequentist"] = {
        "estimate": frequentist.estimate,
        "low": frequentist.low,
        "high": frequentist.high,
        "method": frequentist.method,
    }
    if args.json:
        print(json.dumps(payload))
        return
    rows = [
        {
            "interval": f"frequentist: {frequentist.method}",
            "estimate": frequentist.estimate,
            "low": frequentist.low,
            "high": frequentist.high,
        },
        *(
            {
                "interval": f"bayes ({args.sampler}): {e}",
                **{k: payload[e][k] for k in ("estimate", "low", "high")},
            }
            for e in ("mu", "text_weighted")
        ),
    ]
    print(
        f"{args.metric} of {payload['relevant_n']} relevant texts from {payload['persons']} "
        f"persons; {100 * level:g}% intervals (Bayesian: equal-tailed, posterior median):\n"
    )
    _print_table(pd.DataFrame(rows), "table")
    d = payload["diagnostics"]
    r_hat = "n/a (exact grid)" if d["r_hat"] is None else f"{d['r_hat']:.3f}"
    print(
        f"\ndiagnostics: R-hat {r_hat}, bulk ESS {d['ess_bulk']:.0f}, tail ESS "
        f"{d['ess_tail']:.0f}, divergences {d['divergences']}"
        + (f"; FLAGGED: {'; '.join(d['flag_reasons'])}" if d["flagged"] else "")
    )


def _progress_bar(done: int, total: int) -> None:
    width = 40
    filled = int(width * done / max(total, 1))
    end = "\n" if done >= total else ""
    print(
        f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} cells",
        end=end,
        file=sys.stderr,
        flush=True,
    )


def _cmd_validate(args: argparse.Namespace) -> None:
    from . import harness

    if args.action == "list":
        suites = [harness.load_suite(name) for name in harness.list_suites()]
        if args.json:
            print(
                json.dumps(
                    [
                        {"name": s.name, "description": s.description, "scales": list(s.scales)}
                        for s in suites
                    ]
                )
            )
            return
        for suite in suites:
            print(f"{suite.name}: {suite.description} (scales: {', '.join(suite.scales)})")
        return
    if args.action == "run":
        if args.suite is None:
            raise ValueError("`validate run` needs a SUITE name.")
        if args.scheduler is not None and args.workers != 1:
            raise ValueError("give `--workers` or `--scheduler`, not both.")
        dataset = harness.run_suite(
            args.suite,
            args.scale,
            args.out,
            workers=args.workers,
            scheduler=args.scheduler,
            resume=args.resume,
            progress=None if args.quiet else _progress_bar,
        )
        target = Path(args.out) / (dataset.attrs["suite"] + ".nc")
        if args.json:
            print(
                json.dumps(
                    {
                        "suite": dataset.attrs["suite"],
                        "scale": args.scale,
                        "result": str(target),
                        "cells": int(
                            np.prod([dataset.sizes[d] for d in dataset.dims if d != "ci_method"])
                        ),
                    }
                )
            )
        else:
            print(f"wrote {target}")
        return
    from .figures import coverage_table, make_figures

    folder = Path(args.suite or args.out)
    files = sorted(folder.glob("*.nc"))
    if not files:
        raise ValueError(f"`DIR` {str(folder)!r} holds no result files (*.nc).")
    import xarray as xr

    tables, written = [], []
    for path in files:
        with xr.open_dataset(path, engine="h5netcdf") as dataset:
            dataset = dataset.load()
        written += [str(f) for f in make_figures(dataset, args.figures)]
        tables.append(coverage_table(dataset))
    summary = folder / "SUMMARY.md"
    summary.write_text("# Coverage results\n\n" + "\n".join(tables))
    written.append(str(summary))
    if args.json:
        print(json.dumps({"written": written}))
    else:
        for path in written:
            print(f"wrote {path}")


def _cmd_plan(args: argparse.Namespace) -> None:
    plan = plan_sample_size(
        args.metric_value,
        args.half_width,
        args.confidence_level,
        args.method,
        pseudo_count=args.pseudo_count,
        prevalence=args.prevalence,
        icc=args.icc,
        texts_per_person=args.texts_per_person,
    )
    payload = _plan_payload(plan)
    _emit(payload, args.json, _plan_text(plan))


def _plan_payload(plan: Any) -> dict[str, Any]:
    return {
        "relevant_n": plan.relevant_n,
        "total_texts": plan.total_texts,
        "persons": plan.persons,
        "half_width": plan.half_width,
        "metric_value": plan.metric_value,
        "target_half_width": plan.target_half_width,
        "confidence_level": plan.confidence_level,
        "method": plan.method,
        "design": plan.design,
    }


def _plan_text(plan: Any) -> str:
    text = (
        f"{plan.relevant_n} relevant texts give a {100 * plan.confidence_level:g}% "
        f"{plan.method} interval with half-width {plan.half_width:.4f} <= "
        f"{plan.target_half_width:g} at a metric of {plan.metric_value:g}"
    )
    if plan.persons is not None:
        text += f" ({plan.persons} persons)"
    if plan.total_texts is not None:
        text += f"; label {plan.total_texts} texts in all"
    return text


def _cmd_demo(args: argparse.Namespace) -> None:
    texts = load_example()
    level = args.confidence_level
    table = report(
        texts["human"], texts["model"], texts["person"], confidence_level=level, rng=2026
    )
    result = compare(
        texts["human"],
        texts["model"],
        texts["model_b"],
        "f1",
        texts["person"],
        confidence_level=level,
        rng=2026,
    )
    plan = plan_sample_size(0.9, 0.05, level, icc=0.1, texts_per_person=6, prevalence=0.25)
    if args.json:
        print(
            json.dumps(
                {
                    "report": _records(table),
                    "compare": _comparison_payload(result, "model", "model_b"),
                    "plan": _plan_payload(plan),
                }
            )
        )
        return
    print(
        f"Example data: {len(texts)} utterances from {texts['person'].nunique()} therapists, "
        "coded by a human and by two LLM prompts (model, model_b).\n\n"
        f"1. Report for prompt 'model', texts nested in therapists ({100 * level:g}% intervals):\n"
    )
    _print_table(table, "table")
    print("\n2. Paired comparison of the two prompts:\n")
    print(_comparison_text(_comparison_payload(result, "model", "model_b")))
    print(
        "\n3. Plan for a new study: recall expected 0.90, half-width 0.05, ICC 0.1, about 6 "
        "reference positives per therapist, a quarter of utterances positive:\n"
    )
    print(_plan_text(plan))


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="perfci",
        description="Honest confidence intervals for classifier performance metrics.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("interval", help="analytic interval for a proportion")
    p.add_argument("--successes", type=float, required=True, metavar="X")
    p.add_argument("--trials", type=float, required=True, metavar="N")
    p.add_argument(
        "--method",
        default="agresti_coull",
        metavar="M",
        help=f"one of {', '.join(ANALYTIC_METHODS)} (default agresti_coull)",
    )
    p.add_argument("--confidence-level", type=_level, default=0.95, metavar="C")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=_cmd_interval)

    p = sub.add_parser("coverage", help="exact coverage of an interval method")
    p.add_argument(
        "--method", required=True, metavar="M", help=f"one of {', '.join(ANALYTIC_METHODS)}"
    )
    p.add_argument("--n", type=int, required=True, metavar="N", help="relevant sample size")
    p.add_argument("--p", type=float, required=True, metavar="P", help="true proportion")
    p.add_argument("--confidence-level", type=_level, default=0.95, metavar="C")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=_cmd_coverage)

    p = sub.add_parser("bootstrap", help="bootstrap interval from confusion-matrix cells")
    p.add_argument("--cells", type=int, nargs=4, metavar=("TP", "FP", "FN", "TN"))
    p.add_argument("--successes", type=int, metavar="X", help="successes of a proportion")
    p.add_argument("--trials", type=int, metavar="N", help="trials of a proportion")
    p.add_argument("--metric", metavar="M", help=f"one of {', '.join(METRICS)}, or proportion")
    p.add_argument("--interval", default="percentile", choices=BOOTSTRAP_INTERVALS)
    p.add_argument("--pseudo-count", type=int, default=0, metavar="L")
    p.add_argument("--n-resamples", type=_n_resamples, default=2000, metavar="B")
    p.add_argument("--seed", type=int, default=None, metavar="S")
    p.add_argument("--confidence-level", type=_level, default=0.95, metavar="C")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=_cmd_bootstrap)

    p = sub.add_parser("report", help="every metric with its recommended interval")
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file, one row per text")
    p.add_argument("--truth", required=True, metavar="COL", help="reference (human) labels")
    p.add_argument("--pred", required=True, metavar="COL", help="classifier labels")
    p.add_argument("--group", metavar="COL", help="person ids (texts nested in persons)")
    p.add_argument("--by", metavar="COL", help="subgroup column: a report per subgroup")
    p.add_argument("--positive", metavar="LABEL", help="the positive label (default 1/True)")
    p.add_argument("--negative", metavar="LABEL", help="the negative label; others are errors")
    p.add_argument("--format", default="table", choices=("table", "json", "csv", "markdown"))
    p.add_argument("--confidence-level", type=_level, default=0.95, metavar="C")
    p.add_argument("--seed", type=int, default=None, metavar="S")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.set_defaults(run=_cmd_report)

    p = sub.add_parser("compare", help="paired difference of a metric between two classifiers")
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file, one row per text")
    p.add_argument("--truth", required=True, metavar="COL")
    p.add_argument("--pred-a", required=True, metavar="COL")
    p.add_argument("--pred-b", required=True, metavar="COL")
    p.add_argument(
        "--metric", required=True, metavar="M", help=f"one of {', '.join(BINARY_METRICS)}"
    )
    p.add_argument("--group", metavar="COL", help="person ids (texts nested in persons)")
    p.add_argument("--positive", metavar="LABEL")
    p.add_argument("--negative", metavar="LABEL")
    p.add_argument("--confidence-level", type=_level, default=0.95, metavar="C")
    p.add_argument("--seed", type=int, default=None, metavar="S")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=_cmd_compare)

    p = sub.add_parser(
        "bayes", help="hierarchical Bayesian credible intervals beside the frequentist interval"
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file, one row per text")
    p.add_argument("--truth", required=True, metavar="COL")
    p.add_argument("--pred", required=True, metavar="COL")
    p.add_argument("--group", required=True, metavar="COL", help="person ids")
    p.add_argument(
        "--metric",
        required=True,
        metavar="M",
        help=f"a proportion metric: {', '.join(PROPORTION_METRICS)}",
    )
    p.add_argument("--sampler", default="nutpie", choices=("nutpie", "pymc", "grid"))
    p.add_argument("--credible-level", type=_level, default=0.95, metavar="L")
    p.add_argument("--positive", metavar="LABEL")
    p.add_argument("--negative", metavar="LABEL")
    p.add_argument("--seed", type=int, default=None, metavar="S")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=_cmd_bayes)

    p = sub.add_parser("validate", help="coverage validation suites: list, run, report")
    p.add_argument("action", choices=("list", "run", "report"))
    p.add_argument(
        "suite", nargs="?", metavar="SUITE|DIR", help="suite name (run) or results folder (report)"
    )
    p.add_argument("--scale", default="smoke", metavar="S", help="smoke (default), full, ...")
    p.add_argument("--out", default="validation/results", metavar="DIR")
    p.add_argument("--figures", default="validation/figures", metavar="DIR")
    p.add_argument("--workers", type=int, default=1, metavar="N")
    p.add_argument("--scheduler", metavar="ADDR", help="address of a running Dask scheduler")
    p.add_argument("--resume", action="store_true", help="keep cells a killed run finished")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=_cmd_validate)

    p = sub.add_parser("plan", help="relevant texts (and persons) for a target half-width")
    p.add_argument("--metric-value", type=float, required=True, metavar="V")
    p.add_argument("--half-width", type=float, required=True, metavar="H")
    p.add_argument("--confidence-level", type=_level, default=0.95, metavar="C")
    p.add_argument(
        "--method",
        default="agresti_coull",
        metavar="M",
        help=f"one of {', '.join(ANALYTIC_METHODS)}, or percentile",
    )
    p.add_argument("--pseudo-count", type=int, default=0, metavar="L")
    p.add_argument("--prevalence", type=float, metavar="P")
    p.add_argument("--icc", type=float, metavar="R")
    p.add_argument("--texts-per-person", type=float, metavar="B")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(run=_cmd_plan)

    p = sub.add_parser("demo", help="report, comparison and plan for the bundled example")
    p.add_argument("--confidence-level", type=_level, default=0.95, metavar="C")
    p.add_argument("--json", action="store_true", help="print JSON records")
    p.set_defaults(run=_cmd_demo)
    return parser


def _show_warning(message: Warning | str, *args: Any, **kwargs: Any) -> None:
    """Print a warning as one line, without the source line warnings usually show."""
    print(f"perfci: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``perfci`` command line; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 2 on bad input (after printing one line to stderr).

    Examples
    --------
    >>> from perfci.cli import main
    >>> main(["interval", "--successes", "264", "--trials", "300", "--method", "wilson"])
    wilson 95% interval for 264 of 300: estimate 0.8800, [0.8383, 0.9120]
    0
    """
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = _show_warning
            args.run(args)
    except _UsageError as exc:
        print(str(exc).splitlines()[0], file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (e.g. `perfci demo | head`); nothing left to report.
        sys.stderr.close()
        return 0
    except (ValueError, OSError) as exc:
        print(f"perfci: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
