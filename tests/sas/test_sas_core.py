"""fasteval.sas against straightforward per-row computations with the same tiny models."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")

from fasteval.errors import FastevalError, InputError, ParameterError  # noqa: E402
from fasteval.sas import sas  # noqa: E402
from fasteval.sas.model import load_model  # noqa: E402
from tests.sas._texts import GOLDS, PREDS  # noqa: E402


def _cos_oracle(model, a: str, b: str) -> float:
    """One text at a time through the model, cosine in float64."""
    ea = model.encode([a], convert_to_numpy=True)[0].astype(np.float64)
    eb = model.encode([b], convert_to_numpy=True)[0].astype(np.float64)
    return float(ea @ eb / (np.linalg.norm(ea) * np.linalg.norm(eb)))


class ForwardCounter:
    """Wrap a model's forward: records how many rows (texts or pairs) each call carried."""

    def __init__(self, module):
        self.rows: list[int] = []
        self.module = module
        self.orig = module.forward

        def forward(features, *a, **k):
            self.rows.append(int(features["input_ids"].shape[0]))
            return self.orig(features, *a, **k)

        module.forward = forward

    def restore(self):
        self.module.forward = self.orig


def test_bi_encoder_equals_per_row_and_embeds_each_text_once(tiny_bi):
    lm = load_model(tiny_bi, device="cpu")
    counter = ForwardCounter(lm.model)
    try:
        out, stats = sas(PREDS, GOLDS, model=tiny_bi, device="cpu", batch_size=2, return_stats=True)
    finally:
        counter.restore()
    n_unique = len(set(PREDS) | set(GOLDS))
    assert sum(counter.rows) == n_unique  # every distinct text through the model exactly once
    assert stats.n_unique_texts == n_unique and stats.n_encoded == n_unique
    assert stats.n_batches == len(counter.rows) == -(-n_unique // 2)
    expected = [_cos_oracle(lm.model, p, g) for p, g in zip(PREDS, GOLDS, strict=True)]
    np.testing.assert_allclose(out["sas"].to_numpy(), expected, atol=1e-5)
    np.testing.assert_allclose(out["sas_mean"].to_numpy(), expected, atol=1e-5)
    assert out["n_golds"].to_list() == [1] * len(PREDS)
    assert abs(out["sas"][3] - 1.0) < 1e-6  # identical texts
    assert len(set(np.round(expected, 4))) > 3  # the tiny model does tell texts apart


def test_several_golds_max_and_mean(tiny_bi):
    lm = load_model(tiny_bi, device="cpu")
    golds = [["the tower is in paris", "a blue dog", "rome"], "a red cat", [], ["berlin"]]
    preds = ["the eiffel tower is in paris", "a blue dog", "paris", "the capital of germany is berlin"]
    out = sas(preds, golds, model=tiny_bi, device="cpu")
    for i, (p, gs) in enumerate(zip(preds, golds, strict=True)):
        gs = [gs] if isinstance(gs, str) else gs
        vals = [_cos_oracle(lm.model, p, g) for g in gs]
        assert out["n_golds"][i] == len(vals)
        if vals:
            assert out["sas"][i] == pytest.approx(max(vals), abs=1e-5)
            assert out["sas_mean"][i] == pytest.approx(float(np.mean(vals)), abs=1e-5)
        else:
            assert out["sas"][i] is None and out["sas_mean"][i] is None


def test_pairs_table_embeddings_fixed_size_list(tiny_bi):
    import pyarrow as pa

    tab = sas(PREDS, GOLDS, model=tiny_bi, device="cpu", per="pair", embeddings=True, output="arrow")
    assert tab.column_names == ["row", "prediction", "gold", "score", "pred_embedding", "gold_embedding"]
    emb_type = tab.schema.field("pred_embedding").type
    assert pa.types.is_fixed_size_list(emb_type) and emb_type.value_type == pa.float32()
    assert emb_type.list_size == 16
    pe = np.stack(tab.column("pred_embedding").to_numpy(zero_copy_only=False))
    ge = np.stack(tab.column("gold_embedding").to_numpy(zero_copy_only=False))
    np.testing.assert_allclose(np.linalg.norm(pe, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose((pe * ge).sum(1), tab.column("score").to_numpy(), atol=1e-6)
    # equal texts share one vector
    np.testing.assert_array_equal(pe[0], pe[3])
    np.testing.assert_array_equal(pe[3], ge[3])


def test_query_col_groups_pairs_in_first_appearance_order(tiny_bi):
    import polars as pl

    lm = load_model(tiny_bi, device="cpu")
    df = pl.DataFrame({
        "qid": ["q2", "q2", "q1", "q3"],
        "prediction": ["paris", "paris", "a red cat", "rome"],
        "gold": [["the capital of france is paris", "paris is big"], ["france"], ["a cat"], []],
    })
    out = sas(df, model=tiny_bi, device="cpu", query_col="qid")
    assert out.columns == ["qid", "sas", "sas_mean", "n_golds"]
    assert out["qid"].to_list() == ["q2", "q1", "q3"]
    q2 = [_cos_oracle(lm.model, "paris", g) for g in ["the capital of france is paris", "paris is big", "france"]]
    assert out["sas"][0] == pytest.approx(max(q2), abs=1e-5)
    assert out["sas_mean"][0] == pytest.approx(np.mean(q2), abs=1e-5)
    assert out["n_golds"].to_list() == [3, 1, 0]
    assert out["sas"][2] is None


def test_table_inputs_keep_columns(tiny_bi):
    import pandas as pd
    import pyarrow as pa

    data = {"id": [1, 2], "answer": ["paris", "rome"], "truth": ["paris", "berlin"]}
    by_dict = sas(data, pred_col="answer", gold_col="truth", model=tiny_bi, device="cpu")
    by_pandas = sas(pd.DataFrame(data), pred_col="answer", gold_col="truth", model=tiny_bi, device="cpu")
    by_arrow = sas(pa.table(data), pred_col="answer", gold_col="truth", model=tiny_bi, device="cpu")
    assert by_dict.columns == ["id", "answer", "truth", "sas", "sas_mean", "n_golds"]
    assert by_dict.equals(by_pandas) and by_dict.equals(by_arrow)
    assert by_dict["sas"][0] == pytest.approx(1.0, abs=1e-6)


def test_cross_encoder_scores_each_distinct_pair_once(tiny_cross):
    from sentence_transformers import CrossEncoder

    lm = load_model(tiny_cross, device="cpu")
    assert lm.cross_encoder
    preds = PREDS + PREDS[:3]
    golds = GOLDS + GOLDS[:3]
    counter = ForwardCounter(lm.model)
    try:
        out, stats = sas(preds, golds, model=tiny_cross, device="cpu", per="pair", return_stats=True)
    finally:
        counter.restore()
    n_pairs = len(set(zip(preds, golds, strict=True)))
    assert sum(counter.rows) == n_pairs == stats.n_unique_pairs
    ref = CrossEncoder(tiny_cross, device="cpu")
    expected = [float(ref.predict([(p, g)])[0]) for p, g in zip(preds, golds, strict=True)]
    np.testing.assert_allclose(out["score"].to_numpy(), expected, atol=1e-5)


def test_sigmoid_modes(tiny_cross_logits):
    from sentence_transformers import CrossEncoder

    ref = CrossEncoder(tiny_cross_logits, device="cpu")
    raw = np.array([float(ref.predict([(p, g)])[0]) for p, g in zip(PREDS, GOLDS, strict=True)])
    assert (raw > 1).any() and (raw <= 1).any()  # the fixture mixes both
    kw = {"model": tiny_cross_logits, "device": "cpu", "per": "pair"}
    never = sas(PREDS, GOLDS, sigmoid="never", **kw)["score"].to_numpy()
    always = sas(PREDS, GOLDS, sigmoid="always", **kw)["score"].to_numpy()
    batch = sas(PREDS, GOLDS, sigmoid="batch", **kw)["score"].to_numpy()
    np.testing.assert_allclose(never, raw, atol=1e-5)
    np.testing.assert_allclose(always, 1 / (1 + np.exp(-raw)), atol=1e-6)
    np.testing.assert_allclose(batch, always, atol=1e-6)  # some score > 1: all pass through sigmoid
    low = [i for i in range(len(raw)) if raw[i] <= 1]
    low_batch = sas([PREDS[i] for i in low], [GOLDS[i] for i in low], sigmoid="batch", **kw)
    np.testing.assert_allclose(low_batch["score"].to_numpy(), raw[low], atol=1e-5)  # none > 1: raw
    # "always" does not depend on the rest of the batch
    one = sas([PREDS[low[0]]], [GOLDS[low[0]]], sigmoid="always", **kw)["score"][0]
    assert one == pytest.approx(always[low[0]], abs=1e-6)


def test_embedding_cache_hits_and_misses(tiny_bi, tmp_path):
    lm = load_model(tiny_bi, device="cpu")
    first, s1 = sas(PREDS, GOLDS, model=tiny_bi, device="cpu", cache_dir=tmp_path, return_stats=True)
    n_unique = len(set(PREDS) | set(GOLDS))
    assert (s1.cache_hits, s1.cache_misses) == (0, n_unique)
    counter = ForwardCounter(lm.model)
    try:
        again, s2 = sas(PREDS, GOLDS, model=tiny_bi, device="cpu", cache_dir=tmp_path, return_stats=True)
    finally:
        counter.restore()
    assert (s2.cache_hits, s2.cache_misses) == (n_unique, 0) and counter.rows == []
    assert again.equals(first)
    new_preds = ["a small dog", "paris"]  # one new text, one cached
    counter = ForwardCounter(lm.model)
    try:
        out, s3 = sas(new_preds, [GOLDS[0], GOLDS[1]], model=tiny_bi, device="cpu", cache_dir=tmp_path,
                      return_stats=True)
    finally:
        counter.restore()
    assert (s3.cache_hits, s3.cache_misses) == (2, 2) and sum(counter.rows) == 2
    assert out["sas"][0] == pytest.approx(_cos_oracle(lm.model, "a small dog", GOLDS[0]), abs=1e-5)
    # another model never reads these vectors
    assert len(list(tmp_path.iterdir())) == 1


def test_empty_input(tiny_bi):
    out = sas([], [], model=tiny_bi, device="cpu")
    assert out.height == 0 and out.columns == ["prediction", "gold", "sas", "sas_mean", "n_golds"]


def test_errors(tiny_bi):
    with pytest.raises(InputError, match="row 1.*must be a string"):
        sas(["a", None], ["a", "b"], model=tiny_bi, device="cpu")
    with pytest.raises(InputError, match="same length"):
        sas(["a"], ["a", "b"], model=tiny_bi, device="cpu")
    with pytest.raises(InputError, match="row 1, column 'prediction': prediction must not be None"):
        sas({"prediction": ["a", None], "gold": ["a", "b"]}, model=tiny_bi, device="cpu")
    with pytest.raises(InputError, match="column 'answer'"):
        sas({"prediction": ["a"], "gold": ["b"]}, pred_col="answer", model=tiny_bi, device="cpu")
    with pytest.raises(ParameterError, match="sigmoid"):
        sas(["a"], ["b"], model=tiny_bi, device="cpu", sigmoid="always")
    with pytest.raises(ParameterError, match="sigmoid"):
        sas(["a"], ["b"], model=tiny_bi, device="cpu", sigmoid="sometimes")
    with pytest.raises(ParameterError, match="batch_size"):
        sas(["a"], ["b"], model=tiny_bi, device="cpu", batch_size=0)
    with pytest.raises(ParameterError, match="embeddings"):
        sas(["a"], ["b"], model=tiny_bi, device="cpu", embeddings=True)


@pytest.mark.parametrize("name", ["/nonexistent/model/folder", "some-org/model-that-is-not-cached-here"])
def test_missing_model_fails_fast_with_instructions(name):
    t0 = time.perf_counter()
    with pytest.raises(FastevalError, match="not found on this machine.*local folder"):
        sas(["a"], ["b"], model=name, device="cpu")
    assert time.perf_counter() - t0 < 30  # no waiting on the network


def test_fast_tokenizer_matches_model_preprocess(tiny_bi):
    from fasteval.sas.encode import FastTextTokenizer

    lm = load_model(tiny_bi, device="cpu")
    texts = ["", "  PARIS  is big ", "zzz " * 80, "ünïcode ok?", "the cat"]
    fast = FastTextTokenizer.build(lm.model, texts)
    assert fast is not None
    ref = lm.model.preprocess(texts)
    mine = fast(texts)
    for key in ("input_ids", "attention_mask", "token_type_ids"):
        assert mine[key].tolist() == ref[key].tolist()


def test_model_object_accepted(tiny_bi):
    from sentence_transformers import SentenceTransformer

    obj = SentenceTransformer(tiny_bi, device="cpu")
    by_obj = sas(PREDS, GOLDS, model=obj)
    by_path = sas(PREDS, GOLDS, model=tiny_bi, device="cpu")
    np.testing.assert_allclose(by_obj["sas"].to_numpy(), by_path["sas"].to_numpy(), atol=1e-6)


@pytest.mark.slow
def test_several_devices_through_the_multi_process_pool(tiny_bi):
    # two CPU workers stand in for two GPUs: same code path (sentence-transformers' pool)
    multi, stats = sas(PREDS, GOLDS, model=tiny_bi, device=["cpu", "cpu"], return_stats=True)
    single = sas(PREDS, GOLDS, model=tiny_bi, device="cpu")
    np.testing.assert_allclose(multi["sas"].to_numpy(), single["sas"].to_numpy(), atol=1e-5)
    assert stats.device == "cpu,cpu" and stats.n_encoded == len(set(PREDS) | set(GOLDS))


def test_top_level_name_is_callable_however_imported(tiny_bi):
    import fasteval
    import fasteval.sas as sas_package

    expected = sas(["paris"], ["paris is big"], model=tiny_bi, device="cpu")["sas"][0]
    assert fasteval.sas(["paris"], ["paris is big"], model=tiny_bi, device="cpu")["sas"][0] == expected
    assert sas_package(["paris"], ["paris is big"], model=tiny_bi, device="cpu")["sas"][0] == expected


def test_result_column_clash_is_an_input_error(tiny_bi):
    with pytest.raises(InputError, match="column 'sas'"):
        sas({"prediction": ["a"], "gold": ["b"], "sas": [1.0]}, model=tiny_bi, device="cpu")


def test_sigmoid_is_haystacks_expit_to_the_last_bit(tiny_cross_logits):
    # Haystack's SASEvaluator passes a cross-encoder's float32 logits through its expit,
    # 1 / (1 + exp(-x)) in float32 arithmetic; the same logits give the same probabilities
    expit = pytest.importorskip("haystack.utils").expit
    import random

    from tests.sas.conftest import WORDS

    rng = random.Random(3)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8))) for _ in range(400)]
    preds, golds = texts[:200], texts[200:]
    kw = {"model": tiny_cross_logits, "device": "cpu", "per": "pair"}
    raw = sas(preds, golds, sigmoid="never", **kw)["score"].to_numpy().astype(np.float32)
    always = sas(preds, golds, sigmoid="always", **kw)["score"].to_numpy()
    expected = expit(raw)
    assert expected.dtype == np.float32
    assert always.tolist() == expected.tolist()
