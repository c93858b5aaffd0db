r"""Confusion matrices as trees of binary margins, and their posterior draws (NumPy only).

A text falls in one cell of a confusion matrix (or of the joint table of two
classifiers) by a path of binary choices: is it a reference positive? if so, does the
classifier find it? Each choice is a *margin* with its own rate, and a cell's probability
is the product of the rates along its path. For the binary cells ``[tp, fp, fn, tn]``
(:data:`BINARY`) the margins are the prevalence (reference positives among texts), the
recall (true positives among reference positives) and the specificity (true negatives
among reference negatives):

.. math::

    \pi_{tp} = \phi r, \quad \pi_{fn} = \phi (1 - r), \quad
    \pi_{fp} = (1 - \phi)(1 - s), \quad \pi_{tn} = (1 - \phi) s .

The multinomial likelihood of the cells is the product of one binomial likelihood per
margin (successes: the texts on the margin's left side; trials: the texts on either
side), so margins with independent priors have independent posteriors. That is what
this module uses, in two ways:

- independent texts: margin k has a Beta(a_k, b_k) prior, hence a Beta(a_k + y_k, b_k +
  n_k - y_k) posterior. A symmetric Dirichlet(lambda) prior on the cells is the tree
  with a_k, b_k = lambda times the cells on each side (the Dirichlet's aggregation and
  neutrality properties), so its posterior, Dirichlet(counts + lambda), is drawn the
  same way (:func:`beta_margin_draws`);
- texts nested in persons: each margin is its own hierarchical beta-binomial (own mean,
  own concentration) over the persons with a text on it, with the exact grid posterior
  of :mod:`perfci._core.grid` (:func:`margin_posteriors`), and person rates from their
  exact conditionals (:func:`draw_margin_rates`). A person without a text on a margin
  (no reference positives, for the recall) gets a rate from the margin's population
  distribution Beta(mu kappa, (1 - mu) kappa) of the same draw.

Trees: :data:`BINARY` (binary cells), :data:`PAIRED` (the eight joint cells of two
classifiers, ``4 t + 2 a + b``, split symmetrically in A and B: reference, then whether
the two agree, then which way) and :func:`multiclass_tree` (k x k matrices by
stick-breaking: classes first, then each reference class's row, its correct class first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from . import registry
from .grid import GridPosterior, draw_grid_posterior, grid_posterior
from .population import population_metric_draws
from .validation import check_memory, check_real_array

__all__ = [
    "BINARY",
    "PAIRED",
    "MarginPosteriors",
    "MarginTree",
    "MetricFunctions",
    "NestedDraws",
    "beta_margin_draws",
    "check_draw_memory",
    "check_nested_cells",
    "draw_margin_rates",
    "margin_posteriors",
    "multiclass_tree",
    "nested_draws",
]

#: Metrics of cell probabilities by name: each a function vectorized over leading axes
#: and the metric's range (lower, upper), for the population step.
MetricFunctions = dict[str, tuple[Callable[[NDArray[np.float64]], Any], tuple[float, float]]]


@dataclass(frozen=True)
class MarginTree:
    """Binary margins whose rates multiply to cell probabilities.

    Attributes
    ----------
    names : tuple of str
        One name per margin.
    left, right : numpy.ndarray of bool, shape (margins, cells)
        The cells on each margin's success (left) and failure (right) side; a cell on
        neither side is not below the margin.
    """

    names: tuple[str, ...]
    left: NDArray[np.bool_]
    right: NDArray[np.bool_]

    @property
    def cells(self) -> int:
        """Number of cells."""
        return int(self.left.shape[1])

    def counts(self, cells: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Successes and trials of every margin, shape ``(..., margins)``.

        Examples
        --------
        >>> import numpy as np
        >>> from perfci._core.margins import BINARY
        >>> y, n = BINARY.counts(np.array([8.0, 1.0, 2.0, 89.0]))
        >>> y.tolist(), n.tolist()  # prevalence, recall, specificity
        ([10.0, 8.0, 89.0], [100.0, 10.0, 90.0])
        """
        successes = cells @ self.left.T.astype(float)
        trials = cells @ (self.left | self.right).T.astype(float)
        return successes, trials

    def probabilities(self, rates: NDArray[np.float64]) -> NDArray[np.float64]:
        """Cell probabilities ``(..., cells)`` from margin rates ``(..., margins)``.

        Examples
        --------
        >>> import numpy as np
        >>> from perfci._core.margins import BINARY
        >>> BINARY.probabilities(np.array([0.1, 0.8, 0.9])).round(3).tolist()
        [0.08, 0.09, 0.02, 0.81]
        """
        out = np.empty((*rates.shape[:-1], self.cells))
        complement = 1.0 - rates
        for c in range(self.cells):  # the cells of one tree, not data
            factors = [rates[..., k] for k in np.flatnonzero(self.left[:, c])]
            factors += [complement[..., k] for k in np.flatnonzero(self.right[:, c])]
            cell = out[..., c]
            cell[...] = factors[0]
            for factor in factors[1:]:
                cell *= factor
        return out

    def sides(self) -> NDArray[np.float64]:
        """Cells on each margin's left and right side, shape ``(margins, 2)``."""
        return np.stack([self.left.sum(1), self.right.sum(1)], axis=1).astype(float)


