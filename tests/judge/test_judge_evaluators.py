"""LLMEvaluator / FaithfulnessEvaluator / ContextRelevanceEvaluator against a loopback server."""

from __future__ import annotations

import asyncio
import json
import math
import time

import pytest

from fasteval.evaluators.llm import ContextRelevanceEvaluator, FaithfulnessEvaluator, LLMEvaluator
from fasteval.judge import JudgeError, OpenAIChatClient, ReplyCache

from .fake_openai import Reply, is_correction, row_text, tag

pytest.importorskip("httpx")


def client(server, **kw):
    kw.setdefault("max_retries", 1)
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("timeout", 5.0)
    return OpenAIChatClient(model="judge-model", base_url=server.url, api_key_env=None, **kw)


# ---------------------------------------------------------------- prompt shape
PINNED = (
    "Instructions:\n"
    "Is the answer polite?\n"
    "\n"
    "Reply with one JSON object that has these keys:\n"
    '["score"]\n'
    "Use the instructions and the worked examples below to decide their values.\n"
    "\n"
    "Examples:\n"
    "Inputs:\n"
    '{"questions": "Can you help me?", "predicted_answers": "Go away."}\n'
    "Outputs:\n"
    '{"score": 0}\n'
    "\n"
    "Inputs:\n"
    '{"questions": How are you?, "predicted_answers": [\'Fine\', "it\'s ok"]}\n'
    "Outputs:"
)


def polite_evaluator(**kw):
    return LLMEvaluator(
        instructions="Is the answer polite?",
        inputs=[("questions", list[str]), ("predicted_answers", list[list[str]])],
        outputs=["score"],
        examples=[{"inputs": {"questions": "Can you help me?", "predicted_answers": "Go away."},
                   "outputs": {"score": 0}}],
        progress_bar=False,
        **kw,
    )


def test_rendered_prompt_is_pinned(fake_openai):
    server = fake_openai(lambda req, n: Reply(content={"score": 1}))
    ev = polite_evaluator(chat_generator=client(server))
    assert ev.render_prompt(questions="How are you?", predicted_answers=["Fine", "it's ok"]) == PINNED
    out = ev.run(questions=["How are you?"], predicted_answers=[["Fine", "it's ok"]])
    assert out["results"] == [{"score": 1}]
    assert server.requests[0]["messages"] == [{"role": "user", "content": PINNED}]
    assert ev.prepare_template().endswith(
        'Inputs:\n{"questions": {{ questions }}, "predicted_answers": {{ predicted_answers }}}\nOutputs:\n')


def test_prompt_has_haystacks_template_shape():
    pytest.importorskip("haystack")
    from haystack.components.evaluators import LLMEvaluator as HaystackLLMEvaluator

    class Dummy:
        def run(self, messages):  # never called
            raise AssertionError

    args = dict(
        instructions="Is the answer polite?",
        inputs=[("questions", list[str]), ("predicted_answers", list[list[str]])],
        outputs=["score", "reason"],
        examples=[{"inputs": {"questions": "Q1", "predicted_answers": ["a", "b"]}, "outputs": {"score": 0, "reason": "r"}},
                  {"inputs": {"questions": "Q2 \"x\"", "predicted_answers": []}, "outputs": {"score": 1, "reason": ""}}],
    )
    row = {"questions": 'What is "this"?', "predicted_answers": ["it's", 'say "hi"', "{{ x }}"]}
    theirs = HaystackLLMEvaluator(**args, chat_generator=Dummy()).builder.run(**row)["prompt"].split("\n")
    ours = LLMEvaluator(**args, chat_generator=Dummy()).render_prompt(**row).split("\n")
    assert len(ours) == len(theirs)
    # Same sections, examples and inputs line for line; only our two sentences of wording differ.
    differing = [i for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b]
    assert differing == [3, 5]
    assert ours[4] == theirs[4] == '["score", "reason"]'


