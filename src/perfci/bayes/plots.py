"""Plots of a fitted beta-binomial model (ArviZ's plot collections; imported when called)."""

from __future__ import annotations

from typing import Any

from .._core.validation import check_confidence_level
from .results import BayesFit, check_estimand

__all__ = ["plot_forest", "plot_posterior"]


def plot_posterior(result: BayesFit, estimand: str = "population", level: float = 0.95) -> Any:
    """Plot the posterior of ``population``, ``mu`` or ``sampled_persons`` with its interval.

    Uses :func:`arviz_plots.plot_dist`; returns its plot collection.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import perfci as pc
    >>> fit = pc.bayes.fit([9, 8, 10, 7], [10, 10, 10, 10], sampler="grid", rng=1)
    >>> pc_ = pc.bayes.plot_posterior(fit)
    """
    estimand = check_estimand("estimand", estimand, ("population", "mu", "sampled_persons"))
    lvl = float(check_confidence_level(level, "level", scalar=True))
    import arviz_plots as azp

    return azp.plot_dist(
        result.posterior,
        var_names=[estimand],
        ci_prob=lvl,
        ci_kind="eti",
        point_estimate="median",
        backend="matplotlib",
    )


def plot_forest(result: BayesFit, level: float = 0.95) -> Any:
    """Forest plot of person-level rates (partial pooling) beside the pooled ``mu``.

    Uses :func:`arviz_plots.plot_forest`; returns its plot collection.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import perfci as pc
    >>> fit = pc.bayes.fit([9, 8, 10, 7], [10, 10, 10, 10], sampler="grid", rng=1)
    >>> pc_ = pc.bayes.plot_forest(fit)
    """
    lvl = float(check_confidence_level(level, "level", scalar=True))
    import arviz_plots as azp

    return azp.plot_forest(
        result.posterior,
        var_names=["mu", "p"],
        ci_probs=(0.5, lvl),
        ci_kind="eti",
        point_estimate="median",
        combined=True,
        backend="matplotlib",
    )
