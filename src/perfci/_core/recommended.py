"""The policy's table: every recommended choice, as data the floors below the policy read.

:mod:`perfci.policy` decides which interval each metric and design gets, from the stress
atlas; the names it decides with (the recommended method, design, df adjustment,
scheme, AUC interval, thresholds) are declared here once, so that an interval family
one floor down (:func:`perfci.auc_ci`, :func:`perfci.clustered_proportion_ci`) defaults
to the same choice without importing the policy. :mod:`perfci.policy` re-exports every
name of this module.
"""

from __future__ import annotations

import math
from typing import Any

from . import validation

__all__ = [
    "AUC_COMPARISON_METHOD",
    "AUC_JACKKNIFE_MIN_TEXTS",
    "AUC_JACKKNIFE_BIAS_MIN_PERSONS",
    "AUC_JACKKNIFE_HULL",
    "AUC_CLUSTERED_VARIANCE_FLOOR",
    "AUC_METHOD",
    "AUC_NESTED_METHOD",
    "BOOTSTRAP_INTERVAL",
    "COMPARISON_METHOD",
    "GROUP_METHOD",
    "GROUP_PROPORTION_METHOD",
    "HIERARCHICAL_MIN_PERSONS",
    "HIERARCHICAL_MIN_TEXTS",
    "NESTED_COMPARISON_METHOD",
    "NESTED_DESIGN",
    "NESTED_DF_ADJUST",
    "NESTED_GROUP_METHOD",
    "N_RESAMPLES",
    "PAIRED_PROPORTIONS",
    "PROPORTION_METHOD",
    "PSEUDO_COUNT",
    "RECOMMENDED",
    "WEIGHTED_FALLBACK_METHOD",
    "MANY_ADJUSTMENT",
    "CV_METHOD",
    "WEIGHTED_METHOD",
    "WEIGHTED_PRIOR",
    "WEIGHTED_SIGNED_METHOD",
    "WORST_CASE_DESIGN",
    "EDGE_DESIGN",
    "NESTED_BOOTSTRAP_BY_METRIC",
    "EDGE_ICC",
    "EDGE_METHOD",
    "recommended_auc_method",
    "recommended_scheme",
]

#: The value of an option that leaves the choice to the policy.
RECOMMENDED = "recommended"

#: The interval of a metric on a weighted or stratified sample
#: (:func:`perfci.sample_design.weighted_ci`): the poststratified posterior's interval
#: with :data:`WEIGHTED_PRIOR` where texts are the units with equal weights within a
#: stratum; atlas-stratified shows the linearized intervals under-cover there when a
#: cell is rare in a heavily weighted stratum (few false negatives among the coded
#: predicted negatives: recall's logit interval down to 0.18), and Jeffreys' prior down
#: to 0.90, where the bounding prior covers at least 0.94 in every cell. Otherwise
#: (persons as units, weights unequal within a stratum) :data:`WEIGHTED_FALLBACK_METHOD`,
#: the logit interval with the design's df (R survey's ``svyciprop`` default), and
#: for kappa and MCC :data:`WEIGHTED_SIGNED_METHOD`.
WEIGHTED_METHOD = "poststratified"

#: How :func:`perfci.compare_many` and :func:`perfci.rank_ci` make many intervals hold
#: together: the max-t band (atlas-many: at least 0.936 for the differences from a
#: baseline, 0.932 for the rank sets). With every pair at 10-30 persons it fell to
#: 0.908-0.915 for recall, where Bonferroni's band (23% wider) kept 0.952.
MANY_ADJUSTMENT = "max_t"
#: The interval of a cross-validated metric from out-of-fold labels: the larger of the
#: persons' and the folds' cluster-robust variance (atlas-cv: at least 0.932 for F1 and
#: 0.981 for recall, where the naive interval fell to 0.903 and folds as clusters to 0.906
#: for F1 with 40 features).
CV_METHOD = "larger_variance"
#: The per-stratum prior of method "poststratified": Clopper-Pearson's construction
#: (:mod:`perfci.bayes.stratified`), each end from its own posterior.
WEIGHTED_PRIOR = "bounding"
WEIGHTED_FALLBACK_METHOD = "logit"
WEIGHTED_SIGNED_METHOD = "wald"

#: Mean relevant texts per person from which a paired nested comparison uses the
#: hierarchical paired bootstrap rather than Newcombe's or the cluster-robust interval
#: (see the module notes). A single metric's nested bootstrap is hierarchical always.
HIERARCHICAL_MIN_TEXTS = 10
#: Persons from which a paired nested comparison with many texts per person uses the
#: hierarchical paired bootstrap (the cluster-robust interval below).
HIERARCHICAL_MIN_PERSONS = 10

