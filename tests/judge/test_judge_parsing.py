"""Reply parsing: fences, prose, key and type checks."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fasteval.judge.errors import ReplyParseError
from fasteval.judge.parsing import (
    binary_scores,
    check_keys,
    extract_json_object,
    make_parser,
    string_list,
)

OBJ = {"statements": ["A {brace} in text.", "B"], "statement_scores": [1, 0]}
TEXT = json.dumps(OBJ)


@pytest.mark.parametrize(
    "reply",
    [
        TEXT,
        f"  \n{TEXT}\n ",
        f"```json\n{TEXT}\n```",
        f"```\n{TEXT}\n```",
        f"Here is my judgement:\n```json\n{TEXT}\n```\nHope this helps.",
        f"Sure. The statements are analysed below.\n{TEXT}",
        f"{TEXT}\nI scored the second statement 0 because it is not in the context.",
        f"Thinking: the answer has {{two}} parts.\n{TEXT}",  # a non-JSON brace before the object
        f'First draft {{"statements": []}} then final {TEXT}',  # the object with every key wins
    ],
)
def test_object_found(reply):
    assert extract_json_object(reply, ["statements", "statement_scores"]) == OBJ


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        ("", "empty"),
        (None, "empty"),
        ("I cannot judge this.", "no JSON object"),
        ('{"statements": ["a", }', "no JSON object"),
        ("[1, 0]", "Expected a JSON object containing a dictionary but got list"),
        ("```json\n[1]\n```", "Expected a JSON object containing a dictionary but got list"),
    ],
)
def test_no_object(reply, match):
    with pytest.raises(ReplyParseError, match=match):
        extract_json_object(reply)


def test_key_and_type_checks():
    with pytest.raises(ReplyParseError, match=r"Missing expected keys in JSON: \['statement_scores'\]\. "
                                              r"Got keys: \['statements'\]"):
        check_keys({"statements": []}, ["statements", "statement_scores"])
    assert string_list([], "k") == []
    with pytest.raises(ReplyParseError, match="list of strings"):
        string_list(["a", 1], "k")
    with pytest.raises(ReplyParseError, match="list of strings"):
        string_list("a", "k")
    assert binary_scores([0, 1, 1.0, False], "s") == [0, 1, 1, 0]
    for bad in (["1"], [2], [0.5], "1", [None]):
        with pytest.raises(ReplyParseError, match="0/1 scores"):
            binary_scores(bad, "s")


def test_make_parser_runs_validation():
    parse = make_parser(["score"], lambda o: {**o, "score": binary_scores(o["score"], "score")})
    assert parse('noise ```{"score": [true]}``` noise') == {"score": [1]}
    with pytest.raises(ReplyParseError, match="Missing expected keys in JSON"):
        parse('{"scores": [1]}')


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@given(obj=st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=4),
       prefix=st.sampled_from(["", "Answer: ", "Result follows.\n", "```json\n"]),
       suffix=st.sampled_from(["", "\n```", " -- done", "\nThanks!"]))
def test_any_object_survives_wrapping(obj, prefix, suffix):
    text = prefix + json.dumps(obj) + suffix
    assert extract_json_object(text, list(obj)) == obj
