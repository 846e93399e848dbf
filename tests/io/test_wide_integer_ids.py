"""Integer ids past 2^63 (JSON Lines numbers, unsigned 64-bit parquet columns) are refused
naming the file and column by every reader, the lazy ones too (``scan_run``/``scan_qrels``
failed at ``collect()`` with polars' cast or parse error, naming neither)."""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.cli import main
from fasteval.errors import InputError

_BIG = 18446744073709551615
_ROWS = 10_050  # past the rows polars infers JSON Lines types from


def _jsonl(path, ids: list[int], kind: str) -> str:
    last = '"relevance": 1' if kind == "qrels" else '"score": 0.5'
    path.write_text("".join(f'{{"query_id": 7, "doc_id": {i}, {last}}}\n' for i in ids))
    return str(path)


@pytest.mark.parametrize("kind", ["run", "qrels"])
@pytest.mark.parametrize("where", ["first", "late"])
def test_scan_names_the_file_of_a_json_lines_id_past_int64(tmp_path, kind, where):
    ids = list(range(_ROWS))
    ids[0 if where == "first" else -1] = _BIG
    path = _jsonl(tmp_path / "ids.jsonl", ids, kind)
    scan = fasteval.scan_run if kind == "run" else fasteval.scan_qrels
    with pytest.raises(InputError) as err:
        scan(path).collect()
    assert str(err.value) == (f"{path}, column 'doc_id': doc_id does not fit in a signed 64-bit "
                              f"integer: {_BIG} (give such ids as text)")
    with pytest.raises(InputError, match=r"ids\.jsonl, line \d+, column 'doc_id': doc_id does not fit"):
        (fasteval.read_run if kind == "run" else fasteval.read_qrels)(path)


def test_scan_names_the_file_of_an_unsigned_parquet_id_past_int64(tmp_path):
    path = tmp_path / "ids.parquet"
    pl.DataFrame({"query_id": pl.Series([_BIG], dtype=pl.UInt64), "doc_id": [1], "score": [1.0]}).write_parquet(path)
    with pytest.raises(InputError, match=r"ids\.parquet, column 'query_id': query_id does not fit"):
        fasteval.scan_run(str(path)).collect()


def test_wide_integer_ids_that_fit_stay_integers(tmp_path):
    path = _jsonl(tmp_path / "ok.jsonl", [2**63 - 1, 3, -(2**63)], "run")
    table = fasteval.scan_run(path).collect()
    assert table.schema["doc_id"] == pl.Int64 and table.get_column("doc_id").to_list() == [2**63 - 1, 3, -(2**63)]
    parquet = tmp_path / "ok.parquet"
    pl.DataFrame({"query_id": pl.Series([2**63 - 1], dtype=pl.UInt64), "doc_id": [1], "score": [1.0]}).write_parquet(parquet)
    assert fasteval.scan_run(str(parquet)).collect().rows() == [(2**63 - 1, 1, 1.0)]


def test_the_commands_name_the_file(tmp_path, capsys):
    run = _jsonl(tmp_path / "run.jsonl", [1, _BIG], "run")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("7 0 1 1\n")
    for argv in (["eval", str(qrels), run, "-m", "map"], ["fuse", run, run]):
        assert main(argv) == 2
        assert capsys.readouterr().err.startswith(f"fasteval: error: {run}, line 2, column 'doc_id': "), argv
