"""Random streams of the data sets of a batch: keyed Philox streams, drawn together.

Every batched function gives each data set its own stream, so that a batch equals the
loop of single calls given those streams, draw for draw. Data set k of a batch of K uses

    ``Generator(Philox(SeedSequence(c.entropy, spawn_key=c.spawn_key + (k,))))``

with ``c = default_rng(rng).bit_generator.seed_seq.spawn(1)[0]`` (one child per batched
call): a counter-based generator whose key is the data set's seed sequence's state, so
the streams of different data sets are independent (distinct keys) and need not be
built one by one. :class:`DataSetStreams` builds a data set's
:class:`numpy.random.Generator` when it is asked for one
(:func:`perfci.batch_generators` gives them to a user who wants to reproduce one data
set alone), and draws the first uniforms
of every data set's stream in one vectorized call (:meth:`DataSetStreams.uniforms`):
NumPy's own algorithms, SeedSequence's hash and Philox4x64-10, written on arrays, and
equal to NumPy's draws bit for bit (``tests/test_streams.py``). Compiled kernels draw
from streams not yet handed out by their keys (:meth:`DataSetStreams.unbuilt_keys`,
:func:`perfci._core.kernels.philox_doubles`) and record how far
(:meth:`DataSetStreams.mark_drawn`), so that a generator asked for afterwards goes on
from there.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np

__all__ = ["DataSetStreams", "StreamSubset", "child_keys", "philox_uniforms"]

# SeedSequence's hash constants (numpy/random/bit_generator.pyx)
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715
_MASK32 = 0xFFFFFFFF
# Philox4x64-10's constants (Random123, as numpy/random/src/philox/philox.h)
_PHILOX_M0, _PHILOX_M1 = np.uint64(0xD2E7470EE14C6C93), np.uint64(0xCA5A826395121157)
_PHILOX_W0, _PHILOX_W1 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBB67AE8584CAA73B)
_LOW32, _SHIFT32 = np.uint64(_MASK32), np.uint64(32)


def _words(value: Any) -> int:
    """Return the uint32 words SeedSequence makes of an entropy or spawn-key value."""
    if isinstance(value, int | np.integer):
        return max(1, -(-int(value).bit_length() // 32))
    return sum(_words(v) for v in value)


def _hashmix(value: np.ndarray, const: int) -> tuple[np.ndarray, int]:
    """SeedSequence's hashmix of uint64-held uint32 `value`; returns it and the next const."""
    value = np.asarray(value, dtype=np.uint64) ^ np.uint64(const)
    const = (const * _MULT_A) & _MASK32
    value = np.asarray(value * np.uint64(const), dtype=np.uint64) & _LOW32
    return value ^ (value >> np.uint64(16)), const


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    left = np.asarray(np.uint64(_MIX_MULT_L) * x, dtype=np.uint64)
    right = np.asarray(np.uint64(_MIX_MULT_R) * y, dtype=np.uint64)
    result = np.asarray(left - right, dtype=np.uint64) & _LOW32
    return result ^ (result >> np.uint64(16))


