"""A light document type and the comparison-value machinery of the evaluators.

The evaluators accept any object with ``content``, ``id``, ``meta`` and ``score``
attributes, so Haystack's own ``haystack.Document`` works unchanged; this module's
:class:`Document` is a dependency-free stand-in with the same fields and the same
automatic id.

Examples
--------
>>> doc = Document(content="Paris", meta={"source": {"url": "u1"}})
>>> comparison_getter("meta.source.url")(doc)
'u1'
>>> comparison_getter("meta.source.page")(doc) is None
True
>>> Document(content="x").id == Document(content="x").id
True
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from fasteval.errors import ParameterError

__all__ = [
    "Document",
    "comparison_getter",
    "check_comparison_field",
    "normalize_text",
    "make_normalizer",
]


@dataclass
class Document:
    """A retrieved or expected document: ``content``, ``id``, ``meta`` and ``score``.

    Parameters
    ----------
    content : str, optional
        The text.
    id : str, optional
        Identifier; when empty it is derived from ``content`` and ``meta`` the same
        way ``haystack.Document`` derives it (a SHA-256 hex digest), so ids agree
        between the two types.
    meta : dict
        Free-form, possibly nested metadata.
    score : float, optional
        Relevance (ground truth) or retrieval score.

    Raises ``ParameterError`` (a ``ValueError``, as ``haystack.Document`` raises) when
    ``content`` is neither a string nor None.

    Examples
    --------
    >>> d = Document(content="France", score=1.0)
    >>> (d.content, d.score, len(d.id))
    ('France', 1.0, 64)
    >>> Document(content=42)
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: content must be a string or None, got 42
    """

    content: str | None = None
    id: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    score: float | None = None

    def __post_init__(self) -> None:
        # as haystack.Document refuses other content (a ValueError)
        if self.content is not None and not isinstance(self.content, str):
            raise ParameterError("content", "a string or None", self.content)
        if not self.id:
            self.id = _default_id(self.content, self.meta)


def _default_id(content: str | None, meta: dict[str, Any]) -> str:
    # Same recipe as haystack.Document for a document without blob or embeddings.
    text = content or None
    meta_text = json.dumps(meta, sort_keys=True, default=str) if meta else "{}"
    data = f"{text}None{None!r}None{meta_text}None"
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def check_comparison_field(field_name: str) -> None:
    """Raise ``ParameterError`` unless ``field_name`` is ``content``, ``id`` or ``meta.<key>``.

    Examples
    --------
    >>> check_comparison_field("meta.file_id")
    >>> check_comparison_field("title")
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: document_comparison_field must be 'content', 'id' or 'meta.<key>[.<key>...]', got 'title'
    """
    if not isinstance(field_name, str) or not (
        field_name in ("content", "id") or field_name.startswith("meta.")
    ):
        raise ParameterError(
            "document_comparison_field", "'content', 'id' or 'meta.<key>[.<key>...]'", field_name
        )


def _meta_path_getter(parts: list[str]) -> Callable[[Any], Any]:
    if len(parts) == 1:
        key = parts[0]

        def get_one(doc: Any) -> Any:
            meta = doc.meta
            if isinstance(meta, dict) and key in meta:
                return meta[key]
            return None

        return get_one

    def get_nested(doc: Any) -> Any:
        value = doc.meta
        for part in parts:
            if not isinstance(value, dict) or part not in value:
                return None
            value = value[part]
        return value

    return get_nested


def comparison_getter(field_name: str) -> Callable[[Any], Any]:
    """Return a function ``doc -> comparison value`` for a ``document_comparison_field``.

    ``"content"`` and ``"id"`` read the attribute; ``"meta.a.b"`` walks nested
    dictionaries and gives ``None`` when a key is missing or a level is not a dict.
    The text after ``meta.`` is split on every dot (``"meta."`` looks up the empty key).

    Examples
    --------
    >>> get = comparison_getter("meta.page")
    >>> get(Document(meta={"page": 3})), get(Document(meta={}))
    (3, None)
    """
    check_comparison_field(field_name)
    if field_name == "content":
        return attrgetter("content")
    if field_name == "id":
        return attrgetter("id")
    return _meta_path_getter(field_name[len("meta.") :].split("."))


_WS = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Unicode NFKC, case folding and whitespace collapsing (strip, runs -> one space).

    The counterpart of cleaning documents before evaluation: apply it to both sides
    so that ``"Paris\\n"`` and ``"paris"`` compare equal.

    Examples
    --------
    >>> normalize_text("  The\\u00a0CAF\\u00c9\\n\\tbar ")
    'the café bar'
    """
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def make_normalizer(normalize: bool | Callable[[str], str]) -> Callable[[Any], Any] | None:
    """Turn the ``normalize`` option into a value mapper (strings only) or ``None``.

    Examples
    --------
    >>> f = make_normalizer(True)
    >>> f(" A  b "), f(3), f(None)
    ('a b', 3, None)
    >>> make_normalizer(False) is None
    True
    """
    if normalize is False or normalize is None:
        return None
    if normalize is True:
        func = normalize_text
    elif callable(normalize):
        func = normalize
    else:
        raise ParameterError("normalize", "a bool or a callable str -> str", normalize)

    def apply(value: Any) -> Any:
        return func(value) if isinstance(value, str) else value

    return apply
