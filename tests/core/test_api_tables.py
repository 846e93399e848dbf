"""The Python API on in-memory tables: columns known by an alias are read as read_run reads
them, whichever kind of table holds them (polars, pandas), for evaluate and evaluate_files."""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.batch import evaluate_files

QRELS = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": [10, 11, 20], "relevance": [1, 0, 1]})
# two runs in one table, named in PyTerrier's `runid` column: x ranks 10 alone for query 1,
# y ranks the non-relevant 11 alone
RUNS = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": [10, 11, 20], "score": [1.0, 2.0, 3.0],
                     "runid": ["x", "y", "x"]})
EXPECTED = [("x", 1, "map", 1.0), ("x", 2, "map", 1.0), ("y", 1, "map", 0.0)]


@pytest.mark.parametrize("alias", ["runid", "system", "run_name", "RunID"])
def test_polars_run_name_alias_splits_runs(alias):
    table = RUNS.rename({"runid": alias})
    assert fasteval.evaluate(QRELS, table, "map").rows() == EXPECTED
    # the same table as pandas always did
    assert fasteval.evaluate(QRELS, table.to_pandas(), "map").rows() == EXPECTED
    assert fasteval.Evaluator(QRELS, "map").evaluate(table).rows() == EXPECTED


def test_evaluate_files_run_name_alias_splits_runs():
    assert evaluate_files(QRELS, RUNS, ["map"]).per_query.rows() == EXPECTED


def test_polars_rank_alias_is_the_rank():
    # `position` is read_run's alias of rank: tie_break="rank" ranks 11 (position 2) last
    run = pl.DataFrame({"query_id": [1, 1], "doc_id": [10, 11], "score": [1.0, 2.0],
                        "position": [1, 2]})
    res = fasteval.evaluate(QRELS, run, "P@1", tie_break="rank")
    assert res.rows() == [("run", 1, "P@1", 1.0)]


@pytest.mark.parametrize("dtype", [pl.Int32, pl.UInt8, pl.UInt64, pl.Int16])
def test_results_query_id_is_int64_for_narrow_integer_qrels(dtype):
    # as read_qrels gives (and a pandas table of the same ids gave): Int64
    qrels = QRELS.with_columns(pl.col("query_id", "doc_id").cast(dtype))
    run = RUNS.drop("runid")
    for res in (fasteval.evaluate(qrels, run, "map"),
                fasteval.evaluate(qrels, run, "map", complete=True),
                evaluate_files(qrels, run, ["map"]).per_query):
        assert res.schema["query_id"] == pl.Int64
        assert res.select("query_id", "value").rows() == [(1, 0.5), (2, 1.0)]


def test_aggregate_takes_lazy_pandas_and_arrow_results():
    res = fasteval.evaluate({"q1": {"a": 1}, "q2": {"b": 1}},
                            {"q1": {"a": 1.0}, "q2": {"c": 1.0, "b": 0.5}}, ["map", "num_ret"])
    expected = [("run", "map", 0.75), ("run", "num_ret", 3.0)]  # a mean and a sum
    for table in (res, res.lazy(), res.to_pandas(), res.to_arrow(),
                  res.to_pandas().set_index(["run_id", "query_id"])):
        assert fasteval.aggregate(table).rows() == expected
    with pytest.raises(fasteval.errors.ParameterError, match="results must be a table"):
        fasteval.aggregate([("run", "q1", "map", 1.0)])


def test_mapping_of_ranx_runs():
    ranx = pytest.importorskip("ranx")
    qrels = ranx.Qrels({"q1": {"a": 1, "b": 0}})
    runs = {"bm25": ranx.Run({"q1": {"a": 1.0, "b": 0.5}}),
            "dense": ranx.Run({"q1": {"a": 0.5, "b": 1.0}})}
    expected = [("bm25", "q1", "P@1", 1.0), ("dense", "q1", "P@1", 0.0)]
    assert fasteval.evaluate(qrels, runs, "P@1").rows() == expected
    assert evaluate_files(qrels, runs, ["P@1"]).per_query.rows() == expected


