"""Columnar RAG evaluation: Haystack's deterministic evaluators and SAS on a table, in one call.

RAG logs kept as a table (parquet, polars, pandas, Arrow) need no ``Document`` objects:
:func:`evaluate_rag` reads one row per question,

=====================  ==============================================================
column                 holds
=====================  ==============================================================
``question_id``        the question (any type; optional)
``retrieved``          list of retrieved document keys, in rank order
``ground_truth``       list of ground-truth document keys
``relevance``          optional list of gains, aligned with ``ground_truth`` (NDCG)
``answer``, ``gold``   optional predicted and ground-truth answers (exact match, SAS)
=====================  ==============================================================

and computes, per question and on average, what Haystack's deterministic evaluators give
for the same data: ``DocumentRecallEvaluator`` in both modes (``recall_single_hit``,
``recall_multi_hit``), ``DocumentMRREvaluator`` (``mrr``), ``DocumentMAPEvaluator``
(``map``), ``DocumentNDCGEvaluator`` (``ndcg``) and ``AnswerExactMatchEvaluator``
(``exact_match``), plus ``SASEvaluator`` (``sas``) on request. A key plays the part of a
document's ``document_comparison_field`` value: keys are compared as Haystack compares
values (each distinct ground-truth key credited once; null keys never match; recall ignores
the empty string), and a ``relevance`` list plays the part of the ground-truth documents'
``score`` (all null, or no column: binary relevance; mixed within a question: an error).

The keys go straight from the Arrow buffers to numba kernels (from polars without a copy:
its string views, where keys of up to 12 bytes are stored whole): string keys are hashed
there and every match is checked byte for byte, integer keys are used as they are.

Examples
--------
>>> import polars as pl
>>> logs = pl.DataFrame({
...     "question_id": ["q1", "q2"],
...     "retrieved": [["d3", "d1", "d7"], ["d2"]],
...     "ground_truth": [["d1", "d9"], ["d4"]],
...     "answer": ["Paris", "1889"],
...     "gold": ["Paris", "1887"],
... })
>>> report = evaluate_rag(logs, answer_col="answer", gold_col="gold")
>>> report.per_question.select("question_id", "mrr", "map", "exact_match").rows()
[('q1', 0.5, 0.25, 1), ('q2', 0.0, 0.0, 0)]
>>> report.scores["mrr"], report.scores["exact_match"]
(0.25, 0.5)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fasteval._arrow_lists import list_offsets_values
from fasteval.errors import InputError, ParameterError
from fasteval.kernels.documents import (
    FLAG_EMPTY,
    FLAG_VALID,
    MEASURES,
    arrow_text_keys,
    arrow_texts_equal,
    document_measures,
    view_text_keys,
    view_texts_equal,
)

__all__ = ["RAG_MEASURES", "RagReport", "evaluate_rag"]

RAG_MEASURES: tuple[str, ...] = (*MEASURES, "exact_match", "sas")
"""Measure names of :func:`evaluate_rag`, in output order."""


@dataclass
class RagReport:
    """What :func:`evaluate_rag` returns.

    Attributes
    ----------
    per_question : polars.DataFrame
        One row per input row: the question column (when given) and one column per measure.
    scores : dict
        ``{measure: mean over questions}``: the ``score`` of the matching Haystack evaluator.
    """

    per_question: Any
    scores: dict[str, float]


def _to_arrow(data: Any) -> Any:
    import polars as pl
    import pyarrow as pa

    newest = pl.CompatLevel.newest()  # polars' own string views: no copy
    if isinstance(data, (str, os.PathLike)):
        from fasteval.io.files import read_table_file

        # by its suffix (parquet otherwise); a name holding glob characters is the file it names
        return read_table_file(os.fspath(data), default="parquet").to_arrow(compat_level=newest)
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pl.DataFrame):
        return data.to_arrow(compat_level=newest)
    if isinstance(data, pl.LazyFrame):
        return data.collect().to_arrow(compat_level=newest)
    if isinstance(data, dict) or type(data).__module__.split(".")[0] == "pandas":
        try:
            # pandas' NaN is its missing value: read as null (a question whose gains are all
            # NaN has binary relevance; two NaN answers are an exact match, as two None are)
            frame = pl.DataFrame(data) if isinstance(data, dict) else pl.from_pandas(data)
        except (pa.ArrowException, pl.exceptions.PolarsError, TypeError, ValueError) as exc:
            # e.g. a column of numpy arrays where an empty one is float64 (np.array([]))
            advice = ("; give each list column one element type (np.array([], dtype=object) for an "
                      "empty list, or plain lists)" if isinstance(exc, pa.ArrowException) else "")
            raise InputError(f"cannot be converted to a table ({type(exc).__name__}: {exc}){advice}",
                             source="data") from exc
        return frame.to_arrow(compat_level=newest)
    raise ParameterError("data", "a table (polars, pandas, pyarrow, a dict of columns) or a file path",
                         type(data).__name__)


def _column(table: Any, name: str) -> Any:
    if name not in table.column_names:
        raise ParameterError("columns", f"names of the table's columns {table.column_names}", name)
    column = table.column(name)
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _list_column(table: Any, name: str, holds: str = "document keys") -> tuple[np.ndarray, Any]:
    """``(offsets, values)`` of a list column, offsets from 0 (null lists as empty lists)."""
    import pyarrow as pa

    arr = _column(table, name)
    if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)
            or pa.types.is_list_view(arr.type) or pa.types.is_large_list_view(arr.type)):
        raise ParameterError(name, f"a column of lists (one list of {holds} per question)", str(arr.type))
    # sizes and values from the logical lists, whatever the layout (list views in any order,
    # slices, null lists holding values): pyarrow's cast to large_list gives wrong offsets for
    # list views and a short child array for lists of nulls (polars' List(Null))
    offsets, values = list_offsets_values(arr)
    if len(values) != offsets[-1]:  # pragma: no cover - flatten skips exactly the null lists
        raise InputError(f"holds {len(values)} keys where its lists count {int(offsets[-1])}", source=name)
    if pa.types.is_dictionary(values.type):  # categorical keys (polars' List(Categorical))
        dictionary = values.dictionary
        if pa.types.is_string_view(dictionary.type):  # pyarrow's take has no string_view kernel
            dictionary = dictionary.cast(pa.large_string())
        values = dictionary.take(values.indices)
    return offsets, values


def _key_kind(values: Any, name: str) -> str:
    import pyarrow as pa

    t = values.type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "text"
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_null(t):
        return "null"
    raise ParameterError(name, "lists of string or integer document keys", str(t))


def _valid(values: Any) -> np.ndarray:
    if values.null_count == 0:
        return np.ones(len(values), dtype=np.bool_)
    return np.asarray(values.is_valid(), dtype=np.bool_)


def _words(raw: np.ndarray) -> np.ndarray:
    """The whole uint64 words of a byte buffer (the kernels read the tail bytewise)."""
    return raw[: raw.shape[0] // 8 * 8].view(np.uint64)


class _Views:
    """An Arrow string_view array's views and data buffers, as the kernels take them."""

    def __init__(self, values: Any) -> None:
        bufs = values.buffers()
        n = len(values)
        views = np.frombuffer(bufs[1], dtype=np.uint64)
        self.views = views[2 * values.offset: 2 * (values.offset + n)].reshape(n, 2)
        datas = [np.frombuffer(b, dtype=np.uint8) for b in bufs[2:] if b is not None]
        self.base = np.zeros(max(len(bufs) - 2, 1), dtype=np.int64)
        if len(datas) > 1:
            self.base[1:len(datas)] = np.cumsum([len(d) for d in datas])[:-1]
        self.data = (np.concatenate(datas) if len(datas) > 1 else datas[0]) if datas else np.zeros(0, np.uint8)
        if self.data.ctypes.data % 8:  # pragma: no cover - Arrow buffers are 64-byte aligned
            self.data = self.data.copy()
        self.words = _words(self.data)
        self.valid = _valid(values) if values.null_count else np.zeros(0, dtype=np.bool_)
        self.values = values

    def keys(self) -> tuple[np.ndarray, np.ndarray]:
        n = self.views.shape[0]
        keys = np.empty(n, dtype=np.int64)
        flags = np.empty(n, dtype=np.uint8)
        view_text_keys(self.views, self.base, self.words, self.data, self.valid, keys, flags)
        return keys, flags

    def equal(self, ia: np.ndarray, other: _Views, ib: np.ndarray) -> bool:
        return bool(view_texts_equal(self.views, self.base, self.words, self.data, ia,
                                     other.views, other.base, other.words, other.data, ib))


