"""Edges of the validation harness: impossible result files, figure names that collide,
method names that look alike, seeds too large to write, single replications, impossible
half-widths and flags on resume, cell files copied over another's, folders in the way of
outputs, partial output before a refusal, the user's own files beside temporaries, a
write error that crashed the interpreter, grid sizes no run can take, a misplaced
``grid`` and hidden characters in scale names.

Each policy is written in ``docs/validation.md`` and in the docstrings of the code that
holds it."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import xarray as xr

from perfci import harness
from perfci._core.files import WriteError, write_bytes_atomic
from perfci._core.validation import MAX_COUNT
from perfci.cli import main
from perfci.harness.execution import widest_half_width
from perfci.harness.families import can_flag
from perfci.harness.figures import file_stem, make_figures
from perfci.harness.results import load_result
from perfci.harness.schema import MAX_SEED, method_name_key
from perfci.harness.storage import (
    CELL_IDENTITY_MARK,
    CellFileError,
    RecomputedCellWarning,
    cell_identity,
    read_cell,
    remove_stale_temporaries,
    write_atomic,
)

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
    with pytest.raises(CellFileError, match=r"half-width sum 1000000000\.0, more than 0\.5"):
        harness.run_suite(str(path), "smoke", out, resume=True)
    # without the bound (a logit-scale coefficient) the same file is read
    read_cell(cell, ["wilson", "wald"], 20)


def test_a_half_width_sum_at_n_valid_is_accepted(tmp_path):
    cell = tmp_path / "cell.npy"
    np.save(cell, np.array([[18.0, 1, 1, 20.0, 20, 0], [20.0, 0, 0, 0.5, 20, 0]]))
    read_cell(cell, ["a", "b"], 20, max_half_width=1.0)


# ------------------------------------------------------------------ shared helpers


def _run(tmp_path, text=TINY, name="edges.toml", out="out", **kw):
    """Run the smoke scale of a suite; return the suite's path and the output folder."""
    path = _suite(tmp_path, text, name)
    harness.run_suite(str(path), "smoke", tmp_path / out, **kw)
    return path, tmp_path / out


def _identity(path, cell, scale="smoke"):
    """The identity a run of the suite at `path` writes in a cell file."""
    suite = harness.load_suite(path)
    return cell_identity(suite.name, scale, cell, harness.suite_fingerprint(suite, scale))


def _files(folder):
    """Every file under `folder`, with its bytes."""
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _one_line_error(status, err):
    assert status == 2, (status, err)
    assert err.startswith("perfci: error: ") and err.count("\n") == 1, err


# ---------------------------------------------- P10. cells and results no run could write


def test_resume_refuses_flags_on_a_method_that_never_flags(tmp_path):
    path, out = _run(tmp_path)
    cell = out / "tiny-edges.cells" / "n-10_p-0.9.npy"
    scores = np.load(cell)
    scores[1, 5] = 7  # the analytic `wald`: no run flags it
    write_atomic(cell, scores, _identity(path, {"n": 10, "p": 0.9}))
    before = _files(out)
    with pytest.raises(CellFileError) as err:
        harness.run_suite(str(path), "smoke", out, resume=True)
    assert str(err.value).startswith(
        f"cell file {cell} cannot be resumed: method 'wald' has flags 7, but its fits are "
        "never flagged"
    )
    assert _files(out) == before


def test_only_bayesian_fits_can_be_flagged():
    assert not can_flag("analytic", {"method": "wald"})
    assert not can_flag("bootstrap", {"interval": "bca"})
    assert not can_flag("bayes", {"sampler": "grid"})
    assert can_flag("bayes", {"sampler": "nutpie"})
    assert can_flag("performance", {"method": "bayes"})
    assert not can_flag("performance", {"method": "weighted"})
    assert can_flag("bayes_nested_confusion", {}) and can_flag("bayes_comparison", {})


