"""``fasteval judge``: a reply holding a lone surrogate (a cut emoji's JSON ``\\ud83d``
escape) is written to the output as U+FFFD instead of the command failing with a traceback
when it builds the output table, and the corrective retry that quotes such a reply is sent
(as U+FFFD) instead of failing the row with UnicodeEncodeError."""

from __future__ import annotations

import json

import polars as pl
import pytest

from fasteval.cli import main

from .fake_openai import Reply, row_text

pytest.importorskip("httpx")


def _reply(req, n):
    if "q2" in row_text(req):
        content = "no JSON here \\ud83d"  # unusable, and so is its correction
    else:
        content = '{"statements": ["cut \\ud83d", "pair \\ud83d\\ude00"], "statement_scores": [1, 0]}'
    body = {"choices": [{"message": {"content": content}, "finish_reason": "stop"}]}
    return Reply(raw=json.dumps(body).replace("\\\\u", "\\u"))


def test_lone_surrogates_in_replies_reach_the_output(fake_openai, tmp_path, capsys):
    server = fake_openai(_reply)
    src, out = tmp_path / "in.jsonl", tmp_path / "out.parquet"
    src.write_text("".join(json.dumps({"question": q, "contexts": ["c"], "answer": "a"}) + "\n"
                           for q in ("q1", "q2")))
    rc = main(["judge", "faithfulness", str(src), "-o", str(out), "--base-url", server.url,
               "--api-key-env", "", "--no-progress", "--no-cache"])
    assert rc == 0, capsys.readouterr().err
    table = pl.read_parquet(out)
    assert table["statements"].to_list() == [["cut \ufffd", "pair \U0001f600"], []]
    assert table["score"].to_list()[0] == 0.5 and table["status"].to_list() == ["evaluated", "error"]
    quoted = "reply contains no JSON object: 'no JSON here \\ud83d'"  # repr() escapes it
    assert table["error"].to_list() == [None, f"unusable reply: {quoted}; after the corrective retry: {quoted}"]
    assert server.count == 3
    [correction] = [r for r in server.requests if len(r["messages"]) > 1]
    assert correction["messages"][1] == {"role": "assistant", "content": "no JSON here \ufffd"}


def test_a_lone_surrogate_in_an_input_is_sent_as_a_replacement_character(fake_openai):
    from fasteval.evaluators.llm import ContextRelevanceEvaluator
    from fasteval.judge import OpenAIChatClient

    server = fake_openai(lambda req, n: Reply(content={"relevant_statements": ["c"]}))
    client = OpenAIChatClient(model="m", base_url=server.url, api_key_env=None, max_retries=0)
    out = ContextRelevanceEvaluator(chat_generator=client, progress_bar=False).run(
        questions=["why \ud83d?"], contexts=[["c"]])
    assert out["individual_scores"] == [1]
    assert row_text(server.requests[0]).startswith('{"questions": why \ufffd?, ')
