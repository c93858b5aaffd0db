"""Edges, round 6: one form for every command-line error, NaN (not an error) for a metric
undefined for the labels, and the LaTeX and Markdown a text from data could still change.

Each test failed before its fix: a subcommand's own usage errors began
"perfci bootstrap: error:" where every other error begins "perfci: error:";
:func:`perfci.metric_ci` raised for an undefined kappa where :func:`perfci.compute_metric`
gives NaN; LaTeX printed ``--`` as an en dash and two backticks as a quote, and Markdown
read ``$x$`` as math; resume kept hand-edited scores whose counts add up, and a fresh run
made 0600 cell files 0644."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

import perfci as pc
from perfci.publishing.tables import latex_text, markdown_text


@pytest.mark.parametrize(
    "argv",
    [
        ("bootstrap", "--n-resamples", "x"),
        ("report", "data.csv"),  # --truth and --pred missing
        ("interval", "--method", "nope", "3", "10"),
        ("validate", "run"),
    ],
)
def test_every_usage_error_reads_perfci_error(cli, one_line_error, argv):
    status, _, err = cli(*argv)
    one_line_error(status, err)


@pytest.mark.parametrize(
    ("y_true", "y_pred", "metric", "reason"),
    [
        ([1] * 20, [1] * 20, "kappa", "chance agreement is 1"),
        ([1] * 20, [1] * 20, "mcc", "a row or column of the confusion matrix is empty"),
        ([0] * 20, [0, 1] * 10, "recall", r"no reference positives \(tp \+ fn = 0\)"),
        ([0, 1] * 10, [0] * 20, "precision", r"no classifier positives"),
    ],
)
def test_metric_ci_of_an_undefined_metric_is_nan_with_the_reason(y_true, y_pred, metric, reason):
    with pytest.warns(pc.UndefinedMetricWarning, match=f"^{metric} is undefined: .*{reason}"):
        ci = pc.metric_ci(y_true, y_pred, metric)
    assert math.isnan(ci.estimate) and math.isnan(ci.low) and math.isnan(ci.high)
    # kappa and MCC are about every text; recall and precision here have none relevant
    assert ci.method == "undefined"
    assert ci.relevant_n == (20 if metric in ("kappa", "mcc") else 0)
    assert ci.to_frame()["low"].isna().all()


def test_nested_undefined_metric_is_nan_and_one_person_still_an_error():
    groups = np.repeat(np.arange(5), 4)
    with pytest.warns(pc.UndefinedMetricWarning, match="no reference positives"):
        ci = pc.metric_ci([0] * 20, [0] * 20, "recall", groups=groups)
    assert math.isnan(ci.low) and ci.persons == 0 and ci.relevant_n == 0
    one_positive = [1] + [0] * 19  # defined, but on one person: nothing about persons
    with pytest.raises(ValueError, match="at least 2 persons"):
        pc.metric_ci(one_positive, [0] * 20, "recall", groups=groups)


def test_metric_ci_counts_of_an_undefined_metric_is_nan():
    with pytest.warns(pc.UndefinedMetricWarning, match="no classifier positives"):
        ci = pc.metric_ci_counts([0, 0, 3, 7], "precision")
    assert math.isnan(ci.estimate) and ci.relevant_n == 0


def test_a_report_still_names_the_undefined_metric_it_left_out():
    with pytest.warns(pc.UndefinedMetricWarning, match="left out of the report: kappa"):
        frame = pc.report([1] * 20, [1] * 20, metrics=["recall", "kappa"])
    assert list(frame["metric"]) == ["recall"]


@pytest.mark.parametrize(
    ("text", "latex"),
    [
        ("a--b", "a-{}-b"),
        ("a---b", "a-{}-{}-b"),
        ("``q''", r"\textasciigrave{}\textasciigrave{}q'{}'"),
        ("it's", "it's"),
        ("a-b", "a-b"),
        ("!`", r"!\textasciigrave{}"),
    ],
)
def test_latex_prints_dashes_and_quotes_as_typed(text, latex):
    assert latex_text(text) == latex


def test_latex_keeps_its_own_en_dash():
    assert latex_text("0.8–0.9") == "0.8--0.9"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("$x$", r"\$x\$"),
        ("~~gone~~", r"\~\~gone\~\~"),
        ("a_b", "a_b"),
        ("[0.1, 0.2]", "[0.1, 0.2]"),
    ],
)
def test_markdown_starts_no_math_or_strikethrough(text, shown):
    assert markdown_text(text) == shown


def _tiny_run(tmp_path, cli, analytic_suite):
    suite = tmp_path / "tiny.toml"
    suite.write_text(analytic_suite("tiny-round6", seed=6, n=(10,), p=(0.6, 0.8)))
    out = tmp_path / "out"
    status, _, err = cli("validate", "run", suite, "--out", out, "--quiet")
    assert status == 0, err
    return suite, out, out / "tiny-round6.cells"


@pytest.mark.parametrize(
    "edit",
    [
        [1, 0, 0, 0.2, 1, 0],  # one valid replication of 20, where all are defined
        [0, 0, 0, 0, 0, 0],  # none
        [19, 1, 0, 0.0, 20, 0],  # zero width, 20 valid Wilson intervals
    ],
    ids=["one-valid", "none-valid", "zero-width"],
)
def test_resume_refuses_scores_edited_after_the_run_wrote_them(
    tmp_path, cli, one_line_error, analytic_suite, edit
):
    """Counts that add up, but that no run computed: the digest written with them says so."""
    from perfci.harness.storage import CELL_IDENTITY_MARK

    suite, out, cells = _tiny_run(tmp_path, cli, analytic_suite)
    cell = cells / "n-10_p-0.8.npy"
    raw = cell.read_bytes()
    start = raw.index(CELL_IDENTITY_MARK)
    scores = np.load(cell)
    scores[0] = edit
    buffer = io.BytesIO()
    np.save(buffer, scores)
    cell.write_bytes(buffer.getvalue() + raw[start:])
    status, _, err = cli("validate", "run", suite, "--out", out, "--resume", "--quiet")
    one_line_error(status, err)
    assert "n-10_p-0.8.npy cannot be resumed: its scores are not those the run wrote" in err


def test_a_fresh_run_keeps_the_modes_of_the_cell_files_it_replaces(tmp_path, cli, analytic_suite):
    suite, out, cells = _tiny_run(tmp_path, cli, analytic_suite)
    for path in cells.iterdir():
        path.chmod(0o600)
    status, _, err = cli("validate", "run", suite, "--out", out, "--quiet")
    assert status == 0, err
    modes = {p.name: p.stat().st_mode & 0o777 for p in cells.iterdir()}
    assert modes == {n: 0o600 for n in ("fingerprint.txt", "n-10_p-0.6.npy", "n-10_p-0.8.npy")}


def test_a_report_of_many_subgroups_says_each_reason_once_and_counts_the_rows():
    groups = np.repeat([f"g{i}" for i in range(10)], 6)
    y_true = np.zeros(60, dtype=int)  # no reference positives in any subgroup
    y_pred = np.tile([0, 1], 30)
    with pytest.warns(pc.UndefinedMetricWarning) as caught:
        pc.report(y_true, y_pred, metrics=["recall", "specificity"], by=groups)
    [message] = [str(w.message) for w in caught if "left out" in str(w.message)]
    assert "11 rows:" in message and "and 6 more" in message and "\n" not in message  # with "all"
    assert message.count("no reference positives") == 1


def test_exact_coverage_refuses_the_pseudo_counts_the_bootstrap_refuses():
    with pytest.raises(ValueError, match=r"at most 1e\+06 \(a larger prior swamps any data\)"):
        pc.exact_coverage("pseudo_percentile_1000001", n=10, p=0.5)
    # a sum of probabilities is never reported above 1 (it was 1.0000000000000007)
    assert pc.exact_coverage("pseudo_percentile_1000000", n=10, p=0.5) == 1.0


def test_population_persons_is_a_whole_number_in_the_library_too():
    with pytest.raises(ValueError, match="`population_persons` must be a whole number"):
        pc.bayes.fit_proportion_counts(
            [3, 4, 5], [5, 5, 6], sampler="grid", population_persons=12.5
        )


def test_a_fresh_run_keeps_a_users_file_in_the_cells_folder(tmp_path, cli, analytic_suite):
    """Only cells a run wrote are removed by a fresh run, this run's and earlier ones'."""
    suite, out, cells = _tiny_run(tmp_path, cli, analytic_suite)
    np.save(cells / "backup.npy", np.arange(3))  # the user's, no cell identity
    stale = cells / "n-99_p-0.5.npy"  # a cell of an earlier grid
    stale.write_bytes((cells / "n-10_p-0.6.npy").read_bytes())
    status, _, err = cli("validate", "run", suite, "--out", out, "--quiet")
    assert status == 0, err
    assert np.load(cells / "backup.npy").tolist() == [0, 1, 2] and not stale.exists()


def test_run_suite_refuses_an_empty_out(tmp_path, monkeypatch, analytic_suite):
    from perfci import harness

    path = tmp_path / "tiny.toml"
    path.write_text(analytic_suite("tiny-empty", seed=1))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="`out` is empty"):
        harness.run_suite(harness.load_suite(path), "smoke", "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.toml"]
