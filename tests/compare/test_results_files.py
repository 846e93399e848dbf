"""Per-query result files read by compare: ids as written in CSV / TSV."""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.errors import InputError


def _long(run: str, qids: list, values: list[float]) -> pl.DataFrame:
    return pl.DataFrame({"run_id": [run] * len(qids), "query_id": qids,
                         "measure": ["map"] * len(qids), "value": values})


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_csv_query_ids_are_text(tmp_path, suffix) -> None:
    sep = "\t" if suffix == ".tsv" else ","
    a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    _long("a", ["01", "2", "3", "4"], [0.1, 0.2, 0.3, 0.4]).write_csv(a, separator=sep)
    _long("b", ["1", "2", "3", "4"], [0.2, 0.4, 0.3, 0.6]).write_csv(b, separator=sep)
    c = fasteval.compare([a, b], tests="t")
    # "01" and "1" are two queries: three are paired, each run lacks one
    assert c.means.select("n_used", "n_missing").rows() == [(3, 1), (3, 1)]
    assert c.effects.get_column("mean_diff")[0] == pytest.approx(-0.4 / 3)
    assert c.paired["map"].scores.shape == (2, 3)


def test_csv_pairs_with_integer_ids_of_parquet(tmp_path) -> None:
    a, b = tmp_path / "a.parquet", tmp_path / "b.csv"
    _long("a", [1, 2, 3], [0.1, 0.2, 0.3]).write_parquet(a)
    _long("b", [1, 2, 3], [0.2, 0.2, 0.5]).write_csv(b)
    c = fasteval.compare([a, b], tests="t")
    assert c.means.get_column("n_used").to_list() == [3, 3]
    assert c.effects.select("wins", "ties", "losses").row(0) == (0, 1, 2)


def test_files_sharing_a_stem_are_two_runs(tmp_path) -> None:
    """bm25/run.csv and dense/run.csv (no run_id column) are two runs, not one run 'run'
    with every query twice; a file given twice is refused by name."""
    from fasteval.errors import InputError

    (tmp_path / "bm25").mkdir()
    (tmp_path / "dense").mkdir()
    a, b = tmp_path / "bm25" / "run.csv", tmp_path / "dense" / "run.csv"
    pl.DataFrame({"query_id": ["1", "2", "3"], "map": [0.1, 0.2, 0.6]}).write_csv(a)
    pl.DataFrame({"query_id": ["1", "2", "3"], "map": [0.2, 0.4, 0.6]}).write_csv(b)
    c = fasteval.compare([a, b], tests="t", ci=None)
    assert c.systems == (str(a), str(b))
    assert c.means.get_column("mean").to_list() == pytest.approx([0.3, 0.4])
    assert c.effects.get_column("mean_diff").to_list() == pytest.approx([-0.1])
    with pytest.raises(InputError, match=r"results file given twice \(also as '.*bm25/run.csv'\)"):
        fasteval.compare([a, b, tmp_path / "bm25" / ".." / "bm25" / "run.csv"], tests="t")


def test_unreadable_results_files_are_one_line_errors(tmp_path, capsys) -> None:
    """A corrupt parquet, a ragged CSV, broken JSON lines or a directory is an InputError
    naming the file (compare and power printed polars' traceback)."""
    from fasteval.cli import main
    from fasteval.errors import InputError

    good = tmp_path / "a.csv"
    _long("a", ["1", "2", "3"], [0.1, 0.2, 0.3]).write_csv(good)
    cases = {
        "bad.parquet": (b"garbage\n", "cannot read the parquet file (parquet: File out of"),
        "bad.csv": (b"run_id,query_id,measure,value\nb,1,map,0.5,extra\n",
                    "line 2: 5 fields where the header has 4; expected one field per header column"),
        "bad.jsonl": (b'{"run_id": "b", "query_id": "1"\n', "cannot read the ndjson file ("),
    }
    for name, (data, message) in cases.items():
        bad = tmp_path / name
        bad.write_bytes(data)
        with pytest.raises(InputError, match=f"{name}(: |, )" + message.replace("(", r"\(")):
            fasteval.compare([good, bad], tests="t")
        for argv in (["compare", "--results", str(good), str(bad), "--test", "t"],
                     ["power", "--results", str(good), str(bad), "--min-diff", "0.1"]):
            assert main(argv) == 2
            err = capsys.readouterr().err
            sep = ", " if message.startswith("line ") else ": "
            assert err.startswith(f"fasteval: error: {bad}{sep}{message}") and err.count("\n") == 1
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(InputError, match="dir.csv: is a directory without parquet parts; "
                                         "expected a results file"):
        fasteval.compare([good, tmp_path / "dir.csv"], tests="t")


