"""fasteval installed read-only and run by a user whose home is not writable (a container, a
shared cluster): numba finds no folder for its cache, and fasteval caches its kernels in a
private temporary folder, or compiles them in memory, saying so in one line, never with
numba's ``RuntimeError: cannot cache function ... no locator available``.

Run as root, the commands run with the capabilities that ignore permission bits dropped
(``setpriv``), so the read-only folders are read-only to them as to any user."""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from fasteval._cache_dir import private_dir
from tests._data import SHIPPED_TREC, TESTS

_CAPS = "-dac_override,-dac_read_search,-fowner"


@functools.cache
def _user_prefix() -> tuple[str, ...] | None:
    """The prefix that runs a command without root's power over permission bits (none needed
    for another user); None where it cannot be had (no setpriv, capabilities not droppable)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        return None
    prefix = ("setpriv", f"--bounding-set={_CAPS}", f"--inh-caps={_CAPS}")
    probe = tempfile.mkdtemp()
    try:
        os.chmod(probe, 0o555)
        done = subprocess.run([*prefix, "sh", "-c", f'touch "{probe}/x"'], capture_output=True, timeout=30)
        return prefix if done.returncode != 0 and not os.path.exists(f"{probe}/x") else None
    finally:
        os.chmod(probe, 0o755)
        shutil.rmtree(probe)


def _as_a_user() -> list[str]:
    prefix = _user_prefix()
    if prefix is None:
        pytest.skip("running as root, and setpriv cannot drop the capabilities that ignore "
                    "permission bits: a read-only folder would not be read-only")
    return list(prefix)


def _read_only(path: Path) -> None:
    for root, dirs, files in os.walk(path):
        for name in files:
            os.chmod(os.path.join(root, name), 0o444)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o555)
    os.chmod(path, 0o555)


def _installed(top: Path, warm: bool = False) -> Path:
    """A copy of the package (without compiled kernels; ``warm``: with those the job below
    compiles, as ``fasteval warmup`` leaves them), then read-only, and a read-only home."""
    shutil.copytree(TESTS.parent / "fasteval", top / "site" / "fasteval",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (top / "home").mkdir()
    if warm:  # (as the image's builder: the package writable, its cache beside it)
        env = {**os.environ, "PYTHONPATH": str(top / "site"), "FASTEVAL_QUIET": "1"}
        env.pop("NUMBA_CACHE_DIR", None)
        subprocess.run([sys.executable, "-m", "fasteval", *_JOB], env=env, cwd=top, check=True,
                       capture_output=True, timeout=300)
    for folder in ("site", "home"):
        _read_only(top / folder)
    return top


def _writable_again(top: Path) -> None:
    for root, dirs, _ in os.walk(top):  # for pytest to remove
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)


_JOB = ["eval", str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test"), "-m", "map"]


@pytest.fixture(scope="module")
def install(tmp_path_factory) -> Path:
    """A read-only install without compiled kernels, and a read-only home."""
    top = _installed(tmp_path_factory.mktemp("ro"))
    yield top
    _writable_again(top)


def _eval(install: Path, tmp: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "FASTEVAL_QUIET", "NUMBA_DISABLE_JIT")}
    environ.update(HOME=str(install / "home"), TMPDIR=str(tmp), PYTHONPATH=str(install / "site"),
                   PYTHONDONTWRITEBYTECODE="1", **env)
    argv = [*_as_a_user(), sys.executable, "-c",
            # python -m fasteval, once the copy is known to be the package imported
            "import runpy, sys, fasteval; assert fasteval.__file__.startswith(sys.argv[1]), fasteval.__file__; "
            "sys.argv[1:] = sys.argv[2:]; runpy.run_module('fasteval', run_name='__main__')",
            str(install / "site"), *_JOB]
    proc = subprocess.run(argv, capture_output=True, text=True, env=environ, timeout=300, cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["measure", "results.test", "map", "0.1785"], proc.stdout
    assert "Traceback" not in proc.stderr and "RuntimeError" not in proc.stderr, proc.stderr
    return proc


def _notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("fasteval: compiling")]


def test_a_private_temporary_folder_holds_the_cache_said_once(install, tmp_path):
    first = _notices(_eval(install, tmp_path).stderr)
    cache = tmp_path / f"fasteval-numba-{os.geteuid()}"
    assert len(first) == 1 and str(cache) in first[0], first
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700 and any(cache.rglob("*.nbi"))
    assert _notices(_eval(install, tmp_path).stderr) == []  # the next run loads them


def test_kernels_compiled_before_the_install_was_made_read_only_are_loaded(tmp_path_factory, tmp_path):
    top = _installed(tmp_path_factory.mktemp("warm"), warm=True)
    try:
        assert any((top / "site" / "fasteval" / "kernels" / "__pycache__").glob("*.nbi"))
        assert _notices(_eval(top, tmp_path).stderr) == []  # copied to the private folder, loaded
    finally:
        _writable_again(top)


def test_without_a_private_folder_the_kernels_compile_in_memory(install, tmp_path):
    (tmp_path / f"fasteval-numba-{os.geteuid()}").write_text("taken")  # the folder's name, taken
    lines = _notices(_eval(install, tmp_path).stderr)
    assert len(lines) == 1 and "in memory" in lines[0] and "NUMBA_CACHE_DIR" in lines[0], lines


def test_an_unwritable_numba_cache_dir_of_the_users_is_not_replaced(install, tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    _read_only(theirs)
    lines = _notices(_eval(install, tmp_path, NUMBA_CACHE_DIR=str(theirs)).stderr)
    assert len(lines) == 1 and f"NUMBA_CACHE_DIR={theirs} is not writable" in lines[0], lines
    assert "in memory" in lines[0] and not (tmp_path / f"fasteval-numba-{os.geteuid()}").exists()


def test_a_temporary_folder_not_private_to_the_user_is_never_used(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    assert private_dir(str(shared)) is None
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    assert private_dir(str(link)) is None
    own = tmp_path / "own"
    assert private_dir(str(own)) == str(own) and stat.S_IMODE(own.stat().st_mode) == 0o700
    if os.geteuid() == 0:
        os.chown(own, 65534, 65534)
        assert private_dir(str(own)) is None


def test_a_cache_file_that_cannot_be_written_leaves_the_kernel_compiled(tmp_path):
    (tmp_path / "full_disk_kernels.py").write_text(
        "from fasteval._jit import njit\n\n\n@njit(cache=True)\ndef f(x):\n    return x + 41\n")
    script = ("import sys; from unittest import mock; sys.path.insert(0, sys.argv[1]); "
              "import full_disk_kernels as k\n"
              "with mock.patch('numba.core.caching.IndexDataCacheFile.save', "
              "side_effect=OSError(28, 'No space left on device')):\n    print(k.f(1))")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "FASTEVAL_QUIET": "1"}
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "42\n", "")
