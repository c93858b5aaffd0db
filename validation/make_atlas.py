"""Write validation/ATLAS.md and its figures: the stress atlas of perfci's intervals.

Run from the repository root after the atlas suites (``validation/suites/atlas-*.toml``)
have been run into ``validation/results``::

    .venv/bin/python validation/make_atlas.py [--results DIR] [--out FILE] [--figures DIR]

Each result ``atlas-*.nc`` gets a section: what its grid varies, one table of methods per
metric (coverage at 10 or more persons and at 5-9 persons, half-width, the side of the
misses, a verdict), the design regions with the narrowest method that covers in each, the
cells where the ``recommended`` method falls short, and a coverage vs half-width figure
per metric. An acceptance summary of ``recommended`` over every atlas cell comes first;
:func:`acceptance` computes it and can be called from a test.

Coverage here is always a Monte-Carlo estimate: the thresholds below are applied to it
plainly, and each section prints the typical Monte-Carlo SE so a reader can judge how far a
cell is from a threshold in SE units.

Every name and value read from a result (suite, description, method, dim and its values,
population) goes through :func:`perfci.publishing.tables.markdown_text` before it reaches
a heading, a paragraph or a table cell, so no markup, ``|``, line break or control
character of a result changes the page; the lines of a code block are only made one line
with their control characters shown (:func:`perfci._core.text.single_line`).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd
import xarray as xr

from perfci._core.text import single_line
from perfci.harness.results import load_result
from perfci.publishing.tables import markdown_text as md

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "validation" / "results"
OUT = ROOT / "validation" / "ATLAS.md"
FIGURES = ROOT / "validation" / "figures"

#: The method the library's default chooses (family and name ``recommended``).
RECOMMENDED = "recommended"
#: Coverage every cell with >= 10 persons must reach.
FLOOR = 0.93
#: Mean coverage a method must reach over the cells with >= 10 persons.
MEAN_TARGET = 0.945
#: Coverage every cell with 5-9 persons must reach.
SMALL_FLOOR = 0.90
#: Persons from which the full floor applies.
LARGE = 10
#: Persons bands of the regions: (label, lowest, highest); the first is the small band.
BANDS = (("5-9", 5, 9), ("10-19", 10, 19), ("20+", 20, None))
#: At most this many region rows before the regions are crossed with two dims only.
MAX_REGION_ROWS = 40
#: Order of the verdicts in a method table.
VERDICTS = ("covers", "covers on average", "under-covers", "no cells with >= 10 persons")
VARIABLES = ("coverage", "mc_se", "mean_half_width", "miss_low", "miss_high", "n_valid")
NONE = "—"


# ----------------------------------------------------------------------------- loading
def load_atlas(folder: str | os.PathLike) -> dict[str, xr.Dataset]:
    """Return the atlas results ``atlas-*.nc`` of `folder`, by file name, sorted."""
    paths = sorted(Path(folder).glob("atlas-*.nc"))
    return {path.stem: load_result(path) for path in paths}


def _population(ds: xr.Dataset) -> dict:
    try:
        value = ast.literal_eval(str(ds.attrs.get("population", "{}")))
    except (ValueError, SyntaxError):
        return {}
    return value if isinstance(value, dict) else {}


def grid_dims(ds: xr.Dataset) -> list[str]:
    """Return the grid dims of a result (every dim but ``ci_method``), in order."""
    return [str(d) for d in ds["coverage"].dims if d != "ci_method"]


def varied_dims(ds: xr.Dataset) -> list[str]:
    """Return the grid dims with more than one value."""
    return [d for d in grid_dims(ds) if ds.sizes[d] > 1]


def cells(ds: xr.Dataset) -> pd.DataFrame:
    """Return one row per scored (cell, method): grid coordinates, scores and band.

    A method that does not apply to a cell (``n_valid == 0``, coverage NaN) has no row.
    ``persons`` comes from the grid dim, else from the population; without either, every
    cell counts as a cell with at least 10 persons (band ``"all"``).
    ``valid`` is the share of the replications that gave an interval.
    """
    frame = ds[list(VARIABLES)].to_dataframe().reset_index()
    frame = frame[list(grid_dims(ds)) + ["ci_method", *VARIABLES]]
    scored = np.isfinite(frame["coverage"]) & ~(frame["n_valid"] == 0)
    frame = frame[scored].copy()
    if "persons" not in frame:
        persons = _population(ds).get("persons")
        frame["persons"] = float(persons) if isinstance(persons, int | float) else np.nan
    frame["band"] = [_band(p) for p in frame["persons"]]
    frame["large"] = frame["persons"].isna() | (frame["persons"] >= LARGE)
    frame["small"] = frame["band"] == BANDS[0][0]
    scored_replications = method_replications(ds)
    frame["valid"] = frame["n_valid"] / frame["ci_method"].map(scored_replications)
    return frame.reset_index(drop=True)


def method_replications(ds: xr.Dataset) -> dict[str, float]:
    """Return the replications each method scored: the result's, or a row's own fewer.

    A suite's method with ``replications = K`` scores the first K data sets of a cell
    only; its ``valid`` share is of those K (the suite's file gives K).
    """
    replications = float(ds.attrs.get("replications", np.nan))
    own: dict[str, int] = {}
    with contextlib.suppress(KeyError, ValueError):  # no suite (file): none known
        from perfci.harness.schema import load_suite

        suite = load_suite(str(ds.attrs["suite"]))
        own = {
            m.name: m.options["replications"]
            for m in suite.methods
            if m.options.get("replications")
        }
    methods = [str(m) for m in ds["ci_method"].values]
    return {m: min(replications, own[m]) if m in own else replications for m in methods}


def _band(persons: float) -> str:
    if not np.isfinite(persons):
        return "all"
    for label, low, high in BANDS:
        if persons >= low and (high is None or persons <= high):
            return label
    return f"<{BANDS[0][1]}"


def by_metric(ds: xr.Dataset, frame: pd.DataFrame) -> list[tuple[str | None, pd.DataFrame]]:
    """Split the rows of :func:`cells` by ``metric`` (one ``None`` part without the dim)."""
    if "metric" not in ds.dims:
        return [(None, frame)]
    return [(str(m), frame[frame["metric"] == m]) for m in ds["metric"].values]


# ----------------------------------------------------------------------------- verdicts
def verdict(min_large: float, mean_large: float) -> str:
    """Return the verdict of a method from its min and mean coverage at >= 10 persons."""
    if not np.isfinite(mean_large):
        return VERDICTS[3]
    if mean_large >= MEAN_TARGET:
        return VERDICTS[0] if min_large >= FLOOR else VERDICTS[1]
    return VERDICTS[2]


def method_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Return one row per method of the rows of :func:`cells`, sorted by verdict then width.

    Columns: ``cells`` (scored cells), ``min_large``, ``mean_large`` and ``share_floor``
    (min, mean coverage and share of cells at or above the floor, over cells with >= 10
    persons), ``min_small`` (min coverage at 5-9 persons), ``half_width``, ``miss_low``,
    ``miss_high`` and ``valid`` (means over all scored cells) and ``verdict``.
    """
    rows = []
    for method, part in frame.groupby("ci_method", sort=False):
        large = part.loc[part["large"], "coverage"]
        small = part.loc[part["small"], "coverage"]
        row = {
            "ci_method": method,
            "cells": len(part),
            "min_large": large.min() if len(large) else np.nan,
            "mean_large": large.mean() if len(large) else np.nan,
            "share_floor": (large >= FLOOR).mean() if len(large) else np.nan,
            "min_small": small.min() if len(small) else np.nan,
            "half_width": part["mean_half_width"].mean(),
            "miss_low": part["miss_low"].mean(),
            "miss_high": part["miss_high"].mean(),
            "valid": part["valid"].mean(),
        }
        row["verdict"] = verdict(row["min_large"], row["mean_large"])
        rows.append(row)
    columns = [
        "ci_method",
        "cells",
        "min_large",
        "mean_large",
        "share_floor",
        "min_small",
        "half_width",
        "miss_low",
        "miss_high",
        "valid",
        "verdict",
    ]
    table = pd.DataFrame(rows, columns=columns)
    table["rank"] = [VERDICTS.index(v) for v in table["verdict"]]
    table = table.sort_values(["rank", "half_width", "ci_method"], na_position="last")
    return table.drop(columns="rank").reset_index(drop=True)


def region_dims(ds: xr.Dataset) -> tuple[list[str], bool]:
    """Return the dims the regions cross with the persons band, and whether some were left.

    Every varied dim but ``persons``; if that gives more than :data:`MAX_REGION_ROWS`
    regions, only the first two (the others are pooled).
    """
    others = [d for d in varied_dims(ds) if d != "persons"]
    bands = {_band(float(p)) for p in ds["persons"].values} if "persons" in ds.dims else {"all"}
    rows = len(bands) * int(np.prod([ds.sizes[d] for d in others]))
    if rows > MAX_REGION_ROWS and len(others) > 2:
        return others[:2], True
    return others, False


def _band_order(label: str) -> int:
    labels = [b[0] for b in BANDS]
    return labels.index(label) if label in labels else -1


def regions(ds: xr.Dataset, frame: pd.DataFrame) -> pd.DataFrame:
    """Return one row per design region: persons band crossed with :func:`region_dims`.

    A method covers a region when it is scored in every cell of the region, its min
    coverage there is at least :data:`FLOOR` (:data:`SMALL_FLOOR` below 10 persons) and its
    mean at least :data:`MEAN_TARGET`. Columns: the band and dims, ``cells``, ``narrowest``
    (the narrowest covering method other than ``recommended``; ``recommended`` if only it
    covers; None if no method does) and its
    ``narrowest_half_width``, and ``rec_min``, ``rec_mean``, ``rec_half_width``,
    ``rec_covers`` for ``recommended``.
    """
    dims, _ = region_dims(ds)
    cell_dims = grid_dims(ds)
    keys = ["band", *dims]
    rows = []
    for key, part in frame.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        n_cells = len(part.drop_duplicates(cell_dims))
        floor = FLOOR if part["large"].all() else SMALL_FLOOR
        summary = part.groupby("ci_method", sort=False).agg(
            n=("coverage", "size"),
            low=("coverage", "min"),
            mean=("coverage", "mean"),
            half_width=("mean_half_width", "mean"),
        )
        summary["covers"] = (
            (summary["n"] == n_cells) & (summary["low"] >= floor) & (summary["mean"] >= MEAN_TARGET)
        )
        candidates = summary[summary["covers"] & (summary.index != RECOMMENDED)]
        if candidates.empty:  # then say whether recommended covers on its own
            candidates = summary[summary["covers"]]
        candidates = candidates.sort_values("half_width")
        row = dict(zip(keys, key, strict=True))
        row["cells"] = n_cells
        row["narrowest"] = candidates.index[0] if len(candidates) else None
        row["narrowest_half_width"] = (
            candidates["half_width"].iloc[0] if len(candidates) else np.nan
        )
        if RECOMMENDED in summary.index:
            rec = summary.loc[RECOMMENDED]
            row |= {
                "rec_min": rec["low"],
                "rec_mean": rec["mean"],
                "rec_half_width": rec["half_width"],
                "rec_covers": bool(rec["covers"]),
            }
        else:
            row |= {
                "rec_min": np.nan,
                "rec_mean": np.nan,
                "rec_half_width": np.nan,
                "rec_covers": None,
            }
        rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    order = [table["band"].map(_band_order).rename("order")] + [table[d] for d in dims]
    index = pd.concat(order, axis=1).sort_values(["order", *dims]).index
    return table.loc[index].reset_index(drop=True)


def failures(frame: pd.DataFrame) -> pd.DataFrame:
    """Return the cells where ``recommended`` covers below the floor of its persons band.

    Below :data:`FLOOR` at 10 or more persons, below :data:`SMALL_FLOOR` at 5-9 persons.
    """
    rec = frame[frame["ci_method"] == RECOMMENDED]
    low = (rec["large"] & (rec["coverage"] < FLOOR)) | (
        rec["small"] & (rec["coverage"] < SMALL_FLOOR)
    )
    return rec[low].sort_values("coverage").reset_index(drop=True)


def _check(values: pd.Series, target: float, kind: str) -> dict:
    if values.empty:
        return {"value": np.nan, "target": target, "passed": None, "cells": 0}
    value = float(values.min() if kind == "min" else values.mean())
    return {"value": value, "target": target, "passed": bool(value >= target), "cells": len(values)}


def acceptance(results: Mapping[str, xr.Dataset] | str | os.PathLike) -> dict[str, Any]:
    """Score ``recommended`` over every cell of the atlas against the acceptance targets.

    Parameters
    ----------
    results : mapping of str to xarray.Dataset, or path
        The atlas results (as :func:`load_atlas` returns them), or their folder.

    Returns
    -------
    dict
        ``min_large`` (min coverage over cells with >= 10 persons; target :data:`FLOOR`),
        ``mean_large`` (their mean; target :data:`MEAN_TARGET`) and ``min_small`` (min over
        cells with 5-9 persons; target :data:`SMALL_FLOOR`), each a dict with ``value``,
        ``target``, ``passed`` (None without cells) and ``cells``; ``small_below_floor``
        (cells with 5-9 persons below :data:`FLOOR`); ``worst_large`` and ``worst_small``
        (where the minimum is, as ``"suite: dim=value, ..."``); and ``passed`` (every check
        with cells passed, and at least one had cells).
    """
    if not isinstance(results, Mapping):
        results = load_atlas(results)
    parts = []
    for name, ds in results.items():
        frame = cells(ds)
        frame = frame[frame["ci_method"] == RECOMMENDED].copy()
        frame["where"] = [f"{name}: {cell_label(ds, row)}" for _, row in frame.iterrows()]
        parts.append(frame[["coverage", "large", "small", "where"]])
    rec = (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame({"coverage": [], "large": [], "small": [], "where": []})
    )
    large = rec[rec["large"].astype(bool)]
    small = rec[rec["small"].astype(bool)]
    out: dict[str, Any] = {
        "min_large": _check(large["coverage"], FLOOR, "min"),
        "mean_large": _check(large["coverage"], MEAN_TARGET, "mean"),
        "min_small": _check(small["coverage"], SMALL_FLOOR, "min"),
        "small_below_floor": int((small["coverage"] < FLOOR).sum()),
        "worst_large": large.loc[large["coverage"].idxmin(), "where"] if len(large) else None,
        "worst_small": small.loc[small["coverage"].idxmin(), "where"] if len(small) else None,
    }
    checks = [out[k]["passed"] for k in ("min_large", "mean_large", "min_small")]
    out["passed"] = all(c is not False for c in checks) and any(c is not None for c in checks)
    return out


# ----------------------------------------------------------------------------- text
def _f(value: float, digits: int = 3) -> str:
    return NONE if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def _thr(value: float) -> str:
    """Return a threshold with two decimals, or three where it needs them (0.945)."""
    return f"{value:.2f}" if round(value, 2) == value else f"{value:.3f}"


def _value(value) -> str:
    if isinstance(value, float | np.floating):
        return f"{value:g}"
    return str(value)


def cell_label(ds: xr.Dataset, row: pd.Series) -> str:
    """Return ``dim=value, ...`` of a cell over the dims its suite varies."""
    dims = varied_dims(ds) or grid_dims(ds)
    return ", ".join(f"{d}={_value(row[d])}" for d in dims)


def _code(name: Any) -> str:
    """Return a name from a result as inline code, or escaped text if code could not hold it.

    A name of letters, digits and ``_ . -`` is shown as code (as the dims always were);
    any other name goes through :func:`perfci.publishing.tables.markdown_text`, since a
    code span shows its backslash escapes and a backtick or ``|`` would end it.
    """
    text = str(name)
    return f"`{text}`" if re.fullmatch(r"[A-Za-z0-9_.\-]+", text) else md(text)


def _link(path: Path, start: Path) -> str:
    """Return the relative address of a figure for a Markdown link, percent-encoded."""
    return quote(_rel(path, start), safe="/")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Return a Markdown table; its cells are escaped already (names from a result by md)."""
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def _method_lines(table: pd.DataFrame) -> list[str]:
    header = [
        "method",
        "cells",
        "min cov. (≥ 10 persons)",
        "mean cov. (≥ 10)",
        f"share ≥ {_thr(FLOOR)} (≥ 10)",
        "min cov. (5-9)",
        "mean half-width",
        "misses below",
        "misses above",
        "valid",
        "verdict",
    ]
    rows = []
    for _, r in table.iterrows():
        method = md(str(r["ci_method"]))
        name = f"**{method}**" if r["ci_method"] == RECOMMENDED else method
        rows.append(
            [
                name,
                str(r["cells"]),
                _f(r["min_large"]),
                _f(r["mean_large"]),
                NONE if not np.isfinite(r["share_floor"]) else f"{r['share_floor']:.0%}",
                _f(r["min_small"]),
                _f(r["half_width"], 4),
                _f(r["miss_low"]),
                _f(r["miss_high"]),
                NONE if not np.isfinite(r["valid"]) else f"{r['valid']:.0%}",
                r["verdict"],
            ]
        )
    return _table(header, rows)


def _region_lines(ds: xr.Dataset, table: pd.DataFrame) -> list[str]:
    dims, pooled = region_dims(ds)
    lines = []
    if pooled:
        rest = [d for d in varied_dims(ds) if d not in dims and d != "persons"]
        lines += [
            f"Crossing the persons band with every dim would give more than "
            f"{MAX_REGION_ROWS} regions: the regions cross it with "
            f"{', '.join(map(md, dims))} only, and pool the cells over {', '.join(map(md, rest))}.",
            "",
        ]
    header = [
        "persons",
        *map(md, dims),
        "cells",
        "narrowest covering method",
        "its half-width",
        "recommended min cov.",
        "mean cov.",
        "half-width",
        "covers",
    ]
    rows = []
    for _, r in table.iterrows():
        covers = NONE if pd.isna(r["rec_covers"]) else "yes" if r["rec_covers"] else "**no**"
        rows.append(
            [
                md(r["band"]),
                *(md(_value(r[d])) for d in dims),
                str(r["cells"]),
                "**no method covers**"
                if pd.isna(r["narrowest"])
                else f"only {RECOMMENDED}"
                if r["narrowest"] == RECOMMENDED
                else md(str(r["narrowest"])),
                _f(r["narrowest_half_width"], 4),
                _f(r["rec_min"]),
                _f(r["rec_mean"]),
                _f(r["rec_half_width"], 4),
                covers,
            ]
        )
    return lines + _table(header, rows)


def _failure_lines(ds: xr.Dataset, table: pd.DataFrame) -> list[str]:
    if table.empty:
        return [
            f"None: `recommended` covers at least {_thr(FLOOR)} in every cell with 10 or more "
            f"persons and at least {_thr(SMALL_FLOOR)} in every cell with 5-9 persons.",
        ]
    header = ["cell", "coverage", "MC SE", "misses below", "misses above", "valid", "floor"]
    rows = [
        [
            md(cell_label(ds, r)),
            _f(r["coverage"]),
            _f(r["mc_se"], 4),
            _f(r["miss_low"]),
            _f(r["miss_high"]),
            NONE if not np.isfinite(r["valid"]) else f"{r['valid']:.0%}",
            _thr(FLOOR if r["large"] else SMALL_FLOOR),
        ]
        for _, r in table.iterrows()
    ]
    return _table(header, rows)


def _grid_lines(ds: xr.Dataset) -> list[str]:
    varied = varied_dims(ds)
    fixed = [d for d in grid_dims(ds) if d not in varied]
    lines = [
        "Varies: "
        + "; ".join(
            f"{_code(d)} = {', '.join(md(_value(v)) for v in ds[d].values)}" for d in varied
        )
        + "."
        if varied
        else "Varies: nothing (a single cell)."
    ]
    if fixed:
        lines.append(
            "Fixed: "
            + "; ".join(f"{_code(d)} = {md(_value(ds[d].values[0]))}" for d in fixed)
            + "."
        )
    if population := _population(ds):
        lines.append(
            "Population: "
            + ", ".join(f"{md(str(k))} = {md(_value(v))}" for k, v in population.items())
            + "."
        )
    return lines


def _mc_se_line(ds: xr.Dataset, frame: pd.DataFrame) -> str:
    se = frame["mc_se"].to_numpy()
    se = se[np.isfinite(se)]
    reps = ds.attrs.get("replications", "?")
    if not se.size:
        return "Monte-Carlo SE: not available."
    return (
        f"Monte-Carlo SE of a cell's coverage: typically {np.median(se):.4f} "
        f"(median over scored cells; range {se.min():.4f}-{se.max():.4f}), from {md(str(reps))} "
        f"replications of {md(str(ds.attrs.get('resamples', '?')))} resamples, scale "
        f"{md(str(ds.attrs.get('scale', '?')))}."
    )


def _rel(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def figure_name(suite: str, metric: str | None) -> str:
    """Return the file name of a suite's (and metric's) trade-off figure."""
    return f"{suite}{'-' + metric if metric else ''}-tradeoff.png"


def section(name: str, ds: xr.Dataset, figures: Path | None, out: Path) -> list[str]:
    """Return the lines of one suite's section (and write its figures into `figures`)."""
    suite = str(ds.attrs.get("suite", name))
    frame = cells(ds)
    lines = [f"## {md(suite)}", ""]
    if description := str(ds.attrs.get("description", "")).strip():
        lines += [md(description), ""]
    lines += [*_grid_lines(ds), "", _mc_se_line(ds, frame), ""]
    level = float(ds.attrs.get("confidence_level", 0.95))
    if abs(level - 0.95) > 1e-9:
        lines += [f"Note: intervals at {level:g}, while the thresholds are for 0.95.", ""]
    if frame["persons"].isna().all():
        lines += ["No persons in the grid or population: every cell counts as >= 10 persons.", ""]
    for metric, part in by_metric(ds, frame):
        heading = "### Methods" + (f": {md(metric)}" if metric else "")
        table = method_table(part)
        lines += [heading, ""]
        lines += _method_lines(table) if not table.empty else ["No method is scored here."]
        missing = sorted(set(map(str, ds["ci_method"].values)) - set(table["ci_method"]))
        if missing:
            shown = ", ".join(map(md, missing))
            lines += ["", f"Not applicable here (no valid interval): {shown}."]
        lines.append("")
        if figures is not None:
            path = figures / figure_name(suite, metric)
            title = suite + (f", {metric}" if metric else "")
            if tradeoff_figure(part, path, title, level):
                lines += [f"![{md(title)}: coverage vs half-width]({_link(path, out.parent)})", ""]
            else:
                lines += ["(No figure: no cell with 10 or more persons.)", ""]
    lines += side_by_side_lines(name, ds, figures, out)
    lines += ["### Regions", ""]
    region_table = regions(ds, frame)
    lines += _region_lines(ds, region_table) if not region_table.empty else ["No cells."]
    lines += ["", "### Where `recommended` falls short", ""]
    lines += _failure_lines(ds, failures(frame))
    return [*lines, ""]


