"""JSON mode's fallback (a 400/404/422 answered by repeating the request without
``response_format``) turns JSON mode off only when the server answers without it; a request
refused for its own reason (a prompt too long) leaves JSON mode on for the next ones, and a
``response_format`` the user set is never dropped."""

from __future__ import annotations

import pytest

from fasteval.judge.client import OpenAIChatClient
from fasteval.judge.errors import RequestError

from .fake_openai import Reply

pytest.importorskip("httpx")


def _client(server, **kw) -> OpenAIChatClient:
    return OpenAIChatClient(model="m", base_url=server.url, api_key_env=None, max_retries=0, **kw)


def test_a_request_refused_for_its_own_reason_keeps_json_mode(fake_openai):
    def respond(req, n):
        if "too long" in req["messages"][0]["content"]:
            return Reply(status=400, raw='{"error": "maximum context length exceeded"}')
        return Reply(content='{"ok": 1}')

    server = fake_openai(respond)
    client = _client(server)
    with pytest.raises(RequestError, match="maximum context length"):
        client.run([{"role": "user", "content": "too long"}])
    assert client.run([{"role": "user", "content": "short"}]).text == '{"ok": 1}'
    assert ["response_format" in r for r in server.requests] == [True, False, True]


def test_a_server_without_json_mode_turns_it_off_once_answered(fake_openai):
    def respond(req, n):
        if "response_format" in req:
            return Reply(status=422, raw='{"error": "unknown field response_format"}')
        return Reply(content='{"ok": 1}')

    server = fake_openai(respond)
    client = _client(server)
    for _ in range(2):
        assert client.run([{"role": "user", "content": "hi"}]).text == '{"ok": 1}'
    assert ["response_format" in r for r in server.requests] == [True, False, False]


def test_the_users_response_format_is_never_dropped(fake_openai):
    server = fake_openai(lambda req, n: Reply(status=400, raw='{"error": "bad schema"}'))
    schema = {"type": "json_schema", "json_schema": {"name": "s", "schema": {"type": "object"}}}
    client = _client(server, generation_kwargs={"response_format": schema})
    with pytest.raises(RequestError, match="bad schema"):
        client.run([{"role": "user", "content": "hi"}])
    assert [r["response_format"] for r in server.requests] == [schema]


class _Status(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


class _FakeSDK:
    """Stands in for openai.OpenAI: records requests, refuses as ``refuse(request)`` says."""

    base_url, api_key = "http://127.0.0.1:9/v1", "sk-not-a-real-key"

    def __init__(self, refuse) -> None:
        from types import SimpleNamespace as NS

        self.requests: list[dict] = []

        def create(**request):
            self.requests.append(request)
            status = refuse(request)
            if status:
                raise _Status(status)
            message = NS(content='{"ok": 1}')
            return NS(model="m", usage=None, choices=[NS(message=message, finish_reason="stop")])

        self.chat = NS(completions=NS(create=create))


def test_sdk_client_keeps_json_mode_after_a_request_refused_for_its_own_reason():
    from fasteval.judge.openai_sdk import OpenAISDKClient

    sdk = _FakeSDK(lambda req: 400 if "too long" in req["messages"][0]["content"] else 0)
    judge = OpenAISDKClient(sdk, model="m")
    with pytest.raises(_Status):
        judge.run([{"role": "user", "content": "too long"}])
    assert judge.run([{"role": "user", "content": "short"}]).text == '{"ok": 1}'
    assert ["response_format" in r for r in sdk.requests] == [True, False, True]


def test_sdk_client_turns_json_mode_off_once_answered_and_keeps_the_users_format():
    from fasteval.judge.openai_sdk import OpenAISDKClient

    sdk = _FakeSDK(lambda req: 422 if req.get("response_format") == {"type": "json_object"} else 0)
    judge = OpenAISDKClient(sdk, model="m")
    for _ in range(2):
        judge.run([{"role": "user", "content": "hi"}])
    assert ["response_format" in r for r in sdk.requests] == [True, False, False]
    schema = {"type": "json_schema", "json_schema": {"name": "s", "schema": {"type": "object"}}}
    own = _FakeSDK(lambda req: 400)
    with pytest.raises(_Status):
        OpenAISDKClient(own, model="m", generation_kwargs={"response_format": schema}).run(
            [{"role": "user", "content": "hi"}])
    assert [r["response_format"] for r in own.requests] == [schema]
