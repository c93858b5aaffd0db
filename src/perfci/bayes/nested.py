r"""Credible intervals of every metric of texts nested in persons: the hierarchical margins.

Each binary margin of the cells (prevalence, recall, specificity; for k classes each
stick-breaking margin, :mod:`perfci._core.margins`) is its own hierarchical beta-binomial
with its own mean and concentration, computed on the exact grid; person cell
probabilities are drawn per posterior draw, then turned into the estimand:
``population`` (default; :func:`perfci._core.population.population_metric_draws`) or
``sampled_persons``. :func:`nested_metric_intervals` gives one metric's interval,
:func:`shared_nested_metric_intervals` several metrics' and estimands' from one
posterior; :func:`nested_options` validates their shared arguments once (the paired
difference of :mod:`~perfci.bayes.paired` takes them too).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core import registry
from .._core.deprecation import DEFAULT_LEVEL, UNSET, hide_level, resolve_level
from .._core.grid import check_grid_shape, check_population, check_texts, s_prior
from .._core.margins import (
    BINARY,
    MarginTree,
    MetricFunctions,
    NestedDraws,
    check_draw_memory,
    check_nested_cells,
    multiclass_tree,
    nested_draws,
)
from .._core.validation import (
    UndefinedMetricWarning,
    check_choice,
    check_confidence_level,
    check_memory,
    check_positive_int,
    check_real_array,
    check_rng,
    dataset_generators,
)
from ..metrics import BINARY_METRICS, undefined_reason
from .intervals import INTERVAL_KINDS, CredibleResult, defined_interval, plain
from .posterior import DRAWS, PriorOnlyWarning, metric_bounds, metric_function

__all__ = [
    "MARGIN_GRID_SHAPE",
    "MetricCredibleInterval",
    "NestedOptions",
    "nested_metric_intervals",
    "nested_options",
    "shared_nested_metric_intervals",
    "warn_degenerate",
    "warn_undefined_draws",
]

#: Grid cells of one block of a margin's grid posteriors (as bayes.grid_intervals).
_GRID_BLOCK = 1 << 23
#: Default fine grid of each margin's (mu, s): a quarter of the cells of
#: bayes.grid_intervals' (400, 100), with the same intervals within their Monte-Carlo error
#: (tests/test_bayes_confusion.py).
MARGIN_GRID_SHAPE = (200, 50)


@dataclass(frozen=True, repr=False)
class MetricCredibleInterval(CredibleResult):
    """A credible interval of a metric of texts nested in persons (hierarchical margins).

    Attributes
    ----------
    metric, estimand : str
        The metric, and what the interval is about (``"population"`` or
        ``"sampled_persons"``).
    kind : str
        ``"eti"`` or ``"hdi"``.
    confidence_level : float
        Credible level (formerly `level`, still readable with a FutureWarning).
    estimate, low, high : float or numpy.ndarray
        Posterior median and interval ends (one per data set of a batch).
    persons : int or numpy.ndarray
        Persons with at least one text.
    flagged : bool or numpy.ndarray
        A margin fell back to one pooled rate (fewer than two persons with a text on
        it): the interval is not the hierarchical model's.
    margins : tuple of str
        Names of the margins.
    fallback : numpy.ndarray of bool, shape (..., margins)
        Which margins fell back.

    Notes
    -----
    :meth:`to_frame` and :meth:`to_xarray` leave out `fallback` (one more axis).
    """

    _derived: ClassVar[tuple[str, ...]] = ("method", "sources")

    _exclude: ClassVar[tuple[str, ...]] = ("fallback",)

    metric: str
    estimand: str
    kind: str
    confidence_level: float
    estimate: Any
    low: Any
    high: Any
    persons: Any
    flagged: Any
    margins: tuple[str, ...]
    fallback: NDArray[np.bool_] = field(repr=False)

    @property
    def method(self) -> str:
        """Return the interval with what it is of, as results name their method."""
        return f"bayes hierarchical margins, {self.estimand} (grid, {self.kind})"


def _grid_step(batch: Any, shape: tuple[int, int], tree: MarginTree) -> int:
    """Return the data sets per block: `batch`, or as many as :data:`_GRID_BLOCK` allows."""
    if batch is not None:
        return check_positive_int("batch", batch)
    return max(1, _GRID_BLOCK // (shape[0] * shape[1] * len(tree.names)))


@dataclass(frozen=True)
class NestedOptions:
    """The validated arguments of the nested functions, data sets flattened.

    From :func:`nested_options`; :meth:`draw` draws every data set's metrics with them.
    """

    tree: MarginTree
    cells: NDArray[np.int64]
    lead: tuple[int, ...]
    level: float
    kind: str
    prior: str
    draws: int
    shape: tuple[int, int]
    rngs: Sequence[np.random.Generator]
    step: int
    sizes: NDArray[np.float64] | None
    population_persons: NDArray[np.float64] | None

    def draw(self, functions: MetricFunctions) -> NestedDraws:
        """Draw `functions` of every data set, :attr:`step` data sets' grids at a time."""
        return nested_draws(
            self.tree,
            self.cells,
            functions,
            self.prior,
            self.shape,
            self.draws,
            self.rngs,
            step=self.step,
            sizes=self.sizes,
            population_persons=self.population_persons,
        )


