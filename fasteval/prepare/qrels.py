"""The qrels index: :class:`PreparedQrels`, built once per qrels and reused for every run
(interned query ids, judged grades, doc keys by query; a run's query ids looked up in it)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from fasteval._lazy import LazyModule
from fasteval.errors import DuplicateJudgmentError, InputError
from fasteval.prepare import small
from fasteval.prepare.tables import check_columns, check_qrels_table
from fasteval.prepare.threads import _PARALLEL_CHUNKS, on_threads, split_parts
from fasteval.prepare.views import _IDENTITY, id_column, readonly

KG = LazyModule("fasteval.kernels.groups")
KI = LazyModule("fasteval.kernels.ids")
KQ = LazyModule("fasteval.kernels.qrels_index")
"""The preparation kernels, imported (with numba) on first use."""


def run_heads(s: pl.Series) -> np.ndarray:
    """First row of every run of equal ids, chunk by chunk (no copy of the column).

    A column of many chunks (a qrels file of many row groups) is scanned on a few threads,
    a chunk per task; a batch of a job (one or two chunks) on the calling thread.
    """
    return _run_heads(s)[0]


def _run_heads(s: pl.Series, pq: PreparedQrels | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`run_heads`, and with ``pq`` the qrels code of the id at each head (-1: not
    in the qrels; no codes without ``pq``), looked up in the task that finds the chunk's
    heads."""
    chunks = [c for c in s.get_chunks() if len(c)]
    cols = [id_column(c) for c in chunks]
    sizes = [len(c) for c in chunks]

    def task(k: int) -> tuple[np.ndarray, np.ndarray]:
        heads = KG.run_heads(cols[k], sizes[k])
        codes = np.empty(len(heads) if pq is not None else 0, dtype=np.int64)
        if pq is not None:
            KI.lookup_ids(cols[k], heads, pq.qslots, pq.qshift, pq.query_hash, pq.query_col,
                         codes)
        return heads, codes

    found = on_threads(task, range(len(cols)), at_least=_PARALLEL_CHUNKS)
    parts = [np.zeros(0, dtype=np.int64)]
    coded = [np.zeros(0, dtype=np.int64)]
    start = 0
    for k, (col, n, (heads, codes)) in enumerate(zip(cols, sizes, found, strict=True)):
        if k and KI.id_eq(col, 0, cols[k - 1], sizes[k - 1] - 1):  # the run goes on
            heads = heads[1:]
            codes = codes[1:]
        parts.append(heads + start)
        coded.append(codes)
        start += n
    return np.concatenate(parts), np.concatenate(coded)


@dataclass(frozen=True)
class QrelsIndex:
    """The kernels' doc index of a qrels table (see :class:`PreparedQrels`)."""

    query_col: tuple  # query_ids as the kernels see them (see id_column)
    query_hash: np.ndarray  # int64 key of each query id (by code; see KI.id_keys)
    qslots: np.ndarray  # open-addressing table key -> code + 1 (see kernels.code_table)
    qshift: int
    doc_col: tuple  # doc ids as the kernels see them (see id_column), in row order
    q_hash: np.ndarray  # int64 doc key of each position (the positions of a query are adjacent)
    q_row: np.ndarray  # int64 row of each position (empty: position i is row i)


@dataclass
class PreparedQrels:
    """Qrels interned and indexed for joining (built once, reused for every run).

    Query codes follow the sorted query ids. A query's judgments hold positions
    ``q_start:q_end`` (the ranges tile ``0..n_rows``), its judged grades sorted descending
    ``grades[q_start:g_end]``. Qrels of at most :data:`fasteval.prepare.small.SMALL_ROWS`
    rows are prepared by polars alone and get the kernels' doc :class:`QrelsIndex` only
    when a large run needs it (:meth:`indexed`: a copy prepared by the kernels, with the
    same query codes and its own position layout).
    """

    query_ids: pl.Series  # sorted unique query ids (index = query code)
    doc_ids: pl.Series  # doc id column in row order (no values if all ids are text)
    q_rel: np.ndarray  # int64 grades in row order
    q_start: np.ndarray  # int64 per query: its positions are q_start:q_end (in code order or,
    q_end: np.ndarray  # for the kernels' index when queries are runs of rows, in row order)
    grades: np.ndarray  # int32, per query its judged grades sorted descending
    g_end: np.ndarray  # int64 per query: judged grades are grades[q_start:g_end]
    max_grade: int
    n_rows: int
    index: QrelsIndex | None = None  # None: prepared by polars (see indexed)
    frame: pl.DataFrame | None = field(default=None, repr=False)  # checked table, kept by polars
    _alt: dict = field(default_factory=dict, repr=False)

    def indexed(self) -> PreparedQrels:
        """This qrels with the kernels' doc index: itself, or (prepared by polars) a copy
        prepared by the kernels, made on first use and kept."""
        if self.index is not None:
            return self
        full = self._alt.get("indexed")
        if full is None:
            full = prepare_qrels_kernels(self.frame)
            self._alt["indexed"] = full
        return full

    @property
    def query_col(self) -> tuple:
        return self.indexed().index.query_col

    @property
    def query_hash(self) -> np.ndarray:
        return self.indexed().index.query_hash

    @property
    def qslots(self) -> np.ndarray:
        return self.indexed().index.qslots

    @property
    def qshift(self) -> int:
        return self.indexed().index.qshift

    @property
    def doc_col(self) -> tuple:
        return self.indexed().index.doc_col

    @property
    def q_hash(self) -> np.ndarray:
        return self.indexed().index.q_hash

    @property
    def q_row(self) -> np.ndarray:
        return self.indexed().index.q_row

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def doc_is_text(self) -> bool:
        return not self.doc_ids.dtype.is_integer()

    def judged_levels(self) -> np.ndarray:
        """The distinct grades >= 0 of the judgments, ascending (computed once, kept).

        Examples
        --------
        >>> pq = prepare_qrels(pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"],
        ...                                  "relevance": [10**9, -1, 2]}))
        >>> pq.judged_levels().tolist()
        [2, 1000000000]
        """
        levels = self._alt.get("levels")
        if levels is None:
            rel = self.q_rel[self.q_rel >= 0]
            if self.max_grade <= 4 * len(rel) + 1024:  # counting costs no more than the rows
                levels = np.flatnonzero(np.bincount(rel, minlength=1)).astype(np.int64)
            else:
                levels = np.unique(rel)
            self._alt["levels"] = levels
        return levels

    def num_rel_all(self) -> int:
        """Judged documents with grade > 0 over the whole qrels (trec_eval's -c num_rel)."""
        return int((self.q_rel > 0).sum())


