"""Files whose records do not fit their own shape: a CSV row with more fields than the
header, a JSON object that repeats a key. Each is refused (or, for repeated pairs, left to
the duplicate policy) with the line or row, never read as something else."""

from __future__ import annotations

import gzip
import subprocess
import sys

import pytest

from fasteval.errors import DataWarning, InputError
from fasteval.io.readers import read_qrels, read_run, scan_qrels, scan_run


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


@pytest.mark.parametrize("reader, name, data, line, found, header", [
    (read_run, "r.csv", b"query_id,doc_id,score\n1,a,1\n1,b\n", 3, "2 fields", "query_id, doc_id, score"),
    (read_run, "r.csv", b'query_id,doc_id,score\n1,"a\nb",1\n1\n', 4, "1 field", "query_id, doc_id, score"),
    (read_run, "r.tsv", b"qid\tdocno\tscore\n1\ta\t1\n1\tb\n", 3, "2 fields", "qid, docno, score"),
    (read_qrels, "q.csv", b"query_id,doc_id,relevance\n1,a\n", 2, "2 fields", "query_id, doc_id, relevance"),
])
def test_a_csv_row_with_fewer_fields_than_the_header_names_its_line(tmp_path, reader, name, data, line,
                                                                   found, header):
    # polars reads the fields a short line lacks as nulls: the message says the line is short
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as exc:
        reader(path)
    assert (exc.value.source, exc.value.line) == (str(path), line)
    assert exc.value.message == (f"{found} where the header has 3 ({header}); expected one field "
                                 "per header column")


def test_a_short_row_that_has_every_column_read_is_kept(tmp_path):
    # a trailing column that is not read may be left out of a line
    path = tmp_path / "r.csv"
    path.write_bytes(b"query_id,doc_id,score,note\n1,a,1,x\n1,b,2\n\n")
    assert read_run(path).select("query_id", "doc_id", "score").rows() == [("1", "a", 1.0), ("1", "b", 2.0)]


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


_MERGED = [  # a quote opened in a field and closed lines later: lines merged into one row
    ("r.tsv", "run", b'query_id\tdoc_id\tscore\nq1\t"d1\t1.0\nq1\td2"\t0.5\nq2\td3\t0.3\n', 2, "doc_id"),
    ("r.csv", "run", b'query_id,doc_id,score\nq1,d0,2\n"q1,d1,1.0\nq1",d2,0.5\n', 3, "query_id"),
    ("r.csv", "run", b'query_id,doc_id,score,tag\nq1,d1,1.0,"t\nq1,d2,0.5,t"\nq2,d3,0.3,t\n', 2, "tag"),
    ("q.csv", "qrels", b'query_id,doc_id,relevance\nq1,d0,1\nq1,"d1,1\nq1,d2",0\n', 3, "doc_id"),
]


@pytest.mark.parametrize("name, kind, data, line, column", _MERGED)
def test_a_quoted_field_spanning_lines_is_refused_at_its_first_line(tmp_path, name, kind, data, line,
                                                                    column):
    path = tmp_path / name
    path.write_bytes(data)
    reader = read_run if kind == "run" else read_qrels
    with pytest.raises(InputError, match="holds a line break") as exc:
        reader(path)
    assert (exc.value.line, exc.value.column) == (line, column)
    scan = scan_run if kind == "run" else scan_qrels
    with pytest.raises(InputError, match=f"{column} holds a line break"):
        scan(path).collect()


def test_quoted_fields_on_one_line_are_read_as_csv_quotes_them(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b'query_id,doc_id,score\nq1,"d,1",1.0\nq1,"d""2",0.5\n"q 2",d3,0.25\n')
    assert read_run(path).rows() == [("q1", "d,1", 1.0), ("q1", 'd"2', 0.5), ("q 2", "d3", 0.25)]
    assert scan_run(path).collect().rows() == read_run(path).rows()


def test_the_cli_refuses_a_merged_row_in_one_line(tmp_path):
    run, qrels = tmp_path / "r.tsv", tmp_path / "q.tsv"
    run.write_bytes(_MERGED[0][2])
    qrels.write_bytes(b"query_id\tdoc_id\trelevance\nq1\td1\t1\nq2\td3\t1\n")
    proc = subprocess.run([sys.executable, "-m", "fasteval", "eval", str(qrels), str(run), "-m", "num_ret"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"fasteval: error: {run}, line 2, column 'doc_id': doc_id holds a line break: a quote (\") "
        "opening the field is closed on a later line, which merges lines into one row (a quote "
        'inside a field is written twice within quotes: "a""b")']


@pytest.mark.parametrize("line2", [
    b'{"query_id": "q1", "doc_id": "d2", "score": 0.5, "doc_id": "d9"}',
    b'{"query_id": "q1", "score": 0.5, "doc_id": "d2", "score": 2}',
    b'{"query_id": "q1", "doc_id": "d2", "score": 0.5, "query_id": "q1"}',  # even the same value
])
def test_a_json_lines_record_repeating_a_key_names_its_line(tmp_path, line2):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"query_id": "q1", "doc_id": "doc_id", "score": 1}\n' + line2 + b"\n\n"
                     b'{"query_id": "q2", "doc_id": "d3", "score": 0.25}\n')
    with pytest.raises(InputError, match="the record repeats the key '(doc_id|score|query_id)'") as exc:
        read_run(path)
    assert exc.value.line == 2


