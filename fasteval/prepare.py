"""Prepare: intern ids, group by query, sort into rank order, join relevance, offsets.

:func:`prepare_qrels` runs once per qrels; :func:`prepare_run` once per run. The result is
a :class:`Batch` of flat numpy arrays that the kernels of :mod:`fasteval.kernels.ranking`
read: no strings and no dicts past this point.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np
import polars as pl

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


_SEED = 0x5EED_F00D


def id_hashes(s: pl.Series) -> np.ndarray:
    """64-bit keys for an id column: the value for integers, a seeded hash for text."""
    if s.dtype.is_integer():
        return s.cast(pl.Int64).to_numpy()
    return s.cast(pl.Utf8).hash(seed=_SEED).to_numpy().view(np.int64)


@dataclass
class PreparedQrels:
    """Qrels interned and indexed for joining (built once, reused for every run)."""

    query_ids: pl.Series  # sorted unique query ids (index = query code)
    qtable_hash: np.ndarray  # sorted hashes of query_ids
    qtable_code: np.ndarray  # their codes
    doc_ids: pl.Series  # doc id column in the original row order
    q_hash: np.ndarray  # int64, qrels rows sorted by (query, doc hash)
    q_rel: np.ndarray  # int64 grades in the same order
    q_row: np.ndarray  # int64 original row of each sorted position
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

    @property
    def doc_is_text(self) -> bool:
        return not self.doc_ids.dtype.is_integer()

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
    for col in ("query_id", "doc_id"):
        if qrels.get_column(col).null_count():
            row = int(qrels.get_column(col).is_null().arg_max())
            raise InputError(f"{col} is missing", source="qrels", row=row, column=col)
    query_ids = qrels.get_column("query_id").unique().sort()
    qtable_hash = id_hashes(query_ids)
    order_q = np.argsort(qtable_hash)
    qtable_hash = qtable_hash[order_q]
    if len(qtable_hash) > 1 and (np.diff(qtable_hash) == 0).any():  # pragma: no cover
        raise InputError("two query ids share a 64-bit hash; please report this", source="qrels")
    qtable_code = order_q.astype(np.int64)
    # every qrels query id is in the table, so the hash lookup needs no verification here
    codes, _, _ = _lookup_runs(id_hashes(qrels.get_column("query_id")), qtable_hash, qtable_code)
    hashes = id_hashes(qrels.get_column("doc_id"))
    # rows sorted by (query, doc hash): counting sort by query, then each query by hash
    order, offsets = K.group_rows(codes, len(query_ids))
    K.sort_groups_by_int(order, offsets, hashes)
    rel = qrels.get_column("relevance").to_numpy()
    starts = offsets[:-1]
    ends = offsets[1:]
    q_hash = np.ascontiguousarray(hashes[order])
    q_codes = codes[order]
    same = np.flatnonzero((q_hash[1:] == q_hash[:-1]) & (q_codes[1:] == q_codes[:-1]))
    if len(same):
        docs = qrels.get_column("doc_id")
        first = order[same]
        second = order[same + 1]
        equal = (docs.gather(first) == docs.gather(second)).to_numpy()
        if equal.any():
            row = int(np.max(np.stack([first[equal], second[equal]]), axis=0).min())
            r = qrels.row(row)
            raise InputError(
                f"duplicate judgment for query {r[0]!r}, document {r[1]!r}", source="qrels",
                row=row,
            )
        raise InputError(  # pragma: no cover - a 64-bit collision inside one query
            "two doc ids of one query share a 64-bit hash; please report this", source="qrels"
        )
    q_rel = rel[order].astype(np.int64, copy=False)
    grades, g_off = K.sorted_grades(q_rel, starts, ends)
    return PreparedQrels(
        query_ids=query_ids,
        qtable_hash=qtable_hash,
        qtable_code=qtable_code,
        doc_ids=qrels.get_column("doc_id"),
        q_hash=q_hash,
        q_rel=q_rel,
        q_row=order,
        q_start=starts,
        q_end=ends,
        grades=grades,
        g_off=g_off,
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


def _lookup_runs(
    hashes: np.ndarray, table_hash: np.ndarray, table_code: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Query code of every row, looking up one row per run of equal hashes (tables are
    usually grouped by query). Returns (codes, run heads, code of each head; -1 = absent)."""
    heads = np.flatnonzero(np.concatenate([[True], hashes[1:] != hashes[:-1]]))
    head_codes = np.empty(len(heads), dtype=np.int64)
    K.lookup_codes(np.ascontiguousarray(hashes[heads]), table_hash, table_code, head_codes)
    codes = np.repeat(head_codes, np.diff(np.append(heads, len(hashes))))
    return codes, heads, head_codes