def test_validation_messages_match_haystack():
    pytest.importorskip("haystack")
    from haystack.components.evaluators import LLMEvaluator as HaystackLLMEvaluator

    bad_init = [
        ([("q", list)], ["s"], []),
        ([["q", list[str]]], ["s"], []),
        ([("q", list[str])], "s", []),
        ([("q", list[str])], ["s"], {"inputs": {}}),
        ([("q", list[str])], ["s"], [{"inputs": {"q": 1}}]),
        ([("q", list[str])], ["s"], [{"inputs": {"q": 1}, "outputs": {1: 2}}]),
    ]
    for args in bad_init:
        with pytest.raises(ValueError) as theirs:
            HaystackLLMEvaluator.validate_init_parameters(*args)
        with pytest.raises(ValueError) as ours:
            LLMEvaluator.validate_init_parameters(*args)
        assert str(ours.value) == str(theirs.value)
    bad_inputs = [
        ({"q": list[str], "c": list[str]}, {"q": ["a"]}),
        ({"q": list[str]}, {"q": "a"}),
        ({"q": list[str], "c": list[str]}, {"q": ["a"], "c": ["b", "c"]}),
    ]
    for expected, received in bad_inputs:
        with pytest.raises(ValueError) as theirs:
            HaystackLLMEvaluator.validate_input_parameters(expected, received)
        with pytest.raises(ValueError) as ours:
            LLMEvaluator.validate_input_parameters(expected, received)
        assert str(ours.value) == str(theirs.value)


def test_run_validates_inputs_before_any_request(fake_openai):
    server = fake_openai(lambda req, n: Reply(content={"statements": [], "statement_scores": []}))
    ev = FaithfulnessEvaluator(chat_generator=client(server), progress_bar=False)
    with pytest.raises(ValueError, match="expected input parameter 'predicted_answers'"):
        ev.run(questions=["q"], contexts=[["c"]])
    with pytest.raises(ValueError, match="same length"):
        ev.run(questions=["q", "r"], contexts=[["c"]], predicted_answers=["a"])
    assert server.count == 0


# ---------------------------------------------------------------- faithfulness
def faithfulness_responder(req, n):
    """Script per row: mode=<how to reply>, s=<statement scores as digits>."""
    mode = tag(req, "mode")
    scores = [int(ch) for ch in (tag(req, "s") or "")]
    obj = {"statements": [f"S{i}" for i in range(len(scores))], "statement_scores": scores}
    text = json.dumps(obj)
    if mode == "plain":
        return Reply(content=text)
    if mode == "fenced":
        return Reply(content=f"```json\n{text}\n```")
    if mode == "prose":
        return Reply(content=f"Let me check each claim against the context.\n{text}\nDone.")
    if mode == "badjson":  # invalid JSON first, fixed after the corrective message
        return Reply(content=text) if is_correction(req) else Reply(content='{"statements": ["S0", }')
    if mode == "missing":
        return Reply(content={"statements": ["S0"]})
    if mode == "types":
        return Reply(content={"statements": ["S0"], "statement_scores": ["yes"]})
    if mode == "http500":
        return Reply(status=500)
    raise AssertionError(mode)


ROWS = [  # (mode, scores, expected score or None for failure, requests)
    ("plain", "10", 0.5, 1),
    ("fenced", "1", 1.0, 1),
    ("prose", "100", 1 / 3, 1),
    ("badjson", "11", 1.0, 2),
    ("missing", "1", None, 2),
    ("types", "1", None, 2),
    ("plain", "", 0.0, 1),  # no statements: score 0, as in Haystack
    ("http500", "1", None, 1),
]


def faithfulness_inputs(rows):
    return dict(
        questions=[f"Question {i}?" for i in range(len(rows))],
        contexts=[[f"Context {i}a.", f"Context {i}b."] for i in range(len(rows))],
        predicted_answers=[f"Answer mode={m} s={s} end" for m, s, *_ in rows],
    )


