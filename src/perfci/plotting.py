"""One style for every perfci figure, one way to write figures, and the forest plot.

Every figure perfci draws (:func:`perfci.bayes.plot_posterior`,
:func:`perfci.bayes.plot_forest`, :func:`perfci.plot_half_width_curves` and the
validation harness's figures) is drawn inside :func:`style` and written by
:func:`save_figure`, so they share fonts, sizes, colours and file formats.

- :func:`style`: a matplotlib rc context. Small sans-serif type (8 pt, 7 pt ticks and
  legends) for figures printed at their size, the colour-blind-safe palette of Okabe and
  Ito [1]_ (:data:`PALETTE`) as the colour cycle, no top or right spines, no legend
  frames, a faint horizontal grid, text kept as text in SVG and as TrueType in PDF.
- :func:`save_figure`: writes one figure in every format asked for (:data:`FORMATS`:
  PNG at 200 dpi, SVG, PDF), with a tight bounding box and, for SVG and PDF, no
  creation date, so the same figure gives the same file.
- :func:`forest`: a forest plot of per-person intervals that scales from a handful of
  persons to hundreds (sorted rows, a height that grows with the rows up to a cap,
  labels thinned or left out when rows get thin, the observed rates as markers whose
  area is the person's number of texts, a population-level band).

Importing this module does not import matplotlib; its functions do.

References
----------
.. [1] Okabe, M. and Ito, K. (2008). Color universal design (CUD): how to make figures
   and presentations that are friendly to colorblind people. J*Fly.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ._core.files import remove_stale_temporaries, write_bytes_atomic
from ._core.registry import choice_message
from ._core.text import single_line, visible_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "FORMATS",
    "FOREST_MAX_HEIGHT",
    "FOREST_MAX_LABEL",
    "FOREST_ROW_HEIGHT",
    "PALETTE",
    "RC",
    "forest",
    "forest_height",
    "save_figure",
    "figure_text",
    "shorten_labels",
    "style",
]

#: File formats :func:`save_figure` writes.
FORMATS = ("png", "svg", "pdf")

#: Okabe and Ito's colour-blind-safe colours, in the order lines take them: blue,
#: vermillion, bluish green, reddish purple, orange, sky blue, black, and yellow last
#: (faint on white).
PALETTE = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#F0E442",
)

#: The rc settings of :func:`style` (the colour cycle, :data:`PALETTE`, is added there).
RC: dict[str, Any] = {
    # names from the data are text: a `$` never starts mathtext (whose parse errors
    # said nothing), in every figure drawn in this style
    "text.parse_math": False,
    "font.family": "sans-serif",
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "figure.titlesize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "0.9",
    "grid.linewidth": 0.5,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.major.size": 2.5,
    "ytick.major.size": 2.5,
    "lines.linewidth": 1.1,
    "lines.markersize": 3.5,
    "legend.frameon": False,
    "legend.handlelength": 1.6,
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.03,
    "svg.fonttype": "none",
    "svg.hashsalt": "perfci",
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "image.cmap": "viridis",
}

#: Metadata that keeps a format's bytes the same from run to run (no dates).
_METADATA: dict[str, dict[str, Any]] = {
    "png": {},
    "svg": {"Date": None},
    "pdf": {"CreationDate": None},
}

#: Height of a forest plot's row, and the tallest forest, in inches.
FOREST_ROW_HEIGHT = 0.14
FOREST_MAX_HEIGHT = 9.0
#: The longest row label of a forest plot, in characters; a longer one is shortened with
#: an ellipsis in its middle (:func:`shorten_labels`).
FOREST_MAX_LABEL = 24
#: Inches of a forest plot outside its rows (title, axis, legend).
_FOREST_MARGIN = 1.0
#: Smallest spacing of two row labels, in inches (7 pt type is about 0.1 in).
_LABEL_SPACING = 0.11
#: Label every k-th row at most this sparse; sparser, no row labels at all.
_MAX_LABEL_STEP = 4


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Draw inside perfci's figure style (a :func:`matplotlib.rc_context`).

    Figures and axes created inside the context take its fonts, sizes and colour cycle.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from perfci import plotting
    >>> with plotting.style():
    ...     fig, ax = plt.subplots()
    ...     line, = ax.plot([0, 1], [0, 1])
    >>> line.get_color() == plotting.PALETTE[0], ax.spines["top"].get_visible()
    (True, False)
    >>> plt.close(fig)
    """
    import matplotlib as mpl

    settings: Any = {**RC, "axes.prop_cycle": f"cycler(color={list(PALETTE)!r})"}
    with mpl.rc_context(settings):
        yield


