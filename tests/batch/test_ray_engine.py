"""engine="ray": per-query values bit-identical to the single-machine path, equal aggregates,
the same report, with the qrels shared or co-partitioned; tie rules, errors (file, row) and
CLI outputs as on one machine; a worker that dies once is replaced without losing or
duplicating a row. One local Ray (2 CPUs) for the module; every job scores several runs
at once. A Ray job costs 10-25 s on two cores (starting Ray, its workers loading the
kernels), so the jobs are ``slow``: they run in the full profile (tests/_profile.py), which
``.ci/run`` runs; the quick profile keeps the checks that start no cluster."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import fasteval
from fasteval.batch.api import evaluate_files
from fasteval.cli import main

MEASURES = ["map", "ndcg@10", "P@5", "num_ret", "num_rel_ret", "gm_map", "recall@10", "bpref"]


def test_import_does_not_load_ray():
    code = "import sys, fasteval; fasteval.evaluate; assert 'ray' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_ray_is_one_line(monkeypatch):
    from fasteval.batch import ray_engine
    from fasteval.errors import FastevalError

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(FastevalError, match=r'pip install "\.\[ray\]"'):
        ray_engine.require_ray()


ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """qrels + a directory of runs: unsorted rows, one file holding two runs (run_id column),
    queries missing from the qrels and from the runs, tied scores, a duplicate row."""
    d = tmp_path_factory.mktemp("raydata")
    rng = np.random.default_rng(18)
    nq = 25
    qrels = pl.DataFrame({
        "query_id": [f"q{i}" for i in range(nq) for _ in range(6)],
        "doc_id": [f"d{j}" for _ in range(nq) for j in range(6)],
        "relevance": rng.integers(-1, 3, nq * 6),
    })
    qrels.write_parquet(d / "qrels.parquet")
    runs = d / "runs"
    runs.mkdir()

    def run(seed: int, name: str | None = None) -> pl.DataFrame:
        r = np.random.default_rng(seed)
        n = 350
        df = pl.DataFrame({
            "query_id": [f"q{i}" for i in r.integers(0, nq + 5, n)],  # q25..q29: not in qrels
            "doc_id": [f"d{j}" for j in r.integers(0, 14, n)],
            "score": r.integers(0, 4, n).astype(float),  # many ties
        }).unique(["query_id", "doc_id"], keep="first", maintain_order=True)
        df = df.filter(pl.col("query_id") != f"q{seed % nq}")  # a qrels query missing from the run
        if name is not None:
            df = df.with_columns(pl.lit(name).alias("run_id"))
        return df

    run(1).write_parquet(runs / "alpha.parquet")
    pl.concat([run(2, "beta"), run(3, "gamma")]).sample(fraction=1.0, seed=5).write_parquet(
        runs / "two.parquet")
    dup = run(4)
    pl.concat([dup, dup.head(1).with_columns(pl.col("score") - 1)]).write_parquet(d / "dup.parquet")
    return d


def _same(ray_res, local_res):
    assert ray_res.per_query.equals(local_res.per_query)  # bit-identical values, same order
    assert ray_res.aggregate.equals(local_res.aggregate)
    assert ray_res.stats.report == local_res.stats.report
    assert (ray_res.stats.rows, ray_res.stats.queries, ray_res.stats.runs) == (
        local_res.stats.rows, local_res.stats.queries, local_res.stats.runs)


@pytest.mark.slow
@pytest.mark.parametrize("limit, mode", [(None, "shared"), (0, "co-partitioned")])
def test_batch_api_equals_local(ray_local, data, limit, mode):
    # one job for many options: -c -J -M -l, keep_best duplicates; the qrels shared whole, or
    # co-partitioned with the runs (forced by a limit of 0 bytes)
    options = {"complete": True, "judged_only": True, "max_docs": 7, "relevance_level": 2,
               "duplicates": "keep_best", "tie_break": "trec"}
    runs = [data / "runs", data / "dup.parquet"]
    local = evaluate_files(data / "qrels.parquet", runs, MEASURES, wide=True, **options)
    res = evaluate_files(data / "qrels.parquet", runs, MEASURES, wide=True, engine="ray",
                         share_qrels_limit=limit, **options)
    assert res.stats.qrels == mode and local.stats.qrels is None
    _same(res, local)
    assert res.stats.runs == ["alpha", "beta", "gamma", "dup"]
    assert res.stats.report["filled"] > 0
    assert res.stats.report["deduplicated_rows"] == 1


@pytest.mark.slow
def test_cli_output_dir_and_injected_fault(ray_local, data, tmp_path, monkeypatch, capsys):
    marker = tmp_path / "fault-marker"
    monkeypatch.setenv("FASTEVAL_RAY_FAULT", str(marker))
    out = tmp_path / "per_query.parquet"
    args = ["eval", str(data / "qrels.parquet"), str(data / "runs"),
            *sum((["-m", m] for m in MEASURES), []), "-q", "-c", "-J", "--quiet"]
    assert main([*args, "-o", str(out), "--engine", "ray"]) == 0
    assert marker.exists()  # the first block task's worker died once; Ray ran the task again
    got = pl.read_parquet(out)  # a directory of parts, renamed into place when complete
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left
    ref_path = tmp_path / "local.parquet"  # written after the check above
    assert main([*args, "-o", str(ref_path)]) == 0
    ref = pl.read_parquet(ref_path)
    assert got.height == ref.height  # no row lost, none duplicated
    assert got.select(["run_id", "query_id", "measure"]).is_duplicated().sum() == 0
    keys = ["run_id", "query_id", "measure"]
    assert got.sort(keys).equals(ref.sort(keys))


@pytest.mark.slow
def test_evaluate_engine_ray_on_tables(ray_local, data):
    qrels = pl.read_parquet(data / "qrels.parquet")
    two = pl.read_parquet(data / "runs" / "two.parquet")
    local = fasteval.evaluate(qrels, two, MEASURES, complete=True)
    got = fasteval.evaluate(qrels, two, MEASURES, complete=True, engine="ray")
    assert got.equals(local)
    assert fasteval.aggregate(got).equals(fasteval.aggregate(local))
    # a mapping names its runs: the name wins over a run_id column, as on one machine; a
    # table named as PyTerrier names its columns is read as read_run reads it
    beta = two.filter(pl.col("run_id") == "beta")
    pt = two.filter(pl.col("run_id") == "gamma").rename({"query_id": "qid", "doc_id": "docno", "score": "sim"})
    named = {"named": beta, "pt": pt.drop("run_id")}
    local = fasteval.evaluate(qrels, named, MEASURES)
    assert local.get_column("run_id").unique(maintain_order=True).to_list() == ["named", "pt"]
    assert fasteval.evaluate(qrels, named, MEASURES, engine="ray").equals(local)


@pytest.mark.slow
def test_integer_ids_and_tie_rules(ray_local):
    """Integer qrels against an integer run with a rank column and a text run (ids spelled
    as text), unsorted; tie_break input and rank keep each query's input order across the
    shuffle; co-partitioned qrels meet both id types."""
    rng = np.random.default_rng(7)
    nq = 20
    qrels = pl.DataFrame({"query_id": np.repeat(np.arange(nq), 5), "doc_id": np.tile(np.arange(5), nq),
                          "relevance": rng.integers(0, 3, nq * 5)})
    n = 300
    ints = pl.DataFrame({"query_id": rng.integers(0, nq + 3, n), "doc_id": rng.integers(0, 12, n),
                         "score": rng.integers(0, 2, n).astype(float)}).unique(
        ["query_id", "doc_id"], keep="first", maintain_order=True)
    ints = ints.with_columns(pl.int_range(pl.len(), 0, -1).over("query_id").alias("rank"))
    texts = ints.select(pl.col("query_id").cast(pl.Utf8), pl.col("doc_id").cast(pl.Utf8), "score")
    runs = {"ints": ints.sample(fraction=1.0, seed=1), "texts": texts.sample(fraction=1.0, seed=2)}
    measures = ["map", "ndcg@5", "P@3", "recip_rank"]
    trec = fasteval.evaluate(qrels, runs, measures)
    for tie in ("input", "rank"):
        if tie == "rank":
            runs = {"ints": runs["ints"]}
        local = fasteval.evaluate(qrels, runs, measures, tie_break=tie, complete=True)
        assert not local.equals(fasteval.evaluate(qrels, runs, measures, complete=True))  # ties matter
        got = fasteval.evaluate(qrels, runs, measures, tie_break=tie, complete=True, engine="ray",
                                qrels_mode="co-partitioned")
        assert got.equals(local)
    assert trec.height


def _error_of(fn):
    from fasteval.errors import InputError

    with pytest.raises(InputError) as info:
        fn()
    return str(info.value)


@pytest.mark.slow
def test_errors_name_file_and_row(ray_local, tmp_path, data):
    """An error in the input names the same file, row and column as on one machine."""
    qrels = data / "qrels.parquet"
    base = pl.DataFrame({"query_id": [f"q{i // 10}" for i in range(60)],
                         "doc_id": [f"d{i % 10}" for i in range(60)], "score": np.linspace(1, 0, 60)})
    cases = {
        "null_doc": base.with_columns(pl.when(pl.int_range(pl.len()) == 37).then(None)
                                      .otherwise(pl.col("doc_id")).alias("doc_id")),
        "nan_score": base.with_columns(pl.when(pl.int_range(pl.len()) == 41).then(float("nan"))
                                       .otherwise(pl.col("score")).alias("score")),
        "duplicate": pl.concat([base, base.slice(12, 1).with_columns(pl.col("score") + 5)]),
    }
    for name, frame in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        frame.head(20).write_parquet(folder / "a.parquet", row_group_size=8)
        frame.slice(20).write_parquet(folder / "b.parquet", row_group_size=8)
        parts = str(folder / "*.parquet")  # one run in two files
        local = _error_of(lambda f=parts: evaluate_files(qrels, f, ["map"]))
        got = _error_of(lambda f=parts: evaluate_files(qrels, f, ["map"], engine="ray"))
        assert got == local, name
        assert "row" in got


@pytest.mark.slow
def test_cli_outputs_equal_local(ray_local, data, tmp_path, capsys):
    """--wide, CSV and trec output, --aggregate-out and -q print the same with --engine ray;
    --quiet prints nothing on stderr."""
    base = ["eval", str(data / "qrels.parquet"), str(data / "runs"), str(data / "dup.parquet"),
            "-m", "map", "-m", "ndcg@10", "-m", "num_ret", "-c", "--keep-best-duplicates", "--quiet"]
    for extra in (["-q", "--wide", "--format", "csv", "--aggregate-out", "AGG.json"],
                  ["--format", "trec", "-M", "5", "--tie-break", "input"]):
        outs = []
        for engine in ("local", "ray"):
            args = [a.replace("AGG", str(tmp_path / engine)) for a in extra]
            assert main([*base, *args, "--engine", engine]) == 0
            cap = capsys.readouterr()
            assert cap.err == ""
            agg = (tmp_path / f"{engine}.json").read_text() if "--aggregate-out" in extra else ""
            outs.append((cap.out, agg))
        assert outs[0] == outs[1]
        assert outs[0][0]


@pytest.mark.slow
def test_cli_run_prints_no_ray_logs(data):
    """A whole command with its own Ray: stderr ends with the summary line (which names the
    qrels mode); no Ray log line or warning."""
    cmd = [sys.executable, "-m", "fasteval", "eval", str(data / "qrels.parquet"), str(data / "runs"),
           "-m", "map", "--engine", "ray"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    lines = proc.stderr.splitlines()
    assert "on Ray, qrels shared" in lines[-1]
    noise = [ln for ln in lines if any(w in ln for w in ("WARNING", "INFO", "ERROR", "Warning", "deprecat"))]
    assert not noise, proc.stderr
    assert "map" in proc.stdout


@pytest.mark.slow
def test_aliased_columns_equal_local_and_read_run(ray_local, tmp_path):
    """Parquet runs and qrels named as PyTerrier names them (qid, docno, score, rank; label),
    parts of one table spelled differently (Query_ID/DOCID/sim, `runid` and `run` run ids,
    rows not grouped by query), hive folders of a run id alias (system=NAME), with the qrels
    shared or co-partitioned: the local job's values, which equal fasteval.evaluate on the
    readers' tables, bit for bit."""
    from tests.batch.test_column_aliases import _pyterrier

    measures = ["map", "ndcg@10", "P@5", "recip_rank"]
    pt, qrels = _pyterrier("int", seed=7)
    qrels.write_parquet(tmp_path / "qrels.parquet")
    pt.write_parquet(tmp_path / "bm25.parquet")
    a, _ = _pyterrier("int", seed=8)
    b, _ = _pyterrier("int", seed=9)
    both = pl.concat([a.with_columns(pl.lit("a").alias("runid")), b.with_columns(pl.lit("b").alias("runid"))])
    both = both.sample(fraction=1.0, shuffle=True, seed=3)
    parts = tmp_path / "parts"
    parts.mkdir()
    both.head(500).rename({"score": "sim"}).write_parquet(parts / "p0.parquet")
    both.slice(500).rename({"qid": "Query_ID", "docno": "DOCID", "runid": "run"}).write_parquet(parts / "p1.parquet")
    both.write_parquet(tmp_path / "whole.parquet")
    hive = tmp_path / "hive"
    for name, seed in (("c", 10), ("d", 11)):
        (hive / f"system={name}").mkdir(parents=True)
        _pyterrier("int", seed=seed)[0].write_parquet(hive / f"system={name}" / "0.parquet")
    runs = [tmp_path / "bm25.parquet", str(parts / "*.parquet"), hive]
    q = fasteval.read_qrels(tmp_path / "qrels.parquet")
    ref = fasteval.evaluate(q, {"bm25": fasteval.read_run(tmp_path / "bm25.parquet")}, measures,
                            tie_break="rank")
    local = evaluate_files(tmp_path / "qrels.parquet", runs, measures, tie_break="rank")
    assert local.per_query.filter(pl.col("run_id") == "bm25").equals(ref)
    whole = fasteval.evaluate(q, fasteval.read_run(tmp_path / "whole.parquet"), measures, tie_break="rank")
    assert local.per_query.filter(pl.col("run_id").is_in(["a", "b"])).equals(whole)
    assert local.stats.runs == ["bm25", "a", "b", "c", "d"]
    for limit, mode in ((None, "shared"), (0, "co-partitioned")):
        res = evaluate_files(tmp_path / "qrels.parquet", runs, measures, tie_break="rank", engine="ray",
                             share_qrels_limit=limit)
        assert res.stats.qrels == mode
        _same(res, local)


