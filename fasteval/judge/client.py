"""A chat-completions client for any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import weakref
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from fasteval.errors import ParameterError, require_extra
from fasteval.io import _json
from fasteval.judge.aio import run_sync
from fasteval.judge.cache import DEFAULT_BASE_URL, endpoint_key
from fasteval.judge.errors import MissingAPIKeyError, RequestError
from fasteval.judge.protocol import ChatReply
from fasteval.judge.ratelimit import RateLimiter, backoff_delay, estimate_tokens, parse_retry_after
from fasteval.redact import (
    check_env_name,
    header_secrets,
    is_sensitive_header,
    redact,
    redact_http_logs,
    scrub_config,
    setting_secrets,
    split_credentials,
    split_query_secrets,
    url_secrets,
)

DEFAULT_MODEL = "gpt-5-mini"  # the default of Haystack's OpenAIChatGenerator
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 524, 529})
DEFAULT_MAX_REPLY_BYTES = 8 * 2**20
"""Largest reply body read (8 MiB: a chat completion of 100k tokens is well under 1 MiB)."""
_ERROR_BODY_BYTES = 64 * 2**10  # of an error reply, only the start is read (for the message)


class _ReplyTooLarge(Exception):
    def __init__(self, size: int, declared: bool) -> None:
        self.size = size
        self.declared = declared
        super().__init__(size)


_SDK_OPTIONS = ("extra_headers", "extra_query", "extra_body")
"""The OpenAI SDK's request options in ``generation_kwargs``: headers, query parameters and
body fields sent as the SDK sends them, not as fields of the body."""


def _check_limits(*, timeout: Any, max_retries: Any, backoff_base: Any, backoff_max: Any,
                  max_retry_after: Any, max_reply_bytes: Any, requests_per_minute: Any,
                  tokens_per_minute: Any) -> None:
    """Refuse an out-of-range time, retry, size or rate option of :class:`OpenAIChatClient`
    (a :class:`~fasteval.errors.ParameterError` naming it)."""
    if not _positive(timeout):
        raise ParameterError("timeout", "a positive number of seconds", timeout)
    if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
        raise ParameterError("max_retries", "an integer >= 0", max_retries)
    for name, value in (("backoff_base", backoff_base), ("backoff_max", backoff_max),
                        ("max_retry_after", max_retry_after)):
        if not (_positive(value) or value == 0):
            raise ParameterError(name, "a finite number of seconds >= 0", value)
    if not isinstance(max_reply_bytes, int) or isinstance(max_reply_bytes, bool) or max_reply_bytes < 1:
        raise ParameterError("max_reply_bytes", "a positive integer (bytes)", max_reply_bytes)
    for name, value in (("requests_per_minute", requests_per_minute),
                        ("tokens_per_minute", tokens_per_minute)):
        if value is not None and not value > 0:
            raise ParameterError(name, "a positive number or None", value)


class OpenAIChatClient:
    """Chat-completions client with retries, backoff, rate limits and JSON mode.

    Parameters
    ----------
    model : str
        Model name sent in each request.
    base_url : str, optional
        Server root such as ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is appended
        to its path unless already there; a query string such as ``?api-version=...`` stays
        at the end). Default: ``$OPENAI_BASE_URL`` or OpenAI's API. A ``user:password@`` in
        it is sent as HTTP Basic authentication, and query parameters that carry credentials
        (``api_key=``, ``key=``, ``access_token=``, ``sig=``...) with every request; neither
        is shown (``base_url``, ``url``, ``repr()``, messages, httpx's log of each request)
        nor saved by :meth:`to_dict`.
    api_key_env : str or None
        Environment variable holding the API key, read at request time and sent as
        ``Authorization: Bearer``. Nothing is sent when it is unset (local servers), except
        that OpenAI's own API requires it. A value that is no variable name (letters,
        digits, ``_``), such as the key itself, is refused without being shown.
    json_mode : bool
        Send ``response_format={"type": "json_object"}`` (unless ``generation_kwargs`` has
        its own ``response_format``). When the server rejects it (HTTP 400/404/422), the
        request is repeated without it, and JSON mode stays off once such a request is
        answered.
    generation_kwargs : dict, optional
        Extra request fields (``temperature``, ``seed``, ``max_tokens``, ...). Default ``{"seed": 42}``.
        The OpenAI SDK's request options are applied as the SDK applies them:
        ``extra_headers`` (a dict) is sent as HTTP headers, ``extra_query`` (a dict) as query
        parameters of the request URL, and ``extra_body`` (a dict) merged into the JSON body.
    timeout : float
        Seconds allowed per HTTP request, all of it: connecting, sending, and reading the
        whole reply (a server that trickles its reply cannot hold a request longer). A
        request that runs out of time counts as a timeout and is retried.
    max_retries : int
        Retries after the first attempt on HTTP 408/409/425/429/5xx, timeouts and connection errors.
    backoff_base, backoff_max : float
        Backoff before retry ``i`` is uniform in ``[d/2, d]`` with ``d = min(backoff_max,
        backoff_base * 2**i)``; a ``Retry-After`` (or ``retry-after-ms``) header replaces it.
    max_retry_after : float
        Longest wait accepted from a ``Retry-After`` header (seconds); a longer one is cut
        to it.
    max_reply_bytes : int
        Largest reply body read, 8 MiB by default (decoded size); a larger reply fails the
        request (:class:`RequestError`, not retried) without being read into memory.
    requests_per_minute, tokens_per_minute : float, optional
        Client-side rate limits (token counts are estimated before, corrected after each reply).
    headers : dict, optional
        Extra HTTP headers. Those that carry credentials (``Authorization``, ``X-Api-Key``,
        any name with "key", "token", "auth"...) are not saved by :meth:`to_dict`.
    trust_env : bool
        Read proxy and CA settings from the environment (``HTTPS_PROXY``, ``SSL_CERT_FILE``...).

    Raises
    ------
    fasteval.errors.MissingExtraError
        httpx (the ``llm`` extra, ``pip install ".[llm]"``) is not installed: refused here,
        before any request, not as a failure of every row (also an ``ImportError``).

    Notes
    -----
    A client can be pickled, so that an evaluator holding it runs under multiprocessing or
    on Ray workers. The copy holds the configuration as given (credentials in ``base_url``
    and ``headers`` included: it must authenticate as the original does), never the API key:
    each copy reads ``api_key_env`` in its own process at request time (on Ray, set it for
    the workers, e.g. ``runtime_env={"env_vars": {...}}``). Open connections are not copied,
    and each copy keeps its own rate limits (``requests_per_minute`` and
    ``tokens_per_minute`` apply per process).

    Examples
    --------
    >>> client = OpenAIChatClient(model="qwen2.5-7b-instruct", base_url="http://127.0.0.1:8000/v1")
    >>> client.url
    'http://127.0.0.1:8000/v1/chat/completions'
    >>> # client.run([{"role": "user", "content": "Say {\\"ok\\": 1}"}]).text  # needs a server
    """

    _fasteval_messages = "dict"

    def __init__(self, model: str = DEFAULT_MODEL, base_url: str | None = None, *,
                 api_key_env: str | None = "OPENAI_API_KEY", json_mode: bool = True,
                 generation_kwargs: dict[str, Any] | None = None, timeout: float = 60.0,
                 max_retries: int = 5, backoff_base: float = 0.5, backoff_max: float = 30.0,
                 max_retry_after: float = 300.0, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
                 requests_per_minute: float | None = None, tokens_per_minute: float | None = None,
                 headers: dict[str, str] | None = None, trust_env: bool = False) -> None:
        require_extra("llm", "OpenAIChatClient")  # here, not at the first request of each row
        if not isinstance(model, str) or not model:
            raise ParameterError("model", "a non-empty string", model)
        _check_limits(timeout=timeout, max_retries=max_retries, backoff_base=backoff_base,
                      backoff_max=backoff_max, max_retry_after=max_retry_after,
                      max_reply_bytes=max_reply_bytes, requests_per_minute=requests_per_minute,
                      tokens_per_minute=tokens_per_minute)
        check_env_name("api_key_env", api_key_env)
        if base_url is not None and not isinstance(base_url, str):
            raise ParameterError("base_url", "an http:// or https:// URL (a string) or None",
                                 f"<{type(base_url).__name__}>")
        self.model = model
        url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).strip()
        # credentials in the URL become Basic auth, and those in its query string (api_key=...)
        # are sent as query parameters, both kept apart: base_url is safe to show
        self.base_url, self._auth = split_credentials(url)
        self.base_url, self._query = split_query_secrets(self.base_url)
        self._url_secrets = url_secrets(url)
        redact_http_logs(self._url_secrets)  # httpx logs each request's URL at INFO
        self.base_url = _strip_slash(self.base_url)
        if not self.base_url.startswith(("http://", "https://")):
            raise ParameterError("base_url", "an http:// or https:// URL", redact(url))
        self.api_key_env = api_key_env
        self.json_mode = bool(json_mode)
        self.generation_kwargs = dict({"seed": 42} if generation_kwargs is None else generation_kwargs)
        for option in _SDK_OPTIONS:
            value = self.generation_kwargs.get(option)
            if value is not None and not isinstance(value, Mapping):
                raise ParameterError(f"generation_kwargs[{option!r}]", "a dict (or None), sent as the "
                                     "OpenAI SDK sends it", type(value).__name__)
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.max_retry_after = float(max_retry_after)
        self.max_reply_bytes = max_reply_bytes
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self.headers = dict(headers or {})
        for name, value in self.headers.items():
            if isinstance(value, bytes):
                continue  # sent as given
            bad = _unsendable_at(f"{name}{value}") if isinstance(name, str) and isinstance(value, str) else 0
            if bad is not None:
                shown = name if is_sensitive_header(str(name)) else f"{name}: {value}"
                raise ParameterError("headers", "text that can be sent in HTTP headers (printable "
                                     "ASCII, no line break)", redact(shown))
        self.trust_env = bool(trust_env)
        self.limiter = RateLimiter(requests_per_minute, tokens_per_minute)
        self._json_supported: bool | None = None  # None: not known yet
        # one HTTP client per event loop (connection pools cannot cross loops)
        self._http: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        self._rng = random.Random()

    # -- protocol -----------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The chat-completions endpoint (the base URL's query string, if any, kept at the end)."""
        parts = urlsplit(self.base_url)
        path = parts.path.rstrip("/")
        if not path.endswith("/chat/completions"):
            path = f"{path}/chat/completions"
        return urlunsplit(parts._replace(path=path))

    def cache_namespace(self) -> dict[str, Any]:
        """Model, generation settings and server (:func:`fasteval.judge.cache.endpoint_key`):
        the part of the cache key besides the messages."""
        # without credentials (extra_headers' Authorization, ...): a rotated token keeps the cache
        params = scrub_config({k: v for k, v in self.generation_kwargs.items() if k != "response_format"})
        return {"model": self.model, "params": json.loads(json.dumps(params, sort_keys=True, default=str)),
                **endpoint_key(self.base_url)}

    def run(self, messages: list[dict[str, str]]) -> ChatReply:
        """Send one chat request and wait for the reply (works inside a running event loop too)."""

        return run_sync(lambda: self.run_async(messages))

    async def run_async(self, messages: list[dict[str, str]]) -> ChatReply:
        """Send one chat request with retries; return the reply.

        Raises
        ------
        RequestError
            On a non-retryable HTTP status, an unreadable body, or when retries are used up.
        """
        http = self._client()
        payload, added_json, extra_headers, extra_query = self._payload(messages)
        estimate = estimate_tokens(messages, payload.get("max_tokens") or payload.get("max_completion_tokens"))
        headers = {**self._headers(), **extra_headers}
        url = self._request_url(extra_query)
        attempts = 0
        retries = 0
        while True:
            wait = self.limiter.reserve(estimate)
            if wait > 0:
                await asyncio.sleep(wait)
            attempts += 1
            retry_after: float | None = None
            status: int | None = None
            try:
                # the whole exchange, reply body included, within one deadline
                status, reply_headers, body = await asyncio.wait_for(
                    self._exchange(http, payload, headers, url), timeout=self.timeout)
            except _ReplyTooLarge as exc:
                self.limiter.settle(estimate, 0)
                size = f"{exc.size} bytes" if exc.declared else f"more than {self.max_reply_bytes} bytes"
                raise RequestError(
                    f"reply from {self.url} is too large ({size}; max_reply_bytes="
                    f"{self.max_reply_bytes}): not read", status=200, attempts=attempts,
                ) from None
            except Exception as exc:  # httpx.TimeoutException, httpx.TransportError
                reason = self._transport_failure(exc)
                if reason is None:
                    raise
                self.limiter.settle(estimate, 0)
            else:
                if status == 200:
                    reply = self._read(body, status, attempts)
                    if added_json:  # known once a reply came: with JSON mode, or only without
                        self._json_supported = "response_format" in payload
                    total = reply.usage.get("total_tokens")
                    self.limiter.settle(estimate, total)
                    reply.meta["attempts"] = attempts
                    return reply
                text = self._excerpt(body, 300)
                if (status in (400, 404, 422) and added_json and "response_format" in payload
                        and self._json_supported is not True):
                    # The server may not know JSON mode: try once without it (JSON mode stays
                    # off only if that request is answered: a 400 for this request's own
                    # reason, such as a prompt too long, says nothing of JSON mode)
                    payload.pop("response_format")
                    continue
                reason = f"HTTP {status} from {self.url}: {text}"
                if status not in RETRY_STATUS:
                    raise RequestError(self._redact(reason), status=status, attempts=attempts)
                retry_after = parse_retry_after(reply_headers)
            if retries >= self.max_retries:
                raise RequestError(
                    self._redact(f"gave up after {attempts} attempts; last error: {reason}"),
                    status=status, attempts=attempts,
                )
            if retry_after is not None:
                retry_after = min(retry_after, self.max_retry_after)
            delay = retry_after if retry_after is not None else backoff_delay(
                retries, self.backoff_base, self.backoff_max, self._rng
            )
            retries += 1
            await asyncio.sleep(delay)

    def _payload(self, messages: list[dict[str, str]]) -> tuple[dict[str, Any], bool, dict[str, Any], dict[str, Any]]:
        """The request body for ``messages``, whether JSON mode was added to it, and the
        SDK options' extra headers and query parameters."""
        fields = dict(self.generation_kwargs)
        extra_headers, extra_query, extra_body = (dict(fields.pop(k, None) or {}) for k in _SDK_OPTIONS)
        payload: dict[str, Any] = {"model": self.model, "messages": messages, **fields, **extra_body}
        added_json = (self.json_mode and self._json_supported is not False
                      and "response_format" not in payload)  # a response_format of the user's stays
        if added_json:
            payload["response_format"] = {"type": "json_object"}
        return payload, added_json, extra_headers, extra_query

    def _transport_failure(self, exc: Exception) -> str | None:
        """Why a request that raised ``exc`` failed (a timeout, a failed connection: worth a
        retry); ``None`` for any other exception, which is not a transport failure."""
        import httpx

        if isinstance(exc, asyncio.TimeoutError):
            return f"request timed out (limit {self.timeout:g} s for the whole request)"
        if isinstance(exc, httpx.TimeoutException):
            return f"request timed out (limit {self.timeout:g} s): {type(exc).__name__}: {exc}"
        if isinstance(exc, httpx.TransportError):
            return f"connection failed: {type(exc).__name__}: {exc}"
        return None

    def warm_up(self) -> None:
        """Check, before any request, that the API key the server needs is set.

        Raises
        ------
        MissingAPIKeyError
            A ``ValueError`` with Haystack's message, when the base URL is OpenAI's and
            ``api_key_env`` names an unset variable (local servers need no key).
        """
        self._headers()

    async def warm_up_async(self) -> None:
        """:meth:`warm_up`, for async callers (Haystack's ``Pipeline.run_async``)."""
        self.warm_up()

    async def aclose(self) -> None:
        """Close the HTTP connections held for the running event loop."""
        http = self._http.pop(asyncio.get_running_loop(), None)
        if http is not None:
            await http.aclose()

    async def close_async(self) -> None:
        """Haystack's name for :meth:`aclose`."""
        await self.aclose()

    def close(self) -> None:
        """Close the connections held on fasteval's background loop (used by :meth:`run`)."""
        from fasteval.judge.aio import background_loop

        loop = background_loop()
        http = self._http.pop(loop, None)
        if http is not None:
            asyncio.run_coroutine_threadsafe(http.aclose(), loop).result(timeout=30)

    # -- pickling (multiprocessing, Ray) -------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        """The configuration (see *Notes*): not the connections, rate limiter or random
        state, which each copy starts afresh; the API key is never held."""
        state = self.__dict__.copy()
        for name in ("_http", "_rng", "limiter"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.limiter = RateLimiter(self.requests_per_minute, self.tokens_per_minute)
        self._http = weakref.WeakKeyDictionary()
        self._rng = random.Random()
        redact_http_logs(self._url_secrets)  # this process's httpx log must mask them too

    # -- serialization ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Serialize the configuration without credentials: not the API key (only the name
        of its variable), not a URL's ``user:password@``, not the headers that carry them
        (nor those in ``generation_kwargs``: :func:`fasteval.redact.scrub_config`).

        Examples
        --------
        >>> c = OpenAIChatClient(base_url="http://me:pw@127.0.0.1:8000/v1",
        ...                      headers={"Authorization": "Bearer t0ken", "X-Team": "ir"})
        >>> params = c.to_dict()["init_parameters"]
        >>> params["base_url"], params["headers"]
        ('http://127.0.0.1:8000/v1', {'X-Team': 'ir'})
        """
        return {
            "type": f"{type(self).__module__}.{type(self).__qualname__}",
            "init_parameters": {
                "model": self.model,
                "base_url": self.base_url,
                "api_key_env": self.api_key_env,
                "json_mode": self.json_mode,
                "generation_kwargs": scrub_config(self.generation_kwargs),
                "timeout": self.timeout,
                "max_retries": self.max_retries,
                "backoff_base": self.backoff_base,
                "backoff_max": self.backoff_max,
                "max_retry_after": self.max_retry_after,
                "max_reply_bytes": self.max_reply_bytes,
                "requests_per_minute": self.requests_per_minute,
                "tokens_per_minute": self.tokens_per_minute,
                "headers": {k: v for k, v in self.headers.items() if not is_sensitive_header(k)},
                "trust_env": self.trust_env,
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OpenAIChatClient:
        """Rebuild a client from :meth:`to_dict` output."""
        return cls(**data.get("init_parameters", {}))

    # -- internals ----------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self.headers}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            bad = _unsendable_at(key)
            if bad is not None:  # httpx would fail every request; the key itself is not shown
                raise ParameterError(
                    "api_key_env", "the name of a variable whose value can be sent in an HTTP header "
                    f"(printable ASCII, no line break; its value has {_describe(key[bad])} at "
                    f"position {bad})", self.api_key_env)
            headers["Authorization"] = f"Bearer {key}"
        elif self.base_url.startswith(DEFAULT_BASE_URL) and "Authorization" not in headers:
            if self.api_key_env:
                raise MissingAPIKeyError((self.api_key_env,))
            raise ParameterError(
                "api_key_env", f"the name of a set environment variable holding an API key for {self.base_url}",
                self.api_key_env,
            )
        return headers

    def _secrets(self) -> list[str]:
        """Values to mask in anything shown: the API key, the URL's credentials, sensitive
        header values, and credentials in ``generation_kwargs`` (sent in the request body)."""
        found = list(self._url_secrets)  # each spelling: as given, decoded, as sent
        if self.api_key_env:
            found.append(os.environ.get(self.api_key_env) or "")
        found += setting_secrets("generation_kwargs", self.generation_kwargs)
        return [s for s in found + header_secrets(self.headers) if s]

    def _request_url(self, extra_query: Mapping[str, Any] | None = None) -> str:
        """:attr:`url` with the query parameters that carry credentials added back, then
        ``extra_query`` (``generation_kwargs['extra_query']``)."""
        if not self._query and not extra_query:
            return self.url
        parts = urlsplit(self.url)
        query = "&".join(q for q in (parts.query, urlencode(self._query or {}),
                                     urlencode(dict(extra_query or {}), doseq=True)) if q)
        return urlunsplit(parts._replace(query=query))

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets())

    def _excerpt(self, raw: bytes, limit: int) -> str:
        """The first ``limit`` characters of a reply body, redacted before they are cut (a
        secret that the cut would split is masked whole, not shown in part)."""
        secrets = self._secrets()
        window = limit + max((len(s.encode()) for s in secrets), default=0) + 256
        return redact(raw[:window].decode("utf-8", "replace"), secrets)[:limit]

    async def _exchange(self, http: Any, payload: dict[str, Any], headers: dict[str, str],
                        url: str | None = None) -> tuple[int, Any, bytes]:
        """One HTTP request: ``(status, headers, body)``, reading at most
        ``max_reply_bytes`` of a reply (the start of an error reply)."""
        async with http.stream("POST", url or self._request_url(), json=payload, headers=headers,
                               auth=self._auth) as response:
            status = response.status_code
            limit = self.max_reply_bytes if status == 200 else _ERROR_BODY_BYTES
            declared = response.headers.get("content-length")
            if (status == 200 and declared and declared.isdigit() and int(declared) > limit
                    and not response.headers.get("content-encoding")):
                raise _ReplyTooLarge(int(declared), True)
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    if status == 200:
                        raise _ReplyTooLarge(size, False)
                    chunks.append(chunk[: len(chunk) - (size - limit)])
                    break
                chunks.append(chunk)
            return status, response.headers, b"".join(chunks)

    def _client(self) -> Any:
        import httpx

        loop = asyncio.get_running_loop()
        http = self._http.get(loop)
        if http is None:
            http = self._http[loop] = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout, pool=None),
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
                trust_env=self.trust_env,
                # plain http needs no CA bundle (loading it costs ~0.2 s per event loop)
                verify=self.base_url.startswith("https://"),
            )
        return http

    def _read(self, raw: bytes, status: int, attempts: int) -> ChatReply:
        try:
            body = _json.loads(raw)  # (a body nested 100,000 deep is unreadable, no crash)
            choice = body["choices"][0]
            message = choice.get("message") or {}
            text = message.get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            shown = self._excerpt(raw, 200)
            raise RequestError(
                self._redact(f"unreadable chat-completions body from {self.url}: {shown!r}"),
                status=status, attempts=attempts,
            ) from exc
        usage = body.get("usage") or {}
        meta = {
            "model": body.get("model", self.model),
            "finish_reason": choice.get("finish_reason"),
            "usage": {k: usage[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens") if k in usage},
        }
        return ChatReply(text if text is None else str(text), meta)

    def __repr__(self) -> str:
        return self._redact(f"OpenAIChatClient(model={self.model!r}, base_url={self.base_url!r})")


def _strip_slash(url: str) -> str:
    """``url`` without the slashes that end its path (its query string kept)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/")))


def _unsendable_at(text: str) -> int | None:
    """Index of the first character that an HTTP header cannot carry (httpx sends ASCII;
    no control character but tab), ``None`` when there is none.

    Examples
    --------
    >>> _unsendable_at("sk-abc"), _unsendable_at("sk-abc\\n"), _unsendable_at("clé")
    (None, 6, 2)
    """
    for i, ch in enumerate(text):
        if not (" " <= ch <= "~" or ch == "\t"):
            return i
    return None


def _describe(ch: str) -> str:
    return "a line break" if ch in "\r\n" else f"the character U+{ord(ch):04X}"


def _positive(value: Any) -> bool:
    """A finite number > 0 (not a bool)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and 0 < value < float("inf"))
