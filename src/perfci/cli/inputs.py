"""Reading the tables of the ``perfci`` command line: files, columns and their checks.

A file is a CSV, TSV or Parquet table of labelled texts, one row per text (or per text and
run); a column is read as text and checked by the contract of its flag (labels, scores,
ids). Every message names the flag, the column and the file, as typed.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "DELIMITERS",
    "MISSING_CODES",
    "annotator_codes",
    "name_rows",
    "person_sizes",
    "read_column",
    "read_design",
    "read_labels",
    "read_numbers",
    "read_runs",
    "read_scores",
    "read_table",
    "refuse_scores_as_labels",
    "thresholded_labels",
    "warn_mixed_codes",
    "wide_runs",
]


#: What other software writes for a missing value. Only an empty cell is missing to the
#: command line (so a person id ``NA`` is an id); in a column of labels these are refused,
#: since they would otherwise count as a label.
MISSING_CODES = ("NA", "N/A", "n/a", "#N/A", "#NA", "<NA>", "NULL", "null", "NaN", "nan", "None")


def read_table(path: str, flag: str | None = None, *, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV, TSV or Parquet file of labelled texts, cells kept as text.

    Only empty cells are missing: ``NA``, ``null`` and the like are read as they are.
    Columns are named by text: a Parquet file's column named by the number 0 (as pandas
    writes a frame without names) is the column ``0`` of ``--truth 0``. Messages name the
    file, and the `flag` that gave it when it is not the positional FILE.
    `sep` (``--sep``) is the delimiter of a CSV or TSV file (default: a tab for ``.tsv``,
    else a comma); a file it cannot be read with is named with the delimiter its header
    looks written with.
    """
    import pandas as pd

    file = "file" if flag is None else f"`{flag}` file"
    where = Path(path)
    suffix = where.suffix.lower()
    if where.is_dir():
        raise ValueError(f"{file} {path!r} is a folder; give a .csv, .tsv or .parquet file.")
    if suffix not in (".csv", ".tsv", ".txt", ".parquet", ".pq"):
        raise ValueError(f"{file} {path!r} must be a .csv, .tsv or .parquet file.")
    if not where.exists():
        raise ValueError(f"{file} {path!r} does not exist.")
    parquet = suffix in (".parquet", ".pq")
    if parquet and sep is not None:
        raise ValueError(
            f"`--sep` is the delimiter of a CSV or TSV file; {file} {path!r} is Parquet."
        )
    if sep is None:
        sep = "\t" if suffix == ".tsv" else ","
    try:
        if parquet:
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise ValueError(
            f"{file} {path!r} is empty; it needs a header and one row per text."
        ) from None
    except PermissionError:
        raise ValueError(f"{file} {path!r} could not be read: permission denied.") from None
    except UnicodeDecodeError:
        raise ValueError(
            f"{file} {path!r} could not be read: it is not text in UTF-8 (a CSV or TSV file)."
        ) from None
    except Exception as exc:  # pandas raises many kinds for a malformed file
        message = f"{file} {path!r} could not be read: {exc}".splitlines()[0]
        header = "" if parquet else _header(where)
        other = None if sep in header else _delimiter_of(header)
        if other is not None:  # e.g. a ';' file whose texts hold commas
            message = f"{message.rstrip('.')}; {_read_with(other)}."
        raise ValueError(message) from None
    if parquet:  # a column named by a number (0, 1, ...) is named by its text ("0", "1")
        names = [str(name) for name in frame.columns]
        frame.columns = pd.Index(names, dtype=object)
    else:  # pandas renames a repeated column ("model.1"): say so instead
        import csv

        names = next(csv.reader([_header(where)], delimiter=sep), [])
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(
            f"{file} {path!r} names the column {repeated[0]!r} more than once in its "
            "header; give every column its own name."
        )
    if len(frame) == 0:
        raise ValueError(
            f"{file} {path!r} has no rows, only a header ({', '.join(map(str, frame.columns))}); "
            "it needs one row per text."
        )
    return frame