@pytest.mark.slow
def test_converted_types_equal_local(ray_local, tmp_path):
    """Float query ids, decimal doc ids, text scores, float ranks (types read_run converts),
    in parts of a glob beside plain ones: Ray's values are the local ones; a value that
    cannot be converted is the same error (file, row, column)."""
    from tests.batch.test_column_aliases import _converted, _pyterrier

    run, qrels = _pyterrier("int", seed=15)
    qrels.write_parquet(tmp_path / "qrels.parquet")
    d = tmp_path / "parts"
    d.mkdir()
    mixed = run.sample(fraction=1.0, shuffle=True, seed=4)
    _converted(mixed.head(300)).write_parquet(d / "p0.parquet")
    mixed.slice(300).write_parquet(d / "p1.parquet")
    measures = ["map", "ndcg@10", "P@5"]
    spec = str(d / "*.parquet")
    local = evaluate_files(tmp_path / "qrels.parquet", spec, measures, tie_break="rank")
    ref = fasteval.evaluate(fasteval.read_qrels(tmp_path / "qrels.parquet"), {"parts": mixed}, measures,
                            tie_break="rank")
    assert local.per_query.equals(ref)
    res = evaluate_files(tmp_path / "qrels.parquet", spec, measures, tie_break="rank", engine="ray")
    _same(res, local)
    _converted(mixed.head(300)).with_columns(
        pl.when(pl.int_range(pl.len()) == 77).then(pl.lit("abc")).otherwise(pl.col("score")).alias("score")
    ).write_parquet(d / "p0.parquet")
    local_err = _error_of(lambda: evaluate_files(tmp_path / "qrels.parquet", spec, measures))
    assert local_err == f"{d / 'p0.parquet'}, row 77, column 'score': score is not a number: 'abc'"
    assert _error_of(lambda: evaluate_files(tmp_path / "qrels.parquet", spec, measures, engine="ray")) == local_err


