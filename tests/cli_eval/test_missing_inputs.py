"""A missing input file gives every command the same one-line error, naming the file:
``fasteval eval``'s (``PATH: file not found``, a dangling symbolic link with its target)."""

from __future__ import annotations

import os

import pytest

from fasteval.cli import main
from tests._data import SHIPPED_TREC


def _results(tmp_path) -> str:
    """Per-query results of two runs (fasteval eval -q) for --results."""
    run2 = tmp_path / "other.test"
    run2.write_bytes((SHIPPED_TREC / "results.test").read_bytes())
    out = tmp_path / "pq.csv"
    assert main(["eval", str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test"), str(run2),
                 "-m", "map", "-q", "-o", str(out), "--quiet"]) == 0
    return str(out)


@pytest.mark.parametrize("command", ["eval", "compare", "compare --results", "power --results"])
@pytest.mark.parametrize("dangling", [False, True])
def test_missing_input_is_one_line_naming_the_file(tmp_path, capsys, command, dangling):
    missing = tmp_path / "gone.csv"
    if dangling:
        os.symlink(tmp_path / "nowhere.csv", missing)
    qrels, run = str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test")
    argv = {
        "eval": ["eval", qrels, str(missing), "-m", "map"],
        "compare": ["compare", qrels, run, str(missing), "-m", "map"],
        "compare --results": ["compare", "--results", _results(tmp_path), str(missing)],
        "power --results": ["power", "--results", _results(tmp_path), str(missing), "--min-diff", "0.1"],
    }[command]
    capsys.readouterr()
    assert main([*argv, "--quiet"] if command == "eval" else argv) == 2
    captured = capsys.readouterr()
    reason = (f"file not found (a symbolic link to {str(tmp_path / 'nowhere.csv')!r}, which does not exist)"
              if dangling else "file not found")
    assert captured.err == f"fasteval: error: {missing}: {reason}\n"


def test_sas_missing_input_is_eval_s_message(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    missing = tmp_path / "gone.csv"
    assert main(["sas", str(missing), "--quiet"]) == 2
    assert capsys.readouterr().err == f"fasteval: error: {missing}: file not found\n"
