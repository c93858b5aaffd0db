"""Bootstrap intervals of many data sets through the one engine: the glue around it.

What every bootstrap caller (:func:`perfci.bootstrap_ci`, :func:`perfci.compare`,
:func:`perfci.auc_ci`, :func:`perfci.annotator_agreement`, the subgroup differences and
runs) shares, above the draws of :mod:`perfci._core.resampling` and the interval ends of
:mod:`perfci._core.intervals`:

- a data set's canonical form (:func:`canonical_cells`), so that results do not depend on
  how persons are ordered, labelled or padded, nor, for a rater-symmetric metric, on
  which rater is "truth";
- the checks of the bootstrap options (:func:`check_bootstrap_options`,
  :func:`check_pseudo_count`);
- canonical data sets to replicates and percentile or BCa intervals
  (:func:`resample_intervals`, one dict of per-data-set arrays), the warnings they call
  for (:func:`warn_about`) and a result's fields shaped like the batch
  (:func:`batch_shaped`).

NumPy and SciPy only, as the rest of the core.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import registry
from .intervals import BCA_FALLBACK_REASONS, bca_levels, percentile_levels, type7_quantiles
from .recommended import PSEUDO_COUNT
from .resampling import (
    Statistic,
    augment,
    check_resample_count,
    check_resample_size,
    default_resamples,
    draw_replicates_batch,
    iid_jackknife,
    jackknife,
    min_resamples,
    renumbered,
)
from .streams import DataSetStreams
from .validation import (
    N_RESAMPLES,
    UndefinedMetricWarning,
    check_positive_int,
    check_rng,
    given,
    or_default,
)

__all__ = [
    "MIN_PERSONS",
    "N_RESAMPLES",
    "ONE_PERSON",
    "RATER_SYMMETRIC",
    "DegenerateBootstrapWarning",
    "batch_shaped",
    "canonical_cells",
    "canonical_iid_cells",
    "check_bootstrap_options",
    "check_pseudo_count",
    "is_positive_int",
    "resample_intervals",
    "resample_intervals_many",
    "unswapped",
    "warn_about",
    "warn_pseudo_count",
    "warn_zero_width",
]

#: Metrics unchanged when the raters swap roles (fp and fn trade places).
RATER_SYMMETRIC = frozenset({"accuracy", "f1", "ppa", "pna", "kappa", "mcc"})
#: Persons a cluster or hierarchical bootstrap needs: with one, every resample draws it.
MIN_PERSONS = 2
#: Why a data set of one person has no cluster or hierarchical interval (for messages).
ONE_PERSON = (
    "a cluster or hierarchical bootstrap of one person says nothing about the population "
    "of persons (every resample draws that person again)"
)
#: Largest pseudo count accepted: a prior of more texts than this is no smoothing.
MAX_PSEUDO_COUNT = 10**6
# Share of dropped (undefined) replicates above which a warning is raised.
_INVALID_WARN_SHARE = 0.10


class DegenerateBootstrapWarning(RuntimeWarning):
    """The bootstrap degenerated: a BCa fallback, a zero-width interval or a dominant prior."""


def _canonical_key(cells: np.ndarray, scheme: str) -> tuple:
    """Return a comparable form of cells: totals, then persons in their canonical order.

    The iid scheme adds persons up, so its totals decide alone.
    """
    flat = cells.reshape(-1, cells.shape[-1])
    totals = tuple(flat.sum(0).tolist())
    if scheme == "iid":
        return (totals,)
    return (totals, tuple(map(tuple, flat[np.lexsort(flat.T[::-1])].tolist())))


def canonical_cells(
    cells: np.ndarray, scheme: str, *, nested: bool, rater_symmetric: bool
) -> np.ndarray:
    """One data set's cells in canonical form: ``(C,)`` for iid, ``(m, C)`` otherwise.

    Persons without texts are dropped (they are not persons) and the rest sorted, so
    that the result does not depend on how persons are ordered, labelled or padded,
    draw for draw. For rater-symmetric metrics the orientation (fp and fn as given, or
    swapped) with the smaller canonical key is kept, so that swapping which rater is
    "truth" gives the very same input.
    """
    if nested:
        cells = cells[cells.sum(-1) > 0]
    if rater_symmetric:
        swapped = cells[..., [0, 2, 1, 3]]
        if _canonical_key(swapped, scheme) < _canonical_key(cells, scheme):
            cells = swapped
    if scheme == "iid":
        return cells.sum(0) if nested else cells
    return cells[np.lexsort(cells.T[::-1])]


def canonical_iid_cells(flat: np.ndarray, *, nested: bool, rater_symmetric: bool) -> np.ndarray:
    """:func:`canonical_cells` of K data sets under the iid scheme at once: ``(K, C)``.

    `flat` is ``(K, C)``, or ``(K, persons, C)`` when `nested` (the persons are added
    up). The swapped orientation's key is smaller exactly when fn < fp.
    """
    cells = flat.sum(1) if nested else flat
    if rater_symmetric:
        swap = cells[:, 2] < cells[:, 1]
        cells = np.where(swap[:, None], cells[:, [0, 2, 1, 3]], cells)
    return cells


def unswapped(statistic: Statistic) -> Statistic:
    """Return `statistic` of cells whose fp and fn were swapped, read back in place.

    A binary metric evaluated on resamples of cells put in the canonical orientation of
    the rater-symmetric metrics (:func:`canonical_cells`) sees its own fp and fn again.
    """

    def fn(cells: np.ndarray) -> np.ndarray:
        return statistic.fn(cells[..., [0, 2, 1, 3]])

    pooling = statistic.pooling
    if pooling is not None:  # the statistic's groups, read through the swap
        pooling = renumbered([pooling[i] for i in (0, 2, 1, 3)])
    return Statistic(statistic.metric, statistic.n_cells, fn, statistic.proportion, pooling)


def is_positive_int(value: Any) -> bool:
    """Whether `value` is a positive integer (bools excluded)."""
    return not isinstance(value, bool) and isinstance(value, int | np.integer) and bool(value >= 1)


def check_pseudo_count(pseudo_count: Any) -> int:
    """Return `pseudo_count` as an int after checking it is a non-negative whole number.

    One number: not a string, a boolean, an array, NaN or infinity. Policy: at most
    :data:`MAX_PSEUDO_COUNT` (a larger prior is no smoothing); larger values raise.
    """
    value = (
        pseudo_count.item()
        if isinstance(pseudo_count, np.ndarray) and not pseudo_count.ndim
        else pseudo_count
    )
    number = (
        float(value)
        if isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
        else math.nan
    )
    if not math.isfinite(number) or number < 0 or number != round(number):
        raise ValueError(
            f"`pseudo_count` must be a non-negative whole number; got {pseudo_count!r}."
        )
    if number > MAX_PSEUDO_COUNT:
        raise ValueError(
            f"`pseudo_count` must be at most {MAX_PSEUDO_COUNT:.0e} (a larger prior swamps any "
            f"data); got {pseudo_count!r}."
        )
    return int(number)


def check_bootstrap_options(
    method: str,
    scheme: Any,
    interval: Any,
    n_resamples: Any,
    rng: Any,
    batch: Any,
    confidence_level: float | None = None,
) -> tuple[str, int, np.random.Generator]:
    """Check the bootstrap options of a function whose `method` may be another interval.

    `scheme` (None for the recommended one), `interval`, `n_resamples` and `batch` are
    checked whatever the method; `interval` and `n_resamples` may be left
    :data:`~perfci._core.validation.UNSET` (``"percentile"`` and
    :func:`~perfci._core.resampling.default_resamples` of `confidence_level`, or
    :data:`~perfci._core.validation.N_RESAMPLES` without one). With a `method` other than
    ``"bootstrap"``, passing `scheme`, `interval` or `n_resamples` at all is an error (an
    option the method cannot use is never silently ignored, and passing the default value
    is passing it). With ``method="bootstrap"`` and a `confidence_level` (already
    checked), fewer resamples than its interval at that level needs are refused
    (:func:`~perfci._core.resampling.check_resample_count`); a caller that checks them
    itself leaves it None. Returns the interval, the resamples and the generator.

    Examples
    --------
    >>> from perfci._core.replicates import check_bootstrap_options
    >>> from perfci._core.validation import UNSET
    >>> check_bootstrap_options("bootstrap", "cluster", "bca", 500, 1, None)[:2]
    ('bca', 500)
    >>> check_bootstrap_options("delong", None, UNSET, UNSET, 1, None)[:2]
    ('percentile', 2000)
    >>> check_bootstrap_options("delong", None, UNSET, 2000, 1, None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: `n_resamples` is an option of the bootstrap, but `method` is 'delong'; ...
    >>> check_bootstrap_options("bootstrap", None, UNSET, 39, 1, None, 0.95)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: `n_resamples` must be at least 40 for a 95% percentile interval ...
    """
    if scheme is not None:
        registry.BOOTSTRAP_SCHEME.check(scheme)
    chosen_interval = or_default(interval, "percentile")
    registry.BOOTSTRAP_INTERVAL.check(chosen_interval)
    if given(n_resamples):
        resamples = check_positive_int("n_resamples", n_resamples)
    else:
        resamples = N_RESAMPLES if confidence_level is None else default_resamples(confidence_level)
    check_resample_size(resamples)
    generator = check_rng(rng)
    if batch is not None:
        check_positive_int("batch", batch, " or None")
    if method != "bootstrap":
        passed_options = {
            "scheme": scheme is not None,
            "interval": given(interval),
            "n_resamples": given(n_resamples),
        }
        for name, passed in passed_options.items():
            if passed:
                raise ValueError(
                    f"`{name}` is an option of the bootstrap, but `method` is {method!r}; "
                    f"leave `{name}` unset or pass method='bootstrap'."
                )
    elif confidence_level is not None:
        check_resample_count(
            resamples, confidence_level, chosen_interval, defaulted=not given(n_resamples)
        )
    return chosen_interval, resamples, generator


def resample_intervals(
    units: list[np.ndarray],
    statistic: Statistic,
    *,
    scheme: str,
    interval: str,
    pseudo_count: int,
    n_resamples: int,
    confidence_level: float,
    generators: Sequence[np.random.Generator],
    batch: int | None,
) -> dict[str, np.ndarray]:
    """Replicates and intervals of canonical data sets (``(C,)`` or ``(m, C)`` each).

    The engine path shared by :func:`perfci.bootstrap_ci`, :func:`perfci.compare`,
    the ROC AUC and agreement bootstraps. An empty
    data set (no texts) gets NaN everywhere and ``empty=True``; a data set of one person
    under a cluster scheme gets its estimate, NaN intervals and ``one_person=True``
    (nothing is drawn: see :data:`ONE_PERSON`).
    """
    [parts] = resample_intervals_many(
        units,
        (statistic,),
        scheme=scheme,
        interval=interval,
        pseudo_count=pseudo_count,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        generators=generators,
        batch=batch,
    )
    return parts


def resample_intervals_many(
    units: list[np.ndarray],
    statistics: tuple[Statistic, ...],
    *,
    scheme: str,
    interval: str,
    pseudo_count: int,
    n_resamples: int,
    confidence_level: float,
    generators: Sequence[np.random.Generator],
    batch: int | None,
) -> list[dict[str, np.ndarray]]:
    """:func:`resample_intervals` of several statistics from one set of resamples.

    Every statistic is evaluated on the same resampled cells of each data set
    (:func:`~perfci._core.resampling.draw_replicates_batch`, which draws the data sets
    one after the other, each with its own generator, and evaluates them together); one
    dict per statistic. With a single statistic the draws are those of
    :func:`~perfci._core.resampling.draw_replicates`.
    """
    size, n_stats = len(units), len(statistics)
    n_cells = statistics[0].n_cells
    n_clusters = np.zeros(size, dtype=np.int64)
    if scheme == "iid":  # one row of cells a data set: arrays, not a loop
        observed = np.asarray(units, dtype=float).reshape(size, n_cells)
    else:
        observed = np.zeros((size, n_cells))
        for k, cells in enumerate(units):
            observed[k] = cells.sum(0)
            n_clusters[k] = cells.shape[0]
    n_texts = observed.sum(-1).astype(np.int64)
    empty = n_texts == 0
    one_person = ~empty & (scheme != "iid") & (n_clusters < MIN_PERSONS)
    estimate = np.full((n_stats, size), np.nan)
    for s, statistic in enumerate(statistics):
        estimate[s, ~empty] = statistic.fn(observed[~empty])
    drawn = np.flatnonzero(~empty & ~one_person)
    samples: Any  # (K, C) for iid, else one (m, C) array a data set
    if scheme == "iid":
        samples = observed[drawn].astype(np.int64) + pseudo_count
    else:
        samples = [augment(units[k], scheme, pseudo_count) for k in drawn]
    replicates = np.full((n_stats, size, n_resamples), np.nan)
    replicates[:, drawn] = draw_replicates_batch(
        samples,
        scheme,
        n_resamples,
        statistics,
        generators.subset(drawn)
        if isinstance(generators, DataSetStreams)
        else [generators[int(k)] for k in drawn],
        batch=batch,
    )
    theta_hat = np.full((n_stats, size), np.nan)
    # leave-one-out values and weights (statistic, data set, left out): a text of each
    # kind (iid; weight 0 where a kind has no text) or each person (0 past the last)
    width = n_cells if scheme == "iid" else max((len(u) for u in samples), default=0)
    jack_values = np.zeros((n_stats, size, width if interval == "bca" else 0))
    jack_weights = np.zeros_like(jack_values)
    if interval == "bca" and scheme == "iid":
        augmented = np.asarray(samples, dtype=float).reshape(-1, n_cells)
        for s, statistic in enumerate(statistics):
            theta_hat[s, drawn] = statistic.fn(augmented)
            jack_values[s, drawn], jack_weights[s, drawn] = iid_jackknife(augmented, statistic)
    elif interval == "bca":
        for j, augmented in zip(drawn.tolist(), samples, strict=True):
            for s, statistic in enumerate(statistics):
                theta_hat[s, j] = statistic.fn(augmented.sum(0).astype(float))
                values, weights = jackknife(augmented, scheme, statistic)
                jack_values[s, j, : values.size] = values
                jack_weights[s, j, : values.size] = weights
    return [
        _intervals(
            replicates[s],
            estimate[s],
            theta_hat[s],
            jack_values[s],
            jack_weights[s],
            interval=interval,
            n_resamples=n_resamples,
            confidence_level=confidence_level,
            empty=empty,
            one_person=one_person,
            n_texts=n_texts,
            n_clusters=n_clusters,
        )
        for s in range(n_stats)
    ]


def _intervals(
    replicates: np.ndarray,
    estimate: np.ndarray,
    theta_hat: np.ndarray,
    jack_values: np.ndarray,
    jack_weights: np.ndarray,
    *,
    interval: str,
    n_resamples: int,
    confidence_level: float,
    empty: np.ndarray,
    one_person: np.ndarray,
    n_texts: np.ndarray,
    n_clusters: np.ndarray,
) -> dict[str, np.ndarray]:
    """Percentile or BCa intervals of one statistic's replicates ``(data sets, B)``."""
    size = replicates.shape[0]
    n_valid = np.sum(~np.isnan(replicates), -1)
    no_valid = (n_valid == 0) & ~empty & ~one_person
    levels = percentile_levels(confidence_level, size)
    z0 = np.full(size, np.nan)
    a = np.full(size, np.nan)
    fallback = np.zeros(size, dtype=np.int64)
    if interval == "bca":
        usable = ~empty & ~no_valid & ~one_person
        if usable.any():
            bca = bca_levels(
                replicates[usable],
                theta_hat[usable],
                jack_values[usable],
                jack_weights[usable],
                confidence_level,
            )
            levels[usable] = bca.levels
            z0[usable] = bca.bias_correction
            a[usable] = bca.acceleration
            fallback[usable] = bca.fallback
    ends = type7_quantiles(replicates, levels)
    # too few defined replicates for the tails the level asks for: no interval (warned)
    few_valid = (n_valid > 0) & (n_valid < min_resamples(confidence_level))
    ends[few_valid] = np.nan
    complete = n_valid == replicates.shape[-1]
    se = np.full(size, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows with fewer than 2 values
        if complete.all():  # no NaN to skip: the plain SD, without nanstd's copies
            se = replicates.std(axis=-1, ddof=1) if replicates.shape[-1] > 1 else se
        else:
            se = np.nanstd(replicates, axis=-1, ddof=1)
    se = np.where(n_valid > 1, se, np.nan)
    return {
        "estimate": estimate,
        "low": ends[:, 0],
        "high": ends[:, 1],
        "replicates": replicates,
        "n_invalid": n_resamples - n_valid,
        "standard_error": se,
        "bias_correction": z0,
        "acceleration": a,
        "fallback": fallback,
        "empty": empty,
        "one_person": one_person,
        "no_valid": no_valid,
        "few_valid": few_valid,
        "min_valid": np.full(size, min_resamples(confidence_level)),
        "n_texts": n_texts,
        "n_clusters": n_clusters,
    }


def warn_about(
    parts: dict[str, np.ndarray], metric: str, interval: str, n_resamples: int, single: bool
) -> None:
    """Warn once per kind: undefined estimates, many dropped resamples, BCa fallbacks."""
    sets = parts["estimate"].size
    where = "" if single else " data sets"
    undefined = np.isnan(parts["estimate"]) & ~parts["empty"]
    drawn = ~parts["empty"] & ~parts["one_person"]
    if undefined.any():
        what = "the observed counts" if single else f"{int(undefined.sum())} of {sets}{where}"
        warnings.warn(
            f"{metric} is undefined on {what}; the estimate is NaN.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    many = (parts["n_invalid"] > _INVALID_WARN_SHARE * n_resamples) & drawn
    if single and many.any():
        n_invalid = int(parts["n_invalid"][0])
        warnings.warn(
            f"{metric} was undefined in {n_invalid} of {n_resamples} resamples "
            f"({100 * n_invalid / n_resamples:.1f}%); they were dropped.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    elif many.any():
        warnings.warn(
            f"{metric} was undefined in more than {100 * _INVALID_WARN_SHARE:.0f}% of the "
            f"resamples of {int(many.sum())} of {sets} data sets; they were dropped.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    if not single and (parts["empty"] | parts["no_valid"]).any():
        warnings.warn(
            f"{int((parts['empty'] | parts['no_valid']).sum())} of {sets} data sets have no "
            f"texts or a {metric} undefined in every resample; their intervals are NaN.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    if not single and parts["one_person"].any():
        warnings.warn(
            f"{int(parts['one_person'].sum())} of {sets} data sets have a single person with "
            f"texts: {ONE_PERSON}; their intervals are NaN.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    few = parts.get("few_valid")
    if few is not None and few.any():
        need = int(parts["min_valid"].max())
        if single:
            valid = n_resamples - int(parts["n_invalid"][0])
            what = f"in only {valid} of {n_resamples} resamples"
        else:
            what = f"in fewer resamples than that in {int(few.sum())} of {sets} data sets"
        warnings.warn(
            f"an interval at this level needs {need} resamples where {metric} is defined; "
            f"it is defined {what}. The interval is NaN: draw more resamples.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    fell_back = parts["fallback"] > 0
    if interval == "bca" and fell_back.any():
        if single:
            reason = BCA_FALLBACK_REASONS[int(parts["fallback"][0])]
            message = f"BCa interval not available ({reason}); returning the percentile interval."
        else:
            message = (
                f"BCa interval not available for {int(fell_back.sum())} of {sets} data sets; "
                "the percentile interval is returned for them (see `fallback_reason`)."
            )
        warnings.warn(message, DegenerateBootstrapWarning, stacklevel=3)


def warn_zero_width(parts: dict[str, np.ndarray], metric: str, single: bool) -> None:
    """Warn of finite bootstrap intervals of zero width; the intervals are kept.

    Policy: every resample giving the same value is no evidence of certainty, so a
    zero-width interval warns with :class:`DegenerateBootstrapWarning`, suggesting the
    recommended pseudo count or an analytic interval, and is still returned. An interval
    of zero width whose resamples vary (a level near 0 reads two neighbouring order
    statistics that are equal) is what the level asks for, and does not warn.
    """
    low, high = np.asarray(parts["low"], float), np.asarray(parts["high"], float)
    zero = np.isfinite(low) & (low == high)
    if "standard_error" in parts:  # the resamples' SD: 0 where every resample was equal
        se = np.asarray(parts["standard_error"], float).reshape(zero.shape)
        zero &= ~(se > 0)
    if not zero.any():
        return
    what = "" if single else f" for {int(zero.sum())} of {zero.size} data sets"
    warnings.warn(
        f"the {metric} bootstrap interval has zero width{what}: every resample gave the "
        f"same value, which does not show certainty; consider pseudo_count={PSEUDO_COUNT} "
        "(the recommended one) or an analytic interval.",
        DegenerateBootstrapWarning,
        stacklevel=3,
    )


def warn_pseudo_count(texts: np.ndarray, added: int, single: bool) -> None:
    """Warn where the pseudo count adds more texts than a data set holds.

    Policy: a prior of more texts than the data (`added`, the pseudo count times the
    cells it is added to) dominates the interval, so it warns with
    :class:`DegenerateBootstrapWarning`; the interval is still returned.
    """
    texts = np.asarray(texts, float).reshape(-1)
    over = (texts > 0) & (added > texts)
    if not added or not over.any():
        return
    what = (
        f"the data's {int(texts[over][0])}"
        if single
        else f"those of {int(over.sum())} of {texts.size} data sets"
    )
    warnings.warn(
        f"the pseudo count adds {added} texts, more than {what}: the prior dominates "
        "the interval; use a smaller `pseudo_count`.",
        DegenerateBootstrapWarning,
        stacklevel=3,
    )


def batch_shaped(values: Any, batch_shape: tuple[int, ...], kind: type = float) -> Any:
    """Return a float, int or bool for a single data set, else an array of the batch shape."""
    values = np.asarray(values)
    if not batch_shape:
        return kind(values.reshape(-1)[0])
    return values.reshape(batch_shape)
