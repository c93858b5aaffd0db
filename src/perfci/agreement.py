r"""Agreement between annotators: Cohen's kappa, Fleiss' kappa and Krippendorff's alpha.

Several human annotators code the same texts, not always all of them; the texts may be
nested in persons. :func:`annotator_agreement` gives one agreement statistic with its
interval; :func:`agreement_report` sets a machine coder (an LLM, a fine-tuned model)
beside the humans: each pair of humans, all humans, the machine against each human and
against the humans' majority label.

Counts first. Every statistic is a function of counts of cells of texts:

- Cohen's kappa of the K x K table of the two annotators' codes (a cell is a pair of
  codes);
- Fleiss' kappa and Krippendorff's alpha of the per-text category counts (how many
  annotators gave each code): the coincidence matrix of alpha is a sum over texts of
  per-text contributions, and so are the sums of Fleiss' kappa, so texts with the same
  category counts are one cell.

A bootstrap resample of texts is then one multinomial draw of these cell counts, of
persons a draw of how often each person's cell counts are taken, through the one
resampling engine (:mod:`perfci._core.resampling`): no loop over texts or resamples.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ._core import registry
from ._core.labels import as_label_array, label_table, listing, sorted_labels
from ._core.labels import majority_vote as _majority
from ._core.labels import vote_counts as _category_counts
from ._core.resampling import AUTO_BATCH_ELEMENTS, Statistic
from ._core.results import ResultMixin
from ._core.validation import (
    UndefinedMetricWarning,
    check_confidence_level,
    check_memory,
    dataset_generators,
)
from .auc import DegenerateIntervalWarning
from .bootstrap import (
    MIN_PERSONS,
    ONE_PERSON,
    BootstrapCI,
    assemble,
    canonical_cells,
    check_bootstrap_options,
    resample_intervals,
    warn_about,
)
from .counting import normalize_labels
from .design import effective_clusters, two_sided_quantile
from .policy import recommended_scheme

__all__ = [
    "AGREEMENT_METHODS",
    "AGREEMENT_STATISTICS",
    "LEVELS_OF_MEASUREMENT",
    "AgreementCI",
    "agreement_report",
    "annotator_agreement",
]

#: Statistics of :func:`annotator_agreement`
#: (:data:`perfci._core.registry.AGREEMENT_STATISTIC`).
AGREEMENT_STATISTICS: tuple[str, ...] = registry.AGREEMENT_STATISTIC.names
#: Interval methods of :func:`annotator_agreement`
#: (:data:`perfci._core.registry.AGREEMENT_METHOD`).
AGREEMENT_METHODS: tuple[str, ...] = registry.AGREEMENT_METHOD.names
#: Levels of measurement of Krippendorff's alpha
#: (:data:`perfci._core.registry.LEVEL_OF_MEASUREMENT`).
LEVELS_OF_MEASUREMENT: tuple[str, ...] = registry.LEVEL_OF_MEASUREMENT.names

_N_RESAMPLES = 2000
_NAMES = {
    "cohen_kappa": "Cohen's kappa",
    "fleiss_kappa": "Fleiss' kappa",
    "krippendorff_alpha": "Krippendorff's alpha",
}


# ----------------------------------------------------------------------- statistics


def _weighted_sum(cells: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``cells @ table`` for cell counts ``(..., P)`` and ``(P, X)``, without BLAS.

    The products are added in cell order for every resample alike, so a replicate does not
    depend on how many resamples are computed at once (a matrix product's rounding can
    depend on the shapes and on the CPU).
    """
    return np.sum(cells[..., :, None] * table, axis=-2)


class _CohenKappa:
    """Cohen's kappa of K x K tables given as flat cell counts ``(..., K * K)``.

    Rows are the first annotator's codes, columns the second's. In counts,
    kappa = (n tr - sum_k R_k C_k) / (n^2 - sum_k R_k C_k), exact for whole counts; NaN
    where the denominator is 0 (both annotators gave one and the same code throughout, or
    no text).
    """

    def __init__(self, k: int) -> None:
        self.k = k

    def __call__(self, cells: np.ndarray) -> np.ndarray:
        table = cells.reshape(*cells.shape[:-1], self.k, self.k)
        n = table.sum((-2, -1))
        chance = np.sum(table.sum(-1) * table.sum(-2), -1)
        observed = np.trace(table, axis1=-2, axis2=-1)
        denominator = n * n - chance
        with np.errstate(invalid="ignore", divide="ignore"):
            kappa = (n * observed - chance) / denominator
        return np.where(denominator > 0, kappa, np.nan)


class _FleissKappa:
    """Fleiss' kappa of texts with m codes each, from the counts of their cells.

    Each cell is a vector of category counts (summing to m); called on cell counts
    ``(..., P)`` it returns kappa = (P_bar - P_e) / (1 - P_e), NaN where the texts hold
    fewer than two distinct codes (P_e = 1) or there is no text.
    """

    def __init__(self, patterns: np.ndarray) -> None:
        self.patterns = patterns.astype(float)
        m = float(patterns[0].sum())
        self.m = m
        self.agreement = (np.sum(self.patterns**2, -1) - m) / (m * (m - 1))

    def __call__(self, cells: np.ndarray) -> np.ndarray:
        texts = cells.sum(-1)
        per_code = _weighted_sum(cells, self.patterns)
        distinct = np.sum(per_code > 0, -1)
        with np.errstate(invalid="ignore", divide="ignore"):
            p_bar = _weighted_sum(cells, self.agreement[:, None])[..., 0] / texts
            shares = per_code / (self.m * texts[..., None])
            p_e = np.sum(shares * shares, -1)
            kappa = (p_bar - p_e) / (1 - p_e)
        return np.where((texts > 0) & (distinct >= 2), kappa, np.nan)


