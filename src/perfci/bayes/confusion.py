r"""Bayesian intervals of every confusion-matrix metric, and of paired differences.

Three functions, one model each (see :mod:`perfci._core.margins` for the margins):

:func:`confusion_posterior`
    independent texts: the cells of a confusion matrix (or a k x k matrix) are
    multinomial with a conjugate prior (:data:`CONFUSION_PRIORS`); the posterior is
    exact. A metric that is a monotone function of one Beta-distributed quantity (recall,
    precision, specificity, NPV, accuracy, F1, PPA, PNA under a Dirichlet prior) gets
    closed-form quantiles; the others (kappa, MCC, balanced accuracy, macro averages)
    come from independent posterior draws.
:func:`nested_metric_intervals`
    texts nested in persons: the hierarchical model by margins. Each binary margin
    (prevalence, recall, specificity; for k classes each stick-breaking margin) is its
    own hierarchical beta-binomial with its own mean and concentration, computed on the
    exact grid; person cell probabilities are drawn per posterior draw, then turned into
    the estimand: ``population`` (default; :func:`perfci._core.population.population_metric_draws`)
    or ``sampled_persons``.
:func:`compare_counts` and :func:`compare`
    two classifiers on the same texts: the same models on the eight joint cells
    ``4 t + 2 a + b``; the posterior of metric(A) - metric(B) by draws.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core import registry
from .._core.grid import interval_from_draws, s_prior
from .._core.margins import (
    BINARY,
    PAIRED,
    MarginTree,
    beta_margin_draws,
    draw_margin_rates,
    margin_posteriors,
    multiclass_tree,
)
from .._core.population import population_metric_draws
from .._core.results import ResultMixin
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
from ..metrics import BINARY_METRICS, METRICS, difference_bound, metric_values, undefined_reason
from .fitting import GRID_DRAWS
from .results import INTERVAL_KINDS, CredibleInterval

__all__ = [
    "CONFUSION_PRIORS",
    "DEFAULT_PRIOR",
    "ConfusionPosterior",
    "MetricCredibleInterval",
    "PairedCredibleInterval",
    "PriorOnlyWarning",
    "compare",
    "compare_counts",
    "confusion_posterior",
    "nested_metric_intervals",
    "shared_nested_metric_intervals",
]

#: Priors of the cells of independent texts (:data:`perfci._core.registry.CONFUSION_PRIOR`).
CONFUSION_PRIORS: tuple[str, ...] = registry.CONFUSION_PRIOR.names
#: The default prior: the one whose intervals cover on the paper's F1 grid (docs/bayes.md).
DEFAULT_PRIOR = registry.DEFAULT_CONFUSION_PRIOR
#: The smallest symmetric Dirichlet concentration accepted as a number: below it, Beta
#: draws underflow to exactly 0 often enough to leave metrics undefined in some draws.
MIN_CONCENTRATION = 0.05
#: Default draws of every interval computed from draws (as the grid sampler's).
DRAWS = GRID_DRAWS
#: Values (data sets x draws x cells) one block of drawn intervals holds at once.
_DRAW_BLOCK = 1 << 22
#: Grid cells of one block of a margin's grid posteriors (as bayes.grid_intervals).
_GRID_BLOCK = 1 << 23
#: Default fine grid of each margin's (mu, s): a quarter of the cells of
#: bayes.grid_intervals' (400, 100), with the same intervals within their Monte-Carlo error
#: (tests/test_bayes_confusion.py).
MARGIN_GRID_SHAPE = (200, 50)
#: Tail masses tried by the closed-form HDI search.
_HDI_STEPS = 2001

_TP, _FP, _FN, _TN = range(4)
# Metrics that are a monotone function of one Beta quantity under a Dirichlet posterior:
# (cells of its first parameter, cells of its second, whether F = 2W / (1 + W)).
_BETA_FORMS: dict[str, tuple[tuple[int, ...], tuple[int, ...], bool]] = {
    "recall": ((_TP,), (_FN,), False),
    "precision": ((_TP,), (_FP,), False),
    "specificity": ((_TN,), (_FP,), False),
    "npv": ((_TN,), (_FN,), False),
    "accuracy": ((_TP, _TN), (_FP, _FN), False),
    "f1": ((_TP,), (_FP, _FN), True),
    "ppa": ((_TP,), (_FP, _FN), True),
    "pna": ((_TN,), (_FP, _FN), True),
}
# Metrics that are one margin of the binary tree, Beta under any prior of the margins.
_MARGIN_METRICS = {"recall": 1, "specificity": 2}
# Micro averages of single-label k x k matrices that equal the accuracy (sum of the diagonal).
_ACCURACY_LIKE = ("micro_recall", "micro_precision", "micro_f1", "micro_ppa")


class PriorOnlyWarning(UserWarning):
    """The data hold no text relevant to a metric: its posterior is its prior."""


# ------------------------------------------------------------------------- priors


def _check_prior(prior: Any) -> str | float:
    """Return a prior name, or a symmetric Dirichlet concentration (a number)."""
    if isinstance(prior, str):
        return registry.CONFUSION_PRIOR.check(prior, "prior")
    if isinstance(prior, bool) or not isinstance(prior, int | float | np.integer | np.floating):
        raise ValueError(
            f"`prior` must be one of {sorted(CONFUSION_PRIORS)} or a Dirichlet concentration "
            f"of at least {MIN_CONCENTRATION}; got {prior!r}."
        )
    value = float(prior)
    if not (math.isfinite(value) and value >= MIN_CONCENTRATION):
        raise ValueError(
            f"`prior` as a number is the Dirichlet concentration of every cell and must be "
            f"at least {MIN_CONCENTRATION}; got {prior!r}."
        )
    return value


def _concentration(prior: str | float, cells: int) -> float | None:
    """Return the symmetric Dirichlet concentration of a prior (None: a prior of margins)."""
    if not isinstance(prior, str):
        return prior
    return {"metric_jeffreys": 0.5, "jeffreys": 0.5, "uniform": 1.0, "perks": 1.0 / cells}.get(
        prior
    )


def _margin_prior(prior: str | float, tree: MarginTree) -> NDArray[np.float64]:
    """Beta prior parameters (margins, 2) of each margin of `tree` under `prior`.

    A symmetric Dirichlet(lambda) on the cells is Beta(lambda L, lambda R) on a margin
    with L cells on its left and R on its right; a prior of margins is Beta(1/2, 1/2).
    """
    lam = _concentration(prior, tree.cells)
    if lam is None:
        return np.full((len(tree.names), 2), 0.5)
    return lam * tree.sides()


def _prior_label(prior: str | float) -> str:
    return prior if isinstance(prior, str) else f"dirichlet({prior:g})"


# ------------------------------------------------------------------------ helpers


def _plain(a: Any) -> Any:
    arr = np.asarray(a)
    return arr.item() if arr.ndim == 0 else arr


def _block_size(batch: Any, per_set: float) -> int:
    """Return the data sets per block: `batch`, or as many as :data:`_DRAW_BLOCK` allows."""
    if batch is not None:
        return check_positive_int("batch", batch)
    return max(1, int(_DRAW_BLOCK // max(per_set, 1.0)))


def _multiclass_values(cells: NDArray[np.float64], metric: str, classes: int) -> Any:
    """Return a macro or micro metric of flat k x k cell probabilities (..., k * k)."""
    from ..counting import one_vs_rest

    matrix = cells.reshape(*cells.shape[:-1], classes, classes)
    return metric_values(one_vs_rest(matrix), metric)


def _metric_function(metric: str, classes: int) -> Callable[[NDArray[np.float64]], Any]:
    """Return the metric of flat cell probabilities, vectorized over leading axes."""
    if metric in BINARY_METRICS:
        return lambda c: metric_values(c, metric)
    return lambda c: _multiclass_values(c, metric, classes)


def _bounds(metric: str) -> tuple[float, float]:
    return (-1.0, 1.0) if metric in ("kappa", "mcc") else (0.0, 1.0)


def _beta_interval(
    a: NDArray[np.float64], b: NDArray[np.float64], agreement: bool, kind: str, level: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Low, median and high of W ~ Beta(a, b) (or of 2W / (1 + W)), any shape."""
    from scipy import special

    def transform(w: Any) -> Any:
        return 2 * w / (1 + w) if agreement else w

    mid = transform(special.betaincinv(a, b, 0.5))
    if kind == "eti":
        low = transform(special.betaincinv(a, b, (1 - level) / 2))
        high = transform(special.betaincinv(a, b, (1 + level) / 2))
        return low, mid, high
    # the narrowest interval of the metric: minimize its width over the lower tail mass
    tails = np.linspace(0.0, 1.0 - level, _HDI_STEPS)
    lows = transform(special.betaincinv(a[..., None], b[..., None], tails))
    highs = transform(special.betaincinv(a[..., None], b[..., None], tails + level))
    best = np.argmin(highs - lows, axis=-1)[..., None]
    low = np.take_along_axis(lows, best, -1)[..., 0]
    high = np.take_along_axis(highs, best, -1)[..., 0]
    return low, mid, high


