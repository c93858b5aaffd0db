"""Coverage validation harness: suites of simulated data sets, scored for every method.

A suite (a TOML file in ``validation/suites/``) names a population, a grid of cells (for
example sample size n by true proportion p), the methods to score, the replications and
resamples per scale, and a seed. In every cell all methods see the same simulated data
sets (common random numbers). The seed of a cell is
``SeedSequence(suite_seed, spawn_key=hash(cell))``: results do not depend on scheduling,
the number of workers or an interrupted and resumed run.

Each finished cell is written atomically to ``DIR/SUITE.cells/`` and a run resumes from
them; the result is an :class:`xarray.Dataset` written to ``DIR/SUITE.nc`` with variables
``coverage``, ``mc_se``, ``mean_half_width``, ``miss_low`` (interval below the truth),
``miss_high`` (interval above the truth), ``n_valid`` and ``n_flagged`` (MCMC fits that
failed their diagnostics), over the grid's dims and ``ci_method`` (with each method's
options as coordinates on it: ``family``, ``base_method``, ``design``, ``df_adjust``,
``scheme``, ``interval``, ``pseudo_count``, ``sampler``, ``estimand``).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
import tempfile
import tomllib
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from .analytic import ANALYTIC_METHODS, proportion_ci
from .bootstrap import bootstrap_ci
from .exact import operating_characteristics

__all__ = ["Suite", "list_suites", "load_suite", "run_suite", "suite_dir"]

#: Variables of a result dataset, in order.
RESULT_VARIABLES = (
    "coverage",
    "mc_se",
    "mean_half_width",
    "miss_low",
    "miss_high",
    "n_valid",
    "n_flagged",
)
_TOP_KEYS = {
    "name",
    "description",
    "seed",
    "population",
    "grid",
    "methods",
    "scales",
    "confidence_level",
}
_POPULATIONS = ("bernoulli", "confusion", "nested_finite", "nested_planning")
_FAMILIES = ("analytic", "bootstrap", "clustered", "bayes")
# Texts per person in the paper's nested sampling designs: mean, SD (minimum 1).
SAMPLINGS = {"small": (3.0, 1.0), "moderate": (30.0, 5.0)}


class SuiteError(ValueError):
    """A suite file is invalid; the message names the key."""


@dataclass(frozen=True)
class Method:
    """One method of a suite: its output name and how to compute it."""

    name: str
    family: str
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Scale:
    """Replications, resamples and grid overrides of one scale (smoke, full)."""

    replications: int
    resamples: int
    exact: bool = False
    grid: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Suite:
    """A validated suite."""

    name: str
    description: str
    seed: int
    confidence_level: float
    population: dict
    grid: dict
    methods: tuple[Method, ...]
    scales: dict

    def cells(self, scale: str) -> list[dict[str, Any]]:
        """Every cell of the grid at a scale, as ``{dim: value}``."""
        grid = {**self.grid, **self.scales[scale].grid}
        names = list(grid)
        return [
            dict(zip(names, values, strict=True))
            for values in itertools.product(*(grid[d] for d in names))
        ]

    def dims(self, scale: str) -> dict[str, list]:
        """Return the grid's dims and coordinate values at a scale."""
        return {**self.grid, **self.scales[scale].grid}


def suite_dir() -> Path:
    """Return the folder of suite files: ``validation/suites`` of the working directory.

    Examples
    --------
    >>> from perfci import harness
    >>> harness.suite_dir().parts[-2:]
    ('validation', 'suites')
    """
    return Path.cwd() / "validation" / "suites"


def list_suites(directory: Path | None = None) -> list[str]:
    """Return the names of the suites in `directory` (default :func:`suite_dir`).

    Examples
    --------
    >>> from perfci import harness
    >>> "paper-independent" in harness.list_suites()  # run from the repository root
    True
    """
    folder = suite_dir() if directory is None else Path(directory)
    return sorted(p.stem for p in folder.glob("*.toml"))


def _expand(values: Any, key: str) -> list:
    if isinstance(values, dict):
        if set(values) != {"start", "stop", "step"}:
            raise SuiteError(f"`{key}` must be a list or a table with start, stop and step.")
        grid = np.arange(values["start"], values["stop"] + values["step"] / 2, values["step"])
        grid = grid.round(10)
        return [int(v) for v in grid] if np.all(grid == np.round(grid)) else grid.tolist()
    if not isinstance(values, list) or not values:
        raise SuiteError(f"`{key}` must be a non-empty list of values.")
    return values


