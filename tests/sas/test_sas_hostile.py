"""fasteval.sas on hostile inputs and parameters, against sentence-transformers run text by text.

Texts that differ only by whitespace or Unicode normalisation are distinct texts (each embedded
once, each joined back to its own rows); the embedding cache never answers for a model whose
folder or weights changed; parameters out of range are ``ParameterError``s.
"""

from __future__ import annotations

import shutil
import sys
import unicodedata

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")

from fasteval.cli import main  # noqa: E402
from fasteval.errors import InputError, ParameterError  # noqa: E402
from fasteval.sas import sas  # noqa: E402
from fasteval.sas.model import load_model  # noqa: E402
from tests.sas.conftest import _config, _tokenizer  # noqa: E402
from tests.sas.test_sas_core import ForwardCounter  # noqa: E402

NFC = unicodedata.normalize("NFC", "café paris")
NFD = unicodedata.normalize("NFD", "café paris")
LONG = "the eiffel tower is in paris " * 60  # far past the tiny model's 64 positions
HOSTILE_PREDS = ["paris", "paris ", " paris", NFC, NFD, "", LONG, LONG + "rome", "paris", "", "PARIS"]
HOSTILE_GOLDS = ["paris ", "paris", "paris", NFD, NFC, "", LONG + "rome", LONG, "", "paris", "paris"]


def _unit(model, texts: list[str]) -> np.ndarray:
    """Each text alone through ``model.encode``, unit-normalised in float64."""
    vecs = np.stack([model.encode([t], convert_to_numpy=True)[0] for t in texts]).astype(np.float64)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def _cosines(model, preds: list[str], golds: list[str]) -> np.ndarray:
    return (_unit(model, preds) * _unit(model, golds)).sum(axis=1)


