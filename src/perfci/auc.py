r"""The ROC AUC of a score: DeLong, logit and bootstrap intervals, and paired comparisons.

The area under the ROC curve of a score is the chance that a random positive text scores
above a random negative one, ties counting half. It is a function of counts too: of the
positives and negatives at each distinct score. Every method here works on those counts.

- :func:`auc_ci`: DeLong's interval (as R pROC computes it), the same variance on the
  logit scale, or the bootstrap; with ``groups``, Obuchowski's clustered variance for
  texts nested in persons, with t on the effective number of persons minus one.
- :func:`compare_auc`: the paired difference of two scores' AUCs on the same texts, with
  DeLong's paired test (clustered with groups); :func:`perfci.compare` routes
  ``metric="roc_auc"`` here.

The bootstrap resamples the counts of (score, reference label) cells, per person for the
cluster schemes, through the one resampling engine (:mod:`perfci._core.resampling`):
a resample is a multinomial draw of those counts, never a loop over rows or resamples.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import special

from . import policy
from ._core import registry
from ._core.labels import as_label_array
from ._core.replicates import (
    MIN_PERSONS,
    ONE_PERSON,
    batch_shaped,
    canonical_cells,
    check_bootstrap_options,
    resample_intervals,
    warn_about,
)
from ._core.resampling import Statistic
from ._core.results import ResultMixin, sources_of
from ._core.validation import (
    UndefinedMetricWarning,
    check_confidence_level,
    check_label,
    check_memory,
    check_real_array,
    dataset_generators,
)
from .bootstrap import BootstrapCI, assemble
from .counting import factorize_sorted, normalize_labels
from .design import effective_clusters, two_sided_quantile
from .policy import (
    AUC_COMPARISON_METHOD,
    RECOMMENDED,
    recommended_auc_method,
    recommended_scheme,
)

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

_N_RESAMPLES = 2000
_METRIC = "roc_auc"


class DegenerateIntervalWarning(RuntimeWarning):
    """An interval has zero width: the data show no variation to estimate a variance from."""


@dataclass(frozen=True, repr=False)
class RocAucCI(ResultMixin):
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
        ``"delong"``, ``"delong_logit"`` or ``"bootstrap"``.
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

    @property
    def half_width(self) -> float:
        """Half the interval's width."""
        return (self.high - self.low) / 2

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


@dataclass(frozen=True, repr=False)
class RocAucComparison(ResultMixin):
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
        return (
            f"RocAucComparison(difference={self.difference:.4g}, low={self.low:.4g}, "
            f"high={self.high:.4g}, estimate_a={self.estimate_a:.4g}, "
            f"estimate_b={self.estimate_b:.4g}, p_value={self.p_value:.4g}, "
            f"method={self.method!r})"
        )


# ----------------------------------------------------------------------- the kernel


def placements(positive: np.ndarray, score: np.ndarray) -> tuple[float, np.ndarray]:
    r"""Return the AUC and each text's scaled placement deviation.

    Parameters
    ----------
    positive : numpy.ndarray of bool
        ``(n,)``: whether each text is a reference positive.
    score : numpy.ndarray of float
        ``(n,)``: the scores.

    Returns
    -------
    auc : float
        :math:`\hat\theta = \frac{1}{PN}\sum_{i,j}\psi(X_i, Y_j)` with
        :math:`\psi = 1, \tfrac12, 0` for :math:`X > Y`, :math:`X = Y`, :math:`X < Y`.
    deviation : numpy.ndarray
        ``(n,)``: :math:`(V_{10}(X_i) - \hat\theta)/P` for a positive and
        :math:`(V_{01}(Y_j) - \hat\theta)/N` for a negative, with the placement values
        :math:`V_{10}(X_i) = \frac1N\sum_j \psi(X_i, Y_j)` and
        :math:`V_{01}(Y_j) = \frac1P\sum_i \psi(X_i, Y_j)`.

    Notes
    -----
    The placement values come from the counts of positives and negatives at each
    distinct score (cumulative sums over the sorted scores), which is the midrank
    algorithm of Sun and Xu (2014) that R pROC uses: O(n log n), ties counting half.
    Every DeLong variance is a sum of squares of these deviations (see :func:`auc_ci`).

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.auc import placements
    >>> auc, dev = placements(np.array([True, True, False, False]), np.array([0.9, 0.4, 0.4, 0.1]))
    >>> auc, dev.round(4).tolist()
    (0.875, [0.0625, -0.0625, -0.0625, 0.0625])
    """
    levels, index = np.unique(score, return_inverse=True)
    size = levels.size
    pos = np.bincount(index[positive], minlength=size).astype(float)
    neg = np.bincount(index[~positive], minlength=size).astype(float)
    n_pos, n_neg = pos.sum(), neg.sum()
    v10 = (np.cumsum(neg) - 0.5 * neg) / n_neg  # negatives below, ties half
    v01 = (n_pos - np.cumsum(pos) + 0.5 * pos) / n_pos  # positives above, ties half
    auc = float(pos @ v10 / n_pos)
    deviation = np.where(positive, (v10[index] - auc) / n_pos, (v01[index] - auc) / n_neg)
    return auc, deviation


