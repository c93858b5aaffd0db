"""PyMC model builders for perfci (installed as :mod:`perfci.models`).

Each builder is a plain function of counts returning a :class:`pymc.Model` with named
dims; priors are written in each docstring. Importing this package imports PyMC.
"""

from .beta_binomial import PRIORS, beta_binomial, beta_binomial_marginal, marginal_counts
from .confusion import dirichlet_confusion, hierarchical_confusion

__all__ = [
    "PRIORS",
    "beta_binomial",
    "beta_binomial_marginal",
    "dirichlet_confusion",
    "hierarchical_confusion",
    "marginal_counts",
]
