"""Public readers: ``read_qrels``, ``read_run`` (eager) and ``scan_qrels``, ``scan_run`` (lazy).

Output tables (see DEVELOPING.md):

* qrels: ``query_id``, ``doc_id``, ``relevance`` (Int64).
* run: ``query_id``, ``doc_id``, ``score`` (Float64), and when present ``rank``
  (Int64), ``run_id`` (Utf8), ``tag`` (Utf8; TREC text runs always have it).

Ids are Int64 when the input holds integers (typed tables, dict keys) and Utf8
otherwise; text formats without types (TREC, CSV/TSV) always give Utf8, which
keeps trec_eval's ``strcmp`` order and ids such as ``"007"`` intact.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from fasteval.errors import InputError, ParameterError
from fasteval.io import _json, tables, trec
from fasteval.io._common import (
    ALIASES,
    Kind,
    Locator,
    check_duplicates_param,
    check_text_encoding,
    first_true,
    fix_line_endings,
    globbed_name,
    handle_duplicates,
    missing_path,
    normalize_table,
    resolve_columns,
    row_locator,
    undecodable_name,
)
from fasteval.io.inflate import inflate_bytes, inflated

__all__ = ["read_qrels", "read_run", "scan_qrels", "scan_run", "detect_format", "format_from_name", "FORMATS"]

#: Formats understood by ``format=`` (``ndjson`` is an alias of ``jsonl``).
FORMATS = ("trec", "parquet", "csv", "tsv", "jsonl", "json")
_ALIASES = {"ndjson": "jsonl", "txt": "trec", "text": "trec", "pq": "parquet"}
_SUFFIX = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".trec": "trec",
    ".txt": "trec",
    ".run": "trec",
    ".qrels": "trec",
    ".test": "trec",
    ".res": "trec",
}
_UNSUPPORTED = {".lz4": "ranx's LZ4 run format", ".pkl": "pickle", ".pickle": "pickle", ".zip": "zip archives"}
_GLOB_CHARS = set("*?[")

Source = Any


def is_path(source: Source) -> bool:
    return isinstance(source, (str, os.PathLike))


def read_once_only(path: str) -> bool:
    """Whether ``path`` is a FIFO or a character device (``<(cmd)``, ``/dev/stdin``): its
    content can be read only once, so it is read whole into memory first."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def _has_glob(path: str) -> bool:
    return any(c in _GLOB_CHARS for c in path)


def _normalize_format(format: str | None) -> str | None:
    if format is None:
        return None
    f = _ALIASES.get(format.lower(), format.lower())
    if f not in FORMATS:
        raise ParameterError("format", f"one of {FORMATS} (or 'ndjson')", format)
    return f


def detect_format(path: str | os.PathLike[str], format: str | None = None) -> str:
    """Format of a file from ``format=``, its name, or (for unknown names) its first bytes.

    Names ending in ``.gz`` are judged by the name inside. Unknown names (``qrels.123``,
    ``results.trunc``) are TREC text unless they start like parquet or JSON.

    Examples
    --------
    >>> detect_format("runs/bm25.run.gz"), detect_format("x.parquet"), detect_format("q", "ndjson")
    ('trec', 'parquet', 'jsonl')
    """
    fmt = _normalize_format(format)
    if fmt is not None:
        return fmt
    p = Path(path)
    if p.is_dir():
        return "parquet"
    name = p.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    suffix = Path(name).suffix
    if suffix in _UNSUPPORTED:
        raise InputError(
            f"{_UNSUPPORTED[suffix]} is not supported; convert to TREC text, parquet, CSV or JSON",
            source=str(path),
        )
    if suffix in _SUFFIX:
        return _SUFFIX[suffix]
    if _has_glob(str(path)) and not p.exists():  # a pattern (a file named so is sniffed)
        return "parquet"
    return _sniff(p)


def format_from_name(path: str | os.PathLike[str]) -> str | None:
    """Format of a file judged by its name alone (``.gz`` looked through); None when the
    name does not say (an unknown or missing suffix) or names an unsupported format.

    Examples
    --------
    >>> format_from_name("runs/bm25.txt.gz"), format_from_name("README.md")
    ('trec', None)
    """
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return _SUFFIX.get(Path(name).suffix)


