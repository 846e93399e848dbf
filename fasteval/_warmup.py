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
from collections.abc import Callable, Iterator
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
        from fasteval.prepare.qrels import _prepare_qrels_kernels

        opts = dict(job.options)
        pq = job.cached_qrels.get() if job.cached_qrels is not None else None
        if pq is not None:  # the qrels are prepared already: only the run's kernels
            run = _with_rank(_tiny_run(pq), job)
            opts.pop("complete", None)  # (placeholders for every other query: no new kernel)
        else:
            pq = _prepare_qrels_kernels(check_qrels_table(qrels))
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
    from fasteval.kernels import prepare as K

    try:
        return bool(K.rank_and_label._cache._cache_file._load_index())
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


_PROFILE_MEASURES = ["ndcg@10", "map", "P@10", "recall@100", "recip_rank"]
"""Answered from the per-query profiles: the score pass without the family functions."""

_GENERIC_MEASURES = ["bpref", "ndcg", "infAP", "rbp", "num_ret"]
"""Need the family functions: the generic score pass."""

_MODEL_MEASURES = ["INST(max_rel=3)", "RBP(rel=1)", "Compat", "bpref"]
"""User-model measures (C/W/L, Compatibility): the generic pass with the model functions."""

_EXPECTED_MEASURES = ["ndcg@10", "map", "P@10", "recip_rank", "ndcg", "num_ret"]
"""``tie_break="expected"``: the expected-value passes and the tie-group kernels."""


Step = tuple[str, Callable[[], object]]
"""A warm-up job: its name, and the calls that compile its kernels."""


def compile_kernels(report: Callable[[str, float], None] | None = None) -> list[str]:
    """Compile (or load) every kernel variant that fasteval's commands and API entry points
    use, so that the first real job finds them in numba's cache: ``fasteval warmup``.

    Jobs, each timed: the TREC text tokenizer (irregular text; regular files are read by
    polars), then for text ids and for integer ids, a small job (the serial score passes)
    and one of 700k rows (the blocked, threaded preparation and the parallel passes), each
    with measures answered from profiles and with measures that need the family functions;
    with text ids, both sizes again with user-model measures (C/W/L, Compatibility) and
    with ``tie_break="expected"`` (the tie-group kernels and the expected-value passes);
    then ``fasteval fuse``'s kernels (runs as dicts and as tables, text and integer ids),
    ``fasteval compare``'s resampling kernels (every test, both randomization modes, the
    max-T corrections), the preference measures (``trec-eval -R prefs``), diversity
    (:func:`fasteval.evaluate_diversity`, serial and parallel) and the document kernels of
    the Haystack evaluators and :func:`fasteval.evaluators.evaluate_rag`. Returns the names
    of the jobs run; ``report(name, seconds)`` is called after each.

    Examples
    --------
    >>> compile_kernels()[0]  # doctest: +SKIP
    'TREC text tokenizer'
    """
    import time

    done: list[str] = []
    for steps in (_eval_steps, _fusion_steps, _compare_steps, _prefs_steps, _diversity_steps,
                  _document_steps):
        for name, job in steps():
            t = time.perf_counter()
            job()
            done.append(name)
            if report is not None:
                report(name, time.perf_counter() - t)
    return done


def _eval_steps() -> Iterator[Step]:
    """``fasteval eval`` / ``trec-eval``: the tokenizer, preparation and score passes."""
    from fasteval.datasets.synth import SynthSpec, generate
    from fasteval.evaluation import Evaluator
    from fasteval.io.trec import read_trec

    yield "TREC text tokenizer", lambda: (
        read_trec(b"q1 Q0 d1 1 2.5 t\x0bx\nq1 Q0 d2 2 1.5 t\n", "run", source="warmup"),
        read_trec(b"q1 0 d1 1\nq1  0\x0bd2 0\n", "qrels", source="warmup"),
    )
    for int_ids in (False, True):
        qrels, runs = generate(SynthSpec(queries=7_000, depth=100, runs=1, seed=1, int_ids=int_ids))
        run = next(iter(runs.values()))
        small = run.head(2_000)
        kind = "integer" if int_ids else "text"
        for measures, what in ((_PROFILE_MEASURES, "profile"), (_GENERIC_MEASURES, "family")):
            ev = Evaluator(qrels, measures)
            yield f"{kind} ids, small run, {what} measures", lambda ev=ev, r=small: ev.evaluate(r)
            yield f"{kind} ids, {run.height:,} rows, {what} measures", lambda ev=ev, r=run: ev.evaluate(r)
        if not int_ids:  # the tie kernels take either kind of id alike
            ev = Evaluator(qrels, _MODEL_MEASURES)
            yield "small run, user-model measures", lambda ev=ev, r=small: ev.evaluate(r)
            yield f"{run.height:,} rows, user-model measures", lambda ev=ev, r=run: ev.evaluate(r)
            ev = Evaluator(qrels, _EXPECTED_MEASURES, tie_break="expected")
            yield "small run, expected values over ties", lambda ev=ev, r=small: ev.evaluate(r)
            yield f"{run.height:,} rows, expected values over ties", lambda ev=ev, r=run: ev.evaluate(r)


def _fusion_steps() -> Iterator[Step]:
    """``fasteval fuse`` / :func:`fasteval.fuse`: runs as dicts and as tables (files)."""
    from fasteval.datasets.synth import SynthSpec, generate
    from fasteval.fusion import fuse

    for int_ids in (False, True):  # one kernel per step serves every method and norm
        q, a, b, c = (1, 10, 11, 12) if int_ids else ("q", "a", "b", "c")
        pair = [{q: {a: 2.0, b: 1.0}}, {q: {b: 3.0, c: 1.0}}]
        _, runs = generate(SynthSpec(queries=50, depth=20, runs=2, seed=2, int_ids=int_ids))
        tables = list(runs.values())
        yield (f"fusion, {'integer' if int_ids else 'text'} ids",
               lambda r=pair, t=tables: (fuse(r, method="rrf"), fuse(t, method="wsum", norm="zmuv", weights=[0.3, 0.7])))


