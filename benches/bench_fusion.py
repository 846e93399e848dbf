"""Benchmark: ``fasteval.fuse`` vs ``ranx.fuse`` on five runs.

Workload: N queries x 5 runs x ~100 documents (the synthetic generator's runs of differing
quality over a shared candidate pool, so documents overlap between runs; text ids), fused
with RRF, CombSUM after min-max and CombMNZ after min-max. fasteval fuses the polars
tables (every step counted: checks, interning, ranking, matching, normalising, fusing and
the output table with ranks); ranx fuses its ``Run`` objects, built from the same rows
beforehand (construction timed apart, not counted). Both produce the fused run of every
query. The fused scores are checked equal on a sample of queries. Each side is run once
before timing (numba's cached code loaded).

Run::

    python benches/bench_fusion.py [n_queries] [repeats]   # settings of the fasteval command
                                                           # (FASTEVAL_BENCH_PROCESS=library: none)
    python -m pytest benches/bench_fusion.py --benchmark-only   # FASTEVAL_BENCH_FUSION_QUERIES,
                                                                # default 10,000
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and os.environ.get("FASTEVAL_BENCH_PROCESS", "fasteval-command") != "library":
    # as benches/conftest.py does for pytest: the settings of the fasteval command
    import fasteval

    fasteval.configure_process()
import resource
import statistics
import time
import warnings

import numpy as np
import pytest

ranx = pytest.importorskip("ranx")

import polars as pl  # noqa: E402

import fasteval  # noqa: E402
from fasteval.datasets.synth import SynthSpec, generate  # noqa: E402

RUNS = 5
CASES = {  # name -> (method, norm)
    "rrf": ("rrf", "min-max"),
    "combsum-minmax": ("sum", "min-max"),
    "combmnz-minmax": ("mnz", "min-max"),
}


def make_runs(n_queries: int, seed: int = 0) -> list[pl.DataFrame]:
    """The runs, each restricted to the queries all of them hold (ranx requires it), their
    scores made distinct (the generator's are rounded; a tie would be ranked in a different
    order by each tool, by design) by noise below the rounding."""
    _, runs = generate(SynthSpec(queries=n_queries, depth=100, runs=RUNS, seed=seed))
    rng = np.random.default_rng(seed)
    tables = [t.with_columns(pl.col("score") + rng.random(t.height) * 1e-6)  # no tied scores
              for t in runs.values()]
    common = tables[0].get_column("query_id").unique()
    for t in tables[1:]:
        common = common.filter(common.is_in(t.get_column("query_id").unique().implode()))
    return [t.filter(pl.col("query_id").is_in(common.implode())) for t in tables]


def ranx_runs(runs: list[pl.DataFrame]) -> list:
    out = []
    for t in runs:
        df = t.select("query_id", "doc_id", "score").to_pandas()
        df = df.astype({"query_id": object, "doc_id": object})  # ranx wants object columns
        out.append(ranx.Run.from_df(df, q_id_col="query_id", doc_id_col="doc_id",
                                    score_col="score"))
    return out


def run_fasteval(runs, method, norm):
    return fasteval.fuse(runs, method=method, norm=norm)


def run_ranx(runs, method, norm):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ranx.fuse(runs, norm=norm, method=method)


def untied_queries(runs: list[pl.DataFrame]) -> list:
    """Queries whose scores are all distinct within each run (ranx ranks ties in an
    unspecified order, fasteval by doc id: the rank methods differ there by design)."""
    tied = pl.concat([t.filter(pl.struct("query_id", "score").is_duplicated())
                      .select("query_id") for t in runs]).unique()
    qids = runs[0].get_column("query_id").unique(maintain_order=True)
    return qids.filter(~qids.is_in(tied.get_column("query_id").implode())).to_list()


def check_equal(ours: pl.DataFrame, theirs, qids: list, n_sample: int = 200) -> int:
    """Fused scores equal (1e-12) on a sample of queries; returns the documents compared."""
    sample = ours.filter(pl.col("query_id").is_in(pl.Series(qids[:n_sample]).implode()))
    n = 0
    for q, d, s in sample.select("query_id", "doc_id", "score").iter_rows():
        t = theirs[q][d]
        if abs(s - t) > 1e-12 * max(1.0, abs(t)):
            raise AssertionError(f"query {q} doc {d}: fasteval {s} ranx {t}")
        n += 1
    return n


def _timed(fn, *args):
    w = time.perf_counter()
    c = time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - w, time.process_time() - c


def main(n_queries: int = 10_000, repeats: int = 5) -> None:
    runs = make_runs(n_queries)
    rows = sum(t.height for t in runs)
    nq = runs[0].get_column("query_id").n_unique()
    print(f"{nq:,} queries (of {n_queries:,} drawn; those all runs hold) x {RUNS} runs: "
          f"{rows:,} rows")
    t0 = time.perf_counter()
    rruns = ranx_runs(runs)
    print(f"ranx Run construction (not counted): {time.perf_counter() - t0:.1f} s")
    first = runs[0].get_column("query_id").unique(maintain_order=True).head(10).to_list()
    small = [t.filter(pl.col("query_id").is_in(pl.Series(first).implode())) for t in runs]
    untied = untied_queries(runs)
    for method, norm in CASES.values():  # load each side's compiled code
        run_fasteval(small, method, norm)
        run_ranx(ranx_runs(small), method, norm)
    print(f"{'case':<16}{'fasteval s (cpu)':>20}{'ranx s (cpu)':>20}{'ratio':>8}")
    for name, (method, norm) in CASES.items():
        fe = [_timed(run_fasteval, runs, method, norm) for _ in range(repeats)]
        rx = [_timed(run_ranx, rruns, method, norm) for _ in range(repeats)]
        compared = check_equal(fe[-1][0], rx[-1][0], untied)
        fw = statistics.median(x[1] for x in fe)
        fc = statistics.median(x[2] for x in fe)
        rw = statistics.median(x[1] for x in rx)
        rc = statistics.median(x[2] for x in rx)
        print(f"{name:<16}{fw:>11.3f} ({fc:6.3f}){rw:>12.3f} ({rc:6.3f}){rw / fw:>7.1f}x"
              f"   [{compared:,} scores equal]")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.1f} GiB")


N_QUERIES = int(os.environ.get("FASTEVAL_BENCH_FUSION_QUERIES", "10000"))


@pytest.fixture(scope="module")
def data():
    runs = make_runs(N_QUERIES)
    return runs, ranx_runs(runs)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("tool", ["fasteval", "ranx"])
def test_fuse(benchmark, data, tool, case):
    runs, rruns = data
    method, norm = CASES[case]
    benchmark.group = f"fuse {case} {N_QUERIES:,}q x {RUNS} runs"
    benchmark.extra_info["queries"] = N_QUERIES
    if tool == "fasteval":
        out = benchmark.pedantic(run_fasteval, args=(runs, method, norm), rounds=3,
                                 warmup_rounds=1)
        assert out.height > 0
    else:
        out = benchmark.pedantic(run_ranx, args=(rruns, method, norm), rounds=3, warmup_rounds=1)
        assert len(out.keys()) == runs[0].get_column("query_id").n_unique()


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
