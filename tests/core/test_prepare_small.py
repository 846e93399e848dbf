"""Small tables prepared by polars (fasteval.prepare.small) give what the kernels give:
labels, offsets, query codes, the report, and the same errors, for every option, id type
(text of both inline and out-of-line lengths, integers, one of each), ties, signed zeros,
duplicates and queries missing on either side."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasteval
import fasteval.prepare as P
from fasteval.errors import FastevalError
from tests._profile import examples
from tests.core._gen import random_case

TEXT_DOCS = ["a", "b", "B", "d1", "d10", "d2", "9", "10", "z", "\u00e9", "x#1", "ab",
             "collection-document-0001", "collection-document-0002", "", " "]
INT_DOCS = [-1, 0, 1, 2, 9, 10, 11, 100, 99, 2**62]
QUERIES_TEXT = ["1", "10", "2", "q", "Q"]
QUERIES_INT = [1, 10, 2, 3, -4]
SCORES = [0.0, -0.0, 1.0, 1.0, 0.5, -2.5, 1e-300, float("inf")]


def _both(qrels: pl.DataFrame, run: pl.DataFrame, monkeypatch, **opts):
    """(polars path, kernel path) results of prepare_run: a Batch or the error raised."""
    out = []
    for limit in (P.small.SMALL_ROWS, -1):
        monkeypatch.setattr(P.small, "SMALL_ROWS", limit)
        try:
            pq = P.prepare_qrels(qrels)
            assert (pq.index is None) == (limit >= 0)
            out.append(P.prepare_run(pq, run, **opts))
        except FastevalError as e:
            out.append((type(e), str(e)))
    return out


def _same(a, b) -> None:
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert a == b
        return
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.labels.dtype == b.labels.dtype == np.int32
    np.testing.assert_array_equal(a.offsets, b.offsets)
    np.testing.assert_array_equal(a.qidx, b.qidx)
    np.testing.assert_array_equal(a.present, b.present)
    assert a.report == b.report


@st.composite
def cases(draw):
    q_int = draw(st.booleans())
    d_int = draw(st.booleans())
    run_q_int = draw(st.booleans()) if q_int else False
    run_d_int = draw(st.booleans()) if d_int else False
    queries = QUERIES_INT if q_int else QUERIES_TEXT
    docs = INT_DOCS if d_int else TEXT_DOCS
    judged = draw(st.lists(st.tuples(st.sampled_from(queries), st.sampled_from(docs),
                                     st.sampled_from([-2, -1, 0, 0, 1, 1, 2, 3])),
                           min_size=1, max_size=25, unique_by=lambda r: (r[0], r[1])))
    rows = draw(st.lists(st.tuples(st.sampled_from(queries + ([99] if q_int else ["x"])),
                                   st.sampled_from(docs), st.sampled_from(SCORES)),
                         max_size=40))
    if draw(st.booleans()):  # one repeated (query, doc) pair, maybe
        rows = rows + rows[:1]
    qt = pl.Int64 if q_int else pl.Utf8
    dt = pl.Int64 if d_int else pl.Utf8
    qrels = pl.DataFrame(judged, schema={"query_id": qt, "doc_id": dt, "relevance": pl.Int64},
                         orient="row")
    run = pl.DataFrame(rows, schema={"query_id": qt, "doc_id": dt, "score": pl.Float64},
                       orient="row")
    if not run_q_int and q_int:
        run = run.with_columns(pl.col("query_id").cast(pl.Utf8))
    if not run_d_int and d_int:
        run = run.with_columns(pl.col("doc_id").cast(pl.Utf8))
    run = run.with_columns(rank=pl.int_range(pl.len()).reverse() % 4)
    opts = {
        "tie_break": draw(st.sampled_from(["trec", "rank", "input"])),
        "max_docs": draw(st.sampled_from([None, 1, 3, 2**63 - 1])),
        "judged_only": draw(st.booleans()),
        "complete": draw(st.booleans()),
        "duplicates": draw(st.sampled_from(["error", "keep_best"])),
    }
    return qrels, run, opts


@settings(max_examples=examples(300), deadline=None)
@given(cases())
def test_polars_path_equals_kernels(case):
    qrels, run, opts = case
    with pytest.MonkeyPatch.context() as mp:
        small, kernels = _both(qrels, run, mp, **opts)
    _same(small, kernels)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("int_ids", [False, True])
def test_random_runs_score_the_same(seed, int_ids, monkeypatch):
    qrels, run = random_case(seed, int_ids=int_ids)
    measures = ["map", "ndcg@10", "P@5", "bpref", "infAP", "recip_rank", "num_rel_ret"]
    got = []
    for limit in (P.small.SMALL_ROWS, -1):
        monkeypatch.setattr(P.small, "SMALL_ROWS", limit)
        got.append(fasteval.evaluate(qrels, run.sample(fraction=1.0, shuffle=True, seed=seed),
                                     measures, complete=seed % 2 == 0))
    assert got[0].equals(got[1])


def test_duplicate_judgment_same_error(monkeypatch):
    qrels = pl.DataFrame({"query_id": ["q", "q", "r", "q"], "doc_id": ["a", "b", "a", "a"],
                          "relevance": [1, 0, 1, 2]})
    errors = []
    for limit in (P.small.SMALL_ROWS, -1):
        monkeypatch.setattr(P.small, "SMALL_ROWS", limit)
        with pytest.raises(FastevalError) as e:
            P.prepare_qrels(qrels)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert "row 3" in errors[0] and "'q', document 'a'" in errors[0]


def test_small_qrels_meet_a_large_run(monkeypatch):
    """Qrels prepared by polars, a run over the limit: the kernels' index is built then,
    with the same query codes."""
    qrels, run = random_case(3, n_queries=40)
    pq = P.prepare_qrels(qrels)
    assert pq.index is None
    small = P.prepare_run(pq, run)
    monkeypatch.setattr(P.small, "SMALL_ROWS", run.height - 1)
    large = P.prepare_run(pq, run)
    assert pq._alt["indexed"].index is not None
    _same(small, large)


def test_null_rank_is_an_error():
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    run = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 2.0],
                        "rank": [1, None]})
    with pytest.raises(FastevalError, match="row 1, column 'rank'"):
        P.prepare_run(P.prepare_qrels(qrels), run, tie_break="rank")


def test_signed_zero_ties_with_zero():
    """-0.0 and 0.0 tie (C compares them equal): doc id descending decides."""
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    run = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [0.0, -0.0]})
    assert P.prepare_run(P.prepare_qrels(qrels), run).labels.tolist() == [-1, 1]
