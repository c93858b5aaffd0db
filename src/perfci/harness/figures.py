"""Figures and tables of harness results: the paper's figures, and figures of any suite.

Two kinds of figures, both in perfci's figure style (:mod:`perfci.plotting`):

- the paper's, for the suites that reproduce it (:data:`FIGURES`, the paper's figure
  number in the file name, ``<suite>-<figure>.png``): a grid of panels, one per value of
  ``panel`` (or per group of methods), x the grid dim ``x``, one line per method (or per
  value of ``line``);
- two figures of every suite, drawn from its dims alone (:func:`plot_suite`,
  ``coverage_<suite>.png`` and ``half_width_<suite>.png``): x one grid dim, one column of
  panels per method family, small multiples over the other dims (:func:`suite_layout`),
  coverage with its Monte-Carlo band and the nominal level.

:func:`coverage_frame` and :func:`coverage_table` give every cell's numbers with their
Monte-Carlo standard errors, and a summary over a dim only when asked, saying so.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from .._core.files import check_folder, check_target, file_stem
from ..plotting import figure_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure as MplFigure

__all__ = [
    "file_stem",
    "FIGURES",
    "MAX_COLUMNS",
    "MAX_PAGES",
    "MAX_PAGE_VALUES",
    "MAX_ROWS",
    "SuiteLayout",
    "coverage_frame",
    "coverage_table",
    "make_figures",
    "plot_suite",
    "suite_layout",
]


_NESTED_GROUPS: dict[str, tuple[str, ...]] = {
    "Wald": ("wald", "wald_neff", "wald_neff_df"),
    "Agresti-Coull": ("agresti_coull", "agresti_coull_neff", "agresti_coull_neff_df"),
    "Wilson": ("wilson", "wilson_neff", "wilson_neff_df"),
    "Bootstrap": ("iid_percentile", "cluster_percentile", "hierarchical_percentile"),
    "Pseudo-count bootstrap": (
        "pseudo_iid_percentile_1",
        "pseudo_cluster_percentile_1",
        "pseudo_hierarchical_percentile_1",
    ),
    "Bayesian (grid)": (
        "bayes_grid_population",
        "bayes_grid_mu",
        "bayes_grid_sampled_persons",
    ),
}


@dataclass(frozen=True)
class Figure:
    """One figure: what to plot against what, in which panels."""

    stem: str
    title: str
    variable: str = "coverage"
    x: str = "n"
    panel: str | None = "p"
    methods: tuple[str, ...] = ()
    groups: dict[str, tuple[str, ...]] | None = None
    select: tuple = ()
    line: str | None = None
    x_below: float | None = None


FIGURES: dict[str, list[Figure]] = {
    "paper-independent": [
        Figure(
            "fig1",
            "Figure 1: coverage of 95% intervals",
            methods=("wald", "agresti_coull", "percentile", "pseudo_percentile_1"),
        ),
        Figure("figA1", "Figure A1: Wald", methods=("wald",)),
        Figure("figA2", "Figure A2: Clopper-Pearson", methods=("clopper_pearson",)),
        Figure("figA3", "Figure A3: Wilson", methods=("wilson",)),
        Figure("figA4", "Figure A4: Agresti-Coull", methods=("agresti_coull",)),
        Figure(
            "figA5",
            "Figure A5: half-width by analytic method, n < 100",
            variable="mean_half_width",
            x_below=100,
            methods=("wilson", "agresti_coull", "clopper_pearson"),
        ),
        Figure("figB1", "Figure B1: percentile bootstrap", methods=("percentile",)),
        Figure("figB2", "Figure B2: BCa bootstrap", methods=("bca",)),
        Figure(
            "figB3",
            "Figure B3: pseudo-count bootstrap, lambda = 1 and 2",
            methods=("pseudo_percentile_1", "pseudo_percentile_2"),
        ),
        Figure(
            "figB4",
            "Figure B4: half-width by bootstrap method, n < 100",
            variable="mean_half_width",
            x_below=100,
            methods=("percentile", "bca", "pseudo_percentile_1"),
        ),
        Figure(
            "figB5",
            "Figure B5: direction of misses (solid: interval above p, dashed: below p)",
            variable="misses",
            methods=("percentile", "pseudo_percentile_1", "pseudo_percentile_2"),
        ),
    ],
    "paper-samplesize": [
        Figure(
            "fig3",
            "Figure 3: expected half-width of the lambda = 1 bootstrap interval",
            variable="mean_half_width",
            panel=None,
            line="p",
            methods=("pseudo_percentile_1",),
        ),
    ],
    "paper-nested": [
        Figure(
            "fig4",
            "Figure 4: small corpus (about 3 texts per person)",
            x="persons",
            panel=None,
            groups=_NESTED_GROUPS,
            select=(("sampling", "small"),),
        ),
        Figure(
            "fig5",
            "Figure 5: moderate corpus (about 30 texts per person)",
            x="persons",
            panel=None,
            groups=_NESTED_GROUPS,
            select=(("sampling", "moderate"),),
        ),
        Figure(
            "fig6",
            "Figure 6: half-width, small corpus",
            x="persons",
            panel=None,
            variable="mean_half_width",
            groups=_NESTED_GROUPS,
            select=(("sampling", "small"),),
        ),
        Figure(
            "fig6-moderate",
            "Half-width, moderate corpus",
            x="persons",
            panel=None,
            variable="mean_half_width",
            groups=_NESTED_GROUPS,
            select=(("sampling", "moderate"),),
        ),
    ],
    "paper-nested-srs": [
        Figure(
            "figC2",
            "Figure C2: coverage in simple random samples of 1,200 texts",
            x="icc",
            panel=None,
            groups=_NESTED_GROUPS,
            select=(("sampling", "srs"),),
        ),
    ],
    "icc-sweep": [
        Figure(
            "figC1",
            "Figure C1 (sweep): half-width by ICC, about 30 texts per person",
            x="icc",
            panel=None,
            variable="mean_half_width",
            groups=_NESTED_GROUPS,
            select=(("sampling", "moderate"), ("persons", 20)),
        ),
        Figure(
            "icc-coverage-small",
            "Coverage by ICC, about 3 texts per person",
            x="icc",
            panel=None,
            groups=_NESTED_GROUPS,
            select=(("sampling", "small"), ("persons", 20)),
        ),
        Figure(
            "icc-coverage-moderate",
            "Coverage by ICC, about 30 texts per person",
            x="icc",
            panel=None,
            groups=_NESTED_GROUPS,
            select=(("sampling", "moderate"), ("persons", 20)),
        ),
    ],
    "figure7": [
        Figure(
            "fig7",
            "Figure 7: half-width of the adjusted Agresti-Coull interval at 0.90",
            variable="mean_half_width",
            panel="icc",
            line="texts_per_person",
            methods=("agresti_coull_neff_df",),
        ),
    ],
}


def _mc_band(ax: Any, x: Any, coverage: Any, mc_se: Any, color: str) -> None:
    """Coverage +- 2 Monte-Carlo SE where the cells were simulated (exact ones have none)."""
    se = np.asarray(mc_se, dtype=float)
    if np.any(se > 0):
        cov = np.asarray(coverage, dtype=float)
        ax.fill_between(x, cov - 2 * se, cov + 2 * se, color=color, alpha=0.2, lw=0)


def _draw(ax, series: xr.Dataset, x: str, variable: str, label: str, level: float) -> None:
    if variable == "misses":
        line = ax.plot(series[x], series["miss_high"], lw=0.9, label=label)
        ax.plot(series[x], series["miss_low"], lw=0.9, ls="--", color=line[0].get_color())
    else:
        line = ax.plot(series[x], series[variable], lw=0.9, label=label)
    if variable == "coverage":
        _mc_band(ax, series[x], series["coverage"], series["mc_se"], line[0].get_color())
        ax.axhline(level, color="k", lw=0.6)


def _plot(dataset: xr.Dataset, fig_spec: Figure, path: Path) -> list[tuple[Path, Any]]:
    import matplotlib.pyplot as plt

    from ..plotting import style

    data = dataset
    for dim, value in fig_spec.select:
        if dim not in data.dims or value not in data[dim].values:
            return []
        data = data.sel({dim: value})
    if fig_spec.x_below is not None:
        data = data.sel({fig_spec.x: data[fig_spec.x] < fig_spec.x_below})
    variable = "miss_high" if fig_spec.variable == "misses" else fig_spec.variable
    # methods with nothing to show (BCa in an exact result) are left out
    methods = {
        m
        for m in data["ci_method"].values.tolist()
        if not np.all(np.isnan(data[variable].sel({"ci_method": m}).values))
    }
    # (title, methods) or, for a panel dim, (title, methods, value of the dim)
    panels: list[tuple[str, list[str]] | tuple[str, list[str], Any]]
    if fig_spec.groups:
        panels = [
            (name, [m for m in members if m in methods])
            for name, members in fig_spec.groups.items()
        ]
        panels = [p for p in panels if p[1]]
    elif fig_spec.panel is not None:
        panels = [
            (f"{fig_spec.panel} = {v:g}", [m for m in fig_spec.methods if m in methods], v)
            for v in data[fig_spec.panel].values
        ]
        panels = [p for p in panels if p[1]]
    else:
        panels = [("", [m for m in fig_spec.methods if m in methods])]
    if not panels or not any(p[1] for p in panels):
        return []
    cols = min(3, len(panels))
    rows = int(np.ceil(len(panels) / cols))
    level = float(dataset.attrs.get("confidence_level", 0.95))
    with style():
        fig, axes = plt.subplots(
            rows,
            cols,
            figsize=(3.0 * cols, 2.3 * rows + 0.4),
            sharex=True,
            sharey=fig_spec.variable == "coverage",
            squeeze=False,
            layout="constrained",
        )
        # one legend when every panel has the same lines
        same = all(p[1] == panels[0][1] for p in panels)
        for index, (ax, panel) in enumerate(zip(axes.ravel(), panels, strict=False)):
            name, members = panel[0], panel[1]
            cell = data.sel({fig_spec.panel: panel[2]}) if len(panel) == 3 else data
            for method in members:
                series = cell.sel({"ci_method": method})
                if fig_spec.line is not None:
                    for v in series[fig_spec.line].values:
                        _draw(
                            ax,
                            series.sel({fig_spec.line: v}),
                            fig_spec.x,
                            fig_spec.variable,
                            f"{v:g}",
                            level,
                        )
                else:
                    _draw(ax, series, fig_spec.x, fig_spec.variable, method, level)
            ax.set_title(name)
            if index + cols >= len(panels):  # the lowest panel of its column
                ax.set_xlabel(fig_spec.x)
                ax.xaxis.set_tick_params(labelbottom=True)
            if index == 0 or not same:
                ax.legend(title=fig_spec.line, ncol=2 if len(ax.get_lines()) > 9 else 1)
        for ax in axes.ravel()[len(panels) :]:
            ax.set_visible(False)
        fig.suptitle(fig_spec.title)
    return [(path, fig)]


def _population_histogram(folder: Path) -> list[tuple[Path, Any]]:
    """Figure D1: person-level rates of the paper's finite nested population."""
    import matplotlib.pyplot as plt

    from ..plotting import style
    from .populations import nested_population

    successes, truth = nested_population(2000, 60, 0.9, 0.1, 2000)
    with style():
        fig, ax = plt.subplots(figsize=(4.5, 2.8), layout="constrained")
        ax.hist(successes / 60, bins=30)
        ax.set_xlabel("person-level rate (of 60 texts)")
        ax.set_ylabel("persons")
        ax.set_title(f"Figure D1: finite population, mean 0.90, SD 0.10 (truth {truth:.4f})")
    return [(folder / "paper-nested-figD1", fig)]


