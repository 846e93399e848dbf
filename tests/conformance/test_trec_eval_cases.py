"""trec_eval's own test cases: `fasteval trec-eval` must print exactly the expected output."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from fasteval.cli.trec_eval_cmd import parse_args, run_trec_eval

CONF = Path(__file__).resolve().parents[2].parent / "shared" / "conformance" / "trec_eval"
if not CONF.exists():  # CI lays shared/ beside the clone; a local checkout may differ
    CONF = Path("/work/shared/conformance/trec_eval")

CASES = json.loads((CONF / "cases.json").read_text()) if CONF.exists() else []


def _run(flags: list[str], qrels: str, run: str, compat: str) -> str:
    args = [*flags, "--compat", compat, str(CONF / qrels), str(CONF / run)]
    buf = io.StringIO()
    status = run_trec_eval(parse_args(args), out=buf)
    assert status == 0
    return buf.getvalue()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case: dict) -> None:
    compat = "9" if case["version"].startswith("9") else "10"
    expected_path = CONF / case["expected"]
    flags = list(case["flags"])
    if "-Z" in flags:
        i = flags.index("-Z")
        flags[i + 1] = str(CONF / flags[i + 1])
    got = _run(flags, case["qrels"], case["run"], compat)
    want = expected_path.read_text()
    if got != want:
        got_lines, want_lines = got.splitlines(), want.splitlines()
        diff = [
            f"line {i + 1}: got {g!r} want {w!r}"
            for i, (g, w) in enumerate(zip(got_lines, want_lines, strict=False))
            if g != w
        ][:10]
        pytest.fail(
            f"{len(got_lines)} lines vs {len(want_lines)} expected; first differences:\n"
            + "\n".join(diff)
        )
