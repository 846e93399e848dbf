"""Expected values of ranking measures over every ordering of tied documents.

With ``tie_break="expected"`` a query's documents of equal score form a *tie group*, and
each measure is reported as its mean over all orderings of the documents inside the tie
groups (every ordering equally likely), computed in one linear pass per query (McSherry
and Najork, "Computing Information Retrieval Performance Measures Efficiently in the
Presence of Tied Scores", ECIR 2008), never by enumerating orderings.

Inputs are the flat arrays of :mod:`fasteval.kernels.ranking` plus one more:

* ``labels[offsets[q]:offsets[q+1]]``: query ``q``'s documents in score order (the order
  inside a tie group does not matter); a label is the judged grade (>= 0), ``-1`` (not in
  the pool) or ``-2`` (in the pool, unjudged);
* ``starts``: bool, aligned with ``labels``: True where a tie group starts (the first
  document of a query, and each document whose score differs from the one before);
* ``grades[gstart[q]:gend[q]]``: query ``q``'s judged grades, sorted descending.

The formulas, for a tie group of ``n`` documents holding ``r`` relevant ones, at ranks
``a + 1 .. a + n``, with ``R`` relevant documents ranked above the group:

* each of its positions holds a relevant document with probability ``r / n``, so the
  expected number of relevant documents in the top ``a + t`` is ``R + r * t / n``
  (P@k, recall@k, R-prec, hits, F1@k, SetP@k: all linear in that count), and the expected gain at
  each of its positions is the group's mean gain (DCG, nDCG, nDCG@k, RBP);
* average precision adds, at group position ``t`` (0-based),
  ``(r / n) * (R + 1 + t * (r - 1) / (n - 1)) / (a + t + 1)``: the chance that the
  position is relevant times the expected precision there given that it is (the ``t``
  positions above it in the group then hold ``t * (r - 1) / (n - 1)`` relevant documents
  on average);
* reciprocal rank and success@k use the chance that no relevant document lies above
  group position ``t``: 1 before the first group holding one, then
  ``prod_{u < t} (n - r - u) / (n - u)`` inside it, and 0 below it.

Measures that do not depend on the order inside a group (``num_rel_ret``, ``set_P``, ...)
are computed as usual. A group of one document adds exactly what the trec_eval loop adds,
so that rankings without ties give the values of ``tie_break="trec"``, bit for bit.
trec_eval's rules hold throughout: unjudged documents and negative grades are not
relevant, ``num_rel`` comes from the qrels (grades >= the relevance level) and nDCG's
ideal ranking from the qrels' grades.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import get_num_threads, get_thread_id, prange

from fasteval.kernels._borrow import borrow as _borrow
from fasteval.kernels._jit import njit, py_func
from fasteval.kernels.cwl import HORIZON, geometric_tail
from fasteval.kernels.ranking import _count_level, _gain, _ideal_range, _num_rel

_JIT = {"cache": True, "error_model": "numpy", "nogil": True}

# Operations of the expected pass (one per supported family).
OP_NUM_Q = 0
OP_NUM_RET = 1
OP_NUM_REL = 2
OP_NUM_REL_RET = 3
OP_MAP = 4
OP_RPREC = 5
OP_RR = 6
OP_P = 7
OP_RECALL = 8
OP_RPREC_MULT = 9
OP_MAP_CUT = 10
OP_RELATIVE_P = 11
OP_SUCCESS = 12
OP_SET_P = 13
OP_SET_RELATIVE_P = 14
OP_SET_RECALL = 15
OP_SET_MAP = 16
OP_SET_F = 17
OP_NONREL_JUDGED_RET = 18
OP_UNJ = 19
OP_RR_CUT = 20
OP_F1 = 21
OP_JUDGED = 22
OP_HITS = 23
OP_NDCG = 24
OP_NDCG_CUT = 25
OP_DCG = 26
OP_NDCG_BURGES = 27
OP_NDCG_BURGES_CUT = 28
OP_DCG_BURGES = 29
OP_RBP = 30
OP_RBP_RAW = 31
OP_SET_P_CUT = 32
OP_RBP_CUT = 33

FAMILY_OPS: dict[str, int] = {
    "num_q": OP_NUM_Q,
    "num_ret": OP_NUM_RET,
    "num_rel": OP_NUM_REL,
    "num_rel_ret": OP_NUM_REL_RET,
    "map": OP_MAP,
    "gm_map": OP_MAP,
    "Rprec": OP_RPREC,
    "recip_rank": OP_RR,
    "P": OP_P,
    "recall": OP_RECALL,
    "Rprec_mult": OP_RPREC_MULT,
    "map_cut": OP_MAP_CUT,
    "relative_P": OP_RELATIVE_P,
    "success": OP_SUCCESS,
    "set_P": OP_SET_P,
    "set_relative_P": OP_SET_RELATIVE_P,
    "set_recall": OP_SET_RECALL,
    "set_map": OP_SET_MAP,
    "set_F": OP_SET_F,
    "num_nonrel_judged_ret": OP_NONREL_JUDGED_RET,
    "unj": OP_UNJ,
    "recip_rank_cut": OP_RR_CUT,
    "F1": OP_F1,
    "judged": OP_JUDGED,
    # the fraction judged of the whole ranking: Judged@k with k past its end
    "set_judged": OP_JUDGED,
    "set_P_cut": OP_SET_P_CUT,
    "hits": OP_HITS,
    "ndcg": OP_NDCG,
    "ndcg_cut": OP_NDCG_CUT,
    "dcg": OP_DCG,
    "ndcg_burges": OP_NDCG_BURGES,
    "ndcg_burges_cut": OP_NDCG_BURGES_CUT,
    "dcg_burges": OP_DCG_BURGES,
    "rbp": OP_RBP,
    "rbp_raw": OP_RBP_RAW,
    "rbp_cut": OP_RBP_CUT,
}
"""Measure families with an expected-value kernel, by registry key."""

WHOLE = 2**62
"""Cutoff meaning the whole ranking."""

_KIND_DIRECT = 0
_KIND_REL = 1  # answered from the expected relevance profile at the slot's level
_KIND_DCG = 2  # answered from the expected DCG profile at the slot's gain and floor


def unsupported_families(families: Iterable[str]) -> list[str]:
    """The families among ``families`` that have no expected-value kernel, in order.

    Examples
    --------
    >>> unsupported_families(["P", "bpref", "ndcg_cut", "infAP", "bpref"])
    ['bpref', 'infAP']
    """
    out: list[str] = []
    for f in families:
        if f not in FAMILY_OPS and f not in out:
            out.append(f)
    return out


def check_measures(measures: Iterable[Any]) -> None:
    """Refuse measures (:class:`fasteval.measures.Measure`) without an expected-value
    kernel, naming them and the families that have one.

    Raises
    ------
    ParameterError

    Examples
    --------
    >>> from fasteval.measures import parse_measures
    >>> from fasteval.errors import ParameterError
    >>> try:
    ...     check_measures(parse_measures(["map", "bpref", "P@5", "infAP"]))
    ... except ParameterError as e:
    ...     print(e.value)
    ['bpref', 'infAP']
    """
    from fasteval.errors import ParameterError

    measures = list(measures)
    bad = unsupported_families(m.family for m in measures)
    if bad:
        raise ParameterError(
            "measures with tie_break='expected'",
            f"of the families with an expected value ({', '.join(sorted(FAMILY_OPS))})",
            [m.name for m in measures if m.family in bad],
        )


# ---------------------------------------------------------------------------------------
# tie groups (prepare side)


def tie_starts(perm: np.ndarray, offsets: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Tie-group starts of rankings whose rows are ``perm[offsets[g]:offsets[g+1]]`` (an
    empty ``perm``: rows ``offsets[g]:offsets[g+1]`` themselves), in input order, with
    scores ``key[row]``: ``out[i]`` is True where position ``i`` of the ranked labels
    (score descending) starts a group of equal scores. Equal means ``==`` on float64
    (``-0.0`` ties with ``0.0``). Queries already in rank order (the usual run file) are
    read without a sort.

    >>> tie_starts(np.zeros(0, np.int64), np.array([0, 3, 5]),
    ...            np.array([2.0, 2.0, 1.0, 0.5, 0.7])).tolist()
    [True, False, True, True, True]
    """
    n = int(offsets[-1]) if len(offsets) else 0
    longest = int(np.diff(offsets).max()) if len(offsets) > 1 else 0
    out = np.empty(n, dtype=np.bool_)
    # one sort buffer per thread (allocated here: it outlives the parallel loop)
    _tie_starts(perm, offsets, key, out, np.empty((get_num_threads(), longest)))
    return out


