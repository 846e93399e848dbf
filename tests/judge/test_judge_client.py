"""The built-in OpenAI-compatible client against a real loopback server."""

from __future__ import annotations

import asyncio
import time

import pytest

from fasteval.errors import ParameterError
from fasteval.judge import OpenAIChatClient, RequestError, judge_prompts, make_parser
from fasteval.judge.ratelimit import TokenBucket, backoff_delay, parse_retry_after

from .fake_openai import Reply

pytest.importorskip("httpx")

MSG = [{"role": "user", "content": "Say hello as JSON."}]


def client_for(server, **kw) -> OpenAIChatClient:
    kw.setdefault("api_key_env", "FASTEVAL_TEST_JUDGE_KEY")
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("timeout", 5.0)
    return OpenAIChatClient(model="test-model", base_url=server.url, **kw)


def test_well_formed_reply_request_body_and_key(fake_openai, monkeypatch):
    monkeypatch.setenv("FASTEVAL_TEST_JUDGE_KEY", "sk-local-123")
    server = fake_openai(lambda req, n: Reply(content={"hello": "world"},
                                              usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}))
    reply = client_for(server).run(MSG)
    assert reply.text == '{"hello": "world"}'
    assert reply.usage == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    assert reply.meta["attempts"] == 1 and reply.meta["finish_reason"] == "stop"
    body = server.requests[0]
    assert body["model"] == "test-model"
    assert body["messages"] == MSG
    assert body["response_format"] == {"type": "json_object"}
    assert body["seed"] == 42
    assert server.headers[0]["authorization"] == "Bearer sk-local-123"


def test_no_key_no_authorization_header_and_no_json_mode(fake_openai, monkeypatch):
    monkeypatch.delenv("FASTEVAL_TEST_JUDGE_KEY", raising=False)
    server = fake_openai(lambda req, n: Reply(content="{}"))
    client_for(server, json_mode=False, generation_kwargs={"temperature": 0}).run(MSG)
    assert "authorization" not in server.headers[0]
    assert "response_format" not in server.requests[0]
    assert server.requests[0]["temperature"] == 0 and "seed" not in server.requests[0]


def test_openai_without_key_is_a_parameter_error(monkeypatch):
    monkeypatch.delenv("FASTEVAL_TEST_JUDGE_KEY", raising=False)
    client = OpenAIChatClient(base_url="https://api.openai.com/v1", api_key_env="FASTEVAL_TEST_JUDGE_KEY")
    with pytest.raises(ParameterError, match="FASTEVAL_TEST_JUDGE_KEY"):
        client.run(MSG)


def test_429_honours_retry_after(fake_openai):
    server = fake_openai(lambda req, n: Reply(status=429, headers={"Retry-After": "1"}) if n == 0
                         else Reply(content={"ok": 1}))
    t0 = time.perf_counter()
    reply = client_for(server).run(MSG)
    elapsed = time.perf_counter() - t0
    assert reply.text == '{"ok": 1}' and reply.meta["attempts"] == 2
    assert server.count == 2
    # backoff_base is 10 ms, so only the header explains a wait of about one second
    assert 0.95 <= elapsed < 10.0  # not the hour a header may ask for
    assert server.arrivals[1] - server.arrivals[0] >= 0.95


def test_5xx_retried_with_backoff_then_success(fake_openai):
    statuses = [500, 503, 502]
    server = fake_openai(lambda req, n: Reply(status=statuses[n]) if n < 3 else Reply(content={"ok": 1}))
    reply = client_for(server).run(MSG)
    assert server.count == 4 and reply.meta["attempts"] == 4


def test_5xx_gives_up_after_max_retries(fake_openai):
    server = fake_openai(lambda req, n: Reply(status=500))
    with pytest.raises(RequestError, match="gave up after 3 attempts") as info:
        client_for(server, max_retries=2).run(MSG)
    assert info.value.status == 500 and info.value.attempts == 3
    assert server.count == 3


def test_client_errors_are_not_retried(fake_openai):
    server = fake_openai(lambda req, n: Reply(status=401))
    with pytest.raises(RequestError, match="HTTP 401") as info:
        client_for(server, json_mode=False).run(MSG)
    assert info.value.status == 401 and server.count == 1


def test_slow_reply_times_out_and_is_retried(fake_openai):
    server = fake_openai(lambda req, n: Reply(content={"ok": 1}, delay=2.0 if n == 0 else 0.0))
    t0 = time.perf_counter()
    reply = client_for(server, timeout=0.3).run(MSG)
    elapsed = time.perf_counter() - t0
    # two requests: the first was cut at 0.3 s (had it waited the 2 s, it would be the reply)
    assert reply.text == '{"ok": 1}' and server.count == 2
    assert 0.3 <= elapsed


