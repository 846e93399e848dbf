"""Careless and hostile input to evaluate(): null ids, scores and run ids, grades past 32
bits, measure parameters no kernel can use. Every case is refused with a one-line message
naming the column and row (or the parameter)."""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.errors import InputError, ParameterError

QRELS = pl.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["a", "b", "c", "d"],
                      "relevance": [1, 0, 1, 1]})


def _error(exc_info) -> InputError:
    err = exc_info.value
    assert "\n" not in str(err)
    return err


@pytest.mark.parametrize("column, values, row", [
    ("query_id", ["1", None, None, "2"], 1),
    ("doc_id", ["a", "x", None, "c"], 2),
])
def test_null_ids_in_a_run_table_are_refused(column, values, row):
    run = pl.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["a", "x", "y", "c"],
                        "score": [1.0, 0.9, 0.8, 0.7]}).with_columns(pl.Series(column, values))
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(QRELS, run, ["num_ret"])
    err = _error(exc)
    assert (err.column, err.row) == (column, row)
    with pytest.raises(InputError):  # the Evaluator path too
        fasteval.Evaluator(QRELS, ["num_ret"]).evaluate(run)


def test_null_score_and_nan_score_are_refused_with_their_row():
    run = pl.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"],
                        "score": [1.0, float("nan"), 0.7]})
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(QRELS, run, ["map"])
    assert (exc.value.column, exc.value.row) == ("score", 1)


def test_null_run_id_is_refused_not_named_none():
    run = pl.DataFrame({"run_id": ["r", "r", None], "query_id": ["1", "1", "2"],
                        "doc_id": ["a", "b", "c"], "score": [1.0, 0.5, 0.7]})
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(QRELS, run, ["num_ret"])
    assert (exc.value.column, exc.value.row) == ("run_id", 2)


def test_row_numbers_count_in_the_table_given_not_in_a_run_of_it():
    # the NaN is row 3 of the table; within run "b" it would be row 0
    run = pl.DataFrame({"run_id": ["a", "a", "a", "b"], "query_id": ["1", "1", "2", "2"],
                        "doc_id": ["a", "b", "c", "c"], "score": [1.0, 0.5, 0.7, float("nan")]})
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(QRELS, run, ["num_ret"])
    assert (exc.value.column, exc.value.row) == ("score", 3)


def test_run_names_equal_as_text_are_refused():
    run = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(InputError, match=r"\['1'\] given twice"):
        fasteval.evaluate(QRELS, {1: run, "1": run}, ["num_ret"])


def test_null_relevance_in_a_qrels_table_is_refused():
    qrels = QRELS.with_columns(pl.Series("relevance", [1, None, 1, 1]))
    run = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(qrels, run, ["num_rel"])
    assert (exc.value.column, exc.value.row) == ("relevance", 1)


@pytest.mark.parametrize("grade, row", [(2**32, 0), (2**31, 2), (-(2**31) - 1, 3)])
def test_grades_outside_int32_are_refused_in_tables(grade, row):
    rel = [1, 0, 1, 1]
    rel[row] = grade
    qrels = QRELS.with_columns(pl.Series("relevance", rel))
    run = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(InputError, match="outside the 32-bit range") as exc:
        fasteval.evaluate(qrels, run, ["num_rel"])
    assert (exc.value.column, exc.value.row) == ("relevance", row)


def test_grades_outside_int32_are_refused_in_dicts_and_files(tmp_path):
    with pytest.raises(InputError, match="4294967296 is outside"):
        fasteval.read_qrels({"q": {"a": 4294967296}})
    text = tmp_path / "q.qrels"
    text.write_text("q 0 a 1\nq 0 b 2147483648\n")
    with pytest.raises(InputError) as exc:
        fasteval.read_qrels(text)
    assert exc.value.line == 2 and "2147483648" in str(exc.value)
    text.write_text("q 0 a 1\nq 0 b 99999999999999999999\n")  # past 64 bits as well
    with pytest.raises(InputError, match="outside the 32-bit range") as exc:
        fasteval.read_qrels(text)
    assert exc.value.line == 2
    pq = tmp_path / "q.parquet"
    pl.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "rel": [1, 2**40]}).write_parquet(pq)
    with pytest.raises(InputError) as exc:
        fasteval.read_qrels(pq)
    assert exc.value.row == 1


