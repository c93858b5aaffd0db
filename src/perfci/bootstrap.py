"""Bootstrap confidence intervals that resample counts, not rows.

Resampling n texts with replacement from a sample with cell counts c is a single
multinomial draw, Multinomial(n, c / n); resampling persons is a multinomial draw of how
often each person is taken; resampling texts within a person taken w times is
Multinomial(w n_i, that person's cell shares). Every resample is therefore a handful of
binomial draws, whatever the number of texts, and all resamples of a batch are drawn as
one array.

Random streams: the generator given as `rng` spawns two child generators, one for
person draws and one for text draws (the hierarchical scheme spawns one stream per
conditional-binomial stage from the text stream). Every stream is consumed resample by
resample, so results do not depend on `batch`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import fft as scipy_fft
from scipy import special, stats

from ._core.validation import (
    UndefinedMetricWarning,
    check_choice,
    check_confidence_level,
    check_real_array,
)
from .counting import ConfusionCounts, one_vs_rest
from .metrics import BINARY_METRICS, METRICS, metric_values

__all__ = [
    "BOOTSTRAP_INTERVALS",
    "SCHEMES",
    "BootstrapCI",
    "DegenerateBootstrapWarning",
    "bootstrap_ci",
    "exact_percentile_bounds",
]

#: Resampling schemes: texts, persons, or persons then texts within persons.
SCHEMES = ("iid", "cluster", "hierarchical")
#: Bootstrap interval types.
BOOTSTRAP_INTERVALS = ("percentile", "bca")

# Metrics unchanged when the raters swap roles (fp and fn trade places).
_RATER_SYMMETRIC = frozenset({"accuracy", "f1", "ppa", "pna", "kappa", "mcc"})
# Share of dropped (undefined) replicates above which a warning is raised.
_INVALID_WARN_SHARE = 0.10
# Largest (texts, successes) grid for the exact person-resampling distribution.
_EXACT_GRID_CELLS = 1 << 20
# Numbers held per batch of resamples when `batch` is None (about 64 MB of floats).
_AUTO_BATCH_ELEMENTS = 8_000_000


class DegenerateBootstrapWarning(RuntimeWarning):
    """The BCa interval could not be formed and the percentile interval was used."""


@dataclass(frozen=True)
class _Statistic:
    """A metric as a function of flat cell counts ``(..., n_cells)``."""

    metric: str
    n_cells: int
    fn: Callable[[np.ndarray], np.ndarray]


def _statistic(metric: str, k: int | None) -> _Statistic:
    if metric == "proportion":

        def proportion(cells: np.ndarray) -> np.ndarray:
            total = cells.sum(-1)
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(total > 0, cells[..., 0] / np.where(total > 0, total, 1), np.nan)

        return _Statistic(metric, 2, proportion)
    if metric in BINARY_METRICS:
        return _Statistic(metric, 4, lambda cells: metric_values(cells, metric))

    def multiclass(cells: np.ndarray) -> np.ndarray:
        matrix = cells.reshape(*cells.shape[:-1], k, k)
        return metric_values(one_vs_rest(matrix), metric)

    return _Statistic(metric, k * k, multiclass)


def _shape_counts(counts: Any, metric: str, scheme: str) -> tuple[np.ndarray, _Statistic]:
    """Validate counts; return flat cells ``(C,)`` for iid or ``(m, C)`` per person."""
    if isinstance(counts, ConfusionCounts) and counts.matrix is not None:
        counts = counts.matrix
    arr = check_real_array("counts", np.asarray(counts))
    if np.any(arr < 0):
        raise ValueError("`counts` must be non-negative.")
    if np.any(arr != np.round(arr)):
        raise ValueError("`counts` must be whole numbers: a bootstrap resamples texts.")
    if metric == "proportion":
        cell_ndim, k, what = 1, None, "[successes, failures]"
        ok = arr.ndim >= 1 and arr.shape[-1] == 2
    elif metric in BINARY_METRICS:
        cell_ndim, k, what = 1, None, "[tp, fp, fn, tn]"
        ok = arr.ndim >= 1 and arr.shape[-1] == 4
    else:
        cell_ndim, what = 2, "a k x k confusion matrix (rows: reference, columns: classifier)"
        k = arr.shape[-1] if arr.ndim >= 2 else 0
        ok = arr.ndim >= 2 and arr.shape[-2] == k and k >= 2
    if not ok or arr.ndim > cell_ndim + 1:
        raise ValueError(
            f"`counts` for metric {metric!r} must hold {what}, optionally one per person "
            f"(persons first); got shape {arr.shape}."
        )
    statistic = _statistic(metric, k)
    has_persons = arr.ndim == cell_ndim + 1
    cells = arr.reshape(*arr.shape[: arr.ndim - cell_ndim], statistic.n_cells)
    if metric in _RATER_SYMMETRIC:
        # Of the two orientations (fp and fn as they are, or swapped) keep the one whose
        # canonical form is smaller: swapping which rater is "truth" then gives the very
        # same input, so the same interval draw for draw.
        swapped = cells[..., [0, 2, 1, 3]]
        if _canonical_key(swapped, scheme) < _canonical_key(cells, scheme):
            cells = swapped
    if scheme == "iid":
        return (cells.sum(0) if has_persons else cells), statistic
    if not has_persons:
        raise ValueError(
            f"`counts` for scheme {scheme!r} must have one row of cells per person; got "
            f"shape {arr.shape}."
        )
    # Resample every person with at least one text, so that one text per person gives
    # exactly the iid bootstrap of the same cells.
    cells = cells[cells.sum(-1) > 0]
    # A canonical order of persons makes the result invariant to how persons are
    # labelled or ordered, draw for draw, not only in distribution.
    return cells[np.lexsort(cells.T[::-1])], statistic


def _canonical_key(cells: np.ndarray, scheme: str) -> tuple:
    """Return a comparable form of cells: totals, then persons in their canonical order.

    The iid scheme adds persons up, so its totals decide alone.
    """
    flat = cells.reshape(-1, cells.shape[-1])
    totals = tuple(flat.sum(0).tolist())
    if scheme == "iid":
        return (totals,)
    return (totals, tuple(map(tuple, flat[np.lexsort(flat.T[::-1])].tolist())))


def is_positive_int(value: Any) -> bool:
    """Whether `value` is a positive integer (bools excluded)."""
    return not isinstance(value, bool) and isinstance(value, int | np.integer) and value >= 1


def check_pseudo_count(pseudo_count: Any) -> int:
    value = check_real_array("pseudo_count", pseudo_count)
    if value.ndim or value < 0 or value != np.round(value):
        raise ValueError(
            f"`pseudo_count` must be a non-negative whole number; got {pseudo_count!r}."
        )
    return int(value)


@dataclass(frozen=True, repr=False)
class BootstrapCI:
    r"""A bootstrap confidence interval for a metric.

    Attributes
    ----------
    estimate : float
        The metric on the observed counts (without pseudo counts).
    low, high : float
        The interval ends.
    confidence_level : float
        The confidence level.
    metric, scheme, interval : str
        What was resampled and how the interval was formed. `interval` is the interval
        asked for; see `bca_fallback`.
    pseudo_count : int
        Pseudo counts added per cell (iid) or held by one pseudo-person (cluster schemes).
    n_resamples : int or str
        Resamples drawn, or ``"exact"`` for the infinite-resample limit.
    n_invalid_resamples : int
        Resamples where the metric was undefined; they are dropped.
    standard_error : float
        Standard deviation of the valid replicates (exact for ``"exact"``).
    distribution : numpy.ndarray or None
        The valid bootstrap replicates, in draw order; None for ``"exact"``.
    bca_fallback : bool
        True if BCa was asked for but the percentile interval had to be used.
    fallback_reason : str or None
        Why BCa fell back to percentile.
    bias_correction, acceleration : float
        BCa's :math:`\hat z_0` and :math:`\hat a` (NaN for percentile intervals).
    n_clusters : int or None
        Persons resampled (without the pseudo-person); None for ``scheme="iid"``.
    n_texts : int
        Texts in the observed counts.
    """

    estimate: float
    low: float
    high: float
    confidence_level: float
    metric: str
    scheme: str
    interval: str
    pseudo_count: int
    n_resamples: int | str
    n_invalid_resamples: int
    standard_error: float
    distribution: np.ndarray | None
    bca_fallback: bool = False
    fallback_reason: str | None = None
    bias_correction: float = np.nan
    acceleration: float = np.nan
    n_clusters: int | None = None
    n_texts: int = 0

    @property
    def half_width(self) -> float:
        """Half the interval's width."""
        return (self.high - self.low) / 2

    def __repr__(self) -> str:
        method = self.interval + (" (fell back to percentile)" if self.bca_fallback else "")
        return (
            f"BootstrapCI(metric={self.metric!r}, scheme={self.scheme!r}, interval="
            f"{method!r}, pseudo_count={self.pseudo_count}, confidence_level="
            f"{self.confidence_level:g}, estimate={self.estimate:.6g}, low={self.low:.6g}, "
            f"high={self.high:.6g}, n_resamples={self.n_resamples!r}, "
            f"n_invalid_resamples={self.n_invalid_resamples})"
        )


