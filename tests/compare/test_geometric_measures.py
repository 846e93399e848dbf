"""gm_map and gm_bpref are compared on the scale trec_eval averages them on, ln(max(v, 1e-5)):
compare showed their arithmetic mean (which is MAP) under the name GMAP, and tested it."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

import fasteval
from tests._data import SHIPPED_TREC


@pytest.fixture(scope="module")
def per_query():
    qrels = fasteval.read_qrels(SHIPPED_TREC / "qrels.test")
    run = fasteval.read_run(SHIPPED_TREC / "results.test")
    full = fasteval.evaluate(qrels, {"full": run}, ["gm_map", "map"])
    worse = full.with_columns(run_id=pl.lit("worse"),
                              value=pl.col("value") * pl.Series([0.5, 0.5, 0.9, 0.9, 0.0, 0.0]))
    return pl.concat([full, worse])


def test_means_are_logs_whose_exp_is_trec_evals_gm_map(per_query):
    cmp = fasteval.compare(per_query, baseline="full", tests=["t"], measures=["gm_map", "map"], ci=None)
    means = {(r, m): v for r, m, v in cmp.means.select("run_id", "measure", "mean").rows()}
    agg = {(r, m): v for r, m, v in fasteval.aggregate(per_query).rows()}
    for run in ("full", "worse"):
        assert np.exp(means[(run, "gm_map")]) == pytest.approx(agg[(run, "gm_map")], rel=1e-12)
        assert means[(run, "map")] == pytest.approx(agg[(run, "map")], rel=1e-12)
    assert agg[("full", "gm_map")] == pytest.approx(0.1051, abs=5e-5)  # trec_eval's figure


def test_tests_run_on_the_logs(per_query):
    cmp = fasteval.compare(per_query, baseline="full", tests=["t"], measures=["gm_map"], ci=None)
    logs = {r: np.log(np.maximum(per_query.filter((pl.col("run_id") == r) & (pl.col("measure") == "gm_map"))
                                 .sort("query_id").get_column("value").to_numpy(), 1e-5))
            for r in ("full", "worse")}
    effect = cmp.effects.row(0, named=True)
    assert effect["mean_diff"] == pytest.approx(float(np.mean(logs["worse"] - logs["full"])), rel=1e-12)
    p = cmp.tests.filter(pl.col("test") == "t").row(0, named=True)["p_value"]
    assert p == pytest.approx(stats.ttest_rel(logs["worse"], logs["full"]).pvalue, rel=1e-9)


def test_missing_query_counts_as_the_floor_under_zero_fill(per_query):
    dropped = per_query.filter(~((pl.col("run_id") == "worse") & (pl.col("query_id") == "301")))
    cmp = fasteval.compare(dropped, baseline="full", tests=["t"], measures=["gm_map"], ci=None,
                           missing="zero")
    worse = cmp.means.filter(pl.col("run_id") == "worse").row(0, named=True)["mean"]
    values = per_query.filter((pl.col("run_id") == "worse") & (pl.col("measure") == "gm_map")) \
        .sort("query_id").get_column("value").to_numpy().copy()
    values[0] = 0.0
    assert worse == pytest.approx(float(np.mean(np.log(np.maximum(values, 1e-5)))), rel=1e-12)


def test_report_names_the_log_scale(per_query):
    text = fasteval.compare(per_query, baseline="full", tests=["t"], measures=["gm_map"], ci=None).table()
    assert "ln GMAP" in text and "-2.2529" in text