def _check_method(i: int, spec: dict) -> Method:
    key = f"methods[{i}]"
    for required in ("name", "family"):
        if required not in spec:
            raise SuiteError(f"`{key}.{required}` is missing.")
    family = spec["family"]
    if family not in _FAMILIES:
        raise SuiteError(f"`{key}.family` must be one of {list(_FAMILIES)}; got {family!r}.")
    options = {k: v for k, v in spec.items() if k not in ("name", "family")}
    if family == "analytic":
        allowed = {"method"}
        if options.get("method") not in ANALYTIC_METHODS:
            raise SuiteError(
                f"`{key}.method` must be one of {list(ANALYTIC_METHODS)}; got "
                f"{options.get('method')!r}."
            )
    elif family == "clustered":
        allowed = {"method", "design", "df_adjust"}
        if options.get("method") not in ANALYTIC_METHODS:
            raise SuiteError(f"`{key}.method` must be one of {list(ANALYTIC_METHODS)}.")
        if options.setdefault("design", "icc") not in ("icc", "cluster_robust"):
            raise SuiteError(f"`{key}.design` must be 'icc' or 'cluster_robust'.")
        df = options.setdefault("df_adjust", "none")
        if df not in ("none", "dean_pagano", "korn_graubard"):
            raise SuiteError(f"`{key}.df_adjust` must be 'none', 'dean_pagano' or 'korn_graubard'.")
    elif family == "bayes":
        allowed = {"sampler", "estimand", "replications"}
        sampler = options.setdefault("sampler", "grid")
        if sampler not in ("grid", "nutpie"):
            raise SuiteError(f"`{key}.sampler` must be 'grid' or 'nutpie'.")
        if sampler == "nutpie" and not isinstance(options.get("replications"), int):
            raise SuiteError(
                f"`{key}.replications` (the first K replications of each cell to fit with "
                "MCMC) is needed for sampler 'nutpie'."
            )
        if options.get("estimand") not in ("mu", "text_weighted"):
            raise SuiteError(f"`{key}.estimand` must be 'mu' or 'text_weighted'.")
    else:
        allowed = {"interval", "pseudo_count", "scheme"}
        if options.setdefault("scheme", "iid") not in ("iid", "cluster", "hierarchical"):
            raise SuiteError(f"`{key}.scheme` must be 'iid', 'cluster' or 'hierarchical'.")
        if options.get("interval") not in ("percentile", "bca"):
            raise SuiteError(
                f"`{key}.interval` must be 'percentile' or 'bca'; got {options.get('interval')!r}."
            )
        lam = options.setdefault("pseudo_count", 0)
        if not isinstance(lam, int) or lam < 0:
            raise SuiteError(f"`{key}.pseudo_count` must be a non-negative integer.")
    unknown = set(options) - allowed
    if unknown:
        raise SuiteError(f"`{key}` has unknown keys {sorted(unknown)}.")
    return Method(spec["name"], family, options)


def _check_population(population: Any) -> dict:
    if not isinstance(population, dict) or population.get("kind") not in _POPULATIONS:
        raise SuiteError(f"`population.kind` must be one of {list(_POPULATIONS)}.")
    if population["kind"] == "nested_finite":
        required = {"persons", "texts_per_person", "mean", "seed"}
        missing = required - set(population)
        if missing:
            raise SuiteError(f"`population` is missing {sorted(missing)}.")
        if not 0 < population["mean"] < 1:
            raise SuiteError("`population.mean` must lie strictly between 0 and 1.")
        sd = population.get("sd")
        if sd is not None and not 0 < sd**2 < population["mean"] * (1 - population["mean"]):
            raise SuiteError(
                "`population.sd` must be positive and below "
                "sqrt(mean (1 - mean)) (a Beta distribution)."
            )
        unknown = set(population) - required - {"kind", "sd", "srs_texts"}
        if unknown:
            raise SuiteError(f"`population` has unknown keys {sorted(unknown)}.")
    return population


