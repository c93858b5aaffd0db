"""Running a suite: cell seeds, the kernel of each population kind, Dask, resuming, files.

:func:`compute_cell` scores one cell with its population kind's kernel
(:mod:`~perfci.harness.kernels`, :mod:`~perfci.harness.crossed_kernels`) and the cell's
own seed; :func:`run_suite` runs every cell of a scale in this process or on Dask
workers, writes each finished cell atomically (and resumes from them), holds the output
folder's lock, reports progress and writes the result dataset.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import xarray as xr

from .._core.files import is_read_only
from .._core.resources import available_cores, check_memory
from .corpus_kernels import stratified_cell
from .crossed_kernels import annotators_cell, runs_cell
from .cv_kernels import cv_cell
from .families import can_flag
from .kernels import (
    bernoulli_cell,
    confusion_cell,
    infinite_cell,
    nested_cell,
    paired_cell,
    scored_cell,
    subgroups_cell,
)
from .many_kernels import many_cell
from .performance_kernels import performance_cell
from .results import (  # the bounds of half-widths live with the results they check
    assemble,
    exact_dataset,
    planning_dataset,
    widest_half_width,
)
from .schema import SUITE_KEYS, Suite, load_suite, suite_fingerprint
from .storage import (
    LOCK_NAME,
    RecomputedCellWarning,
    UnidentifiedCellError,
    WriteError,
    cell_identity,
    cell_path,
    check_run_files,
    folder_lock,
    read_cell,
    remove_stale_temporaries,
    replaced_cell_files,
    write_atomic,
    write_dataset,
    write_text,
)


def _cell_seed(suite: Suite, scale: str, cell: dict) -> np.random.SeedSequence:
    key = f"{suite.name}|{scale}|" + "|".join(f"{k}={cell[k]!r}" for k in sorted(cell))
    digest = hashlib.sha256(key.encode()).digest()
    return np.random.SeedSequence(
        suite.seed,
        spawn_key=tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)),
    )


#: The kernel of each population kind (``nested_planning`` is exact: it has none).
KERNELS: dict[str, Callable] = {
    "bernoulli": bernoulli_cell,
    "confusion": confusion_cell,
    "nested_finite": nested_cell,
    "nested": infinite_cell,
    "nested_confusion": infinite_cell,
    "paired_nested": paired_cell,
    "subgroups_nested": subgroups_cell,
    "scored_nested": scored_cell,
    "runs_nested": runs_cell,
    "annotators_nested": annotators_cell,
    "stratified_corpus": stratified_cell,
    "many_nested": many_cell,
    "cv_nested": cv_cell,
    "covariates_nested": performance_cell,
}


def compute_cell(suite: Suite, scale_name: str, cell: dict) -> np.ndarray:
    """Score every method in one cell: (methods, 6) = hits, misses, half-widths, n, flags."""
    scale = suite.scales[scale_name]
    return KERNELS[suite.population["kind"]](
        suite, scale, cell, _cell_seed(suite, scale_name, cell)
    )


def run_suite(
    suite: Suite | str,
    scale: str = "smoke",
    out: str | os.PathLike = "validation/results",
    *,
    workers: int = 1,
    scheduler: str | None = None,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> xr.Dataset:
    """Run a suite and write ``OUT/SUITE.nc``; return the result dataset.

    Parameters
    ----------
    suite : Suite or str
        A suite or its name.
    scale : str, default "smoke"
        A scale of the suite (``"smoke"``: seconds; ``"full"``: the paper's).
    out : path, default "validation/results"
        Output folder.
    workers : int, default 1
        Dask workers of an embedded LocalCluster (1: run in this process), at most the
        cores available to this process.
    scheduler : str, optional
        Address of an existing Dask scheduler (instead of `workers`); it must answer a
        Dask handshake within :data:`SCHEDULER_TIMEOUT` seconds.
    resume : bool, default False
        Keep the cells a previous run finished (in ``OUT/SUITE.cells/``), if their
        fingerprint is this suite's and scale's and every one of them is a valid cell of
        its own name (:func:`~perfci.harness.storage.read_cell`), checked before any
        work. A valid cell file without the identity of its cell (an earlier version's)
        is computed again, with a :class:`~perfci.harness.storage.RecomputedCellWarning`.
    progress : callable, optional
        Called with (cells done, cells in all) after each cell.

    Returns
    -------
    xarray.Dataset
        The result (see the module notes).

    Raises
    ------
    ValueError
        For an invalid suite, scale, `workers` or `scheduler`; for cells that `resume`
        cannot use (another suite's or scale's fingerprint, cell files without one, or a
        cell file no run could have written, or another cell's: the message names it and
        what is wrong); for a scale whose cells would not fit in memory; for a read-only
        result file ``OUT/SUITE.nc``, or a folder where a file of the run goes (the
        result, the lock, the fingerprint or a cell) or a file where its folder of cells
        goes. Nothing is written.
    FolderInUseError
        If another run holds the lock of `out` (the message names its pid).
    SchedulerError
        If `scheduler` does not lead to a Dask scheduler in time.
    WriteError
        If a file cannot be written (a full disk): the earlier result file, if any, and
        every finished cell are kept, and nothing torn is left. Only a full disk
        (``ENOSPC``) is reported with the bytes free and needed.

    Notes
    -----
    Everything is written inside `out`: ``SUITE.nc``, ``SUITE.cells/`` and, while the run
    lasts, the lock ``perfci.lock``. Temporary files a killed run left there
    (``.NAME.PID.XXXXXXXX.tmp``, exactly) are deleted, those of a live process are kept,
    and no other file is. A result file already there keeps its permission bits when it
    is replaced; a read-only one is refused before any work.

    Examples
    --------
    The exact scale of the paper's independent suite takes about a second:

    >>> import tempfile
    >>> from perfci import harness
    >>> with tempfile.TemporaryDirectory() as out:
    ...     ds = harness.run_suite("paper-independent", "exact", out)
    >>> round(float(ds.sel(n=20, p=0.95, ci_method="wald")["coverage"]), 3)
    0.639
    """
    suite = load_suite(suite) if isinstance(suite, str) else suite
    if not isinstance(suite, Suite):
        raise ValueError(f"`suite` must be a Suite or a suite's name; got {suite!r}.")
    SUITE_KEYS["name"].check(suite.name, "suite.name")
    if scale not in suite.scales:
        raise ValueError(f"`scale` must be one of {sorted(suite.scales)}; got {scale!r}.")
    workers = check_workers(workers)
    if scheduler is not None:
        if not isinstance(scheduler, str) or not scheduler:
            raise ValueError(
                f"`scheduler` must be an address such as 'tcp://host:8786'; got {scheduler!r}."
            )
        if workers != 1:
            raise ValueError("give `workers` or `scheduler`, not both.")
        check_scheduler(scheduler)
    if scheduler is None:
        _check_scale_memory(suite, scale, workers)
    if isinstance(out, str | os.PathLike) and not os.fspath(out):
        # Path("") is the current folder: an empty `out` is an unset variable, not a choice
        raise ValueError("`out` is empty: give the folder to write the results in.")
    out = Path(out)
    _check_targets(suite, scale, out, resume)
    with folder_lock(out):
        remove_stale_temporaries(out)
        target = out / f"{suite.name}.nc"
        if suite.scales[scale].exact:
            # Exact mode is one vectorized enumeration per method: nothing to persist per cell.
            if suite.population["kind"] == "nested_planning":
                dataset = planning_dataset(suite, scale)
            else:
                dataset = exact_dataset(suite, scale)
            if progress:
                progress(1, 1)
            write_dataset(dataset, target)
            return dataset
        folder = out / f"{suite.name}.cells"
        modes = _prepare_cells(folder, suite, scale, resume)
        cells = suite.cells(scale)
        kept = [cell_path(folder, c).exists() for c in cells]
        todo = [c for c, k in zip(cells, kept, strict=True) if not k]
        if resume:  # every kept cell is checked before any work: a bad one refuses
            again = _check_kept_cells(
                suite, scale, [c for c, k in zip(cells, kept, strict=True) if k], folder
            )
            recompute = {cell_path(folder, c) for c in again}
            todo = [
                c
                for c, k in zip(cells, kept, strict=True)
                if not k or cell_path(folder, c) in recompute
            ]
        done = len(cells) - len(todo)
        if progress:
            progress(done, len(cells))
        for cell, scores in _execute(suite, scale, todo, workers, scheduler):
            identity = cell_identity(suite.name, scale, cell, suite_fingerprint(suite, scale))
            path = cell_path(folder, cell)
            write_atomic(path, scores, identity, modes.get(path))
            done += 1
            if progress:
                progress(done, len(cells))
        dataset = assemble(suite, scale, cells, folder)
        try:
            write_dataset(dataset, target)
        except WriteError as exc:
            fix = "make room" if exc.errno == errno.ENOSPC else "fix that"
            raise WriteError(
                exc.errno,
                f"{exc}; every cell is kept in {folder}: {fix} and run again with "
                "`resume` to write the result",
            ) from exc
        return dataset


def _check_targets(suite: Suite, scale: str, out: Path, resume: bool = False) -> None:
    """Refuse, before any work, an output path of the run that perfci could not write.

    The result ``OUT/SUITE.nc`` and the lock must not be read-only, nor, without
    `resume` (which only reads them; a new run would replace them), the fingerprint and
    the cell files in ``OUT/SUITE.cells``; none of them may be a folder (nor another
    non-file). ``OUT/SUITE.cells`` must be a folder, and neither it nor the lock a
    symbolic link (which may lead outside `out`). Each refusal names `out` and the path.
    """
    result = out / f"{suite.name}.nc"
    if is_read_only(result):
        raise ValueError(
            f"`out` {str(out)!r} holds a read-only result file {suite.name}.nc, which perfci "
            "does not replace; make it writable (chmod u+w) or write to another folder."
        )
    folder = out / f"{suite.name}.cells"
    for link in (folder, out / LOCK_NAME):  # the lock is written through, as the cells
        if link.is_symlink():
            raise ValueError(
                f"`out` {str(out)!r} holds a symbolic link {link.name} (to "
                f"{str(link.resolve())!r}) where the run writes, which perfci does not write "
                "through: it may lead outside `out`; remove it, or write to another folder."
            )
    cells = [] if suite.scales[scale].exact else [folder / "fingerprint.txt"]
    if cells and folder.is_dir():
        cells += [cell_path(folder, c) for c in suite.cells(scale)]
    removed = [] if resume else replaced_cell_files(folder, suite.cells(scale))
    for path in [out / LOCK_NAME, *([] if resume else cells), *removed]:
        if is_read_only(path):
            raise ValueError(
                f"`out` {str(out)!r} holds a read-only file {path.relative_to(out)} of the run, "
                "which perfci does not replace; make it writable (chmod u+w) or write to "
                "another folder."
            )
    if folder.exists() and not folder.is_dir():
        raise ValueError(
            f"`out` {str(out)!r} holds a file {folder.name} where the run keeps its folder of "
            "cells; remove or rename it, or write to another folder."
        )
    # a folder, FIFO, socket or device where a file goes, named for what it is
    check_run_files(out, suite.name, None if suite.scales[scale].exact else suite.cells(scale))


def _check_kept_cells(suite: Suite, scale: str, kept: list[dict], folder: Path) -> list[dict]:
    """Refuse to resume from a cell file no run of this suite could have written.

    Each kept cell is read and checked (:func:`~perfci.harness.storage.read_cell`): its
    half-width sum at most :func:`widest_half_width` times its n_valid, no flags for a
    method that never flags (:func:`~perfci.harness.families.can_flag`), and the identity
    it carries that of the cell its name says, with this run's fingerprint. The first bad
    one raises a :class:`~perfci.harness.storage.CellFileError` naming it, and nothing is
    computed or written.

    Returns
    -------
    list of dict
        The kept cells whose files are valid but carry no identity (an earlier version
        wrote them): they are computed again, and a
        :class:`~perfci.harness.storage.RecomputedCellWarning` says so.
    """
    names = [m.name for m in suite.methods]
    flaggable = [can_flag(m.family, m.options) for m in suite.methods]
    replications = suite.scales[scale].replications
    sets = suite.population["kind"] == "many_nested"  # simultaneous sets of contrasts
    fingerprint = suite_fingerprint(suite, scale)  # a copy from another run's folder differs
    again = []
    for cell in kept:
        try:
            read_cell(
                cell_path(folder, cell),
                names,
                replications,
                sets=sets,
                max_half_width=widest_half_width(suite, cell),
                flaggable=flaggable,
                identity=cell_identity(suite.name, scale, cell, fingerprint),
            )
        except UnidentifiedCellError:
            again.append(cell)
    if again:
        warnings.warn(
            f"{len(again)} cell file(s) in {folder} carry no identity of their cell (an "
            f"earlier version of perfci wrote them, first {cell_path(folder, again[0]).name}); "
            "they are computed again.",
            RecomputedCellWarning,
            stacklevel=3,
        )
    return again


def _check_scale_memory(suite: Suite, scale: str, workers: int) -> None:
    """Refuse a scale whose cells would not fit in this machine's memory, before starting.

    A cell holds its replications' bootstrap replicates (replications x resamples, with
    room to compute the intervals) and, for a nested population, a sampling key per
    replication and person of the population; each local worker holds one cell.
    """
    spec = suite.scales[scale]
    if spec.exact:  # an enumeration checks its own size
        return
    per_cell = 0.0
    if any(m.family == "bootstrap" for m in suite.methods):
        per_cell += 3 * 8.0 * spec.replications * spec.resamples
    if suite.population["kind"] == "nested_finite":
        per_cell += 3 * 8.0 * spec.replications * suite.population["persons"]
    on = f" on each of {workers} workers" if workers > 1 else ""
    check_memory(
        per_cell * workers,
        f"`scales.{scale}` of suite {suite.name!r} ({spec.replications} replications x "
        f"{spec.resamples} resamples per cell{on})",
        "ask for fewer replications or resamples in that scale"
        + (", or fewer `workers`" if workers > 1 else ""),
    )


def _prepare_cells(folder: Path, suite: Suite, scale: str, resume: bool) -> dict[Path, int]:
    """Make `folder` hold only cells of this suite and scale, and its fingerprint.

    With `resume`, cells are kept only under the fingerprint of this suite and scale: a
    foreign fingerprint, or cell files without one (a run of another version, whose
    cells may have another seed), refuse. Without it, the fingerprint goes first, then
    the cells (this run's and earlier runs', :func:`replaced_cell_files`: a file no run
    wrote is kept), so an interrupted clean-up never leaves cells that look resumable.
    Returns the permission bits of the files removed, which their new files take (a
    0600 cell stays 0600 when computed again).
    """
    marker = folder / "fingerprint.txt"
    fingerprint = suite_fingerprint(suite, scale)
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(folder)  # left by a run killed while writing
    if resume:
        if marker.exists():
            if marker.read_bytes() != fingerprint.encode():
                raise ValueError(
                    f"{folder} holds cells of another version of suite {suite.name!r} or "
                    "another scale; run without `resume` to start again."
                )
        elif any(folder.glob("*.npy")):
            raise ValueError(
                f"{folder} holds cell files but no fingerprint.txt, so their suite, seed "
                "and scale are unknown and they cannot be resumed; run without `resume` "
                "to start again."
            )
    modes: dict[Path, int] = {}
    if not resume:
        for old in [marker, *replaced_cell_files(folder, suite.cells(scale))]:
            if old.is_file():  # a folder of that name is no cell of a run
                modes[old] = stat.S_IMODE(old.stat().st_mode)
        marker.unlink(missing_ok=True)
        for old in modes:
            old.unlink(missing_ok=True)
    if not marker.exists():
        write_text(marker, fingerprint, modes.get(marker))
    return modes


#: Seconds allowed to reach a scheduler given by address and to read its Dask handshake.
SCHEDULER_TIMEOUT = 5.0

#: glibc's allocator settings of the embedded LocalCluster's workers (Dask config keys):
#: freed memory up to 256 MiB stays in the heap, and blocks below 64 MiB come from it.
WORKER_MALLOC = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": str(256 << 20),
    "distributed.nanny.pre-spawn-environ.MALLOC_MMAP_THRESHOLD_": str(64 << 20),
}
#: Dask's statistical profiler off in the embedded LocalCluster's workers: it walks the
#: computing thread's stack every 10 ms, and on the atlas suites cost about 13% of the
#: wall time (atlas-sizes with two workers, 83 s with it, 72 s without).
WORKER_PROFILER = {"distributed.worker.profile.enabled": False}

# A Dask handshake is one small message; a peer announcing more is not a Dask scheduler.
_MAX_HANDSHAKE = 1 << 16


class SchedulerError(ConnectionError):
    """The `scheduler` address does not lead to a Dask scheduler.

    Attributes
    ----------
    address : str
        The address given.
    reason : str
        What went wrong, e.g. ``"refused the connection (nothing listens there)"``.
    """

    def __init__(self, address: str, reason: str) -> None:
        super().__init__(address, reason)
        self.address, self.reason = address, reason

    def message(self, argument: str = "scheduler") -> str:
        """Return the message naming `argument` (a keyword, or a flag such as ``--scheduler``)."""
        return f"`{argument}` {self.address!r} {self.reason}."

    def __str__(self) -> str:
        return self.message()


def check_scheduler(address: str, timeout: float | None = None) -> None:
    """Check that a Dask scheduler answers at `address`, within `timeout` seconds.

    For a ``tcp://`` address (or ``HOST:PORT``) this connects with a timeout and reads
    the handshake a Dask scheduler sends to every new connection: a closed port, a host
    that does not answer, or a service that is not Dask (a web server, anything that
    sends something else or nothing) is an error within `timeout` (default
    :data:`SCHEDULER_TIMEOUT`), before any work starts. Other schemes (``tls://``,
    ``ucx://``) are left to Dask's own connection, with the same timeout.

    Raises
    ------
    SchedulerError
        Naming the address and what went wrong.

    Examples
    --------
    >>> import socket
    >>> from perfci.harness.execution import SchedulerError, check_scheduler
    >>> with socket.socket() as s:  # a free port, closed again
    ...     s.bind(("127.0.0.1", 0))
    ...     port = s.getsockname()[1]
    >>> try:
    ...     check_scheduler(f"tcp://127.0.0.1:{port}")
    ... except SchedulerError as exc:
    ...     print(exc.reason)
    refused the connection (nothing listens there)
    """
    import socket
    import struct
    import time

    timeout = SCHEDULER_TIMEOUT if timeout is None else timeout
    scheme, sep, location = address.rpartition("://")
    if not sep:
        scheme, location = "tcp", address
    if scheme != "tcp":
        return
    host, _, port = location.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise SchedulerError(address, "is not an address of the form tcp://HOST:PORT")
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    except ConnectionRefusedError:
        raise SchedulerError(address, "refused the connection (nothing listens there)") from None
    except TimeoutError:
        raise SchedulerError(address, f"could not be reached within {timeout:g} s") from None
    except OSError as exc:
        raise SchedulerError(address, f"could not be reached: {exc.strerror or exc}") from None

    def receive(n: int) -> bytes:
        data = b""
        while len(data) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise ConnectionResetError
            data += chunk
        return data

    not_dask = "is not a Dask scheduler"
    with sock:
        try:
            (length,) = struct.unpack("Q", receive(8))  # Dask's frame header
            handshake = receive(length) if 0 < length <= _MAX_HANDSHAKE else b""
        except TimeoutError:
            raise SchedulerError(
                address, f"{not_dask}: it sent no Dask handshake within {timeout:g} s"
            ) from None
        except OSError:
            raise SchedulerError(
                address, f"{not_dask}: it closed the connection without a Dask handshake"
            ) from None
    if b"compression" not in handshake or b"python" not in handshake:
        raise SchedulerError(address, f"{not_dask}: its first message is not a Dask handshake")


def check_workers(workers: object, argument: str = "workers") -> int:
    """Return `workers` if it is an integer from 1 to the cores this process may use.

    Examples
    --------
    >>> from perfci.harness.execution import check_workers
    >>> check_workers(1)
    1
    >>> check_workers(0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: `workers` must be an integer from 1 to ... (the cores available); got 0.
    """
    most = available_cores()
    if (
        isinstance(workers, bool)
        or not isinstance(workers, int | np.integer)
        or not (1 <= workers <= most)
    ):
        raise ValueError(
            f"`{argument}` must be an integer from 1 to {most} (the cores available); "
            f"got {workers!r}."
        )
    return int(workers)


def _execute(suite, scale, cells, workers, scheduler) -> Iterable[tuple[dict, np.ndarray]]:
    if not cells:
        return
    if scheduler is None and workers <= 1:
        for cell in cells:
            yield cell, compute_cell(suite, scale, cell)
        return
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler is None:
        import dask

        # Dask's workers trim the heap at 64 KiB, which also pins glibc's mmap threshold
        # at 128 KiB: every array of a cell is then a fresh mapping, page-faulted in and
        # zeroed anew. Cells allocate the same few arrays again and again; keep them.
        with dask.config.set({**WORKER_MALLOC, **WORKER_PROFILER}):
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                scheduler_port=0,
            )
        client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout=SCHEDULER_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise SchedulerError(scheduler, f"could not be joined: {reason}") from None
    try:
        futures = {
            client.submit(compute_cell, suite, scale, cell, pure=False): i
            for i, cell in enumerate(cells)
        }
        for future in as_completed(futures):
            yield cells[futures[future]], future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
