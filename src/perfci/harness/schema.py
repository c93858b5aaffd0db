"""Suite files: their keys, loading and validation, and the fingerprint that guards resuming.

A suite file's own keys are declared here (:data:`SUITE_KEYS`, :data:`SCALE_KEYS`,
:data:`METHOD_KEYS`, the tables :data:`SUITE_TABLES`); the options of its methods are
their family's (:mod:`perfci.harness.families`), and its population's keys and grid dims
are its kind's (:mod:`perfci.harness.kinds`). :func:`load_suite` checks a file against
all of them before any work starts.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import re
import tomllib
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._core.files import file_kind
from .._core.registry import MAX_RESAMPLES
from .._core.replicates import check_pseudo_count
from .._core.resampling import min_resamples
from .._core.validation import MAX_COUNT
from .families import HARNESS_FAMILY, check_family_options
from .fields import Field, field_map
from .kinds import (
    HARNESS_POPULATION,
    PERSON_REQUIRED,
    POPULATION_SCHEMA,
    POPULATION_SUPPORT,
    check_family_support,
)
from .populations import confusion_probabilities

#: The most values one grid dim of a suite takes (a ``{start, stop, step}`` table counted
#: before it is expanded).
MAX_GRID_VALUES = 100_000

#: The most cells one scale of a suite has (the product of its grid dims' numbers of
#: values, a scale's grid overrides applied), checked before any cell is listed.
MAX_CELLS = 100_000

#: The most data sets one scale simulates: its cells times its replications (an exact
#: scale counts one per cell).
MAX_DATA_SETS = 1_000_000_000

#: A suite's name (it names the result file ``OUT/NAME.nc``): a letter or digit, then
#: letters, digits, ``-`` and ``_``; never a path.
SUITE_NAME_REGEX = r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}"

#: The largest suite seed: a seed is an integer from 0 to 2**63 - 1, so it fits the
#: result file's 64-bit integer attribute (a larger one would fail only when written).
MAX_SEED = 2**63 - 1

#: The fewest replications of a simulated (not exact) scale: one replication gives a
#: coverage of 0 or 1 with a Monte Carlo standard error of 0.
MIN_REPLICATIONS = 2


#: The scalar keys of a suite file's top level; besides them it has the tables
#: :data:`SUITE_TABLES`.
SUITE_KEYS: Mapping[str, Field] = field_map(
    Field(
        "name",
        "the suite's name; the result is written to OUT/NAME.nc",
        str,
        pattern=SUITE_NAME_REGEX,
        expected="a name of letters, digits, '-' and '_' that starts with a letter or digit "
        "(at most 100 characters, no path: it names the result file)",
    ),
    Field("description", "one line saying what the suite measures", str, False, "", empty=True),
    Field("seed", "the suite seed; every cell's seed derives from it", int, minimum=0),
    Field(
        "confidence_level",
        "the nominal level of every interval",
        float,
        False,
        0.95,
        minimum=0,
        maximum=1,
        open_minimum=True,
        open_maximum=True,
    ),
)

#: The tables of a suite file's top level, each required.
SUITE_TABLES: Mapping[str, str] = {
    "population": "the population simulated from (its `kind` and parameters)",
    "grid": "the dims of the grid of cells and their values",
    "scales": "the scales (smoke, full, ...): replications, resamples, grid overrides",
    "methods": "the methods scored, an array of tables with `name` and `family`",
}

#: The keys of one scale (``[scales.NAME]``); besides them it may have a ``grid`` table.
SCALE_KEYS: Mapping[str, Field] = field_map(
    Field("replications", "simulated data sets per cell (1 in an exact scale)", int, minimum=1),
    Field(
        "resamples",
        "resamples B of each bootstrap interval (at least 1 where the scale simulates one)",
        int,
        minimum=0,
        maximum=MAX_RESAMPLES,
    ),
    Field("exact", "compute by enumeration instead of simulating", bool, False, False),
)

#: The keys of one method (``[[methods]]``) besides its family's options.
METHOD_KEYS: Mapping[str, Field] = field_map(
    Field("name", "the method's label in the result (unique in the suite)", str),
    Field("family", "how the method is computed", str, choices=HARNESS_FAMILY),
)


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


def suite_dirs() -> list[Path]:
    """Return the folders searched for suite files, in order.

    ``validation/suites`` of the working directory (a checkout of the repository, or a
    project's own suites), then the suites shipped with perfci (the package
    ``perfci.suites``).

    Examples
    --------
    >>> from perfci import harness
    >>> [p.name for p in harness.suite_dirs()][-1]
    'suites'
    """
    from importlib import resources

    shipped = Path(str(resources.files("perfci.suites")))
    local = Path.cwd() / "validation" / "suites"
    return [local, shipped] if local.resolve() != shipped.resolve() else [shipped]


def suite_dir() -> Path:
    """Return the folder of suite files: the first of :func:`suite_dirs` that holds any.

    Examples
    --------
    >>> from perfci import harness
    >>> harness.suite_dir().name
    'suites'
    """
    folders = suite_dirs()
    for folder in folders:
        if folder.is_dir() and any(folder.glob("*.toml")):
            return folder
    return folders[-1]


def list_suites(directory: Path | None = None) -> list[str]:
    """Return the names of the suites in `directory` (default :func:`suite_dir`).

    Examples
    --------
    >>> from perfci import harness
    >>> "paper-independent" in harness.list_suites()
    True
    """
    folder = suite_dir() if directory is None else Path(directory)
    return sorted(p.stem for p in folder.glob("*.toml"))


def _expand(values: Any, key: str, dim: Field) -> list:
    """Return a grid dim's values: a list, or a ``{start, stop, step}`` table expanded."""
    if isinstance(values, dict):
        if set(values) != {"start", "stop", "step"}:
            raise SuiteError(f"`{key}` must be a list or a table with start, stop and step.")
        bound = Field(dim.name, "", dim.type)  # its type, any value
        for part in ("start", "stop", "step"):
            bound.check(values[part], f"{key}.{part}", SuiteError)
        start, stop, step = values["start"], values["stop"], values["step"]
        if step <= 0 or stop < start:
            raise SuiteError(
                f"`{key}` must have step > 0 and stop >= start; got {start}, {stop}, {step}."
            )
        if (stop - start) / step + 1 > MAX_GRID_VALUES:
            raise SuiteError(
                f"`{key}` would take {int((stop - start) / step) + 1} values, more than "
                f"{MAX_GRID_VALUES}; use a larger step."
            )
        grid = np.arange(start, stop + step / 2, step)
        grid = grid.round(10)
        values = [int(v) for v in grid] if np.all(grid == np.round(grid)) else grid.tolist()
    elif not isinstance(values, list) or not values:
        raise SuiteError(f"`{key}` must be a non-empty list of values.")
    if len(values) > MAX_GRID_VALUES:
        raise SuiteError(f"`{key}` has more than {MAX_GRID_VALUES} values.")
    for value in values:
        if not dim.accepts(value):
            raise SuiteError(f"`{key}` values must each be {dim.describe()}; got {value!r}.")
    seen: set = set()
    for value in values:
        if value in seen:
            raise SuiteError(
                f"`{key}` must not repeat a value (each is one cell); {value!r} is repeated."
            )
        seen.add(value)
    return values


