r"""Output of the command line: text, tables (text, CSV, markdown), JSON and progress.

Every ``--json`` output goes through :func:`json_text`, which takes a result (its
``to_dict()``), a :class:`pandas.DataFrame` (one object per row) or a payload of plain
values, and writes strict JSON: NaN and infinity become null (and, as JSON does, every
control or non-ASCII character as a ``\u`` escape).

No text from data reaches the terminal raw: :func:`echo` and :func:`emit` print text
through :func:`perfci._core.text.visible_text`, and :func:`print_table` passes every cell
and column name of a table through it (Markdown tables through
:func:`perfci.publishing.tables.markdown_text`). A terminal escape sequence (ESC, CSI), any
other control character and a bidi override is printed as a visible escape (``\x1b``,
``\u202e``), never applied; line breaks inside a cell too (``\n``).

Progress goes to standard error, and only when it is a terminal (a log file or a pipe
gets none) and ``--quiet`` was not given: :func:`progress_bar` for the cells of a
validation run, :class:`Activity` (the time so far) for any other command still running
after :data:`ACTIVITY_DELAY` seconds.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, TextIO

from .._core.text import visible_text

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "ACTIVITY_DELAY",
    "Activity",
    "echo",
    "emit",
    "json_text",
    "markdown",
    "csv_safe_text",
    "print_table",
    "progress_bar",
    "records",
    "stderr_is_terminal",
]


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Return a table's rows as JSON-ready dicts: full precision, missing values as None."""
    from .._core.results import to_jsonable

    clean = frame.astype(object).where(frame.notna(), None)
    return [to_jsonable(row, "row") for row in clean.to_dict("records")]


def json_text(value: Any) -> str:
    """Return the strict JSON text of a result, a table or a payload of plain values."""
    from .._core.results import to_jsonable

    # a table is a DataFrame only if pandas is loaded: a result's JSON does not import it
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(value, pandas.DataFrame):
        data: Any = records(value)
    elif hasattr(value, "to_dict") and not isinstance(value, dict):
        data = value.to_dict()
    else:
        data = to_jsonable(value, "output")
    return json.dumps(data, allow_nan=False)


def echo(text: str, *, keep: str = "\n", end: str = "\n", file: TextIO | None = None) -> None:
    r"""Print text of one or more lines with no control or bidi character raw.

    Every character :func:`perfci._core.text.visible_text` escapes is printed as its
    escape (ESC as ``\x1b``, U+202E as ``\u202e``); only the line breaks ``\n`` between
    the lines are kept (none with ``keep=""``, for a message of one line).

    Parameters
    ----------
    text : str
        What to print: a message or a result's text, holding names from the data.
    keep : str, default "\n"
        The characters printed raw all the same.
    end : str, default "\n"
        Printed after `text`, as :func:`print` does.
    file : file object, optional
        Where to print; standard output by default.

    Examples
    --------
    >>> from perfci.cli.rendering import echo
    >>> echo("site \x1b[2J\u202eX\nnext line")
    site \x1b[2J\u202eX
    next line
    """
    print(visible_text(text, keep=keep), end=end, file=sys.stdout if file is None else file)


def emit(value: Any, as_json: bool, text: str) -> None:
    """Print `text` (through :func:`echo`), or the JSON of `value` when `as_json`."""
    if as_json:
        print(json_text(value))
    else:
        echo(text)


def markdown(frame: pd.DataFrame) -> str:
    """Return a table as a markdown table (numbers to 4 significant digits), cells escaped."""
    import pandas as pd

    from ..publishing.tables import markdown_text

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return "" if v != v else f"{v:.4g}"
        return "" if v is pd.NA else markdown_text(str(v))

    head = " | ".join(markdown_text(str(c)) for c in frame.columns)
    lines = ["| " + head + " |", "|" + "---|" * frame.shape[1]]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(False)]
    return "\n".join(lines)


