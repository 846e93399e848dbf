"""gzip inputs are inflated as a stream and checked as the lines come (fasteval.io.inflate):
a small file that inflates to a huge one (zeros, one long line, bad lines) is refused after
little is read, naming the file and the line, with memory bounded; a large valid one is read
as a plain file is (spilled to a temporary file past SPILL_BYTES), and gives the same table."""

from __future__ import annotations

import gzip
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import pytest

from fasteval import read_run
from fasteval.errors import InputError
from fasteval.io import inflate
from tests._data import SHIPPED_TREC

QRELS = str(SHIPPED_TREC / "qrels.test")
MiB = 1 << 20


def _bomb(path: Path, piece: bytes, size: int) -> str:
    """``size`` bytes of ``piece`` repeated, gzip-compressed into ``path`` block by block."""
    c = zlib.compressobj(1, zlib.DEFLATED, 31)
    block = piece * (MiB // len(piece))
    with open(path, "wb") as fh:
        for _ in range(size // len(block)):
            fh.write(c.compress(block))
        fh.write(c.flush())
    return str(path)


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("bombs")
    return {
        "zeros": _bomb(d / "zeros.txt.gz", b"\x00", 64 * MiB),
        "long": _bomb(d / "long.txt.gz", b"a", 64 * MiB),  # one line of 64 MiB
        "lines": _bomb(d / "lines.txt.gz", b"abcd\n", 64 * MiB),  # short lines, none a run's
        "tiny": _bomb(d / "tiny.txt.gz", b"abcd\n", MiB),
    }


_PEAK = ("import resource, sys\nfrom fasteval.cli import main\nrc = main(sys.argv[1:])\n"
         "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.__stdout__)\n"
         "sys.exit(rc)\n")


_BASE: dict[str, int] = {}
"""Peak memory of each command on a tiny bad file, measured once."""


def _peak(*args: str) -> tuple[int, str]:
    """Peak resident memory (KiB, Linux) of ``fasteval ARGS`` in a fresh process, and its
    standard error; the command must fail with status 2."""
    proc = subprocess.run([sys.executable, "-c", _PEAK, *args], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2, proc.stderr
    return int(proc.stdout.split()[-1]), proc.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB (Linux)")
@pytest.mark.parametrize(("command", "bomb", "what"), [
    ("eval", "zeros", "line 1: a NUL byte"),
    ("eval", "long", "line 1: the line is longer than 16 MiB"),
    ("trec-eval", "lines", "line 1: expected at least 6 whitespace-separated fields"),
])
def test_a_bomb_is_refused_early_with_bounded_memory(bombs, command, bomb, what) -> None:
    """64 MiB inflated from a few hundred KB: refused naming the file and line 1, with
    about the memory of a tiny bad file (a whole inflate took the 64 MiB and more)."""
    def args(run: str) -> list[str]:
        return ["eval", QRELS, run, "--quiet"] if command == "eval" else ["trec-eval", QRELS, run]

    if command not in _BASE:
        _BASE[command] = _peak(*args(bombs["tiny"]))[0]
    base = _BASE[command]
    peak, err = _peak(*args(bombs[bomb]))
    (line,) = err.splitlines()
    assert line.startswith(f"fasteval: error: {bombs[bomb]}, {what}")
    assert "--memory-limit" not in line
    assert peak - base < 40 * 1024, f"{(peak - base) / 1024:.0f} MiB more than for a tiny file"


@pytest.mark.parametrize("bomb", ["zeros", "long", "lines"])
def test_the_readers_stop_after_reading_little(bombs, bomb) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as info:
            read_run(bombs[bomb])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (info.value.source, info.value.line) == (bombs[bomb], 1)
    assert peak < 40 * MiB  # the whole file inflated took 64 MiB of bytes


def test_a_large_valid_file_spills_to_a_temporary_file(tmp_path, monkeypatch) -> None:
    text = (SHIPPED_TREC / "results.test").read_bytes()
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(text[: len(text) // 2]) + gzip.compress(text[len(text) // 2:]))
    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setattr(inflate, "SPILL_BYTES", 4096)  # past it: a temporary file
    monkeypatch.setattr("tempfile.tempdir", str(spill))
    made = []
    real = inflate.os.fdopen

    def watch(fd, *a, **k):
        made.append(fd)
        return real(fd, *a, **k)

    monkeypatch.setattr(inflate.os, "fdopen", watch)
    got = read_run(str(gz))
    assert made and list(spill.iterdir()) == []  # written, read, removed
    assert got.equals(read_run(str(SHIPPED_TREC / "results.test")))


def test_blocks_checks_lines_across_blocks(monkeypatch) -> None:
    monkeypatch.setattr(inflate, "BLOCK", 64)
    monkeypatch.setattr(inflate, "MAX_LINE_BYTES", 200)
    ok = b"".join(f"q{i} 0 d{i} 1\n".encode() for i in range(100))
    assert inflate.inflate_bytes(gzip.compress(ok), "q.gz") == ok
    with pytest.raises(InputError, match=r"^q\.gz, line 3: a NUL byte"):
        inflate.inflate_bytes(gzip.compress(b"a" * 100 + b"\nb\n" + b"c" * 100 + b"\x00"), "q.gz")
    with pytest.raises(InputError, match=r"^q\.gz, line 2: the line is longer than"):
        inflate.inflate_bytes(gzip.compress(b"a\n" + b"b" * 250 + b"\nc\n"), "q.gz")
    assert inflate.inflate_bytes(gzip.compress(b"[" + b"1," * 200 + b"1]"), "x.gz", lines=False)
    with pytest.raises(InputError, match=r"^q\.gz: corrupt gzip file"):
        inflate.inflate_bytes(gzip.compress(ok)[:-30], "q.gz")
    with pytest.raises(InputError, match=r"^q\.gz: corrupt gzip file"):
        inflate.inflate_bytes(gzip.compress(ok) + b"junk", "q.gz")
