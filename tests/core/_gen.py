"""Random qrels/runs with many ties, graded and negative labels, unjudged docs and
queries missing on either side (shared by the oracle and property tests)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl


def random_case(
    seed: int,
    n_queries: int = 30,
    pool: int = 40,
    depth: int = 30,
    ties: bool = True,
    negative: bool = True,
    int_ids: bool = False,
):
    rng = np.random.default_rng(seed)
    qrels_rows, run_rows = [], []
    for q in range(n_queries):
        qid = q if int_ids else f"q{q}"
        docs = [int(d) for d in rng.choice(pool * 3, size=pool, replace=False)]
        names = docs if int_ids else [f"d{d}" for d in docs]
        in_qrels = q % 7 != 3  # some queries only in the run
        in_run = q % 5 != 2  # some only in the qrels
        if in_qrels:
            judged = rng.random(pool) < 0.6
            for name, j in zip(names, judged, strict=True):
                if j:
                    g = int(rng.choice([0, 0, 0, 1, 1, 2, 3]))
                    if negative and rng.random() < 0.08:
                        g = -1
                    qrels_rows.append((qid, name, g))
            if not any(r[0] == qid for r in qrels_rows):
                qrels_rows.append((qid, names[0], 1))
        if in_run:
            k = int(rng.integers(1, depth + 1))
            chosen = rng.choice(len(names), size=min(k, len(names)), replace=False)
            for i in chosen:
                s = round(float(rng.random()), 1) if ties else float(rng.random())
                run_rows.append((qid, names[i], s))
    qt = pl.Int64 if int_ids else pl.Utf8
    qrels = pl.DataFrame(qrels_rows, schema={"query_id": qt, "doc_id": qt, "relevance": pl.Int64},
                         orient="row")
    run = pl.DataFrame(run_rows, schema={"query_id": qt, "doc_id": qt, "score": pl.Float64},
                       orient="row")
    return qrels, run


def to_dicts(qrels: pl.DataFrame, run: pl.DataFrame):
    qd: dict = {}
    for q, d, r in qrels.iter_rows():
        qd.setdefault(str(q), {})[str(d)] = int(r)
    rd: dict = {}
    for q, d, s in run.iter_rows():
        rd.setdefault(str(q), {})[str(d)] = float(s)
    return qd, rd


# ---- hypothesis: small multi-query cases for the differential fuzz tests ----------------

# Families pytrec_eval (trec_eval 9.0.8's C code) computes per query, as fasteval names them.
PYTREC_FAMILIES = [
    "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "recall", "infAP", "Rprec_mult", "utility", "11pt_avg", "binG",
    "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
]

# Ids whose byte order differs from any "natural" order: case, digits ("10" < "9"), a
# multi-byte character (0xC3 > "z"), '#' inside an id.
TEXT_DOCS = ["a", "b", "B", "d1", "d10", "d2", "9", "10", "z", "é", "x#1", "ab"]
TEXT_QUERIES = ["1", "10", "2", "q", "Q"]
INT_DOCS = [-1, 0, 1, 2, 9, 10, 11, 100, 99]  # spelled "-1" < "0" < "1" < "10" < "100" ...
INT_QUERIES = [1, 10, 2, 3, -4]
LABELS = [-2, -1, 0, 0, 1, 1, 2, 3]  # negative: in the pool but unjudged
# Ties, signed zeros, float32's smallest subnormal. pytrec_eval keeps scores as float32
# (1 + 1e-8 ties with 1; 1e-50 with 0) where trec_eval reads doubles, so every score drawn
# here is a float32 value: the two orders agree.
SCORES = [0.0, -0.0, 0.5, 1.0, 1.0, 2.0, -1.5, 3.25, 2.0**-149]


class FuzzCase(NamedTuple):
    """Rows of a generated case (its repr is the reproducer hypothesis prints)."""

    qrels: list[tuple]
    run: list[tuple]
    int_ids: bool

    def tables(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        t = pl.Int64 if self.int_ids else pl.Utf8
        qrels = pl.DataFrame(self.qrels, schema={"query_id": t, "doc_id": t,
                                                 "relevance": pl.Int64}, orient="row")
        run = pl.DataFrame(self.run, schema={"query_id": t, "doc_id": t, "score": pl.Float64},
                           orient="row")
        return qrels, run


def multi_query_cases(max_queries: int = 5, max_docs: int = 10):
    """Hypothesis strategy of :class:`FuzzCase`: up to ``max_queries`` queries with
    score ties, unjudged docs, negative labels and queries missing on either side (at least
    one query on both). Every qrels query has a label >= 0: trec_eval sizes its per-grade
    counts by the highest grade + 1, so a query judged only negatively gets an array of
    length <= 0 that measures still index (undefined behaviour; pytrec_eval crashes on it)."""
    from hypothesis import strategies as st

    @st.composite
    def build(draw):
        int_ids = draw(st.booleans())
        docs = INT_DOCS if int_ids else TEXT_DOCS
        qids = draw(st.lists(st.sampled_from(INT_QUERIES if int_ids else TEXT_QUERIES),
                             min_size=1, max_size=max_queries, unique=True))
        sides = draw(st.lists(st.sampled_from(["both", "both", "qrels", "run"]),
                              min_size=len(qids), max_size=len(qids)))
        sides[0] = "both"
        score = st.one_of(st.sampled_from(SCORES), st.floats(-4, 4, width=32))
        qrels_rows, run_rows = [], []
        for qid, side in zip(qids, sides, strict=True):
            if side != "run":
                judged = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=max_docs,
                                       unique=True))
                labels = draw(st.lists(st.sampled_from(LABELS), min_size=len(judged),
                                       max_size=len(judged)))
                if max(labels) < 0:
                    labels[0] = 0
                qrels_rows += [(qid, d, g) for d, g in zip(judged, labels, strict=True)]
            if side != "qrels":
                ranked = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=max_docs,
                                       unique=True))
                run_rows += [(qid, d, draw(score)) for d in ranked]
        return FuzzCase(qrels_rows, run_rows, int_ids)

    return build()


def trec_order(docs: dict[str, float]) -> list[str]:
    """trec_eval's ranking: score descending, ties by docno descending byte-wise (-0.0 == 0.0)."""
    return sorted(docs, key=lambda d: (docs[d], d.encode("utf-8")), reverse=True)


