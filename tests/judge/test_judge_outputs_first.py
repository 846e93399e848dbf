"""Every output of ``fasteval judge``, and its reply cache folder, is checked before the
first request is paid for: an output folder or cache folder it cannot write ends the job
with one line and no request sent (the library's runner says so before its first request
too), and ``eval`` refuses an unwritable output before reading its inputs."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from fasteval.cli import main

from .fake_openai import Reply

pytest.importorskip("httpx")


@pytest.fixture
def unwritable(tmp_path) -> Path:
    """A folder this process cannot write: read-only by mode, or (as root, whom modes do
    not stop) a folder of /sys."""
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
        yield folder
        folder.chmod(stat.S_IRWXU)
        return
    folder = Path("/sys/kernel")
    try:
        (folder / "fasteval-probe").open("x").close()
    except OSError:
        yield folder
        return
    (folder / "fasteval-probe").unlink()
    pytest.skip("no folder this process cannot write")


def _input(tmp_path) -> Path:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"question": f"q{i}", "contexts": ["c"], "answer": "a"}) + "\n"
                           for i in range(3)))
    return src


def _ok(req, n):
    return Reply(content={"statements": ["S"], "statement_scores": [1]})


def _judge(server, src, out, *extra) -> int:
    return main(["judge", "faithfulness", str(src), "-o", str(out), "--base-url", server.url, "--model", "m",
                 "--api-key-env", "", "--no-progress", *extra])


def test_unwritable_output_folder_is_refused_before_any_request(fake_openai, tmp_path, unwritable, capsys):
    server = fake_openai(_ok)
    for out in (unwritable / "out.jsonl", unwritable / "new" / "out.parquet"):
        assert _judge(server, _input(tmp_path), out, "--no-cache") == 2
        err = capsys.readouterr().err
        assert f"output {str(out)!r} cannot be" in err and len(err.strip().splitlines()) == 1
    assert server.count == 0


def test_unwritable_cache_folder_is_refused_before_any_request(fake_openai, tmp_path, unwritable, capsys):
    server = fake_openai(_ok)
    out = tmp_path / "out.jsonl"
    assert _judge(server, _input(tmp_path), out, "--cache-dir", str(unwritable / "judge")) == 2
    err = capsys.readouterr().err
    assert "--cache-dir must be a folder the judge can write" in err and "--no-cache" in err
    assert server.count == 0 and not out.exists()
    assert _judge(server, _input(tmp_path), out, "--no-cache") == 0  # as the advice says
    assert server.count == 3


def test_checks_leave_nothing_behind(fake_openai, tmp_path):
    server = fake_openai(_ok)
    out = tmp_path / "deep" / "er" / "out.jsonl"
    cache = tmp_path / "cache"
    assert _judge(server, _input(tmp_path), out, "--cache-dir", str(cache)) == 0
    assert sorted(p.name for p in out.parent.iterdir()) == ["out.jsonl"]
    assert not [p for p in cache.rglob("*") if p.name.startswith(".")]  # no probe left


def test_runner_warns_of_an_unwritable_cache_before_its_first_request(fake_openai, unwritable, caplog):
    from fasteval.evaluators import FaithfulnessEvaluator
    from fasteval.judge import OpenAIChatClient

    seen_before: list[bool] = []

    def reply(req, n):
        seen_before.append(any("cannot be written" in r.getMessage() for r in caplog.records))
        return _ok(req, n)

    server = fake_openai(reply)
    judge = OpenAIChatClient(model="m", base_url=server.url, api_key_env=None)
    ev = FaithfulnessEvaluator(chat_generator=judge, cache_dir=str(unwritable / "judge"), progress_bar=False)
    with caplog.at_level(logging.WARNING):
        out = ev.run(questions=["q"], contexts=[["c"]], predicted_answers=["a"])
    assert out["results"][0]["statement_scores"] == [1]
    assert seen_before == [True]


def test_eval_refuses_an_unwritable_output_before_reading(tmp_path, unwritable, capsys, monkeypatch):
    import fasteval

    def refuse(*a, **k):
        raise AssertionError("an input was read")

    monkeypatch.setattr(fasteval, "read_qrels", refuse)
    out = unwritable / "res.csv"
    assert main(["eval", "datasets/trec/qrels.test", "datasets/trec/results.test", "-m", "map",
                 "-o", str(out), "--quiet"]) == 2
    assert f"output {str(out)!r} cannot be" in capsys.readouterr().err