@njit(cache=True, parallel=True)
def _tie_starts(perm, offsets, key, out, scratch):
    identity = perm.shape[0] == 0
    ng = offsets.shape[0] - 1
    for g in prange(ng):
        s = offsets[g]
        e = offsets[g + 1]
        ordered = True  # rows already in rank order: no sort
        prev = key[s if identity else perm[s]] if e > s else 0.0
        for i in range(s + 1, e):
            k = key[i if identity else perm[i]]
            if k > prev:
                ordered = False
                break
            prev = k
        if ordered:
            for i in range(s, e):
                out[i] = i == s or (key[i if identity else perm[i]]
                                    != key[i - 1 if identity else perm[i - 1]])
            continue
        buf = scratch[get_thread_id()]
        n = e - s
        for i in range(n):
            buf[i] = key[s + i if identity else perm[s + i]]
        buf[:n].sort()  # ascending: rank k is element n - 1 - k
        for k in range(n):
            out[s + k] = k == 0 or buf[n - 1 - k] != buf[n - k]


@njit(cache=True)
def truncate_groups(labels, offsets, starts, max_docs, judged_only):
    """:func:`fasteval.kernels.groups.truncate` with tie groups: the top ``max_docs`` of
    each query, then (``judged_only``) without its unjudged labels (< 0); ``starts``
    follows. Returns ``(labels, offsets, starts, split)``, ``split`` being the first query
    whose cut falls inside a tie group (-1: none), where the kept documents would depend on
    the order of the tie."""
    ng = offsets.shape[0] - 1
    new_off = np.zeros(ng + 1, dtype=np.int64)
    out = np.empty(labels.shape[0], dtype=np.int32)
    out_st = np.empty(labels.shape[0], dtype=np.bool_)
    split = -1
    k = 0
    for g in range(ng):
        s = offsets[g]
        e = offsets[g + 1]
        if max_docs < e - s:
            if split < 0 and not starts[s + max_docs]:
                split = g
            e = s + max_docs
        pending = False  # a group started whose documents were all dropped so far
        for i in range(s, e):
            pending |= starts[i]
            v = labels[i]
            if judged_only and v < 0:
                continue
            out[k] = v
            out_st[k] = pending
            pending = False
            k += 1
        new_off[g + 1] = k
    return out[:k], new_off, out_st[:k], split