def test_resume_refuses_a_half_width_above_one_half_for_a_rate(tmp_path):
    path, out = _run(tmp_path)
    cell = out / "tiny-edges.cells" / "n-10_p-0.9.npy"
    scores = np.load(cell)
    scores[0, 3] = 0.9 * scores[0, 4]  # a mean half-width of 0.9 for a proportion
    write_atomic(cell, scores, _identity(path, {"n": 10, "p": 0.9}))
    with pytest.raises(CellFileError, match=r"more than 0\.5 per valid interval \(20\)"):
        harness.run_suite(str(path), "smoke", out, resume=True)
    scores[0, 3] = 0.5 * scores[0, 4]  # [0, 1] itself: the widest interval of a rate
    write_atomic(cell, scores, _identity(path, {"n": 10, "p": 0.9}))
    harness.run_suite(str(path), "smoke", out, resume=True)


@pytest.mark.parametrize(
    ("population", "cell", "widest"),
    [
        ({"kind": "bernoulli"}, {"n": 10, "p": 0.5}, 0.5),
        ({"kind": "confusion", "prevalence": 0.1}, {"n": 10}, 0.5),  # F1 by default
        ({"kind": "confusion", "prevalence": 0.1}, {"metric": "kappa"}, 1.0),
        ({"kind": "nested_confusion", "metric": "macro_mcc"}, {}, 1.0),
        ({"kind": "paired_nested", "metric": "recall"}, {}, 1.0),
        ({"kind": "paired_nested"}, {"metric": "kappa"}, 2.0),
        ({"kind": "runs_nested", "metric": "f1"}, {}, 0.5),
        ({"kind": "runs_nested", "metric": "kappa"}, {}, None),  # its t interval: unclipped
        ({"kind": "many_nested"}, {}, None),
        ({"kind": "covariates_nested"}, {}, None),
    ],
)
def test_the_widest_half_width_follows_the_targets_range(population, cell, widest):
    suite = harness.Suite("s", "", 1, 0.95, population, {}, (), {})
    assert widest_half_width(suite, cell) == widest


def test_resume_refuses_a_cell_file_copied_over_another_naming_both(tmp_path):
    path, out = _run(tmp_path)
    cells = out / "tiny-edges.cells"
    (cells / "n-10_p-0.9.npy").write_bytes((cells / "n-40_p-0.9.npy").read_bytes())
    before = _files(out)
    with pytest.raises(CellFileError) as err:
        harness.run_suite(str(path), "smoke", out, resume=True)
    assert str(err.value) == (
        f"cell file {cells / 'n-10_p-0.9.npy'} cannot be resumed: it holds the scores of "
        "another cell (suite 'tiny-edges', scale 'smoke', n=40, p=0.9), not of this one "
        "(suite 'tiny-edges', scale 'smoke', n=10, p=0.9), as a cell file copied over "
        "another's does; delete it to compute that cell again, or run without `resume` to "
        "start again."
    )
    assert _files(out) == before


def test_a_cell_file_carries_its_identity_and_numpy_still_reads_it(tmp_path):
    path, out = _run(tmp_path)
    cell = out / "tiny-edges.cells" / "n-40_p-0.6.npy"
    raw = cell.read_bytes()
    start = raw.index(CELL_IDENTITY_MARK)
    identity = json.loads(raw[start + len(CELL_IDENTITY_MARK) :])
    assert identity.pop("digest") == hashlib.sha256(raw[:start]).hexdigest()
    assert identity == {
        "cell": {"n": 40, "p": 0.6},
        "fingerprint": (out / "tiny-edges.cells" / "fingerprint.txt").read_text(),
        "scale": "smoke",
        "suite": "tiny-edges",
    }
    assert json.dumps(identity, sort_keys=True) == _identity(path, {"n": 40, "p": 0.6})
    assert np.load(cell).shape == (2, 6)
    cell.write_bytes(raw + b"junk")
    with pytest.raises(CellFileError, match="the identity after its array is not readable"):
        read_cell(cell, ["wilson", "wald"], 20)
    cell.write_bytes(raw[: raw.index(CELL_IDENTITY_MARK)] + b"junk")
    with pytest.raises(CellFileError, match="4 bytes after its array that are no cell's"):
        read_cell(cell, ["wilson", "wald"], 20)


