"""Thread scheduling: disjoint parts of a table (whole queries, ~``BLOCK_ROWS`` rows) run
GIL-free kernels on ``numba.get_num_threads()`` Python threads (see DEVELOPING.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import numpy as np
import polars as pl

T = TypeVar("T")


_PARALLEL_CHUNKS = 4
"""Chunks from which :func:`run_heads` scans on several threads."""


def on_threads(fn: Callable[[int], T], items: Iterable[int], *, at_least: int = 2) -> list[T]:
    """``[fn(i) for i in items]``, on ``numba.get_num_threads()`` threads when there are at
    least ``at_least`` items (``fn`` runs GIL-free kernels on disjoint parts of a table)."""
    import numba

    items = list(items)
    threads = min(numba.get_num_threads(), len(items))
    if threads < 2 or len(items) < at_least:
        return [fn(i) for i in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads, thread_name_prefix="fasteval-prepare") as pool:
        return list(pool.map(fn, items))


def split_parts(ends: np.ndarray, n: int) -> np.ndarray:
    """Cuts ``[0, ..., n]`` of ``n`` items whose sizes end at ``ends`` (cumulative) into
    parts of about :func:`_part_rows`, each part whole items.

    Examples
    --------
    >>> split_parts(np.array([5_000, 10_000, 30_000]), 3).tolist()  # parts of 2**14 rows
    [0, 2, 3]
    """
    total = int(ends[-1]) if n else 0
    step = _part_rows(total)
    marks = np.arange(step, total, step)
    return np.unique(np.concatenate([[0], np.searchsorted(ends, marks, side="left"), [n]]))


BLOCK_ROWS = 1 << 18
"""Rows per part (a block of whole queries) that one thread ranks or indexes at a time, as
a rule (see :func:`_part_rows`); runs of at least twice this, grouped by query, are ranked
in place block by block."""


def _part_rows(n_rows: int) -> int:
    """Rows per part of a table of ``n_rows``: about a quarter of a thread's share, at least
    ``min(BLOCK_ROWS, 2**14)`` and at most 4 x BLOCK_ROWS.

    Each part costs some Python (slicing the columns, a kernel call). On the 100k-query benchmark run
    (9.6 M rows, 2 threads) parts of 2^20 rows ranked in 0.166-0.174 s (median of 9)
    against 0.173-0.196 s for 2^18; the chunks of a ``--memory-limit`` job (250k rows) are
    still cut into several parts, so both threads work on them.

    Examples
    --------
    >>> _part_rows(1000) == min(BLOCK_ROWS, 2**14)
    True
    >>> _part_rows(10**9) == 4 * BLOCK_ROWS
    True
    """
    import numba

    threads = max(1, numba.get_num_threads())
    least = min(BLOCK_ROWS, _MIN_PART_ROWS)
    return int(min(4 * BLOCK_ROWS, max(least, n_rows // (4 * threads))))


_MIN_PART_ROWS = 1 << 14
"""Smallest part worth a thread of its own (a kernel call costs tens of microseconds)."""


def _block_cuts(heads: np.ndarray, n_rows: int, col: pl.Series) -> np.ndarray:
    """Blocks of whole queries, as indices into ``heads`` (first of each block, then
    ``len(heads)``): the parts of :func:`split_parts`, also cut at each boundary between
    ``col``'s chunks, so that a block's ids are used in place. A query that straddles a
    chunk boundary is a block of its own (the only ones copied).

    Examples
    --------
    >>> heads = np.array([0, 3, 5, 9])
    >>> col = pl.concat([pl.Series(["x"] * 4), pl.Series(["y"] * 8)], rechunk=False)
    >>> _block_cuts(heads, 12, col).tolist()  # the query at rows 3-4 straddles row 4
    [0, 1, 2, 4]
    """
    nh = len(heads)
    sizes = [len(c) for c in col.get_chunks()]
    bounds = np.cumsum(sizes)[:-1] if len(sizes) > 1 else np.zeros(0, dtype=np.int64)
    cuts = np.concatenate([
        split_parts(np.append(heads[1:], n_rows), nh),  # query ends: heads shifted by one
        np.searchsorted(heads, bounds, side="left"),  # the first query starting at or after
        np.searchsorted(heads, bounds, side="right") - 1,  # the query holding a boundary row
    ])
    cuts = np.unique(cuts)
    return np.append(cuts[(cuts >= 0) & (cuts < nh)], nh)