def load_suite(name_or_path: str | os.PathLike) -> Suite:
    """Load and validate a suite by name (in :func:`suite_dir`) or path.

    Parameters
    ----------
    name_or_path : str or path
        A suite name such as ``"paper-independent"`` or a path to a TOML file.

    Returns
    -------
    Suite
        The validated suite.

    Raises
    ------
    ValueError
        If the file is missing or invalid; the message names the key (unknown
        method, impossible population, missing key), before any work starts.

    Examples
    --------
    >>> from perfci import harness
    >>> suite = harness.load_suite("paper-independent")  # from the repository root
    >>> len(suite.cells("full")), [m.name for m in suite.methods][:3]
    (1446, ['wald', 'wilson', 'agresti_coull'])
    """
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = suite_dir() / f"{name_or_path}.toml"
    if not path.is_file():
        known = list_suites(path.parent) if path.parent.is_dir() else []
        raise SuiteError(f"suite {str(name_or_path)!r} not found (known suites: {known}).")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"suite {path.name} is not valid TOML: {exc}") from None
    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise SuiteError(f"suite {path.name}: unknown keys {sorted(unknown)}.")
    for required in ("name", "seed", "population", "grid", "methods", "scales"):
        if required not in raw:
            raise SuiteError(f"suite {path.name}: `{required}` is missing.")
    try:
        population = _check_population(raw["population"])
        grid = {k: _expand(v, f"grid.{k}") for k, v in raw["grid"].items()}
        methods = tuple(_check_method(i, m) for i, m in enumerate(raw["methods"]))
        names = [m.name for m in methods]
        if len(set(names)) != len(names):
            raise SuiteError("`methods` names must be unique.")
        scales = {}
        for scale_name, spec in raw["scales"].items():
            unknown = set(spec) - {"replications", "resamples", "exact", "grid"}
            if unknown:
                raise SuiteError(f"`scales.{scale_name}` has unknown keys {sorted(unknown)}.")
            if "replications" not in spec or "resamples" not in spec:
                raise SuiteError(f"`scales.{scale_name}` needs replications and resamples.")
            scale_grid = {
                k: _expand(v, f"scales.{scale_name}.grid.{k}")
                for k, v in spec.get("grid", {}).items()
            }
            if set(scale_grid) - set(grid):
                raise SuiteError(f"`scales.{scale_name}.grid` has dims not in `grid`.")
            scales[scale_name] = Scale(
                int(spec["replications"]),
                int(spec["resamples"]),
                bool(spec.get("exact", False)),
                scale_grid,
            )
        if population["kind"] == "nested_finite":
            samplings = set(grid.get("sampling", []))
            needed = {"sampling"} | ({"persons"} if samplings - {"srs"} else set())
            if not needed <= set(grid) <= needed | {"persons", "icc"}:
                raise SuiteError(
                    "`grid` of a nested population must have dims sampling and persons (and "
                    "optionally icc)."
                )
            bad = samplings - set(SAMPLINGS) - {"srs"}
            if bad:
                raise SuiteError(
                    f"`grid.sampling` must be among {sorted(SAMPLINGS) + ['srs']}; got {bad}."
                )
            if "icc" in grid:
                if not all(0 < r < 1 for r in grid["icc"]):
                    raise SuiteError("`grid.icc` must lie strictly between 0 and 1.")
            elif "sd" not in population:
                raise SuiteError("`population.sd` is missing (or give an `icc` dim).")
        if population["kind"] == "confusion":
            if set(grid) != {"n", "precision", "recall"}:
                raise SuiteError(
                    "`grid` of a confusion population must have dims n, precision and recall."
                )
            if not 0 < population.get("prevalence", -1) < 1:
                raise SuiteError("`population.prevalence` must lie strictly between 0 and 1.")
            for dim in ("precision", "recall"):
                if not all(0 < v <= 1 for v in grid[dim]):
                    raise SuiteError(f"`grid.{dim}` must lie in (0, 1].")
            if any(m.family != "bootstrap" or m.options["scheme"] != "iid" for m in methods):
                raise SuiteError("a confusion suite takes iid `bootstrap` methods only.")
        if population["kind"] == "nested_planning":
            if set(grid) != {"n", "icc", "texts_per_person"}:
                raise SuiteError(
                    "`grid` of a nested_planning population must have dims n, icc and "
                    "texts_per_person."
                )
            if not 0 < population.get("metric_value", -1) < 1:
                raise SuiteError("`population.metric_value` must lie strictly between 0 and 1.")
            if any(not s.exact for s in scales.values()):
                raise SuiteError("a nested_planning suite is analytic: every scale is exact.")
            if any(m.family != "clustered" for m in methods):
                raise SuiteError("a nested_planning suite takes `clustered` methods only.")
        if population["kind"] == "bernoulli":
            if set(grid) != {"n", "p"}:
                raise SuiteError("`grid` of a bernoulli population must have dims n and p.")
            if not all(0 < p < 1 for p in grid["p"]):
                raise SuiteError("`grid.p` must lie strictly between 0 and 1.")
        level = float(raw.get("confidence_level", 0.95))
        if not 0 < level < 1:
            raise SuiteError("`confidence_level` must lie strictly between 0 and 1.")
    except SuiteError as exc:
        raise SuiteError(f"suite {path.name}: {exc}") from None
    _check_support(population["kind"], methods, scales, path.name)
    return Suite(
        raw["name"],
        raw.get("description", ""),
        int(raw["seed"]),
        level,
        population,
        grid,
        methods,
        scales,
    )