# ------------------------------------------------------------ independent texts


@dataclass(frozen=True)
class ConfusionPosterior(ResultMixin):
    r"""Posterior of the cell probabilities of confusion matrices of independent texts.

    Attributes
    ----------
    counts : numpy.ndarray
        The counts, ``(..., 4)`` ``[tp, fp, fn, tn]`` or ``(..., k, k)`` (rows: the
        reference).
    prior : str
        The prior's name (``"dirichlet(<lambda>)"`` for a number).
    alpha : numpy.ndarray or None
        The posterior Dirichlet parameters of the cells, counts + lambda, when the prior
        is a Dirichlet; None for ``"jeffreys_margins"``, whose posterior is not a
        Dirichlet (see `margin_alpha`).
    margins : tuple of str
        Names of the binary margins (:mod:`perfci._core.margins`).
    margin_alpha : numpy.ndarray, shape (..., margins, 2)
        The posterior Beta parameters of each margin, independent a posteriori: the
        whole posterior, for every prior.

    Notes
    -----
    Under the prior of margins Beta(a_k, b_k) and counts with y_k texts on margin k's
    left side of n_k, margin k's posterior is Beta(a_k + y_k, b_k + n_k - y_k). For the
    binary cells the margins are the prevalence, the recall and the specificity;
    Dirichlet(lambda) is Beta(2 lambda, 2 lambda), Beta(lambda, lambda), Beta(lambda,
    lambda) on them, and ``"jeffreys_margins"`` Beta(1/2, 1/2) on each.
    :meth:`to_dict` holds every field; :meth:`to_frame` and :meth:`to_xarray` leave out
    `counts` and `margin_alpha` (their shapes differ from `alpha`'s).
    """

    _dims: ClassVar[tuple[str, ...] | None] = ("cell",)
    _exclude: ClassVar[tuple[str, ...]] = ("counts", "margin_alpha")

    counts: NDArray[np.float64]
    prior: str
    alpha: NDArray[np.float64] | None
    margins: tuple[str, ...]
    margin_alpha: NDArray[np.float64]

    @property
    def classes(self) -> int:
        """Number of classes (2 for binary cells)."""
        return 2 if self.margins == BINARY.names else int(self.counts.shape[-1])

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics this posterior gives intervals of."""
        if self.margins == BINARY.names:
            return BINARY_METRICS
        return tuple(m for m in METRICS if m not in BINARY_METRICS)

    def _lead(self) -> tuple[int, ...]:
        return self.margin_alpha.shape[:-2]

    def closed_form(self, metric: str) -> bool:
        """Whether the metric's interval is closed form (else it comes from draws).

        Examples
        --------
        >>> import perfci as pc
        >>> post = pc.bayes.confusion_posterior([40, 6, 9, 345])
        >>> post.closed_form("f1"), post.closed_form("kappa")
        (True, False)
        """
        check_choice("metric", metric, self.metrics)
        if self.margins == BINARY.names:
            return metric in _MARGIN_METRICS or (self.alpha is not None and metric in _BETA_FORMS)
        return self.alpha is not None and metric in _ACCURACY_LIKE

    def _beta_parameters(
        self, metric: str
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], bool]:
        if self.margins == BINARY.names and metric in _MARGIN_METRICS:
            k = _MARGIN_METRICS[metric]
            return self.margin_alpha[..., k, 0], self.margin_alpha[..., k, 1], False
        alpha = self.alpha
        assert alpha is not None  # closed_form said so
        # metric_jeffreys: the metric's own margin has its Jeffreys prior Beta(1/2, 1/2)
        own = self.prior == "metric_jeffreys"
        if self.margins == BINARY.names:
            first, second, agreement = _BETA_FORMS[metric]
            if own:
                return self._own_margin(first, second) + (agreement,)
            return alpha[..., first].sum(-1), alpha[..., second].sum(-1), agreement
        diagonal = np.trace(alpha, axis1=-2, axis2=-1)
        if own:
            hits = np.trace(self.counts, axis1=-2, axis2=-1)
            return hits + 0.5, self.counts.sum((-2, -1)) - hits + 0.5, False
        return diagonal, alpha.sum((-2, -1)) - diagonal, False

    def _own_margin(
        self, first: tuple[int, ...], second: tuple[int, ...]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Jeffreys posterior Beta(x + 1/2, y + 1/2) of the margin of these cells."""
        return self.counts[..., first].sum(-1) + 0.5, self.counts[..., second].sum(-1) + 0.5

    def _tree(self) -> MarginTree:
        return BINARY if self.margins == BINARY.names else multiclass_tree(self.classes)

    def draws(
        self, metric: str, draws: int = DRAWS, *, rng: Any = None, batch: int | None = None
    ) -> NDArray[np.float64]:
        r"""Independent posterior draws of a metric.

        Parameters
        ----------
        metric : str
            One of :attr:`metrics`.
        draws : int, default 4000
            Draws per data set.
        rng : numpy.random.Generator, int or None
            Seed. A single data set uses ``np.random.default_rng(rng)``; data set k of a
            batch (leading axes flattened in C order) uses
            ``np.random.default_rng(rng).spawn(K)[k]``. Each data set draws its margins
            with ``rng.beta(a, b, size=(draws, margins))``, whatever the metric: two
            metrics drawn with the same seed come from the same posterior draws. Under
            ``"metric_jeffreys"`` a metric with its own margin (see :meth:`interval`) is
            drawn from that margin's posterior instead, ``rng.beta(a, b, size=(draws,
            1))``.
        batch : int, optional
            Data sets drawn at once (memory; the draws do not depend on it).

        Returns
        -------
        numpy.ndarray, shape (\*batch, draws)

        Examples
        --------
        >>> import perfci as pc
        >>> posterior = pc.bayes.confusion_posterior([[40, 6, 9, 345], [12, 3, 2, 80]])
        >>> kappa = posterior.draws("kappa", 1000, rng=1)
        >>> kappa.shape, bool(((kappa > -1) & (kappa < 1)).all())
        ((2, 1000), True)
        """
        check_choice("metric", metric, self.metrics)
        count = check_positive_int("draws", draws)
        generator = check_rng(rng)
        return self._draws(metric, count, generator, batch)

    def _draws(
        self, metric: str, count: int, generator: np.random.Generator, batch: Any
    ) -> NDArray[np.float64]:
        tree = self._tree()
        lead = self._lead()
        flat = self.margin_alpha.reshape(-1, len(tree.names), 2)
        total = flat.shape[0]
        per_set = float(count * (2 * tree.cells + len(tree.names)))
        step = _block_size(batch, per_set)
        check_memory("draws", 8.0 * per_set * min(step, max(total, 1)), "ask for fewer draws")
        rngs = dataset_generators(generator, total, bool(lead))
        out = np.empty((total, count))
        if self.prior == "metric_jeffreys" and self.closed_form(metric):
            # the metric's own margin, W ~ Beta(x + 1/2, y + 1/2): what interval() uses
            a, b, agreement = self._beta_parameters(metric)
            pair = np.stack([np.ravel(a), np.ravel(b)], -1)[:, None, :]
            for start in range(0, total, step):  # blocks of data sets bound the memory
                part = slice(start, start + step)
                w = beta_margin_draws(pair[part, :, 0], pair[part, :, 1], count, rngs[part])
                out[part] = (2 * w / (1 + w) if agreement else w)[..., 0]
            return out.reshape(*lead, count)
        evaluate = _metric_function(metric, self.classes)
        for start in range(0, total, step):  # blocks of data sets bound the memory
            part = slice(start, start + step)
            rates = beta_margin_draws(flat[part, :, 0], flat[part, :, 1], count, rngs[part])
            with np.errstate(divide="ignore", invalid="ignore"):
                out[part] = evaluate(tree.probabilities(rates))
        return out.reshape(*lead, count)

    def interval(
        self,
        metric: str = "f1",
        kind: str = "eti",
        level: float = 0.95,
        *,
        draws: int = DRAWS,
        rng: Any = None,
        batch: int | None = None,
    ) -> CredibleInterval:
        r"""Credible interval of a metric, closed form where it has one.

        Parameters
        ----------
        metric : str, default "f1"
            One of :attr:`metrics`: every binary metric for binary cells, the
            ``macro_*`` and ``micro_*`` averages for k x k matrices.
        kind : {"eti", "hdi"}, default "eti"
            Equal-tailed or highest-density interval.
        level : float, default 0.95
            Credible level.
        draws : int, default 4000
            Posterior draws per data set for a metric without a closed form (unused
            otherwise).
        rng : numpy.random.Generator, int or None
            Seed of the draws (see :meth:`draws`).
        batch : int, optional
            Data sets drawn at once (memory; the results do not depend on it).

        Returns
        -------
        CredibleInterval
            With the posterior median as `estimate`; fields of the shape of the leading
            axes of `counts` (floats for one matrix).

        Warns
        -----
        PriorOnlyWarning
            Where no text is relevant to the metric (no reference positives for the
            recall, say): the interval is then the prior's.

        Notes
        -----
        Closed forms (:meth:`closed_form`), with :math:`\alpha` the posterior Dirichlet
        parameters: recall :math:`\mathrm{Beta}(\alpha_{tp}, \alpha_{fn})`, precision
        :math:`\mathrm{Beta}(\alpha_{tp}, \alpha_{fp})`, specificity, NPV and accuracy
        alike, and F1 (= PPA) :math:`2W/(1 + W)` with :math:`W \sim
        \mathrm{Beta}(\alpha_{tp}, \alpha_{fp} + \alpha_{fn})` (PNA with
        :math:`\alpha_{tn}`): increasing in W, so its quantiles are transformed Beta
        quantiles, and its HDI is found on the exact density (the narrowest of 2001
        intervals holding `level`). Under ``"metric_jeffreys"`` each of these metrics
        has the Jeffreys prior Beta(1/2, 1/2) on its own binomial margin, so its
        posterior is Beta(x + 1/2, y + 1/2) of that margin's x and y texts (W of F1:
        x = tp, y = fp + fn; accuracy: x = tp + tn); the others are Dirichlet(1/2)'s.
        Under ``"jeffreys_margins"`` the recall and the specificity keep their closed
        forms (they are margins). Every other metric's interval comes from `draws`
        independent draws (quantiles by NumPy's linear rule; the HDI is the narrowest
        interval holding `level` of them).

        Examples
        --------
        >>> import perfci as pc
        >>> post = pc.bayes.confusion_posterior([40, 6, 9, 345])
        >>> ci = post.interval("f1", level=0.95)
        >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
        0.841 [0.750, 0.908]
        >>> ci = post.interval("kappa", level=0.95, rng=1)  # from draws: fewer digits shown
        >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
        0.81 [0.7, 0.89]
        """
        check_choice("metric", metric, self.metrics)
        check_choice("kind", kind, INTERVAL_KINDS)
        lvl = float(check_confidence_level(level, "level", scalar=True))
        count = check_positive_int("draws", draws)
        generator = check_rng(rng)
        self._warn_prior_only(metric)
        if self.closed_form(metric):
            a, b, agreement = self._beta_parameters(metric)
            low, mid, high = _beta_interval(a, b, agreement, kind, lvl)
        else:
            values = self._draws(metric, count, generator, batch)
            flat = values.reshape(-1, count)
            low, mid, high = (v.reshape(self._lead()) for v in interval_from_draws(flat, kind, lvl))
        return CredibleInterval(metric, kind, lvl, _plain(mid), _plain(low), _plain(high))

    def _warn_prior_only(self, metric: str) -> None:
        from ..metrics import RELEVANT_TEXTS

        if self.margins == BINARY.names:
            relevant = self.counts[..., list(RELEVANT_TEXTS[metric][0])].sum(-1)
            empty = relevant == 0
        else:
            empty = self.counts.sum((-2, -1)) == 0
        if np.any(empty):
            n_empty, size = int(np.sum(empty)), int(np.size(empty))
            where = "" if size == 1 else f" for {n_empty} of {size} data sets"
            why = undefined_reason(metric) if metric in BINARY_METRICS else "there are no texts"
            warnings.warn(
                f"{metric} has no relevant text{where} ({why}): its posterior is its prior "
                f"({self.prior}), and so is the interval.",
                PriorOnlyWarning,
                stacklevel=3,
            )


