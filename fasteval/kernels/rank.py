"""Rank and label: each query's rows in rank order (score descending, ties by doc id
descending, byte-wise: C ``strcmp``, trec_eval's rule), labelled from its qrels."""

from __future__ import annotations

import numpy as np

from fasteval._jit import njit
from fasteval.kernels._borrow import borrow
from fasteval.kernels.ids import doc_before, id_keys, probe, table_size, text_eq

_SPREAD = 2
"""The per-query table of :func:`rank_and_label` has room for this many times the query's
rows over :func:`table_size`'s minimum (so at most a quarter full): fewer collisions, fewer
mispredicted probes. On the 100k-query benchmark run (9.6 M rows, 100 a query, one thread) 14.0-14.7 ns
a row against 16.2-16.3 ns with the table half full; 8 times the rows gained no more."""


@njit(cache=True, inline="always")
def sort_slice_by_key(perm, s, e, key, kbuf, pscr, kscr):
    """Stable sort of perm[s:e] by key descending. ``kbuf``/``pscr``/``kscr``: scratch of
    at least e - s (the keys are copied there, contiguous, only when a sort is needed).
    Returns False when the rows were already in order without equal keys."""
    ordered = True
    ties = False
    prev = key[perm[s]]
    for i in range(s + 1, e):
        k = key[perm[i]]
        if k > prev:
            ordered = False
            break
        ties |= k == prev
        prev = k
    if ordered:
        return ties
    n = e - s
    for i in range(n):
        kbuf[i] = key[perm[s + i]]
        pscr[i] = perm[s + i]
    # insertion-sorted runs of 32, then bottom-up merges between (pscr, kbuf) and the
    # second buffer pair (perm[s:e], kscr)
    run = 32
    for a in range(0, n, run):
        b = min(a + run, n)
        for i in range(a + 1, b):
            x = pscr[i]
            kx = kbuf[i]
            j = i - 1
            while j >= a and kx > kbuf[j]:
                pscr[j + 1] = pscr[j]
                kbuf[j + 1] = kbuf[j]
                j -= 1
            pscr[j + 1] = x
            kbuf[j + 1] = kx
    width = run
    src_in_scratch = True
    while width < n:
        for a in range(0, n, 2 * width):
            mid = min(a + width, n)
            b = min(a + 2 * width, n)
            i = a
            j = mid
            k = a
            while k < b:
                if src_in_scratch:
                    take_j = j < b and (i >= mid or kbuf[j] > kbuf[i])
                    if take_j:
                        perm[s + k] = pscr[j]
                        kscr[k] = kbuf[j]
                        j += 1
                    else:
                        perm[s + k] = pscr[i]
                        kscr[k] = kbuf[i]
                        i += 1
                else:
                    take_j = j < b and (i >= mid or kscr[j] > kscr[i])
                    if take_j:
                        pscr[k] = perm[s + j]
                        kbuf[k] = kscr[j]
                        j += 1
                    else:
                        pscr[k] = perm[s + i]
                        kbuf[k] = kscr[i]
                        i += 1
                k += 1
        src_in_scratch = not src_in_scratch
        width *= 2
    if src_in_scratch:
        for i in range(n):
            perm[s + i] = pscr[i]
    return True  # (ties not looked for after a sort)


@njit(cache=True)
def sort_tie_run(perm, i, j, scratch, is_int, ints, v8, v, data, base):
    """Stable sort of perm[i:j] (rows of equal score) by doc id descending: insertion-
    sorted runs of 32, then merges; ``scratch``: at least j - i."""
    run = 32
    for a in range(i, j, run):
        b = min(a + run, j)
        for p in range(a + 1, b):
            x = perm[p]
            q = p - 1
            while q >= a and doc_before(x, perm[q], is_int, ints, v8, v, data, base):
                perm[q + 1] = perm[q]
                q -= 1
            perm[q + 1] = x
    width = run
    n = j - i
    while width < n:
        for a in range(i, j, 2 * width):
            mid = min(a + width, j)
            b = min(a + 2 * width, j)
            p = a
            q = mid
            k = a
            while p < mid and q < b:
                if doc_before(perm[q], perm[p], is_int, ints, v8, v, data, base):
                    scratch[k - i] = perm[q]
                    q += 1
                else:
                    scratch[k - i] = perm[p]
                    p += 1
                k += 1
            while p < mid:
                scratch[k - i] = perm[p]
                p += 1
                k += 1
            while q < b:
                scratch[k - i] = perm[q]
                q += 1
                k += 1
        for k in range(i, j):
            perm[k] = scratch[k - i]
        width *= 2


@njit(cache=True, inline="always")
def rank_slice(perm, s, e, key, kbuf, pscr, kscr, is_int, ints, v8, v, data, base):
    """Stable sort of perm[s:e] (e - s >= 1) by ``key`` descending, then each run of equal
    keys by doc id descending (:func:`sort_slice_by_key`, :func:`sort_tie_run`)."""
    ties = sort_slice_by_key(perm, s, e, key, kbuf, pscr, kscr)
    i = s if ties else e
    while i < e:  # runs of equal keys: doc id descending
        ki = key[perm[i]]
        j = i + 1
        while j < e and key[perm[j]] == ki:
            j += 1
        if j - i > 1:
            sort_tie_run(perm, i, j, pscr, is_int, ints, v8, v, data, base)
        i = j


