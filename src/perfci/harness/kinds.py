"""The population kinds of suites: their keys, grid dims, and what each can compute.

A suite's ``[population]`` table names a ``kind`` (:data:`HARNESS_POPULATION`); the
kind's :class:`PopulationSchema` declares the keys that table may have and the dims its
grid may have (:data:`POPULATION_SCHEMA`), each a :class:`~perfci.harness.fields.Field`
with its type, range and default, and its :class:`Support` the method families,
bootstrap schemes and intervals it can score and whether it has an exact mode
(:data:`POPULATION_SUPPORT`, checked by :func:`check_family_support`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._core.registry import BINARY_METRIC, BOOTSTRAP_INTERVAL, BOOTSTRAP_SCHEME, METRIC, Choices
from .._core.validation import MAX_COUNT
from .families import HARNESS_FAMILIES
from .fields import Field, field_map, share

__all__ = [
    "HARNESS_POPULATION",
    "HARNESS_SAMPLING",
    "PERSON_REQUIRED",
    "POPULATION_SCHEMA",
    "POPULATION_SUPPORT",
    "PopulationSchema",
    "Support",
    "check_family_support",
]


HARNESS_POPULATION = Choices.of(
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
        (
            "stratified_corpus",
            "a fixed finite corpus of texts nested in persons, from which validation samples "
            "are drawn stratified by the classifier's prediction (weighted samples)",
        ),
        (
            "many_nested",
            "K correlated classifiers on the same texts nested in persons (simultaneous "
            "intervals and rank sets)",
        ),
        (
            "cv_nested",
            "a classifier fit and cross-validated on texts nested in persons (folds of "
            "persons; the estimand is the fitting procedure's metric)",
        ),
        (
            "covariates_nested",
            "recall that depends on a person-level and a text-level covariate, texts nested "
            "in persons, the sample's mix of persons differing from the corpus's "
            "(performance models)",
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
        frozenset({"percentile", "bca"}),
        False,
    ),
    "subgroups_nested": Support(frozenset({"group_difference"}), frozenset(), frozenset(), False),
    "scored_nested": Support(
        frozenset({"auc"}), frozenset(BOOTSTRAP_SCHEME), frozenset({"percentile"}), False
    ),
    "runs_nested": Support(frozenset({"runs"}), frozenset(), frozenset(), False),
    "annotators_nested": Support(frozenset({"annotators"}), frozenset(), frozenset(), False),
    "stratified_corpus": Support(
        frozenset({"weighted", "bayes_stratified"}), frozenset(), frozenset(), False
    ),
    "many_nested": Support(frozenset({"many"}), frozenset(), frozenset(), False),
    "cv_nested": Support(frozenset({"cv"}), frozenset(), frozenset(), False),
    "covariates_nested": Support(frozenset({"performance"}), frozenset(), frozenset(), False),
    "paired_nested": Support(
        frozenset({"comparison", "bayes_comparison"}),
        frozenset(BOOTSTRAP_SCHEME),
        frozenset({"percentile"}),
        False,
    ),
}


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
    >>> from perfci.harness.kinds import check_family_support
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


#: A data set's size: at most the texts one data set may hold (:data:`MAX_COUNT`, what
#: :func:`perfci.proportion_ci` and :func:`perfci.bootstrap_ci` enforce).
_SIZE = Field("n", "relevant texts per data set", int, minimum=1, maximum=MAX_COUNT)

#: Which texts the annotators of an annotators_nested population code.
ANNOTATOR_CODING = Choices.of(
    "coding",
    "which texts the annotators code",
    [
        (
            "random",
            "each code present with probability coded (missing completely at random), "
            "every text keeping at least one",
        ),
        (
            "after_first",
            "the first annotator codes every text; each other one codes a text with "
            "probability coded_positive where the first coded it positive and coded where "
            "negative (missing at random given the first annotator's code: the texts the "
            "second coders see are not a random sample)",
        ),
    ],
)

HARNESS_SAMPLING = Choices.of(
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
    return field_map(*fields)


_SUBGROUP_FIELDS = (
    share("recall_b", "recall in the second subgroup (the reference)", default=0.8),
    share("specificity_b", "specificity in the second subgroup", default=0.9),
)


def _icc_of_shares(help: str) -> Field:
    """Return the optional ICC of the persons' class shares (None: the `icc`)."""
    return Field("icc_prevalence", help, float, False, minimum=0, maximum=1, open_maximum=True)


