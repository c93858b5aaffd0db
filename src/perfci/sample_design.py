r"""Weighted and stratified validation samples: design-based estimates and intervals.

A validation sample is rarely a simple random sample of the corpus. With a rare
construct researchers code, say, 300 texts the classifier calls positive and 300 it calls
negative: the sample is stratified by the prediction, and a predicted positive stands
for fewer corpus texts than a predicted negative. Each text then carries a weight
:math:`w_i`, the inverse of its inclusion probability (:math:`N_h / n_h` for a text of
stratum h drawn at random from its stratum's :math:`N_h` corpus texts), and every
confusion-matrix metric is a function of the weighted cell totals

.. math:: \hat T_c = \sum_i w_i\,[\text{text } i \text{ is in cell } c],
   \qquad c \in \{tp, fp, fn, tn\},

estimated by the same function of the sample's weighted totals: recall is
:math:`\hat T_{tp} / (\hat T_{tp} + \hat T_{fn})`, a ratio of weighted totals, as
:func:`survey::svyratio` in R estimates it.

**Variance** (Taylor linearization, as R's ``survey`` computes it): with :math:`g` the
metric's gradient at :math:`\hat T` (:func:`perfci.metrics.metric_gradient`), each
primary sampling unit j (a text, or with `groups` a person's texts within a stratum)
has the linearized value :math:`z_j = g \cdot \hat T_j` of its own weighted cells, and

.. math:: \widehat{\mathrm{Var}} = \sum_h (1 - f_h)\,\frac{n_h}{n_h - 1}
   \sum_{j \in h} (z_j - \bar z_h)^2,

:math:`n_h` the units sampled in stratum h and :math:`f_h = n_h / N_h` its sampling
fraction (0 without `stratum_sizes`, or with `groups`: persons are then drawn with
replacement, as in ``survey`` without ``fpc``). The design's degrees of freedom are the
units with a relevant text less the strata with one, as ``degf()`` counts them on the
metric's domain.

**Intervals** of metrics in [0, 1], as ``svyciprop`` forms them:

- ``"logit"``: :math:`\operatorname{expit}(\operatorname{logit}\hat p \pm t_{df}\,
  \mathrm{se} / (\hat p (1 - \hat p)))`, the Wald interval on the logit scale;
- ``"beta"`` (Korn and Graubard 1998): the Clopper-Pearson interval of
  :math:`(\hat p\, n^*, n^*)` with the effective size :math:`n^* = \hat p (1 - \hat p)
  / \mathrm{se}^2 \cdot (t_{n - 1} / t_{df})^2`, n the relevant texts;
- ``"wald"``: :math:`\hat p \pm t_{df}\,\mathrm{se}` (kappa and MCC, on [-1, 1]).

and two that regularize the rare cells these miss:

- ``"regularized_logit"``: the logit interval with the variance of the cells after half
  a pseudo text in each cell a stratum can hold (scaled by :math:`1 - f_h`);
- ``"poststratified"``: the interval of the corpus metric's posterior under a
  Dirichlet-multinomial model of each stratum, poststratified by the stratum sizes
  (:func:`perfci.bayes.stratified_posterior`), with the bounding prior
  (:data:`perfci.policy.WEIGHTED_PRIOR`): each end from the posterior whose prior puts
  one text in each stratum's cell that moves the metric toward it, Clopper-Pearson's
  construction carried to strata. It needs texts as the units with equal weights
  within each stratum, and is the recommended interval there: in atlas-stratified it
  covers at least 0.94 in every cell where ``logit`` and ``beta`` fall to 0.18 for
  recall (a coded stratum of predicted negatives with a few false negatives).

The interval always holds the design-based estimate.

Degenerate cases (each a written policy with a test):

- An estimate of 0 or 1, or a variance of 0 (every unit alike): the design says nothing
  about its own variance, and ``svyciprop`` returns NaN. Both ``logit`` and ``beta``
  give the Korn-Graubard interval with :math:`n^*` the relevant texts (no design effect
  assumed) and say so in ``note``.
- No relevant text: the metric is undefined; NaN with an
  :class:`~perfci.UndefinedMetricWarning`.
- No degrees of freedom on the metric's texts (df < 1: the units holding a relevant
  text are no more than the strata holding them, e.g. one in each of two strata): the
  estimate, a NaN interval and a warning.
- A stratum with a single unit: no variance can be estimated within it: a
  ``ValueError`` naming the stratum, as ``survey`` refuses it (merge it with a
  neighbouring stratum).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np
from scipy import special

from ._core import registry
from ._core.labels import check_aligned, factorize_sorted, label_array, plain
from ._core.recommended import (
    RECOMMENDED,
    WEIGHTED_FALLBACK_METHOD,
    WEIGHTED_METHOD,
    WEIGHTED_PRIOR,
    WEIGHTED_SIGNED_METHOD,
)
from ._core.results import IntervalResult, sources_of
from ._core.strata import possible_cells
from ._core.validation import (
    MAX_COUNT,
    UndefinedMetricWarning,
    check_confidence_level,
    check_real_array,
)
from .bayes.stratified import PREVALENCE, corpus_metric, stratified_posterior
from .counting import normalize_labels
from .metrics import RELEVANT_TEXTS

__all__ = [
    "DESIGN_METHODS",
    "DesignCells",
    "WeightedCI",
    "design_cells",
    "linearized_values",
    "poststratified_cells",
    "relevant_cells",
    "units_design",
    "with_pseudo_texts",
    "weighted_ci",
]

#: Methods of :func:`weighted_ci` (:data:`perfci._core.registry.WEIGHTED_METHOD`, but
#: "recommended", which resolves as :func:`weighted_ci` says).
DESIGN_METHODS = tuple(name for name in registry.WEIGHTED_METHOD.names if name != RECOMMENDED)
# Metrics on [-1, 1]: only the Wald interval applies.
_SIGNED = frozenset({"kappa", "mcc"})


@dataclass(frozen=True)
class DesignCells:
    """The sufficient statistics of a weighted, stratified (clustered) sample.

    Arrays may have leading axes, one per batch of independent data sets (the shapes
    rule): units on the axis before the cells; a data set with fewer units is padded with
    units that are not `present`.

    Attributes
    ----------
    weighted : numpy.ndarray, shape (..., units, 4)
        Each sampling unit's weighted cells ``[tp, fp, fn, tn]``: a text's weight in its
        cell, or the sum over a person's texts in a stratum.
    counts : numpy.ndarray, shape (..., units, 4)
        The same texts counted without weights.
    stratum : numpy.ndarray of int, shape (..., units)
        Each unit's stratum (an index into `strata`).
    present : numpy.ndarray of bool, shape (..., units)
        Whether a unit was sampled (False: padding).
    strata : numpy.ndarray
        The stratum labels, sorted.
    fraction : numpy.ndarray, shape (..., strata)
        Each stratum's sampling fraction :math:`f_h = n_h / N_h` (0 when not known).
    stratum_sizes : numpy.ndarray, shape (strata,)
        :math:`N_h`, the corpus texts of each stratum (NaN when not given).
    clustered : bool
        Whether a unit is a person's texts within a stratum (`groups` given).
    person : numpy.ndarray of int, shape (..., units)
        Each unit's person (an index into the sorted person ids; -1 without `groups`).
    """

    weighted: np.ndarray
    counts: np.ndarray
    stratum: np.ndarray
    present: np.ndarray
    strata: np.ndarray
    fraction: np.ndarray
    stratum_sizes: np.ndarray
    clustered: bool
    person: np.ndarray

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The leading axes: one per batch of data sets (``()`` for one sample)."""
        return self.present.shape[:-1]

    def per_stratum(self, values: np.ndarray) -> np.ndarray:
        """Sum unit values ``(..., units)`` over each data set's strata: ``(..., strata)``."""
        k = self.strata.size
        flat = self.stratum.reshape(-1, self.stratum.shape[-1])
        rows = np.arange(flat.shape[0])[:, None] * k + flat
        summed = np.bincount(
            rows.ravel(), weights=np.asarray(values, float).ravel(), minlength=rows.shape[0] * k
        )
        return summed.reshape(*self.batch_shape, k)

    @property
    def units_per_stratum(self) -> np.ndarray:
        """Units sampled in each stratum, :math:`n_h`, shape ``(..., strata)``."""
        return self.per_stratum(self.present)

    def total_variance(self, z: np.ndarray) -> np.ndarray:
        r"""Return the design variance of the total of unit values ``(..., units)``.

        :math:`\sum_h (1 - f_h)\, n_h / (n_h - 1) \sum_{j \in h} (z_j - \bar z_h)^2`
        (R survey's with-replacement or fpc estimator); units not `present` count 0.
        """
        z = np.where(self.present, z, 0.0)
        n_h = self.units_per_stratum
        mean = self.per_stratum(z) / np.maximum(n_h, 1)
        at = np.take_along_axis(mean, self.stratum, axis=-1)
        squares = self.per_stratum(np.where(self.present, (z - at) ** 2, 0.0))
        scale = np.where(n_h > 1, n_h / np.maximum(n_h - 1, 1), 0.0)
        return np.sum((1 - self.fraction) * scale * squares, axis=-1)

    @property
    def description(self) -> str:
        """The design in words, for results, reports and methods paragraphs."""
        k = self.strata.size
        parts = [f"{k} strata" if k > 1 else "one stratum"]
        if self.clustered:
            parts.append("persons as clusters within strata")
        parts.append(
            "finite population correction from the stratum sizes"
            if np.any(self.fraction > 0)
            else "no finite population correction"
        )
        return ", ".join(parts)


