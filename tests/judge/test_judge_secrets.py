"""Credentials given to the judge in every way it takes them (an API key in the
environment, a URL's ``user:password@``, an ``api_key=`` query parameter, an
``Authorization`` header, a Ray address) against every place text leaves it: log records at
DEBUG, exceptions with their chains, CLI lines, cache files, saved configurations."""

from __future__ import annotations

import json
import logging
import types

import pytest

from fasteval.cli import main
from fasteval.errors import ParameterError
from fasteval.evaluators.llm import FaithfulnessEvaluator
from fasteval.judge.cache import ReplyCache, endpoint_key
from fasteval.judge.client import OpenAIChatClient
from fasteval.judge.errors import RequestError
from fasteval.judge.openai_sdk import OpenAISDKClient
from fasteval.judge.parsing import make_parser
from fasteval.judge.runner import Backend, judge_prompts
from fasteval.redact import redact, redact_exception, scrub_config

from .fake_openai import Reply

pytest.importorskip("httpx")

KEY = "sk-TESTSECRET123"
PASSWORD = "pwTESTSECRET789"
QUERY_KEY = "qsTESTSECRET456"
HEADER_KEY = "hdTESTSECRET000"
SECRETS = (KEY, PASSWORD, QUERY_KEY, HEADER_KEY)
MSG = [{"role": "user", "content": "hi"}]


