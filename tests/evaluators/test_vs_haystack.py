"""Differential tests: fasteval's evaluators against haystack-ai on random inputs."""

from __future__ import annotations

import math
import random

import pytest

haystack = pytest.importorskip("haystack")
hs_eval = pytest.importorskip("haystack.components.evaluators")

from fasteval.evaluators import (  # noqa: E402
    AnswerExactMatchEvaluator,
    Document,
    DocumentMAPEvaluator,
    DocumentMRREvaluator,
    DocumentNDCGEvaluator,
    DocumentRecallEvaluator,
)

FIELDS = ["content", "id", "meta.k", "meta.a", "meta.a.b", "meta.x.y.z"]
CONTENTS = ["alpha", "beta", "gamma", "delta", "", None, "Alpha", "beta "]
META_VALUES = ["v1", "v2", "", None, 1, 1.0, True, 2, 0, False, ("t", 1)]


def _random_meta(rng: random.Random) -> dict:
    meta = _random_nested(rng)
    if rng.random() < 0.8:
        meta["k"] = rng.choice(META_VALUES)
    return meta


def _random_nested(rng: random.Random) -> dict:
    r = rng.random()
    if r < 0.15:
        return {}
    if r < 0.4:
        return {"a": rng.choice(META_VALUES)}
    if r < 0.75:
        return {"a": {"b": rng.choice(META_VALUES)}, "x": {"y": {"z": rng.choice(META_VALUES)}}}
    if r < 0.85:
        return {"a": {"c": 1}, "x": {"y": "not a dict"}}
    return {"a": {"b": rng.choice(META_VALUES)}, "x": {"y": {}}}


def _random_doc_spec(rng: random.Random, scored: bool | None) -> dict:
    spec = {
        "content": rng.choice(CONTENTS),
        "meta": _random_meta(rng),
        "id": rng.choice(["id1", "id2", "id3", "id4"]),
    }
    if scored:
        spec["score"] = rng.choice([0.0, 0.25, 0.5, 1.0, 2.0, 3, rng.random() * 3, -0.5])
    return spec


def _random_batch(rng: random.Random, *, max_gt: int = 5, max_ret: int = 9, allow_mixed: bool = False):
    n = rng.randint(1, 12)
    gt, ret = [], []
    for _ in range(n):
        scored = rng.random() < 0.5
        gts = []
        for _ in range(rng.randint(0, max_gt)):
            s = scored if not allow_mixed else rng.random() < 0.5
            gts.append(_random_doc_spec(rng, s))
        gt.append(gts)
        ret.append([_random_doc_spec(rng, rng.random() < 0.3) for _ in range(rng.randint(0, max_ret))])
    return gt, ret


def _materialize(batch, doc_type):
    return [[doc_type(**spec) for spec in question] for question in batch]


def _haystack_evaluator(name: str, field: str, mode: str | None = None):
    cls = getattr(hs_eval, name)
    if mode is not None:
        return cls(mode=mode, document_comparison_field=field)
    return cls(document_comparison_field=field)


def _ours(name: str, field: str, mode: str | None = None):
    cls = {
        "DocumentRecallEvaluator": DocumentRecallEvaluator,
        "DocumentMRREvaluator": DocumentMRREvaluator,
        "DocumentMAPEvaluator": DocumentMAPEvaluator,
        "DocumentNDCGEvaluator": DocumentNDCGEvaluator,
    }[name]
    if mode is not None:
        return cls(mode=mode, document_comparison_field=field)
    return cls(document_comparison_field=field)


CONFIGS = [
    ("DocumentRecallEvaluator", "single_hit"),
    ("DocumentRecallEvaluator", "multi_hit"),
    ("DocumentMRREvaluator", None),
    ("DocumentMAPEvaluator", None),
    ("DocumentNDCGEvaluator", None),
]


def _run(evaluator, gt, ret):
    try:
        return evaluator.run(ground_truth_documents=gt, retrieved_documents=ret), None
    except Exception as exc:  # noqa: BLE001 - compared below
        return None, exc


def _assert_same(expected, got):
    (exp, exp_exc), (res, res_exc) = expected, got
    if exp_exc is not None:
        assert res_exc is not None, f"haystack raised {exp_exc!r}, fasteval returned {res}"
        # haystack-ai < 3.4 divides by zero on empty input; 3.4 raises ValueError, as fasteval does
        expected_type = ValueError if isinstance(exp_exc, ZeroDivisionError) else type(exp_exc)
        assert isinstance(res_exc, expected_type), (exp_exc, res_exc)
        return
    assert res_exc is None, f"fasteval raised {res_exc!r}, haystack returned {exp}"
    assert len(res["individual_scores"]) == len(exp["individual_scores"])
    for a, b in zip(res["individual_scores"], exp["individual_scores"], strict=True):
        assert math.isclose(a, b, rel_tol=0, abs_tol=1e-12), (res, exp)
    assert math.isclose(res["score"], exp["score"], rel_tol=0, abs_tol=1e-12)


