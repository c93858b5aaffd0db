"""Elementwise formulas on large arrays, evaluated in cache-sized blocks.

A formula of a dozen NumPy operations on 10**6 elements makes a dozen passes over
8 MB arrays, each limited by memory bandwidth. Evaluated on blocks of
:data:`BLOCK` elements, every temporary of a block stays in the CPU's cache (about
128 kB an array), and the same operations run about twice as fast. The values are the
same, bit for bit: each element goes through the same operations in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["BLOCK", "any_blockwise", "blockwise"]

#: Elements per block: 128 kB per float64 array, well inside any x86-64 L2 cache.
BLOCK = 2**14

# Chunks of at most the buffer size, handed to Python one at a time.
_FLAGS: Any = ["external_loop", "buffered", "zerosize_ok"]


def blockwise(
    function: Callable[..., None],
    inputs: Sequence[np.ndarray],
    out_dtypes: Sequence[Any],
    *,
    block: int | None = None,
) -> list[np.ndarray]:
    """Evaluate the elementwise `function` of broadcast `inputs` block by block.

    Parameters
    ----------
    function : callable
        ``function(*inputs, out=outputs)``, elementwise: it writes into each array of
        the tuple `outputs` (with ``out=`` of a ufunc, or :func:`numpy.copyto`) values
        that depend only on the input elements at the same (broadcast) position.
    inputs : sequence of numpy.ndarray
        Arrays that broadcast together. 0-d inputs are passed to every block as they
        are (a scalar stays a scalar); the others are cut into blocks of the broadcast
        shape.
    out_dtypes : sequence of dtype
        The dtype of each output.
    block : int, optional
        Elements per block; default :data:`BLOCK` (read at the call).

    Returns
    -------
    list of numpy.ndarray
        The outputs, new arrays of the broadcast shape of `inputs`. Inputs of at most
        `block` elements go to `function` in one call.
    """
    block = BLOCK if block is None else block
    arrays = [np.asarray(a) for a in inputs]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    if int(np.prod(shape)) <= block:
        outputs = tuple(np.empty(shape, dtype=d) for d in out_dtypes)
        function(*arrays, out=outputs)
        return list(outputs)
    cut = [i for i, a in enumerate(arrays) if a.ndim]
    # None operands are the outputs, which the iterator allocates
    operands: list[Any] = [np.broadcast_to(arrays[i], shape) for i in cut]
    operands += [None] * len(out_dtypes)
    op_flags: Any = [["readonly"]] * len(cut) + [["writeonly", "allocate"]] * len(out_dtypes)
    iterator = np.nditer(
        operands,
        flags=_FLAGS,
        op_flags=op_flags,
        op_dtypes=[arrays[i].dtype for i in cut] + list(out_dtypes),
        order="C",
        buffersize=block,
    )
    with iterator:
        for chunk in iterator:
            args = list(arrays)
            for i, piece in zip(cut, chunk, strict=False):
                args[i] = piece
            function(*args, out=tuple(chunk[len(cut) :]))
        return [np.asarray(o) for o in iterator.operands[len(cut) :]]


def any_blockwise(
    predicate: Callable[..., np.ndarray],
    inputs: Sequence[np.ndarray],
    *,
    block: int | None = None,
) -> bool:
    """Whether the elementwise boolean `predicate` of broadcast `inputs` holds anywhere.

    The same as ``bool(np.any(predicate(*inputs)))``, block by block (of :data:`BLOCK`
    elements unless `block` is given): no boolean temporary of the full size, and it
    stops at the first block where it holds.
    """
    block = BLOCK if block is None else block
    arrays = [np.asarray(a) for a in inputs]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    if int(np.prod(shape)) <= block:
        return bool(np.any(predicate(*arrays)))
    op_flags: Any = [["readonly"]] * len(arrays)
    iterator = np.nditer(
        [np.broadcast_to(a, shape) for a in arrays],
        flags=_FLAGS,
        op_flags=op_flags,
        order="C",
        buffersize=block,
    )
    with iterator:
        return any(bool(np.any(predicate(*chunk))) for chunk in iterator)
