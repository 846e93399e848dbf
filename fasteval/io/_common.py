"""Shared pieces of the readers: column aliases, type normalisation, validation, duplicates.

Everything here works on polars frames that already hold the input; the format
modules (:mod:`fasteval.io.trec`, :mod:`fasteval.io.tables`) only get the data
into a frame and say how to turn a row index into a location for error messages.
"""

from __future__ import annotations

import errno
import mmap
import os
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, get_args

import numpy as np
import polars as pl

from fasteval.errors import DataWarning, InputError
from fasteval.options import ReadDuplicates, check_choice

Kind = Literal["qrels", "run"]

#: Canonical column -> accepted spellings (compared case-insensitively, first match wins).
ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": (
        "query_id", "qid", "q_id", "queryid", "query-id", "query", "topic_id", "topic", "topicid",
    ),
    # ``docno`` before ``docid``: PyTerrier's result frames hold both, ``docid`` being
    # Terrier's internal document number and ``docno`` the collection's id.
    "doc_id": (
        "doc_id", "docno", "docid", "doc-id", "doc", "pid", "document_id", "did",
        "passage_id", "corpus_id", "document",
    ),
    "score": ("score", "sim", "similarity", "relevance_score"),
    # ``score`` last: ranx writes qrels with a ``score`` column holding the grade.
    "relevance": (
        "relevance", "rel", "label", "grade", "judgment", "judgement", "relevance_label",
        "qrel", "qrels", "score",
    ),
    "rank": ("rank", "position", "pos"),
    "run_id": ("run_id", "runid", "run", "system", "run_name"),
    "tag": ("tag",),
}

_PARAMETER = {"query_id": "query_col", "doc_id": "doc_col"}
"""The readers' parameter that names a column, where it is not ``<canonical>_col``."""

def check_duplicates_param(duplicates: str) -> None:
    """Raise :class:`ParameterError` unless ``duplicates`` is a known policy."""
    check_choice("duplicates", ReadDuplicates, duplicates, f"one of {get_args(ReadDuplicates)}")


def value_column(kind: Kind) -> str:
    """Name of the value column: ``relevance`` for qrels, ``score`` for runs."""
    return "relevance" if kind == "qrels" else "score"


def find_column(
    columns: Sequence[str],
    canonical: str,
    explicit: str | None,
    *,
    source: str,
    required: bool,
    taken: frozenset[str] = frozenset(),
) -> str | None:
    """Return the input column to use for ``canonical`` (explicit name or first alias present).

    Examples
    --------
    >>> find_column(["qid", "docno", "sim"], "score", None, source="run", required=True)
    'sim'
    """
    if explicit is not None:
        if explicit not in columns:
            raise InputError(
                f"column {explicit!r} (given for {canonical}) not found; "
                f"the columns are {list(columns)}",
                source=source,
                column=explicit,
            )
        return explicit
    free = [c for c in columns if c not in taken]
    lower = {c.lower(): c for c in reversed(free)}
    for alias in ALIASES[canonical]:
        if alias in free:
            return alias
        if alias in lower:
            return lower[alias]
    if required:
        raise InputError(
            f"no {canonical} column; expected one of {list(ALIASES[canonical])} (or rename "
            f"it, or name it with read_run/read_qrels' {_PARAMETER.get(canonical, canonical + '_col')}=...); "
            f"the columns are {list(columns)}",
            source=source,
            column=canonical,
        )
    return None


def resolve_columns(
    columns: Sequence[str],
    kind: Kind,
    explicit: dict[str, str | None],
    *,
    source: str,
) -> dict[str, str]:
    """Map canonical names to input columns for a qrels or run table.

    ``explicit`` holds the user's ``*_col`` arguments keyed by canonical name.
    Returns ``{canonical: input_name}`` for every column present.
    """
    mapping: dict[str, str] = {}
    taken: set[str] = {v for v in explicit.values() if v is not None}
    required = ["query_id", "doc_id", value_column(kind)]
    optional = ["rank", "run_id", "tag"] if kind == "run" else []
    for canonical in required + optional:
        name = find_column(
            columns,
            canonical,
            explicit.get(canonical),
            source=source,
            required=canonical in required,
            taken=frozenset(taken - {explicit.get(canonical)}),
        )
        if name is not None:
            mapping[canonical] = name
            taken.add(name)
    return mapping


