"""Whole tables from files named on a command line (the ``sas`` and ``judge`` inputs):
the format from the name, FIFOs and devices read once, read errors as :class:`InputError`."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import Any

from fasteval.errors import InputError

_KINDS = {".parquet": "parquet", ".pq": "parquet", ".jsonl": "ndjson", ".ndjson": "ndjson",
          ".json": "json", ".tsv": "tsv", ".tab": "tsv", ".csv": "csv"}


def read_table_file(path: str, *, text: bool = False, default: str | None = "csv") -> Any:
    """A polars DataFrame of the table file ``path``.

    Parameters
    ----------
    path : str
        A parquet, JSON lines, JSON, TSV or CSV file, by its suffix (the text formats
        also gzip-compressed, ``.tsv.gz``). A FIFO (``<(cmd)``) or a device is read once, whole.
    text : bool
        Read CSV/TSV columns as text (no type inference).
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

    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except OSError:
        from fasteval.io._common import missing_path

        raise missing_path(os.fspath(path)) from None
    if stat.S_ISDIR(mode):
        raise InputError("is a directory; expected a table file", source=path)
    name = p.name.lower()
    gz = name.endswith(".gz")
    suffix = Path(name[:-3] if gz else name).suffix
    kind = _KINDS.get(suffix, default)
    if kind is None:
        raise InputError(f"unknown table format {suffix or p.suffix.lower()!r}; use .parquet, "
                         ".jsonl, .ndjson, .json, .tsv or .csv (the text formats also + .gz)",
                         source=path)
    if gz and kind == "parquet":
        raise InputError("a gzip-compressed parquet file is not read (parquet compresses its "
                         "own columns); decompress it first", source=path)
    source: Any = p
    # a file whose name polars would expand as a pattern ([, *, ?) is read as bytes too
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or gz or any(c in p.name for c in "*?["):
        source = io.BytesIO(p.read_bytes())
    if gz:
        import gzip

        try:
            source = io.BytesIO(gzip.decompress(source.getvalue()))
        except (OSError, EOFError) as exc:
            raise InputError(f"corrupt gzip file ({exc})", source=path) from exc
    try:
        if kind == "parquet":
            return pl.read_parquet(source)
        if kind in ("ndjson", "json"):
            frame = pl.read_ndjson(source) if kind == "ndjson" else pl.read_json(source)
        else:
            options = {"infer_schema_length": 0} if text else {}
            return pl.read_csv(source, separator="\t" if kind == "tsv" else ",", **options)
    except Exception as exc:  # noqa: BLE001 - polars raises several types for unreadable files
        raise InputError(f"cannot read the file ({exc})", source=path) from exc
    _check_json_kinds(frame, source, kind, path)
    return frame


def _check_json_kinds(frame: Any, source: Any, kind: str, path: str) -> None:
    """Refuse a JSON column that mixes lists or objects with other values: polars reads
    such a column as text, each list as its JSON spelling (a gold list ``["a", "b"]`` would
    be scored as that one string). Only a text column holding a value that starts with
    ``[`` or ``{`` is looked at in the file itself."""
    import gzip
    import json

    import polars as pl

    suspects = [c for c, dt in frame.schema.items() if dt == pl.String
                and frame.get_column(c).str.contains(r"^[\[{]").any()]
    if not suspects:
        return
    data = source.getvalue() if isinstance(source, io.BytesIO) else Path(source).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
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
