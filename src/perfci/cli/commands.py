"""The commands of the ``perfci`` command line, one function per command.

Each takes the parsed arguments and prints; bad input raises :class:`ValueError` with a
message naming the flag or column, which :func:`perfci.cli.main` prints as one line.
The library is imported inside the commands, so a command loads only what it uses.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .._core.text import visible_text
from . import inputs, many_commands, rendering, validate_commands

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..runs_comparison import RunsComparison

__all__ = [
    "COMMANDS",
    "draws_own_progress",
    "bayes",
    "bootstrap",
    "compare",
    "coverage",
    "demo",
    "interval",
    "plan",
    "report",
]


def interval(args: argparse.Namespace) -> None:
    """``perfci interval``: an analytic interval for a proportion."""
    from ..analytic import proportion_ci

    ci = proportion_ci(
        args.successes, args.trials, method=args.method, confidence_level=args.confidence_level
    )
    text = (
        f"{ci.method} {100 * ci.confidence_level:g}% interval for {args.successes:g} of "
        f"{args.trials:g}: estimate {ci.estimate:.4f}, [{ci.low:.4f}, {ci.high:.4f}]"
        + (" (clipped to [0, 1])" if ci.clipped else "")
    )
    rendering.emit(ci, args.json, text)


def coverage(args: argparse.Namespace) -> None:
    """``perfci coverage``: exact operating characteristics of an interval method."""
    from .._core.replicates import check_pseudo_count
    from ..exact import operating_characteristics

    if args.method.startswith("pseudo_percentile_"):  # the bootstrap's limit on lambda
        try:
            check_pseudo_count(int(args.method.rsplit("_", 1)[1]))
        except ValueError as exc:
            said = str(exc).replace("`pseudo_count`", "its pseudo count", 1)
            raise ValueError(f"`--method` {args.method!r}: {said}") from None
    oc = operating_characteristics(
        args.method, args.n, args.p, confidence_level=args.confidence_level
    )
    text = (
        f"{oc.method} at n = {args.n}, p = {args.p:g}, nominal "
        f"{100 * args.confidence_level:g}%: exact coverage {float(oc.coverage):.4f} "
        f"(interval below p {float(oc.miss_low):.4f}, above p {float(oc.miss_high):.4f}); "
        f"expected half-width {float(oc.expected_half_width):.4f}"
    )
    rendering.emit(oc, args.json, text)


def bootstrap(args: argparse.Namespace) -> None:
    """``perfci bootstrap``: a bootstrap interval from cells or a proportion.

    Bad counts are refused in the words of the flags given: with ``--successes X --trials
    N``, ``--trials`` must be at least 1 and ``--successes`` within 0 to N.
    """
    from ..bootstrap import bootstrap_ci

    if args.cells is not None:
        if args.successes is not None or args.trials is not None:
            raise ValueError("give either `--cells` or `--successes` with `--trials`, not both.")
        counts: Any = args.cells
        metric = args.metric or "f1"
    else:
        if args.successes is None or args.trials is None:
            raise ValueError("give `--cells TP FP FN TN`, or `--successes X --trials N`.")
        if args.trials < 1:  # a proportion of no trials: name the flag given, not `--cells`
            raise ValueError(f"`--trials` must be at least 1; got {args.trials}.")
        if args.successes < 0:
            raise ValueError(f"`--successes` must be non-negative; got {args.successes}.")
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
        **({} if args.n_resamples is None else {"n_resamples": args.n_resamples}),
        confidence_level=args.confidence_level,
        rng=args.seed,
    )
    payload = {**ci.to_dict(), "seed": args.seed}
    label = ci.interval + (" (fell back to percentile)" if ci.bca_fallback else "")
    text = (
        f"{ci.metric}: estimate {ci.estimate:.4f}, {100 * ci.confidence_level:g}% {label} "
        f"bootstrap interval [{ci.low:.4f}, {ci.high:.4f}] (pseudo count {ci.pseudo_count}, "
        f"{ci.n_resamples} resamples, {ci.n_invalid_resamples} undefined)"
    )
    rendering.emit(payload, args.json, text)


def report(args: argparse.Namespace) -> None:
    """``perfci report``: every metric with its recommended interval."""
    from ..reporting import report as report_

    html = _html_target(args)  # a bad --html fails before any work
    frame = inputs.read_table(args.file, sep=args.sep)
    truths = inputs.once_each("--truth", args.truth, "--pred", args.pred)
    if html is not None and len(truths) > 1 and len(args.pred) > 1:
        raise ValueError(
            "`--html` takes several `--truth` (annotators) or `--pred` columns (runs), not both."
        )
    args.truth = truths[0]  # one reference; several are read below as annotators' codes
    if len(truths) > 1:
        if args.run is not None:
            raise ValueError("`--run` (a long table of runs) takes one `--truth` column.")
        unavailable = {"--by": args.by, "--score": args.score, "--threshold": args.threshold}
        for flag in (flag for flag, value in unavailable.items() if value is not None):
            raise ValueError(f"`{flag}` is not available with several `--truth` columns.")
    preds = list(args.pred)
    if args.run is not None:
        frame, preds = inputs.wide_runs(args, frame)
    elif args.text is not None:
        raise ValueError("`--text` names the texts of a long table of runs: it needs `--run`.")
    # the scores are read before --threshold turns the --pred column (maybe the same) into labels
    score = (
        None if args.score is None else inputs.read_scores(frame, args.score, "--score", args.file)
    )
    for column in preds:
        if args.threshold is not None:
            frame = frame.assign(**{column: inputs.thresholded_labels(args, frame, column)})
        else:
            inputs.refuse_scores_as_labels(frame, column, "--pred", args.file)
    if len(truths) > 1:  # several annotators: the library reads their codes and the labels
        positive = args.positive
        pred = inputs.read_runs(frame, preds, "--pred", args.file)
        values = {"y_true": inputs.annotator_codes(frame, truths, args.file), "y_pred": pred}
    elif len(preds) == 1:
        columns = {"y_true": ("--truth", args.truth), "y_pred": ("--pred", preds[0])}
        values, positive = inputs.read_labels(args, columns, frame, one_vs_rest=True)
    else:  # repeated runs: a column per run, read by the library's one label contract
        positive = args.positive
        truth = inputs.read_column(frame, args.truth, "--truth", args.file, labels=True)
        values = {"y_true": truth.to_numpy()}
        values["y_pred"] = inputs.read_runs(frame, preds, "--pred", args.file)
    groups = inputs.read_column(frame, args.group, "--group", args.file)
    by = inputs.read_column(frame, args.by, "--by", args.file)
    design = inputs.read_design(args, frame)
    if html is not None:
        _html_report(args, frame, values, positive, groups, by, score, preds, html, design)
        return
    table = report_(
        values["y_true"],
        values["y_pred"],
        groups=groups,
        **_report_options(args, by, score, positive),
        **design,
    )
    _print_report(args, table)


def _report_options(args: argparse.Namespace, by: Any, score: Any, positive: Any) -> dict:
    """Return the options of ``perfci report`` that `report` and `validation_report` share."""
    return {
        "by": by,
        "score": score,
        "differences": args.differences,
        "reference": args.reference,
        "metrics": args.metrics,
        "bayes": args.bayes,
        "bayes_sampler": "auto" if args.bayes_sampler is None else args.bayes_sampler,
        "bayes_prior_sensitivity": args.bayes_prior_sensitivity,
        "positive": positive,
        "confidence_level": args.confidence_level,
        "rng": args.seed,
    }


def _print_report(args: argparse.Namespace, table: Any, published: Any = None) -> None:
    """Print a report's table in the `--format` asked for (`published`: its HTML report)."""
    from ..publishing import latex_table, markdown_table

    if args.format in ("latex", "markdown") and not args.json:
        if published is not None:
            rendering.echo(
                published.to_latex() if args.format == "latex" else published.to_markdown()
            )
            return
        write = latex_table if args.format == "latex" else markdown_table
        names = {} if args.by is None else {"by": args.by}
        rendering.echo(write(table, confidence_level=args.confidence_level, names=names), end="")
        return
    if args.by is not None:
        table = table.rename(columns={"by": args.by})
    rendering.print_table(table, "json" if args.json else args.format)


