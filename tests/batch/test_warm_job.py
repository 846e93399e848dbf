"""The warm-up told what the job is: sizes known without reading, and every option's
kernels loaded without an error (a failing warm-up would only cost time, silently)."""

from __future__ import annotations

import gzip

import polars as pl
import pytest

from fasteval.batch.api import _warm_job
from fasteval.batch.discover import discover_all
from fasteval.batch.warm import Job, Slot, _run_job, rows_bounds


def test_rows_bounds(tmp_path):
    df = pl.DataFrame({"query_id": ["q"] * 7, "doc_id": list("abcdefg"), "relevance": [1] * 7})
    df.write_parquet(tmp_path / "q.parquet")
    assert rows_bounds(tmp_path / "q.parquet") == (7, 7)  # the footer's count
    text = tmp_path / "q.txt"
    text.write_text("".join(f"q 0 {d} 1\n" for d in "abcdefg"))
    lo, hi = rows_bounds(text)
    assert lo is None and hi >= 7 and hi == text.stat().st_size // 6 + 1
    gz = tmp_path / "q.txt.gz"
    gz.write_bytes(gzip.compress(text.read_bytes()))
    assert rows_bounds(gz) == (None, None)  # compressed: nothing known
    assert rows_bounds("-") == (None, None)
    assert rows_bounds(tmp_path / "missing.parquet") == (None, None)
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    assert rows_bounds(tmp_path / "bad.parquet") == (None, None)


def test_job_from_the_sources(tmp_path):
    qrels = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": [1, 0, 2]})
    qrels.write_parquet(tmp_path / "qrels.parquet")
    run = pl.DataFrame({"query_id": ["q"] * 5, "doc_id": list("abcde"), "score": [5.0, 4, 3, 2, 1]})
    run.write_parquet(tmp_path / "big.parquet")
    run.head(2).write_parquet(tmp_path / "small.parquet")
    (tmp_path / "run.txt").write_text("q Q0 a 1 1.0 r\n")
    sources = discover_all([str(tmp_path / "big.parquet"), str(tmp_path / "small.parquet")])
    job = _warm_job(str(tmp_path / "qrels.parquet"), ["map"], sources, {"tie_break": "input"})
    assert (job.qrels_rows, job.qrels_rows_at_least) == (3, 3)
    assert (job.run_rows, job.run_rows_at_least) == (5, 5)  # the largest run
    assert job.measures == ("map",) and job.options == {"tie_break": "input"}
    job = _warm_job(str(tmp_path / "qrels.parquet"), ["map"],
                    discover_all([str(tmp_path / "small.parquet"), str(tmp_path / "run.txt")]), {})
    assert job.run_rows_at_least == 2 and job.run_rows >= 2  # text: a bound from its size


@pytest.mark.parametrize("tie_break", ["trec", "rank", "input", "expected"])
@pytest.mark.parametrize("size", ["small", "large", "unknown"])
def test_every_job_warms_without_error(tie_break, size):
    from fasteval.kernels import ranking

    sizes = {"small": {"qrels_rows": 10, "run_rows": 10},
             "large": {"qrels_rows_at_least": 10**6, "run_rows_at_least": 10**6},
             "unknown": {}}[size]
    options = {"tie_break": tie_break, "max_docs": 5, "judged_only": True, "complete": True}
    measures = ("ndcg@10", "map", "P@5" if tie_break == "expected" else "bpref")
    _run_job(Job(measures=measures, options=options, **sizes))
    if size == "large" and tie_break != "expected":
        assert any(key[-1] for key in ranking._PASSES)  # a parallel pass loaded


def test_slot_hands_one_value_over():
    s = Slot()
    s.put(1)
    s.put(2)  # the first put counts
    assert s.get() == 1