@njit(cache=True)
def count_ties(labels, offsets, starts):
    """``(tied, mattered)``: queries with a tie group of two or more documents, and those
    with a tie group holding two different grades (a relevant and a non-relevant document,
    or two grades of relevance; unjudged documents and negative grades count as grade 0),
    whose values of P, recall, RR, AP or nDCG can change with the order of the tie.
    (``judged`` and ``unj`` also change where judged and unjudged documents tie.)"""
    tied = 0
    mattered = 0
    for g in range(offsets.shape[0] - 1):
        t = False
        m = False
        for i in range(offsets[g] + 1, offsets[g + 1]):
            if not starts[i]:
                t = True
                if max(labels[i], 0) != max(labels[i - 1], 0):
                    m = True
                    break
        tied += t
        mattered += m
    return tied, mattered


# ---------------------------------------------------------------------------------------
# measures


@njit(**_JIT)
def _group_end(st, i, e):
    """End of the tie group that starts at ``i``."""
    j = i + 1
    while j < e and not st[j]:
        j += 1
    return j



@njit(**_JIT)
def _count(lab, s, e, lo, hi):
    """Labels in [lo, hi] among lab[s:e]."""
    c = 0
    for i in range(s, e):
        v = lab[i]
        if v >= lo and v <= hi:
            c += 1
    return c


@njit(**_JIT)
def _expected_count(lab, st, s, e, k, lo, hi):
    """Expected number of labels in [lo, hi] among the top k."""
    total = 0.0
    i = s
    while i < e and i - s < k:
        j = _group_end(st, i, e)
        c = _count(lab, i, j, lo, hi)
        if j - s <= k:
            total += c
        else:
            total += c * (k - (i - s)) / (j - i)
        i = j
    return total


