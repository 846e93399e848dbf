"""The `fasteval datasets synth` command (progress itself: tests/core/test_progress.py)."""

from __future__ import annotations

import json

import polars as pl

from fasteval.cli import main


def test_datasets_synth_cli_deterministic(tmp_path, capsys):
    args = ["datasets", "synth", "--queries", "50", "--depth", "8", "--runs", "2", "--seed", "4", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "a"), "--log-json"]) == 0
    log = json.loads(capsys.readouterr().out.strip())
    assert log["queries"] == 50 and sorted(log["files"]) == ["qrels", "run_0", "run_1"]
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    for rel in ("qrels.parquet", "runs/run_0.parquet", "runs/run_1.parquet"):
        a, b = pl.read_parquet(tmp_path / "a" / rel), pl.read_parquet(tmp_path / "b" / rel)
        assert a.equals(b) and a.height > 0
    assert main([*args[:-1], "--int-ids", "--out", str(tmp_path / "c")]) == 0
    assert pl.read_parquet(tmp_path / "c" / "qrels.parquet").schema["doc_id"] == pl.Int64


def test_datasets_synth_cli_rejects_bad_sizes(tmp_path, capsys):
    assert main(["datasets", "synth", "--queries", "0", "--out", str(tmp_path)]) == 2
    assert "queries must be a positive integer" in capsys.readouterr().err
