"""Prepare: intern ids, group by query, sort into rank order, join relevance, offsets.

:func:`prepare_qrels` runs once per qrels; :func:`prepare_run` once per run. The result is
a :class:`Batch` of flat numpy arrays that the kernels of :mod:`fasteval.kernels.ranking`
read: no strings and no dicts past this point.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

import numba
import numpy as np
import polars as pl

from fasteval.errors import DuplicateJudgmentError, InputError, ParameterError
from fasteval.kernels import prepare as K

T = TypeVar("T")

TIE_BREAKS = ("trec", "rank", "input")
DUPLICATES = ("error", "keep_best")


@dataclass
class Report:
    """What happened to the user's queries and rows (nothing is dropped silently).

    Attributes
    ----------
    run_queries : int
        Distinct queries in the run.
    evaluated : int
        Queries scored (in both the qrels and the run, plus filled ones).
    dropped_not_in_qrels : int
        Run queries absent from the qrels (ignored, as trec_eval does).
    missing_from_run : int
        Qrels queries absent from the run.
    filled : int
        Missing queries scored as empty rankings (``complete=True``).
    deduplicated_rows : int
        Duplicate (query, doc) rows removed with ``duplicates="keep_best"``.
    """

    run_queries: int = 0
    evaluated: int = 0
    dropped_not_in_qrels: int = 0
    missing_from_run: int = 0
    filled: int = 0
    deduplicated_rows: int = 0

    def summary(self) -> str:
        """One line for the CLI."""
        parts = [f"{self.evaluated} queries evaluated"]
        if self.dropped_not_in_qrels:
            parts.append(f"{self.dropped_not_in_qrels} run queries not in qrels dropped")
        if self.missing_from_run:
            verb = "filled with zeros" if self.filled else "not scored"
            parts.append(f"{self.missing_from_run} qrels queries missing from run {verb}")
        if self.deduplicated_rows:
            parts.append(f"{self.deduplicated_rows} duplicate rows removed")
        return "; ".join(parts)


def _readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view (one numba specialisation whatever the source of an array)."""
    a = a.view()
    a.flags.writeable = False
    return a


_NO_INTS = _readonly(np.zeros(0, dtype=np.int64))
_NO_VIEWS = _readonly(np.zeros((0, 16), dtype=np.uint8))
_NO_BYTES = _readonly(np.zeros(0, dtype=np.uint8))


def id_column(s: pl.Series) -> tuple:
    """The kernels' view of an id column: ``(is_int, ints, v8, v32, data, base)``.

    Integer ids as int64 values; text as its Arrow string views (zero-copy from polars for
    a single chunk; the views of several chunks are put end to end, their buffer numbers
    shifted) and the out-of-line bytes of all its data buffers.
    """
    if s.dtype.is_integer():
        ints = s.cast(pl.Int64).to_numpy()
        return (True, _readonly(ints), _NO_VIEWS, _NO_VIEWS.view(np.uint32), _NO_BYTES, _NO_INTS)
    chunks = [_string_views(c) for c in s.cast(pl.Utf8).get_chunks()]
    if len(chunks) == 1:
        v8, datas = chunks[0]
        v8 = np.ascontiguousarray(v8)
    else:
        v8 = np.empty((len(s), 16), dtype=np.uint8)
        datas = []
        pos = 0
        for views, bufs in chunks:
            n = len(views)
            v8[pos:pos + n] = views
            if datas and n:  # out-of-line views name their buffer: count the earlier ones
                words = v8[pos:pos + n].view(np.uint32)
                words[words[:, 0] > 12, 2] += len(datas)
            datas.extend(bufs)
            pos += n
    base = np.zeros(len(datas), dtype=np.int64)
    if len(datas) == 1:
        data = datas[0]
    elif datas:
        base[1:] = np.cumsum([len(d) for d in datas])[:-1]
        data = np.concatenate(datas)
    else:
        data = _NO_BYTES
    return (False, _NO_INTS, _readonly(v8), _readonly(v8).view(np.uint32), _readonly(data),
            _readonly(base))


