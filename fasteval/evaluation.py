"""Evaluate runs: plan measures into kernel slots, run the kernel, return tables.

Examples
--------
>>> import fasteval
>>> qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}}
>>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.8}}
>>> res = fasteval.evaluate(qrels, run, ["P@2", "ndcg", "map"])
>>> res.select("measure", "value").rows()
[('P@2', 1.0), ('ndcg', 1.0), ('map', 1.0)]

Ties: ``d2`` and ``d3`` score 0.8; trec_eval's rule (doc id descending) ranks ``d3``
first. ``tie_break="input"`` keeps the order given instead:

>>> fasteval.evaluate(qrels, run, ["P@2"], tie_break="input")["value"].to_list()
[0.5]

``tie_break="expected"`` reports each measure's mean over both orders of the tie (see
:mod:`fasteval.kernels.expected`): P@2 is (1 + 1/2) / 2, AP (1 + (1 + 2/3) / 2) / 2:

>>> fasteval.evaluate(qrels, run, ["P@2", "map"], tie_break="expected")["value"].round(4).to_list()
[0.75, 0.9167]
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import numba
import numpy as np
import polars as pl

from fasteval.errors import DataWarning, InputError, ParameterError, check_flag
from fasteval.kernels.ranking import score_queries
from fasteval.measures import Measure, parse_labelled, parse_measures
from fasteval.measures.aggregate import aggregate_long
from fasteval.measures.plan import needs, plan_slots
from fasteval.measures.registry import BY_KEY, INT_CUTS, LENGTH, NEEDS_LEVELS, NEEDS_MAX_GRADE
from fasteval.options import Compat, Duplicates, TieBreak, check_choice
from fasteval.prepare import (
    Batch,
    PreparedQrels,
    Report,
    check_run_table,
    placeholder_rankings,
    prepare_qrels,
    prepare_run,
)

__all__ = ["Evaluator", "aggregate", "check_measure_values", "plan_slots", "score_batch"]

RESULT_COLUMNS = ("run_id", "query_id", "measure", "value")


Locate = Callable[[int], dict]
"""A row of a table to ``InputError`` location keywords in the input it came from."""


def _same_row(row: int) -> dict:
    return {"row": row}


class RunPart(NamedTuple):
    """One run to evaluate: its name (the ``run_id`` of its results), its table, whether
    its scores are known to be numbers, and where its rows came from (``source``, the
    name errors give: a file, a mapping key or ``"run"``; ``locate``, a row of ``table``
    to its line in that file, or its row in the table given)."""

    name: str
    table: pl.DataFrame
    checked: bool
    source: str = "run"
    locate: Locate = _same_row


def relocated(exc: InputError, source: str, locate: Locate) -> InputError:
    """``exc`` (raised on a table read from ``source``, naming a row of that table) naming
    the file's line or the input's row instead; other errors unchanged."""
    if exc.row is None or exc.line is not None or locate is _same_row:
        return exc
    return exc.at(**{"source": source, "row": None, **locate(exc.row)})


def load_qrels(qrels: Any) -> pl.DataFrame:
    return _load_qrels_located(qrels)[0]


def _load_qrels_located(qrels: Any) -> tuple[pl.DataFrame, str, Locate]:
    """The qrels as a table, the name errors give and the locator of its rows."""
    if isinstance(qrels, pl.DataFrame) and {"query_id", "doc_id", "relevance"} <= set(
        qrels.columns
    ) and all(qrels.schema[c] in (pl.String, pl.Int64) for c in ("query_id", "doc_id")):
        # other id types go through read_qrels (Int32 or UInt8 ids become Int64, as there,
        # so that the results' query_id is Int64 whichever table held the qrels)
        return qrels, "qrels", _same_row
    from fasteval.io.readers import is_path, load_source, read_qrels

    # prepare_qrels finds repeated judgments itself (from the sorted hashes)
    if is_path(qrels) or callable(getattr(qrels, "read", None)):
        table, where, name = load_source(qrels, "qrels", None, {})
        return table, name, where
    return read_qrels(qrels, duplicates="ignore"), "qrels", _same_row


def load_run(run: Any, name: str) -> RunPart:
    """The run as a :class:`RunPart`; ``checked`` when :func:`fasteval.read_run` made it
    (its scores are then known to be numbers: :func:`prepare_run` need not look for NaN
    again). A file's rows are located by their lines."""
    if isinstance(run, pl.DataFrame) and {"query_id", "doc_id", "score"} <= set(run.columns) \
            and plain_types(run.schema) and canonical_names(run.columns):
        if run.height == 0:  # as read_run says of any other empty table
            raise InputError("the run table is empty (no rows)", source=name)
        return RunPart(name, run, False, name)
    from fasteval.io.readers import is_path, load_source, read_run

    # duplicates are found (and reported, or resolved with duplicates="keep_best") by
    # prepare_run on hashed ids, cheaper than a second check in the reader
    if is_path(run) or callable(getattr(run, "read", None)):
        table, where, source = load_source(run, "run", None, {})
        return RunPart(name, table, True, source, where)
    return RunPart(name, read_run(run, duplicates="ignore"), True, name)