def missing_path(path: str) -> InputError:
    """The error for an input path that cannot be reached, with the system's reason: not
    found (a symbolic link is named with where it points), or a folder on the way that
    may not be searched, a loop of symbolic links.

    Examples
    --------
    >>> str(missing_path("/no/such/run.txt"))
    '/no/such/run.txt: file not found'
    """
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno not in (None, errno.ENOENT):
            return InputError(f"cannot be reached ({os.strerror(exc.errno)})", source=path)
        if os.path.islink(path):
            return InputError(f"file not found (a symbolic link to {os.readlink(path)!r}, which "
                              "does not exist)", source=path)
    return InputError("file not found", source=path)


def walk_error(exc: OSError) -> None:
    """``onerror`` of ``os.walk`` over an input folder: a folder that cannot be listed is an
    error naming it (``os.walk`` would skip it, and the runs or parts in it, silently)."""
    raise InputError(f"cannot list the folder ({describe_errno(exc)}); expected a folder "
                     "this user may read", source=os.fspath(exc.filename)) from None


def walk_input(path: str | os.PathLike[str]) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk`` over an input folder as every reader walks one: folders reached through
    symbolic links are walked too (a dataset may link its parts in), hidden and
    ``_``-prefixed folders (``_temporary``, ``.cache``) are not, in sorted order; a folder
    that cannot be listed (:func:`walk_error`) or a link to a folder that holds it (a loop)
    is an :class:`InputError` naming it.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(d, "run_id=a")); os.makedirs(os.path.join(d, "_tmp"))
    >>> os.symlink(os.path.join(d, "run_id=a"), os.path.join(d, "run_id=b"))
    >>> [os.path.relpath(root, d) for root, _, _ in walk_input(d)]
    ['.', 'run_id=a', 'run_id=b']
    """
    for root, dirs, files in os.walk(path, onerror=walk_error, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        here = os.path.realpath(root)
        for d in dirs:
            full = os.path.join(root, d)
            target = os.path.realpath(full)
            if os.path.islink(full) and (here == target or here.startswith(target.rstrip(os.sep) + os.sep)):
                raise InputError(f"a symbolic link to a folder that holds it ({target}); expected "
                                 "folders of runs or parts without loops", source=full)
        yield root, dirs, files


HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
"""The folder value Spark and Hive write for a null partition key (``run_id=__HIVE_DEFAULT_PARTITION__``)."""


def null_partition(folder: str, key: str) -> InputError:
    """The error for a hive folder ``key=__HIVE_DEFAULT_PARTITION__`` whose key gives a run
    column: Spark's null, which fasteval refuses rather than take as a run (or id) of that
    literal name or as null ids that the checks would refuse without naming the folder.

    Examples
    --------
    >>> print(null_partition("runs/run_id=__HIVE_DEFAULT_PARTITION__", "run_id"))
    runs/run_id=__HIVE_DEFAULT_PARTITION__: Spark's null partition: the run_id of its rows is null; expected a run_id in every folder name (fill the nulls before writing the table, or move the folder out)
    """
    return InputError(f"Spark's null partition: the {key} of its rows is null; expected a {key} "
                      "in every folder name (fill the nulls before writing the table, or move "
                      "the folder out)", source=folder)


def refuse_null_partitions(path: str | os.PathLike[str], keys: Sequence[str]) -> None:
    """Refuse a folder ``key=__HIVE_DEFAULT_PARTITION__`` under ``path`` for a ``key`` in
    ``keys`` (the hive keys that give run columns): :func:`null_partition`.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(d, "lang=__HIVE_DEFAULT_PARTITION__"))
    >>> refuse_null_partitions(d, ["run_id"])  # a key that gives no run column: no matter
    """
    if not keys:
        return
    from urllib.parse import unquote

    for root, dirs, _ in walk_input(path):
        for d in dirs:
            k, eq, v = d.partition("=")
            if eq and unquote(k) in keys and unquote(v) == HIVE_NULL:
                raise null_partition(os.path.join(root, d), unquote(k))


def describe_errno(exc: OSError) -> str:
    """The system's words for ``exc`` (its errno's message, else its text)."""
    return os.strerror(exc.errno) if isinstance(exc.errno, int) else str(exc)


def globbed_name(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names an existing file whose name polars would expand as a glob
    pattern (``*``, ``?``, ``[``: ``bm25[k1=0.9].parquet``): read it as bytes, or with
    ``glob=False``, or polars finds no file (or other files).

    Examples
    --------
    >>> globbed_name("runs/*.parquet"), globbed_name("README.md")
    (False, False)
    """
    text = os.fspath(path)
    return any(c in text for c in "*?[") and os.path.isfile(text)


