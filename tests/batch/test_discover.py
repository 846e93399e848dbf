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
    RUN.rename({"score": "points"}).write_parquet(tmp_path / "c.parquet")
    with pytest.raises(InputError) as err:
        discover(tmp_path)
    msg = _one_line(err.value)
    assert "c.parquet" in msg and "'score'" in msg and "points" in msg


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
    """A date is no score (read_run refuses it too); text is read as numbers, row by row."""
    import datetime

    RUN.with_columns(pl.lit(datetime.date(2020, 1, 1)).alias("score")).write_parquet(tmp_path / "s.parquet")
    with pytest.raises(InputError, match=r"s\.parquet.*score.*numeric"):
        discover(tmp_path / "s.parquet")
    RUN.with_columns(pl.col("score").cast(pl.Utf8)).write_parquet(tmp_path / "s.parquet")
    assert discover(tmp_path / "s.parquet")[0].rows == 3


def test_missing_path(tmp_path):
    with pytest.raises(InputError) as err:
        discover(tmp_path / "nope.parquet")
    assert str(err.value) == f"{tmp_path / 'nope.parquet'}: file not found"


def test_empty_glob(tmp_path):
    with pytest.raises(InputError, match="glob matches no parquet file"):
        discover(str(tmp_path / "*.parquet"))


def test_columns_found_by_the_readers_aliases(tmp_path):
    """PyTerrier's qid/docno, sim, runid: each file mapped as fasteval.read_run maps it."""
    path = tmp_path / "pyterrier.parquet"
    pl.DataFrame({"qid": ["q1"], "docno": ["d1"], "score": [1.0], "rank": [0]}).write_parquet(path)
    (src,) = discover(path)
    assert src.maps == [{"query_id": "qid", "doc_id": "docno", "score": "score", "rank": "rank"}]
    assert not src.has_run_id
    pl.DataFrame({"QID": ["q1"], "DocId": ["d1"], "sim": [1.0], "runid": ["x"]}).write_parquet(path)
    (src,) = discover(path)
    assert src.maps == [{"query_id": "QID", "doc_id": "DocId", "score": "sim", "run_id": "runid"}]
    assert src.has_run_id


def test_missing_columns_name_the_accepted_names(tmp_path):
    path = tmp_path / "odd.parquet"
    pl.DataFrame({"topic_no": ["q1"], "docno": ["d1"], "points": [1.0]}).write_parquet(path)
    with pytest.raises(InputError) as err:
        discover(path)
    assert err.value.column == "query_id" and err.value.source == str(path)
    msg = _one_line(err.value)
    assert msg.startswith(f"{path}, column 'query_id': missing column(s) ['query_id', 'score']; "
                          "expected ['query_id', 'doc_id', 'score'] or another name fasteval.read_run "
                          "accepts for them (any case; query_id: qid, ")
    assert "score: sim, similarity, relevance_score), found ['topic_no', 'docno', 'points']" in msg
    assert "rename" not in msg


