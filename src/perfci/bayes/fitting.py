"""Fitting the hierarchical models: fit, fit_labels, fit_confusion and grid_intervals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core.grid import (
    draw_grid_posterior,
    draw_person_rates,
    grid_interval,
    grid_posterior,
    grid_posterior_blocks,
    interval_from_draws,
    s_prior,
)
from .._core.population import draw_population
from .._core.validation import (
    check_choice,
    check_confidence_level,
    check_memory,
    check_positive_int,
    check_real_array,
    check_rng,
    dataset_generators,
)
from ..metrics import PROPORTION_METRICS, proportion_counts
from .results import (
    INTERVAL_KINDS,
    BayesFit,
    ConfusionFit,
    CredibleInterval,
    check_estimand,
)
from .samplers import (
    _compiled_confusion,
    _compiled_marginal,
    _data_for,
    _diagnostics,
    _run_mcmc,
)
from .tails import check_tails

if TYPE_CHECKING:
    import xarray as xr

__all__ = [
    "GRID_ESTIMANDS",
    "SAMPLERS",
    "fit",
    "fit_confusion",
    "fit_labels",
    "grid_intervals",
    "resolve_sampler",
    "shared_grid_intervals",
]

SAMPLERS = ("auto", "nutpie", "pymc", "grid")
GRID_ESTIMANDS = ("population", "mu", "sampled_persons")
#: The grid estimands that are drawn (``"mu"`` is read off the gridded marginal).
_DRAWN = ("population", "sampled_persons")

#: Default draws of the grid sampler: ``fit``'s ``draws * chains`` (1000 x 4).
GRID_DRAWS = 4000
#: Default grid of the fine pass, for both ``fit(sampler="grid")`` and ``grid_intervals``.
GRID_SHAPE = (400, 100)
#: Grid cells (data sets x cells of the fine pass) computed at once by ``grid_intervals``.
_GRID_BLOCK = 1 << 23


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


def _check_counts(
    successes: ArrayLike, trials: ArrayLike, batch: bool = False
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    y = check_real_array("successes", successes)
    n = check_real_array("trials", trials)
    if y.shape != n.shape or y.ndim == 0:
        raise ValueError(
            f"`successes` and `trials` must be per-person arrays of the same shape; got "
            f"{y.shape} and {n.shape}."
        )
    if np.any(y < 0) or np.any(n < 0) or np.any(y != np.round(y)) or np.any(n != np.round(n)):
        raise ValueError("`successes` and `trials` must be non-negative whole numbers.")
    if np.any(y > n):
        raise ValueError("`successes` must not exceed `trials` for any person.")
    if not batch and y.ndim != 1:
        raise ValueError("`successes` and `trials` must be one-dimensional (one per person).")
    persons = (n > 0).sum(-1)
    if np.any(persons < 2):
        where = ""
        if persons.ndim:
            first = tuple(int(i) for i in np.argwhere(persons < 2)[0])
            where = f" in data set {first if len(first) > 1 else first[0]}"
        raise ValueError(
            "`trials` must give at least 2 persons with a relevant text; a hierarchical "
            f"model of persons needs more than one; got {int(np.min(persons))}{where}."
        )
    return y.astype(np.int64), n.astype(np.int64)


def _check_shape(name: str, value: Any) -> tuple[int, int]:
    try:
        cells = tuple(value)
    except TypeError:
        cells = ()
    if (
        len(cells) != 2
        or any(isinstance(c, bool) or not isinstance(c, int | np.integer) for c in cells)
        or min(cells) < 2
    ):
        raise ValueError(
            f"`{name}` must be two integers of at least 2 (grid cells in mu and in s); "
            f"got {value!r}."
        )
    return int(cells[0]), int(cells[1])


def _is_number(value: Any) -> bool:
    """Not a string, bool or None (NumPy would read a string or a bool as a number)."""
    return not (isinstance(value, str | bytes | bool | np.bool_) or value is None)


def _check_population(
    sizes: ArrayLike | None, population_persons: Any, trials: NDArray[np.int64]
) -> tuple[NDArray[np.float64] | None, NDArray[np.float64] | None]:
    """Validate the population's sizes and persons against (K, m) trials."""
    weights = None
    if sizes is not None:
        u = check_real_array("population_sizes", sizes)
        if u.shape != trials.shape:
            raise ValueError(
                f"`population_sizes` must give one size per person, of the shape of `trials` "
                f"{trials.shape}; got {u.shape}."
            )
        if np.any(u[trials > 0] <= 0):
            raise ValueError(
                "`population_sizes` must be positive for every person with a relevant text "
                "(their texts in the population, or a number proportional to them)."
            )
        weights = np.where(trials > 0, u, 0.0)
    total = None
    if population_persons is not None:
        sampled = (trials > 0).sum(-1)
        value = np.asarray(population_persons) if _is_number(population_persons) else None
        if value is not None and value.dtype.kind in "iuf" and value.ndim <= sampled.ndim:
            try:
                total = np.broadcast_to(value, sampled.shape).astype(np.float64)
            except ValueError:
                total = None
        if total is None or np.any(~(total >= sampled)):
            raise ValueError(
                "`population_persons` must be a number (or one per data set) of at least the "
                f"sampled persons ({int(np.max(sampled, initial=0))}), or inf for an infinite "
                f"population; got {population_persons!r}."
            )
    return weights, total


