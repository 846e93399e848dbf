"""Measures beyond trec_eval's set, on hand-worked cases (the reference implementations
are compared in test_references.py)."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.errors import ParameterError
from fasteval.measures import parse_measure
from tests._profile import examples
from tests.core._gen import random_case

QRELS = {"1": {"a": 3, "b": 0, "c": 1, "d": 4, "u": -1}}
RUN = {"1": {"a": 0.9, "b": 0.8, "c": 0.7, "x": 0.6, "d": 0.5, "u": 0.4}}


def _values(measures, qrels=QRELS, run=RUN) -> dict[str, float]:
    """Values by canonical name (the results name each measure as it was asked for)."""
    res = fasteval.evaluate(qrels, run, measures)
    canonical = [parse_measure(label).name for label in res["measure"].to_list()]
    return dict(zip(canonical, res["value"].to_list(), strict=True))


def test_err_hand_worked() -> None:
    # R(g) = (2^g - 1) / 16: a 7/16, b 0, c 1/16, x 0 (unjudged), d 15/16, u 0 (negative)
    r = [7 / 16, 0, 1 / 16, 0, 15 / 16, 0]
    at3 = r[0] + (1 - r[0]) * r[2] / 3
    full = at3 + (1 - r[0]) * (1 - r[2]) * r[4] / 5
    got = _values(["ERR@3", "ERR@10", "err", "ERR@1"])
    assert got == pytest.approx({"err_3": at3, "err_10": full, "err": full, "err_1": 7 / 16},
                                abs=1e-15)


def test_err_gmax_is_a_named_parameter() -> None:
    m = parse_measure("ERR(gmax=6)@10")
    assert m.name == "err_10(gmax=6)" and parse_measure(m.name) == m
    assert parse_measure("ERR(gmax=4)@10") == parse_measure("err_10")
    r = [7 / 64, 0, 1 / 64, 0, 15 / 64]
    want = r[0] + (1 - r[0]) * r[2] / 3 + (1 - r[0]) * (1 - r[2]) * r[4] / 5
    assert _values([m])["err_10(gmax=6)"] == pytest.approx(want, abs=1e-15)


def test_err_refuses_grades_above_gmax() -> None:
    qrels = {"1": {"a": 5, "b": 1}}
    with pytest.raises(ParameterError, match=r"gmax.*largest grade in the qrels \(5\)"):
        _values(["ERR@10"], qrels)
    # a (R = 31/32) first, b (R = 1/32) second
    want = 31 / 32 + (1 / 32) * (1 / 32) / 2
    assert _values(["ERR(gmax=5)@10"], qrels)["err_10(gmax=5)"] == pytest.approx(want, abs=1e-15)
    with pytest.raises(ParameterError, match="err's gmax must be an integer"):
        _values(["ERR(gmax=2.5)@10"])


def test_err_without_relevant_documents_and_empty_cutoff() -> None:
    assert _values(["ERR@2"], {"1": {"z": 2}})["err_2"] == 0.0


def test_set_judged_counts_judged_documents_of_the_whole_ranking() -> None:
    # a b c d judged (>= 0); x not in the pool; u judged negatively (unjudged for fasteval)
    assert _values(["Judged", "Judged@2"]) == {"set_judged": 4 / 6, "judged_2": 1.0}


def test_setp_relative_is_set_relative_p() -> None:
    assert parse_measure("SetP(relative=True)").name == "set_relative_P"
    assert parse_measure("SetP(relative=False)").name == "set_P"
    qrels = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"],
                          "relevance": [1, 1, 0]})
    run = pl.DataFrame({"query_id": ["q"] * 4, "doc_id": ["a", "c", "d", "e"],
                        "score": [4.0, 3.0, 2.0, 1.0]})
    got = _values(["SetP(relative=True)", "SetP"], qrels, run)
    assert got == {"set_relative_P": 1 / 2, "set_P": 1 / 4}


def test_precision_over_judged_documents_only() -> None:
    # ranking a(3) b(0) c(1) x(unjudged) d(4) u(negative: unjudged); judged: a b c d
    got = _values(["P(judged_only=True)@2", "P(judged_only=True)@4", "P(judged_only=True)@5",
                   "P(judged_only=True,rel=3)@4", "P@4"])
    assert got == {"P_judged_2": 1 / 2, "P_judged_4": 3 / 4, "P_judged_5": 3 / 5,
                   "P_judged_4(rel=3)": 2 / 4, "P_4": 2 / 4}
    assert parse_measure("P_judged_4(rel=3)") == parse_measure("P(judged_only=True,rel=3)@4")


def test_ndcg_with_ir_measures_gains_is_trec_eval_gains() -> None:
    m = parse_measure("nDCG(gains={0: 0, 1: 1, 3: 10})")
    assert m == parse_measure("ndcg.0=0,1=1,3=10") and parse_measure(m.name) == m
    # gains: a 3 -> 10, b 0, c 1, x -, d 4 (unlisted: its grade), u -
    dcg = 10 + 1 / 2 + 4 / math.log2(6)
    ideal = 10 + 4 / math.log2(3) + 1 / 2
    assert _values([m])[m.name] == pytest.approx(dcg / ideal, abs=1e-15)


def test_set_precision_and_recall_at_k() -> None:
    # ranking a(3) b(0) c(1) x u(-1) d(4) u; relevant (>= 1): a c d; retrieved 6
    got = _values(["SetP@2", "SetP@4", "SetP@10", "SetR@4", "SetP"])
    assert got == {"set_P_cut_2": 1 / 2, "set_P_cut_4": 2 / 4, "set_P_cut_10": 3 / 6,
                   "recall_4": 2 / 3, "set_P": 3 / 6}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(1, 12))
def test_set_p_at_k_is_set_p_of_the_top_k(seed: int, k: int) -> None:
    qrels, run = random_case(seed, n_queries=6, pool=10, depth=15)
    a = fasteval.evaluate(qrels, run, [f"SetP@{k}"])["value"].to_list()
    b = fasteval.evaluate(qrels, run, ["set_P"], max_docs=k)["value"].to_list()
    assert a == b