def _delong_variance(positive: np.ndarray, deviation: np.ndarray) -> float:
    """DeLong's variance S10/P + S01/N from the scaled deviations (sample variances)."""
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    return float(
        np.sum(deviation[positive] ** 2) * n_pos / (n_pos - 1)
        + np.sum(deviation[~positive] ** 2) * n_neg / (n_neg - 1)
    )


def _clustered_variance(person: np.ndarray, deviation: np.ndarray, m: int) -> float:
    """Obuchowski's variance I/(I - 1) sum_i u_i^2, u_i the person's summed deviations."""
    u = np.bincount(person, weights=deviation, minlength=m)
    return float(m / (m - 1) * np.sum(u * u))


def _effective_persons(person: np.ndarray, m: int) -> float:
    """Kish's effective number of persons over their texts (:func:`effective_clusters`)."""
    return float(effective_clusters(np.bincount(person, minlength=m)))


class _CellAUC:
    """The AUC of weighted cells, each a (score level, reference label) pair.

    Built once from the cells' levels and labels; called on weights ``(..., K)`` (the
    counts of a batch of resamples) it returns the AUC of each row, NaN where a row has
    no positive or no negative: O(K) per row, with no sort.
    """

    def __init__(self, level: np.ndarray, positive: np.ndarray) -> None:
        self.pos = np.flatnonzero(positive)
        neg = np.flatnonzero(~positive)
        self.neg = neg[np.argsort(level[neg], kind="stable")]
        sorted_levels = level[self.neg]
        self.below = np.searchsorted(sorted_levels, level[self.pos], side="left")
        self.upto = np.searchsorted(sorted_levels, level[self.pos], side="right")

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        w_pos = weights[..., self.pos]
        cum = np.cumsum(weights[..., self.neg], axis=-1)
        cum = np.concatenate([np.zeros((*cum.shape[:-1], 1)), cum], axis=-1)
        below = np.take(cum, self.below, axis=-1)
        ties = np.take(cum, self.upto, axis=-1) - below
        n_pos, n_neg = w_pos.sum(-1), cum[..., -1]
        pairs = n_pos * n_neg
        with np.errstate(invalid="ignore", divide="ignore"):
            auc = np.sum(w_pos * (below + 0.5 * ties), axis=-1) / pairs
        return np.where(pairs > 0, auc, np.nan)


# ---------------------------------------------------------------------- validation


def _auc_options_iv(
    method: Any,
    choices: registry.Choices,
    confidence_level: Any,
    positive: Any,
    scheme: Any,
    interval: Any,
    n_resamples: Any,
    rng: Any,
    batch: Any,
) -> tuple[float, int, np.random.Generator]:
    """Check the options of :func:`auc_ci` and :func:`compare_auc` before the data."""
    choices.check(method)
    level = float(check_confidence_level(confidence_level, scalar=True))
    check_label("positive", positive)
    resamples, generator = check_bootstrap_options(
        method, scheme, interval, n_resamples, rng, batch, _N_RESAMPLES
    )
    return level, resamples, generator


@dataclass(frozen=True)
class _Scores:
    """Validated data: reference positives, scores, persons."""

    positive: np.ndarray  # (n,) bool
    scores: list[np.ndarray]  # each (n,) float
    person: np.ndarray | None  # (n,) int in 0..m-1
    persons: int | None

    @property
    def n_positive(self) -> int:
        return int(self.positive.sum())

    @property
    def n_negative(self) -> int:
        return int(self.positive.size - self.positive.sum())

    @property
    def one_text_each(self) -> bool:
        return self.persons is not None and self.persons == self.positive.size


