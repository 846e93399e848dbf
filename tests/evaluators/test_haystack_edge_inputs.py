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
    want = 1 / np.log2(3)
    for out in (hs_eval.DocumentNDCGEvaluator().run(gt, ret), fe.DocumentNDCGEvaluator().run(gt, ret)):
        assert set(out) == {"score", "individual_scores"}
        assert out["score"] == pytest.approx(want)
        assert out["individual_scores"] == pytest.approx([want])


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
    assert set(out) == set(hs) == {"score", "individual_scores"}
    assert out["score"] == pytest.approx(hs["score"])
    assert out["individual_scores"] == pytest.approx(hs["individual_scores"])
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


class _ScriptedGenerator:
    """A chat generator answering each row with the reply scripted for it (row index taken
    from the question ``Q<i>`` in the prompt's inputs)."""

    def __init__(self, replies):
        self.replies = replies

    def run(self, messages):
        from haystack.dataclasses import ChatMessage

        row = messages[0].text.rsplit("Inputs:", 1)[1]
        i = int(row.split('"questions": Q', 1)[1].split(",", 1)[0])
        return {"replies": [ChatMessage.from_assistant(self.replies[i])]}


def _both(name, replies, **inputs):
    n = len(replies)
    inputs = {"questions": [f"Q{i}" for i in range(n)], "contexts": [[f"c{i}"] for i in range(n)], **inputs}
    hs = getattr(hs_eval, name)(chat_generator=_ScriptedGenerator(replies), progress_bar=False,
                                raise_on_failure=False).run(**inputs)
    ours = getattr(fe, name)(chat_generator=_ScriptedGenerator(replies), progress_bar=False,
                             raise_on_failure=False, max_concurrency=1).run(**inputs)
    return hs, ours


def _same_scores(hs, ours):
    def canon(out):
        return (float(out["score"]), [float(s) for s in out["individual_scores"]],
                [{**r, "score": float(r["score"])} for r in out["results"]])

    a, b = canon(hs), canon(ours)
    assert (np.isnan(a[0]) and np.isnan(b[0])) or a[0] == b[0]
    np.testing.assert_array_equal(a[1], b[1])
    for x, y in zip(a[2], b[2], strict=True):
        assert x.keys() == y.keys()
        for key in x:
            if key == "score":
                assert (np.isnan(x[key]) and np.isnan(y[key])) or x[key] == y[key]
            else:  # raw values, types included (True stays True, 1.0 stays 1.0)
                assert x[key] == y[key] and [type(v) for v in np.atleast_1d(x[key])] == \
                    [type(v) for v in np.atleast_1d(y[key])], key


def test_faithfulness_replies_scored_as_haystack_scores_them():
    replies = [
        '{"statements": ["a", "b"], "statement_scores": [1, 0]}',
        '{"statements": ["a", "b"], "statement_scores": [true, 1.0]}',
        '{"statements": ["a", "b"], "statement_scores": [0.5, 1]}',  # not 0/1
        '{"statements": ["a", "b"], "statement_scores": [1]}',  # fewer scores than statements
        '{"statements": [1, 2], "statement_scores": [2]}',
        '{"statements": ["a"], "statement_scores": []}',  # NaN, left out of the mean
        '{"statements": null, "statement_scores": []}',  # no statements: 0
        '{"statements": ["a"], "statement_scores": 1}',
        '{"statements": ["a"], "statement_scores": [NaN]}',
    ]
    hs, ours = _both("FaithfulnessEvaluator", replies, predicted_answers=[f"a{i}" for i in range(len(replies))])
    assert [r["status"] for r in ours["results"]] == ["evaluated"] * len(replies)
    np.testing.assert_array_equal(ours["individual_scores"],
                                  [0.5, 1.0, 0.75, 1.0, 2.0, np.nan, 0.0, 1.0, np.nan])
    assert ours["score"] == pytest.approx((0.5 + 1 + 0.75 + 1 + 2 + 0 + 1) / 7)
    assert ours["results"][1]["statement_scores"] == [True, 1.0]
    _same_scores(hs, ours)


