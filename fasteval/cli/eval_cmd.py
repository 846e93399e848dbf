"""``fasteval eval QRELS RUN [RUN ...] [-m MEASURE ...]``: score runs, print or write the results.

Results name each measure as ``-m`` gave it (``-m ndcg@10 -m mrr``: ``ndcg@10``, ``mrr``);
trec_eval's lists and the names that give several (``-m P.10``, ``-m P``, ``-m official``)
carry trec_eval's names, and two spellings of one measure (``-m ndcg@10 -m ndcg_cut_10``) are refused (see
:func:`fasteval.measures.parse_labelled`). Without ``-m``, trec_eval's default set
(``official``: ``num_q``, ``map``, ``P_5``...), as ``trec_eval`` prints without ``-m``.

Runs may be TREC/CSV/JSONL files, parquet files, quoted globs, directories of runs or
hive-partitioned directories (see :mod:`fasteval.batch.discover`); columns are found by the
names :func:`fasteval.read_run` accepts (``qid``/``docno``, ``sim``, ``runid``...). Parquet input is
streamed in query-aligned chunks, so memory is bounded by ``--max-rows-per-chunk`` or
``--memory-limit``, not by the input size. Output files are written to a temporary
name and renamed only when complete; ``-`` (standard output), devices and FIFOs are
written in place, once the output is complete. An output that is one of the inputs, or
the same file as the other output, is refused before anything is read.

Examples
--------
>>> from fasteval.cli import main
>>> main(["eval", "datasets/trec/qrels.test", "datasets/trec/results.test",
...       "-m", "P@5", "--quiet"])  # doctest: +SKIP
measure  results.test
P@5      ...
0
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import get_args

from fasteval.cli import abort_on_sigterm, add_command, check_format_agrees, worded
from fasteval.errors import ParameterError, options_named
from fasteval.options import Compat, Engine, TieBreak

FORMATS = ("table", "csv", "json", "parquet", "trec")


def connect_seconds(text: str) -> float:
    """``--ray-connect-timeout``: a positive number of seconds.

    Examples
    --------
    >>> connect_seconds("2.5")
    2.5
    >>> connect_seconds("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a positive number of seconds, got '0'
    """
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``fasteval eval``."""
    p = add_command(
        subparsers,
        "eval",
        (
            "Score runs against qrels. Prints a table of aggregate values (per query with -q). "
            "RUN may be a run file (TREC, parquet, CSV/TSV, JSONL), a quoted glob of parquet "
            "parts, a directory of runs (one per file or sub-directory) or a hive-partitioned "
            "directory (run_id=NAME/...). Parquet input is scored in chunks with bounded memory. "
            "Table columns are found as fasteval.read_run and read_qrels find them: query_id "
            "or qid, doc_id or docno/docid, score or sim, relevance or label, optional rank and "
            "run_id (runid, system), any case; each parquet file on its own."
        ),
    )
    p.add_argument("qrels", metavar="QRELS", help="relevance judgements (TREC qrels, parquet, CSV, JSONL)")
    p.add_argument("runs", metavar="RUN", nargs="+", help="run file(s), glob(s) or directory(ies)")
    p.add_argument(
        "-m", "--measure", action="append", default=[], metavar="MEASURE",
        help="measure in trec_eval, ir_measures or ranx spelling (repeatable): ndcg@10, map, P_5, "
             "nDCG@10. Results name each as written (-m ndcg@10 -m mrr: ndcg@10, mrr); trec_eval's "
             "lists and sets (P.10, P.5,10, P, official, all_trec) give trec_eval's names; two spellings of "
             "one measure are refused. Default: trec_eval's default set (official: num_q, num_ret, "
             "num_rel, num_rel_ret, map, gm_map, Rprec, bpref, recip_rank, iprec_at_recall_*, P_*)",
    )
    p.add_argument("-q", "--per-query", action="store_true", help="per-query values instead of aggregates")
    p.add_argument("--format", choices=FORMATS, default=None, help="output format (default: from -o suffix, else table; must agree with a suffix that names one)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write to this file (atomically; - is standard output) instead of stdout")
    p.add_argument("--wide", action="store_true", help="one column per measure")
    p.add_argument("--aggregate-out", metavar="FILE",
                   help="also write the aggregate table here, format by suffix as for -o (.parquet, "
                        ".csv, .tsv, .json, .jsonl, .trec; another or none: the text table)")
    p.add_argument("-l", "--relevance-level", type=int, default=1, metavar="N",
                   help="grade at or above which a document is relevant (1)")
    p.add_argument("-M", "--max-docs", type=int, default=None, metavar="N",
                   help="score only the top N documents of each query (after sorting)")
    p.add_argument("-c", "--complete", action="store_true",
                   help="qrels queries missing from a run count (as trec_eval -c)")
    p.add_argument("-J", "--judged-only", action="store_true", help="drop unjudged documents first (trec_eval -J)")
    p.add_argument("--tie-break", choices=get_args(TieBreak), default="trec",
                   help="order within a query: trec (score desc, doc id desc), rank column, input "
                        "order, or expected: each measure's mean over every order of tied documents")
    p.add_argument("--compat", type=int, choices=get_args(Compat), default=10,
                   help="trec_eval version to match: 10 (default) or 9 (9.0.8, as pytrec_eval: "
                        "scores held as single-precision floats, its recall-point rounding, and "
                        "with -c a query missing from the run scored 0 for every measure)")
    p.add_argument("--keep-best-duplicates", action="store_true",
                   help="keep the best-scored row of duplicate (query, doc) pairs instead of "
                        "failing (with --tie-break rank: the best-ranked row)")
    p.add_argument("--max-rows-per-chunk", type=int, default=None, metavar="N",
                   help="rows scored at a time (bounds memory)")
    p.add_argument("--memory-limit", default=None, metavar="SIZE",
                   help="memory budget, e.g. 1GiB: sets the chunk size; the prepared qrels and the "
                        "per-query results come on top (a note says when the peak went past it)")
    p.add_argument("--engine", choices=get_args(Engine), default="local",
                   help="local (default) or ray: score on Ray Data (pip install \".[ray]\"); "
                        "with -q -o OUT.parquet, OUT is a parquet directory written by Ray")
    p.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="Ray cluster to connect to with --engine ray (default: a local Ray)")
    p.add_argument("--ray-connect-timeout", type=connect_seconds, default=30.0, metavar="S",
                   help="seconds the --ray-address host has to answer (default 30); Ray's own "
                        "handshake then makes one attempt")
    p.add_argument("--share-qrels-limit", default=None, metavar="SIZE",
                   help="with --engine ray: qrels that take at most SIZE prepared (default 4GiB) are "
                        "shared whole through Ray's object store; larger ones are co-partitioned "
                        "with the runs by query")
    p.add_argument("--no-qrels-cache", action="store_true",
                   help="neither read nor write the cache of prepared qrels (large qrels files are "
                        "kept prepared under $FASTEVAL_CACHE_DIR, default ~/.cache/fasteval, keyed on "
                        "the file's path, inode, size and times)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary note on stderr")
    p.add_argument("--log-json", action="store_true", help="print a one-line JSON summary on stderr")
    return p


