"""Outputs to publish: a self-contained HTML validation report, LaTeX and Markdown tables.

:func:`validation_report` runs :func:`perfci.report` (and, with a second classifier,
:func:`perfci.compare`) once and keeps what they return; everything it shows is read
from those public results, never computed a second way:

- the data summary and the confusion matrix (texts, persons, relevant n per metric, ICC
  and design effect: the report's columns, and the counts of :func:`perfci.confusion`);
- the table of metrics with short method names (the report's long labels in footnotes),
  the Bayesian credible intervals beside the frequentist ones (``bayes=True``), the
  subgroups and their differences (``by``) and the paired comparison (``pred_b``);
- a forest figure of the metrics and, for texts nested in persons, one of each person's
  rate of the main metric (:func:`perfci.plotting.forest`);
- the notes of the report's rows and every warning raised while computing them;
- a methods paragraph to paste into a paper, written from the methods actually used
  (the report's labels), with the perfci, NumPy, SciPy and pandas versions, the seed and
  numbered references.

:meth:`ValidationReport.to_html` writes one HTML page that needs nothing else: the CSS is
inline, the figures are PNG images inlined as ``data:`` URLs, and it names no external
address. :func:`latex_table` and :func:`markdown_table` print any table of
:func:`perfci.report` for a paper (the command line's ``perfci report --format latex``
and ``--format markdown``).

The modules: :mod:`~perfci.publishing.tables` (short method names, the tables and their
LaTeX and Markdown), :mod:`~perfci.publishing.methods` (the methods paragraph and its
references), :mod:`~perfci.publishing.report` (the report and its figures),
:mod:`~perfci.publishing.page` (its HTML page, with its print style),
:mod:`~perfci.publishing.person_figures` (the per-person forests, Bayesian too),
:mod:`~perfci.publishing.design_sections` (several annotators, repeated runs),
:mod:`~perfci.publishing.many_section` and :mod:`~perfci.publishing.performance_section`
(other classifiers, the performance model).
"""

from __future__ import annotations

from .methods import REFERENCES
from .report import ValidationReport, validation_report
from .tables import latex_table, markdown_table, short_method

__all__ = [
    "REFERENCES",
    "ValidationReport",
    "latex_table",
    "markdown_table",
    "short_method",
    "validation_report",
]
