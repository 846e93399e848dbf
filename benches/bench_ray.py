"""engine="ray" on one machine against the single-process path: the overhead, and the size
where Ray starts to pay.

Run (sizes in run rows from ``FASTEVAL_BENCH_RAY_SIZES``, default ``1M,3M``; ``10M`` is the
100k-query benchmark)::

    FASTEVAL_BENCH_RAY_SIZES=1M,3M,10M python -m pytest benches/bench_ray.py \\
        --benchmark-columns=median,min,max,rounds

Rows per size (pytest-benchmark groups ``ray-<size>``), side by side:

* ``local``: :func:`fasteval.batch.evaluate_files` in this process (warm kernels);
* ``ray``: the same call with ``engine="ray"`` on a local Ray started once for the module
  (``ray.init(num_cpus=FASTEVAL_BENCH_RAY_CPUS)``, default all cores), so the row is the job
  without Ray's start-up; ``ray_start_s`` (recorded once) is what a fresh command adds.

Each Ray row records ``blocks``, ``rows_per_s``, ``ray_s`` (read + shuffle + score on Ray)
and ``score_blocks_s`` (seconds the block tasks spent preparing and scoring, summed) in
``extra_info``: the per-block throughput from which ``benches/README.md`` estimates a
billion-row job on N nodes. Values are checked equal to the local ones on every round.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import MEASURES10, dataset  # noqa: E402

ray = pytest.importorskip("ray")

# run rows -> (queries, runs) of the synthetic benchmark at depth 100
SHAPES = {"1M": (10_000, 1), "3M": (10_000, 3), "10M": (100_000, 1), "30M": (100_000, 3)}
SIZES = [s.strip() for s in os.environ.get("FASTEVAL_BENCH_RAY_SIZES", "1M,3M").split(",") if s.strip()]
CPUS = int(os.environ.get("FASTEVAL_BENCH_RAY_CPUS", str(os.cpu_count() or 2)))
MEASURES = MEASURES10["fasteval"]
_START: dict[str, float] = {}


@pytest.fixture(scope="module")
def ray_cluster():
    t0 = time.perf_counter()
    ray.init(num_cpus=CPUS, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    _START["ray_start_s"] = time.perf_counter() - t0
    yield
    ray.shutdown()


@pytest.fixture(scope="module", params=SIZES)
def data(request):
    queries, runs = SHAPES[request.param]
    d = dataset(str(queries), depth=100, runs=runs, seed=18)
    return request.param, d / "qrels.parquet", d / "runs"


def test_local(benchmark, data):
    from fasteval.batch import evaluate_files

    size, qrels, runs = data
    benchmark.group = f"ray-{size}"
    res = benchmark.pedantic(lambda: evaluate_files(qrels, runs, MEASURES), rounds=3, iterations=1,
                             warmup_rounds=1)
    benchmark.extra_info.update(rows=res.stats.rows, rows_per_s=res.stats.rows / benchmark.stats["median"])


def test_ray(benchmark, data, ray_cluster):
    from fasteval.batch import evaluate_files

    size, qrels, runs = data
    benchmark.group = f"ray-{size}"
    ref = evaluate_files(qrels, runs, MEASURES)
    out = {}

    def job():
        out["res"] = res = evaluate_files(qrels, runs, MEASURES, engine="ray")
        if not (res.per_query.equals(ref.per_query) and res.aggregate.equals(ref.aggregate)):
            raise AssertionError("engine=ray differs from the local path")
        return res

    benchmark.pedantic(job, rounds=2, iterations=1, warmup_rounds=1)
    st = out["res"].stats
    benchmark.extra_info.update(rows=st.rows, blocks=st.chunks, ray_s=round(st.timings.get("ray", 0.0), 3),
                                score_blocks_s=round(st.timings.get("score_blocks", 0.0), 3),
                                rows_per_s=st.rows / benchmark.stats["median"], cpus=CPUS, qrels=st.qrels,
                                **{k: round(v, 3) for k, v in _START.items()})