def _tree(cells: int, margins: Sequence[tuple[str, Sequence[int], Sequence[int]]]) -> MarginTree:
    left = np.zeros((len(margins), cells), dtype=bool)
    right = np.zeros((len(margins), cells), dtype=bool)
    for k, (_, on_left, on_right) in enumerate(margins):
        left[k, list(on_left)] = True
        right[k, list(on_right)] = True
    return MarginTree(tuple(name for name, _, _ in margins), left, right)


#: Binary cells ``[tp, fp, fn, tn]``: prevalence, recall, specificity.
BINARY = _tree(
    4,
    [
        ("prevalence", (0, 2), (1, 3)),
        ("recall", (0,), (2,)),
        ("specificity", (3,), (1,)),
    ],
)


def _paired_margins() -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
    margins: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = [
        ("reference_positive", (4, 5, 6, 7), (0, 1, 2, 3))
    ]
    for t, where in ((1, "positives"), (0, "negatives")):
        base = 4 * t
        margins += [
            (f"agree_on_{where}", (base, base + 3), (base + 1, base + 2)),
            (f"both_positive_on_{where}", (base + 3,), (base,)),
            (f"only_a_positive_on_{where}", (base + 2,), (base + 1,)),
        ]
    return margins


#: Joint cells ``4 t + 2 a + b`` of two classifiers: the reference, then per reference
#: class whether A and B agree, whether an agreement is positive, and whether a
#: disagreement is A's positive. Swapping A and B reflects the last margins only, so
#: priors symmetric in each margin give posteriors symmetric in A and B.
PAIRED = _tree(8, _paired_margins())


def multiclass_tree(classes: int) -> MarginTree:
    """Return the stick-breaking tree of k x k matrices (cells ``reference * k + predicted``).

    Margin ``class_c`` splits reference class c from the classes after it; margin
    ``row_r_c`` splits, within reference class r, predicted class c from those after it
    in the row's order: r itself first (``row_r_r`` is class r's recall, one margin, as
    in :data:`BINARY`), then the others in increasing order. Any order factors the
    multinomial alike; for texts nested in persons it decides which rates are shrunk
    towards their margin's mean, and with the correct class first a diagonal cell is
    shrunk once rather than through a product of two margins.

    Examples
    --------
    >>> from perfci._core.margins import multiclass_tree
    >>> multiclass_tree(3).names
    ('class_0', 'class_1', 'row_0_0', 'row_0_1', 'row_1_1', 'row_1_0', 'row_2_2', 'row_2_0')
    """
    k = classes
    margins = [
        (f"class_{c}", tuple(range(c * k, (c + 1) * k)), tuple(range((c + 1) * k, k * k)))
        for c in range(k - 1)
    ]
    for r in range(k):
        # the correct class first: the diagonal is one margin, as recall is in BINARY
        order = [r, *(c for c in range(k) if c != r)]
        margins += [
            (f"row_{r}_{c}", (r * k + c,), tuple(r * k + d for d in order[j + 1 :]))
            for j, c in enumerate(order[:-1])
        ]
    return _tree(k * k, margins)


