"""The synthetic generator: deterministic, chunk-size independent, and realistic."""

from __future__ import annotations

import polars as pl
import pytest

from fasteval.datasets import SynthSpec, generate, write_synth
from fasteval.datasets.synth import BLOCK_QUERIES
from fasteval.errors import ParameterError

SPEC = SynthSpec(queries=BLOCK_QUERIES + 300, depth=20, runs=4, seed=5, judged=15)


@pytest.fixture(scope="module")
def bench():
    return generate(SPEC)


def test_deterministic_and_row_group_independent(tmp_path, bench):
    qrels, runs = bench
    a = write_synth(SPEC, tmp_path / "a", rows_per_group=1000)
    b = write_synth(SPEC, tmp_path / "b", rows_per_group=1_000_000)
    for key in a:
        da, db = pl.read_parquet(a[key]), pl.read_parquet(b[key])
        assert da.equals(db)
        assert da.equals(qrels if key == "qrels" else runs[key])
    other = generate(SynthSpec(queries=SPEC.queries, depth=20, runs=4, seed=6, judged=15))
    assert not other[0].equals(qrels)


@pytest.mark.parametrize("codec", ["snappy", "none"])
def test_compression_changes_the_codec_not_the_data(tmp_path, bench, codec):
    import pyarrow.parquet as pq

    qrels, runs = bench
    paths = write_synth(SPEC, tmp_path / codec, compression=codec)
    meta = pq.ParquetFile(paths["run_0"]).metadata
    assert meta.row_group(0).column(0).compression == codec.upper().replace("NONE", "UNCOMPRESSED")
    assert pl.read_parquet(paths["run_0"]).equals(runs["run_0"])
    assert pl.read_parquet(paths["qrels"]).equals(qrels)


def test_compression_is_checked(tmp_path):
    with pytest.raises(ParameterError, match="compression"):
        write_synth(SPEC, tmp_path, compression="zip")
    assert not (tmp_path / "qrels.parquet").exists()


def test_qrels_realistic(bench):
    qrels, _ = bench
    grades = set(qrels.get_column("relevance").unique().to_list())
    assert grades == {-1, 0, 1, 2, 3}
    assert qrels.select("query_id", "doc_id").is_duplicated().sum() == 0
    per_q = qrels.group_by("query_id").agg((pl.col("relevance") > 0).sum().alias("nrel"))
    assert 2 <= per_q.get_column("nrel").mean() <= 10  # a handful of relevant docs per query
    assert (per_q.get_column("nrel") == 0).sum() > 0  # some queries with nothing relevant


def test_runs_realistic(bench):
    qrels, runs = bench
    qq = set(qrels.get_column("query_id").to_list())
    judged = qrels.select("query_id", "doc_id")
    for name, run in runs.items():
        assert run.columns == ["query_id", "doc_id", "score"]
        assert run.select("query_id", "doc_id").is_duplicated().sum() == 0
        rq = set(run.get_column("query_id").to_list())
        assert rq - qq and qq - rq, name  # missing on either side
        # sorted by query, then score descending
        assert run.get_column("query_id").is_sorted()
        assert run.group_by("query_id").agg(pl.col("score").is_sorted(descending=True).alias("s")).get_column("s").all()
        assert run.group_by("query_id").len().get_column("len").max() == SPEC.depth
        assert run.group_by("query_id").len().get_column("len").min() < SPEC.depth
        unjudged = run.join(judged, on=["query_id", "doc_id"], how="anti").height
        assert 0 < unjudged < run.height
    # runs 1 and 3 round their scores: many ties within a query
    ties = runs["run_1"].select("query_id", "score").is_duplicated().sum()
    assert ties > runs["run_1"].height // 20
    assert runs["run_0"].select("query_id", "score").is_duplicated().sum() < ties


def _p10(qrels, run):
    rel = qrels.filter(pl.col("relevance") > 0).select("query_id", "doc_id", pl.lit(1).alias("r"))
    top = run.group_by("query_id", maintain_order=True).head(10)
    return top.join(rel, on=["query_id", "doc_id"], how="left").get_column("r").fill_null(0).mean()


def test_runs_differ_in_quality(bench):
    qrels, runs = bench
    p = {n: _p10(qrels, r) for n, r in runs.items()}
    assert p["run_0"] > p["run_1"] > p["run_2"]
    assert p["run_0"] > 1.3 * p["run_2"]


