r"""The paired difference of two scores' ROC AUCs on the same texts, with DeLong's test.

:func:`compare_auc` (what :func:`perfci.compare` computes for ``metric="roc_auc"``):
DeLong's paired interval and test, clustered with persons (Obuchowski's covariance, t on
the effective number of persons minus one), or the paired bootstrap of the counts of the
joint (score A, score B, reference label) cells, per person for the cluster schemes,
through the one resampling engine. The variances and placements are those of one score's
interval (:mod:`perfci.auc_kernels`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import special

from ._core import registry
from ._core.deprecation import hide_parameters, positional_groups
from ._core.labels import check_aligned
from ._core.replicates import (
    canonical_cells,
    resample_intervals,
    warn_about,
)
from ._core.resampling import Statistic, check_resample_count
from ._core.results import IntervalResult, sources_of
from ._core.validation import UNSET, UndefinedMetricWarning, Unset, dataset_generators
from .auc_kernels import CellAUC, check_some_valid, delong_parts, placements, warn_zero_width
from .bootstrap import BootstrapCI, assemble
from .design import two_sided_quantile
from .policy import AUC_COMPARISON_METHOD, RECOMMENDED
from .scores import ROC_AUC, Scores, auc_options_iv, read_scores, scheme_for, score_cells

__all__ = ["RocAucComparison", "compare_auc", "compare_auc_named"]


@dataclass(frozen=True, repr=False)
class RocAucComparison(IntervalResult):
    r"""The paired difference of two scores' ROC AUCs on the same texts (A minus B).

    Attributes
    ----------
    metric : str
        ``"roc_auc"``.
    estimate_a, estimate_b : float
        The AUC of score A and of score B.
    difference : float
        ``estimate_a - estimate_b`` (also :attr:`estimate`).
    low, high : float
        The interval of the difference by `method`.
    confidence_level : float
        The confidence level.
    method : str
        The interval, e.g. ``"paired DeLong"`` or ``"paired DeLong (clustered:
        Obuchowski, t with 27.4 df)"``.
    p_value : float
        Two-sided p-value of `test` (the DeLong test, whatever the interval).
    test : str
        ``"paired DeLong z"`` or, with groups, ``"clustered paired DeLong t"``.
    se : float
        DeLong's (clustered: Obuchowski's) standard error of the difference.
    df : float
        Degrees of freedom of the test and the DeLong interval (infinity: normal).
    correlation : float
        The correlation of the two AUC estimates under DeLong's covariance (NaN where a
        variance is 0).
    n_positive, n_negative, n_texts : int
        Reference positives, negatives and all texts compared.
    persons : int or None
        Persons with at least one text (with groups), else None.
    bootstrap : BootstrapCI or None
        The paired bootstrap of the difference when it is the method, else None.
    """

    _exclude: ClassVar[tuple[str, ...]] = ("bootstrap",)
    _derived: ClassVar[tuple[str, ...]] = ("sources",)
    _repr_fields: ClassVar[tuple[str, ...]] = ("estimate_a", "estimate_b", "p_value")

    metric: str
    estimate_a: float
    estimate_b: float
    difference: float
    low: float
    high: float
    confidence_level: float
    method: str
    p_value: float
    test: str
    se: float
    df: float
    correlation: float
    n_positive: int
    n_negative: int
    n_texts: int
    persons: int | None
    bootstrap: BootstrapCI | None = None

    @property
    def estimate(self) -> float:
        """The difference A - B (the name other results use for the point estimate)."""
        return self.difference

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes.

        ``("texts", "persons")`` for a clustered comparison, else ``("texts",)``.
        """
        return sources_of(persons="clustered" in self.test)

    def __repr__(self) -> str:
        if np.ndim(self.difference):
            return super().__repr__()
        return (
            f"RocAucComparison(difference={self.difference:.4g}, low={self.low:.4g}, "
            f"high={self.high:.4g}, estimate_a={self.estimate_a:.4g}, "
            f"estimate_b={self.estimate_b:.4g}, p_value={self.p_value:.4g}, "
            f"method={self.method!r})"
        )


class _DifferenceOfCells:
    """AUC of score A minus AUC of score B on weighted joint cells."""

    def __init__(self, levels: np.ndarray, positive: np.ndarray) -> None:
        self.a = CellAUC(levels[0], positive)
        self.b = CellAUC(levels[1], positive)

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        return self.a(weights) - self.b(weights)


