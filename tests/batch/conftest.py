"""Fixtures of the batch tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def ray_local():
    """A local Ray of 2 CPUs for the module's jobs (skipped without the ``ray`` extra)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    yield
    ray.shutdown()