def _sniff(p: Path) -> str:
    try:
        with open(p, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return "trec"
    if head[:2] == b"\x1f\x8b":
        try:
            with gzip.open(p, "rb") as fh:
                head = fh.read(1 << 16)
        except (OSError, EOFError):
            return "trec"
    return _sniff_bytes(head)


def _sniff_bytes(head: bytes) -> str:
    """Format from the first bytes: parquet magic, JSON document / JSON Lines, CSV/TSV with
    a header naming a query and a document column (as the readers find them), else TREC
    text.

    Examples
    --------
    >>> _sniff_bytes(b"qid\\tdocno\\tscore\\nq1\\td1\\t2.5\\n"), _sniff_bytes(b"q1\\tQ0\\td1\\t1\\t2.5\\tr\\n")
    ('tsv', 'trec')
    """
    if head[:4] == b"PAR1":
        return "parquet"
    delimited = _delimited_header(head)
    if delimited is not None:
        return delimited
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()  # a UTF-8 byte order mark opens no TREC line
    if text[:1] == b"[":
        return "json"
    if text[:1] == b"{":
        first = text.split(b"\n", 1)[0]
        try:
            obj = _json.loads(first)  # (one nested too deep is read as JSON, and refused there)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return "json"
        if isinstance(obj, dict) and not any(isinstance(v, (dict, list)) for v in obj.values()):
            return "jsonl"
        return "json"
    return "trec"


def _delimited_header(head: bytes) -> str | None:
    """``"tsv"`` or ``"csv"`` when the first line is a header of tab- or comma-separated
    column names among which the readers find a query and a document column; else None (a
    TREC line, even tab-separated, names no such column: its first field is a query id)."""
    first = head.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0].rstrip(b"\r")
    for sep, fmt in ((b"\t", "tsv"), (b",", "csv")):
        if sep not in first:
            continue
        names = {f.strip().strip(b'"').decode("utf-8", "replace").lower() for f in first.split(sep)}
        if all(any(a in names for a in ALIASES[c]) for c in ("query_id", "doc_id")):
            return fmt
    return None


def load_bytes(path: str, source: str) -> bytes | str:
    """Path for plain files; decompressed bytes for gzip files (inflated as a stream and
    checked as it comes: :func:`fasteval.io.inflate.inflate_bytes`)."""
    if _gzip_magic(path, source):
        return inflate_bytes(path, source)
    return path


def _gzip_magic(path: str, source: str) -> bool:
    """Whether the file ``path`` starts with gzip's magic number; a folder or a file that
    cannot be opened is an error naming ``source``."""
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except IsADirectoryError as exc:
        raise InputError("is a directory, expected a file", source=source) from exc
    except OSError as exc:
        raise InputError(f"cannot open ({exc.strerror})", source=source) from exc


def _head_check(fmt: str, kind: Kind, explicit: dict[str, str | None], name: str) -> Any:
    """The reader's checks on the first complete lines of a compressed file (see
    :func:`fasteval.io.inflate.blocks`): an error those lines hold (one that names its
    line) is the file's error, raised before the rest is inflated; any other (a table too
    short to tell) waits for the whole file. None for a JSON document (no lines)."""
    if fmt == "json":
        return None

    def check(head: bytes) -> None:
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # said once, when the whole file is read
                _load_data(head, fmt, kind, explicit, name)
        except InputError as exc:
            if exc.line is not None:
                raise
        except Exception:  # noqa: BLE001 - a head too short to tell: the whole file will
            pass
    return check


