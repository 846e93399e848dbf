"""Tie cases from issue threads, and each behaviour keyword against a hand-worked value."""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl
import pytest

import fasteval
from fasteval.cli.trec_eval_cmd import parse_args, run_trec_eval
from fasteval.errors import FastevalError, InputError, ParameterError
from fasteval.measures import parse_measure
from tests._data import trec_eval_file

TIES = json.loads(trec_eval_file("tie_cases.json").read_text())["cases"]


@pytest.mark.parametrize("case", TIES, ids=[c["id"] for c in TIES])
def test_tie_cases(case: dict, tmp_path: Path) -> None:
    q = tmp_path / "qrels"
    r = tmp_path / "run"
    q.write_text("\n".join(case["qrels_lines"]) + "\n")
    r.write_text("\n".join(case["run_lines"]) + "\n")
    buf = io.StringIO()
    assert run_trec_eval(parse_args([*case["flags"], str(q), str(r)]), out=buf) == 0
    got = {line.split("\t")[0].strip(): line.split("\t")[2] for line in buf.getvalue().splitlines()}
    for measure, per_q in case["expected"].items():
        assert got[measure] == per_q["all"]
        assert got[measure] != case["wrong_if_ascending"][measure]["all"]


QRELS = pl.DataFrame(
    {"query_id": ["q"] * 4, "doc_id": ["a", "b", "c", "d"], "relevance": [1, 0, 2, -1]}
)


def run_of(docs: list[str], scores: list[float], **extra) -> pl.DataFrame:
    return pl.DataFrame({"query_id": ["q"] * len(docs), "doc_id": docs, "score": scores, **extra})


def value(res: pl.DataFrame, measure: str) -> float:
    """The value of ``measure`` (any spelling): results name measures as asked."""
    want = parse_measure(measure).name
    (got,) = [v for m, v in zip(res["measure"], res["value"], strict=True)
              if parse_measure(m).name == want]
    return got


def test_labels_judged_unjudged_and_absent() -> None:
    # ranking: x (absent), d (grade -1: pooled, unjudged), a (1), b (0), c (2)
    run = run_of(["x", "d", "a", "b", "c"], [5, 4, 3, 2, 1])
    res = fasteval.evaluate(QRELS, run, ["num_rel", "num_rel_ret", "bpref", "unj@5",
                                         "num_nonrel_judged_ret", "P@5", "Judged@5"])
    assert value(res, "num_rel") == 2  # grades 1 and 2; the -1 judgment is not relevant
    assert value(res, "num_rel_ret") == 2
    assert value(res, "unj_5") == pytest.approx(2 / 5)  # x and d
    assert value(res, "num_nonrel_judged_ret") == 1  # b
    # bpref: a has 0 judged nonrel above -> 1; c has b above: 1 - min(1,2)/min(1,2) = 0
    assert value(res, "bpref") == pytest.approx(0.5)
    assert value(res, "judged_5") == pytest.approx(3 / 5)


def test_relevance_level_and_rel_override() -> None:
    run = run_of(["a", "c"], [2, 1])
    res = fasteval.evaluate(QRELS, run, ["P@2", "P(rel=2)@2", "ndcg"], relevance_level=2)
    assert value(res, "P_2") == 0.5
    assert value(res, "P_2(rel=2)") == 0.5
    # nDCG ignores the level: gains 1, 2 at ranks 1, 2 vs ideal 2, 1
    dcg = 1 + 2 / 1.584962500721156
    idcg = 2 + 1 / 1.584962500721156
    assert value(res, "ndcg") == pytest.approx(dcg / idcg)


def test_max_docs_applies_after_sort() -> None:
    run = run_of(["b", "a", "c"], [1, 3, 2])  # rank order a, c, b
    res = fasteval.evaluate(QRELS, run, ["num_ret", "P@2"], max_docs=1)
    assert value(res, "num_ret") == 1
    assert value(res, "P_2") == 0.5  # only a kept


