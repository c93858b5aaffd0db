"""The method families of suites: how each family's methods are computed, and their options.

A suite's ``[[methods]]`` entry names a ``family`` and gives that family's options (the
analytic ``method``, the bootstrap's ``scheme`` and ``interval``, a Bayesian ``sampler``
and ``estimand``, ...). Each family and each option is declared here once, with its
type, default and allowed values, taken from the registry's vocabulary
(:mod:`perfci._core.registry`); :func:`check_family_options` validates a method's
options against them and fills in the defaults, and the suite loader
(:mod:`perfci.harness.schema`) and the generated bad-input tests read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._core.registry import (
    ANALYTIC_METHOD,
    ANNOTATOR_ESTIMAND,
    AUC_METHOD,
    BOOTSTRAP_INTERVAL,
    BOOTSTRAP_SCHEME,
    COMPARE_METHOD,
    CONFUSION_ESTIMAND,
    CONFUSION_PRIOR,
    CV_METHOD,
    DEFAULT_CONFUSION_PRIOR,
    DESIGN,
    DF_ADJUST,
    ESTIMAND,
    GROUP_METHOD,
    MANY_ADJUST,
    PRIOR,
    RUN_ESTIMAND,
    RUN_METHOD,
    SAMPLER,
    STRATIFIED_PRIOR,
    WEIGHTED_METHOD,
    Choices,
)

__all__ = [
    "HARNESS_FAMILIES",
    "HARNESS_FAMILY",
    "REQUIRED",
    "Family",
    "Option",
    "can_flag",
    "check_family_options",
]


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
_SUITE_DF_ADJUST = Choices.of(
    "df_adjust",
    DF_ADJUST.help,
    [("none", "no adjustment"), *((e.name, e.help) for e in DF_ADJUST.entries)],
)

_COUNTS = Choices.of(
    "counts",
    "what the method sees of each data set",
    [
        ("per_person", "the counts of each person (groups given)"),
        ("pooled", "the pooled counts (texts treated as independent)"),
    ],
)

# The methods of the harness's `runs` family: those of perfci.runs, and the two naive
# intervals of one classifier users compute instead (scored to show what they miss).
_HARNESS_RUN_METHOD = Choices.of(
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
_HARNESS_ANNOTATOR_METHOD = Choices.of(
    "method",
    "how the interval of a metric against several annotators is computed",
    [
        (
            "recommended",
            "the recommended method (variance_components; the median run below "
            "CROSSED_TINY_RELEVANT relevant texts per run)",
        ),
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

_WEIGHTING = Choices.of(
    "weighting",
    "whether the interval uses the sample's design",
    [
        ("design", "the design-based interval (weights, strata, stratum sizes)"),
        (
            "none",
            "the design ignored: the recommended interval of the unweighted counts, texts "
            "treated as a simple random sample (what is computed without the design)",
        ),
    ],
)
_CLUSTERS = Choices.of(
    "clusters",
    "the sampling units of the design-based variance",
    [
        ("none", "texts, with the finite population correction of the stratum sizes"),
        ("persons", "persons within strata (groups given), drawn with replacement"),
    ],
)

_TARGET = Choices.of(
    "target",
    "the family of intervals scored together",
    [
        ("baseline", "the differences of classifiers 1 to K - 1 from classifier 0"),
        ("pairs", "the differences of every pair"),
        ("ranks", "the rank sets of the K classifiers against their true ranks"),
        ("metrics", "the K metrics (what holds for a classifier chosen on the same texts)"),
    ],
)

_CV_METHOD = Choices.of(
    "method",
    "the interval of a cross-validated metric",
    [
        *[(name, CV_METHOD.help_of(name)) for name in CV_METHOD.names],
        ("nested_cv", "nested cross-validation (Bates, Hastie and Tibshirani)"),
    ],
)

_CV_TARGET = Choices.of(
    "target",
    "the truth a cross-validation interval is scored against",
    [
        ("procedure", "the fitting procedure's metric at the training size the method names"),
        ("fitted_model", "the metric of the model fit on all of the data set's texts"),
    ],
)

_PERFORMANCE_METHOD = Choices.of(
    "method",
    "the interval of a performance population's target",
    [
        ("bayes", "the performance model's credible interval (perfci.bayes.performance_model)"),
        ("unadjusted", "the recommended nested interval of the sample's recall"),
        ("weighted", "the design-based interval, experienced persons a stratum weighted "
                     "to the corpus"),
    ],
)  # fmt: skip

_PERFORMANCE_TARGET = Choices.of(
    "target",
    "the truth a performance population's interval is scored against",
    [
        ("coefficient", "the experienced persons' logit coefficient"),
        ("effect", "the difference in recall between experienced and other new persons"),
        ("corpus", "the corpus's recall"),
    ],
)

HARNESS_FAMILIES: Mapping[str, Family] = {
    f.name: f
    for f in (
        Family(
            "weighted",
            "an interval of a weighted, stratified sample (perfci.weighted_ci, what "
            "perfci.metric_ci gives with weights and strata), or the unweighted one",
            (
                Option(
                    "method",
                    "the design-based interval",
                    default="recommended",
                    choices=WEIGHTED_METHOD,
                ),
                Option("weighting", "design or none", default="design", choices=_WEIGHTING),
                Option("clusters", "the sampling units", default="none", choices=_CLUSTERS),
            ),
        ),
        Family(
            "many",
            "simultaneous intervals of many classifiers on the same texts "
            "(perfci.many.many_intervals, what perfci.compare_many and perfci.rank_ci give)",
            (
                Option("adjust", "the adjustment", default="max_t", choices=MANY_ADJUST),
                Option("target", "the family scored", default="baseline", choices=_TARGET),
            ),
        ),
        Family(
            "performance",
            "a performance model of covariates, or the unadjusted or weighted interval beside "
            "it (perfci.bayes.performance_model); every bayes method of a suite shares one "
            "fit per data set, with the first one's draws and chains",
            (
                Option("method", "the interval", default="bayes", choices=_PERFORMANCE_METHOD),
                Option("target", "the truth", default="corpus", choices=_PERFORMANCE_TARGET),
                Option(
                    "draws",
                    "draws per chain (after 1,000 tuning steps)",
                    type=int,
                    default=2000,
                    minimum=100,
                ),
                Option("chains", "MCMC chains", type=int, default=4, minimum=1),
            ),
        ),
        Family(
            "cv",
            "an interval of a cross-validated metric (perfci.splits.cv_counts and "
            "nested_cv_counts, what perfci.cv_ci and perfci.nested_cv_ci give)",
            (
                Option("method", "the interval", default="larger_variance", choices=_CV_METHOD),
                Option("target", "the truth scored", default="procedure", choices=_CV_TARGET),
            ),
        ),
        Family(
            "bayes_stratified",
            "the poststratified posterior of the corpus metric (perfci.bayes.stratified_posterior)",
            (
                Option(
                    "prior",
                    "each stratum's Dirichlet prior",
                    default="jeffreys",
                    choices=STRATIFIED_PRIOR,
                ),
                Option(
                    "draws", "posterior draws per data set", type=int, default=4000, minimum=100
                ),
            ),
        ),
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

HARNESS_FAMILY = Choices.of(
    "family", "harness method family", [(f.name, f.help) for f in HARNESS_FAMILIES.values()]
)


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
    >>> from perfci.harness.families import check_family_options
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


def can_flag(family: str, options: Mapping[str, Any]) -> bool:
    """Return whether a harness method's fits can be flagged (counted in ``n_flagged``).

    A fit is flagged when its MCMC diagnostics fail (``bayes`` with a sampler other than
    ``grid``, ``performance`` with method ``bayes``) or when a margin of the hierarchical
    model falls back to a pooled rate (``bayes_nested_confusion``, ``bayes_comparison``).
    Every other method computes its interval directly and its kernel scores no flag, so
    a cell file giving it flags was not written by a run.

    Examples
    --------
    >>> from perfci.harness.families import can_flag
    >>> can_flag("analytic", {"method": "wald"}), can_flag("bayes", {"sampler": "nutpie"})
    (False, True)
    >>> can_flag("bayes", {"sampler": "grid"}), can_flag("bayes_comparison", {})
    (False, True)
    """
    if family == "bayes":
        return options.get("sampler") != "grid"
    if family == "performance":
        return options.get("method") == "bayes"
    return family in ("bayes_nested_confusion", "bayes_comparison")