@pytest.mark.slow
def test_one_run_in_memory_named_as_locally(ray_local):
    """A run dict or a pandas table given alone is named ``run_id`` (default ``"run"``) on
    Ray as locally; Ray called them ``run_0``."""
    import pandas as pd

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    runs = [{"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}},
            pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "c"], "score": [1.0, 1.0]})]
    for run, q1_map in zip(runs, (0.5, 1.0), strict=True):
        for name, kw in (("bm25", {"run_id": "bm25"}), ("run", {})):
            local = fasteval.evaluate(qrels, run, ["map"], **kw)
            res = fasteval.evaluate(qrels, run, ["map"], engine="ray", **kw)
            assert res.equals(local)
            assert res.rows() == [(name, "q1", "map", q1_map), (name, "q2", "map", 1.0)]


@pytest.mark.slow
def test_run_id_argument_with_a_run_id_column_as_locally(ray_local):
    qrels = {"q1": {"a": 1, "b": 0}}
    one = pl.DataFrame({"run_id": ["x", "x"], "query_id": ["q1", "q1"], "doc_id": ["a", "b"],
                        "score": [2.0, 1.0]})
    res = fasteval.evaluate(qrels, one, ["map"], run_id="bm25", engine="ray")
    assert res.equals(fasteval.evaluate(qrels, one, ["map"], run_id="bm25"))
    assert res.rows() == [("bm25", "q1", "map", 1.0)]
    two = one.with_columns(run_id=pl.Series(["x", "y"]))
    with pytest.raises(fasteval.errors.ParameterError, match="run_id must be None"):
        fasteval.evaluate(qrels, two, ["map"], run_id="bm25", engine="ray")