#: Delimiters a table may be written with, in the order they are looked for in a header
#: that reads as one column (a file read with another delimiter than its own).
DELIMITERS = (";", "\t", "|", ",")


def _header(where: Path) -> str:
    """Return the first line of a text file (empty if it cannot be read)."""
    try:
        with where.open(encoding="utf-8", errors="replace") as handle:
            return handle.readline().rstrip("\r\n")
    except OSError:
        return ""


def _delimiter_of(header: str, wanted: str | None = None) -> str | None:
    """Return the delimiter a `header` read as one column looks written with, or None.

    The first of :data:`DELIMITERS` that splits it into several names (among them
    `wanted`, when given).
    """
    for delimiter in DELIMITERS:
        names = [name.strip().strip('"') for name in header.split(delimiter)]
        if len(names) > 1 and (wanted is None or wanted in names):
            return delimiter
    return None


def _read_with(delimiter: str) -> str:
    """Say which delimiter a file looks written with, and the flag that reads it."""
    return f"the file looks delimited by {delimiter!r}: read it with `--sep {delimiter!r}`"


def _not_in(frame: pd.DataFrame, name: str, option: str, path: str) -> ValueError:
    """Return the error of a column not in the file, naming a delimiter it looks written with.

    A header that reads as one column holding `name` between one of :data:`DELIMITERS`
    is a file read with the wrong delimiter (a semicolon-delimited CSV file).
    """
    columns = list(map(str, frame.columns))
    if len(columns) == 1:
        delimiter = _delimiter_of(columns[0], name)
        if delimiter is not None:
            shown = columns[0] if len(columns[0]) <= 40 else columns[0][:37] + "..."
            return ValueError(
                f"`{option}` column {name!r} is not in {path}, whose header reads as one "
                f"column, {shown!r}: {_read_with(delimiter)}."
            )
    return ValueError(f"`{option}` column {name!r} is not in {path}; its columns are {columns}.")


def name_rows(flags: Any) -> str:
    """Name the rows of a file where `flags` holds, counted from 1 after the header."""
    from .._core.labels import places

    return places(flags, flags.shape, ("row", 1))


@overload
def read_column(
    frame: pd.DataFrame, name: str, option: str, path: str, *, labels: bool = ...
) -> pd.Series: ...


@overload
def read_column(
    frame: pd.DataFrame, name: None, option: str, path: str, *, labels: bool = ...
) -> None: ...


def read_column(
    frame: pd.DataFrame, name: str | None, option: str, path: str, *, labels: bool = False
) -> pd.Series | None:
    """Return a column as text by name (None if `name` is); refuse its missing values.

    A cell is missing when it is empty (or only whitespace), or a missing value of a
    Parquet file. In a column of `labels`, :data:`MISSING_CODES` are refused as well.
    """
    if name is None:
        return None
    if name not in frame.columns:
        raise _not_in(frame, name, option, path)
    column = frame[name]
    text = column.astype(str) if column.dtype != object else column.map(str)
    missing = (column.isna() | (text.str.strip() == "")).to_numpy()
    if missing.any():
        raise ValueError(
            f"`{option}` column {name!r} has {int(missing.sum())} empty "
            f"{'cell' if missing.sum() == 1 else 'cells'}, in {name_rows(missing)} of {path}; "
            "every text needs a value: fill them in or drop those rows."
        )
    if labels:
        coded = text.str.strip().isin(MISSING_CODES).to_numpy()
        if coded.any():
            found = ", ".join(repr(v) for v in sorted(set(text[coded])))
            raise ValueError(
                f"`{option}` column {name!r} holds {found}, which other software writes for a "
                f"missing label, in {name_rows(coded)} of {path}; only an empty cell is missing "
                "here: give those texts a label, or drop the rows."
            )
    return text


def read_runs(frame: pd.DataFrame, columns: list[str], option: str, path: str) -> Any:
    """Return the labels of one column, or of several (repeated runs) as a column per run."""
    import numpy as np

    read = [read_column(frame, c, option, path, labels=True).to_numpy() for c in columns]
    return read[0] if len(read) == 1 else np.column_stack(read)


