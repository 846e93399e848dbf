"""The chat-generator protocol and the adapter that accepts Haystack chat generators.

A fasteval chat generator takes OpenAI-style messages (``[{"role": "user", "content": ...}]``)
and returns a :class:`ChatReply` (a plain ``str`` is accepted too)::

    class MyGenerator:
        def run(self, messages: list[dict]) -> ChatReply: ...
        async def run_async(self, messages: list[dict]) -> ChatReply: ...   # optional

Haystack chat generators (``run(messages=[ChatMessage, ...]) -> {"replies": [ChatMessage]}``)
are accepted as they are: an object is treated as Haystack-style when it is a Haystack
component, comes from a ``haystack`` module, or annotates ``messages`` with ``ChatMessage``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class ChatReply:
    """One model reply.

    Attributes
    ----------
    text : str or None
        The reply text.
    meta : dict
        Model, finish reason, usage (``prompt_tokens``, ``completion_tokens``, ``total_tokens``).

    Examples
    --------
    >>> ChatReply("{}", {"usage": {"prompt_tokens": 3, "completion_tokens": 1}}).usage
    {'prompt_tokens': 3, 'completion_tokens': 1}
    """

    text: str | None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def usage(self) -> dict[str, int]:
        usage = self.meta.get("usage") or {}
        return {k: int(v) for k, v in usage.items() if isinstance(v, (int, float))}


@runtime_checkable
class ChatGenerator(Protocol):
    """Anything with ``run(messages) -> ChatReply | str`` (``run_async`` is optional)."""

    def run(self, messages: list[dict[str, str]]) -> Any: ...


def _is_haystack_style(generator: Any) -> bool:
    if getattr(generator, "_fasteval_messages", None) == "dict":
        return False
    if hasattr(generator, "__haystack_input__") or hasattr(type(generator), "__haystack_output__"):
        return True
    if type(generator).__module__.split(".")[0] == "haystack":
        return True
    try:
        annotation = inspect.signature(generator.run).parameters["messages"].annotation
    except (KeyError, TypeError, ValueError, AttributeError):
        return False
    return "ChatMessage" in str(annotation)


def _to_chat_messages(messages: list[dict[str, str]]) -> list[Any]:
    from haystack.dataclasses import ChatMessage

    makers = {
        "user": ChatMessage.from_user,
        "assistant": ChatMessage.from_assistant,
        "system": ChatMessage.from_system,
    }
    return [makers[m["role"]](m["content"]) for m in messages]


class MessageDict(dict):
    """An OpenAI-style message (``{"role": "user", "content": ...}``, a real ``dict``) that
    also answers as Haystack's ``ChatMessage`` (``.text``, ``.role``, ``.meta``, ``.is_from``...),
    so that a generator written for either protocol reads it: Haystack hands its evaluators'
    generators ``ChatMessage`` objects whatever they are, fasteval's protocol hands dicts.
    The ``ChatMessage`` is built on the first attribute read (haystack-ai needed then).

    Examples
    --------
    >>> m = MessageDict(role="user", content="Hi")
    >>> m["content"], m == {"role": "user", "content": "Hi"}
    ('Hi', True)
    >>> m.text  # doctest: +SKIP
    'Hi'
    """

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        message = self.__dict__.get("_chat_message")
        if message is None:
            try:
                message = _to_chat_messages([self])[0]
            except ImportError:
                raise AttributeError(name) from None
            self.__dict__["_chat_message"] = message
        return getattr(message, name)


def normalize_reply(result: Any) -> ChatReply:
    """Turn what a generator returned into a :class:`ChatReply`.

    Accepts a ``ChatReply``, a string, a Haystack result ``{"replies": [ChatMessage | str]}``,
    or a dict with ``text`` / ``content``.

    Examples
    --------
    >>> normalize_reply({"replies": ['{"score": 1}']}).text
    '{"score": 1}'
    """
    if isinstance(result, ChatReply):
        return result
    if isinstance(result, str):
        return ChatReply(result, {})
    if isinstance(result, dict) and "replies" in result:
        replies = result["replies"]
        if not replies:
            from fasteval.judge.errors import RequestError

            raise RequestError("the chat generator returned no replies")
        first = replies[0]
        if isinstance(first, str):
            return ChatReply(first, dict(result.get("meta") or {}))
        if isinstance(first, dict):
            return ChatReply(first.get("content", first.get("text")), dict(first.get("meta") or {}))
        return ChatReply(getattr(first, "text", None), dict(getattr(first, "meta", None) or {}))
    if isinstance(result, dict) and ("text" in result or "content" in result):
        return ChatReply(result.get("text", result.get("content")), dict(result.get("meta") or {}))
    text = getattr(result, "text", None)
    if isinstance(text, str):
        return ChatReply(text, dict(getattr(result, "meta", None) or {}))
    from fasteval.judge.errors import RequestError

    raise RequestError(f"cannot read a reply from the chat generator's result of type {type(result).__name__}")


class Backend:
    """Uniform async access to a fasteval or Haystack chat generator.

    Parameters
    ----------
    generator : object
        A fasteval chat generator (e.g. :class:`~fasteval.judge.client.OpenAIChatClient`), a
        Haystack chat generator, or an ``openai.OpenAI`` / ``AsyncOpenAI`` client object.
    executor : Executor, optional
        Where synchronous ``run`` calls go (so they still run concurrently).
    prefer_async : bool
        ``True`` (for ``run_async`` callers): use the generator's ``run_async`` when it has
        one. ``False`` (for synchronous callers): always its ``run``, on ``executor``'s
        threads, as Haystack's synchronous ``run`` does; a patched or mocked ``run`` is
        therefore what gets called. (fasteval's own client, whose ``run`` only waits for its
        ``run_async``, is awaited directly unless its ``run`` was replaced.)
    trace_parent : span, optional
        Parent of the ``haystack.chat_generator.run`` spans (see :mod:`fasteval.judge.tracing`);
        default: the span active where the backend is made.

    Examples
    --------
    >>> class Both:
    ...     def run(self, messages):
    ...         return "sync"
    ...     async def run_async(self, messages):
    ...         return "async"
    >>> async def ask(backend):
    ...     return (await backend.call([{"role": "user", "content": "hi"}])).text
    >>> asyncio.run(ask(Backend(Both()))), asyncio.run(ask(Backend(Both(), prefer_async=False)))
    ('async', 'sync')
    """

    def __init__(
        self,
        generator: Any,
        executor: Executor | None = None,
        *,
        prefer_async: bool = True,
        trace_parent: Any = None,
    ) -> None:
        from fasteval.judge.openai_sdk import as_chat_generator

        generator = as_chat_generator(generator)  # an openai.OpenAI / AsyncOpenAI client object
        if not callable(getattr(generator, "run", None)):
            from fasteval.errors import ParameterError

            raise ParameterError(
                "chat_generator", "an object with a run(messages) method", type(generator).__name__
            )
        self.generator = generator
        self.executor = executor
        self.haystack_style = _is_haystack_style(generator)
        run_async = getattr(generator, "run_async", None)
        if not (callable(run_async) and inspect.iscoroutinefunction(run_async)):
            run_async = None
        if not prefer_async and not _run_awaits_run_async(generator):
            run_async = None
        self._run_async: Callable[..., Any] | None = run_async
        from fasteval.judge.tracing import active_tracer

        self._tracer = active_tracer()
        if self._tracer is not None and trace_parent is None:
            trace_parent = self._tracer.current_span()
        self._trace_parent = trace_parent

    def cache_namespace(self) -> dict[str, Any]:
        """What, besides the messages, determines a reply: model, generation settings and
        the server the generator calls (its ``api_base_url``, ``base_url``, ``azure_endpoint``
        or ``url``)."""
        gen = self.generator
        custom = getattr(gen, "cache_namespace", None)
        if callable(custom):
            return dict(custom())
        model = getattr(gen, "model", None) or getattr(gen, "model_name", None)
        kwargs = getattr(gen, "generation_kwargs", None) or {}
        kwargs = {k: v for k, v in dict(kwargs).items() if k != "response_format"}
        from fasteval.judge.cache import endpoint_key

        server = next((v for a in _ENDPOINT_ATTRIBUTES if (v := getattr(gen, a, None)) is not None), None)
        return {
            "model": str(model) if model is not None else type(gen).__qualname__,
            "params": json.loads(json.dumps(kwargs, sort_keys=True, default=str)),
            **endpoint_key(server),
        }

    async def call(self, messages: list[dict[str, str]]) -> ChatReply:
        """Send ``messages``; return the first reply."""
        payload: Any = (_to_chat_messages(messages) if self.haystack_style
                        else [MessageDict(m) for m in messages])
        tracer = self._tracer
        if self._run_async is not None:
            if tracer is None:
                result = await self._run_async(messages=payload)
            else:
                from fasteval.judge.tracing import chat_span, set_output

                with chat_span(tracer, self.generator, payload, self._trace_parent) as span:
                    result = await self._run_async(messages=payload)
                    set_output(span, result)
        else:
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(self.executor, self._run_sync, payload)
        return normalize_reply(result)

    def _run_sync(self, payload: Any) -> Any:
        tracer = self._tracer
        if tracer is None:
            return self.generator.run(messages=payload)
        from fasteval.judge.tracing import chat_span, set_output

        with chat_span(tracer, self.generator, payload, self._trace_parent) as span:
            result = self.generator.run(messages=payload)
            set_output(span, result)
        return result


def _run_awaits_run_async(generator: Any) -> bool:
    """Whether ``generator.run`` is fasteval's client's own ``run``, which only waits for
    ``run_async`` on a background loop (so awaiting ``run_async`` is the same call)."""
    if type(generator).__module__ != "fasteval.judge.client" or "run" in vars(generator):
        return False
    run = getattr(type(generator), "run", None)  # patched or mocked: another function, or none
    return (getattr(run, "__module__", None) == "fasteval.judge.client"
            and getattr(run, "__qualname__", None) == "OpenAIChatClient.run")


_ENDPOINT_ATTRIBUTES = ("api_base_url", "base_url", "azure_endpoint", "url")
"""Where a chat generator names its server (Haystack's OpenAI, Azure, ... generators)."""