@pytest.mark.slow
def test_mapping_key_over_several_runs_refused_as_locally(ray_local):
    qrels = {"q1": {"a": 1, "b": 0}}
    two = pl.DataFrame({"run_id": ["x", "y"], "query_id": ["q1", "q1"], "doc_id": ["a", "b"],
                        "score": [2.0, 1.0]})
    with pytest.raises(fasteval.ParameterError) as local:
        fasteval.evaluate(qrels, {"bm25": two}, ["map"])
    assert "names 2 runs (x, y)" in str(local.value)
    with pytest.raises(fasteval.ParameterError) as on_ray:
        fasteval.evaluate(qrels, {"bm25": two}, ["map"], engine="ray")
    assert str(on_ray.value) == str(local.value)


@pytest.mark.slow
@pytest.mark.parametrize("wide", [False, True])
def test_cli_output_dir_without_results_is_an_empty_table(ray_local, tmp_path, wide):
    # no query of the run is in the qrels: the output directory holds an empty table with
    # the columns the local engine writes (an empty directory is no parquet dataset)
    (tmp_path / "q.qrels").write_text("q1 0 a 1\n")
    pl.DataFrame({"query_id": ["q9"], "doc_id": ["a"], "score": [1.0]}).write_parquet(tmp_path / "r.parquet")
    args = ["eval", str(tmp_path / "q.qrels"), str(tmp_path / "r.parquet"), "-m", "map", "-m", "num_ret",
            "-q", "--quiet", *(["--wide"] if wide else [])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the local engine warns that no query is in the qrels
        assert main([*args, "-o", str(tmp_path / "ray.parquet"), "--engine", "ray"]) == 0
        assert main([*args, "-o", str(tmp_path / "local.parquet")]) == 0
    got, ref = pl.read_parquet(tmp_path / "ray.parquet"), pl.read_parquet(tmp_path / "local.parquet")
    assert got.height == 0 and got.schema == ref.schema


@pytest.mark.slow
def test_cli_output_dir_with_a_name_near_the_length_limit(ray_local, data, tmp_path):
    """The hidden folder Ray writes into beside the output is named from the output's name,
    cut to fit the 255-byte limit (a 240-byte name failed: 'File name too long')."""
    out = tmp_path / ("r" * 232 + ".parquet")
    args = ["eval", str(data / "qrels.parquet"), str(data / "runs"), "-m", "map", "-q", "--quiet"]
    assert main([*args, "-o", str(out), "--engine", "ray"]) == 0
    ref = tmp_path / "local.parquet"
    assert main([*args, "-o", str(ref)]) == 0
    keys = ["run_id", "query_id", "measure"]
    assert pl.read_parquet(out).sort(keys).equals(pl.read_parquet(ref).sort(keys))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, ref.name])