def confusion_posterior(
    counts: ArrayLike, *, prior: str | float = DEFAULT_PRIOR, multiclass: bool = False
) -> ConfusionPosterior:
    r"""Exact posterior of confusion matrices of independent texts.

    Parameters
    ----------
    counts : array_like
        ``[tp, fp, fn, tn]`` on the last axis, or with ``multiclass=True`` k x k
        matrices on the last two (rows: the reference, columns: the classifier); every
        other leading axis indexes independent data sets. Non-negative numbers (whole
        or not).
    prior : str or float, default "metric_jeffreys"
        ``"metric_jeffreys"`` (the Jeffreys prior Beta(1/2, 1/2) of the metric's own
        binomial margin where it has one, e.g. W = tp / (tp + fp + fn) of F1;
        Dirichlet(1/2) for the metrics from draws), ``"jeffreys"`` (Dirichlet(1/2) on
        the cells), ``"uniform"`` (Dirichlet(1)),
        ``"perks"`` (Dirichlet(1/C) on C cells), ``"jeffreys_margins"`` (Beta(1/2, 1/2)
        on the prevalence, the recall and the specificity; for k classes on every
        stick-breaking margin), or a number lambda >= 0.05, Dirichlet(lambda). The
        default is the prior whose intervals cover on the paper's F1 grid (see the prior
        study in the Bayesian guide).
    multiclass : bool, default False
        Whether `counts` are k x k matrices.

    Returns
    -------
    ConfusionPosterior
        With :meth:`ConfusionPosterior.interval` for every metric and
        :meth:`ConfusionPosterior.draws`.

    Notes
    -----
    The multinomial likelihood of the cells factors into one binomial likelihood per
    binary margin (:mod:`perfci._core.margins`), so the posterior is a product of
    independent Betas, one per margin, for every prior offered here; for a Dirichlet
    prior it is Dirichlet(counts + lambda), the same distribution. A data set with no
    texts has the prior as its posterior.

    Examples
    --------
    >>> import perfci as pc
    >>> post = pc.bayes.confusion_posterior([[40, 6, 9, 345], [4, 0, 1, 45]])
    >>> ci = post.interval("f1", level=0.95)
    >>> ci.low.round(3)
    array([0.75 , 0.542])
    >>> post.alpha[1]
    array([ 4.5,  0.5,  1.5, 45.5])
    """
    if not isinstance(multiclass, bool):
        raise ValueError(f"`multiclass` must be True or False; got {multiclass!r}.")
    cells = check_real_array("counts", counts)
    if multiclass:
        if cells.ndim < 2 or cells.shape[-1] != cells.shape[-2] or cells.shape[-1] < 2:
            raise ValueError(
                "`counts` must be k x k matrices on the last two axes (k >= 2) with "
                f"multiclass=True; got shape {cells.shape}."
            )
    elif cells.ndim == 0 or cells.shape[-1] != 4:
        raise ValueError(
            f"`counts` must have a last axis of length 4 holding [tp, fp, fn, tn]; got "
            f"shape {cells.shape} (pass multiclass=True for k x k matrices)."
        )
    if np.any(cells < 0):
        raise ValueError("`counts` must be non-negative counts.")
    chosen = _check_prior(prior)
    k = cells.shape[-1]
    tree = multiclass_tree(k) if multiclass else BINARY
    flat = cells.reshape(*cells.shape[:-2], k * k) if multiclass else cells
    successes, trials = tree.counts(flat)
    base = _margin_prior(chosen, tree)
    margin_alpha = np.stack([base[:, 0] + successes, base[:, 1] + trials - successes], -1)
    lam = _concentration(chosen, tree.cells)
    alpha = None if lam is None else cells + lam
    return ConfusionPosterior(cells, _prior_label(chosen), alpha, tree.names, margin_alpha)


