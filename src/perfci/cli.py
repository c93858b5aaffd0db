"""The ``perfci`` command line.

Every command prints a readable table by default and a JSON object with ``--json``.
Errors print one line to stderr and exit with status 2; there are no tracebacks for bad
input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from .analytic import ANALYTIC_METHODS, proportion_ci
from .counting import confusion
from .datasets import load_example
from .exact import operating_characteristics
from .metrics import BINARY_METRICS, PROPORTION_METRICS, metric_values, proportion_counts

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


def _demo_table(confidence_level: float) -> pd.DataFrame:
    texts = load_example()
    counts = confusion(texts["human"], texts["model"], positive=1).counts
    rows = []
    for metric in BINARY_METRICS:
        estimate = float(metric_values(counts.astype(float), metric))
        row: dict[str, Any] = {"metric": metric, "estimate": round(estimate, 4)}
        if metric in PROPORTION_METRICS:
            x, n = proportion_counts(counts, metric)
            row["n"] = int(n)
            for method in ANALYTIC_METHODS:
                ci = proportion_ci(x, n, method=method, confidence_level=confidence_level)
                row[method] = f"[{ci.low:.3f}, {ci.high:.3f}]"
        else:
            row["n"] = int(counts.sum())
        rows.append(row)
    return pd.DataFrame(rows).set_index("metric").fillna("no analytic interval")


def _cmd_demo(args: argparse.Namespace) -> None:
    texts = load_example()
    table = _demo_table(args.confidence_level)
    if args.json:
        print(table.reset_index().to_json(orient="records"))
        return
    counts = confusion(texts["human"], texts["model"], positive=1).counts
    print(
        f"Example data: {len(texts)} texts from {texts['person'].nunique()} persons; "
        f"human code vs classifier, cells [tp, fp, fn, tn] = {counts.tolist()}.\n"
        f"{100 * args.confidence_level:g}% analytic intervals for each proportion metric "
        "(n is the metric's relevant n); texts treated as independent.\n"
    )
    with pd.option_context("display.width", 250, "display.max_columns", None):
        print(table.to_string())


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="perfci", description=__doc__.splitlines()[0])
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

    p = sub.add_parser("demo", help="every metric with intervals for the bundled example")
    p.add_argument("--confidence-level", type=_level, default=0.95, metavar="C")
    p.add_argument("--json", action="store_true", help="print JSON records")
    p.set_defaults(run=_cmd_demo)
    return parser


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
