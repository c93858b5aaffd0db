"""The validation report: one self-contained HTML page, and its tables, figures and methods.

:func:`validation_report` runs :func:`perfci.report` once (and :func:`perfci.compare` per
metric with a second classifier) and keeps what they return; a :class:`ValidationReport`
shows only those public results: the data summary and the confusion matrix, the tables
(:mod:`perfci.publishing.tables`), forest figures drawn by :func:`perfci.plotting.forest`
(:mod:`perfci.publishing.person_figures`), the notes and the warnings raised while
computing, and the methods paragraph (:mod:`perfci.publishing.methods`). Several
annotators and repeated runs add their sections (:mod:`perfci.publishing.design_sections`);
:mod:`perfci.publishing.page` writes the HTML page.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .. import policy
from .._core import registry
from .._core.deprecation import hide_parameters, positional_groups
from .._core.files import check_replaceable, remove_stale_temporaries, write_bytes_atomic
from .._core.labels import check_aligned
from .._core.resampling import default_resamples
from .._core.results import to_jsonable
from .._core.text import visible_text
from .._core.validation import check_positive_int, check_rng
from ..plotting import figure_text
from .design_sections import (
    CROSSED_REFERENCE,
    annotator_section,
    crossed_parts,
    crossed_sentence,
    crossed_source,
    listing,
    refuse_with_crossed,
    runs_section,
)
from .many_section import MANY_REFERENCE, many_figure, many_part, many_sentence, many_table
from .methods import Choices, methods_paragraph
from .page import html_page
from .performance_section import (
    PERFORMANCE_REFERENCE,
    coefficient_table,
    effect_figure,
    effect_table,
    performance_part,
    performance_sentence,
)
from .person_figures import bayes_person_fit, bayes_persons_figure, persons_figure
from .report_parts import (
    confusion_matrices,
    data_summary,
    design_summary,
    library_versions,
    paired_comparisons,
    person_rate_table,
    seed_clause,
    seed_words,
)
from .tables import (
    Marks,
    Table,
    all_texts,
    comparison_table,
    is_bayes,
    level_text,
    metric_tables,
    prior_of,
    render_latex,
    render_markdown,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr
    from matplotlib.figure import Figure

    from ..bayes import BayesFit

__all__ = ["ValidationReport", "validation_report"]

#: The inputs a report names, and the names it gives them when they have none.
NAME_DEFAULTS = {
    "y_true": "reference",
    "y_pred": "classifier",
    "pred_b": "classifier B",
    "groups": "person",
    "by": "subgroup",
    "score": "score",
    "weights": "weight",
    "strata": "stratum",
    "stratum_sizes": "stratum size",
}
#: What a report writes each file type with.
SUFFIXES = (".html", ".htm", ".tex", ".md")


# --------------------------------------------------------------------------- figures


def _bayes_suffix(label: str) -> str:
    """Return how the metrics' figure marks a Bayesian row (and its prior, if not the default)."""
    prior = prior_of(label)
    return f" (Bayes, prior {prior})" if prior else " (Bayes)"


# -------------------------------------------------------------------------- results


