"""Run one tool on one benchmark in a fresh process; print a JSON line with timings and peak RSS.

Usage::

    python benches/_runner.py TOOL QRELS RUN --measures 5|10 [--out OUT] [--memory-limit 1GiB]

TOOL is ``fasteval`` (Python API, parquet in, per-query parquet out), ``polars-read``
(read the run parquet, nothing else), ``pytrec_eval``, ``ranx`` or ``ir_measures``
(each: read parquet with polars, convert to the tool's input, score every query).
Timings are in-process (after imports); ``peak_rss`` is the process high-water mark
(``VmHWM``), imports included; ``import_rss`` is the resident size after imports.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _data import MEASURE_SETS  # noqa: E402


def _rss_now() -> int:
    with open("/proc/self/statm") as fh:
        import os

        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak() -> int:
    """High-water RSS of this process image. ``ru_maxrss`` is not used: Linux carries it over
    ``fork``/``exec`` from the parent, so a child of a big pytest process would report the parent."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def nested(df, key: str, value: str) -> dict:
    """``{query: {doc: value}}`` from a long table (the peers' input shape)."""
    import polars as pl

    grouped = df.group_by("query_id", maintain_order=True).agg(pl.col("doc_id"), pl.col(value))
    out = {}
    for q, docs, vals in grouped.iter_rows():
        out[str(q)] = dict(zip(map(str, docs), vals, strict=True))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("qrels")
    ap.add_argument("run")
    ap.add_argument("--measures", default="5", choices=sorted(MEASURE_SETS))
    ap.add_argument("--out", default=None)
    ap.add_argument("--memory-limit", default=None)
    ap.add_argument("--max-rows-per-chunk", type=int, default=None)
    a = ap.parse_args(argv)
    measures = MEASURE_SETS[a.measures]
    t_start = time.perf_counter()
    import polars as pl

    phases: dict[str, float] = {}
    result: dict = {"tool": a.tool, "run": a.run, "measures": a.measures}
    if a.tool == "polars-read":
        t = time.perf_counter()
        df = pl.read_parquet(a.run)
        phases["read"] = time.perf_counter() - t
        result["rows"] = df.height
    elif a.tool == "fasteval":
        import fasteval
        from fasteval.batch import evaluate_files

        result["import_rss"] = _rss_now()
        t = time.perf_counter()
        res = evaluate_files(a.qrels, a.run, measures["fasteval"], out=a.out,
                             memory_limit=a.memory_limit, max_rows_per_chunk=a.max_rows_per_chunk)
        phases["total"] = time.perf_counter() - t
        result["rows"] = res.stats.rows
        result["queries"] = res.stats.queries
        result["chunks"] = res.stats.chunks
        del fasteval
    elif a.tool == "pytrec_eval":
        import pytrec_eval

        result["import_rss"] = _rss_now()
        t = time.perf_counter()
        qrels = nested(pl.read_parquet(a.qrels), "doc_id", "relevance")
        run_df = pl.read_parquet(a.run)
        run = nested(run_df, "doc_id", "score")
        result["rows"] = run_df.height
        del run_df
        phases["load"] = time.perf_counter() - t
        t2 = time.perf_counter()
        ev = pytrec_eval.RelevanceEvaluator(qrels, set(measures["pytrec_eval"]))
        res = ev.evaluate(run)
        phases["eval"] = time.perf_counter() - t2
        phases["total"] = time.perf_counter() - t
        result["queries"] = len(res)
    elif a.tool == "ranx":
        from ranx import Qrels, Run, evaluate

        result["import_rss"] = _rss_now()
        # ranx compiles its numba kernels on first use: warm them on a toy input first
        evaluate(Qrels({"q": {"d": 1}}), Run({"q": {"d": 1.0}}), measures["ranx"])
        t = time.perf_counter()
        qdf = pl.read_parquet(a.qrels).filter(pl.col("relevance") > 0)
        rdf = pl.read_parquet(a.run)
        result["rows"] = rdf.height
        qrels = Qrels(nested(qdf, "doc_id", "relevance"))
        run = Run(nested(rdf, "doc_id", "score"))
        del rdf, qdf
        phases["load"] = time.perf_counter() - t
        t2 = time.perf_counter()
        evaluate(qrels, run, measures["ranx"], return_mean=False, make_comparable=True)
        phases["eval"] = time.perf_counter() - t2
        phases["total"] = time.perf_counter() - t
    elif a.tool == "ir_measures":
        import ir_measures

        result["import_rss"] = _rss_now()
        ms = [ir_measures.parse_measure(m) for m in measures["ir_measures"]]
        t = time.perf_counter()
        qrels = pl.read_parquet(a.qrels).with_columns(pl.col("query_id").cast(pl.Utf8), pl.col("doc_id").cast(pl.Utf8)).to_pandas()
        run = pl.read_parquet(a.run).with_columns(pl.col("query_id").cast(pl.Utf8), pl.col("doc_id").cast(pl.Utf8)).to_pandas()
        result["rows"] = len(run)
        phases["load"] = time.perf_counter() - t
        t2 = time.perf_counter()
        n = sum(1 for _ in ir_measures.iter_calc(ms, qrels, run))
        phases["eval"] = time.perf_counter() - t2
        phases["total"] = time.perf_counter() - t
        result["values"] = n
    else:
        raise SystemExit(f"unknown tool {a.tool!r}")
    result["phases"] = {k: round(v, 4) for k, v in phases.items()}
    result["wall_in_process"] = round(time.perf_counter() - t_start, 4)
    result["peak_rss"] = _peak()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
