"""Benchmark: diversity measures (subtopic judgments) beside fasteval's own nDCG and AP.

Workload: N queries (default 100,000) x 100 ranked documents; each query has 4 subtopics and
15 judged documents, each relevant to 1 or 2 subtopics, about half of them in the ranking.
Both sides start from prepared judgments (``DiversityEvaluator`` / ``Evaluator`` built once)
and time ``evaluate(run)``: ranking the run (``prepare_run``) plus the measures. The
"similar work" reference is ``ndcg_cut_10`` + ``map`` on the same run with the judgments
collapsed to one grade per document. pyndeval, where installed, runs on a 2% sample
(it is the slow side) and its time is scaled up.

Run::

    python -m pytest benches/bench_diversity.py --benchmark-only \
        --benchmark-columns=median,mean,min,max,rounds
    python benches/bench_diversity.py [n_queries]      # interleaved medians, ns per row
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and os.environ.get("FASTEVAL_BENCH_PROCESS", "fasteval-command") != "library":
    import fasteval

    fasteval.configure_process()

import numpy as np
import polars as pl
import pytest

from fasteval import Evaluator
from fasteval.diversity import DiversityEvaluator

N_QUERIES = int(os.environ.get("FASTEVAL_BENCH_QUERIES", "100000"))
N_RET = 100
N_JUDGED = 15
N_SUB = 4
DIVERSITY = ["alpha-nDCG@10", "alpha-nDCG@20", "ERR-IA@20", "nERR-IA@20", "P-IA@10", "strec@10",
             "NRBP", "nNRBP", "MAP-IA"]
SIMILAR = ["ndcg_cut_10", "map"]


def make_data(n_queries: int, seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Subtopic qrels and a run with distinct scores (integer ids)."""
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_queries), N_JUDGED)
    judged = rng.integers(0, 1000, size=(n_queries, N_JUDGED * 2))
    judged = np.sort(judged, axis=1)[:, ::2][:, :N_JUDGED] + np.arange(N_JUDGED) * 1000  # distinct
    docs = judged.reshape(-1)
    first = rng.integers(0, N_SUB, size=docs.size)
    second = rng.integers(0, N_SUB, size=docs.size)
    two = rng.random(docs.size) < 0.4
    qrels = pl.concat([
        pl.DataFrame({"query_id": q, "subtopic": first, "doc_id": docs, "relevance": np.ones(docs.size, np.int64)}),
        pl.DataFrame({"query_id": q[two], "subtopic": second[two], "doc_id": docs[two],
                      "relevance": np.ones(int(two.sum()), np.int64)}),
    ]).unique(["query_id", "subtopic", "doc_id"], maintain_order=True)
    rq = np.repeat(np.arange(n_queries), N_RET)
    ranked = rng.integers(20_000, 10**9, size=(n_queries, N_RET))
    hit = rng.random((n_queries, N_JUDGED)) < 0.5
    pos = rng.integers(0, N_RET, size=(n_queries, N_JUDGED))
    rows, cols = np.nonzero(hit)
    ranked[rows, pos[rows, cols]] = judged[rows, cols]
    run = pl.DataFrame({"query_id": rq, "doc_id": ranked.reshape(-1),
                        "score": rng.permutation(rq.size).astype(np.float64)})
    run = run.unique(["query_id", "doc_id"], maintain_order=True)
    return qrels, run


def collapse(qrels: pl.DataFrame) -> pl.DataFrame:
    """One grade per document: the number of subtopics it is relevant to."""
    return qrels.group_by(["query_id", "doc_id"], maintain_order=True).agg(pl.col("relevance").sum())


@pytest.fixture(scope="module")
def data():
    return make_data(N_QUERIES)


def test_diversity(benchmark, data):
    qrels, run = data
    ev = DiversityEvaluator(qrels, DIVERSITY)
    ev.evaluate(run)  # compile / load
    benchmark.group = f"{N_QUERIES} queries x {N_RET} docs"
    out = benchmark.pedantic(ev.evaluate, args=(run,), rounds=5)
    assert out.height == N_QUERIES * len(DIVERSITY)


def test_similar_work(benchmark, data):
    qrels, run = data
    ev = Evaluator(collapse(qrels), SIMILAR)
    ev.evaluate(run)
    benchmark.group = f"{N_QUERIES} queries x {N_RET} docs"
    out = benchmark.pedantic(ev.evaluate, args=(run,), rounds=5)
    assert out.height == N_QUERIES * len(SIMILAR)


def interleaved(n_queries: int = N_QUERIES, repeats: int = 7) -> dict[str, float]:
    """Median wall seconds of each side, alternating, on the same run."""
    import statistics
    import time

    qrels, run = make_data(n_queries)
    div = DiversityEvaluator(qrels, DIVERSITY)
    sim = Evaluator(collapse(qrels), SIMILAR)
    one = DiversityEvaluator(qrels, ["alpha-nDCG@10"])
    sides = {"diversity (9 measures)": div.evaluate, "alpha-nDCG@10 alone": one.evaluate,
             "ndcg_cut_10 + map": sim.evaluate}
    for fn in sides.values():
        fn(run)
    times: dict[str, list[float]] = {k: [] for k in sides}
    for _ in range(repeats):
        for name, fn in sides.items():
            t = time.perf_counter()
            fn(run)
            times[name].append(time.perf_counter() - t)
    return {name: statistics.median(v) for name, v in times.items()} | {"rows": float(run.height)}


def pyndeval_time(n_queries: int) -> float | None:
    """Seconds pyndeval needs for the same workload, from a 2% sample; None if not installed."""
    try:
        import pyndeval
    except ImportError:
        return None
    import time

    sample = max(1, n_queries // 50)
    qrels, run = make_data(sample)
    q = [(str(a), str(b), str(c), int(d)) for a, b, c, d in qrels.iter_rows()]
    r = [(str(a), str(b), float(c)) for a, b, c in run.iter_rows()]
    names = ["alpha-nDCG@10", "alpha-nDCG@20", "ERR-IA@20", "nERR-IA@20", "P-IA@10", "strec@10", "NRBP",
             "nNRBP", "MAP-IA"]
    t = time.perf_counter()
    pyndeval.ndeval(q, r, names)
    return (time.perf_counter() - t) * n_queries / sample


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else N_QUERIES
    res = interleaved(n)
    rows = res.pop("rows")
    for name, sec in res.items():
        k = 9 if name.startswith("diversity") else (2 if "+" in name else 1)
        print(f"{name:24s} {sec * 1e3:8.1f} ms   {sec / rows / k * 1e9:6.2f} ns per row per measure")
    peer = pyndeval_time(n)
    if peer is not None:
        print(f"pyndeval (scaled from 2%) {peer * 1e3:8.1f} ms  ({peer / res['diversity (9 measures)']:.0f}x)")