def beta_margin_draws(
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    draws: int,
    rngs: Sequence[np.random.Generator],
) -> NDArray[np.float64]:
    """Independent Beta draws of every margin of K data sets.

    Parameters
    ----------
    a, b : numpy.ndarray, shape (K, margins)
        Posterior Beta parameters.
    draws : int
        Draws per data set.
    rngs : sequence of numpy.random.Generator
        One per data set: data set k's draws are ``rngs[k].beta(a[k], b[k], (draws,
        margins))``, whatever else is in the batch.

    Returns
    -------
    numpy.ndarray, shape (K, draws, margins)
    """
    out = np.empty((a.shape[0], draws, a.shape[1]))
    for k, rng in enumerate(rngs):  # one generator per data set; vectorized over draws
        out[k] = rng.beta(a[k], b[k], size=(draws, a.shape[1]))
    return out


@dataclass(frozen=True)
class MarginPosteriors:
    """The grid posteriors of every margin of K data sets, ready to be drawn from.

    Attributes
    ----------
    successes, trials : numpy.ndarray of int, shape (K, persons, margins)
        Every person's successes and trials on every margin.
    present : numpy.ndarray of bool, shape (K, persons)
        Persons with at least one text (the others are padding).
    grids : list of (GridPosterior, numpy.ndarray)
        Per margin: the grid posteriors of the data sets with at least two persons with
        a text on it, and each data set's row among them (-1 for the others).
    fallback : numpy.ndarray of bool, shape (K, margins)
        Margins with fewer than two persons with a text on them: one pooled rate for all
        persons, Beta(1 + successes, 1 + failures), instead of the hierarchical model.
    """

    successes: NDArray[np.int64]
    trials: NDArray[np.int64]
    present: NDArray[np.bool_]
    grids: list[tuple[GridPosterior, NDArray[np.int64]]]
    fallback: NDArray[np.bool_]


def margin_posteriors(
    tree: MarginTree, cells: NDArray[np.int64], prior: str, shape: tuple[int, int]
) -> MarginPosteriors:
    """Compute the exact grid posterior of every margin's hierarchical beta-binomial.

    Parameters
    ----------
    tree : MarginTree
        The margins.
    cells : numpy.ndarray of int, shape (K, persons, cells)
        Per-person counts; persons with no text are padding.
    prior : str
        Concentration prior of every margin (:data:`perfci._core.grid.PRIORS`).
    shape : tuple of int
        Fine grid of each margin's posterior of (mu, s).

    Returns
    -------
    MarginPosteriors
        Each data set's grids are bit for bit those it gets alone
        (:func:`perfci._core.grid.grid_posterior`).
    """
    successes, trials = (x.astype(np.int64) for x in tree.counts(cells.astype(float)))
    present = cells.sum(-1) > 0
    grids = []
    fallback = np.zeros((cells.shape[0], len(tree.names)), dtype=bool)
    for k in range(len(tree.names)):  # the margins of one tree, not data
        y, n = successes[..., k], trials[..., k]
        hierarchical = np.count_nonzero(n, axis=-1) >= 2
        rows = np.flatnonzero(hierarchical)
        position = np.full(cells.shape[0], -1, dtype=np.int64)
        position[rows] = np.arange(rows.size)
        grids.append((grid_posterior(y[rows], n[rows], prior, shape), position))
        fallback[:, k] = ~hierarchical
    return MarginPosteriors(successes, trials, present, grids, fallback)