def test_a_cell_file_of_an_earlier_version_is_computed_again_with_a_note(tmp_path):
    path, out = _run(tmp_path)
    fresh = xr.load_dataset(out / "tiny-edges.nc", engine="h5netcdf")
    cells = out / "tiny-edges.cells"
    for name in ("n-10_p-0.9.npy", "n-40_p-0.6.npy"):  # as an earlier version wrote them
        np.save(cells / name, np.load(cells / name))
    kept = (cells / "n-10_p-0.6.npy").stat().st_mtime_ns
    with pytest.warns(RecomputedCellWarning) as caught:
        resumed = harness.run_suite(str(path), "smoke", out, resume=True)
    assert len(caught) == 1
    assert str(caught[0].message) == (
        f"2 cell file(s) in {cells} carry no identity of their cell (an earlier version of "
        "perfci wrote them, first n-10_p-0.9.npy); they are computed again."
    )
    xr.testing.assert_identical(resumed, fresh)
    assert CELL_IDENTITY_MARK in (cells / "n-10_p-0.9.npy").read_bytes()
    assert (cells / "n-10_p-0.6.npy").stat().st_mtime_ns == kept  # valid and named: kept


def test_a_result_with_more_valid_intervals_than_replications_is_refused(tmp_path):
    ds = _result()
    ds["n_valid"][0, 0] = 1_000_000  # the attribute says 1000 replications
    with pytest.raises(ValueError) as err:
        load_result(_write(ds, tmp_path / "bad.nc"))
    assert str(err.value) == (
        f"{str(tmp_path / 'bad.nc')!r} is not a result perfci could have written: `n_valid` "
        "holds 1000000, more than the attribute `replications` (1000): one interval per "
        "replication."
    )
    ds = _result()
    ds["n_flagged"][1, 1] = 1001
    with pytest.raises(ValueError, match=r"`n_flagged` holds 1001, more than the attribute"):
        load_result(_write(ds, tmp_path / "flags.nc"))


# ----------------------------------------------------- P11. a folder at an output path


def test_a_folder_at_the_result_path_is_refused_before_any_work(tmp_path, capsys):
    path = _suite(tmp_path, TINY)
    out = tmp_path / "out"
    (out / "tiny-edges.nc").mkdir(parents=True)
    with pytest.raises(ValueError) as err:
        harness.run_suite(str(path), "smoke", out)
    assert str(err.value) == (
        f"`out` {str(out)!r} holds a folder tiny-edges.nc where the run writes a file, which "
        "perfci does not replace; remove or rename it, or write to another folder."
    )
    assert sorted(p.name for p in out.iterdir()) == ["tiny-edges.nc"]  # no cells, no lock
    status, out_text, err_text = _cli(capsys, "validate", "run", path, "--out", out, "--quiet")
    _one_line_error(status, err_text)
    assert "`--out`" in err_text and "holds a folder tiny-edges.nc" in err_text
    assert "bytes free" not in err_text and "make room" not in err_text


@pytest.mark.parametrize(
    "where", ["perfci.lock", "tiny-edges.cells/fingerprint.txt", "tiny-edges.cells/n-40_p-0.6.npy"]
)
def test_a_folder_at_any_file_of_the_run_is_refused_naming_it(tmp_path, where):
    path, out = _run(tmp_path)
    (out / where).unlink(missing_ok=True)
    (out / where).mkdir()
    before = _files(out)
    for resume in (False, True):
        with pytest.raises(ValueError, match=f"holds a folder {where} where the run writes"):
            harness.run_suite(str(path), "smoke", out, resume=resume)
    assert _files(out) == before


def test_a_file_at_the_folder_of_cells_is_refused(tmp_path):
    path = _suite(tmp_path, TINY)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "tiny-edges.cells").write_text("mine")
    with pytest.raises(ValueError, match="holds a file tiny-edges.cells where the run keeps"):
        harness.run_suite(str(path), "smoke", tmp_path / "out")
    assert (tmp_path / "out" / "tiny-edges.cells").read_text() == "mine"


def test_a_write_onto_a_folder_says_folder_and_nothing_of_disk_space(tmp_path):
    target = tmp_path / "SUMMARY.md"
    target.mkdir()
    with pytest.raises(WriteError) as err:
        write_bytes_atomic(target, b"text")
    assert str(err.value) == (
        f"could not write {target}: it is a folder, which perfci does not replace (remove or "
        "rename it, or write elsewhere)"
    )
    assert err.value.errno == errno.EISDIR and list(tmp_path.iterdir()) == [target]


