"""Edges of the validation harness, round 5: special files and symbolic links where
perfci reads or writes, NUL characters in suite strings, near-duplicate method names,
cell identities that differ in their keys, and result files no run could have written
(repeated methods or grid values, flags on methods that never flag, attributes and grid
values out of range, methods scored without a coverage).

Each test failed before its fix: a FIFO made ``perfci validate report`` hang, a
symbolic link at ``DIR/figures`` let the report write outside ``DIR``, and messages said
"a folder" of a FIFO."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from perfci import harness
from perfci._core.files import check_target, file_kind
from perfci.cli import main
from perfci.harness.results import load_result
from perfci.harness.schema import method_name_key
from perfci.harness.storage import CellFileError, cell_identity, read_cell, write_atomic

TINY = """
name = "tiny-round5"
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
[[methods]]
name = "wilson"
family = "analytic"
method = "wilson"
[[methods]]
name = "wald"
family = "analytic"
method = "wald"
"""

#: Seconds a test may wait on a file before it counts as hanging (a FIFO opened).
PATIENCE = 20


@contextlib.contextmanager
def _no_hang() -> Iterator[None]:
    """Fail instead of hanging when something opens a FIFO and waits for a writer."""

    def hung(signum, frame):
        raise AssertionError(f"still waiting after {PATIENCE} s: a FIFO was opened")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(PATIENCE)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _cli(capsys, *argv):
    with _no_hang():
        status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def _one_line_error(status, err):
    assert status == 2, (status, err)
    assert err.startswith("perfci: error: ") and err.count("\n") == 1, err


def _result(suite="edges", methods=("wilson", "wald"), population="{'kind': 'bernoulli'}"):
    """A small result dataset as the harness writes it (grid dims n and p)."""
    shape = (2, 2, len(methods))
    data = {
        "coverage": np.full(shape, 0.95),
        "mc_se": np.full(shape, 0.007),
        "mean_half_width": np.full(shape, 0.05),
        "miss_low": np.full(shape, 0.01),
        "miss_high": np.full(shape, 0.04),
        "n_valid": np.full(shape, 1000.0),
        "n_flagged": np.zeros(shape),
    }
    return xr.Dataset(
        {k: (("n", "p", "ci_method"), v) for k, v in data.items()},
        coords={
            "n": [10, 40],
            "p": [0.6, 0.9],
            "ci_method": list(methods),
            "family": ("ci_method", ["analytic"] * len(methods)),
            "base_method": ("ci_method", list(methods)),
            "sampler": ("ci_method", [""] * len(methods)),
        },
        attrs={
            "suite": suite,
            "description": "a description",
            "scale": "smoke",
            "replications": 1000,
            "resamples": 0,
            "exact": 0,
            "seed": 1,
            "confidence_level": 0.95,
            "population": population,
        },
    )


def _write(ds, path):
    ds.to_netcdf(path, engine="h5netcdf")
    return path


def _suite(tmp_path, text=TINY, name="round5.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _run(tmp_path):
    """Run the smoke scale of TINY; return the suite's path and the output folder."""
    path = _suite(tmp_path)
    harness.run_suite(str(path), "smoke", tmp_path / "out")
    return path, tmp_path / "out"


def _files(folder):
    """Every regular file under `folder`, with its bytes (a FIFO is not opened)."""
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------- the kind of what is in the way


def test_file_kind_names_what_is_there(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "file").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "pipe")
    assert file_kind(tmp_path / "file") is None and file_kind(tmp_path / "none") is None
    assert file_kind(tmp_path) == "a folder"
    assert file_kind(tmp_path / "pipe") == "a FIFO"
    assert file_kind("/dev/null") == "a character device"
    assert file_kind(tmp_path / "link") == f"a symbolic link to a FIFO {str(tmp_path / 'pipe')!r}"


def test_file_kind_names_a_socket():
    with contextlib.ExitStack() as stack:
        folder = stack.enter_context(_short_folder())
        server = stack.enter_context(socket.socket(socket.AF_UNIX))
        server.bind(str(folder / "s"))
        assert file_kind(folder / "s") == "a socket"