def exact_percentile_bounds(
    x: np.ndarray, n: np.ndarray, confidence_level: np.ndarray, pseudo_count: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    r"""Infinite-resample percentile interval of a proportion, from binomial quantiles.

    The iid bootstrap of x successes in n texts with ``pseudo_count`` = λ draws
    :math:`X^* \sim \mathrm{Binomial}(n + 2λ, (x + λ)/(n + 2λ))`; its percentile
    interval with infinitely many resamples has the ends
    :math:`F^{-1}(q)/(n + 2λ)` at :math:`q = (1 \mp c)/2` (:math:`c` the confidence
    level), with :math:`F^{-1}` the
    binomial quantile function (the smallest k with :math:`F(k) \ge q`).
    """
    size = n + 2 * pseudo_count
    p = (x + pseudo_count) / size
    tail = (1 - confidence_level) / 2
    low = stats.binom.ppf(tail, size, p) / size
    high = stats.binom.ppf(1 - tail, size, p) / size
    return low, high


def _bootstrap_iv(
    counts, metric, scheme, interval, pseudo_count, n_resamples, confidence_level, batch
):
    check_choice("metric", metric, ("proportion", *METRICS))
    check_choice("scheme", scheme, SCHEMES)
    check_choice("interval", interval, BOOTSTRAP_INTERVALS)
    level = check_confidence_level(confidence_level)
    if level.ndim:
        raise ValueError("`confidence_level` must be a single number.")
    lam = check_pseudo_count(pseudo_count)
    exact = isinstance(n_resamples, str)
    if exact:
        if n_resamples != "exact":
            raise ValueError(
                f"`n_resamples` must be a positive integer or 'exact'; got {n_resamples!r}."
            )
        if metric != "proportion" or scheme != "iid" or interval != "percentile":
            raise ValueError(
                "`n_resamples='exact'` is available for metric='proportion' with "
                "scheme='iid' and interval='percentile' only."
            )
    elif not is_positive_int(n_resamples):
        raise ValueError(
            f"`n_resamples` must be a positive integer or 'exact'; got {n_resamples!r}."
        )
    if batch is not None and not is_positive_int(batch):
        raise ValueError(f"`batch` must be a positive integer or None; got {batch!r}.")
    cells, statistic = _shape_counts(counts, metric, scheme)
    if scheme != "iid" and cells.shape[0] < 1:
        raise ValueError("`counts` must hold at least one person with texts.")
    if cells.sum() == 0:
        raise ValueError("`counts` must hold at least one text.")
    return cells, statistic, lam, float(level), exact


def _conditional_shares(shares: np.ndarray) -> np.ndarray:
    """P(cell c | not in cells before c) for each row of cell shares."""
    remaining = np.cumsum(shares[..., ::-1], axis=-1)[..., ::-1]  # shares of cells c..C-1
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(remaining > 0, shares / np.where(remaining > 0, remaining, 1), 0.0)
    return np.clip(cond[..., :-1], 0.0, 1.0)


def _multinomial_by_stages(
    sizes: np.ndarray, conditional: np.ndarray, stage_rngs: list[np.random.Generator]
) -> np.ndarray:
    """Multinomial draws as C - 1 conditional binomial stages, one stream per stage.

    Each row may have its own size and shares; this is several times faster than
    ``Generator.multinomial`` with a different probability vector per row.
    """
    left = sizes.astype(np.int64)
    out = np.empty((sizes.size, conditional.shape[-1] + 1))
    for c, stage_rng in enumerate(stage_rngs):
        out[:, c] = stage_rng.binomial(left, conditional[:, c])
        left = left - out[:, c].astype(np.int64)
    out[:, -1] = left
    return out


def _exact_person_distribution(
    cells: np.ndarray, scheme: str, n_resamples: int
) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]] | None:
    """Exact bootstrap distribution of a pooled proportion under person resampling.

    A resample takes m persons independently and uniformly; each taken person i brings
    n_i texts and x successes, x = y_i (cluster) or x ~ Binomial(n_i, y_i / n_i)
    (hierarchical). The resample's (texts, successes) is therefore the sum of m iid
    pairs, and its distribution is the m-fold convolution of one pick's distribution,
    computed with a 2-D FFT. Returns the cumulative probabilities over the flattened
    grid and a function from grid cells to proportions; or None when the grid is larger
    than the m x `n_resamples` draws that simulation would need (then simulation is
    faster) or than :data:`_EXACT_GRID_CELLS`.
    """
    m = cells.shape[0]
    sizes = cells.sum(-1).astype(np.int64)
    n_min, n_max = int(sizes.min()), int(sizes.max())
    rows, cols = m * (n_max - n_min) + 1, m * n_max + 1
    if rows * cols > min(_EXACT_GRID_CELLS, m * n_resamples):
        return None
    one_pick = np.zeros((n_max - n_min + 1, n_max + 1))
    if scheme == "cluster":
        np.add.at(one_pick, (sizes - n_min, cells[:, 0].astype(np.int64)), 1.0 / m)
    else:
        k = np.arange(n_max + 1)
        pmf = stats.binom.pmf(k[None, :], sizes[:, None], cells[:, :1] / sizes[:, None])
        np.add.at(one_pick, sizes - n_min, pmf / m)
    # Zero padding to fast FFT lengths at least the full support: no wrap-around.
    shape = tuple(scipy_fft.next_fast_len(k, real=True) for k in (rows, cols))
    total = scipy_fft.irfft2(scipy_fft.rfft2(one_pick, s=shape) ** m, s=shape)
    total = np.clip(total[:rows, :cols], 0.0, None)  # round-off leaves tiny negatives
    cdf = np.cumsum(total.ravel())

    def value_of(cell: np.ndarray) -> np.ndarray:
        r, s = np.divmod(cell, cols)
        return s / (r + m * n_min)

    return cdf, value_of