def test_results_from_a_directory_of_parquet_parts(tmp_path, capsys) -> None:
    """``fasteval eval --engine ray -q -o out.parquet`` writes a directory of parts (one
    writer call per id type: integer ids in one part, text in another); compare and power
    read it as one table."""
    from fasteval.cli import main

    out = tmp_path / "out.parquet"
    out.mkdir()
    _long("bm25", [1, 2, 3], [0.1, 0.4, 0.2]).write_parquet(out / "a_000000.parquet")
    _long("bm25", ["q4"], [0.5]).write_parquet(out / "b_000000.parquet")
    dense = pl.concat([_long("dense", [1, 2, 3], [0.3, 0.5, 0.6]).cast({"query_id": pl.Utf8}),
                       _long("dense", ["q4"], [0.9])])
    dense.write_parquet(out / "filled-queries.parquet")
    _long("junk", [1], [1.0]).write_parquet(out / ".part.parquet.tmp")  # a writer's leftover
    _long("junk", [1], [1.0]).write_parquet(out / "_hidden.parquet")
    c = fasteval.compare(out, tests="t", ci=None)
    assert c.systems == ("bm25", "dense")
    assert c.means["n_used"].to_list() == [4, 4]
    assert c.means["mean"].to_list() == pytest.approx([0.3, 0.575])
    t = c.tests.row(0, named=True)
    assert t["p_value"] == pytest.approx(0.0350815147154819, rel=1e-12)  # scipy ttest_rel
    assert main(["compare", "--results", str(out), "--test", "t", "--format", "csv"]) == 0
    assert "map,bm25,dense,t," in capsys.readouterr().out
    empty = tmp_path / "empty.parquet"
    empty.mkdir()
    assert main(["compare", "--results", str(empty), "--test", "t"]) == 2
    assert capsys.readouterr().err == (f"fasteval: error: {empty}: is a directory without "
                                       "parquet parts; expected a results file (.parquet, "
                                       ".csv, .tsv, .json or .jsonl) or a directory of parquet "
                                       "parts\n")


def test_results_from_a_fifo(tmp_path) -> None:
    """A FIFO (<(cmd)) is read once, whole: polars' memory map failed on it (ENODEV)."""
    import os
    import threading

    good = tmp_path / "a.csv"
    _long("a", ["1", "2", "3"], [0.1, 0.2, 0.3]).write_csv(good)
    fifo = tmp_path / "b.csv"
    os.mkfifo(fifo)
    data = _long("b", ["1", "2", "3"], [0.2, 0.4, 0.6]).write_csv().encode()
    writer = threading.Thread(target=lambda: fifo.write_bytes(data), daemon=True)
    writer.start()
    try:
        c = fasteval.compare([good, fifo], tests="t", ci=None)
    finally:
        writer.join(timeout=10)
    assert c.means.get_column("mean").to_list() == pytest.approx([0.2, 0.4])


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_result_files_named_like_glob_patterns(tmp_path, suffix) -> None:
    """bm25[k1=0.9].csv is the file it names (polars took it for a pattern: no file)."""
    paths = []
    for name, values in (("bm25[k1=0.9]", [0.1, 0.2, 0.3]), ("bm25[k1=1.2]", [0.2, 0.2, 0.5])):
        df = _long(name, ["1", "2", "3"], values).drop("run_id")
        p = tmp_path / f"{name}{suffix}"
        {".parquet": df.write_parquet, ".csv": df.write_csv, ".jsonl": df.write_ndjson}[suffix](p)
        paths.append(p)
    c = fasteval.compare(paths, tests="t")
    assert c.means.get_column("run_id").to_list() == ["bm25[k1=0.9]", "bm25[k1=1.2]"]
    assert c.effects.select("wins", "ties", "losses").row(0) == (0, 1, 2)


