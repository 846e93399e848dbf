"""Rows into query groups: runs of equal ids, stable grouping by code, slices, cutoffs."""

from __future__ import annotations

import numpy as np
from numba import prange

from fasteval._jit import njit
from fasteval.kernels._borrow import borrow
from fasteval.kernels.ids import text_eq


@njit(cache=True, nogil=True)
def run_heads(col, n):
    """Rows that start a run of equal ids (row 0 and each row unlike the one before).

    One sequential pass: it reads 16 bytes a row and is called once per column chunk, many
    times in a batch job, where a parallel launch would wait on threads busy reading. It
    releases the GIL, so that the chunks of a long column can be scanned on several threads."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    is_int, ints, _, v, data, base = col
    v, data, base = borrow(v), borrow(data), borrow(base)
    heads = np.empty(n, dtype=np.int64)
    heads[0] = 0
    k = 1
    for i in range(1, n):
        if is_int:
            same = ints[i] == ints[i - 1]
        else:
            same = text_eq(v, data, base, i, v, data, base, i - 1)
        if not same:
            heads[k] = i
            k += 1
    return heads[:k].copy()


@njit(cache=True, parallel=True)
def group_runs(heads, n_rows, head_codes, n_groups):
    """Stable grouping of rows given as runs (``heads``, each with its group code).

    Runs with code < 0 are dropped. Returns (perm, offsets): rows of group g are
    ``perm[offsets[g]:offsets[g+1]]`` in input order. Input already grouped in code order
    (the usual dump) costs one sequential fill.
    """
    nh = heads.shape[0]
    counts = np.zeros(n_groups + 1, dtype=np.int64)
    for r in range(nh):
        c = head_codes[r]
        if c >= 0:
            end = heads[r + 1] if r + 1 < nh else n_rows
            counts[c + 1] += end - heads[r]
    for g in range(n_groups):
        counts[g + 1] += counts[g]
    dest = np.empty(nh, dtype=np.int64)
    pos = counts[:-1].copy()
    for r in range(nh):
        c = head_codes[r]
        if c >= 0:
            end = heads[r + 1] if r + 1 < nh else n_rows
            dest[r] = pos[c]
            pos[c] += end - heads[r]
    perm = np.empty(counts[n_groups], dtype=np.int64)
    for r in prange(nh):
        if head_codes[r] >= 0:
            start = heads[r]
            end = heads[r + 1] if r + 1 < nh else n_rows
            d = dest[r] - start
            for i in range(start, end):
                perm[d + i] = i
    return perm, counts


@njit(cache=True, parallel=True)
def gather_slices(values, starts, lengths):
    """Concatenation of ``values[starts[k]:starts[k]+lengths[k]]`` for every k."""
    n = lengths.shape[0]
    off = np.zeros(n + 1, dtype=np.int64)
    for k in range(n):
        off[k + 1] = off[k] + lengths[k]
    out = np.empty(off[n], dtype=values.dtype)
    for k in prange(n):
        for t in range(lengths[k]):
            out[off[k] + t] = values[starts[k] + t]
    return out


@njit(cache=True)
def truncate(labels, offsets, max_docs, judged_only):
    """Apply max_docs (top M by rank) and then judged_only (drop labels < 0); compact."""
    ng = offsets.shape[0] - 1
    new_off = np.zeros(ng + 1, dtype=np.int64)
    out = np.empty(labels.shape[0], dtype=np.int32)
    k = 0
    for g in range(ng):
        s = offsets[g]
        e = offsets[g + 1]
        if max_docs < e - s:  # never s + max_docs: "no limit" is the largest int64
            e = s + max_docs
        for i in range(s, e):
            v = labels[i]
            if judged_only and v < 0:
                continue
            out[k] = v
            k += 1
        new_off[g + 1] = k
    return out[:k], new_off
