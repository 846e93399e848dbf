"""Scoring on Ray Data (``engine="ray"``): the batch job spread over a Ray cluster.

The runs found by :func:`fasteval.batch.discover.discover_all` (same rules as the
single-machine path) are read with ``ray.data.read_parquet`` (other run files and
in-memory tables are read on the driver and handed to Ray). Every row gets its run name
(``run_id`` column, hive ``run_id=`` directory, or the source's name) and the index of its
input (``_src``); rows are then hash-partitioned on ``(_src, run_id, query_id)``
(``Dataset.repartition(keys=...)``: no global sort), so that each query of each run lies
whole in one block. Blocks are scored with ``map_batches`` by the same
:class:`fasteval.Evaluator`, prepared once on the driver and shared through the object
store (``ray.put``). Per-query values are therefore bit-identical to the single-process
path; the driver collects them, puts them back in the single-machine order (runs in input
order, queries in qrels order, filled queries last) and aggregates them as
:func:`fasteval.batch.driver.aggregate_wide` does, so aggregates are equal too.

Per-query output (``out``) is written by Ray's parquet writer into a hidden directory
beside ``out``, renamed to ``out`` only when complete.

A failing block task is retried by Ray (``max_retries``; application errors other than
:class:`fasteval.errors.FastevalError` are retried too). ``FASTEVAL_RAY_FAULT`` (a path,
read on the driver) injects a one-time failure for tests: the first block task to create
that file raises :class:`InjectedFault`.

Not supported yet: ``tie_break="input"`` (the input order of a query's rows is not kept
across the shuffle), qrels co-partitioned with the runs (they are always shared whole).
"""

from __future__ import annotations

import os
import shutil
import socket
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from fasteval.batch.discover import RunSource
from fasteval.batch.driver import JobStats
from fasteval.errors import FastevalError, InputError, ParameterError

ENGINES = ("local", "ray")
_REPORT_KEYS = ("run_queries", "evaluated", "dropped_not_in_qrels", "deduplicated_rows")
_FAULT_ENV = "FASTEVAL_RAY_FAULT"


class InjectedFault(RuntimeError):
    """Raised once by a block task when ``FASTEVAL_RAY_FAULT`` names a file not yet made."""


def require_ray():
    """Import and return ``ray``, or raise a one-line :class:`FastevalError` naming the extra.

    Examples
    --------
    >>> try:
    ...     ray = require_ray()
    ... except FastevalError as exc:
    ...     assert "fasteval[ray]" in str(exc)
    """
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise FastevalError('engine="ray" needs Ray Data: pip install "fasteval[ray]"') from None
    return ray


def check_engine(engine: str) -> str:
    """Validate an ``engine`` value.

    Examples
    --------
    >>> check_engine("ray")
    'ray'
    """
    if engine not in ENGINES:
        raise ParameterError("engine", f"one of {', '.join(ENGINES)}", engine)
    return engine


# ---------------------------------------------------------------- worker side

_EVALUATORS: dict[str, Any] = {}


def _evaluator_of(holder: tuple) -> Any:
    """The shared evaluator, fetched from the object store once per worker process."""
    import ray

    ref = holder[0]
    key = ref.hex()
    ev = _EVALUATORS.get(key)
    if ev is None:
        _EVALUATORS.clear()
        ev = _EVALUATORS[key] = ray.get(ref)
    return ev