def test_context_relevance_replies_scored_as_haystack_scores_them():
    replies = ['{"relevant_statements": ["a"]}', '{"relevant_statements": []}',
               '{"relevant_statements": "a sentence"}', '{"relevant_statements": ""}',
               '{"relevant_statements": [1]}', '{"relevant_statements": {"a": 1}}']
    hs, ours = _both("ContextRelevanceEvaluator", replies)
    assert ours["individual_scores"] == [1.0, 0.0, 1.0, 0.0, 1.0, 1.0]
    assert ours["results"][2]["relevant_statements"] == "a sentence"
    _same_scores(hs, ours)


def test_replies_haystack_cannot_score_are_unusable_rows():
    # Haystack's run raises TypeError on these; here they fail their row (after one corrective retry)
    ev = fe.FaithfulnessEvaluator(
        chat_generator=_ScriptedGenerator(['{"statements": ["a"], "statement_scores": ["1"]}']),
        progress_bar=False, raise_on_failure=False)
    out = ev.run(questions=["Q0"], contexts=[["c"]], predicted_answers=["a"])
    assert out["results"][0]["status"] == "error" and np.isnan(out["score"])
    assert "must hold numbers" in out["meta"][0]["error"] and out["meta"][0]["requests"] == 2
    ev = fe.ContextRelevanceEvaluator(chat_generator=_ScriptedGenerator(['{"relevant_statements": null}']),
                                      progress_bar=False, raise_on_failure=False)
    out = ev.run(questions=["Q0"], contexts=[["c"]])
    assert out["results"][0]["status"] == "error" and np.isnan(out["individual_scores"][0])
    with pytest.raises(TypeError):
        hs_eval.ContextRelevanceEvaluator(
            chat_generator=_ScriptedGenerator(['{"relevant_statements": null}']), progress_bar=False,
            raise_on_failure=False).run(questions=["Q0"], contexts=[["c"]])


def test_a_plain_generator_reading_chat_messages_works_as_in_haystack():
    # no annotation, no component decorator: Haystack still hands it ChatMessage objects
    class Plain:
        def __init__(self):
            self.seen = []

        def run(self, messages):
            from haystack.dataclasses import ChatMessage

            self.seen.append((messages[0].text, messages[0].role.value, messages[0]["content"]
                              if isinstance(messages[0], dict) else None))
            return {"replies": [ChatMessage.from_assistant('{"relevant_statements": ["x"]}')]}

    ours_gen = Plain()
    out = fe.ContextRelevanceEvaluator(chat_generator=ours_gen, progress_bar=False).run(
        questions=["q"], contexts=[["c"]])
    theirs = hs_eval.ContextRelevanceEvaluator(chat_generator=Plain(), progress_bar=False).run(
        questions=["q"], contexts=[["c"]])
    assert out["individual_scores"] == [1.0] and theirs["individual_scores"] == [1]
    text, role, content = ours_gen.seen[0]
    assert role == "user" and text == content and text.endswith('{"questions": q, "contexts": [\'c\']}\nOutputs:')


