"""Hostile and careless outputs and inputs: no lost file, no traceback, one line and exit 2.

Output paths that are inputs (by name or inode), outputs that are each other, outputs
that are devices, FIFOs, directories or below a file, a full disk, stale temporary
files of killed jobs, FIFO and standard-input runs, integer ids past 2^63, and the note
for a query larger than the memory bound.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest

import fasteval
from fasteval import aggregate, evaluate
from fasteval.cli import _guard, main
from fasteval.io import atomic

ROOT = Path(__file__).resolve().parents[2]
TREC = ROOT / "datasets" / "trec"


@pytest.fixture
def trec(tmp_path: Path) -> tuple[Path, Path]:
    """Copies of the TREC sample qrels and run in a private folder."""
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_bytes((TREC / "qrels.test").read_bytes())
    r.write_bytes((TREC / "results.test").read_bytes())
    return q, r


@pytest.fixture(scope="module")
def expected_map() -> float:
    """map of the TREC sample, from the API."""
    agg = aggregate(evaluate(fasteval.read_qrels(TREC / "qrels.test"), fasteval.read_run(TREC / "results.test"),
                             ["map"]))
    return float(agg.get_column("value")[0])


def _err_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("fasteval: error: ") and "Traceback" not in err[0]
    return err[0]


def _snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file() and not p.is_symlink()}


# ------------------------------------------------------------------ an output that is an input


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink", "qrels"])
def test_output_that_is_an_input_is_refused(trec, capsys, monkeypatch, spelling):
    q, r = trec
    d = r.parent
    monkeypatch.chdir(d)
    if spelling == "symlink":
        (d / "link.txt").symlink_to("run.txt")
    if spelling == "hardlink":
        os.link(r, d / "hard.txt")
    out = {"same": "run.txt", "dot": "./run.txt", "symlink": "link.txt", "hardlink": "hard.txt",
           "qrels": str(q)}[spelling]
    before = _snapshot(d)
    assert main(["eval", "qrels.txt", "run.txt", "-m", "map", "-o", out, "--quiet"]) == 2
    line = _err_line(capsys)
    victim = "qrels.txt" if spelling == "qrels" else "run.txt"
    assert line == (f"fasteval: error: -o/--output must be a file other than the input {victim!r} "
                    f"(writing it would replace that input), got {out!r}")
    assert _snapshot(d) == before  # nothing written, nothing replaced
    assert sorted(p.name for p in d.iterdir() if p.name.startswith(".")) == []


def test_aggregate_out_that_is_an_input_or_the_other_output(trec, capsys, monkeypatch):
    q, r = trec
    monkeypatch.chdir(r.parent)
    before = _snapshot(r.parent)
    assert main(["eval", "qrels.txt", "run.txt", "-m", "map", "-q", "-o", "res.csv",
                 "--aggregate-out", "./res.csv", "--quiet"]) == 2
    assert _err_line(capsys) == ("fasteval: error: --aggregate-out must be a file other than -o/--output "
                                 "'res.csv' (one output would overwrite the other), got './res.csv'")
    assert main(["eval", "qrels.txt", "run.txt", "-m", "map", "--aggregate-out", "run.txt", "--quiet"]) == 2
    assert "--aggregate-out must be a file other than the input 'run.txt'" in _err_line(capsys)
    assert _snapshot(r.parent) == before


def test_output_found_in_a_run_directory_is_refused(tmp_path, capsys):
    """A run reached through a directory argument is an input too."""
    runs = tmp_path / "runs"
    runs.mkdir()
    run = fasteval.read_run(TREC / "results.test")
    for name in ("a", "b"):
        run.write_parquet(runs / f"{name}.parquet")
    before = (runs / "a.parquet").read_bytes()
    rc = main(["eval", str(TREC / "qrels.test"), str(runs), "-m", "map", "-o", str(runs / "a.parquet"), "--quiet"])
    assert rc == 2
    assert f"must be a file other than the input {str(runs / 'a.parquet')!r}" in _err_line(capsys)
    assert (runs / "a.parquet").read_bytes() == before


def test_api_refuses_output_over_input(tmp_path):
    from fasteval.batch.api import evaluate_files
    from fasteval.errors import ParameterError

    run = tmp_path / "run.parquet"
    fasteval.read_run(TREC / "results.test").write_parquet(run)
    before = run.read_bytes()
    with pytest.raises(ParameterError, match="out must be a file other than the input"):
        evaluate_files(TREC / "qrels.test", run, ["map"], out=run)
    assert run.read_bytes() == before


# ------------------------------------------------------------------ special outputs


def test_fifo_output_is_written_not_replaced(trec, capsys, expected_map):
    q, r = trec
    fifo = r.parent / "out.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the writer's open() does not wait
    try:
        assert main(["eval", str(q), str(r), "-m", "map", "--format", "csv", "-o", str(fifo), "--quiet"]) == 0
        got = b""
        while True:
            try:
                block = os.read(reader, 1 << 16)
            except BlockingIOError:
                break
            if not block:
                break
            got += block
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still a FIFO
    table = pl.read_csv(io.BytesIO(got))
    assert table.rows() == [("run.txt", "map", pytest.approx(expected_map, abs=1e-12))]
    assert [p.name for p in r.parent.iterdir() if p.name.startswith(".")] == []


@pytest.fixture
def full_device(tmp_path: Path) -> str:
    """A character device that fails every write with ENOSPC: a private node with
    /dev/full's numbers when this process may make one (root), else /dev/full itself
    (which a process that is not root cannot rename over, whatever the code does)."""
    if os.geteuid() == 0:
        node = tmp_path / "full"
        try:
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
            with open(node, "wb") as fh:  # check that it behaves as /dev/full
                fh.write(b"x")
                fh.flush()
        except PermissionError:
            pytest.skip("no permission to make a device node")
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                pytest.skip(f"private device node unusable: {exc}")
        return str(node)
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    return "/dev/full"


@pytest.mark.parametrize("extra", [[], ["-q", "--format", "csv"], ["-q", "--format", "parquet"]],
                         ids=["table", "csv-stream", "parquet-stream"])
def test_full_device_output_is_one_line_and_stays_a_device(trec, capsys, full_device, extra):
    q, r = trec
    assert main(["eval", str(q), str(r), "-m", "map", "-o", full_device, *extra, "--quiet"]) == 2
    assert _err_line(capsys) == (f"fasteval: error: output {full_device!r} cannot be written: "
                                 "No space left on device (disk full)")
    assert stat.S_ISCHR(os.stat(full_device).st_mode)
    leftovers = list(Path(full_device).parent.glob(".full.*.tmp")) + list(r.parent.glob(".*.tmp"))
    assert leftovers == []


class _FullStdout(io.StringIO):
    """Standard output on a full disk: writes are buffered, flushing them fails (ENOSPC)."""

    def flush(self) -> None:
        if self.getvalue():
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_stdout_on_a_full_disk_in_process(trec, capsys, monkeypatch):
    q, r = trec
    monkeypatch.setattr(sys, "stdout", _FullStdout())
    assert main(["eval", str(q), str(r), "-m", "map", "--quiet"]) == 2
    assert _err_line(capsys) == "fasteval: error: standard output cannot be written: No space left on device (disk full)"


def test_stdout_on_a_full_disk_found_by_the_dispatcher(capsys, monkeypatch):
    """A command that prints without flushing: the dispatcher's flush reports it."""
    monkeypatch.setattr(sys, "stdout", _FullStdout())

    def command() -> int:
        sys.stdout.write("a report\n")
        return 0

    assert _guard(command) == 2
    assert _err_line(capsys) == "fasteval: error: standard output: No space left on device (disk full)"