def read_labels(
    args: argparse.Namespace,
    columns: dict[str, tuple[str, str]],
    frame: Any,
    path: str | None = None,
    *,
    one_vs_rest: bool = False,
) -> Any:
    """Read the label columns by one contract; return their arrays and the positive label.

    `columns` maps each library argument (``y_true``, ...) to its flag and column name;
    `path` is the file they are read from (default ``args.file``). With `one_vs_rest`
    (``perfci report``, which reports each class of labels that are not binary), labels
    read as several classes warn of a column that mixes numeric codes with other texts
    (:func:`warn_mixed_codes`).
    """
    from ..counting import normalize_labels

    path = args.file if path is None else path
    read = {
        key: read_column(frame, column, flag, path, labels=True)
        for key, (flag, column) in columns.items()
    }
    names = {key: f"`{flag}` column {column!r}" for key, (flag, column) in columns.items()}
    given = normalize_labels(
        read,
        positive=args.positive,
        negative=args.negative,
        names={**names, "positive": "`--positive`", "negative": "`--negative`"},
        rows=("row", 1),
    )
    if one_vs_rest and given.positive is None:
        for key, (flag, column) in columns.items():
            warn_mixed_codes(read[key], flag, column, path)
    return given.values, given.positive


def _is_code(text: str) -> bool:
    """Whether a label's text is a numeric code: a finite number, or true/false."""
    from .._core.labels import binary_code

    if binary_code(text) is not None:
        return True
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def warn_mixed_codes(text: pd.Series, option: str, name: str, path: str) -> None:
    """Warn of a label column whose numeric codes sit beside other texts.

    A column of 0/1 codes with one ``yes`` is read as three classes, each reported
    one-vs-rest: the warning names the column, the other texts (the first five), how
    many texts hold them and the first row, counted from 1 after the header, so that a
    stray label is seen. The report still runs.
    """
    import warnings

    import numpy as np

    values = text.str.strip()
    kinds = {value: _is_code(value) for value in values.unique()}
    odd = sorted(value for value, code in kinds.items() if not code)
    if not odd or len(odd) == len(kinds):  # all codes, or no codes at all
        return
    flags = values.isin(odd).to_numpy()
    count = int(flags.sum())
    shown = ", ".join(repr(v) for v in odd[:5])
    if len(odd) > 5:
        shown += f" and {len(odd) - 5} more"
    warnings.warn(
        f"`{option}` column {name!r} mixes numeric codes with the "
        f"{'text' if len(odd) == 1 else 'texts'} {shown}, in {count} "
        f"{'text' if count == 1 else 'texts'} of {path} (the first in row "
        f"{int(np.flatnonzero(flags)[0]) + 1}): the labels are not a binary code, so each "
        "class is reported one-vs-rest; give `--positive` for a binary report, or correct "
        "the stray label.",
        UserWarning,
        stacklevel=2,
    )


def read_scores(frame: pd.DataFrame, name: str, option: str, path: str) -> Any:
    """Return a column of scores as finite floats; refuse cells that are not numbers."""
    return read_numbers(frame, name, option, path, "a finite number (a score)")


def read_numbers(
    frame: pd.DataFrame,
    name: str,
    option: str,
    path: str,
    what: str,
    *,
    positive: bool = False,
) -> Any:
    """Return a column as finite floats (`positive`: above 0); refuse any other cell."""
    import numpy as np
    import pandas as pd

    text = read_column(frame, name, option, path)
    values = pd.to_numeric(text.str.strip(), errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values) | ((values <= 0) if positive else False)
    if bad.any():
        found = ", ".join(repr(v) for v in sorted(set(text[bad]))[:5])
        raise ValueError(
            f"`{option}` column {name!r} must hold {what} for every text; "
            f"it holds {found} in {name_rows(bad)} of {path}."
        )
    return values


