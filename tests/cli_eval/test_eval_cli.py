"""`fasteval eval`: outputs, chunked = in-memory, many runs, formats, errors."""

from __future__ import annotations

import json

import polars as pl
import pytest

import fasteval
from fasteval import aggregate, evaluate
from fasteval.cli import main
from fasteval.datasets import SynthSpec, generate

TREC = "datasets/trec"
M = ["ndcg@10", "map", "P@5", "recip_rank", "num_ret", "gm_map", "bpref"]


def _m_args(measures=M):
    return sum((["-m", m] for m in measures), [])


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    d = tmp_path_factory.mktemp("synth")
    qrels, runs = generate(SynthSpec(queries=120, depth=30, runs=3, seed=9, judged=12))
    qrels.write_parquet(d / "qrels.parquet")
    (d / "runs").mkdir()
    for name, df in runs.items():
        df.write_parquet(d / "runs" / f"{name}.parquet", row_group_size=997)
    return d, qrels, runs


def _expected(qrels, runs: dict, measures=M, **opts) -> pl.DataFrame:
    return evaluate(qrels, runs, measures, **opts)


def _canon(df: pl.DataFrame) -> list[tuple]:
    return sorted(df.select("run_id", pl.col("query_id").cast(pl.Utf8), "measure", "value").rows())


def test_trec_sample_table_matches_api(capsys):
    rc = main(["eval", f"{TREC}/qrels.test", f"{TREC}/results.test", "-m", "ndcg@10", "-m", "map", "--quiet"])
    assert rc == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["measure", "results.test"]
    agg = aggregate(evaluate(fasteval.read_qrels(f"{TREC}/qrels.test"),
                                               fasteval.read_run(f"{TREC}/results.test"), ["ndcg@10", "map"]))
    vals = dict(zip(agg["measure"], agg["value"], strict=True))
    assert out[1].split() == ["ndcg@10", f"{vals['ndcg@10']:.4f}"]  # named as asked
    assert out[2].split() == ["map", f"{vals['map']:.4f}"]


def test_trec_sample_json_exact(capsys):
    rc = main(["eval", f"{TREC}/qrels.test", f"{TREC}/results.test", *_m_args(), "--format", "json", "--quiet"])
    assert rc == 0
    got = pl.DataFrame(json.loads(capsys.readouterr().out))
    q = fasteval.read_qrels(f"{TREC}/qrels.test")
    r = fasteval.read_run(f"{TREC}/results.test")
    exp = aggregate(evaluate(q, r, M, run_id="results.test"))
    assert sorted(got.rows()) == sorted(exp.rows())


@pytest.mark.parametrize(("chunk", "target"), [(1, "run_0"), (29, "all"), (31, "all"), (10**7, "all")])
def test_parquet_chunked_equals_in_memory(tmp_path, synth, chunk, target, capsys):
    """Chunk = 1 row: one query per chunk; 29/31 rows: boundaries inside queries; 10**7: one chunk."""
    d, qrels, runs = synth
    out = tmp_path / "pq.parquet"
    src = d / "runs" if target == "all" else d / "runs" / f"{target}.parquet"
    rc = main(["eval", str(d / "qrels.parquet"), str(src), *_m_args(), "-q", "-o", str(out),
               "--max-rows-per-chunk", str(chunk), "--quiet", "--log-json"])
    assert rc == 0
    log = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert set(log["mode"].values()) == {"stream"}
    expected_runs = runs if target == "all" else {target: runs[target]}
    if chunk == 1:  # every query its own chunk
        assert log["chunks"] == expected_runs[target].get_column("query_id").n_unique()
    got = pl.read_parquet(out)
    assert got.columns == ["run_id", "query_id", "measure", "value"]
    assert _canon(got) == _canon(_expected(qrels, expected_runs))


