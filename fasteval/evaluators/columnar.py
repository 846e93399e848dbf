"""Turn nested lists of documents into flat columns and score them with the kernels.

The conversion touches each Python document once (C-level ``map`` over a chained
iterator), reduces each comparison value to an int64 key and hands flat arrays +
offsets to :mod:`fasteval.kernels.documents`.

Keys are 64-bit hashes (polars' string hash when all values are ``str`` or None,
else Python's ``hash()``): equal values have equal hashes, and every key
equality the kernel used (ground-truth duplicates, retrieved-to-ground-truth
matches) is then checked with Python's own ``==`` (identity first, as ``list``
membership does).  If any check fails (a hash collision) or a value is
unhashable, the exact interning path assigns consecutive integers through a
dictionary instead.  The results therefore follow Python equality exactly.

Examples
--------
>>> from fasteval.evaluators.documents import Document
>>> gt = [[Document(content="a")], [Document(content="b"), Document(content="c")]]
>>> ret = [[Document(content="x"), Document(content="a")], [Document(content="c")]]
>>> table = DocumentTable.build(gt, ret, "content")
>>> [round(v, 4) for v in table.score()["map"].tolist()]
[0.5, 0.5]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import Any

import numpy as np

from fasteval.errors import InputError
from fasteval.evaluators.documents import comparison_getter, make_normalizer
from fasteval.kernels.documents import FLAG_EMPTY, FLAG_VALID, MEASURES, document_measures

__all__ = ["DocumentTable", "MEASURES", "lengths_to_offsets", "check_pair_lengths"]

_HASH_NONE = hash(None)
_HASH_EMPTY = hash("")


def check_pair_lengths(
    first: Sequence[Any], second: Sequence[Any], first_name: str, second_name: str
) -> None:
    """Haystack's input checks: both lists non-empty and of the same length.

    Raises ``InputError`` (a ``ValueError``, as Haystack raises).

    Examples
    --------
    >>> check_pair_lengths([1], [], "ground_truth_answers", "predicted_answers")
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: ground_truth_answers, predicted_answers: must both be non-empty lists, got lengths 1 and 0
    """
    n1, n2 = len(first), len(second)
    where = f"{first_name}, {second_name}"
    if n1 == 0 or n2 == 0:
        raise InputError(f"must both be non-empty lists, got lengths {n1} and {n2}", source=where)
    if n1 != n2:
        raise InputError(f"must have the same length, got {n1} and {n2}", source=where)


def lengths_to_offsets(nested: Sequence[Sequence[Any]]) -> np.ndarray:
    """int64 offsets (length ``len(nested) + 1``) of the concatenated inner lists.

    Examples
    --------
    >>> lengths_to_offsets([[1, 2], [], [3]]).tolist()
    [0, 2, 2, 3]
    """
    offsets = np.zeros(len(nested) + 1, dtype=np.int64)
    np.cumsum(np.array(list(map(len, nested)), dtype=np.int64), out=offsets[1:])
    return offsets


class _Unhashable:
    """Marker used while freezing unhashable comparison values."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<{self.name}>"


_LIST = _Unhashable("list")
_DICT = _Unhashable("dict")
_SET = _Unhashable("set")


