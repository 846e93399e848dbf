"""evaluate_rag: the table API against Haystack's evaluators on the same data, and its errors."""

from __future__ import annotations

import math
import random

import numpy as np
import polars as pl
import pytest

from fasteval.errors import InputError, ParameterError
from fasteval.evaluators import DocumentNDCGEvaluator, evaluate_rag
from fasteval.evaluators import rag as rag_module

KEYS = ["d1", "d2", "d3", "d4", "", None, "é", "long key " * 3, "d1 "]


def random_logs(seed: int, n: int = 80, *, ints: bool = False, gains: bool = True) -> pl.DataFrame:
    rng = random.Random(seed)
    pool = list(range(-3, 6)) + [None] if ints else KEYS
    rows = {"question_id": [], "retrieved": [], "ground_truth": [], "relevance": [], "answer": [], "gold": []}
    for q in range(n):
        gt = [rng.choice(pool) for _ in range(rng.randint(0, 5))]
        rows["question_id"].append(f"q{q}")
        rows["ground_truth"].append(gt)
        rows["retrieved"].append(None if rng.random() < 0.05 else [rng.choice(pool) for _ in range(rng.randint(0, 9))])
        kind = rng.random()
        if not gains or kind < 0.4:
            rows["relevance"].append([None] * len(gt))
        else:
            rows["relevance"].append([float(rng.choice([0, 1, 2, 3])) for _ in gt])
        rows["answer"].append(rng.choice(["Paris", "paris", "Rome", None, ""]))
        rows["gold"].append(rng.choice(["Paris", "Rome", None, ""]))
    return pl.DataFrame(rows, schema_overrides={"relevance": pl.List(pl.Float64)})


def haystack_results(logs: pl.DataFrame, *, field: str = "content", top_k: int | None = None) -> dict:
    """Haystack's evaluators on Documents built from the same rows (key -> field, gain -> score)."""
    hs = pytest.importorskip("haystack.components.evaluators")
    from haystack import Document

    def doc(key, gain=None):
        if field == "content":
            return Document(content=key, score=gain, id="x")
        return Document(content="x", meta={"k": key}, score=gain)

    gt = [[doc(k, g) for k, g in zip(keys, gains, strict=True)]
          for keys, gains in zip(logs["ground_truth"].to_list(), logs["relevance"].to_list(), strict=True)]
    ret = [[doc(k) for k in (keys or [])][:top_k] for keys in logs["retrieved"].to_list()]
    out = {}
    for name, ev in (
        ("recall_single_hit", hs.DocumentRecallEvaluator(mode="single_hit", document_comparison_field=field)),
        ("recall_multi_hit", hs.DocumentRecallEvaluator(mode="multi_hit", document_comparison_field=field)),
        ("mrr", hs.DocumentMRREvaluator(document_comparison_field=field)),
        ("map", hs.DocumentMAPEvaluator(document_comparison_field=field)),
        ("ndcg", hs.DocumentNDCGEvaluator(document_comparison_field=field)),
    ):
        out[name] = ev.run(ground_truth_documents=gt, retrieved_documents=ret)
    out["exact_match"] = hs.AnswerExactMatchEvaluator().run(
        ground_truth_answers=logs["gold"].to_list(), predicted_answers=logs["answer"].to_list())
    return out


def assert_matches(report, expected: dict) -> None:
    for name, exp in expected.items():
        got = report.per_question[name].to_list()
        assert len(got) == len(exp["individual_scores"])
        for a, b in zip(got, exp["individual_scores"], strict=True):
            assert math.isclose(a, b, rel_tol=0, abs_tol=1e-12), name
        assert math.isclose(report.scores[name], exp["score"], rel_tol=0, abs_tol=1e-12), name


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_string_keys_match_haystack(seed):
    logs = random_logs(seed)
    report = evaluate_rag(logs, relevance_col="relevance", answer_col="answer", gold_col="gold")
    assert report.per_question.columns == ["question_id", "recall_single_hit", "recall_multi_hit", "mrr",
                                           "map", "ndcg", "exact_match"]
    assert_matches(report, haystack_results(logs))


