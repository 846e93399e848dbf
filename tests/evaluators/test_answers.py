"""Answer evaluators: Haystack's exact match and the normalized / F1 extras."""

from __future__ import annotations

import pytest

from fasteval.errors import InputError
from fasteval.evaluators import AnswerExactMatchEvaluator, AnswerF1Evaluator, normalize_answer
from fasteval.evaluators.answers import token_f1_scores


def test_haystack_doc_example():
    out = AnswerExactMatchEvaluator().run(ground_truth_answers=["Berlin", "Paris"], predicted_answers=["Berlin", "Lyon"])
    assert out == {"individual_scores": [1, 0], "score": 0.5}


def test_exact_match_is_raw_by_default():
    out = AnswerExactMatchEvaluator().run(["Paris", "the Moon"], ["paris", "Moon."])
    assert out["individual_scores"] == [0, 0]
    out = AnswerExactMatchEvaluator(normalize=True).run(["Paris", "the Moon"], ["paris", "Moon."])
    assert out["individual_scores"] == [1, 1]


def test_errors():
    for gt, pred in ([], []), (["a"], []), (["a", "b"], ["a"]):
        with pytest.raises(ValueError):
            AnswerExactMatchEvaluator().run(gt, pred)
    with pytest.raises(InputError):
        AnswerExactMatchEvaluator(normalize=True).run(["a"], [None])


def test_normalize_answer():
    assert normalize_answer("An  apple, THE pear & a plum!") == "apple pear plum"
    assert normalize_answer("theatre") == "theatre"  # articles only as whole words


def test_token_f1_hand_worked():
    # "cat sat" vs "cat sat down": overlap 2, precision 2/3, recall 1 -> F1 0.8
    assert token_f1_scores(["the cat sat"], ["a cat sat down"]) == [pytest.approx(0.8, abs=1e-15)]
    # repeated tokens count with multiplicity: overlap {x:1, y:1} = 2 of 3 on each side
    assert token_f1_scores(["x x y"], ["x y y"]) == [pytest.approx(2 / 3, abs=1e-15)]
    assert token_f1_scores(["the"], ["a"]) == [1.0]  # both normalize to nothing
    assert token_f1_scores(["paris"], [""]) == [0.0]
    out = AnswerF1Evaluator().run(["Paris", "Rome"], ["paris, france", "Madrid"])
    assert out["individual_scores"] == [pytest.approx(2 / 3, abs=1e-15), 0.0]
    assert out["score"] == pytest.approx(1 / 3, abs=1e-15)


def test_serialization():
    ev = AnswerExactMatchEvaluator(normalize=True)
    assert ev.to_dict() == {
        "type": "fasteval.evaluators.answers.AnswerExactMatchEvaluator",
        "init_parameters": {"normalize": True},
    }
    assert AnswerExactMatchEvaluator.from_dict(ev.to_dict()).normalize is True
    assert AnswerExactMatchEvaluator().to_dict()["init_parameters"] == {}
