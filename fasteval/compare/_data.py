"""Per-query results in, paired score matrices out.

Accepted inputs (all end up as one long table ``run_id, query_id, measure, value``):

* a polars (or pandas) DataFrame in long form (``run_id, query_id, measure, value``) or wide
  form (``run_id, query_id`` and one column per measure, as ``fasteval eval --wide`` writes);
* a path (parquet, CSV/TSV, JSON lines, or a directory of parquet parts such as
  ``fasteval eval --engine ray -q`` writes; trec_eval ``-q`` output as ``.trec`` or ``.eval``,
  and as ``.txt`` also the text table ``fasteval eval -q -o x.txt`` writes) or a list of
  paths; a file without ``run_id`` takes its file stem as the run name (its file name, or
  path, where stems repeat);
* a mapping ``{run_name: per-query table or path}``; the key names the run.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from fasteval.errors import InputError, ParameterError, first_line
from fasteval.io._common import undecodable_name
from fasteval.measures.aggregate import log_floor

_KEYS = ("run_id", "query_id", "measure", "value")
#: columns of a results file that are text whatever they look like
_TEXT_COLUMNS = ("run_id", "query_id", "measure")


_KINDS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".csv.gz": "csv",
          ".tsv": "tsv", ".tsv.gz": "tsv", ".jsonl": "ndjson", ".ndjson": "ndjson", ".json": "json",
          ".trec": "text", ".trec.gz": "text", ".eval": "text", ".eval.gz": "text", ".txt": "text",
          ".txt.gz": "text", ".jsonl.gz": "ndjson", ".ndjson.gz": "ndjson", ".json.gz": "json"}
"""The results formats by file suffix."""


def _sniff_results(data: bytes, name: str) -> str:
    """The suffix standing for the format of results read from standard input or a FIFO
    (no name to tell it by), from their first bytes: parquet, a JSON array, JSON Lines, CSV
    or TSV with a header naming ``query_id``, else text (trec_eval ``-q`` output or the text
    table); gzip looked through (``.gz`` added).

    Examples
    --------
    >>> _sniff_results(b"query_id,measure,value\\n1,map,0.5\\n", "-"), _sniff_results(b"map\\t1\\t0.5\\n", "-")
    ('.csv', '.txt')
    """
    if data[:4] == b"PAR1":
        return ".parquet"
    gz = ""
    if data[:2] == b"\x1f\x8b":
        from fasteval.io.files import inflated_head

        data, gz = inflated_head(data, name), ".gz"
    text = data.removeprefix(b"\xef\xbb\xbf").lstrip()
    if text[:1] in (b"[", b"{"):
        return (".json" if text[:1] == b"[" else ".jsonl") + gz
    first = text.split(b"\n", 1)[0].rstrip(b"\r")
    for sep, suffix in ((b"\t", ".tsv"), (b",", ".csv")):
        names = [f.strip().strip(b'"') for f in first.split(sep)]
        if len(names) > 1 and b"query_id" in names:
            return suffix + gz
    return ".txt" + gz


def _read_file(path: str | os.PathLike[str]) -> pl.DataFrame:
    """A results file as a table: parquet, CSV/TSV (``.gz`` too), JSON or JSON lines, by its
    suffix; a FIFO (``<(cmd)``) or device is read once, whole. A file polars cannot read
    is an :class:`InputError` naming it."""
    from fasteval.io.files import stream_input

    p = Path(path)
    streamed, mode = stream_input(os.fspath(path))  # -, a FIFO, a device: read once, as eval does
    if stat.S_ISDIR(mode):
        return _read_parquet_dir(p)
    suffix = "".join(p.suffixes[-2:] if p.suffix.lower() in {".gz", ".zst"} else [p.suffix]).lower()
    if suffix not in _KINDS and streamed is not None:  # no name to tell the format by
        suffix = _sniff_results(streamed.getvalue(), str(p))
    if suffix not in _KINDS:
        raise InputError(
            f"unknown results format {p.suffix!r}; expected .parquet, .csv, .tsv, .json, .jsonl, "
            "or trec_eval -q output as .trec, .eval or .txt",
            source=str(p),
        )
    from fasteval.io._common import fix_line_endings  # old-Mac (CR-only) lines, one row each

    kind = _KINDS[suffix]
    if kind == "text":
        data = _text_bytes(streamed or io.BytesIO(p.read_bytes()), str(p))
        return read_text_results(fix_line_endings(data, str(p)), str(p))  # type: ignore[arg-type]
    source: Any = p if streamed is None else streamed
    # polars maps files (ENODEV on a FIFO) and takes a name holding [, * or ? for a pattern
    # or a name that is not UTF-8
    if streamed is None and (any(c in p.name for c in "*?[") or undecodable_name(p)):
        source = io.BytesIO(p.read_bytes())
    if suffix.endswith(".gz") and kind != "parquet":  # inflated, checked as it comes
        source = io.BytesIO(_text_bytes(source, str(p)))
    if kind in ("csv", "tsv", "ndjson"):
        fixed = fix_line_endings(source.getvalue() if isinstance(source, io.BytesIO) else os.fspath(source), str(p))
        source = io.BytesIO(fixed) if isinstance(fixed, bytes) else source
    if kind in ("ndjson", "json"):  # polars reads a lone surrogate escape as "\x00"
        from fasteval.io._common import check_json_escapes

        check_json_escapes(source.getvalue() if isinstance(source, io.BytesIO) else os.fspath(source),
                           str(p), lines=kind == "ndjson")
    try:
        if kind == "parquet":
            return pl.read_parquet(source)
        if kind == "ndjson":
            return pl.read_ndjson(source)
        if kind == "json":  # a JSON array of rows, as fasteval eval -o x.json writes
            return pl.read_json(source)
        # ids as written: "01" and "1" are two queries (inferred integers would merge them)
        sep = "\t" if kind == "tsv" else ","
        df = pl.read_csv(source, separator=sep, schema_overrides=dict.fromkeys(_TEXT_COLUMNS, pl.Utf8))
    except pl.exceptions.PolarsError as exc:
        if kind in ("csv", "tsv"):
            _check_records(_text_bytes(source, str(p)), sep, None, str(p))
        if kind in ("ndjson", "json"):  # nested too deep: named by its line
            from fasteval.io._json import check_input

            check_input(source, str(p), lines=kind == "ndjson")
        raise InputError(f"cannot read the {kind} file ({first_line(exc)})",
                         source=str(p)) from exc
    if any("_duplicated_" in c for c in df.columns):  # polars renamed a repeated name
        _refuse_repeated_names(source, sep, str(p))
    if df.null_count().sum_horizontal().item() or ("value" in df.columns and df.schema["value"] == pl.Utf8):
        _check_records(_text_bytes(source, str(p)), sep, df, str(p))
        if "value" in df.columns and df.schema["value"] == pl.Utf8:  # numbers polars left as text
            df = df.with_columns(pl.col("value").cast(pl.Float64))  # ('nan'): checked below
    return df


_TREC_LINE = r"^[ \t]*(\S+)[ \t]+(\S+)[ \t]+(\S+)[ \t\r]*$"
"""A trec_eval output line: measure, query (``all`` on summary lines) and value, separated
by blanks (trec_eval pads the measure name with spaces, then a tab)."""

_TREC_TAB_LINE = r"^ *([^\t ](?:[^\t]*[^\t ])?) *\t[ \t]*(\S+)[ \t]+(\S+)[ \t\r]*$"
"""The same line with a tab after the measure, whose name may hold blanks (``fasteval eval
-m 'RBP(rel=2, p=0.5)' --format trec`` writes it as asked)."""


def read_text_results(data: bytes, source: str) -> pl.DataFrame:
    r"""Per-query results from text: trec_eval ``-q`` output (``measure query value`` lines,
    as ``trec_eval -q`` and ``fasteval eval -q --format trec`` print them) or the text table
    of ``fasteval eval -q -o x.txt`` (a header line that starts with ``run_id`` or
    ``query_id``, then blank-separated columns).

    trec_eval output: the summary lines (query ``all``) and ``relstring`` lines are left
    out; a ``runid all NAME`` line names the run of the per-query lines before it (trec_eval
    prints it after them), back to the previous run's summary. Without such a line the
    file has no ``run_id`` column and the run is named after the file. A file of summary
    lines only (trec_eval without ``-q``) is an :class:`InputError`, as is a line of
    another shape or a value that is not a number, naming the line. Both formats hold values
    rounded to the printed digits (trec_eval: 4 decimals), so tests on them see the rounded
    values; write ``-q -o x.parquet`` for full precision.

    Examples
    --------
    >>> text = b"map\t1\t0.5\nP_5\t1\t0.4\nmap\t2\t0.25\nrunid\tall\tbm25\nmap\tall\t0.375\n"
    >>> read_text_results(text, "bm25.trec").rows()
    [('bm25', '1', 'map', 0.5), ('bm25', '1', 'P_5', 0.4), ('bm25', '2', 'map', 0.25)]
    >>> read_text_results(b"RBP(rel=2, p=0.5)     \t1\t0.5\n", "r.trec").rows()
    [('1', 'RBP(rel=2, p=0.5)', 0.5)]
    """
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    lines = pl.Series("line", text.split("\n"), dtype=pl.Utf8)  # (a file's own lines)
    frame = pl.DataFrame([lines]).with_row_index("lineno", offset=1).filter(
        pl.col("line").str.strip_chars() != "")
    if frame.height == 0:
        raise InputError("no lines; expected per-query results (trec_eval -q output or the "
                         "text table of fasteval eval -q)", source=source)
    first = frame.get_column("line")[0].split()
    if first and first[0] in ("run_id", "query_id"):
        return _text_table(frame, first, source)
    tabbed = pl.col("line").str.extract_groups(_TREC_TAB_LINE)
    fields = frame.with_columns(pl.when(tabbed.struct.field("1").is_not_null()).then(tabbed)
                                .otherwise(pl.col("line").str.extract_groups(_TREC_LINE))
                                .alias("f")).unnest("f")
    fields = fields.rename({"1": "measure", "2": "query_id", "3": "value"})
    bad = fields.filter(pl.col("measure").is_null())
    if bad.height:
        lineno, line = bad.select("lineno", "line").row(0)
        raise InputError(f"{len(line.split())} fields where trec_eval -q output has 3; expected "
                         "'measure query value'", source=source, line=int(lineno))
    is_runid = (pl.col("measure") == "runid") & (pl.col("query_id") == "all")
    fields = fields.with_columns(
        pl.when(is_runid).then(pl.col("value")).backward_fill().alias("run_id"))
    rows = fields.filter((pl.col("query_id") != "all") & (pl.col("measure") != "relstring"))
    if rows.height == 0:
        raise InputError("holds summary lines only (query 'all'); expected per-query lines, as "
                         "trec_eval -q prints them", source=source)
    rows = rows.with_columns(pl.col("value").cast(pl.Float64, strict=False).alias("number"))
    bad = rows.filter(pl.col("number").is_null())
    if bad.height:
        lineno, value = bad.select("lineno", "value").row(0)
        raise InputError(f"value is not a number: {value[:80]!r}; expected a number",
                         source=source, line=int(lineno), column="value")
    if rows.get_column("run_id").null_count() == rows.height:
        return rows.select("query_id", "measure", pl.col("number").alias("value"))
    return rows.select(pl.col("run_id").fill_null(_run_stem(source)), "query_id", "measure",
                       pl.col("number").alias("value"))


def _text_table(frame: pl.DataFrame, header: list[str], source: str) -> pl.DataFrame:
    """The rows of a blank-separated text table under ``header`` (see
    :func:`read_text_results`)."""
    if len(set(header)) != len(header):
        repeated = next(n for i, n in enumerate(header) if n in header[:i])
        raise InputError(f"the header names column {repeated!r} twice; expected each column once",
                         source=source, line=1, column=repeated)
    body = _aligned_cells(frame, header)
    if body is None:
        body = frame.slice(1).with_columns(
            pl.col("line").str.strip_chars().str.split(" ").list.eval(
                pl.element().filter(pl.element() != "")).alias("f"))
    else:
        body, header = body
    width = body.get_column("f").list.len()
    wrong = body.filter(width != len(header))
    if wrong.height:
        lineno, f = wrong.select("lineno", "f").row(0)
        raise InputError(f"{len(f)} fields where the header has {len(header)} ({', '.join(header)}); "
                         "expected one field per header column", source=source, line=int(lineno))
    cols = {}
    for k, name in enumerate(header):
        col = body.get_column("f").list.get(k)
        if name not in _TEXT_COLUMNS:
            number = col.cast(pl.Float64, strict=False)
            if number.null_count():
                i = int(number.is_null().arg_max())
                raise InputError(f"value is not a number: {col[i][:80]!r}; expected a number",
                                 source=source, line=int(body.get_column("lineno")[i]), column=name)
            col = number
        cols[name] = col
    return pl.DataFrame(cols)


def _aligned_cells(frame: pl.DataFrame, header: list[str]) -> tuple[pl.DataFrame, list[str]] | None:
    """The body's cells and the header of a table whose columns are two or more blanks
    apart (the text table of ``fasteval eval``), when a cell holds a blank (a measure asked
    for as ``'RBP(rel=2, p=0.5)'``); None for any other table (split at every blank).

    Examples
    --------
    >>> lines = ["run_id  query_id  measure            value", "r       q1        RBP(rel=2, p=0.5)  0.5"]
    >>> body, header = _aligned_cells(pl.DataFrame({"line": lines}), [])
    >>> header, body.get_column("f").to_list()
    (['run_id', 'query_id', 'measure', 'value'], [['r', 'q1', 'RBP(rel=2, p=0.5)', '0.5']])
    """
    cells = frame.with_columns(pl.col("line").str.strip_chars().str.replace_all(
        r"\t| {2,}", "\t").str.split("\t").alias("f"))
    spaced = cells.get_column("f")[0].to_list()
    body = cells.slice(1)
    if (len(spaced) < 2 or (spaced == header and not body.get_column("line").str.contains(
            r"[^ \t] [^ \t]").any()) or (body.get_column("f").list.len() != len(spaced)).any()):
        return None
    return body, spaced


def _text_bytes(source: Any, name: str) -> bytes:
    """The text of a CSV/TSV results file ``name`` (``source``: its path or its bytes), gunzipped (as
    a stream, checked as it comes: :func:`fasteval.io.inflate.inflate_bytes`)."""
    data = source.getvalue() if isinstance(source, io.BytesIO) else Path(source).read_bytes()
    if data[:2] != b"\x1f\x8b":
        return data
    from fasteval.io.inflate import inflate_bytes

    return inflate_bytes(data, name)


def _check_records(data: bytes, sep: str, df: pl.DataFrame | None, source: str) -> None:
    """Name the line of a CSV/TSV record that is not a results row: more fields than the
    header (``df`` None: polars refused the file), fewer than it takes to reach the
    columns read (polars reads the lacking fields as nulls: missing values, which would
    be dropped without a word), or a value that is not a number."""
    from fasteval.io.tables import check_short_records, csv_line_locator, ragged_record

    if df is None:
        import csv

        first = data.split(b"\n", 1)[0].decode("utf-8", "replace").removeprefix("\ufeff")
        header = next(csv.reader([first], delimiter=sep), [])
        where = ragged_record(data, sep, len(header))
        if where is not None:
            raise InputError(f"{where[1]} fields where the header has {len(header)}; expected one field "
                             "per header column", source=source, line=where[0])
        return
    check_short_records(data, sep, df.columns, df.columns, source)
    if "value" in df.columns and df.schema["value"] == pl.Utf8:
        text = df.get_column("value")
        bad = text.is_not_null() & text.cast(pl.Float64, strict=False).is_null()
        if bad.any():
            i = int(bad.arg_max())
            raise InputError(f"value is not a number: {text[i]!r}; expected a number", source=source,
                             column="value", **csv_line_locator(data)(i))


def _read_parquet_dir(p: Path) -> pl.DataFrame:
    """The parquet parts of a directory (``fasteval eval --engine ray -q -o OUT.parquet``
    writes one), as one table; hidden parts (``.``, ``_``) are left out. Parts whose ids
    differ in type (integer ids in one, text in another) meet as text."""
    parts = sorted(f for f in p.iterdir() if f.suffix.lower() in (".parquet", ".pq")
                   and not f.name.startswith((".", "_")) and f.is_file())
    if not parts:
        raise InputError("is a directory without parquet parts; expected a results file "
                         "(.parquet, .csv, .tsv, .json or .jsonl) or a directory of parquet "
                         "parts", source=str(p))
    frames = []
    for f in parts:
        try:
            frames.append(pl.read_parquet(f))
        except pl.exceptions.PolarsError as exc:
            raise InputError(f"cannot read the parquet file ({first_line(exc)})",
                             source=str(f)) from exc
    columns = [f.columns for f in frames]
    if any(set(c) != set(columns[0]) for c in columns):
        k = next(i for i, c in enumerate(columns) if set(c) != set(columns[0]))
        raise InputError(f"columns {columns[k]} differ from those of {parts[0].name} "
                         f"({columns[0]}); expected the parts of one table", source=str(parts[k]))
    if len({f.schema.get("query_id") for f in frames}) > 1:
        frames = [f.with_columns(pl.col("query_id").cast(pl.Utf8)) for f in frames]
    return pl.concat([f.select(columns[0]) for f in frames], how="vertical_relaxed")


def _refuse_repeated_names(source: Any, sep: str, name: str) -> None:
    """Refuse a CSV/TSV header that names a column twice (polars reads the second ``map`` as
    ``map_duplicated_0``, which would be compared as one more measure)."""
    import contextlib
    import csv
    import gzip

    data = source if isinstance(source, io.BytesIO) else open(source, "rb")  # noqa: SIM115 - closed below
    with data:
        data.seek(0)  # (polars may have read a buffer to its end)
        head = data.read(2)
        data.seek(0)
        with gzip.open(data, "rb") if head == b"\x1f\x8b" else contextlib.nullcontext(data) as fh:
            raw = fh.read(1 << 20)
    names = next(csv.reader(io.StringIO(raw.decode("utf-8", "replace").removeprefix("\ufeff"), newline=""),
                            delimiter=sep), [])
    repeated = next((n for i, n in enumerate(names) if n and n in names[:i]), None)
    if repeated is not None:
        raise InputError(f"the header names column {repeated!r} twice; expected each column once",
                         source=name, line=1, column=repeated)


def _as_frame(obj: Any, source: str) -> pl.DataFrame:
    if isinstance(obj, pl.LazyFrame):
        return obj.collect()
    if isinstance(obj, pl.DataFrame):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return _read_file(obj)
    if type(obj).__module__.startswith("pandas"):
        # NaN is pandas' missing value (a polars null becomes NaN in to_pandas()): missing
        return pl.from_pandas(obj.reset_index() if obj.index.name else obj)
    raise InputError(
        f"expected a polars/pandas DataFrame, a path or a mapping, got {type(obj).__name__}",
        source=source,
    )


def _normalize(df: pl.DataFrame, source: str, run_name: str | None) -> pl.DataFrame:
    """One table (long or wide) -> long ``run_id, query_id, measure, value``."""
    cols = set(df.columns)
    if df.height == 0:
        raise InputError(f"no rows (columns: {df.columns}); expected per-query results",
                         source=source)
    if "query_id" not in cols:
        raise InputError(f"missing column 'query_id' (columns: {df.columns})", source=source)
    if run_name is not None:
        df = df.with_columns(pl.lit(run_name).alias("run_id"))
    elif "run_id" not in cols:
        raise InputError(
            "missing column 'run_id' (name the runs with a mapping {name: table})", source=source
        )
    long_form = {"measure", "value"} <= cols
    if long_form:
        long = df.select(_KEYS)
        value_cols = ["value"]
    else:
        measure_cols = [c for c in df.columns if c not in ("run_id", "query_id")]
        if not measure_cols:
            raise InputError(
                "no measure columns: expected long form (measure, value) or wide form "
                "(one column per measure)",
                source=source,
            )
        for c in measure_cols:
            if not df.schema[c].is_numeric():
                if c == "measure":  # a long table whose value column has another name
                    raise InputError(
                        "missing column 'value': a long table has columns run_id, query_id, "
                        f"measure and value (columns: {df.columns})",
                        source=source,
                    )
                raise InputError(
                    f"measure column has type {df.schema[c]}, expected numbers",
                    source=source,
                    column=c,
                )
        value_cols = measure_cols
        long = df.unpivot(
            index=["run_id", "query_id"],
            on=measure_cols,
            variable_name="measure",
            value_name="value",
        )
    value_dtype = long.schema["value"]
    if not (value_dtype.is_numeric() or value_dtype == pl.Null):
        raise InputError(
            f"values have type {value_dtype}, expected numbers", source=source, column="value"
        )
    try:
        _check_cells(df, source, value_cols, long_form)
    except InputError as exc:  # a results text file: its line, as the file readers name it
        if exc.row is None or not os.path.isfile(source):
            raise
        from fasteval.io.files import table_file_locator

        raise exc.at(**{"row": None, **table_file_locator(source)(exc.row)}) from None
    qdt = long.schema["query_id"]
    qcast = pl.col("query_id").cast(pl.Int64 if qdt.is_integer() else pl.Utf8)
    return long.select(
        pl.col("run_id").cast(pl.Utf8),
        qcast,
        pl.col("measure").cast(pl.Utf8),
        pl.col("value").cast(pl.Float64),
    )


def _check_cells(df: pl.DataFrame, source: str, value_cols: list[str], long_form: bool) -> None:
    """Refuse null ids or measure names and NaN or infinite values, naming the table (file),
    its row (0-based, as the table holds it) and column. ``value_cols``: the ``value`` column
    of a long table (``long_form``), or a wide table's measure columns.

    Examples
    --------
    >>> wide = pl.DataFrame({"run_id": ["a", "a"], "query_id": ["q1", "q2"],
    ...                      "map": [0.5, float("nan")]})
    >>> _check_cells(wide, "run.csv", ["map"], long_form=False)
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: run.csv, row 1, column 'map': value is NaN for run 'a', query 'q2', measure 'map'; drop the row or use a finite number
    """
    keys = ["run_id", "query_id", "measure"] if long_form else ["run_id", "query_id"]
    for col in keys:
        nulls = df.get_column(col).is_null()
        if nulls.any():
            raise InputError(f"{col} is null; every row needs one", source=source,
                             row=int(nulls.arg_max()), column=col)
    first: tuple[int, str] | None = None
    for col in value_cols:
        values = df.get_column(col)
        if not values.dtype.is_float():  # integers and all-null columns are finite
            continue
        bad = ~values.is_finite() & values.is_not_null()
        if bad.any():
            row = int(bad.arg_max())
            if first is None or row < first[0]:
                first = (row, col)
    if first is None:
        return
    row, col = first
    r = df.row(row, named=True)
    measure = r["measure"] if long_form else col
    raise InputError(
        f"value is {_number_word(r[col])} for run {r['run_id']!r}, query {r['query_id']!r}, "
        f"measure {measure!r}; drop the row or use a finite number",
        source=source, row=row, column=col,
    )


def load_results(results: Any) -> pl.DataFrame:
    """Read per-query results in any accepted form into one long table.

    Rows with a null value (pandas' NaN, ``NA`` or ``None``) are dropped (they count as
    missing). Raises :class:`~fasteval.errors.InputError` for NaN (of a polars table or a
    file) and infinite values and for null run ids, query ids or measure names, naming the
    table or file, its row and column (duplicated ``(run_id, query_id, measure)`` rows are
    reported by :func:`pair_all`).

    Examples
    --------
    >>> import polars as pl
    >>> wide = pl.DataFrame({"query_id": ["q1", "q2"], "map": [0.5, 0.25]})
    >>> load_results({"bm25": wide}).sort("query_id").rows()
    [('bm25', 'q1', 'map', 0.5), ('bm25', 'q2', 'map', 0.25)]
    """
    parts: list[pl.DataFrame] = []
    sources: list[str] = []  # where each part comes from (the list branch)
    if isinstance(results, Mapping):
        if not results:
            raise InputError("the mapping of runs is empty", source="results")
        keys: dict[str, Any] = {}
        for name in results:
            if str(name) in keys:  # 1 and "1": one run name, its rows would look duplicated
                raise InputError(
                    f"two runs named {str(name)!r} (keys {keys[str(name)]!r} and {name!r}); "
                    "give each run a distinct name", source="results")
            keys[str(name)] = name
        for name, table in results.items():
            src = str(table) if isinstance(table, (str, os.PathLike)) else f"results[{name!r}]"
            parts.append(_normalize(_as_frame(table, src), src, str(name)))
    elif isinstance(results, (str, os.PathLike)):
        df = _as_frame(results, str(results))
        stem = None if "run_id" in df.columns else _run_stem(results)
        parts.append(_normalize(df, str(results), stem))
    elif (
        isinstance(results, Iterable)
        and not isinstance(results, (pl.DataFrame, pl.LazyFrame))
        and not type(results).__module__.startswith("pandas")
    ):
        items = list(results)
        if not items:
            raise InputError("the list of result files is empty", source="results")
        names = _file_run_names([i for i in items if isinstance(i, (str, os.PathLike))])
        for k, item in enumerate(items):
            if isinstance(item, (str, os.PathLike)):
                df = _as_frame(item, str(item))
                run_name = None if "run_id" in df.columns else names[str(item)]
                parts.append(_normalize(df, str(item), run_name))
                sources.append(str(item))
            elif isinstance(item, Mapping):
                parts.append(load_results(item))
                sources.append(f"results[{k}]")
            else:  # a table: its errors name it by its place in the list
                parts.append(_normalize(_as_frame(item, f"results[{k}]"), f"results[{k}]", None))
                sources.append(f"results[{k}]")
    else:
        parts.append(_normalize(_as_frame(results, "results"), "results", None))
    if len(parts) > 1:
        kinds = {p.schema["query_id"] for p in parts}
        if len(kinds) > 1:
            parts = [p.with_columns(pl.col("query_id").cast(pl.Utf8)) for p in parts]
    if len(sources) > 1:
        _refuse_repeated_results(parts, sources)
    long = pl.concat(parts) if len(parts) > 1 else parts[0]
    return long.filter(pl.col("value").is_not_null())


def _refuse_repeated_results(parts: list[pl.DataFrame], sources: list[str]) -> None:
    """Refuse a value of one run, query and measure given in two files (the same run's
    results given twice), naming both; a run's measures or queries spread over several
    files are accepted, and a null value (missing) repeats nothing."""
    keys = ["run_id", "query_id", "measure"]
    tagged = pl.concat([p.filter(pl.col("value").is_not_null()).select(keys)
                        .with_columns(pl.lit(k, dtype=pl.Int64).alias("_part"))
                        for k, p in enumerate(parts)])
    twice = (tagged.unique(subset=[*keys, "_part"], keep="first", maintain_order=True)
             .group_by(keys, maintain_order=True)
             .agg(pl.col("_part").first().alias("_first"), pl.col("_part").slice(1, 1).first().alias("_then"),
                  pl.len().alias("_n"))
             .filter(pl.col("_n") > 1))
    if twice.height:
        run, query, measure, first, then = twice.select(
            *keys, "_first", "_then").sort("_then", maintain_order=True).row(0)
        raise InputError(
            f"run {run!r}, query {query!r}, measure {measure!r} is also in {sources[first]}; "
            "give each run's results once", source=sources[then])


def _file_run_names(paths: list[str | os.PathLike[str]]) -> dict[str, str]:
    """The run name of each results file that has no ``run_id`` column: its stem, or where
    two files share a stem (``bm25/run.csv``, ``dense/run.csv``) the file name, else the
    path as given. A file given twice is an :class:`InputError` (its rows would pair with
    themselves).

    Examples
    --------
    >>> _file_run_names(["a/run.csv", "b/run.csv"]) == {"a/run.csv": "a/run.csv", "b/run.csv": "b/run.csv"}
    True
    >>> _file_run_names(["bm25.csv", "dense.parquet"])
    {'bm25.csv': 'bm25', 'dense.parquet': 'dense'}
    """
    seen: dict[Path, str] = {}
    for p in paths:
        key = Path(p).resolve()
        if key in seen:
            raise InputError(f"results file given twice (also as {seen[key]!r}); give each "
                             "file once", source=str(p))
        seen[key] = str(p)
    texts = [str(p) for p in paths]
    for rule in (_run_stem, lambda t: Path(t).name, str):
        names = [rule(t) for t in texts]
        if len(set(names)) == len(names):
            return dict(zip(texts, names, strict=True))
    return {t: t for t in texts}  # pragma: no cover - paths given once are distinct


def _run_stem(path: str | os.PathLike[str]) -> str:
    """The name of a run given by a results file: its stem, compression suffix left out.

    Examples
    --------
    >>> _run_stem("out/bm25.csv.gz"), _run_stem("dense.trec")
    ('bm25', 'dense')
    """
    p = Path(path)
    if os.fspath(path) == "-":  # standard input, named as the commands name a run read from it
        return "stdin"
    return Path(p.stem).stem if p.suffix.lower() in (".gz", ".zst") else p.stem


def _number_word(value: float) -> str:
    return "NaN" if value != value else ("+inf" if value > 0 else "-inf")


@dataclass(frozen=True)
class Paired:
    """Scores of one measure, one row per system, one column per paired query."""

    measure: str
    query_ids: pl.Series
    scores: np.ndarray  # (n_systems, n_queries) float64
    n_present: np.ndarray  # (n_systems,) queries each system has a value for
    n_union: int  # queries any system has a value for
    columns: np.ndarray  # indices of the paired queries among all query ids (sorted)


def is_geometric(measure: str) -> bool:
    """Whether ``measure`` names a measure aggregated by a geometric mean.

    Examples
    --------
    >>> is_geometric("gm_map"), is_geometric("map"), is_geometric("my_metric")
    (True, False, False)
    """
    from fasteval.measures import parse_measure

    try:
        return parse_measure(measure).aggregation == "gm"
    except Exception:  # noqa: BLE001 - a column the parser does not know is taken as it is
        return False


def pair_all(
    long: pl.DataFrame, systems: list[str], measures: list[str], missing: str
) -> dict[str, Paired]:
    """Pair the queries of every measure across ``systems``.

    ``missing="drop"`` keeps the queries every system has; ``missing="zero"`` keeps every
    query any system has and scores the absent ones 0. Queries are in sorted id order.
    Measures aggregated by a geometric mean (``gm_map``, ``gm_bpref``, whose per-query
    values are AP and bpref) are paired as ``ln(max(value, 1e-5))``, the scale on which
    trec_eval averages them: their means, differences, intervals and tests are those of the
    logarithms (``exp`` of a run's mean is its GMAP), not of the arithmetic mean (MAP).

    Examples
    --------
    >>> import polars as pl
    >>> long = pl.DataFrame({"run_id": ["a", "a", "b"], "query_id": ["1", "2", "1"],
    ...                      "measure": ["map"] * 3, "value": [0.5, 1.0, 0.25]})
    >>> p = pair_all(long, ["a", "b"], ["map"], "drop")["map"]
    >>> p.scores.tolist(), p.n_present.tolist(), p.n_union
    ([[0.5], [0.25]], [2, 1], 2)
    >>> pair_all(long, ["a", "b"], ["map"], "zero")["map"].scores.tolist()
    [[0.5, 1.0], [0.25, 0.0]]
    >>> gm = long.with_columns(measure=pl.lit("gm_map"))
    >>> pair_all(gm, ["a", "b"], ["gm_map"], "zero")["gm_map"].scores[1].round(4).tolist()
    [-1.3863, -11.5129]
    """
    if missing not in ("drop", "zero"):
        raise ParameterError("missing", "'drop' or 'zero'", missing)
    sub = long.filter(pl.col("measure").is_in(measures) & pl.col("run_id").is_in(systems))
    qids = sub.get_column("query_id").unique().sort()
    S, M, Q = len(systems), len(measures), qids.len()
    codes = sub.select(
        pl.col("measure")
        .replace_strict(measures, list(range(M)), return_dtype=pl.Int64)
        .alias("m"),
        pl.col("run_id").replace_strict(systems, list(range(S)), return_dtype=pl.Int64).alias("r"),
        (pl.col("query_id").rank("dense").cast(pl.Int64) - 1).alias("q"),
        pl.col("value"),
    )
    flat = (codes["m"].to_numpy() * S + codes["r"].to_numpy()) * Q + codes["q"].to_numpy()
    counts = np.bincount(flat, minlength=M * S * Q)
    if counts.max(initial=0) > 1:
        k = int(np.argmax(counts))
        m, rest = divmod(k, S * Q)
        r, q = divmod(rest, Q)
        raise InputError(
            f"{int(counts[k])} rows for run {systems[r]!r}, query {qids[q]!r}, measure "
            f"{measures[m]!r}; expected one",
            source="results",
        )
    values = np.full(M * S * Q, np.nan)
    values[flat] = codes["value"].to_numpy()
    values = values.reshape(M, S, Q)
    present = ~np.isnan(values)
    out: dict[str, Paired] = {}
    for k, name in enumerate(measures):
        have = present[k]
        any_run = have.any(axis=0)
        keep = np.flatnonzero(have.all(axis=0) if missing == "drop" else any_run)
        scores = values[k][:, keep]
        if missing == "zero":
            scores = np.nan_to_num(scores, nan=0.0)
        if is_geometric(name):
            scores = log_floor(scores)
        out[name] = Paired(
            name,
            qids.gather(keep),
            np.ascontiguousarray(scores),
            have.sum(axis=1).astype(np.int64),
            int(any_run.sum()),
            keep,
        )
    return out