def undecodable_name(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is not valid UTF-8 (a name such as ``r\\xe9.txt`` in Latin-1 on an
    old file system, which Python holds with surrogate escapes, ``'r\\udce9.txt'``):
    polars cannot open it by name, so the file is opened here and its bytes handed over.

    Examples
    --------
    >>> import os
    >>> undecodable_name(os.fsdecode(b"r\\xe9.txt")), undecodable_name("ré.txt")
    (True, False)
    """
    try:
        os.fspath(path).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_CR_TEXT = re.compile(rb"\r(?=\S)")
_SPACE = frozenset(b" \t\n\r\x0b\x0c")
_STEP = 1 << 22


def _line_break_cr(buf: bytes | mmap.mmap) -> int:
    """Position of a CR with text right before and after it (-1 if none).

    Windows files (every CR followed by LF) are recognised by counting, 4 MiB at a time
    (about 0.05 s per 100 MB); only other files are searched for the pattern.
    """
    a = np.frombuffer(buf, dtype=np.uint8)
    lone = 0
    for start in range(0, len(a), _STEP):
        c = a[start:start + _STEP + 1]  # one byte more: a CR LF across the cut
        cr = c[:_STEP] == 13
        lone += np.count_nonzero(cr) - np.count_nonzero(cr[:len(c) - 1] & (c[1:] == 10))
    del a
    if not lone:
        return -1
    for m in _CR_TEXT.finditer(buf):
        at = m.start()
        if at and buf[at - 1] not in _SPACE:
            return at
    return -1


def fix_line_endings(data: str | bytes, source: str) -> str | bytes:
    r"""Text with old-Mac line endings (CR only) as bytes with LF endings; anything else as
    given. A file that mixes them (among LF lines, a CR with text right before and after
    it, as where an old-Mac file was appended to another) is refused. A CR next to other
    whitespace stays whitespace, as in trec_eval (Windows CR LF endings, padding).

    Without this a CR-only file is one line: a TREC run keeps its first row and drops the
    rest without a word (trec_eval does the same), a CSV header swallows the data.

    Parameters
    ----------
    data : str or bytes
        A path or the file's (decompressed) bytes.
    source : str
        Name used in the error message.

    Examples
    --------
    >>> fix_line_endings(b"q1 0 d1 1\rq1 0 d2 0\r", "qrels")
    b'q1 0 d1 1\nq1 0 d2 0\n'
    >>> fix_line_endings(b"q1 0 d1 1\r\nq1 0 d2 0\r\n", "qrels")  # Windows: unchanged
    b'q1 0 d1 1\r\nq1 0 d2 0\r\n'
    """
    return mapped(data, lambda buf: _fix_buffer(buf, data, source), data)


def mapped(data: str | bytes, check: Callable[[bytes | mmap.mmap], Any], empty: Any = None) -> Any:
    """``check(buf)`` of ``data``: its bytes, or a path's file mapped into memory (nothing
    copied); ``empty`` for an empty file."""
    if isinstance(data, bytes):
        return check(data)
    with open(data, "rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return empty
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return check(mm)


def _fix_buffer(buf: bytes | mmap.mmap, data: str | bytes, source: str) -> str | bytes:
    if buf.find(b"\r") == -1:  # the usual case: one memchr pass, nothing copied
        return data
    if buf.find(b"\n") == -1:
        return bytes(buf).replace(b"\r", b"\n")
    at = _line_break_cr(buf)
    if at >= 0:
        line = (buf.count(b"\n", 0, at) if isinstance(buf, bytes)
                else bytes(buf[:at]).count(b"\n")) + 1
        raise InputError(
            "a carriage return (CR) ends a line that a newline (LF) does not: the file mixes "
            "old-Mac line endings with Unix/Windows ones, and rows would run together; "
            "convert it first (for example: tr '\\r' '\\n' < in > out)",
            source=source, line=line,
        )
    return data


_WIDE_BOMS = (
    (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\xfe\xff", "UTF-16"), (b"\xff\xfe", "UTF-16"),
)


def check_text_encoding(data: str | bytes, source: str) -> None:
    r"""Refuse text that is not UTF-8: a UTF-16/UTF-32 byte order mark, or a NUL byte
    (UTF-16 without a mark, or a binary file), naming the line of the first NUL.

    Windows PowerShell's ``>`` writes UTF-16. Read as bytes, such a file splits into
    ids holding NUL bytes, and its CR LF endings look like old-Mac ones, so the
    messages further on would name the wrong problem.

    Parameters
    ----------
    data : str or bytes
        A path or the file's (decompressed) bytes.
    source : str
        Name used in the error message.

    Examples
    --------
    >>> check_text_encoding("q1 0 d1 1\n".encode("utf-16"), "qrels")
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: qrels: the file is UTF-16 text (it starts with a UTF-16 byte order mark); expected UTF-8 (or ASCII); convert it first (for example: iconv -f UTF-16 -t UTF-8 < in > out)
    """
    mapped(data, lambda buf: _check_buffer(buf, source))

_COMPRESSED = (
    (b"\xfd7zXZ\x00", "xz-compressed"), (b"\x28\xb5\x2f\xfd", "zstd-compressed"),
    (b"\x04\x22\x4d\x18", "LZ4-compressed"),
    (b"PK\x03\x04", "a zip archive"), (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
)


def _compression(head: bytes) -> str | None:
    """The compression whose magic number starts ``head`` (gzip is read, so not named)."""
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] == b"1AY&SY":
        return "bzip2-compressed"
    return next((name for magic, name in _COMPRESSED if head.startswith(magic)), None)


def _check_buffer(buf: bytes | mmap.mmap, source: str) -> None:
    if bytes(buf[:4]) == b"PAR1":
        raise InputError(
            "the file is parquet; expected text here (fasteval trec-eval reads TREC text only; "
            "fasteval eval and read_run/read_qrels without a text format read parquet)",
            source=source,
        )
    if bytes(buf[:2]) == b"\x1f\x8b":  # every reader has decompressed gzip once already
        raise InputError(
            "the file is gzip-compressed twice (its decompressed content is gzip data again); "
            "expected text: decompress it first (for example: gzip -dc < in | gzip -dc > out)",
            source=source,
        )
    packed = _compression(bytes(buf[:10]))
    if packed is not None:
        raise InputError(
            f"the file is {packed}, which is not read (only gzip is decompressed); expected "
            "text: decompress it first", source=source,
        )
    head = bytes(buf[:4])
    for bom, name in _WIDE_BOMS:
        if head.startswith(bom):
            raise InputError(
                f"the file is {name} text (it starts with a {name} byte order mark); expected "
                f"UTF-8 (or ASCII); convert it first (for example: iconv -f {name} -t UTF-8 < in > out)",
                source=source,
            )
    at = buf.find(b"\x00")
    if at >= 0:
        line = (buf.count(b"\n", 0, at) if isinstance(buf, bytes)
                else bytes(buf[:at]).count(b"\n")) + 1
        raise InputError(
            "a NUL byte (\\0) in the text: expected UTF-8 (or ASCII) text; NUL bytes come "
            "from UTF-16 files written without a byte order mark, or from binary files",
            source=source, line=line,
        )


_SURROGATE_HINT = re.compile(rb"\\[uU][dD][89a-fA-F]")
_ESCAPE = re.compile(rb'\\(?:u([0-9a-fA-F]{4})|.)', re.DOTALL)


def check_json_escapes(data: str | bytes, source: str, *, lines: bool = False) -> None:
    r"""Refuse JSON text holding a lone UTF-16 surrogate escape (``"\ud83d"`` without its
    low half, or a low half alone).

    Such an escape is no Unicode character: polars' JSON reader turns a lone high half
    into ``"\x00"`` (two ids that differ there would be one) and Python's ``json`` keeps
    it as text that no UTF-8 table can hold. The text is searched once for an escape in
    ``\ud800``-``\udfff`` (rare); only then are its escapes read in order (a ``\\``
    before ``u`` is an escaped backslash, not an escape) to find the first lone one.

    Parameters
    ----------
    data : str or bytes
        A path or the file's (decompressed) bytes.
    source : str
        Name used in the error message.
    lines : bool
        JSON Lines: the record of the line is parsed to name the key that holds the escape.

    Raises
    ------
    InputError
        Naming the file, the line, the key (JSON Lines) and the string holding the escape.

    Examples
    --------
    >>> check_json_escapes(b'{"qid": "q \\ud83d\\ude00", "doc": "a\\\\ud83d"}', "r.jsonl")
    >>> check_json_escapes(b'{"qid": "q1"}\n{"qid": "q \\ud83d"}\n', "r.jsonl", lines=True)
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: r.jsonl, line 2, column 'qid': the string "q \ud83d" holds the escape \ud83d (character 12 of the line), half of a UTF-16 surrogate pair without its other half, which is no character; expected valid Unicode (a character past U+FFFF is written as both halves, \ud83d\ude00)
    """
    mapped(data, lambda buf: _check_escapes(buf, source, lines))


def _check_escapes(mapped: bytes | mmap.mmap, source: str, lines: bool) -> None:
    if _SURROGATE_HINT.search(mapped) is None:
        return
    buf = bytes(mapped)
    pending = None  # (offset, code) of a high half waiting for its low half
    for m in _ESCAPE.finditer(buf):
        code = int(m.group(1), 16) if m.group(1) is not None else None
        if pending is not None:
            if m.start() == pending[0] + 6 and code is not None and 0xDC00 <= code <= 0xDFFF:
                pending = None
                continue
            _lone_surrogate(buf, pending[0], source, lines)
        if code is not None and 0xD800 <= code <= 0xDBFF:
            pending = (m.start(), code)
        elif code is not None and 0xDC00 <= code <= 0xDFFF:
            _lone_surrogate(buf, m.start(), source, lines)
    if pending is not None:
        _lone_surrogate(buf, pending[0], source, lines)


def _lone_surrogate(buf: bytes, at: int, source: str, lines: bool) -> None:
    import json

    from fasteval.io import _json

    start = buf.rfind(b"\n", 0, at) + 1
    end = buf.find(b"\n", at)
    line = buf[start:len(buf) if end < 0 else end]
    rel = at - start
    # the string literal around the escape: from the quote before it to the one after
    # it that no backslash escapes
    quotes = [m.start() for m in re.finditer(rb'(?<!\\)(?:\\\\)*"', line)]
    opens = [q for q in quotes if q < rel]
    closes = [q for q in quotes if q > rel]
    literal = line[opens[-1]:closes[0] + 1] if opens and closes else line[rel:rel + 6]
    text = literal.decode("utf-8", "replace")
    key = None
    if lines:
        try:
            record = _json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            record = None
        if isinstance(record, dict):
            key = next((k for k, v in record.items() if _lone_in(k) or _lone_in(v)), None)
    escape = buf[at:at + 6].decode("ascii", "replace")
    raise InputError(
        f"the string {text} holds the escape {escape} (character {len(line[:rel].decode('utf-8', 'replace')) + 1} "
        "of the line), half of a UTF-16 surrogate pair without its other half, which is no "
        "character; expected valid Unicode (a character past U+FFFF is written as both "
        r"halves, \ud83d\ude00)",
        source=source, line=buf.count(b"\n", 0, at) + 1, column=key,
    )


def _lone_in(value: object) -> bool:
    """Whether a parsed JSON value holds a surrogate code point (in a key or text)."""
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_lone_in(k) or _lone_in(v) for k, v in value.items())
    if isinstance(value, list):
        return any(map(_lone_in, value))
    return False


def first_true(mask: pl.Series) -> int:
    """Index of the first ``True`` in a boolean series (which must hold one)."""
    return int(mask.arg_true()[0])


Locator = Callable[[int], dict]
"""Maps a 0-based row of the parsed frame to ``InputError`` location keywords."""


def row_locator(offset: int = 0) -> Locator:
    """Locator for tables: the row index itself."""
    return lambda i: {"row": i + offset}


def fmt_value(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_WIDE_INTEGERS = (pl.UInt64, pl.Int128, pl.UInt128)
"""Integer types that hold values an Int64 cannot (Python ints past 64 bits read as Int128
or UInt128): checked before a cast, which would fail with polars' own error."""

