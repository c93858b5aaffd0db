"""Suite files: the TOML schema, its validation, and the fingerprint that guards ``--resume``."""

from __future__ import annotations

import hashlib
import itertools
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._core import registry
from .populations import SAMPLINGS

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
    """Validate one method of a suite against the registry's families and options."""
    key = f"methods[{i}]"
    for required in ("name", "family"):
        if required not in spec:
            raise SuiteError(f"`{key}.{required}` is missing.")
    options = {k: v for k, v in spec.items() if k not in ("name", "family")}
    options = registry.check_family_options(spec["family"], options, key, SuiteError)
    return Method(spec["name"], spec["family"], options)


def _check_population(population: Any) -> dict:
    if not isinstance(population, dict):
        raise SuiteError("`population` must be a table with a `kind`.")
    kind = population.get("kind")
    if kind not in registry.HARNESS_POPULATION:
        raise SuiteError(registry.HARNESS_POPULATION.message(kind, "population.kind"))
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


def _check_support(kind: str, methods, scales, filename: str) -> None:
    """Reject methods or an exact scale that a population kind cannot compute."""
    for i, m in enumerate(methods):
        try:
            registry.check_family_support(kind, m.family, m.options, f"methods[{i}]", SuiteError)
        except SuiteError as exc:
            raise SuiteError(f"suite {filename}: {exc}") from None
    exact_ok = registry.POPULATION_SUPPORT[kind].exact
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
