"""Judges sent to other processes (multiprocessing, Ray pickle them): an OpenAIChatClient
and an evaluator holding one are pickled without the API key, and the copy authenticates
as the original and masks the credentials it was given in its own process's logs; an
OpenAISDKClient is refused with a TypeError that says what to do."""

from __future__ import annotations

import base64
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

from fasteval.evaluators.llm import FaithfulnessEvaluator
from fasteval.judge.client import OpenAIChatClient
from fasteval.judge.openai_sdk import OpenAISDKClient

from .fake_openai import Reply

pytest.importorskip("httpx")

KEY = "sk-PICKLESECRET111"
PASSWORD = "pwPICKLESECRET222"
QUERY_KEY = "qsPICKLESECRET333"
HEADER_KEY = "hdPICKLESECRET444"
MSG = [{"role": "user", "content": "hi"}]


def _client(server, userinfo: bool = True, **kw) -> OpenAIChatClient:
    url = server.url.replace("http://", f"http://al:{PASSWORD}@") if userinfo else server.url
    url += f"?api-version=1&api_key={QUERY_KEY}"
    return OpenAIChatClient(model="m", base_url=url, api_key_env="PICKLE_JUDGE_KEY", max_retries=0,
                            headers={"X-Api-Key": HEADER_KEY, "X-Team": "ir"}, **kw)


def test_a_used_client_pickles_without_the_key_and_the_copy_authenticates(fake_openai, monkeypatch):
    monkeypatch.setenv("PICKLE_JUDGE_KEY", KEY)
    server = fake_openai(lambda req, n: Reply(content='{"ok": 1}'))
    client = _client(server, userinfo=False, requests_per_minute=600)
    assert client.run(MSG).text == '{"ok": 1}'  # connections are open now
    blob = pickle.dumps(client)
    assert KEY.encode() not in blob
    monkeypatch.setenv("PICKLE_JUDGE_KEY", "sk-ROTATED999")  # the copy reads its own environment
    copy = pickle.loads(blob)
    assert copy.run(MSG).text == '{"ok": 1}'
    first, second = server.headers
    assert first["authorization"] == f"Bearer {KEY}"
    assert second["authorization"] == "Bearer sk-ROTATED999"
    assert second["x-api-key"] == HEADER_KEY and second["x-team"] == "ir"
    assert server.paths[1] == f"/v1/chat/completions?api-version=1&api_key={QUERY_KEY}"
    assert copy.to_dict() == client.to_dict()
    assert QUERY_KEY not in repr(copy) and QUERY_KEY not in str(copy.to_dict())
    assert copy.limiter is not client.limiter and copy.requests_per_minute == 600


def test_a_copy_masks_the_given_credentials_in_a_fresh_process_log(fake_openai, tmp_path):
    server = fake_openai(lambda req, n: Reply(content='{"ok": 1}'))
    blob = tmp_path / "client.pkl"
    blob.write_bytes(pickle.dumps(_client(server)))
    code = textwrap.dedent(f"""
        import logging, pickle, sys
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
        client = pickle.loads(open({str(blob)!r}, "rb").read())
        print(client.run([{{"role": "user", "content": "hi"}}]).text)
    """)
    env = {k: v for k, v in os.environ.items() if k != "PICKLE_JUDGE_KEY"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == '{"ok": 1}\n'
    assert "HTTP Request: POST" in proc.stderr and "api_key=***" in proc.stderr
    for secret in (PASSWORD, QUERY_KEY, HEADER_KEY):
        assert secret not in proc.stderr
    assert server.paths == [f"/v1/chat/completions?api-version=1&api_key={QUERY_KEY}"]  # it was sent
    basic = base64.b64encode(f"al:{PASSWORD}".encode()).decode()
    assert server.headers[0]["authorization"] == f"Basic {basic}"


def test_an_evaluator_with_a_client_pickles_and_its_copy_judges(fake_openai, monkeypatch):
    monkeypatch.setenv("PICKLE_JUDGE_KEY", KEY)
    reply = {"statements": ["s1", "s2"], "statement_scores": [1, 0]}
    server = fake_openai(lambda req, n: Reply(content=reply))
    ev = FaithfulnessEvaluator(chat_generator=_client(server), progress_bar=False)
    blob = pickle.dumps(ev)
    assert KEY.encode() not in blob
    out = pickle.loads(blob).run(questions=["q"], contexts=[["c"]], predicted_answers=["a"])
    assert out["score"] == 0.5 and out["individual_scores"] == [0.5]
    assert server.count == 1


def test_an_sdk_client_is_refused_with_what_to_do():
    openai = pytest.importorskip("openai")
    judge = OpenAISDKClient(openai.OpenAI(api_key=KEY, base_url="http://127.0.0.1:9/v1"), model="m")
    with pytest.raises(TypeError) as exc:
        pickle.dumps(judge)
    text = str(exc.value)
    assert text.startswith("an OpenAISDKClient cannot be pickled or copied")
    assert "OpenAIChatClient" in text and KEY not in text
    ev = FaithfulnessEvaluator(chat_generator=judge, progress_bar=False)
    with pytest.raises(TypeError, match="an OpenAISDKClient cannot be pickled"):
        pickle.dumps(ev)
