"""Errors that fusion finds in runs read from files name the file's line (comments, blank
lines and quoted CSV fields spanning lines counted), and a repeated document names its
repeat, as read_run does; runs given as pathlib paths are named by their path."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import fasteval
from fasteval.cli import main
from fasteval.errors import InputError

OTHER = "1 Q0 z 1 1.0 t\n"


@pytest.mark.parametrize(("name", "text", "line", "column", "message"), [
    ("dup.run", "# c\n1 Q0 a 1 2.0 t\n\n1 Q0 a 2 1.0 t\n", 4, "doc_id",
     "document 'a' appears more than once for query '1'"),
    ("dup.csv", 'query_id,doc_id,score,text\n1,a,1,x\n1,b,2,"two\nlines"\n1,a,3,y\n', 5, "doc_id",
     "document 'a' appears more than once for query '1'"),
    ("inf.run", "1 Q0 b 1 2.0 t\n\n1 Q0 a 2 -inf t\n", 3, "score",
     "score is -inf; fusion needs finite scores"),
])
def test_fusion_errors_name_the_line_of_the_file(tmp_path, capsys, name, text, line, column,
                                                 message):
    bad = tmp_path / name
    bad.write_text(text)
    other = tmp_path / "other.run"
    other.write_text(OTHER)
    for runs in ([bad, other], [str(bad), str(other)], {"x": bad, "y": other}):
        with pytest.raises(InputError) as exc:
            fasteval.fuse(runs)
        assert (exc.value.line, exc.value.row, exc.value.column) == (line, None, column)
        assert str(exc.value).endswith(f"line {line}, column '{column}': {message}")
    assert main(["fuse", str(bad), str(other), "-o", str(tmp_path / "out.trec")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"fasteval: error: {bad}, line {line}, column '{column}': {message}")
    assert not (tmp_path / "out.trec").exists()


def test_a_repeated_document_in_a_table_names_the_repeat_row():
    run = pl.DataFrame({"query_id": ["p", "q", "q", "q"], "doc_id": ["z", "x", "a", "x"],
                        "score": [3.0, 1.0, 2.0, 5.0]})
    with pytest.raises(InputError) as exc:
        fasteval.fuse([run, {"q": {"x": 1.0}}])
    assert str(exc.value) == ("run1, row 3, column 'doc_id': document 'x' appears more than "
                              "once for query 'q'")


def test_pathlib_runs_are_named_by_their_path(tmp_path):
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_text("1 Q0 x 1 1.0 t\n1 Q0 x 2 0.5 t\n")
    b.write_text(OTHER)
    with pytest.raises(InputError) as exc:
        fasteval.fuse([Path(a), Path(b)])
    assert exc.value.source == str(a)
