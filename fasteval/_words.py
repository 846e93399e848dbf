"""Words in messages: counts with the noun in the number the count asks for, and names
as one line of plain text (:func:`one_line`)."""

from __future__ import annotations


def counted(count: int, one: str, many: str | None = None) -> str:
    """``count`` and its noun: ``one`` for exactly 1, else ``many`` (default ``one + "s"``).

    Examples
    --------
    >>> counted(1, "query", "queries"), counted(0, "query", "queries"), counted(2, "row")
    ('1 query', '0 queries', '2 rows')
    """
    return f"{count} {one if count == 1 else (many or one + 's')}"


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: str) -> str:
    """``text`` as it may be printed on one line of a terminal or a text table: control
    characters (an escape sequence's ESC, a line break, a tab, C1 controls), line and
    paragraph separators (U+2028, U+2029) and lone surrogates (a file name that is not
    valid UTF-8, as Python decodes it) written as escapes (``\\n``, ``\\x1b``, ``\\u2028``;
    ``\\xe9`` for a byte of a file name that is not UTF-8); any other text, backslashes
    included, unchanged. Every text output of the package (tables, trec_eval lines, notes,
    errors, progress) prints names through it.

    Examples
    --------
    >>> print(one_line("bm25\\nrm3\\tv2\\x1b]0;pwned\\x07"))
    bm25\\nrm3\\tv2\\x1b]0;pwned\\x07
    >>> one_line("r\\udce9.txt"), one_line("q\\ud83d"), one_line("q 1 é")
    ('r\\\\xe9.txt', 'q\\\\ud83d', 'q 1 é')
    """
    if text.isprintable():  # (a space is printable; the usual case: one C pass)
        return text
    import unicodedata

    return "".join(
        _escape(ch) if unicodedata.category(ch) in ("Cc", "Zl", "Zp", "Cs") else ch
        for ch in text
    )


def _escape(ch: str) -> str:
    """One character as an escape; a surrogate that stands for a byte of a name that is not
    UTF-8 (U+DC80-U+DCFF, Python's ``surrogateescape``) as that byte: ``\\xe9``."""
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return _ESCAPES.get(ch, f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}")


def text_name(name: str) -> str:
    """A file name as text that a table (UTF-8) can hold: the bytes of a name that is not
    UTF-8 (Python's surrogate escapes) written as ``\\xNN``, as :func:`one_line` prints
    them; any other name unchanged. A run named after its file gets this name.

    Examples
    --------
    >>> import os
    >>> print(text_name(os.fsdecode(b"r\\xe9.txt")), text_name("bm25\\x1b.txt") == "bm25\\x1b.txt")
    r\\xe9.txt True
    """
    return "".join(_escape(ch) if "\ud800" <= ch <= "\udfff" else ch for ch in name)
