"""Edges of the validation harness: impossible result files, figure names that collide,
method names that look alike, seeds too large to write, single replications and
impossible half-widths on resume."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import xarray as xr

from perfci import harness
from perfci.cli import main
from perfci.harness.figures import file_stem
from perfci.harness.results import load_result
from perfci.harness.schema import MAX_SEED, method_name_key
from perfci.harness.storage import CellFileError, read_cell

TINY = """
name = "tiny-edges"
description = "four cells of analytic intervals"
seed = 3
[population]
kind = "bernoulli"
[grid]
n = [10, 40]
p = [0.6, 0.9]
[scales.smoke]
replications = 20
resamples = 0
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
"""


def _cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def _result(suite="edges", methods=("wilson", "wald"), exact=0):
    """A small result dataset as the harness writes it."""
    dims = {"n": [10, 40]}
    shape = (2, len(methods))
    data = {
        "coverage": np.full(shape, 0.95),
        "mc_se": np.full(shape, 0.007),
        "mean_half_width": np.full(shape, 0.05),
        "miss_low": np.full(shape, 0.01),
        "miss_high": np.full(shape, 0.04),
        "n_valid": np.full(shape, np.nan if exact else 1000.0),
        "n_flagged": np.zeros(shape),
    }
    return xr.Dataset(
        {k: (("n", "ci_method"), v) for k, v in data.items()},
        coords={**dims, "ci_method": list(methods), "family": ("ci_method", ["analytic"] * 2)},
        attrs={
            "suite": suite,
            "description": "a description",
            "scale": "smoke",
            "replications": 1000,
            "resamples": 0,
            "exact": exact,
            "seed": 1,
            "confidence_level": 0.95,
            "population": "{'kind': 'bernoulli'}",
        },
    )


def _write(ds, path):
    ds.to_netcdf(path, engine="h5netcdf")
    return path


def _suite(tmp_path, text, name="edges.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


# ------------------------------------------------------------ F7. impossible result values


def test_a_good_result_and_an_exact_one_load(tmp_path):
    load_result(_write(_result(), tmp_path / "a.nc"))
    load_result(_write(_result("exact-one", exact=1), tmp_path / "b.nc"))


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("coverage", 2.0, "`coverage` holds 2.0, outside [0, 1]"),
        ("coverage", -0.5, "`coverage` holds -0.5, outside [0, 1]"),
        ("miss_low", 1.5, "`miss_low` holds 1.5, outside [0, 1]"),
        ("miss_high", -0.1, "`miss_high` holds -0.1, outside [0, 1]"),
        ("miss_high", 0.3, "`miss_low` + `miss_high` is"),
        ("n_valid", -3.0, "`n_valid` holds -3.0, not a non-negative integer"),
        ("n_valid", 2.5, "`n_valid` holds 2.5, not a non-negative integer"),
        ("n_valid", np.nan, "`n_valid` holds nan, not a non-negative integer"),
        ("n_flagged", -1.0, "`n_flagged` holds -1.0, not a non-negative integer"),
        ("mc_se", -0.01, "`mc_se` holds -0.01, not a number >= 0"),
        ("mean_half_width", -1.0, "`mean_half_width` holds -1.0, not a number >= 0"),
    ],
)
def test_a_result_with_an_impossible_value_is_refused_naming_it(tmp_path, variable, value, words):
    ds = _result()
    ds[variable][0, 1] = value
    path = _write(ds, tmp_path / "bad.nc")
    with pytest.raises(ValueError) as err:
        load_result(path)
    message = str(err.value)
    assert "\n" not in message and "bad.nc" in message and words in message


def test_nan_values_where_undefined_are_accepted(tmp_path):
    ds = _result()
    for name in ("coverage", "miss_low", "miss_high", "mc_se", "mean_half_width"):
        ds[name][0, 0] = np.nan
    load_result(_write(ds, tmp_path / "nan.nc"))


@pytest.mark.parametrize("level", [7.0, 0.0, 1.0, -0.5])
def test_an_impossible_confidence_level_is_refused(tmp_path, level):
    ds = _result()
    ds.attrs["confidence_level"] = level
    with pytest.raises(ValueError, match=r"bad\.nc.*attribute `confidence_level`"):
        load_result(_write(ds, tmp_path / "bad.nc"))


def test_validate_report_refuses_an_edited_result_in_one_line(capsys, tmp_path):
    ds = _result()
    ds["coverage"][1, 0] = 2.0
    _write(ds, tmp_path / "edited.nc")
    status, _, err = _cli(capsys, "validate", "report", tmp_path, "--formats", "svg")
    assert status == 2 and err.count("\n") == 1
    assert "edited.nc" in err and "`coverage`" in err
    assert not (tmp_path / "SUMMARY.md").exists()


# --------------------------------------------------------------- F8. figure names collide


def test_file_stems_of_distinct_names_differ():
    names = ["a/b", "a_b", "a?b", "x" * 150, "x" * 100 + "y" * 50]
    stems = [file_stem(n) for n in names]
    assert len(set(stems)) == len(names)
    assert file_stem("a_b") == "a_b"
    assert file_stem("a/b") == "a_b-" + hashlib.sha256(b"a/b").hexdigest()[:8]


def test_validate_report_writes_apart_the_figures_of_names_that_sanitize_alike(capsys, tmp_path):
    for i, name in enumerate(["a/b", "a_b", "a?b"]):
        _write(_result(name), tmp_path / f"r{i}.nc")
    status, out, err = _cli(capsys, "validate", "report", tmp_path, "--formats", "svg")
    assert status == 0, err
    coverage = sorted(p.name for p in (tmp_path / "figures").glob("coverage_*.svg"))
    assert len(coverage) == 3 and "coverage_a_b.svg" in coverage


def test_validate_report_refuses_two_results_of_one_suite_naming_both(capsys, tmp_path):
    _write(_result("same"), tmp_path / "first.nc")
    _write(_result("same"), tmp_path / "second.nc")
    status, _, err = _cli(capsys, "validate", "report", tmp_path, "--formats", "svg")
    assert status == 2 and err.count("\n") == 1
    assert "first.nc" in err and "second.nc" in err and "'same'" in err
    assert not (tmp_path / "figures").exists()


# ----------------------------------------------------------- F12. method names look alike


@pytest.mark.parametrize(
    ("second", "words"),
    [
        ("w\u0430ld", "must not mix letters of several scripts"),  # Cyrillic a
        ("wa\u200bld", "must not hold format or control characters"),  # zero-width space
        ("wa\\u0007ld", "must not hold format or control characters"),  # TOML escape
        ("\uff57\uff41\uff4c\uff44", "must differ in more than case"),  # full-width
        ("WALD", "must differ in more than case"),
    ],
)
def test_method_names_that_look_alike_are_refused(tmp_path, second, words):
    text = TINY + f'[[methods]]\nname = "{second}"\nfamily = "analytic"\nmethod = "jeffreys"\n'
    with pytest.raises(harness.SuiteError) as err:
        harness.load_suite(_suite(tmp_path, text))
    assert words in str(err.value) and "\n" not in str(err.value)
    assert "methods[2]" in str(err.value)


def test_composed_and_decomposed_names_are_one_name(tmp_path):
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    assert method_name_key(nfc) == method_name_key(nfd)
    text = TINY.replace('name = "wilson"', f'name = "{nfc}"').replace(
        'name = "wald"', f'name = "{nfd}"'
    )
    with pytest.raises(harness.SuiteError, match="must differ in more than case"):
        harness.load_suite(_suite(tmp_path, text))


def test_names_of_one_script_other_than_latin_are_accepted(tmp_path):
    text = TINY.replace('name = "wald"', 'name = "\u0432\u0430\u043b\u044c\u0434"')
    suite = harness.load_suite(_suite(tmp_path, text))
    assert [m.name for m in suite.methods] == ["wilson", "\u0432\u0430\u043b\u044c\u0434"]


# ------------------------------------------------------------------ F13. the seed's range


def test_a_seed_of_2_to_the_64_is_refused_at_load(tmp_path):
    text = TINY.replace("seed = 3", f"seed = {2**64}")
    with pytest.raises(harness.SuiteError) as err:
        harness.load_suite(_suite(tmp_path, text))
    assert str(err.value) == (
        f"suite edges.toml: `seed` must be an integer from 0 to 2**63 - 1 ({MAX_SEED}); "
        f"got {2**64}."
    )


def test_the_largest_seed_runs_and_writes(tmp_path):
    path = _suite(tmp_path, TINY.replace("seed = 3", f"seed = {MAX_SEED}"))
    ds = harness.run_suite(str(path), "smoke", tmp_path / "out")
    assert int(load_result(tmp_path / "out" / "tiny-edges.nc").attrs["seed"]) == MAX_SEED
    assert ds.attrs["seed"] == MAX_SEED


# ----------------------------------------------------------- F14. a single replication


def test_one_replication_of_a_simulated_scale_is_refused(tmp_path):
    text = TINY.replace("replications = 20", "replications = 1")
    with pytest.raises(harness.SuiteError) as err:
        harness.load_suite(_suite(tmp_path, text))
    assert "`scales.smoke.replications` must be an integer at least 2" in str(err.value)


def test_an_exact_scale_keeps_one_replication(tmp_path):
    suite = harness.load_suite(_suite(tmp_path, TINY))
    assert suite.scales["exact"].replications == 1


# ------------------------------------------------------ F6. half-widths wider than a rate


def test_resume_refuses_a_cell_whose_half_width_sum_exceeds_n_valid(tmp_path):
    path = _suite(tmp_path, TINY)
    out = tmp_path / "out"
    harness.run_suite(str(path), "smoke", out)
    cell = sorted((out / "tiny-edges.cells").glob("*.npy"))[0]
    scores = np.load(cell)
    scores[0, 3] = 1e9
    np.save(cell, scores)
    with pytest.raises(CellFileError, match=r"half-width sum 1000000000\.0, more than 1"):
        harness.run_suite(str(path), "smoke", out, resume=True)
    # without the bound (a logit-scale coefficient) the same file is read
    read_cell(cell, ["wilson", "wald"], 20)


def test_a_half_width_sum_at_n_valid_is_accepted(tmp_path):
    cell = tmp_path / "cell.npy"
    np.save(cell, np.array([[18.0, 1, 1, 20.0, 20, 0], [20.0, 0, 0, 0.5, 20, 0]]))
    read_cell(cell, ["a", "b"], 20, max_half_width=1.0)
