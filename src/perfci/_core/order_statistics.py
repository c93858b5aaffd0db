r"""Bootstrap intervals of a proportion from the law of their order statistics.

The iid bootstrap of a proportion with t successes among N texts (pseudo counts
included) draws B replicates :math:`X^*_b / N`, :math:`X^*_b \sim \mathrm{Binomial}(N,
t/N)` independently. Its percentile interval is a type-7 quantile at two levels, each
the interpolation of two neighbouring order statistics; BCa adds :math:`\hat z_0`, which
reads the counts of replicates below and at the estimate. So an interval needs a few
order statistics of B draws and, for BCa, three counts; these have known laws, and
drawing them gives the interval's exact distribution under B resamples at a cost that
does not grow with B:

- With F the binomial CDF, :math:`X^*_{(r)} = F^{-1}(U_{(r)})` for the order statistics
  :math:`U_{(r)}` of B uniforms (:math:`F^{-1}(u)` the smallest k with
  :math:`F(k) \ge u`).
- :math:`U_{(r)} \sim \mathrm{Beta}(r, B - r + 1)`, and given :math:`U_{(r)} = s` the
  later uniforms are the order statistics of B - r uniforms on (s, 1) (uniform order
  statistics are a Markov chain), so ranks :math:`r_1 < r_2 < \dots` are drawn one after
  the other, :math:`U_{(r_{j+1})} = U_{(r_j)} + (1 - U_{(r_j)})\,\mathrm{Beta}(r_{j+1} -
  r_j, B - r_{j+1} + 1)`.
- The replicates below, at and above the estimate (:math:`X^* < t`, :math:`= t`,
  :math:`> t`) are the uniforms in :math:`[0, F(t-1))`, :math:`[F(t-1), F(t))` and
  :math:`[F(t), 1)`: their counts are Multinomial(B, ...), and given the counts each
  segment's uniforms are iid uniform on it, so a rank is drawn within its segment.

Each data set takes :data:`UNIFORMS` uniforms from its own stream (two for the counts,
one per rank; every data set's drawn at once,
:meth:`~perfci._core.streams.DataSetStreams.uniforms`); every other step is an inverse
CDF, vectorized over data sets.
:func:`perfci.bootstrap_ci` takes this path for ``metric="proportion"`` with the iid
scheme (``draws="auto"``); ``draws="resamples"`` draws every resample instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from .intervals import (
    bca_levels_from,
    percentile_levels,
    type7_interpolate,
    type7_positions,
)

__all__ = ["UNIFORMS", "proportion_order_statistics"]

#: Uniforms a data set takes from its generator: the counts below and at the estimate,
#: then the ranks 1, the two of each interval end, and B.
UNIFORMS = 8
_RANKS = 6


#: Largest n that :func:`scipy.special.bdtr` takes: it holds n in a C int (int32).
_BDTR_MAX_N = 2**31 - 1


def _binomial_cdf(k: np.ndarray, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Return Binomial(n, p)'s CDF at k, for counts n beyond int32 too.

    Policy: ``bdtr`` where n fits its int32 argument (it returns NaN beyond), else the
    same regularized incomplete beta, :math:`I_{1-p}(n - k, k + 1)`, in floating point.
    """
    k, n = np.asarray(k, dtype=np.int64), np.asarray(n, dtype=np.int64)
    small = n <= _BDTR_MAX_N
    fits = special.bdtr(np.where(small, k, 0), np.where(small, n, 1), p)
    kf, nf = k.astype(float), n.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        wide = special.betainc(np.maximum(nf - kf, 1.0), kf + 1.0, 1.0 - p)
    wide = np.where(kf < 0, 0.0, np.where(kf >= nf, 1.0, wide))
    return np.where(small, fits, wide)


def _binomial_quantile(u: np.ndarray, n: Any, p: np.ndarray) -> np.ndarray:
    """Return the smallest k with Binomial(n, p)'s CDF at k at least u (0 at u = 0)."""
    from scipy import stats  # on first use: importing perfci stays cheap

    return np.maximum(stats.binom.ppf(u, n, p), 0.0)