def _check_grid(table: Any, key: str, dims: Mapping[str, Field]) -> dict[str, list]:
    if not isinstance(table, dict) or not table:
        raise SuiteError(f"`{key}` must be a table of dims, each a list of values.")
    unknown = set(table) - set(dims)
    if unknown:
        raise SuiteError(
            f"`{key}` has unknown dims {sorted(unknown)}; this population's dims are {list(dims)}."
        )
    return {d: _expand(v, f"{key}.{d}", dims[d]) for d, v in table.items()}


def _check_fields(
    table: dict, fields: Mapping[str, Field], prefix: str, known: Iterable[str] = ()
) -> None:
    """Check a table's scalar keys: unknown ones, missing required ones, each value."""
    unknown = set(table) - set(fields) - set(known)
    if unknown:
        where = f"`{prefix.rstrip('.')}`" if prefix else "the top level"
        raise SuiteError(
            f"{where} has unknown keys {sorted(unknown)}; known: {sorted({*fields, *known})}."
        )
    for name, spec in fields.items():
        if name in table:
            spec.check(table[name], prefix + name, SuiteError)
        elif spec.required:
            raise SuiteError(f"`{prefix}{name}` is missing: {spec.help}.")


def _check_method(i: int, spec: Any) -> Method:
    """Validate one method of a suite against its family's options."""
    key = f"methods[{i}]"
    if not isinstance(spec, dict):
        raise SuiteError(f"`{key}` must be a table (a [[methods]] entry).")
    for name, field_ in METHOD_KEYS.items():
        if name not in spec:
            raise SuiteError(f"`{key}.{name}` is missing.")
        if name != "family":  # an unknown family is reported with the families
            field_.check(spec[name], f"{key}.{name}", SuiteError)
    options = {k: v for k, v in spec.items() if k not in METHOD_KEYS}
    options = check_family_options(spec["family"], options, key, SuiteError)
    if "pseudo_count" in options:  # the bootstrap's own limit, checked before any work
        try:
            check_pseudo_count(options["pseudo_count"])
        except ValueError as exc:
            raise SuiteError(
                str(exc).replace("`pseudo_count`", f"`{key}.pseudo_count`", 1)
            ) from None
    return Method(spec["name"], spec["family"], options)


