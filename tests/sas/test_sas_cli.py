"""``fasteval sas`` end to end with a tiny local model."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("sentence_transformers")
pl = pytest.importorskip("polars")

from fasteval.cli import main  # noqa: E402
from fasteval.sas import sas  # noqa: E402

DATA = {
    "qid": ["q1", "q2", "q3"],
    "answer": ["paris is the capital", "a red cat", "berlin"],
    "gold": ["the capital is paris|paris", "a blue dog", "the capital of germany is berlin"],
}


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
def test_cli_formats(fmt, tiny_bi, tmp_path, capsys):
    df = pl.DataFrame(DATA)
    src = tmp_path / f"in.{fmt}"
    {"csv": df.write_csv, "parquet": df.write_parquet, "jsonl": df.write_ndjson}[fmt](src)
    out = tmp_path / "out.parquet"
    rc = main(["sas", str(src), "--pred-col", "answer", "--gold-col", "gold", "--gold-sep", "|",
               "--model", tiny_bi, "--device", "cpu", "-o", str(out)])
    assert rc == 0
    got = pl.read_parquet(out)
    expected = sas(df.with_columns(pl.col("gold").str.split("|")), pred_col="answer",
                   gold_col="gold", model=tiny_bi, device="cpu")
    assert got["sas"].to_list() == pytest.approx(expected["sas"].to_list(), abs=1e-7)
    assert got["n_golds"].to_list() == [2, 1, 1]
    summary = capsys.readouterr().err
    assert json.loads(summary.split("fasteval sas: ", 1)[1])["unique_texts"] == 7


def test_cli_per_query_and_cache(tiny_bi, tmp_path, capsys):
    src = tmp_path / "in.parquet"
    pl.DataFrame(DATA).write_parquet(src)
    args = ["sas", str(src), "--pred-col", "answer", "--query-col", "qid", "--model", tiny_bi,
            "--device", "cpu", "--cache-dir", str(tmp_path / "cache"), "-o", str(tmp_path / "o.parquet")]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().err.split("fasteval sas: ", 1)[1])
    assert main(args) == 0
    second = json.loads(capsys.readouterr().err.split("fasteval sas: ", 1)[1])
    assert (first["cache_hits"], first["cache_misses"]) == (0, 6)
    assert (second["cache_hits"], second["cache_misses"]) == (6, 0)
    assert pl.read_parquet(tmp_path / "o.parquet").columns == ["qid", "sas", "sas_mean", "n_golds"]


def test_cli_user_errors_exit_2(tiny_bi, tmp_path, capsys):
    src = tmp_path / "in.csv"
    pl.DataFrame(DATA).write_csv(src)
    assert main(["sas", str(src), "--pred-col", "nope", "--model", tiny_bi, "--device", "cpu",
                 "-o", str(tmp_path / "o.parquet")]) == 2
    assert "column 'nope'" in capsys.readouterr().err
    assert main(["sas", str(tmp_path / "missing.csv")]) == 2
    assert main(["sas", str(src), "--model", str(tmp_path / "no-model"), "--pred-col", "answer",
                 "--device", "cpu"]) == 2
    assert "not found on this machine" in capsys.readouterr().err
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.parametrize("suffix, text, where", [
    # text files: the file's 1-based line (header counted, blank JSON lines and quoted
    # fields that span lines followed), as the run and qrels readers name it
    ("jsonl", '{"answer": "paris", "gold": "paris"}\n\n{"answer": null, "gold": "rome"}\n', "line 3"),
    ("csv", 'answer,gold\n"par\nis",paris\n,rome\n', "line 4"),
    ("tsv", "answer\tgold\nparis\tparis\n\trome\n", "line 3"),
    ("json", '[{"answer": "paris", "gold": "paris"}, {"answer": null, "gold": "rome"}]', "row 1"),
])
def test_cli_bad_rows_name_the_file(tiny_bi, tmp_path, capsys, suffix, text, where):
    src = tmp_path / f"in.{suffix}"
    src.write_text(text)
    assert main(["sas", str(src), "--pred-col", "answer", "--model", tiny_bi, "--device", "cpu",
                 "-o", str(tmp_path / "o.parquet")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"fasteval: error: {src}, {where}, column 'answer': prediction must not be None"]
    assert not (tmp_path / "o.parquet").exists()


def test_cli_csv_line_with_more_fields_than_the_header(tiny_bi, tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("answer,gold\nparis,paris\nrome,rome,extra\n")
    assert main(["sas", str(src), "--pred-col", "answer", "--model", tiny_bi, "--device", "cpu",
                 "-o", str(tmp_path / "o.parquet")]) == 2
    assert capsys.readouterr().err == (f"fasteval: error: {src}, line 3: 3 fields where the header has 2; "
                                       "expected one field per header column\n")


@pytest.mark.parametrize("name", ["o.csv", "o.jsonl", "o.txt", "o.trec", "o.parquet.gz"])
def test_cli_output_named_for_another_format_is_refused(tmp_path, capsys, name):
    # sas writes parquet only: parquet bytes under a CSV (or text) name would be misread
    src = tmp_path / "in.csv"
    pl.DataFrame(DATA).write_csv(src)
    assert main(["sas", str(src), "--pred-col", "answer", "-o", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fasteval: error: -o/--output must be a ") and err.endswith(f"got {str(tmp_path / name)!r}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]
