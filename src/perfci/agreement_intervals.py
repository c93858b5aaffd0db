r"""The interval of one agreement statistic: the bootstrap of its cells, or the asymptotic.

:func:`agreement_interval` is what :func:`perfci.annotator_agreement` and every row of
:func:`perfci.agreement_report` compute: the statistic of the texts that enter it (cells
of :mod:`perfci.agreement_statistics`) with either the bootstrap of their cell counts,
per person for the cluster schemes, through the one resampling engine, or, for Cohen's
kappa, the large-sample variance of Fleiss, Cohen and Everitt (clustered over persons
with groups); and its result, :class:`AgreementCI`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ._core import registry
from ._core.labels import listing
from ._core.replicates import (
    MIN_PERSONS,
    ONE_PERSON,
    canonical_cells,
    check_bootstrap_options,
    resample_intervals,
    warn_about,
)
from ._core.resampling import AUTO_BATCH_ELEMENTS, Statistic
from ._core.results import IntervalResult
from ._core.validation import (
    UndefinedMetricWarning,
    check_confidence_level,
    dataset_generators,
)
from .agreement_codes import Codes
from .agreement_statistics import STATISTIC_NAMES, Cells, agreement_cells, unit_counts
from .auc_kernels import DegenerateIntervalWarning
from .bootstrap import BootstrapCI, assemble
from .design import effective_clusters, two_sided_quantile
from .policy import recommended_scheme

__all__ = [
    "AgreementCI",
    "AgreementOptions",
    "agreement_interval",
    "agreement_options_iv",
    "resolve_statistic",
]


@dataclass(frozen=True, repr=False)
class AgreementCI(IntervalResult):
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

    def __repr__(self) -> str:
        return (
            f"AgreementCI(statistic={self.statistic!r}, estimate={self.estimate:.4g}, "
            f"low={self.low:.4g}, high={self.high:.4g}, confidence_level="
            f"{self.confidence_level:g}, method={self.method!r}, n_texts={self.n_texts}, "
            f"n_annotators={self.n_annotators}, persons={self.persons}, "
            f"sources={self.sources})"
        )


@dataclass(frozen=True)
class AgreementOptions:
    """The checked options of one agreement interval (:func:`agreement_options_iv`)."""

    method: str
    level: float
    level_of_measurement: str
    scheme: str | None
    interval: str
    n_resamples: int
    batch: int | None


def agreement_options_iv(
    method: Any,
    confidence_level: Any,
    level_of_measurement: Any,
    scheme: Any,
    interval: Any,
    n_resamples: Any,
    rng: Any,
    batch: Any,
) -> tuple[AgreementOptions, np.random.Generator]:
    """Check the options of :func:`perfci.annotator_agreement` and of its report's rows."""
    registry.AGREEMENT_METHOD.check(method)
    level = float(check_confidence_level(confidence_level, scalar=True))
    registry.LEVEL_OF_MEASUREMENT.check(level_of_measurement)
    interval, resamples, generator = check_bootstrap_options(
        method, scheme, interval, n_resamples, rng, batch, level
    )
    options = AgreementOptions(
        method, level, level_of_measurement, scheme, interval, resamples, batch
    )
    return options, generator


def resolve_statistic(statistic: str, data: Codes, level: str, method: str) -> str:
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


def _population(statistic: str, clustered: bool, persons: int | None) -> str:
    what = f"{STATISTIC_NAMES[statistic]} of these annotators"
    if clustered:
        return (
            f"{what} on the texts of the population of persons that these {persons} persons "
            "were sampled from (text-weighted), new persons included"
        )
    return f"{what} on the population of texts this sample represents"


def _nan_result(
    data: Codes, cells: Cells, options: AgreementOptions, statistic: str, scheme: str | None
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
        description=f"{STATISTIC_NAMES[statistic]} undefined",
        population=_population(statistic, clustered, persons),
    )


def _no_pairs(data: Codes, statistic: str) -> str:
    if statistic == "cohen_kappa":
        pair = " and ".join(data.annotators)
        return f"no text of `{data.name}` was coded by both {pair}"
    return f"no text of `{data.name}` was coded by two annotators or more"


def _one_code(data: Codes, cells: Cells, statistic: str) -> str:
    codes = data.categories[np.unique(_pairable_codes(data, cells))]
    return (
        f"every code of the texts that enter it is {listing(codes)}: with one code there "
        "is no variation, and agreement beyond chance is 0/0"
    )


def _pairable_codes(data: Codes, cells: Cells) -> np.ndarray:
    chosen = data.index[cells.used]
    return chosen[chosen >= 0]


def _warn_zero_width(what: str, value: float) -> None:
    warnings.warn(
        f"the {what} has zero width at {value:g}: the texts show no variation to estimate "
        "its uncertainty from (every resample, or every text's influence, gives the same "
        "value), so the interval claims a certainty the data do not give.",
        DegenerateIntervalWarning,
        stacklevel=4,
    )


def agreement_interval(
    data: Codes,
    statistic: str,
    options: AgreementOptions,
    generator: np.random.Generator,
    *,
    single: bool = True,
) -> AgreementCI:
    """One statistic with its interval. `single` False: no pairs give NaN, not an error."""
    cells = agreement_cells(data, statistic, options.level_of_measurement)
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
    name = STATISTIC_NAMES[statistic]
    if n_used == 0:
        if single:
            raise ValueError(f"{name} needs texts coded twice: {_no_pairs(data, statistic)}.")
        warnings.warn(
            f"{name} is undefined: {_no_pairs(data, statistic)}; returning NaN.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return _nan_result(data, cells, options, statistic, scheme)
    units = unit_counts(cells, data, per_person=False)
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
            unit_counts(cells, data, per_person=True), scheme, nested=True, rater_symmetric=False
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
    data: Codes,
    cells: Cells,
    units: np.ndarray,
    estimate: float,
    options: AgreementOptions,
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
        per_person = unit_counts(cells, data, per_person=True)
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
