"""``fasteval.evaluate``: one call that scores runs in memory, in this process (an
:class:`fasteval.Evaluator`) or on Ray Data (:mod:`fasteval.batch.ray_engine`, imported only
for ``engine="ray"``); it sits above both, so that neither imports the other."""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import polars as pl

from fasteval.evaluation import Evaluator, split_runs
from fasteval.measures import Measure
from fasteval.options import Compat, Duplicates, Engine, TieBreak


def evaluate(
    qrels: Any,
    run: Any,
    measures: str | Measure | Iterable[str | Measure],
    *,
    run_id: str | None = None,
    engine: Engine = "local",
    relevance_level: int = 1,
    max_docs: int | None = None,
    complete: bool = False,
    judged_only: bool = False,
    tie_break: TieBreak = "trec",
    duplicates: Duplicates = "error",
    num_docs: int = 0,
    compat: Compat = 10,
    **ray_options: Any,
) -> pl.DataFrame:
    """Evaluate one or more runs; per-query results in long form.

    Parameters
    ----------
    qrels, run
        Tables, paths or dicts (see :func:`fasteval.read_qrels`, :func:`fasteval.read_run`);
        ``run`` may also have a ``run_id`` column, or be a mapping ``{name: run}`` (one run
        per key: a table under a key whose ``run_id`` column names several is refused).
    measures
        Names in trec_eval, ir_measures or ranx spelling, each labelled in the results as
        asked for (``"mrr"``, ``"nDCG@10"``); a :class:`~fasteval.measures.Measure`,
        trec_eval's ``name.params`` lists (``"P.5,10"``) and names of several (``"P"``,
        ``"official"``) carry canonical names (``P_10``, as trec_eval prints). Two names of
        one measure (``"ndcg@10"``, ``"ndcg_cut_10"``) raise
        :class:`~fasteval.errors.ParameterError`; a name repeated as written is scored once.
    run_id : str, optional
        Name for a single run without a ``run_id`` column (default ``"run"``); it renames
        the run of a ``run_id`` column naming one, and is refused for one naming several.
    engine : {"local", "ray"}
        ``"ray"`` scores on Ray Data (``pip install ".[ray]"``) a table, a mapping ``{name:
        table}``, or parquet paths / globs / directories (:mod:`fasteval.batch.discover`),
        with the local results bit for bit.
    relevance_level, max_docs, complete, judged_only, tie_break, duplicates, num_docs, compat
        See :class:`fasteval.Evaluator`.
    **ray_options
        ``ray_address``, ``share_qrels_limit``, ``qrels_mode``: see :func:`.run_job_ray`.

    Returns
    -------
    polars.DataFrame
        ``run_id``, ``query_id``, ``measure``, ``value`` (:func:`fasteval.aggregate`
        summarises it). Run queries absent from the qrels have no rows (trec_eval's rule);
        :class:`fasteval.Evaluator`'s ``report`` counts them (and those filled or deduplicated).

    Examples
    --------
    >>> import fasteval
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    >>> runs = {"bm25": {"q1": {"a": 1.0}, "q2": {"c": 1.0, "b": 0.5}}}
    >>> fasteval.aggregate(fasteval.evaluate(qrels, runs, "mrr")).rows()
    [('bm25', 'mrr', 0.75)]
    >>> fasteval.evaluate(qrels, runs, ["P@1", "P_1"])
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: measures must be one name per measure (both are P_1; \
results carry the name asked for), got ['P@1', 'P_1']
    """
    options = dict(relevance_level=relevance_level, max_docs=max_docs, complete=complete,
                   judged_only=judged_only, tie_break=tie_break, duplicates=duplicates,
                   num_docs=num_docs, compat=compat, **ray_options)
    if engine != "local":
        from fasteval.batch.ray_engine import evaluate_ray  # (imports Ray's driver lazily)
        return evaluate_ray(qrels, run, measures, run_id=run_id, engine=engine, **options)
    if isinstance(run, str | os.PathLike):  # read on a thread while the qrels are prepared
        with ThreadPoolExecutor(1, thread_name_prefix="fasteval-read") as pool:
            pending = pool.submit(split_runs, run, run_id)  # (polars reads without the GIL)
            evaluator = Evaluator(qrels, measures, **options)
            runs = pending.result()
    else:
        evaluator = Evaluator(qrels, measures, **options)
        runs = split_runs(run, run_id)
    # called from here: evaluate_parts' warnings name the line that called evaluate
    return evaluator.evaluate_parts(runs, None)
