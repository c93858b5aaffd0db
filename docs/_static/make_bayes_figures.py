"""Make the figures of the Bayesian page: a posterior and a forest plot.

Run from the repository root::

    .venv/bin/python docs/_static/make_bayes_figures.py

It fits the hierarchical beta-binomial model to the recall of the bundled example data
(exact grid sampler, seed 1) and writes ``docs/_static/bayes_posterior_mu.png`` and
``docs/_static/bayes_posterior_population.png`` (the posteriors of ``mu`` and
``population`` with their 95% equal-tailed intervals and posterior medians, from
:func:`perfci.bayes.plot_posterior`) and ``docs/_static/bayes_forest.png`` (the
person-level rates, sorted, with their observed rates, against ``mu``, from
:func:`perfci.bayes.plot_forest`).
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import perfci as pc  # noqa: E402
from perfci.plotting import save_figure  # noqa: E402

HERE = Path(__file__).resolve().parent


def fit_example() -> pc.bayes.BayesFit:
    """Fit the recall of the example data by person, exactly (grid sampler, seed 1).

    Returns
    -------
    perfci.bayes.BayesFit
        The fit shown on the page.
    """
    texts = pc.load_example()
    return pc.bayes.fit_proportion(
        texts["human"], texts["model"], "recall", groups=texts["person"], sampler="grid", rng=1
    )


def posterior_figure(result: pc.bayes.BayesFit, path: Path) -> None:
    """Posterior densities of mu and of the population's text-weighted rate, one file each.

    Parameters
    ----------
    result : perfci.bayes.BayesFit
        The fit.
    path : pathlib.Path
        The PNG file name; ``_mu`` and ``_population`` are added to its stem.
    """
    for estimand in ("mu", "population"):
        ax = pc.bayes.plot_posterior(result, estimand, confidence_level=0.95)
        save_figure(ax.figure, path.with_name(f"{path.stem}_{estimand}"), close=True)


def forest_figure(result: pc.bayes.BayesFit, path: Path) -> None:
    """Forest plot of the person-level recall against mu (50% and 95% intervals).

    Parameters
    ----------
    result : perfci.bayes.BayesFit
        The fit.
    path : pathlib.Path
        The PNG file to write.
    """
    ax = pc.bayes.plot_forest(result, confidence_level=0.95)
    save_figure(ax.figure, path, close=True)


if __name__ == "__main__":
    fit = fit_example()
    posterior_figure(fit, HERE / "bayes_posterior.png")
    forest_figure(fit, HERE / "bayes_forest.png")
