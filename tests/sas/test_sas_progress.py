"""SAS progress: the shared fasteval.progress bar, labelled "embedding", on stderr only."""

from __future__ import annotations

import pytest

pytest.importorskip("sentence_transformers")

from fasteval.progress import Progress  # noqa: E402
from fasteval.sas import sas  # noqa: E402
from tests.sas._texts import GOLDS, PREDS  # noqa: E402


@pytest.fixture
def no_delay(monkeypatch):
    """Every bar draws at once and, off a terminal, writes a line per update."""
    defaults = Progress.__init__.__kwdefaults__
    monkeypatch.setitem(defaults, "delay", 0.0)
    monkeypatch.setitem(defaults, "log_interval", 0.0)


def test_embedding_progress_off_a_terminal_is_plain_lines(tiny_bi, no_delay, capsys):
    from transformers.utils import logging as hf_logging

    from fasteval.sas.model import clear_loaded_models

    clear_loaded_models()  # the model is loaded here, not taken from an earlier test
    assert hf_logging.is_progress_bar_enabled()
    sas(PREDS, GOLDS, model=tiny_bi, device="cpu", batch_size=2, progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    assert hf_logging.is_progress_bar_enabled()  # the library's setting is restored
    n = len(set(PREDS) | set(GOLDS))
    ours = err
    assert "Loading weights" not in err  # the model loader's own bar is not drawn
    lines = ours.splitlines()
    assert lines and all(line.startswith("embedding: ") for line in lines) and "\r" not in ours
    assert lines[-1].startswith("embedding: 100%|##########|") and f"{n}/{n} [" in lines[-1]
    assert "texts/s" in lines[-1]


def test_embedding_progress_silent_when_off_or_short(tiny_bi, no_delay, capsys):
    sas(PREDS, GOLDS, model=tiny_bi, device="cpu", batch_size=2, progress=False)
    assert "embedding" not in capsys.readouterr().err


def test_embedding_progress_default_silent_on_a_short_job(tiny_bi, capsys):
    sas(PREDS, GOLDS, model=tiny_bi, device="cpu", batch_size=2)  # default 2 s delay
    assert "embedding" not in capsys.readouterr().err
