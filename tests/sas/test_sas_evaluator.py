"""SASEvaluator against haystack-ai's SASEvaluator with the same local models."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")

from fasteval.evaluators.sas import SASEvaluator  # noqa: E402
from tests.sas._texts import GOLDS, PREDS  # noqa: E402


def _haystack(model: str):
    hs = pytest.importorskip("haystack.components.evaluators")
    from haystack.utils import ComponentDevice

    ev = hs.SASEvaluator(model=model, device=ComponentDevice.from_str("cpu"))
    ev.warm_up()
    return ev


@pytest.mark.parametrize("fixture", ["tiny_bi", "tiny_cross", "tiny_cross_logits"])
def test_same_scores_as_haystack(fixture, request):
    model = request.getfixturevalue(fixture)
    theirs = _haystack(model).run(ground_truth_answers=GOLDS, predicted_answers=PREDS)
    ours = SASEvaluator(model=model, device="cpu").run(ground_truth_answers=GOLDS, predicted_answers=PREDS)
    np.testing.assert_allclose(ours["individual_scores"], theirs["individual_scores"], atol=1e-5)
    assert ours["score"] == pytest.approx(float(theirs["score"]), abs=1e-5)
    assert isinstance(ours["score"], float)
    assert all(isinstance(s, float) for s in ours["individual_scores"])
    if fixture == "tiny_cross_logits":  # Haystack's rule fired: every score is a probability
        assert all(0 < s < 1 for s in ours["individual_scores"])


def test_cross_encoder_rule_not_fired_when_no_score_exceeds_one(tiny_cross_logits):
    theirs = _haystack(tiny_cross_logits).run(ground_truth_answers=["rome"], predicted_answers=[""])
    ours = SASEvaluator(model=tiny_cross_logits, device="cpu").run(
        ground_truth_answers=["rome"], predicted_answers=[""]
    )
    assert theirs["individual_scores"][0] <= 1  # raw logit kept by both
    assert ours["individual_scores"][0] == pytest.approx(theirs["individual_scores"][0], abs=1e-5)


def test_same_errors_and_empty_result_as_haystack(tiny_bi):
    theirs = _haystack(tiny_bi)
    ours = SASEvaluator(model=tiny_bi, device="cpu")
    for gts, preds in ((["a", "b"], ["a"]), (["a", "b"], ["a", None])):
        with pytest.raises(ValueError) as hs_err:
            theirs.run(ground_truth_answers=gts, predicted_answers=preds)
        with pytest.raises(ValueError) as fe_err:
            ours.run(ground_truth_answers=gts, predicted_answers=preds)
        assert str(fe_err.value) == str(hs_err.value)
    assert ours.run(ground_truth_answers=[], predicted_answers=[]) == theirs.run(
        ground_truth_answers=[], predicted_answers=[]
    ) == {"score": 0.0, "individual_scores": [0.0]}


def test_serialization_round_trip(tiny_bi):
    ev = SASEvaluator(model=tiny_bi, batch_size=8, device="cpu")
    data = ev.to_dict()
    assert data["type"].endswith(".SASEvaluator")
    assert data["init_parameters"] == {
        "model": tiny_bi, "batch_size": 8, "device": {"type": "single", "device": "cpu"},
        "token": {"type": "env_var", "env_vars": ["HF_API_TOKEN", "HF_TOKEN"], "strict": False}}
    back = SASEvaluator.from_dict(data)
    assert back.to_dict() == data and back.device == "cpu"
    # the batch size in use is written when none was given (Haystack needs a number)
    assert SASEvaluator(model=tiny_bi, device="cpu").to_dict()["init_parameters"]["batch_size"] == 64
    out = back.run(ground_truth_answers=["paris"], predicted_answers=["paris"])
    assert out["individual_scores"][0] == pytest.approx(1.0, abs=1e-6)


def test_haystack_component_device_accepted(tiny_bi):
    pytest.importorskip("haystack")
    from haystack.utils import ComponentDevice

    ev = SASEvaluator(model=tiny_bi, device=ComponentDevice.from_str("cpu"))
    assert ev.device == "cpu"
    ev2 = SASEvaluator(model=tiny_bi, device=ComponentDevice.from_str("cpu").to_dict())
    assert ev2.device == "cpu"


def test_inside_a_haystack_pipeline(tiny_bi):
    pytest.importorskip("haystack")
    from haystack import Pipeline

    pipe = Pipeline()
    pipe.add_component("sas", SASEvaluator(model=tiny_bi, device="cpu"))
    out = pipe.run({"sas": {"ground_truth_answers": GOLDS[:2], "predicted_answers": PREDS[:2]}})
    direct = SASEvaluator(model=tiny_bi, device="cpu").run(ground_truth_answers=GOLDS[:2],
                                                           predicted_answers=PREDS[:2])
    np.testing.assert_allclose(out["sas"]["individual_scores"], direct["individual_scores"], atol=1e-7)


def test_evaluate_rag_sas_column_is_the_evaluators(tiny_bi):
    import polars as pl

    from fasteval.evaluators import evaluate_rag

    logs = pl.DataFrame({"answer": PREDS[:5], "gold": GOLDS[:5]})
    report = evaluate_rag(logs, question_col=None, retrieved_col=None, ground_truth_col=None,
                          answer_col="answer", gold_col="gold", sas=True,
                          sas_options={"model": tiny_bi, "device": "cpu"})
    direct = SASEvaluator(model=tiny_bi, device="cpu").run(ground_truth_answers=GOLDS[:5], predicted_answers=PREDS[:5])
    assert report.per_question.columns == ["exact_match", "sas"]
    np.testing.assert_allclose(report.per_question["sas"].to_numpy(), direct["individual_scores"], atol=1e-7)
    assert report.scores["sas"] == pytest.approx(direct["score"], abs=1e-7)


@pytest.mark.parametrize("name", ["/nonexistent/sas/model", "some-org/model-that-is-not-cached-here"])
def test_a_missing_model_is_an_os_error_as_in_haystack(name):
    from haystack.utils import ComponentDevice

    from fasteval.errors import FastevalError

    hs = pytest.importorskip("haystack.components.evaluators")
    with pytest.raises(OSError):
        hs.SASEvaluator(model=name, device=ComponentDevice.from_str("cpu")).run(["a"], ["b"])
    with pytest.raises(OSError, match="not found on this machine") as err:
        SASEvaluator(model=name, device="cpu").run(ground_truth_answers=["a"], predicted_answers=["b"])
    assert isinstance(err.value, FastevalError)  # the CLI's one-line error


@pytest.mark.parametrize("golds, preds", [
    ([["Paris", "the capital"]], ["Paris"]),  # several golds for one question
    ([[]], ["Paris"]),
    ([("Paris",)], ["Paris"]),
    (["Paris", ["Rome"]], ["Paris", "Rome"]),
    (["Paris"], [["Paris"]]),
    ([None], ["Paris"]),
])
def test_answers_that_are_not_strings_are_refused_as_in_haystack(tiny_bi, golds, preds):
    theirs = _haystack(tiny_bi)
    if golds != [["Paris", "the capital"]]:  # Haystack's encoder takes that one and scores nonsense
        with pytest.raises(ValueError):
            theirs.run(ground_truth_answers=golds, predicted_answers=preds)
    side = "ground_truth_answers" if not isinstance(golds[-1], str) else "predicted_answers"
    with pytest.raises(ValueError, match=f"{side}, row {len(golds) - 1}: expected a string"):
        SASEvaluator(model=tiny_bi, device="cpu").run(ground_truth_answers=golds, predicted_answers=preds)


@pytest.mark.parametrize(("golds", "preds", "side"), [
    (["paris", "a\ud800b"], ["paris", "rome"], "ground_truth_answers"),
    (["paris", "rome"], ["paris", "\udfffrome"], "predicted_answers"),
])
def test_a_text_utf8_cannot_hold_is_named_by_the_argument_and_row(tiny_bi, golds, preds, side):
    with pytest.raises(ValueError, match=rf"^{side}, row 1: text is not valid Unicode \(surrogates"):
        SASEvaluator(model=tiny_bi, device="cpu").run(ground_truth_answers=golds, predicted_answers=preds)


@pytest.mark.parametrize("include_prompt", [True, False])
def test_a_models_default_prompt_is_put_before_the_texts_as_in_haystack(tiny_bi, tmp_path, include_prompt):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(tiny_bi, device="cpu", prompts={"query": "query: the red cat ", "document": ""},
                                default_prompt_name="query")
    model[1].include_prompt = include_prompt  # the Pooling module: prompt tokens pooled or not
    model.save(str(tmp_path / "prompted"))
    prompted = str(tmp_path / "prompted")
    theirs = _haystack(prompted).run(ground_truth_answers=GOLDS, predicted_answers=PREDS)
    plain = _haystack(tiny_bi).run(ground_truth_answers=GOLDS, predicted_answers=PREDS)
    assert not np.allclose(theirs["individual_scores"], plain["individual_scores"], atol=1e-3)
    ours = SASEvaluator(model=prompted, device="cpu").run(ground_truth_answers=GOLDS, predicted_answers=PREDS)
    np.testing.assert_allclose(ours["individual_scores"], theirs["individual_scores"], atol=1e-5)


def test_a_models_truncate_dim_cuts_the_embeddings_as_in_haystack(tiny_bi, tmp_path):
    from sentence_transformers import SentenceTransformer

    SentenceTransformer(tiny_bi, device="cpu", truncate_dim=4).save(str(tmp_path / "cut"))
    cut = str(tmp_path / "cut")
    theirs = _haystack(cut).run(ground_truth_answers=GOLDS, predicted_answers=PREDS)
    full = _haystack(tiny_bi).run(ground_truth_answers=GOLDS, predicted_answers=PREDS)
    assert not np.allclose(theirs["individual_scores"], full["individual_scores"], atol=1e-3)
    ours = SASEvaluator(model=cut, device="cpu").run(ground_truth_answers=GOLDS, predicted_answers=PREDS)
    np.testing.assert_allclose(ours["individual_scores"], theirs["individual_scores"], atol=1e-5)


def test_a_model_folder_given_as_a_path_is_taken_as_in_haystack(tiny_bi):
    from pathlib import Path

    theirs = _haystack(Path(tiny_bi)).run(ground_truth_answers=GOLDS, predicted_answers=PREDS)
    ev = SASEvaluator(model=Path(tiny_bi), device="cpu")
    ours = ev.run(ground_truth_answers=GOLDS, predicted_answers=PREDS)
    np.testing.assert_allclose(ours["individual_scores"], theirs["individual_scores"], atol=1e-5)
    assert ev.to_dict()["init_parameters"]["model"] == tiny_bi  # a string, as a file can hold it


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"precision": "fp8"}, "precision must be one of auto, float32, float16, bfloat16, got 'fp8'"),
    ({"precision": None}, "precision must be one of auto, float32, float16, bfloat16, got None"),
    ({"cache_dir": 5}, "cache_dir must be a folder (str or PathLike) or None, got 5"),
])
def test_precision_and_cache_dir_are_checked_when_built(kwargs, message):
    from fasteval.errors import ParameterError

    with pytest.raises(ParameterError) as err:
        SASEvaluator(model="no-such-model-folder", device="cpu", **kwargs)
    assert str(err.value) == message


def test_a_cache_dir_given_as_a_path_is_saved_as_its_string(tmp_path):
    ev = SASEvaluator(model="some-model", device="cpu", cache_dir=tmp_path / "cache")
    assert ev.to_dict()["init_parameters"]["cache_dir"] == str(tmp_path / "cache")


@pytest.mark.parametrize("fixture", ["tiny_bi", "tiny_cross"])
@pytest.mark.parametrize(("golds", "preds", "side"), [
    ("paris", ["paris", "rome", "city", "a", "b"], "ground_truth_answers"),
    (["pa", "ri"], "ro", "predicted_answers"),
])
def test_a_single_string_for_a_list_is_refused_naming_the_argument(fixture, request, golds, preds, side):
    # Haystack's bi-encoder fails on it (IndexError) and its cross-encoder scores characters
    model = request.getfixturevalue(fixture)
    with pytest.raises(ValueError, match=rf"^{side}: expected a list of strings, got the string"):
        SASEvaluator(model=model, device="cpu").run(ground_truth_answers=golds, predicted_answers=preds)


@pytest.mark.parametrize("fixture", ["tiny_bi", "tiny_cross", "tiny_cross_logits"])
def test_random_hostile_answers_match_haystack(fixture, request):
    # empty and blank answers, NFC/NFD spellings, repeated texts, long answers cut at the
    # model's maximum length: Haystack's value types, and its values up to the last float32
    # bits that batching changes (see fasteval.evaluators.sas)
    import random

    from tests.sas.conftest import WORDS

    model = request.getfixturevalue(fixture)
    theirs, ours = _haystack(model), SASEvaluator(model=model, device="cpu")
    words = [*WORDS, "é", "e\u0301", "", " ", "ﬁ", "PARIS", "\x00", "日本"]
    rng = random.Random(11)

    def text():
        return " ".join(rng.choice(words) for _ in range(rng.randint(0, 80 if rng.random() < 0.1 else 6)))

    for _ in range(8):
        golds = [text() for _ in range(rng.randint(1, 30))]
        preds = [text() if rng.random() < 0.6 else rng.choice(golds) for _ in golds]
        hs = theirs.run(ground_truth_answers=golds, predicted_answers=preds)
        fe = ours.run(ground_truth_answers=golds, predicted_answers=preds)
        assert type(fe["score"]) is type(hs["score"]) is np.float64
        assert [type(s) for s in fe["individual_scores"]] == [type(s) for s in hs["individual_scores"]]
        np.testing.assert_allclose(fe["individual_scores"], hs["individual_scores"], rtol=0, atol=1e-6)
        same = [p == g for p, g in zip(preds, golds, strict=True)]
        if fixture == "tiny_bi":  # an answer against itself: cosine 1 up to rounding, in both
            assert all(abs(s - 1) < 1e-6 for s, eq in zip(fe["individual_scores"], same, strict=True) if eq)
