import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import perfci as pc
from perfci import harness
from perfci.cli import main

SUITES = Path(__file__).resolve().parents[1] / "validation" / "suites"

SMALL = """
name = "tiny"
description = "a small test suite"
seed = 7
[population]
kind = "bernoulli"
[grid]
n = [10, 40]
p = [0.6, 0.95]
[scales.smoke]
replications = 300
resamples = 200
[scales.exact]
replications = 1
resamples = 0
exact = true
[[methods]]
name = "wilson"
family = "analytic"
method = "wilson"
[[methods]]
name = "pseudo_percentile_1"
family = "bootstrap"
interval = "percentile"
pseudo_count = 1
[[methods]]
name = "bca"
family = "bootstrap"
interval = "bca"
"""


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(SMALL)
    return harness.load_suite(path)


def test_shipped_suites_load():
    for name in harness.list_suites(SUITES):
        suite = harness.load_suite(SUITES / f"{name}.toml")
        assert suite.cells("smoke")


def test_exact_scale_equals_exact_coverage(tiny, tmp_path):
    ds = harness.run_suite(tiny, "exact", tmp_path)
    for n in [10, 40]:
        for p in [0.6, 0.95]:
            cell = ds.sel(n=n, p=p)
            assert cell.sel(ci_method="wilson")["coverage"] == pc.exact_coverage("wilson", n, p)
            assert cell.sel({"ci_method": "pseudo_percentile_1"})["coverage"] == pc.exact_coverage(
                "pseudo_percentile_1", n, p
            )
            assert np.isnan(cell.sel({"ci_method": "bca"})["coverage"])  # no exact mode
    assert (tmp_path / "tiny.nc").exists()


def test_simulated_coverage_agrees_with_exact_within_monte_carlo_error(tiny, tmp_path):
    sim = harness.run_suite(tiny, "smoke", tmp_path)
    exact = harness.run_suite(tiny, "exact", tmp_path / "exact")
    w = sim.sel({"ci_method": "wilson"})
    ref = exact.sel({"ci_method": "wilson"})["coverage"]
    # the Monte-Carlo SE is the binomial SE of a coverage from 300 replications
    assert np.all(np.abs(w["coverage"] - ref) <= 4 * np.sqrt(ref * (1 - ref) / 300) + 1e-12)
    np.testing.assert_allclose(w["mc_se"], np.sqrt(w["coverage"] * (1 - w["coverage"]) / 300))
    total = w["coverage"] + w["miss_low"] + w["miss_high"]
    np.testing.assert_allclose(total, 1.0)


def test_same_data_for_every_method_and_reproducible(tiny, tmp_path):
    a = harness.run_suite(tiny, "smoke", tmp_path / "a")
    assert tuple(a.data_vars) == harness.RESULT_VARIABLES
    assert a["coverage"].dims == ("n", "p", "ci_method")
    b = harness.run_suite(tiny, "smoke", tmp_path / "b")
    xr.testing.assert_identical(a, b)


# Dask's teardown can leave a socket for the garbage collector; that is not our result.
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_one_and_two_workers_give_identical_results(tiny, tmp_path):
    one = harness.run_suite(tiny, "smoke", tmp_path / "one", workers=1)
    two = harness.run_suite(tiny, "smoke", tmp_path / "two", workers=2)
    xr.testing.assert_identical(one, two)


def test_resume_recomputes_only_missing_cells(tiny, tmp_path):
    full = harness.run_suite(tiny, "smoke", tmp_path)
    cells = sorted((tmp_path / "tiny.cells").glob("*.npy"))
    kept = {p: p.stat().st_mtime_ns for p in cells[1:]}
    cells[0].unlink()  # as if the run had been killed before this cell finished
    resumed = harness.run_suite(tiny, "smoke", tmp_path, resume=True)
    xr.testing.assert_identical(full, resumed)
    assert all(p.stat().st_mtime_ns == t for p, t in kept.items())


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (('method = "wilson"', 'method = "wilsonn"'), r"`methods\[0\].method` must be one of"),
        (
            ("p = [0.6, 0.95]", "p = [0.6, 1.5]"),
            r"`grid.p` values must each be a number strictly between 0 and 1; got 1.5",
        ),
        (("seed = 7", ""), r"`seed` is missing"),
        (
            (
                'family = "analytic"',
                'family = "magic"',
            ),
            r"`methods\[0\].family` must be one of",
        ),
        (('kind = "bernoulli"', 'kind = "poisson"'), r"`population.kind` must be one of"),
        (("[scales.smoke]", "[scales.smoke]\nreplicates = 3"), r"unknown keys \['replicates'\]"),
        (
            ('family = "analytic"\nmethod = "wilson"', 'family = "clustered"\nmethod = "wilson"'),
            r"a bernoulli population takes families \['analytic', 'bootstrap'\]",
        ),
        (
            ('interval = "bca"', 'interval = "bca"\nscheme = "cluster"'),
            r"scheme` must be one of \['iid'\] for a bernoulli population",
        ),
    ],
)
def test_invalid_suites_fail_before_any_work(tmp_path, edit, match):
    path = tmp_path / "bad.toml"
    path.write_text(SMALL.replace(*edit, 1))
    with pytest.raises(ValueError, match=match):
        harness.load_suite(path)