def _chain_text(exc: BaseException) -> str:
    """str and repr of ``exc`` and of every exception chained to it."""
    texts, seen, todo = [], set(), [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        texts += [str(current), repr(current)]
        todo += [current.__cause__, current.__context__, *getattr(current, "exceptions", ())]
    return "\n".join(texts)


def _assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


def test_httpx_request_log_masks_a_query_string_key(fake_openai, caplog, monkeypatch):
    """httpx logs every request's URL at INFO, the query string included."""
    monkeypatch.setenv("JUDGE_KEY", KEY)
    server = fake_openai(lambda req, n: Reply(status=401, echo_headers=True))
    url = server.url.replace("http://", f"http://al:{PASSWORD}@") + f"?api-version=1&api_key={QUERY_KEY}"
    client = OpenAIChatClient(model="m", base_url=url, api_key_env="JUDGE_KEY", max_retries=0,
                              headers={"X-Api-Key": HEADER_KEY})
    with caplog.at_level(logging.DEBUG), pytest.raises(RequestError) as exc:
        client.run(MSG)
    assert server.paths == [f"/v1/chat/completions?api-version=1&api_key={QUERY_KEY}"]  # it was sent
    lines = [r.getMessage() for r in caplog.records if r.name in ("httpx", "httpx2")]
    assert f'HTTP Request: POST {server.url}/chat/completions?api-version=1&api_key=*** ' \
           '"HTTP/1.1 401 Unauthorized"' in lines
    _assert_clean(caplog.text)
    _assert_clean(_chain_text(exc.value))


def test_a_key_given_as_the_variable_name_is_refused_unshown():
    with pytest.raises(ParameterError) as exc:
        OpenAIChatClient(model="m", api_key_env=KEY)
    assert str(exc.value) == ("api_key_env must be the name of an environment variable (letters, "
                              "digits and _, not starting with a digit), not the key itself, got "
                              "'<16 characters, not shown>'")


def test_cli_key_given_as_the_variable_name_is_one_line_unshown(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text('{"question": "q", "contexts": ["c"], "answer": "a"}\n')
    rc = main(["judge", "faithfulness", str(src), "-o", str(tmp_path / "out.parquet"),
               "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", KEY, "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err == ("fasteval: error: --api-key-env must be the name of an environment variable "
                   "(letters, digits and _, not starting with a digit), not the key itself, got "
                   "'<16 characters, not shown>'\n")
    assert not (tmp_path / "out.parquet").exists()


def test_a_base_url_without_scheme_hides_its_password():
    with pytest.raises(ParameterError) as exc:
        OpenAIChatClient(model="m", base_url=f"al:{PASSWORD}@127.0.0.1:8000/v1", api_key_env=None)
    assert str(exc.value) == "base_url must be an http:// or https:// URL, got '***@127.0.0.1:8000/v1'"


def test_a_base_url_that_is_no_string_is_a_parameter_error():
    with pytest.raises(ParameterError, match=r"^base_url must be an http:// or https:// URL \(a "
                                             r"string\) or None, got '<bytes>'$"):
        OpenAIChatClient(model="m", base_url=b"http://127.0.0.1:9/v1", api_key_env=None)


class _Completions:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def create(self, **request):
        raise self.error


def _sdk(error: Exception) -> OpenAISDKClient:
    client = types.SimpleNamespace(api_key=KEY, base_url=f"http://al:{PASSWORD}@127.0.0.1:9/v1/",
                                   chat=types.SimpleNamespace(completions=_Completions(error)))
    return OpenAISDKClient(client, model="m", json_mode=False)


def test_an_sdk_error_keeps_its_type_with_credentials_masked_in_its_chain():
    class AuthenticationError(Exception):
        def __init__(self, message: str) -> None:
            super().__init__(message)
            self.message = message

    try:
        try:
            raise KeyError(f"GET http://al:{PASSWORD}@127.0.0.1:9/v1?api_key={QUERY_KEY}")
        except KeyError as inner:
            raise AuthenticationError(f"Error code: 401 - Incorrect API key provided: {KEY}") from inner
    except AuthenticationError as exc:
        error = exc
    with pytest.raises(AuthenticationError) as caught:
        _sdk(error).run(MSG)
    assert str(caught.value) == "Error code: 401 - Incorrect API key provided: ***"
    assert caught.value.message == "Error code: 401 - Incorrect API key provided: ***"
    assert caught.value.__cause__.args == ("GET http://***@127.0.0.1:9/v1?api_key=***",)
    _assert_clean(_chain_text(caught.value))


def test_an_openai_sdk_status_error_echoing_the_headers_is_masked(fake_openai):
    openai = pytest.importorskip("openai")
    server = fake_openai(lambda req, n: Reply(status=401, echo_headers=True))
    sdk = openai.OpenAI(api_key=KEY, base_url=server.url, default_query={"api_key": QUERY_KEY},
                        max_retries=0)
    with pytest.raises(openai.AuthenticationError) as exc:
        OpenAISDKClient(sdk, model="m").run(MSG)
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"  # it was sent
    assert "'authorization': 'Bearer ***'" in str(exc.value)
    _assert_clean(_chain_text(exc.value))


@pytest.mark.parametrize("where", ["default_headers", "default_query", "extra_headers", "extra_query"])
def test_an_sdk_clients_header_and_query_credentials_echoed_bare_are_masked(fake_openai, where):
    openai = pytest.importorskip("openai")
    server = fake_openai(lambda req, n: Reply(status=401, raw=json.dumps(
        {"error": {"message": f"credential {HEADER_KEY} refused"}})))
    header, query = {"api-key": HEADER_KEY}, {"sig": HEADER_KEY}
    client_kwargs = {"default_headers": header} if where == "default_headers" else (
        {"default_query": query} if where == "default_query" else {})
    generation_kwargs = {"seed": 1, **({"extra_headers": header} if where == "extra_headers" else {}),
                         **({"extra_query": query} if where == "extra_query" else {})}
    sdk = openai.OpenAI(api_key=KEY, base_url=server.url, max_retries=0, **client_kwargs)
    with pytest.raises(openai.AuthenticationError) as exc:
        OpenAISDKClient(sdk, model="m", generation_kwargs=generation_kwargs).run(MSG)
    sent = server.headers[0].get("api-key") or server.paths[0]
    assert HEADER_KEY in sent  # it was sent
    assert "credential *** refused" in str(exc.value)
    _assert_clean(_chain_text(exc.value))


def test_redact_exception_reaches_the_members_of_an_exception_group():
    class Group(Exception):  # ExceptionGroup's shape (Python 3.11+)
        def __init__(self, message: str, exceptions: list[Exception]) -> None:
            super().__init__(message)
            self.exceptions = tuple(exceptions)

    group = Group("several", [ValueError(f"token={KEY}"), OSError(f"x {PASSWORD}")])
    redact_exception(group, [PASSWORD])
    assert [str(e) for e in group.exceptions] == ["token=***", "x ***"]


class _HaystackStyle:
    """A chat generator naming its server by ``api_base_url`` (as Haystack's do)."""

    def __init__(self, url: str) -> None:
        self.api_base_url = url
        self.model = "m"
        self.generation_kwargs = {"extra_headers": {"Authorization": f"Bearer {HEADER_KEY}"}}

    def run(self, messages):
        return '{"score": 1}'


def test_cache_key_and_files_hold_no_credential_of_the_server_url(tmp_path):
    clean = "http://127.0.0.1:9/v1?api-version=1"
    secret_url = f"http://al:{PASSWORD}@127.0.0.1:9/v1?api-version=1&api_key={QUERY_KEY}"
    assert endpoint_key(secret_url) == {"endpoint": clean}
    namespaces = [Backend(_HaystackStyle(u), None).cache_namespace() for u in (secret_url, clean)]
    assert namespaces[0] == namespaces[1]  # a changed key keeps the cached replies
    report = judge_prompts(_HaystackStyle(secret_url), ["p"], make_parser(["score"]),
                           cache=tmp_path, progress_bar=False)
    assert report.outcomes[0].result == {"score": 1}
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == 1 and len(ReplyCache(tmp_path)) == 1
    _assert_clean(files[0].read_text())
    again = judge_prompts(_HaystackStyle(clean), ["p"], make_parser(["score"]), cache=tmp_path,
                          progress_bar=False)
    assert again.outcomes[0].cached


def test_scrub_config_cleans_urls_and_header_mappings_at_any_depth():
    data = {"type": "x.Gen", "init_parameters": {
        "api_base_url": f"http://al:{PASSWORD}@h/v1?api_key={QUERY_KEY}&v=2",
        "http_client_kwargs": {"headers": {"X-Api-Key": HEADER_KEY, "Accept": "json"}},
        "generation_kwargs": {"extra_headers": {"authorization": f"Bearer {KEY}"}, "seed": 1},
        "api_key": {"type": "env_var", "env_vars": ["OPENAI_API_KEY"], "strict": True}}}
    assert scrub_config(data) == {"type": "x.Gen", "init_parameters": {
        "api_base_url": "http://h/v1?v=2",
        "http_client_kwargs": {"headers": {"Accept": "json"}},
        "generation_kwargs": {"extra_headers": {}, "seed": 1},
        "api_key": {"type": "env_var", "env_vars": ["OPENAI_API_KEY"], "strict": True}}}


def test_evaluator_to_dict_of_a_haystack_generator_holds_no_credential(monkeypatch):
    pytest.importorskip("haystack")
    from haystack.components.generators.chat import OpenAIChatGenerator

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    generator = OpenAIChatGenerator(
        api_base_url=f"http://al:{PASSWORD}@127.0.0.1:9/v1?api_key={QUERY_KEY}",
        generation_kwargs={"extra_headers": {"Authorization": f"Bearer {HEADER_KEY}", "X-Team": "ir"}})
    evaluator = FaithfulnessEvaluator(chat_generator=generator, progress_bar=False)
    data = evaluator.to_dict()
    params = data["init_parameters"]["chat_generator"]["init_parameters"]
    assert params["api_base_url"] == "http://127.0.0.1:9/v1"
    assert params["generation_kwargs"]["extra_headers"] == {"X-Team": "ir"}
    _assert_clean(json.dumps(data) + repr(evaluator))
    rebuilt = FaithfulnessEvaluator.from_dict(data)
    assert rebuilt.to_dict() == data


def test_evaluator_to_dict_drops_query_mappings_proxy_urls_and_auth_of_a_haystack_generator(
        monkeypatch):
    pytest.importorskip("haystack")
    from haystack.components.generators.chat import OpenAIChatGenerator

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    generator = OpenAIChatGenerator(
        api_base_url="http://127.0.0.1:9/v1",
        generation_kwargs={"extra_query": {"api_key": QUERY_KEY, "api-version": "2024-06-01"},
                           "max_tokens": 50},
        http_client_kwargs={"proxy": f"http://al:{PASSWORD}@proxy.local:3128",
                            "auth": ["al", HEADER_KEY]})
    data = FaithfulnessEvaluator(chat_generator=generator, progress_bar=False).to_dict()
    params = data["init_parameters"]["chat_generator"]["init_parameters"]
    # what carries no credential stays, as written
    assert params["generation_kwargs"] == {"extra_query": {"api-version": "2024-06-01"}, "max_tokens": 50}
    assert params["http_client_kwargs"] == {"proxy": "http://proxy.local:3128"}
    _assert_clean(json.dumps(data))


def test_a_haystack_generators_query_key_echoed_bare_is_masked_in_errors(fake_openai, monkeypatch):
    pytest.importorskip("haystack")
    from haystack.components.generators.chat import OpenAIChatGenerator

    from fasteval.judge.errors import JudgeError

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = fake_openai(lambda req, n: Reply(status=401, raw=json.dumps(
        {"error": {"message": f"key {QUERY_KEY} refused for this deployment"}})))
    generator = OpenAIChatGenerator(api_base_url=server.url, max_retries=0,
                                    generation_kwargs={"extra_query": {"api_key": QUERY_KEY}})
    ev = FaithfulnessEvaluator(chat_generator=generator, progress_bar=False, corrective_retry=False)
    with pytest.raises(JudgeError) as exc:
        ev.run(questions=["q"], contexts=[["c"]], predicted_answers=["a"])
    assert f"api_key={QUERY_KEY}" in server.paths[0]  # it was sent
    assert "key *** refused" in str(exc.value)
    _assert_clean(_chain_text(exc.value))


def test_own_clients_to_dict_drops_credentials_in_generation_kwargs():
    openai = pytest.importorskip("openai")
    kwargs = {"extra_headers": {"api-key": HEADER_KEY, "X-Team": "ir"},
              "extra_query": {"sig": QUERY_KEY, "api-version": "1"}, "seed": 7}
    clean = {"extra_headers": {"X-Team": "ir"}, "extra_query": {"api-version": "1"}, "seed": 7}
    sdk = OpenAISDKClient(openai.OpenAI(api_key=KEY, base_url="http://127.0.0.1:9/v1"),
                          model="m", generation_kwargs=kwargs)
    own = OpenAIChatClient(model="m", base_url="http://127.0.0.1:9/v1", generation_kwargs=kwargs)
    for client in (sdk, own):
        data = client.to_dict()
        assert data["init_parameters"]["generation_kwargs"] == clean
        _assert_clean(json.dumps(data))
    assert sdk.generation_kwargs == kwargs  # the requests still carry them


def test_evaluator_run_logs_errors_cache_and_config_hold_no_credential(fake_openai, monkeypatch,
                                                                       tmp_path, caplog, capsys):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    server = fake_openai(lambda req, n: Reply(status=401, echo_headers=True))
    url = server.url.replace("http://", f"http://al:{PASSWORD}@") + f"?api_key={QUERY_KEY}"
    client = OpenAIChatClient(model="m", base_url=url, api_key_env="JUDGE_KEY", max_retries=0,
                              headers={"Authorization-Extra": HEADER_KEY})
    evaluator = FaithfulnessEvaluator(chat_generator=client, raise_on_failure=False,
                                      cache_dir=str(tmp_path / "cache"), progress_bar=True)
    with caplog.at_level(logging.DEBUG):
        out = evaluator.run(questions=["q"], contexts=[["c"]], predicted_answers=["a"])
    errors = [m["error"] for m in out["meta"]]
    assert errors[0].startswith("request failed: RequestError: HTTP 401 from ")
    captured = capsys.readouterr()
    _assert_clean("\n".join([caplog.text, captured.out, captured.err, json.dumps(out, default=str),
                             json.dumps(evaluator.to_dict()), repr(evaluator), *errors]))
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.json"))


def test_a_ray_address_with_credentials_is_masked_in_ray_errors(monkeypatch):
    from fasteval.batch import ray_engine
    from fasteval.batch.ray_engine import ensure_ray

    monkeypatch.setattr(ray_engine, "_probe", lambda address, timeout: None)  # as if it answered

    address = f"ray://al:{PASSWORD}@10.0.0.1:10001?token={QUERY_KEY}"

    def init(address, **options):
        try:
            raise TimeoutError(f"grpc to {address} timed out")
        except TimeoutError as exc:
            raise ConnectionError(f"Failed to connect to {address}") from exc

    ray = types.SimpleNamespace(is_initialized=lambda: False, init=init)
    with pytest.raises(ConnectionError) as exc:
        ensure_ray(ray, address)
    assert str(exc.value) == "Failed to connect to ray://***@10.0.0.1:10001?token=***"
    assert str(exc.value.__cause__) == "grpc to ray://***@10.0.0.1:10001?token=*** timed out"


@pytest.mark.parametrize(("text", "expected"), [
    (f"got 'al:{PASSWORD}@127.0.0.1:8000/v1'", "got '***@127.0.0.1:8000/v1'"),
    (f"GCS at al:{PASSWORD}@10.0.0.1:6379", "GCS at ***@10.0.0.1:6379"),
    (f"https://h/api?code={QUERY_KEY}&x=1", "https://h/api?code=***&x=1"),
    ("ratio 3:4 at noon", "ratio 3:4 at noon"),
    ("mail me at bob@example.com", "mail me at bob@example.com"),
])
def test_redact_shapes_without_a_known_secret(text, expected):
    assert redact(text) == expected



def test_a_bytes_header_value_echoed_by_the_server_is_masked(fake_openai):
    """Header values given as bytes are sent as they are; their text is masked too."""
    server = fake_openai(lambda req, n: Reply(status=401, echo_headers=True))
    client = OpenAIChatClient(model="m", base_url=server.url, api_key_env=None, max_retries=0,
                              headers={b"X-Api-Key": HEADER_KEY.encode(), "X-Team": "ir"})
    with pytest.raises(RequestError) as exc:
        client.run(MSG)
    assert server.headers[0]["x-api-key"] == HEADER_KEY  # it was sent
    assert "'X-Api-Key': '***'" in str(exc.value) and "'X-Team': 'ir'" in str(exc.value)
    _assert_clean(_chain_text(exc.value))
    assert client.to_dict()["init_parameters"]["headers"] == {"X-Team": "ir"}


def test_a_sas_token_dict_holding_the_token_is_refused_unshown():
    from fasteval.evaluators.sas import SASEvaluator

    with pytest.raises(ParameterError) as exc:
        SASEvaluator(token={"type": "token", "token": KEY, "strict": True})
    assert str(exc.value) == ("token must be a serialized environment-variable Secret or None, got "
                              "{'type': 'token', 'token': '***', 'strict': True}")


def test_scrub_config_rewrites_only_urls_with_credentials_and_keeps_env_secrets():
    from fasteval.redact import scrub_config

    data = {"stop": ["http://x/?token=abc&v=1 rest", "http://x/?v=1 rest"],
            "auth": {"type": "env_var", "env_vars": ["JUDGE_KEY"], "strict": True},
            "http_client_kwargs": {"auth": ["me", "pw"]}}
    got = scrub_config(data)
    assert got["stop"][1] == "http://x/?v=1 rest"  # nothing secret: as written
    assert "abc" not in got["stop"][0]
    assert got["auth"] == data["auth"]  # a Haystack Secret names variables only
    assert got["http_client_kwargs"] == {}


def test_query_credentials_are_masked_in_their_url_encoded_spelling():
    from fasteval.redact import setting_secrets

    found = setting_secrets("extra_query", {"sig": "ab/cd+ef==", "api_key": True, "v": "1"})
    assert found == ["ab/cd+ef==", "ab%2Fcd%2Bef%3D%3D"]
