"""`fasteval eval` reads parquet runs and qrels by the names fasteval.read_run and read_qrels
accept (PyTerrier's qid/docno, docid, sim, runid, label, any case), in every path of the
batch job: streamed, re-read hash-partitioned, globs of parts spelled differently, hive
folders, in-memory tables; values equal fasteval.evaluate on the readers' tables bit for bit."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import fasteval
from fasteval.batch.api import evaluate_files
from fasteval.cli import main
from fasteval.errors import InputError

MEASURES = ["map", "ndcg@10", "P@5", "recip_rank", "num_rel_ret"]
NQ = 30


def _pyterrier(ids: str, seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A PyTerrier-style run (qid, docno, score, rank: rank 0 first, tied scores) and qrels
    (qid, docno, label), with integer or text ids; q0 and q1 unjudged, q29 not run."""
    rng = np.random.default_rng(seed)
    q, d, s = [], [], []
    for i in range(NQ - 1):
        docs = rng.choice(60, 20, replace=False)
        q += [i] * 20
        d += docs.tolist()
        s += np.round(rng.random(20), 1).tolist()  # ties
    run = (pl.DataFrame({"qid": q, "docno": d, "score": s})
           .sort(["qid", "score"], descending=[False, True], maintain_order=True)
           .with_columns(pl.int_range(pl.len()).over("qid").alias("rank")))
    qq, qd = np.repeat(np.arange(2, NQ), 25), np.concatenate([rng.choice(60, 25, replace=False)
                                                               for _ in range(2, NQ)])
    qrels = pl.DataFrame({"qid": qq, "docno": qd, "label": rng.integers(0, 3, len(qq))})
    if ids == "str":
        run = run.with_columns(pl.format("q{}", "qid").alias("qid"), pl.format("d{}", "docno").alias("docno"))
        qrels = qrels.with_columns(pl.format("q{}", "qid").alias("qid"), pl.format("d{}", "docno").alias("docno"))
    return run, qrels


def _reference(qrels_path, runs: dict, measures=MEASURES, **options) -> pl.DataFrame:
    """fasteval.evaluate on the readers' tables: {run name: path}."""
    q = fasteval.read_qrels(qrels_path)
    return fasteval.evaluate(q, {k: fasteval.read_run(v) for k, v in runs.items()}, measures, **options)


def _cli_per_query(tmp_path, qrels, runs, *extra) -> pl.DataFrame:
    out = tmp_path / "per_query.parquet"
    args = ["eval", str(qrels), *map(str, runs), *sum((["-m", m] for m in MEASURES), []),
            "-q", "-o", str(out), "--quiet", "--no-qrels-cache", *extra]
    assert main(args) == 0
    return pl.read_parquet(out)


@pytest.mark.parametrize("ids", ["int", "str"])
@pytest.mark.parametrize("tie", ["trec", "rank"])
def test_pyterrier_parquet_run_and_qrels(tmp_path, ids, tie):
    run, qrels = _pyterrier(ids)
    run.write_parquet(tmp_path / "bm25.parquet")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    ref = _reference(tmp_path / "qrels.parquet", {"bm25": tmp_path / "bm25.parquet"}, tie_break=tie)
    assert ref.filter(pl.col("measure") == "map").get_column("value").sum() > 1  # real values
    got = _cli_per_query(tmp_path, tmp_path / "qrels.parquet", [tmp_path / "bm25.parquet"],
                         "--tie-break", tie)
    assert got.equals(ref)  # bit for bit, in the same order
    assert got.schema["query_id"] == (pl.Int64 if ids == "int" else pl.Utf8)
    res = evaluate_files(tmp_path / "qrels.parquet", tmp_path / "bm25.parquet", MEASURES, tie_break=tie,
                         max_rows_per_chunk=50)  # many chunks, streamed
    assert res.per_query.equals(ref) and res.stats.mode == {"bm25": "stream"}
    assert res.aggregate.equals(fasteval.aggregate(ref))


def test_rank_tie_break_follows_the_aliased_rank_column(tmp_path):
    """--tie-break rank reads the `position` column (an alias of rank): reversing it
    changes the values, as it does for fasteval.evaluate."""
    run, qrels = _pyterrier("str")
    run = run.rename({"rank": "position"}).with_columns(-pl.col("position"))
    run.write_parquet(tmp_path / "r.parquet")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    ref = _reference(tmp_path / "qrels.parquet", {"r": tmp_path / "r.parquet"}, tie_break="rank")
    trec = _reference(tmp_path / "qrels.parquet", {"r": tmp_path / "r.parquet"})
    assert not ref.equals(trec)
    got = _cli_per_query(tmp_path, tmp_path / "qrels.parquet", [tmp_path / "r.parquet"], "--tie-break", "rank")
    assert got.equals(ref)


