"""JSON text parsed with a bound on its nesting: the one place fasteval parses JSON it reads
(qrels, runs, fuse inputs, ``judge --examples``, judge replies and response bodies).

Python's ``json`` recurses once per level of arrays and objects, so a line of 100,000 ``[``
ends in ``RecursionError``, which no reader expects. :func:`check_depth` finds, in one
linear pass over the bytes (numpy, in blocks), the first bracket that opens more than
:data:`MAX_DEPTH` levels, telling brackets in strings (escapes included) from the
structure; :func:`loads` checks, then parses. A document nested too deep raises
:class:`JsonDepthError`, a :class:`json.JSONDecodeError`, so every reader's handler of bad
JSON names the file and line already.

Examples
--------
>>> loads('{"q1": {"d1": 1}}')
{'q1': {'d1': 1}}
>>> try:
...     loads("[" * 100_000)
... except JsonDepthError as exc:
...     print(exc)
JSON nested more than 128 levels deep (arrays and objects); expected at most 128: line 1 column 129 (char 128)
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["MAX_DEPTH", "JsonDepthError", "check_depth", "check_input", "input_error", "levels", "loads"]

MAX_DEPTH = 128
"""Most levels of arrays and objects a JSON text read by fasteval may nest (polars' readers
take 1,024; Python's ``json`` fails near its recursion limit, 1,000 less the stack in use)."""

_BLOCK = 1 << 20
_ESCAPE = re.compile(rb'\\[\\"]')
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"\n')


class JsonDepthError(json.JSONDecodeError):
    """A JSON text nested more than the limit; ``pos``, ``lineno`` and ``colno`` point at
    the first bracket too deep (``pos`` counts bytes of a ``bytes`` text).

    Examples
    --------
    >>> str(JsonDepthError(2, b'{"a":\\n[[[1]]]}', 8))
    'JSON nested more than 2 levels deep (arrays and objects); expected at most 2: line 2 column 3 (char 8)'
    """

    def __init__(self, limit: int, doc: str | bytes, pos: int) -> None:
        nl = b"\n" if isinstance(doc, bytes | bytearray | memoryview) else "\n"
        doc = bytes(doc) if isinstance(doc, bytearray | memoryview) else doc
        self.msg = f"JSON nested more than {limit} levels deep (arrays and objects); expected at most {limit}"
        self.reason = f"arrays and objects nested more than {limit} levels deep; expected at most {limit}"
        self.doc, self.pos, self.limit = doc, pos, limit
        self.lineno = doc.count(nl, 0, pos) + 1
        self.colno = pos - doc.rfind(nl, 0, pos)
        ValueError.__init__(self, f"{self.msg}: line {self.lineno} column {self.colno} (char {pos})")

    def __reduce__(self) -> tuple:
        return self.__class__, (self.limit, self.doc, self.pos)


def _as_bytes(text: str | bytes | bytearray | memoryview) -> bytes | memoryview:
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    return text


@cache
def _steps() -> np.ndarray:
    """+1 for each byte that opens an array or object, -1 for each that closes one."""
    import numpy as np

    table = np.zeros(256, dtype=np.int8)
    table[[ord("{"), ord("[")]] = 1
    table[[ord("}"), ord("]")]] = -1
    return table


def _block_levels(a: np.ndarray, carry: list[int], lines: bool) -> np.ndarray:
    """Levels of nesting after each byte of block ``a``, given ``carry`` = [level, inside a
    string (0/1), backslashes just before the block] from the block before (updated in
    place). A quote after an odd number of backslashes is escaped. With ``lines``, every
    line starts at level 0 outside strings (JSON Lines)."""
    import numpy as np

    n = a.shape[0]
    quote = a == 34
    slash = a == 92
    if slash.any() or carry[2]:
        idx = np.arange(n, dtype=np.int64)
        last_plain = np.maximum.accumulate(np.where(slash, -1, idx))  # last byte no backslash
        before = np.empty(n, dtype=np.int64)  # backslashes right before each byte
        before[0] = carry[2]
        before[1:] = idx[:-1] - last_plain[:-1] + np.where(last_plain[:-1] < 0, carry[2], 0)
        quote &= before % 2 == 0
        tail = n - 1 - int(last_plain[-1]) + (carry[2] if last_plain[-1] < 0 else 0)
    else:
        tail = 0
    inside = np.bitwise_xor.accumulate(quote.view(np.uint8))
    last_nl = None
    if lines and (nl := a == 10).any():
        last_nl = np.maximum.accumulate(np.where(nl, np.arange(n, dtype=np.int64), -1))
        first = int(np.argmax(last_nl >= 0))
        inside[first:] ^= inside[last_nl[first:]]
        inside[:first] ^= carry[1]
    elif carry[1]:
        inside ^= 1
    steps = np.cumsum(np.where(inside.view(bool), 0, _steps()[a]), dtype=np.int64)
    if last_nl is None:
        level = steps + carry[0]
    else:
        level = np.where(last_nl >= 0, steps - steps[np.maximum(last_nl, 0)], steps + carry[0])
    carry[:] = [int(level[-1]), int(inside[-1]), tail]
    return level


def levels(text: str | bytes, *, in_string: bool = False) -> np.ndarray:
    """Levels of nesting of arrays and objects after each byte of ``text`` (UTF-8), read
    as JSON from its first byte (``in_string``: as if a string were open there).

    Examples
    --------
    >>> levels('{"a": "[", "b": [1]}').tolist()
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 1, 0]
    """
    import numpy as np

    data = _as_bytes(text)
    a = np.frombuffer(data, dtype=np.uint8)
    if not a.size:
        return np.zeros(0, dtype=np.int64)
    return _block_levels(a, [0, int(in_string), 0], False)


def check_depth(text: str | bytes, limit: int = MAX_DEPTH, *, lines: bool = False) -> None:
    """Raise :class:`JsonDepthError` at the first bracket of ``text`` that opens more than
    ``limit`` levels (``lines``: JSON Lines, each line on its own); linear in its length.

    The text is cut to what decides the nesting first (escapes dropped, then all but
    brackets, quotes and line ends: fast byte operations), and only that is scanned.

    Examples
    --------
    >>> check_depth(b'{"a": [[1]], "b": "[[[["}\\n', 3)
    >>> check_depth(b'{"a": 1}\\n{"b": [[[1]]]}\\n', 3, lines=True)
    Traceback (most recent call last):
    ...
    fasteval.io._json.JsonDepthError: JSON nested more than 3 levels deep (arrays and objects); expected at most 3: line 2 column 9 (char 17)
    """
    data = _as_bytes(text)
    if data.count(b"[") + data.count(b"{") <= limit:  # (two fast finds; most texts stop here)
        return
    import numpy as np

    # an escape pair never opens or closes anything: without them every quote is one
    reduced = _ESCAPE.sub(b"", data).translate(None, _NOT_STRUCTURE)
    r = np.frombuffer(reduced, dtype=np.uint8)
    carry = [0, 0, 0]
    for start in range(0, r.shape[0], _BLOCK):
        level = _block_levels(r[start:start + _BLOCK], carry, lines)
        if int(level.max()) > limit:
            k = start + int(np.argmax(level > limit))
            pos = _locate(data, reduced, k, limit, lines)
            if isinstance(text, str):  # a position in characters, as json's errors give
                pos = len(bytes(data[:pos]).decode("utf-8", "surrogatepass"))
            raise JsonDepthError(limit, text, pos)


def _locate(data: bytes | memoryview, reduced: bytes, k: int, limit: int, lines: bool) -> int:
    """The offset in ``data`` of the bracket that :func:`check_depth` found at ``k`` of its
    ``reduced`` text: its line is found by counting line ends, the bracket by scanning
    that line from the level and string state it starts with."""
    import numpy as np

    line_no = reduced.count(b"\n", 0, k)
    start = 0
    if line_no:
        ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        start = int(ends[line_no - 1]) + 1
    carry = [0, 0, 0]
    if not lines and line_no:  # a document: the line starts where the one before left off
        head = np.frombuffer(reduced[:reduced.rfind(b"\n", 0, k) + 1], dtype=np.uint8)
        _block_levels(head, carry, False)
    end = bytes(data).find(b"\n", start)
    line = np.frombuffer(bytes(data[start:len(data) if end < 0 else end]), dtype=np.uint8)
    level = _block_levels(line, carry, False) if line.size else np.zeros(1, dtype=np.int64)
    over = np.flatnonzero(level > limit)
    return start + (int(over[0]) if over.size else 0)


def input_error(exc: JsonDepthError, source: str, line: int | None = None) -> Any:
    """The :class:`fasteval.errors.InputError` of an input file ``source`` nested too deep:
    its line (``line``, for a text parsed line by line, else the error's) and column.

    Examples
    --------
    >>> try:
    ...     loads('{"a":\\n [[[1]]]}', 2)
    ... except JsonDepthError as exc:
    ...     print(input_error(exc, "run.json"))
    run.json, line 2: arrays and objects nested more than 2 levels deep (column 3); expected at most 2
    """
    from fasteval.errors import InputError

    where = exc.reason.replace(";", f" (column {exc.colno});", 1)
    return InputError(where, source=source, line=exc.lineno if line is None else line)


def check_input(source: Any, name: str, *, lines: bool) -> None:
    """Raise :func:`input_error` when the JSON input ``source`` (bytes, a file's path or a
    ``BytesIO``; ``lines``: JSON Lines) is nested too deep: for a reader whose parser
    (polars') failed, to name the line where the reason is. Nothing when it is not, or
    when the file cannot be read again (the reader's own error stands).

    Examples
    --------
    >>> try:
    ...     check_input(b'{"a": 1}\\n{"a": ' + b"[" * 200 + b"}\\n", "q.jsonl", lines=True)
    ... except ValueError as exc:
    ...     print(exc)
    q.jsonl, line 2: arrays and objects nested more than 128 levels deep (column 134); expected at most 128
    """
    import io
    import os

    try:
        if isinstance(source, io.BytesIO):
            data = source.getvalue()
        elif isinstance(source, bytes | bytearray | memoryview):
            data = bytes(source)
        else:
            with open(os.fspath(source), "rb") as fh:
                data = fh.read()
    except (OSError, TypeError, ValueError):
        return
    try:
        check_depth(data, lines=lines)
    except JsonDepthError as exc:
        raise input_error(exc, name) from None


def loads(text: str | bytes, limit: int = MAX_DEPTH, **kwargs: Any) -> Any:
    """``json.loads(text, **kwargs)`` after :func:`check_depth`: a text nested more than
    ``limit`` levels raises :class:`JsonDepthError` (a :class:`json.JSONDecodeError`).

    Examples
    --------
    >>> loads(b'[1, {"a": null}]')
    [1, {'a': None}]
    """
    check_depth(text, limit)
    return json.loads(text, **kwargs)
