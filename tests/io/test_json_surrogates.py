"""A lone UTF-16 surrogate escape in JSON text (``"q \\ud83d"``) is no character: every
JSON and JSON Lines reader refuses it, naming the file, the line and the key, where
polars' own reader turned it into ``"\\x00"`` (an id silently changed, and merged with a
real ``"\\u0000"``)."""

from __future__ import annotations

import gzip
import io
import re

import pytest

import fasteval
from fasteval.errors import InputError
from fasteval.io.files import read_table_file
from fasteval.io.subtopics import read_subtopic_qrels

HIGH = '{"query_id": "q \\ud83d", "doc_id": "d1", "relevance": 1}\n'
NUL = '{"query_id": "q \\u0000", "doc_id": "d1", "relevance": 1}\n'
LOW = '{"query_id": "q1", "doc_id": "d \\udc00x", "relevance": 1}\n'


def _expect(exc: pytest.ExceptionInfo, escape: str, line: int, column: str | None) -> None:
    err = exc.value
    assert err.line == line and err.column == column
    assert escape in str(err) and "surrogate" in str(err)


@pytest.mark.parametrize("read", [fasteval.read_qrels, lambda p: fasteval.scan_qrels(p).collect()])
def test_jsonl_lone_high_surrogate_is_refused_not_read_as_nul(tmp_path, read) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(NUL + HIGH)  # polars read both as 'q \x00': one query
    with pytest.raises(InputError) as exc:
        read(path)
    _expect(exc, "\\ud83d", 2, "query_id")
    assert str(exc.value).startswith(f"{path}, line 2, column 'query_id': ")


def test_jsonl_lone_low_surrogate_names_its_key(tmp_path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"query_id": "q1", "doc_id": "d0", "relevance": 0}\n\n' + LOW)
    for read in (fasteval.read_qrels, lambda p: fasteval.scan_qrels(p).collect()):
        with pytest.raises(InputError) as exc:
            read(path)
        _expect(exc, "\\udc00", 3, "doc_id")


def test_gzip_stream_and_run_paths(tmp_path) -> None:
    gz = tmp_path / "r.jsonl.gz"
    gz.write_bytes(gzip.compress(b'{"qid": "q \\ud83d", "docno": "d", "score": 1.5}\n'))
    with pytest.raises(InputError) as exc:
        fasteval.read_run(gz)
    _expect(exc, "\\ud83d", 1, "qid")
    with pytest.raises(InputError) as exc:
        fasteval.read_qrels(io.BytesIO((NUL + HIGH).encode()), format="jsonl")
    _expect(exc, "\\ud83d", 2, "query_id")


@pytest.mark.parametrize("text", [
    '[{"query_id": "q1", "doc_id": "d", "relevance": 1},\n {"query_id": "q \\ud83d", "doc_id": "d", "relevance": 1}]',
    '{"q1": {"d": 1},\n "q \\ud83d": {"d": 1}}',
    '{"q1": {"d": 1},\n "q2": {"d \\ud83d": 1}}',
])
def test_json_documents_are_refused_with_the_line(tmp_path, text) -> None:
    path = tmp_path / "q.json"
    path.write_text(text)
    with pytest.raises(InputError) as exc:  # was a UnicodeEncodeError traceback (dict form)
        fasteval.read_qrels(path)
    _expect(exc, "\\ud83d", 2, None)


def test_valid_pairs_escaped_backslashes_and_nul_keep_their_text(tmp_path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"query_id": "q \\ud83d\\ude00", "doc_id": "a\\\\ud83d", "relevance": 1}\n'
        '{"query_id": "q \\u0000", "doc_id": "\\\\\\ud83d\\udE00", "relevance": 2}\n'
    )
    expected = [("q \U0001f600", "a\\ud83d", 1), ("q \x00", "\\\U0001f600", 2)]
    assert fasteval.read_qrels(path).rows() == expected
    assert fasteval.scan_qrels(path).collect().rows() == expected
    doc = tmp_path / "q.json"
    doc.write_text('{"q \\ud83d\\ude00": {"a\\\\udc00": 1}}')
    assert fasteval.read_qrels(doc).rows() == [("q \U0001f600", "a\\udc00", 1)]