def _paired_bootstrap(
    data: Scores,
    metric: str,
    kind: Any,
    scheme: str | None,
    interval: str,
    n_resamples: int,
    level: float,
    rng: np.random.Generator,
    batch: int | None,
) -> tuple[BootstrapCI, str]:
    """Bootstrap the pair of scores of one data set: cells are joint (levels, label) values."""
    scheme = scheme_for(data, scheme)
    counts, levels, labels = score_cells(data, per_person=scheme != "iid")
    if scheme != "iid":  # draws that do not depend on how the persons are ordered
        counts = canonical_cells(counts, scheme, nested=True, rater_symmetric=False)
    statistic = Statistic(metric, counts.shape[-1], kind(levels, labels))
    parts = resample_intervals(
        [counts],
        statistic,
        scheme=scheme,
        interval=interval,
        pseudo_count=0,
        n_resamples=n_resamples,
        confidence_level=level,
        generators=dataset_generators(rng, 1, False),
        batch=batch,
    )
    warn_about(parts, statistic.metric, interval, n_resamples, True)
    boot = assemble(parts, statistic.metric, scheme, interval, 0, level, ())
    check_some_valid(boot)
    return boot, scheme


def compare_auc(
    y_true: Any,
    score_a: Any,
    score_b: Any,
    *former_groups: Any,
    groups: Any = None,
    method: str = RECOMMENDED,
    positive: Any = None,
    confidence_level: float = 0.95,
    scheme: str | None = None,
    interval: str | Unset = UNSET,
    n_resamples: int | Unset = UNSET,
    rng: Any = None,
    batch: int | None = None,
) -> RocAucComparison:
    r"""Paired difference of two scores' ROC AUCs on the same texts, with DeLong's test.

    :func:`perfci.compare` with ``metric="roc_auc"`` calls this function.

    Parameters
    ----------
    y_true : array_like
        Reference (human) labels, one per text.
    score_a, score_b : array_like
        The two classifiers' scores of the same texts (finite numbers).
    groups : array_like, optional
        Person ids, one per text (texts nested in persons).
    method : {"recommended", "delong", "bootstrap"}, default "recommended"
        The interval in `low`, `high`: DeLong's paired interval (``"recommended"``;
        clustered with `groups`), or the paired bootstrap of the joint counts.
    positive : object, optional
        The positive label, as in :func:`perfci.auc_ci`.
    confidence_level : float, default 0.95
        Confidence level.
    scheme, interval, n_resamples, rng, batch
        Bootstrap options, as in :func:`perfci.auc_ci` (``method="bootstrap"`` only, but `rng`
        and `batch`, which the DeLong method ignores).

    Returns
    -------
    RocAucComparison
        The AUCs of A and B, their difference with its interval, DeLong's standard error,
        test and p-value, and the correlation of the two estimates.

    Raises
    ------
    ValueError
        As :func:`perfci.auc_ci`; also for `score_b` of another length than `score_a`.

    Warns
    -----
    DegenerateIntervalWarning
        When the standard error of the difference is 0 (identical scores, or both
        perfectly separating): the DeLong interval is the single point of the difference
        and the p-value 1 if the difference is 0, else 0, as in R pROC.

    Notes
    -----
    DeLong's paired covariance [1]_: with each text's scaled placement deviations
    :math:`d^A_t, d^B_t` for the two scores (see :func:`~perfci.auc_kernels.placements`),
    the variance of the difference is

    .. math::

        \widehat{\mathrm{var}}(\hat\theta_A - \hat\theta_B)
        = \frac{P}{P - 1}\sum_{\text{positives}} (d^A_t - d^B_t)^2
        + \frac{N}{N - 1}\sum_{\text{negatives}} (d^A_t - d^B_t)^2,

    i.e. :math:`L S L^\top` with :math:`S = S_{10}/P + S_{01}/N` the 2 x 2 DeLong
    covariance and :math:`L = (1, -1)`: R pROC's ``roc.test(method = "delong", paired =
    TRUE)``, whose z statistic, p-value and interval the tests reproduce to 1e-8. With
    `groups`, Obuchowski's clustered covariance [2]_, :math:`\frac{I}{I-1}\sum_i (u^A_i -
    u^B_i)^2` with :math:`u_i` the person's summed deviations, and the t distribution on
    the effective number of persons minus one (:func:`perfci.auc_ci`). The paired bootstrap
    resamples the counts of the joint (score A, score B, reference) cells, per person for
    the cluster schemes, and takes A's AUC minus B's on each resample.

    References
    ----------
    .. [1] DeLong, E. R., DeLong, D. M. and Clarke-Pearson, D. L. (1988). Biometrics
       44(3), 837-845.
    .. [2] Obuchowski, N. A. (1997). Nonparametric analysis of clustered ROC curve data.
       Biometrics 53(2), 567-578.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> result = pc.compare(texts["human"], texts["score"], texts["score_b"], "roc_auc")
    >>> print(f"{result.difference:.4f} [{result.low:.4f}, {result.high:.4f}], "
    ...       f"{result.test} p = {result.p_value:.2g}")
    0.0021 [0.0012, 0.0030], paired DeLong z p = 2.5e-06
    >>> nested = pc.compare(texts["human"], texts["score"], texts["score_b"], "roc_auc",
    ...                     groups=texts["person"])
    >>> print(f"[{nested.low:.4f}, {nested.high:.4f}], {nested.test} on {nested.df:.1f} df, "
    ...       f"p = {nested.p_value:.2g}")
    [0.0010, 0.0033], clustered paired DeLong t on 37.6 df, p = 0.00053
    """
    check_aligned(y_true=y_true, score_a=score_a, score_b=score_b, groups=groups)
    groups = positional_groups(former_groups, groups, "compare_auc")
    return compare_auc_named(
        y_true,
        {"score_a": score_a, "score_b": score_b},
        groups,
        method=method,
        positive=positive,
        confidence_level=confidence_level,
        scheme=scheme,
        interval=interval,
        n_resamples=n_resamples,
        rng=rng,
        batch=batch,
    )


