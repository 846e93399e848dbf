"""Haystack tracing for judge calls: one ``haystack.chat_generator.run`` span per request.

Haystack's LLM evaluators wrap each chat-generator call in a span of that name, tagged with
the component name and the generator's type, with the messages as input and the generator's
result (replies with their ``meta``, token usage included) as output content tags. fasteval
emits the same spans through Haystack's own tracer, so an OpenTelemetry, Datadog or Langfuse
set-up sees judge calls (and their token usage) whichever library made them. Nothing happens
unless Haystack is imported and tracing is enabled (``haystack.tracing.enable_tracing`` or
auto-enabled); fasteval never imports Haystack for this.

Examples
--------
>>> active_tracer() is None or hasattr(active_tracer(), "trace")
True
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from fasteval.judge.protocol import _to_chat_messages, normalize_reply

__all__ = ["SPAN_NAME", "active_tracer", "current_span", "chat_span", "set_output"]

SPAN_NAME = "haystack.chat_generator.run"


def active_tracer() -> Any | None:
    """Haystack's tracer when Haystack is imported and tracing is enabled, else None."""
    module = sys.modules.get("haystack.tracing.tracer")
    if module is None:
        return None
    try:
        if not module.is_tracing_enabled():
            return None
    except AttributeError:  # pragma: no cover - a Haystack without the helper
        return None
    return module.tracer


def current_span() -> Any | None:
    """The span active in the calling thread (the parent of spans made on worker threads)."""
    tracer = active_tracer()
    return None if tracer is None else tracer.current_span()


def _as_chat_messages(messages: Any) -> Any:
    """OpenAI-style message dicts as Haystack ``ChatMessage`` objects (others unchanged)."""
    if not (isinstance(messages, list) and all(isinstance(m, dict) for m in messages)):
        return messages
    return _to_chat_messages(messages)


@contextlib.contextmanager
def chat_span(tracer: Any, generator: Any, messages: Any, parent: Any = None) -> Iterator[Any]:
    """Open Haystack's ``haystack.chat_generator.run`` span around one generator call.

    Parameters
    ----------
    tracer : haystack tracer
        From :func:`active_tracer`.
    generator : object
        The chat generator called (its type names the span's component type).
    messages : list
        The messages sent (Haystack ``ChatMessage`` objects or OpenAI-style dicts).
    parent : span, optional
        Parent span; pass it when the call runs on another thread than the caller's.
    """
    tags = {"haystack.component.name": "chat_generator", "haystack.component.type": type(generator).__name__}
    with tracer.trace(SPAN_NAME, tags=tags, parent_span=parent) as span:
        # the span decides whether content is kept (HAYSTACK_CONTENT_TRACING_ENABLED, or its tracer)
        span.set_content_tag("haystack.component.input", {"messages": _as_chat_messages(messages)})
        yield span


def set_output(span: Any, result: Any) -> None:
    """Record the generator's result on ``span`` in Haystack's shape (``{"replies": [ChatMessage]}``)."""
    if not (isinstance(result, dict) and "replies" in result):
        from haystack.dataclasses import ChatMessage

        reply = normalize_reply(result)
        result = {"replies": [ChatMessage.from_assistant(reply.text or "", meta=dict(reply.meta))]}
    span.set_content_tag("haystack.component.output", result)