def _check_population(population: Any) -> dict:
    if not isinstance(population, dict):
        raise SuiteError("`population` must be a table with a `kind`.")
    kind = population.get("kind")
    if kind not in HARNESS_POPULATION:
        raise SuiteError(HARNESS_POPULATION.message(kind, "population.kind"))
    schema = POPULATION_SCHEMA[str(kind)]
    _check_fields(population, schema.keys, "population.", known=("kind",))
    if kind == "nested_finite":
        mean, sd = population["mean"], population.get("sd")
        if sd is not None and not sd**2 < mean * (1 - mean):
            raise SuiteError(
                "`population.sd` must be positive and below "
                "sqrt(mean (1 - mean)) (a Beta distribution)."
            )
        texts = population["persons"] * population["texts_per_person"]
        if population.get("srs_texts", 0) > texts:
            raise SuiteError(
                f"`population.srs_texts` must not exceed the population's {texts} texts; "
                f"got {population['srs_texts']}."
            )
    return population


def _check_scale(name: str, spec: Any, dims: Mapping[str, Field], grid: dict) -> Scale:
    key = f"scales.{name}"
    if not isinstance(spec, dict):
        raise SuiteError(f"`{key}` must be a table with replications and resamples.")
    _check_fields(spec, SCALE_KEYS, f"{key}.", known=("grid",))
    if not spec.get("exact", False) and spec["replications"] < MIN_REPLICATIONS:
        raise SuiteError(
            f"`{key}.replications` must be an integer at least {MIN_REPLICATIONS} in a "
            "simulated scale (one replication has no Monte Carlo error); got "
            f"{spec['replications']}."
        )
    scale_grid = _check_grid(spec["grid"], f"{key}.grid", dims) if "grid" in spec else {}
    if set(scale_grid) - set(grid):
        raise SuiteError(
            f"`{key}.grid` has dims {sorted(set(scale_grid) - set(grid))} not in `grid`."
        )
    return Scale(spec["replications"], spec["resamples"], spec.get("exact", False), scale_grid)