# Suites that ran before and produced garbage or wrote outside the output folder; each is
# now refused at load, the message naming the file and the key, in these exact words.
GARBAGE = [
    (
        "SMALL",
        ("p = [0.6, 0.95]", "p = [0.6, 0.6]"),
        "`grid.p` must not repeat a value (each is one cell); 0.6 is repeated.",
    ),
    (
        "SMALL",
        ("n = [10, 40]", "n = [10.7, 20.2]"),
        "`grid.n` values must each be an integer from 1 to 1000000000000000; got 10.7.",
    ),
    (
        "SMALL",
        ("n = [10, 40]", "n = { start = 10, stop = 20, step = 2.5 }"),
        "`grid.n.step` must be an integer; got 2.5.",
    ),
    (
        "SMALL",
        ("n = [10, 40]", "n = { start = 10, stop = 5, step = 1 }"),
        "`grid.n` must have step > 0 and stop >= start; got 10, 5, 1.",
    ),
    (
        "SMALL",
        ("replications = 300", "replications = 0"),
        "`scales.smoke.replications` must be an integer at least 1; got 0.",
    ),
    (
        "SMALL",
        ("resamples = 200", "resamples = 0"),
        "`scales.smoke.resamples` must be an integer at least 40: the scale simulates "
        "bootstrap intervals (pseudo_percentile_1), each of whose tails needs a resample; "
        "got 0.",
    ),
    (
        "SMALL",
        ("resamples = 200", "resamples = 39"),
        "`scales.smoke.resamples` must be an integer at least 40: the scale simulates "
        "bootstrap intervals (pseudo_percentile_1), each of whose tails needs a resample; "
        "got 39.",
    ),
    (
        "SMALL",
        ("resamples = 200", "resamples = 2.5"),
        "`scales.smoke.resamples` must be an integer from 0 to 10000000; got 2.5.",
    ),
    ("SMALL", ("seed = 7", "seed = 1.5"), "`seed` must be a non-negative integer; got 1.5."),
    ("SMALL", ("seed = 7", "seed = -1"), "`seed` must be a non-negative integer; got -1."),
    (
        "SMALL",
        ("seed = 7", "seed = 7\nreplications = 9"),
        "the top level has unknown keys ['replications']; known: ['confidence_level', "
        "'description', 'grid', 'methods', 'name', 'population', 'scales', 'seed'].",
    ),
    (
        "SMALL",
        ('kind = "bernoulli"', 'kind = "bernoulli"\nprevalence = 0.1'),
        "`population` has unknown keys ['prevalence']; known: ['kind'].",
    ),
    (
        "SMALL",
        ("p = [0.6, 0.95]", "p = [0.6, 0.95]\nicc = [0.1]"),
        "`grid` has unknown dims ['icc']; this population's dims are ['n', 'p'].",
    ),
    (
        "SMALL",
        ("p = [0.6, 0.95]", "q = [0.6, 0.95]"),
        "`grid` has unknown dims ['q']; this population's dims are ['n', 'p'].",
    ),
    (
        "SMALL",
        ("[scales.smoke]", "[scales.smoke]\ngrid = { m = [1] }"),
        "`scales.smoke.grid` has unknown dims ['m']; this population's dims are ['n', 'p'].",
    ),
    (
        "SMALL",
        ("exact = true", "exact = 1"),
        "`scales.exact.exact` must be true or false; got 1.",
    ),
    (
        "SMALL",
        ('name = "wilson"', "name = 3"),
        "`methods[0].name` must be a non-empty string; got 3.",
    ),
    (
        "SMALL",
        ('name = "tiny"', 'name = "../x"'),
        "`name` must be a name of letters, digits, '-' and '_' that starts with a letter or "
        "digit (at most 100 characters, no path: it names the result file); got '../x'.",
    ),
    (
        "SMALL",
        ('name = "tiny"', 'name = "/tmp/x"'),
        "`name` must be a name of letters, digits, '-' and '_' that starts with a letter or "
        "digit (at most 100 characters, no path: it names the result file); got '/tmp/x'.",
    ),
    (
        "SMALL",
        ('name = "tiny"', "name = 4"),
        "`name` must be a name of letters, digits, '-' and '_' that starts with a letter or "
        "digit (at most 100 characters, no path: it names the result file); got 4.",
    ),
    (
        "NESTED",
        ("persons = [6]", "persons = [6, 300]"),
        "`grid.persons` must not exceed `population.persons` (200); got 300.",
    ),
    (
        "NESTED",
        ("persons = [6]", "persons = [1]"),
        "`grid.persons` values must each be an integer at least 2; got 1.",
    ),
    (
        "NESTED",
        ("texts_per_person = 60", "texts_per_person = 60.5"),
        "`population.texts_per_person` must be an integer at least 1; got 60.5.",
    ),
    (
        "NESTED",
        ("sd = 0.1", "sd = 0.1\nsrs_texts = 100000"),
        "`population.srs_texts` must not exceed the population's 12000 texts; got 100000.",
    ),
    (
        "NESTED",
        ('sampling = ["small", "srs"]', 'sampling = ["small", "tiny"]'),
        "`grid.sampling` values must each be one of ['moderate', 'small', 'srs']; got 'tiny'.",
    ),
    (
        "CONFUSION",
        ("prevalence = 0.2", "prevalence = 0.95"),
        "`grid`: no population has prevalence 0.95, precision 0.9 and recall 0.95: the "
        "classifier's positives would exceed all texts.",
    ),
]


@pytest.mark.parametrize(("base", "edit", "message"), GARBAGE)
def test_suites_that_made_garbage_are_refused_naming_file_and_key(tmp_path, base, edit, message):
    text = {"SMALL": SMALL, "NESTED": NESTED, "CONFUSION": CONFUSION}[base]
    assert edit[0] in text
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(*edit, 1))
    with pytest.raises(ValueError) as err:
        harness.load_suite(path)
    assert str(err.value) == f"suite bad.toml: {message}"
    assert not list(tmp_path.glob("*.nc")) and not list(tmp_path.glob("*.cells"))


NESTED = """
name = "tiny-nested"
seed = 11
[population]
kind = "nested_finite"
persons = 200
texts_per_person = 60
mean = 0.9
sd = 0.1
seed = 3
[grid]
sampling = ["small", "srs"]
persons = [6]
[scales.smoke]
replications = 40
resamples = 150
[[methods]]
name = "wilson"
family = "analytic"
method = "wilson"
[[methods]]
name = "ac_neff_df"
family = "clustered"
method = "agresti_coull"
design = "icc"
df_adjust = "dean_pagano"
[[methods]]
name = "iid"
family = "bootstrap"
scheme = "iid"
interval = "percentile"
pseudo_count = 1
[[methods]]
name = "cluster"
family = "bootstrap"
scheme = "cluster"
interval = "percentile"
pseudo_count = 1
[[methods]]
name = "hierarchical"
family = "bootstrap"
scheme = "hierarchical"
interval = "percentile"
pseudo_count = 0
"""