def _string_views(chunk: pl.Series) -> tuple[np.ndarray, list[np.ndarray]]:
    """A one-chunk text column's 16-byte views (as bytes, zero-copy) and its data buffers."""
    import pyarrow as pa

    arr = chunk.to_arrow(compat_level=pl.CompatLevel.newest())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.string_view():
        arr = arr.cast(pa.string_view())
    bufs = arr.buffers()
    views = np.frombuffer(bufs[1], dtype=np.uint8).reshape(-1, 16)[arr.offset:arr.offset + len(arr)]
    datas = [_NO_BYTES if b is None else np.frombuffer(b, dtype=np.uint8) for b in bufs[2:]]
    return views, datas


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
        heads = K.run_heads(cols[k], sizes[k])
        codes = np.empty(len(heads) if pq is not None else 0, dtype=np.int64)
        if pq is not None:
            K.lookup_ids(cols[k], heads, pq.qslots, pq.qshift, pq.query_hash, pq.query_col,
                         codes)
        return heads, codes

    found = _on_threads(task, range(len(cols)), at_least=_PARALLEL_CHUNKS)
    parts = [np.zeros(0, dtype=np.int64)]
    coded = [np.zeros(0, dtype=np.int64)]
    start = 0
    for k, (col, n, (heads, codes)) in enumerate(zip(cols, sizes, found, strict=True)):
        if k and K.id_eq(col, 0, cols[k - 1], sizes[k - 1] - 1):  # the run goes on
            heads = heads[1:]
            codes = codes[1:]
        parts.append(heads + start)
        coded.append(codes)
        start += n
    return np.concatenate(parts), np.concatenate(coded)


_PARALLEL_CHUNKS = 4
"""Chunks from which :func:`run_heads` scans on several threads."""


def _on_threads(fn: Callable[[int], T], items: Iterable[int], *, at_least: int = 2) -> list[T]:
    """``[fn(i) for i in items]``, on ``numba.get_num_threads()`` threads when there are at
    least ``at_least`` items (``fn`` runs GIL-free kernels on disjoint parts of a table)."""
    items = list(items)
    threads = min(numba.get_num_threads(), len(items))
    if threads < 2 or len(items) < at_least:
        return [fn(i) for i in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads, thread_name_prefix="fasteval-prepare") as pool:
        return list(pool.map(fn, items))


@dataclass
class PreparedQrels:
    """Qrels interned and indexed for joining (built once, reused for every run)."""

    query_ids: pl.Series  # sorted unique query ids (index = query code)
    query_col: tuple  # query_ids as the kernels see them (see id_column)
    query_hash: np.ndarray  # int64 key of each query id (by code; see K.id_keys)
    qslots: np.ndarray  # open-addressing table key -> code + 1 (see kernels.code_table)
    qshift: int
    doc_ids: pl.Series  # doc id column in row order (no values if all ids are text)
    doc_col: tuple  # doc ids as the kernels see them (see id_column), in row order
    q_hash: np.ndarray  # int64 doc key of each position (the positions of a query are adjacent)
    q_rel: np.ndarray  # int64 grades in row order
    q_row: np.ndarray  # int64 row of each position (empty: position i is row i)
    q_start: np.ndarray  # int64 per query: its positions are q_start:q_end (the ranges tile
    q_end: np.ndarray  # 0..n_rows, in code order or, when queries are runs of rows, in row order
    grades: np.ndarray  # int32, per query its judged grades sorted descending
    g_end: np.ndarray  # int64 per query: judged grades are grades[q_start:g_end]
    max_grade: int
    n_rows: int
    _alt: dict = field(default_factory=dict, repr=False)

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


@dataclass
class Batch:
    """One run, prepared: rankings as flat labels with offsets, aligned to qrels queries."""

    labels: np.ndarray  # int32, rank order per query
    offsets: np.ndarray  # int64 [n + 1]
    qidx: np.ndarray  # int64 [n]: qrels query code of each evaluated query
    present: np.ndarray  # bool [n]: False for queries filled by complete=True
    report: Report


