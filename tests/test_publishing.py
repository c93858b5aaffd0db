"""The validation report (HTML, LaTeX, Markdown, methods paragraph) and its CLI.

The numbers of every table are checked against the public results they are read from
(:func:`perfci.report`, :func:`perfci.compare`), the per-person intervals against
statsmodels, and the HTML page in a real headless browser (Chromium, when it is on the
PATH; the browser tests are skipped otherwise): it renders, every image loads, nothing
is written to its console and nothing fails to load.
"""

import html
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy
from statsmodels.stats.proportion import proportion_confint

import perfci as pc
from perfci import policy, publishing
from perfci.cli import main
from perfci.publishing.methods import REFERENCES
from perfci.publishing.tables import latex_text, parse_label, short_method

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def texts():
    return pc.load_example()


@pytest.fixture(scope="module")
def nested(texts):
    """The example's report with every part: subgroups, differences, comparison, AUC."""
    return publishing.validation_report(
        texts["human"],
        texts["model"],
        groups=texts["person"],
        by=texts["site"],
        pred_b=texts["model_b"],
        score=texts["score"],
        rng=1,
    )


class _Tables(HTMLParser):
    """The text of every cell of every table of a page, by table id."""

    def __init__(self):
        super().__init__()
        self.tables, self._table, self._row, self._cell = {}, None, None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(attrs.get("id"), [])
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._table.append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _tables(page: str) -> dict:
    parser = _Tables()
    parser.feed(page)
    return parser.tables


# ------------------------------------------------------------------- the numbers


def test_the_table_is_the_report_of_the_same_seed(texts, nested):
    expected = pc.report(
        texts["human"],
        texts["model"],
        groups=texts["person"],
        by=texts["site"],
        differences=True,
        score=texts["score"],
        rng=1,
    )
    pd.testing.assert_frame_equal(nested.table, expected)


def test_the_html_table_shows_the_reports_numbers(texts):
    rep = publishing.validation_report(
        texts["human"], texts["model"], groups=texts["person"], rng=3
    )
    expected = pc.report(texts["human"], texts["model"], groups=texts["person"], rng=3)
    [head, *rows] = _tables(rep.to_html())["table-metrics"]
    assert head[:4] == ["Metric", "Estimate", "95% CI", "Method"]
    assert len(rows) == len(expected)
    for cells, row in zip(rows, expected.itertuples(), strict=True):
        assert cells[0] == row.metric
        assert cells[1] == f"{row.estimate:.3f}"
        assert cells[2] == f"[{row.low:.3f}, {row.high:.3f}]"
        short = short_method(row.method)  # and its footnote's letter
        assert cells[3].startswith(short) and len(cells[3]) == len(short) + 1
        assert cells[4] == f"{row.relevant_n:,}" and cells[5] == str(row.persons)


def test_the_design_table_shows_the_reports_icc_and_design_effect(texts):
    rep = publishing.validation_report(
        texts["human"], texts["model"], groups=texts["person"], rng=3
    )
    [head, *rows] = _tables(rep.to_html())["table-design"]
    assert head == ["Metric", "Relevant n", "Persons", "ICC", "Design effect", "n_eff"]
    recall = rep.table.set_index("metric").loc["recall"]
    assert rows[1] == [
        "recall",
        "251",
        "39",
        f"{recall.icc:.3f}",
        f"{recall.design_effect:.3f}",
        f"{recall.n_eff:.1f}",
    ]
    assert rows[5][3:] == ["–", "–", "–"]  # f1's bootstrap has no design effect


def test_the_markdown_table_shows_the_reports_numbers(texts):
    table = pc.report(texts["human"], texts["model"], metrics=["recall", "kappa"], rng=2)
    lines = publishing.markdown_table(table).splitlines()
    rows = [line.split(" | ") for line in lines if line.startswith("| ") and "---" not in line]
    assert rows[0][:3] == ["| Metric", "Estimate", "95% CI"]
    for cells, row in zip(rows[1:], table.itertuples(), strict=True):
        assert cells[1:3] == [f"{row.estimate:.3f}", f"[{row.low:.3f}, {row.high:.3f}]"]


def test_bayesian_intervals_sit_beside_their_frequentist_rows(texts):
    rep = publishing.validation_report(
        texts["human"],
        texts["model"],
        groups=texts["person"],
        metrics=["recall", "kappa"],
        bayes=True,
        bayes_sampler="grid",
        rng=1,
    )
    [head, recall, kappa] = _tables(rep.to_html())["table-metrics"]
    assert head[6:9] == ["Bayes", "95% CrI", "Bayesian model"]
    bayes = rep.table[rep.table["method"].str.startswith("bayes")].iloc[0]
    assert recall[6:8] == [f"{bayes.estimate:.3f}", f"[{bayes.low:.3f}, {bayes.high:.3f}]"]
    assert recall[8].startswith("beta-binomial")
    # every metric has its Bayesian row: kappa's from the hierarchical model by margins
    margins = rep.table[rep.table["method"].str.startswith("bayes hierarchical margins")].iloc[0]
    assert kappa[6:8] == [f"{margins.estimate:.3f}", f"[{margins.low:.3f}, {margins.high:.3f}]"]
    assert kappa[8].startswith("hierarchical margins")
    assert "hierarchical model of the confusion matrix by margins" in rep.methods
    assert "hierarchical beta-binomial model" in rep.methods
    assert "quadrature" in rep.methods and "κ ~ Pareto(1.5, 1)" in rep.methods


def test_the_prior_sensitivity_row_has_a_row_of_its_own(texts):
    rep = publishing.validation_report(
        texts["human"],
        texts["model"],
        groups=texts["person"],
        metrics=["recall"],
        bayes=True,
        bayes_sampler="grid",
        bayes_prior_sensitivity=True,
    )
    [_, first, second] = _tables(rep.to_html())["table-metrics"]
    other = rep.table.iloc[2]
    assert "prior bda3" in other.method  # the report's row under the other prior
    assert second[:4] == ["recall", "–", "–", "–"] and second[8].startswith(
        "beta-binomial, prior bda3"
    )
    assert second[6:8] == [f"{other.estimate:.3f}", f"[{other.low:.3f}, {other.high:.3f}]"]
    assert first[8].startswith("beta-binomial") and "prior" not in first[8]
    assert "the same model under the alternative prior p(κ) proportional to" in rep.methods
    assert rep.versions.keys() == {"perfci", "NumPy", "SciPy", "pandas", "matplotlib"}


def test_the_comparison_is_that_of_compare(texts, nested):
    # Newcombe's interval of the nested recall difference has no random draws
    expected = pc.compare(
        texts["human"], texts["model"], texts["model_b"], "recall", groups=texts["person"]
    )
    row = nested.comparisons.set_index("metric").loc["recall"]
    assert (row.difference, row.low, row.high) == (expected.difference, expected.low, expected.high)
    assert row.method == expected.method and row.test == expected.test
    assert list(nested.comparisons["metric"]) == list(pc.BINARY_METRICS)
    [head, *rows] = _tables(nested.to_html())["table-comparison"]
    assert head[:4] == ["Metric", "model", "model_b", "Difference"]
    assert rows[1][3:5] == [f"{row.difference:+.3f}", f"[{row.low:+.3f}, {row.high:+.3f}]"]


