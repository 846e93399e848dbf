"""The behaviours Haystack's own evaluator tests check, with fasteval's classes.

Each test exercises what one group of haystack-ai's ``test/components/evaluators`` tests
checks, and where it can, runs Haystack's installed class on the same input as the oracle
(same outputs, same exception types and messages). No network: chat generators are fakes.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import math
import os
import subprocess
import sys
import textwrap
import typing
from typing import Any

import pytest

haystack = pytest.importorskip("haystack")

from haystack import Document, Pipeline, component, tracing  # noqa: E402
from haystack.core.errors import DeserializationError  # noqa: E402
from haystack.core.serialization import component_from_dict, default_from_dict  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402

import fasteval.evaluators as fe  # noqa: E402

hs = pytest.importorskip("haystack.components.evaluators")

DOC_EVALUATORS = ["DocumentMAPEvaluator", "DocumentMRREvaluator", "DocumentNDCGEvaluator", "DocumentRecallEvaluator"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ------------------------------------------------------------------ serialization (point 1)
@pytest.mark.parametrize("name", DOC_EVALUATORS)
def test_every_haystack_rebuild_path_works(name):
    cls = getattr(fe, name)
    ev = cls(document_comparison_field="id")
    data = ev.to_dict()
    assert data["type"] == f"{cls.__module__}.{cls.__name__}"
    assert data["init_parameters"] == getattr(hs, name)(document_comparison_field="id").to_dict()["init_parameters"]
    for rebuilt in (
        default_from_dict(cls, data),
        cls.from_dict(data),
        component_from_dict(cls, data, "x"),
    ):
        assert type(rebuilt) is cls and rebuilt.document_comparison_field == "id"
    pipe = Pipeline()
    pipe.add_component("ev", cls(document_comparison_field="meta.file"))
    loaded = Pipeline.loads(pipe.dumps(), allowed_modules=["fasteval"])
    assert type(loaded.get_component("ev")) is cls
    assert loaded.get_component("ev").document_comparison_field == "meta.file"
    assert loaded.dumps() == pipe.dumps()


def test_default_from_dict_rejects_another_class_as_haystack_does():
    data = fe.DocumentMAPEvaluator().to_dict()
    with pytest.raises(DeserializationError):
        default_from_dict(fe.DocumentMRREvaluator, data)
    with pytest.raises(ValueError, match="type must be one of"):
        fe.DocumentMRREvaluator.from_dict(data)


def test_from_dict_reads_haystack_and_legacy_types():
    theirs = hs.DocumentRecallEvaluator(mode="multi_hit", document_comparison_field="meta.a").to_dict()
    ours = fe.DocumentRecallEvaluator.from_dict(theirs)
    assert str(ours.mode) == "multi_hit" and ours.document_comparison_field == "meta.a"
    legacy = {"type": "fasteval.evaluators.haystack.DocumentNDCGEvaluator", "init_parameters": {"top_k": 3}}
    assert fe.DocumentNDCGEvaluator.from_dict(legacy).top_k == 3


def _fresh_python(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_pipeline_files_load_whatever_the_import_order():
    """Haystack finds a class in its registry or by importing its module; fasteval's classes
    enter the registry even when their module was imported before Haystack."""
    out = _fresh_python("""
        import sys
        from fasteval.evaluators import DocumentMAPEvaluator, DocumentMRREvaluator
        DocumentMAPEvaluator, DocumentMRREvaluator  # modules imported, Haystack not yet
        assert "haystack" not in sys.modules
        from haystack import Pipeline
        text = '''
        components:
          map: {type: fasteval.evaluators.document_evaluators.DocumentMAPEvaluator, init_parameters: {document_comparison_field: id}}
          old: {type: fasteval.evaluators.haystack.DocumentMRREvaluator, init_parameters: {}}
          sas: {type: fasteval.evaluators.sas.SASEvaluator, init_parameters: {model: m, batch_size: 4, device: {type: single, device: cpu}}}
        connections: []
        '''
        pipe = Pipeline.loads(text, allowed_modules=["fasteval"])
        print(type(pipe.get_component("map")).__name__, pipe.get_component("map").document_comparison_field,
              type(pipe.get_component("old")).__name__, pipe.get_component("sas").device)
    """)
    assert out.split() == ["DocumentMAPEvaluator", "id", "DocumentMRREvaluator", "cpu"]


# ------------------------------------------------------------------ NDCG helpers (point 2)
def test_ndcg_public_helpers_match_haystack():
    ours, theirs = fe.DocumentNDCGEvaluator(), hs.DocumentNDCGEvaluator()
    d = Document
    cases = [
        ([d(content="doc1"), d(content="doc2")], [d(content="doc2"), d(content="doc3"), d(content="doc1")]),
        ([d(content=f"doc{i}", score=s) for i, s in enumerate([3, 2, 3, 0, 1, 2], 1)],
         [d(content=f"doc{i}") for i in range(1, 7)]),
        ([d(content="doc1")], []),
        ([], [d(content="doc1")]),
        ([d(content="a", score=1.0), d(content="a", score=3.0), d(content=None, score=2.0)],
         [d(content="a"), d(content="a"), d(content=None)]),
    ]
    for gt, ret in cases:
        assert ours.calculate_dcg(gt, ret) == pytest.approx(theirs.calculate_dcg(gt, ret), abs=1e-12)
        assert ours.calculate_idcg(gt) == pytest.approx(theirs.calculate_idcg(gt), abs=1e-12)
        assert isinstance(ours.calculate_dcg(gt, ret), float) and isinstance(ours.calculate_idcg(gt), float)
    assert ours.calculate_dcg(*cases[0]) == pytest.approx(1.5)
    assert ours.calculate_idcg(cases[0][0]) == pytest.approx(1.6309, abs=1e-4)
    bad = [([], []), ([[d(content="a")]], []), ([[d(content="a")]], [[], []]),
           ([[d(content="a", score=1.0), d(content="b")]], [[]])]
    for gt, ret in bad:
        with pytest.raises(ValueError) as mine:
            fe.DocumentNDCGEvaluator.validate_inputs(gt, ret)
        with pytest.raises(ValueError) as ref:
            hs.DocumentNDCGEvaluator.validate_inputs(gt, ret)
        assert str(mine.value) == str(ref.value)
    fe.DocumentNDCGEvaluator.validate_inputs([[d(content="a", score=1.0)]], [[]])


def test_ndcg_helpers_follow_the_evaluator_options():
    ev = fe.DocumentNDCGEvaluator(document_comparison_field="meta.k", normalize=True, top_k=2)
    gt = [Document(content="x", meta={"k": "Paris "}), Document(content="y", meta={"k": "Rome"})]
    ret = [Document(meta={"k": "PARIS"}), Document(meta={"k": "Oslo"}), Document(meta={"k": "rome"})]
    dcg, idcg = ev.calculate_dcg(gt, ret), ev.calculate_idcg(gt)
    assert dcg == 1.0 and idcg == pytest.approx(1 + 1 / math.log2(3))
    assert ev.run([gt], [ret])["individual_scores"] == [pytest.approx(dcg / idcg)]


# ------------------------------------------------------------------ SAS serialization (point 3)
def test_sas_to_dict_matches_haystacks_layout(monkeypatch):
    pytest.importorskip("sentence_transformers")
    from haystack.utils import ComponentDevice, Secret

    monkeypatch.setenv("HF_API_TOKEN", "fake-token")
    model = "sentence-transformers/paraphrase-multilingual-mpnet-base-v2"
    for kwargs in ({"device": ComponentDevice.from_str("cuda:0")},
                   {"device": ComponentDevice.from_str("cpu"), "token": Secret.from_env_var("MY_TOKEN")},
                   {"device": None, "token": None}):
        theirs = hs.SASEvaluator(model=model, batch_size=32, **kwargs).to_dict()["init_parameters"]
        ours = fe.SASEvaluator(model=model, batch_size=32, **kwargs).to_dict()["init_parameters"]
        assert ours == theirs
    ours = fe.SASEvaluator(device=ComponentDevice.from_str("cuda:0")).to_dict()["init_parameters"]
    assert ours == {"model": "sentence-transformers/all-MiniLM-L6-v2", "batch_size": 2048,
                    "device": {"type": "single", "device": "cuda:0"},
                    "token": {"type": "env_var", "env_vars": ["HF_API_TOKEN", "HF_TOKEN"], "strict": False}}
    ev = fe.SASEvaluator()
    assert ev._model == "sentence-transformers/all-MiniLM-L6-v2" and ev._device is None
    assert ev._token.resolve_value() == "fake-token"
    with pytest.raises(ValueError, match="token-based"):  # as Haystack: a raw token never reaches a file
        fe.SASEvaluator(token=Secret.from_token("hf_secret")).to_dict()


def test_sas_round_trips_both_formats(monkeypatch):
    pytest.importorskip("sentence_transformers")
    from haystack.utils import ComponentDevice

    monkeypatch.setenv("HF_API_TOKEN", "fake-token")
    haystack_data = {
        "type": "haystack.components.evaluators.sas_evaluator.SASEvaluator",
        "init_parameters": {
            "model": "sentence-transformers/paraphrase-multilingual-mpnet-base-v2",
            "batch_size": 32,
            "device": {"type": "single", "device": "cuda:0"},
            "token": {"type": "env_var", "env_vars": ["HF_API_TOKEN", "HF_TOKEN"], "strict": False},
        },
    }
    ours = fe.SASEvaluator.from_dict(haystack_data)  # Haystack's file, fasteval's class
    assert ours._model == haystack_data["init_parameters"]["model"] and ours._batch_size == 32
    assert ours._device.to_torch_str() == "cuda:0" and ours.device == "cuda:0"
    assert ours._token.resolve_value() == "fake-token"
    data = ours.to_dict()
    assert data["init_parameters"] == haystack_data["init_parameters"]
    for back in (fe.SASEvaluator.from_dict(data), default_from_dict(fe.SASEvaluator, data),
                 component_from_dict(fe.SASEvaluator, data, "sas")):
        assert back.to_dict() == data and back._token.resolve_value() == "fake-token"
    # and the other way: fasteval's file read by Haystack's class
    theirs = hs.SASEvaluator.from_dict({**data, "type": haystack_data["type"]})
    assert theirs.to_dict()["init_parameters"] == data["init_parameters"]
    # fasteval's extras and a plain device string still round-trip
    extra = fe.SASEvaluator(model="m", device="cpu", batch_size=8, precision="float32", cache_dir="c")
    assert fe.SASEvaluator.from_dict(extra.to_dict()).to_dict() == extra.to_dict()
    assert extra.to_dict()["init_parameters"]["device"] == ComponentDevice.from_str("cpu").to_dict()


def test_sas_rejects_multi_device_and_bad_tokens():
    pytest.importorskip("sentence_transformers")
    from haystack.utils import ComponentDevice
    from haystack.utils.device import Device, DeviceMap

    multi = ComponentDevice.from_multiple(DeviceMap({"layer": Device.gpu(0)}))
    for bad in (multi, multi.to_dict(), {"type": "single"}, 3):
        with pytest.raises(ValueError, match="device"):
            fe.SASEvaluator(device=bad)
    with pytest.raises(ValueError, match="token"):
        fe.SASEvaluator(token={"type": "token", "token": "x"})


# ------------------------------------------------------------------ LLM evaluators (points 4-8)
def _llm_args() -> dict[str, Any]:
    return dict(
        instructions="Is this answer problematic for children?",
        inputs=[("predicted_answers", list[str])],
        outputs=["score"],
        examples=[{"inputs": {"predicted_answers": "Damn, this is straight outta hell!!!"}, "outputs": {"score": 1}},
                  {"inputs": {"predicted_answers": "Football is the most popular sport."}, "outputs": {"score": 0}}],
        progress_bar=False,
    )


def test_warm_up_without_api_key_fails_as_haystack_does(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError) as ref:
        hs.LLMEvaluator(**_llm_args()).warm_up()
    for cls, args in ((fe.LLMEvaluator, _llm_args()), (fe.FaithfulnessEvaluator, {}),
                      (fe.ContextRelevanceEvaluator, {})):
        ev = cls(**args)
        with pytest.raises(ValueError) as mine:
            ev.warm_up()
        assert type(ref.value) is ValueError and isinstance(mine.value, ValueError)
        assert str(mine.value) == str(ref.value)
        with pytest.raises(ValueError, match="None of the following authentication environment variables"):
            asyncio.run(ev.warm_up_async())
    # run() fails the same way, before any input is looked at or any request made
    with pytest.raises(ValueError, match="None of the following authentication environment variables"):
        fe.LLMEvaluator(**_llm_args()).run(predicted_answers=["x"])


def _two_faced_generator():
    @component
    class TwoFaced:
        """run says 1, run_async says 0: which one a caller used shows in the score."""

        def __init__(self):
            self.log: list[str] = []

        @component.output_types(replies=list[ChatMessage])
        def run(self, messages: list[ChatMessage]):
            self.log.append("run")
            return {"replies": [ChatMessage.from_assistant('{"score": 1}', meta={"usage": {"prompt_tokens": 7}})]}

        @component.output_types(replies=list[ChatMessage])
        async def run_async(self, messages: list[ChatMessage]):
            self.log.append("run_async")
            return {"replies": [ChatMessage.from_assistant('{"score": 0}', meta={"usage": {"prompt_tokens": 7}})]}

        def warm_up(self):
            self.log.append("warm_up")

        async def warm_up_async(self):
            self.log.append("warm_up_async")

        def close(self):
            self.log.append("close")

        async def close_async(self):
            self.log.append("close_async")

    return TwoFaced


def test_sync_run_calls_run_and_run_async_calls_run_async():
    cls = _two_faced_generator()
    answers = ["a", "b", "c"]
    for ev_cls in (hs.LLMEvaluator, fe.LLMEvaluator):
        gen = cls()
        ev = ev_cls(**_llm_args(), chat_generator=gen)
        assert ev.run(predicted_answers=answers)["results"] == [{"score": 1}] * 3
        assert asyncio.run(ev.run_async(predicted_answers=answers))["results"] == [{"score": 0}] * 3
        assert gen.log.count("run") == 3 and gen.log.count("run_async") == 3, ev_cls


def test_a_mocked_haystack_generator_run_is_what_answers(monkeypatch):
    from haystack.components.generators.chat.openai import OpenAIChatGenerator

    monkeypatch.setenv("OPENAI_API_KEY", "test-api-key")
    calls = []

    def fake_run(self, messages, **kwargs):
        calls.append(len(messages))
        return {"replies": [ChatMessage.from_assistant('{"score": 0.5}')]}

    async def no_network(self, *args, **kwargs):
        raise AssertionError("run_async must not be called by run()")

    generator = OpenAIChatGenerator()  # made first: Haystack compares run and run_async signatures
    monkeypatch.setattr(OpenAIChatGenerator, "run", fake_run)
    monkeypatch.setattr(OpenAIChatGenerator, "run_async", no_network)
    ev = fe.LLMEvaluator(**_llm_args(), chat_generator=generator)
    assert ev.run(predicted_answers=["x", "y"])["results"] == [{"score": 0.5}, {"score": 0.5}]
    assert calls == [1, 1]


def test_a_mocked_fasteval_client_run_is_what_answers(monkeypatch):
    from fasteval.judge import ChatReply, OpenAIChatClient

    # fasteval's client is the default judge only where Haystack's OpenAIChatGenerator is missing
    monkeypatch.setitem(sys.modules, "haystack.components.generators.chat.openai", None)
    monkeypatch.setenv("OPENAI_API_KEY", "test-api-key")
    monkeypatch.setattr(OpenAIChatClient, "run", lambda self, messages: ChatReply('{"score": 2}'))

    async def no_network(self, messages):
        raise AssertionError("run_async must not be called by run()")

    monkeypatch.setattr(OpenAIChatClient, "run_async", no_network)
    assert fe.LLMEvaluator(**_llm_args()).run(predicted_answers=["x"])["results"] == [{"score": 2}]


def test_outputs_set_after_construction_are_honoured():
    @component
    class Replier:
        @component.output_types(replies=list[ChatMessage])
        def run(self, messages: list[ChatMessage]):
            return {"replies": [ChatMessage.from_assistant('{"custom_score": 1}')]}

    got = {}
    for name, ev_cls in (("haystack", hs.LLMEvaluator), ("fasteval", fe.LLMEvaluator)):
        ev = ev_cls(**_llm_args(), chat_generator=Replier(), raise_on_failure=False)
        before = ev.run(predicted_answers=["x"])["results"]
        ev.outputs = ["custom_score"]
        after = ev.run(predicted_answers=["x"])["results"]
        got[name] = (before, after)
    assert got["fasteval"] == got["haystack"] == ([None], [{"custom_score": 1}])
    ev = fe.LLMEvaluator(**_llm_args(), chat_generator=Replier())
    ev.outputs = ["custom_score"]
    assert '["custom_score"]' in ev.prepare_template()
    with pytest.raises(ValueError):  # raise_on_failure: a reply without the current key fails
        ev.outputs = ["other"]
        ev.run(predicted_answers=["x"])


@pytest.mark.parametrize("ev_cls", [hs.LLMEvaluator, fe.LLMEvaluator])
def test_warm_up_and_close_async_delegate_or_fall_back(ev_cls):
    full = _two_faced_generator()()
    ev = ev_cls(**_llm_args(), chat_generator=full)

    async def lifecycle(e):
        await e.warm_up_async()
        await e.close_async()

    asyncio.run(lifecycle(ev))
    assert full.log == ["warm_up_async", "close_async"]

    class SyncOnly:
        def __init__(self):
            self.log = []

        def run(self, messages):
            return {"replies": [ChatMessage.from_assistant('{"score": 1}')]}

        def warm_up(self):
            self.log.append("warm_up")

        def close(self):
            self.log.append("close")

    sync_only = SyncOnly()
    asyncio.run(lifecycle(ev_cls(**_llm_args(), chat_generator=sync_only)))
    assert sync_only.log == ["warm_up", "close"]

    class Bare:
        def run(self, messages):
            return {"replies": [ChatMessage.from_assistant('{"score": 1}')]}

    asyncio.run(lifecycle(ev_cls(**_llm_args(), chat_generator=Bare())))  # nothing to call: no error


def test_llm_evaluator_in_a_pipeline_run_async():
    cls = _two_faced_generator()
    gen = cls()
    pipe = Pipeline()
    pipe.add_component("ev", fe.LLMEvaluator(**_llm_args(), chat_generator=gen))
    out = asyncio.run(pipe.run_async({"ev": {"predicted_answers": ["x", "y"]}}))
    assert out["ev"]["results"] == [{"score": 0}, {"score": 0}]
    assert "warm_up_async" in gen.log and "run" not in gen.log
    pipe = Pipeline()
    gen2 = cls()
    pipe.add_component("ev", fe.LLMEvaluator(**_llm_args(), chat_generator=gen2))
    assert pipe.run({"ev": {"predicted_answers": ["x"]}})["ev"]["results"] == [{"score": 1}]
    assert "run_async" not in gen2.log


# ------------------------------------------------------------------ tracing (point 8)
class _SpySpan(tracing.Span):
    def __init__(self, name: str, tags: dict[str, Any], parent: Any) -> None:
        self.name, self.tags, self.parent = name, dict(tags or {}), parent

    def set_tag(self, key: str, value: Any) -> None:
        self.tags[key] = value


class _SpyTracer(tracing.Tracer):
    def __init__(self) -> None:
        self.spans: list[_SpySpan] = []
        self._current: contextvars.ContextVar[_SpySpan | None] = contextvars.ContextVar("span", default=None)

    @contextlib.contextmanager
    def trace(self, operation_name, tags=None, parent_span=None):
        span = _SpySpan(operation_name, tags, parent_span)
        self.spans.append(span)
        token = self._current.set(span)
        try:
            yield span
        finally:
            self._current.reset(token)

    def current_span(self):
        return self._current.get()


@pytest.fixture
def spy_tracer():
    spy = _SpyTracer()
    old_content = tracing.tracer.is_content_tracing_enabled
    tracing.enable_tracing(spy)
    tracing.tracer.is_content_tracing_enabled = True
    try:
        yield spy
    finally:
        tracing.disable_tracing()
        tracing.tracer.is_content_tracing_enabled = old_content


def _chat_spans(spy: _SpyTracer, parent: Any) -> list[_SpySpan]:
    return [s for s in spy.spans if s.name == "haystack.chat_generator.run" and s.parent is parent]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_each_call_gets_haystacks_span_with_token_usage(spy_tracer, mode):
    cls = _two_faced_generator()
    shapes = {}
    for name, ev_cls in (("haystack", hs.LLMEvaluator), ("fasteval", fe.LLMEvaluator)):
        ev = ev_cls(**_llm_args(), chat_generator=cls())
        with tracing.tracer.trace("outer") as outer:
            if mode == "sync":
                ev.run(predicted_answers=["a", "b"])
            else:
                asyncio.run(ev.run_async(predicted_answers=["a", "b"]))
        spans = _chat_spans(spy_tracer, outer)
        assert len(spans) == 2, name
        shapes[name] = [
            (s.tags["haystack.component.name"], s.tags["haystack.component.type"],
             [m.role for m in s.tags["haystack.component.input"]["messages"]],
             [r.meta["usage"] for r in s.tags["haystack.component.output"]["replies"]])
            for s in spans
        ]
        spy_tracer.spans.clear()
    assert shapes["fasteval"] == shapes["haystack"]
    assert shapes["fasteval"][0][3] == [{"prompt_tokens": 7}]


def test_own_client_calls_are_traced_too(spy_tracer):
    from fasteval.judge import OpenAIChatClient
    from tests.judge.fake_openai import FakeOpenAI, Reply

    server = FakeOpenAI(lambda req, n: Reply(content={"score": 1}))
    try:
        judge = OpenAIChatClient(model="judge-model", base_url=server.url, api_key_env=None, max_retries=0)
        ev = fe.LLMEvaluator(**_llm_args(), chat_generator=judge)
        with tracing.tracer.trace("outer") as outer:
            assert ev.run(predicted_answers=["a", "b", "c"])["results"] == [{"score": 1}] * 3
        spans = _chat_spans(spy_tracer, outer)
        assert len(spans) == 3
        assert {s.tags["haystack.component.type"] for s in spans} == {"OpenAIChatClient"}
        for s in spans:
            (reply,) = s.tags["haystack.component.output"]["replies"]
            assert isinstance(reply, ChatMessage) and json.loads(reply.text) == {"score": 1}
            assert "usage" in reply.meta
            assert s.tags["haystack.component.input"]["messages"][0].text.startswith("Instructions:")
    finally:
        server.stop()


def test_no_spans_without_tracing():
    assert not tracing.is_tracing_enabled()
    cls = _two_faced_generator()
    ev = fe.LLMEvaluator(**_llm_args(), chat_generator=cls())
    assert ev.run(predicted_answers=["a"])["results"] == [{"score": 1}]


# ------------------------------------------------------------------ Haystack's own prompt text
@pytest.mark.parametrize("name", ["FaithfulnessEvaluator", "ContextRelevanceEvaluator"])
def test_haystacks_instructions_and_examples_can_be_passed(name, monkeypatch):
    """fasteval's default instructions and examples are its own text; passing Haystack's gives
    Haystack's prompt, line for line, but for the two sentences of template wording."""
    monkeypatch.setenv("HAYSTACK_DESERIALIZATION_ALLOWLIST", "tests")  # Capture's module, for from_dict

    @component
    class Capture:
        def __init__(self):
            self.prompts: list[str] = []

        @component.output_types(replies=list[ChatMessage])
        def run(self, messages: list[ChatMessage]):
            self.prompts.append(messages[0].text)
            reply = {"statements": ["s"], "statement_scores": [1], "relevant_statements": ["s"]}
            return {"replies": [ChatMessage.from_assistant(json.dumps(reply))]}

    inputs = {"questions": ["Who made Python?"], "contexts": [["Guido made Python.", "It is old."]]}
    if name == "FaithfulnessEvaluator":
        inputs["predicted_answers"] = ["Guido did."]
    theirs_gen, ours_gen = Capture(), Capture()
    theirs = getattr(hs, name)(chat_generator=theirs_gen, progress_bar=False)
    ours = getattr(fe, name)(instructions=theirs.instructions, examples=theirs.examples,
                             chat_generator=ours_gen, progress_bar=False)
    assert ours.run(**inputs)["individual_scores"] == theirs.run(**inputs)["individual_scores"]
    a, b = ours_gen.prompts[0].splitlines(), theirs_gen.prompts[0].splitlines()
    assert len(a) == len(b) and [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y] == [3, 5]
    data = ours.to_dict()
    assert data["init_parameters"]["instructions"] == theirs.instructions
    assert getattr(fe, name).from_dict(data).instructions == theirs.instructions
    assert "instructions" not in getattr(fe, name)(chat_generator=Capture()).to_dict()["init_parameters"]
    assert getattr(fe, name)(chat_generator=Capture()).instructions != theirs.instructions  # our own text


