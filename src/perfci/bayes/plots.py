"""Plots of a fitted beta-binomial model in perfci's figure style (matplotlib, loaded on use).

:func:`plot_posterior` draws the posterior density of a population-level estimand with
its credible interval and posterior median (the ``estimate`` of
:meth:`~perfci.bayes.BayesFit.interval`); :func:`plot_forest` the persons' rates, sorted,
with their observed rates and numbers of texts, against a population-level band. Both
return matplotlib axes; :func:`perfci.plotting.save_figure` writes their figure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.deprecation import DEFAULT_LEVEL, UNSET, hide_level, resolve_level
from .._core.validation import check_choice, check_confidence_level
from .results import ESTIMANDS, INTERVAL_KINDS, BayesFit, check_estimand

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_forest", "plot_posterior"]

#: The estimands with one value per draw (every estimand but the persons' rates).
_SCALAR_ESTIMANDS = tuple(e for e in ESTIMANDS if e != "person")
_KIND_WORDS = {"eti": "equal-tailed", "hdi": "highest-density"}


def _density(draws: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Gaussian kernel density of draws in [0, 1], reflected at both ends (no mass lost)."""
    from scipy.stats import gaussian_kde

    kde = gaussian_kde(draws)
    return np.asarray(kde(grid) + kde(-grid) + kde(2 - grid))


@hide_level
def plot_posterior(
    result: BayesFit,
    estimand: str = "population",
    confidence_level: float = DEFAULT_LEVEL,
    *,
    kind: str = "eti",
    ax: Axes | None = None,
    level: Any = UNSET,
) -> Axes:
    """Plot the posterior density of a population-level estimand with its credible interval.

    Parameters
    ----------
    result : BayesFit
        A fit of :func:`perfci.bayes.fit_proportion_counts`.
    estimand : str, default "population"
        Any estimand of :data:`perfci.bayes.ESTIMANDS` but ``"person"`` (see
        :func:`plot_forest` for the persons).
    confidence_level : float, default 0.95
        Credible level (``level``, its former name, is deprecated).
    kind : {"eti", "hdi"}, default "eti"
        Equal-tailed or highest-density interval.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 4.5 x 2.6 in figure.

    Returns
    -------
    matplotlib.axes.Axes
        The axes. The point marked is the **posterior median**, the ``estimate`` of
        ``result.interval(estimand, kind, confidence_level)``, and the bar below the density that
        interval; the legend says both, with their values.

    Notes
    -----
    For the grid sampler the density of ``mu`` is the exact gridded marginal (a step
    line; its median and interval are those :meth:`~perfci.bayes.BayesFit.interval`
    reports). Otherwise it is a Gaussian kernel density estimate of the pooled draws,
    reflected at 0 and 1 so that no mass leaks outside the rates' range. A posterior
    whose draws are all equal has no density: it is drawn as a vertical line at that
    value.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import perfci as pc
    >>> fit = pc.bayes.fit_proportion_counts([9, 8, 10, 7], [10, 10, 10, 10], sampler="grid", rng=1)
    >>> ax = pc.bayes.plot_posterior(fit, "mu", confidence_level=0.9)
    >>> ax.get_legend().get_texts()[1].get_text()
    'posterior median 0.767'
    >>> plt.close(ax.figure)
    """
    confidence_level = resolve_level(confidence_level, level)
    estimand = check_estimand("estimand", estimand, _SCALAR_ESTIMANDS)
    check_choice("kind", kind, INTERVAL_KINDS)
    lvl = float(check_confidence_level(confidence_level, "confidence_level", scalar=True))
    ci = result.interval(estimand, kind, lvl)
    import matplotlib.pyplot as plt

    from ..plotting import PALETTE, style

    with style():
        if ax is None:
            _, ax = plt.subplots(figsize=(4.5, 2.6))
        ax.grid(False)
        if result.sampler == "grid" and estimand == "mu":
            grid = result.posterior["grid"]
            edges = grid["mu_edge"].to_numpy()
            mass = grid["mu_mass"].to_numpy()
            mids = (edges[1:] + edges[:-1]) / 2
            ax.plot(mids, mass / np.diff(edges), color=PALETTE[0], label="exact posterior (grid)")
        else:
            draws = result.draws(estimand)
            if np.ptp(draws) == 0:
                ax.axvline(draws[0], color=PALETTE[0], label="posterior (one value)")
            else:
                pad = 0.1 * np.ptp(draws)
                x = np.linspace(max(draws.min() - pad, 0.0), min(draws.max() + pad, 1.0), 512)
                ax.plot(x, _density(draws, x), color=PALETTE[0], label="posterior density")
        ax.set_ylim(bottom=0)
        top = ax.get_ylim()[1]
        ax.hlines(0.04 * top, ci.low, ci.high, color="0.15", lw=1.6)
        ax.plot(ci.estimate, 0.04 * top, "o", color=PALETTE[1], ms=5, zorder=3)
        handles, labels = ax.get_legend_handles_labels()
        from matplotlib.lines import Line2D

        handles += [
            Line2D([], [], color=PALETTE[1], marker="o", ls="", ms=5),
            Line2D([], [], color="0.15", lw=1.6),
        ]
        labels += [
            f"posterior median {ci.estimate:.3f}",
            f"{lvl:.0%} {_KIND_WORDS[kind]} interval [{ci.low:.3f}, {ci.high:.3f}]",
        ]
        ax.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.0, 1.0))  # above
        ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        ax.set_ylabel("posterior density")
        ax.set_xlabel(estimand)
    return ax