def nested_options(
    cells: NDArray[np.int64],
    tree: MarginTree,
    cell_dims: int,
    confidence_level: Any,
    kind: Any,
    prior: Any,
    draws: Any,
    grid_shape: Any,
    rng: Any,
    batch: Any,
    population_sizes: Any,
    population_persons: Any,
    name: str = "cells",
) -> NestedOptions:
    """Validate the shared arguments of the nested functions once.

    `cells` is a checked whole-number array with `cell_dims` axes of cells after the
    persons' axis; `name` is the argument it came from.
    """
    check_choice("kind", kind, INTERVAL_KINDS)
    lvl = float(check_confidence_level(confidence_level, "confidence_level", scalar=True))
    s_prior(prior)
    count = check_positive_int("draws", draws)
    shape = check_grid_shape("grid_shape", grid_shape)
    generator = check_rng(rng)
    lead = cells.shape[: -(cell_dims + 1)]
    persons = cells.shape[len(lead)]
    flat = cells.reshape(-1, persons, tree.cells)
    sizes = population_sizes
    if sizes is not None:
        sizes = check_real_array("population_sizes", sizes)
        if sizes.shape != (*lead, persons):
            raise ValueError(
                "`population_sizes` must give one size per person, shape (*batch, persons) "
                f"= {(*lead, persons)}; got {sizes.shape}."
            )
        sizes = sizes.reshape(-1, persons)
    total = population_persons
    if total is not None and np.ndim(total) and np.shape(total) == lead:
        total = np.reshape(total, -1)
    weights, total = check_population(sizes, total, flat.sum(-1))
    check_draw_memory(count, persons, tree)
    step = _grid_step(batch, shape, tree)
    # a block's grids: a few tables of its cells for every margin (as grid_intervals)
    block = min(step, max(flat.shape[0], 1))
    check_memory(
        "grid_shape",
        48.0 * shape[0] * shape[1] * len(tree.names) * block,
        "use fewer grid cells",
    )
    # a margin's trials are at most its persons' texts
    check_texts(flat.sum(-1), shape, block, name)
    rngs = dataset_generators(generator, flat.shape[0], bool(lead))
    return NestedOptions(
        tree, flat, lead, lvl, kind, prior, count, shape, rngs, step, weights, total
    )