# ------------------------------------------------------------------ template string, dict keys
def test_prepare_template_has_haystacks_lines_and_ending(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-api-key")
    args = _llm_args()
    theirs = hs.LLMEvaluator(**args).prepare_template()
    ours = fe.LLMEvaluator(**args).prepare_template()
    assert theirs.endswith("\nOutputs:\n") and ours.endswith("\nOutputs:\n")
    a, b = ours.split("\n"), theirs.split("\n")
    assert len(a) == len(b) and [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y] == [3, 5]


@pytest.mark.parametrize("name", ["LLMEvaluator", "FaithfulnessEvaluator", "ContextRelevanceEvaluator"])
def test_to_dict_has_haystacks_keys_unless_fasteval_options_are_set(name, monkeypatch):
    from haystack.components.generators.chat.openai import OpenAIChatGenerator
    from haystack.utils import Secret

    monkeypatch.setenv("ENV_VAR", "test-api-key")
    gen = OpenAIChatGenerator(generation_kwargs={"seed": 42}, api_key=Secret.from_env_var("ENV_VAR"))
    args = _llm_args() if name == "LLMEvaluator" else {"progress_bar": False}
    theirs = getattr(hs, name)(**args, chat_generator=gen, raise_on_failure=False).to_dict()
    ev = getattr(fe, name)(**args, chat_generator=gen, raise_on_failure=False)
    assert ev.to_dict()["init_parameters"].keys() == theirs["init_parameters"].keys()
    assert ev.to_dict()["init_parameters"]["chat_generator"] == theirs["init_parameters"]["chat_generator"]
    tuned = getattr(fe, name)(**args, chat_generator=gen, max_concurrency=3, deadline=60.0, cache_dir="c")
    params = tuned.to_dict()["init_parameters"]
    assert (params["max_concurrency"], params["deadline"], params["cache_dir"]) == (3, 60.0, "c")
    assert "corrective_retry" not in params
    back = getattr(fe, name).from_dict(tuned.to_dict())
    assert (back.max_concurrency, back.deadline, back.cache_dir, back.corrective_retry) == (3, 60.0, "c", True)
    assert getattr(fe, name).from_dict(ev.to_dict()).max_concurrency == 8


# typing's spellings on purpose: each is serialized its own way
INPUT_TYPES = [
    list[str], list[list[str]], list[dict[str, Any]], list[Document], list[typing.Optional[str]],  # noqa: UP045
    list[str | None], list[typing.Union[int, str]], list[typing.Literal["yes", "no"]],  # noqa: UP007
    typing.List[str], list[tuple[str, ...]], list[dict[str, list[Document] | None]],  # noqa: UP006
]


@pytest.mark.parametrize("tp", INPUT_TYPES, ids=str)
def test_input_types_are_written_as_haystack_writes_them_and_read_back(tp, monkeypatch):
    from haystack.utils import serialize_type

    monkeypatch.setenv("OPENAI_API_KEY", "test-api-key")
    args = {"instructions": "Good?", "inputs": [("values", tp)], "outputs": ["score"], "examples": []}
    theirs = hs.LLMEvaluator(**args).to_dict()["init_parameters"]["inputs"]
    data = fe.LLMEvaluator(**args).to_dict()
    assert data["init_parameters"]["inputs"] == theirs == [["values", serialize_type(tp)]]
    assert fe.LLMEvaluator.from_dict(data).inputs == [("values", tp)]
    # a dictionary Haystack's class wrote loads too
    assert fe.LLMEvaluator.from_dict({**data, "type": "haystack.components.evaluators.llm_evaluator.LLMEvaluator"}
                                     ).inputs == [("values", tp)]


def test_input_types_from_modules_outside_haystacks_allowlist_are_refused(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-api-key")
    data = fe.LLMEvaluator("Good?", [("values", list[str])], ["score"], []).to_dict()
    data["init_parameters"]["inputs"] = [["values", "list[os.PathLike]"]]
    with pytest.raises(DeserializationError, match="allowlist"):
        fe.LLMEvaluator.from_dict(data)