@pytest.mark.parametrize("measure, fragment", [
    ("set_F(beta=-1)", "set_F's beta must be a number >= 0"),
    ("P@99999999999999999999", "P's cutoff must be an integer from 1 to 9223372036854775807"),
    ("P(rel=99999999999999999999)@3", "P's rel must be an integer from 0 to 2147483647"),
    ("rbp(p=1.5)", "rbp's p must be a number between 0 and 1"),
])
def test_measure_parameters_no_kernel_can_use(measure, fragment):
    with pytest.raises(ParameterError, match=fragment.replace("(", r"\(")):
        fasteval.Evaluator(QRELS, [measure])


def test_relevance_level_past_32_bits_is_a_parameter_error():
    with pytest.raises(ParameterError, match="relevance_level must be an integer from 0 to 2147483647"):
        fasteval.Evaluator(QRELS, ["map"], relevance_level=99999999999999999999)


@pytest.mark.parametrize("argv, fragment", [
    (["-m", "set_F(beta=-1)"], "set_F's beta"),
    (["-m", "P@99999999999999999999"], "P's cutoff"),
    (["-l", "99999999999999999999", "-m", "map"], "error: -l"),  # the flag, not the keyword
])
@pytest.mark.parametrize("command", ["eval", "trec-eval"])
def test_cli_reports_bad_measure_parameters_in_one_line(tmp_path, capsys, argv, fragment, command):
    from fasteval.cli import main

    (tmp_path / "q").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    files = [str(tmp_path / "q"), str(tmp_path / "r")]
    rc = main([command, *argv, *files] if command == "trec-eval" else [command, *files, *argv])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("fasteval: error:") and fragment in err


# ---------------------------------------------------------------- ranks, grades, ids past 64 bits

def test_trec_rank_past_int64_is_dropped_like_any_non_rank(tmp_path):
    # trec_eval never reads the rank; one past 64 bits is dropped with the same warning
    path = tmp_path / "r"
    path.write_text("1 Q0 b 99999999999999999999999 2.0 t\n1 Q0 a inf 1.0 t\n")
    with pytest.warns(fasteval.DataWarning, match="the rank column is not all 64-bit integers"):
        run = fasteval.read_run(path)
    assert run.columns == ["query_id", "doc_id", "score", "tag"]
    assert run.get_column("doc_id").to_list() == ["b", "a"]


def test_unsigned_grades_past_32_bits_name_the_row(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "q.parquet"
    pq.write_table(pa.table({"query_id": ["1", "1"], "doc_id": ["a", "b"],
                             "relevance": pa.array([1, 2**64 - 1], pa.uint64())}), path)
    with pytest.raises(InputError) as exc:
        fasteval.read_qrels(path)
    err = _error(exc)
    assert (err.row, err.column) == (1, "relevance")
    assert "relevance 18446744073709551615 is outside the 32-bit range" in str(err)


@pytest.mark.parametrize("rank, row, fragment", [
    (pl.Series([1, 2**64 - 1], dtype=pl.UInt64), 1,
     "rank 18446744073709551615 does not fit in a signed 64-bit integer"),
    (pl.Series([1e30, 1.0]), 0, "rank 1e+30 does not fit in a signed 64-bit integer"),
])
def test_ranks_past_int64_are_refused(tmp_path, rank, row, fragment):
    path = tmp_path / "r.parquet"
    pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 1.0],
                  "rank": rank}).write_parquet(path)
    with pytest.raises(InputError) as exc:
        fasteval.read_run(path)
    err = _error(exc)
    assert (err.row, err.column) == (row, "rank") and fragment in str(err)


