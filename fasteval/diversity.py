"""Diversity (intent-aware) evaluation with subtopic judgments, as the TREC Web track's ndeval.

Measures (``k`` a rank cutoff; ``alpha`` and ``beta`` default 0.5, as in ndeval):

=========================  ================================================================
``alpha-nDCG@k``           alpha-DCG over that of the greedy ideal ranking (Clarke et al. 2008)
``alpha-DCG@k``            alpha-DCG over an ideal whose every document covers every subtopic
``ERR-IA@k``, ``nERR-IA@k``  intent-aware ERR, normalised the same two ways (Chapelle et al. 2009)
``NRBP``, ``nNRBP``        novelty- and rank-biased precision (Clarke et al. 2009), whole ranking
``P-IA@k``                 intent-aware precision
``strec@k``                subtopic recall: the share of the subtopics the top ``k`` cover
``MAP-IA``                 intent-aware average precision, whole ranking
=========================  ================================================================

Parameters go in parentheses: ``alpha-nDCG(alpha=0.7)@20``, ``NRBP(beta=0.8)``. The parser
also reads ir_measures' spellings (``alpha_nDCG@10``, ``ERR_IA@20``, ``P_IA@10``,
``StRecall@10``, ``AP_IA``) and ``s-recall@k`` / ``subtopic_recall@k``; output names are
ndeval's. Definitions are in :mod:`fasteval.kernels.diversity`.

As in ndeval, a document is relevant to a subtopic when its judgment reaches
``relevance_level`` (default 1: ndeval's "judgment > 0"); only subtopics with at least one
relevant document count; the ideal ranking is ndeval's greedy approximation (ties: the
larger document id; a document's gains are summed over its subtopics in ndeval's order: by
number, then ids that are not numbers by their text). Rankings follow fasteval's order
(score descending, ties by document id descending byte-wise, which is ndeval's ``-traditional`` order); queries of the run that the
judgments do not have are left out, and ``complete=True`` scores judged queries missing from
the run as 0 (ndeval ``-c``). Where ndeval divides 0 by 0 (``nNRBP`` of a query none of
whose documents is relevant, and of every query when alpha = 0 and beta = 1) the value is
NaN, as ndeval prints it. One difference: ndeval
leaves ``alpha-DCG@1`` and ``ERR-IA@1`` unnormalised (the count of subtopics the first
document covers); here every cutoff is normalised. ndeval stops at rank 20; here any cutoff
up to ``MAX_CUTOFF`` (2**31 - 1) works. pyndeval (ir_measures' provider) ranks tied scores
by document id ascending, not ndeval's order: values differ from it on ties.

Examples
--------
>>> import fasteval
>>> qrels = {"q1": {"s1": {"d1": 1, "d2": 1}, "s2": {"d1": 1}, "s3": {"d3": 1}}}
>>> run = {"q1": {"d2": 4.0, "d1": 3.0, "d9": 2.0, "d3": 1.0}}
>>> res = fasteval.evaluate_diversity(qrels, run, ["alpha-nDCG@5", "strec@2", "nNRBP"])
>>> [(m, round(v, 4)) for m, v in res.select("measure", "value").rows()]
[('alpha-nDCG@5', 0.8251), ('strec@2', 0.6667), ('nNRBP', 0.7143)]
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, get_args

import numpy as np
import polars as pl

from fasteval.errors import InputError, ParameterError, UnknownMeasureError, check_flag
from fasteval.kernels import diversity as K
from fasteval.measures.parser import DIVERSITY_NAME, DIVERSITY_SPELLINGS
from fasteval.options import Duplicates, RankedTieBreak, check_choice

__all__ = [
    "DiversityMeasure", "parse_diversity_measures", "DiversityEvaluator", "evaluate_diversity",
    "DIVERSITY_KINDS",
]


@dataclass(frozen=True)
class _Kind:
    code: int
    label: str  # ndeval's spelling, the canonical name
    cutoff: bool  # takes @k (required) or the whole ranking (no @k)
    alpha: bool
    beta: bool


DIVERSITY_KINDS: tuple[_Kind, ...] = (
    _Kind(K.ALPHA_NDCG, "alpha-nDCG", True, True, False),
    _Kind(K.ALPHA_DCG, "alpha-DCG", True, True, False),
    _Kind(K.ERR_IA, "ERR-IA", True, True, False),
    _Kind(K.NERR_IA, "nERR-IA", True, True, False),
    _Kind(K.NRBP, "NRBP", False, True, True),
    _Kind(K.NNRBP, "nNRBP", False, True, True),
    _Kind(K.P_IA, "P-IA", True, False, False),
    _Kind(K.STREC, "strec", True, False, False),
    _Kind(K.MAP_IA, "MAP-IA", False, False, False),
)
_BY_CODE = {k.code: k for k in DIVERSITY_KINDS}
_BY_LABEL = {k.label: k.code for k in DIVERSITY_KINDS}
_SPELLINGS: dict[str, int] = {s: _BY_LABEL[label] for s, label in DIVERSITY_SPELLINGS.items()}
DEFAULT_ALPHA = 0.5
DEFAULT_BETA = 0.5
MAX_CUTOFF = 2**31 - 1
"""Largest cutoff: alpha-DCG and ERR-IA at alpha = 0 sum their normaliser over every rank
up to it."""


@dataclass(frozen=True)
class DiversityMeasure:
    """One diversity measure: kind, cutoff (0: the whole ranking), alpha and beta.

    Examples
    --------
    >>> parse_diversity_measures("alpha_nDCG(alpha=0.7)@20")[0].name
    'alpha-nDCG(alpha=0.7)@20'
    """

    code: int
    cutoff: int
    alpha: float = DEFAULT_ALPHA
    beta: float = DEFAULT_BETA

    @property
    def name(self) -> str:
        """Canonical name: ndeval's spelling, parameters that differ from 0.5, ``@k``."""
        kind = _BY_CODE[self.code]
        params = []
        if kind.alpha and self.alpha != DEFAULT_ALPHA:
            params.append(f"alpha={self.alpha:g}")
        if kind.beta and self.beta != DEFAULT_BETA:
            params.append(f"beta={self.beta:g}")
        text = kind.label + (f"({','.join(params)})" if params else "")
        return f"{text}@{self.cutoff}" if kind.cutoff else text

    @property
    def aggregation(self) -> str:
        """How :func:`fasteval.aggregate` summarises it: the mean over queries."""
        return "mean"


