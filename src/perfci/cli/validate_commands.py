"""``perfci validate list|run|report``: the coverage validation harness on the command line.

Each action takes its own flags; a flag or a SUITE given to an action that does nothing
with it is refused, naming the actions it belongs to. ``validate list`` lists every suite
file it finds, a file that cannot be read on a line of its own saying why.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .._core.files import check_folder, file_kind
from .._core.text import visible_text
from . import rendering

__all__ = ["ACTION_FLAGS", "validate"]

#: The actions that take each flag of ``perfci validate`` (by its parsed name), and the
#: value the flag has when it is not given.
ACTION_FLAGS: dict[str, tuple[tuple[str, ...], Any]] = {
    "suite": (("run", "report"), None),
    "scale": (("run",), None),
    "out": (("run", "report"), None),
    "workers": (("run",), None),
    "scheduler": (("run",), None),
    "resume": (("run",), False),
    "figures": (("report",), None),
    "formats": (("report",), None),
    "x": (("report",), None),
}

#: The defaults of the flags, filled in once each is known to belong to the action.
_DEFAULTS = {"scale": "smoke", "out": "validation/results", "workers": 1, "formats": "png"}


def _refuse_foreign_flags(args: argparse.Namespace) -> None:
    """Refuse a flag (or a SUITE) given to an action that does nothing with it."""
    for name, (actions, unset) in ACTION_FLAGS.items():
        if args.action in actions or getattr(args, name) == unset:
            continue
        owners = " and ".join(f"`validate {a}`" for a in actions)
        if name == "suite":
            raise ValueError(
                f"`validate {args.action}` takes no SUITE or DIR (it lists the suites it "
                f"finds); got {getattr(args, name)!r}, an argument of {owners}."
            )
        raise ValueError(
            f"`--{name}` is an option of {owners}, not of `validate {args.action}`, which "
            "does nothing with it."
        )
    for name, default in _DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)


def validate(args: argparse.Namespace) -> None:
    """``perfci validate list|run|report``: the coverage validation harness."""
    scheduled = args.scheduler is not None and args.workers is not None
    _refuse_foreign_flags(args)
    if args.action == "list":
        _list(args)
    elif args.action == "run":
        _run(args, scheduled)
    else:
        _report(args)


def _unreadable(message: str, file: str) -> str:
    """Return why a suite file cannot be read, without the file name `message` starts with."""
    prefix = f"suite {file}"
    if not message.startswith(prefix):
        return message
    rest = message[len(prefix) :]
    for lead in (": ", " is ", " could not be read: "):
        if rest.startswith(lead):
            return rest[len(lead) :]
    return rest.strip()


def _list(args: argparse.Namespace) -> None:
    """``perfci validate list``: every suite file found, and why one cannot be read.

    A suite file that cannot be loaded is listed on a line of its own, ``FILE: cannot be
    read: WHY`` (in JSON, an entry with an ``error``, no description and no scales); the
    others are listed as usual, and the status is 0.
    """
    from .. import harness
    from ..harness import schema

    folder = schema.suite_dir()
    names = schema.list_suites(folder)
    if not names:
        looked = " or ".join(str(p) for p in schema.suite_dirs())
        raise ValueError(
            f"no suite files (*.toml) in {looked}; give `validate run` the path of a suite file."
        )
    entries: list[dict[str, Any]] = []
    for name in names:
        path = folder / f"{name}.toml"
        try:
            suite = harness.load_suite(path)
        except ValueError as exc:
            entries.append(
                {
                    "name": name,
                    "description": None,
                    "scales": [],
                    "file": str(path),
                    "error": _unreadable(str(exc), path.name),
                }
            )
            continue
        entries.append(
            {
                "name": suite.name,
                "description": suite.description,
                "scales": list(suite.scales),
                "file": str(path),
            }
        )
    if args.json:
        print(rendering.json_text(entries))
        return
    rendering.echo(f"suites in {folder}:", keep="")
    for entry in entries:
        if "error" in entry:
            line = f"{Path(entry['file']).name}: cannot be read: {entry['error']}"
        else:
            scales = ", ".join(entry["scales"])
            line = f"{entry['name']}: {entry['description']} (scales: {scales})"
        rendering.echo(line, keep="")


def _run(args: argparse.Namespace, scheduled: bool) -> None:
    """``perfci validate run SUITE``: run one scale of a suite into ``--out``."""
    import math

    from .. import harness

    if args.suite is None:
        raise ValueError(
            "`validate run` needs a SUITE: a suite's name (see `perfci validate list`) or "
            "the path of a suite file (.toml)."
        )
    if scheduled:
        raise ValueError("give `--workers` or `--scheduler`, not both.")
    check_folder(args.out, "`--out`")  # before any work: one line naming `--out`
    suite = harness.load_suite(args.suite)
    watched = rendering.stderr_is_terminal() and not args.quiet
    try:
        dataset = harness.run_suite(
            suite,
            args.scale,
            args.out,
            workers=args.workers,
            scheduler=args.scheduler,
            resume=args.resume,
            progress=rendering.progress_bar if watched else None,
        )
    except harness.SchedulerError as exc:
        raise ValueError(exc.message("--scheduler")) from None
    target = Path(args.out) / (dataset.attrs["suite"] + ".nc")
    cells = math.prod(dataset.sizes[d] for d in dataset.dims if d != "ci_method")
    rendering.emit(
        {
            "suite": dataset.attrs["suite"],
            "scale": args.scale,
            "result": str(target),
            "cells": cells,
        },
        args.json,
        f"wrote {visible_text(str(target))}",
    )


def _report(args: argparse.Namespace) -> None:
    """``perfci validate report DIR``: the figures and SUMMARY.md of every result in DIR."""
    from ..harness.figures import coverage_table, make_figures, suite_layout
    from ..harness.results import load_result
    from ..harness.storage import write_text
    from ..plotting import check_formats

    folder = Path(args.suite or args.out)
    if folder.exists() and not folder.is_dir():
        kind = file_kind(folder) or "a file"
        raise ValueError(
            f"`DIR` {str(folder)!r} is {kind}, not a folder; give the folder that holds the "
            "result files (*.nc), such as the `--out` of `perfci validate run`."
        )
    files = sorted(folder.glob("*.nc"))
    if not files:
        there = "holds no result files (*.nc)" if folder.is_dir() else "does not exist"
        raise ValueError(f"`DIR` {str(folder)!r} {there}.")
    # Everything is written inside DIR unless --figures names another folder; the default
    # folder is refused as a symbolic link, which may lead outside DIR.
    figures_folder = folder / "figures" if args.figures is None else Path(args.figures)
    if args.figures is None and figures_folder.is_symlink():
        raise ValueError(
            f"`DIR` {str(folder)!r} holds a symbolic link figures (to "
            f"{str(figures_folder.resolve())!r}) where the report writes its figures, which "
            "perfci does not write through: it may lead outside `DIR`; remove it, or give "
            "`--figures` a folder."
        )
    formats = check_formats([f.strip() for f in args.formats.split(",")])
    tables, written = [], []
    datasets = [load_result(path) for path in files]  # all checked before anything is written
    for dataset in datasets:
        suite_layout(dataset, args.x)
    # every result's figures drawn and checked before any is written
    written += [str(f) for f in make_figures(datasets, figures_folder, x=args.x, formats=formats)]
    tables += [coverage_table(dataset) for dataset in datasets]
    summary = folder / "SUMMARY.md"
    write_text(summary, "# Coverage results\n\n" + "\n".join(tables))
    written.append(str(summary))
    # one line per file: a name's own line break is shown as an escape, as any control is
    wrote = "\n".join(f"wrote {visible_text(p)}" for p in written)
    rendering.emit({"written": written}, args.json, wrote)
