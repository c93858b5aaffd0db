"""Defects the stress atlas found, each a small seeded simulation through the harness.

Every test runs a tiny suite of the atlas's populations through
:func:`perfci.harness.run_suite` (so through the public functions and the policy a user
gets) and checks the recommended interval's coverage with a tolerance of three binomial
Monte-Carlo standard errors. Each fails on the defaults before the atlas: the comment
above it gives what the old default covered in the same design.
"""

from __future__ import annotations

import numpy as np
import pytest

import perfci as pc
from perfci import harness, policy

NOMINAL_FLOOR = 0.93


def _run(tmp_path, population: dict, grid: dict, methods: list[dict], replications: int):
    lines = ['name = "defect"', "seed = 20261201", "[population]"]
    lines += [f"{k} = {v!r}".replace("'", '"') for k, v in population.items()]
    lines.append("[grid]")
    lines += [f"{k} = {v!r}".replace("'", '"') for k, v in grid.items()]
    lines += ["[scales.test]", f"replications = {replications}", "resamples = 500"]
    for m in methods:
        lines.append("[[methods]]")
        lines += [f"{k} = {v!r}".replace("'", '"') for k, v in m.items()]
    path = tmp_path / "defect.toml"
    path.write_text("\n".join(lines) + "\n")
    ds = harness.run_suite(harness.load_suite(path), "test", out=tmp_path / "out")
    return ds


def _covers(ds, method: str) -> tuple[float, float]:
    coverage = float(ds.coverage.sel(ci_method=method).squeeze())
    n = float(ds.n_valid.sel(ci_method=method).squeeze())
    return coverage, 3 * np.sqrt(0.95 * 0.05 / n)


def test_unequal_cluster_sizes_recommended_proportion_interval_covers(tmp_path):
    # lognormal sizes with CV 1.5, 40 persons, about 30 texts each, ICC 0.1: the old
    # default (design="icc", B = N / m) covered 0.82 in the atlas; "icc_weighted" 0.93-0.95
    ds = _run(
        tmp_path,
        {"kind": "nested", "rate": 0.9, "icc": 0.1, "size_cv": 1.5},
        {"persons": [40], "texts_per_person": [30.0]},
        [
            {"name": "recommended", "family": "recommended"},
            {
                "name": "old_default",
                "family": "clustered",
                "method": "agresti_coull",
                "design": "icc",
                "df_adjust": "dean_pagano",
            },
        ],
        replications=3000,
    )
    coverage, tolerance = _covers(ds, "recommended")
    assert coverage >= NOMINAL_FLOOR - tolerance, coverage
    old, tolerance = _covers(ds, "old_default")
    assert old < NOMINAL_FLOOR - tolerance, old  # the defect is still visible


def test_nested_kappa_recommended_bootstrap_covers_with_few_texts(tmp_path):
    # 10 persons with about 5 texts (CV 1), prevalence 0.1: the old default (the
    # pseudo-count cluster bootstrap below 10 relevant texts per person) covered 0.85
    ds = _run(
        tmp_path,
        {"kind": "nested_confusion", "metric": "kappa", "prevalence": 0.1, "size_cv": 1.0},
        {"persons": [10], "texts_per_person": [5.0]},
        [
            {"name": "recommended", "family": "recommended"},
            {
                "name": "old_default",
                "family": "bootstrap",
                "interval": "percentile",
                "scheme": "cluster",
                "pseudo_count": 1,
            },
        ],
        replications=800,
    )
    coverage, tolerance = _covers(ds, "recommended")
    assert coverage >= NOMINAL_FLOOR - tolerance, coverage
    old, tolerance = _covers(ds, "old_default")
    assert old < NOMINAL_FLOOR - tolerance, old


@pytest.mark.parametrize("metric", ["recall", "f1"])
def test_paired_nested_comparison_recommended_interval_covers(tmp_path, metric):
    # 10 persons x 5 texts: the old default of compare with groups (the cluster
    # percentile bootstrap) covered 0.71 (recall) and 0.85 (F1) in the atlas
    ds = _run(
        tmp_path,
        {"kind": "paired_nested", "metric": metric, "icc": 0.1},
        {"persons": [10], "texts_per_person": [5.0]},
        [
            {"name": "recommended", "family": "comparison"},
            {
                "name": "old_default",
                "family": "comparison",
                "method": "bootstrap",
                "scheme": "cluster",
            },
        ],
        replications=1000,
    )
    coverage, tolerance = _covers(ds, "recommended")
    assert coverage >= NOMINAL_FLOOR - tolerance, coverage
    old, tolerance = _covers(ds, "old_default")
    assert old < NOMINAL_FLOOR - tolerance, old