@pytest.mark.parametrize("ranks, row, fragment", [
    ([1.0, float("nan")], 1, "rank must be an integer, got nan"),
    ([1.5, 1.2], 0, "rank must be an integer, got 1.5"),
    ([1e30, 1.0], 0, "does not fit in a signed 64-bit integer"),
])
def test_tie_break_rank_refuses_ranks_read_run_refuses(ranks, row, fragment):
    # a table handed to evaluate() directly gets the rank check read_run makes: a NaN rank
    # sorted first and gave AP 1 where the ranks given say 0.5
    run = pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 1.0],
                        "rank": ranks})
    qrels = {"1": {"a": 0, "b": 1}}
    with pytest.raises(InputError) as exc:
        fasteval.evaluate(qrels, run, ["map"], tie_break="rank")
    err = _error(exc)
    assert (err.row, err.column) == (row, "rank") and fragment in str(err)
    good = run.with_columns(pl.Series("rank", [2.0, 1.0]))
    assert fasteval.evaluate(qrels, good, ["map"], tie_break="rank")["value"].to_list() == [1.0]
    assert fasteval.evaluate(qrels, good.with_columns(pl.Series("rank", [1, 2])), ["map"],
                             tie_break="rank")["value"].to_list() == [0.5]


def test_eval_cli_refuses_a_nan_rank_in_a_parquet_run(tmp_path, capsys):
    from fasteval.cli import main

    pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [0, 1]}).write_parquet(
        tmp_path / "q.parquet")
    pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 1.0],
                  "rank": [1.0, float("nan")]}).write_parquet(tmp_path / "r.parquet")
    rc = main(["eval", str(tmp_path / "q.parquet"), str(tmp_path / "r.parquet"), "-m", "map",
               "--tie-break", "rank", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert "r.parquet, row 1, column 'rank': rank must be an integer, got nan" in err


# ---------------------------------------------------------------- directories as inputs

@pytest.mark.parametrize("reader", [fasteval.read_run, fasteval.read_qrels])
def test_directory_without_parquet_parts_is_named(tmp_path, reader):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError) as exc:
        reader(empty)
    assert "the directory holds no .parquet file" in str(_error(exc))
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    QRELS.rename({"relevance": "score"}).with_columns(pl.col("score").cast(pl.Float64)).write_parquet(
        mixed / "part-0.parquet")
    (mixed / "notes.txt").write_text("x")
    (mixed / "_SUCCESS").write_text("")
    with pytest.raises(InputError) as exc:
        reader(mixed)
    assert "holds 1 other file(s): notes.txt; expected only .parquet files" in str(_error(exc))
    (mixed / "notes.txt").unlink()  # parquet parts and a marker file: read as one table
    if reader is fasteval.read_run:
        assert reader(mixed).height == 4


# ---------------------------------------------------------------- TREC output of bad tables

@pytest.mark.parametrize("table, row, column, fragment", [
    ({"doc_id": ["a", None]}, 1, "doc_id", "doc_id is null"),
    ({"score": [1.0, float("nan")]}, 1, "score", "score is NaN"),
    ({"score": [1.0, None]}, 1, "score", "score is null"),
    ({"run_id": ["x y", "r"]}, 0, "run_id", "run_id 'x y' cannot be written as TREC text"),
    ({"tag": ["r", ""]}, 1, "tag", "tag '' cannot be written as TREC text"),
])
def test_trec_output_refuses_fields_that_would_not_read_back(tmp_path, table, row, column, fragment):
    base = {"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 0.5]}
    out = tmp_path / "out.trec"
    with pytest.raises(InputError) as exc:
        fasteval.write_table(pl.DataFrame({**base, **table}), out)
    err = _error(exc)
    assert (err.row, err.column) == (row, column) and fragment in str(err)
    assert list(tmp_path.iterdir()) == []  # no file, no temporary left


def test_trec_qrels_output_refuses_a_null_grade(tmp_path):
    with pytest.raises(InputError, match="relevance is null"):
        fasteval.write_table(pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"],
                                           "relevance": [1, None]}), tmp_path / "q.qrels")
    fasteval.write_table(pl.DataFrame({"query_id": [1], "doc_id": ["a"], "score": [2],
                                       "tag": [7]}), tmp_path / "r.trec")
    assert (tmp_path / "r.trec").read_text() == "1 Q0 a 1 2 7\n"


