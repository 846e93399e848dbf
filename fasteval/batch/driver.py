"""Out-of-core evaluation: score runs larger than memory in query-partitioned chunks.

The qrels are prepared once (an :class:`fasteval.Evaluator`). Each run is read in row
batches and cut into chunks of at most ``max_rows_per_chunk`` rows that never split a
query: a chunk ends at the last query boundary, the rows of the trailing query move
to the next chunk.

* **Grouped input** (all rows of a query adjacent, as in dumps sorted by query) is
  streamed in one pass with no global sort. This is checked as the job goes (a query id
  met again in a later chunk); the first violation switches the job to
* **partitioned input**: one pass writes the rows to ``P`` temporary Arrow files by a hash
  of ``(run_id, query_id)``, then each partition -- whole queries only -- is one chunk.

Chunks are scored with ``complete=False``; with ``complete=True`` the placeholder rows
for qrels queries never seen are added per run at the end (:meth:`Evaluator.fill_missing`).
Per-query values equal the in-memory path exactly: every query is scored whole by
the same kernels.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from fasteval import _stop
from fasteval.batch.discover import RunSource, _kind
from fasteval.batch.sinks import Sink, empty_wide, to_wide
from fasteval.errors import InputError, ParameterError, first_line

BYTES_PER_ROW = 400
"""Estimated peak bytes per run row while a chunk is scored (read + prepare + kernels)."""
DEFAULT_MAX_ROWS = 4_000_000
MIN_AUTO_ROWS = 250_000
MIN_ROWS = 1
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_memory(text: str | int | float) -> int:
    """Parse a memory size such as ``"1GiB"``, ``"512MB"``, ``"2g"`` or ``1073741824`` into bytes.

    Examples
    --------
    >>> parse_memory("1GiB"), parse_memory("1.5 GB"), parse_memory(2048)
    (1073741824, 1500000000, 2048)
    """
    if isinstance(text, int | float) and not isinstance(text, bool):
        value, unit = float(text), ""
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(text))
        if m is None or m.group(2).lower() not in _UNITS:
            raise ParameterError("--memory-limit", "a size such as 512MiB, 1GiB or 2GB", text)
        value, unit = float(m.group(1)), m.group(2).lower()
    size = int(value * _UNITS[unit])
    if size <= 0:
        raise ParameterError("--memory-limit", "a positive size", text)
    return size


def current_rss() -> int:
    """Resident memory of this process in bytes (0 if unknown)."""
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except Exception:  # pragma: no cover - psutil missing
        try:
            with open("/proc/self/statm") as fh:
                import os

                return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except Exception:
            return 0


def rows_for_memory(limit: int, baseline: int | None = None) -> int:
    """Rows per chunk that keep the peak under ``limit`` bytes, given the memory in use now."""
    base = current_rss() if baseline is None else baseline
    free = limit - base
    # keep a share for the per-query results kept for the aggregate and for allocator slack
    rows = int(free * 0.6 / BYTES_PER_ROW)
    # below this, per-chunk fixed costs dominate; the prepared qrels alone may exceed a tiny limit
    return max(rows, MIN_AUTO_ROWS)


@dataclass
class JobStats:
    """What a batch job did: sizes, timing, mode and the evaluator's summed counts."""

    rows: int = 0
    queries: int = 0
    chunks: int = 0
    runs: list[str] = field(default_factory=list)
    mode: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    max_rows_per_chunk: int = 0
    report: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    oversized: tuple[str, object, int] | None = None
    """``(run, query, rows)`` of the largest query that alone had more rows than a chunk
    may hold (it is scored whole, so memory goes past the bound); None if there was none."""
    qrels: str | None = None
    """How a Ray job's workers got the qrels: ``"shared"`` (one prepared copy through the
    object store) or ``"co-partitioned"`` (shuffled with the runs); None on one machine."""
    paths: dict[str, str] = field(default_factory=dict)
    """How a Ray job scored each input (by its label): ``"grouped"`` (where it was read: its
    queries' rows lie together) or ``"shuffled"`` (hash-partitioned by query id)."""
    nodes: dict[str, int] = field(default_factory=dict)
    """Slice tasks of a Ray job per node that ran them (Ray's node ids)."""

    def add_time(self, key: str, seconds: float) -> None:
        self.timings[key] = self.timings.get(key, 0.0) + seconds

    def add_report(self, report: object) -> None:
        for k, v in (_copy_report(report) or {}).items():
            if isinstance(v, int | float) and not isinstance(v, bool):
                self.report[k] = self.report.get(k, 0) + v

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


class _NotGrouped(Exception):
    """A query's rows were found in two chunks: restart partitioned."""


# ---------------------------------------------------------------- reading

_KEEP = ("run_id", "query_id", "doc_id", "score", "rank", "tag")


def iter_frames(source: RunSource, batch_rows: int) -> Iterator[pl.DataFrame]:
    """Yield a source's rows as data frames of about ``batch_rows`` rows, in file order."""
    if source.kind in ("frame", "file"):
        if source.kind == "frame":
            frame = source.frame
            _check_rows(frame, source.name, 0)
        else:
            frame = source.frame if source.frame is not None else _read_file(source)
            source.rows = frame.height
            source.has_run_id = "run_id" in frame.columns
        for start in range(0, frame.height, batch_rows):
            yield frame.slice(start, batch_rows)
        return
    started, source.started = source.started, None
    n = len(source.files)
    for k, (path, hive, columns) in enumerate(zip(source.files, source.hive or [{}] * n, source.maps or [None] * n,
                                                  strict=True)):
        try:
            if k == 0 and started is not None and started[0] == batch_rows:
                batches = started[1]
            else:
                batches = _file_batches(path, batch_rows, columns)
            offset = 0
            for df in batches:
                if "run_id" in hive and "run_id" not in df.columns:
                    df = df.with_columns(pl.lit(hive["run_id"], dtype=pl.Utf8).alias("run_id"))
                df = convert_types(df, str(path), offset)
                _check_rows(df, str(path), offset)
                offset += df.height
                yield df
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise InputError(f"could not read parquet data ({first_line(exc)})", source=str(path)) from None


