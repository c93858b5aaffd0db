"""validation/make_atlas.py: verdicts, regions, acceptance and figures on known results."""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def atlas():
    spec = importlib.util.spec_from_file_location("make_atlas", ROOT / "validation/make_atlas.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _result(name, dims, methods, coverage, half_width, n_valid=None, replications=1000):
    """A result dataset as the harness writes it, with the given coverage and half-widths."""
    shape = (*(len(v) for v in dims.values()), len(methods))
    coverage = np.broadcast_to(np.asarray(coverage, dtype=float), shape).copy()
    n_valid = np.full(shape, float(replications)) if n_valid is None else n_valid
    coverage[n_valid == 0] = np.nan
    miss = np.where(n_valid == 0, np.nan, 1 - coverage)
    all_dims = (*dims, "ci_method")
    data = {
        "coverage": coverage,
        "mc_se": np.sqrt(coverage * (1 - coverage) / replications),
        "mean_half_width": np.where(
            n_valid == 0, np.nan, np.broadcast_to(np.asarray(half_width, float), shape)
        ),
        "miss_low": miss / 4,
        "miss_high": 3 * miss / 4,
        "n_valid": n_valid,
        "n_flagged": np.zeros(shape),
    }
    families = ["recommended" if m == "recommended" else "analytic" for m in methods]
    return xr.Dataset(
        {k: (all_dims, v) for k, v in data.items()},
        coords={**dims, "ci_method": methods, "family": ("ci_method", families)},
        attrs={
            "suite": name,
            "description": f"{name}: a synthetic atlas result",
            "scale": "full",
            "replications": replications,
            "resamples": 100,
            "exact": 0,
            "seed": 1,
            "confidence_level": 0.95,
            "population": "{'kind': 'nested', 'rate': 0.9}",
        },
    )


def sizes_result():
    """persons x icc; wilson is narrow and below 0.93 in one cell of 12 persons."""
    dims = {"persons": [6, 12, 30], "icc": [0.1, 0.3]}
    methods = ["wilson", "wide", "recommended"]
    cov = np.empty((3, 2, 3))
    cov[..., 0] = 0.98
    cov[1, 1, 0] = 0.92  # the one cell below the floor
    cov[..., 1] = 0.96
    cov[..., 2] = 0.95
    cov[0, :, 2] = [0.91, 0.94]  # 5-9 persons: above 0.90, one cell below 0.93
    return _result("atlas-sizes", dims, methods, cov, [0.05, 0.10, 0.08])


def metrics_result(rec_f1_at_10=0.95):
    """metric x persons; the analytic wilson gives no interval for F1 (n_valid == 0)."""
    dims = {"metric": ["f1", "recall"], "persons": [10, 20]}
    methods = ["wilson", "cluster", "recommended"]
    cov = np.empty((2, 2, 3))
    cov[..., 0] = 0.96
    cov[..., 1] = 0.90
    cov[..., 2] = 0.96
    cov[0, 0, 2] = rec_f1_at_10
    n_valid = np.full(cov.shape, 1000.0)
    n_valid[0, :, 0] = 0
    return _result("atlas-metrics", dims, methods, cov, [0.06, 0.04, 0.07], n_valid)


@pytest.fixture
def results_dir(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    sizes_result().to_netcdf(folder / "atlas-sizes.nc", engine="h5netcdf")
    metrics_result().to_netcdf(folder / "atlas-metrics.nc", engine="h5netcdf")
    _result("other", {"persons": [10]}, ["recommended"], 0.5, 0.1).to_netcdf(
        folder / "paper-other.nc", engine="h5netcdf"
    )
    return folder


def test_method_table_verdicts_and_order(atlas):
    table = atlas.method_table(atlas.cells(sizes_result())).set_index("ci_method")
    assert table["verdict"].to_dict() == {
        "recommended": "covers",
        "wide": "covers",
        "wilson": "covers on average",
    }
    assert list(table.index) == ["recommended", "wide", "wilson"]  # covering, narrowest first
    assert table.loc["wilson", "min_large"] == pytest.approx(0.92)
    assert table.loc["wilson", "mean_large"] == pytest.approx((3 * 0.98 + 0.92) / 4)
    assert table.loc["wilson", "share_floor"] == pytest.approx(0.75)
    assert table.loc["recommended", "min_small"] == pytest.approx(0.91)
    assert table.loc["wilson", "cells"] == 6
    assert table.loc["wide", "miss_high"] == pytest.approx(0.03)


def test_methods_that_do_not_apply_are_left_out(atlas):
    ds = metrics_result()
    parts = dict(atlas.by_metric(ds, atlas.cells(ds)))
    f1 = atlas.method_table(parts["f1"]).set_index("ci_method")
    recall = atlas.method_table(parts["recall"]).set_index("ci_method")
    assert "wilson" not in f1.index
    assert recall.loc["wilson", "cells"] == 2
    assert f1.loc["cluster", "verdict"] == "under-covers"


def test_regions_and_failures(atlas):
    ds = sizes_result()
    regions = atlas.regions(ds, atlas.cells(ds))
    assert list(regions["band"]) == ["5-9", "5-9", "10-19", "10-19", "20+", "20+"]
    first = regions.iloc[0]  # 6 persons, icc 0.1: recommended at 0.91 is above 0.90
    assert first["narrowest"] == "wilson"
    assert first["rec_min"] == pytest.approx(0.91)
    assert not first["rec_covers"]  # its mean there (0.91) is below 0.945
    twelve = regions[(regions["band"] == "10-19") & (regions["icc"] == 0.3)].iloc[0]
    assert twelve["narrowest"] == "wide"  # wilson is at 0.92 there
    assert atlas.failures(atlas.cells(ds)).empty

    ds = metrics_result(rec_f1_at_10=0.92)
    fails = atlas.failures(atlas.cells(ds))
    assert len(fails) == 1
    assert (fails.loc[0, "metric"], fails.loc[0, "persons"]) == ("f1", 10)
    regions = atlas.regions(ds, atlas.cells(ds))
    f1 = regions[regions["metric"] == "f1"].set_index("band")
    # cluster under-covers and wilson does not apply: at 20+ persons only recommended covers
    assert pd.isna(f1.loc["10-19", "narrowest"]) and not f1.loc["10-19", "rec_covers"]
    assert f1.loc["20+", "narrowest"] == "recommended"


def test_regions_cross_two_dims_when_there_are_too_many(atlas):
    dims = {"persons": [10, 20], "a": [1, 2, 3, 4, 5], "b": [1, 2, 3, 4, 5], "c": [1, 2]}
    ds = _result("atlas-many", dims, ["recommended"], 0.95, 0.1)
    assert atlas.region_dims(ds) == (["a", "b"], True)
    regions = atlas.regions(ds, atlas.cells(ds))
    assert len(regions) == 50 and set(regions["cells"]) == {2}


def test_acceptance(atlas, results_dir):
    result = atlas.acceptance(results_dir)
    assert result["min_large"] == {"value": 0.95, "target": 0.93, "passed": True, "cells": 8}
    assert result["mean_large"]["value"] == pytest.approx((5 * 0.95 + 3 * 0.96) / 8)
    assert result["mean_large"]["passed"]
    assert result["min_small"] == {"value": 0.91, "target": 0.90, "passed": True, "cells": 2}
    assert result["small_below_floor"] == 1
    assert result["worst_small"] == "atlas-sizes: persons=6, icc=0.1"
    assert result["passed"]

    failing = {"atlas-metrics": metrics_result(rec_f1_at_10=0.92), "atlas-sizes": sizes_result()}
    result = atlas.acceptance(failing)
    assert result["min_large"]["value"] == pytest.approx(0.92)
    assert not result["min_large"]["passed"] and not result["passed"]
    assert result["worst_large"] == "atlas-metrics: metric=f1, persons=10"


def test_write_atlas_writes_the_report_and_figures(atlas, results_dir, tmp_path):
    out, figures = tmp_path / "docs" / "ATLAS.md", tmp_path / "figures"
    assert (
        atlas.main(["--results", str(results_dir), "--out", str(out), "--figures", str(figures)])
        == 0
    )
    names = sorted(p.name for p in figures.iterdir())
    assert names == [
        "atlas-metrics-f1-tradeoff.png",
        "atlas-metrics-recall-tradeoff.png",
        "atlas-sizes-tradeoff.png",
    ]  # nothing of paper-other, no temporary file left
    for name in names:
        assert (figures / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = out.read_text()
    assert text.index("## Acceptance of `recommended`: PASS") < text.index("## atlas-metrics")
    assert text.index("## atlas-metrics") < text.index("## atlas-sizes")
    assert "perfci validate run atlas-sizes --scale full --workers 2" in text
    assert "![atlas-sizes: coverage vs half-width](../figures/atlas-sizes-tradeoff.png)" in text
    assert "Not applicable here (no valid interval): wilson." in text
    assert "| 20+ | f1 | 1 | only recommended | 0.0700 |" in text
    assert "| wilson | 6 | 0.920 | 0.965 | 75% | 0.980 |" in text
    assert "paper-other" not in text
    assert sorted(p.name for p in out.parent.iterdir()) == ["ATLAS.md"]


def test_bayesian_beside_frequentist_table_per_design(atlas, tmp_path):
    # two designs, one Bayesian and one frequentist method: one row per design, the
    # Bayesian columns first, every entry the cell's coverage, misses and half-width
    make_atlas = atlas
    ds = xr.Dataset(
        {
            name: (("ci_method", "persons"), np.array(values))
            for name, values in {
                "coverage": [[0.95, 0.94], [0.91, 0.93]],
                "mc_se": [[0.007, 0.007], [0.009, 0.008]],
                "miss_low": [[0.02, 0.03], [0.05, 0.04]],
                "miss_high": [[0.03, 0.03], [0.04, 0.03]],
                "mean_half_width": [[0.1, 0.05], [0.09, 0.045]],
                "n_valid": [[1000, 1000], [1000, 1000]],
            }.items()
        },
        coords={
            "ci_method": ["freq", "bayes_pop"],
            "persons": [10, 20],
            "family": ("ci_method", ["clustered", "bayes"]),
        },
        attrs={"suite": "toy"},
    )
    assert make_atlas.bayes_methods(ds) == (["bayes_pop"], ["freq"])
    lines = make_atlas.side_by_side_lines("toy", ds, tmp_path, tmp_path / "ATLAS.md")
    table = [line for line in lines if line.startswith("| ")]
    assert table[0] == "| `persons` | bayes_pop | freq |"
    assert table[1] == "| 10 | 0.910 (0.050/0.040), hw 0.0900 | 0.950 (0.020/0.030), hw 0.1000 |"
    assert len(table) == 3
    assert (tmp_path / "toy-bayes-vs-frequentist.png").stat().st_size > 0
    no_bayes = ds.sel(ci_method=["freq"])
    assert make_atlas.side_by_side_lines("toy", no_bayes, None, tmp_path / "ATLAS.md") == []


def test_valid_is_the_share_of_the_replications_a_method_scored(atlas):
    # atlas-multiclass's bayes_margins_population scores the first 250 of 1,000 data sets
    # of a cell (its suite file says so): 250 valid intervals are all of them
    make_atlas = atlas
    dims = {"persons": [10, 20]}
    methods = ["recommended", "bayes_margins_population"]
    n_valid = np.array([[1000.0, 250.0], [990.0, 245.0]])
    ds = _result("atlas-multiclass", dims, methods, 0.95, 0.05, n_valid)
    assert make_atlas.method_replications(ds) == {
        "recommended": 1000.0,
        "bayes_margins_population": 250.0,
    }
    frame = make_atlas.cells(ds).set_index(["persons", "ci_method"])["valid"]
    assert frame[10, "bayes_margins_population"] == 1.0
    assert frame[20, "bayes_margins_population"] == pytest.approx(0.98)
    assert frame[20, "recommended"] == pytest.approx(0.99)
    # a result whose suite is not known: every method scored the result's replications
    unknown = _result("not-a-suite", dims, methods, 0.95, 0.05, n_valid)
    assert set(make_atlas.method_replications(unknown).values()) == {1000.0}