_SAFE_FLOAT_INT = {pl.Float32: 2**24 - 1, pl.Float64: 2**53 - 1}
"""The largest integer a float id may hold: every integer up to it is a float of its own."""


def normalize_ids(s: pl.Series, col: str, *, source: str, where: Locator) -> pl.Series:
    """Return ids as Int64 (integer input) or Utf8 (text input), named ``col``; no nulls."""
    s = s.rename(col)
    dt = s.dtype
    if s.null_count():
        i = first_true(s.is_null())
        raise InputError(f"{col} is null (ids must be present)", source=source, column=col, **where(i))
    if dt.is_integer():
        if dt in _WIDE_INTEGERS and s.len():
            bad = (s > 2**63 - 1) if dt.is_unsigned_integer() else (s > 2**63 - 1) | (s < -(2**63))
            if bad.any():
                i = first_true(bad)
                raise InputError(f"{col} does not fit in a signed 64-bit integer: {s[i]} (give "
                                 "such ids as text)", source=source, column=col, **where(i))
        return s.cast(pl.Int64)
    if dt == pl.String:
        return s
    if dt in (pl.Categorical,) or isinstance(dt, pl.Enum):
        return s.cast(pl.String)
    if dt.is_float() or dt.is_decimal():
        kind = "float" if dt.is_float() else "decimal"
        bad = s != s.floor()
        if dt.is_float():
            bad = bad | s.is_nan() | s.is_infinite()
        if bad.any():
            i = first_true(bad)
            raise InputError(
                f"{col} must be a string or an integer, got the {kind} {s[i]!r}",
                source=source, column=col, **where(i),
            )
        ints = s.cast(pl.Int64, strict=False)
        if ints.null_count():  # whole numbers past the signed 64-bit range
            i = first_true(ints.is_null())
            raise InputError(f"{col} does not fit in a signed 64-bit integer: {s[i]!r} (give "
                             "such ids as text)", source=source, column=col, **where(i))
        if dt.is_float():
            # Past 2**53 a float no longer holds every integer: 9007199254740993 read into
            # a float column (JSON that mixes 1 and 2.0) is 9007199254740992, another id.
            safe = _SAFE_FLOAT_INT.get(dt, 2**53 - 1)
            unsafe = s.abs() > safe
            if unsafe.any():
                i = first_true(unsafe)
                raise InputError(
                    f"{col} {s[i]!r} is a {dt} past {safe}, where floats skip integers (the "
                    "id may have been rounded); expected integer or text ids",
                    source=source, column=col, **where(i),
                )
        return ints
    if dt == pl.Boolean:
        raise InputError(f"{col} must hold strings or integers, got booleans", source=source, column=col)
    if dt.is_nested():
        raise InputError(f"{col} must hold strings or integers, got {dt}", source=source, column=col)
    try:
        return s.cast(pl.String)
    except Exception as exc:  # noqa: BLE001 - any polars cast failure means "unsupported"
        raise InputError(
            f"{col} must hold strings or integers, got {dt}", source=source, column=col
        ) from exc


