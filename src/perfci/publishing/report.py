"""The validation report: one self-contained HTML page, and its tables, figures and methods.

:func:`validation_report` runs :func:`perfci.report` once (and :func:`perfci.compare` per
metric with a second classifier) and keeps what they return; a :class:`ValidationReport`
shows only those public results: the data summary, the tables
(:mod:`perfci.publishing.tables`), forest figures drawn by :func:`perfci.plotting.forest`,
the notes and the warnings raised while computing, and the methods paragraph
(:mod:`perfci.publishing.methods`).
"""

from __future__ import annotations

import base64
import dataclasses
import html
import struct
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .. import __version__, policy
from .._core import registry
from .._core.files import write_bytes_atomic
from .._core.validation import check_positive_int, check_rng
from .methods import Choices, methods_paragraph
from .tables import (
    ANALYTIC,
    Marks,
    MethodCell,
    Table,
    all_texts,
    comparison_table,
    count,
    is_bayes,
    level_text,
    metric_tables,
    number,
    parse_label,
    prior_of,
    render_latex,
    render_markdown,
    short_method,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["ValidationReport", "validation_report"]

#: The inputs a report names, and the names it gives them when they have none.
NAME_DEFAULTS = {
    "y_true": "reference",
    "y_pred": "classifier",
    "pred_b": "classifier B",
    "groups": "person",
    "by": "subgroup",
    "score": "score",
}
#: What a report writes each file type with.
SUFFIXES = (".html", ".htm", ".tex", ".md")
#: Pixels an inch of :func:`perfci.plotting.save_figure`'s PNG, and CSS pixels an inch.
_PNG_DPI, _CSS_DPI = 200, 96


# --------------------------------------------------------------------------- figures


def _figure_text(text: Any) -> str:
    """Return text for a matplotlib label: a ``$`` is a dollar, never the start of math."""
    return str(text).replace("$", r"\$")


def _bayes_suffix(label: str) -> str:
    """Return how the metrics' figure marks a Bayesian row (and its prior, if not the default)."""
    prior = prior_of(label)
    return f" (Bayes, prior {prior})" if prior else " (Bayes)"


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
    """Escape text for HTML (quotes too: it may go in an attribute)."""
    return html.escape(str(text), quote=True)


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


# -------------------------------------------------------------------------- results


@dataclass(frozen=True, eq=False)
class ValidationReport:
    """A classifier's validation, ready to publish: tables, figures, notes and methods.

    Made by :func:`validation_report`; every number in it is from the public results of
    :func:`perfci.report` (:attr:`table`), :func:`perfci.compare` (:attr:`comparisons`),
    :func:`perfci.confusion` (:attr:`summary`) and :func:`perfci.proportion_ci`
    (:attr:`person_rates`).

    Attributes
    ----------
    table : pandas.DataFrame
        The table of :func:`perfci.report`, as it returned it.
    comparisons : pandas.DataFrame or None
        With a second classifier, one row per binary metric of :func:`perfci.compare`:
        ``metric``, ``estimate_a``, ``estimate_b``, ``difference``, ``low``, ``high``,
        ``method``, ``test``, ``p_value``, ``n_texts``, ``persons``.
    summary : dict
        ``texts``, ``persons`` (None for independent texts), ``texts_per_person``
        (smallest, median, largest; None for independent texts), ``positive`` (the
        positive label; None for multi-class labels), ``reference_positives``,
        ``classifier_positives`` and ``classes`` (multi-class labels).
    person_rates : pandas.DataFrame or None
        For texts nested in persons and binary labels, each person's ``successes``,
        ``trials`` (relevant texts), rate (``estimate``) of :attr:`forest_metric` and its
        interval (``low``, ``high``), by ``person``; persons without a relevant text are
        left out.
    forest_metric : str or None
        The metric of the per-person forest; None where there is none.
    person_method : str or None
        The interval of each person's rate: the analytic method of the metric's row.
    notes : tuple of str
        The notes of the tables' rows, each naming its row (a note every row of one
        method shares is in that method's footnote instead), and the comparisons left
        out.
    warnings : tuple of str
        Every warning raised while the report was computed, as ``Category: message``,
        each once; they were issued again after it.
    methods : str
        The methods paragraph, citing :attr:`references` by number.
    references : tuple of str
        The references the paragraph cites, numbered in the order cited.
    names : dict
        Display names of the inputs (``y_true``, ``y_pred``, ``pred_b``, ``groups``,
        ``by``, ``score``).
    title : str
        The report's title.
    confidence_level : float
        The level of every interval.
    seed : str
        How the random draws were seeded: ``"seed 1"``, ``"no seed"`` or a generator.
    versions : dict
        perfci's version and those of NumPy, SciPy, pandas and matplotlib (and PyMC
        and nutpie when an MCMC sampler was used).
    digits : int
        Decimals of estimates and interval ends in the tables.

    Examples
    --------
    One report, its outputs (the methods below):

    >>> import tempfile
    >>> from pathlib import Path
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> rep = pc.validation_report(texts["human"], texts["model"], texts["person"],
    ...                            metrics=["recall", "f1"], rng=1)
    >>> rep.figure_names()
    ('metrics', 'persons')
    >>> rep.to_markdown().splitlines()[2]
    '| Metric | Estimate | 95% CI | Method | n | Persons |'
    >>> rep.to_latex().count("begin{table}"), rep.to_html().startswith("<!DOCTYPE html>")
    (1, True)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     page = rep.save(Path(folder) / "report.html")
    ...     files = rep.save_figures(folder, "svg")
    ...     (page.name, [f.name for f in files])
    ('report.html', ['metrics.svg', 'persons.svg'])
    """

    table: pd.DataFrame
    comparisons: pd.DataFrame | None
    summary: dict[str, Any]
    person_rates: pd.DataFrame | None
    forest_metric: str | None
    person_method: str | None
    notes: tuple[str, ...]
    warnings: tuple[str, ...]
    methods: str
    references: tuple[str, ...]
    names: dict[str, str]
    title: str
    confidence_level: float
    seed: str
    versions: dict[str, str]
    digits: int = 3

    def _tables(self) -> tuple[list[Table], Marks]:
        """Return the report's tables and the footnote marks of their methods."""
        marks = Marks()
        level, digits = self.confidence_level, self.digits
        tables = metric_tables(self.table, level, digits, marks, self.names)
        if self.comparisons is not None and len(self.comparisons):
            tables.append(comparison_table(self.comparisons, level, digits, marks, self.names))
        return tables, marks

    def to_latex(self) -> str:
        r"""Return the report's tables as LaTeX booktabs tables.

        The metrics, then the subgroup differences and the paired comparison when there
        are any, as :func:`perfci.publishing.latex_table` writes them; they need
        ``\usepackage{booktabs}``.
        """
        tables, marks = self._tables()
        return render_latex(tables, marks.footnotes())

    def to_markdown(self) -> str:
        """Return the report's tables as Markdown (see :func:`perfci.publishing.markdown_table`)."""
        tables, marks = self._tables()
        return render_markdown(tables, marks.footnotes())

    # ------------------------------------------------------------------ figures

    def figure(self, which: str = "metrics") -> Figure:
        """Draw one of the report's figures; return the matplotlib figure.

        Parameters
        ----------
        which : {"metrics", "persons"}, default "metrics"
            ``"metrics"``: every metric's interval over all texts (and the Bayesian
            ones, labelled so), one row each, in the table's order. ``"persons"``: each
            person's rate of :attr:`forest_metric` with its interval, sorted, the
            observed rates as circles sized by the person's relevant texts, and the
            metric's interval over all persons as a band (texts nested in persons).

        Raises
        ------
        ValueError
            If `which` is not one of these, or is ``"persons"`` in a report without a
            per-person forest (independent texts, multi-class labels, no proportion
            metric).
        """
        from ..plotting import forest

        if which not in ("metrics", "persons"):
            raise ValueError(f"`which` must be one of ['metrics', 'persons']; got {which!r}.")
        level = level_text(self.confidence_level)
        rows = all_texts(self.table)
        if which == "metrics":
            if rows.empty:
                raise ValueError(
                    "`which` 'metrics' needs a metric in the table; every metric was left out "
                    "of the report (its `warnings` say why)."
                )
            labels = [
                _figure_text(
                    f"{r['metric']}"
                    + (f" ({r['class']})" if str(r.get("class", "")) else "")
                    + (_bayes_suffix(str(r["method"])) if is_bayes(r["method"]) else "")
                )
                for r in rows.to_dict("records")
            ]
            ax = forest(
                rows["estimate"].to_numpy(float),
                rows["low"].to_numpy(float),
                rows["high"].to_numpy(float),
                labels=labels,
                sort=False,
                interval_label=f"{level} interval",
                xlabel="value of the metric",
            )
            return cast("Figure", ax.figure)
        rates, metric = self.person_rates, self.forest_metric
        if rates is None or metric is None:
            raise ValueError(
                "`which` 'persons' needs texts nested in persons and a proportion metric of "
                "binary labels; this report has no per-person forest."
            )
        [row] = rows[
            (rows["metric"] == metric) & ~rows["method"].map(is_bayes).astype(bool)
        ].to_dict("records")
        ax = forest(
            rates["estimate"].to_numpy(float),
            rates["low"].to_numpy(float),
            rates["high"].to_numpy(float),
            labels=[_figure_text(p) for p in rates["person"]],
            observed=(rates["successes"].to_numpy(float), rates["trials"].to_numpy(float)),
            band=(float(row["estimate"]), float(row["low"]), float(row["high"])),
            band_label=f"all persons, {short_method(str(row['method']))} {level}",
            interval_label=f"{level} interval of the person ({self.person_method})",
            estimate_label="the person's rate",
            xlabel=_figure_text(f"{metric} of each person"),
        )
        return cast("Figure", ax.figure)

    def figure_names(self) -> tuple[str, ...]:
        """Return the names of the report's figures (the `which` of :meth:`figure`)."""
        if all_texts(self.table).empty:
            return ()
        return ("metrics", "persons") if self.person_rates is not None else ("metrics",)

    def save_figures(
        self, folder: str | Path, formats: str | Sequence[str] = ("png", "pdf")
    ) -> list[Path]:
        """Write the report's figures for a paper; return the files written.

        Parameters
        ----------
        folder : str or path-like
            An existing folder: ``metrics.<format>`` and, with a per-person forest,
            ``persons.<format>`` are written in it by :func:`perfci.plotting.save_figure`
            (each whole or absent, never torn).
        formats : str or sequence of str, default ("png", "pdf")
            Some of :data:`perfci.plotting.FORMATS`.

        Returns
        -------
        list of pathlib.Path
            The files, by figure and then format.

        Raises
        ------
        ValueError
            If `folder` is not an existing folder, or a format is unknown.
        """
        from ..plotting import check_formats, save_figure

        where = Path(folder)
        if not where.is_dir():
            raise ValueError(f"`folder` must be an existing folder; got {str(folder)!r}.")
        wanted = check_formats(formats)  # before any figure is drawn
        written = []
        for which in self.figure_names():
            written += save_figure(self.figure(which), where / which, wanted, close=True)
        return written

    # --------------------------------------------------------------------- HTML

    def to_html(self) -> str:
        """Return the report as one self-contained HTML page.

        The CSS is inline and the figures are PNG images inlined as ``data:`` URLs: the
        page loads nothing, runs no script and names no external address. Every name,
        label and message from the data is escaped.
        """
        level = level_text(self.confidence_level)
        tables, marks = self._tables()
        footnotes = dict(marks.footnotes())
        sections = [
            '<section id="data"><h2>Data</h2>'
            + _facts_table(self._facts())
            + self._design_html()
            + "</section>",
            '<section id="metrics"><h2>Metrics</h2>'
            + "".join(_html_table(t, footnotes) for t in tables if t.key == "metrics")
            + "</section>",
            self._figures_html(level),
        ]
        titles = {"differences": "Subgroup differences", "comparison": "Paired comparison"}
        for t in tables:
            if t.key in titles:
                sections.append(
                    f'<section id="{t.key}"><h2>{titles[t.key]}</h2>'
                    + _html_table(t, footnotes)
                    + "</section>"
                )
        notes = "".join(f"<li>{_e(n)}</li>" for n in self.notes) or "<li>None.</li>"
        caught = "".join(f"<li>{_e(w)}</li>" for w in self.warnings) or "<li>None.</li>"
        sections.append(
            '<section id="notes"><h2>Notes and warnings</h2>'
            f'<h3>Notes on the rows</h3><ul class="notes">{notes}</ul>'
            f'<h3>Warnings raised while computing</h3><ul class="warnings">{caught}</ul>'
            "</section>"
        )
        references = "".join(f"<li>{_e(r)}</li>" for r in self.references)
        sections.append(
            '<section id="methods"><h2>Methods</h2>'
            "<p>A paragraph to paste into a paper, written from the methods used above:</p>"
            f'<p class="methods">{_e(self.methods)}</p>'
            f'<h3>References</h3><ol class="references">{references}</ol></section>'
        )
        version = _e(self.versions["perfci"])
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="perfci {version}">'
            f"<title>{_e(self.title)}</title><style>{_CSS}</style></head>\n"
            f"<body><main><h1>{_e(self.title)}</h1>"
            f'<p class="meta">{_e(level)} intervals · perfci {version} · {_e(self.seed)}</p>\n'
            + "\n".join(sections)
            + f"\n<footer>Made by perfci {version}.</footer></main></body></html>\n"
        )

    def _facts(self) -> list[tuple[str, str]]:
        """Return the data summary's lines: texts, persons and positives."""
        s, names = self.summary, self.names
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
        if self.comparisons is not None:
            facts.append(("Compared with", names["pred_b"]))
        return facts

    def _design_html(self) -> str:
        """Return the design table: relevant n, persons, ICC, design effect, n_eff per metric."""
        rows = all_texts(self.table)
        rows = rows[~rows["method"].map(is_bayes).astype(bool)]
        nested = self.summary["persons"] is not None
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
                "<tr>"
                + "".join(_cell(c, ["num"] if i else []) for i, c in enumerate(cells))
                + "</tr>"
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

    def _figures_html(self, level: str) -> str:
        figures = []
        for position, name in enumerate(self.figure_names(), 1):
            data = _png(self.figure(name))
            shown = round(_png_width(data) * _CSS_DPI / _PNG_DPI)  # its size in inches
            if name == "metrics":
                bayes = bool(self.table["method"].map(is_bayes).astype(bool).any())
                caption = (
                    f"Figure {position}. Every metric over all texts with its {level} interval"
                    + (" (the Bayesian credible intervals marked Bayes)" if bayes else "")
                    + ", in the order of the table."
                )
                alt = f"Forest plot of every metric with its {level} interval"
            else:
                persons = 0 if self.person_rates is None else len(self.person_rates)
                caption = (
                    f"Figure {position}. The {self.forest_metric} of each of the {persons} "
                    f"persons with a relevant text, sorted, with its {level} "
                    f"{self.person_method} interval; the circles are the observed rates, "
                    "their area proportional to the person's relevant texts; the band is the "
                    f"{self.forest_metric} of all persons with its interval in the table."
                )
                alt = f"Forest plot of the {self.forest_metric} of each person"
            encoded = base64.b64encode(data).decode("ascii")
            figures.append(
                f'<figure id="figure-{name}"><img src="data:image/png;base64,{encoded}" '
                f'width="{shown}" alt="{_e(alt)}"><figcaption>{_e(caption)}</figcaption>'
                "</figure>"
            )
        if not figures:
            figures.append("<p>No figure: every metric was left out of the report.</p>")
        return '<section id="figures"><h2>Figures</h2>' + "".join(figures) + "</section>"

    # --------------------------------------------------------------------- files

    def save(self, path: str | Path) -> Path:
        """Write the report to a file, whole or not at all; return its path.

        Parameters
        ----------
        path : str or path-like
            ``.html`` (or ``.htm``): :meth:`to_html`; ``.tex``: :meth:`to_latex`;
            ``.md``: :meth:`to_markdown`. Its folder must exist. The text is written
            beside it and renamed over it, so the file is the old one or the whole new
            one, never torn; a file already there is replaced.

        Returns
        -------
        pathlib.Path
            The file written.

        Raises
        ------
        ValueError
            If `path` is a folder, has another suffix, or is in a folder that does not
            exist.
        """
        target = check_output_path(path, "`path`")
        suffix = target.suffix.lower()
        text = (
            self.to_latex()
            if suffix == ".tex"
            else self.to_markdown()
            if suffix == ".md"
            else self.to_html()
        )
        write_bytes_atomic(target, text.encode("utf-8"))
        return target


