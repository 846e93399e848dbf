"""JSON Lines and JSON records: a boolean under a key the table does not read is no mix of
kinds; under a read key it is refused with its line."""

from __future__ import annotations

import pytest

import fasteval
from fasteval.errors import InputError


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_boolean_in_an_unread_key_is_read_as_is(tmp_path, suffix):
    rows = ['{"query_id": "q1", "doc_id": "d1", "score": 2.0, "flag": true}',
            '{"query_id": "q1", "doc_id": "d2", "score": 1.0, "flag": false}']
    path = tmp_path / f"run{suffix}"
    path.write_text("\n".join(rows) + "\n" if suffix == ".jsonl" else "[" + ",".join(rows) + "]")
    run = fasteval.read_run(path)
    assert run.select("query_id", "doc_id", "score").rows() == [("q1", "d1", 2.0), ("q1", "d2", 1.0)]


@pytest.mark.parametrize(("suffix", "where"), [(".jsonl", "line 2"), (".json", "row 1")])
def test_boolean_among_scores_is_refused(tmp_path, suffix, where):
    rows = ['{"query_id": "q1", "doc_id": "d1", "score": 2.0, "flag": true}',
            '{"query_id": "q1", "doc_id": "d2", "score": true, "flag": false}']
    path = tmp_path / f"run{suffix}"
    path.write_text("\n".join(rows) + "\n" if suffix == ".jsonl" else "[" + ",".join(rows) + "]")
    with pytest.raises(InputError, match=rf"{where}, column 'score': score is true or false where "
                                         "other records hold a number or text"):
        fasteval.read_run(path)
