"""The recommended choices: which interval for which metric and design.

Everything ``method="recommended"`` means lives here, so that :func:`perfci.metric_ci`,
:func:`perfci.report`, :func:`perfci.compare` and the harness's ``recommended`` family
(:func:`recommend_for_counts`) recommend the same thing. The choices come from the
stress atlas (``validation/ATLAS.md``: unequal and informative cluster sizes, ICC 0 to
0.5, rates 0.5 to 0.99, rare constructs, per-person confusion matrices, paired designs),
which scores every shipped method; where they depart from the paper's section 6 it is
said here and the atlas rows are cited in ``docs/choosing.md``:

- proportion metrics (accuracy, recall, precision, specificity, npv): Agresti-Coull on
  independent texts (the paper's); on nested texts Agresti-Coull on the effective
  sample size with the ANOVA ICC, the **size-weighted** cluster size
  B_w = sum n_i^2 / N (``design="icc_weighted"``) and the Dean-Pagano
  degrees-of-freedom adjustment. The paper's B = N / m (``"icc"``) is the same for equal
  sizes but under-covers when persons contribute unequal numbers of texts (atlas-sizes:
  as low as 0.82 at 20-40 persons with a size CV of 1.5), where B_w covers; the
  cluster-robust design under-covers there too.
- every other metric (F1, kappa, MCC, PNA, macro averages): the pseudo-count
  (lambda = 1) percentile bootstrap, iid on independent texts (the paper's) and
  **hierarchical** on nested texts whatever the number of texts per person. The paper
  preferred the cluster bootstrap with about 3 texts per person; in the atlas's
  per-person confusion designs (rare positives, unequal sizes) the cluster bootstrap
  under-covered (as low as 0.87 at 10 persons) where the hierarchical one covered.
- paired differences (:func:`recommended_comparison`, not in the paper): the paired
  percentile bootstrap on independent texts; on nested texts the hierarchical paired
  bootstrap from :data:`HIERARCHICAL_MIN_TEXTS` relevant texts per person and
  :data:`HIERARCHICAL_MIN_PERSONS` persons (the cluster-robust interval with fewer
  persons), and below those texts Newcombe's interval on the effective sample size for
  accuracy, recall and specificity, the cluster-robust interval (t on the effective
  number of persons - 1 df) for the other metrics. The cluster
  percentile bootstrap of a difference covered only 0.35-0.94 with 5-20 persons.
- differences between subgroups (:func:`recommended_group_difference`, not in the paper):
  Newcombe's hybrid score interval for proportion metrics on independent texts, the
  difference of two independent pseudo-count percentile bootstraps for the other metrics,
  and on nested texts the cluster-robust interval with t on the smaller effective number
  of persons - 1 df (``docs/subgroups.md`` has the simulation behind the df).

Where the atlas found no method that covers (many texts per person with a high ICC, or
a rate near 0 or 1, and fewer than :data:`CAVEAT_PERSONS` persons),
:func:`coverage_caveat` gives the note :func:`perfci.report` prints.

The policy never overrides an option the caller passed. An option is *passed* when it is
not ``"recommended"`` (the default of every option of :func:`perfci.metric_ci`); a passed
option is used as given, and a passed option that the chosen method cannot use (a bootstrap
``scheme`` for an analytic interval, a ``design`` for the bootstrap, a nested-data option
without ``groups``) is an error, not silently dropped.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._core import registry
from ._core.recommended import (
    AUC_CLUSTERED_VARIANCE_FLOOR as AUC_CLUSTERED_VARIANCE_FLOOR,
)

# the policy's table, declared one floor down and re-exported here
from ._core.recommended import (
    AUC_COMPARISON_METHOD as AUC_COMPARISON_METHOD,
)
from ._core.recommended import (
    AUC_JACKKNIFE_BIAS_MIN_PERSONS as AUC_JACKKNIFE_BIAS_MIN_PERSONS,
)
from ._core.recommended import (
    AUC_JACKKNIFE_HULL as AUC_JACKKNIFE_HULL,
)
from ._core.recommended import (
    AUC_JACKKNIFE_MIN_TEXTS as AUC_JACKKNIFE_MIN_TEXTS,
)
from ._core.recommended import (
    AUC_METHOD as AUC_METHOD,
)
from ._core.recommended import (
    AUC_NESTED_METHOD as AUC_NESTED_METHOD,
)
from ._core.recommended import (
    BOOTSTRAP_INTERVAL as BOOTSTRAP_INTERVAL,
)
from ._core.recommended import (
    COMPARISON_METHOD as COMPARISON_METHOD,
)
from ._core.recommended import (
    CROSSED_DF_PER_RUN as CROSSED_DF_PER_RUN,
)
from ._core.recommended import (
    CROSSED_FEW_PERSONS as CROSSED_FEW_PERSONS,
)
from ._core.recommended import (
    CROSSED_TINY_RELEVANT as CROSSED_TINY_RELEVANT,
)
from ._core.recommended import (
    CV_METHOD as CV_METHOD,
)
from ._core.recommended import (
    EDGE_DESIGN as EDGE_DESIGN,
)
from ._core.recommended import (
    EDGE_ICC as EDGE_ICC,
)
from ._core.recommended import (
    EDGE_METHOD as EDGE_METHOD,
)
from ._core.recommended import (
    GROUP_METHOD as GROUP_METHOD,
)
from ._core.recommended import (
    GROUP_PROPORTION_METHOD as GROUP_PROPORTION_METHOD,
)
from ._core.recommended import (
    HIERARCHICAL_MIN_PERSONS as HIERARCHICAL_MIN_PERSONS,
)
from ._core.recommended import (
    HIERARCHICAL_MIN_TEXTS as HIERARCHICAL_MIN_TEXTS,
)
from ._core.recommended import (
    MANY_ADJUSTMENT as MANY_ADJUSTMENT,
)
from ._core.recommended import (
    N_RESAMPLES as N_RESAMPLES,
)
from ._core.recommended import (
    NESTED_BOOTSTRAP_BY_METRIC as NESTED_BOOTSTRAP_BY_METRIC,
)
from ._core.recommended import (
    NESTED_COMPARISON_METHOD as NESTED_COMPARISON_METHOD,
)
from ._core.recommended import (
    NESTED_DESIGN as NESTED_DESIGN,
)
from ._core.recommended import (
    NESTED_DF_ADJUST as NESTED_DF_ADJUST,
)
from ._core.recommended import (
    NESTED_GROUP_METHOD as NESTED_GROUP_METHOD,
)
from ._core.recommended import (
    PAIRED_PROPORTIONS as PAIRED_PROPORTIONS,
)
from ._core.recommended import (
    PROPORTION_METHOD as PROPORTION_METHOD,
)
from ._core.recommended import (
    PSEUDO_COUNT as PSEUDO_COUNT,
)
from ._core.recommended import (
    RECOMMENDED as RECOMMENDED,
)
from ._core.recommended import (
    WEIGHTED_FALLBACK_METHOD as WEIGHTED_FALLBACK_METHOD,
)
from ._core.recommended import (
    WEIGHTED_METHOD as WEIGHTED_METHOD,
)
from ._core.recommended import (
    WEIGHTED_PRIOR as WEIGHTED_PRIOR,
)
from ._core.recommended import (
    WEIGHTED_SIGNED_METHOD as WEIGHTED_SIGNED_METHOD,
)
from ._core.recommended import (
    WORST_CASE_DESIGN as WORST_CASE_DESIGN,
)
from ._core.recommended import (
    recommended_auc_method as recommended_auc_method,
)
from ._core.recommended import (
    recommended_scheme as recommended_scheme,
)
from ._core.resampling import default_resamples

__all__ = [
    "HIERARCHICAL_MIN_TEXTS",
    "RECOMMENDED",
    "IntervalChoice",
    "check_options",
    "choose_interval",
    "recommended_comparison",
    "recommended_group_difference",
    "recommended_method",
    "recommended_scheme",
    "recommended_auc_method",
    "recommend_for_counts",
    "caveat_region",
    "coverage_caveat",
    "edge_region",
]

_ANALYTIC_OPTIONS = ("design", "df_adjust")
_BOOTSTRAP_OPTIONS = ("scheme", "interval", "pseudo_count", "n_resamples")


def recommended_method(metric: str) -> str:
    """Return the recommended method of a metric: an analytic method or ``"bootstrap"``.

    Parameters
    ----------
    metric : str
        Any name in :data:`perfci.METRICS`.

    Examples
    --------
    >>> from perfci import policy
    >>> policy.recommended_method("recall"), policy.recommended_method("f1")
    ('agresti_coull', 'bootstrap')
    """
    registry.METRIC.check(metric)
    return PROPORTION_METHOD if metric in registry.PROPORTION_METRIC else "bootstrap"


def recommended_comparison(
    metric: str,
    nested: bool,
    relevant_texts_per_person: float | None = None,
    persons: int | None = None,
) -> str:
    """Return the recommended interval method of a paired difference between two classifiers.

    The one home of what :func:`perfci.compare` does with ``method="recommended"``,
    chosen from the stress atlas (``validation/ATLAS.md``, suite ``atlas-paired``).

    Parameters
    ----------
    metric : str
        Any name in :data:`perfci.BINARY_METRICS`.
    nested : bool
        Whether the texts are nested in persons (``groups`` given).
    relevant_texts_per_person : float, optional
        Mean relevant texts per person with one (nested texts; a text is relevant if it
        is for either classifier). None counts as few.
    persons : int, optional
        Persons with a relevant text (nested texts). None counts as many.

    Returns
    -------
    str
        On independent texts :data:`COMPARISON_METHOD` (``"bootstrap"``, the paired
        percentile bootstrap). On nested texts, from :data:`HIERARCHICAL_MIN_TEXTS`
        relevant texts per person on, ``"bootstrap"`` (whose recommended scheme is then
        the hierarchical one) with at least :data:`HIERARCHICAL_MIN_PERSONS` persons
        and :data:`NESTED_COMPARISON_METHOD` (``"cluster_robust"``) with fewer; below,
        ``"newcombe"`` (Newcombe's interval on the effective sample size) for accuracy,
        recall and specificity and ``"cluster_robust"`` for the other metrics.

    Notes
    -----
    In the atlas (suite ``atlas-paired``) the cluster percentile bootstrap of a
    difference covered 0.35-0.94 with 5-20 persons; the hierarchical one covered from
    about 10 relevant texts per person and 10 persons, but under-covered with fewer
    texts, and with 5 persons and a high ICC (0.83-0.89); the cluster-robust interval
    (t on the effective number of persons - 1) covered there and with few texts,
    except for recall with unequal sizes and a high ICC at 10-20 persons and 30 texts
    (0.90), where Newcombe's effective-size interval of paired proportions and the
    hierarchical bootstrap did better.

    Examples
    --------
    >>> from perfci import policy
    >>> policy.recommended_comparison("recall", False)
    'bootstrap'
    >>> policy.recommended_comparison("recall", True, 3.0), policy.recommended_comparison("f1", True, 3.0)
    ('newcombe', 'cluster_robust')
    >>> policy.recommended_comparison("f1", True, 25.0)
    'bootstrap'
    >>> policy.recommended_comparison("f1", True, 25.0, persons=6)
    'cluster_robust'
    """  # noqa: E501
    registry.BINARY_METRIC.check(metric)
    if not isinstance(nested, bool):
        raise ValueError(f"`nested` must be True or False; got {nested!r}.")
    if not nested:
        return COMPARISON_METHOD
    if relevant_texts_per_person is not None and (
        relevant_texts_per_person >= HIERARCHICAL_MIN_TEXTS
    ):
        # the hierarchical bootstrap of a difference under-covered with 5 persons and a
        # high ICC (atlas-paired: 0.83-0.89), where the cluster-robust interval covered
        few = persons is not None and persons < HIERARCHICAL_MIN_PERSONS
        return NESTED_COMPARISON_METHOD if few else "bootstrap"
    return "newcombe" if metric in PAIRED_PROPORTIONS else NESTED_COMPARISON_METHOD


def recommended_group_difference(metric: str, nested: bool) -> str:
    """Return the recommended interval method of a difference between two subgroups.

    The one home of what :func:`perfci.compare_groups` does with ``method="recommended"``.

    Parameters
    ----------
    metric : str
        Any name in :data:`perfci.BINARY_METRICS`.
    nested : bool
        Whether the texts are nested in persons (``groups`` given).

    Returns
    -------
    str
        On independent texts :data:`GROUP_PROPORTION_METHOD` (``"newcombe"``, Newcombe's
        hybrid score interval of two independent proportions) for accuracy, recall,
        precision, specificity and npv, and :data:`GROUP_METHOD` (``"bootstrap"``, the
        difference of two independent pseudo-count percentile bootstraps) for the other
        metrics; on nested texts :data:`NESTED_GROUP_METHOD` (``"cluster_robust"``).

    Notes
    -----
    Newcombe's interval is the square-and-add combination of two Wilson intervals, which
    keeps the Wilson interval's coverage near 0 and 1 where a Wald interval of the
    difference fails (Newcombe 1998). On nested texts, in a simulation of two subgroups
    of 20 persons with 10 texts each and an ICC of 0.2, Newcombe's interval (which treats
    the texts as independent) covered 0.76 and the cluster-robust one 0.96
    (``tests/test_subgroups.py``); ``docs/subgroups.md`` has the simulation that chose its
    degrees of freedom.

    Examples
    --------
    >>> from perfci import policy
    >>> policy.recommended_group_difference("recall", False)
    'newcombe'
    >>> policy.recommended_group_difference("f1", False)
    'bootstrap'
    >>> policy.recommended_group_difference("recall", True)
    'cluster_robust'
    """
    registry.BINARY_METRIC.check(metric)
    if not isinstance(nested, bool):
        raise ValueError(f"`nested` must be True or False; got {nested!r}.")
    if nested:
        return NESTED_GROUP_METHOD
    return GROUP_PROPORTION_METHOD if metric in registry.PROPORTION_METRIC else GROUP_METHOD


@dataclass(frozen=True)
class IntervalChoice:
    """A fully specified interval method: what the policy chose, or the caller passed.

    Attributes
    ----------
    method : str
        An analytic method or ``"bootstrap"``.
    design, df_adjust : str or None
        The nested-data adjustment of an analytic interval (None where it does not apply
        or none is wanted).
    scheme, interval : str or None
        The bootstrap scheme and interval (None for an analytic method).
    pseudo_count : int or None
        The bootstrap pseudo count as given (None for an analytic method).
    n_resamples : int, str or None
        The bootstrap resamples (None for an analytic method).
    """

    method: str
    design: str | None = None
    df_adjust: str | None = None
    scheme: str | None = None
    interval: str | None = None
    pseudo_count: Any = None
    n_resamples: int | str | None = None

    @property
    def label(self) -> str:
        """The method with its options, as results report it."""
        if self.method == "bootstrap":
            return (
                f"bootstrap (scheme={self.scheme}, interval={self.interval}, "
                f"pseudo_count={self.pseudo_count})"
            )
        if self.design is not None:
            return f"{self.method} (design={self.design}, df_adjust={self.df_adjust})"
        return self.method


def _given(value: Any) -> bool:
    """Whether an option was passed (anything but "recommended")."""
    return not (isinstance(value, str) and value == RECOMMENDED)


_LEAVE_IT = "leave the choice to the policy"
#: The values each option of :func:`perfci.metric_ci` accepts ("recommended" included).
OPTION_CHOICES: dict[str, registry.Choices] = {
    "method": registry.METRIC_CI_METHOD,
    # None: no design adjustment (nested texts treated as independent)
    "design": registry.DESIGN.extended([(RECOMMENDED, _LEAVE_IT)], allow_none=True),
    "df_adjust": registry.DF_ADJUST.extended([(RECOMMENDED, _LEAVE_IT)]),
    # None is the older spelling of "recommended" for the scheme
    "scheme": registry.BOOTSTRAP_SCHEME.extended([(RECOMMENDED, _LEAVE_IT)], allow_none=True),
    "interval": registry.BOOTSTRAP_INTERVAL.extended([(RECOMMENDED, _LEAVE_IT)]),
}


def check_options(**options: Any) -> None:
    """Raise a `ValueError` naming the first option whose value is not allowed.

    Parameters
    ----------
    **options
        Any of ``method``, ``design``, ``df_adjust``, ``scheme``, ``interval`` and
        ``pseudo_count``, as :func:`perfci.metric_ci` takes them.
    """
    for name, value in options.items():
        if name == "pseudo_count":
            # whole numbers are checked where the pseudo count is used (bootstrap_ci)
            if _given(value) and (
                isinstance(value, bool) or not isinstance(value, numbers.Real) or value < 0
            ):
                raise ValueError(
                    "`pseudo_count` must be a non-negative integer or 'recommended'; "
                    f"got {value!r}."
                )
        else:
            OPTION_CHOICES[name].check(value)


def choose_interval(
    metric: str,
    *,
    groups: bool = False,
    relevant_texts_per_person: float | None = None,
    method: str = RECOMMENDED,
    design: str | None = RECOMMENDED,
    df_adjust: str | None = RECOMMENDED,
    scheme: str | None = RECOMMENDED,
    interval: str = RECOMMENDED,
    pseudo_count: int | str = RECOMMENDED,
    n_resamples: int | str = RECOMMENDED,
    confidence_level: float | None = None,
    strict: bool = True,
    worst_case: bool = False,
    edge: bool = False,
) -> IntervalChoice:
    """Choose the interval method of a metric, keeping every option the caller passed.

    Parameters
    ----------
    metric : str
        Any name in :data:`perfci.METRICS`.
    groups : bool, default False
        Whether the texts come with person ids (nested texts).
    relevant_texts_per_person : float, optional
        Mean relevant texts per contributing person (nested texts), for the scheme;
        None for independent texts.
    method, design, df_adjust, scheme, interval, pseudo_count, n_resamples
        As in :func:`perfci.metric_ci`; ``"recommended"`` leaves the choice to the policy
        (``scheme=None`` means the same).
    confidence_level : float, optional
        The interval's level, for the resamples of a bootstrap left at "recommended"
        (:func:`perfci._core.resampling.default_resamples`: 2,000 up to 99%, more above);
        None: 2,000.
    strict : bool, default True
        Raise for a passed option the chosen method cannot use. :func:`perfci.report`
        passes False: its options apply to the rows whose method uses them.
    worst_case : bool, default False
        Whether the data lie in a region where the atlas found no interval with an
        estimated ICC that covers (:func:`caveat_region`): the recommended design of a
        nested proportion is then ``"persons"`` (ICC 1) instead of ``"icc_weighted"``.
    edge : bool, default False
        Whether a nested proportion lies near 0 or 1 with many texts per person
        (:func:`edge_region`): with the recommended method its recommended design is
        then :data:`EDGE_DESIGN` (``"edge"``, with its method :data:`EDGE_METHOD`);
        it takes precedence over `worst_case`.

    Returns
    -------
    IntervalChoice
        The method and the options it uses; the options it does not use are None.

    Raises
    ------
    ValueError
        For unknown names; an analytic method for a metric that is not a proportion; a
        passed option the chosen method cannot use (with ``strict``); a cluster scheme
        without groups.

    Examples
    --------
    >>> from perfci import policy
    >>> policy.choose_interval("f1", groups=True, relevant_texts_per_person=4).label
    'bootstrap (scheme=hierarchical, interval=percentile, pseudo_count=1)'
    >>> policy.choose_interval("f1", groups=True, relevant_texts_per_person=4,
    ...                        scheme="cluster").scheme
    'cluster'
    >>> policy.choose_interval("recall", groups=True).label
    'agresti_coull (design=icc_weighted, df_adjust=dean_pagano)'
    >>> policy.choose_interval("recall", scheme="cluster")
    Traceback (most recent call last):
    ...
    ValueError: `scheme` applies to bootstrap intervals, but recall uses 'agresti_coull' (the recommended method), an analytic interval; leave `scheme` unset or pass method='bootstrap'.
    """  # noqa: E501
    registry.METRIC.check(metric)
    check_options(
        method=method,
        design=design,
        df_adjust=df_adjust,
        scheme=scheme,
        interval=interval,
        pseudo_count=pseudo_count,
    )
    recommended = method == RECOMMENDED
    chosen = recommended_method(metric) if recommended else method
    # near a bound the edge design and its method, where the design is left to the policy
    # and the method too (for a proportion) or is the edge design's own
    edge = bool(edge and groups and not _given(design)) and (
        chosen == EDGE_METHOD or (recommended and chosen in registry.ANALYTIC_METHOD)
    )
    if edge:
        chosen = EDGE_METHOD
    how = f"{chosen!r} (the recommended method)" if recommended else f"{chosen!r}"
    # None is a choice for design and df_adjust (no adjustment), not for scheme.
    given = {
        "design": design,
        "df_adjust": df_adjust,
        "scheme": RECOMMENDED if scheme is None else scheme,
        "interval": interval,
        "pseudo_count": pseudo_count,
        "n_resamples": n_resamples,
    }
    passed = {name for name, value in given.items() if _given(value)}

    if chosen in registry.ANALYTIC_METHOD:
        if metric not in registry.PROPORTION_METRIC:
            raise ValueError(
                f"`method` {chosen!r} is an analytic interval for a proportion; {metric} is "
                f"not one (proportion metrics: {sorted(registry.PROPORTION_METRIC)}). Use "
                "method='bootstrap' or 'recommended'."
            )
        if strict:
            for name in _BOOTSTRAP_OPTIONS:
                if name in passed:
                    raise ValueError(
                        f"`{name}` applies to bootstrap intervals, but {metric} uses {how}, "
                        f"an analytic interval; leave `{name}` unset or pass method='bootstrap'."
                    )
            if not groups:
                for name in _ANALYTIC_OPTIONS:
                    if name in passed:
                        raise ValueError(
                            f"`{name}` adjusts for texts nested in persons; it needs `groups` "
                            "(person ids)."
                        )
        if not groups:
            return IntervalChoice(chosen)
        recommended_design = (
            EDGE_DESIGN if edge else WORST_CASE_DESIGN if worst_case else NESTED_DESIGN
        )
        chosen_design = recommended_design if not _given(design) else design
        if chosen_design is None:
            if strict and isinstance(df_adjust, str) and _given(df_adjust):
                raise ValueError(
                    f"`df_adjust` {df_adjust!r} adjusts the design-based interval; with "
                    "`design=None` the texts are treated as independent and it does not apply."
                )
            return IntervalChoice(chosen)
        chosen_df = NESTED_DF_ADJUST if not _given(df_adjust) else df_adjust
        return IntervalChoice(chosen, design=chosen_design, df_adjust=chosen_df)

    if strict:
        for name in _ANALYTIC_OPTIONS:
            if name in passed:
                raise ValueError(
                    f"`{name}` applies to analytic intervals, but {metric} uses {how}; leave "
                    f"`{name}` unset, or choose the bootstrap's `scheme`."
                )
    if "scheme" not in passed:
        chosen_scheme = recommended_scheme(relevant_texts_per_person if groups else None)
    else:
        chosen_scheme = str(scheme)
    if chosen_scheme != "iid" and not groups:
        raise ValueError(f"`scheme` {chosen_scheme!r} needs `groups` (person ids).")
    defaults: dict[str, Any] = {"interval": BOOTSTRAP_INTERVAL, "pseudo_count": PSEUDO_COUNT}
    # a metric's own hierarchical bootstrap (NESTED_BOOTSTRAP_BY_METRIC) is a pair: it
    # applies where the caller passed neither of them
    if chosen_scheme == "hierarchical" and not (_given(interval) or _given(pseudo_count)):
        defaults.update(NESTED_BOOTSTRAP_BY_METRIC.get(metric, {}))
    return IntervalChoice(
        "bootstrap",
        scheme=chosen_scheme,
        interval=defaults["interval"] if not _given(interval) else interval,
        pseudo_count=defaults["pseudo_count"] if not _given(pseudo_count) else pseudo_count,
        n_resamples=n_resamples if _given(n_resamples) else _default_resamples(confidence_level),
    )


def _default_resamples(confidence_level: float | None) -> int:
    """Return the resamples of a bootstrap whose `n_resamples` was left to the policy."""
    return N_RESAMPLES if confidence_level is None else default_resamples(confidence_level)


def recommend_for_counts(
    metric: str, relevant: Any, successes: Any = None, **options: Any
) -> list[tuple[IntervalChoice | None, Any]]:
    r"""Choose the interval of each data set of a batch from its counts per person.

    The one rule :func:`perfci.metric_ci` applies to one data set, applied to many: the
    harness scores it with this function, so that what it measures is what users get.

    Parameters
    ----------
    metric : str
        Any name in :data:`perfci.METRICS`.
    relevant : array_like, shape (\*batch, persons)
        Relevant texts per person of each data set (persons with none are not persons).
    successes : array_like, optional
        For a proportion metric, its successes per person (the same shape): with them
        the data sets in :func:`caveat_region` get the worst-case design.
    **options
        The options of :func:`perfci.metric_ci` (``method``, ``design``, ...).

    Returns
    -------
    list of (IntervalChoice or None, numpy.ndarray)
        Each distinct choice with the boolean mask (shape ``batch``) of the data sets it
        applies to. ``None`` marks data sets with fewer than 2 persons with a relevant
        text, which have no interval about a population of persons. A choice with
        ``design=None`` for an analytic method, or scheme ``"iid"``, means the texts are
        treated as a simple random sample (at most one relevant text per person).

    Examples
    --------
    >>> import numpy as np
    >>> from perfci import policy
    >>> relevant = np.array([[3, 2, 4, 0], [1, 1, 0, 1], [5, 0, 0, 0]])
    >>> [(c and c.label, mask.tolist()) for c, mask in policy.recommend_for_counts("f1", relevant)]
    [(None, [False, False, True]), ('bootstrap (scheme=iid, interval=percentile, pseudo_count=1)', [False, True, False]), ('bootstrap (scheme=hierarchical, interval=percentile, pseudo_count=1)', [True, False, False])]
    >>> trials = np.full((2, 12), 30)
    >>> hits = np.stack([np.full(12, 30), np.arange(12) + 15])  # no variation; much
    >>> [(c.label, mask.tolist()) for c, mask in policy.recommend_for_counts("recall", trials, hits)]
    [('agresti_coull (design=icc_weighted, df_adjust=dean_pagano)', [False, True]), ('wilson (design=edge, df_adjust=dean_pagano)', [True, False])]
    """  # noqa: E501
    relevant = np.asarray(relevant, dtype=float)
    persons = np.count_nonzero(relevant, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_person = relevant.sum(-1) / persons
    # One relevant text per person is a simple random sample of texts.
    independent = np.all(relevant <= 1, axis=-1) | (persons < 2)
    worst = np.zeros(persons.shape, dtype=bool)
    near = np.zeros(persons.shape, dtype=bool)
    if successes is not None and metric in registry.PROPORTION_METRIC:
        from .design import anova_icc  # the ICC the report prints

        y = np.asarray(successes, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            estimate = y.sum(-1) / relevant.sum(-1)
            icc, _ = anova_icc(y, relevant)
        near = edge_region(metric, estimate, per_person) & ~independent
        worst = caveat_region(metric, estimate, persons, per_person, icc) & ~independent
    region = np.where(
        persons < 2,
        -1,
        np.where(independent, 0, np.where(near, 3, np.where(worst, 2, 1))),
    )
    out: list[tuple[IntervalChoice | None, Any]] = []
    for code in np.unique(region):  # a few regions; the work is batched over each
        mask = region == code
        if code == -1:
            out.append((None, mask))
            continue
        first = np.argmax(mask.ravel())  # every member of a region gets the same choice
        b = None if code == 0 else float(per_person.ravel()[first])
        nested_options = options if b is not None else _drop_nested(options)
        choice = choose_interval(
            metric,
            groups=b is not None,
            relevant_texts_per_person=b,
            worst_case=bool(code == 2),
            edge=bool(code == 3),
            **nested_options,
        )
        out.append((choice, mask))
    return out


def _drop_nested(options: dict[str, Any]) -> dict[str, Any]:
    """Return the options without those that need persons (data treated as independent)."""
    return {k: v for k, v in options.items() if k not in (*_ANALYTIC_OPTIONS, "scheme")}


#: Regions of nested designs where no interval with an estimated ICC covered in the atlas
#: (``validation/ATLAS.md``, suite ``atlas-icc``; see :func:`caveat_region`): a high
#: estimated ICC counts with fewer persons than this (or a rate near 0 or 1).
CAVEAT_PERSONS = 40
#: Relevant texts per person from which the caveat applies.
CAVEAT_TEXTS = 10
#: An estimated ICC from which the caveat applies.
CAVEAT_ICC = 0.25
#: Distance of the estimate from 0 or 1 within which a nested proportion with many texts
#: per person takes the edge design (:func:`edge_region`).
CAVEAT_EDGE = 0.03


def edge_region(metric: str, estimate: Any, relevant_texts_per_person: Any) -> np.ndarray:
    """Return where a nested proportion takes the edge design (``design="edge"``).

    Proportion metrics with at least :data:`CAVEAT_TEXTS` relevant texts per person and
    an estimate within :data:`CAVEAT_EDGE` of 0 or 1 (every outcome the same included).
    There an ICC estimated from a few dozen persons says little: most samples of persons
    miss the few far from the rest, and an ANOVA ICC above 0 is as common without
    clustering as with it. The edge design uses the persons' minority outcomes with a
    floor from an assumed ICC of :data:`EDGE_ICC` instead, and is monotone in the data.
    The region depends on the estimate, so crossing its border (an estimate of 0.97)
    changes the design; within it one more success never lowers either end.
    Vectorized over data sets.

    Examples
    --------
    >>> from perfci import policy
    >>> policy.edge_region("recall", [1.0, 0.98, 0.9, 0.99], [30, 30, 30, 3])
    array([ True,  True, False, False])
    """
    estimate = np.asarray(estimate, dtype=float)
    if metric not in registry.PROPORTION_METRIC:
        return np.zeros(estimate.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        # a tolerance of rounding: 9 misses in 300 texts is 0.03 from 1
        near = np.minimum(estimate, 1 - estimate) <= CAVEAT_EDGE + 1e-12
        many_texts = np.asarray(relevant_texts_per_person, dtype=float) >= CAVEAT_TEXTS
    return near & many_texts


def caveat_region(
    metric: str, estimate: Any, persons: Any, relevant_texts_per_person: Any, icc: Any
) -> np.ndarray:
    """Return where the atlas found no interval with an estimated ICC that covers.

    Nested proportion metrics with at least :data:`CAVEAT_TEXTS` relevant texts per
    person, away from the bounds (near them see :func:`edge_region`), with an estimated
    ICC of at least :data:`CAVEAT_ICC` and fewer than :data:`CAVEAT_PERSONS` persons
    (too few persons to estimate a high ICC well): the recommended design there is the
    worst case, ``"persons"``. Vectorized over data sets (a NaN ICC counts as not
    estimated).

    Examples
    --------
    >>> from perfci import policy
    >>> policy.caveat_region("recall", [1.0, 0.99, 0.9, 0.9, 0.9], 20,
    ...                      [30, 30, 30, 30, 3], [0.0, 0.3, 0.4, 0.1, 0.4])
    array([False, False,  True, False, False])
    """
    estimate = np.asarray(estimate, dtype=float)
    if metric not in registry.PROPORTION_METRIC:
        return np.zeros(estimate.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        icc = np.asarray(icc, dtype=float)
        high_icc = np.isfinite(icc) & (icc >= CAVEAT_ICC)
        few = np.asarray(persons) < CAVEAT_PERSONS
        many_texts = np.asarray(relevant_texts_per_person, dtype=float) >= CAVEAT_TEXTS
    near = edge_region(metric, estimate, relevant_texts_per_person)
    return many_texts & high_icc & few & ~near


def coverage_caveat(
    metric: str,
    *,
    estimate: float,
    persons: int | None,
    relevant_texts_per_person: float | None,
    icc: float | None,
    design: str | None = None,
) -> str | None:
    """Return a warning where the atlas found no interval that covers, else None.

    Parameters
    ----------
    metric : str
        The metric.
    estimate : float
        Its estimate.
    persons : int or None
        Persons with a relevant text (None: independent texts).
    relevant_texts_per_person : float or None
        Mean relevant texts per such person.
    icc : float or None
        The estimated ICC (NaN or None where not estimated).
    design : str, optional
        The design of the interval the note is about; ``"persons"`` (the worst case the
        policy chooses in this region) gets a note saying so.

    Examples
    --------
    >>> from perfci import policy
    >>> policy.coverage_caveat("recall", estimate=0.99, persons=20,
    ...                        relevant_texts_per_person=30, icc=0.0, design="edge") is None
    True
    >>> policy.coverage_caveat("recall", estimate=0.99, persons=20,
    ...                        relevant_texts_per_person=30, icc=0.0,
    ...                        design="icc_weighted")[:46]
    'near 0 or 1 with many texts per person (20 per'
    >>> policy.coverage_caveat("recall", estimate=0.9, persons=20,
    ...                        relevant_texts_per_person=3, icc=0.1) is None
    True
    """
    if persons is None or relevant_texts_per_person is None:
        return None
    where = (
        f"{persons} persons, {relevant_texts_per_person:.0f} relevant texts each, "
        f"estimate {estimate:.3f}"
    )
    if bool(edge_region(metric, estimate, relevant_texts_per_person)):
        if design == EDGE_DESIGN:
            return None
        return (
            f"near 0 or 1 with many texts per person ({where}) an interval from the "
            "estimated ICC was too narrow in the stress atlas, where a few persons far "
            "from the rest carry the variation; the recommended design='edge' covered"
        )
    if not caveat_region(metric, estimate, persons, relevant_texts_per_person, icc):
        return None
    why = f"an estimated ICC of {icc:.2f} from few persons"
    where = f"{persons} persons, {relevant_texts_per_person:.0f} relevant texts each, {why}"
    if design == WORST_CASE_DESIGN:
        return (
            f"the data cannot show the variation between persons here ({where}): in the "
            "stress atlas no interval with an estimated ICC covered 0.93 in such designs, "
            "so this one assumes the worst case, each person counting once "
            "(design=persons); more persons, not more texts, would narrow it"
        )
    return (
        f"no interval method covered 0.93 in the stress atlas for designs like this "
        f"({where}); the interval is likely too narrow: more persons, not more texts, "
        "would help"
    )
