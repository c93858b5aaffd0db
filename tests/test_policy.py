"""The policy: what "recommended" means, and that it never overrides a passed option."""

import numpy as np
import pytest

import perfci as pc
from perfci import comparison, policy, reporting


def nested_labels(rng, persons, texts_per_person, prevalence=0.3):
    groups = np.repeat(np.arange(persons), texts_per_person)
    y_true = (rng.random(groups.size) < prevalence).astype(int)
    hit = rng.random(groups.size) < rng.beta(9, 1, persons)[groups]
    y_pred = np.where(y_true == 1, hit, rng.random(groups.size) < 0.05).astype(int)
    return y_true, y_pred, groups


@pytest.fixture(scope="module")
def many_texts():
    # 40 texts per person, 20 persons
    return nested_labels(np.random.default_rng(7), 20, 40)


def test_threshold_is_one_constant_importable_from_every_old_place():
    assert pc.HIERARCHICAL_MIN_TEXTS == reporting.HIERARCHICAL_MIN_TEXTS == 10
    assert policy.HIERARCHICAL_MIN_TEXTS is pc.HIERARCHICAL_MIN_TEXTS


@pytest.mark.parametrize(
    ("per_person", "scheme"),
    [
        (None, "iid"),
        (1, "iid"),
        (1.0001, "hierarchical"),
        (3, "hierarchical"),
        (9.999, "hierarchical"),
        (10, "hierarchical"),
        (30.5, "hierarchical"),
    ],
)
def test_recommended_scheme(per_person, scheme):
    assert policy.recommended_scheme(per_person) == scheme


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (0.5, "at least 1"),
        (float("nan"), "finite number or None"),
        ("10", "finite number or None"),
        (True, "finite number or None"),
    ],
)
def test_recommended_scheme_rejects_bad_input(value, match):
    with pytest.raises(ValueError, match=f"`relevant_texts_per_person` must be .*{match}"):
        policy.recommended_scheme(value)


def test_recommended_method():
    for metric in pc.PROPORTION_METRICS:
        assert policy.recommended_method(metric) == "agresti_coull"
    for metric in set(pc.METRICS) - set(pc.PROPORTION_METRICS):
        assert policy.recommended_method(metric) == "bootstrap"
    with pytest.raises(ValueError, match="`metric` must be one of"):
        policy.recommended_method("auc")


def test_recommended_comparison_by_design_and_relevant_texts_per_person():
    # independent texts: the paired bootstrap; nested texts: by relevant texts per person,
    # the paired bootstrap from HIERARCHICAL_MIN_TEXTS on, below it Newcombe on n_eff for
    # the paired proportions and the cluster-robust interval for the other metrics
    assert (policy.COMPARISON_METHOD, policy.NESTED_COMPARISON_METHOD) == (
        "bootstrap",
        "cluster_robust",
    )
    assert policy.PAIRED_PROPORTIONS == ("accuracy", "recall", "specificity")
    assert policy.PAIRED_PROPORTIONS == comparison._PAIRED_PROPORTIONS
    for metric in pc.BINARY_METRICS:
        few = "newcombe" if metric in policy.PAIRED_PROPORTIONS else "cluster_robust"
        for per_person in (None, 1, 3.5, 9.999):
            assert policy.recommended_comparison(metric, False, per_person) == "bootstrap"
            assert policy.recommended_comparison(metric, True, per_person) == few, metric
        for per_person in (10, 10.0, 25.5):
            assert policy.recommended_comparison(metric, False, per_person) == "bootstrap"
            assert policy.recommended_comparison(metric, True, per_person) == "bootstrap"
        assert policy.recommended_comparison(metric, True) == few  # None counts as few
    # the bootstrap it recommends from 10 on is the hierarchical one
    assert policy.recommended_scheme(policy.HIERARCHICAL_MIN_TEXTS) == "hierarchical"
    with pytest.raises(ValueError, match="`metric` must be one of"):
        policy.recommended_comparison("macro_f1", True)
    with pytest.raises(ValueError, match="`nested` must be True or False"):
        policy.recommended_comparison("f1", "yes")