def read_scores(
    y_true: Any, scores: dict[str, Any], groups: Any, positive: Any, *, what: str = _METRIC
) -> _Scores:
    """Check the reference labels, the score arguments and the person ids; encode them.

    The labels are read by :func:`perfci.counting.normalize_labels` (a 0/1 code needs no
    `positive`; two other labels need it named; with three or more, `positive` names the
    class whose one-vs-rest AUC is wanted). Each score must be one finite number per
    text. Both classes must be present: the AUC compares positives with negatives.
    """
    given = normalize_labels({"y_true": y_true}, positive=positive)
    labels = given.values["y_true"]
    if given.positive is None:
        raise ValueError(
            f"`positive` must name the positive class of `y_true`, which has "
            f"{given.classes.size} labels {given.classes.tolist()!r} (the one-vs-rest "
            f"{what} of that class is computed)."
        )
    truth = np.asarray(labels == given.positive, dtype=bool)
    n = truth.size
    arrays = []
    for name, value in scores.items():
        if isinstance(value, pd.Series | pd.Index):
            value = value.to_numpy()
        arr = check_real_array(name, value)
        if arr.ndim != 1:
            raise ValueError(f"`{name}` must be one-dimensional; got shape {arr.shape}.")
        if arr.size != n:
            raise ValueError(
                f"`{name}` must have one score per text of `y_true` ({n}); got {arr.size}."
            )
        arrays.append(arr)
    person = persons = None
    if groups is not None:
        ids = as_label_array("groups", groups)
        if ids.shape != truth.shape:
            raise ValueError(f"`groups` must have one id per text ({n}); got {ids.size}.")
        person, uniques = pd.factorize(ids)
        persons = len(uniques)
    n_pos = int(truth.sum())
    if n_pos == 0 or n_pos == n:
        raise ValueError(
            f"`y_true` must hold positive and negative texts: {what} compares the scores of "
            f"positives with those of negatives, and it is undefined with {n_pos} positive "
            f"and {n - n_pos} negative texts."
        )
    return _Scores(truth, arrays, person, persons)


# ----------------------------------------------------------------------- intervals


def _population(clustered: bool, persons: int | None) -> str:
    if clustered:
        return (
            "the text-weighted ROC AUC (pairs of a positive and a negative text, from any "
            f"persons) in the population of persons that these {persons} persons were "
            "sampled from, new persons included"
        )
    return "the ROC AUC in the population of texts this sample represents"


def _warn_zero_width(what: str, stacklevel: int = 3) -> None:
    warnings.warn(
        f"the {what} has zero width: the standard error is 0 (every score tied, or the "
        "positives and negatives perfectly separated), so the data show no variation to "
        "estimate it from; this is R pROC's interval, and it claims a certainty the data do "
        "not give.",
        DegenerateIntervalWarning,
        stacklevel=stacklevel,
    )


