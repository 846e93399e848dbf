"""numba kernels behind :mod:`fasteval.prepare`: grouping, per-query sorting, hash joins.

Id columns reach the kernels as an *id column* tuple ``(is_int, ints, v8, v32, data,
base)``: integer ids as int64 values, text ids as Arrow string views (``v8``/``v32``: the
16-byte views as bytes and as four uint32; ``data``: the out-of-line bytes of all data
buffers, buffer ``b`` starting at ``base[b]``). Text is compared byte-wise from those
buffers, never copied into Python strings.

Doc ids are joined through 64-bit keys computed here from the views (:func:`inline_hash`
for ids of up to 12 bytes, :func:`long_hash` for longer ones, the value itself for
integers); every key match is confirmed by comparing the ids themselves, so a collision
can cost time but never change a result.

Score ties are broken by the doc id, descending, byte-wise (C ``strcmp``, trec_eval's
rule). Integer ids are compared through their decimal spelling, so the tie order is the
one trec_eval would give the same ids written as text.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from fasteval.kernels._borrow import borrow
from fasteval.kernels._jit import njit


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


_MASKS = np.array([0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF], dtype=np.uint64)

# The helpers below that run once per row take scalars only: a numba function that is
# handed arrays (even inlined) pays atomic reference-count updates on every call, which
# cost more than the comparison itself. Kernels unpack an id column once, at the top.


@njit(cache=True, inline="always")
def _inline_words(n, w1, w2, w3):
    """Text of an inline view (n <= 12 bytes, view words w1..w3) as bytes 0-7 and 8-11,
    with the padding masked off (Arrow leaves it unspecified). Little-endian: byte k of a
    word is bits 8k..8k+7."""
    lo = (np.uint64(w1) & _MASKS[min(n, 4)]) | (
        (np.uint64(w2) & _MASKS[min(max(n - 4, 0), 4)]) << np.uint64(32))
    hi = np.uint64(w3) & _MASKS[min(max(n - 8, 0), 4)]
    return lo, hi


@njit(cache=True, inline="always")
def view_eq(n, a1, a2, a3, m, b1, b2, b3):
    """Compare two string views (length and words 1-3): 1 equal, 0 different, 2 both
    out-of-line with equal length and prefix (the bytes must be compared)."""
    if n != m:
        return 0
    if a1 == b1 and a2 == b2 and a3 == b3:
        return 1  # the same 16 bytes: same inline text, or the same bytes in a buffer
    if n <= 12:
        la, ha = _inline_words(n, a1, a2, a3)
        lb, hb = _inline_words(n, b1, b2, b3)
        return 1 if la == lb and ha == hb else 0
    return 2 if a1 == b1 else 0


@njit(cache=True, inline="always")
def _sign(d):
    return 0 if d == 0 else (-1 if d < 0 else 1)


@njit(cache=True, inline="always")
def _bswap32(x):
    x = np.uint64(x)
    return ((x & np.uint64(0xFF)) << np.uint64(24)) | ((x & np.uint64(0xFF00)) << np.uint64(8)) | (
        (x >> np.uint64(8)) & np.uint64(0xFF00)) | ((x >> np.uint64(24)) & np.uint64(0xFF))


@njit(cache=True, inline="always")
def view_cmp(n, a1, a2, a3, m, b1, b2, b3):
    """strcmp order of two string views from their words: -1, 0, 1, or 2 when an
    out-of-line text must be read (the first four bytes are equal)."""
    k = min(n, m)
    x = _bswap32(np.uint64(a1) & _MASKS[min(k, 4)])
    y = _bswap32(np.uint64(b1) & _MASKS[min(k, 4)])
    if x != y:
        return -1 if x < y else 1
    if k <= 4:
        return _sign(n - m)
    if n > 12 or m > 12:
        return 2
    x = _bswap32(np.uint64(a2) & _MASKS[min(k - 4, 4)])
    y = _bswap32(np.uint64(b2) & _MASKS[min(k - 4, 4)])
    if x != y:
        return -1 if x < y else 1
    if k > 8:
        x = _bswap32(np.uint64(a3) & _MASKS[k - 8])
        y = _bswap32(np.uint64(b3) & _MASKS[k - 8])
        if x != y:
            return -1 if x < y else 1
    return _sign(n - m)


@njit(cache=True, inline="always")
def _mix(h):
    """Finaliser of a 64-bit hash (uint64 in, uint64 out)."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


