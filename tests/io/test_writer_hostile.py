"""write_table refuses what a reader would not read back as written: TREC text ids that
the reader drops or refuses (NUL, a leading byte order mark, whitespace in Categorical or
Enum ids), scores, ranks and grades that are no TREC numbers; and every format keeps
float64 scores bit for bit."""

from __future__ import annotations

import os
import struct

import numpy as np
import polars as pl
import pytest

from fasteval.errors import InputError
from fasteval.io.readers import read_qrels, read_run
from fasteval.io.writers import write_table


def _run(qids, dids=None, scores=None, **extra) -> pl.DataFrame:
    n = len(qids)
    return pl.DataFrame({"query_id": qids, "doc_id": dids or [f"d{i}" for i in range(n)],
                         "score": scores or [float(n - i) for i in range(n)], **extra})


def _bits(values) -> list[bytes]:
    return [struct.pack("<d", v) for v in values]


@pytest.mark.parametrize("name", ["run.trec", "run.trec.gz", "run.csv", "run.tsv.gz",
                                  "run.jsonl", "run.json", "run.parquet"])
def test_float64_scores_come_back_bit_for_bit(tmp_path, name):
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 2**64, size=2000, dtype=np.uint64).view(np.float64)
    edges = np.array([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
                      2.225073858507201e-308, 1e308, -1.7976931348623157e308, 0.1, 1 / 3,
                      9007199254740993.0, 1e-7, 1e16, 123456789.123456789])
    scores = np.concatenate([edges, raw[np.isfinite(raw)]])
    df = pl.DataFrame({"query_id": ["q"] * len(scores),
                       "doc_id": [f"d{i}" for i in range(len(scores))],
                       "score": scores})
    back = read_run(write_table(df, tmp_path / name))
    got = dict(zip(back["doc_id"].to_list(), back["score"].to_list(), strict=True))
    assert _bits([got[f"d{i}"] for i in range(len(scores))]) == _bits(scores.tolist())


@pytest.mark.parametrize("name", ["t.csv", "t.tsv", "t.csv.gz", "t.json", "t.jsonl.gz", "t.parquet"])
def test_hostile_text_ids_round_trip_through_table_formats(tmp_path, name):
    ids = ["a,b", 'q"uo"te', "t\tab", "ünï©ødé", "x" * 100_000, "\\back", "null", "NA",
           "1e3", "007", "#hash", " lead", "\ufeffbom", "zw\u200bsp"]
    df = _run(ids, dids=ids[::-1])
    back = read_run(write_table(df, tmp_path / name))
    assert sorted(back.rows()) == sorted(df.rows())


@pytest.mark.parametrize(("bad", "why"), [
    ("q\x001", "without whitespace or NUL"),
    ("q\u00a01", "without whitespace or NUL"),
    ("\ufeffq1", "byte order mark"),
])
def test_trec_text_refuses_ids_the_reader_would_change(tmp_path, bad, why):
    out = tmp_path / "run.trec"
    with pytest.raises(InputError, match=why) as info:
        write_table(_run([bad, "q2"]), out)
    assert info.value.row == 0 and info.value.column == "query_id"
    assert info.value.source == str(out)
    assert not out.exists() and os.listdir(tmp_path) == []


def test_a_byte_order_mark_later_in_the_file_round_trips(tmp_path):
    # the reader drops U+FEFF only at the start of the file
    df = _run(["q1", "\ufeffq2"])
    back = read_run(write_table(df, tmp_path / "run.trec"))
    assert back["query_id"].to_list() == ["q1", "\ufeffq2"]


@pytest.mark.parametrize("dtype", [pl.Categorical, pl.Enum(["q 1", "q2"])])
def test_trec_text_checks_categorical_ids_as_text(tmp_path, dtype):
    df = _run(["q 1", "q2"]).with_columns(pl.col("query_id").cast(dtype))
    with pytest.raises(InputError, match=r"query_id 'q 1' cannot be written as TREC text"):
        write_table(df, tmp_path / "run.trec")
    ok = _run(["q1", "q1"]).with_columns(pl.col("query_id").cast(pl.Categorical))
    back = read_run(write_table(ok, tmp_path / "ok.trec"))
    assert back["query_id"].to_list() == ["q1", "q1"]


