"""numba kernels behind :mod:`fasteval.fusion`: the fusion layout, normalisation, the
fusion methods and the fused ranking.

The layout holds every run's rows of a query side by side: *entries* in query-major
order, query ``q``'s rows from run ``r`` at ``seg[q * R + r]:seg[q * R + r + 1]`` (``R``
runs), each such segment in the run's rank order (``ent_row``: the row of each entry in
the runs' concatenated columns). Within a query, the documents of all runs are interned
to *candidates* ``0..nc-1`` (``ent_cand``), numbered in order of first appearance (run
order, then rank order); candidate ``c`` of query ``q`` is number ``cand_off[q] + c`` of
the flat candidate arrays. Ids are matched on their 64-bit keys
(:func:`fasteval.kernels.ids.id_keys`) and every match is confirmed on the ids, so a
collision costs time, never a result.

The kernels that work a query at a time are serial and ``nogil``; the caller runs
disjoint parts (whole queries) on a few Python threads, as the preparation kernels of
:mod:`fasteval.kernels.rank` do. Scratch is allocated once per part, never per query.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from fasteval._jit import njit
from fasteval.kernels._borrow import borrow
from fasteval.kernels.ids import doc_before, id_keys, probe, table_size, text_eq
from fasteval.kernels.rank import rank_slice, sort_slice_by_key, sort_tie_run

# score normalisations (see fasteval.fusion.options.NORMS)
NORM_NONE = 0
NORM_MIN_MAX = 1
NORM_MAX = 2
NORM_SUM = 3
NORM_ZMUV = 4
NORM_RANK = 5
NORM_BORDA = 6
NORM_MIN_MAX_INVERTED = 7

# fusion methods (see fasteval.fusion.options.METHODS)
M_SUM = 0
M_MNZ = 1
M_ANZ = 2
M_MAX = 3
M_MIN = 4
M_MED = 5
M_GMNZ = 6
M_RRF = 7
M_ISR = 8
M_LOG_ISR = 9
M_LOGN_ISR = 10
M_RBC = 11
M_BORDA = 12
M_W_BORDA = 13
M_CONDORCET = 14
M_W_CONDORCET = 15
M_WSUM = 16
M_WMNZ = 17
M_MIXED = 18

_SPREAD = 2
"""The per-query candidate table has room for this many times the query's entries over
:func:`table_size`'s minimum (so at most a quarter full)."""

_DENOMINATOR_FLOOR = 1e-9
"""Smallest denominator of the score normalisations (ranx's floor: a run whose scores are
all equal normalises to 0 instead of dividing by zero)."""


@njit(cache=True)
def intern_ids(col):
    """Codes of the ids of a column, numbered in order of first appearance.

    Returns ``(codes, firsts)``: the code of every row, and the first row of each code.
    Keys come from :func:`id_keys`; equal keys are confirmed on the ids.
    """
    is_int, ints, _, v, data, base = col
    n = ints.shape[0] if is_int else v.shape[0]
    keys = np.empty(n, dtype=np.int64)
    id_keys(col, np.empty(0, dtype=np.int64), 0, keys)
    size, shift = table_size(max(n, 1))
    table = np.zeros(size, dtype=np.int64)
    codes = np.empty(n, dtype=np.int64)
    firsts = np.empty(n, dtype=np.int64)
    code_keys = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        h = keys[i]
        slot = -1
        while True:
            slot, t = probe(table, code_keys, h, shift, slot)
            if t == 0 or ((ints[i] == ints[firsts[t - 1]]) if is_int else text_eq(
                    v, data, base, i, v, data, base, firsts[t - 1])):
                break
        if t == 0:
            table[slot] = m + 1
            firsts[m] = i
            code_keys[m] = h
            t = m + 1
            m += 1
        codes[i] = t - 1
    return codes, firsts[:m].copy()


