import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import perfci as pc
from perfci.cli import main


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_interval_json(capsys):
    status, out, err = run(
        capsys, "interval", "--successes", "264", "--trials", "300", "--method", "wilson", "--json"
    )
    assert status == 0 and err == ""
    payload = json.loads(out)
    ci = pc.proportion_ci(264, 300, method="wilson")
    assert payload["estimate"] == pytest.approx(0.88)
    assert payload["low"] == ci.low and payload["high"] == ci.high
    assert payload["method"] == "wilson" and payload["confidence_level"] == 0.95


def test_interval_text_and_level(capsys):
    status, out, _ = run(
        capsys, "interval", "--successes", "9", "--trials", "10", "--confidence-level", "0.9"
    )
    assert status == 0
    assert out.startswith("agresti_coull 90% interval for 9 of 10: estimate 0.9000")


def test_coverage_json(capsys):
    status, out, _ = run(
        capsys, "coverage", "--method", "wald", "--n", "20", "--p", "0.95", "--json"
    )
    assert status == 0
    payload = json.loads(out)
    assert payload["coverage"] == pytest.approx(pc.exact_coverage("wald", 20, 0.95))
    assert set(payload) >= {"coverage", "miss_low", "miss_high", "expected_half_width"}


def test_demo_lists_every_binary_metric(capsys):
    status, out, _ = run(capsys, "demo", "--json")
    assert status == 0
    records = json.loads(out)["report"]
    assert [r["metric"] for r in records] == list(pc.BINARY_METRICS)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (
            ["interval", "--successes", "11", "--trials", "10"],
            "`--successes` must not exceed `--trials`",
        ),
        (
            ["interval", "--successes", "1", "--trials", "10", "--method", "exact"],
            "argument --method: invalid choice: 'exact' (choose from 'wald', 'wilson',",
        ),
        (
            ["interval", "--successes", "1", "--trials", "10", "--confidence-level", "95"],
            "`--confidence-level` must lie strictly between 0 and 1",
        ),
        (["interval", "--successes", "x", "--trials", "10"], "argument --successes"),
        (["interval", "--trials", "10"], "the following arguments are required: --successes"),
        (["coverage", "--method", "wald", "--n", "0", "--p", "0.5"], "`--n` must be positive"),
        (["coverage", "--method", "wald", "--n", "10", "--p", "2"], "`--p` must lie in"),
        (["nonsense"], "invalid choice"),
        ([], "the following arguments are required: command"),
    ],
)
def test_errors_are_one_line_with_status_2(capsys, argv, match):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert match in err


def test_installed_entry_point_runs_without_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "perfci.cli", "interval", "--successes", "5", "--trials", "2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "perfci: error: `--successes` must not exceed `--trials`."


def test_bootstrap_json_matches_the_library(capsys):
    status, out, _ = run(
        capsys,
        "bootstrap",
        "--cells",
        "40",
        "6",
        "9",
        "345",
        "--metric",
        "f1",
        "--pseudo-count",
        "1",
        "--interval",
        "bca",
        "--seed",
        "3",
        "--json",
    )
    assert status == 0
    payload = json.loads(out)
    ci = pc.bootstrap_ci([40, 6, 9, 345], "f1", interval="bca", pseudo_count=1, rng=3)
    assert (payload["low"], payload["high"], payload["estimate"]) == (ci.low, ci.high, ci.estimate)
    assert payload["n_resamples"] == 2000 and payload["interval"] == "bca"


def test_bootstrap_exact_proportion(capsys):
    status, out, _ = run(
        capsys,
        "bootstrap",
        "--successes",
        "19",
        "--trials",
        "20",
        "--pseudo-count",
        "1",
        "--n-resamples",
        "exact",
        "--json",
    )
    assert status == 0
    payload = json.loads(out)
    assert payload["metric"] == "proportion" and payload["n_resamples"] == "exact"
    assert payload["low"] == pytest.approx(17 / 22)