hide_parameters(compare_auc, positional=True)


def compare_auc_named(
    y_true: Any,
    scores: dict[str, Any],
    groups: Any,
    *,
    method: str,
    positive: Any,
    confidence_level: float,
    scheme: str | None,
    interval: str | Unset,
    n_resamples: int | Unset,
    rng: Any,
    batch: int | None,
) -> RocAucComparison:
    """:func:`compare_auc` of the two scores named by `scores`' keys (the caller's arguments)."""
    level, interval, n_resamples, generator = auc_options_iv(
        method,
        registry.COMPARE_AUC_METHOD,
        confidence_level,
        positive,
        scheme,
        interval,
        n_resamples,
        rng,
        batch,
    )
    if method == RECOMMENDED:
        method = AUC_COMPARISON_METHOD
    if method == "bootstrap":
        check_resample_count(n_resamples, level, interval)
    data = read_scores(y_true, scores, groups, positive)
    est_a, dev_a = placements(data.positive, data.scores[0])
    est_b, dev_b = placements(data.positive, data.scores[1])
    diff = est_a - est_b
    variance, clustered, df, how = delong_parts(data, dev_a - dev_b)
    var_a = delong_parts(data, dev_a)[0]
    var_b = delong_parts(data, dev_b)[0]
    se = math.sqrt(variance)
    with np.errstate(invalid="ignore", divide="ignore"):
        correlation = float((var_a + var_b - variance) / (2 * np.sqrt(var_a * var_b)))
    # the scores order every text alike (one is an increasing function of the other):
    # the difference is 0 in every resample too, and no interval says anything
    same_order = bool(np.array_equal(dev_a, dev_b)) and diff == 0
    if same_order:
        warnings.warn(
            "the two scores order every positive and negative text alike (one is an "
            "increasing function of the other): their ROC AUCs are equal by construction "
            "and the difference has no interval; returning NaN.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        p_value = 1.0
    elif se == 0 and method != "bootstrap":
        warn_zero_width("DeLong interval of the ROC AUC difference")
        p_value = 1.0 if diff == 0 else 0.0
    elif se == 0:
        p_value = 1.0 if diff == 0 else 0.0
    else:
        t = diff / se
        p_value = float(2 * special.stdtr(df, -abs(t)))  # the normal tail at df = inf
    test = "clustered paired DeLong t" if clustered else "paired DeLong z"
    boot = None
    if same_order:
        low = high = math.nan
        label = "none: the scores order the texts alike"
    elif method == "bootstrap":
        boot, used = _paired_bootstrap(
            data,
            f"{ROC_AUC} difference",
            _DifferenceOfCells,
            scheme,
            interval,
            n_resamples,
            level,
            generator,
            batch,
        )
        low, high = float(boot.low), float(boot.high)
        label = f"paired bootstrap (scheme={used}, interval={interval})"
    else:
        q = two_sided_quantile(level, df)
        low, high = diff - q * se, diff + q * se
        label = f"paired DeLong ({how})" if how else "paired DeLong"
    return RocAucComparison(
        metric=ROC_AUC,
        estimate_a=est_a,
        estimate_b=est_b,
        difference=diff,
        low=low,
        high=high,
        confidence_level=level,
        method=label,
        p_value=p_value,
        test=test,
        se=se,
        df=df,
        correlation=correlation,
        n_positive=data.n_positive,
        n_negative=data.n_negative,
        n_texts=int(data.positive.size),
        persons=data.persons,
        bootstrap=boot,
    )
