"""The qrels index: each query's doc keys, its judged grades sorted, its repeated docs."""

from __future__ import annotations

import numpy as np

from fasteval._jit import njit
from fasteval.kernels._borrow import borrow
from fasteval.kernels.ids import id_keys, probe, table_size, text_eq


@njit(cache=True, nogil=True)
def index_qrels(order, starts, ends, col, rel, q_hash, repeat, grades, g_end):
    """Doc keys and sorted grades of the qrels, and per query a position whose doc repeats
    an earlier one of the same query (-1 if none).

    Query g holds positions ``starts[g]:ends[g]``; position i is row ``order[i]`` of the
    table, or row i itself when ``order`` is empty (qrels whose queries are contiguous
    runs of rows). Ids and grades stay where they are, in the table's row order.

    Fills, for each query g of ``starts``: ``q_hash[i]``, the key of the doc at each of its
    positions i; its judged grades (>= 0) sorted descending in ``grades[starts[g]:g_end[g]]``;
    and ``repeat[g]``. One thread, without the GIL: callers index disjoint sets of queries
    on a few threads (``q_hash`` and ``grades`` are shared, by position).
    """
    longest = 1
    for g in range(starts.shape[0]):
        longest = max(longest, ends[g] - starts[g])
    # the open-addressing table, allocated here so that it outlives the pass, which borrows it
    _index_qrels(order, starts, ends, col, rel, q_hash, repeat, grades, g_end,
                 np.zeros(table_size(longest)[0], dtype=np.int64))


@njit(cache=True, nogil=True)
def _index_qrels(order, starts, ends, col, rel, q_hash, repeat, grades, g_end, table):
    """The pass of :func:`index_qrels` (its table given by the caller)."""
    is_int, ints, v8, v, data, base = col
    ints, v, data, base = borrow(ints), borrow(v), borrow(data), borrow(base)
    bcol = (is_int, ints, v8, v, data, base)  # uncounted, for per-query calls
    order, q_hash, table = borrow(order), borrow(q_hash), borrow(table)
    moved = order.shape[0] > 0
    ng = starts.shape[0]
    for g in range(ng):
        s = starts[g]
        e = ends[g]
        repeat[g] = -1
        size, shift = table_size(e - s)
        for x in range(size):
            table[x] = 0
        id_keys(bcol, order[s:e], s, q_hash[s:e])  # (order empty: position i is row i)
        k = s  # judged grades go to grades[s:k], sorted descending (insertion while few)
        for i in range(s, e):
            r = order[i] if moved else i
            grade = rel[r]
            if grade >= 0:
                if k - s < 64:
                    j = k - 1
                    while j >= s and grades[j] < grade:
                        grades[j + 1] = grades[j]
                        j -= 1
                    grades[j + 1] = grade
                else:
                    grades[k] = grade
                k += 1
            h = q_hash[i]
            if repeat[g] >= 0:
                continue
            slot = -1
            while True:
                slot, t = probe(table, q_hash, h, shift, slot)
                if t == 0 or is_int or text_eq(v, data, base, r, v, data, base,
                                                order[t - 1] if moved else t - 1):
                    break
            if t == 0:
                table[slot] = i + 1
            else:
                repeat[g] = i
        if k - s > 64:  # many judgments: sort them all at once
            part = np.sort(grades[s:k])
            for i in range(k - s):
                grades[s + i] = part[k - s - 1 - i]
        g_end[g] = k
