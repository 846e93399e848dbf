"""A process that compiles a kernel (numba's cache misses it) says so once, on stderr: one
line, not under ``--quiet`` or ``FASTEVAL_QUIET=1``; a process that loads it says nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fasteval._jit import NOTICE

_MODULE = '''
from fasteval._jit import njit


@njit(cache=True)
def plus_one(x):
    return x + 1


@njit(cache=True)
def twice(x):
    return 2 * x
'''

_SCRIPT = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import notice_kernels as k
    from fasteval._jit import compiled
    print(json.dumps([k.plus_one(1), k.twice(2.5), k.plus_one(2), compiled()]))
''')

_PREFIX = NOTICE.split("(", 1)[0]
"""``fasteval: compiling numba kernels``."""


def _run(tmp_path: Path, cache: str, **env: str) -> tuple[list, str]:
    """Run :data:`_SCRIPT` with numba's cache in ``tmp_path/cache``; its values and stderr."""
    environ = {k: v for k, v in os.environ.items() if k != "FASTEVAL_QUIET"}
    environ.update(NUMBA_CACHE_DIR=str(tmp_path / cache), **env)
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path)], capture_output=True,
                          text=True, env=environ, timeout=120, check=True)
    assert _PREFIX not in proc.stdout
    return json.loads(proc.stdout), proc.stderr


def test_first_compile_prints_one_line_then_the_cache_is_silent(tmp_path):
    (tmp_path / "notice_kernels.py").write_text(_MODULE)
    values, err = _run(tmp_path, "cache")
    assert values[:3] == [2, 5.0, 3]
    assert values[3] == ["notice_kernels.plus_one", "notice_kernels.twice"]  # one per signature
    lines = err.splitlines()
    assert [line for line in lines if line.startswith(_PREFIX)] == [
        NOTICE.format(name="notice_kernels.plus_one")], err
    assert "fasteval warmup" in lines[0] and "once" in lines[0]

    values, err = _run(tmp_path, "cache")  # loaded from the cache: nothing compiles
    assert values[3] == [] and _PREFIX not in err

    values, err = _run(tmp_path, "quiet-cache", FASTEVAL_QUIET="1")  # compiles, says nothing
    assert len(values[3]) == 2 and _PREFIX not in err


@pytest.mark.parametrize("argv, quiet", [
    (["eval", "q", "r", "--quiet"], True),
    (["eval", "q", "r"], False),
    (["fuse", "a", "b"], False),
])
def test_quiet_flag_silences_notes_while_the_command_runs(monkeypatch, argv, quiet):
    import fasteval.cli as cli
    from fasteval import progress

    module = cli._load(argv[0])
    seen = []
    monkeypatch.delenv("FASTEVAL_QUIET", raising=False)
    monkeypatch.setattr(module, "run", lambda args: seen.append(progress.is_quiet()) or 0)
    assert cli.main(argv) == 0
    assert seen == [quiet] and not progress.is_quiet()


def test_note_is_one_escaped_line_on_stderr(capsys, monkeypatch):
    from fasteval.progress import note, quiet

    monkeypatch.delenv("FASTEVAL_QUIET", raising=False)
    note("fasteval: a\nb\x1b[2J")
    with quiet():
        note("fasteval: not shown")
    monkeypatch.setenv("FASTEVAL_QUIET", "1")
    note("fasteval: not shown either")
    out, err = capsys.readouterr()
    assert out == "" and err == "fasteval: a\\nb\\x1b[2J\n"
