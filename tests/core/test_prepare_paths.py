"""The run-preparation paths agree: blocked (input grouped by query) and whole-table, text
ids inline (<= 12 bytes) and out-of-line, integer ids, multi-chunk columns; and the byte
comparisons on Arrow string views agree with Python's ``bytes`` order."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasteval
import fasteval.prepare as P
from fasteval.errors import InputError
from fasteval.kernels import ids as K
from fasteval.prepare.ranking import _each_query_once, _query_groups, _rank_and_label_blocked
from fasteval.prepare.threads import split_parts
from fasteval.prepare.views import readonly
from tests._profile import examples
from tests.core._gen import random_case


@pytest.fixture(autouse=True)
def _kernel_path(monkeypatch):
    """These tests compare the kernels' paths: no table is small enough for polars."""
    monkeypatch.setattr(P.small, "SMALL_ROWS", -1)


MEASURES = ["map", "ndcg", "P@5", "recip_rank", "bpref", "num_rel_ret", "infAP", "Rprec"]


def _long_ids(df: pl.DataFrame) -> pl.DataFrame:
    """Doc ids padded past 12 bytes (out-of-line in Arrow views), one in three kept short."""
    return df.with_columns(
        pl.when(pl.col("doc_id").str.len_bytes() % 3 == 0)
        .then(pl.col("doc_id"))
        .otherwise(pl.lit("collection-doc-") + pl.col("doc_id"))
        .alias("doc_id")
    )


def _chunked(df: pl.DataFrame, pieces: int, seed: int) -> pl.DataFrame:
    """The same rows in several chunks, cut at random rows (inside queries too)."""
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, df.height), size=min(pieces, df.height - 1),
                              replace=False))
    parts = [df.slice(int(a), int(b - a)) for a, b in zip([0, *cuts], [*cuts, df.height],
                                                          strict=True)]
    return pl.concat(parts, rechunk=False)


def _whole_and_blocked(qrels, run, monkeypatch, block: int, expect_blocked: bool = True,
                       **opts):
    pq = P.prepare_qrels(qrels)
    monkeypatch.setattr(P.threads, "BLOCK_ROWS", 1 << 40)
    whole = P.prepare_run(pq, run, **opts)
    monkeypatch.setattr(P.threads, "BLOCK_ROWS", block)
    used = []
    real = _rank_and_label_blocked
    monkeypatch.setattr(P.ranking, "_rank_and_label_blocked",
                        lambda *a, **k: used.append(real(*a, **k)) or used[-1])
    blocked = P.prepare_run(pq, run, **opts)
    if expect_blocked:  # the blocked path really ran (else the comparison proves nothing)
        assert used and used[0] is not None
    return whole, blocked


def _same(a: P.Batch, b: P.Batch) -> None:
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.offsets, b.offsets)
    np.testing.assert_array_equal(a.qidx, b.qidx)
    np.testing.assert_array_equal(a.present, b.present)
    assert a.report == b.report


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ids", ["short", "long", "int"])
@pytest.mark.parametrize("block", [7, 64])
def test_blocked_equals_whole(seed, ids, block, monkeypatch):
    qrels, run = random_case(seed, n_queries=60, depth=40, int_ids=ids == "int")
    if ids == "long":
        qrels, run = _long_ids(qrels), _long_ids(run)
    run = run.sort("query_id", maintain_order=True)  # grouped by query: the blocked path
    if seed % 2:
        run = _chunked(run, 5, seed)
    assert run.height >= 2 * block
    for opts in ({}, {"complete": True}, {"max_docs": 5, "judged_only": True},
                 {"tie_break": "input"}):
        whole, blocked = _whole_and_blocked(qrels, run, monkeypatch, block, **opts)
        _same(whole, blocked)
    assert whole.labels.size > 0


@pytest.mark.parametrize("seed", range(4))
def test_query_order_and_split_queries(seed, monkeypatch):
    """Queries grouped but not in qrels order (labels moved into place), and a query
    split in two (whole-table path): both equal the whole-table result."""
    qrels, run = random_case(seed, n_queries=50, depth=30)
    groups = run.partition_by("query_id", maintain_order=True)
    rng = np.random.default_rng(seed)
    shuffled = pl.concat([groups[i] for i in rng.permutation(len(groups))])
    whole, blocked = _whole_and_blocked(qrels, shuffled, monkeypatch, 16)
    _same(whole, blocked)
    first = shuffled.filter(pl.col("query_id") == shuffled["query_id"][0]).height
    split = pl.concat([shuffled.slice(1), shuffled.slice(0, 1)])  # first query: both ends
    pq = P.prepare_qrels(qrels)
    assert _each_query_once(_query_groups(pq, split["query_id"])[1]) == (
        first == 1)
    whole, blocked = _whole_and_blocked(qrels, split, monkeypatch, 16, expect_blocked=False)
    _same(whole, blocked)
    r1 = fasteval.evaluate(qrels, split, MEASURES)
    r2 = fasteval.evaluate(qrels, shuffled, MEASURES)
    assert r1.sort("query_id", "measure").equals(r2.sort("query_id", "measure"))


