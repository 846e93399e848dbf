"""How TREC text numbers, grades and bytes read, against trec_eval's rules and pytrec_eval.

Scores: every whole decimal number reads as C's ``strtod`` (Python's ``float`` is the
oracle for these spellings); text ``atof`` would read only in part is refused. Grades:
integers and zero fractions (``atol`` agrees on those); the rest is refused. Ids and tags
that are not UTF-8 name their line and column.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import fasteval
from fasteval.errors import InputError
from fasteval.io.readers import read_qrels, read_run, scan_qrels

SPELLINGS = ["1e3", "-0", "+5", ".5", "5.", "inf", "-inf", "Infinity", "1e400", "-1e400", "1e-400", "+.5e+1", "007"]


def _write(tmp_path: Path, name: str, data: bytes) -> str:
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_score_spellings_read_as_strtod(tmp_path: Path, spelling: str) -> None:
    p = _write(tmp_path, "r.run", f"q1 Q0 d1 1 {spelling} t\nq1 Q0 d2 2 0.25 t\n".encode())
    got = read_run(p).get_column("score").to_list()
    want = float(spelling)
    assert got[1] == 0.25
    assert got[0] == want and math.copysign(1, got[0]) == math.copysign(1, want)


_PARTLY_READ = [  # (field, text atof/atol would read only in part)
    *(("score", bad) for bad in ["0x10", "1_000", "1.5x", "1,5", "1e", "0X1P-2"]),
    *(("relevance", bad) for bad in ["1.5", "2e0", "0x1", "1_0", "1.0e0", ".0"]),
]


@pytest.mark.parametrize(("column", "bad"), _PARTLY_READ)
def test_a_number_atof_or_atol_would_read_in_part_is_refused(tmp_path: Path, column: str,
                                                             bad: str) -> None:
    if column == "score":  # a blank line, then the bad score on line 3
        p, reader, message = (_write(tmp_path, "r.run", f"q1 Q0 d1 1 2.0 t\n\nq1 Q0 d2 2 {bad} t\n".encode()),
                              read_run, f"score is not a number: {bad!r}")
    else:  # a comment, then the bad grade on line 3
        p, reader, message = (_write(tmp_path, "q.qrels", f"q1 0 d1 1\n# c\nq1 0 d2 {bad}\n".encode()),
                              read_qrels, f"relevance must be an integer, got {bad!r}")
    with pytest.raises(InputError) as info:
        reader(p)
    assert (info.value.line, info.value.column) == (3, column)
    assert message in str(info.value)


@pytest.mark.parametrize(("text", "grade"), [("1.0", 1), ("2.", 2), ("-0.0", 0), ("+3.00", 3), ("-1.0", -1)])
def test_grade_with_zero_fraction_reads_as_integer(tmp_path: Path, text: str, grade: int) -> None:
    p = _write(tmp_path, "q.qrels", f"q1 0 d1 {text}\nq1 0 d2 0\n".encode())
    assert read_qrels(p).rows() == [("q1", "d1", grade), ("q1", "d2", 0)]
    assert scan_qrels(p).collect().rows() == [("q1", "d1", grade), ("q1", "d2", 0)]


def test_wide_grade_with_zero_fraction_names_the_range(tmp_path: Path) -> None:
    p = _write(tmp_path, "q.qrels", b"q1 0 d1 99999999999999999999.0\n")
    with pytest.raises(InputError, match="outside the 32-bit range of grades"):
        read_qrels(p)


def test_non_utf8_field_names_line_and_column(tmp_path: Path) -> None:
    # Latin-1 in a comment, the iter field and after the tag is ignored, as trec_eval ignores
    # those bytes; the first kept field that is not UTF-8 is line 6's tag
    data = (b"\xef\xbb\xbf# caf\xe9\n\nq1 Q\xe90 d1 1 2.0 t extra\xe9\nq1 Q0 d2 2 1.0 t\r\n"
            b"  # x\xff\nq1 Q0 d3 3 1.0 t\xe9\n")
    p = _write(tmp_path, "r.run", data)
    with pytest.raises(InputError) as info:
        read_run(p)
    assert (info.value.line, info.value.column) == (6, "tag")
    assert "b't\\xe9'" in str(info.value) and "iconv" in str(info.value)
    q = _write(tmp_path, "q.qrels", b"# caf\xe9\nq1 0 d1 1\n#\xff\nq1 \xff d2 0\nq1 0 caf\xe9 1\n")
    with pytest.raises(InputError) as info:
        read_qrels(q)
    assert (info.value.line, info.value.column) == (5, "doc_id")


def test_ignored_non_utf8_bytes_read(tmp_path: Path) -> None:
    q = _write(tmp_path, "q.qrels", b"# caf\xe9\nq1 0 d1 1\n#\xff\nq1 \xff d2 0\n")
    assert read_qrels(q).rows() == [("q1", "d1", 1), ("q1", "d2", 0)]


def test_hostile_spellings_match_pytrec_eval(tmp_path: Path) -> None:
    """A run written with every accepted spelling, CR LF endings, a byte order mark, tabs and
    trailing blanks scores as pytrec_eval scores the same values (none of which tie in
    float32 unless they tie in float64, as pytrec_eval stores scores in float32)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    scores = {"d1": "1e3", "d2": "+5", "d3": ".5", "d4": "5.", "d5": "inf", "d6": "-inf", "d7": "0",
              "d8": "-0", "d9": "1e400", "d10": "2.5E-1", "d11": "1e-400", "d12": "007"}
    grades = {"d1": "0", "d2": "1.0", "d3": "2", "d4": "0", "d5": "1", "d6": "1", "d7": "1", "d8": "0",
              "d9": "0", "d10": "3", "d11": "1", "d13": "1"}
    run_text = "\ufeff" + "".join(
        f"q1\tQ0  {d}\t{i}\t {s} \ttag  \r\n" for i, (d, s) in enumerate(scores.items(), 1)
    )
    qrels_text = "".join(f"q1 0 {d} {g}\r\n" for d, g in grades.items())
    run_p = _write(tmp_path, "r.run", run_text.encode())
    qrels_p = _write(tmp_path, "q.qrels", qrels_text.encode())
    measures = ["map", "ndcg", "P_5", "recip_rank", "bpref", "Rprec", "ndcg_cut_5"]
    got = fasteval.evaluate(read_qrels(qrels_p), read_run(run_p), measures)
    ref = pytrec_eval.RelevanceEvaluator(
        {"q1": {d: int(float(g)) for d, g in grades.items()}}, set(measures)
    ).evaluate({"q1": {d: float(s) for d, s in scores.items()}})["q1"]
    values = dict(zip(got.get_column("measure").to_list(), got.get_column("value").to_list(), strict=True))
    for m in measures:
        assert values[m] == pytest.approx(ref[m], abs=1e-12), m


