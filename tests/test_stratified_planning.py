"""Planning a sample stratified by the classifier's prediction (perfci.plan_stratified_sample).

The allocation is checked against a brute-force minimization of the linearized variance
computed from a corpus written out text by text; the expected half-width against its
definition (the sum over every outcome) and against stratified samples drawn from that
corpus, with the interval of perfci.sample_design.weighted_ci.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from scipy import special, stats

import perfci as pc
import perfci.stratified_planning as sp
from perfci.metrics import metric_gradient
from perfci.sample_design import units_design, weighted_ci
from perfci.stratified_planning import expected_stratified_half_width

CORPUS = {
    "predicted_positive": 1000,
    "predicted_negative": 20000,
    "ppv": 0.8,
    "false_omission_rate": 0.02,
}
SMALL = {  # a corpus whose plans are quick to check
    "predicted_positive": 400,
    "predicted_negative": 5000,
    "ppv": 0.75,
    "false_omission_rate": 0.03,
}


def _corpus_texts(predicted_positive, predicted_negative, ppv, false_omission_rate):
    """The corpus text by text: each text's stratum (1: predicted positive) and cell."""
    n_pos, n_neg = predicted_positive, predicted_negative
    k1, k0 = round(n_pos * ppv), round(n_neg * false_omission_rate)
    stratum = np.repeat([1, 0], [n_pos, n_neg])
    cell = np.concatenate(
        [np.repeat([0, 1], [k1, n_pos - k1]), np.repeat([2, 3], [k0, n_neg - k0])]
    )
    return stratum, cell


def _linearized_variance_grid(metric, corpus, n1, n0):
    """sum_h N_h^2 (1 - n_h/N_h) S_h^2 / n_h on a grid, S_h^2 from the corpus's texts."""
    stratum, cell = _corpus_texts(**corpus)
    totals = np.bincount(cell, minlength=4).astype(float)
    z = metric_gradient(totals, metric)[cell]  # each text's linearized value
    variance = 0.0
    for h, n_h in ((1, n1), (0, n0)):
        size = np.sum(stratum == h)
        s2 = np.var(z[stratum == h], ddof=1)
        variance = variance + size**2 * (1 - n_h / size) * s2 / n_h
    return variance


# ------------------------------------------------------------------- (1) allocation


@pytest.mark.parametrize(
    ("metric", "corpus", "target"),
    [
        ("recall", CORPUS, 0.07),
        ("f1", CORPUS, 0.07),
        ("recall", SMALL, 0.08),
        # few predicted positives: the finite population correction matters
        ("recall", {**SMALL, "predicted_positive": 150, "ppv": 0.5}, 0.04),
    ],
)
def test_the_neyman_plan_is_the_brute_force_minimum_of_the_linearized_variance(
    metric, corpus, target
):
    plan = pc.plan_stratified_sample(metric, target, **corpus)
    limit = (target / special.ndtri(0.975)) ** 2
    n1 = np.arange(2, corpus["predicted_positive"] + 1)[:, None]
    n0 = np.arange(2, 6000)[None, :]
    variance = _linearized_variance_grid(metric, corpus, n1, n0)
    total = n1 + n0
    # the fewest texts meeting the normal criterion, over every split of every total
    best = int(total[variance <= limit].min())
    assert abs(best - plan.normal_total_texts) <= 1
    # at that total the split with the smallest variance is Neyman's share
    at = total == plan.normal_total_texts
    n1_best = int(np.broadcast_to(n1, total.shape)[at][np.argmin(variance[at])])
    n1_plan, _ = plan.split(plan.normal_total_texts)
    assert abs(n1_best - n1_plan) <= 1
    if n1_plan < corpus["predicted_positive"]:  # else stratum 1 is coded whole
        assert abs(n1_best / plan.normal_total_texts - plan.share_positive) < 2 / best


