"""Tie-aware expected values (``tie_break="expected"``) against trec_eval's rule
(``tie_break="trec"``) at 100k queries x 100 docs with quantised scores.

bench_speed's run with its scores rounded to one decimal (about 20 distinct scores per
query, as a BM25 score printed with one decimal place or an int8 dense score would give), six
measures (P@10, recall@100, recip_rank, map, ndcg, ndcg@10), side by side in one run::

    python -m pytest benches/bench_ties.py --benchmark-columns=median,min,max,rounds

``end_to_end``: a run table in memory to per-query results (qrels prepared outside the
timing); ``score``: the score pass alone on a prepared batch. ``extra_info`` records the
queries with ties, the queries whose ties mattered (a tie between different grades) and
the mean absolute difference between the two rules' per-query values.
``FASTEVAL_BENCH_TIES_SIZE=10k`` for a quick pass.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import ROOT, dataset  # noqa: E402

SIZE = os.environ.get("FASTEVAL_BENCH_TIES_SIZE", "100k")
GROUP = f"ties-{SIZE}"
MEASURES = ["P@10", "recall@100", "recip_rank", "map", "ndcg", "ndcg@10"]
RULES = ("trec", "expected")


@pytest.fixture(scope="module")
def data():
    import polars as pl

    d = dataset(SIZE, depth=100, runs=1, seed=2, compression="snappy")
    qrels = pl.read_parquet(d / "qrels.parquet")
    run = pl.read_parquet(d / "runs" / "run_0.parquet").with_columns(pl.col("score").round(1))
    return qrels, run


@pytest.fixture(scope="module")
def evaluators(data):
    import fasteval

    qrels, run = data
    small_q = fasteval.read_qrels(ROOT / "datasets/trec/qrels.test")
    small_r = fasteval.read_run(ROOT / "datasets/trec/results.test")
    out = {}
    for rule in RULES:
        fasteval.evaluate(small_q, small_r, MEASURES, tie_break=rule)  # compile / load
        ev = fasteval.Evaluator(qrels, MEASURES, tie_break=rule)
        ev.evaluate(run.head(300_000))  # the parallel passes too
        out[rule] = ev
    return out


@pytest.mark.parametrize("rule", RULES)
def test_end_to_end(benchmark, data, evaluators, rule):
    _, run = data
    ev = evaluators[rule]
    benchmark.group = GROUP + "-end-to-end"
    res = benchmark.pedantic(lambda: ev.evaluate(run), rounds=5, warmup_rounds=1)
    benchmark.extra_info["result_rows"] = res.height
    benchmark.extra_info["tied_queries"] = ev.report.tied_queries
    benchmark.extra_info["ties_mattered"] = ev.report.ties_mattered
    if rule == "expected":
        ref = evaluators["trec"].evaluate(run)
        diff = (res["value"] - ref["value"]).abs()
        benchmark.extra_info["mean_abs_diff_vs_trec"] = float(diff.mean())
        benchmark.extra_info["queries_changed"] = int(
            res.filter(diff > 1e-12).get_column("query_id").n_unique())


@pytest.mark.parametrize("rule", RULES)
def test_score(benchmark, data, evaluators, rule):
    _, run = data
    ev = evaluators[rule]
    batch = ev.prepare(run)
    benchmark.group = GROUP + "-score-pass"
    out = benchmark.pedantic(lambda: ev.score(batch), rounds=7, warmup_rounds=1)
    benchmark.extra_info["rows"] = int(batch.offsets[-1])
    benchmark.extra_info["ns_per_row_per_measure"] = (
        benchmark.stats.stats.median * 1e9 / batch.offsets[-1] / out.shape[1])
