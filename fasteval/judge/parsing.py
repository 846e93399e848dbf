"""Turn a model reply into a validated dict.

Models wrap JSON in markdown fences, put a sentence before it, or forget keys. The
functions here find the JSON object, check the expected keys, and check value types,
raising :class:`~fasteval.judge.errors.ReplyParseError` with a reason that is shown to the
model in the corrective retry and recorded for rows that fail for good.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from fasteval.judge.errors import ReplyParseError

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)


def _snippet(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _objects_in(text: str) -> list[Any]:
    """Every JSON value that decodes starting at some ``{`` of ``text``, left to right."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        found.append(value)
        pos = text.find("{", end)
    return found


def extract_json_object(text: str | None, expected_keys: Sequence[str] = ()) -> dict[str, Any]:
    """Find the JSON object in a model reply.

    Tried in order: the whole reply; the body of each markdown code fence; every ``{`` in the
    reply that starts a decodable JSON object (so leading or trailing prose is skipped). Among
    several objects, the first one holding all ``expected_keys`` wins, else the first one.

    Parameters
    ----------
    text : str or None
        The reply text.
    expected_keys : sequence of str
        Keys used to choose between several candidate objects (not checked here).

    Raises
    ------
    ReplyParseError
        No JSON object was found.

    Examples
    --------
    >>> extract_json_object('Sure! Here it is:\\n```json\\n{"score": 1}\\n```')
    {'score': 1}
    >>> extract_json_object('The answer is {"score": 0} as requested.')
    {'score': 0}
    """
    if text is None or not str(text).strip():
        raise ReplyParseError("reply is empty")
    text = str(text)
    stripped = text.strip()
    candidates: list[Any] = []
    try:
        candidates.append(json.loads(stripped))
    except json.JSONDecodeError:
        pass
    if not candidates or not isinstance(candidates[0], dict):
        for match in _FENCE.finditer(text):
            body = match.group(2).strip()
            try:
                candidates.append(json.loads(body))
            except json.JSONDecodeError:
                candidates.extend(_objects_in(body))
        candidates.extend(_objects_in(text))
    objects = [c for c in candidates if isinstance(c, dict)]
    if not objects:
        if candidates:
            kind = type(candidates[0]).__name__
            raise ReplyParseError(f"reply is JSON of type {kind}, expected an object: {_snippet(text)}")
        raise ReplyParseError(f"reply contains no JSON object: {_snippet(text)}")
    for obj in objects:
        if all(k in obj for k in expected_keys):
            return obj
    return objects[0]


def check_keys(obj: dict[str, Any], expected_keys: Sequence[str]) -> None:
    """Raise :class:`ReplyParseError` when some expected key is missing.

    Examples
    --------
    >>> check_keys({"a": 1}, ["a"])
    >>> check_keys({"a": 1}, ["a", "b"])
    Traceback (most recent call last):
    ...
    fasteval.judge.errors.ReplyParseError: missing keys ['b'] in the reply (got keys ['a'])
    """
    missing = [k for k in expected_keys if k not in obj]
    if missing:
        raise ReplyParseError(f"missing keys {missing} in the reply (got keys {list(obj)})")


def string_list(value: Any, key: str) -> list[str]:
    """Check that ``value`` is a list of strings.

    Examples
    --------
    >>> string_list(["a", "b"], "statements")
    ['a', 'b']
    """
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ReplyParseError(f"key {key!r} must be a list of strings, got {value!r}")
    return value


def binary_scores(value: Any, key: str) -> list[int]:
    """Check that ``value`` is a list of 0/1 scores (ints, bools or 0.0/1.0); return ints.

    Examples
    --------
    >>> binary_scores([1, 0.0, True], "statement_scores")
    [1, 0, 1]
    """
    ok = isinstance(value, list) and all(
        isinstance(v, (int, float)) and not isinstance(v, str) and v in (0, 1) for v in value
    )
    if not ok:
        raise ReplyParseError(f"key {key!r} must be a list of 0/1 scores, got {value!r}")
    return [int(v) for v in value]


def make_parser(
    expected_keys: Sequence[str],
    validate: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Callable[[str | None], dict[str, Any]]:
    """Build ``parse(text) -> dict``: extract the object, check keys, then run ``validate``.

    Examples
    --------
    >>> parse = make_parser(["score"])
    >>> parse('```\\n{"score": 1}\\n```')
    {'score': 1}
    """
    keys = list(expected_keys)

    def parse(text: str | None) -> dict[str, Any]:
        obj = extract_json_object(text, keys)
        check_keys(obj, keys)
        return validate(obj) if validate is not None else obj

    return parse


def correction_message(reason: str, expected_keys: Sequence[str]) -> str:
    """The follow-up user message sent once after an unusable reply.

    Examples
    --------
    >>> correction_message("reply is empty", ["score"])[:40]
    'Your previous reply could not be used: r'
    """
    return (
        f"Your previous reply could not be used: {reason}. "
        f"Answer again with one JSON object only, no other text, with the keys {json.dumps(list(expected_keys))}."
    )
