"""A hostile or careless server: replies that trickle or never end, huge bodies, long
Retry-After waits, keys echoed back, passwords in the URL. Every case ends in bounded time
and memory, and no credential reaches a message, a repr, a saved config or the output."""

from __future__ import annotations

import base64
import json
import re
import time
import tracemalloc

import polars as pl
import pytest

from fasteval.cli import main
from fasteval.evaluators.llm import FaithfulnessEvaluator
from fasteval.judge.client import OpenAIChatClient
from fasteval.judge.errors import RequestError

from .fake_openai import Reply

MSG = [{"role": "user", "content": "hi"}]
KEY = "sk-test-SECRET0123456789"
GOOD = {"statements": ["s"], "statement_scores": [1]}


def test_a_trickling_reply_is_cut_at_the_timeout(fake_openai):
    # one byte every 0.05 s: each read is quick, the whole reply would take ~10 s
    server = fake_openai(lambda req, n: Reply(content={"x": "y" * 150}, trickle=0.05))
    client = OpenAIChatClient(model="m", base_url=server.url, api_key_env=None, timeout=0.6,
                              max_retries=1, backoff_base=0.01)
    started = time.monotonic()
    with pytest.raises(RequestError, match=r"timed out \(limit 0.6 s for the whole request\)") as exc:
        client.run(MSG)
    elapsed = time.monotonic() - started
    assert exc.value.attempts == 2 and server.count == 2
    assert elapsed < 10.0, elapsed  # 2 x 0.6 s, not the ~20 s the server would trickle for


@pytest.mark.parametrize("chunked", [False, True])
def test_a_huge_reply_is_refused_without_reading_it_whole(fake_openai, chunked):
    body = json.dumps({"choices": [{"message": {"content": "x" * (20 * 2**20)}}]}).encode()
    server = fake_openai(lambda req, n: Reply(raw=body, chunked=chunked))  # made before tracing
    client = OpenAIChatClient(model="m", base_url=server.url, api_key_env=None,
                              max_reply_bytes=2**20, max_retries=3)
    tracemalloc.start()
    try:
        with pytest.raises(RequestError, match="too large") as exc:
            client.run(MSG)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert exc.value.status == 200 and exc.value.attempts == 1  # not retried
    assert ("20971" in str(exc.value)) != chunked  # the declared size, when there is one
    assert peak < 8 * 2**20, peak
    small = OpenAIChatClient(model="m", base_url=server.url, api_key_env=None)
    assert small.max_reply_bytes == 8 * 2**20  # the default
    ok = fake_openai(lambda req, n: Reply(content="y" * 1000, chunked=chunked))
    reply = OpenAIChatClient(model="m", base_url=ok.url, api_key_env=None, max_reply_bytes=4096).run(MSG)
    assert reply.text == "y" * 1000


def test_retry_after_is_capped_by_max_retry_wait(fake_openai):
    server = fake_openai(lambda req, n: Reply(status=429, headers={"Retry-After": "3600"}) if n == 0
                         else Reply(content={"ok": 1}))
    client = OpenAIChatClient(model="m", base_url=server.url, api_key_env=None, max_retry_after=0.2)
    started = time.monotonic()
    assert client.run(MSG).text == '{"ok": 1}'
    gap = server.arrivals[1] - server.arrivals[0]
    assert 0.15 < gap < 2.0 and time.monotonic() - started < 3.0


def test_job_deadline_fails_the_rows_left(fake_openai):
    server = fake_openai(lambda req, n: Reply(content=GOOD, delay=0.5))
    client = OpenAIChatClient(model="m", base_url=server.url, api_key_env=None, timeout=5)
    ev = FaithfulnessEvaluator(chat_generator=client, progress_bar=False, raise_on_failure=False,
                               max_concurrency=1, deadline=1.5)  # rows end at 0.5, 1.0, 1.5, 2.0 s
    started = time.monotonic()
    out = ev.run(questions=["q"] * 6, contexts=[["c"]] * 6, predicted_answers=[f"a{i}" for i in range(6)])
    elapsed = time.monotonic() - started
    status = [r["status"] for r in out["results"]]
    assert status[:2] == ["evaluated", "evaluated"] and status[3:] == ["error"] * 3
    errors = [m["error"] for m in out["meta"] if m["error"]]
    assert errors and all("deadline (1.5 s) passed" in e for e in errors)
    assert elapsed < 2.8, elapsed
    assert FaithfulnessEvaluator.from_dict(ev.to_dict()).deadline == 1.5
    strict = FaithfulnessEvaluator(chat_generator=client, progress_bar=False, max_concurrency=1,
                                   deadline=0.3)
    with pytest.raises(ValueError, match="deadline"):
        strict.run(questions=["q"] * 3, contexts=[["c"]] * 3, predicted_answers=["a", "b", "c"])


