"""A credential given in the request body (``generation_kwargs={"api_key": ...}`` or its
``extra_body``, as LiteLLM-style proxies take provider keys) is sent, but never saved by
``to_dict`` (the client's or an evaluator's) nor shown when a server echoes it."""

from __future__ import annotations

import json

import pytest

from fasteval.evaluators.llm import FaithfulnessEvaluator
from fasteval.judge.client import OpenAIChatClient
from fasteval.judge.errors import RequestError
from fasteval.redact import is_credential_field

from .fake_openai import Reply

pytest.importorskip("httpx")

TOP = "sk-BODYSECRET111"
NESTED = "sk-BODYSECRET222"
KWARGS = {"api_key": TOP, "extra_body": {"provider_api_key": NESTED, "region": "eu"},
          "max_tokens": 64, "prompt_cache_key": "faith-v1"}


def test_body_credentials_are_left_out_of_saved_configurations():
    client = OpenAIChatClient(model="m", base_url="http://127.0.0.1:9/v1", api_key_env=None,
                              generation_kwargs=KWARGS)
    saved = client.to_dict()["init_parameters"]["generation_kwargs"]
    assert saved == {"extra_body": {"region": "eu"}, "max_tokens": 64, "prompt_cache_key": "faith-v1"}
    text = json.dumps(FaithfulnessEvaluator(chat_generator=client, progress_bar=False).to_dict())
    assert TOP not in text and NESTED not in text and '"max_tokens": 64' in text
    assert client.generation_kwargs == KWARGS  # the client itself still sends them


def test_an_echoed_body_credential_is_masked(fake_openai):
    server = fake_openai(lambda req, n: Reply(status=400, raw=json.dumps({"error": f"bad request {req}"})))
    client = OpenAIChatClient(model="m", base_url=server.url, api_key_env=None, max_retries=0,
                              json_mode=False, generation_kwargs=KWARGS)
    with pytest.raises(RequestError) as exc:
        client.run([{"role": "user", "content": "hi"}])
    assert server.requests[0]["api_key"] == TOP  # it was sent
    text = str(exc.value)
    assert "HTTP 400" in text and TOP not in text and NESTED not in text and "***" in text


@pytest.mark.parametrize(("name", "expected"), [
    ("api_key", True), ("openai_api_key", True), ("X-Api-Key", True), ("client_secret", True),
    ("password", True), ("access_token", True), ("token", True), ("credentials", True),
    ("max_tokens", False), ("max_completion_tokens", False), ("eos_token", False),
    ("prompt_cache_key", False), ("tokenizer", False), ("seed", False), ("user", False),
])
def test_credential_field_names(name, expected):
    assert is_credential_field(name) is expected
