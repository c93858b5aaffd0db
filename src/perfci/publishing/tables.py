"""Tables of a report for a paper: short method names, footnotes, LaTeX and Markdown.

A table of :func:`perfci.report` becomes :class:`Table` objects (cells as text, method
cells as :class:`MethodCell` with a footnote mark), which the renderers here (LaTeX
booktabs, Markdown) and the HTML page of :mod:`perfci.publishing.report` print. The
numbers are the report's, rounded for print; nothing is recomputed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from .. import __version__
from .._core.text import single_line

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["latex_table", "markdown_table", "short_method"]

#: Readable names of the analytic interval methods, and the references each cites
#: (keys of :data:`perfci.publishing.methods.REFERENCES`).
ANALYTIC = {
    "wald": ("Wald", ("anglin", "brown")),
    "wilson": ("Wilson", ("wilson",)),
    "agresti_coull": ("Agresti-Coull", ("agresti",)),
    "agresti_coull_plus4": ("Agresti-Coull plus four", ("agresti",)),
    "clopper_pearson": ("Clopper-Pearson", ("clopper",)),
    "jeffreys": ("Jeffreys", ("brown",)),
    "logit": ("logit", ("brown",)),
}

#: A method label ``name (key=value, ...)`` as :class:`perfci.policy.IntervalChoice`
#: writes it; any other label is read whole.
_LABEL = re.compile(r"^(?P<name>[^()]*?)\s*\((?P<options>[^()]*)\)$")
#: The description :func:`perfci.report` gives a difference row before its caveats.
_BOTH = re.compile(r"^.+ -?\d+\.\d+ \(relevant n \d+.*\) minus .+ -?\d+\.\d+ \(relevant n \d+.*\)$")
#: An interval as these tables print it.
_INTERVAL = re.compile(r"^\[[-+]?\d+\.\d+, [-+]?\d+\.\d+\]$")


def parse_label(label: str) -> tuple[str, dict[str, str]]:
    """Split a method label into its name and options; a label without options is whole.

    Examples
    --------
    >>> from perfci.publishing.tables import parse_label
    >>> parse_label("agresti_coull (design=icc_weighted, df_adjust=dean_pagano)")
    ('agresti_coull', {'design': 'icc_weighted', 'df_adjust': 'dean_pagano'})
    >>> parse_label("bayes beta-binomial, population (grid, eti)")
    ('bayes beta-binomial, population (grid, eti)', {})
    """
    found = _LABEL.match(label)
    if found is None:
        return label, {}
    parts = [p.strip() for p in found["options"].split(",")]
    if not all("=" in p for p in parts):
        return label, {}
    return found["name"], dict(p.split("=", 1) for p in parts)


def prior_of(label: str) -> str | None:
    """Return the prior a Bayesian row's label names (``", prior NAME"``), else None.

    A label names its prior only when it is not the default.

    Examples
    --------
    >>> from perfci.publishing.tables import prior_of
    >>> prior_of("bayes beta-binomial, population, prior bda3 (grid, eti)")
    'bda3'
    >>> prior_of("bayes beta-binomial, population (grid, eti)") is None
    True
    """
    found = re.search(r", prior (\w+)", label)
    return None if found is None else found.group(1)


def short_method(label: str) -> str:
    """Return a short name of a method label of :func:`perfci.report`, for a table.

    Parameters
    ----------
    label : str
        A ``method`` of a report row, e.g.
        ``"agresti_coull (design=icc_weighted, df_adjust=dean_pagano)"``.

    Returns
    -------
    str
        The analytic method's name (with ", design-adjusted" for nested texts), the
        bootstrap's scheme and interval, ``Bayesian`` and the model, or any other label
        up to its first parenthesis.

    Raises
    ------
    ValueError
        If `label` is not a string.

    Examples
    --------
    >>> from perfci.publishing import short_method
    >>> short_method("agresti_coull (design=icc_weighted, df_adjust=dean_pagano)")
    'Agresti-Coull, design-adjusted'
    >>> short_method("bootstrap (scheme=hierarchical, interval=percentile, pseudo_count=1)")
    'hierarchical percentile bootstrap'
    >>> short_method("bayes beta-binomial, population (grid, eti)")
    'Bayesian beta-binomial, population'
    """
    if not isinstance(label, str):
        raise ValueError(f"`label` must be a method label (a string); got {label!r}.")
    name, options = parse_label(label)
    if name in ANALYTIC:
        short = ANALYTIC[name][0]
        if options.get("design", "None") != "None":
            short += ", design-adjusted"
        return short
    if name == "bootstrap" and options:
        interval = {"bca": "BCa"}.get(options.get("interval", ""), options.get("interval", ""))
        return " ".join(p for p in (options.get("scheme", ""), interval, "bootstrap") if p)
    if label.startswith("bayes "):
        model = label[len("bayes ") :].split("(")[0].strip().rstrip(",")
        return "Bayesian " + model.replace("dirichlet", "Dirichlet")
    return label.split(" (")[0].strip()


@dataclass(frozen=True)
class MethodCell:
    """A table cell naming a method: its short name and the footnote mark of its label."""

    short: str
    mark: str
    label: str


@dataclass(frozen=True)
class Table:
    """A table to print: headers, rows of text cells (or methods), numbered notes.

    `grouped`: the first column is the subgroup, which the HTML page shows as a row
    above each subgroup's rows instead of a column.
    """

    key: str
    caption: str
    headers: tuple[str, ...]
    numeric: tuple[bool, ...]
    rows: tuple[tuple[Any, ...], ...]
    notes: tuple[tuple[str, str], ...] = ()
    grouped: bool = False


@dataclass
class Marks:
    """Footnote letters of method labels, shared by the tables of one document."""

    labels: dict[str, str] = field(default_factory=dict)
    extra: dict[str, str] = field(default_factory=dict)

    def mark(self, label: str, note: str = "", short: str | None = None) -> MethodCell:
        """Return the cell of a method label, giving the label a letter on first use."""
        if label not in self.labels:
            self.labels[label] = letters(len(self.labels))
        if note:
            self.extra[label] = note
        return MethodCell(short or short_method(label), self.labels[label], label)

    def footnotes(self) -> list[tuple[str, str]]:
        """Return each mark with its label (and the note every row of the label shares)."""
        return [
            (mark, label + (f"; {self.extra[label]}" if label in self.extra else ""))
            for label, mark in self.labels.items()
        ]


def letters(i: int) -> str:
    """Return the i-th footnote mark, from 0: a, b, ..., z, aa, ab, ...

    Examples
    --------
    >>> from perfci.publishing.tables import letters
    >>> letters(0), letters(25), letters(26)
    ('a', 'z', 'aa')
    """
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(ord("a") + r) + out
    return out


def missing(value: Any) -> bool:
    """Return whether a cell of a report is missing (None, NaN or pandas' NA)."""
    import pandas as pd

    return value is None or bool(pd.isna(value))


def number(value: Any, digits: int, signed: bool = False) -> str:
    """Return a number as printed in a table ("–" when missing)."""
    if missing(value):
        return "–"
    return f"{float(value):+.{digits}f}" if signed else f"{float(value):.{digits}f}"


def interval(low: Any, high: Any, digits: int, signed: bool = False) -> str:
    """Return an interval as printed in a table ("not defined" when an end is missing)."""
    if missing(low) or missing(high):
        return "not defined"
    return f"[{number(low, digits, signed)}, {number(high, digits, signed)}]"


def count(value: Any) -> str:
    """Return a count as printed in a table, with thousands separators."""
    return "–" if missing(value) else f"{int(value):,}"


def level_text(confidence_level: float) -> str:
    """Return a confidence level as a percentage, e.g. ``95%``."""
    return f"{100 * confidence_level:g}%"


def is_bayes(method: Any) -> bool:
    """Return whether a report row is a Bayesian one (its method label says ``bayes``)."""
    return isinstance(method, str) and method.startswith("bayes")


def split(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return a report's rows of metrics (and subgroups) and its rows of differences."""
    if "reference" in table.columns:
        is_difference = table["reference"].astype(str) != ""
        return table[~is_difference], table[is_difference]
    return table, table.iloc[:0]


def all_texts(table: pd.DataFrame) -> pd.DataFrame:
    """Return a report's rows of metrics over all texts (not of subgroups or differences)."""
    rows, _ = split(table)
    return rows[rows["by"].astype(str) == "all"] if "by" in rows.columns else rows


def _shared_notes(rows: pd.DataFrame) -> dict[str, str]:
    """Return the note every row of a method label has, to put in the label's footnote."""
    shared: dict[str, str] = {}
    for label, group in rows.groupby("method", sort=False):
        notes = set(group["note"].fillna("").astype(str))
        if len(notes) == 1 and (note := notes.pop()):
            shared[str(label)] = note
    return shared


class _Notes:
    """The numbered notes of a table's rows (a note in its method's footnote is left out)."""

    def __init__(self, shared: Mapping[str, str]) -> None:
        self.shared = shared
        self.items: list[tuple[str, str]] = []

    def mark(self, note: Any, method: Any, where: str) -> str:
        text = "" if missing(note) else str(note)
        if not text or self.shared.get(str(method)) == text:
            return ""
        self.items.append((str(len(self.items) + 1), f"{where}: {text}"))
        return str(len(self.items))


def _where(row: Mapping[str, Any], by: str) -> str:
    """Name a row in a note: its metric, class and subgroup."""
    parts = [str(row["metric"])]
    if str(row.get("class", "")):
        parts.append(f"class {row['class']}")
    if "by" in row:
        parts.append(f"{by} {row['by']}")
    return ", ".join(parts)


def _bayes_model(label: str) -> str:
    """Return the model of a Bayesian label for its column, and its prior when not the default."""
    model = short_method(label).removeprefix("Bayesian ").split(",")[0]
    prior = prior_of(label)
    return f"{model}, prior {prior}" if prior else model


def _without_notes_column(
    headers: list[str], rows: list[tuple[Any, ...]]
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Drop a last ``Notes`` column that is empty in every row."""
    if headers and headers[-1] == "Notes" and not any(r[-1] for r in rows):
        return headers[:-1], [r[:-1] for r in rows]
    return headers, rows


def metric_tables(
    table: pd.DataFrame,
    confidence_level: float,
    digits: int,
    marks: Marks,
    names: Mapping[str, str],
) -> list[Table]:
    """Return the tables of a report: its metrics (Bayesian beside) and its differences."""
    level = level_text(confidence_level)
    rows, differences = split(table)
    shared = _shared_notes(table)
    notes = _Notes(shared)
    by = names.get("by", "subgroup")
    lead = [c for c in ("by", "class") if c in rows.columns]
    records = rows.to_dict("records")
    nested = any(not missing(r["persons"]) for r in records)
    with_bayes = any(is_bayes(r["method"]) for r in records)
    # a report puts a metric's Bayesian row right below its frequentist row; a further
    # Bayesian row of the metric (another prior) gets a row of its own
    pairs: list[tuple[dict | None, dict | None]] = []
    for r in records:
        if not is_bayes(r["method"]):
            pairs.append((r, None))
        elif (
            pairs
            and pairs[-1][0] is not None
            and pairs[-1][1] is None
            and all(pairs[-1][0].get(c) == r.get(c) for c in ("metric", *lead))
        ):
            pairs[-1] = (pairs[-1][0], r)
        else:
            pairs.append((None, r))
    out_rows: list[tuple[Any, ...]] = []
    for f, b in pairs:
        r = f if f is not None else cast(dict, b)  # every pair holds one row at least
        where = _where(r, by)
        cells: list[Any] = [str(r[c]) for c in lead]
        cells.append(str(r["metric"]))
        marked = []
        if f is not None:
            cells += [
                number(f["estimate"], digits),
                interval(f["low"], f["high"], digits),
                marks.mark(str(f["method"]), shared.get(str(f["method"]), "")),
            ]
            marked.append(notes.mark(f["note"], f["method"], where))
        else:
            cells += ["–", "–", "–"]
        cells.append(count(r["relevant_n"]))
        if nested:
            cells.append(count(r["persons"]))
        if with_bayes and b is None:
            cells += ["–", "–", "–"]
        elif with_bayes and b is not None:
            label = str(b["method"])
            cells += [
                number(b["estimate"], digits),
                interval(b["low"], b["high"], digits),
                # the model alone: the column says Bayesian, the footnote the rest
                marks.mark(
                    label,
                    shared.get(label, ""),
                    _bayes_model(label),
                ),
            ]
            marked.append(notes.mark(b["note"], b["method"], where + " (Bayesian)"))
        cells.append(", ".join(m for m in marked if m))
        out_rows.append(tuple(cells))
    headers = [by.capitalize() if c == "by" else "Class" for c in lead]
    headers += ["Metric", "Estimate", f"{level} CI", "Method", "n"]
    if nested:
        headers.append("Persons")
    if with_bayes:
        headers += ["Bayes", f"{level} CrI", "Bayesian model"]
    headers.append("Notes")
    headers, out_rows = _without_notes_column(headers, out_rows)
    numeric = tuple(h in ("Estimate", "n", "Persons", "Bayes") for h in headers)
    caption = (
        f"Every metric with its {level} confidence interval (CI)"
        + (" and, beside it, its Bayesian credible interval (CrI)" if with_bayes else "")
        + "; n is the relevant n (the texts the metric is computed from)"
        + (", persons those with a relevant text" if nested else "")
        + "."
    )
    tables = [
        Table(
            "metrics",
            caption,
            tuple(headers),
            numeric,
            tuple(out_rows),
            tuple(notes.items),
            grouped="by" in lead,
        )
    ]
    if len(differences):
        tables.append(_difference_table(differences, rows, confidence_level, digits, marks, names))
    return tables


def _difference_table(
    differences: pd.DataFrame,
    rows: pd.DataFrame,
    confidence_level: float,
    digits: int,
    marks: Marks,
    names: Mapping[str, str],
) -> Table:
    """Return the differences between subgroups, beside the two subgroups' estimates."""
    level = level_text(confidence_level)
    records = differences.to_dict("records")
    nested = any(not missing(r["persons"]) for r in records)
    with_class = "class" in differences.columns
    # each subgroup's own estimate, from its frequentist row of the report
    keys = ["by", "metric", *(["class"] if with_class else [])]
    own = {
        tuple(str(r[k]) for k in keys): r["estimate"]
        for r in rows.to_dict("records")
        if not is_bayes(r["method"])
    }
    notes = _Notes({})
    out = []
    for r in records:

        def estimate_of(subgroup: Any, r: Mapping[str, Any] = r) -> str:
            key = (str(subgroup), str(r["metric"]), *([str(r["class"])] if with_class else []))
            return number(own.get(key), digits)

        cells: list[Any] = [str(r["by"]), str(r["reference"])]
        if with_class:
            cells.append(str(r["class"]))
        cells += [
            str(r["metric"]),
            estimate_of(r["by"]),
            estimate_of(r["reference"]),
            number(r["estimate"], digits, signed=True),
            interval(r["low"], r["high"], digits, signed=True),
            marks.mark(str(r["method"])),
            count(r["relevant_n"]),
        ]
        if nested:
            cells.append(count(r["persons"]))
        # the report's note starts with both estimates, which have their own columns here
        parts = [] if missing(r["note"]) else str(r["note"]).split("; ")
        caveats = "; ".join(parts[1:] if parts and _BOTH.match(parts[0]) else parts)
        cells.append(notes.mark(caveats, r["method"], f"{r['metric']}, {r['by']}"))
        out.append(tuple(cells))
    headers = [names.get("by", "subgroup").capitalize(), "Reference"]
    headers += ["Class"] if with_class else []
    headers += ["Metric", "Subgroup", "Reference ", "Difference", f"{level} CI", "Method", "n"]
    headers += ["Persons"] if nested else []
    headers.append("Notes")
    headers, out = _without_notes_column(headers, out)
    numeric = tuple(h in ("Subgroup", "Reference ", "Difference", "n", "Persons") for h in headers)
    caption = (
        f"Differences between subgroups (subgroup minus reference) with their {level} "
        "confidence intervals, beside the two subgroups' estimates; n and persons count "
        "both subgroups."
    )
    return Table("differences", caption, tuple(headers), numeric, tuple(out), tuple(notes.items))


def comparison_table(
    comparisons: pd.DataFrame,
    confidence_level: float,
    digits: int,
    marks: Marks,
    names: Mapping[str, str],
) -> Table:
    """Return the table of a paired comparison of two classifiers."""
    level = level_text(confidence_level)
    a, b = names.get("y_pred", "A"), names.get("pred_b", "B")
    out = []
    for r in comparisons.to_dict("records"):
        out.append(
            (
                str(r["metric"]),
                number(r["estimate_a"], digits),
                number(r["estimate_b"], digits),
                number(r["difference"], digits, signed=True),
                interval(r["low"], r["high"], digits, signed=True),
                marks.mark(str(r["method"])),
                str(r["test"]),
                "–" if missing(r["p_value"]) else f"{float(r['p_value']):.3g}",
            )
        )
    headers = ("Metric", a, b, "Difference", f"{level} CI", "Method", "Test", "p")
    numeric = (False, True, True, True, False, False, False, True)
    caption = (
        f"Paired comparison of {a} and {b} on the same texts: the difference "
        f"({a} minus {b}) with its {level} confidence interval and the test of equal "
        "performance."
    )
    return Table("comparison", caption, headers, numeric, tuple(out))


# ------------------------------------------------------------------------- renderers

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    '"': r"\textquotedbl{}",
    "`": r"\textasciigrave{}",
    "–": "--",
    "−": "$-$",
    "λ": r"$\lambda$",
    "∝": r"$\propto$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
}
# and the ligatures TeX makes of text (``--`` an en dash, ``''`` a closing quote) broken
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIAL) + r"|-(?=-)|'(?=')")


