"""Files of a run: atomic writes, the output folder's lock, and cleaning up after a kill.

Every file is written whole to a temporary file in its folder and renamed into place, so
it is complete or absent, never torn (:func:`perfci._core.files.write_bytes_atomic`). A
temporary file is created with the user's umask (as any new file is;
:func:`tempfile.mkstemp` would make it 0600), its space is reserved before anything is
written, so a full disk fails before a byte is written, and it is removed if anything
fails. A file replaced keeps its permission bits, and a read-only one is refused. A
result dataset is serialized in memory first: the only thing that touches the disk is
one plain write.

A temporary file is named ``.NAME.PID.XXXXXXXX.tmp`` after its writer's pid; one that a
killed run left is deleted by the next run in the folder (:func:`remove_stale_temporaries`),
and no other file is. A cell file carries the identity of its cell after its array
(:func:`cell_identity`), with the SHA-256 digest of the array; on resume, every cell file
kept is checked before any work (:func:`read_cell`), and one whose scores no longer match
their digest (edited by hand, or damaged) is refused.

One run at a time writes to an output folder: :func:`folder_lock` holds ``OUT/perfci.lock``
(an advisory ``flock`` holding the run's pid) while a run writes there.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import xarray as xr

from .._core.files import WriteError, file_kind, pid_alive
from .._core.files import remove_stale_temporaries as _remove_dead_writers
from .._core.files import write_bytes_atomic as _write_bytes_atomic

try:  # POSIX; elsewhere the lock is the lock file's existence and its pid
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

#: The lock file of an output folder.
LOCK_NAME = "perfci.lock"


class FolderInUseError(OSError):
    """Another run holds the output folder's lock; :attr:`pid` is the holder's."""

    def __init__(self, message: str, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid

    def __str__(self) -> str:
        return str(self.args[0])


class StaleLockWarning(UserWarning):
    """A run took over the lock file of a run that was killed."""


def cell_path(folder: Path, cell: dict) -> Path:
    """Return the file of one cell's scores in `folder`, named after the cell's values."""
    key = "_".join(f"{k}-{cell[k]}" for k in sorted(cell))
    return folder / f"{key}.npy"


#: What precedes a cell's identity after the array of its file (:func:`write_atomic`).
CELL_IDENTITY_MARK = b"perfci-cell-identity:"


def cell_identity(suite: str, scale: str, cell: dict, fingerprint: str | None = None) -> str:
    """Return the identity a cell file carries: its suite, scale and grid values, as JSON.

    A run adds its `fingerprint` (:func:`~perfci.harness.schema.suite_fingerprint`: the
    seed, the methods' options and all else that makes its cells), so a cell file copied
    from a run of the same suite name, scale and cell but another seed is no cell of it.

    Examples
    --------
    >>> from perfci.harness.storage import cell_identity
    >>> cell_identity("tiny", "smoke", {"p": 0.9, "n": 10})
    '{"cell": {"n": 10, "p": 0.9}, "scale": "smoke", "suite": "tiny"}'
    """
    identity = {"cell": cell, "scale": scale, "suite": suite}
    if fingerprint is not None:
        identity["fingerprint"] = fingerprint
    return json.dumps(identity, sort_keys=True)


def write_atomic(
    path: Path, array: np.ndarray, identity: str | None = None, mode: int | None = None
) -> None:
    """Write one cell's scores (``.npy``) atomically, followed by its `identity`.

    The identity (:func:`cell_identity`) follows the array's bytes, after
    :data:`CELL_IDENTITY_MARK`; :func:`numpy.load` reads the array and stops before it.
    A new file gets `mode` (the permission bits of the cell file it stands in for).
    """
    buffer = io.BytesIO()
    np.save(buffer, array)
    data = buffer.getvalue()  # bytes: a getbuffer() view can crash 3.12.1 (gh-111049)
    if identity is not None:
        # the digest of the scores goes with the identity: resume refuses scores edited
        # after the run wrote them (counts that add up but that no run computed)
        signed = {**json.loads(identity), "digest": _digest(data)}
        data += CELL_IDENTITY_MARK + json.dumps(signed, sort_keys=True).encode()
    _write_bytes_atomic(path, data, mode)


def _digest(scores: bytes) -> str:
    """Return the SHA-256 of a cell file's array bytes, in hex."""
    return hashlib.sha256(scores).hexdigest()


def write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write a small text file (a fingerprint, a summary) atomically (a new one: `mode`)."""
    _write_bytes_atomic(path, text.encode(), mode)


def write_dataset(dataset: xr.Dataset, target: Path) -> None:
    """Write netCDF: serialized in memory, then one atomic write; a failure leaves no result."""
    import dask.config

    # In memory, with no scheduler: with a Dask client about, xarray would ask it for a
    # lock named after the file, and an in-memory file has no name to lock.
    with dask.config.set(scheduler="synchronous"):
        data = dataset.to_netcdf(engine="h5netcdf")
    _write_bytes_atomic(target, data if data is not None else b"")


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete temporary files a killed run left in `folder` (call with its lock held).

    A temporary file is named after its writer, exactly ``.NAME.PID.XXXXXXXX.tmp``
    (:data:`perfci._core.files.TEMPORARY_NAME`); it is deleted when that process is no
    longer alive, and kept while it is (another process writing in the folder, such as
    ``perfci validate report``, or this one). No other file is deleted, whatever its
    name: a file named like ``.notes.tmp`` or ``tmp_scratch.tmp`` may be the user's.

    Returns
    -------
    list of pathlib.Path
        The files deleted, sorted.
    """
    if not folder.is_dir():
        return []
    return _remove_dead_writers(folder)


#: The columns of a cell file (one row per method), in order.
CELL_COLUMNS = ("hits", "misses below", "misses above", "half-width sum", "n_valid", "flags")


class CellFileError(ValueError):
    """A cell file that ``resume`` would keep is not a cell of this run; nothing is written.

    The message names the file and what is wrong with it.
    """


class UnidentifiedCellError(CellFileError):
    """A valid cell file without the identity of its cell (an earlier version wrote it)."""


class RecomputedCellWarning(UserWarning):
    """Resuming computes again cell files that an earlier version wrote without identity."""


def read_cell(
    path: Path,
    methods: Sequence[str],
    replications: int,
    *,
    sets: bool = False,
    max_half_width: float | None = None,
    flaggable: Sequence[bool] | None = None,
    identity: str | None = None,
) -> np.ndarray:
    """Read one cell file a run would resume from; refuse one no run could have written.

    A cell is ``(methods, 6)`` real numbers, one row per method (:data:`CELL_COLUMNS`):
    hits, misses below, misses above, n_valid and flags are non-negative integers, with
    ``n_valid`` and flags at most `replications`, and the half-width sum is finite and
    non-negative. Each interval either covers or misses, so ``hits + misses below +
    misses above == n_valid``; with `sets` (simultaneous sets of several intervals, which
    can miss below on one and above on another) ``max(below, above) <= n_valid - hits <=
    below + above``. With `max_half_width` (the widest half-width one interval can have:
    0.5 for an interval inside [0, 1], 1 for one of a difference of rates), the
    half-width sum is at most ``max_half_width * n_valid``. A method that never flags a
    fit (`flaggable` False) has 0 flags. What follows the array, if anything, is the
    cell's identity (:data:`CELL_IDENTITY_MARK`, then :func:`cell_identity`); with
    `identity`, it must be there and be that one, with its run's fingerprint if
    `identity` has one (a file without a fingerprint is an earlier version's).

    Parameters
    ----------
    path : pathlib.Path
        The cell file (``.npy``).
    methods : sequence of str
        The suite's method names, one per row.
    replications : int
        The scale's replications.
    sets : bool, default False
        Whether each row scores simultaneous sets (a ``many_nested`` suite).
    max_half_width : float, optional
        The widest half-width of one interval; None (the default): no bound.
    flaggable : sequence of bool, optional
        Per method, whether its fits can be flagged; None (the default): any can.
    identity : str, optional
        The identity of the cell the file must hold (:func:`cell_identity`); None (the
        default): any, or none.

    Returns
    -------
    numpy.ndarray
        The cell, as float.

    Raises
    ------
    CellFileError
        If the file cannot be read as a ``.npy`` array or breaks a rule above; the
        message names the file, the method and what is wrong.
    UnidentifiedCellError
        With `identity`, if the file is a valid cell without an identity (an earlier
        version's); its rules above are checked first.
    """

    def bad(what: str) -> CellFileError:
        return CellFileError(
            f"cell file {path} cannot be resumed: {what}; delete it to compute that cell "
            "again, or run without `resume` to start again."
        )

    try:
        stream = io.BytesIO(path.read_bytes())
        raw = np.load(stream, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise bad(f"it is not a .npy array ({reason})") from None
    if not isinstance(raw, np.ndarray) or raw.dtype.kind not in "iuf":
        raise bad(f"it holds {getattr(raw, 'dtype', type(raw).__name__)}, not real numbers")
    shape = (len(methods), len(CELL_COLUMNS))
    if raw.shape != shape:
        raise bad(f"its shape is {raw.shape}, not {shape} (methods, scores)")
    cell = raw.astype(float)
    can_flag = [True] * len(methods) if flaggable is None else list(flaggable)
    for name, row, flags_allowed in zip(methods, cell, can_flag, strict=True):
        where = f"method {name!r}"
        values = [float(v) for v in row]
        hits, below, above, _, valid, flags = values
        for column, value in zip(CELL_COLUMNS, values, strict=True):
            if column == "half-width sum":
                if not (np.isfinite(value) and value >= 0):
                    raise bad(f"{where} has half-width sum {value!r}, not a finite number >= 0")
            elif not (np.isfinite(value) and value >= 0 and value == np.round(value)):
                raise bad(f"{where} has {column} {value!r}, not a non-negative integer")
        for column, value in (("n_valid", valid), ("flags", flags)):
            if value > replications:
                raise bad(
                    f"{where} has {column} {value:.0f}, more than the scale's "
                    f"{replications} replications"
                )
        if flags and not flags_allowed:
            raise bad(
                f"{where} has flags {flags:.0f}, but its fits are never flagged (only "
                "Bayesian fits that fail their diagnostics or fall back are)"
            )
        if max_half_width is not None and values[3] > max_half_width * valid * (1 + 1e-12):
            raise bad(
                f"{where} has half-width sum {values[3]!r}, more than {max_half_width:g} per "
                f"valid interval ({valid:.0f})"
            )
        missed = valid - hits
        if sets:
            if not (max(below, above) <= missed <= below + above):
                raise bad(
                    f"{where} has hits {hits:.0f}, misses below {below:.0f} and above "
                    f"{above:.0f}, which cannot make n_valid {valid:.0f}"
                )
        elif hits + below + above != valid:
            raise bad(
                f"{where} has hits + misses below + misses above = "
                f"{hits + below + above:.0f}, not n_valid {valid:.0f}"
            )
    scores = stream.getvalue()[: stream.tell()]
    _check_identity(stream.read(), identity, bad, path, scores)
    return cell


def _check_identity(
    trailer: bytes,
    identity: str | None,
    bad: Callable[[str], CellFileError],
    path: Path,
    scores: bytes,
) -> None:
    """Check what follows a cell file's array: nothing, or the identity of its cell.

    The identity carries the digest of the array's bytes (`scores`): a file whose scores
    were changed after the run wrote them is refused.
    """
    if not trailer:
        if identity is not None:
            raise UnidentifiedCellError(
                f"cell file {path} holds no identity of its cell (an earlier version wrote it)"
            )
        return
    if not trailer.startswith(CELL_IDENTITY_MARK):
        raise bad(f"it has {len(trailer)} bytes after its array that are no cell's identity")
    try:
        stored = json.loads(trailer[len(CELL_IDENTITY_MARK) :].decode())
    except (UnicodeDecodeError, ValueError):
        raise bad("the identity after its array is not readable") from None
    digest = stored.pop("digest", None) if isinstance(stored, dict) else None
    if digest is not None and digest != _digest(scores):
        raise bad(
            "its scores are not those the run wrote (they do not match the digest written "
            "with them: the file was edited or damaged)"
        )
    if identity is None:
        return
    wanted = json.loads(identity)
    run = wanted.pop("fingerprint", None)
    written = stored.pop("fingerprint", None) if isinstance(stored, dict) else None
    if stored != wanted:
        raise bad(_identity_difference(stored, wanted))
    if run is not None and written is None:
        raise UnidentifiedCellError(
            f"cell file {path} holds no fingerprint of its run (an earlier version wrote it)"
        )
    if run is not None and digest is None:
        raise UnidentifiedCellError(
            f"cell file {path} holds no digest of its scores (an earlier version wrote it)"
        )
    if run is not None and written != run:
        raise bad(
            f"it holds the scores of a run with fingerprint {written!r}, not this run's "
            f"{run!r} (another seed or other method options), as a cell file copied from "
            "another run's folder does"
        )


def _identity_difference(stored: object, wanted: dict) -> str:
    """Say how the identity a cell file carries differs from the cell's own."""
    if isinstance(stored, dict):
        extra = sorted(set(stored) - set(wanted))
        missing = sorted(set(wanted) - set(stored))
        if extra or missing:
            parts = [f"an unexpected key {k!r}" for k in extra]
            parts += [f"no key {k!r}" for k in missing]
            return (
                f"its identity has {' and '.join(parts)} (a run writes only "
                f"{', '.join(map(repr, sorted({*wanted, 'fingerprint'})))})"
            )
    if _describe(stored) == _describe(wanted):  # alike in words, not in values
        return (
            f"its identity {json.dumps(stored, sort_keys=True)} is not this cell's "
            f"{json.dumps(wanted, sort_keys=True)}"
        )
    return (
        f"it holds the scores of another cell ({_describe(stored)}), not of this one "
        f"({_describe(wanted)}), as a cell file copied over another's does"
    )


#: Cell files are small (a row of six numbers per method); a larger .npy is no run's.
_LARGEST_CELL_FILE = 1 << 20


def replaced_cell_files(folder: Path, cells: Sequence[dict]) -> list[Path]:
    """Return the files of `folder` a fresh run removes: its cells' and earlier runs' cells.

    The files of `cells` that exist, and every other ``.npy`` file a run wrote (one that
    carries a cell's identity after its array: :data:`CELL_IDENTITY_MARK`); any other
    file, a user's ``backup.npy`` included, is left where it is.
    """
    if not folder.is_dir():
        return []
    own = {cell_path(folder, c) for c in cells}
    found = []
    for path in sorted(folder.glob("*.npy")):
        if not path.is_file() or path.is_symlink():
            continue
        if path in own:
            found.append(path)
        elif path.stat().st_size <= _LARGEST_CELL_FILE and CELL_IDENTITY_MARK in path.read_bytes():
            found.append(path)
    return found


def check_run_files(out: Path, name: str, cells: Sequence[dict] | None) -> None:
    """Refuse, before any work, anything but a regular file where a run writes a file.

    The files are the result ``OUT/NAME.nc``, the lock and, unless `cells` is None (an
    exact scale keeps no cells), the fingerprint and the cell files of `cells` in
    ``OUT/NAME.cells``. A folder, a FIFO, a socket or a device there is refused, and the
    message says which it is (:func:`perfci._core.files.file_kind`). A symbolic link at
    the lock or the folder of cells is left to the run, which refuses it as a link.

    Raises
    ------
    ValueError
        Naming `out`, the path inside it and what is there.

    Examples
    --------
    >>> import os, tempfile
    >>> from pathlib import Path
    >>> from perfci.harness.storage import check_run_files
    >>> with tempfile.TemporaryDirectory() as out:
    ...     os.mkfifo(Path(out) / "tiny.nc")
    ...     try:
    ...         check_run_files(Path(out), "tiny", None)
    ...     except ValueError as exc:
    ...         print(str(exc).split("`out` ")[1][len(repr(out)):].split(" where")[0])
    holds a FIFO tiny.nc
    """
    folder = out / f"{name}.cells"
    paths = [out / f"{name}.nc"]
    paths += [] if (out / LOCK_NAME).is_symlink() else [out / LOCK_NAME]
    if cells is not None and not folder.is_symlink() and folder.is_dir():
        paths += [folder / "fingerprint.txt", *(cell_path(folder, c) for c in cells)]
    for path in paths:
        kind = file_kind(path)
        if kind is not None:
            raise ValueError(
                f"`out` {str(out)!r} holds {kind} {path.relative_to(out)} where the run "
                "writes a file, which perfci does not replace; remove or rename it, or "
                "write to another folder."
            )


def _describe(identity: object) -> str:
    """Return a cell's identity as ``suite 'S', scale 'X', n=10, p=0.9``."""
    if not isinstance(identity, dict) or not isinstance(identity.get("cell"), dict):
        return repr(identity)
    values = ", ".join(f"{k}={v!r}" for k, v in sorted(identity["cell"].items()))
    return f"suite {identity.get('suite')!r}, scale {identity.get('scale')!r}, {values}"


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().split()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text[0]) if text and text[0].isdigit() else None


def _in_use(folder: Path, pid: int | None) -> FolderInUseError:
    holder = "another run" if pid is None else f"another run (pid {pid})"
    return FolderInUseError(
        f"output folder {folder} is in use by {holder}, which holds {folder / LOCK_NAME}; "
        "wait for it to finish or write to another folder.",
        pid,
    )


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike) -> Iterator[Path]:
    """Hold the lock of an output folder while a run writes there.

    The lock is ``FOLDER/perfci.lock``, an advisory ``flock`` that holds the run's pid.
    The system releases it when the process ends, however it ends; a lock file left by a
    killed run is taken over, with a :class:`StaleLockWarning` naming its pid.

    Parameters
    ----------
    folder : path
        The output folder (created if missing).

    Raises
    ------
    FolderInUseError
        If another run holds the lock; the message names its pid.

    Examples
    --------
    >>> import tempfile
    >>> from perfci.harness.storage import FolderInUseError, folder_lock
    >>> with tempfile.TemporaryDirectory() as out:
    ...     with folder_lock(out):
    ...         try:
    ...             with folder_lock(out):
    ...                 pass
    ...         except FolderInUseError as exc:
    ...             print(exc.pid == os.getpid())
    True
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    if fcntl is None:  # pragma: no cover
        with _exclusive_file_lock(folder, path):
            yield path
        return
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise WriteError(exc.errno, f"could not create {path}: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise _in_use(folder, _read_pid(path)) from None
        except OSError as exc:  # a file system without locks
            os.close(fd)
            raise WriteError(
                exc.errno,
                f"could not lock {path}: {exc.strerror or exc} (its file system has no "
                "file locks; write to a local folder)",
            ) from exc
        try:  # the holder may have removed the file between our open and our flock
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        previous = _read_pid(path)
        if previous is not None and previous != os.getpid():
            state = "no longer running" if not pid_alive(previous) else "no longer holding it"
            warnings.warn(
                f"took over the lock {path} of pid {previous} ({state}; a killed run).",
                StaleLockWarning,
                stacklevel=3,
            )
        with contextlib.suppress(OSError):  # a full disk: the flock still holds
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield path
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # while still holding it: a waiting opener sees another inode
        os.close(fd)


@contextlib.contextmanager
def _exclusive_file_lock(folder: Path, path: Path) -> Iterator[None]:  # pragma: no cover
    """Hold the lock without ``flock``: the file exists; a dead holder's file is taken over."""
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            pid = _read_pid(path)
            if pid is not None and pid_alive(pid):
                raise _in_use(folder, pid) from None
            warnings.warn(
                f"took over the lock {path} of pid {pid} (no longer running; a killed run).",
                StaleLockWarning,
                stacklevel=4,
            )
            path.unlink(missing_ok=True)
    else:
        raise _in_use(folder, _read_pid(path))
    try:
        os.write(fd, f"{os.getpid()}\n".encode())
        os.close(fd)
        yield
    finally:
        path.unlink(missing_ok=True)