def test_unsorted_input_partitioned_exact(tmp_path, synth, capsys):
    d, qrels, runs = synth
    shuffled = runs["run_1"].sample(fraction=1.0, shuffle=True, seed=4)
    p = tmp_path / "shuffled.parquet"
    shuffled.write_parquet(p, row_group_size=500)
    out = tmp_path / "o.parquet"
    rc = main(["eval", str(d / "qrels.parquet"), str(p), *_m_args(), "-q", "-o", str(out),
               "--max-rows-per-chunk", "700", "--log-json", "--quiet"])
    assert rc == 0
    log = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert log["mode"] == {"shuffled": "partition"}
    assert _canon(pl.read_parquet(out)) == _canon(_expected(qrels, {"shuffled": shuffled}))


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_later_source_restarted_partitioned_keeps_earlier_rows(tmp_path, synth, capsys, fmt):
    """Results go out chunk by chunk; a source found unsorted after it wrote some takes
    them back before being scored again, and the sources before it keep theirs."""
    d, qrels, runs = synth
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    runs["run_0"].write_parquet(runs_dir / "a_sorted.parquet", row_group_size=300)
    shuffled = runs["run_1"].sample(fraction=1.0, shuffle=True, seed=5)
    shuffled.write_parquet(runs_dir / "b_shuffled.parquet", row_group_size=300)
    out = tmp_path / f"o.{fmt}"
    rc = main(["eval", str(d / "qrels.parquet"), str(runs_dir), *_m_args(), "-q", "-o", str(out),
               "--max-rows-per-chunk", "600", "--log-json", "--quiet"])
    assert rc == 0
    log = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert log["mode"] == {"a_sorted": "stream", "b_shuffled": "partition"}
    got = pl.read_parquet(out) if fmt == "parquet" else pl.read_csv(out, schema_overrides={"query_id": pl.Utf8})
    expected = _expected(qrels, {"a_sorted": runs["run_0"], "b_shuffled": shuffled})
    assert got.height == expected.height
    assert _canon(got) == _canon(expected)


def test_complete_chunked_equals_in_memory(tmp_path, synth):
    d, qrels, runs = synth
    out = tmp_path / "c.parquet"
    rc = main(["eval", str(d / "qrels.parquet"), str(d / "runs" / "run_2.parquet"), *_m_args(), "-q", "-c",
               "-o", str(out), "--max-rows-per-chunk", "113", "--quiet"])
    assert rc == 0
    exp = _expected(qrels, {"run_2": runs["run_2"]}, complete=True)
    assert _canon(pl.read_parquet(out)) == _canon(exp)


def test_options_forwarded(tmp_path, synth):
    d, qrels, runs = synth
    out = tmp_path / "o.parquet"
    rc = main(["eval", str(d / "qrels.parquet"), str(d / "runs" / "run_0.parquet"), *_m_args(), "-q",
               "-l", "2", "-M", "7", "-J", "-o", str(out), "--max-rows-per-chunk", "50", "--quiet"])
    assert rc == 0
    exp = _expected(qrels, {"run_0": runs["run_0"]}, relevance_level=2, max_docs=7, judged_only=True)
    assert _canon(pl.read_parquet(out)) == _canon(exp)


def test_run_id_column_and_hive(tmp_path, synth):
    d, qrels, runs = synth
    table = pl.concat([df.with_columns(pl.lit(n).alias("run_id")) for n, df in runs.items()])
    table.write_parquet(tmp_path / "all.parquet")
    for n, df in runs.items():
        (tmp_path / "hive" / f"run_id={n}").mkdir(parents=True)
        df.write_parquet(tmp_path / "hive" / f"run_id={n}" / "part-0.parquet")
    exp = _canon(_expected(qrels, runs))
    for src in (tmp_path / "all.parquet", tmp_path / "hive"):
        out = tmp_path / f"{src.name}.out.parquet"
        assert main(["eval", str(d / "qrels.parquet"), str(src), *_m_args(), "-q", "-o", str(out),
                     "--max-rows-per-chunk", "200", "--quiet"]) == 0
        assert _canon(pl.read_parquet(out)) == exp


def test_wide_and_aggregate_out(tmp_path, synth):
    d, qrels, runs = synth
    out, agg = tmp_path / "w.parquet", tmp_path / "agg.parquet"
    rc = main(["eval", str(d / "qrels.parquet"), str(d / "runs"), *_m_args(), "-q", "--wide", "-o", str(out),
               "--aggregate-out", str(agg), "--max-rows-per-chunk", "400", "--quiet"])
    assert rc == 0
    wide = pl.read_parquet(out)
    assert wide.columns == ["run_id", "query_id", *M]  # the names asked for
    exp = _expected(qrels, runs)
    long = wide.unpivot(index=["run_id", "query_id"], variable_name="measure", value_name="value")
    assert _canon(long) == _canon(exp)
    got = {(r, m): v for r, m, v in pl.read_parquet(agg).rows()}
    for r, m, v in aggregate(exp).rows():
        assert got[(r, m)] == pytest.approx(v, rel=1e-12, abs=1e-15)


