"""A batch job's per-query rows and aggregates equal fasteval.evaluate's bit for bit, in
the same order, however the runs were laid out, chunked or partitioned.

Aggregates add per-query values in row order, so a job that listed queries in chunk or
partition order (or the ``-c`` filled queries after the scored ones) had means that
differed from the in-memory ones in the last bits."""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.batch import evaluate_files
from fasteval.datasets import SynthSpec, generate

MEASURES = ["map", "gm_map", "P@5", "ndcg@10", "num_ret", "recip_rank", "bpref"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    qrels, runs = generate(SynthSpec(queries=60, depth=15, runs=3, seed=3))
    d = tmp_path_factory.mktemp("order")
    qrels.write_parquet(d / "qrels.parquet")
    for name, run in runs.items():
        (d / "shuffled").mkdir(exist_ok=True)
        run.sample(fraction=1.0, shuffle=True, seed=1).write_parquet(d / "shuffled" / f"{name}.parquet",
                                                                      row_group_size=50)
        (d / "desc").mkdir(exist_ok=True)
        run.sort("query_id", descending=True, maintain_order=True).write_parquet(d / "desc" / f"{name}.parquet")
    return d, qrels, runs


def _same(res, qrels, runs, **options):
    mem = fasteval.evaluate(qrels, runs, MEASURES, **options)
    assert res.per_query.equals(mem)  # same rows, same order, same bits
    assert res.aggregate.equals(fasteval.aggregate(mem))


@pytest.mark.parametrize("folder, max_rows, mode", [("shuffled", 7, "partition"), ("shuffled", None, "stream"),
                                                    ("desc", 50, "stream")])
@pytest.mark.parametrize("complete", [False, True])
def test_aggregates_equal_in_memory_bit_for_bit(data, folder, max_rows, mode, complete):
    d, qrels, runs = data
    shown = {k: pl.read_parquet(d / folder / f"{k}.parquet") for k in runs}
    res = evaluate_files(d / "qrels.parquet", d / folder, MEASURES, max_rows_per_chunk=max_rows,
                         complete=complete)
    assert set(res.stats.mode.values()) == {mode}
    _same(res, qrels, shown, complete=complete)
    if complete:
        assert res.stats.report["filled"] == 7


def test_partitioned_run_id_table_keeps_runs_in_input_order(data, tmp_path):
    d, qrels, runs = data
    table = pl.concat([runs[k].with_columns(pl.lit(k).alias("run_id")) for k in ("run_2", "run_0", "run_1")])
    table = table.sample(fraction=1.0, shuffle=True, seed=5)
    table.write_parquet(tmp_path / "multi.parquet", row_group_size=100)
    order = table.get_column("run_id").unique(maintain_order=True).to_list()
    res = evaluate_files(d / "qrels.parquet", tmp_path / "multi.parquet", MEASURES, max_rows_per_chunk=30,
                         complete=True)
    assert set(res.stats.mode.values()) == {"partition"}
    assert res.stats.runs == order
    _same(res, qrels, table, complete=True)


def test_query_without_judgments_split_across_chunks_counted_once(data, tmp_path):
    d, qrels, runs = data
    run = runs["run_0"]
    judged = set(qrels.get_column("query_id").to_list())
    lone = next(q for q in run.get_column("query_id").unique(maintain_order=True).to_list() if q not in judged)
    rows = run.filter(pl.col("query_id") == lone)
    assert rows.height > 1
    moved = pl.concat([rows.head(1), run.filter(pl.col("query_id") != lone), rows.slice(1)])
    moved.write_parquet(tmp_path / "r.parquet")
    ev = fasteval.Evaluator(qrels, MEASURES)
    mem = ev.evaluate(moved, run_id="r")
    res = evaluate_files(d / "qrels.parquet", tmp_path / "r.parquet", MEASURES, max_rows_per_chunk=20)
    dropped = moved.select("query_id").unique().height - mem.get_column("query_id").n_unique()
    assert res.stats.report["dropped_not_in_qrels"] == ev.report.dropped_not_in_qrels == dropped
    assert res.stats.report["run_queries"] == ev.report.run_queries == moved.get_column("query_id").n_unique()
    assert res.stats.queries == ev.report.run_queries
    assert res.per_query.equals(mem)


def test_deduplicated_rows_counted_alike_in_memory_and_however_chunked(data, tmp_path):
    d, qrels, runs = data
    run = runs["run_0"].with_columns(pl.int_range(1, pl.len() + 1).over("query_id").alias("_n"))
    extra = pl.concat([run.filter(pl.col("_n") <= 2).with_columns(pl.col("score") + 0.5),
                       run.filter(pl.col("_n") == 3).with_columns(pl.col("score") - 5)]).drop("_n")
    run = pl.concat([run.drop("_n"), extra]).sample(fraction=1.0, shuffle=True, seed=3)
    run.write_parquet(tmp_path / "dup.parquet", row_group_size=40)
    judged = set(qrels.get_column("query_id").to_list())
    # duplicates of queries with judgments only: those of dropped queries are never read
    expected = extra.filter(pl.col("query_id").is_in(list(judged))).height
    assert expected < extra.height  # some duplicated queries have no judgments
    ev = fasteval.Evaluator(qrels, MEASURES, duplicates="keep_best")
    mem = ev.evaluate(run, run_id="dup")
    assert ev.report.deduplicated_rows == expected
    for max_rows in (1, 9, 50, None):
        res = evaluate_files(d / "qrels.parquet", tmp_path / "dup.parquet", MEASURES, duplicates="keep_best",
                             max_rows_per_chunk=max_rows)
        assert res.stats.report["deduplicated_rows"] == expected, max_rows
        assert res.per_query.equals(mem)
        assert res.aggregate.equals(fasteval.aggregate(mem))


def test_deduplicated_rows_of_a_dropped_query_not_counted():
    qrels = {"q1": {"a": 1}}
    ev = fasteval.Evaluator(qrels, ["P@5"], duplicates="keep_best")
    dropped_only = pl.DataFrame({"query_id": ["x", "x", "x"], "doc_id": ["a", "a", "b"], "score": [1.0, 2.0, 3.0]})
    both = pl.concat([dropped_only, pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "a"],
                                                  "score": [1.0, 2.0]})])
    with pytest.warns(fasteval.DataWarning, match="its one query is not in the qrels"):
        ev.evaluate(dropped_only)
    assert ev.report.deduplicated_rows == 0
    ev.evaluate(both)  # x's duplicate is not counted, though q1's sends the table through dedup
    assert (ev.report.deduplicated_rows, ev.report.dropped_not_in_qrels, ev.report.evaluated) == (1, 1, 1)


