"""A `fasteval eval` job killed halfway leaves no output (and no corrupt one); a rerun succeeds
and removes what a hard kill left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from fasteval import evaluate
from fasteval.datasets import SynthSpec, write_synth

ROOT = Path(__file__).resolve().parents[2]
MEASURES = ["ndcg@10", "map", "P@5"]


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    d = tmp_path_factory.mktemp("killbench")
    write_synth(SynthSpec(queries=2500, depth=30, runs=4, seed=1, judged=10), d)
    return d


def _cmd(d: Path, out: Path, chunk: int) -> list[str]:
    return [sys.executable, "-m", "fasteval", "eval", str(d / "qrels.parquet"), str(d / "runs"),
            *sum((["-m", m] for m in MEASURES), []), "-q", "-o", str(out), "--aggregate-out",
            str(out.with_name("agg.parquet")), "--max-rows-per-chunk", str(chunk), "--quiet"]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killed_job_leaves_no_output(tmp_path, bench, sig):
    out = tmp_path / "per_query.parquet"
    proc = subprocess.Popen(_cmd(bench, out, 300), cwd=ROOT, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # wait until results are being written (the hidden temp file has data), then kill
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        tmps = list(tmp_path.glob(".per_query.parquet.*.tmp"))
        if tmps and any(t.stat().st_size > 0 for t in tmps if t.exists()):
            break
        time.sleep(0.02)
    if proc.poll() is not None:
        pytest.fail(f"job ended before it could be killed: {proc.stderr.read().decode()[-500:]}")
    proc.send_signal(sig)
    proc.wait(timeout=60)
    assert proc.returncode != 0
    assert not out.exists()
    assert not (tmp_path / "agg.parquet").exists()
    leftovers = [p.name for p in tmp_path.iterdir()]
    if sig == signal.SIGTERM:  # cleaned up on the way out
        assert leftovers == []
    else:  # a hard kill may leave hidden temp files, never a file at the destination
        assert all(n.startswith(".per_query.parquet.") and n.endswith(".tmp") for n in leftovers)
    # rerun: succeeds and is complete
    done = subprocess.run(_cmd(bench, out, 100_000), cwd=ROOT, env=_env(), capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-1000:]
    # the killed job's temporary files (its process is gone) were removed by the rerun
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agg.parquet", "per_query.parquet"]
    got = pl.read_parquet(out)
    runs = {p.stem: pl.read_parquet(p) for p in sorted((bench / "runs").glob("*.parquet"))}
    exp = evaluate(pl.read_parquet(bench / "qrels.parquet"), runs, MEASURES)
    assert sorted(got.rows()) == sorted(exp.select(got.columns).rows())


TREC = ROOT / "datasets" / "trec"


@pytest.mark.parametrize("command", [
    ["fuse", "{a}", "{b}"],
    ["compare", "{q}", "{a}", "{b}", "-m", "map"],
    ["eval", "{q}", "{a}", "-m", "map", "-q"],
])
def test_sigterm_while_an_output_is_held_leaves_no_temporary_file(tmp_path, command):
    """Every command unwinds on SIGTERM: the output's temporary file is removed. The output
    is a FIFO nobody reads, so the job is held after writing its temporary copy, and is
    stopped there (or earlier, which must leave nothing either)."""
    fifo, tmp = tmp_path / "out.txt", tmp_path / "tmp"
    files = {"q": tmp_path / "qrels.txt", "a": tmp_path / "a.txt", "b": tmp_path / "b.txt"}
    files["q"].write_bytes((TREC / "qrels.test").read_bytes())
    for name in "ab":
        files[name].write_bytes((TREC / "results.test").read_bytes())
    command = [part.format(**files) for part in command]
    os.mkfifo(fifo)
    tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "fasteval", *command, "-o", str(fifo)], cwd=ROOT,
                            env={**_env(), "TMPDIR": str(tmp)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not list(tmp.glob("*.tmp")):
        time.sleep(0.02)
    assert proc.poll() is None, proc.stderr.read().decode()[-500:]
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert list(tmp.iterdir()) == []
