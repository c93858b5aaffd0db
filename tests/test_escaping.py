"""Text from data in every output: no raw control, bidi or markup character from the data.

A hostile string (a leading ``*``, ``|``, a line break, CR, NUL, ``<script>``, the
terminal sequence ESC ``[31m`` and the bidi override U+202E) as a subgroup value, a
display name, a method name, a suite name or a column name must come out of the
Markdown, LaTeX, HTML, SUMMARY.md, ATLAS.md and terminal outputs escaped.
"""

import importlib.util
import json
import re
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import perfci as pc
from perfci import publishing
from perfci._core.text import LINE_BREAKS, is_hidden, single_line, visible_text
from perfci.cli import main
from perfci.harness.figures import coverage_table
from perfci.publishing.tables import latex_text, markdown_text

ROOT = Path(__file__).resolve().parents[1]

HOSTILE = '*lead|pipe\nline\rcr\x00nul<script>alert(1)</script>\x1b[31mred\u202eevil"q'
#: The bidi controls the policy names, C1's CSI and NEL, DEL and a few invisible others.
INVISIBLE = [
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
    "\u200e",
    "\u200f",
    "\u061c",
    "\x9b",
    "\x85",
    "\x7f",
    "\u200b",
    "\ufeff",
    "\u2028",
    "\u2029",
]


def raw_controls(text, lines=False):
    """Return the control and format characters of `text` (but the rows' line breaks)."""
    return {
        c for c in text if unicodedata.category(c) in ("Cc", "Cf") and not (lines and c == "\n")
    }


def markdown_cells(line):
    """Split a Markdown table row at its unescaped pipes (a backslash escapes one character)."""
    cells, current, i = [], "", 0
    while i < len(line):
        if line[i] == "\\":
            current += line[i : i + 2]
            i += 2
            continue
        if line[i] == "|":
            cells.append(current)
            current = ""
        else:
            current += line[i]
        i += 1
    cells.append(current)
    return cells[1:-1]  # a row starts and ends with a pipe


def outside_code(text):
    """Return Markdown text without its fenced code blocks (where markup is not read)."""
    return re.sub(r"^```.*?^```$", "", text, flags=re.S | re.M)


def check_markdown_tables(text):
    """Assert every Markdown table of `text` keeps one cell per column in every row."""
    widths, previous = [], False
    for line in text.splitlines():
        is_row = line.startswith("|")
        if is_row and not previous:
            widths.append(set())
        if is_row:
            assert line.endswith("|"), line
            widths[-1].add(len(markdown_cells(line)))
        previous = is_row
    assert widths and all(len(w) == 1 for w in widths), widths


# ---------------------------------------------------------------------- the rule


def test_visible_text_shows_every_control_and_format_character_as_an_escape():
    assert visible_text(HOSTILE) == (
        '*lead|pipe\\nline\\rcr\\x00nul<script>alert(1)</script>\\x1b[31mred\\u202eevil"q'
    )
    for char in INVISIBLE:
        shown = visible_text(f"a{char}b")
        assert not raw_controls(shown) and shown.startswith("a\\") and shown.endswith("b")
        assert is_hidden(char)
    assert visible_text("\U000e0001") == "\\U000e0001"  # a tag character, beyond the BMP
    assert visible_text("\ud800") == "\\ud800"  # a lone surrogate cannot even be encoded
    # the joiners scripts and emoji need are kept; printable text is returned unchanged
    for kept in ("مي\u200cخواهم", "👩\u200d💻", "naïve_name (ø) ≤ 0.9"):
        assert visible_text(kept) == kept
    assert visible_text("a\nb\tc", keep="\n") == "a\nb\\tc"
    with pytest.raises(TypeError, match="must be a string"):
        visible_text(3)


def test_single_line_makes_breaks_spaces_and_the_rest_visible():
    assert single_line("a\r\nb\nc\rd\te\x0bf\u2028g") == "a b c d e f g"
    assert all(single_line(f"x{b}y") == "x y" for b in LINE_BREAKS)
    assert single_line("a\x00\x1b\u202e") == "a\\x00\\x1b\\u202e"


# ---------------------------------------------------------------- the escapers