def test_csv_to_stdout_and_trec_format(capsys, synth):
    d, qrels, runs = synth
    rc = main(["eval", str(d / "qrels.parquet"), str(d / "runs" / "run_1.parquet"), "-m", "P@5", "-m", "num_ret",
               "-q", "--format", "csv", "--quiet"])
    assert rc == 0
    import io

    got = pl.read_csv(io.StringIO(capsys.readouterr().out), schema_overrides={"query_id": pl.Utf8})
    assert _canon(got) == _canon(_expected(qrels, {"run_1": runs["run_1"]}, ["P@5", "num_ret"]))
    rc = main(["eval", str(d / "qrels.parquet"), str(d / "runs" / "run_1.parquet"), "-m", "P@5", "-m", "num_ret",
               "--format", "trec", "--quiet"])
    lines = capsys.readouterr().out.splitlines()
    agg = aggregate(_expected(qrels, {"run_1": runs["run_1"]}, ["P@5", "num_ret"]))
    vals = dict(zip(agg["measure"], agg["value"], strict=True))
    assert lines == [
        f"{'runid':<22}\tall\trun_1",
        f"{'P@5':<22}\tall\t{vals['P@5']:.4f}",
        f"{'num_ret':<22}\tall\t{int(vals['num_ret'])}",
    ]


def test_memory_limit_smoke(tmp_path, synth, capsys):
    d, qrels, runs = synth
    out = tmp_path / "m.parquet"
    rc = main(["eval", str(d / "qrels.parquet"), str(d / "runs"), *_m_args(), "-q", "-o", str(out),
               "--memory-limit", "1GiB", "--log-json", "--quiet"])
    assert rc == 0
    log = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert log["max_rows_per_chunk"] >= 20_000
    assert _canon(pl.read_parquet(out)) == _canon(_expected(qrels, runs))


def test_note_counts(capsys, synth):
    d, qrels, runs = synth
    rc = main(["eval", str(d / "qrels.parquet"), str(d / "runs" / "run_0.parquet"), "-m", "map",
               "--max-rows-per-chunk", "100"])
    assert rc == 0
    err = capsys.readouterr().err.strip().splitlines()[-1]
    run_q = set(runs["run_0"]["query_id"].to_list())
    qq = set(qrels["query_id"].to_list())
    def n(count, one, many):
        return f"{count} {one if count == 1 else many}"

    assert f"{n(len(run_q & qq), 'query', 'queries')} scored in 1 run" in err
    assert f"{n(len(run_q - qq), 'run query', 'run queries')} not in the qrels dropped" in err
    assert f"{n(len(qq - run_q), 'qrels query', 'qrels queries')} missing from a run left out" in err


def test_note_numbers_agree(tmp_path, capsys):
    """One of each: the note's nouns are singular (and plural for 0 and 2)."""
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 a 1\n2 0 b 1\n")
    run = tmp_path / "r.txt"
    run.write_text("1 Q0 a 1 1.0 t\n1 Q0 a 1 1.0 t\n3 Q0 c 1 1.0 t\n")
    assert main(["eval", str(qrels), str(run), "-m", "P@1", "--keep-best-duplicates"]) == 0
    note = capsys.readouterr().err.strip().splitlines()[-1]
    assert ("1 query scored in 1 run (3 rows, 1 chunk); 1 run query not in the qrels dropped; "
            "1 qrels query missing from a run left out (use -c to count them); "
            "1 duplicate row removed") in note, note


def _err_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_bad_file_in_directory(tmp_path, synth, capsys):
    d, qrels, runs = synth
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    runs["run_0"].write_parquet(runs_dir / "ok.parquet")
    (runs_dir / "broken.parquet").write_bytes(b"PAR1 this is not parquet")
    out = tmp_path / "o.parquet"
    rc = main(["eval", str(d / "qrels.parquet"), str(runs_dir), "-m", "map", "-q", "-o", str(out)])
    assert rc == 2
    line = _err_line(capsys)
    assert line.startswith("fasteval: error:") and "broken.parquet" in line
    assert not out.exists() and list(tmp_path.glob(".o.parquet*")) == []


