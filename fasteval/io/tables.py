"""Tabular inputs: parquet, CSV/TSV, JSON Lines, JSON, data frames, Arrow tables and dicts.

Each function returns a polars DataFrame holding the needed input columns under
their *input* names (mapping to canonical names and validation happen in
:mod:`fasteval.io._common`), so that only the needed columns are read.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections import Counter
from collections.abc import Mapping
from itertools import chain
from typing import Any

import numpy as np
import polars as pl

from fasteval.errors import InputError, first_line
from fasteval.io import _json
from fasteval.io._common import (
    Kind,
    Locator,
    check_json_escapes,
    fmt_value,
    refuse_null_partitions,
    resolve_columns,
    walk_input,
)

__all__ = [
    "read_parquet",
    "read_delimited",
    "read_ndjson",
    "read_json",
    "frame_from_object",
    "dict_to_frame",
    "lazy_parquet",
    "lazy_delimited",
    "lazy_ndjson",
    "csv_line_locator",
    "jsonl_line_locator",
    "check_short_records",
    "check_jsonl_values",
]

_ID_CANONICAL = ("query_id", "doc_id")
_INFER_ROWS = 10_000
"""Rows that polars looks at to infer the types of CSV and JSON Lines columns."""


def _select(lf: pl.LazyFrame, kind: Kind, explicit: dict[str, str | None], source: str) -> tuple[pl.LazyFrame, dict[str, str]]:
    try:
        columns = lf.collect_schema().names()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"cannot read the file ({exc.__class__.__name__}: {first_line(exc)})", source=source) from exc
    mapping = resolve_columns(columns, kind, explicit, source=source)
    return lf.select(list(dict.fromkeys(mapping.values()))), mapping


def _collect(lf: pl.LazyFrame, source: str, what: str) -> pl.DataFrame:
    try:
        return lf.collect()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"cannot read {what} ({exc.__class__.__name__}: {first_line(exc)})", source=source) from exc


def lazy_parquet(path: str, kind: Kind, explicit: dict[str, str | None], source: str) -> tuple[pl.LazyFrame, dict[str, str]]:
    """Lazy parquet scan (file, glob or directory) restricted to the needed columns."""
    if os.path.isdir(path):
        _check_parquet_directory(path, source)
    elif os.path.isfile(path) and _head_bytes(path, 2) == b"\x1f\x8b":
        raise InputError("the file is gzip-compressed parquet, which is not read (parquet compresses "
                         "its own columns); expected a parquet file: decompress it first (gunzip)",
                         source=source)
    elif not os.path.exists(path):
        import glob

        if not glob.glob(path, recursive=True):
            raise InputError("no file has this name or matches it as a pattern", source=source)
    # polars reads a directory's hive folders (qid=01/) as columns of inferred types, where
    # qid=01 and qid=1 would both be the integer 1: their values are read as written
    hive = dict.fromkeys(_hive_keys(path), pl.String) if os.path.isdir(path) else {}
    try:
        lf = pl.scan_parquet(path, glob=not os.path.isfile(path),  # a file is no pattern
                             hive_schema=hive or None)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"cannot open parquet ({first_line(exc)})", source=source) from exc
    lf, mapping = _select(lf, kind, explicit, source)
    refuse_null_partitions(path, [c for c in mapping.values() if c in hive])  # Spark's nulls
    return lf, mapping


def _hive_keys(path: str) -> list[str]:
    """The keys of the hive folders (``key=value``) under the directory ``path`` that its
    first parquet file does not hold as a column (a column keeps its own type).

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(d, "run_id=bm25", "qid=01")); os.makedirs(os.path.join(d, "_tmp=1"))
    >>> _hive_keys(d)
    ['qid', 'run_id']
    """
    keys: set[str] = set()
    first = None
    for root, dirs, files in walk_input(path):  # (linked folders too, as polars reads them)
        keys.update(d.split("=", 1)[0] for d in dirs if "=" in d)
        if first is None:
            first = next((os.path.join(root, f) for f in sorted(files)
                          if f.endswith(".parquet") and not f.startswith((".", "_"))), None)
    if keys and first is not None:
        try:
            keys -= set(pl.read_parquet_schema(first))
        except (pl.exceptions.PolarsError, OSError):
            pass  # the scan names the file
    return sorted(keys)


def _check_parquet_directory(path: str, source: str) -> None:
    """A directory read as one parquet dataset must hold parquet files and nothing else
    (hidden files and ``_``-prefixed markers such as ``_SUCCESS`` aside): name what it
    holds instead of polars' message about mixed extensions or an empty expansion."""
    found, other = 0, []
    for root, _, files in walk_input(path):  # (linked folders too, as polars reads them)
        for name in sorted(files):
            if name.startswith((".", "_")):
                continue
            if name.endswith(".parquet"):
                found += 1
            else:
                other.append(os.path.relpath(os.path.join(root, name), path))
    if other:
        shown = ", ".join(other[:5]) + (f" and {len(other) - 5} more" if len(other) > 5 else "")
        raise InputError(
            f"a directory is read as one parquet dataset, but it holds {len(other)} other "
            f"file(s): {shown}; expected only .parquet files (or give a file)", source=source,
        )
    if not found:
        raise InputError("the directory holds no .parquet file; expected a file, or a "
                         "directory of parquet parts", source=source)


