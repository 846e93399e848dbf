"""Ranking a run: group its rows by query, sort each query into rank order and label it
from the qrels (:func:`prepare_run` -> :class:`Batch`), again without the duplicates when
``duplicates="keep_best"`` finds some; placeholder rankings for ``complete=True``.

``tie_break="expected"`` (:func:`prepare_run_expected`) ranks as ``"trec"`` (inside a tie
the order does not matter to the expected values) and marks the first document of every
group of equal scores (``Batch.tie_starts``). ``max_docs`` must not cut a tie group (which
documents are kept would then depend on the order of the tie): such a cut is refused,
naming the query. Documents dropped by ``judged_only`` leave their groups with the others,
whose orderings stay equally likely.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from fasteval._lazy import LazyModule
from fasteval.errors import InputError, ParameterError
from fasteval.options import Duplicates, TieBreak
from fasteval.prepare import small, threads
from fasteval.prepare.qrels import PreparedQrels, _qrels_as_text, _run_heads, run_heads
from fasteval.prepare.tables import (
    DUPLICATES,
    TIE_BREAKS,
    Report,
    _first_null,
    check_columns,
    check_run_table,
)
from fasteval.prepare.threads import _block_cuts, on_threads, split_parts
from fasteval.prepare.views import _IDENTITY, id_column, readonly

E = LazyModule("fasteval.kernels.expected")
KG = LazyModule("fasteval.kernels.groups")
KR = LazyModule("fasteval.kernels.rank")
"""The preparation kernels, imported (with numba) on first use."""


@dataclass
class Batch:
    """One run, prepared: rankings as flat labels with offsets, aligned to qrels queries."""

    labels: np.ndarray  # int32, rank order per query
    offsets: np.ndarray  # int64 [n + 1]
    qidx: np.ndarray  # int64 [n]: qrels query code of each evaluated query
    present: np.ndarray  # bool [n]: False for queries filled by complete=True
    report: Report
    # bool, aligned with labels: True where a group of equal scores starts (only with
    # tie_break="expected"; see prepare_run_expected)
    tie_starts: np.ndarray | None = None
    # the distinct run queries not in the qrels (ids as compared with the qrels' ones)
    dropped_ids: pl.Series | None = None


def _harmonize(pq: PreparedQrels, qcol: pl.Series,
               docs: pl.Series) -> tuple[PreparedQrels, pl.Series, pl.Series]:
    """Make a run's id columns and the qrels' ids the same types (see
    :func:`fasteval.prepare.small.id_kinds`): integer qrels meet a run with text ids
    through their text copy (:func:`_qrels_as_text`)."""
    q_int, d_int = small.id_kinds(pq, qcol, docs)
    if not (q_int and d_int) and (pq.query_ids.dtype.is_integer() and not q_int
                                  or pq.doc_ids.dtype.is_integer() and not d_int):
        pq = _qrels_as_text(pq)
    return pq, small._ids(qcol, q_int), small._ids(docs, d_int)


def _query_groups(pq: PreparedQrels, qcol: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Runs of equal query ids in a run: their first rows and qrels codes (-1 = not in the
    qrels). Only one row per run is hashed, and every match is confirmed on the ids."""
    return _run_heads(qcol, pq)


