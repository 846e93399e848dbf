"""Command line: ``fasteval eval | trec-eval | compare | sas | judge | datasets``.

Each subcommand lives in its own module with two functions,
``add_parser(subparsers)`` and ``run(args) -> int``. Modules are imported only
when their subcommand is used, so ``fasteval --help`` and ``import fasteval`` stay fast.
User errors are printed as one line on stderr, exit status 2, no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

# subcommand name -> module (relative to fasteval.cli), one-line help
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("eval_cmd", "score one or more runs against qrels"),
    "trec-eval": ("trec_eval_cmd", "drop-in replacement for the trec_eval 10 command line"),
    "compare": ("compare_cmd", "compare retrievers with paired significance tests"),
    "sas": ("sas_cmd", "semantic answer similarity of predictions against gold answers"),
    "judge": ("judge_cmd", "LLM-judged faithfulness / context relevance"),
    "datasets": ("datasets_cmd", "generate synthetic benchmark datasets"),
}


def console_main() -> NoReturn:
    """The ``fasteval`` program: :func:`main` with process-wide settings for a CLI run.

    The command owns its process, so it may set what a library must not (a value set in
    the environment wins):

    * OpenMP threads that wait passively (``OMP_WAIT_POLICY=PASSIVE``) instead of spinning,
      and no BLAS thread pool (``OPENBLAS_NUM_THREADS=1``; nothing here calls BLAS), which
      leaves the cores to the parquet reader that runs beside the kernels in batch jobs;
    * the allocators keep freed memory for reuse: glibc's (:func:`_keep_freed_memory`),
      which Arrow's buffers then use too (``ARROW_DEFAULT_MEMORY_POOL=system``), and polars'
      jemalloc (``_RJEM_MALLOC_CONF``: freed pages are returned after 10 s rather than
      polars' 0.5 s), so that every chunk of a batch job does not fault in and zero fresh
      pages; and numpy does not ask for transparent huge pages (``NUMPY_MADVISE_HUGEPAGE=0``):
      where the kernel compacts memory to find them, one large array can stall for most of a
      second;
    * numba's import-time probe for a BLAS is answered "none" (:func:`_skip_blas_probe`):
      with scipy installed it imports ``scipy.linalg`` (a quarter of a second) for
      ``np.dot`` support that no kernel here uses;
    * the process ends without tearing the interpreter down (:func:`_exit_now`): by then
      every output file is complete and renamed into place, and freeing gigabytes of
      arrays and unloading the modules one by one took most of a second after a large job.
    """
    import os

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if os.environ.get("_RJEM_MALLOC_CONF", _POLARS_JEMALLOC) == _POLARS_JEMALLOC:
        # unset, or polars' own default inherited from a parent process that imported polars
        os.environ["_RJEM_MALLOC_CONF"] = "dirty_decay_ms:10000,muzzy_decay_ms:10000"
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    _keep_freed_memory()
    _skip_blas_probe()
    _exit_now(main())


def _exit_now(status: int) -> NoReturn:
    """Flush the standard streams and logging, then end the process with ``status`` at
    once (``os._exit``): no interpreter teardown. Only for the console entry point, after
    the command has finished (files closed, results renamed into place)."""
    import logging
    import os

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed pipe or stream: nothing more can be written
            status = status or 1
    os._exit(status)


_POLARS_JEMALLOC = "dirty_decay_ms:500,muzzy_decay_ms:1000"
"""What ``import polars`` puts in ``_RJEM_MALLOC_CONF`` when it is unset (polars 1.x)."""

_BLAS_PROBE = ("scipy", "scipy.linalg", "scipy.linalg.cython_blas")


def _skip_blas_probe() -> None:
    """Make ``scipy.linalg.cython_blas`` (and its packages, if not loaded yet) unimportable
    for numba's import-time check ``numba.np.arraymath._check_blas``, and only for it: numba
    then records that no BLAS is available. The finder looks for that function on the
    importing thread's stack, so every other import of scipy is untouched."""
    import importlib.abc

    class _NoBlasForNumbaProbe(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname in _BLAS_PROBE and _in_numba_blas_check():
                raise ImportError("fasteval: numba's BLAS probe skipped (no kernel uses BLAS)")
            return None

    sys.meta_path.insert(0, _NoBlasForNumbaProbe())


def _in_numba_blas_check() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_check_blas" and code.co_filename.replace("\\", "/").endswith(
                "numba/np/arraymath.py"):
            return True
        frame = frame.f_back
    return False


def _keep_freed_memory() -> None:
    """Ask glibc's malloc to serve large arrays from its heap and keep freed memory there.

    By default an allocation over 32 MiB is a fresh ``mmap`` and its release a ``munmap``:
    a batch job allocates arrays of that size for every chunk, and the kernel then spends
    about a fifth of the job's CPU time faulting in and zeroing pages. Without ``mmap``
    for large blocks and with a high trim threshold, freed blocks are reused instead. The
    peak resident memory is unchanged (the same blocks are live at the peak). Skipped when
    the C library is not glibc or when ``MALLOC_MMAP_MAX_``/``MALLOC_TRIM_THRESHOLD_`` are
    set in the environment.
    """
    import os

    if "MALLOC_MMAP_MAX_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return
    m_trim_threshold, m_top_pad, m_mmap_max = -1, -2, -4
    mallopt(m_mmap_max, 0)
    mallopt(m_trim_threshold, 2**31 - 1)  # a C int: trim only above 2 GiB free at the top
    mallopt(m_top_pad, 64 << 20)


def _load(name: str):
    module, _ = SUBCOMMANDS[name]
    return importlib.import_module(f"fasteval.cli.{module}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fasteval`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "trec-eval":
        # trec_eval's own flag grammar (getopt style: -l2, -mP.5) is parsed by the module itself.
        return _guard(lambda: _load("trec-eval").main(argv[1:]))
    parser = argparse.ArgumentParser(prog="fasteval", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, (_, help_text) in SUBCOMMANDS.items():
        if name == chosen:
            _load(name).add_parser(sub)
        else:
            sub.add_parser(name, help=help_text)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return _guard(lambda: _load(args.command).run(args))


def _guard(fn) -> int:
    from fasteval.errors import FastevalError

    try:
        return int(fn() or 0)
    except FastevalError as exc:
        print(f"fasteval: error: {exc}", file=sys.stderr)
        return 2
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        print(f"fasteval: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fasteval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