def test_fuse_refuses_a_tag_with_whitespace(tmp_path, capsys):
    from fasteval.cli import main

    for name in ("a", "b"):
        (tmp_path / name).write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    rc = main(["fuse", str(tmp_path / "a"), str(tmp_path / "b"), "--tag", "my run"])
    cap = capsys.readouterr()
    assert rc == 2 and cap.out == ""
    assert cap.err == "fasteval: error: --tag must be non-empty text without whitespace, got 'my run'\n"


# ---------------------------------------------------------------- trec-eval side files

def _trec_eval(argv, capsys):
    from fasteval.cli import main

    rc = main(["trec-eval", *argv])
    cap = capsys.readouterr()
    if rc:
        assert cap.err.count("\n") == 1 and cap.err.startswith("fasteval: error:")
    return rc, cap.out, cap.err


@pytest.fixture
def small_trec(tmp_path):
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r").write_text("1 Q0 a 1 1.0 t\n1 Q0 b 2 0.5 t\n")
    return tmp_path


def test_qrels_jg_without_measures_asks_for_them(small_trec, capsys):
    """The default measures (official) are not computed from qrels_jg judgments: the error
    asks for -m qrels_jg rather than listing the defaults as if they were given."""
    (small_trec / "jg").write_text("1 j1 a 1\n1 j2 a 0\n")
    rc, out, err = _trec_eval(["-R", "qrels_jg", str(small_trec / "jg"), str(small_trec / "r")],
                              capsys)
    assert (rc, out) == (2, "")
    assert err == ("fasteval: error: -R qrels_jg must be used with -m qrels_jg (or num_q, "
                   "map_avgjg, P_avgjg, Rprec_mult_avgjg): the default measures, official, are "
                   "not computed from qrels_jg judgments, got 'no -m'\n")


@pytest.mark.parametrize("measures, named", [
    (["-m", "map", "-m", "map_avgjg"], "'map'"),
    (["-m", "relstring"], "'relstring'"),
])
def test_qrels_jg_refuses_measures_it_cannot_compute(small_trec, capsys, measures, named):
    # measures trec_eval cannot compute from qrels_jg judgments: an error, not a gap in the output
    (small_trec / "jg").write_text("1 j1 a 1\n1 j2 a 0\n")
    rc, out, err = _trec_eval(["-R", "qrels_jg", *measures, str(small_trec / "jg"),
                               str(small_trec / "r")], capsys)
    assert rc == 2 and out == ""
    assert "-m with -R qrels_jg must be num_q, map_avgjg, P_avgjg, Rprec_mult_avgjg or " \
           "qrels_jg" in err and err.endswith(f"got {named}\n")


def test_qrels_jg_num_q_alone(small_trec, capsys):
    (small_trec / "jg").write_text("\ufeff1 j1 a 1\r\n1 j2 a 0\r\n2 j1 c 1\r\n")
    args = ["-R", "qrels_jg", "-m", "num_q", "-m", "map_avgjg", "-q", str(small_trec / "jg"),
            str(small_trec / "r")]
    # query 1 (a BOM before it): AP 1 in group j1, 0 in j2; query 2 is not in the run, which
    # 9.0.8 skips (it loops over the run's topics)
    rc, out, _ = _trec_eval(["--compat", "9", *args], capsys)
    assert (rc, out) == (0, "map_avgjg             \t1\t0.5000\n"
                            "num_q                 \tall\t1\n"
                            "map_avgjg             \tall\t0.5000\n")
    # 10.0 loops over the qrels topics: without -c the missing one stops it, as with -R qrels
    from fasteval.cli import main

    assert main(["trec-eval", *args]) == 4
    assert capsys.readouterr() == ("", "trec_eval: result qid '2' not found in qrels\n")


