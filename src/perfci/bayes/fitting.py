"""Fitting the hierarchical models: fit_proportion(_counts) and fit_confusion_counts.

:func:`fit_proportion_counts` fits the hierarchical beta-binomial to per-person counts of
a proportion (:func:`fit_proportion` from labels) with the exact grid
(:mod:`~perfci.bayes.grid`) or MCMC (:mod:`~perfci.bayes.samplers`);
:func:`fit_confusion_counts` fits a hierarchical model to per-person confusion matrices,
by MCMC or by the hierarchical margins of :mod:`~perfci.bayes.nested`. The former names
``fit``, ``fit_labels`` and ``fit_confusion`` still work, with a FutureWarning.
:func:`grid_intervals` and :func:`shared_grid_intervals` are re-exported from
:mod:`~perfci.bayes.grid`, where they live.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core.deprecation import renamed
from .._core.grid import (
    check_counts,
    check_grid_shape,
    check_population,
    check_texts,
    draw_grid_posterior,
    draw_person_rates,
    grid_posterior,
    s_prior,
)
from .._core.margins import BINARY, nested_draws
from .._core.population import draw_population
from .._core.validation import (
    check_choice,
    check_confidence_level,
    check_counts_array,
    check_memory,
    check_positive_int,
    check_rng,
)
from ..metrics import BINARY_METRICS, PROPORTION_METRICS, proportion_counts
from .grid import GRID_DRAWS, GRID_ESTIMANDS, GRID_SHAPE, grid_intervals, shared_grid_intervals
from .nested import MARGIN_GRID_SHAPE
from .posterior import metric_bounds, metric_function
from .results import BayesFit, ConfusionFit
from .samplers import (
    BayesianDiagnosticsWarning,
    compiled_confusion,
    compiled_marginal,
    data_for,
    diagnostics,
    run_mcmc,
)
from .tails import check_tails

if TYPE_CHECKING:
    import xarray as xr

__all__ = [
    "GRID_DRAWS",
    "GRID_ESTIMANDS",
    "GRID_SHAPE",
    "SAMPLERS",
    "fit",
    "fit_confusion",
    "fit_confusion_counts",
    "fit_labels",
    "fit_proportion",
    "fit_proportion_counts",
    "grid_intervals",
    "resolve_sampler",
    "shared_grid_intervals",
]

SAMPLERS = ("auto", "nutpie", "pymc", "grid")


# ----------------------------------------------------------------------- validation


def resolve_sampler(sampler: str, grid_is_exact: bool) -> str:
    """Return the sampler ``"auto"`` stands for: the grid where it is exact, else nutpie.

    The grid is exact for the hierarchical beta-binomial of one proportion (every
    estimand); no grid computes the hierarchical confusion model. Other names are
    returned as they are.
    """
    if sampler != "auto":
        return sampler
    return "grid" if grid_is_exact else "nutpie"


# --------------------------------------------------------------------------- fitting


def _posterior_tree(
    mu: NDArray[np.float64],
    s: NDArray[np.float64],
    population: NDArray[np.float64],
    sampled_persons: NDArray[np.float64],
    p: NDArray[np.float64],
    persons: NDArray[Any],
    extra: dict[str, Any] | None = None,
) -> xr.DataTree:
    import xarray as xr

    dims = ("chain", "draw")
    posterior = xr.Dataset(
        {
            "mu": (dims, mu),
            "s": (dims, s),
            "kappa": (dims, s**-2.0),
            "population": (dims, population),
            "sampled_persons": (dims, sampled_persons),
            "p": ((*dims, "person"), p),
        },
        coords={"chain": np.arange(mu.shape[0]), "draw": np.arange(mu.shape[1]), "person": persons},
    )
    groups = {"posterior": posterior, **(extra or {})}
    return xr.DataTree.from_dict(groups)


def fit_proportion_counts(
    successes: ArrayLike,
    trials: ArrayLike,
    *,
    sampler: str = "auto",
    prior: str = "pareto",
    confidence_level: float = 0.95,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    rng: Any = None,
    persons: ArrayLike | None = None,
    population_sizes: ArrayLike | None = None,
    population_persons: float | None = None,
    grid_shape: tuple[int, int] = GRID_SHAPE,
) -> BayesFit:
    """Fit the hierarchical beta-binomial model to per-person counts.

    Parameters
    ----------
    successes, trials : array_like of int
        Per-person successes y_i and relevant texts n_i (for recall: each person's true
        positives and reference positives). Persons without a relevant text are dropped;
        at least two must remain.
    sampler : {"auto", "nutpie", "pymc", "grid"}, default "auto"
        The exact grid posterior (``"grid"``), MCMC with nutpie (compiled once per prior
        and kept in the on-disk compile cache, :mod:`perfci.bayes.compile_cache`; refit
        to new data), or MCMC with PyMC's NUTS. ``"auto"`` is the grid: it is exact for
        this model and computes every estimand (``population``, ``mu``,
        ``sampled_persons``, ``person``), in milliseconds. The result's ``sampler`` says
        which one ran.
    prior : {"pareto", "bda3"}, default "pareto"
        Concentration prior (see :mod:`perfci.models.beta_binomial`).
    confidence_level : float, default 0.95
        The level of the fit's credible intervals (:meth:`BayesFit.interval`,
        :meth:`BayesFit.summary`, ...) when they are not given one.
    draws, tune, chains : int
        MCMC draws and tuning steps per chain, and chains. For the grid sampler,
        ``draws * chains`` independent draws are taken from the exact posterior (and
        split into `chains` groups); `tune` is unused.
    rng : numpy.random.Generator, int or None
        Seed for the sampler and the person-rate draws; the same seed gives the same
        posterior.
    persons : array_like, optional
        Person ids for the ``person`` coordinate.
    population_sizes : array_like, optional
        Each person's size in the population the classifier will be applied to (their
        texts there, or a number proportional to them); by default `trials`. Weights the
        ``population`` and ``sampled_persons`` estimands.
    population_persons : float, optional
        Persons in the population (at least those fitted); by default infinitely many.
    grid_shape : tuple of int, default (400, 100)
        Grid cells in mu and s for the grid sampler.

    Returns
    -------
    BayesFit
        The posterior (an :class:`xarray.DataTree`), diagnostics and flags; use
        :meth:`BayesFit.interval` for credible intervals.

    Warns
    -----
    BayesianDiagnosticsWarning
        If the fit fails R-hat <= 1.01, bulk and tail ESS >= 400, or has divergences; if
        kappa's posterior mean is infinite (``prior="bda3"``, for every data set); or if
        every person has 0 successes or all under ``"bda3"``, whose posterior would be
        improper without its truncation. These flag the fit (see
        :attr:`BayesFit.tail`); its credible intervals stay valid, being quantiles.

    Notes
    -----
    The grid sampler is :func:`grid_intervals` on one data set: the same grid, the same
    draws in the same order from ``np.random.default_rng(rng)``. Its intervals equal
    those of ``grid_intervals(successes, trials, estimand=..., draws=draws * chains,
    shape=grid_shape, rng=rng)`` exactly. For the MCMC samplers the person rates, then
    the population's t deviations (:mod:`perfci._core.population`), are drawn from `rng`
    after sampling, given each draw of (mu, s).

    Examples
    --------
    >>> import perfci as pc
    >>> y, n = [28, 25, 30, 22, 27, 29], [30, 30, 30, 26, 30, 30]
    >>> result = pc.bayes.fit_proportion_counts(y, n, sampler="grid", rng=1)
    >>> ci = result.interval("mu", kind="eti", confidence_level=0.9)
    >>> print(f"mu {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    mu 0.850 [0.676, 0.933]
    >>> ci = result.interval("population", kind="eti", confidence_level=0.9)
    >>> print(f"population {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")  # drawn: 2 decimals
    population 0.91 [0.81, 0.96]
    """
    check_choice("sampler", sampler, SAMPLERS)
    level = float(check_confidence_level(confidence_level, "confidence_level", scalar=True))
    # one proportion: the grid posterior is exact for every estimand
    sampler = resolve_sampler(sampler, grid_is_exact=True)
    s_prior(prior)
    for name, value in (("draws", draws), ("tune", tune), ("chains", chains)):
        check_positive_int(name, value)
    cells = check_grid_shape("grid_shape", grid_shape)
    generator = check_rng(rng)
    y, n = check_counts(successes, trials)
    weights, total = check_population(population_sizes, population_persons, n)
    check_texts(n, cells if sampler == "grid" else None)
    if sampler == "grid":
        check_memory("grid_shape", 48.0 * cells[0] * cells[1], "use fewer grid cells")
        # mu, s, kappa, the two weighted rates and every person's rate, per draw
        check_memory(
            "draws",
            8.0 * draws * chains * (4 + int(np.count_nonzero(n))) * 2,
            f"ask for fewer draws or chains than {draws} x {chains}",
        )
    keep = n > 0
    ids = np.arange(y.size) if persons is None else np.asarray(persons)
    if ids.shape != y.shape:
        raise ValueError(f"`persons` must have one id per person ({y.size}); got {ids.size}.")
    y, n, ids = y[keep], n[keep], ids[keep]
    u = n.astype(np.float64) if weights is None else weights[keep]
    population_total = None if total is None else float(total)

    if sampler == "grid":
        import xarray as xr

        posterior = grid_posterior(y[None, :], n[None, :], prior, cells)
        drawn = draw_grid_posterior(
            posterior,
            y[None, :],
            n[None, :],
            draws * chains,
            [generator],
            weights=u[None, :],
            population_persons=None if total is None else total[None],
            rates=True,
        )
        rates = cast(NDArray[np.float64], drawn.rates)  # asked for: never None
        grid = xr.Dataset(
            {
                "mu_mass": ("mu_cell", posterior.mu_mass[0]),
                "mu_edge": ("mu_edge_index", posterior.mu_edge[0]),
                "s_mass": ("s_cell", posterior.mass[0].sum(axis=0)),
                "s_edge": ("s_edge_index", posterior.s_edge[0]),
            }
        )
        tree = _posterior_tree(
            drawn.mu[0].reshape(chains, draws),
            drawn.s[0].reshape(chains, draws),
            drawn.population[0].reshape(chains, draws),
            drawn.sampled_persons[0].reshape(chains, draws),
            rates[0].reshape(chains, draws, -1),
            ids,
            {"grid": grid},
        )
        k = float(draws * chains)
        diag = {"r_hat": np.nan, "ess_bulk": k, "ess_tail": k, "divergences": 0}
        tail, flags = check_tails(prior, y, n)
        return BayesFit(tree, sampler, prior, y, n, diag, bool(flags), flags, tail, level)

    seed = int(generator.integers(2**31 - 1))
    if sampler == "nutpie":
        model = compiled_marginal(prior).with_data(**data_for(y, n))
    else:
        from ..models.beta_binomial import beta_binomial_marginal

        model = beta_binomial_marginal(y, n, prior=prior)
    trace = run_mcmc(sampler, model, draws, tune, chains, seed)
    mu = trace["posterior"]["mu"].to_numpy()
    s = trace["posterior"]["s"].to_numpy()
    p, sampled, spread = draw_person_rates(mu, s, y, n, generator, weights=u)
    population = draw_population(sampled, spread, y.size, population_total, generator)
    stats_ds = trace["sample_stats"].to_dataset()
    extra = {"sample_stats": stats_ds[["diverging"]]}
    tree = _posterior_tree(mu, s, population, sampled, cast(NDArray[np.float64], p), ids, extra)
    diag, reasons = diagnostics(tree, ["mu", "s"])
    tail, flags = check_tails(prior, y, n, tree["posterior"]["kappa"].to_numpy())
    reasons += flags
    return BayesFit(tree, sampler, prior, y, n, diag, bool(reasons), reasons, tail, level)


def fit_proportion(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    metric: str,
    *,
    groups: ArrayLike,
    positive: Any = None,
    confidence_level: float = 0.95,
    **options: Any,
) -> BayesFit:
    """Fit the hierarchical beta-binomial model to a proportion metric from labels.

    Parameters
    ----------
    y_true, y_pred : array_like
        Reference and classifier labels, one per text.
    metric : str
        A proportion metric: accuracy, recall, precision, specificity or npv; the model
        is fitted to each person's relevant texts for it.
    groups : array_like
        Person ids, one per text (keyword-only, after the metric, as in every labels
        function).
    positive : object, optional
        The positive label (as in :func:`perfci.confusion`).
    confidence_level : float, default 0.95
        The level of the fit's credible intervals when they are not given one.
    **options
        Passed to :func:`fit_proportion_counts` (sampler, by default ``"auto"``, the
        exact grid; prior,
        draws, tune, chains, rng, population_persons). ``population_sizes`` may be a
        mapping (a dict or a pandas Series) from person id to the person's size in the
        population; every fitted person needs one.

    Returns
    -------
    BayesFit
        The fit, with person ids as the ``person`` coordinate.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> result = pc.bayes.fit_proportion(texts["human"], texts["model"], "recall",
    ...                                  groups=texts["person"], sampler="grid", rng=1)
    >>> ci = result.interval("population", confidence_level=0.95)
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")  # drawn: 2 decimals
    0.88 [0.81, 0.92]
    """
    check_choice("metric", metric, PROPORTION_METRICS)
    from ..counting import confusion

    per_person = confusion(y_true, y_pred, positive=positive, groups=groups)
    if per_person.counts.ndim != 2:
        raise ValueError("`positive` must name the class for multi-class labels.")
    y, n = proportion_counts(per_person.counts, metric)
    sizes = options.get("population_sizes")
    ids = cast(NDArray[Any], per_person.groups)  # with groups given: never None
    if sizes is not None and hasattr(sizes, "keys"):
        missing = [g for g in ids if g not in sizes]
        if missing:
            raise ValueError(
                f"`population_sizes` must give a size for every person; missing "
                f"{missing[:5]!r}{' ...' if len(missing) > 5 else ''}."
            )
        options = {**options, "population_sizes": [sizes[g] for g in ids]}
    return fit_proportion_counts(y, n, persons=ids, confidence_level=confidence_level, **options)


def fit_confusion_counts(
    counts: ArrayLike,
    *,
    sampler: str = "auto",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    rng: Any = None,
    estimand: str = "population",
    prior: str = "pareto",
    confidence_level: float = 0.95,
) -> ConfusionFit:
    """Fit a hierarchical model to per-person confusion matrices.

    Parameters
    ----------
    counts : array_like of int
        Per-person ``[tp, fp, fn, tn]``, shape ``(m, 4)``, m >= 2 (for independent
        texts use the closed form, :func:`confusion_posterior`).
    sampler : {"auto", "nutpie", "pymc", "grid"}, default "auto"
        MCMC of the hierarchical Dirichlet-multinomial (``"auto"`` is nutpie, whose
        compiled model is kept in the compile cache and refit to any m), or ``"grid"``: the
        hierarchical margins model of :func:`nested_metric_intervals` (exact grid
        posterior of each margin).
    draws, tune, chains : int
        MCMC settings. For the grid sampler, ``draws * chains`` independent draws are
        taken (split into `chains` groups); `tune` is unused.
    rng : numpy.random.Generator, int or None
        Seed.
    estimand : {"population", "sampled_persons"}, default "population"
        Grid sampler only: what the metrics' draws are about (see
        :func:`nested_metric_intervals`). The MCMC model's metrics are of its mean cell
        probabilities pi (each person counting once).
    prior : {"pareto", "bda3"}, default "pareto"
        Grid sampler only: the prior of every margin's concentration.
    confidence_level : float, default 0.95
        The level of the fit's credible intervals (:meth:`ConfusionFit.interval`,
        :meth:`ConfusionFit.to_dict`) when they are not given one.

    Returns
    -------
    ConfusionFit
        Posterior of the population metrics (recall, precision and F1 for MCMC; every
        binary metric for the grid), with diagnostics.

    Notes
    -----
    The grid sampler's intervals equal those of ``nested_metric_intervals(counts,
    metric, estimand=estimand, prior=prior, draws=draws * chains, rng=rng)`` exactly;
    its diagnostics are those of independent draws (R-hat NaN), and it is flagged when a
    margin falls back to a pooled rate.

    Examples
    --------
    >>> import perfci as pc
    >>> per_person = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [4, 1, 1, 15]]
    >>> result = pc.bayes.fit_confusion_counts(per_person, rng=1)
    >>> ci = result.interval("f1", confidence_level=0.9)
    >>> bool(0 < ci.low < ci.estimate < ci.high < 1)
    True
    >>> grid = pc.bayes.fit_confusion_counts(per_person, sampler="grid", rng=1)
    >>> ci = grid.interval("kappa", confidence_level=0.9)
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")  # drawn; the low end to 0.1
    0.75 [0.5, 0.9]
    """
    from .._core import registry

    registry.CONFUSION_SAMPLER.check(sampler, "sampler")
    sampler = resolve_sampler(sampler, grid_is_exact=False)
    for name, value in (("draws", draws), ("tune", tune), ("chains", chains)):
        check_positive_int(name, value)
    registry.CONFUSION_ESTIMAND.check(estimand, "estimand")
    s_prior(prior)
    level = float(check_confidence_level(confidence_level, "confidence_level", scalar=True))
    cells = check_counts_array("counts", counts)
    if cells.ndim != 2 or cells.shape[1] != 4 or np.any(cells < 0):
        raise ValueError(
            f"`counts` must be per-person [tp, fp, fn, tn], shape (m, 4); got {cells.shape}."
        )
    cells = cells[cells.sum(1) > 0].astype(np.int64)
    if cells.shape[0] < 2:
        raise ValueError("`counts` must hold at least 2 persons with texts.")
    if sampler == "grid":
        fit = _grid_confusion_fit(cells, estimand, prior, draws, chains, rng)
        return dataclasses.replace(fit, confidence_level=level)
    seed = int(check_rng(rng).integers(2**31 - 1))
    if sampler == "nutpie":
        # compiled once per machine (the compile cache), refit to these persons
        model = compiled_confusion().with_data(counts=cells.astype(float))
    else:
        from ..models.confusion import hierarchical_confusion

        model = hierarchical_confusion(cells)
    trace = run_mcmc(sampler, model, draws, tune, chains, seed)
    diag, reasons = diagnostics(trace, ["kappa", "recall", "precision", "f1"])
    return ConfusionFit(trace, diag, bool(reasons), reasons, level)


def _grid_confusion_fit(
    cells: NDArray[np.int64], estimand: str, prior: str, draws: int, chains: int, rng: Any
) -> ConfusionFit:
    """fit_confusion_counts's grid sampler: the hierarchical margins model's draws as a fit."""
    import xarray as xr

    count = draws * chains
    check_memory(
        "draws",
        8.0 * count * cells.shape[0] * 16,
        f"ask for fewer draws or chains than {draws} x {chains}",
    )
    check_texts(cells.sum(-1), MARGIN_GRID_SHAPE, name="counts")
    functions = {m: (metric_function(m, 2), metric_bounds(m)) for m in BINARY_METRICS}
    drawn = nested_draws(
        BINARY,
        cells[None],
        functions,
        prior,
        MARGIN_GRID_SHAPE,
        count,
        [check_rng(rng)],
        keep_margins=True,
    )
    # no warnings: the fit's flags say what fell back
    values = drawn.population if estimand == "population" else drawn.sampled
    dims = ("chain", "draw")
    mu, kappa = cast(NDArray[np.float64], drawn.mu), cast(NDArray[np.float64], drawn.kappa)
    posterior = xr.Dataset(
        {
            **{m: (dims, values[m][0].reshape(chains, draws)) for m in BINARY_METRICS},
            "margin_mu": ((*dims, "margin"), mu[0].reshape(chains, draws, -1)),
            "margin_kappa": ((*dims, "margin"), kappa[0].reshape(chains, draws, -1)),
        },
        coords={"chain": np.arange(chains), "draw": np.arange(draws), "margin": list(BINARY.names)},
        attrs={"estimand": estimand, "prior": prior},
    )
    fell = [n for n, f in zip(BINARY.names, drawn.fallback[0], strict=True) if f]
    reasons = tuple(
        f"margin {name} has fewer than 2 persons with a text on it (one pooled rate)"
        for name in fell
    )
    if reasons:
        warnings.warn(
            "the hierarchical margins fell back (" + "; ".join(reasons) + "); the fit is flagged.",
            BayesianDiagnosticsWarning,
            stacklevel=3,
        )
    k = float(count)
    diag = {"r_hat": np.nan, "ess_bulk": k, "ess_tail": k, "divergences": 0}
    return ConfusionFit(
        xr.DataTree.from_dict({"posterior": posterior}), diag, bool(reasons), reasons
    )


# ----------------------------------------------------------------- former names

#: Former name of :func:`fit_proportion_counts`.
fit = renamed("fit", fit_proportion_counts)
#: Former name of :func:`fit_confusion_counts`.
fit_confusion = renamed("fit_confusion", fit_confusion_counts)


def fit_labels(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    groups: ArrayLike,
    metric: str,
    *,
    positive: Any = None,
    **options: Any,
) -> BayesFit:
    """Former name of :func:`fit_proportion`, with `groups` before `metric`; calling it warns."""
    warnings.warn(
        "`fit_labels` is renamed `fit_proportion` (which takes `groups` by keyword, after "
        "`metric`); the old name will be removed.",
        FutureWarning,
        stacklevel=2,
    )
    return fit_proportion(y_true, y_pred, metric, groups=groups, positive=positive, **options)