@pytest.mark.parametrize("ids", ["short", "long"])
def test_duplicate_found_in_a_block(ids, monkeypatch):
    qrels, run = random_case(1, n_queries=40, depth=30)
    if ids == "long":
        qrels, run = _long_ids(qrels), _long_ids(run)
    run = run.sort("query_id", maintain_order=True)
    dup = pl.concat([run, run.slice(run.height // 2, 1)]).sort("query_id", maintain_order=True)
    pq = P.prepare_qrels(qrels)
    monkeypatch.setattr(P.threads, "BLOCK_ROWS", 8)
    with pytest.raises(InputError, match="appears more than once"):
        P.prepare_run(pq, dup)
    kept = P.prepare_run(pq, dup, duplicates="keep_best")
    assert kept.report.deduplicated_rows == 1
    np.testing.assert_array_equal(kept.labels, P.prepare_run(pq, run).labels)


def test_ties_broken_by_bytes_descending_long_and_short():
    """Equal scores: doc ids descending byte-wise (strcmp), mixing inline and out-of-line
    ids, shared prefixes, and bytes >= 0x80."""
    docs = ["a", "ab", "abc", "abcdefghijkl", "abcdefghijklm", "abcdefghijklmn", "abd",
            "zz", "\u00e9t\u00e9", "\u00e9", "collection-000", "collection-0001",
            "collection-001", "b" * 30, "b" * 29 + "c", ""]
    docs = [d for d in docs if d]
    qrels = pl.DataFrame({"query_id": ["q"] * len(docs), "doc_id": docs,
                          "relevance": list(range(len(docs)))})
    run = pl.DataFrame({"query_id": ["q"] * len(docs), "doc_id": docs,
                        "score": [1.0] * len(docs)})
    pq = P.prepare_qrels(qrels)
    batch = P.prepare_run(pq, run)
    want = sorted(docs, key=lambda d: d.encode(), reverse=True)
    grade = {d: i for i, d in enumerate(docs)}
    assert batch.labels.tolist() == [grade[d] for d in want]


ascii_or_not = st.text(alphabet=st.sampled_from(list("ab\u00e9\u4e2d0-")), max_size=20)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(ascii_or_not, min_size=2, max_size=30))
def test_view_comparisons_match_bytes(texts):
    col = P.id_column(pl.Series(texts, dtype=pl.Utf8))
    v8, v = col[2], col[3]
    n = len(texts)
    # the doc keys the qrels index computes (one group holding every text, in row order)
    hashes = P.index_qrels(np.zeros(0, dtype=np.int64), np.array([0], dtype=np.int64),
                           np.array([n], dtype=np.int64), col,
                           readonly(np.zeros(n, dtype=np.int64)))[0]
    for i, a in enumerate(texts):
        for j, b in enumerate(texts):
            want = (a.encode() > b.encode()) - (a.encode() < b.encode())
            got = K.text_cmp(v8, v, col[4], col[5], i, v8, v, col[4], col[5], j)
            assert got == want, (a, b)
            assert K.id_eq(col, i, col, j) == (a == b)
            if a == b:
                assert hashes[i] == hashes[j]


def test_run_heads_across_chunks():
    s = pl.concat([pl.Series(["q1", "q1"]), pl.Series(["q1", "q2"]), pl.Series(["q2"]),
                   pl.Series(["q10000000000000a", "q10000000000000a"]),
                   pl.Series(["q10000000000000a", "q1"])], rechunk=False)
    assert s.n_chunks() == 5
    assert P.run_heads(s).tolist() == [0, 3, 5, 8]
    assert P.run_heads(pl.Series([3, 3, 4, 3], dtype=pl.Int64)).tolist() == [0, 2, 3]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ids", ["short", "long", "int"])
def test_qrels_layouts_agree(seed, ids):
    """Qrels used in place (every query one run of rows, in any query order) and qrels
    whose queries are split across the file (indexed through a row order) give the same
    results; so do integer qrels met by a text run (re-indexed as text, where "10" sorts
    before "9": the query codes are mapped back)."""
    qrels, run = random_case(seed, n_queries=40, depth=30, int_ids=ids == "int")
    if ids == "long":
        qrels, run = _long_ids(qrels), _long_ids(run)
    rng = np.random.default_rng(seed)
    groups = qrels.partition_by("query_id", maintain_order=True)
    grouped = pl.concat([groups[i] for i in rng.permutation(len(groups))])  # in place
    split = grouped.sample(fraction=1.0, shuffle=True, seed=seed)  # queries split up
    assert P.prepare_qrels(grouped).q_row.size == 0
    assert P.prepare_qrels(split).q_row.size == split.height
    base = fasteval.evaluate(qrels, run, MEASURES).sort("query_id", "measure")
    for table in (grouped, _chunked(grouped, 4, seed), split):
        got = fasteval.evaluate(table, run, MEASURES).sort("query_id", "measure")
        assert got.equals(base)
    if ids == "int":  # integer qrels, text run: the qrels are re-indexed as text
        text_run = run.with_columns(pl.col("query_id").cast(pl.Utf8), pl.col("doc_id").cast(pl.Utf8))
        text_qrels = qrels.with_columns(pl.col("query_id").cast(pl.Utf8),
                                        pl.col("doc_id").cast(pl.Utf8))
        for complete in (False, True):
            want = fasteval.evaluate(text_qrels, text_run, MEASURES, complete=complete)
            want = want.sort("query_id", "measure")
            for table in (qrels, grouped, split):  # (results keep the qrels' integer ids)
                got = fasteval.evaluate(table, text_run, MEASURES, complete=complete)
                got = got.with_columns(pl.col("query_id").cast(pl.Utf8)).sort("query_id", "measure")
                assert got.equals(want)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ids", ["short", "long", "int"])
def test_parts_on_threads_equal_one_pass(seed, ids, monkeypatch):
    """Qrels indexing and whole-table ranking cut into many parts (run on threads) give
    the arrays of one pass over everything."""
    import numba

    qrels, run = random_case(seed, n_queries=80, depth=30, int_ids=ids == "int")
    if ids == "long":
        qrels, run = _long_ids(qrels), _long_ids(run)
    run = run.sample(fraction=1.0, shuffle=True, seed=seed)  # not grouped: the whole-table path
    qrels = qrels.sample(fraction=1.0, shuffle=True, seed=seed + 1)  # not grouped either
    monkeypatch.setattr(P.threads, "BLOCK_ROWS", 1 << 40)
    one = P.prepare_qrels(qrels)
    one_run = P.prepare_run(one, run)
    previous = numba.get_num_threads()
    monkeypatch.setattr(P.threads, "BLOCK_ROWS", 13)
    assert len(split_parts(np.cumsum(one.q_end - one.q_start), one.n_queries)) > 3
    try:
        for threads in (1, previous):
            numba.set_num_threads(threads)
            many = P.prepare_qrels(qrels)
            for name in ("q_hash", "q_rel", "q_row", "q_start", "q_end", "g_end"):
                np.testing.assert_array_equal(getattr(many, name), getattr(one, name))
            for g in range(one.n_queries):  # judged grades (the rest of the array is unused)
                a, b = one.q_start[g], one.g_end[g]
                np.testing.assert_array_equal(many.grades[a:b], one.grades[a:b])
            _same(P.prepare_run(many, run), one_run)
    finally:
        numba.set_num_threads(previous)


def test_scores_checked_once(tmp_path, monkeypatch):
    """A run read from a file is checked for NaN by the reader (file and line in the
    message); prepare_run skips its own check then, and only then."""
    qrels = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    bad = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"],
                        "score": [float("nan"), 1.0]})
    pq = P.prepare_qrels(qrels)
    with pytest.raises(InputError, match="row 0, column 'score'"):
        P.prepare_run(pq, bad)
    P.prepare_run(pq, bad, check_scores=False)  # trusted: no error, no look at the scores
    calls = []
    real = P.prepare_run

    def spy(*args, **kwargs):
        calls.append(kwargs.get("check_scores", True))
        return real(*args, **kwargs)

    import fasteval.evaluation as EV

    monkeypatch.setattr(EV, "prepare_run", spy)
    path = tmp_path / "run.parquet"
    bad.with_columns(pl.lit(0.5).alias("score")).write_parquet(path)
    cases = [(lambda: fasteval.evaluate(qrels, path, "map"), False),
             (lambda: fasteval.Evaluator(qrels, "map").evaluate(path), False),
             (lambda: fasteval.evaluate(qrels, {"r": str(path)}, "map"), False),
             (lambda: fasteval.evaluate(qrels, pl.read_parquet(path), "map"), True)]
    for call, checks in cases:
        calls.clear()
        assert call()["value"].to_list() == [0.5]  # a tie: "b" ranks first, then "a"
        assert calls == [checks]