def _visible_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Return a table with every text cell and column name through ``visible_text``."""
    shown = frame.copy()

    def cell(v: Any) -> Any:
        return visible_text(v) if isinstance(v, str) else v

    for i in range(shown.shape[1]):  # by position: column names may repeat
        if shown.iloc[:, i].dtype.kind not in "biufcmM":  # text, objects, categories
            shown.isetitem(i, shown.iloc[:, i].astype(object).map(cell))
    shown.columns = [visible_text(c) if isinstance(c, str) else c for c in shown.columns]
    return shown


#: The first characters that make a spreadsheet read a cell as a formula (OWASP).
_FORMULA_STARTS = frozenset("=+-@\t\r")

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def csv_safe_text(text: str) -> str:
    r"""Return a text cell of a CSV output that no spreadsheet runs as a formula.

    The policy of ``--format csv`` (OWASP's for CSV injection): a text cell or a column
    name starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is written
    with a single quote ``'`` before it, unless the whole text is a plain number (``-0.5``
    stays as it is); then, as every output, its control and bidi characters are shown as
    escapes (:func:`perfci._core.text.visible_text`).

    Parameters
    ----------
    text : str
        A cell or a column name from the data.

    Returns
    -------
    str
        The text, quoted if it could start a formula, and visible.

    Examples
    --------
    >>> from perfci.cli.rendering import csv_safe_text
    >>> csv_safe_text("=1+2"), csv_safe_text("@SUM(A1)"), csv_safe_text("-0.5")
    ("'=1+2", "'@SUM(A1)", '-0.5')
    >>> print(csv_safe_text("\tx"))
    '\tx
    """
    shown = visible_text(text)
    if text[:1] in _FORMULA_STARTS and not _NUMBER.fullmatch(text):
        return "'" + shown
    return shown


def _csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Return a table with every text cell and column name through :func:`csv_safe_text`."""
    shown = frame.copy()

    def cell(v: Any) -> Any:
        return csv_safe_text(v) if isinstance(v, str) else v

    for i in range(shown.shape[1]):  # by position: column names may repeat
        if shown.iloc[:, i].dtype.kind not in "biufcmM":  # text, objects, categories
            shown.isetitem(i, shown.iloc[:, i].astype(object).map(cell))
    shown.columns = [csv_safe_text(c) if isinstance(c, str) else c for c in shown.columns]
    return shown


def print_table(frame: pd.DataFrame, fmt: str) -> None:
    """Print a table as ``table`` (aligned text), ``json``, ``csv``, ``markdown`` or ``latex``.

    Text from the data is printed visibly escaped in each (the control and bidi
    characters of :func:`perfci._core.text.visible_text`; JSON escapes them itself). In
    CSV, a text cell or column name that could start a spreadsheet formula is quoted
    (:func:`csv_safe_text`); in LaTeX every cell and column name goes through
    :func:`perfci.publishing.tables.latex_text` (a booktabs ``tabular``).
    """
    import pandas as pd

    if fmt == "json":
        print(json_text(frame))
    elif fmt == "csv":
        print(_csv_frame(frame).to_csv(index=False), end="")
    elif fmt == "markdown":
        print(markdown(frame))
    elif fmt == "latex":
        print(_latex_frame(_rounded(frame)), end="")
    else:
        shown = _rounded(_visible_frame(frame))
        with pd.option_context(
            "display.width", 250, "display.max_columns", None, "display.max_colwidth", 70
        ):
            print(shown.to_string(index=False))


def _rounded(frame: pd.DataFrame) -> pd.DataFrame:
    """Return the table with its numbers as the text table shows them (strings)."""
    import pandas as pd

    shown = frame.copy()
    three = ("estimate", "estimate_versus", "difference", "low", "high", "icc")
    for col in (*three, "design_effect", "se"):
        if col in shown:
            digits = 4 if col == "se" else 3
            shown[col] = shown[col].map(lambda v, d=digits: "" if pd.isna(v) else f"{v:.{d}f}")
    for col, digits in (("n_eff", 1), ("df", 1)):
        if col in shown:
            shown[col] = shown[col].map(lambda v, d=digits: "" if pd.isna(v) else f"{v:.{d}f}")
    for col in ("p_value", "p_adjusted"):
        if col in shown:
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:.4g}")
    return shown


