"""Edges of robustness, third round: files perfci replaces, temporary files a killed
writer left, hand-edited cell files on resume, suites too large to run, method names
that are alike, and person ids too long for a forest plot.

Each class of bug has its policy written where the code is (the docstrings of
:mod:`perfci._core.files`, :func:`perfci.harness.storage.read_cell`,
:func:`perfci.harness.load_suite`, :func:`perfci.plotting.shorten_labels`) and in
``docs/validation.md``; these tests hold the code to it.
"""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import perfci as pc
from perfci import harness, plotting, publishing
from perfci._core.files import (
    TEMPORARY_NAME,
    WriteError,
    is_read_only,
    new_temporary,
    remove_stale_temporaries,
    temporary_writer,
    write_bytes_atomic,
)
from perfci.cli import main
from perfci.harness.schema import MAX_CELLS, MAX_DATA_SETS, method_name_key
from perfci.harness.storage import CellFileError, read_cell, write_text

SUITES = Path(__file__).resolve().parents[1] / "validation" / "suites"

EDGY = """
name = "edgy"
description = "four cells of analytic intervals, in a blink"
seed = 3
[population]
kind = "bernoulli"
[grid]
n = [10, 40]
p = [0.6, 0.9]
[scales.smoke]
replications = 50
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


@pytest.fixture
def edgy(tmp_path):
    path = tmp_path / "edgy.toml"
    path.write_text(EDGY)
    return path


@pytest.fixture(scope="module")
def report():
    texts = pc.load_example()
    return publishing.validation_report(texts["human"], texts["model"], rng=1)


@pytest.fixture
def example_csv(tmp_path):
    path = tmp_path / "texts.csv"
    pc.load_example().to_csv(path, index=False)
    return path


def _cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def _one_line_error(status, err):
    assert status == 2, (status, err)
    assert err.startswith("perfci: error: ") and err.count("\n") == 1, err


def _snapshot(folder: Path) -> dict:
    """Every file under `folder`: its bytes and modification time."""
    return {
        p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file()
    }


# ------------------------------------------------ 1. read-only files and permission bits


def test_is_read_only_means_no_write_bit_or_no_access(tmp_path, monkeypatch):
    path = tmp_path / "report.md"
    assert not is_read_only(path)  # missing: a new file
    assert not is_read_only(tmp_path)  # a folder is refused elsewhere
    path.write_text("old")
    assert not is_read_only(path)
    path.chmod(0o444)  # read-only even to root, whom os.access always allows
    assert is_read_only(path)
    path.chmod(0o644)
    monkeypatch.setattr(os, "access", lambda *a, **k: False)  # another user's file
    assert is_read_only(path)


def test_save_refuses_a_read_only_file_naming_path_and_leaves_it(report, tmp_path):
    target = tmp_path / "report.md"
    target.write_text("the user's own text")
    target.chmod(0o444)
    with pytest.raises(ValueError) as err:
        report.save(target)
    assert str(err.value) == (
        f"`path` {str(target)!r} is a read-only file, which perfci does not replace; make it "
        "writable (chmod u+w) or give another file name."
    )
    assert target.read_text() == "the user's own text"
    assert target.stat().st_mode & 0o777 == 0o444
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]  # no temporary


def test_cli_html_refuses_a_read_only_file_before_any_work(capsys, example_csv, tmp_path):
    target = tmp_path / "report.html"
    target.write_text("keep me")
    target.chmod(0o400)
    argv = ["report", example_csv, "--truth", "human", "--pred", "model", "--html", target]
    start = time.monotonic()
    status, out, err = _cli(capsys, *argv)
    _one_line_error(status, err)
    assert out == "" and time.monotonic() - start < 5
    assert f"`--html` {str(target)!r} is a read-only file, which perfci does not replace" in err
    assert target.read_text() == "keep me"


def test_save_keeps_the_permission_bits_of_the_file_it_replaces(report, tmp_path):
    old = os.umask(0o022)
    try:
        fresh = report.save(tmp_path / "new.md")
        private = tmp_path / "private.md"
        private.write_text("old")
        private.chmod(0o600)
        report.save(private)
        shared = tmp_path / "shared.md"
        shared.write_text("old")
        shared.chmod(0o664)
        report.save(shared)
    finally:
        os.umask(old)
    assert fresh.stat().st_mode & 0o777 == 0o644  # a new file: the umask's default
    assert private.stat().st_mode & 0o777 == 0o600 and private.read_text() != "old"
    assert shared.stat().st_mode & 0o777 == 0o664 and shared.read_text() != "old"


def test_cli_html_keeps_a_private_reports_mode(capsys, example_csv, tmp_path):
    target = tmp_path / "report.html"
    target.write_text("old")
    target.chmod(0o600)
    argv = ["report", example_csv, "--truth", "human", "--pred", "model", "--html", target]
    status, _, err = _cli(capsys, *argv, "--seed", "1")
    assert status == 0, err
    assert target.read_text().startswith("<!DOCTYPE html>")
    assert target.stat().st_mode & 0o777 == 0o600


def test_every_atomic_writer_refuses_a_read_only_file_and_keeps_modes(tmp_path):
    # write_bytes_atomic is under every output: cells, results, SUMMARY.md, figures
    summary = tmp_path / "SUMMARY.md"
    summary.write_text("old summary")
    summary.chmod(0o444)
    with pytest.raises(WriteError) as err:
        write_text(summary, "new")
    assert str(err.value) == (
        f"could not write {summary}: it is a read-only file, which perfci does not replace "
        "(make it writable, or remove it)"
    )
    assert summary.read_text() == "old summary"
    cell = tmp_path / "n-10_p-0.6.npy"
    harness.storage.write_atomic(cell, np.zeros((2, 6)))
    cell.chmod(0o640)
    harness.storage.write_atomic(cell, np.ones((2, 6)))
    assert cell.stat().st_mode & 0o777 == 0o640 and np.load(cell).sum() == 12
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, _ = plt.subplots()
    figure = tmp_path / "curve.png"
    figure.write_bytes(b"old")
    figure.chmod(0o444)
    try:
        with pytest.raises(WriteError, match=r"curve\.png: it is a read-only file"):
            plotting.save_figure(fig, figure)
    finally:
        plt.close(fig)
    assert figure.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["SUMMARY.md", "curve.png", cell.name]


def test_run_refuses_a_read_only_result_before_any_work(edgy, tmp_path, capsys):
    suite = harness.load_suite(edgy)
    out = tmp_path / "out"
    harness.run_suite(suite, "smoke", out)
    result = out / "edgy.nc"
    result.chmod(0o444)
    before = _snapshot(out)
    with pytest.raises(ValueError) as err:
        harness.run_suite(suite, "smoke", out)  # not resumed: it would delete the cells
    assert str(err.value) == (
        f"`out` {str(out)!r} holds a read-only result file edgy.nc, which perfci does not "
        "replace; make it writable (chmod u+w) or write to another folder."
    )
    assert _snapshot(out) == before  # not a cell deleted, nothing written
    status, _, err = _cli(capsys, "validate", "run", edgy, "--out", out, "--quiet")
    _one_line_error(status, err)
    assert "`--out`" in err and "read-only result file edgy.nc" in err
    assert _snapshot(out) == before
    # a result that may be written keeps its mode when it is replaced
    result.chmod(0o600)
    harness.run_suite(suite, "exact", out)
    assert result.stat().st_mode & 0o777 == 0o600


# ------------------------------------------------------ 2. temporary files of killed writers


def test_temporary_files_name_their_writer(tmp_path):
    fd, tmp = new_temporary(tmp_path / "report.html")
    os.close(fd)
    assert TEMPORARY_NAME.fullmatch(tmp.name) and tmp.name.startswith(".report.html.")
    assert temporary_writer(tmp.name) == os.getpid()
    assert temporary_writer(".report.html.0a1b2c3d.tmp") is None  # an earlier version's
    assert temporary_writer("report.html") is None
    long = tmp_path / ("x" * 250 + ".npy")  # the temporary's name stays within 255 bytes
    fd, tmp = new_temporary(long)
    os.close(fd)
    assert len(tmp.name) < 255 and temporary_writer(tmp.name) == os.getpid()


def test_save_removes_a_dead_writers_temporary_and_keeps_a_live_ones(report, tmp_path, dead_pid):
    dead, live = dead_pid, os.getpid()
    stale = tmp_path / f".report.md.{dead}.0a1b2c3d.tmp"
    mine = tmp_path / f".report.md.{live}.0a1b2c3d.tmp"
    others = [tmp_path / ".notes.tmp", tmp_path / "notes.tmp", tmp_path / ".cache.0a1b2c3d.tmp"]
    for path in (stale, mine, *others):
        path.write_text("torn")
    report.save(tmp_path / "report.md")
    assert not stale.exists()
    assert mine.exists()  # a live process's: never deleted
    assert all(p.exists() for p in others)  # not named after a writer: not ours to delete
    assert remove_stale_temporaries(tmp_path) == []


def test_save_figure_removes_a_dead_writers_temporary(tmp_path, dead_pid):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stale = tmp_path / f".curve.png.{dead_pid}.deadbeef.tmp"
    stale.write_bytes(b"torn")
    fig, _ = plt.subplots()
    plotting.save_figure(fig, tmp_path / "curve", close=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curve.png"]


def test_an_interrupted_write_removes_its_temporary(tmp_path, monkeypatch):
    target = tmp_path / "report.md"
    target.write_text("old")

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_bytes_atomic(target, b"new")
    monkeypatch.undo()
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


# A writer that stops in the middle of a write (before the rename) until it is signalled.
STUCK_WRITER = """
import os, signal, sys, time
from pathlib import Path
from perfci._core import files

