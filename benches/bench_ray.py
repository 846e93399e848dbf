"""engine="ray" against one process, on the same machine and the same data, and on clusters
of several nodes simulated on this machine.

Run (sizes in run rows from ``FASTEVAL_BENCH_RAY_SIZES``, default ``10M``: 100k queries x
100 documents; ``100M`` is 1M queries x 100, the ``datasets synth`` shape, ~1 GB of parquet
generated once; cluster shapes from ``FASTEVAL_BENCH_RAY_NODES``, default ``2,4``)::

    FASTEVAL_BENCH_RAY_SIZES=10M,100M python -m pytest benches/bench_ray.py \\
        --benchmark-columns=median,min,max,rounds

Rows per size (pytest-benchmark group ``ray-<size>``), five measures, parquet in and out
(``-q -o out.parquet``):

* ``test_cli_local``: ``fasteval eval`` in a fresh process (wall, peak RSS);
* ``test_cli_ray``: the same command with ``--engine ray`` in a fresh process: it starts a
  local Ray on every core, so the row includes Ray's start-up; ``ray_start_s`` (from
  ``--log-json``) is that part, and ``job_s`` the rest. ``extra_info`` has the per-stage
  timings, the ratio to the local row, and ``per_core`` (the local row's time over the Ray
  row's time without start-up: 1.0 is the throughput per core of one process);
* ``test_cluster[N]``: :func:`fasteval.batch.evaluate_files` with ``engine="ray"`` on a
  ``ray.cluster_utils.Cluster`` of ``N`` worker nodes (a head without CPUs, each node
  ``max(1, cores // N)`` CPUs), started in the test (``cluster_start_s``, excluded);
  ``extra_info`` has the slice tasks per node and the stage timings. The per-query output
  and the aggregates are checked equal to the local job's every round.

The nodes of a simulated cluster share this machine's cores, so their rows show that the
tasks spread and the values hold, not a speed-up; ``benches/README.md`` gives the model and
the estimate for real clusters built from these measurements.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import MEASURES5, dataset  # noqa: E402
from _proc import run_measured  # noqa: E402

ray = pytest.importorskip("ray")

SHAPES = {"1M": ("10000", 1), "10M": ("100k", 1), "100M": ("1M", 1)}  # run rows -> (queries, runs)
SIZES = [s.strip() for s in os.environ.get("FASTEVAL_BENCH_RAY_SIZES", "10M").split(",") if s.strip()]
NODES = [int(n) for n in os.environ.get("FASTEVAL_BENCH_RAY_NODES", "2,4").split(",") if n.strip()]
MEASURES = MEASURES5["fasteval"]
CORES = os.cpu_count() or 2
_LOCAL: dict[str, float] = {}


@pytest.fixture(scope="module", params=SIZES)
def data(request):
    queries, runs = SHAPES[request.param]
    d = dataset(queries, depth=100, runs=runs, seed=18)
    return request.param, d / "qrels.parquet", d / "runs"


def _cli(qrels, runs, out, *extra):
    return [sys.executable, "-m", "fasteval", "eval", str(qrels), str(runs),
            *sum((["-m", m] for m in MEASURES), []), "-q", "-o", str(out), "--quiet", "--log-json", *extra]


def _measured(benchmark, cmd, rounds: int):
    res = benchmark.pedantic(lambda: run_measured(cmd, timeout=1800), rounds=rounds, iterations=1)
    assert res["rc"] == 0, res["stderr"][-2000:]
    log = json.loads(res["stderr"].strip().splitlines()[-1])
    return res, log


def test_cli_local(benchmark, data, tmp_path):
    size, qrels, runs = data
    benchmark.group = f"ray-{size}"
    res, log = _measured(benchmark, _cli(qrels, runs, tmp_path / "out.parquet"), rounds=3)
    _LOCAL[size] = benchmark.stats["median"]
    benchmark.extra_info.update(rows=log["rows"], peak_rss=res["max_rss"], timings=log["timings"],
                                rows_per_s=log["rows"] / benchmark.stats["median"])


def test_cli_ray(benchmark, data, tmp_path):
    size, qrels, runs = data
    benchmark.group = f"ray-{size}"
    res, log = _measured(benchmark, _cli(qrels, runs, tmp_path / "out.parquet", "--engine", "ray"), rounds=3)
    wall = benchmark.stats["median"]
    start = log["timings"].get("ray_start", 0.0)
    info = {"rows": log["rows"], "peak_rss": res["max_rss"], "paths": log["paths"], "slices": log["chunks"],
            "ray_start_s": round(start, 3), "job_s": round(wall - start, 3),
            "timings": {k: round(v, 3) for k, v in log["timings"].items()}}
    if size in _LOCAL:
        info.update(ratio=round(wall / _LOCAL[size], 2), per_core=round(_LOCAL[size] / (wall - start), 2))
    benchmark.extra_info.update(info)


def _cluster(nodes: int):
    """A cluster of ``nodes`` worker nodes on this machine, connected; its shutdown."""
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(nodes):
        c.add_node(num_cpus=max(1, CORES // nodes))
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    c.wait_for_nodes()

    def stop() -> None:
        ray.shutdown()
        c.shutdown()

    return stop


@pytest.mark.parametrize("nodes", NODES)
def test_cluster(benchmark, data, nodes, tmp_path):
    """(Started inside the test, not as a fixture: a second Ray driver, such as the CLI rows'
    own, cannot use a cluster started by this process on this machine.)"""
    import polars as pl

    from fasteval.batch import evaluate_files

    size, qrels, runs = data
    benchmark.group = f"ray-{size}"
    ref = evaluate_files(qrels, runs, MEASURES, out=tmp_path / "local.parquet")
    keys = ["run_id", "query_id", "measure"]
    want = pl.read_parquet(tmp_path / "local.parquet").sort(keys)
    out = {}
    t0 = time.perf_counter()
    stop = _cluster(nodes)
    started = time.perf_counter() - t0

    def job():
        res = evaluate_files(qrels, runs, MEASURES, engine="ray", out=tmp_path / "ray.parquet")
        got = pl.read_parquet(tmp_path / "ray.parquet").sort(keys)
        if not (res.aggregate.equals(ref.aggregate) and got.equals(want)):
            raise AssertionError("engine=ray on the cluster differs from one process")
        out["res"] = res

    try:
        benchmark.pedantic(job, rounds=2, iterations=1, warmup_rounds=1)
    finally:
        stop()
    st = out["res"].stats
    benchmark.extra_info.update(nodes=nodes, cluster_start_s=round(started, 2), slices_per_node=sorted(st.nodes.values()),
                                paths=st.paths, timings={k: round(v, 3) for k, v in st.timings.items()})
