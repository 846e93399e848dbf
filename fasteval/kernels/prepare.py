"""numba kernels behind :mod:`fasteval.prepare`: hashing, grouping, per-query sorting, joins.

Document ids reach the kernels either as int64 values or as the two buffers of an Arrow
``large_string`` array (``offsets: int64``, ``data: uint8``). Byte-wise comparison of the
buffers is exactly C's ``strcmp`` order, which trec_eval uses to break score ties
(higher docno first). Integer ids are compared through their decimal spelling, so the
tie order is the one trec_eval would give the same ids written as text.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


@njit(cache=True, parallel=True)
def hash_strings(offsets, data, out):
    """FNV-1a 64-bit hash of each string (as int64)."""
    n = offsets.shape[0] - 1
    for i in prange(n):
        h = _FNV_OFFSET
        for j in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[j])) * _FNV_PRIME
        out[i] = np.int64(h)


@njit(cache=True)
def _cmp_bytes(offsets, data, a, b):
    """strcmp of strings a and b: -1, 0, 1."""
    sa = offsets[a]
    la = offsets[a + 1] - sa
    sb = offsets[b]
    lb = offsets[b + 1] - sb
    m = min(la, lb)
    for i in range(m):
        ca = data[sa + i]
        cb = data[sb + i]
        if ca != cb:
            return -1 if ca < cb else 1
    if la == lb:
        return 0
    return -1 if la < lb else 1


@njit(cache=True)
def _cmp_bytes2(o1, d1, a, o2, d2, b):
    """strcmp between string a of one buffer and string b of another."""
    sa = o1[a]
    la = o1[a + 1] - sa
    sb = o2[b]
    lb = o2[b + 1] - sb
    m = min(la, lb)
    for i in range(m):
        ca = d1[sa + i]
        cb = d2[sb + i]
        if ca != cb:
            return -1 if ca < cb else 1
    if la == lb:
        return 0
    return -1 if la < lb else 1


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
def _cmp_int_text(a, b):
    """Compare two int64 ids as their decimal strings would compare under strcmp."""
    if a == b:
        return 0
    if (a < 0) != (b < 0):
        # '-' (0x2d) sorts before every digit
        return -1 if a < 0 else 1
    if a < 0:
        a = -a
        b = -b
    la = _ndigits(a)
    lb = _ndigits(b)
    m = min(la, lb)
    pa = 1
    for _ in range(la - 1):
        pa *= 10
    pb = 1
    for _ in range(lb - 1):
        pb *= 10
    for _ in range(m):
        da = (a // pa) % 10
        db = (b // pb) % 10
        if da != db:
            return -1 if da < db else 1
        pa //= 10
        pb //= 10
    if la == lb:
        return 0
    return -1 if la < lb else 1


@njit(cache=True)
def _doc_cmp(is_text, ints, offsets, data, a, b):
    if is_text:
        return _cmp_bytes(offsets, data, a, b)
    return _cmp_int_text(ints[a], ints[b])


@njit(cache=True)
def _before(key, is_text, ints, offsets, data, a, b):
    """True when row a ranks strictly before row b: higher key, then higher docno."""
    ka = key[a]
    kb = key[b]
    if ka > kb:
        return True
    if ka < kb:
        return False
    return _doc_cmp(is_text, ints, offsets, data, a, b) > 0


@njit(cache=True)
def _sort_slice(perm, scratch, s, e, key, is_text, ints, offsets, data):
    """Stable sort of perm[s:e] into rank order (merge sort, insertion sort for short runs)."""
    n = e - s
    # already in order? (dumps usually are)
    ordered = True
    for i in range(s + 1, e):
        if _before(key, is_text, ints, offsets, data, perm[i], perm[i - 1]):
            ordered = False
            break
    if ordered:
        return
    run = 16
    for a in range(s, e, run):
        b = min(a + run, e)
        for i in range(a + 1, b):
            x = perm[i]
            j = i - 1
            while j >= a and _before(key, is_text, ints, offsets, data, x, perm[j]):
                perm[j + 1] = perm[j]
                j -= 1
            perm[j + 1] = x
    width = run
    src = perm
    dst = scratch
    passes = 0
    while width < n:
        for a in range(s, e, 2 * width):
            mid = min(a + width, e)
            b = min(a + 2 * width, e)
            i = a
            j = mid
            k = a
            while i < mid and j < b:
                if _before(key, is_text, ints, offsets, data, src[j], src[i]):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < b:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        width *= 2
        passes += 1
    if passes % 2 == 1:
        for i in range(s, e):
            perm[i] = scratch[i]


@njit(cache=True)
def group_rows(codes, n_groups):
    """Counting sort of row indices by group code (stable); code < 0 rows are dropped.

    Returns (perm, offsets): rows of group g are perm[offsets[g]:offsets[g+1]] in input order.
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