def _check_cells(kind: str, population: dict, grids: list[dict]) -> None:
    """Rules that tie grid values to the population: each scale's grid, overrides applied."""
    for grid in grids:
        if kind == "nested_finite" and "persons" in grid:
            largest = max(grid["persons"])
            if largest > population["persons"]:
                raise SuiteError(
                    f"`grid.persons` must not exceed `population.persons` "
                    f"({population['persons']}); got {largest}."
                )
        if kind == "confusion":
            for precision, recall in itertools.product(grid["precision"], grid["recall"]):
                try:
                    confusion_probabilities(population["prevalence"], precision, recall)
                except ValueError as exc:
                    raise SuiteError(f"`grid`: {exc}") from None


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
        If the file is missing or invalid, before any work starts. The message names the
        file and the key: an unknown key anywhere, a value of the wrong type or out of
        range (the rules are those of :data:`SUITE_KEYS`, :data:`SCALE_KEYS` and
        :data:`perfci.harness.kinds.POPULATION_SCHEMA`), a repeated grid value, an
        unknown method or an impossible population, a scale of more than
        :data:`MAX_CELLS` cells or :data:`MAX_DATA_SETS` data sets (cells times
        replications), or method names that are alike (:func:`method_name_key`) or
        begin or end with whitespace.

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
    kind = file_kind(path)  # a FIFO is never opened: reading one would wait for a writer
    if kind is not None:
        raise SuiteError(
            f"suite {str(name_or_path)!r} is {kind}, not a regular file; give the path of a "
            "suite file (.toml) or a suite's name."
        )
    if not path.is_file():
        known = list_suites(path.parent) if path.parent.is_dir() else []
        raise SuiteError(f"suite {str(name_or_path)!r} not found (known suites: {known}).")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"suite {path.name} is not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"suite {path.name} could not be read: {exc}") from None
    try:
        suite = _check_suite(raw)
    except SuiteError as exc:
        raise SuiteError(f"suite {path.name}: {exc}") from None
    return suite


def _missing_table(raw: dict, table: str) -> str:
    """Say that a top-level table is missing, or where TOML put a key of its name.

    ``grid = [1, 2]`` written below ``[population]`` is the key ``population.grid`` to
    TOML, not the top-level table ``grid``: the message says what ``grid`` must be and
    where the value went.
    """
    stray = [
        f"{name}.{table}"
        for name, value in raw.items()
        if isinstance(value, dict) and table in value and name in SUITE_TABLES
    ]
    if not stray:
        return f"`{table}` is missing: {SUITE_TABLES[table]}."
    return (
        f"`{table}` must be a table at the top level ([{table}]): {SUITE_TABLES[table]}; "
        f"the file gives `{stray[0]}` instead (a key written below a table's header belongs "
        "to that table)."
    )


