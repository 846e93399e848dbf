"""Differential tests on hostile inputs: fasteval's document and exact-match evaluators
against haystack-ai's on the same objects (haystack ``Document``\\ s), comparing outputs
(keys, value types, float values to the bit, order of ``individual_scores``) and errors
(the exception type, or fasteval's ``ValueError`` subclass where Haystack raises
``ValueError``).

The inputs mix what real pipelines produce and what they should not: empty questions,
``None`` contents, duplicate documents, NFC and NFD spellings of one text, ids and meta
values of every plain Python type (fresh and shared NaN objects, -0.0, integers beyond
int64, bytes, fractions, complex numbers, tuples, frozensets), missing and nested meta keys,
NaN and infinite scores, mixed scored and unscored ground truth, questions or documents
that are ``None``, and outer lists of different lengths. Numpy values and a ``None``
retrieved document after MRR's first hit are left out: fasteval's differences there are
deliberate and documented in :mod:`fasteval.evaluators.document_evaluators`.
"""

from __future__ import annotations

import logging
import math
import random
from fractions import Fraction

import pytest

hs_eval = pytest.importorskip("haystack.components.evaluators")
from haystack import Document as HaystackDocument  # noqa: E402

import fasteval.evaluators as fe  # noqa: E402

FIELDS = ["content", "id", "meta.k", "meta.a.b"]
CONTENTS = ["é", "e\u0301", "", None, "a", "A", " a", "a ", "\x00", "ß", "ss", "ﬁ", "fi", "Ａ", "\ud800",
            "a\u200b", "日本"]
FRESH_NAN = object()  # replaced by a new float("nan") object for each document
META = [FRESH_NAN, math.nan, -0.0, 0.0, 0, 1, 1.0, True, False, 2**70, 2**63, -(2**63) - 1,
        2**64 - 1, b"a", "a", "1", Fraction(1, 2), 0.5, complex(1, 0), ("t", 1), None, "",
        math.inf, -math.inf, (), frozenset({1}), "é", "e\u0301", 1e300, 5e-324]
SCORES = [math.nan, math.inf, -math.inf, 0.0, 1.0, 2, -1.0, True, 1e-300, 3.5]
EVALUATORS = [
    ("DocumentRecallEvaluator", {"mode": "single_hit"}),
    ("DocumentRecallEvaluator", {"mode": "multi_hit"}),
    ("DocumentMRREvaluator", {}),
    ("DocumentMAPEvaluator", {}),
    ("DocumentNDCGEvaluator", {}),
]


def _value(rng: random.Random):
    value = rng.choice(META)
    return float("nan") if value is FRESH_NAN else value


def _doc(rng: random.Random, scored: bool | None) -> HaystackDocument:
    meta = {}
    if rng.random() < 0.8:
        meta["k"] = _value(rng)
    if rng.random() < 0.5:
        meta["a"] = {"b": _value(rng)} if rng.random() < 0.8 else _value(rng)
    kw = {"content": rng.choice(CONTENTS), "meta": meta}
    if rng.random() < 0.5:
        kw["id"] = rng.choice(["x", "y", "", "é", "e\u0301"])
    if kw["content"] == "\ud800" and not kw.get("id"):  # Haystack cannot hash a lone surrogate
        kw["id"] = "s"
    if scored or (scored is None and rng.random() < 0.5):  # None: scored or not, per document
        kw["score"] = rng.choice(SCORES)
    return HaystackDocument(**kw)


def _batch(rng: random.Random) -> tuple[list, list, bool]:
    """Ground truth and retrieved documents, and whether MRR may read past its first hit."""
    n = rng.randint(1, 4)
    gt = [[_doc(rng, rng.choice([True, False, None])) for _ in range(rng.randint(0, 4))]
          for _ in range(n)]
    ret = [[_doc(rng, rng.random() < 0.3) for _ in range(rng.randint(0, 5))] for _ in range(n)]
    # duplicates: the same document object again, or an equal one
    for question in (*gt, *ret):
        if question and rng.random() < 0.3:
            question.insert(rng.randrange(len(question) + 1), rng.choice(question))
    r = rng.random()
    mrr_comparable = True
    if r < 0.05:
        gt.append(None)
        ret.append([])
    elif r < 0.10:
        gt[-1].append(None)
    elif r < 0.15:
        ret[-1] = None
    elif r < 0.20:
        ret[0].append(None)
        mrr_comparable = False
    elif r < 0.25:
        gt, ret = [tuple(q) for q in gt], [tuple(q) for q in ret]
    elif r < 0.30:
        ret = ret[:-1]
    return gt, ret, mrr_comparable


