"""An embedding cache folder that cannot be written is found before the texts are
embedded (the work whose results it would keep), and a cache shared read-only still
serves a job whose texts it holds."""

from __future__ import annotations

import errno
import os
import tempfile

import pytest

pytest.importorskip("sentence_transformers")

from fasteval.errors import FastevalError  # noqa: E402
from fasteval.sas import sas  # noqa: E402
from fasteval.sas.model import load_model  # noqa: E402
from tests.sas._texts import GOLDS, PREDS  # noqa: E402
from tests.sas.test_sas_core import ForwardCounter  # noqa: E402


def test_unwritable_cache_is_refused_before_embedding(tiny_bi, tmp_path, monkeypatch):
    cache = tmp_path / "emb"
    first = sas(PREDS, GOLDS, model=tiny_bi, device="cpu", cache_dir=cache)
    real = tempfile.mkstemp

    def read_only(*args, dir=None, **kwargs):  # the cache folder turned read-only (modes do not stop root)
        if dir is not None and str(cache) in os.fspath(dir):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr("fasteval.io.atomic.tempfile.mkstemp", read_only)
    lm = load_model(tiny_bi, device="cpu")
    counter = ForwardCounter(lm.model)
    try:
        assert sas(PREDS, GOLDS, model=tiny_bi, device="cpu", cache_dir=cache).equals(first)  # every text held
        with pytest.raises(FastevalError, match=rf"cache_dir {str(cache)!r}: the cache folder .* cannot be "
                                                r"written: Permission denied"):
            sas(["a text never embedded"], [GOLDS[0]], model=tiny_bi, device="cpu", cache_dir=cache)
    finally:
        counter.restore()
    assert counter.rows == []  # nothing embedded