def check_output_path(path: Any, name: str, suffixes: Sequence[str] = SUFFIXES) -> Path:
    """Return `path` as a file a report can be written to; raise naming it (`name`).

    It must not be a folder, must end in one of `suffixes`, and its folder must exist.
    """
    try:
        target = Path(path)
    except TypeError:
        raise ValueError(f"{name} must be a file name; got {path!r}.") from None
    if target.is_dir():
        raise ValueError(f"{name} {str(path)!r} is a folder; give a file name.")
    if target.suffix.lower() not in suffixes:
        endings = (
            ", ".join(suffixes[:-1]) + " or " + suffixes[-1] if len(suffixes) > 1 else suffixes[0]
        )
        raise ValueError(f"{name} must end in {endings}; got {str(path)!r}.")
    if not target.parent.is_dir():
        raise ValueError(f"{name} {str(path)!r} is in a folder that does not exist.")
    return target


# ------------------------------------------------------------------------ the report


def _seed_words(rng: Any) -> str:
    """Say how the random draws were seeded, from the `rng` the caller passed."""
    if rng is None:
        return "no seed"
    if isinstance(rng, int | np.integer):
        return f"seed {int(rng)}"
    if isinstance(rng, np.random.SeedSequence):
        return f"seed sequence entropy {rng.entropy}"
    if isinstance(rng, np.random.Generator | np.random.BitGenerator):
        return "a random generator passed by the analyst"
    return f"seed {np.asarray(rng).ravel().tolist()}"