@pytest.mark.parametrize(("column", "values", "message"), [
    ("query_id", [1.5, 2.5], "query_id must be text or integers to be written as TREC text, got Float64"),
    ("score", ["1.0", "x y"], "score must be numbers to be written as TREC text, got String"),
    ("score", [True, False], "score must be numbers to be written as TREC text, got Boolean"),
])
def test_trec_text_refuses_columns_of_other_types(tmp_path, column, values, message):
    df = _run(["q1", "q2"]).with_columns(pl.Series(column, values))
    with pytest.raises(InputError, match=message):
        write_table(df, tmp_path / "run.trec")


def test_trec_ranks_are_written_only_when_they_are_integers(tmp_path):
    with pytest.raises(InputError, match=r"rank must be an integer, got 1.5") as info:
        write_table(_run(["q", "q"], rank=[1.0, 1.5]), tmp_path / "run.trec")
    assert info.value.row == 1
    back = read_run(write_table(_run(["q", "q"], rank=[7.0, 9.0]), tmp_path / "ok.trec"))
    assert back["rank"].to_list() == [7, 9]


def test_trec_qrels_grades_are_those_the_reader_takes(tmp_path):
    def qrels(rel):
        return pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": rel})

    with pytest.raises(InputError, match=r"relevance must be an integer, got 1.5"):
        write_table(qrels([2.0, 1.5]), tmp_path / "a.qrels")
    with pytest.raises(InputError, match=r"relevance 1099511627776 is outside the 32-bit range"):
        write_table(qrels([1, 2**40]), tmp_path / "b.qrels")
    with pytest.raises(InputError, match=r"relevance must be an integer, got 'high'"):
        write_table(qrels(["1", "high"]), tmp_path / "c.qrels")
    path = write_table(qrels([2.0, -1.0]), tmp_path / "d.qrels")  # whole numbers: as integers
    assert path.read_text() == "q 0 a 2\nq 0 b -1\n"
    assert read_qrels(path)["relevance"].to_list() == [2, -1]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


@pytest.mark.parametrize("name", ["t.csv", "t.parquet", "t.jsonl", "t.trec"])
def test_object_columns_are_refused_naming_the_column(tmp_path, name):
    df = _run(["q1"]).with_columns(pl.Series("blob", [object()], dtype=pl.Object))
    with pytest.raises(InputError, match=r"column 'blob': blob holds Python objects"):
        write_table(df, tmp_path / name)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(("args", "message"), [
    ((None,), r"^path must be a file path \(str or os.PathLike\), got None"),
    ((3,), r"^path must be a file path \(str or os.PathLike\), got 3"),
    (("t.csv", 5), r"^format must be None or one of \('parquet', .*\), got 5"),
])
def test_path_and_format_of_other_types_are_refused(tmp_path, monkeypatch, args, message):
    from fasteval.errors import ParameterError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParameterError, match=message):
        write_table(_run(["q"]), *args)
    assert os.listdir(tmp_path) == []


def test_nan_and_infinity_per_format_as_documented(tmp_path):
    special = pl.DataFrame({"measure": ["a", "b", "c"], "value": [float("nan"), float("inf"), -float("inf")]})
    for name in ("s.csv", "s.tsv.gz", "s.parquet"):
        path = write_table(special, tmp_path / name)
        if name.endswith(".parquet"):
            back = pl.read_parquet(path)
        else:
            back = pl.read_csv(path, separator="," if ".csv" in name else "\t",
                               schema={"measure": pl.String, "value": pl.Float64})
        got = back["value"].to_list()
        assert np.isnan(got[0]) and got[1:] == [float("inf"), -float("inf")]
    for name in ("s.json", "s.jsonl"):
        with pytest.raises(InputError, match=r"JSON cannot hold nan"):
            write_table(special, tmp_path / name)
    run = _run(["q", "q"], scores=[float("inf"), -float("inf")])
    back = read_run(write_table(run, tmp_path / "inf.trec"))
    assert back.sort("doc_id")["score"].to_list() == [float("inf"), -float("inf")]
    with pytest.raises(InputError, match=r"score is NaN"):
        write_table(_run(["q"], scores=[float("nan")]), tmp_path / "nan.trec")
    assert sorted(os.listdir(tmp_path)) == ["inf.trec", "s.csv", "s.parquet", "s.tsv.gz"]
