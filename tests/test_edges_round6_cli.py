"""Edges, round 6 (the command line): flags that did nothing, numbers that were not checked,
and messages that contradicted themselves or buried what they said.

Each test failed before its fix: a Parquet file's columns named 0, 1 were "not in" the
file whose columns were ['0', '1']; a stray ``yes`` among 0/1 labels turned the report
into per-class rows without a word; ``--target``, ``--target-weight``, ``--bayes-sampler``
and ``compare --adjust`` were ignored without their partner flags, as were a SUITE and the
flags of another action given to ``perfci validate``; ``--population-persons 12.5`` was
taken; ``coverage`` and ``plan`` took a pseudo count ``bootstrap`` refuses; a plan whose
interval almost never covers gave no warning; a suite's huge ``pseudo_count`` was refused
mid-run without the suite or its key; one broken suite file hid every suite from
``validate list``."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import perfci as pc
from perfci.planning import PlanCoverageWarning


def _texts(n: int = 60, seed: int = 3) -> pd.DataFrame:
    """Labelled texts like the probe's d.csv: truth, two classifiers, persons, a weight."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n)
    pred = np.where(rng.random(n) < 0.8, truth, 1 - truth)
    return pd.DataFrame(
        {
            "truth": truth,
            "pred": pred,
            "pred2": np.where(rng.random(n) < 0.6, truth, 1 - truth),
            "person": np.arange(n) % 10,
            "w": rng.uniform(1, 2, n).round(3),
        }
    )


@pytest.fixture
def texts_csv(tmp_path):
    path = tmp_path / "d.csv"
    _texts().to_csv(path, index=False)
    return path


# ------------------------------------------------ C5. Parquet columns named by numbers


def test_parquet_columns_named_by_numbers_are_found_by_their_text(cli, one_line_error, tmp_path):
    frame = _texts()[["truth", "pred", "person"]]
    frame.columns = [0, 1, 2]  # as pandas writes a frame without column names
    path = tmp_path / "intcols.parquet"
    frame.to_parquet(path)
    assert list(pd.read_parquet(path).columns) == [0, 1, 2]
    status, out, err = cli("report", path, "--truth", 0, "--pred", 1, "--metrics", "recall")
    assert status == 0 and err == "", err
    expected = pc.metric_ci(frame[0], frame[1], "recall")
    assert f"{expected.estimate:.3f}" in out
    status, _, err = cli("report", path, "--truth", 0, "--pred", 1, "--group", 2, "--quiet")
    assert status == 0, err
    status, _, err = cli("report", path, "--truth", 0, "--pred", 7)
    one_line_error(status, err)
    assert "`--pred` column '7' is not in" in err and "['0', '1', '2']" in err


# ------------------------------------------------ C7. a stray text among numeric codes


def test_report_warns_of_a_stray_text_among_numeric_codes(cli, tmp_path):
    frame = _texts().astype({"truth": object})
    frame.loc[3, "truth"] = "yes"  # row 4 of the file, counted from 1 after the header
    path = tmp_path / "truthyes.csv"
    frame.to_csv(path, index=False)
    status, out, err = cli(
        "report", path, "--truth", "truth", "--pred", "pred", "--metrics", "recall"
    )
    assert status == 0
    assert "yes" in out  # still reported, one class at a time
    assert err.startswith("perfci: warning: ") and err.count("\n") == 1, err
    for words in (
        "`--truth` column 'truth'",
        "mixes numeric codes with the text 'yes'",
        "in 1 text of",
        "the first in row 4",
        "one-vs-rest",
        "`--positive`",
    ):
        assert words in err, (words, err)
    # a binary report asked for, or labels that are all codes or all texts: no warning
    argv = ("report", path, "--truth", "truth", "--pred", "pred", "--metrics", "recall")
    status, _, err = cli(*argv, "--positive", "1")
    assert status == 0 and err == "", err
    names = np.array(["a", "b", "c"])
    shifted = (np.arange(60) + (np.arange(60) % 7 == 0)) % 3
    classes = frame.assign(truth=names[np.arange(60) % 3], pred=names[shifted])
    classes.to_csv(path, index=False)
    status, _, err = cli(*argv)
    assert status == 0 and err == "", err


