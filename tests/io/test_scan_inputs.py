"""scan_run / scan_qrels on inputs the lazy paths must treat as read_* does: FIFOs, and
files starting with a UTF-8 byte order mark."""

from __future__ import annotations

import os
import threading

import polars as pl
import pytest

from fasteval.errors import InputError
from fasteval.io.readers import read_qrels, read_run, scan_qrels, scan_run

BOM = b"\xef\xbb\xbf"


def test_scan_run_of_a_fifo_is_a_lazy_frame(tmp_path) -> None:
    path = str(tmp_path / "run.trec")
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as fh:
            fh.write(b"q1 Q0 d1 1 2.5 a\nq1 Q0 d2 2 1.5 a\n")

    t = threading.Thread(target=write, daemon=True)
    t.start()
    lf = scan_run(path)
    t.join()
    assert isinstance(lf, pl.LazyFrame)
    assert lf.collect().select("query_id", "doc_id", "score").rows() == [("q1", "d1", 2.5), ("q1", "d2", 1.5)]


def test_scan_trec_drops_a_byte_order_mark(tmp_path) -> None:
    run = tmp_path / "r.trec"
    run.write_bytes(BOM + b"q1 Q0 d1 1 2.5 a\nq2 Q0 d2 1 1.5 a\n")
    qrels = tmp_path / "q.qrels"
    qrels.write_bytes(BOM + b"q1 0 d1 1\n")
    assert scan_run(run).collect().get_column("query_id").to_list() == ["q1", "q2"]
    assert scan_run(run).collect().equals(read_run(run))
    assert scan_qrels(qrels).collect().rows() == [("q1", "d1", 1)] == read_qrels(qrels).rows()


def test_scan_json_lines_with_a_byte_order_mark(tmp_path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_bytes(BOM + b'{"query_id": "q1", "doc_id": "d1", "score": 1.5}\n')
    assert scan_run(p).collect().rows() == [("q1", "d1", 1.5)]


def test_scan_refuses_fractional_grades_and_ranks_that_a_cast_would_truncate(tmp_path) -> None:
    csv = tmp_path / "q.csv"
    csv.write_text("query_id,doc_id,relevance\nq,a,2.0\nq,b,1.5\n")  # grades read as text
    with pytest.raises(InputError, match="relevance must be an integer, got '1.5'"):
        scan_qrels(csv).collect()
    with pytest.raises(InputError, match="relevance must be an integer, got '1.5'"):
        read_qrels(csv)
    run = tmp_path / "r.parquet"
    pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [2.0, 1.0],
                  "rank": [1.0, 2.5]}).write_parquet(run)
    with pytest.raises(InputError, match="rank must be an integer, got 2.5"):
        scan_run(run).collect()
    # whole numbers stored as floats are integers, lazily as eagerly
    whole = tmp_path / "w.csv"
    whole.write_text("query_id,doc_id,relevance\nq,a,2.0\nq,b,-1.0\n")
    assert scan_qrels(whole).collect().rows() == [("q", "a", 2), ("q", "b", -1)] == read_qrels(whole).rows()
