"""Result datasets: per-cell scores to an :class:`xarray.Dataset` with ``ci_method``."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import numpy as np
import xarray as xr

from .._core.files import check_target, file_kind
from ..exact import operating_characteristics
from ..metrics import difference_bound
from .families import HARNESS_FAMILIES, can_flag
from .kinds import POPULATION_SCHEMA
from .schema import Suite
from .storage import cell_path

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


def planning_dataset(suite: Suite, scale: str) -> xr.Dataset:
    """Half-widths of design-adjusted intervals at the planned value (no coverage)."""
    from ..planning import half_width_curves

    dims = suite.dims(scale)
    shape = [len(dims[d]) for d in ("n", "icc", "texts_per_person")]
    scores = np.full((*shape, len(suite.methods), 6), np.nan)
    for i, m in enumerate(suite.methods):
        df = None if m.options["df_adjust"] == "none" else m.options["df_adjust"]
        curves = half_width_curves(
            dims["n"],
            [suite.population["metric_value"]],
            confidence_level=suite.confidence_level,
            method=m.options["method"],
            icc=dims["icc"],
            texts_per_person=dims["texts_per_person"],
            df_adjust=df,
        )
        scores[..., i, 3] = curves.isel(metric_value=0).values
        scores[..., i, 4] = 1.0
        scores[..., i, 5] = 0.0
    return _dataset(suite, scale, scores)


def exact_dataset(suite: Suite, scale: str) -> xr.Dataset:
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
        oc = operating_characteristics(name, n, p, confidence_level=suite.confidence_level)
        ones = np.ones(oc.coverage.shape)
        scores[..., i, :] = np.stack(
            [oc.coverage, oc.miss_low, oc.miss_high, oc.expected_half_width, ones, 0 * ones],
            -1,
        )
    return _dataset(suite, scale, scores)


def assemble(suite: Suite, scale: str, cells: list[dict], folder: Path) -> xr.Dataset:
    """Build the result dataset of a scale from the cell files in `folder`."""
    dims = suite.dims(scale)
    names = list(dims)
    shape = [len(dims[d]) for d in names]
    scores = np.empty((*shape, len(suite.methods), 6))
    index = {d: {v: i for i, v in enumerate(dims[d])} for d in names}
    for cell in cells:
        position = tuple(index[d][cell[d]] for d in names)
        scores[position] = np.load(cell_path(folder, cell))
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


#: Population kinds whose intervals have no bound: a coefficient on the logit scale
#: (``covariates_nested``) and rank sets (``many_nested``).
UNBOUNDED_HALF_WIDTH_KINDS = frozenset({"covariates_nested", "many_nested"})

#: Population kinds whose target is a difference of one metric (between classifiers, or
#: between subgroups): its intervals lie in [-1, 1], or [-2, 2] for kappa and MCC.
DIFFERENCE_KINDS = frozenset({"paired_nested", "subgroups_nested"})

#: Population kinds whose interval of kappa or MCC is not clipped to [-1, 1] (the t
#: interval of repeated runs or of several annotators): no bound for those metrics.
_UNCLIPPED_SIGNED_KINDS = frozenset({"runs_nested", "annotators_nested"})


def widest_half_width(suite: Suite, cell: dict) -> float | None:
    """Return the widest half-width one interval of a cell can have (None: no bound).

    An interval of a rate in [0, 1] (a proportion, recall, F1, ROC AUC, ...) lies inside
    [0, 1], so its half-width is at most 0.5; one of kappa or MCC, inside [-1, 1], at most
    1; one of a difference of two rates at most 1, and of two kappas or MCCs at most 2
    (:func:`perfci.metrics.difference_bound`). The kinds of
    :data:`UNBOUNDED_HALF_WIDTH_KINDS` have no bound, nor have kappa and MCC of
    ``runs_nested`` and ``annotators_nested``, whose t interval is not clipped.

    Examples
    --------
    >>> from perfci import harness
    >>> from perfci.harness.execution import widest_half_width
    >>> suite = harness.load_suite("paper-independent")
    >>> widest_half_width(suite, suite.cells("smoke")[0])  # a proportion
    0.5
    """
    kind = suite.population["kind"]
    if kind in UNBOUNDED_HALF_WIDTH_KINDS:
        return None
    schema = POPULATION_SCHEMA[kind]
    declared = schema.dims.get("metric") or schema.keys.get("metric")
    metric = cell.get("metric", suite.population.get("metric", getattr(declared, "default", None)))
    averaged = str(metric).startswith(("macro_", "micro_", "multiclass_"))
    base = str(metric).split("_", 1)[1] if averaged else metric
    signed = base in ("kappa", "mcc")
    if kind in DIFFERENCE_KINDS:
        return difference_bound(str(base))
    if signed:
        return None if kind in _UNCLIPPED_SIGNED_KINDS else 1.0
    return 0.5


def load_result(path: str | os.PathLike) -> xr.Dataset:
    """Read a result file the harness wrote, refusing any other netCDF file by name.

    Only a regular file is opened (a FIFO, a socket, a device or a folder named
    ``*.nc`` is refused as what it is, and a FIFO is never waited on). Its values,
    attributes and coordinates are checked (:func:`check_result_values`), and no other
    result in its folder may be of the same suite (their figures would share files). The
    file ``perfci validate report`` writes beside the results, ``SUMMARY.md``, must be
    one it may write: a folder or a read-only file there is refused here, before the
    report writes any figure.

    Raises
    ------
    ValueError
        If `path` is not a regular file or not a netCDF file, lacks what a result has
        (the ``suite`` and ``scale`` attributes, the ``ci_method`` dim and the variables
        of :data:`RESULT_VARIABLES`), holds a value, an attribute or a coordinate no run
        could have written, or shares its suite with another ``*.nc`` result in its
        folder, or if ``SUMMARY.md`` beside it is a folder or a read-only file; one line
        naming the file(s) and the variable.
    """
    kind = file_kind(path)  # a FIFO is not opened: reading one would wait for a writer
    if kind is not None:
        raise ValueError(
            f"{str(path)!r} is {kind}, not a result file; remove it or move it out of the "
            "folder of results."
        )
    try:
        with xr.open_dataset(path, engine="h5netcdf") as dataset:
            dataset = dataset.load()
    except (OSError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(
            f"{str(path)!r} is not a netCDF file perfci can read ({reason})."
        ) from None
    missing = [a for a in ("suite", "scale") if a not in dataset.attrs]
    missing += [] if "ci_method" in dataset.dims else ["the `ci_method` dim"]
    missing += [v for v in RESULT_VARIABLES if v not in dataset.data_vars]
    if missing:
        raise ValueError(
            f"{str(path)!r} is not a result of `perfci validate run`: it lacks "
            f"{', '.join(map(str, missing))}."
        )
    problem = check_result_values(dataset)
    if problem:
        raise ValueError(f"{str(path)!r} is not a result perfci could have written: {problem}.")
    _check_same_suite(Path(path), str(dataset.attrs["suite"]))
    check_target(Path(path).parent / "SUMMARY.md", "the summary of `validate report`")
    return dataset


def check_result_values(dataset: xr.Dataset) -> str | None:
    """Return what is impossible in a result's values, or None if nothing is.

    ``coverage``, ``miss_low`` and ``miss_high`` lie in [0, 1] or are NaN, and
    ``miss_low + miss_high <= 1 - coverage`` (within 1e-9) where all three are defined (of
    simultaneous sets, a ``many_nested`` population: each of them is);
    ``n_valid`` and ``n_flagged`` are non-negative integers (``n_valid`` is NaN in an
    exact result), at most the attribute ``replications`` where it is a positive integer
    (each replication is one interval, flagged or not); ``mc_se >= 0`` and
    ``mean_half_width >= 0`` or NaN. Before them, the attributes: ``confidence_level`` a
    number in (0, 1), ``exact`` 0 or 1, ``seed`` and ``resamples`` non-negative integers;
    and the coordinates: no dim repeats a value (a method, or a grid value), and where
    the attribute ``population`` names a known kind, each grid value is one its suites
    may give (a share in (0, 1), a positive count, ...). After them, what each method
    scored: ``n_flagged`` is 0 for a method that never flags
    (:func:`~perfci.harness.families.can_flag`), and ``coverage``, ``miss_low`` and
    ``miss_high`` are not NaN in every cell where the method scored intervals
    (``n_valid > 0``).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from perfci.harness.results import check_result_values
    >>> ds = xr.Dataset({"coverage": ("ci_method", [2.0])}, attrs={"confidence_level": 0.95})
    >>> check_result_values(ds)
    '`coverage` holds 2.0, outside [0, 1]'
    """
    return (
        _attribute_problem(dataset)
        or _coordinate_problem(dataset)
        or _value_problem(dataset)
        or _scored_problem(dataset)
    )


def _plain(value: object) -> object:
    """Return a numpy scalar as the Python value it holds (``-1``, not ``np.int64(-1)``)."""
    return value.item() if isinstance(value, np.generic) else value


def _is_real(value: object) -> bool:
    """Return whether `value` is a finite real number (not a bool, not a string)."""
    real = int | float | np.integer | np.floating
    if isinstance(value, bool | np.bool_) or not isinstance(value, real):
        return False
    return bool(np.isfinite(float(value)))


def _attribute_problem(dataset: xr.Dataset) -> str | None:
    """Return what is impossible in a result's attributes, or None.

    Each of these, where present, is what a run writes: ``confidence_level`` a number in
    (0, 1); ``exact`` 0 or 1 (a simulated or an exact scale); ``seed`` and ``resamples``
    non-negative integers.
    """
    attrs = dataset.attrs
    level = attrs.get("confidence_level")
    if level is not None and not (_is_real(level) and 0 < float(level) < 1):
        return f"attribute `confidence_level` is {_plain(level)!r}, not a number in (0, 1)"

    def integer(value: object) -> bool:
        return _is_real(value) and float(value) == round(float(value))  # type: ignore[arg-type]

    exact = attrs.get("exact")
    if exact is not None and not (integer(exact) and float(exact) in (0.0, 1.0)):
        shown = _plain(exact)
        return f"attribute `exact` is {shown!r}, not 0 or 1 (a simulated or an exact scale)"
    for name in ("seed", "resamples"):
        value = attrs.get(name)
        if value is not None and not (integer(value) and float(value) >= 0):
            return f"attribute `{name}` is {_plain(value)!r}, not a non-negative integer"
    return None


def _population_kind(dataset: xr.Dataset) -> str | None:
    """Return the population kind the attribute ``population`` names, or None."""
    try:
        population = ast.literal_eval(str(dataset.attrs.get("population", "")))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    kind = population.get("kind") if isinstance(population, dict) else None
    return kind if isinstance(kind, str) and kind in POPULATION_SCHEMA else None


def _coordinate_problem(dataset: xr.Dataset) -> str | None:
    """Return a repeated coordinate value, or a grid value no suite of its kind has.

    Each value of a dim's coordinate is one method (``ci_method``) or one value of the
    grid, given once. Where the attribute ``population`` names a known kind, each value
    of one of the kind's grid dims is one its suite may give (the dim's
    :class:`~perfci.harness.fields.Field`: a share lies in (0, 1), a count is a positive
    integer, ...).
    """
    for dim in dataset.dims:
        if dim not in dataset.coords:
            continue
        seen: set = set()
        for value in dataset[dim].values.tolist():
            if value in seen:
                what = "method" if dim == "ci_method" else "value"
                return f"coordinate `{dim}` repeats the {what} {value!r}: each is given once"
            seen.add(value)
    kind = _population_kind(dataset)
    fields = POPULATION_SCHEMA[kind].dims if kind is not None else {}
    for dim, field_ in fields.items():
        if dim not in dataset.dims or dim not in dataset.coords:
            continue
        for value in dataset[dim].values.tolist():
            if not field_.accepts(value):
                return (
                    f"coordinate `{dim}` holds {value!r}, which no suite of population kind "
                    f"{kind!r} has: each value of `grid.{dim}` is {field_.describe()}"
                )
    return None


def _scored_problem(dataset: xr.Dataset) -> str | None:
    """Return what no method could have scored, or None.

    A method whose fits are never flagged
    (:func:`~perfci.harness.families.can_flag`, read from the coordinates ``family``,
    ``sampler`` and ``base_method``) has ``n_flagged`` 0; and where a method scored an
    interval (``n_valid > 0``) in some cells, ``coverage``, ``miss_low`` and
    ``miss_high`` are not NaN in all of them.
    """
    if "ci_method" not in dataset.dims:
        return None
    count = dataset.sizes["ci_method"]
    coords = dataset.coords
    names = coords["ci_method"].values.tolist() if "ci_method" in coords else list(range(count))
    shares = ("coverage", "miss_low", "miss_high")
    for i, name in enumerate(names):
        one = dataset.isel(ci_method=i)
        family = str(coords["family"].values[i]) if "family" in coords else None
        options = {
            key: str(coords[coord].values[i])
            for key, coord in (("sampler", "sampler"), ("method", "base_method"))
            if coord in coords
        }
        known = family in HARNESS_FAMILIES and not (
            (family == "bayes" and "sampler" not in options)
            or (family == "performance" and "method" not in options)
        )
        if known and "n_flagged" in one.data_vars and not can_flag(str(family), options):
            flags = np.asarray(one["n_flagged"].values, dtype=float)
            with np.errstate(invalid="ignore"):
                wrong = flags > 0  # False where NaN
            if wrong.any():
                return (
                    f"`n_flagged` holds {float(flags[wrong].flat[0]):.0f} for method {name!r} "
                    f"(family {family!r}), whose fits are never flagged (only Bayesian fits "
                    "that fail their diagnostics or fall back are)"
                )
        if not {*shares, "n_valid"} <= set(one.data_vars):
            continue
        valid = np.asarray(one["n_valid"].values, dtype=float)
        with np.errstate(invalid="ignore"):
            scored = valid > 0  # False where NaN (an exact result)
        blank = all(np.isnan(np.asarray(one[v].values, dtype=float))[scored].all() for v in shares)
        if scored.any() and blank:
            return (
                f"`coverage`, `miss_low` and `miss_high` are NaN for method {name!r} wherever "
                f"its `n_valid` is above 0 ({float(valid[scored].flat[0]):.0f} in one cell): "
                "each scored interval covers or misses"
            )
    return None


def _value_problem(dataset: xr.Dataset) -> str | None:
    """Return what is impossible in a result's values (:func:`check_result_values`)."""

    def first(values: np.ndarray, wrong: np.ndarray) -> float:
        return float(values[wrong].flat[0])

    arrays = {
        v: np.asarray(dataset[v].values, dtype=float)
        for v in RESULT_VARIABLES
        if v in dataset.data_vars
    }
    for name in ("coverage", "miss_low", "miss_high"):
        if name in arrays:
            values = arrays[name]
            wrong = ~np.isnan(values) & ~((values >= 0) & (values <= 1))
            if wrong.any():
                return f"`{name}` holds {first(values, wrong)!r}, outside [0, 1]"
    if {"coverage", "miss_low", "miss_high"} <= set(arrays):
        # a simultaneous set (many_nested) may miss below on one interval and above on
        # another: then each share, not their sum, is at most 1 - coverage
        sets = "'kind': 'many_nested'" in str(dataset.attrs.get("population", ""))
        low, high = arrays["miss_low"], arrays["miss_high"]
        total = np.maximum(low, high) if sets else low + high
        room = 1 - arrays["coverage"]
        with np.errstate(invalid="ignore"):
            wrong = total > room + 1e-9  # False wherever one of them is NaN
        if wrong.any():
            what = (
                "the larger of `miss_low` and `miss_high`" if sets else "`miss_low` + `miss_high`"
            )
            return (
                f"{what} is {first(total, wrong)!r}, more than 1 - `coverage` "
                f"({first(room, wrong)!r})"
            )
    exact = bool(dataset.attrs.get("exact", 0))
    for name in ("n_valid", "n_flagged"):
        if name in arrays:
            values = arrays[name]
            allowed = np.isnan(values) if (exact and name == "n_valid") else False
            with np.errstate(invalid="ignore"):
                good = np.isfinite(values) & (values >= 0) & (values == np.round(values))
            wrong = ~(good | allowed)
            if wrong.any():
                return f"`{name}` holds {first(values, wrong)!r}, not a non-negative integer"
            replications = _replications(dataset)
            if replications is None:
                continue
            with np.errstate(invalid="ignore"):
                wrong = values > replications  # False where NaN
            if wrong.any():
                return (
                    f"`{name}` holds {first(values, wrong):.0f}, more than the attribute "
                    f"`replications` ({replications}): one interval per replication"
                )
    for name in ("mc_se", "mean_half_width"):
        if name in arrays:
            values = arrays[name]
            wrong = ~np.isnan(values) & ~(values >= 0)
            if wrong.any():
                return f"`{name}` holds {first(values, wrong)!r}, not a number >= 0"
    return _bounds_problem(dataset, arrays)