def _save_bi(folder, seed: int) -> str:
    """A tiny bi-encoder saved into ``folder`` (replacing what is there), weights from ``seed``."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertModel

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    tok, n_vocab = _tokenizer(folder)
    torch.manual_seed(seed)
    BertModel(_config(n_vocab)).save_pretrained(folder / "raw")
    tok.save_pretrained(folder / "raw")
    SentenceTransformer(str(folder / "raw"), device="cpu").save(str(folder / "model"))
    return str(folder / "model")


def test_hostile_texts_equal_text_by_text_and_each_distinct_text_embedded_once(tiny_bi):
    lm = load_model(tiny_bi, device="cpu")
    assert NFC != NFD and len({*HOSTILE_PREDS, *HOSTILE_GOLDS}) == 9
    counter = ForwardCounter(lm.model)
    try:
        out, stats = sas(HOSTILE_PREDS, HOSTILE_GOLDS, model=tiny_bi, device="cpu", batch_size=3,
                         per="pair", embeddings=True, return_stats=True, output="arrow")
    finally:
        counter.restore()
    n_unique = len({*HOSTILE_PREDS, *HOSTILE_GOLDS})
    assert sum(counter.rows) == n_unique == stats.n_unique_texts
    expected = _cosines(lm.model, HOSTILE_PREDS, HOSTILE_GOLDS)
    np.testing.assert_allclose(out.column("score").to_numpy(), expected, atol=1e-5)
    # every row carries its own text's vector (not its neighbour's after the length sort)
    pe = np.stack(out.column("pred_embedding").to_numpy(zero_copy_only=False))
    ge = np.stack(out.column("gold_embedding").to_numpy(zero_copy_only=False))
    np.testing.assert_allclose(pe, _unit(lm.model, HOSTILE_PREDS), atol=1e-5)
    np.testing.assert_allclose(ge, _unit(lm.model, HOSTILE_GOLDS), atol=1e-5)
    assert out.column("prediction").to_pylist() == HOSTILE_PREDS
    assert out.column("gold").to_pylist() == HOSTILE_GOLDS


def test_one_row_and_several_golds_with_duplicates(tiny_bi):
    lm = load_model(tiny_bi, device="cpu")
    one = sas(["a red cat"], ["a blue dog"], model=tiny_bi, device="cpu")
    assert one["sas"][0] == pytest.approx(_cosines(lm.model, ["a red cat"], ["a blue dog"])[0], abs=1e-5)
    golds = [["rome", "rome", "", NFD], [NFC]]
    out = sas(["paris", NFC], golds, model=tiny_bi, device="cpu")
    first = _cosines(lm.model, ["paris"] * 4, golds[0])
    assert out["n_golds"].to_list() == [4, 1]
    assert out["sas"][0] == pytest.approx(first.max(), abs=1e-5)
    assert out["sas_mean"][0] == pytest.approx(first.mean(), abs=1e-5)
    assert out["sas"][1] == pytest.approx(1.0, abs=1e-5)


def test_cross_encoder_hostile_pairs_equal_predict(tiny_cross):
    from sentence_transformers import CrossEncoder

    ref = CrossEncoder(tiny_cross, device="cpu")
    expected = [float(ref.predict([(p, g)])[0]) for p, g in zip(HOSTILE_PREDS, HOSTILE_GOLDS, strict=True)]
    out = sas(HOSTILE_PREDS, HOSTILE_GOLDS, model=tiny_cross, device="cpu", per="pair", batch_size=4)
    np.testing.assert_allclose(out["score"].to_numpy(), expected, atol=1e-5)
    raw = np.array(expected)
    always = sas(HOSTILE_PREDS, HOSTILE_GOLDS, model=tiny_cross, device="cpu", per="pair", sigmoid="always")
    np.testing.assert_allclose(always["score"].to_numpy(), 1 / (1 + np.exp(-raw)), atol=1e-6)


def test_a_cross_encoder_with_several_outputs_is_refused(tmp_path):
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import BertForSequenceClassification

    tok, n_vocab = _tokenizer(tmp_path)
    torch.manual_seed(3)
    BertForSequenceClassification(_config(n_vocab, num_labels=3)).save_pretrained(tmp_path / "raw")
    tok.save_pretrained(tmp_path / "raw")
    CrossEncoder(str(tmp_path / "raw"), device="cpu").save(str(tmp_path / "model"))
    with pytest.raises(ParameterError, match=r"model must be a cross-encoder with one output per pair "
                                             r"\(num_labels=1\), got '.*with 3 outputs'"):
        sas(["paris"], ["rome"], model=str(tmp_path / "model"), device="cpu")


def test_cache_never_answers_for_a_model_saved_again_into_its_folder(tmp_path):
    from sentence_transformers import SentenceTransformer

    folder = tmp_path / "m"
    path = _save_bi(folder, seed=10)
    preds, golds = ["a red cat", "paris"], ["a blue dog", "the capital of france is paris"]
    first = sas(preds, golds, model=path, device="cpu", cache_dir=tmp_path / "cache")
    np.testing.assert_allclose(first["sas"].to_numpy(),
                               _cosines(SentenceTransformer(path, device="cpu"), preds, golds), atol=1e-5)
    path = _save_bi(folder, seed=11)  # same folder, other weights, in the same process
    again, stats = sas(preds, golds, model=path, device="cpu", cache_dir=tmp_path / "cache",
                       return_stats=True)
    expected = _cosines(SentenceTransformer(path, device="cpu"), preds, golds)
    np.testing.assert_allclose(again["sas"].to_numpy(), expected, atol=1e-5)
    assert np.abs(expected - first["sas"].to_numpy()).max() > 1e-3  # the weights did change
    assert stats.cache_hits == 0 and stats.cache_misses == 4


def test_cache_never_answers_for_a_model_object_changed_in_memory(tiny_bi, tmp_path):
    import torch
    from sentence_transformers import SentenceTransformer

    obj = SentenceTransformer(tiny_bi, device="cpu")
    preds, golds = ["a red cat", "paris"], ["a blue dog", "the capital of france is paris"]
    first = sas(preds, golds, model=obj, cache_dir=tmp_path)
    with torch.no_grad():  # a training step, in effect
        for param in obj.parameters():
            param.add_(0.3 * torch.randn_like(param))
    again, stats = sas(preds, golds, model=obj, cache_dir=tmp_path, return_stats=True)
    expected = _cosines(obj, preds, golds)
    np.testing.assert_allclose(again["sas"].to_numpy(), expected, atol=1e-5)
    assert np.abs(expected - first["sas"].to_numpy()).max() > 1e-3
    assert stats.cache_hits == 0
    unchanged, stats = sas(preds, golds, model=obj, cache_dir=tmp_path, return_stats=True)
    assert stats.cache_misses == 0 and unchanged.equals(again)


def test_cache_never_answers_for_a_model_object_given_a_default_prompt_in_memory(tiny_bi, tmp_path):
    from sentence_transformers import SentenceTransformer

    obj = SentenceTransformer(tiny_bi, device="cpu")
    preds, golds = ["a red cat", "paris"], ["a blue dog", "the capital of france is paris"]
    plain = sas(preds, golds, model=obj, cache_dir=tmp_path)
    obj.prompts, obj.default_prompt_name = {"query": "query: the big tower "}, "query"
    prompted, stats = sas(preds, golds, model=obj, cache_dir=tmp_path, return_stats=True)
    assert stats.cache_hits == 0
    expected = [float(obj.similarity(obj.encode([p]), obj.encode([g]))[0, 0])
                for p, g in zip(preds, golds, strict=True)]
    np.testing.assert_allclose(prompted["sas"].to_numpy(), expected, atol=1e-5)
    assert np.abs(prompted["sas"].to_numpy() - plain["sas"].to_numpy()).max() > 1e-3


def _save_byte_level_bi(folder) -> str:
    """A tiny RoBERTa-style bi-encoder whose byte-level BPE tokens change with a leading space."""
    import torch
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizerFast

    from tests.sas.conftest import WORDS

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator([" ".join(WORDS)] * 20, trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    fast = RobertaTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                unk_token="<unk>", cls_token="<s>", sep_token="</s>", mask_token="<unk>")
    torch.manual_seed(0)
    config = RobertaConfig(vocab_size=tok.get_vocab_size(), hidden_size=16, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=32, max_position_embeddings=80,
                           initializer_range=0.5, pad_token_id=1)
    RobertaModel(config).save_pretrained(folder / "raw")
    fast.save_pretrained(folder / "raw")
    SentenceTransformer(str(folder / "raw"), device="cpu").save(str(folder / "model"))
    return str(folder / "model")


def test_a_preprocess_that_strips_texts_is_used_for_every_text(tmp_path):
    """sentence-transformers before 6 strip each text in preprocess: the fast tokenizer, which
    does not, must not be used then, whatever the texts it is first checked on."""
    from fasteval.sas.encode import FastTextTokenizer

    lm = load_model(_save_byte_level_bi(tmp_path), device="cpu")
    model = lm.model
    assert not model.preprocess([" paris"])["input_ids"].equal(model.preprocess(["paris"])["input_ids"])
    own = model.preprocess
    model.preprocess = lambda inputs, prompt=None, **kw: own([t.strip() for t in inputs], prompt=prompt, **kw)
    assert FastTextTokenizer.build(model, ["paris", "a red cat"]) is None
    preds = ["paris", " the big tower", "a red cat", "rome "]  # the probe: longest and shortest
    golds = ["paris ", "the big tower", " a red cat", "rome"]
    out = sas(preds, golds, model=lm)
    np.testing.assert_allclose(out["sas"].to_numpy(), _cosines(model, preds, golds), atol=1e-5)
    np.testing.assert_allclose(out["sas"].to_numpy(), 1.0, atol=1e-5)  # equal once stripped


def test_cache_never_answers_for_a_model_object_cut_to_fewer_dimensions(tiny_bi, tmp_path):
    from sentence_transformers import SentenceTransformer

    preds, golds = ["a red cat", "paris"], ["a blue dog", "the capital of france is paris"]
    full = sas(preds, golds, model=SentenceTransformer(tiny_bi, device="cpu"), cache_dir=tmp_path)
    obj = SentenceTransformer(tiny_bi, device="cpu", truncate_dim=4)
    cut, stats = sas(preds, golds, model=obj, cache_dir=tmp_path, return_stats=True)
    assert stats.cache_hits == 0
    expected = [float(obj.similarity(obj.encode([p]), obj.encode([g]))[0, 0])
                for p, g in zip(preds, golds, strict=True)]
    np.testing.assert_allclose(cut["sas"].to_numpy(), expected, atol=1e-5)
    assert np.abs(cut["sas"].to_numpy() - full["sas"].to_numpy()).max() > 1e-3


def test_cache_holds_hashes_and_vectors_only(tiny_bi, tmp_path):
    import pyarrow.parquet as pq

    secret = "my password is hunter2 paris"
    sas([secret], ["paris"], model=tiny_bi, device="cpu", cache_dir=tmp_path)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    parts = [p for p in files if p.suffix == ".parquet"]
    assert len(parts) == 1 and pq.read_table(parts[0]).column_names == ["key", "embedding"]
    assert all(b"hunter2" not in p.read_bytes() for p in files)


@pytest.mark.parametrize("batch_size", [0, -1, True, 2.0, "8"])
def test_batch_size_out_of_range(tiny_bi, batch_size):
    with pytest.raises(ParameterError, match=f"^batch_size must be a positive integer, got {batch_size!r}$"):
        sas(["a"], ["b"], model=tiny_bi, device="cpu", batch_size=batch_size)


def test_numpy_batch_size_is_an_integer(tiny_bi):
    from fasteval.evaluators import SASEvaluator

    by_np = sas(["a red cat"], ["a blue dog"], model=tiny_bi, device="cpu", batch_size=np.int64(1))
    by_int = sas(["a red cat"], ["a blue dog"], model=tiny_bi, device="cpu", batch_size=1)
    assert by_np.equals(by_int)
    assert SASEvaluator(tiny_bi, batch_size=np.int32(4)).to_dict()["init_parameters"]["batch_size"] == 4
    with pytest.raises(ParameterError, match="^batch_size must be a positive integer, got True$"):
        SASEvaluator(tiny_bi, batch_size=True)


@pytest.mark.parametrize("device, constraint", [
    ("gpu", "a torch device such as 'cpu', 'cuda' or 'cuda:1'"),
    ("banana:0", "a torch device such as 'cpu', 'cuda' or 'cuda:1'"),
    (["cpu", "tpu"], "a torch device such as 'cpu', 'cuda' or 'cuda:1'"),
])
def test_device_unknown_to_torch(tiny_bi, device, constraint):
    bad = device[-1] if isinstance(device, list) else device
    with pytest.raises(ParameterError, match=f"^device must be {constraint}, got '{bad}'$".replace("(", r"\(")
                       .replace(")", r"\)")):
        sas(["a"], ["b"], model=tiny_bi, device=device)


def test_cuda_device_without_cuda(tiny_bi):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ParameterError, match=r"^device must be 'cpu' on this machine \(no CUDA device is "
                                             r"available\), got 'cuda:1'$"):
        sas(["a"], ["b"], model=tiny_bi, device="cuda:1")


def test_cli_bad_device_and_batch_size_one_line_exit_2(tiny_bi, tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("prediction,gold\nparis,rome\n")
    out = tmp_path / "o.parquet"
    base = ["sas", str(src), "--model", tiny_bi, "-o", str(out)]
    assert main([*base, "--device", "gpu"]) == 2
    err = capsys.readouterr().err
    assert err == ("fasteval: error: --device must be a torch device such as 'cpu', 'cuda' or 'cuda:1', "
                   "got 'gpu'\n")
    assert main([*base, "--device", "cpu", "--batch-size", "0"]) == 2
    assert capsys.readouterr().err == "fasteval: error: --batch-size must be a positive integer, got 0\n"
    assert not out.exists()


def test_table_shapes_refused_by_name(tiny_bi):
    with pytest.raises(InputError, match=r"^data, row 1, column 'q': question id must not be None$"):
        sas({"q": ["x", None], "prediction": ["a", "b"], "gold": ["a", "b"]}, query_col="q",
            model=tiny_bi, device="cpu")
    # one list per row, even of one string each, is not a prediction column
    with pytest.raises(InputError, match=r"column 'prediction': expected one prediction string per row"):
        sas({"prediction": [["a"], ["b"]], "gold": ["a", "b"]}, model=tiny_bi, device="cpu")
    # a mapping would be read as its keys
    with pytest.raises(ParameterError, match=r"^golds must be a list .*got 'dict'$"):
        sas(["a"], {"x": "a"}, model=tiny_bi, device="cpu")
    with pytest.raises(ParameterError, match=r"^predictions must be a list .*got 'str'$"):
        sas("abc", ["a", "b", "c"], model=tiny_bi, device="cpu")


_HUB_SCRIPT = """
import json, sys
from pathlib import Path
from fasteval.sas import sas
from fasteval.sas.model import clear_loaded_models
repo, cache = Path(sys.argv[1]), sys.argv[2]
report = []
for commit in sys.argv[3:]:
    (repo / "refs" / "main").write_text(commit)
    clear_loaded_models()  # as a new process would
    out, stats = sas(["a red cat", "paris"], ["a blue dog", "the capital of france is paris"],
                     model="org/tiny", revision="main", device="cpu", cache_dir=cache, return_stats=True)
    report.append({"sas": out["sas"].to_list(), "hits": stats.cache_hits})
