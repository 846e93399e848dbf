"""Subtopic qrels files meet the text checks of read_qrels: a UTF-8 byte order mark is
dropped (it stayed in the first query id, which then matched no run), and UTF-16,
compressed or NUL-holding files are named as such."""

from __future__ import annotations

import bz2
import io

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
