"""CSV/TSV table files (the judge, sas and evaluate_rag inputs) keep their fields as
written: ``007``, ``1.50`` and ``1e3`` are texts, where inferred types made them 7, 1.5 and
1000.0 (a question sent to the judge as ``7.0``, distinct answers matched exactly)."""

from __future__ import annotations

from fasteval.cli import judge_cmd
from fasteval.evaluators.rag import evaluate_rag
from fasteval.io.files import read_table_file


def test_csv_fields_are_read_as_written(tmp_path) -> None:
    p = tmp_path / "t.tsv"
    p.write_text("question\tanswer\n007\t1.50\n1e3\t-0\n")
    df = read_table_file(str(p))
    assert df.rows() == [("007", "1.50"), ("1e3", "-0")]
    assert read_table_file(str(p), text=False).get_column("answer").to_list() == [1.5, 0.0]


def test_judge_questions_keep_their_text(tmp_path) -> None:
    p = tmp_path / "judge.csv"
    p.write_text('question,contexts\n007,"[""1.50""]"\n1e3,x\n')
    df = judge_cmd._read_table(str(p))
    assert judge_cmd._strings(df, "question", str(p)) == ["007", "1e3"]
    assert judge_cmd._contexts(df, "contexts", str(p)) == [["1.50"], ["x"]]


def test_rag_exact_match_compares_the_written_answers(tmp_path) -> None:
    p = tmp_path / "rag.csv"
    p.write_text("question_id,a,g\nq1,007,7\nq2,1.50,1.5\nq3,1e3,1000\nq4,42,42\n")
    report = evaluate_rag(str(p), retrieved_col=None, ground_truth_col=None, answer_col="a", gold_col="g")
    assert report.per_question.get_column("exact_match").to_list() == [0, 0, 0, 1]
    assert report.scores == {"exact_match": 0.25}


def test_jsonl_table_files_refuse_a_repeated_key(tmp_path) -> None:
    import pytest

    from fasteval.errors import InputError

    p = tmp_path / "judge.jsonl"
    p.write_text('{"question": "a", "contexts": ["x"]}\n{"question": "b", "contexts": ["y"], "question": "c"}\n')
    with pytest.raises(InputError, match="the record repeats the key 'question'") as exc:  # polars kept "b"
        read_table_file(str(p))
    assert exc.value.line == 2
    p.write_text('{"question": "a", "contexts": ["x"]}\n{"question": "b", "contexts": []}\n')
    assert read_table_file(str(p)).rows() == [("a", ["x"]), ("b", [])]
