"""Keyed Philox streams of a batch's data sets (perfci._core.streams).

References: NumPy's own SeedSequence and Philox, called one data set at a time.
"""

import numpy as np
import pytest

import perfci as pc
from perfci._core.streams import DataSetStreams, child_keys, philox_uniforms


@pytest.mark.parametrize(
    ("entropy", "spawn_key", "pool_size"),
    [
        (1, (), 4),
        (12345, (3, 7), 4),
        (2**200 + 17, (), 4),
        ([1, 2, 3, 4, 5, 6], (9,), 4),
        (7, (2**40,), 4),
        (5, (), 8),
        (None, (), 4),
    ],
)
def test_keys_and_uniforms_equal_numpys_one_data_set_at_a_time(entropy, spawn_key, pool_size):
    parent = np.random.SeedSequence(entropy, spawn_key=spawn_key, pool_size=pool_size)
    indices = np.array([0, 1, 2, 999, 2**32 - 1])
    children = [
        np.random.SeedSequence(
            parent.entropy, spawn_key=(*parent.spawn_key, int(k)), pool_size=pool_size
        )
        for k in indices
    ]
    keys = child_keys(parent, indices)
    assert np.array_equal(keys, np.stack([c.generate_state(2, np.uint64) for c in children]))
    drawn = np.stack([np.random.Generator(np.random.Philox(c)).random(9) for c in children])
    assert np.array_equal(philox_uniforms(keys, 9), drawn)


def test_streams_are_generators_that_spawn_and_uniforms_drawn_together_equal_them():
    streams = pc.batch_generators(3, 6)
    assert len(streams) == 6
    one = streams[4]
    assert isinstance(one.bit_generator, np.random.Philox)
    assert len(one.spawn(2)) == 2  # a data set's generator can spawn (subgroups do)
    together = DataSetStreams(np.random.default_rng(3), 6, True).uniforms(8, np.array([1, 4]))
    assert np.array_equal(together, np.stack([streams[1].random(8), streams[4].random(8)]))
    # distinct data sets, distinct streams; the same seed, the same streams
    assert not np.array_equal(streams[0].random(4), streams[1].random(4))
    assert np.array_equal(pc.batch_generators(3, 6)[2].random(3), streams[2].random(3))
    with pytest.raises(IndexError):
        streams[6]
    with pytest.raises(ValueError, match="`size`"):
        pc.batch_generators(3, 0)


def test_a_generator_passed_on_advances_once_per_batched_call():
    rng = np.random.default_rng(8)
    first, second = pc.batch_generators(rng, 2), pc.batch_generators(rng, 2)
    assert not np.array_equal(first[0].random(3), second[0].random(3))
    # a single data set draws from the caller's generator itself
    single = DataSetStreams(np.random.default_rng(8), 1, False)
    assert np.array_equal(single.uniforms(3), np.random.default_rng(8).random(3)[None])
