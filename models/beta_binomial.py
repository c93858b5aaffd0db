"""Hierarchical beta-binomial models of person-level rates.

Persons i = 1..m have y_i successes in n_i relevant texts, with person rates

    p_i ~ Beta(mu * kappa, (1 - mu) * kappa),   y_i ~ Binomial(n_i, p_i),

mu the mean person-level rate of the superpopulation and kappa the concentration (large
kappa: persons alike). Both models are parameterized by s = kappa^(-1/2) in (0, 1), in
which the priors are simple and the likelihood is stable as kappa grows without bound.

Priors (``prior=``):

- ``"pareto"`` (default): mu ~ Beta(1, 1) and kappa ~ Pareto(1.5, 1), i.e.
  s ~ Beta(3, 1). Proper and bounded below by kappa = 1; it is the prior of the Stan
  case study on repeated binary trials. Proper priors matter here: with an improper prior
  the posterior is improper whenever every y_i is 0 or n_i, which small samples of a
  high-performing classifier produce often.
- ``"bda3"``: mu ~ Beta(1, 1) and p(kappa) proportional to kappa^(-3/2) for kappa >= 1
  (Gelman et al., BDA3, the rat-tumour example, truncated to be proper), i.e. kappa ~
  Pareto(0.5, 1), s ~ Uniform(0, 1). Its tail is heavier: more mass on large kappa
  (persons alike), so it pools more (median kappa 4 against 1.59 for ``"pareto"``).

The priors, :func:`marginal_counts` and the stable likelihood's grid evaluation are
NumPy code in :mod:`perfci._core.grid`, re-exported here; this module only builds the
PyMC models.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from perfci._core.grid import PRIORS, marginal_counts, s_prior

__all__ = ["PRIORS", "beta_binomial", "beta_binomial_marginal", "marginal_counts", "s_prior"]


def beta_binomial(
    successes: Any, trials: Any, *, prior: str = "pareto", coords: dict | None = None
) -> pm.Model:
    """Build the full hierarchical beta-binomial model (person rates sampled).

    Parameters
    ----------
    successes, trials : array_like of int
        Per-person successes y_i and relevant texts n_i.
    prior : {"pareto", "bda3"}, default "pareto"
        Prior of the concentration (see the module notes).
    coords : dict, optional
        Coordinates; ``{"person": ids}`` names the persons.

    Returns
    -------
    pymc.Model
        Free variables ``mu``, ``s`` and ``p`` (dim ``person``); deterministic ``kappa``.

    Notes
    -----
    This centered model has a funnel toward large kappa: when persons are alike or many
    are at 0% or 100%, NUTS reports divergent transitions (about 2% of draws in this
    package's tests, even at ``target_accept=0.95``). :func:`beta_binomial_marginal` has
    none and gives the same posterior of mu and s; :func:`perfci.bayes.fit_proportion_counts`
    uses it.

    Examples
    --------
    >>> from perfci.models import beta_binomial
    >>> model = beta_binomial([2, 3, 3], [3, 3, 3])
    >>> sorted(v.name for v in model.free_RVs)
    ['mu', 'p', 's']
    """
    y = np.asarray(successes, dtype=np.int64)
    n = np.asarray(trials, dtype=np.int64)
    a, b = s_prior(prior)
    coords = {"person": np.arange(y.size)} if coords is None else coords
    with pm.Model(coords=coords) as model:
        mu = pm.Beta("mu", 1.0, 1.0)
        s = pm.Beta("s", a, b)
        kappa = pm.Deterministic("kappa", s**-2)
        p = pm.Beta("p", mu * kappa, (1 - mu) * kappa, dims="person")
        pm.Binomial("y", n=n, p=p, observed=y, dims="person")
    return model


def beta_binomial_marginal(
    successes: Any, trials: Any, *, prior: str = "pareto", max_trials: int | None = None
) -> pm.Model:
    r"""Build the beta-binomial model with the person rates integrated out.

    Only mu and s are sampled; the data enter through :func:`marginal_counts` as
    ``pm.Data`` (``A``, ``B``, ``C``, ``j``), so a compiled model can be refit to new
    data, with any number of persons, without recompiling.

    Parameters
    ----------
    successes, trials : array_like of int
        Per-person successes y_i and relevant texts n_i.
    prior : {"pareto", "bda3"}, default "pareto"
        Prior of the concentration.
    max_trials : int, optional
        Length of the j axis (at least max n_i); default max n_i.

    Returns
    -------
    pymc.Model
        Free variables ``mu`` and ``s``; deterministic ``kappa``.

    Notes
    -----
    The log-likelihood, up to a constant, in :math:`s = \kappa^{-1/2}`:

    .. math::

        \log L = \sum_j A_j \log(\mu + j s^2) + B_j \log(1 - \mu + j s^2)
                 - C_j \log(1 + j s^2),

    which is finite and smooth as :math:`s \to 0` (complete pooling), unlike
    ``pm.BetaBinomial`` at very large :math:`\kappa`. Person rates are drawn afterwards
    from :math:`\mathrm{Beta}(\mu\kappa + y_i, (1-\mu)\kappa + n_i - y_i)`.

    Examples
    --------
    >>> from perfci.models import beta_binomial_marginal
    >>> model = beta_binomial_marginal([2, 3, 3], [3, 3, 3])
    >>> sorted(v.name for v in model.free_RVs)
    ['mu', 's']
    """
    counts = marginal_counts(successes, trials)
    length = counts[0].size if max_trials is None else int(max_trials)
    padded = [np.pad(c, (0, length - c.size)).astype(float) for c in counts]
    a, b = s_prior(prior)
    with pm.Model() as model:
        big_a = pm.Data("A", padded[0])
        big_b = pm.Data("B", padded[1])
        big_c = pm.Data("C", padded[2])
        j = pm.Data("j", np.arange(length, dtype=float))
        mu = pm.Beta("mu", 1.0, 1.0)
        s = pm.Beta("s", a, b)
        pm.Deterministic("kappa", s**-2)
        s2 = s**2
        pm.Potential(
            "loglik",
            (
                big_a * pt.log(mu + j * s2)
                + big_b * pt.log(1 - mu + j * s2)
                - big_c * pt.log(1 + j * s2)
            ).sum(),
        )
    return model
