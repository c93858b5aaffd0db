"""The argument parser of the ``perfci`` command line.

Every list of names a flag accepts, and its help, is read from
:mod:`perfci._core.registry`; this module imports nothing else from perfci, so that
building the parser is cheap.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from typing import Any, NoReturn

from .._core import registry
from .._core.resources import available_cores
from .once import StoreOnce

__all__ = ["Formatter", "Parser", "UsageError", "build_parser", "in_user_words"]


#: What options are added to: a parser or one of its argument groups.
Options = argparse.ArgumentParser | argparse._ArgumentGroup


class UsageError(Exception):
    """Bad command-line usage; the message is printed as one line."""


class Parser(argparse.ArgumentParser):
    """An argument parser that raises :class:`UsageError` instead of exiting.

    Every argument that takes one value is stored by :class:`perfci.cli.once.StoreOnce`:
    a flag given twice, or an empty path, is refused.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOnce)  # its groups share the registry
        self.register("action", "store", StoreOnce)

    def error(self, message: str) -> NoReturn:
        """Raise the usage error as one line naming the flag, as every other error reads."""
        # Every error starts "perfci: error:", whichever subcommand's parser found it.
        raise UsageError(f"{self.prog.split()[0]}: error: {message}")


class Formatter(argparse.HelpFormatter):
    """Help that wraps descriptions but keeps text with line breaks (the epilogs) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class Accepted:
    """The values a flag accepts, for argparse: registered names and their patterns.

    Membership is the registry's (so ``pseudo_percentile_3`` is accepted); iteration
    lists the names and the patterns' templates, which is what argparse shows in an
    error.
    """

    def __init__(self, choices: registry.Choices) -> None:
        self.registered = choices

    def __contains__(self, value: object) -> bool:
        return value is not None and value in self.registered

    def __iter__(self) -> Iterator[str]:
        yield from self.registered.names
        yield from (p.template for p in self.registered.patterns)


def _accepts(choices: registry.Choices) -> Any:
    return Accepted(choices) if choices.patterns else choices.names


def _listing(choices: registry.Choices) -> str:
    names = [*choices.names, *(p.template for p in choices.patterns)]
    return ", ".join(names)


def _choice(
    p: Options,
    flag: str,
    choices: registry.Choices,
    *,
    what: str | None = None,
    unset: str | None = None,
    **kwargs: Any,
) -> None:
    """Add an option whose values are registered names; its help is the registry's.

    `unset` is the value the command uses when the flag is not given, shown as its
    default: the flag's default is then None, so that the command knows whether it was
    given (and can refuse it without its partner flag).
    """
    default = kwargs.get("default") if unset is None else unset
    tail = "" if default is None else f" (default: {default})"
    listing = what or f"one of {_listing(choices)}"
    kwargs.setdefault("metavar", "NAME")
    p.add_argument(
        flag, choices=_accepts(choices), help=f"{choices.help}: {listing}{tail}", **kwargs
    )


def _epilog(*sections: tuple[str, registry.Choices]) -> str:
    return "\n\n".join(f"{title}:\n{choices.describe()}" for title, choices in sections)


def _level(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _n_resamples(text: str) -> int | str:
    if text == "exact":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer or 'exact', got {text!r}"
        ) from None


def _separator(text: str) -> str:
    if text in ("\\t", "tab"):
        return "\t"
    if len(text) != 1 or text in '"\r\n':
        raise argparse.ArgumentTypeError(
            f"expected one character, e.g. ';' or '|' ('\\t' for a tab), got {text!r}"
        )
    return text


def _seed_value(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return seed


def _persons(text: str) -> float:
    """Read a number of persons: a whole number, or ``inf`` for infinitely many."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value != float("inf") and not (value == value and value == round(value)):
        raise argparse.ArgumentTypeError(
            f"expected a whole number of persons (or inf for infinitely many), got {text!r}"
        )
    return value