def _check_suite(raw: dict) -> Suite:
    _check_fields(raw, SUITE_KEYS, "", known=SUITE_TABLES)
    if raw["seed"] > MAX_SEED:
        raise SuiteError(
            f"`seed` must be an integer from 0 to 2**63 - 1 ({MAX_SEED}); got {raw['seed']}."
        )
    for table in SUITE_TABLES:
        if table not in raw:
            raise SuiteError(_missing_table(raw, table))
    population = _check_population(raw["population"])
    kind = population["kind"]
    dims = POPULATION_SCHEMA[kind].dims
    grid = _check_grid(raw["grid"], "grid", dims)
    if not isinstance(raw["methods"], list) or not raw["methods"]:
        raise SuiteError("`methods` must be a non-empty array of tables ([[methods]]).")
    methods = tuple(_check_method(i, m) for i, m in enumerate(raw["methods"]))
    _check_method_names([m.name for m in methods])
    if not isinstance(raw["scales"], dict) or not raw["scales"]:
        raise SuiteError("`scales` must be a table of scales, e.g. [scales.smoke].")
    _check_names(list(raw["scales"]), lambda i: "`scales` names", "scales")
    scales = {name: _check_scale(name, spec, dims, grid) for name, spec in raw["scales"].items()}
    _check_sizes(grid, scales)
    _check_batches(kind, grid, methods, scales)
    bootstraps = [m.name for m in methods if m.family == "bootstrap"]
    fewest = min_resamples(float(raw.get("confidence_level", 0.95)))
    for name, scale in scales.items():
        # the public functions refuse fewer resamples than each tail needs: refuse the
        # suite before any work rather than the run part-way
        if bootstraps and not scale.exact and scale.resamples < fewest:
            raise SuiteError(
                f"`scales.{name}.resamples` must be an integer at least {fewest}: the scale "
                f"simulates bootstrap intervals ({bootstraps[0]}), each of whose tails needs "
                f"a resample; got {scale.resamples}."
            )
    _check_kind(kind, population, grid, methods, scales)
    _check_cells(kind, population, [{**grid, **s.grid} for s in scales.values()])
    _check_support(kind, methods, scales)
    return Suite(
        raw["name"],
        raw.get("description", ""),
        int(raw["seed"]),
        float(raw.get("confidence_level", 0.95)),
        population,
        grid,
        methods,
        scales,
    )


def method_name_key(name: str) -> str:
    """Return the key two method names of a suite must not share.

    It is the name in Unicode NFKC form, case-folded, without combining marks (category
    ``Mn`` of its NFKD form, such as an accent or the dot of ``"İ"``) and format
    characters (category ``Cf``, such as a zero-width space), with ``-``, ``_`` and
    whitespace alike (a run of them counts as one): ``"Wilson"`` and ``"wilson"``,
    ``"WİLSON"`` and ``"wilson"``, ``"agresti-coull"`` and ``"agresti_coull"``,
    full-width ``"ｗａｌｄ"`` and ``"wald"``, or a composed and a decomposed ``"café"``
    (and ``"cafe"``), are one name to a reader of the result.

    Examples
    --------
    >>> from perfci.harness.schema import method_name_key
    >>> method_name_key("Agresti-Coull") == method_name_key("agresti_coull")
    True
    >>> method_name_key("\uff37ald") == method_name_key("wald")
    True
    >>> method_name_key("W\u0130LSON") == method_name_key("wilson")
    True
    """
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cf", "Mn"))
    return re.sub(r"[-_\s]+", "_", unicodedata.normalize("NFKC", text))


#: Scripts counted as one when a method name's letters are checked for mixed scripts
#: (Japanese writes kanji with kana).
_SCRIPT_ALIASES = {"HIRAGANA": "CJK", "KATAKANA": "CJK"}


def method_name_scripts(name: str) -> list[str]:
    """Return the scripts of a name's letters, in order of first use.

    A letter's script is the first word of its Unicode name (``LATIN``, ``CYRILLIC``,
    ``GREEK``, ...), read in NFKC form so that a full-width Latin letter is Latin.

    Examples
    --------
    >>> from perfci.harness.schema import method_name_scripts
    >>> method_name_scripts("w\u0430ld"), method_name_scripts("wald_2")
    (['LATIN', 'CYRILLIC'], ['LATIN'])
    """
    scripts: list[str] = []
    for ch in unicodedata.normalize("NFKC", name):
        if ch.isalpha():
            script = unicodedata.name(ch, "UNKNOWN").split(" ")[0]
            script = _SCRIPT_ALIASES.get(script, script)
            if script not in scripts:
                scripts.append(script)
    return scripts