@njit(cache=True, parallel=True)
def stitch(perms, run_off, nq):
    """Query-major entries from per-run groupings.

    ``run_off[r, q]:run_off[r, q + 1]`` are the positions in ``perms`` of run ``r``'s rows
    of query ``q`` (``perms`` holds rows of the runs' concatenated columns). Returns
    ``(ent_row, seg)``: the rows, query by query and run by run, and the segment offsets.
    """
    n_runs = run_off.shape[0]
    seg = np.empty(nq * n_runs + 1, dtype=np.int64)
    seg[0] = 0
    for q in range(nq):
        for r in range(n_runs):
            x = q * n_runs + r
            seg[x + 1] = seg[x] + run_off[r, q + 1] - run_off[r, q]
    ent_row = np.empty(seg[nq * n_runs], dtype=np.int64)
    for q in prange(nq):
        for r in range(n_runs):
            d = seg[q * n_runs + r]
            s = run_off[r, q]
            for i in range(run_off[r, q + 1] - s):
                ent_row[d + i] = perms[s + i]
    return ent_row, seg


@njit(cache=True, nogil=True)
def prepare_queries(q_lo, q_hi, n_runs, seg, ent_row, key, scores, docs, norm, ent_val,
                    ent_cand, ncand, cand_first, dup_at):
    """Rank, intern and normalise queries ``q_lo:q_hi`` of the layout, in place.

    Each segment is sorted by ``key`` descending (the score, or minus the score for the
    inverted min-max normalisation), equal keys by doc id descending byte-wise (the trec
    rule). The query's documents are interned to candidates (``ent_cand``; ``ncand[q]``
    of them; the entry that first holds candidate ``c`` at ``cand_first[seg[q * R] + c]``)
    and each entry gets its normalised score (``ent_val``) from its segment's scores
    (``norm``: one of the ``NORM_*`` codes). A document twice in one segment sets
    ``dup_at[q]`` to the second entry (else -1) and leaves the query unfinished.
    """
    longest = 1
    for q in range(q_lo, q_hi):
        longest = max(longest, seg[(q + 1) * n_runs] - seg[q * n_runs])
    size = table_size(_SPREAD * longest)[0]
    _prepare_queries(q_lo, q_hi, n_runs, seg, ent_row, key, scores, docs, norm, ent_val,
                     ent_cand, ncand, cand_first, dup_at, np.empty(longest, dtype=np.float64),
                     np.empty(longest, dtype=np.int64), np.empty(longest, dtype=np.float64),
                     np.zeros(size, dtype=np.int64), np.empty(longest, dtype=np.int64),
                     np.empty(longest, dtype=np.int64), np.empty(longest, dtype=np.int64))


@njit(cache=True, nogil=True)
def _prepare_queries(q_lo, q_hi, n_runs, seg, ent_row, key, scores, docs, norm, ent_val,
                     ent_cand, ncand, cand_first, dup_at, kbuf, pscr, kscr, table, hbuf,
                     last_run, cand_key):
    """The pass of :func:`prepare_queries` (scratch given by the caller)."""
    d_int, d_ints, d_v8, dv, d_data, d_base = docs
    d_ints, d_v8, dv = borrow(d_ints), borrow(d_v8), borrow(dv)
    d_data, d_base = borrow(d_data), borrow(d_base)
    bdocs = (d_int, d_ints, d_v8, dv, d_data, d_base)
    ent_row, key, scores = borrow(ent_row), borrow(key), borrow(scores)
    ent_val, ent_cand, cand_first = borrow(ent_val), borrow(ent_cand), borrow(cand_first)
    kbuf, pscr, kscr = borrow(kbuf), borrow(pscr), borrow(kscr)
    table, hbuf = borrow(table), borrow(hbuf)
    last_run, cand_key = borrow(last_run), borrow(cand_key)
    for q in range(q_lo, q_hi):
        base = seg[q * n_runs]
        end = seg[(q + 1) * n_runs]
        m = end - base
        dup_at[q] = -1
        ncand[q] = 0
        if m == 0:
            continue
        for r in range(n_runs):  # each run's rows of the query in rank order
            s = seg[q * n_runs + r]
            e = seg[q * n_runs + r + 1]
            if e - s > 1:
                rank_slice(ent_row, s, e, key, kbuf, pscr, kscr, d_int, d_ints, d_v8, dv,
                           d_data, d_base)
        # candidates: the query's distinct documents, in order of first appearance
        id_keys(bdocs, ent_row[base:end], 0, hbuf[:m])
        size, shift = table_size(_SPREAD * m)
        for x in range(size):
            table[x] = 0
        nc = 0
        dup = -1
        for r in range(n_runs):
            for i in range(seg[q * n_runs + r], seg[q * n_runs + r + 1]):
                h = hbuf[i - base]
                row = ent_row[i]
                slot = -1
                while True:
                    slot, t = probe(table, cand_key, h, shift, slot)
                    if t == 0:
                        break
                    f = ent_row[cand_first[base + t - 1]]
                    if (d_ints[row] == d_ints[f]) if d_int else text_eq(
                            dv, d_data, d_base, row, dv, d_data, d_base, f):
                        break
                if t == 0:  # a new candidate
                    t = nc + 1
                    table[slot] = t
                    cand_first[base + nc] = i
                    cand_key[nc] = h
                    nc += 1
                elif last_run[t - 1] == r:
                    dup = i
                    break
                ent_cand[i] = t - 1
                last_run[t - 1] = r
            if dup >= 0:
                break
        if dup >= 0:
            dup_at[q] = dup
            continue
        ncand[q] = nc
        # normalised scores, segment by segment (ranx's formulas)
        for r in range(n_runs):
            s = seg[q * n_runs + r]
            e = seg[q * n_runs + r + 1]
            if e - s == 0:
                continue
            if norm == NORM_RANK:
                for i in range(s, e):
                    ent_val[i] = 1 - ((i - s) / (e - s))
            elif norm == NORM_BORDA:  # the rank among all the query's candidates
                for i in range(s, e):
                    ent_val[i] = 1 - ((i - s) / nc)
            elif not _normalise(ent_row, s, e, scores, norm, ent_val, 1.0):
                _normalise(ent_row, s, e, scores, norm, ent_val, _overflow_scale(ent_row, s, e,
                                                                                 scores))


