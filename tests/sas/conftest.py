"""Tiny random-weight BERT models (bi-encoder and cross-encoders) built on the fly, offline."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

WORDS = (
    "the a of and to in is was for on that with as by at from it be are this an or which "
    "capital city france paris tower river big small red blue cat dog built year old new "
    "one two three first large famous country eiffel london rome germany berlin"
).split()


def _tokenizer(folder):
    from transformers import BertTokenizerFast

    chars = list("abcdefghijklmnopqrstuvwxyz0123456789.,!?'")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, *chars, *("##" + c for c in chars)]
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(dict.fromkeys(vocab)) + "\n")
    return BertTokenizerFast(vocab_file=str(vocab_file), do_lower_case=True), len(dict.fromkeys(vocab))


def _config(n_vocab, **extra):
    from transformers import BertConfig

    # large initializer range: a random tiny model whose embeddings differ clearly between texts
    return BertConfig(vocab_size=n_vocab, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=64, initializer_range=0.5, **extra)


@pytest.fixture(scope="session")
def tiny_bi(tmp_path_factory):
    """Folder of a sentence-transformers bi-encoder (BERT, mean pooling)."""
    pytest.importorskip("sentence_transformers")
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertModel

    root = tmp_path_factory.mktemp("tiny_bi")
    tok, n_vocab = _tokenizer(root)
    torch.manual_seed(0)
    BertModel(_config(n_vocab)).save_pretrained(root / "raw")
    tok.save_pretrained(root / "raw")
    SentenceTransformer(str(root / "raw"), device="cpu").save(str(root / "model"))
    return str(root / "model")


def _cross(root, seed, bias=None, identity=False):
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import BertForSequenceClassification

    tok, n_vocab = _tokenizer(root)
    torch.manual_seed(seed)
    model = BertForSequenceClassification(_config(n_vocab, num_labels=1))
    if bias is not None:
        with torch.no_grad():
            model.classifier.bias.fill_(bias)
    model.save_pretrained(root / "raw")
    tok.save_pretrained(root / "raw")
    kwargs = {"activation_fn": torch.nn.Identity()} if identity else {}
    CrossEncoder(str(root / "raw"), device="cpu", **kwargs).save(str(root / "model"))
    return str(root / "model")


@pytest.fixture(scope="session")
def tiny_cross(tmp_path_factory):
    """Folder of a cross-encoder (BertForSequenceClassification, sigmoid activation)."""
    pytest.importorskip("sentence_transformers")
    return _cross(tmp_path_factory.mktemp("tiny_cross"), 1)


@pytest.fixture(scope="session")
def tiny_cross_logits(tmp_path_factory):
    """Cross-encoder returning raw logits (identity activation), shifted so some exceed 1."""
    pytest.importorskip("sentence_transformers")
    return _cross(tmp_path_factory.mktemp("tiny_cross_logits"), 2, bias=1.0, identity=True)