def test_warnings_are_one_line_on_stderr(capsys):
    status, out, err = run(
        capsys, "bootstrap", "--cells", "1", "0", "0", "50", "--metric", "recall", "--seed", "1"
    )
    assert status == 0
    # each warning one line: recall undefined in some resamples, and (one positive text,
    # always found) a zero-width interval
    lines = err.splitlines()
    assert lines[0].startswith("perfci: warning: recall was undefined in")
    assert all(line.startswith("perfci: warning: ") for line in lines) and len(lines) == 2


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (
            ["bootstrap", "--cells", "0", "5", "0", "5", "--metric", "recall"],
            "undefined in every resample",
        ),
        (["bootstrap", "--cells", "1", "2", "3"], "argument --cells: expected 4 arguments"),
        (["bootstrap", "--successes", "5"], "give `--cells TP FP FN TN`"),
        (["bootstrap", "--successes", "5", "--trials", "3"], "must not exceed"),
        (
            ["bootstrap", "--cells", "1", "2", "3", "4", "--n-resamples", "0"],
            "`--n-resamples` must be a positive integer",
        ),
        (
            ["bootstrap", "--cells", "1", "2", "3", "4", "--n-resamples", "lots"],
            "expected a positive integer or 'exact'",
        ),
        (
            ["bootstrap", "--cells", "1", "2", "3", "4", "--metric", "auc"],
            "argument --metric: invalid choice: 'auc' (choose from 'proportion', 'accuracy',",
        ),
        (["bootstrap", "--cells", "1", "-2", "3", "4"], "`--cells` must be non-negative"),
        (["bootstrap", "--cells", "1", "2", "3", "4", "--interval", "abc"], "invalid choice"),
    ],
)
def test_bootstrap_errors(capsys, argv, match):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert match in err


@pytest.fixture
def example_csv(tmp_path):
    path = tmp_path / "texts.csv"
    pc.load_example().to_csv(path, index=False)
    return path


def test_report_json_rows_have_the_documented_keys(capsys, example_csv):
    status, out, _ = run(
        capsys,
        "report",
        str(example_csv),
        "--truth",
        "human",
        "--pred",
        "model",
        "--group",
        "person",
        "--seed",
        "1",
        "--json",
    )
    assert status == 0
    rows = json.loads(out)
    assert [r["metric"] for r in rows] == list(pc.BINARY_METRICS)
    assert set(rows[0]) == {
        "metric",
        "estimate",
        "low",
        "high",
        "method",
        "sources",
        "relevant_n",
        "persons",
        "icc",
        "design_effect",
        "n_eff",
        "note",
    }
    texts = pc.load_example()
    ref = pc.metric_ci(texts["human"], texts["model"], "recall", groups=texts["person"])
    recall = rows[1]
    assert (recall["low"], recall["high"], recall["persons"]) == (ref.low, ref.high, ref.persons)


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown"])
def test_report_formats(capsys, example_csv, fmt):
    status, out, _ = run(
        capsys,
        "report",
        str(example_csv),
        "--truth",
        "human",
        "--pred",
        "model",
        "--by",
        "site",
        "--format",
        fmt,
        "--seed",
        "1",
    )
    assert status == 0 and "clinic_b" in out and "precision" in out


def test_report_parquet_and_string_labels(capsys, tmp_path):
    texts = pc.load_example()
    texts["human"] = texts["human"].map({1: "yes", 0: "no"})
    texts["model"] = texts["model"].map({1: "yes", 0: "no"})
    path = tmp_path / "texts.parquet"
    texts.to_parquet(path)
    status, out, _ = run(
        capsys,
        "report",
        str(path),
        "--truth",
        "human",
        "--pred",
        "model",
        "--positive",
        "yes",
        "--negative",
        "no",
        "--json",
        "--seed",
        "1",
    )
    assert status == 0
    assert json.loads(out)[1]["estimate"] == pytest.approx(
        pc.metric_ci(texts["human"], texts["model"], "recall", positive="yes").estimate
    )


def test_compare_json(capsys, example_csv):
    status, out, _ = run(
        capsys,
        "compare",
        str(example_csv),
        "--truth",
        "human",
        "--pred-a",
        "model",
        "--pred-b",
        "model_b",
        "--metric",
        "recall",
        "--seed",
        "2",
        "--json",
    )
    assert status == 0
    payload = json.loads(out)
    texts = pc.load_example()
    ref = pc.compare(texts["human"], texts["model"], texts["model_b"], "recall", rng=2)
    assert (payload["difference"], payload["low"], payload["high"]) == (
        ref.difference,
        ref.low,
        ref.high,
    )
    assert payload["mcnemar_pvalue"] == ref.mcnemar_pvalue


