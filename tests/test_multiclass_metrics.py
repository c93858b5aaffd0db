"""The k-class accuracy and kappa: their intervals, rows and names."""

import numpy as np
import pytest

import perfci as pc
from perfci import policy
from perfci.metrics import right_wrong_cells

RNG = np.random.default_rng(20261203)
TRUTH = RNG.integers(0, 4, 300)
PRED = np.where(RNG.random(300) < 0.6, TRUTH, RNG.integers(0, 4, 300))
PERSON = np.arange(300) // 10  # 30 persons of 10 texts


def test_multiclass_accuracy_gets_the_recommended_interval_of_a_proportion():
    """Texts classified right are a proportion: its interval is the proportion's.

    The k x k bootstrap with a pseudo count in each of the 16 cells pulled the 4-class
    accuracy 0.667 to 0.646 and gave [0.592, 0.699].
    """
    right = int(np.sum(TRUTH == PRED))
    ci = pc.metric_ci(TRUTH, PRED, "multiclass_accuracy")
    ref = pc.proportion_ci(right, TRUTH.size, method=policy.recommended_method("accuracy"))
    assert ci.metric == "multiclass_accuracy" and ci.method == "agresti_coull"
    assert (ci.estimate, ci.low, ci.high) == pytest.approx((ref.estimate, ref.low, ref.high))
    # nested: the clustered interval of the right texts per person
    nested = pc.metric_ci(TRUTH, PRED, "multiclass_accuracy", groups=PERSON)
    per_person = pc.clustered_proportion_ci(
        np.bincount(PERSON, TRUTH == PRED), np.bincount(PERSON), method="agresti_coull",
        design="icc_weighted", df_adjust="dean_pagano",
    )  # fmt: skip
    assert (nested.low, nested.high) == pytest.approx((per_person.low, per_person.high))
    assert nested.persons == 30 and nested.relevant_n == 300


def test_multiclass_kappa_is_bootstrapped_from_the_matrices():
    ci = pc.metric_ci(TRUTH, PRED, "multiclass_kappa", groups=PERSON, rng=1)
    assert ci.method.startswith("bootstrap (scheme=hierarchical")
    assert ci.low < ci.estimate < ci.high
    assert ci.estimate == pytest.approx(
        pc.compute_metric(pc.confusion(TRUTH, PRED), "multiclass_kappa")
    )


def test_a_report_of_multi_class_labels_leads_its_averages_with_them():
    table = pc.report(TRUTH, PRED, groups=PERSON, rng=1)
    averaged = table[table["class"] == ""]["metric"].tolist()
    assert averaged[:2] == ["multiclass_accuracy", "multiclass_kappa"]
    row = table[table["metric"] == "multiclass_accuracy"].iloc[0]
    assert row["estimate"] == pytest.approx(np.mean(TRUTH == PRED))


def test_right_wrong_cells_are_the_diagonal_and_the_rest():
    m = RNG.integers(0, 9, (5, 3, 3))
    cells = right_wrong_cells(m)
    assert cells.shape == (5, 4)
    np.testing.assert_array_equal(cells[:, 0], np.trace(m, axis1=1, axis2=2))
    np.testing.assert_array_equal(cells.sum(-1), m.sum((1, 2)))
    assert not cells[:, 2:].any()
