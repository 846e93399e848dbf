"""Text holding a lone surrogate (what a JSON ``\\ud83d`` escape of a cut emoji decodes to),
in a row's inputs or in a reply, is judged and cached like any other text."""

from __future__ import annotations

from fasteval.evaluators.llm import FaithfulnessEvaluator
from fasteval.judge.cache import ReplyCache


class Judge:
    model = "m"

    def __init__(self) -> None:
        self.calls = 0

    def run(self, messages):
        self.calls += 1
        return '{"statements": ["cut \\ud83d", "b"], "statement_scores": [1, 0]}'


def test_surrogates_in_inputs_and_replies_are_cached(tmp_path):
    judge = Judge()
    ev = FaithfulnessEvaluator(chat_generator=judge, progress_bar=False, cache_dir=tmp_path)
    rows = {"questions": ["q \ud83d", "q \ud83e"], "contexts": [["c"]] * 2, "predicted_answers": ["a"] * 2}
    first = ev.run(**rows)
    assert judge.calls == 2
    assert first["individual_scores"] == [0.5, 0.5]
    assert first["results"][0]["statements"] == ["cut \ud83d", "b"]
    assert len(ReplyCache(tmp_path)) == 2
    again = ev.run(**rows)
    assert judge.calls == 2
    assert [m["cached"] for m in again["meta"]] == [True, True]
    assert again["results"][1]["statements"] == ["cut \ud83d", "b"]


def test_a_key_without_surrogates_is_unchanged():
    # the UTF-8 bytes of the canonical JSON, as entries written before are keyed
    import hashlib

    messages = [{"role": "user", "content": "caf\u00e9"}]
    blob = '{"messages":[{"content":"caf\u00e9","role":"user"}],"ns":{"model":"m"},"v":1}'
    assert ReplyCache.key({"model": "m"}, messages) == hashlib.sha256(blob.encode("utf-8")).hexdigest()