_PAIRED_FIELDS = (
    share("prevalence", "share of texts that are reference positives", default=0.3),
    _icc_of_shares("ICC of the persons' shares of positives (default: icc)"),
    share("recall_a", "recall of classifier A", default=0.9),
    share("recall_b", "recall of classifier B", default=0.85),
    share("specificity_a", "specificity of classifier A", default=0.95),
    share("specificity_b", "specificity of classifier B", default=0.95),
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
_MANY_FIELDS = (
    share("prevalence", "share of texts that are reference positives", default=0.3),
    _icc_of_shares("ICC of the persons' shares of positives (default: icc)"),
    Field("classifiers", "the classifiers K", int, False, 6, minimum=2, maximum=8),
    share("recall", "recall of classifier 0", default=0.85),
    Field(
        "recall_step",
        "recall of classifier k less that of classifier k - 1 (0: all alike)",
        float,
        False,
        0.0,
        minimum=-0.2,
        maximum=0.2,
    ),
    share("specificity", "specificity of every classifier", default=0.95),
    Field(
        "agreement",
        "dependence of the classifiers' errors on a text (0: independent given the "
        "person, 1: the same text difficulty for all)",
        float,
        False,
        0.5,
        minimum=0,
        maximum=1,
    ),
    Field("metric", "the metric compared", str, False, choices=BINARY_METRIC),
)
_COVARIATE_FIELDS = (
    share("prevalence", "share of texts that are reference positives", default=0.3),
    Field(
        "intercept",
        "logit of recall of a person of average effect, not experienced, on a long text",
        float,
        False,
        0.5,
        minimum=-5,
        maximum=5,
    ),
    Field(
        "person_effect",
        "logit change of recall for an experienced person (the coefficient scored)",
        float,
        False,
        1.0,
        minimum=-5,
        maximum=5,
    ),
    Field(
        "text_effect", "logit change of recall on a short text", float, False, -0.5,
        minimum=-5, maximum=5,
    ),
    Field(
        "person_sd", "SD of the persons' logit effects", float, False, 0.5, minimum=0,
        maximum=5,
    ),
    share("sample_share", "share of the sample's persons who are experienced", default=0.8),
    share("corpus_share", "share of the corpus's persons who are experienced", default=0.3),
    share("text_share", "share of texts that are short", default=0.5),
    share("specificity", "specificity (the negatives do not enter recall)", default=0.9),
)  # fmt: skip
_CV_FIELDS = (
    share("prevalence", "share of texts that are reference positives", default=0.3),
    Field("features", "the texts' features d", int, False, 10, minimum=1, maximum=200),
    Field(
        "icc",
        "share of every feature's variance from the person effect (0: independent texts)",
        float,
        False,
        0.2,
        minimum=0,
        maximum=1,
        open_maximum=True,
    ),
    Field(
        "separation",
        "distance between the two classes' mean features (1.7: recall about 0.8)",
        float,
        False,
        1.7,
        minimum=0,
        open_minimum=True,
        maximum=10,
    ),
    Field("folds", "folds K of each partition", int, False, 5, minimum=3, maximum=20),
    Field("repeats", "partitions of the out-of-fold labels", int, False, 1, minimum=1, maximum=50),
    Field(
        "nested_repeats",
        "partitions of the nested cross-validation",
        int,
        False,
        20,
        minimum=1,
        maximum=100,
    ),
    Field("metric", "the metric cross-validated", str, False, choices=BINARY_METRIC),
)
#: The persons' shares of positives (kinds scored_nested and runs_nested; the ICC also
#: annotators_nested).
_POSITIVES_FIELDS = (
    share("prevalence", "share of texts that are reference positives", default=0.3),
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
    share(
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
    share("recall", "recall of a typical run (run effect 0)", default=0.85),
    share("specificity", "specificity of a typical run (run effect 0)", default=0.9),
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
    share("prevalence", "share of texts whose true class is positive", default=0.3),
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
    share("recall", "recall of the classifier against the true class", default=0.85),
    share("specificity", "specificity of the classifier against the true class", default=0.9),
    share(
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
    share(
        "coded",
        "probability that an annotator codes a text (below 1: missing codes; every text "
        "keeps at least one); with coding after_first, an annotator other than the first, "
        "a text the first coded negative",
        closed_high=True,
        default=1.0,
    ),
    Field(
        "coding",
        "which texts the annotators code",
        str,
        False,
        "random",
        choices=ANNOTATOR_CODING,
    ),
    share(
        "coded_positive",
        "with coding after_first: probability that an annotator other than the first codes "
        "a text the first coded positive",
        closed_high=True,
        default=1.0,
    ),
    Field("metric", "the binary metric scored", str, False, choices=BINARY_METRIC),
)
_RATE = share(
    "rate", "the persons' mean rate (text-weighted when sizes are not informative)", default=0.9
)
_CONFUSION_FIELDS = (
    share(
        "prevalence",
        "share of texts in the first (positive) class; the other classes share the rest",
        default=0.3,
    ),
    _icc_of_shares("ICC of the persons' class shares (default: icc)"),
    share(
        "recall",
        "share of first-class texts the classifier puts in the first class",
        default=0.9,
    ),
    share(
        "specificity",
        "share of every other class's texts the classifier labels correctly",
        default=0.9,
    ),
    Field("metric", "the metric scored", str, False, choices=METRIC),
)

_CORPUS_FIELDS = (
    Field(
        "corpus_seed",
        "seed of the corpus (the same corpus in every cell with its parameters)",
        int,
        False,
        20261202,
        minimum=0,
    ),
    Field("persons", "persons in the corpus", int, False, 240, minimum=2),
    Field(
        "texts_per_person",
        "mean texts per person of the corpus (a rounded lognormal, at least 1)",
        float,
        False,
        140.0,
        minimum=1,
    ),
    Field(
        "size_cv",
        "coefficient of variation of the texts per person",
        float,
        False,
        1.0,
        minimum=0,
        maximum=3,
    ),
    share("prevalence", "share of the corpus's texts that are reference positives", default=0.07),
    Field(
        "icc",
        "ICC of the persons' shares of positives",
        float,
        False,
        0.1,
        minimum=0,
        maximum=1,
        open_maximum=True,
    ),
    share("recall", "the classifier's recall for a typical person", default=0.8),
    share("specificity", "the classifier's specificity for a typical person", default=0.97),
    _latent_sd(
        "person_sd", "SD of a person's shift of recall and specificity on the logit scale", 0.5
    ),
    Field("metric", "the binary metric scored", str, False, "recall", choices=BINARY_METRIC),
    Field("sampled", "texts coded in each validation sample", int, False, 600, minimum=4),
    share(
        "positive_share",
        "share of the sample drawn from the classifier's predicted positives (the rest from "
        "its predicted negatives); each stratum capped at its corpus texts",
        default=0.5,
    ),
)

POPULATION_SCHEMA: Mapping[str, PopulationSchema] = {
    s.kind: s
    for s in (
        PopulationSchema(
            "bernoulli",
            {},
            field_map(_SIZE, share("p", "the true proportion")),
        ),
        PopulationSchema(
            "confusion",
            field_map(share("prevalence", "share of texts that are reference positives")),
            field_map(
                _SIZE,
                share("precision", "the true precision", closed_high=True),
                share("recall", "the true recall", closed_high=True),
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
            field_map(
                Field("persons", "persons of the finite population", int, minimum=2),
                Field("texts_per_person", "texts of each person", int, minimum=1),
                share("mean", "mean of the persons' rates (a Beta distribution)"),
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
            field_map(
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
            field_map(share("metric_value", "the metric value the half-widths are computed at")),
            field_map(
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
            "stratified_corpus", _optional(_CORPUS_FIELDS), _optional(_CORPUS_FIELDS[1:])
        ),
        PopulationSchema(
            "many_nested",
            _optional((*_PERSON_FIELDS[:3], _PERSON_FIELDS[4], *_PERSON_KEYS, *_MANY_FIELDS)),
            _optional((*_PERSON_FIELDS[:3], _PERSON_FIELDS[4], *_MANY_FIELDS)),
        ),
        PopulationSchema(
            "covariates_nested",
            _optional((*_PERSON_FIELDS[:3], *_PERSON_KEYS, *_COVARIATE_FIELDS)),
            _optional((*_PERSON_FIELDS[:3], *_COVARIATE_FIELDS)),
        ),
        PopulationSchema(
            "cv_nested",
            _optional((*_PERSON_FIELDS[:3], *_PERSON_KEYS, *_CV_FIELDS)),
            _optional((*_PERSON_FIELDS[:3], *_CV_FIELDS)),
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