@pytest.mark.slow
def test_a_run_table_without_rows_as_locally(ray_local):
    """An empty run table is refused by fasteval.evaluate(engine="ray") with the local
    error, and gives no results from evaluate_files(engine="ray"), as locally: neither
    raises Ray's IndexError (list index out of range)."""
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
    empty = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]}).head(0)
    for run, kw in ((empty, {}), (empty, {"run_id": "bm25"}), ({"x": empty}, {})):
        with pytest.raises(fasteval.errors.InputError) as local:
            fasteval.evaluate(qrels, run, ["map"], **kw)
        with pytest.raises(fasteval.errors.InputError) as on_ray:
            fasteval.evaluate(qrels, run, ["map"], engine="ray", **kw)
        assert str(on_ray.value) == str(local.value)
        assert str(local.value).endswith("the run table is empty (no rows)")
    full = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]})
    local_res = evaluate_files(qrels, {"x": empty, "y": full}, ["map"])
    res = evaluate_files(qrels, {"x": empty, "y": full}, ["map"], engine="ray")
    assert res.per_query.equals(local_res.per_query)
    assert res.per_query.rows() == [("y", "q1", "map", 1.0)]


def test_cli_a_ray_that_cannot_be_reached_is_one_line(tmp_path, capsys, monkeypatch):
    """`fasteval eval --engine ray --ray-address ADDR` that Ray cannot connect to (or a local
    Ray that cannot start) is one line naming the option and the address, its password
    masked, and exit status 2, not Ray's traceback."""
    (tmp_path / "q.qrels").write_text("q1 0 a 1\n")
    pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]}).write_parquet(tmp_path / "r.parquet")

    def init(address=None, **options):  # as Ray says it without the ray[client] package
        raise ValueError(f"Failed to connect to GCS at {address}\nretried 5 times")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    args = ["eval", str(tmp_path / "q.qrels"), str(tmp_path / "r.parquet"), "-m", "map", "--quiet",
            "--engine", "ray"]
    assert main([*args, "--ray-address", "ray://al:s3cr3t@10.0.0.1:10001"]) == 2
    err = capsys.readouterr().err
    assert err == ("fasteval: error: could not connect to the Ray cluster at "
                   "'ray://***@10.0.0.1:10001' (--ray-address): Failed to connect to GCS at "
                   "ray://***@10.0.0.1:10001\n")
    assert main(args) == 2
    assert capsys.readouterr().err == ("fasteval: error: could not connect to a local Ray: Failed "
                                       "to connect to GCS at None\n")


