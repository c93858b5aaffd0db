"""Fault tests of the validation harness: kills, lost workers, failed writes, a full disk,
two runs on one folder, cells that cannot be resumed, schedulers that are not Dask, and
requests too large for memory.

The tests that run whole suites in subprocesses or Dask workers are marked slow.
"""

import errno
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import xarray as xr

from perfci import harness
from perfci.harness.storage import StaleLockWarning

SUITE = """
name = "faulty"
description = "a suite slow enough to be interrupted"
seed = 11
[population]
kind = "bernoulli"
[grid]
n = [10, 20, 30, 40, 50, 60, 70, 80]
p = [0.7, 0.9]
[scales.smoke]
replications = 3000
resamples = 200
[[methods]]
name = "wilson"
family = "analytic"
method = "wilson"
[[methods]]
name = "bca"
family = "bootstrap"
interval = "bca"
"""


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "faulty.toml"
    path.write_text(SUITE)
    return path


@pytest.mark.slow
def test_sigkill_then_resume_is_bitwise_identical(suite_file, tmp_path):
    reference = harness.run_suite(harness.load_suite(suite_file), "smoke", tmp_path / "ref")
    out = tmp_path / "killed"
    code = (
        "import sys; from perfci import harness; "
        f"harness.run_suite(harness.load_suite({str(suite_file)!r}), 'smoke', "
        f"{str(out)!r})"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    cells = out / "faulty.cells"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(cells.glob("*.npy"))) < 3:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = {p.name: p.stat().st_mtime_ns for p in cells.glob("*.npy")}
    assert 0 < len(finished) < 16, "the run must be interrupted part way"
    # the killed run's lock file is left behind; it is taken over, with a note
    with pytest.warns(StaleLockWarning, match=rf"of pid {proc.pid} \(no longer running"):
        resumed = harness.run_suite(harness.load_suite(suite_file), "smoke", out, resume=True)
    xr.testing.assert_identical(reference, resumed)
    assert not (out / "perfci.lock").exists()
    assert not list(cells.glob("*.tmp"))  # a torn temporary file is cleaned up
    # nothing that had finished was computed again
    assert all((cells / name).stat().st_mtime_ns == t for name, t in finished.items())


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_killed_dask_worker_does_not_change_the_result(suite_file, tmp_path):
    from dask.distributed import Client, LocalCluster

    suite = harness.load_suite(suite_file)
    reference = harness.run_suite(suite, "smoke", tmp_path / "ref")
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", scheduler_port=0
    )
    client = Client(cluster)
    try:
        pids = list(client.run(os.getpid).values())

        def kill_one():
            time.sleep(1.0)
            os.kill(pids[0], signal.SIGKILL)  # the nanny starts a new worker

        killer = threading.Thread(target=kill_one)
        killer.start()
        result = harness.run_suite(
            suite, "smoke", tmp_path / "dask", scheduler=cluster.scheduler_address
        )
        killer.join()
    finally:
        client.close()
        cluster.close()
    xr.testing.assert_identical(reference, result)


@pytest.mark.slow
def test_a_failed_write_leaves_no_result_file(suite_file, tmp_path, monkeypatch):
    suite = harness.load_suite(suite_file)
    good = harness.run_suite(suite, "smoke", tmp_path)
    target = tmp_path / "faulty.nc"
    before = target.read_bytes()

    def half_written(fd, *args):
        os.write(fd, b"half a file")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(harness.storage.os, "posix_fallocate", half_written)
    with pytest.raises(OSError, match=r"could not write .*faulty.nc: No space left on device"):
        harness.run_suite(suite, "smoke", tmp_path, resume=True)
    assert target.read_bytes() == before  # the earlier result is untouched
    assert not list(tmp_path.glob("*.tmp"))  # and no partial file is left behind
    monkeypatch.undo()
    with xr.open_dataset(target, engine="h5netcdf") as ds:
        np.testing.assert_array_equal(ds["coverage"].values, good["coverage"].values)


