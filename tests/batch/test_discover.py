"""Run discovery: files, globs, directories of runs, hive partitions, and bad files."""

from __future__ import annotations

import polars as pl
import pytest

from fasteval.batch.discover import discover, discover_all
from fasteval.errors import InputError

RUN = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})


def test_directory_of_runs_one_per_file_and_subdir(tmp_path):
    RUN.write_parquet(tmp_path / "bm25.parquet")
    RUN.write_parquet(tmp_path / "dense.parquet")
    (tmp_path / "splade").mkdir()
    RUN.write_parquet(tmp_path / "splade" / "part-0.parquet")
    RUN.write_parquet(tmp_path / "splade" / "part-1.parquet")
    srcs = discover(tmp_path)
    assert [(s.name, len(s.files), s.rows) for s in srcs] == [("bm25", 1, 3), ("dense", 1, 3), ("splade", 2, 6)]


def test_directory_with_run_id_column_is_one_table(tmp_path):
    RUN.with_columns(pl.lit("a").alias("run_id")).write_parquet(tmp_path / "p0.parquet")
    RUN.with_columns(pl.lit("b").alias("run_id")).write_parquet(tmp_path / "p1.parquet")
    (src,) = discover(tmp_path)
    assert src.has_run_id and src.rows == 6 and len(src.files) == 2


def test_hive_partitions(tmp_path):
    for name in ("x", "y"):
        d = tmp_path / f"run_id={name}"
        d.mkdir()
        RUN.write_parquet(d / "0.parquet")
    (src,) = discover(tmp_path)
    assert src.has_run_id and src.hive == [{"run_id": "x"}, {"run_id": "y"}]


def test_hive_folder_and_run_id_column_must_agree(tmp_path):
    d = tmp_path / "run_id=x"
    d.mkdir()
    RUN.with_columns(pl.Series("run_id", ["x", "x", "x"])).write_parquet(d / "0.parquet")
    (src,) = discover(tmp_path)  # the same name twice: accepted
    assert src.has_run_id and src.rows == 3
    RUN.with_columns(pl.Series("run_id", ["x", None, "y"])).write_parquet(d / "0.parquet")
    with pytest.raises(InputError) as err:
        discover(tmp_path)
    assert err.value.row == 1 and err.value.column == "run_id" and err.value.source == str(d / "0.parquet")
    assert "run_id None differs from the folder's run_id=x" in str(err.value)


def test_glob_is_one_table(tmp_path):
    d = tmp_path / "bm25"
    d.mkdir()
    for i in range(3):
        RUN.write_parquet(d / f"part-{i}.parquet")
    (src,) = discover(str(d / "part-*.parquet"))
    assert src.name == "bm25" and src.rows == 9


def test_duplicate_names_made_unique(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        RUN.write_parquet(tmp_path / sub / "run.parquet")
    srcs = discover_all([tmp_path / "a" / "run.parquet", tmp_path / "b" / "run.parquet"])
    assert len({s.name for s in srcs}) == 2


def _one_line(exc: Exception) -> str:
    text = str(exc)
    assert "\n" not in text
    return text


def test_empty_file_in_directory(tmp_path):
    RUN.write_parquet(tmp_path / "good.parquet")
    (tmp_path / "empty.parquet").write_bytes(b"")
    with pytest.raises(InputError) as err:
        discover(tmp_path)
    msg = _one_line(err.value)
    assert "empty.parquet" in msg and "empty" in msg


def test_zero_row_file(tmp_path):
    RUN.clear().write_parquet(tmp_path / "none.parquet")
    with pytest.raises(InputError, match=r"none\.parquet.*no rows"):
        discover(tmp_path / "none.parquet")


def test_corrupt_file_in_directory(tmp_path):
    RUN.write_parquet(tmp_path / "a.parquet")
    good = (tmp_path / "a.parquet").read_bytes()
    (tmp_path / "b.parquet").write_bytes(good[: len(good) // 2] + b"garbage")
    with pytest.raises(InputError) as err:
        discover(tmp_path)
    msg = _one_line(err.value)
    assert "b.parquet" in msg and "not a readable parquet file" in msg


def test_wrong_schema_in_directory(tmp_path):
    RUN.write_parquet(tmp_path / "a.parquet")
    RUN.rename({"score": "sim"}).write_parquet(tmp_path / "c.parquet")
    with pytest.raises(InputError) as err:
        discover(tmp_path)
    msg = _one_line(err.value)
    assert "c.parquet" in msg and "'score'" in msg and "sim" in msg


def test_mismatched_types_across_parts(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    RUN.write_parquet(d / "p0.parquet")
    RUN.with_columns(pl.Series("query_id", [1, 1, 2])).write_parquet(d / "p1.parquet")
    with pytest.raises(InputError) as err:
        discover(str(d / "*.parquet"))
    msg = _one_line(err.value)
    assert "p1.parquet" in msg and "query_id" in msg


def test_non_numeric_score(tmp_path):
    RUN.with_columns(pl.col("score").cast(pl.Utf8)).write_parquet(tmp_path / "s.parquet")
    with pytest.raises(InputError, match=r"s\.parquet.*score.*numeric"):
        discover(tmp_path / "s.parquet")


def test_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError):
        discover(tmp_path / "nope.parquet")


def test_empty_glob(tmp_path):
    with pytest.raises(InputError, match="glob matches no parquet file"):
        discover(str(tmp_path / "*.parquet"))


def test_missing_columns_name_the_look_alikes_to_rename(tmp_path):
    path = tmp_path / "pyterrier.parquet"
    pl.DataFrame({"qid": ["q1"], "docno": ["d1"], "score": [1.0], "rank": [0]}).write_parquet(path)
    with pytest.raises(InputError) as err:
        discover(path)
    assert err.value.column == "query_id" and err.value.source == str(path)
    assert err.value.message == (
        "missing column(s) ['query_id', 'doc_id']; expected ['query_id', 'doc_id', 'score'], found "
        "['qid', 'docno', 'score', 'rank']; rename 'qid' to 'query_id', 'docno' to 'doc_id' (parquet "
        "runs are read by these names)")