def index_qrels(order: np.ndarray, starts: np.ndarray, ends: np.ndarray, col: tuple,
                rel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`K.index_qrels` over all queries, in parts of whole queries (about
    :func:`_part_rows` positions each) on threads. Returns ``(q_hash, repeat, grades,
    g_end)``."""
    n = rel.shape[0]
    ng = starts.shape[0]
    q_hash = np.empty(n, dtype=np.int64)
    repeat = np.empty(ng, dtype=np.int64)
    grades = np.empty(n, dtype=np.int32)
    g_end = np.empty(ng, dtype=np.int64)
    cuts = _parts(np.cumsum(ends - starts), ng)

    def part(k: int) -> None:
        a, b = int(cuts[k]), int(cuts[k + 1])
        K.index_qrels(order, starts[a:b], ends[a:b], col, rel, q_hash, repeat[a:b], grades,
                      g_end[a:b])

    _on_threads(part, range(len(cuts) - 1))
    return q_hash, repeat, grades, g_end


def _parts(ends: np.ndarray, n: int) -> np.ndarray:
    """Cuts ``[0, ..., n]`` of ``n`` items whose sizes end at ``ends`` (cumulative) into
    parts of about :func:`_part_rows`, each part whole items.

    Examples
    --------
    >>> _parts(np.array([5_000, 10_000, 30_000]), 3).tolist()  # parts of 2**14 rows
    [0, 2, 3]
    """
    total = int(ends[-1]) if n else 0
    step = _part_rows(total)
    marks = np.arange(step, total, step)
    return np.unique(np.concatenate([[0], np.searchsorted(ends, marks, side="left"), [n]]))


def _check_columns(df: pl.DataFrame, needed: tuple[str, ...], what: str,
                   source: str | None = None) -> None:
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise InputError(
            f"{what} table lacks column(s) {', '.join(missing)}; it has {', '.join(df.columns)}",
            source=source or what,
        )


def _first_null(s: pl.Series) -> int:
    """Row of the first null of a column that holds one."""
    return int(s.is_null().arg_max())


def check_run_table(run: pl.DataFrame, source: str = "run", *, scores: bool = True,
                    run_id: bool = True) -> None:
    """Refuse a run table that cannot be scored as given: a null ``query_id``, ``doc_id`` or
    (with ``run_id``, for a table split into runs by that column) ``run_id`` (a null id
    would be counted in a neighbouring query, or as a run named ``"None"``), and with
    ``scores`` a null or NaN ``score``.

    The one check of every path that scores a table (:func:`prepare_run`, the run split of
    :func:`fasteval.evaluate`, the chunks of :mod:`fasteval.batch`). Nulls cost nothing to
    count (Arrow keeps the count); the NaN test reads the scores (6 ms a 10 M rows), which
    is why a table made by :func:`fasteval.read_run`, checked there already, skips it.

    Raises
    ------
    InputError
        Naming ``source``, the column and the first offending row.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": ["1", None], "doc_id": ["a", "b"], "score": [1.0, 0.5]})
    >>> check_run_table(run)
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: run, row 1, column 'query_id': query_id is null; every row needs one
    """
    for col in ("query_id", "doc_id", "run_id") if run_id else ("query_id", "doc_id"):
        if col in run.columns:
            s = run.get_column(col)
            if s.null_count():
                raise InputError(f"{col} is null; every row needs one", source=source,
                                 row=_first_null(s), column=col)
    if scores and "score" in run.columns:
        score = run.get_column("score")
        if score.null_count() or (score.dtype.is_float() and score.is_nan().any()):
            bad = (score.is_nan() if score.dtype.is_float() else score.is_null()).fill_null(True)
            row = int(bad.arg_max())
            raise InputError(f"score is {score[row]!r}; expected a number", source=source,
                             row=row, column="score")


def check_qrels_table(qrels: pl.DataFrame, source: str = "qrels") -> pl.DataFrame:
    """``query_id``, ``doc_id`` and ``relevance`` (Int64) of a qrels table, refusing null
    ids, null or non-integer grades and grades outside 32 bits (they would wrap around in
    the kernels' int32 grades: 2**32 would count as 0).

    Examples
    --------
    >>> q = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [2**32]})
    >>> check_qrels_table(q)
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: qrels, row 0, column 'relevance': relevance 4294967296 is outside the 32-bit range of grades (-2147483648 to 2147483647)
    """
    from fasteval.io._common import normalize_relevance, row_locator

    _check_columns(qrels, ("query_id", "doc_id", "relevance"), "qrels", source)
    for col in ("query_id", "doc_id"):
        s = qrels.get_column(col)
        if s.null_count():
            raise InputError(f"{col} is null; every judgment needs one", source=source,
                             row=_first_null(s), column=col)
    rel = normalize_relevance(qrels.get_column("relevance"), source=source, where=row_locator())
    return qrels.select("query_id", "doc_id").with_columns(rel)


def prepare_qrels(qrels: pl.DataFrame) -> PreparedQrels:
    """Index a qrels table ``(query_id, doc_id, relevance)`` for joining.

    Examples
    --------
    >>> import polars as pl
    >>> pq = prepare_qrels(pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"],
    ...                                  "relevance": [1, 0]}))
    >>> pq.n_queries, pq.max_grade
    (1, 1)
    """
    _check_columns(qrels, ("query_id", "doc_id", "relevance"), "qrels")
    if qrels.height == 0:
        raise InputError("qrels are empty: no judgments to evaluate against", source="qrels")
    qrels = check_qrels_table(qrels)
    qcol = qrels.get_column("query_id")
    # qrels are usually grouped by query: work on runs of equal ids, not on every row.
    # Query codes follow the sorted ids; equal neighbours in that order share a code.
    heads = run_heads(qcol)
    head_ids = qcol.gather(heads)
    by_id = head_ids.arg_sort().to_numpy().astype(np.int64)
    head_codes, firsts = K.dense_codes(id_column(head_ids), by_id)
    query_ids = head_ids.gather(firsts)
    query_col = id_column(query_ids)
    query_hash = np.empty(len(query_ids), dtype=np.int64)
    K.id_keys(query_col, _IDENTITY, 0, query_hash)
    qslots, qshift, clash = K.code_table(query_hash)
    if clash:  # pragma: no cover - needs a 64-bit collision between two query ids
        raise InputError("two query ids share a 64-bit hash; please report this", source="qrels")
    docs = qrels.get_column("doc_id")
    doc_col = id_column(docs)
    rel = _readonly(qrels.get_column("relevance").to_numpy())
    nq = len(query_ids)
    if len(heads) == nq:
        # every query one run of rows (sorted or grouped qrels): use the table in place
        order = _IDENTITY
        starts = np.empty(nq, dtype=np.int64)
        ends = np.empty(nq, dtype=np.int64)
        starts[head_codes] = heads
        ends[head_codes] = np.append(heads[1:], qrels.height)
    else:
        order, offsets = K.group_runs(heads, qrels.height, head_codes, nq)
        starts = offsets[:-1]
        ends = offsets[1:]
    q_hash, repeat, grades, g_end = index_qrels(order, starts, ends, doc_col, rel)
    if (repeat >= 0).any():
        rows = qrels.with_row_index("__row").filter(
            pl.struct("query_id", "doc_id").is_duplicated())
        later = rows.filter(pl.struct("query_id", "doc_id").is_first_distinct().not_())
        row = int(later["__row"].min())
        r = qrels.row(row)
        raise DuplicateJudgmentError(
            f"duplicate judgment for query {r[0]!r}, document {r[1]!r}", source="qrels", row=row,
        )
    # the original doc column and row order only serve to re-index integer ids as text
    # (_qrels_as_text); with text ids on both sides, keep the dtype and drop the values
    all_text = not query_ids.dtype.is_integer() and not docs.dtype.is_integer()
    return PreparedQrels(
        query_ids=query_ids,
        query_col=query_col,
        query_hash=query_hash,
        qslots=qslots,
        qshift=qshift,
        doc_ids=docs.clear() if all_text else docs,
        doc_col=doc_col,
        q_hash=q_hash,
        q_rel=rel,
        q_row=order,
        q_start=starts,
        q_end=ends,
        grades=grades,
        g_end=g_end,
        max_grade=int(max(0, rel.max())) if len(rel) else 0,
        n_rows=qrels.height,
    )


def _harmonize(pq: PreparedQrels, col: pl.Series, kind: str) -> tuple[PreparedQrels, pl.Series]:
    """Make a run id column and the qrels' ids the same type (text wins over integers)."""
    ref = pq.query_ids if kind == "query" else pq.doc_ids
    col_int = col.dtype.is_integer()
    ref_int = ref.dtype.is_integer()
    if col_int == ref_int:
        return pq, (col.cast(pl.Int64) if col_int else col.cast(pl.Utf8))
    if ref_int:
        return _qrels_as_text(pq), col.cast(pl.Utf8)
    return pq, col.cast(pl.Utf8)