def _is_gzip(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def _check_exists(path: str) -> None:
    if not path:
        raise InputError("the path is empty; expected a file")
    if not _has_glob(path) and not os.path.exists(path):
        raise missing_path(path)


def _explicit(kind: Kind, **cols: str | None) -> dict[str, str | None]:
    names = {
        "query_col": "query_id",
        "doc_col": "doc_id",
        "relevance_col": "relevance",
        "score_col": "score",
        "rank_col": "rank",
        "run_id_col": "run_id",
    }
    return {names[k]: v for k, v in cols.items() if v is not None}


def _in_memory_name(kind: Kind, obj: Any) -> str:
    return f"{kind} ({type(obj).__module__.split('.')[0]}.{type(obj).__name__})"


def _from_ranx(obj: Any) -> Mapping | None:
    if type(obj).__module__.split(".")[0] == "ranx" and hasattr(obj, "to_dict"):
        return obj.to_dict()
    return None


def _read_stream(stream: Any, kind: Kind, format: str | None) -> tuple[bytes, str, str]:
    """Content, format and display name of an open file object (``sys.stdin``, ``io.BytesIO``...)."""
    name = getattr(stream, "name", None)
    name = name if isinstance(name, str) else f"{kind} (stream)"
    content = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
    if isinstance(content, str):  # a lone surrogate stays bytes that the UTF-8 checks name
        content = content.encode("utf-8", "surrogatepass")
    if content[:2] == b"\x1f\x8b":  # inflated as a stream, checked as it comes
        content = inflate_bytes(content, name, lines=_normalize_format(format) != "json")
    fmt = _normalize_format(format) or _sniff_bytes(content[: 1 << 16])
    return content, fmt, name


def _read_device(path: str, kind: Kind, format: str | None) -> tuple[bytes, str, str]:
    """:func:`_read_stream` of a FIFO or device, read whole once, named by its path."""
    stream = io.BytesIO(Path(path).read_bytes())
    stream.name = path  # type: ignore[attr-defined]
    return _read_stream(stream, kind, format or format_from_name(path))


def _load_data(
    data: str | bytes, fmt: str, kind: Kind, explicit: dict[str, str | None], name: str
) -> tuple[pl.DataFrame, Locator, str]:
    """Read a file (path, or its bytes) of a known format."""
    if fmt in ("trec", "csv", "tsv", "jsonl"):  # json.loads reads UTF-16 and UTF-32 itself
        check_text_encoding(data, name)
        data = fix_line_endings(data, name)
    if fmt == "trec":
        if explicit:
            raise ParameterError("*_col", "unset for TREC text (its columns are fixed)", sorted(explicit))
        df, where = trec.read_trec(data, kind, source=name)
        return df, where, name
    if fmt == "parquet":
        raw, mapping = tables.read_parquet(data, kind, explicit, name)
    elif fmt in ("csv", "tsv"):
        raw, mapping = tables.read_delimited(data, "," if fmt == "csv" else "\t", kind, explicit, name)
    elif fmt == "jsonl":
        raw, mapping = tables.read_ndjson(data, kind, explicit, name)
    else:
        blob = data if isinstance(data, bytes) else Path(data).read_bytes()
        raw, mapping = tables.read_json(blob, kind, explicit, name)
    score = mapping.get("score") if kind == "run" and fmt in ("jsonl", "json") else None
    if score in raw.columns and raw.schema[score].is_integer():
        # a JSON number is text, read as a double as trec_eval's atof reads a score (CSV/TSV
        # scores are read as floats already); typed integer columns (parquet, tables) are checked
        raw = raw.with_columns(pl.col(score).cast(pl.Float64))
    if fmt in ("csv", "tsv"):
        where = tables.csv_line_locator(data)
    elif fmt == "jsonl":
        where = tables.jsonl_line_locator(data)
    else:
        where = row_locator()
    df = normalize_table(raw, kind, mapping, source=name, where=where)
    if fmt in ("csv", "tsv"):
        _check_one_line_fields(df, name, where)
    return df, where, name


def _check_one_line_fields(df: pl.DataFrame, source: str, where: Locator) -> None:
    """Refuse a CSV/TSV text field (id, run_id, tag) that holds a line break.

    A quote that opens a field and is closed on a later line makes the lines between one
    record: the reader would score one row where the file has several. No id or tag holds
    a line break, so the row is an error naming the line where the quote opens.

    Examples
    --------
    >>> df = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1\\tx\\nq1\\td2"], "score": [1.0]})
    >>> _check_one_line_fields(df, "run.tsv", lambda i: {"line": i + 2})
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: run.tsv, line 2, column 'doc_id': doc_id holds a line break: a quote (") opening the field is closed on a later line, which merges lines into one row (a quote inside a field is written twice within quotes: "a""b")
    """
    for col in ("query_id", "doc_id", "run_id", "tag"):
        if col not in df.columns or df.schema[col] != pl.String:
            continue
        broken = df.get_column(col).str.contains(r"[\r\n]")
        if broken.any():
            raise InputError(
                f"{col} holds a line break: a quote (\") opening the field is closed on a later "
                'line, which merges lines into one row (a quote inside a field is written twice '
                'within quotes: "a""b")',
                source=source, column=col, **where(first_true(broken)),
            )


def _lazy_one_line_fields(lf: pl.LazyFrame, source: str) -> pl.LazyFrame:
    """:func:`_check_one_line_fields` at ``collect()`` (without the line: see ``read_*``)."""
    schema = lf.collect_schema()

    def check(col: str):
        def one_line(s: pl.Series) -> pl.Series:
            _check_one_line_fields(s.rename(col).to_frame(), source, lambda i: {})
            return s
        return one_line

    return lf.with_columns(pl.col(c).map_batches(check(c), return_dtype=pl.String)
                           for c in ("query_id", "doc_id", "run_id", "tag")
                           if c in schema and schema[c] == pl.String)


def load_source(source: Source, kind: Kind, format: str | None, explicit: dict[str, str | None]) -> tuple[pl.DataFrame, Locator, str]:
    """Read and validate any supported source; returns (table, row locator, source name)."""
    if is_path(source):
        path = os.fspath(source)
        _check_exists(path)
        if read_once_only(path):  # a FIFO or device: sniffing would consume what it reads
            content, fmt, name = _read_device(path, kind, format)
            return _load_data(content, fmt, kind, explicit, name)
        fmt = detect_format(path, format)
        if fmt != "parquet" and _gzip_magic(path, path):  # inflated as a stream, checked as it
            with inflated(path, path, lines=fmt != "json",  # comes; a huge one to a file
                          head=_head_check(fmt, kind, explicit, path)) as data:
                return _load_data(data, fmt, kind, explicit, path)
        data = path
        if isinstance(data, str) and ((fmt != "parquet" and globbed_name(data))
                                      or undecodable_name(data)):
            # polars would take its name for a pattern, or cannot open a name that is no UTF-8
            data = Path(data).read_bytes()
        return _load_data(data, fmt, kind, explicit, path)
    if hasattr(source, "read") and callable(source.read):
        content, fmt, name = _read_stream(source, kind, format)
        return _load_data(content, fmt, kind, explicit, name)

    name = _in_memory_name(kind, source)
    ranx = _from_ranx(source)
    if ranx is not None:
        source = ranx
    frame = tables.frame_from_object(source, name)
    if frame is None and isinstance(source, Mapping):
        frame = tables.dict_to_frame(source, kind, name)
    if frame is None:
        raise ParameterError(
            "source",
            "a path, a polars/pandas DataFrame, a polars LazyFrame, a pyarrow Table/RecordBatch "
            "or a dict {query_id: {doc_id: value}}",
            type(source).__name__,
        )
    if isinstance(frame, pl.LazyFrame):
        columns = frame.collect_schema().names()
        mapping = resolve_columns(columns, kind, explicit, source=name)
        frame = frame.select(list(dict.fromkeys(mapping.values()))).collect()
    else:
        mapping = resolve_columns(frame.columns, kind, explicit, source=name)
    where = row_locator()
    return normalize_table(frame, kind, mapping, source=name, where=where), where, name


def _read(source: Source, kind: Kind, format: str | None, duplicates: str, **cols: str | None) -> pl.DataFrame:
    check_duplicates_param(duplicates)
    df, where, name = load_source(source, kind, format, _explicit(kind, **cols))
    return handle_duplicates(df, kind, duplicates, source=name, where=where)


def read_qrels(
    source: Source,
    *,
    format: str | None = None,
    query_col: str | None = None,
    doc_col: str | None = None,
    relevance_col: str | None = None,
    duplicates: str = "error",
) -> pl.DataFrame:
    """Read relevance judgments into ``query_id``, ``doc_id``, ``relevance`` (Int64).

    Parameters
    ----------
    source
        A path (TREC text ``qid iter docno rel``, optionally ``.gz``; parquet file,
        glob or directory; CSV/TSV with a header; JSON Lines; JSON ``{qid: {docid: rel}}``
        or a list of records), an open file object (``sys.stdin``, ``io.BytesIO``; format
        from ``format=`` or sniffed), a polars DataFrame/LazyFrame, a pandas DataFrame,
        a pyarrow Table/RecordBatch, or a dict ``{query_id: {doc_id: relevance}}``.
    format
        ``"trec"``, ``"parquet"``, ``"csv"``, ``"tsv"``, ``"jsonl"`` (``"ndjson"``) or
        ``"json"``. Default: from the file name (``.gz`` looked through), else sniffed;
        names such as ``qrels.test`` or ``qrels.123`` are TREC text.
    query_col, doc_col, relevance_col
        Column names for tables. Default: the canonical names or an alias
        (``qid``/``query``/``topic``; ``docno``/``docid``/``doc``/``pid``;
        ``rel``/``label``/``grade``/``judgment``, or ``score`` as ranx writes it).
    duplicates
        ``"error"`` (default, as trec_eval) raises on a repeated (query, doc) pair
        naming its line/row; ``"keep_best"`` keeps the highest grade of each pair
        and warns (:class:`fasteval.errors.DataWarning`) with the number dropped;
        ``"ignore"`` skips the check.

    Returns
    -------
    polars.DataFrame

    Raises
    ------
    fasteval.errors.InputError
        Missing/empty/corrupt file, wrong field count, non-integer relevance,
        null ids, missing columns, duplicates; the message names the file, the
        line (text) or row (tables) and the column.

    Examples
    --------
    >>> read_qrels({"q1": {"d1": 2, "d2": 0}}).rows()
    [('q1', 'd1', 2), ('q1', 'd2', 0)]
    >>> import polars as pl
    >>> read_qrels(pl.DataFrame({"qid": [1, 1], "docno": [7, 8], "label": [1, 0]})).dtypes
    [Int64, Int64, Int64]
    """
    return _read(
        source, "qrels", format, duplicates,
        query_col=query_col, doc_col=doc_col, relevance_col=relevance_col,
    )


def read_run(
    source: Source,
    *,
    format: str | None = None,
    query_col: str | None = None,
    doc_col: str | None = None,
    score_col: str | None = None,
    rank_col: str | None = None,
    run_id_col: str | None = None,
    duplicates: str = "error",
) -> pl.DataFrame:
    """Read a ranked run into ``query_id``, ``doc_id``, ``score`` (Float64) [+ ``rank``, ``run_id``, ``tag``].

    TREC text (``qid iter docno rank score tag [ignored...]``) gives ``tag`` (the
    6th field; trec_eval reports the last line's tag as ``runid``) and ``rank``
    when every rank is an integer. Tables keep ``rank``, ``run_id`` and ``tag``
    columns when present.

    Parameters
    ----------
    source
        As for :func:`read_qrels`, with scores in place of grades.
    format
        See :func:`read_qrels`.
    query_col, doc_col, score_col, rank_col, run_id_col
        Column names for tables (aliases: ``sim``/``similarity`` for the score;
        ``run``/``runid``/``system`` for the run id).
    duplicates
        ``"error"`` (default), ``"keep_best"`` (keep the highest-scored row of each
        pair, warn with the count) or ``"ignore"``. With a ``run_id`` column,
        pairs are counted per run.

    Returns
    -------
    polars.DataFrame

    Examples
    --------
    >>> read_run({"q1": {"d1": 0.5, "d2": 1.5}}).rows()
    [('q1', 'd1', 0.5), ('q1', 'd2', 1.5)]
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "bm25.run")
    >>> _ = open(p, "w").write("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.0 bm25\\n")
    >>> read_run(p).columns
    ['query_id', 'doc_id', 'score', 'rank', 'tag']
    """
    return _read(
        source, "run", format, duplicates,
        query_col=query_col, doc_col=doc_col, score_col=score_col, rank_col=rank_col, run_id_col=run_id_col,
    )


def _lazy_integer(schema: pl.Schema, column: str, name: str, source: str) -> pl.Expr:
    """``column`` as Int64 when collected. A cast would truncate floats and decimals
    (relevance 1.5 read as 1): their values are checked, per batch, as the eager readers
    check them (whole numbers pass); text is read as the eager readers read it."""
    e = pl.col(column)
    dt = schema[column]
    if dt.is_float() or dt.is_decimal():
        def check(s: pl.Series, **_: object) -> pl.Series:  # polars may pass return_dtype=
            bad = s.is_not_null() & (s != s.floor())
            if dt.is_float():
                bad = bad | s.is_nan() | s.is_infinite()
            if bad.any():
                raise InputError(f"{name} must be an integer, got {s[first_true(bad)]!r}",
                                 source=source, column=column)
            return s.cast(pl.Int64)

        return e.map_batches(check, return_dtype=pl.Int64).alias(name)
    if dt == pl.String:  # text (CSV/TSV grades): "2.0" is 2, as read_* reads it; "1e1", "true" fail
        def parse(s: pl.Series, **_: object) -> pl.Series:
            out = s.str.replace(r"^([+-]?[0-9]+)\.0*$", "${1}").cast(pl.Int64, strict=False)
            bad = out.is_null() & s.is_not_null()
            if bad.any():
                raise InputError(f"{name} must be an integer, got {s[first_true(bad)]!r}",
                                 source=source, column=column)
            return out

        return e.map_batches(parse, return_dtype=pl.Int64).alias(name)
    return e.cast(pl.Int64).alias(name)


_FITS_INT64 = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32)
"""Integer types whose every value is an Int64."""


