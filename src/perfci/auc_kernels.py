r"""The ROC AUC's kernels: placements, DeLong's and Obuchowski's variances, interval ends.

The computations behind the intervals of one score (:mod:`perfci.auc`) and the paired
comparison of two (:mod:`perfci.auc_comparison`), on arrays:

- :func:`placements`: the AUC and each text's scaled placement deviation (midranks, as
  R pROC computes them); :func:`delong_parts`: DeLong's variance of a sum of those
  deviations, or Obuchowski's clustered one with persons, with the df of its t quantile;
- :func:`delong_ends`: the interval ends on the plain and the logit scale, and the
  warnings of zero-width or undefined intervals (:func:`warn_delong`,
  :func:`warn_zero_width`, :class:`DegenerateIntervalWarning`);
- :class:`CellAUC`: the AUC of weighted (score level, label) cells, which the
  bootstraps evaluate on every resample, and the bootstrap of the counts at each score
  level (:func:`bootstrap_level_counts`);
- :func:`jackknife_of_persons`: the AUC of pairs from different persons and its
  leave-one-person-out standard error.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from scipy import special

from ._core.replicates import (
    MIN_PERSONS,
    canonical_cells,
    resample_intervals,
    warn_about,
)
from ._core.resampling import Statistic
from ._core.validation import UndefinedMetricWarning, dataset_generators
from .bootstrap import BootstrapCI, assemble
from .design import effective_clusters
from .scores import ROC_AUC, Scores

__all__ = [
    "CellAUC",
    "DegenerateIntervalWarning",
    "bootstrap_level_counts",
    "check_some_valid",
    "delong_ends",
    "delong_welch_df",
    "welch_satterthwaite_df",
    "delong_parts",
    "jackknife_of_persons",
    "placements",
    "warn_delong",
    "warn_zero_width",
]


class DegenerateIntervalWarning(RuntimeWarning):
    """An interval has zero width: the data show no variation to estimate a variance from."""


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
    Every DeLong variance is a sum of squares of these deviations (see :func:`perfci.auc_ci`).

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.auc_kernels import placements
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


def welch_satterthwaite_df(part_pos: Any, part_neg: Any, n_pos: Any, n_neg: Any) -> Any:
    """Welch and Satterthwaite's df of DeLong's variance ``part_pos + part_neg`` (>= 1).

    The two parts are sample variances (over ``n_pos`` positives and ``n_neg``
    negatives) of placement values, each over its count; inf where the df are undefined
    (no variance, fewer than 2 of either): the normal quantile. Vectorized.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (part_pos + part_neg) ** 2 / (part_pos**2 / (n_pos - 1) + part_neg**2 / (n_neg - 1))
    return np.where(np.isfinite(df), np.maximum(df, 1.0), math.inf)


def delong_welch_df(positive: np.ndarray, deviation: np.ndarray) -> float:
    """:func:`welch_satterthwaite_df` of one data set's placement deviations."""
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos < 2 or n_neg < 2:
        return math.inf
    part_pos = np.sum(deviation[positive] ** 2) * n_pos / (n_pos - 1)
    part_neg = np.sum(deviation[~positive] ** 2) * n_neg / (n_neg - 1)
    return float(welch_satterthwaite_df(part_pos, part_neg, n_pos, n_neg))


def _clustered_variance(person: np.ndarray, deviation: np.ndarray, m: int) -> float:
    """Obuchowski's variance I/(I - 1) sum_i u_i^2, u_i the person's summed deviations."""
    u = np.bincount(person, weights=deviation, minlength=m)
    return float(m / (m - 1) * np.sum(u * u))


def _effective_persons(person: np.ndarray, m: int) -> float:
    """Kish's effective number of persons over their texts (``effective_clusters``)."""
    return float(effective_clusters(np.bincount(person, minlength=m)))


def delong_parts(
    data: Scores, deviation: np.ndarray, floored: bool = False
) -> tuple[float, bool, float, str]:
    """Variance, clustered or not, df and a description of the DeLong variance.

    With `floored`, Obuchowski's clustered variance is no smaller than DeLong's
    unclustered one (where that exists): the logit interval's, as an ICC estimate is
    truncated at 0 (:data:`perfci.policy.AUC_CLUSTERED_VARIANCE_FLOOR`).
    """
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
        how = f"clustered: Obuchowski, t with {df:.3g} df"
        if floored and data.n_positive >= 2 and data.n_negative >= 2:
            variance = max(variance, _delong_variance(data.positive, deviation))
            how = f"clustered: Obuchowski floored at DeLong, t with {df:.3g} df"
        return variance, True, df, how
    if data.n_positive < 2 or data.n_negative < 2:
        raise ValueError(
            "`y_true` must hold at least 2 positive and 2 negative texts for the DeLong "
            "variance (a sample variance over each); got "
            f"{data.n_positive} positive and {data.n_negative} negative. Use "
            "method='bootstrap'."
        )
    return _delong_variance(data.positive, deviation), False, math.inf, ""