def test_recommended_for_counts_is_choose_interval_per_data_set():
    rng = np.random.default_rng(3)
    relevant = rng.integers(0, 14, size=(200, 6)) * (rng.random((200, 6)) < 0.6)
    for metric in ("recall", "f1"):
        for choice, mask in policy.recommend_for_counts(metric, relevant):
            for row in relevant[mask]:
                persons = np.count_nonzero(row)
                if choice is None:
                    assert persons < 2
                    continue
                single = np.all(row <= 1)
                expected = policy.choose_interval(
                    metric,
                    groups=not single,
                    relevant_texts_per_person=None if single else row.sum() / persons,
                )
                assert choice == expected


def test_report_says_when_no_method_covers():
    # 12 persons with 30 texts each and a recall near 1, all the errors in one person:
    # the region where no interval with an estimated ICC covered (the few persons far
    # from the rest are mostly not sampled): the edge design, which covered, and no note
    person = np.repeat(np.arange(12), 30)
    truth = np.ones(person.size, dtype=int)
    pred = truth.copy()
    pred[:10] = 0  # one person misses a third of their texts: all the variation is theirs
    table = pc.report(truth, pred, groups=person, metrics=["recall"])
    assert table.loc[0, "method"] == "wilson (design=edge, df_adjust=dean_pagano)"
    assert "stress atlas" not in table.loc[0, "note"]
    # an interval asked for with another design gets a warning that says what covered
    ci = pc.metric_ci(truth, pred, "recall", groups=person, design="icc_weighted")
    assert ci.result.design == "icc_weighted"
    table = pc.report(truth, pred, groups=person, metrics=["recall"], design="icc_weighted")
    assert "the recommended design='edge' covered" in table.loc[0, "note"]
    # away from the bounds, a high ICC from few persons: the worst case, with its note
    pred = truth.copy()
    for i in range(6):
        pred[i * 30 : i * 30 + 15] = 0  # half the persons at 0.5, half at 1
    table = pc.report(truth, pred, groups=person, metrics=["recall"])
    assert "design=persons" in table.loc[0, "method"]
    assert "the data cannot show the variation between persons" in table.loc[0, "note"]
    # and no such note where the atlas found an interval that covers
    rng = np.random.default_rng(5)
    pred = (rng.random(person.size) < 0.995).astype(int)
    three = np.repeat(np.arange(12), 3)  # 3 texts each: intervals that cover exist
    few = pc.report(truth[: three.size], pred[: three.size], groups=three, metrics=["recall"])
    assert "stress atlas" not in few.loc[0, "note"]


def test_report_says_a_bootstrap_of_few_persons_is_approximate():
    # 6 persons: the atlas found designs with 5 persons where no bootstrap covered 0.90
    rng = np.random.default_rng(8)
    person = np.repeat(np.arange(6), 12)
    truth = rng.integers(0, 2, person.size)
    pred = np.where(rng.random(person.size) < 0.85, truth, 1 - truth)
    table = pc.report(truth, pred, groups=person, metrics=["f1", "recall"], rng=1)
    notes = dict(zip(table["metric"], table["note"], strict=True))
    assert "few persons (6): in the stress atlas no bootstrap interval" in notes["f1"]
    assert "no bootstrap interval" not in notes["recall"]  # an analytic interval


def test_subgroup_difference_recommended_interval_covers_with_persons(tmp_path):
    # two subgroups of 20 persons with about 10 texts each, ICC 0.2: the recommended
    # difference with the persons covers; Newcombe on the pooled texts does not
    ds = _run(
        tmp_path,
        {"kind": "subgroups_nested", "metric": "recall", "icc": 0.2, "prevalence": 0.4},
        {"persons": [20], "texts_per_person": [10.0]},
        [
            {"name": "recommended", "family": "group_difference"},
            {
                "name": "pooled",
                "family": "group_difference",
                "method": "newcombe",
                "counts": "pooled",
            },
        ],
        replications=1500,
    )
    coverage, tolerance = _covers(ds, "recommended")
    assert coverage >= NOMINAL_FLOOR - tolerance, coverage
    pooled, tolerance = _covers(ds, "pooled")
    assert pooled < NOMINAL_FLOOR - tolerance, pooled


def test_clustered_auc_interval_covers_where_the_unclustered_one_does_not(tmp_path):
    # 20 persons with about 20 texts each and a person effect on the score (60% of its
    # within-class variance): Obuchowski's clustered DeLong interval (the recommended,
    # logit scale) covers; DeLong's on the pooled texts does not
    ds = _run(
        tmp_path,
        {"kind": "scored_nested", "prevalence": 0.3, "auc": 0.8, "score_icc": 0.6},
        {"persons": [20], "texts_per_person": [20.0]},
        [
            {"name": "recommended", "family": "auc"},
            {"name": "pooled", "family": "auc", "method": "delong", "counts": "pooled"},
        ],
        replications=2000,
    )
    coverage, tolerance = _covers(ds, "recommended")
    assert coverage >= NOMINAL_FLOOR - tolerance, coverage
    pooled, tolerance = _covers(ds, "pooled")
    assert pooled < NOMINAL_FLOOR - tolerance, pooled