def test_json_results_written_by_eval_are_read(tmp_path) -> None:
    # fasteval eval -q -o x.json writes a JSON array of rows: compare reads it back
    from fasteval.cli import main

    trec = fasteval.__file__.rsplit("/fasteval/", 1)[0] + "/datasets/trec"
    for name, flags in (("a", []), ("b", ["-M", "5"])):
        assert main(["eval", f"{trec}/qrels.test", f"{trec}/results.test", "-m", "P@10", "-q", "--quiet",
                     "-o", str(tmp_path / f"{name}.json"), *flags]) == 0
    c = fasteval.compare({"a": tmp_path / "a.json", "b": tmp_path / "b.json"}, tests="t")
    assert c.means.get_column("n_used").to_list() == [3, 3]
    per_query = fasteval.evaluate(f"{trec}/qrels.test", f"{trec}/results.test", ["P@10"])
    assert c.means.filter(pl.col("run_id") == "a").get_column("mean").item() == pytest.approx(
        per_query.get_column("value").mean(), abs=1e-15)


@pytest.mark.parametrize("name", ["a.csv", "a.tsv", "a.csv.gz"])
def test_a_header_naming_a_measure_twice_is_refused(tmp_path, name) -> None:
    # polars reads the second 'map' as 'map_duplicated_0': it was compared as one more measure
    import gzip

    from fasteval.errors import InputError

    sep = "\t" if ".tsv" in name else ","
    text = sep.join(["query_id", "map", "map"]) + "\n" + sep.join(["q1", "0.5", "0.25"]) + "\n"
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    ok = tmp_path / "b.csv"
    ok.write_text("query_id,map\nq1,0.5\n")
    with pytest.raises(InputError, match=rf"{name}, line 1, column 'map': the header names column 'map' twice"):
        fasteval.compare({"a": path, "b": ok}, tests="t")


def test_a_run_given_in_two_files_is_refused_naming_both(tmp_path, capsys) -> None:
    """The same run's results given twice (two `fasteval eval -q` files of one run) are
    refused naming both files, not only "results: 2 rows for run 'bm25', query 1, measure
    'map'"; a run whose queries or measures are spread over files is accepted."""
    from fasteval.cli import main

    first, again, other = tmp_path / "a.parquet", tmp_path / "a2.parquet", tmp_path / "b.parquet"
    _long("bm25", [1, 2, 3, 4], [0.1, 0.2, 0.3, 0.4]).write_parquet(first)
    _long("bm25", [4, 5], [0.4, 0.6]).write_parquet(again)
    _long("dense", [1, 2, 3, 4, 5], [0.2, 0.4, 0.3, 0.6, 0.7]).write_parquet(other)
    with pytest.raises(InputError) as exc:
        fasteval.compare([first, again, other], tests="t")
    assert str(exc.value) == (f"{again}: run 'bm25', query 4, measure 'map' is also in {first}; "
                              "give each run's results once")
    assert main(["compare", "--results", str(first), str(again), str(other), "--test", "t"]) == 2
    assert capsys.readouterr().err == f"fasteval: error: {exc.value}\n"
    # the same run split by queries, and by measures, is one run
    _long("bm25", [5], [0.6]).write_parquet(again)
    c = fasteval.compare([first, again, other], tests="t", ci=None)
    assert c.means.select("run_id", "n_used").rows() == [("bm25", 5), ("dense", 5)]
    assert c.means["mean"].to_list() == pytest.approx([0.32, 0.44])
    _long("bm25", [1, 2, 3, 4, 5], [1.0, 0.0, 1.0, 1.0, 0.0]).with_columns(
        measure=pl.lit("P_1")).write_parquet(again)
    c = fasteval.compare([first, again, other], measures="map", tests="t", ci=None)
    assert c.means.select("run_id", "n_used").rows() == [("bm25", 4), ("dense", 4)]