def _maybe_fail(fault: str | None) -> None:
    if not fault:
        return
    try:
        fd = os.open(fault, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    raise InjectedFault(f"injected one-time failure ({fault})")


def score_block(block, *, holder: tuple, names: list[str], fault: str | None = None):
    """Score one block of whole queries; return per-query rows and one report row per run.

    Rows: ``_src``, ``run_id``, ``query_id``, ``_qidx`` (qrels index; -1 on report rows),
    the measures, then the report counts (``rows`` and :data:`_REPORT_KEYS`, only on report
    rows).
    """
    from fasteval.prepare import check_run_table

    _maybe_fail(fault)
    ev = _evaluator_of(holder)
    df = pl.from_arrow(block)
    if not isinstance(df, pl.DataFrame):  # from_arrow on a Table always gives one
        raise TypeError(f"expected a polars DataFrame, got {type(df).__name__}")
    qdtype = ev.qrels.query_ids.dtype
    parts = []
    for (src, rid), table in df.partition_by(["_src", "run_id"], as_dict=True, maintain_order=True).items():
        run = table.drop(["_src", "run_id"])
        try:
            check_run_table(run, "run")
        except InputError as exc:
            raise InputError(exc.message, source=f"run {rid!r}", column=exc.column) from None
        batch = ev.prepare(run, complete=False, check_scores=False)
        values = ev.score(batch)
        n = values.shape[0]
        cols: dict[str, Any] = {
            "_src": pl.Series("_src", [src] * (n + 1), dtype=pl.Int64),
            "run_id": pl.Series("run_id", [rid] * (n + 1), dtype=pl.Utf8),
            "query_id": pl.concat([ev.qrels.query_ids.gather(batch.qidx),
                                   pl.Series([None], dtype=qdtype)]),
            "_qidx": pl.Series("_qidx", np.append(np.asarray(batch.qidx, dtype=np.int64), -1)),
        }
        for j, m in enumerate(names):
            cols[m] = pl.Series(m, np.append(values[:, j], np.nan), dtype=pl.Float64)
        rep = batch.report
        counts = {"rows": run.height, **{k: int(getattr(rep, k)) for k in _REPORT_KEYS}}
        for k, v in counts.items():
            cols[f"_r_{k}"] = pl.Series(f"_r_{k}", [0] * n + [v], dtype=pl.Int64)
        parts.append(pl.DataFrame(cols))
    if not parts:
        return _empty_scored(names, qdtype).to_arrow()
    return pl.concat(parts).to_arrow()


def _empty_scored(names: list[str], qdtype) -> pl.DataFrame:
    schema = {"_src": pl.Int64, "run_id": pl.Utf8, "query_id": qdtype, "_qidx": pl.Int64}
    schema |= {m: pl.Float64 for m in names}
    schema |= {f"_r_{k}": pl.Int64 for k in ("rows", *_REPORT_KEYS)}
    return pl.DataFrame(schema=schema)


def _tag(block, *, src: int, run: str | None, by_path: dict[str, str] | None, keep: list[str],
         casts: dict[str, str]):
    """Add ``_src`` and ``run_id`` to a read block; keep the run columns, cast ids and scores."""
    df = pl.from_arrow(block)
    if not isinstance(df, pl.DataFrame):  # from_arrow on a Table always gives one
        raise TypeError(f"expected a polars DataFrame, got {type(df).__name__}")
    if by_path is not None:
        df = df.with_columns(pl.col("path").replace_strict(by_path, return_dtype=pl.Utf8).alias("run_id"))
    elif run is not None:
        df = df.with_columns(pl.lit(run, dtype=pl.Utf8).alias("run_id"))
    dtypes = {"int": pl.Int64, "str": pl.Utf8, "float": pl.Float64}
    df = df.with_columns(pl.lit(src, dtype=pl.Int64).alias("_src"),
                         *[pl.col(c).cast(dtypes[k]) for c, k in casts.items()],
                         pl.col("run_id").cast(pl.Utf8))
    return df.select(["_src", "run_id", *keep]).to_arrow()


# ---------------------------------------------------------------- driver side

def _columns_of(source: RunSource) -> pl.Schema:
    if source.kind == "parquet":
        return pl.Schema(pl.read_parquet_schema(source.files[0]))
    return source.frame.schema  # type: ignore[union-attr]


def _kind(dtype) -> str:
    from fasteval.batch.discover import _kind as kind

    return kind(dtype)


def _load_frame(source: RunSource) -> pl.DataFrame:
    from fasteval.batch.driver import iter_frames

    parts = list(iter_frames(source, 1 << 62))
    return pl.concat(parts, how="vertical_relaxed") if len(parts) > 1 else parts[0]


def _run_order(source: RunSource, frame: pl.DataFrame | None) -> list[str]:
    """Run names of a source in order of first appearance (as the single-machine path meets them)."""
    if frame is not None:
        if "run_id" in frame.columns:
            return [str(r) for r in frame.get_column("run_id").unique(maintain_order=True).to_list()]
        return [source.name]
    hive = source.hive or [{}] * len(source.files)
    if source.has_run_id or "run_id" in _columns_of(source):
        ids = (pl.scan_parquet([str(f) for f in source.files], hive_partitioning=False)
               .select(pl.col("run_id").cast(pl.Utf8).unique(maintain_order=True)).collect())
        return ids.get_column("run_id").to_list()
    if any("run_id" in h for h in hive):
        return list(dict.fromkeys(h.get("run_id", source.name) for h in hive))
    return [source.name]


def _dataset(ray, i: int, source: RunSource, tie_break: str):
    """``(group key, dataset, run order, frame rows)`` for one source."""
    frame = _load_frame(source) if source.kind != "parquet" else None
    schema = frame.schema if frame is not None else _columns_of(source)
    keep = ["query_id", "doc_id", "score"] + (["rank"] if tie_break == "rank" and "rank" in schema else [])
    casts = {"query_id": _kind(schema["query_id"]), "doc_id": _kind(schema["doc_id"]), "score": "float"}
    if "rank" in keep:
        casts["rank"] = "int"
    key = (casts["query_id"], casts["doc_id"], "rank" in keep)
    order = _run_order(source, frame)
    kwargs: dict[str, Any] = {"src": i, "keep": keep, "casts": casts, "run": None, "by_path": None}
    if frame is not None:
        if "run_id" not in frame.columns:
            kwargs["run"] = source.name
        ds = ray.data.from_arrow(frame.select([c for c in ("run_id", *keep) if c in frame.columns]).to_arrow())
    else:
        has_col = "run_id" in schema
        hive = source.hive or [{}] * len(source.files)
        hive_runs = not has_col and any("run_id" in h for h in hive)
        cols = [c for c in ("run_id", *keep) if c in schema]
        ds = ray.data.read_parquet([str(f) for f in source.files], columns=cols, partitioning=None,
                                   include_paths=hive_runs, override_num_blocks=len(source.files))
        if hive_runs:
            kwargs["by_path"] = {str(f): h.get("run_id", source.name) for f, h in zip(source.files, hive, strict=True)}
        elif not has_col:
            kwargs["run"] = source.name
    ds = ds.map_batches(_tag, batch_format="pyarrow", batch_size=None, fn_kwargs=kwargs)
    return key, ds, order


def _ensure_ray(ray, address: str | None) -> bool:
    """Connect to (or start) Ray; True when this call started it."""
    if ray.is_initialized():
        return False
    ray.init(address=address, include_dashboard=False, ignore_reinit_error=True,
             log_to_driver=False, logging_level="ERROR")
    return True


def run_job_ray(
    evaluator,
    sources: list[RunSource],
    *,
    complete: bool = False,
    fills_last: bool = True,
    out: str | os.PathLike[str] | None = None,
    wide: bool = False,
    ray_address: str | None = None,
    num_blocks: int | None = None,
    max_retries: int = 3,
) -> tuple[pl.DataFrame, JobStats]:
    """Score ``sources`` on Ray; return ``(wide per-query values, stats)`` like
    :func:`fasteval.batch.driver.run_job`.

    Parameters
    ----------
    evaluator : fasteval.Evaluator
        Prepared once here, shared with the workers through the object store.
    sources : list of RunSource
        From :func:`fasteval.batch.discover.discover_all`.
    complete : bool
        Add qrels queries missing from a run (``-c``), scored on the driver.
    fills_last : bool
        Put filled queries after a run's scored ones (the batch job's order, default) or
        among them in qrels order (:func:`fasteval.evaluate`'s order).
    out : path, optional
        Also write the per-query results (long, or ``wide``) as a parquet directory, made
        under a hidden name and renamed to ``out`` when complete.
    ray_address : str, optional
        ``ray.init(address=...)`` when Ray is not initialised yet (None: a local Ray).
    num_blocks : int, optional
        Hash partitions (default: twice the cluster's CPUs, at least 2).
    max_retries : int
        Retries of a failed block task.

    Examples
    --------
    >>> import fasteval
    >>> from fasteval.batch.discover import discover_all
    >>> ev = fasteval.Evaluator({"q": {"d": 1}}, ["P@1"])
    >>> wide, stats = run_job_ray(ev, discover_all(["run.parquet"]))  # doctest: +SKIP
    """
    ray = require_ray()
    if evaluator.tie_break == "input":
        raise ParameterError("tie_break", 'trec or rank with engine="ray" (input order is not kept '
                             "across the shuffle yet)", "input")
    t0 = time.perf_counter()
    started = _ensure_ray(ray, ray_address)
    try:
        return _run(ray, evaluator, sources, complete=complete, fills_last=fills_last, out=out,
                    wide=wide, num_blocks=num_blocks, max_retries=max_retries, t0=t0)
    except Exception as exc:
        raise _unwrap(ray, exc) from None
    finally:
        if started:
            ray.shutdown()


def _unwrap(ray, exc: BaseException) -> BaseException:
    """The user error inside a Ray task error (one line), else the error itself."""
    seen = 0
    cur: BaseException | None = exc
    while cur is not None and seen < 10:
        if isinstance(cur, FastevalError):
            return cur
        cause = getattr(cur, "cause", None)
        cur = cause if isinstance(cause, BaseException) else cur.__cause__
        seen += 1
    return exc


def _quiet_data(ray) -> None:
    """One progress report, not two garbled together: Ray Data's bars and logs are turned
    off (the CLI draws its own line)."""
    import logging

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    if hasattr(ctx, "print_on_execution_start"):
        ctx.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)