def _per_text(name: str, values: Any, n: int) -> np.ndarray:
    arr = label_array(f"`{name}`", values, ndim=1)
    if arr.shape[0] != n:
        raise ValueError(f"`{name}` must hold one value per text ({n}); got {arr.shape[0]}.")
    return arr


#: The smallest mean of `weights` computed with: smaller ones would overflow the
#: metrics' gradients. Weights are inverse inclusion probabilities, at least 1 as such.
MIN_MEAN_WEIGHT = 1e-200


def _check_weights(weights: Any, n: int) -> np.ndarray:
    arr = check_real_array("weights", weights)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(
            f"`weights` must hold one number per text ({n}): the inverse of each text's "
            f"inclusion probability; got shape {arr.shape}."
        )
    bad = ~np.isfinite(arr) | (arr <= 0)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"`weights` must be positive finite numbers (inverse inclusion probabilities); "
            f"{int(bad.sum())} of {n} are not, the first at position {first} ({arr[first]!r})."
        )
    if arr.sum() > MAX_COUNT:
        raise ValueError(
            f"`weights` must add up to at most {MAX_COUNT:.0e} corpus texts (they are inverse "
            f"inclusion probabilities); got {arr.sum():.3g}."
        )
    if arr.size and arr.mean() < MIN_MEAN_WEIGHT:
        # a metric's gradient is about 1 / (total weight): tinier weights overflow it
        raise ValueError(
            f"`weights` must have a mean of at least {MIN_MEAN_WEIGHT:.0e} (they are inverse "
            f"inclusion probabilities); got {arr.mean():.3g}: scale them up, e.g. divide "
            "them by their mean."
        )
    return arr


