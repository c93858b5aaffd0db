"""Figures and tables of any suite's results (perfci.harness.figures, validate report)."""

import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import xarray as xr
from matplotlib.collections import PolyCollection

from perfci import figures, harness
from perfci.cli import main

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# A suite of one's own: two grid dims, two method families, a quick smoke scale.
TWO_FACTOR = """
name = "two-factor"
description = "two grid dims and two method families"
seed = 11
[population]
kind = "bernoulli"
[grid]
n = [10, 20, 40]
p = [0.8, 0.95]
[scales.smoke]
replications = 120
resamples = 60
[scales.exact]
replications = 1
resamples = 0
exact = true
[[methods]]
name = "wilson"
family = "analytic"
method = "wilson"
[[methods]]
name = "wald"
family = "analytic"
method = "wald"
[[methods]]
name = "pseudo_percentile_1"
family = "bootstrap"
interval = "percentile"
pseudo_count = 1
"""


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def suite_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("suite") / "two-factor.toml"
    path.write_text(TWO_FACTOR)
    return path


@pytest.fixture(scope="module")
def result(suite_file, tmp_path_factory):
    return harness.run_suite(
        harness.load_suite(suite_file), "smoke", tmp_path_factory.mktemp("res")
    )


def synthetic(sizes, families=("analytic",), name="synthetic", categorical=()):
    """A result dataset with the given grid dims (numeric unless named in `categorical`)."""
    dims = {
        d: [f"v{i}" for i in range(k)] if d in categorical else list(range(1, k + 1))
        for d, k in sizes.items()
    }
    methods = [f"m{i}" for i in range(len(families))]
    shape = (*sizes.values(), len(methods))
    rng = np.random.default_rng(1)
    coverage = rng.uniform(0.85, 1.0, shape)
    data = {
        "coverage": coverage,
        "mc_se": np.sqrt(coverage * (1 - coverage) / 400),
        "mean_half_width": rng.uniform(0.02, 0.2, shape),
        "miss_low": (1 - coverage) / 2,
        "miss_high": (1 - coverage) / 2,
        "n_valid": np.full(shape, 400.0),
        "n_flagged": np.zeros(shape),
    }
    return xr.Dataset(
        {k: ((*dims, "ci_method"), v) for k, v in data.items()},
        coords={**dims, "ci_method": methods, "family": ("ci_method", list(families))},
        attrs={"suite": name, "scale": "smoke", "exact": 0, "confidence_level": 0.95},
    )


# --------------------------------------------------------------------- the layout


def test_layout_puts_the_longest_numeric_dim_on_x_and_the_rest_in_panels(result):
    layout = figures.suite_layout(result)
    assert (layout.x, layout.rows, layout.column, layout.pages) == ("n", ("p",), None, ())
    assert layout.families == ("analytic", "bootstrap")
    swapped = figures.suite_layout(result, "p")
    assert (swapped.x, swapped.rows) == ("p", ("n",))


def test_layout_of_categories_and_single_values():
    ds = synthetic({"sampling": 3, "persons": 1}, categorical=("sampling",))
    layout = figures.suite_layout(ds)
    assert (layout.x, layout.rows, layout.fixed) == ("sampling", (), {"persons": 1})
    fig = figures.plot_suite(ds)[""]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["v0", "v1", "v2"]
    assert fig.get_suptitle().endswith("\npersons = 1")  # a single value is stated


def test_layout_splits_columns_then_figures_and_never_averages():
    # rows up to 8, then one dim splitting the columns, then figures of dims of <= 4 values
    ds = synthetic({"n": 20, "a": 4, "b": 3, "c": 2, "d": 2})
    layout = figures.suite_layout(ds)
    assert (layout.rows, layout.column, layout.pages) == (("a", "c"), "b", ("d",))
    pages = figures.plot_suite(ds)
    assert sorted(pages) == ["_d-1", "_d-2"]
    fig = pages["_d-1"]
    assert len(fig.axes) == 8 * 3  # rows a x c, one family split by b
    assert [ax.get_title() for ax in fig.axes[:3]] == [f"analytic, b = {v}" for v in (1, 2, 3)]
    assert fig.axes[3].get_ylabel() == "a = 1\nc = 2\ncoverage"
    # a long dim with no room left is an error naming it
    with pytest.raises(ValueError, match=r"without averaging over 'q' \(9 values\)"):
        figures.suite_layout(synthetic({"n": 20, "r": 8, "q": 9}))


