"""Writers and readers agree: write (TREC text / parquet / CSV / TSV / JSON / JSONL) -> read -> same frame."""

from __future__ import annotations

import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fasteval.errors import InputError, OutputError
from fasteval.io.readers import read_qrels, read_run
from fasteval.io.writers import write_table
from tests._profile import examples

# Ids as TREC text allows them: no whitespace or control characters; '#' is fine inside.
_chars = st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cc", "Cs", "Cf", "Co", "Cn"))
text_ids = st.text(_chars, min_size=1, max_size=12)
query_ids = text_ids.filter(lambda s: not s.startswith("#"))
int_ids = st.integers(min_value=-(2**63), max_value=2**63 - 1)
scores = st.floats(allow_nan=False, allow_infinity=True, width=64)
grades = st.integers(min_value=-3, max_value=2**31 - 1)  # grades are 32-bit (wider ones are refused)


@st.composite
def tables(draw, qid, did, value, name: str) -> pl.DataFrame:
    pairs = draw(st.lists(st.tuples(qid, did), min_size=1, max_size=30, unique=True))
    values = draw(st.lists(value, min_size=len(pairs), max_size=len(pairs)))
    return pl.DataFrame(
        {
            "query_id": [p[0] for p in pairs],
            "doc_id": [p[1] for p in pairs],
            name: values,
        },
        schema_overrides={name: pl.Float64 if name == "score" else pl.Int64},
    )


SETTINGS = settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _roundtrip(df: pl.DataFrame, name: str, reader, **kw) -> pl.DataFrame:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / name
        write_table(df, path, **kw)
        return reader(path)


@SETTINGS
@example(pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [float("-inf")]}), "run.json")
@example(pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [float("inf")]}), "run.jsonl")
@given(tables(query_ids, text_ids, scores, "score"), st.sampled_from(["run.trec", "run.parquet", "run.csv", "run.tsv", "run.jsonl", "run.json", "run.trec.gz"]))
def test_run_text_ids_roundtrip(df: pl.DataFrame, name: str) -> None:
    if "json" in name:  # JSON has no infinities (the writer refuses them, tested below)
        df = df.filter(pl.col("score").is_finite())
        if df.height == 0:  # nothing left to write: the empty file is refused, clearly
            with pytest.raises(InputError, match="is empty"):
                _roundtrip(df, name, read_run)
            return
    out = _roundtrip(df, name, read_run)
    assert out.select("query_id", "doc_id", "score").equals(df)


@SETTINGS
@given(tables(query_ids, text_ids, grades, "relevance"), st.sampled_from(["q.qrels", "q.parquet", "q.csv", "q.jsonl"]))
def test_qrels_text_ids_roundtrip(df: pl.DataFrame, name: str) -> None:
    assert _roundtrip(df, name, read_qrels).equals(df)


@SETTINGS
@example(pl.DataFrame({"query_id": [0], "doc_id": [0], "score": [float("inf")]}), "run.jsonl")
@given(tables(int_ids, int_ids, scores, "score"), st.sampled_from(["run.parquet", "run.jsonl", "run.csv"]))
def test_run_int_ids_roundtrip(df: pl.DataFrame, name: str) -> None:
    if "json" in name:
        df = df.filter(pl.col("score").is_finite())
        if df.height == 0:  # nothing left to write: the empty file is refused, clearly
            with pytest.raises(InputError, match="the file is empty"):
                _roundtrip(df, name, read_run)
            return
    out = _roundtrip(df, name, read_run)
    if name.endswith(".csv"):  # CSV has no types: ids come back as text, digit for digit
        df = df.with_columns(pl.col("query_id", "doc_id").cast(pl.String))
    assert out.equals(df)


@SETTINGS
@given(tables(query_ids, text_ids, scores, "score"))
def test_trec_rank_is_trec_eval_order(df: pl.DataFrame) -> None:
    out = _roundtrip(df, "run.trec", read_run)
    # independent oracle: per query, sort by (score desc, doc id desc byte-wise)
    expect = {}
    for q in df.get_column("query_id").unique():
        rows = [r for r in df.rows() if r[0] == q]
        rows.sort(key=lambda r: (r[2], r[1].encode()), reverse=True)
        for i, r in enumerate(rows, 1):
            expect[(r[0], r[1])] = i
    assert {(r[0], r[1]): r[3] for r in out.rows()} == expect
    assert set(out.get_column("tag")) == {"fasteval"}


def test_writer_keeps_rank_and_tag(tmp_path: Path) -> None:
    df = pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [0.25], "rank": [7], "tag": ["bm25"]})
    write_table(df, tmp_path / "r.run")
    assert (tmp_path / "r.run").read_text() == "q Q0 d 7 0.25 bm25\n"
    assert read_run(tmp_path / "r.run").equals(df)


def test_writer_rejects_whitespace_ids_and_leaves_nothing(tmp_path: Path) -> None:
    df = pl.DataFrame({"query_id": ["q"], "doc_id": ["a b"], "score": [1.0]})
    with pytest.raises(InputError) as info:
        write_table(df, tmp_path / "r.trec")
    assert (info.value.row, info.value.column) == (0, "doc_id")
    assert list(tmp_path.iterdir()) == []