def read_design(args: argparse.Namespace, frame: pd.DataFrame) -> dict[str, Any]:
    """Return the sample design of ``--weight``, ``--stratum`` and ``--stratum-size``.

    The keys are the library's `weights`, `strata` and `stratum_sizes` (None where the
    flag is not given); a stratum size is read per text, the corpus texts of its stratum.
    """
    path = args.file
    weight, stratum, size = args.weight, args.stratum, args.stratum_size
    if size is not None and stratum is None:
        raise ValueError(
            "`--stratum-size` gives each stratum's corpus texts: it needs `--stratum` (the "
            "column of each text's stratum)."
        )
    return {
        "weights": None
        if weight is None
        else read_numbers(
            frame,
            weight,
            "--weight",
            path,
            "a positive number (the inverse of the text's inclusion probability)",
            positive=True,
        ),
        "strata": read_column(frame, stratum, "--stratum", path),
        "stratum_sizes": None
        if size is None
        else read_numbers(
            frame,
            size,
            "--stratum-size",
            path,
            "a positive number (its stratum's corpus texts)",
            positive=True,
        ),
    }


def refuse_scores_as_labels(
    frame: pd.DataFrame, name: str, option: str, path: str, hint: str | None = None
) -> None:
    """Refuse a label column that looks like scores, saying what to do with scores."""
    from ..counting import score_like

    found = score_like(read_column(frame, name, option, path).str.strip().to_numpy())
    if found is not None:
        hint = hint or (
            f"Give it as `--score {name}` for the ROC AUC, and/or add `--threshold T` to "
            "count a score of at least T as positive."
        )
        raise ValueError(
            f"`{option}` column {name!r} looks like scores, not labels: {found}. {hint}"
        )


def thresholded_labels(
    args: argparse.Namespace, frame: pd.DataFrame, column: str | None = None
) -> Any:
    """Return a ``--pred`` column's scores as labels coded as ``--truth``: score >= T positive."""
    import numpy as np

    from ..counting import normalize_labels

    scores = read_scores(frame, args.pred if column is None else column, "--pred", args.file)
    truth = read_column(frame, args.truth, "--truth", args.file, labels=True)
    given = normalize_labels(
        {"y_true": truth},
        positive=args.positive,
        negative=args.negative,
        names={
            "y_true": f"`--truth` column {args.truth!r}",
            "positive": "`--positive`",
            "negative": "`--negative`",
        },
        rows=("row", 1),
    )
    if given.coded:  # the positive label is 1, or 0 with --positive 0
        labels: tuple[Any, Any] = (str(given.positive), str(1 - given.positive))
    else:
        others = [c for c in given.classes.tolist() if c != given.positive]
        negative = args.negative if args.negative is not None else others[0]
        if args.negative is None and len(others) != 1:
            raise ValueError(
                f"`--threshold` needs the negative label: `--truth` column {args.truth!r} "
                f"has {len(others) + 1} labels; give `--negative LABEL`."
            )
        labels = (given.positive, negative)
    return np.where(scores >= args.threshold, *labels).astype(object)


def annotator_codes(frame: pd.DataFrame, columns: list[str], path: str) -> pd.DataFrame:
    """Several annotators' codes as text, None where a cell is empty (not coded)."""
    import pandas as pd

    codes = {}
    for name in columns:
        if name not in frame.columns:
            raise _not_in(frame, name, "--truth", path)
        raw = frame[name]
        text = raw.astype(str).str.strip()
        empty = raw.isna() | (text == "")
        coded = text.isin(MISSING_CODES) & ~empty
        if coded.any():
            found = ", ".join(repr(v) for v in sorted(set(text[coded])))
            raise ValueError(
                f"`--truth` column {name!r} holds {found}, which other software writes for a "
                f"missing label, in {name_rows(coded.to_numpy())} of {path}; only an empty cell "
                "is missing (an annotator who did not code the text)."
            )
        codes[name] = text.where(~empty, None)
    return pd.DataFrame(codes)