def test_integer_keys_match_haystack():
    logs = random_logs(4, ints=True)
    report = evaluate_rag(logs, relevance_col="relevance", answer_col="answer", gold_col="gold")
    assert_matches(report, haystack_results(logs, field="meta.k"))


@pytest.mark.parametrize("top_k", [1, 3])
def test_top_k_is_haystack_on_the_first_k(top_k):
    logs = random_logs(5)
    report = evaluate_rag(logs, relevance_col="relevance", top_k=top_k)
    expected = haystack_results(logs, top_k=top_k)
    expected.pop("exact_match")
    assert_matches(report, expected)


def test_binary_relevance_without_a_gain_column():
    logs = random_logs(6, gains=False)
    with_nulls = evaluate_rag(logs, relevance_col="relevance")
    without = evaluate_rag(logs.drop("relevance"))
    assert with_nulls.per_question.equals(without.per_question)


def test_forced_collisions_fall_back_to_exact_codes(monkeypatch):
    """Every key made equal: the byte checks reject the matches and exact codes take over,
    for polars' string views and for Arrow large strings alike."""
    logs = random_logs(7)
    expected = evaluate_rag(logs, relevance_col="relevance").per_question
    for name in ("arrow_text_keys", "view_text_keys"):
        real = getattr(rag_module, name)

        def colliding(*args, real=real):
            real(*args)
            args[-2][:] = 7  # keys

        monkeypatch.setattr(rag_module, name, colliding)
    for data in (logs, logs.to_arrow()):
        assert evaluate_rag(data, relevance_col="relevance").per_question.equals(expected)


def test_table_forms_and_slices(tmp_path):
    logs = random_logs(8, n=40)
    expected = evaluate_rag(logs, relevance_col="relevance").per_question
    path = tmp_path / "logs.parquet"
    logs.write_parquet(path)
    arrow = logs.to_arrow()
    for data in (path, str(path), arrow, logs.lazy(), logs.to_pandas(), logs.to_dict(as_series=False)):
        assert evaluate_rag(data, relevance_col="relevance").per_question.equals(expected)
    # a slice (Arrow offsets not starting at 0) and several chunks
    sliced = evaluate_rag(arrow.slice(10, 20), relevance_col="relevance").per_question
    assert sliced.equals(expected.slice(10, 20))
    chunked = pl.concat([logs.slice(0, 15), logs.slice(15)], rechunk=False)
    assert evaluate_rag(chunked, relevance_col="relevance").per_question.equals(expected)
    # string views and plain strings as well as large strings
    small = pl.DataFrame({"retrieved": [["a", "b"]], "ground_truth": [["b"]]})
    for compat in (pl.CompatLevel.oldest(), pl.CompatLevel.newest()):
        out = evaluate_rag(small.to_arrow(compat_level=compat), question_col=None)
        assert out.scores["mrr"] == 0.5


def test_ndcg_gains_as_the_evaluator_reads_scores():
    from fasteval.evaluators import Document

    logs = pl.DataFrame({"retrieved": [["France", "Germany", "Paris"]], "ground_truth": [["France", "Paris"]],
                         "relevance": [[1.0, 0.5]]})
    ev = DocumentNDCGEvaluator()
    direct = ev.run([[Document(content="France", score=1.0), Document(content="Paris", score=0.5)]],
                    [[Document(content=c) for c in ("France", "Germany", "Paris")]])
    report = evaluate_rag(logs, question_col=None, relevance_col="relevance", measures=["ndcg"])
    assert report.per_question["ndcg"].to_list() == direct["individual_scores"]
    assert report.per_question.columns == ["ndcg"]


