"""In-memory inputs (dicts, polars, pandas, arrow), column aliases, id types, formats, scans."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import polars as pl
import pytest

from fasteval.errors import DataWarning, InputError
from fasteval.io.readers import detect_format, read_qrels, read_run, scan_qrels, scan_run

RUN_ROWS = [("q1", "d1", 2.0), ("q1", "d2", 1.0), ("q2", "d1", 0.5)]


def test_dict_run_and_qrels() -> None:
    run = read_run({"q1": {"d1": 2.0, "d2": 1}, "q2": {"d1": 0.5}})
    assert run.rows() == RUN_ROWS
    assert run.schema == pl.Schema({"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64})
    qrels = read_qrels({"q1": {"d1": 1, "d2": 0}, "q2": {"d9": -1}})
    assert qrels.rows() == [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d9", -1)]
    assert qrels.schema["relevance"] == pl.Int64


def test_dict_int_ids_stay_int() -> None:
    run = read_run({1: {10: 0.5, 11: 0.25}, 2: {10: 1.0}})
    assert run.schema["query_id"] == pl.Int64 and run.schema["doc_id"] == pl.Int64
    assert run.rows() == [(1, 10, 0.5), (1, 11, 0.25), (2, 10, 1.0)]


def test_dict_mixed_id_types_become_text() -> None:
    run = read_run({1: {"a": 0.5, 7: 0.25}, "q2": {"b": 1.0}})
    assert run.schema["query_id"] == pl.String and run.schema["doc_id"] == pl.String
    assert run.rows() == [("1", "a", 0.5), ("1", "7", 0.25), ("q2", "b", 1.0)]


def test_numpy_int_keys() -> None:
    np = pytest.importorskip("numpy")
    run = read_run({np.int64(3): {np.int32(4): 1.0}})
    assert run.dtypes[:2] == [pl.Int64, pl.Int64] and run.row(0) == (3, 4, 1.0)


def test_polars_frames_and_aliases() -> None:
    df = pl.DataFrame({"qid": [1, 1, 2], "docno": [5, 6, 5], "sim": [0.1, 0.2, 0.3], "extra": ["x", "y", "z"]})
    out = read_run(df)
    assert out.columns == ["query_id", "doc_id", "score"]
    assert out.rows() == [(1, 5, 0.1), (1, 6, 0.2), (2, 5, 0.3)]
    assert read_run(df.lazy()).equals(out)
    # int32 / uint ids widen to Int64 without a string round-trip
    small = df.with_columns(pl.col("qid").cast(pl.Int32), pl.col("docno").cast(pl.UInt16))
    assert read_run(small).equals(out)


def test_run_optional_columns_kept() -> None:
    df = pl.DataFrame(
        {"Query": ["a", "a"], "PID": ["x", "y"], "Score": [1, 2], "rank": [2.0, 1.0], "system": ["s", "s"], "tag": ["t", "t"]}
    )
    out = read_run(df)
    assert out.columns == ["query_id", "doc_id", "score", "rank", "run_id", "tag"]
    assert out.schema["rank"] == pl.Int64 and out.get_column("rank").to_list() == [2, 1]
    assert out.schema["score"] == pl.Float64


def test_qrels_ranx_score_column_is_relevance() -> None:
    df = pl.DataFrame({"q_id": ["q"], "doc_id": ["d"], "score": [3]})
    assert read_qrels(df).row(0) == ("q", "d", 3)
    # a real relevance alias wins over 'score'
    df = df.with_columns(label=pl.lit(1))
    assert read_qrels(df).row(0) == ("q", "d", 1)


def test_explicit_column_names() -> None:
    df = pl.DataFrame({"a": ["q"], "b": ["d"], "c": [0.5], "query_id": ["wrong"]})
    assert read_run(df, query_col="a", doc_col="b", score_col="c").row(0) == ("q", "d", 0.5)


def test_query_text_column_does_not_shadow_query_id() -> None:
    df = pl.DataFrame({"query": ["what is x"], "query_id": [7], "doc_id": [1], "score": [1.0]})
    assert read_run(df).row(0) == (7, 1, 1.0)


def test_pyterrier_frame_docno_is_the_document_id() -> None:
    # PyTerrier's result frames: qid, docid (Terrier's internal number), docno, rank, score, query
    df = pl.DataFrame({"qid": ["1", "1"], "docid": [10, 11], "docno": ["D-a", "D-b"], "rank": [0, 1],
                       "score": [2.0, 1.0], "query": ["x", "x"]})
    assert read_run(df).select("query_id", "doc_id", "score").rows() == [("1", "D-a", 2.0), ("1", "D-b", 1.0)]
    qrels = pl.DataFrame({"qid": ["1"], "docno": ["D-b"], "docid": [11], "label": [1]})
    assert read_qrels(qrels).rows() == [("1", "D-b", 1)]


def test_pandas_and_arrow() -> None:
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    pdf = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"], "score": [2.0, 1.0, 0.5]})
    assert read_run(pdf).rows() == RUN_ROWS
    table = pa.Table.from_pandas(pdf)
    assert read_run(table).rows() == RUN_ROWS
    assert read_run(table.to_batches()[0]).rows() == RUN_ROWS
    ints = pd.DataFrame({"qid": [1, 2], "docid": [3, 4], "rel": [1, 0]})
    out = read_qrels(ints)
    assert out.dtypes == [pl.Int64] * 3 and out.rows() == [(1, 3, 1), (2, 4, 0)]
    assert read_qrels(pa.table({"qid": pa.array([1], pa.int32()), "docid": ["x"], "rel": [True]})).row(0) == (1, "x", 1)


def test_categorical_ids() -> None:
    df = pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]}).with_columns(pl.col("query_id").cast(pl.Categorical))
    assert read_run(df).schema["query_id"] == pl.String


def test_ranx_like_objects() -> None:
    # ranx's Qrels/Run expose to_dict(); importing ranx itself costs ~30 s of JIT, so a stand-in
    # class from a "ranx" module is used here.
    class Run:
        def __init__(self, d: dict) -> None:
            self.d = d

        def to_dict(self) -> dict:
            return self.d

    Run.__module__ = "ranx.data_structures.run"
    assert read_run(Run({"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 0.5}})).rows() == RUN_ROWS


def test_file_formats(tmp_path: Path) -> None:
    df = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"], "score": [2.0, 1.0, 0.5]})
    df.write_csv(tmp_path / "r.csv")
    df.write_csv(tmp_path / "r.tsv", separator="\t")
    df.write_ndjson(tmp_path / "r.jsonl")
    df.write_ndjson(tmp_path / "r.ndjson")
    df.write_parquet(tmp_path / "r.parquet")
    (tmp_path / "r.json").write_text(json.dumps({"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 0.5}}))
    (tmp_path / "records.json").write_text(json.dumps(df.to_dicts()))
    for name in ["r.csv", "r.tsv", "r.jsonl", "r.ndjson", "r.parquet", "r.json", "records.json"]:
        assert read_run(tmp_path / name).rows() == RUN_ROWS, name
    # unknown names are sniffed
    (tmp_path / "noext").write_bytes((tmp_path / "r.parquet").read_bytes())
    assert detect_format(tmp_path / "noext") == "parquet"
    (tmp_path / "lines").write_text((tmp_path / "r.jsonl").read_text())
    assert detect_format(tmp_path / "lines") == "jsonl"
    (tmp_path / "obj").write_text((tmp_path / "r.json").read_text())
    assert detect_format(tmp_path / "obj") == "json"
    assert detect_format(tmp_path / "whatever", format="trec") == "trec"
    # CSV/TSV with a header naming a query and a document column (any alias, any case,
    # quoted, after a BOM); a tab-separated TREC line is TREC
    for text, fmt in (("qid,docno,score\nq1,d1,2.0\n", "csv"), ("\ufeffQuery_ID\tDocNo\tsim\n", "tsv"),
                      ('"query_id","doc_id","score"\r\n', "csv"), ("q1\tQ0\td1\t1\t2.0\tr\n", "trec"),
                      ("query_id,score\nq1,2.0\n", "trec"), ("topic Q0 doc 1 2.0 r\n", "trec")):
        (tmp_path / "sniffed").write_text(text, encoding="utf-8")
        assert detect_format(tmp_path / "sniffed") == fmt, text
    (tmp_path / "csvrun").write_text((tmp_path / "r.csv").read_text())
    assert read_run(tmp_path / "csvrun").rows() == RUN_ROWS


def test_csv_ids_are_text(tmp_path: Path) -> None:
    p = tmp_path / "q.csv"
    p.write_text("qid,docno,rel\n001,007,1\n2,10,0\n")
    out = read_qrels(p)
    assert out.rows() == [("001", "007", 1), ("2", "10", 0)]


def test_jsonl_keeps_int_ids(tmp_path: Path) -> None:
    p = tmp_path / "q.jsonl"
    p.write_text('{"qid": 1, "docid": 7, "rel": 2}\n{"qid": 1, "docid": 8, "rel": 0}\n')
    out = read_qrels(p)
    assert out.dtypes == [pl.Int64] * 3 and out.rows() == [(1, 7, 2), (1, 8, 0)]


def test_trec_text_whitespace_and_comments(tmp_path: Path) -> None:
    text = (
        "# header comment\n"
        "   # indented comment (runs allow blanks before '#')\n"
        "q1\tQ0\td#1\t1\t  3.5\tA junk  more\n"
        "\n"
        "q1   Q0  d2 2 2.5e0 B\r\n"
        "q2 Q0 d1 1 -1 C"  # no final newline
    )
    p = tmp_path / "r.txt"
    p.write_text(text)
    out = read_run(p)
    assert out.rows() == [("q1", "d#1", 3.5, 1, "A"), ("q1", "d2", 2.5, 2, "B"), ("q2", "d1", -1.0, 1, "C")]


def test_trec_qrels_comment_rule(tmp_path: Path) -> None:
    p = tmp_path / "q.qrels"
    p.write_text("# one\n# two\n#three\nq1 0 d#1 1\n\nq1 0 #d2 0\n# end")
    assert read_qrels(p).rows() == [("q1", "d#1", 1), ("q1", "#d2", 0)]
    # in qrels only column 0 starts a comment: an indented '#' line is data (and malformed here)
    p.write_text("q1 0 d1 1\n  # not a comment\n")
    with pytest.raises(InputError) as info:
        read_qrels(p)
    assert info.value.line == 2


def test_trec_rank_not_integer_is_dropped(tmp_path: Path) -> None:
    p = tmp_path / "r.run"
    p.write_text("q1 Q0 d1 1.5 2.0 t\nq1 Q0 d2 x 1.0 t\n")
    with pytest.warns(DataWarning, match="rank"):
        out = read_run(p)
    assert out.columns == ["query_id", "doc_id", "score", "tag"]
    p.write_text("q1 Q0 d1 1.0 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    assert read_run(p).get_column("rank").to_list() == [1, 2]


def test_trec_numeric_ids_stay_text(tmp_path: Path) -> None:
    p = tmp_path / "r.run"
    p.write_text("10 Q0 007 1 2.0 t\n9 Q0 8 2 1.0 t\n")
    out = read_run(p)
    assert out.schema["query_id"] == pl.String and out.get_column("doc_id").to_list() == ["007", "8"]


def test_scan_formats(tmp_path: Path) -> None:
    df = pl.DataFrame({"qid": [1, 1, 2], "pid": [3, 4, 3], "rel": [1, 0, 2]})
    (tmp_path / "parts").mkdir()
    df.head(2).write_parquet(tmp_path / "parts" / "a.parquet")
    df.tail(1).write_parquet(tmp_path / "parts" / "b.parquet")
    expect = [(1, 3, 1), (1, 4, 0), (2, 3, 2)]
    assert sorted(scan_qrels(tmp_path / "parts").collect().rows()) == expect
    assert sorted(scan_qrels(str(tmp_path / "parts" / "*.parquet")).collect().rows()) == expect
    assert sorted(read_qrels(str(tmp_path / "parts" / "*.parquet")).rows()) == expect
    df.write_csv(tmp_path / "q.csv")
    assert scan_qrels(tmp_path / "q.csv").collect().rows() == [("1", "3", 1), ("1", "4", 0), ("2", "3", 2)]
    df.write_ndjson(tmp_path / "q.jsonl")
    assert scan_qrels(tmp_path / "q.jsonl").collect().rows() == expect
    (tmp_path / "r.run").write_text("# c\nq1 Q0 d1 1 2.5 t\n\nq1\tQ0  d2 2 1.5 t junk\n")
    lf = scan_run(tmp_path / "r.run")
    assert isinstance(lf, pl.LazyFrame)
    assert lf.collect().rows() == [("q1", "d1", 2.5, 1, "t"), ("q1", "d2", 1.5, 2, "t")]
    assert scan_run({"q": {"d": 1.0}}).collect().rows() == [("q", "d", 1.0)]


def test_keep_best_warning_counts(tmp_path: Path) -> None:
    p = tmp_path / "r.run"
    p.write_text("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5 t\nq1 Q0 d1 3 3.0 t\nq2 Q0 d1 1 1.0 t\nq1 Q0 d1 4 2.0 t\n")
    with pytest.raises(InputError) as info:
        read_run(p)
    assert info.value.line == 3 and "'d1'" in str(info.value)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = read_run(p, duplicates="keep_best")
    assert [str(w.message) for w in caught if issubclass(w.category, DataWarning)] == [
        f"{p}: dropped 2 duplicate (query_id, doc_id) row(s), keeping the highest score of each pair"
    ]
    assert out.select("query_id", "doc_id", "score").rows() == [("q1", "d2", 0.5), ("q1", "d1", 3.0), ("q2", "d1", 1.0)]


def test_duplicates_in_tables_and_qrels() -> None:
    df = pl.DataFrame({"query_id": [1, 1, 1, 2], "doc_id": [5, 6, 5, 5], "relevance": [0, 1, 2, 1]})
    with pytest.raises(InputError) as info:
        read_qrels(df)
    assert info.value.row == 2
    with pytest.warns(DataWarning, match="dropped 1 "):
        out = read_qrels(df, duplicates="keep_best")
    assert out.rows() == [(1, 6, 1), (1, 5, 2), (2, 5, 1)]
    assert read_qrels(df, duplicates="ignore").height == 4


def test_duplicates_per_run_id() -> None:
    df = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["d", "d"], "score": [1.0, 2.0], "run_id": ["a", "b"]})
    assert read_run(df).height == 2
    with pytest.raises(InputError):
        read_run(df.with_columns(run_id=pl.lit("a")))


def test_duplicate_line_number_after_comments_fast_path(tmp_path: Path) -> None:
    # regular single-space file: the fast parser reads it, the line is found only on error
    lines = ["# a", "#b", ""] + [f"q{i} Q0 d{i} 1 1.0 t" for i in range(50)] + ["", "q7 Q0 d7 2 0.5 t"]
    p = tmp_path / "r.run"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        read_run(p)
    assert info.value.line == len(lines)


@pytest.mark.parametrize(
    "raw",
    [
        b"q1 0 d1 1\r\nq1 0 d2 0\r\n",
        b"q1\t0\td1\t1\r\nq1\t0\td2\t0",
        b"\xef\xbb\xbfq1 0 d1 1\nq1 0 d2 0\n",
        b"q1 0 d1 1 \nq1 0 d2 0\n",
        b"q1  0 d1  1\n  q1 0\td2 0  \n",
    ],
)
def test_trec_qrels_line_endings_bom_and_spacing(tmp_path: Path, raw: bytes) -> None:
    p = tmp_path / "q.qrels"
    p.write_bytes(raw)
    assert read_qrels(p).rows() == [("q1", "d1", 1), ("q1", "d2", 0)]


def test_trec_not_utf8(tmp_path: Path) -> None:
    p = tmp_path / "r.run"
    p.write_bytes(b"q1 Q0 d\xe91 1 2.5 t\n")
    with pytest.raises(InputError, match="UTF-8"):
        read_run(p)


def test_streams(tmp_path: Path) -> None:
    import gzip
    import io

    text = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d1 1 0.5 t\n"
    assert read_run(io.StringIO(text)).select("query_id", "doc_id", "score").rows() == RUN_ROWS
    assert read_run(io.BytesIO(gzip.compress(text.encode()))).height == 3
    buf = io.BytesIO()
    pl.DataFrame(RUN_ROWS, schema=["query_id", "doc_id", "score"], orient="row").write_parquet(buf)
    assert read_run(io.BytesIO(buf.getvalue())).rows() == RUN_ROWS
    with open(tmp_path / "q.qrels", "w") as fh:
        fh.write("q1 0 d1 1\nq1 0 d1 2\n")
    with open(tmp_path / "q.qrels") as fh, pytest.raises(InputError) as info:
        read_qrels(fh)
    assert info.value.source == str(tmp_path / "q.qrels") and info.value.line == 2


def test_scan_gzip_and_json_fall_back_to_eager(tmp_path: Path) -> None:
    import gzip

    p = tmp_path / "r.run.gz"
    p.write_bytes(gzip.compress(b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d1 1 0.5 t\n"))
    assert scan_run(p).collect().select("query_id", "doc_id", "score").rows() == RUN_ROWS
    j = tmp_path / "q.json"
    j.write_text('{"q1": {"d1": 1}}')
    assert scan_qrels(j).collect().rows() == [("q1", "d1", 1)]


@pytest.mark.parametrize("scan", [False, True])
def test_csv_trailing_blank_lines_are_not_rows(tmp_path: Path, scan: bool) -> None:
    # editors and cat leave them; polars read each as a row of nulls ("query_id is null")
    read = (lambda p: scan_run(p).collect()) if scan else read_run
    for name, text in (("a.csv", "query_id,doc_id,score\nq1,d1,1\n\n"),
                       ("b.tsv", "query_id\tdoc_id\tscore\r\nq1\td1\t1\r\n\r\n\r\n")):
        (tmp_path / name).write_bytes(text.encode())
        assert read(tmp_path / name).rows() == [("q1", "d1", 1.0)]
    if scan:
        return  # a scan is checked when it is evaluated
    # a row of empty fields is data, a blank line between rows too: still refused, by line
    (tmp_path / "c.csv").write_text("query_id,doc_id,score\nq1,d1,1\n,,\n\n")
    (tmp_path / "d.csv").write_text("query_id,doc_id,score\nq1,d1,1\n\nq1,d2,0.5\n")
    for name in ("c.csv", "d.csv"):
        with pytest.raises(InputError, match=rf"{name}, line 3: no value in query_id, doc_id, score \(a "
                                             r"blank line, or empty fields only\)"):
            read(tmp_path / name)