def _html_target(args: argparse.Namespace) -> Path | None:
    """Return the `--html` file, checked before any work; refuse a flag without its partner.

    `--pred-b`, `--classifiers`, `--covariates` and `--title` need `--html`, `--target`
    needs `--covariates`, `--target-weight` needs `--target` and `--bayes-sampler` needs
    `--bayes`.

    The file must not be a folder, must end in ``.html`` or ``.htm``, must be in a folder
    that exists, and must not be a read-only file: perfci does not replace a file the
    user may not write (or one with no write bit), and a file it replaces keeps its
    permission bits.
    """
    partners = (
        (
            args.target,
            args.covariates,
            "`--target` is poststratified by the performance model: give `--covariates`.",
        ),
        (
            args.target_weight,
            args.target,
            "`--target-weight` names the weight column of the `--target` file: give `--target`.",
        ),
        (
            args.bayes_sampler,
            args.bayes or None,
            "`--bayes-sampler` chooses the sampler of the Bayesian rows: it needs `--bayes`.",
        ),
    )
    for value, partner, message in partners:
        if value is not None and partner is None:
            raise ValueError(message)
    if args.html is None:
        if args.pred_b is not None:
            raise ValueError(
                "`--pred-b` adds a paired comparison to the HTML report: it needs `--html`."
            )
        if args.classifiers is not None:
            raise ValueError(
                "`--classifiers` adds a comparison of classifiers to the HTML report: it "
                "needs `--html`."
            )
        if args.covariates is not None:
            raise ValueError(
                "`--covariates` adds a performance model to the HTML report: it needs `--html`."
            )
        if args.title is not None:
            raise ValueError("`--title` titles the HTML report: it needs `--html`.")
        return None
    if args.title is not None and not args.title.strip():
        raise ValueError(f"`--title` must be a non-empty text; got {args.title!r}.")
    from ..publishing.report import check_output_path

    return check_output_path(args.html, "`--html`", (".html", ".htm"))