_WIDE_SCORES = {pl.Int64, pl.UInt64, pl.Int128} | ({pl.UInt128} if hasattr(pl, "UInt128") else set())


def inexact_score_row(s: pl.Series) -> int | None:
    """The first row of integer scores that a float64 does not hold exactly, or None.

    Scores are compared as doubles (trec_eval reads them with ``atof``): past 2**53 two
    integers may become one double, and a ranking by the integers would be scored as a
    tie. A typed integer column keeps its values, so such a score is an error rather than
    another ranking. Text scores are read as trec_eval reads them (rounded).

    Examples
    --------
    >>> inexact_score_row(pl.Series([3, 2**53, -(2**60)]))  # powers of two are exact
    >>> inexact_score_row(pl.Series([3, 2**53 + 1]))
    1
    """
    if s.dtype not in _WIDE_SCORES or not len(s):
        return None  # (narrower integers are all doubles of their own)
    big = (s > 2**53) | (s < -(2**53)) if s.dtype.is_signed_integer() else s > 2**53
    if not big.any():
        return None
    back = s.cast(pl.Float64).cast(pl.Int128, strict=False)
    bad = (back != s.cast(pl.Int128)).fill_null(True) & big
    return first_true(bad) if bad.any() else None


def check_exact_scores(s: pl.Series, *, source: str, where: Locator) -> None:
    """Raise on the first integer score a float64 does not hold (:func:`inexact_score_row`)."""
    row = inexact_score_row(s)
    if row is not None:
        raise InputError(
            f"score {s[row]} is an integer past 2**53 that a float64 does not hold exactly "
            f"(it would be {float(s[row])!r}): scores are compared as doubles, so give them as "
            "floats (rounded as you choose) or on a smaller scale",
            source=source, column="score", **where(row))


