"""The chat-generator protocol: the reply, the messages, and how Haystack chat generators are read.

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

import inspect
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
