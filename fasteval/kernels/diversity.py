"""Intent-aware (diversity) measures over subtopic judgments, as numba kernels.

The definitions are those of ``ndeval`` (the TREC Web track's evaluation tool, version 4.5):
relevance is binary per subtopic, and only the *actual* subtopics of a query count (those with
at least one relevant document; ``S`` below). With the documents of a ranking ``d_1, d_2, ...``
and ``c_s(i)`` the number of documents above rank ``i`` relevant to subtopic ``s``, the gain
of rank ``i`` is ``g_i = sum over the subtopics s of d_i of (1 - alpha) ** c_s(i)``, and

* ``alpha-DCG@k`` (ndeval's collection-independent form) ``= sum_{i<=k} g_i / log2(i + 1)``
  divided by the same sum for an "ideal ideal" ranking whose every document covers all ``S``
  subtopics (gains ``S (1 - alpha) ** (i - 1)``); ``alpha-nDCG@k`` divides the run's sum by
  that of the ideal ranking instead;
* ``ERR-IA@k`` and ``nERR-IA@k``: the same with discount ``1 / i``;
* ``NRBP`` ``= (1 - (1 - alpha) beta) / S * sum_i g_i beta ** (i - 1)`` over the whole
  ranking, ``nNRBP`` the run's over the ideal ranking's;
* ``P-IA@k`` ``= sum_{i<=k} |subtopics of d_i| / (k S)``, ``strec@k`` (subtopic recall) the
  share of the ``S`` subtopics covered by the top ``k``, ``MAP-IA`` the mean over the
  subtopics of each subtopic's average precision.

The ideal ranking is ndeval's greedy approximation (finding the best one is NP-hard): at each
rank, the document of largest gain given those already placed; among equal gains, the
largest document id byte-wise. :func:`ideal_gains` computes it once per query and alpha.

Layout: ``doc_sub[doc_sub_off[d]:doc_sub_off[d + 1]]`` are the subtopics (0 .. S - 1 of its
query, ascending) document ``d`` is relevant to; rankings are flat document numbers (negative:
not in the judgments) with int64 offsets per query.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import get_thread_id, prange

from fasteval._jit import njit
from fasteval.kernels._borrow import borrow

# measure kinds (values are stable: cached kernels hold them as constants)
ALPHA_NDCG = 0
ALPHA_DCG = 1
ERR_IA = 2
NERR_IA = 3
NRBP = 4
NNRBP = 5
P_IA = 6
STREC = 7
MAP_IA = 8

#: Kinds read off the ideal ranking.
NEEDS_IDEAL = (ALPHA_NDCG, NERR_IA, NNRBP)
#: Kinds computed over the whole ranking (no cutoff).
WHOLE_RANKING = (NRBP, NNRBP, MAP_IA)


def discounts(depth: int) -> np.ndarray:
    """ndeval's discounts of 0-based positions ``0 .. depth - 1``: 1, then log(2) / log(i + 2)
    (C's ``log``, as ndeval computes them).

    Examples
    --------
    >>> discounts(3).round(6).tolist()
    [1.0, 0.63093, 0.5]
    """
    return np.array([1.0] + [math.log(2.0) / math.log(i + 2.0) for i in range(1, depth)])


@njit(cache=True, nogil=True)
def ideal_gains(rel_docs, rel_off, doc_sub_off, doc_sub, q_nsub, alpha, out_off, out, sub_gain, taken):
    """Gains of the greedy ideal ranking of each query, to ``out_off[q + 1] - out_off[q]`` ranks.

    ``rel_docs[rel_off[q]:rel_off[q + 1]]``: the query's documents relevant to some subtopic,
    by ascending document id (byte-wise), so that a later document of equal gain has the
    larger id and wins, as in ndeval. ``sub_gain`` (float64, >= the most subtopics of a query)
    and ``taken`` (uint8, >= the most such documents of a query) are scratch.

    Examples
    --------
    >>> rel_docs, rel_off = np.array([0, 1, 2]), np.array([0, 3])
    >>> doc_sub_off, doc_sub = np.array([0, 2, 3, 4]), np.array([0, 1, 0, 2], dtype=np.int32)
    >>> out = np.zeros(3)
    >>> ideal_gains(rel_docs, rel_off, doc_sub_off, doc_sub, np.array([3]), 0.5,
    ...             np.array([0, 3]), out, np.zeros(3), np.zeros(3, dtype=np.uint8))
    >>> out.tolist()
    [2.0, 1.0, 0.5]
    """
    keep = 1.0 - alpha
    for q in range(rel_off.shape[0] - 1):
        r0 = rel_off[q]
        nd = rel_off[q + 1] - r0
        for s in range(q_nsub[q]):
            sub_gain[s] = 1.0
        for i in range(nd):
            taken[i] = 0
        o = out_off[q]
        for r in range(out_off[q + 1] - o):
            best = -1
            best_gain = 0.0
            for i in range(nd):
                if taken[i]:
                    continue
                d = rel_docs[r0 + i]
                gain = 0.0
                for p in range(doc_sub_off[d], doc_sub_off[d + 1]):
                    gain += sub_gain[doc_sub[p]]
                if best < 0 or gain >= best_gain:
                    best = i
                    best_gain = gain
            taken[best] = 1
            out[o + r] = best_gain
            d = rel_docs[r0 + best]
            for p in range(doc_sub_off[d], doc_sub_off[d + 1]):
                sub_gain[doc_sub[p]] *= keep


_PASSES: dict[bool, object] = {}


@njit(cache=True)
def ideal_ideal_units(kinds, cuts, alpha):
    """For each alpha-DCG and ERR-IA measure, the sum over ranks ``i < k`` of
    ``(1 - alpha) ** i`` times the discount (ndeval's log2 discount, or ``1 / (i + 1)``): the
    normaliser of one subtopic's "ideal ideal" ranking (0 for the other kinds). Once per
    measure, to any cutoff; the sum stops where the gains reach 0.

    Examples
    --------
    >>> ideal_ideal_units(np.array([ALPHA_DCG, ERR_IA, P_IA], dtype=np.int32),
    ...                   np.array([2, 2, 2]), 0.5).tolist()
    [1.3154648767857287, 1.25, 0.0]
    """
    keep = 1.0 - alpha
    out = np.zeros(kinds.shape[0])
    for j in range(kinds.shape[0]):
        kind = kinds[j]
        if kind != ALPHA_DCG and kind != ERR_IA:
            continue
        top = 1.0
        total = 0.0
        for i in range(cuts[j]):
            if top == 0.0:
                break
            if kind == ERR_IA:
                total += top / (i + 1.0)
            else:
                total += top * (1.0 if i == 0 else math.log(2.0) / math.log(i + 2.0))
            top *= keep
        out[j] = total
    return out


def score_diversity(labels, offsets, qidx, present, doc_sub_off, doc_sub, q_nsub, q_sub_base,
                    nrel_sub, ideal_off, ideal, kinds, cuts, alpha, beta, out, n_threads,
                    parallel=None):
    """Every requested measure (``kinds``, ``cuts``: 0 for the whole ranking) of every query.

    ``labels[offsets[q]:offsets[q + 1]]``: query ``q``'s ranking as document numbers
    (negative: not judged); ``qidx[q]``: its query code, which indexes ``q_nsub`` (actual
    subtopics), ``q_sub_base`` (first slot of its subtopics in ``nrel_sub``, their numbers of
    relevant documents) and ``ideal_off`` (its ideal gains in ``ideal``); ``present[q]``
    False: a query filled in with an empty ranking (every measure 0, as ndeval ``-c``).
    A query without actual subtopics gets 0, but NaN for nNRBP (ndeval's 0 / 0, also its
    value for every query when alpha = 0 and beta = 1).
    ``out``: float64[n_queries, n_measures]. ``parallel``: a ``prange`` over queries; None:
    when there are at least 20,000 ranked documents.

    Examples
    --------
    >>> labels, offsets = np.array([1, 0, -1, 2], dtype=np.int32), np.array([0, 4])
    >>> doc_sub_off, doc_sub = np.array([0, 2, 3, 4]), np.array([0, 1, 0, 2], dtype=np.int32)
    >>> out = np.zeros((1, 2))
    >>> score_diversity(labels, offsets, np.array([0]), np.array([True]), doc_sub_off, doc_sub,
    ...                 np.array([3]), np.array([0]), np.array([2, 1, 1]), np.array([0, 3]),
    ...                 np.array([2.0, 1.0, 0.5]), np.array([P_IA, STREC], dtype=np.int32),
    ...                 np.array([5, 2]), 0.5, 0.5, out, 1)
    >>> out.round(6).tolist()
    [[0.266667, 0.666667]]
    """
    m = kinds.shape[0]
    depth = 1
    for j in range(m):
        depth = max(depth, int(cuts[j]))
    # ranks past the longest ranking or ideal ranking add nothing: keep the scratch to those
    longest = max(1, int(np.diff(offsets).max(initial=0)), int(np.diff(ideal_off).max(initial=0)))
    depth = min(depth, longest)
    unit = ideal_ideal_units(kinds, cuts, float(alpha))
    max_sub = max(1, int(q_nsub.max())) if q_nsub.shape[0] else 1
    if parallel is None:
        parallel = labels.shape[0] >= 20_000
    threads = max(1, int(n_threads)) if parallel else 1
    kernel = _pass(bool(parallel))
    kernel(labels, offsets, qidx, present, doc_sub_off, doc_sub, q_nsub, q_sub_base, nrel_sub,
           ideal_off, ideal, kinds, cuts, unit, float(alpha), float(beta), out, depth, discounts(depth),
           np.empty((threads, max_sub), dtype=np.int64), np.empty((threads, max_sub)),
           np.empty((threads, max_sub)), np.empty((threads, 6, depth + 1)))


@njit(cache=True, nogil=True, inline="always")
def _query(q, labels, offsets, qidx, present, doc_sub_off, doc_sub, q_nsub, q_sub_base, nrel_sub,
           ideal_off, ideal, kinds, cuts, unit, alpha, beta, out, depth, whole, need_ideal, disc,
           tc, tg, ta, p):
    """All measures of query ``q`` (see :func:`score_diversity`); ``depth``: the ranks kept
    (a larger cutoff reads rank ``depth``); ``unit``: :func:`ideal_ideal_units`;
    ``disc[i]``: the discount of 0-based position ``i``; ``tc``, ``tg``, ``ta`` and ``p`` are the calling thread's scratch."""
    m = kinds.shape[0]
    if not present[q]:
        for j in range(m):
            out[q, j] = 0.0
        return
    c = qidx[q]
    n_sub = q_nsub[c]
    if n_sub == 0:
        for j in range(m):
            out[q, j] = math.nan if kinds[j] == NNRBP else 0.0
        return
    keep = 1.0 - alpha
    s = offsets[q]
    n = offsets[q + 1] - s
    nrbp = _run_profile(labels, s, n, doc_sub_off, doc_sub, n_sub, keep, beta, depth, whole, disc, tc, tg, ta, p)
    ideal_nrbp = 0.0
    if need_ideal:
        ideal_nrbp = _ideal_profile(ideal, ideal_off[c], ideal_off[c + 1] - ideal_off[c], beta, depth, disc, p)
    scale = (1.0 - keep * beta) / n_sub
    for j in range(m):
        kind = kinds[j]
        k = min(cuts[j], depth)
        if kind == ALPHA_NDCG:
            out[q, j] = p[0, k] / p[4, k] if p[0, k] != 0.0 else 0.0
        elif kind == NERR_IA:
            out[q, j] = p[1, k] / p[5, k] if p[0, k] != 0.0 else 0.0
        elif kind == ALPHA_DCG or kind == ERR_IA:
            # the "ideal ideal" ranking: every document covers all n_sub subtopics
            out[q, j] = (p[0, k] if kind == ALPHA_DCG else p[1, k]) / (n_sub * unit[j])
        elif kind == NRBP:
            out[q, j] = nrbp * scale
        elif kind == NNRBP:
            den = ideal_nrbp * scale  # 0 when (1 - alpha) beta = 1: ndeval's 0 / 0
            out[q, j] = (nrbp * scale) / den if den != 0.0 else math.nan
        elif kind == P_IA:
            out[q, j] = p[2, k] / (cuts[j] * n_sub)
        elif kind == STREC:
            out[q, j] = p[3, k] / n_sub
        else:  # MAP_IA
            base = q_sub_base[c]
            total = 0.0
            for t in range(n_sub):
                total += ta[t] / nrel_sub[base + t]
            out[q, j] = total / n_sub


@njit(cache=True, nogil=True, inline="always")
def _run_profile(labels, s, n, doc_sub_off, doc_sub, n_sub, keep, beta, depth, whole, disc, tc, tg, ta, p):
    """Walk the ranking ``labels[s:s + n]`` (to ``depth``, or whole): rows 0-3 of ``p`` get the
    running dcg, err, intent-aware hits and subtopics covered (``p[r, i]``: over the first
    ``i`` ranks), ``ta`` each subtopic's sum of precisions (MAP-IA); returns NRBP's sum."""
    for t in range(n_sub):
        tc[t] = 0
        tg[t] = 1.0
        ta[t] = 0.0
    # rows of p: the run's dcg, err, intent-aware hits and subtopics covered; the ideal's dcg, err
    for r in range(6):
        p[r, 0] = 0.0
    dcg = 0.0
    err = 0.0
    hits = 0
    covered = 0
    nrbp = 0.0
    decay = 1.0
    last = n if whole else min(n, depth)
    for i in range(last):
        d = labels[s + i]
        gain = 0.0
        if d >= 0:
            for k in range(doc_sub_off[d], doc_sub_off[d + 1]):
                t = doc_sub[k]
                if tc[t] == 0:
                    covered += 1
                tc[t] += 1
                ta[t] += tc[t] / (i + 1.0)
                hits += 1
                gain += tg[t]
                tg[t] *= keep
        if i < depth:
            dcg += gain * disc[i]
            err += gain / (i + 1.0)
            p[0, i + 1] = dcg
            p[1, i + 1] = err
            p[2, i + 1] = hits
            p[3, i + 1] = covered
        nrbp += gain * decay
        decay *= beta
    for i in range(min(n, depth), depth):
        for r in range(4):
            p[r, i + 1] = p[r, i]
    return nrbp


@njit(cache=True, nogil=True, inline="always")
def _ideal_profile(ideal, o, ni, beta, depth, disc, p):
    """The ideal ranking's gains ``ideal[o:o + ni]``: its running dcg and err in rows 4 and 5
    of ``p``; returns its NRBP sum."""
    idcg = 0.0
    ierr = 0.0
    ideal_nrbp = 0.0
    decay = 1.0
    for i in range(ni):
        gain = ideal[o + i]
        if i < depth:
            idcg += gain * disc[i]
            ierr += gain / (i + 1.0)
            p[4, i + 1] = idcg
            p[5, i + 1] = ierr
        ideal_nrbp += gain * decay
        decay *= beta
    for i in range(min(ni, depth), depth):
        p[4, i + 1] = p[4, i]
        p[5, i + 1] = p[5, i]
    return ideal_nrbp


def _pass(parallel: bool):
    """The pass of :func:`score_diversity`, serial or over queries in parallel; each variant
    has its own cache entry (``parallel`` is a closure constant)."""
    if parallel in _PASSES:
        return _PASSES[parallel]

    def _run(labels, offsets, qidx, present, doc_sub_off, doc_sub, q_nsub, q_sub_base, nrel_sub,
             ideal_off, ideal, kinds, cuts, unit, alpha, beta, out, depth, disc, cnt, cur, apsum,
             prof):
        nq = offsets.shape[0] - 1
        whole = False
        need_ideal = False
        for j in range(kinds.shape[0]):
            if kinds[j] == NRBP or kinds[j] == NNRBP or kinds[j] == MAP_IA:
                whole = True
            if kinds[j] == ALPHA_NDCG or kinds[j] == NERR_IA or kinds[j] == NNRBP:
                need_ideal = True
        labels = borrow(labels)
        doc_sub = borrow(doc_sub)
        doc_sub_off = borrow(doc_sub_off)
        ideal = borrow(ideal)
        # per-thread scratch, borrowed here (a borrow inside the loop could raise, which
        # would keep numba from running the loop in parallel)
        cnt = borrow(cnt)
        cur = borrow(cur)
        apsum = borrow(apsum)
        prof = borrow(prof)
        for q in prange(nq):
            tid = get_thread_id() if parallel else 0
            _query(q, labels, offsets, qidx, present, doc_sub_off, doc_sub, q_nsub, q_sub_base,
                   nrel_sub, ideal_off, ideal, kinds, cuts, unit, alpha, beta, out, depth, whole,
                   need_ideal, disc, cnt[tid], cur[tid], apsum[tid], prof[tid])

    if parallel:
        fn = njit(cache=True, parallel=True)(_run)
    else:
        fn = njit(cache=True)(_run)
    _PASSES[parallel] = fn
    return fn


def default_threads() -> int:
    """``numba.get_num_threads()``: one scratch area per thread."""
    return numba.get_num_threads()


__all__ = [
    "ALPHA_NDCG", "ALPHA_DCG", "ERR_IA", "NERR_IA", "NRBP", "NNRBP", "P_IA", "STREC", "MAP_IA",
    "NEEDS_IDEAL", "WHOLE_RANKING", "ideal_gains", "score_diversity",
]
