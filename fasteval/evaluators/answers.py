"""Answer evaluators: exact match (Haystack's), plus normalized exact match and token F1.

``AnswerExactMatchEvaluator().run(ground_truth_answers, predicted_answers)``
returns ``{"individual_scores": [1 or 0 per question], "score": mean}`` with
Haystack's semantics (plain ``==`` per question, ``ValueError`` on empty or
unequal-length inputs).  ``normalize=True`` compares answers after SQuAD-style
normalization (lower case, punctuation and the articles a/an/the removed,
whitespace collapsed); :class:`AnswerF1Evaluator` scores token-overlap F1 on the
same normalized tokens.  Both are extras, off by default.

Examples
--------
>>> AnswerExactMatchEvaluator().run(["Berlin", "Paris"], ["Berlin", "Lyon"])
{'individual_scores': [1, 0], 'score': 0.5}
>>> AnswerExactMatchEvaluator(normalize=True).run(["The Eiffel Tower"], ["eiffel tower!"])["score"]
1.0
>>> round(AnswerF1Evaluator().run(["the cat sat"], ["a cat sat down"])["score"], 4)
0.8
"""

from __future__ import annotations

import re
import string
from collections import Counter
from operator import eq
from typing import Any, ClassVar

from fasteval.errors import InputError, ParameterError
from fasteval.evaluators.base import HaystackComponent
from fasteval.evaluators.columnar import check_pair_lengths

__all__ = [
    "AnswerExactMatchEvaluator",
    "AnswerF1Evaluator",
    "normalize_answer",
    "exact_match_scores",
    "token_f1_scores",
]

_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD normalization: lower case, drop punctuation and articles, collapse spaces.

    Examples
    --------
    >>> normalize_answer("  The  Eiffel-Tower, Paris! ")
    'eiffeltower paris'
    """
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split())


def _normalized(values: list[Any], name: str) -> list[str]:
    """The values normalized (:func:`normalize_answer`); ``InputError`` at one that is no string."""
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise InputError(f"expected a string, got {value!r}", source=name, row=i)
    return list(map(normalize_answer, values))


def exact_match_scores(
    ground_truth_answers: list[Any], predicted_answers: list[Any], *, normalize: bool = False
) -> list[int]:
    """1 where the prediction equals the ground truth (optionally after normalization).

    Examples
    --------
    >>> exact_match_scores(["a", "b"], ["a", "B"]), exact_match_scores(["a", "b"], ["a", "B"], normalize=True)
    ([1, 0], [1, 1])
    """
    if normalize:
        ground_truth_answers = _normalized(ground_truth_answers, "ground_truth_answers")
        predicted_answers = _normalized(predicted_answers, "predicted_answers")
    return [1 if same else 0 for same in map(eq, ground_truth_answers, predicted_answers)]


def _f1(truth: str, prediction: str) -> float:
    t = truth.split()
    p = prediction.split()
    if not t or not p:
        return float(t == p)
    common = sum((Counter(t) & Counter(p)).values())
    if common == 0:
        return 0.0
    precision = common / len(p)
    recall = common / len(t)
    return 2 * precision * recall / (precision + recall)


def token_f1_scores(ground_truth_answers: list[str], predicted_answers: list[str]) -> list[float]:
    """SQuAD token F1 between normalized answers (1.0 if both normalize to nothing).

    Examples
    --------
    >>> token_f1_scores(["new york city"], ["york city"])
    [0.8]
    """
    gt = _normalized(ground_truth_answers, "ground_truth_answers")
    return list(map(_f1, gt, _normalized(predicted_answers, "predicted_answers")))


class AnswerExactMatchEvaluator(HaystackComponent):
    """Fraction of questions whose predicted answer equals the ground-truth answer.

    Parameters
    ----------
    normalize : bool
        Compare after :func:`normalize_answer` (extra; Haystack compares raw strings).

    Examples
    --------
    >>> AnswerExactMatchEvaluator().run(ground_truth_answers=["a"], predicted_answers=["a"])
    {'individual_scores': [1], 'score': 1.0}
    """

    _output_types: ClassVar[dict[str, Any]] = {"individual_scores": list[int], "score": float}

    def __init__(self, *, normalize: bool = False) -> None:
        if not isinstance(normalize, bool):
            raise ParameterError("normalize", "True or False", normalize)
        self.normalize = normalize

    def _init_parameters(self) -> dict[str, Any]:
        return {"normalize": True} if self.normalize else {}

    def run(self, ground_truth_answers: list[str], predicted_answers: list[str]) -> dict[str, Any]:
        """Return ``{"individual_scores": [1|0, ...], "score": mean}``."""
        check_pair_lengths(
            ground_truth_answers, predicted_answers, "ground_truth_answers", "predicted_answers"
        )
        matches = exact_match_scores(ground_truth_answers, predicted_answers, normalize=self.normalize)
        return {"individual_scores": matches, "score": sum(matches) / len(predicted_answers)}


class AnswerF1Evaluator(HaystackComponent):
    """Mean SQuAD token F1 between predicted and ground-truth answers (extra).

    Examples
    --------
    >>> AnswerF1Evaluator().run(["Paris"], ["paris, france"])
    {'individual_scores': [0.6666666666666666], 'score': 0.6666666666666666}
    """

    _output_types: ClassVar[dict[str, Any]] = {"individual_scores": list[float], "score": float}

    def run(self, ground_truth_answers: list[str], predicted_answers: list[str]) -> dict[str, Any]:
        """Return ``{"individual_scores": [f1, ...], "score": mean}``."""
        check_pair_lengths(
            ground_truth_answers, predicted_answers, "ground_truth_answers", "predicted_answers"
        )
        scores = token_f1_scores(ground_truth_answers, predicted_answers)
        return {"individual_scores": scores, "score": sum(scores) / len(scores)}
