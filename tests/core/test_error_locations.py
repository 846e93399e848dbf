"""Errors that evaluate() and Evaluator find after reading (repeated documents, repeated
judgments) name where the row is in what the user gave: the file and its line for paths and
streams, the mapping key for {name: table}, and the row of the whole table (not of its
run_id part) for a table with a run_id column."""

from __future__ import annotations

import io

import polars as pl
import pytest

import fasteval
from fasteval.errors import DuplicateJudgmentError, InputError

QRELS = {"1": {"a": 1, "x": 1}}
DUP_RUN = "# a comment\n1 Q0 a 1 2.0 t\n\n1 Q0 b 2 1.5 t\n1 Q0 a 3 1.0 t\n"
MESSAGE = ("document 'a' appears more than once for query '1'; pass duplicates='keep_best' to "
           "keep the best-scored row")


@pytest.mark.parametrize("tie_break", ["trec", "expected"])
def test_a_repeat_in_a_run_file_names_the_file_and_line(tmp_path, tie_break):
    path = tmp_path / "dup.run"
    path.write_text(DUP_RUN)
    for run in (path, str(path), {"bm25": path}):
        with pytest.raises(InputError) as exc:
            fasteval.evaluate(QRELS, run, ["map"], tie_break=tie_break)
        assert str(exc.value) == f"{path}, line 5, column 'doc_id': {MESSAGE}"
    with pytest.raises(InputError) as exc:
        fasteval.Evaluator(QRELS, ["map"]).evaluate(io.BytesIO(DUP_RUN.encode()))
    assert (exc.value.line, exc.value.row) == (5, None)


def test_a_repeat_in_a_run_id_part_names_the_row_of_the_whole_table():
    run = pl.DataFrame({"run_id": ["a", "a", "b", "b", "b"], "query_id": ["1"] * 5,
                        "doc_id": ["x", "y", "x", "z", "x"], "score": [1.0, 2.0, 3.0, 4.0, 5.0]})
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(QRELS, run, ["map"])
    assert str(exc.value) == ("run, row 4, column 'doc_id': document 'x' appears more than "
                              "once for query '1'; pass duplicates='keep_best' to keep the "
                              "best-scored row")


def test_a_repeat_in_one_of_several_tables_names_its_key():
    run = pl.DataFrame({"query_id": ["1"] * 3, "doc_id": ["x", "z", "x"], "score": [3.0, 4.0, 5.0]})
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(QRELS, {"bm25": run.head(2), "dense": run}, ["map"])
    assert (exc.value.source, exc.value.row) == ("dense", 2)


def test_a_repeated_judgment_in_a_qrels_file_names_the_file_and_line(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("1 0 a 1\n\n1 0 b 0\n1 0 a 2\n")
    with pytest.raises(DuplicateJudgmentError) as exc:
        fasteval.Evaluator(path, ["map"])
    assert str(exc.value) == f"{path}, line 4: duplicate judgment for query '1', document 'a'"
    table = pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "a"], "relevance": [1, 2]})
    with pytest.raises(DuplicateJudgmentError) as exc:
        fasteval.Evaluator(table, ["map"])
    assert str(exc.value) == "qrels, row 1: duplicate judgment for query '1', document 'a'"


def test_a_mapping_of_pathlib_paths_is_a_mapping_of_runs(tmp_path):
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_text("1 Q0 a 1 2.0 t\n1 Q0 z 2 1.0 t\n")
    b.write_text("1 Q0 z 1 2.0 t\n1 Q0 a 2 1.0 t\n")
    out = fasteval.evaluate(QRELS, {"first": a, "second": b}, ["P@1"])
    assert out.select("run_id", "value").rows() == [("first", 1.0), ("second", 0.0)]


def test_diversity_names_the_line_of_a_repeat(tmp_path):
    path = tmp_path / "dup.run"
    path.write_text(DUP_RUN)
    qrels = {"1": {"s1": {"a": 1}, "s2": {"b": 1}}}
    with pytest.raises(InputError) as exc:
        fasteval.evaluate_diversity(qrels, path, ["alpha-nDCG@5"])
    assert str(exc.value) == f"{path}, line 5, column 'doc_id': {MESSAGE}"


def test_advice_is_kept_through_relocation_and_worded_per_command(tmp_path, capsys):
    from fasteval.cli import main
    from fasteval.errors import ADVICE

    run = tmp_path / "dup.run"
    run.write_text("1 Q0 a 1 2.0 x\n1 Q0 b 2 1.5 x\n1 Q0 a 3 1.0 x\n")
    other = tmp_path / "other.run"
    other.write_text("1 Q0 a 1 2.0 y\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    with pytest.raises(InputError) as exc:  # read, then located in the file, advice kept
        fasteval.evaluate(qrels, run, ["map"])
    assert exc.value.advice == "keep_best_run" and exc.value.line == 3
    assert str(exc.value).endswith("; " + ADVICE["keep_best_run"])
    where = "dup.run, line 3: duplicate (query_id, doc_id) pair ('1', 'a'); "
    for argv, advice in (
        (["eval", str(qrels), str(run), "-m", "map"], "use --keep-best-duplicates to keep the best-scored row"),
        (["trec-eval", str(qrels), str(run)], "a document is ranked once per query (trec_eval stops here too)"),
        (["compare", str(qrels), str(run), str(other), "-m", "map"], "a document is ranked once per query"),
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].endswith(where + advice), err


def test_a_relocated_error_keeps_its_class_and_advice():
    err = DuplicateJudgmentError("duplicate pair", source="qrels", row=2, column="doc_id",
                                 advice="keep_best_qrels")
    moved = err.at(source="q.txt", row=None, line=7)
    assert type(moved) is DuplicateJudgmentError and moved.advice == "keep_best_qrels"
    assert str(moved) == ("q.txt, line 7, column 'doc_id': duplicate pair; pass duplicates='keep_best' "
                          "to keep the best-graded row")
    assert str(moved.reworded({"keep_best_qrels": ""})) == "q.txt, line 7, column 'doc_id': duplicate pair"
    with pytest.raises(TypeError, match="where must name"):
        err.at(file="x")
