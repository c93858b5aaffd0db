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
footer { margin-top: 36px; font-size: 0.8em; color: #777; }
@media print { main { max-width: none; padding: 0; } h2 { break-after: avoid; }
  figure, table { break-inside: avoid; } }
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
        + _design_html(report)
        + "</section>",
        '<section id="metrics"><h2>Metrics</h2>'
        + "".join(_html_table(t, footnotes) for t in tables if t.key == "metrics")
        + "</section>",
        _figures_html(report, level),
    ]
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
    notes = "".join(f"<li>{_e(n)}</li>" for n in report.notes) or "<li>None.</li>"
    caught = "".join(f"<li>{_e(w)}</li>" for w in report.warnings) or "<li>None.</li>"
    sections.append(
        '<section id="notes"><h2>Notes and warnings</h2>'
        f'<h3>Notes on the rows</h3><ul class="notes">{notes}</ul>'
        f'<h3>Warnings raised while computing</h3><ul class="warnings">{caught}</ul>'
        "</section>"
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
    if s["positive"] is not None:
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


def _design_html(report: ValidationReport) -> str:
    """Return the design table: relevant n, persons, ICC, design effect, n_eff per metric."""
    rows = all_texts(report.table)
    rows = rows[~rows["method"].map(is_bayes).astype(bool)]
    nested = report.summary["persons"] is not None
    head = ["Metric", "Relevant n"]
    head += ["Persons", "ICC", "Design effect", "n_eff"] if nested else []
    body = []
    for r in rows.to_dict("records"):
        name = str(r["metric"]) + (f" ({r['class']})" if str(r.get("class", "")) else "")
        cells = [name, count(r["relevant_n"])]
        if nested:
            cells += [
                count(r["persons"]),
                number(r["icc"], 3),
                number(r["design_effect"], 3),
                number(r["n_eff"], 1),
            ]
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
        if nested
        else "."
    )
    return (
        f'<table class="rule" id="table-design"><caption>{_e(caption)}</caption>'
        f"<thead><tr>{heads}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


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
        else:
            persons = 0 if report.person_rates is None else len(report.person_rates)
            caption = (
                f"Figure {position}. The {report.forest_metric} of each of the {persons} "
                f"persons with a relevant text, sorted, with its {level} "
                f"{report.person_method} interval; the circles are the observed rates, "
                "their area proportional to the person's relevant texts; the band is the "
                f"{report.forest_metric} of all persons with its interval in the table."
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
