"""Cache-sized blocks: evaluating block by block gives the whole-array values, bit for bit."""

import numpy as np
import pytest

from perfci._core import blocks
from perfci._core.validation import check_real_array


def _formula(x, n, z, out):
    # a formula of the kind the interval functions are: several ufuncs and a where
    p = np.divide(x, n, out=out[0])
    np.copyto(out[1], np.where(x == 0, 0.0, p - z * np.sqrt(p * (1 - p) / n)))
    np.greater(p, 0.5, out=out[2])


def _whole(x, n, z):
    p = x / n
    return [p, np.where(x == 0, 0.0, p - z * np.sqrt(p * (1 - p) / n)), p > 0.5]


@pytest.mark.parametrize("block", [1, 7, 64, 10**6])
def test_blockwise_equals_the_whole_array_formula(block, rng):
    n = rng.integers(1, 50, size=(31, 9)).astype(float)
    x = np.floor(n * rng.uniform(size=n.shape))
    z = rng.uniform(1, 3, size=9)  # varies along the last axis only: broadcast
    for args in [(x, n, z), (x[::2, ::-1], n[::2, ::-1], z[::-1]), (x, 50.0, 1.96)]:
        arrays = [np.asarray(a) for a in args]
        got = blocks.blockwise(_formula, arrays, (float, float, bool), block=block)
        for g, w in zip(got, _whole(*arrays), strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def test_blockwise_reads_the_block_size_at_the_call(monkeypatch):
    seen = []

    def record(x, out):
        seen.append(x.size)
        np.copyto(out[0], x)

    monkeypatch.setattr(blocks, "BLOCK", 4)
    out = blocks.blockwise(record, [np.arange(10.0)], (float,))[0]
    np.testing.assert_array_equal(out, np.arange(10.0))
    assert seen == [4, 4, 2]


def test_blockwise_of_scalars_and_empty_inputs():
    got = blocks.blockwise(_formula, [np.asarray(3.0), np.asarray(4.0), 1.0], (float, float, bool))
    assert [g.shape for g in got] == [(), (), ()]
    assert got[0] == 0.75 and bool(got[2])
    empty = blocks.blockwise(_formula, [np.zeros(0), np.ones(0), 1.0], (float, float, bool))
    assert [g.shape for g in empty] == [(0,), (0,), (0,)]


@pytest.mark.parametrize("block", [3, 64, 10**6])
def test_any_blockwise_equals_np_any(block, rng):
    x = rng.uniform(size=(50, 7))
    n = x + rng.uniform(size=7)
    assert blocks.any_blockwise(np.greater, (x, n), block=block) is False
    for where in [(0, 0), (25, 3), (49, 6)]:  # first block, middle, last element
        bad = x.copy()
        bad[where] = 2.0
        assert blocks.any_blockwise(np.greater, (bad, n), block=block) is True
    assert blocks.any_blockwise(np.greater, (np.zeros(0), 1.0), block=block) is False


@pytest.mark.parametrize(
    "value", [[1.0, np.nan], [np.inf, 1.0], [1.0, -np.inf], np.full((3, 4), np.nan)]
)
def test_check_real_array_finds_nan_and_infinity_by_reductions(value):
    with pytest.raises(ValueError, match="`v` must be finite numbers; got NaN or infinity"):
        check_real_array("v", value)


def test_check_real_array_copies_unless_told_not_to():
    a = np.array([1.0, 2.0])
    assert not np.shares_memory(check_real_array("a", a), a)
    assert check_real_array("a", a, copy=False) is a
    ints = np.array([1, 2])
    assert check_real_array("a", ints, copy=False).dtype == float  # converted: a new array
