r"""Exact grid credible intervals of the hierarchical beta-binomial, batched over data sets.

:func:`grid_intervals` (one estimand) and :func:`shared_grid_intervals` (several from one
posterior per data set) compute each data set's exact posterior of (mu, s) on its own
adaptive grid (:mod:`perfci._core.grid`) and the interval of ``"population"``, ``"mu"`` or
``"sampled_persons"``: the grid sampler of :func:`perfci.bayes.fit_proportion_counts`, for
one data set or thousands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from .._core.deprecation import DEFAULT_LEVEL, UNSET, hide_level, resolve_level
from .._core.grid import (
    check_counts,
    check_grid_shape,
    check_population,
    check_texts,
    draw_grid_posterior,
    grid_interval,
    grid_posterior_blocks,
    interval_from_draws,
    s_prior,
)
from .._core.validation import (
    check_choice,
    check_confidence_level,
    check_memory,
    check_positive_int,
    check_rng,
    dataset_generators,
)
from .intervals import INTERVAL_KINDS, CredibleInterval, check_estimand

__all__ = [
    "GRID_DRAWS",
    "GRID_ESTIMANDS",
    "GRID_SHAPE",
    "grid_intervals",
    "shared_grid_intervals",
]

GRID_ESTIMANDS = ("population", "mu", "sampled_persons")
#: The grid estimands that are drawn (``"mu"`` is read off the gridded marginal).
_DRAWN = ("population", "sampled_persons")

#: Default draws of the grid sampler: ``fit``'s ``draws * chains`` (1000 x 4).
GRID_DRAWS = 4000
#: Default grid of the fine pass, of ``fit_proportion_counts(sampler="grid")`` and of
#: ``grid_intervals``.
GRID_SHAPE = (400, 100)
#: Grid cells (data sets x cells of the fine pass) computed at once by ``grid_intervals``.
_GRID_BLOCK = 1 << 23


@hide_level
def grid_intervals(
    successes: ArrayLike,
    trials: ArrayLike,
    *,
    estimand: Literal["population", "mu", "sampled_persons"] = "population",
    confidence_level: float = DEFAULT_LEVEL,
    kind: Literal["eti", "hdi"] = "eti",
    prior: str = "pareto",
    population_sizes: ArrayLike | None = None,
    population_persons: Any = None,
    shape: tuple[int, int] = GRID_SHAPE,
    draws: int = GRID_DRAWS,
    rng: Any = None,
    batch: int | None = None,
    level: Any = UNSET,
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
    confidence_level : float, default 0.95
        Credible level (``level``, its former name, is deprecated).
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
        flattened in C order), data set k uses ``perfci.batch_generators(rng, K)[k]``.
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

    This is the grid sampler of :func:`~perfci.bayes.fit_proportion_counts`: with the
    defaults, ``fit_proportion_counts(y, n, sampler="grid", draws=D, chains=C,
    rng=seed).interval(estimand, kind, confidence_level)`` equals ``grid_intervals(y, n,
    estimand=estimand, kind=kind, confidence_level=confidence_level, draws=D * C,
    rng=seed)`` exactly (same grid shape: ``grid_shape = shape``).

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
    ...     successes[1], trials[1], rng=pc.batch_generators(7, 3)[1]
    ... )
    >>> bool(ci.low[1] == one.low and ci.high[1] == one.high)
    True

    The sampled persons' rate is narrower: it leaves out which persons were sampled.

    >>> these = pc.bayes.grid_intervals(successes, trials, estimand="sampled_persons", rng=7)
    >>> bool(np.all(these.high - these.low < ci.high - ci.low))
    True
    """
    confidence_level = resolve_level(confidence_level, level)
    name = check_estimand("estimand", estimand, GRID_ESTIMANDS)
    [result] = _grid_intervals(
        successes,
        trials,
        (name,),
        confidence_level,
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


@hide_level
def shared_grid_intervals(
    successes: ArrayLike,
    trials: ArrayLike,
    estimands: Sequence[str],
    *,
    confidence_level: float = DEFAULT_LEVEL,
    kind: Literal["eti", "hdi"] = "eti",
    prior: str = "pareto",
    population_sizes: ArrayLike | None = None,
    population_persons: Any = None,
    shape: tuple[int, int] = GRID_SHAPE,
    draws: int = GRID_DRAWS,
    rng: Any = None,
    batch: int | None = None,
    level: Any = UNSET,
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
    confidence_level, kind, prior, population_sizes, population_persons, shape, draws, rng, batch
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
    confidence_level = resolve_level(confidence_level, level)
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
        confidence_level,
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
    confidence_level: Any,
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
    lvl = float(check_confidence_level(confidence_level, "confidence_level", scalar=True))
    s_prior(prior)
    cells = check_grid_shape("shape", shape)
    count = check_positive_int("draws", draws)
    generator = check_rng(rng)
    y, n = check_counts(successes, trials, batch=True)
    weights, total_persons = check_population(population_sizes, population_persons, n)
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
    check_texts(n, cells, block_sets)
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
