"""The HTML page of a validation report: its style, tables, figures and sections.

:func:`html_page` writes a :class:`~perfci.publishing.report.ValidationReport` as one page
that needs nothing else: the CSS is inline, the figures are perfci's PNG images inlined
as ``data:`` URLs, and every name, label and message from the data is escaped (:func:`_e`:
control and bidi characters shown as escapes, then HTML's own).
"""

from __future__ import annotations

import base64
import html
import struct
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._core.text import single_line
from .person_figures import PERSONS_NAMED
from .tables import MethodCell, Table, all_texts, count, is_bayes, level_text, number

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from .report import ValidationReport

__all__ = ["html_page"]

#: Pixels an inch of :func:`perfci.plotting.save_figure`'s PNG, and CSS pixels an inch.
_PNG_DPI, _CSS_DPI = 200, 96


# ----------------------------------------------------------------------------- PNG


def _png(fig: Figure) -> bytes:
    """Return a figure as perfci's PNG (:func:`perfci.plotting.save_figure`), in bytes."""
    from ..plotting import save_figure

    with tempfile.TemporaryDirectory() as folder:
        [path] = save_figure(fig, Path(folder) / "figure", ("png",), close=True)
        return path.read_bytes()


def _png_width(data: bytes) -> int:
    """Return the width in pixels of a PNG, from its header."""
    (width,) = struct.unpack(">I", data[16:20])
    return int(width)


# ---------------------------------------------------------------------------- HTML

_CSS = """
:root { color-scheme: light; }
body { margin: 0; background: #fff; color: #1b1b1b; line-height: 1.45;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 28px 32px 56px; }
h1 { font-size: 1.55em; margin: 0 0 4px; }
h2 { font-size: 1.18em; margin: 30px 0 8px; padding-bottom: 3px;
  border-bottom: 1px solid #d8d8d8; }
h3 { font-size: 1em; margin: 16px 0 6px; }
p.meta { color: #555; margin: 0 0 14px; }
table { border-collapse: collapse; font-size: 0.86em; margin: 6px 0 4px; }
div.wide { overflow-x: auto; }
caption { caption-side: top; text-align: left; padding: 0 0 5px; color: #333; }
th, td { padding: 3px 8px; text-align: left; vertical-align: top; white-space: nowrap; }
td.note { white-space: normal; min-width: 9em; }
thead th { border-top: 1.5px solid #222; border-bottom: 1px solid #222; font-weight: 600; }
table.rule > tbody > tr:last-child > td { border-bottom: 1.5px solid #222; }
tr.group th { text-align: left; font-weight: 600; padding-top: 9px;
  border-bottom: 1px solid #bbb; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
td.ci { font-variant-numeric: tabular-nums; }
.bayes { background: #f1f6fb; }
table.facts th { text-align: left; font-weight: 600; padding-left: 0; }
abbr { text-decoration: none; cursor: help; }
sup { font-size: 0.72em; color: #0b5c99; }
.footnotes { font-size: 0.84em; color: #333; margin: 4px 0 18px; padding-left: 0;
  list-style: none; max-width: 1000px; }
.footnotes li { margin: 1px 0; }
figure { margin: 14px 0 24px; }
figure img { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 0.88em; color: #333; margin-top: 6px; max-width: 900px; }
.methods { background: #f6f6f6; border-left: 3px solid #0072B2; padding: 10px 14px;
  max-width: 900px; }
.references { font-size: 0.86em; max-width: 900px; padding-left: 0; list-style: none; }
.warnings li { color: #8a3b00; }
div.matrices { display: flex; flex-wrap: wrap; gap: 4px 28px; }
table.confusion td.num span { color: #666; font-size: 0.86em; }
table.confusion th[scope=row] { text-align: left; font-weight: 600; }
table.confusion tr.total > * { border-top: 1px solid #999; }
footer { margin-top: 36px; font-size: 0.8em; color: #777; }
@page { size: A4; margin: 12mm 11mm 14mm; }
@media print {
  body { font-size: 9.5pt; line-height: 1.3; }
  main { max-width: none; padding: 0; }
  h2 { break-after: avoid; margin-top: 18px; }
  /* every column on the page: the table takes the page's width and its cells wrap,
     where on the screen they keep one line and the table scrolls */
  div.wide { overflow: visible; }
  table { font-size: 7.5pt; width: 100%; table-layout: auto; break-inside: auto; }
  table.facts, table.confusion { width: auto; }
  th, td { white-space: normal; overflow-wrap: anywhere; padding: 1.5pt 3pt; }
  td.num { white-space: nowrap; overflow-wrap: normal; }  /* a number stays whole */
  td.ci { overflow-wrap: normal; }  /* an interval may wrap after its comma */
  td.note { min-width: 0; }
  thead { display: table-header-group; }
  tr { break-inside: avoid; }
  figure { break-inside: avoid; }
  figure img { max-width: 100%; max-height: 240mm; width: auto; }
  .footnotes, .methods, .references, figcaption { max-width: none; }
}
"""