def prepare_run(
    pq: PreparedQrels,
    run: pl.DataFrame,
    *,
    tie_break: TieBreak = "trec",
    max_docs: int | None = None,
    judged_only: bool = False,
    complete: bool = False,
    duplicates: Duplicates = "error",
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
    tie_break : {"trec", "rank", "input", "expected"}
        ``"trec"``: score descending, then doc id descending byte-wise (trec_eval);
        ``"rank"``: the ``rank`` column ascending (ties by doc id descending);
        ``"input"``: the row order as given; ``"expected"``: as ``"trec"``, with the tie
        groups marked for expected values (:func:`prepare_run_expected`).
    max_docs : int, optional
        Keep the top ``max_docs`` of each query after sorting (trec_eval ``-M``).
    judged_only : bool
        Drop unjudged documents after ``max_docs`` (trec_eval ``-J``).
    complete : bool
        Also return qrels queries missing from the run, as empty rankings (trec_eval ``-c``).
    duplicates : {"error", "keep_best"}
        A document twice in one query is an error (trec_eval), or keep its best-scored row
        (``tie_break="rank"``: its best-ranked row, the best-scored among equal ranks).
    source : str
        Name used in error messages.
    check_scores : bool
        Look for null and NaN scores (an error naming the row). ``False`` trusts the
        caller: a table made by :func:`fasteval.read_run` has been checked already, with
        the file and line in its message (the check reads every score: 6 ms a 10 M rows).
    """
    if tie_break not in TIE_BREAKS:
        raise ParameterError("tie_break", f"one of {TIE_BREAKS}", tie_break)
    # checked before the tie_break="expected" branch, which would read 0 or 1.5 as a cutoff
    if max_docs is not None and (not isinstance(max_docs, (int, np.integer))
                                 or isinstance(max_docs, (bool, np.bool_)) or max_docs <= 0):
        raise ParameterError("max_docs", "a positive integer", max_docs)
    if tie_break == "expected":
        return prepare_run_expected(pq, run, max_docs=max_docs, judged_only=judged_only,
                                    complete=complete, duplicates=duplicates, source=source,
                                    check_scores=check_scores)
    key_col = _ranking_key(run, tie_break, duplicates, source, check_scores)
    sort = tie_break != "input"
    if pq.index is None and small.is_small(run.height):
        given = pq
        labels, offsets, dropped_ids, dup_row, qcol, doc_col = (
            small.rank_and_label_small(pq, run.get_column("query_id"), run.get_column("doc_id"),
                                       key_col, sort))
    else:
        pq = given = pq.indexed()  # integer qrels meet a text run through a text copy
        labels, offsets, dropped_ids, dup_row, qcol, doc_col, pq = (
            _rank_and_label_kernels(pq, run, key_col, sort))
    if dup_row is not None:
        if duplicates == "error":
            raise InputError(
                f"document {doc_col[dup_row]!r} appears more than once for query "
                f"{qcol[dup_row]!r}",
                advice="keep_best_run", source=source, row=dup_row, column="doc_id",
            )
        return _without_duplicates(given, run, key_col, tie_break, max_docs=max_docs,
                                   judged_only=judged_only, complete=complete, source=source)
    report = Report(dropped_not_in_qrels=len(dropped_ids))
    batch = _cut_and_fill(pq, given, labels, offsets, report, max_docs, judged_only, complete)
    batch.dropped_ids = dropped_ids
    return batch


def _ranking_key(run: pl.DataFrame, tie_break: TieBreak, duplicates: Duplicates, source: str,
                 check_scores: bool) -> pl.Series:
    """The run's checks (after :func:`prepare_run`'s own), and the key its queries are sorted
    by, descending: the score, or minus the rank for ``tie_break="rank"``."""
    if duplicates not in DUPLICATES:
        raise ParameterError("duplicates", f"one of {DUPLICATES}", duplicates)
    check_columns(run, ("query_id", "doc_id", "score"), source)
    if tie_break == "rank" and "rank" not in run.columns:
        raise InputError("tie_break='rank' needs a 'rank' column", source=source, column="rank")
    check_run_table(run, source, scores=check_scores, run_id=False)
    if tie_break != "rank":
        return run.get_column("score").cast(pl.Float64)
    if run.get_column("rank").null_count():
        rank = run.get_column("rank")
        raise InputError("rank is null; tie_break='rank' needs a rank on every row",
                         source=source, row=_first_null(rank), column="rank")
    from fasteval.io._common import normalize_rank, row_locator

    # NaN, fractional or past-int64 ranks are refused, as read_run refuses them
    rank = normalize_rank(run.get_column("rank"), source=source, where=row_locator())
    return -rank.cast(pl.Float64)


def _without_duplicates(given: PreparedQrels, run: pl.DataFrame, key_col: pl.Series,
                        tie_break: TieBreak, **options) -> Batch:
    """:func:`prepare_run` again, on the run without its repeated documents
    (``duplicates="keep_best"``), counting the rows removed from scored queries."""
    kept = _best_rows(run, key_col, tie_break)
    batch = prepare_run(given, kept.drop("__row"), tie_break=tie_break, duplicates="error",
                        **options)
    # the rows removed from scored queries: duplicates are looked for only there (a
    # query without judgments is dropped unread), so the count does not depend on
    # whether a scored query of the same table also had one
    removed = (run.with_row_index("__row").join(kept.select("__row"), on="__row", how="anti")
               .get_column("query_id"))
    scored = given.query_ids.gather(batch.qidx[batch.present]).cast(pl.Utf8)
    batch.report.deduplicated_rows = int(removed.cast(pl.Utf8).is_in(scored.implode()).sum())
    return batch


def _best_rows(run: pl.DataFrame, key_col: pl.Series, tie_break: TieBreak) -> pl.DataFrame:
    """The rows ``duplicates="keep_best"`` keeps, numbered (``__row``), in run order: of each
    (query, document) the first of the best score (tie_break="rank": best rank, then score)."""
    best = ["score", "__row"] if tie_break != "rank" else ["__rank", "score", "__row"]
    return (
        run.with_row_index("__row").with_columns(__rank=key_col)
        .sort(best, descending=[True] * (len(best) - 1) + [False])
        .unique(subset=["query_id", "doc_id"], keep="first", maintain_order=True)
        .sort("__row")
        .drop("__rank")
    )


def _cut_and_fill(pq: PreparedQrels, given: PreparedQrels, labels: np.ndarray,
                  offsets: np.ndarray, report: Report, max_docs: int | None, judged_only: bool,
                  complete: bool) -> Batch:
    """The batch of ranked and labelled queries (``offsets`` over all of ``pq``'s queries,
    ``pq`` the qrels ``given`` or their text copy): ``max_docs``, then ``judged_only``, then
    ``complete``'s placeholders; the report's counts."""
    nq = pq.n_queries
    counts = np.diff(offsets)
    has = counts > 0
    report.run_queries = int(has.sum()) + report.dropped_not_in_qrels
    report.missing_from_run = int((~has).sum())
    no_limit = int(np.iinfo(np.int64).max)  # a larger max_docs means the same (atol saturates)
    limit = min(int(max_docs), no_limit) if max_docs is not None else no_limit
    if (limit < no_limit or judged_only) and small.is_small(len(labels)):
        labels, offsets = small.truncate_small(labels, offsets, limit, judged_only)
    elif limit < no_limit or judged_only:
        labels, offsets = KG.truncate(labels, offsets, limit, judged_only)
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
        order = np.argsort(qidx, kind="stable")
        if (np.diff(qidx) < 0).any():  # queries in the order of the qrels given
            labels, offsets = _reorder(labels, offsets, order)
            qidx = qidx[order]
            present = present[order]
    return Batch(labels=labels, offsets=offsets, qidx=qidx, present=present, report=report)


def _reorder(labels: np.ndarray, offsets: np.ndarray,
             order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rankings of queries ``order`` (positions), one after the other."""
    lengths = np.diff(offsets)[order]
    new_off = np.zeros(len(offsets), dtype=np.int64)
    np.cumsum(lengths, out=new_off[1:])
    return KG.gather_slices(labels, offsets[:-1][order], lengths), new_off