def _html_report(
    args: argparse.Namespace,
    frame: Any,
    values: dict[str, Any],
    positive: Any,
    groups: Any,
    by: Any,
    score: Any,
    preds: list[str],
    html: Path,
    design: dict[str, Any],
) -> None:
    """``perfci report --html``: the validation report, written whole, and its table.

    Annotators and runs are named by their columns and take no comparison or model.
    """
    import pandas as pd

    from ..publishing import validation_report

    pred = preds[0]
    if len(preds) > 1:  # a table of runs, a column per run by its name
        values = {**values, "y_pred": pd.DataFrame(values["y_pred"], columns=preds)}
    crossed = [isinstance(values[key], pd.DataFrame) for key in ("y_true", "y_pred")]
    flags = {"--pred-b": args.pred_b, "--classifiers": args.classifiers}
    for flag, value in {**flags, "--covariates": args.covariates}.items():
        if any(crossed) and value is not None:
            raise ValueError(
                f"`{flag}` is not available in the HTML report of several `--truth` or "
                "`--pred` columns (annotators or runs)."
            )
    pred_b, classifiers = None, None
    others = list(args.classifiers or [])
    if len(set(others)) != len(others) or pred in others:
        raise ValueError(
            f"`--classifiers` must name each other classifier once, not --pred; got {others}."
        )
    if args.pred_b is not None or others:  # read with the other labels, by the same coding
        columns = {"y_true": ("--truth", args.truth), "y_pred": ("--pred", pred)}
        if args.pred_b is not None:
            columns["pred_b"] = ("--pred-b", args.pred_b)
        for j, column in enumerate(others):
            columns[f"_{j}"] = ("--classifiers", column)
        for key, (flag, column) in columns.items():
            if key not in ("y_true", "y_pred"):
                inputs.refuse_scores_as_labels(frame, column, flag, args.file)
        values, positive = inputs.read_labels(args, columns, frame, one_vs_rest=True)
        pred_b = values.get("pred_b")
        if others:
            classifiers = {c: values[f"_{j}"] for j, c in enumerate(others)}
    given = {
        "y_true": None if crossed[0] else args.truth,  # else named by the columns
        "y_pred": (args.pred[0] if args.run is not None else None) if crossed[1] else pred,
        "pred_b": args.pred_b,
        "groups": args.group,
        "by": args.by,
        "score": args.score,
        "weights": args.weight,
        "strata": args.stratum,
        "stratum_sizes": args.stratum_size,
    }
    covariates, target, target_weight = _performance_inputs(args, frame)
    published = validation_report(
        values["y_true"],
        values["y_pred"],
        groups=groups,
        pred_b=pred_b,
        classifiers=classifiers,
        covariates=covariates,
        target=target,
        target_weight=target_weight,
        names={key: value for key, value in given.items() if value is not None},
        title=args.title,
        **_report_options(args, by, score, positive),
        **design,
    )
    published.save(html)
    if not args.quiet:
        _print_report(args, published.table, published)


