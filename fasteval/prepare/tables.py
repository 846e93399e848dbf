"""Input tables: the one check per kind of input (:func:`check_run_table`,
:func:`check_qrels_table`) and the :class:`Report` of what happened to the user's queries
and rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

import polars as pl

from fasteval.errors import InputError
from fasteval.options import Duplicates, TieBreak

TIE_BREAKS = get_args(TieBreak)
DUPLICATES = get_args(Duplicates)


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
    tied_queries : int
        With ``tie_break="expected"``: queries with a tie (documents of equal score).
    ties_mattered : int
        With ``tie_break="expected"``: queries with a tie between documents of different
        grades (a relevant and a non-relevant one, or two grades; unjudged counts as 0),
        whose values of P, recall, RR, AP or nDCG depend on how it is broken.
    """

    run_queries: int = 0
    evaluated: int = 0
    dropped_not_in_qrels: int = 0
    missing_from_run: int = 0
    filled: int = 0
    deduplicated_rows: int = 0
    tied_queries: int = 0
    ties_mattered: int = 0

    def summary(self) -> str:
        """One line for the CLI."""
        from fasteval._words import counted

        parts = [f"{counted(self.evaluated, 'query', 'queries')} evaluated"]
        if self.dropped_not_in_qrels:
            parts.append(f"{counted(self.dropped_not_in_qrels, 'run query', 'run queries')} "
                         "not in qrels dropped")
        if self.missing_from_run:
            verb = "filled with zeros" if self.filled else "not scored"
            parts.append(f"{counted(self.missing_from_run, 'qrels query', 'qrels queries')} "
                         f"missing from run {verb}")
        if self.deduplicated_rows:
            parts.append(f"{counted(self.deduplicated_rows, 'duplicate row')} removed")
        if self.tied_queries:
            parts.append(f"{counted(self.tied_queries, 'query', 'queries')} with tied scores, "
                         f"{self.ties_mattered} of them tied between different grades (expected "
                         "values)")
        return "; ".join(parts)


def check_columns(df: pl.DataFrame, needed: tuple[str, ...], what: str,
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
    for col in ("query_id", "doc_id"):
        if col in run.columns:
            _check_id_type(run.get_column(col), source)
    if "score" in run.columns:
        dt = run.schema["score"]
        if not (dt.is_numeric() or dt == pl.Boolean):
            raise InputError(f"score must be numeric, got {dt} (fasteval.read_run parses "
                             "text scores)", source=source, column="score")
    if scores and "score" in run.columns:
        score = run.get_column("score")
        if score.null_count() or (score.dtype.is_float() and score.is_nan().any()):
            bad = (score.is_nan() if score.dtype.is_float() else score.is_null()).fill_null(True)
            row = int(bad.arg_max())
            what = "missing (null)" if score[row] is None else "NaN (not a number)"  # as read_run says
            raise InputError(f"score is {what}", source=source, row=row, column="score")
        if score.dtype.is_integer():
            from fasteval.io._common import check_exact_scores, row_locator

            check_exact_scores(score, source=source, where=row_locator())


def _check_id_type(s: pl.Series, source: str) -> None:
    """Ids are text or integers that fit in int64: a float id would be matched by its
    spelling ("1.0", never "1"), a wider integer would wrap."""
    dt = s.dtype
    if dt.is_integer():
        if dt == pl.UInt64 and s.len() and (s.max() or 0) > 2**63 - 1:  # type: ignore[operator]
            row = int((s > 2**63 - 1).arg_max())
            raise InputError(f"{s.name} does not fit in a signed 64-bit integer: {s[row]}; integer "
                             f"ids must lie within {-2**63}..{2**63 - 1} (store larger ids as text)",
                             source=source, row=row, column=s.name)
        return
    if dt in (pl.String, pl.Categorical, pl.Binary) or isinstance(dt, pl.Enum):
        return
    raise InputError(f"{s.name} must hold strings or integers, got {dt} (fasteval.read_run and "
                     "read_qrels turn whole-number floats into integers)", source=source,
                     column=s.name)


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

    check_columns(qrels, ("query_id", "doc_id", "relevance"), "qrels", source)
    for col in ("query_id", "doc_id"):
        s = qrels.get_column(col)
        if s.null_count():
            raise InputError(f"{col} is null; every judgment needs one", source=source,
                             row=_first_null(s), column=col)
        _check_id_type(s, source)
    rel = normalize_relevance(qrels.get_column("relevance"), source=source, where=row_locator())
    return qrels.select("query_id", "doc_id").with_columns(rel)