def check_formats(formats: Any) -> tuple[str, ...]:
    """Return the formats asked for, once each, in order; raise naming `formats`."""
    values = (formats,) if isinstance(formats, str) else formats
    try:
        values = tuple(values)
    except TypeError:
        raise ValueError(choice_message("formats", FORMATS, formats)) from None
    if not values:
        raise ValueError(f"`formats` must name at least one of {sorted(FORMATS)}; got {formats!r}.")
    for value in values:
        if not isinstance(value, str) or value not in FORMATS:
            raise ValueError(choice_message("formats", FORMATS, value))
    return tuple(dict.fromkeys(values))


def save_figure(
    fig: Figure, path: str | Path, formats: str | Sequence[str] = ("png",), *, close: bool = False
) -> list[Path]:
    """Write a figure in every format asked for; return the files written.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    path : str or path-like
        The file name without its format's suffix (a suffix ``.png``, ``.svg`` or
        ``.pdf`` is replaced; any other, such as the ``.5`` of ``p-0.5``, is kept).
        Its folder must exist. Each file is written beside its name and renamed into
        place, so it is whole or absent, never torn; a file already there keeps its
        permission bits, and a read-only one is refused. Temporary files that a killed
        writer left in the folder (``.NAME.PID.XXXXXXXX.tmp``, its pid no longer
        running) are deleted first.
    formats : str or sequence of str, default ("png",)
        Some of :data:`FORMATS`: PNG (200 dpi), SVG (text kept as text), PDF (TrueType
        fonts embedded).
    close : bool, default False
        Close the figure once written (figures drawn in a loop should be).

    Returns
    -------
    list of pathlib.Path
        One file per format, in the order of `formats`.

    Raises
    ------
    ValueError
        If `formats` is empty or names a format not in :data:`FORMATS`.
    perfci._core.files.WriteError
        If a file cannot be written (a full disk, a read-only file); it names the file.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from perfci import plotting
    >>> with plotting.style():
    ...     fig, ax = plt.subplots(figsize=(3, 2))
    ...     _ = ax.plot([0, 1], [0.9, 0.95])
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = plotting.save_figure(fig, Path(folder) / "curve.png", ("png", "svg"))
    ...     [p.name for p in written]
    ['curve.png', 'curve.svg']
    >>> plt.close(fig)
    """
    wanted = check_formats(formats)
    base = Path(path)
    if base.suffix.lstrip(".").lower() in FORMATS:
        base = base.with_suffix("")
    written = []
    remove_stale_temporaries(base.parent)  # left by a writer that was killed
    with style():  # the savefig settings (dpi, bbox, font types) are read when saving
        for fmt in wanted:
            target = base.with_name(f"{base.name}.{fmt}")
            buffer = io.BytesIO()
            fig.savefig(buffer, format=fmt, metadata=_METADATA[fmt])
            # bytes, not a getbuffer() view: a view held by an exception's traceback in
            # a reference cycle can crash CPython 3.12.1 when collected (gh-111049)
            write_bytes_atomic(target, buffer.getvalue())  # whole or absent
            written.append(target)
    if close:
        import matplotlib.pyplot as plt

        plt.close(fig)
    return written


def forest_height(rows: int) -> float:
    """Height in inches of a forest plot of `rows` rows.

    :data:`FOREST_ROW_HEIGHT` a row plus a margin for the title, axis and legend, at most
    :data:`FOREST_MAX_HEIGHT`: beyond about 57 rows the rows get thinner instead of the
    figure taller.

    Examples
    --------
    >>> from perfci import plotting
    >>> plotting.forest_height(10), plotting.forest_height(114), plotting.forest_height(500)
    (2.4, 9.0, 9.0)
    """
    return float(min(_FOREST_MARGIN + FOREST_ROW_HEIGHT * max(int(rows), 1), FOREST_MAX_HEIGHT))


def _label_step(rows: int, height: float) -> int:
    """Label every k-th row so that labels stay readable; 0: no labels."""
    row = (height - _FOREST_MARGIN) / max(rows, 1)
    step = max(1, math.ceil(_LABEL_SPACING / row - 1e-9))
    return step if step <= _MAX_LABEL_STEP else 0