class _KrippendorffAlpha:
    r"""Krippendorff's alpha of texts from the counts of their cells (category counts).

    Each cell is a vector of category counts :math:`n_{u\cdot}` of a text with
    :math:`m_u \ge 2` codes; its coincidences are :math:`(n_{uc} n_{uk} - [c = k]
    n_{uc}) / (m_u - 1)`. Called on cell counts ``(..., P)`` it returns
    :math:`1 - (n - 1) \sum_{ck} o_{ck}\delta_{ck} / \sum_{ck} n_c n_k \delta_{ck}`, NaN
    where fewer than two distinct codes are pairable.
    """

    def __init__(self, patterns: np.ndarray, level: str, values: np.ndarray | None) -> None:
        counts = patterns.astype(float)
        k = counts.shape[-1]
        pairable = counts.sum(-1)
        outer = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k)
        coincidences = outer / (pairable - 1)[:, None, None]
        self.level = level
        self.counts = counts  # each cell's pairable values per code: o's row sums
        if level == "ordinal":
            self.coincidences = coincidences.reshape(-1, k * k)
            index = np.arange(k)
            self.lo = np.minimum(index[:, None], index[None, :])
            self.hi = np.maximum(index[:, None], index[None, :])
        else:
            self.distance = _fixed_distance(level, k, values)
            self.disagreement = np.sum(coincidences * self.distance, (-2, -1))

    def _ordinal_distance(self, n_c: np.ndarray) -> np.ndarray:
        upto = np.cumsum(n_c, -1)
        before = upto - n_c
        between = upto[..., self.hi] - before[..., self.lo]
        return (between - (n_c[..., :, None] + n_c[..., None, :]) / 2) ** 2

    def __call__(self, cells: np.ndarray) -> np.ndarray:
        n_c = _weighted_sum(cells, self.counts)
        n = n_c.sum(-1)
        if self.level == "ordinal":
            distance = self._ordinal_distance(n_c)
            observed = _weighted_sum(cells, self.coincidences).reshape(distance.shape)
            disagreement = np.sum(observed * distance, (-2, -1))
        else:
            distance = self.distance
            disagreement = _weighted_sum(cells, self.disagreement[:, None])[..., 0]
        expected = np.sum(n_c[..., :, None] * distance * n_c[..., None, :], (-2, -1))
        distinct = np.sum(n_c > 0, -1)
        with np.errstate(invalid="ignore", divide="ignore"):
            alpha = 1 - (n - 1) * disagreement / expected
        return np.where((distinct >= 2) & (expected > 0), alpha, np.nan)


def _fixed_distance(level: str, k: int, values: np.ndarray | None) -> np.ndarray:
    """Squared distances of the codes that do not depend on the data (not ordinal)."""
    if level == "nominal":
        return 1.0 - np.eye(k)
    assert values is not None
    a, b = values[:, None], values[None, :]
    if level == "interval":
        return (a - b) ** 2
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(total != 0, (a - b) / np.where(total != 0, total, 1.0), 0.0)
    return ratio**2


# ------------------------------------------------------------------- reading codes


@dataclass(frozen=True)
class _Codes:
    """Validated codes: category indices (-1 where missing), the codes, the persons."""

    index: np.ndarray  # (n_texts, n_annotators) int64
    categories: np.ndarray  # (K,) the codes, in order
    values: np.ndarray | None  # (K,) float: the codes as numbers (interval, ratio)
    annotators: tuple[str, ...]
    person: np.ndarray | None  # (n_texts,) int in 0..persons-1
    name: str  # the argument, for messages

    def pair(self, index: np.ndarray, annotators: tuple[str, str]) -> _Codes:
        """Other codes (two columns) of the same texts, categories and persons."""
        return _Codes(index, self.categories, self.values, annotators, self.person, self.name)


def _read_codes(
    name: str,
    codes: Any,
    *,
    level: str,
    categories: Any,
    groups: Any,
    min_annotators: int = 2,
    prefix: str = "annotator",
    extra: dict[str, Any] | None = None,
) -> tuple[_Codes, dict[str, np.ndarray]]:
    """Check codes, categories and person ids; encode the codes as category indices.

    `extra` holds further label arguments (a machine's labels) read in the same coding;
    they are returned as category indices, by name.
    """
    table, missing, names, _ = label_table(name, codes, prefix=prefix)
    n, n_annotators = table.shape
    if n_annotators < min_annotators:
        raise ValueError(
            f"`{name}` must have at least {min_annotators} annotators (columns): agreement "
            f"is between annotators; got {n_annotators}."
        )
    observed = table[~missing]
    if observed.size == 0:
        raise ValueError(
            f"`{name}` holds no code: all {table.size} entries are missing (NaN or None)."
        )
    columns: dict[str, Any] = {name: observed, **(extra or {})}
    if categories is not None:
        if isinstance(categories, str | bytes) or np.ndim(categories) != 1:
            raise ValueError(
                f"`categories` must be a list of the possible codes, in order; got {categories!r}."
            )
        columns["categories"] = list(categories)
    labels = normalize_labels(columns, infer_positive=False)
    if categories is None:
        domain = labels.classes
    else:
        domain = labels.values["categories"]
        if pd.unique(domain).size != domain.size:
            raise ValueError(f"`categories` must not repeat a code; got {listing(domain)}.")
    lookup = pd.Index(domain)
    encoded: dict[str, np.ndarray] = {}
    for key in columns:
        if key == "categories":
            continue
        index = np.asarray(lookup.get_indexer(labels.values[key]), dtype=np.int64)
        if np.any(index < 0):
            outside = pd.unique(labels.values[key][index < 0])
            raise ValueError(
                f"`categories` must hold every code; `{key}` also holds "
                f"{listing(sorted_labels(outside))}."
            )
        encoded[key] = index
    values = _code_values(name, domain, level, categories is not None)
    full = np.full((n, n_annotators), -1, dtype=np.int64)
    full[~missing] = encoded.pop(name)
    person = None
    if groups is not None:
        ids = as_label_array("groups", groups)
        if ids.size != n:
            raise ValueError(f"`groups` must have one id per text ({n}); got {ids.size}.")
        person = pd.factorize(ids)[0].astype(np.int64)
    return _Codes(full, np.asarray(domain), values, tuple(names), person, name), encoded


