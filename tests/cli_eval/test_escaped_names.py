"""Names in text outputs: a run id, query id, measure label or file name holding a control
character (a terminal escape sequence, a line break, a C1 control, U+2028) or a lone
surrogate is printed as an escape (``fasteval._words.one_line``, the one helper of every
text output), never raw: it could retitle or clear the terminal, or forge rows of a table.
Ordinary ids print as they are (trec-eval stays byte-identical to trec_eval there)."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from fasteval._words import one_line
from fasteval.cli import main

#: what a terminal acts on, or what breaks a line: nothing of it may reach a text output
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
ESC_Q = "q\x1b[2J1"  # a query id that clears the screen
TITLE = "t\x1b]0;pwned\x07"  # a run tag that retitles the terminal


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"{ESC_Q} 0 d1 1\nq2 0 d2 1\nq2 0 d3 0\n")
    run = tmp_path / "r\x1b[2J.txt"  # a file name (the run's name) with an escape sequence
    run.write_text(f"{ESC_Q} Q0 d1 1 3.0 {TITLE}\nq2 Q0 d3 1 2.0 {TITLE}\nq2 Q0 d2 2 1.0 {TITLE}\n")
    table = tmp_path / "runs.parquet"  # run ids with a line break, a C1 CSI and U+2028
    pl.DataFrame({"run_id": ["a\nmap  9.9999"] * 2 + ["b\x9b2J\u2028x"] * 2,
                  "query_id": [ESC_Q, "q2"] * 2, "doc_id": ["d1", "d2", "d3", "d2"],
                  "score": [1.0, 1.0, 1.0, 1.0]}).write_parquet(table)
    return {"qrels": str(qrels), "run": str(run), "table": str(table)}


def _lines(text: str) -> list[str]:
    assert not RAW.search(text), f"a raw control character in {text!r}"
    return text.splitlines()


def test_one_line_escapes_controls_and_surrogates_only() -> None:
    assert one_line("a\x1b[2J\nb\tc\x9b\u2028\udce9\ud83d") == "a\\x1b[2J\\nb\\tc\\x9b\\u2028\\xe9\\ud83d"
    for plain in ("q 1", "é\\n", "ｑ１", "d\u00a0x", "🙂"):  # printed as they are
        assert one_line(plain) == plain


def test_eval_table_escapes_run_and_query_ids(files, capsys) -> None:
    assert main(["eval", files["qrels"], files["run"], files["table"], "-m", "map",
                 "-m", "P.5", "--quiet"]) == 0
    lines = _lines(capsys.readouterr().out)
    assert len(lines) == 3  # the header, map, P_5: no forged row
    assert lines[0].split() == ["measure", "r\\x1b[2J.txt", "a\\nmap", "9.9999",
                                "b\\x9b2J\\u2028x"]


def test_eval_per_query_table_and_trec_lines_escape_ids(files, capsys) -> None:
    assert main(["eval", files["qrels"], files["run"], "-m", "map", "-q", "--quiet"]) == 0
    lines = _lines(capsys.readouterr().out)
    assert len(lines) == 3 and lines[1].split()[:2] == ["r\\x1b[2J.txt", "q\\x1b[2J1"]
    assert main(["eval", files["qrels"], files["run"], "-m", "map", "-q", "--quiet",
                 "--format", "trec"]) == 0
    lines = _lines(capsys.readouterr().out)
    assert [line.split("\t")[1] for line in lines] == ["q\\x1b[2J1", "q2", "all", "all"]
    assert lines[2].split("\t")[2] == "r\\x1b[2J.txt"


def test_trec_eval_escapes_ids_and_tag_only(files, capsys) -> None:
    assert main(["trec-eval", "-q", "-m", "official", files["qrels"], files["run"]]) == 0
    lines = _lines(capsys.readouterr().out)
    assert all(len(line.split("\t")) == 3 for line in lines)
    assert {line.split("\t")[1] for line in lines} == {"q\\x1b[2J1", "q2", "all"}
    assert "runid                 \tall\tt\\x1b]0;pwned\\x07" in lines
    assert "map                   \tq2\t0.5000" in lines  # ordinary ids: trec_eval's bytes


def test_trec_eval_stop_message_escapes_the_query(tmp_path: Path, capsys) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"{ESC_Q} 0 d1 1\nq2 0 d2 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q2 Q0 d2 1 1.0 t\n")
    assert main(["trec-eval", str(qrels), str(run)]) == 4
    err = capsys.readouterr().err
    assert _lines(err) == ["trec_eval: result qid 'q\\x1b[2J1' not found in qrels"]


def test_power_table_escapes_measure_labels(tmp_path: Path, capsys) -> None:
    results = tmp_path / "pilot.parquet"
    pl.DataFrame({"run_id": ["a"] * 3 + ["b"] * 3, "query_id": ["1", "2", "3"] * 2,
                  "measure": ["map\x1b[2J\nP_5 x"] * 6,
                  "value": [0.1, 0.5, 0.3, 0.2, 0.4, 0.6]}).write_parquet(results)
    assert main(["power", "--results", str(results), "--min-diff", "0.1"]) == 0
    lines = _lines(capsys.readouterr().out)
    assert len(lines) == 2 and lines[1].startswith("map\\x1b[2J\\nP_5 x  ")


def test_errors_and_notes_are_one_escaped_line(tmp_path: Path, capsys, monkeypatch) -> None:
    from fasteval.progress import QUIET_ENV, note

    monkeypatch.delenv(QUIET_ENV, raising=False)  # the suite silences notes (tests/conftest.py)

    qrels = tmp_path / "q\x1b]0;x\x07.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "run\x1b]0;x\x07\n.txt"
    run.write_text("q1 Q0 d1 1 x t\n")  # a score that is no number
    assert main(["eval", str(qrels), str(run), "--quiet"]) == 2
    (line,) = _lines(capsys.readouterr().err)
    assert line.startswith("fasteval: error: ") and "run\\x1b]0;x\\x07\\n.txt" in line
    note("fasteval: \x1b[2Jrun\udce9\n")
    assert capsys.readouterr().err == "fasteval: \\x1b[2Jrun\\xe9\\n\n"


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex", "html"])
def test_compare_reports_escape_names(fmt: str) -> None:
    from fasteval.compare import compare
    from fasteval.compare.report import render

    runs = {name: pl.DataFrame({"query_id": [1, 2, 3], "map\x1b]0;t\x07": values})
            for name, values in (("a\x1b[2J", [0.1, 0.5, 0.3]), ("b\x9b\u2028", [0.2, 0.4, 0.6]))}
    out = render(compare(runs, tests="t", ci=None), fmt)
    assert not RAW.search(out.replace("\n", "")), out
    assert "x1b" in out and "x9b" in out