def _stratum_sizes(stratum_sizes: Any, strata: np.ndarray, code: np.ndarray) -> np.ndarray:
    """:math:`N_h` per stratum from a mapping {label: size}, a scalar or one per text."""
    if isinstance(stratum_sizes, dict) or hasattr(stratum_sizes, "items"):
        mapping = dict(stratum_sizes.items())
        missing = [plain(s) for s in strata.tolist() if s not in mapping]
        if missing:
            raise ValueError(
                f"`stratum_sizes` has no size for the strata {missing!r}; give one per "
                "stratum (the corpus texts in it)."
            )
        sizes = np.array([mapping[s] for s in strata.tolist()], dtype=float)
    else:
        arr = check_real_array("stratum_sizes", stratum_sizes)
        if arr.ndim == 0:
            if strata.size != 1:
                raise ValueError(
                    "`stratum_sizes` must give one size per stratum (a mapping from "
                    "stratum to corpus texts, or one value per text); got one number "
                    f"for {strata.size} strata."
                )
            sizes = arr.reshape(1)
        elif arr.ndim == 1 and arr.shape[0] == code.shape[0]:
            sizes = np.full(strata.size, np.nan)
            sizes[code] = arr
            if np.any(arr != sizes[code]):
                raise ValueError(
                    "`stratum_sizes` given per text must be the same for every text of "
                    "a stratum (its corpus texts)."
                )
        else:
            raise ValueError(
                "`stratum_sizes` must be a mapping from stratum to corpus texts, one "
                f"number per text, or one number without strata; got shape {arr.shape}."
            )
    if np.any(~np.isfinite(sizes)) or np.any(sizes <= 0):
        raise ValueError("`stratum_sizes` must be positive finite numbers of corpus texts.")
    return sizes


def design_cells(
    y_true: Any,
    y_pred: Any,
    *,
    positive: Any = None,
    weights: Any = None,
    strata: Any = None,
    stratum_sizes: Any = None,
    groups: Any = None,
    domain: Any = None,
) -> DesignCells:
    """Count a weighted, stratified sample's sampling units and their cells.

    Parameters
    ----------
    y_true, y_pred : array_like
        Reference and classifier labels, one per text.
    positive : object, optional
        The positive label (as in :func:`perfci.confusion`).
    weights : array_like, optional
        Each text's weight, the inverse of its inclusion probability. Default:
        :math:`N_h / n_h` from `stratum_sizes`, else 1. Given with `stratum_sizes`, the
        weights of each stratum must add up to its size (within 1%, or half a text).
    strata : array_like, optional
        Each text's stratum (one stratum when omitted).
    stratum_sizes : mapping, array_like or float, optional
        The corpus texts of each stratum: a mapping from stratum to size, one value per
        text (the size of its stratum, as R's ``fpc``), or one number without `strata`
        (a mapping or values per text need `strata`). Gives the finite population
        correction (texts as units) and the default weights.
    groups : array_like, optional
        Person ids: a person's texts within a stratum are one sampling unit (R's
        ``ids = ~person, nest = TRUE``), drawn with replacement (no finite population
        correction).
    domain : array_like of bool, optional
        One boolean per text: the cells of a domain (a subgroup), the other texts kept
        as sampled units with no cells (R's ``subset()`` of a design).

    Returns
    -------
    DesignCells

    Examples
    --------
    >>> from perfci.sample_design import design_cells
    >>> cells = design_cells([1, 1, 0, 1, 0, 0], [1, 1, 1, 0, 0, 0], strata=[1, 1, 1, 0, 0, 0],
    ...                      stratum_sizes={1: 30, 0: 300})
    >>> cells.weighted.sum(0).tolist()  # tp, fp, fn, tn in the corpus
    [20.0, 10.0, 100.0, 200.0]
    """
    check_aligned(
        y_true=y_true, y_pred=y_pred, weights=weights, strata=strata, groups=groups, domain=domain
    )
    labels = normalize_labels({"y_true": y_true, "y_pred": y_pred}, positive=positive)
    truth = labels.values["y_true"] == labels.positive
    pred = labels.values["y_pred"] == labels.positive
    if truth.shape != pred.shape:
        raise ValueError(
            f"`y_true` and `y_pred` must hold one label per text each; got {truth.size} "
            f"and {pred.size}."
        )
    n = truth.size
    cell = np.where(truth, np.where(pred, 0, 2), np.where(pred, 1, 3))
    if strata is None:
        code, labels_of_strata = np.zeros(n, dtype=np.int64), np.array([0])
    else:
        labels_of_strata, code = factorize_sorted(_per_text("strata", strata, n))
    if strata is None and (hasattr(stratum_sizes, "items") or np.ndim(stratum_sizes) != 0):
        raise ValueError(
            "`stratum_sizes` needs `strata` (each text's stratum) when it gives a size per "
            "stratum or per text; without strata give one number, the corpus texts."
        )
    sizes = (
        np.full(labels_of_strata.size, np.nan)
        if stratum_sizes is None
        else _stratum_sizes(stratum_sizes, labels_of_strata, code)
    )
    texts_in = np.bincount(code, minlength=labels_of_strata.size)
    if stratum_sizes is not None and np.any(sizes < texts_in):
        h = int(np.flatnonzero(sizes < texts_in)[0])
        raise ValueError(
            f"`stratum_sizes` of stratum {plain(labels_of_strata[h])!r} is {sizes[h]:g}, fewer "
            f"corpus texts than the {texts_in[h]} sampled from it."
        )
    if weights is not None:
        w = _check_weights(weights, n)
        if stratum_sizes is not None:
            _check_weights_fit_sizes(w, code, sizes, labels_of_strata)
    elif stratum_sizes is not None:
        w = (sizes / texts_in)[code]
    else:
        w = np.ones(n)
    if groups is None:
        person, unit = None, None
    else:
        _, person = factorize_sorted(_per_text("groups", groups, n))
        # nest = TRUE: a person's texts in two strata are two units
        _, unit = factorize_sorted(code * (int(person.max(initial=0)) + 1) + person)
    return units_design(
        cell,
        w,
        code,
        strata=labels_of_strata,
        unit=unit,
        person=person,
        stratum_sizes=None if stratum_sizes is None else sizes,
        domain=None if domain is None else _domain(domain, n),
    )