def _compare_steps() -> Iterator[Step]:
    """``fasteval compare`` / :func:`fasteval.compare`: sign flips (sampled and every flip),
    the bootstrap, randomised Tukey HSD and the max-T corrections."""
    import numpy as np
    import polars as pl

    from fasteval.compare import compare

    rng = np.random.default_rng(3)

    def results(n: int) -> pl.DataFrame:
        return pl.DataFrame({"run_id": [r for r in "abc" for _ in range(n)],
                             "query_id": [f"q{i}" for _ in "abc" for i in range(n)],
                             "measure": "ndcg@10", "value": rng.random(3 * n)})

    many, few = results(60), results(8)
    tests = ["t", "wilcoxon", "sign", "randomization", "bootstrap", "tukey", "randomized-tukey"]
    yield "compare, every test", lambda: [
        compare(res, "a", tests=tests, n_resamples=200, ci_method=ci)
        for res in (many, few) for ci in ("t", "bca")]
    yield "compare, max-T corrections", lambda: [
        compare(many, base, tests=["randomization"], correction=c, n_resamples=200)
        for base, c in ((None, "maxt"), ("a", "stepdown"))]


def _prefs_steps() -> Iterator[Step]:
    """``trec-eval -R prefs | qrels_prefs`` / :func:`fasteval.evaluate_prefs`."""
    import polars as pl

    from fasteval.prefs import evaluate_prefs

    prefs = pl.DataFrame({"query_id": ["q"] * 3, "jg": ["u"] * 3, "jsg": ["s"] * 3,
                          "doc_id": ["a", "b", "c"], "rel_level": [2.0, 1.0, 0.0]})
    qrels = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    run = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["b", "a", "d"], "score": [3.0, 2.0, 1.0]})
    yield "preference measures", lambda: (
        evaluate_prefs(prefs, run, mode="prefs", measures=["all_prefs"], per_query=True),
        evaluate_prefs(qrels, run, mode="qrels_prefs", measures=["all_prefs"], per_query=True))


def _diversity_steps() -> Iterator[Step]:
    """:func:`fasteval.evaluate_diversity`: the serial pass and (20,000 ranked documents or
    more) the parallel one."""
    import polars as pl

    from fasteval.diversity import evaluate_diversity

    n, depth = 250, 100
    qids = [f"q{i}" for i in range(n)]
    qrels = pl.DataFrame({"query_id": [q for q in qids for _ in range(4)],
                          "subtopic": [s for _ in qids for s in (1, 1, 2, 3)],
                          "doc_id": [f"d{j}" for _ in qids for j in (0, 3, 3, 7)],
                          "relevance": [1, 1, 1, 0] * n})
    run = pl.DataFrame({"query_id": [q for q in qids for _ in range(depth)],
                        "doc_id": [f"d{j}" for _ in qids for j in range(depth)],
                        "score": [float(depth - j) for _ in qids for j in range(depth)]})
    measures = ["alpha-nDCG@10", "ERR-IA@10", "nNRBP", "P-IA@5", "strec@10", "MAP-IA"]
    yield "diversity", lambda: [evaluate_diversity(qrels, r, measures)
                                for r in (run.head(depth), run)]


def _document_steps() -> Iterator[Step]:
    """The Haystack evaluators and :func:`fasteval.evaluators.evaluate_rag` (text kept in
    Python strings, in Arrow large strings and in polars' string views)."""
    import polars as pl

    from fasteval.evaluators import Document as D
    from fasteval.evaluators import (
        DocumentMAPEvaluator,
        DocumentMRREvaluator,
        DocumentNDCGEvaluator,
        DocumentRecallEvaluator,
        evaluate_rag,
    )

    gt = [[D(content="France", score=1.0), D(content="Paris", score=0.5)], [D(content="Zürich")]]
    ret = [[D(content="France"), D(content="Germany"), D(content="Paris")], [D(content="Zürich")]]
    evaluators = (DocumentNDCGEvaluator(), DocumentMAPEvaluator(), DocumentMRREvaluator(),
                  DocumentRecallEvaluator(mode="single_hit"), DocumentRecallEvaluator(mode="multi_hit"))
    table = pl.DataFrame({"retrieved": [["a", "b", "é"], ["c"]], "ground_truth": [["a"], ["c", "d"]],
                          "answer": ["x", "y"], "gold": ["x", "z"]})
    keys = pl.DataFrame({"retrieved": [[1, 2], [3]], "ground_truth": [[1], [4]]})
    yield "document evaluators", lambda: (
        [e.run(ground_truth_documents=gt, retrieved_documents=ret) for e in evaluators],
        evaluate_rag(table, answer_col="answer", gold_col="gold"),
        evaluate_rag(table.to_arrow().cast(_large_strings(table)), answer_col="answer", gold_col="gold"),
        evaluate_rag(keys))


def _large_strings(table: Any) -> Any:
    """``table``'s Arrow schema with its text as ``large_string`` (lists of them too)."""
    import pyarrow as pa

    schema = table.to_arrow().schema
    fields = [pa.field(f.name, pa.large_list(pa.large_string()) if pa.types.is_list(f.type)
                       or pa.types.is_large_list(f.type) else pa.large_string()) for f in schema]
    return pa.schema(fields)