def test_run_id_argument_refused_for_a_table_of_several_runs():
    # the rankings of r1 and r2 for q1 would be scored as one ranking of three documents
    table = pl.DataFrame({"run_id": ["r1", "r2", "r2"], "query_id": [1, 1, 1],
                          "doc_id": [10, 11, 20], "score": [1.0, 2.0, 3.0]})
    with pytest.raises(fasteval.errors.ParameterError, match=r"run_id must be None .* 2 runs"):
        fasteval.evaluate(QRELS, table, "map", run_id="X")
    with pytest.raises(fasteval.errors.ParameterError, match="run_id must be None"):
        fasteval.evaluate(QRELS, table.rename({"run_id": "system"}).to_pandas(), "map", run_id="X")
    assert fasteval.evaluate(QRELS, table, "map").rows() == [("r1", 1, "map", 1.0),
                                                            ("r2", 1, "map", 0.0)]
    # one run in the column: the argument names it
    one = table.filter(pl.col("run_id") == "r1")
    assert fasteval.evaluate(QRELS, one, "map", run_id="X").rows() == [("X", 1, "map", 1.0)]


def test_measure_built_directly_keeps_canonical_names():
    from fasteval import Measure, parse_measure
    from fasteval.errors import ParameterError

    np = pytest.importorskip("numpy")
    m = Measure("P", cutoff=np.int64(5))  # numpy's integer: the same measure as P@5
    assert m == parse_measure("P@5") and m.name == "P_5" and type(m.cutoff) is int
    for bad, match in [(lambda: Measure("P", cutoff=5.0), "P's cutoff must be an integer"),
                       (lambda: Measure("P", cutoff=True), "P's cutoff must be an integer"),
                       (lambda: Measure("ndcg_cut", cutoff=1.5), "must be an integer"),
                       (lambda: Measure("map", cutoff=3), "map's cutoff must be unset")]:
        with pytest.raises(ParameterError, match=match):
            bad()  # named P_5.0, P_True, ndcg_cut_1.5 (scored as 1) and map (scored as map)
    # P without a cutoff was scored as NaN under the name P_None
    with pytest.raises(ParameterError, match="P's cutoff must be an integer from 1"):
        fasteval.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, [Measure("P")])


def test_mapping_of_open_run_files():
    import io

    qrels = {"q1": {"a": 1, "b": 0}}
    runs = {"bm25": io.BytesIO(b"q1 Q0 a 1 2.0 x\nq1 Q0 b 2 1.0 x\n"),
            "dense": io.StringIO("q1 Q0 b 1 2.0 x\nq1 Q0 a 2 1.0 x\n")}
    assert fasteval.evaluate(qrels, runs, "P@1").rows() == [("bm25", "q1", "P@1", 1.0),
                                                           ("dense", "q1", "P@1", 0.0)]


@pytest.mark.parametrize("dtype", [pl.Float32, pl.Float64])
def test_aggregate_of_float32_values(dtype):
    # results stored as float32 (to halve a parquet file): means and sums in double
    res = pl.DataFrame({"run_id": ["r"] * 4, "query_id": ["a", "b"] * 2,
                        "measure": ["map", "map", "num_ret", "num_ret"],
                        "value": [0.5, 1.0, 10.0, 20.0]}).with_columns(pl.col("value").cast(dtype))
    out = fasteval.aggregate(res)
    assert out.schema["value"] == pl.Float64
    assert out.rows() == [("r", "map", 0.75), ("r", "num_ret", 30.0)]
    with pytest.raises(fasteval.errors.InputError, match="column value holds String"):
        fasteval.aggregate(res.with_columns(pl.col("value").cast(pl.Utf8)))


