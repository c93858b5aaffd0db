r"""The ``perfci`` command line.

Every command prints readable text by default and JSON with ``--json``. Bad input prints
one line to stderr naming the flag, column or file the user typed and exits with status
2; an internal error prints one line saying so and exits with status 1. Neither shows a
traceback unless ``--debug`` is given. A command still running after two seconds shows
that it is working on stderr when stderr is a terminal (``validate run`` a bar of its
cells), unless ``--quiet`` is given. No message, traceback or output prints a control
character or a bidi override from the data raw: each is printed as a visible escape
(``\x1b``, ``\u202e``; :func:`perfci._core.text.visible_text`), and a line break from the
data in a one-line message, a warning or a result line is shown as ``\n``.

The parser (:mod:`perfci.cli.parser`) reads every name and its help from the registry,
the commands (:mod:`perfci.cli.commands`, :mod:`perfci.cli.many_commands` and
:mod:`perfci.cli.validate_commands`) import the library as they need it,
:mod:`perfci.cli.inputs` reads their tables and columns, and :mod:`perfci.cli.rendering`
prints text, tables and JSON. A flag given without the flag it works with (``--title``
without ``--html``), or to a ``validate`` action that does nothing with it, is refused.
"""

from __future__ import annotations

import sys
import traceback
import warnings
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``perfci`` command line; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success; 2 on bad input (usage, values, files), after one line on stderr
        that names the flag, column or file; 1 on an internal error, after one line
        that says so and points to ``--debug``; 130 when interrupted. With ``--debug``,
        errors show their traceback instead.

    Examples
    --------
    >>> from perfci.cli import main
    >>> main(["interval", "--successes", "264", "--trials", "300", "--method", "wilson"])
    wilson 95% interval for 264 of 300: estimate 0.8800, [0.8383, 0.9120]
    0
    """
    from .parser import UsageError, build_parser, in_user_words
    from .rendering import Activity, echo, stderr_is_terminal

    parser = build_parser()
    args: Any = None
    debug = False
    activity = Activity("perfci", enabled=False)

    def words(message: object) -> str:
        # the first line that says something (a message may start with a line break)
        lines = [line.strip() for line in str(message).splitlines() if line.strip()]
        text = lines[0] if lines else type(message).__name__
        return text if args is None else in_user_words(text, args)

    def show_warning(message: Warning | str, *_: Any, **__: Any) -> None:
        # A warning is one line whole: a line break in it (from a name in the data) is
        # shown as an escape (`\n`), not where the message is cut.
        activity.clear()
        text = str(message).strip() or type(message).__name__
        shown = text if args is None else in_user_words(text, args)
        echo(f"perfci: warning: {shown}", keep="", file=sys.stderr)

    try:
        args = parser.parse_args(argv)
        debug = args.debug
        from .commands import COMMANDS, draws_own_progress

        # Progress only where someone watches: a terminal, without --quiet.
        watched = stderr_is_terminal() and not args.quiet
        activity = Activity(
            f"perfci {args.command}", enabled=watched and not draws_own_progress(args)
        )
        with warnings.catch_warnings(), activity:
            warnings.simplefilter("always")
            warnings.showwarning = show_warning
            COMMANDS[args.command](args)
    except UsageError as exc:
        echo(str(exc).splitlines()[0], keep="", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (e.g. `perfci demo | head`); nothing left to report.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("perfci: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError, MemoryError) as exc:
        if debug:
            echo(traceback.format_exc(), end="", file=sys.stderr)
        elif isinstance(exc, MemoryError):
            echo(
                f"perfci: error: not enough memory for this request ({words(exc)}); ask for "
                "less (fewer resamples, a smaller n)",
                keep="",
                file=sys.stderr,
            )
        else:
            echo(f"perfci: error: {words(exc)}", keep="", file=sys.stderr)
        return 2
    except Exception as exc:
        if debug:
            echo(traceback.format_exc(), end="", file=sys.stderr)
        else:
            echo(
                f"perfci: internal error: {type(exc).__name__}: {words(exc)} (run again with "
                "--debug to see the traceback)",
                keep="",
                file=sys.stderr,
            )
        return 1
    return 0