CONFUSION = """
name = "tiny-f1"
seed = 12
[population]
kind = "confusion"
prevalence = 0.2
[grid]
n = [30]
precision = [0.9]
recall = [0.95]
[scales.smoke]
replications = 50
resamples = 120
[[methods]]
name = "percentile"
family = "bootstrap"
interval = "percentile"
pseudo_count = 0
[[methods]]
name = "pseudo_percentile_1"
family = "bootstrap"
interval = "percentile"
pseudo_count = 1
"""


def _public_intervals(suite, cell, data, method, rng):
    """The interval ends a user gets from the public functions for these data sets."""
    import warnings

    o = method.options
    level = suite.confidence_level
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method.family == "analytic":
            x, n = data
            ci = pc.proportion_ci(x, n, method=o["method"], confidence_level=level)
        elif method.family == "clustered":
            y, n = data
            df = None if o["df_adjust"] == "none" else o["df_adjust"]
            with np.errstate(all="ignore"):
                ci = pc.clustered_proportion_ci(
                    y,
                    n,
                    method=o["method"],
                    design=o["design"],
                    df_adjust=df,
                    confidence_level=level,
                )
        else:
            counts, metric = data
            ci = pc.bootstrap_ci(
                counts,
                metric,
                scheme=o.get("scheme", "iid"),
                interval=o["interval"],
                pseudo_count=o["pseudo_count"],
                n_resamples=suite.scales["smoke"].resamples,
                confidence_level=level,
                rng=rng,
                nested=counts.ndim == 3,
            )
    return np.asarray(ci.low), np.asarray(ci.high)


def _expected_scores(suite, cell):
    seed = harness.execution._cell_seed(suite, "smoke", cell)
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    reps = suite.scales["smoke"].replications
    kind = suite.population["kind"]
    if kind == "bernoulli":
        n, truth = int(cell["n"]), float(cell["p"])
        x = data_rng.binomial(n, truth, size=reps)
        data = {"analytic": (x, n), "bootstrap": (np.stack([x, n - x], -1), "proportion")}
    elif kind == "confusion":
        p, r = float(cell["precision"]), float(cell["recall"])
        truth = 2 * p * r / (p + r)
        probs = harness.confusion_probabilities(suite.population["prevalence"], p, r)
        data = {"bootstrap": (data_rng.multinomial(int(cell["n"]), probs, size=reps), "f1")}
    else:
        _, truth = harness.populations.population_of(suite, cell)
        y, n = harness.populations.nested_sample(suite, cell, reps, data_rng)
        data = {
            "analytic": (y.sum(1), n.sum(1)),
            "clustered": (y, n),
            "bootstrap": (np.stack([y, n - y], -1), "proportion"),
        }
    rows = []
    for method, rng in zip(suite.methods, method_rngs, strict=True):
        low, high = _public_intervals(suite, cell, data[method.family], method, rng)
        valid = np.isfinite(low) & np.isfinite(high)
        low, high = low[valid], high[valid]
        rows.append(
            [
                np.sum((low <= truth) & (truth <= high)),
                np.sum(high < truth),
                np.sum(low > truth),
                np.sum(high - low) / 2,
                low.size,
                0,
            ]
        )
    return np.array(rows, dtype=float)


@pytest.mark.parametrize("text", [SMALL, NESTED, CONFUSION], ids=["bernoulli", "nested", "f1"])
def test_a_harness_cell_is_the_public_functions_on_the_same_data(text, tmp_path):
    path = tmp_path / "suite.toml"
    path.write_text(text)
    suite = harness.load_suite(path)
    for cell in suite.cells("smoke"):
        np.testing.assert_array_equal(
            harness.compute_cell(suite, "smoke", cell), _expected_scores(suite, cell)
        )


def test_nested_cell_survives_persons_without_texts(tmp_path):
    # An SRS sample leaves most persons of the population without texts: they are padding,
    # and the cluster and hierarchical bootstraps must ignore them (not crash, not shift).
    path = tmp_path / "suite.toml"
    path.write_text(NESTED)
    suite = harness.load_suite(path)
    scores = harness.compute_cell(suite, "smoke", {"sampling": "srs", "persons": 6})
    assert np.all(scores[:, 4] == 40)  # every interval could be formed


def test_cli_validate(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "validation" / "suites").mkdir(parents=True)
    (tmp_path / "validation" / "suites" / "tiny.toml").write_text(SMALL)
    assert main(["validate", "list"]) == 0
    assert "tiny: a small test suite" in capsys.readouterr().out
    assert main(["validate", "run", "tiny", "--out", "res", "--quiet"]) == 0
    assert (tmp_path / "res" / "tiny.nc").exists()
    assert main(["validate", "report", "res", "--figures", "figs"]) == 0
    assert (tmp_path / "res" / "SUMMARY.md").read_text().startswith("# Coverage results")
    capsys.readouterr()
    assert main(["validate", "run", "nope", "--quiet"]) == 2
    assert "suite 'nope' not found" in capsys.readouterr().err
    shutil.rmtree(tmp_path / "res")


def test_nested_population_matches_the_paper():
    successes, truth = harness.nested_population(2000, 60, 0.9, 0.1, 2000)
    rates = successes / 60
    assert successes.shape == (2000,)
    assert truth == successes.sum() / 120_000
    # person-level mean 0.9 and SD 0.1 (plus binomial noise of 60 texts), to MC precision
    assert abs(rates.mean() - 0.9) < 4 * 0.1 / np.sqrt(2000)
    assert abs(np.sqrt(rates.var() - np.mean(rates * (1 - rates)) / 60) - 0.1) < 0.01


