"""``fasteval fuse``: outputs by suffix, atomic writes, refused outputs, one-line errors."""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.cli import main

RUN_A = "q1 Q0 a 1 3.0 x\nq1 Q0 b 2 2.0 x\nq2 Q0 c 1 1.0 x\n"
RUN_B = "q1 Q0 b 1 9.0 y\nq1 Q0 d 2 1.0 y\nq2 Q0 c 1 5.0 y\nq2 Q0 a 2 4.0 y\n"


@pytest.fixture
def runs(tmp_path):
    a = tmp_path / "a.run"
    b = tmp_path / "b.run"
    a.write_text(RUN_A)
    b.write_text(RUN_B)
    return str(a), str(b)


def test_parquet_output_equals_api(runs, tmp_path) -> None:
    out = tmp_path / "fused.parquet"
    assert main(["fuse", *runs, "-m", "rrf", "-o", str(out)]) == 0
    want = fasteval.fuse([fasteval.read_run(p) for p in runs], method="rrf")
    assert pl.read_parquet(out).equals(want)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_trec_output_and_stdout(runs, tmp_path, capfd) -> None:
    out = tmp_path / "fused.trec"
    assert main(["fuse", *runs, "-m", "wsum", "--norm", "min-max", "-w", "0.2,0.8",
                 "-o", str(out), "--tag", "mine"]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "q1 Q0 b 1 0.8 mine"
    assert [ln.split()[2] for ln in lines] == ["b", "a", "d", "c", "a"]
    back = fasteval.read_run(str(out))
    assert back.get_column("score").to_list() == [0.8, 0.2, 0.0, 0.8, 0.0]
    assert main(["fuse", *runs, "-m", "combmnz"]) == 0  # no -o: TREC text on stdout
    printed = capfd.readouterr().out.splitlines()
    assert printed[0].split()[:4] == ["q1", "Q0", "b", "1"]
    assert printed[0].endswith("fused-mnz")


def test_rbc_and_params(runs, tmp_path) -> None:
    out = tmp_path / "f.csv"
    assert main(["fuse", *runs, "-m", "rbc", "--phi", "0.5", "-o", str(out)]) == 0
    got = pl.read_csv(out)
    assert got.columns == ["query_id", "doc_id", "score", "rank"]
    assert got.row(0) == ("q1", "b", 0.5 * 0.5 + 0.5, 1)


@pytest.mark.parametrize(("extra", "message"), [
    (["-m", "nope"], "method must be one of"),
    (["-m", "wsum"], "weights must be given"),
    (["-m", "wsum", "-w", "1"], "one number per run (2 runs)"),
    (["-m", "wsum", "-w", "a,b"], "error: -w/--weights must be numbers separated by commas"),
    # an empty item was skipped: "1,,2" fused as 1,2 (and "1,2," as 1,2)
    (["-m", "wsum", "-w", "1,,2"], "error: -w/--weights must be numbers separated by commas "
     "(0.3,0.7), none empty, got '1,,2'"),
    (["-m", "wsum", "-w", "1,2,"], "none empty, got '1,2,'"),
    # float() reads these (as 10 and 3); they are not decimal numbers
    (["-m", "wsum", "-w", "1_0,1"], "numbers separated by commas (0.3,0.7), none empty, got '1_0,1'"),
    (["-m", "wsum", "-w", "1,\u0663"], "numbers separated by commas (0.3,0.7), none empty"),
    (["-m", "rrf", "--phi", "0.5"], "phi must be used only by method 'rbc'"),
    (["-m", "rrf", "--norm", "borda"], "not 'borda'"),
    (["-m", "rrf", "--format", "parquet"], "used with -o OUT or -o - (parquet is not printed"),
    (["-m", "wsum", "-w", "-1,2"], "weights must be finite numbers >= 0, one per run, got -1.0"),
    (["-m", "wsum", "-w", "-0.5,1e-3"], "weights must be finite numbers >= 0, one per run, got -0.5"),
    (["-m", "rrf", "--k", "-1"], "error: --k must be a number > 0, got -1.0"),
    (["-m", "nope"], "error: -m/--method must be one of"),
    (["-m", "wsum", "-w", "1,2,3"], "error: -w/--weights must be one number per run (2 runs)"),
    (["-m", "rbc", "--phi", "1"], "error: --phi must be a number, 0 < phi < 1, got 1.0"),
    (["-m", "gmnz", "--gamma", "-1"], "error: --gamma must be a number >= 0"),
    (["-m", "logn_isr", "--sigma", "2"], "error: --sigma must be a number, 0 <= sigma <= 1"),
    (["--norm", "l2"], "error: --norm must be one of"),
])
def test_errors_are_one_line(runs, capfd, extra, message) -> None:
    assert main(["fuse", *runs, *extra]) == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fasteval: error:") and message in err[0]


def test_output_that_is_an_input_is_refused(runs, capfd) -> None:
    before = open(runs[0]).read()
    assert main(["fuse", *runs, "-m", "rrf", "-o", runs[0]]) == 2
    assert "must be a file other than the input" in capfd.readouterr().err
    assert open(runs[0]).read() == before


def test_one_run_and_duplicates(runs, tmp_path, capfd) -> None:
    assert main(["fuse", runs[0], "-m", "rrf"]) == 2
    assert "given at least twice" in capfd.readouterr().err
    dup = tmp_path / "dup.run"
    dup.write_text("q1 Q0 a 1 3.0 x\nq1 Q0 a 2 2.0 x\n")
    assert main(["fuse", runs[0], str(dup), "-m", "rrf"]) == 2
    err = capfd.readouterr().err
    assert "appears more than once for query 'q1'" in err and "dup.run" in err
    # the same file twice is two runs
    assert main(["fuse", runs[0], runs[0], "-m", "sum", "--norm", "none"]) == 0
    first = capfd.readouterr().out.splitlines()[0].split()
    assert first[2] == "a" and float(first[4]) == 6.0


def test_a_run_from_standard_input(runs, tmp_path, capfd, monkeypatch) -> None:
    import io
    import sys

    def stdin(data: bytes) -> io.TextIOWrapper:
        raw = io.BytesIO(data)
        raw.name = "<stdin>"  # the name sys.stdin has
        return io.TextIOWrapper(raw)

    monkeypatch.setattr(sys, "stdin", stdin(RUN_A.encode()))
    assert main(["fuse", "-", runs[1], "-m", "sum", "--norm", "none"]) == 0
    # b: 2 + 9, c in q2: 1 + 5, a: 3 (only in run A for q1), d: 1
    assert capfd.readouterr().out.splitlines() == [
        "q1 Q0 b 1 11.0 fused-sum", "q1 Q0 a 2 3.0 fused-sum", "q1 Q0 d 3 1.0 fused-sum",
        "q2 Q0 c 1 6.0 fused-sum", "q2 Q0 a 2 4.0 fused-sum"]
    assert main(["fuse", "-", "-", "-m", "rrf"]) == 2
    assert capfd.readouterr().err.strip() == (
        "fasteval: error: RUN must be read from standard input ('-') at most once, got ['-', '-']")
    monkeypatch.setattr(sys, "stdin", stdin(b"q1 Q0 a 1 nan x\n"))
    assert main(["fuse", "-", runs[1], "-m", "rrf"]) == 2
    assert capfd.readouterr().err.strip() == (
        "fasteval: error: <stdin>, line 1, column 'score': score is NaN (not a number)")


@pytest.mark.parametrize("name, extra, message", [
    ("fused.xyz", [], "--format must be given, or -o/--output must end in one of"),
    ("fused.parquet.gz", [], "-o/--output must be a name without '.gz' for parquet output"),
    ("fused.csv.gz", ["--format", "parquet"], "without '.gz' for parquet output"),
    ("fused.trec.zst", [], "-o/--output must be a name without '.zst'"),
    ("fused.out.bz2", ["--format", "trec"], "-o/--output must be a name without '.bz2'"),
])
def test_unwritable_output_names_are_refused_before_reading(runs, tmp_path, capfd, name, extra,
                                                            message) -> None:
    """A name the writer cannot honour (no format; a compression it does not write) is found
    before the runs are read (here one is broken, and its error does not come first), and
    nothing is written: fuse wrote plain parquet as 'fused.parquet.gz' and plain text as
    'fused.trec.zst'."""
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 a 1 nan x\n")
    assert main(["fuse", runs[0], str(bad), "-o", str(tmp_path / name), *extra]) == 2
    err = capfd.readouterr().err
    assert message in err and "NaN" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.run", "b.run", "bad.run"]


def test_gzip_text_output_is_compressed(runs, tmp_path) -> None:
    import gzip

    out = tmp_path / "fused.csv.gz"
    assert main(["fuse", *runs, "-m", "sum", "--norm", "none", "-o", str(out)]) == 0
    lines = gzip.decompress(out.read_bytes()).decode().splitlines()
    assert lines[:2] == ["query_id,doc_id,score,rank", "q1,b,11.0,1"]


@pytest.mark.parametrize("suffix", ["jsonl", "trec", "parquet"])
def test_a_fused_score_past_float64_is_one_error_line(tmp_path, capfd, suffix) -> None:
    """Scores near the float64 limit sum past it (1e308 + 1e308; ranx gives inf): one error
    line naming the document and query, exit status 2 and nothing written, whatever the
    output format (a TREC or parquet output held inf)."""
    big = tmp_path / "big.run"
    big.write_text("q1 Q0 a 1 1e308 x\nq1 Q0 b 2 1 x\n")
    out = tmp_path / f"fused.{suffix}"
    assert main(["fuse", str(big), str(big), "-m", "sum", "--norm", "none", "-o", str(out)]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1
    assert "the fused score of document 'a' for query 'q1' overflows float64 (inf)" in err
    assert not out.exists()


def test_weights_separated_by_commas_or_blanks(runs, tmp_path) -> None:
    outs = []
    for text in ("0.3,0.7", " 0.3, 0.7 ", "0.3 0.7"):
        out = tmp_path / "w.csv"
        assert main(["fuse", *runs, "-m", "wsum", "-w", text, "-o", str(out)]) == 0
        outs.append(pl.read_csv(out))
    want = fasteval.fuse([fasteval.read_run(r) for r in runs], method="wsum",
                         weights=[0.3, 0.7])
    for got in outs:
        assert got.get_column("score").to_list() == want.get_column("score").to_list()


@pytest.mark.parametrize("name, fmt, wanted", [
    ("fused.csv", "parquet", "csv"), ("fused.tsv", "csv", "tsv"), ("fused.parquet", "trec", "parquet"),
    ("fused.trec.gz", "jsonl", "trec"), ("fused.txt", "parquet", "a text format"),
])
def test_format_that_contradicts_the_suffix_is_refused(runs, tmp_path, capsys, name, fmt, wanted) -> None:
    # parquet bytes under a .csv name (or CSV under .tsv) would be misread by every later reader
    out = tmp_path / name
    assert main(["fuse", *runs, "-o", str(out), "--format", fmt]) == 2
    assert capsys.readouterr().err == (f"fasteval: error: --format must be {wanted}, the format the suffix "
                                       f"of -o {str(out)!r} names (or -o without that suffix), got {fmt!r}\n")
    assert not out.exists()


@pytest.mark.parametrize("name, fmt", [("fused.txt", "csv"), ("fused.out", "parquet"), ("fused.csv", "csv")])
def test_format_that_agrees_with_the_suffix_is_written(runs, tmp_path, name, fmt) -> None:
    out = tmp_path / name
    assert main(["fuse", *runs, "-o", str(out), "--format", fmt]) == 0
    read = pl.read_parquet(out) if fmt == "parquet" else pl.read_csv(out)
    assert read.height == 5


def test_parquet_to_standard_output_when_asked_for(runs, capfdbinary) -> None:
    """-o - --format parquet writes the parquet bytes to standard output (for a pipe), as
    eval -o - --format parquet does; without -o, parquet is refused (binary on a terminal)."""
    import io

    import polars as pl

    assert main(["fuse", *runs, "-o", "-", "--format", "parquet"]) == 0
    out = capfdbinary.readouterr().out
    fused = pl.read_parquet(io.BytesIO(out))
    assert fused.columns == ["query_id", "doc_id", "score", "rank"] and fused.height > 0


def test_a_parameter_that_is_not_a_decimal_number_is_refused(runs, capfd) -> None:
    """float() reads "1_0" as 10; --k takes decimal numbers only."""
    with pytest.raises(SystemExit) as exc:
        main(["fuse", *runs, "-m", "rrf", "--k", "1_0"])
    assert exc.value.code == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--k must be a number, got '1_0'" in err[0]