def _lazy_int64_ids(column: str, name: str, source: str) -> pl.Expr:
    """Integer ids of a wider type (UInt64 parquet, JSON Lines read as Int128) as Int64
    when collected; one outside the signed 64-bit range is an :class:`InputError` naming
    the file and column, as the eager readers' (a strict cast would fail naming neither)."""
    def check(s: pl.Series, **_: object) -> pl.Series:  # polars may pass return_dtype=
        bad = (s > 2**63 - 1) | (s < -(2**63)) if s.dtype.is_signed_integer() else s > 2**63 - 1
        if bad.any():
            raise InputError(f"{name} does not fit in a signed 64-bit integer: {s[first_true(bad)]} "
                             "(give such ids as text)", source=source, column=column)
        return s.cast(pl.Int64)

    return pl.col(column).map_batches(check, return_dtype=pl.Int64)


def _lazy_normalize(lf: pl.LazyFrame, kind: Kind, mapping: dict[str, str], source: str) -> pl.LazyFrame:
    schema = lf.collect_schema()
    exprs = []
    for c in ("query_id", "doc_id"):
        dt = schema[mapping[c]]
        e = pl.col(mapping[c])
        if dt.is_integer() and dt not in _FITS_INT64:
            e = _lazy_int64_ids(mapping[c], c, source)
        elif dt.is_integer():
            e = e.cast(pl.Int64)
        elif dt == pl.Categorical or isinstance(dt, pl.Enum):
            e = e.cast(pl.String)
        elif dt != pl.String:
            raise InputError(
                f"{c} must hold strings or integers, got {dt} (read_* converts more types)",
                source=source, column=mapping[c],
            )
        exprs.append(e.alias(c))
    if kind == "qrels":
        exprs.append(_lazy_integer(schema, mapping["relevance"], "relevance", source))
    else:
        exprs.append(pl.col(mapping["score"]).cast(pl.Float64).alias("score"))
        if "rank" in mapping:
            exprs.append(_lazy_integer(schema, mapping["rank"], "rank", source))
        for c in ("run_id", "tag"):
            if c in mapping:
                exprs.append(pl.col(mapping[c]).cast(pl.String).alias(c))
    return lf.select(exprs)


