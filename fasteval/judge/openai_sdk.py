"""A user's ``openai.OpenAI`` / ``openai.AsyncOpenAI`` client as the judge transport.

Teams often configure the OpenAI SDK once (base URL, key, organization, proxies through an
``http_client``, retries, timeouts, Azure). :class:`OpenAISDKClient` sends the judge's
requests through such a client object, so all of that comes with it, while fasteval keeps its
own concurrency, reply cache, parsing and corrective retry on top. The evaluators accept the
SDK client itself (``chat_generator=openai.OpenAI()``) and wrap it with the default model.

Examples
--------
>>> class FakeCompletions:              # stands in for openai.OpenAI().chat.completions
...     def create(self, **request):
...         from types import SimpleNamespace as NS
...         message = NS(content='{"score": 1}')
...         return NS(model=request["model"], usage=None,
...                   choices=[NS(message=message, finish_reason="stop")])
>>> class FakeOpenAI:
...     base_url, api_key = "http://127.0.0.1:8000/v1/", "sk-not-a-real-key"
...     chat = type("Chat", (), {"completions": FakeCompletions()})()
>>> judge = OpenAISDKClient(FakeOpenAI(), model="qwen2.5-7b-instruct")
>>> judge.run([{"role": "user", "content": "Is it polite?"}]).text
'{"score": 1}'
>>> judge.to_dict()["init_parameters"]["base_url"]
'http://127.0.0.1:8000/v1'
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from fasteval.errors import ParameterError
from fasteval.judge.protocol import ChatReply
from fasteval.redact import (
    clean_url,
    redact,
    redact_exception,
    redact_http_logs,
    scrub_config,
    setting_secrets,
    url_secrets,
)

__all__ = ["OpenAISDKClient", "is_openai_sdk_client", "as_chat_generator"]

DEFAULT_MODEL = "gpt-5-mini"  # the default of Haystack's OpenAIChatGenerator
_JSON_REJECTED = (400, 404, 422)


def is_openai_sdk_client(obj: Any) -> bool:
    """Whether ``obj`` is a client object of the ``openai`` package (sync, async or Azure).

    Examples
    --------
    >>> is_openai_sdk_client(object())
    False
    """
    module = type(obj).__module__ or ""
    return (module == "openai" or module.startswith("openai.")) and hasattr(obj, "chat")


def as_chat_generator(obj: Any) -> Any:
    """``obj`` itself, or an :class:`OpenAISDKClient` around it when it is an OpenAI SDK client.

    Examples
    --------
    >>> g = object()
    >>> as_chat_generator(g) is g
    True
    """
    return OpenAISDKClient(obj) if is_openai_sdk_client(obj) else obj


def _is_async_client(client: Any) -> bool:
    # the SDK's create() is a plain function returning a coroutine on async clients
    if any(base.__name__ == "AsyncAPIClient" for base in type(client).__mro__):
        return True
    create = getattr(getattr(getattr(client, "chat", None), "completions", None), "create", None)
    return inspect.iscoroutinefunction(create)


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


class OpenAISDKClient:
    """Chat generator over an ``openai.OpenAI`` or ``openai.AsyncOpenAI`` client object.

    Parameters
    ----------
    client : openai.OpenAI or openai.AsyncOpenAI (or AzureOpenAI)
        Used as it is: its base URL, credentials, headers, proxies, timeouts and retries
        apply to every request. A synchronous client serves :meth:`run` (and
        :meth:`run_async` on a worker thread); an async client serves :meth:`run_async`
        (and :meth:`run` on fasteval's background event loop).
    model : str
        Model name sent in each request (default ``gpt-5-mini``, as Haystack's).
    json_mode : bool
        Send ``response_format={"type": "json_object"}``; when the server rejects it
        (HTTP 400/404/422), the request is repeated without it and JSON mode stays off.
    generation_kwargs : dict, optional
        Extra request fields (``temperature``, ``seed``, ``max_tokens``...). Default
        ``{"seed": 42}``.

    Notes
    -----
    ``to_dict`` keeps the model, the settings and the client's base URL (without
    credentials: a ``user:password@``, query parameters such as ``api_key=``), never its
    key; ``from_dict`` builds a new client from them, the key coming from
    ``OPENAI_API_KEY`` as the SDK does. An error the SDK raises (whose message quotes the
    server's reply, which may echo the key) keeps its type, with the key and the URL's
    credentials masked in its text and in that of the exceptions chained to it. It cannot
    be pickled (a :class:`TypeError` says so): for multiprocessing or Ray, use
    :class:`fasteval.judge.OpenAIChatClient`, which can.
    """

    _fasteval_messages = "dict"

    def __init__(self, client: Any, model: str = DEFAULT_MODEL, *, json_mode: bool = True,
                 generation_kwargs: dict[str, Any] | None = None) -> None:
        completions = getattr(getattr(client, "chat", None), "completions", None)
        if not callable(getattr(completions, "create", None)):
            raise ParameterError("client", "an openai.OpenAI or openai.AsyncOpenAI client", type(client).__name__)
        if not isinstance(model, str) or not model:
            raise ParameterError("model", "a non-empty string", model)
        self.client = client
        self.model = model
        self.json_mode = bool(json_mode)
        self.generation_kwargs = dict({"seed": 42} if generation_kwargs is None else generation_kwargs)
        self.is_async = _is_async_client(client)
        self._json_supported: bool | None = None
        self._lock = threading.Lock()
        redact_http_logs(self._secrets())  # httpx logs each request's URL at INFO

    # -- protocol -------------------------------------------------------------------------
    def cache_namespace(self) -> dict[str, Any]:
        """Model, generation settings and server (:func:`fasteval.judge.cache.endpoint_key`):
        the part of the cache key besides the messages."""
        from fasteval.judge.cache import endpoint_key

        params = {k: v for k, v in self.generation_kwargs.items() if k != "response_format"}
        return {"model": self.model, "params": json.loads(json.dumps(params, sort_keys=True, default=str)),
                **endpoint_key(self.base_url or None)}

    def _request(self, messages: list[dict[str, str]], json_mode: bool) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": messages, **self.generation_kwargs}
        if json_mode and "response_format" not in request:
            request["response_format"] = {"type": "json_object"}
        return request

    def _json_on(self) -> bool:
        """Whether fasteval adds JSON mode to the next request (never over the user's own
        ``response_format``)."""
        return (self.json_mode and self._json_supported is not False
                and "response_format" not in self.generation_kwargs)

    def _rejected_json(self, exc: Exception, sent_json: bool) -> bool:
        """Whether to repeat the request without JSON mode; JSON mode is turned off only when
        that request is answered (:meth:`_reply`): a 400 for the request's own reason, such
        as a prompt too long, says nothing of JSON mode."""
        status = getattr(exc, "status_code", None)
        return bool(sent_json and status in _JSON_REJECTED and self._json_supported is not True)

    def _reply(self, response: Any, sent_json: bool, dropped_json: bool = False) -> ChatReply:
        if sent_json or dropped_json:  # answered with JSON mode, or only without it
            with self._lock:
                self._json_supported = sent_json
        choices = _field(response, "choices") or []
        if not choices:
            from fasteval.judge.errors import RequestError

            raise RequestError("the chat-completions response has no choices")
        choice = choices[0]
        text = _field(_field(choice, "message"), "content")
        usage_obj = _field(response, "usage")
        usage = {}
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            value = _field(usage_obj, key) if usage_obj is not None else None
            if isinstance(value, (int, float)):
                usage[key] = int(value)
        meta = {"model": _field(response, "model") or self.model,
                "finish_reason": _field(choice, "finish_reason"), "usage": usage}
        return ChatReply(None if text is None else str(text), meta)

    def run(self, messages: list[dict[str, str]]) -> ChatReply:
        """Send one chat request through the client and return the reply."""
        if self.is_async:
            from fasteval.judge.aio import run_sync

            return run_sync(lambda: self.run_async(messages))
        sent_json = self._json_on()
        try:
            response = self.client.chat.completions.create(**self._request(messages, sent_json))
        except Exception as exc:
            if not self._rejected_json(exc, sent_json):
                redact_exception(exc, self._secrets())  # the SDK quotes the server's reply
                raise
            try:
                response = self.client.chat.completions.create(**self._request(messages, False))
            except Exception as again:
                redact_exception(again, self._secrets())
                raise
            return self._reply(response, False, dropped_json=True)
        return self._reply(response, sent_json)

    async def run_async(self, messages: list[dict[str, str]]) -> ChatReply:
        """Send one chat request on the running event loop (a sync client runs on a thread)."""
        if not self.is_async:
            return await asyncio.to_thread(self.run, messages)
        sent_json = self._json_on()
        try:
            response = await self.client.chat.completions.create(**self._request(messages, sent_json))
        except Exception as exc:
            if not self._rejected_json(exc, sent_json):
                redact_exception(exc, self._secrets())
                raise
            try:
                response = await self.client.chat.completions.create(**self._request(messages, False))
            except Exception as again:
                redact_exception(again, self._secrets())
                raise
            return self._reply(response, False, dropped_json=True)
        return self._reply(response, sent_json)

    def close(self) -> None:
        """Close a synchronous client (an async one is closed by :meth:`close_async`)."""
        if not self.is_async and callable(getattr(self.client, "close", None)):
            self.client.close()

    async def close_async(self) -> None:
        """Close the client (awaited for an async client)."""
        close = getattr(self.client, "close", None)
        if not callable(close):
            return
        result = close()
        if inspect.isawaitable(result):
            await result

    # -- credentials and serialization -----------------------------------------------------
    def _secrets(self) -> list[str]:
        """The client's key (and Azure's AD token), a URL password, the sensitive values of the
        client's ``default_headers`` / ``default_query`` and of ``generation_kwargs``'
        ``extra_headers`` / ``extra_query``: masked in every message fasteval shows."""
        found = []
        for name in ("api_key", "_azure_ad_token"):
            key = getattr(self.client, name, None)
            if isinstance(key, str) and key:
                found.append(key)
        found.extend(url_secrets(str(getattr(self.client, "base_url", "") or "")))
        for name in ("_custom_headers", "_custom_query"):
            found.extend(setting_secrets(name, getattr(self.client, name, None)))
        found.extend(setting_secrets("generation_kwargs", self.generation_kwargs))
        return found

    @property
    def base_url(self) -> str:
        """The client's base URL without credentials (``user:password@``, ``api_key=``...)."""
        url = str(getattr(self.client, "base_url", "") or "")
        if not url:
            return url
        parts = urlsplit(clean_url(url))
        return urlunsplit(parts._replace(path=parts.path.rstrip("/")))

    def to_dict(self) -> dict[str, Any]:
        """Model, settings and the client's base URL (no key, no URL credentials; the
        credentials of ``generation_kwargs``' ``extra_headers`` / ``extra_query`` left out,
        :func:`fasteval.redact.scrub_config`)."""
        return {
            "type": f"{type(self).__module__}.{type(self).__qualname__}",
            "init_parameters": {
                "model": self.model,
                "base_url": self.base_url,
                "async_client": self.is_async,
                "json_mode": self.json_mode,
                "generation_kwargs": scrub_config(self.generation_kwargs),
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OpenAISDKClient:
        """A new OpenAI SDK client for the saved base URL (key from ``OPENAI_API_KEY``)."""
        params = dict(data.get("init_parameters") or {})
        import openai

        maker = openai.AsyncOpenAI if params.pop("async_client", False) else openai.OpenAI
        base_url = params.pop("base_url", None) or None
        return cls(maker(base_url=base_url), **params)

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Refused with a :class:`TypeError` that says what to do: the SDK client holds open
        connections and, often, its API key, which must not travel in a pickle."""
        raise TypeError(
            "an OpenAISDKClient cannot be pickled or copied (as multiprocessing and Ray do): the "
            "openai client it wraps holds connections and its API key. Build one per process "
            "(OpenAISDKClient.from_dict(judge.to_dict()) takes the key from OPENAI_API_KEY there), "
            "or judge with fasteval.judge.OpenAIChatClient, which is pickled without its key")

    def __repr__(self) -> str:
        kind = "AsyncOpenAI" if self.is_async else "OpenAI"
        return redact(f"OpenAISDKClient({kind}, model={self.model!r}, base_url={self.base_url!r})",
                      self._secrets())