def _bounds_problem(dataset: xr.Dataset, arrays: dict[str, np.ndarray]) -> str | None:
    """Return what breaks the bounds between a result's values, or None.

    The attribute ``replications``, if there, is a positive integer; ``coverage +
    miss_low + miss_high == 1`` (within 1e-6) where all three are defined, but for
    simultaneous sets (``many_nested``); of a Monte-Carlo result, ``mc_se`` (the
    standard error of a proportion) is at most ``0.5 / sqrt(n_valid)`` and
    ``mean_half_width`` at most the widest half-width of its target
    (:func:`widest_half_width`).
    """
    if "replications" in dataset.attrs and _replications(dataset) is None:
        value = dataset.attrs["replications"]
        value = value.item() if isinstance(value, np.generic) else value  # 0, not np.int64(0)
        return f"attribute `replications` is {value!r}, not a positive integer"
    population_text = str(dataset.attrs.get("population", ""))
    if {"coverage", "miss_low", "miss_high"} <= set(
        arrays
    ) and "many_nested" not in population_text:
        total = arrays["coverage"] + arrays["miss_low"] + arrays["miss_high"]
        with np.errstate(invalid="ignore"):
            wrong = np.abs(total - 1) > 1e-6  # False wherever one of them is NaN
        if wrong.any():
            return (
                f"`coverage` + `miss_low` + `miss_high` is {float(total[wrong].flat[0])!r}, "
                "not 1: each valid interval covers or misses on one side"
            )
    if bool(dataset.attrs.get("exact", 0)):
        return None
    if {"mc_se", "n_valid"} <= set(arrays):
        with np.errstate(invalid="ignore", divide="ignore"):
            most = 0.5 / np.sqrt(arrays["n_valid"])
            wrong = arrays["mc_se"] > most * (1 + 1e-9)  # False where NaN
        if wrong.any():
            return (
                f"`mc_se` holds {float(arrays['mc_se'][wrong].flat[0])!r}, more than "
                f"0.5 / sqrt(`n_valid`) ({float(most[wrong].flat[0]):.4g}), the largest "
                "standard error of a proportion"
            )
    try:
        population = ast.literal_eval(population_text)
        suite = Suite("", "", 0, 0.95, population, {}, (), {})
        metrics = dataset["metric"].values.tolist() if "metric" in dataset.dims else [None]
        widest = [widest_half_width(suite, {} if m is None else {"metric": m}) for m in metrics]
    except (ValueError, SyntaxError, TypeError, KeyError, AttributeError):
        return None  # a population this version cannot read: no bound
    if "mean_half_width" in arrays:
        half = dataset["mean_half_width"]
        for metric, bound in zip(metrics, widest, strict=True):
            if bound is None:
                continue
            values = np.asarray((half if metric is None else half.sel(metric=metric)).values)
            with np.errstate(invalid="ignore"):
                wrong = values > bound * (1 + 1e-9)  # False where NaN
            if wrong.any():
                where = "" if metric is None else f" for metric {metric!r}"
                return (
                    f"`mean_half_width` holds {float(values[wrong].flat[0])!r}{where}, more "
                    f"than {bound:g}, the widest half-width of one interval of its target"
                )
    return None


def _replications(dataset: xr.Dataset) -> int | None:
    """Return the attribute ``replications`` if it is a positive integer, else None."""
    value = dataset.attrs.get("replications")
    try:
        count = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return count if count >= 1 and count == value else None


def _check_same_suite(path: Path, suite: str) -> None:
    """Refuse a result when another ``*.nc`` result in its folder is of the same suite.

    Files that cannot be read, are not regular files or are not results are skipped here
    (each is refused when it is loaded itself).
    """
    for other in sorted(path.parent.glob("*.nc")):
        if other.resolve() == path.resolve() or file_kind(other) is not None:
            continue  # a FIFO is never opened (it would block)
        try:
            with xr.open_dataset(other, engine="h5netcdf") as dataset:
                name = dataset.attrs.get("suite")
        except (OSError, ValueError):
            continue
        if name is not None and str(name) == suite:
            first, second = sorted([str(path), str(other)])
            raise ValueError(
                f"{first!r} and {second!r} are both results of suite {suite!r}: their "
                "figures would overwrite each other; keep one in the folder."
            )