def _nested_intervals(
    cells: Any,
    metrics: Sequence[str],
    estimands: Sequence[str],
    confidence_level: Any,
    kind: Any,
    prior: Any,
    draws: Any,
    grid_shape: Any,
    rng: Any,
    batch: Any,
    population_sizes: Any,
    population_persons: Any,
) -> dict[tuple[str, str], MetricCredibleInterval]:
    for name in metrics:
        registry.METRIC.check(name, "metric")
    for name in estimands:
        registry.CONFUSION_ESTIMAND.check(name, "estimand")
    arr = check_nested_cells(cells, metrics)
    averaged = metrics[0] not in BINARY_METRICS
    classes = arr.shape[-1]
    args = nested_options(
        arr,
        multiclass_tree(classes) if averaged else BINARY,
        2 if averaged else 1,
        confidence_level,
        kind,
        prior,
        draws,
        grid_shape,
        rng,
        batch,
        population_sizes,
        population_persons,
    )
    functions: MetricFunctions = {
        name: (metric_function(name, classes), metric_bounds(name.split("_", 1)[-1]))
        for name in metrics
    }
    drawn = args.draw(functions)
    ends = {}
    for name in metrics:
        for estimand in estimands:
            values = (drawn.population if estimand == "population" else drawn.sampled)[name]
            ends[name, estimand] = defined_interval(values, args.kind, args.level)
    warn_degenerate(drawn.persons, drawn.fallback, args.tree, estimands, ", ".join(metrics))
    for (name, estimand), (low, _, _) in ends.items():
        warn_undefined_draws(name, estimand, low, drawn.persons)
    flagged = drawn.fallback.any(-1)
    lead = args.lead
    out = {}
    for (name, estimand), (low, mid, high) in ends.items():
        out[name, estimand] = MetricCredibleInterval(
            name,
            estimand,
            args.kind,
            args.level,
            plain(mid.reshape(lead)),
            plain(low.reshape(lead)),
            plain(high.reshape(lead)),
            plain(drawn.persons.reshape(lead)),
            plain(flagged.reshape(lead)),
            args.tree.names,
            drawn.fallback.reshape(*lead, len(args.tree.names)),
        )
    return out


def warn_undefined_draws(
    metric: str, estimand: str, low: NDArray[np.float64], persons: NDArray[np.int64]
) -> None:
    """Warn where a metric is undefined in a data set's posterior draws (NaN returned).

    The posterior gives every cell a positive probability, but a margin whose every
    person has no success (or no failure) draws rates that round to exactly 0 or 1:
    with no text relevant to the metric (F1 where neither rater calls any text positive)
    the metric's ratio is then 0/0 in some draws.
    """
    undefined = np.isnan(low) & (persons >= (2 if estimand == "population" else 1))
    if undefined.any():
        why = undefined_reason(metric) if metric in BINARY_METRICS else "a class has no text"
        where = "" if low.size == 1 else f" for {int(undefined.sum())} of {low.size} data sets"
        warnings.warn(
            f"{metric} is undefined in posterior draws{where} (the data have no text relevant "
            f"to it: {why}); returning NaN.",
            UndefinedMetricWarning,
            stacklevel=4,
        )


def warn_degenerate(
    persons: NDArray[np.int64],
    fallback: NDArray[np.bool_],
    tree: MarginTree,
    estimands: Sequence[str],
    what: str,
) -> None:
    """Warn with the written policy of each degenerate case that applies."""
    size = persons.size

    def where(n: int) -> str:
        return "" if size == 1 else f" for {n} of {size} data sets"

    none = int(np.sum(persons == 0))
    if none:
        warnings.warn(
            f"{what} is undefined{where(none)}: there are no texts; returning NaN.",
            UndefinedMetricWarning,
            stacklevel=4,
        )
    one = int(np.sum(persons == 1))
    if one and "population" in estimands:
        warnings.warn(
            f"the population {what} is undefined{where(one)} with one person: one person "
            "says nothing about the persons not sampled; returning NaN (sampled_persons is "
            "defined).",
            UndefinedMetricWarning,
            stacklevel=4,
        )
    fell = fallback[persons > 0].any(-1)
    if fell.any():
        names = [n for n, f in zip(tree.names, fallback[persons > 0].any(0), strict=True) if f]
        count = int(fell.sum())
        warnings.warn(
            f"margins {names} have fewer than 2 persons with a text on them{where(count)}:"
            " each is one pooled rate for all persons, Beta(1 + successes, 1 + failures), "
            "instead of the hierarchical model; the intervals are flagged.",
            PriorOnlyWarning,
            stacklevel=4,
        )


