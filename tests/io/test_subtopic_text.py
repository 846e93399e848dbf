"""Subtopic qrels files meet the text checks of read_qrels: a UTF-8 byte order mark is
dropped (it stayed in the first query id, which then matched no run), and UTF-16,
compressed or NUL-holding files are named as such."""

from __future__ import annotations

import bz2
import io
import re

import pytest

from fasteval.errors import InputError
from fasteval.io.subtopics import read_subtopic_qrels

BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(("name", "body"), [
    ("s.txt", b"1 a d1 1\n2 b d2 0\n"),
    ("s.jsonl", b'{"query_id": "1", "subtopic": "a", "doc_id": "d1", "relevance": 1}\n'
                b'{"query_id": "2", "subtopic": "b", "doc_id": "d2", "relevance": 0}\n'),
    ("s.csv", b"query_id,subtopic,doc_id,relevance\n1,a,d1,1\n2,b,d2,0\n"),
])
def test_a_byte_order_mark_is_dropped(tmp_path, name, body) -> None:
    p = tmp_path / name
    p.write_bytes(BOM + body)
    assert read_subtopic_qrels(p).rows() == [("1", "a", "d1", 1), ("2", "b", "d2", 0)]


@pytest.mark.parametrize(("body", "fragment"), [
    (bz2.compress(b"1 a d1 1\n"), "the file is bzip2-compressed"),
    ("1 a d1 1\n".encode("utf-16"), "the file is UTF-16 text"),
    (b"1 a d1 1\n1 a d\x002 1\n", "line 2: a NUL byte"),
])
def test_text_that_is_no_utf8_is_named(body, fragment) -> None:
    with pytest.raises(InputError, match=fragment):
        read_subtopic_qrels(io.BytesIO(body))


@pytest.mark.parametrize(("name", "body", "message"), [
    ("s.csv", "query_id,subtopic,doc_id,relevance\nq1,1,a,1\n\"q\n1\",1,,1\n",
     "s.csv, line 3, column 'doc_id': doc_id is null (ids must be present)"),
    ("s.tsv", "query_id\tsubtopic\tdoc_id\trelevance\nq1\t1\ta\t1\nq1\t1\ta\t2\n",
     "s.tsv, line 3: duplicate (query_id, subtopic, doc_id) triple ('q1', '1', 'a')"),
])
def test_csv_errors_name_the_line(tmp_path, name, body, message) -> None:
    # as read_qrels names them (the 0-based data row was given: 'row 1' for line 3)
    p = tmp_path / name
    p.write_text(body)
    with pytest.raises(InputError) as info:
        read_subtopic_qrels(p)
    assert str(info.value).startswith(f"{tmp_path}/{message}")


def test_text_fields_split_on_ascii_whitespace_only() -> None:
    # as read_qrels (trec_eval's isspace): a no-break space is part of a doc id
    got = read_subtopic_qrels(io.BytesIO("1 a d\u00a0x 1\n2 b e 0\n".encode()))
    assert got.rows() == [("1", "a", "d\u00a0x", 1), ("2", "b", "e", 0)]


@pytest.mark.parametrize(("name", "body", "message"), [
    ("s.csv", "query_id,subtopic,doc_id,relevance\nq1,1,a,1\nq1,2,b,1,7\n",
     "s.csv, line 3: 5 fields where the header has 4; expected one field per header column"),
    ("s.tsv", "query_id\tsubtopic\tdoc_id\trelevance\trelevance\nq1\t1\ta\t1\t0\n",
     "s.tsv, column 'relevance': the header has more than one column named 'relevance'"),
])
def test_csv_table_shape_errors_as_read_qrels(tmp_path, name, body, message) -> None:
    # a longer record was 'cannot read as csv (found more fields ...)' without its line; a
    # repeated header name read the first such column without a word
    p = tmp_path / name
    p.write_text(body)
    with pytest.raises(InputError) as info:
        read_subtopic_qrels(p)
    assert str(info.value).startswith(f"{tmp_path}/{message}")


@pytest.mark.parametrize("end", ["\n\n\n", "\r\n\r\n"])
def test_csv_trailing_empty_lines_are_no_rows(tmp_path, end) -> None:
    # as read_qrels: they were rows of nulls ('line 4, column query_id: query_id is null')
    p = tmp_path / "s.csv"
    p.write_bytes(("query_id,subtopic,doc_id,relevance\nq1,1,a,1\nq1,2,b,0" + end).encode())
    assert read_subtopic_qrels(p).rows() == [("q1", "1", "a", 1), ("q1", "2", "b", 0)]


@pytest.mark.parametrize(("text", "line", "message"), [
    # polars keeps the first of a repeated key: d, where the record also says e
    ('{"query_id": "q", "subtopic": "1", "doc_id": "d", "doc_id": "e", "relevance": 1}\n', 1,
     "the record repeats the key 'doc_id'"),
    # polars reads an object among text as its JSON text: the id '{"a": 1}'
    ('{"query_id": "q", "subtopic": "1", "doc_id": "d", "relevance": 1}\n\n'
     '{"query_id": {"a": 1}, "subtopic": "1", "doc_id": "e", "relevance": 0}\n', 3,
     "query_id is an object where other records hold a number or text"),
    ('{"query_id": "q", "subtopic": "1", "doc_id": "d", "relevance": 1}\n\n'
     '{"query_id": "q", "subtopic": "1", "doc_id": "e", "relevance": 1.5}\n', 3,
     "relevance must be an integer, got 1.5"),
])
def test_jsonl_subtopics_are_checked_as_read_qrels_checks_them(tmp_path, text, line, message) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(text)
    with pytest.raises(InputError, match=re.escape(message)) as exc:
        read_subtopic_qrels(p)
    assert exc.value.line == line
