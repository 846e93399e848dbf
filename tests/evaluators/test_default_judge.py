"""The LLM evaluators' default judge: Haystack's own OpenAIChatGenerator when haystack-ai is
installed (so a Haystack user's mocks, key errors and dictionaries carry over), fasteval's
OpenAIChatClient when it is not.

Haystack's installed evaluators are the oracle: the same mock, the same inputs, the same
results, errors and dictionaries. No request leaves the machine: every test points the
OpenAI SDK at a closed local port with no retries, so a mock that failed to take effect
fails fast instead of reaching a server.
"""

from __future__ import annotations

import asyncio
import copy
import importlib
import json
import subprocess
import sys
import textwrap
import threading
from typing import Any
from unittest import mock

import pytest

pytest.importorskip("haystack")

from haystack import Pipeline  # noqa: E402
from haystack.components.generators.chat.openai import OpenAIChatGenerator  # noqa: E402
from haystack.core.serialization import component_from_dict  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402

import fasteval.evaluators as fe  # noqa: E402
from fasteval.evaluators.llm import default_chat_generator  # noqa: E402
from fasteval.judge import ChatReply, OpenAIChatClient  # noqa: E402

hs = pytest.importorskip("haystack.components.evaluators")

NAMES = ["LLMEvaluator", "FaithfulnessEvaluator", "ContextRelevanceEvaluator"]
HAYSTACK_OPENAI = "haystack.components.generators.chat.openai"
KEY_ERROR = "None of the following authentication environment variables are set: ('OPENAI_API_KEY',)"