@pytest.mark.parametrize("text, line, fragment", [
    ("1 j a 1\n1 j b 99999999999999999999\n", 2,
     "column 'relevance': relevance 99999999999999999999 is outside the 32-bit range"),
    ("1 j a 5000000000\n", 1, "relevance 5000000000 is outside the 32-bit range"),
    ("# c\n1 j a 1\n1 j a 0\n", 3,
     "column 'doc_id': document 'a' is judged twice for query '1' in judgment group 'j' "
     "(first on line 2)"),
    # a grade of thousands of digits is out of range too (Python's int() refuses to read it)
    pytest.param("1 j a " + "9" * 5000 + "\n", 1,
                 "relevance " + "9" * 40 + "... is outside the 32-bit", id="5000-digit-grade"),
])
def test_qrels_jg_errors_name_the_file_and_line(small_trec, capsys, text, line, fragment):
    jg = small_trec / "jg"
    jg.write_text(text)
    rc, _, err = _trec_eval(["-R", "qrels_jg", "-m", "qrels_jg", str(jg), str(small_trec / "r")],
                            capsys)
    assert rc == 2 and err.startswith(f"fasteval: error: {jg}, line {line}, ") and fragment in err


@pytest.mark.parametrize("flags, qrels, run, fragment", [
    ([], "1 0 a 1\n", f"1 Q0 a 1 {'7' * 100_000}x t\n", "score is not a number: '777"),
    ([], "1 0 a 1\n", f"1 Q0 {'d' * 100_000} 1 1 t\n1 Q0 {'d' * 100_000} 2 1 t\n",
     "duplicate (query_id, doc_id) pair ('1', 'ddd"),
    ([], "1 0 a 1\n", "1 Q0 \xff" + "e" * 100_000 + " 1 1 t\n", "not valid UTF-8 text"),
    (["-R", "qrels_jg", "-m", "qrels_jg"], f"1 j {'d' * 100_000} 1\n1 j {'d' * 100_000} 0\n",
     "1 Q0 a 1 1 t\n", "document 'ddd"),
    (["-R", "qrels_jg", "-m", "qrels_jg"], f"1 j a {'y' * 100_000}\n", "1 Q0 a 1 1 t\n",
     "relevance is not an integer: 'yyy"),
], ids=["score", "duplicate", "utf8", "jg-duplicate", "jg-grade"])
def test_errors_on_long_fields_quote_a_short_excerpt(small_trec, capsys, flags, qrels, run,
                                                     fragment):
    # the error names file and line and quotes the start of the field, on one short line
    (small_trec / "lq").write_bytes(qrels.encode())
    (small_trec / "lr").write_bytes(run.encode("latin-1"))
    rc, out, err = _trec_eval([*flags, str(small_trec / "lq"), str(small_trec / "lr")], capsys)
    assert rc == 2 and out == "" and err.startswith("fasteval: error: ") and ", line " in err
    assert fragment in err and err.count("\n") == 1 and len(err) < 400, err[:300]


@pytest.mark.parametrize("kind", ["prefs-level", "prefs-twice", "zscore"])
def test_prefs_and_zscore_errors_on_long_fields_quote_a_short_excerpt(small_trec, capsys, kind):
    long = "x" * 100_000
    f = small_trec / "long"
    if kind == "prefs-level":
        f.write_text(f"1 g s a {long}\n")
        args, fragment = ["-R", "prefs", "-m", "prefs_simp", str(f)], "rel_level is not a number: 'xxx"
    elif kind == "prefs-twice":
        f.write_text(f"1 g s {long} 1\n1 g s {long} 2\n")
        args, fragment = ["-R", "prefs", "-m", "prefs_simp", str(f)], "document 'xxx"
    else:
        f.write_text(f"1 map 0.5 {long}\n")
        args = ["-Z", str(f), "-m", "map", str(small_trec / "q")]
        fragment = "mean and stddev must be numbers, got 'xxx"
    rc, out, err = _trec_eval([*args, str(small_trec / "r")], capsys)
    assert rc == 2 and out == "" and err.startswith(f"fasteval: error: {f}, line ")
    assert fragment in err and err.count("\n") == 1 and len(err) < 400, err[:300]


