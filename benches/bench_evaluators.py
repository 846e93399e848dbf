"""Benchmark: fasteval's Haystack-compatible evaluators vs haystack-ai.

Workload: N questions with 10 ground-truth and 100 retrieved
documents each, through DocumentMAPEvaluator and DocumentNDCGEvaluator, timed from
the Python ``haystack.Document`` objects (conversion included).  Both libraries get
the very same document objects.  Beside them, the floor of any implementation that
starts from those objects: reading one attribute of every document (``test_floor``,
as a list comprehension and as ``map(attrgetter)``).  N defaults to 20,000; set
``FASTEVAL_BENCH_QUESTIONS=100000`` for the full size (about 11 million documents,
~8 GB of Python objects).  haystack-ai runs ``HAYSTACK_ROUNDS`` rounds (default 1;
it is the slow side), fasteval and the floor 5 rounds after a warm-up.

Run::

    python -m pytest benches/bench_evaluators.py --benchmark-only \
        --benchmark-columns=median,mean,min,max,rounds
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and os.environ.get("FASTEVAL_BENCH_PROCESS", "fasteval-command") != "library":
    # as benches/conftest.py does for pytest: the settings of the fasteval command
    import fasteval

    fasteval.configure_process()
import random
from itertools import chain
from operator import attrgetter

import pytest

haystack = pytest.importorskip("haystack")
hs_eval = pytest.importorskip("haystack.components.evaluators")

from fasteval.evaluators import (  # noqa: E402
    DocumentMAPEvaluator,
    DocumentNDCGEvaluator,
    evaluate_documents,
)
from fasteval.evaluators.columnar import DocumentTable  # noqa: E402

N_QUESTIONS = int(os.environ.get("FASTEVAL_BENCH_QUESTIONS", "20000"))
N_GT = 10
N_RET = 100
HAYSTACK_ROUNDS = int(os.environ.get("HAYSTACK_ROUNDS", "1"))
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def make_batch(n_questions: int, seed: int = 0):
    """Ground truth (graded, 10 per question) and rankings (100 per question).

    About half of each question's ground-truth passages appear somewhere in its
    ranking; every string is a separate object, as when ground truth comes from a
    dataset and rankings from a document store.
    """
    rng = random.Random(seed)
    doc = haystack.Document
    gt, ret = [], []
    for q in range(n_questions):
        relevant = [f"q{q} passage {j} {rng.choice(WORDS)} {rng.choice(WORDS)}" for j in range(N_GT)]
        gt.append([doc(content=str(text), score=float(rng.randint(1, 3))) for text in relevant])
        ranking = [f"q{q} other {j} {rng.choice(WORDS)} {rng.choice(WORDS)}" for j in range(N_RET)]
        for text, pos in zip(relevant[: N_GT // 2], rng.sample(range(N_RET), N_GT // 2), strict=True):
            ranking[pos] = "".join([text])  # equal value, new object
        ret.append([doc(content=text) for text in ranking])
    return gt, ret


@pytest.fixture(scope="module")
def batch():
    return make_batch(N_QUESTIONS)


@pytest.fixture(scope="module")
def reference(batch):
    gt, ret = batch
    return {
        "map": hs_eval.DocumentMAPEvaluator().run(ground_truth_documents=gt, retrieved_documents=ret),
        "ndcg": hs_eval.DocumentNDCGEvaluator().run(ground_truth_documents=gt, retrieved_documents=ret),
    }


CASES = {
    "map": (DocumentMAPEvaluator, "DocumentMAPEvaluator"),
    "ndcg": (DocumentNDCGEvaluator, "DocumentNDCGEvaluator"),
}


@pytest.mark.parametrize("measure", ["map", "ndcg"])
def test_fasteval(benchmark, batch, reference, measure):
    gt, ret = batch
    ev = CASES[measure][0]()
    benchmark.group = f"{measure} {N_QUESTIONS} questions x {N_GT} gt x {N_RET} retrieved"
    ev.run(ground_truth_documents=gt[:10], retrieved_documents=ret[:10])  # compile / load kernels
    out = benchmark.pedantic(
        ev.run, kwargs={"ground_truth_documents": gt, "retrieved_documents": ret}, rounds=5, warmup_rounds=0
    )
    exp = reference[measure]
    assert out["score"] == pytest.approx(exp["score"], abs=1e-12)
    assert max(abs(a - b) for a, b in zip(out["individual_scores"], exp["individual_scores"], strict=True)) <= 1e-12


def read_content_comprehension(gt, ret):
    """The floor: one attribute of every document, read by a list comprehension."""
    return [d.content for docs in gt for d in docs], [d.content for docs in ret for d in docs]


def read_content_map(gt, ret):
    """The floor, read by a C-level ``map(attrgetter)`` over the chained lists."""
    get = attrgetter("content")
    return list(map(get, chain.from_iterable(gt))), list(map(get, chain.from_iterable(ret)))


@pytest.mark.parametrize("how", ["comprehension", "map"])
def test_floor(benchmark, batch, how):
    gt, ret = batch
    read = read_content_comprehension if how == "comprehension" else read_content_map
    benchmark.group = f"map {N_QUESTIONS} questions x {N_GT} gt x {N_RET} retrieved"
    out = benchmark.pedantic(read, args=(gt, ret), rounds=5, warmup_rounds=1)
    assert len(out[1]) == N_QUESTIONS * N_RET


@pytest.mark.parametrize("measure", ["map", "ndcg"])
def test_haystack(benchmark, batch, measure):
    gt, ret = batch
    ev = getattr(hs_eval, CASES[measure][1])()
    benchmark.group = f"{measure} {N_QUESTIONS} questions x {N_GT} gt x {N_RET} retrieved"
    benchmark.pedantic(
        ev.run, kwargs={"ground_truth_documents": gt, "retrieved_documents": ret},
        rounds=HAYSTACK_ROUNDS, warmup_rounds=0,
    )


def test_fasteval_map_and_ndcg_one_call(benchmark, batch, reference):
    """Both measures from one conversion (fasteval extra; Haystack needs two runs)."""
    gt, ret = batch
    benchmark.group = f"map+ndcg {N_QUESTIONS} questions x {N_GT} gt x {N_RET} retrieved"
    out = benchmark.pedantic(evaluate_documents, args=(gt, ret, ["map", "ndcg"]), rounds=5)
    for m in ("map", "ndcg"):
        assert out[m]["score"] == pytest.approx(reference[m]["score"], abs=1e-12)


def test_fasteval_columnar_kernel_only(benchmark, batch, reference):
    """Scoring a prepared columnar table (no Python objects): the engine's own speed."""
    gt, ret = batch
    table = DocumentTable.build(gt, ret, gains=True)
    benchmark.group = f"map+ndcg {N_QUESTIONS} questions x {N_GT} gt x {N_RET} retrieved"
    out = benchmark.pedantic(table.score, rounds=5)
    assert float(out["map"].mean()) == pytest.approx(reference["map"]["score"], abs=1e-9)


