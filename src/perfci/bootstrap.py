"""Bootstrap confidence intervals that resample counts, not rows, for many data sets.

A thin layer over the engine: :mod:`perfci._core.resampling` draws the replicates,
:mod:`perfci._core.replicates` puts every data set in its canonical form and turns its
replicates into percentile or BCa intervals (:mod:`perfci._core.intervals`). This module
validates counts and assembles the result, :class:`BootstrapCI`.

Shapes: counts have their cells on the last axis (the last two for a k x k matrix);
nested counts have persons on the axis before it; every other leading axis indexes
independent data sets, and the result's fields have the shape of those leading axes.
Persons whose counts are all zero are not persons: padding a ragged batch with them
changes nothing, draw for draw.

Random streams: a single data set (no leading axes) uses ``np.random.default_rng(rng)``;
in a batch of K data sets (leading axes flattened in C order), data set k uses
``perfci.batch_generators(rng, K)[k]``. So a batched call equals the loop of single
calls given those generators, draw for draw.
"""

from __future__ import annotations

import copy
import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._core import registry
from ._core.intervals import BCA_FALLBACK_REASONS, exact_percentile_bounds
from ._core.order_statistics import UNIFORMS, proportion_order_statistics

# The engine glue lives in the core (perfci._core.replicates); other modules still take
# some of it from here.
from ._core.replicates import (
    MIN_PERSONS,
    ONE_PERSON,
    RATER_SYMMETRIC,
    DegenerateBootstrapWarning,
    batch_shaped,
    canonical_cells,
    canonical_iid_cells,
    check_pseudo_count,
    is_positive_int,
    resample_intervals,
    resample_intervals_many,
    unswapped,
    warn_about,
    warn_pseudo_count,
    warn_zero_width,
)
from ._core.replicates import check_bootstrap_options as check_bootstrap_options
from ._core.resampling import (
    Statistic,
    check_resample_count,
    check_resample_size,
    default_resamples,
    proportion_statistic,
)
from ._core.results import IntervalResult, sources_of
from ._core.validation import (
    MAX_COUNT,
    UNSET,
    Unset,
    check_choice,
    check_confidence_level,
    check_counts_array,
    check_rng,
    dataset_generators,
)
from .counting import ConfusionCounts, one_vs_rest
from .metrics import BINARY_METRICS, CELL_POOLING, METRICS, metric_values

__all__ = [
    "BOOTSTRAP_INTERVALS",
    "SCHEMES",
    "BootstrapCI",
    "DegenerateBootstrapWarning",
    "PersonsIgnoredWarning",
    "bootstrap_ci",
    "exact_percentile_bounds",
]

#: Resampling schemes: texts, persons, or persons then texts within persons.
SCHEMES = ("iid", "cluster", "hierarchical")
#: Bootstrap interval types.
BOOTSTRAP_INTERVALS = ("percentile", "bca")


class PersonsIgnoredWarning(UserWarning):
    """Counts carry persons, but the bootstrap resamples the texts as independent.

    :func:`bootstrap_ci` warns with it when per-person counts meet the default
    ``scheme`` (left unset, it is ``"iid"``); passing ``scheme`` silences it.
    """


def _warn_persons_ignored(flat: np.ndarray) -> None:
    """Warn that per-person counts ``(sets, persons, cells)`` are resampled as texts.

    Only where some data set has 2 or more persons with texts: with one person, the
    cluster schemes have no population of persons to resample, and texts are texts.
    """
    persons = np.count_nonzero(flat.sum(-1), axis=-1)
    if np.any(persons >= MIN_PERSONS):
        warnings.warn(
            "`counts` are per person but `scheme` is 'iid' (texts resampled as independent): "
            "pass scheme='hierarchical' (recommended) or 'cluster' to resample persons, or "
            "scheme='iid' explicitly to silence this.",
            PersonsIgnoredWarning,
            stacklevel=3,
        )


def metric_statistic(metric: str, k: int | None = None) -> Statistic:
    """Return the engine's :class:`~perfci._core.resampling.Statistic` of `metric` (k classes)."""
    if metric == "proportion":
        return proportion_statistic()
    if metric in BINARY_METRICS:
        pooling = CELL_POOLING.get(metric)
        return Statistic(metric, 4, lambda cells: metric_values(cells, metric), pooling=pooling)
    assert k is not None

    def multiclass(cells: np.ndarray) -> np.ndarray:
        matrix = cells.reshape(*cells.shape[:-1], k, k)
        return metric_values(one_vs_rest(matrix), metric)

    return Statistic(metric, k * k, multiclass)