def index_qrels(order: np.ndarray, starts: np.ndarray, ends: np.ndarray, col: tuple,
                rel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`KQ.index_qrels` over all queries, in parts of whole queries (about
    :func:`_part_rows` positions each) on threads. Returns ``(q_hash, repeat, grades,
    g_end)``."""
    n = rel.shape[0]
    ng = starts.shape[0]
    q_hash = np.empty(n, dtype=np.int64)
    repeat = np.empty(ng, dtype=np.int64)
    grades = np.empty(n, dtype=np.int32)
    g_end = np.empty(ng, dtype=np.int64)
    cuts = split_parts(np.cumsum(ends - starts), ng)

    def part(k: int) -> None:
        a, b = int(cuts[k]), int(cuts[k + 1])
        KQ.index_qrels(order, starts[a:b], ends[a:b], col, rel, q_hash, repeat[a:b], grades,
                      g_end[a:b])

    on_threads(part, range(len(cuts) - 1))
    return q_hash, repeat, grades, g_end


def prepare_qrels(qrels: pl.DataFrame) -> PreparedQrels:
    """Index a qrels table ``(query_id, doc_id, relevance)`` for joining.

    At most :data:`fasteval.prepare.small.SMALL_ROWS` rows are prepared by polars alone
    (no kernel to compile or load: a first run in seconds); larger tables by the kernels.
    Both give the same query codes, grades and errors.

    Examples
    --------
    >>> import polars as pl
    >>> pq = prepare_qrels(pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"],
    ...                                  "relevance": [1, 0]}))
    >>> pq.n_queries, pq.max_grade
    (1, 1)
    """
    check_columns(qrels, ("query_id", "doc_id", "relevance"), "qrels")
    if qrels.height == 0:
        raise InputError("qrels are empty: no judgments to evaluate against", source="qrels")
    qrels = check_qrels_table(qrels)
    if small.is_small(qrels.height):
        return _prepare_qrels_small(qrels)
    return prepare_qrels_kernels(qrels)


def _duplicate_judgment(qrels: pl.DataFrame) -> DuplicateJudgmentError:
    """The error for a qrels table that judges a (query, doc) pair twice: names the first
    row that repeats an earlier one."""
    rows = qrels.with_row_index("__row").filter(pl.struct("query_id", "doc_id").is_duplicated())
    later = rows.filter(pl.struct("query_id", "doc_id").is_first_distinct().not_())
    row = int(later["__row"].min())
    r = qrels.row(row)
    return DuplicateJudgmentError(
        f"duplicate judgment for query {r[0]!r}, document {r[1]!r}", source="qrels", row=row,
    )


def _prepare_qrels_small(qrels: pl.DataFrame) -> PreparedQrels:
    """:func:`prepare_qrels` by polars (:mod:`fasteval.prepare.small`), of a checked table."""
    if qrels.select(pl.struct("query_id", "doc_id").is_duplicated().any()).item():
        raise _duplicate_judgment(qrels)
    qcol = qrels.get_column("query_id")
    uniq = qcol.unique()
    query_ids = uniq.gather(uniq.arg_sort())
    as_int = qcol.dtype.is_integer()
    codes = pl.DataFrame({"query_id": small._ids(query_ids, as_int),
                          "__code": np.arange(len(query_ids), dtype=np.int64)})
    rel = qrels.get_column("relevance")
    # positions: rows by query code, judged grades first, descending
    pos = (
        pl.DataFrame({"query_id": small._ids(qcol, as_int), "relevance": rel})
        .join(codes, on="query_id", how="left")
        .select("__code", "relevance")
        .sort(["__code", "relevance"], descending=[False, True])
    )
    nq = len(query_ids)
    code = pos.get_column("__code").to_numpy()
    grade = pos.get_column("relevance").to_numpy()
    counts = np.bincount(code, minlength=nq).astype(np.int64)
    judged = np.bincount(code[grade >= 0], minlength=nq).astype(np.int64)
    ends = np.cumsum(counts)
    starts = ends - counts
    docs = qrels.get_column("doc_id")
    all_text = not query_ids.dtype.is_integer() and not docs.dtype.is_integer()
    q_rel = rel.to_numpy()
    q_rel.flags.writeable = False
    return PreparedQrels(
        query_ids=query_ids,
        doc_ids=docs.clear() if all_text else docs,
        q_rel=q_rel,
        q_start=starts,
        q_end=ends,
        grades=grade.astype(np.int32),
        g_end=starts + judged,
        max_grade=int(max(0, q_rel.max())),
        n_rows=qrels.height,
        index=None,
        frame=qrels,
    )


def prepare_qrels_kernels(qrels: pl.DataFrame) -> PreparedQrels:
    """:func:`prepare_qrels` by the kernels, of a checked table (see check_qrels_table)."""
    qcol = qrels.get_column("query_id")
    # qrels are usually grouped by query: work on runs of equal ids, not on every row.
    # Query codes follow the sorted ids; equal neighbours in that order share a code.
    heads = run_heads(qcol)
    head_ids = qcol.gather(heads)
    by_id = head_ids.arg_sort().to_numpy().astype(np.int64)
    head_codes, firsts = KI.dense_codes(id_column(head_ids), by_id)
    query_ids = head_ids.gather(firsts)
    query_col = id_column(query_ids)
    query_hash = np.empty(len(query_ids), dtype=np.int64)
    KI.id_keys(query_col, _IDENTITY, 0, query_hash)
    qslots, qshift, clash = KI.code_table(query_hash)
    if clash:  # pragma: no cover - needs a 64-bit collision between two query ids
        raise InputError("two query ids share a 64-bit hash; please report this", source="qrels")
    docs = qrels.get_column("doc_id")
    doc_col = id_column(docs)
    rel = readonly(qrels.get_column("relevance").to_numpy())
    nq = len(query_ids)
    if len(heads) == nq:
        # every query one run of rows (sorted or grouped qrels): use the table in place
        order = _IDENTITY
        starts = np.empty(nq, dtype=np.int64)
        ends = np.empty(nq, dtype=np.int64)
        starts[head_codes] = heads
        ends[head_codes] = np.append(heads[1:], qrels.height)
    else:
        order, offsets = KG.group_runs(heads, qrels.height, head_codes, nq)
        starts = offsets[:-1]
        ends = offsets[1:]
    q_hash, repeat, grades, g_end = index_qrels(order, starts, ends, doc_col, rel)
    if (repeat >= 0).any():
        raise _duplicate_judgment(qrels)
    # the original doc column and row order only serve to re-index integer ids as text
    # (_qrels_as_text); with text ids on both sides, keep the dtype and drop the values
    all_text = not query_ids.dtype.is_integer() and not docs.dtype.is_integer()
    return PreparedQrels(
        query_ids=query_ids,
        doc_ids=docs.clear() if all_text else docs,
        q_rel=rel,
        q_start=starts,
        q_end=ends,
        grades=grades,
        g_end=g_end,
        max_grade=int(max(0, rel.max())) if len(rel) else 0,
        n_rows=qrels.height,
        index=QrelsIndex(query_col=query_col, query_hash=query_hash, qslots=qslots,
                         qshift=qshift, doc_col=doc_col, q_hash=q_hash, q_row=order),
    )


def _qrels_as_text(pq: PreparedQrels) -> PreparedQrels:
    """The same qrels with integer ids re-indexed as text (for a run with text ids).

    Its query codes follow the text order ("10" < "9"), not the integers' (9 < 10):
    ``pq._alt["text_codes"]`` maps each of them to the code of the same query in ``pq``."""
    pq = pq.indexed()
    alt = pq._alt.get("text")
    if alt is None:
        by_start = np.argsort(pq.q_start, kind="stable")  # the ranges tile the positions
        qcodes = np.repeat(by_start, (pq.q_end - pq.q_start)[by_start])
        if len(pq.q_row):
            orig_q = np.empty(pq.n_rows, dtype=np.int64)
            orig_q[pq.q_row] = qcodes  # q_row maps position -> row
        else:
            orig_q = qcodes
        df = pl.DataFrame(
            {
                "query_id": pq.query_ids.gather(orig_q).cast(pl.Utf8),
                "doc_id": pq.doc_ids.cast(pl.Utf8),
                "relevance": pq.q_rel,
            }
        )
        alt = prepare_qrels_kernels(df)
        pq._alt["text_codes"] = alt.query_ids.replace_strict(
            pq.query_ids.cast(pl.Utf8), pl.int_range(pq.n_queries, eager=True),
            return_dtype=pl.Int64,
        ).to_numpy()
        pq._alt["text"] = alt
    return alt