def _numbers_where_numeric(table: Any) -> Any:
    """Return the table with every column whose cells all read as numbers made numeric."""
    import pandas as pd

    out = table.copy()
    for column in out.columns:
        numeric = pd.to_numeric(out[column], errors="coerce")
        if numeric.notna().all():
            out[column] = numeric
    return out


def _performance_inputs(args: argparse.Namespace, frame: Any) -> tuple[Any, Any, str | None]:
    """Return the covariates, the target and its weight column of ``--covariates``."""
    if args.covariates is None:  # --target and --target-weight are refused without it
        return None, None, None
    columns = list(args.covariates)
    if len(set(columns)) != len(columns):
        raise ValueError(f"`--covariates` must name each column once; got {columns}.")
    for column in columns:
        inputs.read_column(frame, column, "--covariates", args.file)
    covariates = _numbers_where_numeric(frame[columns])
    if args.target is None:  # and --target-weight without it is refused
        return covariates, None, None
    target = inputs.read_table(args.target, "--target", sep=args.sep)
    for column in columns:
        inputs.read_column(target, column, "--target", args.target)
    weight = args.target_weight or ("weight" if "weight" in target.columns else None)
    if weight is not None:
        inputs.read_numbers(target, weight, "--target-weight", args.target, "a weight (>= 0)")
    kept = [*columns, *([weight] if weight is not None else [])]
    return covariates, _numbers_where_numeric(target[kept]), weight


def _comparison_payload(result: Any, name_a: str, name_b: str) -> dict[str, Any]:
    payload = {"a": name_a, "b": name_b, **result.to_dict()}
    del payload["bootstrap"]  # its replicate summary is in low/high and method
    return payload


def _comparison_text(result: Any, name_a: str, name_b: str) -> str:
    r"""Return the one result line of a paired comparison of two classifiers.

    The names come from the data: each goes through
    :func:`perfci._core.text.visible_text`, so a line break in a column name shows as
    ``\n`` and the result stays on one line.
    """
    import math

    r = result
    name_a, name_b = visible_text(name_a), visible_text(name_b)
    text = (
        f"{r.metric}: {name_a} {r.estimate_a:.4f} vs {name_b} {r.estimate_b:.4f}; "
        f"difference {r.difference:+.4f}, {100 * r.confidence_level:g}% interval "
        f"[{r.low:+.4f}, {r.high:+.4f}] by {r.method}; {r.test} p = {r.p_value:.4g}; "
        f"the two disagree on {100 * r.disagreement:.1f}% of {r.n_texts} texts"
    )
    if r.persons is not None:
        text += f" from {r.persons} persons"
    chosen_newcombe = r.method.startswith("Newcombe")
    if not math.isnan(r.newcombe_low) and not chosen_newcombe:
        which = "Newcombe paired interval on the effective sample size"
        text += (
            f"; {which if r.persons is not None else 'Newcombe paired interval'} "
            f"[{r.newcombe_low:+.4f}, {r.newcombe_high:+.4f}]"
        )
    return text


def _auc_comparison_text(result: Any, name_a: str, name_b: str) -> str:
    """Return the one result line of two ROC AUCs; the names visible, as in `_comparison_text`."""
    r = result
    name_a, name_b = visible_text(name_a), visible_text(name_b)
    text = (
        f"roc_auc: {name_a} {r.estimate_a:.4f} vs {name_b} {r.estimate_b:.4f}; difference "
        f"{r.difference:+.4f}, {100 * r.confidence_level:g}% interval [{r.low:+.4f}, "
        f"{r.high:+.4f}] by {r.method}; {r.test} p = {r.p_value:.4g}; {r.n_positive} "
        f"positive and {r.n_negative} negative texts"
    )
    return text + (f" from {r.persons} persons" if r.persons is not None else "")