def child_keys(parent: np.random.SeedSequence, indices: np.ndarray) -> np.ndarray:
    """Philox keys ``(K, 2)`` of the children ``spawn_key + (k,)`` of `parent`, k in `indices`.

    Each is ``SeedSequence(parent.entropy, spawn_key=parent.spawn_key + (k,),
    pool_size=parent.pool_size).generate_state(2, np.uint64)``, the key a
    :class:`numpy.random.Philox` takes from it, computed for every k at once: the child's
    pool is the parent's, mixed with the one more entropy word k.
    """
    k = np.asarray(indices, dtype=np.uint64)
    if k.size and int(k.max()) > _MASK32:
        raise ValueError("a batch has at most 2**32 data sets")
    size = parent.pool_size
    run = _words(parent.entropy)
    spawned = _words(parent.spawn_key) if len(parent.spawn_key) else 0
    # the parent's words: its run entropy, padded to the pool when it has a spawn key
    # (the child has one), then its spawn key; all but the first `size` are mixed in one
    # by one, each with `size` hashmix calls (the constant advances once a call)
    before = max(run, size) + spawned
    calls = size + size * (size - 1) + size * max(before - size, 0)
    const = (_INIT_A * pow(_MULT_A, calls, 1 << 32)) & _MASK32
    with np.errstate(over="ignore"):
        # (a parent without a spawn key has unpadded entropy: the missing words hash as
        # the zeros of padding, so its pool and its count of calls are the same)
        pool = [np.full(k.shape, np.uint64(w)) for w in parent.pool]
        for i in range(size):
            hashed, const = _hashmix(k, const)
            pool[i] = _mix(pool[i], hashed)
        const_b = _INIT_B
        state = []
        for i in range(4):  # 4 uint32 words: 2 uint64
            value = pool[i % size] ^ np.uint64(const_b)
            const_b = (const_b * _MULT_B) & _MASK32
            value = (value * np.uint64(const_b)) & _LOW32
            state.append(value ^ (value >> np.uint64(16)))
    low = state[0] | (state[1] << _SHIFT32)
    high = state[2] | (state[3] << _SHIFT32)
    return np.stack([low, high], -1)


def _mulhilo(a: np.ndarray, b: np.uint64) -> tuple[np.ndarray, np.ndarray]:
    """Return the high and low words of the 128-bit products of uint64 `a` and `b`."""
    a_lo, a_hi = a & _LOW32, a >> _SHIFT32
    b_lo, b_hi = b & _LOW32, b >> _SHIFT32
    lo_lo, hi_lo, lo_hi = a_lo * b_lo, a_hi * b_lo, a_lo * b_hi
    cross = (lo_lo >> _SHIFT32) + (hi_lo & _LOW32) + lo_hi
    return a_hi * b_hi + (hi_lo >> _SHIFT32) + (cross >> _SHIFT32), a * b


