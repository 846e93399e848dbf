"""Rows with equal prompts in one job, with the reply cache on: one request, the later rows
take the first row's accepted reply; a failed first row leaves them to try themselves.
Without a cache every row is its own request (a sampled reply per row)."""

from __future__ import annotations

import json
import threading
import time

from fasteval.evaluators.llm import ContextRelevanceEvaluator


class Judge:
    model = "m"

    def __init__(self, replies=None) -> None:
        self.prompts: list[str] = []
        self.replies = list(replies or [])
        self.lock = threading.Lock()

    def run(self, messages):
        with self.lock:
            self.prompts.append(messages[0]["content"])
            reply = self.replies.pop(0) if self.replies else None
        time.sleep(0.1)  # the rows overlap
        if reply is not None:
            return reply
        question = messages[0]["content"].rsplit('"questions": ', 1)[1].split(",", 1)[0]
        return json.dumps({"relevant_statements": [question]})


def test_equal_prompts_send_one_request(tmp_path):
    judge = Judge()
    ev = ContextRelevanceEvaluator(chat_generator=judge, progress_bar=False, cache_dir=tmp_path,
                                   max_concurrency=8)
    questions = ["q1", "q2", "q1", "q1", "q3", "q2"]
    out = ev.run(questions=questions, contexts=[["c"]] * 6)
    assert len(judge.prompts) == 3
    assert len(set(judge.prompts)) == 3
    assert [r["relevant_statements"] for r in out["results"]] == [[q] for q in questions]
    assert [m["cached"] for m in out["meta"]] == [False, False, True, True, False, True]
    assert [m["requests"] for m in out["meta"]] == [1, 1, 0, 0, 1, 0]
    assert ev.last_report.summary()["requests"] == 3


def test_a_failed_first_row_leaves_the_next_to_try_itself(tmp_path):
    judge = Judge(["no json", "still none"])  # the first row's reply and its correction
    ev = ContextRelevanceEvaluator(chat_generator=judge, progress_bar=False, cache_dir=tmp_path,
                                   raise_on_failure=False)
    out = ev.run(questions=["q1", "q1"], contexts=[["c"], ["c"]])
    assert len(judge.prompts) == 3
    assert out["results"][0]["status"] == "error" and out["meta"][0]["requests"] == 2
    assert out["meta"][0]["error"].startswith("unusable reply: ")
    assert out["results"][1]["relevant_statements"] == ["q1"]
    assert out["meta"][1]["cached"] is False and out["meta"][1]["requests"] == 1


def test_without_a_cache_every_row_is_a_request():
    judge = Judge()
    ev = ContextRelevanceEvaluator(chat_generator=judge, progress_bar=False)
    out = ev.run(questions=["q1"] * 4, contexts=[["c"]] * 4)
    assert len(judge.prompts) == 4
    assert [m["cached"] for m in out["meta"]] == [False] * 4
