"""``fasteval compare``: scoring runs, --results files, formats, errors."""

from __future__ import annotations

import io

import numpy as np
import polars as pl
import pytest

import fasteval
from fasteval.cli import main
from fasteval.compare import compare

pytest.importorskip("scipy")
if not hasattr(fasteval, "evaluate"):  # pragma: no cover
    pytest.skip("fasteval.evaluate missing", allow_module_level=True)


@pytest.fixture(scope="module")
def trec_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("trec")
    rng = np.random.default_rng(0)
    rel = {}
    with open(d / "qrels.txt", "w") as f:
        for q in range(20):
            for doc in range(30):
                if rng.uniform() < 0.2 or doc == q:
                    g = int(rng.integers(1, 3))
                    rel[(q, doc)] = g
                    f.write(f"q{q} 0 d{doc} {g}\n")
    for name, noise in (("bm25", 1.5), ("dense", 0.5), ("splade", 0.9)):
        with open(d / f"{name}.txt", "w") as f:
            for q in range(20):
                scored = sorted(
                    ((rel.get((q, doc), 0) + rng.normal(0, noise), doc) for doc in range(30)),
                    reverse=True,
                )
                for rank, (s, doc) in enumerate(scored[:15]):
                    f.write(f"q{q} Q0 d{doc} {rank + 1} {s:.6f} {name}\n")
    return d


def _cli(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_scores_runs_and_matches_python_api(trec_files, capsys):
    d = trec_files
    argv = [
        "compare",
        str(d / "qrels.txt"),
        str(d / "bm25.txt"),
        str(d / "dense.txt"),
        str(d / "splade.txt"),
        "-m",
        "ndcg@10",
        "-m",
        "map",
        "--baseline",
        "bm25",
        "--test",
        "t",
        "--test",
        "randomization",
        "--resamples",
        "500",
        "--format",
        "csv",
    ]
    rc, out, err = _cli(argv, capsys)
    assert rc == 0, err
    got = pl.read_csv(io.StringIO(out))
    runs = {n: fasteval.read_run(d / f"{n}.txt") for n in ("bm25", "dense", "splade")}
    runs = {k: v.drop("run_id") if "run_id" in v.columns else v for k, v in runs.items()}
    results = fasteval.evaluate(fasteval.read_qrels(d / "qrels.txt"), runs, ["ndcg@10", "map"])
    ref = compare(
        results, baseline="bm25", tests=["t", "randomization"], n_resamples=500
    ).to_frame()
    assert got["run_id"].to_list() == ref["run_id"].to_list()
    assert set(got["versus"].to_list()) == {"bm25"}
    np.testing.assert_allclose(got["p_value"].to_numpy(), ref["p_value"].to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(got["mean_diff"].to_numpy(), ref["mean_diff"].to_numpy(), rtol=1e-12)


def test_results_files_long_and_wide(trec_files, tmp_path, capsys):
    d = trec_files
    runs = {n: fasteval.read_run(d / f"{n}.txt") for n in ("bm25", "dense")}
    runs = {k: v.drop("run_id") if "run_id" in v.columns else v for k, v in runs.items()}
    results = fasteval.evaluate(fasteval.read_qrels(d / "qrels.txt"), runs, ["P@5", "map"])
    results.write_parquet(tmp_path / "long.parquet")
    for name in ("bm25", "dense"):
        (
            results.filter(pl.col("run_id") == name)
            .drop("run_id")
            .pivot(on="measure", index="query_id", values="value")
            .write_csv(tmp_path / f"{name}.csv")
        )
    base = ["--test", "t", "--format", "csv"]
    rc1, out1, err1 = _cli(["compare", "--results", str(tmp_path / "long.parquet"), *base], capsys)
    rc2, out2, err2 = _cli(
        ["compare", "--results", str(tmp_path / "bm25.csv"), str(tmp_path / "dense.csv"), *base],
        capsys,
    )
    assert rc1 == 0 and rc2 == 0, err1 + err2
    a, b = pl.read_csv(io.StringIO(out1)), pl.read_csv(io.StringIO(out2))
    assert a.height == 2 and b.height == 2
    assert sorted(a["measure"].to_list()) == sorted(b["measure"].to_list())
    np.testing.assert_allclose(
        a.sort("measure")["p_value"].to_numpy(), b.sort("measure")["p_value"].to_numpy(), rtol=1e-12
    )
    rc, out, _ = _cli(
        ["compare", "--results", str(tmp_path / "long.parquet"), "-m", "map", *base], capsys
    )
    assert rc == 0 and pl.read_csv(io.StringIO(out))["measure"].to_list() == ["map"]


def test_table_output_files_and_plots(trec_files, tmp_path, capsys):
    d = trec_files
    argv = [
        "compare",
        str(d / "qrels.txt"),
        str(d / "bm25.txt"),
        str(d / "dense.txt"),
        "-m",
        "P_5",
        "--test",
        "t",
        "--test",
        "bootstrap",
        "--resamples",
        "300",
        "--details",
        str(tmp_path / "det.parquet"),
        "--plot",
        f"differences={tmp_path / 'd.png'}",
    ]
    rc, out, err = _cli(argv, capsys)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["run", "P@5"] and lines[2].startswith("bm25 (a)")
    assert "p(bootstrap)" in out and "20 queries paired" in out
    assert pl.read_parquet(tmp_path / "det.parquet").height == 2
    assert (tmp_path / "d.png").read_bytes()[:4] == b"\x89PNG"
    rc, out, err = _cli([*argv[:12], "-o", str(tmp_path / "t.tex")], capsys)
    assert rc == 0 and out == ""
    assert "\\begin{tabular}{lr}" in (tmp_path / "t.tex").read_text()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--plot", "violin=x.png"], "--plot must be KIND=PATH"),
        (["--test", "anova"], "--test must be"),
        (["--baseline", "nope"], "baseline must be"),
        (["--format", "parquet"], "--format must be used with -o"),
        (["-o", "report.json"], "-o/--output must be a name ending in .txt, .md, .tex, .html, .htm, "
                                ".csv, .parquet, .pq, or --format to choose the format, got 'report.json'"),
        (["--details", "all.json"], "--details must be a name ending in .csv, .parquet or .pq, got "
                                    "'all.json'"),
        (["--marks", "dagger"], "--marks must be letters or none without --baseline, got 'dagger'"),
    ],
)
def test_user_errors_exit_2(trec_files, capsys, extra, message):
    d = trec_files
    rc, out, err = _cli(
        [
            "compare",
            str(d / "qrels.txt"),
            str(d / "bm25.txt"),
            str(d / "dense.txt"),
            "-m",
            "map",
            *extra,
        ],
        capsys,
    )
    assert rc == 2 and message in err and err.startswith("fasteval: error:")
    assert out == "" and len(err.strip().splitlines()) == 1


