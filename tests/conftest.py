"""Suite-wide settings: fasteval's own on-disk caches live in a temporary folder, never in
the user's cache folder (``fasteval eval`` keeps prepared qrels there, see
:mod:`fasteval.batch.qrels_cache`), and Haystack's usage reports are off (no network)."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile

# Haystack (an oracle in the tests) reports usage over the network unless told not to
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
# whether a command compiles depends on the state of numba's cache, not on the test: the
# one-line compile notice is silenced (tests of the notice itself clear this variable)
os.environ["FASTEVAL_QUIET"] = "1"

if "FASTEVAL_CACHE_DIR" not in os.environ:  # set before any test starts a subprocess
    _CACHE = tempfile.mkdtemp(prefix="fasteval-test-cache-")
    os.environ["FASTEVAL_CACHE_DIR"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

from tests._profile import FULL  # noqa: E402

# quick: the README's test command; full: FASTEVAL_TESTS=full (tests/_profile.py). A test's
# own max_examples comes from tests._profile.examples, so it follows the profile too.
settings.register_profile("quick", max_examples=20, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("full", max_examples=100, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("full" if FULL else "quick")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "deep: sized by the profile (tests/_profile.py); "
                                       "FASTEVAL_TESTS=full runs it at full size")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark property tests ``deep``; in the quick profile, skip the ``slow`` ones."""
    skip = pytest.mark.skip(reason="slow: runs in the full profile (FASTEVAL_TESTS=full)")
    for item in items:
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.deep)
        if not FULL and item.get_closest_marker("slow") is not None:
            item.add_marker(skip)
    if _prewarming(len(items)):  # the ranx tests last: by then the prewarm has finished
        items[:] = [i for i in items if not _uses_ranx(i)] + [i for i in items if _uses_ranx(i)]


# ranx's kernels compile in a second process while the first tests run (tests/_prewarm.py);
# the tests whose module imports ranx (or ir_measures, which may call it) run last, and wait
# for it if it is still compiling
_PREWARM: dict[str, object] = {}
_MENTIONS_RANX: dict[str, bool] = {}
_USES_RANX = re.compile(r"import (ranx|ir_measures)|importorskip\(\s*[\"'](ranx|ir_measures)")


def _prewarming(n_items: int) -> bool:
    """Whether a session of ``n_items`` tests starts the ranx prewarm."""
    return n_items >= 300 and os.environ.get("FASTEVAL_TEST_PREWARM", "1") != "0"


def _uses_ranx(item: pytest.Item) -> bool:
    """Whether the test's module imports ranx or ir_measures (read once per module)."""
    path = str(item.path)
    if path not in _MENTIONS_RANX:
        try:
            _MENTIONS_RANX[path] = _USES_RANX.search(item.path.read_text(encoding="utf-8")) is not None
        except OSError:
            _MENTIONS_RANX[path] = True
    return _MENTIONS_RANX[path]


def pytest_collection_finish(session: pytest.Session) -> None:
    if not _prewarming(len(session.items)):
        return
    import subprocess
    import sys
    from pathlib import Path

    _PREWARM["proc"] = subprocess.Popen(
        [sys.executable, "-m", "tests._prewarm"], cwd=Path(__file__).resolve().parent.parent,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        preexec_fn=lambda: os.nice(10))


def pytest_runtest_setup(item: pytest.Item) -> None:
    proc = _PREWARM.get("proc")
    if proc is not None and proc.poll() is None and _uses_ranx(item):
        proc.wait()


def pytest_sessionfinish(session: pytest.Session) -> None:
    proc = _PREWARM.pop("proc", None)
    if proc is not None and proc.poll() is None:
        import signal

        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
