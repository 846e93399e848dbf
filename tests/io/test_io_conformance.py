"""Reading the vendored conformance files: every ranx encoding, trec_eval's comment/junk cases."""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest

from fasteval.io import trec
from fasteval.io.readers import read_qrels, read_run
from tests._data import RANX, read_bytes, read_text, trec_eval_file


class _TrecEvalDir:
    """``TE / name``: trec_eval's test file (tests/data/conformance/trec_eval, plain or .gz,
    else datasets/trec); a missing file raises FileNotFoundError."""

    def __truediv__(self, name: str) -> Path:
        return trec_eval_file(name)


TE = _TrecEvalDir()


# Hand-transcribed from ranx/README (q1: d1=1, d2=2, d3=3; q2: d1=1, d2=2).
RANX_QRELS = [("q1", "d1", 1), ("q1", "d2", 2), ("q1", "d3", 3), ("q2", "d1", 1), ("q2", "d2", 2)]
RANX_RUN = [("q1", "d3", 0.3), ("q1", "d2", 0.2), ("q1", "d1", 0.1), ("q2", "d2", 0.2), ("q2", "d1", 0.1)]


@pytest.mark.parametrize("name", ["qrels.trec", "qrels.trec.gz", "qrels.json", "qrels.parquet"])
def test_ranx_qrels_every_format(name: str) -> None:
    df = read_qrels(RANX / name)
    assert df.columns == ["query_id", "doc_id", "relevance"]
    assert df.schema["relevance"] == pl.Int64
    assert sorted(df.rows()) == sorted(RANX_QRELS)


@pytest.mark.parametrize("name", ["run.trec", "run.trec.gz", "run.json", "run.parquet"])
def test_ranx_run_every_format(name: str) -> None:
    df = read_run(RANX / name)
    assert df.schema["score"] == pl.Float64
    assert sorted(df.select("query_id", "doc_id", "score").rows()) == sorted(RANX_RUN)


def test_ranx_trec_run_rank_and_tag() -> None:
    df = read_run(RANX / "run.trec")
    assert df.get_column("rank").to_list() == [1, 2, 3, 1, 2]
    assert df.get_column("tag").to_list() == ["None"] * 5


def test_ranx_lz4_not_supported() -> None:
    # ranx's LZ4 run is ranx's own serialisation (LZ4 frame around a custom encoding);
    # we do not read it and say so instead of misreading it.
    from fasteval.errors import InputError

    with pytest.raises(InputError, match="LZ4"):
        read_run(RANX / "run.lz4")


def test_qrels_with_comments_equals_plain() -> None:
    plain = read_qrels(TE / "qrels.test")
    commented = read_qrels(TE / "qrels.test.with-comments")
    assert plain.height == 3681 == commented.height
    # The comment file rewrites one docno to contain '#': the rest is identical.
    assert "CR#93E-1860" in commented.get_column("doc_id").to_list()
    assert "CR93E-1860" in plain.get_column("doc_id").to_list()
    a = plain.filter(pl.col("doc_id") != "CR93E-1860")
    b = commented.filter(pl.col("doc_id") != "CR#93E-1860")
    assert a.equals(b)
    n_comments = sum(1 for line in read_text(TE / "qrels.test.with-comments").splitlines() if line.startswith("#"))
    assert n_comments == 3


def test_results_comment_test_hash_docnos() -> None:
    df = read_run(TE / "results.comment.test")
    lines = [ln.split() for ln in read_text(TE / "results.comment.test").splitlines() if ln.strip()]
    assert df.height == len(lines) == 30100
    assert df.get_column("doc_id").to_list() == [f[2] for f in lines]
    assert df.get_column("doc_id").str.contains("#", literal=True).all()
    assert df.get_column("score").to_list() == [float(f[4]) for f in lines]


def test_results_trunc_junk_after_tag_ignored() -> None:
    text = read_text(TE / "results.trunc")
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    assert sum(len(f) > 6 for f in lines) == 5
    df = read_run(TE / "results.trunc")
    assert df.height == len(lines)
    assert set(df.get_column("tag")) == {"STANDARD"}
    assert df.get_column("doc_id").to_list() == [f[2] for f in lines]
    assert df.get_column("score").to_list() == [float(f[4]) for f in lines]
    assert df.get_column("rank").to_list() == [int(f[3]) for f in lines]


def test_results_test_matches_whitespace_split() -> None:
    df = read_run(TE / "results.test")
    lines = [ln.split() for ln in read_text(TE / "results.test").splitlines()]
    assert df.rows() == [(f[0], f[2], float(f[4]), int(f[3]), f[5]) for f in lines]


def test_graded_qrels_with_negative_grades() -> None:
    df = read_qrels(TE / "qrels.rel_level")
    lines = [ln.split() for ln in read_text(TE / "qrels.rel_level").splitlines() if ln.strip()]
    assert df.rows() == [(f[0], f[2], int(f[3])) for f in lines]
    assert df.get_column("relevance").min() == -1


def test_qrels_jg_duplicates_are_reported() -> None:
    # qrels.123 is the qrels_jg format: the same pair appears once per judgment group,
    # so as plain qrels it holds duplicates; the default policy (as trec_eval) refuses it.
    from fasteval.errors import InputError

    with pytest.raises(InputError, match=r"line 3682.*duplicate"):
        read_qrels(TE / "qrels.123")
    assert read_qrels(TE / "qrels.comments.123", duplicates="ignore").height == 10362


FILES = [
    ("qrels", "qrels.test"),
    ("qrels", "qrels.test.with-comments"),
    ("qrels", "qrels.rel_level"),
    ("qrels", "qrels.comment.test"),
    ("run", "results.test"),
    ("run", "results.trunc"),
    ("run", "results.comment.test"),
    ("run", "results-302.test"),
]


@pytest.mark.parametrize(("kind", "name"), FILES)
def test_fast_and_careful_parsers_agree(kind: str, name: str) -> None:
    path = TE / name
    # the parsers take a path or (decompressed) bytes: big files are stored gzipped
    data: str | bytes = read_bytes(path) if path.suffix == ".gz" else str(path)
    careful, _ = trec._read_careful(data, kind, str(path))
    for sep in (" ", "\t"):
        fast = trec._read_fast(data, kind, sep)
        if fast is not None:
            assert fast.equals(careful), sep
    both, _ = trec.read_trec(data, kind, source=str(path))
    assert both.equals(careful)


def test_gzip_reads_same_as_plain(tmp_path: Path) -> None:
    gz = tmp_path / "results.test.gz"
    gz.write_bytes(gzip.compress((TE / "results.test").read_bytes()))
    assert read_run(gz).equals(read_run(TE / "results.test"))
