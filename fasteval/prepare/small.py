"""Small inputs prepared by polars alone: no compiled kernel to load, none to compile.

A first job on a new machine would otherwise spend most of its time compiling the
preparation kernels (interning, hashing, sorting Arrow string views), which pay for
themselves only on large tables. Qrels of at most :data:`SMALL_ROWS` rows, and runs of at
most that many rows against them, are therefore joined and sorted by polars (the qrels in
:mod:`fasteval.prepare.qrels` with this module's helpers, runs here), with the same results
as the kernels: the same query codes (the sorted query ids), rank order
(score descending, then doc id descending byte-wise; integer ids as their decimal text),
labels, duplicate errors and report counts. The tests compare both paths on random inputs
(``tests/core/test_prepare_paths.py``).

Examples
--------
>>> import polars as pl
>>> from fasteval.prepare import prepare_qrels, prepare_run
>>> pq = prepare_qrels(pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]}))
>>> pq.index is None  # prepared by polars: the kernels' index is built only if needed
True
>>> prepare_run(pq, pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"],
...                               "score": [1.0, 1.0]})).labels.tolist()
[-1, 1]
"""

from __future__ import annotations

import numpy as np
import polars as pl

SMALL_ROWS = 100_000
"""Largest table (qrels, or a run against such qrels) prepared by polars alone."""


def is_small(n_rows: int) -> bool:
    """Whether a table of ``n_rows`` rows is prepared by polars (see :data:`SMALL_ROWS`).

    >>> is_small(1_500), is_small(10**7)
    (True, False)
    """
    return n_rows <= SMALL_ROWS


def _ids(s: pl.Series, as_int: bool) -> pl.Series:
    """An id column as the join sees it: Int64 when both sides are integers, else text."""
    return s.cast(pl.Int64) if as_int else s.cast(pl.Utf8)


def id_kinds(pq, qcol: pl.Series, docs: pl.Series) -> tuple[bool, bool]:
    """Whether a run's query ids and doc ids meet the qrels' as integers (else as text).

    Integers where both sides have them; but when either id of the run is text where the
    qrels have integers, both are compared as text (the kernels then use a text copy of the
    qrels, and polars the same types, so that both paths name ids alike in messages).
    Integers and their decimal text match the same ids either way.
    """
    ref_q = pq.query_ids.dtype.is_integer()
    ref_d = pq.doc_ids.dtype.is_integer()
    q_int = ref_q and qcol.dtype.is_integer()
    d_int = ref_d and docs.dtype.is_integer()
    if (ref_q and not q_int) or (ref_d and not d_int):
        return False, False
    return q_int, d_int


def _judgments(pq, q_int: bool, d_int: bool) -> pl.DataFrame:
    """The qrels as ``(__code, d, __rel)``, ids typed for the join (made once, kept)."""
    key = ("small", q_int, d_int)
    found = pq._alt.get(key)
    if found is None:
        frame = pq.frame
        codes = pl.DataFrame({"q": _ids(pq.query_ids, q_int),
                              "__code": np.arange(pq.n_queries, dtype=np.int64)})
        found = (
            pl.DataFrame({"q": _ids(frame.get_column("query_id"), q_int),
                          "d": _ids(frame.get_column("doc_id"), d_int),
                          "__rel": frame.get_column("relevance")})
            .join(codes, on="q", how="left")
            .select("__code", "d", "__rel")
        )
        pq._alt[key] = found
    return found


def rank_and_label_small(pq, qcol: pl.Series, doc_col: pl.Series, key_col: pl.Series,
                         sort: bool) -> tuple[np.ndarray, np.ndarray, pl.Series, int | None,
                                              pl.Series, pl.Series]:
    """Rank and label a run of at most :data:`SMALL_ROWS` rows against qrels prepared by
    polars, as :func:`fasteval.kernels.rank.rank_and_label` does.

    Returns ``(labels, offsets, dropped, dup_row, qcol, doc_col)``: labels in rank order
    with offsets per query code (grade, -1 unjudged, -2 negative grade), the distinct run
    queries not in the qrels (ids as compared, in order of appearance), the input row of the first repeated
    (query, doc) pair of a qrels query (None when there is none: rows of queries not in
    the qrels are not looked at, as they are never scored), and the id columns as
    compared (integers where both sides have integers, else text).
    """
    q_int, d_int = id_kinds(pq, qcol, doc_col)
    qcol = _ids(qcol, q_int)
    doc_col = _ids(doc_col, d_int)
    codes = pl.DataFrame({"q": _ids(pq.query_ids, q_int),
                          "__code": np.arange(pq.n_queries, dtype=np.int64)})
    cols = {"q": qcol, "d": doc_col, "__row": np.arange(len(qcol), dtype=np.int64)}
    if sort:
        cols["__key"] = key_col + 0.0  # -0.0 ties with 0.0, as in C
    df = pl.DataFrame(cols).join(codes, on="q", how="left")
    missing = df.get_column("__code").is_null()
    dropped = df.filter(missing).get_column("q").unique(maintain_order=True)
    df = df.filter(~missing)
    pair = pl.struct("__code", "d")
    dup_row = None
    if df.select(pair.is_duplicated().any()).item():
        dup = df.filter(pair.is_duplicated()).sort("__row")
        first = dup.row(0, named=True)
        later = dup.filter((pl.col("__code") == first["__code"]) & (pl.col("d") == first["d"]))
        dup_row = int(later.get_column("__row")[1])
        return np.zeros(0, np.int32), np.zeros(pq.n_queries + 1, np.int64), dropped, dup_row, \
            qcol, doc_col
    if sort:
        df = df.with_columns(pl.col("d").cast(pl.Utf8).alias("__text")).sort(
            ["__code", "__key", "__text", "__row"], descending=[False, True, True, False])
    else:
        df = df.sort(["__code", "__row"])
    ranked = df.select("__code", "d").with_row_index("__pos").join(
        _judgments(pq, q_int, d_int), on=["__code", "d"], how="left").sort("__pos")
    rel = ranked.get_column("__rel")
    grade = rel.fill_null(-1).to_numpy()
    labels = np.where(grade < 0, np.where(rel.is_null().to_numpy(), -1, -2), grade)
    counts = np.bincount(ranked.get_column("__code").to_numpy(), minlength=pq.n_queries)
    offsets = np.zeros(pq.n_queries + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return labels.astype(np.int32), offsets, dropped, dup_row, qcol, doc_col


def truncate_small(labels: np.ndarray, offsets: np.ndarray, max_docs: int,
                   judged_only: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fasteval.kernels.groups.truncate` in numpy: the top ``max_docs`` labels of
    each query, then (``judged_only``) without the unjudged ones (< 0); compacted.

    >>> truncate_small(np.array([1, -1, 0, 2], np.int32), np.array([0, 3, 4]), 2, True)
    (array([1, 2], dtype=int32), array([0, 1, 2]))
    """
    counts = np.diff(offsets)
    query = np.repeat(np.arange(len(counts)), counts)
    rank = np.arange(len(labels)) - offsets[:-1][query]
    keep = rank < max_docs
    if judged_only:
        keep &= labels >= 0
    new_off = np.zeros(len(offsets), dtype=np.int64)
    np.cumsum(np.bincount(query[keep], minlength=len(counts)), out=new_off[1:])
    return labels[keep], new_off