def test_subgroup_differences_sit_beside_both_estimates(nested):
    [head, *rows] = _tables(nested.to_html())["table-differences"]
    assert head[:7] == ["Site", "Reference", "Metric", "Subgroup", "Reference", "Difference",
                        "95% CI"]  # fmt: skip
    table = nested.table
    diff = table[table["reference"] == "clinic_a"].set_index("metric").loc["recall"]
    own = table[(table["reference"] == "") & (table["metric"] == "recall")].set_index("by")
    assert rows[1][:6] == [
        "clinic_b",
        "clinic_a",
        "recall",
        f"{own.loc['clinic_b', 'estimate']:.3f}",
        f"{own.loc['clinic_a', 'estimate']:.3f}",
        f"{diff.estimate:+.3f}",
    ]


def test_each_persons_rate_and_interval_are_agresti_coull_of_their_own_texts(texts, nested):
    relevant = texts[texts["human"] == 1]
    per_person = relevant.groupby("person")["model"].agg(["sum", "size"])
    rates = nested.person_rates.set_index("person")
    assert nested.forest_metric == "recall" and nested.person_method == "agresti_coull"
    assert list(rates.index) == list(per_person.index)  # the 39 with a human positive
    np.testing.assert_array_equal(rates["successes"], per_person["sum"])
    np.testing.assert_array_equal(rates["trials"], per_person["size"])
    # statsmodels 0.14: proportion_confint(count, nobs, alpha=0.05, method="agresti_coull")
    low, high = proportion_confint(per_person["sum"], per_person["size"], 0.05, "agresti_coull")
    np.testing.assert_allclose(rates["low"], np.clip(low, 0, 1), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(rates["high"], np.clip(high, 0, 1), rtol=1e-12, atol=1e-15)


def test_the_summary_counts_texts_persons_and_positives(texts, nested):
    sizes = texts.groupby("person").size()
    assert nested.summary == {
        "texts": 1069,
        "persons": 40,
        "texts_per_person": (int(sizes.min()), float(sizes.median()), int(sizes.max())),
        "positive": 1,
        "reference_positives": int(texts["human"].sum()),
        "classifier_positives": int(texts["model"].sum()),
        "classes": None,
        # a simple random sample: no design (tests/test_weighted_tables.py has designs)
        "design": None,
        "corpus_texts": None,
        "clustered": False,
        "design_inputs": (),
    }


# ----------------------------------------------------------- the methods paragraph


def test_the_methods_paragraph_names_what_the_policy_chose(nested):
    text = nested.methods
    assert policy.PROPORTION_METHOD == "agresti_coull" and "Agresti-Coull intervals" in text
    assert policy.NESTED_DESIGN == "icc_weighted" and "B_w = Σ n_i² / N" in text
    assert policy.NESTED_DF_ADJUST == "dean_pagano" and "Dean and Pagano's" in text
    assert f"from {policy.N_RESAMPLES:,} resamples" in text
    assert f"pseudo count of λ = {policy.PSEUDO_COUNT}" in text
    assert "then texts drawn within each drawn person" in text  # the hierarchical scheme
    assert "text-weighted value of its metric in the population of persons" in text
    assert "Durkalski clustered McNemar" in text and "clinic_b minus clinic_a" in text
    assert "set by the analyst" not in text


def test_the_methods_paragraph_gives_the_seed_and_the_versions(nested):
    text = nested.methods
    assert "the random draws used seed 1" in text
    assert f"perfci {pc.__version__}" in text
    assert f"NumPy {np.__version__}" in text and f"SciPy {scipy.__version__}" in text
    assert nested.seed == "seed 1" and "seed 1" in nested.to_html()


def test_the_methods_paragraph_follows_the_options_given(texts):
    rep = publishing.validation_report(
        texts["human"],
        texts["model"],
        groups=texts["person"],
        metrics=["recall"],
        design="icc",
        df_adjust="korn_graubard",
    )
    assert "B the mean number of relevant texts per person" in rep.methods
    assert "Korn and Graubard's" in rep.methods
    assert "with design and df_adjust set by the analyst" in rep.methods
    assert "random draws" not in rep.methods and "seed" not in rep.methods  # none drawn
    rep = publishing.validation_report(texts["human"], texts["model"], metrics=["f1"])
    assert "about the value of its metric in the population of texts" in rep.methods
    assert "texts drawn independently" in rep.methods
    assert "no seed was set" in rep.methods and rep.seed == "no seed"


def test_every_citation_is_numbered_and_every_reference_is_the_docs(nested):
    cited = {int(n) for group in re.findall(r"\[([\d, ]+)\]", nested.methods)
             for n in group.split(",")}  # fmt: skip
    assert cited == set(range(1, len(nested.references) + 1))
    sources = " ".join(
        p.read_text() for p in [*(ROOT / "docs").glob("*.md"), *(ROOT / "src").rglob("*.py")]
    )
    plain = re.sub(r"\s+", " ", sources.replace("*", "").replace("\\", ""))
    for key, reference in REFERENCES.items():
        if key == "vehtari":  # the docs write R-hat as a formula
            reference = reference.split(" an improved")[0]
        assert reference.replace("R-hat", "$hat R$")[:70] in plain.replace("–", "–"), key


def test_a_label_without_words_is_quoted_as_it_is(texts):
    table = pc.report(texts["human"], texts["model"], metrics=["recall"])
    table.loc[0, "method"] = "a new interval (k=1)"
    text = publishing.methods.methods_paragraph(
        table,
        None,
        {"texts": 1069, "persons": None, "texts_per_person": None},
        {"y_true": "h", "y_pred": "m"},
        0.95,
        publishing.methods.Choices(2000, "no seed was set", (), None),
        {"perfci": "x"},
    )[0]
    assert "For recall the method is: a new interval (k=1)." in text


# ------------------------------------------------------------------------- HTML


def _outside_references(page: str) -> str:
    return re.sub(r'<ol class="references">.*?</ol>', "", page, flags=re.S)


def test_the_page_names_no_external_address_and_loads_nothing(nested):
    page = nested.to_html()
    outside = _outside_references(page)
    assert "http" not in outside.replace("http-equiv", "")
    for loads in ("<script", "<link", "@import", "url(", "<iframe", "<object", "<embed"):
        assert loads not in outside
    sources = re.findall(r'src="([^"]*)"', page)
    assert len(sources) == 2 and all(s.startswith("data:image/png;base64,") for s in sources)


def test_user_strings_are_escaped(texts):
    hostile = texts.assign(
        person=texts["person"].radd("<b>&"),
        site=texts["site"].map({"clinic_a": "<i>a", "clinic_b": "b&c"}),
    )
    rep = publishing.validation_report(
        hostile["human"],
        hostile["model"],
        groups=hostile["person"],
        by=hostile["site"],
        metrics=["recall"],
        names={"y_true": "<truth & co>", "y_pred": 'model "x"', "groups": "<pp>", "by": "s&t"},
        title="<h1>&</h1>",
        rng=1,
    )
    page = rep.to_html()
    for raw in ("<truth & co>", "<i>a", "b&c", "<h1>&</h1>", "<b>&", "<pp>", 'model "x"'):
        assert raw not in page
    assert "&lt;truth &amp; co&gt;" in page and "&lt;i&gt;a" in page and "b&amp;c" in page
    assert "<title>&lt;h1&gt;&amp;&lt;/h1&gt;</title>" in page
    assert "model &quot;x&quot;" in page


def test_the_page_holds_every_section_and_both_figures(nested):
    page = nested.to_html()
    for section in ("data", "metrics", "figures", "differences", "comparison", "notes", "methods"):
        assert f'<section id="{section}">' in page
    assert page.count("<img ") == 2 and nested.figure_names() == ("metrics", "persons")
    assert html.escape(nested.methods) in page


def test_independent_texts_have_one_figure_and_no_persons(texts):
    rep = publishing.validation_report(texts["human"], texts["model"], metrics=["recall", "f1"])
    assert rep.person_rates is None and rep.forest_metric is None and rep.summary["persons"] is None
    assert rep.figure_names() == ("metrics",) and rep.to_html().count("<img ") == 1
    with pytest.raises(ValueError, match="no per-person forest"):
        rep.figure("persons")


def test_multiclass_labels_have_their_classes_and_no_person_forest(texts):
    rep = publishing.validation_report(
        texts["human_topic"],
        texts["model_topic"],
        groups=texts["person"],
        metrics=["recall", "macro_f1"],
        rng=1,
    )
    assert rep.summary["classes"] == ["other", "question", "reflection"]
    assert rep.person_rates is None and rep.to_html().count("<img ") == 1
    assert "| Class | Metric |" in rep.to_markdown()


def test_warnings_are_listed_and_issued_again():
    y_true = [1, 1, 0, 0, 1, 0, 0, 0]
    y_pred = [1, 0, 1, 0, 0, 0, 0, 0]
    by = ["a", "a", "a", "a", "b", "b", "b", "b"]  # b has no classifier positive
    with pytest.warns(pc.UndefinedMetricWarning, match="left out of the report"):
        rep = publishing.validation_report(
            y_true, y_pred, by=by, metrics=["precision", "mcc"], differences=False, rng=1
        )
    assert any("left out of the report" in w for w in rep.warnings)
    assert rep.warnings[0].startswith("UndefinedMetricWarning: ")
    assert html.escape(rep.warnings[0]) in rep.to_html()


def test_a_report_without_any_metric_is_refused_saying_why():
    # an empty table is no report (as perfci.report and `perfci report` refuse it)
    with pytest.raises(ValueError, match="no metric could be reported: recall"):
        publishing.validation_report([0, 0, 0, 0], [0, 1, 0, 0], metrics=["recall"])


# ---------------------------------------------------------------- LaTeX, Markdown


def test_latex_is_booktabs_with_one_cell_per_column_and_escapes():
    y_true = [1, 1, 0, 0, 1, 0, 1, 1, 0, 0] * 4
    y_pred = [1, 0, 0, 1, 1, 0, 1, 1, 0, 1] * 4
    by = ["a&b", "c%d_e"] * 20
    table = pc.report(y_true, y_pred, by=by, metrics=["recall", "balanced_accuracy"], rng=1)
    text = publishing.latex_table(table, names={"by": "site_#1"})
    assert text.count(r"\begin{table}") == text.count(r"\end{table}") == 1
    body = text.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
    spec = re.search(r"\\begin\{tabular\}\{([lr]+)\}", text).group(1)
    assert [text.count(rule) for rule in (r"\toprule", r"\midrule", r"\bottomrule")] == [1, 1, 1]
    assert len(body) == len(table)
    for line in body:
        assert line.endswith(r" \\") and len(re.split(r"(?<!\\)&", line)) == len(spec)
    assert r"a\&b" in text and r"c\%d\_e" in text and r"balanced\_accuracy" in text
    assert r"95\% CI" in text and r"Site\_\#1" in text
    assert "a&b" not in text and "c%d_e" not in text
    assert latex_text("~^\\{}$") == r"\textasciitilde{}\textasciicircum{}\textbackslash{}\{\}\$"


def test_a_report_writes_all_its_tables_in_latex(nested):
    text = nested.to_latex()
    keys = re.findall(r"\\label\{tab:perfci-(\w+)\}", text)
    assert keys == ["metrics", "differences", "comparison"]
    assert text.count(r"\toprule") == text.count(r"\bottomrule") == 3
    assert r"$^{a}$ agresti\_coull (design=icc\_weighted, df\_adjust=dean\_pagano)" in text


def test_markdown_escapes_pipes_and_keeps_one_cell_per_column():
    y_true, y_pred = [1, 1, 0, 0, 1, 0, 1, 1] * 5, [1, 0, 0, 1, 1, 0, 1, 0] * 5
    table = pc.report(y_true, y_pred, by=["x|y", "z*"] * 20, metrics=["recall"], rng=1)
    lines = [line for line in publishing.markdown_table(table).splitlines() if line.startswith("|")]
    widths = {len(re.split(r"(?<!\\)\|", line)) for line in lines}
    assert len(widths) == 1 and r"x\|y" in "\n".join(lines) and r"z\*" in "\n".join(lines)


def test_short_method_names_and_the_label_parser():
    assert short_method("wilson") == "Wilson"
    assert short_method("bootstrap (scheme=iid, interval=bca, pseudo_count=0)") == (
        "iid BCa bootstrap"
    )
    assert short_method("cluster-robust linearization (persons as clusters)") == (
        "cluster-robust linearization"
    )
    choice = policy.IntervalChoice("agresti_coull", design="icc", df_adjust=None)
    assert parse_label(choice.label) == ("agresti_coull", {"design": "icc", "df_adjust": "None"})
    with pytest.raises(ValueError, match="^`label` must be a method label"):
        short_method(3)


# ------------------------------------------------------------------------ files


def test_save_writes_by_suffix_and_atomically(texts, tmp_path, monkeypatch):
    rep = publishing.validation_report(texts["human"], texts["model"], metrics=["recall"])
    for suffix, start in ((".html", "<!DOCTYPE html>"), (".tex", "% perfci"), (".md", "**Every")):
        assert rep.save(tmp_path / f"r{suffix}").read_text().startswith(start)
    target = tmp_path / "r.html"
    target.write_text("the old report")

    def torn(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", torn)
    with pytest.raises(OSError, match="disk full"):
        rep.save(target)
    assert target.read_text() == "the old report"  # whole or absent, never torn
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "r.md", "r.tex"]


def test_save_refuses_folders_suffixes_and_missing_folders(texts, tmp_path):
    rep = publishing.validation_report(texts["human"], texts["model"], metrics=["recall"])
    (tmp_path / "d.html").mkdir()
    with pytest.raises(ValueError, match=r"^`path` '.*d.html' is a folder; give a file name"):
        rep.save(tmp_path / "d.html")
    with pytest.raises(ValueError, match=r"^`path` must end in .html, .htm, .tex or .md"):
        rep.save(tmp_path / "r.pdf")
    with pytest.raises(ValueError, match="is in a folder that does not exist"):
        rep.save(tmp_path / "nope" / "r.html")


def test_save_figures_writes_each_figure_in_each_format(nested, tmp_path):
    written = nested.save_figures(tmp_path, ("png", "svg"))
    assert [p.name for p in written] == ["metrics.png", "metrics.svg", "persons.png", "persons.svg"]
    with pytest.raises(ValueError, match="^`folder` must be an existing folder"):
        nested.save_figures(tmp_path / "nope")
    with pytest.raises(ValueError, match="^`formats` must be one of"):
        nested.save_figures(tmp_path, ("gif",))


# ---------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"names": ["model"]}, "^`names` must be a mapping"),
        ({"names": {"truth": "h"}}, r"^`names` keys must be some of \['y_true'"),
        ({"names": {"y_true": " "}}, r"^`names\['y_true'\]` must be a non-empty string"),
        ({"title": ""}, "^`title` must be a non-empty string or None"),
        ({"forest_metric": "f1"}, "^`forest_metric` must be one of"),
        ({"forest_metric": "npv", "metrics": ["recall"]}, "^`forest_metric` 'npv' is not a"),
        ({"digits": 0}, "^`digits` must be a positive integer"),
        ({"bayes": "yes"}, "^`bayes` must be True or False"),
        ({"rng": "seed"}, "^`rng` must be a numpy.random.Generator"),
    ],
)
def test_bad_options_name_the_argument(texts, options, match):
    with pytest.raises(ValueError, match=match):
        publishing.validation_report(
            texts["human"], texts["model"], groups=texts["person"], **options
        )