def _code_values(name: str, domain: np.ndarray, level: str, ordered: bool) -> np.ndarray | None:
    """Return the codes as numbers (interval and ratio levels); check the ordinal order."""
    numeric = domain.dtype.kind in "iuf" or all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) for v in domain.tolist()
    )
    if level in ("interval", "ratio"):
        if not numeric:
            raise ValueError(
                f"`level_of_measurement` {level!r} needs numeric codes; `{name}` holds "
                f"{listing(sorted_labels(domain))}: use 'nominal', or 'ordinal' with `categories` "
                "in order."
            )
        values = domain.astype(float)
        if level == "ratio" and np.any(values < 0):
            raise ValueError(
                "`level_of_measurement` 'ratio' needs non-negative codes (a ratio scale has "
                f"a true zero); `{name}` holds {listing(values[values < 0])}."
            )
        return values
    if level == "ordinal" and not numeric and not ordered:
        raise ValueError(
            f"`categories` must give the order of the codes for level_of_measurement "
            f"'ordinal': `{name}` holds text codes {listing(sorted_labels(domain))}, whose "
            "alphabetical order need not be theirs."
        )
    return None


# ------------------------------------------------------------------------- cells


@dataclass(frozen=True)
class _Cells:
    """The texts of one statistic as cells: which cell each text is, and the statistic."""

    statistic: str
    cell: np.ndarray  # (n_texts,) int: the text's cell, -1 for a text that does not enter
    n_cells: int
    fn: Any  # callable on cell counts (..., n_cells)
    width: int  # numbers held per resample by the statistic (for the default batch)

    @property
    def used(self) -> np.ndarray:
        return self.cell >= 0


def _cells(data: _Codes, statistic: str, level: str) -> _Cells:
    """Cells of the texts for `statistic`, and the texts left out (cell -1)."""
    k = data.categories.size
    if statistic == "cohen_kappa":
        a, b = data.index[:, 0], data.index[:, 1]
        cell = np.where((a >= 0) & (b >= 0), a * k + b, -1)
        return _Cells(statistic, cell, k * k, _CohenKappa(k), k * k)
    counts = _category_counts(data.index, k)
    coded = counts.sum(-1)
    if statistic == "fleiss_kappa":
        used = coded > 0
        sizes = np.unique(coded[used])
        if sizes.size > 1 or (sizes.size == 1 and sizes[0] < 2):
            have = f"{sizes[0]} to {sizes[-1]} codes" if sizes.size > 1 else f"{sizes[0]} code"
            raise ValueError(
                f"`statistic` 'fleiss_kappa' needs the same number of codes, at least 2, for "
                f"every text; texts of `{data.name}` have {have}. Use "
                "statistic='krippendorff_alpha', which takes missing codes."
            )
    else:
        used = coded >= 2  # a text with one code holds no pair: it adds nothing to alpha
    cell = np.full(coded.shape, -1, dtype=np.int64)
    if not used.any():
        return _Cells(statistic, cell, 0, None, 1)
    patterns, inverse = np.unique(counts[used], axis=0, return_inverse=True)
    cell[used] = inverse.reshape(-1)
    fn: Any
    size = patterns.shape[0]
    if statistic == "fleiss_kappa":
        fn, width = _FleissKappa(patterns), size * k
    else:
        fn = _KrippendorffAlpha(patterns, level, data.values)
        width = size * (k * k if level == "ordinal" else k)
    return _Cells(statistic, cell, patterns.shape[0], fn, width)


# ----------------------------------------------------------------------- the result


@dataclass(frozen=True, repr=False)
class AgreementCI(ResultMixin):
    """An agreement statistic between annotators with its confidence interval.

    Attributes
    ----------
    estimate : float
        The statistic on the texts that enter it (NaN where it is undefined).
    low, high : float
        The interval ends.
    confidence_level : float
        The confidence level.
    method : str
        ``"bootstrap"`` or ``"asymptotic"``.
    statistic : str
        ``"cohen_kappa"``, ``"fleiss_kappa"`` or ``"krippendorff_alpha"`` (what
        ``statistic="auto"`` chose).
    level_of_measurement : str
        The distance between codes: ``"nominal"`` for the kappas.
    n_texts : int
        Texts that enter the statistic: coded by both annotators (Cohen), coded at all
        (Fleiss), coded at least twice (Krippendorff).
    n_texts_unused : int
        Texts of the input that do not enter it (and are not resampled).
    n_annotators : int
        Annotators (columns of the codes).
    n_categories : int
        Codes of the code domain (observed, or given as `categories`).
    persons : int or None
        Persons with at least one text that enters (with `groups`), else None.
    sources : tuple of str
        What the interval's uncertainty includes: ``("texts",)``, or ``("texts",
        "persons")`` when persons were resampled (or were the clusters of the variance).
        The annotators are not a source: the interval is about these annotators.
    se : float
        Standard error: the asymptotic one, or the standard deviation of the valid
        bootstrap replicates.
    df : float
        Degrees of freedom of the t quantile of the asymptotic interval (infinity: the
        normal quantile; NaN for the bootstrap).
    scheme : str or None
        The bootstrap scheme (None for the asymptotic interval).
    description : str
        What was computed, in words.
    population : str
        What the interval is about (the estimand).
    bootstrap : BootstrapCI or None
        The bootstrap result (replicates in `distribution`), or None. Left out of
        :meth:`to_frame` and :meth:`to_xarray`.
    """

    _exclude: ClassVar[tuple[str, ...]] = ("bootstrap",)

    estimate: float
    low: float
    high: float
    confidence_level: float
    method: str
    statistic: str
    level_of_measurement: str
    n_texts: int
    n_texts_unused: int
    n_annotators: int
    n_categories: int
    persons: int | None
    sources: tuple[str, ...]
    se: float
    df: float
    scheme: str | None
    description: str
    population: str
    bootstrap: BootstrapCI | None = None

    @property
    def half_width(self) -> float:
        """Half the interval's width."""
        return (self.high - self.low) / 2

    def __repr__(self) -> str:
        return (
            f"AgreementCI(statistic={self.statistic!r}, estimate={self.estimate:.4g}, "
            f"low={self.low:.4g}, high={self.high:.4g}, confidence_level="
            f"{self.confidence_level:g}, method={self.method!r}, n_texts={self.n_texts}, "
            f"n_annotators={self.n_annotators}, persons={self.persons}, "
            f"sources={self.sources})"
        )


# ---------------------------------------------------------------------- validation


@dataclass(frozen=True)
class _Options:
    method: str
    level: float
    level_of_measurement: str
    scheme: str | None
    interval: str
    n_resamples: int
    batch: int | None


