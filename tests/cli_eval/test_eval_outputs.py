"""``fasteval eval`` output files by suffix (.tsv tab-separated, .jsonl JSON Lines) and NaN
values in every printed format."""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.cli import main


@pytest.fixture
def nan_job(tmp_path):
    # -J: q2 retrieves only an unjudged document, so its ranking is empty (num_ret 0) and
    # iprec_at_recall_0.00 is trec_eval's 0 / 0 (NaN), and so is the mean
    (tmp_path / "q.qrels").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 1.0 t\nq2 Q0 z 1 1.0 t\n")
    return [str(tmp_path / "q.qrels"), str(tmp_path / "r.run"), "-m", "iprec_at_recall_0.00",
            "-m", "num_ret", "-J", "--quiet"]


def test_nan_in_table_output(nan_job, capsys):
    assert main(["eval", *nan_job]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["iprec_at_recall_0.00", "nan"]
    assert lines[2].split() == ["num_ret", "1.0000"]
    assert main(["eval", *nan_job, "-q"]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()[1:]]
    assert rows == [["r.run", "q1", "iprec_at_recall_0.00", "1.0000"], ["r.run", "q1", "num_ret", "1.0000"],
                    ["r.run", "q2", "iprec_at_recall_0.00", "nan"], ["r.run", "q2", "num_ret", "0.0000"]]
    assert main(["eval", *nan_job, "-q", "--wide"]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()[1:]]
    assert rows == [["r.run", "q1", "1.0000", "1.0000"], ["r.run", "q2", "nan", "0.0000"]]


def test_nan_in_trec_output_as_trec_eval_prints_it(nan_job, capsys):
    assert main(["trec-eval", "-J", "-m", "iprec_at_recall", "-q", *nan_job[:2]]) == 0
    ref = {tuple(ln.split()[:2]): ln.split()[2] for ln in capsys.readouterr().out.splitlines()}
    nan_text = ref[("iprec_at_recall_0.00", "q2")]
    assert nan_text in ("nan", "-nan")
    assert main(["eval", *nan_job, "--format", "trec", "-q"]) == 0
    got = [ln.split("\t") for ln in capsys.readouterr().out.splitlines()]
    assert [[c.strip() for c in row] for row in got] == [
        ["iprec_at_recall_0.00", "q1", "1.0000"], ["num_ret", "q1", "1"],
        ["iprec_at_recall_0.00", "q2", nan_text], ["num_ret", "q2", "0"],
        ["runid", "all", "r.run"], ["iprec_at_recall_0.00", "all", ref[("iprec_at_recall_0.00", "all")]],
        ["num_ret", "all", "1"]]
    assert main(["eval", *nan_job, "--format", "trec"]) == 0
    got = [[c.strip() for c in ln.split("\t")] for ln in capsys.readouterr().out.splitlines()]
    assert got[1] == ["iprec_at_recall_0.00", "all", ref[("iprec_at_recall_0.00", "all")]]
    assert got[2] == ["num_ret", "all", "1"]


@pytest.mark.parametrize("wide", [False, True])
def test_tsv_and_jsonl_outputs_by_suffix(tmp_path, wide):
    qrels = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 2]})
    run = pl.DataFrame({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "c", "d"],
                        "score": [0.5, 0.9, 0.3, 0.7]})
    qrels.write_parquet(tmp_path / "qrels.parquet")
    run.write_parquet(tmp_path / "run.parquet")
    measures = ["map", "num_ret"]
    mem = fasteval.evaluate(qrels, {"run": run}, measures)
    if wide:
        mem = mem.pivot(on="measure", index=["run_id", "query_id"], values="value")
    agg = fasteval.aggregate(fasteval.evaluate(qrels, {"run": run}, measures))
    base = ["eval", str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet"), "-m", "map", "-m",
            "num_ret", "--quiet", *(["--wide"] if wide else [])]
    for ext in ("tsv", "jsonl", "ndjson", "csv", "json"):
        pq, ag = tmp_path / f"pq.{ext}", tmp_path / f"agg.{ext}"
        assert main([*base, "-q", "-o", str(pq), "--aggregate-out", str(ag)]) == 0
        if ext == "tsv":
            assert "," not in pq.read_text() and "\t" in pq.read_text().splitlines()[0]
            got, got_agg = pl.read_csv(pq, separator="\t"), pl.read_csv(ag, separator="\t")
        elif ext == "csv":
            got, got_agg = pl.read_csv(pq), pl.read_csv(ag)
        elif ext == "json":
            got, got_agg = pl.read_json(pq), pl.read_json(ag)
        else:
            assert len(pq.read_text().splitlines()) == mem.height
            got, got_agg = pl.read_ndjson(pq), pl.read_ndjson(ag)
        assert got.equals(mem), ext
        assert got_agg.equals(agg), ext