def test_writer_is_atomic_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out.parquet"
    target.write_bytes(b"old")

    class Boom(pl.DataFrame):
        def write_parquet(self, *a, **k):  # type: ignore[override]
            Path(a[0]).write_bytes(b"partial")
            raise OSError("disk full")

    with pytest.raises(OutputError, match="out.parquet' cannot be written: disk full"):  # names the output
        write_table(Boom({"a": [1]}), target)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.parquet"]


def test_write_formats_by_extension(tmp_path: Path) -> None:
    df = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d"], "relevance": [2]})
    write_table(df, tmp_path / "q.json")
    assert (tmp_path / "q.json").read_text().startswith("[{")
    write_table(df, tmp_path / "q.tsv")
    assert (tmp_path / "q.tsv").read_text() == "query_id\tdoc_id\trelevance\nq1\td\t2\n"
    write_table(df, tmp_path / "q.qrels")
    assert (tmp_path / "q.qrels").read_text() == "q1 0 d 2\n"
    write_table(df.lazy(), tmp_path / "x.out", format="jsonl")
    assert (tmp_path / "x.out").read_text() == '{"query_id":"q1","doc_id":"d","relevance":2}\n'
    from fasteval.errors import ParameterError

    with pytest.raises(ParameterError):
        write_table(df, tmp_path / "x.unknown")
    inf = pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [float("inf")]})
    with pytest.raises(InputError, match="infinite"):
        write_table(inf, tmp_path / "r.jsonl")


@pytest.mark.parametrize("name", ["res.json", "res.jsonl", "res.jsonl.gz"])
def test_json_refuses_nan_that_would_come_back_as_null(tmp_path: Path, name: str) -> None:
    # per-query results hold NaN (trec_eval's 0 / 0); JSON would write null, a missing value
    res = pl.DataFrame({"run_id": ["a", "a"], "query_id": ["q1", "q2"], "measure": ["m", "m"],
                        "value": [0.5, float("nan")]})
    with pytest.raises(InputError) as info:
        write_table(res, tmp_path / name)
    assert (info.value.row, info.value.column) == (1, "value")
    assert "JSON cannot hold nan" in str(info.value)
    assert list(tmp_path.iterdir()) == []  # nothing written, no temporary file left
    write_table(res, tmp_path / "res.csv")
    back = pl.read_csv(tmp_path / "res.csv")
    assert back.get_column("value").is_nan().to_list() == [False, True]


def test_trec_ranks_of_tied_integer_ids_follow_strcmp(tmp_path: Path) -> None:
    # trec_eval orders ties by doc id descending as text: "9" > "100" > "10" > "-5"
    run = pl.DataFrame({"query_id": [1] * 5, "doc_id": [9, 10, 100, -5, 7],
                        "score": [1.0, 1.0, 1.0, 1.0, 2.0]})
    write_table(run, tmp_path / "r.run")
    lines = (tmp_path / "r.run").read_text().splitlines()
    assert {ln.split()[2]: int(ln.split()[3]) for ln in lines} == {"7": 1, "9": 2, "100": 3, "10": 4, "-5": 5}
    import fasteval

    qrels = pl.DataFrame({"query_id": [1], "doc_id": [9], "relevance": [1]})
    back = read_run(tmp_path / "r.run")
    assert (fasteval.evaluate(qrels, back, ["P@2", "map"], tie_break="rank").get_column("value").to_list()
            == fasteval.evaluate(qrels, run, ["P@2", "map"]).get_column("value").to_list() == [0.5, 0.5])


def test_gzip_output_names_no_temporary_file(tmp_path) -> None:
    """The gzip header held the name of the temporary file the output was written to
    ('.run.trec.gz.<host>-<pid>-<random>.tmp'), which gunzip -N restores."""
    import gzip

    from fasteval.io.writers import write_table

    df = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.5]})
    for name in ("run.trec.gz", "run.csv.gz", "run.jsonl.gz"):
        out = write_table(df, tmp_path / name)
        head = out.read_bytes()
        assert head[:2] == b"\x1f\x8b" and not head[3] & 0x08  # FLG.FNAME unset
        assert b".tmp" not in head
        plain = write_table(df, tmp_path / name.removesuffix(".gz")).read_bytes()
        assert gzip.decompress(head) == plain


@pytest.mark.parametrize("name", ["t.csv", "t.tsv.gz"])
def test_nested_column_to_csv_is_an_input_error(tmp_path, name) -> None:
    df = pl.DataFrame({"query_id": ["q1"], "gold": [["a", "b"]]})
    with pytest.raises(InputError, match=r"column 'gold': (CSV|TSV) cannot hold nested values"):
        write_table(df, tmp_path / name)
    assert list(tmp_path.iterdir()) == []
    write_table(df, tmp_path / "t.jsonl")  # JSON holds lists
    assert pl.read_ndjson(tmp_path / "t.jsonl").equals(df)