def test_markdown_text_leaves_no_control_no_break_and_no_markup():
    text = markdown_text(HOSTILE)
    assert not raw_controls(text) and "\n" not in text
    assert text.startswith("\\*lead\\|pipe line cr")
    assert "\\<script\\>" in text and "<script>" not in text
    assert "\\\\x1b\\[31m" in text and "\\\\u202e" in text  # shown as escapes, backslash kept
    assert len(markdown_cells(f"| {text} | x |")) == 2
    # an entity would put a bidi control back once rendered
    assert markdown_text("&#x202e;") == "\\&\\#x202e;"
    assert markdown_text("[0.1, 0.2]\n") == "\\[0.1, 0.2\\] "  # not taken for an interval
    for char in INVISIBLE:
        assert not raw_controls(markdown_text(f"a{char}b"))


def test_latex_text_escapes_pipes_quotes_a_leading_star_and_controls():
    text = latex_text(HOSTILE)
    assert not raw_controls(text) and "\n" not in text and "\r" not in text
    assert text.startswith("{*}lead\\textbar{}pipe line cr")
    assert "|" not in text and '"' not in text and "\\textquotedbl{}q" in text
    assert "\\textless{}script\\textgreater{}" in text
    assert "\\textbackslash{}x1b[31m" in text and "\\textbackslash{}u202e" in text
    assert latex_text("a*b") == "a*b"  # only a leading star is read by the row above


def test_a_latex_row_does_not_start_with_a_bracket_or_a_star():
    table = pc.report(
        [1, 1, 0, 0, 1, 0, 1, 1] * 5, [1, 0, 0, 1, 1, 0, 1, 0] * 5,
        by=["[x]", "*y"] * 20, metrics=["recall"], rng=1,
    )  # fmt: skip
    text = publishing.latex_table(table, names={"by": "[by]"})
    rows = [line for line in text.splitlines() if line.endswith(" \\\\")]
    assert rows and not [r for r in rows if r.startswith(("[", "*"))]
    assert "{[}by]" in text and "{[}x]" in text and "{*}y" in text


# ------------------------------------------------------------------ end to end


@pytest.fixture(scope="module")
def hostile_texts():
    texts = pc.load_example()
    sites = sorted(texts["site"].unique())
    texts["site"] = texts["site"].map({s: f"{HOSTILE} {i}" for i, s in enumerate(sites)})
    return texts


@pytest.fixture(scope="module")
def hostile_report(hostile_texts):
    return publishing.validation_report(
        hostile_texts["human"],
        hostile_texts["model"],
        groups=hostile_texts["person"],
        by=hostile_texts["site"],
        metrics=["recall"],
        names={"by": HOSTILE, "y_pred": HOSTILE, "y_true": "truth\u202e"},
        title=HOSTILE,
        rng=1,
    )


def test_a_validation_report_with_hostile_names_escapes_markdown(hostile_report):
    text = hostile_report.to_markdown()
    assert not raw_controls(text, lines=True) and "\r" not in text
    check_markdown_tables(text)
    assert "<script>" not in text and "\\<script\\>" in text
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert markdown_cells(rows[0])[0].strip() == markdown_text(HOSTILE.capitalize())
    assert any(markdown_cells(r)[0].strip() == markdown_text(f"{HOSTILE} 0") for r in rows)


def test_a_validation_report_with_hostile_names_escapes_latex(hostile_report):
    text = hostile_report.to_latex()
    assert not raw_controls(text, lines=True) and "\r" not in text
    assert "|" not in text and '"' not in text and "<script>" not in text
    for line in text.splitlines():
        assert not line.startswith(("*", "[")), line
    body = text.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
    spec = re.search(r"\\begin\{tabular\}\{([lr]+)\}", text).group(1)
    assert all(len(re.split(r"(?<!\\)&", line)) == len(spec) for line in body)