def normalize_score(s: pl.Series, *, source: str, where: Locator) -> pl.Series:
    """Return scores as Float64, raising on nulls, non-numbers, NaN and integers a float64
    does not hold exactly."""
    if s.null_count():
        i = first_true(s.is_null())
        raise InputError("score is missing (null)", source=source, column="score", **where(i))
    if s.dtype == pl.String:
        f = s.cast(pl.Float64, strict=False)
        if f.null_count():
            i = first_true(f.is_null())
            raise InputError(f"score is not a number: {fmt_value(s[i])}", source=source, column="score", **where(i))
        s = f
    elif s.dtype.is_numeric() or s.dtype == pl.Boolean:
        check_exact_scores(s, source=source, where=where)
        s = s.cast(pl.Float64)
    else:
        raise InputError(f"score must be numeric, got {s.dtype}", source=source, column="score")
    nan = s.is_nan()
    if nan.any():
        i = first_true(nan)
        raise InputError("score is NaN (not a number)", source=source, column="score", **where(i))
    return s.rename("score")


_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")

#: Grades the kernels hold (int32): anything outside would wrap around (2**32 -> 0).
GRADE_MIN, GRADE_MAX = -(2**31), 2**31 - 1


def check_grades(s: pl.Series, *, source: str, where: Locator) -> pl.Series:
    """Refuse grades outside :data:`GRADE_MIN`..:data:`GRADE_MAX`, naming the first one.

    Every reader and :func:`fasteval.prepare.prepare_qrels` send their grades here.

    Examples
    --------
    >>> check_grades(pl.Series([0, 2**31]), source="q", where=row_locator())
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: q, row 1, column 'relevance': relevance 2147483648 is outside the 32-bit range of grades (-2147483648 to 2147483647)
    """
    if len(s) and s.dtype.is_integer():
        lo, hi = s.min(), s.max()
        if lo < GRADE_MIN or hi > GRADE_MAX:  # type: ignore[operator]
            # an unsigned series cannot be compared with a negative bound
            bad = (s > GRADE_MAX) if s.dtype.is_unsigned_integer() else (s < GRADE_MIN) | (s > GRADE_MAX)
            i = first_true(bad)
            raise InputError(
                f"relevance {s[i]} is outside the 32-bit range of grades ({GRADE_MIN} to {GRADE_MAX})",
                source=source, column="relevance", **where(i),
            )
    return s


