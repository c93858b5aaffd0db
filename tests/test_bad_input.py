"""The bad-input catalogue: every public entry point against every kind of bad input.

Each case must raise ValueError with a message naming the argument (in backticks where it
is one) and, for names, listing the valid ones; the CLI must print one line to stderr and
exit with status 2, without a traceback.
"""

import numpy as np
import pytest

import perfci as pc
from perfci.cli import main

Y = [1, 0, 1, 1, 0, 1]
P = [1, 0, 0, 1, 1, 1]
G = ["a", "a", "b", "b", "c", "c"]

CASES = [
    # labels to counts
    ("wrong lengths", pc.confusion, ([1, 0], [1, 0, 1]), {}, "`y_true` and `y_pred` must"),
    ("NaN label", pc.confusion, ([1, np.nan], [1, 0]), {}, "`y_true` contains missing"),
    ("empty input", pc.confusion, ([], []), {}, "`y_true` must not be empty"),
    ("unknown positive", pc.confusion, (Y, P), {"positive": "yes"}, "`positive` label 'yes'"),
    ("groups of wrong length", pc.confusion, (Y, P), {"groups": ["a"]}, "`groups` must have"),
    # metrics
    (
        "unknown metric",
        pc.compute_metric,
        ([1, 2, 3, 4], "auc"),
        {},
        r"`metric` must be one of \['accuracy', 'balanced_accuracy'",
    ),
    ("negative counts", pc.compute_metric, ([1, -2, 3, 4], "f1"), {}, "non-negative"),
    ("NaN counts", pc.compute_metric, ([1, np.nan, 3, 4], "f1"), {}, "`counts` must be finite"),
    # analytic intervals
    ("x > n", pc.proportion_ci, (11, 10), {}, "`x` must not exceed `n`"),
    ("n <= 0", pc.proportion_ci, (0, 0), {}, "`n` must be positive"),
    (
        "level outside (0, 1)",
        pc.proportion_ci,
        (1, 10),
        {"confidence_level": 1.2},
        "`confidence_level` must lie strictly between 0 and 1",
    ),
    (
        "unknown method",
        pc.proportion_ci,
        (1, 10),
        {"method": "exact"},
        r"`method` must be one of \['agresti_coull', 'agresti_coull_plus4'",
    ),
    (
        "non-integer n for exact coverage",
        pc.exact_coverage,
        ("wilson", 10.5, 0.5),
        {},
        "`n` must be positive integers",
    ),
    # nested
    (
        "one person with a df adjustment",
        pc.clustered_proportion_ci,
        ([3], [5]),
        {},
        "at least 2 persons",
    ),
    (
        "unknown design",
        pc.clustered_proportion_ci,
        ([3, 2], [5, 5]),
        {"design": "anova"},
        r"`design` must be one of \['cluster_robust', 'edge', 'icc', 'icc_weighted', 'persons'\]",
    ),
    (
        "unknown df adjustment",
        pc.clustered_proportion_ci,
        ([3, 2], [5, 5]),
        {"df_adjust": "satterthwaite"},
        r"`df_adjust` must be one of \['dean_pagano'",
    ),
    # bootstrap
    (
        "n_resamples < 1",
        pc.bootstrap_ci,
        ([5, 1], "proportion"),
        {"n_resamples": 0},
        "`n_resamples` must be a positive integer",
    ),
    ("non-integer counts", pc.bootstrap_ci, ([5.5, 1], "proportion"), {}, "whole numbers"),
    (
        "unknown scheme",
        pc.bootstrap_ci,
        ([5, 1], "proportion"),
        {"scheme": "twostage"},
        r"`scheme` must be one of \['cluster', 'hierarchical', 'iid'\]",
    ),
    (
        "undefined everywhere",
        pc.bootstrap_ci,
        ([0, 5, 0, 5], "recall"),
        {},
        "undefined in every resample",
    ),
    # everyday use
    (
        "non-binary labels for a binary metric",
        pc.metric_ci,
        (["a", "b", "c"], ["a", "b", "b"], "recall"),
        {},
        "`positive` must name the class",
    ),
    (
        "one person with a df adjustment",
        pc.metric_ci,
        (Y, P, "recall"),
        {"groups": ["a"] * 6},
        "at least 2 persons",
    ),
    (
        "unknown method",
        pc.metric_ci,
        (Y, P, "recall"),
        {"method": "magic"},
        r"`method` must be one of \[",
    ),
    ("report: by of wrong length", pc.report, (Y, P), {"by": ["x"]}, "`by` must have one"),
    (
        "compare: wrong lengths",
        pc.compare,
        (Y, P[:3], P, "recall"),
        {},
        "`pred_a` must have one label per text",
    ),
    (
        "plan: impossible half-width",
        pc.plan_sample_size,
        (0.9, 0.6),
        {},
        "`half_width` must lie strictly between 0 and 0.5",
    ),
    (
        "plan: level outside (0, 1)",
        pc.plan_sample_size,
        (0.9, 0.05),
        {"confidence_level": 0},
        "`confidence_level`",
    ),
    # inputs that once went wrong at the edges of the API (tests/test_catalogue.py
    # generates hundreds more)
    (
        "a cluster bootstrap of one person",
        pc.bootstrap_ci,
        ([[5, 1]], "proportion"),
        {"scheme": "cluster"},
        "`counts` must hold at least 2 persons with texts for scheme 'cluster'",
    ),
    (
        "pseudo_count=-1",
        pc.metric_ci,
        (Y, P, "f1"),
        {"pseudo_count": -1},
        "`pseudo_count` must be a non-negative integer or 'recommended'; got -1",
    ),
    (
        "rng='abc'",
        pc.bootstrap_ci,
        ([5, 1], "proportion"),
        {"rng": "abc"},
        "`rng` must be a numpy.random.Generator, a non-negative integer seed or None",
    ),
    (
        "a level list where one level is taken",
        pc.plan_sample_size,
        (0.9, 0.05),
        {"confidence_level": [0.9, 0.95]},
        "`confidence_level` must be a single number",
    ),
    ("a string for a number", pc.proportion_ci, ("3", 10), {}, "`x` must be real numbers"),
    ("True for a count", pc.proportion_ci, (True, 10), {}, "`x` must be real numbers"),
    (
        "n_resamples=True",
        pc.bootstrap_ci,
        ([5, 1], "proportion"),
        {"n_resamples": True},
        "`n_resamples` must be a positive integer",
    ),
    ("batch=0", pc.bootstrap_ci, ([5, 1], "proportion"), {"batch": 0}, "`batch` must be"),
    (
        "positive of a wrong type",
        pc.metric_ci,
        (Y, P, "recall"),
        {"positive": [1]},
        "`positive` must be a single label",
    ),
    (
        "report: metrics as a string",
        pc.report,
        (Y, P),
        {"metrics": "recall"},
        "`metrics` must be a list of metric names",
    ),
    (
        "report: a bad n_resamples is an error, not rows left out",
        pc.report,
        (Y, P),
        {"n_resamples": 0},
        "`n_resamples` must be a positive integer or 'recommended'",
    ),
    (
        "half_width_curves: n = 10.7 is not truncated to 10",
        pc.half_width_curves,
        ([10.7], [0.9]),
        {},
        "`n` must be positive integers",
    ),
    # Bayesian
    ("bayes: one person", pc.bayes.fit_proportion_counts, ([3], [5]), {}, "at least 2 persons"),
    (
        "bayes: unknown sampler",
        pc.bayes.fit_proportion_counts,
        ([3, 2], [5, 5]),
        {"sampler": "gibbs"},
        r"`sampler` must be one of \['auto', 'grid', 'nutpie', 'pymc'\]",
    ),
    (
        "bayes: x > n",
        pc.bayes.fit_proportion_counts,
        ([6, 2], [5, 5]),
        {},
        "must not exceed `trials`",
    ),
]


