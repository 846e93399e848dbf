"""Batch jobs: out-of-core chunked evaluation of parquet runs, streaming atomic output.

Names are imported on first use, so a command that needs one module (the driver) does not
load the others.
"""

from __future__ import annotations

from fasteval._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "evaluate_files": "fasteval.batch.api",
    "RunSource": "fasteval.batch.discover",
    "discover": "fasteval.batch.discover",
    "discover_all": "fasteval.batch.discover",
    "JobStats": "fasteval.batch.driver",
    "parse_memory": "fasteval.batch.driver",
    "run_job": "fasteval.batch.driver",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports("fasteval.batch", globals(), _EXPORTS)
