"""Files written whole or not at all: a temporary file beside the target, then a rename.

One home for every writer of perfci (the harness's cells and results, the publishing
report, the figures): a temporary file with a unique name, created exclusively, synced,
renamed over the target, and its folder synced; a failure leaves the old file as it was,
no temporary file behind, and a :class:`WriteError` that names the file (a full disk
says how many bytes were free). Standard library only.
"""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

__all__ = ["WriteError", "free_bytes", "new_temporary", "sync_folder", "write_bytes_atomic"]


class WriteError(OSError):
    """A file could not be written (a full disk, no permission); nothing torn is left.

    The message names the file and the reason; :attr:`errno` is the system's.
    """

    def __init__(self, code: int | None, message: str) -> None:
        super().__init__(code, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def new_temporary(path: Path) -> tuple[int, Path]:
    """Create ``.NAME.XXXXXXXX.tmp`` beside `path`, mode 0666 less the user's umask."""
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:  # pragma: no cover - 2**32 names
            continue


def write_bytes_atomic(path: Path, data: bytes | memoryview) -> None:
    """Write `data` to `path` through a temporary file and a rename: complete or absent.

    Raises
    ------
    WriteError
        If the disk is full or the file cannot be written; the message names `path`. An
        earlier file at `path` is left as it was, and no temporary file is left behind.
    """
    view = memoryview(data).cast("B")
    try:
        fd, tmp = new_temporary(path)
    except OSError as exc:
        raise WriteError(exc.errno, f"could not write {path}: {exc.strerror or exc}") from exc
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
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if not isinstance(exc, OSError):
            raise
        free = free_bytes(path.parent)
        room = "" if free is None else f" ({free:,} bytes free, {view.nbytes:,} needed)"
        raise WriteError(exc.errno, f"could not write {path}: {exc.strerror or exc}{room}") from exc
    sync_folder(path.parent)


def free_bytes(folder: Path) -> int | None:
    try:
        stat = os.statvfs(folder)
    except (OSError, AttributeError):
        return None
    return stat.f_bavail * stat.f_frsize


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
