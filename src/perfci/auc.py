r"""The ROC AUC of a score: DeLong, logit, jackknife-of-persons and bootstrap intervals.

The area under the ROC curve of a score is the chance that a random positive text scores
above a random negative one, ties counting half. It is a function of counts too: of the
positives and negatives at each distinct score. Every method here works on those counts.

- :func:`auc_ci`: DeLong's interval (as R pROC computes it), the same variance on the
  logit scale, the jackknife of persons, or the bootstrap; with ``groups``, Obuchowski's
  clustered variance for texts nested in persons, with t on the effective number of
  persons minus one. By default the policy's recommended one
  (:func:`perfci.policy.recommended_auc_method`, read from :mod:`perfci._core.recommended`).
- :func:`auc_ci_counts`: the same intervals from the counts at each score level, batched
  over data sets (what the validation harness scores).

The bootstrap resamples the counts of (score, reference label) cells, per person for the
cluster schemes, through the one resampling engine (:mod:`perfci._core.resampling`):
a resample is a multinomial draw of those counts, never a loop over rows or resamples.

Beside this module: the paired difference of two scores' AUCs, :func:`compare_auc`
(:mod:`perfci.auc_comparison`; :func:`perfci.compare` routes ``metric="roc_auc"``
there), the kernels both use (:mod:`perfci.auc_kernels`) and the reading of scores
(:mod:`perfci.scores`); the names they define that were imported from here still are.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from scipy import special

from ._core import recommended as policy_table
from ._core import registry
from ._core.labels import check_aligned
from ._core.recommended import RECOMMENDED, recommended_auc_method
from ._core.replicates import MIN_PERSONS, batch_shaped
from ._core.resampling import check_resample_count
from ._core.results import IntervalResult, sources_of
from ._core.validation import UNSET, UndefinedMetricWarning, Unset, check_real_array

# The paired comparison of two AUCs, the kernels and score reading have their own modules;
# the names other modules take from here stay importable from here.
from .auc_comparison import RocAucComparison, compare_auc
from .auc_comparison import compare_auc_named as compare_auc_named
from .auc_kernels import (
    DegenerateIntervalWarning,
    bootstrap_level_counts,
    check_some_valid,
    delong_ends,
    delong_parts,
    delong_welch_df,
    jackknife_of_persons,
    placements,
    warn_delong,
    warn_zero_width,
    welch_satterthwaite_df,
)
from .bootstrap import BootstrapCI
from .design import effective_clusters, two_sided_quantile
from .scores import auc_options_iv, level_counts, read_scores, scheme_for

__all__ = [
    "AUC_METHODS",
    "DegenerateIntervalWarning",
    "RocAucCI",
    "RocAucComparison",
    "auc_ci",
    "auc_ci_counts",
    "compare_auc",
]

#: Interval methods of :func:`auc_ci` (:data:`perfci._core.registry.AUC_METHOD`).
AUC_METHODS: tuple[str, ...] = registry.AUC_METHOD.names


@dataclass(frozen=True, repr=False)
class RocAucCI(IntervalResult):
    r"""The ROC AUC of a score with its confidence interval.

    Attributes
    ----------
    estimate : float
        The AUC: the share of (positive, negative) pairs of texts in which the positive
        scores higher, ties counting half.
    low, high : float
        The interval ends.
    se : float
        The standard error of the estimate: DeLong's (or Obuchowski's clustered) for the
        DeLong methods, the standard deviation of the valid replicates for the bootstrap.
    confidence_level : float
        The confidence level.
    method : str
        The method used: ``"delong"``, ``"delong_logit"``, ``"jackknife"`` or
        ``"bootstrap"`` (``method="recommended"`` is resolved to one of these; only a
        batch of :func:`auc_ci_counts` whose data sets get different recommended methods
        says ``"recommended"``, its `description` saying which).
    description : str
        What was computed, e.g. ``"DeLong, logit scale (clustered: Obuchowski, t with
        27.4 df)"``.
    n_positive, n_negative : int
        Reference positives and negatives.
    persons : int or None
        Persons with at least one text (with `groups`), else None.
    clustered : bool
        Whether the interval is about persons (Obuchowski's variance, or a cluster or
        hierarchical bootstrap). With one text per person it is not: the texts are a
        simple random sample and the independent-text interval is used.
    df : float
        Degrees of freedom of the t quantile (infinity: the normal quantile; NaN for the
        bootstrap).
    population : str
        What the interval is about (the estimand).
    bootstrap : BootstrapCI or None
        The bootstrap result (replicates in `distribution`) for ``method="bootstrap"``;
        None otherwise. Left out of :meth:`to_frame` and :meth:`to_xarray`.
    """

    _derived: ClassVar[tuple[str, ...]] = ("sources",)
    _exclude: ClassVar[tuple[str, ...]] = ("bootstrap",)

    estimate: float
    low: float
    high: float
    se: float
    confidence_level: float
    method: str
    description: str
    n_positive: int
    n_negative: int
    persons: int | None
    clustered: bool
    df: float
    population: str
    bootstrap: BootstrapCI | None = None

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes.

        ``("texts", "persons")`` for a clustered interval, else ``("texts",)``.
        """
        return sources_of(persons=bool(np.any(self.clustered)))

    def __repr__(self) -> str:
        if np.ndim(self.estimate):
            return (
                f"RocAucCI(batch of shape {np.shape(self.estimate)}, "
                f"confidence_level={self.confidence_level:g}, method={self.method!r})"
            )
        return (
            f"RocAucCI(estimate={self.estimate:.4g}, low={self.low:.4g}, high={self.high:.4g}, "
            f"confidence_level={self.confidence_level:g}, method={self.method!r}, "
            f"n_positive={self.n_positive}, n_negative={self.n_negative}, "
            f"persons={self.persons})"
        )


