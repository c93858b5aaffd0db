"""Figures and tables of harness results, mirroring the paper's (figure number in names)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

__all__ = ["FIGURES", "coverage_table", "make_figures"]

# suite -> [(file stem, kind, methods, title)]
FIGURES: dict[str, list[tuple[str, str, tuple[str, ...], str]]] = {
    "paper-independent": [
        (
            "fig1",
            "coverage",
            ("wald", "agresti_coull", "percentile", "pseudo_percentile_1"),
            "Figure 1: coverage of 95% intervals",
        ),
        ("figA1", "coverage", ("wald",), "Figure A1: Wald"),
        ("figA2", "coverage", ("clopper_pearson",), "Figure A2: Clopper-Pearson"),
        ("figA3", "coverage", ("wilson",), "Figure A3: Wilson"),
        ("figA4", "coverage", ("agresti_coull",), "Figure A4: Agresti-Coull"),
        (
            "figA5",
            "half_width",
            ("wilson", "agresti_coull", "clopper_pearson"),
            "Figure A5: half-width by analytic method, n < 100",
        ),
        ("figB1", "coverage", ("percentile",), "Figure B1: percentile bootstrap"),
        ("figB2", "coverage", ("bca",), "Figure B2: BCa bootstrap"),
        (
            "figB3",
            "coverage",
            ("pseudo_percentile_1", "pseudo_percentile_2"),
            "Figure B3: pseudo-count bootstrap, lambda = 1 and 2",
        ),
        (
            "figB4",
            "half_width",
            ("percentile", "bca", "pseudo_percentile_1"),
            "Figure B4: half-width by bootstrap method, n < 100",
        ),
        (
            "figB5",
            "misses",
            ("percentile", "pseudo_percentile_1", "pseudo_percentile_2"),
            "Figure B5: direction of misses",
        ),
    ],
}


def _panels(dataset: xr.Dataset, title: str):
    import matplotlib.pyplot as plt

    ps = dataset["p"].values
    cols = 3
    rows = int(np.ceil(ps.size / cols))
    fig, axes = plt.subplots(
        rows, cols, figsize=(4 * cols, 3 * rows), sharex=True, sharey=True, squeeze=False
    )
    fig.suptitle(title)
    for ax in axes.ravel()[ps.size :]:
        ax.set_visible(False)
    return fig, axes.ravel()[: ps.size]


def _plot(dataset: xr.Dataset, kind: str, methods: tuple[str, ...], title: str, path: Path):
    import matplotlib.pyplot as plt

    methods = tuple(m for m in methods if m in dataset["method"].values)
    if not methods:
        return None
    data = dataset.sel({"method": list(methods)})
    if kind == "half_width":
        data = data.sel(n=data["n"] < 100)
    fig, axes = _panels(data, title)
    for ax, p in zip(axes, data["p"].values, strict=True):
        cell = data.sel(p=p)
        for method in methods:
            series = cell.sel({"method": method})
            if kind == "coverage":
                ax.plot(series["n"], series["coverage"], lw=0.9, label=method)
            elif kind == "half_width":
                ax.plot(series["n"], series["mean_half_width"], lw=0.9, label=method)
            else:
                line = ax.plot(
                    series["n"], series["miss_high"], lw=0.9, label=f"{method}: interval above p"
                )
                ax.plot(
                    series["n"],
                    series["miss_low"],
                    lw=0.9,
                    ls="--",
                    color=line[0].get_color(),
                    label=f"{method}: interval below p",
                )
        if kind == "coverage":
            ax.axhline(float(dataset.attrs.get("confidence_level", 0.95)), color="k", lw=0.6)
            ax.set_ylim(max(0.0, float(cell["coverage"].min()) - 0.02), 1.0)
        ax.set_title(f"p = {p:g}")
        ax.set_xlabel("n (relevant texts)")
    axes[0].legend(fontsize="x-small")
    fig.tight_layout()
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
    """
    import matplotlib

    matplotlib.use("Agg")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, kind, methods, title in FIGURES.get(dataset.attrs["suite"], []):
        path = folder / f"{dataset.attrs['suite']}-{stem}.png"
        if _plot(dataset, kind, methods, title, path) is not None:
            written.append(path)
    return written


def coverage_table(dataset: xr.Dataset) -> str:
    """Summarize coverage as markdown: per method and cell, mean and minimum coverage.

    Parameters
    ----------
    dataset : xarray.Dataset
        A result of :func:`perfci.harness.run_suite`.

    Returns
    -------
    str
        Markdown.
    """
    other = [d for d in dataset["coverage"].dims if d not in ("method", "n")]
    lines = [
        f"### {dataset.attrs['suite']} ({dataset.attrs['scale']})",
        "",
        "| method | " + " | ".join(other) + " | mean coverage | min coverage | mean half-width |",
        "|---|" + "---|" * (len(other) + 3),
    ]
    stacked: Any = dataset.stack(cell=other) if other else dataset.expand_dims(cell=[0])
    for method in dataset["method"].values:
        for i in range(stacked.sizes["cell"]):
            cell = stacked.sel({"method": method}).isel(cell=i)
            labels = " | ".join(f"{cell[d].item():g}" for d in other)
            cov = cell["coverage"].values
            if np.all(np.isnan(cov)):
                continue
            lines.append(
                f"| {method} | {labels} | {np.nanmean(cov):.3f} | {np.nanmin(cov):.3f} | "
                f"{np.nanmean(cell['mean_half_width'].values):.3f} |"
            )
    return "\n".join(lines) + "\n"
