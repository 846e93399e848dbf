"""A chat-completions client for any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import weakref
from typing import Any

from fasteval.errors import ParameterError
from fasteval.judge.aio import run_sync
from fasteval.judge.errors import MissingAPIKeyError, RequestError
from fasteval.judge.protocol import ChatReply
from fasteval.judge.ratelimit import RateLimiter, backoff_delay, estimate_tokens, parse_retry_after

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-5-mini"  # the default of Haystack's OpenAIChatGenerator
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 524, 529})


class OpenAIChatClient:
    """Chat-completions client with retries, backoff, rate limits and JSON mode.

    Parameters
    ----------
    model : str
        Model name sent in each request.
    base_url : str, optional
        Server root such as ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is appended
        unless already there). Default: ``$OPENAI_BASE_URL`` or OpenAI's API.
    api_key_env : str or None
        Environment variable holding the API key, read at request time and sent as
        ``Authorization: Bearer``. Nothing is sent when it is unset (local servers), except
        that OpenAI's own API requires it.
    json_mode : bool
        Send ``response_format={"type": "json_object"}``. When the server rejects it
        (HTTP 400/404/422), the request is repeated without it and JSON mode stays off.
    generation_kwargs : dict, optional
        Extra request fields (``temperature``, ``seed``, ``max_tokens``, ...). Default ``{"seed": 42}``.
    timeout : float
        Seconds allowed per HTTP request (connect, read, write each).
    max_retries : int
        Retries after the first attempt on HTTP 408/409/425/429/5xx, timeouts and connection errors.
    backoff_base, backoff_max : float
        Backoff before retry ``i`` is uniform in ``[d/2, d]`` with ``d = min(backoff_max,
        backoff_base * 2**i)``; a ``Retry-After`` (or ``retry-after-ms``) header replaces it.
    max_retry_after : float
        Longest wait accepted from a ``Retry-After`` header (seconds).
    requests_per_minute, tokens_per_minute : float, optional
        Client-side rate limits (token counts are estimated before, corrected after each reply).
    headers : dict, optional
        Extra HTTP headers.
    trust_env : bool
        Read proxy and CA settings from the environment (``HTTPS_PROXY``, ``SSL_CERT_FILE``...).

    Examples
    --------
    >>> client = OpenAIChatClient(model="qwen2.5-7b-instruct", base_url="http://127.0.0.1:8000/v1")
    >>> client.url
    'http://127.0.0.1:8000/v1/chat/completions'
    >>> # client.run([{"role": "user", "content": "Say {\\"ok\\": 1}"}]).text  # needs a server
    """

    _fasteval_messages = "dict"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        base_url: str | None = None,
        *,
        api_key_env: str | None = "OPENAI_API_KEY",
        json_mode: bool = True,
        generation_kwargs: dict[str, Any] | None = None,
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        max_retry_after: float = 300.0,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        headers: dict[str, str] | None = None,
        trust_env: bool = False,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ParameterError("model", "a non-empty string", model)
        if not timeout or timeout <= 0:
            raise ParameterError("timeout", "a positive number of seconds", timeout)
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ParameterError("max_retries", "an integer >= 0", max_retries)
        for name, value in (("requests_per_minute", requests_per_minute), ("tokens_per_minute", tokens_per_minute)):
            if value is not None and not value > 0:
                raise ParameterError(name, "a positive number or None", value)
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise ParameterError("base_url", "an http:// or https:// URL", base_url)
        self.api_key_env = api_key_env
        self.json_mode = bool(json_mode)
        self.generation_kwargs = dict({"seed": 42} if generation_kwargs is None else generation_kwargs)
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.max_retry_after = float(max_retry_after)
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self.headers = dict(headers or {})
        self.trust_env = bool(trust_env)
        self.limiter = RateLimiter(requests_per_minute, tokens_per_minute)
        self._json_supported: bool | None = None  # None: not known yet
        # one HTTP client per event loop (connection pools cannot cross loops)
        self._http: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        self._rng = random.Random()

    # -- protocol -----------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The chat-completions endpoint."""
        if self.base_url.endswith("/chat/completions"):
            return self.base_url
        return f"{self.base_url}/chat/completions"

    def cache_namespace(self) -> dict[str, Any]:
        """Model and generation settings: the part of the cache key besides the messages."""
        params = {k: v for k, v in self.generation_kwargs.items() if k != "response_format"}
        return {"model": self.model, "params": json.loads(json.dumps(params, sort_keys=True, default=str))}

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
        payload: dict[str, Any] = {"model": self.model, "messages": messages, **self.generation_kwargs}
        if self.json_mode and self._json_supported is not False and "response_format" not in payload:
            payload["response_format"] = {"type": "json_object"}
        estimate = estimate_tokens(messages, payload.get("max_tokens") or payload.get("max_completion_tokens"))
        headers = self._headers()
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
                response = await http.post(self.url, json=payload, headers=headers)
            except Exception as exc:  # httpx.TimeoutException, httpx.TransportError
                import httpx

                if not isinstance(exc, (httpx.TimeoutException, httpx.TransportError)):
                    raise
                self.limiter.settle(estimate, 0)
                if isinstance(exc, httpx.TimeoutException):
                    reason = f"request timed out (limit {self.timeout:g} s): {type(exc).__name__}: {exc}"
                else:
                    reason = f"connection failed: {type(exc).__name__}: {exc}"
            else:
                status = response.status_code
                if status == 200:
                    reply = self._read(response, attempts)
                    if "response_format" in payload:
                        self._json_supported = True
                    total = reply.usage.get("total_tokens")
                    self.limiter.settle(estimate, total)
                    reply.meta["attempts"] = attempts
                    return reply
                body = response.text[:300]
                if status in (400, 404, 422) and "response_format" in payload and self._json_supported is not True:
                    # The server may not know JSON mode: try once without it.
                    payload.pop("response_format")
                    self._json_supported = False
                    continue
                reason = f"HTTP {status} from {self.url}: {body}"
                if status not in RETRY_STATUS:
                    raise RequestError(reason, status=status, attempts=attempts)
                retry_after = parse_retry_after(response.headers)
            if retries >= self.max_retries:
                raise RequestError(
                    f"gave up after {attempts} attempts; last error: {reason}", status=status, attempts=attempts
                )
            if retry_after is not None:
                retry_after = min(retry_after, self.max_retry_after)
            delay = retry_after if retry_after is not None else backoff_delay(
                retries, self.backoff_base, self.backoff_max, self._rng
            )
            retries += 1
            await asyncio.sleep(delay)

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

    # -- serialization ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Serialize the configuration (never the API key itself)."""
        return {
            "type": f"{type(self).__module__}.{type(self).__qualname__}",
            "init_parameters": {
                "model": self.model,
                "base_url": self.base_url,
                "api_key_env": self.api_key_env,
                "json_mode": self.json_mode,
                "generation_kwargs": self.generation_kwargs,
                "timeout": self.timeout,
                "max_retries": self.max_retries,
                "backoff_base": self.backoff_base,
                "backoff_max": self.backoff_max,
                "max_retry_after": self.max_retry_after,
                "requests_per_minute": self.requests_per_minute,
                "tokens_per_minute": self.tokens_per_minute,
                "headers": self.headers,
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
            headers["Authorization"] = f"Bearer {key}"
        elif self.base_url.startswith(DEFAULT_BASE_URL) and "Authorization" not in headers:
            if self.api_key_env:
                raise MissingAPIKeyError((self.api_key_env,))
            raise ParameterError(
                "api_key_env", f"the name of a set environment variable holding an API key for {self.base_url}",
                self.api_key_env,
            )
        return headers

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

    def _read(self, response: Any, attempts: int) -> ChatReply:
        try:
            body = response.json()
            choice = body["choices"][0]
            message = choice.get("message") or {}
            text = message.get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise RequestError(
                f"unreadable chat-completions body from {self.url}: {response.text[:200]!r}",
                status=response.status_code, attempts=attempts,
            ) from exc
        usage = body.get("usage") or {}
        meta = {
            "model": body.get("model", self.model),
            "finish_reason": choice.get("finish_reason"),
            "usage": {k: usage[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens") if k in usage},
        }
        return ChatReply(text if text is None else str(text), meta)

    def __repr__(self) -> str:
        return f"OpenAIChatClient(model={self.model!r}, base_url={self.base_url!r})"