# ----------------------------------------------------------------------- intervals


def _population(clustered: bool, persons: int | None) -> str:
    if clustered:
        return (
            "the text-weighted ROC AUC (pairs of a positive and a negative text, from any "
            f"persons) in the population of persons that these {persons} persons were "
            "sampled from, new persons included"
        )
    return "the ROC AUC in the population of texts this sample represents"


def auc_ci(
    y_true: Any,
    y_score: Any,
    *,
    groups: Any = None,
    method: str = RECOMMENDED,
    confidence_level: float = 0.95,
    positive: Any = None,
    scheme: str | None = None,
    interval: str | Unset = UNSET,
    n_resamples: int | Unset = UNSET,
    rng: Any = None,
    batch: int | None = None,
) -> RocAucCI:
    r"""Confidence interval for the ROC AUC of a score.

    Parameters
    ----------
    y_true : array_like
        Reference (human) labels, one per text.
    y_score : array_like
        The classifier's score of each text (a probability, a logit, any number whose
        order ranks the texts; higher means more likely positive). Finite numbers.
    groups : array_like, optional
        Person ids, one per text: texts nested in persons, the persons sampled from a
        population of persons.
    method : str, default "recommended"
        One of ``"recommended"``, ``"delong"``, ``"delong_logit"``, ``"jackknife"``,
        ``"bootstrap"``. ``"recommended"`` (the default) is
        :func:`perfci.policy.recommended_auc_method`'s choice for the data, what
        ``metric_ci(..., "roc_auc")`` computes: ``"jackknife"`` with `groups` and
        :data:`perfci.policy.AUC_JACKKNIFE_MIN_TEXTS` or more texts per person on
        average, else ``"delong_logit"``; the result's `method` names the one chosen.
        ``"delong"`` is DeLong's interval :math:`\hat\theta \pm q\,\widehat{\mathrm{se}}`
        (clipped to [0, 1], R pROC's ``ci.auc``; this function's former default);
        ``"delong_logit"`` the same standard error on the logit scale, back-transformed;
        ``"jackknife"`` (with `groups`) the jackknife of persons on the logit scale of the
        AUC of pairs from different persons (``docs/methods.md``); ``"bootstrap"`` the
        bootstrap. With `groups`, the DeLong methods use Obuchowski's clustered variance
        and t on the effective number of persons minus 1 (see the notes).
    confidence_level : float, default 0.95
        Confidence level.
    positive : object, optional
        The positive label; default 1 for a 0/1 code. With three or more labels it names
        the class whose one-vs-rest AUC is computed (the score should be that class's).
    scheme : {"iid", "cluster", "hierarchical"}, optional
        Bootstrap scheme (``method="bootstrap"`` only). Default
        :func:`perfci.policy.recommended_scheme`: iid without groups (or with one text per
        person), hierarchical with them.
    interval : {"percentile", "bca"}, optional
        Bootstrap interval (``method="bootstrap"`` only); percentile when unset.
    n_resamples : int, optional
        Bootstrap resamples (``method="bootstrap"`` only); 2000 when unset (more above 99%), at
        least ``ceil(2 / (1 - confidence_level))`` (40 at 95%: each tail of the interval holds a
        resample). Passing it (or `interval`) with another method is an error, also at its default
        value.
    rng : numpy.random.Generator, int or None
        Random generator or seed of the bootstrap (the DeLong methods draw nothing).
    batch : int, optional
        Resamples drawn at once, bounding memory; the result does not depend on it.

    Returns
    -------
    RocAucCI
        Estimate, interval, standard error, the method and what it is about, the numbers
        of positives, negatives and persons, and the df of the t quantile.

    Raises
    ------
    ValueError
        For an unknown name or an option of the wrong type or range; a bootstrap option
        (`scheme`, or `interval`, `n_resamples` other than their defaults) with a DeLong
        method; labels or ids of the wrong shape or with missing values; a score that is not
        a finite number (NaN included), or not one per text; `y_true` with only positives
        or only negatives (the AUC is undefined); with more than two labels and no
        `positive`; for the unclustered DeLong methods, fewer than 2 positives or 2
        negatives (no sample variance); with `groups`, fewer than 2 persons for the
        jackknife, the clustered DeLong variance or a cluster or hierarchical bootstrap; a
        bootstrap
        where no resample has both classes; ``method="jackknife"`` without `groups`.

    Warns
    -----
    DegenerateIntervalWarning
        When the interval has zero width (every score tied, or the classes perfectly
        separated): the standard error is 0, and the interval is R pROC's single point.
    UndefinedMetricWarning
        For ``delong_logit`` at an AUC of exactly 0 or 1, where the logit is infinite: the
        interval is NaN. For the bootstrap, when more than 10% of the resamples lack a
        class (they are dropped).

    Notes
    -----
    With P positives :math:`X_i` and N negatives :math:`Y_j`, the AUC is
    :math:`\hat\theta = \frac{1}{PN}\sum_{i,j}\psi(X_i, Y_j)`, :math:`\psi = 1` if
    :math:`X > Y`, :math:`\tfrac12` if tied, 0 otherwise (the Mann-Whitney statistic). It
    does not flip a score that ranks negatives higher: an AUC below 0.5 is reported as is
    (R pROC's ``direction = "<"``).

    *DeLong* [1]_: with the placement values :math:`V_{10}(X_i) = \frac1N\sum_j
    \psi(X_i, Y_j)` and :math:`V_{01}(Y_j) = \frac1P\sum_i \psi(X_i, Y_j)` (computed from
    midranks, as Sun and Xu [2]_ and R pROC do),

    .. math::

        \widehat{\mathrm{var}}(\hat\theta) = \frac{S_{10}}{P} + \frac{S_{01}}{N},\quad
        S_{10} = \frac{\sum_i (V_{10}(X_i) - \hat\theta)^2}{P - 1},\quad
        S_{01} = \frac{\sum_j (V_{01}(Y_j) - \hat\theta)^2}{N - 1},

    and the interval is :math:`\hat\theta \pm z\,\widehat{\mathrm{se}}` clipped to
    [0, 1]: R pROC's ``ci.auc(method = "delong")``, which the tests reproduce to 1e-8.

    *Logit scale*: :math:`\mathrm{expit}(\mathrm{logit}\,\hat\theta \pm q\,
    \widehat{\mathrm{se}} / (\hat\theta(1 - \hat\theta)))` (the delta method), q Student's
    t on Welch and Satterthwaite's df of the two sample variances,
    :math:`(S_{10}/P + S_{01}/N)^2 / ((S_{10}/P)^2/(P-1) + (S_{01}/N)^2/(N-1))` (the
    smaller of it and the persons' df with `groups`): with few positives the normal
    quantile under-covers (0.932 at 40 texts, 12 positives, an AUC of 0.95; 0.951 with
    this df). At an AUC
    of 0 or 1 the logit is infinite and the standard error is 0 (every positive above
    every negative): no logit interval exists there, and the interval is NaN with a
    warning. (The plain DeLong interval is then the single point 1, which says nothing
    about how far below 1 the population AUC may be; nor does the bootstrap, whose every
    resample is perfectly separated too.)

    *Texts nested in persons* (Obuchowski [3]_): persons contribute positives and
    negatives, and the pairs of texts from different persons count as those from the
    same one. With :math:`I` persons, :math:`M = P` and :math:`N` positives and negatives
    in all, and person i's sums :math:`V_{10}(X_{i\cdot}) = \sum_{j}V_{10}(X_{ij})` over
    its :math:`m_i` positives and :math:`V_{01}(Y_{i\cdot})` over its :math:`n_i`
    negatives,

    .. math::

        \widehat{\mathrm{var}}(\hat\theta) = \frac{S_{10}}{M} + \frac{S_{01}}{N}
        + \frac{2 S_{11}}{MN} = \frac{I}{I - 1}\sum_i u_i^2,\qquad
        u_i = \frac{V_{10}(X_{i\cdot}) - m_i\hat\theta}{M}
        + \frac{V_{01}(Y_{i\cdot}) - n_i\hat\theta}{N},

    with :math:`S_{10} = \frac{I}{(I-1)M}\sum_i (V_{10}(X_{i\cdot}) - m_i\hat\theta)^2`,
    :math:`S_{01}` alike and :math:`S_{11} = \frac{I}{I-1}\sum_i (V_{10}(X_{i\cdot}) -
    m_i\hat\theta)(V_{01}(Y_{i\cdot}) - n_i\hat\theta)`: the linearization (cluster-robust)
    variance of the AUC with persons as clusters. The quantile is t on
    :math:`G^* - 1` degrees of freedom, :math:`G^* = (\sum_i T_i)^2 / \sum_i T_i^2` the
    effective number of persons of Kish over their texts :math:`T_i` (I for equal
    sizes), as :func:`perfci.compare` uses for its cluster-robust interval. In
    ``validation/auc_study.py`` (``validation/AUC_STUDY.md``) the normal quantile
    under-covered with few persons (0.85 at 5 and 0.90 at 10 equal persons, an AUC of 0.8
    and a person effect on the score) where t on I - 1 covered 0.93; with unequal numbers
    of texts (a CV of 1) t on I - 1 still under-covered (0.89-0.90 at 5 to 10 persons)
    and t on :math:`G^* - 1` covered 0.93-0.95. With one text per
    person the texts are a simple random sample and the unclustered interval is used.

    *Bootstrap*: the counts of texts at each (score, reference label) cell are
    resampled, per person for the cluster schemes (a resample of texts is a multinomial
    draw of these counts: no loop over rows), and each replicate's AUC is computed from
    its counts; resamples without a positive or a negative are dropped and counted. The
    percentile or BCa interval is that of :func:`perfci.bootstrap_ci`.

    *Degenerate cases*: one class only gives an error (the AUC is undefined). Every score
    tied gives an AUC of 0.5 and, as in R pROC, a DeLong standard error of 0 and the
    interval [0.5, 0.5], with a :class:`DegenerateIntervalWarning`; perfectly separated
    classes likewise give [1, 1] (or [0, 0]).

    References
    ----------
    .. [1] DeLong, E. R., DeLong, D. M. and Clarke-Pearson, D. L. (1988). Comparing the
       areas under two or more correlated receiver operating characteristic curves: a
       nonparametric approach. Biometrics 44(3), 837-845.
    .. [2] Sun, X. and Xu, W. (2014). Fast implementation of DeLong's algorithm for
       comparing the areas under correlated receiver operating characteristic curves.
       IEEE Signal Processing Letters 21(11), 1389-1393.
    .. [3] Obuchowski, N. A. (1997). Nonparametric analysis of clustered ROC curve data.
       Biometrics 53(2), 567-578.
    .. [4] Robin, X. et al. (2011). pROC: an open-source package for R and S+ to analyze
       and compare ROC curves. BMC Bioinformatics 12, 77.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> ci = pc.auc_ci(texts["human"], texts["score"])
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}], se {ci.se:.4f} by {ci.method}")
    0.975 [0.963, 0.983], se 0.0050 by delong_logit

    R pROC's DeLong interval, by name:

    >>> ci = pc.auc_ci(texts["human"], texts["score"], method="delong")
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}], se {ci.se:.4f}")
    0.975 [0.965, 0.985], se 0.0050

    With the therapists as persons (27 texts each on average) the default is the jackknife
    of persons:

    >>> ci = pc.auc_ci(texts["human"], texts["score"], groups=texts["person"])
    >>> print(f"[{ci.low:.3f}, {ci.high:.3f}] by {ci.method}")
    [0.957, 0.985] by jackknife

    and Obuchowski's clustered variance is there by name:

    >>> ci = pc.auc_ci(texts["human"], texts["score"], groups=texts["person"],
    ...                method="delong_logit")
    >>> print(f"[{ci.low:.3f}, {ci.high:.3f}] by {ci.description}")
    [0.960, 0.984] by DeLong, logit scale (clustered: Obuchowski floored at DeLong, t with 37.6 df)

    The hierarchical bootstrap of the same persons:

    >>> ci = pc.auc_ci(texts["human"], texts["score"], groups=texts["person"],
    ...                method="bootstrap", rng=1)
    >>> print(f"[{ci.low:.3f}, {ci.high:.3f}] by {ci.description}")  # ends drawn: 2 decimals
    [0.96, 0.99] by bootstrap (scheme=hierarchical, interval=percentile)
    """
    check_aligned(y_true=y_true, y_score=y_score, groups=groups)
    return auc_ci_named(
        y_true,
        {"y_score": y_score},
        groups,
        method=method,
        confidence_level=confidence_level,
        positive=positive,
        scheme=scheme,
        interval=interval,
        n_resamples=n_resamples,
        rng=rng,
        batch=batch,
    )


