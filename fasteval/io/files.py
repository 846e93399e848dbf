"""Whole tables from files named on a command line (the ``sas`` and ``judge`` inputs):
the format from the name (or the first bytes of standard input, a FIFO or a device, read
once as ``fasteval eval`` reads them), read errors as :class:`InputError`."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import Any

from fasteval.errors import InputError, first_line
from fasteval.io.inflate import inflate_bytes

_KINDS = {".parquet": "parquet", ".pq": "parquet", ".jsonl": "ndjson", ".ndjson": "ndjson",
          ".json": "json", ".tsv": "tsv", ".tab": "tsv", ".csv": "csv"}


def read_table_file(path: str, *, text: bool = True, default: str | None = "csv") -> Any:
    """A polars DataFrame of the table file ``path``.

    Parameters
    ----------
    path : str
        A parquet, JSON lines, JSON, TSV or CSV file, by its suffix (the text formats
        also gzip-compressed, ``.tsv.gz``). ``-`` (standard input), a FIFO (``<(cmd)``) or
        a device is read once, whole, and where its name has no known suffix its format
        is found from its first bytes (:func:`sniff_table`), gzip looked through.
    text : bool
        Read CSV/TSV columns as text (the default: CSV has no types, and inferred ones
        would turn the answer ``007`` into ``7`` and ``1.50`` into ``1.5``, or a question
        into ``7.0`` once a later row reads ``1e3``); False infers numbers from the text.
    default : str or None
        Format of an unknown suffix (None: refuse it).

    Raises
    ------
    InputError
        No such file (or a folder on its way that cannot be searched), an unknown suffix
        without ``default``, or a file polars cannot read.

    Examples
    --------
    >>> import tempfile
    >>> p = tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False)
    >>> _ = p.write("question\\tanswer\\nq\\t42\\n"); p.close()
    >>> read_table_file(p.name, text=True).rows()
    [('q', '42')]
    """
    import polars as pl

    source, kind = _opened(path, default)
    if kind in ("ndjson", "json"):  # polars reads a lone surrogate escape as "\x00"
        from fasteval.io._common import check_json_escapes

        check_json_escapes(source.getvalue() if isinstance(source, io.BytesIO) else os.fspath(source),
                           path, lines=kind == "ndjson")
    try:
        if kind == "parquet":
            return pl.read_parquet(source)
        if kind in ("ndjson", "json"):
            frame = pl.read_ndjson(source) if kind == "ndjson" else pl.read_json(source)
        else:
            options = {"infer_schema_length": 0} if text else {}
            return pl.read_csv(source, separator="\t" if kind == "tsv" else ",", **options)
    except Exception as exc:  # noqa: BLE001 - polars raises several types for unreadable files
        if kind in ("csv", "tsv"):
            _check_ragged(source, "\t" if kind == "tsv" else ",", path)
        if kind in ("ndjson", "json"):  # nested too deep: named by its line
            from fasteval.io._json import check_input

            check_input(source, path, lines=kind == "ndjson")
        raise InputError(f"cannot read the file ({first_line(exc)})", source=path) from exc
    _check_json_kinds(frame, source, kind, path)
    if kind == "ndjson":  # a repeated key (polars keeps its first value), true among text
        from fasteval.io.tables import check_jsonl_values

        data = source.getvalue() if isinstance(source, io.BytesIO) else Path(source).read_bytes()
        check_jsonl_values(data, frame, set(frame.columns), path)
    return frame


def _opened(path: str, default: str | None) -> tuple[Any, str]:
    """``(source, kind)`` of the table file ``path`` for polars: its path, or its bytes
    (read once, inflated, line endings made LF), and its format (see
    :func:`read_table_file`)."""
    p = Path(path)
    streamed, mode = stream_input(path)
    if stat.S_ISDIR(mode):
        raise InputError("is a directory; expected a table file", source=path)
    name = p.name.lower()
    gz = name.endswith(".gz")
    suffix = Path(name[:-3] if gz else name).suffix
    kind = _KINDS.get(suffix)
    if kind is None and streamed is not None:  # no name to tell the format by: its bytes do
        gz = streamed.getvalue()[:2] == b"\x1f\x8b"
        kind = sniff_table(inflated_head(streamed.getvalue(), path) if gz else streamed.getvalue())
    kind = kind or default
    if kind is None:
        raise InputError(f"unknown table format {suffix or p.suffix.lower()!r}; use .parquet, "
                         ".jsonl, .ndjson, .json, .tsv or .csv (the text formats also + .gz)",
                         source=path)
    if gz and kind == "parquet":
        raise InputError("a gzip-compressed parquet file is not read (parquet compresses its "
                         "own columns); decompress it first", source=path)
    source: Any = p if streamed is None else streamed
    # a file whose name polars would expand as a pattern ([, *, ?) is read as bytes too
    if streamed is None and (gz or any(c in p.name for c in "*?[")):
        source = io.BytesIO(p.read_bytes())
    if gz:  # inflated as a stream, checked as it comes
        source = io.BytesIO(inflate_bytes(source.getvalue(), path, lines=kind != "json"))
    if kind in ("csv", "tsv", "ndjson"):  # old-Mac (CR-only) lines: one record per line
        from fasteval.io._common import fix_line_endings

        fixed = fix_line_endings(source.getvalue() if isinstance(source, io.BytesIO) else os.fspath(source), path)
        source = io.BytesIO(fixed) if isinstance(fixed, bytes) else source
    return source, kind


def stream_input(path: str) -> tuple[io.BytesIO | None, int]:
    """``(content, mode)`` of an input that can be read only once (``-`` for standard input,
    a FIFO, a device), read whole as ``fasteval eval`` reads one
    (:func:`read_once`); ``(None, mode)`` for a file or folder."""
    if os.fspath(path) == STDIN:
        return read_once(STDIN), stat.S_IFIFO
    try:
        mode = os.stat(path).st_mode
    except OSError:
        from fasteval.io._common import missing_path

        raise missing_path(os.fspath(path)) from None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None, mode
    return read_once(path), mode


def inflated_head(data: bytes, path: str) -> bytes:
    """The first inflated bytes of gzip-compressed ``data`` (for :func:`sniff_table`)."""
    import zlib

    try:
        return zlib.decompressobj(wbits=31).decompress(data[: 1 << 16], 1 << 16)
    except zlib.error as exc:
        raise InputError(f"cannot read the gzip stream ({exc})", source=path) from None


def sniff_table(head: bytes) -> str:
    """The format of a table from its first bytes, for an input whose name says nothing
    (standard input, ``<(cmd)``): parquet by its magic, a JSON array, JSON Lines (a first
    line that is an object), TSV (a tab in the first line), else CSV.

    Examples
    --------
    >>> sniff_table(b'{"question": "q"}\\n'), sniff_table(b"question\\tanswer\\n"), sniff_table(b"a,b\\n")
    ('ndjson', 'tsv', 'csv')
    """
    if head[:4] == b"PAR1":
        return "parquet"
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if text[:1] == b"[":
        return "json"
    if text[:1] == b"{":
        return "ndjson"
    return "tsv" if b"\t" in text.split(b"\n", 1)[0] else "csv"


def _check_ragged(source: Any, sep: str, path: str) -> None:
    """Refuse a CSV/TSV record with more fields than the header, naming its line (looked
    for only after polars failed)."""
    from fasteval.io.tables import ragged_record

    data = source.getvalue() if isinstance(source, io.BytesIO) else Path(source).read_bytes()
    header = data.split(b"\n", 1)[0].decode("utf-8", "replace").removeprefix("\ufeff")
    import csv

    width = len(next(csv.reader([header], delimiter=sep), []))
    where = ragged_record(data, sep, width)
    if where is not None:
        line, found = where
        raise InputError(f"{found} fields where the header has {width}; expected one field per "
                         "header column", source=path, line=line)


def table_file_locator(path: str) -> Any:
    """The place in the file ``path`` (as :func:`read_table_file` reads it) of a row of its
    table (0-based): ``{"line": n}`` (1-based, header counted) for CSV/TSV and JSON Lines,
    gzip-compressed too, ``{"row": i}`` for parquet, JSON arrays, FIFOs and devices.

    Examples
    --------
    >>> import tempfile
    >>> p = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
    >>> _ = p.write('prediction,gold\\n"two\\nlines",x\\nb,\\n'); p.close()
    >>> table_file_locator(p.name)(1)
    {'line': 4}
    """
    from fasteval.io._common import row_locator
    from fasteval.io.tables import csv_line_locator, jsonl_line_locator

    name = Path(path).name.lower()
    gz = name.endswith(".gz")
    kind = _KINDS.get(Path(name[:-3] if gz else name).suffix, "csv")
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return row_locator()
    if kind not in ("csv", "tsv", "ndjson") or not stat.S_ISREG(mode):
        return row_locator()  # a FIFO or device was read once: it cannot be read again
    if not gz:
        return csv_line_locator(path) if kind != "ndjson" else jsonl_line_locator(path)
    data = inflate_bytes(path, path)
    return csv_line_locator(data) if kind != "ndjson" else jsonl_line_locator(data)


def _check_json_kinds(frame: Any, source: Any, kind: str, path: str) -> None:
    """Refuse a JSON column that mixes lists or objects with other values: polars reads
    such a column as text, each list as its JSON spelling (a gold list ``["a", "b"]`` would
    be scored as that one string). Only a text column holding a value that starts with
    ``[`` or ``{`` is looked at in the file itself."""
    import json

    import polars as pl

    from fasteval.io import _json

    suspects = [c for c, dt in frame.schema.items() if dt == pl.String
                and frame.get_column(c).str.contains(r"^[\[{]").any()]
    if not suspects:
        return
    data = source.getvalue() if isinstance(source, io.BytesIO) else Path(source).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = inflate_bytes(data, path, lines=kind != "json")
    try:  # (polars reads 1,024 levels of nesting, Python's json fewer)
        _json.check_depth(data, lines=kind == "ndjson")
    except _json.JsonDepthError as exc:
        raise _json.input_error(exc, path) from None
    if kind == "ndjson":
        lines = data.decode("utf-8-sig").splitlines()
        records = [(i + 1, json.loads(s)) for i, s in enumerate(lines) if s.strip()]
        where = "line"
    else:
        doc = json.loads(data.decode("utf-8-sig"))
        records = list(enumerate(doc if isinstance(doc, list) else [doc]))
        where = "row"
    for c in suspects:
        first: dict[bool, int] = {}
        for at, rec in records:
            value = rec.get(c) if isinstance(rec, dict) else None
            if value is not None:
                first.setdefault(isinstance(value, list | dict), at)
            if len(first) == 2:
                raise InputError(
                    f"{c} holds a list or object at {where} {first[True]} and a single value "
                    f"at {where} {first[False]}; polars reads such a column as text (a list as "
                    "its JSON spelling): give one kind per column (a single value as a list "
                    "of one)", source=path, column=c, **{where: at})


STDIN = "-"
"""The input name of standard input."""
_STREAM_FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
                   ".parquet": "parquet", ".parq": "parquet", ".pq": "parquet", ".txt": "trec",
                   ".trec": "trec", ".run": "trec", ".qrels": "trec"}


def read_once(spec: object) -> io.BytesIO | None:
    """The whole content of an input that can be read only once (``-`` for standard input, a
    FIFO, a character device), as an in-memory file named after it; None for anything
    else (regular files, directories, globs, tables), which are read where they are.

    The readers take the result like an open file: the format is sniffed from the first
    bytes unless :func:`stream_format` finds it in the name.

    Examples
    --------
    >>> import os, tempfile, threading
    >>> fifo = os.path.join(tempfile.mkdtemp(), "run.txt")
    >>> os.mkfifo(fifo)
    >>> t = threading.Thread(target=lambda: open(fifo, "w").write("q1 Q0 d1 1 2.0 r\\n"))
    >>> t.start(); data = read_once(fifo); t.join()
    >>> os.path.basename(data.name), data.read()
    ('run.txt', b'q1 Q0 d1 1 2.0 r\\n')
    >>> read_once(__file__) is None
    True
    """
    import sys

    if not isinstance(spec, str | os.PathLike):
        return None
    text = os.fspath(spec)
    if text == STDIN:
        if sys.stdin is None or sys.stdin.closed:
            raise InputError("standard input is closed; expected a table on it", source="-")
        stdin = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
        content = stdin.read()
        data = io.BytesIO(content.encode() if isinstance(content, str) else content)
        data.name = "<stdin>"  # type: ignore[attr-defined]
        return data
    try:
        mode = os.stat(text).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    try:
        with open(text, "rb") as fh:
            data = io.BytesIO(fh.read())
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", source=text) from None
    data.name = text  # type: ignore[attr-defined]
    return data


def stream_format(name: str) -> str | None:
    """The format an input's name gives by its suffix (``.gz`` looked through), else None
    (the readers then look at the first bytes).

    Examples
    --------
    >>> stream_format("/dev/fd/63"), stream_format("runs.csv.gz")
    (None, 'csv')
    """
    lower = name.lower()
    if lower.endswith(".gz"):
        lower = lower[:-3]
    return _STREAM_FORMATS.get(Path(lower).suffix)