#: The recommended analytic interval of a proportion metric.
PROPORTION_METHOD = "agresti_coull"
#: The recommended design adjustment of an analytic interval on nested texts.
NESTED_DESIGN = "icc_weighted"
#: The recommended design where the data cannot show the variation between persons
#: (:func:`caveat_region`): the worst case, an ICC of 1.
WORST_CASE_DESIGN = "persons"
#: The recommended design of a nested proportion near 0 or 1 with many texts per person
#: (:func:`perfci.policy.edge_region`): score ends from the persons' second moment of
#: the minority outcomes, never narrower than an ICC of :data:`EDGE_ICC` would make them.
EDGE_DESIGN = "edge"
#: The base method of :data:`EDGE_DESIGN` (a score interval; the only one it takes).
EDGE_METHOD = "wilson"
#: The ICC that ``design="edge"`` assumes at least: near a bound the data of a few dozen
#: persons cannot show a between-person variation carried by a few persons (Beta person
#: rates with a tiny second parameter), and coverage there rests on this floor. In
#: simulations of atlas-icc's populations (``docs/choosing.md``) an ICC of 0.25 covered
#: 0.80 at 40 persons, a rate of 0.97 and an ICC of 0.5 (equal sizes), 0.3 covered 0.90
#: at 20 persons, a rate of 0.9 and an ICC of 0.5 (samples landing near 1), 0.4 covered
#: 0.94 there; in atlas-icc the recommended interval covers 0.971 or more at rates
#: 0.97-0.99 and 0.931 or more in every cell with 10 or more persons.
EDGE_ICC = 0.4
#: The recommended degrees-of-freedom adjustment on nested texts.
NESTED_DF_ADJUST = "dean_pagano"
#: The recommended bootstrap interval.
BOOTSTRAP_INTERVAL = "percentile"
#: The recommended bootstrap pseudo count lambda.
PSEUDO_COUNT = 1
#: Metrics whose recommended hierarchical bootstrap takes another interval and
#: pseudo count than :data:`BOOTSTRAP_INTERVAL` and :data:`PSEUDO_COUNT`. Macro-F1: the
#: lambda = 1 pseudo-person (one text in each of the k x k cells, a macro-F1 of 1/k) is
#: one of only m + 1 persons with few persons, and shifts the replicates below the
#: estimate (by 0.15 at 5 persons of 5 texts, 3 classes): in ``atlas-multiclass`` the
#: lambda = 1 percentile interval covered 0.874-0.898 at 5 persons (ICC 0.2), every miss
#: below, where BCa without pseudo counts covered 0.923-0.974 at 5 persons and at least
#: 0.939 at 10-40, 15-25% narrower. The k-class kappa likewise (``multiclass_kappa``):
#: the lambda = 1 percentile interval covered 0.911-0.950 at 5 persons and 0.941 or more
#: at 10-40; BCa without pseudo counts 0.925-0.974 at 5 persons and 0.937 or more at
#: 10-40 (atlas-multiclass, 2026-12-03).
NESTED_BOOTSTRAP_BY_METRIC: dict[str, dict[str, Any]] = {
    "macro_f1": {"interval": "bca", "pseudo_count": 0},
    "multiclass_kappa": {"interval": "bca", "pseudo_count": 0},
}
#: The default number of bootstrap resamples (declared once, in :mod:`perfci._core.validation`).
N_RESAMPLES = validation.N_RESAMPLES