def _options_iv(
    method: Any,
    confidence_level: Any,
    level_of_measurement: Any,
    scheme: Any,
    interval: Any,
    n_resamples: Any,
    rng: Any,
    batch: Any,
) -> tuple[_Options, np.random.Generator]:
    """Check the options shared by :func:`annotator_agreement` and :func:`agreement_report`."""
    registry.AGREEMENT_METHOD.check(method)
    level = float(check_confidence_level(confidence_level, scalar=True))
    registry.LEVEL_OF_MEASUREMENT.check(level_of_measurement)
    resamples, generator = check_bootstrap_options(
        method, scheme, interval, n_resamples, rng, batch, _N_RESAMPLES
    )
    options = _Options(method, level, level_of_measurement, scheme, interval, resamples, batch)
    return options, generator


def _resolve_statistic(statistic: str, data: _Codes, level: str, method: str) -> str:
    """Return the statistic ``"auto"`` stands for; refuse one the codes cannot give."""
    n_annotators = data.index.shape[1]
    if statistic == "auto":
        complete = not np.any(data.index < 0)
        two = n_annotators == 2 and complete and level == "nominal"
        statistic = "cohen_kappa" if two else "krippendorff_alpha"
    elif statistic != "krippendorff_alpha" and level != "nominal":
        raise ValueError(
            f"`level_of_measurement` {level!r} is for Krippendorff's alpha; `statistic` "
            f"{statistic!r} treats codes as nominal (pass statistic='krippendorff_alpha')."
        )
    if statistic == "cohen_kappa" and n_annotators != 2:
        raise ValueError(
            f"`statistic` 'cohen_kappa' is the agreement of exactly two annotators; "
            f"`{data.name}` has {n_annotators}. Use 'fleiss_kappa' or 'krippendorff_alpha'."
        )
    if method == "asymptotic" and statistic != "cohen_kappa":
        raise ValueError(
            f"`method` 'asymptotic' is available for Cohen's kappa only; the statistic is "
            f"{statistic!r}. Use method='bootstrap'."
        )
    return statistic


# ----------------------------------------------------------------------- intervals


def _population(statistic: str, clustered: bool, persons: int | None) -> str:
    what = f"{_NAMES[statistic]} of these annotators"
    if clustered:
        return (
            f"{what} on the texts of the population of persons that these {persons} persons "
            "were sampled from (text-weighted), new persons included"
        )
    return f"{what} on the population of texts this sample represents"


def _nan_result(
    data: _Codes, cells: _Cells, options: _Options, statistic: str, scheme: str | None
) -> AgreementCI:
    used = cells.used
    persons = None if data.person is None else int(np.unique(data.person[used]).size)
    clustered = scheme not in (None, "iid") or (
        options.method == "asymptotic" and persons is not None and persons < used.sum()
    )
    return AgreementCI(
        estimate=math.nan,
        low=math.nan,
        high=math.nan,
        confidence_level=options.level,
        method=options.method,
        statistic=statistic,
        level_of_measurement=options.level_of_measurement,
        n_texts=int(used.sum()),
        n_texts_unused=int((~used).sum()),
        n_annotators=int(data.index.shape[1]),
        n_categories=int(data.categories.size),
        persons=persons,
        sources=("texts", "persons") if clustered else ("texts",),
        se=math.nan,
        df=math.nan,
        scheme=scheme if options.method == "bootstrap" else None,
        description=f"{_NAMES[statistic]} undefined",
        population=_population(statistic, clustered, persons),
    )


def _no_pairs(data: _Codes, statistic: str) -> str:
    if statistic == "cohen_kappa":
        pair = " and ".join(data.annotators)
        return f"no text of `{data.name}` was coded by both {pair}"
    return f"no text of `{data.name}` was coded by two annotators or more"


def _one_code(data: _Codes, cells: _Cells, statistic: str) -> str:
    codes = data.categories[np.unique(_pairable_codes(data, cells))]
    return (
        f"every code of the texts that enter it is {listing(codes)}: with one code there "
        "is no variation, and agreement beyond chance is 0/0"
    )


def _pairable_codes(data: _Codes, cells: _Cells) -> np.ndarray:
    chosen = data.index[cells.used]
    return chosen[chosen >= 0]


def _unit_counts(cells: _Cells, data: _Codes, per_person: bool) -> np.ndarray:
    """Return the cell counts ``(C,)``, or per person ``(m, C)`` (persons with texts)."""
    used = cells.used
    cell = cells.cell[used]
    if not per_person:
        return np.bincount(cell, minlength=cells.n_cells).astype(float)
    assert data.person is not None
    person = pd.factorize(data.person[used])[0]
    m = int(person.max()) + 1
    check_memory(
        "groups",
        8.0 * m * cells.n_cells,
        f"the per-person counts of {m} persons x {cells.n_cells} cells of codes; use "
        "scheme='iid' or fewer categories",
    )
    flat = person * cells.n_cells + cell
    return np.bincount(flat, minlength=m * cells.n_cells).reshape(m, cells.n_cells).astype(float)


def _warn_zero_width(what: str, value: float) -> None:
    warnings.warn(
        f"the {what} has zero width at {value:g}: the texts show no variation to estimate "
        "its uncertainty from (every resample, or every text's influence, gives the same "
        "value), so the interval claims a certainty the data do not give.",
        DegenerateIntervalWarning,
        stacklevel=4,
    )