def test_errors():
    logs = random_logs(9, n=10)
    mixed = pl.DataFrame({"retrieved": [["a"], ["b"]], "ground_truth": [["a", "b"], ["b"]],
                          "relevance": [[1.0, None], [2.0]]})
    with pytest.raises(InputError, match="row 0") as info:
        evaluate_rag(mixed, question_col=None, relevance_col="relevance")
    assert isinstance(info.value, ValueError)
    short = mixed.with_columns(pl.Series("relevance", [[1.0], [2.0]]))
    with pytest.raises(InputError, match="1 gains for 2 ground-truth keys"):
        evaluate_rag(short, question_col=None, relevance_col="relevance")
    with pytest.raises(ParameterError, match="columns"):
        evaluate_rag(logs, retrieved_col="nope")
    with pytest.raises(ParameterError, match="column of lists"):
        evaluate_rag(logs, retrieved_col="answer")
    with pytest.raises(ParameterError, match="same type"):
        evaluate_rag(pl.DataFrame({"retrieved": [[1]], "ground_truth": [["a"]]}), question_col=None)
    with pytest.raises(ParameterError, match="string or integer"):
        evaluate_rag(pl.DataFrame({"retrieved": [[1.5]], "ground_truth": [[1.5]]}), question_col=None)
    with pytest.raises(InputError, match="no rows"):
        evaluate_rag(logs.head(0))
    with pytest.raises(ParameterError, match="needs answer_col and gold_col"):
        evaluate_rag(logs, measures=["exact_match"])
    with pytest.raises(ParameterError, match="measures"):
        evaluate_rag(logs, measures=["precision"])
    with pytest.raises(ParameterError, match="top_k"):
        evaluate_rag(logs, top_k=0)
    with pytest.raises(ParameterError, match="data"):
        evaluate_rag(42)


def test_large_random_table_against_the_document_evaluators():
    """Thousands of questions, long lists, many duplicates: the same numbers as the
    Document-based evaluators (themselves checked against Haystack)."""
    from fasteval.evaluators import Document, evaluate_documents

    rng = np.random.default_rng(3)
    n = 3000
    gt = [[f"doc-{k}" for k in rng.integers(0, 60, rng.integers(0, 12))] for _ in range(n)]
    ret = [[f"doc-{k}" for k in rng.integers(0, 90, rng.integers(0, 40))] for _ in range(n)]
    logs = pl.DataFrame({"retrieved": ret, "ground_truth": gt})
    report = evaluate_rag(logs, question_col=None)
    expected = evaluate_documents([[Document(content=k) for k in q] for q in gt],
                                  [[Document(content=k) for k in q] for q in ret],
                                  ["recall_single_hit", "recall_multi_hit", "mrr", "map", "ndcg"])
    for name, exp in expected.items():
        assert report.per_question[name].to_list() == exp["individual_scores"], name


def test_lists_holding_only_nulls():
    # polars types such columns List(Null); pyarrow's cast left a child array shorter than
    # the offsets (an IndexError for gains, memory read past the end for keys)
    logs = pl.DataFrame({
        "retrieved": [[None, None, None], [None]],
        "ground_truth": [[None, None], [None]],
    })
    assert logs.schema["retrieved"] == pl.List(pl.Null)
    report = evaluate_rag(logs, question_col=None)
    assert report.per_question.rows() == [(0.0, 0.0, 0.0, 0.0, 0.0)] * 2
    half = pl.DataFrame({"retrieved": [["a"], ["b"]], "ground_truth": [[None, None], [None]]})
    assert evaluate_rag(half, question_col=None).scores == dict.fromkeys(
        ["recall_single_hit", "recall_multi_hit", "mrr", "map", "ndcg"], 0.0)
    # gains all null: binary relevance, as Haystack reads ground truth without scores
    graded = pl.DataFrame({
        "retrieved": [["b", "x", "a"], ["c"]],
        "ground_truth": [["a", "b"], ["c"]],
        "relevance": [[None, None], [None]],
    })
    assert graded.schema["relevance"] == pl.List(pl.Null)
    ndcg = evaluate_rag(graded, question_col=None, relevance_col="relevance").per_question["ndcg"]
    expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ndcg.to_list() == [pytest.approx(expected), 1.0]