def test_a_repeat_in_a_third_file_and_nulls(tmp_path):
    """Each file is checked against every earlier one (a repeat between the second and the
    third is named with both), and a null (missing) value repeats nothing."""
    from fasteval.compare._data import load_results

    def write(name, qids, values):
        p = tmp_path / name
        pl.DataFrame({"run_id": ["bm25"] * len(qids), "query_id": qids,
                      "map": pl.Series(values, dtype=pl.Float64)}).write_parquet(p)
        return str(p)

    a = write("a.parquet", ["q1", "q2"], [0.1, 0.2])
    b = write("b.parquet", ["q3", "q4"], [0.3, 0.4])
    c = write("c.parquet", ["q3"], [0.5])
    with pytest.raises(InputError) as exc:
        load_results([a, b, c])
    assert exc.value.source == c
    assert f"run 'bm25', query 'q3', measure 'map' is also in {b}" in str(exc.value)
    n = write("n.parquet", ["q1"], [None])
    assert load_results([a, n]).height == 2


def test_a_table_in_a_list_is_named_by_its_place():
    from fasteval.compare._data import load_results

    a = pl.DataFrame({"run_id": ["a"], "query_id": ["q1"], "map": [0.1]})
    b = pl.DataFrame({"run_id": ["b"], "query_id": ["q1"], "map": [float("nan")]})
    with pytest.raises(InputError) as exc:
        load_results([a, b])
    assert (exc.value.source, exc.value.row, exc.value.column) == ("results[1]", 0, "map")


@pytest.mark.parametrize("name, text, line, message", [
    # a line short of a field: polars reads it as a missing value, which would be dropped
    ("r.csv", "run_id,query_id,measure,value\na,1,map,0.5\nb,1,map\n", 3,
     "3 fields where the header has 4 (run_id, query_id, measure, value); expected one field per header column"),
    ("r.tsv", "run_id\tquery_id\tmap\na\t1\t0.5\nb\t1\n", 3,
     "2 fields where the header has 3 (run_id, query_id, map); expected one field per header column"),
    ("r.csv", "run_id,query_id,measure,value\na,1,map,0.5\nb,1,map,0.2,9\n", 3,
     "5 fields where the header has 4; expected one field per header column"),
    ("r.csv", 'run_id,query_id,measure,value\na,"x\ny",map,0.5\nb,1,map,abc\n', 4,
     "value is not a number: 'abc'; expected a number"),
])
def test_a_malformed_csv_line_is_named(tmp_path, name, text, line, message) -> None:
    from fasteval.compare._data import _read_file

    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        _read_file(path)
    assert (exc.value.source, exc.value.line, exc.value.message) == (str(path), line, message)


def test_an_empty_value_field_is_still_a_missing_value(tmp_path) -> None:
    from fasteval.compare._data import _read_file

    path = tmp_path / "r.csv"
    path.write_text("run_id,query_id,measure,value\na,1,map,0.5\nb,1,map,\n")
    assert _read_file(path).get_column("value").to_list() == [0.5, None]


@pytest.mark.parametrize("name, text, where, message", [
    ("r.csv", 'run_id,query_id,measure,value\na,"x\ny",map,0.5\nb,1,map,nan\n', {"line": 4},
     "value is NaN for run 'b'"),
    ("r.jsonl", '{"run_id": "a", "query_id": "1", "measure": "map", "value": 0.5}\n\n'
                '{"run_id": null, "query_id": "1", "measure": "map", "value": 0.1}\n', {"line": 3},
     "run_id is null"),
    ("r.json", '[{"run_id": "a", "query_id": "1", "measure": "map", "value": 0.5}, '
               '{"run_id": null, "query_id": "1", "measure": "map", "value": 0.1}]', {"row": 1},
     "run_id is null"),
])
def test_a_bad_cell_names_the_line_of_a_text_file(tmp_path, name, text, where, message) -> None:
    # text files are named by line (1-based, header counted), as the run and qrels readers
    # name theirs; a JSON array by its 0-based row
    from fasteval.compare._data import load_results

    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError, match=message) as exc:
        load_results(str(path))
    got = {"line": exc.value.line} if exc.value.line is not None else {"row": exc.value.row}
    assert (exc.value.source, got) == (str(path), where)