def _e(text: Any) -> str:
    r"""Escape text for HTML: one line, no control character, no markup.

    The policy: line breaks and tabs become spaces and every control or invisible
    format character (NUL, ESC, the bidi controls, ...) is shown as an escape like
    ``\u202e``, not applied (:func:`perfci._core.text.single_line`); then
    :func:`html.escape`, quotes too (the text may go in an attribute).
    """
    return html.escape(single_line(str(text)), quote=True)


def _cell(cell: Any, classes: Sequence[str]) -> str:
    attr = f' class="{" ".join(classes)}"' if classes else ""
    if isinstance(cell, MethodCell):
        text = f'<abbr title="{_e(cell.label)}">{_e(cell.short)}</abbr><sup>{_e(cell.mark)}</sup>'
    else:
        text = _e(cell)
    return f"<td{attr}>{text}</td>"


def _html_table(t: Table, footnotes: Mapping[str, str]) -> str:
    """Return a table as HTML, its method footnotes and numbered notes below it."""
    headers, numeric, rows = list(t.headers), list(t.numeric), [list(r) for r in t.rows]
    group = None
    if t.grouped:  # the subgroup heads its rows instead of filling a column
        group = headers.pop(0)
        numeric.pop(0)
    bayes = (
        set(range(headers.index("Bayes"), headers.index("Bayes") + 3))
        if ("Bayes" in headers)
        else set()
    )
    head = "".join(
        f"<th{' class=num' if n else ''}{' class=bayes' if i in bayes and not n else ''} "
        f'scope="col">{_e(h.strip())}</th>'
        for i, (h, n) in enumerate(zip(headers, numeric, strict=True))
    )
    body, current = [], None
    for row in rows:
        if group is not None:
            value = row.pop(0)
            if value != current:
                body.append(
                    f'<tr class="group"><th colspan="{len(headers)}">{_e(group)}: '
                    f"{_e(value)}</th></tr>"
                )
                current = value
        cells = []
        for i, (cell, n) in enumerate(zip(row, numeric, strict=True)):
            classes = ["num"] if n else []
            classes += ["ci"] if isinstance(cell, str) and cell.startswith("[") else []
            classes += ["bayes"] if i in bayes else []
            classes += ["note"] if headers[i] in ("Notes", "Bayesian model") else []
            cells.append(_cell(cell, classes))
        body.append("<tr>" + "".join(cells) + "</tr>")
    marks = dict.fromkeys(c.mark for r in t.rows for c in r if isinstance(c, MethodCell))
    notes = [f"<li><sup>{_e(m)}</sup> {_e(footnotes[m])}</li>" for m in marks]
    notes += [f"<li>{_e(m)}. {_e(text)}</li>" for m, text in t.notes]
    return (
        f'<div class="wide"><table class="rule" id="table-{_e(t.key)}">'
        f"<caption>{_e(t.caption)}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        + (f'<ul class="footnotes">{"".join(notes)}</ul>' if notes else "")
    )


def _facts_table(rows: Sequence[tuple[str, str]]) -> str:
    body = "".join(f'<tr><th scope="row">{_e(k)}</th><td>{_e(v)}</td></tr>' for k, v in rows)
    return f'<table class="facts" id="table-data"><tbody>{body}</tbody></table>'


# ---------------------------------------------------------------------------- page