def figure_text(text: Any) -> str:
    r"""Return text from data as a figure label shows it: one line, nothing hidden.

    One line (:func:`perfci._core.text.single_line`), control and invisible format
    characters shown as escapes (:func:`perfci._core.text.visible_text`). A ``$`` is a
    dollar: figures drawn in :func:`style` do not parse mathtext.

    Parameters
    ----------
    text : object
        The text (``str(text)`` is used).

    Returns
    -------
    str

    Examples
    --------
    >>> from perfci import plotting
    >>> plotting.figure_text("$x^2$ \x1b[31mred\u202e\nnext")
    '$x^2$ \\x1b[31mred\\u202e next'
    """
    return visible_text(single_line(str(text)))


def _units(text: str) -> list[str]:
    r"""Split a label into the characters it shows; an escaped dollar (``\$``) is one."""
    return re.findall(r"\\\$|.", text, flags=re.DOTALL)


def _middle(units: list[str], width: int) -> str:
    """Return `units` shortened to `width` characters, an ellipsis in their middle."""
    if len(units) <= width:
        return "".join(units)
    keep = max(width - 1, 0)
    head, tail = (keep + 1) // 2, keep // 2
    return "".join(units[:head]) + "\u2026" + ("".join(units[-tail:]) if tail else "")


def shorten_labels(labels: Sequence[str], width: int = FOREST_MAX_LABEL) -> list[str]:
    r"""Shorten labels longer than `width` characters, keeping distinct labels distinct.

    A label longer than `width` keeps its beginning and its end around an ellipsis
    (``…``), `width` characters in all. Distinct labels that would shorten alike (or
    alike another label) get their position among them appended, `` #1``, `` #2``, ...,
    within the same width; equal labels stay equal. An escaped dollar (``\$``, as
    matplotlib takes it) counts as one character and is never split.

    Parameters
    ----------
    labels : sequence of str
        The labels.
    width : int, default :data:`FOREST_MAX_LABEL`
        The most characters a label keeps (at least 8).

    Returns
    -------
    list of str
        One label per label, in order.

    Examples
    --------
    >>> from perfci import plotting
    >>> plotting.shorten_labels(["short", "participant-2023-0001-site-berlin"])
    ['short', 'participant-…site-berlin']
    >>> ids = ["participant-2023-A-site-berlin", "participant-2023-B-site-berlin"]
    >>> plotting.shorten_labels(ids)
    ['participan…ite-berlin #1', 'participan…ite-berlin #2']
    """
    if isinstance(width, bool) or not isinstance(width, int) or width < 8:
        raise ValueError(f"`width` must be an integer at least 8; got {width!r}.")
    texts = [str(label) for label in labels]
    units = [_units(t) for t in texts]
    short = [_middle(u, width) for u in units]
    originals: dict[str, list[str]] = {}  # each shortened label: the labels it stands for
    for text, label in zip(texts, short, strict=True):
        if text not in originals.setdefault(label, []):
            originals[label].append(text)
    out = list(short)
    for i, (text, label) in enumerate(zip(texts, short, strict=True)):
        alike = originals[label]
        if len(alike) > 1 and len(units[i]) > width:  # shortened, and no longer distinct
            tag = f" #{alike.index(text) + 1}"
            out[i] = _middle(units[i], width - len(tag)) + tag
    if len({*out}) != len({*texts}):  # pathological labels (with tags of their own)
        index = {text: j for j, text in enumerate(dict.fromkeys(texts))}
        for i, text in enumerate(texts):
            if len(units[i]) > width:
                tag = f" #{index[text] + 1}"
                out[i] = _middle(units[i], width - len(tag)) + tag
    return out