def test_faithfulness_modes_and_failures(fake_openai):
    server = fake_openai(faithfulness_responder)
    ev = FaithfulnessEvaluator(chat_generator=client(server), progress_bar=False, raise_on_failure=False)
    out = ev.run(**faithfulness_inputs(ROWS))
    expected_valid = [e for _, _, e, _ in ROWS if e is not None]
    assert out["score"] == pytest.approx(sum(expected_valid) / len(expected_valid))
    for (mode, s, expected, requests), res, score, meta in zip(
            ROWS, out["results"], out["individual_scores"], out["meta"], strict=True):
        assert meta["requests"] == requests, mode
        if expected is None:
            assert math.isnan(score) and math.isnan(res["score"])
            assert res["status"] == "error" and res["statements"] == [] and res["statement_scores"] == []
            assert meta["error"]
        else:
            assert score == pytest.approx(expected) and res["status"] == "evaluated"
            assert res["statement_scores"] == [int(c) for c in s]
            assert meta["error"] is None and meta["cached"] is False
    errors = {ROWS[i][0]: m["error"] for i, m in enumerate(out["meta"]) if m["error"]}
    assert "Missing expected keys in JSON: ['statement_scores']" in errors["missing"]
    assert "0/1 scores" in errors["types"]
    assert "HTTP 500" in errors["http500"] and "request failed" in errors["http500"]
    assert out["meta"][3]["corrected"] is True
    # the corrective request carries the bad reply and says what was wrong
    correction = next(r for r in server.requests if is_correction(r) and "mode=badjson" in row_text(r))
    assert correction["messages"][1] == {"role": "assistant", "content": '{"statements": ["S0", }'}
    assert "could not be used" in correction["messages"][2]["content"]
    assert server.count == sum(r for *_, r in ROWS) + 1  # http500: one retry inside the client
    summary = ev.last_report.summary()
    assert summary["failed"] == 3 and summary["evaluated"] == 5 and summary["corrected"] == 1


def test_raise_on_failure_raises_value_error(fake_openai):
    server = fake_openai(faithfulness_responder)
    ev = FaithfulnessEvaluator(chat_generator=client(server), progress_bar=False, max_concurrency=1)
    rows = [("plain", "1", 1.0, 1), ("missing", "1", None, 2), ("plain", "1", 1.0, 1)]
    with pytest.raises(JudgeError, match=r"row 1: unusable reply.*Missing expected keys in JSON") as info:
        ev.run(**faithfulness_inputs(rows))
    assert isinstance(info.value, ValueError)


