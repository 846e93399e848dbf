"""Load the compiled kernels on a background thread while the caller reads its inputs.

A fresh process pays about half a second the first time it calls a kernel: numba loads
its type registries and the cached machine code. That work holds the GIL only in Python
and touches no input, while reading parquet happens in polars' threads without the GIL,
so a command line can do both at once: start :func:`warm_up`, read the files, then
``join()`` the thread before the first kernel runs on the real data.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


def _run_tiny_job() -> None:
    import polars as pl

    from fasteval.evaluation import Evaluator

    qrels = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"],
                          "relevance": [1, 0, 2]})
    run = pl.DataFrame({"query_id": ["q1", "q1", "q2", "q3"], "doc_id": ["b", "a", "c", "d"],
                        "score": [1.0, 1.0, 0.5, 0.1]})
    Evaluator(qrels, ["map", "ndcg@10"]).evaluate(run)  # small: prepared by polars
    if _preparation_cached():
        # a large job prepares with the kernels: load them now too (only if compiled,
        # since a small job, which never needs them, would wait for the compiler)
        from fasteval.prepare import check_qrels_table, prepare_run
        from fasteval.prepare.qrels import _prepare_qrels_kernels

        prepare_run(_prepare_qrels_kernels(check_qrels_table(qrels)), run)


def _preparation_cached() -> bool:
    """Whether numba's cache holds compiled preparation kernels for this machine."""
    from fasteval.kernels import prepare as K

    try:
        return bool(K.rank_and_label._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - another numba: load them when a job needs them
        return False


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


_PROFILE_MEASURES = ["ndcg@10", "map", "P@10", "recall@100", "recip_rank"]
"""Answered from the per-query profiles: the score pass without the family functions."""

_GENERIC_MEASURES = ["bpref", "ndcg", "infAP", "rbp", "num_ret"]
"""Need the family functions: the generic score pass."""

_EXPECTED_MEASURES = ["ndcg@10", "map", "P@10", "recip_rank", "ndcg", "num_ret"]
"""``tie_break="expected"``: the expected-value passes and the tie-group kernels."""


def compile_kernels(report: Callable[[str, float], None] | None = None) -> list[str]:
    """Compile (or load) every kernel variant that ``fasteval eval`` and ``trec-eval`` use,
    so that the first real job finds them in numba's cache: ``fasteval warmup``.

    Jobs, each timed: the TREC text tokenizer (irregular text; regular files are read by
    polars), then for text ids and for integer ids, a small job (the serial score passes)
    and one of 700k rows (the blocked, threaded preparation and the parallel passes), each
    with measures answered from profiles and with measures that need the family functions;
    with text ids, both sizes again with ``tie_break="expected"`` (the tie-group kernels and
    the expected-value passes); then ``fasteval fuse``'s kernels, for text and for integer
    ids. Returns the names of the jobs run; ``report(name,
    seconds)`` is called after each.

    Examples
    --------
    >>> compile_kernels()[0]  # doctest: +SKIP
    'TREC text tokenizer'
    """
    import time

    from fasteval.datasets.synth import SynthSpec, generate
    from fasteval.evaluation import Evaluator
    from fasteval.io.trec import read_trec

    done: list[str] = []

    def step(name: str, job: Callable[[], object]) -> None:
        t = time.perf_counter()
        job()
        done.append(name)
        if report is not None:
            report(name, time.perf_counter() - t)

    step("TREC text tokenizer", lambda: (
        read_trec(b"q1 Q0 d1 1 2.5 t\x0bx\nq1 Q0 d2 2 1.5 t\n", "run", source="warmup"),
        read_trec(b"q1 0 d1 1\nq1  0\x0bd2 0\n", "qrels", source="warmup"),
    ))
    for int_ids in (False, True):
        qrels, runs = generate(SynthSpec(queries=7_000, depth=100, runs=1, seed=1, int_ids=int_ids))
        run = next(iter(runs.values()))
        small = run.head(2_000)
        kind = "integer" if int_ids else "text"
        for measures, what in ((_PROFILE_MEASURES, "profile"), (_GENERIC_MEASURES, "family")):
            ev = Evaluator(qrels, measures)
            step(f"{kind} ids, small run, {what} measures", lambda ev=ev, r=small: ev.evaluate(r))
            step(f"{kind} ids, {run.height:,} rows, {what} measures", lambda ev=ev, r=run: ev.evaluate(r))
        if not int_ids:  # the tie kernels take either kind of id alike
            ev = Evaluator(qrels, _EXPECTED_MEASURES, tie_break="expected")
            step("small run, expected values over ties", lambda ev=ev, r=small: ev.evaluate(r))
            step(f"{run.height:,} rows, expected values over ties", lambda ev=ev, r=run: ev.evaluate(r))
    from fasteval.fusion import fuse

    for int_ids in (False, True):  # one kernel per step serves every method and norm
        q, a, b, c = (1, 10, 11, 12) if int_ids else ("q", "a", "b", "c")
        pair = [{q: {a: 2.0, b: 1.0}}, {q: {b: 3.0, c: 1.0}}]
        step(f"fusion, {'integer' if int_ids else 'text'} ids", lambda r=pair: fuse(r, method="rrf"))
    return done