def _number(text: str, what: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:  # (NaN too)
        raise ParameterError(f"{what} of {name!r}", "a number between 0 and 1", text)
    return value


def _is_regular(name: object) -> bool:
    """Whether ``name`` is a measure of :func:`fasteval.evaluate`."""
    from fasteval.errors import FastevalError
    from fasteval.measures import parse_measures

    try:
        parse_measures([name])  # type: ignore[list-item]
    except (FastevalError, TypeError):
        return False
    return True


def _parse_one(name: str) -> DiversityMeasure:
    match = DIVERSITY_NAME.match(name) if isinstance(name, str) else None
    key = match.group("base").lower().replace("_", "-") if match else None
    if match is None or key not in _SPELLINGS:
        choices = sorted({k.label for k in DIVERSITY_KINDS})
        close = difflib.get_close_matches(str(name).split("@")[0].split("(")[0], choices, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(choices)}"
        if _is_regular(name):
            hint = "; it is a relevance measure, computed by fasteval.evaluate"
        raise UnknownMeasureError(f"unknown diversity measure {name!r}{hint}")
    kind = _BY_CODE[_SPELLINGS[key]]
    alpha, beta = DEFAULT_ALPHA, DEFAULT_BETA
    given: set[str] = set()
    for part in filter(None, (p.strip() for p in (match.group("params") or "").split(","))):
        pname, eq, value = part.partition("=")
        pname = pname.strip().lower()
        if eq and pname in given:
            raise ParameterError(f"parameters of {name!r}", f"each given once ({pname} is given "
                                 "twice)", match.group("params"))
        given.add(pname)
        if not eq or pname not in ("alpha", "beta") or (pname == "alpha" and not kind.alpha) \
                or (pname == "beta" and not kind.beta):
            allowed = [p for p, ok in (("alpha", kind.alpha), ("beta", kind.beta)) if ok]
            raise ParameterError(
                f"parameters of {name!r}",
                f"{' and '.join(f'{p}=<number>' for p in allowed) or 'none'} (set the relevance "
                "level and judged_only for the whole evaluation)", part)
        if pname == "alpha":
            alpha = _number(value.strip(), "alpha", name)
        else:
            beta = _number(value.strip(), "beta", name)
    cut = match.group("cut")
    if kind.cutoff:
        if cut is None:
            raise ParameterError(f"cutoff of {name!r}", f"@k with k >= 1 ({kind.label}@10)", None)
        if not (cut.isascii() and cut.isdigit()) or not 1 <= int(cut) <= MAX_CUTOFF:
            raise ParameterError(f"cutoff of {name!r}", f"a whole number from 1 to {MAX_CUTOFF}",
                                 cut)
        cutoff = int(cut)
    else:
        if cut is not None:
            raise ParameterError(f"cutoff of {name!r}", f"none ({kind.label} reads the whole ranking)", cut)
        cutoff = 0
    return DiversityMeasure(kind.code, cutoff, alpha, beta)


def parse_diversity_measures(measures: str | DiversityMeasure | Iterable[str | DiversityMeasure]) -> list[DiversityMeasure]:
    """Parse diversity measure names (see the module docstring); repeats are dropped.

    Examples
    --------
    >>> [m.name for m in parse_diversity_measures(["a-ndcg@10", "ERR_IA@20", "StRecall@5", "AP_IA"])]
    ['alpha-nDCG@10', 'ERR-IA@20', 'strec@5', 'MAP-IA']
    """
    items = [measures] if isinstance(measures, (str, DiversityMeasure)) else list(measures)
    out: list[DiversityMeasure] = []
    seen: set[str] = set()
    for item in items:
        m = item if isinstance(item, DiversityMeasure) else _parse_one(item)
        if m.name not in seen:
            seen.add(m.name)
            out.append(m)
    if not out:
        raise ParameterError("measures", "at least one diversity measure name", measures)
    return out


@dataclass
class _Subtopics:
    """Subtopic judgments indexed for the kernels (see :mod:`fasteval.kernels.diversity`)."""

    pq: Any  # PreparedQrels of (query, doc) with relevance = document number
    doc_sub_off: np.ndarray
    doc_sub: np.ndarray
    q_nsub: np.ndarray
    q_sub_base: np.ndarray
    nrel_sub: np.ndarray
    rel_docs: np.ndarray
    rel_off: np.ndarray


def _prepare_subtopics(table: pl.DataFrame, relevance_level: int) -> _Subtopics:
    from fasteval.prepare import prepare_qrels

    docs = table.select("query_id", "doc_id").unique(maintain_order=True).with_row_index("doc")
    docs = docs.with_columns(pl.col("doc").cast(pl.Int64))
    pq = prepare_qrels(docs.select("query_id", "doc_id", pl.col("doc").alias("relevance")))
    nq = len(pq.query_ids)
    codes = pl.DataFrame({"query_id": pq.query_ids, "code": np.arange(nq, dtype=np.int64)})
    rel = (
        table.filter(pl.col("relevance") >= relevance_level)
        .join(docs, on=["query_id", "doc_id"], how="left")
        .join(codes, on="query_id", how="left")
    )
    # subtopics numbered 0.. within each query in ndeval's order: by number (ndeval's subtopics
    # are natural numbers, "10" after "9"), then ids that are not numbers by their text. Gains
    # are summed over a document's subtopics in this order, and at alpha other than 0.5 the
    # rounding of those sums decides ties of the greedy ideal ranking.
    if rel.schema["subtopic"].is_integer():
        key = pl.col("subtopic")
    else:
        number = pl.col("subtopic").cast(pl.Utf8).str.strip_chars().cast(pl.Int64, strict=False)
        counts = rel.select(number.null_count().alias("nulls"), number.n_unique().alias("numbers"),
                            pl.col("subtopic").n_unique().alias("ids"))
        key = number if (counts["nulls"][0] == 0
                         and counts["numbers"][0] == counts["ids"][0]) else None
    if key is not None:  # one number per id: ranked by number
        rel = rel.with_columns((key.rank("dense").over("code") - 1).cast(pl.Int64).alias("sub"))
    else:  # ids that are not numbers, or two spellings of one ("1", "01"): then by text
        subs = (rel.select("code", "subtopic").unique()
                .with_columns(number.alias("_number"), pl.col("subtopic").cast(pl.Utf8).alias("_text"))
                .sort(["code", "_number", "_text"], nulls_last=True)
                .with_columns(pl.int_range(pl.len()).over("code").cast(pl.Int64).alias("sub"))
                .select("code", "subtopic", "sub"))
        rel = rel.join(subs, on=["code", "subtopic"], how="left")
    rel = rel.unique(["doc", "sub"]).sort(["doc", "sub"])
    n_docs = docs.height
    doc_arr = rel.get_column("doc").to_numpy()
    doc_sub_off = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(doc_arr, minlength=n_docs), out=doc_sub_off[1:])
    doc_sub = rel.get_column("sub").to_numpy().astype(np.int32)
    per_sub = rel.group_by(["code", "sub"]).agg(pl.len().alias("n")).sort(["code", "sub"])
    q_nsub = np.zeros(nq, dtype=np.int64)
    counts = per_sub.group_by("code").agg(pl.len().alias("s"))
    q_nsub[counts.get_column("code").to_numpy()] = counts.get_column("s").to_numpy()
    q_sub_base = np.zeros(nq, dtype=np.int64)
    q_sub_base[1:] = np.cumsum(q_nsub[:-1])
    nrel_sub = per_sub.get_column("n").to_numpy().astype(np.int64)
    # relevant documents of each query in ascending id order (byte-wise; integers by their
    # decimal spelling), the order in which the greedy ideal ranking breaks ties
    rel_docs_tab = (rel.select("code", "doc", pl.col("doc_id").cast(pl.Utf8).alias("key"))
                    .unique("doc").sort(["code", "key"]))
    rel_docs = rel_docs_tab.get_column("doc").to_numpy().astype(np.int64)
    rel_off = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(rel_docs_tab.get_column("code").to_numpy(), minlength=nq), out=rel_off[1:])
    return _Subtopics(pq, doc_sub_off, doc_sub, q_nsub, q_sub_base, nrel_sub, rel_docs, rel_off)


