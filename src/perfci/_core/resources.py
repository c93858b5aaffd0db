"""What this machine offers: cores and memory, checked before work is started or allocated.

A request that would not fit (an enumeration of a billion terms, a trillion bootstrap
replicates) is refused with a `ValueError` that names the argument and says how to ask
for less, before anything is allocated, instead of ending in a `MemoryError` deep in
NumPy. This module uses the standard library only, so the command line's parser can use it.
"""

from __future__ import annotations

import os

__all__ = ["MEMORY_SHARE", "available_cores", "available_memory", "check_memory", "format_bytes"]

#: The share of the available memory one request may use.
MEMORY_SHARE = 0.5

# Requests below this many bytes are not checked.
_SMALL = 1 << 26


def available_cores() -> int:
    """Return the number of cores this process may run on (at least 1).

    Examples
    --------
    >>> from perfci._core.resources import available_cores
    >>> available_cores() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def available_memory() -> int | None:
    """Return the bytes of memory available to this process, or None if unknown.

    The system's available memory (``MemAvailable`` on Linux), and no more than the
    address-space limit (``ulimit -v``) leaves.
    """
    available: int | None = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if available is None:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, OSError, ValueError):
            available = None
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as f:
                used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            room = max(0, limit - used)
            available = room if available is None else min(available, room)
    except (ImportError, OSError, ValueError, IndexError):
        pass
    return available


def format_bytes(n: float) -> str:
    """Return a size in words: ``'7.5 GB'``."""
    for unit in ("bytes", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.3g} {unit}"
        n /= 1000
    raise AssertionError  # pragma: no cover


def check_memory(nbytes: float, what: str, less: str) -> None:
    """Raise a `ValueError` if `nbytes` exceeds the share of memory one request may use.

    Parameters
    ----------
    nbytes : float
        The bytes the request would allocate (an estimate of its peak).
    what : str
        The request, naming the argument, e.g. ``"`n_resamples` = 10**9 for 1 data set"``.
    less : str
        How to ask for less, e.g. ``"ask for fewer resamples"``.

    Examples
    --------
    >>> from perfci._core.resources import check_memory
    >>> check_memory(10**21, "`n` = 10**20", "ask for a smaller `n`")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: `n` = 10**20 needs about 1e+06 PB of memory, more than half of the ...
    """
    if nbytes <= _SMALL:  # not worth a look at the system
        return
    available = available_memory()
    if available is None or nbytes <= MEMORY_SHARE * available:
        return
    raise ValueError(
        f"{what} needs about {format_bytes(nbytes)} of memory, more than half of the "
        f"{format_bytes(available)} available; {less}."
    )
