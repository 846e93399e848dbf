"""Python entry point for batch jobs: parquet paths, globs and directories in, parquet out,
in bounded memory, in this process or on Ray Data (:func:`evaluate_files`)."""

from __future__ import annotations

import io
import math
import os
import time
from dataclasses import dataclass

import polars as pl

from fasteval._words import one_line
from fasteval.batch.discover import discover_all
from fasteval.batch.driver import JobStats, aggregate_wide, run_job
from fasteval.batch.sinks import MemorySink, Sink, make_sink
from fasteval.io.files import read_once, stream_format


@dataclass
class BatchResult:
    """Outcome of :func:`evaluate_files`.

    Attributes
    ----------
    per_query : polars.DataFrame or None
        Long per-query results, unless they were streamed to ``out``.
    aggregate : polars.DataFrame
        ``(run_id, measure, value)``.
    stats : JobStats
        Rows, queries, chunks, seconds, streaming/partitioned mode and the evaluator's
        counts of filled / dropped / deduplicated queries.
    """

    per_query: pl.DataFrame | None
    aggregate: pl.DataFrame
    stats: JobStats


def make_evaluator(qrels, measures, *, after_read=None, sources=None, qrels_cache=False,
                   **options):
    """An :class:`fasteval.Evaluator` for ``qrels`` (a path or a table).

    A qrels file is read while the kernels load on a background thread
    (:func:`fasteval.batch.warm.warm_up`, joined before the qrels are prepared), and without the
    reader's duplicate check: preparing the qrels finds repeated judgments anyway, and only
    then is the file read again for the reader's message, which names the file and the line.
    ``after_read`` (optional) is called once the qrels table is in memory, before the
    kernels are ready: a job starts reading its first run there, beside the loading and the
    preparation. ``sources`` (optional, the job's :class:`fasteval.batch.discover.RunSource`
    list) tells the background thread the runs' sizes, so that it loads only the kernels
    the job calls. Standard input (``-``), a FIFO or a device is read once into memory
    (:func:`fasteval.io.files.read_once`). ``qrels_cache=True``: a regular file's
    prepared qrels are taken from :mod:`fasteval.batch.qrels_cache` when it holds them for
    the file as it is now, and put there otherwise (written on a background thread:
    :func:`fasteval.batch.qrels_cache.wait` before the process ends).
    """
    import warnings

    import fasteval
    from fasteval.batch.warm import warm_up
    from fasteval.errors import DuplicateJudgmentError

    if not isinstance(qrels, str | os.PathLike):
        if after_read is not None:
            after_read()
        return fasteval.Evaluator(qrels, measures, **options)
    job = _warm_job(qrels, measures, sources, options)
    warming = warm_up(job)
    cache = ident = parts = table = restored = taken_ns = None
    caught: list = []
    try:
        once = read_once(qrels)  # standard input, a FIFO: read once, kept for a second read
        fmt = stream_format(once.name) if once is not None else None
        if qrels_cache and once is None and _file_size(qrels) >= QRELS_CACHE_MIN_BYTES:
            from fasteval.batch import qrels_cache as cache

            taken_ns = time.time_ns()
            ident = cache.identity(qrels, fmt)  # before reading: a later change is seen
            parts = cache.load(qrels, fmt, ident=ident) if ident is not None else None
            # restored here, before the run is read: restoring needs polars' threads, which
            # the read would keep busy, and not numba, which the warm-up is importing
            restored = _restore(cache, parts)
            if restored is None:
                parts = None
        job.cached_qrels.put(restored)  # with none, the warm-up prepares tiny qrels
        if parts is None:
            with warnings.catch_warnings(record=True) as caught:
                table = fasteval.read_qrels(_again(once) if once is not None else qrels,
                                            format=fmt, duplicates="ignore")
            for w in caught:  # shown as the reader shows them; an entry skips the reader
                warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)
        if after_read is not None:  # reads beside the loading of the kernels
            after_read()
    finally:
        job.cached_qrels.put(None)  # (if not put above) never leave the warm-up waiting
        warming.join()
    if restored is not None:
        return fasteval.Evaluator(restored, measures, **options)
    try:
        evaluator = fasteval.Evaluator(table, measures, **options)
    except DuplicateJudgmentError:
        # raises the reader's error (file, line, pair)
        fasteval.read_qrels(_again(once) if once is not None else qrels, format=fmt)
        raise
    if ident is not None and not caught:
        cache.store_in_background(evaluator.qrels, ident, taken_ns=taken_ns)
    return evaluator


