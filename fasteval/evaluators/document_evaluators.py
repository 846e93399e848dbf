"""Document evaluators with Haystack's inputs, outputs and semantics, on flat columns.

``DocumentRecallEvaluator``, ``DocumentMRREvaluator``, ``DocumentMAPEvaluator`` and
``DocumentNDCGEvaluator`` take ``ground_truth_documents`` and
``retrieved_documents`` (one list of documents per question) and return
``{"score": mean, "individual_scores": [...]}`` exactly as haystack-ai 3.x does:

* comparison values come from ``document_comparison_field`` (``"content"``,
  ``"id"`` or ``"meta.a.b"``; a missing meta key gives ``None``);
* ``None`` values never match; recall also ignores ``""`` (MRR/MAP/NDCG do not);
* each distinct ground-truth value is credited at most once (duplicates in either
  list do not inflate recall, AP or DCG);
* NDCG gains are the ground-truth ``score`` when every document of the question
  has one, 1.0 when none has, and an error when they are mixed; duplicated
  ground-truth values keep their largest gain; a gain that is not a real number
  (a string, a ``Decimal``) raises Haystack's ``TypeError``, an integer too large for a
  float its ``OverflowError`` (such scores are unused on a document without a comparison
  value); a question whose ideal DCG is not above 0 scores the integer ``0``, and one
  whose kept gains include a numpy score scores a ``numpy.float64``, as Haystack's
  arithmetic gives;
* empty outer lists or lists of different length raise ``ValueError``.

Known differences from haystack-ai (all deliberate):

* an invalid ``document_comparison_field`` raises ``ParameterError`` (a
  ``ValueError``) in the constructor; Haystack raises ``ValueError`` at the first
  document it reads;
* errors are fasteval's ``InputError`` / ``ParameterError`` (both ``ValueError``)
  with messages naming the parameter and the values received; unhashable
  comparison values still raise ``TypeError`` in recall and NDCG;
* NDCG computes in float64: ``numpy.float32`` / ``numpy.float16`` gains give
  ``numpy.float64`` scores, where Haystack's arithmetic stays in the lower precision;
* every retrieved document is read, so a malformed one after the first hit raises
  in MRR, where Haystack stops reading at the first hit;
* comparison values follow Python's ``==`` as an equivalence (``1 == 1.0 == True``,
  ``[1] == [1.0]``, ``{1} == frozenset({1})``). A numpy array raises ``TypeError`` in all
  four evaluators, naming the value and its type; Haystack's MRR and MAP compare it with
  numpy's elementwise ``==`` instead, so a one-element array matches a number or a list
  holding its element and a longer one raises numpy's "truth value of an array is
  ambiguous" ``ValueError`` (recall and NDCG raise ``TypeError`` on it too). For the same
  reason a numpy scalar never matches a list here, where Haystack's MRR and MAP match
  ``numpy.int64(1)`` to ``[1]`` and raise on ``[1, 2]``: accidents of broadcasting, not
  comparison rules. Likewise ``numpy.float32(0.1) == 0.1`` under NumPy 2 while their
  hashes differ: Haystack's MRR and MAP match them, its recall and NDCG do not, and none
  of the four does here;
* a comparison value that is pandas' ``NA`` raises ``TypeError`` naming the document, in
  all four evaluators; Haystack's recall raises pandas' "boolean value of NA is ambiguous"
  ``TypeError``, its MRR and MAP raise it unless the ``NA`` meets itself (then it is a
  match), and its NDCG matches ``NA`` to ``NA``: a missing value is no value to match on
  (``None`` is the missing value that never matches);
* a question's documents may come as any iterable (a generator, say), as Haystack's
  recall, MRR and MAP accept them; Haystack's NDCG scores such questions 0, as its input
  check uses the documents up before they are scored; a question that is no iterable
  (``None``) raises ``TypeError`` naming the parameter and the question;
* ``mode`` must be one of the two modes; Haystack's constructor keeps any other value
  (``None``, say) and its ``run`` then fails with ``NameError``;
* recall logs no warning for questions without comparable values;
* an NDCG score that is an integer too large for a float raises ``OverflowError`` even when
  a larger gain of the same comparison value (``inf``, a larger integer) displaces it,
  where Haystack then never divides it.

Extras (keyword-only, off by default): ``top_k`` (score only the first k retrieved
documents) and ``normalize`` (NFKC + case folding + whitespace collapsing of
string values on both sides), and :func:`evaluate_documents` for several
measures and cutoffs from one conversion.

Examples
--------
>>> from fasteval.evaluators import Document, DocumentMAPEvaluator
>>> ev = DocumentMAPEvaluator()
>>> out = ev.run(
...     ground_truth_documents=[[Document(content="France")],
...                             [Document(content="9th century"), Document(content="9th")]],
...     retrieved_documents=[[Document(content="France")],
...                          [Document(content="9th century"), Document(content="10th century"),
...                           Document(content="9th")]])
>>> out["individual_scores"], round(out["score"], 4)
([1.0, 0.8333333333333333], 0.9167)
"""

