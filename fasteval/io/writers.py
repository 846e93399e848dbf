"""Writers: parquet, CSV/TSV, JSON records, JSON Lines and TREC text, always atomic.

Every writer goes through :func:`fasteval.io.atomic.atomic_path`: the output
appears complete under its name or not at all (an interrupted write leaves the
old file, if any, untouched).
"""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path

import polars as pl

from fasteval.errors import InputError, ParameterError
from fasteval.io.atomic import atomic_path

__all__ = ["write_table", "output_format", "WRITE_FORMATS"]

WRITE_FORMATS = ("parquet", "csv", "tsv", "json", "jsonl", "trec")
_SUFFIX = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "tsv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".trec": "trec",
    ".run": "trec",
    ".qrels": "trec",
    ".txt": "trec",
}


def output_format(path: str | os.PathLike[str], format: str | None = None, *,
                  param: str = "path", format_param: str = "format") -> str:
    """The format :func:`write_table` writes ``path`` in (``format``, else the suffix), checked
    before anything is computed: a name that says compressed must be compressed, so ``.gz``
    is refused with parquet (it compresses its own columns) and the other compression
    suffixes (``.zst``, ``.bz2``...) always (:func:`write_table` writes gzip only).
    ``param`` and ``format_param`` name the path and the format in the errors (a command's
    options).

    Examples
    --------
    >>> output_format("fused.trec.gz"), output_format("out.txt", "csv")
    ('trec', 'csv')
    >>> output_format("fused.parquet.gz")
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: path must be a name without '.gz' for parquet output (parquet compresses its own columns; write_table gzips only text formats), got 'fused.parquet.gz'
    """
    from fasteval.batch.sinks import COMPRESSED_SUFFIXES

    text = os.fspath(path)
    name = Path(text).name.lower()
    packed = next((s for s in COMPRESSED_SUFFIXES if name.endswith(s)), None)
    if packed is not None and packed != ".gz":
        raise ParameterError(param, f"a name without {packed!r}: only gzip ('.gz', text formats) "
                             "is written compressed", text)
    if format is not None:
        fmt = {"ndjson": "jsonl", "pq": "parquet"}.get(format.lower(), format.lower())
        if fmt not in WRITE_FORMATS:
            raise ParameterError(format_param, f"one of {WRITE_FORMATS}", format)
    else:
        suffix = Path(name.removesuffix(".gz")).suffix
        if suffix not in _SUFFIX:
            raise ParameterError(
                format_param,
                f"given, or {param} must end in one of {sorted(_SUFFIX)} (optionally + "
                "'.gz')", text)
        fmt = _SUFFIX[suffix]
    if packed == ".gz" and fmt == "parquet":
        raise ParameterError(param, "a name without '.gz' for parquet output (parquet "
                             "compresses its own columns; write_table gzips only text formats)",
                             text)
    return fmt


def _check_trec_ids(df: pl.DataFrame, col: str) -> None:
    s = df.get_column(col)
    if s.dtype != pl.String:
        if s.null_count():
            _refuse_null(s, col)
        return
    if s.null_count():
        _refuse_null(s, col)
    bad = s.str.contains(r"\s") | (s == "")
    if col == "query_id":
        bad = bad | s.str.starts_with("#")
    if bad.any():
        i = int(bad.arg_true()[0])
        what = "a tag" if col in ("tag", "run_id") else "an id"
        rule = "non-empty, without whitespace" + (" and not starting with '#'" if col == "query_id" else "")
        raise InputError(
            f"{col} {s[i]!r} cannot be written as TREC text ({what} must be {rule})",
            row=i,
            column=col,
        )


def _refuse_null(s: pl.Series, col: str) -> None:
    i = int(s.is_null().arg_true()[0])
    raise InputError(f"{col} is null; a TREC line needs every field", row=i, column=col)


def _check_trec_numbers(df: pl.DataFrame, col: str) -> None:
    """A null (or NaN) number would write an empty (or ``NaN``) field: a line that reads
    back with a field missing, or as an error."""
    s = df.get_column(col)
    if s.null_count():
        _refuse_null(s, col)
    if s.dtype.is_float() and s.is_nan().any():
        i = int(s.is_nan().arg_true()[0])
        raise InputError(f"{col} is NaN; a TREC line needs a number", row=i, column=col)


