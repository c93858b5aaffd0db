"""Alternating timings: perfci and its peer in one process, A B A B, median pair ratio.

Each round times one call of each side back to back (which side goes first alternates
from round to round), so a change in the machine's load falls on both sides of a pair.
The ratio of a pair is peer time / perfci time; the median over the rounds is reported
with the median time of each side.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from statistics import median
from typing import Any


@dataclass(frozen=True)
class PairTiming:
    """Median times of the two sides, the median of the pair ratios, and the ratios."""

    ours: float
    peer: float
    ratio: float
    ratios: tuple[float, ...]


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def alternate(ours: Callable[[], Any], peer: Callable[[], Any], rounds: int = 7) -> PairTiming:
    """Time `ours` and `peer` alternately for `rounds` pairs (after one warm-up call each)."""
    if rounds < 5:
        raise ValueError(f"`rounds` must be at least 5; got {rounds}.")
    ours(), peer()  # warm-up: imports, caches, first-touch of memory
    a, b = [], []
    for k in range(rounds):
        if k % 2 == 0:
            a.append(_timed(ours))
            b.append(_timed(peer))
        else:
            b.append(_timed(peer))
            a.append(_timed(ours))
    ratios = tuple(p / o for o, p in zip(a, b, strict=True))
    return PairTiming(median(a), median(b), median(ratios), ratios)
