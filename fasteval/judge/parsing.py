"""Turn a model reply into a validated dict.

Models wrap JSON in markdown fences, put a sentence before it, or forget keys. The
functions here find the JSON object, check the expected keys, and check value types,
raising :class:`~fasteval.judge.errors.ReplyParseError` with a reason that is shown to the
model in the corrective retry and recorded for rows that fail for good.
"""

from __future__ import annotations

import heapq
import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from fasteval.io import _json
from fasteval.judge.errors import ReplyParseError

if TYPE_CHECKING:
    import numpy as np

_FENCE_HEAD = re.compile(r"[ \t]*[A-Za-z0-9_-]*[ \t]*\r?\n?")
"""What may follow a fence's opening backticks before its body: blanks, a language name,
blanks, a line end (matched greedily, never backtracked: it always matches)."""


def _fences(text: str) -> Iterator[tuple[int, int]]:
    """Where the bodies of the markdown code fences of ``text`` start and end, left to
    right: from each ``` (past its language name and line end) to the next ```. One
    pass: a regular expression with the blanks on both sides of an optional name
    backtracked through every split of a long run of blanks when no fence closed
    (minutes for a few thousand).

    Examples
    --------
    >>> text = 'a ```json\\n{"s": 1}\\n``` b ```x``` ```open'
    >>> [text[lo:hi] for lo, hi in _fences(text)]
    ['{"s": 1}\\n', '']
    """
    pos = 0
    while (start := text.find("```", pos)) >= 0:
        body = _FENCE_HEAD.match(text, start + 3).end()
        end = text.find("```", body)
        if end < 0:  # no fence closes here, nor later: no ``` is left past this one's head
            return
        yield body, end
        pos = end + 3


