"""A JSON document or JSON Lines opened by a UTF-8 byte order mark is recognised as JSON
when the format comes from the first bytes (standard input, a FIFO, an unknown suffix),
where the mark made it TREC text (a field-count error quoting the whole record)."""

from __future__ import annotations

import io

import pytest

import fasteval

BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("body", [
    b'{"qid": "q1", "docno": "d1", "rel": 1}\n{"qid": "q1", "docno": "d2", "rel": 0}\n',
    b'[{"qid": "q1", "docno": "d1", "rel": 1}, {"qid": "q1", "docno": "d2", "rel": 0}]',
    b'{"q1": {"d1": 1, "d2": 0}}',
])
def test_a_marked_json_input_is_sniffed_as_json(tmp_path, body) -> None:
    expected = [("q1", "d1", 1), ("q1", "d2", 0)]
    assert fasteval.read_qrels(io.BytesIO(BOM + body)).rows() == expected
    path = tmp_path / "qrels.data"
    path.write_bytes(BOM + body)
    assert fasteval.read_qrels(path).rows() == expected
    assert fasteval.scan_qrels(path).collect().rows() == expected