print(json.dumps(report))
"""


def test_cache_follows_the_commit_a_hub_branch_names(tmp_path):
    import json
    import os
    import subprocess
    import sys

    from sentence_transformers import SentenceTransformer

    hub = tmp_path / "hub"
    repo = hub / "models--org--tiny"
    commits = ["a" * 40, "b" * 40]
    expected = []
    for seed, commit in zip((20, 21), commits, strict=True):
        path = _save_bi(tmp_path / commit, seed)
        shutil.copytree(path, repo / "snapshots" / commit)
        expected.append(_cosines(SentenceTransformer(path, device="cpu"), ["a red cat", "paris"],
                                 ["a blue dog", "the capital of france is paris"]))
    (repo / "refs").mkdir()
    env = {**os.environ, "HF_HUB_CACHE": str(hub), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", _HUB_SCRIPT, str(repo), str(tmp_path / "cache"), *commits],
                          env=env, capture_output=True, text=True, timeout=600, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert np.abs(expected[0] - expected[1]).max() > 1e-3
    for got, want in zip(report, expected, strict=True):
        np.testing.assert_allclose(got["sas"], want, atol=1e-5)
        assert got["hits"] == 0  # "main" moved to another commit: nothing cached applies


@pytest.mark.parametrize("null_in, row", [("answer", 1), ("gold", 0)])
def test_evaluate_rag_sas_names_the_column_and_row_of_a_null_answer(tiny_bi, null_in, row):
    import polars as pl

    from fasteval.evaluators import evaluate_rag

    answers = {"answer": ["paris", "rome"], "gold": ["paris", "rome"]}
    answers[null_in][row] = None
    df = pl.DataFrame({"retrieved": [["a"], ["b"]], "ground_truth": [["a"], ["c"]], **answers})
    with pytest.raises(InputError, match=f"^{null_in}, row {row}: holds no answer text"):
        evaluate_rag(df, answer_col="answer", gold_col="gold", sas=True,
                     sas_options={"model": tiny_bi, "device": "cpu"})


def test_arrow_string_views_and_fixed_size_lists_are_read_as_text(tiny_bi):
    import pyarrow as pa

    lm = load_model(tiny_bi, device="cpu")
    preds = ["a red cat", "paris"]
    golds = [["a blue dog", "rome"], ["the capital of france is paris", "paris"]]
    table = pa.table({"prediction": pa.array(preds, pa.string_view()),
                      "gold": pa.array(golds, pa.list_(pa.string(), 2))})
    out = sas(table, model=tiny_bi, device="cpu", output="arrow")
    want = [_cosines(lm.model, [p] * 2, gs) for p, gs in zip(preds, golds, strict=True)]
    np.testing.assert_allclose(out.column("sas").to_numpy(), [w.max() for w in want], atol=1e-5)
    np.testing.assert_allclose(out.column("sas_mean").to_numpy(), [w.mean() for w in want], atol=1e-5)


def test_list_view_golds_are_read_from_their_logical_lists(tiny_bi):
    """pyarrow's cast of a list view to a list gives wrong offsets (in-order views too):
    the golds are read from the views' own sizes and values."""
    import pyarrow as pa

    lm = load_model(tiny_bi, device="cpu")
    preds = ["a red cat", "paris", "rome"]
    golds = [["a blue dog"], ["the capital of france is paris", "paris"], ["rome", "milan", "a cat"]]
    table = pa.table({"prediction": preds, "gold": pa.array(golds, pa.list_view(pa.string()))})
    out = sas(table, model=tiny_bi, device="cpu", output="arrow")
    want = [_cosines(lm.model, [p] * len(gs), gs) for p, gs in zip(preds, golds, strict=True)]
    assert out.column("n_golds").to_pylist() == [1, 2, 3]
    np.testing.assert_allclose(out.column("sas").to_numpy(), [w.max() for w in want], atol=1e-5)