# ------------------------------------------------------------------------ the grid


def grid_intervals(
    successes: ArrayLike,
    trials: ArrayLike,
    *,
    estimand: Literal["population", "mu", "sampled_persons"] = "population",
    level: float = 0.95,
    kind: Literal["eti", "hdi"] = "eti",
    prior: str = "pareto",
    population_sizes: ArrayLike | None = None,
    population_persons: Any = None,
    shape: tuple[int, int] = GRID_SHAPE,
    draws: int = GRID_DRAWS,
    rng: Any = None,
    batch: int | None = None,
) -> CredibleInterval:
    r"""Exact grid credible intervals for one data set or a batch of them.

    Parameters
    ----------
    successes, trials : array_like of int, shape (\*batch, persons)
        Per-person successes y_i and relevant texts n_i. Persons are on the last axis;
        every other leading axis indexes independent data sets. Persons with
        ``trials = 0`` are not persons: padding a data set with them (to make a ragged
        batch rectangular) changes nothing, draw for draw. Every data set needs at least
        2 persons with texts.
    estimand : {"population", "mu", "sampled_persons"}, default "population"
        What the interval is about (:mod:`perfci.bayes`): ``"population"``, the
        text-weighted rate of the population of persons (the estimand of the frequentist
        nested intervals); ``"mu"``, the mean person-level rate; ``"sampled_persons"``,
        :math:`\sum_i u_i p_i / \sum_i u_i` of the sampled persons only (formerly
        ``"text_weighted"``, still accepted with a FutureWarning). ``"mu"`` comes from
        the exact gridded marginal (no random numbers); the others from `draws`
        independent posterior draws.
    level : float, default 0.95
        Credible level.
    kind : {"eti", "hdi"}, default "eti"
        Interval kind.
    prior : {"pareto", "bda3"}, default "pareto"
        Concentration prior (see :mod:`perfci.models.beta_binomial`).
    population_sizes : array_like, shape of `trials`, optional
        Each person's size :math:`u_i` in the population the classifier will be applied
        to (their texts there, labelled or not, or any number proportional to them).
        By default their relevant texts here, ``trials``. Used by ``"population"`` and
        ``"sampled_persons"``.
    population_persons : float or array_like, optional
        Persons in the population, at least those sampled (one number, or one per data
        set). By default infinitely many; equal to the sampled persons, the population
        estimand is the sampled persons'.
    shape : tuple of int, default (400, 100)
        Grid cells in mu and in s = kappa^(-1/2) of the fine pass.
    draws : int, default 4000
        Posterior draws per data set for the drawn estimands.
    rng : numpy.random.Generator, int or None
        Seed of the draws (unused for ``"mu"``). A single data set (1-D input) uses
        ``np.random.default_rng(rng)`` itself; in a batch of K data sets (leading axes
        flattened in C order), data set k uses ``np.random.default_rng(rng).spawn(K)[k]``.
    batch : int, optional
        Data sets computed at once (bounds memory; the results do not depend on it). By
        default about 8 million grid cells' worth.

    Returns
    -------
    CredibleInterval
        With the posterior median as `estimate`; fields of the shape of the leading axes
        (floats for a single, 1-D data set).

    Notes
    -----
    Each data set's posterior of (mu, s) is computed on its own adaptive grid (see
    :func:`perfci._core.grid.grid_posterior`): the stable marginal log-likelihood of
    :func:`perfci.models.beta_binomial_marginal` evaluated by batched matrix products, a
    coarse pass over (0, 1)^2 to find the mass and a fine pass to cover it. A data set's
    result does not depend on what else is in the batch: element k of a batched call
    equals the call on data set k alone, with the generator the rule above gives it.
    Quantiles of mu interpolate its marginal CDF linearly within cells. For the drawn
    estimands, (mu, s) is drawn from the cells (uniform within a cell), the person rates
    from their exact Beta conditionals, and for ``"population"`` then a Student t
    deviation per draw for the persons not sampled (:mod:`perfci._core.population`:
    persons exchangeable, their size-weighted deviations normal with unknown variance).
    ``"population"`` and ``"sampled_persons"`` from the same generator share their
    person rates.

    This is the grid sampler of :func:`fit`: with the defaults,
    ``fit(y, n, sampler="grid", draws=D, chains=C, rng=seed).interval(estimand, kind,
    level)`` equals ``grid_intervals(y, n, estimand=estimand, kind=kind, level=level,
    draws=D * C, rng=seed)`` exactly (same grid shape: ``grid_shape = shape``).

    Examples
    --------
    >>> import numpy as np
    >>> import perfci as pc
    >>> rng = np.random.default_rng(1)
    >>> trials = rng.integers(2, 5, size=(3, 20))
    >>> successes = rng.binomial(trials, 0.9)
    >>> ci = pc.bayes.grid_intervals(successes, trials, rng=7)
    >>> ci.estimand, ci.low.shape
    ('population', (3,))
    >>> one = pc.bayes.grid_intervals(
    ...     successes[1], trials[1], rng=np.random.default_rng(7).spawn(3)[1]
    ... )
    >>> bool(ci.low[1] == one.low and ci.high[1] == one.high)
    True

    The sampled persons' rate is narrower: it leaves out which persons were sampled.

    >>> these = pc.bayes.grid_intervals(successes, trials, estimand="sampled_persons", rng=7)
    >>> bool(np.all(these.high - these.low < ci.high - ci.low))
    True
    """
    name = check_estimand("estimand", estimand, GRID_ESTIMANDS)
    [result] = _grid_intervals(
        successes,
        trials,
        (name,),
        level,
        kind,
        prior,
        shape,
        draws,
        rng,
        batch,
        population_sizes,
        population_persons,
    )
    return result