def test_parts_spelled_differently_are_mapped_each(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    RUN.write_parquet(d / "p0.parquet")
    RUN.rename({"query_id": "qid", "doc_id": "docno"}).write_parquet(d / "p1.parquet")
    (src,) = discover(str(d / "*.parquet"))
    assert [m["query_id"] for m in src.maps] == ["query_id", "qid"] and src.rows == 6


@pytest.mark.parametrize("extra", ["rank", "runid"])
def test_parts_must_agree_on_rank_and_run_id(tmp_path, extra):
    d = tmp_path / "run"
    d.mkdir()
    RUN.write_parquet(d / "p0.parquet")
    RUN.with_columns(pl.Series(extra, [1, 2, 3] if extra == "rank" else ["a", "a", "b"])).write_parquet(
        d / "p1.parquet")
    canon = "rank" if extra == "rank" else "run_id"
    with pytest.raises(InputError) as err:
        discover(str(d / "*.parquet"))
    assert err.value.column == canon and err.value.source == str(d / "p1.parquet")
    assert _one_line(err.value).endswith(
        f"{d / 'p1.parquet'} has a {canon} but {d / 'p0.parquet'} has none; the parts of one "
        "table need the same run columns")


def test_hive_folder_of_a_run_id_alias(tmp_path):
    for name in ("x", "y"):
        d = tmp_path / f"system={name}"
        d.mkdir()
        RUN.rename({"query_id": "qid"}).write_parquet(d / "0.parquet")
    (src,) = discover(tmp_path)
    assert src.has_run_id and [h["run_id"] for h in src.hive] == ["x", "y"]
    assert src.maps[0] == {"query_id": "qid", "doc_id": "doc_id", "score": "score"}


def test_hive_folder_may_not_give_the_query_id(tmp_path):
    d = tmp_path / "qid=1"
    d.mkdir()
    RUN.drop("query_id").write_parquet(d / "0.parquet")
    with pytest.raises(InputError) as err:
        discover(tmp_path)
    assert err.value.column == "qid"
    assert "the query_id would come from the folder names (qid=...), which may give the run id only" in str(
        err.value)


def _unlistable(monkeypatch, folder):
    """Make ``folder`` fail to list as a folder without search permission does (root, who
    runs the tests in containers, would list one with mode 000)."""
    import errno
    import os

    scandir = os.scandir

    def refusing(path=".", *args):
        if os.fspath(path) == os.fspath(folder):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return scandir(path, *args)

    monkeypatch.setattr(os, "scandir", refusing)


@pytest.mark.parametrize("layout", ["runs", "hive"])
def test_a_sub_folder_that_cannot_be_listed_is_an_error_not_a_lost_run(tmp_path, monkeypatch, layout):
    names = ("bm25", "dense") if layout == "runs" else ("run_id=bm25", "run_id=dense")
    for name in names:
        (tmp_path / name).mkdir()
        RUN.write_parquet(tmp_path / name / "part-0.parquet")
    _unlistable(monkeypatch, tmp_path / names[1])
    with pytest.raises(InputError) as err:
        discover(tmp_path)
    assert str(err.value) == (f"{tmp_path / names[1]}: cannot list the folder (Permission denied); "
                              "expected a folder this user may read")


def test_a_run_folder_that_cannot_be_listed_is_named(tmp_path, monkeypatch):
    (tmp_path / "bm25").mkdir()
    RUN.write_parquet(tmp_path / "bm25" / "part-0.parquet")
    _unlistable(monkeypatch, tmp_path / "bm25")
    with pytest.raises(InputError, match="bm25: cannot list the folder \\(Permission denied\\)"):
        discover(tmp_path / "bm25")


def test_symbolic_links_that_lead_nowhere_are_named(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "dangling").symlink_to("gone.parquet")
    with pytest.raises(InputError) as err:
        discover(tmp_path / "a")
    assert str(err.value) == f"{tmp_path / 'a'}: cannot be reached (Too many levels of symbolic links)"
    with pytest.raises(InputError) as err:
        discover(tmp_path / "dangling")
    assert str(err.value) == (f"{tmp_path / 'dangling'}: file not found (a symbolic link to "
                              "'gone.parquet', which does not exist)")


def _empty_part(path):
    RUN.clear().write_parquet(path)


@pytest.mark.parametrize("layout", ["parts", "hive", "subdir", "glob"])
def test_empty_parts_among_parts_count_no_rows(tmp_path, layout):
    """A part of no rows beside others (as Spark writes for an empty partition) adds no rows:
    the run is scored as without it, as fasteval.evaluate scores the rows."""
    import fasteval
    from fasteval.batch.api import evaluate_files

    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "c"], "relevance": [1, 1]})
    runs = tmp_path / "runs"
    if layout == "hive":
        folder = runs / "run_id=x"
    elif layout == "subdir":
        folder = runs / "x"
    else:
        folder = runs
    folder.mkdir(parents=True)
    table = RUN.with_columns(pl.lit("x").alias("run_id")) if layout in ("parts", "glob") else RUN
    table.clear().write_parquet(folder / "part-0.parquet")
    table.slice(0, 2).write_parquet(folder / "part-1.parquet")
    table.clear().write_parquet(folder / "part-2.parquet")
    table.slice(2).write_parquet(folder / "part-3.parquet")
    spec = str(runs / "*.parquet") if layout == "glob" else str(runs)
    (src,) = discover(spec)
    assert src.rows == 3 and len(src.files) == 4
    for chunk in (1, 2, None):
        res = evaluate_files(qrels, spec, ["P@1", "num_ret"], max_rows_per_chunk=chunk)
        ref = fasteval.evaluate(qrels, RUN, ["P@1", "num_ret"], run_id="x")
        assert sorted(res.per_query.rows()) == sorted(ref.rows())


