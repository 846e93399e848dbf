"""Prepare: intern ids, group by query, sort into rank order, join relevance, offsets.

:func:`prepare_qrels` runs once per qrels; :func:`prepare_run` once per run. The result is
a :class:`Batch` of flat numpy arrays that the kernels of :mod:`fasteval.kernels.ranking`
read: no strings and no dicts past this point.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl
import pyarrow as pa

from fasteval.errors import InputError, ParameterError
from fasteval.kernels import prepare as K

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


@dataclass
class PreparedQrels:
    """Qrels interned and indexed for joining (built once, reused for every run)."""

    query_ids: pl.Series  # sorted unique query ids (index = query code)
    doc_is_text: bool
    q_hash: np.ndarray  # int64, qrels rows sorted by (query, hash)
    q_rel: np.ndarray  # int64 grades in the same order
    q_row: np.ndarray  # int64 index into the doc buffers
    q_ints: np.ndarray
    q_off: np.ndarray
    q_data: np.ndarray
    q_start: np.ndarray  # int64 per query
    q_end: np.ndarray
    grades: np.ndarray  # int32 judged grades sorted descending per query
    g_off: np.ndarray  # int64 offsets into grades per query
    max_grade: int
    n_rows: int
    _alt: dict = field(default_factory=dict, repr=False)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

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


def _doc_buffers(s: pl.Series) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(is_text, ints, str_offsets, str_data, hashes) for an id column."""
    if s.dtype.is_integer():
        ints = s.cast(pl.Int64).to_numpy()
        empty_i = np.zeros(1, dtype=np.int64)
        empty_b = np.zeros(0, dtype=np.uint8)
        return False, ints, empty_i, empty_b, ints
    arr = s.cast(pl.Utf8).to_arrow()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    _, off_buf, data_buf = arr.buffers()
    n = len(arr)
    offsets = np.frombuffer(off_buf, dtype=np.int64, count=n + 1, offset=arr.offset * 8)
    data = (
        np.frombuffer(data_buf, dtype=np.uint8)
        if data_buf is not None
        else np.zeros(0, dtype=np.uint8)
    )
    hashes = np.empty(n, dtype=np.int64)
    K.hash_strings(offsets, data, hashes)
    return True, np.zeros(1, dtype=np.int64), offsets, data, hashes


def _check_columns(df: pl.DataFrame, needed: tuple[str, ...], what: str) -> None:
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise InputError(
            f"{what} table lacks column(s) {', '.join(missing)}; it has {', '.join(df.columns)}",
            source=what,
        )


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
    qrels = qrels.select("query_id", "doc_id", pl.col("relevance").cast(pl.Int64))
    dup = qrels.select(pl.struct("query_id", "doc_id").is_duplicated()).to_series()
    if dup.any():
        row = int(dup.arg_max())
        r = qrels.row(row)
        raise InputError(
            f"duplicate judgment for query {r[0]!r}, document {r[1]!r}", source="qrels", row=row
        )
    query_ids = qrels.get_column("query_id").unique().sort()
    codes = (
        qrels.get_column("query_id")
        .replace_strict(query_ids, pl.int_range(len(query_ids), eager=True), return_dtype=pl.Int64)
        .to_numpy()
    )
    is_text, ints, off, data, hashes = _doc_buffers(qrels.get_column("doc_id"))
    order = np.lexsort((hashes, codes))
    rel = qrels.get_column("relevance").to_numpy()
    counts = np.bincount(codes, minlength=len(query_ids))
    ends = np.cumsum(counts).astype(np.int64)
    starts = ends - counts
    q_rel = np.ascontiguousarray(rel[order]).astype(np.int64)
    grades, g_off = K.sorted_grades(q_rel, starts, ends)
    return PreparedQrels(
        query_ids=query_ids,
        doc_is_text=is_text,
        q_hash=np.ascontiguousarray(hashes[order]),
        q_rel=q_rel,
        q_row=order.astype(np.int64),
        q_ints=ints,
        q_off=off,
        q_data=data,
        q_start=starts.astype(np.int64),
        q_end=ends,
        grades=grades,
        g_off=g_off,
        max_grade=int(max(0, rel.max())) if len(rel) else 0,
        n_rows=qrels.height,
    )