def interleaved(n_questions: int = N_QUESTIONS, repeats: int = 5) -> dict[str, dict[str, float]]:
    """Alternate haystack and fasteval runs on the same batch; wall and CPU medians.

    On a shared, overloaded machine, alternating the two sides exposes them to
    the same load; CPU time (all threads of the process) is the steadier number.
    Run with ``python benches/bench_evaluators.py [n_questions]``.
    """
    import statistics
    import time

    gt, ret = make_batch(n_questions)
    sides = {
        "floor (comp.)": read_content_comprehension,
        "floor (map)": read_content_map,
        "haystack map": hs_eval.DocumentMAPEvaluator().run,
        "fasteval map": DocumentMAPEvaluator().run,
        "haystack ndcg": hs_eval.DocumentNDCGEvaluator().run,
        "fasteval ndcg": DocumentNDCGEvaluator().run,
    }
    DocumentMAPEvaluator().run(gt[:5], ret[:5])  # load compiled kernels
    wall: dict[str, list[float]] = {k: [] for k in sides}
    cpu: dict[str, list[float]] = {k: [] for k in sides}
    for _ in range(repeats):
        for name, run in sides.items():
            w, c = time.perf_counter(), time.process_time()
            run(gt, ret)
            wall[name].append(time.perf_counter() - w)
            cpu[name].append(time.process_time() - c)
    return {
        name: {"wall_median_s": statistics.median(wall[name]), "cpu_median_s": statistics.median(cpu[name])}
        for name in sides
    }


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else N_QUESTIONS
    res = interleaved(n)
    for name, v in res.items():
        print(f"{name:15s} wall {v['wall_median_s'] * 1e3:9.1f} ms   cpu {v['cpu_median_s'] * 1e3:9.1f} ms")
    for m in ("map", "ndcg"):
        h, f = res[f"haystack {m}"], res[f"fasteval {m}"]
        print(
            f"{m}: fasteval is {h['wall_median_s'] / f['wall_median_s']:.2f}x faster (wall), "
            f"{h['cpu_median_s'] / f['cpu_median_s']:.2f}x (cpu); "
            + ", ".join(f"{f['cpu_median_s'] / res[k]['cpu_median_s']:.2f}x the {k} (cpu)"
                        for k in ("floor (comp.)", "floor (map)"))
        )
