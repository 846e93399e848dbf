"""`fasteval trec-eval` as a command: exit statuses, one-line errors, stdin, flags."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "datasets" / "trec"


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fasteval", "trec-eval", *args], capture_output=True, text=True,
        input=stdin, timeout=300,
    )


def test_getopt_style_flags_and_measure_list() -> None:
    out = cli("-mP.5,10", "-mndcg_cut.10", str(DATA / "qrels.test"), str(DATA / "results.test"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "P_5                   \tall\t0.2667",
        "P_10                  \tall\t0.3000",
        "ndcg_cut_10           \tall\t0.3016",
    ]


def test_run_from_stdin() -> None:
    text = (DATA / "results.test").read_text()
    out = cli("-m", "map", str(DATA / "qrels.test"), "-", stdin=text)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "map                   \tall\t0.1785\n"


def test_missing_topic_without_c_exits_4(tmp_path: Path) -> None:
    run = tmp_path / "run"
    lines = [x for x in (DATA / "results.test").read_text().splitlines() if x.startswith("301")]
    run.write_text("\n".join(lines) + "\n")
    out = cli("-m", "map", str(DATA / "qrels.test"), str(run))
    assert out.returncode == 4
    assert "302" in out.stderr
    ok = cli("-c", "-m", "map", "-m", "num_q", str(DATA / "qrels.test"), str(run))
    assert ok.returncode == 0
    assert "num_q                 \tall\t3" in ok.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-x", "a", "b"], "trec-eval option"),
        (["-m", "ndgc", "q", "r"], "did you mean"),
        (["only-one-file"], "exactly two files"),
        (["-M", "zero", "q", "r"], "-M must be an integer"),
    ],
)
def test_bad_usage_is_one_line(args: list[str], needle: str) -> None:
    out = cli(*args)
    assert out.returncode == 2
    assert needle in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    out = cli(str(tmp_path / "nope.qrels"), str(DATA / "results.test"))
    assert out.returncode == 2
    assert "nope.qrels" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