def _query_codes(pq: PreparedQrels, qcol: pl.Series) -> np.ndarray:
    qids = pq.query_ids
    if qcol.dtype != qids.dtype:
        if qcol.dtype.is_integer() and qids.dtype.is_integer():
            qcol = qcol.cast(pl.Int64)
            qids = qids.cast(pl.Int64)
        else:
            qcol = qcol.cast(pl.Utf8)
            qids = qids.cast(pl.Utf8)
    return qcol.replace_strict(
        qids, pl.int_range(len(qids), eager=True), default=-1, return_dtype=pl.Int64
    ).to_numpy()


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
    report = Report()
    score = run.get_column("score").cast(pl.Float64)
    if score.is_nan().any() or score.is_null().any():
        bad = score.is_nan() | score.is_null()
        row = int(bad.arg_max())
        raise InputError(
            f"score is {score[row]!r}; expected a number", source=source, row=row, column="score"
        )
    codes = _query_codes(pq, run.get_column("query_id"))
    nq = pq.n_queries
    perm, offsets = K.group_rows(codes, nq)
    if perm.shape[0] < run.height:
        bad = codes < 0
        report.dropped_not_in_qrels = int(run.get_column("query_id").filter(bad).n_unique())
    doc_col = run.get_column("doc_id")
    qrels_text = pq.doc_is_text
    run_text = not doc_col.dtype.is_integer()
    if qrels_text != run_text:
        if qrels_text:
            doc_col = doc_col.cast(pl.Utf8)
        else:
            pq = _qrels_with_text_docs(pq)
    is_text, ints, s_off, s_data, hashes = _doc_buffers(doc_col)
    if tie_break == "trec":
        key = score.to_numpy()
    elif tie_break == "rank":
        key = -run.get_column("rank").cast(pl.Float64).to_numpy()
    else:
        key = np.zeros(run.height)
    K.sort_groups(perm, offsets, key, is_text, ints, s_off, s_data, tie_break != "input")
    labels = np.empty(perm.shape[0], dtype=np.int32)
    dup_at = np.empty(nq, dtype=np.int64)
    K.join_labels(
        perm, offsets, np.arange(nq), hashes, is_text, ints, s_off, s_data, pq.q_hash, pq.q_rel,
        pq.q_start, pq.q_end, pq.q_ints, pq.q_off, pq.q_data, pq.q_row, labels, dup_at,
    )
    if (dup_at >= 0).any():
        if duplicates == "error":
            g = int(np.argmax(dup_at >= 0))
            row = int(perm[dup_at[g]])
            raise InputError(
                f"document {doc_col[row]!r} appears more than once for query "
                f"{run.get_column('query_id')[row]!r} (pass duplicates='keep_best' to keep the "
                "best-scored row)",
                source=source,
                row=row,
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
            pq, deduped, tie_break=tie_break, max_docs=max_docs, judged_only=judged_only,
            complete=complete, duplicates="error", source=source,
        )
        batch.report.deduplicated_rows = run.height - deduped.height
        return batch
    counts = np.diff(offsets)
    has = counts > 0
    report.run_queries = int(has.sum()) + report.dropped_not_in_qrels
    report.missing_from_run = int((~has).sum())
    limit = int(max_docs) if max_docs is not None else np.iinfo(np.int64).max
    if limit < np.iinfo(np.int64).max or judged_only:
        labels, offsets = K.truncate(labels, offsets, limit, judged_only)
    if complete:
        qidx = np.arange(nq, dtype=np.int64)
        report.filled = report.missing_from_run
        present = has
    else:
        qidx = np.flatnonzero(has).astype(np.int64)
        present = np.ones(len(qidx), dtype=bool)
        offsets = np.concatenate([[0], offsets[1:][has]]).astype(np.int64)
    report.evaluated = len(qidx)
    return Batch(labels=labels, offsets=offsets, qidx=qidx, present=present, report=report)


def _qrels_with_text_docs(pq: PreparedQrels) -> PreparedQrels:
    """The same qrels with integer doc ids re-indexed as text (for a run with text ids)."""
    alt = pq._alt.get("text")
    if alt is None:
        n = len(pq.q_ints)
        qcodes = np.repeat(np.arange(pq.n_queries), pq.q_end - pq.q_start)
        # original row order: q_row maps sorted position -> original row
        orig_q = np.empty(n, dtype=np.int64)
        orig_q[pq.q_row] = qcodes
        orig_rel = np.empty(n, dtype=np.int64)
        orig_rel[pq.q_row] = pq.q_rel
        df = pl.DataFrame(
            {
                "query_id": pq.query_ids.gather(orig_q),
                "doc_id": pl.Series(pq.q_ints).cast(pl.Utf8),
                "relevance": orig_rel,
            }
        )
        alt = prepare_qrels(df)
        pq._alt["text"] = alt
    return alt