def test_the_neyman_share_of_recall_in_closed_form():
    # n_h ~ N_h S_h with S_1 ~ (1 - R) sqrt(ppv (1 - ppv)), S_0 ~ R sqrt(for (1 - for))
    # (times sqrt(N_h / (N_h - 1))): R = 800 / 1200
    plan = pc.plan_stratified_sample("recall", 0.1, **CORPUS)
    r = 800 / 1200
    w1 = 1000 * (1 - r) * np.sqrt(0.8 * 0.2 * 1000 / 999)
    w0 = 20000 * r * np.sqrt(0.02 * 0.98 * 20000 / 19999)
    assert plan.share_positive == pytest.approx(w1 / (w1 + w0), rel=1e-12)
    assert plan.metric_value == pytest.approx(r)


def test_precision_codes_no_predicted_negative():
    plan = pc.plan_stratified_sample(
        "precision", 0.05, predicted_positive=1000, predicted_negative=20000, ppv=0.8
    )
    assert (plan.n0, plan.share_positive) == (0, 1.0)
    assert np.isnan(plan.false_omission_rate) and np.isnan(plan.expected_false_negatives)
    assert plan.metric_value == pytest.approx(0.8)
    json.dumps(plan.to_dict(), allow_nan=False)  # NaN becomes None
    # the predicted positives alone are a simple random sample of N1 texts: the same
    # half-width as their design-based interval on one stratum
    assert plan.half_width == pytest.approx(
        expected_stratified_half_width(
            "precision", plan.n1, 0, predicted_positive=1000, predicted_negative=20000, ppv=0.8
        )
    )


@pytest.mark.parametrize("allocation", ["equal", "proportional"])
def test_other_allocations_need_more_texts_than_neyman(allocation):
    neyman = pc.plan_stratified_sample("recall", 0.12, **SMALL)
    other = pc.plan_stratified_sample("recall", 0.12, allocation=allocation, **SMALL)
    assert other.allocation == allocation
    assert other.total_texts >= neyman.total_texts
    share = 0.5 if allocation == "equal" else 400 / 5400
    assert other.share_positive == pytest.approx(share)
    assert other.half_width <= 0.12


# ------------------------------------------------------------ (2) the half-width met


@pytest.mark.parametrize(
    ("metric", "target", "options"),
    [
        ("recall", 0.1, {}),
        ("recall", 0.08, {"allocation": "equal"}),
        ("f1", 0.08, {}),
        ("precision", 0.06, {}),
        ("recall", 0.1, {"method": "logit", "confidence_level": 0.9}),
    ],
)
def test_the_plan_meets_the_target_and_one_text_fewer_does_not(metric, target, options):
    plan = pc.plan_stratified_sample(metric, target, **SMALL, **options)
    level, method = options.get("confidence_level", 0.95), options.get("method", "beta")

    def half_width(n1, n0):
        return expected_stratified_half_width(
            metric, n1, n0, **SMALL, confidence_level=level, method=method
        )

    assert plan.half_width == half_width(plan.n1, plan.n0) <= target
    assert plan.note == ""  # the half-width, not the fallback rule, set these plans
    assert half_width(*plan.split(plan.total_texts - 1)) > target
    assert plan.total_texts == plan.n1 + plan.n0 > plan.normal_total_texts
    if metric == "precision":
        assert np.isnan(plan.fallback_probability)  # Clopper-Pearson's fallback: no rule
    else:
        assert plan.fallback_probability <= (1 - level) / 2


def test_the_exact_half_width_is_wider_than_the_normal_plan():
    # Korn-Graubard's interval is wider than z sqrt(V): the normal plan misses the target
    plan = pc.plan_stratified_sample("recall", 0.1, **CORPUS)
    n1, n0 = plan.split(plan.normal_total_texts)
    assert expected_stratified_half_width("recall", n1, n0, **CORPUS) > 0.1
    assert 1.03 < plan.total_texts / plan.normal_total_texts < 1.15