@pytest.mark.parametrize(
    ("case", "function", "args", "kwargs", "match"),
    CASES,
    ids=[f"{c[1].__name__}: {c[0]}" for c in CASES],
)
def test_python_entry_points(case, function, args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        function(*args, **kwargs)


@pytest.fixture
def files(tmp_path):
    good = tmp_path / "texts.csv"
    pc.load_example().to_csv(good, index=False)
    malformed = tmp_path / "bad.csv"
    malformed.write_text('human,model\n1,"0\n')
    pc.load_example().to_csv(tmp_path / "semicolons.csv", sep=";", index=False)
    return good, malformed, tmp_path


CLI_CASES = [
    (["interval", "--successes", "11", "--trials", "10"], "`--successes` must not exceed"),
    (
        ["interval", "--successes", "1", "--trials", "10", "--method", "x"],
        "argument --method: invalid choice: 'x'",
    ),
    (["coverage", "--method", "wald", "--n", "10", "--p", "1.5"], "`--p` must lie in"),
    (["bootstrap", "--cells", "1", "2", "3", "4", "--n-resamples", "0"], "`--n-resamples`"),
    (
        ["bootstrap", "--cells", "1", "2", "3", "4", "--metric", "auc"],
        "argument --metric: invalid choice: 'auc'",
    ),
    (["report", "{good}", "--truth", "nope", "--pred", "model"], "`--truth` column 'nope'"),
    (["report", "{bad}", "--truth", "human", "--pred", "model"], "could not be read"),
    (["report", "{dir}/none.csv", "--truth", "human", "--pred", "model"], "does not exist"),
    (
        ["report", "{dir}/semicolons.csv", "--truth", "human", "--pred", "model"],
        "the file looks delimited by ';': read it with `--sep ';'`.",
    ),
    (
        ["report", "{good}", "--truth", "human", "--pred", "model", "--sep", "ab"],
        "argument --sep: expected one character",
    ),
    (
        [
            "compare",
            "{good}",
            "--truth",
            "human",
            "--pred-a",
            "model",
            "--pred-b",
            "nope",
            "--metric",
            "recall",
        ],
        "`--pred-b` column 'nope'",
    ),
    (["plan", "--metric-value", "2", "--half-width", "0.05"], "`--metric-value` must lie"),
    (
        [
            "bayes",
            "{good}",
            "--truth",
            "human",
            "--pred",
            "model",
            "--group",
            "person",
            "--metric",
            "kappa",
        ],
        "argument --metric: invalid choice: 'kappa'",
    ),
    (["validate", "run", "no-such-suite"], "suite 'no-such-suite' not found"),
    (["validate", "report", "{dir}"], "holds no result files"),
]


@pytest.mark.parametrize(("argv", "match"), CLI_CASES)
def test_cli_one_line_status_2(capsys, files, argv, match):
    good, bad, folder = files
    argv = [a.format(good=good, bad=bad, dir=folder) for a in argv]
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert match in err


def test_cli_unwritable_output_path(capsys, suite_workdir):
    tmp_path = suite_workdir
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    status = main(["validate", "run", "t", "--out", str(blocked / "out"), "--quiet"])
    _, err = capsys.readouterr()
    assert status == 2 and err.count("\n") == 1 and err.startswith("perfci: error:")
