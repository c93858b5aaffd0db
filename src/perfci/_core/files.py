"""Files written whole or not at all: a temporary file beside the target, then a rename.

One home for every writer of perfci (the harness's cells and results, the publishing
report, the figures): a temporary file with a unique name, created exclusively, synced,
renamed over the target, and its folder synced; a failure leaves the old file as it was,
no temporary file behind, and a :class:`WriteError` that names the file (a full disk,
and only a full disk, says how many bytes were free). Standard library only.

Policies, for every file perfci replaces:

- **A read-only file is never replaced.** A file the user may not write (by
  :func:`os.access`), or whose mode has no write bit at all (``chmod a-w``, which root
  is also held to), is refused: :func:`check_replaceable` raises a :class:`ValueError`
  naming the argument before any work, and :func:`write_bytes_atomic` a
  :class:`WriteError` naming the file, leaving it as it was.
- **Only a regular file is replaced.** A folder, a FIFO, a socket or a device at the
  target is refused, and the message says which it is (:func:`file_kind`):
  :func:`check_target` raises a :class:`ValueError` naming the argument before any
  work, and :func:`write_bytes_atomic` a :class:`WriteError` naming the path, before a
  temporary file is made.
- **A replaced file keeps its permission bits** (``rw-------`` stays ``rw-------``); a
  new file is created with the user's umask, as any new file is.
- **Temporary files name their writer**: ``.NAME.PID.XXXXXXXX.tmp`` (:func:`new_temporary`),
  with the writing process's pid and 8 random hex digits. A write removes its temporary
  on any exception, :class:`KeyboardInterrupt` (SIGINT) included. A process killed
  outright (SIGKILL, or SIGTERM, which Python does not turn into an exception) cannot;
  :func:`remove_stale_temporaries` deletes such a file at the next write into the same
  folder once its writer is no longer alive, and never a live process's. No other
  file is ever deleted, whatever its name (``.notes.tmp``, ``tmp_scratch.tmp``): only a
  name of exactly that pattern is perfci's.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import stat
from pathlib import Path

__all__ = [
    "TEMPORARY_NAME",
    "WriteError",
    "check_folder",
    "check_replaceable",
    "check_target",
    "file_kind",
    "file_stem",
    "free_bytes",
    "is_read_only",
    "new_temporary",
    "pid_alive",
    "remove_stale_temporaries",
    "sync_folder",
    "temporary_writer",
    "write_bytes_atomic",
]

#: The name of a temporary file of :func:`new_temporary`: ``.NAME.PID.XXXXXXXX.tmp``.
TEMPORARY_NAME = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]{1,10})\.[0-9a-f]{8}\.tmp")

# A target name longer than this is cut in its temporary's name (a name has 255 bytes).
_LONGEST_NAME = 200


class WriteError(OSError):
    """A file could not be written (a full disk, no permission); nothing torn is left.

    The message names the file and the reason; :attr:`errno` is the system's.
    """

    def __init__(self, code: int | None, message: str) -> None:
        super().__init__(code, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def is_read_only(path: str | os.PathLike) -> bool:
    """Return whether `path` is a file perfci must not replace.

    It is when the user may not write it (:func:`os.access`) or when its mode has no
    write bit for anyone (``chmod a-w``: read-only even to root, whom :func:`os.access`
    always allows). A missing path, or one that is not a regular file, is not.

    Examples
    --------
    >>> import os, tempfile
    >>> from pathlib import Path
    >>> from perfci._core.files import is_read_only
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "report.html"
    ...     missing = is_read_only(path)
    ...     _ = path.write_text("old")
    ...     path.chmod(0o444)
    ...     print(missing, is_read_only(path))
    False True
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    if not stat.S_ISREG(mode):
        return False
    return not mode & 0o222 or not os.access(path, os.W_OK)


def check_replaceable(path: str | os.PathLike, name: str) -> None:
    """Refuse a read-only file at `path`, naming the argument (`name`) and the path.

    Raises
    ------
    ValueError
        If :func:`is_read_only` says `path` is read-only.
    """
    if is_read_only(path):
        raise ValueError(
            f"{name} {str(path)!r} is a read-only file, which perfci does not replace; make "
            "it writable (chmod u+w) or give another file name."
        )