def wide_runs(args: argparse.Namespace, frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Turn a long table (a row per text and run) into one row per text, a column per run."""
    if args.text is None:
        raise ValueError(
            "`--run` needs `--text COL`, the column that says which text a row is: a long "
            "table has one row per text and run."
        )
    if len(args.pred) != 1:
        raise ValueError(
            f"`--run` reads the runs' labels from one `--pred` column of the long table; got "
            f"{len(args.pred)} columns."
        )
    pred = args.pred[0]
    text = read_column(frame, args.text, "--text", args.file)
    run = read_column(frame, args.run, "--run", args.file)
    read_column(frame, pred, "--pred", args.file, labels=True)
    pairs = frame.assign(_text=text, _run=run)
    repeated = pairs.duplicated(["_text", "_run"], keep=False).to_numpy()
    if repeated.any():
        raise ValueError(
            f"`--text` column {args.text!r} and `--run` column {args.run!r} repeat a (text, "
            f"run) pair, in {name_rows(repeated)} of {args.file}: each text has one row per run."
        )
    runs = sorted(pairs["_run"].unique(), key=_natural)
    wide = pairs.pivot(index="_text", columns="_run", values=pred)
    lacking = wide.isna().any(axis=1)
    if lacking.any():
        first = wide.index[lacking.to_numpy()][0]
        missing = [r for r in runs if wide.loc[first].isna()[r]]
        raise ValueError(
            f"every text needs a row in every run of `--run` column {args.run!r}: "
            f"{int(lacking.sum())} texts lack one (text {first!r} has no run {missing[0]!r})."
        )
    per_text = [c for c in (args.truth, args.group, args.by, args.score) if c is not None]
    for name in per_text:
        if name not in frame.columns:
            continue  # named in the usual one-line error when it is read
        varies = pairs.groupby("_text")[name].nunique(dropna=False) > 1
        if varies.any():
            first = varies.index[varies.to_numpy()][0]
            values = pairs.loc[pairs["_text"] == first, name].nunique()
            raise ValueError(
                f"column {name!r} must be the same in every run of a text (it describes the "
                f"text); text {first!r} has {int(values)} values."
            )
    first_rows = pairs.drop_duplicates("_text").set_index("_text").loc[wide.index]
    out = first_rows[[c for c in per_text if c in frame.columns]].reset_index(drop=True)
    columns = [f"{pred}[{r}]" for r in runs]
    for name, r in zip(columns, runs, strict=True):
        out[name] = wide[r].to_numpy()
    return out, columns


def _natural(value: str) -> tuple[int, Any]:
    """Sort key: numbers as numbers (run 2 before run 10), else as text."""
    try:
        return (0, float(value))
    except ValueError:
        return (1, value)


def person_sizes(frame: Any, args: argparse.Namespace, groups: Any) -> dict | None:
    """Each person's ``--population-sizes`` value (one per person, repeated on their rows)."""
    import pandas as pd

    if args.population_sizes is None:
        return None
    column = read_column(frame, args.population_sizes, "--population-sizes", args.file)
    values = pd.to_numeric(column, errors="coerce")
    bad = (values.isna() | ~(values > 0)).to_numpy()
    if bad.any():
        raise ValueError(
            f"`--population-sizes` column {args.population_sizes!r} must hold positive "
            f"numbers (a person's texts in the population); {name_rows(bad)} of {args.file} "
            "do not."
        )
    per_person = values.groupby(groups.to_numpy()).agg(["min", "max"])
    varying = per_person.index[per_person["min"] != per_person["max"]]
    if len(varying):
        raise ValueError(
            f"`--population-sizes` column {args.population_sizes!r} must have one value per "
            f"person; person {varying[0]!r} has several."
        )
    return dict(per_person["min"])


def once_each(*flags_and_columns: Any) -> list[str]:
    """Refuse a column named twice by one flag; return the first flag's columns.

    Arguments alternate: a flag, the columns it names (``"--truth", args.truth, ...``).
    A column given twice as runs or annotators would be two identical ones.
    """
    pairs = list(zip(flags_and_columns[::2], flags_and_columns[1::2], strict=True))
    for flag, columns in pairs:
        given = list(columns)
        twice = [c for c in dict.fromkeys(given) if given.count(c) > 1]
        if twice:
            raise ValueError(f"`{flag}` names the column {twice[0]!r} more than once.")
    return list(pairs[0][1])