def _check_method_names(names: list[str]) -> None:
    """Refuse method names that are repeated, alike, hidden or of mixed scripts.

    Each names a ``ci_method`` of the result; the rules are :func:`_check_names`'.
    """
    _check_names(names, lambda i: f"`methods[{i}].name`", "methods")
    if len(set(names)) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        raise SuiteError(f"`methods` names must be unique; repeated: {repeated}.")
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        first = seen.setdefault(method_name_key(name), i)
        if first != i:
            raise SuiteError(
                f"`methods` names must differ in more than case, '-', '_', spaces and "
                f"Unicode form (NFKC); {names[first]!r} (methods[{first}]) and {name!r} "
                f"(methods[{i}]) do not."
            )


def _check_names(names: list[str], key: Callable[[int], str], table: str) -> None:
    """Refuse names that are empty, hidden, of mixed scripts or alike (methods, scales).

    A name must not be empty, begin or end with whitespace, hold a format or control
    character (Unicode category ``Cf`` or ``Cc``) or mix the letters of several scripts
    (:func:`method_name_scripts`, such as a Cyrillic ``а`` in a Latin ``wald``); `key`
    names the `i`-th name's key in messages. Names of the table `table` other than
    method names (whose messages say which entries) must also differ in their
    :func:`method_name_key`.
    """
    for i, name in enumerate(names):
        if not name:
            raise SuiteError(f"{key(i)} must not be empty.")
        if name != name.strip():
            raise SuiteError(f"{key(i)} must not begin or end with whitespace; got {name!r}.")
        hidden = [ch for ch in name if unicodedata.category(ch) in ("Cf", "Cc")]
        if hidden:
            raise SuiteError(
                f"{key(i)} must not hold format or control characters; got "
                f"{name!r} (U+{ord(hidden[0]):04X})."
            )
        scripts = method_name_scripts(name)
        if len(scripts) > 1:
            raise SuiteError(
                f"{key(i)} must not mix letters of several scripts; got {name!r} "
                f"({', '.join(s.title() for s in scripts)})."
            )
    if table == "methods":
        return
    seen: dict[str, str] = {}
    for name in names:
        first = seen.setdefault(method_name_key(name), name)
        if first != name:
            raise SuiteError(
                f"`{table}` names must differ in more than case, '-', '_', spaces and "
                f"Unicode form (NFKC); {first!r} and {name!r} do not."
            )


def _check_batches(kind: str, grid: dict, methods, scales: dict[str, Scale]) -> None:
    """Refuse a scale whose bootstrap would take more texts at once than it may hold.

    A cell's data sets go to :func:`perfci.bootstrap_ci` in one call, which takes at
    most :data:`~perfci._core.validation.MAX_COUNT` texts in all: the largest ``n``
    times the replications must not exceed it.
    """
    bootstraps = [m.name for m in methods if m.family == "bootstrap"]
    if not bootstraps or "n" not in POPULATION_SCHEMA[kind].dims:
        return
    for name, scale in scales.items():
        key = f"scales.{name}.grid.n" if "n" in scale.grid else "grid.n"
        largest = max({**grid, **scale.grid}.get("n", [0]))
        if not scale.exact and largest * scale.replications > MAX_COUNT:
            raise SuiteError(
                f"`{key}` value {largest} times `scales.{name}.replications` "
                f"({scale.replications}) is {largest * scale.replications} texts, more than "
                f"the {MAX_COUNT} a bootstrap ({bootstraps[0]}) takes at once for a cell's "
                "data sets; give a smaller n or fewer replications."
            )


def _check_sizes(grid: dict, scales: dict[str, Scale]) -> None:
    """Refuse a scale of more than :data:`MAX_CELLS` cells or :data:`MAX_DATA_SETS` data sets.

    Both are counted from the sizes of the grid's dims, before any cell is listed.
    """
    for name, scale in scales.items():
        dims = {**grid, **scale.grid}
        cells = math.prod(len(v) for v in dims.values())
        if cells > MAX_CELLS:
            sizes = " x ".join(f"{len(v)} {d}" for d, v in dims.items())
            raise SuiteError(
                f"`scales.{name}` has {cells} cells ({sizes}), more than {MAX_CELLS}; give "
                "its grid fewer values."
            )
        reps = 1 if scale.exact else scale.replications
        if cells * reps > MAX_DATA_SETS:
            raise SuiteError(
                f"`scales.{name}` simulates {cells * reps} data sets ({cells} cells x {reps} "
                f"replications), more than {MAX_DATA_SETS}; ask for fewer replications or "
                "cells."
            )