@pytest.mark.parametrize(("name", "mode"), CONFIGS)
@pytest.mark.parametrize("field", FIELDS)
def test_random_batches_match_haystack(name, mode, field):
    rng = random.Random(hash((name, mode, field)) & 0xFFFF)
    hs = _haystack_evaluator(name, field, mode)
    ours = _ours(name, field, mode)
    for _ in range(60):
        spec_gt, spec_ret = _random_batch(rng)
        hs_gt, hs_ret = _materialize(spec_gt, haystack.Document), _materialize(spec_ret, haystack.Document)
        expected = _run(hs, hs_gt, hs_ret)
        # haystack's own Document objects, unchanged
        _assert_same(expected, _run(ours, hs_gt, hs_ret))
        # fasteval's light Document
        fe_gt, fe_ret = _materialize(spec_gt, Document), _materialize(spec_ret, Document)
        _assert_same(expected, _run(ours, fe_gt, fe_ret))


@pytest.mark.parametrize(("name", "mode"), CONFIGS)
def test_errors_match_haystack(name, mode):
    hs = _haystack_evaluator(name, "content", mode)
    ours = _ours(name, "content", mode)
    d = haystack.Document
    cases = [
        ([], []),
        ([[d(content="a")]], []),
        ([], [[d(content="a")]]),
        ([[d(content="a")], [d(content="b")]], [[d(content="a")]]),
        # mixed scored / unscored ground truth: an error for NDCG only
        ([[d(content="a", score=1.0), d(content="b")]], [[d(content="a")]]),
    ]
    for gt, ret in cases:
        expected = _run(hs, gt, ret)
        _assert_same(expected, _run(ours, gt, ret))


@pytest.mark.parametrize(("name", "mode"), CONFIGS)
def test_unhashable_meta_values_match_haystack(name, mode):
    # lists as comparison values: MAP and MRR compare them with ==, recall and NDCG raise TypeError
    d = haystack.Document
    gt = [[d(content="x", meta={"k": [1, 2]}), d(content="y", meta={"k": [3]}), d(content="z", meta={"k": [1, 2]})]]
    ret = [[d(content="p", meta={"k": [9]}), d(content="q", meta={"k": [1.0, 2]}), d(content="r", meta={"k": [3]})]]
    hs = _haystack_evaluator(name, "meta.k", mode)
    ours = _ours(name, "meta.k", mode)
    _assert_same(_run(hs, gt, ret), _run(ours, gt, ret))


@pytest.mark.parametrize(("name", "mode"), CONFIGS)
def test_large_random_batch_matches_haystack(name, mode):
    # more questions, longer lists, many duplicates: exercises the heap sort path (> 24 ground truth)
    rng = random.Random(7)
    n = 300
    spec_gt = [
        [{"content": f"d{rng.randrange(40)}", "score": rng.choice([None, None])} for _ in range(rng.randint(0, 40))]
        for _ in range(n)
    ]
    for q in spec_gt:
        if q and rng.random() < 0.5:
            for s in q:
                s["score"] = rng.random()
    spec_ret = [[{"content": f"d{rng.randrange(60)}"} for _ in range(rng.randint(0, 80))] for _ in range(n)]
    hs_gt, hs_ret = _materialize(spec_gt, haystack.Document), _materialize(spec_ret, haystack.Document)
    _assert_same(
        _run(_haystack_evaluator(name, "content", mode), hs_gt, hs_ret),
        _run(_ours(name, "content", mode), hs_gt, hs_ret),
    )


def test_answer_exact_match_matches_haystack():
    rng = random.Random(3)
    hs = hs_eval.AnswerExactMatchEvaluator()
    ours = AnswerExactMatchEvaluator()
    pool = ["Berlin", "Paris", "paris", "", "Lyon", "Paris "]
    for _ in range(50):
        n = rng.randint(1, 20)
        gt = [rng.choice(pool) for _ in range(n)]
        pred = [rng.choice(pool) for _ in range(n)]
        exp = hs.run(ground_truth_answers=gt, predicted_answers=pred)
        res = ours.run(ground_truth_answers=gt, predicted_answers=pred)
        assert res == exp
        assert [type(v) for v in res["individual_scores"]] == [type(v) for v in exp["individual_scores"]]
    for gt, pred in [([], []), (["a"], []), (["a", "b"], ["a"])]:
        # haystack-ai < 3.4: ZeroDivisionError on empty input; 3.4: ValueError
        with pytest.raises((ValueError, ZeroDivisionError)):
            hs.run(ground_truth_answers=gt, predicted_answers=pred)
        with pytest.raises(ValueError):
            ours.run(ground_truth_answers=gt, predicted_answers=pred)