def _workers(text: str) -> int:
    most = available_cores()
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= most:
        raise argparse.ArgumentTypeError(
            f"expected an integer from 1 to {most} (the cores available), got {text!r}"
        )
    return value


def _common(p: argparse.ArgumentParser, *, level: str | None = "confidence") -> None:
    """Add ``--json``, ``--debug`` and the level flag shared by the commands."""
    if level == "confidence":
        p.add_argument(
            "--confidence-level",
            type=_level,
            default=0.95,
            metavar="C",
            help="confidence level, strictly between 0 and 1 (default: %(default)s)",
        )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress on standard error (shown only when it is a terminal, and for a "
        "command still running after 2 s)",
    )
    p.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show a traceback for errors instead of one line",
    )


def _seed(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--seed",
        type=_seed_value,
        default=None,
        metavar="S",
        help="seed of the random generator, a non-negative integer (default: none, fresh "
        "randomness on every run)",
    )


def _sep(p: Options) -> None:
    """Add ``--sep``, the delimiter of a CSV or TSV file."""
    p.add_argument(
        "--sep",
        type=_separator,
        metavar="SEP",
        help="delimiter of the file's columns, one character such as ';' or '|' ('\\t' or "
        "tab for a tab) (default: a tab for .tsv, else a comma)",
    )


def _file_columns(
    p: argparse.ArgumentParser, *, pred: tuple[str, ...] = ("--pred",), annotators: bool = False
) -> None:
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file, one row per text")
    if annotators:
        p.add_argument(
            "--truth",
            required=True,
            nargs="+",
            metavar="COL",
            help="column of reference labels; several columns are several annotators (an empty "
            "cell: the annotator did not code that text)",
        )
    else:
        p.add_argument("--truth", required=True, metavar="COL", help="column of reference labels")
    for flag in pred:
        which = {"--pred": "", "--pred-a": " A", "--pred-b": " B"}[flag]
        if flag == "--pred":
            p.add_argument(flag, required=True, metavar="COL", help="column of classifier labels")
            continue
        p.add_argument(
            flag,
            required=True,
            nargs="+",
            metavar="COL",
            help=f"column of classifier{which} labels (scores with --metric roc_auc); several "
            "columns are repeated runs",
        )


def _labels(p: Options) -> None:
    p.add_argument(
        "--positive",
        metavar="LABEL",
        help="the positive label (default: 1 for 0/1 or true/false codes; other labels need it)",
    )
    p.add_argument(
        "--negative",
        metavar="LABEL",
        help="the negative label; any other label is then an error (default: none, every "
        "label but the positive one is negative)",
    )


def _group(p: Options, *, required: bool = False) -> None:
    if required:
        p.add_argument("--group", required=True, metavar="COL", help="column of person ids")
        return
    p.add_argument(
        "--group",
        metavar="COL",
        help="column of person ids, for texts nested in persons (default: none, independent texts)",
    )