def _f1_heatmaps(dataset: xr.Dataset, folder: Path) -> list[tuple[Path, Any]]:
    """Figure 2: F1 coverage by precision x recall, averaged over ranges of n."""
    import matplotlib.pyplot as plt

    from ..plotting import style

    methods = [m for m in ("percentile", "pseudo_percentile_1") if m in dataset["ci_method"].values]
    ranges = [(30, 100), (100, 300), (300, 501)]
    ranges = [r for r in ranges if np.any((dataset["n"] >= r[0]) & (dataset["n"] < r[1]))]
    if not methods or not ranges:
        return []
    with style():
        fig, axes = plt.subplots(
            len(ranges),
            len(methods),
            figsize=(3.4 * len(methods) + 0.8, 2.8 * len(ranges) + 0.4),
            squeeze=False,
            layout="constrained",
        )
        for i, (lo, hi) in enumerate(ranges):
            sub = dataset.sel(n=(dataset["n"] >= lo) & (dataset["n"] < hi)).mean("n")
            for j, method in enumerate(methods):
                ax = axes[i, j]
                ax.grid(False)
                values = sub.sel({"ci_method": method})["coverage"].transpose("precision", "recall")
                image = ax.imshow(values, vmin=0.5, vmax=1.0, cmap="viridis", origin="lower")
                ax.set_xticks(range(values.sizes["recall"]), [f"{v:g}" for v in values["recall"]])
                ax.set_yticks(
                    range(values.sizes["precision"]), [f"{v:g}" for v in values["precision"]]
                )
                for (a, b), v in np.ndenumerate(values.values):
                    ax.text(
                        b,
                        a,
                        f"{v:.2f}",
                        ha="center",
                        va="center",
                        fontsize=5.5,
                        color="w" if v < 0.8 else "k",
                    )
                ax.set_title(f"{method}, mean over n {lo}-{hi - 1}")
                ax.set_xlabel("recall")
                ax.set_ylabel("precision")
        fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.6, label="coverage")
        fig.suptitle("Figure 2: coverage of 95% bootstrap intervals for F1, prevalence 0.10")
    return [(folder / "paper-f1-fig2", fig)]