def canonical_names(columns: list[str]) -> bool:
    """Whether read_run would take every column it knows by its canonical name: a table
    whose run name is in ``runid`` (or ``system``...) or whose rank is in ``position``
    goes through read_run, which renames them (taken as it is, its runs would be one)."""
    from fasteval.io._common import resolve_columns

    found = resolve_columns(columns, "run", {}, source="run")
    return all(name == canonical for canonical, name in found.items())


def plain_types(schema: pl.Schema) -> bool:
    """Text or integer ids and numeric scores: a table prepare_run takes as it is (any other
    goes through read_run, which converts what it can and names the row of what it cannot)."""
    ids = all(schema[c] == pl.String or schema[c].is_integer() for c in ("query_id", "doc_id"))
    return ids and schema["score"].is_numeric()


def score_batch(
    pq: PreparedQrels,
    batch: Batch,
    measures: list[Measure],
    *,
    relevance_level: int = 1,
    compat: int = 10,
    num_docs: float = 0.0,
    trec_eval_names: bool = False,
    parallel: bool | None = None,
) -> np.ndarray:
    """Values ``[n_queries, n_measures]`` for a prepared batch (one kernel call).

    Queries filled by ``complete`` (``batch.present`` False) score as trec_eval scores
    them. ``compat=10``: against its one-document placeholder ranking (see
    :func:`fasteval.prepare.placeholder_rankings`), then ``num_ret``, ``utility``,
    ``unj``, ``rbp_resid`` and the C/W/L residuals (``residual=True``) are set to 0.
    ``compat=9``: 0 for every measure (9.0.8 does not evaluate them; they count as 0 in
    the means), except ``num_q`` (1) and ``num_rel`` (their judgments).

    A batch prepared with ``tie_break="expected"`` (``batch.tie_starts`` set) is scored by
    :mod:`fasteval.kernels.expected`: each measure's mean over every ordering of its ties.

    ``trec_eval_names=True`` reproduces a quirk of the trec_eval 10 command: it zeroes
    ``utility`` only where the measure is named exactly ``utility``, so a parameterised
    ``utility.a,b,c,d`` keeps the placeholder's value (``b`` for its one nonrelevant
    document, plus the ``c``/``d`` terms). ``fasteval trec-eval`` passes it; the API
    gives the intended 0.

    ``parallel``: the variant of the score pass (see
    :func:`fasteval.kernels.ranking.score_queries`; None: by the batch's size).
    """
    n = len(batch.qidx)
    out = np.empty((n, len(measures)), dtype=np.float64)
    gstart = pq.q_start[batch.qidx]
    gend = pq.g_end[batch.qidx]
    levels = pq.judged_levels() if needs(measures) & {NEEDS_LEVELS, NEEDS_MAX_GRADE} else ()
    if batch.tie_starts is not None:  # tie_break="expected"
        from fasteval.kernels import expected

        eplan = expected.plan_expected(measures, relevance_level, levels)
        if len(measures) and n:
            expected.score_expected(batch.labels, batch.offsets, batch.tie_starts, pq.grades,
                                    gstart, gend, eplan, out, numba.get_num_threads())
    else:
        plan = plan_slots(measures, relevance_level, levels, compat=compat,
                          num_docs=float(num_docs))
        if len(measures) and n:
            score_queries(batch.labels, batch.offsets, pq.grades, gstart, gend, plan, out,
                          parallel=parallel)
    if not batch.present.all():
        _score_filled(out, ~batch.present, measures, compat, trec_eval_names)
    return out


