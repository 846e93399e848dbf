"""Old-Mac (CR-only) text is read line by line by every text reader, through the shared
``fix_line_endings``: ``compare --results`` (CSV, TSV, JSON Lines, trec_eval ``-q`` text)
and the ``sas``/``judge`` tables, as the run, qrels, prefs and subtopic readers read it
(before, a CSV header swallowed the data and a text file was one line)."""

from __future__ import annotations

import polars as pl
import pytest

from fasteval.compare._data import load_results
from fasteval.io.files import read_table_file

_RESULTS = pl.DataFrame({"run_id": ["A", "A", "B", "B"], "query_id": ["1", "2", "1", "2"],
                         "measure": ["map"] * 4, "value": [0.5, 0.25, 0.4, 0.2]})


def _cr(text: str) -> bytes:
    return text.replace("\n", "\r").encode()


@pytest.mark.parametrize("suffix", ["csv", "tsv", "jsonl"])
def test_compare_results_tables(tmp_path, suffix):
    text = {"csv": _RESULTS.write_csv(), "tsv": _RESULTS.write_csv(separator="\t"),
            "jsonl": _RESULTS.write_ndjson()}[suffix]
    path = tmp_path / f"pq.{suffix}"
    path.write_bytes(_cr(text))
    assert load_results(str(path)).sort("run_id", "query_id").rows() == _RESULTS.rows()


def test_compare_results_trec_eval_text(tmp_path):
    path = tmp_path / "A.trec"
    path.write_bytes(_cr("map\t1\t0.5\nmap\t2\t0.25\nrunid\tall\tA\nmap\tall\t0.375\n"))
    assert load_results(str(path)).rows() == _RESULTS.head(2).rows()


@pytest.mark.parametrize("suffix", ["csv", "tsv", "jsonl"])
def test_sas_and_judge_tables(tmp_path, suffix):
    table = pl.DataFrame({"question": ["q1", "q2"], "answer": ["a 1", "a2"]})
    text = {"csv": table.write_csv(), "tsv": table.write_csv(separator="\t"),
            "jsonl": table.write_ndjson()}[suffix]
    path = tmp_path / f"t.{suffix}"
    path.write_bytes(_cr(text))
    assert read_table_file(str(path)).rows() == table.rows()
