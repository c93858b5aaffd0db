"""Paired comparison of two classifiers scored on the same texts.

Each text has a triple (reference, classifier A, classifier B), so a sample is eight
counts (per person when texts are nested). Three intervals of the difference
``metric(A) - metric(B)`` are built on these joint counts:

- the paired bootstrap resamples them and evaluates the metric of A and of B on the same
  resample (resampling the two classifiers separately would ignore that they were scored
  on the same texts and give intervals that are too wide);
- the cluster-robust (linearization) interval takes the variance of the difference from
  the persons' (or, without persons, the texts') influences on it, with a t quantile on
  m - 1 degrees of freedom;
- for paired proportions (accuracy, recall, specificity), Newcombe's paired score
  interval, on the effective sample size when texts are nested.

A test of equal performance goes with them: the exact McNemar test, Durkalski's clustered
McNemar test, or the cluster-robust t test. :func:`perfci.policy.recommended_comparison`
says which interval ``method="recommended"`` is.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ._core import registry
from ._core.deprecation import hide_parameters, positional_groups
from ._core.estimands import relevant_joint_cells
from ._core.joint import DISAGREE, JOINT_CELLS, TO_A, TO_B
from ._core.labels import check_aligned, has_columns
from ._core.resampling import check_resample_count, default_resamples
from ._core.validation import (
    N_RESAMPLES,
    UNSET,
    UndefinedMetricWarning,
    Unset,
    check_choice,
    check_confidence_level,
    check_label,
    check_positive_int,
    check_real_array,
    check_rng,
    given,
    or_default,
)
from .auc import RocAucComparison, compare_auc_named
from .bootstrap import (
    BOOTSTRAP_INTERVALS,
    MIN_PERSONS,
    SCHEMES,
    assemble,
    batch_shaped,
    check_pseudo_count,
    check_resample_size,
    warn_about,
)
from .counting import joint_confusion
from .metrics import (
    BINARY_METRICS,
    metric_values,
)
from .paired import (
    TESTS,
    Comparison,
    RobustInterval,
    newcombe_paired_interval,
    paired_bootstrap,
    proportion_tests,
    robust_interval,
    robust_t_test,
)
from .policy import (
    HIERARCHICAL_MIN_PERSONS,
    HIERARCHICAL_MIN_TEXTS,
    PAIRED_PROPORTIONS,
    RECOMMENDED,
    recommended_comparison,
    recommended_scheme,
)
from .subgroups import FEW_EFFECTIVE_PERSONS, few_effective_note
from .weighted_tables import design_given, weighted_comparison

if TYPE_CHECKING:
    from .runs import RunsComparison

__all__ = [
    "COMPARE_METHODS",
    "JOINT_CELLS",
    "Comparison",
    "compare",
    "compare_counts",
    "newcombe_paired_interval",  # from perfci.paired
]

#: Interval methods of :func:`compare` (:data:`perfci._core.registry.COMPARE_METHOD`).
COMPARE_METHODS: tuple[str, ...] = registry.COMPARE_METHOD.names

# Paired proportions: the relevant texts depend on the reference only, so A and B are
# scored on the very same texts (McNemar's setting).
_PAIRED_PROPORTIONS = PAIRED_PROPORTIONS

# The bootstrap's options left unset (UNSET; scheme None) take these (`n_resamples` the
# level's default_resamples); an option passed (even at this value) with another method is
# an error.
_BOOTSTRAP_DEFAULTS = {"interval": "percentile", "pseudo_count": 0}


def labelled_joint_cells(
    y_true: Any,
    pred_a: Any,
    pred_b: Any,
    groups: Any,
    positive: Any,
    n_resamples: int = N_RESAMPLES,
) -> tuple[np.ndarray, bool, tuple[int, ...]]:
    """:func:`perfci.counting.joint_confusion`, with the bootstrap's size checked."""
    cells, nested, batch_shape = joint_confusion(y_true, pred_a, pred_b, groups, positive)
    check_resample_size(n_resamples, math.prod(batch_shape))
    return cells, nested, batch_shape


def _compare_iv(
    metric: Any,
    method: Any,
    positive: Any,
    confidence_level: Any,
    scheme: Any,
    interval: Any,
    pseudo_count: Any,
    n_resamples: Any,
    rng: Any,
) -> tuple[np.ndarray, int, int, np.random.Generator]:
    """Check the options of :func:`compare` (the labels are checked where they are read)."""
    check_choice("metric", metric, BINARY_METRICS)
    registry.COMPARE_METHOD.check(method)
    check_label("positive", positive)
    if scheme is not None:
        check_choice("scheme", scheme, SCHEMES)
    check_choice("interval", or_default(interval, "percentile"), BOOTSTRAP_INTERVALS)
    level = check_confidence_level(confidence_level, scalar=True)
    lam = check_pseudo_count(or_default(pseudo_count, 0))
    if given(n_resamples):
        resamples = check_positive_int("n_resamples", n_resamples)
    else:
        resamples = default_resamples(float(level))
    if method == "bootstrap":  # else checked where the bootstrap is chosen, if it is
        check_resample_count(
            resamples,
            float(level),
            or_default(interval, "percentile"),
            defaulted=not given(n_resamples),
        )
    return level, lam, resamples, check_rng(rng)