@njit(cache=True, nogil=True)
def rank_and_label(perm, offsets, out_off, key, sort, docs, q_hash, q_rel, q_row, q_start,
                   q_end, q_docs, labels, dup_at):
    """Put every query's rows in rank order and label them from its qrels, in one pass.

    ``perm``/``offsets``: rows of query g are ``perm[offsets[g]:offsets[g+1]]`` (an empty
    ``perm``: rows ``offsets[g]:offsets[g+1]`` themselves). ``sort``: order them by ``key``
    descending, ties by doc id descending (else keep the order). ``docs``: the run's doc id
    column; ``q_hash``: the qrels' doc keys by position, query g at ``q_start[g]:q_end[g]``;
    ``q_rel``/``q_docs``: their grades and ids by row, position j at row ``q_row[j]`` (or j
    when ``q_row`` is empty). Writes query g's labels in rank order at
    ``labels[out_off[g]:]`` (grade, -1 if not in the qrels, -2 if its grade is negative;
    ``out_off[g] < 0``: query skipped), and ``dup_at[g]``: 1 if a doc of query g repeats,
    else -1.

    One thread, without the GIL: callers run parts of a table (disjoint queries, disjoint
    label ranges) on a few Python threads (see ``fasteval.prepare``). Parts share no
    scratch and need no coordination, so that two cores stay busy even while the other
    thread prepares its next part in Python.
    """
    ng = offsets.shape[0] - 1
    longest = 1
    for g in range(ng):
        longest = max(longest, offsets[g + 1] - offsets[g])
    width = table_size(_SPREAD * longest)[0]
    # scratch: the query's rows, sort buffers, doc keys and an open-addressing table;
    # allocated here so that they outlive the pass, which borrows them
    m = longest if sort else 0
    _rank_and_label(perm, offsets, out_off, key, sort, docs, q_hash, q_rel, q_row, q_start,
                    q_end, q_docs, labels, dup_at, np.empty(longest, dtype=np.int64),
                    np.empty(m, dtype=np.float64), np.empty(m, dtype=np.int64),
                    np.empty(m, dtype=np.float64), np.zeros(width, dtype=np.int64),
                    np.empty(longest, dtype=np.int64))


@njit(cache=True, nogil=True)
def _rank_and_label(perm, offsets, out_off, key, sort, docs, q_hash, q_rel, q_row, q_start,
                    q_end, q_docs, labels, dup_at, pp, kbuf, pscr, kscr, table, hbuf):
    """The pass of :func:`rank_and_label` (scratch given by the caller)."""
    d_int, d_ints, d_v8, dv, d_data, d_base = docs
    _, q_ints, _, qv, q_data, q_base = q_docs
    ng = offsets.shape[0] - 1
    identity = perm.shape[0] == 0
    q_moved = q_row.shape[0] > 0
    # uncounted views (see kernels._borrow): the per-query calls are free, and threads
    # sharing the qrels arrays do not bounce their reference counts between cores
    pp, kbuf, pscr, kscr = borrow(pp), borrow(kbuf), borrow(pscr), borrow(kscr)
    table, hbuf, perm, key, labels = borrow(table), borrow(hbuf), borrow(perm), borrow(key), borrow(labels)
    d_ints, d_v8, dv, d_data, d_base = borrow(d_ints), borrow(d_v8), borrow(dv), borrow(d_data), borrow(d_base)
    q_ints, qv, q_data, q_base = borrow(q_ints), borrow(qv), borrow(q_data), borrow(q_base)
    q_hash, q_rel, q_row = borrow(q_hash), borrow(q_rel), borrow(q_row)
    bdocs = (d_int, d_ints, d_v8, dv, d_data, d_base)  # uncounted, for per-query calls
    for g in range(ng):
        s = offsets[g]
        n = offsets[g + 1] - s
        o = out_off[g]
        dup_at[g] = -1
        if n == 0 or o < 0:
            continue
        for k in range(n):  # the query's rows, in rank order once sorted
            pp[k] = s + k if identity else perm[s + k]
        if sort:
            rank_slice(pp, 0, n, key, kbuf, pscr, kscr, d_int, d_ints, d_v8, dv, d_data, d_base)
        # the query's docs go into an open-addressing table (rank + 1; 0 = empty), which
        # finds repeated docs; then each judged doc of the query is looked up in it. Equal
        # keys are confirmed on the ids themselves.
        size, shift = table_size(_SPREAD * n)
        for k in range(size):
            table[k] = 0
        id_keys(bdocs, pp[:n], 0, hbuf[:n])  # keys first: independent rows, no table in the way
        for k in range(n):
            labels[o + k] = -1
        for k in range(n):
            row = pp[k]
            h = hbuf[k]
            slot = -1
            while True:
                slot, t = probe(table, hbuf, h, shift, slot)
                if t == 0 or d_int or text_eq(dv, d_data, d_base, row, dv, d_data, d_base,
                                               pp[t - 1]):
                    break
            if t != 0:
                dup_at[g] = 1
                break
            table[slot] = k + 1
        for j in range(q_start[g], q_end[g]):
            h = q_hash[j]
            qr = q_row[j] if q_moved else j
            slot = -1
            while True:
                slot, t = probe(table, hbuf, h, shift, slot)
                if t == 0 or ((d_ints[pp[t - 1]] == q_ints[qr]) if d_int else text_eq(
                        dv, d_data, d_base, pp[t - 1], qv, q_data, q_base, qr)):
                    break
            if t != 0:
                v = q_rel[qr]
                labels[o + t - 1] = v if v >= 0 else -2
