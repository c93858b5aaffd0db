"""perfci.plotting (style, files, forest plots) and the Bayesian plots drawn with it."""

import dataclasses
import subprocess
import sys
import xml.etree.ElementTree as ET

import matplotlib
import numpy as np
import pytest
import xarray as xr
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.patches import Rectangle

import perfci as pc
from perfci import plotting

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def example_fit():
    texts = pc.load_example()
    return pc.bayes.fit_proportion(
        texts["human"], texts["model"], "recall", groups=texts["person"], sampler="grid", rng=1
    )


def _ticks(ax):
    return [t.get_text() for t in ax.get_yticklabels()]


# ------------------------------------------------------------------ style and files


def test_importing_the_plotting_modules_loads_no_matplotlib():
    code = (
        "import sys, perfci.plotting, perfci.bayes.plots, perfci.figures; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_style_sets_the_palette_and_leaves_the_defaults_alone():
    before = dict(matplotlib.rcParams)
    with plotting.style():
        fig, ax = plt.subplots()
        lines = [ax.plot([0, 1], [i, i])[0] for i in range(3)]
        assert matplotlib.rcParams["svg.fonttype"] == "none"
    assert [line.get_color() for line in lines] == list(plotting.PALETTE[:3])
    assert not ax.spines["top"].get_visible() and not ax.spines["right"].get_visible()
    assert dict(matplotlib.rcParams) == before


def test_save_figure_writes_every_format_whole_and_the_same_bytes_twice(tmp_path):
    with plotting.style():
        fig, ax = plt.subplots(figsize=(2, 1.5))
        ax.plot([0, 1], [0.9, 0.95], label="a")
        ax.set_xlabel("n")
    written = plotting.save_figure(fig, tmp_path / "p-0.5.png", ("png", "svg", "pdf", "svg"))
    # a format's suffix is replaced, any other suffix (".5") kept; duplicates written once
    assert [p.name for p in written] == ["p-0.5.png", "p-0.5.svg", "p-0.5.pdf"]
    assert written[0].read_bytes().startswith(PNG_MAGIC)
    root = ET.parse(written[1]).getroot()
    assert root.tag.endswith("svg")
    assert "n" in [t.text for t in root.iter() if t.tag.endswith("text")]  # text kept as text
    assert written[2].read_bytes().startswith(b"%PDF")
    svg, pdf = written[1].read_bytes(), written[2].read_bytes()
    again = plotting.save_figure(fig, tmp_path / "p-0.5", ("svg", "pdf"), close=True)
    assert [p.read_bytes() for p in again] == [svg, pdf]
    assert not plt.fignum_exists(fig.number)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p-0.5.pdf", "p-0.5.png", "p-0.5.svg"]


@pytest.mark.parametrize("formats", ["jpg", ("png", "eps"), (), 3, [None]])
def test_save_figure_refuses_unknown_formats_naming_them(formats, tmp_path):
    fig, _ = plt.subplots()
    with pytest.raises(ValueError, match=r"^`formats` must"):
        plotting.save_figure(fig, tmp_path / "x", formats)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------- forests


def test_forest_sorts_highest_first_and_keeps_the_order_unsorted():
    rng = np.random.default_rng(5)
    est = rng.uniform(0.5, 0.95, 12)
    labels = [f"p{i}" for i in range(12)]
    ax = plotting.forest(est, est - 0.1, est + 0.05, labels=labels)
    expected = [labels[i] for i in np.argsort(-est)]
    assert _ticks(ax) == expected
    # the tick positions run from the top row (m - 1) down, each at its estimate's row
    (dots,) = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert np.all(np.diff(dots.get_xdata()) <= 0) and list(dots.get_ydata()) == list(
        range(11, -1, -1)
    )
    unsorted = plotting.forest(est, est - 0.1, est + 0.05, labels=labels, sort=False)
    assert _ticks(unsorted) == labels


def test_forest_sorts_undefined_rows_last():
    est = np.array([0.7, np.nan, 0.9])
    ax = plotting.forest(est, est - 0.1, est + 0.05, labels=["a", "b", "c"])
    assert _ticks(ax) == ["c", "a", "b"]


def test_forest_shows_observed_rates_with_area_proportional_to_n_and_the_band():
    y, n = np.array([3, 18, 5, 1]), np.array([4, 20, 10, 2])
    est = np.array([0.7, 0.88, 0.6, 0.65])
    ax = plotting.forest(est, est - 0.1, est + 0.1, observed=(y, n), band=(0.75, 0.7, 0.8))
    order = np.argsort(-est)
    (scatter,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    np.testing.assert_allclose(scatter.get_offsets()[:, 0], (y / n)[order])
    sizes = scatter.get_sizes()
    np.testing.assert_allclose(sizes / sizes.max(), (n / n.max())[order])
    # every row labelled, so each has its y/n beside it, top row first
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["y/n", *(f"{a}/{b}" for a, b in zip(y[order], n[order], strict=True))]
    (band,) = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() > 0]
    assert band.get_x() == pytest.approx(0.7) and band.get_width() == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("rows", "height", "step"), [(10, 2.4, 1), (57, 8.98, 1), (114, 9.0, 2), (500, 9.0, 0)]
)
def test_forest_height_grows_with_rows_to_a_cap_and_labels_thin_out(rows, height, step):
    assert plotting.forest_height(rows) == pytest.approx(height)
    est = np.linspace(0.5, 0.95, rows)
    ax = plotting.forest(est, est - 0.05, est + 0.05)
    assert ax.figure.get_size_inches()[1] == pytest.approx(height)
    ticks = _ticks(ax)
    if step:
        assert ticks == [str(i) for i in range(rows, 0, -step)]  # every step-th from the top
    else:
        assert ticks == [] and ax.get_ylabel() == f"{rows} persons, sorted by estimate"
    assert ax.get_ylim() == pytest.approx((-0.6, rows - 0.4))  # no blank canvas


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"low": [0.1]}, r"^`low` must have one value per row \(2\); got 1\."),
        ({"labels": ["a"]}, r"^`labels` must have one label per row"),
        ({"observed": ([3, 5], [4, 4])}, r"^`observed` must be \(successes, trials\)"),
        ({"observed": ([1, 1], [0, 2])}, r"^`observed` must be \(successes, trials\)"),
        ({"band": (0.5, 0.4)}, r"^`band` must be \(estimate, low, high\)"),
        ({"estimate": []}, r"^`estimate` must hold at least one row"),
        ({"inner": ([0.1, 0.2],)}, r"^`inner` must be a pair"),
    ],
)
def test_forest_refuses_arrays_that_do_not_match(kwargs, match):
    args = {"estimate": [0.5, 0.6], "low": [0.4, 0.5], "high": [0.6, 0.7], **kwargs}
    with pytest.raises(ValueError, match=match):
        plotting.forest(args.pop("estimate"), args.pop("low"), args.pop("high"), **args)


