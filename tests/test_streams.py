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


@pytest.mark.parametrize(("first", "count"), [(0, 1), (0, 8), (1, 7), (3, 10), (5, 23), (400, 33)])
def test_compiled_philox_words_equal_numpys(first, count):
    # kernels.philox_doubles (one i128 multiply a half-round) against NumPy's Philox
    from perfci._core.kernels import philox_doubles

    keys = child_keys(np.random.SeedSequence(11), np.array([0, 5]))
    for key in keys:
        out = np.empty(count)
        philox_doubles(key[0], key[1], first, out)
        expected = np.random.Generator(np.random.Philox(key=key)).random(first + count)[first:]
        assert np.array_equal(out, expected)


@pytest.mark.parametrize("metric", ["f1", "kappa", "recall"])
def test_compiled_iid_batch_equals_single_calls_given_each_data_sets_generator(metric):
    # The iid bootstrap of a batch draws in compiled code from the data sets' keys; each
    # data set's interval and replicates equal a single call given its generator, also
    # beside a data set too large for the tables (drawn by NumPy's multinomial).
    rng = np.random.default_rng(4)
    counts = rng.multinomial(60, [0.2, 0.1, 0.1, 0.6], size=7).astype(float)
    counts[3] = [40_000, 9_000, 11_000, 30_000]
    batch = pc.bootstrap_ci(counts, metric, n_resamples=300, rng=9, nested=False)
    streams = pc.batch_generators(9, 7)
    for k in range(7):
        one = pc.bootstrap_ci(counts[k], metric, n_resamples=300, rng=streams[k])
        assert np.array_equal(batch.distribution[k], one.distribution, equal_nan=True)
        assert (batch.low[k], batch.high[k]) == (one.low, one.high)


def test_a_stream_drawn_in_compiled_code_goes_on_where_it_stopped():
    # After a compiled draw of 10 words, the data set's generator, asked for later,
    # continues at word 10, as the generator that drew them would.
    streams = DataSetStreams(np.random.default_rng(2), 3, True)
    keys = streams.unbuilt_keys(np.array([0, 2]))
    assert keys is not None
    streams.mark_drawn(np.array([0, 2]), 10)
    assert streams.unbuilt_keys(np.array([2])) is None  # drawn from: not from word 0 again
    expected = np.random.Generator(np.random.Philox(key=keys[1])).random(13)[10:]
    assert np.array_equal(streams[2].random(3), expected)
    assert streams.unbuilt_keys(np.array([1])) is not None
    assert DataSetStreams(np.random.default_rng(2), 1, False).unbuilt_keys(np.array([0])) is None