def _rank_and_label_kernels(pq: PreparedQrels, run: pl.DataFrame, key_col: pl.Series,
                            sort: bool) -> tuple:
    """Rank and label ``run`` by the kernels (``pq`` indexed). Returns ``(labels, offsets,
    dropped_ids, dup_row, qcol, doc_col, pq)`` as :func:`fasteval.prepare.small.
    rank_and_label_small` does, and the qrels the codes refer to (a text copy of integer
    qrels for a text run; see _qrels_as_text)."""
    pq, qcol, doc_col = _harmonize(pq, run.get_column("query_id"), run.get_column("doc_id"))
    heads, head_codes = _query_groups(pq, qcol)
    nq = pq.n_queries
    dropped = qcol.gather(heads[head_codes < 0]).unique(maintain_order=True)
    blocked = None
    if run.height >= 2 * threads.BLOCK_ROWS and _each_query_once(head_codes):
        blocked = _rank_and_label_blocked(pq, heads, head_codes, run.height, key_col, doc_col,
                                          sort)
    if blocked is not None:
        labels, offsets = blocked
        dup_at = np.full(0, -1, dtype=np.int64)
    else:
        perm, offsets = KG.group_runs(heads, run.height, head_codes, nq)
        labels = np.empty(perm.shape[0], dtype=np.int32)
        dup_at = np.empty(nq, dtype=np.int64)
        key = readonly(key_col.to_numpy() if sort else np.zeros(0))
        docs = id_column(doc_col)
        cuts = split_parts(offsets[1:], nq)  # whole queries, each part ranked by one thread

        def part(k: int) -> None:
            a, b = int(cuts[k]), int(cuts[k + 1])
            KR.rank_and_label(perm, offsets[a:b + 1], offsets[a:b], key, sort, docs, pq.q_hash,
                             pq.q_rel, pq.q_row, pq.q_start[a:b], pq.q_end[a:b], pq.doc_col,
                             labels, dup_at[a:b])

        on_threads(part, range(len(cuts) - 1))
    dup_row = None
    dup_groups = np.flatnonzero(dup_at >= 0)
    if len(dup_groups):
        dup_row = _find_duplicate(perm, offsets, dup_groups, qcol, doc_col)
    return labels, offsets, dropped, dup_row, qcol, doc_col, pq


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