@pytest.mark.parametrize("case", ["qid and query_id", "QID and qid", "docid and docno"])
def test_ambiguous_columns_choose_as_read_run(tmp_path, case):
    """Two columns that both name the query (or the document): the one read_run takes (the
    first alias present, an exact name before a case variant; docno before docid) holds the
    real ids, the other ids matching nothing; fasteval eval takes the same one."""
    run, qrels = _pyterrier("str")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    other_q = pl.format("x{}", "qid")
    table = {
        "qid and query_id": run.select(pl.col("qid").alias("query_id"), other_q.alias("qid"), "docno", "score"),
        "QID and qid": run.select(other_q.alias("QID"), "qid", "docno", "score"),
        # PyTerrier's frames: docid is Terrier's internal number, docno the collection's id
        "docid and docno": run.select("qid", pl.int_range(pl.len()).alias("docid"), "docno", "score"),
    }[case]
    table.write_parquet(tmp_path / "amb.parquet")
    ref = _reference(tmp_path / "qrels.parquet", {"amb": tmp_path / "amb.parquet"})
    assert ref.filter(pl.col("measure") == "map").get_column("value").sum() > 1  # the real ids
    got = _cli_per_query(tmp_path, tmp_path / "qrels.parquet", [tmp_path / "amb.parquet"])
    assert got.equals(ref)