def _check_args(args: argparse.Namespace) -> None:
    on_stdin = [a for a in [args.qrels, *args.runs] if a == "-"]
    if len(on_stdin) > 1:
        raise ParameterError("QRELS and RUN", "at most one of them read from standard input ('-')",
                             " ".join([args.qrels, *args.runs]))
    if args.max_docs is not None and args.max_docs < 1:
        raise ParameterError("--max-docs", "a positive integer", args.max_docs)
    if args.relevance_level is not None and not 0 <= args.relevance_level < 2**31:
        raise ParameterError("-l/--relevance-level", "an integer from 0 to 2147483647",
                             args.relevance_level)
    if args.max_rows_per_chunk is not None and args.max_rows_per_chunk < 1:
        raise ParameterError("--max-rows-per-chunk", "a positive integer", args.max_rows_per_chunk)
    if args.memory_limit is not None:
        from fasteval.batch.driver import parse_memory

        parse_memory(args.memory_limit)  # refused before the qrels are read
    if getattr(args, "share_qrels_limit", None) is not None:
        from fasteval.batch.ray_engine import parse_share_limit

        parse_share_limit(args.share_qrels_limit, "--share-qrels-limit")
    if args.format == "parquet" and args.output is None:
        raise ParameterError("--format parquet", "used with -o OUT (parquet is not printed)", "stdout")
    from fasteval.batch.sinks import format_from_path

    if args.output not in (None, "-"):
        named = format_from_path(args.output, default=None, param="-o/--output")
        check_format_agrees(args.format, args.output, "any text" if named == "table" else named)