def delong_ends(
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


def warn_zero_width(what: str, stacklevel: int = 3) -> None:
    """Warn that the interval `what` has zero width: a standard error of 0."""
    warnings.warn(
        f"the {what} has zero width: the standard error is 0 (every score tied, or the "
        "positives and negatives perfectly separated), so the data show no variation to "
        "estimate it from; this is R pROC's interval, and it claims a certainty the data do "
        "not give.",
        DegenerateIntervalWarning,
        stacklevel=stacklevel,
    )


def warn_delong(
    estimate: np.ndarray,
    se: np.ndarray,
    method: str,
    batched: bool,
    *,
    name: str | None = None,
    width: np.ndarray | None = None,
) -> None:
    """Warn of zero-width DeLong intervals and of logit intervals at an AUC of 0 or 1.

    Once per kind; for a batch, the warning says in how many data sets. `name` is the
    interval's name in the messages (default the DeLong method's); with `width` (the
    final intervals' widths) only intervals of zero width are warned of as such.
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
            f"the {name or 'logit-scale DeLong'} interval of the ROC AUC is undefined: {what} (the "
            "classes are perfectly separated), whose logit is infinite, and the standard "
            "error is 0; returning NaN.",
            UndefinedMetricWarning,
            stacklevel=4,
        )
    zero = defined & (se == 0)
    if width is not None:
        zero &= np.asarray(width) == 0
    if method == "delong_logit":
        zero &= ~edge  # no interval at all there, warned above
    if zero.any():
        name = name or ("DeLong" if method == "delong" else "logit-scale DeLong")
        count = "" if not batched else f" in {int(zero.sum())} of {estimate.size} data sets"
        warn_zero_width(f"{name} interval of the ROC AUC{count}", stacklevel=5)


class CellAUC:
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
        """Return the AUC of each row of cell weights ``(..., K)`` (NaN without both classes)."""
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


def check_some_valid(boot: BootstrapCI) -> None:
    """Refuse a bootstrap of scores in which no resample holds both classes."""
    if boot.n_invalid_resamples == boot.n_resamples:
        raise ValueError(
            "`y_true` has too few positives or negatives for the bootstrap: no resample "
            "holds both, so no interval exists."
        )


def _between_pairs(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concordant pair weight (ties half) and pairs of positives and negatives ``(..., L)``."""
    below = np.cumsum(neg, axis=-1) - neg
    return np.sum(pos * (below + 0.5 * neg), axis=-1), pos.sum(-1) * neg.sum(-1)


def jackknife_of_persons(
    pos: np.ndarray, neg: np.ndarray, bias_min_persons: float = math.inf
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Return the between-person AUC and its leave-one-person-out jackknife SE (logit scale).

    `pos`, `neg` are ``(..., persons, levels)``. The AUC of pairs from different persons
    is :math:`(W - \sum_i W_i)/(PN - \sum_i P_i N_i)`, with W the concordant weight of
    all pairs and :math:`W_i` that of person i's own pairs. Returns the estimate, the SE
    of its logit (the SE of the estimate is this times
    :math:`\hat\theta(1 - \hat\theta)`, which is what is returned, so that the logit
    interval of :func:`delong_ends` uses it as it uses DeLong's), the df
    :math:`G^* - 1`, where no interval exists, and the interval's centre: the estimate,
    or from `bias_min_persons` persons the jackknife's bias-corrected logit
    :math:`G\,\mathrm{logit}\,\hat\theta - (G - 1)\,\overline{\mathrm{logit}\,
    \hat\theta_{(-i)}}` back-transformed, with the SE of the logit scaled to the centre
    as `se` is to the estimate (:func:`delong_ends` of the centre and that SE is the
    interval).
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
        corrected = persons * special.logit(estimate) - (persons - 1) * center
        centre = np.where(persons >= bias_min_persons, special.expit(corrected), estimate)
        centre_se = se_logit * centre * (1 - centre)
    undefined = ~np.isfinite(estimate) | (persons < 2) | ~np.isfinite(se)
    estimate = np.where(~np.isfinite(estimate), np.nan, estimate)
    se = np.where(undefined, np.nan, se)
    centre = np.where(undefined, np.nan, centre)
    centre_se = np.where(undefined, np.nan, centre_se)
    return estimate, se, df, undefined, centre, centre_se


def bootstrap_level_counts(
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
    """Bootstrap level counts (:func:`perfci.auc.auc_ci_counts`): cells are (level, label) pairs.

    `pos` and `neg` are ``(*batch, [persons,] levels)``; `scheme` None is hierarchical
    with persons, iid without. Returns the result and the scheme used.
    """
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
        ROC_AUC,
        2 * levels,
        CellAUC(np.tile(np.arange(levels), 2), np.repeat([True, False], levels)),
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
