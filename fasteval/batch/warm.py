"""Load the compiled kernels on a background thread while the caller reads its inputs.

A fresh process pays about half a second the first time it calls a kernel: numba loads
its type registries and the cached machine code. That work holds the GIL only in Python
and touches no input, while reading parquet happens in polars' threads without the GIL,
so a command line can do both at once: start :func:`warm_up`, read the files, then
``join()`` the thread before the first kernel runs on the real data.

Told what the job is (a :class:`Job`: its measures and options, and what is known of its
sizes), the thread loads the kernels that job will call and no others: a small job the
polars preparation and the serial score pass, a large one the preparation kernels and the
parallel pass, each for the job's own measures. Unknown sizes load what either may need.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any

_MEASURES = ("map", "ndcg@10")
"""The measures warmed when no job is given."""


class Slot:
    """A value handed from one thread to another once: :meth:`put` (the first call counts),
    :meth:`get` (waits for it)."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._value: Any = None

    def put(self, value: Any) -> None:
        if not self._ready.is_set():
            self._value = value
            self._ready.set()

    def get(self) -> Any:
        self._ready.wait()
        return self._value


@dataclass(frozen=True)
class Job:
    """What a job will score, for :func:`warm_up`.

    Attributes
    ----------
    measures : tuple
        Its measures (names or :class:`fasteval.Measure`).
    options : dict
        Its :class:`fasteval.Evaluator` options (``tie_break``, ``max_docs``, ...).
    qrels_rows, run_rows : int or None
        At most this many rows in the qrels, in the largest run (None: unknown).
    run_rows_at_least, qrels_rows_at_least : int or None
        The largest run / the qrels have at least this many rows (None: unknown).
    cached_qrels : Slot or None
        Where the caller puts the qrels it restored from :mod:`fasteval.batch.qrels_cache`
        (a :class:`fasteval.prepare.PreparedQrels`, or None) once looked up: with them,
        the thread prepares no qrels of its own.
    """

    measures: tuple = _MEASURES
    options: dict = field(default_factory=dict)
    qrels_rows: int | None = None
    run_rows: int | None = None
    run_rows_at_least: int | None = None
    qrels_rows_at_least: int | None = None
    cached_qrels: Slot | None = None


def rows_bounds(path: Any) -> tuple[int | None, int | None]:
    """``(at_least, at_most)`` rows of a table file, each None when unknown: exact for a
    parquet file (its footer), an upper bound for an uncompressed text file (no row is
    shorter than 6 bytes, ``q,d,1`` and a newline), nothing for the rest.

    Examples
    --------
    >>> rows_bounds("datasets/trec/qrels.test")[1] <= 100_000
    True
    >>> rows_bounds("-")
    (None, None)
    """
    try:
        name = os.fspath(path)
        if not isinstance(name, str) or name == "-" or not os.path.isfile(name):
            return None, None
        if name.lower().endswith((".parquet", ".parq", ".pq")):
            from fasteval.batch.discover import parquet_rows

            rows = parquet_rows(name)
            return rows, rows
        if name.lower().endswith((".gz", ".bz2", ".xz", ".zst", ".zip")):
            return None, None
        return None, os.path.getsize(name) // 6 + 1
    except Exception:  # noqa: BLE001 - a hint only: the job reports a bad file itself
        return None, None


def _run_job(job: Job) -> None:
    import polars as pl

    from fasteval.kernels.ranking import SERIAL_ROWS
    from fasteval.prepare.small import SMALL_ROWS

    qrels = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"],
                          "relevance": [1, 0, 2]})
    run = _with_rank(pl.DataFrame({"query_id": ["q1", "q1", "q2", "q3"],
                                   "doc_id": ["b", "a", "c", "d"], "score": [1.0, 1.0, 0.5, 0.1]}),
                     job)
    small_qrels = job.qrels_rows is not None and job.qrels_rows <= SMALL_ROWS
    small_runs = job.run_rows is not None and job.run_rows <= SMALL_ROWS
    large = ((job.qrels_rows_at_least or 0) > SMALL_ROWS
             or (job.run_rows_at_least or 0) > SMALL_ROWS)
    if not large:  # polars prepares small tables: the serial pass scores them
        from fasteval.evaluation import Evaluator

        Evaluator(qrels, list(job.measures), **job.options).evaluate(run)
    if small_qrels and small_runs:
        return
    # a large table is prepared by the kernels: load them too (if the size is not known,
    # only if compiled, since a small job, which never needs them, would wait for the compiler)
    if large or _preparation_cached():
        from fasteval.evaluation import score_batch
        from fasteval.measures import parse_measures
        from fasteval.prepare import check_qrels_table, prepare_run
        from fasteval.prepare.qrels import prepare_qrels_kernels

        opts = dict(job.options)
        pq = job.cached_qrels.get() if job.cached_qrels is not None else None
        if pq is not None:  # the qrels are prepared already: only the run's kernels
            run = _with_rank(_tiny_run(pq), job)
            opts.pop("complete", None)  # (placeholders for every other query: no new kernel)
        else:
            pq = prepare_qrels_kernels(check_qrels_table(qrels))
        batch = prepare_run(pq, run, **{k: opts[k] for k in _PREPARE_OPTIONS if k in opts})
        if large:
            parallel = (job.run_rows_at_least or 0) >= SERIAL_ROWS or None
            score_batch(pq, batch, parse_measures(list(job.measures)),
                        **{k: opts[k] for k in _SCORE_OPTIONS if k in opts}, parallel=parallel)


def _with_rank(run: Any, job: Job) -> Any:
    """``run`` with a ``rank`` column when the job orders by it (``tie_break="rank"``)."""
    if job.options.get("tie_break") != "rank":
        return run
    import polars as pl

    return run.with_columns(pl.int_range(1, run.height + 1, dtype=pl.Int64).alias("rank"))


def _tiny_run(pq: Any) -> Any:
    """Two unjudged documents for the first query of prepared qrels ``pq``, ids typed as
    theirs."""
    import polars as pl

    qid = pq.query_ids.slice(0, 1)
    docs = [10**15 + 1, 10**15 + 2] if pq.doc_ids.dtype.is_integer() else ["\x00a", "\x00b"]
    return pl.DataFrame({"query_id": pl.concat([qid, qid]), "doc_id": docs,
                         "score": [1.0, 1.0]})


_PREPARE_OPTIONS = ("tie_break", "max_docs", "judged_only", "complete", "duplicates")
_SCORE_OPTIONS = ("relevance_level", "compat", "num_docs")


def _preparation_cached() -> bool:
    """Whether numba's cache holds compiled preparation kernels for this machine."""
    from fasteval.kernels.rank import rank_and_label

    try:
        return bool(rank_and_label._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - another numba: load them when a job needs them
        return False


def _warm(job: Job) -> None:
    try:
        _run_job(job)
    except Exception:  # noqa: BLE001 - warming is an optimisation; the real call reports
        pass


def warm_up(job: Job | None = None) -> threading.Thread:
    """Start loading the kernels ``job`` will call on a daemon thread; ``join()`` it
    before scoring. Without a job: those of a small job scoring MAP and nDCG@10, and the
    preparation kernels if they are compiled.

    Examples
    --------
    >>> t = warm_up(Job(measures=("P@10",), qrels_rows=3, run_rows=4))
    >>> t.join()
    >>> t.is_alive()
    False
    """
    thread = threading.Thread(target=_warm, args=(job or Job(),), name="fasteval-warm-up",
                              daemon=True)
    thread.start()
    return thread
