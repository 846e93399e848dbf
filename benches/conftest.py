"""Every benchmark process runs under the settings of the ``fasteval`` command.

:func:`fasteval.configure_process` (allocators that keep freed memory for the next round,
passive OpenMP threads) is applied here, before any benchmark imports polars, so the bare
polars read, fasteval and the peers measured in this process all run under it, and the
fresh processes started from here inherit its environment variables.
``FASTEVAL_BENCH_PROCESS=library`` measures the library's defaults instead (nothing set).
The choice is recorded in each benchmark's ``extra_info["process"]``.
"""

from __future__ import annotations

import os
import sys

import pytest

MODES = ("fasteval-command", "library")
MODE = os.environ.get("FASTEVAL_BENCH_PROCESS", "fasteval-command")
if MODE not in MODES:
    raise ValueError(f"FASTEVAL_BENCH_PROCESS must be one of {MODES}, got {MODE!r}")
if MODE == "fasteval-command":
    if "polars" in sys.modules:  # a plugin imported it first: the settings would be partial
        raise RuntimeError("polars was imported before benches/conftest.py could configure the "
                           "process; set FASTEVAL_BENCH_PROCESS=library or remove that import")
    import fasteval

    fasteval.configure_process()

# `fasteval eval`'s qrels cache (fresh CLI processes started from here) lives beside the
# benchmark data, not in the user's cache folder
os.environ.setdefault("FASTEVAL_CACHE_DIR", os.path.join(
    os.environ.get("FASTEVAL_BENCH_DIR", os.path.join(os.path.dirname(__file__), ".data")), "cache"))


@pytest.fixture(autouse=True)
def _record_process_mode(request):
    if "benchmark" in request.fixturenames:
        request.getfixturevalue("benchmark").extra_info["process"] = MODE


def pytest_collect_file(file_path, parent):
    """Collect ``bench_*.py`` (not pytest's ``test_*.py`` pattern) when a run names the
    folder, so that ``python -m pytest benches`` finds every suite; a file named on the
    command line is collected by pytest itself."""
    if file_path.suffix == ".py" and file_path.name.startswith("bench_") and \
            not parent.session.isinitpath(file_path):
        return pytest.Module.from_parent(parent, path=file_path)
    return None