_PLACEHOLDER_CLEARED = ("num_ret", "utility", "unj", "rbp_resid")
"""Families whose placeholder values trec_eval 10 sets to 0 for a filled query. The
C/W/L residuals (``residual=True``) are set to 0 too, as trec_eval clears its own
residual (``rbp_resid``): every measure of a filled query is 0."""


def _score_filled(out: np.ndarray, missing: np.ndarray, measures: list[Measure], compat: int,
                  trec_eval_names: bool) -> None:
    """Values of the queries filled by ``complete`` (see :func:`score_batch`)."""
    for j, meas in enumerate(measures):
        if compat == 9:
            if meas.family not in ("num_q", "num_rel"):
                out[missing, j] = 0.0
        elif meas.family in _PLACEHOLDER_CLEARED or dict(meas.options).get("residual"):
            if trec_eval_names and meas.family == "utility" and meas.base_name != "utility":
                continue
            out[missing, j] = 0.0


_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1


def _check_options(relevance_level: int, compat: int, num_docs: int = 0) -> None:
    if (not isinstance(relevance_level, (int, np.integer)) or isinstance(relevance_level, bool)
            or not 0 <= relevance_level <= _INT32_MAX):
        raise ParameterError("relevance_level", f"an integer from 0 to {_INT32_MAX}",
                             relevance_level)
    if (not isinstance(num_docs, (int, np.integer)) or isinstance(num_docs, (bool, np.bool_))
            or not 0 <= num_docs <= _INT64_MAX):
        raise ParameterError("num_docs", f"an integer from 0 to {_INT64_MAX} (the collection "
                             "size)", num_docs)
    check_choice("compat", Compat, compat)


def check_measure_values(measures: list[Measure]) -> None:
    """Refuse parameter values that no kernel can use, before any work.

    Cutoffs must fit in 64 bits, ``rel=`` levels in the 32 bits of grades, a family's
    number must lie in the range its registry row declares (``set_F``'s beta >= 0,
    ``rbp``'s persistence p strictly between 0 and 1); gains and vector parameters must be
    finite.

    Raises
    ------
    ParameterError
        Naming the measure and the constraint.

    Examples
    --------
    >>> from fasteval.measures import parse_measures
    >>> check_measure_values(parse_measures(["set_F(beta=-1)"]))
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: set_F's beta must be a number >= 0, got -1.0
    """
    for m in measures:
        if m.cutoff is not None and not 0 < m.cutoff <= _INT64_MAX:
            raise ParameterError(f"{m.family}'s cutoff", f"an integer from 1 to {_INT64_MAX}",
                                 m.cutoff)
        if m.rel is not None and not 0 <= m.rel <= _INT32_MAX:
            raise ParameterError(f"{m.family}'s rel", f"an integer from 0 to {_INT32_MAX}",
                                 m.rel)
        if m.param is not None:
            p = float(m.param)
            if not np.isfinite(p):
                raise ParameterError(f"{m.family}'s parameter", "a finite number", m.param)
            spec = BY_KEY[m.family].param
            if spec is not None:
                spec.check(m.family, m.param)
        m.check_options()
        values = list(m.vector or ()) + [g for _, g in (m.gains or ())]
        if not all(np.isfinite(float(v)) for v in values):
            raise ParameterError(f"{m.name}'s parameters", "finite numbers", values)
        if any(not -_INT64_MAX <= lv <= _INT64_MAX for lv, _ in (m.gains or ())):
            raise ParameterError(f"{m.name}'s gain levels", "64-bit integers",
                                 [lv for lv, _ in m.gains or ()])
        if m.cutoff is None and BY_KEY[m.family].params == INT_CUTS:  # Measure("P")
            raise ParameterError(f"{m.family}'s cutoff", f"an integer from 1 to {_INT64_MAX}",
                                 None)


