"""Figures and tables of harness results, mirroring the paper's (figure number in names).

Each figure is a grid of panels: one panel per value of ``panel`` (or per group of
methods), x the grid dim ``x``, one line per method (or per value of ``line``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

__all__ = ["FIGURES", "coverage_table", "make_figures"]

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


def _draw(ax, series: xr.Dataset, x: str, variable: str, label: str, level: float) -> None:
    if variable == "misses":
        line = ax.plot(series[x], series["miss_high"], lw=0.9, label=label)
        ax.plot(series[x], series["miss_low"], lw=0.9, ls="--", color=line[0].get_color())
    else:
        ax.plot(series[x], series[variable], lw=0.9, label=label)
    if variable == "coverage":
        ax.axhline(level, color="k", lw=0.6)


def _plot(dataset: xr.Dataset, fig_spec: Figure, path: Path) -> Path | None:
    import matplotlib.pyplot as plt

    data = dataset
    for dim, value in fig_spec.select:
        if dim not in data.dims or value not in data[dim].values:
            return None
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
        return None
    cols = min(3, len(panels))
    rows = int(np.ceil(len(panels) / cols))
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(4.2 * cols, 3.2 * rows),
        sharex=True,
        sharey=fig_spec.variable == "coverage",
        squeeze=False,
    )
    level = float(dataset.attrs.get("confidence_level", 0.95))
    for ax, panel in zip(axes.ravel(), panels, strict=False):
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
                        f"{fig_spec.line} = {v:g}",
                        level,
                    )
            else:
                _draw(ax, series, fig_spec.x, fig_spec.variable, method, level)
        ax.set_title(name, fontsize="small")
        ax.set_xlabel(fig_spec.x)
        ax.legend(fontsize="xx-small")
    for ax in axes.ravel()[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(fig_spec.title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _population_histogram(folder: Path) -> Path:
    """Figure D1: person-level rates of the paper's finite nested population."""
    import matplotlib.pyplot as plt

    from .populations import nested_population

    successes, truth = nested_population(2000, 60, 0.9, 0.1, 2000)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.hist(successes / 60, bins=30)
    ax.set_xlabel("person-level rate (of 60 texts)")
    ax.set_title(
        f"Figure D1: finite population, mean 0.90, SD 0.10 (truth {truth:.4f})", fontsize="small"
    )
    fig.tight_layout()
    path = folder / "paper-nested-figD1.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def make_figures(dataset: xr.Dataset, folder: str | Path) -> list[Path]:
    """Write the paper's figures for a suite result; return the files written.

    Parameters
    ----------
    dataset : xarray.Dataset
        A result of :func:`perfci.harness.run_suite` (its ``suite`` attribute picks the
        figures).
    folder : path
        Where to write ``<suite>-<figure>.png``.

    Returns
    -------
    list of pathlib.Path
        The figure files.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfci import figures, harness
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     ds = harness.run_suite("figure7", "smoke", folder)
    ...     [p.name for p in figures.make_figures(ds, Path(folder) / "figs")]
    ['figure7-fig7.png']
    """
    import matplotlib

    matplotlib.use("Agg")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    suite = dataset.attrs["suite"]
    written = []
    for fig_spec in FIGURES.get(suite, []):
        path = folder / f"{suite}-{fig_spec.stem}.png"
        if _plot(dataset, fig_spec, path) is not None:
            written.append(path)
    if suite == "paper-nested":
        written.append(_population_histogram(folder))
    if suite == "paper-f1" and (heatmaps := _f1_heatmaps(dataset, folder)) is not None:
        written.append(heatmaps)
    return written


def coverage_table(dataset: xr.Dataset) -> str:
    """Summarize a result as markdown: per method and cell group, coverage and half-width.

    Parameters
    ----------
    dataset : xarray.Dataset
        A result of :func:`perfci.harness.run_suite`.

    Returns
    -------
    str
        Markdown: mean and minimum coverage over the first grid dim, and the mean
        half-width, for each method and value of the other dims.

    Examples
    --------
    >>> import tempfile
    >>> from perfci import figures, harness
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     ds = harness.run_suite("paper-samplesize", "smoke", folder)
    >>> print(figures.coverage_table(ds).splitlines()[0])
    ### paper-samplesize (smoke)
    """
    dims = [str(d) for d in dataset["coverage"].dims if d != "ci_method"]
    first, other = dims[0], dims[1:]
    lines = [
        f"### {dataset.attrs['suite']} ({dataset.attrs['scale']})",
        "",
        f"Over {first}: mean and minimum coverage, mean half-width.",
        "",
        "| method | " + " | ".join(other) + " | mean coverage | min coverage | mean half-width |",
        "|---|" + "---|" * (len(other) + 3),
    ]
    stacked: Any = dataset.stack(cell=other) if other else dataset.expand_dims(cell=[0])
    for method in dataset["ci_method"].values:
        for i in range(stacked.sizes["cell"]):
            cell = stacked.sel({"ci_method": method}).isel(cell=i)
            labels = " | ".join(str(cell[d].item()) for d in other)
            cov = cell["coverage"].values
            hw = cell["mean_half_width"].values
            cov_text = (
                f"{np.nanmean(cov):.3f} | {np.nanmin(cov):.3f}"
                if not np.all(np.isnan(cov))
                else "n/a | n/a"
            )
            hw_text = f"{np.nanmean(hw):.3f}" if not np.all(np.isnan(hw)) else "n/a"
            lines.append(f"| {method} | {labels} | {cov_text} | {hw_text} |")
    return "\n".join(lines) + "\n"


def _f1_heatmaps(dataset: xr.Dataset, folder: Path) -> Path | None:
    """Figure 2: F1 coverage by precision x recall, averaged over ranges of n."""
    import matplotlib.pyplot as plt

    methods = [m for m in ("percentile", "pseudo_percentile_1") if m in dataset["ci_method"].values]
    ranges = [(30, 100), (100, 300), (300, 501)]
    ranges = [r for r in ranges if np.any((dataset["n"] >= r[0]) & (dataset["n"] < r[1]))]
    if not methods or not ranges:
        return None
    fig, axes = plt.subplots(
        len(ranges), len(methods), figsize=(4.5 * len(methods), 3.6 * len(ranges)), squeeze=False
    )
    for i, (lo, hi) in enumerate(ranges):
        sub = dataset.sel(n=(dataset["n"] >= lo) & (dataset["n"] < hi)).mean("n")
        for j, method in enumerate(methods):
            ax = axes[i, j]
            values = sub.sel({"ci_method": method})["coverage"].transpose("precision", "recall")
            image = ax.imshow(values, vmin=0.5, vmax=1.0, cmap="viridis", origin="lower")
            ax.set_xticks(range(values.sizes["recall"]), [f"{v:g}" for v in values["recall"]])
            ax.set_yticks(range(values.sizes["precision"]), [f"{v:g}" for v in values["precision"]])
            for (a, b), v in np.ndenumerate(values.values):
                ax.text(
                    b,
                    a,
                    f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize="xx-small",
                    color="w" if v < 0.8 else "k",
                )
            ax.set_title(f"{method}, n {lo}-{hi - 1}", fontsize="small")
            ax.set_xlabel("recall")
            ax.set_ylabel("precision")
    fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.6)
    fig.suptitle("Figure 2: coverage of 95% bootstrap intervals for F1, prevalence 0.10")
    path = folder / "paper-f1-fig2.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