def _scan(source: Source, kind: Kind, format: str | None, **cols: str | None) -> pl.LazyFrame:
    explicit = _explicit(kind, **cols)
    if isinstance(source, pl.LazyFrame):
        name = _in_memory_name(kind, source)
        mapping = resolve_columns(source.collect_schema().names(), kind, explicit, source=name)
        return _lazy_normalize(source, kind, mapping, name)
    if is_path(source):
        path = os.fspath(source)
        _check_exists(path)
        if read_once_only(path):  # a FIFO or device: sniffing would consume what it reads
            content, fmt, name = _read_device(path, kind, format)
            return _load_data(content, fmt, kind, explicit, name)[0].lazy()
        fmt = detect_format(path, format)
        gz = os.path.isfile(path) and _is_gzip(path)
        if fmt == "parquet" and not undecodable_name(path):
            lf, mapping = tables.lazy_parquet(path, kind, explicit, path)
            return _lazy_normalize(lf, kind, mapping, path)
        if not gz and os.path.isfile(path) and fmt != "json":
            check_text_encoding(path, path)
        # gzip, CR-only line endings (converted on the way) and files whose names polars
        # would expand as a pattern are read eagerly below
        if not gz and not globbed_name(path) and not undecodable_name(path) and not (os.path.isfile(path) and isinstance(fix_line_endings(path, path), bytes)):
            if fmt == "trec" and not explicit:
                return trec.scan_trec(path, kind)
            if fmt in ("csv", "tsv"):
                lf, mapping = tables.lazy_delimited(path, "," if fmt == "csv" else "\t", kind, explicit, path)
                return _lazy_one_line_fields(_lazy_normalize(lf, kind, mapping, path), path)
            # polars' scanner stops at a UTF-8 byte order mark: such a file is read eagerly
            if fmt == "jsonl" and tables._head_bytes(path, 3) != b"\xef\xbb\xbf":
                lf, mapping = tables.lazy_ndjson(path, kind, explicit, path)
                return _lazy_normalize(lf, kind, mapping, path)
    df, _, _ = load_source(source, kind, format, explicit)
    return df.lazy()


