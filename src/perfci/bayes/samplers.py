"""Running the MCMC samplers (nutpie, PyMC), the compiled models, and the diagnostics.

PyMC, nutpie and ArviZ are imported inside the functions that need them.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._core.grid import marginal_counts, s_prior

if TYPE_CHECKING:
    import xarray as xr

__all__ = [
    "MAX_RHAT",
    "MIN_ESS",
    "BayesianDiagnosticsWarning",
    "compiled_confusion",
    "compiled_marginal",
    "data_for",
    "diagnostics",
    "run_mcmc",
]

#: Diagnostic thresholds: a fit is flagged beyond them (Vehtari et al., 2021).
MAX_RHAT = 1.01
MIN_ESS = 400


class BayesianDiagnosticsWarning(RuntimeWarning):
    """A posterior failed its diagnostics and is flagged, or a summary of it does not exist.

    Flagged: R-hat, ESS, divergences, an infinite posterior mean of kappa (see
    :attr:`BayesFit.tail <perfci.bayes.BayesFit.tail>`). Not flagged: a moment that
    :meth:`BayesFit.summary <perfci.bayes.BayesFit.summary>` leaves out (NaN).
    """


@cache
def compiled_marginal(prior: str) -> Any:
    """Return the marginalized model compiled for nutpie, once per prior (refit to data).

    Loaded from the on-disk compile cache when an earlier process compiled it
    (:mod:`perfci.bayes.compile_cache`), else compiled and cached.
    """
    from .compile_cache import compiled_model

    def build() -> Any:
        from ..models.beta_binomial import beta_binomial_marginal

        return beta_binomial_marginal([1, 1], [2, 2], prior=prior)

    a, b = s_prior(prior)
    return compiled_model(
        "beta_binomial_marginal",
        {"prior": prior, "s_prior": (a, b)},
        build,
        source="beta_binomial",
    )


@cache
def compiled_confusion() -> Any:
    """Return the hierarchical Dirichlet-multinomial compiled for nutpie, once (refit to data).

    Loaded from the on-disk compile cache when an earlier process compiled it, else
    compiled and cached; refit with ``with_data(counts=...)`` (any number of persons).
    """
    from .compile_cache import compiled_model

    def build() -> Any:
        from ..models.confusion import hierarchical_confusion

        return hierarchical_confusion([[1, 1, 1, 1], [1, 1, 1, 1]])

    # the model's priors are fixed (pi ~ Dirichlet(1), kappa ~ Pareto(1.5, 1)): in the key
    return compiled_model(
        "hierarchical_confusion",
        {"prior": "pareto", "pi": "dirichlet(1, 1, 1, 1)", "kappa": "pareto(1.5, 1)"},
        build,
        source="confusion",
    )


def data_for(successes: NDArray[np.int64], trials: NDArray[np.int64]) -> dict[str, Any]:
    """Return the ``pm.Data`` of the marginalized model for these counts."""
    a, b, c = (x.astype(float) for x in marginal_counts(successes, trials))
    return {"A": a, "B": b, "C": c, "j": np.arange(a.size, dtype=float)}


def run_mcmc(
    sampler: str, model: Any, draws: int, tune: int, chains: int, seed: int
) -> xr.DataTree:
    """Sample a PyMC model (or a compiled nutpie model) quietly; return its DataTree."""
    with warnings.catch_warnings(), _quiet_pymc():
        # PyMC and nutpie report progress and tuning notes as warnings and log lines;
        # the diagnostics are what decides whether the fit is usable.
        warnings.simplefilter("ignore")
        if sampler == "nutpie":
            from .compile_cache import import_nutpie

            nutpie = import_nutpie()
            if hasattr(model, "free_RVs"):  # a PyMC model, not yet compiled
                model = nutpie.compile_pymc_model(model)
            # warm-up draws are never used: not converting them saves most of a refit
            return nutpie.sample(
                model,
                draws=draws,
                tune=tune,
                chains=chains,
                seed=seed,
                progress_bar=False,
                save_warmup=False,
            )
        import pymc as pm

        with model:
            return pm.sample(
                draws=draws,
                tune=tune,
                chains=chains,
                random_seed=seed,
                nuts_sampler="pymc",
                progressbar=False,
                cores=1,
                compute_convergence_checks=False,
            )


def diagnostics(
    tree: xr.DataTree, var_names: list[str]
) -> tuple[dict[str, float], tuple[str, ...]]:
    """R-hat, ESS and divergences of a fit, the failed ones in words, and a warning.

    Rank-normalized R-hat and bulk ESS, and tail ESS as the smaller ESS of the 5% and 95%
    quantile indicators (Vehtari et al., 2021), by ArviZ's array functions on each scalar
    variable's (chain, draw) draws: the same numbers as ``az.summary`` for R-hat and bulk
    ESS, at a fraction of its cost (it matters when fits are refit many times).
    """
    from arviz_stats.base import array_stats

    rhat, bulk, tail = [], [], []
    for name in var_names:
        draws = tree["posterior"][name].to_numpy()
        draws = draws.reshape(draws.shape[0], draws.shape[1], -1)
        for k in range(draws.shape[-1]):
            a = draws[..., k]
            rhat.append(array_stats.rhat(a, chain_axis=0, draw_axis=1))
            bulk.append(array_stats.ess(a, chain_axis=0, draw_axis=1, method="bulk"))
            tail.append(
                array_stats.ess(a, chain_axis=0, draw_axis=1, method="tail", prob=(0.05, 0.95))
            )
    diag: dict[str, float] = {
        "r_hat": float(np.max(rhat)),
        "ess_bulk": float(np.min(bulk)),
        "ess_tail": float(np.min(tail)),
        "divergences": int(tree["sample_stats"]["diverging"].sum()),
    }
    reasons = _failed(diag)
    if reasons:
        warnings.warn(
            "the posterior failed its diagnostics (" + "; ".join(reasons) + "); the fit is "
            "flagged: check it before use (more draws or tuning, or sampler='grid').",
            BayesianDiagnosticsWarning,
            stacklevel=3,
        )
    return diag, reasons


def _failed(diag: dict[str, float]) -> tuple[str, ...]:
    """List the diagnostics a fit fails, in words."""
    divergences = diag["divergences"]
    reasons = []
    if not diag["r_hat"] <= MAX_RHAT:
        reasons.append(f"R-hat {diag['r_hat']:.3f} > {MAX_RHAT}")
    if not diag["ess_bulk"] >= MIN_ESS:
        reasons.append(f"bulk ESS {diag['ess_bulk']:.0f} < {MIN_ESS}")
    if not diag["ess_tail"] >= MIN_ESS:
        reasons.append(f"tail ESS {diag['ess_tail']:.0f} < {MIN_ESS}")
    if divergences:
        reasons.append(f"{divergences} divergent transitions")
    return tuple(reasons)


@contextmanager
def _quiet_pymc() -> Iterator[None]:
    """Silence PyMC's sampling log lines for the duration of a fit."""
    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