def _delong_ends(
    estimate: np.ndarray, se: np.ndarray, q: np.ndarray, method: str
) -> tuple[np.ndarray, np.ndarray]:
    r"""Interval ends of the DeLong methods, elementwise (NaN where there is no interval).

    ``"delong"``: :math:`\hat\theta \pm q\,\mathrm{se}` clipped to [0, 1], R pROC's;
    ``"delong_logit"``: the delta-method interval on the logit scale, NaN at an AUC of 0
    or 1, where the logit is infinite.
    """
    if method == "delong":
        return np.clip(estimate - q * se, 0.0, None), np.clip(estimate + q * se, None, 1.0)
    inside = (estimate > 0) & (estimate < 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        center = special.logit(estimate)
        spread = q * se / (estimate * (1 - estimate))
        low = np.where(inside, special.expit(center - spread), np.nan)
        high = np.where(inside, special.expit(center + spread), np.nan)
    return low, high


def _warn_delong(estimate: np.ndarray, se: np.ndarray, method: str, batched: bool) -> None:
    """Warn of zero-width DeLong intervals and of logit intervals at an AUC of 0 or 1.

    Once per kind; for a batch, the warning says in how many data sets.
    """
    defined = ~np.isnan(estimate) & ~np.isnan(se)
    edge = defined & ((estimate == 0) | (estimate == 1))
    if method == "delong_logit" and edge.any():
        what = (
            f"the AUC is {float(estimate[edge].flat[0]):g}"
            if not batched
            else f"the AUC is 0 or 1 in {int(edge.sum())} of {estimate.size} data sets"
        )
        warnings.warn(
            f"the logit-scale DeLong interval of the ROC AUC is undefined: {what} (the "
            "classes are perfectly separated), whose logit is infinite, and the standard "
            "error is 0; returning NaN.",
            UndefinedMetricWarning,
            stacklevel=4,
        )
    zero = defined & (se == 0)
    if method == "delong_logit":
        zero &= ~edge  # no interval at all there, warned above
    if zero.any():
        name = "DeLong" if method == "delong" else "logit-scale DeLong"
        count = "" if not batched else f" in {int(zero.sum())} of {estimate.size} data sets"
        _warn_zero_width(f"{name} interval of the ROC AUC{count}", stacklevel=5)


def _delong_parts(data: _Scores, deviation: np.ndarray) -> tuple[float, bool, float, str]:
    """Variance, clustered or not, df and a description of the DeLong variance."""
    if data.person is not None and not data.one_text_each:
        m = int(data.persons or 0)
        if m < MIN_PERSONS:
            raise ValueError(
                f"`groups` must give at least {MIN_PERSONS} persons for the clustered DeLong "
                "interval: a variance between persons needs two of them, and one person says "
                f"nothing about the population of persons; got {m}."
            )
        variance = _clustered_variance(data.person, deviation, m)
        df = max(_effective_persons(data.person, m) - 1, 1.0)
        return variance, True, df, f"clustered: Obuchowski, t with {df:.3g} df"
    if data.n_positive < 2 or data.n_negative < 2:
        raise ValueError(
            "`y_true` must hold at least 2 positive and 2 negative texts for the DeLong "
            "variance (a sample variance over each); got "
            f"{data.n_positive} positive and {data.n_negative} negative. Use "
            "method='bootstrap'."
        )
    return _delong_variance(data.positive, deviation), False, math.inf, ""


def _distinct_rows(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Return ``np.unique(np.stack(columns, -1), axis=0, return_inverse=True)``, faster.

    The columns are non-negative integer codes; each row is read as one number in mixed
    radix (the first column most significant), so the distinct rows come from a hashed
    1-D factorization in their lexicographic order, not from sorting every row.
    """
    radix = [int(c.max()) + 1 if c.size else 1 for c in columns]
    if math.prod(radix) >= 2**62:  # the number would overflow: sort the rows
        cells, inverse = np.unique(np.stack(columns, axis=-1), axis=0, return_inverse=True)
        return cells, inverse.reshape(-1)
    key = np.zeros(columns[0].size, dtype=np.int64)
    for column, base in zip(columns, radix, strict=True):
        key *= base
        key += column
    keys, inverse = factorize_sorted(key)
    digits = []
    for base in reversed(radix):
        keys, digit = np.divmod(keys, base)
        digits.append(digit)
    return np.stack(digits[::-1], axis=-1), inverse.reshape(-1)


def _units(data: _Scores, per_person: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells (score levels, label) of the scores: per-person counts ``(m, K)`` or ``(K,)``.

    Returns the counts, and each cell's level index of every score ``(n_scores, K)`` and
    label ``(K,)``.
    """
    codes = [factorize_sorted(s)[1].reshape(-1) for s in data.scores]
    cells, cell_of_text = _distinct_rows([*codes, data.positive.astype(np.int64)])
    k = cells.shape[0]
    counts: np.ndarray
    if data.person is None or not per_person:
        counts = np.bincount(cell_of_text, minlength=k).astype(float)
    else:
        m = int(data.persons or 0)
        check_memory(
            "groups",
            8.0 * m * k,
            f"the per-person counts of {m} persons x {k} (score, label) cells; round the "
            "scores (fewer distinct values) or use scheme='iid'",
        )
        flat = data.person * k + cell_of_text
        counts = np.bincount(flat, minlength=m * k).reshape(m, k).astype(float)
    return counts, cells[:, :-1].T, cells[:, -1].astype(bool)


def _level_counts(data: _Scores, scheme: str) -> tuple[np.ndarray, np.ndarray]:
    """Return the positives and negatives at each distinct score.

    ``(levels,)`` pooled for the iid scheme, else ``(persons, levels)``.
    """
    codes = np.unique(data.scores[0], return_inverse=True)[1].reshape(-1)
    levels = int(codes.max()) + 1
    if scheme == "iid":
        return (
            np.bincount(codes[data.positive], minlength=levels).astype(float),
            np.bincount(codes[~data.positive], minlength=levels).astype(float),
        )
    m = int(data.persons or 0)
    check_memory(
        "groups",
        16.0 * m * levels,
        f"the per-person counts of {m} persons x {levels} distinct scores; round the scores "
        "(fewer distinct values) or use scheme='iid'",
    )
    assert data.person is not None  # a scheme other than iid has persons (_scheme_for)
    flat = data.person * levels + codes
    shape = (m, levels)
    pos = np.bincount(flat[data.positive], minlength=m * levels).reshape(shape)
    neg = np.bincount(flat[~data.positive], minlength=m * levels).reshape(shape)
    return pos.astype(float), neg.astype(float)


def _scheme_for(data: _Scores, scheme: str | None) -> str:
    """Return the bootstrap scheme: the named one, checked against the data, or the recommended."""
    nested = data.person is not None
    if scheme is None:
        per_person = None if not nested else data.positive.size / float(data.persons or 1)
        scheme = recommended_scheme(per_person)
    if scheme != "iid":
        if not nested:
            raise ValueError(
                f"`scheme` {scheme!r} resamples persons: it needs `groups` (person ids)."
            )
        if int(data.persons or 0) < MIN_PERSONS:
            raise ValueError(
                f"`groups` must give at least {MIN_PERSONS} persons for scheme {scheme!r}: "
                f"{ONE_PERSON}; got {data.persons}."
            )
    return scheme


def _check_some_valid(boot: BootstrapCI) -> None:
    if boot.n_invalid_resamples == boot.n_resamples:
        raise ValueError(
            "`y_true` has too few positives or negatives for the bootstrap: no resample "
            "holds both, so no interval exists."
        )


def _bootstrap(
    data: _Scores,
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
    scheme = _scheme_for(data, scheme)
    counts, levels, labels = _units(data, per_person=scheme != "iid")
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
    _check_some_valid(boot)
    return boot, scheme


def auc_ci(
    y_true: Any,
    y_score: Any,
    *,
    groups: Any = None,
    method: str = "delong",
    confidence_level: float = 0.95,
    positive: Any = None,
    scheme: str | None = None,
    interval: str = "percentile",
    n_resamples: int = _N_RESAMPLES,
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
    method : {"delong", "delong_logit", "jackknife", "bootstrap", "recommended"}, default "delong"
        DeLong's interval :math:`\hat\theta \pm q\,\widehat{\mathrm{se}}` (clipped to
        [0, 1], as R pROC does); the same standard error on the logit scale,
        back-transformed; with `groups`, the jackknife of persons on the logit scale of
        the AUC of pairs from different persons (``docs/methods.md``); or the bootstrap.
        With `groups`, the DeLong methods use Obuchowski's clustered variance and t on the
        effective number of persons minus 1 (see the notes). ``"recommended"`` is
        :func:`perfci.policy.recommended_auc_method`'s choice for the data.
    confidence_level : float, default 0.95
        Confidence level.
    positive : object, optional
        The positive label; default 1 for a 0/1 code. With three or more labels it names
        the class whose one-vs-rest AUC is computed (the score should be that class's).
    scheme : {"iid", "cluster", "hierarchical"}, optional
        Bootstrap scheme (``method="bootstrap"`` only). Default
        :func:`perfci.policy.recommended_scheme`: iid without groups (or with one text per
        person), hierarchical with them.
    interval : {"percentile", "bca"}, default "percentile"
        Bootstrap interval (``method="bootstrap"`` only).
    n_resamples : int, default 2000
        Bootstrap resamples (``method="bootstrap"`` only).
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
        clustered DeLong variance or a cluster or hierarchical bootstrap; a bootstrap
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
    \widehat{\mathrm{se}} / (\hat\theta(1 - \hat\theta)))` (the delta method). At an AUC
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
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}], se {ci.se:.4f}")
    0.975 [0.965, 0.985], se 0.0050

    With the therapists as persons (Obuchowski's clustered variance):

    >>> ci = pc.auc_ci(texts["human"], texts["score"], groups=texts["person"],
    ...                method="delong_logit")
    >>> print(f"[{ci.low:.3f}, {ci.high:.3f}] by {ci.description}")
    [0.960, 0.984] by DeLong, logit scale (clustered: Obuchowski, t with 37.6 df)

    The hierarchical bootstrap of the same persons:

    >>> ci = pc.auc_ci(texts["human"], texts["score"], groups=texts["person"],
    ...                method="bootstrap", rng=1)
    >>> print(f"[{ci.low:.3f}, {ci.high:.3f}] by {ci.description}")  # ends drawn: 2 decimals
    [0.96, 0.99] by bootstrap (scheme=hierarchical, interval=percentile)
    """
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
    interval: str,
    n_resamples: int,
    rng: Any,
    batch: int | None,
) -> RocAucCI:
    """:func:`auc_ci` of the score named by `score`'s one key (the caller's argument)."""
    level, n_resamples, generator = _auc_options_iv(
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
        pos, neg = _level_counts(data, "cluster")
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
        used = _scheme_for(data, scheme)
        pos, neg = _level_counts(data, used)
        boot, _ = _bootstrap_counts(
            pos, neg, used != "iid", used, interval, n_resamples, level, generator, batch
        )
        _check_some_valid(boot)
        if boot.low == boot.high:
            _warn_zero_width("bootstrap interval of the ROC AUC")
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
    variance, clustered, df, how = _delong_parts(data, deviation)
    se = math.sqrt(variance)
    q = two_sided_quantile(level, df)
    name = "DeLong" if method == "delong" else "DeLong, logit scale"
    description = f"{name} ({how})" if how else name
    low, high = _delong_ends(np.asarray(estimate), np.asarray(se), np.asarray(q), method)
    _warn_delong(np.asarray(estimate), np.asarray(se), method, False)
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
    method: str = "delong",
    confidence_level: float = 0.95,
    scheme: str | None = None,
    interval: str = "percentile",
    n_resamples: int = _N_RESAMPLES,
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
        As in :func:`auc_ci`. Data set k of a batch draws from
        ``np.random.default_rng(rng).spawn(size)[k]`` (:mod:`perfci._core.validation`).

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
    >>> ci.estimate.shape, ci.low.shape, ci.description
    ((3,), (3,), 'DeLong, logit scale (clustered: Obuchowski, t on the effective persons minus 1)')
    """
    level, n_resamples, generator = _auc_options_iv(
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
    pos, neg = _check_level_counts(positives, negatives, nested)
    if method == RECOMMENDED:
        return _recommended_counts(pos, neg, nested, level)
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
        variance = np.sum(pooled_pos * dev_pos**2, -1) * n_pos / (n_pos - 1) + np.sum(
            pooled_neg * dev_neg**2, -1
        ) * n_neg / (n_neg - 1)
        variance = np.where((n_pos >= 2) & (n_neg >= 2), variance, np.nan)
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
    if not both.all():
        _warn_counts(
            f"{int((~both).sum())} of {both.size} data sets have no positive or no negative "
            "text: the ROC AUC compares the two, so it is NaN there"
        )
    no_variance = both & np.isnan(variance)
    if method != "bootstrap" and no_variance.any():
        _warn_counts(
            f"{int(no_variance.sum())} of {both.size} data sets have too few texts for the "
            "DeLong variance (fewer than 2 positives or 2 negatives, or with persons fewer "
            "than 2 persons with a text): their interval is NaN"
        )
    common: dict[str, Any] = {
        "estimate": batch_shaped(estimate, batch_shape),
        "confidence_level": level,
        "method": method,
        "n_positive": batch_shaped(n_pos, batch_shape, int),
        "n_negative": batch_shaped(n_neg, batch_shape, int),
        "persons": batch_shaped(persons, batch_shape, int) if nested else None,
    }
    if method == "bootstrap":
        boot, used = _bootstrap_counts(
            pos, neg, nested, scheme, interval, n_resamples, level, generator, batch
        )
        is_clustered = used != "iid"
        return RocAucCI(
            low=batch_shaped(np.asarray(boot.low), batch_shape),
            high=batch_shaped(np.asarray(boot.high), batch_shape),
            se=batch_shaped(np.asarray(boot.standard_error), batch_shape),
            description=f"bootstrap (scheme={used}, interval={interval})",
            clustered=batch_shaped(np.full(batch_shape, is_clustered), batch_shape, bool),
            df=batch_shaped(np.full(batch_shape, math.nan), batch_shape),
            population=_population(is_clustered, None),
            bootstrap=boot,
            **common,
        )
    if method == "jackknife":
        if not nested:
            raise ValueError(
                "`method` 'jackknife' leaves out one person at a time: it needs the counts "
                "per person (nested=True)."
            )
        estimate, se, df, undefined = _jackknife(pos, neg)
        common["estimate"] = batch_shaped(estimate, batch_shape)
        if (undefined & both).any():
            _warn_counts(
                f"{int((undefined & both).sum())} of {undefined.size} data sets have no pair of "
                "a positive and a negative text from different persons, or fewer than 2 "
                "persons with a text: no jackknife interval there (NaN)"
            )
        q = special.stdtrit(df, 0.5 + level / 2)  # Student's t quantile
        low, high = _delong_ends(estimate, se, q, "delong_logit")
        _warn_delong(estimate, se, "delong_logit", bool(batch_shape))
        return RocAucCI(
            low=batch_shaped(low, batch_shape),
            high=batch_shaped(high, batch_shape),
            se=batch_shaped(se, batch_shape),
            description=(
                "jackknife of persons, logit scale (pairs from different persons; t on the "
                "effective persons minus 1)"
            ),
            clustered=batch_shaped(np.ones(batch_shape, dtype=bool), batch_shape, bool),
            df=batch_shaped(df, batch_shape),
            population=_population(True, None),
            **common,
        )
    se = np.sqrt(variance)
    q = special.stdtrit(df, 0.5 + level / 2)  # Student's t quantile; the normal one at df = inf
    low, high = _delong_ends(estimate, se, q, method)
    _warn_delong(estimate, se, method, bool(batch_shape))
    name = "DeLong" if method == "delong" else "DeLong, logit scale"
    any_clustered = bool(np.any(clustered))
    how = " (clustered: Obuchowski, t on the effective persons minus 1)" if any_clustered else ""
    return RocAucCI(
        low=batch_shaped(low, batch_shape),
        high=batch_shaped(high, batch_shape),
        se=batch_shaped(se, batch_shape),
        description=name + how,
        clustered=batch_shaped(clustered, batch_shape, bool),
        df=batch_shaped(df, batch_shape),
        population=_population(any_clustered, None),
        **common,
    )


def _between_pairs(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concordant pair weight (ties half) and pairs of positives and negatives ``(..., L)``."""
    below = np.cumsum(neg, axis=-1) - neg
    return np.sum(pos * (below + 0.5 * neg), axis=-1), pos.sum(-1) * neg.sum(-1)


def _jackknife(
    pos: np.ndarray, neg: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Return the between-person AUC and its leave-one-person-out jackknife SE (logit scale).

    `pos`, `neg` are ``(..., persons, levels)``. The AUC of pairs from different persons
    is :math:`(W - \sum_i W_i)/(PN - \sum_i P_i N_i)`, with W the concordant weight of
    all pairs and :math:`W_i` that of person i's own pairs. Returns the estimate, the SE
    of its logit (the SE of the estimate is this times
    :math:`\hat\theta(1 - \hat\theta)`, which is what is returned, so that the logit
    interval of :func:`_delong_ends` uses it as it uses DeLong's), the df
    :math:`G^* - 1` and where no interval exists.
    """
    own_w, own_pairs = _between_pairs(pos, neg)  # (..., I)
    all_w, all_pairs = _between_pairs(pos.sum(-2), neg.sum(-2))  # (...)
    sum_w, sum_pairs = own_w.sum(-1), own_pairs.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = (all_w - sum_w) / (all_pairs - sum_pairs)
        # without person i: all pairs of the others, minus the others' own pairs
        rest_w, rest_pairs = _between_pairs(
            pos.sum(-2)[..., None, :] - pos, neg.sum(-2)[..., None, :] - neg
        )
        between = rest_pairs - (sum_pairs[..., None] - own_pairs)
        left_out = (rest_w - (sum_w[..., None] - own_w)) / between
        # a leave-one-out AUC of 0 or 1 is moved half a pair inward: its logit is finite
        half = 0.5 / np.where(between > 0, between, np.nan)
        left_out = np.clip(left_out, half, 1 - half)
        texts = (pos + neg).sum(-1)
        present = texts > 0
        persons = present.sum(-1).astype(float)
        logits = np.where(present, special.logit(left_out), np.nan)
        center = np.nanmean(logits, axis=-1)
        spread = np.nansum(np.where(present, (logits - center[..., None]) ** 2, 0.0), -1)
        se_logit = np.sqrt((persons - 1) / persons * spread)
        se = se_logit * estimate * (1 - estimate)
        effective = effective_clusters(texts)
        df = np.maximum(effective - 1, 1.0)
    undefined = ~np.isfinite(estimate) | (persons < 2) | ~np.isfinite(se)
    estimate = np.where(~np.isfinite(estimate), np.nan, estimate)
    se = np.where(undefined, np.nan, se)
    return estimate, se, df, undefined


def _recommended_counts(pos: np.ndarray, neg: np.ndarray, nested: bool, level: float) -> RocAucCI:
    """Return the recommended interval of each data set.

    The jackknife of persons where persons have :data:`perfci.policy.AUC_JACKKNIFE_MIN_TEXTS`
    texts or more on average, else the logit DeLong interval (Obuchowski's clustered
    variance where some person has more than one text).
    """
    if not nested:
        return auc_ci_counts(pos, neg, method=policy.AUC_METHOD, confidence_level=level)
    with warnings.catch_warnings():
        # the warnings of the interval each data set gets are given below
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        logit = auc_ci_counts(
            pos, neg, nested=True, method=policy.AUC_METHOD, confidence_level=level
        )
        jack = auc_ci_counts(pos, neg, nested=True, method="jackknife", confidence_level=level)
    texts = (pos + neg).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_person = texts.sum(-1) / np.count_nonzero(texts, axis=-1)
    clustered = np.asarray(per_person >= policy.AUC_JACKKNIFE_MIN_TEXTS)
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
    scalar = not np.ndim(logit.estimate)
    values: dict[str, Any] = {k: float(v) if scalar else v for k, v in chosen.items()}
    kinds = {bool(c) for c in np.ravel(clustered)}
    description = (
        jack.description
        if kinds == {True}
        else logit.description
        if kinds == {False}
        else "per data set: the jackknife of persons where persons have several texts, else "
        "DeLong on the logit scale"
    )
    return replace(
        logit,
        **values,
        method=RECOMMENDED,
        description=description,
        population=jack.population if True in kinds else logit.population,
    )


def _warn_counts(reason: str) -> None:
    warnings.warn(reason + ".", UndefinedMetricWarning, stacklevel=3)


def _bootstrap_counts(
    pos: np.ndarray,
    neg: np.ndarray,
    nested: bool,
    scheme: str | None,
    interval: str,
    n_resamples: int,
    level: float,
    rng: np.random.Generator,
    batch: int | None,
) -> tuple[BootstrapCI, str]:
    """Bootstrap for :func:`auc_ci_counts`: cells are (score level, label) pairs."""
    levels = pos.shape[-1]
    batch_shape = pos.shape[: pos.ndim - 1 - nested]
    if scheme is None:
        scheme = "hierarchical" if nested else "iid"
    if scheme != "iid" and not nested:
        raise ValueError(f"`scheme` {scheme!r} resamples persons: it needs nested=True counts.")
    cells = np.concatenate([pos, neg], axis=-1)  # (..., [persons,] 2 L)
    if scheme == "iid" and nested:
        cells = cells.sum(-2)
    flat = cells.reshape(-1, *cells.shape[len(batch_shape) :])
    # persons without texts dropped and the rest sorted: draws do not depend on their order
    units = [canonical_cells(c, scheme, nested=False, rater_symmetric=False) for c in flat]
    if scheme != "iid":
        units = [c[c.sum(-1) > 0] for c in units]
    statistic = Statistic(
        _METRIC,
        2 * levels,
        _CellAUC(np.tile(np.arange(levels), 2), np.repeat([True, False], levels)),
    )
    size = flat.shape[0]
    parts = resample_intervals(
        units,
        statistic,
        scheme=scheme,
        interval=interval,
        pseudo_count=0,
        n_resamples=n_resamples,
        confidence_level=level,
        generators=dataset_generators(rng, size, bool(batch_shape)),
        batch=batch,
    )
    warn_about(parts, statistic.metric, interval, n_resamples, not batch_shape)
    return assemble(parts, statistic.metric, scheme, interval, 0, level, batch_shape), scheme


# ----------------------------------------------------------------------- comparison


class _DifferenceOfCells:
    """AUC of score A minus AUC of score B on weighted joint cells."""

    def __init__(self, levels: np.ndarray, positive: np.ndarray) -> None:
        self.a = _CellAUC(levels[0], positive)
        self.b = _CellAUC(levels[1], positive)

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        return self.a(weights) - self.b(weights)


def compare_auc(
    y_true: Any,
    score_a: Any,
    score_b: Any,
    groups: Any = None,
    *,
    method: str = RECOMMENDED,
    positive: Any = None,
    confidence_level: float = 0.95,
    scheme: str | None = None,
    interval: str = "percentile",
    n_resamples: int = _N_RESAMPLES,
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
        The positive label, as in :func:`auc_ci`.
    confidence_level : float, default 0.95
        Confidence level.
    scheme, interval, n_resamples, rng, batch
        Bootstrap options, as in :func:`auc_ci` (``method="bootstrap"`` only, but `rng`
        and `batch`, which the DeLong method ignores).

    Returns
    -------
    RocAucComparison
        The AUCs of A and B, their difference with its interval, DeLong's standard error,
        test and p-value, and the correlation of the two estimates.

    Raises
    ------
    ValueError
        As :func:`auc_ci`; also for `score_b` of another length than `score_a`.

    Warns
    -----
    DegenerateIntervalWarning
        When the standard error of the difference is 0 (identical scores, or both
        perfectly separating): the DeLong interval is the single point of the difference
        and the p-value 1 if the difference is 0, else 0, as in R pROC.

    Notes
    -----
    DeLong's paired covariance [1]_: with each text's scaled placement deviations
    :math:`d^A_t, d^B_t` for the two scores (see :func:`placements`), the variance of the
    difference is

    .. math::

        \widehat{\mathrm{var}}(\hat\theta_A - \hat\theta_B)
        = \frac{P}{P - 1}\sum_{\text{positives}} (d^A_t - d^B_t)^2
        + \frac{N}{N - 1}\sum_{\text{negatives}} (d^A_t - d^B_t)^2,

    i.e. :math:`L S L^\top` with :math:`S = S_{10}/P + S_{01}/N` the 2 x 2 DeLong
    covariance and :math:`L = (1, -1)`: R pROC's ``roc.test(method = "delong", paired =
    TRUE)``, whose z statistic, p-value and interval the tests reproduce to 1e-8. With
    `groups`, Obuchowski's clustered covariance [2]_, :math:`\frac{I}{I-1}\sum_i (u^A_i -
    u^B_i)^2` with :math:`u_i` the person's summed deviations, and the t distribution on
    the effective number of persons minus one (:func:`auc_ci`). The paired bootstrap
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


def compare_auc_named(
    y_true: Any,
    scores: dict[str, Any],
    groups: Any,
    *,
    method: str,
    positive: Any,
    confidence_level: float,
    scheme: str | None,
    interval: str,
    n_resamples: int,
    rng: Any,
    batch: int | None,
) -> RocAucComparison:
    """:func:`compare_auc` of the two scores named by `scores`' keys (the caller's arguments)."""
    level, n_resamples, generator = _auc_options_iv(
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
    data = read_scores(y_true, scores, groups, positive)
    est_a, dev_a = placements(data.positive, data.scores[0])
    est_b, dev_b = placements(data.positive, data.scores[1])
    diff = est_a - est_b
    variance, clustered, df, how = _delong_parts(data, dev_a - dev_b)
    var_a = _delong_parts(data, dev_a)[0]
    var_b = _delong_parts(data, dev_b)[0]
    se = math.sqrt(variance)
    with np.errstate(invalid="ignore", divide="ignore"):
        correlation = float((var_a + var_b - variance) / (2 * np.sqrt(var_a * var_b)))
    if se == 0:
        _warn_zero_width("DeLong interval of the ROC AUC difference")
        p_value = 1.0 if diff == 0 else 0.0
    else:
        t = diff / se
        p_value = float(2 * special.stdtr(df, -abs(t)))  # the normal tail at df = inf
    test = "clustered paired DeLong t" if clustered else "paired DeLong z"
    boot = None
    if method == "bootstrap":
        boot, used = _bootstrap(
            data,
            f"{_METRIC} difference",
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
        metric=_METRIC,
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
