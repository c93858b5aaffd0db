"""The tail check of a fit: which moments of kappa exist, in theory and in the draws.

The theory is :mod:`perfci._core.tails` (exact, from the prior's exponent); the
empirical check of MCMC draws is the Pareto k-hat of their upper tail (Vehtari et al.,
2024), by ArviZ's array function, imported when a fit asks for it.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core.grid import s_prior
from .._core.tails import improper_without_truncation, kappa_tail
from .samplers import BayesianDiagnosticsWarning

__all__ = ["check_tails", "moment_notes"]


def _pareto_khat(kappa: NDArray[np.float64]) -> float:
    """Pareto k-hat of the upper tail of (chain, draw) draws of kappa."""
    from arviz_stats.base import array_stats

    return float(array_stats.pareto_khat(kappa, chain_axis=0, draw_axis=1, tail="right"))


def check_tails(
    prior: str,
    successes: NDArray[np.int64],
    trials: NDArray[np.int64],
    kappa: NDArray[np.float64] | None = None,
) -> tuple[dict[str, dict[str, Any]], tuple[str, ...]]:
    """Tail diagnostics of a fit's kappa, the flag reasons they give, and a warning.

    Parameters
    ----------
    prior : str
        The fit's prior.
    successes, trials : numpy.ndarray of int
        The fitted persons' counts.
    kappa : numpy.ndarray, shape (chains, draws), optional
        MCMC draws of kappa, for the empirical check; None for the exact grid.

    Returns
    -------
    tail : dict
        ``{"kappa": {...}}``: ``moment_order``, ``mean_finite``, ``variance_finite``,
        ``pareto_k`` (theory, :func:`perfci._core.tails.kappa_tail`), ``pareto_k_hat``
        (the draws' upper-tail k-hat; NaN for the grid, whose posterior is exact) and
        ``improper_without_truncation``.
    reasons : tuple of str
        Why the fit is flagged: kappa's posterior mean is infinite, or the prior is a
        truncation without which the posterior would be improper.

    Warns
    -----
    BayesianDiagnosticsWarning
        With the reasons, if any; and, unflagged, if the draws' k-hat exceeds 1 where the
        posterior's mean is finite (the draws' mean of kappa is then unreliable).
    """
    tail = kappa_tail(prior)
    a, _ = s_prior(prior)
    improper = bool(improper_without_truncation(successes, trials, prior))
    k_hat = np.nan if kappa is None else _pareto_khat(kappa)
    reasons = []
    if not tail["mean_finite"]:
        reasons.append(
            f"kappa's posterior mean is infinite under prior {prior!r} (the posterior "
            f"density of s = kappa^(-1/2) behaves like s^{a - 1:g} at 0: moments of kappa "
            f"exist only below order {a / 2:g}); summarize kappa by quantiles (every "
            "credible interval is unaffected)"
        )
    if improper:
        reasons.append(
            f"every person has 0 successes or all: without its truncation at kappa >= 1 "
            f"prior {prior!r} gives an improper posterior, and the truncation decides the "
            "posterior of kappa and moves mu's interval (compare it under the 'pareto' "
            "prior: prior sensitivity)"
        )
    if reasons:
        warnings.warn(
            "the posterior is flagged: " + "; ".join(reasons) + ".",
            BayesianDiagnosticsWarning,
            stacklevel=3,
        )
    if tail["mean_finite"] and k_hat > 1:
        warnings.warn(
            f"the draws of kappa have the upper tail of an infinite-mean distribution "
            f"(Pareto k-hat {k_hat:.2f} > 1) though the posterior's mean is finite (k = "
            f"{tail['pareto_k']:.2f}): the draws' mean of kappa is unreliable; its quantiles "
            "are not.",
            BayesianDiagnosticsWarning,
            stacklevel=3,
        )
    entry = {**tail, "pareto_k_hat": k_hat, "improper_without_truncation": improper}
    return {"kappa": entry}, tuple(reasons)


def moment_notes(prior: str, k_hat: float) -> tuple[bool, bool, str]:
    """Whether kappa's mean and SD can be reported, and if not why, in words.

    Theory first (:func:`~perfci._core.tails.kappa_tail`); for MCMC draws, a moment of
    order r that exists is still not estimated from the draws when r * k-hat >= 1 (their
    tail then behaves as if it had no such moment). A NaN `k_hat` (the exact grid)
    leaves the theory's answer.
    """
    tail = kappa_tail(prior)
    a, _ = s_prior(prior)
    infinite = [
        m for m, ok in (("mean", tail["mean_finite"]), ("sd", tail["variance_finite"])) if not ok
    ]
    unreliable = [
        m for m, order in (("mean", 1), ("sd", 2)) if m not in infinite and order * k_hat >= 1
    ]
    notes = []
    if infinite:
        notes.append(
            f"{' and '.join(infinite)} infinite (under prior {prior!r} the moments of kappa "
            f"exist only below order {a / 2:g})"
        )
    if unreliable:
        notes.append(
            f"{' and '.join(unreliable)} not estimable from these draws (Pareto k-hat "
            f"{k_hat:.2f} of their upper tail)"
        )
    dropped = set(infinite) | set(unreliable)
    return "mean" not in dropped, "sd" not in dropped, "; ".join(notes)
