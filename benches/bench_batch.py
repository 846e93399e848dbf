"""Batch jobs: parquet -> parquet at 10k / 100k / 1M queries x 100 docs, ten measures.

Run (sizes from ``FASTEVAL_BENCH_SIZES``, default ``10k,100k``; the 1M job needs ~4 GB of
disk for the data and several minutes)::

    FASTEVAL_BENCH_SIZES=10k,100k,1M python -m pytest benches/bench_batch.py \\
        --benchmark-columns=median,min,max,rounds

Rows per size (pytest-benchmark groups):

* ``fasteval eval`` CLI end-to-end in a fresh process (``-q -o out.parquet``), wall time
  and peak RSS; the same with ``--memory-limit 1GiB``;
* the Python API (:func:`fasteval.batch.evaluate_files`, warm) and the kernel-only time
  (prepared qrels, run in memory) against a bare ``polars.read_parquet``, in rows/s;
* one row per peer (pytrec_eval, ranx, ir_measures) in a fresh process with a memory cap
  (``FASTEVAL_BENCH_RSS_CAP_GIB``, default 16) and a timeout: a peer over the cap is killed
  and recorded as such. At 1M the peers run only with ``FASTEVAL_BENCH_PEERS_1M=1``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import BENCH_DIR, MEASURES10, dataset  # noqa: E402
from _proc import gib, run_measured, runner  # noqa: E402

SIZES = [s.strip() for s in os.environ.get("FASTEVAL_BENCH_SIZES", "10k,100k").split(",") if s.strip()]
RSS_CAP = int(float(os.environ.get("FASTEVAL_BENCH_RSS_CAP_GIB", "16")) * 2**30)
PEERS_1M = os.environ.get("FASTEVAL_BENCH_PEERS_1M") == "1"
RESULTS = BENCH_DIR / "results_batch.jsonl"


def _record(**row) -> None:
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    with open(RESULTS, "a") as fh:
        fh.write(json.dumps(row, default=str) + "\n")
    print("\n" + json.dumps(row, default=str))


@pytest.fixture(scope="module", params=SIZES)
def data(request):
    d = dataset(request.param, depth=100, runs=1, seed=3)
    return request.param, d / "qrels.parquet", d / "runs" / "run_0.parquet"


def _cli(qrels, run, out, *extra):
    cmd = [sys.executable, "-m", "fasteval", "eval", str(qrels), str(run),
           *sum((["-m", m] for m in MEASURES10["fasteval"]), []), "-q", "-o", str(out),
           "--aggregate-out", str(out.with_suffix(".agg.parquet")), "--quiet", "--log-json", *extra]
    return cmd


def test_cli_parquet_to_parquet(benchmark, data, tmp_path):
    size, qrels, run = data
    out = tmp_path / "per_query.parquet"
    benchmark.group = f"batch-{size}-cli"
    rounds = 3 if size != "1M" else 1
    res = benchmark.pedantic(lambda: run_measured(_cli(qrels, run, out), timeout=1800), rounds=rounds, iterations=1)
    assert res["rc"] == 0, res["stderr"][-2000:]
    log = json.loads(res["stderr"].strip().splitlines()[-1])
    res["max_rss"] = max(res["max_rss"], log.get("peak_rss_bytes") or 0)
    benchmark.extra_info.update(peak_rss=res["max_rss"], rows=log["rows"], chunks=log["chunks"])
    _record(bench="cli", size=size, wall=res["wall"], peak_rss=res["max_rss"], log=log)


def test_cli_memory_limit_1gib(benchmark, data, tmp_path):
    size, qrels, run = data
    out = tmp_path / "per_query.parquet"
    benchmark.group = f"batch-{size}-cli"
    res = benchmark.pedantic(lambda: run_measured(_cli(qrels, run, out, "--memory-limit", "1GiB"), timeout=3600),
                             rounds=1, iterations=1)
    assert res["rc"] == 0, res["stderr"][-2000:]
    log = json.loads(res["stderr"].strip().splitlines()[-1])
    res["max_rss"] = max(res["max_rss"], log.get("peak_rss_bytes") or 0)
    benchmark.extra_info.update(peak_rss=res["max_rss"], chunks=log["chunks"])
    _record(bench="cli --memory-limit 1GiB", size=size, wall=res["wall"], peak_rss=res["max_rss"], log=log)


def test_api_warm(benchmark, data, tmp_path):
    from fasteval.batch import evaluate_files

    size, qrels, run = data
    if size == "1M":
        pytest.skip("1M is measured in a fresh process (test_cli_*) to keep this process small")
    evaluate_files(qrels, run, MEASURES10["fasteval"], max_rows_per_chunk=1000)  # warm
    benchmark.group = f"batch-{size}-in-process"
    out = tmp_path / "o.parquet"
    benchmark.pedantic(lambda: evaluate_files(qrels, run, MEASURES10["fasteval"], out=out), rounds=3, iterations=1)


def test_polars_read(benchmark, data):
    import polars as pl

    size, _, run = data
    if size == "1M":
        pytest.skip("in-process rows only up to 100k")
    benchmark.group = f"batch-{size}-in-process"
    df = benchmark.pedantic(lambda: pl.read_parquet(run), rounds=5, iterations=1)
    benchmark.extra_info["rows_per_s"] = df.height / benchmark.stats.stats.median
    _record(bench="polars read", size=size, median=benchmark.stats.stats.median, rows=df.height)


def test_kernel_only(benchmark, data):
    import polars as pl

    import fasteval

    size, qrels, run = data
    if size == "1M":
        pytest.skip("in-process rows only up to 100k")
    ev = fasteval.Evaluator(fasteval.read_qrels(qrels), MEASURES10["fasteval"])
    df = pl.read_parquet(run)
    ev.evaluate(df)
    benchmark.group = f"batch-{size}-in-process"
    benchmark.pedantic(lambda: ev.evaluate(df), rounds=3, iterations=1)
    rps = df.height / benchmark.stats.stats.median
    benchmark.extra_info["rows_per_s"] = rps
    _record(bench="evaluate (run in memory)", size=size, median=benchmark.stats.stats.median, rows_per_s=rps)


@pytest.mark.parametrize("tool", ["pytrec_eval", "ranx", "ir_measures"])
def test_peer(benchmark, data, tool):
    size, qrels, run = data
    if size == "1M" and not PEERS_1M:
        pytest.skip("peers at 1M only with FASTEVAL_BENCH_PEERS_1M=1 (they need 10x their 100k memory)")
    benchmark.group = f"batch-{size}-cli"
    res = benchmark.pedantic(lambda: runner(tool, qrels, run, measures="10", rss_cap=RSS_CAP, timeout=1800),
                             rounds=1, iterations=1)
    benchmark.extra_info.update(peak_rss=res["max_rss"], killed=res["killed"])
    _record(bench=tool, size=size, wall=res["wall"], peak_rss=res["max_rss"], killed=res["killed"],
            phases=(res["json"] or {}).get("phases"), rc=res["rc"])
    print(f"\n{tool} {size}: wall {res['wall']:.1f}s peak {gib(res['max_rss'])} {res['killed'] or ''}")
    if res["killed"] is None:
        assert res["rc"] == 0, res["stderr"][-2000:]