@njit(cache=True)
def _overflow_scale(ent_row, s, e, scores):
    """A power of two that brings the segment's largest score magnitude to about 2**480:
    sums of the scaled scores, and squares of their differences, stay finite."""
    top = 0.0
    for i in range(s, e):
        top = max(top, abs(scores[ent_row[i]]))
    return math.ldexp(1.0, 480 - math.frexp(top)[1])


@njit(cache=True)
def _normalise(ent_row, s, e, scores, norm, ent_val, c):
    """Normalise one segment's scores into ``ent_val`` (``norm``: a score normalisation,
    not rank or Borda), computing with the scores times ``c``, a power of two, and the
    denominator floor times ``c``: the same values, as every one of these normalisations is
    unchanged by scaling the scores. Returns False, with ``ent_val`` unfinished, when a sum,
    range or square of the scaled scores overflows (the caller then scales them down)."""
    n = e - s
    floor = _DENOMINATOR_FLOOR * c
    mn = scores[ent_row[s]] * c
    mx = mn
    tot = 0.0
    for i in range(s, e):
        x = scores[ent_row[i]] * c
        mn = min(mn, x)
        mx = max(mx, x)
        tot += x
    if norm == NORM_NONE:
        for i in range(s, e):
            ent_val[i] = scores[ent_row[i]]
    elif norm == NORM_MIN_MAX or norm == NORM_MIN_MAX_INVERTED:
        spread = mx - mn
        if not math.isfinite(spread):
            return False
        den = max(spread, floor)
        for i in range(s, e):
            x = scores[ent_row[i]] * c
            ent_val[i] = (mx - x) / den if norm == NORM_MIN_MAX_INVERTED else (x - mn) / den
    elif norm == NORM_MAX:
        den = max(mx, floor)
        for i in range(s, e):
            ent_val[i] = scores[ent_row[i]] * c / den
    elif norm == NORM_SUM:
        spread = tot - mn * n
        if not (math.isfinite(tot) and math.isfinite(spread)):
            return False
        den = max(spread, floor)
        for i in range(s, e):
            ent_val[i] = (scores[ent_row[i]] * c - mn) / den
    else:  # NORM_ZMUV
        if not math.isfinite(tot):
            return False
        mean = tot / n
        ssd = 0.0
        for i in range(s, e):
            d = scores[ent_row[i]] * c - mean
            ssd += d * d
        if not math.isfinite(ssd):
            return False
        den = max(math.sqrt(ssd / n), floor)
        for i in range(s, e):
            ent_val[i] = (scores[ent_row[i]] * c - mean) / den
    return True


