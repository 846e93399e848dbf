"""Prepare: intern ids, group by query, sort into rank order, join relevance, offsets.

:func:`prepare_qrels` runs once per qrels; :func:`prepare_run` once per run. The result is
a :class:`Batch` of flat numpy arrays that the kernels of :mod:`fasteval.kernels.ranking`
read: no strings and no dicts past this point.

One job per module; the public names are importable from here:

* :mod:`fasteval.prepare.views`: Arrow string views, the kernels' id columns;
* :mod:`fasteval.prepare.threads`: parts of a table on a few Python threads;
* :mod:`fasteval.prepare.tables`: the input checks and the :class:`Report`;
* :mod:`fasteval.prepare.qrels`: the qrels index (:class:`PreparedQrels`);
* :mod:`fasteval.prepare.ranking`: ranking and labelling a run (:class:`Batch`), with the
  duplicate retry, placeholder rankings and the tie groups of ``tie_break="expected"``;
* :mod:`fasteval.prepare.small`: small tables prepared by polars alone.

Examples
--------
>>> import polars as pl
>>> pq = prepare_qrels(pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]}))
>>> batch = prepare_run(pq, pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["b", "a"],
...                                       "score": [1.0, 2.0]}))
>>> batch.labels.tolist(), batch.offsets.tolist()
([1, -1], [0, 2])
"""

from __future__ import annotations

from fasteval.prepare.qrels import PreparedQrels, index_qrels, prepare_qrels, run_heads
from fasteval.prepare.ranking import PLACEHOLDER_LABEL, Batch, placeholder_rankings, prepare_run
from fasteval.prepare.tables import (
    DUPLICATES,
    TIE_BREAKS,
    Report,
    check_qrels_table,
    check_run_table,
)
from fasteval.prepare.threads import BLOCK_ROWS
from fasteval.prepare.views import id_column

__all__ = [
    "BLOCK_ROWS",
    "Batch",
    "DUPLICATES",
    "PLACEHOLDER_LABEL",
    "PreparedQrels",
    "Report",
    "TIE_BREAKS",
    "check_qrels_table",
    "check_run_table",
    "id_column",
    "index_qrels",
    "placeholder_rankings",
    "prepare_qrels",
    "prepare_run",
    "run_heads",
]
