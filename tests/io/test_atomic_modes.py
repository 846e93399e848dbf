"""Atomic outputs get the mode a plain ``open(path, "w")`` would leave: an existing
file's own mode (a private 0600 results file stayed private only until it was rewritten,
then it was 0644), else 0666 less the umask."""

from __future__ import annotations

import os
import stat

import polars as pl
import pytest

from fasteval.io.writers import write_table

RUN = pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]})


def _mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_an_existing_file_keeps_its_mode(tmp_path) -> None:
    for name, mode in (("private.csv", 0o600), ("shared.parquet", 0o664), ("run.trec", 0o640)):
        p = tmp_path / name
        p.write_text("old")
        os.chmod(p, mode)
        write_table(RUN, p)
        assert _mode(p) == mode
        assert p.read_bytes() != b"old"


def test_through_a_symbolic_link_the_target_keeps_its_mode(tmp_path) -> None:
    target = tmp_path / "target.csv"
    target.write_text("old")
    os.chmod(target, 0o600)
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    write_table(RUN, link)
    assert link.is_symlink() and _mode(target) == 0o600
    assert target.read_text() == "query_id,doc_id,score\nq,d,1.0\n"


def test_a_new_file_gets_0666_less_the_umask(tmp_path) -> None:
    old = os.umask(0o027)
    try:
        write_table(RUN, tmp_path / "new.csv")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "new.csv") == 0o640


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="the umask is read from /proc")
def test_the_umask_is_read_without_being_set(tmp_path, monkeypatch) -> None:
    # os.umask can only read the mask by setting it: other threads would create files with
    # a mask of 0 meanwhile
    old = os.umask(0o027)
    try:
        def refuse(mask):
            raise AssertionError("os.umask called")

        monkeypatch.setattr(os, "umask", refuse)
        write_table(RUN, tmp_path / "new.csv")
    finally:
        monkeypatch.undo()
        os.umask(old)
    assert _mode(tmp_path / "new.csv") == 0o640
