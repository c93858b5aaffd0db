r"""The tails of the beta-binomial posterior: which moments of kappa exist (NumPy only).

Persons i = 1..m have y_i successes in n_i texts; the model of :mod:`perfci._core.grid`
has p_i ~ Beta(mu kappa, (1 - mu) kappa), mu ~ Beta(1, 1) and s = kappa^(-1/2) ~
Beta(a, b) on (0, 1), the bound s < 1 being kappa > 1 (:data:`~perfci._core.grid.PRIORS`).

**The upper tail of kappa.** The likelihood L(mu, s) is bounded on (0, 1)^2 (for
kappa > 1 it is a product of probabilities), and as s -> 0 (kappa -> infinity, persons
alike) it tends to the binomial likelihood of the pooled data,
L_0(mu) = mu^Y (1 - mu)^(N - Y) with Y = sum y_i, N = sum n_i: the stable form
sum_j A_j log(mu + j s^2) + B_j log(1 - mu + j s^2) - C_j log(1 + j s^2) tends to
Y log mu + (N - Y) log(1 - mu), since sum_j A_j = Y, sum_j B_j = N - Y. So the
marginal posterior density of s is

.. math::

    p(s \mid y) = c(s)\, s^{a - 1} (1 - s)^{b - 1}, \qquad
    c(s) = \frac{1}{Z} \int_0^1 L(\mu, s)\, d\mu,

with c continuous on [0, 1] and c(0) = B(Y + 1, N - Y + 1) / Z > 0: near s = 0 the
posterior of s behaves like the prior, p(s | y) ~ c(0) s^(a - 1), whatever the data
(no finite sample rules out persons being alike). Hence, for r > 0,

.. math::

    E[\kappa^r \mid y] = \int_0^1 s^{-2r} p(s \mid y)\, ds < \infty
    \iff \int_0 s^{a - 1 - 2r}\, ds < \infty \iff r < a / 2

(near s = 1 the integrand is bounded by a multiple of (1 - s)^(b - 1), integrable for
b > 0). In kappa, the density falls like kappa^(-a/2 - 1): a Pareto-type tail of index
a/2, that is a generalized-Pareto shape k = 2/a. The same holds for mu kappa and
(1 - mu) kappa (the Beta parameters alpha and beta of BDA3), since mu is bounded and its
posterior at s -> 0 is the Beta(Y + 1, N - Y + 1) of the pooled data. mu, s, the
person rates and the population and sampled persons' rates lie in (0, 1): all their
moments are finite.

- ``"pareto"``, s ~ Beta(3, 1): moments of kappa of order below 3/2; the mean is finite,
  the variance infinite, k = 2/3 (a Monte-Carlo mean of kappa has no standard error and
  converges like S^(-1/3) in S draws).
- ``"bda3"``, s ~ Beta(1, 1): moments of order below 1/2; **the mean is infinite** for
  every data set, k = 2; a reported posterior mean of kappa (or of alpha, beta) is
  meaningless, and its Monte-Carlo value is the largest draw's doing.

**The improper case.** ``"bda3"`` is BDA3's p(kappa) ∝ kappa^(-3/2) truncated to
kappa >= 1. Without the truncation s ranges over (0, infinity) with density ∝ s^(a - 1).
As kappa -> 0 a person with 0 < y_i < n_i has likelihood O(kappa) (the person rates pile
up at 0 and 1), one with y_i = n_i tends to mu and one with y_i = 0 to 1 - mu, so
L ~ C s^(-2 m') as s -> infinity, with m' the number of persons strictly between, and
the untruncated posterior ∝ s^(a - 1 - 2 m') is integrable there iff m' > a/2. For
``"bda3"`` (a = 1): improper iff every y_i is 0 or n_i (:func:`improper_without_truncation`).
The truncation makes it proper, but the posterior density of s then does not fall off
before the bound s = 1: the data favour kappa -> 0, the bound stops them, and the
interval of mu depends on where the bound is.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .grid import EPS, s_prior

__all__ = [
    "TRUNCATED_PRIORS",
    "grid_kappa_moments",
    "grid_power_mean",
    "improper_without_truncation",
    "interior_persons",
    "kappa_tail",
]

#: Priors that truncate an improper prior at kappa >= 1 (the others have the bound as
#: part of their definition: Pareto(1.5, 1) lives on kappa >= 1).
TRUNCATED_PRIORS = frozenset({"bda3"})


def kappa_tail(prior: str) -> dict[str, Any]:
    """Which posterior moments of kappa exist under a prior, for every data set.

    Parameters
    ----------
    prior : str
        A prior name of :data:`perfci._core.grid.PRIORS`.

    Returns
    -------
    dict
        ``moment_order``: a/2, where s ~ Beta(a, b) (moments of order r exist iff
        r < a/2); ``mean_finite`` and ``variance_finite``: a > 2 and a > 4;
        ``pareto_k``: 2/a, the generalized-Pareto shape of the upper tail.

    Examples
    --------
    >>> from perfci._core.tails import kappa_tail
    >>> tail = kappa_tail("pareto")
    >>> tail["moment_order"], tail["mean_finite"], tail["variance_finite"]
    (1.5, True, False)
    >>> round(tail["pareto_k"], 3)
    0.667
    >>> kappa_tail("bda3")["mean_finite"]
    False
    """
    a, _ = s_prior(prior)
    return {
        "moment_order": a / 2,
        "mean_finite": a > 2,
        "variance_finite": a > 4,
        "pareto_k": 2 / a,
    }


def interior_persons(successes: ArrayLike, trials: ArrayLike) -> NDArray[np.int64]:
    """Persons with 0 < y_i < n_i, per data set (persons on the last axis).

    Examples
    --------
    >>> from perfci._core.tails import interior_persons
    >>> interior_persons([[3, 0, 2], [4, 0, 0]], [[3, 2, 5], [4, 2, 0]])
    array([1, 0])
    """
    y = np.asarray(successes)
    n = np.asarray(trials)
    return ((y > 0) & (y < n)).sum(-1)


def improper_without_truncation(
    successes: ArrayLike, trials: ArrayLike, prior: str
) -> NDArray[np.bool_]:
    """Return True where the prior, untruncated, would give an improper posterior.

    Only a prior of :data:`TRUNCATED_PRIORS` can be: with s ~ Beta(a, b) continued to
    (0, infinity) as s^(a - 1), the posterior is improper iff at most a/2 persons have
    0 < y_i < n_i (module notes); for ``"bda3"``, iff every y_i is 0 or n_i.

    Examples
    --------
    >>> from perfci._core.tails import improper_without_truncation
    >>> improper_without_truncation([5, 0, 4], [5, 3, 4], "bda3")
    array(True)
    >>> improper_without_truncation([5, 0, 4], [5, 3, 4], "pareto")
    array(False)
    """
    a, _ = s_prior(prior)
    between = interior_persons(successes, trials)
    return np.asarray((prior in TRUNCATED_PRIORS) & (between <= a / 2))


def grid_power_mean(
    edges: NDArray[np.float64], mass: NDArray[np.float64], power: float, s_shape: float = 1.0
) -> NDArray[np.float64]:
    """Return E[x^power] of gridded marginals (x uniform within cells; see `s_shape`).

    Parameters
    ----------
    edges : numpy.ndarray, shape (K, cells + 1)
        Cell edges, per data set.
    mass : numpy.ndarray, shape (K, cells)
        Marginal mass of each cell.
    power : float
        The moment's power, nonzero; ``power > -s_shape`` where the first cell starts at
        the grid's lower end (else that cell's moment is infinite).
    s_shape : float, default 1.0
        In a first cell that starts at the grid's lower end, x is taken ∝
        x^(s_shape - 1) instead: the exponent a of s ~ Beta(a, b) for the s marginal (see
        :attr:`perfci._core.grid.GridPosterior.s_shape`); 1 (uniform) for mu.

    Returns
    -------
    numpy.ndarray, shape (K,)

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.tails import grid_power_mean
    >>> edges = np.array([[0.0, 0.5, 1.0]])
    >>> grid_power_mean(edges, np.array([[0.5, 0.5]]), 1.0)  # uniform on (0, 1)
    array([0.5])
    """
    low, high = edges[:, :-1], edges[:, 1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        if power == -1:
            uniform = np.log(high / low) / (high - low)
        else:
            uniform = (high ** (power + 1) - low ** (power + 1)) / ((power + 1) * (high - low))
        a = s_shape
        shaped = a / (a + power) * (high ** (a + power) - low ** (a + power)) / (high**a - low**a)
    first = np.zeros(low.shape, dtype=bool)
    first[:, 0] = (edges[:, 0] <= EPS) & (s_shape != 1)
    per_cell = np.where(first, shaped, uniform)
    weights = mass / mass.sum(axis=1, keepdims=True)
    # cells without mass do not count, whatever their moment (0 * inf)
    return np.where(weights > 0, weights * per_cell, 0.0).sum(1)


def grid_kappa_moments(
    s_edge: NDArray[np.float64], s_mass: NDArray[np.float64], prior: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Posterior mean and SD of kappa from gridded marginals of s; NaN where infinite.

    Parameters
    ----------
    s_edge : numpy.ndarray, shape (K, cells + 1)
        Cell edges in s, per data set.
    s_mass : numpy.ndarray, shape (K, cells)
        Marginal posterior mass of each s cell.
    prior : str
        The prior the grid was computed with.

    Returns
    -------
    mean, sd : numpy.ndarray, shape (K,)
        NaN where :func:`kappa_tail` says the moment is infinite.

    Notes
    -----
    E[kappa^r] = E[s^(-2r)] by :func:`grid_power_mean`: within a cell s is uniform, as the
    grid's draws place it, except in the cell that touches s = 0, where its density is
    ∝ s^(a - 1), the posterior's own shape there (module notes); uniform, that cell
    alone would give kappa an infinite mean.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.grid import grid_posterior
    >>> from perfci._core.tails import grid_kappa_moments
    >>> post = grid_posterior(np.array([[9, 8, 10, 7]]), np.array([[10, 10, 10, 10]]), "bda3")
    >>> grid_kappa_moments(post.s_edge, post.mass.sum(1), "bda3")
    (array([nan]), array([nan]))
    """
    tail = kappa_tail(prior)
    a, _ = s_prior(prior)
    rows = s_mass.shape[0]
    mean = np.full(rows, np.nan)
    sd = np.full(rows, np.nan)
    if tail["mean_finite"]:
        mean = grid_power_mean(s_edge, s_mass, -2.0, a)
    if tail["variance_finite"]:
        second = grid_power_mean(s_edge, s_mass, -4.0, a)
        sd = np.sqrt(np.maximum(second - mean**2, 0.0))
    return mean, sd
