"""Simulation kernels for coverage studies: many replications at once, no row resampling.

The percentile bootstrap of a proportion from B resamples is simulated exactly and cheaply
through order statistics: B resamples of x successes in n texts (with pseudo count λ) are
B draws from Binomial(n', p'), n' = n + 2λ, p' = (x + λ)/n', i.e. F^{-1}(U_i) for B
uniforms; the percentile interval needs only the order statistics at the two
interpolation positions of each end, and order statistics of uniforms are Beta variables
that can be drawn one after another (each conditional on the previous one). One
replication costs four Beta draws and four binomial quantiles, whatever B is, and the
interval has exactly the distribution of the one computed from B resamples.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

__all__ = ["bca_from_order_statistics", "percentile_from_order_statistics"]


def _positions(level: float, n_resamples: int) -> tuple[np.ndarray, np.ndarray]:
    """0-based order-statistic indices and weights of NumPy's linear quantiles."""
    q = np.array([(1 - level) / 2, (1 + level) / 2])
    h = (n_resamples - 1) * q
    k = np.floor(h).astype(int)
    return k, h - k


def _next_order_statistic(
    previous: np.ndarray, rank_gap: int, remaining: int, rng: np.random.Generator
) -> np.ndarray:
    """Draw the order statistic `rank_gap` places above `previous` (of `remaining` left).

    Given U_(i) = u, the remaining B - i - 1 uniforms are iid on (u, 1), and the
    ``rank_gap``-th smallest of them is u + (1 - u) Beta(rank_gap, remaining - rank_gap + 1).
    """
    if rank_gap == 0:
        return previous
    return previous + (1 - previous) * rng.beta(
        rank_gap, remaining - rank_gap + 1, size=previous.shape
    )