class _Text:
    """An Arrow large_string array's buffers, as the kernels take them."""

    def __init__(self, values: Any) -> None:
        import pyarrow as pa

        values = values.cast(pa.large_string())
        validity, offsets, data = values.buffers()
        n = len(values)
        self.offsets = np.frombuffer(offsets, dtype=np.int64, count=n + 1, offset=8 * values.offset)
        raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
        if raw.ctypes.data % 8:  # pragma: no cover - Arrow buffers are 64-byte aligned
            raw = raw.copy()
        self.data = raw
        self.words = _words(raw)
        self.valid = _valid(values) if values.null_count else np.zeros(0, dtype=np.bool_)
        self.values = values

    def keys(self) -> tuple[np.ndarray, np.ndarray]:
        n = self.offsets.shape[0] - 1
        keys = np.empty(n, dtype=np.int64)
        flags = np.empty(n, dtype=np.uint8)
        arrow_text_keys(self.offsets, self.words, self.data, self.valid, keys, flags)
        return keys, flags

    def equal(self, ia: np.ndarray, other: _Text, ib: np.ndarray) -> bool:
        return bool(arrow_texts_equal(self.offsets, self.words, self.data, ia,
                                      other.offsets, other.words, other.data, ib))


def _exact_codes(gt_values: Any, ret_values: Any) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Keys that are exact codes (dense ranks of the values): the answer to a hash collision."""
    import polars as pl

    both = pl.concat([pl.Series(gt_values), pl.Series(ret_values)], rechunk=True)
    codes = both.rank("dense").fill_null(0).cast(pl.Int64).to_numpy()
    out = []
    for part, values in ((codes[: len(gt_values)], gt_values), (codes[len(gt_values):], ret_values)):
        s = pl.Series(values)
        flag = np.where(s.is_null().to_numpy(), np.uint8(0), FLAG_VALID).astype(np.uint8)
        flag[(s.str.len_bytes() == 0).fill_null(False).to_numpy()] |= FLAG_EMPTY
        out.append((np.ascontiguousarray(part), flag))
    return tuple(out)


def _int_keys(values: Any, name: str, wrap: bool) -> tuple[np.ndarray, np.ndarray]:
    """Integer keys as int64; ``wrap``: both columns are unsigned 64-bit, whose bits are taken
    as they are (a one-to-one map, so keys above 2**63 - 1 still match exactly)."""
    import pyarrow as pa

    try:
        keys = np.asarray(values.cast(pa.int64(), safe=not wrap).fill_null(0), dtype=np.int64)
    except pa.ArrowInvalid:
        raise ParameterError(name, "integer keys within the 64-bit signed range (or both columns "
                             "unsigned 64-bit)", str(values.type)) from None
    flags = np.where(_valid(values), FLAG_VALID, np.uint8(0)).astype(np.uint8)
    return keys, flags


def _gains(table: Any, name: str, gt_offsets: np.ndarray) -> np.ndarray:
    """Ground-truth gains from a relevance list column (Haystack's NDCG rule for scores)."""
    import pyarrow as pa

    offsets, values = _list_column(table, name, "gains")
    if not np.array_equal(offsets, gt_offsets):
        sizes, gt_sizes = np.diff(offsets), np.diff(gt_offsets)
        row = int(np.flatnonzero(sizes != gt_sizes)[0])
        raise InputError(f"has {int(sizes[row])} gains for {int(gt_sizes[row])} ground-truth keys",
                         source=name, row=row)
    if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type) or pa.types.is_null(values.type)
            or pa.types.is_boolean(values.type) or pa.types.is_decimal(values.type)):
        raise ParameterError(name, "lists of numbers (gains)", str(values.type))
    gain = np.array(values.cast(pa.float64()).fill_null(np.nan), dtype=np.float64)  # a writable copy
    missing = ~_valid(values)
    if missing.any():
        from fasteval.evaluators.columnar import refuse_mixed

        refuse_mixed(missing, gt_offsets, lambda row: InputError(
            "either none or all ground-truth keys of a question must have a gain", source=name, row=row))
        gain[missing] = 1.0
    return gain


