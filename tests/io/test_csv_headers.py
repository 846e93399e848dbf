"""CSV/TSV headers: a column the reader uses may be named once only (polars renames the
second ``score`` to ``score_duplicated_0`` and would read the first without a word);
repeated names of columns it does not use, such as trailing empty columns, are left alone."""

from __future__ import annotations

import pytest

from fasteval.errors import InputError
from fasteval.io.readers import read_qrels, read_run, scan_run


@pytest.mark.parametrize(("header", "column"), [
    ("query_id,doc_id,score,score", "score"),
    ("query_id,query_id,doc_id,score", "query_id"),
    ("qid,docno,sim,docno", "docno"),
])
@pytest.mark.parametrize("reader", [read_run, lambda p: scan_run(p).collect()])
def test_a_used_column_named_twice_is_refused(tmp_path, header, column, reader) -> None:
    p = tmp_path / "run.csv"
    p.write_text(header + "\nq1,d1,1,2\n")
    with pytest.raises(InputError) as info:
        reader(p)
    assert info.value.column == column
    assert f"the header has more than one column named {column!r}" in str(info.value)


def test_repeated_names_of_unused_columns_are_read(tmp_path) -> None:
    p = tmp_path / "q.tsv"
    p.write_text("query_id\tdoc_id\trelevance\tnote\tnote\t\t\nq1\td1\t2\ta\tb\t\t\n")
    assert read_qrels(p).rows() == [("q1", "d1", 2)]
    p = tmp_path / "r.csv"
    p.write_text("query_id,doc_id,score_duplicated_0,score\nq1,d1,5,1.5\n")  # a name polars might give
    assert read_run(p).rows() == [("q1", "d1", 1.5)]