def compare(args: argparse.Namespace) -> None:
    """``perfci compare``: the paired difference of a metric between two classifiers."""
    from ..comparison import compare as compare_

    if args.pred is not None:
        many_commands.compare_many(args)
        return
    if args.pred_a is None or args.pred_b is None:
        raise ValueError(
            "`perfci compare` takes `--pred-a` and `--pred-b` (two classifiers), or `--pred` "
            "with two or more columns (many classifiers)."
        )
    if args.baseline is not None:
        raise ValueError("`--baseline` names one of the `--pred` columns: it needs `--pred`.")
    if args.adjust is not None:
        raise ValueError(
            "`--adjust` makes the intervals of many classifiers hold jointly: it needs `--pred`."
        )
    frame = inputs.read_table(args.file, sep=args.sep)
    runs_a, runs_b = list(args.pred_a), list(args.pred_b)
    several = len(runs_a) > 1 or len(runs_b) > 1
    if (several or args.metric == "roc_auc") and any(
        value is not None for value in (args.weight, args.stratum, args.stratum_size)
    ):
        what = "repeated runs" if several else "`--metric roc_auc`"
        raise ValueError(
            f"a weighted or stratified sample (`--weight`, `--stratum`, `--stratum-size`) "
            f"has design-based comparisons of one label column per classifier and a binary "
            f"metric; {what} is not supported with it."
        )
    if several:
        _compare_runs(args, frame, runs_a, runs_b)
        return
    args.pred_a, args.pred_b = runs_a[0], runs_b[0]
    if args.metric == "roc_auc":
        values, positive = inputs.read_labels(args, {"y_true": ("--truth", args.truth)}, frame)
        scores = {
            key: inputs.read_scores(frame, column, flag, args.file)
            for key, flag, column in (
                ("a", "--pred-a", args.pred_a),
                ("b", "--pred-b", args.pred_b),
            )
        }
        result: Any = compare_(
            values["y_true"],
            scores["a"],
            scores["b"],
            "roc_auc",
            groups=inputs.read_column(frame, args.group, "--group", args.file),
            method=args.method,
            positive=positive,
            confidence_level=args.confidence_level,
            rng=args.seed,
        )
        rendering.emit(
            _comparison_payload(result, args.pred_a, args.pred_b),
            args.json,
            _auc_comparison_text(result, args.pred_a, args.pred_b),
        )
        return
    for flag, column in (("--pred-a", args.pred_a), ("--pred-b", args.pred_b)):
        inputs.refuse_scores_as_labels(
            frame,
            column,
            flag,
            args.file,
            "Compare two scores' ROC AUCs with `--metric roc_auc`, or threshold the scores "
            "into labels first.",
        )
    columns = {
        "y_true": ("--truth", args.truth),
        "pred_a": ("--pred-a", args.pred_a),
        "pred_b": ("--pred-b", args.pred_b),
    }
    values, positive = inputs.read_labels(args, columns, frame)
    groups = inputs.read_column(frame, args.group, "--group", args.file)
    result = compare_(
        values["y_true"],
        values["pred_a"],
        values["pred_b"],
        args.metric,
        groups=groups,
        method=args.method,
        positive=positive,
        confidence_level=args.confidence_level,
        rng=args.seed,
        **inputs.read_design(args, frame),
    )
    rendering.emit(
        _comparison_payload(result, args.pred_a, args.pred_b),
        args.json,
        _comparison_text(result, args.pred_a, args.pred_b),
    )


def _compare_runs(
    args: argparse.Namespace, frame: pd.DataFrame, runs_a: list[str], runs_b: list[str]
) -> None:
    """``perfci compare`` with repeated runs: several ``--pred-a`` or ``--pred-b`` columns."""
    from ..comparison import compare as compare_

    if args.metric == "roc_auc":
        raise ValueError(
            "`--metric` roc_auc compares two score columns: give one `--pred-a` and one `--pred-b`."
        )
    if args.method != "recommended":
        raise ValueError(
            f"`--method` {args.method!r} is a method of one run each; with repeated runs leave "
            "it unset (the variance components of texts or persons and runs)."
        )
    sides = []
    for flag, columns in (("--pred-a", runs_a), ("--pred-b", runs_b)):
        for column in columns:
            inputs.refuse_scores_as_labels(frame, column, flag, args.file)
        sides.append(inputs.read_runs(frame, columns, flag, args.file))
    truth = inputs.read_column(frame, args.truth, "--truth", args.file, labels=True).to_numpy()
    result = compare_(
        truth,
        sides[0],
        sides[1],
        args.metric,
        groups=inputs.read_column(frame, args.group, "--group", args.file),
        positive=args.positive,
        confidence_level=args.confidence_level,
    )
    name_a, name_b = "+".join(runs_a), "+".join(runs_b)
    r = cast("RunsComparison", result)  # columns of runs on both sides: a comparison of runs
    shown_a, shown_b = visible_text(name_a), visible_text(name_b)  # one line, as any name
    text = (
        f"{r.metric}: {shown_a} {r.estimate_a:.4f} vs {shown_b} {r.estimate_b:.4f}; difference "
        f"{r.difference:+.4f}, {100 * r.confidence_level:g}% interval [{r.low:+.4f}, "
        f"{r.high:+.4f}] by {r.method} ({r.estimand}, sources: {', '.join(r.sources)}); "
        f"t p = {r.p_value:.4g} on {r.df:.1f} df"
    )
    rendering.emit({"a": name_a, "b": name_b, **r.to_dict()}, args.json, text)