@pytest.mark.parametrize("per, query_col", [("pair", "row"), ("pair", "gold"), ("pair", "score"),
                                            ("query", "sas"), ("query", "n_golds")])
def test_query_col_named_like_a_result_column_is_refused(tiny_bi, per, query_col):
    data = {query_col: ["q1", "q2"], "prediction": ["a", "b"], "gold": ["a", "b"]}
    if query_col == "gold":
        data = {"gold": ["q1", "q2"], "prediction": ["a", "b"], "answer": ["a", "b"]}
    with pytest.raises(ParameterError, match=f"^query_col must be a name other than the per='{per}' result's "
                                             f"columns .*got '{query_col}'$"):
        sas(data, gold_col="answer" if query_col == "gold" else "gold", query_col=query_col, per=per,
            model=tiny_bi, device="cpu")


def test_texts_utf8_cannot_hold_and_mixed_pandas_columns_are_input_errors(tiny_bi):
    import pandas as pd

    with pytest.raises(InputError, match=r"^predictions, row 1: text is not valid Unicode"):
        sas(["a", "b\ud800"], ["a", "b"], model=tiny_bi, device="cpu")
    with pytest.raises(InputError, match=r"^golds, row 0: text is not valid Unicode"):
        sas(["a"], [["a", "\udfff"]], model=tiny_bi, device="cpu")
    with pytest.raises(InputError, match=r"^data: cannot read the pandas table .*column prediction"):
        sas(pd.DataFrame({"prediction": ["a", 3], "gold": ["a", "b"]}), model=tiny_bi, device="cpu")


