"""Runs given twice, overlapping globs, directories mixing formats, null ids streamed from
parquet: refused with a one-line error, or read in full, never merged or skipped silently."""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.batch.api import evaluate_files
from fasteval.batch.discover import discover, discover_all
from fasteval.cli import main
from fasteval.errors import InputError

QRELS = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 1]})
RUN = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
TEXT_RUN = "q1 Q0 b 1 3.0 t\nq1 Q0 a 2 2.0 t\nq2 Q0 x 1 1.0 t\n"  # P@1: 0 and 0


def _one_line(err: Exception) -> str:
    text = str(err)
    assert "\n" not in text
    return text


def test_the_same_file_twice_is_refused(tmp_path):
    RUN.write_parquet(tmp_path / "bm25.parquet")
    with pytest.raises(InputError, match="given twice") as exc:
        discover_all([tmp_path / "bm25.parquet", str(tmp_path / "bm25.parquet")])
    assert exc.value.source == str(tmp_path / "bm25.parquet")
    _one_line(exc.value)


def test_overlapping_globs_are_refused(tmp_path):
    RUN.write_parquet(tmp_path / "bm25.parquet")
    RUN.write_parquet(tmp_path / "dense.parquet")
    with pytest.raises(InputError, match="given twice"):
        discover_all([str(tmp_path / "*.parquet"), str(tmp_path / "b*.parquet")])


def test_one_run_name_in_two_inputs_is_refused(tmp_path):
    RUN.with_columns(pl.lit("bm25").alias("run_id")).write_parquet(tmp_path / "a.parquet")
    RUN.with_columns(pl.lit("bm25").alias("run_id")).write_parquet(tmp_path / "b.parquet")
    with pytest.raises(InputError, match="'bm25' is also in an earlier input"):
        evaluate_files(QRELS, [tmp_path / "a.parquet", tmp_path / "b.parquet"], ["P@1"])


def test_a_directory_of_runs_reads_every_run_format(tmp_path):
    RUN.write_parquet(tmp_path / "dense.parquet")
    (tmp_path / "bm25.txt").write_text(TEXT_RUN)
    assert [(s.name, s.kind) for s in discover(tmp_path)] == [("bm25.txt", "file"), ("dense", "parquet")]
    res = evaluate_files(QRELS, tmp_path, ["P@1", "num_ret"])
    got = {(r, m): v for r, m, v in res.aggregate.rows()}
    assert got == {("bm25.txt", "P@1"): 0.0, ("bm25.txt", "num_ret"): 3.0,
                   ("dense", "P@1"): 1.0, ("dense", "num_ret"): 3.0}


def test_files_of_no_run_format_are_listed_not_skipped(tmp_path):
    RUN.write_parquet(tmp_path / "dense.parquet")
    (tmp_path / "notes.md").write_text("# runs\n")
    (tmp_path / "bm25").write_text(TEXT_RUN)  # no suffix: not guessed
    with pytest.raises(InputError) as exc:
        discover(tmp_path)
    text = _one_line(exc.value)
    assert "bm25" in text and "notes.md" in text and exc.value.source == str(tmp_path)


def test_non_parquet_files_among_parquet_parts_are_listed(tmp_path):
    RUN.with_columns(pl.lit("a").alias("run_id")).write_parquet(tmp_path / "p0.parquet")
    (tmp_path / "p1.csv").write_text("run_id,query_id,doc_id,score\nb,q1,a,1.0\n")
    with pytest.raises(InputError, match="p1.csv"):
        discover(tmp_path)


@pytest.mark.parametrize("max_rows", [2, 100])
def test_null_query_id_in_a_streamed_parquet_run_names_file_row_and_column(tmp_path, max_rows):
    p = tmp_path / "run.parquet"
    pl.DataFrame({"query_id": ["q1", "q1", "q2", None, None, "q2"], "doc_id": list("abcdef"),
                  "score": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]}).write_parquet(p)
    with pytest.raises(InputError) as exc:
        evaluate_files(QRELS, p, ["num_ret"], max_rows_per_chunk=max_rows)
    assert (exc.value.source, exc.value.column) == (str(p), "query_id")
    assert exc.value.row == 3  # the first null, counted from the start of the file