@pytest.mark.parametrize("out", ["res.json", "res.jsonl", "-"])
def test_nan_is_not_written_as_json_null(nan_job, tmp_path, capsys, out):
    # JSON has no NaN: it would be written as null, read back as a missing value
    target = out if out == "-" else str(tmp_path / out)
    assert main(["eval", *nan_job, "-q", "--format", "json", "-o", target]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "JSON cannot hold nan" in err and "write parquet or CSV instead" in err
    assert out == "-" or not (tmp_path / out).exists()
    assert main(["eval", *nan_job[:2], "-m", "num_ret", "--quiet", "-q", "--format", "json", "-o", target]) == 0


def test_per_query_trec_text_of_several_runs_names_each_run(tmp_path, capsys):
    (tmp_path / "q").write_text("q1 0 a 1\n")
    (tmp_path / "r1").write_text("q1 Q0 a 1 1.0 t\n")
    (tmp_path / "r2").write_text("q1 Q0 b 1 1.0 t\n")
    args = ["eval", str(tmp_path / "q"), str(tmp_path / "r1"), "-m", "P@1", "-q", "--format", "trec", "--quiet"]
    assert main(args) == 0
    one = [[c.strip() for c in ln.split("\t")] for ln in capsys.readouterr().out.splitlines()]
    # one run: trec_eval -q's lines (per query, then the runid and summary lines)
    assert one == [["P@1", "q1", "1.0000"], ["runid", "all", "r1"], ["P@1", "all", "1.0000"]]
    assert main([*args[:3], str(tmp_path / "r2"), *args[3:]]) == 0
    two = [[c.strip() for c in ln.split("\t")] for ln in capsys.readouterr().out.splitlines()]
    assert two == [["P@1", "q1", "1.0000"], ["runid", "all", "r1"], ["P@1", "all", "1.0000"],
                   ["P@1", "q1", "0.0000"], ["runid", "all", "r2"], ["P@1", "all", "0.0000"]]


def test_per_query_trec_text_is_trec_eval_q_output(tmp_path, capsys):
    # trec_eval -q prints num_q, gm_map and gm_bpref in the summary only: no per-topic line
    from tests._data import SHIPPED_TREC

    qrels, run = str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test")
    measures = ["-m", "runid", "-m", "num_q", "-m", "map", "-m", "gm_map", "-m", "gm_bpref", "-m", "P.5"]
    assert main(["trec-eval", "-q", *measures, qrels, run]) == 0
    want = capsys.readouterr().out.splitlines()
    eval_measures = ["-m", "num_q", "-m", "map", "-m", "gm_map", "-m", "gm_bpref", "-m", "P_5"]
    for target in (["--format", "trec"], ["-o", str(tmp_path / "res.trec")]):
        assert main(["eval", qrels, run, *eval_measures, "-q", *target, "--quiet"]) == 0
        out = capsys.readouterr().out
        got = (out if target[0] == "--format" else (tmp_path / "res.trec").read_text()).splitlines()
        assert [ln for ln in got if "\tall\t" not in ln] == [ln for ln in want if "\tall\t" not in ln]
        # the summary after the per-topic lines (the run named by its file, trec_eval's by its tag)
        assert got[6] == "runid                 \tall\tresults.test"
        assert sorted(got[7:]) == sorted(ln for ln in want if "\tall\t" in ln and not ln.startswith("runid"))


@pytest.mark.parametrize("per_query", [[], ["-q"], ["-q", "--wide"]])
@pytest.mark.parametrize("out", ["res.json", "res.jsonl", None])
def test_json_refused_for_nan_leaves_no_aggregate_file(nan_job, tmp_path, capsys, out, per_query):
    # the JSON output is refused (NaN); the job fails whole: --aggregate-out, whose own
    # format holds NaN, is not left behind by a job that exits 2
    target = ["-o", str(tmp_path / "outs" / out)] if out else ["--format", "json"]
    (tmp_path / "outs").mkdir()
    assert main(["eval", *nan_job, *per_query, *target,
                 "--aggregate-out", str(tmp_path / "outs" / "agg.parquet")]) == 2
    assert "JSON cannot hold nan" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "outs").iterdir()) == []


