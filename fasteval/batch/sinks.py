"""Where per-query results go while a batch job runs: streaming, atomic writers.

A sink receives per-query results chunk by chunk in wide form
``(run_id, query_id, <measure>...)`` and writes them long ``(run_id, query_id, measure, value)``
or wide, writes them to a temporary file beside the
destination, and renames it into place only on :meth:`commit` (standard output, devices
and FIFOs receive a copy then; see :mod:`fasteval.io.atomic`). :meth:`abort` (or a
killed process) leaves the destination untouched. A write that fails (a full disk)
raises :class:`fasteval.errors.OutputError` naming the destination.
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path

import polars as pl

from fasteval.errors import InputError, ParameterError
from fasteval.io.writers import COMPRESSED_SUFFIXES

LONG_COLUMNS = ("run_id", "query_id", "measure", "value")
FORMATS = ("table", "csv", "json", "parquet", "trec")


def to_wide(long: pl.DataFrame, measure_names: list[str]) -> pl.DataFrame:
    """Pivot long per-query results to one column per measure (in ``measure_names`` order).

    Examples
    --------
    >>> long = pl.DataFrame({"run_id": ["r", "r"], "query_id": ["q", "q"],
    ...                      "measure": ["P@5", "map"], "value": [0.2, 0.5]})
    >>> to_wide(long, ["map", "P@5"]).columns
    ['run_id', 'query_id', 'map', 'P@5']
    """
    if long.height == 0:
        return empty_wide(measure_names, long.schema["query_id"])
    wide = long.pivot(on="measure", index=["run_id", "query_id"], values="value", maintain_order=True)
    missing = [m for m in measure_names if m not in wide.columns]
    if missing:
        wide = wide.with_columns([pl.lit(None, dtype=pl.Float64).alias(m) for m in missing])
    return wide.select(["run_id", "query_id", *measure_names])


def format_from_path(path: str | os.PathLike[str] | None, default: str = "table",
                     param: str = "output") -> str:
    """Guess an output format from a file suffix (``.parquet``, ``.csv``, ``.json``, ``.trec``).

    A compressed name (``out.csv.gz``) is a :class:`~fasteval.errors.ParameterError`:
    outputs are not compressed (parquet compresses its columns itself).

    Examples
    --------
    >>> format_from_path("res.tsv"), format_from_path("res.out")
    ('csv', 'table')
    >>> format_from_path("res.csv.gz")
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: output must be a path without a compression suffix (.gz, .bz2, .xz, .zst, .lz4, .zip, .7z): outputs are written uncompressed (parquet compresses its own columns), got 'res.csv.gz'
    """
    if path is None:
        return default
    suffix = Path(path).suffix.lower()
    if suffix in COMPRESSED_SUFFIXES:
        raise ParameterError(
            param, f"a path without a compression suffix ({', '.join(COMPRESSED_SUFFIXES)}): "
            "outputs are written uncompressed (parquet compresses its own columns)", os.fspath(path))
    return {
        ".parquet": "parquet",
        ".pq": "parquet",
        ".csv": "csv",
        ".json": "json",
        ".jsonl": "json",
        ".ndjson": "json",
        ".trec": "trec",
        ".txt": "table",
        ".tsv": "csv",
    }.get(suffix, default)


def csv_separator(path: str | os.PathLike[str] | None) -> str:
    """The field separator of CSV output written to ``path``: a tab for ``.tsv``, else a comma.

    Examples
    --------
    >>> csv_separator("out.tsv"), csv_separator("out.csv"), csv_separator(None)
    ('\\t', ',', ',')
    """
    return "\t" if path is not None and Path(path).suffix.lower() == ".tsv" else ","


def json_lines(path: str | os.PathLike[str] | None) -> bool:
    """Whether JSON output written to ``path`` is JSON Lines (``.jsonl``, ``.ndjson``: one
    object a line) rather than one array.

    Examples
    --------
    >>> json_lines("out.jsonl"), json_lines("out.json"), json_lines(None)
    (True, False, False)
    """
    return path is not None and Path(path).suffix.lower() in (".jsonl", ".ndjson")


#: What splits a line of text in two, or one tab-separated field (NUL ends a C string):
#: line breaks as ``str.splitlines`` knows them, tabs and NUL.
_LINE_BREAKERS = r"[\t\n\r\x0b\x0c\x00\x1c-\x1e\x{85}\x{2028}\x{2029}]"


def _check_line_field(s: pl.Series, col: str) -> None:
    """Refuse a run or query id that would split a ``measure<TAB>query<TAB>value`` line.

    Examples
    --------
    >>> _check_line_field(pl.Series(["q 1", "q2"]), "query_id")  # a space stays in its field
    >>> _check_line_field(pl.Series(["q1", "q\\n2"]), "query_id")
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: column 'query_id': query_id 'q\\n2' cannot be written as trec_eval lines (a tab, line break or NUL would split or cut its line); write csv, json or parquet instead
    """
    if s.dtype not in (pl.String, pl.Categorical):  # integer ids hold no separator
        return
    s = s.cast(pl.String)
    bad = s.str.contains(_LINE_BREAKERS)
    if bad.any():
        value = s[int(bad.arg_true()[0])]
        raise InputError(f"{col} {value!r} cannot be written as trec_eval lines (a tab, line "
                         "break or NUL would split or cut its line); write csv, json or parquet "
                         "instead", column=col)


def trec_lines(table: pl.DataFrame, *, per_query: bool, agg_kind: dict[str, str] | None = None,
               aggregates: pl.DataFrame | None = None) -> str:
    """trec_eval-style lines ``measure<TAB>query<TAB>value`` (``all`` for aggregates).

    Aggregates: one block per run, headed by trec_eval's ``runid all NAME`` line. Per query
    (``per_query``), each run's block is what trec_eval -q prints: the per-query lines of
    the measures trec_eval prints per query (not the summary-only ``num_q``, ``gm_map`` and
    ``gm_bpref``), then, with ``aggregates``, the ``runid all NAME`` line and the run's
    aggregate lines (not ``relstring``, printed per query only); without ``aggregates``,
    each block is headed by its ``runid`` line when there are several runs.

    Parameters
    ----------
    table : polars.DataFrame
        Long or wide results (per query) or aggregates.
    per_query : bool
        Whether ``table`` holds per-query results.
    agg_kind : dict, optional
        Each measure's aggregation (``"sum"`` ones whole numbers print as integers, as
        trec_eval prints them), by default found from its name.
    aggregates : polars.DataFrame, optional
        The aggregates of ``table`` (long: ``run_id``, ``measure``, ``value``), printed after
        each run's per-query lines.

    Examples
    --------
    >>> agg = pl.DataFrame({"run_id": ["bm25", "bm25"], "measure": ["map", "num_q"], "value": [0.25, 3.0]})
    >>> [line.split(chr(9)) for line in trec_lines(agg, per_query=False).splitlines()]
    [['runid                 ', 'all', 'bm25'], ['map                   ', 'all', '0.2500'], ['num_q                 ', 'all', '3']]
    >>> pq = pl.DataFrame({"run_id": ["bm25"] * 2, "query_id": ["q1"] * 2, "measure": ["map", "num_q"],
    ...                    "value": [0.25, 1.0]})
    >>> print(trec_lines(pq, per_query=True, aggregates=agg).expandtabs(4), end="")
    map                     q1  0.2500
    runid                   all bm25
    map                     all 0.2500
    num_q                   all 3
    """
    import math

    names = [c for c in table.columns if c not in ("run_id", "query_id")]  # wide: the measures
    if agg_kind is None:
        from fasteval.measures.aggregate import aggregation_of

        if "measure" in table.columns:
            names = table.get_column("measure").unique().to_list()
        agg_kind = {m: aggregation_of(m) for m in names}
    if "measure" not in table.columns:  # wide: back to long
        table = to_long(table, names) if "query_id" in table.columns else table.unpivot(
            index="run_id", on=names, variable_name="measure", value_name="value")
    if per_query and aggregates is not None:
        return _trec_q_lines(table, aggregates, agg_kind)

    def fmt(measure: str, value: float) -> str:
        if math.isnan(value):  # as trec_eval prints it: C keeps the sign (0.0 / 0.0 is -nan)
            return f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"  # %6.4f's width
        if agg_kind.get(measure) == "sum" and math.isfinite(value) and value == int(value):
            return str(int(value))
        return f"{value:6.4f}"

    for col in ("run_id", "query_id"):
        if col in table.columns:
            _check_line_field(table.get_column(col), col)
    from fasteval._words import one_line  # (other control characters: escaped, not printed)

    lines = []
    blocks = table.partition_by("run_id", as_dict=True, maintain_order=True)
    for (rid,), block in blocks.items():
        if not per_query or len(blocks) > 1:  # per query: the runs' blocks told apart
            lines.append(f"{'runid':<22}\tall\t{one_line(str(rid))}")
        q = ([one_line(x) for x in block.get_column("query_id").cast(pl.Utf8).to_list()]
             if "query_id" in block.columns else None)
        for i, (m, v) in enumerate(zip(block.get_column("measure"), block.get_column("value"), strict=True)):
            lines.append(f"{one_line(m):<22}\t{q[i] if q is not None else 'all'}\t{fmt(m, v)}")
    return "\n".join(lines) + ("\n" if lines else "")


def _trec_q_lines(table: pl.DataFrame, aggregates: pl.DataFrame, agg_kind: dict[str, str]) -> str:
    """trec_eval -q's output of each run in turn (see :func:`trec_lines`; ``table`` long)."""
    scope = {m: _scope_of(m) for m in {*table.get_column("measure").unique().to_list(),
                                       *aggregates.get_column("measure").unique().to_list()}}
    per_topic = table.filter(pl.col("measure").replace_strict(scope, default="both") != "summary")
    summary = aggregates.filter(pl.col("measure").replace_strict(scope, default="both") != "query")
    runs = dict.fromkeys([*table.get_column("run_id").to_list(),
                          *aggregates.get_column("run_id").to_list()])
    text = []
    for rid in runs:
        text.append(trec_lines(per_topic.filter(pl.col("run_id") == rid), per_query=True,
                               agg_kind=agg_kind))
        text.append(trec_lines(summary.filter(pl.col("run_id") == rid), per_query=False,
                               agg_kind=agg_kind))
    return "".join(text)


