"""CSV and JSON Lines columns whose type polars infers from the first rows (10,000): a later
row that does not fit (a 0.5 after integer scores, a text id after integer ones) is read as
every row says, never refused as unparsable and never read as another value."""

from __future__ import annotations

import json

import polars as pl
import pytest

from fasteval.errors import InputError
from fasteval.io.readers import read_qrels, read_run, scan_qrels, scan_run

N = 10_001  # one row past the rows polars infers the types from


def _jsonl(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize("name", ["run.jsonl", "run.csv"])
def test_integer_scores_then_a_fraction(tmp_path, name) -> None:
    path = tmp_path / name
    rows = [{"query_id": "q", "doc_id": f"d{i}", "score": i} for i in range(N)]
    rows.append({"query_id": "q", "doc_id": "x", "score": 0.5})
    if name.endswith(".jsonl"):
        _jsonl(path, rows)
    else:
        path.write_text("query_id,doc_id,score\n" + "".join(f"q,{r['doc_id']},{r['score']}\n" for r in rows))
    for got in (read_run(path), scan_run(path).collect()):
        assert got.height == N + 1
        assert got.tail(2).rows() == [("q", f"d{N - 1}", float(N - 1)), ("q", "x", 0.5)]


def test_json_lines_integer_ids_then_a_text_id_are_text(tmp_path) -> None:
    # as in a JSON document of records: a column that mixes integers and text is text
    path = tmp_path / "run.jsonl"
    rows = [{"query_id": i, "doc_id": "d", "score": 1.0} for i in range(N)]
    rows.append({"query_id": "007", "doc_id": "d", "score": 1.0})
    _jsonl(path, rows)
    ids = read_run(path).get_column("query_id")
    assert ids.dtype == pl.String and ids.to_list()[-2:] == [str(N - 1), "007"]
    doc = tmp_path / "run.json"
    doc.write_text(json.dumps(rows))
    assert read_run(doc).get_column("query_id").equals(ids)


def test_json_lines_integer_grades_then_a_fraction_name_the_line(tmp_path) -> None:
    path = tmp_path / "qrels.jsonl"
    rows = [{"query_id": "q", "doc_id": f"d{i}", "relevance": 1} for i in range(N)]
    rows.append({"query_id": "q", "doc_id": "x", "relevance": 2.5})
    _jsonl(path, rows)
    with pytest.raises(InputError) as exc:
        read_qrels(path)
    assert "relevance must be an integer, got 2.5" in str(exc.value)
    assert exc.value.line == N + 1  # its line in the file
    with pytest.raises(InputError, match="relevance must be an integer, got 2.5"):
        scan_qrels(path).collect()
    rows[-1]["relevance"] = 2.0
    _jsonl(path, rows)
    assert read_qrels(path).tail(1).rows() == [("q", "x", 2)] == scan_qrels(path).collect().tail(1).rows()


def test_json_lines_polars_cannot_parse_are_read_as_a_json_document_reads_them(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"query_id": "q", "doc_id": "a", "score": Infinity}\n\n'
                    '{"query_id": "q", "doc_id": "b", "score": -1e400}\n')
    assert read_run(path).rows() == [("q", "a", float("inf")), ("q", "b", float("-inf"))]
    doc = tmp_path / "run.json"
    doc.write_text('[{"query_id": "q", "doc_id": "a", "score": Infinity},'
                   ' {"query_id": "q", "doc_id": "b", "score": -1e400}]')
    assert read_run(doc).equals(read_run(path))


def test_json_lines_name_the_line_that_is_no_json(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"query_id": "q", "doc_id": "a", "score": 1}\n\n{"query_id": "q", "doc_id": "b" "score": 2}\n')
    with pytest.raises(InputError) as exc:
        read_run(path)
    assert str(exc.value) == f"{path}, line 3: not valid JSON (Expecting ',' delimiter at column 33)"


def test_csv_whole_number_grades_are_read_past_the_inferred_rows(tmp_path) -> None:
    # '2.0' is grade 2 in the first rows (a float column); past them it was refused
    path = tmp_path / "qrels.csv"
    rows = "".join(f"q,d{i},1\n" for i in range(N))
    path.write_text("query_id,doc_id,relevance\nq,first,2.0\n" + rows)
    assert read_qrels(path).head(1).rows() == [("q", "first", 2)]
    path.write_text("query_id,doc_id,relevance\n" + rows + "q,last,2.0\n")
    assert read_qrels(path).tail(1).rows() == [("q", "last", 2)]
    path.write_text("query_id,doc_id,relevance\n" + rows + "q,last,2.5\n")
    with pytest.raises(InputError) as exc:
        read_qrels(path)
    assert "relevance must be an integer, got '2.5'" in str(exc.value) and exc.value.line == N + 2
