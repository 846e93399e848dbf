"""Everyday latency: fresh processes, each beside its floor in the same run.

Three rows, each a fresh ``python -m fasteval`` process per round::

    python -m pytest benches/bench_latency.py --benchmark-columns=median,min,max,rounds

* **first run**: the README Quickstart job (``eval datasets/trec/qrels.test
  datasets/trec/results.test -m ndcg@10 -m map``) with an empty numba cache
  (``NUMBA_CACHE_DIR`` set to a new folder each round), and ``fasteval warmup`` with an
  empty cache; the goal is <= 10 s on a quiet machine.
* **small job, warm cache**: the same job again against the floor, a fresh Python that
  imports polars, numba and pyarrow (goal: <= 1.3x the floor).
* **eval on 100k x 100 parquet, 5 measures**: ``fasteval eval`` (bench_speed's files,
  ``benches/_data.py``) against a fresh Python that imports polars and reads both files
  (goal: <= 1.5x the floor): as a job in a loop over runs meets it, the prepared qrels
  taken from the qrels cache (written by the warm-up round, in a temporary
  ``FASTEVAL_CACHE_DIR``), and with ``--no-qrels-cache`` (the qrels read and prepared).

The medians of fasteval and of its floor, and their ratio, are in ``extra_info`` of the
fasteval rows (``floor_median_s``, ``ratio``), measured alternately in that test so that
both see the same machine load; the floor rows are also benchmarked on their own.
``FASTEVAL_BENCH_LATENCY_ROUNDS`` sets the rounds (default 7), ``FASTEVAL_BENCH_COLD_ROUNDS``
those of the empty-cache rows (default 1: each compiles for a minute or more).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import ROOT, dataset  # noqa: E402

ROUNDS = int(os.environ.get("FASTEVAL_BENCH_LATENCY_ROUNDS", "7"))
COLD_ROUNDS = int(os.environ.get("FASTEVAL_BENCH_COLD_ROUNDS", "1"))
TREC = ROOT / "datasets" / "trec"
SMALL_JOB = ["eval", str(TREC / "qrels.test"), str(TREC / "results.test"), "-m", "ndcg@10", "-m", "map",
             "--quiet"]
MEASURES5 = ["-m", "ndcg@10", "-m", "map@100", "-m", "recip_rank", "-m", "recall@100", "-m", "P@10"]
IMPORT_FLOOR = [sys.executable, "-c", "import polars, numba, pyarrow"]


@pytest.fixture(scope="module", autouse=True)
def _bytecode() -> None:
    """Write the package's bytecode first, as installing it does: in an editable install
    run with ``PYTHONDONTWRITEBYTECODE`` set, every fresh process would compile the modules
    edited since their last ``.pyc`` again (tens of milliseconds each round)."""
    import compileall

    compileall.compile_dir(str(ROOT / "fasteval"), quiet=1)


def _fasteval(*args: str) -> list[str]:
    return [sys.executable, "-m", "fasteval", *args]


def _wall(cmd: list[str], env: dict[str, str] | None = None) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
                   env=env)
    return time.perf_counter() - t


def _side_by_side(benchmark, cmd: list[str], floor: list[str]) -> None:
    """Benchmark ``cmd`` with a run of ``floor`` before each round; record both medians."""
    floors: list[float] = []

    def setup():
        floors.append(_wall(floor))

    benchmark.pedantic(_wall, args=(cmd,), setup=setup, rounds=ROUNDS, iterations=1, warmup_rounds=1)
    fe = benchmark.stats.stats.median
    fl = statistics.median(floors[1:] or floors)  # the first ran before the warm-up round
    benchmark.extra_info.update(floor_median_s=round(fl, 4), ratio=round(fe / fl, 3),
                                load=os.getloadavg()[0])
    print(f"\n{benchmark.name}: median {fe:.3f}s, floor {fl:.3f}s, ratio {fe / fl:.2f}x")


def _cold(cmd: list[str]) -> float:
    with tempfile.TemporaryDirectory(prefix="fasteval-numba-") as d:
        return _wall(cmd, env={**os.environ, "NUMBA_CACHE_DIR": d})


@pytest.mark.parametrize("job", ["quickstart", "warmup"])
def test_first_run_empty_cache(benchmark, job):
    benchmark.group = "latency-first-run"
    cmd = _fasteval(*SMALL_JOB) if job == "quickstart" else _fasteval("warmup", "--quiet")
    benchmark.pedantic(_cold, args=(cmd,), rounds=COLD_ROUNDS, iterations=1)
    benchmark.extra_info["load"] = os.getloadavg()[0]


def test_small_job_import_floor(benchmark):
    benchmark.group = "latency-small-job"
    benchmark.pedantic(_wall, args=(IMPORT_FLOOR,), rounds=ROUNDS, iterations=1, warmup_rounds=1)


def test_small_job_fasteval(benchmark):
    benchmark.group = "latency-small-job"
    _side_by_side(benchmark, _fasteval(*SMALL_JOB), IMPORT_FLOOR)


@pytest.fixture(scope="module")
def parquet100k() -> tuple[Path, Path]:
    d = dataset("100k", depth=100, runs=1, seed=2, compression="snappy")
    return d / "qrels.parquet", d / "runs" / "run_0.parquet"


def _read_floor(qrels: Path, run: Path) -> list[str]:
    code = f"import polars as pl; pl.read_parquet({str(qrels)!r}); pl.read_parquet({str(run)!r})"
    return [sys.executable, "-c", code]


def test_cli_read_floor(benchmark, parquet100k):
    benchmark.group = "latency-eval-100k-parquet"
    benchmark.pedantic(_wall, args=(_read_floor(*parquet100k),), rounds=ROUNDS, iterations=1,
                       warmup_rounds=1)


@pytest.fixture(scope="module")
def qrels_cache_dir():
    """A fresh qrels cache for the module (the user's own is left alone)."""
    with tempfile.TemporaryDirectory(prefix="fasteval-cache-") as d:
        before = os.environ.get("FASTEVAL_CACHE_DIR")
        os.environ["FASTEVAL_CACHE_DIR"] = d
        yield d
        if before is None:
            del os.environ["FASTEVAL_CACHE_DIR"]
        else:
            os.environ["FASTEVAL_CACHE_DIR"] = before


@pytest.mark.parametrize("qrels_cache", ["cached", "no-qrels-cache"])
def test_cli_fasteval(benchmark, parquet100k, qrels_cache_dir, qrels_cache):
    benchmark.group = "latency-eval-100k-parquet"
    qrels, run = parquet100k
    flags = ["--no-qrels-cache"] if qrels_cache == "no-qrels-cache" else []
    _side_by_side(benchmark, _fasteval("eval", str(qrels), str(run), *MEASURES5, "--quiet", *flags),
                  _read_floor(qrels, run))