def _agreement(
    data: _Codes,
    statistic: str,
    options: _Options,
    generator: np.random.Generator,
    *,
    single: bool = True,
) -> AgreementCI:
    """One statistic with its interval. `single` False: no pairs give NaN, not an error."""
    cells = _cells(data, statistic, options.level_of_measurement)
    used = cells.used
    nested = data.person is not None
    n_used = int(used.sum())
    persons = None if data.person is None else int(np.unique(data.person[used]).size)
    scheme = options.scheme
    if options.method == "bootstrap" and scheme is None:
        per_person = None if not nested or not n_used else n_used / float(persons or 1)
        scheme = recommended_scheme(per_person)
    if options.method == "bootstrap" and scheme != "iid" and not nested:
        raise ValueError(f"`scheme` {scheme!r} resamples persons: it needs `groups` (person ids).")
    name = _NAMES[statistic]
    if n_used == 0:
        if single:
            raise ValueError(f"{name} needs texts coded twice: {_no_pairs(data, statistic)}.")
        warnings.warn(
            f"{name} is undefined: {_no_pairs(data, statistic)}; returning NaN.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return _nan_result(data, cells, options, statistic, scheme)
    units = _unit_counts(cells, data, per_person=False)
    estimate = float(cells.fn(units))
    if math.isnan(estimate):
        warnings.warn(
            f"{name} is undefined: {_one_code(data, cells, statistic)}; returning NaN.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return _nan_result(data, cells, options, statistic, scheme)
    common: dict[str, Any] = {
        "confidence_level": options.level,
        "method": options.method,
        "statistic": statistic,
        "level_of_measurement": options.level_of_measurement,
        "n_texts": n_used,
        "n_texts_unused": int((~used).sum()),
        "n_annotators": int(data.index.shape[1]),
        "n_categories": int(data.categories.size),
        "persons": persons,
    }
    if options.method == "asymptotic":
        return _asymptotic(data, cells, units, estimate, options, common)
    assert scheme is not None
    per_person = scheme != "iid"
    unit = units
    if per_person:
        unit = canonical_cells(
            _unit_counts(cells, data, per_person=True), scheme, nested=True, rater_symmetric=False
        )
        if unit.shape[0] < MIN_PERSONS:
            raise ValueError(
                f"`groups` must give at least {MIN_PERSONS} persons with texts that enter "
                f"{name} for scheme {scheme!r}: {ONE_PERSON}; got {unit.shape[0]}."
            )
    batch = options.batch
    if batch is None:
        # the engine's default, bounded also by what the statistic holds per resample
        width = unit.size if scheme == "hierarchical" else cells.n_cells
        batch = max(1, AUTO_BATCH_ELEMENTS // max(width, cells.width, 1))
    engine_statistic = Statistic(statistic, cells.n_cells, cells.fn)
    parts = resample_intervals(
        [unit],
        engine_statistic,
        scheme=scheme,
        interval=options.interval,
        pseudo_count=0,
        n_resamples=options.n_resamples,
        confidence_level=options.level,
        generators=dataset_generators(generator, 1, False),
        batch=batch,
    )
    warn_about(parts, name, options.interval, options.n_resamples, True)
    boot = assemble(parts, statistic, scheme, options.interval, 0, options.level, ())
    if parts["no_valid"][0]:
        warnings.warn(
            f"{name} is undefined in every resample (each holds one code only); the "
            "interval is NaN.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    elif boot.low == boot.high and np.count_nonzero(~np.isnan(parts["replicates"])) > 1:
        _warn_zero_width(f"bootstrap interval of {name}", float(boot.low))
    clustered = per_person
    return AgreementCI(
        estimate=estimate,
        low=float(boot.low),
        high=float(boot.high),
        sources=("texts", "persons") if clustered else ("texts",),
        se=float(boot.standard_error),
        df=math.nan,
        scheme=scheme,
        description=f"bootstrap (scheme={scheme}, interval={options.interval})",
        population=_population(statistic, clustered, persons),
        bootstrap=boot,
        **common,
    )


def _kappa_influence(table: np.ndarray) -> np.ndarray:
    r"""Influence of a text in each cell (a, b) on Cohen's kappa, flat ``(K * K,)``.

    With cell shares :math:`p_{ab}`, row and column shares :math:`r_a, c_b`, :math:`p_o =
    \sum_a p_{aa}` and :math:`p_e = \sum_a r_a c_a`:
    :math:`\{([a = b] - p_o)(1 - p_e) - (c_a + r_b - 2 p_e)(1 - p_o)\} / (1 - p_e)^2`.
    """
    k = table.shape[0]
    shares = table / table.sum()
    r, c = shares.sum(1), shares.sum(0)
    p_o, p_e = float(np.trace(shares)), float(r @ c)
    same = np.eye(k)
    influence = (same - p_o) * (1 - p_e) - (c[:, None] + r[None, :] - 2 * p_e) * (1 - p_o)
    return (influence / (1 - p_e) ** 2).reshape(-1)


def _asymptotic(
    data: _Codes,
    cells: _Cells,
    units: np.ndarray,
    estimate: float,
    options: _Options,
    common: dict[str, Any],
) -> AgreementCI:
    """Cohen's kappa's large-sample interval, clustered over persons with `groups`."""
    k = data.categories.size
    influence = _kappa_influence(units.reshape(k, k))
    n = float(units.sum())
    persons = common["persons"]
    clustered = persons is not None and persons < n
    if clustered:
        if persons < MIN_PERSONS:
            raise ValueError(
                f"`groups` must give at least {MIN_PERSONS} persons for the clustered "
                "asymptotic interval: a variance between persons needs two of them, and one "
                f"person says nothing about the population of persons; got {persons}."
            )
        per_person = _unit_counts(cells, data, per_person=True)
        totals = per_person @ influence
        variance = persons / (persons - 1) * float(np.sum(totals * totals)) / n**2
        assert data.person is not None
        person = pd.factorize(data.person[cells.used])[0]
        df = max(float(effective_clusters(np.bincount(person, minlength=persons))) - 1, 1.0)
        how = f"; clustered: linearization over persons, t with {df:.3g} df"
    else:
        variance = float(units @ (influence * influence)) / n**2
        df = math.inf
        how = ""
    se = math.sqrt(max(variance, 0.0))
    q = two_sided_quantile(options.level, df)
    low, high = max(-1.0, estimate - q * se), min(1.0, estimate + q * se)
    if se == 0:
        _warn_zero_width("asymptotic interval of Cohen's kappa", estimate)
    return AgreementCI(
        estimate=estimate,
        low=low,
        high=high,
        sources=("texts", "persons") if clustered else ("texts",),
        se=se,
        df=df,
        scheme=None,
        description=f"asymptotic (Fleiss, Cohen and Everitt 1969{how})",
        population=_population("cohen_kappa", clustered, persons),
        **common,
    )


# --------------------------------------------------------------------- public API


def annotator_agreement(
    codes: Any,
    *,
    groups: Any = None,
    statistic: str = "auto",
    method: str = "bootstrap",
    confidence_level: float = 0.95,
    level_of_measurement: str = "nominal",
    categories: Any = None,
    scheme: str | None = None,
    interval: str = "percentile",
    n_resamples: int = _N_RESAMPLES,
    rng: Any = None,
    batch: int | None = None,
) -> AgreementCI:
    r"""Agreement between annotators (Cohen's or Fleiss' kappa, Krippendorff's alpha).

    Parameters
    ----------
    codes : array_like or pandas.DataFrame
        The codes, one row per text and one column per annotator (a DataFrame's column
        names name the annotators); NaN, None or ``pd.NA`` where an annotator did not
        code a text. Labels are read as everywhere in perfci
        (:func:`perfci.counting.normalize_labels`): numbers and text never mix, and
        ``1``, ``1.0``, ``True`` and ``"1"`` are one binary code.
    groups : array_like, optional
        Person ids, one per text: texts nested in persons, the persons sampled from a
        population of persons.
    statistic : {"auto", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha"}
        ``"auto"`` (default): Cohen's kappa for two annotators who both coded every text
        with nominal codes, else Krippendorff's alpha (see the notes).
    method : {"bootstrap", "asymptotic"}, default "bootstrap"
        The bootstrap of the counts of texts by their codes; or, for Cohen's kappa, the
        large-sample standard error (clustered over persons with `groups`).
    confidence_level : float, default 0.95
        Confidence level.
    level_of_measurement : {"nominal", "ordinal", "interval", "ratio"}, default "nominal"
        How far apart two codes are, for Krippendorff's alpha (the kappas are nominal).
        ``"interval"`` and ``"ratio"`` need numeric codes; ``"ordinal"`` with text codes
        needs `categories` in order.
    categories : sequence, optional
        The possible codes, in order (for ``"ordinal"``); default: the codes that occur,
        sorted. Every code must be among them. Codes nobody used change nothing.
    scheme : {"iid", "cluster", "hierarchical"}, optional
        Bootstrap scheme. Default :func:`perfci.policy.recommended_scheme`: iid without
        groups (or with one text per person), hierarchical with them.
    interval : {"percentile", "bca"}, default "percentile"
        Bootstrap interval.
    n_resamples : int, default 2000
        Bootstrap resamples.
    rng : numpy.random.Generator, int or None
        Random generator or seed of the bootstrap.
    batch : int, optional
        Resamples drawn at once, bounding memory; the result does not depend on it.

    Returns
    -------
    AgreementCI
        Estimate, interval, standard error, what the statistic used (texts, texts left
        out, annotators, persons) and `sources`, what the interval's uncertainty includes.

    Raises
    ------
    ValueError
        For an unknown name or an option of the wrong type; a bootstrap option with
        ``method="asymptotic"``, or ``"asymptotic"`` for a statistic other than Cohen's
        kappa; `codes` that are not a table, with fewer than 2 annotators, no text, no
        code at all, infinity, numbers beside text or score-like numbers; codes outside
        `categories`; a level other than nominal for the kappas; interval or ratio levels
        with text codes (ratio: negative codes); ordinal text codes without `categories`;
        Cohen's kappa of other than two annotators; Fleiss' kappa of texts with unequal
        numbers of codes; no text that enters the statistic (not coded twice); `groups`
        not one id per text; a cluster scheme without `groups`, or fewer than 2 persons
        for it or for the clustered asymptotic interval.

    Warns
    -----
    UndefinedMetricWarning
        When the statistic is undefined: the texts that enter it hold one code only
        (kappa and alpha are 0/0). The estimate and the interval are NaN. For the
        bootstrap, when more than 10% of the resamples hold one code only (they are
        dropped).
    DegenerateIntervalWarning
        When the interval has zero width: every resample gives the same value (perfect
        agreement, say), or every text the same influence on Cohen's kappa.

    Notes
    -----
    *Cohen's kappa* [1]_ of two annotators on the n texts both coded, with :math:`p_{ab}`
    the share of texts coded a by the first and b by the second, :math:`p_o = \sum_a
    p_{aa}` and :math:`p_e = \sum_a p_{a\cdot} p_{\cdot a}`: :math:`\kappa = (p_o -
    p_e) / (1 - p_e)`. Texts either annotator did not code are left out
    (`n_texts_unused`).

    *Fleiss' kappa* [2]_ of N texts with m codes each (the annotators may differ from
    text to text), :math:`n_{ij}` annotators giving text i code j: :math:`P_i =
    (\sum_j n_{ij}^2 - m) / (m(m - 1))`, :math:`\bar P` their mean, :math:`p_j =
    \sum_i n_{ij} / (N m)`, :math:`P_e = \sum_j p_j^2`, :math:`\kappa = (\bar P - P_e) /
    (1 - P_e)`. Missing codes: texts with no code are left out; every other text must
    have the same number of codes, at least 2, else it is an error (Krippendorff's alpha
    takes missing codes).

    *Krippendorff's alpha* [3]_ [4]_: a text u with :math:`m_u \ge 2` codes, :math:`n_{uc}`
    of them c, adds :math:`(n_{uc} n_{uk} - [c = k] n_{uc}) / (m_u - 1)` to the
    coincidence :math:`o_{ck}`; with :math:`n_c = \sum_k o_{ck}` and :math:`n =
    \sum_c n_c` (the pairable codes), :math:`\alpha = 1 - (n - 1) \sum_{c,k}
    o_{ck}\delta^2_{ck} / \sum_{c,k} n_c n_k \delta^2_{ck}`. Nominal
    :math:`\delta^2_{ck} = [c \ne k]`; ordinal :math:`(\sum_{g=c}^{k} n_g - (n_c +
    n_k)/2)^2`; interval :math:`(c - k)^2`; ratio :math:`((c - k)/(c + k))^2`. A text
    coded once holds no pair and adds nothing: it is left out (`n_texts_unused`) and not
    resampled. This equals the ``krippendorff`` package's ``alpha`` (tests, to 1e-10).

    *Why "auto" chooses so*: for two annotators who coded every text, Cohen's kappa is
    the statistic readers know (and what :func:`perfci.metric_ci` reports as ``kappa``);
    with a third annotator or missing codes it no longer applies, and Krippendorff's alpha
    is the one statistic that takes any number of annotators, missing codes and ordinal
    or interval codes. Fleiss' kappa is never chosen: it needs an equal number of codes
    per text, and where it applies alpha differs from it only by a small-sample factor.

    *Bootstrap*: the texts that enter the statistic are counted by cell (a pair of codes
    for Cohen; the category counts for Fleiss and Krippendorff), and a resample of texts
    is a multinomial draw of the cell counts; the cluster and hierarchical schemes draw
    persons (then texts within them) as :func:`perfci.bootstrap_ci` does. Resamples in
    which the statistic is undefined (one code only) are dropped and counted. This
    resamples texts, as a study samples them, rather than the pairable values of Hayes
    and Krippendorff's bootstrap [5]_, which treats the pairs of codes as independent
    even where they share a text. The annotators are not resampled: the interval is about
    these annotators.

    *Asymptotic* (Cohen's kappa): the large-sample variance of Fleiss, Cohen and Everitt
    [6]_ (what statsmodels' ``cohens_kappa`` reports as ``var_kappa``), which equals
    :math:`\sum_t \psi_t^2 / n^2` with the influence of a text in cell (a, b),
    :math:`\psi_{ab} = \{([a = b] - p_o)(1 - p_e) - (p_{\cdot a} + p_{b\cdot} - 2
    p_e)(1 - p_o)\} / (1 - p_e)^2`; the interval is :math:`\hat\kappa \pm
    z\,\widehat{\mathrm{se}}`, clipped to [-1, 1]. With `groups` (and more texts than
    persons) the variance is the linearization with persons as clusters,
    :math:`\frac{I}{I-1}\sum_i (\sum_{t \in i} \psi_t)^2 / n^2`, and the quantile t on
    :math:`G^* - 1` df (Kish's effective number of persons over their texts), as
    :func:`perfci.auc_ci` does for the AUC.

    *Degenerate cases*: fewer than 2 annotators, no text coded twice, or no code at all
    is an error; one code only (every code the same) gives NaN with a warning, as does a
    table where both annotators of Cohen's kappa used one and the same code; perfect
    agreement with two or more codes gives an estimate of 1 and a zero-width interval
    with a :class:`~perfci.DegenerateIntervalWarning`.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational
       and Psychological Measurement 20(1), 37-46.
    .. [2] Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
       Psychological Bulletin 76(5), 378-382.
    .. [3] Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
       Annenberg School for Communication, University of Pennsylvania.
    .. [4] Krippendorff, K. (2019). Content Analysis: An Introduction to Its Methodology,
       4th ed., ch. 12. Sage.
    .. [5] Hayes, A. F. and Krippendorff, K. (2007). Answering the call for a standard
       reliability measure for coding data. Communication Methods and Measures 1(1),
       77-89.
    .. [6] Fleiss, J. L., Cohen, J. and Everitt, B. S. (1969). Large sample standard
       errors of kappa and weighted kappa. Psychological Bulletin 72(5), 323-327.

    Examples
    --------
    Three annotators, one of whom (cy) coded about half of the texts:

    >>> import numpy as np
    >>> import pandas as pd
    >>> import perfci as pc
    >>> rng = np.random.default_rng(3)
    >>> truth = rng.integers(0, 3, size=200)
    >>> def coder():
    ...     return np.where(rng.random(200) < 0.8, truth, rng.integers(0, 3, size=200))
    >>> codes = pd.DataFrame({"ana": coder(), "ben": coder(), "cy": coder()}).astype(float)
    >>> codes.loc[rng.random(200) < 0.5, "cy"] = np.nan
    >>> ci = pc.annotator_agreement(codes, rng=1)  # bootstrap ends: shown to 2 decimals
    >>> print(f"{ci.statistic}: {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    krippendorff_alpha: 0.725 [0.65, 0.79]

    Cohen's kappa of ana and ben, with the asymptotic interval:

    >>> ci = pc.annotator_agreement(codes[["ana", "ben"]], method="asymptotic")
    >>> print(f"{ci.statistic}: {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}], se {ci.se:.4f}")
    cohen_kappa: 0.722 [0.642, 0.803], se 0.0412
    """
    options, generator = _options_iv(
        method, confidence_level, level_of_measurement, scheme, interval, n_resamples, rng, batch
    )
    registry.AGREEMENT_STATISTIC.check(statistic)
    data, _ = _read_codes(
        "codes", codes, level=level_of_measurement, categories=categories, groups=groups
    )
    chosen = _resolve_statistic(statistic, data, level_of_measurement, method)
    return _agreement(data, chosen, options, generator)


def agreement_report(
    human_codes: Any,
    machine_labels: Any,
    *,
    groups: Any = None,
    method: str = "bootstrap",
    confidence_level: float = 0.95,
    categories: Any = None,
    scheme: str | None = None,
    interval: str = "percentile",
    n_resamples: int = _N_RESAMPLES,
    rng: Any = None,
    batch: int | None = None,
) -> pd.DataFrame:
    r"""Tabulate a machine coder's agreement with the humans beside the humans' own.

    The table a reader needs to judge an LLM (or any classifier) as a coder: how well the
    humans agree with each other, and how well the machine agrees with each human and
    with the humans' majority label. A machine that agrees with the humans about as well
    as they agree with each other codes about as reliably as another human would.

    Parameters
    ----------
    human_codes : array_like or pandas.DataFrame
        The humans' codes, one row per text and one column per human (a DataFrame's
        column names name them), at least two humans; NaN, None or ``pd.NA`` where a
        human did not code a text.
    machine_labels : array_like
        The machine's label of every text (no missing values), in the humans' coding.
    groups : array_like, optional
        Person ids, one per text (texts nested in persons).
    method : {"bootstrap", "asymptotic"}, default "bootstrap"
        The interval of every Cohen's kappa row (see :func:`annotator_agreement`); the
        Krippendorff's alpha row is always bootstrapped (alpha has no asymptotic interval
        here), and its `method` column says so.
    confidence_level : float, default 0.95
        Confidence level of each row's interval (the rows are not a simultaneous band).
    categories : sequence, optional
        The possible codes; default: those that occur in either argument.
    scheme, interval, n_resamples, batch
        Bootstrap options, as in :func:`annotator_agreement`.
    rng : numpy.random.Generator, int or None
        Random generator or seed: row r of the table uses
        ``np.random.default_rng(rng).spawn(rows)[r]``.

    Returns
    -------
    pandas.DataFrame
        One row per comparison, in this order: each pair of humans (``role``
        ``"human_pair"``, Cohen's kappa on the texts both coded), all humans
        (``"humans"``, Krippendorff's alpha, nominal), the machine against each human
        (``"machine_human"``, Cohen's kappa on the texts that human coded) and against
        the majority label (``"machine_majority"``). Columns ``comparison``, ``role``,
        ``statistic``, ``estimate``, ``low``, ``high``, ``se``, ``n_texts``,
        ``n_texts_unused``, ``persons``, ``method`` (what computed the interval) and
        ``sources`` (as :attr:`AgreementCI.sources`); ``DataFrame.attrs`` holds
        ``confidence_level``.

    Raises
    ------
    ValueError
        As :func:`annotator_agreement`; also for fewer than 2 humans, machine labels
        that are missing, not one per text, or in a coding that never matches the humans'.

    Warns
    -----
    UndefinedMetricWarning
        For a row whose statistic is undefined (a pair of humans with no text in common,
        or one code only): its estimate and interval are NaN.

    Notes
    -----
    *The majority label* of a text is the code given by more of the humans who coded it
    than any other code (a plurality; for a text coded by one human, that human's code).
    A text whose most frequent codes tie (one human says yes and one no) has no
    majority label and is left out of the ``machine_majority`` row (its
    ``n_texts_unused`` counts them, with the texts no human coded). Leaving out the
    texts the humans split on leaves the texts that are easier to agree on, so that row
    tends to be higher than agreement with any one human would be on all texts.

    Each row's interval comes from its own bootstrap (or variance); the rows share texts,
    so their intervals are not independent, and a difference between two rows needs its
    own paired interval, which this table does not give.

    Examples
    --------
    >>> import numpy as np
    >>> import perfci as pc
    >>> import pandas as pd
    >>> rng = np.random.default_rng(5)
    >>> truth = rng.integers(0, 2, size=300)
    >>> def coder(accuracy):
    ...     return np.where(rng.random(300) < accuracy, truth, 1 - truth)
    >>> humans = pd.DataFrame({"ana": coder(0.9), "ben": coder(0.9), "cy": coder(0.9)})
    >>> humans = humans.astype(float)
    >>> humans.loc[rng.random(300) < 0.6, "cy"] = np.nan  # cy coded 40% of the texts
    >>> table = pc.agreement_report(humans, coder(0.85), rng=1)
    >>> table[["comparison", "estimate", "low", "high", "n_texts"]].round(3)  # doctest: +ELLIPSIS
                comparison  estimate    low   high  n_texts
    0           ana vs ben     0.693    ...      300
    1            ana vs cy     0.568    ...      121
    2            ben vs cy     0.600    ...      121
    3           all humans     0.650    ...      300
    4       machine vs ana     0.547    ...      300
    5       machine vs ben     0.572    ...      300
    6        machine vs cy     0.486    ...      121
    7  machine vs majority     0.666    ...      270
    >>> bool(((table["low"] < table["estimate"]) & (table["estimate"] < table["high"])).all())
    True

    (The ends are bootstrap quantiles, elided above: their digits depend on the random
    stream.)

    The 30 texts that ana and ben split on, and cy did not code, have no majority label.
    """
    options, generator = _options_iv(
        method, confidence_level, "nominal", scheme, interval, n_resamples, rng, batch
    )
    if isinstance(machine_labels, pd.DataFrame):
        raise ValueError(
            "`machine_labels` must be one-dimensional: one label per text; got a DataFrame."
        )
    machine = as_label_array("machine_labels", machine_labels)
    data, extra = _read_codes(
        "human_codes",
        human_codes,
        level="nominal",
        categories=categories,
        groups=groups,
        prefix="human",
        extra={"machine_labels": machine},
    )
    n = data.index.shape[0]
    machine_index = extra["machine_labels"]
    if machine_index.size != n:
        raise ValueError(
            f"`machine_labels` must have one label per text of `human_codes` ({n}); got "
            f"{machine_index.size}."
        )
    humans = data.index.shape[1]
    names = data.annotators
    rows: list[tuple[str, str, str, _Codes]] = []
    for a in range(humans):
        for b in range(a + 1, humans):
            pair = data.pair(data.index[:, [a, b]], (names[a], names[b]))
            rows.append((f"{names[a]} vs {names[b]}", "human_pair", "cohen_kappa", pair))
    rows.append(("all humans", "humans", "krippendorff_alpha", data))
    for a in range(humans):
        pair = data.pair(np.column_stack([machine_index, data.index[:, a]]), ("machine", names[a]))
        rows.append((f"machine vs {names[a]}", "machine_human", "cohen_kappa", pair))
    majority = _majority(data.index, data.categories.size)
    pair = data.pair(np.column_stack([machine_index, majority]), ("machine", "the majority label"))
    rows.append(("machine vs majority", "machine_majority", "cohen_kappa", pair))
    streams = generator.spawn(len(rows))
    records = []
    for (comparison, role, statistic, codes), stream in zip(rows, streams, strict=True):
        row_options = options
        if statistic != "cohen_kappa" and options.method != "bootstrap":
            row_options = _Options(
                "bootstrap", options.level, "nominal", None, "percentile", _N_RESAMPLES, None
            )
        result = _agreement(codes, statistic, row_options, stream, single=False)
        records.append(
            {
                "comparison": comparison,
                "role": role,
                "statistic": statistic,
                "estimate": result.estimate,
                "low": result.low,
                "high": result.high,
                "se": result.se,
                "n_texts": result.n_texts,
                "n_texts_unused": result.n_texts_unused,
                "persons": result.persons,
                "method": result.description,
                "sources": result.sources,
            }
        )
    table = pd.DataFrame(records)
    table["persons"] = pd.array(table["persons"].tolist(), dtype="Int64")
    table.attrs["confidence_level"] = options.level
    return table