def _draw_replicates(
    cells: np.ndarray,
    scheme: str,
    n_resamples: int,
    batch: int,
    person_rng: np.random.Generator,
    text_rng: np.random.Generator,
    statistic: _Statistic,
) -> np.ndarray:
    """Replicates of the statistic, drawn batch by batch from (augmented) cells."""
    out = np.empty(n_resamples)
    m, n_cells = (1, cells.size) if scheme == "iid" else cells.shape
    sizes = cells.sum(-1).astype(np.int64)
    shares = cells / np.atleast_1d(sizes)[..., None] if scheme != "iid" else cells / sizes
    if scheme == "hierarchical":
        conditional = _conditional_shares(shares)
        # One stream per stage keeps every stream consumed in resample order.
        stage_rngs = text_rng.spawn(n_cells - 1)
    for start in range(0, n_resamples, batch):
        b = min(batch, n_resamples - start)
        if scheme == "iid":
            drawn = text_rng.multinomial(sizes, shares, size=b)
        else:
            # How often each person is taken: m uniform draws counted per resample, the
            # Multinomial(m, 1/m) of the cluster bootstrap, and much faster to draw.
            pick = person_rng.integers(0, m, size=(b, m))
            rows = np.arange(b)[:, None] * m
            taken = np.bincount((rows + pick).ravel(), minlength=b * m).reshape(b, m)
            if scheme == "cluster":
                drawn = taken @ cells
            else:
                # A person taken w times contributes Multinomial(w * n_i, shares_i);
                # persons not taken contribute nothing and need no draw.
                resample, person = np.nonzero(taken)
                within = _multinomial_by_stages(
                    taken[resample, person] * sizes[person], conditional[person], stage_rngs
                )
                drawn = np.stack(
                    [np.bincount(resample, weights=w, minlength=b) for w in within.T], axis=-1
                )
        out[start : start + b] = statistic.fn(np.asarray(drawn, dtype=float))
    return out