def convert_types(df: pl.DataFrame, source: str, offset: int) -> pl.DataFrame:
    """Run columns of types :func:`fasteval.read_run` converts, converted as it converts
    them, with its errors (``source``, row counted from ``offset``): integral float or
    decimal ids as Int64 (other types but booleans and nested ones as text), numeric text
    scores as Float64, integral float or text ranks as Int64. Text and integer ids and
    numeric scores, the usual case, are left as they are, untouched.

    Examples
    --------
    >>> df = pl.DataFrame({"query_id": [1.0, 2.0], "doc_id": ["a", "b"], "score": ["0.5", "1"]})
    >>> convert_types(df, "run.parquet", 0).rows()
    [(1, 'a', 0.5), (2, 'b', 1.0)]
    >>> convert_types(df.with_columns(pl.Series("query_id", [1.0, 2.5])), "run.parquet", 10)
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: run.parquet, row 11, column 'query_id': query_id must be a string or an integer, got the float 2.5
    """
    schema = df.schema
    fix = [c for c in ("query_id", "doc_id") if c in schema and not _plain_id(schema[c])]
    if "score" in schema and schema["score"] == pl.String:
        fix.append("score")
    if "rank" in schema and not (schema["rank"].is_integer() or schema["rank"] == pl.Null):
        fix.append("rank")
    if not fix:
        return df
    from fasteval.io._common import normalize_ids, normalize_rank, normalize_score, row_locator

    where = row_locator(offset)
    out = []
    for c in fix:
        s = df.get_column(c)
        if c == "score":
            out.append(normalize_score(s, source=source, where=where))
        elif c == "rank":
            out.append(normalize_rank(s, source=source, where=where))
        else:
            out.append(normalize_ids(s, c, source=source, where=where))
    return df.with_columns(out)


def _plain_id(dtype: pl.DataType) -> bool:
    """Ids the kernels take as they are: integers, text, categorical text."""
    return dtype.is_integer() or dtype == pl.Utf8 or isinstance(dtype, pl.Categorical | pl.Enum)


def _check_rows(df: pl.DataFrame, source: str, offset: int) -> None:
    """Null ids or run ids, before the rows are cut into queries (a null would join a
    neighbouring query), and null or NaN scores while the rows are in file order (input
    not grouped by query is partitioned, which loses the rows' numbers); ``offset``: the
    rows of ``source`` before ``df``."""
    from fasteval.prepare import check_run_table

    try:
        check_run_table(df, source)
    except InputError as exc:
        raise exc.at(source=source, row=(exc.row or 0) + offset) from None


def _read_file(source: RunSource) -> pl.DataFrame:
    """A non-parquet run file, read whole. Standard input, a FIFO or a device is read once
    (:func:`fasteval.io.files.read_once`) and the table kept on the source, for a
    second pass (a job that restarts partitioned). With ``duplicates="keep_best"`` the
    reader keeps every row and the evaluator removes the repeated pairs (the same rows), so
    that the job counts them as it counts those of a parquet run; a repeated pair is
    still refused here, with its line, when duplicates are errors."""
    import fasteval
    from fasteval.io.files import read_once, stream_format

    path = source.files[0]
    data = read_once(path)
    duplicates = "ignore" if source.duplicates == "keep_best" else source.duplicates
    if data is None:
        return fasteval.read_run(path, duplicates=duplicates)
    frame = fasteval.read_run(data, format=stream_format(data.name), duplicates=duplicates)
    source.frame = frame
    return frame


def _file_batches(path: Path, batch_rows: int, columns: dict[str, str] | None = None) -> Iterator[pl.DataFrame]:
    """A parquet file's run columns as data frames of about ``batch_rows`` rows, in file
    order, under their canonical names (``columns``: canonical name -> the file's column,
    :attr:`RunSource.maps`; None: the columns named as such). The read starts now: polars'
    streaming engine reads ahead (a bounded number of batches) while the caller scores the
    previous one."""
    lf = pl.scan_parquet(path, hive_partitioning=False, glob=False)  # a file (bm25[1].parquet is no pattern)
    if columns is None:
        names = lf.collect_schema().names()
        columns = {c: c for c in _KEEP if c in names}
    score = lf.collect_schema()[columns["score"]] if "score" in columns else pl.Float64
    picked = [pl.col(columns[c]).cast(pl.Float64).alias(c)  # decimal or boolean, as read_run
              if c == "score" and (score.is_decimal() or score == pl.Boolean)
              else pl.col(columns[c]).alias(c) for c in _KEEP if c in columns]
    lf = lf.select(picked)
    return lf.collect_batches(chunk_size=batch_rows, maintain_order=True)


READ_BATCH_ROWS = 2_000_000
"""Rows per parquet read batch at most: a few row groups decode in parallel, and a chunk is
a few batches put end to end (not copied). Smaller batches let the allocator reuse the
memory of batches already scored instead of faulting in fresh pages."""


def batch_rows_for(max_rows: int) -> int:
    """Rows per parquet read batch for chunks of ``max_rows`` rows."""
    return max(1, min(int(max_rows), READ_BATCH_ROWS))


def start_reading(source: RunSource, max_rows: int) -> None:
    """Start reading a parquet source's first file in the background (for example while the
    qrels are prepared); :func:`run_job` picks the read up when it uses ``max_rows``. A file
    that cannot be read is left alone here: the job reports it when it gets there."""
    if source.kind != "parquet" or not source.files:
        return
    batch_rows = batch_rows_for(max_rows)
    try:
        source.started = (batch_rows, _file_batches(source.files[0], batch_rows,
                                                     source.maps[0] if source.maps else None))
    except Exception:  # noqa: BLE001 - reported by the job itself
        source.started = None


def _keys(df: pl.DataFrame) -> list[str]:
    return ["run_id", "query_id"] if "run_id" in df.columns else ["query_id"]