def test_plan_json(capsys):
    status, out, _ = run(
        capsys,
        "plan",
        "--metric-value",
        "0.9",
        "--half-width",
        "0.05",
        "--confidence-level",
        "0.9",
        "--method",
        "percentile",
        "--pseudo-count",
        "1",
        "--prevalence",
        "0.25",
        "--json",
    )
    assert status == 0
    payload = json.loads(out)
    plan = pc.plan_sample_size(
        0.9, 0.05, confidence_level=0.9, method="percentile", pseudo_count=1, prevalence=0.25
    )
    assert (payload["relevant_n"], payload["total_texts"]) == (plan.relevant_n, plan.total_texts)
    status, out, _ = run(
        capsys,
        "plan",
        "--metric-value",
        "0.9",
        "--half-width",
        "0.05",
        "--icc",
        "0.1",
        "--texts-per-person",
        "10",
        "--json",
    )
    assert (
        json.loads(out)["persons"]
        == pc.plan_sample_size(0.9, 0.05, icc=0.1, texts_per_person=10).persons
    )
    argv = ["plan", "--metric-value", "0.9", "--half-width", "0.05", "--icc", "0.1"]
    argv += ["--texts-per-person", "10", "--cluster-size-cv", "1.3", "--json"]
    status, out, _ = run(capsys, *argv)
    unequal = pc.plan_sample_size(0.9, 0.05, icc=0.1, texts_per_person=10, cluster_size_cv=1.3)
    assert status == 0 and json.loads(out)["persons"] == unequal.persons > 31


def test_demo_json_has_report_compare_and_plan(capsys):
    status, out, _ = run(capsys, "demo", "--json")
    assert status == 0
    payload = json.loads(out)
    assert set(payload) == {"report", "compare", "plan"}


def test_file_errors(capsys, tmp_path, example_csv):
    bad = tmp_path / "bad.csv"
    bad.write_text('a,b\n"1,2\n')
    nan_person = tmp_path / "nan.csv"
    frame = pc.load_example()
    frame.loc[11, "person"] = None
    frame.to_csv(nan_person, index=False)
    third = tmp_path / "third.csv"
    frame = pc.load_example()
    frame["human"] = frame["human"].astype(str)
    frame.loc[4, "human"] = "maybe"
    frame.to_csv(third, index=False)
    cases = [
        (["report", str(tmp_path / "nope.csv"), "--truth", "h", "--pred", "m"], "does not exist"),
        (
            ["report", str(tmp_path / "x.xlsx"), "--truth", "h", "--pred", "m"],
            "must be a .csv, .tsv or .parquet file",
        ),
        (["report", str(bad), "--truth", "a", "--pred", "b"], "could not be read"),
        (
            ["report", str(example_csv), "--truth", "humann", "--pred", "model"],
            "`--truth` column 'humann' is not in",
        ),
        (
            ["report", str(nan_person), "--truth", "human", "--pred", "model", "--group", "person"],
            "`--group` column 'person' has 1 empty cell, in row 12 of",
        ),
        (
            [
                "report",
                str(third),
                "--truth",
                "human",
                "--pred",
                "model",
                "--positive",
                "1",
                "--negative",
                "0",
            ],
            "`--truth` column 'human' holds labels that are neither the `--positive` '1' nor the "
            "`--negative` '0': 'maybe', at row 5.",
        ),
        (
            ["report", str(example_csv), "--truth", "human", "--pred", "model", "--positive", "2"],
            "`--positive` label '2' is not among the labels [0, 1].",
        ),
        (
            [
                "compare",
                str(example_csv),
                "--truth",
                "human",
                "--pred-a",
                "model",
                "--pred-b",
                "model_b",
                "--metric",
                "macro_f1",
            ],
            "argument --metric: invalid choice: 'macro_f1' (choose from 'accuracy',",
        ),
        (["plan", "--metric-value", "0.9", "--half-width", "0.7"], "`--half-width` must lie"),
        (
            ["plan", "--metric-value", "0.9", "--half-width", "0.05", "--cluster-size-cv", "1"],
            "`--cluster-size-cv` applies to nested designs: give `--icc` and "
            "`--texts-per-person` too",
        ),
    ]
    for argv, match in cases:
        status, out, err = run(capsys, *argv)
        assert status == 2 and out == "" and err.count("\n") == 1, (argv, err)
        assert match in err, (argv, err)


#: Each delimiter but the file's default one, the file it is written to, and its `--sep`.
DELIMITED = [
    (";", "semicolons.csv", ";"),
    ("\t", "tabs.csv", "\\t"),
    ("|", "pipes.txt", "|"),
    (",", "commas.tsv", ","),
]