def test_empty_zscore_file_is_refused_not_read_as_zeros(small_trec, capsys):
    z = small_trec / "z"
    z.write_text("# nothing\n")
    rc, out, err = _trec_eval(["-Z", str(z), "-m", "map", str(small_trec / "q"),
                               str(small_trec / "r")], capsys)
    assert rc == 2 and out == "" and f"{z}: no z-score lines" in err


def test_zscore_and_prefs_files_with_a_byte_order_mark(small_trec, capsys):
    # the mark was read into the first qid: its z-scores were not found (printed as 0) and
    # its preferences belonged to no query of the run
    z = small_trec / "z"
    z.write_text("\ufeff1 map 0.5 0.1\r\n")
    rc, out, _ = _trec_eval(["-Z", str(z), "-q", "-m", "map", str(small_trec / "q"),
                             str(small_trec / "r")], capsys)
    assert (rc, out) == (0, "Zmap                   \t1\t5.0000\nZmap                   \tall\t5.0000\n")
    prefs = small_trec / "p"
    prefs.write_text("\ufeff1 x y a 1\r\n1 x y b 0\r\n")
    for fmt, path in (("prefs", prefs), ("qrels_prefs", small_trec / "qp")):
        (small_trec / "qp").write_text("\ufeff1 0 a 1\r\n1 0 b 0\r\n")
        rc, out, _ = _trec_eval(["-R", fmt, "-q", "-m", "prefs_simp", str(path),
                                 str(small_trec / "r")], capsys)
        assert (rc, out) == (0, "prefs_simp            \t1\t1.0000\n"
                                "prefs_simp            \tall\t1.0000\n")


def test_trec_eval_standard_input_is_the_run_only(small_trec, capsys, monkeypatch):
    rc, _, err = _trec_eval(["-", str(small_trec / "r")], capsys)
    assert rc == 2 and "-: standard input holds the run only" in err
    monkeypatch.setattr("sys.stdin", None)  # started with standard input closed
    rc, _, err = _trec_eval([str(small_trec / "q"), "-"], capsys)
    assert rc == 2 and err == "fasteval: error: -: standard input is closed; expected the run on it\n"


# ---------------------------------------------------------------- tables handed to evaluate()

def test_float_ids_in_a_table_are_read_as_read_run_reads_them():
    # float ids were matched by their spelling ("1.0"): every query dropped, an empty result
    run = pl.DataFrame({"query_id": [1.0, 1.0], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    out = fasteval.evaluate({"1": {"a": 1, "b": 0}}, run, ["map"])
    assert out.select("query_id", "value").rows() == [("1", 0.5)]
    with pytest.raises(InputError) as exc:
        fasteval.evaluate({"1": {"a": 1}}, run.with_columns(pl.Series("query_id", [1.5, 1.0])), ["map"])
    assert (_error(exc).row, exc.value.column) == (0, "query_id")


@pytest.mark.parametrize("run, fragment", [
    (pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": ["1.0", "zz"]}),
     "row 1, column 'score': score is not a number: 'zz'"),
    (pl.DataFrame({"query_id": [["1"]], "doc_id": ["a"], "score": [1.0]}),
     "column 'query_id': query_id must hold strings or integers, got List(String)"),
])
def test_table_columns_of_the_wrong_type_are_input_errors(run, fragment):
    with pytest.raises(InputError) as exc:  # were polars' own errors, naming no row
        fasteval.evaluate({"1": {"a": 1}}, run, ["map"])
    assert fragment in str(_error(exc))


@pytest.mark.parametrize("run, fragment", [
    (pl.DataFrame({"query_id": [1.0], "doc_id": ["a"], "score": [1.0]}),
     "query_id must hold strings or integers, got Float64"),
    (pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": ["1"]}),
     "score must be numeric, got String"),
    (pl.DataFrame({"query_id": pl.Series([2**64 - 1], dtype=pl.UInt64), "doc_id": ["a"],
                   "score": [1.0]}),
     "row 0, column 'query_id': query_id does not fit in a signed 64-bit integer"),
])
def test_evaluator_prepare_checks_column_types(run, fragment):
    with pytest.raises(InputError) as exc:
        fasteval.Evaluator({"1": {"a": 1}}, ["map"]).prepare(run)
    assert fragment in str(_error(exc))


def test_dict_values_and_ids_past_64_bits():
    with pytest.raises(InputError) as exc:
        fasteval.evaluate({"1": {"a": 2**70}}, {"1": {"a": 1.0}}, ["map"])
    assert "relevance 1180591620717411303424 is outside the 32-bit range" in str(_error(exc))
    with pytest.raises(InputError) as exc:
        fasteval.evaluate({2**70: {"a": 1}}, {1: {"a": 1.0}}, ["map"])
    assert "query_id 1180591620717411303424 does not fit in a signed 64-bit integer" in str(
        _error(exc))


@pytest.mark.parametrize("measures, kind", [(None, "NoneType"), (5, "int"), (b"map", "bytes"),
                                            ({"map": 1}, "dict")])
def test_measures_that_are_no_list_of_names(measures, kind):
    with pytest.raises(fasteval.errors.UnknownMeasureError,
                       match=f"measures must be a name, a Measure or a list of them, got {kind}"):
        fasteval.evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}}, measures)