@njit(cache=True, parallel=True)
def sort_groups(perm, offsets, key, is_text, ints, str_offsets, data, do_sort):
    """Sort every group's rows into rank order in place."""
    scratch = np.empty_like(perm)
    ng = offsets.shape[0] - 1
    if do_sort:
        for g in prange(ng):
            _sort_slice(perm, scratch, offsets[g], offsets[g + 1], key, is_text, ints,
                        str_offsets, data)


@njit(cache=True, parallel=True)
def join_labels(perm, offsets, group_qrels, run_hash, is_text, r_ints, r_off, r_data,
                q_hash, q_rel, q_start, q_end, q_ints, q_off, q_data, q_row, labels, dup_at):
    """Label each ranked row from its query's qrels; flag duplicated documents.

    For each group g (a qrels query, ``group_qrels[g]``), the qrels rows
    ``q_start[g]:q_end[g]`` are sorted by hash. ``labels[i]`` gets the grade of ranked row
    ``perm[i]``, -1 when absent from the qrels, -2 when its grade is negative. ``dup_at[g]``
    is set to the position of a repeated document in the group, else -1.
    """
    ng = offsets.shape[0] - 1
    hs = np.empty(perm.shape[0], dtype=np.int64)
    for g in prange(ng):
        s = offsets[g]
        e = offsets[g + 1]
        a0 = q_start[g]
        b0 = q_end[g]
        for i in range(s, e):
            r = perm[i]
            h = run_hash[r]
            # lower bound of h in q_hash[a0:b0]
            lo = a0
            hi = b0
            while lo < hi:
                mid = (lo + hi) >> 1
                if q_hash[mid] < h:
                    lo = mid + 1
                else:
                    hi = mid
            lab = -1
            k = lo
            while k < b0 and q_hash[k] == h:
                qr = q_row[k]
                same = True
                if is_text:
                    same = _cmp_bytes2(r_off, r_data, r, q_off, q_data, qr) == 0
                else:
                    same = r_ints[r] == q_ints[qr]
                if same:
                    v = q_rel[k]
                    lab = v if v >= 0 else -2
                    break
                k += 1
            labels[i] = lab
            hs[i] = h
        # duplicate check: sort the group's hashes, compare neighbours
        dup_at[g] = -1
        if e - s > 1:
            seg = hs[s:e]
            seg.sort()
            for i in range(1, e - s):
                if seg[i] == seg[i - 1]:
                    # verify with the real ids (hash collisions are not duplicates)
                    for a in range(s, e):
                        if run_hash[perm[a]] != seg[i]:
                            continue
                        for b in range(a + 1, e):
                            if run_hash[perm[b]] != seg[i]:
                                continue
                            if is_text:
                                eq = _cmp_bytes(r_off, r_data, perm[a], perm[b]) == 0
                            else:
                                eq = r_ints[perm[a]] == r_ints[perm[b]]
                            if eq:
                                dup_at[g] = b
                                break
                        if dup_at[g] >= 0:
                            break
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


@njit(cache=True)
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
    for g in range(ng):
        k = off[g]
        for i in range(q_start[g], q_end[g]):
            if q_rel[i] >= 0:
                out[k] = q_rel[i]
                k += 1
        seg = out[off[g]:off[g + 1]]
        seg.sort()
        seg[:] = seg[::-1].copy()
    return out, off
