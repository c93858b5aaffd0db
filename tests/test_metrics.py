import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

import perfci as pc
from perfci.counting import one_vs_rest


def random_labels(rng, size=200, prevalence=0.3, accuracy=0.85):
    y_true = (rng.random(size) < prevalence).astype(int)
    flip = rng.random(size) > accuracy
    return y_true, np.where(flip, 1 - y_true, y_true)


# perfci metric -> scikit-learn reference on the labels
SKLEARN = {
    "accuracy": skm.accuracy_score,
    "recall": skm.recall_score,
    "precision": skm.precision_score,
    "specificity": lambda t, p: skm.recall_score(t, p, pos_label=0),
    "npv": lambda t, p: skm.precision_score(t, p, pos_label=0),
    "f1": skm.f1_score,
    "balanced_accuracy": skm.balanced_accuracy_score,
    "kappa": skm.cohen_kappa_score,
    "mcc": skm.matthews_corrcoef,
}


@pytest.mark.parametrize("metric", sorted(SKLEARN))
@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_sklearn(metric, seed):
    rng = np.random.default_rng(seed)
    y_true, y_pred = random_labels(rng, size=int(rng.integers(20, 500)))
    counts = pc.confusion(y_true, y_pred)
    assert pc.compute_metric(counts, metric) == pytest.approx(
        SKLEARN[metric](y_true, y_pred), abs=1e-12
    )


@pytest.mark.parametrize("base", ["recall", "precision", "f1"])
@pytest.mark.parametrize("average", ["macro", "micro"])
def test_multiclass_averages_agree_with_sklearn(base, average, rng):
    y_true = rng.choice(["a", "b", "c", "d"], size=300)
    y_pred = np.where(rng.random(300) < 0.3, rng.choice(["a", "b", "c", "d"], size=300), y_true)
    counts = pc.confusion(y_true, y_pred)
    ref = getattr(skm, f"{base}_score")(y_true, y_pred, average=average)
    assert pc.compute_metric(counts, f"{average}_{base}") == pytest.approx(ref, abs=1e-12)


def test_micro_scores_equal_accuracy_for_single_label_data(rng):
    y_true = rng.choice(3, size=100)
    y_pred = rng.choice(3, size=100)
    counts = pc.confusion(y_true, y_pred)
    acc = np.mean(y_true == y_pred)
    for m in ["micro_recall", "micro_precision", "micro_f1"]:
        assert pc.compute_metric(counts, m) == pytest.approx(acc)


@pytest.mark.parametrize("seed", range(5))
def test_multiclass_accuracy_and_kappa_agree_with_sklearn(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 7))
    t = rng.choice(k, size=int(rng.integers(20, 400)))
    p = np.where(rng.random(t.size) < 0.4, rng.choice(k, size=t.size), t)
    counts = pc.confusion(t, p)
    assert pc.compute_metric(counts, "multiclass_accuracy") == pytest.approx(
        skm.accuracy_score(t, p), abs=1e-12
    )
    assert pc.compute_metric(counts, "multiclass_kappa") == pytest.approx(
        skm.cohen_kappa_score(t, p), abs=1e-12
    )


def test_multiclass_kappa_of_a_fixed_matrix_equals_statsmodels():
    # statsmodels.stats.inter_rater.cohens_kappa(m).kappa -> 0.6789383561643836 (0.14.x);
    # the share of the diagonal is 114 / 150 = 0.76
    m = np.array([[30, 4, 1, 0], [5, 22, 3, 2], [2, 3, 18, 4], [0, 1, 5, 25]])
    counts = one_vs_rest(m)
    kappa = pc.compute_metric(counts, "multiclass_kappa")
    assert kappa == pytest.approx(0.6789383561643836, abs=1e-14)
    assert pc.compute_metric(counts, "multiclass_accuracy") == pytest.approx(0.76, abs=1e-15)
    # micro_accuracy counts each text once per class (the other classes' tn too): not it
    assert pc.compute_metric(counts, "micro_accuracy") == pytest.approx(1 - 2 * 0.24 / 4)
    # undefined when both raters put every text in one class (chance agreement 1)
    with pytest.warns(pc.UndefinedMetricWarning, match="chance agreement is 1"):
        assert np.isnan(pc.compute_metric(one_vs_rest(np.diag([5, 0, 0])), "multiclass_kappa"))


def test_ppa_pna_formulas_and_rater_swap():
    # Disagreement matrix of the paper's table 2: a both positive, b and c one each, d none.
    a, b, c, d = 40, 7, 5, 148
    counts = np.array([a, b, c, d])
    swapped = np.array([a, c, b, d])  # the other rater as "truth"
    assert pc.compute_metric(counts, "ppa") == pytest.approx(2 * a / (2 * a + b + c))
    assert pc.compute_metric(counts, "pna") == pytest.approx(2 * d / (2 * d + b + c))
    for m in ["ppa", "pna", "kappa", "mcc", "accuracy", "f1"]:
        assert pc.compute_metric(swapped, m) == pytest.approx(pc.compute_metric(counts, m))
    # recall and precision trade places
    assert pc.compute_metric(swapped, "recall") == pc.compute_metric(counts, "precision")


