r"""The Bayesian population estimand: from sampled persons' rates to the population's rate.

A hierarchical model gives posterior draws of the sampled persons' own rates
:math:`p_i` (or their cell probabilities :math:`\pi_i`). The rate the classifier will
meet is that of the *population* of persons, text-weighted:
:math:`\theta = \sum_j N_j p_j / \sum_j N_j` over all its persons, sampled or not. Given
the draws, this module draws :math:`\theta`:

1. The sampled persons' text-weighted rate, :math:`\theta_s = \sum_i u_i p_i / \sum_i u_i`
   with :math:`u_i` the persons' population sizes (their labelled texts by default).
2. The persons not sampled: persons are exchangeable draws of (size, rate) from an
   unknown distribution, so the size-weighted deviations
   :math:`r_i = u_i (p_i - \theta_s) / (\bar u \sqrt{1 - h_i})` are draws from an
   unknown distribution of mean 0 (the size-rate relation, whatever it is, is in them: a
   person's weight travels with their rate). :math:`h_i = u_i / \sum_j u_j` is the
   person's leverage in :math:`\theta_s`; dividing by :math:`\sqrt{1 - h_i}` is the CR2
   correction of Bell and McCaffrey (2002): a big person pulls :math:`\theta_s` towards
   their own rate, so their raw deviation under-states their spread, and with very
   unequal sizes the plain SD is too small (measured on the atlas's designs with a size
   CV of 1.5 and 30 texts per person: coverage 0.90-0.93 without it, 0.93-0.95 with it).
   Their mean is given the standard noninformative normal model (flat
   prior on the mean, Jeffreys prior on the variance), whose posterior for the
   population's deviation from :math:`\theta_s` is Student's t on m - 1 degrees of
   freedom with scale :math:`s \sqrt{(1 - f)/m}`, s the SD of the :math:`r_i` and f the
   sampled share of the population's persons (0 for an infinite population, the
   default; 1 when every person is sampled, which leaves :math:`\theta_s`). The
   deviation is applied on the logit scale (delta method, :math:`d / (\theta_s (1 -
   \theta_s))`), which keeps :math:`\theta` in (0, 1) and makes the interval lean away
   from a bound as a rate near 1 needs.

For a metric of a confusion matrix (F1, precision, kappa, ...), :math:`\theta_s` is the
metric of the size-weighted pooled cell probabilities and :math:`r_i` its linearization
(the gradient of the metric at the pooled cells times the person's deviation from them).

Why this model and not another: Dirichlet weights over persons (the Bayesian bootstrap)
give the same centre but a posterior variance :math:`(m - 1)/(m + 1)` times the
unbiased one with normal tails, which under-covers with 10-20 persons; a regression of
the rate on log size needs a model for the size distribution as well and is wrong when
the relation is not log-linear. The t-model is the Bayesian counterpart of the
cluster-robust ratio interval with t on m - 1 degrees of freedom, which the atlas shows
to cover with unequal and informative sizes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "deviation_scale",
    "deviation_spread",
    "deviation_weights",
    "draw_population",
    "population_metric_draws",
    "population_shift",
]

#: Rates are kept this far inside (0, 1) before their logit is taken.
_EDGE = 1e-12


def deviation_scale(persons: int, population_persons: float | None) -> float:
    r"""Return the factor :math:`\sqrt{(1 - f) / m}` of the population's deviation.

    Parameters
    ----------
    persons : int
        Sampled persons m (at least 2).
    population_persons : float or None
        Persons M in the population (at least m), or None for an infinite population.
    """
    if population_persons is None:
        return float(np.sqrt(1.0 / persons))
    # inf (an infinite population) gives a share of 0
    share = persons / population_persons
    return float(np.sqrt(max(0.0, 1.0 - share) / persons))


def population_shift(
    sampled: NDArray[np.float64],
    spread: NDArray[np.float64],
    t: NDArray[np.float64],
    factor: float,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> NDArray[np.float64]:
    r"""Shift draws of the sampled persons' metric to the population's by t deviations.

    Parameters
    ----------
    sampled : numpy.ndarray
        Draws of the sampled persons' metric :math:`\theta_s`.
    spread : numpy.ndarray
        Draws of s, the SD (m - 1 denominator) of the persons' size-weighted deviations.
    t : numpy.ndarray
        Student t variates on m - 1 degrees of freedom, one per draw.
    factor : float
        :func:`deviation_scale`.
    bounds : tuple of float, default (0, 1)
        The metric's range; the deviation is applied on the logit scale of the metric
        mapped to (0, 1).

    Returns
    -------
    numpy.ndarray
        Draws of the population's metric, inside `bounds`.
    """
    lo, hi = bounds
    width = hi - lo
    unit = np.clip((sampled - lo) / width, _EDGE, 1.0 - _EDGE)
    step = t * factor * spread / width / (unit * (1.0 - unit))
    logit = np.log(unit) - np.log1p(-unit) + step
    return lo + width * 0.5 * (1.0 + np.tanh(0.5 * logit))  # the inverse logit, overflow-free


def draw_population(
    sampled: NDArray[np.float64],
    spread: NDArray[np.float64],
    persons: int,
    population_persons: float | None,
    rng: np.random.Generator,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> NDArray[np.float64]:
    """Draw the population's metric: one Student t variate (m - 1 df) per draw from `rng`.

    Parameters
    ----------
    sampled, spread : numpy.ndarray
        Draws of the sampled persons' metric and of the spread of their deviations.
    persons : int
        Sampled persons m (at least 2).
    population_persons : float or None
        Persons in the population (None or inf: infinite).
    rng : numpy.random.Generator
        Consumed last: ``rng.standard_t(m - 1, size=sampled.shape)``.
    bounds : tuple of float, default (0, 1)
        The metric's range.
    """
    t = rng.standard_t(persons - 1, size=np.shape(sampled))
    factor = deviation_scale(persons, population_persons)
    return population_shift(sampled, spread, t, factor, bounds)


def deviation_weights(
    weights: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Return the persons' shares of the pooled rate and their deviations' factors.

    ``share`` is :math:`h_i = u_i / \sum_j u_j` (a person's weight in the pooled rate,
    and their leverage); ``scale`` is :math:`u_i / (\bar u \sqrt{1 - h_i})`, the size
    weighting of a person's deviation with the CR2 correction for their leverage.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.population import deviation_weights
    >>> share, scale = deviation_weights(np.array([1.0, 1.0, 2.0]))
    >>> share.tolist(), scale.round(4).tolist()
    ([0.25, 0.25, 0.5], [0.866, 0.866, 2.1213])
    """
    share = weights / weights.sum()
    return share, weights / weights.mean() / np.sqrt(1.0 - share)