def test_the_interpolated_sum_equals_the_sum_over_every_outcome(monkeypatch):
    # designs whose laws have more outcomes than the computed nodes
    designs = [
        ("recall", 73, 1019, CORPUS),
        ("recall", 150, 1500, CORPUS),
        ("f1", 105, 421, CORPUS),
        ("precision", 300, 0, {**CORPUS, "ppv": 0.6}),
    ]
    fast = [expected_stratified_half_width(m, n1, n0, **c) for m, n1, n0, c in designs]
    monkeypatch.setattr(sp, "_NODES", 10**6)
    full = [expected_stratified_half_width(m, n1, n0, **c) for m, n1, n0, c in designs]
    np.testing.assert_allclose(fast, full, rtol=0, atol=1e-6)


def test_the_memory_chunks_change_nothing(monkeypatch):
    one = expected_stratified_half_width("f1", 60, 300, **SMALL)
    monkeypatch.setattr(sp, "_CHUNK", 5000)  # many calls of weighted_ci
    assert expected_stratified_half_width("f1", 60, 300, **SMALL) == pytest.approx(one, rel=1e-12)


def test_the_expected_half_width_is_the_sum_over_the_hypergeometric_laws():
    # a design small enough to write every outcome's interval out, from labels
    n_pos, n_neg, n1, n0 = 40, 200, 8, 12
    corpus = {"predicted_positive": n_pos, "predicted_negative": n_neg, "ppv": 0.5}
    corpus["false_omission_rate"] = 0.2
    total = 0.0
    for x1 in range(n1 + 1):
        for x0 in range(n0 + 1):
            p = stats.hypergeom.pmf(x1, n_pos, 20, n1) * stats.hypergeom.pmf(x0, n_neg, 40, n0)
            truth = [1] * x1 + [0] * (n1 - x1) + [1] * x0 + [0] * (n0 - x0)
            pred = [1] * n1 + [0] * n0
            cells = pc.design_cells(truth, pred, strata=pred, stratum_sizes={1: n_pos, 0: n_neg})
            with warnings.catch_warnings():  # the few outcomes with no interval
                warnings.simplefilter("ignore", pc.UndefinedMetricWarning)
                ci = weighted_ci(cells, "recall", method="beta")
            half = (ci.high - ci.low) / 2
            total += p * (half if np.isfinite(half) else 0.5)
    assert expected_stratified_half_width("recall", n1, n0, **corpus) == pytest.approx(
        total, abs=1e-7
    )


# ------------------------------------------------------------- (3) Monte Carlo check


def test_the_mean_half_width_of_drawn_samples_is_the_planned_one():
    # 2,000 stratified samples of the corpus, drawn text by text without replacement
    # within each stratum, and their Korn-Graubard intervals from weighted_ci (batched)
    plan = pc.plan_stratified_sample("recall", 0.1, **SMALL)
    stratum, cell = _corpus_texts(**SMALL)
    positives, negatives = np.flatnonzero(stratum == 1), np.flatnonzero(stratum == 0)
    rng = np.random.default_rng(20261203)
    draws = 2000
    sampled = np.stack(
        [
            np.concatenate(
                [
                    rng.choice(positives, plan.n1, replace=False),
                    rng.choice(negatives, plan.n0, replace=False),
                ]
            )
            for _ in range(draws)
        ]
    )
    strata = stratum[sampled]
    weight = np.where(strata == 1, 400 / plan.n1, 5000 / plan.n0)
    cells = units_design(
        cell[sampled], weight, strata, strata=np.array([0, 1]), stratum_sizes=np.array([5000, 400])
    )
    ci = weighted_ci(cells, "recall", method="beta")
    half = (ci.high - ci.low) / 2
    assert np.all(np.isfinite(half))
    se = half.std(ddof=1) / np.sqrt(draws)
    assert abs(half.mean() - plan.half_width) < 4 * se
    # and the intervals cover the corpus recall (300 / 450) about as they should
    truth = 300 / 450
    covered = np.mean((ci.low <= truth) & (truth <= ci.high))
    assert covered > 0.93


# --------------------------------------------------------------------- (4) a pilot


PILOT = [[31, 9, 0, 0], [0, 0, 0, 100]]  # no false negative among 100 predicted negatives


