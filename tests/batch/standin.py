"""A tiny stand-in for fasteval.Evaluator, used to test the chunking machinery on its own.

It computes, per query, with plain polars (no chunking): the number of rows retrieved,
the number of relevant rows retrieved, and precision at 2 in trec_eval order
(score descending, then doc id descending).
"""

from __future__ import annotations

import polars as pl

NAMES = ["num_ret", "num_rel_ret", "P@2"]


class StandinEvaluator:
    def __init__(self, qrels: pl.DataFrame) -> None:
        self.qrels = qrels
        self.measure_names = list(NAMES)
        self.report = {"dropped": 0, "filled": 0}
        self.calls = 0

    def evaluate(self, run: pl.DataFrame, run_id=None, complete=None) -> pl.DataFrame:
        self.calls += 1
        if run_id is not None:
            run = run.with_columns(pl.lit(run_id).alias("run_id"))
        rel = self.qrels.filter(pl.col("relevance") > 0).select("query_id", "doc_id", pl.lit(1).alias("rel"))
        known = self.qrels.select("query_id").unique()
        before = run.select("run_id", "query_id").unique().height
        run = run.join(known, on="query_id", how="semi")
        self.report = {"dropped": before - run.select("run_id", "query_id").unique().height, "filled": 0}
        j = run.join(rel, on=["query_id", "doc_id"], how="left").with_columns(pl.col("rel").fill_null(0))
        j = j.sort(["run_id", "query_id", "score", "doc_id"], descending=[False, False, True, True])
        per = j.group_by(["run_id", "query_id"], maintain_order=True).agg(
            pl.len().cast(pl.Float64).alias("num_ret"),
            pl.col("rel").sum().cast(pl.Float64).alias("num_rel_ret"),
            (pl.col("rel").head(2).sum() / 2.0).alias("P@2"),
        )
        return per.unpivot(index=["run_id", "query_id"], on=NAMES, variable_name="measure", value_name="value")

    def fill_missing(self, seen, run_id) -> pl.DataFrame:
        seen = pl.Series(seen)
        missing = self.qrels.select("query_id").unique(maintain_order=True).filter(~pl.col("query_id").is_in(seen.implode()))
        self.report = {"dropped": 0, "filled": missing.height}
        wide = missing.select(pl.lit(run_id).alias("run_id"), "query_id", *[pl.lit(0.0).alias(m) for m in NAMES])
        return wide.unpivot(index=["run_id", "query_id"], on=NAMES, variable_name="measure", value_name="value")


def mean_aggregate(long: pl.DataFrame) -> pl.DataFrame:
    return long.group_by(["run_id", "measure"], maintain_order=True).agg(pl.col("value").mean())
