"""A synchronous chat generator that hangs past the job's deadline: the evaluator returns at
the deadline and the process exits then, without waiting for the hung calls."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_process_exits_at_the_deadline_not_after_the_hung_calls():
    code = textwrap.dedent("""
        import time
        from fasteval.evaluators.llm import FaithfulnessEvaluator

        class Hung:
            model = "hung"
            def run(self, messages):
                time.sleep(45)

        ev = FaithfulnessEvaluator(chat_generator=Hung(), progress_bar=False,
                                   raise_on_failure=False, deadline=1, max_concurrency=2)
        out = ev.run(questions=["q"] * 3, contexts=[["c"]] * 3, predicted_answers=["a"] * 3)
        print(out["meta"][0]["error"])
    """)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=100,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "the job's deadline (1 s) passed before this row was judged\n"
    assert time.monotonic() - t0 < 30
