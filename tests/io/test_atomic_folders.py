"""Folders an atomic output makes for itself are removed again when the output is dropped
(while empty); folders that were there before are never removed."""

from __future__ import annotations

import pytest

from fasteval.io.atomic import AtomicOutput, atomic_path


def test_dropped_output_removes_the_folders_it_made(tmp_path):
    with pytest.raises(KeyboardInterrupt), atomic_path(tmp_path / "a" / "b" / "out.parquet") as tmp:
        tmp.write_bytes(b"half")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_dropped_output_keeps_folders_that_were_there(tmp_path):
    (tmp_path / "a").mkdir()
    out = AtomicOutput(tmp_path / "a" / "b" / "out.txt")
    assert (tmp_path / "a" / "b").is_dir()
    out.abort()
    assert [p.name for p in tmp_path.iterdir()] == ["a"]
    assert list((tmp_path / "a").iterdir()) == []


def test_a_folder_another_output_wrote_into_stays(tmp_path):
    first = AtomicOutput(tmp_path / "d" / "one.txt")
    with atomic_path(tmp_path / "d" / "two.txt") as tmp:
        tmp.write_text("2\n")
    first.abort()
    assert (tmp_path / "d" / "two.txt").read_text() == "2\n"
    assert [p.name for p in (tmp_path / "d").iterdir()] == ["two.txt"]


def test_outputs_sharing_new_folders_leave_none_when_all_are_dropped(tmp_path):
    outer = AtomicOutput(tmp_path / "set" / "qrels.parquet")
    inner = [AtomicOutput(tmp_path / "set" / "runs" / f"run_{i}.parquet") for i in range(2)]
    for out in reversed([outer, *inner]):  # as an ExitStack unwinds
        out.abort()
    assert list(tmp_path.iterdir()) == []


def test_a_committed_output_keeps_its_folders(tmp_path):
    with atomic_path(tmp_path / "x" / "y" / "out.txt") as tmp:
        tmp.write_text("ok\n")
    assert (tmp_path / "x" / "y" / "out.txt").read_text() == "ok\n"