def _document_scores(table: Any, retrieved_col: str, ground_truth_col: str, relevance_col: str | None,
                     top_k: int | None) -> np.ndarray:
    import pyarrow as pa

    gt_offsets, gt_values = _list_column(table, ground_truth_col)
    ret_offsets, ret_values = _list_column(table, retrieved_col)
    kinds = {_key_kind(gt_values, ground_truth_col), _key_kind(ret_values, retrieved_col)} - {"null"}
    if len(kinds) > 1:
        raise ParameterError(retrieved_col, f"keys of the same type as {ground_truth_col!r}'s",
                             str(ret_values.type))
    gains = (_gains(table, relevance_col, gt_offsets) if relevance_col is not None
             else np.ones(int(gt_offsets[-1]), dtype=np.float64))
    k = 0 if top_k is None else top_k
    if kinds == {"int"} or not kinds:
        wrap = pa.types.is_uint64(gt_values.type) and pa.types.is_uint64(ret_values.type)
        gt_key, gt_flag = _int_keys(gt_values, ground_truth_col, wrap)
        ret_key, ret_flag = _int_keys(ret_values, retrieved_col, wrap)
        return document_measures(gt_offsets, gt_key, gt_flag, gains, ret_offsets, ret_key, ret_flag, k).scores
    if pa.types.is_string_view(gt_values.type) and pa.types.is_string_view(ret_values.type):
        gt_text, ret_text = _Views(gt_values), _Views(ret_values)
    else:
        gt_text, ret_text = _Text(gt_values), _Text(ret_values)
    (gt_key, gt_flag), (ret_key, ret_flag) = gt_text.keys(), ret_text.keys()
    res = document_measures(gt_offsets, gt_key, gt_flag, gains, ret_offsets, ret_key, ret_flag, k)
    own = np.arange(res.gt_rep.shape[0])
    dup = np.flatnonzero((res.gt_rep >= 0) & (res.gt_rep != own))
    hit = np.flatnonzero(res.ret_match >= 0)
    if gt_text.equal(dup, gt_text, res.gt_rep[dup]) and ret_text.equal(hit, gt_text, res.ret_match[hit]):
        return res.scores
    (gt_key, gt_flag), (ret_key, ret_flag) = _exact_codes(gt_text.values, ret_text.values)  # a collision
    return document_measures(gt_offsets, gt_key, gt_flag, gains, ret_offsets, ret_key, ret_flag, k).scores


