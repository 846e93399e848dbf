"""fasteval's evaluators inside a real haystack.Pipeline (optional dependency)."""

from __future__ import annotations

import pytest

haystack = pytest.importorskip("haystack")

from haystack import Document, Pipeline, component  # noqa: E402

from fasteval.evaluators import (  # noqa: E402
    AnswerExactMatchEvaluator,
    DocumentMAPEvaluator,
    DocumentMRREvaluator,
    DocumentNDCGEvaluator,
    DocumentRecallEvaluator,
)

GT = [[Document(content="France", meta={"file": 1})], [Document(content="9th century"), Document(content="9th")]]
RET = [
    [Document(content="France", meta={"file": 1})],
    [Document(content="9th century"), Document(content="10th century"), Document(content="9th")],
]


def test_evaluators_run_inside_a_pipeline():
    pipe = Pipeline()
    pipe.add_component("map", DocumentMAPEvaluator())
    pipe.add_component("mrr", DocumentMRREvaluator())
    pipe.add_component("recall", DocumentRecallEvaluator(mode="multi_hit", document_comparison_field="meta.file"))
    pipe.add_component("em", AnswerExactMatchEvaluator())
    docs = {"ground_truth_documents": GT, "retrieved_documents": RET}
    out = pipe.run(
        {
            "map": docs,
            "mrr": docs,
            "recall": docs,
            "em": {"ground_truth_answers": ["Berlin", "Paris"], "predicted_answers": ["Berlin", "Lyon"]},
        }
    )
    assert out["map"]["individual_scores"] == [1.0, (1 / 1 + 2 / 3) / 2]
    assert out["mrr"]["individual_scores"] == [1.0, 1.0]
    # question 2 has no meta.file on either side -> 0.0
    assert out["recall"]["individual_scores"] == [1.0, 0.0]
    assert out["em"] == {"individual_scores": [1, 0], "score": 0.5}


def test_connected_to_an_upstream_component():
    @component
    class Source:
        @component.output_types(ground_truth_documents=list[list[Document]], retrieved_documents=list[list[Document]])
        def run(self, n: int):
            return {"ground_truth_documents": GT[:n], "retrieved_documents": RET[:n]}

    pipe = Pipeline()
    pipe.add_component("source", Source())
    pipe.add_component("ndcg", DocumentNDCGEvaluator())
    pipe.connect("source.ground_truth_documents", "ndcg.ground_truth_documents")
    pipe.connect("source.retrieved_documents", "ndcg.retrieved_documents")
    out = pipe.run({"source": {"n": 2}})
    # question 2: 9th century at rank 1, 9th at rank 3 -> (1 + 1/2) / (1 + 1/log2(3))
    expected = (1 + 0.5) / (1 + 1 / 1.584962500721156)
    assert out["ndcg"]["individual_scores"][0] == 1.0
    assert out["ndcg"]["individual_scores"][1] == pytest.approx(expected, abs=1e-12)


def test_pipeline_yaml_round_trip():
    pipe = Pipeline()
    pipe.add_component("recall", DocumentRecallEvaluator(mode="multi_hit", document_comparison_field="meta.a.b"))
    pipe.add_component("ndcg", DocumentNDCGEvaluator(top_k=5))
    text = pipe.dumps()
    assert "fasteval.evaluators.document_evaluators.DocumentRecallEvaluator" in text
    loaded = Pipeline.loads(text, allowed_modules=["fasteval"])
    recall = loaded.get_component("recall")
    assert isinstance(recall, DocumentRecallEvaluator)
    assert str(recall.mode) == "multi_hit"
    assert recall.document_comparison_field == "meta.a.b"
    assert loaded.get_component("ndcg").top_k == 5
    assert loaded.dumps() == text


def test_to_dict_shape_matches_haystack():
    from haystack.components.evaluators import DocumentRecallEvaluator as HsRecall

    ours = DocumentRecallEvaluator(mode="multi_hit", document_comparison_field="id").to_dict()
    theirs = HsRecall(mode="multi_hit", document_comparison_field="id").to_dict()
    assert set(ours) == set(theirs) == {"type", "init_parameters"}
    assert ours["init_parameters"] == theirs["init_parameters"]
    assert ours["type"].rsplit(".", 1)[1] == theirs["type"].rsplit(".", 1)[1]


def test_accepts_haystacks_recall_mode_enum():
    from haystack.components.evaluators.document_recall import RecallMode as HsMode

    assert str(DocumentRecallEvaluator(mode=HsMode.MULTI_HIT).mode) == "multi_hit"