QRELS_CACHE_MIN_BYTES = 1 << 20
"""Qrels files smaller than this (some 50,000 judgments in TREC text) are prepared in
milliseconds: the cache is not consulted for them (nor its module loaded)."""


def _restore(cache, parts):
    """The prepared qrels of a cache entry's ``parts``; None: no entry, or one that does not
    restore (a miss: the file is read)."""
    if parts is None:
        return None
    try:
        return cache.restore(parts)
    except Exception:  # noqa: BLE001 - the cache is an optimisation: the job reads the file
        return None


def _file_size(path) -> int:
    try:
        return os.path.getsize(path)
    except (OSError, TypeError, ValueError):
        return 0


def _warm_job(qrels, measures, sources, options):
    """What :func:`fasteval.batch.warm.warm_up` is told of a job: its measures and options,
    and the bounds on its sizes known without reading (parquet footers, file sizes)."""
    from fasteval.batch.warm import Job, Slot, rows_bounds

    q_lo, q_hi = rows_bounds(qrels)
    r_lo = r_hi = None
    if sources:
        bounds = [(s.rows, s.rows) if s.kind in ("parquet", "frame") and s.rows >= 0
                  else rows_bounds(s.files[0]) if s.kind == "file" and s.files
                  else (None, None) for s in sources]
        known = [lo for lo, _ in bounds if lo is not None]
        r_lo = max(known) if known else None
        r_hi = None if any(hi is None for _, hi in bounds) else max(hi for _, hi in bounds)
    names = tuple(measures) if isinstance(measures, list | tuple) else (measures,)
    return Job(measures=names, options=dict(options), qrels_rows=q_hi, qrels_rows_at_least=q_lo,
               run_rows=r_hi, run_rows_at_least=r_lo, cached_qrels=Slot())


def _again(data: io.BytesIO) -> io.BytesIO:
    """A fresh in-memory file with the content and name of ``data``."""
    copy = io.BytesIO(data.getvalue())
    copy.name = data.name  # type: ignore[attr-defined]
    return copy


