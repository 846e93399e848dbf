"""TREC text formats: qrels (``qid iter docno rel``) and runs (``qid iter docno rank score tag``).

Two parsers share one set of rules:

* a **fast path** hands the file to polars' CSV reader with a single-character
  separator (space or tab, sniffed from the first data line) and then checks
  that the result is exactly what whitespace tokenisation would give (no empty
  fields, no stray separators of the other kind inside ids);
* a **careful path** runs a compiled tokeniser over the raw bytes
  (:mod:`fasteval.io._tokenize`): comments and blank lines dropped, fields split
  on runs of ASCII whitespace as trec_eval does, field counts checked, line
  numbers kept. It is used when the fast path cannot prove its result, and it
  is what names the offending line in error messages.

Rules (trec_eval 10 with two deliberate differences, marked *):

* qrels: exactly 4 fields; a line whose *first character* is ``#`` is a
  comment (any number of them*); blank lines are skipped*; ``rel`` must be an
  integer, ``1.0`` reading as 1 (``1.5``, ``2e0``, ``0x1``, ``1_0`` are errors*:
  trec_eval's ``atol`` reads their leading digits).
* runs: at least 6 fields, later ones ignored; blank lines skipped; a line
  whose first non-blank character is ``#`` is a comment; ``score`` is a decimal
  number as ``strtod`` reads it (``1e3``, ``+5``, ``.5``, ``5.``, ``inf``, ``1e400``
  as infinity); NaN and text that is not one whole decimal number (``abc``,
  ``1_000``, ``1.5x``, hexadecimal ``0x10``) are errors* (``atof`` reads their
  leading part, or 0); ``rank`` is kept as an integer when every rank is one.
* a ``#`` anywhere else is data (MS MARCO v2.1 docnos contain ``#``).
* ids are kept as text (trec_eval compares them with ``strcmp``); ids and tags
  must be UTF-8* (trec_eval compares raw bytes), the error naming the line.
* a UTF-8 byte order mark opening the file is dropped* (trec_eval reads it into
  the first query id); one opening a later line stays part of that query id.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import warnings

import numpy as np
import polars as pl

from fasteval.errors import DataWarning, InputError
from fasteval.io._common import Kind, Locator, check_grades, fmt_value, mapped, normalize_relevance

__all__ = ["read_trec", "scan_trec", "data_line_numbers"]

_RUN_SCHEMA = {
    "query_id": pl.String,
    "iter": pl.String,
    "doc_id": pl.String,
    "rank": pl.Int64,
    "score": pl.Float64,
    "tag": pl.String,
}
_QRELS_SCHEMA = {
    "query_id": pl.String,
    "iter": pl.String,
    "doc_id": pl.String,
    "relevance": pl.Int64,
    "extra": pl.String,
}
_RUN_FIELDS = ["query_id", "iter", "doc_id", "rank", "score", "tag", "rest"]
_QRELS_FIELDS = ["query_id", "iter", "doc_id", "relevance", "rest"]
_HEAD_BYTES = 1 << 16


def _head(data: str | bytes) -> bytes:
    if isinstance(data, bytes):
        return data[:_HEAD_BYTES]
    with open(data, "rb") as fh:
        return fh.read(_HEAD_BYTES)


def _is_comment(line: bytes, kind: Kind) -> bool:
    return (line if kind == "qrels" else line.lstrip()).startswith(b"#")


def _sniff_separator(head: bytes, kind: Kind) -> str | None:
    """Separator (``" "`` or ``"\t"``) if every complete data line of ``head`` is regular, else None.

    Regular: the required fields are non-empty when split on that one character
    (and, for tabs, the id fields hold no spaces). Irregular files go straight
    to the careful path instead of failing a full fast parse first.
    """
    need = 6 if kind == "run" else 4
    lines = head.split(b"\n")
    if len(head) >= _HEAD_BYTES:
        lines = lines[:-1]  # the last one may be cut
    sep: bytes | None = None
    for raw in lines:
        line = raw.rstrip(b"\r")
        if not line.strip() or _is_comment(line, kind):
            continue
        if sep is None:
            sep = b"\t" if b"\t" in line else b" "
        fields = line.split(sep)
        if len(fields) < need or not all(fields[:need]):
            return None
        if kind == "qrels" and len(fields) > need and any(fields[need:]):
            return None
        if sep == b"\t" and any(b" " in f for f in fields[:3]):
            return None
    return None if sep is None else sep.decode()


_STRAY_CR = re.compile(rb"\r(?!\n|\Z)")
"""A carriage return that ends no line: whitespace between fields, which polars' reader
keeps inside them."""


def _has_stray_cr(data: str | bytes) -> bool:
    """Whether the raw text holds a carriage return that is not part of a line ending (looked
    for only in text that holds one)."""
    return _contains(data, b"\r") and mapped(data, lambda buf: _STRAY_CR.search(buf) is not None)


def _contains(data: str | bytes, needle: bytes) -> bool:
    """Whether the raw file holds ``needle`` (a memchr scan of the mapped file)."""
    return mapped(data, lambda buf: buf.find(needle) != -1, False)


@functools.cache
def _short_lines_option() -> dict[str, str]:
    """``read_csv``'s option that reads lines with fewer fields than the schema (qrels have no
    ``extra`` field) as nulls: polars 2 refuses them unless ``missing_columns="insert"``."""
    return {"missing_columns": "insert"} if "missing_columns" in inspect.signature(pl.read_csv).parameters else {}


def _read_fast(data: str | bytes, kind: Kind, sep: str) -> pl.DataFrame | None:
    """Parse with polars' CSV reader; None when the result cannot be trusted."""
    if _contains(data, b"\x0b") or _contains(data, b"\x0c") or _has_stray_cr(data):
        return None  # vertical tab, form feed, a lone CR separate fields too: the tokeniser's
    schema = _RUN_SCHEMA if kind == "run" else _QRELS_SCHEMA
    required = [c for c in schema if c != "extra"]

    def parse(comment: str | None) -> pl.DataFrame | None:
        try:
            return pl.read_csv(
                data,
                separator=sep,
                has_header=False,
                quote_char=None,
                comment_prefix=comment,
                truncate_ragged_lines=True,
                schema=schema,
                raise_if_empty=False,
                **_short_lines_option(),
            )
        except (pl.exceptions.PolarsError, OSError, ValueError):
            return None

    # Most files have no comment lines, and parsing without comment support is
    # ~15% faster. A comment line further down shows up as a query id starting
    # with '#' (or makes the typed parse fail); the file is then parsed again with
    # comments on. Comments near the top switch them on from the start.
    head = _head(data)
    if any(_is_comment(line, kind) for line in head.split(b"\n")):
        df = parse("#")
    else:
        df = parse(None)
        if df is None or df.get_column("query_id").str.starts_with("#").any():
            df = parse("#")
    if df is None:
        return None
    if sum(df.select(required).null_count().row(0)):
        blank = pl.all_horizontal(pl.all().is_null())
        df = df.filter(~blank)
        if sum(df.select(required).null_count().row(0)):
            return None
    if kind == "qrels" and df.get_column("extra").null_count() != df.height:
        return None
    other = "\t" if sep == " " else " "
    if not _contains(data, other.encode()):
        # Neither ids nor tags can hold the other separator: nothing more to check.
        keep = ["query_id", "doc_id", "score", "rank", "tag"] if kind == "run" else ["query_id", "doc_id", "relevance"]
        return df.select(keep)
    stray = df.select(
        pl.any_horizontal(
            pl.col(c).str.contains(other, literal=True).any() for c in ("query_id", "iter", "doc_id")
        )
    ).item()
    if stray:
        return None
    if kind == "run":
        tag = df.get_column("tag")
        if tag.str.contains(other, literal=True).any():
            tag = tag.str.extract(r"^\s*(\S+)", 1)
            if tag.null_count():
                return None
            df = df.with_columns(tag)
        return df.select("query_id", "doc_id", "score", "rank", "tag")
    return df.select("query_id", "doc_id", "relevance")


