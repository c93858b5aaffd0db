r"""The posterior of a corpus metric from a stratified sample, poststratified.

A validation sample stratified by the classifier's prediction (or by anything else with
known corpus counts :math:`N_h`) has, in each stratum h, sampled cell counts
:math:`n_{hc}` of ``[tp, fp, fn, tn]``. Each stratum gets its own conjugate model: its
cell shares :math:`\pi_h \sim \mathrm{Dirichlet}(a + n_h)` (prior Dirichlet(a), ``a`` 1/2
for ``"jeffreys"`` and 1 for ``"uniform"``); the stratum's :math:`N_h - n_h` texts not
sampled are :math:`\mathrm{Multinomial}(N_h - n_h, \pi_h)` (the finite population's
posterior predictive). The corpus's confusion matrix is the sum over strata of the
sampled and the predicted texts, and the metric of it is the corpus metric: exact
draws, no sampler. The interval is equal-tailed.

A stratum whose sampled texts all have one prediction (or all one reference label) is
taken to be defined by it, as a stratum of the classifier's predicted positives is: the
prior is then put on its two possible cells only
(:func:`perfci._core.strata.possible_cells`), so that it predicts no text the classifier
would have placed in another stratum.

Texts are modelled as exchangeable within a stratum: persons are not in this model (the
design-based :func:`perfci.sample_design.weighted_ci` with ``groups`` is the interval that
treats them as clusters).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._core import registry
from .._core.results import IntervalResult, sources_of
from .._core.strata import possible_cells
from .._core.validation import (
    check_confidence_level,
    check_positive_int,
    check_real_array,
    dataset_generators,
)
from ..metrics import metric_values

__all__ = ["PREVALENCE", "StratifiedPosterior", "stratified_posterior"]

_PRIOR = {"jeffreys": 0.5, "uniform": 1.0}


@dataclass(frozen=True, repr=False)
class StratifiedPosterior(IntervalResult):
    """The posterior of a corpus metric under a stratified design.

    Attributes
    ----------
    metric : str
        The metric.
    estimate : float or numpy.ndarray
        The posterior median.
    low, high : float or numpy.ndarray
        The equal-tailed credible interval.
    confidence_level : float
        The credible level.
    method : str
        ``"poststratified Dirichlet-multinomial"``.
    prior : str
        ``"jeffreys"`` or ``"uniform"``.
    draws : int
        Posterior draws per data set.
    population : str
        What the interval is about.
    """

    _derived: ClassVar[tuple[str, ...]] = ("sources",)

    metric: str
    estimate: Any
    low: Any
    high: Any
    confidence_level: float
    method: str
    prior: str
    draws: int
    population: str

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes: the texts."""
        return sources_of(persons=False)


#: The reference positives' share, a metric of the corpus like the binary metrics.
PREVALENCE = "prevalence"


def _corpus_metric(cells: np.ndarray, metric: str) -> np.ndarray:
    if metric == PREVALENCE:
        return (cells[..., 0] + cells[..., 2]) / cells.sum(-1)
    return metric_values(cells, metric)


def stratified_posterior(
    cells: Any,
    stratum_sizes: Any,
    metric: str,
    *,
    prior: str = "jeffreys",
    draws: int = 4000,
    confidence_level: float = 0.95,
    rng: Any = None,
) -> StratifiedPosterior:
    """Credible interval of a corpus metric from per-stratum cells and stratum sizes.

    Parameters
    ----------
    cells : array_like, shape (..., strata, 4)
        Each stratum's sampled ``[tp, fp, fn, tn]``; leading axes are data sets.
    stratum_sizes : array_like, shape (strata,) or (..., strata)
        The corpus texts of each stratum, :math:`N_h` (at least its sampled texts).
    metric : str
        A binary metric of :data:`perfci.BINARY_METRICS`, or ``"prevalence"``.
    prior : {"jeffreys", "uniform"}, default "jeffreys"
        The Dirichlet prior of each stratum's cell shares.
    draws : int, default 4000
        Posterior draws per data set.
    confidence_level : float, default 0.95
        The credible level.
    rng : numpy.random.Generator, int or None
        Random generator or seed; a batch's data sets each draw from their own stream
        (:func:`perfci.batch_generators`), so a batch equals a loop of single calls.

    Returns
    -------
    StratifiedPosterior

    Examples
    --------
    >>> from perfci.bayes import stratified_posterior
    >>> cells = [[240, 60, 0, 0], [0, 0, 9, 291]]  # 300 predicted positives, 300 negatives
    >>> post = stratified_posterior(cells, [2400, 31400], "recall", rng=1)
    >>> print(f"{post.estimate:.2f} [{post.low:.2f}, {post.high:.2f}]")
    0.67 [0.53, 0.80]
    """
    if metric != PREVALENCE:
        registry.BINARY_METRIC.check(metric)
    registry.STRATIFIED_PRIOR.check(prior)
    level = float(check_confidence_level(confidence_level, scalar=True))
    draws = check_positive_int("draws", draws)
    counts = check_real_array("cells", cells)
    if counts.ndim < 2 or counts.shape[-1] != 4:
        raise ValueError(
            "`cells` must have shape (..., strata, 4): each stratum's [tp, fp, fn, tn]; "
            f"got {counts.shape}."
        )
    if np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise ValueError("`cells` must be non-negative whole numbers of texts.")
    sizes = np.broadcast_to(check_real_array("stratum_sizes", stratum_sizes), counts.shape[:-1])
    sampled = counts.sum(-1)
    if np.any(sizes < sampled) or np.any(sizes != np.round(sizes)):
        raise ValueError(
            "`stratum_sizes` must be whole numbers of corpus texts, at least the texts "
            "sampled from each stratum."
        )
    batch = counts.shape[:-2]
    flat = counts.reshape(-1, *counts.shape[-2:])
    rest = (sizes - sampled).reshape(flat.shape[:-1]).astype(np.int64)
    generators = dataset_generators(rng, flat.shape[0], bool(batch))
    probabilities = [(1 - level) / 2, 0.5, (1 + level) / 2]
    out = np.empty((flat.shape[0], 3))
    prior_counts = _PRIOR[prior] * possible_cells(flat)
    for k, generator in enumerate(generators):  # data sets; each vectorized over draws
        alpha = np.broadcast_to(flat[k] + prior_counts[k], (draws, *flat[k].shape))
        gamma = np.where(alpha > 0, generator.standard_gamma(np.maximum(alpha, 1e-300)), 0.0)
        shares = gamma / gamma.sum(-1, keepdims=True)
        unseen = generator.multinomial(rest[k], shares)
        corpus = (flat[k] + unseen).sum(-2)
        with np.errstate(invalid="ignore", divide="ignore"):
            values = _corpus_metric(corpus.astype(float), metric)
        out[k] = np.nanquantile(values, probabilities) if np.isfinite(values).any() else np.nan
    low, median, high = (out[:, j].reshape(batch) for j in range(3))
    return StratifiedPosterior(
        metric=metric,
        estimate=float(median) if not batch else median,
        low=float(low) if not batch else low,
        high=float(high) if not batch else high,
        confidence_level=level,
        method="poststratified Dirichlet-multinomial",
        prior=prior,
        draws=draws,
        population="the corpus the sample was drawn from",
    )