def test_exact_match_compares_as_haystack():
    from haystack.components.evaluators import AnswerExactMatchEvaluator

    nan = float("nan")
    cases = [
        ([nan, 1.0, None, -0.0], [nan, 1.0, None, 0.0]),  # NaN is not equal to NaN
        (["1", "a", None], [1, 2, None]),  # text against numbers: never equal, no error
        ([b"a", b"b"], ["a", "c"]),  # bytes are not text
        ([True, False, 2], [1, 1, 2.0]),
        ([None, "x"], [None, None]),
    ]
    for answers, golds in cases:
        logs = pl.DataFrame({"answer": answers, "gold": golds}, strict=False)
        report = evaluate_rag(logs, question_col=None, retrieved_col=None, ground_truth_col=None,
                              answer_col="answer", gold_col="gold")
        theirs = AnswerExactMatchEvaluator().run(ground_truth_answers=golds, predicted_answers=answers)
        assert report.per_question["exact_match"].to_list() == theirs["individual_scores"], (answers, golds)
        assert report.scores["exact_match"] == theirs["score"]
    logs = pl.DataFrame({"answer": [nan, 1.0, None], "gold": [nan, 1.0, None]})
    report = evaluate_rag(logs, question_col=None, retrieved_col=None, ground_truth_col=None,
                          answer_col="answer", gold_col="gold")
    assert report.per_question["exact_match"].to_list() == [0, 1, 1]


def test_the_default_question_column_is_optional():
    logs = pl.DataFrame({"retrieved": [["a", "b"]], "ground_truth": [["b"]]})
    report = evaluate_rag(logs)
    assert report.per_question.columns == ["recall_single_hit", "recall_multi_hit", "mrr", "map", "ndcg"]
    assert report.scores["mrr"] == 0.5
    with_ids = logs.with_columns(question_id=pl.lit("q1"))
    assert evaluate_rag(with_ids).per_question.row(0)[0] == "q1"
    with pytest.raises(ParameterError, match="'qid'"):  # a name given is required
        evaluate_rag(logs, question_col="qid")
    # a question column named as a measure was overwritten by the measure's values
    with pytest.raises(ParameterError, match="question_col must be a name other than"):
        evaluate_rag(logs.with_columns(mrr=pl.lit("q1")), question_col="mrr")
    assert evaluate_rag(logs.with_columns(mrr=pl.lit("q1")), question_col="mrr", measures=["map"]).per_question.rows() == [("q1", 0.5)]


