"""Turn nested lists of documents into flat columns and score them with the kernels.

Each Python document is read once. When the comparison values are strings (or None), they
are packed end to end into one byte buffer, a block of questions at a time: a block's values
are read, joined and encoded while they are still in the CPU cache (one pass over the
documents, all of it C-level but the comprehension that reads the attribute, and no Python
list of all the values). A numba kernel then reduces each text to an int64 key, and flat
arrays + offsets go to :mod:`fasteval.kernels.documents`.

Keys are 64-bit hashes (of the UTF-8 bytes for strings, else Python's ``hash()``):
equal values have equal hashes, and every key equality the kernel used
(ground-truth duplicates, retrieved-to-ground-truth matches) is then checked: text
against text byte for byte (which is ``str`` equality), other values with Python's
own ``==`` (identity first, as ``list`` membership does).  If any check fails (a hash collision) or a value is
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

import ctypes
import numbers
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, is_not, itemgetter
from types import NoneType
from typing import Any

import numpy as np

from fasteval.errors import InputError
from fasteval.evaluators.documents import comparison_getter, make_normalizer
from fasteval.kernels.documents import (
    FLAG_EMPTY,
    FLAG_VALID,
    MEASURES,
    document_measures,
    split_text_keys,
    texts_equal,
)

__all__ = ["DocumentTable", "MEASURES", "lengths_to_offsets", "check_pair_lengths"]

_HASH_NONE = hash(None)
_HASH_EMPTY = hash("")
BLOCK_DOCS = 8192
"""Documents read and packed at a time (their values are still in cache when packed)."""


@dataclass
class PackedText:
    """String values packed as UTF-8, a block of documents per buffer.

    Document ``i`` lies in block ``b`` (``firsts[b] <= i < firsts[b + 1]``), at bytes
    ``starts[i]:starts[i] + lens[i]`` of ``blocks[b]`` (uint64 words with zero bytes after
    the last text, so that the kernels may read 8 bytes past any text: an ASCII block is a
    view of the joined ``str`` itself, another block its UTF-8 encoding; ``owners`` keeps
    them alive); ``valid`` is False where the value was None (None: all valid).
    """

    blocks: list[np.ndarray]
    firsts: np.ndarray
    starts: np.ndarray
    lens: np.ndarray
    valid: np.ndarray | None = None
    owners: list[Any] | None = None  # what keeps the blocks' memory alive (str or bytes)

    def decode(self, i: int) -> str | None:
        """Value ``i`` as a Python string (None where it was None)."""
        if self.valid is not None and not self.valid[i]:
            return None
        b = int(np.searchsorted(self.firsts, i, side="right")) - 1
        raw = self.blocks[b].view(np.uint8)[self.starts[i]:self.starts[i] + self.lens[i]]
        return raw.tobytes().decode("utf-8")

    def joined(self) -> tuple[np.ndarray, np.ndarray]:
        """One buffer for all blocks and the documents' starts in it (made on demand)."""
        if len(self.blocks) == 1:
            return self.blocks[0], self.starts
        sizes = np.array([8 * len(w) for w in self.blocks], dtype=np.int64)
        base = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        per_doc = np.repeat(base, np.diff(self.firsts))
        return np.concatenate(self.blocks), self.starts + per_doc


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
    where = f"{first_name}, {second_name}"
    n1 = len(first)
    if n1 == 0:  # as Haystack: the second list is not looked at (it may be anything)
        raise InputError(f"must both be non-empty lists, got {first_name} of length 0", source=where)
    n2 = len(second)
    if n2 == 0:
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


def _nested_offsets(
    nested: Sequence[Any], name: str, before_error: Callable[[list[Any]], None] | None = None
) -> tuple[Sequence[Any], np.ndarray]:
    """``nested`` (its inner iterables made lists where they have no length) and its offsets.

    An inner value that is not iterable raises ``TypeError`` naming the parameter and the
    question; ``before_error``, when given, is first called with the questions before it
    (as lists), and may raise an error of its own instead.

    Examples
    --------
    >>> docs, offsets = _nested_offsets([["a"], iter(["b", "c"])], "retrieved_documents")
    >>> docs, offsets.tolist()
    ([['a'], ['b', 'c']], [0, 1, 3])
    >>> _nested_offsets([["a"], None], "retrieved_documents")
    Traceback (most recent call last):
    ...
    TypeError: retrieved_documents[1]: expected a list of documents, got None
    """
    try:
        return nested, lengths_to_offsets(nested)
    except TypeError:
        pass
    lists: list[Any] = []
    for i, docs in enumerate(nested):
        if not hasattr(docs, "__len__"):
            try:
                docs = list(docs)
            except TypeError:
                if before_error is not None:
                    before_error(lists)
                raise TypeError(f"{name}[{i}]: expected a list of documents, got {docs!r:.80}") from None
        lists.append(docs)
    return lists, lengths_to_offsets(lists)


