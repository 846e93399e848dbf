"""Hand-worked cases, extras and properties of the document evaluators (no haystack needed)."""

from __future__ import annotations

import math
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasteval.errors import InputError, ParameterError
from fasteval.evaluators import (
    Document,
    DocumentMAPEvaluator,
    DocumentMRREvaluator,
    DocumentNDCGEvaluator,
    DocumentRecallEvaluator,
    RecallMode,
    evaluate_documents,
)
from fasteval.evaluators.documents import normalize_text
from tests._profile import examples


def docs(*contents, scores=None):
    scores = scores or [None] * len(contents)
    return [Document(content=c, score=s) for c, s in zip(contents, scores, strict=True)]


GT = [docs("France"), docs("9th century", "9th")]
RET = [docs("France"), docs("9th century", "10th century", "9th")]


def test_haystack_doc_examples():
    assert DocumentMAPEvaluator().run(GT, RET) == {
        "score": (1.0 + (1 / 1 + 2 / 3) / 2) / 2,
        "individual_scores": [1.0, (1 / 1 + 2 / 3) / 2],
    }
    assert round(DocumentMAPEvaluator().run(GT, RET)["individual_scores"][1], 4) == 0.8333
    assert DocumentMRREvaluator().run(GT, RET) == {"score": 1.0, "individual_scores": [1.0, 1.0]}
    assert DocumentRecallEvaluator().run(GT, RET) == {"score": 1.0, "individual_scores": [1.0, 1.0]}
    out = DocumentNDCGEvaluator().run(
        [docs("France", "Paris", scores=[1.0, 0.5])], [docs("France", "Germany", "Paris")]
    )
    # definition: DCG = 1/log2(2) + 0.5/log2(4) = 1.25; IDCG = 1 + 0.5/log2(3)
    expected = 1.25 / (1 + 0.5 / math.log2(3))
    assert out["individual_scores"][0] == pytest.approx(expected, abs=1e-15)
    assert round(out["score"], 4) == 0.9502


def test_duplicates_are_credited_once():
    gt = [docs("a", "a", "b")]
    ret = [docs("a", "a", "c", "b", "b")]
    # two distinct relevant values; a at rank 1, b at rank 4
    assert DocumentMAPEvaluator().run(gt, ret)["individual_scores"] == [(1 / 1 + 2 / 4) / 2]
    assert DocumentRecallEvaluator(mode="multi_hit").run(gt, ret)["individual_scores"] == [1.0]
    ndcg = DocumentNDCGEvaluator().run(gt, ret)["individual_scores"][0]
    assert ndcg == pytest.approx((1 + 1 / math.log2(5)) / (1 + 1 / math.log2(3)), abs=1e-15)


def test_none_and_empty_values():
    gt = [docs(None, ""), docs(None)]
    ret = [docs(None, ""), docs("x")]
    # "" is a valid value for MRR/MAP/NDCG, ignored by recall; None never matches
    assert DocumentMRREvaluator().run(gt, ret)["individual_scores"] == [0.5, 0.0]
    assert DocumentMAPEvaluator().run(gt, ret)["individual_scores"] == [0.5, 0.0]
    assert DocumentRecallEvaluator().run(gt, ret)["individual_scores"] == [0.0, 0.0]


def test_empty_inner_lists_and_missing_meta():
    gt = [[], [Document(content="a", meta={"f": {"g": 1}})], [Document(content="b", meta={})]]
    ret = [[Document(content="a")], [Document(content="z", meta={"f": {"g": 1.0}})], [Document(content="b")]]
    ev = DocumentMRREvaluator(document_comparison_field="meta.f.g")
    # 1 == 1.0 as in Python; a missing key is None and never matches
    assert ev.run(gt, ret)["individual_scores"] == [0.0, 1.0, 0.0]