def _jackknife(cells: np.ndarray, scheme: str, statistic: _Statistic):
    """Leave-one-out values and their weights (one text of each kind, or one person)."""
    if scheme == "iid":
        kinds = np.flatnonzero(cells > 0)
        left_out = cells[None, :] - np.eye(cells.size)[kinds]
        return statistic.fn(left_out), cells[kinds]
    total = cells.sum(0)
    return statistic.fn(total[None, :] - cells), np.ones(cells.shape[0])


def _bca_levels(replicates, theta_hat, jack_values, jack_weights, level):
    """BCa's adjusted quantile levels, z0 and a; or a reason it cannot be formed."""
    if np.all(replicates == replicates[0]):
        return None, np.nan, np.nan, "the bootstrap distribution is a single value"
    below = np.mean(replicates < theta_hat) + 0.5 * np.mean(replicates == theta_hat)
    if below in (0.0, 1.0) or np.isnan(theta_hat):
        return None, np.nan, np.nan, "the estimate lies outside the bootstrap distribution"
    z0 = special.ndtri(below)
    if np.isnan(jack_values).any():
        return None, z0, np.nan, "the metric is undefined for a leave-one-out jackknife sample"
    # Sums over all n leave-one-out samples: each distinct value times its multiplicity.
    w = jack_weights
    dev = (w * jack_values).sum() / w.sum() - jack_values
    spread = (w * dev**2).sum()
    # No jackknife spread means no skewness to correct for: the acceleration is 0.
    a = 0.0 if spread == 0 else (w * dev**3).sum() / (6 * spread**1.5)
    z = special.ndtri(np.array([(1 - level) / 2, (1 + level) / 2]))
    if np.any(1 - a * (z0 + z) <= 0):
        return None, z0, a, "the acceleration is too large for the BCa formula"
    adjusted = special.ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))
    return adjusted, z0, a, None


