"""JSON inputs nested deeper than :data:`fasteval.io._json.MAX_DEPTH` end in one
:class:`InputError` naming the file and line, never ``RecursionError``: qrels and runs as
JSON Lines and JSON documents, the readers of ``eval``/``fuse``, ``judge --examples``, and
the depth scan agrees with a plain reading of brackets, strings and escapes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.cli import main
from fasteval.errors import InputError
from fasteval.io import _json
from tests._profile import examples

DEEP = 100_000


def _deep_record(score_key: str) -> str:
    return (f'{{"query_id": "q", "doc_id": "d2", "{score_key}": 1, "x": ' + "[" * DEEP + "]" * DEEP
            + "}\n")


@pytest.mark.parametrize("kind", ["qrels", "run"])
@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_deep_json_inputs_name_the_file_and_line(tmp_path, kind, fmt):
    key = "relevance" if kind == "qrels" else "score"
    first = f'{{"query_id": "q", "doc_id": "d1", "{key}": 1}}\n'
    path = tmp_path / f"{kind}.{fmt}"
    if fmt == "jsonl":
        path.write_text(first + _deep_record(key))
    else:
        path.write_text("[" + first.strip() + ",\n" + _deep_record(key).strip() + "]")
    reader = fasteval.read_qrels if kind == "qrels" else fasteval.read_run
    with pytest.raises(InputError) as info:
        reader(str(path))
    text = str(info.value)
    assert text.startswith(f"{path}, line 2: arrays and objects nested more than 128 levels deep")
    assert "expected at most 128" in text


def test_eval_and_fuse_refuse_a_deep_run_in_one_line(tmp_path, capsys):
    qrels = tmp_path / "q.jsonl"
    qrels.write_text('{"query_id": "q", "doc_id": "d1", "relevance": 1}\n')
    run = tmp_path / "r.jsonl"
    run.write_text('{"query_id": "q", "doc_id": "d1", "score": 1}\n' + _deep_record("score"))
    assert main(["eval", str(qrels), str(run), "-m", "map", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{run}, line 2: arrays and objects nested more than 128" in err and "Recursion" not in err
    out = tmp_path / "fused.txt"
    assert main(["fuse", str(run), str(run), "-o", str(out)]) == 2
    assert f"{run}, line 2: arrays and objects nested" in capsys.readouterr().err
    assert not out.exists()


def test_judge_examples_nested_too_deep(tmp_path, capsys):
    pytest.importorskip("httpx")
    src = tmp_path / "in.jsonl"
    src.write_text('{"question": "q", "contexts": ["c"], "answer": "a"}\n')
    ex = tmp_path / "examples.json"
    ex.write_text('[{"inputs": ' + "[" * DEEP + "]" * DEEP + "}]")
    rc = main(["judge", "faithfulness", str(src), "-o", str(tmp_path / "out.jsonl"), "--examples", str(ex),
               "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--api-key-env", "", "--no-progress"])
    assert rc == 2
    assert f"{ex}, line 1: arrays and objects nested more than 128" in capsys.readouterr().err


@pytest.mark.parametrize("reader", ["judge table", "compare results", "subtopic qrels"])
def test_other_json_readers_name_the_line_too(tmp_path, reader):
    """The readers that polars' JSON parser serves (it stops at 1,024 levels, naming a
    character) name the line of JSON nested too deep as the others do."""
    from fasteval.compare._data import load_results
    from fasteval.io.files import read_table_file
    from fasteval.io.subtopics import read_subtopic_qrels

    path = tmp_path / "in.jsonl"
    first = {"judge table": '{"question": "q", "contexts": ["c"], "answer": "a"}',
             "compare results": '{"run_id": "a", "query_id": "1", "measure": "map", "value": 0.5}',
             "subtopic qrels": '{"query_id": "1", "subtopic": "1", "doc_id": "d", "relevance": 1}'}[reader]
    path.write_text(first + "\n" + first[:-1] + ', "x": ' + "[" * DEEP + "]" * DEEP + "}\n")
    call = {"judge table": read_table_file, "compare results": lambda p: load_results([p]),
            "subtopic qrels": read_subtopic_qrels}[reader]
    with pytest.raises(InputError, match=r", line 2: arrays and objects nested more than 128 levels deep"):
        call(str(path))


def _naive_first_too_deep(text: bytes, limit: int, lines: bool) -> int | None:
    """The reading check_depth implements, one byte at a time: a quote after an even
    number of backslashes opens or closes a string; brackets outside strings nest."""
    level, inside, run = 0, False, 0
    for i, byte in enumerate(text):
        c = chr(byte)
        if lines and c == "\n":
            level, inside, run = 0, False, 0
            continue
        if c == '"' and run % 2 == 0:
            inside = not inside
        elif not inside and c in "[{":
            level += 1
            if level > limit:
                return i
        elif not inside and c in "]}":
            level -= 1
        run = run + 1 if c == "\\" else 0
    return None


@settings(max_examples=examples(400), deadline=None)
@given(st.binary(max_size=80).map(lambda b: bytes(b'[]{}"\\a\n['[x % 9] for x in b)),
       st.integers(0, 4), st.booleans())
def test_depth_scan_agrees_with_a_plain_reading(text, limit, lines):
    try:
        _json.check_depth(text, limit, lines=lines)
        got = None
    except _json.JsonDepthError as exc:
        got = exc.pos
    assert got == _naive_first_too_deep(text, limit, lines)


@settings(max_examples=examples(100), deadline=None)
@given(st.recursive(st.none() | st.integers() | st.text(alphabet='[]{}"\\ab'),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='[]{}"\\ab'),
                                                                                   inner, max_size=3),
                    max_leaves=30), st.integers(1, 6))
def test_depth_of_real_json_is_its_nesting(value, limit):
    import json

    def depth(v) -> int:
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        return 0

    text = json.dumps(value)
    if depth(value) > limit:
        with pytest.raises(_json.JsonDepthError):
            _json.loads(text, limit)
    else:
        assert _json.loads(text, limit) == value
