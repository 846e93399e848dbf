"""``fasteval warmup``: compile the kernels once, so that the first real job does not pay.

numba compiles each kernel the first time a process calls it and keeps the machine code in
its cache (``__pycache__`` beside the sources, or ``$NUMBA_CACHE_DIR``); later processes
load it in milliseconds. Run this once after installing (or upgrading) fasteval, on the
machine that will evaluate: the cache is specific to the CPU and to numba's version.

Examples
--------
>>> from fasteval.cli import main
>>> main(["warmup", "--quiet"])  # doctest: +SKIP
0
"""

from __future__ import annotations

import argparse
import sys
import time

from fasteval.cli import add_command


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``fasteval warmup``."""
    p = add_command(
        subparsers,
        "warmup",
        (
            "Compile every kernel variant the commands and the Python API use into numba's "
            "cache: eval and trec-eval (text and integer ids, small and large runs, all "
            "measure families, expected values over ties, preference measures), compare, "
            "fuse, diversity and the Haystack evaluators. Takes a few minutes once; later "
            "jobs load the compiled code. Without it, a job that compiles says so in one "
            "line on stderr."
        ),
    )
    p.add_argument("--quiet", action="store_true", help="print nothing")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``fasteval warmup``."""
    from fasteval._warmup import compile_kernels
    from fasteval.kernels._jit import JIT_DISABLED
    from fasteval.progress import quiet

    if JIT_DISABLED:  # NUMBA_DISABLE_JIT=1: the kernels run as Python; nothing to compile
        if not args.quiet:
            print("fasteval warmup: numba's JIT is disabled (NUMBA_DISABLE_JIT): nothing to "
                  "compile", file=sys.stderr)
        return 0
    t0 = time.perf_counter()

    def report(name: str, seconds: float) -> None:
        if not args.quiet:
            print(f"fasteval warmup: {name}: {seconds:.1f}s", file=sys.stderr, flush=True)

    with quiet():  # (its own report says what it compiles, not the first-run notice)
        done = compile_kernels(report)
    if not args.quiet:
        fallback = sys.modules.get("fasteval.kernels._cache_dir")  # (numba found no folder)
        where = None if fallback is None else fallback.state["where"]
        kept = ("kernels are in numba's cache" if where is None else
                "no writable cache folder: the kernels were compiled in memory only (set "
                "NUMBA_CACHE_DIR to a writable folder to keep them)" if where == "memory" else
                f"kernels are in numba's cache in {where} (the package's folder is read-only)")
        print(f"fasteval warmup: {len(done)} jobs in {time.perf_counter() - t0:.1f}s; {kept}",
              file=sys.stderr)
    return 0
