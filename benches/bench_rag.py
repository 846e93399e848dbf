"""Benchmark: the columnar RAG API (``evaluate_rag``) vs haystack-ai's five deterministic evaluators.

Workload: N questions of RAG logs, one row each: 10 ground-truth document keys
(with graded gains), 100 retrieved keys in rank order (about half of the ground truth among
them), a predicted and a gold answer. fasteval scores the polars table in one call
(recall single/multi-hit, MRR, MAP, NDCG, exact match); haystack-ai runs its
``DocumentRecallEvaluator`` (both modes), ``DocumentMRREvaluator``, ``DocumentMAPEvaluator``,
``DocumentNDCGEvaluator`` and ``AnswerExactMatchEvaluator`` on ``Document`` objects made from
the same rows (their construction is timed apart and not counted). The values are checked
equal. N defaults to 100,000 (11 million keys; Haystack's side needs ~10 GB).

Run::

    python benches/bench_rag.py [n_questions] [repeats]   # settings of the fasteval command
                                                          # (FASTEVAL_BENCH_PROCESS=library: none)
    python -m pytest benches/bench_rag.py --benchmark-only   # FASTEVAL_BENCH_RAG_QUESTIONS, default 20,000
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and os.environ.get("FASTEVAL_BENCH_PROCESS", "fasteval-command") != "library":
    # as benches/conftest.py does for pytest: the settings of the fasteval command
    import fasteval

    fasteval.configure_process()
import time

import numpy as np
import pytest

haystack = pytest.importorskip("haystack")
hs_eval = pytest.importorskip("haystack.components.evaluators")

import polars as pl  # noqa: E402

from fasteval.evaluators import evaluate_rag  # noqa: E402

N_GT = 10
N_RET = 100
MEASURES = ("recall_single_hit", "recall_multi_hit", "mrr", "map", "ndcg", "exact_match")


def make_logs(n_questions: int, seed: int = 0) -> pl.DataFrame:
    """RAG logs: string document keys, graded ground truth, answers (vectorized, seeded)."""
    rng = np.random.default_rng(seed)
    corpus = 50 * n_questions
    gt_ids = rng.integers(0, corpus, size=(n_questions, N_GT))
    ret_ids = rng.integers(0, corpus, size=(n_questions, N_RET))
    hits = rng.random((n_questions, N_GT)) < 0.5  # about half of the ground truth is retrieved
    slots = np.argsort(rng.random((n_questions, N_RET)), axis=1)[:, :N_GT]
    rows = np.repeat(np.arange(n_questions), N_GT)
    ret_ids[rows[hits.ravel()], slots.ravel()[hits.ravel()]] = gt_ids.ravel()[hits.ravel()]
    key = pl.lit("doc-") + pl.col("id").cast(pl.String)
    gt = pl.DataFrame({"id": gt_ids.ravel()}).select(key).to_series()
    ret = pl.DataFrame({"id": ret_ids.ravel()}).select(key).to_series()
    answers = pl.Series([f"answer {i % 7}" for i in range(n_questions)])
    golds = pl.Series([f"answer {i % 5}" for i in range(n_questions)])
    return pl.DataFrame({
        "question_id": np.arange(n_questions),
        "retrieved": pl.Series(ret).reshape((n_questions, N_RET)).arr.to_list(),
        "ground_truth": pl.Series(gt).reshape((n_questions, N_GT)).arr.to_list(),
        "relevance": pl.Series(rng.integers(1, 4, size=n_questions * N_GT).astype(float))
        .reshape((n_questions, N_GT)).arr.to_list(),
        "answer": answers,
        "gold": golds,
    })


def fasteval_run(logs: pl.DataFrame):
    return evaluate_rag(logs, relevance_col="relevance", answer_col="answer", gold_col="gold")


def haystack_inputs(logs: pl.DataFrame) -> tuple:
    doc = haystack.Document
    gt = [[doc(id=k, content=k, score=s) for k, s in zip(keys, gains, strict=True)]
          for keys, gains in zip(logs["ground_truth"].to_list(), logs["relevance"].to_list(), strict=True)]
    ret = [[doc(id=k, content=k) for k in keys] for keys in logs["retrieved"].to_list()]
    return gt, ret, logs["gold"].to_list(), logs["answer"].to_list()


def haystack_run(gt, ret, golds, answers) -> dict:
    docs = {"ground_truth_documents": gt, "retrieved_documents": ret}
    return {
        "recall_single_hit": hs_eval.DocumentRecallEvaluator(mode="single_hit").run(**docs),
        "recall_multi_hit": hs_eval.DocumentRecallEvaluator(mode="multi_hit").run(**docs),
        "mrr": hs_eval.DocumentMRREvaluator().run(**docs),
        "map": hs_eval.DocumentMAPEvaluator().run(**docs),
        "ndcg": hs_eval.DocumentNDCGEvaluator().run(**docs),
        "exact_match": hs_eval.AnswerExactMatchEvaluator().run(ground_truth_answers=golds,
                                                               predicted_answers=answers),
    }


def check_same(report, theirs: dict) -> None:
    for name in MEASURES:
        ours = report.per_question[name].to_numpy()
        assert np.max(np.abs(ours - np.asarray(theirs[name]["individual_scores"], dtype=float))) <= 1e-12, name
        assert abs(report.scores[name] - theirs[name]["score"]) <= 1e-12, name


N_PYTEST = int(os.environ.get("FASTEVAL_BENCH_RAG_QUESTIONS", "20000"))


@pytest.fixture(scope="module")
def logs():
    return make_logs(N_PYTEST)


def test_fasteval(benchmark, logs):
    benchmark.group = f"rag {N_PYTEST} questions x {N_GT} gt x {N_RET} retrieved"
    fasteval_run(logs.head(10))  # load compiled kernels
    benchmark.pedantic(fasteval_run, args=(logs,), rounds=5, warmup_rounds=1)


def test_haystack(benchmark, logs):
    benchmark.group = f"rag {N_PYTEST} questions x {N_GT} gt x {N_RET} retrieved"
    inputs = haystack_inputs(logs)
    theirs = benchmark.pedantic(haystack_run, args=inputs, rounds=1, warmup_rounds=0)
    check_same(fasteval_run(logs), theirs)


def main(n_questions: int, repeats: int) -> None:
    import gc

    t = time.perf_counter()
    logs = make_logs(n_questions)
    print(f"{n_questions} questions: logs made in {time.perf_counter() - t:.1f} s")
    fasteval_run(logs.head(10))
    walls, cpus = [], []
    for _ in range(repeats):
        gc.collect()
        w, c = time.perf_counter(), time.process_time()
        report = fasteval_run(logs)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    t = time.perf_counter()
    inputs = haystack_inputs(logs)
    print(f"haystack Documents built in {time.perf_counter() - t:.1f} s (not counted)")
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    theirs = haystack_run(*inputs)
    h_wall, h_cpu = time.perf_counter() - w, time.process_time() - c
    check_same(report, theirs)
    f_wall, f_cpu = float(np.median(walls)), float(np.median(cpus))
    print(f"fasteval evaluate_rag  wall {f_wall * 1e3:8.1f} ms  cpu {f_cpu * 1e3:8.1f} ms (median of {repeats})")
    print(f"haystack 5 evaluators  wall {h_wall * 1e3:8.1f} ms  cpu {h_cpu * 1e3:8.1f} ms")
    print(f"fasteval is {h_wall / f_wall:.0f}x faster (wall), {h_cpu / f_cpu:.0f}x (cpu); same values")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000, int(sys.argv[2]) if len(sys.argv) > 2 else 5)
