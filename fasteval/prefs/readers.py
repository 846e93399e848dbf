"""Readers for trec_eval's preference judgment formats.

Two text formats are understood, both whitespace separated:

* ``prefs`` (``-R prefs``): ``qid  jg  jsg  docno  rel_level`` — five fields.
* ``qrels_prefs`` (``-R qrels_prefs``): an ordinary qrels file
  ``qid  iter  docno  rel`` read as preferences; the second column names the
  judgment group and every line belongs to judgment sub-group ``"0"``.

Both give a polars DataFrame with the columns ``query_id``, ``jg``, ``jsg``,
``doc_id`` (all Utf8) and ``rel_level`` (Float64).

Rules (trec_eval 10): a line whose first character is ``#`` is a comment; a
``#`` anywhere else is data. Blank lines and lines with the wrong number of
fields are errors (trec_eval reports them as malformed). ``rel_level`` must be
a number (trec_eval's ``atof`` would silently read garbage as 0; we refuse it).
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from fasteval.errors import InputError
from fasteval.io._common import fmt_value

PREFS_COLUMNS = ("query_id", "jg", "jsg", "doc_id", "rel_level")


def _read_lines(path: str | os.PathLike[str]) -> list[str]:
    """The file's lines, read once (a FIFO or ``<(cmd)`` works); gzip is known by its
    magic number, as :func:`fasteval.read_qrels` knows it; text that is not UTF-8
    (UTF-16, a compressed file, NUL bytes) is refused with its line."""
    from fasteval.io._common import check_text_encoding, fix_line_endings, missing_path

    src = str(path)
    if not Path(path).exists():
        raise missing_path(src)
    try:
        raw = Path(path).read_bytes()
    except IsADirectoryError as exc:
        raise InputError("is a directory, expected a file", source=src) from exc
    except OSError as exc:
        raise InputError(f"cannot open ({exc.strerror})", source=src) from exc
    if raw[:2] == b"\x1f\x8b":  # inflated as a stream, checked as it comes
        from fasteval.io.inflate import inflate_bytes

        raw = inflate_bytes(raw, src)
    if not raw:
        raise InputError("file is empty", source=src)
    check_text_encoding(raw, src)
    raw = fix_line_endings(raw, src)  # old-Mac (CR-only) files: one line per record
    try:
        text = raw.decode("utf-8-sig")  # a byte order mark is no part of the first qid
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})", source=src,
                         line=raw.count(b"\n", 0, exc.start) + 1) from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


#: A field: a run of characters other than C's ``isspace`` (ASCII whitespace), as
#: trec_eval splits its lines; a no-break space is part of a docno.
_FIELD = r"[^ \t\r\x0b\x0c]+"


def _split_fields(path: str, lines: list[str], n_fields: int, names: tuple[str, ...]) -> pl.DataFrame:
    """Split text lines into ``n_fields`` whitespace-separated columns (comments dropped)."""
    s = pl.Series("line", lines, dtype=pl.Utf8)
    df = pl.DataFrame({"line": s}).with_row_index("lineno", offset=1)
    df = df.filter(~pl.col("line").str.starts_with("#"))
    df = df.with_columns(pl.col("line").str.extract_all(_FIELD).alias("f"))
    df = df.with_columns(pl.col("f").list.len().alias("nf"))
    bad = df.filter(pl.col("nf") != n_fields)
    if bad.height:
        row = bad.row(0, named=True)
        what = "blank line" if row["nf"] == 0 else f"{row['nf']} fields"
        raise InputError(
            f"expected {n_fields} whitespace-separated fields ({' '.join(names)}), got {what}",
            source=path,
            line=int(row["lineno"]),
        )
    return df.select(
        "lineno", *[pl.col("f").list.get(i).alias(name) for i, name in enumerate(names)]
    )


def _parse_rel(path: str, df: pl.DataFrame, column: str) -> pl.DataFrame:
    rel = df.get_column(column).str.strip_chars().cast(pl.Float64, strict=False)
    bad = rel.is_null() | rel.is_nan()
    if bad.any():
        idx = int(bad.arg_true()[0])
        raise InputError(
            f"rel_level is not a number: {fmt_value(df.get_column(column)[idx])}",
            source=path,
            line=int(df.get_column("lineno")[idx]),
            column=column,
        )
    return df.with_columns(rel.alias("rel_level"))


def read_prefs(path: str | os.PathLike[str]) -> pl.DataFrame:
    """Read a trec_eval ``prefs`` file (``qid jg jsg docno rel_level``).

    Parameters
    ----------
    path : str or path-like
        Text file (``.gz`` allowed).

    Returns
    -------
    polars.DataFrame
        Columns ``query_id``, ``jg``, ``jsg``, ``doc_id`` (Utf8), ``rel_level`` (Float64),
        in file order.

    Examples
    --------
    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".prefs", delete=False)
    >>> _ = f.write("# comment\\nq1 u1 s1 d#1 2\\nq1 u1 s1 d2 0\\n"); f.close()
    >>> read_prefs(f.name).rows()
    [('q1', 'u1', 's1', 'd#1', 2.0), ('q1', 'u1', 's1', 'd2', 0.0)]
    >>> os.unlink(f.name)
    """
    return read_judgment_lines(path, "prefs").drop("lineno")


def read_qrels_prefs(path: str | os.PathLike[str]) -> pl.DataFrame:
    """Read an ordinary qrels file as preferences (trec_eval ``-R qrels_prefs``).

    The second column (``iter``) becomes the judgment group, and every line is in
    judgment sub-group ``"0"``; the grade is the ``rel_level``.

    Parameters
    ----------
    path : str or path-like
        Text qrels file ``qid iter docno rel`` (``.gz`` allowed).

    Returns
    -------
    polars.DataFrame
        Columns ``query_id``, ``jg``, ``jsg``, ``doc_id``, ``rel_level``.

    Examples
    --------
    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".qrels", delete=False)
    >>> _ = f.write("q1 0 d1 1\\nq1 0 d2 0\\n"); f.close()
    >>> read_qrels_prefs(f.name).rows()
    [('q1', '0', '0', 'd1', 1.0), ('q1', '0', '0', 'd2', 0.0)]
    >>> os.unlink(f.name)
    """
    return read_judgment_lines(path, "qrels_prefs").drop("lineno")


def read_judgment_lines(path: str | os.PathLike[str], mode: str = "prefs") -> pl.DataFrame:
    """:func:`read_prefs` (``mode="prefs"``) or :func:`read_qrels_prefs` (``"qrels_prefs"``)
    with a ``lineno`` column (1-based), to name a judgment's line."""
    src = str(path)
    prefs = mode == "prefs"
    fields = ("qid", "jg", "jsg", "docno", "rel_level") if prefs else ("qid", "iter", "docno", "rel")
    df = _split_fields(src, _read_lines(path), len(fields), fields)
    if df.height == 0:
        raise InputError("no judgments (only comments)", source=src)
    df = _parse_rel(src, df, fields[-1])
    return df.select(pl.col("qid").alias("query_id"), pl.col(fields[1]).alias("jg"),
                     pl.col("jsg") if prefs else pl.lit("0", dtype=pl.Utf8).alias("jsg"),
                     pl.col("docno").alias("doc_id"), "rel_level", "lineno")