def _scope_of(name: str) -> str:
    """Where trec_eval prints a measure: ``"both"``, ``"summary"`` (``num_q``, ``gm_map``,
    ``gm_bpref``) or ``"query"`` (``relstring``); a name the parser does not know: both."""
    from fasteval.measures.parser import parse_measure

    try:
        return parse_measure(name).spec.scope
    except Exception:  # noqa: BLE001 - evaluator outputs and other names print in both places
        return "both"


def to_long(wide: pl.DataFrame, measure_names: list[str]) -> pl.DataFrame:
    """Long results ``(run_id, query_id, measure, value)`` from wide ones, query-major order.

    Missing values (null) are left out. The layout is :func:`long_arrow`'s, with the text
    columns decoded.

    Examples
    --------
    >>> w = pl.DataFrame({"run_id": ["r", "r"], "query_id": ["a", "b"], "map": [0.5, 1.0], "P@5": [0.2, None]})
    >>> to_long(w, ["map", "P@5"]).rows()
    [('r', 'a', 'map', 0.5), ('r', 'a', 'P@5', 0.2), ('r', 'b', 'map', 1.0)]
    """
    long = pl.from_arrow(long_arrow(wide, measure_names))
    return long.with_columns(
        pl.col("run_id").cast(pl.Utf8),
        pl.col("query_id").cast(wide.schema["query_id"]),
        pl.col("measure").cast(pl.Utf8),
    )


