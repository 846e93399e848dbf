"""The OpenAI SDK's request options in ``generation_kwargs`` (``extra_headers``,
``extra_query``, ``extra_body``) are sent as the SDK sends them: headers, query parameters
and body fields, never as literal body fields named after the options."""

from __future__ import annotations

import pytest

from fasteval.errors import ParameterError
from fasteval.judge.client import OpenAIChatClient

from .fake_openai import Reply

pytest.importorskip("httpx")

HEADER_KEY = "hdr-SECRET-777"


def test_extra_headers_query_and_body_are_sent_as_the_sdk_sends_them(fake_openai):
    server = fake_openai(lambda req, n: Reply(content={"ok": 1}))
    client = OpenAIChatClient(
        model="m", base_url=server.url + "?api-version=1", api_key_env=None, json_mode=False,
        generation_kwargs={"seed": 3, "extra_headers": {"X-Team": "ir", "api-key": HEADER_KEY},
                           "extra_query": {"deployment": "d1", "tags": ["a", "b"]},
                           "extra_body": {"top_k": 5, "seed": 9}})
    client.run([{"role": "user", "content": "hi"}])
    body, headers, path = server.requests[0], server.headers[0], server.paths[0]
    assert not {"extra_headers", "extra_query", "extra_body"} & set(body)
    assert body["top_k"] == 5 and body["seed"] == 9  # extra_body wins, as in the SDK
    assert headers["x-team"] == "ir" and headers["api-key"] == HEADER_KEY
    assert path.endswith("/chat/completions?api-version=1&deployment=d1&tags=a&tags=b")


def test_a_rotated_header_token_keeps_the_cache_namespace():
    def client(token: str) -> OpenAIChatClient:
        return OpenAIChatClient(model="m", base_url="http://127.0.0.1:9/v1", api_key_env=None,
                                generation_kwargs={"extra_headers": {"Authorization": f"Bearer {token}",
                                                                     "X-Team": "ir"}})
    a, b = client("t0ken-one").cache_namespace(), client("t0ken-two").cache_namespace()
    assert a == b and "t0ken" not in repr(a) and a["params"]["extra_headers"] == {"X-Team": "ir"}
    other = OpenAIChatClient(model="m", base_url="http://127.0.0.1:9/v1", api_key_env=None,
                             generation_kwargs={"extra_headers": {"X-Team": "web"}})
    assert other.cache_namespace() != a  # a header that is no credential still tells jobs apart


@pytest.mark.parametrize("option", ["extra_headers", "extra_query", "extra_body"])
def test_an_option_that_is_no_dict_is_refused(option):
    with pytest.raises(ParameterError, match=rf"generation_kwargs\['{option}'\] must be a dict"):
        OpenAIChatClient(model="m", base_url="http://127.0.0.1:9/v1", api_key_env=None,
                         generation_kwargs={option: "x=1"})