@njit(cache=True, inline="always")
def inline_hash(n, w1, w2, w3):
    """Hash of an inline view's text (n <= 12)."""
    lo, hi = _inline_words(n, w1, w2, w3)
    return np.int64(_mix(lo ^ ((hi | (np.uint64(n) << np.uint64(32))) * np.uint64(
        0x9E3779B97F4A7C15))))


@njit(cache=True)
def long_hash(data, p, n):
    """Hash of ``n`` > 12 bytes at ``data[p:]`` (a different family from inline_hash:
    lengths never overlap)."""
    h = np.uint64(n) * np.uint64(0x9E3779B97F4A7C15)
    for k in range(0, n, 8):
        w = np.uint64(0)
        for b in range(min(8, n - k)):
            w |= np.uint64(data[p + k + b]) << np.uint64(8 * b)
        h = _mix(h ^ w)
    return np.int64(h)


@njit(cache=True)
def long_eq(da, pa, db, pb, n):
    """Bytes 4..n of two out-of-line strings equal (the prefixes already matched)."""
    for k in range(4, n):
        if da[pa + k] != db[pb + k]:
            return False
    return True


@njit(cache=True)
def text_cmp(v8a, va, da, ba, i, v8b, vb, db, bb, j):
    """strcmp order of text ``i`` of one column and ``j`` of another: -1, 0, 1."""
    n = np.int64(va[i, 0])
    m = np.int64(vb[j, 0])
    k = min(n, m)
    # the first four bytes are in word 1 of both layouts: compare them big-endian
    if k > 0:
        x = _bswap32(np.uint64(va[i, 1]) & _MASKS[min(k, 4)])
        y = _bswap32(np.uint64(vb[j, 1]) & _MASKS[min(k, 4)])
        if x != y:
            return -1 if x < y else 1
    pa = ba[va[i, 2]] + va[i, 3] if n > 12 else 0
    pb = bb[vb[j, 2]] + vb[j, 3] if m > 12 else 0
    for t in range(4, k):
        ca = da[pa + t] if n > 12 else v8a[i, 4 + t]
        cb = db[pb + t] if m > 12 else v8b[j, 4 + t]
        if ca != cb:
            return -1 if ca < cb else 1
    if n == m:
        return 0
    return -1 if n < m else 1


@njit(cache=True, inline="always")
def _text_eq(va, da, ba, i, vb, db, bb, j):
    """Text ``i`` of one view column (views ``va``, bytes ``da``, buffer starts ``ba``)
    equals text ``j`` of another: the views first, the out-of-line bytes when they must be.
    Hot loops hand it views from :func:`borrow` (no reference counts per call)."""
    r = view_eq(np.int64(va[i, 0]), va[i, 1], va[i, 2], va[i, 3], np.int64(vb[j, 0]), vb[j, 1],
                vb[j, 2], vb[j, 3])
    if r == 2:
        return long_eq(da, ba[va[i, 2]] + va[i, 3], db, bb[vb[j, 2]] + vb[j, 3],
                       np.int64(va[i, 0]))
    return r == 1


@njit(cache=True)
def id_eq(a, i, b, j):
    """Whether id ``i`` of column ``a`` equals id ``j`` of column ``b`` (not for hot loops)."""
    if a[0]:
        return a[1][i] == b[1][j]
    return _text_eq(a[3], a[4], a[5], i, b[3], b[4], b[5], j)


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
            same = _text_eq(v, data, base, i, v, data, base, i - 1)
        if not same:
            heads[k] = i
            k += 1
    return heads[:k].copy()


@njit(cache=True)
def dense_codes(col, order):
    """Codes of ids visited in sorted ``order``: equal ids get one code, codes increase
    with the order. Returns ``(codes, firsts)``: the code of every id (by position), and
    for each code the position of its first id in the order."""
    is_int, ints, _, v, data, base = col
    v, data, base = borrow(v), borrow(data), borrow(base)
    n = order.shape[0]
    codes = np.empty(n, dtype=np.int64)
    firsts = np.empty(n, dtype=np.int64)
    code = -1
    for i in range(n):
        r = order[i]
        same = False
        if i > 0:
            o = order[i - 1]
            if is_int:
                same = ints[r] == ints[o]
            else:
                same = _text_eq(v, data, base, r, v, data, base, o)
        if not same:
            code += 1
            firsts[code] = r
        codes[r] = code
    return codes, firsts[:code + 1]