def auc_ci_named(
    y_true: Any,
    score: dict[str, Any],
    groups: Any,
    *,
    method: str,
    confidence_level: float,
    positive: Any,
    scheme: str | None,
    interval: str | Unset,
    n_resamples: int | Unset,
    rng: Any,
    batch: int | None,
) -> RocAucCI:
    """:func:`auc_ci` of the score named by `score`'s one key (the caller's argument)."""
    level, interval, n_resamples, generator = auc_options_iv(
        method,
        registry.METRIC_CI_AUC_METHOD,
        confidence_level,
        positive,
        scheme,
        interval,
        n_resamples,
        rng,
        batch,
    )
    if method == "bootstrap":
        check_resample_count(n_resamples, level, interval)
    data = read_scores(y_true, score, groups, positive)
    if method == RECOMMENDED:
        per_person = None if data.person is None else data.positive.size / float(data.persons or 1)
        method = recommended_auc_method(per_person)
    if method == "jackknife":
        if data.person is None:
            raise ValueError(
                "`method` 'jackknife' leaves out one person at a time: it needs `groups` "
                "(person ids)."
            )
        if (data.persons or 0) < MIN_PERSONS:
            raise ValueError(
                f"`groups` must give at least {MIN_PERSONS} persons for the jackknife of "
                "persons: it leaves out one person at a time, and one person says nothing "
                f"about the population of persons; got {data.persons}."
            )
        pos, neg = level_counts(data, "cluster")
        return auc_ci_counts(pos, neg, nested=True, method="jackknife", confidence_level=level)
    estimate, deviation = placements(data.positive, data.scores[0])
    common: dict[str, Any] = {
        "confidence_level": level,
        "method": method,
        "n_positive": data.n_positive,
        "n_negative": data.n_negative,
        "persons": data.persons,
    }
    if method == "bootstrap":
        used = scheme_for(data, scheme)
        pos, neg = level_counts(data, used)
        boot, _ = bootstrap_level_counts(
            pos, neg, used != "iid", used, interval, n_resamples, level, generator, batch
        )
        check_some_valid(boot)
        if boot.low == boot.high:
            warn_zero_width("bootstrap interval of the ROC AUC")
        clustered = used != "iid"
        return RocAucCI(
            estimate=estimate,
            low=float(boot.low),
            high=float(boot.high),
            se=float(boot.standard_error),
            description=f"bootstrap (scheme={used}, interval={interval})",
            clustered=clustered,
            df=math.nan,
            population=_population(clustered, data.persons),
            bootstrap=boot,
            **common,
        )
    floored = method == "delong_logit" and policy_table.AUC_CLUSTERED_VARIANCE_FLOOR
    variance, clustered, df, how = delong_parts(data, deviation, floored)
    if method == "delong_logit":  # as in _delong_result: the smaller df
        df = min(df, delong_welch_df(data.positive, deviation))
    se = math.sqrt(variance)
    q = two_sided_quantile(level, df)
    name = "DeLong" if method == "delong" else "DeLong, logit scale"
    description = f"{name} ({how})" if how else name
    low, high = delong_ends(np.asarray(estimate), np.asarray(se), np.asarray(q), method)
    warn_delong(np.asarray(estimate), np.asarray(se), method, False)
    return RocAucCI(
        estimate=estimate,
        low=float(low),
        high=float(high),
        se=se,
        description=description,
        clustered=clustered,
        df=df,
        population=_population(clustered, data.persons),
        **common,
    )