def read_parquet(path: str | bytes, kind: Kind, explicit: dict[str, str | None], source: str) -> tuple[pl.DataFrame, dict[str, str]]:
    """Read only the needed columns of a parquet file, glob or directory (or parquet bytes)."""
    if isinstance(path, bytes):
        try:
            columns = list(pl.read_parquet_schema(io.BytesIO(path)))
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise InputError(f"cannot open parquet ({first_line(exc)})", source=source) from exc
        mapping = resolve_columns(columns, kind, explicit, source=source)
        try:
            df = pl.read_parquet(io.BytesIO(path), columns=list(dict.fromkeys(mapping.values())))
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise InputError(f"cannot read parquet ({first_line(exc)})", source=source) from exc
        return df, mapping
    lf, mapping = lazy_parquet(path, kind, explicit, source)
    return _collect(lf, source, "parquet"), mapping


def _csv_overrides(columns: list[str], kind: Kind, explicit: dict[str, str | None], source: str) -> tuple[dict[str, str], dict[str, Any]]:
    mapping = resolve_columns(columns, kind, explicit, source=source)
    # ids as text: CSV has no types and "007" must not become 7.
    overrides = {mapping[c]: pl.String for c in _ID_CANONICAL}
    if kind == "run":  # inferred from the first rows, integer scores would refuse a later 0.5
        overrides[mapping["score"]] = pl.Float64
    else:  # grades as text, read by the rule of every text format ('2.0' is 2; '1e1', 'true' refused)
        overrides[mapping["relevance"]] = pl.String
    for c in ("run_id", "tag"):
        if c in mapping:
            overrides[mapping[c]] = pl.String
    return mapping, overrides


def lazy_delimited(path: str, sep: str, kind: Kind, explicit: dict[str, str | None], source: str) -> tuple[pl.LazyFrame, dict[str, str]]:
    """Lazy CSV/TSV scan (header row required); id columns are read as text."""
    try:
        header = pl.scan_csv(path, separator=sep, n_rows=0, infer_schema=False).collect_schema().names()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"cannot read the header ({first_line(exc)})", source=source) from exc
    mapping, overrides = _csv_overrides(header, kind, explicit, source)
    _check_header(path, sep, header, mapping, source)
    lf = pl.scan_csv(path, separator=sep, schema_overrides=overrides, infer_schema_length=_INFER_ROWS)
    lf = lf.select(list(dict.fromkeys(mapping.values())))
    blank = _trailing_blank_lines(path)
    if blank:  # polars reads each as a row of nulls
        lf = lf.filter(~((pl.int_range(pl.len()) >= pl.len() - blank) & pl.all_horizontal(pl.all().is_null())))
    return lf, mapping


def read_delimited(data: str | bytes, sep: str, kind: Kind, explicit: dict[str, str | None], source: str) -> tuple[pl.DataFrame, dict[str, str]]:
    """Read a CSV/TSV file with a header row; id columns are read as text."""
    try:
        header = pl.read_csv(data, separator=sep, n_rows=0, infer_schema=False).columns
    except pl.exceptions.NoDataError as exc:
        raise InputError("the file is empty", source=source) from exc
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"cannot read the header ({first_line(exc)})", source=source) from exc
    mapping, overrides = _csv_overrides(header, kind, explicit, source)
    _check_header(data, sep, header, mapping, source)
    wanted = list(dict.fromkeys(mapping.values()))
    try:
        df = pl.read_csv(
            data, separator=sep, columns=wanted, schema_overrides=overrides, infer_schema_length=_INFER_ROWS
        )
    except (pl.exceptions.PolarsError, OSError):
        # A value that does not fit the inferred type: read everything as text and let
        # the validators name the row.
        try:
            df = pl.read_csv(data, separator=sep, columns=wanted, infer_schema=False)
        except (pl.exceptions.PolarsError, OSError) as exc:
            where = ragged_record(data, sep, len(header))
            if where is not None:
                line, found = where
                raise InputError(f"{found} fields where the header has {len(header)}; expected "
                                 "one field per header column", source=source, line=line) from exc
            _check_utf8(data, source)
            line = _unclosed_quote(data)
            if line is not None:
                raise InputError("a quoted field opened on this line is never closed; expected a "
                                 "closing '\"' (and '\"\"' for a quote inside the field)",
                                 source=source, line=line) from exc
            found = _quoting_error(data, sep)
            if found is not None:
                line, what = found
                raise InputError(f"broken quoting ({what}); expected a quoted field to end at its "
                                 "closing quote (and '\"\"' for a quote inside it)",
                                 source=source, line=line) from exc
            raise InputError(f"cannot parse ({first_line(exc)})", source=source) from exc
    if df.null_count().sum_horizontal().item():  # a record short of fields reads as nulls
        check_short_records(data, sep, header, wanted, source)
    blank = _trailing_blank_lines(data)
    if blank and df.height >= blank and all(df.tail(blank).select(pl.all().is_null().all()).row(0)):
        df = df.head(df.height - blank)  # polars reads each as a row of nulls
    empty = df.select(pl.all_horizontal(pl.all().is_null())).to_series()
    if empty.any():  # a blank line inside the file (or one of empty fields only)
        where = csv_line_locator(data)(int(empty.arg_true()[0]))
        raise InputError(f"no value in {', '.join(wanted)} (a blank line, or empty fields "
                         "only); expected a row (blank lines are skipped only at the end of the file)",
                         source=source, **where)
    return df, mapping