def test_cli_gold_sep_needs_a_string_column_and_a_separator(tiny_bi, tmp_path, capsys):
    import polars as pl

    out = tmp_path / "o.parquet"
    lists = tmp_path / "lists.parquet"
    pl.DataFrame({"prediction": ["paris"], "gold": [["paris", "rome"]]}).write_parquet(lists)
    assert main(["sas", str(lists), "--gold-sep", "|", "--model", tiny_bi, "--device", "cpu", "-o", str(out)]) == 2
    assert capsys.readouterr().err == (f"fasteval: error: {lists}, column 'gold': --gold-sep splits a column "
                                       "of strings, got List(String)\n")
    assert main(["sas", str(lists), "--gold-sep", "", "--model", tiny_bi, "--device", "cpu", "-o", str(out)]) == 2
    assert capsys.readouterr().err == "fasteval: error: --gold-sep must be a non-empty separator, got ''\n"
    assert not out.exists()
    cats = tmp_path / "cats.parquet"
    pl.DataFrame({"prediction": ["paris"], "gold": ["paris|rome"]},
                 schema={"prediction": pl.String, "gold": pl.Categorical}).write_parquet(cats)
    assert main(["sas", str(cats), "--gold-sep", "|", "--model", tiny_bi, "--device", "cpu", "-o", str(out),
                 "--quiet"]) == 0
    got = pl.read_parquet(out)
    lm = load_model(tiny_bi, device="cpu")
    want = _cosines(lm.model, ["paris", "paris"], ["paris", "rome"])
    assert got["n_golds"].to_list() == [2]
    assert got["sas"][0] == pytest.approx(want.max(), abs=1e-5)
    assert got["sas_mean"][0] == pytest.approx(want.mean(), abs=1e-5)


