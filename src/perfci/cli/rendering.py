"""Output of the command line: text, tables (text, CSV, markdown) and JSON.

Every ``--json`` output goes through :func:`json_text`, which takes a result (its
``to_dict()``), a :class:`pandas.DataFrame` (one object per row) or a payload of plain
values, and writes strict JSON: NaN and infinity become null.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["emit", "json_text", "markdown", "print_table", "progress_bar", "records"]


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


def emit(value: Any, as_json: bool, text: str) -> None:
    """Print `text`, or the JSON of `value` when `as_json`."""
    print(json_text(value) if as_json else text)


def markdown(frame: pd.DataFrame) -> str:
    """Return a table as a markdown table (numbers to 4 significant digits)."""
    import pandas as pd

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return "" if v != v else f"{v:.4g}"
        return "" if v is pd.NA else str(v)

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * frame.shape[1]]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(False)]
    return "\n".join(lines)


def print_table(frame: pd.DataFrame, fmt: str) -> None:
    """Print a table as ``table`` (aligned text), ``json``, ``csv`` or ``markdown``."""
    import pandas as pd

    if fmt == "json":
        print(json_text(frame))
    elif fmt == "csv":
        print(frame.to_csv(index=False), end="")
    elif fmt == "markdown":
        print(markdown(frame))
    else:
        shown = frame.copy()
        for col in ("estimate", "low", "high", "icc", "design_effect"):
            if col in shown:
                shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
        if "n_eff" in shown:
            shown["n_eff"] = shown["n_eff"].map(lambda v: "" if pd.isna(v) else f"{v:.1f}")
        with pd.option_context(
            "display.width", 250, "display.max_columns", None, "display.max_colwidth", 70
        ):
            print(shown.to_string(index=False))


def progress_bar(done: int, total: int) -> None:
    """Draw a progress bar of finished cells on stderr."""
    width = 40
    filled = int(width * done / max(total, 1))
    end = "\n" if done >= total else ""
    print(
        f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} cells",
        end=end,
        file=sys.stderr,
        flush=True,
    )