def long_arrow(wide: pl.DataFrame, measure_names: list[str]):
    """The long table ``(run_id, query_id, measure, value)`` of wide results, as Arrow, with
    the text columns dictionary-encoded: each id and measure name is stored once per chunk
    and the rows only hold indices (what :func:`to_long` spells out string by string).
    Query-major order; missing values (null) are left out. Arrays go from numpy to Arrow
    through polars (``pyarrow.array`` on numpy would import pandas, half a second).

    Examples
    --------
    >>> w = pl.DataFrame({"run_id": ["r", "r"], "query_id": ["a", "b"], "map": [0.5, 1.0]})
    >>> long_arrow(w, ["map"]).to_pylist()[1]
    {'run_id': 'r', 'query_id': 'b', 'measure': 'map', 'value': 1.0}
    """
    import numpy as np
    import pyarrow as pa

    def arrow(values: np.ndarray) -> pa.Array:
        return pl.Series(values).to_arrow()

    def text(col: pl.Series) -> pa.Array:
        return col.cast(pl.Utf8).to_arrow().cast(pa.string())

    n, m = wide.height, len(measure_names)
    rows = arrow(np.repeat(np.arange(n, dtype=np.int32), m))

    def per_query(col: pl.Series) -> pa.Array:
        if col.dtype in (pl.Utf8, pl.Categorical, pl.Enum):
            return pa.DictionaryArray.from_arrays(rows, text(col))
        return arrow(col.to_numpy()[np.repeat(np.arange(n), m)])

    run = wide.get_column("run_id").cast(pl.Utf8)
    names = run.unique(maintain_order=True)
    if len(names) == 1:
        run_arr = pa.DictionaryArray.from_arrays(arrow(np.zeros(n * m, dtype=np.int32)), text(names))
    else:
        run_arr = per_query(run)
    measure = pa.DictionaryArray.from_arrays(
        arrow(np.tile(np.arange(m, dtype=np.int32), n)), text(pl.Series(measure_names, dtype=pl.Utf8)))
    block = wide.select(measure_names).cast(pl.Float64)
    values = block.to_numpy().reshape(-1) if m else np.empty(0)
    table = pa.table({"run_id": run_arr, "query_id": per_query(wide.get_column("query_id")),
                      "measure": measure, "value": arrow(values.astype(np.float64, copy=False))})
    if m and block.null_count().sum_horizontal().item():
        keep = ~np.column_stack([block.get_column(c).is_null().to_numpy() for c in measure_names])
        table = table.filter(arrow(keep.reshape(-1)))
    return table