@dataclass(frozen=True, eq=False)
class ValidationReport:
    """A classifier's validation, ready to publish: tables, figures, notes and methods.

    Made by :func:`validation_report`; every number in it is from the public results of
    :func:`perfci.report` (:attr:`table`), :func:`perfci.compare` (:attr:`comparisons`),
    :func:`perfci.confusion` (:attr:`summary`, :attr:`confusion`, :attr:`runs`),
    :func:`perfci.proportion_ci` (:attr:`person_rates`), :func:`perfci.annotator_table`
    (:attr:`annotators`) and :func:`perfci.bayes.fit_proportion_counts` (:attr:`bayes_fit`).

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
        ``classifier_positives`` and ``classes`` (multi-class labels); with several
        annotators ``annotators`` (their names), ``annotator_texts`` (the texts each
        coded) and ``annotator_positives``, and ``reference_positives`` None; with
        repeated runs ``runs`` (their names) and ``run_positives``, and
        ``classifier_positives`` None.
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
    many : pandas.DataFrame or None
        With other `classifiers`, each one's difference from the reported classifier per
        binary metric (:func:`perfci.compare_many`, baseline the reported classifier):
        ``metric``, ``classifier``, ``versus``, ``estimate``, ``estimate_versus``,
        ``difference``, ``low``, ``high`` (simultaneous over the metric's comparisons),
        ``low_unadjusted``, ``high_unadjusted``, ``p_adjusted``, ``method``.
    many_metric : str or None
        The metric of the forest of differences (figure ``"classifiers"``).
    performance_coefficients, performance_effects : pandas.DataFrame or None
        With `covariates`, the performance model's
        :meth:`~perfci.bayes.performance.PerformanceFit.coefficients` and
        :meth:`~perfci.bayes.performance.PerformanceFit.effects`.
    performance : dict or None
        Its metric, margins, terms, persons, the metric over the sample's mix
        (``population``) and the target's (``target``), diagnostics and flags, and the
        posterior predictive p-values (``ppc_p_value``).
    confusion : tuple of dict
        The confusion matrix over all texts (and persons), one per annotator or run in a
        crossed design: ``reference`` and ``classifier`` (their names), ``labels`` (the
        reference's labels by row, the classifier's by column: positive first for binary
        labels), ``binary`` and ``matrix`` (counts, rows by columns; binary
        ``[[tp, fn], [fp, tn]]``). Unweighted, also for a weighted sample.
    annotators : pandas.DataFrame or None
        With several annotators, :func:`perfci.annotator_table` of every binary metric of
        the table, a ``metric`` column first: each annotator, ``"majority"``, ``"these
        annotators"`` and ``"new annotator"``.
    runs : pandas.DataFrame or None
        With repeated runs, each run's estimate of every metric of the table (the metric
        of its confusion matrix over all texts): ``metric``, ``run``, ``estimate``.
    bayes_fit : perfci.bayes.BayesFit or None
        With `bayes` and a per-person forest, the hierarchical beta-binomial of
        :attr:`forest_metric` fitted again to the persons' counts by the sampler of its
        Bayesian row, for the figure ``"bayes_persons"``.

    Examples
    --------
    One report, its outputs (the methods below):

    >>> import tempfile
    >>> from pathlib import Path
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> rep = pc.validation_report(texts["human"], texts["model"], groups=texts["person"],
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
    many: pd.DataFrame | None = None
    many_metric: str | None = None
    performance_coefficients: pd.DataFrame | None = None
    performance_effects: pd.DataFrame | None = None
    performance: dict[str, Any] | None = None
    confusion: tuple[dict[str, Any], ...] = ()
    annotators: pd.DataFrame | None = None
    runs: pd.DataFrame | None = None
    bayes_fit: BayesFit | None = None

    def _tables(self) -> tuple[list[Table], Marks]:
        """Return the report's tables and the footnote marks of their methods."""
        marks = Marks()
        level, digits = self.confidence_level, self.digits
        tables = metric_tables(self.table, level, digits, marks, self.names)
        if self.annotators is not None and len(self.annotators):
            tables.append(annotator_section(self.annotators, level, digits, marks))
        if self.runs is not None and len(self.runs):
            tables += runs_section(self.table, self.runs, level, digits, marks)
        if self.comparisons is not None and len(self.comparisons):
            tables.append(comparison_table(self.comparisons, level, digits, marks, self.names))
        if self.many is not None and len(self.many):
            tables.append(many_table(self.many, level, digits, marks, self.names["y_pred"]))
        if self.performance is not None:
            assert self.performance_coefficients is not None
            assert self.performance_effects is not None
            tables.append(
                coefficient_table(self.performance_coefficients, self.performance, level, digits)
            )
            tables.append(effect_table(self.performance_effects, self.performance, level, digits))
        return tables, marks

    def to_dict(self) -> dict[str, Any]:
        """Return everything the report holds as a JSON-ready dict (NaN as None).

        The tables become lists of row dicts (``table``, ``comparisons``,
        ``person_rates``; None where there is none), the other fields as they are, so
        ``json.dumps(report.to_dict(), allow_nan=False)`` always succeeds.

        Examples
        --------
        >>> import json
        >>> import perfci as pc
        >>> texts = pc.load_example()
        >>> rep = pc.validation_report(texts["human"], texts["model"], metrics=["recall"])
        >>> out = rep.to_dict()
        >>> out["table"][0]["metric"], out["summary"]["texts"], len(json.dumps(out)) > 0
        ('recall', 1069, True)
        """
        out: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if hasattr(value, "to_dict") and hasattr(value, "columns"):  # a DataFrame
                value = value.to_dict(orient="records")
            out[field.name] = to_jsonable(value, field.name)
        return out

    def to_frame(self) -> pd.DataFrame:
        """Return the metrics' table (:func:`perfci.report`'s), as the other results do."""
        return self.table.copy()

    def to_xarray(self) -> xr.Dataset:
        """Return the metrics' table as an :class:`xarray.Dataset` over its rows (``row``)."""
        import xarray as xr

        return xr.Dataset.from_dataframe(self.table.rename_axis("row"))

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
        which : {"metrics", "persons", "bayes_persons", "classifiers", "effects"}
            ``"metrics"`` (the default): every metric's interval over all texts (and the
            Bayesian ones, labelled so), one row each, in the table's order.
            ``"persons"``: each person's rate of :attr:`forest_metric` with its interval,
            sorted, the observed rates as circles sized by the person's relevant texts,
            and the metric's interval over all persons as a band (texts nested in
            persons); beyond :data:`perfci.publishing.person_figures.PERSONS_NAMED`
            persons a caterpillar plot, its y-axis the persons' ranks instead of their
            ids. ``"bayes_persons"``: the persons' posterior rates of the same metric
            (partial pooling, :func:`perfci.bayes.plot_forest` of :attr:`bayes_fit`),
            against the band of its population estimand. ``"classifiers"``: each other
            classifier's difference from the reported one in :attr:`many_metric`, its
            simultaneous interval and (inner) the unadjusted one. ``"effects"``: the
            performance model's effects on its metric, with their credible intervals.

        Raises
        ------
        ValueError
            If `which` is not one of these, or is ``"persons"`` in a report without a
            per-person forest (independent texts, multi-class labels, no proportion
            metric, several annotators or repeated runs), or ``"bayes_persons"`` in one
            without `bayes` too.
        """
        from ..plotting import forest

        known = ["bayes_persons", "classifiers", "effects", "metrics", "persons"]
        if which not in known:
            raise ValueError(f"`which` must be one of {known}; got {which!r}.")
        if which == "bayes_persons":
            if self.bayes_fit is None or self.forest_metric is None:
                raise ValueError(
                    "`which` 'bayes_persons' needs a report with `bayes` and a per-person "
                    "forest (texts nested in persons, a proportion metric of binary labels)."
                )
            return bayes_persons_figure(self.bayes_fit, self.forest_metric, self.confidence_level)
        if which == "effects":
            if self.performance_effects is None or self.performance is None:
                raise ValueError("`which` 'effects' needs a report with `covariates`.")
            return effect_figure(
                self.performance_effects, self.performance["metric"], self.confidence_level
            )
        if which == "classifiers":
            if self.many is None or self.many_metric is None:
                raise ValueError(
                    "`which` 'classifiers' needs a report with other `classifiers` compared."
                )
            return many_figure(
                self.many, self.many_metric, self.confidence_level, self.names["y_pred"]
            )
        level = level_text(self.confidence_level)
        rows = all_texts(self.table)
        if which == "metrics":
            if rows.empty:
                raise ValueError(
                    "`which` 'metrics' needs a metric in the table; every metric was left out "
                    "of the report (its `warnings` say why)."
                )
            labels = [
                figure_text(
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
        if rates is None or metric is None or self.person_method is None:
            raise ValueError(
                "`which` 'persons' needs texts nested in persons and a proportion metric of "
                "binary labels; this report has no per-person forest."
            )
        return persons_figure(self.table, rates, metric, self.person_method, self.confidence_level)

    def figure_names(self) -> tuple[str, ...]:
        """Return the names of the report's figures (the `which` of :meth:`figure`)."""
        if all_texts(self.table).empty:
            return ()
        names = ("metrics", "persons") if self.person_rates is not None else ("metrics",)
        names = (*names, "bayes_persons") if self.bayes_fit is not None else names
        names = (*names, "classifiers") if self.many_metric is not None else names
        effects = self.performance_effects
        return (*names, "effects") if effects is not None and len(effects) else names

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
        for which in self.figure_names():  # every target, before any file is written
            for fmt in wanted:
                check_replaceable(where / f"{which}.{fmt}", "`folder`'s figure")
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
        tables, marks = self._tables()
        return html_page(self, tables, dict(marks.footnotes()))

    # --------------------------------------------------------------------- files

    def save(self, path: str | Path) -> Path:
        """Write the report to a file, whole or not at all; return its path.

        Parameters
        ----------
        path : str or path-like
            ``.html`` (or ``.htm``): :meth:`to_html`; ``.tex``: :meth:`to_latex`;
            ``.md``: :meth:`to_markdown`. Its folder must exist. The text is written
            beside it and renamed over it, so the file is the old one or the whole new
            one, never torn; a file already there is replaced and keeps its permission
            bits (a new one gets the user's umask), unless it is read-only.

        Returns
        -------
        pathlib.Path
            The file written.

        Raises
        ------
        ValueError
            If `path` is a folder, has another suffix, is in a folder that does not
            exist, or is a read-only file (one the user may not write, or with no write
            bit: perfci does not replace it).

        Notes
        -----
        The temporary file is named ``.NAME.PID.XXXXXXXX.tmp`` after this process and
        removed if the write fails or is interrupted; a temporary that a killed writer
        left in the folder (its pid no longer running) is deleted first, and one of a
        live process is kept (:func:`perfci._core.files.remove_stale_temporaries`).
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
        remove_stale_temporaries(target.parent)  # left by a writer that was killed
        write_bytes_atomic(target, text.encode("utf-8"))
        return target


def check_output_path(path: Any, name: str, suffixes: Sequence[str] = SUFFIXES) -> Path:
    """Return `path` as a file a report can be written to; raise naming it (`name`).

    It must not be a folder, must end in one of `suffixes`, its folder must exist, and a
    file already there must not be read-only
    (:func:`perfci._core.files.check_replaceable`): perfci does not replace a file the
    user may not write, or one with no write bit.
    """
    try:
        target = Path(path)
    except TypeError:
        raise ValueError(f"{name} must be a file name; got {path!r}.") from None
    if target.is_dir():
        raise ValueError(f"{name} {str(path)!r} is a folder; give a file name.")
    if target.exists() and not target.is_file():  # a FIFO, a device, a socket
        raise ValueError(f"{name} {str(path)!r} is not a regular file; give a file name.")
    if target.suffix.lower() not in suffixes:
        endings = (
            ", ".join(suffixes[:-1]) + " or " + suffixes[-1] if len(suffixes) > 1 else suffixes[0]
        )
        raise ValueError(f"{name} must end in {endings}; got {str(path)!r}.")
    if not target.parent.is_dir():
        raise ValueError(f"{name} {str(path)!r} is in a folder that does not exist.")
    check_replaceable(target, name)
    return target


# ------------------------------------------------------------------------ the report


def _validation_report_iv(
    names: Any, title: Any, forest_metric: Any, digits: Any, inputs: Mapping[str, Any]
) -> dict[str, str]:
    """Check the options :func:`perfci.report` does not; return the inputs' display names."""
    import pandas as pd

    from .._core.labels import has_columns

    if inputs["pred_b"] is not None and has_columns(inputs["pred_b"]):
        raise ValueError(
            "`pred_b` must have one label per text: a column per run is not available for "
            "the paired comparison (give one run, or their majority vote)."
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
        if isinstance(value, pd.DataFrame) and len(value.columns):  # annotators, runs
            return listing([str(c) for c in value.columns])
        name = getattr(value, "name", None)  # a pandas Series' name
        return name if isinstance(name, str) and name.strip() else None

    return {
        key: given.get(key) or own_name(inputs.get(key)) or default
        for key, default in NAME_DEFAULTS.items()
    }


def validation_report(
    y_true: Any,
    y_pred: Any,
    *former_groups: Any,
    groups: Any = None,
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
    weights: Any = None,
    strata: Any = None,
    stratum_sizes: Any = None,
    classifiers: Any = None,
    covariates: Any = None,
    target: Any = None,
    target_weight: str | None = "weight",
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
    weights, strata, stratum_sizes : optional
        The design of a weighted or stratified sample, as in :func:`perfci.report`: the
        rows and comparisons are design-based, about the corpus the sample was drawn
        from; the data section and the methods paragraph state the design and the
        weighting. `differences` defaults to False then (subgroups are domains), and
        there is no per-person forest (its rates would be unweighted).
    classifiers : pandas.DataFrame or mapping, optional
        Other classifiers' labels on the same texts, one column each (named): adds
        their differences from `y_pred` for every binary metric of the table, holding
        jointly per metric (:func:`perfci.compare_many`), a table and a forest of them
        (:attr:`ValidationReport.many`). Not with a weighted design.
    covariates : pandas.DataFrame, optional
        One row per text: fits :func:`perfci.bayes.performance_model` to the report's
        main metric (the per-person forest's, recall where reported) on these columns,
        persons as random effects, and adds its coefficients, its effects on the metric
        for new persons, the metric over the sample's mix, a forest of the effects and a
        sentence of the methods paragraph. Not with a weighted design.
    target, target_weight : optional
        With `covariates`, a table of the target's covariate patterns and its weight
        column (or None: one row per relevant text, counted): the metric poststratified
        to it (:meth:`~perfci.bayes.performance.PerformanceFit.poststratify`).

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
    >>> rep = pc.validation_report(texts["human"], texts["model"], groups=texts["person"], rng=1)
    >>> rep.summary["texts"], rep.summary["persons"], rep.forest_metric
    (1069, 40, 'recall')
    >>> print(rep.methods[:86])
    We compared the labels of the classifier (model) with the reference labels (human) on
    >>> page = rep.to_html()
    >>> page.startswith("<!DOCTYPE html>"), "<script" in page, page.count("<img ")
    (True, False, 2)
    """
    check_aligned(y_true=y_true, y_pred=y_pred, groups=groups, by=by, pred_b=pred_b)
    check_aligned(y_true=y_true, weights=weights, strata=strata, classifiers=classifiers)
    groups = positional_groups(former_groups, groups, "validation_report")
    from ..counting import confusion
    from ..reporting import report
    from ..weighted_tables import design_given

    design_args = {"weights": weights, "strata": strata, "stratum_sizes": stratum_sizes}
    weighted = design_given(**design_args)

    inputs = {"y_true": y_true, "y_pred": y_pred, "pred_b": pred_b, "groups": groups}
    names_ = _validation_report_iv(
        names, title, forest_metric, digits, {**inputs, "by": by, "score": score}
    )
    source = crossed_source(y_true, y_pred)  # several annotators, or repeated runs
    refuse_with_crossed(
        source,
        {"pred_b": pred_b, "classifiers": classifiers, "covariates": covariates}
        | {"target": target, "forest_metric": forest_metric, **design_args},
    )
    generator = check_rng(rng)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counts = None if source else confusion(y_true, y_pred, positive=positive, groups=groups)
        if pred_b is not None and counts is not None and counts.classes is not None:
            raise ValueError(  # before any interval
                "`pred_b` is compared on binary metrics: give `positive` (the class to "
                "compare) with multi-class labels."
            )
        table = report(
            y_true,
            y_pred,
            groups=groups,
            by=by,
            score=score,
            differences=(by is not None and not weighted) if differences is None else differences,
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
            **design_args,
        )
        level = float(confidence_level)  # the report checked it
        main = all_texts(table)
        main = main[~main["method"].map(is_bayes).astype(bool)]
        comparisons, left_out = None, list[str]()
        if pred_b is not None and counts is not None:
            compared = [m for m in dict.fromkeys(main["metric"]) if m in registry.BINARY_METRIC]
            comparisons, left_out = paired_comparisons(
                y_true,
                y_pred,
                pred_b,
                groups,
                compared,
                counts.positive,
                level,
                generator,
                design_args,
            )
        many, many_metric, many_left_out = many_part(
            classifiers, weighted, main, y_true, y_pred, names_["y_pred"], groups,
            None if counts is None else counts.positive, level, forest_metric, generator,
        )  # fmt: skip
        left_out += many_left_out
        if target is not None and covariates is None:
            raise ValueError(
                "`target` is poststratified by the performance model: give `covariates`."
            )
        chosen, person_rates, person_method = _person_part(
            counts, main, forest_metric, weighted, level
        )
        performance_coefficients, performance_effects, performance = performance_part(
            covariates, target, target_weight, weighted, counts, chosen, y_true, y_pred,
            groups, level, generator,
        )  # fmt: skip
        bayes_fit = None
        if bayes and person_rates is not None and chosen is not None:
            bayes_fit = bayes_person_fit(table, person_rates, chosen, level, generator.spawn(1)[0])
        crossed = None
        if source is not None:
            crossed = crossed_parts(
                source, y_true, y_pred, list(dict.fromkeys(main["metric"])), names=names_,
                groups=groups, positive=positive, confidence_level=level, rng=generator,
            )  # fmt: skip
    messages = tuple(dict.fromkeys(f"{type(w.message).__name__}: {w.message}" for w in caught))
    for w in caught:  # nothing silent: the caller sees them as usual
        warnings.warn(w.message, w.category, stacklevel=2)
    if crossed is not None:
        summary, matrices = dict(crossed.summary), crossed.confusion
    else:
        summary = data_summary(counts)
        matrices = confusion_matrices(counts, y_true, y_pred, positive, names_)
    summary |= design_summary(y_true, y_pred, positive, groups, design_args)
    seed = seed_words(rng)
    # the samplers that ran, as the Bayesian rows name them ("auto" resolves per model)
    ran = " ".join(str(m) for m in table["method"] if is_bayes(m))
    mcmc = next((name for name in ("nutpie", "pymc") if f"({name}," in ran), None)
    versions = library_versions(mcmc)
    options = {"design": design, "df_adjust": df_adjust, "n_resamples": n_resamples}
    given = tuple(
        name
        for name, value in options.items()
        if not (isinstance(value, str) and value == policy.RECOMMENDED)
    )
    resamples = default_resamples(level) if isinstance(n_resamples, str) else int(n_resamples)
    choices = Choices(resamples, seed_clause(seed), given, mcmc)
    methods, references = methods_paragraph(
        table, comparisons, summary, names_, level, choices, versions
    )
    methods, references = _more_methods(
        methods, references, table, summary, crossed, many, performance, names_["y_pred"],
        groups is not None,
    )  # fmt: skip
    methods = visible_text(methods, keep="\n")  # prose to paste: nothing hidden from names
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
        many=many,
        many_metric=many_metric,
        performance_coefficients=performance_coefficients,
        performance_effects=performance_effects,
        performance=performance,
        confusion=matrices,
        annotators=None if crossed is None else crossed.annotators,
        runs=None if crossed is None else crossed.runs,
        bayes_fit=bayes_fit,
    )
    tables, _ = result._tables()
    notes = tuple(text for t in tables for _, text in t.notes) + tuple(left_out)
    return dataclasses.replace(result, notes=notes)


def _more_methods(
    methods: str,
    references: tuple[str, ...],
    table: pd.DataFrame,
    summary: dict[str, Any],
    crossed: Any,
    many: pd.DataFrame | None,
    performance: dict[str, Any] | None,
    name: str,
    persons: bool,
) -> tuple[str, tuple[str, ...]]:
    """Add the sentences of the crossed design, the classifiers and the model to `methods`.

    Each sentence that cites a reference numbers it after those cited so far.
    """
    if crossed is not None and len(table):
        cited = f"[{len(references) + 1}]"
        sentence, cites = crossed_sentence(crossed.kind, table, summary, cited)
        methods = f"{methods} {sentence}"
        references = (*references, f"{cited} {CROSSED_REFERENCE}") if cites else references
    if many is not None and len(many):
        cited = f"[{len(references) + 1}]"
        sentence = many_sentence(many, name, persons, cited)
        methods, references = f"{methods} {sentence}", (*references, f"{cited} {MANY_REFERENCE}")
    if performance is not None:
        cited = f"[{len(references) + 1}]"
        methods = f"{methods} {performance_sentence(performance, cited)}"
        if performance.get("target") is not None:
            references = (*references, f"{cited} {PERFORMANCE_REFERENCE}")
    return methods, references


def _person_part(
    counts: Any, main: Any, forest_metric: str | None, weighted: bool, level: float
) -> tuple[str | None, pd.DataFrame | None, str | None]:
    """Return the main metric, each person's rate of it and their interval's method.

    The main metric is `forest_metric`, else recall when it is in the table, else its
    first proportion metric (None without one); the persons' rates need texts nested in
    persons, binary labels and an unweighted sample (`counts` None: a crossed design).
    """
    proportions = [m for m in main["metric"] if m in registry.PROPORTION_METRIC]
    if forest_metric is not None and forest_metric not in proportions:
        raise ValueError(
            f"`forest_metric` {forest_metric!r} is not a proportion metric of the table; "
            f"its proportion metrics are {proportions}."
        )
    chosen = forest_metric or ("recall" if "recall" in proportions else None)
    chosen = chosen or (proportions[0] if proportions else None)
    if counts is None or counts.groups is None or counts.classes is not None or weighted:
        return chosen, None, None
    if chosen is None:
        return None, None, None
    label = str(main.loc[main["metric"] == chosen, "method"].iloc[0])
    rates, method = person_rate_table(counts, chosen, label, level)
    return chosen, rates, method


hide_parameters(validation_report, positional=True)
