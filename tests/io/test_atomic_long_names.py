"""Outputs whose names nearly fill the file system's 255-byte limit: the temporary name
beside them (``.<name>.<host>-<pid>-<random>.tmp``) must fit too."""

from __future__ import annotations

import os

import polars as pl
import pytest

from fasteval.io import atomic
from fasteval.io.writers import write_table


@pytest.mark.parametrize("name", ["x" * 236 + ".csv", "x" * 251 + ".csv", "é" * 125 + ".csv"])
def test_a_name_near_the_limit_is_written(tmp_path, name):
    assert len(os.fsencode(name)) <= 255
    with open(tmp_path / ("p" + name[1:]), "w"):  # a plain open takes it
        pass
    os.remove(tmp_path / ("p" + name[1:]))
    df = pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [0.5]})
    write_table(df, tmp_path / name)
    assert os.listdir(tmp_path) == [name]
    assert pl.read_csv(tmp_path / name).equals(df)


def test_stale_temporary_files_of_a_long_name_are_removed(tmp_path):
    name = "y" * 250 + ".csv"
    stem = atomic.temp_stem(name, tmp_path)
    assert len(os.fsencode(stem)) + atomic._TEMP_TAIL <= 255 and name.startswith(stem[1:-1])
    stale = tmp_path / f"{stem}{atomic._HOST}-999999999-abcdefgh.tmp"  # a pid never alive
    stale.write_text("partial")
    os.utime(stale, (0, 0))
    with atomic.atomic_open(tmp_path / name) as fh:
        fh.write("done\n")
    assert sorted(os.listdir(tmp_path)) == [name]
    assert (tmp_path / name).read_text() == "done\n"


def test_short_names_keep_their_whole_stem(tmp_path):
    assert atomic.temp_stem("run.csv", tmp_path) == ".run.csv."
