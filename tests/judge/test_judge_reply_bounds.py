"""A hostile reply costs a judge job one row, never the job or hours: JSON nested too
deep is a per-row failure (not ``RecursionError``), a search through a large reply decodes
a bounded number of candidates however many ``{`` it holds, and the search finds exactly
what trying every ``{`` in turn finds."""

from __future__ import annotations

import json
import re
import time

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasteval.judge.errors import ReplyParseError
from fasteval.judge.parsing import extract_json_object
from tests._profile import examples

KEYS = ["statements", "statement_scores"]
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)  # the fences' grammar


def _reference(text: str, keys: list[str]) -> dict | None:
    """Every candidate tried in turn (quadratic, the behaviour the search keeps): the whole
    reply, each fence body and the objects at each ``{`` in it, then the objects at each
    ``{`` of the reply; the first object with every key, else the first object."""
    decoder = json.JSONDecoder()

    def objects_in(s: str) -> list:
        found, pos = [], s.find("{")
        while pos != -1:
            try:
                value, end = decoder.raw_decode(s, pos)
            except json.JSONDecodeError:
                pos = s.find("{", pos + 1)
                continue
            found.append(value)
            pos = s.find("{", end)
        return found

    candidates = []
    try:
        candidates.append(json.loads(text.strip()))
    except json.JSONDecodeError:
        pass
    if not candidates or not isinstance(candidates[0], dict):
        for m in _FENCE.finditer(text):
            body = m.group(2).strip()
            try:
                candidates.append(json.loads(body))
            except json.JSONDecodeError:
                candidates.extend(objects_in(body))
        candidates.extend(objects_in(text))
    objects = [c for c in candidates if isinstance(c, dict)]
    return next((o for o in objects if all(k in o for k in keys)), objects[0] if objects else None)


PIECES = ['{', '}', '[', ']', '"', '\\', ':', ',', ' ', '1', 'x', '"a"', '"statements"', '"statement_scores"',
          '{"statements": ["s"], "statement_scores": [1]}', '{"a": 1}', '```json\n', '```', '\n', 'é']


@settings(max_examples=examples(600), deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30), st.sampled_from([KEYS, [], ["a"]]))
def test_search_finds_what_trying_every_brace_finds(pieces, keys):
    text = "".join(pieces)
    if not text.strip():
        return
    expected = _reference(text, keys)
    if expected is None:
        with pytest.raises(ReplyParseError):
            extract_json_object(text, keys)
    else:
        assert extract_json_object(text, keys) == expected


class _DecodedText:
    """Counts the characters handed to the decoder in failed decodes: each failure builds
    a JSONDecodeError over the text it was given (its line and column cost a pass over
    that text before the failure), so the sum is the work failures cost."""

    def __init__(self, monkeypatch):
        self.chars = 0
        init = json.JSONDecodeError.__init__

        def counting(err, msg, doc, pos, *args, **kwargs):
            self.chars += len(doc)
            init(err, msg, doc, pos, *args, **kwargs)

        monkeypatch.setattr(json.JSONDecodeError, "__init__", counting)


HOSTILE = {
    "braces": "{" * 300_000,  # the reply
    "quoted braces": '"{' * 300_000,
    "unclosed objects": '{"a":' * 150_000,
    "closed bad objects": '{"a": x}' * 100_000,
    "nested failing far": '{"a":' * 100 + "[" + "1," * 200_000 + "x]" + "}" * 100,
    "prose then object": ("Thinking { about it } " * 30_000)
    + json.dumps({"statements": ["s"], "statement_scores": [1]}),
    "fences of a brace": "```json\n{" * 50_000,
    "fences of objects": '```json\n{"a": 1}\n```' * 20_000,
}


def test_unclosed_fence_after_blanks_is_found_at_once():
    """A fence opened, then thousands of blanks and no closing fence: a regular expression
    with blanks on both sides of an optional language name tried every split of them
    (about 40 s for 2,000 blanks), the search reads them once."""
    start = time.perf_counter()
    with pytest.raises(ReplyParseError, match="no JSON object"):
        extract_json_object("```" + " " * 2_000 + "x" * 1_000, KEYS)
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("name", list(HOSTILE))
def test_large_hostile_reply_is_searched_in_linear_work(name, monkeypatch):
    reply = HOSTILE[name]
    decoded = _DecodedText(monkeypatch)
    start = time.perf_counter()
    try:
        found = extract_json_object(reply, KEYS)
    except ReplyParseError:
        found = None
    assert decoded.chars <= 4 * len(reply), f"failed decodes read {decoded.chars} characters"
    assert time.perf_counter() - start < 10  # (the reply took 23 s; here about 0.2 s)
    if name == "prose then object":
        assert found == {"statements": ["s"], "statement_scores": [1]}


def test_megabyte_of_braces_parses_well_under_a_second():
    start = time.perf_counter()
    with pytest.raises(ReplyParseError, match="no JSON object nested at most 128 levels deep"):
        extract_json_object("{" * (1 << 20), KEYS)
    assert time.perf_counter() - start < 3  # a generous bound: about 0.3 s on a busy machine


DEEP = {"brackets": "[" * 100_000, "fenced": "```json\n" + "[" * 100_000 + "\n```",
        "in an object": '{"statements": ' + "[" * 100_000,
        "closed array": '{"statements": ' + "[" * 100_000 + "]" * 100_000 + "}"}


def test_only_objects_nested_too_deep_are_passed_over():
    """Of ``{{{...{}...}}}`` the objects nested at most 128 deep are tried, as every { is:
    the innermost, ``{}``, is what the reply holds."""
    assert extract_json_object("Here: " + "{" * 100_000 + "}" * 100_000, KEYS) == {}


@pytest.mark.parametrize("name", list(DEEP))
def test_reply_nested_too_deep_is_a_parse_failure(name):
    reply = DEEP[name]
    with pytest.raises(ReplyParseError, match="nested at most 128 levels deep"):
        extract_json_object(reply, KEYS)


def test_deep_reply_fails_its_row_and_the_job_writes_the_others(fake_openai, tmp_path):
    pytest.importorskip("httpx")
    from fasteval.cli import main

    from .fake_openai import Reply, tag

    def reply(req, n):
        if tag(req, "mode") == "deep":
            return Reply(content="[" * 100_000)
        return Reply(content={"statements": ["S"], "statement_scores": [1]})

    server = fake_openai(reply)
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"question": "q", "contexts": ["c"], "answer": f"mode={m} {i}"}) + "\n"
                           for i, m in enumerate(["ok", "deep", "ok"])))
    out = tmp_path / "out.jsonl"
    rc = main(["judge", "faithfulness", str(src), "-o", str(out), "--base-url", server.url, "--model", "m",
               "--api-key-env", "", "--no-cache", "--no-progress", "--max-retries", "0"])
    assert rc == 0
    df = pl.read_ndjson(out)
    assert df["status"].to_list() == ["evaluated", "error", "evaluated"]
    assert re.search("nested at most 128 levels deep", df["error"][1])
