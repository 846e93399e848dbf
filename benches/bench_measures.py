"""Cost of each measure family in the one-pass score kernel: 100k queries x 100 docs.

Each measure is scored alone on a prepared batch (the kernel only: no reading, no
preparation), next to an existing measure of similar work, and reported in ns per ranked
row per measure (``extra_info["ns_per_row"]``)::

    python -m pytest benches/bench_measures.py --benchmark-columns=median,min,rounds

``FASTEVAL_BENCH_SPEED_SIZE=10k`` for a quick pass.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import dataset  # noqa: E402

SIZE = os.environ.get("FASTEVAL_BENCH_SPEED_SIZE", "100k")

# (measure, the existing measure of similar work beside it)
PAIRS = [
    ("ERR@10", "ndcg_burges@10"),  # a pass over the top k with 2^g gains
    ("err", "rbp_raw"),  # the same over the whole ranking
    ("Judged", "judged@10"),  # count of judged documents
    ("SetP(relative=True)", "set_P"),  # read off the relevance profile
    ("SetP@10", "P@10"),  # the same, to a cutoff
    ("P(judged_only=True)@10", "judged@10"),  # a pass over the top k judged documents
    ("P@10", "P@10"),
    ("bpref", "bpref"),
    # C/W/L: one pass over the ranking (cwl_eval's 1,000-rank horizon summed in closed form)
    ("INST(max_rel=3)", "rbp_raw"),
    ("INSQ(max_rel=3)", "rbp_raw"),
    ("NERR10(max_rel=3)", "rbp_raw"),
    ("NERR11(max_rel=3)", "rbp_raw"),
    ("RBP(rel=1)", "rbp_raw"),
    ("INST(max_rel=3,residual=True)", "rbp_raw"),  # two passes: unjudged gain 0, then 1
    ("BPM(max_rel=3)@10", "ERR@10"),  # C/W/L to a cutoff
    ("SDCG(max_rel=3)@10", "ERR@10"),
    ("NERR8(max_rel=3)@10", "ERR@10"),
    ("NERR9(max_rel=3)@10", "ERR@10"),
    ("Compat", "map"),  # a pass over the ranking with a prefix sum per query
    ("nDCG(gains={0:0,1:1,2:3})@10", "ndcg"),  # custom gains: trec_eval's ndcg walk, cut
]


@pytest.fixture(scope="module")
def prepared():
    import polars as pl

    import fasteval

    d = dataset(SIZE, depth=100, runs=1, seed=2, compression="snappy")
    ev = fasteval.Evaluator(fasteval.read_qrels(d / "qrels.parquet"), ["P@10"])
    batch = ev.prepare(pl.read_parquet(d / "runs" / "run_0.parquet"))
    return ev, batch


@pytest.mark.parametrize("name", sorted({m for pair in PAIRS for m in pair}))
def test_measure_cost(benchmark, prepared, name: str) -> None:
    from fasteval.evaluation import score_batch
    from fasteval.measures import parse_measures

    ev, batch = prepared
    measures = parse_measures([name])
    score_batch(ev.qrels, batch, measures)  # compile / load outside the timing
    benchmark.group = f"measures {SIZE} x 100, one measure"
    benchmark.pedantic(lambda: score_batch(ev.qrels, batch, measures), rounds=11,
                       warmup_rounds=1)
    rows = batch.labels.shape[0]
    benchmark.extra_info["ns_per_row"] = benchmark.stats.stats.median / rows * 1e9
    benchmark.extra_info["peer"] = dict(PAIRS).get(name, "")