@pytest.mark.slow
def test_cli_output_dir_that_cannot_be_written_names_it(ray_local, data, tmp_path, capsys, monkeypatch):
    """A per-query parquet output that cannot be put in place (a full disk) is one line
    naming the output and the cause, as on one machine, not the operating system's words
    alone, and leaves no hidden folder of parts behind."""
    import errno

    rename = os.rename

    def full(src, dst):
        if Path(dst).name == "pq.parquet":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        rename(src, dst)

    monkeypatch.setattr(os, "rename", full)
    out = tmp_path / "out" / "pq.parquet"
    args = ["eval", str(data / "qrels.parquet"), str(data / "runs" / "alpha.parquet"), "-m", "map", "-q",
            "--quiet", "-o", str(out), "--engine", "ray"]
    assert main(args) == 2
    assert capsys.readouterr().err == (f"fasteval: error: output '{out}' cannot be written: "
                                       "No space left on device (disk full)\n")
    assert list(out.parent.iterdir()) == []


@pytest.mark.slow
def test_cli_output_dir_removes_what_a_killed_job_left(ray_local, data, tmp_path):
    """The hidden folders a killed Ray job leaves beside its per-query output are removed
    by the next job writing that output, as on one machine."""
    from fasteval.io.atomic import _HOST

    out = tmp_path / "pq.parquet"
    left = [tmp_path / f".pq.parquet.{_HOST}-999999999-{tag}.tmp" for tag in ("abcdefgh", "12345678")]
    for folder in left:
        folder.mkdir()
        (folder / "part.parquet").write_bytes(b"PAR1")
        os.utime(folder, (0, 0))  # written long ago, by a process that is gone
    args = ["eval", str(data / "qrels.parquet"), str(data / "runs" / "alpha.parquet"), "-m", "map", "-q",
            "--quiet", "-o", str(out), "--engine", "ray"]
    assert main(args) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["pq.parquet"]
    ref = tmp_path / "local.csv"
    assert main([*args[:-4], "-o", str(ref)]) == 0
    keys = ["run_id", "query_id", "measure"]
    assert pl.read_parquet(out).sort(keys).equals(pl.read_csv(ref).sort(keys))


