"""A user's openai.OpenAI / AsyncOpenAI client as the judge transport, against the loopback server."""

from __future__ import annotations

import asyncio
import json

import pytest

from fasteval.evaluators.llm import ContextRelevanceEvaluator, FaithfulnessEvaluator, LLMEvaluator
from fasteval.judge import JudgeError, OpenAISDKClient, ReplyCache

from .fake_openai import Reply, row_text

openai = pytest.importorskip("openai")

KEY = "sk-test-abcdefghijklmnop"


def relevance(req, n):
    found = "alpha" in row_text(req)
    return Reply(content={"relevant_statements": ["alpha sentence."] if found else []}, delay=0.05)


def test_sdk_client_object_is_the_transport(fake_openai):
    server = fake_openai(relevance)
    client = openai.OpenAI(api_key=KEY, base_url=server.url, max_retries=0,
                           default_headers={"X-Team": "ir"})
    ev = ContextRelevanceEvaluator(chat_generator=client, progress_bar=False, max_concurrency=8)
    assert isinstance(ev._chat_generator, OpenAISDKClient)
    questions = [f"q{i}" for i in range(16)]
    contexts = [["alpha"] if i % 2 else ["beta"] for i in range(16)]
    out = ev.run(questions=questions, contexts=contexts)
    assert out["individual_scores"] == [float(i % 2) for i in range(16)]
    assert server.count == 16 and server.max_inflight > 1  # fasteval's concurrency on top
    body, headers = server.requests[0], server.headers[0]
    assert body["model"] == "gpt-5-mini" and body["seed"] == 42
    assert body["response_format"] == {"type": "json_object"}
    assert headers["authorization"] == f"Bearer {KEY}" and headers["x-team"] == "ir"
    assert out["meta"][0]["usage"]["prompt_tokens"] > 0


def test_async_client_serves_run_async_and_run(fake_openai):
    server = fake_openai(relevance)

    async def judge():
        client = openai.AsyncOpenAI(api_key=KEY, base_url=server.url, max_retries=0)
        ev = ContextRelevanceEvaluator(chat_generator=OpenAISDKClient(client, model="judge-model"),
                                       progress_bar=False)
        out = await ev.run_async(questions=["a", "b"], contexts=[["alpha"], ["zzz"]])
        await ev.close_async()
        return out

    assert asyncio.run(judge())["individual_scores"] == [1.0, 0.0]
    assert {r["model"] for r in server.requests} == {"judge-model"}
    client = openai.AsyncOpenAI(api_key=KEY, base_url=server.url, max_retries=0)
    ev = ContextRelevanceEvaluator(chat_generator=client, progress_bar=False)
    assert ev.run(questions=["a"], contexts=[["alpha"]])["individual_scores"] == [1.0]


def test_sdk_retries_and_fasteval_cache(fake_openai, tmp_path):
    def flaky(req, n):
        return Reply(status=503, raw='{"error": {"message": "busy"}}') if n == 0 else relevance(req, n)

    server = fake_openai(flaky)
    client = openai.OpenAI(api_key=KEY, base_url=server.url, max_retries=2)
    ev = ContextRelevanceEvaluator(chat_generator=client, progress_bar=False, cache_dir=tmp_path, max_concurrency=1)
    inputs = dict(questions=["a", "b"], contexts=[["alpha"], ["zzz"]])
    assert ev.run(**inputs)["individual_scores"] == [1.0, 0.0]
    assert server.count == 3  # the SDK's own retry after the 503
    assert len(ReplyCache(tmp_path)) == 2
    again = ev.run(**inputs)
    assert server.count == 3 and [m["cached"] for m in again["meta"]] == [True, True]


def test_json_mode_dropped_when_the_server_rejects_it(fake_openai):
    def picky(req, n):
        if "response_format" in req:
            return Reply(status=400, raw='{"error": {"message": "response_format is not supported"}}')
        return Reply(content={"score": 1})

    server = fake_openai(picky)
    judge = OpenAISDKClient(openai.OpenAI(api_key=KEY, base_url=server.url, max_retries=0), model="m")
    ev = LLMEvaluator("Polite?", [("texts", list[str])], ["score"], [], progress_bar=False,
                      chat_generator=judge, max_concurrency=1)
    assert ev.run(texts=["a", "b", "c"])["results"] == [{"score": 1}] * 3
    assert server.count == 4  # one rejected request, then JSON mode stays off
    assert judge._json_supported is False


def test_key_never_serialized_shown_or_echoed(fake_openai, monkeypatch):
    def leaky(req, n):
        return Reply(status=401, raw=json.dumps({"error": {"message": f"invalid key {KEY}"}}))

    server = fake_openai(leaky)
    client = openai.OpenAI(api_key=KEY, base_url=server.url, max_retries=0)
    ev = FaithfulnessEvaluator(chat_generator=client, progress_bar=False, corrective_retry=False)
    data = ev.to_dict()
    assert KEY not in json.dumps(data) and KEY not in repr(ev) and KEY not in repr(ev._chat_generator)
    params = data["init_parameters"]["chat_generator"]["init_parameters"]
    assert params == {"model": "gpt-5-mini", "base_url": server.url, "async_client": False,
                      "json_mode": True, "generation_kwargs": {"seed": 42}}
    with pytest.raises(JudgeError) as info:
        ev.run(questions=["q"], contexts=[["c"]], predicted_answers=["a"])
    assert "401" in str(info.value) and KEY not in str(info.value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment-123")
    back = FaithfulnessEvaluator.from_dict(data)
    assert isinstance(back._chat_generator, OpenAISDKClient)
    assert back._chat_generator.base_url == server.url
    assert back._chat_generator.client.api_key == "sk-from-the-environment-123"


def test_query_string_key_of_the_client_url_is_neither_saved_nor_shown(fake_openai):
    secret = "qs9Xw7Vb3Nm5Lk2Jh8Gf"
    server = fake_openai(lambda req, n: Reply(status=401, raw=json.dumps({"error": f"bad key={secret}"})))
    client = openai.OpenAI(api_key=KEY, base_url=f"{server.url}?api-version=1&key={secret}", max_retries=0)
    ev = FaithfulnessEvaluator(chat_generator=client, progress_bar=False, corrective_retry=False)
    params = ev.to_dict()["init_parameters"]["chat_generator"]["init_parameters"]
    assert params["base_url"] == f"{server.url}?api-version=1"
    assert secret not in json.dumps(ev.to_dict()) and secret not in repr(ev)
    with pytest.raises(JudgeError) as info:
        ev.run(questions=["q"], contexts=[["c"]], predicted_answers=["a"])
    assert "request failed" in str(info.value) and secret not in str(info.value)


def test_query_string_key_echoed_url_encoded_is_masked():
    # a key with characters that the URL carries encoded: a server may echo either spelling,
    # and every message of the judge is redacted with the generator's secrets
    from fasteval.redact import generator_secrets, redact

    secret, written = "qs9/Xw7+Vb3 Nm5", "qs9%2FXw7%2BVb3%20Nm5"
    judge = OpenAISDKClient(openai.OpenAI(api_key=KEY, base_url=f"http://127.0.0.1:9/v1?key={written}"),
                            model="m")
    shown = redact(f"unknown credential {written} ({secret}, {written.replace('%20', '+')})",
                   generator_secrets(judge))
    assert shown == "unknown credential *** (***, ***)"
    assert "Xw7" not in repr(judge) and "Xw7" not in json.dumps(judge.to_dict())


def test_not_a_client_is_refused():
    with pytest.raises(ValueError, match="client must be"):
        OpenAISDKClient(object())