@pytest.mark.parametrize(("code", "room"), [(errno.ENOSPC, True), (errno.EIO, False)])
def test_only_a_full_disk_reports_bytes_free(tmp_path, monkeypatch, code, room):
    def fail(fd, *args):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "posix_fallocate", fail)
    with pytest.raises(WriteError) as err:
        write_bytes_atomic(tmp_path / "x.txt", b"text")
    assert ("bytes free, 4 needed)" in str(err.value)) is room
    assert list(tmp_path.iterdir()) == []


def test_a_failed_result_write_says_make_room_only_for_a_full_disk(tmp_path, monkeypatch):
    path, out = _run(tmp_path)

    def fail(fd, *args):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "posix_fallocate", fail)
    with pytest.raises(WriteError) as err:
        harness.run_suite(str(path), "smoke", out, resume=True)
    assert str(err.value).endswith(
        f"Input/output error; every cell is kept in {out / 'tiny-edges.cells'}: fix that and "
        "run again with `resume` to write the result"
    )


# ------------------------------------------------ P12. validate report checks every target


@pytest.mark.parametrize("kind", ["read-only", "folder"])
def test_validate_report_refuses_its_summary_before_writing_any_figure(capsys, tmp_path, kind):
    _write(_result(), tmp_path / "r.nc")
    summary = tmp_path / "SUMMARY.md"
    if kind == "folder":
        summary.mkdir()
    else:
        summary.write_text("old")
        summary.chmod(0o444)
    status, _, err = _cli(capsys, "validate", "report", tmp_path, "--formats", "svg")
    _one_line_error(status, err)
    words = "is a folder, not a file" if kind == "folder" else "is a read-only file"
    assert f"the summary of `validate report` {str(summary)!r} {words}" in err
    assert not (tmp_path / "figures").exists()
    if kind != "folder":
        assert summary.read_text() == "old"


def test_make_figures_checks_every_file_before_writing_any(tmp_path):
    ds = _result()
    folder = tmp_path / "figs"
    folder.mkdir()
    locked = folder / "half_width_edges.svg"  # the last of the figures written
    locked.write_text("old")
    locked.chmod(0o444)
    with pytest.raises(ValueError, match=r"figure .*half_width_edges\.svg' is a read-only"):
        make_figures(ds, folder, formats=("png", "svg"))
    assert sorted(p.name for p in folder.iterdir()) == ["half_width_edges.svg"]
    locked.chmod(0o644)
    locked.unlink()
    (folder / "coverage_edges.png").mkdir()
    with pytest.raises(ValueError, match=r"coverage_edges\.png' is a folder, not a file"):
        make_figures(ds, folder, formats=("png",))
    (folder / "coverage_edges.png").rmdir()
    (tmp_path / "plain").write_text("a file")
    with pytest.raises(ValueError, match=r"`folder` .*plain' is a file, not a folder"):
        make_figures(ds, tmp_path / "plain", formats=("png",))


def test_validate_report_checks_every_result_s_figures_before_writing_any(tmp_path, capsys):
    """With several results, a read-only figure of the second was refused only after the
    first result's figures were written."""
    folder = tmp_path / "results"
    folder.mkdir()
    _result("aaa").to_netcdf(folder / "aaa.nc")
    _result("bbb").to_netcdf(folder / "bbb.nc")
    figures = folder / "figures"
    figures.mkdir()
    locked = figures / "half_width_bbb.png"
    locked.write_text("old")
    locked.chmod(0o444)
    assert main(["validate", "report", str(folder)]) == 2
    assert "half_width_bbb.png' is a read-only" in capsys.readouterr().err
    assert sorted(p.name for p in figures.iterdir()) == ["half_width_bbb.png"]
    assert not (folder / "SUMMARY.md").exists()
    locked.chmod(0o644)
    locked.unlink()
    assert main(["validate", "report", str(folder)]) == 0
    assert {p.name for p in figures.iterdir()} >= {"coverage_aaa.png", "half_width_bbb.png"}
    # two results of one suite would write the same files: refused, nothing written
    with pytest.raises(ValueError, match="two results would write the figure"):
        make_figures([_result("ccc"), _result("ccc")], tmp_path / "twice")
    assert not (tmp_path / "twice").exists()