def test_jinja_markup_in_instructions_or_examples_is_rendered_as_in_haystack():
    class Rec:
        def __init__(self):
            self.prompts = []

        def run(self, messages):
            from haystack.dataclasses import ChatMessage

            self.prompts.append(messages[0].text)
            return {"replies": [ChatMessage.from_assistant('{"score": 1}')]}

    examples = [{"inputs": {"x": "ex"}, "outputs": {"score": 1}}]
    args = {"inputs": [("x", list[str])], "outputs": ["score"], "examples": examples, "progress_bar": False}
    hs_gen, our_gen = Rec(), Rec()
    hs_eval.LLMEvaluator(instructions="Is {{ x | upper }} fine?", chat_generator=hs_gen, **args).run(x=["v"])
    ev = fe.LLMEvaluator(instructions="Is {{ x | upper }} fine?", chat_generator=our_gen, **args)
    ev.run(x=["v"])
    assert our_gen.prompts[0].splitlines()[1] == hs_gen.prompts[0].splitlines()[1] == "Is V fine?"
    assert ev.render_prompt(x="w").splitlines()[1] == "Is W fine?"
    # a variable named only in the text is a required input; an unclosed tag fails at construction
    for cls in (hs_eval.LLMEvaluator, fe.LLMEvaluator):
        with pytest.raises(ValueError, match="Missing required input variables in PromptBuilder: other"):
            cls(instructions="Rate {{ other }}", chat_generator=Rec(), **args).run(x=["v"])
        with pytest.raises(Exception, match="Missing end of comment tag") as info:
            cls(instructions="Count the {# items", chat_generator=Rec(), **args)
        assert type(info.value).__name__ == "TemplateSyntaxError"
    # values are never rendered as templates
    gen = Rec()
    fe.LLMEvaluator(instructions="Q", chat_generator=gen, **args).run(x=["{{ x }}"])
    assert gen.prompts[0].endswith('{"x": {{ x }}}\nOutputs:')


@pytest.mark.parametrize(
    ("gains", "retrieved"),
    [
        ([0.0], ["a"]),  # no gain above 0: Haystack's integer 0
        ([np.float64(0.0)], ["a"]),  # numpy gains too (not numpy.float64)
        ([-1.0], ["a"]),
        ([1.0, -5.0], ["b", "a"]),  # a positive gain, an ideal DCG below 0
        ([float("nan")], ["a"]),
        ([2.0], ["z"]),  # an ideal DCG above 0, nothing found: the float 0.0
        ([np.float64(2.0)], ["a"]),
    ],
)
def test_ndcg_values_and_their_python_types_are_haystacks(gains, retrieved):
    gt = [[Document(content=c, score=g) for c, g in zip("ab", gains, strict=False)],
          [Document(content="a", score=1.0)]]
    ret = [[Document(content=c) for c in retrieved], [Document(content="a")]]
    want = hs_eval.DocumentNDCGEvaluator().run(gt, ret)
    got = fe.DocumentNDCGEvaluator().run(gt, ret)
    assert repr(got) == repr(want)  # 0 and 0.0, float and numpy.float64 told apart
    many = fe.evaluate_documents(gt, ret, ["ndcg", "ndcg@1"])
    assert repr(many["ndcg"]) == repr(want)


@pytest.mark.parametrize("first_nan", [True, False])
def test_ndcg_repeated_value_keeps_haystacks_gain_in_long_ground_truth(first_nan):
    # more than 24 ground-truth documents take the kernel's heap sort: a repeated value's
    # gain is still folded in document order, where NaN first stays and NaN later is ignored
    for pos in (0, 13, 29):
        gt_docs = [Document(content=f"d{i}", score=1.0) for i in range(30)]
        gt_docs[pos] = Document(content="A", score=float("nan") if first_nan else 1.0)
        gt_docs.append(Document(content="A", score=1.0 if first_nan else float("nan")))
        gt, ret = [gt_docs], [[Document(content="A")]]
        want = hs_eval.DocumentNDCGEvaluator().run(gt, ret)
        got = fe.DocumentNDCGEvaluator().run(gt, ret)
        assert repr(got) == repr(want)
        if first_nan:
            assert got == {"score": 0.0, "individual_scores": [0]}
        else:
            assert got["individual_scores"][0] == pytest.approx(1 / sum(1 / np.log2(r + 2) for r in range(30)))


