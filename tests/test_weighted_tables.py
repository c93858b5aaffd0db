"""Weighted and stratified samples in report, compare and compare_groups.

Reference values: R's survey package (tests/reference/survey_differences.R writes
tests/reference/survey_differences.json; its header gives the svydesign and svycontrast
calls of the paired and the domain differences).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import perfci as pc

REFERENCE = json.loads(
    (Path(__file__).parent / "reference" / "survey_differences.json").read_text()
)
DESIGNS = ("fpc_design", "cluster_design")


def _design(record: dict, design: str) -> dict:
    options = {"weights": record["weight"], "strata": record["stratum"]}
    if design == "fpc_design":
        options["stratum_sizes"] = record["fpc"]
    else:
        options["groups"] = record["person"]
    return options


def _t_interval(estimate: float, se: float, df: float) -> tuple[float, float]:
    t = stats.t.ppf(0.975, df)
    return estimate - t * se, estimate + t * se


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("record", REFERENCE, ids=lambda r: f"data{r['id']}")
def test_paired_differences_equal_svycontrast(record, design):
    # svycontrast(svytotal(cells of A and B), quote(f(A) - f(B))): the delta method on
    # the same sampling units, so the units' linearized values are differenced
    for metric, expected in record[design]["paired"].items():
        result = pc.compare(
            record["truth"], record["pred_a"], record["pred_b"], metric, **_design(record, design)
        )
        assert result.difference == pytest.approx(expected["estimate"], rel=1e-12, abs=1e-14)
        assert result.robust_se == pytest.approx(expected["se"], rel=1e-10, abs=1e-14)
        assert (result.low, result.high) == pytest.approx(
            _t_interval(expected["estimate"], expected["se"], result.df), rel=1e-9
        )
        assert result.estimate == result.difference


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("record", REFERENCE, ids=lambda r: f"data{r['id']}")
def test_domain_differences_equal_svycontrast(record, design):
    # subgroup "b" minus "a": each subgroup's cells with the other texts kept in the
    # design at zero, as R's subset() does, and their contrast
    for metric, expected in record[design]["domain"].items():
        table = pc.compare_groups(
            record["truth"],
            record["pred_a"],
            metric,
            record["subgroup"],
            reference="a",
            **_design(record, design),
        )
        row = table.iloc[0]
        assert (row["subgroup"], row["reference"]) == ("b", "a")
        assert row["difference"] == pytest.approx(expected["estimate"], rel=1e-12, abs=1e-14)
        assert row["se"] == pytest.approx(expected["se"], rel=1e-10, abs=1e-14)
        assert (row["low"], row["high"]) == pytest.approx(
            _t_interval(expected["estimate"], expected["se"], row["df"]), rel=1e-9
        )


def test_the_df_are_the_units_with_a_relevant_text_less_their_strata():
    # recall reads the reference positives: texts with truth 1, by A or by B (the same)
    record = REFERENCE[0]
    result = pc.compare(
        record["truth"],
        record["pred_a"],
        record["pred_b"],
        "recall",
        **_design(record, "fpc_design"),
    )
    truth = np.array(record["truth"])
    strata = np.unique(np.array(record["stratum"])[truth == 1]).size
    assert result.df == truth.sum() - strata


def _stratified_sample(seed: int = 3) -> dict:
    rng = np.random.default_rng(seed)
    pred = np.repeat([1, 0], 200)
    truth = np.where(pred == 1, rng.random(400) < 0.8, rng.random(400) < 0.05).astype(int)
    return {
        "truth": truth,
        "pred": pred,
        "by": rng.choice(["a", "b"], 400),
        "sizes": {1: 1000, 0: 20000},
    }


def test_report_rows_are_metric_ci_and_subgroups_are_domains():
    s = _stratified_sample()
    design = {"strata": s["pred"], "stratum_sizes": s["sizes"]}
    table = pc.report(s["truth"], s["pred"], by=s["by"], metrics=["recall", "f1"], rng=1, **design)
    assert list(table["by"]) == ["all", "all", "a", "a", "b", "b"]
    # the rows for all texts are metric_ci's (the same stream gives the same draws)
    alone = pc.metric_ci(s["truth"], s["pred"], "recall", rng=np.random.default_rng(1), **design)
    assert table.loc[0, "estimate"] == alone.estimate
    assert table.loc[0, "method"] == alone.method
    assert table.loc[0, "method"].startswith("poststratified (weighted: 2 strata")
    # a subgroup is a domain: the texts outside it stay units of their strata
    inside = s["by"] == "a"
    cells = pc.design_cells(s["truth"], s["pred"], domain=inside, **design)
    expected = pc.weighted_ci(cells, "recall")
    assert table.loc[2, "estimate"] == pytest.approx(expected.estimate, rel=1e-14)
    assert (table.loc[2, "low"], table.loc[2, "high"]) == pytest.approx(
        (expected.low, expected.high), rel=1e-14
    )
    assert table.loc[2, "method"].startswith("logit (weighted")


def test_a_domain_estimate_is_the_weighted_ratio_of_its_texts():
    s = _stratified_sample()
    inside = s["by"] == "b"
    weights = np.where(s["pred"] == 1, 1000 / 200, 20000 / 200)
    cells = pc.design_cells(
        s["truth"], s["pred"], strata=s["pred"], stratum_sizes=s["sizes"], domain=inside
    )
    tp = np.sum(weights * inside * (s["truth"] == 1) * (s["pred"] == 1))
    positives = np.sum(weights * inside * (s["truth"] == 1))
    assert pc.weighted_ci(cells, "recall").estimate == pytest.approx(tp / positives, rel=1e-14)


def test_design_arguments_refuse_the_options_of_simple_random_samples():
    s = _stratified_sample()
    design = {"strata": s["pred"], "stratum_sizes": s["sizes"]}
    t, p = s["truth"], s["pred"]
    with pytest.raises(ValueError, match="`score` does not apply to a weighted"):
        pc.report(t, p, score=np.linspace(0, 1, 400), **design)
    with pytest.raises(ValueError, match="`bayes` does not apply"):
        pc.report(t, p, bayes=True, **design)
    with pytest.raises(ValueError, match="`differences` does not apply"):
        pc.report(t, p, by=s["by"], differences=True, **design)
    with pytest.raises(ValueError, match="`n_resamples` does not apply"):
        pc.compare(t, p, 1 - p, "recall", n_resamples=500, **design)
    with pytest.raises(ValueError, match="`method` does not apply"):
        pc.compare(t, p, 1 - p, "recall", method="bootstrap", **design)
    with pytest.raises(ValueError, match="`simultaneous` does not apply"):
        pc.compare_groups(t, p, "recall", s["by"], simultaneous="bonferroni", **design)
    with pytest.raises(ValueError, match="`metrics`: a weighted or stratified sample"):
        pc.report(t, p, metrics=["macro_f1"], **design)
    with pytest.raises(ValueError, match="`reference` must be one of"):
        pc.compare_groups(t, p, "recall", s["by"], reference="z", **design)


def test_an_undefined_row_is_left_out_with_a_warning():
    # a subgroup without reference positives has no recall: its row is left out
    s = _stratified_sample()
    by = np.where(s["truth"] == 1, "a", s["by"])
    with pytest.warns(pc.UndefinedMetricWarning, match="left out of the report: b: recall"):
        table = pc.report(
            s["truth"],
            s["pred"],
            by=by,
            metrics=["recall"],
            strata=s["pred"],
            stratum_sizes=s["sizes"],
            rng=1,
        )
    assert list(table["by"]) == ["all", "a"]


def test_an_undefined_difference_is_nan_with_a_warning():
    s = _stratified_sample()
    by = np.where(s["truth"] == 1, "a", s["by"])
    with pytest.warns(pc.UndefinedMetricWarning, match="design-based interval of recall"):
        table = pc.compare_groups(
            s["truth"], s["pred"], "recall", by, strata=s["pred"], stratum_sizes=s["sizes"]
        )
    assert np.isnan(table.loc[0, "low"]) and np.isnan(table.loc[0, "high"])


def test_the_comparison_of_one_classifier_with_itself_has_no_variance():
    s = _stratified_sample()
    with pytest.warns(pc.UndefinedMetricWarning, match="without design variance"):
        result = pc.compare(
            s["truth"], s["pred"], s["pred"], "recall", strata=s["pred"], stratum_sizes=s["sizes"]
        )
    assert result.difference == 0 and np.isnan(result.low)
    assert result.disagreement == 0


def test_the_report_of_persons_as_clusters_counts_the_persons():
    s = _stratified_sample()
    persons = np.arange(400) % 37
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.UndefinedMetricWarning)
        table = pc.report(
            s["truth"], s["pred"], groups=persons, strata=s["pred"], metrics=["precision"]
        )
    assert table.loc[0, "persons"] == 37
    assert table.loc[0, "method"] == (
        "logit (weighted: 2 strata, persons as clusters within strata, no finite population "
        "correction)"
    )


@pytest.fixture
def stratified_csv(tmp_path):
    s = _stratified_sample()
    rng = np.random.default_rng(8)
    frame = {
        "human": s["truth"],
        "model": s["pred"],
        "model_b": np.where(rng.random(400) < 0.1, 1 - s["pred"], s["pred"]),
        "stratum": np.where(s["pred"] == 1, "predicted positive", "predicted negative"),
        "size": np.where(s["pred"] == 1, 1000, 20000),
        "weight": np.where(s["pred"] == 1, 1000 / 200, 20000 / 200),
    }
    path = tmp_path / "sample.csv"
    pd.DataFrame(frame).to_csv(path, index=False)
    return path, frame


def _cli(capsys, *argv):
    from perfci.cli import main

    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_cli_report_and_compare_take_the_design(capsys, stratified_csv):
    path, f = stratified_csv
    common = ("--truth", "human", "--stratum", "stratum", "--stratum-size", "size")
    status, out, _ = _cli(
        capsys, "report", path, "--pred", "model", *common, "--metrics", "recall", "--seed", 1
    )
    assert status == 0
    rows = json.loads(
        _cli(capsys, "report", path, "--pred", "model", *common, "--metrics", "recall",
             "--seed", 1, "--json")[1]
    )  # fmt: skip
    expected = pc.metric_ci(
        f["human"], f["model"], "recall", strata=f["stratum"],
        stratum_sizes=dict(zip(f["stratum"], f["size"], strict=True)),
        rng=np.random.default_rng(1),
    )  # fmt: skip
    assert rows[0]["estimate"] == pytest.approx(expected.estimate, rel=1e-14)
    assert rows[0]["method"] == expected.method
    status, out, _ = _cli(
        capsys, "compare", path, "--pred-a", "model", "--pred-b", "model_b", "--metric",
        "recall", *common, "--json",
    )  # fmt: skip
    payload = json.loads(out)
    direct = pc.compare(
        f["human"], f["model"], f["model_b"], "recall", strata=f["stratum"],
        stratum_sizes=dict(zip(f["stratum"], f["size"], strict=True)),
    )  # fmt: skip
    assert (payload["low"], payload["high"]) == (direct.low, direct.high)
    # the weights alone, with strata: the same estimate (weights N_h / n_h)
    rows = json.loads(
        _cli(capsys, "report", path, "--pred", "model", "--truth", "human", "--weight",
             "weight", "--stratum", "stratum", "--metrics", "precision", "--json")[1]
    )  # fmt: skip
    sized = pc.metric_ci(
        f["human"], f["model"], "precision", strata=f["stratum"],
        stratum_sizes=dict(zip(f["stratum"], f["size"], strict=True)), rng=1,
    )  # fmt: skip
    assert rows[0]["estimate"] == pytest.approx(sized.estimate, rel=1e-14)
    assert "no finite population correction" in rows[0]["method"]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (("--stratum-size", "size"), "`--stratum-size`"),
        (("--weight", "human"), "`--weight` column 'human'"),
        (("--weight", "nope"), "--weight"),
        (("--stratum", "stratum", "--score", "weight"), "`--score` column 'weight'"),
    ],
)
def test_the_cli_names_a_bad_design_flag_in_one_line(capsys, stratified_csv, argv, named):
    path, _ = stratified_csv
    status, out, err = _cli(capsys, "report", path, "--truth", "human", "--pred", "model", *argv)
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert named in err


def test_the_cli_refuses_the_design_with_runs_or_an_auc_comparison(capsys, stratified_csv):
    path, _ = stratified_csv
    for argv in (
        ("--pred-a", "model", "model_b", "--pred-b", "model_b", "model", "--metric", "recall"),
        ("--pred-a", "weight", "--pred-b", "size", "--metric", "roc_auc"),
    ):
        status, out, err = _cli(
            capsys, "compare", path, "--truth", "human", "--stratum", "stratum", *argv
        )
        assert status == 2 and "not supported" in err and err.count("\n") == 1, err


def test_the_html_report_states_the_design_and_the_weighting(capsys, stratified_csv, tmp_path):
    path, _ = stratified_csv
    html = tmp_path / "report.html"
    status, _, err = _cli(
        capsys, "report", path, "--truth", "human", "--pred", "model", "--pred-b", "model_b",
        "--stratum", "stratum", "--stratum-size", "size", "--metrics", "recall", "precision",
        "--html", html, "--seed", 1, "--quiet",
    )  # fmt: skip
    assert status == 0, err
    page = html.read_text()
    assert "Sample design" in page
    assert "2 strata, finite population correction from the stratum sizes" in page
    assert "standing for 21,000 corpus texts in all" in page
    assert "The texts are a weighted sample" in page
    assert "the corpus the sample was drawn from" in page
    assert "poststratified by the stratum sizes" in page  # the recommended interval in words


def test_validation_report_with_a_design_has_no_forest_and_no_differences():
    s = _stratified_sample()
    persons = np.arange(400) % 40
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.UndefinedMetricWarning)
        rep = pc.validation_report(
            s["truth"], s["pred"], groups=persons, by=s["by"], strata=s["pred"],
            metrics=["recall"], rng=1,
        )  # fmt: skip
    assert rep.person_rates is None and rep.forest_metric is None
    assert "reference" not in rep.table.columns or (rep.table["reference"] == "").all()
    assert rep.summary["design"].startswith("2 strata, persons as clusters")
    assert "the population of persons that the sampled persons were drawn from" in rep.methods