@pytest.mark.slow
def test_cli_output_dir_of_an_earlier_job_is_replaced(ray_local, data, tmp_path, capsys):
    """Running `eval --engine ray -q -o OUT.parquet` again replaces the folder of parquet
    parts the first run wrote (its mark tells it from the user's folders); a folder holding
    anything else, or holding an input, or a folder of parquet files without the mark is
    refused."""
    out = tmp_path / "pq.parquet"
    args = ["eval", str(data / "qrels.parquet"), str(data / "runs" / "alpha.parquet"), "-m", "map", "-q",
            "--quiet", "--engine", "ray", "-o", str(out)]
    assert main(args) == 0
    first = pl.read_parquet(out)
    first.write_parquet(out / "stale-part.parquet")  # a part the new output must not keep
    assert main([*args, "-m", "P@5"]) == 0  # another measure: every part replaced
    keys = ["run_id", "query_id", "measure"]
    again = pl.read_parquet(out).sort(keys)
    assert again.filter(pl.col("measure") == "map").equals(first.sort(keys))
    assert again.filter(pl.col("measure") == "P@5").height == first.height
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pq.parquet"]
    (out / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert main(args) == 2
    assert "is a directory" in capsys.readouterr().err
    (out / "notes.txt").unlink()
    mine = tmp_path / "mine.parquet"  # the user's folder of parquet files: never replaced
    mine.mkdir()
    first.write_parquet(mine / "part-0.parquet")
    assert main([*args[:-1], str(mine)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert [p.name for p in mine.iterdir()] == ["part-0.parquet"]
    pl.read_parquet(data / "runs" / "alpha.parquet").write_parquet(out / "run.parquet")
    assert main([*args[:2], str(out / "run.parquet"), *args[3:]]) == 2
    assert capsys.readouterr().err == (f"fasteval: error: -o/--output must be a folder that holds no "
                                       f"input (replacing it would remove '{out / 'run.parquet'}'), "
                                       f"got '{out}'\n")