@contextlib.contextmanager
def _short_folder() -> Iterator[Path]:
    """A folder with a short path (a socket's path has at most about 100 bytes)."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(dir="/tmp", prefix="p5"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def test_check_target_says_what_a_special_file_is(tmp_path):
    """F17: 'is not a regular file, not a file; ... never replaces a folder'."""
    os.mkfifo(tmp_path / "SUMMARY.md")
    with pytest.raises(ValueError) as err:
        check_target(tmp_path / "SUMMARY.md", "the summary")
    assert str(err.value) == (
        f"the summary {str(tmp_path / 'SUMMARY.md')!r} is a FIFO, not a regular file; perfci "
        "writes a file there and replaces only regular files: remove or rename it, or write "
        "elsewhere."
    )


# ------------------------------------------------- F13. a symbolic link at DIR/figures


def test_validate_report_refuses_a_symlinked_figures_folder(tmp_path, capsys):
    results, outside = tmp_path / "results", tmp_path / "outside"
    results.mkdir()
    outside.mkdir()
    _write(_result(), results / "r.nc")
    (results / "figures").symlink_to(outside)
    status, _, err = _cli(capsys, "validate", "report", results, "--formats", "svg")
    _one_line_error(status, err)
    assert "holds a symbolic link figures" in err and str(outside) in err
    assert list(outside.iterdir()) == [] and not (results / "SUMMARY.md").exists()
    # a folder the user names with --figures is the user's choice, wherever it is
    status, _, err = _cli(
        capsys, "validate", "report", results, "--figures", outside, "--formats", "svg"
    )
    assert status == 0, err
    assert sorted(p.name for p in outside.iterdir()) == [
        "coverage_edges.svg",
        "half_width_edges.svg",
    ]


# ------------------------------------------ F18, F41. what is not a result file in DIR


@pytest.mark.parametrize("name", ["aaa.nc", "zzz.nc"])  # before and after the result
def test_a_fifo_among_the_results_is_refused_without_opening_it(tmp_path, capsys, name):
    _write(_result(), tmp_path / "r.nc")
    os.mkfifo(tmp_path / name)
    status, _, err = _cli(capsys, "validate", "report", tmp_path, "--formats", "svg")
    _one_line_error(status, err)
    assert f"{str(tmp_path / name)!r} is a FIFO, not a result file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, "r.nc"])


def test_a_folder_named_like_a_result_is_refused_as_a_folder(tmp_path, capsys):
    _write(_result(), tmp_path / "r.nc")
    (tmp_path / "dir.nc").mkdir()
    status, _, err = _cli(capsys, "validate", "report", tmp_path, "--formats", "svg")
    _one_line_error(status, err)
    assert f"{str(tmp_path / 'dir.nc')!r} is a folder, not a result file" in err
    assert err.rstrip().endswith(".")


def test_validate_report_of_a_file_says_it_is_no_folder(tmp_path, capsys):
    """F42: 'holds no result files (*.nc)' of a file."""
    path = _write(_result(), tmp_path / "r.nc")
    status, _, err = _cli(capsys, "validate", "report", path, "--formats", "svg")
    _one_line_error(status, err)
    assert f"`DIR` {str(path)!r} is a file, not a folder" in err
    assert "holds no result files" not in err
    status, _, err = _cli(capsys, "validate", "report", tmp_path / "none", "--formats", "svg")
    _one_line_error(status, err)
    assert f"`DIR` {str(tmp_path / 'none')!r} does not exist" in err


# ---------------------------------------------------- F16, F17. FIFOs at output files


@pytest.mark.parametrize(
    ("where", "resume"),
    [
        ("tiny-round5.cells/n-10_p-0.6.npy", True),
        ("tiny-round5.cells/n-10_p-0.6.npy", False),
        ("tiny-round5.cells/fingerprint.txt", True),
        ("tiny-round5.nc", False),
    ],
)
def test_validate_run_says_a_fifo_is_a_fifo(tmp_path, capsys, where, resume):
    path, out = _run(tmp_path)
    (out / where).unlink()
    os.mkfifo(out / where)
    before = _files(out)
    flags = ["--resume"] if resume else []
    status, _, err = _cli(capsys, "validate", "run", path, "--out", out, "--quiet", *flags)
    _one_line_error(status, err)
    assert f"holds a FIFO {where} where the run writes a file" in err
    assert "folder" not in err.split("where the run")[0]
    assert _files(out) == before and file_kind(out / where) == "a FIFO"


@pytest.mark.parametrize("where", ["SUMMARY.md", "figures/coverage_edges.svg"])
def test_validate_report_says_a_fifo_is_a_fifo(tmp_path, capsys, where):
    _write(_result(), tmp_path / "r.nc")
    (tmp_path / "figures").mkdir()
    os.mkfifo(tmp_path / where)
    status, _, err = _cli(capsys, "validate", "report", tmp_path, "--formats", "svg")
    _one_line_error(status, err)
    assert f"{str(tmp_path / where)!r} is a FIFO, not a regular file; perfci writes a file" in err
    assert "replaces only regular files" in err and "never replaces a folder" not in err
    assert list((tmp_path / "figures").iterdir()) == (
        [] if where == "SUMMARY.md" else [tmp_path / where]
    )


# ------------------------------------------------------------- F19. a FIFO as the suite


def test_a_fifo_as_the_suite_file_is_not_a_regular_file(tmp_path, capsys):
    os.mkfifo(tmp_path / "suite.toml")
    with _no_hang(), pytest.raises(harness.SuiteError) as err:
        harness.load_suite(tmp_path / "suite.toml")
    assert "is a FIFO, not a regular file" in str(err.value)
    status, _, err_text = _cli(
        capsys, "validate", "run", tmp_path / "suite.toml", "--out", tmp_path / "out", "--quiet"
    )
    _one_line_error(status, err_text)
    assert "is a FIFO, not a regular file" in err_text and "not found" not in err_text
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------- S1. NUL in suite strings


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ('description = "four', 'description = "fo\\u0000ur', "`description`"),
        ('name = "wald"', 'name = "wa\\u0000ld"', "`methods[1].name`"),
        ('name = "tiny-round5"', 'name = "tiny\\u0000"', "`name`"),
    ],
)
def test_a_nul_in_a_suite_string_is_refused_at_load(tmp_path, capsys, old, new, key):
    path = _suite(tmp_path, TINY.replace(old, new))
    with pytest.raises(harness.SuiteError) as err:
        harness.load_suite(path)
    assert key in str(err.value) and "\n" not in str(err.value)
    if key != "`name`":  # the name's pattern refuses it first
        assert "must not hold a NUL character (U+0000)" in str(err.value)
    status, _, err_text = _cli(
        capsys, "validate", "run", path, "--out", tmp_path / "out", "--quiet"
    )
    _one_line_error(status, err_text)
    assert not (tmp_path / "out").exists()  # refused before any work


# --------------------------------------------------- S11. near-duplicate method names


def test_a_dotted_capital_i_does_not_make_another_method_name(tmp_path):
    assert method_name_key("W\u0130LSON") == method_name_key("wilson")
    assert method_name_key("wilson") != method_name_key("wilsen")
    text = TINY.replace('name = "wald"', 'name = "W\u0130LSON"')
    with pytest.raises(harness.SuiteError, match="must differ in more than case"):
        harness.load_suite(_suite(tmp_path, text))


# -------------------------------------------------- H10. a cell identity with a new key


def test_a_cell_identity_with_an_unexpected_key_says_so(tmp_path):
    path, out = _run(tmp_path)
    suite = harness.load_suite(path)
    cell = {"n": 10, "p": 0.6}
    wanted = cell_identity(suite.name, "smoke", cell, harness.suite_fingerprint(suite, "smoke"))
    target = out / "tiny-round5.cells" / "n-10_p-0.6.npy"
    scores = np.load(target)
    write_atomic(target, scores, wanted.replace('"suite":', '"x": 1, "suite":'))
    with pytest.raises(CellFileError) as err:
        read_cell(target, ["wilson", "wald"], 20, identity=wanted)
    message = str(err.value)
    assert "its identity has an unexpected key 'x'" in message
    assert "another cell" not in message
    write_atomic(target, scores, wanted.replace('"scale": "smoke", ', ""))
    with pytest.raises(CellFileError, match="its identity has no key 'scale'"):
        read_cell(target, ["wilson", "wald"], 20, identity=wanted)


# ------------------------------------------- R. result files no run could have written


def _refused(tmp_path, ds, words):
    path = _write(ds, tmp_path / "bad.nc")
    with pytest.raises(ValueError) as err:
        load_result(path)
    message = str(err.value)
    assert message.startswith(f"{str(path)!r} is not a result perfci could have written: ")
    assert words in message and "\n" not in message, message
    return message


def test_the_result_helper_loads(tmp_path):
    load_result(_write(_result(), tmp_path / "good.nc"))


def test_a_result_with_a_repeated_method_is_refused(tmp_path, capsys):
    ds = _result().assign_coords(ci_method=["wilson", "wilson"])
    _refused(tmp_path, ds, "coordinate `ci_method` repeats the method 'wilson'")
    status, _, err = _cli(capsys, "validate", "report", tmp_path, "--formats", "svg")
    _one_line_error(status, err)
    assert "repeats the method 'wilson'" in err and not (tmp_path / "figures").exists()


def test_a_result_with_a_repeated_grid_value_is_refused(tmp_path):
    _refused(tmp_path, _result().assign_coords(n=[10, 10]), "coordinate `n` repeats the value 10")


@pytest.mark.parametrize(
    ("dim", "values", "words"),
    [
        ("p", [0.6, 1.7], "coordinate `p` holds 1.7, which no suite of population kind"),
        ("p", [-0.1, 0.9], "coordinate `p` holds -0.1"),
        ("n", [0, 40], "coordinate `n` holds 0"),
    ],
)
def test_a_result_with_a_grid_value_out_of_range_is_refused(tmp_path, dim, values, words):
    message = _refused(tmp_path, _result().assign_coords({dim: values}), words)
    assert "'bernoulli'" in message and f"`grid.{dim}`" in message


def test_grid_values_of_an_unknown_population_are_not_judged(tmp_path):
    ds = _result(population="{'kind': 'from-a-later-version'}").assign_coords(p=[0.6, 1.7])
    load_result(_write(ds, tmp_path / "later.nc"))


def test_a_result_with_flags_on_a_method_that_never_flags_is_refused(tmp_path):
    ds = _result()
    ds["n_flagged"][0, 1, 1] = 3
    _refused(tmp_path, ds, "`n_flagged` holds 3 for method 'wald' (family 'analytic')")
    ds = ds.assign_coords(family=("ci_method", ["analytic", "bayes"]))
    ds = ds.assign_coords(sampler=("ci_method", ["", "nutpie"]))  # a sampler that flags
    (tmp_path / "ok").mkdir()
    load_result(_write(ds, tmp_path / "ok" / "flags.nc"))


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("exact", 5, "attribute `exact` is 5, not 0 or 1"),
        ("seed", -1, "attribute `seed` is -1, not a non-negative integer"),
        ("resamples", -5, "attribute `resamples` is -5, not a non-negative integer"),
        ("resamples", 2.5, "attribute `resamples` is 2.5, not a non-negative integer"),
        ("confidence_level", "0.95", "attribute `confidence_level` is '0.95', not a number"),
    ],
)
def test_a_result_with_an_impossible_attribute_is_refused(tmp_path, name, value, words):
    ds = _result()
    ds.attrs[name] = value
    _refused(tmp_path, ds, words)


def test_a_method_scored_without_any_coverage_is_refused(tmp_path):
    ds = _result()
    for name in ("coverage", "miss_low", "miss_high"):
        ds[name][..., 0] = np.nan
    message = _refused(tmp_path, ds, "are NaN for method 'wilson' wherever its `n_valid`")
    assert re.search(r"\(1000 in one cell\)", message)


def test_nan_shares_where_no_interval_was_scored_are_accepted(tmp_path):
    ds = _result()
    for name in ("coverage", "miss_low", "miss_high", "mc_se", "mean_half_width"):
        ds[name][..., 0] = np.nan
    ds["n_valid"][..., 0] = 0
    load_result(_write(ds, tmp_path / "none-valid.nc"))