class _Unhashable:
    """Marker used while freezing unhashable comparison values."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<{self.name}>"


_LIST = _Unhashable("list")
_DICT = _Unhashable("dict")


def _freeze(value: Any) -> Any:
    """A hashable stand-in that is ``==`` to another stand-in iff the values are ``==``.

    A ``set`` becomes the ``frozenset`` of its items, which is ``==`` to the equal
    ``frozenset`` values, as ``set`` and ``frozenset`` are in Python.

    Examples
    --------
    >>> _freeze({1}) == _freeze(frozenset({1.0})), _freeze([1]) == _freeze((1,))
    (True, False)
    """
    if isinstance(value, list):
        return (_LIST, tuple(_freeze(v) for v in value))
    if isinstance(value, dict):
        return (_DICT, frozenset((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, set):
        return frozenset(value)
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
    gt_values, ret_values : list or None
        Comparison value per flat document (after optional normalization); None while
        the values are held as string columns only (``gt_text`` / ``ret_text``).
    gt_key, ret_key : numpy.ndarray
        int64 keys.
    gt_flag, ret_flag : numpy.ndarray
        uint8 flags: bit 1 = value is not None, bit 2 = value is ``""``.
    gt_gain : numpy.ndarray
        float64 gains (ground-truth ``score``; 1.0 where it is None).
    exact : bool
        Whether keys come from exact interning (no verification needed).
    gt_text, ret_text : polars.Series or None
        The values as string columns (when normalized, or when packing was not possible).
    gt_packed, ret_packed : PackedText or None
        The values packed in byte buffers, when they are all ``str`` or None.
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
    gt_text: Any = None
    ret_text: Any = None
    gt_packed: PackedText | None = None
    ret_packed: PackedText | None = None
    numpy_gain_docs: np.ndarray | None = None
    gt_rep: np.ndarray | None = None

    def individual(self, scores: dict[str, np.ndarray], measure: str) -> list[Any]:
        """One measure's per-question scores (``scores``: from :meth:`score`) as a list of
        Python numbers, typed as Haystack's are: NDCG is the integer ``0`` for a question
        whose ideal DCG is not above 0 (no gain above 0), and ``numpy.float64`` for the
        other questions where a numpy ``score`` (from a NumPy or pandas column, say) is the
        gain kept for a ground-truth value, as Haystack's arithmetic on it gives (a numpy
        score that a repeated value's larger plain score replaces is not used).

        Examples
        --------
        >>> import numpy as np
        >>> from fasteval.evaluators.documents import Document
        >>> gt = [[Document(content="a", score=np.float64(2.0))], [Document(content="a", score=2.0)],
        ...       [Document(content="a", score=0.0)],
        ...       [Document(content="a", score=3.0), Document(content="a", score=np.float64(1.0))]]
        >>> ret = [[Document(content="a")]] * 4
        >>> t = DocumentTable.build(gt, ret, gains=True)
        >>> t.individual(t.score(), "ndcg")
        [np.float64(1.0), 1.0, 0, 1.0]
        """
        out = scores[measure].tolist()
        if measure == "ndcg":
            if self.numpy_gain_docs is not None and self.gt_rep is not None:
                for i in _numpy_gain_rows(self.numpy_gain_docs, self.gt_rep, self.gt_gain,
                                          self.gt_offsets).tolist():
                    out[i] = np.float64(out[i])
            for i in np.flatnonzero(~scores[IDEAL_POSITIVE]).tolist():
                out[i] = 0
        return out

    @classmethod
    def build(cls, ground_truth_documents: Sequence[Sequence[Any]],
              retrieved_documents: Sequence[Sequence[Any]],
              document_comparison_field: str = "content", *, gains: bool = False,
              normalize: bool | Callable[[str], str] = False,
              require_hashable: bool = False) -> DocumentTable:
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
        # NDCG: Haystack checks the ground truth's scores question by question before it reads
        # anything else, so a mixed question comes before any later unreadable input
        check_mixed = _raise_first_mixed if gains else None
        ground_truth_documents, gt_offsets = _nested_offsets(
            ground_truth_documents, "ground_truth_documents", check_mixed)
        retrieved_documents, ret_offsets = _nested_offsets(
            retrieved_documents, "retrieved_documents",
            None if check_mixed is None else lambda _: check_mixed(ground_truth_documents))
        n_gt = int(gt_offsets[-1])
        n_ret = int(ret_offsets[-1])
        if n_gt + n_ret == 0:
            getter: Callable[[Any], Any] = attrgetter("content")  # nothing to read
        else:
            getter = comparison_getter(document_comparison_field)
        mapper = make_normalizer(normalize)
        numpy_docs = None
        if gains and n_gt:
            gt_gain, numpy_docs = _gains(ground_truth_documents, gt_offsets, getter, mapper)
        else:
            gt_gain = np.ones(n_gt, dtype=np.float64)
        table = cls._keyed(
            ground_truth_documents, retrieved_documents, document_comparison_field, getter, mapper,
            gt_offsets, ret_offsets, gt_gain, require_hashable,
        )
        table.numpy_gain_docs = numpy_docs
        return table

    @classmethod
    def _keyed(cls, ground_truth_documents: Sequence[Sequence[Any]],
               retrieved_documents: Sequence[Sequence[Any]], document_comparison_field: str,
               getter: Callable[[Any], Any], mapper: Callable[[Any], Any] | None,
               gt_offsets: np.ndarray, ret_offsets: np.ndarray, gt_gain: np.ndarray,
               require_hashable: bool) -> DocumentTable:
        """The table with its comparison values read and keyed (see :meth:`build`)."""
        if mapper is None:
            gt_packed = _packed_text(ground_truth_documents, gt_offsets, document_comparison_field, getter)
            ret_packed = None if gt_packed is None else _packed_text(
                retrieved_documents, ret_offsets, document_comparison_field, getter)
            if gt_packed is not None and ret_packed is not None:
                (gt_pack, gt_key, gt_flag), (ret_pack, ret_key, ret_flag) = gt_packed, ret_packed
                return cls(
                    gt_offsets, ret_offsets, None, None, gt_key, ret_key, gt_flag, ret_flag, gt_gain,
                    require_hashable=require_hashable, gt_packed=gt_pack, ret_packed=ret_pack,
                )
            gt_text = _text_column(ground_truth_documents, gt_offsets, document_comparison_field, getter)
            if gt_text is not None:
                gt_text = gt_text.rechunk()  # gathered in any order by the verification
            ret_text = None if gt_text is None else _text_column(
                retrieved_documents, ret_offsets, document_comparison_field, getter)
            if ret_text is not None:
                (gt_key, gt_flag), (ret_key, ret_flag) = _string_keys(gt_text, ret_text)
                return cls(
                    gt_offsets, ret_offsets, None, None, gt_key, ret_key, gt_flag, ret_flag, gt_gain,
                    require_hashable=require_hashable, gt_text=gt_text, ret_text=ret_text,
                )
        gt_values = _extract_nested(ground_truth_documents, document_comparison_field, getter)
        ret_values = _extract_nested(retrieved_documents, document_comparison_field, getter)
        _refuse_missing_markers(gt_values, gt_offsets, "ground_truth_documents", document_comparison_field)
        _refuse_missing_markers(ret_values, ret_offsets, "retrieved_documents", document_comparison_field)
        if mapper is not None:
            gt_values = list(map(mapper, gt_values))
            ret_values = list(map(mapper, ret_values))
        table = cls(
            gt_offsets, ret_offsets, gt_values, ret_values,
            np.empty(0, np.int64), np.empty(0, np.int64),
            np.empty(0, np.uint8), np.empty(0, np.uint8), gt_gain,
            require_hashable=require_hashable,
        )
        gt_text, ret_text = _strict_text(gt_values), _strict_text(ret_values)
        if gt_text is not None and ret_text is not None:  # normalized strings
            (table.gt_key, table.gt_flag), (table.ret_key, table.ret_flag) = _string_keys(gt_text, ret_text)
            table.gt_text, table.ret_text = gt_text, ret_text
            return table
        try:
            table.gt_key, table.gt_flag = _hash_keys(gt_values)
            table.ret_key, table.ret_flag = _hash_keys(ret_values)
        except TypeError:
            table._intern_exactly()
        return table

    def _values(self) -> tuple[list[Any], list[Any]]:
        """The comparison values as Python lists (made from the string columns if need be)."""
        if self.gt_values is None:
            self.gt_values = _as_list(self.gt_text, self.gt_packed)
        if self.ret_values is None:
            self.ret_values = _as_list(self.ret_text, self.ret_packed)
        return self.gt_values, self.ret_values

    def _intern_exactly(self) -> None:
        codes: dict[Any, int] = {}
        keys = []
        for values in self._values():
            key = np.empty(len(values), dtype=np.int64)
            flag = np.full(len(values), FLAG_VALID, dtype=np.uint8)
            for i, value in enumerate(values):
                if value is None:
                    flag[i] = 0
                    key[i] = -1
                    continue
                if isinstance(value, str) and value == "":
                    flag[i] |= FLAG_EMPTY
                try:
                    hashable = value if type(value) is str else _freeze_checked(value, self.require_hashable)
                    key[i] = codes.setdefault(hashable, len(codes))
                except TypeError as exc:
                    msg = f"comparison value {value!r} is not hashable"
                    if not self.require_hashable:
                        msg += (f" ({type(value).__module__}.{type(value).__qualname__}), nor a list,"
                                " tuple, dict or set of hashable values")
                    raise TypeError(msg) from exc
            keys.append((key, flag))
        (self.gt_key, self.gt_flag), (self.ret_key, self.ret_flag) = keys
        self.exact = True

    def _verify(self, gt_rep: np.ndarray, ret_match: np.ndarray) -> bool:
        own = np.arange(gt_rep.shape[0])
        dup = np.flatnonzero((gt_rep >= 0) & (gt_rep != own))
        hit = np.flatnonzero(ret_match >= 0)
        if self.gt_packed is not None:  # packed texts: compared byte for byte
            g, r = self.gt_packed, self.ret_packed
            return _packed_equal(g, dup, g, gt_rep[dup]) and _packed_equal(r, hit, g, ret_match[hit])
        if self.gt_text is not None:  # string columns: compared in polars
            return (_same_text(self.gt_text, dup, self.gt_text, gt_rep[dup])
                    and _same_text(self.ret_text, hit, self.gt_text, ret_match[hit]))
        if _pick(self.gt_values, dup) != _pick(self.gt_values, gt_rep[dup]):
            return False
        return _pick(self.ret_values, hit) == _pick(self.gt_values, ret_match[hit])

    def score(self, top_k: int | None = None) -> dict[str, np.ndarray]:
        """Per-question values of every measure in :data:`MEASURES`, and under
        :data:`IDEAL_POSITIVE` whether each question's ideal DCG is above 0.

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
        self.gt_rep = res.gt_rep  # the same for every top_k (it cuts only the rankings)
        out = {name: res.scores[:, j] for j, name in enumerate(MEASURES)}
        out[IDEAL_POSITIVE] = res.ideal_positive
        return out