def _check_weights_fit_sizes(
    weights: np.ndarray, code: np.ndarray, sizes: np.ndarray, strata: np.ndarray
) -> None:
    """Refuse weights whose total in a stratum is not its corpus size (within rounding).

    With the stratum sizes, a stratum's texts are a random sample of its :math:`N_h`
    corpus texts (the finite population correction says so): each weighs
    :math:`N_h / n_h` and the weights of the stratum add up to :math:`N_h`.
    """
    totals = np.bincount(code, weights=weights, minlength=sizes.size)
    off = np.abs(totals - sizes) > np.maximum(0.01 * sizes, 0.5)
    if off.any():
        h = int(np.flatnonzero(off)[0])
        raise ValueError(
            f"`weights` of stratum {plain(strata[h])!r} add up to {totals[h]:.6g} corpus texts, "
            f"but `stratum_sizes` gives it {sizes[h]:g}: give one of the two, or weights "
            "that add up to each stratum's size (within 1%)."
        )


def _domain(domain: Any, n: int) -> np.ndarray:
    arr = np.asarray(domain)
    if arr.shape != (n,) or arr.dtype != bool:
        raise ValueError(f"`domain` must hold one boolean per text ({n}); got {arr!r:.60}.")
    return arr


def units_design(
    cell: np.ndarray,
    weight: np.ndarray,
    stratum: np.ndarray,
    *,
    strata: np.ndarray,
    unit: np.ndarray | None = None,
    person: np.ndarray | None = None,
    stratum_sizes: np.ndarray | None = None,
    domain: np.ndarray | None = None,
) -> DesignCells:
    """:class:`DesignCells` of samples given text by text, batched over leading axes.

    Parameters
    ----------
    cell : numpy.ndarray of int, shape (..., texts)
        Each text's cell: 0 tp, 1 fp, 2 fn, 3 tn.
    weight : numpy.ndarray, shape (..., texts)
        Each text's weight.
    stratum : numpy.ndarray of int, shape (..., texts)
        Each text's stratum, an index into `strata`.
    strata : numpy.ndarray
        The stratum labels.
    unit : numpy.ndarray of int, shape (..., texts), optional
        Each text's sampling unit within its data set (a person within a stratum, from
        0); default: every text its own unit.
    person : numpy.ndarray of int, shape (..., texts), optional
        Each text's person (with `unit`).
    stratum_sizes : numpy.ndarray, shape (strata,), optional
        :math:`N_h`: the finite population correction when texts are the units.
    domain : numpy.ndarray of bool, shape (..., texts), optional
        The texts of a domain (a subgroup): the others stay sampled units of their
        strata but hold no cells, as R survey's ``subset()`` of a design estimates a
        domain.

    Returns
    -------
    DesignCells
        Units padded to the most units of any data set (padding not `present`).
    """
    cell = np.asarray(cell)
    batch, n = cell.shape[:-1], cell.shape[-1]
    rows = int(np.prod(batch, dtype=np.int64))
    k = strata.size
    code = np.asarray(stratum).reshape(rows, n)
    own = np.broadcast_to(np.arange(n), (rows, n)) if unit is None else unit.reshape(rows, n)
    units = int(own.max(initial=-1)) + 1
    index = ((np.arange(rows)[:, None] * units + own) * 4 + cell.reshape(rows, n)).ravel()
    size = rows * units * 4
    inside = np.ones(cell.shape) if domain is None else np.asarray(domain, float)
    weighted = np.bincount(
        index, weights=(np.asarray(weight, float) * inside).ravel(), minlength=size
    )
    counts = np.bincount(index, weights=inside.ravel(), minlength=size)
    at = (np.arange(rows)[:, None], own)
    unit_stratum = np.zeros((rows, units), dtype=np.int64)
    unit_stratum[at] = code
    present = np.zeros((rows, units), dtype=bool)
    present[at] = True
    unit_person = np.full((rows, units), -1)
    if person is not None:
        unit_person[at] = np.asarray(person).reshape(rows, n)
    fraction = np.zeros((rows, k))
    sizes = np.full(k, np.nan) if stratum_sizes is None else np.asarray(stratum_sizes, float)
    if stratum_sizes is not None and unit is None:
        flat = (np.arange(rows)[:, None] * k + code).ravel()
        fraction = np.bincount(flat, minlength=rows * k).reshape(rows, k) / sizes
    return DesignCells(
        weighted=weighted.reshape(*batch, units, 4),
        counts=counts.reshape(*batch, units, 4),
        stratum=unit_stratum.reshape(*batch, units),
        present=present.reshape(*batch, units),
        strata=strata,
        fraction=fraction.reshape(*batch, k),
        stratum_sizes=sizes,
        clustered=unit is not None,
        person=unit_person.reshape(*batch, units),
    )