def html_page(
    report: ValidationReport, tables: Sequence[Table], footnotes: Mapping[str, str]
) -> str:
    """Return `report` as one HTML page, with its `tables` and their methods' `footnotes`.

    The page of :meth:`~perfci.publishing.report.ValidationReport.to_html`: the data
    summary, the metrics, the figures, the differences and the comparison, the notes and
    warnings, and the methods paragraph with its references.
    """
    level = level_text(report.confidence_level)
    sections = [
        '<section id="data"><h2>Data</h2>'
        + _facts_table(_facts(report))
        + _confusion_html(report)
        + _design_html(report)
        + "</section>",
        '<section id="metrics"><h2>Metrics</h2>'
        + "".join(_html_table(t, footnotes) for t in tables if t.key == "metrics")
        + "</section>",
    ]
    crossed = {"annotators": "Annotators", "runs": "Repeated runs"}
    sections += [
        f'<section id="{t.key}"><h2>{crossed[t.key]}</h2>'
        + "".join(_html_table(u, footnotes) for u in tables if u.key.startswith(t.key))
        + "</section>"
        for t in tables
        if t.key in crossed
    ]
    sections.append(_figures_html(report, level))
    titles = {
        "differences": "Subgroup differences",
        "comparison": "Paired comparison",
        "many": "Comparison of classifiers",
        "performance": "Performance model",
        "effects": "Effects and the target",
    }
    for t in tables:
        if t.key in titles:
            sections.append(
                f'<section id="{t.key}"><h2>{titles[t.key]}</h2>'
                + _html_table(t, footnotes)
                + "</section>"
            )
    # "None." in the text's colour: the warnings' colour is for warnings
    notes = "".join(f"<li>{_e(n)}</li>" for n in report.notes)
    caught = "".join(f"<li>{_e(w)}</li>" for w in report.warnings)
    sections.append(
        '<section id="notes"><h2>Notes and warnings</h2><h3>Notes on the rows</h3>'
        + (f'<ul class="notes">{notes}</ul>' if notes else '<p class="none">None.</p>')
        + "<h3>Warnings raised while computing</h3>"
        + (f'<ul class="warnings">{caught}</ul>' if caught else '<p class="none">None.</p>')
        + "</section>"
    )
    references = "".join(f"<li>{_e(r)}</li>" for r in report.references)
    sections.append(
        '<section id="methods"><h2>Methods</h2>'
        "<p>A paragraph to paste into a paper, written from the methods used above:</p>"
        f'<p class="methods">{_e(report.methods)}</p>'
        f'<h3>References</h3><ol class="references">{references}</ol></section>'
    )
    version = _e(report.versions["perfci"])
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="perfci {version}">'
        f"<title>{_e(report.title)}</title><style>{_CSS}</style></head>\n"
        f"<body><main><h1>{_e(report.title)}</h1>"
        f'<p class="meta">{_e(level)} intervals · perfci {version} · {_e(report.seed)}</p>\n'
        + "\n".join(sections)
        + f"\n<footer>Made by perfci {version}.</footer></main></body></html>\n"
    )


def _facts(report: ValidationReport) -> list[tuple[str, str]]:
    """Return the data summary's lines: texts, persons and positives."""
    s, names = report.summary, report.names
    facts = [("Texts", f"{s['texts']:,}")]
    if s["persons"] is not None:
        low, median, high = s["texts_per_person"]
        facts.append(
            (
                f"Persons ({names['groups']})",
                f"{s['persons']:,}, with {low:,} to {high:,} texts each (median {median:g})",
            )
        )
    if s.get("annotators") is not None:
        coded = zip(s["annotators"], s["annotator_texts"], s["annotator_positives"], strict=True)
        facts += [
            (
                f"Annotators ({names['y_true']})",
                f"{len(s['annotators'])}, the positive label {s['positive']}: "
                + "; ".join(f"{a} coded {n:,} texts, {k:,} positive" for a, n, k in coded),
            ),
            (
                f"Classifier ({names['y_pred']})",
                f"{s['classifier_positives']:,} positive, "
                f"{s['classifier_positives'] / s['texts']:.1%} of the texts",
            ),
        ]
    elif s.get("runs") is not None:
        runs = zip(s["runs"], s["run_positives"], strict=True)
        facts += [
            (
                f"Reference ({names['y_true']})",
                f"{s['reference_positives']:,} positive ({s['positive']}), "
                f"{s['reference_positives'] / s['texts']:.1%} of the texts",
            ),
            (
                f"Classifier ({names['y_pred']})",
                f"{len(s['runs'])} runs on every text: "
                + "; ".join(f"{r} {k:,} positive" for r, k in runs),
            ),
        ]
    elif s["positive"] is not None:
        facts += [
            (
                f"Reference ({names['y_true']})",
                f"{s['reference_positives']:,} positive ({s['positive']}), "
                f"{s['reference_positives'] / s['texts']:.1%} of the texts",
            ),
            (
                f"Classifier ({names['y_pred']})",
                f"{s['classifier_positives']:,} positive, "
                f"{s['classifier_positives'] / s['texts']:.1%} of the texts",
            ),
        ]
    else:
        facts.append(("Classes", ", ".join(str(c) for c in s["classes"])))
    if s.get("design") is not None:
        given = [names[k] for k in s["design_inputs"]]
        facts.append(
            (
                "Sample design",
                f"{s['design']}; each text weighted by the inverse of its inclusion "
                f"probability ({', '.join(given)}), standing for "
                f"{s['corpus_texts']:,.0f} corpus texts in all",
            )
        )
    if report.comparisons is not None:
        facts.append(("Compared with", names["pred_b"]))
    if report.many is not None and len(report.many):
        others = ", ".join(dict.fromkeys(str(c) for c in report.many["classifier"]))
        facts.append(("Other classifiers", others))
    return facts