def _check_level_counts(positives: Any, negatives: Any, nested: bool) -> tuple[np.ndarray, ...]:
    """Return the count arrays of :func:`auc_ci_counts` as floats of one shape, or raise."""
    arrays = []
    for name, value in (("positives", positives), ("negatives", negatives)):
        arr = check_real_array(name, value)
        if arr.ndim < 1 + nested:
            raise ValueError(
                f"`{name}` must have a last axis of score levels"
                + (" and one before it of persons (nested=True)" if nested else "")
                + f"; got shape {arr.shape}."
            )
        if np.any(arr < 0) or np.any(arr != np.floor(arr)):
            raise ValueError(f"`{name}` must be whole, non-negative counts.")
        arrays.append(arr.astype(float))
    if arrays[0].shape != arrays[1].shape:
        raise ValueError(
            "`positives` and `negatives` must have the same shape (counts of the same score "
            f"levels, and persons); got {arrays[0].shape} and {arrays[1].shape}."
        )
    return tuple(arrays)


def auc_ci_counts(
    positives: Any,
    negatives: Any,
    *,
    nested: bool = False,
    method: str = RECOMMENDED,
    confidence_level: float = 0.95,
    scheme: str | None = None,
    interval: str | Unset = UNSET,
    n_resamples: int | Unset = UNSET,
    rng: Any = None,
    batch: int | None = None,
) -> RocAucCI:
    r"""ROC AUC interval from counts at each score level: what :func:`auc_ci` computes.

    Parameters
    ----------
    positives, negatives : array_like of int
        Reference positives and negatives at each distinct score, the levels in
        increasing order of score on the last axis: shape ``(*batch, levels)``, or with
        ``nested=True`` ``(*batch, persons, levels)`` per person (persons without a text
        are not persons, so a ragged batch can be padded with them). Whole, non-negative.
    nested : bool, default False
        Whether the second-to-last axis is persons (Obuchowski's clustered variance, or a
        cluster or hierarchical bootstrap).
    method, confidence_level, scheme, interval, n_resamples, rng, batch
        As in :func:`auc_ci`, `method` ``"recommended"`` by default: ``"delong_logit"``
        without persons; with ``nested=True`` ``"jackknife"`` for a data set whose persons
        hold :data:`perfci.policy.AUC_JACKKNIFE_MIN_TEXTS` texts or more on average, else
        ``"delong_logit"`` (the result's `method` names it; a batch that mixes the two
        says ``"recommended"``). Data set k of a batch draws from
        ``perfci.batch_generators(rng, size)[k]`` (:mod:`perfci._core.validation`).

    Returns
    -------
    RocAucCI
        As :func:`auc_ci`, every field but `method` and `confidence_level` of shape
        ``batch`` (a float for one data set); `persons` counts persons with a text.

    Raises
    ------
    ValueError
        For counts that are not whole non-negative numbers, or of different shapes; an
        unknown method or option (as :func:`auc_ci`).

    Warns
    -----
    UndefinedMetricWarning
        For data sets without a positive or a negative (no AUC), with fewer than 2
        positives or 2 negatives (no unclustered DeLong variance) or fewer than 2 persons
        with a text (no clustered one), and for the jackknife without a positive and a
        negative text from different persons: their interval is NaN, as is the logit
        interval at an AUC of 0 or 1.
    DegenerateIntervalWarning
        For zero-width intervals, as :func:`auc_ci`.

    Notes
    -----
    The AUC and DeLong's (or Obuchowski's) variance depend on the texts only through
    these counts: the placement value of a positive at level l is the share of
    negatives below l plus half those at l, the same for every positive there, so each
    sum over texts of :func:`auc_ci` is a sum over levels weighted by the counts. On the
    same data the two functions agree to rounding (``tests/test_auc.py``). A data set
    whose persons each have one text is a simple random sample of texts, and gets the
    unclustered interval, as in :func:`auc_ci`.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.auc import auc_ci_counts
    >>> rng = np.random.default_rng(0)
    >>> positives = rng.poisson([1, 2, 4, 6, 8], size=(3, 12, 5))  # 3 data sets, 12 persons
    >>> negatives = rng.poisson([8, 6, 4, 2, 1], size=(3, 12, 5))
    >>> ci = auc_ci_counts(positives, negatives, nested=True, method="delong_logit")
    >>> ci.estimate.shape, ci.low.shape
    ((3,), (3,))
    >>> print(ci.description)
    DeLong, logit scale (clustered: Obuchowski floored at DeLong, t on effective persons minus 1)
    """
    level, interval, n_resamples, generator = auc_options_iv(
        method,
        registry.METRIC_CI_AUC_METHOD,
        confidence_level,
        None,
        scheme,
        interval,
        n_resamples,
        rng,
        batch,
    )
    if method == "bootstrap":
        check_resample_count(n_resamples, level, interval)
    pos, neg = _check_level_counts(positives, negatives, nested)
    if method == RECOMMENDED:
        method = _recommended_counts_method(pos, neg, nested)
        if method == RECOMMENDED:  # a batch whose data sets get different methods
            return _recommended_counts(pos, neg, level)
    fit = _fit_level_counts(pos, neg, nested)
    _warn_undefined_counts(fit, method)
    common = fit.common(level, method)
    if method == "bootstrap":
        boot, used = bootstrap_level_counts(
            pos, neg, nested, scheme, interval, n_resamples, level, generator, batch
        )
        return _bootstrap_result(fit, boot, used, interval, common)
    if method == "jackknife":
        return _jackknife_result(fit, pos, neg, level, common)
    return _delong_result(fit, method, level, common)