@njit(cache=True, inline="always")
def _beats(y, x, n_runs, rk, weights):
    """Candidate ``y`` has more (weighted) votes than ``x``: runs that rank ``y`` above
    ``x`` (a document a run lacks is below all it holds; a run lacking both abstains)."""
    wy = 0.0
    wx = 0.0
    for r in range(n_runs):
        ry = rk[y * n_runs + r]
        rx = rk[x * n_runs + r]
        if ry < 0 and rx < 0:
            continue
        if rx < 0 or (0 <= ry < rx):
            wy += weights[r]
        else:
            wx += weights[r]
    return wy > wx


@njit(cache=True, inline="always")
def _cand_before(y, x, by_votes, n_runs, rk, weights, cb, cand_row, is_int, ints, v8, v, data,
                 base):
    """Candidate ``y`` goes before ``x`` in the Condorcet sort: more votes (``by_votes``),
    or a doc id that sorts after ``x``'s (the trec order of ties)."""
    if by_votes:
        return _beats(y, x, n_runs, rk, weights)
    return doc_before(cand_row[cb + y], cand_row[cb + x], is_int, ints, v8, v, data, base)


@njit(cache=True)
def _merge_sort_cands(order, n, scr, by_votes, n_runs, rk, weights, cb, cand_row, is_int,
                      ints, v8, v, data, base):
    """Stable merge sort of candidates ``order[:n]``: an element moves before another
    only when it strictly goes before it (:func:`_cand_before`). With a comparison that
    is not transitive (a Condorcet cycle), each element still ends next to ones it does
    not go before: the result is a path through the majority graph."""
    run = 16
    for a in range(0, n, run):
        b = min(a + run, n)
        for p in range(a + 1, b):
            x = order[p]
            q = p - 1
            while q >= a and _cand_before(x, order[q], by_votes, n_runs, rk, weights, cb,
                                          cand_row, is_int, ints, v8, v, data, base):
                order[q + 1] = order[q]
                q -= 1
            order[q + 1] = x
    width = run
    while width < n:
        for a in range(0, n, 2 * width):
            mid = min(a + width, n)
            b = min(a + 2 * width, n)
            p = a
            q = mid
            k = a
            while p < mid and q < b:
                if _cand_before(order[q], order[p], by_votes, n_runs, rk, weights, cb, cand_row,
                                is_int, ints, v8, v, data, base):
                    scr[k] = order[q]
                    q += 1
                else:
                    scr[k] = order[p]
                    p += 1
                k += 1
            while p < mid:
                scr[k] = order[p]
                p += 1
                k += 1
            while q < b:
                scr[k] = order[q]
                q += 1
                k += 1
        for k in range(n):
            order[k] = scr[k]
        width *= 2


@njit(cache=True, nogil=True)
def combine_queries(q_lo, q_hi, n_runs, seg, ent_val, ent_cand, cand_off, method, borda_norm,
                    weights, k, phi, gamma, sigma, cand_row, docs, fused):
    """Fused score of every candidate of queries ``q_lo:q_hi``: ``fused[cand_off[q] + c]``.

    ``method``: one of the ``M_*`` codes; ``borda_norm``: the scores were Borda-normalised
    (every run then scores every candidate: one it lacks gets ranx's share of the points
    left). ``weights``: one per run (ones for the unweighted methods); ``k``, ``phi``,
    ``gamma``, ``sigma``: the methods' parameters. ``cand_row``/``docs``: each candidate's
    row and the doc ids (the Condorcet sort starts from the doc ids' trec order).
    """
    longest = 1
    for q in range(q_lo, q_hi):
        longest = max(longest, cand_off[q + 1] - cand_off[q])
    _combine_queries(q_lo, q_hi, n_runs, seg, ent_val, ent_cand, cand_off, method, borda_norm,
                     weights, k, phi, gamma, sigma, cand_row, docs, fused,
                     np.empty(longest * n_runs, dtype=np.float64),
                     np.empty(longest * n_runs, dtype=np.int64), np.empty(n_runs, dtype=np.float64),
                     np.empty(n_runs, dtype=np.int64), np.empty(longest, dtype=np.int64),
                     np.empty(longest, dtype=np.int64))


