"""Preference judgments and runs given as tables: text that is not a number is an
InputError naming the table, row and column (it was polars' InvalidOperationError)."""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.errors import InputError
from fasteval.prefs import read_prefs, read_qrels_prefs

PREFS = pl.DataFrame({"query_id": ["q1", "q1"], "jg": ["1", "1"], "jsg": ["1", "1"],
                      "doc_id": ["d1", "d2"], "rel_level": [2.0, 1.0]})
RUN = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]})


def _value(rows, measure):
    return next(v for m, q, v in rows if m == measure and q == "q1")


def test_text_rel_level_is_an_input_error() -> None:
    bad = PREFS.with_columns(pl.Series("rel_level", ["2", "high"]))
    with pytest.raises(InputError, match=r"judgments, row 1, column 'rel_level': 'high' is not a "
                                         "number"):
        fasteval.evaluate_prefs(bad, RUN, mode="prefs")


def test_text_score_is_an_input_error() -> None:
    bad = RUN.with_columns(pl.Series("score", ["2.0", "abc"]))
    with pytest.raises(InputError, match=r"run, row 1, column 'score': 'abc' is not a number"):
        fasteval.evaluate_prefs(PREFS, bad, mode="prefs")


def test_numeric_text_reads_as_numbers() -> None:
    text = fasteval.evaluate_prefs(PREFS.with_columns(pl.col("rel_level").cast(pl.Utf8)),
                                   RUN.with_columns(pl.col("score").cast(pl.Utf8)), mode="prefs")
    # d1 (preferred) above d2: the one preference is fulfilled
    assert _value(text, "prefs_simp") == 1.0
    assert text == fasteval.evaluate_prefs(PREFS, RUN, mode="prefs")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # one sub-group: d1 judged 2 on line 2, then 1 on line 4
        ("q1 a 1 d3 0\nq1 a 1 d1 2\nq0 a 1 d1 1\nq1 a 1 d1 1\n",
         "p.txt, line 4, column 'rel_level': topic 'q1': document 'd1' has two different "
         "rel_levels in one judgment sub-group (jg 'a', jsg '1'); expected one rel_level per "
         "document"),
        # two sub-groups: d1 relevant in sub-group 1, rel_level 0 in sub-group 2 (line 3)
        ("q1 a 1 d1 2\nq1 a 2 d2 1\nq1 a 2 d1 0\n",
         "p.txt, line 3, column 'rel_level': topic 'q1': document 'd1' has both rel_level 0 "
         "and a rel_level > 0 in one judgment group (jg 'a'); expected one or the other"),
    ],
)
def test_inconsistent_judgment_names_its_file_and_line(tmp_path, capfd, text, message) -> None:
    from fasteval.cli import main

    p = tmp_path / "p.txt"
    p.write_text(text)
    run = tmp_path / "r.txt"
    run.write_text("q0 Q0 d1 1 1.0 t\nq1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    assert main(["trec-eval", "-R", "prefs", "-m", "prefs_simp", str(p), str(run)]) != 0
    err = capfd.readouterr().err.strip()
    assert err == f"fasteval: error: {tmp_path / message}"


def test_inconsistent_judgment_in_a_table_names_its_row() -> None:
    bad = pl.concat([PREFS, PREFS.head(1).with_columns(pl.lit(0.5).alias("rel_level"))])
    with pytest.raises(InputError) as info:
        fasteval.evaluate_prefs(bad, RUN, mode="prefs")
    assert str(info.value) == ("judgments, row 2, column 'rel_level': topic 'q1': document 'd1' "
                               "has two different rel_levels in one judgment sub-group (jg '1', "
                               "jsg '1'); expected one rel_level per document")


@pytest.mark.parametrize(("option", "value", "message"), [
    ("complete", "no", "complete must be True or False, got 'no'"),
    ("per_query", "no", "per_query must be True or False, got 'no'"),
    ("summary", 0, "summary must be True or False, got 0"),
    ("max_docs", True, "max_docs must be a non-negative integer, got True"),
])
def test_options_of_the_wrong_type_are_refused(option, value, message) -> None:
    """complete="no" was read as true, max_docs=True as -M 1."""
    from fasteval.errors import ParameterError

    with pytest.raises(ParameterError, match=message):
        fasteval.evaluate_prefs(PREFS, RUN, mode="prefs", **{option: value})
    rows = fasteval.evaluate_prefs(PREFS, RUN, mode="prefs", max_docs=1)
    assert _value(rows, "prefs_num_prefs_ful_ret") == 0 and _value(rows, "prefs_simp") == 1.0


@pytest.mark.parametrize(("body", "name", "message"), [
    (b"q1 1 1 d1 2\n", "dir", "is a directory, expected a file"),
    (b"not gzip", "p.gz", "line 1: expected 5 whitespace-separated fields"),
    (b"\x1f\x8b\x08\x00broken", "p.gz", "corrupt gzip file"),
    ("q1 1 1 d1 2\n".encode("utf-16"), "p.txt", "the file is UTF-16 text"),
    (b"q1 1 1 d1 2\nq1 1 1 d\x002 1\n", "p.txt", "line 2: a NUL byte"),
    (b"q1 1 1 d1 2\nq1 1 1 d2 \xff1\n", "p.txt", "line 2: not valid UTF-8"),
])
def test_unreadable_prefs_files_are_named(tmp_path, body, name, message) -> None:
    """A directory or a '.gz' file that is no gzip was an OSError traceback; UTF-16 text
    'not valid UTF-8 at byte 0'; NUL bytes were read into a docno."""
    p = tmp_path / name
    if name == "dir":
        p.mkdir()
    else:
        p.write_bytes(body)
    with pytest.raises(InputError) as info:
        read_prefs(p)
    assert str(info.value).startswith(f"{p}, {message}" if "line" in message else f"{p}: {message}")


def test_prefs_files_split_on_ascii_whitespace_and_gzip_by_content(tmp_path) -> None:
    """As trec_eval (C's isspace) and read_qrels: a no-break space is part of a docno (the
    line was refused as 6 fields); gzip is known by its magic number, not only '.gz'."""
    import gzip

    text = "q1 1 1 d\u00a0x 2\nq1\t1\x0b1 d2 0\n"
    plain = tmp_path / "p.txt"
    plain.write_text(text)
    packed = tmp_path / "p.prefs"
    packed.write_bytes(gzip.compress(text.encode()))
    expected = [("q1", "1", "1", "d\u00a0x", 2.0), ("q1", "1", "1", "d2", 0.0)]
    assert read_prefs(plain).rows() == expected
    assert read_prefs(packed).rows() == expected
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d\u00a0x 1\nq1 0 d2 0\n")
    assert read_qrels_prefs(qrels).rows() == [("q1", "0", "0", "d\u00a0x", 1.0),
                                                             ("q1", "0", "0", "d2", 0.0)]
    run = tmp_path / "r.txt"
    run.write_text("q1 Q0 d\u00a0x 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    rows = fasteval.evaluate_prefs(plain, str(run), measures=["prefs_simp"], per_query=False)
    assert rows == [("prefs_simp", "all", 1.0)]
