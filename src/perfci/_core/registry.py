"""The registry: every name and option perfci accepts, declared once.

Metric names, interval methods, bootstrap schemes and intervals, agreement statistics and
levels of measurement, nested-data designs and degrees-of-freedom adjustments, Bayesian
samplers, estimands, priors and credible-interval kinds, and the options of the
validation harness's method families are listed here, each with a one-line help text.
Validation (:meth:`Choices.check`, :func:`check_family_options`), the command line's
``choices`` and help, the suite-file schema and the generated bad-input test all read
them, so a name is added or renamed in one place.

A :class:`Choices` is an ordered set of names for one argument. Its names keep their
declared order (the order of the report, of the command line's help); error messages list
them sorted, as every validator in perfci does::

    `method` must be one of ['agresti_coull', ..., 'wilson']; got 'exact'.

This module is NumPy-free and imports nothing else from perfci.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AGREEMENT_METHOD",
    "AGREEMENT_STATISTIC",
    "ANALYTIC_METHOD",
    "ANNOTATOR_ESTIMAND",
    "ANY_METRIC",
    "AUC_METHOD",
    "BINARY_METRIC",
    "BOOTSTRAP_INTERVAL",
    "BOOTSTRAP_METRIC",
    "BOOTSTRAP_SCHEME",
    "COMPARE_AUC_METHOD",
    "COMPARE_METHOD",
    "COMPARE_METRIC",
    "CONFUSION_ESTIMAND",
    "CONFUSION_PRIOR",
    "CONFUSION_SAMPLER",
    "DEFAULT_CONFUSION_PRIOR",
    "CREDIBLE_INTERVAL",
    "DESIGN",
    "DF_ADJUST",
    "ESTIMAND",
    "EXACT_METHOD",
    "GROUP_METHOD",
    "HARNESS_FAMILIES",
    "HARNESS_FAMILY",
    "HARNESS_POPULATION",
    "HARNESS_SAMPLING",
    "LEVEL_OF_MEASUREMENT",
    "MAX_GRID_VALUES",
    "MAX_RESAMPLES",
    "METHOD_KEYS",
    "METRIC",
    "METRIC_CI_AUC_METHOD",
    "METRIC_CI_METHOD",
    "OUTPUT_FORMAT",
    "PLAN_METHOD",
    "POPULATION_SCHEMA",
    "POPULATION_SUPPORT",
    "PRIOR",
    "PROPORTION_METRIC",
    "REQUIRED",
    "RUN_ESTIMAND",
    "RUN_METHOD",
    "SAMPLER",
    "SCALE_KEYS",
    "SIMULTANEOUS",
    "SUITE_KEYS",
    "SUITE_NAME_REGEX",
    "SUITE_TABLES",
    "VALIDATE_ACTION",
    "Choices",
    "Entry",
    "Family",
    "Field",
    "Option",
    "Pattern",
    "PopulationSchema",
    "Support",
    "check_family_options",
    "check_family_support",
    "choice_message",
]


def choice_message(argument: str, allowed: Iterable[str], value: Any, extra: str = "") -> str:
    """Return the message for a value that is not one of `allowed`.

    Parameters
    ----------
    argument : str
        The argument's name, shown in backticks (a keyword, a flag, or a suite key).
    allowed : iterable of str
        The allowed values, listed sorted.
    value : object
        The value given.
    extra : str, optional
        What else is allowed, appended after the list (e.g. ``" or None"``).

    Examples
    --------
    >>> from perfci._core.registry import choice_message
    >>> choice_message("design", ["icc", "cluster_robust"], "anova")
    "`design` must be one of ['cluster_robust', 'icc']; got 'anova'."
    """
    return f"`{argument}` must be one of {sorted(allowed)}{extra}; got {value!r}."


@dataclass(frozen=True)
class Entry:
    """One registered name and its one-line help text."""

    name: str
    help: str


@dataclass(frozen=True)
class Pattern:
    """A family of names given by a template, e.g. ``pseudo_percentile_<lambda>``.

    Attributes
    ----------
    template : str
        The name as documented, with the variable part in angle brackets.
    regex : str
        A regular expression the whole name must match.
    example : str
        One valid name, quoted in error messages.
    help : str
        One line of help.
    """

    template: str
    regex: str
    example: str
    help: str

    def matches(self, value: Any) -> bool:
        """Return True if `value` is a name of this pattern."""
        return isinstance(value, str) and re.fullmatch(self.regex, value) is not None


@dataclass(frozen=True)
class Choices:
    """An ordered set of names one argument accepts.

    Attributes
    ----------
    argument : str
        The argument's name in Python (``method``, ``scheme``, ...), used in messages.
    help : str
        One line saying what the argument chooses.
    entries : tuple of Entry
        The names, in their declared order, with their help.
    patterns : tuple of Pattern
        Families of names accepted besides `entries` (for example
        ``pseudo_percentile_<lambda>``).
    allow_none : bool
        Whether None is accepted (and what it means, in `none_help`).
    none_help : str
        What None means, for help texts.

    Examples
    --------
    >>> from perfci._core.registry import DESIGN
    >>> DESIGN.names
    ('icc', 'icc_weighted', 'cluster_robust', 'persons')
    >>> "icc" in DESIGN
    True
    >>> DESIGN.check("anova")
    Traceback (most recent call last):
    ...
    ValueError: `design` must be one of ['cluster_robust', 'icc', 'icc_weighted', 'persons']; got 'anova'.
    """  # noqa: E501

    argument: str
    help: str
    entries: tuple[Entry, ...]
    patterns: tuple[Pattern, ...] = ()
    allow_none: bool = False
    none_help: str = ""
    _index: dict[str, Entry] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = [e.name for e in self.entries]
        if len(set(names)) != len(names):
            raise ValueError(f"`{self.argument}` registers a name twice: {names}.")
        object.__setattr__(self, "_index", {e.name: e for e in self.entries})

    @property
    def names(self) -> tuple[str, ...]:
        """The registered names, in declared order (patterns not included)."""
        return tuple(self._index)

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, value: object) -> bool:
        if value is None:
            return self.allow_none
        if not isinstance(value, str):
            return False
        return value in self._index or any(p.matches(value) for p in self.patterns)

    def help_of(self, name: str) -> str:
        """Return the one-line help of a registered name (or of a pattern's name)."""
        if name in self._index:
            return self._index[name].help
        for pattern in self.patterns:
            if pattern.matches(name):
                return pattern.help
        raise KeyError(name)

    def message(self, value: Any, argument: str | None = None) -> str:
        """Return the error message for a value this argument does not accept."""
        extra = "".join(f" or {p.template!r} (e.g. {p.example!r})" for p in self.patterns)
        if self.allow_none:
            extra += " or None"
        return choice_message(argument or self.argument, self.names, value, extra)

    def check(self, value: Any, argument: str | None = None) -> Any:
        """Return `value` if this argument accepts it, else raise a `ValueError`.

        Parameters
        ----------
        value : object
            The value given.
        argument : str, optional
            The name to show in the message, when it is not :attr:`argument` (a flag,
            a suite key, a differently named keyword).

        Raises
        ------
        ValueError
            Naming the argument in backticks and listing the allowed values.
        """
        if value not in self:
            raise ValueError(self.message(value, argument))
        return value

    def subset(
        self, names: Iterable[str], *, argument: str | None = None, help: str | None = None
    ) -> Choices:
        """Return the choices restricted to `names` (each must be registered here)."""
        names = tuple(names)
        unknown = [n for n in names if n not in self._index]
        if unknown:
            raise ValueError(f"not registered for `{self.argument}`: {unknown}.")
        return Choices(
            argument or self.argument,
            help or self.help,
            tuple(self._index[n] for n in names),
        )

    def extended(
        self, entries: Iterable[tuple[str, str]], *, allow_none: bool | None = None
    ) -> Choices:
        """Return these choices with more names, e.g. ``("recommended", help)``, first."""
        return Choices(
            self.argument,
            self.help,
            (*(Entry(n, h) for n, h in entries), *self.entries),
            self.patterns,
            self.allow_none if allow_none is None else allow_none,
            self.none_help,
        )

    def describe(self) -> str:
        """Return one line per name, ``name  help``, for a command line's help."""
        rows = [(e.name, e.help) for e in self.entries]
        rows += [(p.template, p.help) for p in self.patterns]
        width = max(len(name) for name, _ in rows)
        return "\n".join(f"  {name:<{width}}  {text}" for name, text in rows)


def _choices(
    argument: str, help: str, entries: Iterable[tuple[str, str]], **kwargs: Any
) -> Choices:
    return Choices(argument, help, tuple(Entry(n, h) for n, h in entries), **kwargs)


# --------------------------------------------------------------------------- metrics

PROPORTION_METRIC = _choices(
    "metric",
    "a proportion metric (an analytic interval applies; its denominator is the relevant n)",
    [
        ("accuracy", "share of all texts both raters code the same"),
        ("recall", "share of the reference positives the classifier finds (sensitivity)"),
        ("precision", "share of the classifier positives that are reference positives (PPV)"),
        ("specificity", "share of the reference negatives the classifier codes negative"),
        ("npv", "share of the classifier negatives that are reference negatives"),
    ],
)

BINARY_METRIC = _choices(
    "metric",
    "a binary metric of the confusion matrix [tp, fp, fn, tn]",
    [
        *((e.name, e.help) for e in PROPORTION_METRIC.entries),
        ("f1", "harmonic mean of precision and recall, 2tp / (2tp + fp + fn)"),
        ("ppa", "percent positive agreement, 2tp / (2tp + fp + fn)"),
        ("pna", "percent negative agreement, 2tn / (2tn + fp + fn)"),
        ("kappa", "Cohen's kappa, agreement beyond chance"),
        ("balanced_accuracy", "mean of recall and specificity"),
        ("mcc", "Matthews correlation coefficient"),
    ],
)

METRIC = _choices(
    "metric",
    "a binary metric, or a macro_ / micro_ average over classes of one",
    [
        *((e.name, e.help) for e in BINARY_METRIC.entries),
        *(
            (f"macro_{e.name}", f"unweighted mean over classes of {e.name}")
            for e in BINARY_METRIC.entries
        ),
        *(
            (f"micro_{e.name}", f"{e.name} of the counts summed over classes")
            for e in BINARY_METRIC.entries
        ),
    ],
)

_SCORE_METRICS = (
    (
        "roc_auc",
        "area under the ROC curve of a score: the chance that a random positive text "
        "scores above a random negative one (ties count half)",
    ),
)

ANY_METRIC = _choices(
    "metric",
    "a metric of labels (binary, or a macro_ / micro_ average), or roc_auc of a score",
    [*((e.name, e.help) for e in METRIC.entries), *_SCORE_METRICS],
)

COMPARE_METRIC = _choices(
    "metric",
    "a binary metric of two classifiers' labels, or roc_auc of their scores",
    [*((e.name, e.help) for e in BINARY_METRIC.entries), *_SCORE_METRICS],
)

BOOTSTRAP_METRIC = _choices(
    "metric",
    "what the bootstrap resamples: a proportion's [successes, failures] or a metric's cells",
    [
        ("proportion", "a proportion from counts [successes, failures]"),
        *((e.name, e.help) for e in METRIC.entries),
    ],
)

# ------------------------------------------------------------------- interval methods

ANALYTIC_METHOD = _choices(
    "method",
    "analytic interval for a binomial proportion",
    [
        ("wald", "normal approximation p +/- z sqrt(p(1 - p)/n); poor near 0 and 1"),
        ("wilson", "score interval: the normal test inverted"),
        ("agresti_coull", "Wald on n + z^2 with z^2/2 successes added"),
        ("agresti_coull_plus4", "Wald with 2 successes and 2 failures added"),
        ("clopper_pearson", "exact: beta quantiles, at least the nominal coverage"),
        ("jeffreys", "equal-tailed Beta(x + 1/2, n - x + 1/2) quantiles"),
        ("logit", "Wald on the logit scale, back-transformed; Clopper-Pearson at x = 0 or n"),
    ],
)

_PERCENTILE = ("percentile", "iid percentile bootstrap with infinitely many resamples")

EXACT_METHOD = _choices(
    "method",
    "interval method whose operating characteristics are enumerated exactly",
    [*((e.name, e.help) for e in ANALYTIC_METHOD.entries), _PERCENTILE],
    patterns=(
        Pattern(
            "pseudo_percentile_<lambda>",
            r"pseudo_percentile_(\d+)",
            "pseudo_percentile_1",
            "the same with pseudo count lambda added to each outcome",
        ),
    ),
)

PLAN_METHOD = _choices(
    "method",
    "interval method a sample size is planned for",
    [*((e.name, e.help) for e in ANALYTIC_METHOD.entries), _PERCENTILE],
)

METRIC_CI_METHOD = _choices(
    "method",
    "how the interval of a metric is computed",
    [
        ("recommended", "the recommended method for the metric and design (perfci.policy)"),
        *((e.name, e.help) for e in ANALYTIC_METHOD.entries),
        ("bootstrap", "bootstrap of the counts (any metric)"),
    ],
)

COMPARE_METHOD = _choices(
    "method",
    "how the interval of a paired difference between two classifiers is computed",
    [
        (
            "recommended",
            "the recommended method for the metric and design (perfci.policy)",
        ),
        ("bootstrap", "paired bootstrap of the joint counts (any metric)"),
        (
            "cluster_robust",
            "linearization variance of the difference, persons as clusters, t with the "
            "effective number of persons - 1 df",
        ),
        (
            "newcombe",
            "Newcombe's paired score interval, on the effective sample size for nested texts "
            "(accuracy, recall, specificity)",
        ),
    ],
)

AUC_METHOD = _choices(
    "method",
    "how the interval of an ROC AUC is computed",
    [
        (
            "delong",
            "DeLong's variance of the placement values, ties counting half (R pROC's); "
            "with groups, Obuchowski's clustered variance and t on the effective persons - 1 df",
        ),
        (
            "delong_logit",
            "the same variance on the logit scale, back-transformed (inside (0, 1))",
        ),
        (
            "jackknife",
            "texts nested in persons: the AUC of pairs from different persons, with the "
            "leave-one-person-out jackknife on the logit scale and t on the effective persons - 1",
        ),
        ("bootstrap", "bootstrap of the score counts (iid, cluster or hierarchical scheme)"),
    ],
)

METRIC_CI_AUC_METHOD = AUC_METHOD.extended(
    [("recommended", "the recommended method for roc_auc (perfci.policy)")]
)

COMPARE_AUC_METHOD = _choices(
    "method",
    "how the interval of a paired difference of two ROC AUCs is computed",
    [
        ("recommended", "the recommended method for roc_auc (perfci.policy)"),
        (
            "delong",
            "DeLong's paired variance (R pROC's roc.test); with groups, Obuchowski's "
            "clustered one and t on the effective persons - 1 df",
        ),
        ("bootstrap", "paired bootstrap of the joint score counts"),
    ],
)

RUN_ESTIMAND = _choices(
    "estimand",
    "what an interval of a classifier's repeated runs is about",
    [
        (
            "new_run",
            "the expected metric of a new run on the text population (texts and runs random)",
        ),
        ("these_runs", "the mean over the observed runs of each run's metric (texts random)"),
        ("majority", "the majority-vote classifier of the observed runs (texts random)"),
    ],
)

ANNOTATOR_ESTIMAND = _choices(
    "estimand",
    "what an interval of a classifier against several annotators is about",
    [
        (
            "new_annotator",
            "the expected metric against a new annotator (texts and annotators random)",
        ),
        ("these_annotators", "the mean over these annotators of the metric against each"),
        ("majority", "the metric against the annotators' majority label (texts random)"),
    ],
)

RUN_METHOD = _choices(
    "method",
    "how the interval of a metric of repeated runs is computed",
    [
        ("recommended", "the recommended method (variance_components)"),
        (
            "variance_components",
            "the linearized crossed (texts or persons x runs) variance, Satterthwaite df",
        ),
        ("bootstrap", "the two-way bootstrap of texts (or persons) and runs, percentile"),
    ],
)

GROUP_METHOD = _choices(
    "method",
    "how the interval of a difference of a metric between two subgroups is computed",
    [
        (
            "recommended",
            "the recommended method for the metric and design (perfci.policy)",
        ),
        (
            "newcombe",
            "Newcombe's hybrid score interval of two independent proportions (independent "
            "texts; accuracy, recall, precision, specificity, npv)",
        ),
        (
            "cluster_robust",
            "linearization variance of each subgroup, persons as clusters, t with the smaller "
            "effective number of persons - 1 df",
        ),
        ("bootstrap", "independent pseudo-count percentile bootstrap of each subgroup"),
    ],
)

SIMULTANEOUS = _choices(
    "simultaneous",
    "simultaneous band across the differences of several subgroups from the reference",
    [
        ("bonferroni", "each interval at level 1 - (1 - c)/k for k differences"),
        (
            "max_t",
            "the joint critical value of the largest |t| of the k differences, which share "
            "the reference (Dunnett)",
        ),
    ],
    allow_none=True,
    none_help="no simultaneous band",
)

BOOTSTRAP_SCHEME = _choices(
    "scheme",
    "what the bootstrap resamples",
    [
        ("iid", "texts, as if independent"),
        ("cluster", "persons, each with all of their texts"),
        ("hierarchical", "persons, then texts within each drawn person"),
    ],
)

BOOTSTRAP_INTERVAL = _choices(
    "interval",
    "how replicates become an interval",
    [
        ("percentile", "quantiles (1 - c)/2 and (1 + c)/2 of the valid replicates"),
        ("bca", "bias-corrected and accelerated (Efron and Tibshirani 1993, ch. 14)"),
    ],
)

# ------------------------------------------------------------- agreement of annotators

AGREEMENT_STATISTIC = _choices(
    "statistic",
    "the statistic of agreement between annotators",
    [
        (
            "auto",
            "cohen_kappa for two annotators who coded every text (nominal codes), else "
            "krippendorff_alpha",
        ),
        ("cohen_kappa", "Cohen's kappa of two annotators, on the texts both coded"),
        (
            "fleiss_kappa",
            "Fleiss' kappa of any number of annotators; every text needs the same number of codes",
        ),
        (
            "krippendorff_alpha",
            "Krippendorff's alpha: any number of annotators, missing codes allowed",
        ),
    ],
)

AGREEMENT_METHOD = _choices(
    "method",
    "how the interval of an agreement statistic is computed",
    [
        (
            "bootstrap",
            "bootstrap of the counts of texts by their codes (iid, cluster, hierarchical)",
        ),
        (
            "asymptotic",
            "Cohen's kappa only: the large-sample standard error of Fleiss, Cohen and Everitt "
            "(1969); with groups, its linearization over persons and t on G* - 1 df",
        ),
    ],
)

LEVEL_OF_MEASUREMENT = _choices(
    "level_of_measurement",
    "how far apart two different codes are (Krippendorff's alpha)",
    [
        ("nominal", "any two different codes disagree equally"),
        ("ordinal", "codes in order; distance by the ranks of the codes between them"),
        ("interval", "numeric codes; squared difference"),
        ("ratio", "non-negative numeric codes; squared difference over their sum"),
    ],
)

# ----------------------------------------------------------------------- nested texts

DESIGN = _choices(
    "design",
    "design adjustment of an analytic interval for texts nested in persons",
    [
        ("icc", "ANOVA ICC and Kish's design effect 1 + icc (B - 1), B the mean cluster size"),
        (
            "icc_weighted",
            "ANOVA ICC and Kish's 1 + icc (B_w - 1), B_w = sum n_i^2 / N the size-weighted size",
        ),
        ("cluster_robust", "linearization variance of the ratio estimator (R survey's)"),
        (
            "persons",
            "the worst case, ICC 1: each person counts once, n_eff = (sum n_i)^2 / sum n_i^2",
        ),
    ],
)

DF_ADJUST = _choices(
    "df_adjust",
    "degrees-of-freedom adjustment of the effective sample size (df = persons - 1)",
    [
        ("dean_pagano", "n_eff (z / t_{m-1})^2"),
        ("korn_graubard", "n_eff (t_{N-1} / t_{m-1})^2, as R survey's svyciprop(method='beta')"),
    ],
    allow_none=True,
    none_help="no adjustment",
)

# ---------------------------------------------------------------------------- Bayesian

SAMPLER = _choices(
    "sampler",
    "how the hierarchical beta-binomial posterior is computed",
    [
        (
            "auto",
            "the exact grid for the beta-binomial of one proportion, nutpie for models "
            "the grid does not compute (the hierarchical confusion matrix)",
        ),
        ("nutpie", "MCMC with nutpie, the model compiled once (cached on disk) and refit"),
        ("pymc", "MCMC with PyMC's own NUTS sampler"),
        ("grid", "exact posterior by two-dimensional quadrature, batched over data sets"),
    ],
)

CONFUSION_SAMPLER = SAMPLER.subset(
    ("auto", "nutpie", "pymc", "grid"),
    help="how a hierarchical confusion model is fitted: MCMC of the Dirichlet-multinomial "
    "('auto' is nutpie), or the exact grid of the hierarchical margins",
)

ESTIMAND = _choices(
    "estimand",
    "what a credible interval is about",
    [
        ("population", "text-weighted rate of the population of persons"),
        ("mu", "mean person-level rate of the population of persons"),
        ("sampled_persons", "text-weighted rate of the sampled persons only"),
        ("person", "each sampled person's rate (partial pooling)"),
    ],
)

PRIOR = _choices(
    "prior",
    "prior of the beta-binomial's concentration kappa (bounded below by 1)",
    [
        ("pareto", "kappa ~ Pareto(1.5, 1), i.e. kappa^(-1/2) ~ Beta(3, 1)"),
        ("bda3", "p(kappa) proportional to kappa^(-3/2), truncated at kappa >= 1"),
    ],
)

CREDIBLE_INTERVAL = _choices(
    "kind",
    "kind of credible interval",
    [
        ("eti", "equal-tailed: the (1 - l)/2 and (1 + l)/2 posterior quantiles"),
        ("hdi", "highest density: the narrowest interval holding l of the posterior"),
    ],
)

#: The default prior of the cells of independent texts (the prior study in docs/bayes.md).
DEFAULT_CONFUSION_PRIOR = "metric_jeffreys"

CONFUSION_PRIOR = _choices(
    "prior",
    "prior of the cell probabilities of a confusion matrix of independent texts",
    [
        (
            "metric_jeffreys",
            "the Jeffreys prior Beta(1/2, 1/2) of the binomial margin a metric is a monotone "
            "function of (recall, precision, specificity, NPV, accuracy, and W = tp / (tp + "
            "fp + fn) for F1 and PPA, tn / (tn + fp + fn) for PNA); Dirichlet(1/2) on the "
            "cells for the other metrics",
        ),
        (
            "jeffreys",
            "Dirichlet(1/2) on the cells, the multinomial's Jeffreys prior (recall, "
            "precision, specificity, NPV get Beta(x + 1/2, n - x + 1/2) posteriors)",
        ),
        ("uniform", "Dirichlet(1) on the cells, uniform over the simplex"),
        ("perks", "Dirichlet(1/C) on the C cells (1/4 for a binary matrix)"),
        (
            "jeffreys_margins",
            "Beta(1/2, 1/2) on each binary margin: prevalence, recall and specificity "
            "(k x k: each stick-breaking margin), the Jeffreys prior of each",
        ),
    ],
)

CONFUSION_ESTIMAND = ESTIMAND.subset(
    ("population", "sampled_persons"),
    help="what a credible interval of a metric of texts nested in persons is about",
)

# ----------------------------------------------------------------------- command line

OUTPUT_FORMAT = _choices(
    "format",
    "how a table is printed",
    [
        ("table", "aligned text"),
        ("json", "a JSON list of rows"),
        ("csv", "comma-separated values"),
        ("markdown", "Markdown tables for a paper: short method names, labels as footnotes"),
        ("latex", "LaTeX booktabs tables for a paper: short method names, labels as footnotes"),
    ],
)

VALIDATE_ACTION = _choices(
    "action",
    "what to do with validation suites",
    [
        ("list", "show the suites in validation/suites/"),
        ("run", "run one suite at one scale into a result file"),
        ("report", "draw the figures and coverage tables of result files"),
    ],
)

# -------------------------------------------------------------- validation harness


class _Required:
    """The default of an option a suite must give."""

    def __repr__(self) -> str:
        return "REQUIRED"


#: Marks an option without a default: a suite must give it.
REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Option:
    """One option of a harness method family.

    Attributes
    ----------
    name : str
        The key in a suite's ``[[methods]]`` table.
    help : str
        One line of help.
    type : type
        ``str`` or ``int``.
    default : object
        The value used when the key is absent, or :data:`REQUIRED`.
    choices : Choices, optional
        The allowed values of a name.
    minimum : int, optional
        The smallest allowed value of an integer.
    required_when : tuple of (str, object), optional
        ``(option, value)``: the option is required when another option has that value
        (and has no default otherwise).
    """

    name: str
    help: str
    type: type = str
    default: Any = REQUIRED
    choices: Choices | None = None
    minimum: int | None = None
    required_when: tuple[str, Any] | None = None


@dataclass(frozen=True)
class Family:
    """A harness method family: how its methods are computed, and their options."""

    name: str
    help: str
    options: tuple[Option, ...]

    def option(self, name: str) -> Option:
        """Return the option called `name`."""
        for option in self.options:
            if option.name == name:
                return option
        raise KeyError(name)


# Suite files are TOML, which has no null: "none" stands for None there.
_SUITE_DF_ADJUST = _choices(
    "df_adjust",
    DF_ADJUST.help,
    [("none", "no adjustment"), *((e.name, e.help) for e in DF_ADJUST.entries)],
)

_COUNTS = _choices(
    "counts",
    "what the method sees of each data set",
    [
        ("per_person", "the counts of each person (groups given)"),
        ("pooled", "the pooled counts (texts treated as independent)"),
    ],
)

# The methods of the harness's `runs` family: those of perfci.runs, and the two naive
# intervals of one classifier users compute instead (scored to show what they miss).
_HARNESS_RUN_METHOD = _choices(
    "method",
    "how the interval of a metric of repeated runs is computed",
    [
        *((e.name, e.help) for e in RUN_METHOD.entries),
        (
            "stacked",
            "every run's labels stacked as R times more texts, given to the recommended "
            "interval of one classifier (the naive interval)",
        ),
        ("single_run", "the recommended interval of one classifier on the first run only"),
    ],
)

# The methods of the harness's `annotators` family: the crossed intervals of
# perfci.annotator_ci, and the two naive one-reference intervals users compute instead.
_HARNESS_ANNOTATOR_METHOD = _choices(
    "method",
    "how the interval of a metric against several annotators is computed",
    [
        ("recommended", "the recommended method (variance_components)"),
        (
            "variance_components",
            "the linearized crossed (texts or persons x annotators) variance, Satterthwaite df",
        ),
        ("bootstrap", "the two-way bootstrap of texts (or persons) and annotators, percentile"),
        (
            "single",
            "the recommended interval of one reference against the first annotator's codes "
            "only (over the texts they coded)",
        ),
        (
            "stacked",
            "every (text, annotator) code taken as a text of its own against the classifier's "
            "label, given to the recommended interval of one reference (the naive interval)",
        ),
    ],
)

# The options of the harness's families of the hierarchical margins model.
_BAYES_MARGINS_OPTIONS = (
    Option(
        "estimand", "what the interval is about", default="population", choices=CONFUSION_ESTIMAND
    ),
    Option("prior", "the prior of every margin's concentration", default="pareto", choices=PRIOR),
    Option("draws", "posterior draws per data set", type=int, default=4000, minimum=100),
    Option(
        "replications",
        "the first K replications of each cell (0: all of them)",
        type=int,
        default=0,
        minimum=0,
    ),
)

HARNESS_FAMILIES: Mapping[str, Family] = {
    f.name: f
    for f in (
        Family(
            "analytic",
            "an analytic interval of the pooled proportion, texts treated as independent",
            (Option("method", "the analytic method", choices=ANALYTIC_METHOD),),
        ),
        Family(
            "bootstrap",
            "a bootstrap interval (perfci.bootstrap_ci on the cell's data sets)",
            (
                Option("interval", "the bootstrap interval", choices=BOOTSTRAP_INTERVAL),
                Option("pseudo_count", "pseudo count lambda", type=int, default=0, minimum=0),
                Option("scheme", "the bootstrap scheme", default="iid", choices=BOOTSTRAP_SCHEME),
            ),
        ),
        Family(
            "clustered",
            "an analytic interval on the design-adjusted effective sample size",
            (
                Option("method", "the base analytic method", choices=ANALYTIC_METHOD),
                Option("design", "the design adjustment", default="icc", choices=DESIGN),
                Option(
                    "df_adjust",
                    "the degrees-of-freedom adjustment",
                    default="none",
                    choices=_SUITE_DF_ADJUST,
                ),
            ),
        ),
        Family(
            "bayes",
            "a credible interval of the hierarchical beta-binomial",
            (
                Option(
                    "sampler",
                    "the sampler",
                    default="grid",
                    choices=SAMPLER.subset(("grid", "nutpie")),
                ),
                Option(
                    "estimand",
                    "what the interval is about",
                    choices=ESTIMAND.subset(("population", "mu", "sampled_persons")),
                ),
                Option(
                    "draws",
                    "posterior draws per data set of the drawn estimands",
                    type=int,
                    default=4000,
                    minimum=100,
                ),
                Option(
                    "replications",
                    "the first K replications of each cell to fit with MCMC",
                    type=int,
                    minimum=1,
                    required_when=("sampler", "nutpie"),
                ),
            ),
        ),
        Family(
            "bayes_confusion",
            "a credible interval of a metric of independent texts (the closed form or the "
            "draws of perfci.bayes.confusion_posterior)",
            (
                Option(
                    "prior",
                    "the prior of the cells",
                    default=DEFAULT_CONFUSION_PRIOR,
                    choices=CONFUSION_PRIOR,
                ),
                Option(
                    "draws",
                    "posterior draws per data set (metrics without a closed form)",
                    type=int,
                    default=4000,
                    minimum=100,
                ),
            ),
        ),
        Family(
            "bayes_nested_confusion",
            "a credible interval of a metric of texts nested in persons, the hierarchical "
            "margins model (perfci.bayes.nested_metric_intervals)",
            _BAYES_MARGINS_OPTIONS,
        ),
        Family(
            "bayes_comparison",
            "the credible interval of a paired difference of texts nested in persons, the "
            "hierarchical margins model of the joint cells (perfci.bayes.compare_counts)",
            _BAYES_MARGINS_OPTIONS,
        ),
        Family(
            "comparison",
            "an interval of a paired difference (perfci.comparison.compare_counts, what "
            "perfci.compare computes)",
            (
                Option(
                    "method", "the interval method", default="recommended", choices=COMPARE_METHOD
                ),
                Option(
                    "scheme",
                    "the bootstrap scheme (method bootstrap)",
                    default="recommended",
                    choices=BOOTSTRAP_SCHEME.extended(
                        [("recommended", "the scheme perfci.policy recommends")]
                    ),
                ),
                Option(
                    "pseudo_count",
                    "pseudo count lambda (method bootstrap)",
                    type=int,
                    default=0,
                    minimum=0,
                ),
            ),
        ),
        Family(
            "group_difference",
            "an interval of the difference of a metric between two subgroups "
            "(perfci.subgroups.compare_groups_counts, what perfci.compare_groups computes)",
            (
                Option(
                    "method", "the interval method", default="recommended", choices=GROUP_METHOD
                ),
                Option(
                    "counts",
                    "whether the persons are given (per_person) or the texts pooled as if "
                    "independent (pooled)",
                    default="per_person",
                    choices=_COUNTS,
                ),
            ),
        ),
        Family(
            "auc",
            "an interval of the ROC AUC of a score (perfci.auc.auc_ci_counts, what "
            "perfci.auc_ci computes)",
            (
                Option(
                    "method",
                    "the interval method",
                    default="recommended",
                    choices=AUC_METHOD.extended(
                        [("recommended", "the recommended method for roc_auc (perfci.policy)")]
                    ),
                ),
                Option(
                    "counts",
                    "whether the persons are given (per_person) or the texts pooled as if "
                    "independent (pooled)",
                    default="per_person",
                    choices=_COUNTS,
                ),
                Option(
                    "scheme",
                    "the bootstrap scheme (method bootstrap)",
                    default="recommended",
                    choices=BOOTSTRAP_SCHEME.extended(
                        [("recommended", "the scheme perfci.policy recommends")]
                    ),
                ),
            ),
        ),
        Family(
            "runs",
            "an interval of a metric of repeated runs (perfci.runs.runs_ci_counts, what "
            "perfci.runs.runs_ci computes), or of one classifier made of the runs",
            (
                Option(
                    "estimand",
                    "what the interval is about, and so the truth it is scored against",
                    default="new_run",
                    choices=RUN_ESTIMAND,
                ),
                Option(
                    "method",
                    "the interval method ('recommended' only for estimand majority)",
                    default="recommended",
                    choices=_HARNESS_RUN_METHOD,
                ),
                Option(
                    "counts",
                    "whether the persons are given (per_person) or the texts pooled as if "
                    "independent (pooled)",
                    default="per_person",
                    choices=_COUNTS,
                ),
            ),
        ),
        Family(
            "annotators",
            "an interval of a classifier's metric against several annotators "
            "(perfci.runs.crossed_intervals, what perfci.annotator_ci computes), or against "
            "one reference made of their codes",
            (
                Option(
                    "estimand",
                    "what the interval is about, and so the truth it is scored against",
                    default="new_annotator",
                    choices=ANNOTATOR_ESTIMAND,
                ),
                Option(
                    "method",
                    "the interval method ('recommended' only for estimand majority)",
                    default="recommended",
                    choices=_HARNESS_ANNOTATOR_METHOD,
                ),
                Option(
                    "counts",
                    "whether the persons are given (per_person) or the texts pooled as if "
                    "independent (pooled)",
                    default="per_person",
                    choices=_COUNTS,
                ),
            ),
        ),
        Family(
            "recommended",
            "what method='recommended' chooses for each data set (perfci.policy), as "
            "perfci.metric_ci computes it",
            (),
        ),
    )
}

HARNESS_FAMILY = _choices(
    "family", "harness method family", [(f.name, f.help) for f in HARNESS_FAMILIES.values()]
)

HARNESS_POPULATION = _choices(
    "kind",
    "population a suite simulates",
    [
        ("bernoulli", "independent texts with a true proportion p"),
        ("confusion", "independent texts with a true confusion matrix"),
        ("nested_finite", "a finite population of persons with texts nested in them"),
        ("nested_planning", "the planning curves of nested designs (analytic)"),
        (
            "nested",
            "persons drawn from an infinite population, with unequal (optionally "
            "informative) numbers of texts and rates with a given ICC",
        ),
        (
            "nested_confusion",
            "persons drawn from an infinite population, each with their own confusion "
            "matrix (two or three classes); any metric",
        ),
        (
            "paired_nested",
            "two correlated classifiers on the same texts nested in persons (paired comparisons)",
        ),
        (
            "subgroups_nested",
            "two subgroups of persons with their own performance (subgroup differences)",
        ),
        (
            "scored_nested",
            "a classifier's score of texts nested in persons, with a person effect on the "
            "score (ROC AUC)",
        ),
        (
            "runs_nested",
            "a stochastic classifier run several times on the same texts nested in persons, "
            "with systematic run effects (repeated runs)",
        ),
        (
            "annotators_nested",
            "a classifier against several human annotators coding the same texts nested in "
            "persons, with systematic annotator effects and missing codes (several annotators)",
        ),
    ],
)


@dataclass(frozen=True)
class Support:
    """What a harness population can compute."""

    families: frozenset[str]
    schemes: frozenset[str]
    intervals: frozenset[str]
    exact: bool


# The Bayesian families of confusion matrices, each for one population kind.
_CONFUSION_BAYES = frozenset({"bayes_confusion", "bayes_nested_confusion", "bayes_comparison"})

POPULATION_SUPPORT: Mapping[str, Support] = {
    "bernoulli": Support(
        frozenset({"analytic", "bootstrap"}),
        frozenset({"iid"}),
        frozenset(BOOTSTRAP_INTERVAL),
        True,
    ),
    "confusion": Support(
        frozenset({"bootstrap", "bayes_confusion"}),
        frozenset({"iid"}),
        frozenset({"percentile"}),
        False,
    ),
    "nested_finite": Support(
        frozenset(HARNESS_FAMILIES)
        - {"recommended", "comparison", "group_difference", "auc", "runs", "annotators"}
        - _CONFUSION_BAYES,
        frozenset(BOOTSTRAP_SCHEME),
        frozenset({"percentile"}),
        False,
    ),
    "nested_planning": Support(frozenset({"clustered"}), frozenset(), frozenset(), True),
    "nested": Support(
        frozenset(HARNESS_FAMILIES)
        - {"comparison", "group_difference", "auc", "runs", "annotators"}
        - _CONFUSION_BAYES,
        frozenset(BOOTSTRAP_SCHEME),
        frozenset({"percentile"}),
        False,
    ),
    "nested_confusion": Support(
        frozenset(HARNESS_FAMILIES)
        - {"comparison", "group_difference", "auc", "runs", "annotators"}
        - (_CONFUSION_BAYES - {"bayes_nested_confusion"}),
        frozenset(BOOTSTRAP_SCHEME),
        frozenset({"percentile"}),
        False,
    ),
    "subgroups_nested": Support(frozenset({"group_difference"}), frozenset(), frozenset(), False),
    "scored_nested": Support(
        frozenset({"auc"}), frozenset(BOOTSTRAP_SCHEME), frozenset({"percentile"}), False
    ),
    "runs_nested": Support(frozenset({"runs"}), frozenset(), frozenset(), False),
    "annotators_nested": Support(frozenset({"annotators"}), frozenset(), frozenset(), False),
    "paired_nested": Support(
        frozenset({"comparison", "bayes_comparison"}),
        frozenset(BOOTSTRAP_SCHEME),
        frozenset({"percentile"}),
        False,
    ),
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_family_options(
    family: str,
    options: Mapping[str, Any],
    key: str = "method",
    error: type[ValueError] = ValueError,
) -> dict[str, Any]:
    """Validate the options of a harness method and fill in the defaults.

    Parameters
    ----------
    family : str
        One of :data:`HARNESS_FAMILIES`.
    options : mapping
        The method's keys other than ``name`` and ``family``.
    key : str, default "method"
        How the method is named in messages (e.g. ``methods[0]``).
    error : type, default ValueError
        The exception raised (a subclass of `ValueError`).

    Returns
    -------
    dict
        The options with their defaults.

    Examples
    --------
    >>> from perfci._core.registry import check_family_options
    >>> check_family_options("bootstrap", {"interval": "bca"})
    {'interval': 'bca', 'pseudo_count': 0, 'scheme': 'iid'}
    >>> check_family_options("bootstrap", {"interval": "basic"}, "methods[2]")
    Traceback (most recent call last):
    ...
    ValueError: `methods[2].interval` must be one of ['bca', 'percentile']; got 'basic'.
    """
    if family not in HARNESS_FAMILIES:
        raise error(HARNESS_FAMILY.message(family, f"{key}.family"))
    spec = HARNESS_FAMILIES[family]
    unknown = set(options) - {o.name for o in spec.options}
    if unknown:
        raise error(f"`{key}` has unknown keys {sorted(unknown)}.")
    out = dict(options)
    for option in spec.options:
        if option.name not in out and option.default is not REQUIRED:
            out[option.name] = option.default
    for option in spec.options:
        where = f"{key}.{option.name}"
        if option.name not in out:
            needed = option.required_when is None or (
                out.get(option.required_when[0]) == option.required_when[1]
            )
            if not needed:
                continue
            when = (
                ""
                if option.required_when is None
                else (f" for {option.required_when[0]} {option.required_when[1]!r}")
            )
            raise error(f"`{where}` ({option.help}) is needed{when}.")
        value = out[option.name]
        if option.choices is not None:
            if value not in option.choices:
                raise error(option.choices.message(value, where))
        elif option.type is int:
            if not _is_int(value) or (option.minimum is not None and value < option.minimum):
                bound = "non-negative" if option.minimum == 0 else f"at least {option.minimum}"
                raise error(f"`{where}` must be an integer {bound}; got {value!r}.")
    return out


def check_family_support(
    population: str,
    family: str,
    options: Mapping[str, Any],
    key: str = "method",
    error: type[ValueError] = ValueError,
) -> None:
    """Raise if a population kind cannot compute a method (family, scheme, interval).

    Examples
    --------
    >>> from perfci._core.registry import check_family_support
    >>> check_family_support("scored_nested", "analytic", {"method": "wilson"})
    Traceback (most recent call last):
    ...
    ValueError: `method`: a scored_nested population takes families ['auc']; got 'analytic'.
    """
    HARNESS_POPULATION.check(population, "population.kind")
    support = POPULATION_SUPPORT[population]
    if family not in support.families:
        raise error(
            f"`{key}`: a {population} population takes families "
            f"{sorted(support.families)}; got {family!r}."
        )
    if family == "bootstrap":
        for name, allowed in (("scheme", support.schemes), ("interval", support.intervals)):
            if options.get(name) not in allowed:
                raise error(
                    f"`{key}.{name}` must be one of {sorted(allowed)} for a {population} "
                    f"population; got {options.get(name)!r}."
                )


# ------------------------------------------------------------------------- suite files

#: The most resamples one bootstrap interval draws (10 million). Every replicate is kept
#: (the result's ``distribution``, 8 bytes each), so this is 80 MB and seconds per data
#: set; far fewer (the default 2,000, or 10,000 for a precise BCa) are enough.
MAX_RESAMPLES = 10**7

#: The most values one grid dim of a suite takes (a ``{start, stop, step}`` table counted
#: before it is expanded).
MAX_GRID_VALUES = 100_000

#: A suite's name (it names the result file ``OUT/NAME.nc``): a letter or digit, then
#: letters, digits, ``-`` and ``_``; never a path.
SUITE_NAME_REGEX = r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}"


#: The exception a check raises (a subclass of `ValueError`, such as a suite's error).
_Error = type[ValueError]


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Field:
    """One scalar key of a suite file (or one value of a grid dim): its type and range.

    Attributes
    ----------
    name : str
        The key.
    help : str
        One line of help.
    type : type
        ``int``, ``float`` (an integer is accepted too), ``str`` or ``bool``. TOML tells
        them apart, so ``10.0`` is not an ``int`` and ``1`` is not a ``bool``.
    required : bool
        Whether a suite must give it (for a grid dim: whether the dim must be present).
    default : object
        The value used when an optional key is absent.
    minimum, maximum : float, optional
        Bounds of a number.
    open_minimum, open_maximum : bool
        Whether the bound itself is excluded.
    choices : Choices, optional
        The allowed values of a string.
    pattern : str, optional
        A regular expression the whole string must match.
    expected : str, optional
        What a valid value is, in words, when :meth:`describe` cannot say it.
    empty : bool
        Whether a string may be empty.

    Examples
    --------
    >>> from perfci._core.registry import SUITE_KEYS
    >>> seed = SUITE_KEYS["seed"]
    >>> seed.describe()
    'a non-negative integer'
    >>> seed.check(1.5, "seed")
    Traceback (most recent call last):
    ...
    ValueError: `seed` must be a non-negative integer; got 1.5.
    """

    name: str
    help: str
    type: type = float
    required: bool = True
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    open_minimum: bool = False
    open_maximum: bool = False
    choices: Choices | None = None
    pattern: str | None = None
    expected: str | None = None
    empty: bool = False

    def describe(self) -> str:
        """Return what a valid value is, in words (``"an integer at least 1"``)."""
        if self.expected is not None:
            return self.expected
        if self.choices is not None:
            return f"one of {sorted(self.choices.names)}"
        if self.type is bool:
            return "true or false"
        if self.type is str:
            return "a string" if self.empty else "a non-empty string"
        lo, hi = self.minimum, self.maximum
        if self.type is int:
            if lo is not None and hi is not None:
                return f"an integer from {lo} to {hi}"
            if lo == 0:
                return "a non-negative integer"
            return "an integer" if lo is None else f"an integer at least {lo}"
        if lo is not None and hi is not None:
            if self.open_minimum and self.open_maximum:
                return f"a number strictly between {_number(lo)} and {_number(hi)}"
            left, right = "(" if self.open_minimum else "[", ")" if self.open_maximum else "]"
            return f"a number in {left}{_number(lo)}, {_number(hi)}{right}"
        if lo is not None:
            return f"a number {'above' if self.open_minimum else 'at least'} {_number(lo)}"
        return "a number"

    def accepts(self, value: Any) -> bool:
        """Return True if `value` has the field's type and lies in its range."""
        if self.type is bool:
            return isinstance(value, bool)
        if self.type is str:
            if not isinstance(value, str) or not (value or self.empty):
                return False
            if self.choices is not None and value not in self.choices:
                return False
            return self.pattern is None or re.fullmatch(self.pattern, value) is not None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.type is int and not isinstance(value, int):
            return False
        if value != value or value in (float("inf"), float("-inf")):  # NaN, infinity
            return False
        lo, hi = self.minimum, self.maximum
        if lo is not None and (value < lo or (self.open_minimum and value == lo)):
            return False
        return hi is None or not (value > hi or (self.open_maximum and value == hi))

    def check(self, value: Any, key: str | None = None, error: _Error = ValueError) -> Any:
        """Return `value` if the field accepts it, else raise `error` naming `key`."""
        if not self.accepts(value):
            raise error(f"`{key or self.name}` must be {self.describe()}; got {value!r}.")
        return value


def _fields(*fields: Field) -> Mapping[str, Field]:
    return {f.name: f for f in fields}


def _share(
    name: str, help: str, *, closed_high: bool = False, default: float | None = None
) -> Field:
    """Return a share in (0, 1), optional with `default` when one is given."""
    return Field(
        name,
        help,
        float,
        default is None,
        default,
        minimum=0,
        maximum=1,
        open_minimum=True,
        open_maximum=not closed_high,
    )


#: The scalar keys of a suite file's top level; besides them it has the tables
#: :data:`SUITE_TABLES`.
SUITE_KEYS: Mapping[str, Field] = _fields(
    Field(
        "name",
        "the suite's name; the result is written to OUT/NAME.nc",
        str,
        pattern=SUITE_NAME_REGEX,
        expected="a name of letters, digits, '-' and '_' that starts with a letter or digit "
        "(at most 100 characters, no path: it names the result file)",
    ),
    Field("description", "one line saying what the suite measures", str, False, "", empty=True),
    Field("seed", "the suite seed; every cell's seed derives from it", int, minimum=0),
    Field(
        "confidence_level",
        "the nominal level of every interval",
        float,
        False,
        0.95,
        minimum=0,
        maximum=1,
        open_minimum=True,
        open_maximum=True,
    ),
)

#: The tables of a suite file's top level, each required.
SUITE_TABLES: Mapping[str, str] = {
    "population": "the population simulated from (its `kind` and parameters)",
    "grid": "the dims of the grid of cells and their values",
    "scales": "the scales (smoke, full, ...): replications, resamples, grid overrides",
    "methods": "the methods scored, an array of tables with `name` and `family`",
}

#: The keys of one scale (``[scales.NAME]``); besides them it may have a ``grid`` table.
SCALE_KEYS: Mapping[str, Field] = _fields(
    Field("replications", "simulated data sets per cell (1 in an exact scale)", int, minimum=1),
    Field(
        "resamples",
        "resamples B of each bootstrap interval (at least 1 where the scale simulates one)",
        int,
        minimum=0,
        maximum=MAX_RESAMPLES,
    ),
    Field("exact", "compute by enumeration instead of simulating", bool, False, False),
)

#: The keys of one method (``[[methods]]``) besides its family's options.
METHOD_KEYS: Mapping[str, Field] = _fields(
    Field("name", "the method's label in the result (unique in the suite)", str),
    Field("family", "how the method is computed", str, choices=HARNESS_FAMILY),
)


@dataclass(frozen=True)
class PopulationSchema:
    """The keys and grid dims of a harness population kind.

    Attributes
    ----------
    kind : str
        One of :data:`HARNESS_POPULATION`.
    keys : mapping of str to Field
        The population table's keys besides ``kind``.
    dims : mapping of str to Field
        The grid dims, each value checked as the field; a dim's ``required`` says whether
        a suite must have it.
    """

    kind: str
    keys: Mapping[str, Field]
    dims: Mapping[str, Field]


_SIZE = Field("n", "relevant texts per data set", int, minimum=1)

HARNESS_SAMPLING = _choices(
    "sampling",
    "how a nested_finite suite samples texts",
    [
        ("small", "persons, then about 3 texts each (normal, SD 1, at least 1)"),
        ("moderate", "persons, then about 30 texts each (normal, SD 5, at least 1)"),
        ("srs", "a simple random sample of population.srs_texts texts from all persons"),
    ],
)

#: Parameters of persons drawn from an infinite population (kinds ``nested`` and
#: ``nested_confusion``): each may be a population key or a grid dim.
_PERSON_FIELDS = (
    Field("persons", "persons sampled in each data set", int, False, minimum=2),
    Field(
        "texts_per_person",
        "mean texts per person (a rounded lognormal, at least min_texts)",
        float,
        False,
        minimum=1,
    ),
    Field(
        "size_cv",
        "coefficient of variation of the texts per person (0: every person the same)",
        float,
        False,
        0.0,
        minimum=0,
        maximum=3,
    ),
    Field(
        "informative",
        "correlation of a person's log number of texts with their rate (informative "
        "cluster size; 0: unrelated)",
        float,
        False,
        0.0,
        minimum=-0.99,
        maximum=0.99,
    ),
    Field(
        "icc",
        "ICC of the persons' rates (a Beta with variance icc m (1 - m); 0: all equal)",
        float,
        False,
        0.1,
        minimum=0,
        maximum=1,
        open_maximum=True,
    ),
)
_PERSON_KEYS = (Field("min_texts", "fewest texts a person has", int, False, 1, minimum=1),)
#: The parameters a nested or nested_confusion suite must give (as a key or a dim).
PERSON_REQUIRED = ("persons", "texts_per_person")


def _optional(fields: Iterable[Field]) -> Mapping[str, Field]:
    return _fields(*fields)


_SUBGROUP_FIELDS = (
    _share("recall_b", "recall in the second subgroup (the reference)", default=0.8),
    _share("specificity_b", "specificity in the second subgroup", default=0.9),
)


def _icc_of_shares(help: str) -> Field:
    """Return the optional ICC of the persons' class shares (None: the `icc`)."""
    return Field("icc_prevalence", help, float, False, minimum=0, maximum=1, open_maximum=True)


_PAIRED_FIELDS = (
    _share("prevalence", "share of texts that are reference positives", default=0.3),
    _icc_of_shares("ICC of the persons' shares of positives (default: icc)"),
    _share("recall_a", "recall of classifier A", default=0.9),
    _share("recall_b", "recall of classifier B", default=0.85),
    _share("specificity_a", "specificity of classifier A", default=0.95),
    _share("specificity_b", "specificity of classifier B", default=0.95),
    Field(
        "agreement",
        "dependence of A's and B's errors on a text (0: independent given the person, "
        "1: as dependent as their rates allow)",
        float,
        False,
        0.5,
        minimum=0,
        maximum=1,
    ),
    Field("metric", "the metric whose difference is scored", str, False, choices=BINARY_METRIC),
)
#: The persons' shares of positives (kinds scored_nested and runs_nested; the ICC also
#: annotators_nested).
_POSITIVES_FIELDS = (
    _share("prevalence", "share of texts that are reference positives", default=0.3),
    Field(
        "icc_prevalence",
        "ICC of the persons' shares of positives",
        float,
        False,
        0.1,
        minimum=0,
        maximum=1,
        open_maximum=True,
    ),
)
_SCORED_FIELDS = (
    *_POSITIVES_FIELDS,
    _share(
        "auc",
        "ROC AUC of the continuous score (binormal, equal variances); the truth is that of "
        "the score rounded to score_levels levels, ties counting half",
        default=0.8,
    ),
    Field(
        "score_icc",
        "share of the score's variance (within a class) that is between persons: a person "
        "effect shifting the scores of all their texts",
        float,
        False,
        0.3,
        minimum=0,
        maximum=1,
        open_maximum=True,
    ),
    Field("score_levels", "distinct score levels", int, False, 20, minimum=2),
)


def _latent_sd(name: str, help: str, default: float) -> Field:
    """Return an optional SD of a normal effect on the probit scale."""
    return Field(name, help, float, False, default, minimum=0)


_RUNS_FIELDS = (
    *_POSITIVES_FIELDS,
    Field(
        "runs",
        "runs of the classifier, each labelling every text",
        int,
        False,
        5,
        minimum=2,
        maximum=60,
    ),
    _share("recall", "recall of a typical run (run effect 0)", default=0.85),
    _share("specificity", "specificity of a typical run (run effect 0)", default=0.9),
    _latent_sd("text_sd", "SD of a text's effect on the probit scale (how hard it is)", 1.0),
    _latent_sd("person_sd", "SD of a person's effect on the probit scale (all their texts)", 0.5),
    _latent_sd(
        "run_sd",
        "SD of a run's systematic effect on the probit scale (all texts of the run; 0: the "
        "runs differ by chance only)",
        0.3,
    ),
    Field("metric", "the binary metric scored", str, False, choices=BINARY_METRIC),
)
_ANNOTATORS_FIELDS = (
    _share("prevalence", "share of texts whose true class is positive", default=0.3),
    _POSITIVES_FIELDS[1],
    Field(
        "annotators",
        "human annotators, each coding a text with probability coded",
        int,
        False,
        3,
        minimum=2,
        maximum=20,
    ),
    _share("recall", "recall of the classifier against the true class", default=0.85),
    _share("specificity", "specificity of the classifier against the true class", default=0.9),
    _share(
        "annotator_accuracy",
        "probability that a typical annotator (effect 0) codes a text's true class, in "
        "either class",
        default=0.9,
    ),
    _latent_sd(
        "text_sd",
        "SD of a text's effect on the probit scale (a hard text is miscoded by every "
        "annotator alike)",
        1.0,
    ),
    _latent_sd(
        "person_sd",
        "SD of a person's effect on the probit scale (all their texts, every annotator)",
        0.5,
    ),
    _latent_sd(
        "annotator_sd",
        "SD of an annotator's systematic shift toward coding positive on the probit scale "
        "(0: the annotators differ by chance only)",
        0.3,
    ),
    _share(
        "coded",
        "probability that an annotator codes a text (below 1: missing codes; every text "
        "keeps at least one)",
        closed_high=True,
        default=1.0,
    ),
    Field("metric", "the binary metric scored", str, False, choices=BINARY_METRIC),
)
_RATE = _share(
    "rate", "the persons' mean rate (text-weighted when sizes are not informative)", default=0.9
)
_CONFUSION_FIELDS = (
    _share(
        "prevalence",
        "share of texts in the first (positive) class; the other classes share the rest",
        default=0.3,
    ),
    _icc_of_shares("ICC of the persons' class shares (default: icc)"),
    _share(
        "recall",
        "share of first-class texts the classifier puts in the first class",
        default=0.9,
    ),
    _share(
        "specificity",
        "share of every other class's texts the classifier labels correctly",
        default=0.9,
    ),
    Field("metric", "the metric scored", str, False, choices=METRIC),
)

POPULATION_SCHEMA: Mapping[str, PopulationSchema] = {
    s.kind: s
    for s in (
        PopulationSchema(
            "bernoulli",
            {},
            _fields(_SIZE, _share("p", "the true proportion")),
        ),
        PopulationSchema(
            "confusion",
            _fields(_share("prevalence", "share of texts that are reference positives")),
            _fields(
                _SIZE,
                _share("precision", "the true precision", closed_high=True),
                _share("recall", "the true recall", closed_high=True),
                Field(
                    "metric",
                    "the binary metric scored (default f1)",
                    str,
                    False,
                    "f1",
                    choices=BINARY_METRIC,
                ),
            ),
        ),
        PopulationSchema(
            "nested_finite",
            _fields(
                Field("persons", "persons of the finite population", int, minimum=2),
                Field("texts_per_person", "texts of each person", int, minimum=1),
                _share("mean", "mean of the persons' rates (a Beta distribution)"),
                Field(
                    "sd",
                    "SD of the persons' rates, below sqrt(mean (1 - mean)) (or an icc dim)",
                    float,
                    False,
                    minimum=0,
                    open_minimum=True,
                ),
                Field("seed", "seed of the population (the same in every cell)", int, minimum=0),
                Field(
                    "srs_texts",
                    "texts of a simple random sample (sampling 'srs'; default 1200)",
                    int,
                    False,
                    1200,
                    minimum=1,
                ),
            ),
            _fields(
                Field(
                    "sampling",
                    "how texts are sampled",
                    str,
                    choices=HARNESS_SAMPLING,
                ),
                Field(
                    "persons",
                    "persons sampled (required unless sampling is only 'srs')",
                    int,
                    False,
                    minimum=2,
                ),
                Field(
                    "icc",
                    "ICC of the population (sets sd^2 = icc mean (1 - mean))",
                    float,
                    False,
                    minimum=0,
                    maximum=1,
                    open_minimum=True,
                    open_maximum=True,
                ),
            ),
        ),
        PopulationSchema(
            "nested_planning",
            _fields(_share("metric_value", "the metric value the half-widths are computed at")),
            _fields(
                _SIZE,
                Field("icc", "the ICC", float, minimum=0, maximum=1, open_maximum=True),
                Field("texts_per_person", "mean texts per person", float, minimum=1),
            ),
        ),
        PopulationSchema(
            "nested",
            _optional(
                (
                    *_PERSON_FIELDS,
                    *_PERSON_KEYS,
                    _RATE,
                )
            ),
            _optional((*_PERSON_FIELDS, _RATE)),
        ),
        PopulationSchema(
            "subgroups_nested",
            _optional((*_PERSON_FIELDS, *_PERSON_KEYS, *_CONFUSION_FIELDS, *_SUBGROUP_FIELDS)),
            _optional((*_PERSON_FIELDS, *_CONFUSION_FIELDS, *_SUBGROUP_FIELDS)),
        ),
        PopulationSchema(
            "paired_nested",
            _optional((*_PERSON_FIELDS[:3], _PERSON_FIELDS[4], *_PERSON_KEYS, *_PAIRED_FIELDS)),
            _optional((*_PERSON_FIELDS[:3], _PERSON_FIELDS[4], *_PAIRED_FIELDS)),
        ),
        PopulationSchema(
            "scored_nested",
            _optional((*_PERSON_FIELDS[:3], *_PERSON_KEYS, *_SCORED_FIELDS)),
            _optional((*_PERSON_FIELDS[:3], *_SCORED_FIELDS)),
        ),
        PopulationSchema(
            "runs_nested",
            _optional((*_PERSON_FIELDS[:3], *_PERSON_KEYS, *_RUNS_FIELDS)),
            _optional((*_PERSON_FIELDS[:3], *_RUNS_FIELDS)),
        ),
        PopulationSchema(
            "annotators_nested",
            _optional((*_PERSON_FIELDS[:3], *_PERSON_KEYS, *_ANNOTATORS_FIELDS)),
            _optional((*_PERSON_FIELDS[:3], *_ANNOTATORS_FIELDS)),
        ),
        PopulationSchema(
            "nested_confusion",
            _optional(
                (
                    *_PERSON_FIELDS,
                    *_PERSON_KEYS,
                    *_CONFUSION_FIELDS,
                    Field("classes", "number of classes", int, False, 2, minimum=2, maximum=3),
                )
            ),
            _optional((*_PERSON_FIELDS, *_CONFUSION_FIELDS)),
        ),
    )
}
