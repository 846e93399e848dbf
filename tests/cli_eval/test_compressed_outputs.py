"""Outputs named as compressed files (``res.csv.gz``) are refused before any work: eval
wrote its text table (``-o``) or parquet (``--aggregate-out``, ``evaluate_files(out=)``)
uncompressed under a name that says gzip CSV, which compare --results could not read."""

from __future__ import annotations

import polars as pl
import pytest

from fasteval.cli import main
from fasteval.errors import ParameterError


@pytest.fixture
def job(tmp_path):
    (tmp_path / "q.qrels").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\n")
    return tmp_path


@pytest.mark.parametrize("extra", [
    ["-q", "-o", "{d}/res.csv.gz"],
    ["-q", "--format", "csv", "-o", "{d}/res.csv.gz"],
    ["-o", "{d}/res.tsv.zst"],
    ["--aggregate-out", "{d}/agg.parquet.gz"],
])
def test_eval_refuses_compressed_output_names(job, capsys, extra) -> None:
    args = [a.replace("{d}", str(job)) for a in extra]
    assert main(["eval", str(job / "q.qrels"), str(job / "r.run"), "-m", "map", "--quiet", *args]) == 2
    err = capsys.readouterr().err
    assert "must be a path without a compression suffix" in err
    assert ("--aggregate-out" if "--aggregate-out" in extra else "-o/--output") in err
    assert sorted(p.name for p in job.iterdir()) == ["q.qrels", "r.run"]  # nothing written


def test_eval_still_writes_plain_outputs(job, capsys) -> None:
    assert main(["eval", str(job / "q.qrels"), str(job / "r.run"), "-m", "map", "-q", "--quiet",
                 "-o", str(job / "res.csv"), "--aggregate-out", str(job / "agg.tsv")]) == 0
    assert pl.read_csv(job / "res.csv").rows() == [("r.run", "q1", "map", 1.0)]
    assert pl.read_csv(job / "agg.tsv", separator="\t").rows() == [("r.run", "map", 1.0)]


def test_evaluate_files_refuses_a_compressed_out(job) -> None:
    from fasteval.batch import evaluate_files

    qrels, runs = str(job / "q.qrels"), [str(job / "r.run")]
    with pytest.raises(ParameterError, match="out must be a path without a compression suffix"):
        evaluate_files(qrels, runs, ["map"], out=str(job / "res.jsonl.gz"))
    with pytest.raises(ParameterError, match="aggregate_out must be a path without a compression"):
        evaluate_files(qrels, runs, ["map"], aggregate_out=str(job / "agg.csv.gz"))
    assert sorted(p.name for p in job.iterdir()) == ["q.qrels", "r.run"]