@njit(**_JIT)
def _rel_profile(lab, st, s, e, d, level, want_rr, erel, eap, err, enone):
    """Expected relevance profile of the top ``i`` (``i <= d``): ``erel[i]`` relevant
    documents (labels >= level), ``eap[i]`` the sum of precisions at them; with
    ``want_rr``, ``err[i]`` the reciprocal rank of the first one if it is there (else 0)
    and ``enone[i]`` the chance that none is there."""
    erel[0] = 0.0
    eap[0] = 0.0
    err[0] = 0.0
    enone[0] = 1.0
    before = 0  # relevant documents in the groups above
    ap = 0.0
    rr = 0.0
    none = 1.0  # chance that no relevant document lies above
    a = 0  # rank (0-based) of the group's first position
    i = s
    while a < d:
        r = 1 if lab[i] >= level else 0  # the group's end and relevant documents, one scan
        j = i + 1
        while j < e and not st[j]:
            if lab[j] >= level:
                r += 1
            j += 1
        n = j - i
        stop = min(n, d - a)
        if r == 0:  # nothing changes inside the group
            for t in range(a + 1, a + stop + 1):
                erel[t] = before
                eap[t] = ap
            if want_rr:
                for t in range(a + 1, a + stop + 1):
                    err[t] = rr
                    enone[t] = none
        elif n == 1:  # the trec_eval loop's own additions
            ap += (before + 1) / (a + 1.0)
            erel[a + 1] = before + 1
            eap[a + 1] = ap
            if want_rr:
                if before == 0:
                    rr += 1.0 / (a + 1)
                err[a + 1] = rr
                enone[a + 1] = 0.0
            none = 0.0
        else:
            pr = r / n
            slope = (r - 1) / (n - 1)
            for t in range(stop):
                ap += pr * (before + 1 + t * slope) / (a + t + 1.0)
                erel[a + t + 1] = before + pr * (t + 1)
                eap[a + t + 1] = ap
            if stop == n:
                erel[a + n] = before + r  # exact at the group's end
            if want_rr:
                q = none  # no relevant document above group position t
                for t in range(stop):
                    if q > 0.0:
                        rr += q * r / (n - t) / (a + t + 1.0)
                        q *= (n - r - t) / (n - t)
                    err[a + t + 1] = rr
                    enone[a + t + 1] = q
            none = 0.0
        before += r
        a += n
        i = j


@njit(cache=True)
def _log2_table(n):
    """``log2(i + 2)`` for i < n: the discount of rank i + 1 (the same ``math.log2`` values
    as the trec pass computes)."""
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        out[i] = math.log2(i + 2.0)
    return out


@njit(**_JIT)
def _gain_of(v, exp_gain, floor):
    """ndcg_cut's gain of a label: the grade (or 2^grade - 1) above 0 and ``floor``."""
    if v > 0 and v >= floor:
        return (2.0**v - 1.0) if exp_gain else float(v)
    return 0.0


@njit(**_JIT)
def _dcg_profile(lab, st, s, e, d, exp_gain, floor, lg, edcg):
    """``edcg[i]``: expected DCG of the top ``i`` (``i <= d``): each position of a tie
    group gains the group's mean gain."""
    edcg[0] = 0.0
    dcg = 0.0
    a = 0
    i = s
    while a < d:
        g = _gain_of(lab[i], exp_gain, floor)  # the group's end and gain, one scan
        j = i + 1
        while j < e and not st[j]:
            g += _gain_of(lab[j], exp_gain, floor)
            j += 1
        n = j - i
        mean = g / n
        for t in range(min(n, d - a)):
            if g != 0:
                dcg += mean / lg[a + t]
            edcg[a + t + 1] = dcg
        a += n
        i = j


@njit(**_JIT)
def _ideal_profile(grades, gs, gd, exp_gain, floor, lg, out):
    """``out[i]``: DCG of the best ``i`` judged grades (``i <= gd``)."""
    dcg = 0.0
    out[0] = 0.0
    for i in range(gd):
        g = grades[gs + i]
        if g > 0 and g >= floor:
            dcg += _gain_of(g, exp_gain, floor) / lg[i]
        out[i + 1] = dcg



@njit(**_JIT)
def _ndcg(lab, st, s, e, grades, gs, ge, cl, cv, cs, ce, ol, og, os_, oe, lg):
    """Expected nDCG of the whole ranking with trec_eval's gains (custom gains per level,
    else the grade) over the ideal ranking of the qrels' gains."""
    dcg = 0.0
    i = s
    while i < e:
        j = _group_end(st, i, e)
        n = j - i
        g = 0.0
        for x in range(i, j):
            g += _gain(lab[x], cl, cv, cs, ce)
        if g != 0:
            mean = g / n
            for t in range(n):
                dcg += mean / lg[i - s + t]
        i = j
    ideal = 0.0
    pos = 0
    os_, oe = _ideal_range(ol, os_, oe, grades, gs, ge)
    for x in range(os_, oe):  # trec_eval's walk: levels by gain, descending
        level = ol[x]
        c = _count_level(grades, gs, ge, level)
        if c == 0:
            continue  # a level without documents is passed over whatever its gain
        gain = og[x]
        if gain <= 0.0:
            break
        for _ in range(c):
            ideal += gain / lg[pos]
            pos += 1
    return dcg / ideal if ideal > 0.0 else 0.0


