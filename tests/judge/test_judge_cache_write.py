"""A reply cache that cannot be written (a full disk, a folder that is a file) costs the
cache, never the judgements paid for: the job finishes and says so once."""

from __future__ import annotations

import logging

from fasteval.evaluators.llm import FaithfulnessEvaluator


class Judge:
    model = "m"

    def __init__(self) -> None:
        self.calls = 0

    def run(self, messages):
        self.calls += 1
        return '{"statements": ["a", "b"], "statement_scores": [1, 0]}'


def test_an_unwritable_cache_keeps_the_judgements_and_warns_once(tmp_path, caplog):
    (tmp_path / "file").write_text("not a folder\n")
    judge = Judge()
    ev = FaithfulnessEvaluator(chat_generator=judge, progress_bar=False,
                               cache_dir=tmp_path / "file" / "cache")
    with caplog.at_level(logging.WARNING, logger="fasteval.judge.runner"):
        out = ev.run(questions=["q1", "q2", "q3"], contexts=[["c"]] * 3, predicted_answers=["a"] * 3)
    assert out["individual_scores"] == [0.5, 0.5, 0.5]
    assert [m["error"] for m in out["meta"]] == [None] * 3
    assert judge.calls == 3
    warnings = [r.getMessage() for r in caplog.records if r.name == "fasteval.judge.runner"]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"the reply cache in {tmp_path / 'file' / 'cache'} cannot be written (")
    assert warnings[0].endswith("): replies are not cached")
    assert (tmp_path / "file").read_text() == "not a folder\n"
