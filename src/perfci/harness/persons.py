"""The persons of the simulated populations: their rates and their numbers of texts.

A person of a population drawn anew in every data set has a standard normal latent z.
Their rate is the Beta quantile of Phi(z) (a Gaussian copula), so that the rate keeps
its Beta marginal with the chosen mean and ICC while their number of texts (a rounded
lognormal) can depend on the same z (an informative cluster size).
"""

from __future__ import annotations

import numpy as np


def beta_quantile(z: np.ndarray, mean: float, icc: float) -> np.ndarray:
    """Rates with a Beta(mean, ICC) marginal from standard normal latents z.

    The ICC of a Beta(a, b) rate is 1 / (a + b + 1); an ICC of 0 is a constant rate.
    """
    from scipy import stats

    if icc == 0:
        return np.full(np.shape(z), mean)
    concentration = 1 / icc - 1
    return stats.beta.ppf(stats.norm.cdf(z), mean * concentration, (1 - mean) * concentration)


def person_sizes(
    rng: np.random.Generator,
    latent: np.ndarray,
    mean: float,
    cv: float,
    min_texts: int,
    informative: float,
) -> np.ndarray:
    """Texts per person: a rounded lognormal with this mean and CV, at least `min_texts`.

    The log size correlates `informative` with the person's latent z. The mean and CV
    are those of the lognormal before rounding and the floor (nominal values).
    """
    if cv == 0:
        return np.full(latent.shape, max(min_texts, int(round(mean))), dtype=np.int64)
    s2 = np.log1p(cv * cv)
    noise = rng.standard_normal(latent.shape)
    z = informative * latent + np.sqrt(1 - informative**2) * noise
    sizes = np.rint(np.exp(np.log(mean) - s2 / 2 + np.sqrt(s2) * z))
    return np.maximum(sizes, min_texts).astype(np.int64)


def cell_sizes(params: dict, latent: np.ndarray, rng: np.random.Generator, informative=None):
    """Texts per person of a cell's persons (:func:`person_sizes` with its parameters)."""
    return person_sizes(
        rng,
        latent,
        params["texts_per_person"],
        params["size_cv"],
        params["min_texts"],
        params["informative"] if informative is None else informative,
    )
