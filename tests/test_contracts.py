"""Contract tests of the one engine: a batched call equals the loop of single calls.

For every interval family, many data sets in one call along leading axes give exactly
(draw for draw, bit for bit) what the single calls give, with data set k of K using
``perfci.batch_generators(rng, K)[k]``; and persons without texts are not persons, so
padding a ragged batch with them changes nothing.
"""

import warnings

import numpy as np
import pytest

import perfci as pc


def _children(seed, k):
    return pc.batch_generators(seed, k)


def _fields(ci):
    return np.array([ci.estimate, ci.low, ci.high, ci.standard_error], dtype=float)


def _batched_fields(ci, k):
    return np.stack(
        [
            np.asarray(getattr(ci, f), float).reshape(-1)[k]
            for f in ("estimate", "low", "high", "standard_error")
        ]
    )


@pytest.mark.parametrize("interval", pc.BOOTSTRAP_INTERVALS)
@pytest.mark.parametrize(
    ("metric", "cells"),
    [
        ("proportion", [0.85, 0.15]),
        ("f1", [0.1, 0.02, 0.03, 0.85]),
        ("kappa", [0.3, 0.1, 0.1, 0.5]),
    ],
)
def test_iid_batch_equals_loop_of_single_calls(metric, cells, interval):
    counts = np.random.default_rng(1).multinomial(40, cells, size=(2, 3))
    kwargs = dict(interval=interval, pseudo_count=1, n_resamples=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched = pc.bootstrap_ci(counts, metric, rng=5, nested=False, **kwargs)
        flat = counts.reshape(6, -1)
        for k, g in enumerate(_children(5, 6)):
            single = pc.bootstrap_ci(flat[k], metric, rng=g, **kwargs)
            np.testing.assert_array_equal(_batched_fields(batched, k), _fields(single))
            if batched.distribution is None:  # a proportion: its order statistics only
                assert single.distribution is None
                continue
            row = batched.distribution.reshape(6, -1)[k]
            np.testing.assert_array_equal(row[~np.isnan(row)], single.distribution)
    assert batched.low.shape == (2, 3)


@pytest.mark.parametrize("scheme", ["iid", "cluster", "hierarchical"])
@pytest.mark.parametrize("interval", pc.BOOTSTRAP_INTERVALS)
@pytest.mark.parametrize("metric", ["proportion", "recall", "f1"])
def test_nested_batch_with_padding_equals_loop_of_single_calls(scheme, interval, metric):
    rng = np.random.default_rng(2)
    width = 2 if metric == "proportion" else 4
    probs = [0.8, 0.2] if width == 2 else [0.3, 0.05, 0.1, 0.55]
    persons = [3, 6, 4, 5]  # a ragged batch of four data sets
    ragged = [rng.multinomial(rng.integers(1, 12), probs, size=m) for m in persons]
    padded = np.zeros((len(persons), 9, width), dtype=int)
    for k, cells in enumerate(ragged):
        # the data set's persons scattered among empty rows
        padded[k, rng.choice(9, size=len(cells), replace=False)] = cells
    kwargs = dict(scheme=scheme, interval=interval, pseudo_count=1, n_resamples=250)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched = pc.bootstrap_ci(padded, metric, rng=8, nested=True, **kwargs)
        for k, g in enumerate(_children(8, len(persons))):
            single = pc.bootstrap_ci(ragged[k], metric, rng=g, nested=True, **kwargs)
            np.testing.assert_array_equal(_batched_fields(batched, k), _fields(single))
            if scheme != "iid":
                assert batched.n_clusters[k] == single.n_clusters == persons[k]


def test_padding_a_single_data_set_with_empty_persons_changes_nothing():
    cells = np.array([[3, 1], [5, 0], [2, 2], [7, 1]])
    padded = np.vstack([np.zeros((3, 2), int), cells[:2], np.zeros((1, 2), int), cells[2:]])
    for scheme in ["cluster", "hierarchical"]:
        a = pc.bootstrap_ci(cells, "proportion", scheme=scheme, n_resamples=500, rng=3)
        b = pc.bootstrap_ci(padded, "proportion", scheme=scheme, n_resamples=500, rng=3)
        np.testing.assert_array_equal(a.distribution, b.distribution)
        assert (a.low, a.high, a.n_clusters) == (b.low, b.high, b.n_clusters)


def test_a_data_set_without_texts_in_a_batch_is_nan_with_a_warning():
    counts = np.array([[[3, 1], [4, 0]], [[0, 0], [0, 0]]])
    with pytest.warns(pc.UndefinedMetricWarning, match="1 of 2 data sets have no texts"):
        ci = pc.bootstrap_ci(counts, "proportion", scheme="cluster", n_resamples=100, rng=1)
    assert np.isfinite(ci.low[0]) and np.isnan(ci.low[1]) and np.isnan(ci.high[1])
    with pytest.raises(ValueError, match="at least 2 persons with texts .*; got 0"):
        pc.bootstrap_ci(counts[1], "proportion", scheme="cluster", n_resamples=100, rng=1)


def test_iid_counts_with_leading_axes_must_say_what_they_are():
    with pytest.raises(ValueError, match="pass `nested=True`"):
        pc.bootstrap_ci([[3, 1], [4, 0]], "proportion")
    pooled = pc.bootstrap_ci([[3, 1], [4, 0]], "proportion", nested=True, scheme="iid", rng=1)
    alone = pc.bootstrap_ci([7, 1], "proportion", rng=1)
    assert (pooled.low, pooled.high) == (alone.low, alone.high)


def test_exact_percentile_batch_equals_loop():
    counts = np.array([[19, 1], [15, 5], [20, 0]])
    batched = pc.bootstrap_ci(counts, "proportion", n_resamples="exact", nested=False)
    for k, c in enumerate(counts):
        single = pc.bootstrap_ci(c, "proportion", n_resamples="exact")
        assert (batched.low[k], batched.high[k]) == (single.low, single.high)


@pytest.mark.parametrize("method", pc.ANALYTIC_METHODS)
def test_analytic_batch_equals_loop(method):
    x = np.array([[0, 3, 10], [19, 20, 7]])
    n = np.array([[10, 10, 10], [20, 20, 30]])
    batched = pc.proportion_ci(x, n, method=method)
    for i in np.ndindex(x.shape):
        single = pc.proportion_ci(int(x[i]), int(n[i]), method=method)
        assert (batched.low[i], batched.high[i]) == (single.low, single.high)


@pytest.mark.parametrize("design", pc.DESIGNS)
@pytest.mark.parametrize("df_adjust", [None, *pc.DF_ADJUSTMENTS])
def test_clustered_batch_with_padding_equals_loop(design, df_adjust):
    rng = np.random.default_rng(4)
    trials = rng.integers(1, 15, size=(3, 7))
    successes = rng.binomial(trials, 0.85)
    padded_y = np.concatenate([successes, np.zeros((3, 2), int)], axis=1)
    padded_n = np.concatenate([trials, np.zeros((3, 2), int)], axis=1)
    method = "wilson" if design == "edge" else "agresti_coull"  # edge takes Wilson only
    kwargs = dict(method=method, design=design, df_adjust=df_adjust)
    batched = pc.clustered_proportion_ci(padded_y, padded_n, **kwargs)
    for k in range(3):
        single = pc.clustered_proportion_ci(successes[k], trials[k], **kwargs)
        for field in ("low", "high", "icc", "design_effect", "n_eff", "df"):
            # deterministic: equal up to the order of floating-point sums
            np.testing.assert_allclose(
                getattr(batched, field)[k], getattr(single, field), rtol=1e-13, atol=0
            )


@pytest.mark.parametrize("groups", [False, True])
@pytest.mark.parametrize("metric", ["recall", "f1"])
def test_compare_batch_equals_loop(metric, groups):
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 2, size=(3, 60))
    a = np.where(rng.random((3, 60)) < 0.85, truth, 1 - truth)
    b = np.where(rng.random((3, 60)) < 0.8, truth, 1 - truth)
    person = np.repeat(np.arange(12), 5) if groups else None
    kwargs = dict(method="bootstrap", n_resamples=300, pseudo_count=1)
    if groups:
        kwargs["scheme"] = "cluster"
    batched = pc.compare(truth, a, b, metric, groups=person, rng=6, **kwargs)
    for k, g in enumerate(_children(6, 3)):
        single = pc.compare(truth[k], a[k], b[k], metric, groups=person, rng=g, **kwargs)
        for field in (
            "difference",
            "low",
            "high",
            "disagreement",
            "newcombe_low",
            "mcnemar_pvalue",
        ):
            np.testing.assert_array_equal(getattr(batched, field)[k], getattr(single, field))


@pytest.mark.parametrize("scheme", ["iid", "cluster", "hierarchical"])
def test_evaluation_buffers_split_across_data_sets_change_nothing(scheme, monkeypatch):
    # The engine evaluates the resamples of several data sets together, in buffers of
    # about AUTO_BATCH_ELEMENTS numbers; buffers that end inside a data set's resamples
    # (and batches of resamples shrunk with them) leave every replicate as it was.
    from perfci._core import resampling

    counts = np.random.default_rng(3).multinomial(15, [0.3, 0.05, 0.1, 0.55], size=(5, 6))
    kwargs = dict(scheme=scheme, pseudo_count=1, n_resamples=101, rng=4, nested=True)
    whole = pc.bootstrap_ci(counts, "f1", **kwargs)
    monkeypatch.setattr(resampling, "AUTO_BATCH_ELEMENTS", 4 * 37)
    split = pc.bootstrap_ci(counts, "f1", **kwargs)
    np.testing.assert_array_equal(whole.distribution, split.distribution)
    for k, g in enumerate(_children(4, 5)):
        single = pc.bootstrap_ci(counts[k], "f1", **{**kwargs, "rng": g})
        np.testing.assert_array_equal(split.distribution[k], single.distribution)