# ------------------------------------------------- P13. the user's own files beside temps


def test_a_run_deletes_only_perfcis_own_dead_temporaries(tmp_path, dead_pid):
    path, out = _run(tmp_path)
    cells = out / "tiny-edges.cells"
    dead = dead_pid
    mine = [
        out / ".my notes.tmp",
        out / "tmp_scratch.tmp",
        out / ".tiny-edges.nc.0a1b2c3d.tmp",  # an earlier version's pattern: could be mine
        out / ".notes.12.ZZZZZZZZ.tmp",  # not 8 hex digits
        cells / "tmpq9w8e7ab.tmp",
    ]
    gone = [out / f".tiny-edges.nc.{dead}.0a1b2c3d.tmp", cells / f".x.npy.{dead}.00ff00ff.tmp"]
    for p in (*mine, *gone):
        p.write_text("keep")
    harness.run_suite(str(path), "smoke", out, resume=True)
    assert all(p.read_text() == "keep" for p in mine)
    assert not any(p.exists() for p in gone)
    assert remove_stale_temporaries(out) == []


# ------------------------------------------- P14. a refused cell write and the next GC


SEGV = textwrap.dedent(
    """
    import gc, sys
    from pathlib import Path
    import numpy as np
    from perfci.harness import storage

    target = Path(sys.argv[1])
    target.mkdir()

    def case():
        try:
            storage.write_atomic(target, np.zeros((2, 6)))
        except Exception as exc:
            error = exc
        raise AssertionError(str(error))

    try:
        case()
    except AssertionError:
        pass
    gc.collect()
    print("collected")
    """
)


def test_a_refused_cell_write_does_not_crash_the_next_garbage_collection(tmp_path):
    # the traceback of a refused write sits in a reference cycle: with a BytesIO view
    # among its locals, CPython 3.12.1 crashed when collecting it (gh-111049)
    done = subprocess.run(
        [sys.executable, "-c", SEGV, str(tmp_path / "cell.npy")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    assert done.stdout == "collected\n"


# ------------------------------------------------------ P15. grid sizes that can be run


def test_a_grid_size_beyond_what_a_data_set_holds_is_refused_at_load(tmp_path):
    text = TINY.replace("n = [10, 40]", "n = [9223372036854775807]")
    with pytest.raises(harness.SuiteError) as err:
        harness.load_suite(_suite(tmp_path, text))
    assert str(err.value) == (
        f"suite edges.toml: `grid.n` values must each be an integer from 1 to {MAX_COUNT}; "
        "got 9223372036854775807."
    )
    text = TINY.replace("[scales.exact]", "[scales.exact]\ngrid = { n = [1000000000000001] }")
    with pytest.raises(harness.SuiteError, match=r"`scales\.exact\.grid\.n` values must"):
        harness.load_suite(_suite(tmp_path, text))
    harness.load_suite(_suite(tmp_path, TINY.replace("n = [10, 40]", f"n = [{MAX_COUNT}]")))


BOOTSTRAP = """
[[methods]]
name = "pp1"
family = "bootstrap"
interval = "percentile"
pseudo_count = 1
"""


def test_a_bootstrap_batch_beyond_what_it_takes_is_refused_at_load(tmp_path):
    text = TINY.replace("n = [10, 40]", f"n = [10, {MAX_COUNT // 10}]").replace(
        "resamples = 0\n[scales.exact]", "resamples = 100\n[scales.exact]"
    )
    with pytest.raises(harness.SuiteError) as err:
        harness.load_suite(_suite(tmp_path, text + BOOTSTRAP))
    assert str(err.value) == (
        f"suite edges.toml: `grid.n` value {MAX_COUNT // 10} times `scales.smoke.replications` "
        f"(20) is {2 * MAX_COUNT} texts, more than the {MAX_COUNT} a bootstrap (pp1) takes at "
        "once for a cell's data sets; give a smaller n or fewer replications."
    )
    harness.load_suite(_suite(tmp_path, text))  # analytic methods take each data set alone


# --------------------------------------------------------------- P16. a misplaced grid


def test_a_grid_that_is_not_a_table_is_refused_as_such(tmp_path):
    below = TINY.replace("[grid]\nn = [10, 40]\np = [0.6, 0.9]\n", "grid = [1, 2]\n")
    with pytest.raises(harness.SuiteError) as err:
        harness.load_suite(_suite(tmp_path, below))
    assert str(err.value) == (
        "suite edges.toml: `grid` must be a table at the top level ([grid]): the dims of the "
        "grid of cells and their values; the file gives `population.grid` instead (a key "
        "written below a table's header belongs to that table)."
    )
    top = "grid = [1, 2]\n" + below.replace("grid = [1, 2]\n", "")
    with pytest.raises(harness.SuiteError, match=r"`grid` must be a table of dims"):
        harness.load_suite(_suite(tmp_path, top))


# ------------------------------------------------------ P1. the names of scales are names


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("t\\u202ei\\u001b[31mny\\n", "must not begin or end with whitespace"),  # probe 31
        ("t\\u202ei\\u001b[31mny", "must not hold format or control characters"),
        ("ti\\u200bny", "must not hold format or control characters"),
        ("sm\u043ekе", "must not mix letters of several scripts"),  # Cyrillic o, e
        (" smoke2", "must not begin or end with whitespace"),
        ("", "must not be empty"),
        ("Smoke", "must differ in more than case, '-', '_', spaces and Unicode form"),
        ("\uff53moke", "must differ in more than case"),  # a full-width s
    ],
)
def test_scale_names_are_held_to_the_rules_of_method_names(tmp_path, name, words):
    text = TINY.replace("[scales.exact]", f'[scales."{name}"]\nreplications = 5\n[scales.exact]')
    with pytest.raises(harness.SuiteError) as err:
        harness.load_suite(_suite(tmp_path, text))
    message = str(err.value)
    assert message.startswith("suite edges.toml: `scales` names ") and words in message
    assert "\n" not in message and "\x1b" not in message and "\u202e" not in message