def scan_qrels(
    source: Source,
    *,
    format: str | None = None,
    query_col: str | None = None,
    doc_col: str | None = None,
    relevance_col: str | None = None,
) -> pl.LazyFrame:
    """Lazy :func:`read_qrels`: parquet (files, globs, directories), CSV/TSV, JSON Lines, TREC text.

    Columns are resolved and cast now; rows are read (and strict casts fail)
    only at ``collect()``. The duplicate check and the row-level messages of
    :func:`read_qrels` are not applied, except that a CSV/TSV id (or tag) holding a line
    break, a quoted field that merged lines, fails ``collect()`` without its line (a JSON
    Lines record repeating a key keeps the first value, as polars reads it). Other
    sources are read eagerly and wrapped with ``.lazy()``.

    Examples
    --------
    >>> import tempfile, os, polars as pl
    >>> d = tempfile.mkdtemp()
    >>> pl.DataFrame({"qid": ["q1"], "docno": ["d1"], "rel": [1]}).write_parquet(os.path.join(d, "a.parquet"))
    >>> scan_qrels(os.path.join(d, "*.parquet")).collect().rows()
    [('q1', 'd1', 1)]
    """
    return _scan(source, "qrels", format, query_col=query_col, doc_col=doc_col, relevance_col=relevance_col)


def scan_run(
    source: Source,
    *,
    format: str | None = None,
    query_col: str | None = None,
    doc_col: str | None = None,
    score_col: str | None = None,
    rank_col: str | None = None,
    run_id_col: str | None = None,
) -> pl.LazyFrame:
    """Lazy :func:`read_run`; see :func:`scan_qrels` for what is and is not checked.

    Examples
    --------
    >>> import polars as pl
    >>> lf = pl.LazyFrame({"qid": [1], "pid": [9], "sim": [0.5]})
    >>> scan_run(lf).collect().rows()
    [(1, 9, 0.5)]
    """
    return _scan(
        source, "run", format,
        query_col=query_col, doc_col=doc_col, score_col=score_col, rank_col=rank_col, run_id_col=run_id_col,
    )