def _trailing_blank_lines(data: str | bytes) -> int:
    r"""How many empty lines end CSV/TSV text (``data``: its bytes, or a path). Editors and
    ``cat`` leave them; polars reads each as a row of nulls, and Python's csv module and
    pandas skip them.

    Examples
    --------
    >>> _trailing_blank_lines(b"a,b\n1,2\n\n\n"), _trailing_blank_lines(b"a,b\r\n1,2\r\n\r\n")
    (2, 1)
    >>> _trailing_blank_lines(b"a,b\n1,2\n"), _trailing_blank_lines(b"a,b\n1,2")
    (0, 0)
    """
    if isinstance(data, bytes):
        tail = data[-65536:]
    else:
        try:
            with open(data, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                fh.seek(max(0, fh.tell() - 65536))
                tail = fh.read()
        except OSError:
            return 0
    end = tail.rstrip(b"\r\n")
    return max(tail[len(end):].count(b"\n") - 1, 0) if end else 0


def _check_utf8(data: str | bytes, source: str) -> None:
    """Refuse text that is not UTF-8, naming the line (looked for only after a reader failed)."""
    raw = data if isinstance(data, bytes) else _read_all(data, source)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = raw.count(b"\n", 0, bad.start) + 1
        raise InputError(f"not valid UTF-8 text ({bad.reason} at byte {bad.start}); expected "
                         "UTF-8 (or ASCII): convert it first (for example: iconv -f "
                         "LATIN1 -t UTF-8 < in > out)", source=source, line=line) from None


def _check_header(data: str | bytes, sep: str, header: list[str], mapping: dict[str, str], source: str) -> None:
    """Refuse a header that names a column it reads twice: polars renames the second
    ``score`` to ``score_duplicated_0``, and the first would be used without a word (other
    repeated names, such as the empty names of trailing empty columns, are left alone).
    The header is read again (Python's csv) only when polars' names show such a rename."""
    if not any("_duplicated_" in c for c in header):
        return
    raw = data[: 1 << 20] if isinstance(data, bytes) else _head_bytes(data, 1 << 20)
    names = next(_csv_reader(raw, sep), [])
    used = set(mapping.values())
    _check_unique_names([n for n in names if n in used], "header", source)


def _csv_reader(raw: bytes, sep: str, strict: bool = False) -> Any:
    """Python's csv reader over ``raw`` (undecodable bytes replaced, a byte order mark dropped)."""
    text = io.StringIO(raw.decode("utf-8", "replace").removeprefix("\ufeff"), newline="")
    return csv.reader(text, delimiter=sep, strict=strict)


def _unclosed_quote(data: str | bytes) -> int | None:
    """The 1-based line of a quote that opens a field and is never closed (the file holds an
    odd number of ``"``: the last one opens a field), or None (looked for only after the
    reader failed).

    Examples
    --------
    >>> _unclosed_quote(b'query_id,doc_id,score\\nq1,"a,1\\nq1,b,2\\n')
    2
    >>> _unclosed_quote(b'query_id,doc_id,score\\nq1,"a, b",1\\n') is None
    True
    """
    raw = _raw(data)
    if raw.count(b'"') % 2 == 0:
        return None
    return raw.count(b"\n", 0, raw.rindex(b'"')) + 1


def _quoting_error(data: str | bytes, sep: str) -> tuple[int, str] | None:
    r"""(1-based line, Python's csv message) of the first record whose quoting is broken
    (text after a closing quote, ``"q1"x``), or None (looked for only after the reader
    failed).

    Examples
    --------
    >>> _quoting_error(b'qid\tdocno\nq1\td\n"q1"x\td\n', "\t")
    (3, 'expected \\t after a closing quote')
    >>> _quoting_error(b'qid,docno\n"a,b",c\n', ",") is None
    True
    """
    reader = _csv_reader(data if isinstance(data, bytes) else _read_all(data, ""), sep, strict=True)
    try:
        for _ in reader:
            pass
    except csv.Error as exc:
        what = str(exc)
        if what == f"'{sep}' expected after '\"'":
            what = f"expected {sep!r} after a closing quote".replace("'", "")
        return reader.line_num, what
    return None


def ragged_record(data: str | bytes, sep: str, width: int, need: int = 0) -> tuple[int, int] | None:
    """(1-based line, field count) of the first record with more fields than the header
    (``width``), or with some but fewer than ``need`` (looked for only after the reader
    failed, or read nulls); None if there is none.

    Examples
    --------
    >>> ragged_record(b"a,b,c\\n1,2,3\\n1,2\\n", ",", 3), ragged_record(b"a,b,c\\n1,2,3\\n1,2\\n", ",", 3, 3)
    (None, (3, 2))
    """
    reader = _csv_reader(data if isinstance(data, bytes) else _read_all(data, ""), sep)
    try:
        next(reader, None)
        start = reader.line_num
        for record in reader:
            if len(record) > width or 0 < len(record) < need:
                return start + 1, len(record)
            start = reader.line_num
    except csv.Error:
        return None
    return None


def check_short_records(data: str | bytes, sep: str, header: list[str], wanted: list[str],
                        source: str) -> None:
    """Refuse a record of a CSV/TSV file with fewer fields than it takes to reach the
    columns read (``wanted``): polars reads the fields it lacks as nulls, which would be
    reported as missing values. Called only when a column read holds a null.

    Examples
    --------
    >>> check_short_records(b"query_id,doc_id,score\\nq1,a,1\\nq1,b\\n", ",", ["query_id", "doc_id", "score"],
    ...                     ["query_id", "doc_id", "score"], "run.csv")
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: run.csv, line 3: 2 fields where the header has 3 (query_id, doc_id, score); expected one field per header column
    """
    need = max((header.index(c) + 1 for c in wanted if c in header), default=0)
    where = ragged_record(data, sep, len(header), need)
    if where is not None:
        line, found = where
        from fasteval._words import counted

        raise InputError(f"{counted(found, 'field')} where the header has {len(header)} "
                         f"({', '.join(header)}); expected one field per header column",
                         source=source, line=line)


def _raw(data: str | bytes) -> bytes:
    """The bytes of ``data`` (a path, or the bytes themselves)."""
    if isinstance(data, bytes):
        return data
    with open(data, "rb") as fh:
        return fh.read()


def jsonl_line_locator(data: str | bytes) -> Locator:
    """Locator for JSON Lines: a record (0-based) to its 1-based line in the file (blank lines
    hold no record). The file (a path, or its bytes) is looked at only when a message needs
    a line.

    Examples
    --------
    >>> where = jsonl_line_locator(b'{"a": 1}\\n\\n  \\r\\n{"a": 2}\\n')
    >>> where(0), where(1), where(2)
    ({'line': 1}, {'line': 4}, {'row': 2})
    """
    lines: list[int] | None = None

    def where(i: int) -> dict:
        nonlocal lines
        if lines is None:
            lines = [n for n, text in enumerate(_raw(data).split(b"\n"), start=1) if text.strip()]
        return {"line": lines[i]} if i < len(lines) else {"row": i}

    return where


def csv_line_locator(data: str | bytes) -> Locator:
    """Locator for CSV/TSV files: a data row (0-based, the header not counted) to its 1-based
    line in the file, following quoted fields that span lines. The file (a path, or its
    bytes) is looked at only when a message needs a line.

    Examples
    --------
    >>> where = csv_line_locator(b'query_id,doc_id,score\\nq,"a\\nb",1\\nq,c,x\\n')
    >>> where(0), where(1)
    ({'line': 2}, {'line': 4})
    """
    lines: np.ndarray | None = None

    def where(i: int) -> dict:
        nonlocal lines
        if lines is None:
            a = np.frombuffer(_raw(data), dtype=np.uint8)
            newlines = np.flatnonzero(a == 10)
            if a.size and a[-1] != 10:  # the last record has no newline after it
                newlines = np.append(newlines, a.size)
            quotes = np.cumsum(a == 34, dtype=np.int64)
            inside = quotes[np.minimum(newlines, a.size - 1)] % 2 == 1 if a.size else np.zeros(0, bool)
            ends = np.flatnonzero(~inside)  # newlines that end a record (header first)
            lines = ends[:-1] + 2  # data row i starts after the newline ending record i
        return {"line": int(lines[i])} if i < len(lines) else {"row": i}

    return where


def lazy_ndjson(path: str, kind: Kind, explicit: dict[str, str | None], source: str) -> tuple[pl.LazyFrame, dict[str, str]]:
    """Lazy JSON Lines scan restricted to the needed keys; scores and grades are read as
    floats (the types are inferred from the first rows, where integers would refuse a later
    0.5 or 2.0; the readers check that grades are whole numbers), integer ids as Int128 (a
    later id past 2^63 is then read, and refused naming the file, not failing the scan)."""
    if _blank(path):  # (polars: "Cannot infer NDJSON types on empty reader")
        raise InputError("the file is empty (no JSON records)", source=source)
    check_json_escapes(path, source, lines=True)
    first, mapping = _select(pl.scan_ndjson(path, infer_schema_length=_INFER_ROWS), kind, explicit, source)
    overrides = {mapping["score" if kind == "run" else "relevance"]: pl.Float64}
    inferred = first.collect_schema()
    for c in ("query_id", "doc_id"):  # a later id past 2^63 is read, and refused naming the file
        if inferred[mapping[c]].is_integer():
            overrides[mapping[c]] = pl.Int128
    return _select(pl.scan_ndjson(path, infer_schema_length=_INFER_ROWS, schema_overrides=overrides),
                   kind, explicit, source)


def _blank(data: str | bytes) -> bool:
    """Whether a file (path) or its bytes hold nothing but whitespace."""
    if isinstance(data, bytes):
        return not data.strip()
    with open(data, "rb") as fh:
        while chunk := fh.read(1 << 16):
            if chunk.strip():
                return False
    return True


def read_ndjson(data: str | bytes, kind: Kind, explicit: dict[str, str | None], source: str) -> tuple[pl.DataFrame, dict[str, str]]:
    """Read JSON Lines (one object per line). The types are inferred from the first rows;
    a file whose later rows do not fit them (integer scores, then 0.5) is read again with
    the types inferred from every row. A file is read into memory once: its bytes are
    parsed and then searched for repeated keys (:func:`_check_keys_once`)."""
    if not isinstance(data, bytes):
        data = _read_all(data, source)
    check_json_escapes(data, source, lines=True)
    try:
        try:
            df = pl.read_ndjson(data, infer_schema_length=_INFER_ROWS)
        except pl.exceptions.ComputeError:
            df = pl.read_ndjson(data, infer_schema_length=None)
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        # looked at only on failure: no second read of a good file
        if _blank(data):
            raise InputError("the file is empty (no JSON records)", source=source) from exc
        bom = b"\xef\xbb\xbf"
        head = data[:3] if isinstance(data, bytes) else _head_bytes(data, 3)
        if head == bom:  # a UTF-8 byte order mark, which polars' reader does not skip
            raw = data if isinstance(data, bytes) else _read_all(data, source)
            return read_ndjson(raw[3:], kind, explicit, source)
        _check_utf8(data, source)
        # polars' parser names no line: Python's names the first bad one, and reads what a
        # JSON document may hold (Infinity, integers past 64 bits) as read_json reads it
        raw = data if isinstance(data, bytes) else _read_all(data, source)
        lines: list[int] = []
        return _records(_json_lines(raw, source, lines), kind, explicit, source, lines)
    mapping = resolve_columns(df.columns, kind, explicit, source=source)
    check_jsonl_values(data, df, set(mapping.values()), source)
    return df.select(list(dict.fromkeys(mapping.values()))), mapping


def check_jsonl_values(data: bytes, df: pl.DataFrame, keys: set[str], source: str) -> None:
    """Refuse what polars' JSON Lines reader (``df``, read from ``data``) would have read
    wrong without a word in the columns ``keys``: a record that repeats one of them (the
    first value kept), or values of different JSON kinds under one (an object read as its
    JSON text, true as 1). Both are named by their line.

    Examples
    --------
    >>> data = b'{"doc_id": "d1", "rel": 1}\\n{"doc_id": {"x": 1}, "rel": 0}\\n'
    >>> check_jsonl_values(data, pl.read_ndjson(data), {"doc_id", "rel"}, "s.jsonl")
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: s.jsonl, line 2, column 'doc_id': doc_id is an object where other records hold a number or text; expected one kind of value per key (numbers or text for the table's columns)
    """
    _check_keys_once(data, df.height, keys, source)
    if _mixed_kinds_suspected(df.select(list(keys)), data):
        lines: list[int] = []
        _check_one_kind(_json_lines(data, source, lines), keys, source, lines)


def _mixed_kinds_suspected(df: pl.DataFrame, data: bytes) -> bool:
    """Whether polars may have merged values of different JSON kinds into a column (it
    writes an object or array met among text as JSON text, ``{"id": "a"}``, and reads true
    among numbers as 1): a text column holding a value that opens like an object or an
    array, or a number or text column whose key is given ``true`` or ``false`` somewhere in
    the text (one search for those keys; a boolean under another key, which the table does
    not read, is no suspicion). Only then are the records parsed again to be sure
    (:func:`_check_one_kind`).

    Examples
    --------
    >>> frame = pl.DataFrame({"doc_id": ["trueblood"], "score": [1.0]})
    >>> _mixed_kinds_suspected(frame, b'{"doc_id": "trueblood", "score": 1.0, "flag": true}')
    False
    >>> _mixed_kinds_suspected(frame, b'{"doc_id": "d", "score": true}')
    True
    """
    for name in df.columns:
        s = df.get_column(name)
        if s.dtype == pl.String and (s.str.starts_with("{") | s.str.starts_with("[")).any():
            return True
    keys = [n for n in df.columns if df.get_column(n).dtype != pl.Boolean]
    if not keys or (b"true" not in data and b"false" not in data):  # (a fast find first)
        return False
    return any(re.search(re.escape(json.dumps(k).encode()) + rb"\s*:\s*(?:true|false)\b", data)
               for k in keys)


def _check_keys_once(data: str | bytes, records: int, keys: set[str], source: str) -> None:
    """Refuse a JSON Lines record that repeats a key the table is read from.

    polars' reader keeps the first value of a repeated key and Python's ``json`` the last:
    ``{"doc_id": "d1", "doc_id": "d9"}`` is no one document. Each key's quoted name is
    counted in the text first (a few passes over bytes in memory); only when some name
    shows up more often than there are records (a repeat, or a value that spells it) are
    the lines parsed to find the record, named by its line.

    Examples
    --------
    >>> _check_keys_once(b'{"doc_id": "d1", "s": 1}\\n{"doc_id": "d2", "s": 2}\\n', 2, {"doc_id"}, "r.jsonl")
    >>> _check_keys_once(b'{"doc_id": "doc_id"}\\n{"doc_id": "d1", "doc_id": "d9"}\\n', 2, {"doc_id"}, "r.jsonl")
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: r.jsonl, line 2: the record repeats the key 'doc_id'; expected each key once
    """
    raw = data if isinstance(data, bytes) else _read_all(data, source)  # (bytes from read_ndjson)
    names = {k: json.dumps(k, ensure_ascii=False).encode() for k in keys}
    if all(raw.count(name) <= records for name in names.values()):
        return
    for n, line in enumerate(raw.split(b"\n"), start=1):
        if not any(name in line for name in names.values()):
            continue
        try:
            record = _json.loads(line, object_pairs_hook=_object)
        except _json.JsonDepthError as exc:  # polars reads 1,024 levels, Python's json fewer
            raise _json.input_error(exc, source, n) from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue  # polars read it; a line Python reads differently is not this check's
        if isinstance(record, _Pairs):
            counts = Counter(k for k, _ in record.pairs)
            repeated = next((k for k in record if counts[k] > 1 and k in keys), None)
            if repeated is not None:
                raise InputError(f"the record repeats the key {repeated!r}; expected each key once",
                                 source=source, line=n)


def _json_lines(raw: bytes, source: str, lines: list[int] | None = None) -> list:
    """The records of JSON Lines text, parsed line by line (blank lines skipped); the first
    line that is no JSON is named (one nested too deep too: :func:`fasteval.io._json.check_depth`,
    all lines at once). ``lines`` receives each record's line number."""
    try:
        _json.check_depth(raw, lines=True)
    except _json.JsonDepthError as exc:
        raise _json.input_error(exc, source) from None
    records = []
    for n, line in enumerate(raw.split(b"\n"), start=1):
        if line.strip():
            if lines is not None:
                lines.append(n)
            try:
                records.append(json.loads(line, object_pairs_hook=_object))
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON ({exc.msg} at column {exc.colno})", source=source,
                                 line=n) from None
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 text ({exc.reason})", source=source, line=n) from None
    return records


