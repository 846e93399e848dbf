"""Progress bar rendering and the `fasteval datasets synth` command."""

from __future__ import annotations

import io
import json

import polars as pl

from fasteval.batch.progress import Progress
from fasteval.cli import main


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_rates_and_eta_on_a_tty():
    buf = _Tty()
    bar = Progress(total=1000, unit="rows", stream=buf, delay=0, interval=0)
    bar.start -= 10.0  # pretend 10 s have passed
    bar.update(rows=250, queries=5)
    text = buf.getvalue()
    assert " 25%" in text
    assert "250 rows 25/s" in text  # 250 rows in ~10 s
    assert "5 queries" in text
    assert "ETA 00:30" in text  # 750 rows left at 25 rows/s
    bar.close()
    assert buf.getvalue().endswith("\n")


def test_progress_silent_off_tty_quiet_or_short():
    plain = io.StringIO()
    with Progress(total=10, stream=plain, delay=0) as bar:
        bar.update(rows=10)
    assert plain.getvalue() == ""
    tty = _Tty()
    with Progress(total=10, stream=tty, delay=0, enabled=False) as bar:
        bar.update(rows=10)
    assert tty.getvalue() == ""
    tty = _Tty()
    with Progress(total=10, stream=tty, delay=60) as bar:  # job shorter than the delay
        bar.update(rows=10)
    assert tty.getvalue() == ""


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
