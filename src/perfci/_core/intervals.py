"""Bootstrap replicates to intervals: percentile and BCa, for many data sets at once.

The one place that turns replicates into interval ends. Rows of ``replicates`` are data
sets; NaN marks a replicate whose metric was undefined (it is dropped). Everything is
vectorized over rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

__all__ = [
    "BCA_FALLBACK_REASONS",
    "BCaLevels",
    "bca_levels",
    "bca_levels_from",
    "exact_percentile_bounds",
    "percentile_levels",
    "type7_interpolate",
    "type7_positions",
    "type7_quantiles",
]

#: Why BCa falls back to the percentile interval, by code (0: it did not).
BCA_FALLBACK_REASONS = (
    None,
    "the bootstrap distribution is a single value",
    "the estimate lies outside the bootstrap distribution",
    "the metric is undefined for a leave-one-out jackknife sample",
    "the acceleration is too large for the BCa formula",
)


def percentile_levels(confidence_level: float, rows: int) -> np.ndarray:
    """Quantile levels ``(rows, 2)`` of the percentile interval: (1 -+ c)/2."""
    level = float(confidence_level)
    return np.broadcast_to(np.array([(1 - level) / 2, (1 + level) / 2]), (rows, 2)).copy()


def type7_quantiles(replicates: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Linear-interpolation quantiles of each row's valid (non-NaN) replicates.

    Parameters
    ----------
    replicates : numpy.ndarray
        ``(rows, B)``; NaN entries are left out.
    levels : numpy.ndarray
        ``(rows, q)`` quantile levels, one set per row.

    Returns
    -------
    numpy.ndarray
        ``(rows, q)``: Hyndman and Fan's type 7, computed as :func:`numpy.quantile`
        with ``method="linear"`` computes it (the same virtual index and the same
        two-sided interpolation), so that each row equals
        ``np.quantile(row[~np.isnan(row)], levels[i])``; NaN for a row without valid
        replicates.
    """
    ordered = np.sort(replicates, axis=-1)  # NaN sort last
    n_valid = np.sum(~np.isnan(replicates), axis=-1)[:, None]
    lo, hi, gamma = type7_positions(n_valid, levels)
    a = np.take_along_axis(ordered, lo, axis=-1)
    b = np.take_along_axis(ordered, hi, axis=-1)
    return np.where(n_valid > 0, type7_interpolate(a, b, gamma), np.nan)


def type7_positions(
    n_valid: np.ndarray, levels: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the two order statistics (0-based) and the weight of a type-7 quantile.

    `n_valid` ``(rows, 1)`` values per row, `levels` ``(rows, q)``; the quantile is
    :func:`type7_interpolate` of the `lo`-th and `hi`-th smallest values, as
    :func:`numpy.quantile` with ``method="linear"`` forms it.
    """
    n = np.asarray(n_valid, dtype=float)
    # numpy's virtual index for the linear method: n q + (1 + q (1 - 2)) - 1
    virtual = n * levels + (1 + levels * (1 - 1 - 1)) - 1
    below = np.floor(virtual)
    gamma = virtual - below
    last = np.maximum(n - 1, 0)
    lo = np.clip(below, 0, last).astype(np.int64)
    hi = np.clip(below + 1, 0, last).astype(np.int64)
    # numpy clips the virtual index to the ends before interpolating
    gamma = np.where(virtual < 0, 0.0, np.where(virtual >= last, 0.0, gamma))
    return lo, hi, gamma


def type7_interpolate(a: np.ndarray, b: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """NumPy's two-sided linear interpolation between order statistics `a` <= `b`."""
    diff = b - a
    return np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)


@dataclass(frozen=True)
class BCaLevels:
    """BCa's adjusted quantile levels per row, with z0, a and any fallback code."""

    levels: np.ndarray  # (rows, 2): BCa levels, or the percentile ones where it fell back
    bias_correction: np.ndarray  # (rows,)
    acceleration: np.ndarray  # (rows,)
    fallback: np.ndarray  # (rows,) int: index into BCA_FALLBACK_REASONS