def _trec_frame(df: pl.DataFrame) -> pl.DataFrame:
    """The six (run) or four (qrels) TREC columns as a frame ready for CSV output."""
    for col in ("query_id", "doc_id"):
        if col not in df.columns:
            raise InputError(f"TREC output needs a {col} column; the columns are {df.columns}", column=col)
        _check_trec_ids(df, col)
    if "score" in df.columns:
        _check_trec_numbers(df, "score")
        if "rank" in df.columns:
            _check_trec_numbers(df, "rank")
            rank = pl.col("rank")
        else:
            # trec_eval's order: score descending, then doc id descending, compared as text
            # (strcmp: integer ids by their decimal spelling, so 9 before 100 before 10).
            rank = (
                pl.struct(pl.col("score"), pl.col("doc_id").cast(pl.String))
                .rank(method="ordinal", descending=True)
                .over("query_id")
            )
        if "tag" in df.columns or "run_id" in df.columns:
            name = "tag" if "tag" in df.columns else "run_id"
            tag = pl.col(name)
            _check_trec_ids(df.select(tag.cast(pl.String).alias(name)), name)
        else:
            tag = pl.lit("fasteval")
        return df.select(
            pl.col("query_id"),
            pl.lit("Q0").alias("iter"),
            pl.col("doc_id"),
            rank.cast(pl.Int64).alias("rank"),
            pl.col("score"),
            tag.cast(pl.String).alias("tag"),
        )
    if "relevance" in df.columns:
        _check_trec_numbers(df, "relevance")
        return df.select(pl.col("query_id"), pl.lit("0").alias("iter"), pl.col("doc_id"), pl.col("relevance"))
    raise InputError(f"TREC output needs a score (run) or relevance (qrels) column; the columns are {df.columns}")


def _write_text(df: pl.DataFrame, tmp: Path, gz: bool, fmt: str) -> None:
    buf = io.BytesIO()
    target: io.BytesIO | Path = buf if gz else tmp
    if fmt == "trec":
        _trec_frame(df).write_csv(target, separator=" ", include_header=False, quote_style="never")
    elif fmt in ("csv", "tsv"):
        df.write_csv(target, separator="," if fmt == "csv" else "\t")
    elif fmt == "jsonl":
        df.write_ndjson(target)
    else:
        df.write_json(target)
    if gz:  # no name in the header: gzip.open would store the temporary file's
        with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw) as fh:
            fh.write(buf.getvalue())


def check_json_numbers(df: pl.DataFrame, *, instead: str = "parquet or CSV", source: str | None = None) -> None:
    """Refuse a table with a NaN or infinite float before it is written as JSON, which has
    no such numbers (they would be written as null and read back as missing values).

    Examples
    --------
    >>> check_json_numbers(pl.DataFrame({"value": [0.5, float("nan")]}))
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: row 1, column 'value': JSON cannot hold nan (NaN and infinite numbers would come back as null); write parquet or CSV instead
    """
    for name, dtype in df.schema.items():
        bad = ~df.get_column(name).is_finite() if dtype.is_float() else None
        if bad is not None and bad.any():
            i = int(bad.arg_true()[0])
            raise InputError(
                f"JSON cannot hold {df.get_column(name)[i]} (NaN and infinite numbers would "
                f"come back as null); write {instead} instead",
                source=source,
                row=i,
                column=name,
            )


def write_table(
    df: pl.DataFrame | pl.LazyFrame,
    path: str | os.PathLike[str],
    format: str | None = None,
) -> Path:
    """Write a table atomically as parquet, CSV, TSV, JSON (records), JSON Lines or TREC text.

    Parameters
    ----------
    df
        The table (a LazyFrame is collected).
    path
        Destination; its extension picks the format when ``format`` is None
        (``.parquet``/``.pq``, ``.csv``, ``.tsv``, ``.json``, ``.jsonl``/``.ndjson``,
        ``.trec``/``.run``/``.qrels``/``.txt``; a trailing ``.gz`` compresses text formats).
    format
        Override: ``"parquet"``, ``"csv"``, ``"tsv"``, ``"json"``, ``"jsonl"`` or ``"trec"``.
        ``"trec"`` writes ``qid Q0 docno rank score tag`` when the table has a
        ``score`` column (rank from a ``rank`` column, else by score descending then
        doc id descending; tag from ``tag``, else ``run_id``, else ``fasteval``),
        and ``qid 0 docno rel`` when it has ``relevance``.

    Returns
    -------
    pathlib.Path
        The written path.

    Examples
    --------
    >>> import tempfile, os, polars as pl
    >>> d = tempfile.mkdtemp()
    >>> run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    >>> p = write_table(run, os.path.join(d, "run.trec"))
    >>> print(p.read_text(), end="")
    q1 Q0 a 2 1.0 fasteval
    q1 Q0 b 1 2.0 fasteval
    """
    if isinstance(df, pl.LazyFrame):
        df = df.collect()
    if not isinstance(df, pl.DataFrame):
        raise ParameterError("df", "a polars DataFrame or LazyFrame", type(df).__name__)
    target = Path(path)
    fmt = output_format(path, format)
    gz = target.name.lower().endswith(".gz")
    if fmt == "trec":
        _trec_frame(df)  # validate before touching the file system
    if fmt in ("json", "jsonl"):
        check_json_numbers(df, instead="parquet, CSV or TREC text", source=os.fspath(path))
    if fmt in ("csv", "tsv"):
        nested = [name for name, dtype in df.schema.items() if dtype.is_nested()]
        if nested:
            raise InputError(f"{fmt.upper()} cannot hold nested values (lists, structs); write "
                             "parquet or JSON instead", source=os.fspath(path), column=nested[0])
    with atomic_path(os.fspath(path)) as tmp:  # as written: Path() drops a trailing "/"
        if fmt == "parquet":
            df.write_parquet(tmp)
        else:
            _write_text(df, tmp, gz, fmt)
    return target
