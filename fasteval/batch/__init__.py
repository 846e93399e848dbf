"""Batch jobs: out-of-core chunked evaluation of parquet runs, streaming atomic output."""

from fasteval.batch.api import evaluate_files
from fasteval.batch.discover import RunSource, discover, discover_all
from fasteval.batch.driver import JobStats, parse_memory, run_job
from fasteval.batch.progress import Progress

__all__ = [
    "JobStats",
    "Progress",
    "RunSource",
    "discover",
    "discover_all",
    "evaluate_files",
    "parse_memory",
    "run_job",
]
