"""Imputed codes of annotators who coded some of the texts (perfci._core.imputation)."""

import numpy as np
import pytest

from perfci._core.imputation import MIN_SHARED_TEXTS, impute_codes


def _recall(said, codes):
    return float(np.sum(said * codes) / np.sum(codes))


def test_a_complete_design_is_unchanged():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 2, (50, 3)).astype(float)
    out = impute_codes(codes, rng.random(50) < 0.5)
    assert out.complete and np.array_equal(out.codes, codes)
    assert out.shared.tolist() == [[50, 50, 50]] and out.imputed.tolist() == [[0, 0, 0]]


def test_codes_missing_given_the_label_and_the_others_codes_are_recovered():
    """B codes mostly the texts A called positive: B's recall over B's own texts is far
    from B's recall on every text; the imputed codes give the latter back."""
    rng = np.random.default_rng(20261203)
    n = 200_000
    truth = rng.random(n) < 0.3
    said = np.where(truth, rng.random(n) < 0.8, rng.random(n) < 0.1)
    difficulty = rng.normal(size=n)
    a = np.where(truth, difficulty < 1.0, difficulty > 1.5)  # annotators share hard texts
    b = np.where(truth, difficulty < 0.8, difficulty > 1.2)
    coded_b = rng.random(n) < np.where(a, 0.9, 0.1)  # depends on what A's code shows
    codes = np.c_[a, np.where(coded_b, b, np.nan)].astype(float)
    out = impute_codes(codes, said)
    full, own = _recall(said, b), _recall(said[coded_b], b[coded_b])
    imputed = _recall(said, out.codes[:, 1])
    assert abs(own - full) > 0.02  # the texts B chose tell a different recall
    # The error is Monte-Carlo: chiefly the rate of the stratum (said 0, A 0), 59% of the
    # texts, 90% of them uncoded by B, estimated from its 12k shared texts (SD 0.002 of a
    # rate near 0.05), which moves the recall's denominator. Over seeds 0-19 the imputed
    # minus the full recall had mean 3e-5 and SD 0.0029 (no bias); tolerance 3.4 SD.
    assert imputed == pytest.approx(full, abs=0.01)
    assert out.shared[0, 1] == coded_b.sum() and out.imputed[0, 1] == (~coded_b).sum()


def test_data_sets_are_calibrated_each_on_its_own_texts():
    rng = np.random.default_rng(3)
    one = np.c_[rng.integers(0, 2, 60), rng.integers(0, 2, 60)].astype(float)
    one[::3, 1] = np.nan
    said = rng.random(60) < 0.5
    alone = impute_codes(one, said)
    other = np.c_[np.ones(60), np.zeros(60)]  # a second data set of another kind
    stacked = impute_codes(np.r_[other, one], np.r_[said, said], np.repeat([0, 1], 60), datasets=2)
    np.testing.assert_array_equal(stacked.codes[60:], alone.codes)
    assert stacked.shared[1].tolist() == alone.shared[0].tolist()


def test_an_annotator_with_too_few_shared_texts_is_not_imputed():
    """Calibrated on a handful of texts, the rates are noise: the codes stay missing."""
    codes = np.array([[1, np.nan, 1], [0, np.nan, 1], [np.nan, 1, np.nan]])
    out = impute_codes(codes, np.array([True, False, True]))
    assert out.shared[0].tolist() == [2, 0, 2] and out.imputed[0].tolist() == [0, 0, 0]
    assert out.missing[0].tolist() == [1, 2, 1] and np.isnan(out.codes[:2, 1]).all()
    assert not out.influence.any()
    rng = np.random.default_rng(5)
    many = rng.integers(0, 2, (MIN_SHARED_TEXTS + 1, 2)).astype(float)
    many[-1, 1] = np.nan  # 30 shared texts: imputed
    assert impute_codes(many, rng.random(MIN_SHARED_TEXTS + 1) < 0.5).imputed[0, 1] == 1