def test_dash_writes_standard_output(trec, capsysbinary, expected_map):
    q, r = trec
    assert main(["eval", str(q), str(r), "-m", "map", "-o", "-", "--format", "csv", "--quiet"]) == 0
    text = capsysbinary.readouterr().out
    assert pl.read_csv(io.BytesIO(text)).rows() == [("run.txt", "map", pytest.approx(expected_map, abs=1e-12))]
    assert main(["eval", str(q), str(r), "-m", "map", "-q", "-o", "-", "--format", "parquet", "--quiet"]) == 0
    per_query = pl.read_parquet(io.BytesIO(capsysbinary.readouterr().out))
    assert per_query.height == 3 and per_query.get_column("value").mean() == pytest.approx(expected_map)
    assert not (Path.cwd() / "-").exists()


def test_parquet_on_standard_output_takes_no_second_table(trec, capsysbinary, expected_map):
    """Two text tables may share standard output; a table after parquet bytes would make
    them no parquet stream, so that pair is refused before anything is read or written."""
    q, r = trec
    args = ["eval", str(q), str(r), "-m", "map", "-q", "-o", "-", "--aggregate-out", "-"]
    assert main([*args, "--format", "parquet", "--quiet"]) == 2
    out = capsysbinary.readouterr()
    assert out.out == b"" and out.err.decode().splitlines() == [
        "fasteval: error: --aggregate-out must be a file when -o - writes parquet to standard "
        "output (a table after the parquet bytes would corrupt them), got '-'"]
    assert main([*args, "--format", "csv", "--quiet"]) == 0
    text = capsysbinary.readouterr().out.decode()
    assert text.startswith("run_id ") and "\nrun_id,query_id,measure,value\n" in text
    assert f"{expected_map:.4f}" in text  # the aggregate as a text table, then the CSV