def _seed_clause(seed: str) -> str:
    """Return the methods paragraph's clause on the seed."""
    if seed == "no seed":
        return "no seed was set, so a rerun draws other random resamples"
    if seed.startswith("a random generator"):
        return "the random draws came from a generator passed by the analyst (no seed recorded)"
    return f"the random draws used {seed}"


def _versions(mcmc: str | None) -> dict[str, str]:
    """Return perfci's version and those of the libraries its results depend on."""
    shown = {"numpy": "NumPy", "scipy": "SciPy", "pandas": "pandas", "matplotlib": "matplotlib"}
    if mcmc is not None:
        shown |= {"pymc": "PyMC", mcmc: mcmc} if mcmc != "pymc" else {"pymc": "PyMC"}
    out = {"perfci": __version__}
    for package, name in shown.items():
        try:
            out[name] = metadata.version(package)
        except metadata.PackageNotFoundError:  # pragma: no cover - a broken install
            out[name] = "unknown"
    return out


def _validation_report_iv(
    names: Any, title: Any, forest_metric: Any, digits: Any, inputs: Mapping[str, Any]
) -> dict[str, str]:
    """Check the options :func:`perfci.report` does not; return the inputs' display names."""
    from .._core.labels import has_columns

    for key in ("y_true", "y_pred", "pred_b"):
        if inputs[key] is not None and has_columns(inputs[key]):
            what = "annotator" if key == "y_true" else "run"
            raise ValueError(
                f"`{key}` must have one label per text: a column per {what} is not available "
                "in validation_report (give one, or their majority vote, or use "
                "perfci.report for the table alone)."
            )
    if names is not None and not isinstance(names, Mapping):
        raise ValueError(f"`names` must be a mapping of inputs to display names; got {names!r}.")
    given = dict(names or {})
    for key, value in given.items():
        if key not in NAME_DEFAULTS:
            raise ValueError(f"`names` keys must be some of {list(NAME_DEFAULTS)}; got {key!r}.")
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"`names[{key!r}]` must be a non-empty string; got {value!r}.")
    if title is not None and (not isinstance(title, str) or not title.strip()):
        raise ValueError(f"`title` must be a non-empty string or None; got {title!r}.")
    if forest_metric is not None:
        registry.PROPORTION_METRIC.check(forest_metric, "forest_metric")
    check_positive_int("digits", digits)

    def own_name(value: Any) -> str | None:
        name = getattr(value, "name", None)  # a pandas Series' name
        return name if isinstance(name, str) and name.strip() else None

    return {
        key: given.get(key) or own_name(inputs.get(key)) or default
        for key, default in NAME_DEFAULTS.items()
    }