def test_report_after_a_failed_call_is_empty():
    from fasteval.prepare import Report

    ev = fasteval.Evaluator({"q1": {"a": 1}, "q2": {"b": 1}}, "P@1")
    ev.evaluate({"q1": {"a": 1.0}, "q3": {"a": 1.0}})
    assert (ev.report.run_queries, ev.report.evaluated, ev.report.dropped_not_in_qrels,
            ev.report.missing_from_run) == (2, 1, 1, 1)
    for bad in ({"q1": {"a": float("nan")}},  # refused while prepared
                {"q1": {"a": "high"}}):       # refused while read
        with pytest.raises(fasteval.errors.InputError):
            ev.evaluate(bad)
        assert ev.report == Report()  # not the counts of the call before
    assert ev.evaluate({"q2": {"b": 1.0}}).rows() == [("run", "q2", "P@1", 1.0)]
    assert (ev.report.run_queries, ev.report.evaluated, ev.report.missing_from_run) == (1, 1, 1)


def test_data_warning_names_the_callers_line():
    # attributed to fasteval/evaluation.py, the warning showed once per process at most
    from fasteval.errors import DataWarning

    qrels = {"q1": {"a": 1}}
    with pytest.warns(DataWarning, match="its one query is not in the qrels") as rec:
        fasteval.evaluate(qrels, {"zz": {"a": 1.0}}, "map")
    assert rec[0].filename == __file__
    with pytest.warns(DataWarning) as rec:
        fasteval.Evaluator(qrels, "map").evaluate({"zz": {"a": 1.0}})
    assert rec[0].filename == __file__


@pytest.mark.parametrize("kind", ["polars", "pandas", "parquet file", "alias column"])
def test_mapping_key_over_several_runs_is_refused(kind, tmp_path):
    """``{name: table}`` whose run_id column names two runs: scored under one name their
    rankings were merged (x's 10 and y's 11 ranked together as one run of 'bm25')."""
    table = RUNS.rename({"runid": "run_id"}) if kind != "alias column" else RUNS
    value = {"polars": table, "pandas": table.to_pandas(), "alias column": table}.get(kind)
    if kind == "parquet file":
        value = tmp_path / "runs.parquet"
        table.write_parquet(value)
    with pytest.raises(fasteval.ParameterError) as err:
        fasteval.evaluate(QRELS, {"bm25": value}, ["map"])
    assert str(err.value) == (
        "run must be one run per key of a {name: run} mapping (give a table with several runs "
        "itself, not under a key), got 'bm25': a table whose run_id column names 2 runs (x, y)")


def test_mapping_key_over_one_named_run_scores_under_the_key():
    one = RUNS.filter(pl.col("runid") == "x").rename({"runid": "run_id"})
    res = fasteval.evaluate(QRELS, {"bm25": one}, ["map"])
    assert res.rows() == [("bm25", 1, "map", 1.0), ("bm25", 2, "map", 1.0)]


@pytest.mark.parametrize("kind", ["polars", "polars aliases", "pandas", "arrow", "lazy", "dict"])
@pytest.mark.parametrize("complete", [False, True])
def test_an_empty_run_table_is_refused_whatever_holds_it(kind, complete):
    """An empty run is an error, as an empty run file is (trec_eval reads no run from it):
    never an empty result, which would drop the run from a comparison without a word."""
    from fasteval.errors import InputError

    empty = RUNS.drop("runid").clear()
    table = {"polars": empty, "polars aliases": empty.rename({"query_id": "qid"}),
             "pandas": empty.to_pandas(), "arrow": empty.to_arrow(), "lazy": empty.lazy(),
             "dict": {}}[kind]
    with pytest.raises(InputError, match="empty"):
        fasteval.evaluate(QRELS, table, "map", complete=complete)
    with pytest.raises(InputError, match=r"^bm25: the run table is empty \(no rows\)$"):
        fasteval.evaluate(QRELS, {"bm25": empty, "x": RUNS.drop("runid")}, "map")
