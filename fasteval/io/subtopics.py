"""Subtopic (intent) judgments for diversity evaluation: ``query_id, subtopic, doc_id, relevance``.

The TREC Web track's format is text with four whitespace-separated fields per line,
``qid subtopic docno judgment`` (the layout of TREC qrels, with the subtopic where qrels
have the iteration); tables (parquet, CSV/TSV with a header, JSON Lines, polars, pandas,
Arrow) give the four columns by name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from fasteval.errors import DataWarning, InputError, ParameterError
from fasteval.io import readers, tables
from fasteval.io._common import (
    Locator,
    check_duplicates_param,
    check_json_escapes,
    check_text_encoding,
    find_column,
    first_true,
    fix_line_endings,
    missing_path,
    normalize_ids,
    normalize_relevance,
    refuse_null_partitions,
    row_locator,
)

__all__ = ["read_subtopic_qrels", "SUBTOPIC_ALIASES", "SUBTOPIC_COLUMNS"]

#: Columns of a subtopic qrels table, in order.
SUBTOPIC_COLUMNS = ("query_id", "subtopic", "doc_id", "relevance")

#: Accepted spellings of the subtopic column (compared case-insensitively, first match wins);
#: ``iteration`` is where ir_measures keeps it.
SUBTOPIC_ALIASES = (
    "subtopic", "subtopic_id", "subtopicid", "subtopic-id", "intent", "intent_id", "aspect",
    "facet", "iteration", "iter",
)

_KEYS = ["query_id", "subtopic", "doc_id"]


def read_subtopic_qrels(
    source: Any,
    *,
    format: str | None = None,
    query_col: str | None = None,
    subtopic_col: str | None = None,
    doc_col: str | None = None,
    relevance_col: str | None = None,
    duplicates: str = "error",
) -> pl.DataFrame:
    """Read subtopic judgments into ``query_id``, ``subtopic``, ``doc_id``, ``relevance`` (Int64).

    Parameters
    ----------
    source
        A path (TREC Web-track text ``qid subtopic docno judgment``, optionally ``.gz``;
        parquet; CSV/TSV with a header; JSON Lines), a polars DataFrame/LazyFrame, a pandas
        DataFrame, a pyarrow Table, or a dict ``{query_id: {subtopic: {doc_id: relevance}}}``.
    format
        ``"trec"``, ``"parquet"``, ``"csv"``, ``"tsv"`` or ``"jsonl"``; default from the name,
        else sniffed (as :func:`fasteval.read_qrels`).
    query_col, subtopic_col, doc_col, relevance_col
        Column names for tables; default the canonical names or an alias (the subtopic:
        ``subtopic_id``, ``intent``, ``aspect``, ``facet``, ``iteration``, ``iter``; the
        others as :func:`fasteval.read_qrels`).
    duplicates
        ``"error"`` (default) raises on a repeated (query, subtopic, doc) triple, naming its
        line or row; ``"keep_best"`` keeps the highest judgment of each; ``"ignore"``.

    Returns
    -------
    polars.DataFrame
        Ids as in the input (text from TREC files; integer or text columns as they are).

    Raises
    ------
    fasteval.errors.InputError
        A missing or empty file, a line without exactly four fields, a non-integer
        judgment, null ids, missing columns or duplicates; the message names the file, line
        or row, and column.

    Examples
    --------
    >>> import io
    >>> read_subtopic_qrels(io.BytesIO(b"1 1 d1 1\\n1 2 d1 0\\n1 2 d2 1\\n")).rows()
    [('1', '1', 'd1', 1), ('1', '2', 'd1', 0), ('1', '2', 'd2', 1)]
    >>> read_subtopic_qrels({"q1": {"a": {"d1": 1}, "b": {"d1": 1, "d2": 1}}}).height
    3
    """
    check_duplicates_param(duplicates)
    explicit = {"query_id": query_col, "subtopic": subtopic_col, "doc_id": doc_col,
                "relevance": relevance_col}
    fmt, name, data = _open(source, format)
    if fmt == "trec":
        if any(v is not None for v in explicit.values()):
            raise ParameterError("*_col", "unset for TREC text (its columns are fixed)",
                                 sorted(k for k, v in explicit.items() if v is not None))
        df, where = _parse_text(data, name)
    else:
        frame = data if fmt == "frame" else _read_table(data, fmt, name)
        where = raw = None
        if fmt in ("csv", "tsv"):  # errors name the file's line, as read_qrels names it
            raw = (fix_line_endings(data, name), "," if fmt == "csv" else "\t")
            where = tables.csv_line_locator(raw[0])
        elif fmt == "jsonl":
            raw = (data if isinstance(data, bytes) else Path(data).read_bytes(), "jsonl")
            where = tables.jsonl_line_locator(raw[0])
        df, where = _normalize(frame, explicit, name, where, raw)
    return _duplicates(df, duplicates, name, where)


def _open(source: Any, format: str | None) -> tuple[str, str, Any]:
    """``(format, display name, data)``: data is bytes for text formats, a path for parquet,
    a polars frame for in-memory tables (format ``"frame"``)."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise missing_path(path)
        if readers.read_once_only(path):  # a FIFO or device: sniffing would consume it
            content, fmt, _ = readers._read_device(path, "qrels", format)
            return fmt, path, content
        fmt = readers.detect_format(path, format)
        if fmt == "parquet":
            return fmt, path, path
        data = readers.load_bytes(path, path)
        return fmt, path, Path(data).read_bytes() if isinstance(data, str) else data
    if hasattr(source, "read") and callable(source.read):
        content, fmt, name = readers._read_stream(source, "qrels", format)
        return fmt, name, content
    name = "subtopic qrels"
    frame = tables.frame_from_object(source, name)
    if frame is None and isinstance(source, Mapping):
        frame = _dict_to_frame(source, name)
    if frame is None:
        raise ParameterError(
            "source", "a path, a polars/pandas DataFrame, a polars LazyFrame, a pyarrow Table or "
            "a dict {query_id: {subtopic: {doc_id: relevance}}}", type(source).__name__)
    if isinstance(frame, pl.LazyFrame):
        frame = frame.collect()
    return "frame", name, frame