def test_an_echoed_key_never_reaches_the_error(fake_openai, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    server = fake_openai(lambda req, n: Reply(status=401, echo_headers=True))
    client = OpenAIChatClient(model="m", base_url=server.url, api_key_env="JUDGE_KEY")
    with pytest.raises(RequestError) as exc:
        client.run(MSG)
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"  # it was sent
    assert KEY not in str(exc.value) and "HTTP 401" in str(exc.value) and "***" in str(exc.value)


@pytest.mark.parametrize(("status", "before", "cut"), [(401, 280, 300), (200, 190, 200)])
def test_a_key_cut_by_the_excerpt_is_masked_whole(fake_openai, monkeypatch, status, before, cut):
    """A key that the message's excerpt of the body would cut in two (an error body is shown
    to 300 characters, an unreadable reply to 200): no part of it is shown."""
    key = "zq9Xw7Vb3Nm5Lk2Jh8Gf"  # no sk- shape: only the value itself can mask it
    monkeypatch.setenv("JUDGE_KEY", key)
    raw = ("<" + "y" * before + key + "y" * 50) if status == 200 else json.dumps(
        {"error": "x" * before + key + "x" * 50})
    assert raw.index(key) < cut < raw.index(key) + len(key)  # the cut falls inside the key
    server = fake_openai(lambda req, n: Reply(status=status, raw=raw))
    client = OpenAIChatClient(model="m", base_url=server.url, api_key_env="JUDGE_KEY", max_retries=0)
    with pytest.raises(RequestError) as exc:
        client.run(MSG)
    message = str(exc.value)
    assert key[:4] not in message and "***" in message
    assert ("HTTP 401" if status == 401 else "unreadable chat-completions body") in message


def test_url_credentials_are_sent_but_never_shown_or_saved(fake_openai):
    server = fake_openai(lambda req, n: Reply(status=400, echo_headers=True))
    url = server.url.replace("http://", "http://alice:pa55word@")
    client = OpenAIChatClient(model="m", base_url=url, api_key_env=None,
                              headers={"X-Api-Key": "hdr-secret-1", "X-Team": "ir"})
    with pytest.raises(RequestError) as exc:
        client.run(MSG)
    sent = server.headers[0]["authorization"]
    assert base64.b64decode(sent.split()[1]).decode() == "alice:pa55word"
    texts = [str(exc.value), repr(client), json.dumps(client.to_dict()), client.base_url, client.url]
    for text in texts:
        assert "pa55word" not in text and "hdr-secret-1" not in text
        assert base64.b64encode(b"alice:pa55word").decode() not in text
    params = client.to_dict()["init_parameters"]
    assert params["base_url"] == server.url and params["headers"] == {"X-Team": "ir"}


@pytest.mark.parametrize("name", ["api_key", "key", "access_token", "sig"])
def test_query_string_credentials_are_sent_but_never_shown_or_saved(fake_openai, name):
    """A base URL such as ``.../v1?api-version=2024-06-01&api_key=...``: the request goes to
    ``/v1/chat/completions`` with both parameters; the credential is in no message, repr,
    saved config or shown URL, and the other parameter stays."""
    secret = "qs9Xw7Vb3Nm5Lk2Jh8Gf"
    server = fake_openai(lambda req, n: Reply(status=401, raw=json.dumps(
        {"error": f"bad {name} for /v1/chat/completions?api-version=2024-06-01&{name}={secret}"})))
    client = OpenAIChatClient(model="m", base_url=f"{server.url}/?api-version=2024-06-01&{name}={secret}",
                              api_key_env=None, max_retries=0)
    with pytest.raises(RequestError) as exc:
        client.run(MSG)
    assert server.paths == [f"/v1/chat/completions?api-version=2024-06-01&{name}={secret}"]
    shown = f"{server.url}?api-version=2024-06-01"
    assert client.base_url == shown and client.url == f"{server.url}/chat/completions?api-version=2024-06-01"
    params = client.to_dict()["init_parameters"]
    assert params["base_url"] == shown
    for text in (str(exc.value), repr(client), json.dumps(client.to_dict())):
        assert secret not in text
    assert "HTTP 401" in str(exc.value) and f"{name}=***" in str(exc.value)


def test_a_basic_token_echoed_bare_is_masked(fake_openai):
    """A server quoting only the token of the Basic header (not the word Basic)."""
    token = base64.b64encode(b"alice:pa55word").decode()
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {token}"}})
    server = fake_openai(lambda req, n: Reply(status=401, raw=body))
    client = OpenAIChatClient(model="m", base_url=server.url.replace("http://", "http://alice:pa55word@"),
                              api_key_env=None, max_retries=0)
    with pytest.raises(RequestError) as exc:
        client.run(MSG)
    assert "HTTP 401" in str(exc.value) and "provided: ***" in str(exc.value)
    assert token not in str(exc.value)


def test_to_dict_drops_an_authorization_header():
    client = OpenAIChatClient(model="m", base_url="http://127.0.0.1:9/v1",
                              headers={"Authorization": f"Bearer {KEY}"})
    ev = FaithfulnessEvaluator(chat_generator=client, progress_bar=False)
    for data in (client.to_dict(), ev.to_dict()):
        assert KEY not in json.dumps(data)
    assert KEY not in repr(ev)


def test_redact_masks_every_shape_of_credential():
    from fasteval.redact import redact

    text = ("GET http://u:p4ss@h/v1 Authorization: Bearer abc.DEF-123 token=zzzz9999 "
            f"key {KEY} Basic dXNlcjpwYXNz and the key again: {KEY[3:]}")
    out = redact(text, [KEY[3:]])
    for secret in ("p4ss", "abc.DEF-123", "zzzz9999", KEY, KEY[3:], "dXNlcjpwYXNz"):
        assert secret not in out
    assert out.startswith("GET http://***@h/v1 Authorization: Bearer ***")


def _cli_args(server_url, tmp_path, *extra):
    return ["--base-url", server_url, "--model", "judge-model", "--no-progress",
            "--cache-dir", str(tmp_path / "cache"), "--max-retries", "0", *extra]


def _table(tmp_path, n=3):
    src = tmp_path / "in.parquet"
    pl.DataFrame({"question": ["q"] * n, "contexts": [["c"]] * n,
                  "answer": [f"a{i}" for i in range(n)]}).write_parquet(src)
    return src


def test_cli_every_row_failed_exits_1_and_says_so_without_the_key(fake_openai, tmp_path, capsys,
                                                                   monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    server = fake_openai(lambda req, n: Reply(status=401, echo_headers=True))
    out = tmp_path / "out.parquet"
    url = server.url.replace("http://", "http://bob:hunter22@")
    rc = main(["judge", "faithfulness", str(_table(tmp_path)), "-o", str(out),
               *_cli_args(url, tmp_path, "--api-key-env", "JUDGE_KEY")])
    err = capsys.readouterr().err
    assert rc == 1
    assert "3 of 3 rows failed" in err
    table = pl.read_parquet(out)
    assert table["status"].to_list() == ["error"] * 3
    for text in [err, *table["error"].to_list()]:
        assert KEY not in text and "hunter22" not in text
    assert all("HTTP 401" in e for e in table["error"].to_list())


def test_cli_options_bound_waits_and_replies(fake_openai, tmp_path, capsys):
    server = fake_openai(lambda req, n: Reply(status=429, headers={"Retry-After": "3600"}) if n == 0
                         else Reply(content=GOOD))
    out = tmp_path / "out.parquet"
    started = time.monotonic()
    rc = main(["judge", "faithfulness", str(_table(tmp_path, 1)), "-o", str(out),
               *_cli_args(server.url, tmp_path, "--max-retries", "1", "--max-retry-wait", "0.1")])
    assert rc == 0 and time.monotonic() - started < 5
    assert pl.read_parquet(out)["score"].to_list() == [1.0]
    big = fake_openai(lambda req, n: Reply(content="z" * 100_000))
    rc = main(["judge", "faithfulness", str(_table(tmp_path, 1)), "-o", str(out),
               *_cli_args(big.url, tmp_path, "--no-cache", "--max-reply-bytes", "10000")])
    assert rc == 1 and "too large" in pl.read_parquet(out)["error"][0]
    capsys.readouterr()
    rc = main(["judge", "faithfulness", str(_table(tmp_path, 1)), "-o", str(out),
               *_cli_args(big.url, tmp_path, "--max-retry-wait", "-1")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "--max-retry-wait must be" in err


@pytest.mark.parametrize(("value", "what"), [("zq9Xw7Vb3Nm5Lk2Jh8Gf\n", "a line break at position 20"),
                                             ("zq9Xw7Vb3Nm5Lk2Jh8G\u00e9", "the character U+00E9 at position 19")])
def test_a_key_no_header_can_carry_fails_the_job_at_once_without_showing_it(
        fake_openai, tmp_path, capsys, monkeypatch, value, what):
    """A key with a trailing newline (read from a file) or a pasted non-ASCII character:
    one clear error naming the variable before any request, not a per-row transport error
    (with retries) for every row."""
    monkeypatch.setenv("JUDGE_KEY", value)
    server = fake_openai(lambda req, n: Reply(content=GOOD))
    client = OpenAIChatClient(model="m", base_url=server.url, api_key_env="JUDGE_KEY")
    with pytest.raises(ValueError, match=f"api_key_env must be .*{re.escape(what)}.*got 'JUDGE_KEY'") as exc:
        client.warm_up()
    assert "zq9Xw7" not in str(exc.value)
    ev = FaithfulnessEvaluator(chat_generator=client, progress_bar=False, raise_on_failure=False)
    with pytest.raises(ValueError, match="api_key_env must be"):
        ev.run(questions=["q"] * 3, contexts=[["c"]] * 3, predicted_answers=["a"] * 3)
    out = tmp_path / "out.parquet"
    rc = main(["judge", "faithfulness", str(_table(tmp_path)), "-o", str(out),
               *_cli_args(server.url, tmp_path, "--api-key-env", "JUDGE_KEY")])
    err = capsys.readouterr().err
    assert rc == 2 and "--api-key-env must be" in err and what in err and "zq9Xw7" not in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()
    assert server.count == 0


def test_headers_no_request_can_carry_are_refused_without_showing_a_secret():
    with pytest.raises(ValueError, match=r"headers must be .*got 'X-Api-Key'"):
        OpenAIChatClient(model="m", base_url="http://127.0.0.1:9/v1", headers={"X-Api-Key": "s3cr\u00e9t-value"})
    with pytest.raises(ValueError, match=r"headers must be .*got 'X-Team: caf\u00e9'"):
        OpenAIChatClient(model="m", base_url="http://127.0.0.1:9/v1", headers={"X-Team": "caf\u00e9"})


def test_ctrl_c_delivered_to_another_thread_stops_the_job_at_once(fake_openai, tmp_path):
    """The kernel may hand a SIGINT to any thread (polars' and numba's pools, the event
    loop's); the job still stops within a fraction of a second, and the rows judged so far
    stay in the cache for a rerun."""
    import signal
    import threading

    server = fake_openai(lambda req, n: Reply(content=GOOD, delay=0.3))
    client = OpenAIChatClient(model="m", base_url=server.url, api_key_env=None)
    ev = FaithfulnessEvaluator(chat_generator=client, progress_bar=False, max_concurrency=2,
                               cache_dir=tmp_path / "cache")
    timer = threading.Timer(0.8, lambda: signal.pthread_kill(threading.get_ident(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):  # 40 rows of 0.3 s, 2 at a time: 6 s
        ev.run(questions=["q"] * 40, contexts=[["c"]] * 40, predicted_answers=[f"a{i}" for i in range(40)])
    elapsed = time.monotonic() - started
    sent = server.count
    time.sleep(0.5)
    assert elapsed < 4.0, elapsed  # not the 6 s of the whole job
    assert server.count == sent < 12  # nothing more is sent after the interrupt
    cached = list((tmp_path / "cache").rglob("*.json"))
    assert 0 < len(cached) <= sent and not list((tmp_path / "cache").rglob("*.tmp"))


def test_every_secret_of_a_haystack_generator_is_masked(fake_openai, monkeypatch, tmp_path):
    """Azure's AD token (a Secret beside api_key) and an Authorization header in
    generation_kwargs' extra_headers, quoted bare by the server: masked in the row's error
    and the JudgeError, absent from the saved config."""
    pytest.importorskip("haystack")
    from haystack.components.generators.chat import AzureOpenAIChatGenerator
    from haystack.utils import Secret

    from fasteval.judge.errors import JudgeError

    token, header = "adTok9Xw7Vb3Nm5Lk2Jh8Gf", "hdrTok4Lk2Jh8Gf9Xw7Vb3"
    monkeypatch.setenv("AZ_TOKEN", token)
    server = fake_openai(lambda req, n: Reply(status=401, raw=json.dumps(
        {"error": {"message": f"credential {token} expired; also {header}"}})))
    generator = AzureOpenAIChatGenerator(
        azure_endpoint=server.url.removesuffix("/v1"), azure_deployment="d", api_key=None,
        azure_ad_token=Secret.from_env_var("AZ_TOKEN"), max_retries=0,
        generation_kwargs={"extra_headers": {"X-Api-Key": header}})
    ev = FaithfulnessEvaluator(chat_generator=generator, progress_bar=False, raise_on_failure=False,
                               corrective_retry=False, cache_dir=tmp_path / "cache")
    out = ev.run(questions=["q"], contexts=[["c"]], predicted_answers=["a"])
    error = out["meta"][0]["error"]
    assert server.headers[0]["authorization"] == f"Bearer {token}"  # it was sent
    assert "401" in error and "credential *** expired" in error and header not in error
    ev.raise_on_failure = True
    with pytest.raises(JudgeError) as exc:
        ev.run(questions=["q"], contexts=[["c"]], predicted_answers=["a"])
    assert token not in str(exc.value) and header not in str(exc.value)
    saved = json.dumps(ev.to_dict()["init_parameters"]["chat_generator"]["init_parameters"]["azure_ad_token"])
    assert token not in saved and "AZ_TOKEN" in saved
