"""Inputs that can be read only once (FIFOs, ``<(cmd)``): the readers read them whole
before sniffing their format, so every command that takes files (compare, sas, judge,
prefs) reads them like regular files."""

from __future__ import annotations

import io
import threading

import polars as pl
import pytest

import fasteval
from fasteval.cli import main
from fasteval.prefs import read_prefs
from tests._data import fifo_feeding

QRELS = b"q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n"
RUN_A = b"q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d3 1 0.5 a\n"
RUN_B = b"q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\nq2 Q0 d4 1 0.5 b\n"


def _fifo(tmp_path, name: str, content: bytes) -> tuple[str, threading.Thread]:
    return fifo_feeding(tmp_path / name, content)


@pytest.mark.parametrize("name", ["qrels", "qrels.txt"])  # format sniffed, or from the name
def test_read_qrels_from_fifo(tmp_path, name):
    path, t = _fifo(tmp_path, name, QRELS)
    got = fasteval.read_qrels(path)
    t.join()
    assert got.rows() == [("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d3", 1)]


def test_read_run_parquet_from_fifo(tmp_path):
    buf = io.BytesIO()
    pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.5]}).write_parquet(buf)
    path, t = _fifo(tmp_path, "run", buf.getvalue())
    got = fasteval.read_run(path)
    t.join()
    assert got.select("query_id", "doc_id", "score").rows() == [("q1", "d1", 1.5)]


def test_compare_reads_fifos(tmp_path, capsys):
    q, tq = _fifo(tmp_path, "qrels", QRELS)
    a, ta = _fifo(tmp_path, "a", RUN_A)
    b, tb = _fifo(tmp_path, "b", RUN_B)
    status = main(["compare", q, a, b, "-m", "map", "--format", "csv", "--test", "t"])
    for t in (tq, ta, tb):
        t.join()
    out = capsys.readouterr().out
    assert status == 0
    # map: a = (1 + 1) / 2 = 1.0; b = (0.5 + 0) / 2 = 0.25
    rows = pl.read_csv(io.StringIO(out))
    assert rows.select("run_id", "versus", "n_queries", "mean_run", "mean_versus").rows() == [
        ("a", "b", 2, 1.0, 0.25)]


@pytest.mark.parametrize("default", ["csv", None])
def test_table_files_of_sas_and_judge_from_fifo(tmp_path, default):
    from fasteval.io.files import read_table_file

    path, t = _fifo(tmp_path, "pairs.csv", b"prediction,gold\nParis,paris\n")
    got = read_table_file(path, text=True, default=default)
    t.join()
    assert got.rows() == [("Paris", "paris")]


def test_table_file_unknown_suffix_refused_without_default(tmp_path):
    from fasteval.errors import InputError
    from fasteval.io.files import read_table_file

    (tmp_path / "x.xlsx").write_bytes(b"junk")
    with pytest.raises(InputError, match="unknown table format '.xlsx'"):
        read_table_file(str(tmp_path / "x.xlsx"), default=None)


def test_prefs_judgments_from_fifo(tmp_path, capsys):
    """The prefs readers read a file once: a FIFO is not opened twice (which would wait
    for a second writer) and its first bytes are not lost to a gzip check."""
    j, tj = _fifo(tmp_path, "prefs", b"q1 g s d1 2\nq1 g s d2 0\n")
    q, tq = _fifo(tmp_path, "qrels", QRELS)
    r, tr = _fifo(tmp_path, "run", RUN_A)
    assert read_prefs(j).rows() == [("q1", "g", "s", "d1", 2.0),
                                                   ("q1", "g", "s", "d2", 0.0)]
    assert main(["trec-eval", "-R", "qrels_prefs", "-m", "prefs_simp", q, r]) == 0
    for t in (tj, tq, tr):
        t.join()
    # q1: d1 (2) above d2 (0), fulfilled; q2 has one level: no preference (0)
    assert capsys.readouterr().out == "prefs_simp            \tall\t0.5000\n"


@pytest.mark.parametrize(("name", "body"), [
    ("subtopics", b"1 1 d1 1\n1 2 d2 0\n"),
    ("subtopics.txt", b"1 1 d1 1\n1 2 d2 0\n"),
    ("subtopics.csv", b"query_id,subtopic,doc_id,relevance\n1,1,d1,1\n1,2,d2,0\n"),
])
def test_subtopic_qrels_from_fifo(tmp_path, name, body):
    """read_subtopic_qrels read a FIFO's first bytes to sniff it, then opened it again
    and waited for a second writer."""
    from fasteval.io.subtopics import read_subtopic_qrels

    path, t = _fifo(tmp_path, name, body)
    got = read_subtopic_qrels(path)
    t.join()
    assert got.rows() == [("1", "1", "d1", 1), ("1", "2", "d2", 0)]


def test_trec_eval_qrels_jg_from_fifo(tmp_path, capsys):
    """The judgment-group reader of ``trec-eval -R qrels_jg`` read a FIFO's first bytes
    to look for gzip, then opened it again: it found nothing (or waited for a writer)."""
    q, tq = _fifo(tmp_path, "jg", b"q1 0 d1 1\nq1 1 d1 0\nq2 0 d3 1\n")
    r = tmp_path / "run"
    r.write_bytes(RUN_A)
    status: list[int] = []
    worker = threading.Thread(target=lambda: status.append(
        main(["trec-eval", "-q", "-R", "qrels_jg", "-m", "map_avgjg", q, str(r)])), daemon=True)
    worker.start()
    worker.join(120)
    tq.join(1)
    assert not worker.is_alive() and status == [0]
    # q1: AP 1 in group 0, 0 (no relevant document) in group 1, averaged; q2: 1
    assert capsys.readouterr().out == ("map_avgjg             \tq1\t0.5000\n"
                                       "map_avgjg             \tq2\t1.0000\n"
                                       "map_avgjg             \tall\t0.7500\n")