def _dict_to_frame(obj: Mapping, name: str) -> pl.DataFrame:
    rows: list[tuple[Any, Any, Any, Any]] = []
    for q, subs in obj.items():
        if not isinstance(subs, Mapping):
            raise InputError(f"query {q!r}: expected {{subtopic: {{doc_id: relevance}}}}", source=name)
        for st, docs in subs.items():
            if not isinstance(docs, Mapping):
                raise InputError(f"query {q!r}, subtopic {st!r}: expected {{doc_id: relevance}}",
                                 source=name)
            rows.extend((q, st, d, r) for d, r in docs.items())
    if not rows:
        raise InputError("the subtopic qrels are empty (no judgments)", source=name)
    cols = list(zip(*rows, strict=True))
    return pl.DataFrame({c: pl.Series(c, list(v), strict=False) for c, v in zip(SUBTOPIC_COLUMNS, cols, strict=True)})


def _read_table(data: Any, fmt: str, name: str) -> pl.DataFrame:
    if fmt in ("csv", "tsv", "jsonl"):
        check_text_encoding(data, name)
        if fmt == "jsonl" and isinstance(data, bytes):
            data = data.removeprefix(b"\xef\xbb\xbf")  # polars' reader stops at the mark
        if fmt == "jsonl":  # polars reads a lone surrogate escape as "\x00"
            check_json_escapes(data, name, lines=True)
    try:
        if fmt == "parquet":  # a file is no pattern; hive folders (subtopic=01/) are text
            hive = dict.fromkeys(tables._hive_keys(data), pl.String) if os.path.isdir(data) else {}
            refuse_null_partitions(data, list(hive))  # Spark's null folders: no subtopic of that name
            return pl.read_parquet(data, glob=not os.path.isfile(data), hive_schema=hive or None)
        if fmt in ("csv", "tsv"):
            return _read_delimited(fix_line_endings(data, name), "," if fmt == "csv" else "\t", name)
        if fmt == "jsonl":
            return pl.read_ndjson(data)
    except pl.exceptions.PolarsError as exc:
        if fmt == "jsonl":  # nested too deep: named by its line
            from fasteval.io._json import check_input

            check_input(data, name, lines=True)
        raise InputError(f"cannot read as {fmt} ({str(exc).splitlines()[0]})", source=name) from exc
    raise ParameterError("format", "'trec', 'parquet', 'csv', 'tsv' or 'jsonl' for subtopic qrels", fmt)


def _read_delimited(data: bytes, sep: str, name: str) -> pl.DataFrame:
    """A CSV/TSV table, every column as text, as :func:`fasteval.read_qrels` reads one: the
    empty lines that end the file are no rows, a record with more fields than the header is
    refused with its line."""
    width = len(pl.read_csv(data, separator=sep, n_rows=0, infer_schema=False).columns)
    try:
        frame = pl.read_csv(data, separator=sep, infer_schema_length=0)
    except pl.exceptions.PolarsError as exc:
        ragged = tables.ragged_record(data, sep, width)
        if ragged is None:
            raise
        line, found = ragged
        raise InputError(f"{found} fields where the header has {width}; expected one field per "
                         "header column", source=name, line=line) from exc
    blank = tables._trailing_blank_lines(data)
    if blank and frame.height >= blank and all(frame.tail(blank).select(pl.all().is_null().all()).row(0)):
        frame = frame.head(frame.height - blank)  # polars reads each as a row of nulls
    return frame