def _latex_frame(frame: pd.DataFrame) -> str:
    r"""Return a table as a booktabs ``tabular``, every cell escaped for LaTeX."""
    import pandas as pd

    from ..publishing.tables import latex_text

    def cell(value: object) -> str:
        return "" if not isinstance(value, str) and pd.isna(value) else latex_text(str(value))

    rows = [" & ".join(cell(v) for v in row) + " \\\\" for row in frame.itertuples(index=False)]
    return "\n".join(
        [
            r"\begin{tabular}{" + "l" * frame.shape[1] + "}",
            r"\toprule",
            " & ".join(cell(c) for c in frame.columns) + " \\\\",
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}",
            "",
        ]
    )


def stderr_is_terminal() -> bool:
    """Return whether standard error is a terminal (where progress may be drawn)."""
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # replaced by an object without it, or closed
        return False


def progress_bar(done: int, total: int) -> None:
    r"""Draw a progress bar of finished cells on stderr.

    Examples
    --------
    >>> import contextlib, io
    >>> from perfci.cli.rendering import progress_bar
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     progress_bar(3, 4)
    >>> err.getvalue()
    '\r[##############################..........] 3/4 cells'
    """
    width = 40
    filled = int(width * done / max(total, 1))
    end = "\n" if done >= total else ""
    print(
        f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} cells",
        end=end,
        file=sys.stderr,
        flush=True,
    )


#: Seconds a command runs before :class:`Activity` shows that it is still working.
ACTIVITY_DELAY = 2.0


class Activity:
    r"""Show on stderr that a command is still working, from `delay` seconds on.

    Used as a context manager around a command: when the command is still running after
    `delay` seconds, a line ``perfci NAME: working, 3 s`` is drawn on stderr and updated
    every `interval` seconds, until the command ends or first writes to stdout (its
    result); then the line is erased, so nothing of it is left in the terminal. Only
    drawn when `enabled`; :meth:`clear` erases it before another message on stderr.

    Parameters
    ----------
    label : str
        What is working, e.g. ``"perfci bayes"``.
    enabled : bool, default True
        False draws nothing (``--quiet``, or stderr not a terminal).
    delay : float, optional
        Seconds before the line is first drawn (default :data:`ACTIVITY_DELAY`).
    interval : float, default 0.5
        Seconds between updates.

    Examples
    --------
    >>> import contextlib, io, time
    >>> from perfci.cli.rendering import Activity
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     with Activity("perfci demo", delay=0.01, interval=0.01):
    ...         time.sleep(0.1)
    >>> "perfci demo: working, 0 s" in err.getvalue(), err.getvalue().endswith("\r")
    (True, True)
    """

    def __init__(
        self,
        label: str,
        *,
        enabled: bool = True,
        delay: float | None = None,
        interval: float = 0.5,
    ) -> None:
        self.label, self.enabled, self.interval = label, enabled, interval
        self.delay = ACTIVITY_DELAY if delay is None else delay
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._shown = 0  # characters of the line now on the terminal
        self._stdout: TextIO | None = None

    def __enter__(self) -> Activity:
        if self.enabled:
            self._started = time.monotonic()
            self._stderr = sys.stderr
            self._stdout = sys.stdout
            sys.stdout = _StopOnWrite(self, sys.stdout)
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self._stdout is not None:
            sys.stdout = self._stdout
            self._stdout = None

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        while True:
            with self._lock:
                if self._stop.is_set():
                    return
                elapsed = time.monotonic() - self._started
                line = f"{self.label}: working, {elapsed:.0f} s"
                self._stderr.write("\r" + line.ljust(self._shown))
                self._stderr.flush()
                self._shown = len(line)
            if self._stop.wait(self.interval):
                return

    def clear(self) -> None:
        """Erase the line if it is shown (it is drawn again at the next update)."""
        with self._lock:
            if self._shown:
                self._stderr.write("\r" + " " * self._shown + "\r")
                self._stderr.flush()
                self._shown = 0

    def stop(self) -> None:
        """Stop updating and erase the line; idempotent.

        It leaves ``sys.stdout`` alone: it runs inside a write to it, and replacing the
        stream there frees it under the caller (CPython 3.12's ``print`` holds it
        borrowed). The context's exit puts stdout back.
        """
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        self.clear()


class _StopOnWrite:
    """A stdout that stops the activity line before the command's first output."""

    def __init__(self, activity: Activity, stream: TextIO) -> None:
        self._activity, self._stream = activity, stream

    def write(self, text: str) -> int:
        self._activity.stop()
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