def latex_text(text: str) -> str:
    r"""Escape text from data for LaTeX: one line, no control character, no markup.

    The policy: the text is made one line and every control or invisible format
    character (NUL, ESC, the bidi controls, ...) is shown as an escape like ``\x1b``
    (:func:`perfci._core.text.single_line`); then every character special to LaTeX
    (``\ & % $ # _ { } ~ ^``), and ``< > | "``, which the default font encoding prints as
    other characters (and babel may make active), is written as its command; a backtick
    and the ligatures of ``--`` and ``''`` are broken (``-{}-``), so the text prints as
    typed; a leading ``*``, which a row's ``\\`` above would read as its star, is braced.
    A few symbols (en dash, minus, λ, ∝, ≤, ≥) become their LaTeX.

    Examples
    --------
    >>> from perfci.publishing.tables import latex_text
    >>> print(latex_text("n_eff & 95% {a}"))
    n\_eff \& 95\% \{a\}
    >>> print(latex_text('*a|"b"\x1b'))
    {*}a\textbar{}\textquotedbl{}b\textquotedbl{}\textbackslash{}x1b
    >>> print(latex_text("a--b ``c''"))
    a-{}-b \textasciigrave{}\textasciigrave{}c'{}'
    """
    text = _LATEX_RE.sub(
        lambda m: _LATEX_SPECIAL.get(m.group(), m.group() + "{}"), single_line(text)
    )
    return "{*}" + text[1:] if text.startswith("*") else text