@pytest.mark.slow  # the whole paper-nested suite at its smoke scale
def test_paper_nested_smoke_orders_methods_as_the_paper(tmp_path):
    suite = harness.load_suite(SUITES / "paper-nested.toml")
    cell = {"sampling": "moderate", "persons": 20}
    scores = harness.compute_cell(suite, "smoke", cell)
    coverage = dict(zip([m.name for m in suite.methods], scores[:, 0] / scores[:, 4], strict=True))
    # ~30 texts per person: ignoring the nesting covers far below 0.95, adjusting does not
    assert coverage["agresti_coull"] < 0.85
    assert coverage["agresti_coull_neff_df"] > coverage["agresti_coull"] + 0.1
    assert coverage["hierarchical_percentile"] > coverage["iid_percentile"] + 0.1
    names = [m.name for m in suite.methods]
    assert np.all(scores[:, 4] == [20 if name == "bayes_nutpie_mu" else 100 for name in names])
    # MCMC fits on the documented subset, flagged ones counted
    assert 0 <= scores[names.index("bayes_nutpie_mu"), 5] <= 20


def test_paper_f1_population_and_smoke_cell():
    probs = harness.confusion_probabilities(0.1, 0.8, 0.9)
    tp, fp, fn, tn = probs
    assert probs.sum() == pytest.approx(1.0)
    assert tp / (tp + fp) == pytest.approx(0.8) and tp / (tp + fn) == pytest.approx(0.9)
    with pytest.raises(ValueError, match="no population has prevalence"):
        harness.confusion_probabilities(0.6, 0.5, 0.9)
    suite = harness.load_suite(SUITES / "paper-f1.toml")
    scores = harness.compute_cell(suite, "smoke", {"n": 300, "precision": 0.6, "recall": 0.6})
    coverage = scores[:, 0] / scores[:, 4]
    # at n = 300 and moderate precision and recall both bootstraps cover near 0.95
    assert np.all(np.abs(coverage - 0.95) < 4 * np.sqrt(0.95 * 0.05 / 100))


def test_figure7_suite_reproduces_the_paper(tmp_path):
    ds = harness.run_suite(harness.load_suite(SUITES / "figure7.toml"), "smoke", tmp_path)
    cell = ds.sel(n=400, icc=0.1).sel({"ci_method": "agresti_coull_neff_df"})["mean_half_width"]
    assert float(cell.sel(texts_per_person=10)) == pytest.approx(0.043, abs=5e-4)
    assert float(cell.sel(texts_per_person=50)) == pytest.approx(0.093, abs=5e-4)