def percentile_from_order_statistics(
    x: Any,
    n: int,
    *,
    pseudo_count: int,
    n_resamples: int,
    confidence_level: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap intervals of proportions x/n, as if from B resamples each.

    Parameters
    ----------
    x : array_like of int
        Successes, one per replication.
    n : int or array_like of int
        Trials (one value, or one per replication).
    pseudo_count : int
        λ of the pseudo-count regularized bootstrap.
    n_resamples : int
        B, the resamples the simulated intervals are based on.
    confidence_level : float
        Confidence level.
    rng : numpy.random.Generator
        Random generator.

    Returns
    -------
    low, high : numpy.ndarray
        The intervals, distributed exactly as the percentile interval (linear
        interpolation between order statistics) of B iid bootstrap replicates.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.simulate import percentile_from_order_statistics
    >>> low, high = percentile_from_order_statistics(
    ...     np.array([18, 19, 20]), 20, pseudo_count=1, n_resamples=2000,
    ...     confidence_level=0.95, rng=np.random.default_rng(1))
    >>> low.round(3), high.round(3)
    (array([0.727, 0.773, 0.864]), array([1., 1., 1.]))
    """
    x = np.asarray(x, dtype=float)
    size = np.asarray(n) + 2 * pseudo_count
    p = (x + pseudo_count) / size
    (k_low, k_high), (w_low, w_high) = _positions(confidence_level, n_resamples)
    b = n_resamples
    # U_(k_low), U_(k_low + 1), U_(k_high), U_(k_high + 1) in turn (0-based ranks)
    u1 = rng.beta(k_low + 1, b - k_low, size=x.shape)
    u2 = _next_order_statistic(u1, 1, b - k_low - 1, rng)
    u3 = _next_order_statistic(u2, k_high - k_low - 1, b - k_low - 2, rng)
    u4 = _next_order_statistic(u3, 1, b - k_high - 1, rng)
    v1, v2, v3, v4 = (stats.binom.ppf(u, size, p) / size for u in (u1, u2, u3, u4))
    return v1 + w_low * (v2 - v1), v3 + w_high * (v4 - v3)


def _draw_block_order_statistics(ranks, n_lt, n_eq, n_gt, rng):
    """Uniform order statistics of the sorted bootstrap sample, block by block.

    The sorted sample is n_lt values below the estimate, n_eq equal to it, n_gt above.
    For increasing 0-based `ranks` (a list of arrays), return for each rank its block
    (0 below, 1 equal, 2 above) and its uniform order statistic within that block,
    drawn jointly: within a block each one is conditional on the previous one.
    """
    blocks, uniforms = [], []
    last_rank = {0: np.full(n_lt.shape, -1), 2: np.full(n_lt.shape, -1)}
    last_u = {0: np.zeros(n_lt.shape), 2: np.zeros(n_lt.shape)}
    sizes = {0: n_lt, 2: n_gt}
    for rank in ranks:
        block = np.where(rank < n_lt, 0, np.where(rank < n_lt + n_eq, 1, 2))
        within = np.where(block == 0, rank, rank - n_lt - n_eq)
        u = np.full(rank.shape, np.nan)
        for b in (0, 2):
            mask = block == b
            gap = np.where(mask, within - last_rank[b], 0)
            left = sizes[b] - last_rank[b] - 1
            draw = mask & (gap > 0)
            step = np.zeros(rank.shape)
            step[draw] = rng.beta(gap[draw], left[draw] - gap[draw] + 1)
            new_u = last_u[b] + (1 - last_u[b]) * step
            u = np.where(mask, new_u, u)
            last_u[b] = np.where(mask, new_u, last_u[b])
            last_rank[b] = np.where(mask, within, last_rank[b])
        blocks.append(block)
        uniforms.append(u)
    return blocks, uniforms


def bca_from_order_statistics(
    x: Any,
    n: int,
    *,
    pseudo_count: int,
    n_resamples: int,
    confidence_level: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """BCa bootstrap intervals of proportions x/n, as if from B resamples each.

    The same definitions as :func:`perfci.bootstrap_ci` with ``interval="bca"`` (ties
    count half in the bias correction, the jackknife leaves out one text of each kind,
    percentile fallback where BCa cannot be formed), simulated exactly: the counts of
    replicates below and equal to the estimate are drawn first (binomial), then the
    order statistics at the BCa interpolation positions, block by block.

    Parameters
    ----------
    x : array_like of int
        Successes, one per replication.
    n : int
        Trials.
    pseudo_count : int
        λ (pseudo successes and failures added before resampling).
    n_resamples : int
        B.
    confidence_level : float
        Confidence level.
    rng : numpy.random.Generator
        Random generator.

    Returns
    -------
    low, high : numpy.ndarray
        The intervals.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.simulate import bca_from_order_statistics
    >>> low, high = bca_from_order_statistics(
    ...     np.array([25, 28]), 30, pseudo_count=0, n_resamples=2000,
    ...     confidence_level=0.95, rng=np.random.default_rng(1))
    >>> low.round(3), high.round(3)
    (array([0.667, 0.767]), array([0.933, 1.   ]))
    """
    from scipy import special

    x = np.asarray(x, dtype=float)
    size = n + 2 * pseudo_count
    t = x + pseudo_count  # the augmented sample's successes
    p = t / size
    c_lo = stats.binom.cdf(t - 1, size, p)
    c_eq = stats.binom.pmf(t, size, p)
    c_hi = c_lo + c_eq
    b = n_resamples
    n_lt = rng.binomial(b, c_lo)
    with np.errstate(invalid="ignore", divide="ignore"):
        share_eq = np.where(c_lo < 1, np.clip(c_eq / (1 - c_lo), 0, 1), 1.0)
    n_eq = rng.binomial(b - n_lt, share_eq)
    n_gt = b - n_lt - n_eq
    level = confidence_level
    z = special.ndtri(np.array([(1 - level) / 2, (1 + level) / 2]))
    with np.errstate(invalid="ignore", divide="ignore"):
        z0 = special.ndtri((n_lt + 0.5 * n_eq) / b)
        # jackknife: leave out a success (t times) or a failure (size - t times)
        jack = np.stack([(t - 1) / (size - 1), t / (size - 1)], axis=-1)
        w = np.stack([t, size - t], axis=-1)
        dev = (w * jack).sum(-1, keepdims=True) / size - jack
        spread = (w * dev**2).sum(-1)
        a = np.where(spread > 0, (w * dev**3).sum(-1) / (6 * spread**1.5), 0.0)
        denominator = 1 - a[:, None] * (z0[:, None] + z)
        levels = special.ndtr(z0[:, None] + (z0[:, None] + z) / denominator)
    usable = np.isfinite(levels).all(1) & (denominator > 0).all(1) & (n_eq < b)
    levels = np.where(usable[:, None], levels, [(1 - level) / 2, (1 + level) / 2])
    h = (b - 1) * levels
    k = np.floor(h).astype(int)
    ranks = [k[:, 0], np.minimum(k[:, 0] + 1, b - 1), k[:, 1], np.minimum(k[:, 1] + 1, b - 1)]
    blocks, uniforms = _draw_block_order_statistics(ranks, n_lt, n_eq, n_gt, rng)
    values = []
    for block, u in zip(blocks, uniforms, strict=True):
        below = np.minimum(stats.binom.ppf(c_lo * u, size, p), t - 1)
        above = np.maximum(stats.binom.ppf(c_hi + (1 - c_hi) * u, size, p), t + 1)
        values.append(np.where(block == 0, below, np.where(block == 1, t, above)) / size)
    frac = h - k
    return (
        values[0] + frac[:, 0] * (values[1] - values[0]),
        values[2] + frac[:, 1] * (values[3] - values[2]),
    )