@pytest.mark.parametrize("x", ["q", 3, None])
def test_layout_refuses_an_x_that_is_not_a_grid_dim(result, x):
    if x is None:
        assert figures.suite_layout(result, x).x == "n"
        return
    with pytest.raises(ValueError, match=r"^`x` must be one of the grid dims of suite"):
        figures.suite_layout(result, x)


# -------------------------------------------------------------------- the figures


def test_coverage_figure_has_a_panel_per_family_and_cell_with_mc_bands(result):
    fig = figures.plot_suite(result, "coverage")[""]
    axes = np.array(fig.axes).reshape(2, 2)  # rows p, columns the two families
    assert [ax.get_title() for ax in axes[0]] == ["analytic", "bootstrap"]
    assert [ax.get_ylabel() for ax in axes[:, 0]] == ["p = 0.8\ncoverage", "p = 0.95\ncoverage"]
    assert [ax.get_xlabel() for ax in axes[1]] == ["n", "n"]
    assert "band ± 2 Monte-Carlo SE" in fig.get_suptitle()
    for i, p in enumerate(result["p"].values):
        for j, family in enumerate(["analytic", "bootstrap"]):
            ax = axes[i, j]
            methods = [
                m for m in result["ci_method"].values if result["family"].sel(ci_method=m) == family
            ]
            lines = [line for line in ax.get_lines() if line.get_label() in methods]
            assert [line.get_label() for line in lines] == methods
            (nominal,) = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
            assert list(nominal.get_ydata()) == [0.95, 0.95]
            bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
            assert len(bands) == len(methods)
            for line, band in zip(lines, bands, strict=True):
                cell = result.sel(p=p, ci_method=line.get_label())
                np.testing.assert_array_equal(line.get_ydata(), cell["coverage"].values)
                # the band spans coverage +- 2 SE at every n
                vertices = band.get_paths()[0].vertices
                for n, cov, se in zip(
                    cell["n"].values, cell["coverage"].values, cell["mc_se"].values, strict=True
                ):
                    at = vertices[np.isclose(vertices[:, 0], n), 1]
                    assert at.min() == pytest.approx(cov - 2 * se) and at.max() == pytest.approx(
                        cov + 2 * se
                    )
    assert axes[0, 0].get_legend() is None and axes[1, 0].get_legend() is not None


def test_exact_results_have_no_band_and_say_exact(suite_file, tmp_path):
    exact = harness.run_suite(harness.load_suite(suite_file), "exact", tmp_path)
    fig = figures.plot_suite(exact, "coverage")[""]
    assert not any(isinstance(c, PolyCollection) for ax in fig.axes for c in ax.collections)
    assert "(exact)" in fig.get_suptitle()
    half = figures.plot_suite(exact, "mean_half_width")[""]
    assert half.axes[0].get_ylabel() == "p = 0.8\nmean half-width"
    assert "expected half-width (exact)" in half.get_suptitle()
    with pytest.raises(ValueError, match=r"^`variable` must be one of"):
        figures.plot_suite(exact, "miss_low")


def test_a_paper_suite_keeps_its_figures_and_gets_the_generic_ones(tmp_path):
    ds = harness.run_suite("figure7", "smoke", tmp_path)  # a planning suite: no coverage
    assert figures.plot_suite(ds, "coverage") == {}
    written = figures.make_figures(ds, tmp_path / "figs", formats=("png", "pdf"))
    assert [p.name for p in written] == [
        "figure7-fig7.png",
        "figure7-fig7.pdf",
        "half_width_figure7.png",
        "half_width_figure7.pdf",
    ]
    assert all(p.read_bytes()[:4] in (PNG_MAGIC[:4], b"%PDF") for p in written)


# ----------------------------------------------------------------------- the table


def test_the_table_has_a_row_per_method_and_cell_with_its_mc_se(result):
    frame = figures.coverage_frame(result)
    methods, ns, ps = (result[d].values for d in ("ci_method", "n", "p"))
    assert len(frame) == methods.size * ns.size * ps.size
    assert list(frame.columns) == [
        "method", "family", "n", "p", "coverage", "mc_se", "miss_low", "miss_high",
        "mean_half_width", "n_valid", "n_flagged",
    ]  # fmt: skip
    for row in frame.itertuples():
        cell = result.sel(ci_method=row.method, n=row.n, p=row.p)
        c, k = float(cell["coverage"]), float(cell["n_valid"])
        assert row.coverage == c and row.mc_se == pytest.approx(np.sqrt(c * (1 - c) / k))
        assert row.family == str(cell["family"].values)
    table = figures.coverage_table(result)
    assert table.splitlines()[2].startswith("Every cell: coverage of 95% intervals")
    assert len([line for line in table.splitlines() if line.startswith("| wald |")]) == 6


