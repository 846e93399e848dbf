"""read_table_file (the sas and judge inputs) looks through ``.gz`` for every text format:
a ``.tsv.gz`` file was read as comma-separated (one column holding the tabs) and a
``.json.gz`` file as CSV."""

from __future__ import annotations

import gzip

import pytest

from fasteval.errors import InputError
from fasteval.io.files import read_table_file

ROWS = [("q", "42")]


@pytest.mark.parametrize(("name", "body"), [
    ("t.tsv.gz", b"question\tanswer\nq\t42\n"),
    ("t.csv.gz", b"question,answer\nq,42\n"),
    ("t.json.gz", b'[{"question": "q", "answer": "42"}]'),
    ("t.jsonl.gz", b'{"question": "q", "answer": "42"}\n'),
    ("T.TSV.GZ", b"question\tanswer\nq\t42\n"),
])
@pytest.mark.parametrize("default", ["csv", None])
def test_gzip_text_tables_by_the_inner_suffix(tmp_path, name, body, default) -> None:
    p = tmp_path / name
    p.write_bytes(gzip.compress(body))
    got = read_table_file(str(p), text=True, default=default)
    assert got.columns == ["question", "answer"]
    assert got.rows() == ROWS


def test_gzip_parquet_and_corrupt_gzip_are_named(tmp_path) -> None:
    p = tmp_path / "t.parquet.gz"
    p.write_bytes(gzip.compress(b"PAR1"))
    with pytest.raises(InputError, match="gzip-compressed parquet file is not read"):
        read_table_file(str(p))
    p = tmp_path / "t.tsv.gz"
    p.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(InputError, match="corrupt gzip file"):
        read_table_file(str(p))
