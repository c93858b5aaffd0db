r"""The posterior of the paired difference metric(A) - metric(B) of two classifiers.

Two classifiers on the same texts: the eight joint cells ``4 t + 2 a + b``
(:mod:`perfci._core.joint`) are split into the seven margins of
:data:`perfci._core.margins.PAIRED`, symmetric in A and B. Independent texts get the
exact posterior of the joint cells under a conjugate prior (as
:func:`~perfci.bayes.confusion_posterior`); texts nested in persons the hierarchical
margins model (as :func:`~perfci.bayes.nested_metric_intervals`). The difference comes
from posterior draws: :func:`compare_counts` from joint counts, :func:`compare` from
labels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core import registry
from .._core.deprecation import (
    DEFAULT_LEVEL,
    UNSET,
    hide_level,
    hide_parameters,
    positional_groups,
    resolve_level,
)
from .._core.joint import TO_A, TO_B
from .._core.margins import PAIRED, beta_margin_draws
from .._core.validation import (
    check_choice,
    check_confidence_level,
    check_positive_int,
    check_real_array,
    check_rng,
    dataset_generators,
)
from ..metrics import difference_bound, metric_values
from .intervals import INTERVAL_KINDS, CredibleResult, defined_interval, plain
from .nested import MARGIN_GRID_SHAPE, nested_options, warn_degenerate, warn_undefined_draws
from .posterior import DEFAULT_PRIOR, DRAWS, block_size, check_prior, margin_prior, prior_label

__all__ = ["PairedCredibleInterval", "compare", "compare_counts"]


@dataclass(frozen=True, repr=False)
class PairedCredibleInterval(CredibleResult):
    """The posterior of a paired difference metric(A) - metric(B).

    Attributes
    ----------
    metric : str
        The metric.
    estimand : str
        ``"texts"`` (independent texts: the population of texts), ``"population"`` or
        ``"sampled_persons"`` (nested texts).
    kind, confidence_level
        Interval kind and credible level (formerly `level`, still readable with a
        FutureWarning).
    estimate, low, high : float or numpy.ndarray
        Posterior median of the difference and the interval ends.
    prob_a_better : float or numpy.ndarray
        Posterior probability that A's metric exceeds B's: the share of draws with a
        positive difference, draws of exactly 0 counting half (a difference below the
        arithmetic's resolution, where both classifiers' rates round to the same).
    persons : int or numpy.ndarray or None
        Persons with at least one text (None for independent texts).
    flagged : bool or numpy.ndarray
        A margin fell back to one pooled rate (nested texts only).
    prior : str
        The prior: of the joint cells (independent texts) or of every margin's
        concentration (nested texts).
    """

    _derived: ClassVar[tuple[str, ...]] = ("method", "sources")

    metric: str
    estimand: str
    kind: str
    confidence_level: float
    estimate: Any
    low: Any
    high: Any
    prob_a_better: Any
    persons: Any
    flagged: Any
    prior: str

    @property
    def method(self) -> str:
        """Return the interval with what it is of, as results name their method."""
        return f"bayes paired difference, {self.estimand} ({self.kind}, prior {self.prior})"


def _paired_difference(metric: str) -> Callable[[NDArray[np.float64]], Any]:
    """metric(A) - metric(B) of joint cell probabilities (..., 8)."""
    return lambda c: metric_values(c @ TO_A, metric) - metric_values(c @ TO_B, metric)


def _independent_draws(
    flat: NDArray[np.float64],
    difference: Callable[[NDArray[np.float64]], Any],
    prior: str | float,
    count: int,
    rngs: Sequence[np.random.Generator],
    batch: Any,
) -> NDArray[np.float64]:
    """Posterior draws (K, count) of the difference of independent texts' joint cells."""
    total = flat.shape[0]
    successes, trials = PAIRED.counts(flat)
    base = margin_prior(prior, PAIRED)
    a, b = base[:, 0] + successes, base[:, 1] + trials - successes
    step = block_size(batch, float(count * (2 * 8 + 7)))
    values = np.empty((total, count))
    for start in range(0, total, step):  # blocks of data sets bound the memory
        part = slice(start, start + step)
        rates = beta_margin_draws(a[part], b[part], count, rngs[part])
        values[part] = difference(PAIRED.probabilities(rates))
    return values


