"""Compare two result files of one suite, method by method, in Monte-Carlo SE units.

Usage: ``.venv/bin/python validation/benchmarks/compare_results.py OLD.nc NEW.nc``.
For each method: the share of cells with identical coverage, the largest coverage
difference, the mean difference, the largest |z| and the SD of z (z: a cell's difference
over its combined Monte-Carlo SE), the largest relative change of the mean half-width,
and the mean coverage of each file. With the same seeds the data sets are shared, so
the SD of z of rows whose resampling alone differs stays well below 1.
"""

import sys

import numpy as np
import xarray as xr


def main(old_path: str, new_path: str) -> None:
    old, new = xr.open_dataset(old_path), xr.open_dataset(new_path)
    for method in old.ci_method.values:
        a = old.coverage.sel(ci_method=method).values.ravel()
        b = new.coverage.sel(ci_method=method).values.ravel()
        se_a = old.mc_se.sel(ci_method=method).values.ravel()
        se_b = new.mc_se.sel(ci_method=method).values.ravel()
        ok = np.isfinite(a) & np.isfinite(b)
        diff = (b - a)[ok]
        se = np.sqrt(se_a**2 + se_b**2)[ok]
        z = np.where(se > 0, diff / np.where(se > 0, se, 1.0), 0.0)
        w_a = old.mean_half_width.sel(ci_method=method).values.ravel()[ok]
        w_b = new.mean_half_width.sel(ci_method=method).values.ravel()[ok]
        width = np.nanmax(np.abs(w_b / w_a - 1))
        print(
            f"{method:24s} cells {ok.sum():5d} identical {np.mean(diff == 0):.2f}  "
            f"max|diff| {np.abs(diff).max():.4f}  mean diff {diff.mean():+.5f}  "
            f"max|z| {np.abs(z).max():.2f}  sd z {z.std():.2f}  max rel width {width:.4f}  "
            f"mean cov {a[ok].mean():.4f} -> {b[ok].mean():.4f}"
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