def pytrec_expected(case: FuzzCase, measures: list[str], level: int, judged_only: bool,
                    max_docs: int | None, complete: bool) -> dict[str, dict[str, float] | None]:
    """Per-query values of trec_eval 9.0.8 for ``case`` with -l/-J/-M/-c: pytrec_eval's C code,
    with -M and -c emulated (pytrec_eval has neither flag).

    * -M: trec_eval cuts each ranking to its first M in its own order (:func:`trec_order`)
      before anything else, -J included; so the run handed over is cut the same way.
    * -J: pytrec_eval's ``judged_docs_only_flag`` runs trec_eval's own -J code (docs absent
      from the qrels or judged negatively are dropped, ranks close up; a ranking left empty
      gives 0/0 interpolated precision).
    * -c: a qrels query the run lacks maps to None (9.0.8 does not evaluate it; it counts as
      0 in every average).
    """
    import pytrec_eval

    qrels: dict[str, dict[str, int]] = {}
    for q, d, g in case.qrels:
        qrels.setdefault(str(q), {})[str(d)] = int(g)
    run: dict[str, dict[str, float]] = {}
    for q, d, s in case.run:
        run.setdefault(str(q), {})[str(d)] = float(s)
    if max_docs is not None:
        run = {q: {d: docs[d] for d in trec_order(docs)[:max_docs]} for q, docs in run.items()}
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(measures), relevance_level=level,
                                        judged_docs_only_flag=judged_only)
    want: dict = ev.evaluate({q: docs for q, docs in run.items() if q in qrels})
    assert set(want) == set(qrels) & set(run)
    if complete:
        want.update({q: None for q in qrels if q not in run})
    return want
