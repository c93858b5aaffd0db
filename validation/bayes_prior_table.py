"""The prior study's tables (docs/bayes.md) from the results of the bayes-prior suites.

Run from the repository root after the three suites::

    perfci validate run bayes-prior --scale study --out validation/results
    perfci validate run bayes-prior-drawn --scale study --out validation/results
    perfci validate run bayes-prior-rare --scale study --out validation/results
    python validation/bayes_prior_table.py validation/results

For each suite, one row per metric: each prior's smallest coverage over the grid's cells
and, in brackets, the share of cells below 0.93; then per metric and prior: the
smallest coverage, the share
of cells below 0.93, the share of cells *significantly* below 0.93 (a one-sided binomial
test at the 1% level on the cell's replications) and the mean coverage, with the mean
shares of intervals wholly below and wholly above the truth.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import xarray as xr
from scipy import stats

SUITES = ("bayes-prior", "bayes-prior-drawn", "bayes-prior-rare")
FLOOR = 0.93


def table(path: Path) -> str:
    """Return the markdown table of one result file."""
    ds = xr.open_dataset(path)
    lines = [
        "| metric | prior | smallest | cells < 0.93 | significantly < 0.93 | mean "
        "| below | above |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for metric in ds["metric"].values:
        for method in ds["ci_method"].values:
            cell = ds.sel(metric=metric, ci_method=method)
            coverage = cell["coverage"].values.ravel()
            n = cell["n_valid"].values.ravel()
            hits = np.rint(coverage * n)
            # P(X <= hits | coverage 0.93): small where the cell is surely below 0.93
            p = stats.binom.cdf(hits, n, FLOOR)
            lines.append(
                f"| {metric} | {method} | {coverage.min():.3f} | {np.mean(coverage < FLOOR):.1%} "
                f"| {np.mean(p < 0.01):.1%} | {coverage.mean():.3f} "
                f"| {cell['miss_low'].values.mean():.3f} | {cell['miss_high'].values.mean():.3f} |"
            )
    return "\n".join(lines)


def compact(path: Path) -> str:
    """Return one row per metric: each prior's smallest coverage (share of cells < 0.93)."""
    ds = xr.open_dataset(path)
    methods = [str(m) for m in ds["ci_method"].values]
    lines = [
        "| metric | " + " | ".join(f"`{m}`" for m in methods) + " |",
        "|---|" + "---|" * len(methods),
    ]
    for metric in ds["metric"].values:
        cells = []
        for method in methods:
            coverage = ds["coverage"].sel(metric=metric, ci_method=method).values.ravel()
            cells.append(f"{coverage.min():.3f} ({np.mean(coverage < FLOOR):.0%})")
        lines.append(f"| {metric} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "validation/results")
    for name in SUITES:
        path = folder / f"{name}.nc"
        if path.exists():
            print(f"### {name}\n\n{compact(path)}\n\n{table(path)}\n")


if __name__ == "__main__":
    main()