def test_default_generator_needs_a_key_and_fails_fast(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    ev = FaithfulnessEvaluator(progress_bar=False, raise_on_failure=False)
    # Haystack's OpenAIChatGenerator (haystack-ai installed) or fasteval's client: both raise
    # a ValueError naming the variable from warm_up, before any request
    with pytest.raises(ValueError, match=r"environment variables are set: \('OPENAI_API_KEY',\)"):
        ev.run(questions=["q"], contexts=[["c"]], predicted_answers=["a"])


# ---------------------------------------------------------------- context relevance
def relevance_responder(req, n):
    text = row_text(req)
    found = [w for w in ("alpha", "beta") if w in text.split('"contexts":')[1]]
    if "broken" in text:
        return Reply(content="no idea")
    return Reply(content={"relevant_statements": [f"{w} sentence." for w in found]})


def test_context_relevance_scores(fake_openai):
    server = fake_openai(relevance_responder)
    ev = ContextRelevanceEvaluator(chat_generator=client(server), progress_bar=False, raise_on_failure=False)
    out = ev.run(questions=["q1", "q2", "q3", "q4"],
                 contexts=[["alpha here", "beta"], ["nothing"], ["broken"], ["beta only"]])
    assert out["individual_scores"][:2] == [1.0, 0.0] and out["individual_scores"][3] == 1.0
    assert math.isnan(out["individual_scores"][2])
    assert out["score"] == pytest.approx(2 / 3)
    assert out["results"][0] == {"relevant_statements": ["alpha sentence.", "beta sentence."],
                                 "score": 1.0, "status": "evaluated"}
    assert out["results"][2] == {"relevant_statements": [], "score": out["results"][2]["score"], "status": "error"}
    assert "no JSON object" in out["meta"][2]["error"]


def test_concurrency_is_real(fake_openai):
    server = fake_openai(lambda req, n: Reply(content={"relevant_statements": ["x"]}, delay=0.2))
    ev = ContextRelevanceEvaluator(chat_generator=client(server), progress_bar=False, max_concurrency=20)
    out = ev.run(questions=[f"q{i}" for i in range(200)], contexts=[["c"]] * 200)
    assert out["score"] == 1.0 and server.count == 200
    # requests overlap (the server saw at least 10 at once, each held 0.2 s), never more than
    # max_concurrency; counted by the server, not timed (a loaded machine would fail a clock)
    assert 10 <= server.max_inflight <= 20


def test_all_rows_empty_gives_nan_mean(fake_openai):
    server = fake_openai(relevance_responder)
    ev = ContextRelevanceEvaluator(chat_generator=client(server), progress_bar=False)
    out = ev.run(questions=[], contexts=[])
    assert out["results"] == [] and out["individual_scores"] == [] and math.isnan(out["score"])


# ---------------------------------------------------------------- cache and resume
def test_resume_makes_no_request_for_cached_rows(fake_openai, tmp_path):
    server = fake_openai(relevance_responder)
    questions = [f"question {i}" for i in range(20)]
    contexts = [["alpha"] if i % 3 else ["gamma"] for i in range(20)]
    ev = ContextRelevanceEvaluator(chat_generator=client(server), progress_bar=False, cache_dir=tmp_path)
    first = ev.run(questions=questions[:10], contexts=contexts[:10])
    assert server.count == 10 and len(ReplyCache(tmp_path)) == 10
    done = {row_text(r) for r in server.requests}
    full = ev.run(questions=questions, contexts=contexts)
    assert server.count == 20
    assert not done & {row_text(r) for r in server.requests[10:]}
    assert [m["cached"] for m in full["meta"]] == [True] * 10 + [False] * 10
    assert full["results"][:10] == first["results"]
    fresh = ContextRelevanceEvaluator(chat_generator=client(server), progress_bar=False).run(
        questions=questions, contexts=contexts)
    assert full["individual_scores"] == fresh["individual_scores"]
    # a third run costs nothing
    ev.run(questions=questions, contexts=contexts)
    assert server.count == 40


def test_corrupt_cache_entries_are_ignored_and_overwritten(fake_openai, tmp_path):
    server = fake_openai(relevance_responder)
    ev = ContextRelevanceEvaluator(chat_generator=client(server), progress_bar=False, cache_dir=tmp_path)
    inputs = dict(questions=["a", "b", "c", "d"], contexts=[["alpha"], ["beta"], ["none"], ["alpha beta"]])
    before = ev.run(**inputs)
    files = sorted(tmp_path.glob("??/*.json"))
    assert len(files) == 4
    files[0].write_text("{not json")
    files[1].write_bytes(b"")
    record = json.loads(files[2].read_text())
    files[2].write_text(json.dumps({**record, "text": "garbage that does not parse"}))
    after = ev.run(**inputs)
    assert server.count == 4 + 3
    assert after["individual_scores"] == before["individual_scores"]
    for f in files:
        assert json.loads(f.read_text())["key"] == f.stem


def test_failed_rows_are_not_cached(fake_openai, tmp_path):
    server = fake_openai(relevance_responder)
    ev = ContextRelevanceEvaluator(chat_generator=client(server), progress_bar=False, raise_on_failure=False,
                                   cache_dir=tmp_path)
    inputs = dict(questions=["a", "b"], contexts=[["alpha"], ["broken"]])
    ev.run(**inputs)
    assert server.count == 1 + 2
    again = ev.run(**inputs)
    assert server.count == 3 + 2  # only the failed row is asked again (first reply + correction)
    assert [m["cached"] for m in again["meta"]] == [True, False]


def test_cache_key_includes_model(fake_openai, tmp_path):
    server = fake_openai(relevance_responder)
    inputs = dict(questions=["a"], contexts=[["alpha"]])
    ContextRelevanceEvaluator(chat_generator=client(server), progress_bar=False, cache_dir=tmp_path).run(**inputs)
    other = OpenAIChatClient(model="other-model", base_url=server.url, api_key_env=None)
    ContextRelevanceEvaluator(chat_generator=other, progress_bar=False, cache_dir=tmp_path).run(**inputs)
    assert server.count == 2


def test_cache_key_includes_the_server(fake_openai, tmp_path):
    a, b = fake_openai(relevance_responder), fake_openai(relevance_responder)
    inputs = dict(questions=["a"], contexts=[["alpha"]])
    for server in (a, b, a):  # one model name on two servers: each asked once
        ContextRelevanceEvaluator(chat_generator=client(server), progress_bar=False,
                                  cache_dir=tmp_path).run(**inputs)
    assert (a.count, b.count) == (1, 1) and len(ReplyCache(tmp_path)) == 2
    ns = OpenAIChatClient(model="m", api_key_env=None, base_url=f"{a.url}/").cache_namespace()
    assert ns["endpoint"] == a.url.rstrip("/")
    openai = OpenAIChatClient(model="m", api_key_env=None).cache_namespace()
    assert "endpoint" not in openai  # OpenAI's own server: the keys it always had


# ---------------------------------------------------------------- event loops
def test_sync_run_inside_running_loop_and_run_async(fake_openai):
    server = fake_openai(relevance_responder)
    ev = ContextRelevanceEvaluator(chat_generator=client(server), progress_bar=False)

    async def cell():
        a = ev.run(questions=["q"], contexts=[["alpha"]])
        b = await ev.run_async(questions=["q"], contexts=[["none"]])
        return a["score"], b["score"]

    assert asyncio.run(cell()) == (1.0, 0.0)


# ---------------------------------------------------------------- fasteval protocol and Haystack generators
def test_plain_protocol_generator_sync_and_async():
    class SyncJudge:
        def run(self, messages):
            return '{"relevant_statements": ["x"]}' if "alpha" in row_text({"messages": messages}) else \
                '{"relevant_statements": []}'

    class BothJudge:
        """run and run_async give different verdicts: each caller must pick its own."""

        def run(self, messages):
            return '{"relevant_statements": ["from run"]}'

        async def run_async(self, messages):
            await asyncio.sleep(0.01)
            return {"replies": ['{"relevant_statements": []}']}

    out = ContextRelevanceEvaluator(chat_generator=SyncJudge(), progress_bar=False).run(
        questions=["a", "b"], contexts=[["alpha"], ["gamma"]])
    assert out["individual_scores"] == [1.0, 0.0]
    ev = ContextRelevanceEvaluator(chat_generator=BothJudge(), progress_bar=False)
    assert ev.run(questions=["a"], contexts=[["alpha"]])["individual_scores"] == [1.0]
    assert asyncio.run(ev.run_async(questions=["a"], contexts=[["alpha"]]))["individual_scores"] == [0.0]
    # a generator with run only serves run_async too (on threads)
    assert asyncio.run(ContextRelevanceEvaluator(chat_generator=SyncJudge(), progress_bar=False).run_async(
        questions=["a"], contexts=[["alpha"]]))["individual_scores"] == [1.0]


def scripted_haystack_generator():
    haystack = pytest.importorskip("haystack")
    from haystack.dataclasses import ChatMessage

    @haystack.component
    class ScriptedChatGenerator:
        """Replies from the row's markers; like any Haystack chat generator, takes ChatMessage lists."""

        def __init__(self):
            self.calls = 0

        @haystack.component.output_types(replies=list[ChatMessage])
        def run(self, messages: list[ChatMessage]):
            self.calls += 1
            assert all(isinstance(m, ChatMessage) for m in messages)
            reply = faithfulness_responder({"messages": [{"content": messages[0].text}]}, 0)
            content = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
            return {"replies": [ChatMessage.from_assistant(content, meta={"model": "scripted"})]}

    return ScriptedChatGenerator


def test_haystack_generator_gives_haystacks_results():
    cls = scripted_haystack_generator()
    from haystack.components.evaluators import FaithfulnessEvaluator as HaystackFaithfulness

    rows = [("plain", "10"), ("plain", "111"), ("missing", "1"), ("plain", ""), ("plain", "0")]
    inputs = faithfulness_inputs(rows)
    theirs = HaystackFaithfulness(chat_generator=cls(), progress_bar=False, raise_on_failure=False).run(**inputs)
    gen = cls()
    ours = FaithfulnessEvaluator(chat_generator=gen, progress_bar=False, raise_on_failure=False).run(**inputs)
    assert gen.calls == len(rows) + 1  # the missing-keys row got its corrective retry
    assert ours["score"] == pytest.approx(theirs["score"])
    assert len(ours["individual_scores"]) == len(theirs["individual_scores"]) == len(rows)
    for a, b in zip(ours["individual_scores"], theirs["individual_scores"], strict=True):
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b)
    for a, b in zip(ours["results"], theirs["results"], strict=True):
        assert a.keys() == b.keys() and a["status"] == b["status"]
        assert a["statements"] == b["statements"] and a["statement_scores"] == b["statement_scores"]
    assert ours["meta"][0]["model"] == "scripted"


