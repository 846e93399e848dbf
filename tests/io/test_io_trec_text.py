"""TREC text parsing against an independent oracle (Python splitting on ASCII whitespace)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fasteval.errors import InputError
from fasteval.io import trec
from fasteval.io.readers import read_qrels, read_run
from tests._profile import examples

_tok = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF, blacklist_characters="#"), min_size=1, max_size=8)
_doc = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=1, max_size=8)  # '#' allowed inside
_sep = st.sampled_from([" ", "\t", "  ", " \t ", "\t\t", " \x0b ", "\x0c"])
_pad = st.sampled_from(["", " ", "\t", "  ", "\r"])
_ASCII_WS = re.compile(r"[ \t\r\x0b\x0c]+")


def _oracle(text: str, kind: str) -> list[tuple]:
    rows = []
    for line in text.split("\n"):
        stripped = _ASCII_WS.sub(" ", line).strip(" ")
        if not stripped:
            continue
        if (line if kind == "qrels" else stripped).startswith("#"):
            continue
        f = stripped.split(" ")
        if kind == "run":
            rows.append((f[0], f[2], float(f[4]), int(f[3]), f[5]))
        else:
            rows.append((f[0], f[2], int(f[3])))
    return rows


@st.composite
def run_text(draw) -> str:
    n = draw(st.integers(1, 25))
    lines = []
    for i in range(n):
        if draw(st.booleans()) and draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "  ", "# note", "  # indented", "#x y z"])))
        fields = [
            draw(_tok), "Q0", f"{draw(_doc)}{i}", str(draw(st.integers(0, 10**6))),
            repr(draw(st.floats(allow_nan=False, width=64))), draw(_tok),
        ]
        fields += draw(st.lists(_tok, max_size=2))
        seps = [draw(_sep) for _ in fields[1:]]
        body = fields[0] + "".join(s + f for s, f in zip(seps, fields[1:], strict=True))
        lines.append(draw(_pad) + body + draw(_pad))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


@settings(max_examples=examples(60), deadline=None)
@given(run_text(), st.booleans())
@example("\r0 Q0 00 0 0.0 0", False)  # a CR before the first field is whitespace, not the id's
@example("q\tQ0 d 1 1.0 t\r\n\rq2 Q0 e\r2 1.0 t", True)
def test_run_text_matches_oracle(text: str, as_bytes: bool) -> None:
    raw = text.encode()
    if as_bytes:
        df, _ = trec.read_trec(raw, "run", source="x")
    else:
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "r.run"
            p.write_bytes(raw)
            df, _ = trec.read_trec(str(p), "run", source=str(p))
    assert df.rows() == _oracle(text, "run")


@st.composite
def regular_run_text(draw) -> str:
    """Single-character separators only: the fast CSV path's home ground."""
    sep = draw(st.sampled_from([" ", "\t"]))
    n = draw(st.integers(1, 30))
    lines = []
    for i in range(n):
        fields = [draw(_tok), "Q0", f"d{i}", str(i + 1), repr(draw(st.floats(-1e6, 1e6))), draw(_tok)]
        lines.append(sep.join(fields))
        if draw(st.integers(0, 9)) == 0:
            lines.append("# comment " + draw(_doc))
    return "\n".join(lines)


@settings(max_examples=examples(60), deadline=None)
@given(regular_run_text())
def test_fast_path_matches_oracle_and_careful_path(text: str) -> None:
    raw = text.encode()
    sep = trec._sniff_separator(raw, "run")
    fast = trec._read_fast(raw, "run", sep) if sep else None
    careful, _ = trec._read_careful(raw, "run", "x")
    assert careful.rows() == _oracle(text, "run")
    if fast is not None:
        assert fast.equals(careful)


def test_vertical_tab_and_form_feed_separate_fields(tmp_path: Path) -> None:
    p = tmp_path / "q.qrels"
    p.write_bytes(b"q1\x0b0\x0cd1 1\nq1 0 d2\x0b\x0b2\n")
    assert read_qrels(p).rows() == [("q1", "d1", 1), ("q1", "d2", 2)]


def test_unicode_space_is_not_a_separator(tmp_path: Path) -> None:
    # trec_eval splits on C-locale isspace only; a no-break space stays inside the docno
    p = tmp_path / "q.qrels"
    p.write_text("q1 0 d\u00a01 1\n")
    assert read_qrels(p).get_column("doc_id").to_list() == ["d\u00a01"]


def test_careful_path_error_lines(tmp_path: Path) -> None:
    p = tmp_path / "r.run"
    p.write_text("q1  Q0 d1 1 1.0 t\n\n# c\nq1\tQ0 d2 2 2.0 t\nq1 Q0  d1 3 0.5 t\n")
    with pytest.raises(InputError) as info:
        read_run(p)
    assert info.value.line == 5 and "duplicate" in str(info.value)
    p.write_text("q1  Q0 d1 1 1.0 t\n\n# c\nq1\tQ0 d2 2 x t\n")
    with pytest.raises(InputError) as info:
        read_run(p)
    assert (info.value.line, info.value.column) == (4, "score")


def test_large_ids_and_many_lines(tmp_path: Path) -> None:
    n = 20_000
    ids = [f"msmarco_v2.1_doc_{i}#{i % 7}_{i * 31}" for i in range(n)]
    text = "".join(f"{i % 97} Q0 {d}  {i} {i / 3!r} run{i % 3}\n" for i, d in enumerate(ids))
    p = tmp_path / "r.run"
    p.write_text(text)
    df = read_run(p)
    assert df.get_column("doc_id").to_list() == ids
    assert df.get_column("score").to_list() == [i / 3 for i in range(n)]
    assert df.get_column("tag").to_list()[-1] == f"run{(n - 1) % 3}"
    assert df.schema["rank"] == pl.Int64


@settings(max_examples=examples(30), deadline=None)
@given(run_text())
def test_scan_run_matches_oracle(text: str) -> None:
    from fasteval.io.readers import scan_run

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "r.run"
        p.write_bytes(text.encode())
        assert scan_run(p).collect().rows() == _oracle(text, "run")