# ---------------------------------------------------------------- figures of any suite

#: Most rows of panels, columns of panels (families times a column dim) and figures of
#: :func:`plot_suite`, and most values of a dim drawn one figure per value.
MAX_ROWS = 8
MAX_COLUMNS = 6
MAX_PAGES = 16
MAX_PAGE_VALUES = 4

#: What :func:`plot_suite` draws: the variable, its file stem and its axis label.
_SUITE_VARIABLES = {
    "coverage": ("coverage", "coverage"),
    "mean_half_width": ("half_width", "mean half-width"),
}


@dataclass(frozen=True)
class SuiteLayout:
    """Where each grid dim of a result goes in the figures of :func:`plot_suite`.

    Attributes
    ----------
    x : str
        The dim on the x axis.
    rows : tuple of str
        Dims whose combinations are the rows of panels (in the suite's order).
    column : str or None
        A dim whose values split each family's column of panels.
    pages : tuple of str
        Dims drawn one figure (file) per combination of their values.
    fixed : dict
        Dims with a single value, stated in every title.
    families : tuple of str
        The method families, one column of panels each (``""``: a result without a
        ``family`` coordinate, one column of every method).
    """

    x: str
    rows: tuple[str, ...]
    column: str | None
    pages: tuple[str, ...]
    fixed: dict[str, Any]
    families: tuple[str, ...]