def test_fenced_replies_parsed_where_haystack_fails():
    cls = scripted_haystack_generator()
    from haystack.components.evaluators import FaithfulnessEvaluator as HaystackFaithfulness

    inputs = faithfulness_inputs([("fenced", "10"), ("prose", "1")])
    theirs = HaystackFaithfulness(chat_generator=cls(), progress_bar=False, raise_on_failure=False).run(**inputs)
    ours = FaithfulnessEvaluator(chat_generator=cls(), progress_bar=False).run(**inputs)
    assert [r["status"] for r in theirs["results"]] == ["error", "error"]
    assert ours["individual_scores"] == [0.5, 1.0]


# ---------------------------------------------------------------- serialization
def test_to_dict_from_dict_round_trip(fake_openai, tmp_path):
    server = fake_openai(lambda req, n: Reply(content={"score": 1}))
    gen = client(server, requests_per_minute=120, generation_kwargs={"temperature": 0.0})
    ev = polite_evaluator(chat_generator=gen, max_concurrency=3, cache_dir=tmp_path, raise_on_failure=False)
    data = json.loads(json.dumps(ev.to_dict()))  # JSON-safe
    assert data["init_parameters"]["inputs"] == [["questions", "list[str]"], ["predicted_answers", "list[list[str]]"]]
    back = LLMEvaluator.from_dict(data)
    assert back.inputs == ev.inputs and back.outputs == ev.outputs and back.examples == ev.examples
    assert back.max_concurrency == 3 and back.cache_dir == str(tmp_path) and back.raise_on_failure is False
    assert back._chat_generator.to_dict() == gen.to_dict()
    assert back.render_prompt(questions="How are you?", predicted_answers=["Fine", "it's ok"]) == PINNED

    f = FaithfulnessEvaluator(chat_generator=gen, progress_bar=False)
    back_f = FaithfulnessEvaluator.from_dict(json.loads(json.dumps(f.to_dict())))
    assert back_f.examples == f.examples and back_f._chat_generator.base_url == server.url


