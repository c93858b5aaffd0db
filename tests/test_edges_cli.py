"""Edge cases of the command line: CSV formulas, line breaks in names, ``--out``, counts."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest

import perfci
from perfci.cli import main

NAME = "=cmd|pred\n<b>"


@pytest.fixture
def data(tmp_path):
    """Write the example data with formula-like subgroups and a column name with a newline."""
    frame = perfci.load_example()
    frame["sub"] = [("=1+2", "@SUM(A1)", "-x")[i % 3] for i in range(len(frame))]
    frame[NAME] = frame["model"]
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path


def test_csv_format_quotes_cells_that_start_a_formula(data, capsys):
    """F9: a text cell starting ``=``, ``+``, ``-``, ``@`` gets a ``'``; numbers do not."""
    argv = ["report", str(data), "--truth", "human", "--pred", "model", "--by", "sub"]
    assert main([*argv, "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    subgroups = {row[0] for row in rows[1:]}
    assert {"'=1+2", "'@SUM(A1)", "'-x"} <= subgroups
    for cell in (cell for row in rows[1:] for cell in row if cell[:1] in ("=", "+", "-", "@")):
        float(cell)  # only numbers start so, unquoted
    assert "all" in subgroups


def test_csv_format_quotes_column_names_and_keeps_negative_numbers(tmp_path, capsys):
    """F9: a column name starting ``=`` is quoted; ``-0.5`` and a tab are handled."""
    from perfci.cli.rendering import csv_safe_text

    assert csv_safe_text("-0.5") == "-0.5"
    assert csv_safe_text("+1e-3") == "+1e-3"
    assert csv_safe_text("-1+2") == "'-1+2"
    assert csv_safe_text("\tx") == "'\\tx"
    assert csv_safe_text("\rx") == "'\\rx"
    frame = perfci.load_example().rename(columns={"person": "=HYPERLINK(1)"})
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    argv = ["report", str(path), "--truth", "human", "--pred", "model", "--by", "=HYPERLINK(1)"]
    assert main([*argv, "--format", "csv"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header.startswith("'=HYPERLINK(1),metric,")


def test_compare_line_shows_a_newline_in_a_name_as_an_escape(data, capsys):
    """F10: the result line of two classifiers stays one line."""
    argv = ["compare", str(data), "--truth", "human", "--pred-a", NAME, "--pred-b", "model_b"]
    assert main([*argv, "--metric", "recall"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert "=cmd|pred\\n<b> 0." in out


def test_compare_runs_and_auc_lines_are_one_line(data, capsys):
    """F10: the runs and ROC AUC forms keep a name's newline visible too."""
    argv = ["compare", str(data), "--truth", "human", "--pred-a", NAME, "run2"]
    assert main([*argv, "--pred-b", "model_b", "run1", "--metric", "recall"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "=cmd|pred\\n<b>+run2" in out
    argv = ["compare", str(data), "--truth", "human", "--pred-a", "score", "--pred-b", "score_b"]
    assert main([*argv, "--metric", "roc_auc"]) == 0
    assert capsys.readouterr().out.count("\n") == 1


def test_many_classifier_warning_is_not_cut_at_a_newline(data, capsys):
    """F10: the warning ``no interval for ...`` names the whole column, on one line."""
    argv = ["compare", str(data), "--truth", "human", "--pred", NAME, "model", "run2"]
    assert main([*argv, "--metric", "recall"]) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if "no interval for" in x)
    assert "=cmd|pred\\n<b> - model: the difference is undefined" in line


@pytest.mark.parametrize("under", [False, True])
def test_validate_run_refuses_an_out_that_is_a_file(tmp_path, capsys, under):
    """F11: ``--out`` an existing file, or a path under one, is refused naming ``--out``."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    out = afile / "x" / "y" if under else afile
    argv = ["validate", "run", "paper-samplesize", "--scale", "smoke", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "`--out`" in err and repr(str(out)) in err
    assert "Errno" not in err
    assert afile.read_text() == "x"


def test_bootstrap_names_trials_not_cells(capsys):
    """F5: no trials is refused naming ``--trials``, the flag given."""
    assert main(["bootstrap", "--successes", "0", "--trials", "0"]) == 2
    err = capsys.readouterr().err
    assert "`--trials` must be at least 1" in err and "--cells" not in err


def test_a_report_with_every_row_left_out_is_an_error_not_an_empty_table(tmp_path, capsys):
    """An empty table said nothing and exited 0; now one line says why, exit 2."""
    path = tmp_path / "none.csv"
    path.write_text("human,model\n" + "0,0\n" * 20)  # no positive: F1 undefined
    argv = ["report", str(path), "--truth", "human", "--pred", "model", "--metrics", "f1"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("perfci: error: no metric could be reported: f1")
    frame = perfci.load_example()
    with pytest.raises(ValueError, match="no metric could be reported: recall"):
        perfci.report(frame["human"], frame["model"], metrics=["recall"], groups=["p"] * len(frame))


def test_a_report_at_a_high_level_draws_the_resamples_the_level_needs(data, capsys):
    """At 99.99% every bootstrap row was refused naming `n_resamples`, which is no flag."""
    argv = ["report", str(data), "--truth", "human", "--pred", "model", "--metrics", "f1"]
    assert main([*argv, "--confidence-level", "0.9999", "--format", "csv"]) == 0
    out = capsys.readouterr()
    assert "n_resamples" not in out.err and out.out.count("\nf1,") == 1


def test_an_error_whose_message_starts_with_a_line_break_shows_its_first_line(monkeypatch, capsys):
    """A message beginning with a line break printed `perfci: error: ` and nothing else."""
    from perfci.cli import commands

    def fail(args):
        raise ValueError("\n\nthe real reason\nmore")

    monkeypatch.setitem(commands.COMMANDS, "demo", fail)
    assert main(["demo"]) == 2
    assert capsys.readouterr().err.strip() == "perfci: error: the real reason"


def test_a_column_named_twice_is_refused_on_the_command_line_and_in_the_header(
    data, tmp_path, capsys
):
    """`--pred run1 run1` were two identical runs; a repeated header took the first."""
    argv = ["report", str(data), "--truth", "human", "--pred", "model", "model"]
    assert main(argv) == 2
    assert "`--pred` names the column 'model' more than once" in capsys.readouterr().err
    doubled = tmp_path / "doubled.csv"
    doubled.write_text("human,model,model\n1,1,0\n0,0,1\n")
    assert main(["report", str(doubled), "--truth", "human", "--pred", "model"]) == 2
    assert "names the column 'model' more than once in its header" in capsys.readouterr().err


def test_a_file_at_the_figures_folder_names_the_flag(tmp_path, capsys):
    import shutil
    from pathlib import Path

    results = Path(__file__).resolve().parents[1] / "validation" / "results" / "atlas-bayes.nc"
    shutil.copy(results, tmp_path / "atlas-bayes.nc")
    (tmp_path / "figs").write_text("a file")
    assert main(["validate", "report", str(tmp_path), "--figures", str(tmp_path / "figs")]) == 2
    assert capsys.readouterr().err.startswith("perfci: error: `--figures`")


def test_an_annotator_without_codes_is_named():
    frame = perfci.load_example()
    codes = frame[["human", "human_b"]].copy()
    codes["nobody"] = None
    with pytest.raises(ValueError, match="`y_true` column 'nobody' holds no code"):
        perfci.annotator_ci(codes, frame["model"], "recall")


def test_the_methods_paragraph_hides_nothing_from_column_names():
    import warnings

    from perfci import publishing

    frame = perfci.load_example()
    frame["mo\x1bdel\u202e"] = frame["model"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = publishing.validation_report(
            frame["human"], frame["mo\x1bdel\u202e"], metrics=["recall"], rng=1
        )
    assert "\x1b" not in rep.methods and "\u202e" not in rep.methods
    assert "\\x1b" in rep.methods


def test_save_figures_refuses_a_read_only_figure_before_writing_any(tmp_path):
    import os
    import warnings

    from perfci import publishing

    frame = perfci.load_example()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = publishing.validation_report(
            frame["human"], frame["model"], groups=frame["person"], metrics=["recall"], rng=1
        )
    names = rep.figure_names()
    assert len(names) >= 2
    last = tmp_path / f"{names[-1]}.png"
    last.write_bytes(b"keep")
    os.chmod(last, 0o444)
    with pytest.raises(ValueError, match="read-only file"):
        rep.save_figures(tmp_path, ("png",))
    assert sorted(p.name for p in tmp_path.iterdir()) == [last.name]


def test_a_fifo_at_the_html_path_is_refused_before_any_work(data, tmp_path, capsys):
    import os

    fifo = tmp_path / "page.html"
    os.mkfifo(fifo)
    argv = ["report", str(data), "--truth", "human", "--pred", "model", "--html", str(fifo)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "`--html`" in err and "is not a regular file" in err


def test_the_fourth_probe_pandas_arguments_and_repeated_columns_elsewhere(data, capsys):
    """Scores, many classifiers, designs and agreement refuse misaligned pandas arguments;
    a table of runs or annotators, rank and compare refuse a column named twice."""
    import pandas as pd

    from perfci.sample_design import design_cells

    frame = perfci.load_example()

    def shuffled(x):
        return x.sample(frac=1, random_state=1)

    refused = {
        "score": lambda: perfci.report(frame.human, frame.model, score=shuffled(frame.score)),
        "preds": lambda: perfci.rank_ci(
            frame.human, shuffled(frame[["model", "model_b"]]), "recall"
        ),
        "strata": lambda: design_cells(frame.human, frame.model, strata=shuffled(frame.site)),
        "groups": lambda: perfci.annotator_agreement(
            frame[["human", "human_b"]].astype(float), groups=shuffled(frame.person)
        ),
    }
    for name, call in refused.items():
        with pytest.raises(ValueError, match=f"`{name}` is a pandas object whose index"):
            call()
    runs = frame[["model", "model_b", "model"]].copy()
    runs.columns = ["r", "s", "r"]
    with pytest.raises(ValueError, match="names the run 'r' more than once"):
        perfci.runs_ci(frame.human, runs, "recall")
    assert isinstance(runs, pd.DataFrame)
    for command in ("rank", "compare"):
        argv = [command, str(data), "--truth", "human", "--pred", "model", "model_b", "model"]
        assert main([*argv, "--metric", "recall"]) == 2
        assert "`--pred` names the column 'model' more than once" in capsys.readouterr().err


def test_rank_in_latex_is_latex_with_every_name_escaped(tmp_path, capsys):
    """`perfci rank --format latex` printed the plain text table (round 5, E10)."""
    frame = perfci.load_example()
    frame["a_b&c%"], frame["#x{y}"] = frame["model"], frame["model_b"]
    path = tmp_path / "rank.csv"
    frame.to_csv(path, index=False)
    argv = ["rank", str(path), "--truth", "human", "--pred", "a_b&c%", "#x{y}"]
    assert main([*argv, "--metric", "recall", "--format", "latex"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("\\begin{tabular}{") and out.rstrip().endswith("\\end{tabular}")
    assert "a\\_b\\&c\\%" in out and "\\#x\\{y\\}" in out and "a_b&c%" not in out
    assert "rank\\_low" in out


def test_round5_silent_losses_in_python_are_refused():
    """Round 5: repeated classifier columns lost the comparison (an empty `many`), and
    annotator_table paired misaligned pandas arguments by position."""
    frame = perfci.load_example()
    twice = pd.concat([frame["model_b"], frame["model_b"]], axis=1).set_axis(["a", "a"], axis=1)
    with pytest.raises(ValueError, match=r"`classifiers` must name each classifier once"):
        perfci.validation_report(frame["human"], frame["model"], classifiers=twice)
    with pytest.raises(ValueError, match=r"`classifiers` must name each classifier once"):
        perfci.validation_report(
            frame["human"], frame["model"], classifiers={1: frame["model_b"], "1": frame["model"]}
        )
    shifted = frame[["human", "human_b"]].set_axis(frame.index + 2)
    with pytest.raises(ValueError, match="index"):
        perfci.annotator_table(shifted, frame["model"], "recall")
