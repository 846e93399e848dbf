"""Hive-partitioned parquet folders: a sub-folder that is a symbolic link is read as polars
reads it (the readers' own walks skipped it: 'holds no .parquet file', its hive keys
unseen), and Spark's null partition (``run_id=__HIVE_DEFAULT_PARTITION__``) is refused
naming the folder by every reader (it became a run of that literal name, a null run id
refused without the folder, or null ids passed by the lazy reader)."""

from __future__ import annotations

import os

import polars as pl
import pytest

import fasteval
from fasteval.cli import main
from fasteval.errors import InputError
from tests._data import SHIPPED_TREC

_NULL = "__HIVE_DEFAULT_PARTITION__"


def _part(folder, doc: str = "FR940202-2-00150", **columns) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    pl.DataFrame({"query_id": ["301"], "doc_id": [doc], "score": [1.0], **columns}).write_parquet(folder / "p.parquet")


def _read_all(path) -> list[tuple]:
    return [sorted(fasteval.read_run(path).rows()), sorted(fasteval.scan_run(path).collect().rows())]


def test_a_linked_partition_is_read(tmp_path, capsys):
    _part(tmp_path / "elsewhere" / "run_id=b")
    (tmp_path / "runs").mkdir()
    os.symlink(tmp_path / "elsewhere" / "run_id=b", tmp_path / "runs" / "run_id=b")
    assert _read_all(tmp_path / "runs") == [[("301", "FR940202-2-00150", 1.0, "b")]] * 2
    assert main(["eval", str(SHIPPED_TREC / "qrels.test"), str(tmp_path / "runs"), "-m", "P@1", "--quiet"]) == 0
    assert capsys.readouterr().out.split() == ["measure", "b", "P@1", "0.0000"]


def test_a_linked_folder_keeps_its_hive_ids_as_written(tmp_path):
    folder = tmp_path / "parts" / "qid=01"
    folder.mkdir(parents=True)
    pl.DataFrame({"docno": ["d1"], "score": [1.0]}).write_parquet(folder / "p.parquet")
    (tmp_path / "run" / "run_id=a").mkdir(parents=True)
    os.symlink(folder, tmp_path / "run" / "run_id=a" / "qid=01")
    got = fasteval.read_run(tmp_path / "run")
    assert got.rows() == [("01", "d1", 1.0, "a")] and got.schema["query_id"] == pl.String


def test_a_link_to_a_folder_holding_it_is_refused(tmp_path):
    _part(tmp_path / "runs" / "run_id=a")
    os.symlink(tmp_path / "runs", tmp_path / "runs" / "run_id=a" / "loop")
    with pytest.raises(InputError, match="a symbolic link to a folder that holds it"):
        fasteval.read_run(tmp_path / "runs")


def test_spark_null_partition_is_refused_naming_the_folder(tmp_path, capsys):
    _part(tmp_path / "runs" / "run_id=a")
    _part(tmp_path / "runs" / f"run_id={_NULL}", doc="FR940202-2-00151")
    folder = str(tmp_path / "runs" / f"run_id={_NULL}")
    for read in (fasteval.read_run, lambda p: fasteval.scan_run(p).collect()):
        with pytest.raises(InputError) as err:
            read(tmp_path / "runs")
        assert str(err.value).startswith(f"{folder}: Spark's null partition: the run_id of its rows is null")
    assert main(["eval", str(SHIPPED_TREC / "qrels.test"), str(tmp_path / "runs"), "-m", "P@1"]) == 2
    assert capsys.readouterr().err.startswith(f"fasteval: error: {folder}: Spark's null partition")


def test_a_null_partition_of_a_key_no_run_column_comes_from_is_read(tmp_path):
    _part(tmp_path / "runs" / "run_id=a" / f"lang={_NULL}")
    assert fasteval.read_run(tmp_path / "runs").select("query_id", "run_id").rows() == [("301", "a")]