@dataclass(frozen=True, repr=False)
class BootstrapCI(IntervalResult):
    r"""A bootstrap confidence interval for a metric, or one per data set of a batch.

    Numeric fields are scalars for a single data set and arrays of the batch's shape
    for a batch of data sets.

    Attributes
    ----------
    estimate : float
        The metric on the observed counts (without pseudo counts).
    low, high : float
        The interval ends.
    confidence_level : float
        The confidence level.
    metric, scheme, interval : str
        What was resampled and how the interval was formed. `interval` is the interval
        asked for; see `bca_fallback`.
    pseudo_count : int
        Pseudo counts added per cell (iid) or held by one pseudo-person (cluster schemes).
    n_resamples : int or str
        Resamples drawn, or ``"exact"`` for the infinite-resample limit.
    n_invalid_resamples : int
        Resamples where the metric was undefined; they are dropped.
    standard_error : float
        Standard deviation of the valid replicates; the bootstrap distribution's exact one
        for ``"exact"`` and where only order statistics were drawn (`draws`).
    distribution : numpy.ndarray or None
        The valid bootstrap replicates, in draw order; for a batch, every replicate
        ``(*batch, n_resamples)`` with NaN where the metric was undefined; None for
        ``"exact"`` and where only order statistics were drawn (`draws`).
    bca_fallback : bool
        True if BCa was asked for but the percentile interval had to be used.
    fallback_reason : str or None
        Why BCa fell back to percentile.
    bias_correction, acceleration : float
        BCa's :math:`\hat z_0` and :math:`\hat a` (NaN for percentile intervals).
    n_clusters : int or None
        Persons resampled (without the pseudo-person); None for ``scheme="iid"``.
    n_texts : int
        Texts in the observed counts.
    draws : str
        ``"resamples"`` (every resample drawn; `distribution` holds them),
        ``"order_statistics"`` (only what the interval reads off them, from its exact law:
        `distribution` is None) or ``"exact"`` (the infinite-resample limit).
    """

    _derived: ClassVar[tuple[str, ...]] = ("sources",)

    estimate: Any
    low: Any
    high: Any
    confidence_level: float
    metric: str
    scheme: str
    interval: str
    pseudo_count: int
    n_resamples: int | str
    n_invalid_resamples: Any
    standard_error: Any
    distribution: np.ndarray | None
    bca_fallback: Any = False
    fallback_reason: Any = None
    bias_correction: Any = np.nan
    acceleration: Any = np.nan
    n_clusters: Any = None
    n_texts: Any = 0
    draws: str = "resamples"

    _exclude: ClassVar[tuple[str, ...]] = ("distribution",)

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes.

        ``("texts",)`` for the iid scheme, ``("texts", "persons")`` for the cluster
        schemes.
        """
        return sources_of(persons=self.scheme != "iid")

    @property
    def method(self) -> str:
        """Return the interval with its options, as :class:`perfci.MetricCI` names it.

        ``"bootstrap (scheme=iid, interval=percentile, pseudo_count=0)"``.
        """
        return (
            f"bootstrap (scheme={self.scheme}, interval={self.interval}, "
            f"pseudo_count={self.pseudo_count})"
        )

    def to_dict(self, *, replicates: bool = False) -> dict[str, Any]:
        """Return the fields as a JSON-ready dict (NaN as None).

        Parameters
        ----------
        replicates : bool, default False
            Include `distribution`, the replicates (thousands of numbers).
        """
        out = super().to_dict()
        if not replicates:
            del out["distribution"]
        return out

    def __repr__(self) -> str:
        if np.ndim(self.low):
            return (
                f"BootstrapCI(metric={self.metric!r}, scheme={self.scheme!r}, interval="
                f"{self.interval!r}, pseudo_count={self.pseudo_count}, confidence_level="
                f"{self.confidence_level:g}, data sets of shape {np.shape(self.low)}, "
                f"n_resamples={self.n_resamples!r})"
            )
        method = self.interval + (" (fell back to percentile)" if self.bca_fallback else "")
        return (
            f"BootstrapCI(metric={self.metric!r}, scheme={self.scheme!r}, interval="
            f"{method!r}, pseudo_count={self.pseudo_count}, confidence_level="
            f"{self.confidence_level:g}, estimate={self.estimate:.6g}, low={self.low:.6g}, "
            f"high={self.high:.6g}, n_resamples={self.n_resamples!r}, "
            f"n_invalid_resamples={self.n_invalid_resamples})"
        )


def _bootstrap_iv(
    counts: Any,
    metric: str,
    scheme: str,
    interval: str,
    pseudo_count: Any,
    n_resamples: Any,
    confidence_level: Any,
    batch: Any,
    nested: bool | None,
    defaulted: bool = False,
) -> tuple[np.ndarray, Statistic, int, float, bool, bool, tuple[int, ...]]:
    check_choice("metric", metric, ("proportion", *METRICS))
    check_choice("scheme", scheme, SCHEMES)
    check_choice("interval", interval, BOOTSTRAP_INTERVALS)
    level = check_confidence_level(confidence_level, scalar=True)
    lam = check_pseudo_count(pseudo_count)
    exact = isinstance(n_resamples, str)
    if exact:
        if n_resamples != "exact":
            raise ValueError(
                f"`n_resamples` must be a positive integer or 'exact'; got {n_resamples!r}."
            )
        if metric != "proportion" or scheme != "iid" or interval != "percentile":
            raise ValueError(
                "`n_resamples='exact'` is available for metric='proportion' with "
                "scheme='iid' and interval='percentile' only."
            )
    elif not is_positive_int(n_resamples):
        raise ValueError(
            f"`n_resamples` must be a positive integer or 'exact'; got {n_resamples!r}."
        )
    else:
        # a batch of levels: the highest needs the most resamples
        check_resample_count(n_resamples, float(np.max(level)), interval, defaulted=defaulted)
    if batch is not None and not is_positive_int(batch):
        raise ValueError(f"`batch` must be a positive integer or None; got {batch!r}.")
    if nested is not None and not isinstance(nested, bool | np.bool_):
        raise ValueError(f"`nested` must be True, False or None; got {nested!r}.")
    if isinstance(counts, ConfusionCounts):
        if nested is None and counts.groups is not None:
            nested = True
        counts = counts.matrix if counts.matrix is not None else counts.counts
    if scheme != "iid" and nested is False:
        raise ValueError(f"`scheme` {scheme!r} resamples persons: it needs `nested=True`.")
    arr = check_counts_array("counts", counts)
    if np.any(arr < 0):
        raise ValueError("`counts` must be non-negative.")
    if np.any(arr != np.round(arr)):
        raise ValueError("`counts` must be whole numbers: a bootstrap resamples texts.")
    if arr.size and arr.sum() > MAX_COUNT:
        raise ValueError(
            f"`counts` must hold at most {MAX_COUNT:.0e} texts in all; got {arr.sum():.3g}."
        )
    if metric == "proportion":
        cell_ndim, k, what = 1, None, "[successes, failures]"
        ok = arr.ndim >= 1 and arr.shape[-1] == 2
    elif metric in BINARY_METRICS:
        cell_ndim, k, what = 1, None, "[tp, fp, fn, tn]"
        ok = arr.ndim >= 1 and arr.shape[-1] == 4
    else:
        cell_ndim, what = 2, "a k x k confusion matrix (rows: reference, columns: classifier)"
        k = arr.shape[-1] if arr.ndim >= 2 else 0
        ok = arr.ndim >= 2 and arr.shape[-2] == k and k >= 2
    if nested is None:
        if scheme == "iid" and ok and arr.ndim > cell_ndim:
            # Never guess: persons added up and data sets scored apart differ.
            raise ValueError(
                f"`counts` of shape {arr.shape} has leading axes: pass `nested=True` if "
                "the axis before the cells indexes persons (scheme 'iid' adds them up), "
                "or `nested=False` if the leading axes index independent data sets."
            )
        nested = scheme != "iid"
    unit_ndim = cell_ndim + int(nested)
    if not ok or arr.ndim < unit_ndim:
        persons = " per person (persons on the axis before the cells)" if nested else ""
        raise ValueError(
            f"`counts` for metric {metric!r} must hold {what}{persons}, with any leading "
            f"axes indexing data sets; got shape {arr.shape}."
        )
    statistic = metric_statistic(metric, k)
    batch_shape = arr.shape[: arr.ndim - unit_ndim]
    sets = math.prod(batch_shape)
    if not exact:
        check_resample_size(n_resamples, sets)
    flat_shape = (sets, *((arr.shape[-unit_ndim],) if nested else ()), statistic.n_cells)
    return (
        arr.reshape(flat_shape),
        statistic,
        lam,
        float(level),
        exact,
        bool(nested),
        batch_shape,
    )


def _exact_result(
    flat: np.ndarray, nested: bool, lam: int, level: float, batch_shape: tuple[int, ...]
) -> BootstrapCI:
    totals = flat.sum(1) if nested else flat
    x, n = totals[:, 0].astype(float), totals.sum(-1).astype(float)
    if np.any(n == 0):
        raise ValueError("`counts` must hold at least one text.")
    low, high = exact_percentile_bounds(x, n, np.full(x.shape, level), lam)
    size = n + 2 * lam
    p = (x + lam) / size
    zeros = np.zeros(x.size, dtype=np.int64)
    return BootstrapCI(
        estimate=batch_shaped(x / n, batch_shape),
        low=batch_shaped(np.asarray(low, float), batch_shape),
        high=batch_shaped(np.asarray(high, float), batch_shape),
        confidence_level=level,
        metric="proportion",
        scheme="iid",
        interval="percentile",
        pseudo_count=lam,
        n_resamples="exact",
        n_invalid_resamples=batch_shaped(zeros, batch_shape, int),
        standard_error=batch_shaped(np.sqrt(p * (1 - p) / size), batch_shape),
        distribution=None,
        draws="exact",
        bca_fallback=batch_shaped(zeros.astype(bool), batch_shape, bool),
        fallback_reason=None if not batch_shape else np.full(batch_shape, None, dtype=object),
        bias_correction=batch_shaped(np.full(x.size, np.nan), batch_shape),
        acceleration=batch_shaped(np.full(x.size, np.nan), batch_shape),
        n_clusters=None,
        n_texts=batch_shaped(n.astype(np.int64), batch_shape, int),
    )


def _order_statistic_parts(
    flat: np.ndarray,
    nested: bool,
    lam: int,
    level: float,
    interval: str,
    n_resamples: int,
    generator: np.random.Generator,
    batched: bool,
) -> dict[str, Any]:
    """Return the engine's per-data-set arrays of a proportion's order-statistic path."""
    totals = flat.sum(1) if nested else flat
    x, n = totals[:, 0].astype(float), totals.sum(-1).astype(float)
    size = x.size
    empty = n == 0
    keep = np.flatnonzero(~empty)
    drawn = proportion_order_statistics(
        x[keep] + lam,
        n[keep] + 2 * lam,
        interval=interval,
        n_resamples=n_resamples,
        confidence_level=level,
        uniforms=dataset_generators(generator, size, batched).uniforms(UNIFORMS, keep),
    )
    parts: dict[str, Any] = {}
    for name, values in drawn.items():
        parts[name] = np.zeros(size, np.int64) if name == "fallback" else np.full(size, np.nan)
        parts[name][keep] = values
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = np.where(empty, np.nan, x / np.where(empty, 1.0, n))
    nothing = np.zeros(size, dtype=bool)
    return {
        **parts,
        "estimate": estimate,
        "replicates": None,
        "n_resamples": n_resamples,
        "n_invalid": np.zeros(size, np.int64),
        "empty": empty,
        "one_person": nothing,
        "no_valid": nothing,
        "n_texts": n.astype(np.int64),
        "n_clusters": np.zeros(size, np.int64),
    }


def bootstrap_ci(
    counts: Any,
    metric: str,
    *,
    scheme: str | Unset = UNSET,
    interval: str = "percentile",
    pseudo_count: int = 0,
    n_resamples: int | str | Unset = UNSET,
    confidence_level: float = 0.95,
    rng: Any = None,
    batch: int | None = None,
    nested: bool | None = None,
    draws: str = "auto",
) -> BootstrapCI:
    r"""Bootstrap confidence interval for a metric, resampling counts.

    Parameters
    ----------
    counts : array_like or ConfusionCounts
        For ``metric="proportion"``: ``[successes, failures]``; for a binary metric:
        ``[tp, fp, fn, tn]``; for ``macro_*``/``micro_*``: the k x k confusion matrix
        (or a multi-class :class:`ConfusionCounts`). Nested counts have one row of cells
        per person on the axis before the cells (needed by ``"cluster"`` and
        ``"hierarchical"``); any further leading axes index independent data sets, and
        every field of the result then has their shape. Whole, non-negative numbers.
    metric : str
        ``"proportion"`` or any name in :data:`perfci.METRICS`.
    scheme : {"iid", "cluster", "hierarchical"}, default "iid"
        Resample texts; persons with all their texts; or persons, then texts within
        each drawn person. Left unset it is ``"iid"``; per-person counts (``nested=True``
        or a :class:`ConfusionCounts` with `groups`) then warn, as texts resampled as
        independent ignore the persons: pass ``scheme="hierarchical"`` (what
        :func:`perfci.metric_ci` does), or ``scheme="iid"`` to mean it.
    interval : {"percentile", "bca"}, default "percentile"
        Percentile or bias-corrected and accelerated interval.
    pseudo_count : int, default 0
        λ of the pseudo-count regularized bootstrap: λ successes and λ failures (a
        proportion) or λ in each cell (a confusion matrix) are added before
        resampling, or, for the cluster schemes, one pseudo-person holding them is
        drawn among the m + 1 persons.
    n_resamples : int or "exact", optional
        Number of resamples, at least ``ceil(2 / (1 - confidence_level))`` (40 at 95%, 200
        at 99%: each tail of the interval holds a resample,
        :func:`perfci._core.resampling.min_resamples`). Default 2,000, and above a 99%
        level as many as keep 10 resamples beyond each end (20,000 at 99.9%;
        :func:`perfci._core.resampling.default_resamples`). ``"exact"`` gives the
        infinite-resample percentile interval of a proportion with ``scheme="iid"`` from
        binomial quantiles.
    confidence_level : float, default 0.95
        Confidence level.
    rng : numpy.random.Generator, int or None
        Random generator or seed. A single data set uses ``np.random.default_rng(rng)``;
        data set k of a batch of K uses ``perfci.batch_generators(rng, K)[k]``.
    batch : int or None
        Resamples drawn at once, bounding memory; the result does not depend on it.
        Default: about 4 million numbers a batch (resamples times cells for ``"iid"``,
        resamples times persons for the cluster schemes), so memory does not grow with
        the number of resamples.
    nested : bool, optional
        Whether the axis before the cells indexes persons. Default: True for the
        cluster schemes and for a :class:`ConfusionCounts` with `groups`; with
        ``scheme="iid"``, counts with leading axes must say which they are:
        ``nested=True`` adds each data set's persons up and resamples texts,
        ``nested=False`` reads every leading axis as data sets.
    draws : {"auto", "resamples"}, default "auto"
        ``"auto"``: for ``metric="proportion"`` with ``scheme="iid"`` draw only what the
        interval reads off the B resamples (a few order statistics and, for BCa, the
        counts below and at the estimate) from their exact law, which gives the interval
        the distribution it has under B resamples at a cost that does not grow with B
        (:mod:`perfci._core.order_statistics`); `distribution` is then None and
        `standard_error` the bootstrap distribution's exact SD. Any other metric or
        scheme draws every resample. ``"resamples"``: always draw every resample (and keep
        them in `distribution`).

    Returns
    -------
    BootstrapCI
        The interval, the replicates, their standard error, the number of dropped
        resamples and, for BCa, :math:`\hat z_0`, :math:`\hat a` and any fallback.
        Fields are scalars for a single data set and arrays of the batch's shape
        otherwise (`distribution` then holds every replicate, NaN where undefined).

    Raises
    ------
    ValueError
        For unknown names; counts of the wrong shape (a cluster scheme without a person
        axis), negative or fractional counts; fewer resamples than each tail of the interval
        needs (``n_resamples < ceil(2 / (1 - confidence_level))``); ``"exact"`` other than
        for a proportion with the iid percentile bootstrap; a fractional, negative,
        non-finite or above-10**6 `pseudo_count`; a `batch` below 1; an `rng` that cannot
        seed a generator; more
        resamples than fit in memory; or, for a single data set, no texts, fewer than 2
        persons with texts under a cluster scheme, or a metric undefined in every
        resample (in a batch such a data set gets NaN and a warning instead).

    Warns
    -----
    UndefinedMetricWarning
        When more than 10% of resamples have an undefined metric (they are dropped),
        or the metric is undefined on the observed counts; in a batch, for data sets
        without texts or, under a cluster scheme, with a single person (NaN ends).
    DegenerateBootstrapWarning
        When BCa cannot be formed and the percentile interval is returned instead; when
        an interval has zero width (every resample gave the same value: it is returned,
        and the recommended pseudo count or an analytic interval suggested); when the
        pseudo count adds more texts (λ times the cells) than a data set holds.
    PersonsIgnoredWarning
        When the counts are per person (2 or more persons with texts in a data set) and
        `scheme` is left unset: the iid scheme resamples their texts as independent.

    Notes
    -----
    With :math:`c` the confidence level and :math:`B` the number of *valid*
    replicates:

    *Percentile*: the :math:`(1-c)/2` and :math:`(1+c)/2` quantiles of the valid
    replicates, with linear interpolation between order statistics (NumPy's default,
    Hyndman and Fan's type 7, as :func:`scipy.stats.bootstrap` uses).

    *BCa* [1]_: :math:`\hat z_0 = \Phi^{-1}(\#\{\theta^* < \hat\theta\}/B +
    \tfrac12\#\{\theta^* = \hat\theta\}/B)` and
    :math:`\hat a = \sum(\bar\theta - \theta_{(i)})^3 / 6[\sum(\bar\theta -
    \theta_{(i)})^2]^{3/2}` from the jackknife, leaving out one text of each kind
    (weighted by its count) for ``"iid"`` and one person for the cluster schemes; the
    interval is the percentile interval at levels
    :math:`\Phi(\hat z_0 + (\hat z_0 + z_q)/(1 - \hat a(\hat z_0 + z_q)))`. With pseudo
    counts, :math:`\hat\theta` and the jackknife are those of the augmented sample
    the bootstrap resamples. If every replicate is equal, or the estimate lies outside
    the replicates, or a jackknife value is undefined, or
    :math:`1 - \hat a(\hat z_0 + z_q) \le 0`, the percentile interval is returned with
    ``bca_fallback=True``.

    *Pseudo counts* [2]_: with λ > 0 each replicate is the metric of a resample of the
    augmented sample, of size n + 2λ (proportion), n + 4λ (confusion matrix) or
    n + k²λ (k x k matrix) for ``"iid"``.

    *Persons*: the cluster schemes resample every person with at least one text in
    `counts` (`n_clusters` counts them), as the iid scheme resamples every text; with
    one text per person both give the same bootstrap distribution. To resample only
    the persons with a relevant text (as :func:`clustered_proportion_ci` counts them),
    pass their ``[successes, failures]`` with ``metric="proportion"``.

    *Draws*: how persons and texts are drawn (pooled kinds of persons, binomials from
    the mode, exact parts of k persons for a proportion) is chosen by cost; every way
    has the distribution above (see the methods page, "How the draws are made").

    *One person*: the cluster schemes need at least 2 persons with texts. Drawing one
    person from one person gives that person every time, so the cluster bootstrap's
    distribution is a single value (a zero-width interval) and the hierarchical one is
    the iid bootstrap of that person's texts; neither says anything about the population
    of persons, which is what a cluster scheme's interval is about. A pseudo-person does
    not change this: its spread would be the prior's, not the data's. So a single data
    set of one person is an error, and in a batch such a data set gets its estimate, NaN
    ends and an :class:`~perfci.UndefinedMetricWarning` saying why. (With
    ``scheme="iid"`` the interval is about texts, and one person's texts are texts.)

    References
    ----------
    .. [1] Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap,
       ch. 14. Chapman & Hall.
    .. [2] Anglin, K. "Estimating uncertainty in classifier performance with
       applications to large language models and nested data", sections 2.2 and 4.3.

    Examples
    --------
    F1 with the pseudo-count regularized bootstrap (λ = 1):

    >>> import perfci as pc
    >>> ci = pc.bootstrap_ci([40, 6, 9, 345], "f1", pseudo_count=1, rng=1)
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")  # drawn ends: 2 decimals
    0.842 [0.74, 0.90]

    The exact infinite-resample percentile interval of 19 successes in 20:

    >>> ci = pc.bootstrap_ci([19, 1], "proportion", pseudo_count=1, n_resamples="exact")
    >>> print(ci.low, ci.high)
    0.7727272727272727 1.0

    A hierarchical bootstrap over persons (rows of [tp, fp, fn, tn]):

    >>> per_person = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [2, 0, 0, 9]]
    >>> ci = pc.bootstrap_ci(per_person, "recall", scheme="hierarchical",
    ...                      pseudo_count=1, n_resamples=5000, rng=7)
    >>> print(f"[{ci.low:.3f}, {ci.high:.3f}] from {ci.n_clusters} persons")  # 4 persons: to 0.1
    [0.5, 1.0] from 4 persons

    Many data sets in one call (here three samples of 20 texts), each with its own
    stream spawned from `rng`:

    >>> import numpy as np
    >>> samples = np.array([[18, 2], [19, 1], [20, 0]])
    >>> ci = pc.bootstrap_ci(samples, "proportion", pseudo_count=1, rng=1, nested=False)
    >>> ci.low.shape
    (3,)
    >>> first = pc.bootstrap_ci(samples[0], "proportion", pseudo_count=1,
    ...                         rng=pc.batch_generators(1, 3)[0])
    >>> bool(first.low == ci.low[0] and first.high == ci.high[0])
    True
    """
    scheme_unset = isinstance(scheme, Unset)
    if isinstance(scheme, Unset):  # unset, it is the iid scheme (with a warning below)
        scheme = "iid"
    defaulted = isinstance(n_resamples, Unset)
    if isinstance(n_resamples, Unset):  # a batch of levels: the highest needs the most
        n_resamples = default_resamples(float(np.max(check_confidence_level(confidence_level))))
    flat, statistic, lam, level, exact, nested, batch_shape = _bootstrap_iv(
        counts,
        metric,
        scheme,
        interval,
        pseudo_count,
        n_resamples,
        confidence_level,
        batch,
        nested,
        defaulted,
    )
    registry.BOOTSTRAP_DRAWS.check(draws)
    generator = check_rng(rng)
    if scheme_unset and nested:
        _warn_persons_ignored(flat)
    single = not batch_shape
    texts = flat.reshape(flat.shape[0], math.prod(flat.shape[1:])).sum(-1)
    warn_pseudo_count(texts, lam * statistic.n_cells, single)
    if exact:
        return _exact_result(flat, nested, lam, level, batch_shape)
    if draws == "auto" and metric == "proportion" and scheme == "iid":
        parts = _order_statistic_parts(
            flat, nested, lam, level, interval, int(n_resamples), generator, not single
        )
        if single and parts["empty"][0]:
            raise ValueError("`counts` must hold at least one text.")
        warn_about(parts, metric, interval, int(n_resamples), single)
        warn_zero_width(parts, metric, single)
        return assemble(parts, metric, scheme, interval, lam, level, batch_shape)
    rater_symmetric = metric in RATER_SYMMETRIC
    units: Any
    if scheme == "iid":
        units = canonical_iid_cells(flat, nested=nested, rater_symmetric=rater_symmetric)
    else:
        units = [
            canonical_cells(cells, scheme, nested=nested, rater_symmetric=rater_symmetric)
            for cells in flat
        ]
    if single:
        if scheme != "iid" and units[0].shape[0] < MIN_PERSONS:
            raise ValueError(
                f"`counts` must hold at least {MIN_PERSONS} persons with texts for scheme "
                f"{scheme!r}: {ONE_PERSON}; got {units[0].shape[0]}."
            )
        if units[0].sum() == 0:
            raise ValueError("`counts` must hold at least one text.")
    parts = resample_intervals(
        units,
        statistic,
        scheme=scheme,
        interval=interval,
        pseudo_count=lam,
        n_resamples=int(n_resamples),
        confidence_level=level,
        generators=dataset_generators(generator, len(units), bool(batch_shape)),
        batch=batch,
    )
    if single and parts["no_valid"][0]:
        raise ValueError(
            f"`metric` {metric!r} is undefined in every resample of these counts "
            "(its denominator is always zero); no interval exists."
        )
    warn_about(parts, metric, interval, int(n_resamples), single)
    warn_zero_width(parts, metric, single)
    return assemble(parts, statistic.metric, scheme, interval, lam, level, batch_shape)


def shared_bootstrap_cis(
    counts: Any,
    metrics: list[str],
    *,
    scheme: str,
    interval: str,
    pseudo_count: int,
    n_resamples: int,
    confidence_level: float,
    rng: Any,
    nested: bool,
) -> dict[str, BootstrapCI]:
    """Bootstrap intervals of several metrics of one data set, from one set of resamples.

    What :func:`perfci.report` computes its bootstrap rows with: the persons (and texts)
    are drawn once for the metrics that pool the same cells
    (:data:`perfci.metrics.CELL_POOLING`), and each of them is evaluated on the same
    resampled cells; another pooling draws again from a copy of the generator as it was
    before the first draw (the caller's generator advances as the first row's call). The
    metrics' counts must have the same cells (binary ``[tp, fp, fn, tn]`` or one k x k
    matrix) and no leading data-set axes. Persons are put in the canonical form of the
    rater-symmetric metrics (:func:`~perfci._core.replicates.canonical_cells`), so each
    rater-symmetric metric's interval is that of :func:`bootstrap_ci` with a generator in
    the same state, draw for draw; the other metrics see the same resamples with fp and fn
    in their own places, which has the same distribution as their own call's.

    Raises and warns as :func:`bootstrap_ci` does, per metric, except that a metric
    undefined in every resample is left out of the returned dict (its own call raises).
    """
    checked = [
        _bootstrap_iv(
            counts,
            metric,
            scheme,
            interval,
            pseudo_count,
            n_resamples,
            confidence_level,
            None,
            nested,
        )
        for metric in metrics
    ]
    flat, _, lam, level, exact, nested, batch_shape = checked[0]
    statistics = [statistic for _, statistic, *_ in checked]
    if exact or batch_shape or len({s.n_cells for s in statistics}) != 1:
        raise ValueError(
            "`counts` must be one data set, `n_resamples` a number and `metrics` of one "
            "kind of cells to share resamples."
        )
    generator = check_rng(rng)
    symmetric = any(metric in RATER_SYMMETRIC for metric in metrics)
    cells = canonical_cells(flat[0], scheme, nested=nested, rater_symmetric=symmetric)
    swapped = symmetric and not np.array_equal(
        cells, canonical_cells(flat[0], scheme, nested=nested, rater_symmetric=False)
    )
    if scheme != "iid" and cells.shape[0] < MIN_PERSONS:
        raise ValueError(
            f"`counts` must hold at least {MIN_PERSONS} persons with texts for scheme "
            f"{scheme!r}: {ONE_PERSON}; got {cells.shape[0]}."
        )
    if cells.sum() == 0:
        raise ValueError("`counts` must hold at least one text.")
    read = tuple(
        statistic if not swapped or statistic.metric in RATER_SYMMETRIC else unswapped(statistic)
        for statistic in statistics
    )
    # metrics that pool the same cells share one set of draws; each further set starts
    # from a copy of the generator as it was, so every row is its own call's draws
    groups: dict[tuple[int, ...] | None, list[int]] = {}
    for s, statistic in enumerate(read):
        groups.setdefault(statistic.pooling, []).append(s)
    fresh = copy.deepcopy(generator)
    every: list[dict[str, np.ndarray]] = [{} for _ in read]
    for g, members in enumerate(groups.values()):
        drawn = resample_intervals_many(
            [cells],
            tuple(read[s] for s in members),
            scheme=scheme,
            interval=interval,
            pseudo_count=lam,
            n_resamples=int(n_resamples),
            confidence_level=level,
            generators=dataset_generators(generator if g == 0 else copy.deepcopy(fresh), 1, False),
            batch=None,
        )
        for s, parts in zip(members, drawn, strict=True):
            every[s] = parts
    out = {}
    for metric, parts in zip(metrics, every, strict=True):
        if parts["no_valid"][0]:
            continue  # no interval exists: its own call says why
        warn_about(parts, metric, interval, int(n_resamples), True)
        out[metric] = assemble(parts, metric, scheme, interval, lam, level, batch_shape)
    return out


def assemble(
    parts: dict[str, np.ndarray],
    metric: str,
    scheme: str,
    interval: str,
    pseudo_count: int,
    level: float,
    batch_shape: tuple[int, ...],
) -> BootstrapCI:
    """Build a :class:`BootstrapCI` from the engine's per-data-set arrays."""
    single = not batch_shape
    replicates = parts["replicates"]  # None where only order statistics were drawn
    fell_back = (parts["fallback"] > 0) & (interval == "bca")
    reasons = np.array([BCA_FALLBACK_REASONS[int(c)] for c in parts["fallback"]], dtype=object)
    distribution = None
    if single:
        if replicates is not None:
            distribution = replicates[0][~np.isnan(replicates[0])]
        reason = reasons[0] if interval == "bca" else None
    else:
        if replicates is not None:
            distribution = replicates.reshape(*batch_shape, replicates.shape[-1])
        no_reason = np.array(None, dtype=object)
        reason = np.where(fell_back, reasons, no_reason).reshape(batch_shape)
    n_resamples = int(parts["n_resamples"] if replicates is None else replicates.shape[-1])
    return BootstrapCI(
        estimate=batch_shaped(parts["estimate"], batch_shape),
        low=batch_shaped(parts["low"], batch_shape),
        high=batch_shaped(parts["high"], batch_shape),
        confidence_level=level,
        metric=metric,
        scheme=scheme,
        interval=interval,
        pseudo_count=pseudo_count,
        n_resamples=n_resamples,
        n_invalid_resamples=batch_shaped(parts["n_invalid"], batch_shape, int),
        standard_error=batch_shaped(parts["standard_error"], batch_shape),
        distribution=distribution,
        bca_fallback=batch_shaped(fell_back, batch_shape, bool),
        fallback_reason=reason,
        bias_correction=batch_shaped(parts["bias_correction"], batch_shape),
        acceleration=batch_shaped(parts["acceleration"], batch_shape),
        n_clusters=None if scheme == "iid" else batch_shaped(parts["n_clusters"], batch_shape, int),
        n_texts=batch_shaped(parts["n_texts"], batch_shape, int),
        draws="resamples" if replicates is not None else "order_statistics",
    )