def numeric_column(df: pl.DataFrame, column: str, source: str) -> pl.Expr:
    """``column`` as Float64; text that is not a number is an :class:`InputError` naming its
    row (polars' cast error named neither source nor row).

    Examples
    --------
    >>> numeric_column(pl.DataFrame({"score": ["1.5", "x"]}), "score", "run")
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: run, row 1, column 'score': 'x' is not a number
    """
    col = df.get_column(column)
    if not (col.dtype.is_numeric() or col.dtype == pl.Null):
        cast = col.cast(pl.Float64, strict=False)
        bad = cast.is_null() & col.is_not_null()
        if bad.any():
            row = int(bad.arg_true()[0])
            raise InputError(f"{fmt_value(col[row])} is not a number", source=source, row=row,
                             column=column)
    return pl.col(column).cast(pl.Float64)


def judgments_from_frame(df: pl.DataFrame, mode: str, source: str = "judgments") -> pl.DataFrame:
    """Normalise an in-memory judgments table to the prefs columns.

    ``mode="prefs"`` needs ``query_id``, ``jg``, ``jsg``, ``doc_id`` and ``rel_level``
    (or ``relevance``). ``mode="qrels_prefs"`` needs ``query_id``, ``doc_id`` and
    ``relevance`` (or ``rel_level``); the judgment group comes from ``jg`` or
    ``iteration`` when present, else ``"0"``.

    Examples
    --------
    >>> import polars as pl
    >>> q = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})
    >>> judgments_from_frame(q, "qrels_prefs").rows()
    [('q1', '0', '0', 'd1', 1.0)]
    """
    if not isinstance(df, pl.DataFrame):
        try:
            df = pl.from_pandas(df) if hasattr(df, "to_numpy") and not hasattr(df, "schema") else pl.DataFrame(df)
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"cannot read judgments table: {exc}", source=source) from None
    cols = set(df.columns)
    rel_col = "rel_level" if "rel_level" in cols else "relevance"
    need = ["query_id", "doc_id", rel_col]
    if mode == "prefs":
        need += ["jg", "jsg"]
    missing = [c for c in need if c not in cols]
    if missing:
        raise InputError(
            f"missing column(s) {missing}; have {df.columns}", source=source, column=missing[0]
        )
    if mode == "prefs":
        jg = pl.col("jg").cast(pl.Utf8)
        jsg = pl.col("jsg").cast(pl.Utf8)
    else:
        jg_name = "jg" if "jg" in cols else ("iteration" if "iteration" in cols else None)
        jg = pl.col(jg_name).cast(pl.Utf8) if jg_name else pl.lit("0", dtype=pl.Utf8)
        jsg = pl.lit("0", dtype=pl.Utf8)
    out = df.select(
        pl.col("query_id").cast(pl.Utf8),
        jg.alias("jg"),
        jsg.alias("jsg"),
        pl.col("doc_id").cast(pl.Utf8),
        numeric_column(df, rel_col, source).alias("rel_level"),
    )
    for c in out.columns:
        nulls = out.get_column(c).is_null()
        if c == "rel_level":
            nulls = nulls | out.get_column(c).is_nan()
        if nulls.any():
            raise InputError("missing or NaN value", source=source, row=int(nulls.arg_true()[0]), column=c)
    if out.height == 0:
        raise InputError("no judgments", source=source)
    return out


