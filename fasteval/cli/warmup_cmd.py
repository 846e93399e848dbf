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
from collections.abc import Callable, Iterator
from typing import Any

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
    from fasteval._jit import JIT_DISABLED
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
        fallback = sys.modules.get("fasteval._cache_dir")  # (numba found no folder)
        where = None if fallback is None else fallback.state["where"]
        kept = ("kernels are in numba's cache" if where is None else
                "no writable cache folder: the kernels were compiled in memory only (set "
                "NUMBA_CACHE_DIR to a writable folder to keep them)" if where == "memory" else
                f"kernels are in numba's cache in {where} (the package's folder is read-only)")
        print(f"fasteval warmup: {len(done)} jobs in {time.perf_counter() - t0:.1f}s; {kept}",
              file=sys.stderr)
    return 0


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
    with ``tie_break="expected"`` (the tie-group kernels and the expected-value passes)
    and the exact sums of the aggregates; then ``fasteval fuse``'s kernels (runs as dicts
    and as tables, text and integer ids),
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
    yield "aggregates (exact sums)", _aggregates


def _aggregates() -> None:
    """The exact sums under every aggregate: per run and measure, one array, merged parts."""
    import numpy as np
    import polars as pl

    from fasteval.measures.aggregate import PartialSum, aggregate_long, summary

    aggregate_long(pl.DataFrame({"run_id": ["b", "a", "b"], "query_id": ["q1", "q1", "q2"],
                                 "measure": "map", "value": [0.5, None, 1e300]}))
    summary(np.array([0.25, 0.5]), "gm")
    PartialSum.merge_all([PartialSum.of(np.array([1e308])), PartialSum.of(np.array([0.1]))])


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