# ------------------------------------------------ C15, C16. a flag without its partner


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (("--target", "X.csv"), "`--target` is poststratified .*: give `--covariates`"),
        (("--target-weight", "w"), "`--target-weight` names .*: give `--target`"),
        (("--covariates", "w", "--target-weight", "w", "--html", "r.html"), "give `--target`"),
        (("--bayes-sampler", "grid"), "`--bayes-sampler` .* it needs `--bayes`"),
    ],
)
def test_report_refuses_a_flag_without_its_partner(cli, one_line_error, texts_csv, flags, words):
    status, out, err = cli("report", texts_csv, "--truth", "truth", "--pred", "pred", *flags)
    one_line_error(status, err)
    assert out == "" and re.search(words, err), err


def test_report_bayes_sampler_with_bayes_still_runs(cli, texts_csv):
    argv = ("report", texts_csv, "--truth", "truth", "--pred", "pred", "--metrics", "recall")
    status, out, err = cli(*argv, "--bayes", "--bayes-sampler", "grid", "--seed", "1")
    assert status == 0 and "bayes" in out, err


def test_compare_refuses_adjust_without_pred(cli, one_line_error, texts_csv):
    argv = ("compare", texts_csv, "--truth", "truth", "--metric", "recall")
    status, out, err = cli(*argv, "--pred-a", "pred", "--pred-b", "pred2", "--adjust", "holm")
    one_line_error(status, err)
    assert out == "" and "`--adjust`" in err and "it needs `--pred`" in err
    for adjust in ((), ("--adjust", "holm")):  # with --pred it is taken (max_t by default)
        status, out, err = cli(*argv, "--pred", "pred", "pred2", *adjust)
        assert status == 0 and "p_adjusted" in out, err


# ------------------------------------------------ C32. validate: what an action takes


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("list", "tiny.toml"), "`validate list` takes no SUITE or DIR"),
        (("list", "--out", "X"), "`--out` is an option of `validate run` and `validate report`"),
        (("report", "r0", "--resume"), "`--resume` is an option of `validate run`, not of"),
        (("report", "r0", "--scale", "full"), "`--scale` is an option of `validate run`"),
        (("report", "r0", "--workers", "1"), "`--workers` is an option of `validate run`"),
        (("run", "tiny.toml", "--out", "X", "--figures", "Y"), "`--figures` is an option of"),
        (("run", "tiny.toml", "--out", "X", "--formats", "svg"), "`--formats` is an option of"),
        (("run", "tiny.toml", "--out", "X", "--x", "n"), "`--x` is an option of `validate report`"),
    ],
)
def test_validate_refuses_what_an_action_does_nothing_with(
    cli, one_line_error, suite_workdir, argv, words
):
    status, out, err = cli("validate", *argv)
    one_line_error(status, err)
    assert out == "" and words in err, err
    assert not (suite_workdir / "X").exists()


def test_validate_run_and_report_keep_their_defaults(cli, suite_workdir):
    status, out, err = cli("validate", "run", "t", "--quiet")
    assert status == 0, err
    assert (suite_workdir / "validation" / "results" / "t.nc").is_file()
    status, out, err = cli("validate", "report", "--formats", "svg")
    assert status == 0, err
    assert (suite_workdir / "validation" / "results" / "figures").is_dir()
    status, _, err = cli("validate", "run", "t", "--workers", "1", "--scheduler", "tcp://x:1")
    assert status == 2 and "not both" in err


# ------------------------------------------------ C22. a count of persons is whole


def test_bayes_refuses_a_fractional_number_of_persons(cli, one_line_error, texts_csv):
    argv = ("bayes", texts_csv, "--truth", "truth", "--pred", "pred", "--group", "person")
    argv += ("--metric", "recall", "--sampler", "grid", "--seed", "1", "--json")
    status, out, err = cli(*argv, "--population-persons", "12.5")
    one_line_error(status, err)
    assert out == "" and "--population-persons" in err and "whole number" in err
    for whole in ("12", "1e3", "inf"):
        status, _, err = cli(*argv, "--population-persons", whole)
        assert status == 0, (whole, err)


# ------------------------------------------------ C27. the bootstrap's limit on lambda


def test_coverage_and_plan_refuse_a_pseudo_count_bootstrap_refuses(cli, one_line_error):
    limit = "must be at most 1e+06 (a larger prior swamps any data)"
    status, _, err = cli("bootstrap", "--successes", 5, "--trials", 10, "--pseudo-count", 10**12)
    one_line_error(status, err)
    assert limit in err
    status, _, err = cli(
        "coverage", "--method", "pseudo_percentile_1000000000000", "--n", 10, "--p", 0.5
    )
    one_line_error(status, err)
    assert "`--method` 'pseudo_percentile_1000000000000'" in err and limit in err
    plan = ("plan", "--metric-value", 0.8, "--half-width", 0.05, "--method", "percentile")
    status, _, err = cli(*plan, "--pseudo-count", 1000001)
    one_line_error(status, err)
    assert "`--pseudo-count` " + limit in err
    with pytest.raises(ValueError, match=r"^`pseudo_count` must be at most 1e\+06"):
        pc.plan_sample_size(0.8, 0.05, method="percentile", pseudo_count=1000001)
    with pytest.raises(ValueError, match="`pseudo_count` must be a non-negative integer"):
        pc.plan_sample_size(0.8, 0.05, method="percentile", pseudo_count=1.0)
    status, _, err = cli("coverage", "--method", "pseudo_percentile_1000000", "--n", 10, "--p", 0.5)
    assert status == 0, err