def _head_bytes(path: str, n: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(n)
    except OSError:
        return b""


def _read_all(path: str, source: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", source=source) from exc


def read_json(data: bytes, kind: Kind, explicit: dict[str, str | None], source: str) -> tuple[pl.DataFrame, dict[str, str]]:
    """Read a JSON document: ``{qid: {docid: value}}`` (pytrec_eval / ranx) or a list of records."""
    if not data.strip():
        raise InputError("the file is empty", source=source)
    check_json_escapes(data, source)
    if json.detect_encoding(data).startswith("utf-8"):
        _check_utf8(data, source)  # json.loads would decode an encoded surrogate (b"\xed\xa0\xbd")
    try:
        obj = _json.loads(data, object_pairs_hook=_object)
    except _json.JsonDepthError as exc:
        raise _json.input_error(exc, source) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        hint = ""
        if isinstance(exc, json.JSONDecodeError) and exc.msg == "Extra data" and data.lstrip()[:1] == b"{":
            hint = "; it looks like JSON Lines (one object per line): name it .jsonl or pass format='jsonl'"
        raise InputError(f"not valid JSON ({exc}){hint}", source=source) from exc
    if isinstance(obj, Mapping):
        df = dict_to_frame(obj, kind, source)
        return df, {c: c for c in df.columns}
    if isinstance(obj, list):
        return _records(obj, kind, explicit, source)
    raise InputError(
        f"expected a JSON object {{qid: {{docid: value}}}} or a list of records, got {type(obj).__name__}",
        source=source,
    )


def _records(obj: list, kind: Kind, explicit: dict[str, str | None], source: str,
             lines: list[int] | None = None) -> tuple[pl.DataFrame, dict[str, str]]:
    """A list of JSON records (a JSON document's, or JSON Lines read line by line, with
    ``lines`` their line numbers) as a table."""
    if not obj:
        raise InputError(f"the {kind} table is empty (no rows)", source=source)

    def where(i: int) -> dict[str, int]:
        return {"line": lines[i]} if lines else {"row": i}

    for i, record in enumerate(obj):
        if not isinstance(record, Mapping):
            raise InputError(f"the record is {_json_kind(record)}; expected a JSON object "
                             "{column: value}", source=source, **where(i))
        if isinstance(record, _Pairs):
            key = next(k for k, n in Counter(k for k, _ in record.pairs).items() if n > 1)
            raise InputError(f"the record repeats the key {key!r}; expected each key once",
                             source=source, **where(i))
    try:
        df = pl.from_dicts(obj, infer_schema_length=None)
    except OverflowError as exc:  # an integer past 128 bits
        found = next(((i, k, v) for i, r in enumerate(obj) if isinstance(r, Mapping)
                      for k, v in r.items() if _huge(v)), None)
        if found is None:
            raise InputError(f"JSON records do not form a table ({first_line(exc)})", source=source) from exc
        row, key, value = found
        raise InputError(f"{key} {fmt_value(value)} is an integer past 128 bits, which is not read",
                         source=source, row=row, column=key) from exc
    except (pl.exceptions.PolarsError, TypeError, ValueError) as exc:
        _check_one_kind(obj, None, source, lines)
        raise InputError(f"JSON records do not form a table ({first_line(exc)})", source=source) from exc
    mapping = resolve_columns(df.columns, kind, explicit, source=source)
    _check_one_kind(obj, set(mapping.values()), source, lines)
    return df.select(list(dict.fromkeys(mapping.values()))), mapping


def _json_kind(value: Any) -> str:
    """``value``'s JSON kind: an object, an array, true or false, or a number or text."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "true or false" if isinstance(value, bool) else "a number or text"


def _check_one_kind(records: list, keys: set[str] | None, source: str,
                    lines: list[int] | None = None) -> None:
    """Refuse a key (of ``keys``; all when None) that holds values of different JSON kinds
    (:func:`_json_kind`; nulls aside) in different records: polars would merge them into
    one column as it can (true as 1, an object as its JSON text) or fail. The first record
    whose kind differs from the first record's is named (its line, with ``lines``).

    Examples
    --------
    >>> _check_one_kind([{"score": 1.5}, {"score": "2"}, {"score": True}], {"score"}, "r.json")
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: r.json, row 2, column 'score': score is true or false where other records hold a number or text; expected one kind of value per key (numbers or text for the table's columns)
    """
    names = keys if keys is not None else dict.fromkeys(k for r in records for k in r)
    found: tuple[tuple[int, int], str, str, str] | None = None
    for key in names:
        values = [r.get(key) for r in records]
        types = set(map(type, values))
        if types <= _SCALAR_TYPES or types <= _BOOL_TYPES:  # one kind: the common case
            continue
        other = _other_kind(values)
        if other is not None:  # the first such record; in it, the first such key
            at = (other[0], list(records[other[0]]).index(key))
            if found is None or at < found[0]:
                found = (at, key, other[1], other[2])
    if found is not None:
        (i, _), key, kind, seen = found
        where = {"line": lines[i]} if lines else {"row": i}
        raise InputError(_kinds_message(key, kind, seen), source=source, column=key, **where)


_SCALAR_TYPES = {int, float, str, type(None)}
_BOOL_TYPES = {bool, type(None)}


def _other_kind(values: list) -> tuple[int, str, str] | None:
    """(index, kind, first kind) of the first value whose JSON kind differs from the first
    value's (nulls aside), or None."""
    seen = None
    for i, value in enumerate(values):
        if value is not None:
            kind = _json_kind(value)
            if seen is None:
                seen = kind
            elif kind != seen:
                return i, kind, seen
    return None


def _kinds_message(key: str, kind: str, seen: str) -> str:
    return (f"{key} is {kind} where other records hold {seen}; expected one kind of value per "
            "key (numbers or text for the table's columns)")


class _Pairs(Mapping):
    """A JSON object that repeats a key, with every pair kept: ``json`` would keep the last
    value alone, so ``{"q1": {"d1": 1, "d1": 2}}`` would lose a judgment without a word.
    :func:`dict_to_frame` reads its pairs as rows, and the duplicate policy decides."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs

    def __getitem__(self, key: str) -> Any:
        return dict(self.pairs)[key]

    def __iter__(self) -> Any:
        return (k for k, _ in self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)

    def values(self) -> Any:  # type: ignore[override]
        return [v for _, v in self.pairs]


def _object(pairs: list[tuple[str, Any]]) -> dict | _Pairs:
    out = dict(pairs)
    return out if len(out) == len(pairs) else _Pairs(pairs)


def _id_series(keys: list, name: str, source: str) -> pl.Series:
    """Ids from dict keys: all ints -> Int64, all str -> Utf8, anything mixed -> Utf8 via str().

    Text that is no valid Unicode (a lone surrogate, ``"q\\ud83d"``) is refused, naming the
    key: no UTF-8 column holds it."""
    types = set(map(type, keys))
    if types <= {str}:
        try:
            return pl.Series(name, keys, dtype=pl.String)
        except UnicodeEncodeError:
            bad = next(k for k in keys if any("\ud800" <= c <= "\udfff" for c in k))
            raise InputError(f"{name} {bad!r} holds a lone UTF-16 surrogate, which is no character; "
                             "expected valid Unicode text", source=source, column=name) from None
    if all(issubclass(t, (int, np.integer)) and not issubclass(t, (bool, np.bool_)) for t in types):
        wide = next((k for k in keys if not -(2**63) <= int(k) < 2**63), None)
        if wide is not None:
            raise InputError(f"{name} {wide} does not fit in a signed 64-bit integer (give "
                             "such ids as text)", source=source, column=name)
        return pl.Series(name, keys, dtype=pl.Int64)
    if any(k is None for k in keys):
        raise InputError(f"{name} is None in a dict key", source=source, column=name)
    return _id_series([str(k) for k in keys], name, source)


def _check_spelled_apart(groups: list[list], name: str, source: str) -> None:
    """Refuse keys of mixed types (``1`` and ``"1"``) in one mapping that read as the same
    text id: :func:`_id_series` spells mixed keys with ``str()``, which would make two
    keys one id."""
    for keys in groups:
        seen: dict[str, Any] = {}
        for k in keys:
            text = str(k)
            if text in seen:
                raise InputError(f"the {name}s {seen[text]!r} and {k!r} are both read as the "
                                 f"text id {text!r} (keys of mixed types are read as text); "
                                 "expected keys of one type, or distinct spellings",
                                 source=source, column=name)
            seen[text] = k


def dict_to_frame(obj: Mapping, kind: Kind, source: str) -> pl.DataFrame:
    """``{qid: {docid: score_or_rel}}`` to a frame with the canonical columns (unvalidated values).

    Examples
    --------
    >>> dict_to_frame({1: {10: 0.5, 11: 0.25}, 2: {10: 1.0}}, "run", "run").rows()
    [(1, 10, 0.5), (1, 11, 0.25), (2, 10, 1.0)]
    """
    qkeys = list(obj.keys())
    inner = list(obj.values())
    for q, docs in zip(qkeys, inner, strict=True):
        if not isinstance(docs, Mapping):
            raise InputError(
                f"query {q!r}: expected a mapping {{doc_id: value}}, got {type(docs).__name__}",
                source=source,
            )
    counts = np.fromiter((len(v) for v in inner), dtype=np.int64, count=len(inner))
    if counts.sum() == 0:
        raise InputError(f"the {kind} dict is empty (no (query, doc) entries)", source=source)
    docs = list(chain.from_iterable(inner))
    values = list(chain.from_iterable(v.values() for v in inner))
    q = _id_series(qkeys, "query_id", source)
    if q.dtype == pl.String and len(set(map(type, qkeys))) > 1:
        _check_spelled_apart([qkeys], "query_id", source)
    q = q.gather(np.repeat(np.arange(len(qkeys)), counts))
    d = _id_series(docs, "doc_id", source)
    if d.dtype == pl.String and len(set(map(type, docs))) > 1:
        _check_spelled_apart([list(v) for v in inner], "doc_id", source)
    name = "relevance" if kind == "qrels" else "score"
    odd = _other_kind(values)
    if odd is not None:
        i, found, seen = odd
        raise InputError(_kinds_message(name, found, seen), source=source, column=name, row=i)
    try:
        v = pl.Series(name, values, strict=False)
    except (TypeError, ValueError, pl.exceptions.PolarsError):
        v = pl.Series(name, [str(x) for x in values], dtype=pl.String)
    if v.dtype == pl.Object:
        v = pl.Series(name, [str(x) for x in values], dtype=pl.String)
    if v.null_count():  # a value polars could not hold (an integer past 128 bits) is null
        i = next((i for i, x in enumerate(values) if _huge(x)), None)
        if i is not None:
            raise InputError(f"{name} {fmt_value(values[i])} is an integer past 128 bits, which is not read",
                             source=source, row=i, column=name)
    return pl.DataFrame([q, d, v])


def _huge(value: Any) -> bool:
    """Whether ``value`` is an integer that no polars integer type holds (past 128 bits)."""
    return isinstance(value, int) and not -(2**127) <= value < 2**128


def frame_from_object(obj: Any, source: str) -> pl.DataFrame | pl.LazyFrame | None:
    """Turn an in-memory table (polars, pandas, pyarrow) into polars; None if not a table."""
    if isinstance(obj, (pl.DataFrame, pl.LazyFrame)):
        return obj
    module = type(obj).__module__.split(".")[0]
    if module == "pandas":
        import pandas as pd

        if isinstance(obj, pd.DataFrame):
            return _from_pandas(obj, source)
        return None
    if module == "pyarrow":
        import pyarrow as pa

        if isinstance(obj, (pa.Table, pa.RecordBatch)):
            _check_unique_names([str(c) for c in obj.schema.names], "pyarrow table", source)
            try:
                out = pl.from_arrow(obj)
            except (pl.exceptions.PolarsError, TypeError, ValueError) as exc:
                raise InputError(f"cannot convert the pyarrow table ({first_line(exc)})", source=source) from exc
            return out if isinstance(out, pl.DataFrame) else out.to_frame()
        return None
    return None


def _check_unique_names(names: list[str], what: str, source: str) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"the {what} has more than one column named {', '.join(map(repr, repeated))}; "
                         "expected unique column names", source=source, column=repeated[0])


def _from_pandas(obj: Any, source: str) -> pl.DataFrame:
    """A pandas DataFrame as polars. Named index levels (``df.set_index("query_id")``) become
    columns, as they hold data; an unnamed index (row numbers) is left out."""
    columns = [str(c) for c in obj.columns]
    _check_unique_names(columns, "pandas DataFrame", source)
    named = [n for n in obj.index.names if n is not None]
    if named and not {str(n) for n in named} & set(columns):
        obj = obj.reset_index(level=named)
    try:
        return pl.from_pandas(obj)
    except (pl.exceptions.PolarsError, TypeError, ValueError, ImportError) as exc:
        for c in obj.columns:  # name the column that does not convert
            try:
                pl.from_pandas(obj[[c]])
            except (pl.exceptions.PolarsError, TypeError, ValueError, ImportError) as col_exc:
                raise InputError(
                    f"cannot convert the column ({first_line(col_exc)}); expected one type per "
                    "column (ids all strings or all integers, numbers for scores and grades)",
                    source=source, column=str(c),
                ) from exc
        raise InputError(f"cannot convert the pandas DataFrame ({first_line(exc)})", source=source) from exc