@dataclass(frozen=True)
class _LevelFit:
    """DeLong's estimate and variance of each data set of level counts, and what they used.

    Arrays of the batch's shape. `variance` is Obuchowski's clustered one where
    `clustered` (a nested data set whose persons do not all have one text), else DeLong's;
    NaN where there is none.
    """

    batch_shape: tuple[int, ...]
    nested: bool
    persons: np.ndarray
    n_pos: np.ndarray
    n_neg: np.ndarray
    both: np.ndarray  # a positive and a negative text: the AUC is defined
    clustered: np.ndarray
    estimate: np.ndarray
    variance: np.ndarray
    # DeLong's unclustered variance (the floor of the logit interval's clustered one)
    iid_variance: np.ndarray
    df: np.ndarray
    # Welch-Satterthwaite df of DeLong's two-sample variance (the logit interval's)
    welch_df: np.ndarray

    def common(self, level: float, method: str) -> dict[str, Any]:
        """Return the fields of :class:`RocAucCI` every method of these counts shares."""
        shape = self.batch_shape
        return {
            "estimate": batch_shaped(self.estimate, shape),
            "confidence_level": level,
            "method": method,
            "n_positive": batch_shaped(self.n_pos, shape, int),
            "n_negative": batch_shaped(self.n_neg, shape, int),
            "persons": batch_shaped(self.persons, shape, int) if self.nested else None,
        }


