"""The score kernel answers the common families from per-query profiles computed once, to
the deepest cutoff asked and again when the relevance level changes: every value must be
the one the measure gets when it is asked for alone (and the hand-checked values below)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import fasteval
from tests.core._gen import random_case

MIXED = ["P@5", "P(rel=2)@5", "map", "AP(rel=2)", "recall@3", "R(rel=2)@50", "RR@2", "RR",
         "ndcg_cut_3", "ndcg_burges@7", "ndcg_cut_40", "Rprec", "Rprec_mult_0.5", "success_1",
         "set_F", "set_P", "num_rel_ret", "map_cut_4", "relative_P_6", "f1@4", "bpref", "infAP"]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("opts", [{}, {"complete": True}, {"max_docs": 4}])
def test_each_measure_alone_equals_the_mix(seed, opts):
    qrels, run = random_case(seed, n_queries=30, depth=50, pool=50)
    mixed = fasteval.evaluate(qrels, run, MIXED, **opts).sort("query_id", "measure")
    alone = pl.concat([fasteval.evaluate(qrels, run, [m], **opts) for m in MIXED])
    alone = alone.sort("query_id", "measure")
    assert mixed.select("query_id", "measure").equals(alone.select("query_id", "measure"))
    np.testing.assert_array_equal(mixed["value"].to_numpy(), alone["value"].to_numpy())


def test_profile_values_by_hand():
    # ranking: rel(2), non-rel(0), unjudged, rel(1), rel(2); 4 relevant judged, one not retrieved
    qrels = pl.DataFrame({"query_id": ["q"] * 6, "doc_id": ["a", "b", "d", "e", "f", "g"],
                          "relevance": [2, 0, 1, 2, 3, 0]})
    run = pl.DataFrame({"query_id": ["q"] * 5, "doc_id": ["a", "b", "c", "d", "e"],
                        "score": [5.0, 4.0, 3.0, 2.0, 1.0]})
    res = fasteval.evaluate(qrels, run, ["map", "P@2", "recall@4", "RR", "Rprec", "AP(rel=2)",
                                         "P(rel=2)@5", "ndcg_cut_2", "num_rel_ret"])
    assert res["measure"].unique(maintain_order=True).to_list()[:3] == ["map", "P@2", "recall@4"]
    canonical = [fasteval.parse_measure(m).name for m in res["measure"]]
    got = dict(zip(canonical, res["value"], strict=True))
    assert got["map"] == pytest.approx((1 / 1 + 2 / 4 + 3 / 5) / 4)
    assert got["P_2"] == 0.5
    assert got["recall_4"] == 0.5
    assert got["recip_rank"] == 1.0
    assert got["Rprec"] == 0.5  # 2 relevant in the top 4
    assert got["map(rel=2)"] == pytest.approx((1 / 1 + 2 / 5) / 3)  # grades >= 2: a, e (+ f)
    assert got["P_5(rel=2)"] == 0.4
    assert got["num_rel_ret"] == 3.0
    dcg = 2.0  # top 2: grades 2, 0
    idcg = 3.0 + 2.0 / np.log2(3.0)  # best: 3, 2
    assert got["ndcg_cut_2"] == pytest.approx(dcg / idcg)


@pytest.mark.parametrize("measures", [MIXED, ["P@5", "map", "ndcg_cut_3", "RR", "set_F"]])
def test_serial_and_parallel_passes_agree(monkeypatch, measures):
    """Small batches take the serial pass, large ones the parallel pass; a mix without the
    family functions takes the pass compiled without them: every variant gives the same
    values, bit for bit."""
    from fasteval.kernels import ranking

    qrels, run = random_case(7, n_queries=40, depth=60, pool=60)
    monkeypatch.setattr(ranking, "SERIAL_ROWS", 1 << 40)  # always serial
    serial = fasteval.evaluate(qrels, run, measures).sort("query_id", "measure")
    monkeypatch.setattr(ranking, "SERIAL_ROWS", 0)  # always parallel
    parallel = fasteval.evaluate(qrels, run, measures).sort("query_id", "measure")
    assert serial.select("query_id", "measure").equals(parallel.select("query_id", "measure"))
    np.testing.assert_array_equal(serial["value"].to_numpy(), parallel["value"].to_numpy())
    assert not serial["value"].is_nan().any()