def _query_groups(pq: PreparedQrels, qcol: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Runs of equal query ids in a run: their first rows and qrels codes (-1 = not in the
    qrels). Only one row per run is hashed, and every match is confirmed on the ids."""
    return _run_heads(qcol, pq)


def prepare_run(
    pq: PreparedQrels,
    run: pl.DataFrame,
    *,
    tie_break: str = "trec",
    max_docs: int | None = None,
    judged_only: bool = False,
    complete: bool = False,
    duplicates: str = "error",
    source: str = "run",
    check_scores: bool = True,
) -> Batch:
    """Group, sort and label one run against prepared qrels.

    Parameters
    ----------
    pq : PreparedQrels
        From :func:`prepare_qrels`.
    run : polars.DataFrame
        ``query_id``, ``doc_id``, ``score`` (and ``rank`` for ``tie_break="rank"``).
    tie_break : {"trec", "rank", "input"}
        ``"trec"``: score descending, then doc id descending byte-wise (trec_eval);
        ``"rank"``: the ``rank`` column ascending (ties by doc id descending);
        ``"input"``: the row order as given.
    max_docs : int, optional
        Keep the top ``max_docs`` of each query after sorting (trec_eval ``-M``).
    judged_only : bool
        Drop unjudged documents after ``max_docs`` (trec_eval ``-J``).
    complete : bool
        Also return qrels queries missing from the run, as empty rankings (trec_eval ``-c``).
    duplicates : {"error", "keep_best"}
        A document twice in one query is an error (trec_eval), or keep its best-scored row.
    source : str
        Name used in error messages.
    check_scores : bool
        Look for null and NaN scores (an error naming the row). ``False`` trusts the
        caller: a table made by :func:`fasteval.read_run` has been checked already, with
        the file and line in its message (the check reads every score: 6 ms a 10 M rows).
    """
    if tie_break not in TIE_BREAKS:
        raise ParameterError("tie_break", f"one of {TIE_BREAKS}", tie_break)
    if duplicates not in DUPLICATES:
        raise ParameterError("duplicates", f"one of {DUPLICATES}", duplicates)
    if max_docs is not None and (not isinstance(max_docs, (int, np.integer)) or max_docs <= 0):
        raise ParameterError("max_docs", "a positive integer", max_docs)
    _check_columns(run, ("query_id", "doc_id", "score"), source)
    if tie_break == "rank" and "rank" not in run.columns:
        raise InputError("tie_break='rank' needs a 'rank' column", source=source, column="rank")
    check_run_table(run, source, scores=check_scores, run_id=False)
    report = Report()
    score = run.get_column("score")
    if score.dtype != pl.Float64:
        score = score.cast(pl.Float64)
    given = pq  # integer qrels meet a text run through a text copy (see _qrels_as_text)
    pq, qcol = _harmonize(pq, run.get_column("query_id"), "query")
    pq, doc_col = _harmonize(pq, run.get_column("doc_id"), "doc")
    heads, head_codes = _query_groups(pq, qcol)
    nq = pq.n_queries
    if (head_codes < 0).any():
        dropped = qcol.gather(heads[head_codes < 0])
        report.dropped_not_in_qrels = int(dropped.n_unique())
    if tie_break == "rank":
        key_col = -run.get_column("rank").cast(pl.Float64)
    else:
        key_col = score
    sort = tie_break != "input"
    blocked = None
    if run.height >= 2 * BLOCK_ROWS and _each_query_once(head_codes):
        blocked = _rank_and_label_blocked(pq, heads, head_codes, run.height, key_col, doc_col,
                                          sort)
    if blocked is not None:
        labels, offsets = blocked
        dup_at = np.full(0, -1, dtype=np.int64)
    else:
        perm, offsets = K.group_runs(heads, run.height, head_codes, nq)
        labels = np.empty(perm.shape[0], dtype=np.int32)
        dup_at = np.empty(nq, dtype=np.int64)
        key = _readonly(key_col.to_numpy() if sort else np.zeros(0))
        docs = id_column(doc_col)
        cuts = _parts(offsets[1:], nq)  # whole queries, each part ranked by one thread

        def part(k: int) -> None:
            a, b = int(cuts[k]), int(cuts[k + 1])
            K.rank_and_label(perm, offsets[a:b + 1], offsets[a:b], key, sort, docs, pq.q_hash,
                             pq.q_rel, pq.q_row, pq.q_start[a:b], pq.q_end[a:b], pq.doc_col,
                             labels, dup_at[a:b])

        _on_threads(part, range(len(cuts) - 1))
    dup_groups = np.flatnonzero(dup_at >= 0)
    if len(dup_groups):
        dup_row = _find_duplicate(perm, offsets, dup_groups, qcol, doc_col)
        if dup_row is not None:
            if duplicates == "error":
                raise InputError(
                    f"document {doc_col[dup_row]!r} appears more than once for query "
                    f"{qcol[dup_row]!r} (pass duplicates='keep_best' to keep the best-scored "
                    "row)",
                    source=source,
                    row=dup_row,
                    column="doc_id",
                )
            deduped = (
                run.with_row_index("__row")
                .sort(["score", "__row"], descending=[True, False])
                .unique(subset=["query_id", "doc_id"], keep="first", maintain_order=True)
                .sort("__row")
                .drop("__row")
            )
            batch = prepare_run(
                given, deduped, tie_break=tie_break, max_docs=max_docs, judged_only=judged_only,
                complete=complete, duplicates="error", source=source,
            )
            batch.report.deduplicated_rows = run.height - deduped.height
            return batch
    counts = np.diff(offsets)
    has = counts > 0
    report.run_queries = int(has.sum()) + report.dropped_not_in_qrels
    report.missing_from_run = int((~has).sum())
    no_limit = int(np.iinfo(np.int64).max)  # a larger max_docs means the same (atol saturates)
    limit = min(int(max_docs), no_limit) if max_docs is not None else no_limit
    if limit < no_limit or judged_only:
        labels, offsets = K.truncate(labels, offsets, limit, judged_only)
    if complete and not judged_only and report.missing_from_run:
        labels, offsets = placeholder_rankings(labels, offsets, ~has)
    if complete:
        qidx = np.arange(nq, dtype=np.int64)
        report.filled = report.missing_from_run
        present = has
    else:
        qidx = np.flatnonzero(has).astype(np.int64)
        present = np.ones(len(qidx), dtype=bool)
        offsets = np.concatenate([[0], offsets[1:][has]]).astype(np.int64)
    report.evaluated = len(qidx)
    if pq is not given:  # the text copy's query codes, as codes of the qrels given
        qidx = given._alt["text_codes"][qidx]
    return Batch(labels=labels, offsets=offsets, qidx=qidx, present=present, report=report)


PLACEHOLDER_LABEL = -1
"""Label of the one document trec_eval 10 ranks for a query missing from the run (``-c``):
``ceci_nest_pas_un_docno``, which no qrels judge (not in the pool). ``-J`` removes it."""


def placeholder_rankings(
    labels: np.ndarray, offsets: np.ndarray, missing: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Give each query marked ``missing`` (an empty ranking) trec_eval 10's one-document
    placeholder ranking (see :data:`PLACEHOLDER_LABEL`).

    trec_eval 10 scores a qrels query that the run lacks (``-c``) against that ranking and
    then zeroes ``num_ret``, ``utility``, ``unj*`` and ``rbp_resid`` (see
    :func:`fasteval.evaluation.score_batch`); the other measures keep what the placeholder
    gives them (0 for each, as no placeholder is relevant, but not NaN as an empty ranking
    would give interpolated precision).

    >>> placeholder_rankings(np.array([2, 0], np.int32), np.array([0, 0, 2, 2]),
    ...                      np.array([True, False, True]))
    (array([-1,  2,  0, -1], dtype=int32), array([0, 1, 3, 4]))
    """
    missing = np.asarray(missing, dtype=bool)
    at = offsets[:-1][missing]
    labels = np.insert(labels, at, np.int32(PLACEHOLDER_LABEL))
    shift = np.zeros(len(offsets), dtype=np.int64)
    np.cumsum(missing, out=shift[1:])
    return labels, offsets + shift


BLOCK_ROWS = 1 << 18
"""Rows per part (a block of whole queries) that one thread ranks or indexes at a time, as
a rule (see :func:`_part_rows`); runs of at least twice this, grouped by query, are ranked
in place block by block."""


def _part_rows(n_rows: int) -> int:
    """Rows per part of a table of ``n_rows``: about a quarter of a thread's share, at least
    ``min(BLOCK_ROWS, 2**14)`` and at most 4 x BLOCK_ROWS.

    Each part costs some Python (slicing the columns, a kernel call). On the issue-2 run
    (9.6 M rows, 2 threads) parts of 2^20 rows ranked in 0.166-0.174 s (median of 9)
    against 0.173-0.196 s for 2^18; the chunks of a ``--memory-limit`` job (250k rows) are
    still cut into several parts, so both threads work on them.

    Examples
    --------
    >>> _part_rows(1000) == min(BLOCK_ROWS, 2**14)
    True
    >>> _part_rows(10**9) == 4 * BLOCK_ROWS
    True
    """
    threads = max(1, numba.get_num_threads())
    least = min(BLOCK_ROWS, _MIN_PART_ROWS)
    return int(min(4 * BLOCK_ROWS, max(least, n_rows // (4 * threads))))


_MIN_PART_ROWS = 1 << 14
"""Smallest part worth a thread of its own (a kernel call costs tens of microseconds)."""


def _each_query_once(head_codes: np.ndarray) -> bool:
    """Whether every qrels query of a run is one contiguous run of rows."""
    valid = head_codes[head_codes >= 0]
    if len(valid) < 2 or (np.diff(valid) > 0).all():  # the usual dump: queries in code order
        return True
    return len(np.unique(valid)) == len(valid)


_IDENTITY = np.zeros(0, dtype=np.int64)


def _block_cuts(heads: np.ndarray, n_rows: int, col: pl.Series) -> np.ndarray:
    """Blocks of whole queries, as indices into ``heads`` (first of each block, then
    ``len(heads)``): the parts of :func:`_parts`, also cut at each boundary between
    ``col``'s chunks, so that a block's ids are used in place. A query that straddles a
    chunk boundary is a block of its own (the only ones copied).

    Examples
    --------
    >>> heads = np.array([0, 3, 5, 9])
    >>> col = pl.concat([pl.Series(["x"] * 4), pl.Series(["y"] * 8)], rechunk=False)
    >>> _block_cuts(heads, 12, col).tolist()  # the query at rows 3-4 straddles row 4
    [0, 1, 2, 4]
    """
    nh = len(heads)
    sizes = [len(c) for c in col.get_chunks()]
    bounds = np.cumsum(sizes)[:-1] if len(sizes) > 1 else np.zeros(0, dtype=np.int64)
    cuts = np.concatenate([
        _parts(np.append(heads[1:], n_rows), nh),  # query ends: heads shifted by one
        np.searchsorted(heads, bounds, side="left"),  # the first query starting at or after
        np.searchsorted(heads, bounds, side="right") - 1,  # the query holding a boundary row
    ])
    cuts = np.unique(cuts)
    return np.append(cuts[(cuts >= 0) & (cuts < nh)], nh)


def _rank_and_label_blocked(pq: PreparedQrels, heads: np.ndarray, head_codes: np.ndarray,
                            n_rows: int, key_col: pl.Series, doc_col: pl.Series,
                            sort: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`K.rank_and_label` over blocks of whole queries (input grouped by query).

    Returns labels in qrels query order and their offsets per query code, or None when a
    block holds a repeated document (the caller's whole-table path reports it).
    """
    ends = np.append(heads[1:], n_rows)
    valid = head_codes >= 0
    lengths = np.where(valid, ends - heads, 0)
    # each qrels query's labels go next to the previous one's, in run order; queries not in
    # the qrels are skipped (out_off = -1)
    out_off = np.cumsum(lengths) - lengths
    out_off[~valid] = -1
    codes = np.maximum(head_codes, 0)
    q_start = pq.q_start[codes]
    q_end = pq.q_end[codes]
    labels = np.empty(int(lengths.sum()), dtype=np.int32)
    cuts = _block_cuts(heads, n_rows, doc_col)

    def block(k: int) -> bool:  # on a worker thread: True if a doc repeats in the block
        a, b = int(cuts[k]), int(cuts[k + 1])
        r0 = int(heads[a])
        r1 = int(ends[b - 1])
        if not valid[a:b].any():
            return False
        offsets = np.append(heads[a:b] - r0, r1 - r0)
        key = key_col.slice(r0, r1 - r0).to_numpy() if sort else np.zeros(0)
        dup_at = np.empty(b - a, dtype=np.int64)
        K.rank_and_label(_IDENTITY, offsets, out_off[a:b], _readonly(key), sort,
                         id_column(doc_col.slice(r0, r1 - r0)), pq.q_hash, pq.q_rel, pq.q_row,
                         q_start[a:b], q_end[a:b], pq.doc_col, labels, dup_at)
        return bool((dup_at >= 0).any())

    if any(_on_threads(block, range(len(cuts) - 1))):
        return None
    gc = head_codes[valid]
    lengths = lengths[valid]
    if len(gc) > 1 and not (np.diff(gc) > 0).all():
        # queries in another order than the qrels: move each one's labels to its code's place
        order = np.argsort(gc, kind="stable")
        labels = K.gather_slices(labels, out_off[valid][order], lengths[order])
        gc = gc[order]
        lengths = lengths[order]
    offsets = np.zeros(pq.n_queries + 1, dtype=np.int64)
    offsets[gc + 1] = lengths
    return labels, np.cumsum(offsets)


def _find_duplicate(perm, offsets, groups, qcol: pl.Series, docs: pl.Series) -> int | None:
    """The input row of a truly repeated (query, doc) pair among flagged groups, or None."""
    rows = np.concatenate([perm[offsets[g]:offsets[g + 1]] for g in groups])
    sub = pl.DataFrame({"q": qcol.gather(rows), "d": docs.gather(rows), "row": rows})
    dup = sub.filter(pl.struct("q", "d").is_duplicated()).sort("row")
    if dup.height == 0:
        return None
    first = dup.row(0)
    later = dup.filter((pl.col("q") == first[0]) & (pl.col("d") == first[1]))
    return int(later["row"][1])


def _qrels_as_text(pq: PreparedQrels) -> PreparedQrels:
    """The same qrels with integer ids re-indexed as text (for a run with text ids).

    Its query codes follow the text order ("10" < "9"), not the integers' (9 < 10):
    ``pq._alt["text_codes"]`` maps each of them to the code of the same query in ``pq``."""
    alt = pq._alt.get("text")
    if alt is None:
        by_start = np.argsort(pq.q_start, kind="stable")  # the ranges tile the positions
        qcodes = np.repeat(by_start, (pq.q_end - pq.q_start)[by_start])
        if len(pq.q_row):
            orig_q = np.empty(pq.n_rows, dtype=np.int64)
            orig_q[pq.q_row] = qcodes  # q_row maps position -> row
        else:
            orig_q = qcodes
        orig_rel = pq.q_rel
        df = pl.DataFrame(
            {
                "query_id": pq.query_ids.gather(orig_q).cast(pl.Utf8),
                "doc_id": pq.doc_ids.cast(pl.Utf8),
                "relevance": orig_rel,
            }
        )
        alt = prepare_qrels(df)
        pq._alt["text_codes"] = alt.query_ids.replace_strict(
            pq.query_ids.cast(pl.Utf8), pl.int_range(pq.n_queries, eager=True),
            return_dtype=pl.Int64,
        ).to_numpy()
        pq._alt["text"] = alt
    return alt