def test_int_ids():
    qrels, runs = generate(SynthSpec(queries=30, depth=5, runs=1, int_ids=True))
    assert qrels.schema["query_id"] == pl.Int64 and qrels.schema["doc_id"] == pl.Int64
    assert runs["run_0"].schema["doc_id"] == pl.Int64


@pytest.mark.parametrize("field", ["queries", "depth", "runs"])
def test_rejects_bad_sizes(field):
    kwargs = {"queries": 10, field: 0}
    with pytest.raises(ParameterError, match=field):
        SynthSpec(**kwargs)


@pytest.mark.parametrize(("field", "value"), [("seed", -1), ("judged", -1), ("queries", True)])
def test_rejects_bad_seed_and_counts(field, value):
    with pytest.raises(ParameterError, match=f"{field} must be a .*integer, got {value}"):
        SynthSpec(**{"queries": 10, field: value})


def test_cli_negative_seed_is_one_line(tmp_path, capsys):
    from fasteval.cli import main

    assert main(["datasets", "synth", "--queries", "3", "--seed", "-1", "--quiet",
                 "--out", str(tmp_path / "d")]) == 2
    assert capsys.readouterr().err == ("fasteval: error: --seed must be a non-negative integer, "
                                       "got -1\n")
    assert not (tmp_path / "d").exists()


def test_output_that_is_a_file_is_refused(tmp_path, capsys):
    """--out naming a file: one line naming the option (it was the OS's 'F/runs: Not a
    directory'), and the file is left as it was."""
    from fasteval.cli import main

    target = tmp_path / "f"
    target.write_text("keep")
    with pytest.raises(ParameterError, match=r"^out must be a directory \(created when missing\)"):
        write_synth(SynthSpec(queries=3, depth=2, runs=1), target)
    assert main(["datasets", "synth", "--queries", "3", "--quiet", "--out", str(target)]) == 2
    assert capsys.readouterr().err == (f"fasteval: error: --out must be a directory (created when "
                                       f"missing), got {str(target)!r}\n")
    assert target.read_text() == "keep"


def test_output_dash_is_refused(tmp_path, capsys, monkeypatch):
    """--out - made a directory named '-' in the working directory."""
    from fasteval.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["datasets", "synth", "--queries", "3", "--quiet", "--out", "-"]) == 2
    assert capsys.readouterr().err == ("fasteval: error: --out must be a directory (created when missing; "
                                       "the dataset is several files, never standard output), got '-'\n")
    assert list(tmp_path.iterdir()) == []


def test_stale_runs_in_the_output_directory_are_refused(tmp_path):
    """A smaller dataset written over a larger one left its run_2, run_3 beside the new
    runs (read as runs of the new dataset by `fasteval eval qrels runs/`)."""
    from fasteval.datasets.synth import write_synth

    write_synth(SynthSpec(queries=5, depth=4, runs=4), tmp_path)
    with pytest.raises(ParameterError, match=r"out must be a directory whose runs/ holds no "
                       r"other parquet files \(it holds run_2.parquet, run_3.parquet"):
        write_synth(SynthSpec(queries=5, depth=4, runs=2, seed=1), tmp_path)
    before = pl.read_parquet(tmp_path / "runs" / "run_0.parquet")
    assert before.equals(generate(SynthSpec(queries=5, depth=4, runs=4))[1]["run_0"])
    paths = write_synth(SynthSpec(queries=5, depth=4, runs=4, seed=1), tmp_path)  # same files
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [
        f"run_{i}.parquet" for i in range(4)]
    assert pl.read_parquet(paths["run_0"]).equals(
        generate(SynthSpec(queries=5, depth=4, runs=4, seed=1))[1]["run_0"])


@pytest.mark.parametrize("depth, judged", [(1, 1), (1, 5), (2, 3)])
def test_small_corpora_judge_each_document_once(tmp_path, depth, judged):
    """The extra relevant judgments (documents past each query's candidate window) stay out
    of the window when the corpus is small: they wrapped around it onto a judged candidate,
    a duplicate (query, doc) pair that `fasteval eval` refuses (10 queries, depth 1, judged 1,
    seed 0 made one)."""
    from fasteval.cli import main

    for seed in range(40):
        spec = SynthSpec(queries=10, depth=depth, judged=judged, runs=1, seed=seed)
        qrels, _ = generate(spec)
        assert qrels.select("query_id", "doc_id").is_duplicated().sum() == 0, seed
    paths = write_synth(SynthSpec(queries=10, depth=1, judged=1, runs=1, seed=0), tmp_path / "d")
    assert main(["eval", str(paths["qrels"]), str(paths["run_0"]), "-m", "map", "--quiet"]) == 0
