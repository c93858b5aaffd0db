import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import confusion_matrix, multilabel_confusion_matrix

import perfci as pc


def test_binary_cells_order_matches_sklearn(rng):
    y_true = rng.integers(0, 2, 100)
    y_pred = rng.integers(0, 2, 100)
    tn, fp, fn, tp = confusion_matrix(y_true, y_pred, labels=[0, 1]).ravel()
    np.testing.assert_array_equal(pc.confusion(y_true, y_pred).counts, [tp, fp, fn, tn])


@pytest.mark.parametrize("kind", [list, np.asarray, pd.Series])
def test_input_types(kind):
    t, p = ["y", "n", "y", "y"], ["y", "y", "n", "y"]
    got = pc.confusion(kind(t), kind(p), positive="y")
    np.testing.assert_array_equal(got.counts, [2, 1, 1, 0])
    np.testing.assert_array_equal(np.asarray(got), got.counts)


def test_boolean_labels_default_to_true_positive():
    got = pc.confusion([True, False, True], [True, True, False])
    np.testing.assert_array_equal(got.counts, [1, 1, 1, 0])
    assert got.positive == 1


def test_groups_give_one_row_per_person_that_sums_to_the_total(rng):
    y_true = rng.integers(0, 2, 300)
    y_pred = rng.integers(0, 2, 300)
    groups = rng.choice(["ann", "bob", "cy", "dee"], 300)
    got = pc.confusion(y_true, y_pred, groups=groups)
    assert got.counts.shape == (4, 4)
    np.testing.assert_array_equal(got.groups, ["ann", "bob", "cy", "dee"])
    np.testing.assert_array_equal(got.counts.sum(0), pc.confusion(y_true, y_pred).counts)
    for i, g in enumerate(got.groups):
        mask = groups == g
        np.testing.assert_array_equal(
            got.counts[i], pc.confusion(y_true[mask], y_pred[mask]).counts
        )


def test_multiclass_one_vs_rest_matches_sklearn(rng):
    labels = np.array(["neg", "neu", "pos"])
    y_true = rng.choice(labels, 200)
    y_pred = rng.choice(labels, 200)
    got = pc.confusion(y_true, y_pred)
    ref = multilabel_confusion_matrix(y_true, y_pred, labels=labels)  # [[tn, fp], [fn, tp]]
    expected = np.stack([ref[:, 1, 1], ref[:, 0, 1], ref[:, 1, 0], ref[:, 0, 0]], axis=-1)
    np.testing.assert_array_equal(got.counts, expected)
    np.testing.assert_array_equal(got.classes, labels)
    assert got.dims == ("class", "cell")


def test_multiclass_with_groups_and_explicit_labels(rng):
    y_true = rng.choice(3, 90)
    y_pred = rng.choice(3, 90)
    groups = np.repeat([7, 3, 5], 30)
    got = pc.confusion(y_true, y_pred, groups=groups, labels=[2, 1, 0, 9])
    assert got.counts.shape == (3, 4, 4)
    assert got.dims == ("person", "class", "cell")
    np.testing.assert_array_equal(got.counts[:, 3, :3], 0)  # class 9 never occurs
    np.testing.assert_array_equal(
        got.counts[0], pc.confusion(y_true[30:60], y_pred[30:60], labels=[2, 1, 0, 9]).counts
    )  # person 3 sorts first


def test_positive_picks_one_class_of_many():
    got = pc.confusion(["a", "b", "c"], ["a", "c", "c"], positive="c")
    np.testing.assert_array_equal(got.counts, [1, 1, 0, 1])


def test_to_dataframe():
    df = pc.confusion([1, 0, 1, 1], [1, 1, 0, 1], groups=["x", "x", "y", "y"]).to_dataframe()
    assert list(df.columns) == ["tp", "fp", "fn", "tn"]
    assert list(df.index) == ["x", "y"]
    assert df.loc["y"].tolist() == [1, 0, 1, 0]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"y_true": [1, 0], "y_pred": [1, 0, 1]},
            "`y_true` and `y_pred` must have the same length",
        ),
        ({"y_true": [], "y_pred": []}, "`y_true` must not be empty"),
        ({"y_true": [1, None], "y_pred": [1, 0]}, "`y_true` contains missing values"),
        ({"y_true": [1, 0], "y_pred": [np.nan, 0]}, "`y_pred` contains missing values"),
        ({"y_true": ["a", "b"], "y_pred": ["a", "a"]}, "`positive` must name the positive label"),
        (
            {"y_true": [1, 0], "y_pred": [1, 0], "positive": "yes"},
            "`positive` label 'yes' is not among",
        ),
        ({"y_true": [1, 0], "y_pred": [1, 0], "groups": [1]}, "`groups` must have one id per text"),
        ({"y_true": [1, 2, 3], "y_pred": [1, 2, 3], "labels": [1, 2]}, "`labels` must include"),
        ({"y_true": [[1, 0]], "y_pred": [[1, 0]]}, "`y_true` must be one-dimensional"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.confusion(**kwargs)