#: The estimands of ``perfci bayes``, in the order of its JSON.
ESTIMANDS = ("population", "mu", "sampled_persons")


def bayes(args: argparse.Namespace) -> None:
    """``perfci bayes``: credible intervals beside the frequentist interval."""
    import pandas as pd

    from .. import bayes as bayes_
    from ..reporting import metric_ci

    frame = inputs.read_table(args.file, sep=args.sep)
    values, positive = inputs.read_labels(
        args, {"y_true": ("--truth", args.truth), "y_pred": ("--pred", args.pred)}, frame
    )
    truth, pred = values["y_true"], values["y_pred"]
    groups = inputs.read_column(frame, args.group, "--group", args.file)
    level = args.credible_level
    sizes = inputs.person_sizes(frame, args, groups)
    result = bayes_.fit_proportion(
        truth,
        pred,
        args.metric,
        groups=groups,
        positive=positive,
        sampler=args.sampler,
        prior=args.prior,
        rng=args.seed,
        population_sizes=sizes,
        population_persons=args.population_persons,
    )
    frequentist = metric_ci(
        truth, pred, args.metric, groups=groups, positive=positive, confidence_level=level
    )
    # The fit's to_dict() summary, and what only the command knows: the metric, the level,
    # the relevant texts and the frequentist interval. The flags sit with the diagnostics.
    fit = result.to_dict(confidence_level=level)
    shown = frequentist.to_dict()
    payload: dict[str, Any] = {
        "metric": args.metric,
        "sampler": fit["sampler"],
        "prior": fit["prior"],
        "credible_level": level,
        "persons": fit["persons"],
        "relevant_n": int(result.trials.sum()),
        "estimand": args.estimand,
        **{e: fit[e] for e in ESTIMANDS},
        "diagnostics": {
            **fit["diagnostics"],
            "flagged": fit["flagged"],
            "flag_reasons": fit["flag_reasons"],
        },
        "frequentist": {k: shown[k] for k in ("estimate", "low", "high", "method")},
        "tail": fit["tail"],
        "kappa": _kappa_row(result, level),
    }
    if args.prior_sensitivity:
        # on the exact grid under both priors, whatever the sampler of the fit
        fitted = result.posterior["posterior"]["person"].to_numpy()
        options = {
            "population_sizes": None if sizes is None else [sizes[g] for g in fitted],
            "population_persons": args.population_persons,
            "rng": args.seed,
        }
        payload["prior_sensitivity"] = {
            e: result.prior_sensitivity(e, level, **options).to_dict() for e in ESTIMANDS
        }
    if args.json:
        print(rendering.json_text(payload))
        return
    about = {
        "population": "population",
        "mu": "mu, the mean person-level rate",
        "sampled_persons": "sampled_persons, these persons only (not comparable)",
    }
    rows = [
        {
            "interval": f"frequentist: {frequentist.method}",
            "estimate": frequentist.estimate,
            "low": frequentist.low,
            "high": frequentist.high,
        },
        {
            "interval": f"bayes ({fit['sampler']}): {about[args.estimand]}",
            **{k: payload[args.estimand][k] for k in ("estimate", "low", "high")},
        },
    ]
    rendering.echo(
        f"{args.metric} of {payload['relevant_n']} relevant texts from {payload['persons']} "
        f"persons; {100 * level:g}% intervals (Bayesian: equal-tailed, posterior median):\n"
    )
    rendering.print_table(pd.DataFrame(rows), "table")
    d = payload["diagnostics"]
    r_hat = "n/a (exact grid)" if d["r_hat"] is None else f"{d['r_hat']:.3f}"
    rendering.echo(
        f"\ndiagnostics: R-hat {r_hat}, bulk ESS {d['ess_bulk']:.0f}, tail ESS "
        f"{d['ess_tail']:.0f}, divergences {d['divergences']}"
        + (f"; FLAGGED: {'; '.join(d['flag_reasons'])}" if d["flagged"] else "")
    )
    k = payload["kappa"]
    rendering.echo(
        f"concentration kappa: median {k['median']:.4g}, {100 * level:g}% equal-tailed "
        f"[{k['low']:.4g}, {k['high']:.4g}]" + (f"; {k['note']}" if k["note"] else "")
    )
    if args.prior_sensitivity:
        sensitivity = payload["prior_sensitivity"]
        rows = []
        for e in ESTIMANDS:
            check = sensitivity[e]
            for prior, ci in (("prior", "interval"), ("alternative_prior", "alternative")):
                rows.append(
                    {
                        "interval": f"grid, prior {check[prior]}: {e}",
                        **{key: check[ci][key] for key in ("estimate", "low", "high")},
                        "differs": "yes" if check["differs"] else "no",
                    }
                )
        rendering.echo(f"\nprior sensitivity (exact grid, {100 * level:g}% equal-tailed):\n")
        rendering.print_table(pd.DataFrame(rows), "table")
        for e in ESTIMANDS:
            rendering.echo(f"{e}: {sensitivity[e]['reason']}")