@njit(cache=True)
def code_table(hashes):
    """Open-addressing table from key to code (``hashes[code]``, all distinct): slots hold
    ``code + 1``, 0 = empty. Returns ``(slots, shift, clash)``, ``clash`` telling whether two
    codes share a key."""
    n = hashes.shape[0]
    size, shift = _table_size(n)
    slots = np.zeros(size, dtype=np.int64)
    clash = False
    for c in range(n):
        h = hashes[c]
        slot = -1
        while True:
            slot, t = _probe(slots, hashes, h, shift, slot)
            if t == 0:
                break
            clash = True  # an earlier code with the same key
        slots[slot] = c + 1
    return slots, shift, clash


@njit(cache=True, nogil=True)
def id_keys(col, rows, start, out):
    """out[k] = the 64-bit key of the id at row ``rows[k]`` (an empty ``rows``: row
    ``start + k``), for every k of ``out``: the value of an integer id, :func:`inline_hash`
    or :func:`long_hash` of a text. Doc and query ids are all keyed here."""
    is_int, ints, _, v, data, base = col
    moved = rows.shape[0] > 0
    for k in range(out.shape[0]):
        r = rows[k] if moved else start + k
        if is_int:
            out[k] = ints[r]
        else:
            ln = np.int64(v[r, 0])
            if ln <= 12:
                out[k] = inline_hash(ln, v[r, 1], v[r, 2], v[r, 3])
            else:
                out[k] = long_hash(data, base[v[r, 2]] + v[r, 3], ln)


@njit(cache=True, nogil=True)
def lookup_ids(col, rows, slots, shift, table_key, table_col, out):
    """out[k] = the code of the id at row ``rows[k]`` of ``col`` in a table of ids (from
    :func:`code_table` over their :func:`id_keys`, ``table_col`` holding id ``c`` at row
    ``c``), -1 if absent. Every key match is confirmed on the ids themselves."""
    is_int, ints, _, v, data, base = col
    _, t_ints, _, tv, t_data, t_base = table_col
    v, data, base = borrow(v), borrow(data), borrow(base)
    tv, t_data, t_base = borrow(tv), borrow(t_data), borrow(t_base)
    slots, table_key = borrow(slots), borrow(table_key)
    keys = np.empty(rows.shape[0], dtype=np.int64)
    id_keys(col, rows, 0, keys)
    for k in range(rows.shape[0]):
        r = rows[k]
        h = keys[k]
        slot = -1
        while True:
            slot, t = _probe(slots, table_key, h, shift, slot)
            if t == 0 or ((t_ints[t - 1] == ints[r]) if is_int else _text_eq(
                    v, data, base, r, tv, t_data, t_base, t - 1)):
                break
        out[k] = t - 1


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


_SPREAD = 2
"""The per-query table of :func:`rank_and_label` has room for this many times the query's
rows over :func:`_table_size`'s minimum (so at most a quarter full): fewer collisions, fewer
mispredicted probes. On the 100k-query benchmark run (9.6 M rows, 100 a query, one thread) 14.0-14.7 ns
a row against 16.2-16.3 ns with the table half full; 8 times the rows gained no more."""


