"""Random qrels/runs with many ties, graded and negative labels, unjudged docs and
queries missing on either side (shared by the oracle and property tests)."""

from __future__ import annotations

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