def bca_levels(
    replicates: np.ndarray,
    theta_hat: np.ndarray,
    jack_values: np.ndarray,
    jack_weights: np.ndarray,
    confidence_level: float,
) -> BCaLevels:
    r"""BCa's adjusted quantile levels for every row (Efron and Tibshirani 1993, ch. 14).

    Parameters
    ----------
    replicates : numpy.ndarray
        ``(rows, B)`` replicates, NaN where undefined (dropped).
    theta_hat : numpy.ndarray
        ``(rows,)`` the statistic on the sample the bootstrap resampled.
    jack_values, jack_weights : numpy.ndarray
        ``(rows, J)`` distinct leave-one-out values and how many leave-one-out samples
        give each; weight-0 entries are padding.
    confidence_level : float
        Confidence level c.

    Returns
    -------
    BCaLevels
        :math:`\hat z_0 = \Phi^{-1}(\#\{\theta^* < \hat\theta\}/B +
        \tfrac12 \#\{\theta^* = \hat\theta\}/B)` over valid replicates; :math:`\hat a =
        \sum w d^3 / 6 (\sum w d^2)^{3/2}` with :math:`d = \bar\theta - \theta_{(i)}`
        (0 without jackknife spread); levels :math:`\Phi(\hat z_0 + (\hat z_0 + z_q) /
        (1 - \hat a(\hat z_0 + z_q)))`. Rows where BCa cannot be formed keep the
        percentile levels and a fallback code, checked in the order of
        :data:`BCA_FALLBACK_REASONS`.
    """
    valid = ~np.isnan(replicates)
    n_valid = valid.sum(-1)
    theta = np.asarray(theta_hat, dtype=float)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        first = np.take_along_axis(replicates, np.argmax(valid, -1)[:, None], -1)
        single = np.all(~valid | (replicates == first), -1)
        below = (
            np.sum(valid & (replicates < theta), -1)
            + 0.5 * np.sum(valid & (replicates == theta), -1)
        ) / n_valid
    return bca_levels_from(below, single, theta[:, 0], jack_values, jack_weights, confidence_level)


def bca_levels_from(
    below: np.ndarray,
    single: np.ndarray,
    theta_hat: np.ndarray,
    jack_values: np.ndarray,
    jack_weights: np.ndarray,
    confidence_level: float,
) -> BCaLevels:
    """:func:`bca_levels` from what it reads off the replicates.

    `below` is the share of valid replicates below the estimate (ties counted half) and
    `single` whether they are all equal, per row; the rest as :func:`bca_levels`.
    """
    rows = below.shape[0]
    level = float(confidence_level)
    with np.errstate(invalid="ignore", divide="ignore"):
        outside = (below == 0) | (below == 1) | np.isnan(theta_hat)
        z0 = special.ndtri(below)
        used = jack_weights > 0
        w = np.where(used, jack_weights, 0.0)
        jack = np.where(used, jack_values, 0.0)
        jack_undefined = np.any(used & np.isnan(jack_values), -1)
        mean = (w * jack).sum(-1, keepdims=True) / w.sum(-1, keepdims=True)
        dev = np.where(used, mean - jack, 0.0)
        spread = (w * dev**2).sum(-1)
        a = np.where(spread == 0, 0.0, (w * dev**3).sum(-1) / (6 * spread**1.5))
        z = special.ndtri(np.array([(1 - level) / 2, (1 + level) / 2]))
        denominator = 1 - a[:, None] * (z0[:, None] + z)
        too_large = np.any(denominator <= 0, -1)
        adjusted = special.ndtr(z0[:, None] + (z0[:, None] + z) / denominator)
    fallback = np.select(
        [single, outside, jack_undefined, too_large], [1, 2, 3, 4], default=0
    ).astype(np.int64)
    z0 = np.where(np.isin(fallback, (1, 2)), np.nan, z0)
    a = np.where(np.isin(fallback, (1, 2, 3)), np.nan, a)
    levels = np.where((fallback == 0)[:, None], adjusted, percentile_levels(level, rows))
    return BCaLevels(levels, z0, a, fallback)


def exact_percentile_bounds(
    x: np.ndarray, n: np.ndarray, confidence_level: np.ndarray, pseudo_count: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    r"""Infinite-resample percentile interval of a proportion, from binomial quantiles.

    The iid bootstrap of x successes in n texts with ``pseudo_count`` = λ draws
    :math:`X^* \sim \mathrm{Binomial}(n + 2λ, (x + λ)/(n + 2λ))`; its percentile
    interval with infinitely many resamples has the ends :math:`F^{-1}(q)/(n + 2λ)` at
    :math:`q = (1 \mp c)/2` (:math:`c` the confidence level), with :math:`F^{-1}` the
    binomial quantile function (the smallest k with :math:`F(k) \ge q`).
    """
    from scipy import stats

    size = n + 2 * pseudo_count
    p = (x + pseudo_count) / size
    tail = (1 - confidence_level) / 2
    low = stats.binom.ppf(tail, size, p) / size
    high = stats.binom.ppf(1 - tail, size, p) / size
    return low, high