from __future__ import annotations

import math
import re
import types
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any, ClassVar

from fasteval.errors import ParameterError
from fasteval.evaluators.base import HaystackComponent
from fasteval.evaluators.columnar import MEASURES, DocumentTable, check_pair_lengths
from fasteval.evaluators.documents import (
    Document,
    check_comparison_field,
    comparison_getter,
    make_normalizer,
)

__all__ = [
    "RecallMode",
    "DocumentRecallEvaluator",
    "DocumentMRREvaluator",
    "DocumentMAPEvaluator",
    "DocumentNDCGEvaluator",
    "evaluate_documents",
]


class RecallMode(Enum):
    """How :class:`DocumentRecallEvaluator` scores a question.

    ``SINGLE_HIT``: 1.0 if any ground-truth value was retrieved, else 0.0.
    ``MULTI_HIT``: the fraction of distinct ground-truth values retrieved.

    Examples
    --------
    >>> RecallMode.from_str("multi_hit"), str(RecallMode.SINGLE_HIT)
    (<RecallMode.MULTI_HIT: 'multi_hit'>, 'single_hit')
    """

    SINGLE_HIT = "single_hit"
    MULTI_HIT = "multi_hit"

    def __str__(self) -> str:
        return self.value

    @staticmethod
    def from_str(string: str) -> RecallMode:
        """Parse ``"single_hit"`` / ``"multi_hit"`` (``ParameterError`` otherwise)."""
        for mode in RecallMode:
            if mode.value == string:
                return mode
        raise ParameterError("mode", f"one of {[m.value for m in RecallMode]}", string)


_MAX_K = 2**63 - 1  # the kernels' cutoffs are int64


def _check_top_k(top_k: int | None) -> int | None:
    if top_k is None:
        return None
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= _MAX_K:
        raise ParameterError("top_k", "a positive integer (at most 2**63 - 1) or None", top_k)
    return top_k