def _labelled(measures: str | DiversityMeasure | Iterable[str | DiversityMeasure],
              ) -> tuple[list[DiversityMeasure], list[str]]:
    """The measures and their labels (the names as asked, by the rules of
    :func:`fasteval.measures.parse_labelled`: ``a-ndcg@10`` stays ``a-ndcg@10``; two
    spellings of one measure are a :class:`ParameterError`).

    Examples
    --------
    >>> _labelled(["a-ndcg@10", "ERR_IA@20", "a-ndcg@10"])[1]
    ['a-ndcg@10', 'ERR_IA@20']
    """
    from fasteval.measures.parser import label_measures

    items = [measures] if isinstance(measures, (str, DiversityMeasure)) else list(measures)
    parse_diversity_measures(items)  # its checks and errors (at least one name)
    pairs = label_measures(items, lambda x: [x if isinstance(x, DiversityMeasure) else _parse_one(x)])
    return [m for _, m in pairs], [label for label, _ in pairs]


class DiversityEvaluator:
    """Prepare subtopic judgments once; evaluate many runs against them.

    Parameters
    ----------
    qrels
        Subtopic judgments: anything :func:`fasteval.read_subtopic_qrels` reads (a
        ``query_id, subtopic, doc_id, relevance`` table, a TREC Web-track file, a nested dict).
    measures
        Diversity measure names (see :mod:`fasteval.diversity`). The results name each as
        it was asked for (``a-ndcg@10`` stays ``a-ndcg@10``; a :class:`DiversityMeasure`
        given itself carries its canonical name); two spellings of one measure are a
        :class:`~fasteval.errors.ParameterError` (the rules of
        :func:`fasteval.measures.parse_labelled`).
    relevance_level : int, default 1
        A document is relevant to a subtopic when its judgment is at least this.
    max_docs : int, optional
        Keep the top ``max_docs`` of each ranking (ndeval ``-M``).
    complete : bool, default False
        Also score judged queries missing from a run, as 0 (ndeval ``-c``).
    judged_only : bool, default False
        Drop documents without a judgment for the query (ir_measures' ``judged_only``).
    tie_break : {"trec", "rank", "input"}, default "trec"
        How equal scores are ordered (see :func:`fasteval.prepare.prepare_run`).
    duplicates : {"error", "keep_best"}, default "error"
        A document twice in one ranking, or a (query, subtopic, document) triple twice in
        the judgments, is an error; or keep the row with the best score, and the highest
        judgment (a :class:`fasteval.errors.DataWarning` counts the judgments dropped).

    Examples
    --------
    >>> ev = DiversityEvaluator({"q1": {"1": {"a": 1}, "2": {"b": 1}}}, ["strec@1", "P-IA@2"])
    >>> ev.evaluate({"q1": {"a": 2.0, "b": 1.0}}, run_id="r").rows()
    [('r', 'q1', 'strec@1', 0.5), ('r', 'q1', 'P-IA@2', 0.5)]
    """

    def __init__(
        self,
        qrels: Any,
        measures: str | DiversityMeasure | Iterable[str | DiversityMeasure],
        *,
        relevance_level: int = 1,
        max_docs: int | None = None,
        complete: bool = False,
        judged_only: bool = False,
        tie_break: RankedTieBreak = "trec",
        duplicates: Duplicates = "error",
    ) -> None:
        from fasteval.io.subtopics import read_subtopic_qrels

        self.measures, self.labels = _labelled(measures)
        if isinstance(relevance_level, bool) or not isinstance(relevance_level, (int, np.integer)):
            raise ParameterError("relevance_level", "an integer", relevance_level)
        check_choice("tie_break", RankedTieBreak, tie_break,
                     f"one of {get_args(RankedTieBreak)} for diversity measures")
        self.relevance_level = int(relevance_level)
        self.max_docs = max_docs
        self.complete = check_flag("complete", complete)
        self.judged_only = check_flag("judged_only", judged_only)
        self.tie_break = tie_break
        self.duplicates = duplicates
        self.subtopics = _prepare_subtopics(read_subtopic_qrels(qrels, duplicates=duplicates),
                                            self.relevance_level)
        self._ideal: dict[tuple[float, int], tuple[np.ndarray, np.ndarray]] = {}
        from fasteval.prepare import Report

        self.report = Report()

    @property
    def measure_names(self) -> list[str]:
        """The names in the results' ``measure`` column, in output order: each as it was
        asked for (:attr:`labels`; ``m.name`` of :attr:`measures` is the canonical one)."""
        return list(self.labels)

    def _ideal_for(self, alpha: float, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """Greedy ideal gains of every query to ``depth`` ranks (0: all its relevant documents)."""
        key = (alpha, depth)
        if key not in self._ideal:
            st = self.subtopics
            n_rel = np.diff(st.rel_off)
            take = n_rel if depth == 0 else np.minimum(n_rel, depth)
            off = np.zeros(len(take) + 1, dtype=np.int64)
            np.cumsum(take, out=off[1:])
            out = np.zeros(int(off[-1]))
            K.ideal_gains(st.rel_docs, st.rel_off, st.doc_sub_off, st.doc_sub, st.q_nsub, float(alpha),
                          off, out, np.zeros(max(1, int(st.q_nsub.max(initial=0)))),
                          np.zeros(max(1, int(n_rel.max(initial=0))), dtype=np.uint8))
            self._ideal[key] = (off, out)
        return self._ideal[key]

    def score(self, batch: Any) -> np.ndarray:
        """Values ``[n_queries, n_measures]`` of a run prepared against :attr:`subtopics`."""
        st = self.subtopics
        values = np.zeros((len(batch.qidx), len(self.measures)))
        groups: dict[tuple[float, float], list[int]] = {}
        for j, m in enumerate(self.measures):
            kind = _BY_CODE[m.code]
            key = (m.alpha if kind.alpha else DEFAULT_ALPHA, m.beta if kind.beta else DEFAULT_BETA)
            groups.setdefault(key, []).append(j)
        for (alpha, beta), cols in groups.items():
            kinds = np.array([self.measures[j].code for j in cols], dtype=np.int32)
            cuts = np.array([self.measures[j].cutoff for j in cols], dtype=np.int64)
            if any(int(k) in K.NEEDS_IDEAL for k in kinds):
                depth = 0 if K.NNRBP in kinds else int(cuts.max())
                ideal_off, ideal = self._ideal_for(alpha, depth)
            else:
                ideal_off, ideal = np.zeros(len(st.q_nsub) + 1, dtype=np.int64), np.zeros(0)
            out = np.zeros((len(batch.qidx), len(cols)))
            K.score_diversity(batch.labels, batch.offsets, batch.qidx, batch.present, st.doc_sub_off,
                              st.doc_sub, st.q_nsub, st.q_sub_base, st.nrel_sub, ideal_off, ideal,
                              kinds, cuts, alpha, beta, out, K.default_threads())
            values[:, cols] = out
        return values

    def evaluate(self, run: Any, *, run_id: str | None = None) -> pl.DataFrame:
        """Per-query results ``(run_id, query_id, measure, value)`` for one or many runs
        (a table with an optional ``run_id`` column, anything :func:`fasteval.read_run`
        reads, or a mapping ``{name: run}``)."""
        from fasteval.evaluation import long_frame, merge_reports, relocated, split_runs
        from fasteval.prepare import prepare_run

        frames = []
        reports = []
        pq = self.subtopics.pq
        for name, table, checked, source, locate in split_runs(run, run_id):
            try:
                batch = prepare_run(pq, table, tie_break=self.tie_break, max_docs=self.max_docs,
                                    judged_only=self.judged_only, complete=self.complete,
                                    duplicates=self.duplicates, check_scores=not checked,
                                    source=source)
            except InputError as exc:
                raise relocated(exc, source, locate) from None
            frames.append(long_frame(pq, batch, self.measure_names, self.score(batch), name))
            reports.append(batch.report)
        if not frames:
            raise InputError("no runs to evaluate", source="run")
        self.report = merge_reports(reports)
        return pl.concat(frames, how="vertical") if len(frames) > 1 else frames[0]


def evaluate_diversity(
    qrels: Any,
    run: Any,
    measures: str | DiversityMeasure | Iterable[str | DiversityMeasure],
    *,
    run_id: str | None = None,
    relevance_level: int = 1,
    max_docs: int | None = None,
    complete: bool = False,
    judged_only: bool = False,
    tie_break: RankedTieBreak = "trec",
    duplicates: Duplicates = "error",
) -> pl.DataFrame:
    """Evaluate runs with diversity measures over subtopic judgments; long per-query results.

    Parameters
    ----------
    qrels
        Subtopic judgments (``query_id, subtopic, doc_id, relevance``; see
        :func:`fasteval.read_subtopic_qrels`).
    run
        As for :func:`fasteval.evaluate`.
    measures
        ``alpha-nDCG@k``, ``alpha-DCG@k``, ``ERR-IA@k``, ``nERR-IA@k``, ``NRBP``, ``nNRBP``,
        ``P-IA@k``, ``strec@k``, ``MAP-IA`` (see :mod:`fasteval.diversity`).
    run_id : str, optional
        Name for a single run without a ``run_id`` column (default ``"run"``).
    relevance_level, max_docs, complete, judged_only, tie_break, duplicates
        See :class:`DiversityEvaluator`.

    Returns
    -------
    polars.DataFrame
        ``run_id``, ``query_id``, ``measure``, ``value``; :func:`fasteval.aggregate` gives
        the means.

    Examples
    --------
    >>> import polars as pl
    >>> qrels = pl.DataFrame({"query_id": [1, 1, 1], "subtopic": [1, 2, 2],
    ...                       "doc_id": ["a", "a", "b"], "relevance": [1, 1, 1]})
    >>> run = pl.DataFrame({"query_id": [1, 1], "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    >>> evaluate_diversity(qrels, run, ["alpha-nDCG@2", "ERR-IA@2"])["value"].round(4).to_list()
    [0.8406, 0.7]
    """
    return DiversityEvaluator(
        qrels, measures, relevance_level=relevance_level, max_docs=max_docs, complete=complete,
        judged_only=judged_only, tie_break=tie_break, duplicates=duplicates,
    ).evaluate(run, run_id=run_id)