def _summary(counts: Any) -> dict[str, Any]:
    """Return the texts, persons and positives of :func:`perfci.confusion`'s counts."""
    nested = counts.groups is not None
    if counts.classes is None:
        cells = np.asarray(counts.counts)
        per_person = cells.sum(-1) if nested else None
        total = cells.sum(0) if nested else cells
        labels = {
            "positive": counts.positive.item()
            if isinstance(counts.positive, np.generic)
            else counts.positive,
            "reference_positives": int(total[0] + total[2]),
            "classifier_positives": int(total[0] + total[1]),
            "classes": None,
        }
    else:
        per_person = np.asarray(counts.matrix).sum((-2, -1)) if nested else None
        labels = {
            "positive": None,
            "reference_positives": None,
            "classifier_positives": None,
            "classes": [c.item() if isinstance(c, np.generic) else c for c in counts.classes],
        }
    sizes = None if per_person is None else per_person[per_person > 0]
    return {
        "texts": counts.n_texts,
        "persons": None if sizes is None else int(sizes.size),
        "texts_per_person": None
        if sizes is None
        else (int(sizes.min()), float(np.median(sizes)), int(sizes.max())),
        **labels,
    }


def _person_rates(counts: Any, metric: str, label: str, level: float) -> tuple[pd.DataFrame, str]:
    """Return each person's rate of `metric`, with the analytic interval of its row."""
    import pandas as pd

    from ..analytic import proportion_ci
    from ..metrics import proportion_counts

    name, _ = parse_label(label)
    method = name if name in ANALYTIC else policy.PROPORTION_METHOD
    x, n = proportion_counts(counts.counts, metric)
    keep = n > 0
    ci = proportion_ci(x[keep], n[keep], method=method, confidence_level=level)
    rates = pd.DataFrame(
        {
            "person": counts.groups[keep],
            "successes": x[keep],
            "trials": n[keep],
            "estimate": np.asarray(ci.estimate, dtype=float),
            "low": np.asarray(ci.low, dtype=float),
            "high": np.asarray(ci.high, dtype=float),
        }
    )
    return rates, method