@pytest.mark.parametrize(
    ("kind", "text", "found"),
    [
        ("run", b"q1 Q0 d1 1 2.0 t\nq2 Q0 d2 2 1.0\n", "found 5: 'q2 Q0 d2 2 1.0'"),
        ("run", b"q1 Q0 d1 1 2.0 t\r\nq2\tQ0 d2\n", "found 3: 'q2 Q0 d2'"),
        ("qrels", b"q1 0 d1 1\nq2 0 d2 0 x\n", "found 5: 'q2 0 d2 0 x'"),
        ("qrels", b"q1 0 d1 1\nq2 0 d2 0 x \t y\n", "found 6: 'q2 0 d2 0 x y'"),
        ("qrels", b"q1 0 d1 1\nq2 d2 0\n", "found 3: 'q2 d2 0'"),
    ],
)
def test_scan_refuses_wrong_field_count(tmp_path: Path, kind: str, text: bytes, found: str) -> None:
    """The lazy readers count fields as the eager ones do: a run line without its tag or a
    qrels line with a fifth field is an error (it was read, the tag null or the field dropped),
    also when a filter keeps only other queries' rows."""
    import polars as pl

    from fasteval.io.readers import scan_run

    p = _write(tmp_path, "x.txt", text)
    scan = scan_run if kind == "run" else scan_qrels
    eager = read_run if kind == "run" else read_qrels
    with pytest.raises(InputError) as info:
        eager(p)
    assert info.value.line == 2
    for lf in (scan(p), scan(p).filter(pl.col("query_id") == "q1")):
        with pytest.raises(InputError) as info:
            lf.collect()
        assert str(info.value).endswith(found) and str(info.value).startswith(p)