@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize("max_rows", [None, 1])
def test_integer_run_against_text_qrels_with_non_numeric_ids(tmp_path, complete, max_rows):
    # text qrels whose ids include spellings no integer has ('007', '1e3'): an integer run
    # matches '7' and '1000' by their decimal spelling; the job lists the queries as
    # fasteval.evaluate does (it failed casting '1e3' to an integer)
    (tmp_path / "qrels.txt").write_text(
        "007 0 7 1\n7 0 007 1\n7 0 1 1\n1e3 0 7 2\n1000 0 7 1\n01 0 1 1\n1 0 1 1\n")
    run = pl.DataFrame({"query_id": [7, 7, 1000, 1], "doc_id": [7, 1, 7, 1], "score": [1.0, 1.0, 2.0, 0.0]})
    run.write_parquet(tmp_path / "run.parquet")
    qrels = fasteval.read_qrels(tmp_path / "qrels.txt")
    res = evaluate_files(tmp_path / "qrels.txt", tmp_path / "run.parquet", ["num_rel_ret", "num_ret"],
                         complete=complete, max_rows_per_chunk=max_rows)
    mem = fasteval.evaluate(qrels, {"run": run}, ["num_rel_ret", "num_ret"], complete=complete)
    assert res.per_query.drop("run_id").equals(mem.drop("run_id"))
    # by hand: query 7 retrieves doc 1 (judged 1 under '7'; int doc 7 is not '007'),
    # query 1000 doc 7 (judged 1), query 1 doc 1 (judged 1)
    got = {(q, m): v for _, q, m, v in res.per_query.iter_rows()}
    assert got[("7", "num_rel_ret")] == 1 and got[("7", "num_ret")] == 2
    assert got[("1000", "num_rel_ret")] == 1 and got[("1", "num_rel_ret")] == 1
    assert (("1e3", "num_ret") in got) == complete and (("007", "num_ret") in got) == complete