def test_runs_annotators_and_multiclass_comparisons_are_refused(texts):
    runs, annotators = texts[["run1", "run2"]], texts[["human", "human_b"]]
    with pytest.raises(ValueError, match="^`pred_b` must have one label per text: a column per"):
        publishing.validation_report(texts["human"], texts["model"], pred_b=runs)
    with pytest.raises(ValueError, match="^`y_true` with a column per annotator and `y_pred`"):
        publishing.validation_report(annotators, runs)
    for options, name in (
        ({"pred_b": texts["model_b"]}, "pred_b"),
        ({"classifiers": texts[["model_b"]]}, "classifiers"),
        ({"covariates": texts[["site"]]}, "covariates"),
        ({"forest_metric": "recall"}, "forest_metric"),
        ({"weights": np.ones(len(texts))}, "weights"),
    ):
        for y_true, y_pred, what in (
            (annotators, texts["model"], "several annotators"),
            (texts["human"], runs, "repeated runs"),
        ):
            with pytest.raises(ValueError, match=f"^`{name}` is not available with {what}"):
                publishing.validation_report(y_true, y_pred, **options)
    with pytest.raises(ValueError, match="^`pred_b` is compared on binary metrics"):
        publishing.validation_report(
            texts["human_topic"], texts["model_topic"], pred_b=texts["model_topic"]
        )
    with pytest.raises(ValueError, match="^`which` must be one of"):
        publishing.validation_report(texts["human"], texts["model"], metrics=["recall"]).figure("x")
    with pytest.raises(ValueError, match="^`table` must be a table of perfci.report"):
        publishing.latex_table(texts)


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def example_csv(tmp_path, texts):
    path = tmp_path / "texts.csv"
    texts.to_csv(path, index=False)
    return path