@dataclass(frozen=True, repr=False)
class WeightedCI(IntervalResult):
    r"""A design-based interval of a metric on a weighted, stratified sample.

    Attributes
    ----------
    metric : str
        The metric (or ``"prevalence"``, the reference positives' rate).
    estimate : float or numpy.ndarray
        The metric of the weighted cell totals (an array for a batch, as every field
        below that varies by data set).
    low, high : float or numpy.ndarray
        The interval ends.
    confidence_level : float
        The confidence level.
    method : str
        ``"logit"``, ``"beta"``, ``"wald"``, ``"regularized_logit"`` or
        ``"poststratified"``.
    se : float
        The linearized standard error.
    df : float
        The design's degrees of freedom on the metric's domain: units with a relevant
        text less strata with one.
    n_eff : float
        :math:`\hat p (1 - \hat p) / \mathrm{se}^2`, the sample size of a simple random
        sample with this variance (NaN for kappa and MCC).
    relevant_n : int
        The metric's relevant texts in the sample (unweighted).
    units : int
        Sampling units with a relevant text (texts, or persons within strata).
    design : str
        The design in words.
    population : str
        What the interval is about.
    clustered : bool
        Whether persons were the sampling units.
    note : str
        Why a fallback was used (empty otherwise).
    """

    _derived: ClassVar[tuple[str, ...]] = ("sources",)

    metric: str
    estimate: Any
    low: Any
    high: Any
    confidence_level: float
    method: str
    se: Any
    df: Any
    n_eff: Any
    relevant_n: Any
    units: Any
    design: str
    population: str
    clustered: bool
    note: Any

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation: texts, and persons when they were the units."""
        return sources_of(persons=self.clustered)


def relevant_cells(metric: str) -> tuple[int, ...]:
    """Return the cells ``[tp, fp, fn, tn]`` (indices) a metric's denominator reads."""
    if metric == PREVALENCE:
        return (0, 1, 2, 3)
    return RELEVANT_TEXTS[metric][0]