def _fit_level_counts(pos: np.ndarray, neg: np.ndarray, nested: bool) -> _LevelFit:
    """Return the AUC and DeLong's (Obuchowski's, with persons) variance of level counts.

    The placement values of :func:`~perfci.auc_kernels.placements`, level by level: a
    positive at level l has the share of negatives below l plus half those at l.
    """
    batch_shape = pos.shape[: pos.ndim - 1 - nested]
    per_person = (pos + neg).sum(-1) if nested else np.zeros((*batch_shape, 0))
    persons = np.count_nonzero(per_person, axis=-1)
    pooled_pos = pos.sum(-2) if nested else pos
    pooled_neg = neg.sum(-2) if nested else neg
    n_pos, n_neg = pooled_pos.sum(-1), pooled_neg.sum(-1)
    both = (n_pos > 0) & (n_neg > 0)
    # a nested data set of persons with one text each is a simple random sample of texts
    clustered = np.asarray(persons < n_pos + n_neg) if nested else np.zeros(batch_shape, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        cum_neg = np.cumsum(pooled_neg, axis=-1)
        v10 = (cum_neg - 0.5 * pooled_neg) / n_neg[..., None]
        v01 = (n_pos[..., None] - np.cumsum(pooled_pos, axis=-1) + 0.5 * pooled_pos) / n_pos[
            ..., None
        ]
        estimate = np.sum(pooled_pos * v10, axis=-1) / n_pos
        estimate = np.where(both, estimate, np.nan)
        dev_pos = (v10 - estimate[..., None]) / n_pos[..., None]
        dev_neg = (v01 - estimate[..., None]) / n_neg[..., None]
        part_pos = np.sum(pooled_pos * dev_pos**2, -1) * n_pos / (n_pos - 1)
        part_neg = np.sum(pooled_neg * dev_neg**2, -1) * n_neg / (n_neg - 1)
        variance = part_pos + part_neg
        variance = np.where((n_pos >= 2) & (n_neg >= 2), variance, np.nan)
        iid_variance = variance
        welch_df = welch_satterthwaite_df(part_pos, part_neg, n_pos, n_neg)
        df = np.full(batch_shape, math.inf)
        if nested:
            u = np.einsum("...ml,...l->...m", pos, dev_pos) + np.einsum(
                "...ml,...l->...m", neg, dev_neg
            )
            m = persons.astype(float)
            robust = m / (m - 1) * np.sum(u * u, axis=-1)
            robust = np.where(m >= MIN_PERSONS, robust, np.nan)
            variance = np.where(clustered, robust, variance)
            effective = effective_clusters(per_person)
            df = np.where(clustered, np.maximum(effective - 1, 1.0), math.inf)
    return _LevelFit(
        batch_shape,
        nested,
        persons,
        n_pos,
        n_neg,
        both,
        clustered,
        estimate,
        variance,
        iid_variance,
        df,
        np.asarray(welch_df, dtype=float),
    )


def _warn_undefined_counts(fit: _LevelFit, method: str) -> None:
    """Warn of data sets without an AUC, or (for the DeLong methods) without a variance."""
    both = fit.both
    if not both.all():
        _warn_counts(
            f"{int((~both).sum())} of {both.size} data sets have no positive or no negative "
            "text: the ROC AUC compares the two, so it is NaN there",
            stacklevel=4,
        )
    no_variance = both & np.isnan(fit.variance)
    # the bootstrap and the jackknife do not use DeLong's variance (the jackknife warns of
    # its own undefined data sets)
    if method not in ("bootstrap", "jackknife") and no_variance.any():
        _warn_counts(
            f"{int(no_variance.sum())} of {both.size} data sets have too few texts for the "
            "DeLong variance (fewer than 2 positives or 2 negatives, or with persons fewer "
            "than 2 persons with a text): their interval is NaN",
            stacklevel=4,
        )


def _bootstrap_result(
    fit: _LevelFit, boot: BootstrapCI, used: str, interval: str, common: dict[str, Any]
) -> RocAucCI:
    """Return the bootstrap interval of :func:`auc_ci_counts` (`used`: its scheme)."""
    shape = fit.batch_shape
    is_clustered = used != "iid"
    return RocAucCI(
        low=batch_shaped(np.asarray(boot.low), shape),
        high=batch_shaped(np.asarray(boot.high), shape),
        se=batch_shaped(np.asarray(boot.standard_error), shape),
        description=f"bootstrap (scheme={used}, interval={interval})",
        clustered=batch_shaped(np.full(shape, is_clustered), shape, bool),
        df=batch_shaped(np.full(shape, math.nan), shape),
        population=_population(is_clustered, None),
        bootstrap=boot,
        **common,
    )


def _jackknife_result(
    fit: _LevelFit, pos: np.ndarray, neg: np.ndarray, level: float, common: dict[str, Any]
) -> RocAucCI:
    """Return the jackknife-of-persons interval of :func:`auc_ci_counts`."""
    if not fit.nested:
        raise ValueError(
            "`method` 'jackknife' leaves out one person at a time: it needs the counts "
            "per person (nested=True)."
        )
    shape = fit.batch_shape
    with warnings.catch_warnings():
        # a data set without a person to leave out is warned of below
        warnings.filterwarnings("ignore", "Mean of empty slice", RuntimeWarning)
        estimate, se, df, undefined, centre, centre_se = jackknife_of_persons(
            pos, neg, policy_table.AUC_JACKKNIFE_BIAS_MIN_PERSONS
        )
    common = {**common, "estimate": batch_shaped(estimate, shape)}
    if (undefined & fit.both).any():
        _warn_counts(
            f"{int((undefined & fit.both).sum())} of {undefined.size} data sets have no pair "
            "of a positive and a negative text from different persons, or fewer than 2 "
            "persons with a text: no jackknife interval there (NaN)",
            stacklevel=4,
        )
    q = special.stdtrit(df, 0.5 + level / 2)  # Student's t quantile
    low, high = delong_ends(centre, centre_se, q, "delong_logit")
    few = fit.persons < policy_table.AUC_JACKKNIFE_BIAS_MIN_PERSONS
    if policy_table.AUC_JACKKNIFE_HULL and few.any():  # the hull with the logit interval
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateIntervalWarning)
            logit = _delong_result(fit, "delong_logit", level, common)
        hull = few & ~np.isnan(low)
        low = np.where(hull, np.fmin(low, logit.low), low)
        high = np.where(hull, np.fmax(high, logit.high), high)
    warn_delong(
        estimate, se, "delong_logit", bool(shape), name="jackknife-of-persons", width=high - low
    )
    return RocAucCI(
        low=batch_shaped(low, shape),
        high=batch_shaped(high, shape),
        se=batch_shaped(se, shape),
        description=(
            "jackknife of persons, logit scale (pairs from different persons; t on the "
            "effective persons minus 1; bias-corrected centre from "
            f"{policy_table.AUC_JACKKNIFE_BIAS_MIN_PERSONS} persons, below them widened to "
            "hold the logit DeLong interval)"
        ),
        clustered=batch_shaped(np.ones(shape, dtype=bool), shape, bool),
        df=batch_shaped(df, shape),
        population=_population(True, None),
        **common,
    )