@njit(**_JIT)
def _rbp(lab, st, s, e, p, level, raw, grades, gs, ge, cl, cv, cs, ce, k):
    """Expected rank-biased precision: each position of a tie group gains the group's mean
    gain. ``raw``: the grade as gain (grades > 0 and >= ``level``; ranx's); else ``level``
    >= 0: gain 1 at or above it (ir_measures' RBP(rel=k)); else trec_eval's gains (custom
    gains per level, else the grade; grades beyond the qrels' and not given a gain count 0),
    rescaled to [0, 1] when some gain lies outside it, over the top ``k`` ranks (a tie
    group across rank k spreads its gain over all its positions, weighted up to k)."""
    graded = not raw and level < 0
    maxg = grades[gs] if ge > gs else -1
    gmin = 0.0
    gmax = 0.0
    if graded:
        first = True
        for lv in range(0, maxg + 1):
            g = _gain(lv, cl, cv, cs, ce)
            gmin = g if first else min(gmin, g)
            gmax = g if first else max(gmax, g)
            first = False
        for j in range(cs, ce):
            g = cv[j]
            gmin = g if first else min(gmin, g)
            gmax = g if first else max(gmax, g)
            first = False
    rescale = gmin < 0.0 or gmax > 1.0
    binary = not raw and not graded
    # C/W/L's RBP (ir_measures' RBP(rel=k)) reads cwl_eval's horizon of ranks, normalised;
    # a tie group across it spreads its gain over all its positions, weighted up to it
    stop = s + HORIZON if binary else (s + k if k < e - s else e)
    den = 0.0  # binary: sum of the weights of the ranks read (C/W/L's normaliser)
    total = 0.0
    cur = 1.0
    i = s
    while i < e:
        j = _group_end(st, i, e)
        n = j - i
        g = 0.0
        for x in range(i, j):
            v = lab[x]
            if raw:
                if v > 0 and v >= level:
                    g += v
            elif not graded:
                if v >= level:
                    g += 1.0
            else:
                gv = _gain(v, cl, cv, cs, ce)
                known = v >= 0 and v <= maxg
                if not known:
                    for y in range(cs, ce):
                        if cl[y] == v:
                            known = True
                if known:
                    g += (gv - gmin) / (gmax - gmin) if rescale else gv
        if n == 1:  # the trec_eval loop's own addition
            if i < stop:
                if g != 0:
                    total += g * cur
                den += cur
            cur *= p
        else:
            w = 0.0
            for x in range(i, j):
                if x < stop:
                    w += cur
                    den += cur
                cur *= p
            if g != 0:
                total += g / n * w
        i = j
    if binary:  # the ranks past the ranking, as kernels.cwl sums them
        rest = HORIZON - (e - s)
        if rest > 0:
            den += geometric_tail(cur, p, rest)
        return total / den
    return (1.0 - p) * total


@njit(**_JIT)
def _kind(op):
    if op >= OP_MAP and op <= OP_SUCCESS:
        return _KIND_REL
    if op == OP_RR_CUT or op == OP_F1 or op == OP_HITS or op == OP_SET_P_CUT:
        return _KIND_REL
    if op == OP_NDCG_CUT or op == OP_DCG or op == OP_NDCG_BURGES or op == OP_NDCG_BURGES_CUT:
        return _KIND_DCG
    if op == OP_DCG_BURGES:
        return _KIND_DCG
    return _KIND_DIRECT


@njit(**_JIT)
def _whole(op):
    """Whether a relevance-profile op reads the whole ranking (not only its cutoff)."""
    return op == OP_MAP or op == OP_RPREC or op == OP_RR or op == OP_RPREC_MULT