def test_a_scale_name_with_spaces_or_another_script_loads(tmp_path):
    text = TINY.replace(
        "[scales.exact]",
        '[scales."quick look"]\nreplications = 5\nresamples = 0\n[scales."быстро"]\n'
        "replications = 5\nresamples = 0\n[scales.exact]",
    )
    assert list(harness.load_suite(_suite(tmp_path, text)).scales) == [
        "smoke",
        "quick look",
        "быстро",
        "exact",
    ]


# ------------------------------------------------- N3. a cell file of another run's folder


def test_resume_refuses_a_cell_file_of_another_seed_naming_both_fingerprints(tmp_path):
    path, out = _run(tmp_path)
    other, elsewhere = _run(tmp_path, TINY.replace("seed = 3", "seed = 4"), "b.toml", "b")
    name = "tiny-edges.cells/n-10_p-0.9.npy"
    (out / name).write_bytes((elsewhere / name).read_bytes())
    before = _files(out)
    ours = harness.suite_fingerprint(harness.load_suite(path), "smoke")
    theirs = harness.suite_fingerprint(harness.load_suite(other), "smoke")
    with pytest.raises(CellFileError) as err:
        harness.run_suite(str(path), "smoke", out, resume=True)
    assert str(err.value).startswith(
        f"cell file {out / name} cannot be resumed: it holds the scores of a run with "
        f"fingerprint {theirs!r}, not this run's {ours!r} (another seed"
    )
    assert _files(out) == before


def test_a_cell_file_without_a_fingerprint_is_computed_again(tmp_path):
    path, out = _run(tmp_path)
    cell = out / "tiny-edges.cells" / "n-10_p-0.9.npy"
    write_atomic(cell, np.load(cell), cell_identity("tiny-edges", "smoke", {"n": 10, "p": 0.9}))
    with pytest.warns(RecomputedCellWarning, match="1 cell file"):
        harness.run_suite(str(path), "smoke", out, resume=True)
    read_cell(cell, ["wilson", "wald"], 20, identity=_identity(path, {"n": 10, "p": 0.9}))