def _comparisons(
    y_true: Any,
    y_pred: Any,
    pred_b: Any,
    groups: Any,
    metrics: Sequence[str],
    positive: Any,
    level: float,
    generator: np.random.Generator,
) -> tuple[pd.DataFrame, list[str]]:
    """Compare two classifiers by :func:`perfci.compare`, one child stream per metric."""
    import pandas as pd

    from ..comparison import compare

    rows, left_out = [], []
    for metric, child in zip(metrics, generator.spawn(len(metrics)), strict=True):
        try:
            result = compare(
                y_true,
                y_pred,
                pred_b,
                metric,
                groups,
                positive=positive,
                confidence_level=level,
                rng=child,
            )
        except ValueError as exc:  # undefined for one of them; the others still compare
            left_out.append(f"the comparison of {metric} was left out: {str(exc).rstrip('.')}")
            continue
        rows.append(
            {
                "metric": metric,
                "estimate_a": float(result.estimate_a),
                "estimate_b": float(result.estimate_b),
                "difference": float(result.difference),
                "low": float(result.low),
                "high": float(result.high),
                "method": result.method,
                "test": result.test,
                "p_value": float(result.p_value),
                "n_texts": int(result.n_texts),
                "persons": result.persons,
            }
        )
    columns = ["metric", "estimate_a", "estimate_b", "difference", "low", "high", "method"]
    return pd.DataFrame(rows, columns=[*columns, "test", "p_value", "n_texts", "persons"]), left_out


