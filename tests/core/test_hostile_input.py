"""Careless and hostile input to evaluate(): null ids, scores and run ids, grades past 32
bits, measure parameters no kernel can use. Every case is refused with a one-line message
naming the column and row (or the parameter)."""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.errors import InputError, ParameterError

QRELS = pl.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["a", "b", "c", "d"],
                      "relevance": [1, 0, 1, 1]})


def _error(exc_info) -> InputError:
    err = exc_info.value
    assert "\n" not in str(err)
    return err


@pytest.mark.parametrize("column, values, row", [
    ("query_id", ["1", None, None, "2"], 1),
    ("doc_id", ["a", "x", None, "c"], 2),
])
def test_null_ids_in_a_run_table_are_refused(column, values, row):
    run = pl.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["a", "x", "y", "c"],
                        "score": [1.0, 0.9, 0.8, 0.7]}).with_columns(pl.Series(column, values))
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(QRELS, run, ["num_ret"])
    err = _error(exc)
    assert (err.column, err.row) == (column, row)
    with pytest.raises(InputError):  # the Evaluator path too
        fasteval.Evaluator(QRELS, ["num_ret"]).evaluate(run)


def test_null_score_and_nan_score_are_refused_with_their_row():
    run = pl.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"],
                        "score": [1.0, float("nan"), 0.7]})
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(QRELS, run, ["map"])
    assert (exc.value.column, exc.value.row) == ("score", 1)


def test_null_run_id_is_refused_not_named_none():
    run = pl.DataFrame({"run_id": ["r", "r", None], "query_id": ["1", "1", "2"],
                        "doc_id": ["a", "b", "c"], "score": [1.0, 0.5, 0.7]})
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(QRELS, run, ["num_ret"])
    assert (exc.value.column, exc.value.row) == ("run_id", 2)


def test_row_numbers_count_in_the_table_given_not_in_a_run_of_it():
    # the NaN is row 3 of the table; within run "b" it would be row 0
    run = pl.DataFrame({"run_id": ["a", "a", "a", "b"], "query_id": ["1", "1", "2", "2"],
                        "doc_id": ["a", "b", "c", "c"], "score": [1.0, 0.5, 0.7, float("nan")]})
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(QRELS, run, ["num_ret"])
    assert (exc.value.column, exc.value.row) == ("score", 3)


def test_run_names_equal_as_text_are_refused():
    run = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(InputError, match=r"\['1'\] given twice"):
        fasteval.evaluate(QRELS, {1: run, "1": run}, ["num_ret"])


def test_null_relevance_in_a_qrels_table_is_refused():
    qrels = QRELS.with_columns(pl.Series("relevance", [1, None, 1, 1]))
    run = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(qrels, run, ["num_rel"])
    assert (exc.value.column, exc.value.row) == ("relevance", 1)


@pytest.mark.parametrize("grade, row", [(2**32, 0), (2**31, 2), (-(2**31) - 1, 3)])
def test_grades_outside_int32_are_refused_in_tables(grade, row):
    rel = [1, 0, 1, 1]
    rel[row] = grade
    qrels = QRELS.with_columns(pl.Series("relevance", rel))
    run = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(InputError, match="outside the 32-bit range") as exc:
        fasteval.evaluate(qrels, run, ["num_rel"])
    assert (exc.value.column, exc.value.row) == ("relevance", row)


def test_grades_outside_int32_are_refused_in_dicts_and_files(tmp_path):
    with pytest.raises(InputError, match="4294967296 is outside"):
        fasteval.read_qrels({"q": {"a": 4294967296}})
    text = tmp_path / "q.qrels"
    text.write_text("q 0 a 1\nq 0 b 2147483648\n")
    with pytest.raises(InputError) as exc:
        fasteval.read_qrels(text)
    assert exc.value.line == 2 and "2147483648" in str(exc.value)
    text.write_text("q 0 a 1\nq 0 b 99999999999999999999\n")  # past 64 bits as well
    with pytest.raises(InputError, match="outside the 32-bit range") as exc:
        fasteval.read_qrels(text)
    assert exc.value.line == 2
    pq = tmp_path / "q.parquet"
    pl.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "rel": [1, 2**40]}).write_parquet(pq)
    with pytest.raises(InputError) as exc:
        fasteval.read_qrels(pq)
    assert exc.value.row == 1


@pytest.mark.parametrize("measure, fragment", [
    ("set_F(beta=-1)", "set_F's beta must be a number >= 0"),
    ("P@99999999999999999999", "P's cutoff must be an integer from 1 to 9223372036854775807"),
    ("P(rel=99999999999999999999)@3", "P's rel must be an integer from 0 to 2147483647"),
    ("rbp(p=1.5)", "rbp's p must be a number between 0 and 1"),
])
def test_measure_parameters_no_kernel_can_use(measure, fragment):
    with pytest.raises(ParameterError, match=fragment.replace("(", r"\(")):
        fasteval.Evaluator(QRELS, [measure])


def test_relevance_level_past_32_bits_is_a_parameter_error():
    with pytest.raises(ParameterError, match="relevance_level must be an integer from 0 to 2147483647"):
        fasteval.Evaluator(QRELS, ["map"], relevance_level=99999999999999999999)


@pytest.mark.parametrize("argv, fragment", [
    (["-m", "set_F(beta=-1)"], "set_F's beta"),
    (["-m", "P@99999999999999999999"], "P's cutoff"),
    (["-l", "99999999999999999999", "-m", "map"], "relevance_level"),
])
@pytest.mark.parametrize("command", ["eval", "trec-eval"])
def test_cli_reports_bad_measure_parameters_in_one_line(tmp_path, capsys, argv, fragment, command):
    from fasteval.cli import main

    (tmp_path / "q").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    files = [str(tmp_path / "q"), str(tmp_path / "r")]
    rc = main([command, *argv, *files] if command == "trec-eval" else [command, *files, *argv])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("fasteval: error:") and fragment in err