# -------------------------------------------------------------- nested texts


@dataclass(frozen=True)
class MetricCredibleInterval(ResultMixin):
    """A credible interval of a metric of texts nested in persons (hierarchical margins).

    Attributes
    ----------
    metric, estimand : str
        The metric, and what the interval is about (``"population"`` or
        ``"sampled_persons"``).
    kind : str
        ``"eti"`` or ``"hdi"``.
    level : float
        Credible level.
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

    _exclude: ClassVar[tuple[str, ...]] = ("fallback",)

    metric: str
    estimand: str
    kind: str
    level: float
    estimate: Any
    low: Any
    high: Any
    persons: Any
    flagged: Any
    margins: tuple[str, ...]
    fallback: NDArray[np.bool_] = field(repr=False)


@dataclass(frozen=True)
class PairedCredibleInterval(ResultMixin):
    """The posterior of a paired difference metric(A) - metric(B).

    Attributes
    ----------
    metric : str
        The metric.
    estimand : str
        ``"texts"`` (independent texts: the population of texts), ``"population"`` or
        ``"sampled_persons"`` (nested texts).
    kind, level
        Interval kind and credible level.
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

    metric: str
    estimand: str
    kind: str
    level: float
    estimate: Any
    low: Any
    high: Any
    prob_a_better: Any
    persons: Any
    flagged: Any
    prior: str