def _table_commands(path):
    """A command line of every command that reads a table, reading `path`."""
    file = str(path)
    return [
        ["report", file, "--truth", "human", "--pred", "model", "--seed", "1", "--json"],
        ["report", file, "--truth", "human", "human_b", "--pred", "model", "--seed", "1"],
        [
            *("compare", file, "--truth", "human", "--pred-a", "model", "--pred-b", "model_b"),
            *("--metric", "f1", "--seed", "1", "--json"),
        ],
        [
            *("bayes", file, "--truth", "human", "--pred", "model", "--group", "person"),
            *("--metric", "recall", "--sampler", "grid", "--seed", "1", "--json"),
        ],
        [
            *("plan", "--pilot", file, "--truth", "human", "--pred", "model"),
            *("--metric", "recall", "--target", "0.05", "--json"),
        ],
    ]


@pytest.mark.parametrize(("sep", "name", "flag"), DELIMITED)
def test_a_file_with_another_delimiter_is_one_line_naming_the_sep_to_read_it(
    capsys, tmp_path, sep, name, flag
):
    path = tmp_path / name
    pc.load_example().to_csv(path, sep=sep, index=False)
    for argv in _table_commands(path):
        status, out, err = run(capsys, *argv)
        assert status == 2 and out == "" and err.count("\n") == 1, (argv, err)
        assert f" is not in {path}, whose header reads as one column, " in err
        assert f"the file looks delimited by {sep!r}: read it with `--sep {sep!r}`." in err


@pytest.mark.parametrize(("sep", "name", "flag"), DELIMITED)
def test_sep_reads_a_file_as_its_comma_twin_is_read(capsys, tmp_path, example_csv, sep, name, flag):
    path = tmp_path / name
    pc.load_example().to_csv(path, sep=sep, index=False)
    for argv, twin in zip(_table_commands(path), _table_commands(example_csv), strict=True):
        expected = run(capsys, *twin)
        status, out, err = run(capsys, *argv, "--sep", flag)
        assert expected[0] == status == 0, (argv, err)
        assert (out.replace(str(path), str(example_csv)), err) == expected[1:]


def test_a_file_that_cannot_be_read_names_the_delimiter_its_header_has(capsys, tmp_path):
    path = tmp_path / "notes.csv"
    path.write_text("human;model;note\n1;1;fine\n0;1;yes, and no\n")
    argv = ["report", str(path), "--truth", "human", "--pred", "model", "--metrics", "accuracy"]
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert f"file {str(path)!r} could not be read: " in err
    assert err.endswith("; the file looks delimited by ';': read it with `--sep ';'`.\n")
    status, out, err = run(capsys, *argv, "--sep", ";")
    assert status == 0 and "accuracy" in out


def test_sep_errors(capsys, tmp_path, example_csv):
    parquet = tmp_path / "texts.parquet"
    pc.load_example().to_parquet(parquet)
    argv = ["--truth", "human", "--pred", "model"]
    for given, match in [
        (["report", str(example_csv), *argv, "--sep", ";;"], "argument --sep: expected one"),
        (["report", str(example_csv), *argv, "--sep", ""], "argument --sep: expected one"),
        (["report", str(example_csv), *argv, "--sep", '"'], "argument --sep: expected one"),
        (
            ["report", str(parquet), *argv, "--sep", ";"],
            f"`--sep` is the delimiter of a CSV or TSV file; file {str(parquet)!r} is Parquet.",
        ),
        (
            ["plan", "--target", "0.05", "--metric-value", "0.9", "--sep", ";"],
            "`--sep` reads a pilot file: it goes with `--pilot FILE`.",
        ),
    ]:
        status, out, err = run(capsys, *given)
        assert status == 2 and out == "" and err.count("\n") == 1 and match in err, (given, err)


def test_bayes_json(capsys, example_csv):
    status, out, _ = run(
        capsys,
        "bayes",
        str(example_csv),
        "--truth",
        "human",
        "--pred",
        "model",
        "--group",
        "person",
        "--metric",
        "recall",
        "--sampler",
        "grid",
        "--seed",
        "1",
        "--credible-level",
        "0.9",
        "--json",
    )
    assert status == 0
    payload = json.loads(out)
    assert payload["estimand"] == "population"
    for estimand in ("population", "mu", "sampled_persons"):
        assert set(payload[estimand]) >= {"estimate", "low", "high"}
    assert payload["credible_level"] == 0.9 and payload["diagnostics"]["flagged"] is False
    texts = pc.load_example()
    ref = pc.bayes.fit_proportion(
        texts["human"], texts["model"], "recall", groups=texts["person"], sampler="grid", rng=1
    ).interval("mu", confidence_level=0.9)
    assert (payload["mu"]["low"], payload["mu"]["high"]) == (ref.low, ref.high)
    status, out, err = run(
        capsys,
        "bayes",
        str(example_csv),
        "--truth",
        "human",
        "--pred",
        "model",
        "--group",
        "person",
        "--metric",
        "f1",
    )
    assert status == 2 and "argument --metric: invalid choice: 'f1' (choose from" in err


