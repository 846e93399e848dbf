"""Writers: parquet, CSV/TSV, JSON records, JSON Lines and TREC text, always atomic.

Every writer goes through :func:`fasteval.io.atomic.atomic_path`: the output
appears complete under its name or not at all (an interrupted write leaves the
old file, if any, untouched).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import IO, get_args

import polars as pl

from fasteval.errors import InputError, ParameterError
from fasteval.io.atomic import atomic_path
from fasteval.io.readers import _SUFFIX as _READ_SUFFIX
from fasteval.options import WriteFormat

COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".lz4", ".zip", ".7z")
"""Suffixes of compressed files: an output named so is refused unless its writer compresses
(it would hold plain text or parquet under a name that says otherwise)."""

__all__ = ["write_table", "output_format", "WRITE_FORMATS"]

WRITE_FORMATS = get_args(WriteFormat)
WRITE_SUFFIX = {s: f for s, f in _READ_SUFFIX.items() if s not in (".test", ".res")}
"""Output suffixes: the readers' (`fasteval.io.readers._SUFFIX`) but for the names of
trec_eval's test files and result files, read as TREC text but never written."""


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
    if not isinstance(path, str | os.PathLike):
        raise ParameterError(param, "a file path (str or os.PathLike)", path)
    if format is not None and not isinstance(format, str):
        raise ParameterError(format_param, f"None or one of {WRITE_FORMATS}", format)
    text = os.fsdecode(os.fspath(path))
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
        if suffix not in WRITE_SUFFIX:
            raise ParameterError(
                format_param,
                f"given, or {param} must end in one of {sorted(WRITE_SUFFIX)} (optionally + "
                "'.gz')", text)
        fmt = WRITE_SUFFIX[suffix]
    if packed == ".gz" and fmt == "parquet":
        raise ParameterError(param, "a name without '.gz' for parquet output (parquet "
                             "compresses its own columns; write_table gzips only text formats)",
                             text)
    return fmt


def _check_trec_ids(df: pl.DataFrame, col: str) -> pl.Series:
    """``col`` as it is written: integer ids as they are, text (``String``, ``Categorical``,
    ``Enum``) as ``String``, after refusing what a TREC reader would split, drop or refuse."""
    s = df.get_column(col)
    if s.null_count():
        _refuse_null(s, col)
    if s.dtype.is_integer():
        return s
    if s.dtype not in (pl.String, pl.Categorical) and not isinstance(s.dtype, pl.Enum):
        raise InputError(f"{col} must be text or integers to be written as TREC text, got {s.dtype}",
                         column=col)
    s = s.cast(pl.String)
    bad = s.str.contains(r"\s") | s.str.contains("\x00", literal=True) | (s == "")
    if col == "query_id":
        bad = bad | s.str.starts_with("#")
    if bad.any():
        i = int(bad.arg_true()[0])
        what = "a tag" if col in ("tag", "run_id") else "an id"
        rule = "non-empty, without whitespace or NUL" + (
            " and not starting with '#'" if col == "query_id" else "")
        raise InputError(
            f"{col} {s[i]!r} cannot be written as TREC text ({what} must be {rule})",
            row=i,
            column=col,
        )
    if col == "query_id" and len(s) and s[0].startswith("\ufeff"):
        raise InputError(
            f"{col} {s[0]!r} cannot be written as TREC text (the first line cannot start with a "
            "byte order mark, U+FEFF: readers drop it as the file's encoding mark)",
            row=0,
            column=col,
        )
    return s


def _refuse_null(s: pl.Series, col: str) -> None:
    i = int(s.is_null().arg_true()[0])
    raise InputError(f"{col} is null; a TREC line needs every field", row=i, column=col)


def _check_trec_score(df: pl.DataFrame) -> pl.Series:
    """A null (or NaN) score would write an empty (or ``NaN``) field, and a score that is
    no number (text, a bool) a field that reads back as an error: all refused."""
    s = df.get_column("score")
    if not s.dtype.is_numeric():
        raise InputError(f"score must be numbers to be written as TREC text, got {s.dtype}",
                         column="score")
    if s.null_count():
        _refuse_null(s, "score")
    if s.dtype.is_float() and s.is_nan().any():
        i = int(s.is_nan().arg_true()[0])
        raise InputError("score is NaN; a TREC line needs a number", row=i, column="score")
    return s


