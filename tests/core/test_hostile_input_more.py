"""More careless input to evaluate() and the CLIs: cutoffs and collection sizes of the wrong
type or range are refused naming the parameter (or the flag the user typed), whatever the
tie rule."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import fasteval
from fasteval.errors import InputError, ParameterError

QRELS = pl.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 1]})
RUN = pl.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})


@pytest.mark.parametrize("tie_break", ["trec", "expected"])
@pytest.mark.parametrize("max_docs", [0, -3, 1.5, True, np.bool_(True)])
def test_max_docs_out_of_range_or_not_an_integer_is_refused(tie_break, max_docs):
    with pytest.raises(ParameterError) as exc:
        fasteval.evaluate(QRELS, RUN, ["map"], max_docs=max_docs, tie_break=tie_break)
    assert str(exc.value) == f"max_docs must be a positive integer, got {max_docs!r}"


def test_max_docs_still_cuts_with_the_expected_tie_rule():
    out = fasteval.evaluate(QRELS, RUN, ["num_ret"], max_docs=1, tie_break="expected")
    assert out.get_column("value").to_list() == [1.0, 1.0]


@pytest.mark.parametrize("num_docs", [-5, 1.5, True, "3", 2**63])
def test_num_docs_must_be_a_collection_size(num_docs):
    with pytest.raises(ParameterError) as exc:
        fasteval.Evaluator(QRELS, ["utility.1,-1,0,1"], num_docs=num_docs)
    assert str(exc.value) == (f"num_docs must be an integer from 0 to {2**63 - 1} (the collection "
                              f"size), got {num_docs!r}")


def test_num_docs_in_range_still_counts():
    out = fasteval.evaluate(QRELS, RUN, ["utility.1,-1,0,1"], num_docs=np.int64(10))
    # rel_ret - nonrel_ret + (10 - retrieved - unretrieved relevant): 1 - 1 + 8, 1 + 9
    assert out.get_column("value").to_list() == [8.0, 10.0]


@pytest.mark.parametrize("argv, message", [
    (["trec-eval", "-N", "-5", "-m", "utility.1,-1,0,1"],
     "-N must be an integer from 0 to 2**63 - 1 (the collection size), got '-5'"),
    (["trec-eval", "-l", "-1", "-m", "map"], "-l must be an integer from 0 to 2147483647, got -1"),
    (["eval", "-l", "-1", "-m", "map"],
     "-l/--relevance-level must be an integer from 0 to 2147483647, got -1"),
])
def test_cli_range_errors_name_the_flag(tmp_path, capsys, argv, message):
    from fasteval.cli import main

    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r").write_text("1 Q0 a 1 1.0 t\n1 Q0 b 2 0.5 t\n")
    files = [str(tmp_path / "q"), str(tmp_path / "r")]
    rc = main([*argv, *files] if argv[0] == "trec-eval" else [argv[0], *files, *argv[1:]])
    assert rc == 2
    assert capsys.readouterr().err == f"fasteval: error: {message}\n"


# ---------------------------------------------------------------- tables given directly

def test_a_named_pandas_index_is_read_as_a_column():
    pd = pytest.importorskip("pandas")
    frame = RUN.to_pandas()
    by_query = fasteval.read_run(frame.set_index("query_id"))
    assert by_query.rows() == fasteval.read_run(frame).rows()
    pairs = frame.set_index(["query_id", "doc_id"])
    out = fasteval.evaluate(QRELS, pairs, ["P@1"])
    assert out.select("query_id", "value").rows() == [("1", 1.0), ("2", 1.0)]
    # an unnamed index holds row numbers, not data
    assert fasteval.read_run(frame.set_index(pd.Index([7, 8, 9]))).rows() == by_query.rows()


def test_a_pandas_column_of_mixed_types_is_named():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": [1, "2"], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    with pytest.raises(InputError) as exc:
        fasteval.read_run(frame)
    assert exc.value.column == "query_id"
    assert str(exc.value).startswith("run (pandas.DataFrame), column 'query_id': cannot convert the "
                                     "column (")


@pytest.mark.parametrize("make, what", [
    (lambda pa, cols, names: pa.table(cols, names=names), "pyarrow table"),
    (lambda pa, cols, names: pa.record_batch(cols, names=names), "pyarrow table"),
])
def test_repeated_column_names_in_an_arrow_table_are_named(make, what):
    pa = pytest.importorskip("pyarrow")
    cols = [pa.array(["1"]), pa.array(["a"]), pa.array([1.0]), pa.array([2.0])]
    with pytest.raises(InputError) as exc:
        fasteval.read_run(make(pa, cols, ["query_id", "doc_id", "score", "score"]))
    assert exc.value.message == (f"the {what} has more than one column named 'score'; expected "
                                 "unique column names")


def test_repeated_column_names_in_a_pandas_frame_are_named():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([["1", "a", 1.0, 2.0]], columns=["query_id", "doc_id", "score", "score"])
    with pytest.raises(InputError) as exc:
        fasteval.read_run(frame)
    assert exc.value.message == ("the pandas DataFrame has more than one column named 'score'; "
                                 "expected unique column names")


def test_128_bit_ids_past_64_bits_name_the_row():
    run = pl.DataFrame({"query_id": pl.Series([1, 2**70], dtype=pl.Int128), "doc_id": ["a", "b"],
                        "score": [1.0, 2.0]})
    with pytest.raises(InputError) as exc:
        fasteval.read_run(run)
    assert (exc.value.row, exc.value.column) == (1, "query_id")
    assert exc.value.message == (f"query_id does not fit in a signed 64-bit integer: {2**70} "
                                 "(give such ids as text)")
    small = run.with_columns(pl.Series("query_id", [1, 2], dtype=pl.Int128))
    assert fasteval.read_run(small).get_column("query_id").to_list() == [1, 2]


@pytest.mark.parametrize("bad, words", [(None, "score is missing (null)"), (float("nan"), "score is NaN (not a number)")])
def test_null_or_nan_score_worded_as_the_reader_words_it(bad, words) -> None:
    run = pl.DataFrame({"query_id": ["a", "a"], "doc_id": ["b", "c"], "score": [1.0, bad]})
    for call in (lambda: fasteval.read_run(run), lambda: fasteval.evaluate({"a": {"b": 1}}, run, ["map"])):
        with pytest.raises(InputError, match=rf"row 1, column 'score': {words.replace('(', '[(]').replace(')', '[)]')}$"):
            call()
