"""Input paths that cannot be reached: a loop of symbolic links, a link to a missing file,
a folder of parquet parts with a sub-folder that cannot be listed. Each is an error that
says why, never "not found" for a file that is there, nor a part skipped silently."""

from __future__ import annotations

import errno
import os

import polars as pl
import pytest

from fasteval.errors import InputError
from fasteval.io.readers import read_qrels, read_run

RUN = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})


@pytest.mark.parametrize("read", [read_run, read_qrels])
def test_a_loop_of_symbolic_links_is_named_as_such(tmp_path, read):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(InputError) as err:
        read(tmp_path / "a")
    assert str(err.value) == f"{tmp_path / 'a'}: cannot be reached (Too many levels of symbolic links)"


def test_a_link_to_a_missing_file_says_where_it_points(tmp_path):
    (tmp_path / "run.txt").symlink_to("old/run.txt")
    with pytest.raises(InputError) as err:
        read_run(tmp_path / "run.txt")
    assert str(err.value) == (f"{tmp_path / 'run.txt'}: file not found (a symbolic link to "
                              "'old/run.txt', which does not exist)")


def test_a_parquet_folder_with_a_sub_folder_that_cannot_be_listed(tmp_path, monkeypatch):
    for part in ("a", "b"):
        (tmp_path / part).mkdir()
        RUN.write_parquet(tmp_path / part / "0.parquet")
    scandir = os.scandir

    def refusing(path=".", *args):  # as without search permission (root lists mode 000)
        if os.fspath(path) == os.fspath(tmp_path / "b"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return scandir(path, *args)

    monkeypatch.setattr(os, "scandir", refusing)
    with pytest.raises(InputError) as err:
        read_run(tmp_path)
    assert str(err.value) == (f"{tmp_path / 'b'}: cannot list the folder (Permission denied); "
                              "expected a folder this user may read")