def _check_nested_cells(cells: Any, metrics: Sequence[str], name: str = "cells") -> NDArray[Any]:
    """Per-person cells ``(*batch, persons, 4)``, or ``(..., persons, k, k)`` for averages."""
    arr = check_real_array(name, cells)
    averaged = [m for m in metrics if m not in BINARY_METRICS]
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


def _check_shape(value: Any) -> tuple[int, int]:
    from .fitting import _check_shape as check

    return check("grid_shape", value)


@dataclass(frozen=True)
class _NestedDraws:
    """Draws of several metrics of K data sets: sampled persons' and population's."""

    sampled: dict[str, NDArray[np.float64]]
    population: dict[str, NDArray[np.float64]]
    persons: NDArray[np.int64]
    fallback: NDArray[np.bool_]
    mu: NDArray[np.float64] | None = None
    kappa: NDArray[np.float64] | None = None


def _nested_draws(
    tree: MarginTree,
    cells: NDArray[np.int64],
    functions: dict[str, tuple[Callable[[NDArray[np.float64]], Any], tuple[float, float]]],
    prior: str,
    shape: tuple[int, int],
    count: int,
    rngs: Sequence[np.random.Generator],
    keep_margins: bool = False,
    sizes: NDArray[np.float64] | None = None,
    population_persons: NDArray[np.float64] | None = None,
) -> _NestedDraws:
    """Turn the hierarchical margins' draws of K data sets into every metric's estimands.

    Data set r's generator is consumed by :func:`perfci._core.margins.draw_margin_rates`,
    then by ``standard_t(m - 1, draws)`` (m its persons, when m >= 2): the t variates of
    the population step come after everything else. `sizes` (K, persons) are the
    persons' population sizes (default their texts), `population_persons` (K,) the
    persons of each data set's population (default infinite).
    """
    sets = cells.shape[0]
    posteriors = margin_posteriors(tree, cells, prior, shape)
    persons = posteriors.present.sum(-1)
    sampled = {name: np.full((sets, count), np.nan) for name in functions}
    population = {name: np.full((sets, count), np.nan) for name in functions}
    margins = len(tree.names)
    mu = np.full((sets, count, margins), np.nan) if keep_margins else None
    kappa = np.full((sets, count, margins), np.nan) if keep_margins else None
    for r in range(sets):  # one generator per data set; vectorized over draws and persons
        m = int(persons[r])
        if m == 0:
            continue
        rates, margin_mu, margin_kappa = draw_margin_rates(posteriors, r, count, rngs[r])
        if mu is not None and kappa is not None:
            mu[r], kappa[r] = margin_mu, margin_kappa
        probabilities = tree.probabilities(rates)  # (draws, m, cells)
        keep = posteriors.present[r]
        weights = (cells[r, keep].sum(-1) if sizes is None else sizes[r, keep]).astype(float)
        total = None if population_persons is None else float(population_persons[r])
        if m == 1:
            for name, (function, _) in functions.items():
                sampled[name][r] = function(probabilities[:, 0])
            continue
        t = rngs[r].standard_t(m - 1, size=count)
        for name, (function, bounds) in functions.items():
            sampled[name][r], population[name][r] = population_metric_draws(
                probabilities, weights, function, t, population_persons=total, bounds=bounds
            )
    return _NestedDraws(sampled, population, persons, posteriors.fallback, mu, kappa)