def test_recommended_methods_of_a_batch_are_the_rule_per_data_set():
    # joint counts (data sets, persons, 8); for accuracy and kappa every text is relevant
    cells = np.zeros((4, 2, 8))
    cells[0, :, :] = 1  # 8 texts per person: below 10
    cells[1, 0, 0], cells[1, 1, 0] = 12, 8  # a mean of 10
    cells[2, 1, 3] = 10  # one person with 10 (the other has none): no interval, no choice
    cells[3, 0, 0], cells[3, 1, 0] = 10, 9.0  # 9.5
    for metric, few in (("accuracy", "newcombe"), ("kappa", "cluster_robust")):
        got = comparison.recommended_methods(cells, metric, True).tolist()
        # two persons: many texts each, but fewer than HIERARCHICAL_MIN_PERSONS
        assert got == [few, "cluster_robust", None, few], metric
        per_person = [8, 10, None, 9.5]
        assert got == [
            None if b is None else policy.recommended_comparison(metric, True, b, 2)
            for b in per_person
        ]
        assert comparison.recommended_methods(cells, metric, False).tolist() == ["bootstrap"] * 4


def test_choose_interval_fills_only_what_applies():
    c = policy.choose_interval("recall")
    assert c == policy.IntervalChoice("agresti_coull")
    c = policy.choose_interval("recall", groups=True, relevant_texts_per_person=3)
    assert (c.design, c.df_adjust, c.scheme, c.interval) == (
        "icc_weighted",
        "dean_pagano",
        None,
        None,
    )
    assert c.label == "agresti_coull (design=icc_weighted, df_adjust=dean_pagano)"
    # nested non-proportions: hierarchical for more than one relevant text per person
    for per_person in (1.5, 3, 9.999, 10, 30):
        c = policy.choose_interval("f1", groups=True, relevant_texts_per_person=per_person)
        assert c.scheme == "hierarchical", per_person
    c = policy.choose_interval("f1", groups=True, relevant_texts_per_person=1)
    assert c.scheme == "iid"
    c = policy.choose_interval("kappa", groups=True, relevant_texts_per_person=12)
    assert (c.method, c.scheme, c.interval, c.pseudo_count, c.n_resamples) == (
        "bootstrap",
        "hierarchical",
        "percentile",
        1,
        2000,
    )
    assert c.design is None and c.df_adjust is None
    c = policy.choose_interval("recall", groups=True, design=None)
    assert c.label == "agresti_coull" and c.design is None


def test_passed_bootstrap_options_are_kept(many_texts):
    y, p, g = many_texts
    default = pc.metric_ci(y, p, "f1", groups=g, rng=1)
    assert "scheme=hierarchical" in default.method
    cluster = pc.metric_ci(y, p, "f1", groups=g, method="recommended", scheme="cluster", rng=1)
    assert cluster.method == "bootstrap (scheme=cluster, interval=percentile, pseudo_count=1)"
    assert cluster.result.scheme == "cluster"
    bca = pc.metric_ci(y, p, "f1", groups=g, interval="bca", pseudo_count=0, rng=1)
    assert bca.method == "bootstrap (scheme=hierarchical, interval=bca, pseudo_count=0)"
    assert (bca.result.interval, bca.result.pseudo_count) == ("bca", 0)
    few = pc.metric_ci(y, p, "f1", n_resamples=300, rng=1)
    assert few.result.n_resamples == 300


def test_recommended_defaults_are_the_explicit_ones(many_texts):
    y, p, g = many_texts
    a = pc.metric_ci(y, p, "mcc", groups=g, rng=5)
    b = pc.metric_ci(
        y,
        p,
        "mcc",
        groups=g,
        method="bootstrap",
        scheme="hierarchical",
        interval="percentile",
        pseudo_count=1,
        n_resamples=2000,
        rng=5,
    )
    assert (a.low, a.high, a.method) == (b.low, b.high, b.method)
    a = pc.metric_ci(y, p, "recall", groups=g)
    b = pc.metric_ci(y, p, "recall", groups=g, method="agresti_coull", design="icc_weighted",
                     df_adjust="dean_pagano")  # fmt: skip
    assert (a.low, a.high, a.method) == (b.low, b.high, b.method)
    # with few texts per person too (3): the hierarchical bootstrap
    y, p, g = nested_labels(np.random.default_rng(8), 30, 3)
    a = pc.metric_ci(y, p, "f1", groups=g, rng=5)
    b = pc.metric_ci(y, p, "f1", groups=g, method="bootstrap", scheme="hierarchical", rng=5)
    assert (a.low, a.high, a.method) == (b.low, b.high, b.method)


