"""trec_eval's own test cases: `fasteval trec-eval` must print exactly the expected output."""

from __future__ import annotations

import io
import json

import pytest

from fasteval.cli.trec_eval_cmd import parse_args, run_trec_eval
from tests._data import read_text, trec_eval_file

# tests/data/conformance/trec_eval (vendored; a missing file fails, it is never skipped)
CASES = json.loads(trec_eval_file("cases.json").read_text())


def _run(flags: list[str], qrels: str, run: str, compat: str) -> str:
    args = [*flags, "--compat", compat, str(trec_eval_file(qrels)), str(trec_eval_file(run))]
    buf = io.StringIO()
    status = run_trec_eval(parse_args(args), out=buf)
    assert status == 0
    return buf.getvalue()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case: dict) -> None:
    compat = "9" if case["version"].startswith("9") else "10"
    expected_path = trec_eval_file(case["expected"])
    flags = list(case["flags"])
    if "-Z" in flags:
        i = flags.index("-Z")
        flags[i + 1] = str(trec_eval_file(flags[i + 1]))
    got = _run(flags, case["qrels"], case["run"], compat)
    want = read_text(expected_path)
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


def test_every_case_is_collected() -> None:
    # 15 commands of trec_eval 10.0's quicktest (with the comment variants), 11 of 9.0.8's
    assert len(CASES) == 26
    assert sum(c["version"] == "10.0" for c in CASES) == 15