def deviation_spread(deviations: NDArray[np.float64]) -> NDArray[np.float64]:
    """Return the SD over the last axis (persons), m - 1 denominator, of deviations.

    The deviations are about the pooled rate (mean zero once weighted); NaN for one
    person (with NumPy's warning, unless the caller silences it).
    """
    m = deviations.shape[-1]
    return np.sqrt(np.einsum("...i,...i->...", deviations, deviations) / (m - 1))


def population_metric_draws(
    cells: NDArray[np.float64],
    weights: NDArray[np.float64],
    metric: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    t: NDArray[np.float64],
    *,
    population_persons: float | None = None,
    bounds: tuple[float, float] = (0.0, 1.0),
    step: float = 1e-6,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Return draws of a metric of the sampled persons and of the population.

    Parameters
    ----------
    cells : numpy.ndarray, shape (\*draws, m, C)
        Posterior draws of each sampled person's cell probabilities (summing to 1 over
        the last axis).
    weights : numpy.ndarray, shape (m,)
        The persons' sizes in the population (their labelled texts by default).
    metric : callable
        The metric of pooled cell probabilities, vectorized over leading axes:
        ``(..., C) -> (...)``.
    t : numpy.ndarray, shape (\*draws,)
        Student t variates on m - 1 degrees of freedom.
    population_persons : float, optional
        Persons in the population (default infinite).
    bounds : tuple of float, default (0, 1)
        The metric's range.
    step : float, default 1e-6
        Step of the central differences that give the metric's gradient.

    Returns
    -------
    sampled, population : numpy.ndarray, shape (\*draws,)
        The sampled persons' metric (of their size-weighted pooled cells) and the
        population's.
    """
    m, n_cells = cells.shape[-2:]
    share, scale = deviation_weights(weights)
    pooled = np.einsum("...ic,i->...c", cells, share)
    sampled = metric(pooled)
    grad = np.empty(pooled.shape)
    for c in range(n_cells):  # C central differences, each over every draw at once
        up, down = pooled.copy(), pooled.copy()
        up[..., c] += step
        down[..., c] -= step
        grad[..., c] = (metric(up) - metric(down)) / (2 * step)
    deviations = np.einsum("...ic,...c->...i", cells - pooled[..., None, :], grad)
    deviations *= scale
    factor = deviation_scale(m, population_persons)
    return sampled, population_shift(sampled, deviation_spread(deviations), t, factor, bounds)
