"""A parquet directory partitioned by id (``qid=01/``, ``qid=1/``) keeps the folders' ids
as written: polars inferred the integer 1 for both, merging two queries into one."""

from __future__ import annotations

import polars as pl

from fasteval import read_qrels, read_run, scan_run


def test_hive_folder_ids_are_read_as_written(tmp_path) -> None:
    for qid, doc, score in (("01", "a", 1.0), ("1", "b", 2.0), ("007", "c", 3.0)):
        part = tmp_path / "run" / f"qid={qid}"
        part.mkdir(parents=True)
        pl.DataFrame({"docno": [doc], "score": [score]}).write_parquet(part / "p.parquet")
    expected = {("01", "a", 1.0), ("1", "b", 2.0), ("007", "c", 3.0)}
    assert set(read_run(tmp_path / "run").rows()) == expected
    assert set(scan_run(tmp_path / "run").collect().rows()) == expected


def test_a_column_of_the_files_keeps_its_type(tmp_path) -> None:
    part = tmp_path / "qrels" / "qid=1"
    part.mkdir(parents=True)
    pl.DataFrame({"qid": [1], "docno": ["a"], "rel": [2]}).write_parquet(part / "p.parquet")
    got = read_qrels(tmp_path / "qrels")
    assert got.rows() == [(1, "a", 2)] and got.schema["query_id"] == pl.Int64


def test_subtopic_hive_folders_are_read_as_written(tmp_path) -> None:
    from fasteval.io.subtopics import read_subtopic_qrels

    for sub, doc in (("01", "a"), ("1", "b")):
        part = tmp_path / "sub" / f"subtopic={sub}"
        part.mkdir(parents=True)
        pl.DataFrame({"query_id": ["q"], "doc_id": [doc], "relevance": [1]}).write_parquet(part / "p.parquet")
    got = read_subtopic_qrels(tmp_path / "sub").select("subtopic", "doc_id").rows()
    assert sorted(got) == [("01", "a"), ("1", "b")]  # one subtopic 1 with both before