# ------------------------------------------------------------- Bayesian beside frequentist


def bayes_methods(ds: xr.Dataset) -> tuple[list[str], list[str]]:
    """Return the Bayesian methods (families ``bayes*``) of a result and the frequentist ones."""
    names = [str(m) for m in ds["ci_method"].values]
    if "family" not in ds.coords:
        return [], names
    family = {str(m): str(f) for m, f in zip(names, ds["family"].values, strict=True)}
    bayes = [m for m in names if family[m].startswith("bayes")]
    return bayes, [m for m in names if m not in bayes]


def side_by_side(ds: xr.Dataset, methods: Sequence[str]) -> pd.DataFrame:
    """One row per cell and method: coverage, its MC SE, one-sided misses, half-width."""
    keep = ["coverage", "mc_se", "miss_low", "miss_high", "mean_half_width", "n_valid"]
    frame = ds[keep].sel(ci_method=list(methods)).to_dataframe().reset_index()
    frame = frame[frame["n_valid"] > 0]
    return frame[[*grid_dims(ds), "ci_method", *keep]]


def side_by_side_lines(
    name: str, ds: xr.Dataset, figures: Path | None, out: Path, *, heading: str = "###"
) -> list[str]:
    """Lines of the per-design table (and figure) of Bayesian beside frequentist intervals.

    Every method of a cell is scored on the same simulated data sets, so the columns of a
    row compare the intervals on identical data. Empty without Bayesian methods.
    """
    bayes, frequentist = bayes_methods(ds)
    if not bayes:
        return []
    suite = str(ds.attrs.get("suite", name))
    shown = bayes + frequentist
    frame = side_by_side(ds, shown)
    dims = [d for d in grid_dims(ds) if ds.sizes.get(d, 0) > 1]
    lines = [
        f"{heading} Bayesian beside frequentist, on the same data sets",
        "",
        "Each cell's methods saw the same simulated data sets. Per design: coverage "
        "(misses below / above the truth) and mean half-width.",
        "",
    ]
    header = [*(_code(d) for d in dims), *(md(m) for m in shown)]
    rows = []
    for key, part in frame.groupby(dims, sort=True) if dims else [((), frame)]:
        key = key if isinstance(key, tuple) else (key,)
        by = part.set_index("ci_method")
        cells_ = [md(_value(k)) for k in key]
        for m in shown:
            if m not in by.index:
                cells_.append("—")
                continue
            r = by.loc[m]
            cells_.append(
                f"{_f(r['coverage'])} ({_f(r['miss_low'])}/{_f(r['miss_high'])}), "
                f"hw {_f(r['mean_half_width'], 4)}"
            )
        rows.append(cells_)
    lines += _table(header, rows)
    lines.append("")
    if figures is not None:
        path = figures / f"{suite}-bayes-vs-frequentist.png"
        if side_by_side_figure(frame, dims, shown, bayes, path, suite):
            lines += [
                f"![{md(suite)}: coverage per design, Bayesian and frequentist]"
                f"({_link(path, out.parent)})",
                "",
            ]
    return lines