def _exact_match(answer: Any, gold: Any) -> np.ndarray:
    """``1`` where the answers are equal as Python's ``==`` finds them (Haystack's rule), else ``0``.

    Two nulls are equal (``None == None``), two NaNs are not; columns of different kinds
    (text and numbers, text and bytes) are compared value by value, as Haystack compares them.
    """
    import polars as pl

    a, g = answer.dtype, gold.dtype
    numeric = (a.is_numeric() or a == pl.Boolean) and (g.is_numeric() or g == pl.Boolean)
    if a == g or a == pl.Null or g == pl.Null or numeric:
        equal = answer.eq_missing(gold)
        if a.is_float() and g.is_float():
            equal = equal & ~(answer.is_nan() & gold.is_nan()).fill_null(False)
        return equal.cast(pl.Int64).to_numpy()
    return np.fromiter((bool(x == y) for x, y in zip(answer.to_list(), gold.to_list(), strict=True)),
                       dtype=np.int64, count=len(answer))


def _check_measures(measures: Iterable[str] | None, docs: bool, answers: bool, sas: bool) -> list[str]:
    """The measures asked (default: every one the columns given allow: ``docs`` the document
    columns, ``answers`` the answer columns, ``sas`` asked), in :data:`RAG_MEASURES` order."""
    if measures is None:
        return ([*MEASURES] if docs else []) + (["exact_match"] if answers else []) + (["sas"] if sas and answers else [])
    names = [measures] if isinstance(measures, str) else list(measures)
    unknown = [m for m in names if m not in RAG_MEASURES]
    if unknown or not names:
        raise ParameterError("measures", f"a non-empty list of names among {list(RAG_MEASURES)}", names)
    names = [m for m in RAG_MEASURES if m in names]
    for name in names:
        if (name in MEASURES and not docs) or (name in ("exact_match", "sas") and not answers):
            needs = "retrieved_col and ground_truth_col" if name in MEASURES else "answer_col and gold_col"
            raise ParameterError("measures", f"measures whose columns are given ({name!r} needs {needs})", name)
    return names


