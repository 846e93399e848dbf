"""engine="ray" scores query-grouped inputs where they are read: slices of whole row groups,
the first and last query of each slice joined across slices and scored on the driver, no
shuffle. Inputs whose queries are scattered go through the shuffle instead, with the same
values. The splitting and the driver's tally are checked without Ray; the jobs (slow) on a
local Ray of 2 CPUs, with slices of a few rows so that queries straddle row groups, slices
and files."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasteval.batch.ray_tasks import (
    NotGrouped,
    RunPart,
    SliceReport,
    Tally,
    join_edges,
    split_edges,
)

MEASURES = ["map", "ndcg@10", "P@5", "num_ret", "num_rel_ret", "gm_map", "recall@10", "bpref"]


def _rows(sizes: list[int], keys: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"run_id": ["r"] * sum(sizes),
                         "query_id": [k for k, n in zip(keys, sizes, strict=True) for _ in range(n)],
                         "i": np.arange(sum(sizes))})


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 9), min_size=1, max_size=12), cuts=st.lists(st.integers(1, 60), max_size=6))
def test_slices_give_every_query_once_whole(sizes, cuts):
    """Cut a grouped table anywhere: interiors plus joined edges hold every query exactly once,
    each with all its rows in order."""
    keys = [f"q{i}" for i in range(len(sizes))]
    df = _rows(sizes, keys)
    bounds = sorted({c for c in cuts if c < df.height} | {0, df.height})
    reports, inner = [], []
    for k, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
        part = df.slice(a, b - a)
        got = split_edges(part, first=k == 0, last=b == df.height)
        assert got is not None
        interior, edges = got
        inner.append(interior)
        reports.append(SliceReport(src=0, index=k, edges=[(key, rows.to_arrow()) for key, rows in edges]))
    edges = join_edges(reports)
    whole = pl.concat([*inner, *([edges] if edges is not None else [])])
    assert sorted(whole.get_column("i").to_list()) == list(range(df.height))
    for _, g in whole.group_by("query_id"):
        i = g.get_column("i").to_numpy()
        assert (np.diff(i) == 1).all()  # one piece, in input order


def test_a_query_met_twice_is_not_grouped():
    df = _rows([2, 3, 2], ["a", "b", "a"])
    assert split_edges(df, first=True, last=True) is None
    # pieces of one query that are not side by side across slices
    left = split_edges(_rows([2, 1], ["a", "b"]), first=True, last=False)
    right = split_edges(_rows([1, 2], ["c", "a"]), first=False, last=True)
    reports = [SliceReport(src=0, index=k, edges=[(key, r.to_arrow()) for key, r in s[1]])
               for k, s in enumerate([left, right])]
    joined = join_edges(reports)
    assert joined.get_column("query_id").to_list() == ["b", "c"]
    piece = [(("r", "b"), _rows([1], ["b"]).to_arrow())]
    with pytest.raises(NotGrouped):  # b, then c, then b again
        join_edges([SliceReport(src=0, index=0, edges=piece),
                    SliceReport(src=0, index=1, edges=[(("r", "c"), _rows([1], ["c"]).to_arrow())]),
                    SliceReport(src=0, index=2, edges=piece)])


def _part(bits: list[int], dropped: list[str], nq: int = 10) -> RunPart:
    from fasteval.measures.aggregate import partial

    mask = np.zeros(nq, dtype=bool)
    mask[bits] = True
    return RunPart(report={"run_queries": len(bits) + len(dropped)}, mask=np.packbits(mask), dropped=dropped,
                   sums=[partial(np.full(len(bits), 0.5), "mean")])


def test_tally_refuses_a_query_counted_twice():
    t = Tally(10)
    t.add("r", _part([0, 1], ["x"]))
    t.add("r", _part([2, 9], ["y"]))
    assert t.runs["r"]["mask"].nonzero()[0].tolist() == [0, 1, 2, 9]
    assert t.runs["r"]["report"]["run_queries"] == 6
    t.add("other", _part([1], []))  # another run may hold the same query
    with pytest.raises(NotGrouped):
        t.add("r", _part([1], []))
    with pytest.raises(NotGrouped):
        t.add("r", _part([5], ["x"]))  # an unjudged query met again


ray = pytest.importorskip("ray")


@pytest.fixture()
def small_slices(monkeypatch):
    from fasteval.batch import ray_engine

    monkeypatch.setattr(ray_engine, "READ_TASK_ROWS", 20)


def _grouped_run(rng, nq: int, order: np.ndarray) -> pl.DataFrame:
    sizes = rng.integers(1, 30, len(order))
    sizes[len(order) // 2] = 70  # a query longer than a slice: slices of that query alone
    return pl.DataFrame({
        "query_id": [f"q{q}" for q, n in zip(order, sizes, strict=True) for _ in range(n)],
        "doc_id": [f"d{j}" for n in sizes for j in rng.permutation(max(n, 8))[:n]],
        "score": rng.integers(0, 4, int(sizes.sum())).astype(float),  # ties
    })


@pytest.fixture(scope="module")
def gdata(tmp_path_factory):
    """Grouped inputs: a file in a shuffled query order (queries missing from the qrels
    among them), a hive folder whose run continues from one file into the next in the
    middle of a query, a file holding two runs grouped by run; and two scattered ones."""
    d = tmp_path_factory.mktemp("grouped")
    rng = np.random.default_rng(37)
    nq = 40
    pl.DataFrame({
        "query_id": [f"q{i}" for i in range(nq) for _ in range(6)],
        "doc_id": [f"d{j}" for _ in range(nq) for j in range(6)],
        "relevance": rng.integers(-1, 3, nq * 6),
    }).write_parquet(d / "qrels.parquet")
    runs = d / "runs"
    runs.mkdir()
    _grouped_run(rng, nq, rng.permutation(nq + 4)[: nq - 2]).write_parquet(runs / "alpha.parquet", row_group_size=7)
    hive = runs / "byrun" / "run_id=beta"
    hive.mkdir(parents=True)
    beta = _grouped_run(rng, nq, rng.permutation(nq)[:30])
    cut = int(np.flatnonzero(beta.get_column("query_id") == beta.get_column("query_id")[200])[0]) + 2
    beta.slice(0, cut).write_parquet(hive / "part-0.parquet", row_group_size=5)
    beta.slice(cut).write_parquet(hive / "part-1.parquet", row_group_size=9)
    two = pl.concat([_grouped_run(rng, nq, rng.permutation(nq)[:25]).with_columns(pl.lit(r).alias("run_id"))
                     for r in ("gamma", "delta")])
    two.write_parquet(runs / "two.parquet", row_group_size=11)
    scattered = d / "scattered"
    scattered.mkdir()
    eps = _grouped_run(rng, nq, rng.permutation(nq)[:30])
    first = eps.get_column("query_id")[0]
    moved = eps.filter(pl.col("query_id") == first)
    rest = eps.filter(pl.col("query_id") != first)
    # q's rows at the start and at the end: each slice looks grouped, the input is not
    pl.concat([moved.head(2), rest, moved.slice(2)]).write_parquet(scattered / "eps.parquet", row_group_size=7)
    zeta = _grouped_run(rng, nq, rng.permutation(nq)[:20])
    extra = pl.DataFrame({"query_id": ["q999"] * 3, "doc_id": ["d1", "d2", "d3"], "score": [1.0, 2.0, 3.0]})
    # an unjudged query at both ends: only the count of dropped queries would show it
    pl.concat([extra.head(1), zeta, extra.slice(1)]).write_parquet(scattered / "zeta.parquet", row_group_size=7)
    return d


def _grouped_inputs(d):
    return [d / "runs" / "alpha.parquet", d / "runs" / "byrun", d / "runs" / "two.parquet"]


def _same(got, ref):
    assert got.per_query.equals(ref.per_query)  # bit for bit, in the same order
    assert got.aggregate.equals(ref.aggregate)
    assert got.stats.report == ref.stats.report
    assert (got.stats.rows, got.stats.queries, got.stats.runs) == (ref.stats.rows, ref.stats.queries,
                                                                     ref.stats.runs)


@pytest.mark.slow
@pytest.mark.parametrize("options", [
    {},
    {"complete": True, "judged_only": True, "max_docs": 7, "relevance_level": 2, "duplicates": "keep_best"},
    {"complete": True, "tie_break": "input"},
])
def test_grouped_inputs_are_scored_where_read(ray_local, gdata, small_slices, options):
    from fasteval.batch.api import evaluate_files

    runs = _grouped_inputs(gdata)
    ref = evaluate_files(gdata / "qrels.parquet", runs, MEASURES, **options)
    got = evaluate_files(gdata / "qrels.parquet", runs, MEASURES, engine="ray", **options)
    _same(got, ref)
    assert set(got.stats.paths.values()) == {"grouped"}
    assert len(got.stats.paths) == 3
    assert got.stats.chunks > 30  # many slices: queries straddle them


@pytest.mark.slow
def test_scattered_inputs_are_shuffled_with_the_same_values(ray_local, gdata, small_slices):
    from fasteval.batch.api import evaluate_files

    runs = [gdata / "runs" / "alpha.parquet", gdata / "scattered" / "eps.parquet", gdata / "scattered" / "zeta.parquet"]
    ref = evaluate_files(gdata / "qrels.parquet", runs, MEASURES, complete=True)
    got = evaluate_files(gdata / "qrels.parquet", runs, MEASURES, engine="ray", complete=True)
    _same(got, ref)
    assert list(got.stats.paths.values()) == ["grouped", "shuffled", "shuffled"]
    assert got.stats.report["dropped_not_in_qrels"] == ref.stats.report["dropped_not_in_qrels"]


@pytest.mark.slow
def test_output_folder_is_written_by_the_tasks(ray_local, gdata, small_slices, tmp_path, monkeypatch):
    """-q -o: the tasks write the parts (one retried after its worker died), the driver
    keeps no row; the folder reads back as the local output, aggregates equal."""
    from fasteval.batch.api import evaluate_files

    marker = tmp_path / "fault"
    monkeypatch.setenv("FASTEVAL_RAY_FAULT", str(marker))
    runs = [*_grouped_inputs(gdata), gdata / "scattered" / "eps.parquet"]
    out = tmp_path / "per_query.parquet"
    ref = evaluate_files(gdata / "qrels.parquet", runs, MEASURES, complete=True)
    got = evaluate_files(gdata / "qrels.parquet", runs, MEASURES, engine="ray", complete=True, out=out)
    assert marker.exists()
    assert got.per_query is None
    assert got.aggregate.equals(ref.aggregate)
    keys = ["run_id", "query_id", "measure"]
    back = pl.read_parquet(out)
    assert back.sort(keys).equals(ref.per_query.sort(keys))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fault", "per_query.parquet"]


@pytest.mark.slow
def test_tables_in_memory_are_sliced(ray_local, gdata, small_slices):
    import fasteval

    qrels = pl.read_parquet(gdata / "qrels.parquet")
    run = pl.read_parquet(gdata / "runs" / "two.parquet")
    ref = fasteval.evaluate(qrels, run, MEASURES, complete=True)
    assert fasteval.evaluate(qrels, run, MEASURES, complete=True, engine="ray").equals(ref)


@pytest.mark.slow
def test_the_first_error_in_input_order_is_reported(ray_local, gdata, small_slices, tmp_path):
    """Two bad rows in different slices: the error is that of the first slice in input
    order, whichever task fails first. (One process checks the ids of a whole chunk before
    its scores, so it names the null id here.)"""
    from fasteval.batch.api import evaluate_files
    from fasteval.errors import InputError

    run = pl.read_parquet(gdata / "runs" / "alpha.parquet")
    bad = run.with_columns(
        pl.when(pl.int_range(pl.len()) == run.height - 5).then(None).otherwise(pl.col("doc_id")).alias("doc_id"),
        pl.when(pl.int_range(pl.len()) == 30).then(float("nan")).otherwise(pl.col("score")).alias("score"))
    bad.write_parquet(tmp_path / "bad.parquet", row_group_size=7)
    for _ in range(2):
        with pytest.raises(InputError) as info:
            evaluate_files(gdata / "qrels.parquet", tmp_path / "bad.parquet", MEASURES, engine="ray")
        assert str(info.value) == f"{tmp_path / 'bad.parquet'}, row 30, column 'score': score is NaN (not a number)"


@pytest.mark.slow
def test_cli_stopped_by_sigterm_leaves_nothing(gdata, tmp_path):
    """SIGTERM while the slice tasks run (held here): exit status 143 as on one machine (Ray
    turns the signal into its own exit inside its wait), no traceback, the hidden folder of
    parts removed and no output."""
    import os
    import signal
    import subprocess
    import sys
    import time

    hold = tmp_path / "hold"
    hold.touch()
    out = tmp_path / "out" / "pq.parquet"
    out.parent.mkdir()
    cmd = [sys.executable, "-m", "fasteval", "eval", str(gdata / "qrels.parquet"), str(gdata / "runs" / "alpha.parquet"),
           "-m", "map", "-q", "-o", str(out), "--engine", "ray", "--quiet"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "FASTEVAL_RAY_FAULT": f"hold:{hold}"})
    deadline = time.monotonic() + 120
    while not list(out.parent.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.2)  # the parts folder exists: the tasks are submitted
    time.sleep(1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    assert list(out.parent.iterdir()) == []
