"""Edges of the command line, round 7: a seed that reaches every draw, flags given twice,
and empty paths.

Each test failed before its fix: `perfci compare --pred A B --seed 5` gave other ends on
each run (the paired bootstrap of two classifiers got no generator), `--pred run1 --pred
run2` reported run2 alone, and `--out ''` wrote into the current folder."""

from __future__ import annotations

import pytest

import perfci as pc


@pytest.fixture
def texts_csv(tmp_path):
    path = tmp_path / "texts.csv"
    pc.load_example().to_csv(path, index=False)
    return path


def test_compare_of_two_classifiers_by_pred_follows_the_seed(cli, texts_csv):
    argv = ("compare", texts_csv, "--truth", "human", "--pred", "model", "model_b")
    runs = [cli(*argv, "--metric", "recall", "--seed", 5, "--json") for _ in range(2)]
    assert runs[0][0] == 0 and runs[0] == runs[1]


def test_compare_many_takes_a_generator():
    texts = pc.load_example()
    preds = {"model": texts["model"], "model_b": texts["model_b"]}
    one, two = (pc.compare_many(texts["human"], preds, "recall", rng=7) for _ in range(2))
    assert one.equals(two)


@pytest.mark.parametrize("flag", ["--pred", "--truth", "--metrics"])
def test_a_flag_given_twice_is_refused(cli, one_line_error, texts_csv, flag):
    argv = ["report", texts_csv, "--truth", "human", "--pred", "model"]
    argv += [flag, "human" if flag == "--truth" else "model" if flag == "--pred" else "recall"]
    if flag == "--metrics":
        argv += ["--metrics", "precision"]
    status, _, err = cli(*argv)
    one_line_error(status, err)
    assert f"`{flag}` given twice" in err


@pytest.mark.parametrize(
    "argv",
    [
        ("validate", "run", "t", "--out", ""),
        ("validate", "report", ""),
        ("report", "", "--truth", "human", "--pred", "model"),
    ],
)
def test_an_empty_path_is_refused_before_any_work(cli, one_line_error, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    status, _, err = cli(*argv)
    one_line_error(status, err)
    assert "is empty" in err and list(tmp_path.iterdir()) == []


def test_report_html_refuses_an_empty_path(cli, one_line_error, texts_csv):
    status, _, err = cli("report", texts_csv, "--truth", "human", "--pred", "model", "--html", "")
    one_line_error(status, err)
    assert "`--html` is empty" in err
