"""A command whose standard output is a pipe its reader closed (``fasteval trec-eval ... |
head -1``) stops at once, quietly, ended by SIGPIPE as trec_eval and every Unix tool are (a
shell reports 141). A closed descriptor (``>&-``) is another matter: an error, status 2
(``test_hostile_outputs.py``)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys

import pytest

from fasteval.cli import PIPE_CLOSED, main
from tests._data import SHIPPED_TREC, TESTS

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGPIPE"), reason="no SIGPIPE here")

_Q, _R = str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test")


def _into_a_closed_pipe(*args: str) -> subprocess.CompletedProcess:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first write
    try:
        return subprocess.run([sys.executable, "-m", "fasteval", *args], stdout=write,
                              stderr=subprocess.PIPE, timeout=120, cwd=TESTS.parent)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [
    ("trec-eval", "-q", _Q, _R),
    ("eval", _Q, _R, "-m", "map", "-q", "--format", "csv"),
    ("fuse", _R, _R, "--format", "trec"),
    ("eval", "--help"),
])
def test_a_closed_pipe_ends_the_command_as_sigpipe_does(args):
    done = _into_a_closed_pipe(*args)
    assert (done.returncode, done.stderr) == (-signal.SIGPIPE, b"")


def test_a_shell_sees_status_141():
    read, write = os.pipe()
    os.close(read)
    try:
        # (the pipe's write end is the shell's descriptor 0, as dash takes no number past 9)
        done = subprocess.run(["sh", "-c", '"$0" -m fasteval trec-eval -q "$1" "$2" >&0; echo $?',
                               sys.executable, _Q, _R], stdin=write, capture_output=True,
                              timeout=120, cwd=TESTS.parent)
    finally:
        os.close(write)
    assert (done.stdout.decode().strip(), done.stderr) == (str(PIPE_CLOSED), b"")


class _Gone(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_in_process_the_status_is_141(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", _Gone())
    assert main(["trec-eval", _Q, _R]) == PIPE_CLOSED == 141
    assert capsys.readouterr().err == ""


def test_a_broken_connection_of_the_command_is_an_error(tmp_path):
    """A ``BrokenPipeError`` while standard output is fine (a server that closed the
    connection the command made) is an error line, status 2, not a quiet SIGPIPE."""
    script = ("import sys\nfrom fasteval.cli import _guard\n"
              "def job():\n    raise BrokenPipeError(32, 'Broken pipe')\n"
              "sys.exit(_guard(job))")
    for stdout in (open(tmp_path / "out.txt", "wb"), subprocess.PIPE):
        done = subprocess.run([sys.executable, "-c", script], stdout=stdout, stderr=subprocess.PIPE,
                              timeout=60, cwd=TESTS.parent)
        assert (done.returncode, done.stderr) == (2, b"fasteval: error: Broken pipe\n")
