"""engine="ray": per-query values bit-identical to the single-machine path, equal aggregates,
the same report; an injected one-time worker failure retried without losing or duplicating
a row. One local Ray (2 CPUs) for the module; every job scores several runs at once."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import polars as pl
import pytest

import fasteval
from fasteval.batch.api import evaluate_files
from fasteval.cli import main

MEASURES = ["map", "ndcg@10", "P@5", "num_ret", "num_rel_ret", "gm_map", "recall@10", "bpref"]


def test_import_does_not_load_ray():
    code = "import sys, fasteval; fasteval.evaluate; assert 'ray' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_ray_is_one_line(monkeypatch):
    from fasteval.batch import ray_engine
    from fasteval.errors import FastevalError

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(FastevalError, match=r'pip install "fasteval\[ray\]"'):
        ray_engine.require_ray()


ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def ray_local():
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """qrels + a directory of runs: unsorted rows, one file holding two runs (run_id column),
    queries missing from the qrels and from the runs, tied scores, a duplicate row."""
    d = tmp_path_factory.mktemp("raydata")
    rng = np.random.default_rng(18)
    nq = 25
    qrels = pl.DataFrame({
        "query_id": [f"q{i}" for i in range(nq) for _ in range(6)],
        "doc_id": [f"d{j}" for _ in range(nq) for j in range(6)],
        "relevance": rng.integers(-1, 3, nq * 6),
    })
    qrels.write_parquet(d / "qrels.parquet")
    runs = d / "runs"
    runs.mkdir()

    def run(seed: int, name: str | None = None) -> pl.DataFrame:
        r = np.random.default_rng(seed)
        n = 350
        df = pl.DataFrame({
            "query_id": [f"q{i}" for i in r.integers(0, nq + 5, n)],  # q25..q29: not in qrels
            "doc_id": [f"d{j}" for j in r.integers(0, 14, n)],
            "score": r.integers(0, 4, n).astype(float),  # many ties
        }).unique(["query_id", "doc_id"], keep="first", maintain_order=True)
        df = df.filter(pl.col("query_id") != f"q{seed % nq}")  # a qrels query missing from the run
        if name is not None:
            df = df.with_columns(pl.lit(name).alias("run_id"))
        return df

    run(1).write_parquet(runs / "alpha.parquet")
    pl.concat([run(2, "beta"), run(3, "gamma")]).sample(fraction=1.0, seed=5).write_parquet(
        runs / "two.parquet")
    dup = run(4)
    pl.concat([dup, dup.head(1).with_columns(pl.col("score") - 1)]).write_parquet(d / "dup.parquet")
    return d


def _same(ray_res, local_res):
    assert ray_res.per_query.equals(local_res.per_query)  # bit-identical values, same order
    assert ray_res.aggregate.equals(local_res.aggregate)
    assert ray_res.stats.report == local_res.stats.report
    assert (ray_res.stats.rows, ray_res.stats.queries, ray_res.stats.runs) == (
        local_res.stats.rows, local_res.stats.queries, local_res.stats.runs)


def test_batch_api_equals_local(ray_local, data):
    # one job for many options (a Ray job costs seconds here): -c -J -M -l, keep_best duplicates
    options = {"complete": True, "judged_only": True, "max_docs": 7, "relevance_level": 2,
               "duplicates": "keep_best", "tie_break": "trec"}
    runs = [data / "runs", data / "dup.parquet"]
    local = evaluate_files(data / "qrels.parquet", runs, MEASURES, wide=True, **options)
    res = evaluate_files(data / "qrels.parquet", runs, MEASURES, wide=True, engine="ray", **options)
    _same(res, local)
    assert res.stats.runs == ["alpha", "beta", "gamma", "dup"]
    assert res.stats.report["filled"] > 0
    assert res.stats.report["deduplicated_rows"] == 1


def test_cli_output_dir_and_injected_fault(ray_local, data, tmp_path, monkeypatch, capsys):
    marker = tmp_path / "fault-marker"
    monkeypatch.setenv("FASTEVAL_RAY_FAULT", str(marker))
    out = tmp_path / "per_query.parquet"
    args = ["eval", str(data / "qrels.parquet"), str(data / "runs"),
            *sum((["-m", m] for m in MEASURES), []), "-q", "-c", "-J", "--quiet"]
    assert main([*args, "-o", str(out), "--engine", "ray"]) == 0
    assert marker.exists()  # the first block task failed once, and was retried
    got = pl.read_parquet(out)  # a directory of parts, renamed into place when complete
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left
    ref_path = tmp_path / "local.parquet"  # written after the check above
    assert main([*args, "-o", str(ref_path)]) == 0
    ref = pl.read_parquet(ref_path)
    assert got.height == ref.height  # no row lost, none duplicated
    assert got.select(["run_id", "query_id", "measure"]).is_duplicated().sum() == 0
    keys = ["run_id", "query_id", "measure"]
    assert got.sort(keys).equals(ref.sort(keys))


def test_evaluate_engine_ray_on_tables(ray_local, data):
    qrels = pl.read_parquet(data / "qrels.parquet")
    two = pl.read_parquet(data / "runs" / "two.parquet")
    local = fasteval.evaluate(qrels, two, MEASURES, complete=True)
    got = fasteval.evaluate(qrels, two, MEASURES, complete=True, engine="ray")
    assert got.equals(local)
    assert fasteval.aggregate(got).equals(fasteval.aggregate(local))
