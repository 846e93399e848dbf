"""Importing the ``fasteval.sas`` package runs none of its modules, so a module file imported
by path afterwards (pytest's ``--import-mode=importlib --doctest-modules``) stays one module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_package_import_loads_no_submodule():
    code = ("import sys, fasteval.sas;"
            "print(sorted(k for k in sys.modules if k.startswith('fasteval.sas.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_doctests_of_model_file_then_engine_share_one_model_module(tmp_path):
    # the model module's doctests collected before the engine is used: the engine's
    # LoadedModel must be the class that sys.modules holds (a second copy of the module made
    # load_model refuse its own LoadedModel in later tests)
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "import sys\n"
        "def test_one_copy():\n"
        "    import fasteval.sas.core as core\n"
        "    assert core.LoadedModel is sys.modules['fasteval.sas.model'].LoadedModel\n"
        "    assert core.load_model is sys.modules['fasteval.sas.model'].load_model\n")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib",
           "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"), "--doctest-modules",
           str(ROOT / "fasteval" / "sas" / "model.py"), str(probe)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