def _outcome(evaluator_class, kwargs, *inputs):
    try:
        out = evaluator_class(**kwargs).run(*inputs)
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return ("error", type(exc))
    return ("ok", sorted(out), (type(out["score"]), repr(out["score"])),
            [(type(v), repr(v)) for v in out["individual_scores"]])


def _same(theirs, ours) -> bool:
    if theirs[0] == "error" and ours[0] == "error":
        if theirs[1] is ValueError:
            return issubclass(ours[1], ValueError)
        return ours[1] is theirs[1]
    return theirs == ours


@pytest.mark.parametrize("seed", range(4))
def test_hostile_document_batches_match_haystack(seed):
    logging.disable(logging.WARNING)  # Haystack's recall warns on questions without values
    try:
        rng = random.Random(seed)
        for case in range(60):
            gt, ret, mrr_comparable = _batch(rng)
            for name, kwargs in EVALUATORS:
                if name == "DocumentMRREvaluator" and not mrr_comparable:
                    continue
                for field in FIELDS:
                    init = {"document_comparison_field": field, **kwargs}
                    theirs = _outcome(getattr(hs_eval, name), init, gt, ret)
                    ours = _outcome(getattr(fe, name), init, gt, ret)
                    assert _same(theirs, ours), (seed, case, name, kwargs, field, gt, ret, theirs, ours)
    finally:
        logging.disable(logging.NOTSET)


def test_hostile_answers_match_haystack():
    rng = random.Random(5)
    answers = [*CONTENTS, math.nan, 1, 1.0, True, ("a",), ["a"], b"a"]
    for case in range(500):
        n = rng.randint(0, 5)
        gts = [rng.choice(answers) for _ in range(n)]
        preds = [rng.choice(answers) if rng.random() < 0.5 else g for g in gts]
        if rng.random() < 0.1:
            preds = preds[:-1]
        theirs = _outcome(hs_eval.AnswerExactMatchEvaluator, {}, gts, preds)
        ours = _outcome(fe.AnswerExactMatchEvaluator, {}, gts, preds)
        assert _same(theirs, ours), (case, gts, preds, theirs, ours)


_SCORED = HaystackDocument(content="a", score=1.0)
_UNSCORED = HaystackDocument(content="b")


@pytest.mark.parametrize(("gt", "ret", "error"), [
    # a question mixing scored and unscored documents comes before a later unreadable input,
    # as Haystack checks the ground truth's scores question by question first
    ([[_SCORED, _UNSCORED], None], [[], []], ValueError),
    ([[_SCORED, _UNSCORED]], [None], ValueError),
    ([[_SCORED, _UNSCORED, None]], [[]], ValueError),  # both kinds seen before the None
    ([[_UNSCORED, _SCORED, None]], [[]], ValueError),
    ([[_SCORED], [None], [_SCORED, _UNSCORED]], [[], [], []], AttributeError),
    ([[_SCORED], None, [_SCORED, _UNSCORED]], [[], [], []], TypeError),
    ([[None, _SCORED, _UNSCORED]], [[]], AttributeError),
])
def test_ndcg_reads_its_inputs_in_haystacks_order(gt, ret, error):
    with pytest.raises(error) as theirs:
        hs_eval.DocumentNDCGEvaluator().run(gt, ret)
    with pytest.raises(error) as ours:
        fe.DocumentNDCGEvaluator().run(gt, ret)
    assert type(theirs.value) is error
    if error is ValueError:
        assert "ground_truth_documents, row 0" in str(ours.value)