_BOM = b"\xef\xbb\xbf"


def _buffer(data: str | bytes) -> np.ndarray:
    """The raw bytes as a uint8 array (memory-mapped for paths)."""
    if isinstance(data, bytes):
        return np.frombuffer(data, dtype=np.uint8)
    if os.path.getsize(data) == 0:
        return np.zeros(0, dtype=np.uint8)
    return np.memmap(data, dtype=np.uint8, mode="r")


def _line_text(buf: np.ndarray, line: int) -> str:
    """Text of 1-based line ``line`` (error messages only)."""
    ends = np.flatnonzero(buf == 10)
    lo = 0 if line == 1 else int(ends[line - 2]) + 1
    hi = int(ends[line - 1]) if line - 1 < ends.size else buf.size
    return bytes(buf[lo:hi]).decode("utf-8", "replace").rstrip("\r")


_SPLIT = re.compile(rb"[ \t\r\x0b\x0c]+")


def _refuse_bad_utf8(buf: np.ndarray, start: int, kind: Kind, want: list[int], source: str) -> None:
    """Raise naming the first data line whose kept field (id, rank, score, tag) is not UTF-8.

    Only the fields the reader keeps are checked, as the tokeniser's output is: bytes in a
    comment or an ignored field (iter, text after the tag) are no error (error path only).
    """
    names = ["query_id", "iter", "doc_id", "rank", "score", "tag"] if kind == "run" else ["query_id", "iter", "doc_id", "relevance"]
    for n, line in enumerate(bytes(buf[start:]).split(b"\n"), 1):
        fields = _SPLIT.split(line.strip(b" \t\r\x0b\x0c"))
        if not fields[0] or _is_comment(line, kind):
            continue
        for k in want:
            try:
                fields[k].decode("utf-8")
            except UnicodeDecodeError as bad:
                raise InputError(
                    f"{names[k]} is not valid UTF-8 text ({bad.reason}): {fmt_value(fields[k])}; TREC files "
                    "must be UTF-8 or ASCII: convert it first (for example: iconv -f LATIN1 -t UTF-8 "
                    "< in > out)", source=source, line=n, column=names[k],
                ) from None