def test_directory_and_file_parent_outputs(trec, capsys, monkeypatch):
    q, r = trec
    monkeypatch.chdir(r.parent)
    (r.parent / "somedir").mkdir()
    (r.parent / "afile").write_text("keep")
    assert main(["eval", "qrels.txt", "run.txt", "-m", "map", "-o", "somedir", "--quiet"]) == 2
    assert _err_line(capsys) == ("fasteval: error: output 'somedir' is a directory; expected a file path "
                                 "(or - for standard output)")
    assert main(["eval", "qrels.txt", "run.txt", "-m", "map", "-o", "afile/out.csv", "--quiet"]) == 2
    assert _err_line(capsys) == ("fasteval: error: output 'afile/out.csv' cannot be created: 'afile' is a "
                                 "file, not a directory")
    assert (r.parent / "afile").read_text() == "keep"
    assert list((r.parent / "somedir").iterdir()) == []


def test_symlinked_output_is_written_through(trec, capsys, monkeypatch):
    """Replacing a link's target keeps the link (a rename onto the link would drop it)."""
    q, r = trec
    monkeypatch.chdir(r.parent)
    (r.parent / "real.csv").write_text("old\n")
    (r.parent / "link.csv").symlink_to("real.csv")
    assert main(["eval", "qrels.txt", "run.txt", "-m", "map", "-o", "link.csv", "--quiet"]) == 0
    assert (r.parent / "link.csv").is_symlink()
    assert (r.parent / "real.csv").read_text().startswith("run_id,measure,value\nrun.txt,map,0.178")


# ------------------------------------------------------------------ stale temporary files


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stale_temp_files_of_dead_jobs_are_removed(trec, monkeypatch):
    q, r = trec
    d = r.parent
    monkeypatch.chdir(d)
    host = atomic._HOST
    other_host = "000000" if host != "000000" else "111111"
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        names = {
            "dead": f".out.csv.{host}-{_dead_pid()}-abcdefgh.tmp",
            "live": f".out.csv.{host}-{live.pid}-ijklmnop.tmp",
            "other_host": f".out.csv.{other_host}-{_dead_pid()}-qrstuvwx.tmp",
            "legacy": ".out.csv.abcdefgh.tmp",
            "other_output": f".other.csv.{host}-{_dead_pid()}-abcdefgh.tmp",
        }
        for name in names.values():
            (d / name).write_text("partial")
            os.utime(d / name, (time.time() - 3600, time.time() - 3600))
        young = f".out.csv.{host}-{_dead_pid()}-yyyyyyyy.tmp"  # written after this job began
        (d / young).write_text("partial")
        os.utime(d / young, (time.time() + 60, time.time() + 60))
        assert main(["eval", "qrels.txt", "run.txt", "-m", "map", "-o", "out.csv", "--quiet"]) == 0
    finally:
        live.kill()
        live.wait()
    left = sorted(p.name for p in d.iterdir() if p.name.startswith("."))
    assert left == sorted([names["live"], names["other_host"], names["legacy"], names["other_output"], young])
    assert (d / "out.csv").read_text().startswith("run_id,measure,value\n")