def _trec_frame(df: pl.DataFrame) -> pl.DataFrame:
    """The six (run) or four (qrels) TREC columns as a frame ready for CSV output, after
    the checks the readers make (:func:`fasteval.io._common.normalize_rank` and
    ``normalize_relevance``): a file this writes reads back with the same values."""
    from fasteval.io._common import normalize_rank, normalize_relevance, row_locator

    ids = {}
    for col in ("query_id", "doc_id"):
        if col not in df.columns:
            raise InputError(f"TREC output needs a {col} column; the columns are {df.columns}", column=col)
        ids[col] = _check_trec_ids(df, col)
    if "score" in df.columns:
        score = _check_trec_score(df)
        if "rank" in df.columns:
            rank = df.get_column("rank")
            if rank.null_count():
                _refuse_null(rank, "rank")
            rank = normalize_rank(rank, source=None, where=row_locator())  # type: ignore[arg-type]
        else:
            # trec_eval's order: score descending, then doc id descending, compared as text
            # (strcmp: integer ids by their decimal spelling, so 9 before 100 before 10).
            rank = pl.DataFrame({"q": ids["query_id"], "s": score, "d": ids["doc_id"]}).select(
                pl.struct(pl.col("s"), pl.col("d").cast(pl.String))
                .rank(method="ordinal", descending=True)
                .over("q")
            ).to_series()
        if "tag" in df.columns or "run_id" in df.columns:
            name = "tag" if "tag" in df.columns else "run_id"
            tag = _check_trec_ids(df.select(pl.col(name).cast(pl.String)), name)
        else:
            tag = pl.repeat("fasteval", df.height, dtype=pl.String, eager=True)
        return pl.DataFrame({
            "query_id": ids["query_id"],
            "iter": pl.repeat("Q0", df.height, dtype=pl.String, eager=True),
            "doc_id": ids["doc_id"],
            "rank": rank.cast(pl.Int64),
            "score": score,
            "tag": tag,
        })
    if "relevance" in df.columns:
        rel = df.get_column("relevance")
        if rel.null_count():
            _refuse_null(rel, "relevance")
        rel = normalize_relevance(rel, source=None, where=row_locator())  # type: ignore[arg-type]
        return pl.DataFrame({
            "query_id": ids["query_id"],
            "iter": pl.repeat("0", df.height, dtype=pl.String, eager=True),
            "doc_id": ids["doc_id"],
            "relevance": rel,
        })
    raise InputError(f"TREC output needs a score (run) or relevance (qrels) column; the columns are {df.columns}")


def _write_text(df: pl.DataFrame, tmp: Path, gz: bool, fmt: str) -> None:
    if not gz:
        _write_text_to(df, tmp, fmt)
        return
    # streamed through gzip (no copy of the whole text in memory); no name in the header:
    # gzip.open would store the temporary file's
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw) as fh:
        _write_text_to(df, fh, fmt)


def _write_text_to(df: pl.DataFrame, target: Path | IO[bytes], fmt: str) -> None:
    if fmt == "trec":  # df is _trec_frame's output
        df.write_csv(target, separator=" ", include_header=False, quote_style="never")
    elif fmt in ("csv", "tsv"):
        df.write_csv(target, separator="," if fmt == "csv" else "\t")
    elif fmt == "jsonl":
        df.write_ndjson(target)
    else:  # a JSON array, ended by a newline as a text file's last line is
        data = df.write_json().encode() + b"\n"
        if isinstance(target, Path):
            target.write_bytes(data)
        else:
            target.write(data)


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
        and ``qid 0 docno rel`` when it has ``relevance``. TREC text takes only what the
        readers read back as written: ids without whitespace or NUL (text or integers),
        numeric scores, integer ranks and 32-bit integer grades.

    Float64 values read back bit for bit from every format (-0.0, subnormals and 1e308
    included). NaN and infinite values: parquet, CSV and TSV
    keep them (``NaN``, ``inf``); JSON and JSON Lines refuse them (JSON has no such
    numbers); TREC text refuses a NaN score and writes an infinite one as ``inf``/``-inf``.

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
    fmt = output_format(path, format)
    target = Path(path)
    gz = target.name.lower().endswith(".gz")
    objects = [name for name, dtype in df.schema.items() if dtype == pl.Object]
    if objects:  # polars writes no format of them
        raise InputError(f"{objects[0]} holds Python objects (dtype Object), which no output "
                         "format can hold; "
                         "convert them to strings or numbers first", source=os.fspath(path),
                         column=objects[0])
    if fmt == "trec":  # checked before the file system is touched
        try:
            df = _trec_frame(df)
        except InputError as exc:
            raise exc.at(source=os.fspath(path)) from None
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