def test_duplicates_error_and_keep_best(tmp_path, synth, capsys):
    d, qrels, runs = synth
    run = runs["run_0"]
    dup = pl.concat([run, run.head(1).with_columns(pl.col("score") - 100)])
    p = tmp_path / "dup.parquet"
    dup.write_parquet(p)
    out = tmp_path / "o.parquet"
    rc = main(["eval", str(d / "qrels.parquet"), str(p), "-m", "map", "-q", "-o", str(out), "--quiet"])
    assert rc == 2
    line = _err_line(capsys)
    assert "dup.parquet" in line and "more than once" in line
    assert "use --keep-best-duplicates to keep the best-scored row" in line  # the flag, not the kwarg
    assert not out.exists()
    rc = main(["eval", str(d / "qrels.parquet"), str(p), "-m", "map", "-q", "-o", str(out),
               "--keep-best-duplicates", "--max-rows-per-chunk", "64"])
    assert rc == 0
    assert "1 duplicate row removed" in capsys.readouterr().err
    assert _canon(pl.read_parquet(out)) == _canon(_expected(qrels, {"dup": run}, ["map"]))


def test_duplicate_judgment_in_qrels_file_names_file_and_line(tmp_path, capsys):
    """The CLI reads qrels without the reader's duplicate check (preparing them finds
    repeats); a repeat still gets the reader's message with the file and the line."""
    lines = open(f"{TREC}/qrels.test").read().splitlines()
    qrels = tmp_path / "dup.qrels"
    qrels.write_text("\n".join([*lines[:5], lines[2], *lines[5:]]) + "\n")
    out = tmp_path / "o.parquet"
    rc = main(["eval", str(qrels), f"{TREC}/results.test", "-m", "map", "-q", "-o", str(out)])
    assert rc == 2
    line = _err_line(capsys)
    assert "dup.qrels" in line and "line 6" in line, line
    assert line.endswith("a document is judged once per query"), line  # no API keyword to pass
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["eval", f"{TREC}/qrels.test", f"{TREC}/results.test", "-m", "ndcg@10", "-m", "ndcg_cut_10"],
         "-m/--measure must be one name per measure (both are ndcg_cut_10; results carry the name "
         "asked for), got ['ndcg@10', 'ndcg_cut_10']"),
        (["eval", f"{TREC}/qrels.test", f"{TREC}/results.test", "-m", "ndgc@10"], "ndgc@10"),
        (["eval", f"{TREC}/qrels.test", "nope.parquet", "-m", "map"], "nope.parquet"),
        (["eval", f"{TREC}/qrels.test", f"{TREC}/results.test", "-m", "map", "--memory-limit", "lots"], "memory-limit"),
        # refused before any input is read: the missing qrels file is not what is reported
        (["eval", "nope.qrels", f"{TREC}/results.test", "-m", "map", "--memory-limit", "lots"],
         "--memory-limit must be a size such as 512MiB, 1GiB or 2GB, got 'lots'"),
        (["eval", f"{TREC}/qrels.test", f"{TREC}/results.test", "-m", "map", "--format", "parquet"], "parquet"),
    ],
)
def test_user_errors_one_line(capsys, argv, needle):
    assert main(argv) == 2
    line = _err_line(capsys)
    assert needle in line