def proportion_order_statistics(
    successes: np.ndarray,
    texts: np.ndarray,
    *,
    interval: str,
    n_resamples: int,
    confidence_level: float,
    uniforms: np.ndarray,
) -> dict[str, np.ndarray]:
    r"""Percentile or BCa ends of the iid bootstrap of ``successes / texts``, per data set.

    Parameters
    ----------
    successes, texts : numpy.ndarray
        ``(K,)`` whole numbers of the sample the bootstrap resamples (pseudo counts
        added), ``texts`` at least 1.
    interval : {"percentile", "bca"}
    n_resamples : int
        B, the resamples whose interval's law is drawn.
    confidence_level : float
    uniforms : numpy.ndarray
        ``(K, UNIFORMS)``: the first :data:`UNIFORMS` uniforms of each data set's stream.

    Returns
    -------
    dict
        ``low``, ``high``, ``standard_error`` (the bootstrap distribution's exact SD,
        :math:`\sqrt{p(1-p)/N}`), ``bias_correction``, ``acceleration`` and ``fallback``
        (the BCa codes of :func:`~perfci._core.intervals.bca_levels`; 0 for percentile).
    """
    t = np.asarray(successes, dtype=float)
    size = np.asarray(texts, dtype=float)
    rows, b = t.size, int(n_resamples)
    u = uniforms
    p = t / size
    # the uniforms of replicates below, at and above the estimate: [0, a), [a, c), [c, 1)
    whole_t, whole_size = t.astype(np.int64), size.astype(np.int64)
    a = np.where(t >= 1, _binomial_cdf(np.maximum(whole_t - 1, 0), whole_size, p), 0.0)
    c = np.where(t < size, _binomial_cdf(whole_t, whole_size, p), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        n_less = _binomial_quantile(u[:, 0], b, a)
        share_at = np.clip(np.where(a < 1, (c - a) / (1 - a), 0.0), 0.0, 1.0)
        n_at = _binomial_quantile(u[:, 1], b - n_less, share_at)
    n_more = b - n_less - n_at
    below = (n_less + 0.5 * n_at) / b
    # the acceleration's jackknife: leave out a success, or a failure (N - 1 texts left)
    with np.errstate(invalid="ignore", divide="ignore"):
        jack_values = np.stack([(t - 1) / (size - 1), t / (size - 1)], -1)
    jack_weights = np.stack([t, size - t], -1)
    if interval == "bca":
        # every replicate equal implies all at the estimate, or all on one side of it
        # (`outside`): either way the percentile levels; which reason is known below
        parts = bca_levels_from(below, n_at == b, p, jack_values, jack_weights, confidence_level)
        levels = parts.levels
    else:
        levels = percentile_levels(confidence_level, rows)
    lo, hi, gamma = type7_positions(np.full((rows, 1), b), levels)
    ranks = np.stack([np.ones(rows), lo[:, 0] + 1, hi[:, 0] + 1, lo[:, 1] + 1, hi[:, 1] + 1,
                      np.full(rows, b)], -1)  # fmt: skip
    order = np.argsort(ranks, axis=-1, kind="stable")
    ranked = np.take_along_axis(ranks, order, -1)
    values = np.empty((rows, _RANKS))
    starts = np.stack([np.zeros(rows), n_less, n_less + n_at], -1)  # ranks before a segment
    counts = np.stack([n_less, n_at, n_more], -1)
    floors, ceilings = np.stack([np.zeros(rows), a, c], -1), np.stack([a, c, np.ones(rows)], -1)
    every = np.arange(rows)
    previous_segment = np.full(rows, -1)
    previous_u, previous_local = np.zeros(rows), np.zeros(rows)
    for j in range(_RANKS):  # the ranks of every data set at once, smallest first
        r = ranked[:, j]
        segment = (r > n_less).astype(np.int64) + (r > n_less + n_at)
        local = r - starts[every, segment]
        same = segment == previous_segment
        start_u = np.where(same, previous_u, floors[every, segment])
        start_local = np.where(same, previous_local, 0.0)
        gap = local - start_local
        with np.errstate(invalid="ignore"):
            step = special.betaincinv(
                np.maximum(gap, 1.0), counts[every, segment] - local + 1, u[:, 2 + j]
            )
        drawn = np.where(gap > 0, start_u + (ceilings[every, segment] - start_u) * step, start_u)
        k = _binomial_quantile(drawn, size, p)
        # the segment fixes the side of the estimate (guarding the CDF's rounding)
        k = np.where(
            segment == 0, np.minimum(k, t - 1), np.where(segment == 2, np.maximum(k, t + 1), t)
        )
        values[:, j] = k / size
        previous_segment, previous_u, previous_local = segment, drawn, local
    by_rank = np.empty_like(values)
    np.put_along_axis(by_rank, order, values, -1)
    low = type7_interpolate(by_rank[:, 1], by_rank[:, 2], gamma[:, 0])
    high = type7_interpolate(by_rank[:, 3], by_rank[:, 4], gamma[:, 1])
    z0, accel = np.full(rows, np.nan), np.full(rows, np.nan)
    fallback = np.zeros(rows, dtype=np.int64)
    if interval == "bca":
        single = by_rank[:, 0] == by_rank[:, 5]
        final = bca_levels_from(below, single, p, jack_values, jack_weights, confidence_level)
        z0, accel, fallback = final.bias_correction, final.acceleration, final.fallback
    return {
        "low": low,
        "high": high,
        "standard_error": np.sqrt(p * (1 - p) / size),
        "bias_correction": z0,
        "acceleration": accel,
        "fallback": fallback,
    }