@pytest.mark.parametrize("method", ["recommended", "wilson"])
@pytest.mark.parametrize(
    ("option", "value"),
    [("scheme", "iid"), ("interval", "percentile"), ("pseudo_count", 0), ("n_resamples", 100)],
)
def test_bootstrap_options_for_an_analytic_interval_are_errors(many_texts, method, option, value):
    y, p, g = many_texts
    how = r"'agresti_coull' \(the recommended method\)" if method == "recommended" else "'wilson'"
    with pytest.raises(
        ValueError,
        match=rf"^`{option}` applies to bootstrap intervals, but recall uses {how}, an analytic",
    ):
        pc.metric_ci(y, p, "recall", groups=g, method=method, **{option: value})


@pytest.mark.parametrize("method", ["recommended", "bootstrap"])
@pytest.mark.parametrize(
    ("option", "value"),
    [("design", "icc"), ("design", None), ("df_adjust", "korn_graubard"), ("df_adjust", None)],
)
def test_design_options_for_the_bootstrap_are_errors(many_texts, method, option, value):
    y, p, g = many_texts
    with pytest.raises(ValueError, match=rf"^`{option}` applies to analytic intervals, but f1"):
        pc.metric_ci(y, p, "f1", groups=g, method=method, **{option: value})


@pytest.mark.parametrize(
    "kwargs", [{"design": "cluster_robust"}, {"df_adjust": None}, {"design": None}]
)
def test_nested_options_without_groups_are_errors(kwargs):
    y, p, _ = nested_labels(np.random.default_rng(3), 10, 10)
    with pytest.raises(ValueError, match="adjusts for texts nested in persons; it needs `groups`"):
        pc.metric_ci(y, p, "recall", **kwargs)
    with pytest.raises(ValueError, match="`scheme` 'cluster' needs `groups`"):
        pc.metric_ci(y, p, "f1", scheme="cluster")


def test_df_adjust_without_a_design_is_an_error(many_texts):
    y, p, g = many_texts
    with pytest.raises(ValueError, match="`df_adjust` 'korn_graubard' adjusts the design-based"):
        pc.metric_ci(y, p, "recall", groups=g, design=None, df_adjust="korn_graubard")
    ci = pc.metric_ci(y, p, "recall", groups=g, design=None, df_adjust=None)
    assert ci.method == "agresti_coull"


def test_bad_option_values_list_recommended():
    y, p, _ = nested_labels(np.random.default_rng(3), 10, 10)
    for option, value in [("design", "anova"), ("scheme", "twostage"), ("interval", "basic")]:
        with pytest.raises(ValueError, match=rf"^`{option}` must be one of .*'recommended'"):
            pc.metric_ci(y, p, "f1", **{option: value})
    with pytest.raises(ValueError, match="`pseudo_count` must be a non-negative integer"):
        pc.metric_ci(y, p, "f1", pseudo_count=-1)


def test_report_options_apply_to_the_rows_that_use_them(many_texts):
    y, p, g = many_texts
    table = pc.report(y, p, groups=g, design="cluster_robust", n_resamples=200, rng=1)
    methods = dict(zip(table["metric"], table["method"], strict=True))
    assert methods["recall"] == "agresti_coull (design=cluster_robust, df_adjust=dean_pagano)"
    assert methods["f1"] == "bootstrap (scheme=hierarchical, interval=percentile, pseudo_count=1)"
    # no groups: no row could apply a design, so it is refused, as metric_ci refuses it
    with pytest.raises(ValueError, match="`design` adjusts for texts nested in persons"):
        pc.report(y, p, design="cluster_robust", rng=1)


