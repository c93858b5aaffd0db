"""The validation report's per-person figures: each person's rate, and its Bayesian forest.

:func:`persons_figure` draws each person's observed rate of the report's main metric with
its interval (:func:`perfci.plotting.forest`); :func:`bayes_persons_figure` the persons'
partially pooled rates of the hierarchical beta-binomial model behind the table's
Bayesian row (:func:`perfci.bayes.plot_forest`, fitted by :func:`bayes_person_fit`).
Beyond :data:`PERSONS_NAMED` persons both become caterpillar plots
(:func:`caterpillar`): the rows stay sorted, but instead of a thinned list of person ids
that no reader can match to their rows the y-axis gives the persons' ranks.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..plotting import figure_text
from .tables import all_texts, is_bayes, level_text, short_method

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ..bayes import BayesFit

__all__ = [
    "PERSONS_NAMED",
    "bayes_person_fit",
    "bayes_persons_figure",
    "caterpillar",
    "persons_figure",
]

#: The most persons a per-person figure names, one label per row; with more it is a
#: caterpillar plot, its rows sorted and its y-axis their ranks.
PERSONS_NAMED = 60
#: The most rank ticks of a caterpillar plot.
_MOST_TICKS = 7
#: The Bayesian row a per-person Bayesian forest belongs to, and its sampler.
_BETA_BINOMIAL = re.compile(r"^bayes beta-binomial, population \((\w+), eti\)$")


def caterpillar(ax: Axes, persons: int) -> None:
    """Make a forest of more than :data:`PERSONS_NAMED` persons a caterpillar plot.

    The person ids and the column of counts beside them go; the y-axis gets at most
    seven ticks of the persons' ranks (1 is the top row, the highest rate) and a label
    that says so. A forest of fewer persons is left as it is.
    """
    if persons <= PERSONS_NAMED:
        return
    for text in list(ax.texts):  # the y/n column beside named rows
        text.remove()
    step = next(
        s
        for s in (10**k * m for k in range(math.ceil(math.log10(persons)) + 1) for m in (1, 2, 5))
        if persons / s <= _MOST_TICKS - 1
    )
    ranks = [1, *range(step, persons + 1, step)]
    if persons - ranks[-1] >= step / 2:
        ranks.append(persons)
    ax.set_yticks([persons - r for r in ranks], [str(r) for r in ranks])  # rank 1 at the top
    ax.tick_params(axis="y", length=2.5, labelsize=7)
    ax.set_ylabel(f"{persons} persons, ranked by their rate (1: the highest)")


def persons_figure(
    table: pd.DataFrame, rates: pd.DataFrame, metric: str, method: str, level: float
) -> Figure:
    """Draw each person's rate of `metric` with its interval, against the band of all persons."""
    from ..plotting import forest

    rows = all_texts(table)
    [row] = rows[(rows["metric"] == metric) & ~rows["method"].map(is_bayes).astype(bool)].to_dict(
        "records"
    )
    shown = level_text(level)
    ax = forest(
        rates["estimate"].to_numpy(float),
        rates["low"].to_numpy(float),
        rates["high"].to_numpy(float),
        labels=[figure_text(p) for p in rates["person"]],
        observed=(rates["successes"].to_numpy(float), rates["trials"].to_numpy(float)),
        band=(float(row["estimate"]), float(row["low"]), float(row["high"])),
        band_label=f"all persons, {short_method(str(row['method']))} {shown}",
        interval_label=f"{shown} interval of the person ({method})",
        estimate_label="the person's rate",
        xlabel=figure_text(f"{metric} of each person"),
    )
    caterpillar(ax, len(rates))
    return cast("Figure", ax.figure)


def bayes_person_fit(
    table: pd.DataFrame, rates: pd.DataFrame, metric: str, level: float, rng: Any
) -> BayesFit | None:
    """Fit the beta-binomial behind the table's Bayesian row of `metric`; None without one.

    :func:`perfci.report` keeps the rows, not the fits, so the model is fitted again to the
    persons' counts of `rates`, by the sampler the row names and the row's (default)
    prior; its population interval is the row's up to the Monte Carlo error of the
    posterior draws. A failed diagnostic is in the row's note, not warned again.
    """
    from ..bayes import BayesianDiagnosticsWarning, fit_proportion_counts

    rows = all_texts(table)
    labels = [str(m) for m in rows.loc[rows["metric"] == metric, "method"]]
    found = next((m for m in map(_BETA_BINOMIAL.match, labels) if m), None)
    if found is None:
        return None
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BayesianDiagnosticsWarning)
        return fit_proportion_counts(
            rates["successes"].to_numpy(),
            rates["trials"].to_numpy(),
            sampler=found.group(1),
            confidence_level=level,
            rng=rng,
            persons=[str(p) for p in rates["person"]],
        )


def bayes_persons_figure(fit: BayesFit, metric: str, level: float) -> Figure:
    """Draw the persons' posterior rates of `metric` (:func:`perfci.bayes.plot_forest`)."""
    from ..bayes import plot_forest

    ax = plot_forest(fit, level, band="population")
    ax.set_xlabel(figure_text(f"{metric} of each person (posterior, partially pooled)"))
    named = [figure_text(t.get_text()) for t in ax.get_yticklabels()]
    if named:  # person ids from the data: a `$` is a dollar
        ax.set_yticks(ax.get_yticks(), named)
    caterpillar(ax, int(np.size(fit.trials)))
    return cast("Figure", ax.figure)