def empty_wide(measure_names: list[str], query_dtype: pl.DataType = pl.Utf8) -> pl.DataFrame:
    """A wide result table with no rows."""
    return pl.DataFrame(
        schema={"run_id": pl.Utf8, "query_id": query_dtype} | dict.fromkeys(measure_names, pl.Float64)
    )


class Sink:
    """Base sink: collects nothing. Subclasses override :meth:`write`, :meth:`mark` and
    :meth:`rollback`.

    :meth:`mark` and :meth:`rollback` let a job write results as it goes and still take back
    a source's rows when it must score that source again (input found not grouped by query).
    """

    def write(self, wide: pl.DataFrame) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def mark(self) -> object:
        """A point to :meth:`rollback` to: everything written after it can be taken back."""
        raise NotImplementedError

    def rollback(self, mark: object) -> None:
        """Drop what was written after ``mark``."""
        raise NotImplementedError

    def finish(self) -> None:
        """Complete the output where it is being written, not yet in place: :meth:`commit`
        then only puts it there (a job finishes every output before it puts any in place)."""

    def commit(self) -> None:
        """Finish the output (rename into place)."""

    def abort(self) -> None:
        """Drop everything written so far."""


class MemorySink(Sink):
    """Keep the results in memory (for table/json/trec output and the Python API)."""

    def __init__(self, measure_names: list[str]) -> None:
        self.measure_names = list(measure_names)
        self.parts: list[pl.DataFrame] = []

    def write(self, wide: pl.DataFrame) -> None:
        if wide.height:
            self.parts.append(wide)

    def wide(self) -> pl.DataFrame:
        if not self.parts:
            return empty_wide(self.measure_names)
        return pl.concat(self.parts, how="vertical_relaxed")

    def long(self) -> pl.DataFrame:
        return to_long(self.wide(), self.measure_names)

    def mark(self) -> int:
        return len(self.parts)

    def rollback(self, mark: object) -> None:
        del self.parts[int(mark):]

    def abort(self) -> None:
        self.parts.clear()


class _FileSink(Sink):
    def __init__(self, path: str | os.PathLike[str], *, wide: bool, measure_names: list[str]) -> None:
        from fasteval.io.atomic import AtomicOutput

        self.path = Path(path)
        self.wide = wide
        self.measure_names = list(measure_names)
        self.output = AtomicOutput(path)
        self.tmp = self.output.tmp
        self.schema: pl.Schema | None = None
        self.closed = False
        self.finished = False

    @contextlib.contextmanager
    def _writing(self):
        """Turn a failed write into an :class:`OutputError` naming the destination."""
        try:
            yield
        except Exception as exc:
            failure = self.output.failure(exc)
            if failure is None:
                raise
            raise failure from None

    def _shape(self, wide: pl.DataFrame) -> pl.DataFrame:
        df = wide if self.wide else to_long(wide, self.measure_names)
        if self.schema is None:
            self.schema = df.schema
        elif df.schema != self.schema:
            df = df.cast(dict(self.schema))
        return df

    def _finish(self) -> None:  # close the underlying writer
        pass

    def finish(self) -> None:
        if self.closed or self.finished:
            return
        try:
            with self._writing():
                self._finish()
        except BaseException:
            self.abort()
            raise
        self.finished = True

    def commit(self) -> None:
        if self.closed:
            return
        self.finish()
        self.closed = True
        self.output.commit()

    def abort(self) -> None:
        if self.closed:
            return
        if not self.finished:
            with contextlib.suppress(Exception):
                self._finish()
        self.closed = True
        self.output.abort()