_OPTION_NAMES = {
    "max_docs": "-M/--max-docs",
    "relevance_level": "-l/--relevance-level",
    "tie_break": "--tie-break",
    "max_rows_per_chunk": "--max-rows-per-chunk",
    "measures": "-m/--measure",
}
"""The library's parameter names (in its errors) -> this command's options."""


@options_named(_OPTION_NAMES)
def run(args: argparse.Namespace) -> int:
    """Run ``fasteval eval``."""
    try:
        with worded(_ADVICE):
            return _run(args)
    finally:
        cache = sys.modules.get("fasteval.batch.qrels_cache")
        if cache is not None:
            cache.wait()  # an entry being written is finished, not left half-written


_ADVICE = {
    "keep_best_run": "use --keep-best-duplicates to keep the best-scored row",
    "keep_best_qrels": "a document is judged once per query",
}
"""The readers' advice (:data:`fasteval.errors.ADVICE`) in this command's terms."""


def _replaces_ray_output(args: argparse.Namespace) -> bool:
    """Whether ``-o`` is the per-query parquet directory of an earlier ``--engine ray`` job
    that this ``--engine ray -q`` job writes again (replaced when the job completes)."""
    from fasteval.io.atomic import STDOUT

    if getattr(args, "engine", "local") != "ray" or not args.per_query or args.output in (None, STDOUT):
        return False
    from fasteval.batch.ray_engine import earlier_output  # (a Ray job only)
    from fasteval.batch.sinks import format_from_path
    fmt = format_from_path(args.output, default="table", param="-o/--output")
    fmt = args.format or fmt
    return fmt == "parquet" and earlier_output(args.output)


def _labelled_measures(args: argparse.Namespace) -> list:
    """The ``(label, Measure)`` pairs of ``-m`` (see :func:`fasteval.measures.parse_labelled`),
    refused before anything is read when two spellings name one measure; without ``-m``,
    trec_eval's default set (``args.measure`` is set to it, as the job then asks for it).

    Examples
    --------
    >>> args = argparse.Namespace(measure=[])
    >>> len(_labelled_measures(args)), args.measure
    (29, ['official'])
    >>> [label for label, _ in _labelled_measures(argparse.Namespace(measure=["ndcg@10"]))]
    ['ndcg@10']
    """
    from fasteval.measures.parser import DEFAULT_SET, parse_labelled

    if not args.measure:  # as trec_eval without -m
        args.measure = [DEFAULT_SET]
    return parse_labelled(args.measure)