def _grid_step(batch: Any, shape: tuple[int, int], tree: MarginTree) -> int:
    """Return the data sets per block: `batch`, or as many as :data:`_GRID_BLOCK` allows."""
    if batch is not None:
        return check_positive_int("batch", batch)
    return max(1, _GRID_BLOCK // (shape[0] * shape[1] * len(tree.names)))


def _check_draw_memory(count: int, persons: int, tree: MarginTree) -> None:
    """Refuse draws whose one data set's arrays (rates, cells, deviations) would not fit."""
    check_memory(
        "draws",
        8.0 * count * max(persons, 1) * (len(tree.names) + 3 * tree.cells + 2),
        f"ask for fewer draws than {count}",
    )


def _blocks(
    args: _NestedArgs,
    functions: dict[str, tuple[Callable[[NDArray[np.float64]], Any], tuple[float, float]]],
) -> _NestedDraws:
    """:func:`_nested_draws` of every data set, ``args.step`` data sets' grids at a time."""
    total, count = args.cells.shape[0], args.draws
    sampled = {name: np.full((total, count), np.nan) for name in functions}
    population = {name: np.full((total, count), np.nan) for name in functions}
    persons = np.zeros(total, dtype=np.int64)
    fallback = np.zeros((total, len(args.tree.names)), dtype=bool)
    for start in range(0, total, args.step):  # blocks of data sets bound the grids' memory
        part = slice(start, start + args.step)
        drawn = _nested_draws(
            args.tree,
            args.cells[part],
            functions,
            args.prior,
            args.shape,
            count,
            args.rngs[part],
            sizes=None if args.sizes is None else args.sizes[part],
            population_persons=(
                None if args.population_persons is None else args.population_persons[part]
            ),
        )
        persons[part], fallback[part] = drawn.persons, drawn.fallback
        for name in functions:
            sampled[name][part] = drawn.sampled[name]
            population[name][part] = drawn.population[name]
    return _NestedDraws(sampled, population, persons, fallback)


@dataclass(frozen=True)
class _NestedArgs:
    """The validated arguments of the nested functions, data sets flattened."""

    tree: MarginTree
    cells: NDArray[np.int64]
    lead: tuple[int, ...]
    level: float
    kind: str
    prior: str
    draws: int
    shape: tuple[int, int]
    rngs: list[np.random.Generator]
    step: int
    sizes: NDArray[np.float64] | None
    population_persons: NDArray[np.float64] | None


def _nested_iv(
    cells: NDArray[np.int64],
    tree: MarginTree,
    cell_dims: int,
    level: Any,
    kind: Any,
    prior: Any,
    draws: Any,
    grid_shape: Any,
    rng: Any,
    batch: Any,
    population_sizes: Any,
    population_persons: Any,
) -> _NestedArgs:
    """Validate the shared arguments of the nested functions once.

    `cells` is a checked whole-number array with `cell_dims` axes of cells after the
    persons' axis.
    """
    from .fitting import _check_population

    check_choice("kind", kind, INTERVAL_KINDS)
    lvl = float(check_confidence_level(level, "level", scalar=True))
    s_prior(prior)
    count = check_positive_int("draws", draws)
    shape = _check_shape(grid_shape)
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
    weights, total = _check_population(sizes, total, flat.sum(-1))
    _check_draw_memory(count, persons, tree)
    step = _grid_step(batch, shape, tree)
    # a block's grids: a few tables of its cells for every margin (as grid_intervals)
    check_memory(
        "grid_shape",
        48.0 * shape[0] * shape[1] * len(tree.names) * min(step, max(flat.shape[0], 1)),
        "use fewer grid cells",
    )
    rngs = dataset_generators(generator, flat.shape[0], bool(lead))
    return _NestedArgs(tree, flat, lead, lvl, kind, prior, count, shape, rngs, step, weights, total)


def _draw_interval(
    values: NDArray[np.float64], kind: str, level: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Low, median and high of draws (K, draws); NaN for a data set with undefined draws."""
    total = values.shape[0]
    low, mid, high = np.full(total, np.nan), np.full(total, np.nan), np.full(total, np.nan)
    defined = ~np.isnan(values).any(-1)
    if defined.any():
        low[defined], mid[defined], high[defined] = interval_from_draws(
            values[defined], kind, level
        )
    return low, mid, high


def _nested_intervals(
    cells: Any,
    metrics: Sequence[str],
    estimands: Sequence[str],
    level: Any,
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
    arr = _check_nested_cells(cells, metrics)
    averaged = metrics[0] not in BINARY_METRICS
    classes = arr.shape[-1]
    args = _nested_iv(
        arr,
        multiclass_tree(classes) if averaged else BINARY,
        2 if averaged else 1,
        level,
        kind,
        prior,
        draws,
        grid_shape,
        rng,
        batch,
        population_sizes,
        population_persons,
    )
    functions = {
        name: (_metric_function(name, classes), _bounds(name.split("_", 1)[-1])) for name in metrics
    }
    drawn = _blocks(args, functions)
    ends = {}
    for name in metrics:
        for estimand in estimands:
            values = (drawn.population if estimand == "population" else drawn.sampled)[name]
            ends[name, estimand] = _draw_interval(values, args.kind, args.level)
    _warn_nested(drawn.persons, drawn.fallback, args.tree, estimands, ", ".join(metrics))
    for (name, estimand), (low, _, _) in ends.items():
        _warn_undefined_draws(name, estimand, low, drawn.persons)
    flagged = drawn.fallback.any(-1)
    lead = args.lead
    out = {}
    for (name, estimand), (low, mid, high) in ends.items():
        out[name, estimand] = MetricCredibleInterval(
            name,
            estimand,
            args.kind,
            args.level,
            _plain(mid.reshape(lead)),
            _plain(low.reshape(lead)),
            _plain(high.reshape(lead)),
            _plain(drawn.persons.reshape(lead)),
            _plain(flagged.reshape(lead)),
            args.tree.names,
            drawn.fallback.reshape(*lead, len(args.tree.names)),
        )
    return out


def _warn_undefined_draws(
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


def _warn_nested(
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


def nested_metric_intervals(
    cells: ArrayLike,
    metric: str,
    *,
    estimand: str = "population",
    prior: str = "pareto",
    level: float = 0.95,
    kind: str = "eti",
    draws: int = DRAWS,
    grid_shape: tuple[int, int] = MARGIN_GRID_SHAPE,
    rng: Any = None,
    batch: int | None = None,
    population_sizes: ArrayLike | None = None,
    population_persons: float | ArrayLike | None = None,
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
    level : float, default 0.95
        Credible level.
    kind : {"eti", "hdi"}, default "eti"
        Interval kind, from the draws.
    draws : int, default 4000
        Independent posterior draws per data set.
    grid_shape : tuple of int, default (200, 50)
        Fine grid of each margin's posterior of (mu, s) (:data:`MARGIN_GRID_SHAPE`).
    rng : numpy.random.Generator, int or None
        Seed. A single data set uses ``np.random.default_rng(rng)``; data set k of a
        batch (leading axes flattened in C order) ``np.random.default_rng(rng).spawn(K)[k]``;
        the draws do not depend on `metric` or `estimand`.
    batch : int, optional
        Data sets whose grids are computed at once (memory; the results do not depend on
        it).
    population_sizes : array_like, optional
        Each person's texts in the population (labelled or not), shape ``(*batch,
        persons)``, or numbers proportional to them: the weights of the population
        estimand (default: their labelled texts), as in :func:`perfci.bayes.fit`.
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
    registry.CONFUSION_ESTIMAND.check(estimand, "estimand")
    registry.METRIC.check(metric, "metric")
    result = _nested_intervals(
        cells,
        [metric],
        [estimand],
        level,
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


def shared_nested_metric_intervals(
    cells: ArrayLike,
    metrics: Sequence[str],
    estimands: Sequence[str] = ("population",),
    *,
    prior: str = "pareto",
    level: float = 0.95,
    kind: str = "eti",
    draws: int = DRAWS,
    grid_shape: tuple[int, int] = MARGIN_GRID_SHAPE,
    rng: Any = None,
    batch: int | None = None,
    population_sizes: ArrayLike | None = None,
    population_persons: float | ArrayLike | None = None,
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
    prior, level, kind, draws, grid_shape, rng, batch, population_sizes, population_persons
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
        level,
        kind,
        prior,
        draws,
        grid_shape,
        rng,
        batch,
        population_sizes,
        population_persons,
    )


# ------------------------------------------------------------ paired comparison


def _paired_difference(metric: str) -> Callable[[NDArray[np.float64]], Any]:
    """metric(A) - metric(B) of joint cell probabilities (..., 8)."""
    from .._core.joint import TO_A, TO_B

    return lambda c: metric_values(c @ TO_A, metric) - metric_values(c @ TO_B, metric)


def compare_counts(
    joint: ArrayLike,
    metric: str,
    *,
    nested: bool = False,
    estimand: str = "population",
    prior: str | float | None = None,
    level: float = 0.95,
    kind: str = "eti",
    draws: int = DRAWS,
    grid_shape: tuple[int, int] = MARGIN_GRID_SHAPE,
    rng: Any = None,
    batch: int | None = None,
    population_sizes: ArrayLike | None = None,
    population_persons: float | ArrayLike | None = None,
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
        :data:`CONFUSION_PRIORS` or a Dirichlet concentration (default
        :data:`DEFAULT_PRIOR`; ``"perks"`` is Dirichlet(1/8), ``"jeffreys_margins"``
        Beta(1/2, 1/2) on each of the seven margins). Nested texts: the prior of every
        margin's concentration, ``"pareto"`` (default) or ``"bda3"``.
    level, kind, draws, grid_shape, rng, batch
        As in :func:`nested_metric_intervals` (`grid_shape` for nested texts only).
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
    bound = difference_bound(metric)
    if nested:
        chosen = "pareto" if prior is None else prior
        if not isinstance(chosen, str):
            raise ValueError(
                f"`prior` must be one of {sorted(registry.PRIOR.names)} for nested texts; got "
                f"{prior!r}."
            )
        args = _nested_iv(
            arr.astype(np.int64),
            PAIRED,
            1,
            level,
            kind,
            chosen,
            draws,
            grid_shape,
            rng,
            batch,
            population_sizes,
            population_persons,
        )
        drawn = _blocks(args, {metric: (difference, (-bound, bound))})
        values = (drawn.population if estimand == "population" else drawn.sampled)[metric]
        _warn_nested(drawn.persons, drawn.fallback, PAIRED, [estimand], f"{metric} difference")
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
        lvl = float(check_confidence_level(level, "level", scalar=True))
        count = check_positive_int("draws", draws)
        generator = check_rng(rng)
        checked = _check_prior(DEFAULT_PRIOR if prior is None else prior)
        lead = arr.shape[:-1]
        flat = arr.reshape(-1, 8)
        total = flat.shape[0]
        rngs = dataset_generators(generator, total, bool(lead))
        successes, trials = PAIRED.counts(flat)
        base = _margin_prior(checked, PAIRED)
        a, b = base[:, 0] + successes, base[:, 1] + trials - successes
        step = _block_size(batch, float(count * (2 * 8 + 7)))
        values = np.empty((total, count))
        for start in range(0, total, step):  # blocks of data sets bound the memory
            part = slice(start, start + step)
            rates = beta_margin_draws(a[part], b[part], count, rngs[part])
            values[part] = difference(PAIRED.probabilities(rates))
        label, flagged, who, estimand = _prior_label(checked), np.zeros(total, bool), None, "texts"
    low, mid, high = _draw_interval(values, kind, lvl)
    if who is not None:
        _warn_undefined_draws(metric, estimand, low, who)
    # ties (a difference that underflows to exactly 0) count half, as in an AUC
    better = np.where(np.isnan(mid), np.nan, (values > 0).mean(-1) + (values == 0).mean(-1) / 2)
    return PairedCredibleInterval(
        metric,
        estimand,
        kind,
        lvl,
        _plain(mid.reshape(lead)),
        _plain(low.reshape(lead)),
        _plain(high.reshape(lead)),
        _plain(better.reshape(lead)),
        None if who is None else _plain(who.reshape(lead)),
        _plain(flagged.reshape(lead)),
        label,
    )


def compare(
    y_true: ArrayLike,
    pred_a: ArrayLike,
    pred_b: ArrayLike,
    metric: str,
    groups: ArrayLike | None = None,
    *,
    positive: Any = None,
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
    **options
        Passed to :func:`compare_counts` (estimand, prior, level, kind, draws,
        grid_shape, rng, batch).

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

    registry.COMPARE_METRIC.check(metric, "metric")
    registry.BINARY_METRIC.check(metric, "metric")
    cells, nested, batch_shape = joint_confusion(y_true, pred_a, pred_b, groups, positive)
    joint = cells.reshape(*batch_shape, *cells.shape[1:])
    return compare_counts(joint, metric, nested=nested, **options)