def _tokens(
    data: str | bytes, kind: Kind, source: str, want: list[int], lines: bool = False
) -> tuple[list[pl.Series], np.ndarray, int]:
    """Whitespace-split fields ``want`` of every data line, as String series, plus line numbers."""
    import pyarrow as pa  # here: the fast path (most files) imports no pyarrow

    from fasteval.io._tokenize import tokenize

    buf = _buffer(data)
    start = 3 if bytes(buf[:3]) == _BOM else 0
    cols, a, b = tokenize(buf, start, kind == "run", np.asarray(want, dtype=np.int64), lines)
    if cols is None:
        text = _line_text(buf, int(a))
        if kind == "run":
            what = "at least 6 whitespace-separated fields (qid iter docno rank score tag)"
        else:
            what = "exactly 4 whitespace-separated fields (qid iter docno rel)"
        shown = text if len(text) <= 80 else text[:77] + "..."
        raise InputError(f"expected {what}, found {int(b)}: {shown!r}", source=source, line=int(a))
    columns, line_no, ascii_only = cols, a, b
    out = []
    for offsets, raw in columns:
        kind_of = pa.LargeStringArray if offsets.dtype == np.int64 else pa.StringArray
        arr = kind_of.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(raw))
        if not ascii_only:
            try:
                arr.validate(full=True)
            except pa.ArrowInvalid:
                _refuse_bad_utf8(buf, start, kind, want, source)
                raise InputError("not valid UTF-8 text (TREC files must be UTF-8 or ASCII)", source=source) from None
        out.append(pl.Series(arr))
    rows = len(columns[0][0]) - 1 if columns else len(line_no)
    return out, line_no, rows


def data_line_numbers(data: str | bytes, kind: Kind, source: str) -> np.ndarray:
    """1-based file line number of every data row, in order (used for error messages)."""
    return _tokens(data, kind, source, [], lines=True)[1]


def _line_locator(data: str | bytes, kind: Kind, source: str) -> Locator:
    """Row -> ``{"line": n}``; the line numbers are computed on first use (errors only)."""
    cache: dict[str, np.ndarray] = {}

    def where(i: int) -> dict:
        if "lines" not in cache:
            cache["lines"] = data_line_numbers(data, kind, source)
        return {"line": int(cache["lines"][i])}

    return where


def _read_careful(data: str | bytes, kind: Kind, source: str) -> tuple[pl.DataFrame, Locator]:
    want = [0, 2, 3, 4, 5] if kind == "run" else [0, 2, 3]
    cols, _, rows = _tokens(data, kind, source, want)
    if not rows:
        raise InputError(f"no {kind} lines (the file is empty or holds only comments)", source=source)
    query_id, doc_id = cols[0].rename("query_id"), cols[1].rename("doc_id")
    at = _line_locator(data, kind, source)

    if kind == "qrels":
        rel = normalize_relevance(cols[2], source=source, where=at)
        return pl.DataFrame([query_id, doc_id, rel]), at

    rank_raw, raw, tag = cols[2], cols[3], cols[4].rename("tag")
    score = raw.cast(pl.Float64, strict=False).rename("score")
    if score.null_count():
        i = int(score.is_null().arg_true()[0])
        raise InputError(f"score is not a number: {fmt_value(raw[i])}", source=source, column="score", **at(i))
    nan = score.is_nan()
    if nan.any():
        i = int(nan.arg_true()[0])
        raise InputError("score is NaN (not a number)", source=source, column="score", **at(i))
    rank: pl.Series | None = rank_raw.cast(pl.Int64, strict=False).rename("rank")
    if rank.null_count():
        as_float = rank_raw.cast(pl.Float64, strict=False)
        # a whole number past int64 (1e23, inf) is no rank either
        integral = (as_float == as_float.floor()) & (as_float.abs() < 2.0**63)
        if as_float.null_count() or not integral.all():
            warnings.warn(
                DataWarning(f"{source}: the rank column is not all 64-bit integers; it is dropped (trec_eval ignores it too)"),
                stacklevel=6,
            )
            rank = None
        else:
            rank = as_float.cast(pl.Int64).rename("rank")
    cols_out = [query_id, doc_id, score] + ([rank] if rank is not None else []) + [tag]
    return pl.DataFrame(cols_out), at


