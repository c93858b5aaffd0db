r"""The exact posterior of confusion matrices of independent texts, and every metric's interval.

The cells of a confusion matrix (or of a k x k matrix) of independent texts are
multinomial; with a conjugate prior (:data:`CONFUSION_PRIORS`) their posterior is exact
(:func:`confusion_posterior`, a :class:`ConfusionPosterior`; the margins are those of
:mod:`perfci._core.margins`). A metric that is a monotone function of one Beta-distributed
quantity (recall, precision, specificity, NPV, accuracy, F1, PPA, PNA under a Dirichlet
prior) gets closed-form quantiles; the others (kappa, MCC, balanced accuracy, macro
averages) come from independent posterior draws. The priors, and the metrics of cell
probabilities, are shared with the nested and paired models (:mod:`~perfci.bayes.nested`,
:mod:`~perfci.bayes.paired`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core import registry
from .._core.deprecation import DEFAULT_LEVEL, UNSET, hide_level, resolve_level
from .._core.grid import interval_from_draws
from .._core.margins import BINARY, MarginTree, beta_margin_draws, multiclass_tree
from .._core.results import ResultMixin
from .._core.validation import (
    check_choice,
    check_confidence_level,
    check_counts_array,
    check_memory,
    check_positive_int,
    check_rng,
    dataset_generators,
)
from ..metrics import (
    BINARY_METRICS,
    METRICS,
    RELEVANT_TEXTS,
    metric_values,
    undefined_reason,
)
from .grid import GRID_DRAWS
from .intervals import INTERVAL_KINDS, CredibleInterval, plain

__all__ = [
    "CONFUSION_PRIORS",
    "DEFAULT_PRIOR",
    "DRAWS",
    "MIN_CONCENTRATION",
    "ConfusionPosterior",
    "PriorOnlyWarning",
    "block_size",
    "check_prior",
    "confusion_posterior",
    "margin_prior",
    "metric_bounds",
    "metric_function",
    "prior_label",
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
_ACCURACY_LIKE = (
    "micro_recall",
    "micro_precision",
    "micro_f1",
    "micro_ppa",
    "multiclass_accuracy",
)


class PriorOnlyWarning(UserWarning):
    """The data hold no text relevant to a metric: its posterior is its prior."""


# ------------------------------------------------------------------------- priors


def check_prior(prior: Any) -> str | float:
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


def margin_prior(prior: str | float, tree: MarginTree) -> NDArray[np.float64]:
    """Beta prior parameters (margins, 2) of each margin of `tree` under `prior`.

    A symmetric Dirichlet(lambda) on the cells is Beta(lambda L, lambda R) on a margin
    with L cells on its left and R on its right; a prior of margins is Beta(1/2, 1/2).
    """
    lam = _concentration(prior, tree.cells)
    if lam is None:
        return np.full((len(tree.names), 2), 0.5)
    return lam * tree.sides()


def prior_label(prior: str | float) -> str:
    """Return a prior's name, ``"dirichlet(<lambda>)"`` for a concentration."""
    return prior if isinstance(prior, str) else f"dirichlet({prior:g})"


# ------------------------------------------------------------------------ helpers