# What each population can compute: method families, bootstrap schemes and intervals.
_SUPPORT = {
    "bernoulli": ({"analytic", "bootstrap"}, {"iid"}, {"percentile", "bca"}, True),
    "confusion": ({"bootstrap"}, {"iid"}, {"percentile"}, False),
    "nested_finite": (
        {"analytic", "clustered", "bootstrap", "bayes"},
        {"iid", "cluster", "hierarchical"},
        {"percentile"},
        False,
    ),
    "nested_planning": ({"clustered"}, set(), set(), True),
}


def _check_support(kind: str, methods, scales, filename: str) -> None:
    """Reject methods or an exact scale that a population kind cannot compute."""
    families, schemes, intervals, exact_ok = _SUPPORT[kind]
    for i, m in enumerate(methods):
        key = f"suite {filename}: `methods[{i}]`"
        if m.family not in families:
            raise SuiteError(
                f"{key}: a {kind} population takes families {sorted(families)}; got {m.family!r}."
            )
        if m.family == "bootstrap":
            if m.options["scheme"] not in schemes:
                raise SuiteError(
                    f"{key}.scheme must be one of {sorted(schemes)} for a {kind} population."
                )
            if m.options["interval"] not in intervals:
                raise SuiteError(
                    f"{key}.interval must be one of {sorted(intervals)} for a {kind} population."
                )
    for name, scale in scales.items():
        if scale.exact and not exact_ok:
            raise SuiteError(
                f"suite {filename}: `scales.{name}.exact`: a {kind} population has no exact mode."
            )
        if not scale.exact and kind == "nested_planning":
            raise SuiteError(
                f"suite {filename}: `scales.{name}`: a nested_planning suite is "
                "analytic; set exact = true."
            )


def suite_fingerprint(suite: Suite, scale: str) -> str:
    """Hash everything that determines a run's cells: the suite's contents and scale."""
    payload = repr(
        (
            suite.name,
            suite.seed,
            suite.confidence_level,
            sorted(suite.population.items()),
            sorted((k, tuple(v)) for k, v in suite.grid.items()),
            [(m.name, m.family, sorted(m.options.items())) for m in suite.methods],
            scale,
            suite.scales[scale],
        )
    )
    return hashlib.sha256(payload.encode()).hexdigest()


# ------------------------------------------------------------------------ cell kernels


def _cell_seed(suite: Suite, scale: str, cell: dict) -> np.random.SeedSequence:
    key = f"{suite.name}|{scale}|" + "|".join(f"{k}={cell[k]!r}" for k in sorted(cell))
    digest = hashlib.sha256(key.encode()).digest()
    return np.random.SeedSequence(
        suite.seed,
        spawn_key=tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)),
    )