def _forest_iv(
    estimate: Any, low: Any, high: Any, inner: Any, labels: Any, observed: Any, band: Any
) -> tuple[np.ndarray, ...]:
    """Check the forest's arrays: one value per row, the same number of rows everywhere."""
    from ._core.validation import check_real_array

    def real(name: str, value: Any) -> np.ndarray:
        """Real numbers or NaN (an undefined interval), flat."""
        try:
            raw = np.asarray(value)
        except (TypeError, ValueError):  # ragged nesting
            raw = np.asarray([None], dtype=object)
        if raw.dtype.kind not in "iuf":
            raise ValueError(f"`{name}` must be real numbers (NaN: undefined); got {value!r}.")
        arr = raw.astype(float).ravel()
        if np.any(np.isinf(arr)):
            raise ValueError(f"`{name}` must be finite numbers or NaN; got an infinity.")
        return arr

    est = real("estimate", estimate)
    m = est.size
    if m == 0:
        raise ValueError("`estimate` must hold at least one row; got none.")

    def rows(name: str, value: Any) -> np.ndarray:
        arr = real(name, value)
        if arr.size != m:
            raise ValueError(f"`{name}` must have one value per row ({m}); got {arr.size}.")
        return arr

    lo, hi = rows("low", low), rows("high", high)
    if inner is None:
        in_lo = in_hi = np.full(m, np.nan)
    else:
        if len(inner) != 2:
            raise ValueError("`inner` must be a pair (low, high) of arrays.")
        in_lo, in_hi = rows("inner", inner[0]), rows("inner", inner[1])
    if labels is None:
        names = np.array([str(i + 1) for i in range(m)], dtype=object)
    else:
        names = np.array([str(v) for v in labels], dtype=object)
        if names.size != m:
            raise ValueError(f"`labels` must have one label per row ({m}); got {names.size}.")
    if observed is None:
        y = n = np.full(m, np.nan)
    else:
        if len(observed) != 2:
            raise ValueError("`observed` must be a pair (successes, trials) of arrays.")
        y, n = rows("observed", observed[0]), rows("observed", observed[1])
        if not np.all((n > 0) & (y >= 0) & (y <= n)):  # NaN counts fail too
            raise ValueError(
                "`observed` must be (successes, trials) with 0 <= successes <= trials and "
                "trials > 0 in every row."
            )
    if band is not None:
        b = check_real_array("band", band).ravel()
        if b.size != 3:
            raise ValueError(f"`band` must be (estimate, low, high); got {band!r}.")
    else:
        b = np.full(3, np.nan)
    return est, lo, hi, in_lo, in_hi, names, y, n, b