def _kappa_row(result: Any, level: float) -> dict[str, Any]:
    """Return the concentration's summary row (quantiles; moments where they exist)."""
    import warnings

    from .._core.results import to_jsonable
    from ..bayes import BayesianDiagnosticsWarning

    with warnings.catch_warnings():
        # the row's note says what the warning would (an infinite moment)
        warnings.simplefilter("ignore", BayesianDiagnosticsWarning)
        row = result.summary(level).loc["kappa"]
    return to_jsonable({key: row[key] for key in ("median", "low", "high", "mean", "sd", "note")})


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


#: Flags of ``perfci plan`` that read the pilot file, and the flags that replace its estimates.
_PILOT_ONLY = ("truth", "pred", "group", "metric", "positive", "negative", "sep")
_PILOT_OVERRIDES = ("metric_value", "prevalence", "icc", "texts_per_person", "cluster_size_cv")


def plan(args: argparse.Namespace) -> None:
    """``perfci plan``: relevant texts (and persons) for a target half-width."""
    from ..planning import plan_sample_size

    options = {
        "confidence_level": args.confidence_level,
        "method": args.method,
        "pseudo_count": args.pseudo_count,
    }
    if args.pilot is not None:
        _plan_from_pilot(args, options)
        return
    for name in _PILOT_ONLY:
        if getattr(args, name) is not None:
            flag = f"--{name.replace('_', '-')}"
            raise ValueError(f"`{flag}` reads a pilot file: it goes with `--pilot FILE`.")
    if args.metric_value is None:
        raise ValueError(
            "give `--metric-value V`, the metric value expected, or `--pilot FILE` with "
            "`--truth`, `--pred` and `--metric` to estimate it from a pilot labelled set."
        )
    result = plan_sample_size(
        args.metric_value,
        args.half_width,
        prevalence=args.prevalence,
        icc=args.icc,
        texts_per_person=args.texts_per_person,
        cluster_size_cv=0.0 if args.cluster_size_cv is None else args.cluster_size_cv,
        **options,
    )
    rendering.emit(result, args.json, _plan_text(result))


