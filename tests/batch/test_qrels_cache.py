"""The cache of prepared qrels behind ``fasteval eval``: a hit gives exactly what reading the
file gives, a changed file is never served from it, ``--no-qrels-cache`` neither reads nor
writes it, a damaged entry is ignored and replaced, and only settled, warning-free, large
qrels are kept."""

from __future__ import annotations

import dataclasses
import os
import threading
import warnings

import numpy as np
import polars as pl
import pytest

import fasteval
from fasteval.batch import qrels_cache as C
from fasteval.cli import main
from fasteval.datasets import SynthSpec, generate
from fasteval.errors import DataWarning

M = ["ndcg@10", "map", "P@5", "recip_rank", "bpref", "num_rel", "gm_map"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder; every table prepared by the kernels (as large qrels are), and
    files settled at once (the tests write them just before)."""
    monkeypatch.setenv("FASTEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("fasteval.prepare.small.SMALL_ROWS", 0)
    monkeypatch.setattr("fasteval.batch.api.QRELS_CACHE_MIN_BYTES", 0)
    monkeypatch.setattr(C, "SETTLE_SECONDS", 0.0)
    return tmp_path / "cache" / "qrels"


def _write_trec_qrels(df: pl.DataFrame, path) -> None:
    lines = [f"{q} 0 {d} {r}" for q, d, r in df.select("query_id", "doc_id", "relevance").iter_rows()]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def files(tmp_path):
    qrels, runs = generate(SynthSpec(queries=150, depth=30, runs=1, seed=3, judged=12))
    qrels = qrels.with_columns(pl.col("relevance").clip(0, 1))  # one digit: a rewrite keeps the size
    q = tmp_path / "qrels.txt"
    _write_trec_qrels(qrels, q)
    run = tmp_path / "run.parquet"
    next(iter(runs.values())).write_parquet(run)
    return q, run


def _eval(q, run, out, *extra) -> str:
    args = ["eval", str(q), str(run), *sum((["-m", m] for m in M), []), "-q", "--format", "csv",
            "-o", str(out), "--quiet", *extra]
    assert main(args) == 0
    return out.read_text()


def _entries(folder) -> list:
    return sorted(folder.glob("*.qrels")) if folder.exists() else []


def _no_reading(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("the qrels file was read")

    monkeypatch.setattr(fasteval, "read_qrels", refuse)


def test_hit_gives_what_reading_gives(cache, files, tmp_path, monkeypatch):
    q, run = files
    fresh = _eval(q, run, tmp_path / "fresh.csv", "--no-qrels-cache")
    options = ("-c", "-J", "-M", "20", "-l", "1")
    fresh_options = _eval(q, run, tmp_path / "fresh_o.csv", "--no-qrels-cache", *options)
    assert not _entries(cache)
    assert _eval(q, run, tmp_path / "miss.csv") == fresh  # read, prepared, stored
    assert len(_entries(cache)) == 1
    _no_reading(monkeypatch)
    assert _eval(q, run, tmp_path / "hit.csv") == fresh
    assert _eval(q, run, tmp_path / "hit_o.csv", *options) == fresh_options


def test_entry_is_restored_once(cache, files, tmp_path, monkeypatch):
    """On a hit the job restores the entry on its own thread, before the run is read, and
    the warm-up thread takes those prepared qrels (loading only the run's kernels): one
    restore."""
    q, run = files
    good = _eval(q, run, tmp_path / "good.csv")
    calls = []
    restore = C.restore
    monkeypatch.setattr(C, "restore", lambda parts: calls.append(threading.current_thread().name)
                        or restore(parts))
    assert _eval(q, run, tmp_path / "hit.csv") == good
    assert calls == ["MainThread"]


@pytest.mark.parametrize("int_ids", [False, True])
def test_entry_round_trip_is_exact(cache, int_ids, tmp_path):
    """Every array of the prepared qrels comes back with its values, dtype, shape,
    writability and layout (numba compiles one variant per array type), every series
    with its dtype and values; and a text run scores the same against either."""
    from fasteval.evaluation import Evaluator
    from fasteval.kernels import groups, ids, qrels_index, rank
    from fasteval.prepare import check_qrels_table
    from fasteval.prepare.qrels import prepare_qrels_kernels

    qrels, runs = generate(SynthSpec(queries=80, depth=20, runs=1, seed=4, judged=10, int_ids=int_ids))
    path = tmp_path / "qrels.parquet"
    qrels.write_parquet(path)
    ident = C.identity(path)
    pq = prepare_qrels_kernels(check_qrels_table(fasteval.read_qrels(path)))
    assert C.store(pq, ident)
    back = C.restore(C.load(path))

    def same(a, b, name):
        if isinstance(a, np.ndarray):
            assert (a.dtype, a.shape, a.flags.writeable, a.flags.c_contiguous) == \
                (b.dtype, b.shape, b.flags.writeable, b.flags.c_contiguous), name
            np.testing.assert_array_equal(a, b, err_msg=name)
        elif isinstance(a, pl.Series):
            assert a.dtype == b.dtype and a.name == b.name and a.equals(b), name
        elif isinstance(a, tuple):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                same(x, y, f"{name}[{i}]")
        else:
            assert a == b, name

    for obj, other in ((pq, back), (pq.index, back.index)):
        for f in dataclasses.fields(obj):
            if f.name not in ("index", "frame", "_alt"):
                same(getattr(obj, f.name), getattr(other, f.name), f.name)
    run = next(iter(runs.values()))
    text_run = run.with_columns(pl.col("query_id").cast(pl.Utf8), pl.col("doc_id").cast(pl.Utf8))
    K = {**vars(groups), **vars(ids), **vars(qrels_index), **vars(rank)}  # the preparation kernels
    for r in (run, text_run):
        expected = Evaluator(pq, M).evaluate(r)
        compiled = {name: len(k.signatures) for name, k in K.items() if hasattr(k, "signatures")}
        assert Evaluator(back, M).evaluate(r).equals(expected)
        # the same kernel variants served both: nothing compiled for the restored arrays
        assert compiled == {name: len(k.signatures) for name, k in K.items()
                            if hasattr(k, "signatures")}


def test_changed_file_is_never_served(cache, files, tmp_path):
    """Rewritten with the same size and its old modification time put back: the status
    change time still tells, and the new content is scored."""
    q, run = files
    old = _eval(q, run, tmp_path / "old.csv")
    assert len(_entries(cache)) == 1
    st = os.stat(q)
    text = q.read_text()
    flipped = "\n".join(line[:-1] + ("1" if line[-1] == "0" else "0") for line in text.splitlines())
    q.write_text(flipped + "\n")
    os.utime(q, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(q).st_size == st.st_size and os.stat(q).st_mtime_ns == st.st_mtime_ns
    new = _eval(q, run, tmp_path / "new.csv")
    assert new != old
    assert new == _eval(q, run, tmp_path / "fresh.csv", "--no-qrels-cache")


def test_no_qrels_cache_neither_reads_nor_writes(cache, files, tmp_path, monkeypatch):
    q, run = files
    _eval(q, run, tmp_path / "a.csv", "--no-qrels-cache")
    assert not _entries(cache)
    _eval(q, run, tmp_path / "b.csv")
    assert len(_entries(cache)) == 1

    def refuse(*a, **k):
        raise AssertionError("the cache was used")

    monkeypatch.setattr(C, "load", refuse)
    monkeypatch.setattr(C, "store", refuse)
    assert _eval(q, run, tmp_path / "c.csv", "--no-qrels-cache") == (tmp_path / "a.csv").read_text()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "header", "empty"])
def test_damaged_entry_is_ignored_and_replaced(cache, files, tmp_path, damage):
    q, run = files
    good = _eval(q, run, tmp_path / "good.csv")
    (entry,) = _entries(cache)
    data = entry.read_bytes()
    entry.write_bytes({"garbage": b"\x00garbage" * 100, "truncated": data[: len(data) // 2],
                       "header": data[:20] + b"{" + data[21:], "empty": b""}[damage])
    assert C.load(q) is None
    assert _eval(q, run, tmp_path / "again.csv") == good
    assert C.load(q) is not None  # written anew
    assert _eval(q, run, tmp_path / "hit.csv") == good


def _blob_at(entry, field: str, index: bool = False) -> tuple[int, int]:
    """(file offset, length) of an array of an entry (its header says where)."""
    import json
    import struct

    data = entry.read_bytes()
    (hlen,) = struct.unpack("<Q", data[len(C.MAGIC):len(C.MAGIC) + 8])
    start = len(C.MAGIC) + 8
    header = json.loads(data[start:start + hlen])
    node = (header["tree"]["index"] if index else header["tree"])[field]
    if node["t"] == "tuple":  # an id column: its 16-byte views
        node = node["v"][2]
    off, n = header["blobs"][node["i"]]
    return start + hlen + (-(start + hlen) % C._ALIGN) + off, n


@pytest.mark.parametrize(("field", "index"), [
    ("q_start", False), ("grades", False), ("q_hash", True), ("qslots", True), ("doc_col", True)])
def test_arrays_changed_in_place_are_a_miss(cache, files, tmp_path, field, index):
    """Bytes changed inside the arrays, the header intact (positions out of range, a grade
    or a doc key that would silently change a value): the checksum makes the entry a miss,
    and the job reads the file again."""
    q, run = files
    good = _eval(q, run, tmp_path / "good.csv")
    (entry,) = _entries(cache)
    off, n = _blob_at(entry, field, index)
    data = bytearray(entry.read_bytes())
    pos = off + n // 2 - n // 2 % 8
    data[pos:pos + 4] = bytes(b ^ 0x55 for b in data[pos:pos + 4])
    entry.write_bytes(bytes(data))
    assert C.load(q) is None
    assert _eval(q, run, tmp_path / "again.csv") == good
    assert C.load(q) is not None  # written anew


def test_entry_of_another_identity_is_not_taken(cache, files, tmp_path):
    """An entry renamed to stand for another file is refused (the identity inside it is compared)."""
    q, run = files
    good = _eval(q, run, tmp_path / "good.csv")
    other = tmp_path / "other.txt"
    other.write_text(q.read_text().replace(" 1\n", " 0\n"))
    (entry,) = _entries(cache)
    entry.rename(C._entry_path(C.identity(other)))
    assert C.load(other) is None
    assert _eval(other, run, tmp_path / "other.csv") == \
        _eval(other, run, tmp_path / "other2.csv", "--no-qrels-cache") != good


def test_recent_small_or_warning_qrels_are_not_kept(cache, files, tmp_path, monkeypatch, capsys):
    q, run = files
    monkeypatch.setattr(C, "SETTLE_SECONDS", 3600.0)  # changed within the hour: not settled
    _eval(q, run, tmp_path / "a.csv")
    assert not _entries(cache)
    monkeypatch.setattr(C, "SETTLE_SECONDS", 0.0)
    monkeypatch.setattr("fasteval.prepare.small.SMALL_ROWS", 100_000)  # prepared by polars
    _eval(q, run, tmp_path / "b.csv")
    assert not _entries(cache)
    monkeypatch.setattr("fasteval.prepare.small.SMALL_ROWS", 0)
    read = fasteval.read_qrels

    def warning_read(*a, **k):
        warnings.warn(DataWarning("qrels: something to say"), stacklevel=2)
        return read(*a, **k)

    monkeypatch.setattr(fasteval, "read_qrels", warning_read)
    capsys.readouterr()
    _eval(q, run, tmp_path / "c.csv")
    assert "fasteval: warning: qrels: something to say" in capsys.readouterr().err  # shown once
    assert not _entries(cache)  # a hit would skip the reader and its warning
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text() == \
        (tmp_path / "c.csv").read_text()


def test_folder_is_trimmed_oldest_first(cache, files, tmp_path, monkeypatch):
    q, run = files
    _eval(q, run, tmp_path / "a.csv")
    (first,) = _entries(cache)
    os.utime(first, (1, 1))  # last used long ago
    q2 = tmp_path / "qrels2.txt"
    q2.write_text(q.read_text())
    monkeypatch.setattr(C, "MAX_TOTAL_BYTES", first.stat().st_size + 1)
    _eval(q2, run, tmp_path / "b.csv")
    (kept,) = _entries(cache)
    assert kept != first and C.load(q2) is not None and C.load(q) is None


def test_small_files_do_not_consult_the_cache(tmp_path, monkeypatch):
    """A small qrels file (prepared by polars in milliseconds) is read as it always was."""
    monkeypatch.setenv("FASTEVAL_CACHE_DIR", str(tmp_path / "cache"))

    def refuse(*a, **k):
        raise AssertionError("the cache was consulted")

    monkeypatch.setattr(C, "identity", refuse)
    out = tmp_path / "out.csv"
    assert main(["eval", "datasets/trec/qrels.test", "datasets/trec/results.test", "-m", "map",
                 "-o", str(out), "--quiet"]) == 0
    assert "map" in out.read_text()
    assert not (tmp_path / "cache").exists()


def test_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("FASTEVAL_CACHE_DIR", str(tmp_path / "a"))
    assert C.cache_dir() == tmp_path / "a" / "qrels"
    monkeypatch.delenv("FASTEVAL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert C.cache_dir() == tmp_path / "x" / "fasteval" / "qrels"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # not absolute: ignored, as the spec says
    assert C.cache_dir() == C.Path.home() / ".cache" / "fasteval" / "qrels"


def test_aliased_parquet_qrels_hit_and_rewrite(cache, tmp_path, monkeypatch):
    """Parquet qrels named as PyTerrier writes them (qid, docno, label) and a PyTerrier run:
    the entry gives read_qrels' values; the file rewritten with a query_id column beside qid
    (which read_qrels then takes instead) is read again, never served the old entry."""
    qrels, runs = generate(SynthSpec(queries=120, depth=20, runs=1, seed=6, judged=10, int_ids=True))
    run = next(iter(runs.values()))
    q = tmp_path / "qrels.parquet"
    qrels.rename({"query_id": "qid", "doc_id": "docno", "relevance": "label"}).write_parquet(q)
    r = tmp_path / "run.parquet"
    run.rename({"query_id": "qid", "doc_id": "docno"}).write_parquet(r)

    def reference() -> str:
        res = fasteval.evaluate(fasteval.read_qrels(q), {"run": fasteval.read_run(r)}, M)
        return res.write_csv()

    ref = reference()
    assert _eval(q, r, tmp_path / "miss.csv") == ref
    assert len(_entries(cache)) == 1
    with monkeypatch.context() as m:
        _no_reading(m)
        assert _eval(q, r, tmp_path / "hit.csv") == ref
    # the first 60 queries' judgments now under other query ids: query_id wins over qid
    shifted = qrels.with_columns(pl.when(pl.col("query_id") < 60).then(pl.col("query_id") + 10_000)
                                 .otherwise(pl.col("query_id")).alias("query_id"))
    shifted.rename({"doc_id": "docno", "relevance": "label"}).with_columns(
        qrels.get_column("query_id").alias("qid")).write_parquet(q)
    new = reference()
    assert new != ref
    assert _eval(q, r, tmp_path / "new.csv") == new


def _header_edit(entry, edit) -> None:
    """Rewrite the JSON header of ``entry`` through ``edit(header)``, keeping its length
    (the arrays stay where the header says)."""
    import json
    import struct

    data = entry.read_bytes()
    (hlen,) = struct.unpack("<Q", data[len(C.MAGIC):len(C.MAGIC) + 8])
    start = len(C.MAGIC) + 8
    header = json.loads(data[start:start + hlen])
    edit(header)
    text = json.dumps(header).encode()
    assert len(text) <= hlen
    entry.write_bytes(data[:start] + text + b" " * (hlen - len(text)) + data[start + hlen:])


@pytest.mark.parametrize("field", ["max_grade", "n_rows"])
def test_header_numbers_changed_are_a_miss(cache, files, tmp_path, field):
    """A number of the header changed (the largest grade, which checks ERR's gmax and counts
    the levels; the row count), the arrays intact: the checksum covers the header too, and
    the job reads the file again."""
    q, run = files
    good = _eval(q, run, tmp_path / "good.csv")
    (entry,) = _entries(cache)
    assert C.load(q) is not None

    def edit(header):
        header["tree"][field]["v"] += 1

    _header_edit(entry, edit)
    assert C.load(q) is None
    assert _eval(q, run, tmp_path / "again.csv") == good
    assert C.load(q) is not None  # written anew


def test_settled_is_judged_when_the_identity_is_taken(cache, files, tmp_path, monkeypatch):
    """A file changed just before its identity was taken is not kept, however long the
    reading took: a second change within the same clock tick would keep its times, and the
    entry would then hold what was read before it."""
    import time

    q, run = files
    monkeypatch.setattr(C, "SETTLE_SECONDS", 0.5)
    q.write_text(q.read_text())  # changed now
    taken = time.time_ns()
    ident = C.identity(q)
    pq = fasteval.Evaluator(fasteval.read_qrels(q), M).qrels
    time.sleep(0.6)  # a slow read: settled by now, not when the identity was taken
    assert not C.store(pq, ident, taken_ns=taken)
    assert not _entries(cache)
    assert C.store(pq, ident, taken_ns=time.time_ns())  # settled when taken: kept
    assert len(_entries(cache)) == 1


def test_eval_passes_the_time_the_identity_was_taken(cache, files, tmp_path, monkeypatch):
    """The job tells the writer when it took the file's identity (before reading it)."""
    import time

    q, run = files
    seen = []
    real = C.store

    def spy(pq, ident, *, taken_ns=None):
        seen.append(taken_ns)
        return real(pq, ident, taken_ns=taken_ns)

    monkeypatch.setattr(C, "store", spy)
    before = time.time_ns()
    _eval(q, run, tmp_path / "a.csv")
    assert len(seen) == 1 and seen[0] is not None and before <= seen[0] <= time.time_ns()


def test_read_only_cache_is_still_read(cache, files, tmp_path, monkeypatch):
    """A cache folder the job may not write (shared read-only): its entries are used; the
    mark of last use, which cannot be written, is left out."""
    q, run = files
    good = _eval(q, run, tmp_path / "good.csv")
    assert len(_entries(cache)) == 1

    def refuse(*a, **k):
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(C.os, "utime", refuse)
    assert C.load(q) is not None
    _no_reading(monkeypatch)
    assert _eval(q, run, tmp_path / "hit.csv") == good


def test_trim_removes_only_its_own_entries(cache, files, tmp_path, monkeypatch):
    """``FASTEVAL_CACHE_DIR`` pointing at a project folder: trimming removes entries this
    cache wrote, never the user's files there (a ``.qrels`` of their own, a file named like
    an entry without its header) nor anything behind a link out of the folder."""
    q, run = files
    cache.mkdir(parents=True)
    mine = cache / "dl19.qrels"
    mine.write_text(q.read_text())
    lookalike = cache / ("ab" * 16 + ".qrels")
    lookalike.write_text("not written by fasteval\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    target = outside / "precious.qrels"
    target.write_bytes(C.MAGIC + b"\0" * 64)  # even with the header: reached through a link
    link = cache / ("cd" * 16 + ".qrels")
    link.symlink_to(target)
    for p in (mine, lookalike):
        os.utime(p, (1, 1))  # older than any entry
    os.utime(target, (1, 1))
    monkeypatch.setattr(C, "MAX_TOTAL_BYTES", 0)  # trim everything it may
    _eval(q, run, tmp_path / "a.csv")
    assert mine.read_text() == q.read_text() and lookalike.exists()
    assert link.is_symlink() and target.read_bytes().startswith(C.MAGIC)
    assert sorted(p.name for p in cache.iterdir()) == sorted([mine.name, lookalike.name, link.name])


def test_entry_is_never_written_through_a_link(cache, files, tmp_path):
    """A link in the cache folder under an entry's name is left as it is, and the file it
    points to untouched."""
    q, run = files
    target = tmp_path / "user-file"
    target.write_text("mine\n")
    cache.mkdir(parents=True)
    link = C._entry_path(C.identity(q))  # where eval would write its entry
    link.symlink_to(target)
    _eval(q, run, tmp_path / "a.csv")
    C.wait()
    assert link.is_symlink() and target.read_text() == "mine\n" and list(cache.iterdir()) == [link]