#: The recommended interval of a paired difference on independent texts.
COMPARISON_METHOD = "bootstrap"
#: Paired proportions: metrics whose relevant texts depend on the reference only, so
#: that both classifiers are scored on the same texts (McNemar's setting).
PAIRED_PROPORTIONS = ("accuracy", "recall", "specificity")
#: The recommended interval of a paired difference on texts nested in persons.
NESTED_COMPARISON_METHOD = "cluster_robust"
#: The recommended interval of an ROC AUC of independent texts (``metric_ci(...,
#: "roc_auc")`` and the ``roc_auc`` row of :func:`perfci.report`; for texts nested in
#: persons see :data:`AUC_NESTED_METHOD`): DeLong's variance on the logit scale. In
#: ``validation/auc_study.py`` (binormal scores, 30% positives) the plain DeLong interval
#: covered 0.88 at 80 texts and an AUC of 0.95 and 0.80 at 80 texts and 0.98,
#: where the logit interval covered 0.94 and 0.93 (``validation/AUC_STUDY.md``); with
#: texts nested in persons the logit interval covered at least 0.93 wherever the plain
#: one did, and came closer to 0.95 in every cell where the plain one under-covered. Its
#: quantile is t on Welch and Satterthwaite's df (0.932 -> 0.951 at 40 texts, 12
#: positives and an AUC of 0.95; ``perfci.auc_ci``, Notes).
AUC_METHOD = "delong_logit"
#: The recommended interval of an ROC AUC of texts nested in persons (persons with more
#: than one text): the AUC of pairs of texts from different persons (the population's
#: pairs: two random texts of an infinite population never share a person), with the
#: leave-one-person-out jackknife on the logit scale and t on G* - 1 df. In the stress
#: atlas (``atlas-auc``) Obuchowski's clustered DeLong variance on the logit scale
#: covered only 0.88-0.93 at 20-40 persons of 20 texts when persons shift their scores
#: (60% of the score's variance), the intervals lying above the truth; the jackknife
#: covered 0.93-0.95 there (``validation/ATLAS.md``).
AUC_NESTED_METHOD = "jackknife"
#: Mean texts per person from which the jackknife of persons is recommended. With about
#: one text per person (a size CV of 1 around a mean of 1) the jackknife covered only
#: 0.88-0.93 at 10-20 persons in the atlas, where Obuchowski's clustered logit interval
#: covered 0.95-0.97; with 5 or more texts per person the jackknife covered and
#: Obuchowski's did not.
AUC_JACKKNIFE_MIN_TEXTS = 2.0
#: Persons from which the jackknife of persons centres its logit interval on the
#: jackknife's bias-corrected logit, G logit(AUC) - (G - 1) mean(logit AUC_(-i)). The
#: between-person AUC of few persons is biased upward where persons shift their scores:
#: in atlas-auc's design (20 persons x 20 texts, 60% of the score variance between
#: persons, AUC 0.95) the plain centre covered 0.925 (6.6% of intervals above the
#: truth), the corrected one 0.942; with 5 persons the correction overshoots (0.895 ->
#: 0.855 at 5 texts), so it starts at 10 persons.
AUC_JACKKNIFE_BIAS_MIN_PERSONS = 10
#: Below :data:`AUC_JACKKNIFE_BIAS_MIN_PERSONS` persons the jackknife of persons (plain
#: centre) is widened to hold the logit DeLong interval of the same data (their hull).
#: With 5 persons of 5 texts and an AUC of 0.95 the jackknife alone covered 0.90 (10% of
#: intervals above the truth) and the logit DeLong interval 0.99, while with 5 persons of
#: 20 texts and 60% of the score variance between persons the jackknife covered 0.95 and
#: the logit interval 0.91; the hull covered 0.965-0.999 over both, at about 1.1 times the
#: jackknife's width (``validation/ATLAS.md``, atlas-auc at 5 persons).
AUC_JACKKNIFE_HULL = True
#: Obuchowski's clustered variance of the logit DeLong interval is no smaller than
#: DeLong's unclustered one, as an ICC estimate is truncated at 0 (a design effect of at
#: least 1). With about one text per person (40 persons, a size CV of 1, AUC 0.95) the
#: clustered variance, an estimate over persons who mostly hold one text, was the smaller
#: in 60-70% of data sets and the interval covered 0.938-0.940 over 4,000 data sets;
#: floored, 0.946-0.951 at 1.04 times the width.
AUC_CLUSTERED_VARIANCE_FLOOR = True
#: The recommended paired comparison of two ROC AUCs: DeLong's paired test and interval
#: (R pROC's roc.test), clustered with groups.
AUC_COMPARISON_METHOD = "delong"

#: The recommended interval of a difference between subgroups of a proportion metric on
#: independent texts.
GROUP_PROPORTION_METHOD = "newcombe"
#: The recommended interval of a difference between subgroups of any other metric on
#: independent texts.
GROUP_METHOD = "bootstrap"
#: The recommended interval of a difference between subgroups on texts nested in persons.
NESTED_GROUP_METHOD = "cluster_robust"


def recommended_scheme(relevant_texts_per_person: float | None) -> str:
    """Return the recommended bootstrap scheme for a mean number of relevant texts per person.

    Parameters
    ----------
    relevant_texts_per_person : float or None
        Mean relevant texts per person with at least one (for F1: texts either rater
        codes positive), or None for texts that are not nested in persons.

    Returns
    -------
    str
        ``"iid"`` without persons, or with one relevant text per person (a simple random
        sample of texts); ``"hierarchical"`` with more than one. The threshold
        :data:`HIERARCHICAL_MIN_TEXTS` does not apply here (only to the paired
        comparisons of :func:`recommended_comparison`).

    Examples
    --------
    >>> from perfci import policy
    >>> [policy.recommended_scheme(b) for b in (None, 1, 3.5, 10, 30)]
    ['iid', 'iid', 'hierarchical', 'hierarchical', 'hierarchical']
    """
    if relevant_texts_per_person is None:
        return "iid"
    value = relevant_texts_per_person
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(
            f"`relevant_texts_per_person` must be a finite number or None; got {value!r}."
        )
    if value < 1:
        raise ValueError(f"`relevant_texts_per_person` must be at least 1; got {value!r}.")
    if value <= 1:
        return "iid"
    # The stress atlas (suites atlas-confusion and atlas-multiclass): the hierarchical
    # bootstrap with a pseudo count covered at every number of texts per person, the
    # cluster bootstrap under-covered (as low as 0.87 at 10 persons) even where the paper's
    # simpler designs had it cover.
    return "hierarchical"