@pytest.mark.parametrize("missing, named", [("torch", "torch"), ("sentence_transformers", "sentence-transformers"),
                                            ("transformers", "transformers")])
def test_python_api_without_its_backend_says_what_to_install(monkeypatch, missing, named):
    from fasteval.evaluators import SASEvaluator

    monkeypatch.setitem(sys.modules, missing, None)  # import fails as if not installed
    hint = f'^fasteval.sas needs {named}: .*pip install "\\.\\[sas\\]"$'  # installs from a clone
    with pytest.raises(ImportError, match=hint):
        sas(["a"], ["b"], device="cpu")
    with pytest.raises(ImportError, match=hint):
        SASEvaluator(device="cpu").run(ground_truth_answers=["a"], predicted_answers=["b"])


def test_cross_encoder_refuses_what_only_embeddings_have(tiny_cross, tmp_path):
    from fasteval.evaluators import SASEvaluator

    with pytest.raises(ParameterError, match=r"^cache_dir must be None for a cross-encoder"):
        sas(["a"], ["b"], model=tiny_cross, device="cpu", cache_dir=tmp_path / "c")
    with pytest.raises(ParameterError, match=r"^cache_dir must be None for a cross-encoder"):
        SASEvaluator(tiny_cross, device="cpu", cache_dir=str(tmp_path / "c")).run(["a"], ["b"])
    with pytest.raises(ParameterError, match=r"^embeddings must be used with a bi-encoder model, got True$"):
        sas(["a"], ["b"], model=tiny_cross, device="cpu", per="pair", embeddings=True)
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("option", ["embeddings", "return_stats", "progress"])
def test_switches_take_booleans_only(tiny_bi, option):
    with pytest.raises(ParameterError, match=f"^{option} must be True or False, got 'no'$"):
        sas(["a"], ["b"], model=tiny_bi, device="cpu", per="pair", **{option: "no"})
    out = sas(["a"], ["b"], model=tiny_bi, device="cpu", per="pair", **{option: np.bool_(False)})
    assert out.columns == ["row", "prediction", "gold", "score"]


