"""numba kernels behind :mod:`fasteval.prepare`: grouping, per-query sorting, hash joins.

Ids reach the kernels as 64-bit hashes (polars' seeded hash, or the value itself for
integer ids). Every hash match is verified against the real ids in :mod:`fasteval.prepare`,
so a hash collision can cost time but never change a result.

Score ties are broken by the doc id, descending, byte-wise (C ``strcmp``, trec_eval's
rule). Integer ids are compared through their decimal spelling, so the tie order is the
one trec_eval would give the same ids written as text.
"""

from __future__ import annotations

import numpy as np
from numba import get_thread_id, njit, prange


@njit(cache=True)
def _ndigits(x):
    if x == 0:
        return 1
    n = 0
    while x > 0:
        x //= 10
        n += 1
    return n


@njit(cache=True)
def cmp_int_text(a, b):
    """Compare two int64 ids as their decimal strings compare under strcmp (-1, 0, 1)."""
    if a == b:
        return 0
    if (a < 0) != (b < 0):
        return -1 if a < 0 else 1  # '-' (0x2d) sorts before every digit
    if a < 0:
        a = -a
        b = -b
    la = _ndigits(a)
    lb = _ndigits(b)
    pa = 1
    for _ in range(la - 1):
        pa *= 10
    pb = 1
    for _ in range(lb - 1):
        pb *= 10
    for _ in range(min(la, lb)):
        da = (a // pa) % 10
        db = (b // pb) % 10
        if da != db:
            return -1 if da < db else 1
        pa //= 10
        pb //= 10
    if la == lb:
        return 0
    return -1 if la < lb else 1


@njit(cache=True, parallel=True)
def lookup_codes(hashes, table_hash, table_code, out):
    """out[i] = code of hashes[i] in the sorted (hash, code) table, -1 if absent."""
    n = hashes.shape[0]
    m = table_hash.shape[0]
    for i in prange(n):
        h = hashes[i]
        lo = 0
        hi = m
        while lo < hi:
            mid = (lo + hi) >> 1
            if table_hash[mid] < h:
                lo = mid + 1
            else:
                hi = mid
        out[i] = table_code[lo] if lo < m and table_hash[lo] == h else -1


@njit(cache=True)
def group_rows(codes, n_groups):
    """Counting sort of row indices by group code (stable); rows with code < 0 are dropped.

    Returns (perm, offsets): rows of group g are perm[offsets[g]:offsets[g+1]], input order.
    """
    counts = np.zeros(n_groups + 1, dtype=np.int64)
    for i in range(codes.shape[0]):
        c = codes[i]
        if c >= 0:
            counts[c + 1] += 1
    for g in range(n_groups):
        counts[g + 1] += counts[g]
    perm = np.empty(counts[n_groups], dtype=np.int64)
    pos = counts[:-1].copy()
    for i in range(codes.shape[0]):
        c = codes[i]
        if c >= 0:
            perm[pos[c]] = i
            pos[c] += 1
    return perm, counts


@njit(cache=True)
def _sort_slice_by_key(perm, kbuf, pscr, kscr, s, e, key):
    """Stable sort of perm[s:e] by key descending; keys copied to a contiguous buffer."""
    ordered = True
    for i in range(s, e):
        kbuf[i] = key[perm[i]]
        if i > s and kbuf[i] > kbuf[i - 1]:
            ordered = False
    if ordered:
        return
    n = e - s
    run = 32
    for a in range(s, e, run):
        b = min(a + run, e)
        for i in range(a + 1, b):
            x = perm[i]
            kx = kbuf[i]
            j = i - 1
            while j >= a and kx > kbuf[j]:
                perm[j + 1] = perm[j]
                kbuf[j + 1] = kbuf[j]
                j -= 1
            perm[j + 1] = x
            kbuf[j + 1] = kx
    width = run
    src_p = perm
    src_k = kbuf
    dst_p = pscr
    dst_k = kscr
    passes = 0
    while width < n:
        for a in range(s, e, 2 * width):
            mid = min(a + width, e)
            b = min(a + 2 * width, e)
            i = a
            j = mid
            k = a
            while i < mid and j < b:
                if src_k[j] > src_k[i]:
                    dst_p[k] = src_p[j]
                    dst_k[k] = src_k[j]
                    j += 1
                else:
                    dst_p[k] = src_p[i]
                    dst_k[k] = src_k[i]
                    i += 1
                k += 1
            while i < mid:
                dst_p[k] = src_p[i]
                dst_k[k] = src_k[i]
                i += 1
                k += 1
            while j < b:
                dst_p[k] = src_p[j]
                dst_k[k] = src_k[j]
                j += 1
                k += 1
        src_p, dst_p = dst_p, src_p
        src_k, dst_k = dst_k, src_k
        width *= 2
        passes += 1
    if passes % 2 == 1:
        for i in range(s, e):
            perm[i] = pscr[i]


@njit(cache=True, parallel=True)
def sort_groups(perm, offsets, key):
    """Sort every group's rows by key descending, stably, in place."""
    n = perm.shape[0]
    kbuf = np.empty(n, dtype=np.float64)
    pscr = np.empty(n, dtype=np.int64)
    kscr = np.empty(n, dtype=np.float64)
    for g in prange(offsets.shape[0] - 1):
        _sort_slice_by_key(perm, kbuf, pscr, kscr, offsets[g], offsets[g + 1], key)


@njit(cache=True, parallel=True)
def sort_groups_by_int(perm, offsets, key):
    """Sort every group's rows by an int64 key ascending, in place (qrels: doc hashes)."""
    for g in prange(offsets.shape[0] - 1):
        s = offsets[g]
        e = offsets[g + 1]
        if e - s <= 48:
            for i in range(s + 1, e):
                x = perm[i]
                kx = key[x]
                j = i - 1
                while j >= s and key[perm[j]] > kx:
                    perm[j + 1] = perm[j]
                    j -= 1
                perm[j + 1] = x
        else:
            seg = perm[s:e]
            order = np.argsort(key[seg], kind="mergesort")
            perm[s:e] = seg[order]


@njit(cache=True)
def tie_positions(perm, offsets, key):
    """Positions (into perm) of rows whose key equals a neighbour's in the same group,
    and the tie run each belongs to (runs never cross groups)."""
    n = perm.shape[0]
    run_of = np.full(n, -1, dtype=np.int64)
    count = 0
    runs = 0
    for g in range(offsets.shape[0] - 1):
        for i in range(offsets[g] + 1, offsets[g + 1]):
            if key[perm[i]] == key[perm[i - 1]]:
                if run_of[i - 1] < 0:
                    run_of[i - 1] = runs
                    runs += 1
                    count += 1
                run_of[i] = run_of[i - 1]
                count += 1
    pos = np.empty(count, dtype=np.int64)
    rid = np.empty(count, dtype=np.int64)
    k = 0
    for i in range(n):
        if run_of[i] >= 0:
            pos[k] = i
            rid[k] = run_of[i]
            k += 1
    return pos, rid


@njit(cache=True)
def _cmp_bytes(offsets, data, a, b):
    """strcmp of strings a and b of one Arrow string buffer: -1, 0, 1."""
    sa = offsets[a]
    la = offsets[a + 1] - sa
    sb = offsets[b]
    lb = offsets[b + 1] - sb
    for i in range(min(la, lb)):
        ca = data[sa + i]
        cb = data[sb + i]
        if ca != cb:
            return -1 if ca < cb else 1
    if la == lb:
        return 0
    return -1 if la < lb else 1


@njit(cache=True)
def order_ties(perm, positions, run_ids, local, int_ids, str_off, str_data, use_ints):
    """Within each tie run, order rows by doc id descending (insertion sort).

    ``positions`` (ascending, into ``perm``) with their ``run_ids``. ``local[k]`` indexes the
    doc of ``positions[k]`` in ``int_ids`` (compared through their decimal spelling) when
    ``use_ints``, else in the Arrow string buffers ``str_off``/``str_data`` (byte-wise).
    """
    m = positions.shape[0]
    a = 0
    while a < m:
        b = a + 1
        while b < m and run_ids[b] == run_ids[a]:
            b += 1
        for i in range(a + 1, b):
            row = perm[positions[i]]
            li = local[i]
            j = i - 1
            while j >= a:
                lj = local[j]
                if use_ints:
                    c = cmp_int_text(int_ids[li], int_ids[lj])
                else:
                    c = _cmp_bytes(str_off, str_data, li, lj)
                if c <= 0:
                    break
                perm[positions[j + 1]] = perm[positions[j]]
                local[j + 1] = lj
                j -= 1
            perm[positions[j + 1]] = row
            local[j + 1] = li
        a = b


@njit(cache=True, parallel=True)
def join_labels(perm, offsets, run_hash, q_hash, q_rel, q_start, q_end, labels, match, dup_at,
                n_threads):
    """Label each ranked row from its query's qrels (rows sorted by hash per query).

    ``labels[i]``: grade of ranked row ``perm[i]``, -1 if absent from the qrels, -2 if its
    grade is negative. ``match[i]``: the qrels position matched (for verification), or -1.
    ``dup_at[g]``: a position in group g whose doc hash repeats an earlier one, else -1.
    ``n_threads``: ``numba.get_num_threads()`` (one scratch table per thread).
    """
    ng = offsets.shape[0] - 1
    longest = 1
    for g in range(ng):
        longest = max(longest, offsets[g + 1] - offsets[g])
    width = 1
    while width < 2 * longest:
        width *= 2
    # one reusable open-addressing table (row + 1, 0 = empty) per thread
    tables = np.zeros((n_threads, width), dtype=np.int64)
    for g in prange(ng):
        s = offsets[g]
        e = offsets[g + 1]
        a0 = q_start[g]
        b0 = q_end[g]
        for i in range(s, e):
            h = run_hash[perm[i]]
            lo = a0
            hi = b0
            while lo < hi:
                mid = (lo + hi) >> 1
                if q_hash[mid] < h:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < b0 and q_hash[lo] == h:
                v = q_rel[lo]
                labels[i] = v if v >= 0 else -2
                match[i] = lo
            else:
                labels[i] = -1
                match[i] = -1
        # duplicate check: power-of-two open addressing over this group's rows
        dup_at[g] = -1
        size = 1
        while size < 2 * (e - s):
            size *= 2
        mask = size - 1
        table = tables[get_thread_id()]
        for k in range(size):
            table[k] = 0
        for i in range(s, e):
            h = run_hash[perm[i]]
            slot = (h ^ (h >> 29)) & mask
            while True:
                t = table[slot]
                if t == 0:
                    table[slot] = i + 1
                    break
                if run_hash[perm[t - 1]] == h:
                    dup_at[g] = i
                    break
                slot = (slot + 1) & mask
            if dup_at[g] >= 0:
                break


@njit(cache=True)
def truncate(labels, offsets, max_docs, judged_only):
    """Apply max_docs (top M by rank) and then judged_only (drop labels < 0); compact."""
    ng = offsets.shape[0] - 1
    new_off = np.zeros(ng + 1, dtype=np.int64)
    out = np.empty(labels.shape[0], dtype=np.int32)
    k = 0
    for g in range(ng):
        s = offsets[g]
        e = min(offsets[g + 1], s + max_docs)
        for i in range(s, e):
            v = labels[i]
            if judged_only and v < 0:
                continue
            out[k] = v
            k += 1
        new_off[g + 1] = k
    return out[:k], new_off


@njit(cache=True, parallel=True)
def sorted_grades(q_rel, q_start, q_end):
    """Judged grades (>= 0) of each qrels query, sorted descending, as flat array + offsets."""
    ng = q_start.shape[0]
    off = np.zeros(ng + 1, dtype=np.int64)
    for g in range(ng):
        c = 0
        for i in range(q_start[g], q_end[g]):
            if q_rel[i] >= 0:
                c += 1
        off[g + 1] = off[g] + c
    out = np.empty(off[ng], dtype=np.int32)
    for g in prange(ng):
        k = off[g]
        for i in range(q_start[g], q_end[g]):
            v = q_rel[i]
            if v >= 0:
                # insertion into the descending prefix out[off[g]:k]
                j = k - 1
                while j >= off[g] and out[j] < v:
                    out[j + 1] = out[j]
                    j -= 1
                out[j + 1] = v
                k += 1
    return out, off