def test_judged_only_drops_unjudged() -> None:
    run = run_of(["x", "a"], [2, 1])
    assert value(fasteval.evaluate(QRELS, run, ["recip_rank"]), "recip_rank") == 0.5
    res = fasteval.evaluate(QRELS, run, ["recip_rank", "num_ret"], judged_only=True)
    assert value(res, "recip_rank") == 1.0
    assert value(res, "num_ret") == 1


def test_tie_break_options() -> None:
    run = run_of(["a", "b"], [1.0, 1.0], rank=[2, 1])
    # trec: b > a byte-wise, so b (nonrelevant) first
    assert value(fasteval.evaluate(QRELS, run, "P@1"), "P_1") == 0.0
    assert value(fasteval.evaluate(QRELS, run, "P@1", tie_break="input"), "P_1") == 1.0
    assert value(fasteval.evaluate(QRELS, run, "P@1", tie_break="rank"), "P_1") == 0.0
    run2 = run.with_columns(pl.Series("rank", [1, 2]))
    assert value(fasteval.evaluate(QRELS, run2, "P@1", tie_break="rank"), "P_1") == 1.0


def test_complete_fills_missing_queries() -> None:
    qrels = pl.concat([QRELS, pl.DataFrame({"query_id": ["z"], "doc_id": ["a"],
                                            "relevance": [1]})])
    run = run_of(["a"], [1.0])
    ev = fasteval.Evaluator(qrels, ["map", "num_rel"])
    res = ev.evaluate(run)
    assert res["query_id"].unique().to_list() == ["q"]
    assert ev.report.missing_from_run == 1 and ev.report.filled == 0
    ev = fasteval.Evaluator(qrels, ["map", "num_rel", "gm_map"], complete=True)
    res = ev.evaluate(run)
    assert ev.report.filled == 1
    z = res.filter(pl.col("query_id") == "z")
    assert z.filter(pl.col("measure") == "map")["value"][0] == 0.0
    assert z.filter(pl.col("measure") == "num_rel")["value"][0] == 1.0
    agg = fasteval.aggregate(res)
    assert agg.filter(pl.col("measure") == "map")["value"][0] == pytest.approx(0.5 / 2)


