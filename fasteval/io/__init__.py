"""Readers and writers: TREC text, parquet, CSV/TSV, JSONL, data frames, Arrow tables, dicts.

The names below load their modules on first use, so ``import fasteval.io`` stays cheap.

Examples
--------
>>> from fasteval.io import read_run
>>> read_run({"q1": {"d1": 1.0}}).columns
['query_id', 'doc_id', 'score']
"""

from __future__ import annotations

from fasteval._lazy import lazy_exports

_EXPORTS = {
    "read_qrels": "fasteval.io.readers",
    "read_run": "fasteval.io.readers",
    "scan_qrels": "fasteval.io.readers",
    "scan_run": "fasteval.io.readers",
    "detect_format": "fasteval.io.readers",
    "write_table": "fasteval.io.writers",
    "atomic_path": "fasteval.io.atomic",
    "atomic_open": "fasteval.io.atomic",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("fasteval.io", globals(), _EXPORTS)