def test_coverage_caveat_only_where_no_interval_covered():
    design = {"estimate": 0.8, "persons": 20, "relevant_texts_per_person": 30, "icc": 0.3}
    caveat = policy.coverage_caveat("recall", **design)
    assert caveat.startswith("no interval method covered 0.93 in the stress atlas")
    assert "20 persons, 30 relevant texts each, an estimated ICC of 0.30" in caveat
    # many persons: no caveat away from the bounds
    many = {**design, "persons": policy.CAVEAT_PERSONS}
    assert policy.coverage_caveat("recall", **many) is None
    # near 0 or 1 (every outcome the same included), at any number of persons and
    # whatever the ICC estimate: the edge design covers, an ICC-based interval does not
    for persons in (5, 20, policy.CAVEAT_PERSONS, 200):
        for estimate in (0.0, 0.02, 0.975, 1.0):
            for icc in (0.0, 0.3):
                near = {**many, "persons": persons, "estimate": estimate, "icc": icc}
                assert policy.coverage_caveat("recall", **near, design="edge") is None
                note = policy.coverage_caveat("recall", **near, design="icc_weighted")
                assert note.startswith("near 0 or 1 with many texts per person"), note
    # near a bound with few texts per person the ICC-based interval covered
    few_texts = {**many, "estimate": 0.99, "relevant_texts_per_person": 3}
    assert policy.coverage_caveat("recall", **few_texts, design="icc_weighted") is None
    for change in (
        {"persons": None},  # independent texts
        {"persons": policy.CAVEAT_PERSONS},  # enough persons
        {"relevant_texts_per_person": 9.9},  # few texts per person
        {"icc": 0.2},  # a lower ICC, away from 0 and 1
        {"icc": float("nan")},
        {"relevant_texts_per_person": None},
    ):
        assert policy.coverage_caveat("recall", **{**design, **change}) is None, change
    assert policy.coverage_caveat("f1", **design) is None  # proportion metrics only


def test_report_notes_the_coverage_caveat():
    # 20 persons with 30 texts, all positive, half of them at a recall of 0.95 and half
    # at 0.5: an estimated ICC of about 0.28
    rng = np.random.default_rng(4)
    notes = []
    for texts_per_person in (30, 8):
        groups = np.repeat(np.arange(20), texts_per_person)
        rate = np.where(np.arange(20) % 2 == 0, 0.95, 0.5)[groups]
        y_true = np.ones(groups.size, int)
        y_pred = (rng.random(groups.size) < rate).astype(int)
        table = pc.report(y_true, y_pred, groups=groups, metrics=["recall"], rng=1)
        assert table["icc"].iloc[0] >= policy.CAVEAT_ICC
        notes.append(table["note"].iloc[0])
    # the recommended interval there is the worst case, and the note says why
    assert "the data cannot show the variation between persons" in notes[0]
    assert "stress atlas" not in notes[1]  # fewer than 10 relevant texts per person


def test_macro_f1_nested_bootstrap_is_bca_without_pseudo_counts():
    # atlas-multiclass: the lambda = 1 percentile interval covered 0.874-0.898 at 5
    # persons (every miss below); BCa without pseudo counts 0.923-0.974
    nested = policy.choose_interval("macro_f1", groups=True, relevant_texts_per_person=5)
    assert nested.label == "bootstrap (scheme=hierarchical, interval=bca, pseudo_count=0)"
    # the k-class kappa: lambda = 1 percentile 0.911-0.950 at 5 persons, BCa 0.925-0.974
    kappa = policy.choose_interval("multiclass_kappa", groups=True, relevant_texts_per_person=5)
    assert kappa.label == nested.label
    # independent texts, other metrics and other schemes keep the policy's defaults
    pc1 = "interval=percentile, pseudo_count=1)"
    assert policy.choose_interval("macro_f1").label.endswith(pc1)
    assert policy.choose_interval("f1", groups=True, relevant_texts_per_person=5).label.endswith(
        pc1
    )
    cluster = policy.choose_interval(
        "macro_f1", groups=True, relevant_texts_per_person=5, scheme="cluster"
    )
    assert cluster.label.endswith(pc1)
    # a passed interval or pseudo count leaves the other at the policy's default
    passed = policy.choose_interval(
        "macro_f1", groups=True, relevant_texts_per_person=5, interval="percentile"
    )
    assert passed.label.endswith(pc1)
    assert policy.choose_interval(
        "macro_f1", groups=True, relevant_texts_per_person=5, pseudo_count=2
    ).label.endswith("interval=percentile, pseudo_count=2)")