def _run(ray, evaluator, sources, *, complete, fills_last, out, wide, num_blocks, max_retries, t0):
    _quiet_data(ray)
    names = list(evaluator.measure_names)
    stats = JobStats(mode={}, max_rows_per_chunk=0)
    groups: dict[tuple, list] = {}
    orders: list[list[str]] = []
    for i, source in enumerate(sources):
        key, ds, order = _dataset(ray, i, source, evaluator.tie_break)
        groups.setdefault(key, []).append(ds)
        orders.append(order)
    seen_runs: dict[str, int] = {}
    for i, order in enumerate(orders):
        for rid in order:
            if rid in seen_runs and seen_runs[rid] != i:
                raise InputError(f"run {rid!r} is also in an earlier input; each run may be given once",
                                 source=sources[i].name)
            seen_runs[rid] = i
    holder = (ray.put(evaluator),)
    if num_blocks is None:
        num_blocks = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    fault = os.environ.get(_FAULT_ENV) or None
    scored_parts = []
    t_read = time.perf_counter()
    for dss in groups.values():
        ds = dss[0].union(*dss[1:]) if len(dss) > 1 else dss[0]
        ds = ds.repartition(num_blocks, keys=["_src", "run_id", "query_id"])
        scored = ds.map_batches(
            score_block, batch_format="pyarrow", batch_size=None,
            fn_kwargs={"holder": holder, "names": names, "fault": fault},
            max_retries=max_retries, retry_exceptions=[InjectedFault, OSError, ConnectionError],
        ).materialize()
        stats.chunks += scored.num_blocks()
        scored_parts.append(scored)
    stats.add_time("ray", time.perf_counter() - t_read)
    tables = [t for s in scored_parts for t in ray.get(s.to_arrow_refs())]
    frames = [pl.from_arrow(t) for t in tables if t.num_rows]
    qdtype = evaluator.qrels.query_ids.dtype
    allrows = (pl.concat([f.with_columns(pl.col("query_id").cast(qdtype)) for f in frames])  # type: ignore[union-attr]
               if frames else _empty_scored(names, qdtype))
    reports = allrows.filter(pl.col("_qidx") < 0)
    rows = allrows.filter(pl.col("_qidx") >= 0)
    # the report: per-block counts add up (each query lies whole in one block)
    for k in _REPORT_KEYS:
        stats.report[k] = int(reports.get_column(f"_r_{k}").sum())
    stats.rows = int(reports.get_column("_r_rows").sum())
    stats.queries = stats.report["run_queries"]
    run_rank = {rid: r for r, rid in enumerate(rid for order in orders for rid in order)}
    present = reports.get_column("run_id").unique().to_list()
    ordered_runs = sorted(present, key=lambda r: run_rank.get(r, len(run_rank)))
    stats.runs = ordered_runs
    stats.mode = {r: "ray" for r in ordered_runs}
    nq = len(evaluator.qrels.query_ids)
    rows = rows.with_columns(pl.col("run_id").replace_strict(run_rank, default=len(run_rank),
                                                             return_dtype=pl.Int64).alias("_run"))
    pieces: list[pl.DataFrame] = []
    filled = 0
    missing = 0
    fills: list[pl.DataFrame] = []
    fq = pl.DataFrame({"query_id": evaluator.qrels.query_ids, "_qidx": np.arange(nq, dtype=np.int64)})
    for order in orders:  # as run_job: a source's runs, then (-c) its runs' filled queries
        bodies, tails = [], []
        for rid in [r for r in order if r in set(ordered_runs)]:
            part = rows.filter(pl.col("run_id") == rid).sort("_qidx")
            body = part.select(["run_id", "query_id", *names, "_qidx"])
            if complete:
                from fasteval.batch.sinks import to_wide

                fill = to_wide(evaluator.fill_missing(part.get_column("query_id"), rid), names)
                n_fill = fill.get_column("query_id").n_unique()
                filled += n_fill
                missing += n_fill
                fill = fill.join(fq, on="query_id", how="left").select(body.columns)
                fills.append(fill.drop("_qidx"))
                if fills_last:
                    tails.append(fill)
                else:
                    body = pl.concat([body, fill]).sort("_qidx")
            else:
                missing += nq - part.height
            bodies.append(body)
        pieces.extend(b.drop("_qidx") for b in [*bodies, *tails])
    if complete:
        stats.report["filled"] = filled
    stats.report["missing_from_run"] = missing
    from fasteval.batch.sinks import empty_wide

    wide_df = pl.concat(pieces) if pieces else empty_wide(names, qdtype)
    if out is not None:
        t_w = time.perf_counter()
        _write_dir(scored_parts, pl.concat(fills) if fills else None, out, names, wide=wide)
        stats.add_time("write", time.perf_counter() - t_w)
    stats.seconds = time.perf_counter() - t0
    return wide_df, stats


