r"""Text from data made safe to show: invisible and control characters shown as escapes.

Names of columns, subgroups, persons, classifiers, methods and suites, and the contents
of files, reach perfci's outputs (Markdown, LaTeX, HTML, the terminal) as the user gave
them. One rule, :func:`visible_text`, decides which characters of such text are never
written raw: every control character (C0, DEL and C1: ``\x00``-``\x1f``, ``\x7f``-``\x9f``,
so ESC and the terminal sequences it starts), every format character (Unicode category
Cf: the bidi controls U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C, zero-width
spaces, the byte-order mark, ...), the line and paragraph separators U+2028 and U+2029,
and lone surrogates. Each is shown as a backslash escape like Python's (``\x1b``,
``\u202e``, ``\U000e0001``; ``\t``, ``\n``, ``\r``), so a reader sees that it is there
and nothing is applied to the text around it. Only the joiners U+200C and U+200D are
written raw: Persian, the Indic scripts and emoji need them, and they neither reorder
nor hide text. The per-format escapers (:func:`perfci.publishing.tables.markdown_text`,
:func:`perfci.publishing.tables.latex_text`, the HTML page's) first make a cell one line
(:func:`single_line`), then apply this rule, then escape the format's own markup.
"""

from __future__ import annotations

import unicodedata

__all__ = ["LINE_BREAKS", "is_hidden", "single_line", "visible_text"]

#: What breaks a line or a table cell: what :meth:`str.splitlines` splits at, and the tab.
LINE_BREAKS = frozenset("\n\r\t\v\f\x1c\x1d\x1e\x85\u2028\u2029")

#: Unicode categories never written raw: control, format, surrogate, line and paragraph
#: separator.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})

#: Format characters written raw: the zero-width non-joiner and joiner.
_JOINERS = frozenset("\u200c\u200d")

_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}

_BREAKS = str.maketrans(dict.fromkeys(LINE_BREAKS, " "))


def is_hidden(char: str) -> bool:
    r"""Return whether :func:`visible_text` shows a character as an escape.

    Parameters
    ----------
    char : str
        One character.

    Returns
    -------
    bool
        True for a control, format (but the joiners U+200C and U+200D), surrogate, line
        or paragraph separator character.

    Examples
    --------
    >>> from perfci._core.text import is_hidden
    >>> is_hidden("\x1b"), is_hidden("\u202e"), is_hidden("a"), is_hidden("\u200d")
    (True, True, False, False)
    """
    return unicodedata.category(char) in _HIDDEN_CATEGORIES and char not in _JOINERS


def _escape(char: str) -> str:
    """Return the backslash escape of a character, as Python's repr writes it."""
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible_text(text: str, *, keep: str = "") -> str:
    r"""Return text with every control and invisible format character shown as an escape.

    The policy of every output of perfci: C0 and C1 control characters (NUL, ESC and so
    every terminal escape sequence, CR, ...), format characters (the bidi controls
    U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C, zero-width spaces, the
    byte-order mark, ...), U+2028, U+2029 and lone surrogates are never written raw but as
    a backslash escape like Python's (``\x1b``, ``\u202e``, ``\n``). The zero-width
    non-joiner and joiner (U+200C, U+200D), which scripts and emoji need, are kept. A
    backslash already in the text is left as it is: the escapes are for a reader, not to
    be read back.

    Parameters
    ----------
    text : str
        Text from data: a name, a label, a message, the contents of a file.
    keep : str, default ""
        Characters to write raw all the same, e.g. ``"\n"`` for text of several lines.

    Returns
    -------
    str
        The text, with each such character replaced by its escape.

    Raises
    ------
    TypeError
        If `text` is not a string.

    Examples
    --------
    >>> from perfci._core.text import visible_text
    >>> print(visible_text("site \x1b[31mred\u202e\x00"))
    site \x1b[31mred\u202e\x00
    >>> print(visible_text("two\nlines\tand a tab", keep="\n"))
    two
    lines\tand a tab
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a string; got {type(text).__name__}.")
    if text.isprintable():  # no character of a hidden category (a fast path)
        return text
    return "".join(_escape(c) if c not in keep and is_hidden(c) else c for c in text)


def single_line(text: str) -> str:
    r"""Return text as one line for a table cell: breaks and tabs as spaces, then visible.

    Every line break (``\n``, ``\r\n``, ``\r``, ``\v``, ``\f``, ``\x1c``-``\x1e``,
    ``\x85``, U+2028, U+2029) and tab becomes a space; every other character that
    :func:`visible_text` escapes is escaped.

    Parameters
    ----------
    text : str
        Text from data.

    Returns
    -------
    str
        The text on one line, with no control or invisible format character.

    Examples
    --------
    >>> from perfci._core.text import single_line
    >>> print(single_line("a\r\nb\tc\x00\u2066d"))
    a b c\x00\u2066d
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a string; got {type(text).__name__}.")
    return visible_text(text.replace("\r\n", "\n").translate(_BREAKS))
