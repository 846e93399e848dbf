"""Tables with id columns of unusual types: whole-number floats and decimals are integers,
anything that is no id (infinite or past 64 bits, nested values) is an InputError naming
the row and column, never a polars error or a silent spelling that matches nothing."""

from __future__ import annotations

from decimal import Decimal

import polars as pl
import pytest

import fasteval
from fasteval.errors import InputError

QRELS = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 1]})


@pytest.mark.parametrize(("value", "fragment"), [
    (float("inf"), "query_id must be a string or an integer, got the float inf"),
    (-float("inf"), "query_id must be a string or an integer, got the float -inf"),
    (1e19, "query_id does not fit in a signed 64-bit integer: 1e+19"),
    (2.0**63, "query_id does not fit in a signed 64-bit integer: 9.223372036854776e+18"),
])
def test_float_ids_that_are_no_int64_name_the_row(value, fragment):
    run = pl.DataFrame({"query_id": [1.0, value], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(QRELS, run, ["P@1"])
    assert fragment in str(exc.value)
    assert exc.value.row == 1 and exc.value.column == "query_id"


def test_whole_decimal_ids_are_integers_and_fractional_ones_are_refused():
    run = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
    dec = run.with_columns(pl.col("query_id").cast(pl.Decimal(10, 2)))
    out = fasteval.evaluate(QRELS, dec, ["P@1"])
    assert out.select("query_id", "value").rows() == [(1, 1.0), (2, 1.0)]
    frac = pl.DataFrame({"query_id": [Decimal("1.5")], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(InputError) as exc:
        fasteval.read_run(frac)
    assert "query_id must be a string or an integer, got the decimal" in str(exc.value)


@pytest.mark.parametrize("column", ["query_id", "doc_id"])
def test_nested_ids_are_refused(column):
    run = {"query_id": ["1"], "doc_id": ["a"], "score": [1.0]}
    run[column] = [{"x": 1}]
    with pytest.raises(InputError) as exc:
        fasteval.read_run(pl.DataFrame(run))
    assert f"{column} must hold strings or integers, got Struct" in str(exc.value)


@pytest.mark.parametrize(("name", "text"), [
    ("run.json", '[{"query_id": 9007199254740993, "doc_id": "a", "score": 1},'
                 ' {"query_id": 2.0, "doc_id": "b", "score": 1}]'),
    ("run.jsonl", '{"query_id": 9007199254740993, "doc_id": "a", "score": 1}\n'
                  '{"query_id": 2.0, "doc_id": "b", "score": 1}\n'),
])
def test_json_ids_mixing_integers_and_floats_past_2_53_are_refused(tmp_path, name, text):
    # polars reads the column as floats: 9007199254740993 would become ...992, another id
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        fasteval.read_run(path)
    assert "query_id 9007199254740992.0 is a Float64 past 9007199254740991" in str(exc.value)
    where = (exc.value.line, exc.value.row) if name.endswith(".jsonl") else (None, exc.value.row)
    assert where == ((1, None) if name.endswith(".jsonl") else (None, 0))  # a JSON Lines line
    assert exc.value.column == "query_id"


def test_float_ids_up_to_the_last_exact_integer_are_read():
    for dtype, last in ((pl.Float64, 2**53 - 1), (pl.Float32, 2**24 - 1)):
        run = pl.DataFrame({"query_id": pl.Series([float(last), -float(last)], dtype=dtype),
                            "doc_id": ["a", "b"], "score": [1.0, 2.0]})
        assert fasteval.read_run(run).get_column("query_id").to_list() == [last, -last]
        with pytest.raises(InputError, match=f"is a {dtype} past {last}"):
            fasteval.read_run(run.with_columns(pl.col("query_id") * 2))


@pytest.mark.parametrize("value", [2**127, 2**128 - 1, -(2**100)])
def test_ids_grades_and_ranks_held_in_128_bits_are_refused_by_name(value):
    # polars reads such Python ints as Int128/UInt128; the cast to Int64 failed with its own error
    with pytest.raises(InputError, match=f"relevance {value} is outside the 32-bit range") as exc:
        fasteval.read_qrels({"q": {"a": value}})
    assert exc.value.row == 0
    run = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0], "rank": [1]})
    with pytest.raises(InputError, match=f"rank {value} does not fit in a signed 64-bit integer"):
        fasteval.read_run(run.with_columns(pl.Series("rank", [value])))
    with pytest.raises(InputError, match=f"doc_id does not fit in a signed 64-bit integer: {value}"):
        fasteval.read_run(run.with_columns(pl.Series("doc_id", [value])))


@pytest.mark.parametrize("text", [
    '[{"query_id": "q", "doc_id": "a", "score": 1}, {"query_id": "q", "doc_id": "b", "score": 1%s}]' % ("0" * 40),
    '{"q": {"a": 1, "b": 1%s}}' % ("0" * 40),
])
def test_json_integers_past_128_bits_are_named_not_read_as_missing(tmp_path, text):
    # the dict form read them as null ('score is missing'), the records raised OverflowError
    path = tmp_path / "run.json"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        fasteval.read_run(path)
    assert f"score 1{'0' * 40} is an integer past 128 bits" in str(exc.value)
    assert (exc.value.row, exc.value.column) == (1, "score")


def test_json_lines_errors_name_the_line(tmp_path):
    """A JSON Lines record is a line: errors name it (they named the 0-based record, which
    blank lines shifted further from the line)."""
    path = tmp_path / "run.jsonl"
    path.write_text('{"query_id": "q", "doc_id": "a", "score": 1}\n\n'
                    '{"query_id": "q", "doc_id": "b", "score": null}\n')
    with pytest.raises(InputError) as exc:
        fasteval.read_run(path)
    assert str(exc.value) == f"{path}, line 3, column 'score': score is missing (null)"


@pytest.mark.parametrize("dtype", [pl.Int64, pl.UInt64])
@pytest.mark.parametrize("kind", ["polars", "pandas", "aliased", "parquet"])
def test_integer_scores_a_double_cannot_hold_are_refused(tmp_path, kind, dtype):
    """2**53 + 1 and 2**53 are one double: a ranking by the integers would be scored as a
    tie (doc id descending puts the non-relevant 'b' first), so the score is an error."""
    run = pl.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"],
                        "score": pl.Series([2**53 + 1, 2**53], dtype=dtype)})
    given = {"polars": run, "pandas": run.to_pandas(), "aliased": run.rename({"score": "sim"}),
             "parquet": tmp_path / "r.parquet"}[kind]
    if kind == "parquet":
        run.write_parquet(given)
    with pytest.raises(InputError, match=r"score 9007199254740993 is an integer past 2\*\*53 that "
                       r"a float64 does not hold exactly \(it would be 9007199254740992\.0\)") as exc:
        fasteval.evaluate(QRELS, given, "P@1")
    assert (exc.value.row, exc.value.column) == (0, "score")