# ------------------------------------------------------ N4. results whose values disagree


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            {"coverage": 0.25, "miss_low": 0.125, "miss_high": 0.125},
            "`coverage` + `miss_low` + `miss_high` is 0.5, not 1",
        ),
        ({"mean_half_width": 5.0}, "`mean_half_width` holds 5.0, more than 0.5, the widest"),
        ({"mc_se": 0.4}, "`mc_se` holds 0.4, more than 0.5 / sqrt(`n_valid`) (0.01581)"),
        ({"replications": 0}, "attribute `replications` is 0, not a positive integer"),
    ],
)
def test_a_result_whose_values_disagree_is_refused_naming_the_variable(tmp_path, edit, message):
    ds = _result()
    for name, value in edit.items():
        if name in ds.attrs:
            ds.attrs[name] = value
        else:
            ds[name][:] = value
    path = _write(ds, tmp_path / "a.nc")
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        load_result(path)
    assert str(err.value).startswith(f"{str(path)!r} is not a result perfci could have written")


def test_the_bounds_of_a_result_are_those_of_its_target(tmp_path):
    ds = _result()
    ds["mean_half_width"][:] = 0.5  # [0, 1] itself: the widest interval of a rate
    ds["mc_se"][:] = 0.5 / np.sqrt(1000)
    load_result(_write(ds, tmp_path / "a.nc"))
    ds.attrs["population"] = "{'kind': 'covariates_nested'}"  # a logit coefficient
    ds["mean_half_width"][:] = 5.0
    (tmp_path / "b").mkdir()
    load_result(_write(ds, tmp_path / "b" / "a.nc"))


# --------------------------------------- N5 and N6. read-only and symlinked files of a run


@pytest.mark.parametrize(
    "where", ["perfci.lock", "tiny-edges.cells/fingerprint.txt", "tiny-edges.cells/n-40_p-0.6.npy"]
)
def test_a_read_only_file_of_the_run_is_refused_before_any_work(tmp_path, where):
    path, out = _run(tmp_path)
    (out / where).touch()
    (out / where).chmod(0o444)
    before = _files(out)
    with pytest.raises(ValueError) as err:
        harness.run_suite(str(path), "smoke", out)
    assert str(err.value) == (
        f"`out` {str(out)!r} holds a read-only file {where} of the run, which perfci does "
        "not replace; make it writable (chmod u+w) or write to another folder."
    )
    assert _files(out) == before and (out / where).stat().st_mode & 0o777 == 0o444
    if where != "perfci.lock":  # resuming only reads a cell or the fingerprint
        harness.run_suite(str(path), "smoke", out, resume=True)


@pytest.mark.parametrize("where", ["tiny-edges.cells", "perfci.lock"])
def test_a_symlink_where_the_run_writes_is_refused_naming_it(tmp_path, where):
    path = _suite(tmp_path, TINY)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "out").mkdir()
    target = outside if where.endswith("cells") else outside / "lock"
    (tmp_path / "out" / where).symlink_to(target)
    for resume in (False, True):
        with pytest.raises(ValueError) as err:
            harness.run_suite(str(path), "smoke", tmp_path / "out", resume=resume)
        assert str(err.value).startswith(
            f"`out` {str(tmp_path / 'out')!r} holds a symbolic link {where} (to {str(target)!r})"
        )
    assert list(outside.iterdir()) == [] and not (tmp_path / "out" / "edges.nc").exists()


# ----------------------------------------------- N8. result attributes in figure text


def test_hand_edited_result_attributes_reach_figures_escaped(tmp_path, recwarn):
    ds = _result()
    ds.attrs["scale"] = "t\x1b[31m\u202e\nny"
    ds.attrs["suite"] = "s\x1b[31m\u202e"
    ds = ds.assign_coords(ci_method=["wil\x1bson", "wald\u202e"])
    from perfci.harness.figures import plot_suite

    fig = plot_suite(ds, "coverage")[""]
    texts = [fig._suptitle.get_text()]
    texts += [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().texts]
    assert texts[0].startswith("s\\x1b[31m\\u202e (t\\x1b[31m\\u202e ny): coverage")
    assert "wil\\x1bson" in texts and "wald\\u202e" in texts
    assert not any(c in "".join(texts) for c in "\x1b\u202e") and "\n" not in texts[0]
    import matplotlib.pyplot as plt

    fig.savefig(tmp_path / "f.png")
    plt.close(fig)
    assert not [w for w in recwarn if "Glyph" in str(w.message)]