def recommended_methods(cells: np.ndarray, metric: str, nested: bool) -> np.ndarray:
    """Return the recommended method of each data set of joint counts ``(K, [persons,] 8)``."""
    if not nested:
        return np.full(cells.shape[0], recommended_comparison(metric, False), dtype=object)
    is_relevant = relevant_joint_cells(metric)
    relevant = cells[..., is_relevant].sum(-1)  # (K, persons)
    persons = np.count_nonzero(relevant, -1)
    per_person = relevant.sum(-1) / np.maximum(1, persons)
    # the policy's nested choices, by its thresholds (a vectorized call of the rule)
    b = float(HIERARCHICAL_MIN_TEXTS)
    few_texts = recommended_comparison(metric, True, None)
    many = recommended_comparison(metric, True, b, HIERARCHICAL_MIN_PERSONS)
    many_few_persons = recommended_comparison(metric, True, b, HIERARCHICAL_MIN_PERSONS - 1)
    chosen = np.where(
        per_person >= HIERARCHICAL_MIN_TEXTS,
        np.where(persons >= HIERARCHICAL_MIN_PERSONS, many, many_few_persons),
        few_texts,
    ).astype(object)
    # a data set with fewer than two persons with a relevant text has no interval about
    # persons whatever the method (NaN with a warning): it does not take part in the choice
    chosen[persons < MIN_PERSONS] = None
    return chosen


def _choose_method(
    metric: str, method: str, nested: bool, options: dict[str, Any], cells: np.ndarray
) -> str:
    """Return the interval method :func:`compare` computes; refuse options it cannot use."""
    recommended = method == RECOMMENDED
    if recommended:
        choices = set(recommended_methods(cells, metric, nested)) - {None}
        if not choices:  # no data set has two persons: any method gives NaN
            choices = {recommended_comparison(metric, nested)}
        if len(choices) > 1:
            raise ValueError(
                "the recommended `method` differs between the data sets of this batch "
                f"({sorted(choices)}); pass `method`."
            )
        chosen = choices.pop()
    else:
        chosen = method
    how = f"{chosen!r} (the recommended method)" if recommended else repr(chosen)
    if chosen == "newcombe" and metric not in _PAIRED_PROPORTIONS:
        raise ValueError(
            f"`method` 'newcombe' is an interval for a difference of paired proportions "
            f"({', '.join(_PAIRED_PROPORTIONS)}); {metric} is not one. Use "
            "method='cluster_robust', 'bootstrap' or 'recommended'."
        )
    if chosen != "bootstrap":
        for name, value in options.items():
            if value is not None and given(value):
                raise ValueError(
                    f"`{name}` is an option of the paired bootstrap, but this comparison "
                    f"uses {how}; leave `{name}` unset or pass method='bootstrap'."
                )
    return chosen


def _label(chosen: str, nested: bool, scheme: Any, interval: str, pseudo_count: int) -> str:
    if chosen == "bootstrap":
        return (
            f"paired bootstrap (scheme={scheme}, interval={interval}, pseudo_count={pseudo_count})"
        )
    if chosen == "cluster_robust":
        if nested:
            return "cluster-robust linearization (persons as clusters, t with G* - 1 df)"
        return "cluster-robust linearization (each text a cluster, t with n - 1 df)"
    if nested:
        return (
            "Newcombe paired score interval on the effective sample size (cluster-robust "
            "design effect, Dean-Pagano df)"
        )
    return "Newcombe paired score interval"