def test_a_pilot_gives_jeffreys_estimates_of_the_shares():
    sizes = {"predicted_positive": 1000, "predicted_negative": 20000}
    plan = pc.plan_stratified_sample("recall", 0.1, pilot=PILOT, **sizes)
    assert plan.ppv == pytest.approx(31.5 / 41)
    assert plan.false_omission_rate == pytest.approx(0.5 / 101)  # not 0: n0 > 0
    assert plan.n0 > 0 and plan.expected_false_negatives > 3.6
    same = pc.plan_stratified_sample(
        "recall", 0.1, ppv=31.5 / 41, false_omission_rate=0.5 / 101, **sizes
    )
    assert (same.n1, same.n0, same.half_width) == (plan.n1, plan.n0, plan.half_width)


def test_a_share_given_replaces_the_pilots():
    sizes = {"predicted_positive": 1000, "predicted_negative": 20000}
    cautious = pc.plan_stratified_sample(
        "recall", 0.1, pilot=PILOT, false_omission_rate=0.02, **sizes
    )
    assert cautious.ppv == pytest.approx(31.5 / 41)
    assert cautious.false_omission_rate == 0.02


def test_a_pilot_for_precision_needs_no_predicted_negative():
    plan = pc.plan_stratified_sample(
        "precision",
        0.1,
        predicted_positive=1000,
        predicted_negative=20000,
        pilot=[[31, 9, 0, 0], [0, 0, 0, 0]],
    )
    assert plan.n0 == 0 and np.isnan(plan.false_omission_rate)


def test_a_pilot_without_predicted_negatives_cannot_plan_recall():
    with pytest.raises(ValueError, match="`pilot` holds no coded predicted negative"):
        pc.plan_stratified_sample(
            "recall",
            0.1,
            predicted_positive=1000,
            predicted_negative=20000,
            pilot=[[31, 9, 0, 0], [0, 0, 0, 0]],
        )


# ------------------------------------------------------ degenerate cases and policies


def _no_hit(n1, n0, corpus):
    """P(no true positive or no false negative coded), from the two laws."""
    k1 = round(corpus["predicted_positive"] * corpus["ppv"])
    k0 = round(corpus["predicted_negative"] * corpus["false_omission_rate"])
    p1 = stats.hypergeom.pmf(0, corpus["predicted_positive"], k1, n1)
    p0 = stats.hypergeom.pmf(0, corpus["predicted_negative"], k0, n0)
    return 1 - (1 - p1) * (1 - p0)


@pytest.mark.parametrize("metric", ["recall", "f1"])
def test_the_fallback_rule_sets_a_plan_with_few_false_negatives(metric):
    # recall 0.06: the classifier misses most positives, and the wide target alone would
    # be met at sizes where many samples code no false negative (recall 1, variance 0)
    corpus = {**SMALL, "predicted_negative": 50000, "false_omission_rate": 0.05}
    plan = pc.plan_stratified_sample(metric, 0.25, **corpus)
    assert plan.note.startswith("the fallback rule sets this plan")
    fewer = plan.split(plan.total_texts - 1)
    assert plan.fallback_probability == pytest.approx(_no_hit(plan.n1, plan.n0, corpus))
    assert plan.fallback_probability <= 0.025 < _no_hit(*fewer, corpus)
    # one text fewer misses the fallback rule, not the half-width
    assert plan.half_width < expected_stratified_half_width(metric, *fewer, **corpus) < 0.25


def test_the_fallback_rule_does_not_bind_at_ordinary_plans():
    plan = pc.plan_stratified_sample("recall", 0.1, **CORPUS)
    assert plan.fallback_probability < 1e-8 and plan.note == ""