@pytest.mark.parametrize("max_rows", [2, 100])
@pytest.mark.parametrize("bad", [float("nan"), None])
def test_bad_score_in_an_ungrouped_parquet_run_names_its_row(tmp_path, max_rows, bad):
    # queries interleaved: the job partitions the rows by query, after which a chunk's
    # rows do not count from the start of the file; the row is found while reading
    p = tmp_path / "run.parquet"
    pl.DataFrame({"query_id": ["q1", "q2", "q1", "q2", "q1", "q2"], "doc_id": list("abcdef"),
                  "score": [6.0, 5.0, 4.0, 3.0, bad, 1.0]}).write_parquet(p, row_group_size=2)
    with pytest.raises(InputError) as exc:
        evaluate_files(QRELS, p, ["num_ret"], max_rows_per_chunk=max_rows)
    assert (exc.value.source, exc.value.row, exc.value.column) == (str(p), 4, "score")
    what = "NaN (not a number)" if bad is not None else "missing (null)"
    assert _one_line(exc.value).endswith(f"row 4, column 'score': score is {what}")


def test_null_run_id_in_a_streamed_parquet_run_is_refused(tmp_path):
    p = tmp_path / "runs.parquet"
    RUN.with_columns(pl.Series("run_id", ["a", None, "a"])).write_parquet(p)
    with pytest.raises(InputError) as exc:
        evaluate_files(QRELS, p, ["num_ret"])
    assert (exc.value.row, exc.value.column) == (1, "run_id")


def test_eval_cli_refuses_a_run_given_twice_in_one_line(tmp_path, capsys):
    q = tmp_path / "qrels.txt"
    q.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n")
    r = tmp_path / "bm25.txt"
    r.write_text(TEXT_RUN)
    rc = main(["eval", str(q), str(r), str(r), "-m", "P@1"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "given twice" in err


def test_evaluate_files_counts_each_row_once(tmp_path):
    # the reference: one run scored once in memory
    RUN.write_parquet(tmp_path / "bm25.parquet")
    res = evaluate_files(QRELS, tmp_path / "bm25.parquet", ["num_ret"])
    mem = fasteval.aggregate(fasteval.evaluate(QRELS, {"bm25": RUN}, ["num_ret"]))
    assert res.aggregate.rows() == mem.rows() == [("bm25", "num_ret", 3.0)]


@pytest.mark.parametrize("with_run_id", [False, True])
def test_repeated_document_names_its_row_when_read_partitioned(tmp_path, capsys, with_run_id):
    """A run not grouped by query is read hash-partitioned, which loses the rows' numbers:
    the repeated (query, doc) row is found again in the file (row 4, as unchunked), also
    when another run in the file holds the same pair."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = {"query_id": ["q1", "q2", "q1", "q2", "q1", "q2"],
            "doc_id": ["a", "c", "b", "d", "a", "e"], "score": [6.0, 5, 4, 3, 2, 1]}
    if with_run_id:  # run "x" holds q1/a once, before the file's repeat in run "y"
        cols = {k: v[:1] + v for k, v in cols.items()}
        cols["run_id"] = ["x"] + ["y"] * 6
    run = tmp_path / "r.parquet"
    pq.write_table(pa.table(cols), run, row_group_size=2)
    qrels = tmp_path / "q.parquet"
    pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "c"], "relevance": [1, 1]}).write_parquet(qrels)
    row = 5 if with_run_id else 4
    for chunking in (["--max-rows-per-chunk", "2"], []):
        assert main(["eval", str(qrels), str(run), "-m", "map", "--quiet", *chunking]) == 2
        err = capsys.readouterr().err
        assert f"r.parquet, row {row}, column 'doc_id': document 'a' appears more than once for query 'q1'" in err, (chunking, err)


def test_repeated_document_in_a_hive_folder_names_its_file_and_row(tmp_path, capsys):
    """Runs named by their folders (runs/run_id=c/...): the repeated row is looked for in
    its own run's files only (the same pair in other runs' files is no repeat)."""
    runs = tmp_path / "runs"
    for r, docs in (("a", ["b", "y"]), ("b", ["b", "z"]), ("c", ["x", "b", "b"])):
        (runs / f"run_id={r}").mkdir(parents=True)
        pl.DataFrame({"query_id": ["q1"] * len(docs), "doc_id": docs,
                      "score": [float(len(docs) - i) for i in range(len(docs))]}).write_parquet(
            runs / f"run_id={r}" / "part.parquet")
    qrels = tmp_path / "q.parquet"
    pl.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "relevance": [1]}).write_parquet(qrels)
    assert main(["eval", str(qrels), str(runs), "-m", "map", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "run_id=c/part.parquet, row 2, column 'doc_id': document 'b' appears more than once" in err
