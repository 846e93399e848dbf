"""``fasteval judge`` end to end against a loopback server, including a killed and resumed job."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from fasteval.cli import main
from fasteval.judge import ReplyCache

from .fake_openai import Reply, row_text, tag

pytest.importorskip("httpx")

REPO = Path(__file__).resolve().parents[2]


def faithfulness_reply(req, n):
    scores = [int(c) for c in tag(req, "s", "")]
    if tag(req, "mode") == "missing":
        return Reply(content={"statements": ["S"]}, usage={"prompt_tokens": 50, "completion_tokens": 5,
                                                           "total_tokens": 55})
    return Reply(content={"statements": [f"S{i}" for i in range(len(scores))], "statement_scores": scores},
                 usage={"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110})


def args_for(server, cache, *extra):
    return ["--base-url", server.url, "--model", "judge-model", "--api-key-env", "",
            "--cache-dir", str(cache), "--no-progress", "--max-retries", "1", *extra]


def test_faithfulness_parquet(fake_openai, tmp_path, capsys):
    server = fake_openai(faithfulness_reply)
    src = tmp_path / "in.parquet"
    pl.DataFrame({
        "id": [1, 2, 3],
        "q": ["q1", "q2", "q3"],
        "ctx": [["c1"], ["c2", "c3"], []],
        "ans": ["mode=ok s=10", "mode=ok s=111", "mode=missing"],
    }).write_parquet(src)
    out = tmp_path / "out.parquet"
    rc = main(["judge", "faithfulness", str(src), "--question-col", "q", "--contexts-col", "ctx",
               "--answer-col", "ans", "-o", str(out), *args_for(server, tmp_path / "cache")])
    assert rc == 0
    df = pl.read_parquet(out)
    assert df.columns == ["id", "q", "ctx", "ans", "statements", "statement_scores", "score", "status",
                          "error", "cached"]
    assert df["id"].to_list() == [1, 2, 3]
    assert df["statement_scores"].to_list() == [[1, 0], [1, 1, 1], []]
    assert df["score"].to_list()[:2] == [0.5, 1.0] and math.isnan(df["score"][2])
    assert df["status"].to_list() == ["evaluated", "evaluated", "error"]
    assert df["error"][0] is None and "Missing expected keys in JSON" in df["error"][2]
    err = capsys.readouterr().err
    assert "3 rows, 2 evaluated, 1 failed; mean score 0.7500" in err
    assert "requests 4" in err and "cache hits 0" in err
    assert "tokens: prompt 300, completion 30" in err  # 2 x 100 + 2 x 50 (missing row asked twice)
    # rerun: everything cached but the failed row
    assert main(["judge", "faithfulness", str(src), "--question-col", "q", "--contexts-col", "ctx",
                 "--answer-col", "ans", "-o", str(out), *args_for(server, tmp_path / "cache")]) == 0
    assert server.count == 6
    assert pl.read_parquet(out)["cached"].to_list() == [True, True, False]


def test_context_relevance_jsonl_with_json_string_contexts(fake_openai, tmp_path, capsys):
    def reply(req, n):
        text = row_text(req)
        return Reply(content={"relevant_statements": ["yes"] if "useful" in text else []})

    server = fake_openai(reply)
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in [
        {"question": "a", "contexts": json.dumps(["useful text", "noise"])},
        {"question": "b", "contexts": json.dumps(["noise"])},
    ]) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["judge", "context-relevance", str(src), "-o", str(out), *args_for(server, tmp_path / "c")]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["score"] for r in rows] == [1.0, 0.0]
    assert rows[0]["relevant_statements"] == ["yes"]
    assert sorted(row_text(r) for r in server.requests) == [
        '{"questions": a, "contexts": [\'useful text\', \'noise\']}\nOutputs:',
        '{"questions": b, "contexts": [\'noise\']}\nOutputs:',
    ]


def test_user_errors_exit_2(tmp_path, capsys):
    src = tmp_path / "in.parquet"
    pl.DataFrame({"question": ["q"], "contexts": [["c"]]}).write_parquet(src)
    rc = main(["judge", "faithfulness", str(src), "-o", str(tmp_path / "o.parquet"),
               "--base-url", "http://127.0.0.1:9/v1", "--no-progress"])
    assert rc == 2
    assert "column 'answer'" in capsys.readouterr().err
    rc = main(["judge", "context-relevance", str(src), "-o", str(tmp_path / "o.csv"),
               "--base-url", "http://127.0.0.1:9/v1", "--no-progress", "--no-cache"])
    assert rc == 2  # checked before any request (nothing listens on port 9)
    assert "-o/--output must be a .parquet, .jsonl or .ndjson path" in capsys.readouterr().err
    rc = main(["judge", "context-relevance", str(tmp_path / "missing.parquet"), "-o", str(tmp_path / "o.parquet"),
               "--no-progress"])
    assert rc == 2 and "missing.parquet" in capsys.readouterr().err


@pytest.mark.parametrize("name, text, where", [
    # text files: the file's 1-based line (header counted), as the run and qrels readers name it
    ("in.csv", 'question,contexts,answer\n"two\nlines",c,a\n,c,b\n', "line 4"),
    ("in.jsonl", '{"question": "q", "contexts": ["c"], "answer": "a"}\n\n'
                 '{"question": null, "contexts": ["c"], "answer": "b"}\n', "line 3"),
    ("in.json", '[{"question": "q", "contexts": ["c"], "answer": "a"}, '
                '{"question": null, "contexts": ["c"], "answer": "b"}]', "row 1"),
])
def test_a_row_error_names_the_line_of_a_text_file(tmp_path, capsys, name, text, where):
    src = tmp_path / name
    src.write_text(text)
    rc = main(["judge", "faithfulness", str(src), "-o", str(tmp_path / "o.parquet"),
               "--base-url", "http://127.0.0.1:9/v1", "--no-progress", "--no-cache"])
    assert rc == 2  # checked before any request (nothing listens on port 9)
    assert capsys.readouterr().err == (f"fasteval: error: {src}, {where}, column 'question': missing value "
                                       "(null); every row needs one\n")


def test_killed_job_resumes_without_repeating_cached_rows(fake_openai, tmp_path):
    def slow_reply(req, n):
        reply = faithfulness_reply(req, n)
        reply.delay = 0.05
        return reply

    server = fake_openai(slow_reply)
    n_rows = 60
    src = tmp_path / "in.parquet"
    pl.DataFrame({
        "question": [f"q{i}" for i in range(n_rows)],
        "contexts": [[f"c{i}"] for i in range(n_rows)],
        "answer": [f"row{i} s={i % 2}1" for i in range(n_rows)],
    }).write_parquet(src)
    cache = tmp_path / "cache"
    out = tmp_path / "out.parquet"
    cmd = [sys.executable, "-m", "fasteval", "judge", "faithfulness", str(src), "-o", str(out),
           "--max-concurrency", "2", *args_for(server, cache)]
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while server.count < 15 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stderr.close()
    assert not out.exists()  # killed before writing
    first_run = server.count
    cached = len(ReplyCache(cache))
    assert 10 <= cached <= first_run < n_rows
    requested_before = {row_text(r) for r in server.requests}

    assert main(["judge", "faithfulness", str(src), "-o", str(out), "--max-concurrency", "8",
                 *args_for(server, cache)]) == 0
    second_run = server.count - first_run
    # rows whose reply was stored are never asked again; rows in flight at the kill are
    assert second_run == n_rows - cached
    resent = requested_before & {row_text(r) for r in server.requests[first_run:]}
    assert len(resent) == first_run - cached
    df = pl.read_parquet(out)
    assert df["cached"].sum() == cached
    assert df["score"].to_list() == [0.5 if i % 2 == 0 else 1.0 for i in range(n_rows)]


def test_replies_kept_as_written_fit_the_output_columns(fake_openai, tmp_path, capsys):
    """The evaluators keep a reply as the model wrote it and score it as Haystack does
    (fractional or boolean scores, a lone string, non-string statements): the table holds
    them (scores as floats, statements as text) instead of failing after every row was judged."""
    replies = {
        "a0": {"statements": ["s1", "s2"], "statement_scores": [0.5, 1]},
        "a1": {"statements": ["s1", "s2"], "statement_scores": [True, False]},
        "a2": {"statements": "one statement", "statement_scores": [1]},
        "a3": {"statements": [1, {"k": "v"}], "statement_scores": [1, 0]},
    }
    server = fake_openai(lambda req, n: Reply(content=replies[row_text(req).split('"predicted_answers": ')[1][:2]]))
    src = tmp_path / "in.parquet"
    pl.DataFrame({"question": ["q"] * 4, "contexts": [["c"]] * 4, "answer": list(replies)}).write_parquet(src)
    for out in (tmp_path / "out.parquet", tmp_path / "out.jsonl"):
        assert main(["judge", "faithfulness", str(src), "-o", str(out), *args_for(server, tmp_path / "cache")]) == 0
        df = pl.read_parquet(out) if out.suffix == ".parquet" else pl.read_ndjson(out)
        assert df["statement_scores"].to_list() == [[0.5, 1.0], [1.0, 0.0], [1.0], [1.0, 0.0]]
        assert df["statements"].to_list() == [["s1", "s2"], ["s1", "s2"], ["one statement"], ["1", '{"k": "v"}']]
        assert df["score"].to_list() == [0.75, 0.5, 1.0, 0.5]
    relevance = {"a0": {"relevant_statements": "a sentence"}, "a1": {"relevant_statements": [2]},
                 "a2": {"relevant_statements": []}, "a3": {"relevant_statements": ["ok"]}}
    server = fake_openai(lambda req, n: Reply(content=relevance[
        "a" + row_text(req).split('"questions": a')[1][:1]]))
    pl.DataFrame({"question": list(relevance), "contexts": [["c"]] * 4}).write_parquet(src)
    out = tmp_path / "rel.parquet"
    assert main(["judge", "context-relevance", str(src), "-o", str(out), *args_for(server, tmp_path / "c2")]) == 0
    df = pl.read_parquet(out)
    assert df["relevant_statements"].to_list() == [["a sentence"], ["2"], [], ["ok"]]
    assert df["score"].to_list() == [1.0, 1.0, 0.0, 1.0]