def bootstrap_ci(
    counts: Any,
    metric: str,
    scheme: str = "iid",
    interval: str = "percentile",
    pseudo_count: int = 0,
    n_resamples: int | str = 2000,
    confidence_level: float = 0.95,
    *,
    rng: Any = None,
    batch: int | None = None,
) -> BootstrapCI:
    r"""Bootstrap confidence interval for a metric, resampling counts.

    Parameters
    ----------
    counts : array_like or ConfusionCounts
        For ``metric="proportion"``: ``[successes, failures]``; for a binary metric:
        ``[tp, fp, fn, tn]``; for ``macro_*``/``micro_*``: the k x k confusion matrix
        (or a multi-class :class:`ConfusionCounts`). With a leading person axis (one
        row of cells per person) for ``"cluster"`` and ``"hierarchical"``; ``"iid"``
        adds persons up. Whole, non-negative numbers.
    metric : str
        ``"proportion"`` or any name in :data:`perfci.METRICS`.
    scheme : {"iid", "cluster", "hierarchical"}, default "iid"
        Resample texts; persons with all their texts; or persons, then texts within
        each drawn person.
    interval : {"percentile", "bca"}, default "percentile"
        Percentile or bias-corrected and accelerated interval.
    pseudo_count : int, default 0
        λ of the pseudo-count regularized bootstrap: λ successes and λ failures (a
        proportion) or λ in each cell (a confusion matrix) are added before
        resampling, or, for the cluster schemes, one pseudo-person holding them is
        drawn among the m + 1 persons.
    n_resamples : int or "exact", default 2000
        Number of resamples; ``"exact"`` gives the infinite-resample percentile
        interval of a proportion with ``scheme="iid"`` from binomial quantiles.
    confidence_level : float, default 0.95
        Confidence level.
    rng : numpy.random.Generator, int or None, keyword-only
        Random generator or seed.
    batch : int or None, keyword-only
        Resamples drawn at once, bounding memory; the result does not depend on it.
        Default: as many as fit in about 64 MB.

    Returns
    -------
    BootstrapCI
        The interval, the replicates, their standard error, the number of dropped
        resamples and, for BCa, :math:`\hat z_0`, :math:`\hat a` and any fallback.

    Raises
    ------
    ValueError
        For unknown names; counts of the wrong shape (a cluster scheme without a person
        axis), negative or fractional counts; ``n_resamples < 1``; ``"exact"`` other than
        for a proportion with the iid percentile bootstrap; a fractional or negative
        `pseudo_count`; a `batch` below 1; or a metric undefined in every resample.

    Warns
    -----
    UndefinedMetricWarning
        When more than 10% of resamples have an undefined metric (they are dropped),
        or the metric is undefined on the observed counts.
    DegenerateBootstrapWarning
        When BCa cannot be formed and the percentile interval is returned instead.

    Notes
    -----
    With :math:`c` the confidence level and :math:`B` the number of *valid*
    replicates:

    *Percentile*: the :math:`(1-c)/2` and :math:`(1+c)/2` quantiles of the valid
    replicates, with linear interpolation between order statistics (NumPy's default,
    Hyndman and Fan's type 7, as :func:`scipy.stats.bootstrap` uses).

    *BCa* [1]_: :math:`\hat z_0 = \Phi^{-1}(\#\{\theta^* < \hat\theta\}/B +
    \tfrac12\#\{\theta^* = \hat\theta\}/B)` and
    :math:`\hat a = \sum(\bar\theta - \theta_{(i)})^3 / 6[\sum(\bar\theta -
    \theta_{(i)})^2]^{3/2}` from the jackknife, leaving out one text of each kind
    (weighted by its count) for ``"iid"`` and one person for the cluster schemes; the
    interval is the percentile interval at levels
    :math:`\Phi(\hat z_0 + (\hat z_0 + z_q)/(1 - \hat a(\hat z_0 + z_q)))`. With pseudo
    counts, :math:`\hat\theta` and the jackknife are those of the augmented sample
    the bootstrap resamples. If every replicate is equal, or the estimate lies outside
    the replicates, or a jackknife value is undefined, or
    :math:`1 - \hat a(\hat z_0 + z_q) \le 0`, the percentile interval is returned with
    ``bca_fallback=True``.

    *Pseudo counts* [2]_: with λ > 0 each replicate is the metric of a resample of the
    augmented sample, of size n + 2λ (proportion), n + 4λ (confusion matrix) or
    n + k²λ (k x k matrix) for ``"iid"``.

    *Persons*: the cluster schemes resample every person with at least one text in
    `counts` (`n_clusters` counts them), as the iid scheme resamples every text; with
    one text per person both give the same bootstrap distribution. To resample only
    the persons with a relevant text (as :func:`clustered_proportion_ci` counts them),
    pass their ``[successes, failures]`` with ``metric="proportion"``.

    References
    ----------
    .. [1] Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap,
       ch. 14. Chapman & Hall.
    .. [2] Anglin, K. "Estimating uncertainty in classifier performance with
       applications to large language models and nested data", sections 2.2 and 4.3.

    Examples
    --------
    F1 with the pseudo-count regularized bootstrap (λ = 1):

    >>> import perfci as pc
    >>> ci = pc.bootstrap_ci([40, 6, 9, 345], "f1", pseudo_count=1, rng=1)
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    0.842 [0.737, 0.901]

    The exact infinite-resample percentile interval of 19 successes in 20:

    >>> ci = pc.bootstrap_ci([19, 1], "proportion", pseudo_count=1, n_resamples="exact")
    >>> print(ci.low, ci.high)
    0.7727272727272727 1.0

    A hierarchical bootstrap over persons (rows of [tp, fp, fn, tn]):

    >>> per_person = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [2, 0, 0, 9]]
    >>> ci = pc.bootstrap_ci(per_person, "recall", scheme="hierarchical",
    ...                      pseudo_count=1, n_resamples=5000, rng=7)
    >>> print(f"[{ci.low:.3f}, {ci.high:.3f}] from {ci.n_clusters} persons")
    [0.545, 1.000] from 4 persons
    """
    cells, statistic, lam, level, exact = _bootstrap_iv(
        counts, metric, scheme, interval, pseudo_count, n_resamples, confidence_level, batch
    )
    if exact:
        x, n = float(cells[0]), float(cells.sum())
        estimate = x / n
        low, high = exact_percentile_bounds(np.array(x), np.array(n), np.array(level), lam)
        size = n + 2 * lam
        p = (x + lam) / size
        return BootstrapCI(
            estimate,
            float(low),
            float(high),
            level,
            metric,
            scheme,
            interval,
            lam,
            "exact",
            0,
            float(np.sqrt(p * (1 - p) / size)),
            None,
            n_texts=int(n),
        )

    return resampled_ci(
        cells,
        statistic,
        scheme=scheme,
        interval=interval,
        pseudo_count=lam,
        n_resamples=int(n_resamples),
        confidence_level=level,
        rng=rng,
        batch=batch,
    )