def shared_grid_intervals(
    successes: ArrayLike,
    trials: ArrayLike,
    estimands: Sequence[str],
    *,
    level: float = 0.95,
    kind: Literal["eti", "hdi"] = "eti",
    prior: str = "pareto",
    population_sizes: ArrayLike | None = None,
    population_persons: Any = None,
    shape: tuple[int, int] = GRID_SHAPE,
    draws: int = GRID_DRAWS,
    rng: Any = None,
    batch: int | None = None,
) -> dict[str, CredibleInterval]:
    r"""Grid credible intervals of several estimands from one posterior per data set.

    :func:`grid_intervals` of each estimand in `estimands`, with the posterior grid and
    the draws of every data set computed once for all of them. Each interval equals
    ``grid_intervals(successes, trials, estimand=e, ...)`` with the same arguments,
    exactly: ``"mu"`` draws nothing, and the drawn estimands draw from `rng` as their own
    calls do.

    Parameters
    ----------
    successes, trials : array_like of int, shape (\*batch, persons)
        As for :func:`grid_intervals`.
    estimands : sequence of {"population", "mu", "sampled_persons"}
        Distinct estimands.
    level, kind, prior, population_sizes, population_persons, shape, draws, rng, batch
        As for :func:`grid_intervals`.

    Returns
    -------
    dict of str to CredibleInterval
        One interval per estimand, in the order of `estimands`.

    Examples
    --------
    >>> import numpy as np
    >>> import perfci as pc
    >>> rng = np.random.default_rng(1)
    >>> trials = rng.integers(2, 5, size=(3, 20))
    >>> successes = rng.binomial(trials, 0.9)
    >>> both = pc.bayes.shared_grid_intervals(successes, trials, ["mu", "population"], rng=7)
    >>> own = pc.bayes.grid_intervals(successes, trials, estimand="population", rng=7)
    >>> bool(np.all(both["population"].low == own.low))
    True
    """
    if isinstance(estimands, str) or not isinstance(estimands, Sequence):
        raise ValueError(
            f"`estimands` must be a sequence of names from {sorted(GRID_ESTIMANDS)}; "
            f"got {estimands!r}."
        )
    names = tuple(check_estimand("estimands", e, GRID_ESTIMANDS) for e in estimands)
    if not names or len(set(names)) != len(names):
        raise ValueError(f"`estimands` must name distinct estimands; got {list(estimands)!r}.")
    cis = _grid_intervals(
        successes,
        trials,
        names,
        level,
        kind,
        prior,
        shape,
        draws,
        rng,
        batch,
        population_sizes,
        population_persons,
    )
    return dict(zip(names, cis, strict=True))


