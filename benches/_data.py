"""Benchmark data: synthetic parquet benchmarks generated once into a git-ignored folder.

The folder is ``$FASTEVAL_BENCH_DIR`` or ``benches/.data`` (add ``benches/.data/`` to
``.gitignore``). A dataset is regenerated only when its ``DONE`` marker is missing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

BENCH_DIR = Path(os.environ.get("FASTEVAL_BENCH_DIR", ROOT / "benches" / ".data"))

SIZES = {"10k": 10_000, "100k": 100_000, "1M": 1_000_000}

# five measures (bench_speed, bench_latency), in each tool's spelling
MEASURES5 = {
    "fasteval": ["ndcg@10", "map@100", "recip_rank", "recall@100", "P@10"],
    "pytrec_eval": ["ndcg_cut.10", "map_cut.100", "recip_rank", "recall.100", "P.10"],
    "ranx": ["ndcg@10", "map@100", "mrr", "recall@100", "precision@10"],
    "ir_measures": ["nDCG@10", "AP@100", "RR", "R@100", "P@10"],
}
# ten measures (bench_batch, bench_ray)
MEASURES10 = {
    "fasteval": ["ndcg@10", "ndcg@100", "map", "map@100", "recip_rank", "P@5", "P@10", "recall@100", "Rprec", "bpref"],
    "pytrec_eval": ["ndcg_cut.10", "ndcg_cut.100", "map", "map_cut.100", "recip_rank", "P.5", "P.10",
                    "recall.100", "Rprec", "bpref"],
    "ranx": ["ndcg@10", "ndcg@100", "map", "map@100", "mrr", "precision@5", "precision@10", "recall@100",
             "r-precision", "bpref"],
    "ir_measures": ["nDCG@10", "nDCG@100", "AP", "AP@100", "RR", "P@5", "P@10", "R@100", "Rprec", "Bpref"],
}
MEASURE_SETS = {"5": MEASURES5, "10": MEASURES10}


def dataset(size: str, *, depth: int = 100, runs: int = 1, seed: int = 0, int_ids: bool = False,
            compression: str = "zstd") -> Path:
    """Directory with ``qrels.parquet`` and ``runs/run_*.parquet`` for ``size`` queries
    (parquet ``compression``: the same rows whatever the codec)."""
    from fasteval.datasets import SynthSpec, write_synth

    n = SIZES[size] if size in SIZES else int(size)
    codec = "" if compression == "zstd" else f"_{compression}"
    d = BENCH_DIR / f"q{size}_d{depth}_r{runs}_s{seed}{'_int' if int_ids else ''}{codec}"
    if not (d / "DONE").exists():
        write_synth(SynthSpec(queries=n, depth=depth, runs=runs, seed=seed, int_ids=int_ids), d,
                    compression=compression)
        (d / "DONE").write_text("ok\n")
    return d
