"""A SIGTERM whose ``SystemExit`` is lost (raised inside compiled code that clears it) or
arrives between the making of an output and the block that would drop it: the job still
stops, and no temporary file or folder of its outputs is left."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fasteval import _stop
from fasteval.datasets import SynthSpec, write_synth
from fasteval.io import atomic

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def stopped(monkeypatch):
    """The process as after a SIGTERM whose exception was lost: the stop recorded only."""
    monkeypatch.setattr(_stop, "_signal", signal.SIGTERM)


def test_synth_stops_at_its_next_block(tmp_path, stopped):
    with pytest.raises(SystemExit) as exc:
        write_synth(SynthSpec(queries=50, depth=5, runs=2, seed=1), tmp_path / "new" / "out")
    assert exc.value.code == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


def test_a_batch_job_stops_at_its_next_chunk(tmp_path, monkeypatch):
    from fasteval.batch.api import evaluate_files

    data = tmp_path / "data"
    write_synth(SynthSpec(queries=50, depth=5, runs=1, seed=1), data)
    monkeypatch.setattr(_stop, "_signal", signal.SIGTERM)
    with pytest.raises(SystemExit):
        evaluate_files(data / "qrels.parquet", [data / "runs" / "run_0.parquet"], ["map"],
                       out=tmp_path / "out" / "q.parquet", max_rows_per_chunk=10)
    assert not (tmp_path / "out").exists()


def test_an_output_interrupted_while_it_starts_leaves_no_folder(tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise SystemExit(143)

    monkeypatch.setattr(atomic, "remove_stale", interrupted)  # after the folders, before the file
    with pytest.raises(SystemExit):
        atomic.AtomicOutput(tmp_path / "a" / "b" / "res.csv")
    assert list(tmp_path.iterdir()) == [] and not atomic._OPEN


def test_the_command_drops_outputs_whose_cleanup_did_not_run(tmp_path):
    """An output made and never committed or dropped (its ``with`` block never entered)
    is dropped as the command ends, stopped or not."""
    code = (
        "import sys, fasteval.cli as c\n"
        "from fasteval.io.atomic import AtomicOutput\n"
        "def main(argv=None):\n"
        f"    AtomicOutput({str(tmp_path / 'new' / 'res.parquet')!r})\n"
        "    raise SystemExit(143)\n"
        "c.main = main\n"
        "c.console_main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=120)
    assert proc.returncode == 143
    assert list(tmp_path.iterdir()) == []