def recommended_auc_method(texts_per_person: float | None) -> str:
    """Return the recommended interval method of an ROC AUC.

    Parameters
    ----------
    texts_per_person : float or None
        Mean texts per person with a text, or None for texts that are not nested in
        persons.

    Returns
    -------
    str
        :data:`AUC_NESTED_METHOD` (the jackknife of persons) from
        :data:`AUC_JACKKNIFE_MIN_TEXTS` texts per person, else :data:`AUC_METHOD` (the
        logit DeLong interval, with Obuchowski's clustered variance when persons are given
        and some have more than one text).

    Examples
    --------
    >>> from perfci import policy
    >>> [policy.recommended_auc_method(b) for b in (None, 1.0, 1.5, 2.0, 20.0)]
    ['delong_logit', 'delong_logit', 'delong_logit', 'jackknife', 'jackknife']
    """
    if texts_per_person is None or texts_per_person < AUC_JACKKNIFE_MIN_TEXTS:
        return AUC_METHOD
    return AUC_NESTED_METHOD


#: Relevant texts per run (or per annotator: the texts each one's metric is computed
#: from, averaged over them) below which the recommended new-run and new-annotator
#: interval (:func:`perfci.runs.runs_ci_counts`, :func:`perfci.annotator_ci`) is the
#: recommended interval of one classifier against one reference
#: (:func:`perfci.metric_ci_counts`) of the median run or annotator, not the crossed
#: variance components. In the stress atlas (``atlas-runs``, ``atlas-annotators``: 10
#: persons with one text each, prevalence 0.3, about 3-4 relevant texts per run) the
#: variance components covered the new-run F1 only 0.888-0.916 (half-widths 0.35-0.63)
#: and the new-annotator F1 0.878-0.912 (0.49-0.92), where the first run alone covered
#: 0.927-0.949 (0.36-0.37) and the median run (annotator) 0.974-0.990 (0.963-0.997), at
#: half-widths of 0.38-0.40 (0.38-0.45); every metric's tiny cell now covers at least
#: 0.959. In simulations of 10-30 texts with 3-10 runs (5-10 runs at 5 to 10 persons with
#: 2-4 texts) the variance components still under-covered the F1 (0.91-0.92) at 15
#: texts and 10 runs, about 5.5 relevant texts per run; with this threshold the
#: recommended interval covered at least 0.936 in every design simulated, the variance
#: components at 30 texts with 10 runs among the lowest (0.936-0.94).
CROSSED_TINY_RELEVANT = 8

__all__ += ["CROSSED_TINY_RELEVANT"]

#: Satterthwaite df per run (annotator) degree of freedom at most, in the new-run and
#: new-annotator intervals: df <= CROSSED_DF_PER_RUN (runs - 1). The run part's estimate
#: rests on runs - 1 df and is truncated at 0 where the runs vary no more than the noise
#: (40% of data sets with 2 annotators coding 60% of the texts, annotator SD 0.5), and
#: Satterthwaite's df then says units - 1 as if there were no run part. A part's share s
#: of the variance on runs - 1 df gives (runs - 1) / s^2 df: the cap does not rule out a
#: share below about 0.41. In atlas-annotators (40 persons x 10 texts, 2 annotators,
#: SD 0.5) it took the new-annotator interval from 0.919-0.929 to 0.943-0.956, at most
#: 16% wider (2 annotators without annotator effects) and 2% on average; every cell of
#: the suite now covers at least 0.936.
CROSSED_DF_PER_RUN = 6

__all__ += ["CROSSED_DF_PER_RUN"]

#: Persons below which a crossed interval of persons x runs (annotators) is flagged as
#: approximate (:class:`perfci.crossed.FewPersonsWarning`, and a note in its method). The
#: persons' part is a cluster-robust variance on persons - 1 df: in atlas-annotators-few
#: (30 texts a person, 3 and 10 annotators, person SD 1 on the probit scale) the
#: recommended new-annotator recall covered 0.919-0.974 at 5 and 7 persons (F1
#: 0.929-0.976), missing mostly above the truth, and 0.929-0.963 at 10 (F1
#: 0.935-0.957). The design-based interval of one coder stays wide enough there, but the
#: crossed variance is the only one with the annotators' part.
CROSSED_FEW_PERSONS = 10

__all__ += ["CROSSED_FEW_PERSONS"]