def read_trec(data: str | bytes, kind: Kind, *, source: str) -> tuple[pl.DataFrame, Locator]:
    """Parse TREC qrels or run text from a path or from (decompressed) bytes.

    Returns the table (``query_id``, ``doc_id``, ``relevance`` for qrels;
    ``query_id``, ``doc_id``, ``score``, ``rank`` when integral, ``tag`` for runs)
    and a function mapping a row to its line number.

    Examples
    --------
    >>> df, where = read_trec(b"q1 Q0 d#1 1 2.5 tag\\n# note\\nq1 Q0 d2 2 1.5 tag", "run", source="x")
    >>> df.get_column("doc_id").to_list(), where(1)
    (['d#1', 'd2'], {'line': 3})
    """
    sep = _sniff_separator(_head(data), kind)
    df = _read_fast(data, kind, sep) if sep is not None else None
    if df is None:
        return _read_careful(data, kind, source)
    where = _line_locator(data, kind, source)
    if df.height == 0:
        raise InputError(f"no {kind} lines (the file is empty or holds only comments)", source=source)
    if kind == "run":
        nan = df.get_column("score").is_nan()
        if nan.any():
            raise InputError("score is NaN (not a number)", source=source, column="score", **where(int(nan.arg_true()[0])))
    else:
        check_grades(df.get_column("relevance"), source=source, where=where)
    return df, where


def _lazy_field_count(s: pl.Series, *, kind: Kind, source: str) -> pl.Series:
    """All true for a batch of :func:`scan_trec` rows (a struct of the split fields) whose
    field counts are right (runs at least 6, qrels exactly 4, as :func:`read_trec` checks);
    raises naming the first bad row's fields (a lazy scan knows no line number: ``read_*``
    gives it)."""
    frame = s.struct.unnest()
    last = "tag" if kind == "run" else "relevance"
    bad = frame.get_column(last).is_null()
    if kind == "qrels":
        bad = bad | frame.get_column("rest").is_not_null()
    if bad.any():
        row = frame.row(int(bad.arg_true()[0]))
        fields = [f for f in row[:-1] if f is not None] + (row[-1].split(" ") if row[-1] else [])
        if kind == "run":
            what = "at least 6 whitespace-separated fields (qid iter docno rank score tag)"
        else:
            what = "exactly 4 whitespace-separated fields (qid iter docno rel)"
        shown = " ".join(fields)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise InputError(f"expected {what}, found {len(fields)}: {shown!r}", source=source)
    return pl.Series(np.ones(len(s), dtype=np.bool_))


def scan_trec(path: str, kind: Kind) -> pl.LazyFrame:
    """Lazy TREC text reader (plain, uncompressed files).

    Comments and blank lines are dropped and whitespace runs folded as in
    :func:`read_trec`, but rows are only checked when the frame is collected: a
    wrong field count (runs at least 6, qrels exactly 4) is an ``InputError``
    showing the line's fields, a value that is no number a polars error.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "q.qrels")
    >>> _ = open(p, "w").write("# c\\nq1 0 d1 2\\n")
    >>> scan_trec(p, "qrels").collect().row(0)
    ('q1', 'd1', 2)
    """
    names = _RUN_FIELDS if kind == "run" else _QRELS_FIELDS
    ascii_ws = " \t\r\x0b\x0c"  # C-locale isspace, as the eager reader
    stripped = pl.col("line").str.strip_chars(ascii_ws)
    comment = (pl.col("line") if kind == "qrels" else stripped).str.starts_with("#")
    lf = (
        pl.scan_lines(path, name="line")
        # a UTF-8 byte order mark is no part of the first query id (the eager reader drops it)
        .with_columns(pl.col("line").str.strip_prefix("\ufeff"))
        .filter(~comment & (stripped != ""))
        .select(
            stripped.str.replace_all(r"[ \t\r\x0b\x0c]+", " ")
            .str.splitn(" ", len(names))
            .struct.rename_fields(names)
            .alias("f")
        )
        .unnest("f")
    )
    # a filter keeping every row, which raises on a wrong field count (a checked column
    # that no query reads would be pruned from the plan)
    lf = lf.filter(pl.struct(names).map_batches(
        functools.partial(_lazy_field_count, kind=kind, source=path), return_dtype=pl.Boolean
    ))
    if kind == "qrels":
        # a zero fraction ("1.0") reads as the integer, as in read_trec
        whole = pl.col("relevance").str.replace(r"^([+-]?[0-9]+)\.0*$", "${1}")
        return lf.select("query_id", "doc_id", whole.cast(pl.Int64).alias("relevance"))
    return lf.select(
        "query_id",
        "doc_id",
        pl.col("score").cast(pl.Float64),
        pl.col("rank").cast(pl.Int64, strict=False),
        "tag",
    )
