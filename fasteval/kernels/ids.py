"""Ids inside the kernels: 64-bit keys, byte-wise text comparison, the hash-table probe.

Id columns reach the kernels as an *id column* tuple ``(is_int, ints, v8, v32, data,
base)``: integer ids as int64 values, text ids as Arrow string views (``v8``/``v32``: the
16-byte views as bytes and as four uint32; ``data``: the out-of-line bytes of all data
buffers, buffer ``b`` starting at ``base[b]``). Text is compared byte-wise from those
buffers, never copied into Python strings.

Ids are joined through 64-bit keys computed here from the views (:func:`inline_hash`
for ids of up to 12 bytes, :func:`long_hash` for longer ones, the value itself for
integers), in open-addressing tables (:func:`table_size`, :func:`probe`); every key match
is confirmed by comparing the ids themselves, so a collision can cost time but never
change a result. Integer ids compare through their decimal spelling (:func:`cmp_int_text`),
so the order of ties is the one trec_eval would give the same ids written as text.
"""

from __future__ import annotations

import numpy as np

from fasteval._jit import njit
from fasteval.kernels._borrow import borrow


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
def doc_before(x, y, is_int, ints, v8, v, data, base):
    """Row x's doc id sorts after row y's (so x ranks first among equal scores)."""
    if is_int:
        return cmp_int_text(ints[x], ints[y]) > 0
    c = view_cmp(np.int64(v[x, 0]), v[x, 1], v[x, 2], v[x, 3], np.int64(v[y, 0]), v[y, 1],
                 v[y, 2], v[y, 3])
    if c == 2:
        c = text_cmp(v8, v, data, base, x, v8, v, data, base, y)
    return c > 0


@njit(cache=True, inline="always")
def text_eq(va, da, ba, i, vb, db, bb, j):
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
    return text_eq(a[3], a[4], a[5], i, b[3], b[4], b[5], j)


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


@njit(cache=True, inline="always")
def table_size(count):
    """Slots (a power of two, at least twice ``count``) of an open-addressing table for
    ``count`` keys, and the shift that :func:`hash_slot` needs for it."""
    size = 2
    shift = 63
    while size < 2 * count:
        size *= 2
        shift -= 1
    return size, shift


@njit(cache=True, inline="always")
def hash_slot(h, shift):
    """Slot of a 64-bit key in a table of 2**(64 - shift) (Fibonacci hashing, so that
    integer ids with a common stride spread too)."""
    return np.int64((np.uint64(h) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(shift))


@njit(cache=True)
def probe(table, keys, h, shift, slot):
    """The next slot on key ``h``'s probe path that is empty or holds an entry with key
    ``h``, and what it holds: ``(slot, t)``, ``t = 0`` for empty, else entry ``t - 1``.

    Every open-addressing table here holds ``i + 1`` for entry ``i`` (0 = empty) in its
    first ``2**(64 - shift)`` slots (see :func:`table_size`), entry ``i`` having the key
    ``keys[i]``. The path starts at :func:`hash_slot` of ``h`` (``slot < 0``), else after
    ``slot``. A caller confirms a key match on the ids themselves and probes on when they
    differ::

        slot = -1
        while True:
            slot, t = probe(table, keys, h, shift, slot)
            if t == 0 or same(t - 1):
                break
        # t == 0: absent (insert at slot); else entry t - 1

    Not inlined (one compiled copy; each loop calls it once): on the preparation kernels
    31-35 s of compile CPU became 28-29 s, with ranking and indexing as fast as with the
    probe loop written out. ``table`` and ``keys`` are borrowed views in the per-row loops
    (no reference counts per call).
    """
    mask = (np.int64(1) << np.int64(64 - shift)) - 1
    slot = hash_slot(h, shift) if slot < 0 else (slot + 1) & mask
    while True:
        t = table[slot]
        if t == 0 or keys[t - 1] == h:
            return slot, t
        slot = (slot + 1) & mask


@njit(cache=True)
def code_table(hashes):
    """Open-addressing table from key to code (``hashes[code]``, all distinct): slots hold
    ``code + 1``, 0 = empty. Returns ``(slots, shift, clash)``, ``clash`` telling whether two
    codes share a key."""
    n = hashes.shape[0]
    size, shift = table_size(n)
    slots = np.zeros(size, dtype=np.int64)
    clash = False
    for c in range(n):
        h = hashes[c]
        slot = -1
        while True:
            slot, t = probe(slots, hashes, h, shift, slot)
            if t == 0:
                break
            clash = True  # an earlier code with the same key
        slots[slot] = c + 1
    return slots, shift, clash


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
            slot, t = probe(slots, table_key, h, shift, slot)
            if t == 0 or ((t_ints[t - 1] == ints[r]) if is_int else text_eq(
                    v, data, base, r, tv, t_data, t_base, t - 1)):
                break
        out[k] = t - 1


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
                same = text_eq(v, data, base, r, v, data, base, o)
        if not same:
            code += 1
            firsts[code] = r
        codes[r] = code
    return codes, firsts[:code + 1]