# ------------------------------------------------------------------ Bayesian plots


def test_plot_forest_sorts_persons_by_posterior_median_with_their_data(example_fit):
    ax = pc.bayes.plot_forest(example_fit)
    persons = example_fit.posterior["posterior"]["p"]["person"].to_numpy()
    medians = np.median(example_fit.draws("person"), axis=1)  # the draws' own medians
    order = np.argsort(-medians, kind="stable")
    assert _ticks(ax) == list(persons[order])
    assert ax.figure.get_size_inches()[1] == pytest.approx(1.0 + 0.14 * persons.size)
    (scatter,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    rates = example_fit.successes / example_fit.trials
    np.testing.assert_allclose(scatter.get_offsets()[:, 0], rates[order])
    mu = example_fit.interval("mu", "eti", 0.95)
    (band,) = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() > 0]
    assert (band.get_x(), band.get_x() + band.get_width()) == pytest.approx((mu.low, mu.high))
    outer, inner = [c for c in ax.collections if isinstance(c, LineCollection)]
    ci = example_fit.interval("person", "eti", 0.95)
    ends = np.array([seg[:, 0] for seg in outer.get_segments()])
    np.testing.assert_allclose(ends, np.column_stack([ci.low, ci.high])[order])
    assert inner.get_linewidth()[0] > outer.get_linewidth()[0]  # the 50% intervals
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("mu: median, 95% interval") and "posterior median" in labels


@pytest.mark.parametrize("estimand", ["mu", "population", "sampled_persons"])
def test_plot_posterior_marks_the_posterior_median_and_says_so(example_fit, estimand):
    ax = pc.bayes.plot_posterior(example_fit, estimand, confidence_level=0.9)
    ci = example_fit.interval(estimand, "eti", 0.9)
    if estimand != "mu":  # from draws: the median of the draws, by numpy
        assert ci.estimate == pytest.approx(np.median(example_fit.draws(estimand)))
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts[1:] == [
        f"posterior median {ci.estimate:.3f}",
        f"90% equal-tailed interval [{ci.low:.3f}, {ci.high:.3f}]",
    ]
    (point,) = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert point.get_xdata()[0] == ci.estimate
    (bar,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert bar.get_segments()[0][:, 0] == pytest.approx([ci.low, ci.high])
    curve = ax.get_lines()[0]
    x, density = np.asarray(curve.get_xdata()), np.asarray(curve.get_ydata())
    if estimand == "mu":  # the exact gridded marginal: a density of mass 1
        assert texts[0] == "exact posterior (grid)"
        edges = example_fit.posterior["grid"]["mu_edge"].to_numpy()
        assert np.sum(density * np.diff(edges)) == pytest.approx(1.0)
    else:  # a kernel density over the draws' range and a margin: nearly all the mass
        assert texts[0] == "posterior density"
        assert 0.99 < np.trapezoid(density, x) <= 1.0 + 1e-9
    assert np.all(density >= 0) and ax.get_xlabel() == estimand
    hdi = pc.bayes.plot_posterior(example_fit, estimand, kind="hdi")
    assert "95% highest-density interval" in hdi.get_legend().get_texts()[2].get_text()


def test_plot_posterior_of_a_single_value_is_a_vertical_line(example_fit):
    posterior = example_fit.posterior["posterior"].to_dataset()
    posterior["sampled_persons"] = xr.full_like(posterior["sampled_persons"], 0.875)
    tree = xr.DataTree.from_dict(
        {"posterior": posterior, "grid": example_fit.posterior["grid"].to_dataset()}
    )
    fit = dataclasses.replace(example_fit, posterior=tree)
    ax = pc.bayes.plot_posterior(fit, "sampled_persons")
    assert ax.get_lines()[0].get_xdata()[0] == 0.875
    assert ax.get_legend().get_texts()[0].get_text() == "posterior (one value)"


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda f: pc.bayes.plot_posterior(f, "person"), r"^`estimand` must be one of"),
        (lambda f: pc.bayes.plot_posterior(f, kind="central"), r"^`kind` must be one of"),
        (lambda f: pc.bayes.plot_posterior(f, level=1.5), r"^`level`"),
        (lambda f: pc.bayes.plot_forest(f, band="person"), r"^`band` must be one of"),
        (lambda f: pc.bayes.plot_forest(f, kind="x"), r"^`kind` must be one of"),
        (lambda f: pc.bayes.plot_forest(f, level=0), r"^`level`"),
    ],
)
def test_bayesian_plots_name_bad_arguments(example_fit, call, match):
    with pytest.raises(ValueError, match=match):
        call(example_fit)