def _sas_scores(columns: tuple[tuple[str, Any], ...], sas_options: dict[str, Any] | None) -> np.ndarray:
    """SAS of the predicted answers against the gold ones (``columns``: the answer column, then
    the gold column, each with its name) with :class:`fasteval.evaluators.SASEvaluator`."""
    import polars as pl

    from fasteval.evaluators.sas import SASEvaluator

    evaluator = SASEvaluator(**(sas_options or {}))
    texts = []
    for name, col in columns:
        # the evaluator's own messages name neither the column nor the row
        if col.null_count():
            row = int(col.is_null().arg_true()[0])
            raise InputError("holds no answer text (null) where sas needs one", source=name, row=row)
        if isinstance(col.dtype, (pl.Categorical, pl.Enum)):
            col = col.cast(pl.String)
        if col.dtype != pl.String:
            raise InputError(f"holds {col.dtype} values where sas needs answer texts", source=name)
        texts.append(col.to_list())
    out = evaluator.run(ground_truth_answers=texts[1], predicted_answers=texts[0])
    return np.asarray(out["individual_scores"], dtype=np.float64)


def evaluate_rag(data: Any, *, question_col: str | None = "question_id", retrieved_col: str | None = "retrieved",
                 ground_truth_col: str | None = "ground_truth", relevance_col: str | None = None,
                 answer_col: str | None = None, gold_col: str | None = None,
                 measures: Iterable[str] | None = None, top_k: int | None = None, sas: bool = False,
                 sas_options: dict[str, Any] | None = None) -> RagReport:
    """Haystack's deterministic RAG evaluators (and SAS) on a table, per question and on average.

    Parameters
    ----------
    data : polars / pandas / pyarrow table, dict of columns, or a file path
        One row per question (see the module docstring for the layout). A file is read by
        its suffix (``.jsonl``, ``.json``; parquet for any other name).
    question_col : str or None
        Question column copied to the output (None: none; it is not needed otherwise). The
        default, ``"question_id"``, is copied when the table has it.
    retrieved_col, ground_truth_col : str or None
        List columns of document keys (strings or integers); None to skip document measures.
    relevance_col : str, optional
        List column of gains aligned with ``ground_truth_col`` (NDCG; binary without it).
    answer_col, gold_col : str, optional
        Predicted and ground-truth answers: ``exact_match`` (``1`` where equal, as Haystack's
        ``AnswerExactMatchEvaluator``; two nulls are equal) and, with ``sas=True``, ``sas``.
    measures : iterable of str, optional
        Among :data:`RAG_MEASURES`; default: every measure the given columns allow.
    top_k : int, optional
        Only the first ``top_k`` retrieved keys count (as fasteval's evaluators' ``top_k``).
    sas : bool
        Also score ``sas`` with :class:`fasteval.evaluators.SASEvaluator` (needs the
        ``sas`` extra; ``sas_options`` are its arguments: ``model``, ``device``,
        ``batch_size``...).

    Returns
    -------
    RagReport
        ``per_question`` (polars DataFrame) and ``scores`` (means).

    Raises
    ------
    ParameterError
        Unknown column or measure, or a column of the wrong type.
    InputError
        No rows, a question whose gains are partly null, or gains not aligned with the keys.
    """
    import polars as pl

    from fasteval.evaluators.document_evaluators import _check_top_k

    _check_top_k(top_k)
    table = _to_arrow(data)
    if table.num_rows == 0:
        raise InputError("has no rows (one row per question is needed)", source="data")
    docs = retrieved_col is not None and ground_truth_col is not None
    answers = answer_col is not None and gold_col is not None
    names = _check_measures(measures, docs, answers, sas)
    if question_col in names:
        raise ParameterError("question_col", f"a name other than the measures' {names}", question_col)
    columns: dict[str, Any] = {}
    if question_col is not None and (question_col != "question_id" or question_col in table.column_names):
        columns[question_col] = pl.from_arrow(_column(table, question_col))
    if any(name in MEASURES for name in names):
        scores = _document_scores(table, retrieved_col, ground_truth_col, relevance_col, top_k)
        for j, name in enumerate(MEASURES):
            if name in names:
                columns[name] = scores[:, j]
    if "exact_match" in names or "sas" in names:
        answer = pl.from_arrow(_column(table, answer_col))
        gold = pl.from_arrow(_column(table, gold_col))
        if "exact_match" in names:
            columns["exact_match"] = _exact_match(answer, gold)
        if "sas" in names:
            columns["sas"] = _sas_scores(((answer_col, answer), (gold_col, gold)), sas_options)
    per_question = pl.DataFrame(columns)
    means = {name: float(np.mean(columns[name])) for name in names}
    return RagReport(per_question, means)