def _snippet(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


_VALUE_STARTS = frozenset('{["-0123456789tfnNI')
"""The characters a JSON value (as Python's json reads it: NaN, Infinity too) starts with."""
_VALUE_ENDS = frozenset('}]"0123456789elNy')
"""The characters one ends with."""


class _Search:
    """What a search of a reply found: its JSON values in the order they are tried, and
    whether a value was passed over for nesting too deep. Stops at the first object
    holding every expected key (the one :func:`extract_json_object` would choose)."""

    def __init__(self, expected_keys: Sequence[str]) -> None:
        self.keys = list(expected_keys)
        self.found: list[Any] = []
        self.too_deep = False
        self.done = False
        self.an_object = False
        # an object holding every expected key is at least this long: shorter ones are
        # decoded only while no object was found (a flood of {} costs one decode)
        self.shortest = 2 + sum(len(json.dumps(k, ensure_ascii=False)) + 2 for k in self.keys)

    def add(self, value: Any) -> None:
        self.found.append(value)
        self.an_object |= isinstance(value, dict)
        self.done = isinstance(value, dict) and all(k in value for k in self.keys)

    def whole(self, text: str) -> bool:
        """Try ``text`` (stripped) as one JSON value; whether it was one. A text that
        cannot open or close one is not decoded (a reply of many fences is cheap)."""
        if not text or text[0] not in _VALUE_STARTS or text[-1] not in _VALUE_ENDS:
            try:  # (still said: a reply that nests too deep fails for that reason)
                _json.check_depth(text)
            except _json.JsonDepthError:
                self.too_deep = True
            return False
        try:
            self.add(_json.loads(text))
        except _json.JsonDepthError:
            self.too_deep = True
            return False
        except json.JSONDecodeError:
            return False
        return True


def _spans(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """For every ``{`` of ``text`` (character offsets; -1 for none): its offset, where the
    object it opens would end, read as JSON from there, where it would first nest more
    than :data:`fasteval.io._json.MAX_DEPTH` levels, and which reading it takes (1: an
    odd number of quotes before it); None when there is no ``{``.

    A ``{`` opens a string-aware reading of its own: a quote before it may be prose. Both
    readings (an even or odd number of quotes before) are made once over the whole reply
    (:func:`fasteval.io._json.levels`), and each ``{`` takes the one in which it is a
    bracket; its end is the next byte at which that reading's level is back to the level
    before it, found for all at once by sorting (level, offset) keys: linear but for the
    sort, never one decode per ``{``. A part of the text (a fence's body) reads as the
    whole does, but for ends and depths past its end."""
    import numpy as np

    data = text.encode("utf-8", "surrogatepass")
    a = np.frombuffer(data, dtype=np.uint8)
    opens = np.flatnonzero(a == 123)
    if not opens.size:
        return None
    n = a.shape[0]
    ends = np.full(opens.shape[0], -1, dtype=np.int64)
    overs = np.full(opens.shape[0], -1, dtype=np.int64)
    reading = np.zeros(opens.shape[0], dtype=np.int8)
    for odd in (False, True):
        level = _json.levels(data, in_string=odd)
        before = np.where(opens > 0, level[np.maximum(opens - 1, 0)], 0)
        mine = level[opens] == before + 1  # a bracket in this reading, not in a string
        if not mine.any():
            continue
        keys = np.sort(level * (n + 1) + np.arange(n, dtype=np.int64))
        ends[mine] = _next_at(keys, n, before[mine], opens[mine])
        overs[mine] = _next_at(keys, n, before[mine] + _json.MAX_DEPTH + 1, opens[mine])
        reading[mine] = odd
    if n != len(text):  # byte offsets to character offsets
        chars = np.cumsum((a & 0xC0) != 0x80) - 1
        opens = chars[opens]
        ends = np.where(ends >= 0, chars[np.maximum(ends, 0)], -1)
        overs = np.where(overs >= 0, chars[np.maximum(overs, 0)], -1)
    return opens, ends, overs, reading


def _next_at(keys: np.ndarray, n: int, level: np.ndarray, after: np.ndarray) -> np.ndarray:
    """The first offset past each of ``after`` at which the reading of sorted ``keys``
    (level * (n + 1) + offset) is at ``level``; -1 where there is none."""
    import numpy as np

    j = np.searchsorted(keys, level * (n + 1) + after + 1)
    at = keys[np.minimum(j, n - 1)]
    hit = (j < n) & (at // (n + 1) == level)
    return np.where(hit, at - level * (n + 1), -1)


def _candidates(spans: tuple, lo: int, hi: int, search: _Search) -> list[tuple[int, int, int]]:
    """``(start, end, reading)`` of the ``{`` in ``text[lo:hi]`` whose objects close
    there and nest at most :data:`fasteval.io._json.MAX_DEPTH` levels (``spans``:
    :func:`_spans`); notes in ``search`` that one nested deeper. Few candidates (a fence's
    body) are taken one by one, many at once: a reply of many fences costs no array
    operations per fence."""
    import bisect

    opens, ends, overs, reading = spans
    first, last = bisect.bisect_left(opens, lo), bisect.bisect_left(opens, hi)
    if last - first <= 32:
        found = []
        for i in range(first, last):
            end, over = int(ends[i]), int(overs[i])
            end = end if end < hi else -1
            if 0 <= over < hi and (end < 0 or over < end):
                search.too_deep = True
            elif end >= 0:
                found.append((int(opens[i]), end, int(reading[i])))
        return found
    import numpy as np

    opens, ends, overs, reading = (part[first:last] for part in spans)
    ends = np.where(ends < hi, ends, -1)
    deep = (overs >= 0) & (overs < hi) & ((ends < 0) | (overs < ends))
    search.too_deep |= bool(deep.any())
    ok = (ends >= 0) & ~deep
    return list(zip(opens[ok].tolist(), ends[ok].tolist(), reading[ok].tolist(), strict=True))


def _objects_in(text: str, search: _Search, spans: tuple | None, lo: int, hi: int) -> None:
    """Add to ``search`` every JSON object that decodes starting at some ``{`` of
    ``text[lo:hi]`` (``spans``: :func:`_spans` of ``text``), left to right (past the end
    of each one found), until one holds every expected key. Linear in the text: a ``{``
    whose object does not close before ``hi`` is not decoded, nor one nesting too deep,
    and a failed decode passes over the ``{`` inside it (in the same reading of strings,
    past its start) whose objects hold the place it failed at: the decoder met them as
    values and failed inside them, as it would decoding them alone. A decode reads only
    the object's own characters."""
    if spans is None:
        return
    resume = 0
    failed: tuple[list[int], list[int]] = ([], [])  # per reading: places decodes failed at, a heap
    for start, end, odd in _candidates(spans, lo, hi, search):
        if start < resume:
            continue
        places = failed[odd]
        while places and places[0] <= start:  # behind this { now: it cannot hold them
            heapq.heappop(places)
        if places and places[0] <= end:
            continue
        if search.an_object and end - start + 1 < search.shortest:
            continue
        try:
            value = json.loads(text[start:end + 1])
        except json.JSONDecodeError as exc:
            heapq.heappush(failed[odd], start + exc.pos)
            continue
        search.add(value)
        if search.done:
            return
        resume = end + 1


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

    The search is linear in the reply's length (a server's 8 MiB of ``{`` cost a fraction
    of a second, not hours), and JSON nested more than
    :data:`fasteval.io._json.MAX_DEPTH` levels is passed over, never decoded.

    Raises
    ------
    ReplyParseError
        No JSON object was found (nested at most that deep).

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
    search = _Search(expected_keys)
    if not search.whole(text.strip()) or not isinstance(search.found[0], dict):
        spans = _spans(text)  # (once, for the fences' bodies and the whole reply)
        for lo, hi in _fences(text):
            if search.done:
                break
            if text[lo:hi].strip() and not search.whole(text[lo:hi].strip()):
                _objects_in(text, search, spans, lo, hi)
        if not search.done:
            _objects_in(text, search, spans, 0, len(text))
    objects = [c for c in search.found if isinstance(c, dict)]
    if not objects:
        if search.too_deep:
            raise ReplyParseError(f"reply contains no JSON object nested at most {_json.MAX_DEPTH} "
                                  f"levels deep (arrays and objects): {_snippet(text)}")
        if search.found:
            kind = type(search.found[0]).__name__
            raise ReplyParseError(f"Expected a JSON object containing a dictionary but got {kind}: "
                                  f"{_snippet(text)}")  # (Haystack's words)
        raise ReplyParseError(f"reply contains no JSON object: {_snippet(text)}")
    for obj in objects:
        if all(k in obj for k in expected_keys):
            return obj
    return objects[0]


def check_keys(obj: dict[str, Any], expected_keys: Sequence[str]) -> None:
    """Raise :class:`ReplyParseError` when some expected key is missing, in the words of
    Haystack's LLM evaluators (``Missing expected keys in JSON: [...]. Got keys: [...]``),
    so that a test written against Haystack's error passes against fasteval's.

    Examples
    --------
    >>> check_keys({"a": 1}, ["a"])
    >>> check_keys({"a": 1}, ["a", "b"])
    Traceback (most recent call last):
    ...
    fasteval.judge.errors.ReplyParseError: Missing expected keys in JSON: ['b']. Got keys: ['a']
    """
    missing = [k for k in expected_keys if k not in obj]
    if missing:
        raise ReplyParseError(f"Missing expected keys in JSON: {missing}. Got keys: {list(obj)}")


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