def _run(args: argparse.Namespace) -> int:
    from fasteval.batch.discover import discover_all

    _check_args(args)
    on_ray = getattr(args, "engine", "local") == "ray"
    if on_ray:
        from fasteval.batch.ray_engine import require_ray

        require_ray()
    outputs, fmt, agg_fmt = _outputs(args)
    abort_on_sigterm()
    t0 = time.perf_counter()
    t_prep = time.perf_counter()
    duplicates = "keep_best" if args.keep_best_duplicates else "error"
    measures = _labelled_measures(args)
    sources = discover_all(args.runs)
    output = _output(args, outputs, sources, fmt)
    t_ray = time.perf_counter()
    started = _connect(args, duplicates) if on_ray else False
    if on_ray:
        abort_on_sigterm()  # again: Ray's core puts its own SIGTERM handler in place
    t_ray = time.perf_counter() - t_ray
    try:
        return _job(args, sources, duplicates, measures, output, (fmt, agg_fmt), t0,
                    t_prep + t_ray, t_ray if on_ray else None)
    finally:
        if started:
            require_ray().shutdown()


def _connect(args: argparse.Namespace, duplicates: str) -> bool:
    """Connect to (or start) Ray, and start loading the kernels on its workers while the
    qrels are prepared here; True when this started Ray."""
    from fasteval.batch.ray_engine import connect_ray, prewarm, require_ray

    started = connect_ray(args.ray_address, timeout=getattr(args, "ray_connect_timeout", 30.0))
    prewarm(require_ray(), args.measure, {
        "relevance_level": args.relevance_level, "max_docs": args.max_docs, "judged_only": args.judged_only,
        "tie_break": args.tie_break, "duplicates": duplicates, "compat": args.compat})
    return started


def _job(args, sources, duplicates, measures, output, formats, t0, t_prep, t_ray) -> int:
    """Prepare the qrels, score, write and summarise (:func:`_run` after its checks;
    ``t_ray``: the seconds Ray took to connect or start, None off Ray)."""
    evaluator = _evaluator(args, sources, duplicates)
    t_prep = time.perf_counter() - t_prep
    names = list(evaluator.measure_names)
    agg_kind = {label: m.aggregation for label, m in measures}
    for s in sources:
        s.duplicates = duplicates
    stats = _score_and_write(args, evaluator, sources, output, formats, names, agg_kind)
    if t_ray is not None:
        stats.timings = {"ray_start": t_ray, **stats.timings}
    _summarise(args, stats, names, time.perf_counter() - t0, t_prep)
    return 0


def _outputs(args: argparse.Namespace) -> tuple[dict, str, str]:
    """The outputs, checked against the inputs before anything is read (an earlier
    ``--engine ray`` parquet directory given again as ``-o`` is replaced, not refused), and
    the formats of ``-o`` and ``--aggregate-out``."""
    from fasteval.batch.sinks import format_from_path
    from fasteval.io.atomic import STDOUT, check_outputs

    outputs = {"-o/--output": args.output, "--aggregate-out": args.aggregate_out}
    if _replaces_ray_output(args):  # a directory of parquet parts an earlier job wrote
        from fasteval.batch.ray_engine import check_not_inside

        check_not_inside(args.output, [args.qrels, *args.runs], "-o/--output")
        outputs["-o/--output"] = None
    check_outputs(outputs, [args.qrels, *args.runs])  # before anything is read
    fmt = format_from_path(args.output, default="table", param="-o/--output")
    fmt = args.format or fmt
    # the -o rule: a known suffix names the format, another (or none) is the text table;
    # a compressed name is refused now, not after the work
    agg_fmt = format_from_path(args.aggregate_out, default="table", param="--aggregate-out")
    if fmt == "parquet" and args.output == STDOUT and args.aggregate_out == STDOUT:
        raise ParameterError("--aggregate-out", "a file when -o - writes parquet to standard "
                             "output (a table after the parquet bytes would corrupt them)", STDOUT)
    return outputs, fmt, agg_fmt


def _output(args: argparse.Namespace, outputs: dict, sources: list, fmt: str) -> str | None:
    """``-o``, checked against the files the runs' directories and globs hold; None for
    standard output written by the job's end (parquet is streamed)."""
    from fasteval.io.atomic import STDOUT, check_outputs

    check_outputs(outputs, [f for s in sources for f in s.files])  # files found in directories, globs
    if outputs["-o/--output"] is None and args.output is not None and args.output != STDOUT:
        from fasteval.batch.ray_engine import check_not_inside

        check_not_inside(args.output, [f for s in sources for f in s.files], "-o/--output")
    return None if args.output == STDOUT and fmt != "parquet" else args.output