@hide_level
def compare_counts(
    joint: ArrayLike,
    metric: str,
    *,
    nested: bool = False,
    estimand: str = "population",
    prior: str | float | None = None,
    confidence_level: float = DEFAULT_LEVEL,
    kind: str = "eti",
    draws: int = DRAWS,
    grid_shape: tuple[int, int] = MARGIN_GRID_SHAPE,
    rng: Any = None,
    batch: int | None = None,
    population_sizes: ArrayLike | None = None,
    population_persons: float | ArrayLike | None = None,
    level: Any = UNSET,
) -> PairedCredibleInterval:
    r"""Posterior of the paired difference metric(A) - metric(B) from joint counts.

    Parameters
    ----------
    joint : array_like of int
        Texts in each of the eight joint cells ``4 t + 2 a + b`` (reference t, labels a
        of A and b of B, 1 = positive; :data:`perfci.comparison.JOINT_CELLS`): shape
        ``(*batch, 8)``, or with ``nested=True`` ``(*batch, persons, 8)``.
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`).
    nested : bool, default False
        Whether the second-to-last axis is persons.
    estimand : {"population", "sampled_persons"}, default "population"
        For nested texts, as in :func:`nested_metric_intervals` (unused for independent
        texts, whose estimand is the population of texts).
    prior : str or float, optional
        Independent texts: the prior of the eight joint cells, a name of
        :data:`~perfci.bayes.CONFUSION_PRIORS` or a Dirichlet concentration (default
        :data:`~perfci.bayes.DEFAULT_PRIOR`; ``"perks"`` is Dirichlet(1/8), ``"jeffreys_margins"``
        Beta(1/2, 1/2) on each of the seven margins). Nested texts: the prior of every
        margin's concentration, ``"pareto"`` (default) or ``"bda3"``.
    confidence_level, kind, draws, grid_shape, rng, batch
        As in :func:`nested_metric_intervals` (`grid_shape` for nested texts only;
        ``level``, the former name of `confidence_level`, is deprecated).
    population_sizes, population_persons : optional
        Nested texts only, as in :func:`nested_metric_intervals`.

    Returns
    -------
    PairedCredibleInterval
        The posterior median of the difference, its interval and the posterior
        probability that A is better; fields of the shape of the leading axes.

    Notes
    -----
    Independent texts: the joint cells are multinomial; with a prior of the seven
    margins of :data:`perfci._core.margins.PAIRED` (the reference; per reference class,
    whether A and B agree; whether an agreement is positive; whether a disagreement is
    A's positive) their posterior is a product of Betas, a Dirichlet for a Dirichlet
    prior. Each draw of the joint cell probabilities gives A's and B's cells, and the
    difference of their metrics. The margins are symmetric in A and B, so when A and B
    are the same classifier the posterior of the difference is symmetric about 0.

    Nested texts: each of the seven margins is its own hierarchical beta-binomial over
    the persons, as in :func:`nested_metric_intervals`, and the difference is the metric
    of the joint cells for the population step
    (:func:`perfci._core.population.population_metric_draws`, with the difference's
    range, [-1, 1], or [-2, 2] for kappa and MCC). Its degenerate cases are those of
    :func:`nested_metric_intervals`.

    Examples
    --------
    >>> import perfci as pc
    >>> joint = [300, 10, 4, 6, 5, 3, 12, 60]  # 400 texts: A finds more positives
    >>> diff = pc.bayes.compare_counts(joint, "recall", rng=1)
    >>> print(f"{diff.estimate:.3f} [{diff.low:.3f}, {diff.high:.3f}] P(A better) "
    ...       f"{diff.prob_a_better:.3f}")  # from draws: 2 decimals shown
    0.11 [0.02, 0.20] P(A better) 0.99
    """
    confidence_level = resolve_level(confidence_level, level)
    registry.COMPARE_METRIC.check(metric, "metric")
    registry.BINARY_METRIC.check(metric, "metric")
    if not isinstance(nested, bool):
        raise ValueError(f"`nested` must be True or False; got {nested!r}.")
    registry.CONFUSION_ESTIMAND.check(estimand, "estimand")
    arr = check_real_array("joint", joint)
    if arr.ndim < (2 if nested else 1) or arr.shape[-1] != 8:
        need = "(*batch, persons, 8)" if nested else "(*batch, 8)"
        raise ValueError(f"`joint` must have shape {need}; got {arr.shape}.")
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise ValueError("`joint` must hold whole non-negative numbers of texts.")
    difference = _paired_difference(metric)
    if nested:
        chosen = "pareto" if prior is None else prior
        if not isinstance(chosen, str):
            raise ValueError(
                f"`prior` must be one of {sorted(registry.PRIOR.names)} for nested texts; got "
                f"{prior!r}."
            )
        args = nested_options(
            arr.astype(np.int64),
            PAIRED,
            1,
            confidence_level,
            kind,
            chosen,
            draws,
            grid_shape,
            rng,
            batch,
            population_sizes,
            population_persons,
            "joint",
        )
        bound = difference_bound(metric)
        drawn = args.draw({metric: (difference, (-bound, bound))})
        values = (drawn.population if estimand == "population" else drawn.sampled)[metric]
        warn_degenerate(drawn.persons, drawn.fallback, PAIRED, [estimand], f"{metric} difference")
        label, flagged, who = chosen, drawn.fallback.any(-1), drawn.persons
        lead, lvl = args.lead, args.level
    else:
        for name, value in (
            ("population_sizes", population_sizes),
            ("population_persons", population_persons),
        ):
            if value is not None:
                raise ValueError(f"`{name}` applies to nested texts (nested=True) only.")
        check_choice("kind", kind, INTERVAL_KINDS)
        lvl = float(check_confidence_level(confidence_level, "confidence_level", scalar=True))
        count = check_positive_int("draws", draws)
        generator = check_rng(rng)
        checked = check_prior(DEFAULT_PRIOR if prior is None else prior)
        lead = arr.shape[:-1]
        flat = arr.reshape(-1, 8)
        rngs = dataset_generators(generator, flat.shape[0], bool(lead))
        values = _independent_draws(flat, difference, checked, count, rngs, batch)
        label, flagged, who = prior_label(checked), np.zeros(values.shape[0], bool), None
        estimand = "texts"
    low, mid, high = defined_interval(values, kind, lvl)
    if who is not None:
        warn_undefined_draws(metric, estimand, low, who)
    # ties (a difference that underflows to exactly 0) count half, as in an AUC
    better = np.where(np.isnan(mid), np.nan, (values > 0).mean(-1) + (values == 0).mean(-1) / 2)
    return PairedCredibleInterval(
        metric,
        estimand,
        kind,
        lvl,
        plain(mid.reshape(lead)),
        plain(low.reshape(lead)),
        plain(high.reshape(lead)),
        plain(better.reshape(lead)),
        None if who is None else plain(who.reshape(lead)),
        plain(flagged.reshape(lead)),
        label,
    )