def test_duplicates_error_and_keep_best() -> None:
    run = run_of(["a", "b", "a"], [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="appears more than once"):
        fasteval.evaluate(QRELS, run, "P@1")
    ev = fasteval.Evaluator(QRELS, ["P@1"], duplicates="keep_best")
    res = ev.evaluate(run)
    assert ev.report.deduplicated_rows == 1
    assert res["value"][0] == 1.0  # a kept with score 3.0, ranked first


def test_keep_best_with_rank_tie_break_keeps_the_best_ranked_row(tmp_path) -> None:
    """tie_break="rank" orders by the rank column, so keep_best keeps a repeated document's
    best-ranked row (the best-scored among equal ranks): the result does not depend on the
    order of the rows, in memory or chunked."""
    qrels = {"q": {"a": 1, "b": 0}}
    rows = [("q", "a", 1.0, 5), ("q", "a", 1.0, 1), ("q", "b", 1.0, 2)]
    for order in (rows, [rows[1], rows[0], rows[2]]):
        run = pl.DataFrame(order, schema=["query_id", "doc_id", "score", "rank"], orient="row")
        ev = fasteval.Evaluator(qrels, ["P@1", "recip_rank"], tie_break="rank",
                                duplicates="keep_best")
        assert ev.evaluate(run)["value"].to_list() == [1.0, 1.0]  # a at rank 1, then b
        assert ev.report.deduplicated_rows == 1
        run.write_parquet(tmp_path / "r.parquet")
        from fasteval.batch.api import evaluate_files

        chunked = evaluate_files(qrels, tmp_path / "r.parquet", ["P@1"], tie_break="rank",
                                 duplicates="keep_best", max_rows_per_chunk=1).per_query
        assert chunked["value"].to_list() == [1.0]
    # a better score with a worse rank loses: a keeps rank 5, below b's 2
    run = pl.DataFrame([("q", "a", 1.0, 5), ("q", "a", 2.0, 9), ("q", "b", 1.5, 2)],
                       schema=["query_id", "doc_id", "score", "rank"], orient="row")
    assert fasteval.evaluate(qrels, run, ["recip_rank"], tie_break="rank",
                             duplicates="keep_best")["value"].to_list() == [0.5]
    # the other tie rules keep the best-scored row: a (2.0) above b (1.5)
    assert fasteval.evaluate(qrels, run, ["recip_rank"],
                             duplicates="keep_best")["value"].to_list() == [1.0]


def test_run_queries_not_in_qrels_are_reported() -> None:
    run = pl.concat([run_of(["a"], [1.0]), pl.DataFrame(
        {"query_id": ["other"], "doc_id": ["a"], "score": [1.0]})])
    ev = fasteval.Evaluator(QRELS, ["P@1"])
    ev.evaluate(run)
    assert ev.report.dropped_not_in_qrels == 1
    assert "1 run query not in qrels dropped" in ev.report.summary()


def test_several_runs_in_one_call() -> None:
    runs = {"good": run_of(["c", "a"], [2, 1]), "bad": run_of(["b", "x"], [2, 1])}
    res = fasteval.evaluate(QRELS, runs, ["map"])
    agg = dict(fasteval.aggregate(res).select("run_id", "value").iter_rows())
    assert agg == {"good": 1.0, "bad": 0.0}
    table = pl.concat([runs["good"].with_columns(run_id=pl.lit("g")),
                       runs["bad"].with_columns(run_id=pl.lit("b"))])
    agg2 = dict(fasteval.aggregate(fasteval.evaluate(QRELS, table, ["map"]))
                .select("run_id", "value").iter_rows())
    assert agg2 == {"g": 1.0, "b": 0.0}


def test_bad_input_errors() -> None:
    with pytest.raises(InputError, match="score"):
        fasteval.evaluate(QRELS, run_of(["a"], [float("nan")]), "P@1")
    with pytest.raises(ParameterError, match="max_docs"):
        fasteval.evaluate(QRELS, run_of(["a"], [1.0]), "P@1", max_docs=0)
    with pytest.raises(ParameterError, match="tie_break"):
        fasteval.evaluate(QRELS, run_of(["a"], [1.0]), "P@1", tie_break="random")
    with pytest.raises(FastevalError, match="did you mean"):
        fasteval.evaluate(QRELS, run_of(["a"], [1.0]), "ndgc@10")
    with pytest.raises(InputError, match="duplicate judgment"):
        fasteval.evaluate(pl.concat([QRELS, QRELS]), run_of(["a"], [1.0]), "P@1")


def test_integer_ids_pass_through() -> None:
    qrels = pl.DataFrame({"query_id": [1, 1], "doc_id": [9, 10], "relevance": [0, 1]})
    run = pl.DataFrame({"query_id": [1, 1], "doc_id": [9, 10], "score": [1.0, 1.0]})
    res = fasteval.evaluate(qrels, run, "P@1")
    assert res["query_id"].dtype == pl.Int64
    # trec_eval compares "9" and "10" as text: "9" > "10", so 9 (nonrelevant) ranks first
    assert res["value"][0] == 0.0


def test_run_without_any_qrels_query_gives_empty_tables() -> None:
    run = pl.DataFrame({"query_id": ["zz"], "doc_id": ["a"], "score": [1.0]})
    ev = fasteval.Evaluator(QRELS, ["map"])
    with pytest.warns(fasteval.DataWarning, match="its one query is not in the qrels"):
        res = ev.evaluate(run)
    assert res.height == 0 and ev.report.dropped_not_in_qrels == 1
    agg = fasteval.aggregate(res)
    assert agg.height == 0 and agg.columns == ["run_id", "measure", "value"]