def test_gzip_inside_gzip_is_named(tmp_path: Path) -> None:
    import gzip

    text = b"q1 Q0 d1 1 2.0 t\n"
    once = _write(tmp_path, "r1.gz", gzip.compress(text))
    twice = _write(tmp_path, "r2.gz", gzip.compress(gzip.compress(text)))
    assert read_run(once).rows() == [("q1", "d1", 2.0, 1, "t")]
    with pytest.raises(InputError, match="gzip-compressed twice") as info:
        read_run(twice)
    assert info.value.line is None and str(info.value).startswith(twice)


def test_qrels_jg_reads_as_the_qrels_reader(tmp_path: Path) -> None:
    """trec-eval -R qrels_jg: ASCII whitespace separates fields (a no-break space is part of
    a docno, as for trec_eval's isspace), a zero fraction reads as the integer, and grades
    atol would read in part are refused (Python's int read '1_0' as 10 and '١' as 1)."""
    from fasteval.cli.trec_eval_cmd import _read_qrels_jg

    p = _write(tmp_path, "jg", "\ufeffq1 0 d1\u00a0x 2.0\r\nq1\t1 d2 0\x0b\r\n# c\n\nq1 1 d3 -1\n".encode())
    assert _read_qrels_jg(p).rows() == [("q1", "0", "d1\u00a0x", 2), ("q1", "1", "d2", 0), ("q1", "1", "d3", -1)]
    assert _read_qrels_jg(_write(tmp_path, "cr", b"q1 0 d1 1\rq1 0 d2 0\r")).rows() == [
        ("q1", "0", "d1", 1), ("q1", "0", "d2", 0)]
    for bad in ("1_0", "\u0661", "2e0", "1.5"):
        with pytest.raises(InputError, match="relevance is not an integer") as info:
            _read_qrels_jg(_write(tmp_path, "bad", f"q1 0 d1 1\nq1 0 d2 {bad}\n".encode()))
        assert (info.value.line, info.value.column) == (2, "relevance")
    with pytest.raises(InputError, match="got 3") as info:
        _read_qrels_jg(_write(tmp_path, "nbsp", "q1 0 d1\u00a01\n".encode()))
    with pytest.raises(InputError, match="NUL byte") as info:
        _read_qrels_jg(_write(tmp_path, "nul", b"q1 0 d\x001 1\n"))
    assert info.value.line == 1


def test_zscores_read_decimal_numbers_split_on_ascii_whitespace(tmp_path: Path) -> None:
    from fasteval.cli.trec_eval_cmd import _read_zscores

    p = _write(tmp_path, "z", "\ufeffq1\tmap  .5 2e-1 \r\n# c\n\nq\u00a01 P_5 -1 +inf\n".encode())
    assert _read_zscores(p) == {("q1", "map"): (0.5, 0.2), ("q\u00a01", "P_5"): (-1.0, math.inf)}
    for bad in ("1_000", "\u0661", "0x10", "1.5x"):
        with pytest.raises(InputError, match=f"must be numbers, got {bad!r}") as info:
            _read_zscores(_write(tmp_path, "bad", f"q1 map 0.1 0.2\nq1 P_5 {bad} 0.2\n".encode()))
        assert info.value.line == 2