def _matrix_html(matrix: Mapping[str, Any], key: str, caption: str) -> str:
    """Return one confusion matrix as a table: reference by rows, classifier by columns."""
    labels, cells = list(matrix["labels"]), [list(r) for r in matrix["matrix"]]
    names = [["tp", "fn"], ["fp", "tn"]] if matrix["binary"] else None
    shown = [f"{labels[0]} (positive)", labels[1]] if matrix["binary"] else labels
    head = (
        f'<tr><th rowspan="2" scope="col">Reference: {_e(matrix["reference"])}</th>'
        f'<th colspan="{len(labels)}" scope="colgroup">Classifier: '
        f'{_e(matrix["classifier"])}</th><th rowspan="2" class="num" scope="col">Total</th></tr>'
        "<tr>" + "".join(f'<th class="num" scope="col">{_e(h)}</th>' for h in shown) + "</tr>"
    )
    body = []
    for i, (label, row) in enumerate(zip(shown, cells, strict=True)):
        tds = "".join(
            '<td class="num">'
            + (f"<span>{names[i][j]}</span> " if names is not None else "")
            + f"{count(v)}</td>"
            for j, v in enumerate(row)
        )
        body.append(
            f'<tr><th scope="row">{_e(label)}</th>{tds}<td class="num">{count(sum(row))}</td></tr>'
        )
    totals = [sum(r[j] for r in cells) for j in range(len(labels))]
    body.append(
        '<tr class="total"><th scope="row">Total</th>'
        + "".join(f'<td class="num">{count(v)}</td>' for v in totals)
        + f'<td class="num">{count(sum(totals))}</td></tr>'
    )
    return (
        f'<table class="confusion rule" id="table-{key}"><caption>{_e(caption)}</caption>'
        f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"
    )


def _confusion_html(report: ValidationReport) -> str:
    """Return the confusion matrix (one per annotator or run) with its totals."""
    matrices = report.confusion
    if not matrices:
        return ""
    s = report.summary
    words = (
        "The confusion matrix: the texts by the reference's label (rows) and the "
        "classifier's (columns), with their totals"
        + (" over all persons" if s["persons"] is not None else "")
        + ("; tp, fp, fn and tn are the true and false positives and negatives" if
           matrices[0]["binary"] else "")
        + ("; the sample's texts, unweighted" if s.get("design") is not None else "")
    )  # fmt: skip
    if len(matrices) == 1:
        return _matrix_html(matrices[0], "confusion", words + ".")
    annotators = s.get("annotators") is not None
    parts = [
        _matrix_html(
            m,
            "confusion" if i == 0 else f"confusion-{i + 1}",
            f"Against {m['reference']}" if annotators else str(m["classifier"]),
        )
        for i, m in enumerate(matrices)
    ]
    per = "annotator (of the texts the annotator coded)" if annotators else "run"
    return (
        f'<p class="matrices">{_e(words)}; one matrix per {per}.</p>'
        f'<div class="matrices">{"".join(parts)}</div>'
    )


