"""End-to-end speed: 100k queries x 100 docs (~10 M rows), five measures, parquet in.

fasteval side by side with pytrec_eval, ranx and a bare polars read, in one run::

    python -m pytest benches/bench_speed.py --benchmark-columns=median,min,max,rounds

Also measured (in ``extra_info`` and printed): peak RSS of each tool in a fresh process,
and fasteval's cold start (fresh process, with an empty and with a warm numba cache).
Set ``FASTEVAL_BENCH_SPEED_SIZE=10k`` for a quick pass. Every tool runs in the process
settings of the ``fasteval`` command (``benches/conftest.py``);
``FASTEVAL_BENCH_PROCESS=library`` measures the library's defaults.

The run file is written with pyarrow's default codec (snappy), whose bare polars read
takes about 0.13 s on the development machine; the read and fasteval's end-to-end time are also
measured on the same rows written with zstd (smaller file, about twice the decoding).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import MEASURES5, ROOT, dataset  # noqa: E402
from _proc import gib, run_measured, runner  # noqa: E402

SIZE = os.environ.get("FASTEVAL_BENCH_SPEED_SIZE", "100k")
GROUP = f"eval-{SIZE}"
CODECS = ("snappy", "zstd")


def _files(codec: str) -> tuple[Path, Path]:
    d = dataset(SIZE, depth=100, runs=1, seed=2, compression=codec)
    return d / "qrels.parquet", d / "runs" / "run_0.parquet"


@pytest.fixture(scope="module")
def data():
    return _files("snappy")


@pytest.fixture(scope="module", params=CODECS)
def coded(request):
    return _files(request.param)


def test_polars_read(benchmark, coded):
    import polars as pl

    _, run = coded
    benchmark.group = GROUP
    df = benchmark(pl.read_parquet, run)
    benchmark.extra_info["rows"] = df.height


def test_fasteval_end_to_end(benchmark, coded):
    """parquet qrels + run in, per-query results out (qrels prepared inside the timing)."""
    import fasteval

    qrels, run = coded
    fasteval.evaluate(fasteval.read_qrels(ROOT / "datasets/trec/qrels.test"),
                      fasteval.read_run(ROOT / "datasets/trec/results.test"), MEASURES5["fasteval"])  # compile / load the numba cache outside the timing
    benchmark.group = GROUP

    def job():
        # paths straight into evaluate(): the reader skips its duplicate pass because
        # prepare finds repeated (query, doc) pairs itself on hashed ids
        return fasteval.evaluate(qrels, run, MEASURES5["fasteval"])

    res = benchmark.pedantic(job, rounds=5, warmup_rounds=1)
    benchmark.extra_info["result_rows"] = res.height


def test_fasteval_batch_api(benchmark, data):
    """The same through the chunked batch driver (what ``fasteval eval`` runs)."""
    from fasteval.batch import evaluate_files

    qrels, run = data
    benchmark.group = GROUP
    res = benchmark.pedantic(lambda: evaluate_files(qrels, run, MEASURES5["fasteval"]), rounds=5, warmup_rounds=1)
    benchmark.extra_info["chunks"] = res.stats.chunks


def test_fasteval_kernel_only(benchmark, data):
    """Prepared qrels, run already in memory: evaluation alone (rows/s in extra_info)."""
    import polars as pl

    import fasteval

    qrels, run = data
    ev = fasteval.Evaluator(fasteval.read_qrels(qrels), MEASURES5["fasteval"])
    df = pl.read_parquet(run)
    ev.evaluate(df)
    benchmark.group = GROUP
    benchmark.pedantic(lambda: ev.evaluate(df), rounds=5, warmup_rounds=1)
    benchmark.extra_info["rows_per_s"] = df.height / benchmark.stats.stats.median


def test_pytrec_eval(benchmark, data):
    pytest.importorskip("pytrec_eval")
    import polars as pl
    import pytrec_eval
    from _runner import nested

    qrels, run = data
    benchmark.group = GROUP

    def job():
        q = nested(pl.read_parquet(qrels), "doc_id", "relevance")
        r = nested(pl.read_parquet(run), "doc_id", "score")
        return pytrec_eval.RelevanceEvaluator(q, set(MEASURES5["pytrec_eval"])).evaluate(r)

    benchmark.pedantic(job, rounds=1, iterations=1)


def test_ranx(benchmark, data):
    pytest.importorskip("ranx")
    import polars as pl
    from _runner import nested
    from ranx import Qrels, Run, evaluate

    qrels, run = data
    evaluate(Qrels({"q": {"d": 1}}), Run({"q": {"d": 1.0}}), MEASURES5["ranx"])  # numba warm-up
    benchmark.group = GROUP

    def job():
        q = Qrels(nested(pl.read_parquet(qrels).filter(pl.col("relevance") > 0), "doc_id", "relevance"))
        r = Run(nested(pl.read_parquet(run), "doc_id", "score"))
        return evaluate(q, r, MEASURES5["ranx"], return_mean=False, make_comparable=True)

    benchmark.pedantic(job, rounds=1, iterations=1)


@pytest.mark.parametrize("tool", ["polars-read", "fasteval", "pytrec_eval", "ranx"])
def test_peak_rss_fresh_process(benchmark, data, tool):
    """Each tool alone in a fresh process: in-process time and peak RSS (imports included)."""
    qrels, run = data
    benchmark.group = f"{GROUP}-fresh-process"
    res = benchmark.pedantic(lambda: runner(tool, qrels, run, measures="5", rss_cap=20 * 2**30, timeout=900),
                             rounds=1, iterations=1)
    assert res["rc"] == 0, res["stderr"][-2000:]
    benchmark.extra_info.update(peak_rss=res["max_rss"], phases=res["json"]["phases"])
    print(f"\n{tool}: peak RSS {gib(res['max_rss'])}, phases {res['json']['phases']}")


@pytest.mark.parametrize("cache", ["empty numba cache", "warm numba cache"])
def test_cold_start(benchmark, cache):
    """``fasteval eval`` on the shipped trec_eval sample in a fresh process."""
    cache_dir = Path(tempfile.gettempdir()) / "fasteval-bench-numba-cache"
    if cache == "empty numba cache":
        import shutil

        shutil.rmtree(cache_dir, ignore_errors=True)
    cmd = [sys.executable, "-m", "fasteval", "eval", str(ROOT / "datasets/trec/qrels.test"),
           str(ROOT / "datasets/trec/results.test"), *sum((["-m", m] for m in MEASURES5["fasteval"]), []),
           "--quiet"]
    env = {"NUMBA_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT)}
    if cache == "warm numba cache":
        run_measured(cmd, env=env)  # fill it
    benchmark.group = "cold-start-trec-sample"
    res = benchmark.pedantic(lambda: run_measured(cmd, env=env), rounds=1 if cache.startswith("empty") else 3,
                             iterations=1)
    assert res["rc"] == 0, res["stderr"][-2000:]
    if cache == "empty numba cache":
        import shutil

        shutil.rmtree(cache_dir, ignore_errors=True)