IDEAL_POSITIVE = "ndcg_ideal_positive"
"""The key of :meth:`DocumentTable.score`'s flags: the question's ideal DCG is above 0."""


def _freeze_checked(value: Any, require_hashable: bool) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        if require_hashable:
            raise
    return _freeze(value)


def _is_pandas_na(tp: type) -> bool:
    return tp.__name__ == "NAType" and tp.__module__.startswith("pandas")


def _refuse_missing_markers(values: list[Any], offsets: np.ndarray, name: str, field_name: str) -> None:
    """Raise ``TypeError`` at the first comparison value that is pandas' ``NA``.

    ``NA`` has no truth value, so no ``==`` on it gives an answer (Haystack's recall, MRR
    and MAP raise pandas' "boolean value of NA is ambiguous" ``TypeError`` on it); a
    document without a value has ``None`` there.

    Examples
    --------
    >>> _refuse_missing_markers(["a", None, 1], np.array([0, 3]), "retrieved_documents", "meta.k")
    """
    if not any(_is_pandas_na(tp) for tp in set(map(type, values))):
        return
    i = next(i for i, v in enumerate(values) if _is_pandas_na(type(v)))
    question = int(np.searchsorted(offsets, i, side="right")) - 1
    position = i - int(offsets[question])
    raise TypeError(
        f"{name}[{question}][{position}]: the {field_name} value is pandas' NA, which no value "
        "can be compared with; a document without a value must have None there"
    )


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