@pytest.mark.parametrize(("gt", "ret", "field"), [
    # a score too large for a float on a document without comparison value is never used
    ([[HaystackDocument(content="a", score=10**400), HaystackDocument(content="b", score=1.0, meta={"k": "b"})]],
     [[HaystackDocument(content="b", meta={"k": "b"})]], "meta.k"),
    ([[HaystackDocument(content="a", score=-(10**400)), HaystackDocument(content="b", score=2, meta={"k": 1})]],
     [[HaystackDocument(content="b", meta={"k": 1}), HaystackDocument(content="c", meta={"k": 1.0})]], "meta.k"),
    # ... and on one with a value, it is Haystack's OverflowError
    ([[HaystackDocument(content="a", score=10**400), HaystackDocument(content="b", score=1.0)]],
     [[HaystackDocument(content="b")]], "content"),
])
def test_ndcg_integer_scores_beyond_float_as_in_haystack(gt, ret, field):
    theirs = _outcome(hs_eval.DocumentNDCGEvaluator, {"document_comparison_field": field}, gt, ret)
    ours = _outcome(fe.DocumentNDCGEvaluator, {"document_comparison_field": field}, gt, ret)
    assert theirs == ours


class _ReplyCycle:
    """A chat generator giving the scripted replies in turn (one request per row here: the
    corrective retry is off)."""

    def __init__(self, replies):
        self.replies, self.calls = replies, 0

    def run(self, messages):
        from haystack.dataclasses import ChatMessage

        reply = self.replies[self.calls % len(self.replies)]
        self.calls += 1
        return {"replies": [ChatMessage.from_assistant(reply)]}


_LLM_REPLIES = {
    "FaithfulnessEvaluator": [
        '{"statements": ["a", "b"], "statement_scores": [1, 0]}', '{"statements": [], "statement_scores": []}',
        '{"statements": ["a"], "statement_scores": [1]}', "not json", '{"statements": ["a"]}',
        '{"statements": ["a"], "statement_scores": [1], "extra": 2}', "[1, 2]", "",
        '{"statements": ["a", "b", "c"], "statement_scores": [1, 1, 0]}',
    ],
    "ContextRelevanceEvaluator": [
        '{"relevant_statements": ["a"]}', '{"relevant_statements": []}', "nope", '{"x": 1}',
        '{"relevant_statements": ["a", "b"], "z": null}',
    ],
}
_LLM_VALUES = ["q", "", "é", None, 1, ["c1", "c2"], [], ("t",), "日本 {{ x }}", "{% raw %}"]


def _llm_outcome(evaluator_class, init, inputs):
    try:
        out = dict(evaluator_class(**init).run(**inputs))
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return ("error", ValueError if isinstance(exc, ValueError) else type(exc))
    out.pop("meta")  # one dict per row here, Haystack's replies' metadata there (documented)
    return ("ok", repr(out), [type(s) for s in out["individual_scores"]], type(out["score"]))


@pytest.mark.parametrize("name", sorted(_LLM_REPLIES))
def test_hostile_llm_inputs_match_haystack(name):
    logging.disable(logging.WARNING)
    try:
        rng = random.Random(7)
        names = ["questions", "contexts"] + (["predicted_answers"] if name == "FaithfulnessEvaluator" else [])
        for case in range(150):
            n = rng.randint(0, 4)
            inputs = {}
            for arg in names:
                values = [rng.choice(_LLM_VALUES) if rng.random() < 0.3 else
                          ([f"ctx {i}"] if arg == "contexts" else f"{arg} {i}") for i in range(n)]
                r = rng.random()
                if r < 0.05:
                    values = tuple(values)  # not a list: Haystack's ValueError
                elif r < 0.1:
                    values = values[:-1]
                elif r < 0.12:
                    continue  # a missing input
                inputs[arg] = values
            replies = [rng.choice(_LLM_REPLIES[name]) for _ in range(5)]
            init = {"progress_bar": False, "raise_on_failure": rng.random() < 0.3}
            theirs = _llm_outcome(getattr(hs_eval, name), {**init, "chat_generator": _ReplyCycle(replies)},
                                  inputs)
            ours = _llm_outcome(getattr(fe, name), {**init, "chat_generator": _ReplyCycle(replies),
                                                    "max_concurrency": 1, "corrective_retry": False}, inputs)
            assert theirs == ours, (case, inputs, replies, init, theirs, ours)
    finally:
        logging.disable(logging.NOTSET)
