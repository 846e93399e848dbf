"""Load the compiled kernels on a background thread while the caller reads its inputs.

A fresh process pays about half a second the first time it calls a kernel: numba loads
its type registries and the cached machine code. That work holds the GIL only in Python
and touches no input, while reading parquet happens in polars' threads without the GIL,
so a command line can do both at once: start :func:`warm_up`, read the files, then
``join()`` the thread before the first kernel runs on the real data.
"""

from __future__ import annotations

import threading


def _run_tiny_job() -> None:
    import polars as pl

    from fasteval.evaluation import Evaluator

    qrels = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"],
                          "relevance": [1, 0, 2]})
    run = pl.DataFrame({"query_id": ["q1", "q1", "q2", "q3"], "doc_id": ["b", "a", "c", "d"],
                        "score": [1.0, 1.0, 0.5, 0.1]})
    Evaluator(qrels, ["map", "ndcg@10"]).evaluate(run)


def _warm() -> None:
    try:
        _run_tiny_job()
    except Exception:  # noqa: BLE001 - warming is an optimisation; the real call reports
        pass


def warm_up() -> threading.Thread:
    """Start loading the kernels on a daemon thread; ``join()`` it before scoring.

    Examples
    --------
    >>> t = warm_up()
    >>> t.join()
    >>> t.is_alive()
    False
    """
    thread = threading.Thread(target=_warm, name="fasteval-warm-up", daemon=True)
    thread.start()
    return thread