def test_standard_input_once_and_open(tmp_path, capsys, monkeypatch):
    import io
    import subprocess
    import sys

    q = tmp_path / "qrels.txt"
    q.write_text("1 0 a 1\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"1 0 a 1\n")))
    assert main(["eval", "-", "-", "-m", "map"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "QRELS and RUN must be at most one of them read from standard input ('-'), got '- -'" in err
    proc = subprocess.run([sys.executable, "-m", "fasteval", "eval", str(q), "-", "-m", "map"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    assert proc.returncode == 2 and "no run lines" in proc.stderr  # empty: one line, no traceback
    closed = subprocess.run([sys.executable, "-c", "import os, sys; os.close(0); sys.stdin.close(); "
                             "from fasteval.cli import main; sys.exit(main(sys.argv[1:]))",
                             "eval", str(q), "-", "-m", "map"], capture_output=True, text=True)
    assert closed.returncode == 2, closed.stderr
    assert closed.stderr.strip() == "fasteval: error: -: standard input is closed; expected a table on it"


def test_a_run_without_judged_queries_is_named(tmp_path, capsys):
    q = tmp_path / "qrels.txt"
    q.write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r1.txt").write_text("1 Q0 a 1 1 r1\n")
    (tmp_path / "r2.txt").write_text("9 Q0 a 1 1 r2\n")
    argv = ["eval", str(q), str(tmp_path / "r1.txt"), str(tmp_path / "r2.txt"), "-m", "map", "--quiet"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.split() == ["measure", "r1.txt", "map", "1.0000"]
    assert err == (f"fasteval: warning: {tmp_path / 'r2.txt'}: none of its queries is in the qrels, so "
                   "it has no results (are these the qrels of this run? -c scores the qrels queries "
                   "as empty rankings)\n")
    assert main([*argv, "-c"]) == 0
    out, err = capsys.readouterr()
    assert out.split() == ["measure", "r1.txt", "r2.txt", "map", "1.0000", "0.0000"] and err == ""


def test_csv_and_tsv_on_standard_input(tmp_path):
    """A CSV or TSV table piped in is recognised by its header (it was read as TREC text:
    'expected at least 6 fields')."""
    import subprocess
    import sys

    q = tmp_path / "qrels.tsv"
    q.write_text("query_id\tdoc_id\trelevance\nq1\td1\t1\nq1\td2\t0\n")
    run = b"qid,docno,score\nq1,d2,2.0\nq1,d1,1.0\n"
    proc = subprocess.run([sys.executable, "-m", "fasteval", "eval", str(q), "-", "-m", "map", "--quiet"],
                          input=run, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().split() == ["measure", "stdin", "map", "0.5000"]
    (tmp_path / "r.csv").write_bytes(run)
    proc = subprocess.run([sys.executable, "-m", "fasteval", "eval", "-", str(tmp_path / "r.csv"), "-m",
                           "map", "--quiet"], input=q.read_bytes(), capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().split() == ["measure", "r.csv", "map", "0.5000"]


def test_max_docs_cutting_a_tie_names_the_option(tmp_path, capsys):
    # the library's max_docs is this command's -M/--max-docs in the one line printed
    (tmp_path / "q.qrels").write_text("q1 0 a 1\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0 t\n")
    assert main(["eval", str(tmp_path / "q.qrels"), str(tmp_path / "r.run"), "-m", "map", "-M", "1",
                 "--tie-break", "expected"]) == 2
    line = _err_line(capsys)
    assert line.startswith("fasteval: error: -M/--max-docs must be a cutoff between tie groups"), line
    assert "query 'q1' has equal scores across rank 1" in line and line.endswith("got 1"), line


@pytest.mark.parametrize("compat", [10, 9])
def test_compat_follows_the_evaluator(tmp_path, capsys, compat):
    """--compat 9 scores as evaluate(compat=9) and trec-eval --compat 9: with -c -J a query
    missing from the run is 0 under 9.0.8, NaN for iprec_at_recall under 10.0 (its
    placeholder document is dropped by -J); recall points round as each version does."""
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 c 1\n")
    run.write_text("1 Q0 b 1 3.0 t\n1 Q0 a 2 2.0 t\n1 Q0 x 3 1.0 t\n1 Q0 c 4 0.5 t\n")
    measures = ["iprec_at_recall_0.00", "iprec_at_recall_0.50", "map", "P@5", "num_ret"]
    assert main(["eval", str(qrels), str(run), *_m_args(measures), "-q", "-c", "-J", "--compat",
                 str(compat), "--quiet", "-o", "-", "--format", "csv"]) == 0
    got = pl.read_csv(capsys.readouterr().out.encode(), schema_overrides={"query_id": pl.Utf8})
    want = evaluate(fasteval.read_qrels(qrels), fasteval.read_run(run), measures, complete=True,
                    judged_only=True, compat=compat)
    def rows(df: pl.DataFrame) -> list[tuple]:  # NaN as -1, so that equal tables compare equal
        return sorted(df.drop("run_id").with_columns(pl.col("value").fill_nan(-1.0)).rows())

    assert rows(got) == rows(want)
    missing = got.filter((pl.col("query_id") == "2") & (pl.col("measure") == "iprec_at_recall_0.00"))
    value = missing.get_column("value")[0]
    assert value == 0.0 if compat == 9 else value != value  # 0 under 9.0.8, NaN under 10.0


def test_compat_other_than_9_or_10_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["eval", f"{TREC}/qrels.test", f"{TREC}/results.test", "-m", "map", "--compat", "8"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--compat: invalid choice: 8" in err[0]