def test_ndcg_gains_and_mixed_scores():
    gt = [docs("a", "b", scores=[3.0, 1.0])]
    ret = [docs("b", "a")]
    got = DocumentNDCGEvaluator().run(gt, ret)["individual_scores"][0]
    assert got == pytest.approx((1.0 + 3.0 / math.log2(3)) / (3.0 + 1.0 / math.log2(3)), abs=1e-15)
    with pytest.raises(ValueError, match="none or all"):
        DocumentNDCGEvaluator().run([docs("a", "b", scores=[1.0, None])], [docs("a")])
    # a duplicated ground-truth value keeps its largest gain
    dup = DocumentNDCGEvaluator().run([docs("a", "a", "b", scores=[1.0, 2.0, 1.0])], [docs("b", "a")])
    assert dup["individual_scores"][0] == pytest.approx(
        (1.0 + 2.0 / math.log2(3)) / (2.0 + 1.0 / math.log2(3)), abs=1e-15
    )


def test_input_errors():
    for ev in (DocumentMAPEvaluator(), DocumentRecallEvaluator(), DocumentNDCGEvaluator()):
        with pytest.raises(InputError):
            ev.run([], [])
        with pytest.raises(ValueError):
            ev.run([docs("a")], [docs("a"), docs("b")])
    with pytest.raises(ParameterError):
        DocumentMAPEvaluator(document_comparison_field="title")
    with pytest.raises(ParameterError):
        DocumentRecallEvaluator(mode="all_hits")
    with pytest.raises(ParameterError):
        DocumentMAPEvaluator(top_k=0)
    assert DocumentRecallEvaluator(mode=RecallMode.MULTI_HIT).mode is RecallMode.MULTI_HIT


def test_top_k_equals_truncating_the_ranking():
    rng = random.Random(11)
    gt = [docs(*[f"d{rng.randrange(20)}" for _ in range(rng.randint(0, 6))]) for _ in range(50)]
    ret = [docs(*[f"d{rng.randrange(20)}" for _ in range(rng.randint(0, 15))]) for _ in range(50)]
    for k in (1, 3, 10):
        cut = [r[:k] for r in ret]
        for cls in (DocumentMAPEvaluator, DocumentMRREvaluator, DocumentNDCGEvaluator, DocumentRecallEvaluator):
            assert cls(top_k=k).run(gt, ret) == cls().run(gt, cut)


def test_evaluate_documents_matches_single_evaluators():
    rng = random.Random(5)
    gt = [docs(*[f"d{rng.randrange(15)}" for _ in range(rng.randint(0, 5))]) for _ in range(40)]
    ret = [docs(*[f"d{rng.randrange(15)}" for _ in range(rng.randint(0, 12))]) for _ in range(40)]
    res = evaluate_documents(gt, ret, ["map", "ndcg@5", "mrr", "recall", "recall_multi_hit@3"])
    assert res["map"] == DocumentMAPEvaluator().run(gt, ret)
    assert res["ndcg@5"] == DocumentNDCGEvaluator(top_k=5).run(gt, ret)
    assert res["mrr"] == DocumentMRREvaluator().run(gt, ret)
    assert res["recall"] == DocumentRecallEvaluator().run(gt, ret)
    assert res["recall_multi_hit@3"] == DocumentRecallEvaluator(mode="multi_hit", top_k=3).run(gt, ret)
    with pytest.raises(ParameterError):
        evaluate_documents(gt, ret, ["precision"])
    # one name as a string is that measure (it was read letter by letter: "got 'm'")
    assert evaluate_documents(gt, ret, "ndcg@5") == {"ndcg@5": res["ndcg@5"]}


def test_normalize_option():
    assert normalize_text("  Caf\u00e9\u00a0 AU\tLait ") == "café au lait"
    gt = [docs("Café au lait")]
    ret = [docs("x", "  CAFE\u0301 au\nlait")]  # decomposed accent, case and whitespace differ
    assert DocumentMRREvaluator().run(gt, ret)["individual_scores"] == [0.0]
    assert DocumentMRREvaluator(normalize=True).run(gt, ret)["individual_scores"] == [0.5]


def test_serialization_round_trip():
    ev = DocumentRecallEvaluator(mode="multi_hit", document_comparison_field="meta.a", top_k=3)
    data = ev.to_dict()
    assert data == {
        "type": "fasteval.evaluators.document_evaluators.DocumentRecallEvaluator",
        "init_parameters": {"mode": "multi_hit", "document_comparison_field": "meta.a", "top_k": 3},
    }
    back = DocumentRecallEvaluator.from_dict(data)
    assert (back.mode, back.document_comparison_field, back.top_k) == (RecallMode.MULTI_HIT, "meta.a", 3)
    with pytest.raises(InputError):
        DocumentMAPEvaluator.from_dict(data)


