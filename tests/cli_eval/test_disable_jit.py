"""With numba's ``NUMBA_DISABLE_JIT=1`` (its debugging switch, which coverage tools set too)
every command runs, its kernels interpreted, and gives the compiled kernels' values."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap

import pytest

from fasteval._interpret import interpreted
from fasteval.cli import main
from tests._data import SHIPPED_TREC as _TREC
from tests._data import TESTS
from tests._data import TREC_EVAL as _PREFS

_SCRIPT = textwrap.dedent('''
    import contextlib, io, json, sys
    from fasteval.cli import main
    out = []
    for argv in json.loads(sys.argv[1]):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            status = main(argv)
        out.append([status, buf.getvalue()])
    print(json.dumps(out))
''')


def _jobs(tmp_path) -> list[list[str]]:
    """The Quickstart job, trec-eval (preference measures: 0/0 in a kernel), compare, fuse."""
    qrels, run = str(_TREC / "qrels.test"), str(_TREC / "results.test")
    other = tmp_path / "other.test"
    lines = (_TREC / "results.test").read_text().splitlines()
    other.write_text("".join(f"{' '.join(f[:4])} {float(f[4]) * 0.5 + i % 7} b\n"
                             for i, f in enumerate(line.split() for line in lines)))
    return [["eval", qrels, run, "-m", "ndcg@10", "-m", "map"],
            ["trec-eval", "-q", "-R", "prefs", str(_PREFS / "prefs.test"), str(_PREFS / "prefs.results.test")],
            ["compare", qrels, run, str(other), "-m", "map", "--test", "randomization",
             "--resamples", "200"],
            ["fuse", "-m", "mnz", "--norm", "zmuv", run, str(other), "--format", "trec", "-o", "-"]]


@pytest.mark.parametrize("job", [0, *(pytest.param(i, marks=pytest.mark.slow) for i in (1, 2, 3))],
                         ids=["eval", "trec-eval-prefs", "compare", "fuse"])
def test_every_command_runs_with_the_jit_disabled_and_gives_the_compiled_values(
        tmp_path, capsys, job):
    """The Quickstart job in the quick profile; every command in the full one (interpreted
    kernels take tens of seconds on trec_eval's sample)."""
    jobs = _jobs(tmp_path)[job:job + 1]
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "FASTEVAL_QUIET": "1"}
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps(jobs)], capture_output=True,
                          text=True, env=env, timeout=300, cwd=TESTS.parent)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "warning" not in proc.stderr, proc.stderr
    interpreted_out = json.loads(proc.stdout)
    for argv, (status, text) in zip(jobs, interpreted_out, strict=True):
        capsys.readouterr()
        assert main(argv) == 0
        assert (status, text) == (0, capsys.readouterr().out), argv
    if job == 0:
        quick = interpreted_out[0][1].split()
        assert quick[quick.index("ndcg@10") + 1] == "0.3016"
        assert quick[quick.index("map") + 1] == "0.1785"


def test_interpreted_kernels_divide_as_the_compiled_numpy_error_model():
    def ratios(a, b):
        x = a / b
        y = a // b
        z = a % b
        w = float(a)
        w /= b
        return x, y, z, w, math.log(a * 0)

    x, y, z, w, lg = interpreted(ratios, error_model="numpy")(0, 0)
    assert math.isnan(x) and y == 0 and z == 0 and math.isnan(w) and lg == -math.inf
    assert interpreted(ratios, error_model="numpy")(3, 0)[0] == math.inf
    assert interpreted(ratios)(6, 4)[:4] == (1.5, 1, 2, 1.5)


def test_warmup_has_nothing_to_compile_with_the_jit_disabled():
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    env.pop("FASTEVAL_QUIET", None)
    proc = subprocess.run([sys.executable, "-m", "fasteval", "warmup"], capture_output=True, text=True,
                          env=env, timeout=120, cwd=TESTS.parent)
    assert (proc.returncode, proc.stderr) == (
        0, "fasteval warmup: numba's JIT is disabled (NUMBA_DISABLE_JIT): nothing to compile\n")
