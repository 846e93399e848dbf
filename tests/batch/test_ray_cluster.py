"""engine="ray" on a cluster of several nodes simulated on this machine
(``ray.cluster_utils.Cluster``): slice tasks spread over the nodes, and a node lost while
its tasks run does not change a value (Ray runs its tasks again elsewhere). Slow: starting
three raylets takes a while on two cores."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import polars as pl
import pytest

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

MEASURES = ["map", "ndcg@10", "P@5", "recall@10", "gm_map"]


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    nodes = [c.add_node(num_cpus=1) for _ in range(2)]
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False)
    c.wait_for_nodes()
    yield c, nodes
    ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("cluster")
    rng = np.random.default_rng(3)
    nq = 300
    pl.DataFrame({"query_id": np.repeat(np.arange(nq), 5), "doc_id": np.tile(np.arange(5), nq),
                  "relevance": rng.integers(0, 3, nq * 5)}).write_parquet(d / "qrels.parquet")
    sizes = rng.integers(5, 40, nq)
    pl.DataFrame({"query_id": np.repeat(np.arange(nq), sizes),
                  "doc_id": np.concatenate([rng.permutation(60)[:n] for n in sizes]),
                  "score": rng.integers(0, 5, int(sizes.sum())).astype(float)}).write_parquet(
        d / "run.parquet", row_group_size=50)
    return d


def test_tasks_spread_and_a_lost_node_changes_nothing(cluster, data, tmp_path, monkeypatch):
    from fasteval.batch import ray_engine
    from fasteval.batch.api import evaluate_files

    c, nodes = cluster
    monkeypatch.setattr(ray_engine, "READ_TASK_ROWS", 200)  # ~30 slices
    ref = evaluate_files(data / "qrels.parquet", data / "run.parquet", MEASURES, complete=True)
    first = evaluate_files(data / "qrels.parquet", data / "run.parquet", MEASURES, complete=True, engine="ray")
    assert first.per_query.equals(ref.per_query) and first.aggregate.equals(ref.aggregate)
    assert len(first.stats.nodes) == 2  # SPREAD: both worker nodes ran slices
    # hold every task until a node is gone, then let them go: the lost node's tasks run again
    hold = tmp_path / "hold"
    hold.touch()
    monkeypatch.setenv("FASTEVAL_RAY_FAULT", f"hold:{hold}")
    out = {}
    job = threading.Thread(target=lambda: out.update(res=evaluate_files(
        data / "qrels.parquet", data / "run.parquet", MEASURES, complete=True, engine="ray")))
    job.start()
    time.sleep(3)  # tasks started and waiting on both nodes
    c.remove_node(nodes[1])
    os.unlink(hold)
    job.join(timeout=240)
    assert not job.is_alive()
    got = out["res"]
    assert got.per_query.equals(ref.per_query) and got.aggregate.equals(ref.aggregate)
    assert got.stats.report == ref.stats.report
    assert len(got.stats.nodes) == 1  # every slice ran (again) on the node left