def test_repeated_runs_interval_covers_where_the_stacked_runs_do_not(tmp_path):
    # 40 persons with 10 texts each, labelled by 5 runs that differ systematically (a
    # run effect with SD 0.3 on the probit scale): the crossed persons x runs interval
    # (runs_ci_counts, recommended) covers the new-run recall; the runs stacked as 5
    # times more texts of the same persons (the naive interval) does not (0.90 in 2,000
    # data sets). Each interval is scored against the truth of its estimand: the same
    # stacked interval covers the mean of the data set's own runs (these_runs), and so
    # do the these_runs and majority intervals theirs.
    ds = _run(
        tmp_path,
        {"kind": "runs_nested", "metric": "recall"},
        {"persons": [40], "texts_per_person": [10.0], "runs": [5], "run_sd": [0.3]},
        [
            {"name": "recommended", "family": "runs"},
            {"name": "stacked", "family": "runs", "method": "stacked"},
            {
                "name": "stacked_these",
                "family": "runs",
                "method": "stacked",
                "estimand": "these_runs",
            },
            {"name": "these_runs", "family": "runs", "estimand": "these_runs"},
            {"name": "majority", "family": "runs", "estimand": "majority"},
        ],
        replications=2000,
    )
    for method in ("recommended", "stacked_these", "these_runs", "majority"):
        coverage, tolerance = _covers(ds, method)
        assert coverage >= NOMINAL_FLOOR - tolerance, (method, coverage)
    stacked, tolerance = _covers(ds, "stacked")
    assert stacked < NOMINAL_FLOOR - tolerance, stacked


def test_new_annotator_interval_covers_where_one_coder_does_not(tmp_path):
    # 40 persons with 10 texts each, coded by 3 annotators who differ systematically (a
    # shift toward coding positive with SD 0.5 on the probit scale), each coding 60% of
    # the texts: the crossed persons x annotators interval (annotator_ci, recommended)
    # covers the recall against a new annotator; the recall against the first annotator
    # alone (a study with one coder) does not (0.84 in 2,000 data sets), nor do the codes
    # stacked as more texts of the same persons (0.88). Each interval is scored against
    # the truth of its estimand: the same stacked interval covers the mean over the data
    # set's own annotators (these_annotators), and so do the these_annotators and
    # majority intervals theirs.
    ds = _run(
        tmp_path,
        {"kind": "annotators_nested", "metric": "recall"},
        {
            "persons": [40],
            "texts_per_person": [10.0],
            "annotators": [3],
            "annotator_sd": [0.5],
            "coded": [0.6],
        },
        [
            {"name": "recommended", "family": "annotators"},
            {"name": "single", "family": "annotators", "method": "single"},
            {"name": "stacked", "family": "annotators", "method": "stacked"},
            {
                "name": "stacked_these",
                "family": "annotators",
                "method": "stacked",
                "estimand": "these_annotators",
            },
            {"name": "these_annotators", "family": "annotators", "estimand": "these_annotators"},
            {"name": "majority", "family": "annotators", "estimand": "majority"},
        ],
        replications=2000,
    )
    for method in ("recommended", "stacked_these", "these_annotators", "majority"):
        coverage, tolerance = _covers(ds, method)
        assert coverage >= NOMINAL_FLOOR - tolerance, (method, coverage)
    for method in ("single", "stacked"):
        coverage, tolerance = _covers(ds, method)
        assert coverage < NOMINAL_FLOOR - tolerance, (method, coverage)


@pytest.mark.parametrize(
    "kind, grid",
    [
        ("runs_nested", {"runs": [3], "run_sd": [0.3]}),
        ("annotators_nested", {"annotators": [3], "annotator_sd": [0.5], "coded": [1.0]}),
    ],
)
def test_tiny_crossed_design_recommended_interval_covers(tmp_path, kind, grid):
    # 10 persons with one text each (10 texts, prevalence 0.3: 3-4 relevant texts per run
    # or annotator), F1: the crossed variance components (the old recommended interval,
    # now method="variance_components" by name) covered the new-run F1 0.89-0.92 and the
    # new-annotator F1 0.88-0.91 in the atlas on the plain scale; below
    # CROSSED_TINY_RELEVANT relevant texts per level the recommended interval is the median
    # run's (annotator's) interval of one classifier, which covers. On the logit scale (the
    # variance components' interval of F1 since) they cover too
    family = "runs" if kind == "runs_nested" else "annotators"
    ds = _run(
        tmp_path,
        {"kind": kind, "metric": "f1"},
        {"persons": [10], "texts_per_person": [1.0], **grid},
        [
            {"name": "recommended", "family": family},
            {"name": "old_default", "family": family, "method": "variance_components"},
        ],
        replications=2000,
    )
    coverage, tolerance = _covers(ds, "recommended")
    assert coverage >= NOMINAL_FLOOR - tolerance, coverage
    old, tolerance = _covers(ds, "old_default")
    assert old >= NOMINAL_FLOOR - tolerance, old