def test_a_validation_report_with_hostile_names_escapes_html(hostile_report):
    page = hostile_report.to_html()
    assert not raw_controls(page, lines=True) and "\r" not in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\\u202eevil" in page and "\\x1b[31m" in page and "truth\\u202e" in page
    assert "\u202e" not in page and "\x1b" not in page and "\x00" not in page


# ----------------------------------------------------------------- the terminal


@pytest.fixture
def hostile_csv(tmp_path, hostile_texts):
    path = tmp_path / "hostile.csv"
    hostile_texts.to_csv(path, index=False)
    return path


def _run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("output", [[], ["--format", "csv"], ["--format", "markdown"]])
def test_the_cli_prints_no_control_character_of_the_data_raw(capsys, hostile_csv, output):
    argv = ["report", hostile_csv, "--truth", "human", "--pred", "model", "--by", "site"]
    status, out, err = _run(capsys, *argv, "--metrics", "recall", *output)
    assert status == 0, err
    assert not raw_controls(out + err, lines=True) and "\r" not in out
    assert "\x1b" not in out and "\u202e" not in out
    lines = out.splitlines()
    if output == ["--format", "markdown"]:
        assert "\\\\x1b\\[31m" in out and "\\\\u202e" in out  # escaped for Markdown too
        check_markdown_tables(out)
    else:  # a line per row: the header, the row of all texts and one per site
        assert "\\x1b[31m" in out and "\\u202e" in out
        assert len(lines) == 4, out
        assert sum("\\x00nul" in line for line in lines) == 2


def test_the_cli_table_escapes_a_hostile_column_name(capsys, tmp_path, hostile_texts):
    column = "si\u202ete\x1b[0m|x"
    path = tmp_path / "named.csv"
    hostile_texts.rename(columns={"site": column}).to_csv(path, index=False)
    argv = ["report", path, "--truth", "human", "--pred", "model", "--by", column]
    for output in ([], ["--format", "csv"], ["--format", "markdown"], ["--format", "latex"]):
        status, out, err = _run(capsys, *argv, "--metrics", "recall", *output)
        assert status == 0, err
        assert not raw_controls(out + err, lines=True), output
        assert "u202e" in out and "\u202e" not in out, output


def test_the_cli_latex_and_json_of_hostile_data(capsys, hostile_csv):
    argv = ["report", hostile_csv, "--truth", "human", "--pred", "model", "--by", "site"]
    status, out, _ = _run(capsys, *argv, "--metrics", "recall", "--format", "latex")
    assert status == 0 and not raw_controls(out, lines=True)
    assert "|" not in out and '"' not in out
    status, out, _ = _run(capsys, *argv, "--metrics", "recall", "--json")
    assert status == 0 and not raw_controls(out.rstrip("\n"))
    sites = {row["site"] for row in json.loads(out)}  # JSON keeps the data exactly
    assert f"{HOSTILE} 0" in sites


def test_the_cli_error_messages_show_controls_as_escapes(capsys, hostile_csv, tmp_path):
    column = "\x1b]0;title\x07\x1b[2Jhu\u202eman"
    status, out, err = _run(capsys, "report", hostile_csv, "--truth", column, "--pred", "model")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert not raw_controls(err, lines=True) and "\\x1b" in err and "\\u202e" in err
    missing = tmp_path / "no\u202efile\x1b[31m.csv"
    status, out, err = _run(capsys, "report", missing, "--truth", "a", "--pred", "b")
    assert status == 2 and err.count("\n") == 1 and not raw_controls(err, lines=True)


def test_the_cli_html_report_of_hostile_data(capsys, hostile_csv, tmp_path):
    page = tmp_path / "r.html"
    argv = ["report", hostile_csv, "--truth", "human", "--pred", "model", "--by", "site"]
    status, out, err = _run(capsys, *argv, "--metrics", "recall", "--html", page, "--seed", "1")
    assert status == 0, err
    assert not raw_controls(out + err, lines=True)
    assert not raw_controls(page.read_text(), lines=True)


# ------------------------------------------------------------ SUMMARY.md, ATLAS.md


def _result(suite, methods, dims=None, scale=HOSTILE):
    """A small result dataset as the harness writes it, with the given names."""
    dims = dims or {"persons": [6, 12], "icc": [0.1, 0.3]}
    shape = (*(len(v) for v in dims.values()), len(methods))
    data = {
        "coverage": np.full(shape, 0.95),
        "mc_se": np.full(shape, 0.007),
        "mean_half_width": np.full(shape, 0.05),
        "miss_low": np.full(shape, 0.01),
        "miss_high": np.full(shape, 0.04),
        "n_valid": np.full(shape, 1000.0),
        "n_flagged": np.zeros(shape),
    }
    return xr.Dataset(
        {k: ((*dims, "ci_method"), v) for k, v in data.items()},
        coords={**dims, "ci_method": methods, "family": ("ci_method", ["analytic"] * len(methods))},
        attrs={
            "suite": suite,
            "description": f"{suite}: a description",
            "scale": scale,
            "replications": 1000,
            "resamples": 100,
            "exact": 0,
            "seed": 1,
            "confidence_level": 0.95,
            "population": "{'kind': 'nested', 'rate': 0.9}",
        },
    )


def test_the_coverage_table_of_summary_md_escapes_names():
    ds = _result(HOSTILE, [HOSTILE, "recommended"])
    text = coverage_table(ds)
    assert not raw_controls(text, lines=True) and "\r" not in text
    heading = text.splitlines()[0]
    assert heading == f"### {markdown_text(HOSTILE)} ({markdown_text(HOSTILE)})"
    check_markdown_tables(text)
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert markdown_cells(rows[1])[0].strip() == markdown_text(HOSTILE)
    summary = coverage_table(ds, over="icc")
    assert not raw_controls(summary, lines=True)
    check_markdown_tables(summary)


def test_validate_report_writes_an_escaped_summary(capsys, tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    name = "suite|<b>\x1b[31m\u202e"  # no line break: it names the figure files too
    method = HOSTILE.replace("\x00", "")  # netCDF strings hold no NUL
    result = _result(name, [method, "wilson"], scale=method)
    result.to_netcdf(folder / "r.nc", engine="h5netcdf")
    status, out, err = _run(capsys, "validate", "report", folder, "--formats", "svg")
    assert status == 0, err
    assert not raw_controls(out + err, lines=True)
    # the figures' file names are made safe (harness.figures.file_stem), in this folder
    assert re.search(r"figures/coverage_suite__b___31m_-[0-9a-f]{8}\.svg", out), out
    summary = (folder / "SUMMARY.md").read_text()
    assert summary.startswith("# Coverage results\n")
    assert not raw_controls(summary, lines=True) and "<b>" not in summary
    check_markdown_tables(summary)


@pytest.fixture(scope="module")
def make_atlas():
    spec = importlib.util.spec_from_file_location("make_atlas", ROOT / "validation/make_atlas.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_atlas_escapes_suite_method_and_dim_names(make_atlas, tmp_path):
    ds = _result("atlas-" + HOSTILE, [HOSTILE, "recommended"])
    ds = ds.rename({"icc": "i|c\u202ec"})
    ds.attrs["description"] = HOSTILE
    text = make_atlas.render(
        {"x": ds},
        out=tmp_path / "ATLAS.md",
        figures=None,
        results_dir=tmp_path,
        command="make the atlas",
    )
    assert not raw_controls(text, lines=True) and "\r" not in text
    assert "<script>" not in outside_code(text)
    assert f"## {markdown_text('atlas-' + HOSTILE)}" in text.splitlines()
    assert markdown_text(HOSTILE) in text.splitlines()  # the description
    assert "`persons` = 6, 12" in text and markdown_text("i|c\u202ec") + " = 0.1, 0.3" in text
    check_markdown_tables(text)
    methods = [line for line in text.splitlines() if line.startswith("| " + markdown_text("*"))]
    assert methods and all(len(markdown_cells(line)) == 11 for line in methods[:1])


def test_the_atlas_acceptance_and_side_by_side_escape_names(make_atlas, tmp_path):
    # recommended below the floor in a cell: the acceptance names the cell, in its suite
    ds = _result("atlas-x", [HOSTILE, "recommended"])
    ds["coverage"][1, 0, 1] = 0.90
    ds = ds.assign_coords(family=("ci_method", ["bayes", "analytic"]))
    text = make_atlas.render(
        {HOSTILE: ds}, out=tmp_path / "ATLAS.md", figures=None, results_dir=tmp_path, command="c"
    )
    assert "## Acceptance of `recommended`: **FAIL**" in text
    assert f"(at {markdown_text(HOSTILE)}: persons=12, icc=0.1)" in text
    assert "### Bayesian beside frequentist, on the same data sets" in text
    assert not raw_controls(text, lines=True) and "<script>" not in outside_code(text)
    check_markdown_tables(text)


def test_ordinary_names_are_unchanged():
    # the escaping changes nothing in the names perfci and its suites use
    for name in ("agresti_coull", "balanced_accuracy", "atlas-sizes", "clinic_a", "0.95"):
        assert markdown_text(name) == name == visible_text(name)
    frame = pd.DataFrame({"site": ["clinic_a"], "estimate": [0.5]})
    from perfci.cli.rendering import markdown

    assert markdown(frame) == "| site | estimate |\n|---|---|\n| clinic_a | 0.5 |"
