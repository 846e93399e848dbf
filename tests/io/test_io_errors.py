"""Bad input: every case raises InputError naming the file, the line or row, and the column."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from fasteval.errors import InputError, ParameterError
from fasteval.io.readers import read_qrels, read_run


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _err(fn, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        fn(*args, **kwargs)
    return info.value


GOOD_RUN = "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n"


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "  # indented comment\n\n"])
def test_empty_run_file(tmp_path: Path, text: str) -> None:
    p = _write(tmp_path, "r.run", text)
    e = _err(read_run, p)
    assert e.source == str(p) and "no run lines" in str(e)


def test_empty_qrels_file(tmp_path: Path) -> None:
    p = _write(tmp_path, "q.qrels", "")
    assert str(p) in str(_err(read_qrels, p))


def test_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "nope.run"
    e = _err(read_run, p)
    assert str(e) == f"{p}: file not found"


def test_missing_parquet(tmp_path: Path) -> None:
    e = _err(read_qrels, tmp_path / "nope.parquet")
    assert "file not found" in str(e)


@pytest.mark.parametrize(
    ("text", "line", "found"),
    [
        ("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5\n", 2, 5),  # tag missing
        ("# c\nq1 Q0 d1 1 2.5 t\n\nq1 d2\n", 4, 2),
        ("q1 Q0 d1 1 2.5 t\nq1  Q0\td2 2\n", 2, 4),  # irregular whitespace path
    ],
)
def test_run_too_few_fields(tmp_path: Path, text: str, line: int, found: int) -> None:
    p = _write(tmp_path, "r.run", text)
    e = _err(read_run, p)
    assert e.line == line and e.source == str(p)
    assert f"found {found}" in str(e) and "at least 6" in str(e)


@pytest.mark.parametrize(
    ("text", "line", "found"),
    [
        ("q1 0 d1 1\nq1 0 d2 1 extra\n", 2, 5),
        ("q1 0 d1 1\nq1 0 d2\n", 2, 3),
        ("q1\t0\td1\t1\n# c\nq1\t0\td2\t1\t7\n", 3, 5),
    ],
)
def test_qrels_wrong_field_count(tmp_path: Path, text: str, line: int, found: int) -> None:
    p = _write(tmp_path, "q.qrels", text)
    e = _err(read_qrels, p)
    assert e.line == line and f"found {found}" in str(e) and "exactly 4" in str(e)


@pytest.mark.parametrize("bad", ["abc", "1.2.3", "0x1p3", "--1"])
def test_run_non_numeric_score(tmp_path: Path, bad: str) -> None:
    p = _write(tmp_path, "r.run", GOOD_RUN + f"# x\nq2 Q0 d3 1 {bad} t\n")
    e = _err(read_run, p)
    assert (e.line, e.column) == (4, "score")
    assert str(e).startswith(f"{p}, line 4, column 'score': score is not a number: {bad!r}")


@pytest.mark.parametrize("nan", ["nan", "NaN"])
def test_run_nan_score(tmp_path: Path, nan: str) -> None:
    p = _write(tmp_path, "r.run", GOOD_RUN + f"q2 Q0 d3 1 {nan} t\n")
    e = _err(read_run, p)
    assert (e.line, e.column) == (3, "score") and "NaN" in str(e)


def test_qrels_non_integer_relevance(tmp_path: Path) -> None:
    p = _write(tmp_path, "q.qrels", "q1 0 d1 1\n\nq1 0 d2 1.5\n")
    e = _err(read_qrels, p)
    assert (e.line, e.column) == (3, "relevance") and "'1.5'" in str(e)


def test_parquet_missing_columns_lists_columns(tmp_path: Path) -> None:
    p = tmp_path / "run.parquet"
    pl.DataFrame({"qid": ["q"], "document": ["d"], "points": [1.0]}).write_parquet(p)
    e = _err(read_run, p)
    assert e.source == str(p) and e.column == "score"
    assert "['qid', 'document', 'points']" in str(e)
    # naming the column fixes it
    assert read_run(p, score_col="points").row(0) == ("q", "d", 1.0)


def test_explicit_column_absent(tmp_path: Path) -> None:
    p = tmp_path / "q.csv"
    p.write_text("qid,docno,rel\nq,d,1\n")
    e = _err(read_qrels, p, relevance_col="grade")
    assert e.column == "grade" and "['qid', 'docno', 'rel']" in str(e)


def test_corrupt_parquet(tmp_path: Path) -> None:
    p = tmp_path / "run.parquet"
    p.write_bytes(b"PAR1 this is not really parquet PAR1")
    e = _err(read_run, p)
    assert e.source == str(p)


def test_truncated_parquet(tmp_path: Path) -> None:
    p = tmp_path / "run.parquet"
    pl.DataFrame({"query_id": ["q"] * 100, "doc_id": [str(i) for i in range(100)], "score": [1.0] * 100}).write_parquet(p)
    p.write_bytes(p.read_bytes()[:-20])
    assert _err(read_run, p).source == str(p)


def test_null_id_in_table() -> None:
    df = pl.DataFrame({"query_id": ["q1", None, "q2"], "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, 3.0]})
    e = _err(read_run, df)
    assert (e.row, e.column) == (1, "query_id") and "null" in str(e)


def test_null_score_and_nan_in_table() -> None:
    df = pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "score": [1.0, None, 3.0]})
    assert (_err(read_run, df).row, _err(read_run, df).column) == (1, "score")
    df = pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, float("nan")]})
    e = _err(read_run, df)
    assert (e.row, e.column) == (2, "score") and "NaN" in str(e)


def test_csv_bad_score_names_line(tmp_path: Path) -> None:
    """A CSV error names the file's line (1-based, header counted), not the 0-based row;
    a quoted field that spans lines is followed."""
    p = tmp_path / "run.csv"
    p.write_text("query_id,doc_id,score\nq,a,1.0\nq,b,2.0\nq,c,high\n")
    e = _err(read_run, p)
    assert (e.source, e.line, e.row, e.column) == (str(p), 4, None, "score") and "'high'" in str(e)
    assert str(e).startswith(f"{p}, line 4, column 'score'")
    p.write_text('query_id\tdoc_id\tscore\nq\t"a\nb"\t1.0\nq\tc\thigh\n')
    e = _err(read_run, p, format="tsv")
    assert (e.line, e.column) == (4, "score")


def test_table_relevance_not_integer() -> None:
    df = pl.DataFrame({"query_id": [1, 1], "doc_id": [1, 2], "relevance": [1.0, 0.5]})
    e = _err(read_qrels, df)
    assert (e.row, e.column) == (1, "relevance")


def test_empty_tables(tmp_path: Path) -> None:
    df = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64})
    assert "empty" in str(_err(read_run, df))
    p = tmp_path / "r.parquet"
    df.write_parquet(p)
    assert "empty" in str(_err(read_run, p))
    assert "empty" in str(_err(read_run, {}))
    assert "empty" in str(_err(read_run, {"q": {}}))
    c = tmp_path / "r.csv"
    c.write_text("")
    assert str(c) in str(_err(read_run, c))


def test_float_ids_rejected() -> None:
    df = pl.DataFrame({"query_id": [1.5], "doc_id": [1], "score": [1.0]})
    e = _err(read_run, df)
    assert (e.row, e.column) == (0, "query_id")


def test_bad_parameters(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="duplicates"):
        read_run({"q": {"d": 1.0}}, duplicates="first")
    with pytest.raises(ParameterError, match="format"):
        read_run(_write(tmp_path, "r.run", GOOD_RUN), format="xml")
    with pytest.raises(ParameterError, match="source"):
        read_run(42)


def test_bad_json(tmp_path: Path) -> None:
    p = _write(tmp_path, "r.json", "{not json")
    assert "not valid JSON" in str(_err(read_run, p))
    p = _write(tmp_path, "r2.json", '{"q1": [1, 2]}')
    assert "'q1'" in str(_err(read_run, p))


def test_dict_bad_value() -> None:
    e = _err(read_run, {"q1": {"d1": 1.0, "d2": "x"}})
    assert (e.row, e.column) == (1, "score")
    e = _err(read_qrels, {"q1": {"d1": 1, "d2": 0.5}})
    assert (e.row, e.column) == (1, "relevance")


@pytest.mark.parametrize("value", ["1 ", " 1", "\u00b2", "1_0"])
def test_grade_text_that_is_no_integer_is_named_as_such(tmp_path: Path, value: str) -> None:
    # not 'outside the 32-bit range': these are no integers at all
    e = _err(read_qrels, _write(tmp_path, "q.csv", f"query_id,doc_id,relevance\nq1,d1,{value}\n"))
    assert str(e) == (f"{tmp_path / 'q.csv'}, line 2, column 'relevance': relevance must be an "
                      f"integer, got {value!r}")


def test_grade_text_past_int64_is_named_as_out_of_range() -> None:
    e = _err(read_qrels, {"q1": {"d1": "-99999999999999999999"}})
    assert "relevance '-99999999999999999999' is outside the 32-bit range" in str(e)


def test_json_lines_named_json_says_so(tmp_path: Path) -> None:
    p = _write(tmp_path, "run.json", '{"query_id": "q1", "doc_id": "d1", "score": 1}\n'
                                     '{"query_id": "q1", "doc_id": "d2", "score": 2}\n')
    e = _err(read_run, p)
    assert "it looks like JSON Lines (one object per line): name it .jsonl or pass format='jsonl'" in str(e)
    assert read_run(p, format="jsonl").rows() == [("q1", "d1", 1.0), ("q1", "d2", 2.0)]


def test_missing_column_advice_names_the_readers_parameter() -> None:
    # evaluate() has no query_col=: the advice names the readers' parameter that has it
    import fasteval

    qrels = pl.DataFrame({"q": ["a"], "d": ["b"], "relevance": [1]})
    run = pl.DataFrame({"query_id": ["a"], "doc_id": ["b"], "score": [1.0]})
    with pytest.raises(InputError, match=r"no query_id column; .* \(or rename it, or name it with "
                                         r"read_run/read_qrels' query_col=\.\.\.\); the columns are \['q', 'd', 'relevance'\]"):
        fasteval.evaluate(qrels, run, ["map"])
    assert fasteval.read_qrels(qrels, query_col="q", doc_col="d").rows() == [("a", "b", 1)]