def _delong_result(fit: _LevelFit, method: str, level: float, common: dict[str, Any]) -> RocAucCI:
    """Return the DeLong interval of :func:`auc_ci_counts`, plain or on the logit scale."""
    shape = fit.batch_shape
    variance = fit.variance
    floored = method == "delong_logit" and policy_table.AUC_CLUSTERED_VARIANCE_FLOOR
    if floored:  # no smaller than DeLong's unclustered variance, where that exists
        variance = np.where(fit.clustered, np.fmax(variance, fit.iid_variance), variance)
    se = np.sqrt(variance)
    # the logit interval's t: the smaller of the persons' df and Welch-Satterthwaite's
    # (validation/AUC_STUDY.md: 0.932 -> 0.951 at 40 texts and an AUC of 0.95); the plain
    # interval keeps the normal quantile (R pROC's)
    df = np.minimum(fit.df, fit.welch_df) if method == "delong_logit" else fit.df
    q = special.stdtrit(df, 0.5 + level / 2)  # Student's t; the normal one at df = inf
    low, high = delong_ends(fit.estimate, se, q, method)
    warn_delong(fit.estimate, se, method, bool(shape))
    name = "DeLong" if method == "delong" else "DeLong, logit scale"
    any_clustered = bool(np.any(fit.clustered))
    floor = " floored at DeLong" if floored else ""
    how = f" (clustered: Obuchowski{floor}, t on effective persons minus 1)"
    how = how if any_clustered else ""
    return RocAucCI(
        low=batch_shaped(low, shape),
        high=batch_shaped(high, shape),
        se=batch_shaped(se, shape),
        description=name + how,
        clustered=batch_shaped(fit.clustered, shape, bool),
        df=batch_shaped(df, shape),
        population=_population(any_clustered, None),
        **common,
    )


