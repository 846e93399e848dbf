"""Grouped numba kernels for the Haystack-compatible document evaluators.

Each question owns a slice of the flat ground-truth arrays and a slice of the
flat retrieved arrays (``gt_offsets`` / ``ret_offsets``, int64, length
``n_questions + 1``).  A document is reduced to an int64 comparison ``key``
(equal keys mean equal comparison values within a question) and a ``flag``:

* ``FLAG_VALID`` (1): the comparison value is not ``None``;
* ``FLAG_EMPTY`` (2): the value is the empty string (Haystack's recall ignores it,
  its MRR / MAP / NDCG do not).

One walk down each ranking computes all five measures at once (columns of
``MEASURES``): single-hit recall, multi-hit recall, reciprocal rank, average
precision and NDCG, crediting each distinct ground-truth value at most once.

Examples
--------
>>> import numpy as np
>>> off = np.array([0, 2], dtype=np.int64)
>>> gt_key = np.array([7, 9], dtype=np.int64)
>>> flags = np.ones(2, dtype=np.uint8)
>>> ret_off = np.array([0, 3], dtype=np.int64)
>>> ret_key = np.array([7, 8, 9], dtype=np.int64)
>>> out = document_measures(off, gt_key, flags, np.ones(2), ret_off, ret_key,
...                         np.ones(3, dtype=np.uint8), 0)
>>> [round(v, 4) for v in out.scores[0].tolist()]
[1.0, 1.0, 1.0, 0.8333, 0.9197]
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import prange

from fasteval._jit import njit
from fasteval.kernels._borrow import borrow

MEASURES: tuple[str, ...] = ("recall_single_hit", "recall_multi_hit", "mrr", "map", "ndcg")
FLAG_VALID = np.uint8(1)
FLAG_EMPTY = np.uint8(2)


class DocumentKernelResult(NamedTuple):
    """Output of :func:`document_measures`.

    ``scores[q, m]`` is measure ``MEASURES[m]`` of question ``q``; ``gt_rep[i]`` is
    the flat index of the ground-truth document that stands for document ``i``'s
    value (-1 when its value is ``None``); ``ret_match[j]`` is the flat ground-truth
    index that retrieved document ``j`` matched (-1 when none).  The two index arrays
    let the caller verify every key equality the kernel relied on. ``ideal_positive[q]``:
    question ``q``'s ideal DCG is above 0 (else its nDCG is 0 by definition; Haystack
    returns the integer ``0`` there).
    """

    scores: np.ndarray
    gt_rep: np.ndarray
    ret_match: np.ndarray
    ideal_positive: np.ndarray


@njit(cache=True, inline="always")
def _key_after(keys, a, b):  # pragma: no cover - numba
    # (key, index) order: equal keys keep their input order, so the heap sort is stable
    # and repeated ground-truth values collapse in document order (NaN gains depend on it)
    return keys[a] > keys[b] or (keys[a] == keys[b] and a > b)


@njit(cache=True)
def _sift_down(order, keys, start, root, end):  # pragma: no cover - numba
    # max-heap on (keys[order[start + i]], order[start + i]) for i in [0, end)
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and _key_after(keys, order[start + child + 1], order[start + child]):
            child += 1
        if _key_after(keys, order[start + child], order[start + root]):
            tmp = order[start + root]
            order[start + root] = order[start + child]
            order[start + child] = tmp
            root = child
        else:
            return


@njit(cache=True)
def _sort_by_key(order, keys, start, n):  # pragma: no cover - numba
    """Sort ``order[start:start+n]`` in place by ``keys[order[.]]``, stably (equal keys keep
    their order; no allocation)."""
    if n <= 24:
        for i in range(start + 1, start + n):
            item = order[i]
            k = keys[item]
            j = i - 1
            while j >= start and keys[order[j]] > k:
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = item
        return
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(order, keys, start, root, n)
    for end in range(n - 1, 0, -1):
        tmp = order[start]
        order[start] = order[start + end]
        order[start + end] = tmp
        _sift_down(order, keys, start, 0, end)


@njit(cache=True)
def _sort_desc(values, start, n):  # pragma: no cover - numba
    """Sort ``values[start:start+n]`` descending in place (shell sort, no allocation)."""
    gap = 1
    while gap < n // 3:
        gap = 3 * gap + 1
    while gap >= 1:
        for i in range(start + gap, start + n):
            v = values[i]
            j = i
            while j - gap >= start and values[j - gap] < v:
                values[j] = values[j - gap]
                j -= gap
            values[j] = v
        gap //= 3


@njit(cache=True, parallel=True)
def _document_kernel(gt_offsets, gt_key, gt_flag, gt_gain, ret_offsets, ret_key, ret_flag, top_k, scores,
                     gt_rep, ret_match, order, slot_key, slot_gain, used, ideal_positive):  # pragma: no cover - numba
    n_q = gt_offsets.shape[0] - 1
    for q in prange(n_q):
        g0 = gt_offsets[q]
        u, seen, n_recall = _collapse(g0, gt_offsets[q + 1], gt_key, gt_flag, gt_gain, gt_rep, order,
                                      slot_key, slot_gain, used)
        # walk the ranking
        r0 = ret_offsets[q]
        r1 = ret_offsets[q + 1]
        if top_k > 0 and r1 - r0 > top_k:
            r_end = r0 + top_k
        else:
            r_end = r1
        for r in range(r0, r1):
            ret_match[r] = -1
        rr = 0.0
        hits = 0
        recall_hits = 0
        ap_num = 0.0
        dcg = 0.0
        for r in range(r0, r_end):
            if not (ret_flag[r] & 1):
                continue
            k = ret_key[r]
            if not ((seen >> np.uint64(k & 63)) & np.uint64(1)):
                continue
            lo = _find_slot(slot_key, g0, u, k)
            if lo < 0:
                continue
            ret_match[r] = order[g0 + lo]
            rank = r - r0
            if rr == 0.0:
                rr = 1.0 / (rank + 1)
            if not used[g0 + lo]:
                used[g0 + lo] = True
                hits += 1
                ap_num += hits / (rank + 1)
                dcg += slot_gain[g0 + lo] / math.log2(rank + 2)
                if not (gt_flag[order[g0 + lo]] & 2):
                    recall_hits += 1
        # ideal DCG: distinct gains, largest first
        _sort_desc(slot_gain, g0, u)
        idcg = 0.0
        for s in range(u):
            idcg += slot_gain[g0 + s] / math.log2(s + 2)
        scores[q, 0] = 1.0 if recall_hits > 0 else 0.0
        scores[q, 1] = recall_hits / n_recall if n_recall > 0 else 0.0
        scores[q, 2] = rr
        scores[q, 3] = ap_num / u if u > 0 else 0.0
        scores[q, 4] = dcg / idcg if idcg > 0 else 0.0
        ideal_positive[q] = idcg > 0


@njit(cache=True, inline="always")
def _collapse(g0, g1, gt_key, gt_flag, gt_gain, gt_rep, order, slot_key, slot_gain, used):  # pragma: no cover - numba
    """Collapse a question's ground-truth documents ``g0:g1`` with a value into slots
    ``g0 .. g0 + u - 1`` sorted by key (``order[slot]``: the representative, ``slot_gain``:
    the largest gain of the key); returns ``u``, a bit per key's low 6 bits (most misses
    stop there) and the number of keys recall counts (not the empty string)."""
    # collect the documents with a value, sorted by key
    m = 0
    for i in range(g0, g1):
        gt_rep[i] = -1
        if gt_flag[i] & 1:
            order[g0 + m] = i
            m += 1
    _sort_by_key(order, gt_key, g0, m)
    u = 0
    seen = np.uint64(0)
    n_recall = 0
    i = 0
    while i < m:
        rep = order[g0 + i]
        k = gt_key[rep]
        gain = gt_gain[rep]
        gt_rep[rep] = rep
        j = i + 1
        while j < m and gt_key[order[g0 + j]] == k:
            other = order[g0 + j]
            gt_rep[other] = rep
            if gt_gain[other] > gain:
                gain = gt_gain[other]
            j += 1
        order[g0 + u] = rep
        slot_key[g0 + u] = k
        slot_gain[g0 + u] = gain
        used[g0 + u] = False
        if not (gt_flag[rep] & 2):
            n_recall += 1
        seen |= np.uint64(1) << np.uint64(k & 63)
        u += 1
        i = j
    return u, seen, n_recall


@njit(cache=True, inline="always")
def _find_slot(slot_key, g0, u, k):  # pragma: no cover - numba
    """The slot (``0 .. u - 1``) of key ``k`` among the sorted ``slot_key[g0:g0 + u]``; -1
    when none holds it."""
    if u <= 16:
        # short lists: a branch-free scan of contiguous keys beats bisection
        lo = u
        for s in range(u):
            if slot_key[g0 + s] == k:
                lo = s
        return lo if lo < u else -1
    lo = 0
    hi = u
    while lo < hi:
        mid = (lo + hi) >> 1
        if slot_key[g0 + mid] < k:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < u and slot_key[g0 + lo] == k else -1


def document_measures(gt_offsets: np.ndarray, gt_key: np.ndarray, gt_flag: np.ndarray,
                      gt_gain: np.ndarray, ret_offsets: np.ndarray, ret_key: np.ndarray,
                      ret_flag: np.ndarray, top_k: int = 0) -> DocumentKernelResult:
    """Score every question for all of :data:`MEASURES` in one grouped pass.

    Parameters
    ----------
    gt_offsets, ret_offsets : numpy.ndarray
        int64 offsets, length ``n_questions + 1``.
    gt_key, ret_key : numpy.ndarray
        int64 comparison keys of the flat ground-truth / retrieved documents.
    gt_flag, ret_flag : numpy.ndarray
        uint8 flags (``FLAG_VALID``, ``FLAG_EMPTY``).
    gt_gain : numpy.ndarray
        float64 relevance of each ground-truth document (1.0 for binary relevance).
    top_k : int
        Only the first ``top_k`` retrieved documents count; ``0`` keeps them all.

    Returns
    -------
    DocumentKernelResult

    Examples
    --------
    >>> import numpy as np
    >>> res = document_measures(np.array([0, 1]), np.array([5]), np.array([1], np.uint8),
    ...                         np.array([1.0]), np.array([0, 2]), np.array([4, 5]),
    ...                         np.array([1, 1], np.uint8))
    >>> res.scores[0].tolist()
    [1.0, 1.0, 0.5, 0.5, 0.6309297535714575]
    """
    gt_offsets = np.ascontiguousarray(gt_offsets, dtype=np.int64)
    ret_offsets = np.ascontiguousarray(ret_offsets, dtype=np.int64)
    gt_key = np.ascontiguousarray(gt_key, dtype=np.int64)
    ret_key = np.ascontiguousarray(ret_key, dtype=np.int64)
    gt_flag = np.ascontiguousarray(gt_flag, dtype=np.uint8)
    ret_flag = np.ascontiguousarray(ret_flag, dtype=np.uint8)
    gt_gain = np.ascontiguousarray(gt_gain, dtype=np.float64)
    n_q = gt_offsets.shape[0] - 1
    n_gt = gt_key.shape[0]
    scores = np.empty((n_q, len(MEASURES)), dtype=np.float64)
    gt_rep = np.empty(n_gt, dtype=np.int64)
    ret_match = np.empty(ret_key.shape[0], dtype=np.int64)
    order = np.empty(n_gt, dtype=np.int64)
    slot_key = np.empty(n_gt, dtype=np.int64)
    slot_gain = np.empty(n_gt, dtype=np.float64)
    used = np.empty(n_gt, dtype=np.bool_)
    ideal_positive = np.empty(n_q, dtype=np.bool_)
    _document_kernel(
        gt_offsets, gt_key, gt_flag, gt_gain, ret_offsets, ret_key, ret_flag, int(top_k),
        scores, gt_rep, ret_match, order, slot_key, slot_gain, used, ideal_positive,
    )
    return DocumentKernelResult(scores, gt_rep, ret_match, ideal_positive)


# -- keys of texts packed end to end (the evaluators' fast path for string values) ---------
_K = np.uint64(0x9E3779B97F4A7C15)
_NO_BYTES = np.zeros(0, dtype=np.uint8)  # "the words are padded" (see _load8_bounded)


@njit(cache=True, inline="always")
def _finish(h):  # pragma: no cover - numba
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


@njit(cache=True, inline="always")
def _load8(words, p):  # pragma: no cover - numba
    """The 8 bytes at byte position ``p`` of ``words`` (little-endian; ``words`` is padded)."""
    q = p >> 3
    r = p & 7
    if r == 0:
        return words[q]
    s = np.uint64(8 * r)
    return (words[q] >> s) | (words[q + 1] << (np.uint64(64) - s))


@njit(cache=True)
def split_text_keys(words, nbytes, starts, lens, keys, flags):  # pragma: no cover - numba
    """Split bytes ``0:nbytes`` of ``words`` (a uint64 view of a byte buffer with at least
    8 zero bytes of padding) at each 0 byte into ``keys.shape[0]`` texts: their ``starts``,
    ``lens``, 64-bit keys (equal texts, equal keys) and flags (``FLAG_VALID``, with
    ``FLAG_EMPTY`` for the empty text). One pass, eight bytes at a time.

    Returns False when the bytes hold more 0 bytes than separators (a text with a NUL
    character); the outputs are then meaningless.
    """
    n = keys.shape[0]
    ones = np.uint64(0x0101010101010101)
    highs = np.uint64(0x8080808080808080)
    order = np.uint64(0x0706050403020100)
    p = 0
    for i in range(n):
        start = p
        h = np.uint64(0)
        while True:
            w = _load8(words, p)
            z = (w - ones) & ~w & highs
            if z != 0:  # the lowest flagged byte is the first 0 byte
                low = (z & (~z + np.uint64(1))) >> np.uint64(7)
                b = 7 - np.int64((low * order) >> np.uint64(56))
                if b > 0:
                    h = (h ^ (w & ((np.uint64(1) << np.uint64(8 * b)) - np.uint64(1)))) * _K
                    h ^= h >> np.uint64(29)
                p += b
                break
            h = (h ^ w) * _K
            h ^= h >> np.uint64(29)
            p += 8
        ln = p - start
        starts[i] = start
        lens[i] = ln
        keys[i] = np.int64(_finish(h ^ (np.uint64(ln) * _K)))
        flags[i] = 3 if ln == 0 else 1
        p += 1  # the separator
    return n == 0 or p - 1 == nbytes


@njit(cache=True)
def texts_equal(words_a, starts_a, lens_a, ia, words_b, starts_b, lens_b, ib):  # pragma: no cover
    """Whether text ``ia[k]`` of buffer a equals text ``ib[k]`` of buffer b, for every k."""
    for k in range(ia.shape[0]):
        i = ia[k]
        j = ib[k]
        n = lens_a[i]
        if lens_b[j] != n:
            return False
        if not _bytes_equal(words_a, _NO_BYTES, starts_a[i], words_b, _NO_BYTES, starts_b[j], n):
            return False
    return True


# -- keys of an Arrow string column (offsets + bytes), for the table API ----------------------
@njit(cache=True, inline="always")
def _load8_bounded(words, data, p):  # pragma: no cover - numba
    """:func:`_load8` on a buffer without padding: bytes past its end read as 0. An empty
    ``data`` stands for a padded buffer (``words`` reach 8 bytes past every text)."""
    q = p >> 3
    if q + 1 < words.shape[0] or data.shape[0] == 0:
        return _load8(words, p)
    w = np.uint64(0)
    for b in range(8):
        if p + b < data.shape[0]:
            w |= np.uint64(data[p + b]) << np.uint64(8 * b)
    return w


@njit(cache=True, inline="always")
def _bytes_equal(wa, da, pa, wb, db, pb, n):  # pragma: no cover - numba
    """Whether the ``n`` bytes at ``pa`` of buffer a equal the ``n`` at ``pb`` of buffer b,
    compared eight at a time (``w*``: the buffer's whole words, ``d*``: its bytes, or empty
    for a padded buffer; see :func:`_load8_bounded`)."""
    m = 0
    while m + 8 <= n:
        if _load8_bounded(wa, da, pa + m) != _load8_bounded(wb, db, pb + m):
            return False
        m += 8
    if m < n:
        mask = (np.uint64(1) << np.uint64(8 * (n - m))) - np.uint64(1)
        return ((_load8_bounded(wa, da, pa + m) ^ _load8_bounded(wb, db, pb + m)) & mask) == 0
    return True


@njit(cache=True, inline="always")
def _bounded_hash(words, data, start, n):  # pragma: no cover - numba
    h = np.uint64(0)
    k = start
    end = start + n
    while k + 8 <= end:
        h = (h ^ _load8_bounded(words, data, k)) * _K
        h ^= h >> np.uint64(29)
        k += 8
    if k < end:
        mask = (np.uint64(1) << np.uint64(8 * (end - k))) - np.uint64(1)
        h = (h ^ (_load8_bounded(words, data, k) & mask)) * _K
        h ^= h >> np.uint64(29)
    return np.int64(_finish(h ^ (np.uint64(n) * _K)))


@njit(cache=True, parallel=True)
def arrow_text_keys(offsets, words, data, valid, keys, flags):  # pragma: no cover - numba
    """Keys and flags of the strings of an Arrow (large_)string column: string ``i`` is
    ``data[offsets[i]:offsets[i + 1]]``; ``words`` is the uint64 view of ``data``'s whole
    words; ``valid`` is empty (no nulls) or False at nulls. Flags as :func:`split_text_keys`
    gives them, 0 for nulls."""
    words, data = borrow(words), borrow(data)
    n = keys.shape[0]
    check = valid.shape[0] > 0
    for i in prange(n):
        if check and not valid[i]:
            keys[i] = 0
            flags[i] = 0
            continue
        s = offsets[i]
        ln = offsets[i + 1] - s
        keys[i] = _bounded_hash(words, data, s, ln)
        flags[i] = 3 if ln == 0 else 1


@njit(cache=True)
def arrow_texts_equal(off_a, words_a, data_a, ia, off_b, words_b, data_b, ib):  # pragma: no cover
    """Whether string ``ia[k]`` of column a equals string ``ib[k]`` of column b, every k."""
    words_a, data_a, words_b, data_b = borrow(words_a), borrow(data_a), borrow(words_b), borrow(data_b)
    for k in range(ia.shape[0]):
        i = ia[k]
        j = ib[k]
        pa = off_a[i]
        pb = off_b[j]
        n = off_a[i + 1] - pa
        if off_b[j + 1] - pb != n or not _bytes_equal(words_a, data_a, pa, words_b, data_b, pb, n):
            return False
    return True


# -- keys of an Arrow string_view column (16-byte views; texts of <= 12 bytes inline) ----------
_LOW32 = np.uint64(0xFFFFFFFF)


@njit(cache=True, inline="always")
def _inline_words(v0, v1, n):  # pragma: no cover - numba
    """The view's words with the bytes past an inline text's length cleared."""
    if n <= 4:
        keep = np.uint64(32 + 8 * n)
        v0 &= (np.uint64(1) << keep) - np.uint64(1) if keep < 64 else ~np.uint64(0)
        return v0, np.uint64(0)
    if n < 12:
        v1 &= (np.uint64(1) << np.uint64(8 * (n - 4))) - np.uint64(1)
    return v0, v1


@njit(cache=True, inline="always")
def _view_start(v1, base):  # pragma: no cover - numba
    return base[np.int64(v1 & _LOW32)] + np.int64(v1 >> np.uint64(32))


@njit(cache=True, parallel=True)
def view_text_keys(views, base, words, data, valid, keys, flags):  # pragma: no cover - numba
    """Keys and flags of an Arrow string_view column: ``views`` is its (n, 2) uint64 view
    words; texts longer than 12 bytes lie at ``base[buffer] + offset`` of ``data`` (the data
    buffers put end to end; ``words`` its uint64 view). ``valid`` empty: no nulls."""
    words, data, base = borrow(words), borrow(data), borrow(base)
    n = keys.shape[0]
    check = valid.shape[0] > 0
    for i in prange(n):
        if check and not valid[i]:
            keys[i] = 0
            flags[i] = 0
            continue
        v0 = views[i, 0]
        v1 = views[i, 1]
        ln = np.int64(v0 & _LOW32)
        if ln <= 12:
            a, b = _inline_words(v0, v1, ln)
            keys[i] = np.int64(_finish((a * _K) ^ _finish(b ^ _K)))
        else:
            keys[i] = _bounded_hash(words, data, _view_start(v1, base), ln)
        flags[i] = 3 if ln == 0 else 1


@njit(cache=True)
def view_texts_equal(va, ba, wa, da, ia, vb, bb, wb, db, ib):  # pragma: no cover - numba
    """Whether text ``ia[k]`` of view column a equals text ``ib[k]`` of view column b."""
    wa, da, wb, db, ba, bb = borrow(wa), borrow(da), borrow(wb), borrow(db), borrow(ba), borrow(bb)
    for k in range(ia.shape[0]):
        i = ia[k]
        j = ib[k]
        n = np.int64(va[i, 0] & _LOW32)
        if np.int64(vb[j, 0] & _LOW32) != n:
            return False
        if n <= 12:
            a0, a1 = _inline_words(va[i, 0], va[i, 1], n)
            b0, b1 = _inline_words(vb[j, 0], vb[j, 1], n)
            if a0 != b0 or a1 != b1:
                return False
            continue
        if not _bytes_equal(wa, da, _view_start(va[i, 1], ba), wb, db, _view_start(vb[j, 1], bb), n):
            return False
    return True