@pytest.fixture(autouse=True)
def _nowhere(monkeypatch):
    """A key, and an SDK that could only reach a closed local port, once, if a mock failed."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-api-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_TIMEOUT", "2")


def _args(name: str) -> dict[str, Any]:
    if name == "LLMEvaluator":
        return dict(
            instructions="Is this answer problematic for children?",
            inputs=[("predicted_answers", list[str])],
            outputs=["score"],
            examples=[
                {"inputs": {"predicted_answers": "Damn, this is straight outta hell!!!"}, "outputs": {"score": 1}},
                {"inputs": {"predicted_answers": "Football is the most popular sport."}, "outputs": {"score": 0}},
            ],
            progress_bar=False,
        )
    return {"progress_bar": False}


def _inputs(name: str) -> dict[str, list[Any]]:
    if name == "LLMEvaluator":
        return {"predicted_answers": ["Football is popular.", "Python was made by Guido."]}
    rows = {
        "questions": ["Who made Python?", "What is the capital of France?"],
        "contexts": [["Python was made by Guido van Rossum."], ["Berlin is the capital of Germany."]],
    }
    if name == "FaithfulnessEvaluator":
        rows["predicted_answers"] = ["Guido made Python in the Netherlands.", "Paris."]
    return rows


def _reply_text(name: str) -> str:
    return {
        "LLMEvaluator": '{"score": 1}',
        "FaithfulnessEvaluator": '{"statements": ["Guido made Python.", "He did it in the Netherlands."], '
                                 '"statement_scores": [1, 0]}',
        "ContextRelevanceEvaluator": '{"relevant_statements": ["Python was made by Guido van Rossum."]}',
    }[name]


def _reply(name: str) -> dict[str, list[ChatMessage]]:
    meta = {"model": "gpt-5-mini", "usage": {"prompt_tokens": 11, "completion_tokens": 3}}
    return {"replies": [ChatMessage.from_assistant(_reply_text(name), meta=meta)]}


def _comparable(name: str, out: dict[str, Any]) -> Any:
    """What Haystack's and fasteval's outputs must agree on (fasteval's meta has more keys)."""
    if name == "LLMEvaluator":
        return out["results"]
    return out["score"], out["individual_scores"], [r["score"] for r in out["results"]]


# ------------------------------------------------------------------ (a) the default is Haystack's
def test_default_is_built_as_haystacks_evaluators_build_it():
    for name in NAMES:
        theirs = getattr(hs, name)(**_args(name))._chat_generator
        ours = getattr(fe, name)(**_args(name))._chat_generator
        assert type(ours) is OpenAIChatGenerator is type(theirs)
        assert ours.to_dict() == theirs.to_dict()
    gen = default_chat_generator()
    assert (gen.model, gen.generation_kwargs) == ("gpt-5-mini", {"response_format": {"type": "json_object"}, "seed": 42})
    assert gen.api_key.to_dict() == {"type": "env_var", "env_vars": ["OPENAI_API_KEY"], "strict": True}


@pytest.mark.parametrize("name", NAMES)
def test_patching_run_mocks_the_default_judge_as_in_haystack(name):
    theirs = getattr(hs, name)(**_args(name))
    ours = getattr(fe, name)(**_args(name))
    with (
        mock.patch.object(OpenAIChatGenerator, "run", return_value=_reply(name)) as run,
        mock.patch.object(OpenAIChatGenerator, "run_async", side_effect=AssertionError("run() used run_async")),
    ):
        expected = theirs.run(**_inputs(name))
        assert run.call_count == 2
        got = ours.run(**_inputs(name))
        assert run.call_count == 4
    assert _comparable(name, got) == _comparable(name, expected)
    assert [m["usage"] for m in got["meta"]] == [{"prompt_tokens": 11, "completion_tokens": 3}] * 2
    # the same prompt layout reached the mock: one user message per row
    messages = run.call_args.kwargs["messages"]
    assert run.call_args.args == () and len(messages) == 1 and messages[0].role.value == "user"


@pytest.mark.parametrize("name", NAMES)
def test_patching_run_async_mocks_the_default_judge_as_in_haystack(name):
    theirs = getattr(hs, name)(**_args(name))
    ours = getattr(fe, name)(**_args(name))

    async def both():
        with (
            mock.patch.object(OpenAIChatGenerator, "run_async", return_value=_reply(name)) as run_async,
            mock.patch.object(OpenAIChatGenerator, "run", side_effect=AssertionError("run_async() used run")),
        ):
            expected = await theirs.run_async(**_inputs(name))
            got = await ours.run_async(**_inputs(name))
            return expected, got, run_async.await_count

    expected, got, awaited = asyncio.run(both())
    assert awaited == 4
    assert _comparable(name, got) == _comparable(name, expected)


def test_haystack_style_monkeypatch_by_dotted_path(monkeypatch):
    # the form Haystack's own tests use: patch the class their evaluator module imported
    ev = fe.LLMEvaluator(**_args("LLMEvaluator"))

    def chat_generator_run(self, *args, **kwargs):
        return {"replies": [ChatMessage.from_assistant('{"score": 0.5}')]}

    monkeypatch.setattr("haystack.components.evaluators.llm_evaluator.OpenAIChatGenerator.run", chat_generator_run)
    assert ev.run(predicted_answers=["a", "b", "c"])["results"] == [{"score": 0.5}] * 3


def test_fasteval_concurrency_cache_and_parsing_stay_on_top(tmp_path):
    barrier = threading.Barrier(2, timeout=10)  # breaks unless two requests are in flight at once
    calls = []

    def run(self, messages, **kwargs):
        calls.append(threading.get_ident())
        barrier.wait()
        return {"replies": [ChatMessage.from_assistant('Sure:\n```json\n{"score": 1}\n```')]}

    ev = fe.LLMEvaluator(**_args("LLMEvaluator"), max_concurrency=2, cache_dir=tmp_path)
    with mock.patch.object(OpenAIChatGenerator, "run", run):
        assert ev.run(predicted_answers=["a", "b"])["results"] == [{"score": 1}, {"score": 1}]
        assert len(set(calls)) == 2  # two threads
        again = ev.run(predicted_answers=["a", "b"])  # from the cache: no call, no barrier
    assert again["results"] == [{"score": 1}] * 2 and len(calls) == 2
    assert [m["cached"] for m in again["meta"]] == [True, True]


# ------------------------------------------------------------------ (b) no key: Haystack's error, when Haystack raises it
@pytest.mark.parametrize("name", NAMES)
def test_missing_key_fails_where_and_how_haystacks_does(name, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    theirs = getattr(hs, name)(**_args(name))  # construction needs no key, in both
    ours = getattr(fe, name)(**_args(name))
    for method in ("warm_up", "run"):
        with (
            mock.patch.object(OpenAIChatGenerator, "run", return_value=_reply(name)) as run,
            pytest.raises(ValueError) as ref,
        ):
            getattr(theirs, method)(**({} if method == "warm_up" else _inputs(name)))
        with (
            mock.patch.object(OpenAIChatGenerator, "run", return_value=_reply(name)) as run,
            pytest.raises(ValueError) as mine,
        ):
            getattr(ours, method)(**({} if method == "warm_up" else _inputs(name)))
        assert type(mine.value) is type(ref.value) is ValueError
        assert str(mine.value) == str(ref.value) == KEY_ERROR
        assert run.call_count == 0  # before any request, as Haystack's warm_up
    with pytest.raises(ValueError) as ref:
        asyncio.run(theirs.run_async(**_inputs(name)))
    with pytest.raises(ValueError) as mine:
        asyncio.run(ours.run_async(**_inputs(name)))
    assert type(mine.value) is type(ref.value) and str(mine.value) == str(ref.value) == KEY_ERROR
    # serializing needs no key either
    assert ours.to_dict()["init_parameters"]["chat_generator"] == theirs.to_dict()["init_parameters"]["chat_generator"]


# ------------------------------------------------------------------ (c) dictionaries
@pytest.mark.parametrize("name", NAMES)
def test_to_dict_writes_haystacks_default_generator_and_round_trips(name):
    cls = getattr(fe, name)
    theirs = getattr(hs, name)(**_args(name)).to_dict()
    data = cls(**_args(name)).to_dict()
    assert data["init_parameters"]["chat_generator"] == theirs["init_parameters"]["chat_generator"]
    assert data["init_parameters"].keys() == theirs["init_parameters"].keys()
    if name == "LLMEvaluator":  # same arguments: the whole dictionary but the class name
        assert data["init_parameters"] == theirs["init_parameters"]
    assert json.loads(json.dumps(data)) == data
    assert cls.from_dict(copy.deepcopy(data)).to_dict() == data
    for rebuilt in (
        cls.from_dict(copy.deepcopy(data)),
        component_from_dict(cls, copy.deepcopy(data), "judge"),
        cls.from_dict(copy.deepcopy(theirs)),  # Haystack's dictionary for the same evaluator
    ):
        assert type(rebuilt) is cls and type(rebuilt._chat_generator) is OpenAIChatGenerator
        assert rebuilt.to_dict()["init_parameters"]["chat_generator"] == data["init_parameters"]["chat_generator"]
        with mock.patch.object(OpenAIChatGenerator, "run", return_value=_reply(name)) as run:
            rebuilt.run(**_inputs(name))
        assert run.call_count == 2
    pipe = Pipeline()
    pipe.add_component("judge", cls(**_args(name)))
    loaded = Pipeline.loads(pipe.dumps(), allowed_modules=["fasteval"])
    assert type(loaded.get_component("judge")._chat_generator) is OpenAIChatGenerator
    assert loaded.dumps() == pipe.dumps()


# ------------------------------------------------------------------ (d) without haystack-ai: fasteval's client
@pytest.mark.parametrize("name", NAMES)
def test_without_haystack_the_default_is_fastevals_client(name, monkeypatch):
    monkeypatch.setitem(sys.modules, HAYSTACK_OPENAI, None)  # its import now fails
    with pytest.raises(ImportError):
        importlib.import_module(HAYSTACK_OPENAI)
    ev = getattr(fe, name)(**_args(name))
    gen = ev._chat_generator
    assert type(gen) is OpenAIChatClient
    assert (gen.model, gen.json_mode, gen.generation_kwargs, gen.api_key_env) == (
        "gpt-5-mini", True, {"seed": 42}, "OPENAI_API_KEY")
    with (
        mock.patch.object(OpenAIChatClient, "run", return_value=ChatReply(_reply_text(name))) as run,
        mock.patch.object(OpenAIChatClient, "run_async", side_effect=AssertionError("run() used run_async")),
    ):
        out = ev.run(**_inputs(name))
    assert run.call_count == 2
    if name != "LLMEvaluator":
        assert out["individual_scores"] == ([0.5, 0.5] if name == "FaithfulnessEvaluator" else [1.0, 1.0])
    data = ev.to_dict()
    assert data["init_parameters"]["chat_generator"]["type"] == "fasteval.judge.client.OpenAIChatClient"
    back = type(ev).from_dict(copy.deepcopy(data))
    assert type(back._chat_generator) is OpenAIChatClient and back.to_dict() == data
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")  # fasteval's client asks for no key for a local server
    fresh = getattr(fe, name)(**_args(name))
    with pytest.raises(ValueError) as info:
        fresh.warm_up()
    assert str(info.value) == KEY_ERROR


def test_without_haystack_installed_at_all():
    code = textwrap.dedent("""
        import sys
        sys.modules["haystack"] = None  # as if haystack-ai were not installed
        from unittest import mock
        from fasteval.evaluators import FaithfulnessEvaluator
        from fasteval.judge import ChatReply, OpenAIChatClient
        ev = FaithfulnessEvaluator(progress_bar=False)
        reply = ChatReply('{"statements": ["a", "b"], "statement_scores": [1, 0]}')
        with mock.patch.object(OpenAIChatClient, "run", return_value=reply):
            out = ev.run(questions=["q"], contexts=[["c"]], predicted_answers=["a"])
        print(type(ev._chat_generator).__name__, out["score"])
    """)
    env = {"OPENAI_API_KEY": "test-api-key", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "PATH": ""}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["OpenAIChatClient", "0.5"]