def test_document_id_matches_haystack_recipe():
    haystack = pytest.importorskip("haystack")
    for content, meta in [("France", {}), (None, {"b": 2, "a": [1]}), ("", {"x": "y"})]:
        assert Document(content=content, meta=meta).id == haystack.Document(content=content, meta=meta).id


def test_import_is_light():
    code = (
        "import sys, fasteval.evaluators as e; e.DocumentMAPEvaluator;"
        "bad = [m for m in ('haystack', 'torch', 'sentence_transformers', 'httpx') if m in sys.modules];"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _oracle_map(gt, ret):
    # average precision from scratch: distinct relevant values, precision at each first hit
    rel = []
    for v in gt:
        if v is not None and v not in rel:
            rel.append(v)
    seen, hits, total = set(), 0, 0.0
    for i, v in enumerate(ret, start=1):
        if v in rel and v not in seen:
            seen.add(v)
            hits += 1
            total += hits / i
    return total / len(rel) if rel else 0.0


values = st.sampled_from(["a", "b", "c", "d", None])


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(st.lists(values, max_size=6), st.lists(values, max_size=10)), min_size=1, max_size=8))
def test_map_property_against_oracle(questions):
    gt = [docs(*g) for g, _ in questions]
    ret = [docs(*r) for _, r in questions]
    got = DocumentMAPEvaluator().run(gt, ret)["individual_scores"]
    want = [_oracle_map(g, r) for g, r in questions]
    assert got == pytest.approx(want, abs=1e-12)
    # bounds and the order invariance of recall
    rec = DocumentRecallEvaluator(mode="multi_hit").run(gt, [list(reversed(r)) for r in ret])
    assert rec == DocumentRecallEvaluator(mode="multi_hit").run(gt, ret)
    for v in DocumentNDCGEvaluator().run(gt, ret)["individual_scores"]:
        assert 0.0 <= v <= 1.0 + 1e-12


def test_hash_collision_falls_back_to_exact_comparison():
    # hash(-1) == hash(-2) in CPython: keys collide, verification must catch it
    assert hash(-1) == hash(-2)
    gt = [[Document(content="x", meta={"k": -1}), Document(content="y", meta={"k": 5})]]
    ret = [[Document(content="z", meta={"k": -2}), Document(content="w", meta={"k": 5})]]
    ev = DocumentMAPEvaluator(document_comparison_field="meta.k")
    assert ev.run(gt, ret)["individual_scores"] == [(1 / 2) / 2]
    ev = DocumentNDCGEvaluator(document_comparison_field="meta.k")
    assert ev.run(gt, ret)["individual_scores"][0] == pytest.approx(
        (1 / math.log2(3)) / (1 + 1 / math.log2(3)), abs=1e-15
    )
    # also when the collision is inside the ground truth (two distinct relevant values)
    gt2 = [[Document(meta={"k": -1}), Document(meta={"k": -2})]]
    ret2 = [[Document(meta={"k": -2})]]
    assert DocumentMAPEvaluator(document_comparison_field="meta.k").run(gt2, ret2)["individual_scores"] == [0.5]


def test_unhashable_values():
    gt = [[Document(meta={"k": [1, 2]}), Document(meta={"k": {"a": [1]}})]]
    ret = [[Document(meta={"k": {"a": [1.0]}}), Document(meta={"k": [1, 2]})]]
    assert DocumentMAPEvaluator(document_comparison_field="meta.k").run(gt, ret)["individual_scores"] == [1.0]
    with pytest.raises(TypeError):
        DocumentRecallEvaluator(document_comparison_field="meta.k").run(gt, ret)


