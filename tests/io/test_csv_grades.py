"""CSV/TSV grades are text and are read by the rule of every text format: an integer, or
one written with a zero fraction (``2.0``); ``1e1`` (trec_eval's ``atol`` reads 1, a float
reading 10), ``2e0`` and ``true``/``false`` are refused with their line, where the types
polars inferred made them 10, 2, 1 and 0."""

from __future__ import annotations

import pytest

from fasteval import read_qrels, scan_qrels
from fasteval.errors import InputError


@pytest.mark.parametrize("bad", ["1e1", "2e0", "true", "FALSE", "1.5", "0x1"])
@pytest.mark.parametrize("sep", [",", "\t"])
def test_grades_that_are_no_integer_are_refused(tmp_path, bad, sep) -> None:
    p = tmp_path / ("q.csv" if sep == "," else "q.tsv")
    p.write_text(sep.join(["qid", "docno", "rel"]) + "\n" + f"q1{sep}d1{sep}1\nq1{sep}d2{sep}{bad}\n")
    with pytest.raises(InputError) as exc:
        read_qrels(p)
    assert (exc.value.line, exc.value.column) == (3, "relevance")
    assert str(exc.value).endswith(f"relevance must be an integer, got {bad!r}")
    with pytest.raises(InputError, match=f"relevance must be an integer, got {bad!r}"):
        scan_qrels(p).collect()


def test_whole_numbers_and_signs_are_read(tmp_path) -> None:
    p = tmp_path / "q.csv"
    p.write_text("qid,docno,rel\nq1,d1,2.0\nq1,d2,+1\nq1,d3,-1\nq1,d4,3.\nq1,d5,007\n")
    expected = [("q1", "d1", 2), ("q1", "d2", 1), ("q1", "d3", -1), ("q1", "d4", 3), ("q1", "d5", 7)]
    assert read_qrels(p).rows() == expected
    assert scan_qrels(p).collect().rows() == expected


@pytest.mark.parametrize(("name", "text", "line", "sep"), [
    ("q.csv", 'qid,docno,rel\nq1,d,1\n"q1"x,d,1\n', 3, ","),
    ("q.csv", 'qid,docno,rel\n"q1" ,d,1\n', 2, ","),
    ("q.tsv", 'qid\tdocno\trel\nq1\t"d"1\t1\n', 2, "\\t"),
])
def test_text_after_a_closing_quote_is_named_by_its_line(tmp_path, name, text, line, sep) -> None:
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(InputError) as exc:  # polars' message named neither line nor record
        read_qrels(p)
    assert exc.value.line == line
    assert f"broken quoting (expected {sep} after a closing quote)" in str(exc.value)