def _renamed(func: Any, qualname: str) -> Any:
    """A copy of ``func`` whose qualified name, in its code too, is ``qualname``."""
    code = func.__code__
    if hasattr(code, "co_qualname"):  # Python 3.11+: argument errors name co_qualname
        code = code.replace(co_qualname=qualname)
    copy = types.FunctionType(code, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__annotations__ = dict(func.__annotations__)
    copy.__doc__, copy.__module__, copy.__qualname__ = func.__doc__, func.__module__, qualname
    copy.__dict__.update(func.__dict__)
    return copy


class _DocumentEvaluator(HaystackComponent):
    """Common code of the four document evaluators."""

    _measure: ClassVar[str] = ""
    _gains: ClassVar[bool] = False
    _require_hashable: ClassVar[bool] = False
    _output_types: ClassVar[dict[str, Any]] = {"score": float, "individual_scores": list[float]}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Python words a call's argument errors with the function's own name: each evaluator
        # gets its copy of the shared methods, so that a missing or unknown argument reads
        # "DocumentMAPEvaluator.run() missing ...", as Haystack's does
        for name in ("__init__", "run"):
            if name not in cls.__dict__:
                setattr(cls, name, _renamed(getattr(cls, name), f"{cls.__name__}.{name}"))

    def __init__(self, document_comparison_field: str = "content", *, top_k: int | None = None,
                 normalize: bool = False) -> None:
        check_comparison_field(document_comparison_field)
        if not isinstance(normalize, bool):
            raise ParameterError("normalize", "True or False", normalize)
        self.document_comparison_field = document_comparison_field
        self.top_k = _check_top_k(top_k)
        self.normalize = normalize

    def _init_parameters(self) -> dict[str, Any]:
        params: dict[str, Any] = {"document_comparison_field": self.document_comparison_field}
        if self.top_k is not None:
            params["top_k"] = self.top_k
        if self.normalize:
            params["normalize"] = self.normalize
        return params

    def _measure_name(self) -> str:
        return self._measure

    def run(self, ground_truth_documents: list[list[Document]],
            retrieved_documents: list[list[Document]]) -> dict[str, Any]:
        """Score each question and average.

        Parameters
        ----------
        ground_truth_documents : list of list of Document
            Expected documents, one list per question (any objects with ``content``,
            ``id``, ``meta``, ``score``, e.g. ``haystack.Document``).
        retrieved_documents : list of list of Document
            Retrieved documents in rank order, one list per question.

        Returns
        -------
        dict
            ``score`` (mean of the individual scores) and ``individual_scores``.
        """
        check_pair_lengths(
            ground_truth_documents, retrieved_documents,
            "ground_truth_documents", "retrieved_documents",
        )
        table = DocumentTable.build(
            ground_truth_documents, retrieved_documents, self.document_comparison_field,
            gains=self._gains, normalize=self.normalize, require_hashable=self._require_hashable,
        )
        measure = self._measure_name()
        individual = table.individual(table.score(self.top_k), measure)
        return {"score": sum(individual) / len(individual), "individual_scores": individual}


class DocumentRecallEvaluator(_DocumentEvaluator):
    """Recall of the retrieved documents against the ground truth, per question.

    Parameters
    ----------
    mode : RecallMode or str
        ``"single_hit"`` (default): 1.0 if any distinct ground-truth value was
        retrieved; ``"multi_hit"``: the fraction retrieved.
    document_comparison_field : str
        ``"content"``, ``"id"`` or ``"meta.<key>[.<key>...]"``.
    top_k : int, optional
        Only the first ``top_k`` retrieved documents count (extra).
    normalize : bool
        Normalize string values (NFKC, case folding, whitespace) before comparing (extra).

    Examples
    --------
    >>> ev = DocumentRecallEvaluator(mode="multi_hit")
    >>> ev.run([[Document(content="a"), Document(content="b")]],
    ...        [[Document(content="b"), Document(content="c")]])["individual_scores"]
    [0.5]
    """

    _require_hashable = True

    def __init__(self, mode: str | RecallMode = RecallMode.SINGLE_HIT,
                 document_comparison_field: str = "content", *, top_k: int | None = None,
                 normalize: bool = False) -> None:
        if isinstance(mode, str):
            mode = RecallMode.from_str(mode)
        elif not isinstance(mode, RecallMode):
            # accept haystack's own RecallMode (same values)
            mode = RecallMode.from_str(getattr(mode, "value", mode))
        self.mode = mode
        super().__init__(document_comparison_field, top_k=top_k, normalize=normalize)

    def _measure_name(self) -> str:
        return "recall_single_hit" if self.mode is RecallMode.SINGLE_HIT else "recall_multi_hit"

    def _init_parameters(self) -> dict[str, Any]:
        return {"mode": str(self.mode), **super()._init_parameters()}


class DocumentMRREvaluator(_DocumentEvaluator):
    """Reciprocal rank of the first retrieved document matching the ground truth.

    Parameters are those of :class:`DocumentRecallEvaluator` without ``mode``.

    Examples
    --------
    >>> DocumentMRREvaluator().run([[Document(content="b")]],
    ...     [[Document(content="a"), Document(content="b")]])["individual_scores"]
    [0.5]
    """

    _measure = "mrr"


class DocumentMAPEvaluator(_DocumentEvaluator):
    """Average precision per question: mean over distinct ground-truth values of the
    precision at the rank where each is first retrieved (0 for those never retrieved).

    Examples
    --------
    >>> DocumentMAPEvaluator().run([[Document(content="a"), Document(content="b")]],
    ...     [[Document(content="a"), Document(content="x"), Document(content="b")]])["score"]
    0.8333333333333333
    """

    _measure = "map"


class DocumentNDCGEvaluator(_DocumentEvaluator):
    """Normalized discounted cumulative gain, ``gain / log2(rank + 1)``.

    Gains are the ground-truth documents' ``score`` when all of a question's
    ground-truth documents have one, else 1.0 (mixing raises ``ValueError``).

    Examples
    --------
    >>> out = DocumentNDCGEvaluator().run(
    ...     [[Document(content="France", score=1.0), Document(content="Paris", score=0.5)]],
    ...     [[Document(content="France"), Document(content="Germany"), Document(content="Paris")]])
    >>> round(out["score"], 4)
    0.9502
    """

    _measure = "ndcg"
    _gains = True
    _require_hashable = True

    # -- Haystack's public helpers (one question at a time, plain Python) ------------------
    @staticmethod
    def validate_inputs(gt_docs: list[list[Document]], ret_docs: list[list[Document]]) -> None:
        """Haystack's input checks, with its messages (``ValueError``).

        Raises when either list is empty, when their lengths differ, or when a question's
        ground truth mixes documents with and without a ``score``.

        Examples
        --------
        >>> DocumentNDCGEvaluator.validate_inputs([[Document(content="a")]], [[]])
        >>> DocumentNDCGEvaluator.validate_inputs([], [])
        Traceback (most recent call last):
        ...
        ValueError: ground_truth_documents and retrieved_documents must be provided.
        """
        if len(gt_docs) == 0 or len(ret_docs) == 0:
            raise ValueError("ground_truth_documents and retrieved_documents must be provided.")
        if len(gt_docs) != len(ret_docs):
            raise ValueError("The length of ground_truth_documents and retrieved_documents must be the same.")
        for docs in gt_docs:
            scored = [doc.score is not None for doc in docs]
            if any(scored) and not all(scored):
                raise ValueError(
                    "Either none or all documents in each list of ground_truth_documents must have a score."
                )

    def _relevance_map(self, gt_docs: list[Document]) -> dict[Any, float]:
        """Comparison value -> gain (the largest for a repeated value); None values skipped."""
        get = comparison_getter(self.document_comparison_field)
        mapper = make_normalizer(self.normalize)
        gains: dict[Any, float] = {}
        for doc in gt_docs:
            value = get(doc)
            if mapper is not None:
                value = mapper(value)
            if value is None:
                continue
            gain = doc.score if doc.score is not None else 1.0
            gains[value] = max(gains.get(value, gain), gain)
        return gains

    def calculate_dcg(self, gt_docs: list[Document], ret_docs: list[Document]) -> float:
        """Discounted cumulative gain of one question's ranking, ``gain / log2(rank + 1)``.

        Each ground-truth value is credited once, at its first retrieved position; only the
        first ``top_k`` retrieved documents count when ``top_k`` is set.

        Examples
        --------
        >>> ev = DocumentNDCGEvaluator()
        >>> ev.calculate_dcg([Document(content="d1"), Document(content="d2")],
        ...                  [Document(content="d2"), Document(content="d3"), Document(content="d1")])
        1.5
        """
        gains = self._relevance_map(gt_docs)
        get = comparison_getter(self.document_comparison_field)
        mapper = make_normalizer(self.normalize)
        ranking = ret_docs if self.top_k is None else ret_docs[: self.top_k]
        dcg = 0.0
        for rank, doc in enumerate(ranking, start=1):
            value = get(doc)
            if mapper is not None:
                value = mapper(value)
            if value is not None and value in gains:
                dcg += gains.pop(value) / math.log2(rank + 1)
        return dcg

    def calculate_idcg(self, gt_docs: list[Document]) -> float:
        """Ideal DCG: the distinct ground-truth gains in decreasing order (``top_k`` cuts only
        the ranking, as in :meth:`run`).

        Examples
        --------
        >>> ev = DocumentNDCGEvaluator()
        >>> round(ev.calculate_idcg([Document(content="d1"), Document(content="d2")]), 4)
        1.6309
        """
        ideal = sorted(self._relevance_map(gt_docs).values(), reverse=True)
        return sum((gain / math.log2(rank + 1) for rank, gain in enumerate(ideal, start=1)), 0.0)


_NAME_RE = re.compile(r"^(?P<name>[a-z_]+)(?:@(?P<k>\d+))?$")
_ALIASES = {
    "recall": "recall_single_hit",
    "recall_single_hit": "recall_single_hit",
    "single_hit": "recall_single_hit",
    "recall_multi_hit": "recall_multi_hit",
    "multi_hit": "recall_multi_hit",
    "mrr": "mrr",
    "map": "map",
    "ndcg": "ndcg",
}


def _parse_measure(name: str) -> tuple[str, int | None]:
    m = _NAME_RE.match(name.strip().lower()) if isinstance(name, str) else None
    if m is None or m.group("name") not in _ALIASES:
        raise ParameterError(
            "measures", f"names among {sorted(_ALIASES)} with an optional @k cutoff", name
        )
    k = m.group("k")
    if k is not None and not 1 <= int(k) <= _MAX_K:
        raise ParameterError("measures", "a cutoff @k with 1 <= k <= 2**63 - 1", name)
    return _ALIASES[m.group("name")], (int(k) if k is not None else None)


def evaluate_documents(ground_truth_documents: list[list[Any]],
                       retrieved_documents: list[list[Any]], measures: Iterable[str] = MEASURES, *,
                       document_comparison_field: str = "content",
                       normalize: bool | Callable[[str], str] = False) -> dict[str, dict[str, Any]]:
    """Several measures (and cutoffs) from one conversion of the documents.

    Parameters
    ----------
    ground_truth_documents, retrieved_documents : list of list of documents
        As for the evaluators.
    measures : str or iterable of str
        One name, or several: any of ``recall_single_hit`` (``recall``), ``recall_multi_hit``, ``mrr``,
        ``map``, ``ndcg``, each optionally with a cutoff ``@k`` (``"ndcg@10"``).
        Each gives the same numbers as the matching evaluator (with ``top_k=k``).
    document_comparison_field : str
        ``"content"``, ``"id"`` or ``"meta.<key>[.<key>...]"``.
    normalize : bool or callable
        Normalize string values before comparing.

    Returns
    -------
    dict
        ``{measure name as given: {"score": float, "individual_scores": list}}``.

    Examples
    --------
    >>> gt = [[Document(content="a", score=2.0), Document(content="b", score=1.0)]]
    >>> ret = [[Document(content="b"), Document(content="a")]]
    >>> res = evaluate_documents(gt, ret, ["mrr", "map@1", "ndcg"])
    >>> res["mrr"]["score"], res["map@1"]["score"], round(res["ndcg"]["score"], 4)
    (1.0, 0.5, 0.8597)
    """
    names = [measures] if isinstance(measures, str) else list(measures)
    if not names:
        raise ParameterError("measures", "a non-empty list of measure names", names)
    parsed = {name: _parse_measure(name) for name in names}
    check_pair_lengths(
        ground_truth_documents, retrieved_documents, "ground_truth_documents", "retrieved_documents"
    )
    check_comparison_field(document_comparison_field)
    families = {family for family, _ in parsed.values()}
    table = DocumentTable.build(
        ground_truth_documents, retrieved_documents, document_comparison_field,
        gains="ndcg" in families, normalize=normalize,
        require_hashable=bool(families & {"ndcg", "recall_single_hit", "recall_multi_hit"}),
    )
    by_cutoff: dict[int | None, dict[str, Any]] = {}
    out: dict[str, dict[str, Any]] = {}
    for name, (family, k) in parsed.items():
        if k not in by_cutoff:
            by_cutoff[k] = table.score(k)
        individual = table.individual(by_cutoff[k], family)
        out[name] = {"score": sum(individual) / len(individual), "individual_scores": individual}
    return out
