"""One run and one qrels table, written to every format the readers take, read back the same.

Hypothesis draws a qrels table and a run table with hostile ids (numeric-looking text such
as '007', '1e3', '-0', 'nan', 'NULL', ''; commas, quotes, spaces, tabs, line breaks; NFC
and NFD spellings; very long ids; integer ids in one table and their text spelling, or a
lookalike such as '007' for 7, in the other), scores at the edges of float64 (1e308,
-0.0, 5e-324, integers past 2**53) and grades at the edges of 32 bits. Each table is
written by this file (Python's csv quoting rules, ``json``, pyarrow; never fasteval's
writers) as TREC text, CSV, TSV, a JSON document (records, and ``{qid: {docid: value}}``),
JSON Lines and parquet, plain and gzipped, with a byte order mark, CR LF line endings or
no newline after the last line. For every format that can hold the tables:

* ``read_run``/``read_qrels`` give exactly the table written (text formats give text
  ids; JSON and parquet keep integer ids as integers), and ``scan_*`` gives what
  ``read_*`` gives;
* ``fasteval.evaluate`` on the tables read and ``fasteval eval`` on the files give the
  numbers ``evaluate`` gives on the tables in memory (integer ids match their decimal
  spelling and nothing else), also with the qrels in one format and the run in another.

Cases a format cannot hold are left out where it cannot hold them: TREC text has no
whitespace in ids, no empty ids and no query id starting with '#'; no text format holds
a NUL byte; CSV/TSV ids hold no line break (a quoted field spanning lines is refused:
it is what a stray quote that merges lines gives, and a CR is also a mixed line ending).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import re
import unicodedata
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.cli import main as cli_main
from fasteval.errors import InputError
from fasteval.io import read_qrels, read_run, scan_qrels, scan_run
from tests._profile import examples

pytestmark = pytest.mark.filterwarnings("ignore:.*so it has no results:fasteval.errors.DataWarning")

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

TEXT_IDS = [
    "007", "7", "1e3", "-0", "0", "0x1F", "nan", "inf", "-inf", "NULL", "NA", "N/A", "None",
    "null", "true", "", "+7", "7.0", " 7", "7 ", "9007199254740993", "18446744073709551616",
    "a,b", 'x"y', '"', "'", "a b", "a\tb", "a\nb", "a\rb", "\u00e9", "e\u0301", "\U0001F600",
    "#q", "q#1", "x" * 300, "y" * 5000, "\\", "a\x00b", "\u00a0", "\u2028", "[1]", "{q}",
]
INT_IDS = [7, 0, -5, 1000, 31, 2**53 + 1, 2**63 - 1, -(2**63)]
SCORES = [1.0, 0.5, -0.0, 0.0, 1e308, -1e308, 5e-324, -5e-324, 2.0**53, 2**53 + 1, 2**64 + 1, 3,
          -2, 1e-300, 0.1]
GRADES = [-1, 0, 1, 2, 3, 1000, 2**31 - 1, -(2**31)]
MEASURES = ["map", "ndcg", "P_5", "recip_rank", "num_ret", "num_rel", "num_rel_ret", "Rprec"]

FORMATS = {  # name -> (format, file suffix)
    "trec": ("trec", ".txt"), "trec.gz": ("trec", ".txt.gz"),
    "csv": ("csv", ".csv"), "csv.gz": ("csv", ".csv.gz"),
    "tsv": ("tsv", ".tsv"), "tsv.gz": ("tsv", ".tsv.gz"),
    "json": ("json", ".json"), "json.gz": ("json", ".json.gz"),
    "jsondict": ("jsondict", ".json"),
    "jsonl": ("jsonl", ".jsonl"), "jsonl.gz": ("jsonl", ".jsonl.gz"),
    "parquet": ("parquet", ".parquet"),
}
TYPED = {"json", "jsonl", "parquet"}  # integer ids stay integers


# ------------------------------------------------------------------------------ tables

def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@st.composite
def id_lists(draw, n: int) -> list:
    if draw(st.booleans()):
        return draw(st.lists(st.sampled_from(INT_IDS) | st.integers(-(2**63), 2**63 - 1), min_size=n, max_size=n))
    return draw(st.lists(st.sampled_from(TEXT_IDS) | st.text(max_size=6), min_size=n, max_size=n))


def _lookalike(draw, ids: list) -> list:
    """Some ids replaced by another id that looks like them ('007' for '7', NFD for NFC)."""
    out = list(ids)
    for i, v in enumerate(out):
        if draw(st.integers(0, 3)) == 0:
            t = str(v)
            nfd = unicodedata.normalize("NFD", t)
            out[i] = draw(st.sampled_from(
                ["0" + t, t + " ", "+" + t, t + ".0", t.upper() if t.upper() != t else t + "x",
                 nfd if nfd != t else "\u00e9" + t]))
    return out


def _as_int(ids: list) -> list:
    """Text ids spelling an integer as that integer ('007' -> 7: another id)."""
    return [int(v) if isinstance(v, str) and re.fullmatch(r"[+-]?[0-9]+", v) and -(2**63) <= int(v) < 2**63
            else v for v in ids]


def _pairs(draw, qids: list, dids: list) -> list[tuple]:
    idx = draw(st.lists(st.tuples(st.integers(0, len(qids) - 1), st.integers(0, len(dids) - 1)),
                        min_size=1, max_size=12))
    seen: dict = {}
    for i, j in idx:  # one row per (query, doc) pair: the readers refuse duplicates
        seen.setdefault((qids[i], dids[j]), None)
    return list(seen)


@st.composite
def tables(draw) -> tuple[list, list]:
    """(qrels rows, run rows): the run's ids are the qrels' ids, their text spelling,
    integers read from text ids, or lookalikes of them."""
    qids = draw(id_lists(draw(st.integers(1, 4))))
    dids = draw(id_lists(draw(st.integers(1, 6))))
    rq = qids if draw(st.booleans()) else [str(v) for v in qids]
    rd = dids if draw(st.booleans()) else [str(v) for v in dids]
    if draw(st.integers(0, 3)) == 0:
        rq = _as_int(rq)
    if draw(st.integers(0, 3)) == 0:
        rd = _as_int(rd)
    if draw(st.booleans()):
        rq = _lookalike(draw, rq)
    if draw(st.booleans()):
        rd = _lookalike(draw, rd)
    qpairs, rpairs = _pairs(draw, qids, dids), _pairs(draw, rq, rd)
    grades = draw(st.lists(st.sampled_from(GRADES), min_size=len(qpairs), max_size=len(qpairs)))
    scores = draw(st.lists(st.sampled_from(SCORES) | st.floats(allow_nan=False, allow_infinity=False),
                           min_size=len(rpairs), max_size=len(rpairs)))
    return ([(q, d, g) for (q, d), g in zip(qpairs, grades, strict=True)],
            [(q, d, s) for (q, d), s in zip(rpairs, scores, strict=True)])


styles = st.fixed_dictionaries({
    "bom": st.booleans(), "crlf": st.booleans(), "no_final_newline": st.booleans(),
    "ascii": st.booleans(),  # JSON: escape non-ASCII characters, or write them as UTF-8
    "trec_sep": st.sampled_from([" ", "\t", "  ", " \t"]),
    "parquet_ids": st.sampled_from(["string", "large_string", "dictionary", "narrow"]),
})


# ------------------------------------------------------------------------------ writers

def _column_is_int(rows: list, i: int) -> bool:
    return all(_is_int(r[i]) for r in rows)


def _number(v) -> str:
    return repr(v) if isinstance(v, float) else str(v)


def _quote(s: str, sep: str) -> str:
    if s == "" or any(c in s for c in (sep, '"', "\n", "\r")):
        return '"' + s.replace('"', '""') + '"'
    return s


def _text(lines: list[str], style: dict) -> bytes:
    eol = "\r\n" if style["crlf"] else "\n"
    data = (eol.join(lines) + ("" if style["no_final_newline"] else eol)).encode()
    return b"\xef\xbb\xbf" + data if style["bom"] else data


def _parquet(rows: list, value: str, style: dict) -> bytes:
    cols = {}
    for i, name in enumerate(("query_id", "doc_id")):
        vals = [r[i] for r in rows]
        kind = style["parquet_ids"]
        if _column_is_int(rows, i):
            t = pa.int64()
            if kind == "narrow" and all(-(2**31) <= v < 2**31 for v in vals):
                t = pa.int32()
            elif kind == "narrow" and all(v >= 0 for v in vals):
                t = pa.uint64()
            cols[name] = pa.array(vals, t)
        else:
            arr = pa.array([str(v) for v in vals], pa.large_string() if kind == "large_string" else pa.string())
            cols[name] = arr.dictionary_encode() if kind == "dictionary" else arr
    vals = [r[2] for r in rows]
    cols[value] = pa.array(vals, pa.int64()) if value == "relevance" else pa.array([float(v) for v in vals])
    buf = io.BytesIO()
    pq.write_table(pa.table(cols), buf)
    return buf.getvalue()


def write(fmt: str, kind: str, rows: list, style: dict) -> bytes:
    value = "relevance" if kind == "qrels" else "score"
    if fmt == "trec":
        sep = style["trec_sep"]
        if kind == "qrels":
            return _text([sep.join([str(q), "0", str(d), str(g)]) for q, d, g in rows], style)
        return _text([sep.join([str(q), "Q0", str(d), str(i + 1), _number(s), "tag"])
                      for i, (q, d, s) in enumerate(rows)], style)
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        lines = [sep.join(["query_id", "doc_id", value])]
        lines += [sep.join([_quote(str(q), sep), _quote(str(d), sep), _number(v)]) for q, d, v in rows]
        return _text(lines, style)
    if fmt == "jsonl":
        return _text([json.dumps({"query_id": q, "doc_id": d, value: v}, ensure_ascii=style["ascii"])
                      for q, d, v in rows], style)
    if fmt in ("json", "jsondict"):
        if fmt == "json":
            obj: object = [{"query_id": q, "doc_id": d, value: v} for q, d, v in rows]
        else:
            obj = {}
            for q, d, v in rows:
                obj.setdefault(str(q), {})[str(d)] = v
        data = json.dumps(obj, ensure_ascii=style["ascii"]).encode()
        return b"\xef\xbb\xbf" + data if style["bom"] else data
    return _parquet(rows, value, style)


def holds(fmt: str, rows: list) -> bool:
    ids = [str(v) for r in rows for v in r[:2]]
    if fmt == "trec":
        return all(s and not re.search(r"[ \t\n\r\x0b\x0c\x00]", s) for s in ids) and \
            not any(str(r[0]).startswith("#") for r in rows)
    if fmt in ("csv", "tsv"):
        return not any("\x00" in s or "\r" in s or "\n" in s for s in ids)
    return True


def expected(fmt: str, kind: str, rows: list) -> pl.DataFrame:
    """The table a reader must give: text ids unless the format keeps integers."""
    if fmt == "jsondict":  # rows grouped by query, in the order the queries first appear
        first: dict = {}
        for r in rows:
            first.setdefault(str(r[0]), len(first))
        rows = sorted(rows, key=lambda r: first[str(r[0])])
    out = []
    for i, name in enumerate(("query_id", "doc_id")):
        vals = [r[i] for r in rows]
        if fmt in TYPED and _column_is_int(rows, i):
            out.append(pl.Series(name, vals, pl.Int64))
        else:
            out.append(pl.Series(name, [str(v) for v in vals], pl.String))
    if kind == "qrels":
        out.append(pl.Series("relevance", [r[2] for r in rows], pl.Int64))
    else:
        out.append(pl.Series("score", [float(r[2]) for r in rows], pl.Float64))
    return pl.DataFrame(out)


# ------------------------------------------------------------------------------ checks

def _values(df: pl.DataFrame) -> dict:
    return {(str(q), m): v for q, m, v in df.select("query_id", "measure", "value").iter_rows()}


def _same_numbers(a: pl.Series, b: pl.Series) -> bool:
    """Equal, and zeros of the same sign."""
    x, y = a.to_list(), b.to_list()
    return x == y and [math.copysign(1, v) for v in x] == [math.copysign(1, v) for v in y]


def _check_read(path: Path, fmt: str, kind: str, rows: list) -> None:
    want = expected(fmt, kind, rows)
    reader, scanner = (read_qrels, scan_qrels) if kind == "qrels" else (read_run, scan_run)
    got = reader(path)
    assert got.select(want.columns).equals(want), (path.name, got.rows()[:5], want.rows()[:5])
    if kind == "run":
        assert _same_numbers(got.get_column("score"), want.get_column("score")), path.name
    assert scanner(path).collect().equals(got), path.name


def _check_scores(qrels: Path, run: Path, reference: dict, tmp: Path) -> None:
    got = _values(fasteval.evaluate(read_qrels(qrels), read_run(run), MEASURES))
    assert got == reference, (qrels.name, run.name)
    out = tmp / f"out-{qrels.name}-{run.name}.json"
    argv = ["eval", str(qrels), str(run), "-q", "-o", str(out), "--quiet", "--no-qrels-cache"]
    for m in MEASURES:
        argv += ["-m", m]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = cli_main(argv)
    assert rc == 0, err.getvalue()
    cli = {(str(r["query_id"]), r["measure"]): r["value"] for r in json.loads(out.read_text())}
    assert cli == reference, (qrels.name, run.name)


def check_formats(qrels: list, run: list, style: dict, names: list[str], cross: tuple[str, str], tmp: Path) -> None:
    reference = _values(fasteval.evaluate(expected("text", "qrels", qrels), expected("text", "run", run), MEASURES))
    written: dict[str, dict[str, Path]] = {}
    for name in names:
        fmt, suffix = FORMATS[name]
        if not (holds(fmt, qrels) and holds(fmt, run)):
            continue
        paths = {}
        for kind, rows in (("qrels", qrels), ("run", run)):
            data = write(fmt, kind, rows, style)
            path = tmp / f"{kind}-{name.replace('.', '_')}{suffix}"
            path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
            _check_read(path, fmt, kind, rows)
            paths[kind] = path
        written[name] = paths
        _check_scores(paths["qrels"], paths["run"], reference, tmp)
    a, b = cross
    if a in written and b in written and a != b:
        _check_scores(written[a]["qrels"], written[b]["run"], reference, tmp)


SETTINGS = settings(max_examples=examples(25), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
_STYLE = {"bom": False, "crlf": False, "no_final_newline": False, "ascii": True, "trec_sep": " ",
          "parquet_ids": "string"}
_HOSTILE = {"bom": True, "crlf": True, "no_final_newline": True, "ascii": False, "trec_sep": "\t",
            "parquet_ids": "dictionary"}


@SETTINGS
# qrels ids are integers, the run's are text: '7' matches 7, '007' and '+7' do not
@example(([(7, 7, 1), (7, 8, 0), (2**53 + 1, 7, 2)],
          [("7", "7", 1.0), ("007", "7", 2.0), ("+7", "8", 3.0), ("9007199254740993", "7", 1e308)]),
         _STYLE, list(FORMATS), ("parquet", "csv"))
# ids a reader might take for numbers, nulls or separators; NFC and NFD spellings
@example(([("NULL", "nan", 1), ("NULL", "inf", 0), ("NA", "-0", -1), ("NA", "1e3", 2**31 - 1),
           ("\u00e9", "0x1F", 3), ("e\u0301", "0x1F", 1)],
          [("NULL", "nan", -0.0), ("NULL", "inf", 5e-324), ("NA", "-0", 2**64 + 1), ("NA", "1e3", 2.0**53),
           ("\u00e9", "0x1F", -5e-324), ("e\u0301", "0x1F", 0.0)]),
         _HOSTILE, list(FORMATS), ("trec", "jsonl.gz"))
# ids only some formats hold: empty, commas, quotes, spaces, tabs, line breaks, long ones
@example(([("", "a,b", 1), ("q 1", 'x"y', 2), ("q\t1", "a\nb", 1), ("#q", "y" * 5000, 1)],
          [("", "a,b", 1.0), ("q 1", 'x"y', 2.0), ("q\t1", "a\nb", 0.5), ("#q", "y" * 5000, 1.0)]),
         _HOSTILE, list(FORMATS), ("csv", "json"))
@given(tables(), styles, st.lists(st.sampled_from(list(FORMATS)), min_size=2, max_size=4, unique=True),
       st.tuples(st.sampled_from(list(FORMATS)), st.sampled_from(list(FORMATS))))
def test_every_format_reads_and_scores_the_same(tmp_path_factory, data, style, names, cross) -> None:
    qrels, run = data
    check_formats(qrels, run, style, names, cross, tmp_path_factory.mktemp("formats"))


# ------------------------------------------------------------------------------ empty files

_EMPTY = {
    "run.csv": b"query_id,doc_id,score\n", "qrels.csv": b"query_id,doc_id,relevance\r\n",
    "run.tsv": b"\xef\xbb\xbfquery_id\tdoc_id\tscore", "qrels.tsv": b"query_id\tdoc_id\trelevance\n",
    "run.jsonl": b"", "qrels.jsonl": b"\n\n", "run.json": b"[]", "qrels.json": b"{}",
    "run.txt": b"", "qrels.txt": b"\xef\xbb\xbf\r\n",
}


@pytest.mark.parametrize("name", sorted(_EMPTY))
@pytest.mark.parametrize("gz", [False, True])
def test_a_file_without_rows_is_refused_in_one_line(tmp_path, capsys, name, gz) -> None:
    kind = name.split(".")[0]
    path = tmp_path / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(_EMPTY[name]) if gz else _EMPTY[name])
    other = tmp_path / ("run.txt" if kind == "qrels" else "qrels.txt")
    other.write_text("q Q0 d 1 1.0 t\n" if kind == "qrels" else "q 0 d 1\n")
    with pytest.raises(InputError, match="empty|no (run|qrels) lines") as exc:
        (read_qrels if kind == "qrels" else read_run)(path)
    assert str(path) in str(exc.value)
    qrels, run = (path, other) if kind == "qrels" else (other, path)
    assert cli_main(["eval", str(qrels), str(run), "-m", "map", "--quiet", "--no-qrels-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"fasteval: error: {path}"), err
