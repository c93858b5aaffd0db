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


@pytest.mark.parametrize("size", [2000, 120_000])  # sorted below 100,000 values, hashed above
@pytest.mark.parametrize("kind", ["int", "float", "text", "object text", "2-d"])
def test_factorize_sorted_is_np_unique(kind, size, rng):
    from perfci.counting import factorize_sorted

    ids = rng.integers(-50, 50, size=size)
    values = {
        "int": ids,
        "float": ids / 4,
        "text": np.array([f"p{i:+03d}" for i in range(-50, 50)])[ids + 50],
        "object text": np.array([f"p{i}" for i in range(-50, 50)], dtype=object)[ids + 50],
        "2-d": ids.reshape(40, -1),
    }[kind]
    uniques, codes = factorize_sorted(values)
    # Reference: numpy.unique, which sorts every value
    ref_uniques, ref_codes = np.unique(values, return_inverse=True)
    assert uniques.dtype == ref_uniques.dtype
    np.testing.assert_array_equal(uniques, ref_uniques)
    np.testing.assert_array_equal(codes, ref_codes.reshape(values.shape))


def test_factorize_sorted_orders_ids_that_do_not_compare_by_their_text():
    from perfci.counting import factorize_sorted

    values = np.array([10, "b", 2, 10, "a", "10", 2.5], dtype=object)
    uniques, codes = factorize_sorted(values)
    # sorted(..., key=str), stable: 10 before "10" (first seen), numbers and text apart
    assert uniques.tolist() == [10, "10", 2, 2.5, "a", "b"]
    np.testing.assert_array_equal(uniques[codes], values)


def test_persons_of_mixed_id_types_are_counted_in_text_order(rng):
    y_true = rng.integers(0, 2, 120)
    y_pred = rng.integers(0, 2, 120)
    ids = np.array([3, "ann", 12, "bob"], dtype=object)
    groups = pd.Series(ids[rng.integers(0, 4, 120)])  # object column of numbers and text
    got = pc.confusion(y_true, y_pred, groups=groups)
    assert got.groups.tolist() == [12, 3, "ann", "bob"]  # "12" < "3" < "ann" < "bob"
    for i, person in enumerate(got.groups):
        mask = (groups == person).to_numpy()
        np.testing.assert_array_equal(
            got.counts[i], pc.confusion(y_true[mask], y_pred[mask]).counts
        )
    three = y_true + y_pred  # three classes
    multi = pc.confusion(three, y_pred, groups=groups)
    np.testing.assert_array_equal(multi.counts.sum(0), pc.confusion(three, y_pred).counts)


def test_person_order_and_id_dtype_do_not_depend_on_the_order_of_texts(rng):
    y_true = rng.integers(0, 2, 200)
    y_pred = rng.integers(0, 2, 200)
    groups = rng.choice(np.array(["zoe", "al", "mo"]), 200)
    got = pc.confusion(y_true, y_pred, groups=groups)
    perm = rng.permutation(200)
    again = pc.confusion(y_true[perm], y_pred[perm], groups=groups[perm])
    assert got.groups.dtype == groups.dtype
    np.testing.assert_array_equal(got.groups, ["al", "mo", "zoe"])
    np.testing.assert_array_equal(again.groups, got.groups)
    np.testing.assert_array_equal(again.counts, got.counts)


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