def block_size(batch: Any, per_set: float) -> int:
    """Return the data sets per block: `batch`, or as many as :data:`_DRAW_BLOCK` allows."""
    if batch is not None:
        return check_positive_int("batch", batch)
    return max(1, int(_DRAW_BLOCK // max(per_set, 1.0)))


def _multiclass_values(cells: NDArray[np.float64], metric: str, classes: int) -> Any:
    """Return a macro or micro metric of flat k x k cell probabilities (..., k * k)."""
    from ..counting import one_vs_rest

    matrix = cells.reshape(*cells.shape[:-1], classes, classes)
    return metric_values(one_vs_rest(matrix), metric)


def metric_function(metric: str, classes: int) -> Callable[[NDArray[np.float64]], Any]:
    """Return the metric of flat cell probabilities, vectorized over leading axes."""
    if metric in BINARY_METRICS:
        return lambda c: metric_values(c, metric)
    return lambda c: _multiclass_values(c, metric, classes)


def metric_bounds(metric: str) -> tuple[float, float]:
    """Return the range of a metric: [-1, 1] for kappa and MCC, else [0, 1]."""
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
            ``perfci.batch_generators(rng, K)[k]``. Each data set draws its margins
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
        step = block_size(batch, per_set)
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
        evaluate = metric_function(metric, self.classes)
        for start in range(0, total, step):  # blocks of data sets bound the memory
            part = slice(start, start + step)
            rates = beta_margin_draws(flat[part, :, 0], flat[part, :, 1], count, rngs[part])
            with np.errstate(divide="ignore", invalid="ignore"):
                out[part] = evaluate(tree.probabilities(rates))
        return out.reshape(*lead, count)

    @hide_level
    def interval(
        self,
        metric: str = "f1",
        kind: str = "eti",
        confidence_level: float = DEFAULT_LEVEL,
        *,
        draws: int = DRAWS,
        rng: Any = None,
        batch: int | None = None,
        level: Any = UNSET,
    ) -> CredibleInterval:
        r"""Credible interval of a metric, closed form where it has one.

        Parameters
        ----------
        metric : str, default "f1"
            One of :attr:`metrics`: every binary metric for binary cells, the
            ``macro_*`` and ``micro_*`` averages for k x k matrices.
        kind : {"eti", "hdi"}, default "eti"
            Equal-tailed or highest-density interval.
        confidence_level : float, default 0.95
            Credible level (``level``, its former name, is deprecated).
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
        intervals holding `confidence_level`). Under ``"metric_jeffreys"`` each of these
        metrics has the Jeffreys prior Beta(1/2, 1/2) on its own binomial margin, so its
        posterior is Beta(x + 1/2, y + 1/2) of that margin's x and y texts (W of F1:
        x = tp, y = fp + fn; accuracy: x = tp + tn); the others are Dirichlet(1/2)'s.
        Under ``"jeffreys_margins"`` the recall and the specificity keep their closed
        forms (they are margins). Every other metric's interval comes from `draws`
        independent draws (quantiles by NumPy's linear rule; the HDI is the narrowest
        interval holding `confidence_level` of them).

        Examples
        --------
        >>> import perfci as pc
        >>> post = pc.bayes.confusion_posterior([40, 6, 9, 345])
        >>> ci = post.interval("f1", confidence_level=0.95)
        >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
        0.841 [0.750, 0.908]
        >>> ci = post.interval("kappa", confidence_level=0.95, rng=1)  # drawn: fewer digits
        >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
        0.81 [0.7, 0.89]
        """
        confidence_level = resolve_level(confidence_level, level)
        check_choice("metric", metric, self.metrics)
        check_choice("kind", kind, INTERVAL_KINDS)
        lvl = float(check_confidence_level(confidence_level, "confidence_level", scalar=True))
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
        return CredibleInterval(metric, kind, lvl, plain(mid), plain(low), plain(high))

    def _warn_prior_only(self, metric: str) -> None:
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
    >>> ci = post.interval("f1", confidence_level=0.95)
    >>> ci.low.round(3)
    array([0.75 , 0.542])
    >>> post.alpha[1]
    array([ 4.5,  0.5,  1.5, 45.5])
    """
    if not isinstance(multiclass, bool):
        raise ValueError(f"`multiclass` must be True or False; got {multiclass!r}.")
    cells = check_counts_array("counts", counts)
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
    chosen = check_prior(prior)
    k = cells.shape[-1]
    tree = multiclass_tree(k) if multiclass else BINARY
    flat = cells.reshape(*cells.shape[:-2], k * k) if multiclass else cells
    successes, trials = tree.counts(flat)
    base = margin_prior(chosen, tree)
    margin_alpha = np.stack([base[:, 0] + successes, base[:, 1] + trials - successes], -1)
    lam = _concentration(chosen, tree.cells)
    alpha = None if lam is None else cells + lam
    return ConfusionPosterior(cells, prior_label(chosen), alpha, tree.names, margin_alpha)