def _cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_html_writes_the_report_and_prints_the_table(capsys, example_csv, tmp_path):
    out_file = tmp_path / "report.html"
    common = ["report", example_csv, "--truth", "human", "--pred", "model", "--group", "person"]
    status, out, err = _cli(capsys, *common, "--seed", "1", "--html", out_file)
    assert status == 0 and err == "" and "agresti_coull (design=icc_weighted" in out
    page = out_file.read_text()
    assert page.startswith("<!DOCTYPE html>") and "Validation of model against human" in page
    status, out, err = _cli(capsys, *common, "--html", out_file, "--quiet", "--pred-b", "model_b")
    assert (status, out, err) == (0, "", "") and 'id="table-comparison"' in out_file.read_text()
    status, out, _ = _cli(capsys, *common, "--seed", "1", "--html", out_file, "--format", "latex")
    assert status == 0 and out.count(r"\toprule") == 1 and r"\caption{Every metric" in out


def test_cli_html_escapes_the_files_column_names(capsys, tmp_path, texts):
    hostile = texts.rename(columns={"human": "<truth&>", "person": "p<&>"})
    hostile["p<&>"] = "<b>" + hostile["p<&>"]
    path = tmp_path / "hostile.csv"
    hostile.to_csv(path, index=False)
    out_file = tmp_path / "r.html"
    argv = ["report", path, "--truth", "<truth&>", "--pred", "model", "--group", "p<&>"]
    status, _, _ = _cli(capsys, *argv, "--metrics", "recall", "--html", out_file, "--quiet")
    page = out_file.read_text()
    assert status == 0 and "<truth&>" not in page and "p<&>" not in page
    assert "Validation of model against &lt;truth&amp;&gt;" in page
    assert "Persons (p&lt;&amp;&gt;)" in page


def test_cli_latex_and_markdown_tables_without_html(capsys, example_csv):
    argv = ["report", example_csv, "--truth", "human", "--pred", "model", "--metrics", "recall"]
    status, out, _ = _cli(capsys, *argv, "--format", "latex")
    table = pc.report(pc.load_example()["human"], pc.load_example()["model"], metrics=["recall"])
    assert status == 0 and out == publishing.latex_table(table)
    status, out, _ = _cli(capsys, *argv, "--format", "markdown", "--by", "site")
    assert status == 0 and out.splitlines()[2].startswith("| Site | Metric |")


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--pred-b", "model_b"], "`--pred-b` adds a paired comparison to the HTML report"),
        (["--html", "out.txt"], r"`--html` must end in .html or .htm; got 'out.txt'"),
        (["--html", "{tmp}"], "`--html` '.*' is a folder; give a file name"),
        (["--html", "{tmp}/no/r.html"], "`--html` '.*' is in a folder that does not exist"),
        (
            ["--html", "r.html", "--pred", "run1", "run2", "--truth", "human", "human_b"],
            r"`--html` takes several `--truth` \(annotators\) or `--pred` columns \(runs\), not",
        ),
        (["--html", "r.html", "--pred", "run1", "run2", "--pred-b", "model_b"], "`--pred-b` is"),
        (["--html", "r.html", "--truth", "human", "human_b", "--covariates", "site"], "`--cov"),
        (["--title", "A page"], "`--title` titles the HTML report: it needs `--html`"),
        (["--html", "r.html", "--title", " "], "`--title` must be a non-empty text; got ' '"),
        (["--html", "{tmp}/r.html", "--pred-b", "nope"], "`--pred-b` column 'nope' is not in"),
    ],
)
def test_cli_html_errors_name_the_flag(capsys, example_csv, tmp_path, monkeypatch, extra, match):
    monkeypatch.chdir(tmp_path)  # relative --html names would land here
    # a flag is given once: the extra arguments' --truth or --pred replace the base ones
    base = {"--truth": "human", "--pred": "model"}
    argv = ["report", example_csv]
    for flag, column in base.items():
        if flag not in extra:
            argv += [flag, column]
    status, out, err = _cli(capsys, *argv, *[e.format(tmp=tmp_path) for e in extra])
    assert status == 2 and out == "" and re.search(match, err), err
    assert not list(tmp_path.glob("*.html"))


# ------------------------------------------------------------ a headless browser


def _browser() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


