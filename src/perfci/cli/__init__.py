"""The ``perfci`` command line.

Every command prints readable text by default and JSON with ``--json``. Bad input prints
one line to stderr naming the flag or column and exits with status 2, without a traceback
(``--debug`` shows one).

The parser (:mod:`perfci.cli.parser`) reads every name and its help from the registry,
the commands (:mod:`perfci.cli.commands`) import the library as they need it, and
:mod:`perfci.cli.rendering` prints text, tables and JSON.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]


def _show_warning(message: Warning | str, *args: Any, **kwargs: Any) -> None:
    """Print a warning as one line, without the source line warnings usually show."""
    print(f"perfci: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``perfci`` command line; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 2 on bad input (after printing one line to stderr, or a traceback
        with ``--debug``).

    Examples
    --------
    >>> from perfci.cli import main
    >>> main(["interval", "--successes", "264", "--trials", "300", "--method", "wilson"])
    wilson 95% interval for 264 of 300: estimate 0.8800, [0.8383, 0.9120]
    0
    """
    from .parser import UsageError, build_parser

    parser = build_parser()
    debug = False
    try:
        args = parser.parse_args(argv)
        debug = args.debug
        from .commands import COMMANDS

        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = _show_warning
            COMMANDS[args.command](args)
    except UsageError as exc:
        print(str(exc).splitlines()[0], file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (e.g. `perfci demo | head`); nothing left to report.
        sys.stderr.close()
        return 0
    except (ValueError, OSError) as exc:
        if debug:
            import traceback

            traceback.print_exc()
        else:
            print(f"perfci: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    return 0