@pytest.mark.parametrize(("name", "mode"), CONFIGS)
def test_malformed_inputs_raise_the_same_exception_types(name, mode):
    d = haystack.Document
    cases = [
        ([["not a document"]], [[d(content="a")]]),  # AttributeError
        ([[d(content="a")]], [None]),  # TypeError: inner list is None
    ]
    if name != "DocumentMRREvaluator":
        # haystack's MRR stops reading at the first match, so it never sees the 42;
        # fasteval reads every document (documented difference)
        cases.append(([[d(content="a")]], [[d(content="a"), 42]]))  # AttributeError
    for field in ("content", "meta.k"):
        hs = _haystack_evaluator(name, field, mode)
        ours = _ours(name, field, mode)
        for gt, ret in cases:
            _assert_same(_run(hs, gt, ret), _run(ours, gt, ret))


@pytest.mark.parametrize(("name", "mode"), CONFIGS)
def test_block_wise_string_columns_match_haystack(name, mode, monkeypatch):
    """Values are read a block of questions at a time: tiny blocks, None and "" values, and
    a non-string value in a late block (which sends the whole batch down the Python path)."""
    from fasteval.evaluators import columnar

    monkeypatch.setattr(columnar, "BLOCK_DOCS", 7)
    rng = random.Random(11)
    d = haystack.Document
    pool = ["a", "b", "c", "d", "", None, "é", "a" * 40, "ü" * 9 + "x", "\x00", "b\x00", "\ud800"]
    ids = iter(range(10**6))  # explicit ids: a lone surrogate has no UTF-8 form to hash
    gt = [[d(id=str(next(ids)), content=rng.choice(pool), meta={"k": rng.choice(pool)})
           for _ in range(rng.randint(0, 4))] for _ in range(60)]
    ret = [[d(id=str(next(ids)), content=rng.choice(pool), meta={"k": rng.choice(pool)})
            for _ in range(rng.randint(0, 9))] for _ in range(60)]
    for field in ("content", "meta.k"):
        _assert_same(_run(_haystack_evaluator(name, field, mode), gt, ret),
                     _run(_ours(name, field, mode), gt, ret))
    ret[-1].append(d(id="int", content="x", meta={"k": 3}))  # an int in the last block
    _assert_same(_run(_haystack_evaluator(name, "meta.k", mode), gt, ret),
                 _run(_ours(name, "meta.k", mode), gt, ret))


@pytest.mark.parametrize(("name", "mode"), CONFIGS)
def test_set_and_frozenset_meta_values_match_haystack(name, mode):
    # Python's {1} == frozenset({1}) == frozenset({1.0}): MAP and MRR match them (also inside a
    # list), as Haystack's list membership does; recall and NDCG raise TypeError on the set
    d = haystack.Document
    gt = [[d(content="x", meta={"k": {1}})], [d(content="y", meta={"k": [frozenset({2})]})],
          [d(content="z", meta={"k": frozenset({3})})]]
    ret = [[d(content="p", meta={"k": frozenset({1.0})})],
           [d(content="q", meta={"k": [9]}), d(content="r", meta={"k": [{2}]})],
           [d(content="s", meta={"k": {3}}), d(content="t", meta={"k": frozenset({3})})]]
    hs = _haystack_evaluator(name, "meta.k", mode)
    ours = _ours(name, "meta.k", mode)
    expected = _run(hs, gt, ret)
    if name in ("DocumentMRREvaluator", "DocumentMAPEvaluator"):
        assert expected[0]["individual_scores"] == [1.0, 0.5, 1.0]
    else:
        assert isinstance(expected[1], TypeError)
    _assert_same(expected, _run(ours, gt, ret))


@pytest.mark.parametrize(("name", "mode"), CONFIGS)
@pytest.mark.parametrize("value", [[{1}], [object()], (1, [frozenset()])])
def test_meta_values_polars_cannot_read_match_haystack(name, mode, value):
    # a list holding a set or an arbitrary object made polars panic (a BaseException) while the
    # values were tried as a string column
    d = haystack.Document
    gt = [[d(content="x", meta={"k": value}), d(content="y", meta={"k": "a"})]]
    ret = [[d(content="p", meta={"k": "b"}), d(content="q", meta={"k": value})]]
    expected = _run(_haystack_evaluator(name, "meta.k", mode), gt, ret)
    if name in ("DocumentMRREvaluator", "DocumentMAPEvaluator"):
        assert expected[0]["individual_scores"] == ([0.5] if name == "DocumentMRREvaluator" else [0.25])
    _assert_same(expected, _run(_ours(name, "meta.k", mode), gt, ret))
    # the same through the normalizing path (strings normalized, others compared as they are)
    res = _run(_ours(name, "meta.k", mode).__class__(
        **({"mode": mode} if mode else {}), document_comparison_field="meta.k", normalize=True), gt, ret)
    _assert_same(expected, res)