def test_list_views_categoricals_and_files_read_as_plain_lists(tmp_path):
    import pyarrow as pa

    retrieved = [["b", "a", "c"], ["x"], None, [], ["d", "d"]]
    truth = [["a", "b"], ["y"], ["z"], ["z"], ["d"]]
    expected = evaluate_rag(pl.DataFrame({"retrieved": retrieved, "ground_truth": truth}),
                            question_col=None).per_question.rows()
    assert [row[2] for row in expected] == [1.0, 0.0, 0.0, 0.0, 1.0]  # mrr
    # pyarrow's cast of a list view to a list gave wrong offsets (kernels read past the keys)
    for list_type in (pa.list_view, pa.large_list_view):
        table = pa.table({"retrieved": pa.array(retrieved, list_type(pa.string())),
                          "ground_truth": pa.array(truth, list_type(pa.string()))})
        assert evaluate_rag(table, question_col=None).per_question.rows() == expected
        assert evaluate_rag(table.slice(1), question_col=None).per_question.rows() == expected[1:]
    # list views whose lists are not in the order of their values
    values = pa.array(["d", "a", "b", "c", "x"])
    scrambled = pa.ListViewArray.from_arrays(pa.array([3, 0], pa.int32()), pa.array([2, 3], pa.int32()), values)
    assert scrambled.to_pylist() == [["c", "x"], ["d", "a", "b"]]
    table = pa.table({"retrieved": scrambled, "ground_truth": pa.array([["x"], ["b"]])})
    assert evaluate_rag(table, question_col=None).per_question["mrr"].to_list() == [0.5, 1 / 3]
    # categorical keys (dictionary-encoded)
    categorical = pl.DataFrame({"retrieved": retrieved, "ground_truth": truth},
                               schema={"retrieved": pl.List(pl.Categorical), "ground_truth": pl.List(pl.String)})
    assert evaluate_rag(categorical, question_col=None).per_question.rows() == expected
    # files: a parquet name holding glob characters, JSON Lines by its suffix
    frame = pl.DataFrame({"retrieved": retrieved, "ground_truth": truth})
    frame.write_parquet(tmp_path / "bm25[k1=0.9].parquet")
    frame.write_ndjson(tmp_path / "logs.jsonl")
    for name in ("bm25[k1=0.9].parquet", "logs.jsonl"):
        assert evaluate_rag(str(tmp_path / name), question_col=None).per_question.rows() == expected
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(InputError, match="bad.parquet"):
        evaluate_rag(tmp_path / "bad.parquet")


def test_unsigned_keys_and_gain_types():
    big = pl.DataFrame({"retrieved": [[2**64 - 1, 5, 2**63], [7]], "ground_truth": [[2**63], [2**64 - 1]]},
                       schema={"retrieved": pl.List(pl.UInt64), "ground_truth": pl.List(pl.UInt64)})
    assert evaluate_rag(big, question_col=None).per_question["mrr"].to_list() == [1 / 3, 0.0]
    signed = big.with_columns(ground_truth=pl.Series([[1], [2]], dtype=pl.List(pl.Int64)))
    with pytest.raises(ParameterError, match="64-bit signed range"):  # was pyarrow's ArrowInvalid
        evaluate_rag(signed, question_col=None)
    # boolean and decimal gains, as Haystack takes score=True / Decimal-free numbers
    logs = pl.DataFrame({"retrieved": [["a", "b"]], "ground_truth": [["b", "a"]], "rel": [[True, False]]})
    ndcg = evaluate_rag(logs, question_col=None, relevance_col="rel").scores["ndcg"]
    assert ndcg == pytest.approx(1 / math.log2(3))
    dec = logs.with_columns(rel=pl.Series([[2, 1]], dtype=pl.List(pl.Decimal(10, 2))))
    assert evaluate_rag(dec, question_col=None, relevance_col="rel").scores["ndcg"] == pytest.approx(
        (2 / math.log2(3) + 1) / (2 + 1 / math.log2(3)))
    with pytest.raises(ParameterError, match="one list of gains per question"):
        evaluate_rag(logs.with_columns(rel=pl.lit(1.0)), question_col=None, relevance_col="rel")


def test_tables_that_cannot_be_converted_are_input_errors():
    import pandas as pd

    # np.array([]) is float64: a column of string arrays then has no one Arrow type
    logs = pd.DataFrame({"retrieved": [np.array(["a", "b"]), np.array([])],
                         "ground_truth": [np.array(["a"]), np.array(["c"])]})
    with pytest.raises(InputError, match=r"data: cannot be converted.*dtype=object"):
        evaluate_rag(logs, question_col=None)
    logs["retrieved"] = [np.array(["b", "a"]), np.array([], dtype=object)]
    assert evaluate_rag(logs, question_col=None).per_question["mrr"].to_list() == [0.5, 0.0]
    with pytest.raises(InputError, match="height"):
        evaluate_rag({"retrieved": [["a"]], "ground_truth": [["a"], ["b"]]}, question_col=None)

