"""JSON outputs (a JSON array) end with a newline, as every text output does: on standard
output the shell's prompt no longer runs on after the closing bracket, and line-based tools
(wc -l, tail, diff) see a whole last line."""

from __future__ import annotations

import json

import polars as pl

from fasteval.cli import main
from fasteval.io.writers import write_table
from tests._data import SHIPPED_TREC

QRELS, RUN = str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test")


def test_write_table_json_ends_with_a_newline(tmp_path):
    df = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d"], "score": [1.5]})
    for name in ("t.json", "t.json.gz"):
        path = write_table(df, tmp_path / name)
        if name.endswith(".gz"):
            import gzip

            data = gzip.decompress(path.read_bytes())
        else:
            data = path.read_bytes()
        assert data.endswith(b"]\n") and json.loads(data) == df.to_dicts()


def test_eval_json_to_stdout_and_files_ends_with_a_newline(tmp_path, capfd):
    assert main(["eval", QRELS, RUN, "-m", "map", "--format", "json", "--quiet"]) == 0
    out = capfd.readouterr().out
    assert out.endswith("]\n") and json.loads(out)[0]["measure"] == "map"
    per_query, agg = tmp_path / "q.json", tmp_path / "a.json"
    assert main(["eval", QRELS, RUN, "-m", "map", "-q", "-o", str(per_query), "--aggregate-out",
                 str(agg), "--quiet"]) == 0
    for path in (per_query, agg):
        data = path.read_bytes()
        assert data.endswith(b"]\n") and json.loads(data)


def test_fuse_json_to_stdout_ends_with_a_newline(capfd):
    assert main(["fuse", RUN, RUN, "--format", "json"]) == 0
    out = capfd.readouterr().out
    assert out.endswith("]\n") and len(json.loads(out)) == 1500