def read_trec_run_minimal(path: str | os.PathLike[str]) -> tuple[pl.DataFrame, str | None]:
    """Small TREC run reader used when a path is given to :func:`evaluate_prefs`.

    ``qid iter docno rank score tag [ignored...]``; blank lines are skipped, and a
    line whose first non-blank character is ``#`` is a comment. Returns the run
    (``query_id``, ``doc_id``, ``score``) and the tag of the last data line.

    Examples
    --------
    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".run", delete=False)
    >>> _ = f.write("q1 Q0 d1 1 2.5 tagA\\n\\nq1 Q0 d2 2 1.5 tagB\\n"); f.close()
    >>> run, tag = read_trec_run_minimal(f.name)
    >>> run.rows(), tag
    ([('q1', 'd1', 2.5), ('q1', 'd2', 1.5)], 'tagB')
    >>> os.unlink(f.name)
    """
    src = str(path)
    s = pl.Series("line", _read_lines(path), dtype=pl.Utf8)
    df = pl.DataFrame({"line": s}).with_row_index("lineno", offset=1)
    df = df.with_columns(pl.col("line").str.extract_all(_FIELD).alias("f"))
    df = df.filter(pl.col("f").list.len() > 0)
    df = df.filter(~pl.col("f").list.get(0).str.starts_with("#"))
    nf = df.get_column("f").list.len()
    short = nf < 6
    if short.any():
        idx = int(short.arg_true()[0])
        raise InputError(
            f"expected at least 6 fields (qid iter docno rank score tag), got {int(nf[idx])}",
            source=src,
            line=int(df.get_column("lineno")[idx]),
        )
    if df.height == 0:
        raise InputError("no run lines", source=src)
    out = df.select(
        "lineno",
        pl.col("f").list.get(0).alias("query_id"),
        pl.col("f").list.get(2).alias("doc_id"),
        pl.col("f").list.get(4).alias("score_text"),
        pl.col("f").list.get(5).alias("tag"),
    )
    score = out.get_column("score_text").cast(pl.Float64, strict=False)
    bad = score.is_null()
    if bad.any():
        idx = int(bad.arg_true()[0])
        raise InputError(
            f"score is not a number: {fmt_value(out.get_column('score_text')[idx])}",
            source=src,
            line=int(out.get_column("lineno")[idx]),
            column="score",
        )
    tag = out.get_column("tag")[-1]
    return out.select("query_id", "doc_id", score.alias("score")), tag