def _grid_dims(dataset: xr.Dataset) -> list[str]:
    return [str(d) for d in dataset["coverage"].dims if d != "ci_method"]


def _family_of(dataset: xr.Dataset) -> np.ndarray:
    """Each method's family (``""`` for every method of a result without families)."""
    if "family" not in dataset.coords:
        return np.full(dataset.sizes["ci_method"], "", dtype=object)
    return np.asarray(dataset["family"].values.astype(str), dtype=object)


def _numeric(dataset: xr.Dataset, dim: str) -> bool:
    return dataset[dim].dtype.kind in "iuf"


def suite_layout(dataset: xr.Dataset, x: str | None = None) -> SuiteLayout:
    """Lay out a result's grid dims for :func:`plot_suite`, or say why they do not fit.

    Parameters
    ----------
    dataset : xarray.Dataset
        A result of :func:`perfci.harness.run_suite`.
    x : str, optional
        The dim on the x axis. By default the numeric grid dim with the most values (the
        first in the suite's order on a tie); without a numeric dim of two or more values,
        the dim with the most values, its values as categories.

    Returns
    -------
    SuiteLayout
        The dims' places.

    Raises
    ------
    ValueError
        If `x` is not a grid dim, or a dim fits nowhere: no dim is ever averaged over.

    Notes
    -----
    One column of panels per method family. The other dims with more than one value are
    placed largest first: as rows of panels while the rows number at most
    :data:`MAX_ROWS`; else, for one dim, as a split of every family's column while the
    columns number at most :data:`MAX_COLUMNS`; else, if the dim has at most
    :data:`MAX_PAGE_VALUES` values, one figure per value (at most :data:`MAX_PAGES`
    figures). A dim that fits none of these is an error naming it: draw a selection
    (``dataset.sel(dim=[...])``) or choose another `x`. Dims with one value are stated in
    the titles.

    Examples
    --------
    >>> import tempfile
    >>> from perfci import figures, harness
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     ds = harness.run_suite("figure7", "smoke", folder)
    >>> dict(ds.sizes)  # the smoke scale: 3 sizes
    {'n': 3, 'icc': 4, 'texts_per_person': 5, 'ci_method': 2}
    >>> layout = figures.suite_layout(ds)
    >>> layout.x, layout.rows, layout.column, layout.pages
    ('texts_per_person', ('icc',), 'n', ())
    >>> by_n = figures.suite_layout(ds, x="n")  # 4 x 5 rows would be too many
    >>> by_n.rows, by_n.column
    (('texts_per_person',), 'icc')
    """
    dims = _grid_dims(dataset)
    suite = dataset.attrs.get("suite", "?")
    sizes = {d: int(dataset.sizes[d]) for d in dims}
    if x is None:
        several = [d for d in dims if sizes[d] > 1]
        numeric = [d for d in several if _numeric(dataset, d)]
        x = max(numeric or several or dims, key=lambda d: sizes[d])  # the first largest
    elif not isinstance(x, str) or x not in dims:
        raise ValueError(
            f"`x` must be one of the grid dims of suite {suite!r}, {sorted(dims)}; got {x!r}."
        )
    families = tuple(dict.fromkeys(_family_of(dataset).tolist()))
    rows: list[str] = []
    column: str | None = None
    pages: list[str] = []
    n_rows = n_pages = 1
    for dim in sorted((d for d in dims if d != x and sizes[d] > 1), key=lambda d: -sizes[d]):
        if n_rows * sizes[dim] <= MAX_ROWS:
            rows.append(dim)
            n_rows *= sizes[dim]
        elif column is None and len(families) * sizes[dim] <= MAX_COLUMNS:
            column = dim
        elif sizes[dim] <= MAX_PAGE_VALUES and n_pages * sizes[dim] <= MAX_PAGES:
            pages.append(dim)
            n_pages *= sizes[dim]
        else:
            placed = ", ".join(f"{d} ({sizes[d]} values)" for d in (*rows, column) if d)
            raise ValueError(
                f"suite {suite!r} cannot be drawn without averaging over {dim!r} "
                f"({sizes[dim]} values): with `x` = {x!r}, the panels' rows and columns hold "
                f"{placed or 'no dim'} and {len(families)} method families, and a dim of "
                f"more than {MAX_PAGE_VALUES} values is not split into figures; choose "
                f"another `x` or draw a selection of {dim!r}."
            )
    return SuiteLayout(
        x=x,
        rows=tuple(sorted(rows, key=dims.index)),
        column=column,
        pages=tuple(sorted(pages, key=dims.index)),
        fixed={d: dataset[d].values[0].item() for d in dims if d != x and sizes[d] == 1},
        families=families,
    )


