"""The registry: every name and option perfci accepts, declared once.

Metric names, interval methods, bootstrap schemes and intervals, agreement statistics and
levels of measurement, nested-data designs and degrees-of-freedom adjustments, Bayesian
samplers, estimands, priors and credible-interval kinds are listed here, each with a
one-line help text: the vocabulary the public functions validate against. Validation
(:meth:`Choices.check`), the command line's ``choices`` and help, the validation harness's
suite schema (:mod:`perfci.harness.families`, :mod:`perfci.harness.kinds`) and the
generated bad-input test all read them, so a name is added or renamed in one place.

A :class:`Choices` is an ordered set of names for one argument. Its names keep their
declared order (the order of the report, of the command line's help); error messages list
them sorted, as every validator in perfci does::

    `method` must be one of ['agresti_coull', ..., 'wilson']; got 'exact'.

This module is NumPy-free and imports nothing else from perfci.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
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
    "WEIGHTED_METHOD",
    "STRATIFIED_PRIOR",
    "STRATIFIED_PLAN_METRIC",
    "STRATIFIED_PLAN_METHOD",
    "ALLOCATION",
    "MANY_ADJUST",
    "CV_METHOD",
    "RUN_SOURCE",
    "LEVEL_OF_MEASUREMENT",
    "MAX_RESAMPLES",
    "METRIC",
    "METRIC_CI_AUC_METHOD",
    "METRIC_CI_METHOD",
    "OUTPUT_FORMAT",
    "PLAN_METHOD",
    "PRIOR",
    "PROPORTION_METRIC",
    "RUN_ESTIMAND",
    "RUN_METHOD",
    "SAMPLER",
    "SIMULTANEOUS",
    "VALIDATE_ACTION",
    "Choices",
    "Entry",
    "Pattern",
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
    ('icc', 'icc_weighted', 'cluster_robust', 'persons', 'edge')
    >>> "icc" in DESIGN
    True
    >>> DESIGN.check("anova")
    Traceback (most recent call last):
    ...
    ValueError: `design` must be one of ['cluster_robust', 'edge', 'icc', 'icc_weighted', 'persons']; got 'anova'.
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

    @classmethod
    def of(
        cls, argument: str, help: str, entries: Iterable[tuple[str, str]], **kwargs: Any
    ) -> Choices:
        """Return the choices of `argument` from ``(name, help)`` pairs.

        Examples
        --------
        >>> from perfci._core.registry import Choices
        >>> Choices.of("tail", "which tail", [("low", "below"), ("high", "above")]).names
        ('low', 'high')
        """
        return cls(argument, help, tuple(Entry(n, h) for n, h in entries), **kwargs)

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


# --------------------------------------------------------------------------- metrics

PROPORTION_METRIC = Choices.of(
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

BINARY_METRIC = Choices.of(
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

#: Metrics of the k x k matrix as a whole (single-label multi-class data).
MULTICLASS_METRIC = Choices.of(
    "metric",
    "a metric of the k x k confusion matrix as a whole",
    [
        (
            "multiclass_accuracy",
            "share of texts whose class the classifier gives, the k-class accuracy",
        ),
        ("multiclass_kappa", "Cohen's kappa of the k x k matrix, agreement beyond chance"),
    ],
)

METRIC = Choices.of(
    "metric",
    "a binary metric, a metric of the k x k matrix (multiclass_), or a macro_ / micro_ "
    "average over classes of a binary metric",
    [
        *((e.name, e.help) for e in BINARY_METRIC.entries),
        *((e.name, e.help) for e in MULTICLASS_METRIC.entries),
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

ANY_METRIC = Choices.of(
    "metric",
    "a metric of labels (binary, or a macro_ / micro_ average), or roc_auc of a score",
    [*((e.name, e.help) for e in METRIC.entries), *_SCORE_METRICS],
)

COMPARE_METRIC = Choices.of(
    "metric",
    "a binary metric of two classifiers' labels, or roc_auc of their scores",
    [*((e.name, e.help) for e in BINARY_METRIC.entries), *_SCORE_METRICS],
)

BOOTSTRAP_METRIC = Choices.of(
    "metric",
    "what the bootstrap resamples: a proportion's [successes, failures] or a metric's cells",
    [
        ("proportion", "a proportion from counts [successes, failures]"),
        *((e.name, e.help) for e in METRIC.entries),
    ],
)

# ------------------------------------------------------------------- interval methods

ANALYTIC_METHOD = Choices.of(
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

EXACT_METHOD = Choices.of(
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

PLAN_METHOD = Choices.of(
    "method",
    "interval method a sample size is planned for",
    [*((e.name, e.help) for e in ANALYTIC_METHOD.entries), _PERCENTILE],
)

METRIC_CI_METHOD = Choices.of(
    "method",
    "how the interval of a metric is computed",
    [
        ("recommended", "the recommended method for the metric and design (perfci.policy)"),
        *((e.name, e.help) for e in ANALYTIC_METHOD.entries),
        ("bootstrap", "bootstrap of the counts (any metric)"),
    ],
)

COMPARE_METHOD = Choices.of(
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

AUC_METHOD = Choices.of(
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

COMPARE_AUC_METHOD = Choices.of(
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

RUN_ESTIMAND = Choices.of(
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

ANNOTATOR_ESTIMAND = Choices.of(
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

RUN_METHOD = Choices.of(
    "method",
    "how the interval of a metric of repeated runs is computed",
    [
        (
            "recommended",
            "the recommended method (variance_components; the median run below "
            "CROSSED_TINY_RELEVANT relevant texts per run)",
        ),
        (
            "variance_components",
            "the linearized crossed (texts or persons x runs) variance, Satterthwaite df",
        ),
        ("bootstrap", "the two-way bootstrap of texts (or persons) and runs, percentile"),
    ],
)

WEIGHTED_METHOD = Choices.of(
    "method",
    "how the design-based interval of a metric of a weighted or stratified sample is formed",
    [
        (
            "recommended",
            "the recommended method (perfci.policy.WEIGHTED_METHOD; WEIGHTED_SIGNED_METHOD "
            "for kappa and MCC)",
        ),
        (
            "logit",
            "the Wald interval on the logit scale with the design's degrees of freedom, as "
            "R survey's svyciprop(method = 'logit')",
        ),
        (
            "beta",
            "Korn and Graubard's Clopper-Pearson interval at the design's effective sample "
            "size, as svyciprop(method = 'beta')",
        ),
        ("wald", "the Wald interval with the design's degrees of freedom (any metric)"),
        (
            "poststratified",
            "the interval of the corpus metric's posterior under a Dirichlet-multinomial per "
            "stratum, poststratified by the stratum sizes, each end from the bounding prior's "
            "posterior (perfci.policy.WEIGHTED_PRIOR; texts as units, equal weights within a "
            "stratum)",
        ),
        (
            "regularized_logit",
            "the logit interval with the variance of cells regularized by half a pseudo text "
            "in each possible cell of every stratum (Jeffreys' prior counts)",
        ),
    ],
)

STRATIFIED_PRIOR = Choices.of(
    "prior",
    "the Dirichlet prior of each stratum's cell shares in the poststratified model",
    [
        ("jeffreys", "Dirichlet(1/2, 1/2, 1/2, 1/2)"),
        ("uniform", "Dirichlet(1, 1, 1, 1)"),
        (
            "bounding",
            "one text per stratum in the possible cell that moves the metric furthest toward "
            "each end (Clopper-Pearson's Beta(x, n - x + 1) and Beta(x + 1, n - x) for one "
            "stratum): each end from its own posterior",
        ),
    ],
)

STRATIFIED_PLAN_METRIC = BINARY_METRIC.subset(
    ("recall", "precision", "f1"),
    help="a metric a validation sample stratified by the classifier's prediction is planned for",
)

STRATIFIED_PLAN_METHOD = WEIGHTED_METHOD.subset(
    ("beta", "logit"),
    help="the design-based interval whose expected half-width a stratified plan checks",
)

ALLOCATION = Choices.of(
    "allocation",
    "how a stratified plan divides the coded texts between predicted positives and negatives",
    [
        ("neyman", "n_h proportional to N_h S_h: the fewest texts for the target (Neyman)"),
        ("equal", "as many predicted positives as predicted negatives"),
        ("proportional", "n_h proportional to N_h, as a simple random sample of the corpus"),
    ],
)

MANY_ADJUST = Choices.of(
    "adjust",
    "how the intervals of many comparisons of classifiers hold together",
    [
        ("max_t", "the max-t band over the comparisons' joint distribution (simultaneous)"),
        ("bonferroni", "Bonferroni's band (simultaneous, wider)"),
        ("holm", "Bonferroni's intervals with Holm's step-down p-values"),
        ("none", "each interval at the level on its own (not simultaneous)"),
    ],
)

RUN_SOURCE = Choices.of(
    "source",
    "what the columns of labels of one classifier are",
    [
        ("runs", "repeated runs of one classifier (an LLM's sampling, decoding)"),
        ("seeds", "models of one fitting recipe trained with different random seeds"),
    ],
)

CV_METHOD = Choices.of(
    "method",
    "how the interval of a cross-validated metric (out-of-fold labels) is computed",
    [
        (
            "larger_variance",
            "the larger of the persons' and the folds' cluster-robust variance, persons' df",
        ),
        ("fold_clusters", "the folds as clusters, persons nested in them, t with K - 1 df"),
        ("naive", "the out-of-fold labels as one classifier's (persons or texts as clusters)"),
    ],
)

GROUP_METHOD = Choices.of(
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

SIMULTANEOUS = Choices.of(
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

BOOTSTRAP_SCHEME = Choices.of(
    "scheme",
    "what the bootstrap resamples",
    [
        ("iid", "texts, as if independent"),
        ("cluster", "persons, each with all of their texts"),
        ("hierarchical", "persons, then texts within each drawn person"),
    ],
)

BOOTSTRAP_INTERVAL = Choices.of(
    "interval",
    "how replicates become an interval",
    [
        ("percentile", "quantiles (1 - c)/2 and (1 + c)/2 of the valid replicates"),
        ("bca", "bias-corrected and accelerated (Efron and Tibshirani 1993, ch. 14)"),
    ],
)

BOOTSTRAP_DRAWS = Choices.of(
    "draws",
    "what the bootstrap draws",
    [
        (
            "auto",
            "only a proportion's order statistics, from their exact law (iid scheme), "
            "else every resample",
        ),
        ("resamples", "every resample, kept in the result's distribution"),
    ],
)

# ------------------------------------------------------------- agreement of annotators

AGREEMENT_STATISTIC = Choices.of(
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

AGREEMENT_METHOD = Choices.of(
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

LEVEL_OF_MEASUREMENT = Choices.of(
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

DESIGN = Choices.of(
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
        (
            "edge",
            "near 0 or 1: Wilson-type ends from the persons' minority outcomes, no narrower "
            "than an assumed ICC (EDGE_ICC) makes them; monotone in the data",
        ),
    ],
)

DF_ADJUST = Choices.of(
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

SAMPLER = Choices.of(
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

ESTIMAND = Choices.of(
    "estimand",
    "what a credible interval is about",
    [
        ("population", "text-weighted rate of the population of persons"),
        ("mu", "mean person-level rate of the population of persons"),
        ("sampled_persons", "text-weighted rate of the sampled persons only"),
        ("person", "each sampled person's rate (partial pooling)"),
    ],
)

PRIOR = Choices.of(
    "prior",
    "prior of the beta-binomial's concentration kappa (bounded below by 1)",
    [
        ("pareto", "kappa ~ Pareto(1.5, 1), i.e. kappa^(-1/2) ~ Beta(3, 1)"),
        ("bda3", "p(kappa) proportional to kappa^(-3/2), truncated at kappa >= 1"),
    ],
)

CREDIBLE_INTERVAL = Choices.of(
    "kind",
    "kind of credible interval",
    [
        ("eti", "equal-tailed: the (1 - l)/2 and (1 + l)/2 posterior quantiles"),
        ("hdi", "highest density: the narrowest interval holding l of the posterior"),
    ],
)

#: The default prior of the cells of independent texts (the prior study in docs/bayes.md).
DEFAULT_CONFUSION_PRIOR = "metric_jeffreys"

CONFUSION_PRIOR = Choices.of(
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

OUTPUT_FORMAT = Choices.of(
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

VALIDATE_ACTION = Choices.of(
    "action",
    "what to do with validation suites",
    [
        ("list", "show the suites in validation/suites/"),
        ("run", "run one suite at one scale into a result file"),
        ("report", "draw the figures and coverage tables of result files"),
    ],
)
# ----------------------------------------------------------------------------- limits

#: The most resamples one bootstrap interval draws (10 million). Every replicate is kept
#: (the result's ``distribution``, 8 bytes each), so this is 80 MB and seconds per data
#: set; far fewer (the default 2,000, or 10,000 for a precise BCa) are enough.
MAX_RESAMPLES = 10**7
