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
from .results import INTERVAL_KINDS, BayesFit, ConfusionFit, CredibleInterval
from .samplers import _compiled_marginal, _data_for, _diagnostics, _run_mcmc

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
GRID_ESTIMANDS = ("mu", "text_weighted")

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


# ------------------------------------------------------------------------ the grid


def grid_intervals(
    successes: ArrayLike,
    trials: ArrayLike,
    *,
    estimand: Literal["mu", "text_weighted"] = "mu",
    level: float = 0.95,
    kind: Literal["eti", "hdi"] = "eti",
    prior: str = "pareto",
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
    estimand : {"mu", "text_weighted"}, default "mu"
        ``"mu"``, the mean person-level rate, from the exact gridded marginal (no random
        numbers); or ``"text_weighted"``, :math:`\sum_i n_i p_i / \sum_i n_i` of the
        sampled persons, from `draws` independent posterior draws.
    level : float, default 0.95
        Credible level.
    kind : {"eti", "hdi"}, default "eti"
        Interval kind.
    prior : {"pareto", "bda3"}, default "pareto"
        Concentration prior (see :mod:`perfci.models.beta_binomial`).
    shape : tuple of int, default (400, 100)
        Grid cells in mu and in s = kappa^(-1/2) of the fine pass.
    draws : int, default 4000
        Posterior draws per data set for ``"text_weighted"``.
    rng : numpy.random.Generator, int or None
        Seed of the draws for ``"text_weighted"`` (unused for ``"mu"``). A single data set
        (1-D input) uses ``np.random.default_rng(rng)`` itself; in a batch of K data sets
        (leading axes flattened in C order), data set k uses
        ``np.random.default_rng(rng).spawn(K)[k]``.
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
    Quantiles of mu interpolate its marginal CDF linearly within cells; for
    ``"text_weighted"``, (mu, s) is drawn from the cells (uniform within a cell) and the
    person rates from their exact Beta conditionals.

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
    >>> ci = pc.bayes.grid_intervals(successes, trials)
    >>> ci.low.shape
    (3,)
    >>> tw = pc.bayes.grid_intervals(successes, trials, estimand="text_weighted", rng=7)
    >>> one = pc.bayes.grid_intervals(
    ...     successes[1], trials[1], estimand="text_weighted",
    ...     rng=np.random.default_rng(7).spawn(3)[1],
    ... )
    >>> bool(tw.low[1] == one.low and tw.high[1] == one.high)
    True
    """
    check_choice("estimand", estimand, GRID_ESTIMANDS)
    [ci] = _grid_intervals(
        successes, trials, (estimand,), level, kind, prior, shape, draws, rng, batch
    )
    return ci


def shared_grid_intervals(
    successes: ArrayLike,
    trials: ArrayLike,
    estimands: Sequence[str],
    *,
    level: float = 0.95,
    kind: Literal["eti", "hdi"] = "eti",
    prior: str = "pareto",
    shape: tuple[int, int] = GRID_SHAPE,
    draws: int = GRID_DRAWS,
    rng: Any = None,
    batch: int | None = None,
) -> dict[str, CredibleInterval]:
    r"""Grid credible intervals of several estimands from one posterior per data set.

    :func:`grid_intervals` of each estimand in `estimands`, with the posterior grid of
    every data set computed once for all of them. Each interval equals
    ``grid_intervals(successes, trials, estimand=e, ...)`` with the same arguments,
    exactly: ``"mu"`` draws nothing, and ``"text_weighted"`` draws from `rng` as its own
    call does.

    Parameters
    ----------
    successes, trials : array_like of int, shape (\*batch, persons)
        As for :func:`grid_intervals`.
    estimands : sequence of {"mu", "text_weighted"}
        Distinct estimands.
    level, kind, prior, shape, draws, rng, batch
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
    >>> both = pc.bayes.shared_grid_intervals(successes, trials, ["mu", "text_weighted"], rng=7)
    >>> own = pc.bayes.grid_intervals(successes, trials, estimand="text_weighted", rng=7)
    >>> bool(np.all(both["text_weighted"].low == own.low))
    True
    """
    if isinstance(estimands, str) or not isinstance(estimands, Sequence):
        raise ValueError(
            f"`estimands` must be a sequence of names from {sorted(GRID_ESTIMANDS)}; "
            f"got {estimands!r}."
        )
    for name in estimands:
        check_choice("estimands", name, GRID_ESTIMANDS)
    if not estimands or len(set(estimands)) != len(estimands):
        raise ValueError(f"`estimands` must name distinct estimands; got {list(estimands)!r}.")
    cis = _grid_intervals(
        successes, trials, tuple(estimands), level, kind, prior, shape, draws, rng, batch
    )
    return dict(zip(estimands, cis, strict=True))


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
) -> list[CredibleInterval]:
    """Validate once, then compute every estimand's interval from each block's posterior."""
    check_choice("kind", kind, INTERVAL_KINDS)
    lvl = float(check_confidence_level(level, "level", scalar=True))
    s_prior(prior)
    cells = _check_shape("shape", shape)
    count = check_positive_int("draws", draws)
    generator = check_rng(rng)
    y, n = _check_counts(successes, trials, batch=True)
    lead = y.shape[:-1]
    y, n = y.reshape(-1, y.shape[-1]), n.reshape(-1, n.shape[-1])
    total = y.shape[0]
    step = (
        max(1, _GRID_BLOCK // (cells[0] * cells[1]))
        if batch is None
        else check_positive_int("batch", batch)
    )
    # a block's grids (a few tables of its cells) and, for text_weighted, its draws
    block_sets = min(step, total)
    check_memory("shape", 48.0 * cells[0] * cells[1] * max(1, block_sets), "use fewer grid cells")
    drawing = "text_weighted" in estimands
    if drawing:
        check_memory("draws", 32.0 * count * block_sets, f"ask for fewer draws than {count}")
    rngs = dataset_generators(generator, total, bool(lead)) if drawing else []
    ends = {e: (np.empty(total), np.empty(total), np.empty(total)) for e in estimands}
    # bounds memory: at most step data sets' grids at once
    for members, posterior in grid_posterior_blocks(y, n, prior, cells, step):
        for estimand in estimands:
            if estimand == "mu":
                values = grid_interval(posterior.mu_edge, posterior.mu_mass, kind, lvl)
            else:
                own = [rngs[k] for k in members]
                drawn = draw_grid_posterior(posterior, y[members], n[members], count, own)
                values = interval_from_draws(drawn.text_weighted, kind, lvl)
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
    text_weighted: NDArray[np.float64],
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
            "text_weighted": (dims, text_weighted),
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
        this model and computes every estimand (``mu``, ``text_weighted``, ``person``),
        in milliseconds. The result's ``sampler`` says which one ran.
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
        If the fit fails R-hat <= 1.01, bulk and tail ESS >= 400, or has divergences.

    Notes
    -----
    The grid sampler is :func:`grid_intervals` on one data set: the same grid, the same
    draws in the same order from ``np.random.default_rng(rng)``. Its ``mu`` and
    ``text_weighted`` intervals equal those of ``grid_intervals(successes, trials,
    estimand=..., draws=draws * chains, shape=grid_shape, rng=rng)`` exactly.

    Examples
    --------
    >>> import perfci as pc
    >>> y, n = [28, 25, 30, 22, 27, 29], [30, 30, 30, 26, 30, 30]
    >>> result = pc.bayes.fit(y, n, sampler="grid", rng=1)
    >>> ci = result.interval("mu", kind="eti", level=0.9)
    >>> print(f"mu {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    mu 0.850 [0.676, 0.933]
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
    if sampler == "grid":
        check_memory("grid_shape", 48.0 * cells[0] * cells[1], "use fewer grid cells")
        # mu, s, kappa, the text-weighted rate and every person's rate, per draw
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

    if sampler == "grid":
        import xarray as xr

        posterior = grid_posterior(y[None, :], n[None, :], prior, cells)
        drawn = draw_grid_posterior(
            posterior, y[None, :], n[None, :], draws * chains, [generator], rates=True
        )
        rates = cast(NDArray[np.float64], drawn.rates)  # asked for: never None
        grid = xr.Dataset(
            {
                "mu_mass": ("mu_cell", posterior.mu_mass[0]),
                "mu_edge": ("mu_edge_index", posterior.mu_edge[0]),
            }
        )
        tree = _posterior_tree(
            drawn.mu[0].reshape(chains, draws),
            drawn.s[0].reshape(chains, draws),
            drawn.text_weighted[0].reshape(chains, draws),
            rates[0].reshape(chains, draws, -1),
            ids,
            {"grid": grid},
        )
        k = float(draws * chains)
        diag = {"r_hat": np.nan, "ess_bulk": k, "ess_tail": k, "divergences": 0}
        return BayesFit(tree, sampler, prior, y, n, diag, False, ())

    seed = int(generator.integers(2**31 - 1))
    if sampler == "nutpie":
        model = _compiled_marginal(prior).with_data(**_data_for(y, n))
    else:
        from ..models.beta_binomial import beta_binomial_marginal

        model = beta_binomial_marginal(y, n, prior=prior)
    trace = _run_mcmc(sampler, model, draws, tune, chains, seed)
    mu = trace["posterior"]["mu"].to_numpy()
    s = trace["posterior"]["s"].to_numpy()
    p, text_weighted = draw_person_rates(mu, s, y, n, generator)
    stats_ds = trace["sample_stats"].to_dataset()
    extra = {"sample_stats": stats_ds[["diverging"]]}
    tree = _posterior_tree(mu, s, text_weighted, cast(NDArray[np.float64], p), ids, extra)
    diag, reasons = _diagnostics(tree, ["mu", "s"])
    return BayesFit(tree, sampler, prior, y, n, diag, bool(reasons), reasons)


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
        draws, tune, chains, rng).

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
    >>> ci = result.interval("text_weighted", level=0.95)
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    0.876 [0.836, 0.911]
    """
    check_choice("metric", metric, PROPORTION_METRICS)
    from ..counting import confusion

    per_person = confusion(y_true, y_pred, positive=positive, groups=groups)
    if per_person.counts.ndim != 2:
        raise ValueError("`positive` must name the class for multi-class labels.")
    y, n = proportion_counts(per_person.counts, metric)
    return fit(y, n, persons=per_person.groups, **options)


def fit_confusion(
    counts: ArrayLike,
    *,
    sampler: str = "auto",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    rng: Any = None,
) -> ConfusionFit:
    """Fit the hierarchical Dirichlet-multinomial model to per-person confusion matrices.

    Parameters
    ----------
    counts : array_like of int
        Per-person ``[tp, fp, fn, tn]``, shape ``(m, 4)``, m >= 2 (for independent
        texts use the closed form, :func:`confusion_posterior`).
    sampler : {"auto", "nutpie", "pymc"}, default "auto"
        MCMC sampler; ``"auto"`` is nutpie (no grid computes this model). The model is
        compiled for each call (its shape depends on m).
    draws, tune, chains : int
        MCMC settings.
    rng : numpy.random.Generator, int or None
        Seed.

    Returns
    -------
    ConfusionFit
        Posterior of the population recall, precision and F1, with diagnostics.

    Examples
    --------
    >>> import perfci as pc
    >>> per_person = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [4, 1, 1, 15]]
    >>> result = pc.bayes.fit_confusion(per_person, rng=1)
    >>> ci = result.interval("f1", level=0.9)
    >>> bool(0 < ci.low < ci.estimate < ci.high < 1)
    True
    """
    check_choice("sampler", sampler, ("auto", "nutpie", "pymc"))
    sampler = resolve_sampler(sampler, grid_is_exact=False)
    for name, value in (("draws", draws), ("tune", tune), ("chains", chains)):
        check_positive_int(name, value)
    cells = check_real_array("counts", counts)
    if cells.ndim != 2 or cells.shape[1] != 4 or np.any(cells < 0):
        raise ValueError(
            f"`counts` must be per-person [tp, fp, fn, tn], shape (m, 4); got {cells.shape}."
        )
    cells = cells[cells.sum(1) > 0].astype(np.int64)
    if cells.shape[0] < 2:
        raise ValueError("`counts` must hold at least 2 persons with texts.")
    seed = int(check_rng(rng).integers(2**31 - 1))
    from ..models.confusion import hierarchical_confusion

    model = hierarchical_confusion(cells)
    trace = _run_mcmc(sampler, model, draws, tune, chains, seed)
    diag, reasons = _diagnostics(trace, ["kappa", "recall", "precision", "f1"])
    return ConfusionFit(trace, diag, bool(reasons), reasons)