def normalize_relevance(s: pl.Series, *, source: str, where: Locator) -> pl.Series:
    """Return relevance grades as Int64, raising on nulls, non-integers and grades outside
    32 bits (see :func:`check_grades`)."""
    if s.null_count():
        i = first_true(s.is_null())
        raise InputError("relevance is missing (null)", source=source, column="relevance", **where(i))
    if s.dtype.is_integer() or s.dtype == pl.Boolean:
        if s.dtype in _WIDE_INTEGERS:  # checked before the cast, which would fail past 64 bits
            check_grades(s, source=source, where=where)
        return check_grades(s.cast(pl.Int64).rename("relevance"), source=source, where=where)
    if s.dtype == pl.String:
        whole = s
        out = s.cast(pl.Int64, strict=False)
        if out.null_count():
            # "1.0", "2.": a whole number written with a zero fraction reads as that integer
            # (trec_eval's atol stops at the point and agrees); "1.5", "2e0" stay refused
            # (atol would read 1 and 2, float 1.5 and 2.0: which was meant is not known).
            whole = s.str.replace(r"^([+-]?[0-9]+)\.0*$", "${1}")
            out = whole.cast(pl.Int64, strict=False)
        if out.null_count():
            i = first_true(out.is_null())
            if _INTEGER_TEXT.fullmatch(whole[i]):  # an integer, too wide for Int64
                raise InputError(
                    f"relevance {fmt_value(s[i])} is outside the 32-bit range of grades "
                    f"({GRADE_MIN} to {GRADE_MAX})", source=source, column="relevance", **where(i),
                )
            raise InputError(
                f"relevance must be an integer, got {fmt_value(s[i])}", source=source, column="relevance", **where(i)
            )
        return check_grades(out.rename("relevance"), source=source, where=where)
    if s.dtype.is_float():
        bad = s.is_nan() | s.is_infinite() | (s != s.floor())
        if bad.any():
            i = first_true(bad)
            raise InputError(
                f"relevance must be an integer, got {s[i]!r}", source=source, column="relevance", **where(i)
            )
        huge = (s < GRADE_MIN) | (s > GRADE_MAX)
        if huge.any():
            i = first_true(huge)
            raise InputError(
                f"relevance {s[i]!r} is outside the 32-bit range of grades ({GRADE_MIN} to {GRADE_MAX})",
                source=source, column="relevance", **where(i),
            )
        return s.cast(pl.Int64).rename("relevance")
    raise InputError(f"relevance must be an integer, got {s.dtype}", source=source, column="relevance")