def _plan_from_pilot(args: argparse.Namespace, options: dict[str, Any]) -> None:
    """``perfci plan --pilot FILE``: estimate what the plan needs from a pilot, then plan."""
    import warnings

    from ..planning import pilot_estimates

    needed = {
        "truth": "`--truth COL` (the reference labels)",
        "pred": "`--pred COL` (the classifier labels)",
        "metric": "`--metric NAME` (the proportion metric to plan for)",
    }
    lacking = [words for name, words in needed.items() if getattr(args, name) is None]
    if lacking:
        listed = ", ".join(lacking[:-1]) + (" and " if len(lacking) > 1 else "") + lacking[-1]
        raise ValueError(f"`--pilot` needs {listed}.")
    frame = inputs.read_table(args.pilot, "--pilot", sep=args.sep)
    inputs.refuse_scores_as_labels(
        frame,
        args.pred,
        "--pred",
        args.pilot,
        "A plan is for labels: threshold the scores into labels first.",
    )
    columns = {"y_true": ("--truth", args.truth), "y_pred": ("--pred", args.pred)}
    values, positive = inputs.read_labels(args, columns, frame, args.pilot)
    groups = inputs.read_column(frame, args.group, "--group", args.pilot)
    # An estimate the plan cannot use is an error that says what to give instead; its
    # warning is shown only when the plan goes ahead.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pilot = pilot_estimates(
            values["y_true"], values["y_pred"], args.metric, groups=groups, positive=positive
        )
    given = {name: getattr(args, name) for name in _PILOT_OVERRIDES}
    result = pilot.plan(args.half_width, **given, **options)
    for warning in caught:
        warnings.warn(warning.message, stacklevel=1)
    replaced = [f"--{k.replace('_', '-')} {v:g}" for k, v in given.items() if v is not None]
    payload = {"pilot": {"file": args.pilot, **pilot.to_dict()}, "plan": result.to_dict()}
    text = _pilot_text(pilot, args.pilot)
    if replaced:
        text += f"\nplanned with {', '.join(replaced)} as given, not from the pilot"
    rendering.emit(payload, args.json, text + "\n" + _plan_text(result))


def _pilot_text(pilot: Any, path: str) -> str:
    text = (
        f"pilot {visible_text(path)}: {pilot.metric} {pilot.metric_value:.4f} "
        f"({pilot.successes} of {pilot.relevant_n} relevant texts; {pilot.n_texts} texts, "
        f"prevalence {pilot.prevalence:.4f})"
    )
    if pilot.persons is not None:
        text += (
            f"; {pilot.persons} persons with a relevant text, "
            f"{pilot.texts_per_person:.2f} relevant texts per person (CV "
            f"{pilot.cluster_size_cv:.2f}), "
            + ("ICC not estimable" if pilot.icc != pilot.icc else f"ICC {pilot.icc:.3f}")
        )
    return text


def draws_own_progress(args: argparse.Namespace) -> bool:
    """Whether the command draws its own progress bar (``validate run``, by cells)."""
    return args.command == "validate" and args.action == "run"


def demo(args: argparse.Namespace) -> None:
    """``perfci demo``: a report, a comparison and a plan for the bundled example."""
    from ..comparison import compare as compare_
    from ..datasets import load_example
    from ..planning import plan_sample_size
    from ..reporting import report as report_

    texts = load_example()
    level = args.confidence_level
    table = report_(
        texts["human"], texts["model"], groups=texts["person"], confidence_level=level, rng=2026
    )
    result = compare_(
        texts["human"],
        texts["model"],
        texts["model_b"],
        "f1",
        groups=texts["person"],
        confidence_level=level,
        rng=2026,
    )
    planned = plan_sample_size(
        0.9, 0.05, confidence_level=level, icc=0.1, texts_per_person=6, prevalence=0.25
    )
    if args.json:
        print(
            rendering.json_text(
                {
                    "report": rendering.records(table),
                    "compare": _comparison_payload(result, "model", "model_b"),
                    "plan": planned.to_dict(),
                }
            )
        )
        return
    rendering.echo(
        f"Example data: {len(texts)} utterances from {texts['person'].nunique()} therapists, "
        "coded by a human and by two LLM prompts (model, model_b).\n\n"
        f"1. Report for prompt 'model', texts nested in therapists ({100 * level:g}% intervals):\n"
    )
    rendering.print_table(table, "table")
    rendering.echo("\n2. Paired comparison of the two prompts:\n")
    rendering.echo(_comparison_text(result, "model", "model_b"))
    rendering.echo(
        "\n3. Plan for a new study: recall expected 0.90, half-width 0.05, ICC 0.1, about 6 "
        "reference positives per therapist, a quarter of utterances positive:\n"
    )
    rendering.echo(_plan_text(planned))


#: The function of each command, by name.
COMMANDS = {
    "interval": interval,
    "coverage": coverage,
    "bootstrap": bootstrap,
    "report": report,
    "compare": compare,
    "rank": many_commands.rank,
    "bayes": bayes,
    "validate": validate_commands.validate,
    "plan": plan,
    "demo": demo,
}