def evaluate_files(qrels, runs, measures, *, out: str | os.PathLike[str] | None = None, wide: bool = False,
                   aggregate_out: str | os.PathLike[str] | None = None, max_rows_per_chunk: int | None = None,
                   memory_limit: int | str | None = None, progress: bool = False, evaluator=None,
                   engine: str = "local", ray_address: str | None = None,
                   share_qrels_limit: int | str | None = None, **options) -> BatchResult:
    """Score runs given as parquet files, globs or directories with bounded memory.

    Parameters
    ----------
    qrels : path or table
        Relevance judgements (any format :func:`fasteval.read_qrels` reads).
    runs : path, table, mapping, or list of them
        Parquet files, quoted globs, directories (hive-partitioned, or one run per file),
        other run files (read whole), or tables (polars, pandas, pyarrow, run dicts);
        a mapping ``{name: run}`` names its runs. See :mod:`fasteval.batch.discover`.
    measures : list of str
        Measure names in any dialect.
    out : path, optional
        Write the per-query results here, atomically; ``per_query`` is then None. The
        suffix picks the format: ``.csv`` / ``.tsv`` (streamed), ``.json`` / ``.jsonl`` /
        ``.ndjson`` (written once scored), parquet otherwise (streamed); ``.txt`` and
        ``.trec`` are refused (text reports: render ``per_query`` instead). Without it the
        results are returned in memory.
    wide : bool
        One column per measure instead of the long ``(measure, value)`` layout.
    aggregate_out : path, optional
        Also write the aggregate table (parquet/CSV/JSON by suffix), atomically.
    max_rows_per_chunk, memory_limit
        Chunk size, directly or from a memory budget such as ``"1GiB"``.
    progress : bool
        Show progress on stderr (after two seconds; a bar on a terminal, plain lines
        elsewhere; see :mod:`fasteval.progress`).
    engine : {"local", "ray"}
        ``"ray"`` scores on Ray (:mod:`fasteval.batch.ray_engine`; ``out`` is then a parquet
        directory of the workers' parts); needs ``pip install ".[ray]"``.
    ray_address, share_qrels_limit
        With ``engine="ray"``: the cluster to connect to (default: a local Ray), and the
        size up to which prepared qrels are shared whole (default 4 GiB; see
        :func:`fasteval.batch.ray_engine.run_job_ray`).
    **options
        ``relevance_level``, ``max_docs``, ``complete``, ``judged_only``, ``tie_break``, ...
        as for :func:`fasteval.evaluate`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fasteval.datasets import SynthSpec, write_synth
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> paths = write_synth(SynthSpec(queries=40, depth=10, runs=2), d)
    >>> res = evaluate_files(d / "qrels.parquet", d / "runs", ["ndcg@10", "map"])
    >>> sorted(res.aggregate.get_column("run_id").unique().to_list())
    ['run_0', 'run_1']
    """
    from fasteval.io.atomic import check_outputs

    specs = runs if isinstance(runs, list | tuple) else [runs]
    out_fmt = _check_job(engine, qrels, specs, out, aggregate_out)
    if evaluator is None:
        evaluator = make_evaluator(qrels, measures, **options)
    names = list(evaluator.measure_names)
    sources = discover_all(list(specs))
    files = [f for s in sources for f in s.files]
    check_outputs({"out": _checked_out(engine, out, files), "aggregate_out": aggregate_out}, files)
    bar = job_progress(sources, enabled=progress)
    complete = bool(options.get("complete", False))
    if engine == "ray":
        wide_res, agg, stats = _run_ray(
            evaluator, sources, names, bar, qrels=qrels, out=out, wide=wide, aggregate_out=aggregate_out,
            complete=complete, ray_address=ray_address, share_qrels_limit=share_qrels_limit)
    else:
        wide_res, agg, stats = _run_local(
            evaluator, sources, names, bar, out=out, out_fmt=out_fmt, wide=wide, aggregate_out=aggregate_out,
            complete=complete, max_rows_per_chunk=max_rows_per_chunk, memory_limit=memory_limit)
    per_query = None
    if out is None:  # wide_res: the same rows, in fasteval.evaluate's order
        from fasteval.batch.sinks import to_long

        per_query = wide_res if wide else to_long(wide_res, names)
    return BatchResult(per_query=per_query, aggregate=agg, stats=stats)


def _check_job(engine: str, qrels, specs: list, out, aggregate_out) -> str | None:
    """:func:`evaluate_files`' checks before anything is read (the engine, the outputs' formats,
    no output that is an input); the format of ``out`` on the local engine."""
    from fasteval.batch.ray_engine import check_engine, require_ray
    from fasteval.io.atomic import check_outputs

    if check_engine(engine) == "ray":
        require_ray()
    out_fmt = _out_format(out) if engine != "ray" else None
    if aggregate_out is not None:  # a compressed name is refused now, not after the work
        from fasteval.batch.sinks import format_from_path

        format_from_path(aggregate_out, param="aggregate_out")
    check_outputs({"out": _checked_out(engine, out, [qrels, *specs]), "aggregate_out": aggregate_out},
                  [qrels, *specs])  # before anything is read
    return out_fmt


def _checked_out(engine: str, out, inputs: list):
    """``out`` as :func:`fasteval.io.atomic.check_outputs` should check it: None when it is
    the parts folder of an earlier Ray job that this Ray job replaces when it ends (checked
    here to hold none of ``inputs``)."""
    if engine != "ray" or out is None:
        return out
    from fasteval.batch.ray_engine import check_not_inside, earlier_output

    if not earlier_output(out):
        return out
    check_not_inside(out, inputs, "out")
    return None