_MEASURE_SETS = ("all_trec", "official")
"""Names of trec_eval's measure sets (``-m all_trec``), which the parser expands."""


def _named_text_measures(measures: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """The text-only measures (``relstring``) that ``measures`` names itself, leaving out
    those that only a measure set (``all_trec``) brings in.

    Examples
    --------
    >>> [m.name for m in _named_text_measures(["all_trec", "relstring.5"])]
    ['relstring_5']
    >>> _named_text_measures("all_trec")
    []
    """
    items = [measures] if isinstance(measures, (str, Measure)) else list(measures)
    named = [x for x in items if not (isinstance(x, str) and x.strip() in _MEASURE_SETS)]
    if not named:
        return []
    return [m for m in parse_measures(named) if BY_KEY[m.family].params == LENGTH]


class Evaluator:
    """Prepare qrels once; evaluate many runs against them.

    Parameters
    ----------
    qrels : table, path or dict
        Anything :func:`fasteval.read_qrels` reads, or qrels prepared already
        (a :class:`fasteval.prepare.PreparedQrels`).
    measures : str or list of str / Measure
        Measure names in any dialect (``"ndcg@10"``, ``"ndcg_cut_10"``, ``"nDCG@10"``).
        The results name each measure as it was asked for (:attr:`labels`): ``ndcg@10``
        stays ``ndcg@10`` (stripped; blanks inside written as one space); a
        :class:`~fasteval.measures.Measure`, trec_eval's ``name.params`` lists (``P.10``,
        ``P.5,10``) and names that give several (``P``, ``official``, ``all_trec``) carry
        their canonical names, as trec_eval prints them. Two
        names of one measure (``ndcg@10`` and ``ndcg_cut_10``) are a
        :class:`~fasteval.errors.ParameterError`; see
        :func:`fasteval.measures.parse_labelled` for the rules.
    relevance_level : int, default 1
        Minimum grade counted as relevant (trec_eval ``-l``). The graded measures (nDCG,
        DCG, ERR, ``rbp``, the C/W/L measures) take every grade as gain and ignore it;
        a measure's own ``rel=k`` (ranx's ``-lk``) gives gain 0 to grades below k.
    max_docs : int, optional
        Keep the top ``max_docs`` per query after sorting (trec_eval ``-M``).
    complete : bool, default False
        Also score qrels queries missing from a run, so they count in the means (trec_eval
        ``-c``). As in trec_eval 10, each is ranked as one document nobody judged, then
        ``num_ret``, ``utility``, ``unj`` and ``rbp_resid`` (and the C/W/L residuals,
        ``residual=True``) are set to 0: every measure is 0 (``num_rel`` keeps the
        judgments). With ``compat=9`` they are 0 for every
        measure, as 9.0.8 divides by the number of qrels queries without evaluating them.
        Without ``complete`` they are left out (and counted in :attr:`report`).
    judged_only : bool, default False
        Drop unjudged documents from the rankings (trec_eval ``-J``), after ``max_docs``.
        A ranking left empty gets trec_eval's ``0 / 0`` for ``iprec_at_recall`` and
        ``11pt_avg`` (NaN, and so a NaN mean); with ``complete``, so does every filled query
        (``-J`` drops the placeholder document too).
    tie_break : {"trec", "rank", "input", "expected"}, default "trec"
        How equal scores are ordered; see :func:`fasteval.prepare.prepare_run`.
        ``"expected"``: each measure's mean over every ordering of tied documents
        (:mod:`fasteval.kernels.expected`); measures without an expected value are refused,
        and :attr:`report` counts the queries with ties (``tied_queries``) and those tied
        between documents of different grades (``ties_mattered``; unjudged counts as 0).
    duplicates : {"error", "keep_best"}, default "error"
        A document twice in one query's ranking is an error, or keep its best row.
    num_docs : int, default 0
        Collection size for ``utility``'s fourth coefficient (trec_eval ``-N``).
    compat : {10, 9}, default 10
        trec_eval version to match. 9 (9.0.8, as pytrec_eval): its recall-point rounding,
        scores held as single-precision floats (``1.00000001`` and ``1.0`` tie and are
        ordered by doc id; 10.0 reads doubles), and ``complete`` queries scored 0.

    Attributes
    ----------
    measures : list of Measure
        The measures scored, in output order (canonical names: ``m.name``).
    labels : list of str
        The name of each in the results' ``measure`` column (also :attr:`measure_names`).
    report : fasteval.prepare.Report
        What the last :meth:`evaluate` did with the queries and rows of its runs (summed
        over them); empty after a call that raised. One evaluator may serve several
        threads at once (the results are right), but ``report`` then holds whichever
        call finished last.

    Examples
    --------
    >>> import fasteval
    >>> ev = fasteval.Evaluator({"q1": {"a": 1, "b": 0}}, ["P@1", "recip_rank"])
    >>> ev.evaluate({"q1": {"a": 0.1, "b": 0.2}}, run_id="r1").rows()
    [('r1', 'q1', 'P@1', 0.0), ('r1', 'q1', 'recip_rank', 0.5)]
    >>> ev.labels, [m.name for m in ev.measures]
    (['P@1', 'recip_rank'], ['P_1', 'recip_rank'])
    """

    def __init__(
        self,
        qrels: Any,
        measures: str | Measure | Iterable[str | Measure],
        *,
        relevance_level: int = 1,
        max_docs: int | None = None,
        complete: bool = False,
        judged_only: bool = False,
        tie_break: TieBreak = "trec",
        duplicates: Duplicates = "error",
        num_docs: int = 0,
        compat: Compat = 10,
    ) -> None:
        _check_options(relevance_level, compat, num_docs)
        if (isinstance(measures, Iterable)
                and not isinstance(measures, (str, bytes, Measure, Mapping, list, tuple))):
            measures = list(measures)  # an iterator, read twice: here and by _named_text_measures
        pairs = parse_labelled(measures)
        parsed = [m for _, m in pairs]
        if not parsed:
            raise ParameterError("measures", "at least one measure name", measures)
        check_measure_values(parsed)
        if tie_break == "expected":
            from fasteval.kernels.expected import check_measures

            check_measures(parsed)
        text_only = [m.name for m in _named_text_measures(measures)]
        if text_only:
            raise ParameterError(
                "measures", "numeric measures (relstring is printed by `fasteval trec-eval`)",
                text_only,
            )
        # a measure set (all_trec) gives its numeric members: its relstring is trec-eval's
        pairs = [(label, m) for label, m in pairs if BY_KEY[m.family].params != LENGTH]
        self.measures: list[Measure] = [m for _, m in pairs]
        self.labels: list[str] = [label for label, _ in pairs]
        self.relevance_level = int(relevance_level)
        self.max_docs = max_docs
        self.complete = check_flag("complete", complete)
        self.judged_only = check_flag("judged_only", judged_only)
        self.tie_break = tie_break
        self.duplicates = duplicates
        self.num_docs = num_docs
        self.compat = compat
        if isinstance(qrels, PreparedQrels):
            self.qrels = qrels
        else:
            table, source, locate = _load_qrels_located(qrels)
            try:
                self.qrels = prepare_qrels(table)
            except InputError as exc:
                raise relocated(exc, source, locate) from None
        self.report: Report = Report()

    @property
    def measure_names(self) -> list[str]:
        """The names in the results' ``measure`` column, in output order: each measure
        labelled as it was asked for (:attr:`labels`; ``[m.name for m in ev.measures]``
        gives the canonical names)."""
        return list(self.labels)

    def prepare(self, run: pl.DataFrame, *, complete: bool | None = None,
                check_scores: bool = True, source: str = "run") -> Batch:
        """Prepare one run (a table without ``run_id`` partitions); ``check_scores`` and
        ``source`` (the name its errors give): see :func:`fasteval.prepare.prepare_run`."""
        if self.compat == 9 and "score" in run.columns and self.tie_break in ("trec", "expected"):
            # trec_eval 9.0.8 (and pytrec_eval, built from it) keeps scores as C floats:
            # scores equal in single precision tie, and the doc id decides
            run = run.with_columns(pl.col("score").cast(pl.Float32).cast(pl.Float64))
        return prepare_run(
            self.qrels,
            run,
            tie_break=self.tie_break,
            max_docs=self.max_docs,
            judged_only=self.judged_only,
            complete=self.complete if complete is None else check_flag("complete", complete),
            duplicates=self.duplicates,
            source=source,
            check_scores=check_scores,
        )

    def score(self, batch: Batch, *, trec_eval_names: bool = False) -> np.ndarray:
        """Raw values ``[n_queries, n_measures]`` of a prepared batch
        (``trec_eval_names``: see :func:`score_batch`)."""
        return score_batch(
            self.qrels, batch, self.measures, relevance_level=self.relevance_level,
            compat=self.compat, num_docs=self.num_docs, trec_eval_names=trec_eval_names,
        )

    def evaluate(
        self, run: Any, *, run_id: str | None = None, complete: bool | None = None
    ) -> pl.DataFrame:
        """Per-query results ``(run_id, query_id, measure, value)`` for one or many runs.

        ``run`` may be a table (with an optional ``run_id`` column), anything
        :func:`fasteval.read_run` reads, or a mapping ``{name: run}``.
        """
        self.report = Report()
        return self.evaluate_parts(split_runs(run, run_id), complete)

    def evaluate_parts(self, runs: list[RunPart], complete: bool | None) -> pl.DataFrame:
        """:meth:`evaluate` of runs already split and loaded (:func:`split_runs`); a warning
        it gives names the line that called its caller."""
        self.report = Report()  # a call that raises leaves no counts of an earlier one
        frames = []
        reports = []
        for name, table, checked, source, locate in runs:
            try:
                batch = self.prepare(table, complete=complete, check_scores=not checked,
                                     source=source)
            except InputError as exc:
                raise relocated(exc, source, locate) from None
            frames.append(long_frame(self.qrels, batch, self.measure_names, self.score(batch), name))
            reports.append(batch.report)
            if batch.report.run_queries and not batch.report.evaluated:
                warnings.warn(DataWarning(
                    f"run {name!r}: "
                    + ("its one query is not" if batch.report.run_queries == 1 else
                       f"none of its {batch.report.run_queries} queries is")
                    + " in the qrels, so it has no results (complete=True scores the qrels "
                    "queries as empty rankings)"), stacklevel=3)
        self.report = merge_reports(reports)
        if not frames:
            raise InputError("no runs to evaluate", source="run")
        return pl.concat(frames, how="vertical") if len(frames) > 1 else frames[0]

    def fill_missing(self, seen_query_ids: Iterable[Any], run_id: str) -> pl.DataFrame:
        """Rows for qrels queries never seen in a chunked job, scored as with ``complete``."""
        seen = pl.Series(list(seen_query_ids))
        if len(seen) and seen.dtype != self.qrels.query_ids.dtype:
            seen = seen.cast(self.qrels.query_ids.dtype, strict=False)
        missing = ~self.qrels.query_ids.is_in(seen.implode())
        qidx = np.flatnonzero(missing.to_numpy()).astype(np.int64)
        labels = np.zeros(0, dtype=np.int32)
        offsets = np.zeros(len(qidx) + 1, dtype=np.int64)
        if not self.judged_only:  # trec_eval 10's placeholder document (-J drops it)
            labels, offsets = placeholder_rankings(labels, offsets, np.ones(len(qidx), bool))
        batch = Batch(
            labels=labels,
            offsets=offsets,
            qidx=qidx,
            present=np.zeros(len(qidx), dtype=bool),
            report=Report(evaluated=len(qidx), filled=len(qidx), missing_from_run=len(qidx)),
        )
        return long_frame(self.qrels, batch, self.measure_names, self.score(batch), run_id)


def long_frame(qrels: Any, batch: Any, names: list[str], values: np.ndarray,
               run_id: str) -> pl.DataFrame:
    """Per-query results ``run_id, query_id, measure, value`` of ``values[n_queries,
    n_measures]``, the scores of ``batch`` (prepared against ``qrels``) under ``names``."""
    n, m = values.shape
    return pl.DataFrame({
        "run_id": pl.repeat(run_id, n * m, dtype=pl.Utf8, eager=True),
        "query_id": qrels.query_ids.gather(np.repeat(batch.qidx, m)),
        "measure": pl.Series("measure", names, dtype=pl.Utf8).gather(np.tile(np.arange(m), n)),
        "value": values.reshape(-1),
    })


def split_runs(run: Any, run_id: str | None) -> list[RunPart]:
    """A :class:`RunPart` for each run given; ``checked``: its scores are known to be
    numbers (read by read_run, or checked here before the split, where the rows still have
    their numbers in the table given); the rows of a part of a table with a ``run_id``
    column are located in that table."""
    if is_runs_mapping(run):
        names = [str(k) for k in run]
        if len(set(names)) < len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise InputError(f"run name(s) {twice} given twice (keys equal as text)",
                             source="run")
        parts = [load_run(v, name) for name, v in zip(names, run.values(), strict=True)]
        for part in parts:
            check_one_run_per_key(part.table, part.name)
        return parts
    whole = load_run(run, run_id or "run")
    table = whole.table
    check_run_id_argument(table, run_id)
    if "run_id" in table.columns and run_id is None:
        # checked on the whole table: a row number in a part would point at the wrong row
        check_run_table(table, whole.source, scores=not whole.checked)
        parts = table.partition_by("run_id", maintain_order=True, as_dict=True)
        return [RunPart(str(k[0]), v, True, whole.source, _part_rows(table, k[0], whole.locate))
                for k, v in parts.items()]
    return [whole]


def check_run_id_argument(table: pl.DataFrame, run_id: str | None) -> None:
    """Refuse ``run_id=`` for a table whose ``run_id`` column names several runs: one name
    for all would merge their rankings into one run (one run in the column is renamed)."""
    several = _several_runs(table) if run_id is not None else None
    if several:
        raise ParameterError(
            "run_id", f"None for a table whose run_id column names {several}, each scored "
            "under its own name", run_id)


def _several_runs(table: pl.DataFrame) -> str | None:
    """``"N runs (a, b, c, ...)"`` when ``table``'s ``run_id`` column names several runs."""
    if "run_id" not in table.columns:
        return None
    names = table.get_column("run_id").drop_nulls().unique(maintain_order=True)
    if len(names) < 2:
        return None
    shown = names.head(3).cast(pl.Utf8).to_list() + (["..."] if len(names) > 3 else [])
    return f"{len(names)} runs ({', '.join(shown)})"


def check_one_run_per_key(table: pl.DataFrame, key: str) -> None:
    """Refuse a table under key ``key`` of a ``{name: run}`` mapping whose ``run_id`` column
    names several runs: scored under the one name, their rankings would be merged into one
    run (a column naming one run is scored under the key).

    Examples
    --------
    >>> check_one_run_per_key(pl.DataFrame({"run_id": ["a", "b"]}), "bm25")
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: run must be one run per key of a {name: run} mapping \
(give a table with several runs itself, not under a key), got 'bm25': a table whose run_id \
column names 2 runs (a, b)
    """
    several = _several_runs(table)
    if several:
        raise ParameterError(
            "run", "one run per key of a {name: run} mapping (give a table with several runs "
            "itself, not under a key)", _Shown(f"{key!r}: a table whose run_id column names {several}"))


class _Shown(str):
    """Text shown as it is in a :class:`ParameterError` (its repr is itself)."""

    def __repr__(self) -> str:
        return str(self)


def is_runs_mapping(run: Any) -> bool:
    """A mapping ``{name: run}`` (not one ``{qid: {docid: score}}`` run)."""
    return isinstance(run, Mapping) and bool(run) and all(
        isinstance(v, (pl.DataFrame, str, os.PathLike)) or hasattr(v, "columns") or _is_run_dict(v)
        or _is_ranx(v) or callable(getattr(v, "read", None)) for v in run.values()
    ) and not _is_run_dict(run)


def _part_rows(table: pl.DataFrame, key: Any, locate: Locate) -> Locate:
    """The locator of the rows of ``table`` whose ``run_id`` is ``key`` (found when an
    error needs them)."""
    def part(row: int) -> dict:
        rows = table.get_column("run_id").eq_missing(key).arg_true()
        return locate(int(rows[row]))
    return part


def _is_run_dict(d: Any) -> bool:
    """A pytrec_eval-style {qid: {docid: score}} mapping."""
    if not isinstance(d, Mapping) or not d:
        return False
    first = next(iter(d.values()))
    return isinstance(first, Mapping) and all(
        isinstance(v, (int, float, np.number)) for v in list(first.values())[:3]
    )


def _is_ranx(obj: Any) -> bool:
    """A ranx ``Run`` (read by :func:`fasteval.read_run` through its ``to_dict``)."""
    return type(obj).__module__.split(".")[0] == "ranx" and hasattr(obj, "to_dict")


def merge_reports(reports: list[Report]) -> Report:
    total = Report()
    for r in reports:
        for f in total.__dataclass_fields__:
            setattr(total, f, getattr(total, f) + getattr(r, f))
    return total


def aggregate(results: pl.DataFrame) -> pl.DataFrame:
    """Summarise per-query results per run and measure, as trec_eval does.

    ``results`` is :func:`evaluate`'s table (also as a polars LazyFrame, a pandas
    DataFrame or a pyarrow Table).

    The mean over queries, except counts (``num_ret``, ``num_rel``, ``num_rel_ret``,
    ``num_nonrel_judged_ret``, ``num_q``), which are summed, and ``gm_map`` /
    ``gm_bpref``, which use the geometric mean of ``max(value, 1e-5)``. A ``measure`` may
    be named in any dialect (the names :func:`evaluate` was asked for): each is aggregated
    as the measure it names, under that name.

    Examples
    --------
    >>> import polars as pl
    >>> res = pl.DataFrame({"run_id": ["r"] * 4, "query_id": ["a", "b"] * 2,
    ...     "measure": ["map", "map", "num_ret", "num_ret"], "value": [0.5, 1.0, 10.0, 20.0]})
    >>> aggregate(res).rows()
    [('r', 'map', 0.75), ('r', 'num_ret', 30.0)]
    """
    if not isinstance(results, pl.DataFrame):
        from fasteval.io.tables import frame_from_object

        table = frame_from_object(results, "results")
        if table is None:
            raise ParameterError(
                "results", "a table of per-query results (polars, pandas or pyarrow)",
                type(results).__name__,
            )
        results = table.collect() if isinstance(table, pl.LazyFrame) else table
    missing = [c for c in RESULT_COLUMNS if c not in results.columns]
    if missing:
        raise InputError(
            f"results table lacks column(s) {', '.join(missing)}", source="results"
        )
    if results.schema["value"] != pl.Float64:
        if not results.schema["value"].is_numeric():
            raise InputError(f"results column value holds {results.schema['value']}; expected "
                             "numbers", source="results", column="value")
        # summed and averaged in double, as trec_eval does (Float32 sums were Float32)
        results = results.with_columns(pl.col("value").cast(pl.Float64))
    return aggregate_long(results)
