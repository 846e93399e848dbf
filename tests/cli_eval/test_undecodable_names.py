"""Input files whose names are not valid UTF-8 (``r\\xe9.txt`` in Latin-1 on an old file
system; Python holds such a name with surrogate escapes, ``'r\\udce9.txt'``): eval,
trec-eval, compare and fuse read them (polars cannot open such a name, so the readers open
the file themselves), runs named after them are named with the byte escaped (``r\\xe9``),
and a message naming one escapes it, on one line."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fasteval import read_run
from fasteval.cli import main
from tests._data import SHIPPED_TREC

QRELS = SHIPPED_TREC / "qrels.test"
RUN = SHIPPED_TREC / "results.test"


def _bytes_named(folder: Path, name: bytes, data: bytes) -> str:
    """A file created under the bytes ``name`` (not UTF-8); its path as Python holds it."""
    path = os.path.join(os.fsencode(folder), name)
    try:
        with open(path, "wb") as fh:
            fh.write(data)
    except OSError as exc:  # a file system that refuses names that are no UTF-8 (APFS)
        pytest.skip(f"this file system refuses a name that is not UTF-8 ({exc})")
    return os.fsdecode(path)


@pytest.fixture
def named(tmp_path: Path) -> dict[str, str]:
    run = RUN.read_bytes()
    table = read_run(RUN)
    parquet = tmp_path / "plain.parquet"
    table.select("query_id", "doc_id", "score").write_parquet(parquet)
    return {
        "qrels": _bytes_named(tmp_path, b"q\xe9.txt", QRELS.read_bytes()),
        "run": _bytes_named(tmp_path, b"r\xe9.txt", run),
        "gz": _bytes_named(tmp_path, b"g\xe9.txt.gz", gzip.compress(run)),
        "csv": _bytes_named(tmp_path, b"c\xe9.csv", table.write_csv().encode()),
        "parquet": _bytes_named(tmp_path, b"p\xe9.parquet", parquet.read_bytes()),
    }


def _table(out: str) -> dict[str, list[str]]:
    lines = [line.split() for line in out.splitlines()]
    return {row[0]: row[1:] for row in lines}


def test_eval_reads_every_format_under_such_names(named, capsys) -> None:
    args = ["-m", "map", "-m", "P.10", "--quiet"]
    assert main(["eval", str(QRELS), str(RUN), *args]) == 0
    want = _table(capsys.readouterr().out)["map"]
    assert main(["eval", named["qrels"], named["run"], named["gz"], named["csv"],
                 named["parquet"], *args]) == 0
    got = _table(capsys.readouterr().out)
    assert got["measure"] == ["r\\xe9.txt", "g\\xe9.txt", "c\\xe9.csv", "p\\xe9"]
    assert got["map"] == want * 4
    # a folder of parquet runs holding such a file: the file is a run of its own
    folder = Path(named["parquet"]).parent / "runs"
    folder.mkdir()
    _bytes_named(folder, b"p\xe9.parquet", Path(named["parquet"]).read_bytes())
    (folder / "bm25.parquet").write_bytes(Path(named["parquet"]).read_bytes())
    assert main(["eval", named["qrels"], str(folder), "-m", "map", "--quiet"]) == 0
    assert _table(capsys.readouterr().out) == {"measure": ["bm25", "p\\xe9"], "map": want * 2}


def test_trec_eval_command_in_a_process(named) -> None:
    """The real command, with the names as bytes on its command line."""
    def run(qrels: str, run: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "fasteval", "trec-eval", "-m", "official",
                               os.fsencode(qrels), os.fsencode(run)],
                              capture_output=True, timeout=300)

    want = run(str(QRELS), str(RUN))
    for source in ("run", "gz"):
        got = run(named["qrels"], named[source])
        assert (got.returncode, got.stderr, got.stdout) == (0, b"", want.stdout)


def test_compare_and_fuse_read_such_names(named, capsys) -> None:
    assert main(["compare", named["qrels"], named["run"], named["csv"], "-m", "map",
                 "--test", "t"]) == 0
    out = capsys.readouterr().out
    assert "r\\xe9" in out and "c\\xe9" in out and "\udce9" not in out
    assert main(["fuse", named["run"], named["gz"], named["parquet"], "--format", "trec"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(read_run(RUN)) and lines[0].endswith(" fused-rrf")


def test_a_message_naming_such_a_file_escapes_it(tmp_path: Path) -> None:
    bad = _bytes_named(tmp_path, b"r\xe9\x1b[2J.txt", b"q1 Q0 d1 1 x tag\n")
    proc = subprocess.run([sys.executable, "-m", "fasteval", "eval", os.fsencode(str(QRELS)),
                           os.fsencode(bad)], capture_output=True, timeout=300)
    assert proc.returncode == 2 and proc.stdout == b""
    (line,) = proc.stderr.decode("ascii").splitlines()  # one line, nothing raw
    assert line.startswith("fasteval: error: ") and "r\\xe9\\x1b[2J.txt, line 1" in line


def test_outputs_and_globbed_parts_under_such_names_are_one_line_errors(named, capsys) -> None:
    """polars writes and scans by name: an output, or a part of a globbed run, named so is
    refused before anything is read, on one line naming it."""
    out = os.fsdecode(os.path.join(os.fsencode(os.path.dirname(named["run"])), b"o\xe9.csv"))
    for argv in (["eval", named["qrels"], named["run"], "-o", out],
                 ["fuse", named["run"], named["gz"], "-o", out],
                 ["eval", named["qrels"], os.path.join(os.path.dirname(named["parquet"]), "*.parquet")]):
        assert main([*argv, "--quiet"] if argv[0] == "eval" else argv) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith("fasteval: error: ") and ("o\\udce9.csv" in line or "p\\xe9.parquet" in line)
        assert not os.path.exists(out)
