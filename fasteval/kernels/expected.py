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

The pass is :func:`fasteval.kernels.ranking.build_pass` over this module's profiles and
dispatch functions (:data:`PATHS`: the paths of the registry's ``Family.expected``), on the
plan of :func:`fasteval.measures.plan.plan_slots` with ``expected=True``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numba import get_num_threads, get_thread_id, prange

from fasteval._jit import JIT, njit
from fasteval.kernels.cwl import HORIZON, geometric_tail
from fasteval.kernels.ranking import (
    SERIAL_ROWS,
    _count_level,
    _dcg_kind,
    _gain,
    _ideal_range,
    _num_rel,
    build_pass,
    pass_scratch,
)
from fasteval.measures.plan import Plan, plan_slots
from fasteval.measures.registry import (
    BY_KEY,
    FAMILIES,
    PATH_DCG,
    PATH_OWN,
    PATH_REL,
    PATH_REL_FULL,
    Code,
    check_paths,
)

_SUPPORTED = sorted(f.key for f in FAMILIES if f.expected)
"""The families with an expected value (a ``Family.expected`` path), by key."""


def unsupported_families(families: Iterable[str]) -> list[str]:
    """The families among ``families`` that have no expected-value kernel, in order.

    Examples
    --------
    >>> unsupported_families(["P", "bpref", "ndcg_cut", "infAP", "bpref"])
    ['bpref', 'infAP']
    """
    out: list[str] = []
    for f in families:
        if not BY_KEY[f].expected and f not in out:
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
    >>> check_measures(parse_measures(["nDCG(gains={0: 0, 1: 1, 2: 5})@10"]))
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: measures with tie_break='expected' must be without custom \
gains when they have a cutoff (ndcg with gains and no cutoff has an expected value), got \
['ndcg_cut_10(gains={0:0,1:1,2:5})']
    """
    from fasteval.errors import ParameterError

    measures = list(measures)
    bad = unsupported_families(m.family for m in measures)
    if bad:
        raise ParameterError(
            "measures with tie_break='expected'",
            f"of the families with an expected value ({', '.join(_SUPPORTED)})",
            [m.name for m in measures if m.family in bad],
        )
    # the expected DCG profile gains the grade itself: custom gains only without a cutoff
    gained = [m.name for m in measures if m.gains and BY_KEY[m.family].expected == PATH_DCG]
    if gained:
        raise ParameterError("measures with tie_break='expected'", "without custom gains when "
                             "they have a cutoff (ndcg with gains and no cutoff has an expected "
                             "value)", gained)


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


@njit(**JIT)
def _group_end(st, i, e):
    """End of the tie group that starts at ``i``."""
    j = i + 1
    while j < e and not st[j]:
        j += 1
    return j



@njit(**JIT)
def _count(lab, s, e, lo, hi):
    """Labels in [lo, hi] among lab[s:e]."""
    c = 0
    for i in range(s, e):
        v = lab[i]
        if v >= lo and v <= hi:
            c += 1
    return c


@njit(**JIT)
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


@njit(**JIT)
def _rel_profile(lab, st, s, e, d, level, prof):
    """Expected relevance profile of the top ``i`` (``i <= d``): ``prof[0, i]`` relevant
    documents (labels >= level), ``prof[1, i]`` the sum of precisions at them; when
    ``prof`` has four rows (a slot reads them: :data:`_RR`), ``prof[2, i]`` the
    reciprocal rank of the first one if it is there (else 0) and ``prof[3, i]`` the
    chance that none is there. Returns -1 (the trec pass's first relevant rank, which
    no reader here takes)."""
    want_rr = prof.shape[0] > 2
    erel = prof[0]
    eap = prof[1]
    err = prof[2 if want_rr else 0]  # (a stand-in, never written, when not wanted)
    enone = prof[3 if want_rr else 0]
    erel[0] = 0.0
    eap[0] = 0.0
    if want_rr:
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
    return -1


@njit(cache=True)
def _log2_table(n):
    """``log2(i + 2)`` for i < n: the discount of rank i + 1 (the same ``math.log2`` values
    as the trec pass computes)."""
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        out[i] = math.log2(i + 2.0)
    return out


@njit(**JIT)
def _gain_of(v, exp_gain, floor):
    """ndcg_cut's gain of a label: the grade (or 2^grade - 1) above 0 and ``floor``."""
    if v > 0 and v >= floor:
        return (2.0**v - 1.0) if exp_gain else float(v)
    return 0.0


@njit(**JIT)
def _dcg_profile(lab, st, s, e, d, grades, gs, gd, exp_gain, floor, lg, prof):
    """``prof[0, i]``: expected DCG of the top ``i`` (``i <= d``), each position of a tie
    group gaining the group's mean gain; ``prof[1, i]``: DCG of the best ``i`` judged
    grades (``i <= gd``); gains as ``ndcg_cut``'s (:func:`_gain_of`)."""
    edcg = prof[0]
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
    ideal = prof[1]
    dcg = 0.0
    ideal[0] = 0.0
    for i in range(gd):
        g = grades[gs + i]
        if g > 0 and g >= floor:
            dcg += _gain_of(g, exp_gain, floor) / lg[i]
        ideal[i + 1] = dcg


@njit(**JIT)
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


@njit(**JIT)
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


@njit(**JIT)
def _from_rel_profile(code, k, p, n, nrel, prof, first):
    """A slot's expected value from the expected relevance profile: the dispatch of
    ``PATH_REL`` and ``PATH_REL_FULL`` (:data:`PATHS`). ``first`` (the trec pass's) is not
    read; the reciprocal-rank rows are there for the codes of :data:`_RR` only."""
    top = min(k, n)
    if code == Code.MAP or code == Code.GM_MAP:
        return prof[1, n] / nrel if nrel else 0.0
    if code == Code.RPREC:
        return prof[0, min(nrel, n)] / nrel if nrel else 0.0
    if code == Code.RECIP_RANK:
        return prof[2, n]
    if code == Code.P:
        return prof[0, top] / k
    if code == Code.RECALL:
        return prof[0, top] / nrel if nrel else 0.0
    if code == Code.RPREC_MULT:
        cut = int(math.floor(p * nrel + 0.9))
        return prof[0, min(cut, n)] / cut if cut > 0 else 0.0
    if code == Code.MAP_CUT:
        return prof[1, top] / nrel if nrel else 0.0
    if code == Code.RELATIVE_P:
        d = min(k, nrel)
        return prof[0, top] / d if d else 0.0
    if code == Code.SUCCESS:
        return 1.0 - prof[3, top]
    if code == Code.RECIP_RANK_CUT:
        return prof[2, top]
    if code == Code.F1:  # 2 P R / (P + R) = 2 rel / (k + nrel), linear in the relevant count
        return 2.0 * prof[0, top] / (k + nrel) if nrel else 0.0
    if code == Code.SET_P_CUT:  # relevant in the top k / the number retrieved there
        return prof[0, top] / top if top else 0.0
    if code == Code.HITS:
        return prof[0, top]
    return np.nan


_RR = (Code.RECIP_RANK, Code.RECIP_RANK_CUT, Code.SUCCESS)
"""The families whose expected value reads the reciprocal-rank rows of the relevance
profile (:func:`_rel_profile` computes them only for a plan that has one)."""


@njit(inline="always", **JIT)
def _one(plan, j, lab, st, s, e, grades, gs, ge, lg):
    """Slot ``j``'s expected value by its family's own function, for the slots whose value
    does not depend on the order inside tie groups or that have a function of their own:
    the dispatch of ``PATH_OWN`` (:data:`PATHS`)."""
    code = plan.codes[j]
    k = plan.cuts[j]
    p = plan.params[j]
    level = plan.levels[j]
    cs = plan.coff[j]
    ce = plan.coff[j + 1]
    n = e - s
    if code == Code.NUM_Q:
        return 1.0
    if code == Code.NUM_RET:
        return float(n)
    nrel = _num_rel(grades, gs, ge, level)
    if code == Code.NUM_REL:
        return float(nrel)
    if code == Code.NDCG:
        return _ndcg(lab, st, s, e, grades, gs, ge, plan.cl, plan.cv, cs, ce, plan.ol, plan.og,
                     plan.ooff[j], plan.ooff[j + 1], lg)
    if code == Code.RBP or code == Code.RBP_RAW:
        return _rbp(lab, st, s, e, p, level, code == Code.RBP_RAW, grades, gs, ge, plan.cl,
                    plan.cv, cs, ce, e - s)
    if code == Code.RBP_CUT:  # trec_eval's graded rbp of the top k
        return _rbp(lab, st, s, e, p, -1, False, grades, gs, ge, plan.cl, plan.cv, cs, ce, k)
    if code == Code.UNJ:
        return _expected_count(lab, st, s, e, k, -2, -1) / k
    if code == Code.JUDGED or code == Code.SET_JUDGED:  # set_judged: k is the whole ranking
        d = min(k, n)
        return _expected_count(lab, st, s, e, k, 0, 2147483647) / d if d else 0.0
    if code == Code.NUM_NONREL_JUDGED_RET:
        return float(_count(lab, s, e, 0, level - 1))
    nrr = _count(lab, s, e, level, 2147483647)
    if code == Code.NUM_REL_RET:
        return float(nrr)
    if code == Code.SET_P:
        return nrr / n if n > 0 else 0.0
    if code == Code.SET_RELATIVE_P:
        d = min(n, nrel)
        return nrr / d if d > 0 else 0.0
    if code == Code.SET_RECALL:
        return nrr / nrel if nrel > 0 else 0.0
    if code == Code.SET_MAP:
        if n > 0 and nrel > 0:
            return (float(nrr) * nrr) / (float(n) * nrel)
        return 0.0
    if code == Code.SET_F:
        if n > 0 and nrel > 0 and nrr > 0:
            prec = nrr / n
            rec = nrr / nrel
            return (p + 1.0) * prec * rec / (p * prec + rec)
        return 0.0
    return np.nan


PATHS = {PATH_REL: (_from_rel_profile,), PATH_REL_FULL: (_from_rel_profile,),
         PATH_DCG: (_dcg_kind,), PATH_OWN: (_one,)}
"""The expected pass's dispatch functions by kernel path (the registry's
``Family.expected``), checked against the registry when this module is imported."""
check_paths("expected", PATHS)

_PASSES: dict[bool, Any] = {}
"""The variants of the pass built so far, by ``parallel`` (:func:`score_expected`)."""


def plan_expected(measures: Sequence[Any], relevance_level: int,
                  judged_levels: Iterable[int] = ()) -> Plan:
    """The plan of :func:`score_expected`: :func:`fasteval.measures.plan.plan_slots` with
    each slot on its family's ``expected`` kernel path.

    Parameters
    ----------
    measures : sequence of Measure
        Each of a family with an expected value (see :func:`check_measures`).
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
    >>> plan.codes.tolist(), plan.cuts.tolist(), plan.ol.tolist()
    ([10, 20], [5, 4611686018427387904], [2, 1, 0])
    """
    check_measures(measures)
    return plan_slots(list(measures), relevance_level, list(judged_levels), expected=True)


def score_expected(labels: np.ndarray, offsets: np.ndarray, starts: np.ndarray,
                   grades: np.ndarray, gstart: np.ndarray, gend: np.ndarray,
                   plan: Plan, out: np.ndarray, n_threads: int = 1,
                   parallel: bool | None = None) -> None:
    """Fill ``out[q, j]`` with the expected value of slot ``j`` for query ``q`` over every
    ordering of its tie groups (see the module docstring).

    Parameters
    ----------
    labels, offsets, starts : the rankings and their tie-group starts (module docstring).
    grades, gstart, gend : judged grades of query q are grades[gstart[q]:gend[q]], descending.
    plan : Plan
        From :func:`plan_expected`.
    out : float64[n_queries, n_slots], preallocated.
    n_threads : ``numba.get_num_threads()`` (one scratch area per thread).
    parallel : a ``prange`` over queries; None: when there are at least
        :data:`fasteval.kernels.ranking.SERIAL_ROWS` ranked rows.

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
    if offsets.shape[0] < 2 or plan.codes.shape[0] == 0:
        return
    if parallel is None:
        parallel = labels.shape[0] >= SERIAL_ROWS
    threads = max(1, int(n_threads)) if parallel else 1
    rows = 4 if any(int(c) in _RR for c in plan.codes) else 2
    prof, dcg, work, iwork, longest = pass_scratch(offsets, gstart, gend, plan, threads, rows)
    if bool(parallel) not in _PASSES:
        _PASSES[bool(parallel)] = build_pass(sys.modules[__name__], True, False, bool(parallel))
    _PASSES[bool(parallel)](labels, offsets, np.ascontiguousarray(starts, dtype=np.bool_),
                            grades, gstart, gend, plan, out, prof, dcg, work, iwork,
                            _log2_table(longest + 1))