@njit(**_JIT)
def _from_rel(op, k, p, n, nrel, erel, eap, err, enone):
    top = min(k, n)
    if op == OP_MAP:
        return eap[n] / nrel if nrel else 0.0
    if op == OP_RPREC:
        return erel[min(nrel, n)] / nrel if nrel else 0.0
    if op == OP_RR:
        return err[n]
    if op == OP_P:
        return erel[top] / k
    if op == OP_RECALL:
        return erel[top] / nrel if nrel else 0.0
    if op == OP_RPREC_MULT:
        cut = int(math.floor(p * nrel + 0.9))
        return erel[min(cut, n)] / cut if cut > 0 else 0.0
    if op == OP_MAP_CUT:
        return eap[top] / nrel if nrel else 0.0
    if op == OP_RELATIVE_P:
        d = min(k, nrel)
        return erel[top] / d if d else 0.0
    if op == OP_SUCCESS:
        return 1.0 - enone[top]
    if op == OP_RR_CUT:
        return err[top]
    if op == OP_F1:  # 2 P R / (P + R) = 2 rel / (k + nrel), linear in the relevant count
        return 2.0 * erel[top] / (k + nrel) if nrel else 0.0
    if op == OP_SET_P_CUT:  # relevant in the top k / the number retrieved there
        return erel[top] / top if top else 0.0
    return erel[top]  # OP_HITS


@njit(**_JIT)
def _direct(op, lab, st, s, e, grades, gs, ge, k, p, level, cl, cv, cs, ce, ol, og, os_, oe,
            lg):
    """Slots whose value does not depend on the order inside tie groups, or that are
    computed by a function of their own."""
    n = e - s
    if op == OP_NUM_Q:
        return 1.0
    if op == OP_NUM_RET:
        return float(n)
    nrel = _num_rel(grades, gs, ge, level)
    if op == OP_NUM_REL:
        return float(nrel)
    if op == OP_NDCG:
        return _ndcg(lab, st, s, e, grades, gs, ge, cl, cv, cs, ce, ol, og, os_, oe, lg)
    if op == OP_RBP or op == OP_RBP_RAW:
        return _rbp(lab, st, s, e, p, level, op == OP_RBP_RAW, grades, gs, ge, cl, cv, cs, ce,
                    e - s)
    if op == OP_RBP_CUT:  # trec_eval's graded rbp of the top k
        return _rbp(lab, st, s, e, p, -1, False, grades, gs, ge, cl, cv, cs, ce, k)
    if op == OP_UNJ:
        return _expected_count(lab, st, s, e, k, -2, -1) / k
    if op == OP_JUDGED:
        d = min(k, n)
        return _expected_count(lab, st, s, e, k, 0, 2147483647) / d if d else 0.0
    if op == OP_NONREL_JUDGED_RET:
        return float(_count(lab, s, e, 0, level - 1))
    nrr = _count(lab, s, e, level, 2147483647)
    if op == OP_NUM_REL_RET:
        return float(nrr)
    if op == OP_SET_P:
        return nrr / n if n > 0 else 0.0
    if op == OP_SET_RELATIVE_P:
        d = min(n, nrel)
        return nrr / d if d > 0 else 0.0
    if op == OP_SET_RECALL:
        return nrr / nrel if nrel > 0 else 0.0
    if op == OP_SET_MAP:
        if n > 0 and nrel > 0:
            return (float(nrr) * nrr) / (float(n) * nrel)
        return 0.0
    if op == OP_SET_F:
        if n > 0 and nrel > 0 and nrr > 0:
            prec = nrr / n
            rec = nrr / nrel
            return (p + 1.0) * prec * rec / (p * prec + rec)
        return 0.0
    return np.nan


_FULL = -1
_PASSES: dict[bool, Any] = {}