def _design_html(report: ValidationReport) -> str:
    """Return the design table: relevant n, persons, ICC, design effect, n_eff per metric.

    A column of ICC, design effect or n_eff that no row has (no interval adjusted for the
    nesting) is left out.
    """
    rows = all_texts(report.table)
    rows = rows[~rows["method"].map(is_bayes).astype(bool)]
    nested = report.summary["persons"] is not None
    adjusted = {
        column: nested and column in rows.columns and bool(rows[column].notna().any())
        for column in ("icc", "design_effect", "n_eff")
    }
    head = ["Metric", "Relevant n"] + (["Persons"] if nested else [])
    head += [h for c, h in (("icc", "ICC"), ("design_effect", "Design effect"),
                            ("n_eff", "n_eff")) if adjusted[c]]  # fmt: skip
    body = []
    for r in rows.to_dict("records"):
        name = str(r["metric"]) + (f" ({r['class']})" if str(r.get("class", "")) else "")
        cells = [name, count(r["relevant_n"])] + ([count(r["persons"])] if nested else [])
        cells += [number(r["icc"], 3)] if adjusted["icc"] else []
        cells += [number(r["design_effect"], 3)] if adjusted["design_effect"] else []
        cells += [number(r["n_eff"], 1)] if adjusted["n_eff"] else []
        body.append(
            "<tr>" + "".join(_cell(c, ["num"] if i else []) for i, c in enumerate(cells)) + "</tr>"
        )
    heads = "".join(
        f'<th{" class=num" if i else ""} scope="col">{_e(h)}</th>' for i, h in enumerate(head)
    )
    caption = "What each metric rests on: its relevant n" + (
        ", the persons with a relevant text and, for the intervals adjusted for the "
        "nesting of texts in persons, the intra-class correlation (ICC), the design "
        "effect and the effective sample size n_eff = n / design effect."
        if any(adjusted.values())
        else ", the persons with a relevant text."
        if nested
        else "."
    )
    return (
        f'<table class="rule" id="table-design"><caption>{_e(caption)}</caption>'
        f"<thead><tr>{heads}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _named(persons: int) -> str:
    """Say, beyond the persons a figure names, that its rows are ranked instead."""
    if persons <= PERSONS_NAMED:
        return ""
    return f"; with more than {PERSONS_NAMED} persons the rows are ranked, not named"


def _figures_html(report: ValidationReport, level: str) -> str:
    figures = []
    for position, name in enumerate(report.figure_names(), 1):
        data = _png(report.figure(name))
        shown = round(_png_width(data) * _CSS_DPI / _PNG_DPI)  # its size in inches
        if name == "metrics":
            bayes = bool(report.table["method"].map(is_bayes).astype(bool).any())
            caption = (
                f"Figure {position}. Every metric over all texts with its {level} interval"
                + (" (the Bayesian credible intervals marked Bayes)" if bayes else "")
                + ", in the order of the table."
            )
            alt = f"Forest plot of every metric with its {level} interval"
        elif name == "effects":
            metric = (report.performance or {}).get("metric")
            caption = (
                f"Figure {position}. The performance model's effects on {metric} for new "
                f"persons, each with its {level} credible interval; the vertical line is no "
                "difference."
            )
            alt = f"Forest plot of the effects of the covariates on {metric}"
        elif name == "classifiers":
            caption = (
                f"Figure {position}. Each other classifier's difference in "
                f"{report.many_metric} from {report.names['y_pred']} (the classifier minus "
                f"{report.names['y_pred']}), with its simultaneous {level} interval (the "
                "intervals hold together over the comparisons) and, inner, the unadjusted "
                "interval of the comparison alone; the vertical line is no difference."
            )
            alt = f"Forest plot of the differences in {report.many_metric} between classifiers"
        elif name == "bayes_persons":
            persons = 0 if report.person_rates is None else len(report.person_rates)
            caption = (
                f"Figure {position}. The Bayesian {report.forest_metric} of each of the "
                f"{persons} persons: the posterior median of the person's rate under the "
                "hierarchical beta-binomial model of the table's Bayesian row (pulled from "
                f"the person's observed rate, the circle, towards the others), with its 50% "
                f"and {level} credible intervals; the band is the model's population "
                f"{report.forest_metric} with its {level} interval{_named(persons)}."
            )
            alt = f"Forest plot of the posterior {report.forest_metric} of each person"
        else:
            persons = 0 if report.person_rates is None else len(report.person_rates)
            caption = (
                f"Figure {position}. The {report.forest_metric} of each of the {persons} "
                f"persons with a relevant text, sorted, with its {level} "
                f"{report.person_method} interval; the circles are the observed rates, "
                "their area proportional to the person's relevant texts; the band is the "
                f"{report.forest_metric} of all persons with its interval in the "
                f"table{_named(persons)}."
            )
            alt = f"Forest plot of the {report.forest_metric} of each person"
        encoded = base64.b64encode(data).decode("ascii")
        figures.append(
            f'<figure id="figure-{name}"><img src="data:image/png;base64,{encoded}" '
            f'width="{shown}" alt="{_e(alt)}"><figcaption>{_e(caption)}</figcaption>'
            "</figure>"
        )
    if not figures:
        figures.append("<p>No figure: every metric was left out of the report.</p>")
    return '<section id="figures"><h2>Figures</h2>' + "".join(figures) + "</section>"