def _evaluator(args: argparse.Namespace, sources: list, duplicates: str):
    """The qrels read and prepared (the first run read beside them), and a note when that
    left little of ``--memory-limit``."""
    from fasteval.batch.api import make_evaluator
    from fasteval.batch.driver import DEFAULT_MAX_ROWS, start_reading

    def read_first_run() -> None:  # chunk size known: the first run reads beside the qrels work
        rows = args.max_rows_per_chunk
        if args.memory_limit is None and (rows is None or rows >= 1) and args.engine != "ray":
            start_reading(sources[0], rows or DEFAULT_MAX_ROWS)

    evaluator = make_evaluator(
        args.qrels,
        args.measure,  # as written: all_trec gives its numeric members, relstring is refused
        after_read=read_first_run, sources=sources, qrels_cache=not args.no_qrels_cache,
        relevance_level=args.relevance_level, max_docs=args.max_docs, complete=args.complete,
        judged_only=args.judged_only, tie_break=args.tie_break, duplicates=duplicates,
        compat=args.compat,
    )
    if args.memory_limit is not None:
        from fasteval.batch.driver import current_rss, parse_memory

        limit, used = parse_memory(args.memory_limit), current_rss()
        if used > 0.8 * limit and not args.quiet:
            print(f"fasteval: note: {used / 2**30:.2f} GiB in use after preparing the qrels, close to "
                  f"or above --memory-limit {args.memory_limit}; scoring with the smallest chunks",
                  file=sys.stderr)
    return evaluator


def _score_and_write(args, evaluator, sources, output, formats, names, agg_kind):
    """Score every run and write the outputs (a streaming sink is aborted on any error);
    returns the job's statistics."""
    from fasteval.batch.api import job_progress, write_table_atomic
    from fasteval.batch.driver import aggregate_wide
    from fasteval.batch.sinks import make_sink, to_long

    fmt, agg_fmt = formats
    ray_engine = getattr(args, "engine", "local") == "ray"
    stream = args.per_query and output is not None and fmt in ("parquet", "csv")
    ray_dir = ray_engine and stream and fmt == "parquet"  # Ray's parquet writer: a directory
    if ray_engine and stream and not ray_dir:
        stream = False  # CSV per-query output is written from memory
    sink = make_sink(output, fmt, wide=args.wide, measure_names=names) if stream and not ray_dir else None
    bar = job_progress(sources, enabled=not args.quiet)
    try:
        keep_rows = args.per_query and not ray_dir
        wide, agg, stats = _score(args, evaluator, sources, sink, output if ray_dir else None, bar, keep_rows)
        t_agg = time.perf_counter()
        if agg is None:
            agg = aggregate_wide(wide, names)
        table = None
        if sink is None and not ray_dir:
            if args.per_query:
                table = wide if args.wide else to_long(wide, names)
            else:
                table = _agg_wide(agg, names) if args.wide else agg
                if fmt == "table":
                    table = _agg_table(agg, names)
            if fmt == "json":  # refused before --aggregate-out is put in place, not after
                from fasteval.io.writers import check_json_numbers

                check_json_numbers(table, source="standard output" if output is None else str(output))
        if sink is not None:
            sink.finish()  # the per-query file complete before the aggregates are put in place
        if args.aggregate_out:
            write_table_atomic(agg, args.aggregate_out, agg_fmt, agg_kind=agg_kind)
        if sink is not None:
            sink.commit()
        elif table is not None:
            _emit(table, fmt, output, per_query=args.per_query, agg_kind=agg_kind, aggregates=agg)
        stats.add_time("aggregate+output", time.perf_counter() - t_agg)
    except BaseException:
        if sink is not None:
            sink.abort()
        raise
    return stats