def validation_report(
    y_true: Any,
    y_pred: Any,
    groups: Any = None,
    *,
    metrics: list[str] | None = None,
    by: Any = None,
    differences: bool | None = None,
    reference: Any = None,
    pred_b: Any = None,
    score: Any = None,
    positive: Any = None,
    bayes: bool = False,
    bayes_sampler: str = "auto",
    bayes_prior_sensitivity: bool = False,
    confidence_level: float = 0.95,
    design: str | None = policy.RECOMMENDED,
    df_adjust: str | None = policy.RECOMMENDED,
    n_resamples: int | str = policy.RECOMMENDED,
    forest_metric: str | None = None,
    names: Mapping[str, str] | None = None,
    title: str | None = None,
    digits: int = 3,
    rng: Any = None,
) -> ValidationReport:
    """Validate a classifier for a paper: tables, figures, notes and a methods paragraph.

    Runs :func:`perfci.report` once (and :func:`perfci.compare` per metric with `pred_b`)
    and keeps what they return: :meth:`ValidationReport.to_html` writes it as one
    self-contained HTML page, :meth:`~ValidationReport.to_latex` and
    :meth:`~ValidationReport.to_markdown` its tables, and
    :attr:`~ValidationReport.methods` is a paragraph to paste into a paper.

    Parameters
    ----------
    y_true, y_pred : array_like
        Reference (human) and classifier labels, one per text (a pandas Series' name is
        its display name).
    groups : array_like, optional
        Person ids, one per text (nested texts).
    metrics : list of str, optional
        Metrics to report (default every one that applies), as in :func:`perfci.report`.
    by : array_like, optional
        A subgroup label per text: the report is repeated per subgroup.
    differences : bool, optional
        With `by`, add the differences between subgroups (default: True with `by`). With
        `groups`, persons whose texts span subgroups make it an error: pass False.
    reference : object, optional
        With `differences`, the subgroup the others are compared with.
    pred_b : array_like, optional
        A second classifier's labels: adds the paired comparison (`y_pred` minus
        `pred_b`) of every binary metric of the table, by :func:`perfci.compare` with its
        recommended method.
    score : array_like, optional
        The classifier's scores: adds the ``roc_auc`` row.
    positive : object, optional
        The positive label, as in :func:`perfci.confusion`.
    bayes : bool, default False
        Add the Bayesian credible intervals beside the frequentist ones (see
        :func:`perfci.report`).
    bayes_sampler : {"auto", "nutpie", "pymc", "grid"}, default "auto"
        Sampler of the hierarchical models, as in :func:`perfci.report`.
    bayes_prior_sensitivity : bool, default False
        With `bayes`, add the interval under the alternative concentration prior below
        each hierarchical beta-binomial row, as in :func:`perfci.report`.
    confidence_level : float, default 0.95
        Level of every interval.
    design, df_adjust, n_resamples : default "recommended"
        As in :func:`perfci.report`; the methods paragraph says when they were set.
    forest_metric : str, optional
        The proportion metric of the per-person forest (nested texts, binary labels):
        default recall when it is in the table, else its first proportion metric.
    names : mapping, optional
        Display names of the inputs, keys among ``y_true``, ``y_pred``, ``pred_b``,
        ``groups``, ``by`` and ``score`` (default: a Series' name, else "reference",
        "classifier", "classifier B", "person", "subgroup", "score").
    title : str, optional
        The report's title (default "Validation of <y_pred> against <y_true>").
    digits : int, default 3
        Decimals of estimates and interval ends in the tables.
    rng : numpy.random.Generator, int or None
        Random generator or seed: the table's intervals are those of
        ``perfci.report(..., rng=rng)``, and the comparisons draw from child streams.

    Returns
    -------
    ValidationReport
        The table, comparisons, data summary, per-person rates, notes, warnings,
        methods paragraph and references.

    Raises
    ------
    ValueError
        For everything :func:`perfci.report` refuses; `y_true`, `y_pred` or `pred_b`
        with a column per annotator or run; `pred_b` with multi-class labels and no
        `positive`; `names` that is not a mapping of the keys above to non-empty
        strings; a `title` that is not a non-empty string; a `forest_metric` that is not
        a proportion metric of the table; `digits` that is not a positive integer.

    Warns
    -----
    Warning
        Every warning raised while computing is issued again once the report is made,
        and listed in :attr:`ValidationReport.warnings`.

    Notes
    -----
    The methods paragraph is written from the ``method`` labels of the rows for all texts
    (and of the comparisons and differences), so it says what was done: the interval,
    the design and degrees-of-freedom adjustment, the bootstrap's scheme, resamples and
    pseudo count, the estimand and sources, the Bayesian model, the level, the versions
    and the seed. A label it has no words for (a new method) is quoted as it is.

    Degenerate cases: rows :func:`perfci.report` leaves out are named in its warning,
    which is listed; a metric undefined for either classifier leaves its comparison out,
    with a note; persons without a relevant text for the forest's metric are left out of
    the forest; independent texts, multi-class labels and tables without a proportion
    metric have no per-person forest.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> rep = pc.validation_report(texts["human"], texts["model"], texts["person"], rng=1)
    >>> rep.summary["texts"], rep.summary["persons"], rep.forest_metric
    (1069, 40, 'recall')
    >>> print(rep.methods[:86])
    We compared the labels of the classifier (model) with the reference labels (human) on
    >>> page = rep.to_html()
    >>> page.startswith("<!DOCTYPE html>"), "<script" in page, page.count("<img ")
    (True, False, 2)
    """
    from ..counting import confusion
    from ..reporting import report

    inputs = {"y_true": y_true, "y_pred": y_pred, "pred_b": pred_b, "groups": groups}
    names_ = _validation_report_iv(
        names, title, forest_metric, digits, {**inputs, "by": by, "score": score}
    )
    generator = check_rng(rng)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counts = confusion(y_true, y_pred, positive=positive, groups=groups)
        if pred_b is not None and counts.classes is not None:  # before any interval
            raise ValueError(
                "`pred_b` is compared on binary metrics: give `positive` (the class to "
                "compare) with multi-class labels."
            )
        table = report(
            y_true,
            y_pred,
            groups,
            by=by,
            score=score,
            differences=(by is not None) if differences is None else differences,
            reference=reference,
            positive=positive,
            metrics=metrics,
            confidence_level=confidence_level,
            design=design,
            df_adjust=df_adjust,
            n_resamples=n_resamples,
            rng=generator,  # the same draws as report(..., rng=rng)
            bayes=bayes,
            bayes_sampler=bayes_sampler,
            bayes_prior_sensitivity=bayes_prior_sensitivity,
        )
        level = float(confidence_level)  # the report checked it
        main = all_texts(table)
        main = main[~main["method"].map(is_bayes).astype(bool)]
        comparisons, left_out = None, list[str]()
        if pred_b is not None:
            compared = [m for m in dict.fromkeys(main["metric"]) if m in registry.BINARY_METRIC]
            comparisons, left_out = _comparisons(
                y_true, y_pred, pred_b, groups, compared, counts.positive, level, generator
            )
        proportions = [m for m in main["metric"] if m in registry.PROPORTION_METRIC]
        if forest_metric is not None and forest_metric not in proportions:
            raise ValueError(
                f"`forest_metric` {forest_metric!r} is not a proportion metric of the table; "
                f"its proportion metrics are {proportions}."
            )
        chosen = forest_metric or ("recall" if "recall" in proportions else None)
        chosen = chosen or (proportions[0] if proportions else None)
        person_rates, person_method = None, None
        if counts.groups is not None and counts.classes is None and chosen is not None:
            label = str(main.loc[main["metric"] == chosen, "method"].iloc[0])
            person_rates, person_method = _person_rates(counts, chosen, label, level)
    messages = tuple(dict.fromkeys(f"{type(w.message).__name__}: {w.message}" for w in caught))
    for w in caught:  # nothing silent: the caller sees them as usual
        warnings.warn(w.message, w.category, stacklevel=2)
    summary = _summary(counts)
    seed = _seed_words(rng)
    # the samplers that ran, as the Bayesian rows name them ("auto" resolves per model)
    ran = " ".join(str(m) for m in table["method"] if is_bayes(m))
    mcmc = next((name for name in ("nutpie", "pymc") if f"({name}," in ran), None)
    versions = _versions(mcmc)
    options = {"design": design, "df_adjust": df_adjust, "n_resamples": n_resamples}
    given = tuple(
        name
        for name, value in options.items()
        if not (isinstance(value, str) and value == policy.RECOMMENDED)
    )
    resamples = policy.N_RESAMPLES if isinstance(n_resamples, str) else int(n_resamples)
    choices = Choices(resamples, _seed_clause(seed), given, mcmc)
    methods, references = methods_paragraph(
        table, comparisons, summary, names_, level, choices, versions
    )
    result = ValidationReport(
        table=table,
        comparisons=comparisons,
        summary=summary,
        person_rates=person_rates,
        forest_metric=chosen if person_rates is not None else None,
        person_method=person_method,
        notes=(),
        warnings=messages,
        methods=methods,
        references=references,
        names=names_,
        title=title or f"Validation of {names_['y_pred']} against {names_['y_true']}",
        confidence_level=level,
        seed=seed,
        versions=versions,
        digits=int(digits),
    )
    tables, _ = result._tables()
    notes = tuple(text for t in tables for _, text in t.notes) + tuple(left_out)
    return dataclasses.replace(result, notes=notes)
