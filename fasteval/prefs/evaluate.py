"""Preference-judgment evaluation as trec_eval 10 does it (``-R prefs`` / ``-R qrels_prefs``).

Flow: read judgments -> rank the run per topic -> give every judged document a
per-topic *docid* (retrieved ones in rank order first, then the rest in docno
order) -> sort judgment rows by (jg, jsg, rel_level desc, docid) -> numba kernel
per topic (``fasteval.prefs.kernels``) -> mean over topics (sum for the counts).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import polars as pl

from fasteval.errors import InputError, ParameterError, UnknownMeasureError, check_flag
from fasteval.io._common import fmt_value
from fasteval.measures.aggregate import summary as summarise
from fasteval.prefs import kernels
from fasteval.prefs.readers import (
    judgments_from_frame,
    numeric_column,
    read_judgment_lines,
    read_trec_run_minimal,
)

#: The 14 preference measures in trec_eval's print order (``te_trec_measures[]``).
PREFS_MEASURES: tuple[str, ...] = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)
#: Measures that are integer counts (printed with ``%d``; the summary is a sum).
PREFS_COUNT_MEASURES: frozenset[str] = frozenset(PREFS_MEASURES[:3])
#: trec_eval's ``all_prefs`` nickname: ``runid``, ``num_q`` and the 14 measures (print order).
ALL_PREFS: tuple[str, ...] = ("runid", "num_q", *PREFS_MEASURES)
#: trec_eval's ``prefs`` nickname (the smaller "official" preference set).
PREFS_OFFICIAL: tuple[str, ...] = ("runid", "num_q", *PREFS_MEASURES[:6])
_NICKNAMES = {"all_prefs": ALL_PREFS, "prefs": PREFS_OFFICIAL}

#: docno trec_eval uses for the one-document placeholder ranking of a topic missing
#: from the run under ``-c``.
PLACEHOLDER_DOCNO = "ceci_nest_pas_un_docno"

_CHUNK_BYTES = 256 * 1024 * 1024


def _select_measures(measures: Sequence[str] | str | None) -> list[str]:
    if measures is None:
        return list(ALL_PREFS)
    if isinstance(measures, str):
        measures = [measures]
    wanted: set[str] = set()
    for m in measures:
        if m in _NICKNAMES:
            wanted.update(_NICKNAMES[m])
        elif m in ALL_PREFS:
            wanted.add(m)
        else:
            import difflib

            close = difflib.get_close_matches(m, list(ALL_PREFS) + list(_NICKNAMES), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UnknownMeasureError(f"unknown preference measure {m!r}{hint}")
    return [m for m in ALL_PREFS if m in wanted]


def _load_judgments(judgments, mode: str) -> tuple[pl.DataFrame, str]:
    """The judgments table and the name its errors give (a file's also has ``lineno``)."""
    if mode not in ("prefs", "qrels_prefs"):
        raise ParameterError("mode", "'prefs' or 'qrels_prefs'", mode)
    if isinstance(judgments, (str, os.PathLike)):
        return read_judgment_lines(judgments, mode), str(judgments)
    return judgments_from_frame(judgments, mode), "judgments"


def _locate(j: pl.DataFrame, qid: str, doc_id: str, code: int) -> tuple[int, str, str]:
    """Row index, jg and jsg of the judgment that makes ``doc_id`` inconsistent in ``qid``.

    ``code`` is the kernel's error: two rel_levels of one document in a judgment group of
    one sub-group, or rel_level 0 and > 0 in a group of several sub-groups. The row is
    the first one, in input order, that disagrees with an earlier one.
    """
    t = j.select("query_id", "jg", "jsg", "doc_id", "rel_level").with_row_index("_row")
    n_sub = t.filter(pl.col("query_id") == qid).group_by("jg").agg(
        pl.col("jsg").n_unique().alias("_n_sub"))
    t = t.filter((pl.col("query_id") == qid) & (pl.col("doc_id") == doc_id)).join(
        n_sub, on="jg", how="left").sort("_row")
    if code == kernels.ERR_DOC_TWO_LEVELS_EC:
        key, value = ["jg", "jsg"], pl.col("rel_level")
        t = t.filter(pl.col("_n_sub") == 1)
    else:
        key, value = ["jg"], pl.col("rel_level") > 0
        t = t.filter(pl.col("_n_sub") > 1)
    bad = t.filter(value != value.first().over(key))
    if bad.height == 0:  # not expected: the kernel found one; name the topic only
        return -1, "", ""
    row = bad.row(0, named=True)
    return int(row["_row"]), row["jg"], row["jsg"]


def load_run(run) -> tuple[pl.DataFrame, str | None]:
    if isinstance(run, (str, os.PathLike)):
        return read_trec_run_minimal(run)
    if not isinstance(run, pl.DataFrame):
        try:
            run = pl.from_pandas(run) if hasattr(run, "iloc") else pl.DataFrame(run)
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"cannot read run table: {exc}", source="run") from None
    missing = [c for c in ("query_id", "doc_id", "score") if c not in run.columns]
    if missing:
        raise InputError(f"missing column(s) {missing}; have {run.columns}", source="run", column=missing[0])
    tag = None
    if "tag" in run.columns and run.height:
        tag = run.get_column("tag")[-1]
    elif "run_id" in run.columns and run.height:
        tag = run.get_column("run_id")[-1]
    out = run.select(
        pl.col("query_id").cast(pl.Utf8),
        pl.col("doc_id").cast(pl.Utf8),
        numeric_column(run, "score", "run"),
    )
    for c in out.columns:
        nulls = out.get_column(c).is_null()
        if nulls.any():
            raise InputError("missing value", source="run", row=int(nulls.arg_true()[0]), column=c)
    return out, (None if tag is None else str(tag))