def _as_list(text: Any, packed: PackedText | None) -> list[Any]:
    if packed is not None:
        return [packed.decode(i) for i in range(packed.lens.shape[0])]
    return text.to_list()


def _blocks(offsets: np.ndarray, n: int) -> list[int]:
    """Question indices ending blocks of about :data:`BLOCK_DOCS` documents."""
    total = int(offsets[-1])
    cuts = np.unique(np.searchsorted(offsets, np.arange(0, total, BLOCK_DOCS), side="right") - 1)
    return [*cuts[cuts > 0].tolist(), n] if n else []


_PAD = "\x00" * 23
"""Joined after a block's last value: 24 zero bytes, room for the kernels' 8-byte reads."""


def _ascii_offset() -> int | None:
    """Where a compact ASCII ``str`` keeps its characters, from the object's address
    (CPython: right after the header, ``sys.getsizeof("") - 1`` bytes); checked on a probe
    string, None if the check fails (then texts are encoded instead)."""
    offset = sys.getsizeof("") - 1
    probe = "fasteval" * 4
    try:
        view = np.ctypeslib.as_array((ctypes.c_uint8 * len(probe)).from_address(id(probe) + offset))
        same = view.tobytes() == probe.encode("ascii")
    except (ValueError, TypeError, OverflowError):  # pragma: no cover - another interpreter
        same = False
    return offset if same else None


