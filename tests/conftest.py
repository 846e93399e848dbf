"""Suite-wide settings: fasteval's own on-disk caches live in a temporary folder, never in
the user's cache folder (``fasteval eval`` keeps prepared qrels there, see
:mod:`fasteval.batch.qrels_cache`), and Haystack's usage reports are off (no network)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

# Haystack (an oracle in the tests) reports usage over the network unless told not to
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

if "FASTEVAL_CACHE_DIR" not in os.environ:  # set before any test starts a subprocess
    _CACHE = tempfile.mkdtemp(prefix="fasteval-test-cache-")
    os.environ["FASTEVAL_CACHE_DIR"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)