def _grid_intervals(
    successes: ArrayLike,
    trials: ArrayLike,
    estimands: tuple[str, ...],
    level: Any,
    kind: Any,
    prior: str,
    shape: Any,
    draws: Any,
    rng: Any,
    batch: Any,
    population_sizes: ArrayLike | None = None,
    population_persons: Any = None,
) -> list[CredibleInterval]:
    """Validate once, then compute every estimand's interval from each block's posterior."""
    check_choice("kind", kind, INTERVAL_KINDS)
    lvl = float(check_confidence_level(level, "level", scalar=True))
    s_prior(prior)
    cells = _check_shape("shape", shape)
    count = check_positive_int("draws", draws)
    generator = check_rng(rng)
    y, n = _check_counts(successes, trials, batch=True)
    weights, total_persons = _check_population(population_sizes, population_persons, n)
    lead = y.shape[:-1]
    y, n = y.reshape(-1, y.shape[-1]), n.reshape(-1, n.shape[-1])
    if weights is not None:
        weights = weights.reshape(n.shape)
    if total_persons is not None:
        total_persons = total_persons.reshape(-1)
    total = y.shape[0]
    step = (
        max(1, _GRID_BLOCK // (cells[0] * cells[1]))
        if batch is None
        else check_positive_int("batch", batch)
    )
    # a block's grids (a few tables of its cells) and, for the drawn estimands, its draws
    block_sets = min(step, total)
    check_memory("shape", 48.0 * cells[0] * cells[1] * max(1, block_sets), "use fewer grid cells")
    drawing = any(e in _DRAWN for e in estimands)
    if drawing:
        check_memory("draws", 40.0 * count * block_sets, f"ask for fewer draws than {count}")
    rngs = dataset_generators(generator, total, bool(lead)) if drawing else []
    ends = {e: (np.empty(total), np.empty(total), np.empty(total)) for e in estimands}
    # bounds memory: at most step data sets' grids at once
    for members, posterior in grid_posterior_blocks(y, n, prior, cells, step):
        drawn = None
        if drawing:  # once for every drawn estimand: they share the person rates
            drawn = draw_grid_posterior(
                posterior,
                y[members],
                n[members],
                count,
                [rngs[k] for k in members],
                weights=None if weights is None else weights[members],
                population_persons=None if total_persons is None else total_persons[members],
            )
        for estimand in estimands:
            if drawn is None or estimand == "mu":
                values = grid_interval(posterior.mu_edge, posterior.mu_mass, kind, lvl)
            else:
                values = interval_from_draws(getattr(drawn, estimand), kind, lvl)
            for end, value in zip(ends[estimand], values, strict=True):
                end[members] = value
    results: list[CredibleInterval] = []
    for estimand in estimands:
        low, mid, high = ends[estimand]
        if not lead:
            results.append(
                CredibleInterval(estimand, kind, lvl, float(mid[0]), float(low[0]), float(high[0]))
            )
        else:
            results.append(
                CredibleInterval(
                    estimand, kind, lvl, mid.reshape(lead), low.reshape(lead), high.reshape(lead)
                )
            )
    return results


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


def fit(
    successes: ArrayLike,
    trials: ArrayLike,
    *,
    sampler: str = "auto",
    prior: str = "pareto",
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
    >>> result = pc.bayes.fit(y, n, sampler="grid", rng=1)
    >>> ci = result.interval("mu", kind="eti", level=0.9)
    >>> print(f"mu {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    mu 0.850 [0.676, 0.933]
    >>> ci = result.interval("population", kind="eti", level=0.9)
    >>> print(f"population {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")  # drawn: 2 decimals
    population 0.91 [0.81, 0.96]
    """
    check_choice("sampler", sampler, SAMPLERS)
    # one proportion: the grid posterior is exact for every estimand
    sampler = resolve_sampler(sampler, grid_is_exact=True)
    s_prior(prior)
    for name, value in (("draws", draws), ("tune", tune), ("chains", chains)):
        check_positive_int(name, value)
    cells = _check_shape("grid_shape", grid_shape)
    generator = check_rng(rng)
    y, n = _check_counts(successes, trials)
    weights, total = _check_population(population_sizes, population_persons, n)
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
        return BayesFit(tree, sampler, prior, y, n, diag, bool(flags), flags, tail)

    seed = int(generator.integers(2**31 - 1))
    if sampler == "nutpie":
        model = _compiled_marginal(prior).with_data(**_data_for(y, n))
    else:
        from ..models.beta_binomial import beta_binomial_marginal

        model = beta_binomial_marginal(y, n, prior=prior)
    trace = _run_mcmc(sampler, model, draws, tune, chains, seed)
    mu = trace["posterior"]["mu"].to_numpy()
    s = trace["posterior"]["s"].to_numpy()
    p, sampled, spread = draw_person_rates(mu, s, y, n, generator, weights=u)
    population = draw_population(sampled, spread, y.size, population_total, generator)
    stats_ds = trace["sample_stats"].to_dataset()
    extra = {"sample_stats": stats_ds[["diverging"]]}
    tree = _posterior_tree(mu, s, population, sampled, cast(NDArray[np.float64], p), ids, extra)
    diag, reasons = _diagnostics(tree, ["mu", "s"])
    tail, flags = check_tails(prior, y, n, tree["posterior"]["kappa"].to_numpy())
    reasons += flags
    return BayesFit(tree, sampler, prior, y, n, diag, bool(reasons), reasons, tail)


def fit_labels(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    groups: ArrayLike,
    metric: str,
    *,
    positive: Any = None,
    **options: Any,
) -> BayesFit:
    """Fit the hierarchical beta-binomial model to a proportion metric from labels.

    Parameters
    ----------
    y_true, y_pred : array_like
        Reference and classifier labels, one per text.
    groups : array_like
        Person ids, one per text.
    metric : str
        A proportion metric: accuracy, recall, precision, specificity or npv; the model
        is fitted to each person's relevant texts for it.
    positive : object, optional
        The positive label (as in :func:`perfci.confusion`).
    **options
        Passed to :func:`fit` (sampler, by default ``"auto"``, the exact grid; prior,
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
    >>> result = pc.bayes.fit_labels(texts["human"], texts["model"], texts["person"],
    ...                              "recall", sampler="grid", rng=1)
    >>> ci = result.interval("population", level=0.95)
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
    return fit(y, n, persons=ids, **options)


def fit_confusion(
    counts: ArrayLike,
    *,
    sampler: str = "auto",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    rng: Any = None,
    estimand: str = "population",
    prior: str = "pareto",
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
    >>> result = pc.bayes.fit_confusion(per_person, rng=1)
    >>> ci = result.interval("f1", level=0.9)
    >>> bool(0 < ci.low < ci.estimate < ci.high < 1)
    True
    >>> grid = pc.bayes.fit_confusion(per_person, sampler="grid", rng=1)
    >>> ci = grid.interval("kappa", level=0.9)
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
    cells = check_real_array("counts", counts)
    if cells.ndim != 2 or cells.shape[1] != 4 or np.any(cells < 0):
        raise ValueError(
            f"`counts` must be per-person [tp, fp, fn, tn], shape (m, 4); got {cells.shape}."
        )
    cells = cells[cells.sum(1) > 0].astype(np.int64)
    if cells.shape[0] < 2:
        raise ValueError("`counts` must hold at least 2 persons with texts.")
    if sampler == "grid":
        return _grid_confusion_fit(cells, estimand, prior, draws, chains, rng)
    seed = int(check_rng(rng).integers(2**31 - 1))
    if sampler == "nutpie":
        # compiled once per machine (the compile cache), refit to these persons
        model = _compiled_confusion().with_data(counts=cells.astype(float))
    else:
        from ..models.confusion import hierarchical_confusion

        model = hierarchical_confusion(cells)
    trace = _run_mcmc(sampler, model, draws, tune, chains, seed)
    diag, reasons = _diagnostics(trace, ["kappa", "recall", "precision", "f1"])
    return ConfusionFit(trace, diag, bool(reasons), reasons)


def _grid_confusion_fit(
    cells: NDArray[np.int64], estimand: str, prior: str, draws: int, chains: int, rng: Any
) -> ConfusionFit:
    """fit_confusion's grid sampler: the hierarchical margins model's draws as a fit."""
    import warnings

    import xarray as xr

    from .._core.margins import BINARY
    from ..metrics import BINARY_METRICS
    from .confusion import (
        MARGIN_GRID_SHAPE,
        _bounds,
        _metric_function,
        _nested_draws,
    )
    from .samplers import BayesianDiagnosticsWarning

    count = draws * chains
    check_memory(
        "draws",
        8.0 * count * cells.shape[0] * 16,
        f"ask for fewer draws or chains than {draws} x {chains}",
    )
    functions = {m: (_metric_function(m, 2), _bounds(m)) for m in BINARY_METRICS}
    drawn = _nested_draws(
        BINARY, cells[None], functions, prior, MARGIN_GRID_SHAPE, count, [check_rng(rng)], True
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