def compare(
    y_true: ArrayLike,
    pred_a: ArrayLike,
    pred_b: ArrayLike,
    metric: str,
    *former_groups: Any,
    groups: ArrayLike | None = None,
    positive: Any = None,
    confidence_level: float = DEFAULT_LEVEL,
    level: Any = UNSET,
    **options: Any,
) -> PairedCredibleInterval:
    r"""Posterior of the paired difference metric(A) - metric(B) from labels.

    Parameters
    ----------
    y_true, pred_a, pred_b : array_like
        Reference labels and the two classifiers' labels of the same texts (binary),
        shape ``(n_texts,)`` or ``(*batch, n_texts)``, as in :func:`perfci.compare`.
    metric : str
        A binary metric.
    groups : array_like, optional
        Person ids, one per text: the texts are nested in persons.
    positive : object, optional
        The positive label.
    confidence_level : float, default 0.95
        Credible level.
    **options
        Passed to :func:`compare_counts` (estimand, prior, kind, draws, grid_shape, rng,
        batch).

    Returns
    -------
    PairedCredibleInterval
        As :func:`compare_counts` on the labels' joint counts.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> diff = pc.bayes.compare(texts["human"], texts["model"], texts["model_b"], "recall",
    ...                         groups=texts["person"], rng=1)
    >>> print(f"{diff.estimate:.3f} [{diff.low:.3f}, {diff.high:.3f}]")  # drawn: 2 decimals
    0.03 [0.01, 0.07]
    """
    from ..counting import joint_confusion

    groups = positional_groups(former_groups, groups, "compare")
    confidence_level = resolve_level(confidence_level, level)
    registry.COMPARE_METRIC.check(metric, "metric")
    registry.BINARY_METRIC.check(metric, "metric")
    cells, nested, batch_shape = joint_confusion(y_true, pred_a, pred_b, groups, positive)
    joint = cells.reshape(*batch_shape, *cells.shape[1:])
    return compare_counts(
        joint, metric, nested=nested, confidence_level=confidence_level, **options
    )


hide_parameters(compare, "level", positional=True)