@pytest.mark.parametrize("layout", ["parts", "one"])
def test_runs_of_no_rows_are_refused(tmp_path, layout):
    """One empty file is an empty run; parts that are all empty are one too."""
    if layout == "one":
        _empty_part(tmp_path / "r.parquet")
        with pytest.raises(InputError, match=r"r\.parquet: no rows \(empty table\)"):
            discover(tmp_path / "r.parquet")
        return
    (tmp_path / "x").mkdir()
    _empty_part(tmp_path / "x" / "p0.parquet")
    _empty_part(tmp_path / "x" / "p1.parquet")
    with pytest.raises(InputError, match="x: no rows: its 2 parquet files are all empty"):
        discover(tmp_path)


def test_hive_values_are_percent_decoded(tmp_path):
    """Run names that cannot be folder names as they are, written by pyarrow's hive
    partitioning (``run_id=bm25%2Fdense``), are named as the ``run_id`` column named them,
    as polars reads them; a run_id column under such a folder agrees with it."""
    import pyarrow.dataset as ds

    import fasteval
    from fasteval.batch.api import evaluate_files

    names = ["bm25/dense", "a b%c", "x:y"]
    table = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"],
                          "score": [3.0, 2.0, 1.0], "run_id": names})
    ds.write_dataset(table.to_arrow(), tmp_path / "hive", format="parquet",
                     partitioning=["run_id"], partitioning_flavor="hive")
    assert sorted(p.name for p in (tmp_path / "hive").iterdir()) == \
        ["run_id=a%20b%25c", "run_id=bm25%2Fdense", "run_id=x%3Ay"]
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "c"], "relevance": [1, 1]})
    res = evaluate_files(qrels, tmp_path / "hive", ["P@1"])
    ref = fasteval.evaluate(qrels, table, ["P@1"])
    assert sorted(res.per_query.rows()) == sorted(ref.rows())
    assert sorted(res.per_query.get_column("run_id").to_list()) == sorted(names)
    # the same files with their run_id column kept: the column and the folder agree
    folders = {"run_id=a%20b%25c": "a b%c", "run_id=bm25%2Fdense": "bm25/dense", "run_id=x%3Ay": "x:y"}
    for folder, name in folders.items():
        (part,) = (tmp_path / "hive" / folder).iterdir()
        pl.read_parquet(part).with_columns(pl.lit(name).alias("run_id")).write_parquet(part)
    res = evaluate_files(qrels, tmp_path / "hive", ["P@1"])
    assert sorted(res.per_query.rows()) == sorted(ref.rows())


@pytest.mark.parametrize("pattern", ["*/*.parquet", "**/*.parquet", "run_id=[ab]/*.parquet"])
def test_glob_over_hive_folders_keeps_the_runs_apart(tmp_path, pattern):
    """A glob matching run_id=NAME/ folders reads them as the directory does: two runs, not
    one run holding both rankings."""
    import fasteval
    from fasteval.batch.api import evaluate_files

    for name, docs in (("a", ["d1", "d2"]), ("b", ["d3", "d4"])):
        (tmp_path / f"run_id={name}").mkdir()
        pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": docs, "score": [2.0, 1.0]}).write_parquet(
            tmp_path / f"run_id={name}" / "part-0.parquet")
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d3"], "relevance": [1]})
    (src,) = discover(f"{tmp_path}/{pattern}")
    assert src.has_run_id and src.hive == [{"run_id": "a"}, {"run_id": "b"}]
    res = evaluate_files(qrels, f"{tmp_path}/{pattern}", ["num_ret", "P@1"])
    ref = evaluate_files(qrels, tmp_path, ["num_ret", "P@1"])
    assert sorted(res.per_query.rows()) == sorted(ref.per_query.rows()) == [
        ("a", "q1", "P@1", 0.0), ("a", "q1", "num_ret", 2.0),
        ("b", "q1", "P@1", 1.0), ("b", "q1", "num_ret", 2.0)]
    assert fasteval.aggregate(res.per_query).height == 4


