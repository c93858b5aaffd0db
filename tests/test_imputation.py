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


def _second_coders_check_the_first(seed: int, annotators: int = 5, texts: int = 100_000):
    """The first annotator codes every text; each other one 90% of the first's positives
    and 10% of the rest. Codes share a text effect (hard texts), each its own noise."""
    rng = np.random.default_rng(seed)
    truth = rng.random(texts) < 0.3
    said = np.where(truth, rng.random(texts) < 0.85, rng.random(texts) < 0.1)
    difficulty = rng.normal(size=texts)
    full = np.array(
        [
            np.where(truth, difficulty + e < 1.2, difficulty + e > 1.3)
            for e in rng.normal(0, 0.7, (annotators, texts))
        ]
    ).T.astype(float)
    chosen = rng.random((texts, annotators)) < np.where(full[:, :1] == 1, 0.9, 0.1)
    chosen[:, 0] = True
    return said, full, np.where(chosen, full, np.nan)


def test_the_whole_pattern_of_the_others_codes_is_what_makes_them_missing_at_random(
    monkeypatch,
):
    """With five annotators the others' majority mixes the texts the first called positive
    with texts only other second coders saw: imputing by it leaves the last annotator's
    recall 0.033 low (SD 0.0024 over seeds 0-7); by the whole pattern -0.0004 (SD 0.004)."""
    from perfci._core import imputation

    said, full, codes = _second_coders_check_the_first(20261203)
    truth = _recall(said, full[:, -1])
    own = ~np.isnan(codes[:, -1])
    assert abs(_recall(said[own], full[own, -1]) - truth) > 0.05  # the chosen texts differ
    # tolerance: 3.7 SD of the pattern's error over seeds
    assert _recall(said, impute_codes(codes, said).codes[:, -1]) == pytest.approx(truth, abs=0.015)
    monkeypatch.setattr(imputation, "_MAX_PATTERN_ANNOTATORS", 2)  # the majority alone
    majority = _recall(said, impute_codes(codes, said).codes[:, -1])
    assert majority < truth - 0.02  # 5 SD below: the pattern level is not decoration


def test_the_influence_is_each_shared_codes_jackknife_contribution():
    """Leaving one shared code out of the calibration moves the imputed cells by about its
    influence (a ratio's linearization: the jackknife difference times (n - 1) / n)."""
    from perfci._core import imputation

    said, full, codes = _second_coders_check_the_first(4, annotators=4, texts=600)
    out = impute_codes(codes, said)
    coded = ~np.isnan(codes)
    value = np.where(coded, codes, 0.0)
    shared = coded & (coded.sum(1, keepdims=True) > coded)
    owner = np.broadcast_to(np.arange(4), codes.shape)
    strata = imputation._strata(codes, said)
    levels = [np.unique(owner * k + key, return_inverse=True)[1] for k, key in strata]
    s = np.broadcast_to(said[:, None].astype(float), codes.shape)
    direction = np.stack([s, -s, 1 - s, s - 1], -1)

    def imputed_cells(calibrating):
        rates, _ = imputation._chained_rates(levels, calibrating, value)
        rate = np.where(coded, 0.0, rates[-1][levels[-1]])
        return (direction * rate[..., None]).sum(0)  # (A, 4)

    everything = imputed_cells(shared)
    left_out, influence = [], []
    for t, a in np.argwhere(shared)[::7][:120]:
        one_fewer = shared.copy()
        one_fewer[t, a] = False
        left_out.append(everything[a] - imputed_cells(one_fewer)[a])
        influence.append(out.influence[t, a])
    left_out, influence = np.ravel(left_out), np.ravel(influence)
    assert np.corrcoef(left_out, influence)[0, 1] > 0.99
    assert np.median(np.abs(influence - left_out)) < 0.05 * np.median(np.abs(left_out))