def test_aggregate_out_trec_suffix_writes_trec_eval_lines(tmp_path, capsys):
    # --aggregate-out NAME.trec is written as -o NAME.trec is: trec_eval's summary lines
    # (counts as integers), which `fasteval trec-eval` prints for the same measures
    from tests._data import SHIPPED_TREC

    qrels, run = str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test")
    measures = ["-m", "num_q", "-m", "num_ret", "-m", "map", "-m", "gm_map"]
    assert main(["trec-eval", *measures, qrels, run]) == 0
    want = [ln.split("\t") for ln in capsys.readouterr().out.splitlines() if not ln.startswith("runid")]
    out = tmp_path / "agg.trec"
    assert main(["eval", qrels, run, *measures, "--aggregate-out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    lines = [ln.split("\t") for ln in out.read_text().splitlines()]
    assert lines[0][:2] == ["runid                 ", "all"]
    assert sorted(lines[1:]) == sorted(want)


@pytest.mark.parametrize("qid, run_name, out", [
    *((qid, "r", out) for qid in ("q\t1", "q\n1", "q\r1") for out in (None, "res.trec")),
    *(("q1", name, out) for name in ("r\tx", "r\nx") for out in (None, "res.trec", "agg.trec")),
])
def test_trec_lines_refuse_ids_that_would_split_a_line(tmp_path, capsys, qid, run_name, out):
    # a tab or line break inside a query id (JSON Lines holds any) or a run name (from the
    # file name) would add a field or a line to trec_eval's "measure TAB query TAB value"
    import json

    (tmp_path / "q.jsonl").write_text(json.dumps({"query_id": qid, "doc_id": "d", "relevance": 1}) + "\n")
    (tmp_path / run_name).write_text(json.dumps({"query_id": qid, "doc_id": "d", "score": 1.0}) + "\n")
    target = {None: ["--format", "trec"], "res.trec": ["-o", str(tmp_path / "res.trec")],
              "agg.trec": ["--aggregate-out", str(tmp_path / "agg.trec")]}[out]
    code = main(["eval", str(tmp_path / "q.jsonl"), str(tmp_path / run_name), "-m", "P@1", "-q",
                 *target, "--quiet"])
    captured = capsys.readouterr()
    col, value = ("query_id", qid) if qid != "q1" else ("run_id", run_name)
    assert (code, captured.out) == (2, "")
    assert captured.err.splitlines() == [
        f"fasteval: error: column {col!r}: {col} {value!r} cannot be written as trec_eval lines "
        "(a tab, line break or NUL would split or cut its line); write csv, json or parquet instead"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["q.jsonl", run_name])


def test_trec_lines_keep_a_space_inside_an_id(tmp_path, capsys):
    (tmp_path / "q.csv").write_text('query_id,doc_id,relevance\n"q 1",d,1\n')
    (tmp_path / "r.csv").write_text('query_id,doc_id,score\n"q 1",d,1\n')
    assert main(["eval", str(tmp_path / "q.csv"), str(tmp_path / "r.csv"), "-m", "P@1", "-q", "--format",
                 "trec", "--quiet"]) == 0
    assert [ln.split("\t") for ln in capsys.readouterr().out.splitlines()][0] == [
        "P@1                   ", "q 1", "1.0000"]


@pytest.mark.parametrize("name", ["agg", "agg.out"])
def test_aggregate_out_without_a_known_suffix_is_the_text_table_as_for_o(tmp_path, capsys, name):
    # --aggregate-out reads its format from the suffix by -o's rule: no suffix, or one
    # that names no format, is the text table (the one --aggregate-out - prints)
    from tests._data import SHIPPED_TREC

    qrels, run = str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test")
    assert main(["eval", qrels, run, "-m", "map", "-m", "num_q", "-o", str(tmp_path / f"o{name}"),
                 "--aggregate-out", str(tmp_path / name), "--quiet"]) == 0
    rows = [ln.split() for ln in (tmp_path / name).read_text().splitlines()]
    assert rows == [["run_id", "measure", "value"], ["results.test", "map", "0.1785"],
                    ["results.test", "num_q", "3.0000"]]
    assert (tmp_path / f"o{name}").read_text().splitlines()[0].split() == ["measure", "results.test"]


@pytest.mark.parametrize("name, fmt, wanted", [
    ("res.csv", "parquet", "csv"), ("res.tsv", "json", "csv"), ("res.parquet", "table", "parquet"),
    ("res.jsonl", "trec", "json"), ("res.trec", "csv", "trec"),
    ("res.txt", "parquet", "a text format"),
])
def test_format_that_contradicts_the_output_suffix_is_refused(tmp_path, capsys, name, fmt, wanted):
    # parquet bytes under a .csv name (or a text table under .parquet) would be misread by
    # every later reader of the file: refused before anything is read or written
    from tests._data import SHIPPED_TREC

    out = tmp_path / name
    assert main(["eval", str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test"), "-m", "map",
                 "-o", str(out), "--format", fmt, "--quiet"]) == 2
    assert capsys.readouterr().err == (f"fasteval: error: --format must be {wanted}, the format the suffix "
                                       f"of -o {str(out)!r} names (or -o without that suffix), got {fmt!r}\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name, fmt, first", [
    ("res.txt", "trec", "runid"), ("res.tsv", "csv", "run_id\tmeasure\tvalue"), ("res.out", "csv", "run_id,measure,value"),
])
def test_format_that_agrees_with_the_output_suffix_is_written(tmp_path, capsys, name, fmt, first):
    from tests._data import SHIPPED_TREC

    out = tmp_path / name
    assert main(["eval", str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test"), "-m", "map",
                 "-o", str(out), "--format", fmt, "--quiet"]) == 0
    assert out.read_text().startswith(first)