def test_dagger_marks_without_baseline_are_refused_before_reading(tmp_path, capsys):
    # was "marks must be ...", after every run had been read and scored
    rc, out, err = _cli(["compare", str(tmp_path / "no_qrels"), str(tmp_path / "no_run"),
                         "-m", "map", "--marks", "dagger"], capsys)
    assert rc == 2 and out == ""
    assert err == ("fasteval: error: --marks must be letters or none without --baseline, got "
                   "'dagger'\n")


def test_errors_raised_by_compare_name_the_command_line_option(tmp_path, capsys):
    path = tmp_path / "r.csv"
    pl.DataFrame({"run_id": ["a"] * 4 + ["b"] * 4, "query_id": [1, 2, 3, 4] * 2,
                  "map": [.1, .2, .3, .4, .2, .2, .5, .1],
                  "p5": [.1, .2, .3, None, .2, .2, .5, .1]}).write_csv(path)
    for extra, message in (
        (["--baseline", "zz"], "--baseline must be one of the runs ['a', 'b'], got 'zz'"),
        (["-m", "nosuch"], "-m/--measure must be measures present in the results"),
        (["--test", "randomization", "--correction", "maxt"],
         "--family must be 'measure' with correction='maxt' when measures pair different"),
    ):
        rc, out, err = _cli(["compare", "--results", str(path), *extra], capsys)
        assert rc == 2 and out == "" and err.startswith(f"fasteval: error: {message}")
        assert len(err.strip().splitlines()) == 1


def test_argument_errors(trec_files, tmp_path, capsys):
    d = trec_files
    rc, _, err = _cli(["compare", str(d / "qrels.txt"), str(d / "bm25.txt")], capsys)
    assert rc == 2 and "-m/--measure" in err
    rc, _, err = _cli(["compare", str(d / "qrels.txt"), "--results", str(d / "bm25.txt")], capsys)
    assert rc == 2 and "omitted when --results" in err
    rc, _, err = _cli(["compare", "-m", "map"], capsys)
    assert rc == 2 and "QRELS RUN" in err
    rc, _, err = _cli(["compare", "--results", str(tmp_path / "missing.parquet")], capsys)
    assert rc == 2 and "missing.parquet" in err