def draw_margin_rates(
    posteriors: MarginPosteriors, r: int, draws: int, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Draw data set r's margins: person rates, and each margin's mean and concentration.

    Parameters
    ----------
    posteriors : MarginPosteriors
        From :func:`margin_posteriors`.
    r : int
        The data set.
    draws : int
        Independent draws.
    rng : numpy.random.Generator
        The data set's generator, consumed margin by margin in tree order: as
        :func:`perfci._core.grid.draw_grid_posterior` consumes it, then one Beta variate
        per draw and person without a text on the margin (a rate from the margin's
        population distribution Beta(mu kappa, (1 - mu) kappa) of the same draw); a
        margin that falls back draws its pooled rate, `draws` Beta variates.

    Returns
    -------
    rates : numpy.ndarray, shape (draws, m, margins)
        The rates of the data set's m persons with texts (padding left out).
    mu, kappa : numpy.ndarray, shape (draws, margins)
        Each margin's mean and concentration (kappa infinite for a pooled rate).
    """
    keep = posteriors.present[r]
    y, n = posteriors.successes[r, keep], posteriors.trials[r, keep]
    persons, margins = y.shape
    rates = np.empty((draws, persons, margins))
    mu = np.empty((draws, margins))
    kappa = np.empty((draws, margins))
    for k, (grid, position) in enumerate(posteriors.grids):  # margins, not data
        if position[r] < 0:
            pooled = rng.beta(1.0 + y[:, k].sum(), 1.0 + (n[:, k] - y[:, k]).sum(), size=draws)
            rates[:, :, k] = pooled[:, None]
            mu[:, k], kappa[:, k] = pooled, np.inf
            continue
        own = grid.rows(slice(position[r], position[r] + 1))
        drawn = draw_grid_posterior(own, y[None, :, k], n[None, :, k], draws, [rng], rates=True)
        rates[:, :, k] = cast(NDArray[np.float64], drawn.rates)[0]
        mu[:, k], kappa[:, k] = drawn.mu[0], drawn.kappa[0]
        empty = n[:, k] == 0
        if empty.any():
            m, c = mu[:, k, None], kappa[:, k, None]
            rates[:, empty, k] = rng.beta(m * c, (1 - m) * c, size=(draws, int(empty.sum())))
    return rates, mu, kappa


# ------------------------------------------------------------------ nested texts


def check_nested_cells(cells: Any, metrics: Sequence[str], name: str = "cells") -> NDArray[Any]:
    """Per-person cells ``(*batch, persons, 4)``, or ``(..., persons, k, k)`` for averages."""
    arr = check_real_array(name, cells)
    binary = registry.BINARY_METRIC.names
    averaged = [m for m in metrics if m not in binary]
    if averaged and len(averaged) != len(metrics):
        raise ValueError(
            "`metrics` must be all binary metrics or all macro_/micro_ averages (one "
            f"shape of counts); got {list(metrics)!r}."
        )
    if averaged:
        if arr.ndim < 3 or arr.shape[-1] != arr.shape[-2] or arr.shape[-1] < 2:
            raise ValueError(
                f"`{name}` must be per-person k x k matrices, shape (*batch, persons, k, k), "
                f"for {averaged[0]}; got shape {arr.shape}."
            )
    elif arr.ndim < 2 or arr.shape[-1] != 4:
        raise ValueError(
            f"`{name}` must be per-person [tp, fp, fn, tn], shape (*batch, persons, 4); got "
            f"shape {arr.shape}."
        )
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise ValueError(f"`{name}` must hold whole non-negative numbers of texts.")
    return arr.astype(np.int64)


def check_draw_memory(count: int, persons: int, tree: MarginTree) -> None:
    """Refuse draws whose one data set's arrays (rates, cells, deviations) would not fit."""
    check_memory(
        "draws",
        8.0 * count * max(persons, 1) * (len(tree.names) + 3 * tree.cells + 2),
        f"ask for fewer draws than {count}",
    )


@dataclass(frozen=True)
class NestedDraws:
    """Draws of several metrics of K data sets: sampled persons' and population's.

    Attributes
    ----------
    sampled, population : dict of str to numpy.ndarray, shape (K, draws)
        Each metric's draws of the sampled persons' and of the population's value (NaN
        where undefined: no texts, or one person for the population).
    persons : numpy.ndarray of int, shape (K,)
        Persons with at least one text.
    fallback : numpy.ndarray of bool, shape (K, margins)
        Margins that fell back to one pooled rate.
    mu, kappa : numpy.ndarray, shape (K, draws, margins), or None
        Each margin's mean and concentration, when asked for.
    """

    sampled: dict[str, NDArray[np.float64]]
    population: dict[str, NDArray[np.float64]]
    persons: NDArray[np.int64]
    fallback: NDArray[np.bool_]
    mu: NDArray[np.float64] | None = None
    kappa: NDArray[np.float64] | None = None


def nested_draws(
    tree: MarginTree,
    cells: NDArray[np.int64],
    functions: MetricFunctions,
    prior: str,
    shape: tuple[int, int],
    count: int,
    rngs: Sequence[np.random.Generator],
    *,
    step: int | None = None,
    keep_margins: bool = False,
    sizes: NDArray[np.float64] | None = None,
    population_persons: NDArray[np.float64] | None = None,
) -> NestedDraws:
    """Turn the hierarchical margins' draws of K data sets into every metric's estimands.

    Parameters
    ----------
    tree : MarginTree
        The margins.
    cells : numpy.ndarray of int, shape (K, persons, cells)
        Per-person counts (persons with no text are padding).
    functions : MetricFunctions
        The metrics to draw, each with its range.
    prior : str
        Concentration prior of every margin.
    shape : tuple of int
        Fine grid of each margin's posterior.
    count : int
        Draws per data set.
    rngs : sequence of numpy.random.Generator
        One per data set.
    step : int, optional
        Data sets whose grids are computed at once (memory; the draws do not depend on
        it); all at once by default.
    keep_margins : bool, default False
        Keep each margin's draws of mu and kappa.
    sizes : numpy.ndarray, shape (K, persons), optional
        The persons' population sizes (default their texts).
    population_persons : numpy.ndarray, shape (K,), optional
        The persons of each data set's population (default infinite).

    Returns
    -------
    NestedDraws

    Notes
    -----
    Data set r's generator is consumed by :func:`draw_margin_rates`, then by
    ``standard_t(m - 1, draws)`` (m its persons, when m >= 2): the t variates of the
    population step come after everything else.
    """
    total = cells.shape[0]
    step = max(1, total if step is None else step)
    sampled = {name: np.full((total, count), np.nan) for name in functions}
    population = {name: np.full((total, count), np.nan) for name in functions}
    persons = np.zeros(total, dtype=np.int64)
    fallback = np.zeros((total, len(tree.names)), dtype=bool)
    margins = (total, count, len(tree.names))
    mu = np.full(margins, np.nan) if keep_margins else None
    kappa = np.full(margins, np.nan) if keep_margins else None
    for start in range(0, total, step):  # blocks of data sets bound the grids' memory
        part = slice(start, start + step)
        posteriors = margin_posteriors(tree, cells[part], prior, shape)
        persons[part] = posteriors.present.sum(-1)
        fallback[part] = posteriors.fallback
        for r in range(posteriors.present.shape[0]):  # one generator per data set
            k = start + r
            m = int(persons[k])
            if m == 0:
                continue
            rates, margin_mu, margin_kappa = draw_margin_rates(posteriors, r, count, rngs[k])
            if mu is not None and kappa is not None:
                mu[k], kappa[k] = margin_mu, margin_kappa
            probabilities = tree.probabilities(rates)  # (draws, m, cells)
            keep = posteriors.present[r]
            weights = (cells[k, keep].sum(-1) if sizes is None else sizes[k, keep]).astype(float)
            if m == 1:
                for name, (function, _) in functions.items():
                    sampled[name][k] = function(probabilities[:, 0])
                continue
            persons_total = None if population_persons is None else float(population_persons[k])
            t = rngs[k].standard_t(m - 1, size=count)
            for name, (function, bounds) in functions.items():
                sampled[name][k], population[name][k] = population_metric_draws(
                    probabilities,
                    weights,
                    function,
                    t,
                    population_persons=persons_total,
                    bounds=bounds,
                )
    return NestedDraws(sampled, population, persons, fallback, mu, kappa)