def _expected_pass(parallel: bool) -> Any:
    """The pass over queries (scratch given by the caller), compiled on first use; a
    ``prange`` over queries when ``parallel``, else one thread (each its own cache entry)."""
    if parallel in _PASSES:
        return _PASSES[parallel]

    def _pass(labels, offsets, starts, grades, gstart, gend, ops, cuts, params, levels, cl, cv,
              coff, ol, og, ooff, out, rdepth, ddepth, want_rr, lg, erel, eap, err, enone, edcg,
              eidcg):
        nq = offsets.shape[0] - 1
        m = ops.shape[0]
        labels = _borrow(labels)
        starts = _borrow(starts)
        grades = _borrow(grades)
        cl = _borrow(cl)
        cv = _borrow(cv)
        ol = _borrow(ol)
        og = _borrow(og)
        erel = _borrow(erel)
        eap = _borrow(eap)
        err = _borrow(err)
        enone = _borrow(enone)
        edcg = _borrow(edcg)
        eidcg = _borrow(eidcg)
        lg = _borrow(lg)
        for q in prange(nq):
            s = offsets[q]
            e = offsets[q + 1]
            n = e - s
            gs = gstart[q]
            ge = gend[q]
            tid = get_thread_id() if parallel else 0
            rel_level = -1  # level of the relevance profile in scratch (-1: none yet)
            nrel = 0
            dcg_exp = -1  # gain and floor of the DCG profile in scratch (-1: none yet)
            dcg_floor = 0
            dd = min(n, ddepth)
            gd = min(ge - gs, ddepth)
            for j in range(m):
                op = ops[j]
                kind = _kind(op)
                if kind == _KIND_REL:
                    level = levels[j]
                    if rel_level < 0 or level != rel_level:
                        d = n if rdepth == _FULL else min(n, rdepth)
                        _rel_profile(labels, starts, s, e, d, level, want_rr, erel[tid],
                                     eap[tid], err[tid], enone[tid])
                        nrel = _num_rel(grades, gs, ge, level)
                        rel_level = level
                    out[q, j] = _from_rel(op, cuts[j], params[j], n, nrel, erel[tid], eap[tid],
                                          err[tid], enone[tid])
                elif kind == _KIND_DCG:
                    exp_gain = 1 if (op == OP_NDCG_BURGES or op == OP_NDCG_BURGES_CUT
                                     or op == OP_DCG_BURGES) else 0
                    floor = levels[j]
                    if exp_gain != dcg_exp or floor != dcg_floor:
                        _dcg_profile(labels, starts, s, e, dd, exp_gain == 1, floor, lg,
                                     edcg[tid])
                        _ideal_profile(grades, gs, gd, exp_gain == 1, floor, lg, eidcg[tid])
                        dcg_exp = exp_gain
                        dcg_floor = floor
                    k = cuts[j]
                    if op == OP_DCG or op == OP_DCG_BURGES:
                        out[q, j] = edcg[tid, min(k, dd)]
                    else:
                        idcg = eidcg[tid, min(k, gd)]
                        out[q, j] = edcg[tid, min(k, dd)] / idcg if idcg > 0.0 else 0.0
                else:
                    out[q, j] = _direct(op, labels, starts, s, e, grades, gs, ge, cuts[j],
                                        params[j], levels[j], cl, cv, coff[j], coff[j + 1], ol,
                                        og, ooff[j], ooff[j + 1], lg)

    _pass.__qualname__ = f"_expected_pass_{'parallel' if parallel else 'serial'}"
    _pass.__name__ = _pass.__qualname__
    kernel = njit(cache=True, parallel=parallel, error_model="numpy")(_pass)
    _PASSES[parallel] = kernel
    return kernel


SERIAL_ROWS = 1 << 17
"""Batches of fewer ranked rows are scored by the serial variant of the pass."""


@dataclass(frozen=True)
class ExpectedPlan:
    """Per-slot arrays of :func:`score_expected` (see :func:`plan_expected`).

    Attributes
    ----------
    ops, cuts, params, levels : numpy.ndarray
        Per slot: operation (``OP_*``), rank cutoff (:data:`WHOLE` for none), float
        parameter, relevance level (binary measures) or gain floor (DCG measures).
    cl, cv, coff : numpy.ndarray
        ``ndcg``'s custom gains (level, gain) per slot, flat with offsets.
    ol, og, ooff : numpy.ndarray
        ``ndcg``'s levels in ideal order (gain descending) per slot, flat with offsets.
    """

    ops: np.ndarray
    cuts: np.ndarray
    params: np.ndarray
    levels: np.ndarray
    cl: np.ndarray
    cv: np.ndarray
    coff: np.ndarray
    ol: np.ndarray
    og: np.ndarray
    ooff: np.ndarray


def plan_expected(measures: Sequence[Any], relevance_level: int,
                  judged_levels: Iterable[int] = ()) -> ExpectedPlan:
    """The :class:`ExpectedPlan` of ``measures`` (:class:`fasteval.measures.Measure`).

    Parameters
    ----------
    measures : sequence of Measure
        Each of a family in :data:`FAMILY_OPS`.
    relevance_level : int
        Level of the measures that do not set their own ``rel``.
    judged_levels : iterable of int
        The qrels' distinct judged grades (needed by ``ndcg`` only: its ideal order).

    Raises
    ------
    ParameterError
        For a measure without an expected-value kernel (see :func:`check_measures`).

    Examples
    --------
    >>> from fasteval.measures import parse_measures
    >>> plan = plan_expected(parse_measures(["P@5", "ndcg"]), 1, [0, 1, 2])
    >>> plan.ops.tolist(), plan.cuts.tolist(), plan.ol.tolist()
    ([7, 24], [5, 4611686018427387904], [2, 1, 0])
    """
    from fasteval.measures.plan import plan_slots

    check_measures(measures)
    plan = plan_slots(list(measures), relevance_level, list(judged_levels))
    ops = np.array([FAMILY_OPS[m.family] for m in measures], dtype=np.int64)
    # a family without a cutoff reads the whole ranking
    cuts = np.where(plan.cuts > 0, plan.cuts, WHOLE).astype(np.int64)
    return ExpectedPlan(ops=ops, cuts=cuts, params=plan.params, levels=plan.levels,
                        cl=plan.cl, cv=plan.cv, coff=plan.coff, ol=plan.ol, og=plan.og,
                        ooff=plan.ooff)