def resampled_ci(
    cells: np.ndarray,
    statistic: _Statistic,
    *,
    scheme: str,
    interval: str,
    pseudo_count: int,
    n_resamples: int,
    confidence_level: float,
    rng: Any,
    batch: int | None,
) -> BootstrapCI:
    """Bootstrap interval of any statistic of validated cells, ``(C,)`` or ``(m, C)``.

    The engine behind :func:`bootstrap_ci` and :func:`perfci.compare`.
    """
    metric, lam, level = statistic.metric, pseudo_count, confidence_level
    observed_total = cells if scheme == "iid" else cells.sum(0)
    estimate = float(statistic.fn(observed_total.astype(float)))
    n_texts = int(observed_total.sum())
    n_clusters = None if scheme == "iid" else int(cells.shape[0])

    # The sample the bootstrap resamples: pseudo counts per cell, or a pseudo-person.
    if scheme == "iid":
        augmented = cells + lam
    elif lam:
        augmented = np.vstack([cells, np.full(statistic.n_cells, lam)])
    else:
        augmented = cells
    width = augmented.size if scheme == "hierarchical" else statistic.n_cells
    if batch is None:
        batch = max(1, _AUTO_BATCH_ELEMENTS // max(width, 1))
    person_rng, text_rng = np.random.default_rng(rng).spawn(2)
    exact = None
    if metric == "proportion" and scheme != "iid":
        exact = _exact_person_distribution(augmented, scheme, int(n_resamples))
    if exact is not None:
        # Draws from the exact bootstrap distribution: the same distribution as
        # resampling persons (and texts), at the cost of one uniform per resample.
        cdf, value_of = exact
        replicates = np.empty(int(n_resamples))
        for start in range(0, int(n_resamples), int(batch)):
            u = text_rng.random(min(int(batch), int(n_resamples) - start))
            cell = np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), cdf.size - 1)
            replicates[start : start + u.size] = value_of(cell)
    else:
        replicates = _draw_replicates(
            augmented, scheme, int(n_resamples), int(batch), person_rng, text_rng, statistic
        )
    valid = replicates[~np.isnan(replicates)]
    n_invalid = int(replicates.size - valid.size)
    if valid.size == 0:
        raise ValueError(
            f"`metric` {metric!r} is undefined in every resample of these counts "
            "(its denominator is always zero); no interval exists."
        )
    if np.isnan(estimate):
        warnings.warn(
            f"{metric} is undefined on the observed counts; the estimate is NaN.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    if n_invalid > _INVALID_WARN_SHARE * replicates.size:
        warnings.warn(
            f"{metric} was undefined in {n_invalid} of {replicates.size} resamples "
            f"({100 * n_invalid / replicates.size:.1f}%); they were dropped.",
            UndefinedMetricWarning,
            stacklevel=2,
        )

    quantile_levels = np.array([(1 - level) / 2, (1 + level) / 2])
    z0 = a = np.nan
    reason = None
    if interval == "bca":
        aug_total = augmented if scheme == "iid" else augmented.sum(0)
        theta_hat = float(statistic.fn(aug_total.astype(float)))
        jack_values, jack_weights = _jackknife(augmented.astype(float), scheme, statistic)
        adjusted, z0, a, reason = _bca_levels(valid, theta_hat, jack_values, jack_weights, level)
        if reason is None:
            quantile_levels = adjusted
        else:
            warnings.warn(
                f"BCa interval not available ({reason}); returning the percentile interval.",
                DegenerateBootstrapWarning,
                stacklevel=2,
            )
    low, high = np.quantile(valid, quantile_levels)
    return BootstrapCI(
        estimate=estimate,
        low=float(low),
        high=float(high),
        confidence_level=level,
        metric=metric,
        scheme=scheme,
        interval=interval,
        pseudo_count=lam,
        n_resamples=int(n_resamples),
        n_invalid_resamples=n_invalid,
        standard_error=float(np.std(valid, ddof=1)) if valid.size > 1 else np.nan,
        distribution=valid,
        bca_fallback=reason is not None,
        fallback_reason=reason,
        bias_correction=float(z0),
        acceleration=float(a),
        n_clusters=n_clusters,
        n_texts=n_texts,
    )
