"""Old-Mac (CR-only) line endings, mixed endings, and null run ids in files."""

from __future__ import annotations

import gzip
import io

import polars as pl
import pytest

from fasteval.errors import InputError
from fasteval.io.readers import read_qrels, read_run, scan_qrels, scan_run

RUN_ROWS = [("q1", "d1", 2.0), ("q1", "d2", 1.0), ("q2", "d1", 1.5)]


def _trec_run(end: str) -> bytes:
    return "".join(f"{q} Q0 {d} {i + 1} {s} tag{end}" for i, (q, d, s) in enumerate(RUN_ROWS)).encode()


@pytest.mark.parametrize("end", ["\r", "\n", "\r\n"])
@pytest.mark.parametrize("gz", [False, True])
def test_trec_run_rows_survive_every_line_ending(tmp_path, end, gz):
    data = _trec_run(end)
    path = tmp_path / ("r.run.gz" if gz else "r.run")
    path.write_bytes(gzip.compress(data) if gz else data)
    assert read_run(path).select("query_id", "doc_id", "score").rows() == RUN_ROWS
    assert scan_run(path).select("query_id", "doc_id", "score").collect().rows() == RUN_ROWS
    assert read_run(io.BytesIO(data)).select("query_id", "doc_id", "score").rows() == RUN_ROWS


def test_cr_only_qrels_csv_and_jsonl(tmp_path):
    q = tmp_path / "q.qrels"
    q.write_bytes(b"q1 0 d1 1\rq1 0 d2 0\rq2 0 d1 2\r")
    assert read_qrels(q).rows() == [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d1", 2)]
    assert scan_qrels(q).collect().rows() == [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d1", 2)]
    c = tmp_path / "r.csv"
    c.write_bytes(b"query_id,doc_id,score,extra\rq1,d1,2.0,x\rq1,d2,1.0,y\rq2,d1,1.5,z")
    assert read_run(c).rows() == RUN_ROWS
    assert scan_run(c).collect().rows() == RUN_ROWS
    j = tmp_path / "r.jsonl"
    j.write_bytes(b"".join(
        b'{"query_id": "%s", "doc_id": "%s", "score": %s}\r' % (q.encode(), d.encode(), str(s).encode())
        for q, d, s in RUN_ROWS))
    assert read_run(j).rows() == RUN_ROWS


def test_mixed_endings_that_would_merge_rows_are_refused_with_the_line(tmp_path):
    p = tmp_path / "r.run"
    # an old-Mac file appended to a Unix one: line 2 holds two rows
    p.write_bytes(b"q1 Q0 d1 1 2.0 tag\nq1 Q0 d2 2 1.0 tag\rq2 Q0 d1 1 1.5 tag\r")
    with pytest.raises(InputError, match="carriage return") as exc:
        read_run(p)
    assert exc.value.line == 2 and "\n" not in str(exc.value)
    with pytest.raises(InputError, match="carriage return"):
        scan_run(p)
    c = tmp_path / "r.csv"
    c.write_bytes(b"query_id,doc_id,score\nq1,d1,2.0\rq1,d2,1.0\n")
    with pytest.raises(InputError) as exc:
        read_run(c)
    assert exc.value.line == 2


def test_cr_as_whitespace_stays_whitespace():
    # trec_eval splits fields on isspace(): a CR beside other whitespace is padding
    data = b"\rq1 Q0 d1 1 2.0 tag \r\r\nq1 Q0 d2 2 1.0 tag\r\n"
    rows = read_run(io.BytesIO(data)).select("query_id", "doc_id").rows()
    assert rows == [("q1", "d1"), ("q1", "d2")]


def test_null_run_id_in_a_file_is_refused(tmp_path):
    p = tmp_path / "r.parquet"
    pl.DataFrame({"run_id": ["a", None, "a"], "query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"],
                  "score": [1.0, 0.5, 0.2]}).write_parquet(p)
    with pytest.raises(InputError) as exc:
        read_run(p)
    assert (exc.value.source, exc.value.row, exc.value.column) == (str(p), 1, "run_id")


def test_null_ids_in_a_parquet_run_name_file_row_and_column(tmp_path):
    p = tmp_path / "r.parquet"
    pl.DataFrame({"query_id": ["1", None, None, "2"], "doc_id": ["a", "b", "c", "d"],
                  "score": [1.0, 0.5, 0.2, 0.1]}).write_parquet(p)
    with pytest.raises(InputError) as exc:
        read_run(p)
    assert (exc.value.source, exc.value.row, exc.value.column) == (str(p), 1, "query_id")