def test_kappa_from_its_textbook_definition():
    tp, fp, fn, tn = 20, 5, 10, 15
    n = tp + fp + fn + tn
    po = (tp + tn) / n
    pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / n**2
    assert pc.compute_metric([tp, fp, fn, tn], "kappa") == pytest.approx((po - pe) / (1 - pe))


@pytest.mark.parametrize("metric", pc.BINARY_METRICS)
def test_vectorized_over_leading_axes(metric, rng):
    counts = rng.integers(1, 40, size=(3, 5, 4))
    got = pc.compute_metric(counts, metric)
    assert got.shape == (3, 5)
    for idx in np.ndindex(3, 5):
        assert got[idx] == pc.compute_metric(counts[idx], metric)


def test_non_integer_counts_are_allowed():
    assert pc.compute_metric([1.5, 0.5, 0.5, 1.5], "recall") == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("metric", "counts", "reason"),
    [
        ("recall", [0, 3, 0, 7], r"no reference positives \(tp \+ fn = 0\)"),
        ("precision", [0, 0, 3, 7], r"no classifier positives \(tp \+ fp = 0\)"),
        ("specificity", [3, 0, 7, 0], "no reference negatives"),
        ("npv", [3, 7, 0, 0], "no classifier negatives"),
        ("f1", [0, 0, 0, 9], "neither rater calls any text positive"),
        ("pna", [9, 0, 0, 0], "neither rater calls any text negative"),
        ("kappa", [0, 0, 0, 9], "chance agreement is 1"),
        ("mcc", [5, 5, 0, 0], "a row or column of the confusion matrix is empty"),
        ("balanced_accuracy", [0, 3, 0, 7], "recall or specificity is undefined"),
        ("accuracy", [0, 0, 0, 0], "there are no texts"),
    ],
)
def test_undefined_gives_nan_and_a_warning_naming_the_reason(metric, counts, reason):
    with pytest.warns(pc.UndefinedMetricWarning, match=f"^{metric} is undefined: .*{reason}"):
        assert np.isnan(pc.compute_metric(counts, metric))


def test_undefined_entries_in_a_batch_are_counted():
    with pytest.warns(pc.UndefinedMetricWarning, match="for 1 of 2 entries"):
        got = pc.compute_metric([[1, 0, 1, 5], [0, 2, 0, 5]], "recall")
    assert got[0] == 0.5 and np.isnan(got[1])


def test_macro_average_undefined_if_a_class_is():
    # class "c" is predicted but never in the reference: its recall is undefined
    counts = pc.confusion(["a", "b", "a", "b"], ["a", "c", "a", "b"])
    with pytest.warns(pc.UndefinedMetricWarning, match="recall is undefined for at least one"):
        assert np.isnan(pc.compute_metric(counts, "macro_recall"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pc.compute_metric(counts, "micro_recall") == pytest.approx(0.75)


def test_proportion_counts():
    x, n = pc.proportion_counts([[3, 1, 2, 4], [5, 0, 0, 5]], "precision")
    np.testing.assert_array_equal(x, [3, 5])
    np.testing.assert_array_equal(n, [4, 5])


@pytest.mark.parametrize(
    ("counts", "metric", "match"),
    [
        ([1, 2, 3], "recall", "last axis of length 4"),
        ([1, -2, 3, 4], "recall", "non-negative"),
        ([1, np.nan, 3, 4], "recall", "finite"),
        ([1, 2, 3, 4], "auc", r"`metric` must be one of \['accuracy'"),
        ([1, 2, 3, 4], "macro_f1", r"shape \(\.\.\., k, 4\)"),
    ],
)
def test_bad_input(counts, metric, match):
    with pytest.raises(ValueError, match=match):
        pc.compute_metric(counts, metric)


def test_proportion_counts_rejects_non_proportion_metric():
    with pytest.raises(ValueError, match="`metric` must be one of"):
        pc.proportion_counts([1, 2, 3, 4], "f1")


@pytest.mark.parametrize("metric", pc.BINARY_METRICS)
def test_metric_gradient_equals_central_differences_and_obeys_euler(metric):
    from perfci.metrics import metric_gradient

    rng = np.random.default_rng(11)
    counts = rng.integers(1, 60, size=(6, 4)).astype(float)
    analytic = metric_gradient(counts, metric)
    numeric = np.empty_like(counts)
    for k in range(4):
        step = np.zeros(4)
        step[k] = 1e-6
        h = counts * step  # a relative step in cell k
        up = pc.compute_metric(counts + h, metric)
        down = pc.compute_metric(counts - h, metric)
        numeric[:, k] = (up - down) / (2 * h[:, k])
    # central differences: truncation O(h^2), rounding about 1e-16 / 1e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-9)
    # every metric is homogeneous of degree 0 in the counts
    np.testing.assert_allclose((analytic * counts).sum(-1), 0, atol=1e-14)


def test_metric_gradient_is_nan_where_the_metric_is_undefined():
    from perfci.metrics import metric_gradient

    for metric in pc.BINARY_METRICS:
        counts = np.array([[0.0, 0.0, 0.0, 0.0], [5.0, 1.0, 2.0, 7.0]])
        g = metric_gradient(counts, metric)
        assert np.isnan(g[0]).all() and np.isfinite(g[1]).all(), metric