def _drop_helpers(block, *, names: list[str], wide: bool):
    from fasteval.batch.sinks import to_long

    df = pl.from_arrow(block)
    if not isinstance(df, pl.DataFrame):  # from_arrow on a Table always gives one
        raise TypeError(f"expected a polars DataFrame, got {type(df).__name__}")
    df = df.filter(pl.col("_qidx") >= 0).select(["run_id", "query_id", *names])
    return (df if wide else to_long(df, names)).to_arrow()


def _write_dir(scored_parts, fills: pl.DataFrame | None, out, names: list[str], *, wide: bool) -> None:
    """Write per-query results with Ray's parquet writer into a hidden directory beside
    ``out``; rename it to ``out`` once complete (an older ``out`` is replaced)."""
    from fasteval.batch.sinks import to_long
    from fasteval.io.atomic import temp_prefix

    final = Path(out)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f"{temp_prefix('.' + final.name + '.')}{uuid.uuid4().hex[:8]}.tmp"
    try:
        for scored in scored_parts:
            part = scored.map_batches(_drop_helpers, batch_format="pyarrow", batch_size=None,
                                      fn_kwargs={"names": names, "wide": wide})
            part.write_parquet(str(tmp))  # one writer call per id-type group, same folder
        tmp.mkdir(parents=True, exist_ok=True)
        if fills is not None and fills.height:  # filled queries (-c), made on the driver
            (fills if wide else to_long(fills, names)).write_parquet(tmp / "filled-queries.parquet")
        old = None
        if final.exists():
            old = final.parent / f".{final.name}.{socket.gethostname()}-{os.getpid()}-old.tmp"
            os.rename(final, old)
        os.rename(tmp, final)
        if old is not None:
            if old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink()
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def evaluate_ray(qrels, run, measures, *, run_id: str | None = None, engine: str = "ray",
                 ray_address: str | None = None, **options) -> pl.DataFrame:
    """:func:`fasteval.evaluate` with ``engine="ray"``: long per-query results in
    :func:`fasteval.evaluate`'s order (runs in input order, queries in qrels order).

    ``run``: a table (optional ``run_id`` column), a mapping ``{name: table}``, or parquet
    paths, globs or directories (a list of them too).
    """
    import fasteval
    from fasteval.batch.discover import discover_all
    from fasteval.batch.sinks import to_long

    check_engine(engine)
    require_ray()
    if isinstance(run, pl.DataFrame):
        sources = [RunSource(name=run_id or "run", kind="frame", frame=run, rows=run.height,
                             has_run_id="run_id" in run.columns)]
    elif isinstance(run, dict) and all(isinstance(v, pl.DataFrame) for v in run.values()):
        sources = [RunSource(name=str(k), kind="frame", frame=v, rows=v.height) for k, v in run.items()]
    else:
        sources = discover_all(list(run) if isinstance(run, list | tuple) else [run])
    dup = options.get("duplicates", "error")
    for s in sources:
        s.duplicates = dup
    ev = fasteval.Evaluator(qrels, measures, **options)
    wide, _ = run_job_ray(ev, sources, complete=ev.complete, fills_last=False, ray_address=ray_address)
    return to_long(wide, ev.measure_names)