def test_per_query_groups_dictionary_ids_and_refuses_nested_ones(tiny_bi):
    import pyarrow as pa

    lm = load_model(tiny_bi, device="cpu")
    preds, golds = ["a red cat", "paris", "rome"], ["a blue dog", "paris", "berlin"]
    qids = pa.array(["q2", "q1", "q2"]).dictionary_encode()
    out = sas(pa.table({"q": qids, "prediction": preds, "gold": golds}), query_col="q", model=tiny_bi,
              device="cpu")
    want = _cosines(lm.model, preds, golds)
    assert out["q"].to_list() == ["q2", "q1"] and out["n_golds"].to_list() == [2, 1]
    np.testing.assert_allclose(out["sas"].to_numpy(), [max(want[0], want[2]), want[1]], atol=1e-5)
    np.testing.assert_allclose(out["sas_mean"].to_numpy(), [(want[0] + want[2]) / 2, want[1]], atol=1e-5)
    with pytest.raises(InputError, match=r"^data, column 'q': question ids must be strings or numbers"):
        sas({"q": [[1], [2]], "prediction": ["a", "b"], "gold": ["a", "b"]}, query_col="q", model=tiny_bi,
            device="cpu")


@pytest.mark.parametrize("content", [None, "{not json"])
def test_a_folder_that_holds_no_model_is_one_cli_line(tmp_path, capsys, content):
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    if content is not None:
        (folder / "config.json").write_text(content)
    src = tmp_path / "in.csv"
    src.write_text("prediction,gold\nparis,rome\n")
    assert main(["sas", str(src), "--model", str(folder), "--device", "cpu", "-o", str(tmp_path / "o.parquet")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"fasteval: error: model folder '{folder}' holds no model fasteval can load (")


def test_evaluate_rag_sas_reads_text_columns_only(tiny_bi):
    import polars as pl

    from fasteval.evaluators import evaluate_rag

    lm = load_model(tiny_bi, device="cpu")
    base = {"retrieved": [["a"], ["b"]], "ground_truth": [["a"], ["c"]]}
    df = pl.DataFrame({**base, "answer": ["a red cat", "paris"], "gold": ["a blue dog", "paris"]},
                      schema_overrides={"answer": pl.Categorical})
    report = evaluate_rag(df, answer_col="answer", gold_col="gold", sas=True,
                          sas_options={"model": tiny_bi, "device": "cpu"})
    want = _cosines(lm.model, ["a red cat", "paris"], ["a blue dog", "paris"])
    np.testing.assert_allclose(report.per_question["sas"].to_numpy(), want, atol=1e-5)
    assert report.scores["sas"] == pytest.approx(want.mean(), abs=1e-5)
    numbers = pl.DataFrame({**base, "answer": ["paris", "rome"], "gold": [1, 2]})
    with pytest.raises(InputError, match=r"^gold: holds Int64 values where sas needs answer texts$"):
        evaluate_rag(numbers, answer_col="answer", gold_col="gold", sas=True,
                     sas_options={"model": tiny_bi, "device": "cpu"})