def test_haystack_generator_serialization(monkeypatch):
    cls = scripted_haystack_generator()
    ev = ContextRelevanceEvaluator(chat_generator=cls(), progress_bar=False)
    data = ev.to_dict()
    # Haystack's deserialization allowlist decides on a generator from another module, as
    # for Haystack's own evaluators (here: the module of this test)
    from haystack.core.errors import DeserializationError

    with pytest.raises(DeserializationError, match="allowlist"):
        ContextRelevanceEvaluator.from_dict(data)
    monkeypatch.setenv("HAYSTACK_DESERIALIZATION_ALLOWLIST", cls.__module__)
    back = ContextRelevanceEvaluator.from_dict(data)
    assert type(back._chat_generator) is cls


@pytest.mark.parametrize("name", ["LLMEvaluator", "FaithfulnessEvaluator"])
def test_from_dict_never_builds_a_class_outside_haystacks_allowlist(name, tmp_path):
    """A saved evaluator naming ``subprocess.Popen`` as its chat generator (an untrusted
    pipeline file) is refused before anything runs, as Haystack's LLMEvaluator refuses it."""
    pytest.importorskip("haystack")
    from haystack.components.evaluators import LLMEvaluator as HaystackLLMEvaluator
    from haystack.core.errors import DeserializationError

    marker = tmp_path / "ran"
    generator = {"type": "subprocess.Popen", "init_parameters": {"args": ["touch", str(marker)]}}
    params = {"chat_generator": generator}
    if name == "LLMEvaluator":
        params.update(instructions="x", inputs=[["a", "list[str]"]], outputs=["s"], examples=[])
    cls = LLMEvaluator if name == "LLMEvaluator" else FaithfulnessEvaluator
    with pytest.raises(DeserializationError, match="subprocess"):
        cls.from_dict({"type": f"fasteval.evaluators.llm.{name}", "init_parameters": params})
    with pytest.raises(DeserializationError, match="subprocess"):  # Haystack's, the oracle
        HaystackLLMEvaluator.from_dict({"type": "haystack.components.evaluators.llm_evaluator.LLMEvaluator",
                                        "init_parameters": {**params, "instructions": "x",
                                                            "inputs": [["a", "list[str]"]],
                                                            "outputs": ["s"], "examples": []}})
    time.sleep(0.2)
    assert not marker.exists()
    # fasteval's own chat generators need no allowlist entry
    client = {"type": "fasteval.judge.client.OpenAIChatClient",
              "init_parameters": {"model": "m", "base_url": "http://127.0.0.1:9/v1"}}
    back = cls.from_dict({"type": f"fasteval.evaluators.llm.{name}", "init_parameters": {**params, "chat_generator": client}})
    assert isinstance(back._chat_generator, OpenAIChatClient) and back._chat_generator.model == "m"


