"""Edge cases of the library's arguments (probe 31f): many classifiers, designs, folds, labels."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import perfci as pc


def _sample(n: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n)
    return truth, np.where(rng.random(n) < 0.8, truth, 1 - truth)


def test_rank_ci_gives_a_perfect_classifier_its_own_interval():
    """C19: no overflow warning; recall 1 gets metric_ci's interval at level 1 - alpha / K."""
    truth, pred = _sample()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ranks = pc.rank_ci(truth, {"perfect": truth, "pred": pred}, "recall")
    row = ranks.set_index("classifier").loc["perfect"]
    alone = pc.metric_ci(truth, truth, "recall", confidence_level=1 - 0.05 / 2)
    assert (row["low"], row["high"]) == pytest.approx((alone.low, alone.high), rel=1e-12)
    assert row["high"] == 1.0 and row["low"] < 1.0
    # the other classifier's band takes the rest of alpha: alone here, its own level
    other = ranks.set_index("classifier").loc["pred"]
    assert np.isfinite(other["low"]) and other["low"] < other["estimate"] < other["high"]


def test_rank_ci_with_persons_gives_a_perfect_classifier_its_own_interval():
    """C19: with `groups`, the perfect classifier's interval is metric_ci's of persons."""
    truth, pred = _sample()
    persons = np.repeat(np.arange(10), 6)
    preds = {"perfect": truth, "pred": pred, "flip": 1 - pred}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ranks = pc.rank_ci(truth, preds, "recall", groups=persons).set_index("classifier")
    alone = pc.metric_ci(truth, truth, "recall", groups=persons, confidence_level=1 - 0.05 / 3)
    assert ranks.loc["perfect", "low"] == pytest.approx(alone.low, rel=1e-12)


def test_rank_ci_names_a_classifier_without_an_interval():
    """C19: an undefined metric gives NaN ends with a warning naming the classifier."""
    truth, pred = _sample()
    preds = {"a": pred, "none": np.zeros_like(pred), "b": 1 - pred}
    with pytest.warns(pc.UndefinedMetricWarning, match=r"none \(its precision is undefined"):
        ranks = pc.rank_ci(truth, preds, "precision").set_index("classifier")
    assert np.isnan(ranks.loc["none", "low"]) and np.isfinite(ranks.loc["a", "low"])


def test_many_classifiers_accept_a_list_of_label_arrays():
    """L28: a list (or tuple) of label arrays holds one classifier each, named by position."""
    truth, pred = _sample()
    listed = pc.rank_ci(truth, [pred, 1 - pred], "recall")
    framed = pc.rank_ci(truth, pd.DataFrame({"0": pred, "1": 1 - pred}), "recall")
    pd.testing.assert_frame_equal(listed, framed)
    table = pc.compare_many(truth, (pred, 1 - pred, truth), "recall")
    assert list(table["classifier"]) == ["0", "0", "1"]


def test_a_square_list_of_classifiers_is_refused():
    """L28: as many sequences as texts, each a label per text: which axis is which?"""
    with pytest.raises(ValueError, match="`preds` is a list of 3 sequences of 3 labels"):
        pc.rank_ci([1, 0, 1], [[1, 0, 1]] * 3, "recall")


def test_a_list_of_short_classifiers_names_the_column():
    truth, pred = _sample()
    with pytest.raises(ValueError, match="`preds` column '0' must hold one label per text"):
        pc.rank_ci(truth, [pred[:50], pred[:50]], "recall")


def test_weights_that_contradict_the_stratum_sizes_are_refused():
    """L27: each stratum's weights must add up to its corpus size."""
    truth, pred = _sample()
    strata = np.repeat(["A", "B"], 30)
    sizes = np.repeat([100, 1000], 30)
    with pytest.raises(ValueError, match="`weights` of stratum 'A' add up to 30 .*`stratum_sizes`"):
        pc.metric_ci(truth, pred, "recall", strata=strata, stratum_sizes=sizes, weights=np.ones(60))
    fitting = pc.metric_ci(
        truth, pred, "recall", strata=strata, stratum_sizes=sizes, weights=sizes / 30
    )
    derived = pc.metric_ci(truth, pred, "recall", strata=strata, stratum_sizes=sizes)
    assert fitting.estimate == pytest.approx(derived.estimate, rel=1e-12)
    rounded = np.repeat([3.33, 33.3], 30)  # weights rounded for a table: still fit
    pc.metric_ci(truth, pred, "recall", strata=strata, stratum_sizes=sizes, weights=rounded)


@pytest.mark.parametrize("sizes", [np.repeat([100, 1000], 30), {0: 100}])
def test_stratum_sizes_per_stratum_need_strata(sizes):
    """L26: sizes per text or per stratum without `strata` name the missing argument."""
    truth, pred = _sample()
    with pytest.raises(ValueError, match="`stratum_sizes` needs `strata`"):
        pc.metric_ci(truth, pred, "recall", stratum_sizes=sizes)
    one = pc.metric_ci(truth, pred, "recall", stratum_sizes=np.array(400.0))
    assert np.isfinite(one.low)


def test_effective_sample_size_refuses_clusters_that_cannot_hold_the_texts():
    """L17: n_texts must be n_clusters x mean_cluster_size (within rounding)."""
    with pytest.raises(ValueError, match="`mean_cluster_size` 10 does not fit `n_texts` 10"):
        pc.effective_sample_size(10, icc=0.1, mean_cluster_size=10, n_clusters=50)
    with pytest.raises(ValueError, match="`n_clusters` 40"):
        pc.effective_sample_size(400, icc=0.1, mean_cluster_size=20, n_clusters=40)
    rounded = pc.effective_sample_size(400, icc=0.1, mean_cluster_size=10.8, n_clusters=37)
    assert np.isfinite(rounded)
    both = pc.effective_sample_size(400, icc=0.1, mean_cluster_size=10, n_clusters=40)
    assert both == pytest.approx(pc.effective_sample_size(400, icc=0.1, mean_cluster_size=10))


def test_grouped_folds_refuses_n_texts_other_than_the_groups():
    """L21: `n_texts` beside `groups` must be their number."""
    with pytest.raises(ValueError, match="`n_texts` is 5, but `groups` holds 3"):
        pc.grouped_folds(2, n_texts=5, groups=[1, 1, 2])
    folds = pc.grouped_folds(2, n_texts=3, groups=[1, 1, 2], rng=0)
    np.testing.assert_array_equal(folds, pc.grouped_folds(2, groups=[1, 1, 2], rng=0))


@pytest.mark.parametrize(
    ("labels", "shown"), [([0, 1, 1], "1"), ([0, 1, "1"], "1"), (["a", "b", "a"], "'a'")]
)
def test_confusion_refuses_repeated_labels(labels, shown):
    """L12: a class named twice in `labels` is a ValueError naming it, not pandas'."""
    truth, pred = (["a", "b", "a"], ["a", "b", "b"]) if "a" in labels else ([1, 0, 1], [1, 0, 0])
    with pytest.raises(ValueError, match=f"^`labels` repeats {shown}: give each class once"):
        pc.confusion(truth, pred, labels=labels)