def _value_and_gradient(metric: str, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the metric of weighted totals ``(..., 4)`` and its gradient (NaN: undefined)."""
    return corpus_metric(totals, metric)


def linearized_values(cells: DesignCells, metric: str) -> tuple[np.ndarray, np.ndarray]:
    r"""Return a metric's design-based estimate and each unit's linearized value.

    The estimate is the metric of the weighted totals :math:`\hat T`; unit j's value is
    :math:`z_j = g \cdot \hat T_j`, g the metric's gradient at :math:`\hat T` (0 where
    the metric is undefined), so that ``cells.total_variance(z)`` is its Taylor variance
    and a difference of two metrics on the same units has the values' difference.
    """
    estimate, gradient = _value_and_gradient(metric, cells.weighted.sum(-2))
    z = np.einsum("...uc,...c->...u", cells.weighted, np.nan_to_num(gradient))
    return estimate, z


def _linearized_variance(cells: DesignCells, gradient: np.ndarray) -> np.ndarray:
    """Return the stratified variance (fpc included) of the total of z = g . T_j."""
    return cells.total_variance(
        np.einsum("...uc,...c->...u", cells.weighted, np.nan_to_num(gradient))
    )


def _check_strata(cells: DesignCells) -> None:
    n_h = cells.units_per_stratum
    lonely = np.argwhere(n_h == 1)
    if lonely.size:
        what = "person" if cells.clustered else "text"
        where = f" of data set {tuple(lonely[0][:-1].tolist())}" if cells.batch_shape else ""
        raise ValueError(
            f"`strata`: stratum {plain(cells.strata[lonely[0][-1]])!r}{where} has a single "
            f"sampled {what}: no variance can be estimated within it. Merge it with a "
            "neighbouring stratum (R's survey refuses it too)."
        )


def _korn_graubard(
    p: np.ndarray, n_star: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Return Clopper-Pearson's ends for proportions p of n_star texts (any real n_star)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        low = special.betaincinv(n_star * p, n_star * (1 - p) + 1, alpha / 2)
        high = special.betaincinv(n_star * p + 1, n_star * (1 - p), 1 - alpha / 2)
    return np.where(p <= 0, 0.0, low), np.where(p >= 1, 1.0, high)


def _scalar_or_array(value: np.ndarray) -> Any:
    return float(value) if np.ndim(value) == 0 else value


def poststratified_cells(cells: DesignCells) -> tuple[np.ndarray, np.ndarray] | str:
    """Each stratum's cells and corpus size for the poststratified model, or why not.

    The model takes texts as units with one weight per stratum (equal probabilities
    within it); the stratum sizes are `stratum_sizes`, else each stratum's weights
    summed, the relative sizes of a corpus with no finite population correction.
    Returns ``(cells (..., strata, 4), sizes (..., strata))``, or a
    sentence saying why the design does not fit it.
    """
    if cells.clustered:
        return "persons are the sampling units"
    per = np.stack([cells.per_stratum(cells.counts[..., c]) for c in range(4)], axis=-1)
    weight = cells.weighted.sum(-1)  # a text's weight (texts are the units)
    k = cells.strata.size
    big = np.where(cells.present, weight, -np.inf)
    small = np.where(cells.present, weight, np.inf)
    top = np.full((*cells.batch_shape, k), -np.inf)
    low = np.full((*cells.batch_shape, k), np.inf)
    np.maximum.at(top.reshape(-1, k), _rows(cells), big.reshape(-1, big.shape[-1]))
    np.minimum.at(low.reshape(-1, k), _rows(cells), small.reshape(-1, small.shape[-1]))
    sampled = per.sum(-1) > 0
    if np.any(sampled & (top - low > 1e-9 * np.maximum(np.abs(top), 1))):
        return "the weights differ within a stratum"
    sizes = cells.stratum_sizes
    if not np.all(np.isfinite(sizes)):
        # no corpus sizes: the weights' totals are the strata's relative sizes in a corpus
        # too large for a finite population correction (stratified_posterior finite=False)
        sizes = cells.per_stratum(weight)
    return per, np.broadcast_to(sizes, per.shape[:-1])


def _rows(cells: DesignCells) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (data set, stratum) of every unit, for ufunc.at on (data sets, strata)."""
    flat = cells.stratum.reshape(-1, cells.stratum.shape[-1])
    return np.broadcast_to(np.arange(flat.shape[0])[:, None], flat.shape), flat