def score_expected(labels: np.ndarray, offsets: np.ndarray, starts: np.ndarray,
                   grades: np.ndarray, gstart: np.ndarray, gend: np.ndarray,
                   plan: ExpectedPlan, out: np.ndarray, n_threads: int = 1,
                   parallel: bool | None = None) -> None:
    """Fill ``out[q, j]`` with the expected value of slot ``j`` for query ``q`` over every
    ordering of its tie groups (see the module docstring).

    Parameters
    ----------
    labels, offsets, starts : the rankings and their tie-group starts (module docstring).
    grades, gstart, gend : judged grades of query q are grades[gstart[q]:gend[q]], descending.
    plan : ExpectedPlan
        From :func:`plan_expected`.
    out : float64[n_queries, n_slots], preallocated.
    n_threads : ``numba.get_num_threads()`` (one scratch area per thread).
    parallel : a ``prange`` over queries; None: when there are at least
        :data:`SERIAL_ROWS` ranked rows.

    Examples
    --------
    One relevant document tied with a non-relevant one at the top (ranks 1-2), then a
    relevant one: P@1 is 1/2, reciprocal rank (1 + 1/2) / 2, AP ((1 + 2/3) + (1/2 + 2/3))
    / 2 / 2.

    >>> from fasteval.measures import parse_measures
    >>> labels = np.array([1, 0, 1], dtype=np.int32)
    >>> starts = np.array([True, False, True])
    >>> grades, gs, ge = np.array([1, 1], dtype=np.int32), np.array([0]), np.array([2])
    >>> plan = plan_expected(parse_measures(["P@1", "recip_rank", "map"]), 1)
    >>> out = np.zeros((1, 3))
    >>> score_expected(labels, np.array([0, 3]), starts, grades, gs, ge, plan, out)
    >>> [round(float(v), 6) for v in out[0]]
    [0.5, 0.75, 0.708333]
    """
    m = plan.ops.shape[0]
    rdepth = 0
    ddepth = 0
    want_rr = False
    for j in range(m):
        op = int(plan.ops[j])
        want_rr |= op in (OP_RR, OP_RR_CUT, OP_SUCCESS)
        kind = py_func(_kind)(op)
        if kind == _KIND_REL:
            whole = py_func(_whole)(op) or rdepth == _FULL
            rdepth = _FULL if whole else max(rdepth, int(plan.cuts[j]))
        elif kind == _KIND_DCG:
            ddepth = max(ddepth, int(plan.cuts[j]))
    nq = offsets.shape[0] - 1
    if nq == 0 or m == 0:
        return
    longest = max(0, int(np.diff(offsets).max()))
    judged = max(0, int((gend[:nq] - gstart[:nq]).max()))
    lr = 0 if rdepth == 0 else (longest if rdepth == _FULL else min(longest, rdepth))
    ld = min(longest, ddepth)
    if parallel is None:
        parallel = labels.shape[0] >= SERIAL_ROWS
    threads = max(1, int(n_threads)) if parallel else 1
    kernel = _expected_pass(bool(parallel))
    starts = np.ascontiguousarray(starts, dtype=np.bool_)
    kernel(labels, offsets, starts, grades, gstart, gend, plan.ops, plan.cuts, plan.params,
           plan.levels, plan.cl, plan.cv, plan.coff, plan.ol, plan.og, plan.ooff, out, rdepth,
           ddepth, want_rr, _log2_table(max(longest, judged) + 1), np.empty((threads, lr + 1)),
           np.empty((threads, lr + 1)), np.empty((threads, lr + 1)), np.empty((threads, lr + 1)),
           np.empty((threads, ld + 1)), np.empty((threads, min(judged, ddepth) + 1)))