@pytest.mark.parametrize(
    ("scores", "numpy_result"),
    [
        ([2.0, np.float64(1.0)], False),  # the numpy score loses to a larger plain one
        ([np.float64(1.0), 2.0], False),
        ([2.0, np.float64(2.0)], False),  # a tie keeps the first
        ([np.float64(2.0), 2.0], True),
        ([1.0, np.float64(2.0)], True),
        ([np.bool_(True)], True),  # numpy.bool_ is no numbers.Real, its arithmetic is numpy's
    ],
)
def test_ndcg_result_is_numpy_only_where_haystack_uses_a_numpy_gain(scores, numpy_result):
    gt = [[Document(content="a", score=s) for s in scores], [Document(content="a", score=1.0)]]
    ret = [[Document(content="b"), Document(content="a")], [Document(content="a")]]
    want = hs_eval.DocumentNDCGEvaluator().run(gt, ret)
    got = fe.DocumentNDCGEvaluator().run(gt, ret)
    assert repr(got) == repr(want)
    assert type(got["individual_scores"][0]) is (np.float64 if numpy_result else float)
    assert type(got["individual_scores"][1]) is float
    assert got["individual_scores"][0] == pytest.approx(1 / np.log2(3))
    assert repr(fe.evaluate_documents(gt, ret, ["ndcg"])["ndcg"]) == repr(want)


@pytest.mark.parametrize(
    ("name", "replies", "scores", "score"),
    [
        ("ContextRelevanceEvaluator", ['{"relevant_statements": ["a"]}'] * 2, [1, 1], 1),
        ("ContextRelevanceEvaluator", ['{"relevant_statements": ["a"]}', '{"relevant_statements": []}'], [1, 0], 0.5),
        ("ContextRelevanceEvaluator", ['{"relevant_statements": []}', "no JSON"], [0, float("nan")], 0),
        ("FaithfulnessEvaluator", ['{"statements": ["a", "b"], "statement_scores": [1, 0]}',
                                   '{"statements": [], "statement_scores": []}'], [np.float64(0.5), 0], np.float64(0.25)),
        ("FaithfulnessEvaluator", ['{"statements": [], "statement_scores": []}'], [0], np.float64(0.0)),
        ("FaithfulnessEvaluator", ["no JSON"], [float("nan")], float("nan")),
    ],
)
def test_llm_scores_have_haystacks_python_types(name, replies, scores, score):
    # context relevance: integers 0 / 1 and statistics.mean; faithfulness: the integer 0 without
    # statements, else numpy's mean; a failed row: the float NaN
    inputs = {"predicted_answers": [f"a{i}" for i in range(len(replies))]} if name == "FaithfulnessEvaluator" else {}
    hs_out, ours = _both(name, replies, **inputs)
    assert repr(ours["individual_scores"]) == repr(hs_out["individual_scores"]) == repr(scores)
    assert repr(ours["score"]) == repr(hs_out["score"]) == repr(score)
    assert repr([r["score"] for r in ours["results"]]) == repr([r["score"] for r in hs_out["results"]])


@pytest.mark.parametrize("name", ["DocumentRecallEvaluator", "DocumentMRREvaluator",
                                  "DocumentMAPEvaluator", "DocumentNDCGEvaluator"])
def test_argument_errors_name_the_evaluator_as_haystacks_do(name):
    docs = [[Document(content="a")]]
    calls = [
        lambda cls: cls().run(ground_truth_documents=docs),
        lambda cls: cls().run(ground_truth_documents=docs, retrieved_documents=docs, extra=1),
        lambda cls: cls(bogus=1),
    ]
    for call in calls:
        messages = []
        for cls in (getattr(hs_eval, name), getattr(fe, name)):
            with pytest.raises(TypeError) as info:
                call(cls)
            messages.append(str(info.value))
        assert messages[1] == messages[0]  # "DocumentMAPEvaluator.run() missing ...", not "_DocumentEvaluator"
    assert getattr(fe, name)().run(docs, docs) == {"score": 1.0, "individual_scores": [1.0]}