def weighted_ci(
    cells: DesignCells,
    metric: str,
    *,
    method: str = RECOMMENDED,
    confidence_level: float = 0.95,
    rng: Any = None,
    draws: int = 4000,
) -> WeightedCI:
    """Design-based interval of a metric from a sample's :class:`DesignCells`.

    Batched: cells with leading axes give a result whose fields have their shape.

    Parameters
    ----------
    cells : DesignCells
        From :func:`design_cells` (one sample) or :func:`units_design` (a batch).
    metric : str
        A binary metric of :data:`perfci.BINARY_METRICS`, or ``"prevalence"``.
    method : str, default "recommended"
        The interval: "logit", "beta", "wald", "regularized_logit" or "poststratified"
        (see the module); "recommended" is :data:`perfci.policy.WEIGHTED_METHOD`
        ("poststratified") where texts are the units with equal weights within each
        stratum, else :data:`perfci.policy.WEIGHTED_FALLBACK_METHOD` ("logit"), and
        :data:`perfci.policy.WEIGHTED_SIGNED_METHOD` ("wald") for kappa and MCC with
        persons as the units or unequal weights.
    confidence_level : float, default 0.95
        Confidence level.
    rng : numpy.random.Generator, int or None
        Random generator or seed of the poststratified posterior's draws (a batch's data
        sets each draw from their own stream, so a batch equals a loop of single calls).
    draws : int, default 4000
        Posterior draws of method "poststratified" per data set.

    Returns
    -------
    WeightedCI

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.sample_design import design_cells, weighted_ci
    >>> rng = np.random.default_rng(1)
    >>> pred = np.repeat([1, 0], 200)
    >>> truth = np.where(pred == 1, rng.random(400) < 0.8, rng.random(400) < 0.05).astype(int)
    >>> cells = design_cells(truth, pred, strata=pred, stratum_sizes={1: 1000, 0: 20000})
    >>> ci = weighted_ci(cells, "recall", rng=1)
    >>> print(f"{ci.estimate:.3f} [{ci.low:.2f}, {ci.high:.2f}] by {ci.method}")
    0.471 [0.32, 0.65] by poststratified
    >>> ci = weighted_ci(cells, "recall", method="logit")  # R survey's svyciprop
    >>> print(f"[{ci.low:.3f}, {ci.high:.3f}], df {ci.df:g}")
    [0.318, 0.629], df 167
    """
    if metric != PREVALENCE:
        registry.BINARY_METRIC.check(metric)
    level = float(check_confidence_level(confidence_level, scalar=True))
    if method not in (RECOMMENDED, *DESIGN_METHODS):
        raise ValueError(
            f"`method` must be one of 'recommended', {', '.join(map(repr, DESIGN_METHODS))} "
            f"for a weighted or stratified sample; got {method!r}."
        )
    posterior_input = poststratified_cells(cells)
    if method == RECOMMENDED:
        fallback = WEIGHTED_SIGNED_METHOD if metric in _SIGNED else WEIGHTED_FALLBACK_METHOD
        method = WEIGHTED_METHOD if not isinstance(posterior_input, str) else fallback
    if method == "poststratified" and isinstance(posterior_input, str):
        raise ValueError(
            f"method='poststratified' models texts drawn with equal probabilities within "
            f"each stratum, but {posterior_input}; use method='logit'."
        )
    if metric in _SIGNED and method not in ("wald", "poststratified"):
        raise ValueError(
            f"{metric} lies in [-1, 1]: method='wald' or 'poststratified' applies; got {method!r}."
        )
    _check_strata(cells)
    relevant = list(relevant_cells(metric))
    in_domain = cells.present & (cells.counts[..., relevant].sum(-1) > 0)
    relevant_n = cells.counts[..., relevant].sum((-1, -2))
    units = in_domain.sum(-1)
    df = (units - (cells.per_stratum(in_domain) > 0).sum(-1)).astype(float)
    estimate, gradient = _value_and_gradient(metric, cells.weighted.sum(-2))
    variance = np.maximum(_linearized_variance(cells, gradient), 0.0)
    se = np.where(np.isfinite(estimate), np.sqrt(variance), np.nan)
    alpha = 1 - level
    signed = metric in _SIGNED
    with np.errstate(invalid="ignore", divide="ignore"):
        n_eff = np.where(variance > 0, estimate * (1 - estimate) / variance, 0.0)
        t = special.stdtrit(df, 1 - alpha / 2)
    if signed:
        n_eff = np.full_like(estimate, np.nan)
    if method == "poststratified":
        per, sizes = cast(tuple[np.ndarray, np.ndarray], posterior_input)
        post = stratified_posterior(
            per,
            sizes,
            metric,
            prior=WEIGHTED_PRIOR,
            draws=draws,
            confidence_level=level,
            rng=rng,
            finite=bool(np.all(np.isfinite(cells.stratum_sizes))),
        )
        # the posterior's interval keeps the design-based estimate, as the others do
        low = np.minimum(post.low, np.where(np.isfinite(estimate), estimate, np.inf))
        high = np.maximum(post.high, np.where(np.isfinite(estimate), estimate, -np.inf))
        degenerate = np.zeros(np.shape(estimate), dtype=bool)
    elif method == "regularized_logit":
        low, high = _regularized_ends(cells, metric, t)
        # the pseudo texts move the interval; it keeps the estimate (an estimate of 1 with
        # no false negatives sampled, say)
        low, high = np.minimum(low, estimate), np.maximum(high, estimate)
        degenerate = np.zeros(np.shape(estimate), dtype=bool)
    else:
        low, high = _ends(method, signed, estimate, se, variance, df, t, n_eff, relevant_n, alpha)
        # a variance of 0 says nothing of the design effect: Korn-Graubard, relevant texts
        degenerate = (not signed and method != "wald") & (
            (variance <= 0) | (estimate <= 0) | (estimate >= 1)
        )
    # every stratum that can hold a relevant text sampled whole: the corpus metric is known
    per = np.stack([cells.per_stratum(cells.counts[..., c]) for c in range(4)], axis=-1)
    can_hold = possible_cells(per)[..., relevant].any(-1)
    census = np.all((cells.fraction >= 1) | ~can_hold, axis=-1)
    low, high = np.where(census, estimate, low), np.where(census, estimate, high)
    degenerate &= ~census
    undefined = ~np.isfinite(estimate)
    few = ~undefined & (df < 1) & ~census
    low = np.where(undefined | few, np.nan, low)
    high = np.where(undefined | few, np.nan, high)
    _warn(metric, undefined, few, df)
    note = np.where(
        degenerate & ~undefined & ~few,
        "the design variance is 0 (an estimate of 0 or 1, or every unit alike); the "
        "Korn-Graubard interval at the relevant texts, no design effect assumed",
        "",
    )
    return WeightedCI(
        metric=metric,
        estimate=_scalar_or_array(estimate),
        low=_scalar_or_array(low),
        high=_scalar_or_array(high),
        confidence_level=level,
        method=method,
        se=_scalar_or_array(se),
        df=_scalar_or_array(df),
        n_eff=_scalar_or_array(n_eff),
        relevant_n=int(relevant_n) if np.ndim(relevant_n) == 0 else relevant_n.astype(np.int64),
        units=int(units) if np.ndim(units) == 0 else units,
        design=cells.description,
        population=_population(cells),
        clustered=cells.clustered,
        note=str(note) if np.ndim(note) == 0 else note,
    )