def _normalize(frame: pl.DataFrame, explicit: dict[str, str | None], name: str,
               where: Locator | None = None,
               raw: tuple[bytes, str] | None = None) -> tuple[pl.DataFrame, Locator]:
    """The four columns, checked; ``raw``: a CSV/TSV file's text and separator, whose
    header may not name a column that is read twice, or a JSON Lines file's text and
    ``"jsonl"``, whose records may neither repeat a key read nor mix kinds of values under
    it (:func:`fasteval.io.tables.check_jsonl_values`)."""
    if frame.height == 0:
        raise InputError("the subtopic qrels table is empty (no rows)", source=name)
    columns = frame.columns
    taken = {v for v in explicit.values() if v is not None}
    sub = explicit["subtopic"]
    if sub is None:
        lower = {c.lower(): c for c in reversed([c for c in columns if c not in taken])}
        sub = next((lower[a] for a in SUBTOPIC_ALIASES if a in lower), None)
        if sub is None:
            raise InputError(
                f"no subtopic column; expected one of {list(SUBTOPIC_ALIASES)} (or pass "
                f"subtopic_col=...); the columns are {columns}", source=name, column="subtopic")
    elif sub not in columns:
        raise InputError(f"column {sub!r} (given for subtopic) not found; the columns are {columns}",
                         source=name, column=sub)
    taken.add(sub)
    mapping = {"subtopic": sub}
    for canonical in ("query_id", "doc_id", "relevance"):
        col = find_column(columns, canonical, explicit[canonical], source=name, required=True,
                          taken=frozenset(taken - {explicit[canonical]}))
        mapping[canonical] = str(col)  # required=True: never None
        taken.add(str(col))
    if raw is not None and raw[1] == "jsonl":
        tables.check_jsonl_values(raw[0], frame, set(mapping.values()), name)
    elif raw is not None:
        tables._check_header(raw[0], raw[1], columns, mapping, name)
    where = where or row_locator()
    rel = frame.get_column(mapping["relevance"])
    if rel.dtype == pl.String:
        rel = rel.str.strip_chars()
    out = pl.DataFrame([
        *(normalize_ids(frame.get_column(mapping[c]), c, source=name, where=where) for c in _KEYS),
        normalize_relevance(rel, source=name, where=where),
    ])
    return out, where


def _parse_text(data: bytes, name: str) -> tuple[pl.DataFrame, Locator]:
    check_text_encoding(data, name)
    data = fix_line_endings(data, name)
    try:
        # a UTF-8 byte order mark is no part of the first query id
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else str(data)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text ({exc.reason})", source=name, line=line) from exc
    ascii_ws = " \t\r\x0b\x0c"  # C-locale isspace, as read_qrels splits TREC text
    lines = pl.Series("line", text.split("\n")).str.strip_chars(ascii_ws)
    keep = (lines != "") & ~lines.str.starts_with("#")
    numbers = pl.Series("n", range(1, len(lines) + 1))
    kept = lines.filter(keep)
    line_of = numbers.filter(keep)
    if kept.len() == 0:
        raise InputError("no subtopic qrels lines (the file is empty or holds only comments)", source=name)

    def where(i: int) -> dict:
        return {"line": int(line_of[i])}

    fields = kept.str.extract_all(r"[^ \t\r\x0b\x0c]+")  # a no-break space is part of an id
    bad = fields.list.len() != 4
    if bad.any():
        i = first_true(bad)
        raise InputError(
            f"expected exactly 4 whitespace-separated fields (qid subtopic docno judgment), got "
            f"{int(fields.list.len()[i])}", source=name, **where(i))
    out = pl.DataFrame([
        fields.list.get(0).rename("query_id"),
        fields.list.get(1).rename("subtopic"),
        fields.list.get(2).rename("doc_id"),
        normalize_relevance(fields.list.get(3), source=name, where=where),
    ])
    return out, where


def _duplicates(df: pl.DataFrame, duplicates: str, name: str, where: Locator) -> pl.DataFrame:
    if duplicates == "ignore" or df.height < 2:
        return df
    dup = df.select(_KEYS).is_duplicated()
    if not dup.any():
        return df
    if duplicates == "error":
        i = first_true(~df.select(pl.struct(_KEYS).is_first_distinct()).to_series())
        q, s, d = (df.get_column(c)[i] for c in _KEYS)
        raise InputError(
            f"duplicate (query_id, subtopic, doc_id) triple ({q!r}, {s!r}, {d!r}); pass "
            "duplicates='keep_best' to keep the highest judgment", source=name, **where(i))
    import warnings

    kept = (df.with_row_index("__row").sort(["relevance", "__row"], descending=[True, False])
            .unique(subset=_KEYS, keep="first").sort("__row").drop("__row"))
    warnings.warn(DataWarning(f"{name}: dropped {df.height - kept.height} duplicate (query_id, "
                              "subtopic, doc_id) row(s), keeping the highest relevance of each"),
                  stacklevel=3)
    return kept
