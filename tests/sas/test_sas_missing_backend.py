"""``fasteval sas`` where torch (or sentence-transformers) is not installed: one line saying
what to install, exit status 2, no traceback. The missing import is simulated."""

from __future__ import annotations

import sys

import pytest

from fasteval.cli import main


@pytest.mark.parametrize("missing, named", [
    ("torch", "torch"),
    ("sentence_transformers", "sentence-transformers"),
])
def test_sas_without_its_backend_says_what_to_install(tmp_path, capsys, monkeypatch, missing, named):
    src = tmp_path / "answers.csv"
    src.write_text("prediction,gold\nParis,Paris\n")
    monkeypatch.setitem(sys.modules, missing, None)  # import fails as if not installed
    rc = main(["sas", str(src), "-o", str(tmp_path / "out.parquet"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("fasteval: error:")
    assert named in err and 'pip install ".[sas]"' in err
    assert ("pip install torch" in err) == (missing == "torch")
    assert not (tmp_path / "out.parquet").exists()