def test_key_value_folders_inside_run_folders_keep_the_runs(tmp_path):
    """bm25/lang=en/ and dense/lang=en/: the key=value folders name no run, so the folders
    above them are runs, as without them (the two rankings were pooled into one run)."""
    for name in ("bm25", "dense"):
        (tmp_path / name / "lang=en").mkdir(parents=True)
        RUN.write_parquet(tmp_path / name / "lang=en" / "part-0.parquet")
    assert [(s.name, s.rows, s.has_run_id) for s in discover(tmp_path)] == \
        [("bm25", 3, False), ("dense", 3, False)]


def test_key_value_folders_at_the_top_stay_one_table(tmp_path):
    """lang=en/, lang=fr/ directly inside: one table (its run named after the folder); a
    run_id=NAME/ folder below a plain folder still names the runs."""
    for lang in ("en", "fr"):
        (tmp_path / "t" / f"lang={lang}").mkdir(parents=True)
        RUN.write_parquet(tmp_path / "t" / f"lang={lang}" / "part-0.parquet")
    assert [(s.name, s.rows, s.has_run_id) for s in discover(tmp_path / "t")] == [("t", 6, False)]
    for name in ("x", "y"):
        (tmp_path / "h" / "2024" / f"run_id={name}").mkdir(parents=True)
        RUN.write_parquet(tmp_path / "h" / "2024" / f"run_id={name}" / "part-0.parquet")
    (src,) = discover(tmp_path / "h")
    assert src.has_run_id and src.hive == [{"run_id": "x"}, {"run_id": "y"}]


def test_linked_run_folders_are_runs(tmp_path):
    """A run folder that is a symbolic link (to parts kept elsewhere) is a run, as a real
    folder is (it was skipped without a word); a link to a folder above it is refused."""
    import os

    (tmp_path / "runs").mkdir()
    (tmp_path / "store" / "dense").mkdir(parents=True)
    RUN.write_parquet(tmp_path / "runs" / "bm25.parquet")
    RUN.write_parquet(tmp_path / "store" / "dense" / "p0.parquet")
    (tmp_path / "runs" / "dense").symlink_to(tmp_path / "store" / "dense")
    assert [(s.name, s.rows) for s in discover(tmp_path / "runs")] == [("bm25", 3), ("dense", 3)]
    (tmp_path / "store" / "dense" / "up").symlink_to(tmp_path / "store")
    with pytest.raises(InputError) as err:
        discover(tmp_path / "runs")
    assert str(err.value) == (
        f"{tmp_path / 'runs' / 'dense' / 'up'}: a symbolic link to a folder that holds it "
        f"({os.path.realpath(tmp_path / 'store')}); expected folders of runs or parts without loops")


def test_key_value_folders_with_a_run_id_column_stay_one_table(tmp_path):
    """Files with a run_id column below plain folders with key=value folders inside: one
    table, its runs named by the column (a run may span the folders)."""
    for batch in ("b1", "b2"):
        (tmp_path / batch / "lang=en").mkdir(parents=True)
        RUN.with_columns(pl.lit("bm25").alias("run_id")).write_parquet(
            tmp_path / batch / "lang=en" / "part-0.parquet")
    (src,) = discover(tmp_path)
    assert src.has_run_id and src.rows == 6 and len(src.files) == 2