#: What Markdown reads as markup in a table cell; an underscore inside a word is not
#: (CommonMark), so ``balanced_accuracy`` stays as it is. ``&`` starts an entity
#: (``&#x202e;`` would put back a bidi control), ``|`` ends a cell, ``$`` starts math
#: (GitHub, MathJax) and ``~`` a strikethrough.
_MARKDOWN_RE = re.compile(r"([\\`*\[\]<>|#&$~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def markdown_text(text: str) -> str:
    r"""Escape text from data for a Markdown table cell, heading or footnote.

    The policy: the text is made one line (line breaks and tabs become spaces) and every
    control or invisible format character (NUL, ESC, CR, the bidi controls U+202A-U+202E,
    U+2066-U+2069, U+200E, U+200F, U+061C, ...) is shown as an escape like ``\u202e``
    (:func:`perfci._core.text.single_line`); then ``\ ` * _ [ ] < > | # & $ ~`` are
    backslash-escaped, so no text from data ends a cell, starts markup, raw HTML or an
    entity. An underscore inside a word and an interval's brackets are left as they are.

    Examples
    --------
    >>> from perfci.publishing.tables import markdown_text
    >>> print(markdown_text("a|b_c *d* _e_"), markdown_text("[0.821, 0.923]"))
    a\|b_c \*d\* \_e\_ [0.821, 0.923]
    >>> print(markdown_text("<b>\n\u202eX"))
    \<b\> \\u202eX
    """
    if _INTERVAL.fullmatch(text):  # not `match`: its `$` passes a last line break
        return text
    return _MARKDOWN_RE.sub(r"\\\1", single_line(text))


def _latex_row(cells: list[str]) -> str:
    r"""Join a row's escaped cells; a first ``[`` is braced, not an argument of the rule above.

    ``\\``, ``\toprule`` and ``\midrule`` each read a ``[`` after them as the start of
    an optional argument (a leading ``*`` :func:`latex_text` braces itself).
    """
    if cells and cells[0].startswith("["):
        cells = ["{[}" + cells[0][1:], *cells[1:]]
    return " & ".join(cells) + r" \\"


def render_latex(tables: Sequence[Table], footnotes: Sequence[tuple[str, str]]) -> str:
    """Return tables as LaTeX booktabs ``table`` environments, their footnotes below each."""
    parts = [f"% perfci {__version__}; these tables need \\usepackage{{booktabs}}"]
    for t in tables:
        spec = "".join("r" if n else "l" for n in t.numeric)
        lines = [
            r"\begin{table}[htbp]",
            r"\centering",
            rf"\caption{{{latex_text(t.caption)}}}",
            rf"\label{{tab:perfci-{t.key}}}",
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            _latex_row([latex_text(h.strip()) for h in t.headers]),
            r"\midrule",
        ]
        for row in t.rows:
            cells = [
                f"{latex_text(c.short)}$^{{{c.mark}}}$"
                if isinstance(c, MethodCell)
                else latex_text(c)
                for c in row
            ]
            lines.append(_latex_row(cells))
        lines += [r"\bottomrule", r"\end{tabular}"]
        here = {c.mark for row in t.rows for c in row if isinstance(c, MethodCell)}
        below = [f"$^{{{m}}}$ {latex_text(text)}" for m, text in footnotes if m in here]
        below += [f"{m}. {latex_text(text)}" for m, text in t.notes]
        if below:
            lines.append(r"\par\smallskip{\footnotesize\raggedright")
            lines += [line + r"\par" for line in below]
            lines.append("}")
        lines.append(r"\end{table}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def render_markdown(tables: Sequence[Table], footnotes: Sequence[tuple[str, str]]) -> str:
    """Return tables as Markdown pipe tables, with the method labels as ``[^a]`` footnotes."""
    parts = []
    for t in tables:
        lines = [f"**{markdown_text(t.caption)}**", ""]
        lines.append("| " + " | ".join(markdown_text(h.strip()) for h in t.headers) + " |")
        lines.append("|" + "|".join("---:" if n else ":---" for n in t.numeric) + "|")
        for row in t.rows:
            cells = [
                f"{markdown_text(c.short)} [^{c.mark}]"
                if isinstance(c, MethodCell)
                else markdown_text(c)
                for c in row
            ]
            lines.append("| " + " | ".join(cells) + " |")
        if t.notes:
            lines.append("")
            lines += [f"{m}. {markdown_text(text)}" for m, text in t.notes]
        parts.append("\n".join(lines))
    used = {c.mark for t in tables for row in t.rows for c in row if isinstance(c, MethodCell)}
    definitions = [f"[^{m}]: {markdown_text(text)}" for m, text in footnotes if m in used]
    if definitions:
        parts.append("\n".join(definitions))
    return "\n\n".join(parts) + "\n"


_REPORT_COLUMNS = ("metric", "estimate", "low", "high", "method", "relevant_n", "persons", "note")


def _table_iv(
    table: Any, confidence_level: Any, digits: Any, names: Any
) -> tuple[float, int, dict[str, str]]:
    """Check the arguments of :func:`latex_table` and :func:`markdown_table`."""
    import pandas as pd

    from .._core.validation import check_confidence_level, check_positive_int

    if not isinstance(table, pd.DataFrame) or not set(_REPORT_COLUMNS) <= set(table.columns):
        raise ValueError(
            f"`table` must be a table of perfci.report (columns {', '.join(_REPORT_COLUMNS)}, "
            f"...); got {type(table).__name__}."
        )
    level = float(check_confidence_level(confidence_level, scalar=True))
    check_positive_int("digits", digits)
    if names is not None and not (
        isinstance(names, Mapping) and all(isinstance(v, str) for v in names.values())
    ):
        raise ValueError(f"`names` must be a mapping of inputs to display names; got {names!r}.")
    return level, int(digits), dict(names or {})


def latex_table(
    table: pd.DataFrame,
    *,
    confidence_level: float = 0.95,
    digits: int = 3,
    names: Mapping[str, str] | None = None,
) -> str:
    r"""Return a table of :func:`perfci.report` as LaTeX booktabs tables, for a paper.

    Parameters
    ----------
    table : pandas.DataFrame
        A table of :func:`perfci.report` (with ``by`` and ``differences``, a second table
        of the differences follows).
    confidence_level : float, default 0.95
        The level the report was computed at (for the column heads).
    digits : int, default 3
        Decimals of estimates and interval ends.
    names : mapping, optional
        Display names: ``{"by": "site"}`` heads the subgroup column.

    Returns
    -------
    str
        One ``table`` environment per table (``\toprule``, ``\midrule``,
        ``\bottomrule``: it needs ``\usepackage{booktabs}``), with short method names and
        the report's full labels as footnotes below the table; every character special
        to LaTeX in the cells (``\ & % $ # _ { } ~ ^``, and ``< > | "``) is escaped and
        every control or invisible format character shown as an escape (see
        :func:`perfci.publishing.tables.latex_text`).

    Raises
    ------
    ValueError
        If `table` is not a table of :func:`perfci.report`, `confidence_level` is not in
        (0, 1), `digits` is not a positive integer, or `names` is not a mapping of names.

    Examples
    --------
    >>> import perfci as pc
    >>> from perfci.publishing import latex_table
    >>> texts = pc.load_example()
    >>> table = pc.report(texts["human"], texts["model"], metrics=["recall"])
    >>> print(latex_table(table))  # doctest: +ELLIPSIS
    % perfci ...; these tables need \usepackage{booktabs}
    <BLANKLINE>
    \begin{table}[htbp]
    \centering
    \caption{Every metric with its 95\% confidence interval (CI); n is the relevant n (the texts the metric is computed from).}
    \label{tab:perfci-metrics}
    \begin{tabular}{lrllr}
    \toprule
    Metric & Estimate & 95\% CI & Method & n \\
    \midrule
    recall & 0.880 & [0.834, 0.915] & Agresti-Coull$^{a}$ & 251 \\
    \bottomrule
    \end{tabular}
    \par\smallskip{\footnotesize\raggedright
    $^{a}$ agresti\_coull\par
    }
    \end{table}
    <BLANKLINE>
    """  # noqa: E501
    level, digits, names_ = _table_iv(table, confidence_level, digits, names)
    marks = Marks()
    return render_latex(metric_tables(table, level, digits, marks, names_), marks.footnotes())


def markdown_table(
    table: pd.DataFrame,
    *,
    confidence_level: float = 0.95,
    digits: int = 3,
    names: Mapping[str, str] | None = None,
) -> str:
    r"""Return a table of :func:`perfci.report` as Markdown tables, for a paper.

    Parameters
    ----------
    table : pandas.DataFrame
        A table of :func:`perfci.report` (with ``by`` and ``differences``, a second table
        of the differences follows).
    confidence_level : float, default 0.95
        The level the report was computed at (for the column heads).
    digits : int, default 3
        Decimals of estimates and interval ends.
    names : mapping, optional
        Display names: ``{"by": "site"}`` heads the subgroup column.

    Returns
    -------
    str
        Pipe tables with a bold caption above each, short method names with the report's
        full labels as footnotes (``[^a]``, as GitHub and pandoc read them), and the
        rows' notes numbered below; ``\ ` * _ [ ] < > | # &`` in cells are escaped, line
        breaks made spaces and every control or invisible format character shown as an
        escape (see :func:`perfci.publishing.tables.markdown_text`).

    Raises
    ------
    ValueError
        If `table` is not a table of :func:`perfci.report`, `confidence_level` is not in
        (0, 1), `digits` is not a positive integer, or `names` is not a mapping of names.

    Examples
    --------
    >>> import perfci as pc
    >>> from perfci.publishing import markdown_table
    >>> texts = pc.load_example()
    >>> table = pc.report(texts["human"], texts["model"], metrics=["recall"])
    >>> print(markdown_table(table))
    **Every metric with its 95% confidence interval (CI); n is the relevant n (the texts the metric is computed from).**
    <BLANKLINE>
    | Metric | Estimate | 95% CI | Method | n |
    |:---|---:|:---|:---|---:|
    | recall | 0.880 | [0.834, 0.915] | Agresti-Coull [^a] | 251 |
    <BLANKLINE>
    [^a]: agresti_coull
    <BLANKLINE>
    """  # noqa: E501
    level, digits, names_ = _table_iv(table, confidence_level, digits, names)
    marks = Marks()
    return render_markdown(metric_tables(table, level, digits, marks, names_), marks.footnotes())