_ASCII_OFFSET = _ascii_offset()


def _text_words(joined: str) -> tuple[np.ndarray, Any] | None:
    """``joined``'s UTF-8 bytes as uint64 words and the object that holds them: the string
    itself when it is ASCII (its characters are its bytes: no copy), else its encoding.
    None for a lone surrogate (no UTF-8 form)."""
    if _ASCII_OFFSET is not None and joined.isascii():
        address = id(joined) + _ASCII_OFFSET
        if address % 8 == 0:
            words = np.ctypeslib.as_array((ctypes.c_uint64 * (len(joined) // 8)).from_address(address))
            words.flags.writeable = False  # the str's own memory: read only
            return words, joined
    try:
        data = joined.encode("utf-8")
    except UnicodeEncodeError:
        return None
    words = np.frombuffer(data, dtype=np.uint64, count=len(data) // 8)
    if not words.flags.aligned:  # pragma: no cover - bytes objects are 8-byte aligned
        words = words.copy()
    return words, data


def _pack_block(values: list[Any], keys: np.ndarray, flags: np.ndarray,
                starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, Any, np.ndarray | None] | None:
    """Pack one block's values and key them while they are in cache: fills ``keys``,
    ``flags``, ``starts`` and ``lens`` (views of the whole columns) and returns the block's
    words (uint64, 24 zero bytes after the last text), the object that owns them, and the
    validity (None: no None value). None unless every value is a ``str`` or None, without
    NUL characters (the separator) or lone surrogates. ``values`` is used up."""
    valid = None
    strings = values
    strings.append(_PAD)
    try:
        joined = "\x00".join(strings)
    except TypeError:
        strings.pop()
        valid = np.fromiter(map(is_not, values, repeat(None)), dtype=np.bool_, count=len(values))
        strings = [v for v in values if v is not None]
        strings.append(_PAD)
        try:
            joined = "\x00".join(strings)
        except TypeError:
            return None
    m = len(strings) - 1
    if m == 0:  # nothing but None (or nothing at all)
        keys[:], flags[:], starts[:], lens[:] = 0, 0, 0, 0
        words = np.zeros(4, dtype=np.uint64)
        words.flags.writeable = False
        return words, None, valid
    packed = _text_words(joined)
    if packed is None:
        return None
    words, owner = packed
    size = (len(joined) if owner is joined else len(owner)) - 24  # bytes before the padding
    if valid is None:
        if not split_text_keys(words, size, starts, lens, keys, flags):
            return None  # a value holds NUL: it split in two
    else:
        k = np.empty(m, dtype=np.int64)
        f = np.empty(m, dtype=np.uint8)
        st = np.empty(m, dtype=np.int64)
        ln = np.empty(m, dtype=np.int64)
        if not split_text_keys(words, size, st, ln, k, f):
            return None
        keys[valid], flags[valid], starts[valid], lens[valid] = k, f, st, ln
        invalid = ~valid
        keys[invalid], flags[invalid], starts[invalid], lens[invalid] = 0, 0, 0, 0
    return words, owner, valid


def _packed_text(
    nested: Sequence[Sequence[Any]], offsets: np.ndarray, field_name: str, getter: Callable[[Any], Any],
) -> tuple[PackedText, np.ndarray, np.ndarray] | None:
    """All values packed and keyed a block of questions at a time: ``(packed, keys, flags)``;
    None as soon as one value cannot be packed (see :func:`_pack_block`)."""
    total = int(offsets[-1])
    keys = np.empty(total, dtype=np.int64)
    flags = np.empty(total, dtype=np.uint8)
    starts = np.empty(total, dtype=np.int64)
    lens = np.empty(total, dtype=np.int64)
    valid: np.ndarray | None = None
    blocks: list[np.ndarray] = []
    owners: list[Any] = []
    firsts = [0]
    done = 0
    start = 0
    for end in _blocks(offsets, len(nested)):
        values = _extract_nested(nested[start:end], field_name, getter)
        m = len(values)
        sl = slice(done, done + m)
        packed = _pack_block(values, keys[sl], flags[sl], starts[sl], lens[sl])
        if packed is None:
            return None
        words, owner, b_valid = packed
        owners.append(owner)
        if b_valid is not None:
            if valid is None:
                valid = np.ones(total, dtype=np.bool_)
            valid[sl] = b_valid
        blocks.append(words)
        done += m
        firsts.append(done)
        start = end
    if not blocks:
        blocks.append(np.zeros(2, dtype=np.uint64))
    packed_text = PackedText(blocks, np.array(firsts, dtype=np.int64), starts, lens, valid, owners)
    return packed_text, keys, flags


def _packed_equal(a: PackedText, ia: np.ndarray, b: PackedText, ib: np.ndarray) -> bool:
    """Whether text ``ia[k]`` of ``a`` equals text ``ib[k]`` of ``b`` for every k (``ia``
    ascending: compared a block of ``a`` at a time)."""
    if ia.size == 0:
        return True
    b_words, b_starts = b.joined()
    cuts = np.searchsorted(ia, a.firsts)
    for k, words in enumerate(a.blocks):
        lo, hi = int(cuts[k]), int(cuts[k + 1])
        if hi > lo and not texts_equal(words, a.starts, a.lens, ia[lo:hi], b_words, b_starts, b.lens, ib[lo:hi]):
            return False
    return True


def _text_column(
    nested: Sequence[Sequence[Any]], offsets: np.ndarray, field_name: str, getter: Callable[[Any], Any]
) -> Any:
    """The comparison values as a polars string column, read a block of questions at a time
    (each block's values are converted while still in cache); None as soon as one value is
    not a ``str`` or None."""
    import polars as pl

    parts = []
    start = 0
    for end in _blocks(offsets, len(nested)):
        part = _strict_text(_extract_nested(nested[start:end], field_name, getter))
        if part is None:
            return None
        parts.append(part)
        start = end
    if not parts:
        return pl.Series([], dtype=pl.String)
    return pl.concat(parts, rechunk=False) if len(parts) > 1 else parts[0]


def _strict_text(values: list[Any]) -> Any:
    """``values`` as a polars string column, or None unless every value is a ``str`` or None.

    The types are checked before polars sees the values: polars panics (a ``BaseException``
    that no ``except Exception`` stops) on some others, such as a list holding a set.

    Examples
    --------
    >>> _strict_text(["a", None]).to_list(), _strict_text(["a", [{1}]])
    (['a', None], None)
    """
    import polars as pl

    if not all(t is NoneType or issubclass(t, str) for t in set(map(type, values))):
        return None
    try:
        return pl.Series(values, dtype=pl.String, strict=True)
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
        return None


def _string_keys(*sides: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """Keys (polars' 64-bit string hash) and flags of string columns."""
    out = []
    for s in sides:
        key = s.hash(seed=0).to_numpy().view(np.int64)
        if s.null_count():
            flag = np.where(s.is_null().to_numpy(), np.uint8(0), FLAG_VALID).astype(np.uint8)
        else:
            flag = np.full(len(s), FLAG_VALID, dtype=np.uint8)
        flag[(s.str.len_bytes() == 0).fill_null(False).to_numpy()] |= FLAG_EMPTY
        out.append((key, flag))
    return out


def _gather(s: Any, index: np.ndarray) -> Any:
    """``s.gather(index)`` for an ascending ``index``, one chunk at a time (a gather across
    many chunks looks each index's chunk up)."""
    chunks = s.get_chunks()
    if len(chunks) == 1:
        return s.gather(index)
    ends = np.cumsum([len(c) for c in chunks])
    cuts = np.searchsorted(index, ends)
    parts, start, lo = [], 0, 0
    for chunk, end, hi in zip(chunks, ends.tolist(), cuts.tolist(), strict=True):
        if hi > lo:
            parts.append(chunk.gather(index[lo:hi] - start))
        start, lo = end, hi
    if len(parts) == 1:
        return parts[0]
    import polars as pl

    return pl.concat(parts, rechunk=False)


def _same_text(a: Any, ia: np.ndarray, b: Any, ib: np.ndarray) -> bool:
    """Whether ``a[ia[k]] == b[ib[k]]`` for every k (polars string columns; ``ia`` ascending)."""
    if ia.size == 0:
        return True
    return bool((_gather(a, ia) == b.gather(ib)).all())


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


_PLAIN_SCORES = frozenset({float, int, bool, type(None)})


def _gains(ground_truth_documents: Sequence[Sequence[Any]], gt_offsets: np.ndarray,
           getter: Callable[[Any], Any],
           mapper: Callable[[Any], Any] | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Ground-truth gains, and which documents (or None) hold a numpy score that Haystack
    would use as a gain (see :func:`_numpy_gain_rows`).

    Raises ``InputError`` if a question mixes scored and unscored documents, and Haystack's
    ``TypeError`` for a score that is not a real number (a string, a ``Decimal``, a list) on
    a document with a comparison value; such a score on a document without one is unused.
    """
    try:
        scores = [doc.score for docs in ground_truth_documents for doc in docs]
    except AttributeError:  # a document without a score: an earlier mixed question comes first
        _raise_first_mixed(ground_truth_documents)
        raise
    numpy_docs = None
    plain = _PLAIN_SCORES.issuperset(map(type, scores))
    if plain:
        try:
            gain = np.array(scores, dtype=np.float64)  # None -> NaN
        except OverflowError:  # an int beyond float64: an error where Haystack uses it
            plain = False
    if not plain:
        gain, numpy_docs = _odd_gains(ground_truth_documents, gt_offsets, scores, getter, mapper)
    missing = np.zeros(len(scores), dtype=np.bool_)
    for i in np.flatnonzero(np.isnan(gain)).tolist():
        if scores[i] is None:
            missing[i] = True
    if missing.any():
        refuse_mixed(missing, gt_offsets, _mixed_error)
        gain[missing] = 1.0
    return gain, numpy_docs


def _odd_gains(ground_truth_documents: Sequence[Sequence[Any]], gt_offsets: np.ndarray,
               scores: list[Any], getter: Callable[[Any], Any],
               mapper: Callable[[Any], Any] | None) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`_gains` for scores that are not all plain ``float`` / ``int`` / None, or that
    hold an ``int`` beyond float64 (``OverflowError``, as Haystack's arithmetic raises, unless
    its document has no comparison value): the gains and the mask of documents with a
    comparison value and a numpy score (or None)."""
    docs = [doc for question in ground_truth_documents for doc in question]
    gain = np.empty(len(scores), dtype=np.float64)
    numpy_doc = np.zeros(len(scores), dtype=np.bool_)
    # the mixed-scores error comes first, as in Haystack
    refuse_mixed(np.array([s is None for s in scores], dtype=np.bool_), gt_offsets, _mixed_error)
    for i, score in enumerate(scores):
        if score is None:
            gain[i] = np.nan
            continue
        if type(score) in _PLAIN_SCORES:
            try:
                gain[i] = score
                continue
            except OverflowError:  # an int beyond float64: Haystack's arithmetic raises this
                pass  # error on it, unless the document has no comparison value
        value = getter(docs[i])
        if mapper is not None:
            value = mapper(value)
        if value is None:  # never matched: Haystack does not use its score
            gain[i] = 0.0
            continue
        if type(score) is int:
            gain[i] = score  # beyond float64: OverflowError, as Haystack's arithmetic raises
            continue
        if isinstance(score, numbers.Real):
            gain[i] = float(score)
        else:
            # the operations Haystack applies to a gain, so that its TypeError is raised
            gain[i] = float(max(score, score) / 1.0)
        # numpy.bool_ is no numbers.Real, yet its arithmetic gives numpy floats as well
        numpy_doc[i] = isinstance(score, np.generic)
    return gain, (numpy_doc if numpy_doc.any() else None)


def _numpy_gain_rows(
    numpy_doc: np.ndarray, gt_rep: np.ndarray, gain: np.ndarray, gt_offsets: np.ndarray
) -> np.ndarray:
    """The questions whose nDCG Haystack's arithmetic makes a ``numpy.float64``: those where
    the gain kept for some ground-truth value came from a numpy score.

    A repeated value keeps its first document's gain unless a later one is larger (Python's
    ``max(kept, new)``: NaN never replaces and is never replaced), so a numpy score that
    loses to a plain one never enters the arithmetic. ``gt_rep`` (from the kernel) maps each
    document to the first document with its value (-1 without a value).

    Examples
    --------
    >>> import numpy as np
    >>> rows = _numpy_gain_rows(np.array([True, False, True, False]), np.array([0, 0, 2, 2]),
    ...                         np.array([1.0, 3.0, 2.0, 2.0]), np.array([0, 2, 4]))
    >>> rows.tolist()  # question 0: its numpy 1.0 loses to 3.0; question 1: its numpy 2.0 comes first
    [1]
    """
    docs = np.flatnonzero(gt_rep >= 0)
    if docs.size == 0:
        return np.empty(0, dtype=np.int64)
    order = np.lexsort((docs, gt_rep[docs]))  # by value's group, in document order
    docs = docs[order]
    groups = gt_rep[docs]
    starts = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1])))
    group_of = np.repeat(np.arange(starts.size), np.diff(np.append(starts, docs.size)))
    g = gain[docs]
    # the kept gain: the first one if it is NaN, else the first occurrence of the largest
    # of the others that are not NaN
    finite = np.where(np.isnan(g), -np.inf, g)
    best = np.maximum.reduceat(finite, starts)
    is_best = finite == best[group_of]
    first_best = np.full(starts.size, docs.size, dtype=np.int64)
    np.minimum.at(first_best, group_of[is_best], np.flatnonzero(is_best))
    kept = np.where(np.isnan(g[starts]), starts, first_best)
    kept_docs = docs[kept]
    question = np.searchsorted(gt_offsets, kept_docs, side="right") - 1
    return np.unique(question[numpy_doc[kept_docs]])


def _mixed_error(row: int) -> InputError:
    return InputError(
        "either none or all documents of a question's ground truth must have a score",
        source="ground_truth_documents",
        row=row,
    )


def _raise_first_mixed(questions: Sequence[Sequence[Any]]) -> None:
    """Haystack's NDCG score check, question by question: raise the mixed-scores error of
    the first question mixing scored and unscored documents that comes before the first
    document without a ``score`` (read in Haystack's order); return when there is none.

    Examples
    --------
    >>> from fasteval.evaluators import Document
    >>> _raise_first_mixed([[Document(content="a")], [None]])
    >>> _raise_first_mixed([[Document(content="a", score=1.0), Document(content="b")], [None]])
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: ground_truth_documents, row 0: either none or all documents of a question's ground truth must have a score
    """
    for q, docs in enumerate(questions):
        try:  # Haystack's short-circuit order: a question is mixed once both kinds were seen
            mixed = any(doc.score is not None for doc in docs) and any(doc.score is None for doc in docs)
        except (AttributeError, TypeError):
            return
        if mixed:
            raise _mixed_error(q)


def refuse_mixed(missing: np.ndarray, offsets: np.ndarray, error: Callable[[int], Exception]) -> None:
    """Raise ``error(row)`` for the first question (row) where some documents but not all
    are ``missing`` a gain.

    Examples
    --------
    >>> refuse_mixed(np.array([True, True, False]), np.array([0, 2, 3]), ValueError)
    >>> refuse_mixed(np.array([False, True, True]), np.array([0, 2, 3]), ValueError)
    Traceback (most recent call last):
    ...
    ValueError: 0
    """
    cum = np.concatenate(([0], np.cumsum(missing, dtype=np.int64)))
    n_missing = cum[offsets[1:]] - cum[offsets[:-1]]
    mixed = np.flatnonzero((n_missing > 0) & (n_missing < np.diff(offsets)))
    if mixed.size:
        raise error(int(mixed[0]))