@hide_level
def nested_metric_intervals(
    cells: ArrayLike,
    metric: str,
    *,
    estimand: str = "population",
    prior: str = "pareto",
    confidence_level: float = DEFAULT_LEVEL,
    kind: str = "eti",
    draws: int = DRAWS,
    grid_shape: tuple[int, int] = MARGIN_GRID_SHAPE,
    rng: Any = None,
    batch: int | None = None,
    population_sizes: ArrayLike | None = None,
    population_persons: float | ArrayLike | None = None,
    level: Any = UNSET,
) -> MetricCredibleInterval:
    r"""Credible intervals of a metric of texts nested in persons: hierarchical margins.

    Parameters
    ----------
    cells : array_like of int, shape (\*batch, persons, 4)
        Per-person ``[tp, fp, fn, tn]``; for a ``macro_*`` or ``micro_*`` metric
        per-person k x k matrices, shape ``(*batch, persons, k, k)``. Every leading axis
        indexes independent data sets; persons with no text are not persons (padding a
        ragged batch with them changes nothing, draw for draw).
    metric : str
        Any metric (:data:`perfci.METRICS`).
    estimand : {"population", "sampled_persons"}, default "population"
        ``"population"``: the metric of the text-weighted pooled cells of the
        population of persons, the quantity the frequentist nested intervals are about;
        ``"sampled_persons"``: of the size-weighted pooled cells of the sampled persons
        only (narrower; not about new persons).
    prior : {"pareto", "bda3"}, default "pareto"
        Prior of every margin's concentration (see :mod:`perfci.models.beta_binomial`);
        every margin's mean is uniform.
    confidence_level : float, default 0.95
        Credible level (``level``, its former name, is deprecated).
    kind : {"eti", "hdi"}, default "eti"
        Interval kind, from the draws.
    draws : int, default 4000
        Independent posterior draws per data set.
    grid_shape : tuple of int, default (200, 50)
        Fine grid of each margin's posterior of (mu, s) (:data:`MARGIN_GRID_SHAPE`).
    rng : numpy.random.Generator, int or None
        Seed. A single data set uses ``np.random.default_rng(rng)``; data set k of a
        batch (leading axes flattened in C order) ``perfci.batch_generators(rng, K)[k]``;
        the draws do not depend on `metric` or `estimand`.
    batch : int, optional
        Data sets whose grids are computed at once (memory; the results do not depend on
        it).
    population_sizes : array_like, optional
        Each person's texts in the population (labelled or not), shape ``(*batch,
        persons)``, or numbers proportional to them: the weights of the population
        estimand (default: their labelled texts), as in :func:`perfci.bayes.fit_proportion_counts`.
    population_persons : float or array_like, optional
        Persons in the population (one number, or one per data set; ``inf`` or None:
        infinitely many). With every person sampled the population estimand is the
        sampled persons'.

    Returns
    -------
    MetricCredibleInterval
        Posterior median and interval ends, with the persons, the flag and which
        margins fell back; fields of the shape of the leading axes.

    Warns
    -----
    PriorOnlyWarning
        Where a margin has fewer than two persons with a text on it (see Notes).
    UndefinedMetricWarning
        Where a data set has no texts (NaN), or one person and ``estimand="population"``
        (NaN).

    Notes
    -----
    The model. Person i's cells are split into binary margins
    (:mod:`perfci._core.margins`): for binary cells the prevalence (reference
    positives among their texts), the recall (true positives among their reference
    positives) and the specificity (true negatives among their reference negatives); for
    k x k matrices the stick-breaking margins of the classes and of each reference
    class's row. The multinomial likelihood of a person's cells is the product of one
    binomial per margin, so with independent priors the margins are independent a
    posteriori. Each margin j is its own hierarchical beta-binomial over the persons
    with a text on it,

    .. math::

        y_{ij} \sim \mathrm{Binomial}(n_{ij}, p_{ij}), \quad
        p_{ij} \sim \mathrm{Beta}(\mu_j \kappa_j, (1 - \mu_j)\kappa_j), \quad
        \mu_j \sim \mathrm{Beta}(1, 1), \quad \kappa_j^{-1/2} \sim \text{prior},

    with its own concentration: prevalence and performance need not share one ICC.
    Each margin's posterior of :math:`(\mu_j, s_j)` is the exact grid of
    :func:`perfci.bayes.grid_intervals`; person rates are drawn from their exact Beta
    conditionals, and a person without a text on a margin (no reference positives)
    from the margin's population distribution in the same draw. Person i's cell
    probabilities :math:`\pi_i` are the products of their rates along each cell's path.

    The estimands, per draw: ``sampled_persons`` is the metric of
    :math:`\sum_i n_i \pi_i / \sum_i n_i`; ``population`` adds the persons not sampled
    by :func:`perfci._core.population.population_metric_draws` (the size-weighted
    linearized deviations of the persons, Student's t on m - 1 degrees of freedom, on
    the logit scale of the metric's range, [-1, 1] for kappa and MCC), with t variates
    drawn from the data set's generator after everything else.

    Degenerate cases: a margin with fewer than two persons with a text on it has no
    hierarchical model of persons; it falls back to one pooled rate for all persons,
    Beta(1 + successes, 1 + failures) (the uniform prior of its mean, no variation
    between persons; with no text at all on it, its prior), and the interval is flagged
    (`flagged`, `fallback`) with a :class:`PriorOnlyWarning`. With one person,
    ``population`` is NaN (one person says nothing about other persons) and
    ``sampled_persons`` is that person's. A data set with no texts is NaN.

    Examples
    --------
    >>> import perfci as pc
    >>> per_person = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [4, 1, 1, 15]]
    >>> ci = pc.bayes.nested_metric_intervals(per_person, "f1", rng=1)
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] flagged {ci.flagged}")  # drawn
    0.81 [0.5, 0.95] flagged False
    """
    confidence_level = resolve_level(confidence_level, level)
    registry.CONFUSION_ESTIMAND.check(estimand, "estimand")
    registry.METRIC.check(metric, "metric")
    result = _nested_intervals(
        cells,
        [metric],
        [estimand],
        confidence_level,
        kind,
        prior,
        draws,
        grid_shape,
        rng,
        batch,
        population_sizes,
        population_persons,
    )
    return result[metric, estimand]