def test_table_files_and_subtopic_qrels(tmp_path) -> None:
    table = tmp_path / "t.jsonl"
    table.write_text('{"question": "a"}\n{"question": "b \\ud83d"}\n')
    with pytest.raises(InputError) as exc:
        read_table_file(str(table))
    _expect(exc, "\\ud83d", 2, "question")
    sub = tmp_path / "s.jsonl"
    sub.write_text('{"query_id": "q", "subtopic": "1", "doc_id": "d \\ud83d", "relevance": 1}\n')
    with pytest.raises(InputError) as exc:
        read_subtopic_qrels(sub)
    _expect(exc, "\\ud83d", 1, "doc_id")


def test_in_memory_dicts() -> None:
    with pytest.raises(InputError, match=re.escape("query_id 'q \\ud83d' holds a lone UTF-16 surrogate")):
        fasteval.read_qrels({"q \ud83d": {"d": 1}})
    # keys of mixed types are read as text: 1 and "1" would be one id
    with pytest.raises(InputError, match="the query_ids 1 and '1' are both read as the text id '1'"):
        fasteval.read_qrels({1: {"a": 1}, "1": {"b": 0}})
    with pytest.raises(InputError, match="the doc_ids 7 and '7' are both read as the text id '7'"):
        fasteval.read_run({"q": {7: 1.0, "7": 0.5}}, duplicates="keep_best")
    assert fasteval.read_run({"q": {7: 1.0}, "r": {"7": 0.5}}).rows() == [("q", "7", 1.0), ("r", "7", 0.5)]


def test_compare_results_files(tmp_path) -> None:
    from fasteval.compare._data import _read_file

    path = tmp_path / "res.jsonl"
    path.write_text('{"run_id": "a", "query_id": "q \\ud83d", "measure": "map", "value": 0.5}\n')
    with pytest.raises(InputError) as exc:
        _read_file(path)
    _expect(exc, "\\ud83d", 1, "query_id")


@pytest.mark.parametrize("text", ["", "\n  \n"])
def test_scan_of_an_empty_jsonl_file_says_so(tmp_path, text) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(text)
    for read in (fasteval.read_qrels, lambda p: fasteval.scan_qrels(p).collect()):
        with pytest.raises(InputError, match="the file is empty \\(no JSON records\\)$"):
            read(path)


@pytest.mark.parametrize("name", ["q.json", "q.jsonl"])
def test_an_encoded_surrogate_is_no_utf8_text(tmp_path, name) -> None:
    # Python's json decodes the bytes of a surrogate (b"\xed\xa0\xbd") into one
    path = tmp_path / name
    record = b'{"query_id": "q1", "doc_id": "d\xed\xa0\xbd", "relevance": 1}'
    path.write_bytes(b"[\n" + record + b"\n]" if name.endswith(".json") else b"\n" + record + b"\n")
    with pytest.raises(InputError, match="not valid UTF-8 text") as exc:
        fasteval.read_qrels(path)
    assert exc.value.line == 2


@pytest.mark.parametrize(("text", "fmt", "line"), [
    ("q1 0 d1 1\nq1 0 d\ud83d 1\n", None, 2),
    ('{"query_id": "q1", "doc_id": "d", "relevance": 1}\n{"query_id": "q\ud83d", "doc_id": "d", "relevance": 1}\n', "jsonl", 2),
    ("query_id,doc_id,relevance\nq1,d,1\nq1,d\ud83d,1\n", "csv", 3),
])
def test_a_text_stream_holding_a_lone_surrogate_is_named(text, fmt, line) -> None:
    with pytest.raises(InputError, match="not valid UTF-8 text") as exc:  # was UnicodeEncodeError
        fasteval.read_qrels(io.StringIO(text), format=fmt)
    assert exc.value.line == line
