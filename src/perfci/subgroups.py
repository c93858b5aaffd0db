"""Intervals for differences of a metric between subgroups (fairness, sites, cohorts).

A subgroup is a set of texts (a site, a gender, a language), and the question is how
much a classifier's metric differs between subgroups: the difference of each subgroup's
metric from a reference subgroup's, with an interval. The subgroups are disjoint samples,
so the two metrics of a difference are independent (on nested texts: the persons are
nested in the subgroups), and the variance of a difference is the sum of two variances.
Three intervals of ``metric(subgroup) - metric(reference)``:

- Newcombe's hybrid score interval (Newcombe 1998, method 10) for a proportion metric on
  independent texts: the Wilson interval of each proportion, combined by square-and-add;
- the cluster-robust (linearization) interval: each subgroup's variance is that of a
  ratio estimator with its persons as clusters (each text a cluster without persons),
  with a t quantile on the smaller effective number of persons - 1 degrees of freedom;
- the bootstrap: each subgroup resampled on its own (texts, or persons for nested texts),
  and the interval the percentile interval of the replicate differences.

With more than two subgroups every difference shares the reference, so the differences
are correlated; a simultaneous band (Bonferroni, or the max-t critical value of
Dunnett's many-to-one comparisons) covers all of them at once at the stated level.

The intervals themselves, on counts, are in :mod:`perfci.two_sample` and the max-t
critical value in :mod:`perfci.simultaneous`; this module applies the policy to them.
:func:`compare_groups_counts` compares one subgroup with the reference on counts, batched
over data sets; :func:`compare_groups_table` gives every subgroup against the reference
from per-subgroup counts (:func:`subgroup_levels` and :func:`subgroup_cells` make them
from labels); :func:`compare_groups` takes labels and returns that table.
:func:`perfci.policy.recommended_group_difference` says which interval
``method="recommended"`` is.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from . import policy
from ._core import registry
from ._core.labels import as_label_array, check_aligned, listing, plain, same_label, sorted_labels
from ._core.resampling import check_resample_count, default_resamples
from ._core.validation import (
    UNSET,
    UndefinedMetricWarning,
    Unset,
    check_confidence_level,
    check_label,
    check_positive_int,
    check_real_array,
    check_rng,
    dataset_generators,
    given,
    or_default,
)
from .bootstrap import check_resample_size
from .counting import factorize_sorted, normalize_labels
from .metrics import PROPORTION_METRICS, difference_bound
from .policy import RECOMMENDED
from .simultaneous import max_t_critical_value, simultaneous_band
from .two_sample import (
    GroupDifference,
    Sides,
    difference_ends,
    difference_se,
    newcombe_interval,
    replicates_of,
    sides_of,
    undefined_reasons,
)
from .weighted_tables import design_given, weighted_group_differences

__all__ = [
    "FEW_EFFECTIVE_PERSONS",
    "GROUP_METHODS",
    "SIMULTANEOUS_BANDS",
    "GroupDifference",
    "compare_groups",
    "compare_groups_counts",
    "compare_groups_table",
    "few_effective_note",
    "max_t_critical_value",
    "newcombe_interval",
    "subgroup_cells",
    "subgroup_levels",
]

#: Interval methods of :func:`compare_groups` (:data:`perfci._core.registry.GROUP_METHOD`).
GROUP_METHODS: tuple[str, ...] = registry.GROUP_METHOD.names
#: Simultaneous bands of :func:`compare_groups` (:data:`perfci._core.registry.SIMULTANEOUS`).
SIMULTANEOUS_BANDS: tuple[str, ...] = registry.SIMULTANEOUS.names

#: The columns of :func:`compare_groups`' table (the simultaneous band's are added when
#: one is asked for).
COLUMNS = (
    "subgroup",
    "reference",
    "metric",
    "estimate",
    "estimate_reference",
    "difference",
    "low",
    "high",
    "relevant_n",
    "relevant_n_reference",
    "persons",
    "persons_reference",
    "method",
    "se",
    "df",
    "effective_persons",
    "effective_persons_reference",
)

#: Effective persons :math:`G^*` below which a subgroup's difference gets a note (and a
#: warning) saying that its interval rests on few persons. The cluster-robust interval
#: has :math:`\min(G^*) - 1` df, at least 1: below 5 effective persons it has at most 3
#: df, and the t quantile (3.18 at 3 df, 12.7 at 1) makes it wide by necessity, however
#: many texts the persons hold (a rule of thumb like :data:`perfci.report_table.FEW_PERSONS`,
#: not a choice of method).
FEW_EFFECTIVE_PERSONS = 5.0

# Share of dropped (undefined) replicate differences above which a warning is raised.
_INVALID_WARN_SHARE = 0.10


# --------------------------------------------------------------------- the policy's choice


def _label(method: str, nested: bool, scheme: str | None) -> str:
    if method == "newcombe":
        return "Newcombe hybrid score interval (independent texts)"
    if method == "cluster_robust":
        if nested:
            return "cluster-robust linearization (persons as clusters, t with min G* - 1 df)"
        return "cluster-robust linearization (each text a cluster, t with min n - 1 df)"
    return (
        f"independent bootstrap of each subgroup (scheme={scheme}, interval=percentile, "
        f"pseudo_count={policy.PSEUDO_COUNT})"
    )


def _choose(metric: str, method: str, nested: bool, n_resamples: Any, level: float) -> str:
    """Return the method; refuse `n_resamples` without the bootstrap, or too few with it."""
    chosen = (
        policy.recommended_group_difference(metric, nested) if method == RECOMMENDED else method
    )
    how = f"{chosen!r} (the recommended method)" if method == RECOMMENDED else repr(chosen)
    if chosen == "newcombe":
        if metric not in PROPORTION_METRICS:
            raise ValueError(
                f"`method` 'newcombe' is an interval for a difference of proportions "
                f"({', '.join(PROPORTION_METRICS)}); {metric} is not one. Use "
                "method='bootstrap', 'cluster_robust' or 'recommended'."
            )
        if nested:
            raise ValueError(
                "`method` 'newcombe' treats the texts as independent; with `groups` (texts "
                "nested in persons) use method='cluster_robust', 'bootstrap' or 'recommended'."
            )
    if chosen != "bootstrap" and given(n_resamples):
        raise ValueError(
            f"`n_resamples` is an option of the bootstrap, but this comparison uses {how}; "
            "leave `n_resamples` unset or pass method='bootstrap'."
        )
    if chosen == "bootstrap":
        resamples = or_default(n_resamples, default_resamples(level))
        check_resample_count(resamples, level, defaulted=not given(n_resamples))
    return chosen


def _scheme(relevant_n: np.ndarray, persons: np.ndarray | None) -> str:
    if persons is None:
        return "iid"
    per_person = float(relevant_n.sum()) / max(1, int(persons.sum()))
    return policy.recommended_scheme(max(1.0, per_person))


def _common_iv(
    metric: Any,
    method: Any,
    confidence_level: Any,
    n_resamples: Any,
    rng: Any,
) -> tuple[float, int | Unset, np.random.Generator]:
    registry.BINARY_METRIC.check(metric)
    registry.GROUP_METHOD.check(method)
    level = float(check_confidence_level(confidence_level, scalar=True))
    if given(n_resamples):  # left UNSET, it stays so: only the bootstrap may be given it
        n_resamples = check_positive_int("n_resamples", n_resamples)
        check_resample_size(n_resamples)
    return level, n_resamples, check_rng(rng)


def _replicates(
    cells: np.ndarray, metric: str, scheme: str, n_resamples: int, generator: np.random.Generator
) -> np.ndarray:
    """One subgroup's bootstrap replicates, with the policy's pseudo count."""
    return replicates_of(cells, metric, scheme, n_resamples, generator, policy.PSEUDO_COUNT)


def _warn(message: str, stacklevel: int = 3) -> None:
    """Warn the caller of the public function (`stacklevel` counts from here)."""
    warnings.warn(message, UndefinedMetricWarning, stacklevel=stacklevel)


# ----------------------------------------------------------- one difference, on counts


def _check_cells(name: str, value: Any, nested: bool) -> np.ndarray:
    cells = check_real_array(name, value)
    need = 2 if nested else 1
    if cells.ndim < need or cells.shape[-1] != 4:
        shape = "(*batch, persons, 4)" if nested else "(*batch, 4)"
        raise ValueError(
            f"`{name}` must hold [tp, fp, fn, tn] with shape {shape}; got {cells.shape}."
        )
    if np.any(cells < 0) or np.any(cells != np.round(cells)):
        raise ValueError(f"`{name}` must hold whole non-negative numbers of texts.")
    return cells


def compare_groups_counts(
    counts: Any,
    reference_counts: Any,
    metric: str,
    *,
    nested: bool = False,
    method: str = RECOMMENDED,
    confidence_level: float = 0.95,
    n_resamples: int | Unset = UNSET,
    rng: Any = None,
) -> GroupDifference:
    r"""Compare a metric between two subgroups, from their counts.

    What :func:`compare_groups` computes for one subgroup and the reference after the
    labels are counted, batched over data sets.

    Parameters
    ----------
    counts, reference_counts : array_like of int
        Confusion-matrix cells ``[tp, fp, fn, tn]`` of the subgroup and of the reference:
        shape ``(*batch, 4)``, or with ``nested=True`` ``(*batch, persons, 4)`` per person
        (the two may have different numbers of persons; persons with no text are not
        persons, so a ragged batch can be padded with them). The batch shapes must agree.
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`).
    nested : bool, default False
        Whether the second-to-last axis is persons.
    method, confidence_level, n_resamples
        As in :func:`compare_groups`.
    rng : numpy.random.Generator, int or None
        Random generator or seed of the bootstrap. Data set k of a batch of K uses
        ``perfci.batch_generators(rng, K)[k]`` (a single data set the generator
        itself), which spawns two streams: the subgroup's, then the reference's.

    Returns
    -------
    GroupDifference
        Fields of the batch's shape.

    Raises
    ------
    ValueError
        For counts that are not whole non-negative numbers with four cells last, batch
        shapes that differ, and as :func:`compare_groups`.

    Warns
    -----
    UndefinedMetricWarning
        Once per kind, naming how many data sets: a side with no relevant texts (or an
        undefined metric), fewer than 2 persons with a relevant text, a cluster-robust
        standard error of 0, or many undefined bootstrap differences; those intervals are
        NaN. Also (nested) a side with fewer than :data:`FEW_EFFECTIVE_PERSONS` effective
        persons, whose interval is wide by necessity.

    Examples
    --------
    >>> from perfci.subgroups import compare_groups_counts
    >>> result = compare_groups_counts([40, 5, 10, 45], [60, 4, 5, 31], "recall")
    >>> print(f"{result.difference:.3f} [{result.low:.3f}, {result.high:.3f}]")
    -0.123 [-0.261, 0.003]
    """
    level, n_resamples, root = _common_iv(metric, method, confidence_level, n_resamples, rng)
    if not isinstance(nested, bool):
        raise ValueError(f"`nested` must be True or False; got {nested!r}.")
    cells = _check_cells("counts", counts, nested)
    ref = _check_cells("reference_counts", reference_counts, nested)
    cut = -2 if nested else -1
    batch_shape = cells.shape[:cut]
    if ref.shape[:cut] != batch_shape:
        raise ValueError(
            f"`reference_counts` must have the batch shape of `counts` ({batch_shape}); got "
            f"{ref.shape[:cut]}."
        )
    chosen = _choose(metric, method, nested, n_resamples, level)
    resamples = int(or_default(n_resamples, default_resamples(level)))
    sets = math.prod(batch_shape)
    flat = cells.reshape(sets, *cells.shape[cut:])
    flat_ref = ref.reshape(sets, *ref.shape[cut:])
    side, reference = sides_of(flat, metric, nested), sides_of(flat_ref, metric, nested)
    single = not batch_shape
    scheme = None
    differences = None
    if chosen == "bootstrap":
        scheme = _scheme(
            np.concatenate([side.relevant_n, reference.relevant_n]),
            None
            if side.persons is None or reference.persons is None
            else np.concatenate([side.persons, reference.persons]),
        )
        differences = np.empty((sets, resamples))
        for k, generator in enumerate(dataset_generators(root, sets, not single)):
            mine, theirs = generator.spawn(2)
            differences[k] = _replicates(flat[k], metric, scheme, resamples, mine) - _replicates(
                flat_ref[k], metric, scheme, resamples, theirs
            )
    problems = undefined_reasons(side, reference, nested, metric, chosen)
    bad = np.array([bool(p) for p in problems], dtype=bool)
    low, high = difference_ends(
        chosen, side, reference, differences, level, bound=difference_bound(metric)
    )
    low, high = np.where(bad, np.nan, low), np.where(bad, np.nan, high)
    se, df = difference_se(chosen, side, reference, differences)
    n_invalid = np.zeros(sets, dtype=np.int64)
    if differences is not None:
        n_invalid = np.sum(np.isnan(differences), -1)
    _warn_about(problems, chosen, se, n_invalid, resamples, bad, metric, single)
    if nested:
        _warn_few_effective(side, reference, df, ~np.isnan(low), metric, single)

    def shaped(values: Any, kind: type = float) -> Any:
        values = np.asarray(values)
        return kind(values.reshape(-1)[0]) if single else values.reshape(batch_shape)

    return GroupDifference(
        metric=metric,
        estimate_subgroup=shaped(side.estimate),
        estimate_reference=shaped(reference.estimate),
        difference=shaped(side.estimate - reference.estimate),
        low=shaped(low),
        high=shaped(high),
        confidence_level=level,
        method=_label(chosen, nested, scheme),
        standard_error=shaped(np.where(bad, np.nan, se)),
        df=shaped(np.where(bad, np.nan, df)),
        relevant_n=shaped(side.relevant_n, int),
        relevant_n_reference=shaped(reference.relevant_n, int),
        persons=None if side.persons is None else shaped(side.persons, int),
        persons_reference=None if reference.persons is None else shaped(reference.persons, int),
        n_invalid_resamples=shaped(n_invalid, int),
        effective_persons=shaped(side.effective_persons) if nested else None,
        effective_persons_reference=shaped(reference.effective_persons) if nested else None,
    )


def _warn_about(
    problems: list[str],
    chosen: str,
    se: np.ndarray,
    n_invalid: np.ndarray,
    n_resamples: int,
    bad: np.ndarray,
    metric: str,
    single: bool,
) -> None:
    sets = len(problems)
    if bad.any():
        what = problems[0] if single else f"{int(bad.sum())} of {sets} data sets"
        _warn(f"the {metric} difference is undefined ({what}); returning NaN.", 4)
    if chosen == "cluster_robust":
        zero = (se == 0) & ~bad
        if zero.any():
            what = "" if single else f" for {int(zero.sum())} of {sets} data sets"
            _warn(
                f"the cluster-robust interval of the {metric} difference is undefined{what}: "
                "its standard error is zero (both subgroups without variation), and a "
                "zero-width interval would claim certainty the data do not give; returning NaN.",
                4,
            )
    if chosen == "bootstrap":
        many = (n_invalid > _INVALID_WARN_SHARE * n_resamples) & ~bad
        if many.any():
            what = (
                f"{int(n_invalid[0])} of {n_resamples} resamples"
                if single
                else f"more than {100 * _INVALID_WARN_SHARE:.0f}% of the resamples of "
                f"{int(many.sum())} of {sets} data sets"
            )
            _warn(f"the {metric} difference was undefined in {what}; they were dropped.", 4)


def _few_effective(side: Sides, reference: Sides, defined: np.ndarray) -> np.ndarray:
    """Return where a defined difference has a side under :data:`FEW_EFFECTIVE_PERSONS`."""
    with np.errstate(invalid="ignore"):
        few = np.minimum(side.effective_persons, reference.effective_persons)
        return defined & (few < FEW_EFFECTIVE_PERSONS)


def _few_sides(named: list[tuple[str, Sides]], i: int) -> list[tuple[str, float]]:
    """Return the name and G* of the sides of difference `i` under the threshold."""
    effective = [(name, float(s.effective_persons[i])) for name, s in named]
    return [(name, g) for name, g in effective if g < FEW_EFFECTIVE_PERSONS]


def _df_text(df: float) -> str:
    return f"{df:.1f}".removesuffix(".0")


def few_effective_note(sides: list[tuple[str, float]], df: float) -> str:
    """Return the note of a difference whose sides rest on few effective persons.

    `sides` holds the name and G* of each side under :data:`FEW_EFFECTIVE_PERSONS` (one
    or two), `df` the interval's df (NaN for the bootstrap).

    Examples
    --------
    >>> from perfci.subgroups import few_effective_note
    >>> few_effective_note([("subgroup 'x'", 2.31)], 1.31)
    "subgroup 'x' rests on 2.3 effective persons (df 1.3): its interval is wide by necessity"
    """
    names = " and ".join(name for name, _ in sides)
    values = " and ".join(f"{g:.1f}" for _, g in sides)
    verb = "rests" if len(sides) == 1 else "rest"
    its = "its" if len(sides) == 1 else "the"
    if np.isfinite(df):
        return (
            f"{names} {verb} on {values} effective persons (df {_df_text(df)}): {its} "
            "interval is wide by necessity"
        )
    return (
        f"{names} {verb} on {values} effective persons: too few for an interval about new "
        f"persons to be sure of its width; read {its} interval as approximate"
    )


def _warn_few_effective(
    side: Sides, reference: Sides, df: np.ndarray, defined: np.ndarray, metric: str, single: bool
) -> None:
    """Warn of the data sets whose difference rests on few effective persons."""
    few = _few_effective(side, reference, defined)
    if not few.any():
        return
    if single:
        named = [("the subgroup", side), ("the reference", reference)]
        what = few_effective_note(_few_sides(named, 0), float(df[0]))
    else:
        what = (
            f"{int(few.sum())} of {few.size} data sets have a side with fewer than "
            f"{FEW_EFFECTIVE_PERSONS:g} effective persons: their intervals are wide by necessity"
        )
    _warn(f"the {metric} difference: {what}.", 4)


# ------------------------------------------------------ every subgroup against the reference


def _compare_groups_iv(
    metric: Any,
    method: Any,
    simultaneous: Any,
    reference: Any,
    positive: Any,
    confidence_level: Any,
    n_resamples: Any,
    rng: Any,
) -> tuple[float, int, np.random.Generator]:
    """Check the options of :func:`compare_groups` (the labels are checked where read)."""
    level, n_resamples, root = _common_iv(metric, method, confidence_level, n_resamples, rng)
    registry.SIMULTANEOUS.check(simultaneous)
    check_label("reference", reference)
    check_label("positive", positive)
    return level, n_resamples, root


def subgroup_levels(by: np.ndarray, reference: Any) -> tuple[list[Any], Any]:
    """Return the subgroups of `by` in sorted order and the reference (first, unless given).

    Raises a ValueError for fewer than 2 subgroups, or a `reference` that is not one.
    """
    levels = sorted_labels(pd.unique(by))
    if len(levels) < 2:
        raise ValueError(f"`by` must hold at least 2 subgroups to compare; got one, {levels[0]!r}.")
    if reference is None:
        return levels, levels[0]
    found = [v for v in levels if same_label(v, reference)]
    if not found:
        raise ValueError(f"`reference` {reference!r} is not one of the subgroups {levels!r}.")
    return levels, found[0]


def _check_nesting(person: np.ndarray, b: np.ndarray) -> None:
    spans = pd.DataFrame({"person": person, "by": b}).groupby("person", sort=True)["by"]
    counts = spans.nunique()
    crossed = counts[counts > 1]
    if len(crossed):
        first = crossed.index[0]
        seen = listing(sorted_labels(pd.unique(b[person == first])))
        raise ValueError(
            f"`groups` must nest persons in the subgroups of `by`, a person in one subgroup; "
            f"person {plain(first)!r} has texts in subgroups {seen} ({len(crossed)} of "
            f"{len(counts)} persons span subgroups). Compare without `groups`, or by a "
            "subgroup of persons."
        )


def subgroup_cells(
    t: np.ndarray,
    p: np.ndarray,
    by: np.ndarray,
    person: np.ndarray | None,
    positive: Any,
    levels: list[Any],
) -> np.ndarray:
    """Cells per subgroup ``(L, 4)``, or per subgroup and person ``(L, persons, 4)``.

    Of checked labels, one per text, in the order of `levels` (:func:`subgroup_levels`);
    with `person`, a person with texts in two subgroups is refused (a ValueError): the
    persons must be nested in the subgroups.
    """
    if person is not None:
        _check_nesting(person, by)
    pos_t, pos_p = t == positive, p == positive
    cell = np.where(pos_t, np.where(pos_p, 0, 2), np.where(pos_p, 1, 3))
    level_index = np.empty(by.size, dtype=np.int64)
    for i, value in enumerate(levels):
        level_index[by == value] = i
    size = len(levels)
    if person is None:
        return np.bincount(level_index * 4 + cell, minlength=size * 4).reshape(size, 4)
    _, pid = factorize_sorted(person)
    # persons are nested in subgroups: number them within their subgroup
    within = np.zeros(by.size, dtype=np.int64)
    width = 1
    for i in range(size):
        mask = level_index == i
        _, local = factorize_sorted(pid[mask])
        within[mask] = local
        width = max(width, int(local.max()) + 1 if local.size else 1)
    flat = (level_index * width + within) * 4 + cell
    return np.bincount(flat, minlength=size * width * 4).reshape(size, width, 4)


def compare_groups_table(
    cells: Any,
    levels: list[Any],
    reference: Any,
    metric: str,
    *,
    nested: bool,
    method: str,
    simultaneous: str | None,
    level: float,
    n_resamples: int | Unset,
    rng: np.random.Generator,
) -> tuple[pd.DataFrame, list[str]]:
    """Return the table of :func:`compare_groups` from per-subgroup counts, and a note per row.

    Parameters
    ----------
    cells : array_like
        Cells ``[tp, fp, fn, tn]`` per subgroup, ``(L, 4)``, or with `nested` per subgroup
        and person, ``(L, persons, 4)`` (:func:`subgroup_cells`).
    levels : list
        The L subgroups, in the order of `cells` (:func:`subgroup_levels`).
    reference : object
        The reference subgroup, one of `levels`.
    metric : str
        A binary metric.
    nested : bool
        Whether `cells` are per person.
    method, simultaneous, n_resamples
        As in :func:`compare_groups`, checked (`n_resamples` may be left UNSET).
    level : float
        The confidence level, checked.
    rng : numpy.random.Generator
        The bootstrap's generator: subgroup i of `levels` draws from ``rng.spawn(L)[i]``.

    Returns
    -------
    table : pandas.DataFrame
        As :func:`compare_groups` returns it.
    notes : list of str
        Per row, why it is NaN, or what its interval rests on ("" where nothing needs
        saying): :func:`compare_groups` warns with them, :func:`perfci.report` puts them in
        its notes.
    """
    chosen = _choose(metric, method, nested, n_resamples, level)
    resamples = int(or_default(n_resamples, default_resamples(level)))
    cells = np.asarray(cells, dtype=float)
    sides = sides_of(cells, metric, nested)
    r = levels.index(reference)
    others = [i for i in range(len(levels)) if i != r]
    side, reference_side = sides.take(others), sides.take([r] * len(others))
    scheme = replicates = differences = None
    if chosen == "bootstrap":
        scheme = _scheme(sides.relevant_n, sides.persons)
        generators = rng.spawn(len(levels))
        replicates = np.stack(
            [
                _replicates(cells[i], metric, scheme, resamples, generators[i])
                for i in range(len(levels))
            ]
        )
        differences = replicates[others] - replicates[r]
    problems = undefined_reasons(side, reference_side, nested, metric, chosen)
    bad = np.array([bool(why) for why in problems], dtype=bool)
    low, high = difference_ends(
        chosen, side, reference_side, differences, level, bound=difference_bound(metric)
    )
    se, df = difference_se(chosen, side, reference_side, differences)
    se, df = np.where(bad, np.nan, se), np.where(bad, np.nan, df)
    subgroups = [levels[i] for i in others]
    row_notes, bad = _row_notes(
        problems,
        chosen,
        side,
        reference_side,
        se,
        bad,
        subgroups,
        reference,
        differences,
        resamples,
    )
    low, high = np.where(bad, np.nan, low), np.where(bad, np.nan, high)
    if nested:
        _note_few_effective(row_notes, side, reference_side, df, ~bad, subgroups, reference)
    table = pd.DataFrame(
        {
            "subgroup": pd.Series(subgroups, dtype=object),
            "reference": pd.Series([reference] * len(others), dtype=object),
            "metric": metric,
            "estimate": side.estimate,
            "estimate_reference": reference_side.estimate,
            "difference": side.estimate - reference_side.estimate,
            "low": low,
            "high": high,
            "relevant_n": side.relevant_n,
            "relevant_n_reference": reference_side.relevant_n,
            "persons": _persons(side, len(others)),
            "persons_reference": _persons(reference_side, len(others)),
            "method": _label(chosen, nested, scheme),
            "se": se,
            "df": df,
            "effective_persons": side.effective_persons,
            "effective_persons_reference": reference_side.effective_persons,
        }
    )
    attrs: dict[str, Any] = {
        "confidence_level": level,
        "simultaneous": simultaneous,
        "comparisons": int((~bad).sum()),
    }
    if simultaneous is not None:
        good = ~bad & (se > 0) if chosen == "cluster_robust" else ~bad
        band_low, band_high, band = simultaneous_band(
            simultaneous, chosen, metric, sides, others, r, good, replicates, level
        )
        table["low_simultaneous"] = band_low
        table["high_simultaneous"] = band_high
        attrs.update(band)
    table.attrs.update(attrs)
    return table, row_notes


def _persons(side: Sides, rows: int) -> Any:
    """Return the persons column of a side: missing values without persons."""
    return pd.array([pd.NA] * rows if side.persons is None else side.persons, dtype="Int64")


def _note_few_effective(
    row_notes: list[str],
    side: Sides,
    reference_side: Sides,
    df: np.ndarray,
    defined: np.ndarray,
    subgroups: list[Any],
    reference: Any,
) -> None:
    """Add to each row's note that it rests on few effective persons, where it does."""
    for i in np.flatnonzero(_few_effective(side, reference_side, defined)):
        named = [
            (f"subgroup {subgroups[i]!r}", side),
            (f"the reference {reference!r}", reference_side),
        ]
        note = few_effective_note(_few_sides(named, int(i)), float(df[i]))
        row_notes[i] = f"{row_notes[i]}; {note}" if row_notes[i] else note


def _row_notes(
    problems: list[str],
    chosen: str,
    side: Sides,
    reference_side: Sides,
    se: np.ndarray,
    bad: np.ndarray,
    subgroups: list[Any],
    reference: Any,
    differences: np.ndarray | None,
    n_resamples: int,
) -> tuple[list[str], np.ndarray]:
    """Say what each row's number rests on, or why it is NaN; return the notes and NaN rows.

    A cluster-robust standard error of zero makes a row NaN too.
    """
    # what each row's number rests on, or why it is NaN: the warnings (and report's notes)
    row_notes = list(problems)
    if chosen == "cluster_robust":
        zero = (se == 0) & ~bad
        for i in np.flatnonzero(zero):
            row_notes[i] = (
                "its cluster-robust standard error is zero (neither subgroup varies), and a "
                "zero-width interval would claim certainty the data do not give"
            )
        bad = bad | zero
        for i in np.flatnonzero(((side.variance == 0) ^ (reference_side.variance == 0)) & ~bad):
            still = subgroups[i] if side.variance[i] == 0 else reference
            other = reference if side.variance[i] == 0 else subgroups[i]
            row_notes[i] = (
                f"the cluster-robust variance of {still!r} is zero (an estimate of 0 or 1, or "
                f"every person alike): the interval rests on {other!r}'s variance alone"
            )
    if differences is not None:
        n_invalid = np.sum(np.isnan(differences), -1)
        for i in np.flatnonzero((n_invalid > _INVALID_WARN_SHARE * n_resamples) & ~bad):
            row_notes[i] = (
                f"the difference was undefined in {int(n_invalid[i])} of {n_resamples} "
                "resamples; they were dropped"
            )
    return row_notes, bad


def compare_groups(
    y_true: Any,
    y_pred: Any,
    metric: str,
    by: Any,
    *,
    groups: Any = None,
    reference: Any = None,
    confidence_level: float = 0.95,
    method: str = RECOMMENDED,
    simultaneous: str | None = None,
    positive: Any = None,
    n_resamples: int | Unset = UNSET,
    rng: Any = None,
    weights: Any = None,
    strata: Any = None,
    stratum_sizes: Any = None,
) -> pd.DataFrame:
    r"""Differences of a metric between subgroups, each with its confidence interval.

    Parameters
    ----------
    y_true, y_pred : array_like
        Reference (human) and classifier labels, one per text.
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`).
    by : array_like
        The subgroup of each text (a site, a gender, a language): at least two subgroups.
    groups : array_like, optional
        Person ids, one per text: the texts are nested in persons, and the persons in
        the subgroups (each person's texts all in one subgroup).
    reference : object, optional
        The subgroup the others are compared with; default the first in sorted order.
    confidence_level : float, default 0.95
        Confidence level of each interval (and of the simultaneous band).
    method : {"recommended", "newcombe", "cluster_robust", "bootstrap"}, default "recommended"
        The interval: Newcombe's hybrid score interval (proportion metrics on independent
        texts), the cluster-robust (linearization) interval, or the difference of two
        independent bootstraps. ``"recommended"`` is
        :func:`perfci.policy.recommended_group_difference`: Newcombe's for accuracy,
        recall, precision, specificity and npv on independent texts, the bootstrap for
        the other metrics, and the cluster-robust interval with `groups`.
    simultaneous : {"bonferroni", "max_t", None}, default None
        A band that covers every difference at once at `confidence_level`, in the columns
        ``low_simultaneous`` and ``high_simultaneous``: each interval at level
        :math:`1 - (1 - c)/k` (Bonferroni), or at the max-t critical value of the k
        correlated differences (see the Notes). With two subgroups (k = 1) the max-t band
        is the interval itself.
    positive : object, optional
        The positive label; default 1 for a binary code (0/1, False/True or their
        strings). For multi-class labels, the class whose one-vs-rest metric is compared.
    n_resamples : int, optional
        Resamples of each subgroup's bootstrap (``method="bootstrap"`` only); 2000 when unset (more
        above a 99% level), at least ``ceil(2 / (1 - confidence_level))`` (40 at 95%: each tail of
        the percentile interval holds a resample). Passed with another method, it is an error (also
        at 2000).
    rng : numpy.random.Generator, int or None
        Random generator or seed of the bootstrap: the subgroups in sorted order, the
        i-th uses ``np.random.default_rng(rng).spawn(L)[i]`` of L subgroups. The other
        methods draw nothing.
    weights, strata, stratum_sizes : optional
        The design of a weighted or stratified sample, as in :func:`perfci.metric_ci`:
        each subgroup is then a domain of the design, and its difference from the
        reference the design-based t interval of the two domain estimates on the same
        sampling units (:mod:`perfci.weighted_tables`), about the corpus (or the
        population of persons, with `groups`). `simultaneous`, `n_resamples` and a
        `method` other than "recommended" do not apply.

    Returns
    -------
    pandas.DataFrame
        One row per subgroup other than the reference, in sorted order, with columns
        ``subgroup``, ``reference``, ``metric``, ``estimate`` (the subgroup's),
        ``estimate_reference``, ``difference`` (subgroup minus reference), ``low``,
        ``high``, ``relevant_n``, ``relevant_n_reference``, ``persons``,
        ``persons_reference`` (persons with a relevant text; missing without `groups`),
        ``method``, ``se`` (the standard error of the difference,
        :attr:`GroupDifference.standard_error`), ``df`` (of the cluster-robust t; NaN
        for the other methods), ``effective_persons`` and
        ``effective_persons_reference`` (:math:`G^*` of each side, the effective
        number of persons the df are computed from; NaN without `groups`); with
        `simultaneous`, also ``low_simultaneous`` and ``high_simultaneous``.
        ``DataFrame.attrs`` holds ``confidence_level``, ``simultaneous``,
        ``comparisons`` (the k defined differences) and, with a band,
        ``simultaneous_level`` (the level of each interval of the band) and, for max-t,
        ``critical_value`` (on the normal scale).

    Raises
    ------
    ValueError
        For unknown names; labels of different lengths; a `positive` that is not one
        label; a level, number of resamples or `rng` of the wrong type or range; `by`
        with fewer than 2 subgroups; a `reference` that is not one of them; with
        `groups`, a person with texts in two subgroups; ``method="newcombe"`` for a
        metric that is not a proportion, or with `groups`; `n_resamples` other than
        its default when the chosen method is not the bootstrap, or fewer than the
        bootstrap's percentile interval needs at `confidence_level`.

    Warns
    -----
    UndefinedMetricWarning
        Naming the subgroups whose row is NaN: no relevant texts or an undefined metric
        in the subgroup or the reference; with `groups`, fewer than 2 persons with a
        relevant text; a cluster-robust standard error of 0. Also when a subgroup's
        cluster-robust variance is 0 (the interval then rests on the other's alone),
        more than 10% of a bootstrap's differences are undefined (they are dropped), or
        (with `groups`) a subgroup or the reference rests on fewer than
        :data:`FEW_EFFECTIVE_PERSONS` effective persons (its df are at most 3 and its
        interval wide by necessity).

    Notes
    -----
    Subgroup g has pooled counts :math:`C_g` and estimate :math:`\hat\theta_g =
    f(C_g)`; the difference is :math:`\hat d_g = \hat\theta_g - \hat\theta_0` for the
    reference 0. The subgroups hold different texts (and, nested, different persons), so
    :math:`\hat\theta_g` and :math:`\hat\theta_0` are independent.

    *Newcombe's hybrid score interval* [1]_ (proportion metrics, independent texts):
    :func:`newcombe_interval` of the two proportions' successes and relevant n.

    *Cluster-robust interval*: each subgroup's linearization variance, with person i's
    influence :math:`u_i = \nabla f(C_g) \cdot c_i` (:func:`perfci.metrics.metric_gradient`)
    and :math:`m_g` the persons with a relevant text,

    .. math::

        v_g = \frac{m_g}{m_g - 1} \sum_{i \in g} u_i^2, \qquad
        \hat d_g \pm t_{\nu_g, (1+c)/2} \sqrt{v_g + v_0}, \qquad
        \nu_g = \min(G^*_g, G^*_0) - 1,

    with :math:`G^*_g = (\sum_i w_i)^2 / \sum_i w_i^2` the effective number of persons
    (:math:`w_i` their relevant texts; :math:`m_g` when every person has as many), at
    least 1. Without `groups` each relevant text is a cluster. The df are the smaller
    subgroup's: in a simulation of two subgroups (3 to 40 persons each, 10 texts a
    person or a size CV of 1, ICC 0.05 or 0.2; ``validation/subgroup_df.py``) the
    Welch-Satterthwaite df on the two variances (:math:`m_g - 1` each) covered only
    0.80-0.92 when one subgroup had 3-5 persons and the other 20-40, the smaller
    :math:`m_g - 1` 0.89-0.93 with unequal sizes and 5 or 10 persons beside 40, and the
    smaller :math:`G^*_g - 1` at least 0.934 in every design (``docs/subgroups.md`` has
    the table; it is conservative, up to 0.996, when the smaller subgroup is also the
    less variable one).

    *Bootstrap*: each subgroup's counts are resampled on their own, with the pseudo
    count :data:`perfci.policy.PSEUDO_COUNT` (texts for independent texts; persons, then
    texts within them, with `groups`: :func:`perfci.policy.recommended_scheme`), and the
    interval is the percentile interval of the replicate differences
    :math:`\hat\theta^*_g - \hat\theta^*_0` (the reference's replicates are shared by
    every row, as its estimate is); replicates where either metric is undefined are
    dropped.

    *Simultaneous bands*. The k differences share :math:`\hat\theta_0`, so
    :math:`\mathrm{corr}(\hat d_g, \hat d_h) = v_0 / \sqrt{(v_g + v_0)(v_h + v_0)}`.
    Bonferroni's band puts each interval at level :math:`1 - (1-c)/k`, whatever the
    correlation. The max-t band uses the c with :math:`P(\max_g |T_g| \le c)` equal to the
    level for :math:`T` multivariate normal with that correlation
    (:func:`max_t_critical_value`, Dunnett's many-to-one comparison [2]_, computed by
    quadrature, not simulated), and puts each interval, by its own method, at the level
    :math:`2\Phi(c) - 1`: the cluster-robust interval with its own :math:`\nu_g` (with
    equal df this is slightly wider than the multivariate t's band, by 1.5% at 10 df and
    4% at 5), Newcombe's with its Wilson intervals, the bootstrap's percentile. The
    variances are the cluster-robust ones, the Wilson intervals' :math:`((u - l)/2z)^2`, or
    the bootstrap replicates'. The max-t band is never wider than Bonferroni's, and both
    are wider than the intervals one at a time.

    *Degenerate cases*: a subgroup (or the reference) with no relevant texts, an
    undefined metric, or (nested) fewer than 2 persons with a relevant text gets a NaN
    row with a warning, and does not count in k; a single subgroup is an error.

    References
    ----------
    .. [1] Newcombe, R. G. (1998). Interval estimation for the difference between
       independent proportions: comparison of eleven methods. Statistics in Medicine
       17(8), 873-890.
    .. [2] Dunnett, C. W. (1955). A multiple comparison procedure for comparing several
       treatments with a control. Journal of the American Statistical Association
       50(272), 1096-1121.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> table = pc.compare_groups(texts["human"], texts["model"], "recall", texts["site"])
    >>> table[["subgroup", "reference", "estimate", "estimate_reference", "difference",
    ...        "low", "high"]].round(3)
       subgroup reference  estimate  estimate_reference  difference    low   high
    0  clinic_b  clinic_a     0.907                0.86       0.047 -0.037  0.126

    With the therapists, the cluster-robust interval, on 12.4 df: the 18 therapists of
    clinic_b (fewer than clinic_a's 21 with a reflection) hold different numbers of
    reflections, and count as 13.4 therapists of equal size:

    >>> nested = pc.compare_groups(texts["human"], texts["model"], "recall", texts["site"],
    ...                            groups=texts["person"])
    >>> nested[["difference", "low", "high", "persons", "persons_reference"]].round(3)
       difference    low   high  persons  persons_reference
    0       0.047 -0.052  0.147       18                 21
    """
    check_aligned(y_true=y_true, y_pred=y_pred, by=by, groups=groups)
    check_aligned(y_true=y_true, weights=weights, strata=strata)
    resamples_given = n_resamples
    level, n_resamples, root = _compare_groups_iv(
        metric, method, simultaneous, reference, positive, confidence_level, n_resamples, rng
    )
    if design_given(weights, strata, stratum_sizes):
        return weighted_group_differences(
            y_true,
            y_pred,
            metric,
            by,
            groups=groups,
            weights=weights,
            strata=strata,
            stratum_sizes=stratum_sizes,
            reference=reference,
            method=method,
            positive=positive,
            confidence_level=level,
            unused={
                "simultaneous": simultaneous,
                "n_resamples": resamples_given,
            },
        )
    given = normalize_labels({"y_true": y_true, "y_pred": y_pred}, positive=positive)
    t, p = given.values["y_true"], given.values["y_pred"]
    positive = given.positive
    if positive is None:
        raise ValueError(
            f"`positive` must name the positive label among {given.classes.tolist()!r}."
        )
    if p.shape != t.shape:
        raise ValueError(f"`y_pred` must have one label per text ({t.size}); got {p.size}.")
    b = as_label_array("by", by)
    if b.shape != t.shape:
        raise ValueError(f"`by` must have one label per text ({t.size}); got {b.size}.")
    person = None
    if groups is not None:
        person = as_label_array("groups", groups)
        if person.shape != t.shape:
            raise ValueError(f"`groups` must have one id per text ({t.size}); got {person.size}.")
    levels, ref_level = subgroup_levels(b, reference)
    table, row_notes = compare_groups_table(
        subgroup_cells(t, p, b, person, positive, levels),
        levels,
        ref_level,
        metric,
        nested=person is not None,
        method=method,
        simultaneous=simultaneous,
        level=level,
        n_resamples=n_resamples,
        rng=root,
    )
    nan = table["low"].isna().to_numpy()
    for is_nan in (True, False):
        parts = [
            f"subgroup {row.subgroup!r} against {row.reference!r}: {note}"
            for row, note, row_nan in zip(table.itertuples(), row_notes, nan, strict=True)
            if note and row_nan == is_nan
        ]
        if parts:
            tail = f"; {'their rows are' if len(parts) > 1 else 'its row is'} NaN" if is_nan else ""
            what = "undefined for" if is_nan else "computed with a caveat for"
            _warn(f"the {metric} difference is {what} " + "; ".join(parts) + tail + ".")
    return table