needs_browser = pytest.mark.skipif(_browser() is None, reason="no chromium on the PATH")

#: Added to a copy of the page under test: after the load event it writes what loaded
#: (each image's natural size) and what failed (errors, in the capture phase, where a
#: failed image's error event is seen) into the page, which --dump-dom prints.
PROBE = """<script>
window.perfciErrors = [];
window.addEventListener("error", function (e) {
  var t = e.target;
  window.perfciErrors.push(t && t.tagName ? "failed to load " + t.tagName : String(e.message));
}, true);
window.addEventListener("load", function () {
  var images = Array.prototype.map.call(document.images, function (i) {
    return {complete: i.complete, width: i.naturalWidth, height: i.naturalHeight};
  });
  var out = document.createElement("pre");
  out.id = "perfci-probe";
  out.textContent = JSON.stringify({images: images, errors: window.perfciErrors,
    tables: document.querySelectorAll("table").length, text: document.body.innerText.length});
  document.body.appendChild(out);
});
</script>"""


def render(page: Path, workdir: Path) -> dict:
    """Load a page in headless Chromium (no network); return what loaded and what failed."""
    probed = workdir / f"{page.stem}.probed.html"
    probed.write_text(page.read_text().replace("<head>", "<head>" + PROBE, 1))
    argv = [
        _browser(),
        "--headless",
        "--no-sandbox",  # as root, and in containers
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={workdir / 'profile'}",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # nothing may come from the network
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=10000",
        "--dump-dom",
        probed.as_uri(),
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False)
    found = re.search(r'<pre id="perfci-probe">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"the page did not render (status {proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(html.unescape(found.group(1)))
    # every console message: the page has no script, so anything there is an error
    result["console"] = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return result


@needs_browser
def test_the_browser_check_sees_a_broken_page(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><p>x</p>'
        '<img src="data:image/png;base64,AAAA"><img src="missing.png">'
        '<script>console.error("boom"); notAFunction();</script></body></html>'
    )
    result = render(page, tmp_path)
    assert [i["width"] for i in result["images"]] == [0, 0]
    assert len(result["errors"]) == 3 and len(result["console"]) == 2


@needs_browser
@pytest.mark.slow
def test_the_bayes_html_report_renders_in_a_browser_with_every_image(capsys, example_csv, tmp_path):
    out_file = tmp_path / "out.html"
    argv = ["report", example_csv, "--truth", "human", "--pred", "model", "--group", "person"]
    status, _, _ = _cli(capsys, *argv, "--seed", "1", "--html", out_file, "--bayes", "--quiet")
    assert status == 0
    result = render(out_file, tmp_path)
    assert len(result["images"]) == 3  # metrics, persons and their Bayesian forest
    assert all(i["complete"] and i["width"] > 0 and i["height"] > 0 for i in result["images"])
    assert result["errors"] == [] and result["console"] == []
    assert result["tables"] == 4 and result["text"] > 5000  # data, confusion, design, metrics


# --------------------------------------------------------------- many classifiers


@pytest.fixture(scope="module")
def many(texts):
    others = texts[["model_b", "run2", "run3"]]
    report = publishing.validation_report(
        texts["human"],
        texts["model"],
        groups=texts["person"],
        classifiers=others,
        metrics=["recall", "precision", "f1"],
        rng=1,
    )
    return report, others


def test_many_classifiers_are_compare_many_with_the_reported_one_as_baseline(texts, many):
    report, others = many
    preds = {"model": texts["model"], **{c: others[c] for c in others}}
    for metric in ("recall", "precision", "f1"):
        rows = report.many[report.many["metric"] == metric]
        args = {"groups": texts["person"], "baseline": "model"}
        joint = pc.compare_many(texts["human"], preds, metric, **args)
        alone = pc.compare_many(texts["human"], preds, metric, adjust="none", **args)
        np.testing.assert_array_equal(rows["classifier"], joint["classifier"])
        for column in ("difference", "low", "high", "p_adjusted"):
            np.testing.assert_allclose(rows[column], joint[column], rtol=0, atol=1e-12)
        np.testing.assert_allclose(rows["low_unadjusted"], alone["low"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(rows["high_unadjusted"], alone["high"], rtol=0, atol=1e-12)
        # the simultaneous interval contains the unadjusted one
        assert (rows["low"] <= rows["low_unadjusted"]).all()
        assert (rows["high"] >= rows["high_unadjusted"]).all()


def test_many_classifiers_on_the_page_tables_and_paragraph(many):
    report, _ = many
    assert report.figure_names() == ("metrics", "persons", "classifiers")
    assert report.many_metric == "recall"
    page = report.to_html()
    assert '<section id="many"><h2>Comparison of classifiers</h2>' in page
    assert page.count("<img ") == 3 and 'id="figure-classifiers"' in page
    assert "Other classifiers</th><td>model_b, run2, run3" in page.replace("\n", "")
    markdown = report.to_markdown()
    assert "| Metric | Classifier | Estimate | Difference from model |" in markdown
    assert markdown.count("| recall | run2 |") == 1
    cited = re.search(r"persons as clusters \[(\d+)\]\)", report.methods)
    assert cited, report.methods
    assert report.references[int(cited.group(1)) - 1].startswith(
        f"[{cited.group(1)}] Hothorn T, Bretz F, Westfall P (2008)"
    )
    assert "model_b, run2 and run3 were compared with model" in report.methods
    json.dumps(report.to_dict(), allow_nan=False)
    figure = report.figure("classifiers")
    labels = {t.get_text() for t in figure.axes[0].get_yticklabels()}
    assert labels == {"model_b", "run2", "run3"}


def test_many_classifiers_bad_input(texts):
    args = (texts["human"], texts["model"])
    with pytest.raises(ValueError, match="`classifiers` must be a DataFrame or a mapping"):
        publishing.validation_report(*args, classifiers=[1, 0, 1])
    with pytest.raises(ValueError, match="must not repeat the reported classifier 'model'"):
        publishing.validation_report(*args, classifiers=texts[["model", "model_b"]])
    with pytest.raises(ValueError, match="`classifiers` cannot be compared on a weighted"):
        publishing.validation_report(
            *args,
            classifiers=texts[["model_b"]],
            strata=texts["model"],
            stratum_sizes={0: 5000, 1: 1000},
        )
    plain = publishing.validation_report(*args, metrics=["recall"])
    with pytest.raises(ValueError, match="`which` 'classifiers' needs a report with other"):
        plain.figure("classifiers")


def test_cli_report_html_with_classifiers(tmp_path, capsys):
    data = tmp_path / "texts.csv"
    pc.load_example().to_csv(data, index=False)
    out = tmp_path / "page.html"
    argv = ["report", str(data), "--truth", "human", "--pred", "model", "--group", "person"]
    assert main([*argv, "--html", str(out), "--classifiers", "model_b", "run2", "--quiet"]) == 0
    page = out.read_text()
    assert "Comparison of classifiers" in page and 'id="figure-classifiers"' in page
    assert main([*argv, "--classifiers", "model_b"]) == 2
    assert "`--classifiers` adds a comparison" in capsys.readouterr().err
    assert main([*argv, "--html", str(out), "--classifiers", "model", "--quiet"]) == 2
    assert "`--classifiers` must name each other classifier once" in capsys.readouterr().err


# ------------------------------------------------------------- the confusion matrix


def _matrix_rows(page: str, key: str = "confusion") -> list[list[str]]:
    return _tables(page)[f"table-{key}"]


def test_the_confusion_matrix_is_that_of_confusion_with_its_totals(texts, nested):
    tp, fp, fn, tn = (int(v) for v in pc.confusion(texts["human"], texts["model"]).counts)
    assert nested.confusion == (
        {
            "reference": "human",
            "classifier": "model",
            "labels": ["1", "0"],
            "binary": True,
            "matrix": [[tp, fn], [fp, tn]],
        },
    )
    rows = _matrix_rows(nested.to_html())
    assert rows[0] == ["Reference: human", "Classifier: model", "Total"]
    assert rows[1] == ["1 (positive)", "0"]
    assert rows[2] == ["1 (positive)", f"tp {tp}", f"fn {fn}", f"{tp + fn}"]
    assert rows[3] == ["0", f"fp {fp}", f"tn {tn}", f"{fp + tn}"]
    assert rows[4] == ["Total", f"{tp + fp}", f"{fn + tn}", "1,069"]
    page = nested.to_html()  # near the top: in the data section, before the metrics
    assert page.index('id="table-confusion"') < page.index('<section id="metrics">')


def test_a_multiclass_confusion_matrix_has_every_class(texts):
    rep = publishing.validation_report(
        texts["human_topic"], texts["model_topic"], metrics=["macro_f1"], rng=1
    )
    counts = pd.crosstab(texts["human_topic"], texts["model_topic"])
    [matrix] = rep.confusion
    assert matrix["labels"] == ["other", "question", "reflection"] and not matrix["binary"]
    assert matrix["matrix"] == counts.to_numpy().tolist()
    rows = _matrix_rows(rep.to_html())
    assert rows[1] == ["other", "question", "reflection"]
    assert rows[-1] == ["Total", *(f"{v:,}" for v in counts.sum(axis=0)), "1,069"]


# ------------------------------------------------------------ several annotators


@pytest.fixture(scope="module")
def annotated(texts):
    return publishing.validation_report(
        texts[["human", "human_b"]],
        texts["model"],
        groups=texts["person"],
        metrics=["recall", "precision"],
        rng=1,
    )


def test_several_annotators_show_the_report_and_each_annotators_table(texts, annotated):
    annotators = texts[["human", "human_b"]]
    table = pc.report(
        annotators, texts["model"], groups=texts["person"], metrics=["recall", "precision"], rng=1
    )
    assert annotated.table.equals(table)  # the new-annotator rows, computed once
    assert set(table["sources"]) == {"texts, persons, annotators"}
    for metric in ("recall", "precision"):
        # analytic intervals and variance components: no random draw, any rng
        expected = pc.annotator_table(annotators, texts["model"], metric, groups=texts["person"])
        rows = annotated.annotators[annotated.annotators["metric"] == metric]
        pd.testing.assert_frame_equal(rows.drop(columns="metric").reset_index(drop=True), expected)
        [new] = rows[rows["reference"] == "new annotator"].to_dict("records")
        [row] = table[table["metric"] == metric].to_dict("records")
        assert (new["estimate"], new["low"], new["high"]) == (
            row["estimate"],
            row["low"],
            row["high"],
        )
    assert annotated.person_rates is None and annotated.figure_names() == ("metrics",)
    assert annotated.title == "Validation of model against human and human_b"
    json.dumps(annotated.to_dict(), allow_nan=False)


def test_several_annotators_have_a_matrix_each_and_their_summary(texts, annotated):
    for matrix, name in zip(annotated.confusion, ("human", "human_b"), strict=True):
        coded = texts[name].notna()
        tp, fp, fn, tn = pc.confusion(texts.loc[coded, name], texts.loc[coded, "model"]).counts
        assert matrix["reference"] == name and matrix["matrix"] == [[tp, fn], [fp, tn]]
    summary = annotated.summary
    assert summary["annotators"] == ["human", "human_b"]
    assert summary["annotator_texts"] == [int(texts[c].notna().sum()) for c in ("human", "human_b")]
    assert summary["annotator_positives"] == [int(texts[c].sum()) for c in ("human", "human_b")]
    assert summary["reference_positives"] is None and summary["persons"] == 40
    page = annotated.to_html()
    assert {"table-confusion", "table-confusion-2", "table-annotators"} <= set(_tables(page))
    assert "human coded 1,069 texts, 251 positive; human_b coded 649 texts" in page


def test_the_page_of_annotators_has_their_section_and_sentence(annotated):
    page = annotated.to_html()
    assert '<section id="annotators"><h2>Annotators</h2>' in page
    assert page.index('<section id="annotators">') < page.index('<section id="figures">')
    rows = _tables(page)["table-annotators"]
    assert rows[0] == ["Reference", "Estimate", "95% CI", "Method", "Sources", "Texts"]
    assert rows[1] == ["Metric: recall"]
    assert [r[0] for r in rows[2:7]] == [
        "human", "human_b", "majority", "these annotators", "new annotator",
    ]  # fmt: skip
    assert rows[6][4] == "texts, persons, annotators" and rows[2][4] == "texts, persons"
    cited = re.search(r"Satterthwaite's degrees of freedom \[(\d+)\]", annotated.methods)
    assert cited, annotated.methods
    number = int(cited.group(1))
    assert annotated.references[number - 1].startswith(f"[{number}] Satterthwaite, F. E. (1946)")
    assert "those of 2 annotators (human and human_b; texts coded: human 1,069, human_b 649)" in (
        annotated.methods
    )
    assert "| Metric | Reference | Estimate | 95% CI | Method | Sources | Texts |" in (
        annotated.to_markdown()
    )


def test_cli_html_of_several_annotators(capsys, example_csv, tmp_path):
    out_file = tmp_path / "annotators.html"
    argv = ["report", example_csv, "--truth", "human", "human_b", "--pred", "model"]
    status, out, err = _cli(
        capsys, *argv, "--group", "person", "--metrics", "recall", "--html", out_file, "--quiet"
    )
    assert (status, out, err) == (0, "", "")
    page = out_file.read_text()
    assert "<h1>Validation of model against human and human_b</h1>" in page
    assert '<section id="annotators">' in page and 'id="table-confusion-2"' in page


# ----------------------------------------------------------------- repeated runs


@pytest.fixture(scope="module")
def repeated(texts):
    return publishing.validation_report(
        texts["human"],
        texts[["run1", "run2", "run3"]],
        groups=texts["person"],
        metrics=["recall", "f1", "kappa"],
        rng=1,
    )


def test_repeated_runs_show_the_runs_interval_and_each_runs_estimate(texts, repeated):
    runs = texts[["run1", "run2", "run3"]]
    table = pc.report(
        texts["human"], runs, groups=texts["person"], metrics=["recall", "f1", "kappa"], rng=1
    )
    assert repeated.table.equals(table)
    for metric in ("recall", "f1", "kappa"):
        ci = pc.runs_ci(texts["human"], runs, metric, groups=texts["person"])
        [row] = table[table["metric"] == metric].to_dict("records")
        assert row["sources"] == ", ".join(ci.sources) == "texts, persons, runs"
        assert (row["low"], row["high"]) == pytest.approx((ci.low, ci.high), abs=1e-12)
        each = repeated.runs[repeated.runs["metric"] == metric]
        assert each["run"].tolist() == ["run1", "run2", "run3"]
        np.testing.assert_allclose(each["estimate"], ci.run_estimates, rtol=0, atol=1e-12)
        assert each["estimate"].mean() == pytest.approx(row["estimate"], abs=1e-12)
    assert repeated.summary["runs"] == ["run1", "run2", "run3"]
    assert repeated.summary["run_positives"] == [int(texts[c].sum()) for c in runs]
    assert [m["classifier"] for m in repeated.confusion] == ["run1", "run2", "run3"]
    assert repeated.title == "Validation of run1, run2 and run3 against human"
    json.dumps(repeated.to_dict(), allow_nan=False)


def test_the_page_of_repeated_runs_has_their_section_and_sentence(repeated):
    page = repeated.to_html()
    assert '<section id="runs"><h2>Repeated runs</h2>' in page
    rows = _tables(page)["table-runs"]
    assert rows[0] == ["Metric", "New run", "95% CI", "Method", "Sources", "run1", "run2", "run3"]
    assert rows[1][:2] == ["recall", "0.888"] and rows[1][4:] == [
        "texts, persons, runs", "0.880", "0.912", "0.873",
    ]  # fmt: skip
    assert "The classifier was run 3 times on every text (run1, run2 and run3)" in repeated.methods
    assert "the intervals include the variation of texts, persons and runs" in repeated.methods


def test_many_runs_get_a_table_of_their_own(texts):
    rng = np.random.default_rng(5)
    runs = pd.DataFrame(
        {
            f"temperature-0.7-seed-{r:02d}": np.where(
                rng.random(len(texts)) < 0.05, 1 - texts["model"], texts["model"]
            )
            for r in range(12)
        }
    )
    rep = publishing.validation_report(texts["human"], runs, metrics=["recall", "f1"], rng=1)
    tables = _tables(rep.to_html())
    assert tables["table-runs"][0] == ["Metric", "New run", "95% CI", "Method", "Sources"]
    each = tables["table-runs-per-run"]
    assert each[0] == ["Run", "recall", "f1"] and len(each) == 13
    assert each[1][0] == "temperature-0.7-seed-00"


def test_cli_html_of_a_long_table_of_runs(capsys, tmp_path, texts):
    long = texts.melt(
        id_vars=["text_id", "person", "human"], value_vars=["run1", "run2", "run3"],
        var_name="run", value_name="label",
    )  # fmt: skip
    path = tmp_path / "runs_long.csv"
    long.to_csv(path, index=False)
    out_file = tmp_path / "runs.html"
    argv = ["report", path, "--truth", "human", "--pred", "label", "--run", "run"]
    argv += ["--text", "text_id", "--group", "person", "--metrics", "recall", "--seed", "1"]
    status, out, err = _cli(capsys, *argv, "--html", out_file, "--quiet")
    assert (status, out, err) == (0, "", "")
    page = out_file.read_text()
    assert "<h1>Validation of label against human</h1>" in page
    assert _tables(page)["table-runs"][0][-3:] == ["label[run1]", "label[run2]", "label[run3]"]


# ---------------------------------------------------------- title and warnings


def test_the_title_is_given_and_escaped(texts, capsys, example_csv, tmp_path):
    rep = publishing.validation_report(
        texts["human"], texts["model"], metrics=["recall"], title="Coder <b> & \u202e model"
    )
    page = rep.to_html()
    shown = "Coder &lt;b&gt; &amp; \\u202e model"
    assert f"<title>{shown}</title>" in page and f"<h1>{shown}</h1>" in page
    out_file = tmp_path / "titled.html"
    argv = ["report", example_csv, "--truth", "human", "--pred", "model", "--metrics", "recall"]
    status, _, _ = _cli(capsys, *argv, "--html", out_file, "--title", "A <page>", "--quiet")
    assert status == 0 and "<h1>A &lt;page&gt;</h1>" in out_file.read_text()


def test_no_warning_is_said_in_the_texts_colour_not_the_warnings(texts):
    rep = publishing.validation_report(texts["human"], texts["model"], metrics=["recall"])
    assert rep.warnings == ()
    page = rep.to_html()
    assert '<ul class="warnings">' not in page
    assert '<h3>Warnings raised while computing</h3><p class="none">None.</p>' in page
    css = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    assert ".warnings li { color" in css and ".none" not in css  # the body's colour


# -------------------------------------------------------------- many persons


@pytest.fixture(scope="module")
def crowd():
    """150 persons of 3 to 24 texts: more than a forest can name."""
    rng = np.random.default_rng(3)
    sizes = rng.integers(3, 25, 150)
    person = np.repeat([f"person-{i:03d}" for i in range(150)], sizes)
    human = (rng.random(person.size) < 0.4).astype(int)
    human[np.r_[0, np.cumsum(sizes)[:-1]]] = 1  # every person has a human positive
    rate = np.repeat(rng.beta(8, 2, 150), sizes)
    model = np.where(human == 1, rng.random(person.size) < rate, rng.random(person.size) < 0.1)
    return publishing.validation_report(
        human, model.astype(int), groups=person, metrics=["recall"], bayes=True,
        bayes_sampler="grid", rng=1,
    )  # fmt: skip


def _tick_labels_apart(figure) -> list:
    """The y tick labels of a figure, checked not to overlap once drawn."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    labels = [t for t in figure.axes[0].get_yticklabels() if t.get_text()]
    boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.y0)
    assert all(a.y1 <= b.y0 for a, b in zip(boxes, boxes[1:], strict=False)), "labels overlap"
    return labels


@pytest.mark.parametrize("which", ["persons", "bayes_persons"])
def test_a_forest_of_150_persons_ranks_them_with_few_labels_apart(crowd, which):
    import matplotlib.pyplot as plt

    assert len(crowd.person_rates) == 150
    figure = crowd.figure(which)
    labels = _tick_labels_apart(figure)
    assert 2 <= len(labels) <= 7  # ranks, not 150 (or every third) person ids
    assert labels[0].get_text() == "1" and not any("person" in t.get_text() for t in labels)
    assert figure.axes[0].get_ylabel() == "150 persons, ranked by their rate (1: the highest)"
    assert len(figure.axes[0].texts) == 0  # no column of y/n beside unnamed rows
    plt.close(figure)


def test_a_forest_of_few_persons_names_each(nested):
    import matplotlib.pyplot as plt

    figure = nested.figure("persons")
    labels = _tick_labels_apart(figure)
    assert {t.get_text() for t in labels} == set(nested.person_rates["person"])
    plt.close(figure)


def test_the_page_of_150_persons_says_they_are_ranked(crowd):
    page = crowd.to_html()
    assert page.count("with more than 60 persons the rows are ranked, not named") == 2


# --------------------------------------------------------------- Bayesian forest


def test_the_bayesian_forest_is_the_forest_metrics_beta_binomial(texts):
    rep = publishing.validation_report(
        texts["human"], texts["model"], groups=texts["person"], metrics=["recall", "f1"],
        bayes=True, bayes_sampler="grid", rng=1,
    )  # fmt: skip
    assert rep.figure_names() == ("metrics", "persons", "bayes_persons")
    fit = rep.bayes_fit
    assert fit.sampler == "grid" and list(fit.successes) == list(rep.person_rates["successes"])
    [row] = rep.table[rep.table["method"] == "bayes beta-binomial, population (grid, eti)"].to_dict(
        "records"
    )
    band = fit.interval("population", "eti", 0.95)
    # fitted again (report keeps rows, not fits), from another stream: the same posterior
    # up to its 4,000 draws' Monte Carlo error (0.004 at the low end here)
    assert (band.estimate, band.low, band.high) == pytest.approx(
        (row["estimate"], row["low"], row["high"]), abs=0.01
    )
    figure = rep.figure("bayes_persons")
    shown = {t.get_text() for t in figure.axes[0].get_yticklabels()}
    assert shown == set(rep.person_rates["person"])
    page = rep.to_html()
    assert page.count("<img ") == 3 and 'id="figure-bayes_persons"' in page
    assert html.escape("beta-binomial model of the table's Bayesian row") in page
    plain = publishing.validation_report(texts["human"], texts["model"], metrics=["recall"])
    with pytest.raises(ValueError, match="^`which` 'bayes_persons' needs a report with `bayes`"):
        plain.figure("bayes_persons")


# ------------------------------------------------------------------ printing


#: Added to a copy of the page to print: every cell with text gets its text wrapped in a
#: link to a made-up address naming the cell (table, row, column), and the page's title
#: says how many cells there are. Chromium writes each link of a printed page as a link
#: annotation with the rectangle the text was printed in, and writes none for text it
#: did not print (cut off at the page's edge or hidden in a scrolled box); the PDF's
#: /Title is the document's title.
PRINT_PROBE = """<script>
document.addEventListener("DOMContentLoaded", function () {
  var cells = 0;
  Array.prototype.forEach.call(document.querySelectorAll("table"), function (table, t) {
    Array.prototype.forEach.call(table.rows, function (row, r) {
      Array.prototype.forEach.call(row.cells, function (cell, c) {
        if (!cell.textContent.trim()) { return; }
        var a = document.createElement("a");
        a.href = "https://cell.invalid/" + (table.id || "t" + t) + "/" + r + "/" + c;
        while (cell.firstChild) { a.appendChild(cell.firstChild); }
        cell.appendChild(a);
        cells += 1;
      });
    });
  });
  document.title = "cells " + cells;
});
</script>"""
#: The page's @page margin left and right, in points (11 mm).
PRINT_MARGIN = 11 / 25.4 * 72


def print_cells(page: Path, workdir: Path) -> tuple[int, dict[str, list[tuple[float, ...]]], float]:
    """Print a page to PDF in headless Chromium; return its cells and where each printed.

    Returns the number of cells with text, each printed cell's rectangles (x0, y0, x1,
    y1 in points) by its address, and the page width.
    """
    probed = workdir / f"{page.stem}.print.html"
    probed.write_text(page.read_text().replace("<head>", "<head>" + PRINT_PROBE, 1))
    pdf = workdir / f"{page.stem}.pdf"
    argv = [
        _browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={workdir / 'profile'}",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--no-pdf-header-footer",
        "--print-to-pdf-no-header",  # the flag's former name
        f"--print-to-pdf={pdf}",
        probed.as_uri(),
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False)
    assert pdf.exists(), f"no PDF (status {proc.returncode}): {proc.stderr[-2000:]}"
    data = pdf.read_bytes()
    (title,) = re.findall(rb"/Title \(cells (\d+)\)", data)
    widths = {float(m.split()[2]) for m in re.findall(rb"/MediaBox \[([^\]]*)\]", data)}
    assert len(widths) == 1, widths
    printed: dict[str, list[tuple[float, ...]]] = {}
    for rect, address in re.findall(
        rb"/Rect \[([^\]]*)\][^>]*?/URI \(https://cell\.invalid/([^)]*)\)", data, re.S
    ):
        printed.setdefault(address.decode(), []).append(tuple(map(float, rect.split())))
    return int(title), printed, widths.pop()


def lost_cells(page: Path, workdir: Path) -> list[str]:
    """Return the cells of a page's tables that its printed PDF lacks or cuts off."""
    cells, printed, width = print_cells(page, workdir)
    assert width == pytest.approx(595, abs=1)  # A4, from the page's @page
    outside = [
        address
        for address, rects in printed.items()
        if any(x0 < PRINT_MARGIN - 1 or x1 > width - PRINT_MARGIN + 1 for x0, _, x1, _ in rects)
    ]
    missing = cells - len(printed)
    return outside + [f"{missing} cells not printed"] * (missing > 0)


@needs_browser
def test_the_print_check_sees_a_column_cut_off(tmp_path):
    columns = "".join(f"<th>column number {i}</th>" for i in range(30))
    page = tmp_path / "cut.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><style>th { white-space: nowrap; }'
        "@page { size: A4; margin: 12mm 11mm; }</style></head><body>"
        "<div style='overflow-x: auto'><table id='wide'><tr>"
        f"{columns}</tr></table></div><table id='narrow'><tr><td>fits</td></tr></table>"
        "</body></html>"
    )
    assert lost_cells(page, tmp_path)  # the right columns are hidden in the scrolled box
    cells, printed, _ = print_cells(page, tmp_path)
    assert cells == 31 and "narrow/0/0" in printed and "wide/0/0" in printed


@needs_browser
@pytest.mark.slow
def test_printing_the_widest_pages_keeps_every_column(texts, annotated, tmp_path):
    # A column is lost when a cell of it with text is not in the printed PDF at all, or
    # is printed outside the page's margins (cut off at the paper's edge): each cell is
    # found by the link annotation Chromium writes for a link around its text
    # (PRINT_PROBE). This needs no PDF library and no text extraction, and it sees what
    # the printer laid out, not an imitation of print in a browser window.
    wide = publishing.validation_report(
        texts["human"],
        texts["model"],
        groups=texts["person"],
        by=texts["site"],
        pred_b=texts["model_b"],
        classifiers=texts[["model_b", "run2", "run3"]],
        metrics=["recall", "precision", "balanced_accuracy", "kappa"],
        bayes=True,
        bayes_sampler="grid",
        bayes_prior_sensitivity=True,
        names={"by": "the clinic where the therapist works", "pred_b": "classifier_b_long_name"},
        rng=1,
    )
    rng = np.random.default_rng(7)
    flipped = {
        f"temperature-0.7-seed-{r:02d}": np.where(
            rng.random(len(texts)) < 0.05, 1 - texts["model"], texts["model"]
        )
        for r in range(8)  # the most runs whose estimates are columns of one table
    }
    runs = publishing.validation_report(
        texts["human"], pd.DataFrame(flipped), groups=texts["person"], rng=1
    )
    for name, report in (("wide", wide), ("annotators", annotated), ("runs", runs)):
        page = report.save(tmp_path / f"{name}.html")
        assert lost_cells(page, tmp_path) == [], name
    headers = _tables(wide.to_html())
    assert headers["table-comparison"][0][-2:] == ["Test", "p"]
    assert (
        "Bayesian model" in headers["table-metrics"][0] and "Notes" in headers["table-metrics"][0]
    )
