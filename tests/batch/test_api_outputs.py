"""evaluate_files(out=...): the per-query file has the format its suffix names."""

from __future__ import annotations

import json

import polars as pl
import pytest

import fasteval
from fasteval.batch import evaluate_files
from fasteval.errors import ParameterError

QRELS = pl.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"],
                      "relevance": [1, 0, 2]})
RUN = pl.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"],
                    "score": [1.0, 2.0, 1.0]})


@pytest.mark.parametrize("wide", [False, True])
def test_json_outputs_are_json(tmp_path, wide) -> None:
    expected = fasteval.evaluate(QRELS, RUN, ["map", "P_1"]).with_columns(
        pl.lit("run_0").alias("run_id"))
    if wide:
        expected = expected.pivot(on="measure", index=["run_id", "query_id"], values="value")
    for name in ("pq.json", "pq.jsonl", "pq.ndjson"):
        path = tmp_path / name
        res = evaluate_files(QRELS, [RUN], ["map", "P_1"], out=path, wide=wide,
                             aggregate_out=tmp_path / "agg.csv")
        assert res.per_query is None
        text = path.read_text()
        rows = (json.loads(text) if name.endswith(".json")
                else [json.loads(line) for line in text.splitlines()])
        assert rows == expected.to_dicts()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "agg.csv", "pq.json", "pq.jsonl", "pq.ndjson"]


@pytest.mark.parametrize("name", ["pq.txt", "pq.trec"])
def test_text_report_suffix_refused_before_work(tmp_path, name) -> None:
    with pytest.raises(ParameterError, match=r"out must be a \.parquet, \.csv"):
        evaluate_files(QRELS, [RUN], ["map"], out=tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_tsv_and_unknown_suffix(tmp_path) -> None:
    evaluate_files(QRELS, [RUN], ["map"], out=tmp_path / "pq.tsv")
    assert (tmp_path / "pq.tsv").read_text().splitlines()[0] == "run_id\tquery_id\tmeasure\tvalue"
    evaluate_files(QRELS, [RUN], ["map"], out=tmp_path / "pq.out")  # parquet
    assert pl.read_parquet(tmp_path / "pq.out").get_column("value").to_list() == [0.5, 1.0]


def test_runs_as_pandas_arrow_dicts_and_named_mappings(tmp_path) -> None:
    """Every in-memory run fasteval.evaluate takes; a mapping names its runs."""
    path = tmp_path / "bm25.parquet"
    RUN.write_parquet(path)
    expected = fasteval.aggregate(fasteval.evaluate(QRELS, RUN, ["map"])).get_column("value")[0]
    as_dict = {"1": {"a": 1.0, "b": 2.0}, "2": {"a": 1.0}}
    got = evaluate_files(QRELS, [RUN.to_pandas(), RUN.to_arrow(), as_dict], ["map"]).aggregate
    assert got.rows() == [(f"run_{i}", "map", expected) for i in range(3)]
    tagged = RUN.with_columns(pl.lit("other").alias("run_id"))  # the given name wins
    got = evaluate_files(QRELS, {"x": RUN.to_pandas(), "y": tagged, "z": path}, ["map"]).aggregate
    assert got.rows() == [(n, "map", expected) for n in "xyz"]


def test_named_path_of_several_runs_refused(tmp_path) -> None:
    for n in ("a", "b"):
        RUN.write_parquet(tmp_path / f"{n}.parquet")
    with pytest.raises(fasteval.errors.InputError, match=r"run 'x': a named path must hold one"):
        evaluate_files(QRELS, {"x": tmp_path}, ["map"])


@pytest.mark.parametrize("chunk", [None, 1])
def test_filled_queries_count_as_evaluated(tmp_path, chunk) -> None:
    # complete=True (-c): the report of a file job counts as Evaluator.report does
    qrels = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "b", "c"], "relevance": [1, 1, 1]})
    run = pl.DataFrame({"query_id": ["q1", "q9"], "doc_id": ["a", "x"], "score": [1.0, 1.0]})
    qrels.write_parquet(tmp_path / "qrels.parquet")
    run.write_parquet(tmp_path / "run.parquet")
    ev = fasteval.Evaluator(qrels, ["map"], complete=True)
    ev.evaluate(run)
    res = evaluate_files(tmp_path / "qrels.parquet", [tmp_path / "run.parquet"], ["map"], complete=True,
                         max_rows_per_chunk=chunk)
    assert (ev.report.evaluated, ev.report.filled, ev.report.dropped_not_in_qrels) == (3, 2, 1)
    rep = res.stats.report
    assert (rep["evaluated"], rep["filled"], rep["dropped_not_in_qrels"]) == (3, 2, 1)
    assert res.per_query.height == 3


def test_json_output_refuses_nan_values(tmp_path) -> None:
    # -J: q2's ranking is empty, its iprec_at_recall_0.00 is 0 / 0; JSON would write null
    from fasteval.errors import InputError

    (tmp_path / "q.qrels").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 1.0 t\nq2 Q0 z 1 1.0 t\n")
    out = tmp_path / "res.jsonl"
    with pytest.raises(InputError, match=r"res\.jsonl, row \d+, column 'value': JSON cannot hold nan"):
        evaluate_files(tmp_path / "q.qrels", [tmp_path / "r.run"], ["iprec_at_recall_0.00"], out=out,
                       judged_only=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.qrels", "r.run"]  # nothing written, no temp
