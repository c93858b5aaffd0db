"""One grid shared by a whole batch, as :mod:`perfci.harness` still uses it.

Kept only until the harness calls :func:`perfci.bayes.grid_intervals`, whose grids are per
data set. The kernel is the core's (:func:`perfci._core.grid.log_posterior`); only the
choice of one grid for all data sets lives here.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core.grid import COARSE_SHAPE, EPS, TAIL, _mids, _normalize, grid_interval, log_posterior

__all__ = ["_adaptive_grid", "_grid_interval"]

_grid_interval = grid_interval


def _masses(
    y: NDArray[np.int64],
    n: NDArray[np.int64],
    prior: str,
    mu_edge: NDArray[np.float64],
    s_edge: NDArray[np.float64],
) -> NDArray[np.float64]:
    return _normalize(log_posterior(y, n, _mids(mu_edge), _mids(s_edge), prior))


def _range_of(mass_1d: NDArray[np.float64], edges: NDArray[np.float64]) -> tuple[float, float]:
    """Smallest range of grid edges holding all but TAIL of the mass (any data set)."""
    cdf = np.cumsum(mass_1d, axis=-1)
    lo = int(np.searchsorted(cdf.max(0), TAIL, side="left"))
    hi = int(np.searchsorted(cdf.min(0), 1 - TAIL, side="left")) + 1
    return float(edges[max(0, lo)]), float(edges[min(edges.size - 1, hi)])


def _adaptive_grid(
    successes: ArrayLike, trials: ArrayLike, prior: str, shape: tuple[int, int]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Cell masses (K, n_mu, n_s) and the shared edges in mu and s of one grid for a batch."""
    y = np.atleast_2d(np.asarray(successes, dtype=np.int64))
    n = np.atleast_2d(np.asarray(trials, dtype=np.int64))
    mu_edge = np.linspace(EPS, 1 - EPS, COARSE_SHAPE[0] + 1)
    s_edge = np.linspace(EPS, 1 - EPS, COARSE_SHAPE[1] + 1)
    coarse = _masses(y, n, prior, mu_edge, s_edge)
    mu_lo, mu_hi = _range_of(coarse.sum(2), mu_edge)
    s_lo, s_hi = _range_of(coarse.sum(1), s_edge)
    mu_pad, s_pad = mu_edge[1] - mu_edge[0], s_edge[1] - s_edge[0]
    mu_edge = np.linspace(max(EPS, mu_lo - mu_pad), min(1 - EPS, mu_hi + mu_pad), shape[0] + 1)
    s_edge = np.linspace(max(EPS, s_lo - s_pad), min(1 - EPS, s_hi + s_pad), shape[1] + 1)
    return _masses(y, n, prior, mu_edge, s_edge), mu_edge, s_edge
