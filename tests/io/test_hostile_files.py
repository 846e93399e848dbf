"""Files whose records do not fit their own shape: a CSV row with more fields than the
header, a JSON object that repeats a key. Each is refused (or, for repeated pairs, left to
the duplicate policy) with the line or row, never read as something else."""

from __future__ import annotations

import gzip

import pytest

from fasteval.errors import DataWarning, InputError
from fasteval.io.readers import read_qrels, read_run


@pytest.mark.parametrize("name, data, line", [
    ("r.csv", b"query_id,doc_id,score\n1,a,1,9\n1,b,2\n", 2),
    ("r.csv", b'query_id,doc_id,score\n1,"a\nb",1\n1,b,2,3\n', 4),  # a quoted field spans lines
    ("r.tsv.gz", gzip.compress(b"query_id\tdoc_id\tscore\n1\ta\t1\n1\tb\t2\t3\n"), 3),
])
def test_a_csv_row_with_more_fields_than_the_header_names_its_line(tmp_path, name, data, line):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as exc:
        read_run(path)
    assert exc.value.line == line
    assert exc.value.message == ("4 fields where the header has 3; expected one field per header "
                                 "column")


def test_a_json_object_repeating_a_document_is_a_duplicate_pair(tmp_path):
    path = tmp_path / "q.json"
    path.write_text('{"q1": {"d1": 1, "d2": 0, "d1": 2}, "q2": {"d1": 1}}')
    with pytest.raises(InputError, match=r"duplicate \(query_id, doc_id\) pair \('q1', 'd1'\)") as exc:
        read_qrels(path)
    assert exc.value.row == 2
    with pytest.warns(DataWarning, match="dropped 1 duplicate"):
        kept = read_qrels(path, duplicates="keep_best")
    assert sorted(kept.rows()) == [("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d1", 1)]


def test_a_json_query_given_twice_keeps_both_parts(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"q1": {"d1": 1.5}, "q2": {"d1": 1.0}, "q1": {"d2": 0.5}}')
    assert sorted(read_run(path).rows()) == [("q1", "d1", 1.5), ("q1", "d2", 0.5), ("q2", "d1", 1.0)]


def test_a_json_record_repeating_a_key_is_refused(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('[{"query_id": "1", "doc_id": "a", "score": 1},'
                    ' {"query_id": "1", "doc_id": "b", "score": 1, "score": 2}]')
    with pytest.raises(InputError) as exc:
        read_run(path)
    assert str(exc.value) == f"{path}, row 1: the record repeats the key 'score'; expected each key once"