def test_a_failed_cell_write_leaves_no_cell_file(tmp_path, monkeypatch):
    array = np.arange(6.0)
    path = tmp_path / "cell.npy"

    def broken_save(f, a):
        f.write(b"torn")
        raise OSError("disk full")

    monkeypatch.setattr(np, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        harness.storage.write_atomic(path, array)
    assert not path.exists() and not list(tmp_path.iterdir())


# ------------------------------------------------------------------ small and quick suites

QUICK = """
name = "quick"
description = "four cells in a blink"
seed = 5
[population]
kind = "bernoulli"
[grid]
n = [10, 40]
p = [0.6, 0.9]
[scales.smoke]
replications = 50
resamples = 50
[[methods]]
name = "wilson"
family = "analytic"
method = "wilson"
[[methods]]
name = "percentile"
family = "bootstrap"
interval = "percentile"
"""


@pytest.fixture
def quick(tmp_path):
    path = tmp_path / "quick.toml"
    path.write_text(QUICK)
    return path


def _cli(*args, timeout=60, **kwargs):
    """Run the command line in a new process; return (status, stdout, stderr, seconds)."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "perfci", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


def _one_line_error(status, err):
    assert status == 2, (status, err)  # bad input or a failed write: never a crash (< 0)
    assert err.startswith("perfci: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


# ------------------------------------------------------------------- the output folder lock


def test_a_run_refuses_a_folder_whose_lock_is_held_naming_the_pid(quick, tmp_path):
    out = tmp_path / "out"
    with harness.folder_lock(out):
        with pytest.raises(harness.FolderInUseError) as err:
            harness.run_suite(harness.load_suite(quick), "smoke", out)
        assert err.value.pid == os.getpid()
        assert str(err.value) == (
            f"output folder {out} is in use by another run (pid {os.getpid()}), which holds "
            f"{out / 'perfci.lock'}; wait for it to finish or write to another folder."
        )
        assert sorted(p.name for p in out.iterdir()) == ["perfci.lock"]  # nothing written
    assert not (out / "perfci.lock").exists()  # released, and removed
    harness.run_suite(harness.load_suite(quick), "smoke", out)
    assert sorted(p.name for p in out.iterdir()) == ["quick.cells", "quick.nc"]


@pytest.mark.slow
def test_two_runs_on_one_folder_the_second_refuses_naming_the_first_pid(suite_file, tmp_path):
    out = tmp_path / "out"
    first = subprocess.Popen(
        [sys.executable, "-m", "perfci", "validate", "run", str(suite_file), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        lock = out / "perfci.lock"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and harness.storage._read_pid(lock) != first.pid:
            time.sleep(0.02)
        assert harness.storage._read_pid(lock) == first.pid
        status, out_, err, _ = _cli("validate", "run", str(suite_file), "--out", str(out))
        _one_line_error(status, err)
        assert f"is in use by another run (pid {first.pid})" in err
        assert first.poll() is None  # the first run goes on
        cells = {p.name: p.stat().st_mtime_ns for p in (out / "faulty.cells").glob("*.npy")}
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    # the killed run's lock is stale: the next run takes it over, says so, and resumes
    status, out_, err, _ = _cli(
        "validate", "run", str(suite_file), "--out", str(out), "--resume", "--quiet"
    )
    assert status == 0, err
    assert f"perfci: warning: took over the lock {lock} of pid {first.pid}" in err
    assert all((out / "faulty.cells" / n).stat().st_mtime_ns == t for n, t in cells.items())
    assert not lock.exists()


# ------------------------------------------------------------- resume and its fingerprint


def test_resume_refuses_cells_without_a_fingerprint_or_with_a_foreign_one(quick, tmp_path):
    suite = harness.load_suite(quick)
    harness.run_suite(suite, "smoke", tmp_path)
    cells = tmp_path / "quick.cells"
    kept = sorted(p.name for p in cells.iterdir())
    (cells / "fingerprint.txt").unlink()  # as a run of an older version left its cells
    with pytest.raises(ValueError) as err:
        harness.run_suite(suite, "smoke", tmp_path, resume=True)
    assert str(err.value) == (
        f"{cells} holds cell files but no fingerprint.txt, so their suite, seed and scale "
        "are unknown and they cannot be resumed; run without `resume` to start again."
    )
    (cells / "fingerprint.txt").write_bytes(b"\xff not a fingerprint")
    with pytest.raises(ValueError, match="holds cells of another version of suite 'quick'"):
        harness.run_suite(suite, "smoke", tmp_path, resume=True)
    assert sorted(p.name for p in cells.iterdir()) == kept  # nothing was deleted
    # on the command line: one line, status 2; a fresh run (no --resume) starts again
    status, _, err, _ = _cli("validate", "run", str(quick), "--out", str(tmp_path), "--resume")
    _one_line_error(status, err)
    assert "holds cells of another version of suite 'quick'" in err
    fresh = harness.run_suite(suite, "smoke", tmp_path)
    assert (cells / "fingerprint.txt").read_text() == harness.suite_fingerprint(suite, "smoke")
    assert int(fresh["n_valid"].min()) == 50


def test_resume_with_nothing_to_resume_starts_a_run(quick, tmp_path):
    ds = harness.run_suite(harness.load_suite(quick), "smoke", tmp_path / "new", resume=True)
    assert int(ds["n_valid"].min()) == 50


def test_a_killed_runs_temporary_files_are_removed(quick, tmp_path, dead_pid):
    suite = harness.load_suite(quick)
    harness.run_suite(suite, "smoke", tmp_path)
    dead = dead_pid
    torn = [  # ours: named with the pid of a writer that is gone
        tmp_path / f".quick.nc.{dead}.0a1b2c3d.tmp",
        tmp_path / "quick.cells" / f".n-10_p-0.6.npy.{dead}.0a1b2c3d.tmp",
    ]
    for path in torn:
        path.write_bytes(b"torn")
    not_ours = [tmp_path / "notes.tmp.txt", tmp_path / "tmpk2j3h4.nc.tmp"]
    for path in not_ours:
        path.write_text("not ours")
    harness.run_suite(suite, "smoke", tmp_path, resume=True)
    assert not any(p.exists() for p in torn)
    assert all(p.exists() for p in not_ours)


# --------------------------------------------------------------------- files and their modes


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_files_are_written_with_the_users_umask(quick, tmp_path, umask):
    old = os.umask(umask)
    try:
        harness.run_suite(harness.load_suite(quick), "smoke", tmp_path)
    finally:
        os.umask(old)
    files = [tmp_path / "quick.nc", *(tmp_path / "quick.cells").iterdir()]
    assert len(files) == 6
    for path in files:
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask, path


@pytest.mark.slow
def test_a_suite_name_that_is_a_path_writes_nothing(tmp_path):
    for name in ("../escaped", "/tmp/escaped", "sub/escaped", ".."):
        path = tmp_path / "suite.toml"
        path.write_text(QUICK.replace('name = "quick"', f"name = {name!r}".replace("'", '"')))
        out = tmp_path / "deep" / "out"
        status, _, err, _ = _cli("validate", "run", str(path), "--out", str(out))
        _one_line_error(status, err)
        assert "suite suite.toml: `name` must be a name of letters, digits" in err
        assert not (tmp_path / "deep").exists()
        assert not list(tmp_path.rglob("escaped*"))


def test_report_writes_inside_its_folder(quick, tmp_path, monkeypatch):
    harness.run_suite(harness.load_suite(quick), "smoke", tmp_path / "res")
    work = tmp_path / "elsewhere"
    work.mkdir()
    monkeypatch.chdir(work)
    from perfci.cli import main

    assert main(["validate", "report", str(tmp_path / "res")]) == 0
    assert list(work.iterdir()) == []  # nothing in the working directory
    assert (tmp_path / "res" / "SUMMARY.md").exists()


# ------------------------------------------------------------------------------ a full disk


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MB tmpfs mounted for the test (root and mount(8) needed; skipped otherwise)."""
    import shutil

    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", str(disk)],
        capture_output=True,
    )
    if done.returncode != 0:
        pytest.skip(f"could not mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(disk):
    """Fill the disk: a file grows until the system says there is no space left."""
    with open(disk / "filler", "ab", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


@pytest.mark.slow
def test_a_full_disk_at_the_final_write_is_one_line_and_leaves_nothing_torn(quick, small_disk):
    out = small_disk / "out"
    harness.run_suite(harness.load_suite(quick), "smoke", out)
    before = (out / "quick.nc").read_bytes()
    cells = sorted((out / "quick.cells").iterdir())
    _fill(small_disk)
    argv = ("validate", "run", str(quick), "--out", str(out), "--resume", "--quiet")
    status, stdout, err, _ = _cli(*argv)
    _one_line_error(status, err)
    assert f"could not write {out / 'quick.nc'}: No space left on device" in err
    assert f"every cell is kept in {out / 'quick.cells'}" in err
    assert stdout == ""
    assert (out / "quick.nc").read_bytes() == before  # the earlier result is untouched
    assert sorted((out / "quick.cells").iterdir()) == cells
    assert not list(out.rglob("*.tmp")) and not (out / "perfci.lock").exists()
    # with no earlier result, none is left, not even an empty one
    (out / "quick.nc").unlink()
    _fill(small_disk)
    status, _, err, _ = _cli(*argv)
    _one_line_error(status, err)
    assert not (out / "quick.nc").exists() and not list(out.rglob("*.tmp"))
    # once there is room, the run resumes from every cell
    (small_disk / "filler").unlink()
    status, stdout, err, _ = _cli(*argv)
    assert status == 0, err
    with xr.open_dataset(out / "quick.nc", engine="h5netcdf") as ds:
        assert ds.attrs["suite"] == "quick"


# ------------------------------------------------------------ schedulers that are not Dask


@pytest.fixture
def fake_service():
    """Start TCP servers on loopback that accept and send `payload` (then hang or close)."""
    import socket

    servers, held = [], []

    def start(payload=b"", close=False):
        server = socket.create_server(("127.0.0.1", 0))
        servers.append(server)

        def serve():
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return
                if payload:
                    conn.sendall(payload)
                if close:
                    conn.close()
                else:
                    held.append(conn)

        threading.Thread(target=serve, daemon=True).start()
        return f"tcp://127.0.0.1:{server.getsockname()[1]}"

    yield start
    for sock in [*held, *servers]:
        sock.close()


def _closed_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


GARBAGE = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" + bytes(range(256)) * 8


def test_a_scheduler_that_is_not_dask_is_a_clear_error_within_10_s(quick, tmp_path, fake_service):
    suite = harness.load_suite(quick)
    cases = [
        (
            fake_service(GARBAGE),
            "is not a Dask scheduler: its first message is not a Dask handshake",
        ),
        (fake_service(b"\x05" + bytes(7) + b"hello"), "its first message is not a Dask handshake"),
        (fake_service(close=True), "it closed the connection without a Dask handshake"),
        (_closed_port(), "refused the connection (nothing listens there)"),
        ("tcp://127.0.0.1:99999", "is not an address of the form tcp://HOST:PORT"),
    ]
    for address, reason in cases:
        start = time.monotonic()
        with pytest.raises(harness.SchedulerError) as err:
            harness.run_suite(suite, "smoke", tmp_path / "out", scheduler=address)
        assert time.monotonic() - start < 10
        assert str(err.value).startswith(f"`scheduler` {address!r} ") and reason in str(err.value)
        assert not (tmp_path / "out").exists()  # nothing is written
    silent = fake_service()
    start = time.monotonic()
    with pytest.raises(harness.SchedulerError) as err:
        harness.check_scheduler(silent, timeout=1)
    assert 1 <= time.monotonic() - start < 3
    assert err.value.reason == "is not a Dask scheduler: it sent no Dask handshake within 1 s"


def test_cli_scheduler_that_is_not_dask_exits_2_naming_the_flag(quick, tmp_path, fake_service):
    address = fake_service(GARBAGE)
    argv = ("validate", "run", str(quick), "--out", str(tmp_path / "o"), "--scheduler", address)
    status, _, err, seconds = _cli(*argv, timeout=30)
    _one_line_error(status, err)
    assert err == (
        f"perfci: error: `--scheduler` {address!r} is not a Dask scheduler: its first "
        "message is not a Dask handshake.\n"
    )
    assert seconds < 10


@pytest.mark.slow
def test_cli_scheduler_that_says_nothing_gives_up_within_10_s(quick, tmp_path, fake_service):
    address = fake_service()  # accepts, then says nothing: a service waiting for a request
    argv = ("validate", "run", str(quick), "--out", str(tmp_path / "o"), "--scheduler", address)
    status, _, err, seconds = _cli(*argv, timeout=30)
    _one_line_error(status, err)
    assert "it sent no Dask handshake within 5 s" in err
    assert seconds < 10


# ----------------------------------------------------------------------- workers and sizes


def test_workers_must_be_between_1_and_the_cores(quick, tmp_path):
    cores = harness.execution.available_cores()
    suite = harness.load_suite(quick)
    for bad in (0, -1, cores + 1, 1.5, True, "2"):
        with pytest.raises(ValueError) as err:
            harness.run_suite(suite, "smoke", tmp_path, workers=bad)
        assert str(err.value) == (
            f"`workers` must be an integer from 1 to {cores} (the cores available); got {bad!r}."
        )
    assert not (tmp_path / "quick.nc").exists() and not (tmp_path / "quick.cells").exists()
    for bad in ("0", str(cores + 1), "two"):
        status, _, err, _ = _cli("validate", "run", str(quick), "--workers", bad)
        assert status == 2 and err.count("\n") == 1, err
        assert (
            f"argument --workers: expected an integer from 1 to {cores} (the cores "
            f"available), got {bad!r}" in err
        )


def test_sizes_too_large_for_memory_are_refused_before_allocating(tmp_path):
    import perfci as pc

    with pytest.raises(ValueError) as err:
        pc.bootstrap_ci([5, 5], "proportion", n_resamples=10**12)
    assert str(err.value).startswith(
        "`n_resamples` must be at most 10000000 (every replicate is kept, 8 bytes each); "
        "got 1000000000000."
    )
    with pytest.raises(ValueError, match=r"^`n_resamples` must be at most 10000000"):
        pc.compare([1, 0, 1], [1, 0, 0], [1, 1, 1], "recall", n_resamples=10**9)
    many = np.tile([5, 5], (10**6, 1))
    with pytest.raises(ValueError) as err:
        pc.bootstrap_ci(many, "proportion", n_resamples=10**7, nested=False)
    assert str(err.value).startswith("`n_resamples` = 10000000 for 1000000 data sets needs about")
    assert str(err.value).endswith("; ask for fewer resamples, or pass fewer data sets per call.")
    for call in (
        lambda: pc.exact_coverage("wald", 10**9, 0.5),
        lambda: pc.operating_characteristics("wilson", [10, 10**9], 0.5),
        lambda: pc.expected_half_width("percentile", 10**9, 0.5),
    ):
        start = time.monotonic()
        with pytest.raises(ValueError) as err:
            call()
        assert time.monotonic() - start < 2
        assert str(err.value).startswith("`n` up to 1000000000 (")
        assert str(err.value).endswith("; ask for a smaller `n`, or for fewer sizes at once.")
    for argv in (
        ["coverage", "--method", "wald", "--n", "1000000000", "--p", "0.5"],
        ["bootstrap", "--successes", "5", "--trials", "10", "--n-resamples", "1000000000000"],
    ):
        status, _, err, seconds = _cli(*argv)
        _one_line_error(status, err)
        assert seconds < 10
    # a suite whose cells would not fit is refused before a file is written
    path = tmp_path / "huge.toml"
    path.write_text(QUICK.replace("replications = 50", "replications = 100000000"))
    with pytest.raises(ValueError) as err:
        harness.run_suite(harness.load_suite(path), "smoke", tmp_path / "out")
    assert str(err.value).startswith(
        "`scales.smoke` of suite 'quick' (100000000 replications x 50 resamples per cell) "
        "needs about "
    )
    assert str(err.value).endswith("; ask for fewer replications or resamples in that scale.")
    assert not (tmp_path / "out").exists()