def _sample_design(p: Options) -> None:
    """Add the design flags of a weighted or stratified validation sample."""
    p.add_argument(
        "--weight",
        metavar="COL",
        help="column of each text's sampling weight, the inverse of its inclusion "
        "probability: every interval is then design-based, about the corpus (default: "
        "none; with --stratum-size, each stratum's corpus texts over its coded texts)",
    )
    p.add_argument(
        "--stratum",
        metavar="COL",
        help="column of each text's sampling stratum (e.g. the classifier's prediction the "
        "sample was stratified by) (default: none, one stratum)",
    )
    p.add_argument(
        "--stratum-size",
        metavar="COL",
        help="with --stratum, the column of each text's stratum's corpus texts (the same "
        "for every text of a stratum): the finite population correction and the default "
        "weights (default: none)",
    )


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of the ``perfci`` command line, one subcommand per job."""
    parser = Parser(
        prog="perfci",
        description="Honest confidence intervals for classifier performance metrics.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show a traceback for errors instead of one line"
    )
    sub = parser.add_subparsers(
        dest="command", required=True, parser_class=Parser, help="the job to do"
    )
    for add in _COMMANDS:
        add(sub)
    return parser


def _command(
    sub: argparse._SubParsersAction[Parser],
    name: str,
    help: str,
    *sections: tuple[str, registry.Choices],
) -> argparse.ArgumentParser:
    """Add the subcommand `name`: its help, its description and an epilog of `sections`."""
    p: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        description=help[0].upper() + help[1:] + ".",
        epilog=_epilog(*sections) if sections else None,
        formatter_class=Formatter,
    )
    p.set_defaults(command=name)
    return p


def _interval(sub: argparse._SubParsersAction[Parser]) -> None:
    """Add ``perfci interval``."""
    p = _command(
        sub, "interval", "analytic interval for a proportion", ("methods", registry.ANALYTIC_METHOD)
    )
    p.add_argument("--successes", type=float, required=True, metavar="X", help="successes x")
    p.add_argument("--trials", type=float, required=True, metavar="N", help="trials n")
    _choice(p, "--method", registry.ANALYTIC_METHOD, default="agresti_coull")
    _common(p)


def _coverage(sub: argparse._SubParsersAction[Parser]) -> None:
    """Add ``perfci coverage``."""
    p = _command(
        sub,
        "coverage",
        "exact coverage of an interval method, by binomial enumeration",
        ("methods", registry.EXACT_METHOD),
    )
    _choice(p, "--method", registry.EXACT_METHOD, required=True)
    p.add_argument("--n", type=int, required=True, metavar="N", help="relevant sample size")
    p.add_argument("--p", type=float, required=True, metavar="P", help="true proportion")
    _common(p)


def _bootstrap(sub: argparse._SubParsersAction[Parser]) -> None:
    """Add ``perfci bootstrap``."""
    p = _command(
        sub,
        "bootstrap",
        "bootstrap interval from confusion-matrix cells or a proportion",
        ("intervals", registry.BOOTSTRAP_INTERVAL),
        ("metrics", registry.BINARY_METRIC),
    )
    p.add_argument(
        "--cells",
        type=int,
        nargs=4,
        metavar=("TP", "FP", "FN", "TN"),
        help="the four cells of a confusion matrix (default: none; give these or "
        "--successes with --trials)",
    )
    p.add_argument(
        "--successes",
        type=int,
        metavar="X",
        help="successes of a proportion (default: none; with --trials, instead of --cells)",
    )
    p.add_argument(
        "--trials",
        type=int,
        metavar="N",
        help="trials of a proportion (default: none; with --successes)",
    )
    _choice(
        p,
        "--metric",
        registry.BOOTSTRAP_METRIC,
        what="proportion, a binary metric, or macro_<metric> / micro_<metric> "
        "(default: f1 with --cells, proportion with --successes)",
    )
    _choice(p, "--interval", registry.BOOTSTRAP_INTERVAL, default="percentile")
    p.add_argument(
        "--pseudo-count",
        type=int,
        default=0,
        metavar="L",
        help="pseudo count lambda, added to each cell (default: %(default)s)",
    )
    p.add_argument(
        "--n-resamples",
        type=_n_resamples,
        default=None,
        metavar="B",
        help="resamples, or 'exact' for a proportion's exact percentile interval "
        "(default: 2000, more above a 99%% level)",
    )
    _seed(p)
    _common(p)


def _report(sub: argparse._SubParsersAction[Parser]) -> None:
    """Add ``perfci report``."""
    p = _command(
        sub,
        "report",
        "every metric with its recommended interval",
        ("formats", registry.OUTPUT_FORMAT),
    )
    _file_columns(p, pred=(), annotators=True)
    p.add_argument(
        "--pred",
        required=True,
        nargs="+",
        metavar="COL",
        help="column of classifier labels; several columns are repeated runs of a stochastic "
        "classifier (a column per run)",
    )
    p.add_argument(
        "--run",
        metavar="COL",
        help="column of run ids in a long table (one row per text and run; needs --text) "
        "(default: none, one row per text)",
    )
    p.add_argument(
        "--text", metavar="COL", help="with --run, the column of text ids (default: none)"
    )
    _sep(p)
    _group(p)
    _sample_design(p)
    p.add_argument(
        "--by",
        metavar="COL",
        help="column of subgroups: a report per subgroup (default: none, one report)",
    )
    p.add_argument(
        "--score",
        metavar="COL",
        help="column of the classifier's scores (e.g. probabilities): adds the roc_auc row "
        "(default: none)",
    )
    p.add_argument(
        "--threshold",
        type=_number,
        metavar="T",
        help="read the --pred column as scores and count a score of at least T as positive "
        "(default: none, --pred holds labels)",
    )
    p.add_argument(
        "--differences",
        action="store_true",
        help="with --by, add the difference of each subgroup from the first (in sorted order) "
        "for every metric, with its interval",
    )
    p.add_argument(
        "--reference",
        metavar="VALUE",
        help="with --differences, the subgroup the others are compared with (default: the "
        "first in sorted order)",
    )
    p.add_argument(
        "--metrics",
        nargs="+",
        metavar="NAME",
        help="the metrics to report (default: every one that applies)",
    )
    p.add_argument(
        "--bayes",
        action="store_true",
        help="add the Bayesian credible intervals beside the frequentist ones",
    )
    _choice(p, "--bayes-sampler", registry.SAMPLER, unset="auto")
    p.add_argument(
        "--bayes-prior-sensitivity",
        action="store_true",
        help="with --bayes: also the interval under the alternative concentration prior, "
        "and whether it differs materially (default: off)",
    )
    p.add_argument(
        "--html",
        metavar="OUT",
        help="also write the report as one self-contained HTML page (.html: data summary, "
        "tables, figures, notes, methods paragraph); the table is still printed unless "
        "--quiet (default: none)",
    )
    p.add_argument(
        "--title",
        metavar="TEXT",
        help="with --html, the page's title (default: Validation of <--pred> against <--truth>)",
    )
    p.add_argument(
        "--pred-b",
        metavar="COL",
        help="with --html, a second classifier's labels: the report adds the paired "
        "comparison of --pred minus --pred-b for every metric (default: none)",
    )
    p.add_argument(
        "--covariates",
        nargs="+",
        metavar="COL",
        help="with --html, covariate columns (one value per text; person-level ones constant "
        "within a person): the report adds a performance model of the main metric "
        "(perfci.bayes.performance_model; PyMC and nutpie): coefficients, effects for new "
        "persons, a forest (default: none)",
    )
    p.add_argument(
        "--target",
        metavar="FILE",
        help="with --covariates, a table of the target's covariate patterns and a weight "
        "column (its relevant texts; without one, one row per relevant text, counted): "
        "the metric poststratified to it (default: none)",
    )
    p.add_argument(
        "--target-weight",
        metavar="COL",
        help="with --target, its weight column (default: weight, if the file has one)",
    )
    p.add_argument(
        "--classifiers",
        nargs="+",
        metavar="COL",
        help="with --html, other classifiers' label columns: the report adds each one's "
        "difference from --pred for every binary metric, the intervals of a metric holding "
        "jointly (max-t), with a table and a forest (default: none)",
    )
    _labels(p)
    _choice(p, "--format", registry.OUTPUT_FORMAT, default="table", metavar="FORMAT")
    _seed(p)
    _common(p)


def _compare(sub: argparse._SubParsersAction[Parser]) -> None:
    """Add ``perfci compare``."""
    p = _command(
        sub,
        "compare",
        "paired difference of a metric between two classifiers, or many at once",
        ("metrics", registry.COMPARE_METRIC),
        ("methods", registry.COMPARE_METHOD),
        ("adjustments", registry.MANY_ADJUST),
    )
    _file_columns(p, pred=())
    for flag, which in (("--pred-a", "A"), ("--pred-b", "B")):
        p.add_argument(
            flag,
            nargs="+",
            metavar="COL",
            help=f"column of classifier {which} labels (scores with --metric roc_auc); several "
            "columns are repeated runs (default: none; --pred-a and --pred-b, or --pred)",
        )
    p.add_argument(
        "--pred",
        nargs="+",
        metavar="COL",
        help="instead of --pred-a and --pred-b: a column of labels per classifier, two or "
        "more; their differences get intervals that hold jointly (perfci.compare_many) "
        "(default: none)",
    )
    p.add_argument(
        "--baseline",
        metavar="COL",
        help="with --pred, the classifier the others are compared with (default: every pair)",
    )
    _choice(p, "--adjust", registry.MANY_ADJUST, unset="max_t")
    _sep(p)
    _choice(p, "--metric", registry.COMPARE_METRIC, required=True)
    _choice(p, "--method", registry.COMPARE_METHOD, default="recommended")
    _group(p)
    _sample_design(p)
    _labels(p)
    _seed(p)
    _common(p)


def _rank(sub: argparse._SubParsersAction[Parser]) -> None:
    """Add ``perfci rank``."""
    p = _command(
        sub,
        "rank",
        "rank confidence sets of many classifiers on the same texts",
        ("metrics", registry.BINARY_METRIC),
    )
    _file_columns(p, pred=())
    p.add_argument(
        "--pred",
        required=True,
        nargs="+",
        metavar="COL",
        help="a column of labels per classifier, two or more",
    )
    _sep(p)
    _choice(p, "--metric", registry.BINARY_METRIC, required=True)
    _group(p)
    _labels(p)
    _choice(p, "--format", registry.OUTPUT_FORMAT, default="table", metavar="FORMAT")
    _common(p)


def _bayes(sub: argparse._SubParsersAction[Parser]) -> None:
    """Add ``perfci bayes``."""
    p = _command(
        sub,
        "bayes",
        "hierarchical Bayesian credible intervals beside the frequentist interval",
        ("metrics", registry.PROPORTION_METRIC),
        ("samplers", registry.SAMPLER),
        ("priors", registry.PRIOR),
    )
    _file_columns(p)
    _sep(p)
    _group(p, required=True)
    _choice(p, "--metric", registry.PROPORTION_METRIC, required=True)
    _choice(p, "--sampler", registry.SAMPLER, default="auto")
    _choice(p, "--prior", registry.PRIOR, default="pareto")
    p.add_argument(
        "--prior-sensitivity",
        action="store_true",
        help="also show the intervals under the other prior (exact grid) and say whether "
        "they differ materially (an end or the median moves by more than 10%% of the width)",
    )
    _choice(
        p,
        "--estimand",
        registry.ESTIMAND.subset(("population", "mu", "sampled_persons")),
        default="population",
    )
    p.add_argument(
        "--population-sizes",
        metavar="COL",
        help="column of each person's size in the population the classifier will be "
        "applied to, one value per person, repeated on their rows (default: their "
        "relevant texts here)",
    )
    p.add_argument(
        "--population-persons",
        type=_persons,
        metavar="M",
        help="persons in the population, a whole number at least those in the file "
        "(default: infinitely many)",
    )
    p.add_argument(
        "--credible-level",
        type=_level,
        default=0.95,
        metavar="L",
        help="credible (and confidence) level, strictly between 0 and 1 (default: %(default)s)",
    )
    _labels(p)
    _seed(p)
    _common(p, level=None)


def _validate(sub: argparse._SubParsersAction[Parser]) -> None:
    """Add ``perfci validate``."""
    p = _command(
        sub,
        "validate",
        "coverage validation suites: list, run, report",
        ("actions", registry.VALIDATE_ACTION),
    )
    _choice(p, "action", registry.VALIDATE_ACTION, metavar=None)
    p.add_argument(
        "suite",
        nargs="?",
        metavar="SUITE|DIR",
        help="run: a suite's name (see `validate list`) or the path of a suite file "
        "(.toml); report: the folder of result files (default: --out)",
    )
    # Each flag's default is None, so that a flag given to an action that does not take
    # it is refused; the commands fill in the defaults shown here.
    p.add_argument(
        "--scale",
        metavar="S",
        help="run: the suite's scale: smoke (seconds), full (the paper's), or another the "
        "suite defines, as `validate list` shows (default: smoke)",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="run and report: folder of result files (default: validation/results)",
    )
    p.add_argument(
        "--figures",
        metavar="DIR",
        help="report: folder of the figures (default: DIR/figures, inside the results folder)",
    )
    p.add_argument(
        "--formats",
        metavar="F,F",
        help="report: file formats of the figures, comma-separated: png, svg, pdf (default: png)",
    )
    p.add_argument(
        "--x",
        default=None,
        metavar="DIM",
        help="report: grid dim on the x axis of the figures of each suite (default: the "
        "numeric dim with the most values)",
    )
    p.add_argument(
        "--workers",
        type=_workers,
        metavar="N",
        help="run: local Dask workers, from 1 to the cores available (default: 1, in this process)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="run: address of a running Dask scheduler (default: none, local workers)",
    )
    p.add_argument(
        "--resume", action="store_true", help="run: keep the cells a killed run finished"
    )
    _common(p, level=None)


def _plan(sub: argparse._SubParsersAction[Parser]) -> None:
    """Add ``perfci plan``."""
    p = _command(
        sub,
        "plan",
        "relevant texts (and persons) for a target half-width, from expected values or a pilot",
        ("methods", registry.PLAN_METHOD),
        ("metrics of --pilot", registry.PROPORTION_METRIC),
    )
    p.add_argument(
        "--metric-value",
        type=float,
        metavar="V",
        help="expected metric value, in (0, 1) (default: none, needed without --pilot; with "
        "--pilot, the pilot's estimate)",
    )
    p.add_argument(
        "--half-width",
        "--target",
        type=float,
        required=True,
        metavar="H",
        help="largest half-width wanted, in (0, 0.5)",
    )
    _choice(p, "--method", registry.PLAN_METHOD, default="agresti_coull")
    p.add_argument(
        "--pseudo-count",
        type=int,
        default=0,
        metavar="L",
        help="pseudo count lambda of --method percentile (default: %(default)s)",
    )
    p.add_argument(
        "--prevalence",
        type=float,
        metavar="P",
        help="share of texts that are relevant, for the texts to label in all (default: none; "
        "with --pilot, the pilot's share)",
    )
    p.add_argument(
        "--icc",
        type=float,
        metavar="R",
        help="ICC of a nested design, with --texts-per-person (default: none, independent "
        "texts; with --pilot and --group, the pilot's)",
    )
    p.add_argument(
        "--texts-per-person",
        type=float,
        metavar="B",
        help="mean relevant texts per person of a nested design (default: none; with --pilot "
        "and --group, the pilot's)",
    )
    p.add_argument(
        "--cluster-size-cv",
        type=float,
        metavar="CV",
        help="coefficient of variation of the relevant texts per person, nested designs "
        "(default: 0, every person the same number; with --pilot and --group, the pilot's)",
    )
    pilot = p.add_argument_group(
        "pilot",
        "Estimate the metric value, the prevalence and (with --group) the ICC, the relevant "
        "texts per person and their CV from a pilot labelled file, and plan from them; "
        "the flags above, when given, replace the pilot's estimates.",
    )
    pilot.add_argument(
        "--pilot",
        metavar="FILE",
        help="pilot labelled texts: CSV, TSV or Parquet, one row per text, read as by "
        "`perfci report` (default: none, plan from --metric-value)",
    )
    _sep(pilot)
    pilot.add_argument(
        "--truth",
        metavar="COL",
        help="column of the pilot's reference labels (default: none; needed with --pilot)",
    )
    pilot.add_argument(
        "--pred",
        metavar="COL",
        help="column of the pilot's classifier labels (default: none; needed with --pilot)",
    )
    _group(pilot)
    _choice(
        pilot,
        "--metric",
        registry.PROPORTION_METRIC,
        what=f"with --pilot, the one planned for, {_listing(registry.PROPORTION_METRIC)} "
        "(default: none; needed with --pilot)",
    )
    _labels(pilot)
    _common(p)


def _demo(sub: argparse._SubParsersAction[Parser]) -> None:
    """Add ``perfci demo``."""
    p = _command(sub, "demo", "report, comparison and plan for the bundled example")
    _common(p)


#: The builder of each subcommand, in the order of ``perfci --help``.
_COMMANDS = (
    _interval,
    _coverage,
    _bootstrap,
    _report,
    _compare,
    _rank,
    _bayes,
    _validate,
    _plan,
    _demo,
)


#: The design arguments and the flags that feed them.
_DESIGN_FLAGS = {"weights": "weight", "strata": "stratum", "stratum_sizes": "stratum_size"}
#: Library arguments that a command's flags feed under another name; every other argument
#: has its flag's name (`method` is ``--method``, `n_resamples` is ``--n-resamples``).
_ARGUMENT_FLAGS = {
    "interval": {"x": "successes", "n": "trials"},
    "bootstrap": {"counts": "cells", "rng": "seed"},
    "report": {
        "y_true": "truth",
        "y_pred": "pred",
        "groups": "group",
        "rng": "seed",
        **_DESIGN_FLAGS,
    },
    "compare": {
        "y_true": "truth",
        "groups": "group",
        "rng": "seed",
        "preds": "pred",
        **_DESIGN_FLAGS,
    },
    "plan": {"y_true": "truth", "y_pred": "pred", "groups": "group"},
    "rank": {"y_true": "truth", "preds": "pred", "groups": "group"},
    "bayes": {
        "y_true": "truth",
        "y_pred": "pred",
        "groups": "group",
        "rng": "seed",
        "confidence_level": "credible_level",
        "level": "credible_level",
    },
    "validate": {"folder": "figures"},  # make_figures' folder is `--figures`
}
#: Flags whose value is a column of the file.
_COLUMN_FLAGS = (
    "truth",
    "pred",
    "pred_a",
    "pred_b",
    "group",
    "by",
    "score",
    "run",
    "text",
    "weight",
    "stratum",
    "stratum_size",
)
#: Parsed values that are not flags the user typed as ``--name``.
_NOT_FLAGS = ("command", "debug", "json", "quiet", "file", "action", "suite")


def in_user_words(message: str, args: argparse.Namespace) -> str:
    """Name, in a library message, the flags and columns the user typed.

    Each argument name in backticks becomes its flag (`` `x` `` is `` `--successes` `` in
    ``perfci interval``) and, for a flag naming a column, the column too (`` `y_true` `` is
    `` `--truth` column 'human' ``). Names without a flag are left as they are.

    Examples
    --------
    >>> from perfci.cli.parser import build_parser, in_user_words
    >>> args = build_parser().parse_args(["interval", "--successes", "5", "--trials", "2"])
    >>> in_user_words("`x` must not exceed `n`.", args)
    '`--successes` must not exceed `--trials`.'
    """
    aliases = _ARGUMENT_FLAGS.get(getattr(args, "command", ""), {})
    given = vars(args)

    def flag(match: re.Match[str]) -> str:
        dest = aliases.get(match.group(1), match.group(1))
        if dest not in given or dest in _NOT_FLAGS:
            return match.group(0)
        words = f"`--{dest.replace('_', '-')}`"
        if dest in _COLUMN_FLAGS and given[dest] is not None:
            words += f" column {given[dest]!r}"
        return words

    return re.sub(r"`([A-Za-z_]\w*)`", flag, message)