# as an interactive process has them, whatever the test runner's were
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)

def stuck(fd):
    print("writing", flush=True)
    time.sleep(60)

os.fsync = stuck
files.write_bytes_atomic(Path(sys.argv[1]), b"half of a report")
"""


def _stuck_writer(target: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", STUCK_WRITER, str(target)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout.readline() == "writing\n"
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_writers_temporary_is_removed_by_the_next_save(report, tmp_path, sig):
    target = tmp_path / "report.md"
    proc = _stuck_writer(target)
    (tmp,) = tmp_path.glob(".report.md.*.tmp")
    assert temporary_writer(tmp.name) == proc.pid
    mine = tmp_path / f".report.md.{os.getpid()}.0a1b2c3d.tmp"
    mine.write_text("a write in progress")
    # still writing: a save beside it keeps its temporary
    report.save(tmp_path / "other.md")
    assert tmp.exists()
    proc.send_signal(sig)  # Python runs no `finally` on SIGTERM or SIGKILL
    proc.wait(timeout=30)
    proc.stdout.close()
    assert tmp.exists() and not target.exists()
    report.save(target)
    assert not tmp.exists() and mine.exists()
    assert target.read_text() == report.to_markdown()


def test_an_interrupted_writer_removes_its_own_temporary(tmp_path):
    proc = _stuck_writer(tmp_path / "report.md")
    proc.send_signal(signal.SIGINT)  # a KeyboardInterrupt: the write's `finally` runs
    proc.wait(timeout=30)
    proc.stdout.close()
    assert proc.returncode != 0
    assert list(tmp_path.iterdir()) == []


def test_a_run_removes_dead_writers_temporaries_and_keeps_live_ones(edgy, tmp_path, dead_pid):
    suite = harness.load_suite(edgy)
    harness.run_suite(suite, "smoke", tmp_path)
    cells = tmp_path / "edgy.cells"
    dead, live = dead_pid, os.getpid()
    gone = [
        tmp_path / f".edgy.nc.{dead}.0a1b2c3d.tmp",
        cells / f".n-10_p-0.6.npy.{dead}.0a1b2c3d.tmp",
    ]
    kept = [
        tmp_path / f".SUMMARY.md.{live}.0a1b2c3d.tmp",  # e.g. `validate report` writing
        cells / f".n-10_p-0.6.npy.{live}.0a1b2c3d.tmp",
        # names without a writer's pid may be the user's own files: never deleted
        tmp_path / ".edgy.nc.0a1b2c3d.tmp",
        cells / "tmpq9w8e7.tmp",
    ]
    for path in (*gone, *kept):
        path.write_bytes(b"torn")
    harness.run_suite(suite, "smoke", tmp_path, resume=True)
    assert not any(p.exists() for p in gone)
    assert all(p.exists() for p in kept)


# --------------------------------------------------------- 3. hand-edited cells on resume


def _edit(change):
    """Change the first row (the method 'wilson') of a cell."""

    def edit(cell):
        cell = cell.copy()
        cell[0] = change(cell[0])
        return cell

    return edit


BAD_CELLS = [
    (
        lambda c: c[:, :5],
        "its shape is (2, 5), not (2, 6) (methods, scores)",
    ),
    (
        _edit(lambda r: r + [3, 0, 0, 0, 0, 0]),  # coverage above 1
        "method 'wilson' has hits + misses below + misses above = 53, not n_valid 50",
    ),
    (
        _edit(lambda r: r + [0, 5, 0, 0, 0, 0]),  # misses that do not sum
        "method 'wilson' has hits + misses below + misses above = 55, not n_valid 50",
    ),
    (
        _edit(lambda r: r + [100, 0, 0, 0, 100, 0]),
        "method 'wilson' has n_valid 150, more than the scale's 50 replications",
    ),
    (
        _edit(lambda r: r * [1, 1, 1, 1, 1, 0] + [0, 0, 0, 0, 0, 51]),
        "method 'wilson' has flags 51, more than the scale's 50 replications",
    ),
    (
        _edit(lambda r: r + [r[1] + 1, -r[1] - 1, 0, 0, 0, 0]),  # still sums to n_valid
        "method 'wilson' has misses below -1.0, not a non-negative integer",
    ),
    (
        _edit(lambda r: r * [0, 1, 1, 1, 1, 1] + [10.5, 0, 0, 0, 0, 0]),
        "method 'wilson' has hits 10.5, not a non-negative integer",
    ),
    (
        _edit(lambda r: r * [1, 1, 1, np.nan, 1, 1]),
        "method 'wilson' has half-width sum nan, not a finite number >= 0",
    ),
    (
        _edit(lambda r: r * [1, 1, 1, -1, 1, 1]),
        "method 'wilson' has half-width sum -",
    ),
    (lambda c: c > 0, "it holds bool, not real numbers"),
    (lambda c: np.array([{"hits": 1}], dtype=object), "it is not a .npy array (Object arrays"),
]


@pytest.mark.parametrize(("edit", "what"), BAD_CELLS)
def test_resume_refuses_a_hand_edited_cell_naming_it_and_overwrites_nothing(
    edgy, tmp_path, edit, what
):
    suite = harness.load_suite(edgy)
    harness.run_suite(suite, "smoke", tmp_path)
    cell = tmp_path / "edgy.cells" / "n-10_p-0.6.npy"
    np.save(cell, edit(np.load(cell)), allow_pickle=True)
    before = _snapshot(tmp_path)
    with pytest.raises(CellFileError) as err:
        harness.run_suite(suite, "smoke", tmp_path, resume=True)
    message = str(err.value)
    assert message.startswith(f"cell file {cell} cannot be resumed: {what}"), message
    assert message.endswith(
        "; delete it to compute that cell again, or run without `resume` to start again."
    )
    assert "\n" not in message
    assert _snapshot(tmp_path) == before  # nothing recomputed, nothing overwritten


def test_resume_refuses_a_cell_that_is_not_an_array_on_the_command_line(edgy, tmp_path, capsys):
    suite = harness.load_suite(edgy)
    harness.run_suite(suite, "smoke", tmp_path)
    cell = tmp_path / "edgy.cells" / "n-40_p-0.9.npy"
    cell.write_bytes(b"not numpy at all")
    before = _snapshot(tmp_path)
    argv = ["validate", "run", edgy, "--out", tmp_path, "--resume", "--quiet"]
    status, out, err = _cli(capsys, *argv)
    _one_line_error(status, err)
    assert f"cell file {cell} cannot be resumed: it is not a .npy array" in err
    assert "run without `--resume` to start again" in err and out == ""
    assert _snapshot(tmp_path) == before
    # the policy's way out: delete the file and that cell alone is computed again
    cell.unlink()
    assert harness.run_suite(suite, "smoke", tmp_path, resume=True).equals(
        harness.run_suite(suite, "smoke", tmp_path / "fresh")
    )


def test_read_cell_takes_what_runs_write(edgy, tmp_path):
    suite = harness.load_suite(edgy)
    harness.run_suite(suite, "smoke", tmp_path)
    names = [m.name for m in suite.methods]
    for path in (tmp_path / "edgy.cells").glob("*.npy"):
        np.testing.assert_array_equal(read_cell(path, names, 50), np.load(path))


def test_read_cell_of_simultaneous_sets(tmp_path):
    # a set of several intervals can miss below on one and above on another
    path = tmp_path / "cell.npy"
    np.save(path, np.array([[5.0, 3, 2, 1.5, 9, 0]]))  # 4 sets missed: 3 below, 2 above
    read_cell(path, ["tukey"], 10, sets=True)
    with pytest.raises(CellFileError, match=re.escape("hits + misses below + misses above")):
        read_cell(path, ["tukey"], 10)  # single intervals: 5 + 3 + 2 is not 9
    np.save(path, np.array([[5.0, 3, 2, 1.5, 10.0 + 1, 0]]))
    with pytest.raises(CellFileError, match="more than the scale's 10 replications"):
        read_cell(path, ["tukey"], 10, sets=True)
    np.save(path, np.array([[2.0, 3, 2, 1.5, 10, 0]]))  # 8 missed, but at most 5 misses
    with pytest.raises(CellFileError, match=r"misses below 3 and above 2, which cannot make"):
        read_cell(path, ["tukey"], 10, sets=True)


# ----------------------------------------------------------------- 4. suites too large to run


def test_a_grid_of_ten_billion_cells_is_refused_at_once(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text(
        EDGY.replace("n = [10, 40]", "n = { start = 1, stop = 100000, step = 1 }").replace(
            "p = [0.6, 0.9]", "p = { start = 0.00001, stop = 0.99999, step = 0.00001 }"
        )
    )
    start = time.monotonic()
    with pytest.raises(harness.SuiteError) as err:
        harness.load_suite(path)
    assert time.monotonic() - start < 10
    assert str(err.value) == (
        "suite big.toml: `scales.smoke` has 9999900000 cells (100000 n x 99999 p), more than "
        "100000; give its grid fewer values."
    )


def test_a_scale_grid_and_too_many_data_sets_are_refused(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text(
        EDGY.replace(
            "exact = true", "exact = true\ngrid = { n = { start = 1, stop = 60000, step = 1 } }"
        )
    )
    with pytest.raises(harness.SuiteError) as err:
        harness.load_suite(path)
    assert str(err.value) == (
        "suite big.toml: `scales.exact` has 120000 cells (60000 n x 2 p), more than 100000; "
        "give its grid fewer values."
    )
    path.write_text(EDGY.replace("replications = 50", "replications = 300000000"))
    with pytest.raises(harness.SuiteError) as err:
        harness.load_suite(path)
    assert str(err.value) == (
        "suite big.toml: `scales.smoke` simulates 1200000000 data sets (4 cells x 300000000 "
        "replications), more than 1000000000; ask for fewer replications or cells."
    )
    # at the limits, a suite loads
    path.write_text(
        EDGY.replace("n = [10, 40]", "n = { start = 1, stop = 50000, step = 1 }").replace(
            "replications = 50", "replications = 10000"
        )
    )
    suite = harness.load_suite(path)
    assert len(suite.dims("smoke")["n"]) * 2 == MAX_CELLS
    assert MAX_CELLS * 10_000 == MAX_DATA_SETS


def test_shipped_suites_are_well_under_the_limits():
    for name in harness.list_suites(SUITES):
        suite = harness.load_suite(SUITES / f"{name}.toml")
        for scale, spec in suite.scales.items():
            cells = int(np.prod([len(v) for v in suite.dims(scale).values()]))
            assert cells <= MAX_CELLS / 10, (name, scale)
            assert cells * spec.replications <= MAX_DATA_SETS / 100, (name, scale)


# ------------------------------------------------------------------ 5. method names alike


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (
            "Wilson",
            "`methods` names must differ in more than case, '-', '_', spaces and Unicode "
            "form (NFKC); 'wilson' "
            "(methods[0]) and 'Wilson' (methods[2]) do not.",
        ),
        (
            "WILSON",
            "`methods` names must differ in more than case, '-', '_', spaces and Unicode "
            "form (NFKC); 'wilson' "
            "(methods[0]) and 'WILSON' (methods[2]) do not.",
        ),
        ("wilson ", "`methods[2].name` must not begin or end with whitespace; got 'wilson '."),
        ("\twald", "`methods[2].name` must not begin or end with whitespace; got '\\twald'."),
        ("wilson", "`methods` names must be unique; repeated: ['wilson']."),
    ],
)
def test_method_names_that_are_alike_are_refused_naming_both(tmp_path, second, message):
    path = tmp_path / "alike.toml"
    path.write_text(
        EDGY + f'[[methods]]\nname = "{second}"\nfamily = "analytic"\nmethod = "jeffreys"\n'
    )
    with pytest.raises(harness.SuiteError) as err:
        harness.load_suite(path)
    assert str(err.value) == f"suite alike.toml: {message}"


def test_dashes_underscores_and_spaces_are_alike_in_method_names(tmp_path):
    assert method_name_key("agresti-coull") == method_name_key("Agresti_Coull")
    assert method_name_key("wilson cc") == method_name_key("wilson__cc")
    assert method_name_key("wilson") != method_name_key("wilsoncc")
    path = tmp_path / "alike.toml"
    path.write_text(
        EDGY.replace('name = "wald"', 'name = "agresti_coull"')
        + '[[methods]]\nname = "agresti - coull"\nfamily = "analytic"\nmethod = "jeffreys"\n'
    )
    with pytest.raises(harness.SuiteError, match=r"'agresti_coull' \(methods\[1\]\) and "):
        harness.load_suite(path)
    # distinct names (and names with inner spaces) still load
    path.write_text(
        EDGY + '[[methods]]\nname = "wilson cc"\nfamily = "analytic"\nmethod = "jeffreys"\n'
    )
    assert [m.name for m in harness.load_suite(path).methods] == ["wilson", "wald", "wilson cc"]


# -------------------------------------------------------------- 6. long ids in the forest


def _ticks(ax):
    return [t.get_text() for t in ax.get_yticklabels()]


def test_long_person_ids_are_shortened_in_the_middle_and_stay_distinct():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ids = [
        "p1",
        "participant-2023-0001-of-the-spring-cohort-at-berlin",
        "participant-2023-0002-of-the-spring-cohort-at-berlin",
        "participant-2023-0003-of-the-autumn-cohort-at-munich",
        "x" * plotting.FOREST_MAX_LABEL,  # at the maximum: kept whole
    ]
    est = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    ax = plotting.forest(est, est - 0.1, est + 0.05, labels=ids)
    ticks = _ticks(ax)
    plt.close(ax.figure)
    assert ticks == [
        "p1",
        "participan…-at-berlin #1",
        "participan…-at-berlin #2",
        "participant-…t-at-munich",
        "x" * 24,
    ]
    assert all(len(t) <= plotting.FOREST_MAX_LABEL for t in ticks)
    assert len(set(ticks)) == len(ids)
    # sorted rows carry their own ids' labels
    ax = plotting.forest(est[::-1], est[::-1] - 0.1, est[::-1] + 0.05, labels=ids)
    assert _ticks(ax) == ticks[::-1]
    plt.close(ax.figure)


def test_shorten_labels_keeps_equal_labels_equal_and_escaped_dollars_whole():
    long = "a-very-long-person-identifier-" * 2
    assert plotting.shorten_labels([long, long, "b"]) == [long[:12] + "…" + long[-11:]] * 2 + ["b"]
    # a label as the report passes it, a dollar escaped for matplotlib: never split
    dollars = plotting.shorten_labels([r"\$" * 40, "$5 " * 3])
    assert dollars[0] == r"\$" * 12 + "…" + r"\$" * 11
    assert not re.search(r"(?<!\\)\$", dollars[0]) and dollars[1] == "$5 " * 3
    # a short label that looks like a shortened one stays as it is; the long one is tagged
    long = "participant-2023-0003-of-the-autumn-cohort-at-munich"
    twins = plotting.shorten_labels(["participant-…t-at-munich", long])
    assert twins == ["participant-…t-at-munich", "participan…-at-munich #2"]
    with pytest.raises(ValueError, match=r"`width` must be an integer at least 8; got 3"):
        plotting.shorten_labels(["x"], 3)