def test_forced_string_hash_collisions_are_detected(monkeypatch):
    # every string gets the same key: the verification must reject the matches and re-key exactly
    from fasteval.evaluators import columnar

    rng = random.Random(9)
    gt = [docs(*[f"d{rng.randrange(12)}" for _ in range(rng.randint(0, 6))], None) for _ in range(30)]
    ret = [docs(*[f"d{rng.randrange(12)}" for _ in range(rng.randint(0, 12))], "") for _ in range(30)]
    expected = evaluate_documents(gt, ret, ["map", "mrr", "ndcg", "recall_multi_hit"])
    real_split, real_keys = columnar.split_text_keys, columnar._string_keys

    def colliding_split(words, nbytes, starts, lens, keys, flags):  # packed texts
        real_split(words, nbytes, starts, lens, keys, flags)
        keys[:] = 42

    def colliding_keys(*sides):  # polars string columns (normalized values)
        return [(key * 0 + 42, flag) for key, flag in real_keys(*sides)]

    monkeypatch.setattr(columnar, "split_text_keys", colliding_split)
    monkeypatch.setattr(columnar, "_string_keys", colliding_keys)
    assert evaluate_documents(gt, ret, ["map", "mrr", "ndcg", "recall_multi_hit"]) == expected
    normalized = evaluate_documents(gt, ret, ["map", "ndcg"], normalize=True)
    monkeypatch.undo()
    assert normalized == evaluate_documents(gt, ret, ["map", "ndcg"], normalize=True)
    assert expected["map"]["score"] > 0


def test_packed_texts_keep_python_equality():
    """Strings are packed as UTF-8 bytes: non-ASCII text, lengths around the 8-byte words
    and None compare as Python compares them; what cannot be packed (a NUL character, a
    lone surrogate) takes another path to the same results."""
    from fasteval.evaluators import columnar

    cases = [
        (["a", "", None, "x" * 50, "x" * 49 + "y", "a", "x" * 8, "x" * 16], True),
        (["a", "é", "e\u0301", "é", "", None, "ü" * 30, "a"], True),
        (["a", "\x00", "a\x00b", None, "\x00"], False),
        (["a", "\ud800", None, "\ud800"], False),
    ]
    for values, packed in cases:
        gt = [[Document(content=v, id=f"g{i}") for i, v in enumerate(values)]]
        ret = [[Document(content=v, id=f"r{i}") for i, v in enumerate(reversed(values))]]
        table = columnar.DocumentTable.build(gt, ret)
        assert (table.gt_packed is not None) is packed, values
        if packed:
            assert [table.gt_packed.decode(i) for i in range(len(values))] == values
        # hand-worked MAP: distinct non-None values, credited at their first retrieved rank
        distinct = list(dict.fromkeys(v for v in values if v is not None))
        ranking = list(reversed(values))
        first = sorted(ranking.index(v) + 1 for v in distinct)
        expected = sum((k + 1) / r for k, r in enumerate(first)) / len(distinct)
        out = evaluate_documents(gt, ret, ["map", "mrr", "recall_multi_hit"])
        assert out["map"]["individual_scores"] == [pytest.approx(expected, abs=1e-15)]
        assert out["mrr"]["individual_scores"] == [1.0 / first[0]]
        assert out["recall_multi_hit"]["individual_scores"] == [1.0]


def test_cutoffs_beyond_int64_are_parameter_errors_and_the_largest_is_no_cutoff():
    from fasteval.evaluators import DocumentMRREvaluator, evaluate_rag

    gt, ret = [[Document(content="a")]], [[Document(content="b"), Document(content="a")]]
    for k in (2**63, 10**20):
        with pytest.raises(ParameterError, match=r"^top_k must be a positive integer \(at most 2\*\*63 - 1\)"):
            DocumentMRREvaluator(top_k=k)
        with pytest.raises(ParameterError, match=r"^measures must be a cutoff @k with 1 <= k <= 2\*\*63 - 1"):
            evaluate_documents(gt, ret, [f"ndcg@{k}"])
        with pytest.raises(ParameterError, match=r"^top_k must be"):
            evaluate_rag({"retrieved": [["b", "a"]], "ground_truth": [["a"]]}, question_col=None, top_k=k)
    big = 2**63 - 1
    assert DocumentMRREvaluator(top_k=big).run(gt, ret)["individual_scores"] == [0.5]
    assert evaluate_documents(gt, ret, [f"mrr@{big}"])[f"mrr@{big}"]["individual_scores"] == [0.5]
