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
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from .analytic import ANALYTIC_METHODS, proportion_ci
from .bootstrap import BOOTSTRAP_INTERVALS, bootstrap_ci
from .counting import confusion
from .datasets import load_example
from .exact import operating_characteristics
from .metrics import (
    BINARY_METRICS,
    METRICS,
    PROPORTION_METRICS,
    metric_values,
    proportion_counts,
)

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
            for method in ("wilson", "agresti_coull", "clopper_pearson"):
                ci = proportion_ci(x, n, method=method, confidence_level=confidence_level)
                row[method] = f"[{ci.low:.3f}, {ci.high:.3f}]"
        else:
            row["n"] = int(counts.sum())
        boot = bootstrap_ci(
            counts, metric, pseudo_count=1, confidence_level=confidence_level, rng=2026
        )
        row["pseudo-count bootstrap"] = f"[{boot.low:.3f}, {boot.high:.3f}]"
        rows.append(row)
    return pd.DataFrame(rows).set_index("metric").fillna("-")


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
        f"{100 * args.confidence_level:g}% intervals: analytic ones for the proportion metrics "
        "(n is the metric's relevant n) and the pseudo-count regularized (lambda = 1) "
        "percentile bootstrap, 2000 resamples, for every metric. Texts treated as "
        "independent.\n"
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

    p = sub.add_parser("demo", help="every metric with intervals for the bundled example")
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
