"""Fault tests of the validation harness: kills, lost workers and failed writes."""

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

# Each test runs whole suites in subprocesses or Dask workers and kills them.
pytestmark = pytest.mark.slow

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
        harness.storage._write_atomic(path, array)
    assert not path.exists() and not list(tmp_path.iterdir())