def test_stale_partition_folders_are_removed(tmp_path):
    from fasteval.batch.driver import partition_chunks

    stale = tmp_path / f"fasteval-parts-{atomic._HOST}-{_dead_pid()}-abcdefgh"
    stale.mkdir()
    (stale / "0.arrow").write_bytes(b"x" * 100)
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    df = pl.DataFrame({"query_id": ["a", "b", "a"], "doc_id": ["1", "2", "3"], "score": [1.0, 2.0, 3.0]})
    parts = list(partition_chunks(iter([df]), 2, str(tmp_path)))
    assert sorted(sum((p.get_column("doc_id").to_list() for p in parts), [])) == ["1", "2", "3"]
    assert list(tmp_path.iterdir()) == []  # the stale folder and this job's own are gone


# ------------------------------------------------------------------ the dispatcher


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (OSError(errno.EIO, "Input/output error", "runs/a.txt"), "runs/a.txt: Input/output error"),
        (OSError(errno.ENOSPC, "No space left on device"), "No space left on device (disk full)"),
        (OverflowError("Python int too large to convert to C long"),
         "a number is out of range (Python int too large to convert to C long)"),
        (pl.exceptions.InvalidOperationError("conversion from `i128` to `i64` failed in column 'doc_id'\nmore"),
         "conversion from `i128` to `i64` failed in column 'doc_id'"),
    ],
)
def test_dispatcher_turns_leftover_errors_into_one_line(capsys, exc, line):
    def boom():
        raise exc

    assert _guard(boom) == 2
    assert _err_line(capsys) == f"fasteval: error: {line}"


# ------------------------------------------------------------------ other commands


def test_compare_refuses_output_over_a_run(trec, capsys, monkeypatch):
    pytest.importorskip("scipy")
    q, r = trec
    monkeypatch.chdir(r.parent)
    (r.parent / "run2.txt").write_bytes(r.read_bytes())
    before = _snapshot(r.parent)
    assert main(["compare", "qrels.txt", "run.txt", "run2.txt", "-m", "map", "-o", "./run2.txt"]) == 2
    assert "-o/--output must be a file other than the input 'run2.txt'" in _err_line(capsys)
    assert main(["compare", "qrels.txt", "run.txt", "run2.txt", "-m", "map", "-o", "rep.csv",
                 "--details", "rep.csv"]) == 2
    assert "--details must be a file other than -o/--output 'rep.csv'" in _err_line(capsys)
    assert _snapshot(r.parent) == before


def test_sas_and_judge_refuse_output_over_their_input(tmp_path, capsys):
    table = tmp_path / "answers.parquet"
    pl.DataFrame({"question": ["q"], "contexts": [["c"]], "answer": ["a"], "prediction": ["a"],
                  "gold": ["a"]}).write_parquet(table)
    before = table.read_bytes()
    assert main(["sas", str(table), "-o", str(table)]) == 2
    assert f"-o/--output must be a file other than the input {str(table)!r}" in _err_line(capsys)
    assert main(["judge", "faithfulness", str(table), "-o", str(table), "--no-progress"]) == 2
    assert f"-o/--output must be a file other than the input {str(table)!r}" in _err_line(capsys)
    assert table.read_bytes() == before


# ------------------------------------------------------------------ end to end (subprocess)


def _fasteval(*args: str, stdout=subprocess.PIPE, cwd: Path = ROOT, preexec_fn=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "fasteval", *args], cwd=cwd, env=env, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=600, preexec_fn=preexec_fn)


def test_end_to_end_output_over_input_refused(trec):
    q, r = trec
    before = _snapshot(r.parent)
    done = _fasteval("eval", "qrels.txt", "run.txt", "-m", "map", "-o", "./run.txt", cwd=r.parent)
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "fasteval: error: -o/--output must be a file other than the input 'run.txt' "
        "(writing it would replace that input), got './run.txt'"]
    assert _snapshot(r.parent) == before


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_end_to_end_stdout_on_a_full_disk(trec):
    q, r = trec
    with open("/dev/full", "wb") as full:
        done = _fasteval("eval", str(q), str(r), "-m", "map", "--quiet", stdout=full)
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "fasteval: error: standard output cannot be written: No space left on device (disk full)"]


def _closing(fd: int):
    """A ``preexec_fn`` that starts the command with descriptor ``fd`` closed (``>&-``)."""
    return lambda: os.close(fd)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("command", [("trec-eval", "{q}", "{r}"),
                                     ("compare", "{q}", "{r}", "{r2}", "-m", "map"),
                                     ("compare", "{q}", "{r}", "{r2}", "-m", "map", "--format", "csv")])
