"""``fasteval datasets synth``: write a realistic synthetic benchmark as parquet.

Examples
--------
>>> import tempfile
>>> from fasteval.cli import main
>>> d = tempfile.mkdtemp()
>>> main(["datasets", "synth", "--queries", "30", "--depth", "5", "--runs", "2", "--out", d, "--quiet"])
0
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from fasteval.cli import add_command
from fasteval.datasets.synth import COMPRESSIONS, SynthSpec, write_synth
from fasteval.errors import ParameterError, options_named


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``datasets`` and its ``synth`` action."""
    p = add_command(subparsers, "datasets")
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    s = sub.add_parser(
        "synth",
        help="write synthetic qrels and runs (parquet), deterministic by seed",
        description=(
            "Write OUT/qrels.parquet (graded 0-3, some -1 = pooled but unjudged) and "
            "OUT/runs/run_<i>.parquet (query_id, doc_id, score; sorted by query then score), "
            "with score ties, unjudged documents and queries missing on either side. "
            "Generated in blocks, so memory stays bounded for millions of queries."
        ),
    )
    s.add_argument("--queries", type=int, required=True, metavar="N", help="number of queries")
    s.add_argument("--depth", type=int, default=100, metavar="K", help="documents per query (100)")
    s.add_argument("--runs", type=int, default=3, metavar="R", help="number of runs (3)")
    s.add_argument("--out", required=True, metavar="DIR", help="output directory")
    s.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (0)")
    s.add_argument("--int-ids", action="store_true", help="integer query and doc ids")
    s.add_argument("--judged", type=int, default=20, help="judged documents per query (20, ~5 relevant)")
    s.add_argument("--rows-per-group", type=int, default=1_000_000, help="parquet row-group size")
    s.add_argument("--compression", default="zstd", choices=COMPRESSIONS,
                   help="parquet codec (zstd: smallest files; snappy, lz4: faster to read)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.add_argument("--log-json", action="store_true", help="print a JSON summary line on stdout")
    return p


_OPTION_NAMES = {name: f"--{name.replace('_', '-')}" for name in (
    "queries", "depth", "runs", "seed", "judged", "out", "compression", "rows_per_group")}
""":class:`fasteval.datasets.synth.SynthSpec` and ``write_synth`` names -> the options."""


@options_named(_OPTION_NAMES)
def run(args: argparse.Namespace) -> int:
    """Run ``fasteval datasets ACTION``."""
    if getattr(args, "action", None) != "synth":
        raise ParameterError("datasets ACTION", "'synth'", getattr(args, "action", None))
    from fasteval.progress import Progress

    if args.out in ("-", ""):  # several files: no standard output, and '' is no folder
        raise ParameterError("--out", "a directory (created when missing; the dataset is several "
                             "files, never standard output)", args.out)
    spec = SynthSpec(
        queries=args.queries,
        depth=args.depth,
        runs=args.runs,
        seed=args.seed,
        int_ids=args.int_ids,
        judged=args.judged,
    )
    t0 = time.perf_counter()
    bar = Progress(total=spec.queries, unit="queries", enabled=not args.quiet)
    with bar:
        paths = write_synth(
            spec, args.out, rows_per_group=args.rows_per_group,
            compression=args.compression, progress=bar.update_to
        )
    elapsed = time.perf_counter() - t0
    if args.log_json:
        print(
            json.dumps(
                {
                    "event": "datasets.synth",
                    "queries": spec.queries,
                    "depth": spec.depth,
                    "runs": spec.runs,
                    "seed": spec.seed,
                    "files": {k: str(v) for k, v in paths.items()},
                    "seconds": round(elapsed, 3),
                }
            )
        )
    elif not args.quiet:
        from fasteval._words import one_line

        print(f"wrote {len(paths)} files under {one_line(str(args.out))} in {elapsed:.1f}s",
              file=sys.stderr)
    return 0