def side_by_side_figure(
    frame: pd.DataFrame,
    dims: Sequence[str],
    shown: Sequence[str],
    bayes: Sequence[str],
    path: Path,
    suite: str,
    level: float = 0.95,
) -> bool:
    """Coverage of each method per design, with 2 MC SE bars; written atomically (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from perfci.plotting import style

    if frame.empty:
        return False
    designs = (
        frame[list(dims)].drop_duplicates().sort_values(list(dims)).reset_index(drop=True)
        if dims
        else pd.DataFrame(index=[0])
    )
    with style():
        fig, (ax, hw) = plt.subplots(
            2,
            1,
            figsize=(min(12.0, 2.5 + 0.3 * len(designs)), 5.6),
            sharex=True,
            gridspec_kw={"height_ratios": [2, 1]},
        )
        ax.axhline(level, color="k", lw=0.8)
        ax.axhline(FLOOR, color="0.4", lw=0.8, ls="--")
        width = 0.8 / len(shown)
        for j, m in enumerate(shown):
            part = frame[frame["ci_method"] == m]
            merged = designs.merge(part, on=list(dims), how="left") if dims else part
            x = np.arange(len(designs)) - 0.4 + width * (j + 0.5)
            color, face = f"C{j % 8}", "white" if m in bayes else f"C{j % 8}"
            marker = "o" if m in bayes else "s"
            ax.errorbar(
                x,
                merged["coverage"],
                yerr=2 * merged["mc_se"],
                fmt=marker,
                ms=3.5,
                lw=0.8,
                color=color,
                mfc=face,
                label=m + (" (Bayesian)" if m in bayes else ""),
            )
            hw.plot(x, merged["mean_half_width"], marker, ms=3.5, color=color, mfc=face)
        # a design's label: its values in the order of the dims named on the axis
        labels = (
            [
                "/".join(_value(v) for v in row)
                for row in designs[list(dims)].itertuples(index=False)
            ]
            if dims
            else [""]
        )
        hw.set_xticks(np.arange(len(designs)), labels, rotation=90, fontsize=7)
        hw.set_xlabel("design: " + " / ".join(dims))
        hw.set_ylabel("mean half-width")
        ax.set_ylabel("coverage (bars: 2 MC SE)")
        low = min(float(np.nanmin(frame["coverage"])), FLOOR) - 0.02
        ax.set_ylim(max(0.0, low), 1.0)
        ax.set_title(f"{suite}: Bayesian beside frequentist, same data sets", fontsize=9)
        ax.legend(fontsize=6, ncol=3, loc="lower left")
        fig.tight_layout()
        _write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=150, format="png"))
        plt.close(fig)
    return True


def _acceptance_lines(result: dict) -> list[str]:
    mark = {True: "PASS", False: "**FAIL**", None: "n/a (no cells)"}
    rows = []
    for key, text, where in [
        ("min_large", "min coverage, cells with ≥ 10 persons", "worst_large"),
        ("mean_large", "mean coverage, cells with ≥ 10 persons", None),
        ("min_small", "min coverage, cells with 5-9 persons", "worst_small"),
    ]:
        check = result[key]
        at = f" (at {md(result[where])})" if where and result[where] else ""
        rows.append(
            [
                text,
                str(check["cells"]),
                _f(check["value"]) + at,
                f"≥ {_thr(check['target'])}",
                mark[check["passed"]],
            ]
        )
    rows.append(
        [
            f"cells with 5-9 persons below {_thr(FLOOR)}",
            str(result["min_small"]["cells"]),
            str(result["small_below_floor"]),
            "(reported)",
            "",
        ]
    )
    overall = "PASS" if result["passed"] else "**FAIL**"
    return [
        f"## Acceptance of `recommended`: {overall}",
        "",
        *_table(["check", "cells", "value", "target", "result"], rows),
        "",
    ]


def _rules() -> list[str]:
    floor, mean, small = _thr(FLOOR), _thr(MEAN_TARGET), _thr(SMALL_FLOOR)
    return [
        "## How to read it",
        "",
        "- A cell is one point of a suite's grid. A method that gives no interval in a cell "
        "(for example an analytic interval for F1: `n_valid == 0`) is left out there.",
        f"- A method **covers** when, over the cells with at least {LARGE} persons, its "
        f"minimum coverage is at least {floor} and its mean coverage at least {mean}; it "
        f"**covers on average** when the mean reaches {mean} but some cells are below "
        f"{floor}; otherwise it **under-covers**. Methods are listed by verdict, then by "
        "mean half-width (the narrowest covering method first). Suites with a `metric` dim "
        "have one table per metric.",
        f"- Cells with 5-9 persons are held to a lower floor, {small}, and shown apart: they "
        "do not enter the verdict.",
        "- Coverage is a Monte-Carlo estimate. The thresholds are applied to it plainly (a "
        f"cell at 0.925 is below {floor} even if its Monte-Carlo SE is 0.01); each section "
        "gives the typical Monte-Carlo SE so that a reader can judge how many SEs a cell is "
        "from a threshold.",
        "- *Misses below*: share of intervals lying wholly below the truth; *misses above*: "
        "wholly above it. *Valid*: share of the replications that gave an interval (coverage "
        "is over those). Coverage, misses and half-width are means over the method's scored "
        "cells.",
        "- **Regions** group the cells by persons band (5-9, 10-19, 20+) crossed with every "
        f"other varied dim (with only the first two if that gives more than {MAX_REGION_ROWS} "
        "regions; the section says so). A method covers a region when it is scored in all "
        f"the region's cells, with min coverage ≥ {floor} ({small} at 5-9 persons) and mean "
        f"≥ {mean}. The narrowest covering method is the narrowest such method other than "
        '`recommended` ("only recommended" when no other covers), which has its own '
        "columns and is held to the same rule.",
        f"- **Acceptance**: over every atlas cell with at least {LARGE} persons, "
        f"`recommended` must have min coverage ≥ {floor} and mean ≥ {mean}; over the cells "
        f"with 5-9 persons, min coverage ≥ {small} (the number of those cells below {floor} "
        "is reported).",
        "- The figures plot, per method, the mean coverage against the mean half-width over "
        f"the cells with at least {LARGE} persons; the vertical bar spans the min to max "
        "coverage over those cells.",
        "",
    ]


def render(
    results: Mapping[str, xr.Dataset],
    *,
    out: Path,
    figures: Path | None,
    results_dir: Path,
    command: str,
    accepted: dict | None = None,
) -> str:
    """Return the text of ATLAS.md (and write the figures into `figures`, if given).

    `accepted` is :func:`acceptance` of `results`, computed here if not given.
    """
    # lines of a code block: shown as they are, but each on one line, no control character
    runs = [
        single_line(
            f"perfci validate run {ds.attrs.get('suite', name)} --scale "
            f"{ds.attrs.get('scale', 'full')} --workers 2 --out {_shown(results_dir)}"
        )
        for name, ds in results.items()
    ]
    head = [
        "# Stress atlas: coverage of perfci's intervals",
        "",
        "<!-- Generated file: do not edit by hand; regenerate it with the command below. -->",
        "",
        "*Generated file.* Regenerate it, from the repository root, with",
        "",
        "```",
        single_line(command),
        "```",
        "",
    ]
    made = [
        "## How the results were made",
        "",
        "The atlas suites are `validation/suites/atlas-*.toml`; their results were made with",
        "",
        "```",
        *runs,
        "```",
        "",
    ]
    result = acceptance(results) if accepted is None else accepted
    body = [line for name, ds in results.items() for line in section(name, ds, figures, out)]
    lines = [*head, *_acceptance_lines(result), *made, *_rules(), *body]
    return "\n".join(lines).rstrip("\n") + "\n"


# ----------------------------------------------------------------------------- figures
def _write_atomic(path: Path, write: Callable[[str], object]) -> None:
    """Write `path` through ``write(temporary name)`` in its folder, then rename it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _label_offsets(ax, points: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Place each method's label next to its point, nudged off the labels placed before."""
    scale = 72 / ax.figure.dpi  # display pixels to points
    ax.autoscale_view()
    placed: list[tuple[float, float, float, float]] = []
    offsets: dict[str, tuple[float, float]] = {}
    order = points.sort_values("cov", ascending=False).index
    for method in order:
        x, y = ax.transData.transform(tuple(points.loc[method, ["width", "cov"]])) * scale
        width, height = 4.0 * len(str(method)), 8.0
        for dx, dy in [(5, 3), (5, -10), (5, 12), (5, -19), (5, 21), (5, -28)]:
            box = (x + dx, y + dy, x + dx + width, y + dy + height)
            if not any(
                box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed
            ):
                break
        placed.append(box)
        offsets[str(method)] = (dx, dy)
    return offsets


def tradeoff_figure(frame: pd.DataFrame, path: Path, title: str, level: float = 0.95) -> bool:
    """Draw coverage against mean half-width, one point per method, cells with >= 10 persons.

    The point is the mean over those cells, the vertical bar the min to max coverage;
    lines mark the nominal level and the floor :data:`FLOOR`; ``recommended`` is drawn in
    vermillion. Written to `path` (PNG, 150 dpi) atomically. Returns False (and writes
    nothing) without cells with >= 10 persons.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    large = frame[frame["large"]]
    if large.empty:
        return False
    points = large.groupby("ci_method", sort=False).agg(
        cov=("coverage", "mean"),
        low=("coverage", "min"),
        high=("coverage", "max"),
        width=("mean_half_width", "mean"),
    )
    from perfci.plotting import style

    with style():  # the style of every perfci figure
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        ax.axhline(level, color="k", lw=0.8, label=f"nominal {level:g}")
        ax.axhline(FLOOR, color="0.4", lw=0.8, ls="--", label=f"floor {FLOOR:g}")
        for method, p in points.iterrows():
            rec = method == RECOMMENDED
            color = "C1" if rec else "C0"
            ax.vlines(p["width"], p["low"], p["high"], color=color, lw=1.6 if rec else 0.9)
            ax.plot(
                p["width"],
                p["cov"],
                "D" if rec else "o",
                color=color,
                ms=7 if rec else 4.5,
                zorder=3,
                label="recommended" if rec else None,
            )
        low, high = ax.get_ylim()
        ax.set_ylim(min(low, FLOOR - 0.01), max(high, level + 0.01))
        for method, offset in _label_offsets(ax, points).items():
            rec = method == RECOMMENDED
            ax.annotate(
                str(method),
                tuple(points.loc[method, ["width", "cov"]]),
                xytext=offset,
                textcoords="offset points",
                fontsize=7,
                color="C1" if rec else "C0",
                fontweight="bold" if rec else "normal",
                bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7},
                zorder=4,
            )
        ax.set_xlabel("mean half-width (cells with ≥ 10 persons)")
        ax.set_ylabel("coverage: mean, bar min to max")
        ax.set_title(f"{title}: coverage vs half-width", fontsize=9)
        ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        _write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=150, format="png"))
        plt.close(fig)
    return True


# ----------------------------------------------------------------------------- main
def write_atlas(
    results_dir: str | os.PathLike = RESULTS,
    out: str | os.PathLike = OUT,
    figures: str | os.PathLike | None = FIGURES,
) -> dict:
    """Write ATLAS.md and the figures from the atlas results of `results_dir`.

    Returns the :func:`acceptance` dict. Raises FileNotFoundError without atlas results.
    """
    results_dir, out = Path(results_dir), Path(out)
    figures_dir = None if figures is None else Path(figures)
    results = load_atlas(results_dir)
    if not results:
        raise FileNotFoundError(f"no atlas results (atlas-*.nc) in {results_dir}")
    command = (
        f".venv/bin/python validation/make_atlas.py --results {_shown(results_dir)} "
        f"--out {_shown(out)}" + (f" --figures {_shown(figures_dir)}" if figures_dir else "")
    )
    accepted = acceptance(results)
    text = render(
        results,
        out=out,
        figures=figures_dir,
        results_dir=results_dir,
        command=command,
        accepted=accepted,
    )
    _write_atomic(out, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    return accepted


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder of atlas-*.nc")
    parser.add_argument("--out", type=Path, default=OUT, help="the markdown file to write")
    parser.add_argument("--figures", type=Path, default=FIGURES, help="folder of the figures")
    args = parser.parse_args(argv)
    try:
        result = write_atlas(args.results, args.out, args.figures)
    except FileNotFoundError as exc:
        parser.error(str(exc))
    n = len(list(Path(args.results).glob("atlas-*.nc")))
    verdict_text = "PASS" if result["passed"] else "FAIL"
    print(f"wrote {args.out} ({n} atlas results; acceptance {verdict_text})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