def test_resume_refuses_cells_of_a_changed_suite(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(SMALL)
    harness.run_suite(harness.load_suite(path), "smoke", tmp_path / "out")
    path.write_text(SMALL.replace("replications = 300", "replications = 400"))
    with pytest.raises(ValueError, match="another version of suite 'tiny'"):
        harness.run_suite(harness.load_suite(path), "smoke", tmp_path / "out", resume=True)
    fresh = harness.run_suite(harness.load_suite(path), "smoke", tmp_path / "out")
    assert np.all(fresh["n_valid"].sel({"ci_method": "wilson"}) == 400)


@pytest.mark.parametrize("kind", ["foreign", "garbage"])
def test_report_refuses_a_netcdf_file_it_did_not_write(kind, tmp_path, capsys):
    path = tmp_path / "x.nc"
    if kind == "foreign":
        xr.Dataset({"a": ("x", np.arange(3))}).to_netcdf(path, engine="h5netcdf")
        match = "is not a result of `perfci validate run`: it lacks suite"
    else:
        path.write_text("not a netCDF file")
        match = "is not a netCDF file perfci can read"
    assert main(["validate", "report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.nc"]  # nothing written


# ------------------------------------------------------------------- repeated runs

RUNS = """
name = "tiny-runs"
seed = 13
[population]
kind = "runs_nested"
metric = "recall"
runs = 4
run_sd = 0.5
[grid]
persons = [8]
texts_per_person = [1.0, 5.0]
[scales.smoke]
replications = 25
resamples = 100
[[methods]]
name = "recommended"
family = "runs"
[[methods]]
name = "bootstrap"
family = "runs"
method = "bootstrap"
[[methods]]
name = "these_runs"
family = "runs"
estimand = "these_runs"
[[methods]]
name = "majority"
family = "runs"
estimand = "majority"
[[methods]]
name = "stacked"
family = "runs"
method = "stacked"
[[methods]]
name = "single_run"
family = "runs"
method = "single_run"
estimand = "these_runs"
[[methods]]
name = "recommended_pooled"
family = "runs"
counts = "pooled"
[[methods]]
name = "these_runs_pooled"
family = "runs"
estimand = "these_runs"
counts = "pooled"
[[methods]]
name = "majority_pooled"
family = "runs"
estimand = "majority"
counts = "pooled"
[[methods]]
name = "stacked_pooled"
family = "runs"
method = "stacked"
counts = "pooled"
[[methods]]
name = "single_run_pooled"
family = "runs"
method = "single_run"
counts = "pooled"
"""

# Parameters of a runs_nested population for the truth checks (sizes as in `nested`).
_RUNS_PARAMS = {
    "texts_per_person": 20.0,
    "size_cv": 0.5,
    "min_texts": 1,
    "prevalence": 0.3,
    "icc_prevalence": 0.1,
    "runs": 4,
    "recall": 0.85,
    "specificity": 0.9,
    "text_sd": 1.0,
    "person_sd": 0.5,
    "run_sd": 0.5,
}


def _runs_interval(y, said, person, method, rng):
    """The interval of one data set's texts by the public label-level functions."""
    from perfci.runs import runs_ci

    o = method.options
    groups = person if o["counts"] == "per_person" else None
    runs = said.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined metrics and majority ties are expected
        try:
            if o["method"] == "stacked":
                ci = pc.metric_ci(
                    np.tile(y, runs),
                    said.T.ravel().astype(int),
                    "recall",
                    groups=None if groups is None else np.tile(groups, runs),
                    positive=1,
                )
            elif o["method"] == "single_run":
                ci = pc.metric_ci(y, said[:, 0].astype(int), "recall", groups=groups, positive=1)
            else:
                resamples = {"n_resamples": 100, "rng": rng} if o["method"] == "bootstrap" else {}
                ci = runs_ci(
                    y,
                    said.astype(int),
                    "recall",
                    groups=groups,
                    estimand=o["estimand"],
                    method=o["method"],
                    positive=1,
                    **resamples,
                )
        except ValueError:  # fewer than 2 persons, or an undefined metric: no interval
            return np.nan, np.nan
    return ci.low, ci.high


def test_a_runs_cell_is_the_public_functions_on_the_same_texts(tmp_path):
    # every method of a runs_nested cell, from the texts' labels one data set at a time
    # (runs_ci, metric_ci with the stacked runs or the first run), scored against the
    # truth of its own estimand: what the batched harness computes
    from perfci.harness.populations import draw_runs, person_parameters, runs_truth

    path = tmp_path / "runs.toml"
    path.write_text(RUNS)
    suite = harness.load_suite(path)
    for cell in suite.cells("smoke"):
        seed = harness.execution._cell_seed(suite, "smoke", cell)
        data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
        params = person_parameters(suite, cell)
        reps, m = suite.scales["smoke"].replications, int(cell["persons"])
        sample = draw_runs(params, (reps, m), data_rng)
        rows = []
        for method, rng in zip(suite.methods, method_rngs, strict=True):
            truth = runs_truth(params, method.options["estimand"], sample.run_effects)
            streams = pc.batch_generators(rng, reps)  # data set k of a batch: the k-th
            ends = np.array(
                [
                    _runs_interval(
                        sample.truth[sample.owner // m == k].astype(int),
                        sample.said[sample.owner // m == k],
                        sample.owner[sample.owner // m == k] % m,
                        method,
                        streams[k],
                    )
                    for k in range(reps)
                ]
            )
            rows.append(harness.kernels.score(ends[:, 0], ends[:, 1], truth))
        scores = harness.compute_cell(suite, "smoke", cell)
        np.testing.assert_allclose(scores, np.array(rows), rtol=1e-9, atol=1e-12)
        assert np.all(scores[:, 4] > 0)  # every method formed intervals
        if cell["texts_per_person"] == 1.0:
            # 8 texts: some data sets have no positive (no recall) and no interval, in
            # the harness as in the public functions
            assert np.all(scores[:, 4] < reps)


def test_runs_patterns_hold_every_text_once():
    from perfci.harness.populations import draw_runs

    sample = draw_runs({**_RUNS_PARAMS, "runs": 3}, (6, 5), np.random.default_rng(4))
    cells, multiplicity = sample.patterns()
    # the units of a data set times their multiplicities are its texts in every run
    np.testing.assert_array_equal(
        np.einsum("dw,dwrc->drc", multiplicity, cells), sample.person_cells().sum(1)
    )
    texts = np.bincount(sample.owner // 5, minlength=6)
    np.testing.assert_array_equal(multiplicity.sum(1), texts)
    for k in range(6):  # distinct patterns, and padding only at the end
        used = multiplicity[k] > 0
        assert used[: used.sum()].all() and not cells[k, ~used].any()
        assert np.unique(cells[k, used].reshape(used.sum(), -1), axis=0).shape[0] == used.sum()


def test_runs_truths_equal_independent_quadrature_and_enumeration():
    # reference: scipy.integrate.quad over the run effect b (new_run), and over the
    # text's combined effect u ~ N(0, s2) of the sum over all 2^R outcomes of the runs
    # (majority; R = 4, so ties count negative): neither uses Gauss-Hermite or the
    # recursion over the runs
    import itertools

    from scipy import integrate, stats

    from perfci.harness.populations import majority_cells, run_cells, runs_truth

    params = {**_RUNS_PARAMS, "run_sd": 0.3, "metric": "f1"}
    s = np.sqrt(1 + 1.0**2 + 0.5**2)
    alpha_1, alpha_0 = stats.norm.ppf(0.85) * s, -stats.norm.ppf(0.9) * s

    def f1(b):
        recall, false_positive = (
            stats.norm.cdf((alpha_1 + b) / s),
            stats.norm.cdf((alpha_0 + b) / s),
        )
        tp, fp, fn = 0.3 * recall, 0.7 * false_positive, 0.3 * (1 - recall)
        return 2 * tp / (2 * tp + fp + fn)

    reference, _ = integrate.quad(
        lambda b: f1(b) * stats.norm.pdf(b, 0, 0.3), -np.inf, np.inf, epsabs=1e-13
    )
    assert abs(runs_truth(params, "new_run", None) - reference) < 1e-10
    # a run with b = 0 has the given recall and specificity
    tp, fp, fn, tn = run_cells(params, 0.0)
    assert abs(tp / (tp + fn) - 0.85) < 1e-12 and abs(tn / (tn + fp) - 0.9) < 1e-12

    def vote(alpha, b):
        def integrand(u):
            p = stats.norm.cdf(alpha + u + b)
            total = 0.0
            for outcome in itertools.product([0, 1], repeat=b.size):
                if 2 * sum(outcome) > b.size:
                    total += np.prod(np.where(outcome, p, 1 - p))
            return total * stats.norm.pdf(u, 0, np.sqrt(1.25))

        return integrate.quad(integrand, -np.inf, np.inf, epsabs=1e-13)[0]

    effects = np.array([[0.3, -0.2, 0.1, 0.5], [-0.4, 0.0, 0.2, -0.1]])
    got = majority_cells(params, effects)
    for row, cells in zip(effects, got, strict=True):
        p1, p0 = vote(alpha_1, row), vote(alpha_0, row)
        expected = [0.3 * p1, 0.7 * p0, 0.3 * (1 - p1), 0.7 * (1 - p0)]
        np.testing.assert_allclose(cells, expected, rtol=0, atol=1e-10)
    these = runs_truth(params, "these_runs", effects)
    np.testing.assert_allclose(
        these, [np.mean([f1(b) for b in row]) for row in effects], rtol=1e-12
    )


@pytest.mark.parametrize("metric", ["recall", "precision", "f1", "kappa"])
def test_runs_truths_agree_with_a_large_simulation(metric):
    # 200 data sets of 250 persons with about 20 texts (a million texts, 4 runs each,
    # run_sd 0.5) from the harness's simulator: each data set's metric of its pooled
    # cells estimates its own truth up to the texts' noise (O(1/n) bias, far below the
    # Monte-Carlo SE). Each check is 3.5 Monte-Carlo SE of the mean difference.
    from perfci.harness.populations import draw_runs, runs_truth
    from perfci.metrics import metric_values

    params = {**_RUNS_PARAMS, "metric": metric}
    sample = draw_runs(params, (200, 250), np.random.default_rng(1))
    per_run = metric_values(sample.person_cells().sum(1).astype(float), metric)  # (200, R)
    majority = metric_values(sample.majority_cells().sum(1).astype(float), metric)
    observed = {"new_run": per_run.mean(-1), "these_runs": per_run.mean(-1)}
    observed["majority"] = majority
    for estimand, values in observed.items():
        difference = values - runs_truth(params, estimand, sample.run_effects)
        se = difference.std(ddof=1) / np.sqrt(difference.size)
        assert abs(difference.mean()) < 3.5 * se, (estimand, difference.mean(), se)
        if estimand != "new_run":
            # the truth follows the data set's own runs: what is left is the texts' noise
            assert difference.std() < 0.6 * values.std(), estimand


def test_a_majority_runs_method_other_than_recommended_is_refused(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(
        RUNS.replace('estimand = "majority"', 'estimand = "majority"\nmethod = "bootstrap"', 1)
    )
    with pytest.raises(ValueError) as err:
        harness.load_suite(path)
    assert str(err.value) == (
        "suite bad.toml: `methods[3].method` must be 'recommended' for estimand 'majority' "
        "(the majority vote is one classifier, with the recommended interval of one); got "
        "'bootstrap'."
    )


# --------------------------------------------------------------- several annotators

ANNOTATORS = """
name = "tiny-annotators"
seed = 14
[population]
kind = "annotators_nested"
metric = "recall"
annotators = 3
annotator_sd = 0.5
coded = 0.6
[grid]
persons = [8]
texts_per_person = [1.0, 5.0]
[scales.smoke]
replications = 25
resamples = 100
[[methods]]
name = "recommended"
family = "annotators"
[[methods]]
name = "bootstrap"
family = "annotators"
method = "bootstrap"
[[methods]]
name = "these_annotators"
family = "annotators"
estimand = "these_annotators"
[[methods]]
name = "majority"
family = "annotators"
estimand = "majority"
[[methods]]
name = "stacked"
family = "annotators"
method = "stacked"
[[methods]]
name = "single"
family = "annotators"
method = "single"
estimand = "these_annotators"
[[methods]]
name = "recommended_pooled"
family = "annotators"
counts = "pooled"
[[methods]]
name = "these_annotators_pooled"
family = "annotators"
estimand = "these_annotators"
counts = "pooled"
[[methods]]
name = "majority_pooled"
family = "annotators"
estimand = "majority"
counts = "pooled"
[[methods]]
name = "stacked_pooled"
family = "annotators"
method = "stacked"
counts = "pooled"
[[methods]]
name = "single_pooled"
family = "annotators"
method = "single"
counts = "pooled"
"""

# Parameters of an annotators_nested population for the truth checks (sizes as in
# `nested`); 4 annotators coding 60% of the texts each: ties and missing codes.
_ANNOTATORS_PARAMS = {
    "texts_per_person": 20.0,
    "size_cv": 0.5,
    "min_texts": 1,
    "prevalence": 0.3,
    "icc_prevalence": 0.1,
    "annotators": 4,
    "recall": 0.85,
    "specificity": 0.9,
    "annotator_accuracy": 0.9,
    "text_sd": 1.0,
    "person_sd": 0.5,
    "annotator_sd": 0.5,
    "coded": 0.6,
}


def _annotators_interval(codes, coded, said, person, method, rng):
    """The interval of one data set's texts by the public label-level functions."""
    o = method.options
    groups = person if o["counts"] == "per_person" else None
    pred = said.astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined metrics and majority ties are expected
        try:
            if o["method"] == "stacked":
                text, annotator = np.nonzero(coded)  # every code a text of its own
                ci = pc.metric_ci(
                    codes[text, annotator].astype(int),
                    pred[text],
                    "recall",
                    groups=None if groups is None else groups[text],
                    positive=1,
                )
            elif o["method"] == "single":
                first = coded[:, 0]
                ci = pc.metric_ci(
                    codes[first, 0].astype(int),
                    pred[first],
                    "recall",
                    groups=None if groups is None else groups[first],
                    positive=1,
                )
            else:
                resamples = {"n_resamples": 100, "rng": rng} if o["method"] == "bootstrap" else {}
                ci = pc.annotator_ci(
                    np.where(coded, codes.astype(int), None),
                    pred,
                    "recall",
                    groups=groups,
                    estimand=o["estimand"],
                    method=o["method"],
                    positive=1,
                    **resamples,
                )
        except ValueError:  # fewer than 2 persons, or no text: no interval
            return np.nan, np.nan
    return ci.low, ci.high


def test_an_annotators_cell_is_the_public_functions_on_the_same_texts(tmp_path):
    # every method of an annotators_nested cell, from the texts' codes and labels one
    # data set at a time (annotator_ci, metric_ci with the stacked codes or the first
    # annotator's), scored against the truth of its own estimand: what the batched
    # harness computes (the bootstrap draw for draw)
    from perfci.harness.populations import annotators_truth, draw_annotators, person_parameters

    path = tmp_path / "annotators.toml"
    path.write_text(ANNOTATORS)
    suite = harness.load_suite(path)
    for cell in suite.cells("smoke"):
        seed = harness.execution._cell_seed(suite, "smoke", cell)
        data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
        params = person_parameters(suite, cell)
        reps, m = suite.scales["smoke"].replications, int(cell["persons"])
        sample = draw_annotators(params, (reps, m), data_rng)
        rows = []
        for method, rng in zip(suite.methods, method_rngs, strict=True):
            truth = annotators_truth(params, method.options["estimand"], sample.annotator_effects)
            streams = pc.batch_generators(rng, reps)  # data set k of a batch: the k-th
            ends = []
            for k in range(reps):
                mine = sample.owner // m == k
                ends.append(
                    _annotators_interval(
                        sample.codes[mine],
                        sample.coded[mine],
                        sample.said[mine],
                        sample.owner[mine] % m,
                        method,
                        streams[k],
                    )
                )
            ends = np.array(ends)
            rows.append(harness.kernels.score(ends[:, 0], ends[:, 1], truth))
        scores = harness.compute_cell(suite, "smoke", cell)
        np.testing.assert_allclose(scores, np.array(rows), rtol=1e-9, atol=1e-12)
        assert np.all(scores[:, 4] > 0)  # every method formed intervals
        if cell["texts_per_person"] == 1.0:
            # 8 texts: some data sets have no positive against an annotator (no recall)
            # and no crossed interval, in the harness as in the public functions
            crossed = [
                i
                for i, m in enumerate(suite.methods)
                if m.options["method"] in ("recommended", "bootstrap")
                and m.options["estimand"] != "majority"
            ]
            assert np.all(scores[crossed, 4] < reps)


def test_annotators_patterns_hold_every_code_once():
    from perfci.harness.populations import draw_annotators

    sample = draw_annotators(_ANNOTATORS_PARAMS, (6, 5), np.random.default_rng(4))
    cells, multiplicity = sample.patterns()
    # the units of a data set times their multiplicities are its codes against each
    # annotator, missing codes included
    np.testing.assert_array_equal(
        np.einsum("dw,dwac->dac", multiplicity, cells), sample.person_cells().sum(1)
    )
    texts = np.bincount(sample.owner // 5, minlength=6)
    np.testing.assert_array_equal(multiplicity.sum(1), texts)
    for k in range(6):  # distinct patterns, each with a code, and padding only at the end
        used = multiplicity[k] > 0
        assert used[: used.sum()].all() and not cells[k, ~used].any()
        assert cells[k, used].sum((-2, -1)).min() >= 1
        assert np.unique(cells[k, used].reshape(used.sum(), -1), axis=0).shape[0] == used.sum()


def test_every_text_keeps_a_code_and_the_codes_are_otherwise_independent():
    # the coding patterns of 3 annotators (each codes with probability 0.6) against
    # their exact distribution given at least one code, c^|S| (1 - c)^(3 - |S|) /
    # (1 - 0.4^3), each of the 7 patterns within 4 binomial standard errors
    import itertools

    from perfci.harness.populations import draw_annotators

    params = {**_ANNOTATORS_PARAMS, "annotators": 3, "texts_per_person": 10.0}
    coded = draw_annotators(params, (20, 1000), np.random.default_rng(8)).coded
    assert coded.any(1).all()
    code = coded @ np.array([4, 2, 1])
    share = np.bincount(code, minlength=8) / code.size
    for bits in itertools.product([0, 1], repeat=3):
        k = sum(bits)
        if k == 0:
            assert share[0] == 0
            continue
        p = 0.6**k * 0.4 ** (3 - k) / (1 - 0.4**3)
        got = share[bits[0] * 4 + bits[1] * 2 + bits[2]]
        assert abs(got - p) < 4 * np.sqrt(p * (1 - p) / code.size), (bits, got, p)


def test_annotators_truths_equal_independent_quadrature_and_enumeration():
    # reference: scipy.integrate.quad over the annotator's shift b (new_annotator), and
    # over the text's combined effect u ~ N(0, s2) of the sum over all 3^A outcomes of
    # the annotators (not coded, coded negative, coded positive), ties and texts without
    # a code left out (majority); neither uses Gauss-Hermite or the recursion
    import itertools

    from scipy import integrate, stats

    from perfci.harness.populations import (
        annotator_cells,
        annotator_majority_cells,
        annotators_truth,
    )

    params = {**_ANNOTATORS_PARAMS, "annotator_sd": 0.3, "metric": "f1"}
    s = np.sqrt(1 + 1.0**2 + 0.5**2)
    alpha_1, alpha_0 = stats.norm.ppf(0.9) * s, -stats.norm.ppf(0.9) * s
    pi, recall, false_positive = 0.3, 0.85, 0.1

    def cells_of(positive_1, positive_0, negative_1, negative_0):
        # [tp, fp, fn, tn] against a reference positive (negative) with these
        # probabilities given the true class 1 and 0, the classifier independent of it
        return np.array(
            [
                pi * recall * positive_1 + (1 - pi) * false_positive * positive_0,
                pi * recall * negative_1 + (1 - pi) * false_positive * negative_0,
                pi * (1 - recall) * positive_1 + (1 - pi) * (1 - false_positive) * positive_0,
                pi * (1 - recall) * negative_1 + (1 - pi) * (1 - false_positive) * negative_0,
            ]
        )

    def f1(b):
        q1, q0 = stats.norm.cdf((alpha_1 + b) / s), stats.norm.cdf((alpha_0 + b) / s)
        tp, fp, fn, _ = cells_of(q1, q0, 1 - q1, 1 - q0)
        return 2 * tp / (2 * tp + fp + fn)

    reference, _ = integrate.quad(
        lambda b: f1(b) * stats.norm.pdf(b, 0, 0.3), -np.inf, np.inf, epsabs=1e-13
    )
    assert abs(annotators_truth(params, "new_annotator", None) - reference) < 1e-10
    # an annotator with b = 0 codes the true class with probability 0.9 in either class
    np.testing.assert_allclose(
        annotator_cells(params, 0.0), cells_of(0.9, 0.1, 0.1, 0.9), rtol=0, atol=1e-12
    )

    def majority(alpha, b, coded):
        # P(majority positive), P(majority negative) given the class, over the texts
        # with at least one code
        def integrand(u, sign):
            p = stats.norm.cdf(alpha + u + b)
            total = 0.0
            for outcome in itertools.product([None, 0, 1], repeat=b.size):
                codes = [o for o in outcome if o is not None]
                margin = 2 * sum(codes) - len(codes)
                if np.sign(margin) == sign:
                    total += np.prod(
                        [
                            1 - coded if o is None else coded * (p[a] if o else 1 - p[a])
                            for a, o in enumerate(outcome)
                        ]
                    )
            return total * stats.norm.pdf(u, 0, np.sqrt(1.25))

        at_least_one = 1 - (1 - coded) ** b.size
        return [
            integrate.quad(integrand, -np.inf, np.inf, args=(sign,), epsabs=1e-13)[0] / at_least_one
            for sign in (1, -1)
        ]

    effects = np.array([[0.3, -0.2, 0.1, 0.5], [-0.4, 0.0, 0.2, -0.1]])
    for coded in (1.0, 0.6):
        got = annotator_majority_cells({**params, "coded": coded}, effects)
        for row, cells in zip(effects, got, strict=True):
            (q1, r1), (q0, r0) = majority(alpha_1, row, coded), majority(alpha_0, row, coded)
            expected = cells_of(q1, q0, r1, r0)
            # the cells of the texts with a majority, up to the share of texts with at
            # least one code (the same for every text, so no metric sees it)
            np.testing.assert_allclose(
                cells / cells.sum(), expected / expected.sum(), rtol=0, atol=1e-10
            )
    these = annotators_truth(params, "these_annotators", effects)
    np.testing.assert_allclose(
        these, [np.mean([f1(b) for b in row]) for row in effects], rtol=1e-12
    )
    with pytest.raises(
        ValueError, match=r"^`annotator_effects` are needed for estimand 'majority'"
    ):
        annotators_truth(params, "majority", None)


@pytest.mark.parametrize("metric", ["recall", "precision", "f1", "kappa"])
def test_annotators_truths_agree_with_a_large_simulation(metric):
    # 50 data sets of 1,000 persons with about 20 texts (a million texts, 4 annotators
    # coding 60% of them each, annotator_sd 0.5) from the harness's simulator: each data
    # set's metric against each annotator (over the texts they coded) and against the
    # majority estimates its own truth up to the texts' noise; their O(1/n) bias is far
    # below the Monte-Carlo SE with this many texts per data set. Each check is 3.5
    # Monte-Carlo SE of the mean difference.
    from perfci.harness.populations import annotators_truth, draw_annotators
    from perfci.metrics import metric_values

    params = {**_ANNOTATORS_PARAMS, "metric": metric}
    sample = draw_annotators(params, (50, 1000), np.random.default_rng(1))
    per_annotator = metric_values(sample.person_cells().sum(1).astype(float), metric)
    majority = metric_values(sample.majority_cells().sum(1).astype(float), metric)
    observed = {
        "new_annotator": per_annotator.mean(-1),
        "these_annotators": per_annotator.mean(-1),
        "majority": majority,
    }
    new = annotators_truth(params, "new_annotator", None)
    for estimand, values in observed.items():
        difference = values - annotators_truth(params, estimand, sample.annotator_effects)
        se = difference.std(ddof=1) / np.sqrt(difference.size)
        assert abs(difference.mean()) < 3.5 * se, (estimand, difference.mean(), se)
        if estimand != "new_annotator":
            # the truth follows the data set's own annotators: what is left is the
            # texts' noise, less than the annotators' spread about the new-annotator truth
            assert difference.std() < (values - new).std(), estimand


def test_a_majority_annotators_method_other_than_recommended_is_refused(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(
        ANNOTATORS.replace('estimand = "majority"', 'estimand = "majority"\nmethod = "single"', 1)
    )
    with pytest.raises(ValueError) as err:
        harness.load_suite(path)
    assert str(err.value) == (
        "suite bad.toml: `methods[3].method` must be 'recommended' for estimand 'majority' "
        "(the majority code is one reference, with the recommended interval of one); got "
        "'single'."
    )


def test_scored_nested_truth_is_the_auc_of_the_population():
    # the exact AUC of the rounded binormal score: near the continuous AUC with many
    # levels, and the mean of the pooled AUCs of large simulated samples (MC tolerance)
    from perfci.auc import auc_ci_counts
    from perfci.harness.populations import draw_scored, scored_truth

    params = {
        "persons": 2000,
        "texts_per_person": 10.0,
        "size_cv": 0.5,
        "min_texts": 1,
        "prevalence": 0.3,
        "icc_prevalence": 0.2,
        "auc": 0.8,
        "score_icc": 0.4,
        "score_levels": 20,
    }
    assert scored_truth({**params, "score_levels": 4000}) == pytest.approx(0.8, abs=1e-4)
    truth = scored_truth(params)
    pos, neg = draw_scored(params, (40, 2000), np.random.default_rng(0))
    estimates = auc_ci_counts(pos.sum(1), neg.sum(1)).estimate
    # within-person pairs (1/2000 of the pairs, AUC at most 1) bias the pooled AUC by
    # less than 1e-4; the mean of 40 estimates has its own Monte-Carlo SE
    se = estimates.std(ddof=1) / np.sqrt(estimates.size)
    assert abs(estimates.mean() - truth) < 4 * se + 1e-4
