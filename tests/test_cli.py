import json
import subprocess
import sys

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
    records = json.loads(out)
    assert [r["metric"] for r in records] == list(pc.BINARY_METRICS)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["interval", "--successes", "11", "--trials", "10"], "`x` must not exceed `n`"),
        (
            ["interval", "--successes", "1", "--trials", "10", "--method", "exact"],
            "`method` must be one of",
        ),
        (
            ["interval", "--successes", "1", "--trials", "10", "--confidence-level", "95"],
            "`confidence_level` must lie strictly between 0 and 1",
        ),
        (["interval", "--successes", "x", "--trials", "10"], "argument --successes"),
        (["interval", "--trials", "10"], "the following arguments are required: --successes"),
        (["coverage", "--method", "wald", "--n", "0", "--p", "0.5"], "`n` must be positive"),
        (["coverage", "--method", "wald", "--n", "10", "--p", "2"], "`p` must lie in"),
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
    assert proc.stderr.strip() == "perfci: error: `x` must not exceed `n`."


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
    assert err.startswith("perfci: warning: recall was undefined in") and err.count("\n") == 1


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
            "`n_resamples` must be a positive integer",
        ),
        (
            ["bootstrap", "--cells", "1", "2", "3", "4", "--n-resamples", "lots"],
            "expected a positive integer or 'exact'",
        ),
        (
            ["bootstrap", "--cells", "1", "2", "3", "4", "--metric", "auc"],
            "`metric` must be one of",
        ),
        (["bootstrap", "--cells", "1", "-2", "3", "4"], "`counts` must be non-negative"),
        (["bootstrap", "--cells", "1", "2", "3", "4", "--interval", "abc"], "invalid choice"),
    ],
)
def test_bootstrap_errors(capsys, argv, match):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert match in err