def test_float_ids_in_a_qrels_table_are_read_as_read_qrels_reads_them():
    qrels = pl.DataFrame({"query_id": [1.0, 1.0], "doc_id": ["a", "b"], "relevance": [1, 0]})
    out = fasteval.evaluate(qrels, {"1": {"a": 1.0, "b": 2.0}}, ["map"])
    assert out.select("query_id", "value").rows() == [(1, 0.5)]  # was no row at all
    from fasteval.prepare import prepare_qrels

    with pytest.raises(InputError, match="query_id must hold strings or integers, got Float64"):
        prepare_qrels(qrels)


def test_json_lines_with_a_byte_order_mark(tmp_path):
    # polars' reader stopped at the mark ("cannot parse JSON Lines ... ('ï')")
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"query_id": "1", "doc_id": "a", "score": 1.0}\n'
                     b'{"query_id": "1", "doc_id": "b", "score": 2.0}\n')
    run = fasteval.read_run(path)
    assert run.select("query_id", "doc_id", "score").rows() == [("1", "a", 1.0), ("1", "b", 2.0)]
    assert fasteval.evaluate({"1": {"a": 1}}, path, ["map"])["value"].to_list() == [0.5]
    path.write_bytes(b"\xef\xbb\xbfnot json\n")
    with pytest.raises(InputError, match="line 1: not valid JSON"):
        fasteval.read_run(path)


def test_a_run_without_judged_queries_warns_once():
    import warnings as _w

    from fasteval.errors import DataWarning

    with _w.catch_warnings(record=True) as caught:
        _w.simplefilter("always")
        out = fasteval.evaluate({"1": {"a": 1}}, {"9": {"a": 1.0}, "8": {"b": 2.0}}, ["map"])
        filled = fasteval.evaluate({"1": {"a": 1}}, {"9": {"a": 1.0}}, ["map"], complete=True)
        judged = fasteval.evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}, "9": {"a": 1.0}}, ["map"])
    assert out.height == 0 and filled["value"].to_list() == [0.0] and judged["value"].to_list() == [1.0]
    msgs = [str(w.message) for w in caught if issubclass(w.category, DataWarning)]
    assert msgs == ["run 'run': none of its 2 queries is in the qrels, so it has no results "
                    "(complete=True scores the qrels queries as empty rankings)"]


@pytest.mark.parametrize("value", ["yes", "no", 2, 0, None, 1.0])
def test_switches_take_booleans_only(value):
    from fasteval.errors import ParameterError

    for key in ("complete", "judged_only"):
        with pytest.raises(ParameterError, match=rf"^{key} must be True or False, got "):
            fasteval.evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}}, ["map"], **{key: value})
        with pytest.raises(ParameterError, match=rf"^{key} must be True or False, got "):
            fasteval.evaluate_diversity({"q": {"s": {"a": 1}}}, {"q": {"a": 1.0}}, ["strec@2"],
                                        **{key: value})