def test_a_target_near_a_census_codes_every_text():
    corpus = {
        "predicted_positive": 30,
        "predicted_negative": 60,
        "ppv": 0.6,
        "false_omission_rate": 0.1,
    }
    plan = pc.plan_stratified_sample("recall", 1e-9, **corpus)
    assert (plan.n1, plan.n0, plan.half_width) == (30, 60, 0.0)
    assert plan.split(10**6) == (30, 60)


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"false_omission_rate": 0.0}, r"^`false_omission_rate` must lie strictly between"),
        ({"false_omission_rate": 1.0}, r"^`false_omission_rate` must lie strictly between"),
        ({"ppv": 1.0}, r"^`ppv` must lie strictly between 0 and 1; got 1.0. At 0 or 1"),
        ({"ppv": 0.0}, r"^`ppv` must lie strictly between"),
        ({"ppv": 0.0001}, r"^`ppv` 0.0001 of 400 predicted positives is 0 reference positives"),
        ({"false_omission_rate": 1e-5}, r"^`false_omission_rate` 1e-05 of 5000 predicted"),
        ({"false_omission_rate": None}, r"^`false_omission_rate` is needed to plan for recall"),
        ({"ppv": None}, r"^`ppv` is needed to plan for recall: give it, or a `pilot`"),
        ({"predicted_negative": 1}, r"^`predicted_negative` must be at least 2 for recall"),
        ({"predicted_positive": 10**16}, r"^`predicted_positive` must be at most 1e\+15"),
        (
            {"half_width": 1e-4, "predicted_negative": 10**6},
            r"^`half_width` 0.0001 needs about [\d,]+ coded texts",
        ),
        ({"half_width": 0.5}, r"^`half_width` must lie strictly between 0 and 0.5"),
        ({"metric": "accuracy"}, r"^`metric` must be one of \['f1', 'precision', 'recall'\]"),
        ({"allocation": "optimal"}, r"^`allocation` must be one of \['equal', 'neyman',"),
        ({"method": "poststratified"}, r"^`method` must be one of \['beta', 'logit'\]"),
        ({"pilot": [24, 6, 0, 0]}, r"^`pilot` must be the cells of the two strata"),
        ({"pilot": [[24, 6, 1, 0], [0, 0, 3, 27]]}, r"^`pilot` must be \[\[tp, fp, 0, 0\]"),
        ({"pilot": [[0, 0, 3, 27], [24, 6, 0, 0]]}, r"^`pilot` must be \[\[tp, fp, 0, 0\]"),
        ({"pilot": [[24.5, 6, 0, 0], [0, 0, 3, 27]]}, r"^`pilot` must hold non-negative whole"),
        ({"pilot": [[-1, 6, 0, 0], [0, 0, 3, 27]]}, r"^`pilot` must hold non-negative whole"),
        ({"pilot": "24 6"}, r"^`pilot` must be real numbers"),
    ],
)
def test_bad_input_names_the_argument(changes, match):
    kwargs = {"metric": "recall", "half_width": 0.1, **SMALL, **changes}
    with pytest.raises(ValueError, match=match):
        pc.plan_stratified_sample(**kwargs)


def test_precision_checks_a_false_omission_rate_it_does_not_need():
    ok = pc.plan_stratified_sample("precision", 0.1, **{**SMALL, "false_omission_rate": 0.0})
    assert ok.n0 == 0
    with pytest.raises(ValueError, match=r"^`false_omission_rate` must lie in \[0, 1\]"):
        pc.plan_stratified_sample("precision", 0.1, **{**SMALL, "false_omission_rate": 1.5})


@pytest.mark.parametrize(
    ("n1", "n0", "match"),
    [
        (1, 100, r"^`n1` must be 0 or between 2 and the stratum's 400 corpus texts"),
        (401, 100, r"^`n1` must be 0 or between 2"),
        (0, 100, r"^`n1` must be at least 2 for recall"),
        (50, 0, r"^`n0` must be at least 2 for recall"),
        (50.0, 100, r"^`n1` must be a non-negative integer"),
        (50, True, r"^`n0` must be a non-negative integer"),
        (50, -3, r"^`n0` must be a non-negative integer"),
    ],
)
def test_a_design_out_of_range_is_refused(n1, n0, match):
    with pytest.raises(ValueError, match=match):
        expected_stratified_half_width("recall", n1, n0, **SMALL)


def test_split_checks_its_total():
    plan = pc.plan_stratified_sample("recall", 0.12, **SMALL)
    with pytest.raises(ValueError, match=r"^`total_texts` must be a positive integer"):
        plan.split(0)
    assert plan.split(4) == (2, 2)  # each coded stratum has 2 texts at least
