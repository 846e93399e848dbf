"""Files whose names hold glob characters (``bm25[k1=0.9].parquet``) are read as the files
they name; polars took such a name for a pattern and found no file. A pattern that
matches nothing is named as such."""

from __future__ import annotations

import polars as pl
import pytest

from fasteval.errors import InputError
from fasteval.io.files import read_table_file
from fasteval.io.readers import read_qrels, read_run, scan_run
from fasteval.io.subtopics import read_subtopic_qrels

RUN = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, 2.0]})


def _write(path, fmt: str) -> None:
    if fmt == "parquet":
        RUN.write_parquet(path)
    elif fmt == "csv":
        RUN.write_csv(path)
    elif fmt == "jsonl":
        RUN.write_ndjson(path)
    else:
        path.write_text("q1 Q0 a 2 1.0 t\nq1 Q0 b 1 2.0 t\n")


@pytest.mark.parametrize("stem", ["bm25[k1=0.9]", "run?", "run*"])
@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl", "trec"])
def test_a_file_named_like_a_pattern_is_read(tmp_path, stem, fmt) -> None:
    p = tmp_path / f"{stem}.{fmt}"
    _write(p, fmt)
    (tmp_path / f"run_other.{fmt}").write_bytes(p.read_bytes())  # a pattern would match it too
    expect = RUN.rows()
    assert read_run(p).select("query_id", "doc_id", "score").rows() == expect
    assert scan_run(p).collect().select("query_id", "doc_id", "score").rows() == expect


def test_qrels_subtopics_and_table_files_named_like_patterns(tmp_path) -> None:
    q = pl.DataFrame({"query_id": ["q1"], "subtopic": ["1"], "doc_id": ["a"], "relevance": [1]})
    for name in ("q[1].parquet", "q[1].csv"):
        p = tmp_path / name
        q.write_parquet(p) if name.endswith("parquet") else q.write_csv(p)
        assert read_qrels(p).rows() == [("q1", "a", 1)]
        assert read_subtopic_qrels(p).rows() == [("q1", "1", "a", 1)]
        assert read_table_file(str(p), text=True).get_column("doc_id").to_list() == ["a"]


def test_a_pattern_that_matches_nothing_is_named(tmp_path) -> None:
    with pytest.raises(InputError, match="no file has this name or matches it as a pattern"):
        read_run(tmp_path / "part-*.parquet")