def _segment_starts(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The key of the first row of every run of equal keys (unique keys when grouped)."""
    change = pl.any_horizontal([pl.col(k) != pl.col(k).shift(1) for k in keys]).fill_null(True)
    return df.select(keys).filter(change)


def _differing(df: pl.DataFrame, keys: list[str], key: tuple) -> np.ndarray:
    """Indices of the rows of ``df`` whose ``keys`` are not ``key``."""
    same = pl.all_horizontal([pl.col(k) == v for k, v in zip(keys, key, strict=True)])
    return np.flatnonzero(~df.select(same).to_series().to_numpy())


def _last_boundary(df: pl.DataFrame, keys: list[str]) -> int:
    """Index where the trailing query's rows start (0 if the frame is one query)."""
    last = df.select(keys).row(-1)
    window = 4096
    while True:
        start = max(df.height - window, 0)
        differ = _differing(df.select(keys).slice(start), keys, last)
        if differ.size:
            return start + int(differ[-1]) + 1
        if start == 0:
            return 0
        window *= 8


def stream_chunks(frames: Iterator[pl.DataFrame], max_rows: int) -> Iterator[pl.DataFrame]:
    """Cut a stream of frames into chunks of <= ``max_rows`` rows at query boundaries.

    A query larger than ``max_rows`` becomes one (larger) chunk of its own.

    Examples
    --------
    >>> f = pl.DataFrame({"query_id": ["a", "a", "b", "b", "b", "c"], "x": range(6)})
    >>> [c.get_column("query_id").to_list() for c in stream_chunks(iter([f]), 3)]
    [['a', 'a'], ['b', 'b', 'b'], ['c']]
    """
    buf: list[pl.DataFrame] = []
    n = 0
    keys: list[str] | None = None
    for df in frames:
        if df.height == 0:
            continue
        keys = keys or _keys(df)
        buf.append(df)
        n += df.height
        while n > max_rows:
            cat = pl.concat(buf, how="vertical_relaxed") if len(buf) > 1 else buf[0]
            head = cat.slice(0, max_rows + 1)
            cut = _last_boundary(head, keys)
            if cut == 0:  # the first query alone exceeds max_rows: extend to its end
                differ = _differing(cat, keys, cat.select(keys).row(0))
                if differ.size == 0:
                    buf, n = [cat], cat.height
                    break
                cut = int(differ[0])
            yield cat.slice(0, cut)
            rest = cat.slice(cut)
            buf, n = [rest], rest.height
    if n:
        yield pl.concat(buf, how="vertical_relaxed") if len(buf) > 1 else buf[0]


_PARTS_STEM = "fasteval-parts-"


MAX_OPEN_PARTS = 256
"""Temporary part files written at once at most (fewer when the limit on open files is
low: a quarter of it). A job that needs more parts splits in rounds: rows go to at most
this many files, then each file is split again, until every part has its share."""


def open_parts_limit() -> int:
    """Part files :func:`partition_chunks` keeps open at once: :data:`MAX_OPEN_PARTS`, or a
    quarter of this process's limit on open files when that is lower (at least 2)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft == resource.RLIM_INFINITY or soft <= 0:
            return MAX_OPEN_PARTS
    except (ImportError, OSError, ValueError):  # pragma: no cover - no resource module
        return MAX_OPEN_PARTS
    return max(2, min(MAX_OPEN_PARTS, soft // 4))


def partition_chunks(
    frames: Iterator[pl.DataFrame], n_parts: int, tmp_dir: str | None = None,
    max_open: int | None = None,
) -> Iterator[pl.DataFrame]:
    """Hash-partition rows by query into ``n_parts`` temporary Arrow files; yield each part.

    Every query's rows end up in one part, in their input order. At most ``max_open``
    files (default :func:`open_parts_limit`) are written at once: more parts are made in
    rounds, each file of a round split again by further digits of the same hash.
    """
    from fasteval.io.atomic import remove_stale, temp_prefix

    fan = open_parts_limit() if max_open is None else max(2, int(max_open))
    # a job killed hard leaves its folder; the next partitioned job removes it (dead writer)
    remove_stale(tmp_dir or tempfile.gettempdir(), _PARTS_STEM, holds=("*.arrow",))
    with tempfile.TemporaryDirectory(prefix=temp_prefix(_PARTS_STEM), dir=tmp_dir) as tmp:
        yield from _split(_hashed(frames), max(1, int(n_parts)), Path(tmp), fan, 1, "")


def _hashed(frames: Iterator[pl.DataFrame]) -> Iterator[pl.DataFrame]:
    """``frames`` with a ``_hash`` column: the hash of each row's ``(run_id, query_id)``;
    small frames are put together up to :data:`SPLIT_READ_ROWS` rows (cut into many
    parts, a frame of a few rows would be many tiny writes)."""
    for group in _gathered((df for df in frames if df.height), len):
        yield _with_hash(group)


def _gathered(items: Iterator, rows: Callable[..., int]) -> Iterator[list]:
    """``items`` in consecutive groups of up to :data:`SPLIT_READ_ROWS` rows (``rows``: an
    item's rows; an item of more rows is a group of its own)."""
    group: list = []
    total = 0
    for item in items:
        n = rows(item)
        if group and total + n > SPLIT_READ_ROWS:
            yield group
            group, total = [], 0
        group.append(item)
        total += n
    if group:
        yield group


def _with_hash(group: list[pl.DataFrame]) -> pl.DataFrame:
    df = _uniform(pl.concat(group, how="vertical_relaxed") if len(group) > 1 else group[0])
    return df.with_columns(pl.struct(_keys(df)).hash(seed=7).alias("_hash"))


_SMALL_INTS = (pl.Int8, pl.Int16, pl.Int32, pl.UInt8, pl.UInt16, pl.UInt32)


def _uniform(df: pl.DataFrame) -> pl.DataFrame:
    """One type per column whatever file a frame came from, before rows are hashed and
    written to part files: the hash of an id depends on its type (an Int32 query id of
    one parquet file and the same Int64 id of another went to different parts, and the
    query was scored twice), a part file holds one dictionary per column (categorical
    columns), and the first frame's types are those of the part files (a Float32 score
    column first would round the Float64 scores of later files). So categorical columns
    become text, smaller integer ids Int64, scores Float64."""
    casts = []
    for name, dtype in df.schema.items():
        if isinstance(dtype, pl.Categorical | pl.Enum):
            casts.append(pl.col(name).cast(pl.Utf8))
        elif name in ("query_id", "doc_id", "run_id", "rank") and dtype in _SMALL_INTS:
            casts.append(pl.col(name).cast(pl.Int64))
        elif name == "score" and dtype != pl.Float64 and dtype.is_numeric():
            casts.append(pl.col(name).cast(pl.Float64))
    return df.with_columns(casts) if casts else df


def _split(frames: Iterator[pl.DataFrame], n_parts: int, folder: Path, fan: int, stride: int,
           label: str) -> Iterator[pl.DataFrame]:
    """Write ``frames`` to ``k = min(n_parts, fan)`` files by ``(_hash // stride) % k``,
    then yield each file's rows (the last round writes them without ``_hash``), or, when
    ``n_parts > k``, the parts of each file split again ``ceil(n_parts / k)`` ways by the
    next digits of the hash."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    k = min(n_parts, fan)
    again = math.ceil(n_parts / k)
    digit = (pl.col("_hash") // stride) % k if stride > 1 else pl.col("_hash") % k
    writers: dict[int, ipc.RecordBatchFileWriter] = {}
    schema: pa.Schema | None = None
    opts = ipc.IpcWriteOptions(compression="lz4")
    try:
        for df in frames:
            df = df.with_columns(digit.alias("_part"))
            if again == 1:  # the last round: the files are the parts
                df = df.drop("_hash")
            for (p,), sub in df.partition_by(
                "_part", as_dict=True, include_key=False, maintain_order=True
            ).items():
                table = sub.to_arrow()
                if schema is None:
                    schema = table.schema
                elif table.schema != schema:
                    table = table.cast(schema)
                if p not in writers:
                    writers[p] = ipc.new_file(str(folder / f"{label}{p}.arrow"), schema, options=opts)
                writers[p].write_table(table)
    finally:
        for w in writers.values():
            w.close()
    for p in sorted(writers):
        path = folder / f"{label}{p}.arrow"
        if again > 1:
            yield from _split(_file_frames(path), again, folder, fan, stride * k, f"{label}{p}-")
            path.unlink()
            continue
        with pa.memory_map(str(path)) as src:
            table = ipc.open_file(src).read_all()
        df = pl.from_arrow(table)
        del table
        path.unlink()
        yield df


def _file_frames(path: Path) -> Iterator[pl.DataFrame]:
    """The rows of an Arrow file written by :func:`_split`, in order, as frames of the
    file's record batches put together up to :data:`SPLIT_READ_ROWS` rows (a batch may
    be one input frame's share of a part: a few rows)."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    with pa.memory_map(str(path)) as src:
        reader = ipc.open_file(src)
        batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
        for group in _gathered(batches, lambda batch: batch.num_rows):
            yield pl.from_arrow(pa.Table.from_batches(group))


SPLIT_READ_ROWS = 65_536
"""Rows read at a time from a part file that is split again (:func:`_file_frames`)."""


# ---------------------------------------------------------------- the job


def _seen_by_run(starts: pl.DataFrame, default_run: str) -> dict[str, pl.Series]:
    if "run_id" not in starts.columns:
        return {default_run: starts.get_column("query_id").unique(maintain_order=True)}
    return {str(rid): sub.get_column("query_id").unique(maintain_order=True)
            for (rid,), sub in starts.partition_by("run_id", as_dict=True, maintain_order=True).items()}


def run_job(
    evaluator,
    sources: list[RunSource],
    sink: Sink | None = None,
    *,
    complete: bool = False,
    max_rows_per_chunk: int | None = None,
    memory_limit: int | str | None = None,
    collect_wide: bool = True,
    progress: Callable[[int, int], None] | None = None,
    tmp_dir: str | None = None,
) -> tuple[pl.DataFrame | None, JobStats]:
    """Score every source with ``evaluator``, chunk by chunk, streaming results into ``sink``.

    Parameters
    ----------
    evaluator : fasteval.Evaluator
        Prepared qrels and measures.
    sources : list of RunSource
        From :func:`fasteval.batch.discover.discover_all`.
    sink : Sink, optional
        Receives the per-query long results of every chunk (nothing is kept if None).
    complete : bool
        Add the trec_eval ``-c`` placeholder rows for qrels queries missing from a run.
    max_rows_per_chunk : int, optional
        Rows per chunk; by default derived from ``memory_limit`` (or 4 M rows).
    memory_limit : int or str, optional
        Peak-memory budget (``"1GiB"``); sets ``max_rows_per_chunk`` when that is not given.
    collect_wide : bool
        Keep the per-query values (one column per measure) for the aggregate.
    progress : callable, optional
        Called as ``progress(rows, queries)`` after each chunk.

    Returns
    -------
    (wide, stats)
        ``wide``: per-query values ``(run_id, query_id, <measure>...)`` when ``collect_wide``;
        ``stats``: :class:`JobStats`.
    """
    t0 = time.perf_counter()
    max_rows = _chunk_rows(max_rows_per_chunk, memory_limit)
    stats = JobStats(max_rows_per_chunk=max_rows)
    measure_names = list(evaluator.measure_names)
    wide_parts: list[pl.DataFrame] = []
    kinds: dict[str, str] = {}

    def emit(wide: pl.DataFrame) -> None:
        if wide.height == 0:
            return
        if sink is not None:
            sink.write(wide)
        if collect_wide:
            wide_parts.append(wide)

    def emit_timed(wide: pl.DataFrame) -> None:  # results go out chunk by chunk
        t_write = time.perf_counter()
        emit(wide)
        stats.add_time("write", time.perf_counter() - t_write)

    for source in sources:
        score = functools.partial(_score, evaluator, source=source, measure_names=measure_names,
                                  progress=progress, emit=emit_timed, stats=stats,
                                  max_rows=max_rows, kinds=kinds)
        mode, (outs, seen, rows, queries, chunks) = _score_source(score, source, sink, wide_parts,
                                                                  max_rows, tmp_dir)
        _add_counts(stats, source, outs, rows, queries, chunks, complete)
        _add_runs(evaluator, stats, source, seen, mode, complete,
                  lambda fill: emit(to_wide(fill, measure_names)))
    stats.seconds = time.perf_counter() - t0
    wide = None
    if collect_wide:
        wide = pl.concat(wide_parts, how="vertical_relaxed") if wide_parts else empty_wide(measure_names)
        if _fast_path(evaluator) and wide.height:
            wide = evaluate_order(evaluator, wide, stats.runs, kinds)
    return wide, stats


def _chunk_rows(max_rows_per_chunk: int | None, memory_limit: int | str | None) -> int:
    """Rows per chunk: ``max_rows_per_chunk``, else what ``memory_limit`` allows, else
    :data:`DEFAULT_MAX_ROWS`."""
    if max_rows_per_chunk is None:
        if memory_limit is not None:
            max_rows_per_chunk = rows_for_memory(parse_memory(memory_limit))
        else:
            max_rows_per_chunk = DEFAULT_MAX_ROWS
    if isinstance(max_rows_per_chunk, bool) or not isinstance(max_rows_per_chunk, int | np.integer) or max_rows_per_chunk < MIN_ROWS:
        raise ParameterError("max_rows_per_chunk", "a positive integer", max_rows_per_chunk)
    return int(max_rows_per_chunk)


def _score_source(score: Callable, source: RunSource, sink: Sink | None,
                  wide_parts: list[pl.DataFrame], max_rows: int,
                  tmp_dir: str | None) -> tuple[str, tuple]:
    """``score`` (:func:`_score` bound to a job and ``source``) over ``source``, and how it was
    read. A source streams (grouped input) or, once a query shows up in two chunks, is
    re-read hash-partitioned: what it wrote so far is taken back first, so a restart never
    leaves partial rows in the output."""
    at_sink = sink.mark() if sink is not None else None
    at_parts = len(wide_parts)
    try:
        frames = iter_frames(source, batch_rows_for(max_rows))
        return "stream", score(stream_chunks(frames, max_rows), check_grouped=True)
    except _NotGrouped:
        if sink is not None:
            sink.rollback(at_sink)
        del wide_parts[at_parts:]
    return "partition", _score_partitioned(score, source, max_rows, tmp_dir)


def _score_partitioned(score: Callable, source: RunSource, max_rows: int,
                       tmp_dir: str | None) -> tuple:
    """``score`` over ``source`` re-read hash-partitioned; its runs in input order (the
    parts come in hash order)."""
    total = source.rows if source.rows > 0 else max_rows
    n_parts = max(2, math.ceil(total * 1.25 / max_rows))
    first_met: dict[str, None] = {}
    frames = _note_runs(iter_frames(source, batch_rows_for(max_rows)), first_met)
    parts = partition_chunks(frames, n_parts, tmp_dir)
    try:
        outs, seen, rows, queries, chunks = score(parts, check_grouped=False)
    finally:
        # its folder of part files is removed now, also when a part fails: the
        # command ends its process without running finalizers
        parts.close()
    seen = {r: seen[r] for r in [*first_met, *seen] if r in seen}
    return outs, seen, rows, queries, chunks


def _add_counts(stats: JobStats, source: RunSource, outs: list, rows: int, queries: int,
                chunks: int, complete: bool) -> None:
    """A source's per-chunk counts into ``stats`` ("missing" ones are per run: _add_runs);
    a warning when none of its queries is in the qrels."""
    for rep in outs:
        if rep:
            stats.add_report({k: v for k, v in rep.items() if k not in ("missing_from_run", "filled")})
    stats.rows += rows
    stats.queries += queries
    stats.chunks += chunks
    counted = [rep["evaluated"] for rep in outs if rep and "evaluated" in rep]
    if rows > 0 and not complete and counted and not sum(counted):
        import warnings

        from fasteval.errors import DataWarning

        warnings.warn(DataWarning(
            f"{_label(source)}: none of its queries is in the qrels, so it has no results "
            "(are these the qrels of this run? -c scores the qrels queries as empty rankings)"),
            stacklevel=3)


def _add_runs(evaluator, stats: JobStats, source: RunSource, seen: dict[str, pl.Series],
              mode: str, complete: bool, emit_fill: Callable[[pl.DataFrame], None]) -> None:
    """A source's runs into ``stats`` (a name given twice is refused), with the queries each
    lacks: filled (``complete``: their rows go to ``emit_fill``) or counted missing."""
    fast = _fast_path(evaluator)
    for rid in seen:
        if rid in stats.runs:  # an earlier input held a run of this name: rows would merge
            raise InputError(f"run {rid!r} is also in an earlier input; each run may be "
                             "given once", source=_label(source))
    for rid, qids in seen.items():
        if rid not in stats.runs:
            stats.runs.append(rid)
        stats.mode[rid] = mode
        if complete:
            fill = evaluator.fill_missing(qids, rid)
            n_fill = fill.get_column("query_id").n_unique()
            stats.add_report({"filled": n_fill, "missing_from_run": n_fill, "evaluated": n_fill})
            emit_fill(fill)
        elif fast:
            stats.add_report({"missing_from_run": len(evaluator.qrels.query_ids) - len(qids)})


def _note_runs(frames: Iterator[pl.DataFrame], met: dict[str, None]) -> Iterator[pl.DataFrame]:
    """Pass ``frames`` on, noting in ``met`` the names in their ``run_id`` column in order of
    first appearance."""
    for df in frames:
        if "run_id" in df.columns:
            for rid in df.get_column("run_id").unique(maintain_order=True).to_list():
                met.setdefault(str(rid), None)
        yield df


def query_positions(evaluator, kind: str) -> pl.DataFrame:
    """``(query_id, _qidx)``: where :func:`fasteval.evaluate` lists each qrels query in the
    results of a run whose query ids are of ``kind`` (``"str"``, ``"int"``). For ids of the
    qrels' own kind, and for integer ids against text qrels (matched by their decimal
    spelling in the qrels' own index), that is the qrels' order; for text ids against
    integer qrels it is the order of a one-document run of every qrels query, prepared by
    ``evaluator`` (the qrels re-indexed as text)."""
    qids = evaluator.qrels.query_ids
    if kind != "str" or _kind(qids.dtype) != "int":
        return pl.DataFrame({"query_id": qids, "_qidx": np.arange(len(qids), dtype=np.int64)})
    doc = pl.Series("doc_id", ["0"] * len(qids), dtype=pl.Utf8)
    if _kind(evaluator.qrels.doc_ids.dtype) == "int":
        doc = doc.cast(pl.Int64)
    probe = pl.DataFrame({"query_id": qids.cast(pl.Utf8), "doc_id": doc,
                          "score": pl.Series([0.0] * len(qids), dtype=pl.Float64)})
    from fasteval.prepare import prepare_run

    batch = prepare_run(evaluator.qrels, probe, complete=False, check_scores=False)
    order = np.asarray(batch.qidx, dtype=np.int64)
    return pl.DataFrame({"query_id": qids.gather(order), "_qidx": np.arange(len(order), dtype=np.int64)})


def evaluate_order(evaluator, wide: pl.DataFrame, runs: list[str], kinds: dict[str, str]) -> pl.DataFrame:
    """Per-query rows in :func:`fasteval.evaluate`'s order: runs in ``runs`` order, each
    run's queries (filled ones among them) in the order the in-memory path lists them.
    Aggregates add the values in row order, so this order makes them equal to the in-memory
    ones bit for bit, however the input was chunked or partitioned."""
    rank = {r: i for i, r in enumerate(runs)}
    positions: dict[str, pl.DataFrame] = {}
    parts = []
    for (rid,), part in wide.partition_by("run_id", as_dict=True, maintain_order=True).items():
        kind = kinds.get(str(rid), "")
        if kind not in positions:
            positions[kind] = query_positions(evaluator, kind)
        pos = positions[kind]
        if pos.schema["query_id"] != part.schema["query_id"]:
            pos = pos.with_columns(pl.col("query_id").cast(part.schema["query_id"]))
        ordered = (part.join(pos, on="query_id", how="left", maintain_order="left")
                   .sort("_qidx", maintain_order=True, nulls_last=True).drop("_qidx"))
        parts.append((rank.get(str(rid), len(rank)), ordered))
    parts.sort(key=lambda p: p[0])
    return pl.concat([p for _, p in parts], how="vertical_relaxed")


def _score(evaluator, chunks, source: RunSource, measure_names, *, check_grouped: bool, progress,
           emit: Callable[[pl.DataFrame], None], stats: JobStats, max_rows: int,
           kinds: dict[str, str]):
    """Score chunks; each chunk's results (wide frames) are passed to ``emit``.

    Returns ``(reports, seen, rows, queries, n_chunks)`` where ``seen`` maps each run name to
    the query ids met in it. With ``check_grouped``, a query met in two chunks raises
    :class:`_NotGrouped` (on the fast path also a query without judgments, which would be
    counted as dropped twice). A query alone larger than ``max_rows`` is recorded in
    ``stats.oversized``. ``kinds`` receives the kind of each run's query ids
    (``"str"``, ``"int"``), which decides the order :func:`fasteval.evaluate` lists them in.
    """
    fast = _fast_path(evaluator)
    masks: dict[str, np.ndarray] = {}  # fast path: qrels queries seen, per run
    dropped: dict[str, pl.Series] = {}  # fast path: queries without judgments met, per run
    reports: list = []
    starts = None if fast else _Starts(check_grouped)
    rows = queries = n = 0
    clock = time.perf_counter()
    for chunk in chunks:
        _stop.check()  # a SIGTERM that compiled code swallowed stops the job here
        now = time.perf_counter()
        stats.add_time("read", now - clock)
        keys = _keys(chunk)
        st = starts.add(chunk, keys) if starts is not None else None
        if chunk.height > max_rows:
            _note_oversized(chunk, keys, source.name, max_rows, stats)
        try:
            produced, counted = _chunk_results(evaluator, chunk, source.name, measure_names,
                                               check_grouped, kinds, masks, dropped, reports)
        except InputError as exc:
            raise _relabel(exc, source, rows if check_grouped else None) from None
        except ParameterError:
            # a rule on a whole query (a -M cut inside a tie group with tie_break="expected")
            # may fail on part of a query that continues in a later chunk: read partitioned,
            # where every query is whole, and the rule is checked again there
            if check_grouped:
                raise _NotGrouped from None
            raise
        rows += chunk.height
        counted += st.height if st is not None else 0
        queries += counted
        n += 1
        stats.add_time("evaluate", time.perf_counter() - now)
        for wide in produced:
            emit(wide)
        clock = time.perf_counter()
        if progress is not None:
            progress(chunk.height, counted)
    if starts is None:
        qq = evaluator.qrels.query_ids
        seen = {name: qq.filter(pl.Series(mask)) for name, mask in masks.items()}
        return reports, seen, rows, queries, n
    seen, distinct = starts.seen(n, source.name)
    return reports, seen, rows, queries if distinct is None else distinct, n


def _chunk_results(evaluator, chunk: pl.DataFrame, name: str, measure_names: list[str],
                   check_grouped: bool, kinds: dict[str, str],
                   masks: dict[str, np.ndarray], dropped: dict[str, pl.Series],
                   reports: list) -> tuple[list[pl.DataFrame], int]:
    """One chunk scored: its wide results (one frame per run) and, on the fast path, the
    queries it counts; its reports appended to ``reports``, each run's kind of query ids to
    ``kinds``. On the fast path with ``check_grouped``, a query met again (or a query
    without judgments met again) raises :class:`_NotGrouped`."""
    fast = _fast_path(evaluator)
    nq = len(evaluator.qrels.query_ids) if fast else 0
    produced = []
    counted = 0
    _check_integer_ids(chunk)
    for run, wide, rep, qidx, table, lacking in _evaluate_chunk(evaluator, chunk, name,
                                                               measure_names):
        if run not in kinds:
            kinds[run] = _kind(table.schema["query_id"])
        if fast:
            mask = masks.setdefault(run, np.zeros(nq, dtype=bool))
            if check_grouped and mask[qidx].any():
                raise _NotGrouped
            mask[qidx] = True
            if check_grouped and lacking is not None and len(lacking):
                _check_dropped_once(dropped, run, lacking)
            counted += len(qidx) + (rep or {}).get("dropped_not_in_qrels", 0)
        produced.append(wide)
        reports.append(rep)
    return produced, counted


class _Starts:
    """The query starts of a source's chunks off the fast path; with ``check_grouped``,
    :class:`_NotGrouped` as soon as a query is met in two chunks."""

    def __init__(self, check_grouped: bool) -> None:
        self.check_grouped = check_grouped
        self.parts: list[pl.DataFrame] = []
        self.prev: pl.DataFrame | None = None
        self.suspicious = False

    def add(self, chunk: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
        """The starts of ``chunk`` (its distinct query keys without the check)."""
        if self.check_grouped:
            # interleaved queries inside a chunk are harmless while it is the only chunk;
            # with a second chunk they predict splits, so switch to partitioning early
            if self.suspicious:
                raise _NotGrouped
            st = _segment_starts(chunk, keys)
            self.suspicious = st.height != st.unique().height
            if self.prev is not None and st.join(self.prev, on=keys, how="semi").height:
                raise _NotGrouped
            self.prev = st
        else:
            st = chunk.select(keys).unique(maintain_order=True)
        self.parts.append(st)
        return st

    def seen(self, n: int, name: str) -> tuple[dict[str, pl.Series], int | None]:
        """The query ids met in each run (after ``n`` chunks), and the number of distinct
        queries when the one chunk counted a query once per segment (else None)."""
        starts = (
            pl.concat(self.parts, how="vertical_relaxed")
            if self.parts
            else pl.DataFrame(schema={"query_id": pl.Utf8})
        )
        if self.check_grouped and n > 1 and starts.height != starts.unique().height:
            raise _NotGrouped
        distinct = None
        if self.suspicious:  # a single chunk: its keys were counted once per segment
            starts = starts.unique(maintain_order=True)
            distinct = starts.height
        return _seen_by_run(starts, name), distinct


def _check_dropped_once(dropped: dict[str, pl.Series], name: str, lacking: pl.Series) -> None:
    """Remember ``lacking``, the queries of run ``name`` in a chunk that the qrels lack (as
    the preparation found them: distinct, ids as compared with the qrels' ones); raise
    :class:`_NotGrouped` when one of them was met in an earlier chunk, where it was counted
    as dropped already."""
    ids = lacking.cast(pl.Utf8)
    before = dropped.get(name)
    if before is not None:
        if ids.is_in(before.implode()).any():
            raise _NotGrouped
        ids = pl.concat([before, ids])
    dropped[name] = ids


def _note_oversized(chunk: pl.DataFrame, keys: list[str], default_run: str, max_rows: int,
                    stats: JobStats) -> None:
    """Record the chunk's largest query in ``stats.oversized`` when it alone has more than
    ``max_rows`` rows (only chunks over the bound get here: one query, or a partition)."""
    sizes = chunk.group_by(keys).len(name="_rows").sort("_rows", descending=True)
    top = sizes.row(0, named=True)
    rows = int(top["_rows"])
    if rows > max_rows and (stats.oversized is None or rows > stats.oversized[2]):
        stats.oversized = (str(top.get("run_id", default_run)), top["query_id"], rows)


_INT64 = (-(2**63), 2**63 - 1)
_FITS_INT64 = (*_SMALL_INTS, pl.Int64)


def _check_integer_ids(chunk: pl.DataFrame) -> None:
    """Refuse integer ids outside the signed 64-bit range (unsigned 64-bit parquet columns):
    the kernels key integer ids as int64, where they would wrap onto other ids."""
    for col in ("query_id", "doc_id"):
        if col not in chunk.columns:
            continue
        s = chunk.get_column(col)
        if not s.dtype.is_integer() or s.dtype in _FITS_INT64 or not len(s):
            continue
        bad = s > _INT64[1]
        if s.dtype.is_signed_integer():
            bad = bad | (s < _INT64[0])
        if bad.any():
            i = int(bad.arg_true()[0])
            raise InputError(
                f"{col} does not fit in a signed 64-bit integer: {s[i]}; integer ids must lie "
                f"within {_INT64[0]}..{_INT64[1]} (store larger ids as text)",
                row=i, column=col,
            )


def _label(source: RunSource) -> str:
    if source.kind == "frame":
        return source.name
    if len(source.files) == 1:
        return str(source.files[0])
    return str(source.files[0].parent)


def _relabel(exc: InputError, source: RunSource, offset: int | None) -> InputError:
    """Point an error raised on a chunk at the source and its row. An error on one run's
    rows of a parquet chunk (a run_id column splits a chunk into runs, and a partitioned
    read loses the file's order) is found in the file by the failing row's run, query and
    document (:func:`_row_in_source`); otherwise the row is the chunk's offset when the
    file's order is kept."""
    if exc.source not in (None, "run"):
        return exc
    if exc.row is not None:
        found = _row_in_source(source, getattr(exc, "_row_key", None))
        if found is not None:
            return exc.at(source=found[0], row=found[1])
    row = exc.row + offset if (offset is not None and exc.row is not None) else None
    return exc.at(source=_label(source), row=row)


def _note_row_key(exc: InputError, name: str, table: pl.DataFrame) -> None:
    """Keep on ``exc`` what finds its row again in the file when the rows were
    partitioned: the run, the query, the document and which of that triple's rows in the
    run's part of the chunk it is (a part keeps the file's order within a query)."""
    row = exc.row
    if row is None or not 0 <= row < table.height or "doc_id" not in table.columns:
        return
    try:
        q, d = table["query_id"][row], table["doc_id"][row]
        head = table.slice(0, row + 1)
        k = head.filter((pl.col("query_id") == q) & (pl.col("doc_id") == d)).height - 1
        exc._row_key = (name, q, d, k)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a hint for the message only
        return


def _row_in_source(source: RunSource, key) -> tuple[str, int] | None:
    """``(file, row)`` of a parquet source's row of :func:`_note_row_key`'s ``key``, or None
    (another kind of source, or not found)."""
    if key is None or source.kind != "parquet":
        return None
    name, q, d, k = key
    try:
        for i, path in enumerate(source.files):
            hive = source.hive[i] if i < len(source.hive) else {}
            if "run_id" in hive and str(hive["run_id"]) != name:  # another run's folder
                continue
            cols = source.maps[i] if source.maps else {}
            lf = pl.scan_parquet(path, hive_partitioning=False, glob=False).with_row_index("_row")
            cond = (pl.col(cols.get("query_id", "query_id")) == q) & (
                pl.col(cols.get("doc_id", "doc_id")) == d)
            if "run_id" not in hive and ("run_id" in cols or "run_id" in lf.collect_schema().names()):
                cond = cond & (pl.col(cols.get("run_id", "run_id")).cast(pl.Utf8) == name)
            rows = lf.filter(cond).select("_row").collect()["_row"].to_list()
            if k < len(rows):
                return str(path), int(rows[k])
            k -= len(rows)
    except Exception:  # noqa: BLE001 - the message keeps the file without a row
        return None
    return None


def _fast_path(evaluator) -> bool:
    return all(hasattr(evaluator, a) for a in ("prepare", "score", "qrels")) and hasattr(
        getattr(evaluator, "qrels", None), "query_ids"
    )


def _evaluate_chunk(evaluator, chunk: pl.DataFrame, default_run: str, measure_names: list[str]):
    """Yield ``(run, wide, report, qidx, rows, dropped)`` per run in the chunk (one row per
    query, one column per measure; ``qidx``: the qrels indices of the queries scored, None on
    the generic path; ``rows``: the run's rows of the chunk; ``dropped``: its queries that the
    qrels lack, None on the generic path)."""
    if not _fast_path(evaluator):  # any object with the Evaluator interface
        run_id = None if "run_id" in chunk.columns else default_run
        long = evaluator.evaluate(chunk, run_id=run_id, complete=False)
        yield (default_run, to_wide(long, measure_names), _copy_report(getattr(evaluator, "report", None)),
               None, chunk, None)
        return
    from fasteval.prepare import check_run_table

    check_run_table(chunk)  # null ids / run_id, NaN scores: rows counted in the chunk (_relabel)
    if "run_id" in chunk.columns:
        parts = [(str(k[0]), v) for k, v in chunk.partition_by("run_id", as_dict=True, maintain_order=True).items()]
    else:
        parts = [(default_run, chunk)]
    for name, table in parts:
        try:
            batch = evaluator.prepare(table, complete=False, check_scores=False)
        except InputError as exc:
            _note_row_key(exc, name, table)
            raise
        values = evaluator.score(batch)
        n = values.shape[0]
        cols = {
            "run_id": pl.repeat(name, n, dtype=pl.Utf8, eager=True),
            "query_id": evaluator.qrels.query_ids.gather(batch.qidx),
        }
        for j, m in enumerate(measure_names):
            cols[m] = pl.Series(m, np.ascontiguousarray(values[:, j]), dtype=pl.Float64)
        yield name, pl.DataFrame(cols), _copy_report(batch.report), batch.qidx, table, batch.dropped_ids


def _copy_report(report):
    if report is None:
        return None
    if dataclasses.is_dataclass(report):
        return dataclasses.asdict(report)
    if isinstance(report, dict):
        return dict(report)
    return dict(vars(report))


def aggregate_wide(wide: pl.DataFrame, measure_names: list[str], aggregate=None) -> pl.DataFrame:
    """Aggregate per-query values kept wide (one column per measure) into long
    ``(run_id, measure, value)`` rows, runs in order of appearance, measures in the given order.

    By default each measure is aggregated as :func:`fasteval.aggregate` does it (mean, sum for
    counts, geometric mean for ``gm_*``, from the exact sum of the values rounded once, so in
    any row order), straight from the wide columns (nulls left out; a measure without a value
    for a run gives no row): the same numbers, without building the long table. A custom
    ``aggregate`` is applied to the long rows of one measure at a time.

    Examples
    --------
    >>> w = pl.DataFrame({"run_id": ["r", "r"], "query_id": ["a", "b"], "map": [0.5, 1.0],
    ...                   "num_ret": [10.0, 20.0]})
    >>> aggregate_wide(w, ["map", "num_ret"]).rows()
    [('r', 'map', 0.75), ('r', 'num_ret', 30.0)]
    """
    if aggregate is None and measure_names:
        from fasteval.measures.aggregate import finish_table, table_partials

        runs = wide.select(pl.col("run_id").cast(pl.Utf8), *measure_names)
        return finish_table(table_partials(runs, measure_names))  # run-major, measures in order
    if aggregate is None:
        import fasteval

        aggregate = fasteval.aggregate
    parts = []
    for m in measure_names:
        long = wide.select(
            pl.col("run_id"), pl.col("query_id"), pl.lit(m).alias("measure"), pl.col(m).alias("value")
        ).filter(pl.col("value").is_not_null())
        parts.append(aggregate(long))
    if not parts:
        return pl.DataFrame(schema={"run_id": pl.Utf8, "measure": pl.Utf8, "value": pl.Float64})
    agg = pl.concat(parts, how="vertical_relaxed")
    order = {r: i for i, r in enumerate(wide.get_column("run_id").unique(maintain_order=True).to_list())}
    morder = {m: i for i, m in enumerate(measure_names)}
    return (
        agg.with_columns(
            pl.col("run_id").replace_strict(order, default=len(order), return_dtype=pl.Int64).alias("_r"),
            pl.col("measure").replace_strict(morder, default=len(morder), return_dtype=pl.Int64).alias("_m"),
        )
        .sort(["_r", "_m"], maintain_order=True)
        .drop(["_r", "_m"])
    )