def _rank_run(
    run: pl.DataFrame,
    topics: pl.Series,
    *,
    max_docs: int | None,
    complete: bool,
    tie_docno_desc: bool,
    judged: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Rank each judged topic's docs (score desc, then docno); keep the top ``max_docs``.

    With ``judged`` (distinct ``query_id, doc_id`` of the judgments) and no ``max_docs``,
    unjudged run rows are dropped first: the ranks then count judged documents only,
    which keeps their relative order, the only thing the measures use. Duplicate
    detection then covers judged documents only.
    """
    run = run.filter(pl.col("query_id").is_in(topics.implode()))
    present = set(run.get_column("query_id").unique().to_list())
    missing = [t for t in topics.to_list() if t not in present]
    if missing:
        if not complete:
            raise InputError(
                f"topic {missing[0]!r} has judgments but no retrieved documents "
                f"({len(missing)} such topic(s)); pass -c (complete=True) to score it as an empty ranking",
                source="run",
                column="query_id",
            )
        filler = pl.DataFrame(
            {
                "query_id": missing,
                "doc_id": [PLACEHOLDER_DOCNO] * len(missing),
                "score": [1.0] * len(missing),
            },
            schema={"query_id": pl.Utf8, "doc_id": pl.Utf8, "score": pl.Float64},
        )
        run = pl.concat([run, filler])
    if max_docs is None and judged is not None:
        # only the relative order of judged documents matters without a cutoff
        run = run.join(judged, on=["query_id", "doc_id"], how="semi")
    nan = run.get_column("score").is_nan()
    if nan.any():
        raise InputError("score is NaN", source="run", row=int(nan.arg_true()[0]), column="score")
    ranked = run.sort(
        ["query_id", "score", "doc_id"], descending=[False, True, tie_docno_desc]
    ).with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("query_id").alias("rank"))
    if max_docs is not None:
        ranked = ranked.filter(pl.col("rank") <= max_docs)
    dup = ranked.select("query_id", "doc_id").is_duplicated()
    if dup.any():
        row = ranked.filter(dup).row(0, named=True)
        raise InputError(
            f"document {fmt_value(row['doc_id'])} retrieved twice for topic {fmt_value(row['query_id'])}",
            source="run",
            column="doc_id",
        )
    return ranked.select("query_id", "doc_id", "rank")


def _codes(*series: pl.Series) -> list[np.ndarray]:
    """Dense integer codes (0-based) in byte-wise string order, shared across ``series``."""
    allv = pl.concat([x.rename("v") for x in series])
    codes = allv.rank("dense").cast(pl.Int64).to_numpy() - 1
    out, start = [], 0
    for x in series:
        out.append(codes[start : start + x.len()])
        start += x.len()
    return out


def _group_index(keys_sorted: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """For group keys sorted ascending: (position inside its group, group sizes)."""
    sizes = np.bincount(keys_sorted, minlength=n_groups).astype(np.int64)
    starts = np.zeros(n_groups, dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    return np.arange(keys_sorted.size, dtype=np.int64) - starts[keys_sorted], sizes


def _prepare(j: pl.DataFrame, ranked: pl.DataFrame) -> dict:
    """Per-topic docids and the judgment rows as flat sorted arrays (numpy, integer keys).

    Docids: retrieved judged docs 0..njr-1 in rank order, then unretrieved judged docs
    njr..nj-1 in docno (strcmp) order. Rows are sorted by (topic, jg, jsg, rel_level
    descending, docid).
    """
    qj, qr = _codes(j.get_column("query_id"), ranked.get_column("query_id"))
    dj, dr = _codes(j.get_column("doc_id"), ranked.get_column("doc_id"))
    (jg,) = _codes(j.get_column("jg"))
    (jsg,) = _codes(j.get_column("jsg"))
    qids = j.get_column("query_id").unique().sort().to_list()
    nq = len(qids)
    n_docs = int(max(dj.max(initial=-1), dr.max(initial=-1))) + 1
    key_j = qj * n_docs + dj
    key_r = qr * n_docs + dr
    uniq, inv = np.unique(key_j, return_inverse=True)  # sorted by (topic, docno)
    uq = uniq // n_docs
    rank = np.full(uniq.size, -1, dtype=np.int64)
    pos = np.searchsorted(uniq, key_r)
    pos_ok = pos < uniq.size
    hit = np.zeros(key_r.size, dtype=bool)
    hit[pos_ok] = uniq[pos[pos_ok]] == key_r[pos_ok]
    rank[pos[hit]] = ranked.get_column("rank").to_numpy()[hit]
    ret = np.nonzero(rank >= 0)[0]
    ret = ret[np.lexsort((rank[ret], uq[ret]))]
    within, njr = _group_index(uq[ret], nq)
    docid = np.empty(uniq.size, dtype=np.int64)
    docid[ret] = within
    unret = np.nonzero(rank < 0)[0]  # already in (topic, docno) order
    within_u, nju = _group_index(uq[unret], nq)
    docid[unret] = njr[uq[unret]] + within_u
    nj = njr + nju
    doc = docid[inv]
    rel = j.get_column("rel_level").to_numpy().astype(np.float64)
    order = np.lexsort((doc, -rel, jsg, jg, qj))
    row_off = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(qj, minlength=nq), out=row_off[1:])
    # topics holding a judgment group with several sub-groups need a preference matrix
    qs, jgs, jsgs = qj[order], jg[order], jsg[order]
    same_group = np.zeros(order.size, dtype=bool)
    same_group[1:] = (qs[1:] == qs[:-1]) & (jgs[1:] == jgs[:-1])
    new_sub = same_group & np.r_[False, jsgs[1:] != jsgs[:-1]]
    has_pa = np.bincount(qs[new_sub], minlength=nq) > 0
    return {
        "has_pa": has_pa,
        "qids": qids,
        "nj": nj,
        "njr": njr,
        "jg": np.ascontiguousarray(jg[order]),
        "jsg": np.ascontiguousarray(jsg[order]),
        "rel": np.ascontiguousarray(rel[order]),
        "doc": np.ascontiguousarray(doc[order]),
        "row_off": row_off,
        "doc_name": lambda q, d: _doc_name(j, qj, doc, q, d),
    }


def _doc_name(j: pl.DataFrame, qj: np.ndarray, doc: np.ndarray, q: int, d: int) -> str:
    hit = np.nonzero((qj == q) & (doc == d))[0]
    return j.get_column("doc_id")[int(hit[0])] if hit.size else "?"


def _run_kernel(prep: dict, j: pl.DataFrame, source: str = "judgments") -> np.ndarray:
    nj = prep["nj"]
    njr = prep["njr"]
    jg, jsg, rel, doc, row_off = prep["jg"], prep["jsg"], prep["rel"], prep["doc"], prep["row_off"]
    nq = nj.size
    out = np.zeros((nq, kernels.N_OUT), dtype=np.float64)
    status = np.zeros(nq, dtype=np.int64)
    errinfo = np.zeros((nq, 2), dtype=np.int64)
    sq = nj * nj
    # chunks of topics whose dense nj x nj matrices fit the memory budget
    need = sq * np.where(prep["has_pa"], 5, 4) + nj * 17
    start = 0
    while start < nq:
        stop = start
        total = 0
        while stop < nq and (stop == start or total + need[stop] <= _CHUNK_BYTES):
            total += need[stop]
            stop += 1
        sq_off = np.zeros(stop - start + 1, dtype=np.int64)
        np.cumsum(sq[start:stop], out=sq_off[1:])
        pa_off = np.zeros(stop - start + 1, dtype=np.int64)
        np.cumsum(np.where(prep["has_pa"][start:stop], sq[start:stop], 0), out=pa_off[1:])
        rel_off = np.zeros(stop - start + 1, dtype=np.int64)
        np.cumsum(nj[start:stop], out=rel_off[1:])
        pc_buf = np.empty(int(sq_off[-1]), dtype=np.int32)
        pa_buf = np.empty(int(pa_off[-1]), dtype=np.uint8)
        rel_buf = np.empty(int(rel_off[-1]), dtype=np.float64)
        mark_buf = np.zeros(int(rel_off[-1]), dtype=np.uint8)
        members_buf = np.empty(int(rel_off[-1]), dtype=np.int64)
        kernels.prefs_kernel(
            row_off[start : stop + 1], jg, jsg, rel, doc, nj[start:stop], njr[start:stop],
            sq_off, pa_off, rel_off, pc_buf, pa_buf, rel_buf, mark_buf, members_buf,
            np.zeros((stop - start, 10), dtype=np.int64), out[start:stop], status[start:stop], errinfo[start:stop],
        )
        start = stop
    bad = np.nonzero(status)[0]
    if bad.size:
        q = int(bad[0])
        qid = prep["qids"][q]
        code = int(status[q])
        d0 = prep["doc_name"](q, int(errinfo[q, 0]))
        line = row = None
        if code in (kernels.ERR_DOC_TWO_LEVELS_EC, kernels.ERR_ZERO_NONZERO):
            at, jg, jsg = _locate(j, qid, d0, code)
            if at >= 0 and "lineno" in j.columns:
                line = int(j.get_column("lineno")[at])
            elif at >= 0:
                row = at
        if code == kernels.ERR_DOC_TWO_LEVELS_EC:
            msg = (f"topic {fmt_value(qid)}: document {fmt_value(d0)} has two different rel_levels in one "
                   f"judgment sub-group (jg {fmt_value(jg)}, jsg {fmt_value(jsg)}); expected one rel_level "
                   "per document")
        elif code == kernels.ERR_ZERO_NONZERO:
            msg = (f"topic {fmt_value(qid)}: document {fmt_value(d0)} has both rel_level 0 and a rel_level > 0 "
                   f"in one judgment group (jg {fmt_value(jg)}); expected one or the other")
        else:
            d1 = prep["doc_name"](q, int(errinfo[q, 1]))
            msg = (
                f"topic {fmt_value(qid)}: inconsistent preferences in one judgment group "
                f"({fmt_value(d0)} and {fmt_value(d1)} each preferred to the other)"
            )
        raise InputError(msg, source=source, line=line, row=row, column="rel_level")
    return out


def evaluate_prefs(
    judgments,
    run,
    *,
    mode: str = "prefs",
    measures: Sequence[str] | str | None = None,
    per_query: bool = True,
    max_docs: int | None = None,
    complete: bool = False,
    run_id: str | None = None,
    summary: bool = True,
) -> list[tuple[str, str, float | int | str]]:
    """Evaluate a run against preference judgments, exactly as trec_eval 10 prints it.

    Parameters
    ----------
    judgments : path or DataFrame
        ``mode="prefs"``: a prefs file (``qid jg jsg docno rel_level``) or a table with
        ``query_id, jg, jsg, doc_id, rel_level``. ``mode="qrels_prefs"``: a qrels file
        (``qid iter docno rel``; ``iter`` is the judgment group) or a qrels table
        (``query_id, doc_id, relevance``; optional ``jg``/``iteration``).
    run : path or DataFrame
        ``query_id, doc_id, score`` (optional ``tag``/``run_id``: its last value is the
        ``runid``), or a TREC run file.
    mode : {"prefs", "qrels_prefs"}
        trec_eval's ``-R`` value.
    measures : list of str, optional
        trec_eval names or the nicknames ``all_prefs`` (default) and ``prefs``. Output
        follows trec_eval's print order whatever the order given.
    per_query : bool
        Include the per-topic blocks (trec_eval ``-q``) before the summary.
    max_docs : int, optional
        trec_eval ``-M``: keep the top ``max_docs`` documents per topic (after ranking).
    complete : bool
        trec_eval ``-c``: a judged topic absent from the run is evaluated against a
        one-document placeholder ranking instead of being an error.
    run_id : str, optional
        Value of the ``runid`` line; defaults to the run's last tag when known. Without
        either, no ``runid`` line is produced.
    summary : bool
        Include the summary lines (qid ``"all"``); ``False`` is trec_eval ``-n``.

    Returns
    -------
    list of (measure, qid, value)
        Per-topic lines (topics in strcmp order, measures in print order; ``runid`` and
        ``num_q`` only in the summary), then the summary with qid ``"all"``. Counts
        (``prefs_num_prefs_*``, ``num_q``) are ``int``; ``runid`` is ``str``; the rest
        ``float``.

    Notes
    -----
    * Ranking: score descending; equal scores by docno ASCENDING (strcmp). This is the
      comparator of trec_eval's form_prefs_counts.c, which differs from the docno
      descending rule of the ordinary (qrels) measures; ``out.test.qrels_prefs`` pins it.
    * Summary: mean over the evaluated topics, except the three counts, which are sums.
    * Memory: a dense ``nj x nj`` count matrix per topic (nj = judged docs of the topic),
      as in trec_eval; topics are processed in chunks of at most 256 MiB.

    Examples
    --------
    >>> import polars as pl
    >>> j = pl.DataFrame({"query_id": ["q"] * 3, "jg": ["u"] * 3, "jsg": ["s"] * 3,
    ...                   "doc_id": ["a", "b", "c"], "rel_level": [2.0, 1.0, 0.0]})
    >>> r = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    >>> res = evaluate_prefs(j, r, measures=["prefs_simp", "prefs_num_prefs_ful"], per_query=False)
    >>> res  # a>b fails, a>c and b>c are fulfilled (c is not retrieved: implied)
    [('prefs_num_prefs_ful', 'all', 2), ('prefs_simp', 'all', 0.6666666666666666)]
    """
    if max_docs is not None and (not isinstance(max_docs, (int, np.integer))
                                 or isinstance(max_docs, bool) or max_docs < 0):
        raise ParameterError("max_docs", "a non-negative integer", max_docs)
    complete, per_query, summary = (check_flag(name, value) for name, value in (
        ("complete", complete), ("per_query", per_query), ("summary", summary)))
    names = _select_measures(measures)
    j, source = _load_judgments(judgments, mode)
    run_df, tag = load_run(run)
    values, qids = _values(j, source, run_df, max_docs, complete)
    return _lines(values, qids, names, tag if run_id is None else run_id, per_query, summary)


def _values(j: pl.DataFrame, source: str, run_df: pl.DataFrame, max_docs: int | None,
            complete: bool) -> tuple[np.ndarray, list[str]]:
    """The kernel's values (a row per topic) and the topics (strcmp order)."""
    topics = j.get_column("query_id").unique().sort()
    judged = j.select("query_id", "doc_id").unique()
    ranked = _rank_run(
        run_df, topics, max_docs=max_docs, complete=complete, tie_docno_desc=False, judged=judged
    )
    prep = _prepare(j, ranked)
    return _run_kernel(prep, j, source), prep["qids"]


def _lines(values: np.ndarray, qids: list[str], names: list[str], run_id: str | None,
           per_query: bool, summary: bool) -> list[tuple[str, str, float | int | str]]:
    """:func:`evaluate_prefs`'s lines from the kernel's values (a row per topic)."""
    col = {m: i for i, m in enumerate(PREFS_MEASURES)}
    chosen = [m for m in names if m in col]
    lines: list[tuple[str, str, float | int | str]] = []
    if per_query:
        for qi, qid in enumerate(qids):
            for m in chosen:
                v = values[qi, col[m]]
                lines.append((m, qid, int(v) if m in PREFS_COUNT_MEASURES else float(v)))
    if not summary:
        return lines
    if "runid" in names and run_id is not None:
        lines.append(("runid", "all", run_id))
    if "num_q" in names:
        lines.append(("num_q", "all", len(qids)))
    for m in chosen:  # added in topic order, as trec_eval accumulates
        if m in PREFS_COUNT_MEASURES:
            lines.append((m, "all", int(summarise(values[:, col[m]], "sum"))))
        else:
            lines.append((m, "all", summarise(values[:, col[m]], "mean")))
    return lines


def evaluate_prefs_table(
    judgments,
    run,
    *,
    mode: str = "prefs",
    measures: Sequence[str] | str | None = None,
    max_docs: int | None = None,
    complete: bool = False,
    run_id: str | None = None,
) -> pl.DataFrame:
    """Per-topic preference measures as a long table ``(run_id, query_id, measure, value)``.

    Same computation as :func:`evaluate_prefs`; ``runid``/``num_q`` and the summary are
    left out (aggregate with the mean, or the sum for ``PREFS_COUNT_MEASURES``).

    Examples
    --------
    >>> import polars as pl
    >>> j = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    >>> r = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> evaluate_prefs_table(j, r, mode="qrels_prefs", measures=["prefs_simp"], run_id="r1").rows()
    [('r1', 'q', 'prefs_simp', 1.0)]
    """
    wanted = ["all_prefs"] if measures is None else ([measures] if isinstance(measures, str) else list(measures))
    lines = evaluate_prefs(
        judgments, run, mode=mode, measures=[*wanted, "runid"], per_query=True,
        max_docs=max_docs, complete=complete, run_id=run_id,
    )
    run_id = next((str(v) for m, q, v in lines if m == "runid" and q == "all"), run_id)
    rows = [r for r in lines if r[1] != "all"]
    return pl.DataFrame(
        {
            "run_id": [run_id] * len(rows),
            "query_id": [q for _, q, _ in rows],
            "measure": [m for m, _, _ in rows],
            "value": [float(v) for _, _, v in rows],
        },
        schema={"run_id": pl.Utf8, "query_id": pl.Utf8, "measure": pl.Utf8, "value": pl.Float64},
    )


def format_trec_lines(lines: Sequence[tuple[str, str, float | int | str]]) -> str:
    """Format ``(measure, qid, value)`` lines the way trec_eval prints them.

    Examples
    --------
    >>> format_trec_lines([("num_q", "all", 2), ("prefs_simp", "all", 0.5)])
    'num_q                 \\tall\\t2\\nprefs_simp            \\tall\\t0.5000\\n'
    """
    parts = []
    for name, qid, v in lines:
        if isinstance(v, str):
            parts.append(f"{name:<22}\t{qid}\t{v}\n")
        elif isinstance(v, (int, np.integer)):
            parts.append(f"{name:<22}\t{qid}\t{int(v)}\n")
        else:
            parts.append(f"{name:<22}\t{qid}\t{float(v):6.4f}\n")
    return "".join(parts)
