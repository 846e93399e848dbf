"""The chunked driver gives exactly the per-query results of scoring the whole table at once."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from fasteval.batch.discover import RunSource, discover_all
from fasteval.batch.driver import aggregate_wide, parse_memory, run_job, stream_chunks
from fasteval.batch.sinks import MemorySink, ParquetSink, to_long, to_wide
from fasteval.datasets import SynthSpec, generate
from fasteval.errors import OutputError, ParameterError

from .standin import NAMES, StandinEvaluator, mean_aggregate


@pytest.fixture(scope="module")
def data():
    qrels, runs = generate(SynthSpec(queries=60, depth=12, runs=2, seed=3, judged=8))
    return qrels, runs


def _canon(long: pl.DataFrame) -> list[tuple]:
    return sorted(long.select("run_id", "query_id", "measure", "value").rows())


def _reference(qrels, run, run_id="r"):
    return StandinEvaluator(qrels).evaluate(run, run_id=run_id)


@pytest.mark.parametrize("max_rows", [1, 2, 5, 12, 13, 100, 10_000])
def test_stream_chunks_never_split_a_query(data, max_rows):
    _, runs = data
    run = runs["run_0"]
    frames = [run.slice(i, 7) for i in range(0, run.height, 7)]  # batches cut queries too
    chunks = list(stream_chunks(iter(frames), max_rows))
    assert sum(c.height for c in chunks) == run.height
    assert pl.concat(chunks).equals(run)  # order preserved
    seen: set = set()
    for c in chunks:
        qs = set(c.get_column("query_id").unique().to_list())
        assert not (qs & seen)
        seen |= qs
        # a chunk is over max_rows only when it is a single query
        if c.height > max_rows:
            assert len(qs) == 1


@pytest.mark.parametrize("max_rows", [1, 3, 12, 25, 1000])
@pytest.mark.parametrize("shuffle", [False, True])
def test_run_job_equals_whole_table(data, max_rows, shuffle):
    qrels, runs = data
    run = runs["run_1"]
    if shuffle:
        run = run.sample(fraction=1.0, shuffle=True, seed=11)
    ev = StandinEvaluator(qrels)
    sink = MemorySink(NAMES)
    src = RunSource(name="r", kind="frame", frame=run, rows=run.height)
    wide, stats = run_job(ev, [src], sink, max_rows_per_chunk=max_rows)
    expected = _reference(qrels, run)
    assert _canon(sink.long()) == _canon(expected)
    assert stats.rows == run.height
    assert stats.mode["r"] == ("partition" if shuffle and max_rows < run.height else "stream")
    if not shuffle and max_rows < run.height:
        assert stats.chunks > 1
    # dropped counts add up over chunks: queries of the run that have no qrels
    dropped = run.select("query_id").unique().join(qrels.select("query_id").unique(), on="query_id", how="anti").height
    assert stats.report["dropped"] == dropped
    agg = aggregate_wide(wide, NAMES, aggregate=mean_aggregate)
    ref_agg = mean_aggregate(expected)
    got = {(r, m): v for r, m, v in agg.rows()}
    for r, m, v in ref_agg.rows():
        assert got[(r, m)] == pytest.approx(v, rel=1e-12)


def test_interleaved_after_first_chunk_falls_back(data):
    """Input grouped in the first chunks, a query reappearing much later: detected, exact."""
    qrels, runs = data
    run = runs["run_0"]
    first_q = run.get_column("query_id")[0]
    moved = pl.concat([run, run.filter(pl.col("query_id") == first_q).head(1).with_columns(pl.col("doc_id") + "x")])
    ev = StandinEvaluator(qrels)
    sink = MemorySink(NAMES)
    src = RunSource(name="r", kind="frame", frame=moved, rows=moved.height)
    _, stats = run_job(ev, [src], sink, max_rows_per_chunk=40)
    assert stats.mode["r"] == "partition"
    assert _canon(sink.long()) == _canon(_reference(qrels, moved))


def test_multi_run_table_and_complete(data):
    qrels, runs = data
    table = pl.concat([df.with_columns(pl.lit(n).alias("run_id")) for n, df in runs.items()])
    ev = StandinEvaluator(qrels)
    sink = MemorySink(NAMES)
    src = RunSource(name="ignored", kind="frame", frame=table, rows=table.height, has_run_id=True)
    _, stats = run_job(ev, [src], sink, max_rows_per_chunk=17, complete=True)
    long = sink.long()
    assert sorted(stats.runs) == ["run_0", "run_1"]
    assert set(long.get_column("run_id").unique().to_list()) == {"run_0", "run_1"}
    qrels_q = set(qrels.get_column("query_id").unique().to_list())
    for name, run in runs.items():
        got = long.filter(pl.col("run_id") == name)
        run_q = set(run.get_column("query_id").unique().to_list())
        # -c: every qrels query has a row; queries without qrels are dropped
        assert set(got.get_column("query_id").unique().to_list()) == qrels_q
        missing = sorted(qrels_q - run_q)
        assert missing  # the generator leaves some qrels queries out of every run
        filled = got.filter(pl.col("query_id").is_in(missing))
        assert filled.get_column("value").to_list() == [0.0] * (len(missing) * len(NAMES))
    assert stats.report["filled"] == sum(len(qrels_q - set(r.get_column("query_id").to_list())) for r in runs.values())


def test_parquet_sources_in_files_and_hive(tmp_path, data):
    qrels, runs = data
    for name, df in runs.items():
        part = tmp_path / "hive" / f"run_id={name}"
        part.mkdir(parents=True)
        half = df.height // 2
        df.slice(0, half).write_parquet(part / "part-0.parquet", row_group_size=10)
        df.slice(half).write_parquet(part / "part-1.parquet", row_group_size=10)
    sources = discover_all([tmp_path / "hive"])
    assert len(sources) == 1 and sources[0].has_run_id
    ev = StandinEvaluator(qrels)
    sink = MemorySink(NAMES)
    run_job(ev, sources, sink, max_rows_per_chunk=9)
    expected = pl.concat([_reference(qrels, df, n) for n, df in runs.items()])
    assert _canon(sink.long()) == _canon(expected)


def test_parquet_sink_wide_roundtrip(tmp_path, data):
    qrels, runs = data
    ev = StandinEvaluator(qrels)
    out = tmp_path / "wide.parquet"
    sink = ParquetSink(out, wide=True, measure_names=NAMES)
    src = RunSource(name="r", kind="frame", frame=runs["run_0"], rows=runs["run_0"].height)
    run_job(ev, [src], sink, max_rows_per_chunk=30, collect_wide=False)
    assert not out.exists()  # nothing at the destination before commit
    sink.commit()
    wide = pl.read_parquet(out)
    assert wide.columns == ["run_id", "query_id", *NAMES]
    assert _canon(to_long(wide, NAMES)) == _canon(_reference(qrels, runs["run_0"]))
    assert [p.name for p in tmp_path.iterdir()] == ["wide.parquet"]  # no temp left


def test_sink_abort_leaves_nothing(tmp_path):
    out = tmp_path / "x.parquet"
    sink = ParquetSink(out, wide=False, measure_names=["m"])
    sink.write(pl.DataFrame({"run_id": ["r"], "query_id": ["q"], "m": [1.0]}))
    sink.abort()
    assert list(tmp_path.iterdir()) == []


def test_to_long_to_wide_inverse():
    rng = np.random.default_rng(0)
    wide = pl.DataFrame({"run_id": ["a"] * 5, "query_id": [f"q{i}" for i in range(5)],
                         "x": rng.random(5), "y": rng.random(5)})
    assert to_wide(to_long(wide, ["x", "y"]), ["x", "y"]).equals(wide)


@pytest.mark.parametrize(("text", "expected"), [("1GiB", 2**30), ("512MiB", 512 * 2**20), ("2g", 2 * 10**9), ("100", 100)])
def test_parse_memory(text, expected):
    assert parse_memory(text) == expected


@pytest.mark.parametrize("bad", ["", "1XB", "-1GiB", "0"])
def test_parse_memory_rejects(bad):
    with pytest.raises(ParameterError, match="memory-limit"):
        parse_memory(bad)


def test_bad_chunk_size(data):
    qrels, runs = data
    src = RunSource(name="r", kind="frame", frame=runs["run_0"], rows=1)
    with pytest.raises(ParameterError, match="max_rows_per_chunk"):
        run_job(StandinEvaluator(qrels), [src], max_rows_per_chunk=0)


@pytest.mark.parametrize("kind", ["parquet", "csv", "memory"])
@pytest.mark.parametrize("wide", [False, True])
def test_sink_rollback_takes_back_rows_after_mark(tmp_path, kind, wide):
    """A source restarted partitioned takes back what it wrote; earlier rows stay."""
    from fasteval.batch.sinks import make_sink

    names = ["m", "n"]
    first = pl.DataFrame({"run_id": ["a", "a"], "query_id": ["q1", "q2"], "m": [0.1, 0.2], "n": [1.0, 2.0]})
    later = pl.DataFrame({"run_id": ["b"], "query_id": ["q9"], "m": [0.9], "n": [9.0]})
    again = pl.DataFrame({"run_id": ["b"], "query_id": ["q3"], "m": [0.3], "n": [None]})
    out = tmp_path / f"o.{kind}"
    sink = MemorySink(names) if kind == "memory" else make_sink(out, kind, wide=wide, measure_names=names)
    sink.write(first)
    mark = sink.mark()
    sink.write(later)
    sink.write(later)
    sink.rollback(mark)
    sink.write(again)
    if kind == "memory":
        got = sink.wide() if wide else sink.long()
    else:
        sink.commit()
        got = pl.read_parquet(out) if kind == "parquet" else pl.read_csv(out)
    expected = pl.concat([first, again])
    if wide:
        assert got.rows() == expected.rows()
    else:
        assert got.rows() == to_long(expected, names).rows()
        assert got.columns == ["run_id", "query_id", "measure", "value"]


def test_parquet_sink_rollback_to_empty_then_commit(tmp_path):
    out = tmp_path / "o.parquet"
    sink = ParquetSink(out, wide=False, measure_names=["m"])
    mark = sink.mark()
    sink.write(pl.DataFrame({"run_id": ["r"], "query_id": ["q"], "m": [1.0]}))
    sink.rollback(mark)
    sink.commit()
    assert pl.read_parquet(out).height == 0
    assert [p.name for p in tmp_path.iterdir()] == ["o.parquet"]


def test_parquet_sink_failed_background_write_is_raised(tmp_path):
    """Writes run on a background thread; a failed one surfaces at the next call."""
    sink = ParquetSink(tmp_path / "o.parquet", wide=True, measure_names=["m"])
    real = sink._write_table
    calls = []

    def fail_second(table):
        calls.append(table.num_rows)
        if len(calls) == 2:
            raise OSError("disk full")
        real(table)

    sink._write_table = fail_second
    sink.write(pl.DataFrame({"run_id": ["r"], "query_id": ["q"], "m": [1.0]}))
    sink.write(pl.DataFrame({"run_id": ["r"], "query_id": ["q2"], "m": [2.0]}))
    with pytest.raises(OutputError, match="o.parquet' cannot be written: disk full"):  # names the output
        sink.commit()
    sink.abort()
    assert calls == [1, 1]
    assert list(tmp_path.iterdir()) == []


def test_aggregate_wide_equals_long_aggregate_exactly():
    """Wide and long aggregates are the same exact sums rounded once: equal to the last bit,
    for means, sums (counts) and geometric means, over several runs and nulls."""
    import fasteval

    rng = np.random.default_rng(7)
    names = ["map", "num_ret", "gm_map", "P_10"]
    parts = []
    for run in ("b", "a"):
        n = 1001
        parts.append(pl.DataFrame({
            "run_id": [run] * n, "query_id": [f"q{i}" for i in range(n)],
            "map": rng.random(n) / 3, "num_ret": rng.integers(0, 100, n).astype(float),
            "gm_map": np.where(rng.random(n) < 0.1, 0.0, rng.random(n)),
            "P_10": pl.Series(rng.random(n)).scatter([3, 500], None),
        }))
    wide = pl.concat(parts)
    got = aggregate_wide(wide, names)
    expected = fasteval.aggregate(to_long(wide, names))
    assert got.rows() == expected.rows()  # exact, same order: runs as met, measures as given
    exact = math.fsum(wide.filter(pl.col("run_id") == "a").get_column("map").to_list())
    assert dict(((r, m), v) for r, m, v in got.rows())[("a", "map")] == exact / 1001


def _assert_parts_hold_whole_queries(parts: list[pl.DataFrame], run: pl.DataFrame) -> None:
    owner: dict = {}
    for i, part in enumerate(parts):
        for q in part.get_column("query_id").unique().to_list():
            assert owner.setdefault(q, i) == i, q  # a query in one part only
    # every row once, each query's rows in their input order
    got = pl.concat(parts).with_columns(pl.col("doc_id").cast(pl.Int64))
    assert sorted(got.get_column("doc_id").to_list()) == list(range(run.height))
    order = got.group_by("query_id", maintain_order=True).agg(pl.col("doc_id").diff().min().alias("step"))
    assert order.filter(pl.col("step") < 0).height == 0


@pytest.mark.parametrize(("n_parts", "max_open"), [(7, 100), (50, 4), (300, 3)])
def test_partition_chunks_keeps_few_files_open(tmp_path, monkeypatch, n_parts, max_open):
    # more parts than files that may be open: parts are made in rounds (50 parts, 4 files
    # at once: 4 files, each split 13 ways); never more than max_open files are written at once
    import pyarrow.ipc as ipc

    from fasteval.batch.driver import partition_chunks

    rng = np.random.default_rng(5)
    n = 3000
    run = pl.DataFrame({"query_id": [f"q{x}" for x in rng.integers(0, 400, n)],
                        "doc_id": [str(i) for i in range(n)], "score": rng.random(n)})
    open_now, most = set(), [0]
    real = ipc.new_file

    class Counted:
        def __init__(self, path, schema, options=None):
            self.w, self.path = real(path, schema, options=options), path
            open_now.add(path)
            most[0] = max(most[0], len(open_now))

        def write_table(self, table):
            self.w.write_table(table)

        def close(self):
            self.w.close()
            open_now.discard(self.path)

    monkeypatch.setattr(ipc, "new_file", Counted)
    parts = list(partition_chunks(iter([run.slice(i, 9) for i in range(0, n, 9)]), n_parts,
                                  str(tmp_path), max_open=max_open))
    assert most[0] <= max_open
    assert len(parts) >= min(n_parts, 300) * 0.8  # about n_parts parts (400 queries)
    _assert_parts_hold_whole_queries(parts, run)
    assert list(tmp_path.iterdir()) == []


def test_partitioned_job_within_a_low_open_files_limit(tmp_path, data):
    # a shuffled run scored in small chunks needs more parts than a low limit on open files
    # allows (the job opened one file per part at once: OSError 'Too many open files')
    import resource
    import subprocess
    import sys

    qrels, runs = data
    run = runs["run_0"].sample(fraction=1.0, shuffle=True, seed=2)
    qrels.write_parquet(tmp_path / "qrels.parquet")
    run.write_parquet(tmp_path / "run.parquet")
    script = (
        "import resource, sys, polars as pl\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (48, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))\n"
        "from fasteval.batch.api import evaluate_files\n"
        "res = evaluate_files(sys.argv[1], sys.argv[2], ['map', 'P_5'], max_rows_per_chunk=1)\n"
        "res.per_query.write_parquet(sys.argv[3])\n"
        "print(res.stats.mode['run'])\n"
    )
    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] < 48:
        pytest.skip("hard limit on open files below 48")
    out = tmp_path / "pq.parquet"
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "qrels.parquet"),
                           str(tmp_path / "run.parquet"), str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["partition"]
    import fasteval

    want = fasteval.evaluate(qrels, run, ["map", "P_5"])
    assert pl.read_parquet(out).equals(want)


@pytest.mark.parametrize("kind", ["int32", "categorical", "float32"])
def test_partitioned_parts_of_mixed_column_types(tmp_path, monkeypatch, kind):
    # a glob of parquet parts where one file stores query ids as Int32 (or categorical
    # text) and another as Int64 (text), or scores as Float32 then Float64: a query's
    # rows met in both files were hashed apart and scored twice (Int32), the part files
    # refused a second dictionary (pyarrow ArrowInvalid: categorical), or later scores
    # were rounded to the first file's Float32
    import fasteval
    import fasteval.batch.driver as driver
    from fasteval.batch.api import evaluate_files

    monkeypatch.setattr(driver, "SPLIT_READ_ROWS", 16)  # files hashed apart, as large ones are
    rng = np.random.default_rng(9)
    n = 600
    run = pl.DataFrame({"query_id": rng.integers(0, 30, n), "doc_id": np.arange(n),
                        "score": 1.0 + rng.integers(0, 4, n) * 1e-9})
    qrels = run.filter(pl.col("doc_id") % 3 == 0).select(
        "query_id", "doc_id", relevance=pl.col("doc_id") % 2 + 1)
    a, b = run.slice(0, 300), run.slice(300)
    if kind == "int32":
        a = a.with_columns(pl.col("query_id").cast(pl.Int32))
    elif kind == "categorical":
        run, qrels, a, b = (t.with_columns(pl.col("query_id").cast(pl.Utf8)) for t in (run, qrels, a, b))
        a = a.with_columns(pl.col("query_id").cast(pl.Categorical))
    else:  # float32 first: the second file's scores are not float32 values
        a = a.with_columns(pl.col("score").cast(pl.Float32))
        run = pl.concat([a, b], how="vertical_relaxed")
    a.write_parquet(tmp_path / "part-0.parquet")
    b.write_parquet(tmp_path / "part-1.parquet")
    want = fasteval.evaluate(qrels, run, ["map", "ndcg", "num_ret"], run_id="r")
    res = evaluate_files(qrels, {"r": str(tmp_path / "*.parquet")}, ["map", "ndcg", "num_ret"],
                         max_rows_per_chunk=7)
    assert res.stats.mode == {"r": "partition"}
    assert res.per_query.equals(want)
    assert (res.stats.report["run_queries"], res.stats.report["evaluated"]) == (30, 30)


def test_max_docs_expected_checked_on_whole_queries_of_ungrouped_input(tmp_path):
    # the rows of q1 come apart: the first chunk holds d1 (2.0), e (1.0), f (1.0), where
    # -M 2 would cut the tie of e and f; the whole query ranks g and h (3.0) first, so
    # rank 2 ends a tie group and the cut is allowed
    import fasteval
    from fasteval.batch import evaluate_files

    run = pl.DataFrame({
        "query_id": ["q1", "q1", "q1", "q2", "q1", "q2", "q1", "q1"],
        "doc_id": ["d1", "e", "f", "a", "h", "b", "g", "i"],
        "score": [2.0, 1.0, 1.0, 0.5, 3.0, 0.4, 3.0, 0.1],
    })
    qrels = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["h", "e", "a"], "relevance": [1, 1, 1]})
    qrels.write_parquet(tmp_path / "qrels.parquet")
    run.write_parquet(tmp_path / "run.parquet")
    res = evaluate_files(tmp_path / "qrels.parquet", tmp_path / "run.parquet", ["P@2", "num_rel_ret"],
                         tie_break="expected", max_docs=2, max_rows_per_chunk=3)
    mem = fasteval.evaluate(qrels, {"run": run}, ["P@2", "num_rel_ret"], tie_break="expected", max_docs=2)
    assert res.per_query.drop("run_id").equals(mem.drop("run_id"))
    # by hand: q1's top 2 is g and h (h relevant): P@2 = 1/2, one relevant retrieved
    got = {(q, m): v for _, q, m, v in res.per_query.iter_rows()}
    assert got[("q1", "P@2")] == 0.5 and got[("q1", "num_rel_ret")] == 1
    assert got[("q2", "num_rel_ret")] == 1
    with pytest.raises(ParameterError, match="query 'q1' has equal scores across rank 4"):
        evaluate_files(tmp_path / "qrels.parquet", tmp_path / "run.parquet", ["P@2"], tie_break="expected",
                       max_docs=4, max_rows_per_chunk=3)


def test_partition_folder_is_removed_when_a_part_fails(tmp_path):
    """An error while scoring a part (a duplicate document) removes the folder of part
    files at once, while the error is still being handled: the command ends its process
    without finalizers (os._exit), which left the folder behind."""
    import fasteval

    qrels = pl.DataFrame({"query_id": [f"q{i}" for i in range(30)], "doc_id": ["d0"] * 30,
                          "relevance": [1] * 30})
    rows = [(f"q{q}", f"d{d}", float(q * 10 + d)) for q in range(30) for d in range(6)]
    rows.append(("q7", "d3", 0.5))  # a duplicate pair
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row").sample(
        fraction=1.0, shuffle=True, seed=2)
    path = tmp_path / "run.parquet"
    run.write_parquet(path)
    parts = tmp_path / "parts"
    parts.mkdir()
    ev = fasteval.Evaluator(qrels, ["P@1"])
    with pytest.raises(fasteval.errors.InputError, match="appears more than once") as info:
        run_job(ev, discover_all([str(path)]), MemorySink(["P_1"]), max_rows_per_chunk=20,
                tmp_dir=str(parts))
    assert info.value is not None  # the traceback (and the job's frames) still held here
    assert list(parts.iterdir()) == []


def test_parquet_sink_abort_waits_for_the_write_in_flight(tmp_path, monkeypatch):
    """A sink aborted while its background write is still running (here: finishing fails
    at once) leaves no temporary file: the write lands before the file is removed."""
    import time

    write = ParquetSink._write_table

    def slow(self, table):
        time.sleep(0.3)
        write(self, table)

    def full_disk(self):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ParquetSink, "_write_table", slow)
    monkeypatch.setattr(ParquetSink, "_finish", full_disk)
    sink = ParquetSink(tmp_path / "pq.parquet", wide=False, measure_names=["map"])
    sink.write(pl.DataFrame({"run_id": ["r"], "query_id": ["q"], "map": [0.5]}))
    with pytest.raises(OutputError, match="pq.parquet"):
        sink.finish()
    time.sleep(0.5)  # (a write still in flight would have recreated the file by now)
    assert list(tmp_path.iterdir()) == []
