"""A reply that misses an expected key fails with Haystack's words, so that a Haystack
user's test of that error (``pytest.raises(ValueError, match="Missing expected keys")``)
passes against fasteval's evaluators as it does against Haystack's."""

from __future__ import annotations

import re

import pytest

from fasteval.evaluators import FaithfulnessEvaluator
from fasteval.judge.errors import ReplyParseError
from fasteval.judge.parsing import make_parser

from .test_judge_evaluators import faithfulness_inputs, scripted_haystack_generator


def test_missing_key_raises_haystacks_message():
    cls = scripted_haystack_generator()
    from haystack.components.evaluators import FaithfulnessEvaluator as HaystackFaithfulness

    inputs = faithfulness_inputs([("missing", "1")])
    with pytest.raises(ValueError) as theirs:
        HaystackFaithfulness(chat_generator=cls(), progress_bar=False).run(**inputs)
    if "Missing expected keys" not in str(theirs.value):  # (the wording of haystack-ai 3.4)
        pytest.skip(f"this haystack-ai words a missing key otherwise: {theirs.value}")
    with pytest.raises(ValueError, match="Missing expected keys") as ours:
        FaithfulnessEvaluator(chat_generator=cls(), progress_bar=False).run(**inputs)
    assert re.search(re.escape(str(theirs.value)), str(ours.value))  # Haystack's whole sentence


def test_parser_words_missing_keys_and_non_objects_as_haystack_does():
    haystack = pytest.importorskip("haystack")
    misc = pytest.importorskip("haystack.utils.misc")
    _parse_dict_from_json = getattr(misc, "_parse_dict_from_json", None)
    if _parse_dict_from_json is None:
        pytest.skip("this haystack-ai has no _parse_dict_from_json")

    parse = make_parser(["statements", "statement_scores"])
    for reply in ('{"statements": ["s"]}', "[1, 0]"):
        with pytest.raises(ValueError) as theirs:
            _parse_dict_from_json(reply, expected_keys=["statements", "statement_scores"])
        with pytest.raises(ReplyParseError) as ours:
            parse(reply)
        assert str(ours.value).startswith(str(theirs.value)), (haystack.__version__, reply)