def _score(low, high, truth, flagged=0) -> np.ndarray:
    """hits, misses low and high, half-width sum, n_valid, n_flagged of intervals."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    valid = np.isfinite(low) & np.isfinite(high)  # an interval that could not be formed
    low, high = low[valid], high[valid]
    return np.array(
        [
            np.sum((low <= truth) & (truth <= high)),
            np.sum(high < truth),
            np.sum(low > truth),
            np.sum(high - low) / 2,
            low.size,
            flagged,
        ],
        dtype=float,
    )


def _bootstrap_ends(counts: np.ndarray, metric: str, options: dict, scale: Scale, level, rng):
    """Interval ends of :func:`perfci.bootstrap_ci` for a batch of data sets.

    Warnings (dropped resamples, BCa fallbacks) are expected in a coverage study; the
    ends are what is scored, and an interval that cannot be formed is NaN (not valid).
    """
    nested = counts.ndim == 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ci = bootstrap_ci(
            counts,
            metric,
            scheme=options.get("scheme", "iid"),
            interval=options["interval"],
            pseudo_count=options["pseudo_count"],
            n_resamples=scale.resamples,
            confidence_level=level,
            rng=rng,
            nested=nested,
        )
    return ci.low, ci.high


def _bernoulli_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    n, p = int(cell["n"]), float(cell["p"])
    level = suite.confidence_level
    out = np.empty((len(suite.methods), 6))
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    x = data_rng.binomial(n, p, size=scale.replications)  # the data every method sees
    counts = np.stack([x, n - x], axis=-1)
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        if m.family == "analytic":
            ci = proportion_ci(x, n, method=m.options["method"], confidence_level=level)
            low, high = ci.low, ci.high
        else:
            low, high = _bootstrap_ends(counts, "proportion", m.options, scale, level, rng)
        out[i] = _score(low, high, p)
    return out


@functools.cache
def nested_population(persons: int, texts: int, mean: float, sd: float, seed: int):
    """Build the paper's finite nested population: successes per person, and the truth.

    Person rates p_i ~ Beta with the given mean and SD; each of ``texts`` outcomes of
    person i is Bernoulli(p_i). Returns (successes per person, the text-weighted rate of
    the whole population: the mean of all persons x texts outcomes).
    """
    rng = np.random.default_rng(seed)
    k = mean * (1 - mean) / sd**2 - 1
    rates = rng.beta(mean * k, (1 - mean) * k, persons)
    successes = rng.binomial(texts, rates)
    return successes, successes.sum() / (persons * texts)


def _population_of(suite: Suite, cell: dict):
    """Return the cell's finite population (an ``icc`` dim sets sd^2 = icc m (1 - m))."""
    pop = suite.population
    sd = pop.get("sd")
    if "icc" in cell:
        sd = float(np.sqrt(cell["icc"] * pop["mean"] * (1 - pop["mean"])))
    return nested_population(pop["persons"], pop["texts_per_person"], pop["mean"], sd, pop["seed"])


def _nested_sample(suite: Suite, cell: dict, replications: int, rng: np.random.Generator):
    """Per-person successes and texts (R, m) of R samples of m persons.

    Design ``"srs"`` samples ``population.srs_texts`` texts at random from the whole
    population instead; persons are then those hit (texts = 0 for the others).
    """
    pop = suite.population
    totals, _ = _population_of(suite, cell)
    if cell["sampling"] == "srs":
        per_person = rng.multivariate_hypergeometric(
            np.full(totals.size, pop["texts_per_person"]),
            pop.get("srs_texts", 1200),
            size=replications,
        )
        y = rng.hypergeometric(
            np.broadcast_to(totals, per_person.shape), pop["texts_per_person"] - totals, per_person
        )
        return y, per_person
    m = int(cell["persons"])
    # m persons without replacement: the m smallest of uniform keys
    keys = rng.random((replications, totals.size))
    chosen = np.argpartition(keys, m - 1, axis=1)[:, :m]
    mean, sd = SAMPLINGS[cell["sampling"]]
    texts = np.clip(
        np.rint(rng.normal(mean, sd, (replications, m))), 1, pop["texts_per_person"]
    ).astype(np.int64)
    good = totals[chosen]
    y = rng.hypergeometric(good, pop["texts_per_person"] - good, texts)
    return y, texts


def _nested_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    from .bayes import grid_intervals
    from .design import clustered_proportion_ci

    _, truth = _population_of(suite, cell)
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    y, n = _nested_sample(suite, cell, scale.replications, data_rng)
    x_total, n_total = y.sum(1), n.sum(1)
    per_person = np.stack([y, n - y], axis=-1)  # (replications, persons, 2)
    out = np.empty((len(suite.methods), 6))
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        o = m.options
        if m.family == "analytic":
            ci = proportion_ci(x_total, n_total, method=o["method"], confidence_level=level)
            low, high = ci.low, ci.high
        elif m.family == "clustered":
            df = None if o["df_adjust"] == "none" else o["df_adjust"]
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ci = clustered_proportion_ci(
                    y,
                    n,
                    method=o["method"],
                    design=o["design"],
                    df_adjust=df,
                    confidence_level=level,
                )
            low, high = ci.low, ci.high
        elif m.family == "bootstrap":
            low, high = _bootstrap_ends(per_person, "proportion", o, scale, level, rng)
        elif o["sampler"] == "nutpie":
            low, high, flagged = _nutpie_intervals(
                y, n, o["estimand"], o["replications"], level, rng
            )
            out[i] = _score(low, high, truth, flagged)
            continue
        else:
            ci = grid_intervals(y, n, estimand=o["estimand"], level=level, rng=rng)
            low, high = ci.low, ci.high
        out[i] = _score(low, high, truth)
    return out


