"""Run a command in a child process, watching its wall time and resident memory.

The child is killed when it passes ``rss_cap`` bytes or ``timeout`` seconds, so a peer
that cannot fit a 1M-query job is recorded as such instead of taking the machine down.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "_runner.py"


def run_measured(cmd: list[str], *, timeout: float = 600, rss_cap: int | None = None,
                 env: dict | None = None, poll: float = 0.05) -> dict:
    """Run ``cmd``; return ``{"rc", "wall", "max_rss", "killed", "stdout", "stderr", "json"}``."""
    import psutil

    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    ps = psutil.Process(proc.pid)
    max_rss = 0
    killed = None
    while proc.poll() is None:
        try:
            rss = sum(p.memory_info().rss for p in [ps, *ps.children(recursive=True)])
        except psutil.Error:
            rss = 0
        max_rss = max(max_rss, rss)
        if rss_cap is not None and rss > rss_cap:
            killed = f"killed above {rss_cap / 2**30:.1f} GiB RSS"
        elif time.perf_counter() - t0 > timeout:
            killed = f"killed after {timeout:.0f} s"
        if killed:
            proc.kill()
            break
        time.sleep(poll)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    parsed = None
    for line in reversed(out.strip().splitlines()):
        try:
            parsed = json.loads(line)
            break
        except json.JSONDecodeError:
            continue
    if parsed and "peak_rss" in parsed:
        max_rss = max(max_rss, parsed["peak_rss"])
    return {"rc": proc.returncode, "wall": wall, "max_rss": max_rss, "killed": killed,
            "stdout": out, "stderr": err, "json": parsed}


def runner(tool: str, qrels: Path, run: Path, *, measures: str = "5", out: Path | None = None,
           memory_limit: str | None = None, timeout: float = 600, rss_cap: int | None = None,
           env: dict | None = None) -> dict:
    """Run ``benches/_runner.py`` for one tool in a fresh process."""
    cmd = [sys.executable, str(RUNNER), tool, str(qrels), str(run), "--measures", measures]
    if out is not None:
        cmd += ["--out", str(out)]
    if memory_limit is not None:
        cmd += ["--memory-limit", memory_limit]
    return run_measured(cmd, timeout=timeout, rss_cap=rss_cap, env=env)


def gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"
