"""Files compressed with something other than gzip are named as such (the reader saw NUL
bytes, or invalid UTF-8, and said so), by the readers and by every command."""

from __future__ import annotations

import bz2
import gzip
import lzma
import zipfile

import pytest

import fasteval
from fasteval.cli import main
from fasteval.errors import InputError

RUN = b"1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n"
QRELS = b"1 0 a 1\n1 0 b 0\n"


def _zip(data: bytes, path) -> None:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("run", data)


@pytest.mark.parametrize(("name", "pack", "what"), [
    ("run.bz2", bz2.compress, "bzip2-compressed"),
    ("run", bz2.compress, "bzip2-compressed"),
    ("run.xz", lzma.compress, "xz-compressed"),
    ("run.txt", None, "a zip archive"),
])
def test_other_compressions_are_named(tmp_path, name, pack, what):
    path = tmp_path / name
    if pack is None:
        _zip(RUN, path)
    else:
        path.write_bytes(pack(RUN))
    with pytest.raises(InputError) as exc:
        fasteval.read_run(path)
    assert str(exc.value) == (f"{path}: the file is {what}, which is not read (only gzip is "
                              "decompressed); expected text: decompress it first")


def test_gzip_is_still_read_and_commands_name_the_compression(tmp_path, capsys):
    (tmp_path / "qrels").write_bytes(QRELS)
    (tmp_path / "run.gz").write_bytes(gzip.compress(RUN))
    (tmp_path / "qrels.bz2").write_bytes(bz2.compress(QRELS))
    assert fasteval.read_run(tmp_path / "run.gz").height == 2
    for argv in (["eval", str(tmp_path / "qrels.bz2"), str(tmp_path / "run.gz"), "-m", "map"],
                 ["trec-eval", str(tmp_path / "qrels.bz2"), str(tmp_path / "run.gz")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.strip().splitlines() == [
            f"fasteval: error: {tmp_path / 'qrels.bz2'}: the file is bzip2-compressed, which is "
            "not read (only gzip is decompressed); expected text: decompress it first"]


def test_a_query_id_spelled_like_a_magic_number_is_text(tmp_path):
    path = tmp_path / "qrels"
    path.write_bytes(b"BZh9 0 a 1\nPK 0 b 1\n")
    assert fasteval.read_qrels(path).get_column("query_id").to_list() == ["BZh9", "PK"]


def test_parquet_where_text_is_read_is_named(tmp_path, capsys):
    import polars as pl

    (tmp_path / "qrels").write_bytes(QRELS)
    run = tmp_path / "run.parquet"
    pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]}).write_parquet(run)
    message = (f"{run}: the file is parquet; expected text here (fasteval trec-eval reads TREC "
               "text only; fasteval eval and read_run/read_qrels without a text format read parquet)")
    with pytest.raises(InputError) as exc:
        fasteval.read_run(run, format="trec")
    assert str(exc.value) == message
    assert fasteval.read_run(run).height == 1
    assert main(["trec-eval", str(tmp_path / "qrels"), str(run)]) == 2
    assert capsys.readouterr().err.strip() == f"fasteval: error: {message}"


def test_gzipped_parquet_is_named_as_such(tmp_path, capsys) -> None:
    import polars as pl

    plain = tmp_path / "run.parquet"
    pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]}).write_parquet(plain)
    path = tmp_path / "run.parquet.gz"
    path.write_bytes(gzip.compress(plain.read_bytes()))
    for read in (fasteval.read_run, lambda p: fasteval.scan_run(p).collect()):
        with pytest.raises(InputError, match="the file is gzip-compressed parquet"):  # was: 'must end with PAR1'
            read(path)
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(QRELS)
    assert main(["eval", str(qrels), str(path), "-m", "map", "--quiet"]) == 2
    assert "gzip-compressed parquet" in capsys.readouterr().err
