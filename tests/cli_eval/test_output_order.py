"""Two outputs of one job: the per-query file is complete before the aggregates are put in
place, so a failure while finishing it leaves neither (and no temporary files)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import polars as pl
import pytest

import fasteval
import fasteval.batch
from fasteval.batch import sinks
from fasteval.cli import main

TREC = Path(__file__).resolve().parents[2] / "datasets" / "trec"


def _full_disk_at_the_footer(monkeypatch) -> None:
    def fail(self):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(sinks.ParquetSink, "_finish", fail)


def test_cli_failure_finishing_the_per_query_file_leaves_no_aggregate(tmp_path, monkeypatch, capsys):
    _full_disk_at_the_footer(monkeypatch)
    per_query, agg = tmp_path / "pq.parquet", tmp_path / "agg.csv"
    status = main(["eval", str(TREC / "qrels.test"), str(TREC / "results.test"), "-m", "map", "-q",
                   "-o", str(per_query), "--aggregate-out", str(agg), "--quiet"])
    assert status != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pq.parquet" in err[0] and "disk full" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_api_failure_finishing_the_per_query_file_leaves_no_aggregate(tmp_path, monkeypatch):
    _full_disk_at_the_footer(monkeypatch)
    per_query, agg = tmp_path / "pq.parquet", tmp_path / "agg.parquet"
    with pytest.raises(fasteval.errors.OutputError, match="disk full"):
        fasteval.batch.evaluate_files(TREC / "qrels.test", TREC / "results.test", ["map"], out=per_query,
                                aggregate_out=agg)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_both_outputs_written_when_nothing_fails(tmp_path):
    per_query, agg = tmp_path / "pq.parquet", tmp_path / "agg.csv"
    res = fasteval.batch.evaluate_files(TREC / "qrels.test", TREC / "results.test", ["map"], out=per_query,
                                  aggregate_out=agg)
    written = pl.read_parquet(per_query)
    direct = fasteval.evaluate(fasteval.read_qrels(TREC / "qrels.test"),
                               fasteval.read_run(TREC / "results.test"), ["map"])
    assert written.height == direct.height == 3
    assert written.get_column("value").to_list() == direct.get_column("value").to_list()
    mean = written.get_column("value").mean()
    assert pl.read_csv(agg).get_column("value").to_list() == pytest.approx([mean], abs=1e-12)
    assert res.aggregate.get_column("value").to_list() == pytest.approx([mean], abs=1e-12)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agg.csv", "pq.parquet"]


def test_aggregates_on_standard_output_are_the_text_table(tmp_path, capsys):
    per_query = tmp_path / "pq.parquet"
    status = main(["eval", str(TREC / "qrels.test"), str(TREC / "results.test"), "-m", "map", "-q",
                   "-o", str(per_query), "--aggregate-out", "-", "--quiet"])
    assert status == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["run_id", "measure", "value"]
    assert out[1].split() == ["results.test", "map", "0.1785"]
    assert pl.read_parquet(per_query).height == 3