def test_slow_replies_exhaust_retries(fake_openai):
    server = fake_openai(lambda req, n: Reply(content={"ok": 1}, delay=1.0))
    with pytest.raises(RequestError, match="timed out") as info:
        client_for(server, timeout=0.2, max_retries=1).run(MSG)
    assert info.value.status is None and server.count == 2


def test_json_mode_fallback_when_server_rejects_response_format(fake_openai):
    def responder(req, n):
        if "response_format" in req:
            return Reply(status=400, raw='{"error": {"message": "response_format is not supported"}}')
        return Reply(content={"ok": n})

    server = fake_openai(responder)
    client = client_for(server)
    assert client.run(MSG).text == '{"ok": 1}'
    assert client.run(MSG).text == '{"ok": 2}'  # JSON mode stays off: no second rejection
    assert ["response_format" in r for r in server.requests] == [True, False, False]


def test_non_json_body_is_a_request_error(fake_openai):
    server = fake_openai(lambda req, n: Reply(raw="<html>proxy error</html>"))
    with pytest.raises(RequestError, match="unreadable"):
        client_for(server).run(MSG)


def test_sync_run_inside_a_running_event_loop(fake_openai):
    server = fake_openai(lambda req, n: Reply(content={"n": n}))
    client = client_for(server)

    async def notebook_cell():
        asyncio.get_running_loop()  # a loop is running here, as in Jupyter
        first = client.run(MSG).text
        second = (await client.run_async(MSG)).text
        await client.aclose()
        return first, second

    assert asyncio.run(notebook_cell()) == ('{"n": 0}', '{"n": 1}')


def test_requests_per_minute_limit_spaces_requests(fake_openai):
    server = fake_openai(lambda req, n: Reply(content={"score": 1}))
    client = client_for(server, requests_per_minute=600)  # 10/s, burst of 10
    t0 = time.perf_counter()
    report = judge_prompts(client, [f"p{i}" for i in range(16)], make_parser(["score"]), max_concurrency=16)
    elapsed = time.perf_counter() - t0
    assert report.summary()["evaluated"] == 16
    # 6 requests beyond the burst of 10, at 10/s: the last one may start 0.6 s after the first
    assert 0.58 <= elapsed < 10.0
    assert max(server.arrivals) - min(server.arrivals) >= 0.3


def test_tokens_per_minute_limit(fake_openai):
    server = fake_openai(lambda req, n: Reply(content={"score": 1}, usage=False))
    client = client_for(server, tokens_per_minute=30000)  # 500 tokens/s, burst 500
    prompts = ["x" * 400] * 10  # about 104 tokens each: 1040 tokens, 540 over the burst
    t0 = time.perf_counter()
    report = judge_prompts(client, prompts, make_parser(["score"]), max_concurrency=10)
    elapsed = time.perf_counter() - t0
    assert report.summary()["evaluated"] == 10
    assert 1.0 <= elapsed < 10.0  # 540 tokens over the burst at 500/s: 1.08 s


def test_token_bucket_and_retry_after_units():
    bucket = TokenBucket(60)  # 1/s, capacity 1
    delays = [bucket.reserve(1) for _ in range(3)]
    assert delays[0] == 0.0
    assert delays[1] == pytest.approx(1.0, abs=0.05) and delays[2] == pytest.approx(2.0, abs=0.05)
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    for attempt in range(6):
        d = backoff_delay(attempt, 0.5, 4.0)
        cap = min(4.0, 0.5 * 2**attempt)
        assert cap / 2 <= d <= cap


def test_bad_parameters():
    with pytest.raises(ParameterError, match="timeout"):
        OpenAIChatClient(timeout=0)
    with pytest.raises(ParameterError, match="base_url"):
        OpenAIChatClient(base_url="localhost:8000")
    with pytest.raises(ParameterError, match="requests_per_minute"):
        OpenAIChatClient(requests_per_minute=-1)


def test_retry_after_is_capped(fake_openai):
    server = fake_openai(lambda req, n: Reply(status=503, headers={"Retry-After": "3600"}) if n == 0
                         else Reply(content={"ok": 1}))
    t0 = time.perf_counter()
    client_for(server, max_retry_after=0.2).run(MSG)
    assert time.perf_counter() - t0 < 30.0 and server.count == 2  # not the 3600 s asked for


def test_connection_refused_is_retried_then_reported():
    import socket

    with socket.socket() as sock:  # a port with nothing listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = OpenAIChatClient(model="m", base_url=f"http://127.0.0.1:{port}/v1", api_key_env=None,
                              max_retries=2, backoff_base=0.01)
    with pytest.raises(RequestError, match="gave up after 3 attempts; last error: connection failed"):
        client.run(MSG)