def _score(args, evaluator, sources, sink, ray_out, bar, keep_rows: bool):
    """``(wide per-query results, aggregate, stats)``, locally or on Ray (``ray_out``: the
    parquet directory the Ray tasks write, or None). The aggregate is None locally (made
    from the rows); on Ray it comes from the tasks' partial sums, and the rows only when
    ``keep_rows``."""
    from fasteval.batch.driver import run_job

    if getattr(args, "engine", "local") != "ray":
        with bar:
            wide, stats = run_job(evaluator, sources, sink, complete=args.complete,
                                  max_rows_per_chunk=args.max_rows_per_chunk,
                                  memory_limit=args.memory_limit, progress=bar.update)
        return wide, None, stats
    from fasteval.batch.ray_engine import run_job_ray

    with bar:  # Ray is connected (_connect)
        return run_job_ray(evaluator, sources, complete=args.complete, out=ray_out,
                           wide=args.wide, ray_address=args.ray_address, qrels=args.qrels,
                           share_qrels_limit=getattr(args, "share_qrels_limit", None),
                           progress=bar.update, keep_rows=keep_rows)


def _summarise(args: argparse.Namespace, stats, names: list[str], elapsed: float,
               t_prep: float) -> None:
    """The summary note and notes on stderr (unless ``--quiet``), and ``--log-json``'s line."""
    if not args.quiet:
        print(f"fasteval: {_note(stats, args.complete)} in {elapsed:.2f}s", file=sys.stderr)
        if stats.oversized is not None:
            print(f"fasteval: note: {_oversized_note(stats, args)}", file=sys.stderr)
        over = _over_budget_note(stats, args)
        if over:
            print(f"fasteval: note: {over}", file=sys.stderr)
    if args.log_json:
        summary = {
            "event": "eval", "runs": stats.runs, "queries": stats.queries, "rows": stats.rows,
            "chunks": stats.chunks, "mode": stats.mode,
            "max_rows_per_chunk": stats.max_rows_per_chunk, "report": stats.report,
            "qrels": stats.qrels, "paths": stats.paths, "nodes": stats.nodes, "measures": names, "output": args.output,
            "aggregate_out": args.aggregate_out, "seconds": round(elapsed, 4),
            "timings": {"qrels": round(t_prep, 4), **{k: round(v, 4) for k, v in stats.timings.items()}},
            "peak_rss_bytes": _peak_rss(),
        }
        print(json.dumps(summary, default=str), file=sys.stderr)