# ------------------------------------------------ C28. a plan whose interval rarely covers


@pytest.mark.parametrize(
    ("pseudo_count", "n"),
    [(50, 219), (1000, 1)],
)
def test_plan_warns_when_the_planned_interval_rarely_covers(pseudo_count, n):
    with pytest.warns(PlanCoverageWarning, match="pseudo count .* pulls every interval") as got:
        plan = pc.plan_sample_size(0.8, 0.05, method="percentile", pseudo_count=pseudo_count)
    assert plan.relevant_n == n
    coverage = float(pc.exact_coverage(plan.method, n, 0.8))
    assert coverage < 0.9 and f"exact coverage {coverage:.4f}, below 0.9" in str(got[0].message)


def test_plan_of_an_interval_that_covers_gives_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in pc.ANALYTIC_METHODS:
            pc.plan_sample_size(0.9, 0.05, method=method)
        plan = pc.plan_sample_size(
            0.9, 0.05, confidence_level=0.9, method="percentile", pseudo_count=1
        )
    assert plan.relevant_n == 98


def test_plan_command_prints_the_coverage_warning(cli):
    argv = ("plan", "--metric-value", 0.8, "--half-width", 0.05, "--method", "percentile")
    status, out, err = cli(*argv, "--pseudo-count", 50)
    assert status == 0 and out.startswith("219 relevant texts")
    assert err.startswith("perfci: warning: the planned 95% pseudo_percentile_50 interval")
    assert err.count("\n") == 1 and "exact coverage 0.0034" in err and "`--pseudo-count`" in err


# ------------------------------------------------ S9. a suite's pseudo count


def test_suite_pseudo_count_above_the_limit_names_the_suite_and_key(cli, one_line_error, tmp_path):
    suite = tmp_path / "huge.toml"
    suite.write_text(
        'name = "huge"\nseed = 1\n[population]\nkind = "bernoulli"\n[grid]\nn = [10]\n'
        "p = [0.8]\n[scales.smoke]\nreplications = 20\nresamples = 50\n[[methods]]\n"
        'name = "p"\nfamily = "bootstrap"\ninterval = "percentile"\n'
        "pseudo_count = 1000000000000\n"
    )
    expected = (
        "suite huge.toml: `methods[0].pseudo_count` must be at most 1e+06 (a larger prior "
        "swamps any data); got 1000000000000."
    )
    with pytest.raises(ValueError) as caught:
        pc.harness.load_suite(suite)
    assert str(caught.value) == expected
    status, _, err = cli("validate", "run", suite, "--out", tmp_path / "out", "--quiet")
    one_line_error(status, err)
    assert err == f"perfci: error: {expected}\n"
    assert not (tmp_path / "out").exists()


# ------------------------------------------------ V1. one broken suite hides none


def test_validate_list_shows_a_broken_suite_beside_the_others(cli, suite_workdir):
    import json

    suites = suite_workdir / "validation" / "suites"
    (suites / "broken.toml").write_text('name = "broken"\n')
    (suites / "nottoml.toml").write_text("x = [\n")
    status, out, err = cli("validate", "list")
    assert status == 0 and err == "", err
    lines = out.splitlines()
    assert lines[0].startswith("suites in ") and len(lines) == 4, lines
    assert lines[1].startswith("broken.toml: cannot be read: `seed` is missing")
    assert lines[2].startswith("nottoml.toml: cannot be read: not valid TOML")
    assert lines[3] == "t: d (scales: smoke)"
    status, out, err = cli("validate", "list", "--json")
    assert status == 0, err
    listed = {entry["name"]: entry for entry in json.loads(out)}
    assert "error" not in listed["t"] and listed["t"]["scales"] == ["smoke"]
    assert listed["broken"]["error"].startswith("`seed` is missing")
    assert listed["broken"]["description"] is None and listed["broken"]["scales"] == []