def _freeze(value: Any) -> Any:
    """A hashable stand-in that is ``==`` to another stand-in iff the values are ``==``."""
    if isinstance(value, list):
        return (_LIST, tuple(_freeze(v) for v in value))
    if isinstance(value, dict):
        return (_DICT, frozenset((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return (_SET, frozenset(value))
    if isinstance(value, tuple):
        return tuple(_freeze(v) for v in value)
    hash(value)
    return value


def _pick(values: list[Any], index: np.ndarray) -> tuple[Any, ...]:
    if index.size == 0:
        return ()
    if index.size == 1:
        return (values[int(index[0])],)
    return itemgetter(*index.tolist())(values)


@dataclass
class DocumentTable:
    """Flat columns for a batch of questions (see module docstring).

    Attributes
    ----------
    gt_offsets, ret_offsets : numpy.ndarray
        int64 offsets per question.
    gt_values, ret_values : list
        Comparison value per flat document (after optional normalization).
    gt_key, ret_key : numpy.ndarray
        int64 keys.
    gt_flag, ret_flag : numpy.ndarray
        uint8 flags: bit 1 = value is not None, bit 2 = value is ``""``.
    gt_gain : numpy.ndarray
        float64 gains (ground-truth ``score``; 1.0 where it is None).
    exact : bool
        Whether keys come from exact interning (no verification needed).
    """

    gt_offsets: np.ndarray
    ret_offsets: np.ndarray
    gt_values: list[Any]
    ret_values: list[Any]
    gt_key: np.ndarray
    ret_key: np.ndarray
    gt_flag: np.ndarray
    ret_flag: np.ndarray
    gt_gain: np.ndarray
    exact: bool = False
    require_hashable: bool = False

    @classmethod
    def build(
        cls,
        ground_truth_documents: Sequence[Sequence[Any]],
        retrieved_documents: Sequence[Sequence[Any]],
        document_comparison_field: str = "content",
        *,
        gains: bool = False,
        normalize: bool | Callable[[str], str] = False,
        require_hashable: bool = False,
    ) -> DocumentTable:
        """Flatten, extract comparison values and key them.

        Parameters
        ----------
        ground_truth_documents, retrieved_documents : list of list of documents
            Already checked for matching non-zero length.
        document_comparison_field : str
            ``"content"``, ``"id"`` or ``"meta.<key>[.<key>...]"``.
        gains : bool
            Read ground-truth ``score`` as gains (NDCG); otherwise all gains are 1.
        normalize : bool or callable
            Text normalization applied to string values of both sides.
        require_hashable : bool
            Raise ``TypeError`` on unhashable values (Haystack's recall and NDCG use
            sets and dicts); otherwise they are compared by ``==``.
        """
        gt_offsets = lengths_to_offsets(ground_truth_documents)
        ret_offsets = lengths_to_offsets(retrieved_documents)
        n_gt = int(gt_offsets[-1])
        n_ret = int(ret_offsets[-1])
        if n_gt + n_ret == 0:
            getter: Callable[[Any], Any] = attrgetter("content")  # nothing to read
        else:
            getter = comparison_getter(document_comparison_field)
        gt_values = _extract_nested(ground_truth_documents, document_comparison_field, getter)
        ret_values = _extract_nested(retrieved_documents, document_comparison_field, getter)
        mapper = make_normalizer(normalize)
        if mapper is not None:
            gt_values = list(map(mapper, gt_values))
            ret_values = list(map(mapper, ret_values))
        if gains and n_gt:
            gt_gain = _gains(ground_truth_documents, gt_offsets)
        else:
            gt_gain = np.ones(n_gt, dtype=np.float64)
        table = cls(
            gt_offsets, ret_offsets, gt_values, ret_values,
            np.empty(0, np.int64), np.empty(0, np.int64),
            np.empty(0, np.uint8), np.empty(0, np.uint8), gt_gain,
            require_hashable=require_hashable,
        )
        keyed = _string_keys(gt_values, ret_values)
        if keyed is not None:
            (table.gt_key, table.gt_flag), (table.ret_key, table.ret_flag) = keyed
            return table
        try:
            table.gt_key, table.gt_flag = _hash_keys(gt_values)
            table.ret_key, table.ret_flag = _hash_keys(ret_values)
        except TypeError:
            table._intern_exactly()
        return table

    def _intern_exactly(self) -> None:
        codes: dict[Any, int] = {}
        keys = []
        for values in (self.gt_values, self.ret_values):
            key = np.empty(len(values), dtype=np.int64)
            flag = np.full(len(values), FLAG_VALID, dtype=np.uint8)
            for i, value in enumerate(values):
                if value is None:
                    flag[i] = 0
                    key[i] = -1
                    continue
                if value == "":
                    flag[i] |= FLAG_EMPTY
                try:
                    hashable = value if type(value) is str else _freeze_checked(value, self.require_hashable)
                    key[i] = codes.setdefault(hashable, len(codes))
                except TypeError as exc:
                    msg = f"comparison value {value!r} is not hashable"
                    raise TypeError(msg) from exc
            keys.append((key, flag))
        (self.gt_key, self.gt_flag), (self.ret_key, self.ret_flag) = keys
        self.exact = True

    def _verify(self, gt_rep: np.ndarray, ret_match: np.ndarray) -> bool:
        own = np.arange(gt_rep.shape[0])
        dup = np.flatnonzero((gt_rep >= 0) & (gt_rep != own))
        if _pick(self.gt_values, dup) != _pick(self.gt_values, gt_rep[dup]):
            return False
        hit = np.flatnonzero(ret_match >= 0)
        return _pick(self.ret_values, hit) == _pick(self.gt_values, ret_match[hit])

    def score(self, top_k: int | None = None) -> dict[str, np.ndarray]:
        """Per-question values of every measure in :data:`MEASURES`.

        Examples
        --------
        >>> from fasteval.evaluators.documents import Document
        >>> t = DocumentTable.build([[Document(content="a")]], [[Document(content="a")]])
        >>> {k: float(v[0]) for k, v in t.score().items()}["mrr"]
        1.0
        """
        k = 0 if top_k is None else int(top_k)
        while True:
            res = document_measures(
                self.gt_offsets, self.gt_key, self.gt_flag, self.gt_gain,
                self.ret_offsets, self.ret_key, self.ret_flag, k,
            )
            if self.exact or self._verify(res.gt_rep, res.ret_match):
                break
            self._intern_exactly()  # a hash collision: redo with exact codes
        return {name: res.scores[:, j] for j, name in enumerate(MEASURES)}


def _freeze_checked(value: Any, require_hashable: bool) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        if require_hashable:
            raise
    return _freeze(value)


def _extract_nested(
    nested: Sequence[Sequence[Any]], field_name: str, getter: Callable[[Any], Any]
) -> list[Any]:
    # list comprehensions with a literal attribute are the fastest way to read one
    # attribute of many Python objects (specialized attribute loads)
    if field_name == "content":
        return [doc.content for docs in nested for doc in docs]
    if field_name == "id":
        return [doc.id for docs in nested for doc in docs]
    return [getter(doc) for docs in nested for doc in docs]


def _string_keys(*sides: list[Any]) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Keys from polars' 64-bit string hash when every value is a ``str`` or None.

    Returns None (use the Python path) as soon as one value is of another type.
    """
    import polars as pl

    series = []
    for values in sides:
        try:
            series.append(pl.Series(values, dtype=pl.String, strict=True))
        except (TypeError, ValueError, pl.exceptions.PolarsError):
            return None
    out = []
    for s in series:
        key = s.hash(seed=0).to_numpy().view(np.int64)
        flag = np.where(s.is_null().to_numpy(), np.uint8(0), FLAG_VALID).astype(np.uint8)
        flag[(s == "").fill_null(False).to_numpy()] |= FLAG_EMPTY
        out.append((key, flag))
    return out


def _hash_keys(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Hash every value (TypeError if one is unhashable) and flag None / ``""``."""
    key = np.fromiter(map(hash, values), dtype=np.int64, count=len(values))
    flag = np.full(len(values), FLAG_VALID, dtype=np.uint8)
    for i in np.flatnonzero(key == _HASH_NONE).tolist():
        if values[i] is None:
            flag[i] = 0
    for i in np.flatnonzero(key == _HASH_EMPTY).tolist():
        if values[i] is not None and values[i] == "":
            flag[i] |= FLAG_EMPTY
    return key, flag


def _gains(ground_truth_documents: Sequence[Sequence[Any]], gt_offsets: np.ndarray) -> np.ndarray:
    """Ground-truth gains; raise if a question mixes scored and unscored documents."""
    scores = [doc.score for docs in ground_truth_documents for doc in docs]
    try:
        gain = np.array(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"ground-truth scores must be numbers or None: {exc}", source="ground_truth_documents"
        ) from exc
    missing = np.zeros(len(scores), dtype=np.bool_)
    for i in np.flatnonzero(np.isnan(gain)).tolist():
        if scores[i] is None:
            missing[i] = True
    if missing.any():
        counts = np.diff(gt_offsets)
        cum = np.concatenate(([0], np.cumsum(missing, dtype=np.int64)))
        n_missing = cum[gt_offsets[1:]] - cum[gt_offsets[:-1]]
        mixed = np.flatnonzero((n_missing > 0) & (n_missing < counts))
        if mixed.size:
            raise InputError(
                "either none or all documents of a question's ground truth must have a score",
                source="ground_truth_documents",
                row=int(mixed[0]),
            )
        gain[missing] = 1.0
    return gain