def _peak_rss() -> int | None:
    """High-water resident memory of this process in bytes (Linux ``VmHWM``), None if unknown."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _note(stats, complete: bool) -> str:
    """One line: what was scored, and which queries were filled, dropped or deduplicated."""
    from fasteval._words import counted as _n

    rep = stats.report
    runs = len(stats.runs)
    parts = [
        f"{_n(rep.get('evaluated', stats.queries), 'query', 'queries')} scored in "
        f"{_n(runs, 'run')} ({_n(stats.rows, 'row')}, {_n(stats.chunks, 'chunk')})"
    ]
    parts.append(f"{_n(rep.get('dropped_not_in_qrels', 0), 'run query', 'run queries')} not in "
                 "the qrels dropped")
    missing = rep.get("missing_from_run", 0)
    if complete:
        parts.append(f"{_n(rep.get('filled', 0), 'qrels query', 'qrels queries')} missing from a "
                     "run filled (-c)")
    else:
        parts.append(f"{_n(missing, 'qrels query', 'qrels queries')} missing from a run left out "
                     "(use -c to count them)")
    parts.append(f"{_n(rep.get('deduplicated_rows', 0), 'duplicate row')} removed")
    if rep.get("tied_queries"):  # --tie-break expected
        parts.append(f"{_n(rep['tied_queries'], 'query', 'queries')} with tied scores, "
                     f"{rep.get('ties_mattered', 0)} of them tied between different grades "
                     "(expected values)")
    if stats.qrels is not None:
        paths = list(stats.paths.values())
        ways = [f"{_n(paths.count('grouped'), 'input')} scored where read"] if "grouped" in paths else []
        if "shuffled" in paths:
            ways.append(f"{_n(paths.count('shuffled'), 'input')} shuffled by query id")
        parts.append(", ".join([f"on Ray, qrels {stats.qrels}", *ways]))
    return "; ".join(parts)


def _over_budget_note(stats, args: argparse.Namespace) -> str | None:
    """What to tell when the job's peak memory went past ``--memory-limit`` (None when it
    did not, or no limit was given): the limit sizes the chunks, while the Python runtime,
    the prepared qrels and the per-query results kept for the aggregates come on top."""
    if args.memory_limit is None:
        return None
    from fasteval._words import counted
    from fasteval.batch.driver import parse_memory

    peak, limit = _peak_rss(), parse_memory(args.memory_limit)
    if peak is None or peak <= limit:
        return None
    return (f"peak memory {peak / 2**30:.2f} GiB went past --memory-limit {args.memory_limit}: "
            f"it sized the chunks ({stats.max_rows_per_chunk:,} rows at most), but the runtime, "
            f"the prepared qrels and the results of {counted(stats.queries, 'query', 'queries')} "
            "kept for the aggregates come on top")


def _oversized_note(stats, args: argparse.Namespace) -> str:
    """Why memory may have gone past the bound: one query larger than a chunk."""
    from fasteval.batch.driver import BYTES_PER_ROW

    run, query, rows = stats.oversized
    bound = (f"--memory-limit {args.memory_limit}" if args.max_rows_per_chunk is None and args.memory_limit
             else "--max-rows-per-chunk" if args.max_rows_per_chunk is not None else "the default chunk size")
    return (f"query {query!r} of run {run!r} alone has {rows} rows, more than the "
            f"{stats.max_rows_per_chunk} rows per chunk that {bound} allows; a query is scored whole, "
            f"so memory may have peaked above the bound (about {rows * BYTES_PER_ROW / 2**30:.1f} GiB "
            "for that query)")


def _agg_wide(agg, names):
    wide = agg.pivot(on="measure", index="run_id", values="value", maintain_order=True)
    return wide.select(["run_id", *[n for n in names if n in wide.columns]])


def _agg_table(agg, names):
    """Measures as rows, runs as columns: the readable default."""
    table = agg.pivot(on="run_id", index="measure", values="value", maintain_order=True)
    order = {n: i for i, n in enumerate(names)}
    import polars as pl

    return table.sort(pl.col("measure").replace_strict(order, default=len(order), return_dtype=pl.Int64))


def _emit(table, fmt: str, output, *, per_query: bool, agg_kind: dict[str, str], aggregates=None) -> None:
    from fasteval.batch.api import render_table, write_table_atomic

    if fmt == "trec":  # per query: trec_eval -q's lines, the aggregates after each run's
        from fasteval.batch.sinks import trec_lines

        text = trec_lines(table, per_query=per_query, agg_kind=agg_kind,
                          aggregates=aggregates if per_query else None)
    elif fmt == "table":
        text = render_table(table)
    elif output is not None:
        write_table_atomic(table, output, fmt)
        return
    elif fmt == "csv":
        text = table.write_csv()
    else:  # json
        from fasteval.io.writers import check_json_numbers

        check_json_numbers(table, source="standard output")  # NaN would be written as null
        text = table.write_json() + "\n"
    if output is None:
        from fasteval.io.atomic import write_stdout

        write_stdout(text)
    else:
        write_table_atomic_text(text, output)


def write_table_atomic_text(text: str, output) -> None:
    """Write ``text`` to ``output`` (see :func:`fasteval.io.atomic.atomic_open`)."""
    from fasteval.io.atomic import atomic_open

    with atomic_open(output, "w") as fh:
        fh.write(text)
