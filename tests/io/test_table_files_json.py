"""JSON table files of the sas and judge commands: a column mixing lists (or objects) with
single values is refused naming both lines (polars read it as text, each list as its JSON
spelling, so a gold list was scored as one string); text that only looks like a list, and
columns of one kind, read as before."""

from __future__ import annotations

import gzip
import json

import pytest

from fasteval.cli import main
from fasteval.errors import InputError
from fasteval.io.files import read_table_file

MIXED = ('{"prediction": "Paris", "gold": ["Paris is", "the capital"]}\n\n'
         '{"prediction": "a", "gold": "x"}\n')


@pytest.mark.parametrize("name", ["in.jsonl", "in.jsonl.gz"])
def test_lists_and_single_values_in_one_column_are_refused(tmp_path, name):
    path = tmp_path / name
    data = MIXED.encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    with pytest.raises(InputError) as exc:
        read_table_file(str(path))
    assert (exc.value.line, exc.value.column) == (3, "gold")
    assert "gold holds a list or object at line 1 and a single value at line 3" in str(exc.value)


def test_sas_refuses_the_mixed_column_before_loading_a_model(tmp_path, capsys):
    path = tmp_path / "in.jsonl"
    path.write_text(MIXED)
    assert main(["sas", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"fasteval: error: {path}, line 3, column 'gold': gold holds a list")
    assert not (tmp_path / "in.sas.parquet").exists()


def test_text_that_looks_like_a_list_and_one_kind_columns_still_read(tmp_path):
    texts = tmp_path / "texts.jsonl"
    texts.write_text('{"gold": "[citation] x"}\n{"gold": "y"}\n')
    assert read_table_file(str(texts)).get_column("gold").to_list() == ["[citation] x", "y"]
    lists = tmp_path / "lists.json"
    lists.write_text(json.dumps([{"gold": ["a", "b"]}, {"gold": ["y"]}]))
    assert read_table_file(str(lists)).get_column("gold").to_list() == [["a", "b"], ["y"]]