def normalize_rank(s: pl.Series, *, source: str, where: Locator) -> pl.Series:
    """Return ranks as Int64 (integral floats and digit strings accepted; anything past
    64 bits is refused)."""
    if s.dtype.is_integer():
        wide = s.dtype in _WIDE_INTEGERS and s.len()
        bad = ((s > 2**63 - 1) if s.dtype.is_unsigned_integer() else (s > 2**63 - 1) | (s < -(2**63))) if wide else None
        if bad is not None and bad.any():
            i = first_true(bad)
            raise InputError(f"rank {s[i]} does not fit in a signed 64-bit integer",
                             source=source, column="rank", **where(i))
        out = s.cast(pl.Int64)
    elif s.dtype.is_float():
        bad = s.is_not_null() & (s.is_nan() | s.is_infinite() | (s != s.floor()))
        if bad.any():
            i = first_true(bad)
            raise InputError(f"rank must be an integer, got {s[i]!r}", source=source, column="rank", **where(i))
        huge = (s < -(2.0**63)) | (s >= 2.0**63)
        if huge.any():
            i = first_true(huge)
            raise InputError(f"rank {s[i]!r} does not fit in a signed 64-bit integer",
                             source=source, column="rank", **where(i))
        out = s.cast(pl.Int64)
    elif s.dtype == pl.String:
        out = s.cast(pl.Int64, strict=False)
        bad = out.is_null() & s.is_not_null()
        if bad.any():
            i = first_true(bad)
            raise InputError(f"rank must be an integer, got {fmt_value(s[i])}", source=source, column="rank", **where(i))
    else:
        raise InputError(f"rank must be an integer, got {s.dtype}", source=source, column="rank")
    return out.rename("rank")


def normalize_table(
    df: pl.DataFrame,
    kind: Kind,
    mapping: dict[str, str],
    *,
    source: str,
    where: Locator,
) -> pl.DataFrame:
    """Select, rename, type-check and validate the columns of a qrels/run table."""
    if df.height == 0:
        raise InputError(f"the {kind} table is empty (no rows)", source=source)
    cols: list[pl.Series] = []
    for canonical in ("query_id", "doc_id"):
        s = df.get_column(mapping[canonical])
        cols.append(normalize_ids(s, canonical, source=source, where=where))
    if kind == "qrels":
        cols.append(normalize_relevance(df.get_column(mapping["relevance"]), source=source, where=where))
    else:
        cols.append(normalize_score(df.get_column(mapping["score"]), source=source, where=where))
        if "rank" in mapping:
            cols.append(normalize_rank(df.get_column(mapping["rank"]), source=source, where=where))
        for extra in ("run_id", "tag"):
            if extra in mapping:
                s = df.get_column(mapping[extra])
                if extra == "run_id" and s.null_count():
                    raise InputError(
                        "run_id is null; every row of a table with a run_id column needs one",
                        source=source, column=mapping[extra], **where(first_true(s.is_null())),
                    )
                if s.dtype != pl.String:
                    s = s.cast(pl.String)
                cols.append(s.rename(extra))
    return pl.DataFrame(cols)


def handle_duplicates(
    df: pl.DataFrame,
    kind: Kind,
    duplicates: str,
    *,
    source: str,
    where: Locator,
) -> pl.DataFrame:
    """Apply the duplicate (query, doc) policy.

    ``"error"`` raises naming the second occurrence; ``"keep_best"`` keeps, per
    pair, the row with the highest score (runs) or relevance (qrels), the first
    such row on ties, in input order, and warns with the number dropped;
    ``"ignore"`` skips the check. With a ``run_id`` column, pairs are per run.
    """
    if duplicates == "ignore" or df.height < 2:
        return df
    keys = ["query_id", "doc_id"] + (["run_id"] if "run_id" in df.columns else [])
    # Cheap screen: distinct hashes prove distinct pairs; only equal hashes need the exact test.
    combined = pl.col(keys[0]).hash(seed=1)
    for seed, k in enumerate(keys[1:], start=2):
        combined = combined ^ pl.col(k).hash(seed=seed)
    n_hash = df.select(combined.n_unique()).item()
    if n_hash == df.height:
        return df
    dup = df.select(keys).is_duplicated()
    if not dup.any():
        return df
    if duplicates == "error":
        later = ~df.select(pl.struct(keys).is_first_distinct()).to_series()
        i = first_true(later)
        q, d = df.get_column("query_id")[i], df.get_column("doc_id")[i]
        raise InputError(
            f"duplicate (query_id, doc_id) pair ({fmt_value(q)}, {fmt_value(d)})",
            advice="keep_best_qrels" if kind == "qrels" else "keep_best_run",
            source=source,
            **where(i),
        )
    value = value_column(kind)
    kept = (
        df.with_row_index("__row")
        .sort([value, "__row"], descending=[True, False])
        .unique(subset=keys, keep="first")
        .sort("__row")
        .drop("__row")
    )
    dropped = df.height - kept.height
    warnings.warn(
        DataWarning(
            f"{source}: dropped {dropped} duplicate (query_id, doc_id) row(s), "
            f"keeping the highest {value} of each pair"
        ),
        stacklevel=4,
    )
    return kept