def _listing(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _warn(message: str, stacklevel: int = 3) -> None:
    """Warn the caller of the public function (`stacklevel` counts from here)."""
    warnings.warn(message, UndefinedMetricWarning, stacklevel=stacklevel)


def compare(
    y_true: Any,
    pred_a: Any,
    pred_b: Any,
    metric: str,
    *former_groups: Any,
    groups: Any = None,
    method: str = RECOMMENDED,
    positive: Any = None,
    confidence_level: float = 0.95,
    scheme: str | None = None,
    interval: str | Unset = UNSET,
    pseudo_count: int | Unset = UNSET,
    n_resamples: int | Unset = UNSET,
    rng: Any = None,
    estimand: str | None = None,
    weights: Any = None,
    strata: Any = None,
    stratum_sizes: Any = None,
) -> Comparison | RunsComparison | RocAucComparison:
    r"""Paired difference of a metric between two classifiers scored on the same texts.

    Parameters
    ----------
    y_true : array_like
        Reference (human) labels, one per text, shape ``(n_texts,)``; or
        ``(*batch, n_texts)`` for many data sets at once (every field of the result
        then has the shape ``batch``).
    pred_a, pred_b : array_like
        The two classifiers' labels for the same texts, the shape of `y_true`. With
        one-dimensional `y_true`, either may be ``(n_texts, n_runs)``, a column per run of a
        stochastic classifier: the comparison is then :func:`perfci.runs.compare_runs`'s
        (a :class:`perfci.runs.RunsComparison`).
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`), or ``"roc_auc"``: then `pred_a`
        and `pred_b` are the two classifiers' scores, and the result is
        :func:`perfci.compare_auc`'s (a :class:`perfci.RocAucComparison` with the same
        core fields: ``difference``, ``low``, ``high``, ``p_value``, ``test``, ``method``).
    groups : array_like, optional
        Person ids, one per text (``(n_texts,)``, shared by every data set, or the
        shape of `y_true`): texts nested in persons, the persons sampled from a
        population of persons. A person with no text in a data set is not one of its
        persons.
    method : {"recommended", "bootstrap", "cluster_robust", "newcombe"}, default "recommended"
        The interval in `low`, `high`: the paired bootstrap; the cluster-robust
        (linearization) interval; Newcombe's paired score interval (accuracy, recall
        and specificity only; on the effective sample size with `groups`).
        ``"recommended"`` is :func:`perfci.policy.recommended_comparison`: the paired
        bootstrap on independent texts; with `groups`, the paired bootstrap from
        :data:`perfci.HIERARCHICAL_MIN_TEXTS` relevant texts per person on (with the
        hierarchical scheme), below it Newcombe's interval on the effective sample size
        for accuracy, recall and specificity and the cluster-robust interval for the
        other metrics. The other intervals' fields are computed whatever the method,
        except the bootstrap, which is computed only when it is the chosen method.
    positive : object, optional
        The positive label; default 1 for a binary code (0/1, False/True or their
        strings, recoded to 0/1 in every argument). The labels of the three arguments are
        read by one contract, as in :func:`perfci.confusion`.
    confidence_level : float, default 0.95
        Confidence level.
    scheme : {"iid", "cluster", "hierarchical"}, optional
        Bootstrap scheme. Default: :func:`perfci.policy.recommended_scheme` of the mean
        relevant texts per person: iid without groups (or with one relevant text per
        person), else hierarchical.
    interval : {"percentile", "bca"}, optional
        Bootstrap interval; percentile when unset.
    pseudo_count : int, optional
        Pseudo counts added to each of the eight joint cells (or held by a
        pseudo-person) of the bootstrap; 0 when unset.
    n_resamples : int, optional
        Bootstrap resamples; 2000 when unset (more above a 99% level), at least ``ceil(2 / (1 -
        confidence_level))`` (40 at 95%: each tail of the interval holds a resample). `scheme`,
        `interval`, `pseudo_count` and `n_resamples` are options of the bootstrap: passing one with
        another method is an error, also at its default value.
    rng : numpy.random.Generator, int or None
        Random generator or seed of the bootstrap; in a batch of K data sets, data set k
        uses ``perfci.batch_generators(rng, K)[k]`` (as :func:`perfci.bootstrap_ci`).
        The other methods draw nothing.

    weights, strata, stratum_sizes : optional
        The design of a weighted or stratified sample, as in :func:`perfci.metric_ci`:
        the difference is then design-based, the metric of the corpus (or of the
        population of persons, with `groups`) by A minus by B, with the t interval of
        its linearized variance and the design's df (R survey's ``svycontrast`` of two
        ``svyratio``; :mod:`perfci.weighted_tables`). The bootstrap options,
        `estimand` and a `method` other than "recommended" do not apply.
    estimand : {"new_run", "these_runs"}, optional
        With repeated runs, what the comparison is about (default ``"new_run"``, see
        :func:`perfci.runs.compare_runs`); only with a column per run.

    Returns
    -------
    Comparison, RunsComparison or RocAucComparison
        The difference A - B, the chosen interval (`low`, `high`, `method`), the
        cluster-robust interval (`robust_low`, `robust_high`, `robust_se`, `df`, and with
        `groups` the `effective_persons` its df are computed from), a test of
        equal performance (`p_value`, `test`), the share of texts on which A and B
        disagree, and for accuracy, recall and specificity Newcombe's paired interval,
        the discordant texts and (on independent texts) the exact McNemar p-value: a
        :class:`Comparison` for one run of each classifier against one reference; with a
        column per run in `pred_a` or `pred_b`, :func:`perfci.runs.compare_runs`'s
        :class:`perfci.runs.RunsComparison`; for ``"roc_auc"``,
        :func:`perfci.compare_auc`'s :class:`perfci.RocAucComparison`. The class follows
        the input only (its shape and `metric`), never an option.

    Raises
    ------
    ValueError
        For unknown names; labels of different shapes; a `positive` that is not one
        label; a level, pseudo count, number of resamples or `rng` of the wrong type or
        range; ``method="newcombe"`` for a metric that is not a paired proportion; a
        bootstrap option (`scheme`, or `interval`, `pseudo_count`, `n_resamples` other
        than their defaults) when the chosen method is not the bootstrap; for a single
        data set with `groups`, fewer than 2 persons with texts for a cluster or
        hierarchical bootstrap, the cluster-robust interval or the nested Newcombe
        interval (in a batch such a data set gets NaN and a warning); with `groups` and
        ``method="recommended"``, a batch whose data sets get different recommended
        methods (some from :data:`perfci.HIERARCHICAL_MIN_TEXTS` relevant texts per
        person, some below): pass `method`.

    Warns
    -----
    UndefinedMetricWarning
        Once per kind, naming the number of data sets in a batch: a difference that is
        undefined (either metric has a zero denominator); a cluster-robust standard error
        of 0 (the robust interval and the t test are NaN; the nested Newcombe interval
        uses a design effect of 1); fewer than 2 persons (texts) where the chosen method
        does not need them (the robust interval, the clustered tests and the nested
        Newcombe interval are NaN); with `groups`, fewer than
        :data:`perfci.subgroups.FEW_EFFECTIVE_PERSONS` effective persons
        (`effective_persons`), on which the interval is wide by necessity.

    Notes
    -----
    Each text is one of eight joint cells (reference, A, B) and person i has eight joint
    counts :math:`c_i`; the estimate is :math:`\hat d = f_A(C) - f_B(C)` on the pooled
    counts :math:`C = \sum_i c_i`, each metric of the four cells of its classifier.

    *Paired bootstrap*: the bootstrap draws the joint counts (per person for the cluster
    schemes) and each replicate is ``metric(A) - metric(B)`` of the same resample.
    Replicates where either metric is undefined are dropped. Identical classifiers give
    a difference of exactly 0; every replicate is then 0 and, with a robust standard
    error of 0, the interval is NaN with a warning (a zero-width interval would claim
    certainty), as the cluster-robust interval is.

    *Cluster-robust (linearization) interval* [4]_ [5]_: every metric is a function of
    the pooled counts that is homogeneous of degree 0, so the influence of person i is
    :math:`u_i = \nabla \hat d(C) \cdot c_i` (the gradient with respect to the eight
    cells, analytic: :func:`perfci.metrics.metric_gradient`), and
    :math:`\sum_i u_i = 0` by Euler's identity. With m persons with at least one text,

    .. math::

        \widehat{\mathrm{var}}(\hat d) = \frac{m}{m - 1} \sum_i u_i^2, \qquad
        \hat d \pm t_{m-1,\,(1+c)/2}\, \widehat{\mathrm{se}}(\hat d),

    the Taylor-linearization variance of a smooth function of cluster totals, clusters
    drawn with replacement (for one proportion, the ``design="cluster_robust"`` variance
    of :func:`perfci.clustered_proportion_ci`, which counts in m only the persons with a
    relevant text), and, for a difference of paired proportions, the cluster-robust
    variance of a regression of the per-text differences on a constant with the
    small-sample factor :math:`G/(G-1)` [6]_. Persons without a relevant text have
    :math:`u_i = 0` but count in m (domain estimation). Without groups each
    text is its own cluster: :math:`m = N` and :math:`\sum_i u_i^2 = \sum_j C_j u_j^2`
    over the eight cells. Where :math:`\widehat{\mathrm{se}} = 0` (no discordant text, or
    every person with the same difference; influences that cancel to rounding count as
    0) a zero-width interval would claim certainty the data do not give: the interval is
    NaN, with a warning.

    *Newcombe's interval* [2]_ (accuracy, recall, specificity, whose relevant texts are
    defined by the reference, so that A and B are scored on the same N texts): with
    `groups`, the paired table (both, only A, only B, neither) is scaled by
    :math:`n^*_{eff} / N` before the interval is computed, with

    .. math::

        \mathrm{DEFF} = \frac{\widehat{\mathrm{var}}(\hat d)}
        {\big((b + c) - (b - c)^2/N\big)/N^2}, \quad
        n_{eff} = \frac{N}{\mathrm{DEFF}}, \quad
        n^*_{eff} = n_{eff}\left(\frac{z}{t_{m-1}}\right)^2,

    b and c the texts only A and only B get right: the design effect over the
    multinomial variance of :math:`\hat d` on independent texts and the Dean-Pagano
    degrees-of-freedom factor [3]_, as :func:`perfci.clustered_proportion_ci` does for one
    proportion with ``design="cluster_robust"``. Where the cluster-robust variance is 0
    (then the design effect is 0/0, or 0 with an infinite n_eff) the design effect is 1,
    with a warning.

    *Tests of equal performance*: for accuracy, recall and specificity on independent
    texts, the exact McNemar test [1]_ (two-sided binomial test of the discordant texts at
    1/2; 1 without discordant texts); with `groups`, Durkalski's clustered McNemar test
    [7]_,

    .. math::

        X^2 = \frac{\big(\sum_i (b_i - c_i)\big)^2}{\sum_i (b_i - c_i)^2} \sim \chi^2_1,

    :math:`b_i, c_i` the relevant texts of person i only A and only B get right
    (:math:`X^2 = 0`, p = 1, where every person has :math:`b_i = c_i`, which includes no
    discordant texts); for every other metric the cluster-robust Wald test
    :math:`t = \hat d / \widehat{\mathrm{se}}` on m - 1 degrees of freedom (NaN where
    the standard error is 0). The clustered tests need at least 2 persons.

    *One person*: resampling persons from a single person draws that person every time,
    and a variance between persons needs two of them, so the interval would be about
    that person's texts and say nothing about the population of persons; it is refused,
    as in :func:`perfci.bootstrap_ci`.

    References
    ----------
    .. [1] McNemar, Q. (1947). Note on the sampling error of the difference between
       correlated proportions or percentages. Psychometrika 12(2), 153-157.
    .. [2] Newcombe, R. G. (1998). Improved confidence intervals for the difference
       between binomial proportions based on paired data. Statistics in Medicine 17(22),
       2635-2650.
    .. [3] Dean, N. and Pagano, M. (2015). Evaluating confidence interval methods for
       binomial proportions in clustered surveys. Journal of Survey Statistics and
       Methodology 3(4), 484-503.
    .. [4] Woodruff, R. S. (1971). A simple method for approximating the variance of a
       complicated estimate. Journal of the American Statistical Association 66(334),
       411-414.
    .. [5] Binder, D. A. (1983). On the variances of asymptotically normal estimators
       from complex surveys. International Statistical Review 51(3), 279-292.
    .. [6] Cameron, A. C. and Miller, D. L. (2015). A practitioner's guide to
       cluster-robust inference. Journal of Human Resources 50(2), 317-372.
    .. [7] Durkalski, V. L., Palesch, Y. Y., Lipsitz, S. R. and Rust, P. F. (2003).
       Analysis of clustered matched-pair data. Statistics in Medicine 22(15), 2417-2428.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> result = pc.compare(texts["human"], texts["model"], texts["model_b"], "recall", rng=1)
    >>> print(f"{result.difference:.3f} [{result.low:.3f}, {result.high:.3f}], "
    ...       f"McNemar p = {result.mcnemar_pvalue:.4f}, disagree on "
    ...       f"{100 * result.disagreement:.1f}% of texts")  # bootstrap ends: 2 decimals
    0.036 [0.01, 0.06], McNemar p = 0.0039, disagree on 2.1% of texts

    With the persons (about 6 relevant texts each), the recommended interval for recall
    is Newcombe's on the effective sample size, and the test Durkalski's:

    >>> nested = pc.compare(texts["human"], texts["model"], texts["model_b"], "recall",
    ...                     groups=texts["person"])
    >>> print(f"{nested.difference:.3f} [{nested.low:.3f}, {nested.high:.3f}]; "
    ...       f"{nested.test} p = {nested.p_value:.4f}")
    0.036 [0.004, 0.072]; Durkalski clustered McNemar p = 0.0201
    >>> print(f"cluster-robust [{nested.robust_low:.3f}, {nested.robust_high:.3f}] on "
    ...       f"{nested.df:.1f} df (the effective number of the {nested.persons} persons - 1)")
    cluster-robust [0.008, 0.064] on 27.2 df (the effective number of the 40 persons - 1)

    Two scores' ROC AUCs, with DeLong's paired test:

    >>> auc = pc.compare(texts["human"], texts["score"], texts["score_b"], "roc_auc")
    >>> print(f"{auc.difference:.4f} [{auc.low:.4f}, {auc.high:.4f}], p = {auc.p_value:.2g}")
    0.0021 [0.0012, 0.0030], p = 2.5e-06
    """  # noqa: E501
    check_aligned(
        y_true=y_true,
        pred_a=pred_a,
        pred_b=pred_b,
        groups=groups,
        weights=weights,
        strata=strata,
    )
    groups = positional_groups(former_groups, groups, "compare")
    registry.COMPARE_METRIC.check(metric)
    if design_given(weights, strata, stratum_sizes):
        return weighted_comparison(
            y_true,
            pred_a,
            pred_b,
            metric,
            groups=groups,
            weights=weights,
            strata=strata,
            stratum_sizes=stratum_sizes,
            method=method,
            positive=positive,
            confidence_level=confidence_level,
            unused={
                "scheme": scheme,
                "interval": interval,
                "pseudo_count": pseudo_count,
                "n_resamples": n_resamples,
                "estimand": estimand,
            },
        )
    if (
        metric != "roc_auc"
        and np.ndim(np.asarray(y_true, dtype=object)) == 1
        and (has_columns(pred_a) or has_columns(pred_b))
    ):
        from .runs import compare_runs

        defaults = {
            "method": method == RECOMMENDED,
            "scheme": scheme is None,
            "interval": not given(interval),
            "pseudo_count": not given(pseudo_count),
            "n_resamples": not given(n_resamples),
        }
        for name, unset in defaults.items():
            if not unset:
                raise ValueError(
                    f"`{name}` is an option of the comparisons of one run each; with repeated "
                    f"runs (a column per run) leave `{name}` unset."
                )
        return compare_runs(
            y_true,
            pred_a,
            pred_b,
            metric,
            groups=groups,
            estimand="new_run" if estimand is None else estimand,
            positive=positive,
            confidence_level=confidence_level,
        )
    if estimand is not None:
        raise ValueError(
            "`estimand` says what a comparison of repeated runs is about: it needs `pred_a` or "
            "`pred_b` with a column per run, (n_texts, n_runs)."
        )
    if metric == "roc_auc":
        if given(pseudo_count):
            raise ValueError(
                "`pseudo_count` does not apply to roc_auc (its bootstrap resamples the score "
                f"counts as they are); got {pseudo_count!r}."
            )
        return compare_auc_named(
            y_true,
            {"pred_a": pred_a, "pred_b": pred_b},
            groups,
            method=method,
            positive=positive,
            confidence_level=confidence_level,
            scheme=scheme,
            interval=interval,
            n_resamples=n_resamples,
            rng=rng,
            batch=None,
        )
    level, _, resamples, root = _compare_iv(
        metric,
        method,
        positive,
        confidence_level,
        scheme,
        interval,
        pseudo_count,
        n_resamples,
        rng,
    )
    cells, nested, batch_shape = labelled_joint_cells(
        y_true, pred_a, pred_b, groups, positive, resamples
    )
    return _compare_cells(
        cells,
        nested,
        metric,
        method,
        {
            "scheme": scheme,
            "interval": interval,
            "pseudo_count": pseudo_count,
            "n_resamples": n_resamples,
        },
        float(level),
        root,
        batch_shape,
    )


hide_parameters(compare, positional=True)


def compare_counts(
    joint: Any,
    metric: str,
    *,
    nested: bool = False,
    method: str = RECOMMENDED,
    confidence_level: float = 0.95,
    scheme: str | None = None,
    interval: str | Unset = UNSET,
    pseudo_count: int | Unset = UNSET,
    n_resamples: int | Unset = UNSET,
    rng: Any = None,
) -> Comparison:
    r"""Paired comparison from joint counts: what :func:`compare` computes after the labels.

    Parameters
    ----------
    joint : array_like of int
        Texts in each of the eight joint cells :data:`JOINT_CELLS` (cell ``4 t + 2 a +
        b`` for reference t and labels a of A and b of B, 1 = positive): shape
        ``(*batch, 8)``, or with ``nested=True`` ``(*batch, persons, 8)`` per person
        (persons with no text are not persons, so a ragged batch can be padded with them).
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`).
    nested : bool, default False
        Whether the second-to-last axis is persons.
    method, confidence_level, scheme, interval, pseudo_count, n_resamples, rng
        As in :func:`compare`.

    Returns
    -------
    Comparison
        As :func:`compare` (fields of shape ``batch``).

    Raises
    ------
    ValueError
        For counts that are not whole non-negative numbers with 8 cells last, and as
        :func:`compare`.

    Examples
    --------
    >>> import numpy as np
    >>> import perfci as pc
    >>> from perfci.comparison import compare_counts
    >>> texts = pc.load_example()
    >>> joint = np.zeros((texts["person"].nunique(), 8), dtype=int)
    >>> person = texts["person"].factorize()[0]
    >>> cell = 4 * texts["human"] + 2 * texts["model"] + texts["model_b"]
    >>> np.add.at(joint, (person, cell.to_numpy()), 1)
    >>> counted = compare_counts(joint, "recall", nested=True)
    >>> labelled = pc.compare(texts["human"], texts["model"], texts["model_b"], "recall",
    ...                       groups=texts["person"])
    >>> bool(np.isclose(counted.low, labelled.low)), counted.test
    (True, 'Durkalski clustered McNemar')
    """
    level, _, resamples, root = _compare_iv(
        metric,
        method,
        None,
        confidence_level,
        scheme,
        interval,
        pseudo_count,
        n_resamples,
        rng,
    )
    if not isinstance(nested, bool):
        raise ValueError(f"`nested` must be True or False; got {nested!r}.")
    cells = check_real_array("joint", joint)
    if cells.ndim < (2 if nested else 1) or cells.shape[-1] != 8:
        need = "(*batch, persons, 8)" if nested else "(*batch, 8)"
        raise ValueError(f"`joint` must have shape {need}; got {cells.shape}.")
    if np.any(cells < 0) or np.any(cells != np.round(cells)):
        raise ValueError("`joint` must hold whole non-negative numbers of texts.")
    batch_shape = cells.shape[: -2 if nested else -1]
    check_resample_size(resamples, math.prod(batch_shape))
    flat = cells.reshape(-1, *cells.shape[-2:]) if nested else cells.reshape(-1, 8)
    return _compare_cells(
        flat.astype(np.int64),
        nested,
        metric,
        method,
        {
            "scheme": scheme,
            "interval": interval,
            "pseudo_count": pseudo_count,
            "n_resamples": n_resamples,
        },
        float(level),
        root,
        batch_shape,
    )


def _compare_cells(
    cells: np.ndarray,
    nested: bool,
    metric: str,
    method: str,
    options: dict[str, Any],
    level: float,
    root: np.random.Generator,
    batch_shape: tuple[int, ...],
) -> Comparison:
    """Compare on joint counts ``(K, 8)`` or ``(K, persons, 8)``: everything after labels."""
    chosen = _choose_method(metric, method, nested, options, cells)
    scheme = options["scheme"]
    interval, pseudo_count = (
        or_default(options[name], default) for name, default in _BOOTSTRAP_DEFAULTS.items()
    )
    defaulted = not given(options["n_resamples"])
    n_resamples = default_resamples(float(level)) if defaulted else options["n_resamples"]
    pseudo_count = check_pseudo_count(pseudo_count)
    total = cells if not nested else cells.sum(1)  # (K, 8)
    single = not batch_shape
    sets = total.shape[0]
    clusters = np.count_nonzero(cells.sum(-1), -1) if nested else total.sum(-1)
    between = chosen == "cluster_robust" or (chosen == "newcombe" and nested)
    if single and between and clusters[0] < MIN_PERSONS:
        _refuse_one_cluster(chosen, nested, int(clusters[0]))

    boot = None
    if chosen == "bootstrap":
        check_resample_count(n_resamples, float(level), interval, defaulted=defaulted)
        scheme = _scheme(cells, nested, metric, scheme)
        parts, name = paired_bootstrap(
            cells,
            total,
            metric,
            scheme,
            interval,
            pseudo_count,
            n_resamples,
            float(level),
            root,
            single,
        )
        warn_about(parts, name, interval, n_resamples, single)
        boot = assemble(parts, name, scheme, interval, pseudo_count, float(level), batch_shape)
    est_a = metric_values(total @ TO_A, metric)
    est_b = metric_values(total @ TO_B, metric)
    diff = est_a - est_b
    undefined = np.isnan(diff)
    if chosen != "bootstrap" and undefined.any():  # the bootstrap warns itself
        what = "the observed counts" if single else f"{int(undefined.sum())} of {sets} data sets"
        _warn(f"{metric} difference is undefined on {what}; the estimate is NaN.")
    robust = robust_interval(cells, total, diff, metric, nested, level)
    if metric in _PAIRED_PROPORTIONS:
        tests = proportion_tests(cells, total, metric, nested, level, robust)
    else:
        tests = robust_t_test(diff, robust)
    # Policy: where the robust standard error is 0 and every paired resample gave the
    # same difference, the bootstrap interval is NaN too, as the cluster-robust one is.
    flat_zero = np.zeros(sets, dtype=bool)
    if boot is not None:
        flat_zero = robust.zero & ~undefined & (parts["low"] == parts["high"])
    _warn_no_variance(robust, tests.test, ~undefined, metric, nested, single, flat_zero)
    if nested:
        defined = ~undefined & ~robust.few & ~robust.zero
        _warn_few_effective(robust, chosen, defined, metric, single)

    def shaped(values: Any, kind: type = float) -> Any:
        return batch_shaped(values, batch_shape, kind)

    if boot is not None:
        low, high = boot.low, boot.high
        if flat_zero.any():  # the warning's NaN: certainty the data do not give
            low = shaped(np.where(flat_zero, np.nan, np.reshape(low, -1)))
            high = shaped(np.where(flat_zero, np.nan, np.reshape(high, -1)))
    elif chosen == "cluster_robust":
        low, high = shaped(robust.low), shaped(robust.high)
    else:
        low, high = shaped(tests.newcombe_low), shaped(tests.newcombe_high)
    with np.errstate(invalid="ignore", divide="ignore"):
        disagree = total[:, DISAGREE].sum(1) / total.sum(1)
    discordant = tests.discordant
    return Comparison(
        metric=metric,
        estimate_a=shaped(est_a),
        estimate_b=shaped(est_b),
        difference=shaped(diff),
        low=low,
        high=high,
        confidence_level=float(level),
        method=_label(chosen, nested, scheme, interval, pseudo_count),
        p_value=shaped(tests.p_value),
        test=tests.test,
        robust_low=shaped(robust.low),
        robust_high=shaped(robust.high),
        robust_se=shaped(robust.se),
        df=shaped(robust.df),
        disagreement=shaped(disagree),
        n_texts=shaped(total.sum(1), int),
        persons=shaped(clusters, int) if nested else None,
        newcombe_low=shaped(tests.newcombe_low),
        newcombe_high=shaped(tests.newcombe_high),
        design_effect=shaped(tests.design_effect),
        mcnemar_pvalue=shaped(tests.mcnemar),
        discordant=(
            (int(discordant[0, 0]), int(discordant[0, 1]))
            if single
            else discordant.reshape(*batch_shape, 2)
        ),
        bootstrap=boot,
        effective_persons=shaped(robust.effective) if nested else None,
    )


def _refuse_one_cluster(chosen: str, nested: bool, clusters: int) -> None:
    """Refuse a method that needs a variance between clusters, for a single data set."""
    if nested:
        raise ValueError(
            f"`groups` must give at least {MIN_PERSONS} persons with texts for "
            f"method {chosen!r}: a variance between persons needs two of them, and one "
            f"person says nothing about the population of persons; got {clusters}."
        )
    raise ValueError(
        f"`y_true` must hold at least {MIN_PERSONS} texts for method {chosen!r} (a "
        f"variance between texts needs two of them); got {clusters}."
    )


def _warn_no_variance(
    robust: RobustInterval,
    test: str,
    defined: np.ndarray,
    metric: str,
    nested: bool,
    single: bool,
    bootstrap_zero: np.ndarray,
) -> None:
    """Warn of the data sets with fewer than 2 clusters, or a robust standard error of 0.

    `bootstrap_zero` marks the data sets whose paired bootstrap interval is NaN as well.
    """
    few, zero = robust.few, robust.zero
    sets = few.shape[0]
    unit = "persons with texts" if nested else "texts"
    paired_nested = metric in _PAIRED_PROPORTIONS and nested
    if (few & defined).any():
        what = "this data set" if single else f"{int((few & defined).sum())} of {sets} data sets"
        few_parts = ["the cluster-robust interval"]
        if test != TESTS["mcnemar"]:
            few_parts.append(f"the {test} test")
        if paired_nested:
            few_parts.append("the Newcombe interval")
        _warn(
            f"{_listing(few_parts)} of the {metric} difference "
            f"{'are' if len(few_parts) > 1 else 'is'} undefined for {what}: "
            f"fewer than {MIN_PERSONS} {unit} (a variance between clusters needs two of "
            "them); returning NaN.",
            4,
        )
    if (zero & defined).any():
        what = "" if single else f" for {int((zero & defined).sum())} of {sets} data sets"
        zero_parts = ["the cluster-robust interval"]
        if bootstrap_zero.any():
            zero_parts.append("the paired bootstrap interval")
        if test == TESTS["robust_t"]:
            zero_parts.append("the t test")
        same = "person" if nested else "relevant text"
        _warn(
            f"{_listing(zero_parts)} of the {metric} difference "
            f"{'are' if len(zero_parts) > 1 else 'is'} undefined{what}: the standard error "
            f"is zero (no discordant texts, or every {same} with the same difference), and "
            "a zero-width interval would claim certainty the data do not give; returning "
            "NaN"
            + (
                "; the Newcombe interval uses a design effect of 1 there." if paired_nested else "."
            ),
            4,
        )


def _warn_few_effective(
    robust: RobustInterval, chosen: str, defined: np.ndarray, metric: str, single: bool
) -> None:
    """Warn of the data sets whose persons count as fewer than FEW_EFFECTIVE_PERSONS."""
    with np.errstate(invalid="ignore"):
        few = defined & (robust.effective < FEW_EFFECTIVE_PERSONS)
    if not few.any():
        return
    if single:
        # the bootstrap's interval has no df: its width is not the t quantile's
        df = np.nan if chosen == "bootstrap" else float(robust.df[0])
        what = few_effective_note([("the comparison", float(robust.effective[0]))], df)
    else:
        what = (
            f"{int(few.sum())} of {few.size} data sets rest on fewer than "
            f"{FEW_EFFECTIVE_PERSONS:g} effective persons: their intervals are wide by necessity"
        )
    _warn(f"the {metric} difference: {what}.", 4)


def _scheme(cells: np.ndarray, nested: bool, metric: str, scheme: str | None) -> str:
    """Return the paired bootstrap's scheme: the one given, else the policy's for the data."""
    # A text is relevant if it is for either classifier (for precision: either calls it
    # positive), so that swapping A and B cannot change the scheme.
    is_relevant = relevant_joint_cells(metric)
    if scheme is None:
        if not nested:
            scheme = "iid"
        else:
            relevant = cells[..., is_relevant].sum(-1)  # (K, persons)
            per_person = relevant.sum(-1) / np.maximum(1, np.count_nonzero(relevant, -1))
            # the one policy; a data set with no relevant text counts as one per person
            chosen = {recommended_scheme(max(1.0, float(v))) for v in per_person}
            if len(chosen) > 1:
                raise ValueError(
                    "the recommended `scheme` differs between the data sets of this batch "
                    f"({sorted(chosen)}); pass `scheme`."
                )
            scheme = chosen.pop()
    if scheme != "iid" and not nested:
        raise ValueError(f"`scheme` {scheme!r} needs `groups` (person ids).")
    return scheme