def _query_codes(pq: PreparedQrels, qcol: pl.Series) -> np.ndarray:
    codes, heads, head_codes = _lookup_runs(id_hashes(qcol), pq.qtable_hash, pq.qtable_code)
    # verify every looked-up id against the qrels id it matched
    found = heads[head_codes >= 0]
    if len(found):
        got = qcol.gather(found)
        want = pq.query_ids.gather(head_codes[head_codes >= 0])
        bad = (got != want).to_numpy()
        if bad.any():  # pragma: no cover - 64-bit collision: fall back to exact matching
            return qcol.replace_strict(
                pq.query_ids, pl.int_range(pq.n_queries, eager=True), default=-1,
                return_dtype=pl.Int64,
            ).to_numpy()
    return codes


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
    score = run.get_column("score")
    if score.dtype != pl.Float64:
        score = score.cast(pl.Float64)
    if score.null_count() or score.is_nan().any():
        bad = score.is_nan().fill_null(True)
        row = int(bad.arg_max())
        raise InputError(
            f"score is {score[row]!r}; expected a number", source=source, row=row, column="score"
        )
    pq, qcol = _harmonize(pq, run.get_column("query_id"), "query")
    pq, doc_col = _harmonize(pq, run.get_column("doc_id"), "doc")
    codes = _query_codes(pq, qcol)
    nq = pq.n_queries
    perm, offsets = K.group_rows(codes, nq)
    if perm.shape[0] < run.height:
        report.dropped_not_in_qrels = int(qcol.filter(codes < 0).n_unique())
    if tie_break == "trec":
        key = score.to_numpy()
    elif tie_break == "rank":
        key = -run.get_column("rank").cast(pl.Float64).to_numpy()
    else:
        key = np.zeros(run.height)
    if tie_break != "input":
        K.sort_groups(perm, offsets, key)
        _order_ties(perm, offsets, key, doc_col)
    hashes = id_hashes(doc_col)
    labels = np.empty(perm.shape[0], dtype=np.int32)
    match = np.empty(perm.shape[0], dtype=np.int64)
    dup_at = np.empty(nq, dtype=np.int64)
    K.join_labels(perm, offsets, hashes, pq.q_hash, pq.q_rel, pq.q_start, pq.q_end, labels,
                  match, dup_at, numba.get_num_threads())
    _verify_matches(pq, doc_col, perm, match, labels)
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


def _order_ties(perm: np.ndarray, offsets: np.ndarray, key: np.ndarray, docs: pl.Series) -> None:
    """Break equal keys by doc id descending, byte-wise (only tied rows are looked at)."""
    positions, run_ids = K.tie_positions(perm, offsets, key)
    if len(positions) == 0:
        return
    rows = perm[positions]
    local = np.arange(len(positions), dtype=np.int64)
    if docs.dtype.is_integer():
        ints = np.ascontiguousarray(docs.gather(rows).to_numpy())
        K.order_ties(perm, positions, run_ids, local, ints, np.zeros(1, dtype=np.int64),
                     np.zeros(0, dtype=np.uint8), True)
    else:
        off, data = _string_buffers(docs.gather(rows))
        K.order_ties(perm, positions, run_ids, local, np.zeros(1, dtype=np.int64), off, data,
                     False)


def _string_buffers(s: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Offsets and bytes of a text column as one Arrow ``large_string`` array."""
    import pyarrow as pa

    arr = s.cast(pl.Utf8).to_arrow()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    _, off_buf, data_buf = arr.buffers()
    off = np.frombuffer(off_buf, dtype=np.int64, count=len(arr) + 1, offset=arr.offset * 8)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(
        0, dtype=np.uint8)
    return off, data


def _verify_matches(pq: PreparedQrels, docs: pl.Series, perm: np.ndarray, match: np.ndarray,
                    labels: np.ndarray) -> None:
    """Check every hash match against the real ids; unmatch any collision."""
    pos = np.flatnonzero(match >= 0)
    if len(pos) == 0:
        return
    got = docs.gather(perm[pos])
    want = pq.doc_ids.gather(pq.q_row[match[pos]])
    bad = (got != want).to_numpy()
    if bad.any():  # pragma: no cover - 64-bit collision
        labels[pos[bad]] = -1


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
    """The same qrels with integer ids re-indexed as text (for a run with text ids)."""
    alt = pq._alt.get("text")
    if alt is None:
        qcodes = np.repeat(np.arange(pq.n_queries), pq.q_end - pq.q_start)
        orig_q = np.empty(pq.n_rows, dtype=np.int64)
        orig_q[pq.q_row] = qcodes  # q_row maps sorted position -> original row
        orig_rel = np.empty(pq.n_rows, dtype=np.int64)
        orig_rel[pq.q_row] = pq.q_rel
        df = pl.DataFrame(
            {
                "query_id": pq.query_ids.gather(orig_q).cast(pl.Utf8),
                "doc_id": pq.doc_ids.cast(pl.Utf8),
                "relevance": orig_rel,
            }
        )
        alt = prepare_qrels(df)
        pq._alt["text"] = alt
    return alt
