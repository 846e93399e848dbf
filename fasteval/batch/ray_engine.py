"""Scoring on Ray (``engine="ray"``): the batch job spread over a Ray cluster.

The runs found by :func:`fasteval.batch.discover.discover_all` (same rules as the
single-machine path) take one of two paths, input by input (``JobStats.paths``):

* **grouped** (scored where read): slice tasks (:mod:`fasteval.batch.ray_tasks`) read about
  :data:`READ_TASK_ROWS` rows each (whole parquet row groups; tables held on the driver,
  such as TREC files, in parts put in the object store), check them as one process does,
  score the queries they hold whole, write them (``out``) or hand them back, and report
  counts, bit sets of the qrels queries scored, unjudged queries and exact partial sums.
  The first and last query of each slice may continue next door: the driver joins those
  edge queries and scores them itself. A query met twice (inside a slice, in two slices'
  bit sets or unjudged lists, or in edges that are not side by side) means the input's
  queries are scattered: its parts are dropped and it takes the other path;
* **shuffled**: rows get their input (``_src``), row number (``_row``) and a 64-bit hash of
  the query id (``_key``) and are hash-partitioned on it (``Dataset.repartition``), so that
  each query lies whole in one block; a block puts its rows back in input order before it
  is scored (``tie_break="input"``, duplicates and errors behave as on one machine), writes
  its part and reports as a slice does.

The same kernels score whole queries, so per-query values are bit-identical to the
single-process path; aggregates come from the exact partial sums
(:mod:`fasteval.measures.aggregate`), so they are equal too, and the driver holds per-query
rows only when the caller keeps them (``keep_rows``). ``complete`` queries are filled on the
driver from the bit sets.

The qrels reach the workers in one of two ways (``JobStats.qrels`` says which):

* ``"shared"``: the :class:`fasteval.Evaluator` prepared on the driver is put once in the
  object store (``ray.put``: one copy per node, its arrays read in place); chosen when the
  prepared qrels take at most ``share_qrels_limit`` bytes (default 4 GiB);
* ``"co-partitioned"``: above that, the judgments go through the same shuffle as the runs
  (hash of the query id as text, so integer and text ids meet), and each block prepares
  the qrels of its own queries only; every input is shuffled. The driver still prepares
  the whole qrels once (it fills ``complete`` queries and orders kept rows).

Per-query output (``out``) is the tasks' parts in a hidden directory beside ``out``,
renamed to ``out`` only when complete.

Faults: a task whose worker process dies (killed, out of memory, a lost node) is run again
by Ray; its part is rewritten whole and its report counted once. ``FASTEVAL_RAY_FAULT`` (a
path, read on the driver) injects such a death for tests: the first task to create that
file ends its worker process (``hold:PATH`` holds tasks while ``PATH`` exists instead).
Errors in the input (:class:`fasteval.errors.FastevalError`) are not retried: they reach the
caller as one-line errors, the first slice's in input order.

Progress: Ray Data's own progress bars and execution logs are turned off; the caller's
progress callback is called as each task's report reaches the driver.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import numpy as np
import polars as pl

from fasteval.batch.discover import RunSource, _kind, _read_table, discover_all, id_kind
from fasteval.batch.driver import (
    JobStats,
    _label,
    iter_frames,
    parse_memory,
    query_positions,
)
from fasteval.batch.ray_tasks import (
    DTYPES,
    INPROGRESS,
    PART_PREFIX,
    NotGrouped,
    RunPart,
    SliceReport,
    Tally,
    check_part,
    evaluator_of,
    frame_of,
    join_edges,
    maybe_fail,
    part_name,
    read_slice,
    report_keys,
    score_rows,
    score_slice,
    warm_worker,
    write_part,
)
from fasteval.batch.sinks import empty_wide, to_long, to_wide
from fasteval.errors import FastevalError, InputError, ParameterError, first_line
from fasteval.options import Engine, check_choice

QRELS_MODES = ("auto", "shared", "co-partitioned")
DEFAULT_SHARE_QRELS_LIMIT = 4 << 30
"""Prepared qrels up to this many bytes are shared whole through the object store."""
READ_TASK_ROWS = 2_000_000
"""Rows per read task at most (whole row groups; a larger row group is one task)."""
RAY_CONNECT_TIMEOUT_S = 30.0
"""Seconds a Ray cluster address (``--ray-address``) has to answer a TCP connection."""
_GCS_WAIT_ENV = "RAY_gcs_server_port_wait_time_s"
_FAULT_ENV = "FASTEVAL_RAY_FAULT"
_KEY_SEED = 18
_QRELS_SRC = -1
_RAY_HINT = "Failed to apply UDF transform"


def require_ray():
    """Import and return ``ray``, or raise a one-line
    :class:`~fasteval.errors.MissingExtraError` (a :class:`FastevalError`) naming the extra.

    Examples
    --------
    >>> try:
    ...     ray = require_ray()
    ... except FastevalError as exc:
    ...     assert 'pip install ".[ray]"' in str(exc)
    """
    from fasteval.errors import MissingExtraError, require_extra

    require_extra("ray", 'engine="ray"', load=True)
    try:
        import ray
    except ImportError:  # ray.data imported before, ray itself gone or broken since
        raise MissingExtraError('engine="ray"', "ray", ["ray"]) from None
    return ray


def check_engine(engine: str) -> str:
    """Validate an ``engine`` value.

    Examples
    --------
    >>> check_engine("ray")
    'ray'
    """
    return check_choice("engine", Engine, engine, f"one of {', '.join(get_args(Engine))}")


def deep_nbytes(obj: Any, _depth: int = 0) -> int:
    """Bytes held by the arrays and series of ``obj`` (numpy arrays, polars series, and
    the fields of dataclasses, tuples, lists and dicts holding them, a few levels deep):
    the size of prepared qrels in memory.

    Examples
    --------
    >>> import numpy as np
    >>> deep_nbytes((np.zeros(4), {"a": np.zeros(2, dtype=np.int32)}))
    40
    """
    if _depth > 4 or obj is None:
        return 0
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)  # views of one buffer count twice: an upper bound
    if isinstance(obj, pl.Series):
        return int(obj.estimated_size())
    if isinstance(obj, pl.DataFrame):
        return int(obj.estimated_size())
    if isinstance(obj, dict):
        return sum(deep_nbytes(v, _depth + 1) for v in obj.values())
    if isinstance(obj, list | tuple):
        return sum(deep_nbytes(v, _depth + 1) for v in obj)
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return sum(deep_nbytes(v, _depth + 1) for v in vars(obj).values())
    return 0


def qrels_mode_for(evaluator, *, limit: int | str | None = None, qrels: Any = None,
                   mode: str = "auto") -> str:
    """``"shared"`` or ``"co-partitioned"``: how a job gets the qrels to its workers.

    ``auto`` shares them when the prepared qrels take at most ``limit`` bytes (default
    :data:`DEFAULT_SHARE_QRELS_LIMIT`; a size such as ``"512MiB"``), and co-partitions them
    otherwise, when ``qrels`` (the table or file the evaluator was built from) can be read
    again (not standard input or a FIFO).

    Examples
    --------
    >>> import fasteval, polars as pl
    >>> q = pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [1]})
    >>> ev = fasteval.Evaluator(q, ["P@1"])
    >>> qrels_mode_for(ev, qrels=q), qrels_mode_for(ev, qrels=q, limit=1)
    ('shared', 'co-partitioned')
    """
    if mode not in QRELS_MODES:
        raise ParameterError("qrels_mode", f"one of {', '.join(QRELS_MODES)}", mode)
    size = parse_share_limit(limit)
    if mode == "shared":
        return "shared"
    if qrels is None or not _rereadable(qrels):
        if mode == "co-partitioned":
            raise ParameterError("qrels_mode", "shared when the qrels are not given again as a "
                                 "table or a file that can be read twice", mode)
        return "shared"
    if mode == "co-partitioned":
        return mode
    return "shared" if deep_nbytes(evaluator.qrels) <= size else "co-partitioned"


def parse_share_limit(limit: int | str | None, param: str = "share_qrels_limit") -> int:
    """Bytes of ``limit`` (an int >= 0, or a size such as ``"512MiB"``; None: the default).

    Examples
    --------
    >>> parse_share_limit("2GiB"), parse_share_limit(0), parse_share_limit(None) == DEFAULT_SHARE_QRELS_LIMIT
    (2147483648, 0, True)
    """
    if limit is None:
        return DEFAULT_SHARE_QRELS_LIMIT
    if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0:
        return limit
    try:
        return parse_memory(limit)
    except ParameterError:
        raise ParameterError(param, "a size in bytes >= 0, or such as 512MiB or 2GiB", limit) from None


def _rereadable(qrels: Any) -> bool:
    if not isinstance(qrels, str | os.PathLike):
        return True
    import stat

    try:
        mode = os.stat(qrels).st_mode
    except OSError:
        return False
    return os.fspath(qrels) != "-" and not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode))


# ---------------------------------------------------------------- reading (worker side)

def _key_expr(text: bool) -> pl.Expr:
    col = pl.col("query_id").cast(pl.Utf8) if text else pl.col("query_id")
    return col.hash(seed=_KEY_SEED).alias("_key")


def _blocks(ray, table: pl.DataFrame):
    """A Ray dataset of ``table`` in parts of :data:`READ_TASK_ROWS` rows (one for no rows)."""
    step = READ_TASK_ROWS
    return ray.data.from_arrow([table.slice(s, step).to_arrow() for s in range(0, max(table.height, 1), step)])


def _finish(df: pl.DataFrame, *, src: int, row0: int, spec: dict) -> pl.DataFrame:
    """A checked part of source ``src`` as the rows of the shuffle: ``_src``, ``run_id``,
    the run columns (cast to the group's types), ``_row``, ``_key`` and, for a job with
    co-partitioned qrels, the (null) qrels columns."""
    if spec["run"] is not None:
        df = df.with_columns(pl.lit(spec["run"], dtype=pl.Utf8).alias("run_id"))
    df = df.with_columns(
        pl.lit(src, dtype=pl.Int64).alias("_src"),
        *[pl.col(c).cast(DTYPES[k]) for c, k in spec["casts"].items()],
        pl.col("run_id").cast(pl.Utf8),
        pl.int_range(row0, row0 + df.height, dtype=pl.Int64).alias("_row"),
        _key_expr(spec["key_text"]),
    )
    df = df.select(["_src", "run_id", *spec["keep"], "_row", "_key"])
    if spec["qrels_cols"]:
        df = df.with_columns([pl.lit(None, dtype=DTYPES[k]).alias(c) for c, k in spec["qrels_cols"]])
    return df


def read_parts(batch, *, specs: list[dict]):
    """Read the row groups named by each row of ``batch`` (``src``, ``file``, ``rg0``,
    ``rg1``, ``row0``: first row in the file, ``srow0``: first row in the source); return
    the checked rows of the shuffle (see :func:`_finish`)."""
    out = []
    for task in batch.to_pylist():
        spec = specs[task["src"]]
        out.append(_finish(read_slice(task, spec), src=task["src"], row0=task["srow0"], spec=spec))
    return pl.concat(out).to_arrow()


def _qrels_part(block, *, casts: dict[str, str], run_cols: list[tuple[str, str]], key_text: bool):
    """Qrels rows as rows of the shuffle: ``_src`` = -1, null run columns, ``_row``, ``_key``
    and the judgments in ``_qq``, ``_qd``, ``_qr``."""
    df = frame_of(block).with_columns(_key_expr(key_text))
    nulls = {c: pl.lit(None, dtype=DTYPES[k]).alias(c) for c, k in run_cols}
    cols = [pl.lit(_QRELS_SRC, dtype=pl.Int64).alias("_src"), pl.lit(None, dtype=pl.Utf8).alias("run_id"),
            *[nulls[c] for c, _ in run_cols], pl.col("_row"), pl.col("_key"),
            pl.col("query_id").cast(DTYPES[casts["query_id"]]).alias("_qq"),
            pl.col("doc_id").cast(DTYPES[casts["doc_id"]]).alias("_qd"),
            pl.col("relevance").cast(pl.Int64).alias("_qr")]
    return df.select(cols).to_arrow()


# ---------------------------------------------------------------- scoring (worker side)

def _block_evaluator(qrels: pl.DataFrame, runs: pl.DataFrame, options: dict):
    """An evaluator for the judgments of a block's queries (co-partitioned qrels). A block
    whose run queries are all unjudged gets one judgment for a query id none of them has,
    so that the counts of dropped queries come out as they do against the whole qrels."""
    import fasteval

    qrels = qrels.sort("_row").select(pl.col("_qq").alias("query_id"), pl.col("_qd").alias("doc_id"),
                                      pl.col("_qr").alias("relevance"))
    if qrels.height == 0:
        qdtype = options["qrels_dtypes"][0]
        taken = set(runs.get_column("query_id").cast(pl.Utf8).to_list())
        if qdtype == "int":
            free = next(v for v in range(-(2**63), -(2**63) + len(taken) + 1) if str(v) not in taken)
        else:
            free = next(f"\x00none{i}" for i in range(len(taken) + 1) if f"\x00none{i}" not in taken)
        ddtype = options["qrels_dtypes"][1]
        qrels = pl.DataFrame({"query_id": pl.Series([free], dtype=DTYPES[qdtype]),
                              "doc_id": pl.Series([0 if ddtype == "int" else "-"], dtype=DTYPES[ddtype]),
                              "relevance": pl.Series([0], dtype=pl.Int64)})
    kwargs = {k: v for k, v in options.items() if k != "qrels_dtypes"}
    return fasteval.Evaluator(qrels, **kwargs)


def score_block(block, *, holder: tuple | None, names: list[str], keep: list[str], labels: dict[int, str],
                qdtype, options: dict | None = None, fault: str | None = None, out_dir: str | None = None,
                output: str = "", as_wide: bool = False, keep_rows: bool = True):
    """Score one shuffled block of whole queries; return one report row per run, after
    the block's per-query rows unless they were written to ``out_dir`` as a part (or are
    not wanted: ``keep_rows`` false).

    Rows: ``_src``, ``run_id``, ``query_id``, ``_qidx`` (-1 on report rows), the measures,
    then, on report rows, the counts (``_r_rows``, ``_r_ns``: nanoseconds spent, and
    :func:`fasteval.batch.ray_tasks.report_keys`), ``_ids`` (the queries scored, as text)
    and ``_sums`` (the pickled partial sums of the measures).
    ``holder``: the shared evaluator's object reference; None when the block carries its
    qrels (co-partitioned; ``options`` then builds the block's evaluator).
    """
    import pickle

    from fasteval.measures.aggregate import aggregation_of, partial

    maybe_fail(fault)
    df = frame_of(block)
    if holder is None:
        runs = df.filter(pl.col("_src") != _QRELS_SRC)
        if runs.height == 0:
            return _empty_scored(names, qdtype).to_arrow()
        ev = _block_evaluator(df.filter(pl.col("_src") == _QRELS_SRC), runs, options or {})
    else:
        runs = df
        ev = evaluator_of(holder)
    kinds = [aggregation_of(m) for m in names]
    rows, reports = [], []
    for (src, rid), table in runs.partition_by(["_src", "run_id"], as_dict=True, maintain_order=True).items():
        t0 = time.perf_counter_ns()
        table = table.sort("_row")  # input order (tie_break="input", duplicates, error rows)
        run = table.select(keep)
        try:
            batch = ev.prepare(run, complete=False, check_scores=False)
        except InputError as exc:
            at = table.get_column("_row")
            raise exc.at(source=labels[src] if exc.source in (None, "run") else exc.source,
                         row=None if exc.row is None else int(at[exc.row])) from None
        values = ev.score(batch)
        ids = ev.qrels.query_ids.gather(batch.qidx).cast(qdtype)
        wide = pl.DataFrame({"_src": pl.repeat(src, len(ids), dtype=pl.Int64, eager=True),
                             "run_id": pl.repeat(rid, len(ids), dtype=pl.Utf8, eager=True), "query_id": ids,
                             **{m: pl.Series(m, values[:, j], dtype=pl.Float64) for j, m in enumerate(names)}})
        rows.append(wide)
        counts = {"rows": run.height, "ns": time.perf_counter_ns() - t0,
                  **{k: int(getattr(batch.report, k)) for k in report_keys()}}
        reports.append(pl.DataFrame({
            "_src": [src], "run_id": [rid], "query_id": pl.Series([None], dtype=qdtype),
            **{f"_r_{k}": pl.Series([v], dtype=pl.Int64) for k, v in counts.items()},
            "_ids": [ids.cast(pl.Utf8).to_list()],
            "_sums": [pickle.dumps([partial(values[:, j], kind) for j, kind in enumerate(kinds)])]}))
    if not reports:
        return _empty_scored(names, qdtype).to_arrow()
    wide = pl.concat(rows)
    if out_dir is not None and wide.height:  # named by its rows: a retried block rewrites it
        keys = wide.select(pl.struct(pl.col("run_id"), pl.col("query_id").cast(pl.Utf8)).hash(seed=_KEY_SEED))
        mix = keys.to_series().to_numpy().sum(dtype=np.uint64)  # (run, query) pairs are distinct
        name = f"shuffled-{int(mix):016x}-{wide.height}.parquet"
        write_part(wide.drop("_src"), out_dir, name, names=names, as_wide=as_wide, output=output)
    out = [pl.concat(reports, how="diagonal_relaxed")]
    if out_dir is None and keep_rows:
        out.insert(0, wide)
    return pl.concat(out, how="diagonal_relaxed").to_arrow()


def _empty_scored(names: list[str], qdtype) -> pl.DataFrame:
    schema = {"_src": pl.Int64, "run_id": pl.Utf8, "query_id": qdtype}
    schema |= {m: pl.Float64 for m in names}
    schema |= {f"_r_{k}": pl.Int64 for k in ("rows", "ns", *report_keys())}
    return pl.DataFrame(schema=schema | {"_ids": pl.List(pl.Utf8), "_sums": pl.Binary})


def _columns_of(source: RunSource) -> pl.Schema:
    """The run columns of a parquet source's first file, under their canonical names."""
    if source.kind == "parquet":
        schema = pl.scan_parquet(source.files[0], glob=False).collect_schema()
        columns = _file_columns(source, 0, schema)
        return pl.Schema({canon: schema[col] for canon, col in columns.items()})
    return source.frame.schema  # type: ignore[union-attr]


def _file_columns(source: RunSource, k: int, names=None) -> dict[str, str]:
    """Canonical name -> column of file ``k`` of a parquet source (:attr:`RunSource.maps`;
    the canonical names themselves for a source built without them)."""
    if source.maps:
        return dict(source.maps[k])
    if names is None:
        names = pl.scan_parquet(source.files[k], glob=False).collect_schema()
    return {c: c for c in ("run_id", "query_id", "doc_id", "score", "rank") if c in names}


def _load_frame(source: RunSource) -> pl.DataFrame:
    parts = list(iter_frames(source, 1 << 62))
    if not parts and source.frame is not None:  # a table without rows: no runs, as in
        return source.frame  # the single-machine batch job (run files without rows are refused)
    return pl.concat(parts, how="vertical_relaxed") if len(parts) > 1 else parts[0]


def _run_order(source: RunSource, frame: pl.DataFrame | None) -> list[str]:
    """Run names of a source in order of first appearance (as the single-machine path meets them)."""
    if frame is not None:
        if "run_id" in frame.columns:
            return [str(r) for r in frame.get_column("run_id").unique(maintain_order=True).to_list()]
        return [source.name]
    hive = source.hive or [{}] * len(source.files)
    cols = [_file_columns(source, k).get("run_id") for k in range(len(source.files))]
    if not any(c is not None or "run_id" in h for c, h in zip(cols, hive, strict=True)):
        return [source.name]
    # each file's run ids: its run_id column, or its folder's (run_id=NAME/)
    ids = pl.concat([
        pl.scan_parquet(str(f), hive_partitioning=False, glob=False).select(pl.col(c).cast(pl.Utf8).alias("run_id"))
        if c is not None else pl.LazyFrame({"run_id": [h.get("run_id", source.name)]}, schema={"run_id": pl.Utf8})
        for f, c, h in zip(source.files, cols, hive, strict=True)])
    return ids.select(pl.col("run_id").unique(maintain_order=True)).collect().get_column("run_id").to_list()


def _read_tasks(i: int, files: list[str]) -> list[dict]:
    """Read tasks of parquet source ``i``: runs of whole row groups of about
    :data:`READ_TASK_ROWS` rows, with their first row in the file and in the source."""
    import pyarrow.parquet as pq

    tasks = []
    srow = 0
    for k, path in enumerate(files):
        meta = pq.ParquetFile(path).metadata
        row = 0
        g0 = 0
        acc = 0
        for g in range(meta.num_row_groups):
            acc += meta.row_group(g).num_rows
            if acc >= READ_TASK_ROWS or g == meta.num_row_groups - 1:
                tasks.append({"src": i, "file": k, "rg0": g0, "rg1": g + 1, "row0": row, "rows": acc,
                              "srow0": srow + row})
                row += acc
                g0, acc = g + 1, 0
        srow += row
    return tasks


def _spec(i: int, source: RunSource, tie_break: str, qrels_cols: list[tuple[str, str]], key_text: bool):
    """``(group key, spec, run order, frame)`` of one source: how its tasks read it, the
    runs it holds in order of appearance and, for a table read on the driver, its checked
    rows (None for parquet, which the tasks read)."""
    frame = _load_frame(source) if source.kind != "parquet" else None
    schema = frame.schema if frame is not None else _columns_of(source)
    keep = ["query_id", "doc_id", "score"] + (["rank"] if tie_break == "rank" and "rank" in schema else [])
    casts = {"query_id": id_kind(schema["query_id"]), "doc_id": id_kind(schema["doc_id"]), "score": "float"}
    if "rank" in keep:
        casts["rank"] = "int"
    key = (casts["query_id"], casts["doc_id"], "rank" in keep)
    order = _run_order(source, frame)
    label = _label(source)
    spec: dict[str, Any] = {"src": i, "keep": keep, "casts": casts, "run": None, "label": label,
                            "qrels_cols": qrels_cols, "key_text": key_text, "hive_runs": None}
    if frame is not None:
        if "run_id" not in frame.columns:
            spec["run"] = source.name
        frame = frame.select([c for c in ("run_id", *keep) if c in frame.columns])
        check_part(frame, path=source.name, file_row0=0, label=label, src_row0=0)
        return key, spec, order, frame
    hive = source.hive or [{}] * len(source.files)
    spec["columns"] = [{c: m[c] for c in ("run_id", *keep) if c in m}
                       for m in (_file_columns(source, k) for k in range(len(source.files)))]
    spec["files"] = [str(f) for f in source.files]
    has_col = any("run_id" in m for m in spec["columns"])
    if any("run_id" in h for h in hive):  # files without the column: their folder's run id
        spec["hive_runs"] = [h.get("run_id", source.name) for h in hive]
    elif not has_col:
        spec["run"] = source.name
    return key, spec, order, None


def _dataset(ray, spec: dict, frame: pl.DataFrame | None):
    """One source's rows as a Ray dataset of shuffle rows (:func:`_finish`)."""
    i = spec["src"]
    if frame is not None:
        return _blocks(ray, _finish(frame, src=i, row0=0, spec=spec))
    tasks = _read_tasks(i, spec["files"])
    return ray.data.from_items(tasks, override_num_blocks=max(1, len(tasks))).map_batches(
        read_parts, batch_format="pyarrow", batch_size=1, fn_kwargs={"specs": {i: spec}})


def _slices(ray, spec: dict, frame: pl.DataFrame | None) -> list[tuple[dict, Any]]:
    """The slice tasks of one source (:func:`fasteval.batch.ray_tasks.score_slice`): whole
    row groups of about :data:`READ_TASK_ROWS` rows, or parts of that many rows of a table
    held here (put in the object store), in input order; each with its table's reference."""
    if frame is not None:
        step = READ_TASK_ROWS
        tasks = [({"src": spec["src"], "srow0": s}, ray.put(frame.slice(s, step).to_arrow()))
                 for s in range(0, frame.height, step)]
    else:
        tasks = [(t, None) for t in _read_tasks(spec["src"], spec["files"])]
    for k, (t, _) in enumerate(tasks):
        t.update(index=k, first=k == 0, last=k == len(tasks) - 1)
    return tasks


def _qrels_dataset(ray, qrels: Any, casts: dict[str, str], run_cols: list[tuple[str, str]], key_text: bool):
    """The qrels as rows of the co-partitioned shuffle (read on the driver, in parts)."""
    from fasteval.evaluation import load_qrels

    table = load_qrels(qrels).select(["query_id", "doc_id", "relevance"]).with_row_index("_row")
    table = table.with_columns(pl.col("_row").cast(pl.Int64))
    return _blocks(ray, table).map_batches(_qrels_part, batch_format="pyarrow", batch_size=None,
                                           fn_kwargs={"casts": casts, "run_cols": run_cols, "key_text": key_text})


def ray_endpoint(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a Ray address (``HOST:PORT``, ``[IPv6]:PORT``,
    ``ray://[user:password@]HOST:PORT[?query]``); None for one without a port (``auto``,
    ``local``, a bare host), which Ray resolves itself.

    Examples
    --------
    >>> ray_endpoint("ray://al:pw@10.0.0.1:10001?token=t")
    ('10.0.0.1', 10001)
    >>> ray_endpoint("[::1]:6379"), ray_endpoint("auto")
    (('::1', 6379), None)
    """
    rest = address.strip()
    if "://" in rest:
        rest = rest.split("://", 1)[1]
    rest = rest.split("?", 1)[0].split("/", 1)[0].rsplit("@", 1)[-1]
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return None
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return (host, int(port)) if 0 < int(port) < 65536 else None


def _probe(address: str, timeout: float) -> None:
    """Raise :class:`ConnectionError` unless a TCP connection to the address's host and port
    opens within ``timeout`` seconds (a refused port fails at once)."""
    import socket

    endpoint = ray_endpoint(address)
    if endpoint is None:
        return
    try:
        socket.create_connection(endpoint, timeout=timeout).close()
    except TimeoutError:
        raise ConnectionError(f"no answer from {endpoint[0]}:{endpoint[1]} within {timeout:g} s") from None
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise ConnectionError(f"cannot open a connection to {endpoint[0]}:{endpoint[1]}: {why}") from None


def _target(address: str | None) -> str | None:
    """The cluster ``ray.init(address=address)`` connects to: ``address``, else
    ``$RAY_ADDRESS`` when set (None: a local Ray is started)."""
    return address if address is not None else (os.environ.get("RAY_ADDRESS") or None)


def ensure_ray(ray, address: str | None, timeout: float = RAY_CONNECT_TIMEOUT_S) -> bool:
    """Connect to (or start) Ray; True when this call started it. An error Ray raises keeps
    its type, with the credentials of the address (``ray://user:password@host``, a token in
    its query string) masked in its text (:func:`fasteval.redact.redact_exception`).

    A cluster address with a port is first reached over TCP, which must answer within
    ``timeout`` seconds (:class:`ConnectionError` otherwise, before Ray is asked); without
    ``address``, Ray's ``RAY_ADDRESS`` variable names the cluster when it is set. Ray's own
    handshake then makes one attempt (``RAY_gcs_server_port_wait_time_s=1`` unless that
    variable is set: Ray retries a GCS that does not answer 20 times by default, for
    minutes), bounded by Ray's ``RAY_py_gcs_connect_timeout_s`` (30 s by default, read when
    Ray is imported).
    """
    if ray.is_initialized():
        return False
    from fasteval.redact import redact_exception, url_secrets

    target = _target(address)
    secrets = url_secrets(target) if isinstance(target, str) else ()
    saved = os.environ.get(_GCS_WAIT_ENV)
    try:
        if isinstance(target, str):
            _probe(target, timeout)
            if saved is None:
                os.environ[_GCS_WAIT_ENV] = "1"
        ray.init(address=address, include_dashboard=False, ignore_reinit_error=True,
                 log_to_driver=False, logging_level="ERROR", configure_logging=True)
    except Exception as exc:
        redact_exception(exc, secrets)
        raise
    finally:
        if saved is None:
            os.environ.pop(_GCS_WAIT_ENV, None)
    return True


def connect_ray(address: str | None, option: str = "--ray-address", *, ray: Any = None,
                timeout: float = RAY_CONNECT_TIMEOUT_S) -> bool:
    """:func:`ensure_ray` for a command: connect to (or start) Ray before a job, an error
    being one line (:class:`FastevalError`) that names ``option`` and the address, its
    credentials masked, and quotes the first line of Ray's error. True when this call
    started Ray (the caller shuts it down). ``ray``: the module (default: imported);
    ``timeout``: seconds the address has to answer (see :func:`ensure_ray`).

    Examples
    --------
    >>> import types
    >>> def init(address, **options):
    ...     raise ConnectionError(f"no GCS at {address}\\nretrying")
    >>> ray = types.SimpleNamespace(is_initialized=lambda: False, init=init)
    >>> connect_ray("ray://al:pw@head", ray=ray)
    Traceback (most recent call last):
    ...
    fasteval.errors.FastevalError: could not connect to the Ray cluster at 'ray://***@head' (--ray-address): no GCS at ray://***@head
    """
    from fasteval.redact import redact, url_secrets

    if ray is None:
        ray = require_ray()
    try:
        return ensure_ray(ray, address, timeout)
    except FastevalError:
        raise
    except Exception as exc:  # its text already masked by ensure_ray
        target = _target(address)
        where = ("a local Ray" if target is None else
                 f"the Ray cluster at {redact(target, url_secrets(target))!r} "
                 f"({option if address is not None else '$RAY_ADDRESS'})")
        raise FastevalError(f"could not connect to {where}: {first_line(exc)}") from None


def prewarm(ray, measures: list, options: dict) -> list:
    """Start one :func:`fasteval.batch.ray_tasks.warm_worker` task per CPU of the cluster,
    spread over its nodes, without waiting: the workers load the job's kernels while the
    driver prepares the qrels. Returns their references."""
    remote = ray.remote(warm_worker).options(num_cpus=1, scheduling_strategy="SPREAD")
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    return [remote.remote(list(measures), dict(options)) for _ in range(cpus)]


def run_job_ray(
    evaluator,
    sources: list[RunSource],
    *,
    complete: bool = False,
    fills_last: bool = False,
    out: str | os.PathLike[str] | None = None,
    wide: bool = False,
    ray_address: str | None = None,
    num_blocks: int | None = None,
    qrels: Any = None,
    share_qrels_limit: int | str | None = None,
    qrels_mode: str = "auto",
    progress=None,
    keep_rows: bool = True,
) -> tuple[pl.DataFrame | None, pl.DataFrame, JobStats]:
    """Score ``sources`` on Ray; return ``(wide per-query values, aggregate, stats)``: the
    per-query values of :func:`fasteval.batch.driver.run_job` (None unless ``keep_rows``),
    and the aggregates of :func:`fasteval.batch.driver.aggregate_wide`, made from the tasks'
    partial sums (equal, bit for bit).

    Parameters
    ----------
    evaluator : fasteval.Evaluator
        Prepared once here; shared with the workers through the object store, or (large
        qrels) used on the driver only, for ``complete`` and the order of the output.
    sources : list of RunSource
        From :func:`fasteval.batch.discover.discover_all`.
    complete : bool
        Add qrels queries missing from a run (``-c``), scored on the driver.
    fills_last : bool
        Put kept filled queries after a run's scored ones, or among them in qrels order
        (default: :func:`fasteval.evaluate`'s order, and the batch job's).
    out : path, optional
        Also write the per-query results (long, or ``wide``) as a parquet directory of the
        tasks' parts, made under a hidden name and renamed to ``out`` when complete.
    ray_address : str, optional
        ``ray.init(address=...)`` when Ray is not initialised yet (None: a local Ray).
    num_blocks : int, optional
        Hash partitions (default: twice the cluster's CPUs, at least 2).
    qrels : table or path, optional
        What ``evaluator`` was built from: needed to co-partition the qrels (without it,
        they are shared).
    share_qrels_limit : int or str, optional
        Prepared qrels larger than this (bytes, or a size such as ``"2GiB"``; default
        :data:`DEFAULT_SHARE_QRELS_LIMIT`) are co-partitioned with the runs.
    qrels_mode : {"auto", "shared", "co-partitioned"}
        Force one way (see :func:`qrels_mode_for`).
    progress : callable, optional
        Called as ``progress(rows, queries)`` as each task's report reaches the driver.
    keep_rows : bool
        Hand the per-query rows back (they all come to the driver); without it, the driver
        holds the tasks' reports only (counts, bit sets of the queries scored, partial sums).

    Examples
    --------
    >>> from fasteval.batch.discover import discover_all
    >>> ev = fasteval.Evaluator({"q": {"d": 1}}, ["P@1"])  # doctest: +SKIP
    >>> wide, agg, stats = run_job_ray(ev, discover_all(["run.parquet"]))  # doctest: +SKIP
    """
    ray = require_ray()
    mode = qrels_mode_for(evaluator, limit=share_qrels_limit, qrels=qrels, mode=qrels_mode)
    if num_blocks is not None and (isinstance(num_blocks, bool) or not isinstance(num_blocks, int)
                                   or num_blocks < 1):
        raise ParameterError("num_blocks", "a positive integer", num_blocks)
    t0 = time.perf_counter()
    started = ensure_ray(ray, ray_address)
    restore = quiet_data(ray)
    try:
        return _run(ray, evaluator, sources, complete=complete, fills_last=fills_last, out=out,
                    wide=wide, num_blocks=num_blocks, t0=t0,
                    qrels=qrels, mode=mode, progress=progress, keep_rows=keep_rows)
    except Exception as exc:
        raise _in_file(_unwrap(ray, exc), sources) from None
    finally:
        restore()
        if started:
            ray.shutdown()


def _in_file(exc: BaseException, sources: list[RunSource]) -> BaseException:
    """An input error that names a parquet source of several files (its folder or glob) and
    a row counted over the whole source (block tasks number the rows so) as the file and
    the row in that file, as the single-machine path names them; any other error as it is."""
    if not isinstance(exc, InputError) or exc.row is None:
        return exc
    for source in sources:
        if source.kind != "parquet" or len(source.files) < 2 or exc.source != _label(source):
            continue
        try:
            import pyarrow.parquet as pq

            start = 0
            for path in source.files:  # the files in the order _read_tasks numbers their rows
                n = pq.ParquetFile(path).metadata.num_rows
                if exc.row < start + n:
                    return exc.at(source=str(path), row=exc.row - start)
                start += n
        except OSError:  # the message keeps the source and its row
            return exc
    return exc


def _unwrap(ray, exc: BaseException) -> BaseException:
    """The user error inside a Ray task error (one line), else the error itself."""
    ray_error = getattr(getattr(ray, "exceptions", None), "RayError", ())
    seen = 0
    cur: BaseException | None = exc
    while cur is not None and seen < 10:
        if isinstance(cur, FastevalError) and not isinstance(cur, ray_error):
            # Ray Data adds a retry hint to the task's exception message: take it off
            if cur.args and isinstance(cur.args[0], str) and _RAY_HINT in cur.args[0]:
                cur.args = (cur.args[0].split(_RAY_HINT, 1)[0].rstrip("\n"), *cur.args[1:])
            return cur
        cause = getattr(cur, "cause", None)
        cur = cause if isinstance(cause, BaseException) else cur.__cause__
        seen += 1
    if isinstance(exc, ray_error):  # Ray itself failed (a task out of retries, a lost owner)
        inner = getattr(exc, "cause", None)
        why = inner if isinstance(inner, BaseException) else exc
        text = first_line(why) or type(why).__name__
        return FastevalError(f"the Ray job failed ({type(why).__name__}): {text}")
    return exc


def quiet_data(ray):
    """One progress report, not two garbled together: Ray Data's progress bars, execution
    logs and task-error logs are turned off for the job (errors reach the caller as
    exceptions; the caller draws its own progress). Returns a function that restores them."""
    import logging
    import warnings

    with warnings.catch_warnings():  # Ray's DataContext() sets its own deprecated fields
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx = ray.data.DataContext.get_current()
    # task errors carry the task's own exception (an InputError names the file and row);
    # without this Ray Data wraps it in a UserCodeException that loses it on the way back
    settings = {"enable_progress_bars": False, "print_on_execution_start": False,
                "enable_operator_progress_bars": False, "raise_original_map_exception": True}
    saved = {k: getattr(ctx, k) for k in settings if hasattr(ctx, k)}
    for k in saved:
        setattr(ctx, k, settings[k])
    loggers = [logging.getLogger(n) for n in ("ray.data", "ray.data._internal")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)

    def restore() -> None:
        for k, v in saved.items():
            setattr(ctx, k, v)
        for lg, lv in zip(loggers, levels, strict=True):
            lg.setLevel(lv)

    return restore


def _run(ray, evaluator, sources, *, complete, fills_last, out, wide, num_blocks, t0,
         qrels, mode, progress, keep_rows):
    names = list(evaluator.measure_names)
    stats = JobStats(qrels=mode)
    copart = mode == "co-partitioned"
    qdtype = evaluator.qrels.query_ids.dtype
    qkinds = (_kind(qdtype), _kind(evaluator.qrels.doc_ids.dtype)) if copart else None
    qrels_cols = [] if qkinds is None else [("_qq", qkinds[0]), ("_qd", qkinds[1]), ("_qr", "int")]
    t_plan = time.perf_counter()
    specs = [_spec(i, s, evaluator.tie_break, qrels_cols, key_text=copart) for i, s in enumerate(sources)]
    orders = [order for _, _, order, _ in specs]
    _check_runs_once(orders, sources)
    folder = _open_out(out) if out is not None else None
    stats.add_time("plan", time.perf_counter() - t_plan)
    t_put = time.perf_counter()
    holder = None if copart else (ray.put(evaluator),)  # one copy per node, read in place
    stats.add_time("share_qrels", time.perf_counter() - t_put)
    job = _Job(ray=ray, ev=evaluator, names=names, stats=stats, folder=folder, wide=wide,
               keep_rows=keep_rows, progress=progress, fault=os.environ.get(_FAULT_ENV) or None,
               holder=holder, output="" if out is None else os.fspath(out))
    try:
        scattered = list(range(len(sources))) if copart else _grouped(job, specs)
        job.shuffled = set(scattered)
        for i in range(len(sources)):
            stats.paths[_label(sources[i])] = "shuffled" if i in scattered else "grouped"
        if scattered:
            t_s = time.perf_counter()
            _shuffled(job, [specs[i] for i in scattered], qrels=qrels, qkinds=qkinds, num_blocks=num_blocks)
            stats.add_time("shuffle", time.perf_counter() - t_s)
        t_f = time.perf_counter()
        kinds = [key[0] for key, _, _, _ in specs]
        wide_df, agg = _finish_job(job, orders, kinds, complete=complete, fills_last=fills_last)
        if folder is not None:
            _commit_out(folder, out, names, wide=wide)
        stats.add_time("finish", time.perf_counter() - t_f)
    except BaseException:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    stats.seconds = time.perf_counter() - t0
    return wide_df, agg, stats


@dataclass
class _Job:
    """One Ray job's settings and what its tasks reported so far (run by run)."""

    ray: Any
    ev: Any
    names: list[str]
    stats: JobStats
    folder: Path | None
    wide: bool
    keep_rows: bool
    progress: Any
    fault: str | None
    holder: tuple | None
    output: str = ""  # the per-query output the folder becomes (for errors)
    tallies: dict[int, Tally] = field(default_factory=dict)
    shuffled: set[int] = field(default_factory=set)
    kept: list = field(default_factory=list)  # per-query rows kept for the caller (polars)

    def count(self, rows: int, parts: dict) -> None:
        queries = sum(p.report.get("run_queries", 0) for p in parts.values())
        if self.progress is not None and rows:
            self.progress(rows, queries)


def _check_runs_once(orders: list[list[str]], sources: list[RunSource]) -> None:
    """Refuse a run given by two sources (their rows would be merged)."""
    seen_runs: dict[str, int] = {}
    for i, order in enumerate(orders):
        for rid in order:
            if rid in seen_runs and seen_runs[rid] != i:
                raise InputError(f"run {rid!r} is also in an earlier input; each run may be given once",
                                 source=sources[i].name)
            seen_runs[rid] = i


def _grouped(job: _Job, specs: list) -> list[int]:
    """Score every source where it is read (slice tasks, then the edge queries here); the
    sources found not grouped, whose parts are taken back (they go through the shuffle)."""
    ray = job.ray
    t0 = time.perf_counter()
    remote = ray.remote(score_slice).options(num_cpus=1, scheduling_strategy="SPREAD")
    pending: dict[Any, tuple[int, int]] = {}
    kwargs = {"names": job.names, "out_dir": None if job.folder is None else str(job.folder), "output": job.output,
              "as_wide": job.wide, "keep_rows": job.keep_rows, "fault": job.fault}
    nq = len(job.ev.qrels.query_ids)
    reports: dict[int, list[SliceReport]] = {spec["src"]: [] for _, spec, _, _ in specs}
    scattered: set[int] = set()
    try:
        for _, spec, _, frame in specs:
            spec_ref = ray.put(spec)
            job.tallies[spec["src"]] = Tally(nq)
            for task, table in _slices(ray, spec, frame):
                ref = remote.remote(task, table, spec_ref, job.holder, **kwargs)
                pending[ref] = (spec["src"], task["index"])
        for rep in _reports(ray, pending, scattered):
            job.stats.chunks += 1
            job.stats.nodes[rep.node] = job.stats.nodes.get(rep.node, 0) + 1
            for k, v in rep.seconds.items():
                job.stats.add_time(f"task_{k}", v)
            if rep.src in scattered:
                continue
            if not _take(job, rep, scattered):  # not grouped: its other slices are of no use
                for ref in [r for r, (src, _) in pending.items() if src == rep.src]:
                    ray.cancel(ref, force=True)
                continue
            rep.runs, rep.table = {}, None  # added up: keep the edges only
            reports[rep.src].append(rep)
    finally:
        for ref in pending:  # an error, or an interrupted job: nothing left running
            ray.cancel(ref, force=True)
    job.stats.add_time("tasks", time.perf_counter() - t0)
    t1 = time.perf_counter()
    for _, spec, _, _ in specs:
        if spec["src"] not in scattered and not _edges(job, spec, reports[spec["src"]]):
            scattered.add(spec["src"])
    job.stats.add_time("edges", time.perf_counter() - t1)
    for src in scattered:
        job.tallies.pop(src, None)
        job.kept = [k for k in job.kept if k[0] != src]
        if job.folder is not None:
            for f in job.folder.glob(f"{PART_PREFIX}{src:05d}-*"):
                f.unlink()
    return sorted(scattered)


def _reports(ray, pending: dict, skip: set[int]):
    """The slice tasks' reports as they finish (``pending``: reference -> (source, slice),
    emptied as they come); how the tasks of sources in ``skip`` end (found scattered: their
    tasks are cancelled) is not looked at. When tasks fail, the error of the first slice
    in input order is raised, as one process meets it: later slices are cancelled (their
    workers ended, as an interrupt could leave a live worker half-way through an import),
    earlier ones awaited."""
    from fasteval import _stop

    error: tuple[tuple[int, int], BaseException] | None = None
    while pending:
        try:
            ready, _ = ray.wait(list(pending), num_returns=1)
        except SystemExit:  # Ray turns a signal's exit inside its wait into SystemExit(1)
            _stop.check()  # the signal's own status (143 for SIGTERM), when one asked
            raise
        where = pending.pop(ready[0])
        if where[0] in skip:
            continue
        try:
            rep = ray.get(ready[0])
        except ray.exceptions.TaskCancelledError:
            continue
        except Exception as exc:  # noqa: BLE001 - the first in input order is raised below
            if error is None or where < error[0]:
                error = (where, exc)
            for ref, w in list(pending.items()):
                if w > error[0]:
                    ray.cancel(ref, force=True)
            continue
        if error is None:
            yield rep
    if error is not None:
        raise error[1]


def _take(job: _Job, rep: SliceReport, scattered: set[int]) -> bool:
    """Add a slice's report to its source's tally; False (the source marked scattered) when
    the slice or one of its queries shows the source is not grouped."""
    try:
        if not rep.grouped:
            raise NotGrouped
        for rid, part in rep.runs.items():
            job.tallies[rep.src].add(rid, part)
    except NotGrouped:
        scattered.add(rep.src)
        return False
    job.tallies[rep.src].rows += rep.rows
    if rep.table is not None:
        job.kept.append((rep.src, frame_of(rep.table)))
    job.count(rep.rows, rep.runs)
    return True


def _edges(job: _Job, spec: dict, reports: list[SliceReport]) -> bool:
    """Score a source's edge queries (the first and last query of each slice, joined)
    here; False when they show the source is not grouped."""
    try:
        rows = join_edges(reports)
        if rows is None:
            return True
        wide, parts = score_rows(job.ev, rows, keep=spec["keep"], names=job.names, label=spec["label"])
        for rid, part in parts.items():
            job.tallies[spec["src"]].add(rid, part)
    except NotGrouped:
        return False
    job.count(rows.height, parts)
    if job.folder is not None and wide.height:
        write_part(wide, str(job.folder), part_name(spec["src"], "edges"), names=job.names, as_wide=job.wide,
                   output=job.output)
    elif job.keep_rows:
        job.kept.append((spec["src"], wide))
    return True


def _shuffled(job: _Job, specs: list, *, qrels, qkinds, num_blocks: int | None) -> None:
    """Score sources through Ray Data's hash shuffle on the query id; their per-query rows
    and reports are added to the job's tallies (and written, or kept)."""
    ray, ev, names = job.ray, job.ev, job.names
    qdtype = ev.qrels.query_ids.dtype
    copart = qkinds is not None
    options = None
    if copart:
        options = {"measures": ev.measures, "relevance_level": ev.relevance_level,
                   "max_docs": ev.max_docs, "complete": False, "judged_only": ev.judged_only,
                   "tie_break": ev.tie_break, "duplicates": ev.duplicates,
                   "num_docs": ev.num_docs, "compat": ev.compat, "qrels_dtypes": qkinds}
    if num_blocks is None:
        num_blocks = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    labels = {spec["src"]: spec["label"] for _, spec, _, _ in specs}
    fn_kwargs = {"holder": job.holder, "names": names, "labels": labels, "qdtype": qdtype,
                 "options": options, "fault": job.fault, "output": job.output, "as_wide": job.wide,
                 "out_dir": None if job.folder is None else str(job.folder), "keep_rows": job.keep_rows}
    groups: dict[tuple, list] = {}
    for key, spec, _, frame in specs:
        groups.setdefault(key, []).append((spec, _dataset(ray, spec, frame)))
    for key, items in groups.items():
        dss = [ds for _, ds in items]
        ds = dss[0].union(*dss[1:]) if len(dss) > 1 else dss[0]
        keep = items[0][0]["keep"]
        if copart:
            run_cols = [(c, k) for c, k in zip(keep, [key[0], key[1], "float", "int"], strict=False)]
            ds = ds.union(_qrels_dataset(ray, qrels, {"query_id": qkinds[0], "doc_id": qkinds[1]},
                                         run_cols, key_text=True))
        ds = ds.repartition(num_blocks, keys=["_key"])
        scored = ds.map_batches(score_block, batch_format="pyarrow", batch_size=None,
                                fn_kwargs={**fn_kwargs, "keep": keep})
        try:
            for bundle in scored.iter_internal_ref_bundles():
                for ref in bundle.block_refs:
                    _take_block(job, frame_of(ray.get(ref)).with_columns(pl.col("query_id").cast(qdtype)))
        except SystemExit:  # Ray's own exit for a signal met inside its calls: the signal's status
            from fasteval import _stop

            _stop.check()
            raise


def _take_block(job: _Job, block: pl.DataFrame) -> None:
    """A scored shuffle block's reports into the tallies of its sources, run by run (its
    per-query rows, when they came, kept)."""
    import pickle

    job.stats.chunks += 1
    if block.height == 0:
        return
    ev = job.ev
    reports = block.filter(pl.col("_sums").is_not_null())
    job.stats.add_time("task_score", int(reports.get_column("_r_ns").sum()) / 1e9)
    qids = ev.qrels.query_ids
    nq = len(qids)
    pos = pl.DataFrame({"query_id": qids, "_qidx": np.arange(nq, dtype=np.int64)})
    parts: dict[str, RunPart] = {}
    for rep in reports.iter_rows(named=True):
        src, rid = int(rep["_src"]), str(rep["run_id"])
        # the scored ids, spelled as the qrels spell them, sent as text
        ids = pl.DataFrame({"query_id": pl.Series(rep["_ids"], dtype=pl.Utf8).cast(qids.dtype)})
        mask = np.zeros(nq, dtype=bool)
        mask[ids.join(pos, on="query_id", how="left").get_column("_qidx").to_numpy()] = True
        part = RunPart(report={k: int(rep[f"_r_{k}"]) for k in report_keys()}, mask=np.packbits(mask),
                       dropped=[], sums=pickle.loads(rep["_sums"]))
        tally = job.tallies.setdefault(src, Tally(nq))
        tally.add(rid, part)
        tally.rows += int(rep["_r_rows"])
        parts[rid] = part
        job.count(int(rep["_r_rows"]), {rid: part})
    rows = block.filter(pl.col("_sums").is_null())
    if job.keep_rows and rows.height:
        for (src,), w in rows.partition_by("_src", as_dict=True, maintain_order=True).items():
            job.kept.append((int(src), w.select(["run_id", "query_id", *job.names])))


def _finish_job(job: _Job, orders: list[list[str]], kinds: list[str], *, complete: bool, fills_last: bool):
    """Per run, in input order: the counts, the qrels queries missing from it (filled with
    ``complete``: written, kept and summed here) and its aggregates from the partial sums;
    the kept per-query rows in :func:`fasteval.evaluate`'s order. ``(wide or None, aggregate)``."""
    from fasteval.measures.aggregate import aggregation_of, finish, partial

    ev, names, stats = job.ev, job.names, job.stats
    aggs = [aggregation_of(m) for m in names]
    qids = ev.qrels.query_ids
    fills: dict[str, pl.DataFrame] = {}
    agg_rows: list[tuple[str, str, float]] = []
    missing = filled = 0
    for i, order in enumerate(orders):
        tally = job.tallies.get(i)
        for rid in order:
            run = tally.runs.get(rid) if tally is not None else None
            if run is None:
                continue
            stats.runs.append(rid)
            stats.mode[rid] = "shuffled" if i in job.shuffled else "grouped"
            for k, v in run["report"].items():
                stats.report[k] = stats.report.get(k, 0) + v
            n = int(run["mask"].sum())
            lacking = len(qids) - n
            sums = run["sums"]
            if complete and lacking:
                fill = to_wide(ev.fill_missing(qids.filter(pl.Series(run["mask"])), rid), names)
                values = fill.select(names).to_numpy()
                for j, kind in enumerate(aggs):
                    sums[j].append(partial(values[:, j], kind))
                fills[rid] = fill
                filled += fill.height
                n += fill.height
            missing += lacking
            if n:
                agg_rows.extend((rid, m, finish(sums[j], aggs[j])) for j, m in enumerate(names))
    stats.rows = sum(t.rows for t in job.tallies.values())
    stats.report["missing_from_run"] = missing
    if complete:
        stats.report["filled"] = filled
        stats.report["evaluated"] = stats.report.get("evaluated", 0) + filled  # as Report: filled ones count
    stats.queries = stats.report.get("run_queries", 0)
    if fills and job.folder is not None:
        write_part(pl.concat(list(fills.values())), str(job.folder), "filled-queries.parquet", names=names,
                   as_wide=job.wide, output=job.output)
    agg = pl.DataFrame(agg_rows, schema={"run_id": pl.Utf8, "measure": pl.Utf8, "value": pl.Float64},
                       orient="row")
    if not job.keep_rows:
        return None, agg
    return _ordered(job, orders, kinds, fills, fills_last=fills_last), agg


def _ordered(job: _Job, orders: list[list[str]], kinds: list[str], fills: dict[str, pl.DataFrame], *,
             fills_last: bool) -> pl.DataFrame:
    """The kept per-query rows in :func:`fasteval.batch.driver.run_job`'s order (a source's
    runs, each in qrels order, with its filled queries among them, or after all of its runs
    with ``fills_last``)."""
    ev, names = job.ev, job.names
    qdtype = ev.qrels.query_ids.dtype
    nq = len(ev.qrels.query_ids)
    fq = pl.DataFrame({"query_id": ev.qrels.query_ids, "_qidx": np.arange(nq, dtype=np.int64)})
    by_src: dict[int, list[pl.DataFrame]] = {}
    for src, w in job.kept:
        by_src.setdefault(src, []).append(w)
    pieces: list[pl.DataFrame] = []
    for i, order in enumerate(orders):
        fq_i = fq if kinds[i] == _kind(qdtype) else query_positions(ev, kinds[i])
        rows = pl.concat(by_src[i], how="vertical_relaxed") if by_src.get(i) else empty_wide(names, qdtype)
        by_run = {r[0]: t for r, t in rows.partition_by("run_id", as_dict=True).items()}
        bodies, tails = [], []
        for rid in order:
            if rid not in job.stats.runs:
                continue
            body = by_run.get(rid, empty_wide(names, qdtype)).join(fq_i, on="query_id", how="left")
            fill = fills.get(rid)
            if fill is not None:
                fill = fill.join(fq_i, on="query_id", how="left").select(body.columns)
                if fills_last:
                    tails.append(fill)
                else:
                    body = pl.concat([body, fill])
            bodies.append(body.sort("_qidx"))
        pieces.extend(b.drop("_qidx") for b in [*bodies, *tails])
    return pl.concat(pieces) if pieces else empty_wide(names, qdtype)



OUTPUT_MARK = "_fasteval-output"
"""An empty file :func:`_write_dir` leaves in each folder it writes (parquet readers skip
names starting with ``_``): a folder without it is the user's, never replaced."""


def earlier_output(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder :func:`_write_dir` wrote: not a link, holding its mark
    (:data:`OUTPUT_MARK`) and regular ``*.parquet`` files, nothing else (a per-query output
    a new job may replace). A folder of parquet files without the mark is not one.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "part-0.parquet").write_bytes(b"PAR1")
    >>> earlier_output(d)
    False
    >>> (d / OUTPUT_MARK).touch()
    >>> earlier_output(d), earlier_output(d / "part-0.parquet")
    (True, False)
    >>> _ = (d / "notes.txt").write_text("mine")
    >>> earlier_output(d)
    False
    """
    try:
        if os.path.islink(path) or not os.path.isdir(path):
            return False
        entries = list(os.scandir(path))
    except OSError:
        return False
    names = {e.name for e in entries}
    return OUTPUT_MARK in names and all(
        (e.name.endswith(".parquet") or e.name == OUTPUT_MARK) and e.is_file(follow_symlinks=False)
        for e in entries)


def check_not_inside(out: str | os.PathLike[str], inputs: list, option: str) -> None:
    """Refuse an output folder that is, or holds, one of the ``inputs`` (paths; other
    values are skipped): replacing it would remove that input.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> try:
    ...     check_not_inside(d, [str(d / "run.parquet")], "-o")
    ... except ParameterError as exc:
    ...     print(str(exc).replace(str(d), "D"))
    -o must be a folder that holds no input (replacing it would remove 'D/run.parquet'), got 'D'
    """
    root = Path(out).resolve()
    for p in inputs:
        if not isinstance(p, str | os.PathLike) or os.fspath(p) == "-":
            continue
        where = Path(os.fspath(p)).resolve()
        if where == root or root in where.parents:
            raise ParameterError(option, f"a folder that holds no input (replacing it would remove "
                                 f"{os.fspath(p)!r})", os.fspath(out))


def _open_out(out) -> Path:
    """The hidden folder beside ``out`` that the job's tasks write their parts into
    (:func:`_commit_out` renames it to ``out``). Its name is one of
    :func:`fasteval.io.atomic.temp_prefix`, so that a folder a killed job left is removed
    by the next job writing ``out`` (:func:`fasteval.io.atomic.remove_stale`)."""
    from fasteval.io.atomic import remove_stale, temp_prefix, temp_stem

    final = Path(out)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        stem = temp_stem(final.name, final.parent)  # cut to fit the name limit beside the tail
        remove_stale(final.parent, stem, ".tmp", holds=("*.parquet", OUTPUT_MARK))  # what this writes
        tmp = final.parent / f"{temp_prefix(stem)}{uuid.uuid4().hex[:8]}.tmp"
        tmp.mkdir()
    except OSError as exc:
        raise _output_error(out, exc) from None
    return tmp


def _output_error(out, exc: OSError):
    from fasteval.errors import OutputError
    from fasteval.io.atomic import describe_os_error

    return OutputError(str(out), f"cannot be written: {describe_os_error(exc)}")


def _commit_out(tmp: Path, out, names: list[str], *, wide: bool) -> None:
    """Put the parts folder ``tmp`` in place as ``out`` (an earlier output moved aside, then
    removed); parts of tasks that died while writing are removed first."""
    from fasteval.io.atomic import temp_prefix, temp_stem

    final = Path(out)
    try:
        for f in tmp.glob(f"*{INPROGRESS}"):
            f.unlink()
        if not any(tmp.glob("*.parquet")):  # no results: an empty table, readable as one
            empty = empty_wide(names)
            (empty if wide else to_long(empty, names)).write_parquet(tmp / "empty.parquet")
        (tmp / OUTPUT_MARK).touch()  # what a later job may replace (earlier_output)
        old = None
        if final.exists():
            old = final.parent / f"{temp_prefix(temp_stem(final.name, final.parent))}{uuid.uuid4().hex[:8]}.tmp"
            os.rename(final, old)
        os.rename(tmp, final)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise _output_error(out, exc) from None
    if old is not None:
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink()


def evaluate_ray(qrels, run, measures, *, run_id: str | None = None, engine: str = "ray",
                 ray_address: str | None = None, share_qrels_limit: int | str | None = None,
                 qrels_mode: str = "auto", **options) -> pl.DataFrame:
    """:func:`fasteval.evaluate` with ``engine="ray"``: long per-query results in
    :func:`fasteval.evaluate`'s order (runs in input order, queries in qrels order).

    ``run``: a table (optional ``run_id`` column), a mapping ``{name: table}``, or parquet
    paths, globs or directories (a list of them too). ``ray_address``,
    ``share_qrels_limit`` and ``qrels_mode``: see :func:`run_job_ray`.
    """
    import fasteval

    check_engine(engine)
    require_ray()
    from fasteval.evaluation import (
        check_one_run_per_key,
        check_run_id_argument,
        is_runs_mapping,
        load_run,
    )

    if not isinstance(run, pl.DataFrame | str | os.PathLike | list | tuple) \
            and not is_runs_mapping(run):
        run = _read_table(run)  # one run in memory (pandas, Arrow, a run dict): named as locally
    if isinstance(run, pl.DataFrame):
        run = load_run(_read_table(run), run_id or "run").table  # refuses an empty table
        check_run_id_argument(run, run_id)
        if run_id is not None:  # the name given names the column's one run, as locally
            run = run.drop("run_id", strict=False)
        sources = [RunSource(name=run_id or "run", kind="frame", frame=run, rows=run.height,
                             has_run_id="run_id" in run.columns)]
    elif isinstance(run, dict) and all(isinstance(v, pl.DataFrame) for v in run.values()):
        # the name given wins over a run_id column, as in fasteval.evaluate({name: table})
        frames = {str(k): load_run(_read_table(v), str(k)).table for k, v in run.items()}
        for k, v in frames.items():
            check_one_run_per_key(v, k)
        frames = {k: v.drop("run_id", strict=False) for k, v in frames.items()}
        sources = [RunSource(name=k, kind="frame", frame=v, rows=v.height) for k, v in frames.items()]
    else:
        sources = discover_all(list(run) if isinstance(run, list | tuple) else [run])
    dup = options.get("duplicates", "error")
    for s in sources:
        s.duplicates = dup
    ev = fasteval.Evaluator(qrels, measures, **options)
    wide, _, _ = run_job_ray(ev, sources, complete=ev.complete, fills_last=False, ray_address=ray_address,
                          qrels=qrels, share_qrels_limit=share_qrels_limit, qrels_mode=qrels_mode)
    return to_long(wide, ev.measure_names)