def test_results_without_rows_and_without_common_queries(tmp_path, capsys):
    from fasteval.cli import main as cli_main

    empty = tmp_path / "empty.csv"
    empty.write_text("run_id,query_id,map\n")
    assert cli_main(["compare", "--results", str(empty)]) == 2
    assert capsys.readouterr().err == (f"fasteval: error: {empty}: no rows (columns: ['run_id', "
                                       "'query_id', 'map']); expected per-query results\n")
    apart = tmp_path / "apart.csv"
    apart.write_text("run_id,query_id,map\na,1,0.5\nb,2,0.3\n")
    assert cli_main(["compare", "--results", str(apart)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no query has a value for every run" in err
    assert "(--missing zero)" in err


def test_qrels_or_a_run_from_standard_input(trec_files, tmp_path, capsys, monkeypatch):
    import sys

    d = trec_files
    args = ["-m", "map", "--test", "t", "--format", "csv"]

    def stdin(path) -> io.TextIOWrapper:
        raw = io.BytesIO(open(path, "rb").read())
        raw.name = "<stdin>"  # the name sys.stdin has
        return io.TextIOWrapper(raw)

    assert main(["compare", str(d / "qrels.txt"), str(d / "bm25.txt"), str(d / "dense.txt"),
                 *args]) == 0
    want = pl.read_csv(io.StringIO(capsys.readouterr().out))
    monkeypatch.setattr(sys, "stdin", stdin(d / "bm25.txt"))
    assert main(["compare", str(d / "qrels.txt"), "-", str(d / "dense.txt"), *args]) == 0
    got = pl.read_csv(io.StringIO(capsys.readouterr().out))
    assert got.get_column("run_id").to_list() == ["stdin"]
    assert got.drop("run_id").equals(want.drop("run_id"))
    # stems that repeat name the files by path; standard input is still "stdin", not "-"
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    for sub in ("x", "y"):
        (tmp_path / sub / "run.txt").write_bytes((d / "dense.txt").read_bytes())
    monkeypatch.setattr(sys, "stdin", stdin(d / "bm25.txt"))
    assert main(["compare", str(d / "qrels.txt"), "-", str(tmp_path / "x" / "run.txt"),
                 str(tmp_path / "y" / "run.txt"), *args]) == 0
    got = pl.read_csv(io.StringIO(capsys.readouterr().out))
    assert got.get_column("run_id").to_list()[:2] == ["stdin", "stdin"]
    monkeypatch.setattr(sys, "stdin", stdin(d / "qrels.txt"))
    assert main(["compare", "-", str(d / "bm25.txt"), str(d / "dense.txt"), *args]) == 0
    assert pl.read_csv(io.StringIO(capsys.readouterr().out)).equals(want)
    assert main(["compare", "-", "-", str(d / "dense.txt"), *args]) == 2
    assert capsys.readouterr().err.strip() == (
        "fasteval: error: QRELS RUN must be read from standard input ('-') at most once, got "
        f"['-', '-', '{d / 'dense.txt'}']")


def test_output_formats_from_the_suffix_or_format(trec_files, tmp_path, capsys):
    d = trec_files
    base = ["compare", str(d / "qrels.txt"), str(d / "bm25.txt"), str(d / "dense.txt"), "-m", "map"]
    rc, _, err = _cli([*base, "-o", str(tmp_path / "plain"), "--details", str(tmp_path / "all")], capsys)
    assert rc == 0, err
    assert (tmp_path / "plain").read_text().split()[:2] == ["run", "MAP"]  # no suffix: the table
    details = pl.read_csv(tmp_path / "all")  # no suffix: CSV
    assert details.get_column("measure").unique().to_list() == ["map"]
    assert set(details.get_column("test")) == {"t", "randomization", "bootstrap"} and details.get_column("p_value").is_not_null().all()
    rc, _, err = _cli([*base, "-o", str(tmp_path / "r.json"), "--format", "markdown"], capsys)
    assert rc == 0, err
    assert (tmp_path / "r.json").read_text().startswith("| run | MAP |")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["all", "plain", "r.json"]



@pytest.mark.parametrize(
    "plot, message",
    [
        ("differences=d.xyz", "--plot differences must be a .png, .svg or .pdf file, got"),
        ("cutoffs=c.png", "--plot cutoffs must be drawn from a compared measure that has a "
                          "rank cutoff (e.g. -m ndcg@10 or -m P@10;"),
    ],
)
def test_plot_errors_come_before_any_output(trec_files, tmp_path, capsys, plot, message):
    """A plot that cannot be drawn (image suffix, measures it needs) is refused before the
    report or --details is written: neither is left behind next to an error."""
    d = trec_files
    kind, _, name = plot.partition("=")
    rc, out, err = _cli(
        ["compare", str(d / "qrels.txt"), str(d / "bm25.txt"), str(d / "dense.txt"), "-m", "map",
         "--test", "t", "-o", str(tmp_path / "r.txt"), "--details", str(tmp_path / "det.csv"),
         "--plot", f"{kind}={tmp_path / name}"],
        capsys,
    )
    assert rc == 2 and out == "" and err.startswith(f"fasteval: error: {message}")
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_measure_undefined_for_a_query_is_refused_naming_the_run_file(tmp_path, capsys):
    # with -J, r1's q2 ranks only an unjudged document: its ranking is empty and
    # iprec_at_recall is trec_eval's 0/0 (NaN) there; the error names r1.txt, not a row of
    # the table compare() builds inside
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 b 1\nq3 0 c 1\n")
    (tmp_path / "r1.txt").write_text("q1 Q0 a 1 2.0 r1\nq2 Q0 z 1 1.0 r1\nq3 Q0 c 1 1.0 r1\n")
    (tmp_path / "r2.txt").write_text("q1 Q0 b 1 2.0 r2\nq2 Q0 b 1 1.0 r2\nq3 Q0 c 1 1.0 r2\n")
    argv = ["compare", str(tmp_path / "qrels.txt"), str(tmp_path / "r1.txt"),
            str(tmp_path / "r2.txt"), "-m", "map", "-m", "iprec_at_recall_0.00", "--test", "t"]
    rc, out, err = _cli([*argv, "-J"], capsys)
    assert (rc, out) == (2, "")
    assert err == (f"fasteval: error: {tmp_path / 'r1.txt'}: iprec_at_recall_0.00 is undefined "
                   "(NaN, trec_eval's 0/0) for query 'q2': -J leaves that query no judged "
                   "document; compare other measures (-m) or leave out -J\n")
    rc, out, err = _cli(argv, capsys)  # without -J every value is defined
    assert rc == 0 and "iprec" in out


def test_scoring_errors_name_the_command_line_options(trec_files, capsys):
    # the one line names the option (-l/--relevance-level), not evaluate()'s parameter
    # ("relevance_level must be ...")
    d = trec_files
    base = ["compare", str(d / "qrels.txt"), str(d / "bm25.txt"), str(d / "dense.txt"),
            "--test", "t"]
    rc, out, err = _cli([*base, "-m", "map", "-l", "99999999999"], capsys)
    assert (rc, out) == (2, "")
    assert err == ("fasteval: error: -l/--relevance-level must be an integer from 0 to "
                   "2147483647, got 99999999999\n")
    rc, out, err = _cli([*base, "-m", "relstring.10"], capsys)
    assert (rc, out) == (2, "")
    assert err == ("fasteval: error: -m/--measure must be numeric measures (relstring is "
                   "printed by `fasteval trec-eval`), got ['relstring_10']\n")


@pytest.mark.parametrize("command", [["compare"], ["power", "--min-diff", "0.05"]])
def test_a_long_table_without_its_value_column_names_the_file_and_the_column(
    tmp_path, capsys, command
):
    f = tmp_path / "scores.csv"
    f.write_text("run_id,query_id,measure,score\na,1,map,0.5\nb,1,map,0.3\n")
    rc, _, err = _cli([*command, "--results", str(f)], capsys)
    assert rc == 2
    assert err == (f"fasteval: error: {f}: missing column 'value': a long table has columns "
                   "run_id, query_id, measure and value (columns: ['run_id', 'query_id', "
                   "'measure', 'score'])\n")


@pytest.mark.parametrize("name, fmt, wanted", [
    ("r.csv", "parquet", "csv"), ("r.parquet", "csv", "parquet"), ("r.md", "latex", "markdown"),
    ("r.txt", "parquet", "a text format"),
])
def test_format_that_contradicts_the_output_suffix_is_refused(tmp_path, capsys, name, fmt, wanted):
    from tests._data import SHIPPED_TREC

    run2 = tmp_path / "b.test"
    run2.write_bytes((SHIPPED_TREC / "results.test").read_bytes())
    out = tmp_path / name
    rc, _, err = _cli(["compare", str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test"),
                       str(run2), "-m", "map", "-o", str(out), "--format", fmt], capsys)
    assert rc == 2
    assert err == (f"fasteval: error: --format must be {wanted}, the format the suffix of -o {str(out)!r} "
                   f"names (or -o without that suffix), got {fmt!r}\n")
    assert not out.exists()