def _nutpie_intervals(y, n, estimand, replications, level, rng):
    """MCMC (nutpie) credible intervals for the first `replications` data sets of a cell.

    Every fit is one MCMC run (compiled once per worker process, refit with the data);
    flagged fits (failed diagnostics) are kept in the coverage and counted.
    """
    from .bayes import BayesianDiagnosticsWarning, fit

    k = min(replications, y.shape[0])
    low, high = np.full(k, np.nan), np.full(k, np.nan)
    flagged = 0
    seeds = rng.integers(2**31 - 1, size=k)
    for r in range(k):  # one MCMC run per data set: no way around a loop here
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BayesianDiagnosticsWarning)
            result = fit(
                y[r], n[r], sampler="nutpie", draws=1000, tune=1000, chains=2, rng=int(seeds[r])
            )
        ci = result.interval(estimand, "eti", level)
        low[r], high[r] = ci.low, ci.high
        flagged += int(result.flagged)
    return low, high, flagged


def confusion_probabilities(prevalence: float, precision: float, recall: float) -> np.ndarray:
    """Cell probabilities [tp, fp, fn, tn] of a population with these three rates."""
    tp = prevalence * recall
    fn = prevalence - tp
    fp = tp * (1 - precision) / precision
    tn = 1 - tp - fn - fp
    if tn < 0:
        raise ValueError(
            f"no population has prevalence {prevalence}, precision {precision} and recall "
            f"{recall}: the classifier's positives would exceed all texts."
        )
    return np.array([tp, fp, fn, tn])


def _confusion_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """F1 bootstrap intervals on confusion matrices of n texts (the paper's section 3.2)."""
    precision, recall = float(cell["precision"]), float(cell["recall"])
    truth = 2 * precision * recall / (precision + recall)
    probs = confusion_probabilities(suite.population["prevalence"], precision, recall)
    n = int(cell["n"])
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    counts = data_rng.multinomial(n, probs, size=scale.replications)  # every method's data
    out = np.empty((len(suite.methods), 6))
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        low, high = _bootstrap_ends(counts, "f1", m.options, scale, level, rng)
        out[i] = _score(low, high, truth)
    return out


_KERNELS: dict[str, Callable] = {
    "bernoulli": _bernoulli_cell,
    "confusion": _confusion_cell,
    "nested_finite": _nested_cell,
}


# ---------------------------------------------------------------------------- running


def _cell_path(folder: Path, cell: dict) -> Path:
    key = "_".join(f"{k}-{cell[k]}" for k in sorted(cell))
    return folder / f"{key}.npy"


