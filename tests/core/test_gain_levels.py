"""Gain measures cost O(distinct grades), whatever the largest grade: one grade of 10**7
once built a table of every grade up to it (20 s and 2.9 GB for nDCG of three judgments;
10**8 ran out of memory). Values stay identical to that table's, and exact against
hand-worked ones."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import polars as pl
import pytest

import fasteval
from fasteval.kernels.ranking import score_queries
from fasteval.measures import parse_measures
from fasteval.measures.plan import plan_slots
from fasteval.prepare import prepare_qrels, prepare_run


def test_the_largest_int32_grade_is_scored_exactly():
    g = 2**31 - 1
    qrels = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"], "relevance": [1, g]})
    run = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    out = fasteval.evaluate(qrels, run, ["ndcg", "num_rel"])
    # DCG = 1/log2(2) + g/log2(3); ideal = g/log2(2) + 1/log2(3)
    expected = (1 + g / math.log2(3)) / (g + 1 / math.log2(3))
    assert out.filter(pl.col("measure") == "ndcg")["value"].item() == pytest.approx(expected, rel=1e-12)
    assert out.filter(pl.col("measure") == "num_rel")["value"].item() == 2.0


def test_one_huge_grade_costs_no_memory_per_grade_value():
    g = 2_000_000  # the dense table of grades 0..g this replaced held 2 M Python entries
    qrels = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"],
                          "relevance": [g, 1, 0]})
    run = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["c", "a", "b"], "score": [3.0, 2.0, 1.0]})
    fasteval.evaluate(qrels, run, ["ndcg"])  # compiled and warm
    tracemalloc.start()
    try:
        out = fasteval.evaluate(qrels, run, ["ndcg", "ndcg_cut_10", "G", "Rndcg", "ndcg_rel"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20, peak
    ideal = g + 1 / math.log2(3)
    dcg = g / math.log2(3) + 1 / math.log2(4)
    assert out.filter(pl.col("measure") == "ndcg")["value"].item() == pytest.approx(dcg / ideal)


def test_ideal_order_lists_only_the_grades_present():
    pq = prepare_qrels(pl.DataFrame({"query_id": ["q"] * 4, "doc_id": list("abcd"),
                                     "relevance": [10**9, 3, -1, 0]}))
    assert pq.judged_levels().tolist() == [0, 3, 10**9]
    plan = plan_slots(parse_measures(["ndcg", "ndcg.3=7.5"]), 1, pq.judged_levels())
    assert plan.ol.tolist() == [10**9, 3, 0, 10**9, 3, 0]
    assert plan.og.tolist() == [1e9, 3.0, 0.0, 1e9, 7.5, 0.0]


def test_distinct_grades_give_the_same_values_as_every_grade_up_to_the_largest():
    rng = np.random.default_rng(7)
    levels = np.array([0, 3, 17, 40, -1, -2])
    n = 600
    qrels = pl.DataFrame({"query_id": rng.integers(0, 30, n).astype(str),
                          "doc_id": np.arange(n).astype(str),
                          "relevance": rng.choice(levels, n)}).unique(["query_id", "doc_id"])
    run = pl.DataFrame({"query_id": rng.integers(0, 30, 2000).astype(str),
                        "doc_id": rng.integers(0, n + 200, 2000).astype(str),
                        "score": rng.random(2000).round(2)}).unique(["query_id", "doc_id"])
    measures = parse_measures(["ndcg", "ndcg_rel", "Rndcg", "G", "ndcg_cut_5", "rbp",
                               "ndcg.17=0.5,3=40", "G.40=0,9=2"])
    pq = prepare_qrels(qrels)
    batch = prepare_run(pq, run)

    def score(grades) -> np.ndarray:
        out = np.empty((len(batch.qidx), len(measures)))
        score_queries(batch.labels, batch.offsets, pq.grades, pq.q_start[batch.qidx],
                      pq.g_end[batch.qidx], plan_slots(measures, 1, grades), out, 1)
        return out

    dense = score(pq.max_grade)  # the old plan: every grade 0..40
    distinct = score(pq.judged_levels())
    assert pq.judged_levels().tolist() == [0, 3, 17, 40]
    assert np.array_equal(dense, distinct, equal_nan=True)
    via_api = fasteval.evaluate(qrels, run, measures)["value"].to_numpy().reshape(dense.shape)
    assert np.array_equal(via_api, distinct, equal_nan=True)