def _run_ray(evaluator, sources, names: list[str], bar, *, qrels, out, wide: bool, aggregate_out, complete: bool,
             ray_address: str | None, share_qrels_limit: int | str | None):
    """The job on Ray (``out`` a parquet folder the tasks write): ``(wide results or None
    when written to ``out``, aggregate, stats)``."""
    from fasteval.batch.ray_engine import run_job_ray

    with bar:
        wide_res, agg, stats = run_job_ray(
            evaluator, sources, complete=complete, out=out, wide=wide, ray_address=ray_address,
            qrels=qrels, share_qrels_limit=share_qrels_limit, progress=bar.update, keep_rows=out is None)
    if aggregate_out is not None:
        write_table_atomic(agg, aggregate_out)
    return wide_res, agg, stats


def _run_local(evaluator, sources, names: list[str], bar, *, out, out_fmt: str | None, wide: bool, aggregate_out,
               complete: bool, max_rows_per_chunk: int | None, memory_limit: int | str | None):
    """The job on this machine, its outputs written (committed together, or none of them):
    ``(wide results, aggregate, stats)``."""
    sink: Sink
    if out is not None and out_fmt in ("parquet", "csv"):
        sink = make_sink(out, out_fmt, wide=wide, measure_names=names)
    else:  # in memory; JSON output is written from it below
        sink = MemorySink(names)
    json_out = None
    try:
        with bar:
            wide_res, stats = run_job(evaluator, sources, sink, complete=complete,
                                      max_rows_per_chunk=max_rows_per_chunk, memory_limit=memory_limit,
                                      progress=bar.update)
        agg = aggregate_wide(wide_res, names)
        sink.finish()  # the per-query file complete before the aggregates are put in place
        if out is not None and out_fmt == "json":  # put in place with the aggregates
            json_out = _json_output(wide_res, names, wide=wide, path=out)
        if aggregate_out is not None:
            write_table_atomic(agg, aggregate_out)
        sink.commit()
        if json_out is not None:
            json_out.commit()
    except BaseException:
        sink.abort()
        if json_out is not None:
            json_out.abort()
        raise
    return wide_res, agg, stats


def _json_output(wide_res: pl.DataFrame, names: list[str], *, wide: bool, path):
    """The per-query results written as JSON (JSON Lines for ``.jsonl`` / ``.ndjson``) to
    a temporary file: an :class:`fasteval.io.atomic.AtomicOutput` to commit."""
    from fasteval.batch.sinks import json_lines, to_long
    from fasteval.io.atomic import AtomicOutput
    from fasteval.io.writers import check_json_numbers

    table = wide_res if wide else to_long(wide_res, names)
    check_json_numbers(table, source=os.fspath(path))  # NaN would be written as null: a missing value
    output = AtomicOutput(path)
    try:
        if json_lines(path):
            table.write_ndjson(output.tmp)
        else:
            with open(output.tmp, "w") as fh:  # a JSON array, ended by a newline (text file)
                fh.write(table.write_json() + "\n")
    except Exception as exc:
        failure = output.failure(exc)
        output.abort()
        if failure is None:
            raise
        raise failure from None
    return output


def _out_format(out) -> str | None:
    """The format of :func:`evaluate_files`'s ``out`` from its suffix: ``parquet`` (also
    for an unknown suffix), ``csv`` (``.tsv``: tab-separated) or ``json``; a text report
    suffix (``.txt``, ``.trec``) is refused before any work."""
    if out is None:
        return None
    from fasteval.batch.sinks import format_from_path
    from fasteval.errors import ParameterError

    fmt = format_from_path(out, default="parquet", param="out")
    if fmt not in ("parquet", "csv", "json"):
        raise ParameterError(
            "out", "a .parquet, .csv, .tsv, .json, .jsonl or .ndjson path", os.fspath(out)
        )
    return fmt