def _value_text(value: Any) -> str:
    if isinstance(value, bool | np.bool_):
        return str(value)
    return f"{value:g}" if isinstance(value, float | int | np.number) else str(value)


def _assignment(values: dict[str, Any]) -> str:
    return ", ".join(f"{d} = {_value_text(v)}" for d, v in values.items())


def _page_name(values: dict[str, Any]) -> str:
    """Return the part of a file name that names a page: ``_icc-0.1_sampling-small``."""
    text = "".join(f"_{d}-{_value_text(v)}" for d, v in values.items())
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def _combinations(dataset: xr.Dataset, dims: Sequence[str]) -> list[dict[str, Any]]:
    values = [[v.item() for v in dataset[d].values] for d in dims]
    return [dict(zip(dims, combo, strict=True)) for combo in itertools.product(*values)]


def _suite_title(dataset: xr.Dataset, variable: str) -> str:
    level = float(dataset.attrs.get("confidence_level", 0.95))
    exact = bool(int(dataset.attrs.get("exact", 0)))
    if variable == "coverage":
        band = " (exact)" if exact else ", band ± 2 Monte-Carlo SE"
        what = f"coverage of {level:.0%} intervals{band}"
    else:
        what = "expected half-width (exact)" if exact else "mean half-width over the replications"
    suite, scale = (figure_text(dataset.attrs.get(k, "")) for k in ("suite", "scale"))
    return f"{suite} ({scale}): {what}"