@njit(cache=True, nogil=True)
def _combine_queries(q_lo, q_hi, n_runs, seg, ent_val, ent_cand, cand_off, method, borda_norm,
                     weights, k, phi, gamma, sigma, cand_row, docs, fused, val, rk, tmp, lens,
                     order, scr):
    """The pass of :func:`combine_queries` (scratch given by the caller)."""
    d_int, d_ints, d_v8, dv, d_data, d_base = docs
    d_ints, d_v8, dv = borrow(d_ints), borrow(d_v8), borrow(dv)
    d_data, d_base = borrow(d_data), borrow(d_base)
    ent_val, ent_cand, cand_row, fused = borrow(ent_val), borrow(ent_cand), borrow(cand_row), borrow(fused)
    val, rk, tmp, lens = borrow(val), borrow(rk), borrow(tmp), borrow(lens)
    order, scr, weights = borrow(order), borrow(scr), borrow(weights)
    for q in range(q_lo, q_hi):
        cb = cand_off[q]
        nc = cand_off[q + 1] - cb
        if nc == 0:
            continue
        for x in range(nc * n_runs):
            val[x] = 0.0
            rk[x] = -1
        for r in range(n_runs):
            s = seg[q * n_runs + r]
            e = seg[q * n_runs + r + 1]
            lens[r] = e - s
            for i in range(s, e):
                x = ent_cand[i] * n_runs + r
                val[x] = ent_val[i]
                rk[x] = i - s
        if method == M_CONDORCET or method == M_W_CONDORCET:
            for c in range(nc):
                order[c] = c
            _merge_sort_cands(order, nc, scr, False, n_runs, rk, weights, cb, cand_row, d_int,
                              d_ints, d_v8, dv, d_data, d_base)
            _merge_sort_cands(order, nc, scr, True, n_runs, rk, weights, cb, cand_row, d_int,
                              d_ints, d_v8, dv, d_data, d_base)
            for p in range(nc):
                fused[cb + order[p]] = nc - p
            continue
        for c in range(nc):
            t, wt, cnt, hi, lo = _run_values(c * n_runs, n_runs, method, borda_norm, weights, k,
                                             phi, val, rk, lens, nc, tmp)
            fused[cb + c] = _fused_value(method, t, wt, cnt, hi, lo, tmp, gamma, sigma)


@njit(cache=True, inline="always")
def _run_values(o, n_runs, method, borda_norm, weights, k, phi, val, rk, lens, nc, tmp):
    """What the runs give one candidate (``val``/``rk`` from ``o``): the sum of the values
    of the runs that hold it (weighted for the weighted methods), their weights' sum, count,
    largest and smallest value; the values themselves in ``tmp[:cnt]``."""
    t = 0.0  # sum of the scores of the runs that hold the document
    wt = 0.0  # sum of their weights
    cnt = 0
    hi = -np.inf
    lo = np.inf
    for r in range(n_runs):
        i = rk[o + r]
        present = i >= 0
        x = 0.0
        if method == M_RRF or method == M_RBC or method == M_ISR or (
                method == M_LOG_ISR or method == M_LOGN_ISR):
            if not present:
                continue
            if method == M_RRF:
                x = 1 / (k + i + 1)
            elif method == M_RBC:
                x = (1 - phi) * phi**i
            else:
                x = 1 / ((i + 1) ** 2)
        elif method == M_BORDA or method == M_W_BORDA:
            x = float(nc - i) if present else (nc - lens[r] + 1) / 2
            present = True
        elif present:
            x = val[o + r]
        elif borda_norm:
            x = 0.5 - ((lens[r] - 1) / (2 * nc))
            present = True
        if method == M_WSUM or method == M_W_BORDA:
            t += weights[r] * (x if present else 0.0)
        elif present:
            if method == M_MIXED:
                t += x * weights[r]
            else:
                t += x
            wt += weights[r]
            hi = max(hi, x)
            lo = min(lo, x)
            tmp[cnt] = x
            cnt += 1
    return t, wt, cnt, hi, lo