def test_a_json_lines_value_spelling_a_key_is_no_repeat(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"query_id": "doc_id", "doc_id": "relevance", "relevance": 1, "note": "query_id"}\n'
                     b'{"query_id": "q2", "doc_id": "d1", "relevance": 0, "x": {"doc_id": 1}}\n')
    assert read_qrels(path).rows() == [("doc_id", "relevance", 1), ("q2", "d1", 0)]


@pytest.mark.parametrize("name, data, where, column, message", [
    ("r.jsonl", b'{"query_id": "q", "doc_id": "a", "score": 1}\n\n{"query_id": "q", "doc_id": "b", "score": [2]}\n',
     {"line": 3}, "score", "score is an array where other records hold a number or text"),
    # polars would read the object as the id '{"id": "a"}', and true as the score 1.0
    ("r.jsonl", b'{"query_id": "q", "doc_id": {"id": "a"}, "score": 1}\n{"query_id": "q", "doc_id": "b", "score": 2}\n',
     {"line": 2}, "doc_id", "doc_id is a number or text where other records hold an object"),
    ("r.jsonl", b'{"query_id": "q", "doc_id": "a", "score": 1.5}\n{"query_id": "q", "doc_id": "b", "score": true}\n',
     {"line": 2}, "score", "score is true or false where other records hold a number or text"),
    ("r.json", b'[{"query_id": "q", "doc_id": "a", "score": 1}, {"query_id": "q", "doc_id": "b", "score": {"v": 2}}]',
     {"row": 1}, "score", "score is an object where other records hold a number or text"),
    ("r.json", b'[{"query_id": "q", "doc_id": "a", "score": 1}, {"query_id": "q", "doc_id": "b", "score": false}]',
     {"row": 1}, "score", "score is true or false where other records hold a number or text"),
    ("r.json", b'{"q": {"a": 0.5, "b": true}}', {"row": 1}, "score",
     "score is true or false where other records hold a number or text"),
])
def test_a_json_value_of_another_kind_names_its_record_and_key(tmp_path, name, data, where, column, message):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as exc:
        read_run(path)
    assert (exc.value.line, exc.value.row, exc.value.column) == (where.get("line"), where.get("row"), column)
    assert exc.value.message == (f"{message}; expected one kind of value per key (numbers or text for "
                                 "the table's columns)")


def test_json_values_of_one_kind_are_read(tmp_path):
    # text among numbers is one kind (scores are numbers written in text); a whole column
    # of true/false is relevance 1/0; an id that opens like an object is text
    (tmp_path / "r.jsonl").write_bytes(b'{"query_id": "q", "doc_id": "{a}", "score": 1}\n'
                                       b'{"query_id": "q", "doc_id": "b", "score": "0.5"}\n')
    assert read_run(tmp_path / "r.jsonl").select("doc_id", "score").rows() == [("{a}", 1.0), ("b", 0.5)]
    (tmp_path / "q.jsonl").write_bytes(b'{"query_id": "q", "doc_id": "a", "relevance": true}\n'
                                       b'{"query_id": "q", "doc_id": "b", "relevance": false}\n')
    assert read_qrels(tmp_path / "q.jsonl").get_column("relevance").to_list() == [1, 0]


@pytest.mark.parametrize("name, data, where, kind", [
    ("r.jsonl", b'{"query_id": "q", "doc_id": "a", "score": 1}\n\n["q", "b", 2]\n', {"line": 3}, "an array"),
    ("r.json", b'[{"query_id": "q", "doc_id": "a", "score": 1}, 5]', {"row": 1}, "a number or text"),
])
def test_a_json_record_that_is_no_object_is_named(tmp_path, name, data, where, kind):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as exc:
        read_run(path)
    assert (exc.value.line, exc.value.row) == (where.get("line"), where.get("row"))
    assert exc.value.message == f"the record is {kind}; expected a JSON object {{column: value}}"


@pytest.mark.parametrize("name, data, line", [
    ("r.csv", b'query_id,doc_id,score\nq1,a,1\nq1,"b,2\nq1,c,3\n', 3),
    ("r.csv", b'query_id,doc_id,score\nq1,"a ""x""",1\nq1,b,2\nq1,"c,3\n', 4),
    ("r.tsv", b'query_id\tdoc_id\tscore\nq1\t"a\t1\n', 2),
])
def test_a_quoted_field_never_closed_names_its_line(tmp_path, name, data, line):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as exc:
        read_run(path)
    assert exc.value.line == line
    assert exc.value.message == ("a quoted field opened on this line is never closed; expected a "
                                 "closing '\"' (and '\"\"' for a quote inside the field)")


@pytest.mark.parametrize("data, line", [
    (b"query_id,doc_id,score\nq1,a,1\n\nq1,b,2\n", 3),
    (b"query_id,doc_id,score\r\nq1,a,1\r\nq1,b,2\r\n\r\nq1,c,3\r\n", 4),
    (b"query_id,doc_id,score\nq1,\"a\nb\",1\n,,\nq1,b,2\n", 4),  # after a field spanning lines
])
def test_a_blank_csv_line_inside_the_file_names_its_line(tmp_path, data, line):
    path = tmp_path / "r.csv"
    path.write_bytes(data)
    with pytest.raises(InputError) as exc:
        read_run(path)
    assert exc.value.line == line
    assert exc.value.message == ("no value in query_id, doc_id, score (a blank line, or empty fields "
                                 "only); expected a row (blank lines are skipped only at the end of "
                                 "the file)")


def test_blank_csv_lines_at_the_end_are_skipped(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"query_id,doc_id,score\r\nq1,a,1\r\nq1,b,2\r\n\r\n\r\n")
    assert read_run(path).select("doc_id", "score").rows() == [("a", 1.0), ("b", 2.0)]