def _check_kind(kind: str, population: dict, grid: dict, methods, scales) -> None:
    """Rules of one population kind: its required dims and what its methods may be."""
    required = {d for d, f in POPULATION_SCHEMA[kind].dims.items() if f.required}
    if kind == "nested_finite":
        if set(grid.get("sampling", [])) - {"srs"}:
            required.add("persons")
    missing = required - set(grid)
    if missing:
        optional = set(POPULATION_SCHEMA[kind].dims) - required
        also = f" (and optionally {', '.join(sorted(optional))})" if optional else ""
        raise SuiteError(
            f"`grid` of a {kind} population must have dims {', '.join(sorted(required))}"
            f"{also}; missing {sorted(missing)}."
        )
    if kind in (
        "nested",
        "nested_confusion",
        "paired_nested",
        "subgroups_nested",
        "scored_nested",
        "runs_nested",
        "annotators_nested",
    ):
        needed = PERSON_REQUIRED + (("metric",) if kind not in ("nested", "scored_nested") else ())
        for name in needed:
            if name not in grid and name not in population:
                raise SuiteError(
                    f"`{name}` is missing: give it as `population.{name}` or as a grid dim."
                )
        both = sorted(set(grid) & set(population))
        if both:
            raise SuiteError(
                f"{both} are both population keys and grid dims; give each in one place."
            )
        if any(m.family == "bayes" and m.options["sampler"] != "grid" for m in methods):
            raise SuiteError(f"a {kind} population takes Bayesian methods with sampler 'grid'.")
    # the majority is one classifier (of runs) or one reference (of annotators): the
    # recommended interval of one is its only interval
    majority_is = {"runs": "vote is one classifier", "annotators": "code is one reference"}
    for i, m in enumerate(methods):
        if m.family in majority_is and m.options["estimand"] == "majority":
            if m.options["method"] != "recommended":
                raise SuiteError(
                    f"`methods[{i}].method` must be 'recommended' for estimand 'majority' (the "
                    f"majority {majority_is[m.family]}, with the recommended interval of "
                    f"one); got {m.options['method']!r}."
                )
    if kind == "nested_finite" and "icc" not in grid and "sd" not in population:
        raise SuiteError("`population.sd` is missing (or give an `icc` dim).")
    if kind == "confusion":
        if any(
            m.family != "bayes_confusion"
            and (m.family != "bootstrap" or m.options["scheme"] != "iid")
            for m in methods
        ):
            raise SuiteError(
                "a confusion suite takes iid `bootstrap` and `bayes_confusion` methods only."
            )
    if kind == "nested_planning":
        if any(not s.exact for s in scales.values()):
            raise SuiteError("a nested_planning suite is analytic: every scale is exact.")
        if any(m.family != "clustered" for m in methods):
            raise SuiteError("a nested_planning suite takes `clustered` methods only.")


def _check_support(kind: str, methods, scales) -> None:
    """Reject methods or an exact scale that a population kind cannot compute."""
    for i, m in enumerate(methods):
        check_family_support(kind, m.family, m.options, f"methods[{i}]", SuiteError)
    exact_ok = POPULATION_SUPPORT[kind].exact
    for name, scale in scales.items():
        if scale.exact and not exact_ok:
            raise SuiteError(f"`scales.{name}.exact`: a {kind} population has no exact mode.")
        if not scale.exact and kind == "nested_planning":
            raise SuiteError(
                f"`scales.{name}`: a nested_planning suite is analytic; set exact = true."
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