def test_bayes_json_is_the_fits_to_dict(capsys, example_csv):
    argv = ["bayes", str(example_csv), "--truth", "human", "--pred", "model"]
    argv += ["--group", "person", "--metric", "precision", "--sampler", "grid", "--seed", "3"]
    status, out, _ = run(capsys, *argv, "--credible-level", "0.8", "--json")
    assert status == 0
    payload = json.loads(out)
    texts = pc.load_example()
    fit = pc.bayes.fit_proportion(
        texts["human"], texts["model"], "precision", groups=texts["person"], sampler="grid", rng=3
    )
    summary = fit.to_dict(confidence_level=0.8)
    for key in ("sampler", "prior", "persons", "population", "mu", "sampled_persons"):
        assert payload[key] == summary[key], key
    assert payload["diagnostics"] == {
        **summary["diagnostics"],
        "flagged": summary["flagged"],
        "flag_reasons": summary["flag_reasons"],
    }
    assert payload["relevant_n"] == int(fit.trials.sum())
    frequentist = pc.metric_ci(
        texts["human"], texts["model"], "precision", groups=texts["person"], confidence_level=0.8
    ).to_dict()
    assert payload["frequentist"] == {
        k: frequentist[k] for k in ("estimate", "low", "high", "method")
    }


def test_validate_json(capsys, suite_workdir):
    assert main(["validate", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [{k: v for k, v in s.items() if k != "file"} for s in listed] == [
        {"name": "t", "description": "d", "scales": ["smoke"]}
    ]
    assert listed[0]["file"].endswith("validation/suites/t.toml")
    assert main(["validate", "run", "t", "--out", "res", "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cells"] == 2
    assert main(["validate", "report", "res", "--figures", "figs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"][-1].endswith("SUMMARY.md")


def test_report_differences(capsys, example_csv):
    argv = ["report", str(example_csv), "--truth", "human", "--pred", "model", "--by", "site"]
    status, out, _ = run(capsys, *argv, "--group", "person", "--differences", "--json")
    assert status == 0
    rows = [r for r in json.loads(out) if r["reference"]]
    assert [r["metric"] for r in rows] == list(pc.BINARY_METRICS)
    assert {(r["site"], r["reference"]) for r in rows} == {("clinic_b", "clinic_a")}
    texts = pc.load_example()
    ref = pc.compare_groups(
        texts["human"], texts["model"], "recall", texts["site"], groups=texts["person"]
    ).iloc[0]
    assert (rows[1]["estimate"], rows[1]["low"], rows[1]["high"]) == (
        ref.difference,
        ref.low,
        ref.high,
    )
    status, out, _ = run(capsys, *argv, "--differences", "--seed", "1")
    assert status == 0 and "Newcombe hybrid score interval" in out
    status, out, err = run(capsys, *argv[:6], "--differences")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "`--differences` needs `--by`" in err
    status, _, err = run(
        capsys, *argv[:6], "--by", "human_topic", "--group", "person", "--differences"
    )
    assert status == 2 and err.count("\n") == 1
    assert "`--group` column 'person' must nest persons in the subgroups of `--by` column" in err


def test_report_differences_from_a_reference(capsys, example_csv):
    argv = ["report", str(example_csv), "--truth", "human", "--pred", "model", "--by", "site"]
    status, out, _ = run(capsys, *argv, "--differences", "--reference", "clinic_b", "--json")
    assert status == 0
    rows = [r for r in json.loads(out) if r["reference"]]
    assert {(r["site"], r["reference"]) for r in rows} == {("clinic_a", "clinic_b")}
    status, out, err = run(capsys, *argv, "--differences", "--reference", "clinic_z")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "`--reference` 'clinic_z' is not one of the subgroups" in err


def test_report_of_repeated_runs_says_its_sources(capsys, example_csv):
    argv = ["report", str(example_csv), "--truth", "human", "--group", "person"]
    status, out, _ = run(capsys, *argv, "--pred", "run1", "run2", "run3", "--json")
    assert status == 0
    rows = {r["metric"]: r for r in json.loads(out)}
    assert rows["recall"]["sources"] == "texts, persons, runs"
    texts = pc.load_example()
    ref = pc.metric_ci(
        texts["human"], texts[["run1", "run2", "run3"]], "recall", groups=texts["person"]
    )
    assert (rows["recall"]["low"], rows["recall"]["high"]) == (ref.low, ref.high)
    assert "3 runs seen" in rows["recall"]["note"] and "texts flip" in rows["recall"]["note"]
    status, out, _ = run(capsys, *argv, "--pred", "model")
    assert status == 0 and "texts, persons" in out and "runs" not in out.split("\n")[1]


def test_report_of_a_long_table_of_runs(capsys, example_csv, tmp_path):
    texts = pc.load_example()
    long = texts.melt(
        id_vars=["text_id", "person", "human"],
        value_vars=["run1", "run2", "run3"],
        var_name="run",
        value_name="label",
    ).sample(frac=1, random_state=1)  # row order does not matter
    path = tmp_path / "long.csv"
    long.to_csv(path, index=False)
    argv = ["report", str(path), "--truth", "human", "--pred", "label", "--group", "person"]
    status, out, _ = run(capsys, *argv, "--run", "run", "--text", "text_id", "--json")
    assert status == 0
    wide = {r["metric"]: r for r in json.loads(out)}
    ref = pc.metric_ci(
        texts["human"], texts[["run1", "run2", "run3"]], "precision", groups=texts["person"]
    )
    assert (wide["precision"]["low"], wide["precision"]["high"]) == pytest.approx(
        (ref.low, ref.high), abs=1e-12
    )
    for extra, message in [
        (["--run", "run"], "`--run` needs `--text COL`"),
        (["--text", "text_id"], "`--text` names the texts of a long table of runs"),
    ]:
        status, out, err = run(capsys, *argv, *extra)
        assert status == 2 and out == "" and err.count("\n") == 1
        assert message in err, err
    long.iloc[1:].to_csv(path, index=False)  # one (text, run) row missing
    status, _, err = run(capsys, *argv, "--run", "run", "--text", "text_id")
    assert status == 2 and "every text needs a row in every run" in err
    pd.concat([long, long.iloc[:1]]).to_csv(path, index=False)
    status, _, err = run(capsys, *argv, "--run", "run", "--text", "text_id")
    assert status == 2 and "repeat a (text, run) pair" in err


def test_compare_with_repeated_runs(capsys, example_csv):
    argv = ["compare", str(example_csv), "--truth", "human", "--metric", "recall"]
    status, out, _ = run(
        capsys,
        *argv,
        "--pred-a",
        "run1",
        "run2",
        "run3",
        "--pred-b",
        "model_b",
        "--group",
        "person",
        "--json",
    )
    assert status == 0
    payload = json.loads(out)
    texts = pc.load_example()
    ref = pc.compare(
        texts["human"],
        texts[["run1", "run2", "run3"]],
        texts["model_b"],
        "recall",
        groups=texts["person"],
    )
    assert (payload["low"], payload["high"]) == (ref.low, ref.high)
    assert payload["sources"] == ["texts", "persons", "runs"] and payload["a"] == "run1+run2+run3"
    status, out, err = run(
        capsys, *argv, "--pred-a", "run1", "run2", "--pred-b", "model_b", "--method", "bootstrap"
    )
    assert status == 2 and out == "" and err.count("\n") == 1 and "`--method` 'bootstrap'" in err


def test_validate_finds_the_shipped_suites_from_any_folder(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no validation/suites here: the package's own are listed
    assert main(["validate", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("suites in ") and out[0].rstrip(":").endswith("suites")
    assert any(line.startswith("paper-independent: ") for line in out)
    assert main(["validate", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert all(Path(s["file"]).is_file() for s in listed)
    # a suite file given by its path runs from anywhere
    mine = tmp_path / "mine.toml"
    mine.write_text(Path(listed[0]["file"]).read_text())
    assert main(["validate", "run", str(mine), "--scale", "smoke", "--out", "res", "--quiet"]) == 0
    from perfci.harness import schema

    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setattr(schema, "suite_dirs", lambda: [empty])
    assert main(["validate", "list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no suite files (*.toml) in" in err and str(empty) in err


def test_report_metrics_and_bayes_flags(capsys, example_csv):
    argv = ["report", str(example_csv), "--truth", "human", "--pred", "model", "--group", "person"]
    status, out, _ = run(capsys, *argv, "--metrics", "recall", "f1", "--seed", "1", "--json")
    assert status == 0 and [r["metric"] for r in json.loads(out)] == ["recall", "f1"]
    status, out, _ = run(
        capsys, *argv, "--metrics", "recall", "--bayes", "--bayes-sampler", "grid", "--json"
    )
    rows = json.loads(out)
    assert status == 0 and len(rows) == 2 and rows[1]["method"].startswith("bayes")
    # the Bayesian row is about the same population as the frequentist one
    assert [r["sources"] for r in rows] == ["texts, persons", "texts, persons"]
    status, out, err = run(capsys, *argv, "--metrics", "recal")
    assert status == 2 and out == "" and err.count("\n") == 1 and "`--metrics`" in err


def _options():
    """Every option of every subcommand, with its expanded help."""
    import argparse

    from perfci.cli.parser import build_parser

    parser = build_parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, p in sub.choices.items():
        formatter = p._get_formatter()
        for action in p._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            yield command, action, formatter._expand_help(action) if action.help else ""


def test_every_option_has_help_that_states_its_default():
    missing = []
    for command, action, text in _options():
        name = action.option_strings[-1] if action.option_strings else action.dest
        if not text:
            missing.append((command, name, "no help"))
        elif action.required or action.nargs == 0:  # required, or an on/off flag
            continue
        elif "(default: " not in text:
            missing.append((command, name, "no default stated"))
        elif action.default is not None and f"default: {action.default}" not in text:
            missing.append((command, name, f"default {action.default!r} not stated"))
    assert not missing


def test_plan_from_a_pilot_file_is_the_librarys_plan(capsys, example_csv):
    argv = ["plan", "--pilot", str(example_csv), "--truth", "human", "--pred", "model"]
    status, out, err = run(
        capsys, *argv, "--group", "person", "--metric", "recall", "--target", "0.05", "--json"
    )
    assert status == 0 and err == ""
    payload = json.loads(out)
    texts = pc.load_example()
    pilot = pc.pilot_estimates(texts["human"], texts["model"], "recall", groups=texts["person"])
    assert payload["pilot"] == {"file": str(example_csv), **pilot.to_dict()}
    assert payload["plan"] == pilot.plan(0.05).to_dict()
    # flags replace the pilot's estimates; --target is --half-width
    status, out, _ = run(
        capsys,
        *argv,
        "--metric",
        "precision",
        "--half-width",
        "0.04",
        "--metric-value",
        "0.8",
        "--confidence-level",
        "0.9",
        "--method",
        "wilson",
    )
    lines = out.splitlines()
    plan = pc.pilot_estimates(texts["human"], texts["model"], "precision").plan(
        0.04, metric_value=0.8, confidence_level=0.9, method="wilson"
    )
    assert status == 0 and lines[0].startswith(f"pilot {example_csv}: precision 0.8467 (221 of 261")
    assert lines[1] == "planned with --metric-value 0.8 as given, not from the pilot"
    assert lines[2].startswith(f"{plan.relevant_n} relevant texts give a 90% wilson interval")


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (
            ["--truth", "human", "--pred", "modle", "--metric", "recall"],
            "`--pred` column 'modle' is not in",
        ),
        (
            ["--truth", "human", "--pred", "model", "--metric", "recall", "--group", "who"],
            "`--group` column 'who' is not in",
        ),
        (
            ["--truth", "human", "--pred", "score", "--metric", "recall"],
            "`--pred` column 'score' looks like scores",
        ),
        (
            ["--truth", "human", "--metric", "recall"],
            "`--pilot` needs `--pred COL` (the classifier labels).",
        ),
        (["--truth", "human", "--pred", "model"], "`--pilot` needs `--metric NAME`"),
        (
            ["--truth", "human", "--pred", "model", "--metric", "f1"],
            "argument --metric: invalid choice: 'f1'",
        ),
        (
            ["--truth", "human", "--pred", "model", "--metric", "recall", "--icc", "0.1"],
            "a nested plan needs both `--icc` and `--texts-per-person`",
        ),
    ],
)
def test_plan_from_a_pilot_errors_name_the_flag_and_column(capsys, example_csv, extra, match):
    status, out, err = run(capsys, "plan", "--pilot", str(example_csv), "--target", "0.05", *extra)
    assert status == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert match in err, err


def test_plan_pilot_errors_of_the_file_and_of_the_flags_without_it(capsys, tmp_path):
    lacking = tmp_path / "pilot.csv"
    pd.DataFrame({"human": [1, 0, 1], "person": ["a", "b", "c"]}).to_csv(lacking, index=False)
    argv = ["plan", "--target", "0.05", "--truth", "human", "--pred", "model", "--metric", "recall"]
    for pilot, match in [
        (
            lacking,
            f"`--pred` column 'model' is not in {lacking}; its columns are ['human', 'person']",
        ),
        (tmp_path / "nope.csv", "`--pilot` file "),
    ]:
        status, out, err = run(capsys, *argv, "--pilot", str(pilot))
        assert status == 2 and out == "" and err.count("\n") == 1 and match in err, err
    status, out, err = run(capsys, *argv)  # pilot flags without --pilot
    assert status == 2 and "`--truth` reads a pilot file: it goes with `--pilot FILE`." in err
    status, out, err = run(capsys, "plan", "--target", "0.05")
    assert status == 2 and "give `--metric-value V`" in err and "`--pilot FILE`" in err


def test_plan_pilot_degenerate_cases_are_one_line_naming_the_flag_to_give(capsys, tmp_path):
    path = tmp_path / "pilot.csv"
    argv = ["plan", "--pilot", str(path), "--target", "0.05", "--truth", "h", "--pred", "m"]
    pd.DataFrame({"h": [1, 1, 1, 0], "m": [1, 1, 1, 0], "g": list("aabb")}).to_csv(
        path, index=False
    )
    status, out, err = run(capsys, *argv, "--metric", "recall", "--group", "g")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "the pilot's recall is 1 (3 of 3 relevant texts)" in err and "`--metric-value`" in err
    pd.DataFrame({"h": [1, 0, 1, 0], "m": [1, 0, 0, 1], "g": list("aabc")}).to_csv(
        path, index=False
    )
    status, out, err = run(capsys, *argv, "--metric", "recall", "--group", "g")
    assert status == 2 and out == "" and err.count("\n") == 1 and "give `--icc`" in err
    status, out, err = run(capsys, *argv, "--metric", "recall", "--group", "g", "--icc", "0.1")
    assert status == 0 and "ICC not estimable" in out.splitlines()[0]
    assert err.startswith("perfci: warning: icc is undefined") and err.count("\n") == 1


def test_validate_run_takes_the_path_of_a_suite_file(capsys, suite_workdir):
    suite = Path("validation/suites/t.toml")
    mine = suite_workdir / "studies" / "mine.toml"
    mine.parent.mkdir()
    mine.write_text(suite.read_text().replace('name = "t"', 'name = "mine"'))
    status, out, _ = run(capsys, "validate", "run", "studies/mine.toml", "--out", "res", "--json")
    assert status == 0 and json.loads(out)["suite"] == "mine"
    assert Path("res/mine.nc").is_file()
    status, out, err = run(capsys, "validate", "run", "studies/nope.toml", "--out", "res")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "suite 'studies/nope.toml' not found (known suites: ['mine'])" in err
    status, out, err = run(capsys, "validate", "run")
    assert status == 2 and "the path of a suite file (.toml)" in err


def test_progress_is_drawn_only_on_a_terminal_and_not_with_quiet(
    capsys, monkeypatch, suite_workdir
):
    import time

    from perfci.cli import commands, rendering

    def slow_interval(args):
        time.sleep(0.3)
        print("done")

    monkeypatch.setitem(commands.COMMANDS, "interval", slow_interval)
    monkeypatch.setattr(rendering, "ACTIVITY_DELAY", 0.05)
    argv = ["interval", "--successes", "1", "--trials", "2"]
    for terminal, quiet, drawn in [
        (True, [], True),
        (True, ["--quiet"], False),
        (False, [], False),
    ]:
        monkeypatch.setattr(rendering, "stderr_is_terminal", lambda t=terminal: t)
        status, out, err = run(capsys, *argv, *quiet)
        assert status == 0 and out == "done\n"  # the result is never mixed with progress
        assert ("\rperfci interval: working, 0 s" in err) is drawn, err
        assert err == "" or err.endswith("\r")  # the line is erased before the result
    # validate run draws its bar of cells instead, on a terminal only
    for terminal, drawn in [(True, True), (False, False)]:
        monkeypatch.setattr(rendering, "stderr_is_terminal", lambda t=terminal: t)
        status, out, err = run(capsys, "validate", "run", "t", "--out", "res")
        assert status == 0 and out == "wrote res/t.nc\n"
        assert ("2/2 cells" in err) is drawn and "working" not in err
