"""The input contract for labels, and command-line errors in the user's words.

Every case ends in the exact counts or in one error naming the argument (or the flag and
column) and what is wrong; none is a silent wrong count.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import perfci as pc
from perfci.cli import main
from perfci.counting import normalize_labels

TRUTH = [1, 0, 1, 1]
# the same classifier labels, [1, 0, 1, 0], coded every way a 0/1 column arrives
CODINGS = {
    "ints": [1, 0, 1, 0],
    "floats": [1.0, 0.0, 1.0, 0.0],
    "booleans": [True, False, True, False],
    "numpy booleans": np.array([True, False, True, False]),
    "float Series": pd.Series([1.0, 0.0, 1.0, 0.0]),
    "strings": ["1", "0", "1", "0"],
    "float strings": ["1.0", "0.0", "1.0", "0.0"],
    "lower-case words": ["true", "false", "true", "false"],
    "words": ["True", "False", "True", "False"],
    "mixed words": ["TRUE", "false", "True", "False"],
}


# --- one binary code, whatever its type ------------------------------------------------


@pytest.mark.parametrize("coding", CODINGS, ids=list(CODINGS))
def test_a_binary_code_is_one_code_in_any_type(coding):
    got = pc.confusion(TRUTH, CODINGS[coding])
    np.testing.assert_array_equal(got.counts, [2, 0, 1, 1])
    assert got.positive == 1 and got.classes is None


@pytest.mark.parametrize("coding", CODINGS, ids=list(CODINGS))
def test_a_binary_code_is_one_code_in_the_reference_too(coding):
    truth = {"booleans": [True, False, True, True], "strings": ["1", "0", "1", "1"]}
    for t in truth.values():
        np.testing.assert_array_equal(pc.confusion(t, CODINGS[coding]).counts, [2, 0, 1, 1])


def test_text_codes_with_an_integer_truth_count_every_reference_positive():
    # the example of the issue: [0, 2, 0, 2] lost every reference positive
    got = pc.confusion([1, 0, 1, 1], ["1", "0", "1", "0"], positive="1")
    np.testing.assert_array_equal(got.counts, [2, 0, 1, 1])
    assert got.positive == 1


@pytest.mark.parametrize("positive", [1, 1.0, True, "1", "1.0", "true", "True", np.int64(1)])
def test_the_positive_label_of_a_code_may_be_given_in_any_of_its_types(positive):
    got = pc.confusion(TRUTH, ["1", "0", "1", "0"], positive=positive)
    np.testing.assert_array_equal(got.counts, [2, 0, 1, 1])


def test_zero_may_be_the_positive_label_of_a_code():
    got = pc.confusion(TRUTH, [1.0, 0.0, 1.0, 0.0], positive="0")
    np.testing.assert_array_equal(got.counts, [1, 1, 0, 2])
    assert got.positive == 0


def test_a_code_names_both_labels_even_when_one_never_occurs():
    np.testing.assert_array_equal(pc.confusion([0, 0, 0], ["0", "0", "0"]).counts, [0, 0, 0, 3])


def test_explicit_classes_of_a_code_are_recoded_too():
    got = pc.confusion([1, 0, 1], [True, False, False], labels=["0", "1"])
    np.testing.assert_array_equal(got.classes, [0, 1])
    np.testing.assert_array_equal(got.counts, [[1, 1, 0, 1], [1, 0, 1, 1]])


def test_report_of_mixed_codings_is_the_binary_report():
    truth = np.array([1, 0, 1, 1, 0, 0, 1, 0] * 8)
    pred = np.array([1, 0, 0, 1, 1, 0, 1, 0] * 8)
    expected = pc.report(truth, pred, rng=1)
    for coded in (pred.astype(float), pred.astype(bool), pred.astype(str)):
        table = pc.report(truth, coded, rng=1)
        assert "class" not in table.columns
        assert table["metric"].tolist() == list(pc.BINARY_METRICS)
        pd.testing.assert_frame_equal(table, expected)


def test_metric_ci_and_compare_read_labels_by_the_same_contract():
    truth = np.array([1, 0, 1, 1, 0, 0, 1, 0] * 8)
    a = np.array([1, 0, 0, 1, 1, 0, 1, 0] * 8)
    b = np.array([1, 1, 0, 1, 0, 0, 1, 0] * 8)
    ci = pc.metric_ci(truth, a.astype(str), "recall")
    ref_ci = pc.metric_ci(truth, a, "recall")
    assert (ci.estimate, ci.low, ci.high) == (ref_ci.estimate, ref_ci.low, ref_ci.high)
    ref = pc.compare(truth, a, b, "f1", rng=2)
    got = pc.compare(truth.astype(bool), a.astype(float), b.astype(str), "f1", rng=2)
    assert (got.difference, got.low, got.high) == (ref.difference, ref.low, ref.high)


# --- codings that can never match are refused, showing both ----------------------------


@pytest.mark.parametrize(
    ("y_true", "y_pred", "match"),
    [
        (
            [0, 1, 2, 1],
            ["0", "1", "2", "1"],
            "the labels mix numbers and text, which never match (1 is not '1'): `y_true` "
            "holds 0, 1, 2 (numbers); `y_pred` holds '0', '1', '2' (text); code them alike.",
        ),
        (
            [1, 0, 1],
            ["yes", "no", "yes"],
            "the labels mix numbers and text, which never match (1 is not '1'): `y_true` "
            "holds 0, 1 (numbers); `y_pred` holds 'no', 'yes' (text); code them alike.",
        ),
        (
            ["1", "0", "1"],
            ["yes", "no", "yes"],
            "`y_true` holds a binary code and `y_pred` labels that are not one: `y_true` "
            "holds '0', '1' (text); `y_pred` holds 'no', 'yes' (text); code both alike.",
        ),
        (
            ["yes", "no", "yes"],
            ["pos", "neg", "pos"],
            "`y_true` and `y_pred` have no label in common: `y_true` holds 'no', 'yes' "
            "(text); `y_pred` holds 'neg', 'pos' (text); code both alike.",
        ),
    ],
)
def test_codings_that_never_match_are_refused_showing_both(y_true, y_pred, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        pc.confusion(y_true, y_pred)


# --- near-misses of a label -------------------------------------------------------------


def test_near_misses_of_the_positive_label_are_refused_with_their_counts():
    truth = ["yes", "no", " yes", "Yes", "yes", "no"]
    pred = ["yes", "no", "yes", "yes", "Yes", "no"]
    match = (
        "labels that differ from the `positive` label 'yes' only in case or surrounding "
        "whitespace would count as negatives: ' yes' (1 text in `y_true`), 'Yes' (1 text in "
        "`y_true`, 1 text in `y_pred`), beside 'yes' (2 texts in `y_true`, 3 texts in "
        "`y_pred`); recode them to one spelling."
    )
    with pytest.raises(ValueError, match=re.escape(match)):
        pc.confusion(truth, pred, positive="yes")
    with pytest.raises(ValueError, match="would count as negatives: ' yes'"):
        pc.report(truth, pred, positive="yes")


def test_near_misses_are_refused_without_a_positive_label_too():
    match = (
        "labels that differ only in case or surrounding whitespace would count as different "
        "labels: 'No' (1 text in `y_pred`), 'no' (1 text in `y_true`); recode them to one "
        "spelling."
    )
    with pytest.raises(ValueError, match=re.escape(match)):
        pc.confusion(["a", "no", "b"], ["a", "No", "b"])


def test_a_positive_label_that_only_reads_like_a_label_is_named():
    match = (
        "`positive` label 'yes' is not among the labels ['No', 'Yes']; 'Yes' reads like it "
        "but is not the same label."
    )
    with pytest.raises(ValueError, match=re.escape(match)):
        pc.confusion(["Yes", "No", "Yes"], ["Yes", "No", "No"], positive="yes")
    with pytest.raises(ValueError, match=re.escape("labels [1, 2]; 2 reads like it")):
        pc.confusion([1, 2, 1], [1, 2, 2], positive="2")


# --- missing values ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"y_true": [1, None, 0, np.nan, 1], "y_pred": [1, 0, 0, 1, 1]},
            "`y_true` contains missing values (NaN or None): 2 of 5, at positions 1 and 3; "
            "drop those texts or give them a label.",
        ),
        (
            {"y_true": [1] * 9, "y_pred": pd.Series([pd.NA] * 7 + [1, 0], dtype="Int64")},
            "`y_pred` contains missing values (NaN or None): 7 of 9, at positions 0, 1, 2, 3, "
            "4, ... (7 in all); drop those texts or give them a label.",
        ),
        (
            {"y_true": [1, 0, 1], "y_pred": [1, 0, 0], "groups": ["a", None, "b"]},
            "`groups` contains missing values (NaN or None): 1 of 3, at position 1;",
        ),
    ],
)
def test_missing_values_are_reported_with_their_count_and_positions(kwargs, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        pc.confusion(**kwargs)


def test_missing_values_in_a_batch_are_placed_by_data_set_and_text():
    truth = np.array([[1, 0, 1], [1, np.nan, 0]])
    with pytest.raises(ValueError, match=re.escape("1 of 6, at position (1, 1);")):
        pc.compare(truth, truth, truth, "f1")


def test_infinity_is_not_a_label():
    with pytest.raises(
        ValueError, match=re.escape("`y_pred` holds infinity, which is not a label, at position 0.")
    ):
        pc.confusion([1, 0, 1], [np.inf, 0, 1])


# --- scores are not labels --------------------------------------------------------------

SCORES = [0.91, 0.12, 0.55, 0.87, 0.3, 0.02, 0.7, 0.49]


@pytest.mark.parametrize("kind", [list, np.asarray, pd.Series, lambda v: [str(x) for x in v]])
def test_a_column_of_scores_is_refused_with_what_to_do(kind):
    match = (
        "`y_pred` looks like scores, not labels: 8 distinct numbers from 0.02 to 0.91, some "
        "not whole (e.g. 0.91). perfci counts labels: threshold the scores into labels first "
        "(e.g. 1 where the score is at least 0.5, else 0) and pass those."
    )
    with pytest.raises(ValueError, match=re.escape(match)):
        pc.confusion([1, 0, 1, 1, 0, 0, 1, 0], kind(SCORES))


def test_scores_are_refused_by_every_entry_point_naming_the_argument():
    truth = [1, 0, 1, 1, 0, 0, 1, 0]
    with pytest.raises(ValueError, match="`y_pred` looks like scores"):
        pc.metric_ci(truth, SCORES, "recall")
    with pytest.raises(ValueError, match="`y_pred` looks like scores"):
        pc.report(truth, SCORES)
    with pytest.raises(ValueError, match="`pred_b` looks like scores"):
        pc.compare(truth, truth, SCORES, "f1")


def test_a_negative_label_makes_any_other_label_an_error():
    match = (
        "`y_pred` holds labels that are neither the `positive` 'yes' nor the `negative` "
        "'no': 'maybe', at positions 1 and 2."
    )
    with pytest.raises(ValueError, match=re.escape(match)):
        normalize_labels(
            {"y_true": ["yes", "no", "no"], "y_pred": ["yes", "maybe", "maybe"]},
            positive="yes",
            negative="no",
        )


# --- the command line -------------------------------------------------------------------


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def refused(capsys, *argv):
    """Run the CLI and return its one error line, after checking status 2 and no output."""
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == "", (status, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


def write(path, text):
    path.write_text(text)
    return path


@pytest.fixture
def texts():
    rng = np.random.default_rng(12)
    truth = rng.integers(0, 2, 60)
    pred = np.where(rng.random(60) < 0.85, truth, 1 - truth)
    person = np.repeat(["NA", "p1", "p2", "p3", "p4", "p5"], 10)
    return pd.DataFrame({"human": truth, "model": pred, "person": person})


def test_cli_reads_a_code_in_two_types_as_one(capsys, tmp_path, texts):
    frame = texts.assign(model=texts["model"].astype(float), human_words=texts["human"] == 1)
    path = tmp_path / "texts.csv"
    frame.to_csv(path, index=False)  # model as 1.0/0.0, human_words as True/False
    ref = pc.report(texts["human"], texts["model"], rng=1).to_dict("records")
    for truth in ("human", "human_words"):
        status, out, _ = run(capsys, "report", path, "--truth", truth, "--pred", "model")
        assert status == 0
        status, out, _ = run(
            capsys, "report", path, "--truth", truth, "--pred", "model", "--seed", 1, "--json"
        )
        rows = json.loads(out)
        assert [r["metric"] for r in rows] == list(pc.BINARY_METRICS)
        assert [(r["estimate"], r["low"], r["high"]) for r in rows] == [
            (r["estimate"], r["low"], r["high"]) for r in ref
        ]


def test_cli_person_id_na_is_an_id(capsys, tmp_path, texts):
    path = tmp_path / "texts.csv"
    texts.to_csv(path, index=False)
    assert "NA" in path.read_text()
    argv = ["report", path, "--truth", "human", "--pred", "model", "--group", "person"]
    status, out, _ = run(capsys, *argv, "--seed", 1, "--json")
    assert status == 0
    recall = json.loads(out)[1]
    ref = pc.metric_ci(texts["human"], texts["model"], "recall", groups=texts["person"])
    assert recall["persons"] == ref.persons == 6
    assert (recall["low"], recall["high"]) == (ref.low, ref.high)


def test_cli_near_misses_of_the_positive_label_are_refused(capsys, tmp_path):
    path = write(
        tmp_path / "yes.csv",
        "human,model\nyes,yes\n yes,yes\nYes,no\nno,no\nyes,Yes\nno,yes\n",
    )
    err = refused(
        capsys, "report", path, "--truth", "human", "--pred", "model", "--positive", "yes"
    )
    assert err == (
        "perfci: error: labels that differ from the `--positive` label 'yes' only in case or "
        "surrounding whitespace would count as negatives: ' yes' (1 text in `--truth` column "
        "'human'), 'Yes' (1 text in `--truth` column 'human', 1 text in `--pred` column "
        "'model'), beside 'yes' (2 texts in `--truth` column 'human', 3 texts in `--pred` "
        "column 'model'); recode them to one spelling."
    )


@pytest.mark.parametrize(
    ("body", "flags", "match"),
    [
        (
            "human,model,person\n1,1,a\n0,,a\n1, ,b\n0,0,b\n1,,c\n",
            ["--truth", "human", "--pred", "model"],
            "`--pred` column 'model' has 3 empty cells, in rows 2, 3 and 5 of {file}; every "
            "text needs a value: fill them in or drop those rows.",
        ),
        (
            "human,model,person\n1,1,a\n0,0,\n1,1,b\n",
            ["--truth", "human", "--pred", "model", "--group", "person"],
            "`--group` column 'person' has 1 empty cell, in row 2 of {file};",
        ),
        (
            "human,model\n1,1\nNA,0\n0,0\nnull,1\n",
            ["--truth", "human", "--pred", "model"],
            "`--truth` column 'human' holds 'NA', 'null', which other software writes for a "
            "missing label, in rows 2 and 4 of {file}; only an empty cell is missing here: "
            "give those texts a label, or drop the rows.",
        ),
        (
            "human,model\n1,yes\n0,no\n",
            ["--truth", "human", "--pred", "model"],
            "`--truth` column 'human' holds a binary code and `--pred` column 'model' labels "
            "that are not one: `--truth` column 'human' holds '0', '1' (text); `--pred` column "
            "'model' holds 'no', 'yes' (text); code both alike.",
        ),
        (
            "human,score\n1,0.91\n0,0.12\n1,0.55\n1,0.87\n",
            ["--truth", "human", "--pred", "score"],
            "`--pred` column 'score' looks like scores, not labels: 4 distinct numbers from "
            "0.12 to 0.91, some not whole (e.g. 0.91). Give it as `--score score` for the ROC "
            "AUC, and/or add `--threshold T` to count a score of at least T as positive.",
        ),
        (
            "human,model\nyes,yes\nno,no\n",
            ["--truth", "human", "--pred", "model"],
            "`--positive` must name the positive label for binary labels ['no', 'yes'].",
        ),
        (
            "human,model\nyes,yes\nno,no\n",
            ["--truth", "human", "--pred", "model", "--positive", "Yes"],
            "`--positive` label 'Yes' is not among the labels ['no', 'yes']; 'yes' reads like "
            "it but is not the same label.",
        ),
        (
            "human,model\n1,1\n0,0\n",
            ["--truth", "human", "--pred", "model", "--positive", "yes"],
            "`--positive` label 'yes' is not among the labels [0, 1].",
        ),
        (
            "human,model\n1,1\n0,maybe\n",
            ["--truth", "human", "--pred", "model", "--positive", "1", "--negative", "0"],
            "`--pred` column 'model' holds labels that are neither the `--positive` '1' nor the "
            "`--negative` '0': 'maybe', at row 2.",
        ),
        ("human,model\n", ["--truth", "human", "--pred", "model"], "file {file!r} has no rows"),
        ("", ["--truth", "human", "--pred", "model"], "file {file!r} is empty;"),
        (
            "human,model\n1,1\n",
            ["--truth", "human", "--pred", "modle"],
            "`--pred` column 'modle' is not in {file}; its columns are ['human', 'model'].",
        ),
    ],
)
def test_cli_label_and_file_errors_name_the_flag_column_and_file(
    capsys, tmp_path, body, flags, match
):
    path = write(tmp_path / "texts.csv", body)
    err = refused(capsys, "report", path, *flags)
    assert err.startswith("perfci: error: ")
    assert match.format(file=str(path)) in err


def test_cli_header_only_file_is_not_blamed_on_the_positive_label(capsys, tmp_path):
    path = write(tmp_path / "header.csv", "human,model\n")
    err = refused(capsys, "report", path, "--truth", "human", "--pred", "model")
    assert err == (
        f"perfci: error: file {str(path)!r} has no rows, only a header (human, model); it "
        "needs one row per text."
    )
    assert "--positive" not in err


def test_cli_compare_names_its_columns(capsys, tmp_path):
    path = write(tmp_path / "texts.csv", "h,a,b\n1,1,1\n0,0,No\n1,1,no\n")
    err = refused(
        capsys, "compare", path, "--truth", "h", "--pred-a", "a", "--pred-b", "b", "--metric", "f1"
    )
    assert err.endswith(
        "'No' (1 text in `--pred-b` column 'b'), 'no' (1 text in `--pred-b` column 'b'); "
        "recode them to one spelling."
    )


def test_cli_folder_and_missing_file_are_named(capsys, tmp_path):
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    err = refused(capsys, "report", folder, "--truth", "h", "--pred", "m")
    assert (
        err
        == f"perfci: error: file {str(folder)!r} is a folder; give a .csv, .tsv or .parquet file."
    )
    err = refused(capsys, "report", tmp_path / "none.csv", "--truth", "h", "--pred", "m")
    assert err == f"perfci: error: file {str(tmp_path / 'none.csv')!r} does not exist."


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["bootstrap", "--cells", "1", "2", "3", "4", "--seed", "-1"],
            "perfci: error: argument --seed: expected a non-negative integer, got '-1'",
        ),
        (
            ["interval", "--successes", "11", "--trials", "10"],
            "perfci: error: `--successes` must not exceed `--trials`.",
        ),
        (
            ["interval", "--successes", "1", "--trials", "0"],
            "perfci: error: `--trials` must be positive.",
        ),
        (
            ["bootstrap", "--successes", "-1", "--trials", "4"],
            "perfci: error: `--successes` must be non-negative; got -1.",
        ),
        (
            ["bootstrap", "--cells", "1", "2", "3", "4", "--pseudo-count", "-1"],
            "perfci: error: `--pseudo-count`",
        ),
        (
            ["coverage", "--method", "wald", "--n", "10", "--p", "1.5"],
            "perfci: error: `--p` must lie in",
        ),
        (
            ["plan", "--metric-value", "0.9", "--half-width", "0.7"],
            "perfci: error: `--half-width` must lie",
        ),
    ],
)
def test_cli_errors_name_the_flag_the_user_typed(capsys, argv, line):
    assert refused(capsys, *argv).startswith(line)


def test_cli_warnings_name_the_flag_and_column(capsys, tmp_path):
    path = write(tmp_path / "texts.csv", "h,m,who\n1,1,a\n0,0,a\n1,0,b\n1,1,b\n")
    status, _, err = run(capsys, "report", path, "--truth", "h", "--pred", "m", "--group", "who")
    assert status == 0
    assert "`--group` column 'who' must give at least 2 persons" in err
    assert "`groups`" not in err


@pytest.mark.parametrize(
    ("error", "status", "line"),
    [
        (
            RuntimeError("something broke\nsecond line"),
            1,
            "perfci: internal error: RuntimeError: something broke (run again with --debug to "
            "see the traceback)",
        ),
        (KeyError("cells"), 1, "perfci: internal error: KeyError: 'cells' (run again with"),
        (KeyboardInterrupt(), 130, "perfci: interrupted"),
        (
            MemoryError("Unable to allocate 3.01 EiB"),
            2,
            "perfci: error: not enough memory for this request (Unable to allocate 3.01 EiB); "
            "ask for less",
        ),
    ],
)
def test_cli_unexpected_errors_are_one_line_with_their_status(
    capsys, monkeypatch, error, status, line
):
    from perfci.cli import commands

    def broken(args):
        raise error

    monkeypatch.setitem(commands.COMMANDS, "demo", broken)
    got, out, err = run(capsys, "demo")
    assert got == status and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err and err.startswith(line), err


def test_cli_debug_shows_the_traceback_of_an_internal_error(capsys, monkeypatch):
    from perfci.cli import commands

    def broken(args):
        raise RuntimeError("something broke")

    monkeypatch.setitem(commands.COMMANDS, "demo", broken)
    status, _, err = run(capsys, "--debug", "demo")
    assert status == 1
    assert err.startswith("Traceback") and err.endswith("RuntimeError: something broke\n")


def _entry_point():
    return str(Path(sys.executable).with_name("perfci"))


def test_installed_entry_point_refuses_near_misses_in_one_line(tmp_path):
    path = write(tmp_path / "yes.csv", "human,model\nyes,yes\nYes,no\nno,no\n")
    proc = subprocess.run(
        [_entry_point(), "report", str(path), "--truth", "human", "--pred", "model"]
        + ["--positive", "yes"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        "perfci: error: labels that differ from the `--positive` label 'yes' only in case or "
        "surrounding whitespace would count as negatives: 'Yes' (1 text in `--truth` column "
        "'human'), beside 'yes' (1 text in `--truth` column 'human', 1 text in `--pred` "
        "column 'model'); recode them to one spelling.\n"
    )


def test_installed_entry_point_names_the_file_with_no_rows_and_the_seed(tmp_path):
    path = write(tmp_path / "header.csv", "human,model\n")
    proc = subprocess.run(
        [_entry_point(), "report", str(path), "--truth", "human", "--pred", "model"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"perfci: error: file {str(path)!r} has no rows")
    proc = subprocess.run(
        [_entry_point(), "bootstrap", "--cells", "1", "2", "3", "4", "--seed", "-1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith(
        "argument --seed: expected a non-negative integer, got '-1'"
    )
