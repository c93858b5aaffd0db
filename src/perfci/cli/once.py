"""The store action of every ``perfci`` flag that takes one value: given once, never empty.

argparse keeps the last of a flag given twice (``--pred run1 --pred run2`` would report
only run2) and takes an empty path (``--out ''``) for the current folder. The parser
(:class:`perfci.cli.parser.Parser`) stores every such argument with :class:`StoreOnce`,
which refuses both, before any work, naming the flag typed.
"""

from __future__ import annotations

import argparse
import weakref
from collections.abc import Sequence
from typing import Any

__all__ = ["PATHS", "StoreOnce"]

#: What an argument with this metavar names: its value is a path, never empty.
PATHS = {
    "FILE": "a file",
    "OUT": "a file",
    "DIR": "a folder",
    "SUITE|DIR": "a suite's name or a folder",
}


class StoreOnce(argparse._StoreAction):
    """Store a flag's value as argparse does; refuse it given twice, or an empty path."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # the namespaces (one per parse) this argument was given in; a Namespace is not
        # hashable, so they are told apart by identity
        self.given: list[weakref.ref[argparse.Namespace]] = []

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        """Store `values`; refuse a second time in `namespace` or an empty path."""
        name = option_string or str(self.metavar or self.dest)
        self.given = [ref for ref in self.given if ref() is not None]
        if option_string is not None and any(ref() is namespace for ref in self.given):
            several = self.nargs not in (None, "?", 1)
            how = f"give its values once ({option_string} A B)" if several else "give it once"
            parser.error(f"`{name}` given twice: {how} (only the last would count).")
        expected = PATHS.get(str(self.metavar))
        if expected is not None and isinstance(values, str) and not values.strip():
            parser.error(f"`{name}` is empty: give {expected}.")
        self.given.append(weakref.ref(namespace))
        super().__call__(parser, namespace, values, option_string)