def test_missing_column_refused_as_by_read_run(tmp_path, capsys):
    """A table with no score under any name read_run accepts: refused with one line naming
    the file and the column."""
    pl.DataFrame({"qid": ["q1"], "docno": ["d1"], "points": [1.0]}).write_parquet(tmp_path / "r.parquet")
    with pytest.raises(InputError, match="no score column"):
        fasteval.read_run(tmp_path / "r.parquet")
    pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]}).write_parquet(tmp_path / "q.parquet")
    assert main(["eval", str(tmp_path / "q.parquet"), str(tmp_path / "r.parquet"), "-m", "map"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"fasteval: error: {tmp_path / 'r.parquet'}, column 'score': "
                                              "missing column(s) ['score']")


def test_partitioned_run_with_aliases_and_parts_spelled_differently(tmp_path):
    """Rows not grouped by query (re-read hash-partitioned), two runs in a `runid` column,
    spread over parts that spell the columns differently (qid/docno/sim, Query_ID/DOCID/score)."""
    a, qrels = _pyterrier("int", seed=1)
    b, _ = _pyterrier("int", seed=2)
    qrels.write_parquet(tmp_path / "qrels.parquet")
    both = pl.concat([a.with_columns(pl.lit("a").alias("runid")), b.with_columns(pl.lit("b").alias("runid"))])
    both = both.drop("rank").sample(fraction=1.0, shuffle=True, seed=3)  # not grouped by query
    d = tmp_path / "runs"
    d.mkdir()
    half = both.height // 2
    both.head(half).rename({"score": "sim"}).write_parquet(d / "part-0.parquet")
    both.tail(both.height - half).rename({"qid": "Query_ID", "docno": "DOCID", "runid": "run"}).write_parquet(
        d / "part-1.parquet")
    whole = tmp_path / "whole.parquet"  # the same rows in one file, for the readers
    both.write_parquet(whole)
    q = fasteval.read_qrels(tmp_path / "qrels.parquet")
    ref = fasteval.evaluate(q, fasteval.read_run(whole), MEASURES)  # run_id column: runs a, b
    res = evaluate_files(tmp_path / "qrels.parquet", str(d / "part-*.parquet"), MEASURES, max_rows_per_chunk=200)
    assert res.stats.mode == {"a": "partition", "b": "partition"}
    assert res.per_query.equals(ref)
    assert res.aggregate.equals(fasteval.aggregate(ref))
    agg = tmp_path / "agg.parquet"
    got = _cli_per_query(tmp_path, tmp_path / "qrels.parquet", [d], "--max-rows-per-chunk", "200",
                         "--aggregate-out", str(agg))
    keys = ["run_id", "query_id", "measure"]  # the file is written as the partitions are scored
    assert got.sort(keys).equals(ref.sort(keys))
    assert pl.read_parquet(agg).equals(fasteval.aggregate(ref))


def test_hive_folders_with_aliased_columns(tmp_path):
    a, qrels = _pyterrier("str", seed=4)
    b, _ = _pyterrier("str", seed=5)
    qrels.write_parquet(tmp_path / "qrels.parquet")
    root = tmp_path / "runs"
    for name, run in (("a", a), ("b", b)):
        (root / f"run_id={name}").mkdir(parents=True)
        run.write_parquet(root / f"run_id={name}" / "0.parquet")
    ref = _reference(tmp_path / "qrels.parquet", {"a": root / "run_id=a" / "0.parquet",
                                                    "b": root / "run_id=b" / "0.parquet"})
    got = _cli_per_query(tmp_path, tmp_path / "qrels.parquet", [root])
    assert got.equals(ref)
    assert fasteval.read_run(root).get_column("run_id").unique(maintain_order=True).to_list() == ["a", "b"]


def test_in_memory_table_with_aliases(tmp_path):
    run, qrels = _pyterrier("int")
    q = fasteval.read_qrels(qrels)
    ref = fasteval.evaluate(q, {"bm25": run}, MEASURES)
    res = evaluate_files(q, {"bm25": run}, MEASURES)
    assert res.per_query.equals(ref)


@pytest.mark.parametrize("dtype", [pl.Decimal(10, 2), pl.Boolean, pl.Float32])
def test_scores_of_other_numeric_types_as_read_run(tmp_path, dtype):
    """A decimal score (SQL exports), a boolean one or float32, under an alias: converted to
    Float64 as read_run converts them, streamed or partitioned."""
    run, qrels = _pyterrier("str", seed=12)
    qrels.write_parquet(tmp_path / "qrels.parquet")
    score = pl.col("score") > 0.5 if dtype == pl.Boolean else pl.col("score").cast(dtype)
    run = run.select("qid", "docno", score.alias("sim"))
    run.write_parquet(tmp_path / "r.parquet")
    ref = _reference(tmp_path / "qrels.parquet", {"r": tmp_path / "r.parquet"})
    assert ref.filter(pl.col("measure") == "map").get_column("value").sum() > 1
    for spec, chunk in ((tmp_path / "r.parquet", None), (tmp_path / "r.parquet", 30)):
        res = evaluate_files(tmp_path / "qrels.parquet", spec, MEASURES, max_rows_per_chunk=chunk)
        assert res.per_query.equals(ref)
    shuffled = tmp_path / "s.parquet"
    run.sample(fraction=1.0, shuffle=True, seed=1).write_parquet(shuffled)
    res = evaluate_files(tmp_path / "qrels.parquet", shuffled, MEASURES, max_rows_per_chunk=100)
    assert res.stats.mode == {"s": "partition"}
    ref = _reference(tmp_path / "qrels.parquet", {"s": shuffled})
    assert res.per_query.equals(ref)


def _converted(run: pl.DataFrame) -> pl.DataFrame:
    """The run with the types read_run converts: float query ids, decimal doc ids, text
    scores, float ranks."""
    return run.select(pl.col("qid").cast(pl.Float64), pl.col("docno").cast(pl.Decimal(20, 0)),
                      pl.col("score").cast(pl.Utf8), pl.col("rank").cast(pl.Float64))


@pytest.mark.parametrize("tie", ["trec", "rank"])
def test_types_read_run_converts(tmp_path, tie):
    """Integral float and decimal ids, numeric text scores, float ranks: converted as read_run
    converts them (integers, Float64, Int64), streamed, partitioned, parts of several types."""
    run, qrels = _pyterrier("int", seed=13)
    qrels.write_parquet(tmp_path / "qrels.parquet")
    _converted(run).write_parquet(tmp_path / "r.parquet")
    ref = _reference(tmp_path / "qrels.parquet", {"r": tmp_path / "r.parquet"}, tie_break=tie)
    assert ref.schema["query_id"] == pl.Int64
    assert ref.filter(pl.col("measure") == "map").get_column("value").sum() > 1
    res = evaluate_files(tmp_path / "qrels.parquet", tmp_path / "r.parquet", MEASURES, tie_break=tie,
                         max_rows_per_chunk=50)
    assert res.per_query.equals(ref) and res.stats.mode == {"r": "stream"}
    d = tmp_path / "parts"  # shuffled, half of the rows converted, half plain
    d.mkdir()
    mixed = run.sample(fraction=1.0, shuffle=True, seed=2)
    _converted(mixed.head(300)).write_parquet(d / "p0.parquet")
    mixed.slice(300).write_parquet(d / "p1.parquet")
    mixed.write_parquet(tmp_path / "whole.parquet")
    ref = _reference(tmp_path / "qrels.parquet", {"parts": tmp_path / "whole.parquet"}, tie_break=tie)
    res = evaluate_files(tmp_path / "qrels.parquet", str(d / "*.parquet"), MEASURES, tie_break=tie,
                         max_rows_per_chunk=100)
    assert res.per_query.equals(ref) and res.stats.mode == {"parts": "partition"}


@pytest.mark.parametrize("column, value, message", [
    ("qid", 2.5, "query_id must be a string or an integer, got the float 2.5"),
    ("score", "abc", "score is not a number: 'abc'"),
    ("rank", 1.5, "rank must be an integer, got 1.5"),
])
def test_conversion_errors_as_read_run(tmp_path, capsys, column, value, message):
    """A value read_run cannot convert: the same message, file, row and column."""
    run, qrels = _pyterrier("int", seed=14)
    qrels.write_parquet(tmp_path / "qrels.parquet")
    bad = _converted(run).with_columns(
        pl.when(pl.int_range(pl.len()) == 123).then(pl.lit(value)).otherwise(pl.col(column)).alias(column))
    path = tmp_path / "bad.parquet"
    bad.write_parquet(path, row_group_size=50)
    with pytest.raises(InputError) as err:
        fasteval.read_run(path)
    expected = f"{path}, row 123, column '{err.value.column}': {message}"
    assert str(err.value) == expected
    args = ["eval", str(tmp_path / "qrels.parquet"), str(path), "-m", "map", "--max-rows-per-chunk", "40"]
    assert main([*args, *(["--tie-break", "rank"] if column == "rank" else [])]) == 2
    assert capsys.readouterr().err.strip() == f"fasteval: error: {expected}"
