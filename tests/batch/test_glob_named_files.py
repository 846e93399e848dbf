"""``fasteval eval`` on parquet runs whose file names hold glob characters
(``bm25[k1=0.9].parquet``): each is the file it names (polars took the name for a pattern,
found no file, and the run was refused as unreadable)."""

from __future__ import annotations

import polars as pl

from fasteval.cli import main


def test_eval_reads_parquet_runs_named_like_patterns(tmp_path, capsys) -> None:
    (tmp_path / "q.qrels").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n")
    good = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
    bad = good.with_columns(pl.Series("score", [1.0, 2.0, 1.0]))
    good.write_parquet(tmp_path / "bm25[k1=0.9].parquet")
    bad.write_parquet(tmp_path / "bm25[k1=1.2].parquet")
    runs = tmp_path / "runs"
    runs.mkdir()
    bad.write_parquet(runs / "dense[v2].parquet")
    assert main(["eval", str(tmp_path / "q.qrels"), str(tmp_path / "bm25[k1=0.9].parquet"),
                 str(tmp_path / "bm25[k1=1.2].parquet"), str(runs), "-m", "P@1", "--quiet"]) == 0
    lines = [ln.split() for ln in capsys.readouterr().out.splitlines()]
    assert lines == [["measure", "bm25[k1=0.9]", "bm25[k1=1.2]", "dense[v2]"], ["P@1", "1.0000", "0.5000", "0.5000"]]