def _write_atomic(path: Path, array: np.ndarray) -> None:
    """Write to a temporary file in the same folder, then rename: never a partial file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, array)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def compute_cell(suite: Suite, scale_name: str, cell: dict) -> np.ndarray:
    """Score every method in one cell: (methods, 6) = hits, misses, half-widths, n, flags."""
    scale = suite.scales[scale_name]
    return _KERNELS[suite.population["kind"]](
        suite, scale, cell, _cell_seed(suite, scale_name, cell)
    )


def run_suite(
    suite: Suite | str,
    scale: str = "smoke",
    out: str | os.PathLike = "validation/results",
    *,
    workers: int = 1,
    scheduler: str | None = None,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> xr.Dataset:
    """Run a suite and write ``OUT/SUITE.nc``; return the result dataset.

    Parameters
    ----------
    suite : Suite or str
        A suite or its name.
    scale : str, default "smoke"
        A scale of the suite (``"smoke"``: seconds; ``"full"``: the paper's).
    out : path, default "validation/results"
        Output folder.
    workers : int, default 1
        Dask workers of an embedded LocalCluster (1: run in this process).
    scheduler : str, optional
        Address of an existing Dask scheduler (instead of `workers`).
    resume : bool, default False
        Keep the cells a previous run finished (in ``OUT/SUITE.cells/``).
    progress : callable, optional
        Called with (cells done, cells in all) after each cell.

    Returns
    -------
    xarray.Dataset
        The result (see the module notes).

    Examples
    --------
    The exact scale of the paper's independent suite takes about a second:

    >>> import tempfile
    >>> from perfci import harness
    >>> with tempfile.TemporaryDirectory() as out:
    ...     ds = harness.run_suite("paper-independent", "exact", out)
    >>> round(float(ds.sel(n=20, p=0.95, ci_method="wald")["coverage"]), 3)
    0.639
    """
    suite = load_suite(suite) if isinstance(suite, str) else suite
    if scale not in suite.scales:
        raise ValueError(f"`scale` must be one of {sorted(suite.scales)}; got {scale!r}.")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if suite.scales[scale].exact:
        # Exact mode is one vectorized enumeration per method: nothing to persist per cell.
        if suite.population["kind"] == "nested_planning":
            dataset = _planning_dataset(suite, scale)
        else:
            dataset = _exact_dataset(suite, scale)
        if progress:
            progress(1, 1)
        _write_dataset(dataset, out / f"{suite.name}.nc")
        return dataset
    folder = out / f"{suite.name}.cells"
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / "fingerprint.txt"
    fingerprint = suite_fingerprint(suite, scale)
    if resume and marker.exists() and marker.read_text() != fingerprint:
        raise ValueError(
            f"{folder} holds cells of another version of suite {suite.name!r} or another "
            "scale; run without `resume` to start again."
        )
    if not resume:
        for old in folder.glob("*.npy"):
            old.unlink()
    marker.write_text(fingerprint)
    for torn in folder.glob("*.tmp"):  # left by a run killed while writing
        torn.unlink()
    cells = suite.cells(scale)
    todo = [c for c in cells if not _cell_path(folder, c).exists()]
    done = len(cells) - len(todo)
    if progress:
        progress(done, len(cells))
    for cell, scores in _execute(suite, scale, todo, workers, scheduler):
        _write_atomic(_cell_path(folder, cell), scores)
        done += 1
        if progress:
            progress(done, len(cells))
    dataset = _assemble(suite, scale, cells, folder)
    _write_dataset(dataset, out / f"{suite.name}.nc")
    return dataset


def _write_dataset(dataset: xr.Dataset, target: Path) -> None:
    """Write netCDF to a temporary file, then rename: a failed write leaves no result."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".nc.tmp")
    os.close(fd)
    try:
        dataset.to_netcdf(tmp, engine="h5netcdf")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _planning_dataset(suite: Suite, scale: str) -> xr.Dataset:
    """Half-widths of design-adjusted intervals at the planned value (no coverage)."""
    from .planning import half_width_curves

    dims = suite.dims(scale)
    shape = [len(dims[d]) for d in ("n", "icc", "texts_per_person")]
    scores = np.full((*shape, len(suite.methods), 6), np.nan)
    for i, m in enumerate(suite.methods):
        df = None if m.options["df_adjust"] == "none" else m.options["df_adjust"]
        curves = half_width_curves(
            dims["n"],
            [suite.population["metric_value"]],
            suite.confidence_level,
            m.options["method"],
            icc=dims["icc"],
            texts_per_person=dims["texts_per_person"],
            df_adjust=df,
        )
        scores[..., i, 3] = curves.isel(metric_value=0).values
        scores[..., i, 4] = 1.0
        scores[..., i, 5] = 0.0
    return _dataset(suite, scale, scores)


def _exact_dataset(suite: Suite, scale: str) -> xr.Dataset:
    """Exact operating characteristics of every method over the whole (n, p) grid."""
    dims = suite.dims(scale)
    n = np.asarray(dims["n"], dtype=int)[:, None]
    p = np.asarray(dims["p"], dtype=float)[None, :]
    scores = np.full((n.size, p.size, len(suite.methods), 6), np.nan)
    for i, m in enumerate(suite.methods):
        if m.family == "bootstrap" and m.options["interval"] == "bca":
            scores[..., i, 4:] = 0.0  # BCa has no exact mode
            continue
        lam = m.options.get("pseudo_count", 0)
        name = m.options.get("method") or (f"pseudo_percentile_{lam}" if lam else "percentile")
        oc = operating_characteristics(name, n, p, suite.confidence_level)
        ones = np.ones(oc.coverage.shape)
        scores[..., i, :] = np.stack(
            [oc.coverage, oc.miss_low, oc.miss_high, oc.expected_half_width, ones, 0 * ones],
            -1,
        )
    return _dataset(suite, scale, scores)


def _execute(suite, scale, cells, workers, scheduler) -> Iterable[tuple[dict, np.ndarray]]:
    if not cells:
        return
    if scheduler is None and workers <= 1:
        for cell in cells:
            yield cell, compute_cell(suite, scale, cell)
        return
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            scheduler_port=0,
        )
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = {
            client.submit(compute_cell, suite, scale, cell, pure=False): i
            for i, cell in enumerate(cells)
        }
        for future in as_completed(futures):
            yield cells[futures[future]], future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _assemble(suite: Suite, scale: str, cells: list[dict], folder: Path) -> xr.Dataset:
    dims = suite.dims(scale)
    names = list(dims)
    shape = [len(dims[d]) for d in names]
    scores = np.empty((*shape, len(suite.methods), 6))
    index = {d: {v: i for i, v in enumerate(dims[d])} for d in names}
    for cell in cells:
        position = tuple(index[d][cell[d]] for d in names)
        scores[position] = np.load(_cell_path(folder, cell))
    return _dataset(suite, scale, scores)