def forest(
    estimate: Any,
    low: Any,
    high: Any,
    *,
    inner: tuple[Any, Any] | None = None,
    labels: Any = None,
    observed: tuple[Any, Any] | None = None,
    band: Sequence[float] | None = None,
    sort: bool = True,
    ax: Axes | None = None,
    interval_label: str = "interval",
    inner_label: str = "inner interval",
    estimate_label: str = "estimate",
    band_label: str = "population",
    xlabel: str = "rate",
) -> Axes:
    """Forest plot: one row per person, an interval and a point estimate in each.

    Parameters
    ----------
    estimate, low, high : array_like, shape (m,)
        Each row's point estimate and interval.
    inner : (array_like, array_like), optional
        A narrower interval of each row (e.g. 50%), drawn thicker.
    labels : sequence, optional
        Row labels (person ids); default 1 to m. A label longer than
        :data:`FOREST_MAX_LABEL` (24) characters is shortened with an ellipsis in its
        middle, and distinct labels stay distinct (:func:`shorten_labels`).
    observed : (array_like, array_like), optional
        Each row's successes and trials: the observed rate y/n is drawn as an open
        circle whose area is proportional to n, and ``y/n`` is written in a column at
        the right while every row is labelled.
    band : (float, float, float), optional
        A population-level estimate and interval, drawn as a vertical line and band
        across all rows.
    sort : bool, default True
        Sort the rows by `estimate`, highest at the top (ties keep their order); else
        the first row is at the top.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new figure, 6 in wide and :func:`forest_height`
        tall.
    interval_label, inner_label, estimate_label, band_label, xlabel : str
        Legend entries and the x-axis label.

    Returns
    -------
    matplotlib.axes.Axes
        The axes; rows are at y = m - 1 (top) to 0, and the y tick labels are the row
        labels in that order (every k-th row when rows are too thin for all of them; none
        beyond 4 rows a label, when the y-axis label says so).

    Raises
    ------
    ValueError
        If an array does not have one value per row, or `observed` has trials <= 0 or
        successes outside [0, trials].

    Notes
    -----
    Rows whose estimate or interval is NaN are drawn without what is missing (sorted
    last, at the bottom). With more than about 57 rows the figure stops growing (9 in)
    and rows get thinner; row labels are thinned so that they stay 0.11 in apart, and
    left out when fewer than one row in four could carry one.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import perfci as pc
    >>> from perfci import plotting
    >>> y, n = [9, 3, 27, 5], [10, 6, 30, 5]
    >>> ci = pc.proportion_ci(y, n, method="wilson")
    >>> ax = plotting.forest(ci.estimate, ci.low, ci.high, labels=["a", "b", "c", "d"],
    ...                      observed=(y, n), xlabel="recall (Wilson 95%)")
    >>> [t.get_text() for t in ax.get_yticklabels()]  # top to bottom: highest first
    ['d', 'a', 'c', 'b']
    >>> plt.close(ax.figure)
    """
    est, lo, hi, in_lo, in_hi, names, y, n, b = _forest_iv(
        estimate, low, high, inner, labels, observed, band
    )
    names = np.array(shorten_labels([figure_text(name) for name in names]), dtype=object)
    m = est.size
    # highest at the top; NaN estimates last (at the bottom)
    order = np.argsort(np.where(np.isnan(est), np.inf, -est), kind="stable") if sort else None
    if order is not None:
        est, lo, hi, in_lo, in_hi, names, y, n = (
            a[order] for a in (est, lo, hi, in_lo, in_hi, names, y, n)
        )
    rows = np.arange(m - 1, -1, -1, dtype=float)  # first row at the top
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    with style():
        if ax is None:
            height = forest_height(m)
            _, ax = plt.subplots(figsize=(6.0, height))
        else:
            height = float(ax.get_window_extent().height / ax.figure.dpi) + _FOREST_MARGIN
        row_pt = 72 * (height - _FOREST_MARGIN) / m  # a row's height in points
        width = float(np.clip(row_pt / 6, 0.4, 1.0))  # line widths shrink with the rows
        ax.grid(False)
        handles: list[Any] = []
        if not np.all(np.isnan(b)):
            ax.axvspan(b[1], b[2], color="0.85", lw=0, zorder=0)
            ax.axvline(b[0], color="0.45", lw=0.8, zorder=1)
            handles.append(
                (
                    Line2D([], [], color="0.45", lw=4, alpha=0.4),
                    f"{band_label} ({b[0]:.3f} [{b[1]:.3f}, {b[2]:.3f}])",
                )
            )
        ax.hlines(rows, lo, hi, color=PALETTE[0], lw=width, zorder=2)
        handles.append((Line2D([], [], color=PALETTE[0], lw=1), interval_label))
        if not np.all(np.isnan(in_lo)):
            thick = max(0.6, min(3 * width, 0.8 * row_pt))  # thin rows stay apart
            ax.hlines(rows, in_lo, in_hi, color=PALETTE[0], lw=thick, zorder=2)
            handles.append((Line2D([], [], color=PALETTE[0], lw=3), inner_label))
        dot = float(np.clip(row_pt * 0.55, 1.2, 4.0))
        ax.plot(est, rows, "o", color=PALETTE[0], ms=dot, mew=0, zorder=3)
        handles.append(
            (Line2D([], [], color=PALETTE[0], marker="o", ls="", ms=4, mew=0), estimate_label)
        )
        if not np.all(np.isnan(n)):
            largest = float(np.clip(row_pt, 2.0, 7.0)) ** 2  # the largest n fills a row
            area = np.maximum(largest * n / n.max(), 1.0)
            ax.scatter(
                y / n, rows, s=area, facecolors="none", edgecolors=PALETTE[1], lw=0.6, zorder=4
            )
            handles.append(
                (
                    Line2D([], [], color=PALETTE[1], marker="o", ls="", mfc="none", ms=4),
                    "observed rate y/n (area ∝ n; "
                    + (
                        f"n = {n.min():.0f} each)"
                        if n.min() == n.max()
                        else f"n from {n.min():.0f} to {n.max():.0f})"
                    ),
                )
            )
        step = _label_step(m, height)
        if step:
            shown = np.arange(0, m, step)
            ax.set_yticks(rows[shown], list(names[shown]))
            ax.tick_params(axis="y", length=0, labelsize=min(7.0, max(4.5, row_pt * step * 0.8)))
            if step == 1 and not np.all(np.isnan(n)):
                transform = ax.get_yaxis_transform()  # x in axes units, y in data units
                ax.text(1.01, m - 0.5, "y/n", transform=transform, fontsize=6, va="bottom")
                for r, yi, ni in zip(rows, y, n, strict=True):
                    ax.text(
                        1.01,
                        r,
                        f"{yi:.0f}/{ni:.0f}",
                        transform=transform,
                        fontsize=min(6.0, row_pt * 0.8),
                        va="center",
                        color="0.3",
                    )
        else:
            ax.set_yticks([])
            ax.set_ylabel(f"{m} persons" + (f", sorted by {estimate_label}" if sort else ""))
        ax.set_ylim(-0.6, m - 0.4)
        ax.spines["left"].set_visible(False)
        ax.set_xlabel(figure_text(xlabel))
        # above the rows, where it hides nothing
        ax.legend(
            [h for h, _ in handles],
            [label for _, label in handles],
            loc="lower left",
            bbox_to_anchor=(0.0, 1.0),
            ncol=2,
            borderaxespad=0.3,
        )
    return ax
