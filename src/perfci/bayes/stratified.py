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

The ``"bounding"`` prior is Clopper-Pearson's construction carried to strata: each end
of the interval comes from its own posterior, whose prior puts one text in each stratum's
possible cell that moves the metric furthest toward that end (the cell with the most
negative gradient of the metric, at the Jeffreys estimate of the corpus, for the lower
end; the most positive for the upper). For a single stratum and a proportion it is
Beta(x, n - x + 1) and Beta(x + 1, n - x), Clopper-Pearson's two ends. It is the prior
that covers where a coded stratum holds only a few texts of the metric's denominator (a
few false negatives among the predicted negatives, which recall reads).

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
from ..metrics import metric_gradient, metric_values

__all__ = ["PREVALENCE", "StratifiedPosterior", "corpus_metric", "stratified_posterior"]

_PRIOR = {"jeffreys": 0.5, "uniform": 1.0}
_BOUNDING = "bounding"


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
        ``"jeffreys"``, ``"uniform"`` or ``"bounding"``.
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


def corpus_metric(cells: np.ndarray, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Return a binary metric or ``"prevalence"`` of cells ``(..., 4)`` and its gradient.

    NaN where the metric is undefined (no relevant cell), in the value and the gradient.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.bayes.stratified import corpus_metric
    >>> value, gradient = corpus_metric(np.array([30.0, 10.0, 20.0, 40.0]), "prevalence")
    >>> float(value), gradient.tolist()
    (0.5, [0.005, -0.005, 0.005, -0.005])
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        if metric == PREVALENCE:
            n = cells.sum(-1)
            p = np.where(n > 0, (cells[..., 0] + cells[..., 2]) / np.where(n > 0, n, 1), np.nan)
            return p, (np.array([1.0, 0.0, 1.0, 0.0]) - p[..., None]) / n[..., None]
        return metric_values(cells, metric), metric_gradient(cells, metric)


def stratified_posterior(
    cells: Any,
    stratum_sizes: Any,
    metric: str,
    *,
    prior: str = "jeffreys",
    draws: int = 4000,
    confidence_level: float = 0.95,
    rng: Any = None,
    finite: bool = True,
) -> StratifiedPosterior:
    """Credible interval of a corpus metric from per-stratum cells and stratum sizes.

    Parameters
    ----------
    cells : array_like, shape (..., strata, 4)
        Each stratum's sampled ``[tp, fp, fn, tn]``; leading axes are data sets.
    stratum_sizes : array_like, shape (strata,) or (..., strata)
        The corpus texts of each stratum, :math:`N_h` (at least its sampled texts); with
        ``finite=False``, the strata's relative sizes (any positive numbers).
    metric : str
        A binary metric of :data:`perfci.BINARY_METRICS`, or ``"prevalence"``.
    prior : {"jeffreys", "uniform", "bounding"}, default "jeffreys"
        The Dirichlet prior of each stratum's cell shares; ``"bounding"`` takes each end
        from its own posterior (module notes), with the median of both as the estimate.
    draws : int, default 4000
        Posterior draws per data set.
    confidence_level : float, default 0.95
        The credible level.
    rng : numpy.random.Generator, int or None
        Random generator or seed; a batch's data sets each draw from their own stream
        (:func:`perfci.batch_generators`), so a batch equals a loop of single calls.
    finite : bool, default True
        Whether the corpus is the finite one of `stratum_sizes` texts (its unsampled
        texts predicted), or so large that no finite population correction applies
        (False: the corpus metric is that of the strata's cell shares weighted by
        their relative sizes `stratum_sizes`; what weights without corpus sizes give).

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
    if not isinstance(finite, bool | np.bool_):
        raise ValueError(f"`finite` must be True or False; got {finite!r}.")
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
    sizes = check_real_array("stratum_sizes", stratum_sizes)
    try:
        if sizes.ndim == 0 or sizes.shape[-1] != counts.shape[-2]:
            raise ValueError
        sizes = np.broadcast_to(sizes, counts.shape[:-1])
    except ValueError:
        raise ValueError(
            f"`stratum_sizes` must give one size per stratum of `cells`, shape "
            f"{counts.shape[:-1]} or ({counts.shape[-2]},); got {sizes.shape}."
        ) from None
    sampled = counts.sum(-1)
    if not finite:
        if np.any(sizes < 0) or not np.all(sizes.sum(-1) > 0):
            raise ValueError(
                "`stratum_sizes` must be relative sizes with `finite` False: none negative "
                "and not all 0."
            )
    elif np.any(sizes < sampled) or np.any(sizes != np.round(sizes)):
        raise ValueError(
            "`stratum_sizes` must be whole numbers of corpus texts, at least the texts "
            "sampled from each stratum."
        )
    batch = counts.shape[:-2]
    flat = counts.reshape(-1, *counts.shape[-2:])
    # the corpus texts of each stratum: sampled and predicted, or relative (finite=False)
    corpus_sizes = sizes.reshape(flat.shape[:-1]).astype(float)
    rest = (sizes - sampled).reshape(flat.shape[:-1]).astype(np.int64) if finite else None
    generators = dataset_generators(rng, flat.shape[0], bool(batch))
    probabilities = np.array([(1 - level) / 2, 0.5, (1 + level) / 2])
    out = np.empty((flat.shape[0], 3))
    possible = possible_cells(flat)
    priors: tuple[np.ndarray, ...]
    if prior == _BOUNDING:
        priors = _bounding_priors(flat, corpus_sizes, possible, metric)
    else:
        priors = (_PRIOR[prior] * possible,)
    for k, generator in enumerate(generators):  # data sets; each vectorized over draws
        values = [
            _predictive_metric(
                flat[k],
                None if rest is None else rest[k],
                corpus_sizes[k],
                a[k],
                draws,
                generator,
                metric,
            )
            for a in priors
        ]
        if len(values) == 1:
            out[k] = _quantiles(values[0], probabilities)
        else:  # each end from its own posterior, the median from both
            out[k, 0] = _quantiles(values[0], probabilities[:1])[0]
            out[k, 1] = _quantiles(np.concatenate(values), probabilities[1:2])[0]
            out[k, 2] = _quantiles(values[1], probabilities[2:])[0]
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


def _quantiles(values: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    if not np.isfinite(values).any():
        return np.full(probabilities.shape, np.nan)
    return np.nanquantile(values, probabilities)


def _predictive_metric(
    sampled: np.ndarray,
    rest: np.ndarray | None,
    relative: np.ndarray,
    prior_counts: np.ndarray,
    draws: int,
    generator: np.random.Generator,
    metric: str,
) -> np.ndarray:
    """Draw the corpus metric: per-stratum Dirichlet shares, the unsampled texts from them.

    `rest` are the unsampled texts of each stratum; None for an infinite corpus
    (``finite=False``), whose metric is that of the shares weighted by the strata's
    `relative` sizes, nothing predicted.
    """
    alpha = np.broadcast_to(sampled + prior_counts, (draws, *sampled.shape))
    gamma = np.where(alpha > 0, generator.standard_gamma(np.maximum(alpha, 1e-300)), 0.0)
    total = gamma.sum(-1, keepdims=True)
    # a stratum with no sampled text and no prior mass has nothing to predict from
    shares = np.divide(gamma, total, out=np.zeros_like(gamma), where=total > 0)
    if rest is None:
        corpus = (relative[..., None] * shares).sum(-2)
    else:
        unseen = generator.multinomial(np.where(total[..., 0] > 0, rest, 0), shares)
        corpus = (sampled + unseen).sum(-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return corpus_metric(corpus.astype(float), metric)[0]


def _bounding_priors(
    flat: np.ndarray, corpus_sizes: np.ndarray, possible: np.ndarray, metric: str
) -> tuple[np.ndarray, np.ndarray]:
    """Return the lower and the upper end's priors: one text per stratum, (..., strata, 4).

    The text goes to the possible cell with the most negative (lower end) or the most
    positive (upper end) gradient of the metric at the Jeffreys estimate of the corpus
    cells; ties go to the first such cell.
    """
    sizes = corpus_sizes[..., None]
    smoothed = flat + 0.5 * possible
    corpus = (sizes * smoothed / smoothed.sum(-1, keepdims=True)).sum(-2)
    gradient = np.nan_to_num(corpus_metric(corpus, metric)[1])[..., None, :]
    ends = []
    for sign in (-1.0, 1.0):
        score = np.where(possible, sign * gradient, -np.inf)
        best = np.argmax(score, axis=-1)
        ends.append((np.arange(4) == best[..., None]).astype(float))
    return ends[0], ends[1]