def _ends(
    method: str,
    signed: bool,
    estimate: np.ndarray,
    se: np.ndarray,
    variance: np.ndarray,
    df: np.ndarray,
    t: np.ndarray,
    n_eff: np.ndarray,
    relevant_n: np.ndarray,
    alpha: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Return the interval ends of every data set by `method`, before the NaN policies."""
    if method == "wald":
        bound = -1.0 if signed else 0.0
        return np.maximum(estimate - t * se, bound), np.minimum(estimate + t * se, 1.0)
    degenerate = (variance <= 0) | (estimate <= 0) | (estimate >= 1)
    fallback = _korn_graubard(estimate, relevant_n.astype(float), alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "logit":
            centre = special.logit(estimate)
            half = t * se / (estimate * (1 - estimate))
            ends = special.expit(centre - half), special.expit(centre + half)
        else:
            ratio = special.stdtrit(relevant_n - 1, alpha / 2) / special.stdtrit(df, alpha / 2)
            ends = _korn_graubard(estimate, n_eff * ratio**2, alpha)
    return (
        np.where(degenerate, fallback[0], ends[0]),
        np.where(degenerate, fallback[1], ends[1]),
    )


def with_pseudo_texts(cells: DesignCells, pseudo: float = 0.5) -> DesignCells:
    """Add `pseudo` of a text to each possible cell of every stratum, as units of their own.

    The cells a stratum can hold are :func:`perfci._core.strata.possible_cells` of its
    sampled counts; a stratum with sampling fraction :math:`f_h` gets :math:`(1 - f_h)`
    `pseudo` (none when it was sampled whole, and its cells are known). Texts as units:
    one pseudo unit per possible cell; persons as units: one pseudo-person per stratum
    holding them all (as the paper's pseudo-person of the cluster bootstrap). Every unit
    of a stratum is then weighted by its weights' total over its texts, pseudo texts
    included, so that the stratum's weighted total stays the same.
    """
    k = cells.strata.size
    batch = cells.batch_shape
    per = np.stack([cells.per_stratum(cells.counts[..., c]) for c in range(4)], axis=-1)
    total = cells.per_stratum(cells.weighted.sum(-1))  # the stratum's estimated N_h
    texts = per.sum(-1)
    # a stratum sampled whole is known: its pseudo texts shrink with 1 - f_h to none
    pseudo_cells = pseudo * (1 - cells.fraction)[..., None] * possible_cells(per)
    scale = np.where(texts > 0, total / np.maximum(texts + pseudo_cells.sum(-1), 1e-300), 0.0)
    mean_weight = np.where(texts > 0, total / np.maximum(texts, 1e-300), 0.0)
    rescale = np.take_along_axis(scale / np.maximum(mean_weight, 1e-300), cells.stratum, -1)
    if cells.clustered:
        extra = pseudo_cells  # one pseudo-person per stratum
        extra_stratum = np.broadcast_to(np.arange(k), (*batch, k))
    else:
        extra = (pseudo_cells[..., :, :, None] * np.eye(4)).reshape(*batch, 4 * k, 4)
        extra_stratum = np.broadcast_to(np.repeat(np.arange(k), 4), (*batch, 4 * k))
    extra_weight = extra * np.repeat(scale, extra.shape[-2] // k, axis=-1)[..., None]
    return DesignCells(
        weighted=np.concatenate([cells.weighted * rescale[..., None], extra_weight], axis=-2),
        counts=np.concatenate([cells.counts, extra], axis=-2),
        stratum=np.concatenate([cells.stratum, extra_stratum], axis=-1),
        present=np.concatenate([cells.present, extra.sum(-1) > 0], axis=-1),
        strata=cells.strata,
        fraction=cells.fraction,
        stratum_sizes=cells.stratum_sizes,
        clustered=cells.clustered,
        person=np.concatenate([cells.person, np.full(extra_stratum.shape, -1)], axis=-1),
    )


def _regularized_ends(cells: DesignCells, metric: str, t: np.ndarray) -> tuple[Any, Any]:
    """Return the logit interval of the cells with half a pseudo text in each possible cell."""
    regular = with_pseudo_texts(cells)
    estimate, gradient = _value_and_gradient(metric, regular.weighted.sum(-2))
    se = np.sqrt(np.maximum(_linearized_variance(regular, gradient), 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = special.logit(estimate)
        half = t * se / (estimate * (1 - estimate))
        return special.expit(centre - half), special.expit(centre + half)


def _warn(metric: str, undefined: np.ndarray, few: np.ndarray, df: np.ndarray) -> None:
    batched = np.ndim(undefined) > 0
    if np.any(undefined):
        what = (
            f"{int(np.sum(undefined))} of {undefined.size} data sets" if batched else "this sample"
        )
        warnings.warn(
            f"{metric} is undefined on {what}: no relevant texts.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    if np.any(few):
        what = (
            f"in {int(np.sum(few))} of {few.size} data sets" if batched else f"(df = {float(df):g})"
        )
        warnings.warn(
            f"{metric}: no degrees of freedom on the metric's texts {what}: the units "
            "holding a relevant text are no more than the strata holding them; the interval "
            "is undefined.",
            UndefinedMetricWarning,
            stacklevel=3,
        )


def _population(cells: DesignCells) -> str:
    if cells.clustered:
        return (
            "the population of persons and their texts that the weights represent, "
            "stratum by stratum"
        )
    if np.any(np.isfinite(cells.stratum_sizes)):
        total = float(np.nansum(cells.stratum_sizes))
        return f"the corpus the sample was drawn from ({total:,.0f} texts)"
    return "the population of texts that the weights represent"