def test_stdout_on_a_full_disk_names_it(trec, command):
    q, r = trec
    r2 = r.parent / "other.txt"
    r2.write_bytes(r.read_bytes())
    with open("/dev/full", "wb") as full:
        done = _fasteval(*(a.format(q=q, r=r, r2=r2) for a in command), stdout=full)
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "fasteval: error: standard output cannot be written: No space left on device (disk full)"]


@pytest.mark.parametrize("args", [
    ("eval", "{q}", "{r}", "-m", "map", "--quiet"),
    ("eval", "{q}", "{r}", "-m", "map", "-q", "--format", "csv", "--quiet"),
    ("trec-eval", "-q", "{q}", "{r}"),
    ("fuse", "{r}", "{r}"),
    ("power", "--sd", "0.1", "--min-diff", "0.05"),
])
def test_closed_stdout_is_one_line_and_status_2(trec, args):
    q, r = trec
    args = tuple(a.format(q=q, r=r) for a in args)
    done = _fasteval(*args, stdout=None, preexec_fn=_closing(1))
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "fasteval: error: standard output cannot be written: Bad file descriptor"]


def test_closed_stdout_with_an_output_file_succeeds(trec, expected_map):
    q, r = trec
    out = r.parent / "agg.csv"
    done = _fasteval("eval", str(q), str(r), "-m", "map", "-o", str(out), "--quiet", stdout=None,
                     preexec_fn=_closing(1))
    assert (done.returncode, done.stderr) == (0, b"")
    assert pl.read_csv(out).rows() == [("run.txt", "map", pytest.approx(expected_map, abs=1e-12))]


def test_closed_stderr_keeps_errors_off_stdout_and_outputs_clean(trec, expected_map):
    q, r = trec
    missing = _fasteval("eval", str(q), str(r.parent / "missing.txt"), "-m", "map",
                        preexec_fn=_closing(2))
    assert (missing.returncode, missing.stdout) == (2, b"")  # the error has nowhere to go
    out = r.parent / "per_query.csv"
    done = _fasteval("eval", str(q), str(r), "-m", "map", "-q", "-o", str(out), preexec_fn=_closing(2))
    assert (done.returncode, done.stdout) == (0, b"")
    table = pl.read_csv(out, schema_overrides={"query_id": pl.String})
    assert table.columns == ["run_id", "query_id", "measure", "value"]
    assert table.height == 3


# ------------------------------------------------------------------ inputs that can be read once


def _feed_fifo(path: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        with open(path, "wb") as fh:
            fh.write(data)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def test_fifo_run_and_fifo_qrels_are_read(tmp_path, capsys, expected_map):
    run_fifo, qrels_fifo = tmp_path / "bm25", tmp_path / "qrels"
    os.mkfifo(run_fifo)
    os.mkfifo(qrels_fifo)
    _feed_fifo(run_fifo, (TREC / "results.test").read_bytes())
    _feed_fifo(qrels_fifo, (TREC / "qrels.test").read_bytes())
    assert main(["eval", str(qrels_fifo), str(run_fifo), "-m", "map", "--format", "csv", "--quiet"]) == 0
    assert pl.read_csv(io.StringIO(capsys.readouterr().out)).rows() == [
        ("bm25", "map", pytest.approx(expected_map, abs=1e-12))]


def test_parquet_run_on_standard_input(tmp_path, capsys, monkeypatch, expected_map):
    buf = io.BytesIO()
    fasteval.read_run(TREC / "results.test").write_parquet(buf)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(buf.getvalue())))
    assert main(["eval", str(TREC / "qrels.test"), "-", "-m", "map", "--format", "csv", "--quiet"]) == 0
    assert pl.read_csv(io.StringIO(capsys.readouterr().out)).rows() == [
        ("stdin", "map", pytest.approx(expected_map, abs=1e-12))]


# ------------------------------------------------------------------ integer ids, memory bound