def test_inside_a_haystack_pipeline(fake_openai):
    cls = scripted_haystack_generator()
    from haystack import Pipeline

    pipe = Pipeline()
    pipe.add_component("faithfulness", FaithfulnessEvaluator(chat_generator=cls(), progress_bar=False))
    out = pipe.run({"faithfulness": faithfulness_inputs([("plain", "10"), ("plain", "1")])})
    assert out["faithfulness"]["individual_scores"] == [0.5, 1.0]
    assert out["faithfulness"]["score"] == 0.75

    server = fake_openai(relevance_responder)
    pipe = Pipeline()
    pipe.add_component("relevance", ContextRelevanceEvaluator(chat_generator=client(server), progress_bar=False))
    loaded = Pipeline.loads(pipe.dumps(), allowed_modules=["fasteval"])
    out = loaded.run({"relevance": {"questions": ["a", "b"], "contexts": [["alpha"], ["zzz"]]}})
    assert out["relevance"]["individual_scores"] == [1.0, 0.0]
    assert server.count == 2


def test_loop_bound_async_generator_survives_repeated_runs():
    """Async clients (httpx, openai) bind to the loop of their first call; run_async on one loop
    and the sync run() from inside a running loop keep working."""

    class LoopBoundJudge:
        def __init__(self):
            self.loop = None
            self.sync_calls = 0

        def run(self, messages):
            self.sync_calls += 1
            return '{"relevant_statements": ["x"]}'

        async def run_async(self, messages):
            loop = asyncio.get_running_loop()
            if self.loop is None:
                self.loop = loop
            if loop is not self.loop:
                raise RuntimeError("Event loop is closed")
            return '{"relevant_statements": ["x"]}'

    judge = LoopBoundJudge()
    ev = ContextRelevanceEvaluator(chat_generator=judge, progress_bar=False)

    async def cell():
        a = ev.run(questions=["a"], contexts=[["x"]])["score"]
        b = [(await ev.run_async(questions=["a", "b"], contexts=[["x"], ["y"]]))["score"] for _ in range(3)]
        return a, b

    assert asyncio.run(cell()) == (1.0, [1.0, 1.0, 1.0])
    assert judge.sync_calls == 1


def test_own_client_repeated_sync_runs_reuse_one_loop(fake_openai):
    server = fake_openai(relevance_responder)
    ev = ContextRelevanceEvaluator(chat_generator=client(server), progress_bar=False)
    for _ in range(3):
        assert ev.run(questions=["a", "b"], contexts=[["alpha"], ["zzz"]])["individual_scores"] == [1.0, 0.0]
    assert server.count == 6


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"cache_dir": 5}, "cache_dir must be a folder (str or PathLike) or None, got 5"),
    ({"corrective_retry": "no"}, "corrective_retry must be True or False, got 'no'"),
])
def test_cache_dir_and_corrective_retry_are_checked_when_built(kwargs, message):
    from fasteval.errors import ParameterError

    class Judge:
        def run(self, messages):
            return '{"relevant_statements": []}'

    with pytest.raises(ParameterError) as err:
        ContextRelevanceEvaluator(chat_generator=Judge(), **kwargs)
    assert str(err.value) == message