@njit(cache=True, inline="always")
def _fused_value(method, t, wt, cnt, hi, lo, tmp, gamma, sigma):
    """A candidate's fused score from :func:`_run_values` (``tmp[:cnt]`` sorted here for
    the median)."""
    if method == M_MNZ or method == M_ISR:
        z = t * cnt
    elif method == M_ANZ:
        z = t / cnt
        if np.isinf(z):  # the sum passed float64's largest: the mean may not
            z = 0.0
            for a in range(cnt):
                z += tmp[a] / cnt
    elif method == M_MAX:
        z = hi
    elif method == M_MIN:
        z = lo
    elif method == M_MED:
        for a in range(1, cnt):  # at most one value per run: insertion sort
            y = tmp[a]
            b = a - 1
            while b >= 0 and tmp[b] > y:
                tmp[b + 1] = tmp[b]
                b -= 1
            tmp[b + 1] = y
        h = cnt // 2
        z = tmp[h] if cnt % 2 == 1 else (tmp[h - 1] + tmp[h]) / 2
        if np.isinf(z) and np.isfinite(tmp[h - 1]) and np.isfinite(tmp[h]):
            z = tmp[h - 1] / 2 + tmp[h] / 2  # the midpoint, past an overflowing sum
    elif method == M_GMNZ:
        z = t * (float(cnt) ** gamma)
    elif method == M_LOG_ISR:
        z = t * np.log(cnt)
    elif method == M_LOGN_ISR:
        z = t * np.log(cnt + sigma)
    elif method == M_WMNZ:
        z = t * wt
    elif method == M_MIXED:
        z = t * np.sqrt(cnt)
    else:  # sum, rrf, rbc, borda, wsum, w_borda: the sum itself
        z = t
    return z


@njit(cache=True, nogil=True)
def order_queries(q_lo, q_hi, cand_off, fused, cand_row, docs, out_row, out_score):
    """Each query's candidates by fused score descending, ties by doc id descending (the
    trec rule): their rows in ``out_row`` and scores in ``out_score``, query ``q`` at
    ``cand_off[q]:cand_off[q + 1]``."""
    longest = 1
    for q in range(q_lo, q_hi):
        longest = max(longest, cand_off[q + 1] - cand_off[q])
    _order_queries(q_lo, q_hi, cand_off, fused, cand_row, docs, out_row, out_score,
                   np.empty(longest, dtype=np.int64), np.empty(longest, dtype=np.float64),
                   np.empty(longest, dtype=np.int64), np.empty(longest, dtype=np.float64))


@njit(cache=True, nogil=True)
def _order_queries(q_lo, q_hi, cand_off, fused, cand_row, docs, out_row, out_score, pp, kbuf,
                   pscr, kscr):
    """The pass of :func:`order_queries` (scratch given by the caller)."""
    d_int, d_ints, d_v8, dv, d_data, d_base = docs
    d_ints, d_v8, dv = borrow(d_ints), borrow(d_v8), borrow(dv)
    d_data, d_base = borrow(d_data), borrow(d_base)
    fused, cand_row = borrow(fused), borrow(cand_row)
    out_row, out_score = borrow(out_row), borrow(out_score)
    pp, kbuf, pscr, kscr = borrow(pp), borrow(kbuf), borrow(pscr), borrow(kscr)
    for q in range(q_lo, q_hi):
        o = cand_off[q]
        n = cand_off[q + 1] - o
        if n == 0:
            continue
        for i in range(n):
            pp[i] = o + i
        ties = sort_slice_by_key(pp, 0, n, fused, kbuf, pscr, kscr) if n > 1 else False
        for i in range(n):
            out_row[o + i] = cand_row[pp[i]]
            out_score[o + i] = fused[pp[i]]
        i = 0 if ties else n
        while i < n:
            ki = out_score[o + i]
            j = i + 1
            while j < n and out_score[o + j] == ki:
                j += 1
            if j - i > 1:
                sort_tie_run(out_row, o + i, o + j, pscr, d_int, d_ints, d_v8, dv, d_data, d_base)
            i = j