#: Coordinates on ``ci_method`` that hold each method's options ("" or NaN: not used).
OPTION_COORDS = (
    "family",
    "base_method",
    "design",
    "df_adjust",
    "scheme",
    "interval",
    "pseudo_count",
    "sampler",
    "estimand",
)


def _option_coords(suite: Suite) -> dict[str, tuple[str, list]]:
    """Return each method's options as coordinates along ``ci_method``.

    ``base_method`` is the analytic method (the option ``method`` of analytic and
    clustered methods; a coordinate cannot be named ``method``, which
    :meth:`xarray.Dataset.sel` takes as a keyword).
    """
    coords: dict[str, tuple[str, list]] = {}
    for name in OPTION_COORDS:
        key = "method" if name == "base_method" else name
        values = [m.family if name == "family" else m.options.get(key) for m in suite.methods]
        if name == "pseudo_count":
            coords[name] = ("ci_method", [np.nan if v is None else float(v) for v in values])
        else:
            coords[name] = ("ci_method", ["" if v is None else str(v) for v in values])
    return coords


def _dataset(suite: Suite, scale: str, scores: np.ndarray) -> xr.Dataset:
    """Build the result dataset from per-cell scores (grid dims..., method, 5)."""
    dims = suite.dims(scale)
    names = list(dims)
    methods = [m.name for m in suite.methods]
    n_valid = scores[..., 4]
    with np.errstate(invalid="ignore", divide="ignore"):
        coverage = scores[..., 0] / n_valid
        mc_se = np.sqrt(coverage * (1 - coverage) / n_valid)
        if suite.scales[scale].exact:
            mc_se = np.zeros_like(coverage)
            n_valid = np.full_like(n_valid, np.nan)
        data = {
            "coverage": coverage,
            "mc_se": mc_se,
            "mean_half_width": scores[..., 3] / scores[..., 4],
            "miss_low": scores[..., 1] / scores[..., 4],
            "miss_high": scores[..., 2] / scores[..., 4],
            "n_valid": n_valid,
            "n_flagged": scores[..., 5],
        }
    all_dims = (*names, "ci_method")
    dataset = xr.Dataset(
        {k: (all_dims, v) for k, v in data.items()},
        coords={**{d: dims[d] for d in names}, "ci_method": methods, **_option_coords(suite)},
        attrs={
            "suite": suite.name,
            "description": suite.description,
            "scale": scale,
            "replications": suite.scales[scale].replications,
            "resamples": suite.scales[scale].resamples,
            "exact": int(suite.scales[scale].exact),
            "seed": suite.seed,
            "confidence_level": suite.confidence_level,
            "population": str(suite.population),
            "miss_low": "share of intervals lying wholly below the truth (high < truth)",
            "miss_high": "share of intervals lying wholly above the truth (low > truth)",
        },
    )
    return dataset
