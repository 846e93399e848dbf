"""The work of the Ray engine's tasks, and the driver's sum of what they report.

A Ray job scores each input on one of two paths (:mod:`fasteval.batch.ray_engine` picks):

* **where it is read** (``"grouped"``): a task reads a slice of an input (whole parquet row
  groups, or a part of a table in memory), checks that each of its queries' rows lie
  together, scores the queries it holds whole, writes their per-query rows itself (or hands
  them back when the caller wants them in memory) and returns a small
  :class:`SliceReport`: counts, the qrels queries it scored (a bit set), the queries the
  qrels lack, exact partial sums of every measure (:mod:`fasteval.measures.aggregate`) and
  the rows of the first and last query of the slice, which may continue in the next slice.
  The driver joins those edge queries across slices and scores them itself (a few rows per
  slice). A query met in two slices (a set bit met twice, an unjudged query met twice, a
  query key met twice inside a slice) means the input is not grouped: the job scores that
  input again through the hash shuffle;
* **shuffled** (``"shuffled"``): Ray Data's hash shuffle on the query id, for inputs whose
  queries are scattered (and for co-partitioned qrels).

Per-query values are those of :meth:`fasteval.Evaluator.score` on whole queries, so they
are bit-identical to one process; aggregates are exact sums rounded once, so they do not
depend on which task scored which query.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from fasteval.batch.driver import _check_integer_ids, _check_rows, convert_types
from fasteval.batch.sinks import empty_wide, to_long
from fasteval.errors import InputError, first_line

DTYPES = {"int": pl.Int64, "str": pl.Utf8, "float": pl.Float64}
_PER_RUN_KEYS = ("missing_from_run", "filled")
PART_PREFIX = "part-"
INPROGRESS = ".inprogress.parquet"
"""Suffix of a part file being written (a task that dies leaves one; the driver removes them)."""


def report_keys() -> tuple[str, ...]:
    """The counts of :class:`fasteval.prepare.Report` that slices add up (as the batch job does)."""
    import dataclasses

    from fasteval.prepare import Report

    return tuple(f.name for f in dataclasses.fields(Report) if f.name not in _PER_RUN_KEYS)


def frame_of(table) -> pl.DataFrame:
    """An Arrow table as a polars one."""
    df = pl.from_arrow(table)
    if not isinstance(df, pl.DataFrame):  # from_arrow on a Table always gives one
        raise TypeError(f"expected a polars DataFrame, got {type(df).__name__}")
    return df


def check_part(df: pl.DataFrame, *, path: str, file_row0: int, label: str, src_row0: int) -> None:
    """The single-machine checks of a part, with its errors: null ids and run ids (the file
    and the row in it), integer ids past int64 and null or NaN scores (the input and the row
    in it, as the single-machine path counts them)."""
    from fasteval.prepare import check_run_table

    _check_rows(df, path, file_row0)
    try:
        _check_integer_ids(df)
        check_run_table(df, label)
    except InputError as exc:
        raise exc.at(source=label, row=None if exc.row is None else exc.row + src_row0) from None


def read_slice(task: dict, spec: dict, table=None) -> pl.DataFrame:
    """The checked rows of a slice: ``run_id`` (when the input names runs), the kept run
    columns under their canonical names, in input order.

    ``task``: ``file``, ``row0`` (first row in the file), ``rows`` (whole row groups) and
    ``srow0`` (first row in the input) for parquet; ``table`` (an Arrow table, already
    checked) for a table in memory."""
    if table is not None:
        return frame_of(table)
    path = spec["files"][task["file"]]
    columns = spec["columns"][task["file"]]  # canonical name -> the file's column
    try:  # polars reads only the row groups the slice covers
        df = (pl.scan_parquet(path, hive_partitioning=False, glob=False).slice(task["row0"], task["rows"])
              .select([pl.col(col).alias(canon) for canon, col in columns.items()]).collect())
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"could not read parquet data ({first_line(exc)})", source=path) from None
    runs = spec["hive_runs"]
    if runs is not None and "run_id" not in df.columns:
        df = df.with_columns(pl.lit(runs[task["file"]], dtype=pl.Utf8).alias("run_id"))
    df = convert_types(df, path, task["row0"])
    check_part(df, path=path, file_row0=task["row0"], label=spec["label"], src_row0=task["srow0"])
    return df


def with_runs(df: pl.DataFrame, spec: dict) -> pl.DataFrame:
    """``df`` with its ``run_id`` column (the input's name when it has none), as text, and
    the kept columns cast to the group's types."""
    if spec["run"] is not None:
        df = df.with_columns(pl.lit(spec["run"], dtype=pl.Utf8).alias("run_id"))
    return df.with_columns(pl.col("run_id").cast(pl.Utf8),
                           *[pl.col(c).cast(DTYPES[k]) for c, k in spec["casts"].items()])


# ---------------------------------------------------------------- a slice's report

class NotGrouped(Exception):
    """An input's query was met in two places: it goes through the shuffle."""


@dataclass
class RunPart:
    """What one slice (or the driver's edge queries) gives of one run."""

    report: dict[str, int]
    mask: np.ndarray  # packed bits over the qrels queries: those scored here
    dropped: list[str]  # run queries the qrels lack (as text)
    sums: list  # one fasteval.measures.aggregate partial per measure


@dataclass
class SliceReport:
    """What a slice task hands back to the driver (small: no per-query rows unless asked)."""

    src: int
    index: int
    rows: int = 0
    grouped: bool = True
    runs: dict[str, RunPart] = field(default_factory=dict)
    edges: list[tuple[tuple, Any]] = field(default_factory=list)  # (key, Arrow rows)
    table: Any = None  # the wide per-query rows (Arrow) when the caller keeps them
    seconds: dict[str, float] = field(default_factory=dict)
    node: str = ""  # the Ray node that ran the task


def _segments(df: pl.DataFrame, one_run: bool) -> tuple[np.ndarray, pl.DataFrame]:
    """Start rows of the runs of equal ``(run_id, query_id)`` and their keys (``one_run``:
    the rows are of one run, so the query id alone is compared)."""
    keys = ["query_id"] if one_run else ["run_id", "query_id"]
    change = pl.any_horizontal([pl.col(k) != pl.col(k).shift(1) for k in keys])
    flags = df.select(change.fill_null(True)).to_series()
    starts = np.flatnonzero(flags.to_numpy())
    return starts, df.select(["run_id", "query_id"]).filter(flags)


def split_edges(df: pl.DataFrame, *, first: bool, last: bool, one_run: bool = False):
    """``(interior, edges)`` of a slice, or None when a query's rows do not lie together in
    it. ``edges``: ``(key, rows)`` of the first query (unless ``first``: the input's first
    slice) and of the last one (unless ``last``), which may continue in a neighbour.
    ``one_run``: every row is of one run.

    Examples
    --------
    >>> df = pl.DataFrame({"run_id": ["r"] * 5, "query_id": ["a", "a", "b", "c", "c"]})
    >>> inner, edges = split_edges(df, first=False, last=False)
    >>> inner["query_id"].to_list(), [k for k, _ in edges]
    (['b'], [('r', 'a'), ('r', 'c')])
    >>> split_edges(df.reverse().vstack(df), first=True, last=True) is None
    True
    """
    if df.height == 0:
        return df, []
    starts, keys = _segments(df, one_run)
    if keys.height != keys.unique().height:
        return None
    n, nseg = df.height, len(starts)
    a = 0 if first else (int(starts[1]) if nseg > 1 else n)
    b = n if last else (int(starts[-1]) if nseg > 1 else 0)
    if a >= b:  # no interior: one query, or two edges side by side
        if nseg == 1:
            return df.clear(), [(keys.row(0), df)]
        return df.clear(), [(keys.row(0), df.slice(0, a)), (keys.row(-1), df.slice(b))]
    edges = []
    if a > 0:
        edges.append((keys.row(0), df.slice(0, a)))
    interior = df.slice(a, b - a)
    if b < n:
        edges.append((keys.row(-1), df.slice(b)))
    return interior, edges


def score_rows(ev, df: pl.DataFrame, *, keep: list[str], names: list[str], label: str, one_run: bool = False
               ) -> tuple[pl.DataFrame, dict[str, RunPart]]:
    """Score whole queries (``run_id``, the kept columns and ``_row``, the row in the input,
    for errors); their wide per-query rows and each run's :class:`RunPart` (``one_run``:
    the rows are of one run)."""
    from fasteval.measures.aggregate import aggregation_of, partial

    kinds = [aggregation_of(m) for m in names]
    nq = len(ev.qrels.query_ids)
    parts: dict[str, RunPart] = {}
    frames = []
    runs = df.get_column("run_id")
    if df.height and (one_run or (runs[0] == runs[-1] and runs.n_unique() == 1)):
        groups = [(runs[0], df)]
    else:
        groups = [(k[0], t) for k, t in df.partition_by("run_id", as_dict=True, maintain_order=True).items()]
    for rid, table in groups:
        try:
            batch = ev.prepare(table.select(keep), complete=False, check_scores=False)
        except InputError as exc:
            if exc.source not in (None, "run"):
                raise
            rows = table.get_column("_row")
            raise exc.at(source=label, row=None if exc.row is None else int(rows[exc.row])) from None
        values = ev.score(batch)
        mask = np.zeros(nq, dtype=bool)
        mask[batch.qidx] = True
        dropped = batch.dropped_ids
        parts[str(rid)] = RunPart(
            report={k: int(getattr(batch.report, k)) for k in report_keys()},
            mask=np.packbits(mask),
            dropped=[] if dropped is None else dropped.cast(pl.Utf8).to_list(),
            sums=[partial(values[:, j], kind) for j, kind in enumerate(kinds)])
        cols: dict[str, Any] = {"run_id": pl.repeat(str(rid), len(batch.qidx), dtype=pl.Utf8, eager=True),
                                "query_id": ev.qrels.query_ids.gather(batch.qidx)}
        for j, m in enumerate(names):
            cols[m] = pl.Series(m, np.ascontiguousarray(values[:, j]), dtype=pl.Float64)
        frames.append(pl.DataFrame(cols))
    wide = pl.concat(frames) if frames else empty_wide(names, ev.qrels.query_ids.dtype)
    return wide, parts


def write_part(wide: pl.DataFrame, folder: str, name: str, *, names: list[str], as_wide: bool,
               output: str) -> None:
    """Write per-query rows as ``folder/name`` (long unless ``as_wide``), under a
    temporary name first, so that a task run again after its worker died replaces it whole.
    A write that fails is an :class:`~fasteval.errors.OutputError` naming ``output`` (what
    the folder becomes).

    Examples
    --------
    >>> w = pl.DataFrame({"run_id": ["r"], "query_id": ["q"], "map": [0.5]})
    >>> try:
    ...     write_part(w, "/nonexistent-folder", "part.parquet", names=["map"], as_wide=True, output="o.parquet")
    ... except Exception as exc:
    ...     print(str(exc).split(":")[0])
    output 'o.parquet' cannot be written
    """
    tmp = os.path.join(folder, f".{name}.{uuid.uuid4().hex[:8]}{INPROGRESS}")
    try:
        (wide if as_wide else to_long(wide, names)).write_parquet(tmp)
        os.replace(tmp, os.path.join(folder, name))
    except OSError as exc:
        from fasteval.errors import OutputError
        from fasteval.io.atomic import describe_os_error

        raise OutputError(output, f"cannot be written: {describe_os_error(exc)}") from None


def part_name(src: int, index: int | str) -> str:
    """The part file of slice ``index`` of input ``src`` (``"edges"``: the driver's)."""
    return f"{PART_PREFIX}{src:05d}-{index if isinstance(index, str) else f'{index:06d}'}.parquet"


def maybe_fail(fault: str | None) -> None:
    """End this worker process, as a killed one ends, when this task is the first to create
    the file ``fault`` (tests of retries: ``FASTEVAL_RAY_FAULT``). With ``fault`` of the form
    ``hold:PATH``, wait instead while ``PATH`` exists (at most two minutes: tests that take a
    node away while its tasks run)."""
    if not fault:
        return
    if fault.startswith("hold:"):
        until = time.monotonic() + 120
        while os.path.exists(fault[5:]) and time.monotonic() < until:
            time.sleep(0.05)
        return
    try:
        fd = os.open(fault, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    os._exit(1)


_EVALUATORS: dict[str, Any] = {}


def evaluator_of(holder: tuple) -> Any:
    """The shared evaluator, fetched from the object store once per worker process (its
    arrays are read in place from the node's shared memory)."""
    import ray

    ref = holder[0]
    key = ref.hex()
    ev = _EVALUATORS.get(key)
    if ev is None:
        _EVALUATORS.clear()
        ev = _EVALUATORS[key] = ray.get(ref)
    return ev


def _threads(ray) -> None:
    """Kernel threads for this task: the CPUs Ray gave it (one by default), so that tasks
    side by side on a node do not each start a thread per core."""
    import numba

    cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 1)
    numba.set_num_threads(max(1, min(int(cpus), numba.config.NUMBA_NUM_THREADS)))


def score_slice(task: dict, table, spec: dict, holder: tuple, *, names: list[str], out_dir: str | None,
                output: str, as_wide: bool, keep_rows: bool, fault: str | None) -> SliceReport:
    """A slice task: read, check, score the queries held whole, write them (``out_dir``) or
    keep them (``keep_rows``), and report (see the module's description). ``table``: the
    slice's rows for a table in memory (None: read from the parquet file ``task`` names)."""
    import ray

    maybe_fail(fault)
    _threads(ray)
    clock = time.perf_counter()
    rep = SliceReport(src=task["src"], index=task["index"], node=ray.get_runtime_context().get_node_id())
    df = with_runs(read_slice(task, spec, table), spec)
    df = df.select(["run_id", *spec["keep"]]).with_columns(
        pl.int_range(task["srow0"], task["srow0"] + df.height, dtype=pl.Int64).alias("_row"))
    rep.rows = df.height
    now = time.perf_counter()
    rep.seconds["read"] = now - clock
    one_run = spec["run"] is not None or (  # the input, or this file's folder, names its one run
        spec["hive_runs"] is not None and "run_id" not in spec["columns"][task["file"]])
    split = split_edges(df, first=task["first"], last=task["last"], one_run=one_run)
    if split is None:
        rep.grouped = False
        return rep
    interior, edges = split
    rep.edges = [(key, rows.to_arrow()) for key, rows in edges]
    ev = evaluator_of(holder)
    wide, rep.runs = score_rows(ev, interior, keep=spec["keep"], names=names, label=spec["label"],
                                one_run=one_run)
    clock, now = now, time.perf_counter()
    rep.seconds["score"] = now - clock
    if out_dir is not None and wide.height:
        write_part(wide, out_dir, part_name(task["src"], task["index"]), names=names, as_wide=as_wide,
                   output=output)
    elif keep_rows:
        rep.table = wide.to_arrow()
    rep.seconds["write"] = time.perf_counter() - now
    return rep


def warm_worker(measures: list, options: dict) -> str:
    """Load in this worker process the kernels a slice task of the job calls (a job's first
    tasks then find them loaded); returns the node's id. Started while the driver prepares
    the qrels (:func:`fasteval.batch.ray_engine.prewarm`)."""
    import ray

    from fasteval.batch.warm import Job, _run_job
    from fasteval.measures.aggregate import partial

    _threads(ray)
    try:
        _run_job(Job(measures=tuple(measures), options=options, run_rows_at_least=10**6,
                     qrels_rows_at_least=10**6))
        partial(np.zeros(3), "mean")
    except Exception:  # noqa: BLE001 - an optimisation: the job reports its own errors
        pass
    return ray.get_runtime_context().get_node_id()


def join_edges(reports: list[SliceReport]) -> pl.DataFrame | None:
    """The rows of the edge queries of one input's slices (in slice order), each query's
    pieces put together (None for no edges); :class:`NotGrouped` when one query's pieces
    are not side by side."""
    pieces = [(key, frame_of(t)) for r in sorted(reports, key=lambda r: r.index) for key, t in r.edges]
    if not pieces:
        return None
    keys = [k for k, _ in pieces]
    distinct = [k for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k]
    if len(distinct) != len(set(distinct)):
        raise NotGrouped
    return pl.concat([rows for _, rows in pieces], how="vertical_relaxed")


class Tally:
    """The driver's sum of one input's :class:`RunPart`\\ s, run by run: counts added,
    scored queries (bit sets) joined, unjudged queries collected, partial sums kept.
    :class:`NotGrouped` when a query comes twice."""

    def __init__(self, nq: int) -> None:
        self.nq = nq
        self.rows = 0
        self.runs: dict[str, dict] = {}

    def add(self, rid: str, part: RunPart) -> None:
        mask = np.unpackbits(part.mask, count=self.nq).view(bool)
        cur = self.runs.get(rid)
        if cur is None:
            self.runs[rid] = {"report": dict(part.report), "mask": mask, "dropped": set(part.dropped),
                              "sums": [[s] for s in part.sums]}
            return
        if np.logical_and(cur["mask"], mask).any() or not cur["dropped"].isdisjoint(part.dropped):
            raise NotGrouped
        np.logical_or(cur["mask"], mask, out=cur["mask"])
        cur["dropped"].update(part.dropped)
        for k, v in part.report.items():
            cur["report"][k] = cur["report"].get(k, 0) + v
        for acc, s in zip(cur["sums"], part.sums, strict=True):
            acc.append(s)