def test_unsigned_ids_above_int64_are_an_error(tmp_path, capsys):
    """2^64 - 1 would wrap to -1 and match the judged document -1 (map 1.0 instead of 0.25)."""
    qrels, run = tmp_path / "qrels.parquet", tmp_path / "run.parquet"
    pl.DataFrame({"query_id": [1, 1], "doc_id": [-1, 5], "relevance": [1, 1]}).write_parquet(qrels)
    pl.DataFrame({"query_id": [1, 1], "doc_id": pl.Series([2**64 - 1, 5], dtype=pl.UInt64),
                  "score": [1.0, 0.5]}).write_parquet(run)
    assert main(["eval", str(qrels), str(run), "-m", "map", "--quiet"]) == 2
    assert _err_line(capsys) == (
        f"fasteval: error: {run}, row 0, column 'doc_id': doc_id does not fit in a signed 64-bit integer: "
        "18446744073709551615; integer ids must lie within -9223372036854775808..9223372036854775807 "
        "(store larger ids as text)")


def _one_big_query(tmp_path: Path, rows: int) -> tuple[Path, Path]:
    qrels, run = tmp_path / "qrels.parquet", tmp_path / "run.parquet"
    pl.DataFrame({"query_id": ["small", "big"], "doc_id": ["d0", "d1"], "relevance": [1, 1]}).write_parquet(qrels)
    pl.DataFrame({
        "query_id": ["small"] * 3 + ["big"] * rows,
        "doc_id": [f"d{i}" for i in range(3)] + [f"d{i}" for i in range(rows)],
        "score": [float(-i) for i in range(3 + rows)],
    }).write_parquet(run)
    return qrels, run


def test_note_when_one_query_exceeds_the_chunk_bound(tmp_path, capsys):
    qrels, run = _one_big_query(tmp_path, 40)
    assert main(["eval", str(qrels), str(run), "-m", "map", "--max-rows-per-chunk", "10"]) == 0
    err = capsys.readouterr().err.splitlines()
    notes = [x for x in err if x.startswith("fasteval: note: ")]
    assert notes == ["fasteval: note: query 'big' of run 'run' alone has 40 rows, more than the 10 rows per "
                     "chunk that --max-rows-per-chunk allows; a query is scored whole, so memory may have "
                     "peaked above the bound (about 0.0 GiB for that query)"]


def test_note_names_the_memory_limit(tmp_path, capsys, monkeypatch):
    import fasteval.batch.driver as driver

    monkeypatch.setattr(driver, "MIN_AUTO_ROWS", 10)  # 1KiB leaves nothing: chunks of 10 rows
    qrels, run = _one_big_query(tmp_path, 40)
    assert main(["eval", str(qrels), str(run), "-m", "map", "--memory-limit", "1KiB"]) == 0
    notes = [x for x in capsys.readouterr().err.splitlines() if "alone has" in x]
    assert len(notes) == 1 and "alone has 40 rows, more than the 10 rows per chunk that --memory-limit 1KiB" in notes[0]


def test_note_when_the_peak_went_past_the_memory_limit(tmp_path, capsys, monkeypatch):
    import re

    import fasteval.cli.eval_cmd as cmd

    qrels, run = _one_big_query(tmp_path, 5)
    monkeypatch.setattr(cmd, "_peak_rss", lambda: 2**20)  # under the limit: nothing to say
    assert main(["eval", str(qrels), str(run), "-m", "map", "--memory-limit", "2GiB"]) == 0
    assert "went past" not in capsys.readouterr().err
    monkeypatch.setattr(cmd, "_peak_rss", lambda: 3 * 2**30)
    assert main(["eval", str(qrels), str(run), "-m", "map", "--memory-limit", "2GiB"]) == 0
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "went past" in x]
    assert re.fullmatch(r"fasteval: note: peak memory 3\.00 GiB went past --memory-limit 2GiB: it sized "
                        r"the chunks \([0-9,]+ rows at most\), but the runtime, the prepared qrels and "
                        r"the results of 2 queries kept for the aggregates come on top", line), line
    assert main(["eval", str(qrels), str(run), "-m", "map"]) == 0  # no limit given: no note
    assert "went past" not in capsys.readouterr().err


def test_no_note_when_every_query_fits(tmp_path, capsys):
    qrels, run = _one_big_query(tmp_path, 5)
    assert main(["eval", str(qrels), str(run), "-m", "map", "--max-rows-per-chunk", "10"]) == 0
    assert "alone has" not in capsys.readouterr().err