@hide_level
def plot_forest(
    result: BayesFit,
    confidence_level: float = DEFAULT_LEVEL,
    *,
    sort: bool = True,
    band: str = "mu",
    kind: str = "eti",
    ax: Axes | None = None,
    level: Any = UNSET,
) -> Axes:
    """Forest plot of the persons' rates (partial pooling) against a population estimand.

    One row per person: the posterior median of :math:`p_i` with its 50% and
    `confidence_level` credible intervals, and the observed rate :math:`y_i/n_i` as an
    open circle whose area is the person's number of relevant texts :math:`n_i` (written
    beside each row while every row is labelled). The population-level estimand `band` is
    a vertical band (its `confidence_level` interval) and line (its median) across all
    rows, so the distance each person is pulled from their observed rate towards it
    shows.

    Parameters
    ----------
    result : BayesFit
        A fit of :func:`perfci.bayes.fit_proportion_counts`.
    confidence_level : float, default 0.95
        Credible level of the outer intervals and of the band (``level``, its former
        name, is deprecated).
    sort : bool, default True
        Rows sorted by posterior median, highest at the top; else in the fit's order.
    band : str, default "mu"
        The population-level estimand drawn as the band (any of
        :data:`perfci.bayes.ESTIMANDS` but ``"person"``).
    kind : {"eti", "hdi"}, default "eti"
        Equal-tailed or highest-density intervals.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new figure 6 in wide, 0.14 in a person tall, at
        most 9 in (see :func:`perfci.plotting.forest`: with hundreds of persons rows get
        thinner and labels sparser, none beyond one in four).

    Returns
    -------
    matplotlib.axes.Axes
        The axes; the y tick labels are the persons, top row first.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import perfci as pc
    >>> fit = pc.bayes.fit_proportion_counts([9, 5, 10, 7], [10, 10, 10, 10], sampler="grid", rng=1)
    >>> ax = pc.bayes.plot_forest(fit)
    >>> [t.get_text() for t in ax.get_yticklabels()]  # persons, highest median first
    ['2', '0', '3', '1']
    >>> plt.close(ax.figure)
    """
    confidence_level = resolve_level(confidence_level, level)
    lvl = float(check_confidence_level(confidence_level, "confidence_level", scalar=True))
    check_choice("band", band, _SCALAR_ESTIMANDS)
    check_choice("kind", kind, INTERVAL_KINDS)
    from ..plotting import forest

    persons = result.interval("person", kind, lvl)
    half = result.interval("person", kind, 0.5)
    population = result.interval(band, kind, lvl)
    labels = result.posterior["posterior"]["p"]["person"].to_numpy()
    words = _KIND_WORDS[kind]
    return forest(
        persons.estimate,
        persons.low,
        persons.high,
        inner=(half.low, half.high),
        labels=labels,
        observed=(result.successes, result.trials),
        band=(population.estimate, population.low, population.high),
        sort=sort,
        ax=ax,
        interval_label=f"{lvl:.0%} {words} interval",
        inner_label=f"50% {words} interval",
        estimate_label="posterior median",
        band_label=f"{band}: median, {lvl:.0%} interval",
        xlabel="person-level rate p_i",
    )