def plot_suite(
    dataset: xr.Dataset, variable: str = "coverage", *, x: str | None = None
) -> dict[str, MplFigure]:
    r"""Draw a result's coverage or half-width against one grid dim, for any suite.

    Parameters
    ----------
    dataset : xarray.Dataset
        A result of :func:`perfci.harness.run_suite`.
    variable : {"coverage", "mean_half_width"}, default "coverage"
        What to draw. Coverage has a band of +- 2 Monte-Carlo standard errors around each
        method's line (none in exact results) and a dashed line at the nominal level.
    x : str, optional
        The dim on the x axis (see :func:`suite_layout`).

    Returns
    -------
    dict of str to matplotlib.figure.Figure
        One figure per page (see :func:`suite_layout`), keyed by the part of its file
        name that says which page (``""`` for a single page, ``"_rate-0.9"`` for the
        page of ``rate = 0.9``); empty if `variable` has no value in the result (the
        coverage of a planning suite). Close them when done.

    Raises
    ------
    ValueError
        If `variable` is neither of the two, or as :func:`suite_layout`.

    Notes
    -----
    Each family's column of panels draws its methods against `x`, one colour each
    (named in the legend under the column; beyond eight methods the colours repeat with
    another line style); each row of panels is one combination of the row dims (named at
    the left, one dim a line); the title names the suite, the scale, the page and the dims with one
    value. Coverage panels share one y range, half-width panels one per row. A numeric
    `x` spanning a factor of 50 or more is drawn on a log scale, a non-numeric one at
    equally spaced positions. Methods without a value on a page are left out of it.

    Examples
    --------
    >>> import tempfile
    >>> import matplotlib.pyplot as plt
    >>> from perfci import figures, harness
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     ds = harness.run_suite("paper-samplesize", "smoke", folder)
    >>> dict(ds.sizes)  # the smoke scale: 3 sizes, 8 true values
    {'n': 3, 'p': 8, 'ci_method': 4}
    >>> fig = figures.plot_suite(ds, "coverage")[""]  # x = p, a row per n
    >>> len(fig.axes), [ax.get_title() for ax in fig.axes[:2]]
    (6, ['bootstrap', 'analytic'])
    >>> fig.axes[0].get_ylabel()
    'n = 10\ncoverage'
    >>> plt.close(fig)
    """
    from ..plotting import PALETTE, style

    if variable not in _SUITE_VARIABLES:
        raise ValueError(f"`variable` must be one of {sorted(_SUITE_VARIABLES)}; got {variable!r}.")
    layout = suite_layout(dataset, x)
    if bool(np.all(np.isnan(dataset[variable].values))):
        return {}
    import matplotlib.pyplot as plt

    level = float(dataset.attrs.get("confidence_level", 0.95))
    x_values = dataset[layout.x].values
    numeric_x = _numeric(dataset, layout.x)
    positions = x_values if numeric_x else np.arange(x_values.size)
    log_x = bool(numeric_x and x_values.min() > 0 and x_values.max() >= 50 * x_values.min())
    marker = "o" if x_values.size <= 12 else ""
    rows = _combinations(dataset, layout.rows)
    splits = dataset[layout.column].values.tolist() if layout.column else [None]
    columns = [(family, value) for family in layout.families for value in splits]
    label = _SUITE_VARIABLES[variable][1]
    family_of = _family_of(dataset)
    pages: dict[str, MplFigure] = {}
    single = dataset.isel({d: 0 for d in layout.fixed})  # dims of one value, in the title
    for page in _combinations(dataset, layout.pages):
        data = single.sel(page) if page else single
        others = [d for d in data[variable].dims if d != "ci_method"]
        has_values = ~data[variable].isnull().all(others).values
        with style():
            fig, axes = plt.subplots(
                len(rows),
                len(columns),
                figsize=(2.45 * len(columns) + 0.5, 1.75 * len(rows) + 0.9),
                sharex=True,
                sharey=True if variable == "coverage" else "row",
                squeeze=False,
                layout="constrained",
            )
            for j, (family, value) in enumerate(columns):
                members = [
                    str(m)
                    for m, f, ok in zip(
                        data["ci_method"].values, family_of, has_values, strict=True
                    )
                    if f == family and ok
                ]
                for i, row in enumerate(rows):
                    ax = axes[i, j]
                    where = {**row, layout.column: value} if layout.column else row
                    cell = data.sel(where) if where else data
                    for k, method in enumerate(members):
                        series = cell.sel({"ci_method": method})
                        color = PALETTE[k % len(PALETTE)]
                        ax.plot(
                            positions,
                            series[variable].values,
                            color=color,
                            ls=("-", "--", ":", "-.")[(k // len(PALETTE)) % 4],
                            marker=marker,
                            ms=2.5,
                            label=figure_text(method),
                        )
                        if variable == "coverage":
                            _mc_band(
                                ax,
                                positions,
                                series[variable].values,
                                series["mc_se"].values,
                                color,
                            )
                    if variable == "coverage":
                        ax.axhline(level, color="0.3", lw=0.7, ls="--", zorder=1)
                    if not members:
                        ax.text(0.5, 0.5, "no values", transform=ax.transAxes, ha="center")
                    if i == 0:
                        split = f", {layout.column} = {_value_text(value)}" if layout.column else ""
                        ax.set_title((family or "all methods") + split)
                    if j == 0:
                        names = [f"{d} = {_value_text(v)}" for d, v in row.items()]
                        ax.set_ylabel("\n".join([*names, label]))
                    if log_x:
                        ax.set_xscale("log")
                    if i < len(rows) - 1:
                        continue
                    ax.set_xlabel(layout.x)
                    if not numeric_x or (marker and not log_x):  # few values: each its tick
                        ax.set_xticks(positions, [_value_text(v) for v in x_values.tolist()])
                    if members and (j == 0 or columns[j - 1][0] != family):
                        # under its family's first x label, one method a line (narrow)
                        ax.legend(
                            loc="upper left",
                            bbox_to_anchor=(0.0, 0.0),
                            borderaxespad=4.0,
                            handlelength=1.2,
                        )
            context = _assignment({**page, **layout.fixed})
            fig.suptitle(_suite_title(dataset, variable) + (f"\n{context}" if context else ""))
        pages[_page_name(page)] = fig
    return pages


def make_figures(
    dataset: xr.Dataset | Sequence[xr.Dataset],
    folder: str | Path,
    *,
    x: str | None = None,
    formats: str | Sequence[str] = ("png",),
) -> list[Path]:
    """Write a result's figures: the paper's for its suite, and the two of any suite.

    Parameters
    ----------
    dataset : xarray.Dataset or sequence of xarray.Dataset
        A result of :func:`perfci.harness.run_suite` (its ``suite`` attribute picks the
        paper's figures), or several, whose figures are all drawn and checked before
        any is written.
    folder : path
        Where to write ``<suite>-<figure>.<format>`` (the paper's figures, see
        :data:`FIGURES`), and ``coverage_<suite><page>.<format>`` and
        ``half_width_<suite><page>.<format>`` (:func:`plot_suite`) for every suite.
    x : str, optional
        The x-axis dim of the suite's own figures (see :func:`suite_layout`).
    formats : str or sequence of str, default ("png",)
        File formats (:data:`perfci.plotting.FORMATS`).

    Returns
    -------
    list of pathlib.Path
        The files written.

    Raises
    ------
    ValueError
        As :func:`suite_layout` and :func:`perfci.plotting.save_figure`, or if `folder`
        is a file or one of the files is a folder or read-only: every figure is drawn
        and every file checked before any file is written.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfci import figures, harness
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     ds = harness.run_suite("figure7", "smoke", folder)
    ...     [p.name for p in figures.make_figures(ds, Path(folder) / "figs")]
    ['figure7-fig7.png', 'half_width_figure7.png']
    """
    import matplotlib
    import matplotlib.pyplot as plt

    from ..plotting import FORMATS, check_formats, save_figure

    matplotlib.use("Agg")
    wanted = check_formats(formats)
    datasets = [dataset] if isinstance(dataset, xr.Dataset) else list(dataset)
    for one in datasets:
        suite_layout(one, x)  # fails before anything is written
    folder = Path(folder)
    check_folder(folder, "`folder`")
    drawn: list[tuple[Path, Any]] = []  # each figure and its file name without a format
    try:
        for one in datasets:
            drawn += _suite_figures(one, folder, x)
        plain = [b.with_suffix("") if b.suffix[1:].lower() in FORMATS else b for b, _ in drawn]
        targets = [b.with_name(f"{b.name}.{fmt}") for b in plain for fmt in wanted]
        for i, target in enumerate(targets):
            check_target(target, "figure")  # the names save_figure writes
            if target in targets[:i]:
                raise ValueError(f"two results would write the figure {str(target)!r}.")
        folder.mkdir(parents=True, exist_ok=True)
        return [path for base, fig in drawn for path in save_figure(fig, base, wanted)]
    finally:
        for _, fig in drawn:
            plt.close(fig)


def _suite_figures(dataset: xr.Dataset, folder: Path, x: str | None) -> list[tuple[Path, Any]]:
    """Draw one result's figures: (file name without a format, figure) pairs."""
    suite = str(dataset.attrs["suite"])
    stem_of = file_stem(suite)  # a results file's name may hold anything
    drawn: list[tuple[Path, Any]] = []
    try:
        for fig_spec in FIGURES.get(suite, []):
            drawn += _plot(dataset, fig_spec, folder / f"{stem_of}-{fig_spec.stem}")
        drawn += _population_histogram(folder) if suite == "paper-nested" else []
        drawn += _f1_heatmaps(dataset, folder) if suite == "paper-f1" else []
        for variable, (stem, _) in _SUITE_VARIABLES.items():
            pages = plot_suite(dataset, variable, x=x).items()
            drawn += [(folder / f"{stem}_{stem_of}{page}", fig) for page, fig in pages]
    except BaseException:
        import matplotlib.pyplot as plt

        for _, fig in drawn:
            plt.close(fig)
        raise
    return drawn


# ----------------------------------------------------------------------------- tables

#: Columns of :func:`coverage_frame` per cell and over a dim, with their table digits
#: (-1: the value as it is).
_CELL_COLUMNS = (
    ("coverage", 3),
    ("mc_se", 4),
    ("miss_low", 3),
    ("miss_high", 3),
    ("mean_half_width", 3),
    ("n_valid", 0),
    ("n_flagged", 0),
)
_SUMMARY_COLUMNS = (
    ("mean_coverage", 3),
    ("mean_coverage_mc_se", 4),
    ("min_coverage", 3),
    ("min_coverage_mc_se", 4),
    ("min_at", -1),
    ("mean_half_width", 3),
    ("cells", 0),
)


def coverage_frame(dataset: xr.Dataset, *, over: str | None = None) -> pd.DataFrame:
    r"""Every cell's coverage with its Monte-Carlo SE, or a summary over one dim if asked.

    Parameters
    ----------
    dataset : xarray.Dataset
        A result of :func:`perfci.harness.run_suite`.
    over : str, optional
        A grid dim to summarize over (one too long to read cell by cell); by default
        nothing is summarized.

    Returns
    -------
    pandas.DataFrame
        Without `over`, one row per method and cell (the methods in the suite's order,
        then the cells in the grid's order): ``method``, ``family``, the grid dims,
        ``coverage``, ``mc_se`` (its Monte-Carlo SE :math:`\sqrt{c(1-c)/n_{valid}}`, 0 in
        exact results), ``miss_low``, ``miss_high``, ``mean_half_width``, ``n_valid`` and
        ``n_flagged``. With `over`, one row per method and combination of the other
        dims: ``mean_coverage`` over the k cells of `over` with a coverage, its MC SE
        ``mean_coverage_mc_se`` (:math:`\sqrt{\sum se^2}/k`: the cells are simulated
        independently), ``min_coverage``, its ``min_coverage_mc_se``, ``min_at`` (the
        value of `over` where it is), ``mean_half_width`` and ``cells`` (k); NaN where
        k is 0.

    Raises
    ------
    ValueError
        If `over` is not a grid dim.

    Examples
    --------
    >>> import tempfile
    >>> from perfci import figures, harness
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     ds = harness.run_suite("paper-samplesize", "smoke", folder)
    >>> frame = figures.coverage_frame(ds)
    >>> len(frame) == ds.sizes["ci_method"] * ds.sizes["n"] * ds.sizes["p"]
    True
    >>> list(frame.columns[:6])
    ['method', 'family', 'n', 'p', 'coverage', 'mc_se']
    >>> len(figures.coverage_frame(ds, over="n")) == ds.sizes["ci_method"] * ds.sizes["p"]
    True
    """
    dims = _grid_dims(dataset)
    if over is None:
        table = dataset[[name for name, _ in _CELL_COLUMNS]]
    else:
        if not isinstance(over, str) or over not in dims:
            raise ValueError(f"`over` must be one of the grid dims {sorted(dims)}; got {over!r}.")
        coverage, se = dataset["coverage"], dataset["mc_se"]
        defined = coverage.notnull()
        cells = defined.sum(over)
        none = cells == 0
        at = coverage.fillna(np.inf).argmin(over)  # the first of the lowest
        table = xr.Dataset(
            {
                "mean_coverage": coverage.mean(over),
                "mean_coverage_mc_se": (
                    np.sqrt((se**2).where(defined).sum(over)) / cells.where(~none)
                ),
                "min_coverage": coverage.isel({over: at}).where(~none),
                "min_coverage_mc_se": se.isel({over: at}).where(~none),
                "min_at": dataset[over].isel({over: at}).where(~none),
                "mean_half_width": dataset["mean_half_width"].mean(over),
                "cells": cells,
            }
        )
        dims.remove(over)
    table = table.reset_coords(drop=True)
    frame = table.to_dataframe(dim_order=["ci_method", *dims]).reset_index()
    per_method = int(np.prod([table.sizes[d] for d in dims]))
    frame.insert(1, "family", np.repeat(_family_of(dataset), per_method))
    return frame.rename(columns={"ci_method": "method"})


def coverage_table(dataset: xr.Dataset, *, over: str | None = None) -> str:
    """Markdown table of :func:`coverage_frame`: every cell, with Monte-Carlo SEs.

    Parameters
    ----------
    dataset : xarray.Dataset
        A result of :func:`perfci.harness.run_suite`.
    over : str, optional
        A grid dim to summarize over; the table's header then says so. By default every
        cell has its row.

    Returns
    -------
    str
        Markdown: a header naming the suite and scale, a line saying what the columns
        hold (and, with `over`, what was summarized over), and the table; every name and
        value from the result goes through
        :func:`perfci.publishing.tables.markdown_text` (markup and control characters
        escaped, one line per cell).

    Examples
    --------
    >>> import tempfile
    >>> from perfci import figures, harness
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     ds = harness.run_suite("paper-samplesize", "smoke", folder)
    >>> print(figures.coverage_table(ds).splitlines()[0])
    ### paper-samplesize (smoke)
    """
    from ..publishing.tables import markdown_text as md

    frame = coverage_frame(dataset, over=over)
    level = float(dataset.attrs.get("confidence_level", 0.95))
    if bool(int(dataset.attrs.get("exact", 0))):
        error = "exact enumeration: no Monte-Carlo error, `mc_se` 0"
    else:
        error = (
            "`mc_se` = sqrt(c (1 - c) / n_valid), a cell's Monte-Carlo standard error over "
            f"its {md(str(dataset.attrs.get('replications', '?')))} replications"
        )
    if over is None:
        columns = _CELL_COLUMNS
        what = (
            f"Every cell: coverage of {level:.0%} intervals ({error}), the shares of intervals "
            "wholly below (`miss_low`) and above (`miss_high`) the truth, the mean "
            "half-width, the valid replications and the flagged fits."
        )
    else:
        columns = _SUMMARY_COLUMNS
        values = dataset[over].values.tolist()
        what = (
            f"Summary over {md(over)} ({len(values)} values, {md(_value_text(values[0]))} to "
            f"{md(_value_text(values[-1]))}): the mean of the cells' coverages of {level:.0%} "
            f"intervals and its Monte-Carlo SE sqrt(sum mc_se^2) / cells ({error}); the "
            f"lowest coverage, its MC SE and the {md(over)} where it is; the mean half-width; "
            "the cells with a coverage."
        )
    names = [c for c in frame.columns if c not in {name for name, _ in columns}]
    header = [*names, *(name for name, _ in columns)]
    lines = [
        f"### {md(str(dataset.attrs['suite']))} ({md(str(dataset.attrs['scale']))})",
        "",
        what,
        "",
        "| " + " | ".join(md(str(h)) for h in header) + " |",
        "|" + "---|" * len(header),
    ]
    records = frame.to_dict("list")
    for r in range(len(frame)):
        cells = [md(_value_text(records[c][r])) for c in names]
        for name, digits in columns:
            value = records[name][r]
            if value is None or (isinstance(value, float) and np.isnan(value)):
                cells.append("n/a")
            else:
                cells.append(md(_value_text(value)) if digits < 0 else f"{float(value):.{digits}f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