def _each_query_once(head_codes: np.ndarray) -> bool:
    """Whether every qrels query of a run is one contiguous run of rows."""
    valid = head_codes[head_codes >= 0]
    if len(valid) < 2 or (np.diff(valid) > 0).all():  # the usual dump: queries in code order
        return True
    return len(np.unique(valid)) == len(valid)


def _rank_and_label_blocked(pq: PreparedQrels, heads: np.ndarray, head_codes: np.ndarray,
                            n_rows: int, key_col: pl.Series, doc_col: pl.Series,
                            sort: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`KR.rank_and_label` over blocks of whole queries (input grouped by query).

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
        KR.rank_and_label(_IDENTITY, offsets, out_off[a:b], readonly(key), sort,
                         id_column(doc_col.slice(r0, r1 - r0)), pq.q_hash, pq.q_rel, pq.q_row,
                         q_start[a:b], q_end[a:b], pq.doc_col, labels, dup_at)
        return bool((dup_at >= 0).any())

    if any(on_threads(block, range(len(cuts) - 1))):
        return None
    gc = head_codes[valid]
    lengths = lengths[valid]
    if len(gc) > 1 and not (np.diff(gc) > 0).all():
        # queries in another order than the qrels: move each one's labels to its code's place
        order = np.argsort(gc, kind="stable")
        labels = KG.gather_slices(labels, out_off[valid][order], lengths[order])
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


def prepare_run_expected(
    pq: PreparedQrels,
    run: pl.DataFrame,
    *,
    max_docs: int | None = None,
    judged_only: bool = False,
    complete: bool = False,
    duplicates: Duplicates = "error",
    source: str = "run",
    check_scores: bool = True,
) -> Batch:
    """:func:`fasteval.prepare.prepare_run` with ``tie_break="expected"``: the batch of
    ``tie_break="trec"`` with :attr:`Batch.tie_starts` and the report's tie counts.

    Raises
    ------
    ParameterError
        When ``max_docs`` cuts a tie group of some query.

    Examples
    --------
    >>> from fasteval.prepare.qrels import prepare_qrels
    >>> pq = prepare_qrels(pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"],
    ...                                  "relevance": [1, 0]}))
    >>> run = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"],
    ...                     "score": [0.5, 0.5, 0.2]})
    >>> batch = prepare_run_expected(pq, run)
    >>> batch.labels.tolist(), batch.tie_starts.tolist()
    ([0, 1, -1], [True, False, True])
    >>> batch.report.tied_queries, batch.report.ties_mattered
    (1, 1)
    """
    base = prepare_run(pq, run, tie_break="trec", max_docs=None, judged_only=False,
                       complete=False, duplicates=duplicates, source=source,
                       check_scores=check_scores)
    report = base.report
    labels, offsets, qidx = base.labels, base.offsets, base.qidx
    if report.deduplicated_rows:  # the rows prepare_run kept
        run = _best_rows(run, run.get_column("score"), "trec").drop("__row")
    starts = _tie_starts(pq, run, qidx, offsets)
    no_limit = int(np.iinfo(np.int64).max)
    limit = min(int(max_docs), no_limit) if max_docs is not None else no_limit
    if limit < no_limit or judged_only:
        labels, offsets, starts, split = E.truncate_groups(labels, offsets, starts, limit,
                                                           judged_only)
        if split >= 0:
            qid = pq.query_ids[int(qidx[split])]
            raise ParameterError(
                "max_docs",
                "a cutoff between tie groups with tie_break='expected' (query "
                f"{qid!r} has equal scores across rank {limit}; which documents are kept "
                "would depend on their order)",
                max_docs,
            )
    present = np.ones(len(qidx), dtype=bool)
    if complete and report.missing_from_run:
        nq = pq.n_queries
        lengths = np.zeros(nq, dtype=np.int64)
        lengths[qidx] = np.diff(offsets)
        full = np.zeros(nq + 1, dtype=np.int64)
        np.cumsum(lengths, out=full[1:])
        present = np.zeros(nq, dtype=bool)
        present[qidx] = True
        offsets, qidx = full, np.arange(nq, dtype=np.int64)
        if not judged_only:  # trec_eval 10's placeholder document (-J drops it)
            at = offsets[:-1][~present]
            labels, offsets = placeholder_rankings(labels, offsets, ~present)
            starts = np.insert(starts, at, True)
        report.filled = report.missing_from_run
        report.evaluated = nq
    report.tied_queries, report.ties_mattered = (int(x) for x in E.count_ties(labels, offsets,
                                                                               starts))
    return Batch(labels=labels, offsets=offsets, qidx=qidx, present=present, report=report,
                 tie_starts=starts, dropped_ids=base.dropped_ids)


def _tie_starts(pq: PreparedQrels, run: pl.DataFrame, qidx: np.ndarray,
                offsets: np.ndarray) -> np.ndarray:
    """Tie-group starts aligned with the labels of the batch's queries ``qidx`` (codes of
    ``pq``; rankings at ``offsets``): each run row is assigned its batch query through
    the runs of equal query ids (only their first rows are joined), its query's rows are
    grouped (:func:`fasteval.kernels.groups.group_runs`) and their scores sorted."""
    qcol = run.get_column("query_id")
    batch_ids = pq.query_ids.gather(qidx)
    if qcol.dtype.is_integer() and batch_ids.dtype.is_integer():
        qcol, batch_ids = qcol.cast(pl.Int64), batch_ids.cast(pl.Int64)
    else:
        qcol, batch_ids = qcol.cast(pl.Utf8), batch_ids.cast(pl.Utf8)
    n = len(qcol)
    if n == 0:
        return np.zeros(0, dtype=np.bool_)
    heads = run_heads(qcol)
    codes = (
        pl.DataFrame({"query_id": qcol.gather(heads)})
        .join(pl.DataFrame({"query_id": batch_ids,
                            "__pos": np.arange(len(batch_ids), dtype=np.int64)}),
              on="query_id", how="left", maintain_order="left")
        .get_column("__pos").fill_null(-1).to_numpy().astype(np.int64)
    )
    if len(codes) == len(batch_ids) and (codes[0] == 0) and (np.diff(codes) == 1).all():
        perm = np.zeros(0, dtype=np.int64)  # the usual dump: each query once, in code order
        grouped = np.append(heads, n)
    else:
        perm, grouped = KG.group_runs(heads, n, codes, len(batch_ids))
    if not np.array_equal(grouped, offsets):  # pragma: no cover - prepare_run invariant
        raise RuntimeError("tie groups do not line up with the prepared rankings")
    key = run.get_column("score").cast(pl.Float64).to_numpy()
    return E.tie_starts(perm, grouped, np.ascontiguousarray(key))