@hide_level
def shared_nested_metric_intervals(
    cells: ArrayLike,
    metrics: Sequence[str],
    estimands: Sequence[str] = ("population",),
    *,
    prior: str = "pareto",
    confidence_level: float = DEFAULT_LEVEL,
    kind: str = "eti",
    draws: int = DRAWS,
    grid_shape: tuple[int, int] = MARGIN_GRID_SHAPE,
    rng: Any = None,
    batch: int | None = None,
    population_sizes: ArrayLike | None = None,
    population_persons: float | ArrayLike | None = None,
    level: Any = UNSET,
) -> dict[tuple[str, str], MetricCredibleInterval]:
    r""":func:`nested_metric_intervals` of several metrics and estimands from one posterior.

    Each interval equals ``nested_metric_intervals(cells, metric, estimand=estimand,
    ...)`` with the same other arguments, exactly: the draws do not depend on the metric
    or the estimand.

    Parameters
    ----------
    cells : array_like of int
        As for :func:`nested_metric_intervals` (one shape: all metrics binary, or all
        macro/micro averages).
    metrics : sequence of str
        Distinct metrics.
    estimands : sequence of {"population", "sampled_persons"}, default ("population",)
        Distinct estimands.
    prior, confidence_level, kind, draws, grid_shape, rng, batch, population_sizes,
    population_persons
        As for :func:`nested_metric_intervals`.

    Returns
    -------
    dict of (str, str) to MetricCredibleInterval
        Keyed by (metric, estimand), metrics first.

    Examples
    --------
    >>> import perfci as pc
    >>> per_person = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [4, 1, 1, 15]]
    >>> both = pc.bayes.shared_nested_metric_intervals(
    ...     per_person, ["f1", "kappa"], ["population", "sampled_persons"], rng=1
    ... )
    >>> own = pc.bayes.nested_metric_intervals(per_person, "kappa", rng=1)
    >>> both["kappa", "population"].low == own.low
    True
    """
    confidence_level = resolve_level(confidence_level, level)
    for name, values, choices in (
        ("metrics", metrics, registry.METRIC),
        ("estimands", estimands, registry.CONFUSION_ESTIMAND),
    ):
        if isinstance(values, str) or not isinstance(values, Sequence) or not values:
            raise ValueError(
                f"`{name}` must be a non-empty sequence of names from {sorted(choices.names)};"
                f" got {values!r}."
            )
        for value in values:
            choices.check(value, name)
        if len(set(values)) != len(values):
            raise ValueError(f"`{name}` must name distinct values; got {list(values)!r}.")
    return _nested_intervals(
        cells,
        list(metrics),
        list(estimands),
        confidence_level,
        kind,
        prior,
        draws,
        grid_shape,
        rng,
        batch,
        population_sizes,
        population_persons,
    )