def file_kind(path: str | os.PathLike) -> str | None:
    """Return what a path that is not a regular file is, in words; None if it is one.

    The words are ``"a folder"``, ``"a FIFO"``, ``"a socket"``, ``"a character
    device"``, ``"a block device"`` or ``"a special file"``; a symbolic link to one of
    them is ``"a symbolic link to a FIFO '/where/it/leads'"``. A regular file (or a link
    to one), a missing path and a dangling link give None: there is nothing in the way
    of a file there. Nothing is opened, so a FIFO never blocks.

    Examples
    --------
    >>> import os, tempfile
    >>> from pathlib import Path
    >>> from perfci._core.files import file_kind
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     os.mkfifo(Path(folder) / "pipe")
    ...     _ = (Path(folder) / "file").write_text("x")
    ...     print(file_kind(folder), file_kind(Path(folder) / "pipe"),
    ...           file_kind(Path(folder) / "file"), file_kind(Path(folder) / "none"))
    a folder a FIFO None None
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    kind = next((words for test, words in kinds if test(mode)), "a special file")
    if os.path.islink(path):
        return f"a symbolic link to {kind} {os.path.realpath(path)!r}"
    return kind


def check_target(path: str | os.PathLike, name: str) -> None:
    """Refuse an output path perfci could not write, naming `name` and the path.

    Anything but a regular file at `path` (a folder, a FIFO, a socket, a device:
    :func:`file_kind` says which) is refused, since perfci replaces regular files only,
    and so is a read-only file (:func:`check_replaceable`). A missing path, or a file
    that may be replaced, passes.

    Raises
    ------
    ValueError
        If `path` is not a regular file, or is a read-only file; the message says what
        is there.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfci._core.files import check_target
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     (Path(folder) / "SUMMARY.md").mkdir()
    ...     try:
    ...         check_target(Path(folder) / "SUMMARY.md", "summary")
    ...     except ValueError as exc:
    ...         print(str(exc).split(";")[0].endswith("is a folder, not a file"))
    True
    """
    kind = file_kind(path)
    if kind is not None:
        what = "a file" if kind == "a folder" else "a regular file"
        raise ValueError(
            f"{name} {str(path)!r} is {kind}, not {what}; perfci writes a file there and "
            "replaces only regular files: remove or rename it, or write elsewhere."
        )
    check_replaceable(path, name)


def check_folder(path: str | os.PathLike, name: str) -> None:
    """Refuse a folder perfci would make or write into when a file is in the way.

    Neither `path` nor the nearest of its existing parents may be a file (or another
    non-folder); missing folders are made later, when something is written.

    Raises
    ------
    ValueError
        If `path`, or the nearest existing folder above it, is not a folder; the
        message names `name` and the path.
    """
    path = Path(path)
    for part in (path, *path.parents):
        try:
            if not part.exists():
                continue
        except OSError:  # a part that cannot even be looked at
            return
        if not part.is_dir():
            where = "is" if part == path else f"is under {str(part)!r}, which is"
            raise ValueError(
                f"{name} {str(path)!r} {where} a file, not a folder; remove or rename it, or "
                "give another folder."
            )
        return


def pid_alive(pid: int) -> bool:
    """Return whether a process `pid` runs on this machine (another user's counts).

    A pid below 1 names no single process: it is not alive.
    """
    if pid < 1:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except (OSError, OverflowError):  # pragma: no cover
        return False
    return True


def temporary_writer(name: str) -> int | None:
    """Return the pid in a temporary file's name (:data:`TEMPORARY_NAME`), else None.

    Examples
    --------
    >>> from perfci._core.files import temporary_writer
    >>> temporary_writer(".report.html.4242.0a1b2c3d.tmp"), temporary_writer("report.html")
    (4242, None)
    """
    match = TEMPORARY_NAME.fullmatch(name)
    return int(match.group("pid")) if match else None


def new_temporary(path: Path) -> tuple[int, Path]:
    """Create ``.NAME.PID.XXXXXXXX.tmp`` beside `path`, mode 0666 less the user's umask.

    ``PID`` is this process's (so :func:`remove_stale_temporaries` can tell a dead
    writer's file from a live one's) and ``XXXXXXXX`` 8 random hex digits; a `path`
    whose name is longer than 200 characters gives its first 200.
    """
    name = path.name[:_LONGEST_NAME]
    while True:
        tmp = path.parent / f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:  # pragma: no cover - 2**32 names
            continue


def remove_stale_temporaries(folder: str | os.PathLike) -> list[Path]:
    """Delete the temporary files in `folder` whose writers are no longer alive.

    A temporary file is one named :data:`TEMPORARY_NAME` (``.NAME.PID.XXXXXXXX.tmp``);
    it is stale when no process `PID` runs on this machine (:func:`pid_alive`), as after
    a writer was killed. Those of a live process, this one's included, are kept, and so
    is every other file. A folder that cannot be read is left alone.

    Returns
    -------
    list of pathlib.Path
        The files deleted, sorted.
    """
    removed = []
    try:
        entries = list(os.scandir(os.fspath(folder)))
    except OSError:
        return []
    for entry in entries:
        pid = temporary_writer(str(entry.name))
        if pid is None or pid_alive(pid):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            os.unlink(entry.path)
        except OSError:  # gone already, or not ours to delete
            continue
        removed.append(Path(entry.path))
    return sorted(removed)


def write_bytes_atomic(path: Path, data: bytes | memoryview, mode: int | None = None) -> None:
    """Write `data` to `path` through a temporary file and a rename: complete or absent.

    A file already at `path` is replaced and keeps its permission bits (a new file gets
    `mode` if given, the permission bits of a file it stands in for, else the user's
    umask), unless it is read-only (:func:`is_read_only`): that is refused.
    Anything but a regular file at `path` (a folder, a FIFO: :func:`file_kind`) is
    refused before a temporary file is made. The temporary file (:func:`new_temporary`)
    is removed if anything fails, an interruption (:class:`KeyboardInterrupt`) included.

    Raises
    ------
    WriteError
        If `path` is a read-only file or not a regular file, the disk is full or the file cannot be
        written; the message names `path`, and says how many bytes were free and needed
        only when the system says the disk is full (``ENOSPC``). An earlier file at
        `path` is left as it was, and no temporary file is left behind.
    """
    path = Path(path)
    new_mode = mode
    view = memoryview(data).cast("B")
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        mode = None
    kind = file_kind(path) if mode is not None else None
    if mode is not None and kind is not None:
        raise WriteError(
            errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
            f"could not write {path}: it is {kind}, which perfci does not replace (remove "
            "or rename it, or write elsewhere)",
        )
    if mode is not None and is_read_only(path):
        raise WriteError(
            errno.EACCES,
            f"could not write {path}: it is a read-only file, which perfci does not "
            "replace (make it writable, or remove it)",
        )
    keep = stat.S_IMODE(mode) & 0o777 if mode is not None else None
    if keep is None and new_mode is not None:
        keep = new_mode & 0o777
    try:
        fd, tmp = new_temporary(path)
    except OSError as exc:
        raise WriteError(exc.errno, f"could not write {path}: {exc.strerror or exc}") from exc
    done = False
    try:
        with os.fdopen(fd, "wb") as f:
            if view.nbytes and hasattr(os, "posix_fallocate"):
                try:
                    os.posix_fallocate(f.fileno(), 0, view.nbytes)  # a full disk fails here
                except OSError as exc:
                    if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                        raise
            f.write(view)
            f.flush()
            if keep is not None:
                os.fchmod(f.fileno(), keep)
            os.fsync(f.fileno())
        os.replace(tmp, path)
        done = True
    except OSError as exc:
        # the room only where the system says there is none: another error (a folder
        # that appeared, a permission) is not about space
        free = free_bytes(path.parent) if exc.errno == errno.ENOSPC else None
        room = "" if free is None else f" ({free:,} bytes free, {view.nbytes:,} needed)"
        raise WriteError(exc.errno, f"could not write {path}: {exc.strerror or exc}{room}") from exc
    finally:
        if not done:  # any exception: an OSError, a KeyboardInterrupt, a MemoryError
            tmp.unlink(missing_ok=True)
    sync_folder(path.parent)


def free_bytes(folder: Path) -> int | None:
    """Return the bytes free for the user in `folder`'s file system (None: unknown)."""
    try:
        stat_ = os.statvfs(folder)
    except (OSError, AttributeError):
        return None
    return stat_.f_bavail * stat_.f_frsize


def sync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable (where the system allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def file_stem(name: str) -> str:
    r"""Return `name` as a file-name stem: letters, digits, ``.``, ``-`` and ``_`` only.

    Every other character (a path separator, a control character, a space) becomes
    ``_``, leading dots are dropped (no hidden or parent-folder names) and the stem is at
    most 100 characters, so a suite's figures stay in the figures folder. When the stem is
    not the name itself, ``-`` and the first 8 hex digits of the name's SHA-256 are
    appended, so distinct names (``a/b``, ``a?b`` and ``a_b``) never share files.

    Examples
    --------
    >>> from perfci._core.files import file_stem
    >>> file_stem("atlas-icc"), file_stem("../../etc/x\nname")
    ('atlas-icc', 'etc_x_name-04476746')
    """
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip("._")[:100] or "suite"
    if stem == name:
        return stem
    return f"{stem}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
