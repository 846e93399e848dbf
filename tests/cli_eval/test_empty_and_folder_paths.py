"""Paths that name no file: an output ending with a path separator (the user means a folder:
it was written as a file of that name), an empty output, and an empty input (an empty run
argument read the working directory as a directory of runs)."""

from __future__ import annotations

import pytest

import fasteval
from fasteval.cli import main
from fasteval.errors import InputError

QRELS = "1 0 a 1\n1 0 b 0\n"
RUN = "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n"


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path


@pytest.mark.parametrize("argv", [
    ["eval", "qrels", "run", "-m", "map", "-o", "{out}"],
    ["eval", "qrels", "run", "-m", "map", "-o", "x.csv", "--aggregate-out", "{out}"],
    ["fuse", "run", "run", "-o", "{out}"],
])
@pytest.mark.parametrize(("out", "message"), [
    ("new/", "output 'new/' ends with a path separator, naming a directory; expected a file "
             "path (or - for standard output)"),
    ("", "output '' is empty; expected a file path (or - for standard output)"),
])
def test_outputs_that_name_no_file_are_refused(files, capsys, argv, out, message):
    assert main([a.replace("{out}", out) for a in argv]) == 2
    assert capsys.readouterr().err.strip() == f"fasteval: error: {message}"
    assert not (files / "new").exists() and not (files / "x.csv").exists()


def test_write_table_refuses_a_folder_path(files):
    with pytest.raises(fasteval.errors.OutputError):
        fasteval.write_table(fasteval.read_run("run"), "new/", format="csv")
    assert not (files / "new").exists()


def test_an_empty_run_argument_is_not_the_working_directory(files, capsys):
    import polars as pl

    pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]}).write_parquet("other.parquet")
    assert main(["eval", "qrels", "", "-m", "map"]) == 2
    assert capsys.readouterr().err.strip() == (
        "fasteval: error: a run path is empty; expected a file, a directory of runs, a glob or - "
        "(standard input)")
    assert main(["trec-eval", "qrels", ""]) == 2
    assert capsys.readouterr().err.strip() == "fasteval: error: the path is empty; expected a file"
    with pytest.raises(InputError, match="^the path is empty; expected a file$"):
        fasteval.read_qrels("")