@njit(cache=True, inline="always")
def _table_size(count):
    """Slots (a power of two, at least twice ``count``) of an open-addressing table for
    ``count`` keys, and the shift that :func:`_slot` needs for it."""
    size = 2
    shift = 63
    while size < 2 * count:
        size *= 2
        shift -= 1
    return size, shift


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
                 np.zeros(_table_size(longest)[0], dtype=np.int64))


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
        size, shift = _table_size(e - s)
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
                slot, t = _probe(table, q_hash, h, shift, slot)
                if t == 0 or is_int or _text_eq(v, data, base, r, v, data, base,
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


@njit(cache=True, inline="always")
def _sort_slice_by_key(perm, s, e, key, kbuf, pscr, kscr):
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


@njit(cache=True, inline="always")
def _doc_before(x, y, is_int, ints, v8, v, data, base):
    """Row x's doc id sorts after row y's (so x ranks first among equal scores)."""
    if is_int:
        return cmp_int_text(ints[x], ints[y]) > 0
    c = view_cmp(np.int64(v[x, 0]), v[x, 1], v[x, 2], v[x, 3], np.int64(v[y, 0]), v[y, 1],
                 v[y, 2], v[y, 3])
    if c == 2:
        c = text_cmp(v8, v, data, base, x, v8, v, data, base, y)
    return c > 0


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
            while q >= a and _doc_before(x, perm[q], is_int, ints, v8, v, data, base):
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
                if _doc_before(perm[q], perm[p], is_int, ints, v8, v, data, base):
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
def _slot(h, shift):
    """Slot of a 64-bit key in a table of 2**(64 - shift) (Fibonacci hashing, so that
    integer ids with a common stride spread too)."""
    return np.int64((np.uint64(h) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(shift))


@njit(cache=True)
def _probe(table, keys, h, shift, slot):
    """The next slot on key ``h``'s probe path that is empty or holds an entry with key
    ``h``, and what it holds: ``(slot, t)``, ``t = 0`` for empty, else entry ``t - 1``.

    Every open-addressing table here holds ``i + 1`` for entry ``i`` (0 = empty) in its
    first ``2**(64 - shift)`` slots (see :func:`_table_size`), entry ``i`` having the key
    ``keys[i]``. The path starts at :func:`_slot` of ``h`` (``slot < 0``), else after
    ``slot``. A caller confirms a key match on the ids themselves and probes on when they
    differ::

        slot = -1
        while True:
            slot, t = _probe(table, keys, h, shift, slot)
            if t == 0 or same(t - 1):
                break
        # t == 0: absent (insert at slot); else entry t - 1

    Not inlined (one compiled copy; each loop calls it once): on the preparation kernels
    31-35 s of compile CPU became 28-29 s, with ranking and indexing as fast as with the
    probe loop written out. ``table`` and ``keys`` are borrowed views in the per-row loops
    (no reference counts per call).
    """
    mask = (np.int64(1) << np.int64(64 - shift)) - 1
    slot = _slot(h, shift) if slot < 0 else (slot + 1) & mask
    while True:
        t = table[slot]
        if t == 0 or keys[t - 1] == h:
            return slot, t
        slot = (slot + 1) & mask


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
    width = _table_size(_SPREAD * longest)[0]
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
    pp = borrow(pp)
    kbuf = borrow(kbuf)
    pscr = borrow(pscr)
    kscr = borrow(kscr)
    table = borrow(table)
    hbuf = borrow(hbuf)
    perm = borrow(perm)
    key = borrow(key)
    labels = borrow(labels)
    d_ints = borrow(d_ints)
    d_v8 = borrow(d_v8)
    dv = borrow(dv)
    d_data = borrow(d_data)
    d_base = borrow(d_base)
    q_ints = borrow(q_ints)
    qv = borrow(qv)
    q_data = borrow(q_data)
    q_base = borrow(q_base)
    q_hash = borrow(q_hash)
    q_rel = borrow(q_rel)
    q_row = borrow(q_row)
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
            ties = _sort_slice_by_key(pp, 0, n, key, kbuf, pscr, kscr)
            i = 0 if ties else n
            while i < n:  # runs of equal keys: doc id descending
                ki = key[pp[i]]
                j = i + 1
                while j < n and key[pp[j]] == ki:
                    j += 1
                if j - i > 1:
                    sort_tie_run(pp, i, j, pscr, d_int, d_ints, d_v8, dv, d_data, d_base)
                i = j
        # the query's docs go into an open-addressing table (rank + 1; 0 = empty), which
        # finds repeated docs; then each judged doc of the query is looked up in it. Equal
        # keys are confirmed on the ids themselves.
        size, shift = _table_size(_SPREAD * n)
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
                slot, t = _probe(table, hbuf, h, shift, slot)
                if t == 0 or d_int or _text_eq(dv, d_data, d_base, row, dv, d_data, d_base,
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
                slot, t = _probe(table, hbuf, h, shift, slot)
                if t == 0 or ((d_ints[pp[t - 1]] == q_ints[qr]) if d_int else _text_eq(
                        dv, d_data, d_base, pp[t - 1], qv, q_data, q_base, qr)):
                    break
            if t != 0:
                v = q_rel[qr]
                labels[o + t - 1] = v if v >= 0 else -2


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