def _write_failures(method):
    """Run a sink method under :meth:`_FileSink._writing` (a full disk -> OutputError)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self._writing():
            return method(self, *args, **kwargs)

    return wrapper


class ParquetSink(_FileSink):
    """Stream per-query results into one parquet file (long, or wide with ``wide=True``).

    Tables are encoded and written on a background thread (one write in flight), so the
    next chunk is scored meanwhile; :meth:`commit`, :meth:`abort` and :meth:`mark` wait for
    it, and a failed write is raised by the next call.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "res.parquet"
    >>> sink = ParquetSink(out, wide=False, measure_names=["map"])
    >>> sink.write(pl.DataFrame({"run_id": ["r"], "query_id": ["q"], "map": [0.5]}))
    >>> out.exists()
    False
    >>> sink.commit()
    >>> pl.read_parquet(out).get_column("value").to_list()
    [0.5]
    """

    def __init__(self, path, *, wide: bool, measure_names: list[str]) -> None:
        super().__init__(path, wide=wide, measure_names=measure_names)
        self.writer = None
        self.rows = 0
        self._pool = None
        self._pending = None

    def _wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()  # re-raises a failed write

    def _write_table(self, table) -> None:
        import pyarrow.parquet as pq

        if self.writer is None:
            import pyarrow as pa

            # no Arrow schema in the footer: readers see plain text columns, not dictionaries;
            # values are not dictionary-encoded (hashing every float costs more than it saves)
            ids = [f.name for f in table.schema if not pa.types.is_floating(f.type)]
            self.writer = pq.ParquetWriter(str(self.tmp), table.schema, compression="zstd",
                                           store_schema=False, use_dictionary=ids)
        elif not table.schema.equals(self.writer.schema):
            table = table.cast(self.writer.schema)
        self.writer.write_table(table)

    @_write_failures
    def write(self, wide: pl.DataFrame) -> None:
        if wide.height == 0:
            return
        table = self._shape(wide).to_arrow() if self.wide else long_arrow(wide, self.measure_names)
        self._wait()
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(1, thread_name_prefix="fasteval-sink")
        self._pending = self._pool.submit(self._write_table, table)
        self.rows += table.num_rows

    @_write_failures
    def mark(self) -> int:
        self._wait()
        return self.rows

    @_write_failures
    def rollback(self, mark: object) -> None:
        """Keep the first ``mark`` rows: the file so far is rewritten (a rare path)."""
        import pyarrow.parquet as pq

        self._wait()
        keep = int(mark)
        if keep == self.rows:
            return
        old = None
        if self.writer is not None:
            self.writer.close()
            self.writer = None
            old = pq.read_table(str(self.tmp)).slice(0, keep)
        self.rows = 0
        if old is not None and old.num_rows:
            self._write_table(old)
            self.rows = old.num_rows

    def abort(self) -> None:
        if self._pool is not None:  # the write in flight lands before the file is removed
            self._pool.shutdown(wait=True)
            self._pool = None
        super().abort()

    def _finish(self) -> None:
        try:
            self._wait()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
        if self.writer is None:
            self._shape(empty_wide(self.measure_names)).write_parquet(self.tmp)
        else:
            self.writer.close()
            self.writer = None


class CsvSink(_FileSink):
    """Stream per-query results into a CSV file (header once)."""

    def __init__(self, path, *, wide: bool, measure_names: list[str]) -> None:
        super().__init__(path, wide=wide, measure_names=measure_names)
        self.fh = open(self.tmp, "wb")  # noqa: SIM115
        self.header = True
        self.separator = csv_separator(path)

    @_write_failures
    def write(self, wide: pl.DataFrame) -> None:
        if wide.height == 0:
            return
        self._shape(wide).write_csv(self.fh, include_header=self.header, separator=self.separator)
        self.header = False

    @_write_failures
    def mark(self) -> tuple[int, bool]:
        self.fh.flush()
        return self.fh.tell(), self.header

    @_write_failures
    def rollback(self, mark: object) -> None:
        pos, header = mark  # type: ignore[misc]
        self.fh.flush()
        self.fh.seek(pos)
        self.fh.truncate()
        self.header = header

    def _finish(self) -> None:
        if self.header:
            cols = ["run_id", "query_id", *self.measure_names] if self.wide else list(LONG_COLUMNS)
            self.fh.write(pl.DataFrame(schema=dict.fromkeys(cols, pl.Utf8)).write_csv(
                separator=self.separator).encode())
        self.fh.close()


def make_sink(path, fmt: str, *, wide: bool, measure_names: list[str]) -> Sink:
    """A streaming file sink for ``parquet``/``csv``; other formats are kept in memory."""
    if fmt not in FORMATS:
        raise ParameterError("--format", f"one of {', '.join(FORMATS)}", fmt)
    if fmt == "parquet":
        return ParquetSink(path, wide=wide, measure_names=measure_names)
    if fmt == "csv":
        return CsvSink(path, wide=wide, measure_names=measure_names)
    return MemorySink(measure_names)