def philox_uniforms(keys: np.ndarray, count: int) -> np.ndarray:
    """Return the first `count` doubles of ``Generator(Philox(key))`` per key row ``(K, 2)``.

    Philox4x64-10 of counters 1, 2, ... (NumPy increments the counter before its first
    block), four 64-bit words a block, each ``(word >> 11) * 2**-53``.
    """
    rows = keys.shape[0]
    blocks = -(-count // 4)
    out = np.empty((rows, 4 * blocks), dtype=np.uint64)
    zero = np.zeros(rows, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for block in range(blocks):
            c0, c1, c2, c3 = np.full(rows, block + 1, dtype=np.uint64), zero, zero, zero
            k0, k1 = keys[:, 0].copy(), keys[:, 1].copy()
            for rnd in range(10):
                if rnd:
                    k0, k1 = k0 + _PHILOX_W0, k1 + _PHILOX_W1
                hi0, lo0 = _mulhilo(c0, _PHILOX_M0)
                hi1, lo1 = _mulhilo(c2, _PHILOX_M1)
                c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
            out[:, 4 * block : 4 * block + 4] = np.stack([c0, c1, c2, c3], -1)
    return (out[:, :count] >> np.uint64(11)).astype(np.float64) * 2.0**-53


class DataSetStreams(Sequence[np.random.Generator]):
    """The generators of a batch's data sets (see the module); item k is data set k's.

    A single data set (``batched=False``) has one: the caller's generator itself.
    """

    def __init__(self, generator: np.random.Generator, count: int, batched: bool) -> None:
        self._count = int(count)
        self._single = None if batched else generator
        self._parent = None
        self._made: dict[int, np.random.Generator] = {}
        self._drawn: dict[int, int] = {}  # words drawn from an unbuilt stream (compiled)
        if batched:
            seed_seq = generator.bit_generator.seed_seq
            assert isinstance(seed_seq, np.random.SeedSequence)  # check_rng's promise
            self._parent = seed_seq.spawn(1)[0]

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> np.random.Generator: ...

    @overload
    def __getitem__(self, index: slice) -> list[np.random.Generator]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if not -self._count <= index < self._count:
            raise IndexError("data set index out of range")
        index %= self._count
        if self._single is not None:
            return self._single
        made = self._made.get(index)
        if made is None:  # built once: a data set's generator keeps its state
            parent = self._parent
            assert parent is not None
            child = np.random.SeedSequence(
                parent.entropy, spawn_key=(*parent.spawn_key, index), pool_size=parent.pool_size
            )
            made = self._made[index] = np.random.Generator(np.random.Philox(child))
            skipped = self._drawn.pop(index, 0)
            if skipped:  # words already drawn by a compiled kernel: the stream goes on
                made.random(skipped)
        return made

    def unbuilt_keys(self, indices: np.ndarray) -> np.ndarray | None:
        """Return the Philox keys ``(len(indices), 2)`` of streams not yet built, or None.

        For compiled kernels that draw from data sets' streams themselves
        (:func:`perfci._core.kernels.philox_doubles`), then record it with
        :meth:`mark_drawn`. None for a single data set (its generator is the caller's)
        or when one of these streams has been handed out or drawn from (each stream
        is drawn from its first word here).
        """
        taken = self._made.keys() | self._drawn.keys()
        if self._parent is None or any(int(k) in taken for k in indices):
            return None
        return child_keys(self._parent, np.asarray(indices))

    def mark_drawn(self, indices: np.ndarray, words: int) -> None:
        """Record that `words` more uniforms of these unbuilt streams were drawn."""
        for k in np.asarray(indices).tolist():
            self._drawn[k] = self._drawn.get(k, 0) + int(words)

    def __iter__(self) -> Iterator[np.random.Generator]:
        return (self[i] for i in range(self._count))

    def subset(self, indices: np.ndarray) -> StreamSubset:
        """Return the streams of data sets `indices`, item j being data set ``indices[j]``'s."""
        return StreamSubset(self, np.asarray(indices, dtype=np.int64))

    def uniforms(self, count: int, indices: np.ndarray | None = None) -> np.ndarray:
        """Return ``(len(indices), count)``: the first `count` uniforms of those data sets.

        Equal to ``np.stack([self[k].random(count) for k in indices])`` on data sets whose
        generators have not drawn yet; drawn together, without building them (a batch's
        generators are not advanced: these are their streams' first uniforms). A single
        data set's generator advances as its ``random(count)`` would.
        """
        chosen = np.arange(self._count) if indices is None else np.asarray(indices)
        if not chosen.size:
            return np.zeros((0, count))
        if self._single is not None:
            return np.stack([self._single.random(count) for _ in chosen]).reshape(-1, count)
        assert self._parent is not None
        return philox_uniforms(child_keys(self._parent, chosen), count)


class StreamSubset(Sequence[np.random.Generator]):
    """Some data sets' streams of a :class:`DataSetStreams`, built only when asked for."""

    def __init__(self, streams: DataSetStreams, indices: np.ndarray) -> None:
        self._streams = streams
        self._indices = indices

    def __len__(self) -> int:
        return int(self._indices.size)

    @overload
    def __getitem__(self, index: int) -> np.random.Generator: ...

    @overload
    def __getitem__(self, index: slice) -> list[np.random.Generator]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._streams[int(self._indices[index])]

    def __iter__(self) -> Iterator[np.random.Generator]:
        return (self[i] for i in range(len(self)))

    def unbuilt_keys(self, positions: np.ndarray) -> np.ndarray | None:
        """:meth:`DataSetStreams.unbuilt_keys` of items `positions`."""
        return self._streams.unbuilt_keys(self._indices[np.asarray(positions, dtype=np.int64)])

    def mark_drawn(self, positions: np.ndarray, words: int) -> None:
        """:meth:`DataSetStreams.mark_drawn` of items `positions`."""
        self._streams.mark_drawn(self._indices[np.asarray(positions, dtype=np.int64)], words)