def test_integer_scores_doubles_hold_rank_as_the_integers():
    big = [2**62, 2**62 - 2**10, -(2**63)]  # exact doubles, in this order
    run = pl.DataFrame({"query_id": [1, 1, 1], "doc_id": ["b", "a", "c"], "score": big})
    assert fasteval.evaluate(QRELS, run, "P@1").get_column("value").to_list() == [0.0]
    assert fasteval.evaluate(QRELS, run.with_columns(pl.Series("score", [2**62 - 2**10, 2**62, 0])),
                             "P@1").get_column("value").to_list() == [1.0]


def test_trec_text_scores_past_2_53_are_read_as_trec_eval_reads_them(tmp_path):
    """atof: both scores become 2**53, a tie that doc id descending breaks for 'b'."""
    path = tmp_path / "r.run"
    path.write_text("1 Q0 a 1 9007199254740993 t\n1 Q0 b 2 9007199254740992 t\n")
    assert fasteval.read_run(path).get_column("score").to_list() == [2.0**53, 2.0**53]
    assert fasteval.evaluate(QRELS, path, "P@1").get_column("value").to_list() == [0.0]


@pytest.mark.parametrize("suffix", ["jsonl", "json"])
def test_json_numbers_past_2_53_are_read_as_doubles_as_text_is(tmp_path, suffix):
    """A JSON number is text: read as atof reads it (2**53 + 1 becomes 2**53, a tie that doc
    id descending breaks for 'b'), as TREC text and CSV are, not refused as a typed column."""
    import json

    path = tmp_path / f"r.{suffix}"
    rows = [{"query_id": 1, "doc_id": "a", "score": 2**53 + 1}, {"query_id": 1, "doc_id": "b", "score": 2**53}]
    path.write_text("\n".join(json.dumps(r) for r in rows) if suffix == "jsonl"
                    else json.dumps({"1": {"a": 2**53 + 1, "b": 2**53}}))
    assert fasteval.read_run(path).get_column("score").to_list() == [2.0**53, 2.0**53]
    assert fasteval.evaluate(QRELS, path, "P@1").get_column("value").to_list() == [0.0]
