"""Weighted and stratified samples: design-based estimates, SEs and intervals.

Reference values: R's survey package (tests/reference/survey_stratified.R writes
tests/reference/survey_stratified.json; its header gives the svydesign, svyratio,
svycontrast and svyciprop calls), and closed forms written beside the tests.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import perfci as pc
from perfci.sample_design import design_cells, units_design, weighted_ci

REFERENCE = json.loads((Path(__file__).parent / "reference" / "survey_stratified.json").read_text())
DESIGNS = ("fpc_design", "cluster_design")


def _cells(record: dict, design: str):
    options = {"weights": record["weight"], "strata": record["stratum"]}
    if design == "fpc_design":
        options["stratum_sizes"] = record["fpc"]
    else:
        options["groups"] = record["person"]
    return design_cells(record["truth"], record["pred"], **options)


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("record", REFERENCE, ids=lambda r: f"data{r['id']}")
def test_estimates_and_ses_equal_survey(record, design):
    # svyratio (ratios of weighted totals) and svycontrast of svytotal (kappa, MCC,
    # balanced accuracy), linearized SEs, stratified with fpc or persons as clusters
    cells = _cells(record, design)
    for metric, expected in record[design]["metrics"].items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pc.UndefinedMetricWarning)
            ci = weighted_ci(cells, metric)
        assert ci.estimate == pytest.approx(expected["estimate"], rel=1e-12, abs=1e-14), metric
        assert ci.se == pytest.approx(expected["se"], rel=1e-10, abs=1e-14), metric


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("record", REFERENCE, ids=lambda r: f"data{r['id']}")
def test_logit_and_beta_intervals_equal_svyciprop(record, design):
    # svyciprop(~pred, subset(design, truth == 1), method = "logit" | "beta"): the
    # design's degrees of freedom on the domain (degf), Korn-Graubard's t ratio with
    # nrow(subset) - 1. R's logit interval comes from a glm fit (converged to about
    # 1e-9); the beta interval is closed form.
    cells = _cells(record, design)
    for row in record[design]["intervals"]:
        estimate = record[design]["metrics"][row["metric"]]["estimate"]
        for method, tol in (("logit", 1e-7), ("beta", 1e-12)):
            ci = weighted_ci(
                cells, row["metric"], method=method, confidence_level=row["confidence_level"]
            )
            assert ci.df == row["degf"] and ci.relevant_n == row["nrow"]
            if estimate in (0.0, 1.0):  # R: NaN or a non-converged fit; see the policy test
                continue
            assert ci.low == pytest.approx(row[f"{method}_low"], abs=tol)
            assert ci.high == pytest.approx(row[f"{method}_high"], abs=tol)


def test_an_estimate_of_one_gets_korn_graubard_at_the_relevant_texts():
    # Policy: a variance of 0 tells nothing of the design effect (svyciprop gives NaN);
    # the interval is Clopper-Pearson's at the relevant texts, whose lower end at
    # x = n is (alpha / 2)^(1 / n) in closed form.
    record = next(r for r in REFERENCE if r["fpc_design"]["metrics"]["recall"]["estimate"] == 1)
    cells = _cells(record, "fpc_design")
    for method in ("logit", "beta"):
        ci = weighted_ci(cells, "recall", method=method)
        n = ci.relevant_n
        assert (ci.estimate, ci.se, ci.high) == (1.0, 0.0, 1.0)
        assert ci.low == pytest.approx(0.025 ** (1 / n), rel=1e-12)
        assert "Korn-Graubard" in ci.note


def test_a_simple_random_sample_has_the_textbook_variance():
    # One stratum, equal weights, no fpc: var = p (1 - p) / (n - 1) (the n / (n - 1)
    # of the with-replacement estimator); with the fpc of N texts, times (1 - n / N).
    truth = np.r_[np.ones(30, int), np.zeros(70, int)]
    pred = np.ones(100, int)
    p, n, big = 0.3, 100, 400
    plain = weighted_ci(design_cells(truth, pred, weights=np.ones(n)), "precision", method="logit")
    assert plain.se == pytest.approx(np.sqrt(p * (1 - p) / (n - 1)), rel=1e-12)
    corrected = weighted_ci(
        design_cells(truth, pred, stratum_sizes=big), "precision", method="logit"
    )
    assert corrected.se == pytest.approx(np.sqrt((1 - n / big) * p * (1 - p) / (n - 1)))
    # logit: expit(logit p -+ t_{n-1} se / (p (1 - p)))
    t = stats.t.ppf(0.975, n - 1)
    half = t * plain.se / (p * (1 - p))
    expected = 1 / (1 + np.exp(-(np.log(p / (1 - p)) + np.array([-half, half]))))
    np.testing.assert_allclose([plain.low, plain.high], expected, rtol=1e-12)


def test_weights_default_to_stratum_sizes_over_sampled_texts():
    record = REFERENCE[3]
    given = _cells(record, "fpc_design")
    derived = design_cells(
        record["truth"], record["pred"], strata=record["stratum"], stratum_sizes=record["fpc"]
    )
    np.testing.assert_allclose(derived.weighted, given.weighted, rtol=1e-12)
    mapping = dict(zip(record["stratum"], record["fpc"], strict=True))
    by_mapping = design_cells(
        record["truth"], record["pred"], strata=record["stratum"], stratum_sizes=mapping
    )
    np.testing.assert_allclose(by_mapping.weighted, given.weighted, rtol=1e-12)


def test_metric_ci_routes_a_weighted_sample_to_the_design_based_interval():
    record = REFERENCE[0]
    ci = pc.metric_ci(
        record["truth"],
        record["pred"],
        "recall",
        strata=record["stratum"],
        stratum_sizes=record["fpc"],
    )
    expected = record["fpc_design"]["metrics"]["recall"]
    assert ci.estimate == pytest.approx(expected["estimate"], rel=1e-12)
    assert ci.result.se == pytest.approx(expected["se"], rel=1e-10)
    assert ci.method.startswith("poststratified (weighted: 2 strata, finite population correction")
    assert ci.population.startswith("the corpus the sample was drawn from")
    assert ci.sources == ("texts",) and ci.persons is None
    clustered = pc.metric_ci(
        record["truth"],
        record["pred"],
        "f1",
        groups=record["person"],
        strata=record["stratum"],
        weights=record["weight"],
    )
    assert clustered.sources == ("texts", "persons")
    assert clustered.persons == len(set(record["person"]))


def test_the_unweighted_interval_is_about_another_number():
    # The point: a 50/50 sample by prediction overstates recall unweighted.
    record = REFERENCE[0]
    plain = pc.metric_ci(record["truth"], record["pred"], "recall")
    weighted = pc.metric_ci(
        record["truth"],
        record["pred"],
        "recall",
        strata=record["stratum"],
        stratum_sizes=record["fpc"],
    )
    assert plain.estimate > weighted.high


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"weights": [1.0] * 5}, r"`weights` must hold one number per text \(6\)"),
        ({"weights": [1, 1, 1, 0, 1, 1]}, r"`weights` must be positive finite numbers"),
        ({"weights": [1, 1, np.nan, 1, 1, 1]}, r"`weights` must be finite numbers"),
        ({"strata": [0, 0, 0, 1, 1, 1], "stratum_sizes": {0: 10}}, r"no size for the strata \[1\]"),
        ({"strata": [0, 0, 0, 1, 1, 1], "stratum_sizes": {0: 10, 1: 2}}, r"fewer corpus texts"),
        ({"strata": [0, 0, 0, 1, 1, 1], "stratum_sizes": 100}, r"one size per stratum"),
        ({"strata": [0, 0, 0, 1, 1, 1], "stratum_sizes": [9, 9, 8, 5, 5, 5]}, r"same for every"),
        ({"strata": [0, 0, 0, 1, 1]}, r"`strata` must hold one value per text \(6\)"),
    ],
)
def test_bad_design_arguments_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        pc.metric_ci([1, 1, 0, 1, 0, 0], [1, 0, 1, 1, 0, 1], "recall", **options)


def test_a_stratum_of_one_unit_is_refused():
    with pytest.raises(ValueError, match=r"stratum 1 has a single sampled text"):
        pc.metric_ci([1, 1, 0, 1], [1, 0, 1, 1], "accuracy", strata=[0, 0, 0, 1])


def test_options_of_other_intervals_and_other_metrics_are_refused():
    y = [1, 1, 0, 1, 0, 0]
    with pytest.raises(ValueError, match=r"`pseudo_count` does not apply to a weighted"):
        pc.metric_ci(y, y, "f1", weights=[1] * 6, pseudo_count=1)
    with pytest.raises(ValueError, match=r"got 'macro_f1'"):
        pc.metric_ci(y, y, "macro_f1", weights=[1] * 6)
    with pytest.raises(ValueError, match=r"method='wald' or 'poststratified' applies"):
        pc.metric_ci(y, y, "kappa", weights=[1] * 6, method="logit")
    with pytest.raises(ValueError, match=r"`method` must be one of 'recommended', 'logit'"):
        pc.metric_ci(y, y, "recall", weights=[1] * 6, method="wilson")


def test_an_empty_domain_and_too_few_units_give_nan_with_a_warning():
    truth, pred = [0, 0, 0, 0], [0, 1, 0, 1]
    with pytest.warns(pc.UndefinedMetricWarning, match="no relevant texts"):
        ci = pc.metric_ci(truth, pred, "recall", weights=[1, 2, 1, 2])
    assert np.isnan([ci.estimate, ci.low, ci.high]).all()
    with pytest.warns(pc.UndefinedMetricWarning, match="no degrees of freedom on the metric"):
        ci = pc.metric_ci([1, 0, 0, 0], pred, "recall", weights=[1, 2, 1, 2])
    assert ci.estimate == 0.0 and np.isnan([ci.low, ci.high]).all()


def test_kappa_gets_a_wald_interval_within_its_range():
    record = REFERENCE[1]
    ci = weighted_ci(_cells(record, "fpc_design"), "kappa", method="wald")
    t = stats.t.ppf(0.975, ci.df)
    assert ci.method == "wald"
    assert ci.low == pytest.approx(max(-1.0, ci.estimate - t * ci.se), rel=1e-12)
    assert ci.high == pytest.approx(min(1.0, ci.estimate + t * ci.se), rel=1e-12)


@pytest.mark.parametrize("clustered", [False, True])
def test_a_batch_equals_a_loop_of_single_samples(clustered):
    # The shapes rule: K data sets at once (units padded to the largest) give each data
    # set's own result, field by field.
    rng = np.random.default_rng(5)
    k, n = 6, 80
    stratum = np.repeat([0, 1], n // 2)[None].repeat(k, 0)
    cell = rng.choice(4, size=(k, n), p=[0.2, 0.1, 0.1, 0.6])
    weight = np.where(stratum == 0, 5.0, 40.0)
    person = rng.integers(0, 9, size=(k, n))
    strata, sizes = np.array([0, 1]), np.array([200.0, 1600.0])
    unit = None
    if clustered:
        unit = np.stack(
            [np.unique(stratum[i] * 10 + person[i], return_inverse=True)[1] for i in range(k)]
        )
    batch = units_design(
        cell,
        weight,
        stratum,
        strata=strata,
        unit=unit,
        person=person if clustered else None,
        stratum_sizes=sizes,
    )
    for metric in ("recall", "f1", "kappa", "prevalence"):
        for method in ("recommended", "wald"):
            together = weighted_ci(batch, metric, method=method, rng=11)
            streams = pc.batch_generators(11, k)  # data set i's stream in that call
            for i in range(k):
                one = units_design(
                    cell[i],
                    weight[i],
                    stratum[i],
                    strata=strata,
                    unit=None if unit is None else unit[i],
                    person=person[i] if clustered else None,
                    stratum_sizes=sizes,
                )
                alone = weighted_ci(one, metric, method=method, rng=streams[i])
                assert alone.method == together.method
                for field in ("estimate", "low", "high", "se", "df", "relevant_n", "units"):
                    assert getattr(together, field)[i] == pytest.approx(
                        getattr(alone, field), rel=1e-12
                    ), field


def test_the_recommended_interval_is_poststratified_where_texts_are_the_units():
    # Policy (atlas-stratified): texts as units with one weight per stratum take the
    # poststratified posterior's interval (bounding prior), which keeps the estimate
    # inside; persons as units, or weights that differ within a stratum, the logit
    # interval (wald: kappa).
    record = REFERENCE[2]
    cells = _cells(record, "fpc_design")
    ci = weighted_ci(cells, "recall", rng=3)
    per = np.zeros((2, 4))
    strata = np.unique(record["stratum"])
    for h, t, p in zip(record["stratum"], record["truth"], record["pred"], strict=True):
        per[list(strata).index(h), [[3, 1], [2, 0]][t][p]] += 1
    sizes = [dict(zip(record["stratum"], record["fpc"], strict=True))[h] for h in strata]
    post = pc.bayes.stratified_posterior(
        per, sizes, "recall", prior=pc.policy.WEIGHTED_PRIOR, draws=4000, rng=3
    )
    assert ci.method == "poststratified"
    assert (ci.low, ci.high) == (min(post.low, ci.estimate), max(post.high, ci.estimate))
    assert weighted_ci(_cells(record, "cluster_design"), "recall").method == "logit"
    assert weighted_ci(_cells(record, "cluster_design"), "kappa").method == "wald"
    uneven = np.array(record["weight"]) * np.linspace(1, 1.1, len(record["weight"]))
    unequal = design_cells(
        record["truth"], record["pred"], strata=record["stratum"], weights=uneven
    )
    assert weighted_ci(unequal, "recall").method == "logit"
    with pytest.raises(ValueError, match=r"but the weights differ within a stratum"):
        weighted_ci(unequal, "recall", method="poststratified")
    with pytest.raises(ValueError, match=r"but persons are the sampling units"):
        weighted_ci(_cells(record, "cluster_design"), "recall", method="poststratified")


def test_no_false_negatives_sampled_still_gives_a_lower_end_well_below_one():
    # 300 predicted positives (240 true) of 2,400 and 300 predicted negatives (none
    # positive) of 31,400: recall is 1 in the sample, but up to about 1% of the corpus's
    # predicted negatives may be positives. The linearized intervals collapse at 1 (R
    # gives NaN); the recommended one reaches far below (Clopper-Pearson for 0 of 300 is
    # [0, 0.0122]: recall >= 1920 / (1920 + 0.0122 * 31400) = 0.83, about).
    truth = [1] * 240 + [0] * 60 + [0] * 300
    pred = [1] * 300 + [0] * 300
    cells = design_cells(truth, pred, strata=pred, stratum_sizes={1: 2400, 0: 31400})
    ci = weighted_ci(cells, "recall", rng=1)
    assert ci.estimate == 1.0 and ci.high == 1.0
    assert 0.8 < ci.low < 0.92
    regularized = weighted_ci(cells, "recall", method="regularized_logit")
    assert regularized.high == 1.0 and regularized.low < 0.9


def test_a_stratum_sampled_whole_is_known():
    # Census of the predicted positives: precision is known exactly (the other stratum
    # cannot hold its cells); recall is not (false negatives may hide in the other).
    truth = [1] * 8 + [0] * 2 + [1] * 1 + [0] * 19
    pred = [1] * 10 + [0] * 20
    cells = design_cells(truth, pred, strata=pred, stratum_sizes={1: 10, 0: 400})
    for method in ("logit", "beta", "poststratified"):
        ci = weighted_ci(cells, "precision", method=method, rng=1)
        assert (ci.low, ci.estimate, ci.high) == (0.8, 0.8, 0.8)
        recall = weighted_ci(cells, "recall", method=method, rng=1)
        assert recall.low < recall.estimate < recall.high
