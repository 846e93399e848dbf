"""``compare --results``, ``sas`` and ``judge`` read ``-`` (standard input) and FIFOs
(``<(cmd)``) as ``eval`` does: read once, whole, the format found from the first bytes when
the name has no suffix."""

from __future__ import annotations

import gzip
import io
import os
import sys
import threading

import polars as pl
import pytest

from fasteval.cli import main
from fasteval.io.files import read_table_file
from tests._data import SHIPPED_TREC, fifo_feeding

_QRELS, _RUN = str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test")


@pytest.fixture(scope="module")
def per_query(tmp_path_factory) -> pl.DataFrame:
    """Per-query map and P@5 of two runs (the second: the first's scores reversed)."""
    top = tmp_path_factory.mktemp("pq")
    other = top / "other.test"
    other.write_text("".join(f"{' '.join(f[:4])} {-float(f[4])} o\n" for f in
                             (line.split() for line in open(_RUN))))
    out = top / "pq.parquet"
    assert main(["eval", _QRELS, _RUN, str(other), "-m", "map", "-m", "P@5", "-q", "-o", str(out),
                 "--quiet"]) == 0
    return pl.read_parquet(out)


def _encodings(df: pl.DataFrame) -> dict[str, bytes]:
    buf = io.BytesIO()
    df.write_parquet(buf)
    csv = df.write_csv().encode()
    return {"parquet": buf.getvalue(), "csv": csv, "tsv": df.write_csv(separator="\t").encode(),
            "jsonl": df.write_ndjson().encode(), "json": df.write_json().encode(),
            "csv.gz": gzip.compress(csv), "jsonl.gz": gzip.compress(df.write_ndjson().encode())}


def _compare(capsys, path: str) -> str:
    capsys.readouterr()
    assert main(["compare", "--results", path, "-m", "map", "--format", "csv"]) == 0
    return capsys.readouterr().out


def _fifo(tmp_path, name: str, data: bytes) -> tuple[str, threading.Thread]:
    return fifo_feeding(tmp_path / name, data)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_compare_reads_results_from_standard_input_and_fifos(per_query, tmp_path, capsys, monkeypatch):
    on_disk = tmp_path / "pq.parquet"
    per_query.write_parquet(on_disk)
    expected = _compare(capsys, str(on_disk))
    for kind, data in _encodings(per_query).items():
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        assert _compare(capsys, "-") == expected, kind
        path, feeding = _fifo(tmp_path, f"fifo-{kind.replace('.', '-')}", data)  # no suffix
        assert _compare(capsys, path) == expected, kind
        feeding.join(5)


def test_compare_names_a_run_read_from_standard_input_stdin(per_query, tmp_path, capsys, monkeypatch):
    def trec_text(run: str) -> bytes:
        rows = per_query.filter((pl.col("measure") == "map") & (pl.col("run_id") == run))
        return "".join(f"map\t{q}\t{v}\n" for q, v in rows.select("query_id", "value").rows()).encode()

    (tmp_path / "other.trec").write_bytes(trec_text("other.test"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(trec_text("results.test"))))
    capsys.readouterr()
    assert main(["compare", "--results", "-", str(tmp_path / "other.trec"), "-m", "map", "--format", "csv"]) == 0
    assert pl.read_csv(io.StringIO(capsys.readouterr().out)).get_column("run_id").unique().to_list() == ["stdin"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_table_inputs_of_sas_and_judge_from_standard_input_and_fifos(tmp_path, monkeypatch):
    table = pl.DataFrame({"question": ["q1", "q2"], "answer": ["007", "1.50"], "gold": ["7", "x"]})
    for kind, data in _encodings(table).items():
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        assert read_table_file("-", default=None).rows() == table.rows(), kind
        path, feeding = _fifo(tmp_path, f"t-{kind.replace('.', '-')}", data)
        assert read_table_file(path, default=None).rows() == table.rows(), kind
        feeding.join(5)


def test_judge_and_sas_read_standard_input(tmp_path, capsys, monkeypatch):
    data = b'{"question": "q1", "contexts": ["c"], "answer": "a", "gold": "g"}\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["judge", "faithfulness", "-", "-o", str(tmp_path / "j.parquet"), "--question-col", "q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fasteval: error: -, column 'q': column not found; available columns: ['question',"), err
    assert main(["sas", "-", "--gold-col", "gold"]) == 2  # no file name to name the output after
    assert "-o/--output must be given when INPUT is standard input" in capsys.readouterr().err
