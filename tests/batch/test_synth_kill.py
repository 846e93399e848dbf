"""``fasteval datasets synth`` stopped by SIGTERM: no temporary file, no half-made dataset,
no folder it made left behind; what the output folder held before is kept as it was."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from fasteval.datasets import SynthSpec, write_synth

ROOT = Path(__file__).resolve().parents[2]


def _stop_while_writing(out: Path) -> subprocess.Popen:
    """Start a large synth job into ``out``, wait until it writes its run files, SIGTERM it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "fasteval", "datasets", "synth", "--queries", "3000000",
         "--depth", "100", "--runs", "3", "--out", str(out), "--quiet"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and not list(out.glob("runs/.run_2*.tmp")):
            time.sleep(0.02)
        assert proc.poll() is None, proc.stderr.read().decode()[-500:]
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:  # a job that did not stop is not left running (it would write for minutes)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM
    return proc


def _tree(folder: Path) -> dict[str, bytes | None]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))}


def test_a_stopped_job_into_a_new_folder_leaves_nothing(tmp_path):
    out = tmp_path / "new" / "bench"
    _stop_while_writing(out)
    assert list(tmp_path.iterdir()) == []


def test_a_stopped_job_keeps_the_earlier_dataset_and_the_users_files(tmp_path):
    out = tmp_path / "bench"
    write_synth(SynthSpec(queries=20, depth=5, runs=3, seed=4), out)
    (out / "notes.txt").write_text("mine\n")
    (out / "empty").mkdir()
    before = _tree(out)
    assert {"qrels.parquet", "runs/run_0.parquet", "runs/run_2.parquet", "notes.txt", "empty"} <= set(before)
    _stop_while_writing(out)
    assert _tree(out) == before
