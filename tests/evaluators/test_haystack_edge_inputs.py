"""Hostile and edge-case inputs, fasteval's evaluators against haystack-ai's installed classes."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

haystack = pytest.importorskip("haystack")
hs_eval = pytest.importorskip("haystack.components.evaluators")

from haystack import Document  # noqa: E402

import fasteval.evaluators as fe  # noqa: E402

DOC_EVALUATORS = [
    "DocumentRecallEvaluator", "DocumentMRREvaluator", "DocumentMAPEvaluator", "DocumentNDCGEvaluator",
]


@pytest.mark.parametrize("name", DOC_EVALUATORS)
def test_an_empty_first_list_is_a_value_error_whatever_the_second(name):
    # Haystack checks len(ground truth) == 0 first and never looks at the other argument
    for ev in (getattr(hs_eval, name)(), getattr(fe, name)()):
        with pytest.raises(ValueError):
            ev.run([], None)
    with pytest.raises(ValueError):
        fe.AnswerExactMatchEvaluator().run([], None)
    with pytest.raises(ValueError):
        hs_eval.AnswerExactMatchEvaluator().run([], None)


@pytest.mark.parametrize(
    ("score", "message"),
    [
        ("1", "unsupported operand type(s) for /: 'str' and 'float'"),
        (Decimal("1"), "unsupported operand type(s) for /: 'decimal.Decimal' and 'float'"),
        ([1], "unsupported operand type(s) for /: 'list' and 'float'"),
        (1j, "'>' not supported between instances of 'complex' and 'complex'"),
    ],
)
def test_ndcg_gain_that_is_not_a_real_number_raises_haystacks_type_error(score, message):
    gt = [[Document(content="a", score=score)]]
    ret = [[Document(content="a")]]
    for ev in (hs_eval.DocumentNDCGEvaluator(), fe.DocumentNDCGEvaluator()):
        with pytest.raises(TypeError) as info:
            ev.run(gt, ret)
        assert str(info.value) == message


def test_ndcg_gain_of_a_document_without_comparison_value_is_unused():
    gt = [[Document(content=None, score="x"), Document(content="a", score=2.0)]]
    ret = [[Document(content="b"), Document(content="a")]]
    expected = {"score": 1 / np.log2(3), "individual_scores": [1 / np.log2(3)]}
    assert hs_eval.DocumentNDCGEvaluator().run(gt, ret) == pytest.approx(expected)
    assert fe.DocumentNDCGEvaluator().run(gt, ret) == pytest.approx(expected)


def test_ndcg_mixed_scores_error_comes_before_a_bad_gain():
    gt = [[Document(content="a", score="1")], [Document(content="a", score=1.0), Document(content="b")]]
    ret = [[Document(content="a")], [Document(content="a")]]
    for ev in (hs_eval.DocumentNDCGEvaluator(), fe.DocumentNDCGEvaluator()):
        with pytest.raises(ValueError, match="none or all"):
            ev.run(gt, ret)


def test_ndcg_numpy_gains_give_numpy_floats_as_in_haystack():
    # ground truth built from a NumPy / pandas column: Haystack's arithmetic gives np.float64
    gt = [
        [Document(content="a", score=np.float64(2.0)), Document(content="b", score=np.float64(1.0))],
        [Document(content="a", score=np.int64(3))],
        [Document(content="a", score=2.0)],
        [Document(content=None, score=np.float64(2.0)), Document(content="a", score=1.0)],
    ]
    ret = [[Document(content="b"), Document(content="a")], [Document(content="a")],
           [Document(content="a")], [Document(content="a")]]
    ndcg0 = (1 + 2 / np.log2(3)) / (2 + 1 / np.log2(3))
    hs = hs_eval.DocumentNDCGEvaluator().run(gt, ret)
    out = fe.DocumentNDCGEvaluator().run(gt, ret)
    assert [type(v) for v in out["individual_scores"]] == [np.float64, np.float64, float, float]
    assert [type(v) for v in hs["individual_scores"]] == [np.float64, np.float64, float, float]
    assert type(out["score"]) is type(hs["score"]) is np.float64
    assert out["individual_scores"] == pytest.approx([ndcg0, 1.0, 1.0, 1.0])
    assert out == pytest.approx(hs)
    res = fe.evaluate_documents(gt, ret, ["ndcg", "mrr"])
    assert type(res["ndcg"]["individual_scores"][0]) is np.float64
    assert type(res["mrr"]["individual_scores"][0]) is float


@pytest.fixture(scope="module")
def tiny_sas_model(tmp_path_factory):
    pytest.importorskip("sentence_transformers")
    from tests.sas.conftest import _cross

    return _cross(tmp_path_factory.mktemp("edge_cross"), 1)


def test_sas_score_is_numpy_float64_as_in_haystack(tiny_sas_model):
    from haystack.utils import ComponentDevice

    gts, preds = ["paris is big", "the cat", "rome"], ["paris big", "a dog", "rome"]
    theirs = hs_eval.SASEvaluator(model=tiny_sas_model, device=ComponentDevice.from_str("cpu"))
    theirs.warm_up()
    hs = theirs.run(ground_truth_answers=gts, predicted_answers=preds)
    ours = fe.SASEvaluator(model=tiny_sas_model, device="cpu").run(
        ground_truth_answers=gts, predicted_answers=preds)
    assert type(hs["score"]) is type(ours["score"]) is np.float64
    assert [type(v) for v in ours["individual_scores"]] == [float] * 3
    assert ours["individual_scores"] == hs["individual_scores"]  # cross-encoder: same float32 values
    assert ours["score"] == hs["score"]
    empty = fe.SASEvaluator(model=tiny_sas_model, device="cpu").run([], [])
    assert empty == {"score": 0.0, "individual_scores": [0.0]} and type(empty["score"]) is float
