"""``fasteval.compare`` and ``fasteval.sas`` are callable modules: after ``import fasteval``
alone, ``fasteval.compare.topic_set_size`` (as docs/statistics.md writes it) resolves, and
``fasteval.compare(...)`` still calls the function."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("code", [
    # the docs' spelling, in a fresh process where nothing imported fasteval.compare
    "import fasteval\nassert fasteval.compare.topic_set_size(0.05, 0.2) == 128\n"
    "assert callable(fasteval.compare.pilot_variance)\n",
    # the function first, then the module's other names
    "import fasteval, polars as pl\n"
    "res = pl.DataFrame({'run_id': ['a', 'a', 'b', 'b'], 'query_id': ['1', '2', '1', '2'],\n"
    "                    'measure': ['map'] * 4, 'value': [0.5, 0.6, 0.4, 0.6]})\n"
    "assert type(fasteval.compare(res, tests='t')).__name__ == 'Comparison'\n"
    "assert fasteval.compare.topic_set_size(0.05, 0.2) == 128\n",
    "import fasteval\nassert callable(fasteval.sas) and fasteval.sas.__name__ == 'fasteval.sas'\n",
], ids=["module-names", "function-then-names", "sas"])
def test_callable_subpackages(code):
    subprocess.run([sys.executable, "-c", code], check=True)