def _jackknifed(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """Return where the persons of nested level counts have enough texts for the jackknife.

    :data:`perfci.policy.AUC_JACKKNIFE_MIN_TEXTS` texts or more per person with a text,
    on average (what :func:`perfci.policy.recommended_auc_method` decides with); a data
    set without a text is not.
    """
    texts = (pos + neg).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_person = texts.sum(-1) / np.count_nonzero(texts, axis=-1)
    return np.asarray(per_person >= policy_table.AUC_JACKKNIFE_MIN_TEXTS)


def _recommended_counts_method(pos: np.ndarray, neg: np.ndarray, nested: bool) -> str:
    """Return the recommended method of every data set of level counts, if they share one.

    :data:`perfci.policy.AUC_METHOD` without persons; with them the jackknife of persons
    where :func:`_jackknifed`, else the logit DeLong interval (Obuchowski's clustered
    variance where some person has more than one text); ``"recommended"`` for a batch
    whose data sets get different ones.
    """
    if not nested:
        return policy_table.AUC_METHOD
    jackknifed = _jackknifed(pos, neg)
    if not jackknifed.any():
        return policy_table.AUC_METHOD
    return policy_table.AUC_NESTED_METHOD if jackknifed.all() else RECOMMENDED


def _recommended_counts(pos: np.ndarray, neg: np.ndarray, level: float) -> RocAucCI:
    """Return the recommended interval of each data set of a batch that mixes methods.

    The jackknife of persons where :func:`_jackknifed`, else the logit DeLong interval;
    the result's `method` is ``"recommended"`` and its description says per data set.
    """
    with warnings.catch_warnings():
        # the warnings of the interval each data set gets are given below
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        logit = auc_ci_counts(
            pos, neg, nested=True, method=policy_table.AUC_METHOD, confidence_level=level
        )
        jack = auc_ci_counts(pos, neg, nested=True, method="jackknife", confidence_level=level)
    clustered = _jackknifed(pos, neg)
    chosen = {
        name: np.where(clustered, getattr(jack, name), getattr(logit, name))
        for name in ("estimate", "low", "high", "se", "df")
    }
    if np.isnan(chosen["low"]).any():
        _warn_counts(
            f"{int(np.isnan(chosen['low']).sum())} of {np.size(chosen['low'])} data sets have "
            "no recommended interval (no positive and negative text from different persons, "
            "an AUC of 0 or 1, or too few texts): NaN"
        )
    return replace(
        logit,
        **chosen,
        method=RECOMMENDED,
        description="per data set: the jackknife of persons where persons have several "
        "texts, else DeLong on the logit scale",
        population=jack.population,
    )


def _warn_counts(reason: str, stacklevel: int = 3) -> None:
    """Warn that some data sets of level counts have no AUC or no interval: `reason`."""
    warnings.warn(reason + ".", UndefinedMetricWarning, stacklevel=stacklevel)