def test_a_summary_over_a_dim_says_so_and_carries_its_mc_se(result):
    frame = figures.coverage_frame(result, over="n")
    assert len(frame) == result.sizes["ci_method"] * result.sizes["p"]
    for row in frame.itertuples():
        cells = result.sel(ci_method=row.method, p=row.p)
        cov, se = cells["coverage"].values, cells["mc_se"].values
        assert row.mean_coverage == pytest.approx(np.mean(cov))
        assert row.mean_coverage_mc_se == pytest.approx(np.sqrt(np.sum(se**2)) / cov.size)
        assert row.min_coverage == cov.min() and row.min_at == cells["n"].values[np.argmin(cov)]
        assert row.min_coverage_mc_se == se[np.argmin(cov)] and row.cells == cov.size
    header = figures.coverage_table(result, over="n").splitlines()[2]
    assert header.startswith("Summary over n (3 values, 10 to 40)")
    with pytest.raises(ValueError, match=r"^`over` must be one of the grid dims"):
        figures.coverage_frame(result, over="q")


def test_a_summary_of_cells_without_coverage_is_nan_and_silent():
    ds = synthetic({"n": 3, "p": 2})
    ds["coverage"][:, 0, :] = np.nan  # no cell of p = 1 has a coverage
    frame = figures.coverage_frame(ds, over="n")  # under -W error: no RuntimeWarning
    empty = frame[frame["p"] == 1]
    assert empty["cells"].tolist() == [0]
    assert (
        empty[["mean_coverage", "mean_coverage_mc_se", "min_coverage", "min_at"]]
        .isna()
        .to_numpy()
        .all()
    )
    assert "| n/a |" in figures.coverage_table(ds, over="n")


# ------------------------------------------------------------------ validate report


def test_validate_report_writes_a_custom_suites_figures_and_table(suite_file, tmp_path, capsys):
    assert main(["validate", "run", str(suite_file), "--out", str(tmp_path), "--quiet"]) == 0
    argv = ["validate", "report", str(tmp_path), "--formats", "png,svg"]
    assert main(argv) == 0
    names = ["coverage_two-factor", "half_width_two-factor"]
    written = capsys.readouterr().out.split()
    for name in names:
        png, svg = (tmp_path / "figures" / f"{name}.{ext}" for ext in ("png", "svg"))
        assert f"{png}" in written and f"{svg}" in written
        assert png.read_bytes().startswith(PNG_MAGIC)
        assert ET.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    summary = (tmp_path / "SUMMARY.md").read_text()
    rows = [line for line in summary.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| method | family | n | p | coverage | mc_se |")
    assert len(rows) == 1 + 3 * 6  # the header, then a row per method and cell
    dataset = xr.open_dataset(tmp_path / "two-factor.nc", engine="h5netcdf").load()
    first = rows[1].split(" | ")
    cell = dataset.sel(ci_method="wilson", n=10, p=0.8)
    assert first[:4] == ["| wilson", "analytic", "10", "0.8"]
    assert first[5] == f"{float(cell['mc_se']):.4f}"


def test_validate_report_x_flag_and_bad_flags_fail_before_writing(suite_file, tmp_path, capsys):
    assert main(["validate", "run", str(suite_file), "--out", str(tmp_path), "--quiet"]) == 0
    capsys.readouterr()
    before = sorted(p.name for p in tmp_path.iterdir())
    for argv, message in [
        (["--x", "q"], "`--x` must be one of the grid dims of suite 'two-factor'"),
        (["--formats", "png,jpg"], "`--formats` must be one of ['pdf', 'png', 'svg']; got 'jpg'"),
    ]:
        assert main(["validate", "report", str(tmp_path), *argv]) == 2
        assert message in capsys.readouterr().err
        assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written
    assert main(["validate", "report", str(tmp_path), "--x", "p"]) == 0
    assert Path(tmp_path / "figures" / "coverage_two-factor.png").exists()
