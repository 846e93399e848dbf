"""Real qrels/run pairs (tests/data/realruns): `fasteval trec-eval` must print the same
stdout bytes and exit with the same status as trec_eval 10.0 did on them.

The expected outputs are trec_eval's own (expected/index.json names the flags, the exit code
and trec_eval's first stderr line). Most cases run in-process (``run_trec_eval`` with a
buffer: the data is read and scored exactly as by the command); two run the real command in
a subprocess to check the bytes on the process's stdout, its exit status and its stderr.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys

import pytest

from fasteval.cli.trec_eval_cmd import parse_args, run_trec_eval
from tests._data import REALRUNS, data_file, read_bytes

INDEX = json.loads((REALRUNS / "expected" / "index.json").read_text())
OUTPUTS = INDEX["outputs"]
IDS = [f"{o['pair']}-{'c' if '-c' in o['flags'] else 'plain'}"
       + ("" if "all_trec" in o["flags"] else "-" + o["flags"][-1]) for o in OUTPUTS]
#: flag sets run on one pair only: trec_eval's name.param=value syntax on a measure that
#: takes a parameter (rbp_resid.p=0.5 prints rbp_resid_p=0.5, computed at p = 0.5)
ONE_PAIR = {"e7e693e7": "cacm-bm25"}


def _argv(case: dict) -> list[str]:
    assert case["fasteval_args"][0] == "trec-eval"
    assert case["fasteval_args"][1:] == case["flags"]  # the same flags as trec_eval got
    qrels = data_file(REALRUNS, case["qrels"])  # stored gzipped; the readers look through it
    run = data_file(REALRUNS, case["run"])
    return [*case["flags"], str(qrels), str(run)]


def _expected(case: dict) -> bytes:
    want = read_bytes(REALRUNS / "expected" / case["stdout"])
    assert len(want) == case["stdout_bytes"]
    assert hashlib.sha256(want).hexdigest() == case["stdout_sha256"]
    return want


def test_index_covers_every_pair_and_flag_set() -> None:
    pairs = {p["id"] for p in json.loads((REALRUNS / "MANIFEST.json").read_text())["pairs"]}
    assert pairs == {"cacm-bm25", "cedr-wt12", "cast2021-bm25"}
    assert {(o["pair"], o["flag_set"]) for o in OUTPUTS} == {
        (p, f) for p in pairs for f in INDEX["flag_sets"] if ONE_PAIR.get(f, p) == p
    }
    assert all(o["version"] == "10.0" for o in OUTPUTS)


@pytest.mark.parametrize("case", OUTPUTS, ids=IDS)
def test_in_process_bytes_and_status(case: dict, capsys: pytest.CaptureFixture[str]) -> None:
    want = _expected(case)
    buf = io.StringIO()
    status = run_trec_eval(parse_args(_argv(case)), out=buf)
    got = buf.getvalue().encode("utf-8")
    err = capsys.readouterr().err
    assert status == case["exit_code"], err
    if case["stderr_first_line"]:
        assert err.splitlines()[0] == case["stderr_first_line"]
    if got != want:
        g, w = got.decode().splitlines(), want.decode().splitlines()
        diff = [f"line {i + 1}: got {a!r} want {b!r}"
                for i, (a, b) in enumerate(zip(g, w, strict=False)) if a != b][:10]
        pytest.fail(f"{len(g)} lines vs {len(w)} expected; first differences:\n" + "\n".join(diff))


SUBPROCESS = [
    # trec_eval 10.0 stops at qrels topic 1 (not in the run) without -c: status 4, no stdout
    ("cedr-wt12", "b02d2a94"),
    # a clean run: the bytes as the process writes them
    ("cacm-bm25", "755b38be"),
]


@pytest.mark.parametrize(("pair", "flag_set"), SUBPROCESS)
def test_command_bytes_status_and_stderr(pair: str, flag_set: str) -> None:
    (case,) = [o for o in OUTPUTS if o["pair"] == pair and o["flag_set"] == flag_set]
    want = _expected(case)
    proc = subprocess.run(
        [sys.executable, "-m", "fasteval", "trec-eval", *_argv(case)],
        capture_output=True, timeout=300,
    )
    assert proc.returncode == case["exit_code"], proc.stderr.decode()
    assert proc.stdout == want
    if case["stderr_first_line"]:
        assert proc.stderr.decode().splitlines() == [case["stderr_first_line"]]
    else:
        assert proc.stderr == b""