@pytest.mark.parametrize("name", DOC_EVALUATORS)
@pytest.mark.parametrize("size", [1, 2])
def test_numpy_array_comparison_values_raise_type_error_naming_the_type(name, size):
    # Haystack's recall and NDCG raise TypeError (unhashable), except recall on a longer array
    # (numpy's ambiguous truth value); its MRR and MAP compare arrays elementwise (documented)
    value = np.arange(1, size + 1)
    gt = [[Document(content="x", meta={"k": value})]]
    ret = [[Document(content="y", meta={"k": value.copy()})]]
    hs = getattr(hs_eval, name)(document_comparison_field="meta.k")
    if name == "DocumentNDCGEvaluator" or (name == "DocumentRecallEvaluator" and size == 1):
        with pytest.raises(TypeError):
            hs.run(gt, ret)
    elif name == "DocumentRecallEvaluator":
        with pytest.raises(ValueError, match="ambiguous"):
            hs.run(gt, ret)
    elif size == 1:
        assert hs.run(gt, ret)["individual_scores"] == [1.0]
    with pytest.raises(TypeError, match=r"comparison value array\(\[1.*\]\) is not hashable") as info:
        getattr(fe, name)(document_comparison_field="meta.k").run(gt, ret)
    if name in ("DocumentMRREvaluator", "DocumentMAPEvaluator"):
        assert "numpy.ndarray" in str(info.value)


@pytest.mark.parametrize("name", DOC_EVALUATORS)
def test_pandas_na_comparison_value_raises_type_error_naming_the_document(name):
    pd = pytest.importorskip("pandas")
    gt = [[Document(content="x", meta={"k": "a"})], [Document(content="y", meta={"k": "b"})]]
    ret = [[Document(content="p", meta={"k": "a"})],
           [Document(content="q", meta={"k": "c"}), Document(content="r", meta={"k": pd.NA})]]
    if name != "DocumentNDCGEvaluator":  # Haystack's ==-based comparisons hit NA's truth value
        with pytest.raises(TypeError, match="boolean value of NA is ambiguous"):
            getattr(hs_eval, name)(document_comparison_field="meta.k").run(gt, ret)
    for kwargs in ({}, {"normalize": True}):
        with pytest.raises(TypeError, match=r"^retrieved_documents\[1\]\[1\]: the meta.k value is pandas' NA"):
            getattr(fe, name)(document_comparison_field="meta.k", **kwargs).run(gt, ret)
    with pytest.raises(TypeError, match=r"^ground_truth_documents\[0\]\[1\]"):
        fe.evaluate_documents(ret[1:] + gt[:1], gt, ["mrr"], document_comparison_field="meta.k")


def test_recall_mode_none_is_refused_where_haystack_fails_in_run():
    theirs = hs_eval.DocumentRecallEvaluator(mode=None)
    with pytest.raises(NameError):  # its run reads a mode function it never set
        theirs.run([[Document(content="a")]], [[Document(content="a")]])
    with pytest.raises(ValueError, match=r"^mode must be one of \['single_hit', 'multi_hit'\], got None"):
        fe.DocumentRecallEvaluator(mode=None)


@pytest.mark.parametrize("name", DOC_EVALUATORS)
def test_questions_given_as_iterators_are_read(name):
    gt = [[Document(content="a"), Document(content="b")], [Document(content="c")], []]
    ret = [[Document(content="b"), Document(content="x"), Document(content="a")], [Document(content="x")],
           [Document(content="a")]]
    expected = getattr(hs_eval, name)().run(gt, ret)
    if name != "DocumentNDCGEvaluator":  # Haystack's NDCG uses the iterators up in its input check
        assert getattr(hs_eval, name)().run([iter(q) for q in gt], [iter(q) for q in ret]) == expected
    assert getattr(fe, name)().run([iter(q) for q in gt], [(d for d in q) for q in ret]) == expected
    with pytest.raises(TypeError, match=r"^retrieved_documents\[1\]: expected a list of documents, got None$"):
        getattr(fe, name)().run(gt, [ret[0], None, ret[2]])


@pytest.mark.parametrize("content", [42, b"text", ["a"], 1.5])
def test_light_document_refuses_content_haystacks_document_refuses(content):
    with pytest.raises(ValueError, match="must be a string or None"):
        Document(content=content)
    with pytest.raises(ValueError) as info:
        fe.Document(content=content)
    assert str(info.value) == f"content must be a string or None, got {content!r}"
