"""Text that is not UTF-8 (UTF-16/UTF-32, NUL bytes) is refused with what it is and how to
convert it, not read as ids holding NUL bytes or named as old-Mac line endings."""

from __future__ import annotations

import gzip
import io
import json

import pytest

from fasteval.errors import InputError
from fasteval.io.readers import read_qrels, read_run, scan_run

TEXTS = {
    "r.run": "q1 Q0 d1 1 2.0 tag\r\nq1 Q0 d2 2 1.0 tag\r\n",
    "r.csv": "query_id,doc_id,score\r\nq1,d1,2.0\r\n",
    "r.jsonl": '{"query_id": "q1", "doc_id": "d1", "score": 2.0}\n',
}


@pytest.mark.parametrize("name", sorted(TEXTS))
@pytest.mark.parametrize("encoding, named", [("utf-16", "UTF-16"), ("utf-32", "UTF-32")])
def test_a_byte_order_mark_of_utf16_or_utf32_is_named(tmp_path, name, encoding, named):
    path = tmp_path / name
    path.write_bytes(TEXTS[name].encode(encoding))
    expected = (f"the file is {named} text (it starts with a {named} byte order mark); expected UTF-8 "
                f"(or ASCII); convert it first (for example: iconv -f {named} -t UTF-8 < in > out)")
    for read in (read_run, scan_run, lambda p: read_run(io.BytesIO(p.read_bytes()), format={"run": "trec"}.get(name[2:], name[2:]))):
        with pytest.raises(InputError) as exc:
            read(path)
        assert exc.value.message == expected


def test_utf16_without_a_mark_and_stray_nul_bytes_name_the_line(tmp_path):
    path = tmp_path / "q.qrels"
    path.write_bytes("q1 0 d1 1\n".encode("utf-16-le"))
    with pytest.raises(InputError, match=r"a NUL byte \(\\0\) in the text: expected UTF-8") as exc:
        read_qrels(path)
    assert exc.value.line == 1
    gz = tmp_path / "r.run.gz"
    gz.write_bytes(gzip.compress(b"q1 Q0 d1 1 2.0 tag\nq1 Q0 d2\x00 2 1.0 tag\n"))
    with pytest.raises(InputError, match="NUL byte") as exc:
        read_run(gz)
    assert (exc.value.source, exc.value.line) == (str(gz), 2)


def test_json_documents_in_utf16_still_read(tmp_path):
    path = tmp_path / "q.json"
    path.write_bytes(json.dumps({"q1": {"d1": 1}}).encode("utf-16"))
    assert read_qrels(path).rows() == [("q1", "d1", 1)]


@pytest.mark.parametrize(("name", "sep"), [("r.csv", b","), ("r.tsv", b"\t")])
def test_latin1_csv_names_the_line(tmp_path, name, sep) -> None:
    p = tmp_path / name
    p.write_bytes(sep.join([b"query_id", b"doc_id", b"score"]) + b"\nq1" + sep + b"a" + sep + b"1\n"
                  + b"q1" + sep + "caf\u00e9".encode("latin-1") + sep + b"2\n")
    with pytest.raises(InputError) as info:
        read_run(p)
    assert info.value.line == 3
    assert "not valid UTF-8 text" in str(info.value) and "iconv" in str(info.value)


def test_latin1_json_lines_names_the_line(tmp_path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_bytes(b'{"query_id": "q1", "doc_id": "a", "score": 1}\n'
                  + '{"query_id": "q1", "doc_id": "caf\u00e9", "score": 2}\n'.encode("latin-1"))
    with pytest.raises(InputError) as info:
        read_run(p)
    assert info.value.line == 2 and "not valid UTF-8 text" in str(info.value)
