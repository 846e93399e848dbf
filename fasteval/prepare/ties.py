"""Tie groups for ``tie_break="expected"``: a run ranked as usual, plus where each query's
groups of equal scores start (:func:`prepare_run_expected`).

The labels are those of ``tie_break="trec"`` (score descending; inside a tie the order
does not matter to the expected values); ``Batch.tie_starts`` marks the first document of
every tie group. ``max_docs`` must not cut a tie group (which documents are kept would
then depend on the order of the tie): such a cut is refused, naming the query. Documents
dropped by ``judged_only`` leave their groups with the others, whose orderings stay
equally likely.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from fasteval.errors import ParameterError
from fasteval.kernels import expected as E
from fasteval.kernels.groups import group_runs
from fasteval.prepare.qrels import PreparedQrels, run_heads
from fasteval.prepare.ranking import Batch, placeholder_rankings, prepare_run


def prepare_run_expected(
    pq: PreparedQrels,
    run: pl.DataFrame,
    *,
    max_docs: int | None = None,
    judged_only: bool = False,
    complete: bool = False,
    duplicates: str = "error",
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
    >>> from fasteval.prepare import prepare_qrels
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
    if report.deduplicated_rows:  # the rows prepare_run kept (its keep_best rule)
        run = (
            run.with_row_index("__row")
            .sort(["score", "__row"], descending=[True, False])
            .unique(subset=["query_id", "doc_id"], keep="first", maintain_order=True)
            .sort("__row")
            .drop("__row")
        )
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
        perm, grouped = group_runs(heads, n, codes, len(batch_ids))
    if not np.array_equal(grouped, offsets):  # pragma: no cover - prepare_run invariant
        raise RuntimeError("tie groups do not line up with the prepared rankings")
    key = run.get_column("score").cast(pl.Float64).to_numpy()
    return E.tie_starts(perm, grouped, np.ascontiguousarray(key))