def job_progress(sources, *, enabled: bool = True):
    """The progress of a job over ``sources`` (:class:`fasteval.progress.Progress`): rows,
    out of the parquet rows known in advance, with the queries scored beside them; feed it
    to the driver as ``progress=bar.update``."""
    from fasteval.progress import Progress

    return Progress(total=sum(s.rows for s in sources if s.rows > 0) or None, unit="rows",
                    enabled=enabled)


def write_table_atomic(df: pl.DataFrame, path: str | os.PathLike[str], fmt: str | None = None, *,
                       agg_kind: dict[str, str] | None = None) -> None:
    """Write a small table (aggregates) atomically, format from ``fmt`` or the suffix
    (``.tsv``: tab-separated CSV, ``.jsonl``/``.ndjson``: JSON Lines, ``.trec``: trec_eval's
    lines, see :func:`fasteval.batch.sinks.trec_lines`, with ``agg_kind``; none: parquet, or
    the text table for ``-``, standard output; see :func:`fasteval.io.atomic.atomic_path`:
    devices, FIFOs and ``-`` are written in place)."""
    from fasteval.batch.sinks import csv_separator, format_from_path, json_lines, trec_lines
    from fasteval.io.atomic import atomic_open, atomic_path

    fmt = fmt or format_from_path(path, default="table" if os.fspath(path) == "-" else "parquet")
    if fmt == "parquet":
        with atomic_path(path) as tmp:
            df.write_parquet(tmp)
    elif fmt == "csv":  # tab-separated for .tsv
        with atomic_open(path, "w") as fh:
            fh.write(df.write_csv(separator=csv_separator(path)))
    elif fmt == "json":  # JSON Lines for .jsonl / .ndjson
        from fasteval.io.writers import check_json_numbers

        check_json_numbers(df, source=os.fspath(path))  # NaN would be written as null: a missing value
        with atomic_open(path, "w") as fh:
            fh.write(df.write_ndjson() if json_lines(path) else df.write_json() + "\n")
    elif fmt == "trec":
        with atomic_open(path, "w") as fh:
            fh.write(trec_lines(df, per_query="query_id" in df.columns, agg_kind=agg_kind))
    else:
        with atomic_open(path, "w") as fh:
            fh.write(render_table(df))


def render_table(df: pl.DataFrame) -> str:
    """A plain aligned text table (every row, no truncation); names and ids are printed
    through :func:`fasteval._words.one_line`: a control character or line break in a run
    id, query id or measure label is written as an escape, never sent to the terminal.

    Examples
    --------
    >>> print(render_table(pl.DataFrame({"measure": ["map"], "value": [0.25]})), end="")
    measure  value
    map      0.2500
    >>> print(render_table(pl.DataFrame({"measure": ["map"], "r\\x1b[2J\\n1": [0.25]})), end="")
    measure  r\\x1b[2J\\n1
    map      0.2500
    """
    cols = [one_line(c) for c in df.columns]  # run ids and measure labels as column names
    cells = [[one_line(_fmt(v)) for v in df.get_column(c).to_list()] for c in df.columns]
    widths = [max([len(c), *(len(x) for x in col)]) for c, col in zip(cols, cells, strict=True)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()]
    for i in range(df.height):
        lines.append("  ".join(cells[j][i].ljust(widths[j]) for j in range(len(cols))).rstrip())
    return "\n".join(lines) + "\n"


def _fmt(v) -> str:
    """A table cell: four decimals, large whole numbers whole, NaN as ``nan``.

    Examples
    --------
    >>> [_fmt(v) for v in (0.25, 12345.0, float("nan"), float("-inf"), None, "q1")]
    ['0.2500', '12345', 'nan', '-inf', '', 'q1']
    """
    if isinstance(v, float):
        if not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        if v == int(v) and abs(v) >= 1e4:
            return str(int(v))
        return f"{v:.4f}"
    return "" if v is None else str(v)
