"""Grouped numba kernels for the ranking measures (trec_eval definitions).

Inputs are flat arrays over all evaluated queries:

* ``labels[offsets[q]:offsets[q+1]]``: query ``q``'s ranking in rank order; a label is the
  judged grade (>= 0), ``-1`` (not in the pool) or ``-2`` (in the pool, unjudged).
* ``grades[gstart[q]:gend[q]]``: the judged grades (>= 0) of all of query ``q``'s qrels,
  sorted descending (the ideal ranking).

One call computes every requested measure ("slot") for every query: ``prange`` over
queries, and for each query a loop over the slots while its slice sits in cache. The
common families read their values off two per-query profiles computed once (running
relevant count and precision sum at a relevance level; running DCG), to the deepest cutoff
asked; each other family is one function taking its parameters (cutoff, fraction,
relevance level, gains), called from ``_one``.

Which of these answers a family is its registry row's kernel path (``Family.trec``); each
path has one dispatch function branching on the family's ``Code`` constant (:data:`PATHS`),
checked against the rows when this module is imported. The pass itself
(:func:`build_pass`) is one skeleton for both tie rules: :mod:`fasteval.kernels.expected`
builds the tie-aware pass from it with its own profiles and dispatch functions.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from numba import get_num_threads, get_thread_id, prange

from fasteval._jit import JIT, njit
from fasteval.kernels._borrow import borrow as _borrow
from fasteval.kernels.cwl import compat as _compat
from fasteval.kernels.cwl import cwl_value as _cwl_value
from fasteval.measures.gains import IDEAL_VARIANTS as _IDEAL_VARIANTS
from fasteval.measures.plan import FULL, MODE_DCG, MODE_MODEL, MODE_REL, Plan
from fasteval.measures.registry import (
    FAMILIES,
    PATH_DCG,
    PATH_MODEL,
    PATH_OWN,
    PATH_REL,
    PATH_REL_FULL,
    Code,
    check_paths,
)

NONPOOL = -1
UNJUDGED = -2
INFAP_EPSILON = 0.00001
_WHOLE = 1 << 62  # a cutoff meaning the whole ranking (and the whole ideal one)
C_NAN = -math.nan
"""What C's ``0.0 / 0.0`` gives on x86 (the sign bit set): trec_eval prints it as ``-nan``."""

@njit(**JIT)
def _top_end(s, e, k):
    """End of the top ``k`` of the slice ``[s, e)``: ``min(e, s + k)`` without computing
    ``s + k``, which overflows for a huge ``k`` (a cutoff meaning "no limit")."""
    return s + k if k < e - s else e


@njit(**JIT)
def _num_rel(grades, gs, ge, level):
    """Number of judged grades >= level (grades sorted descending)."""
    c = 0
    for i in range(gs, ge):
        if grades[i] >= level:
            c += 1
        else:
            break
    return c


@njit(**JIT)
def _count_level(grades, gs, ge, level):
    c = 0
    for i in range(gs, ge):
        g = grades[i]
        if g == level:
            c += 1
        elif g < level:
            break
    return c


@njit(**JIT)
def _rel_in_top(lab, s, e, k, level):
    stop = _top_end(s, e, k)
    c = 0
    for i in range(s, stop):
        if lab[i] >= level:
            c += 1
    return c


@njit(**JIT)
def _round_cut(x, compat):
    """Relevant-document count for a recall fraction: lround (10.0) or (long)(x + 0.9) (9.x)."""
    if compat == 9:
        return int(math.floor(x + 0.9)) if x + 0.9 >= 0 else int(math.ceil(x + 0.9))
    if x >= 0:
        return int(math.floor(x + 0.5))
    return -int(math.floor(-x + 0.5))


@njit(**JIT)
def _bpref(lab, s, e, level, nrel, n_nonrel):
    nonrel_so_far = 0
    total = 0.0
    for i in range(s, e):
        v = lab[i]
        if v < 0:
            continue
        if v >= level:
            if nonrel_so_far > 0:
                total += 1.0 - min(nonrel_so_far, nrel) / min(n_nonrel, nrel)
            else:
                total += 1.0
        else:
            nonrel_so_far += 1
    if nrel:
        total /= nrel
    return total


@njit(**JIT)
def _interp_precision(lab, s, e, level, nrel, nrr, frac, compat, stop_at_first):
    """Interpolated precision at one recall fraction (trec_eval's reverse walk)."""
    cut = _round_cut(frac * nrel, compat)
    n = e - s
    if cut > nrr:
        return 0.0
    if n == 0:  # trec_eval divides 0 by 0 here (x86's default NaN has its sign bit set)
        return C_NAN
    int_prec = nrr / n
    rel_so_far = nrr
    i = n
    while i > 0:
        if stop_at_first and rel_so_far <= 0:
            break
        prec = rel_so_far / i
        if int_prec < prec:
            int_prec = prec
        if lab[s + i - 1] >= level:
            if rel_so_far == cut:
                return int_prec
            rel_so_far -= 1
        i -= 1
    return int_prec


@njit(**JIT)
def _pt_avg(lab, s, e, level, nrel, nrr, vec, vs, ve, compat):
    """trec_eval's 11pt_avg at the recall points ``vec[vs:ve]``: one reverse walk down the
    ranking with a pointer that starts at the last point and moves to the previous one each
    time the relevant count so far equals the pointed point's cutoff, adding the
    interpolated precision reached; the points the walk leaves add the last one. For
    ascending points that is the mean of their interpolated precisions (summed from the last
    point to the first, as trec_eval sums); for others it is trec_eval's number, which is not
    that mean."""
    m = ve - vs
    n = e - s
    cur = m - 1
    while cur >= 0 and _round_cut(vec[vs + cur] * nrel, compat) > nrr:
        cur -= 1
    int_prec = nrr / n if n > 0 else C_NAN  # trec_eval divides 0 by 0 there
    total = 0.0
    rel_so_far = nrr
    i = n
    while i > 0 and rel_so_far > 0:
        prec = rel_so_far / i
        if int_prec < prec:
            int_prec = prec
        if lab[s + i - 1] >= level:
            while cur >= 0 and rel_so_far == _round_cut(vec[vs + cur] * nrel, compat):
                total += int_prec
                cur -= 1
            rel_so_far -= 1
        i -= 1
    while cur >= 0:
        total += int_prec
        cur -= 1
    return total / m


@njit(**JIT)
def _infap(lab, s, e, level, nrel):
    nonrel = 0
    rel = 0
    unjudged = 0
    total = 0.0
    for i in range(s, e):
        v = lab[i]
        j = i - s
        if v == NONPOOL:
            continue
        if v == UNJUDGED:
            unjudged += 1
            continue
        if v >= 0 and v < level:
            nonrel += 1
        else:
            rel += 1
            if j == 0:
                total += 1.0
            else:
                fj = float(j)
                total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                    (rel - 1 + nonrel + unjudged) / fj
                ) * ((rel - 1 + INFAP_EPSILON) / (rel - 1 + nonrel + 2 * INFAP_EPSILON))
    if nrel:
        total /= nrel
    return total


@njit(**JIT)
def _gain(label, cl, cv, cs, ce):
    """trec_eval get_gain: a custom gain for the label's level, else the level itself."""
    for j in range(cs, ce):
        if cl[j] == label:
            return cv[j]
    if label >= 0:
        return float(label)
    return 0.0


@njit(**JIT)
def _ideal_range(ol, os_, oe, grades, gs, ge):
    """The ideal-order levels ``ol[os_:oe]`` of a slot for the topic whose judged grades
    are ``grades[gs:ge]``: all of them, or the topic's order when they hold one order per
    largest grade (led by :data:`fasteval.measures.gains.IDEAL_VARIANTS`)."""
    if oe == os_ or ol[os_] != _IDEAL_VARIANTS:
        return os_, oe
    nv = ol[os_ + 1]
    top = grades[gs] if ge > gs else 0
    v = 0
    while v + 1 < nv and ol[os_ + 2 + v + 1] <= top:
        v += 1
    base = os_ + 2 + 2 * nv + 1
    return base + ol[os_ + 2 + nv + v], base + ol[os_ + 2 + nv + v + 1]


@njit(**JIT)
def _next_ideal(j, oe, ol, grades, gs, ge):
    """Advance in the slot's gain-ordered level list to the next level present in the qrels."""
    while j < oe:
        c = _count_level(grades, gs, ge, ol[j])
        if c > 0:
            return j, c
        j += 1
    return j, 0


@njit(**JIT)
# long: one walk down the ranking and the ideal ranking at once; a split passes ten sums per call
def _ndcg_family(lab, s, e, grades, gs, ge, cl, cv, cs, ce, ol, og, os_, oe, which, level, k):
    """ndcg (0), ndcg_rel (1), Rndcg (2) and G (3) with trec_eval's gain rules; ndcg of the
    top ``k`` (and the ideal top ``k``) for a cutoff (``nDCG(gains={...})@k``)."""
    n = e - s
    if which == 0 and k < n:
        n = k
    j, left = _next_ideal(os_, oe, ol, grades, gs, ge)
    ideal_gain = og[j] if j < oe else 0.0
    results_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0
    num_rel = 0
    num_rel_ret = 0
    old_ideal = ideal_gain
    n_changed = 0
    # G state
    sum_results = 0.0
    sum_cost = 0.0
    results_g = 0.0
    if which == 2:
        if _num_rel(grades, gs, ge, level) == 0:
            return 0.0
    i = 0
    while i < n and ideal_gain > 0.0:
        rg = _gain(lab[s + i], cl, cv, cs, ce)
        # step the ideal ranking
        if left == 0:
            j, left = _next_ideal(j + 1, oe, ol, grades, gs, ge)
            ideal_gain = og[j] if j < oe else 0.0
        left -= 1
        if which == 2:
            if old_ideal != ideal_gain:
                if ideal_dcg > 0.0:
                    total += results_dcg / ideal_dcg
                    n_changed += 1
                old_ideal = ideal_gain
        if which == 3:
            sum_results += rg
            if ideal_gain >= 1.0:
                sum_cost += ideal_gain
            else:
                sum_cost += 1.0
            if rg != 0:
                results_g += rg / math.log2(2.0 + sum_cost - sum_results)
            if ideal_gain > 0.0:
                ideal_dcg += ideal_gain
        else:
            if rg != 0:
                results_dcg += rg / math.log2(i + 2.0)
            if ideal_gain > 0.0:
                ideal_dcg += ideal_gain / math.log2(i + 2.0)
                num_rel += 1
            if which == 1 and rg > 0:
                total += results_dcg / ideal_dcg
                num_rel_ret += 1
        i += 1
    if i < n:
        while i < n:
            rg = _gain(lab[s + i], cl, cv, cs, ce)
            if which == 3:
                sum_results += rg
                sum_cost += 1.0
                if rg != 0:
                    results_g += rg / math.log2(2.0 + sum_cost - sum_results)
            else:
                if rg != 0:
                    results_dcg += rg / math.log2(i + 2.0)
                if which == 1 and rg > 0:
                    total += results_dcg / ideal_dcg
                    num_rel_ret += 1
            i += 1
        if which == 2 and ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            n_changed += 1
    while ideal_gain > 0.0 and i < k:
        if left == 0:
            j, left = _next_ideal(j + 1, oe, ol, grades, gs, ge)
            ideal_gain = og[j] if j < oe else 0.0
        left -= 1
        if which == 2 and old_ideal != ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                n_changed += 1
            old_ideal = ideal_gain
        if ideal_gain > 0.0:
            if which == 3:
                ideal_dcg += ideal_gain
            else:
                ideal_dcg += ideal_gain / math.log2(i + 2.0)
                num_rel += 1
        i += 1
    if which == 0:
        return results_dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0
    if which == 1:
        total += (num_rel - num_rel_ret) * results_dcg / ideal_dcg
        return total / num_rel if total > 0.0 else 0.0
    if which == 2:
        return total / n_changed
    return results_g / ideal_dcg if ideal_dcg > 0.0 else 0.0


@njit(**JIT)
def _rbp_raw(lab, s, e, p, floor):
    """Rank-biased precision with the grade as gain (grades > 0 and >= floor; ranx)."""
    total = 0.0
    cur = 1.0
    for i in range(s, e):
        g = lab[i]
        if g > 0 and g >= floor:
            total += g * cur
        cur *= p
    return (1.0 - p) * total


@njit(**JIT)
def _rbp(lab, s, e, p, grades, gs, ge, cl, cv, cs, ce):
    """Rank-biased precision with trec_eval's gain rescaling to [0, 1]."""
    maxg = grades[gs] if ge > gs else -1
    gmin = 0.0
    gmax = 0.0
    first = True
    for lv in range(0, maxg + 1):
        g = _gain(lv, cl, cv, cs, ce)
        if first:
            gmin = g
            gmax = g
            first = False
        else:
            gmin = min(gmin, g)
            gmax = max(gmax, g)
    for j in range(cs, ce):
        g = cv[j]
        if first:
            gmin = g
            gmax = g
            first = False
        else:
            gmin = min(gmin, g)
            gmax = max(gmax, g)
    rescale = gmin < 0.0 or gmax > 1.0
    total = 0.0
    cur = 1.0
    for i in range(s, e):
        v = lab[i]
        g = _gain(v, cl, cv, cs, ce)
        known = v >= 0 and v <= maxg
        if not known:
            for j in range(cs, ce):
                if cl[j] == v:
                    known = True
        if not known:
            g = 0.0
        elif rescale:
            g = (g - gmin) / (gmax - gmin)
        if g != 0:
            total += g * cur
        cur *= p
    return (1.0 - p) * total


@njit(**JIT)
def _err(lab, s, e, k, gmax):
    """Expected reciprocal rank of the top k: a document of grade g stops the user with
    probability R(g) = (2^g - 1) / 2^gmax (Chapelle et al. 2009; gdeval's mapping).
    The planner makes sure no grade exceeds ``gmax``."""
    stop = _top_end(s, e, k)
    scale = 2.0**gmax
    total = 0.0
    reach = 1.0  # probability that the user reaches the rank
    for i in range(s, stop):
        g = lab[i]
        if g > 0:
            r = (2.0**g - 1.0) / scale
            total += reach * r / (i - s + 1.0)
            reach *= 1.0 - r
    return total


@njit(**JIT)
def _p_judged(lab, s, e, k, level):
    """Relevant among the first k judged documents (labels >= 0) / k."""
    seen = 0
    rel = 0
    for i in range(s, e):
        if seen >= k:
            break
        v = lab[i]
        if v >= 0:
            seen += 1
            if v >= level:
                rel += 1
    return rel / k


@njit(**JIT)
def _rbp_resid(lab, s, e, p):
    unj = 0
    total = 0.0
    cur = 1.0
    for i in range(s, e):
        if lab[i] < 0:
            unj += 1
            total += cur
        cur *= p
    if unj:
        return cur + (1.0 - p) * total
    return 0.0


@njit(**JIT)
def _count_below(lab, s, e, k, lo, hi):
    """Number of labels in the top k with lo <= label <= hi."""
    stop = _top_end(s, e, k)
    c = 0
    for i in range(s, stop):
        v = lab[i]
        if v >= lo and v <= hi:
            c += 1
    return c


@njit(**JIT)
def _binG(lab, s, e, level, nrel):
    rel = 0
    total = 0.0
    for i in range(s, e):
        if lab[i] >= level:
            rel += 1
            total += 1.0 / math.log2(3.0 + (i - s) - rel)
    if rel:
        return total / nrel
    return 0.0


@njit(inline="always", **JIT)
def _one_model(plan, j, lab, s, e, grades, gs, ge, work, iwork):
    """Slot ``j``'s value for one query, for the user-model families
    (:data:`fasteval.measures.plan.MODE_MODEL`: C/W/L measures, RBP(rel=k), Compatibility;
    :mod:`fasteval.kernels.cwl`). ``work`` and ``iwork`` are the thread's scratch for the
    families that declare ``NEEDS_WORK``."""
    code = plan.codes[j]
    k = plan.cuts[j]
    p = plan.params[j]
    level = plan.levels[j]
    vec = plan.vec
    vs = plan.voff[j]
    if code == Code.RBP:  # binary gains at the measure's rel; options: residual
        return _cwl_value(code, lab, s, e, k, p, 0.0, 1.0, level, vec[vs] > 0.0)
    if code == Code.COMPAT or code == Code.COMPAT_RAW:
        return _compat(lab, s, e, grades, gs, _num_rel(grades, gs, ge, level), level, p,
                       code == Code.COMPAT, work, iwork)
    if (code == Code.INST or code == Code.INSQ or code == Code.BPM or code == Code.SDCG
            or code == Code.NERR8 or code == Code.NERR9 or code == Code.NERR10
            or code == Code.NERR11):  # options: min_rel, max_rel, residual
        return _cwl_value(code, lab, s, e, k, p, vec[vs], vec[vs + 1], -1, vec[vs + 2] > 0.0)
    return np.nan


@njit(inline="always", **JIT)
def _one(plan, j, lab, st, s, e, grades, gs, ge, lg):
    """Slot ``j``'s value for one query by its family's own function: the trec pass's
    dispatch of ``PATH_OWN`` (:data:`PATHS`). ``st`` and ``lg`` are the expected pass's
    (its tie starts and discounts), not read here.

    Each family is reached through its constant in :class:`Code`; the rows and these
    branches are checked against each other when this module is imported
    (:func:`fasteval.measures.registry.check_paths`), so the NaN at the end is never
    returned.
    """
    code = plan.codes[j]
    k = plan.cuts[j]
    p = plan.params[j]
    level = plan.levels[j]
    n = e - s
    nrel = _num_rel(grades, gs, ge, level)
    if code == Code.NUM_Q:
        return 1.0
    if code == Code.NUM_RET:
        return float(n)
    if code == Code.NUM_REL:
        return float(nrel)
    if code == Code.BPREF or code == Code.GM_BPREF:
        return _bpref(lab, s, e, level, nrel, (ge - gs) - nrel)
    if code == Code.IPREC_AT_RECALL:
        nrr = _rel_in_top(lab, s, e, n, level)
        return _interp_precision(lab, s, e, level, nrel, nrr, p, plan.compat, plan.compat == 10)
    if code == Code.INFAP:
        return _infap(lab, s, e, level, nrel)
    vs = plan.voff[j]
    vec = plan.vec
    if code == Code.UTILITY:
        nrr = _rel_in_top(lab, s, e, n, level)
        return (vec[vs] * nrr + vec[vs + 1] * (n - nrr) + vec[vs + 2] * (nrel - nrr)
                + vec[vs + 3] * (plan.ndocs + nrr - n - nrel))
    if code == Code.F11PT_AVG:
        nrr = _rel_in_top(lab, s, e, n, level)
        return _pt_avg(lab, s, e, level, nrel, nrr, vec, vs, plan.voff[j + 1], plan.compat)
    if code == Code.BING:
        return _binG(lab, s, e, level, nrel)
    cl = plan.cl
    cv = plan.cv
    cs = plan.coff[j]
    ce = plan.coff[j + 1]
    if (code == Code.NDCG or code == Code.NDCG_CUT or code == Code.NDCG_REL
            or code == Code.RNDCG or code == Code.G):  # ndcg_cut: with custom gains
        which = 1 if code == Code.NDCG_REL else (2 if code == Code.RNDCG else (
            3 if code == Code.G else 0))
        os_, oe = _ideal_range(plan.ol, plan.ooff[j], plan.ooff[j + 1], grades, gs, ge)
        return _ndcg_family(lab, s, e, grades, gs, ge, cl, cv, cs, ce, plan.ol, plan.og, os_,
                            oe, which, level, k if code == Code.NDCG_CUT else _WHOLE)
    if code == Code.NUM_NONREL_JUDGED_RET:
        return float(_count_below(lab, s, e, n, 0, level - 1))
    if code == Code.RBP:  # trec_eval's graded rbp (RBP(rel=k) is _one_model's)
        return _rbp(lab, s, e, p, grades, gs, ge, cl, cv, cs, ce)
    if code == Code.RBP_CUT:  # trec_eval's rbp of the top k (ir_measures' RBP@k)
        return _rbp(lab, s, _top_end(s, e, k), p, grades, gs, ge, cl, cv, cs, ce)
    if code == Code.RBP_RESID:
        return _rbp_resid(lab, s, e, p)
    if code == Code.UNJ:
        return _count_below(lab, s, e, k, -2, -1) / k
    if code == Code.JUDGED:
        d = min(k, n)
        if d == 0:
            return 0.0
        return _count_below(lab, s, e, k, 0, 2147483647) / d
    if code == Code.RBP_RAW:
        return _rbp_raw(lab, s, e, p, level)
    if code == Code.ERR:
        return _err(lab, s, e, k, p)
    if code == Code.P_JUDGED:
        return _p_judged(lab, s, e, k, level)
    if code == Code.SET_JUDGED:
        return _count_below(lab, s, e, n, 0, 2147483647) / n if n > 0 else 0.0
    return np.nan


@njit(**JIT)
def _rel_profile(lab, st, s, e, d, level, prof):
    """prof[0, i] / prof[1, i]: labels >= level / sum of precisions at them, in the top i
    (i <= d). Returns the rank (0-based) of the first such label, -1 if none in the top d.
    (``st`` and ``e``, which the expected pass's profile reads, are not read here.)"""
    crel = prof[0]
    cap = prof[1]
    rel = 0
    total = 0.0
    first = -1
    crel[0] = 0
    cap[0] = 0.0
    for i in range(d):
        if lab[s + i] >= level:
            rel += 1
            total += rel / (i + 1.0)
            if first < 0:
                first = i
        crel[i + 1] = rel
        cap[i + 1] = total
    return first


@njit(**JIT)
def _from_rel_profile(code, k, p, n, nrel, prof, first):
    """A slot's value from the relevance profile (see the family docs in the registry): the
    trec pass's dispatch of ``PATH_REL`` and ``PATH_REL_FULL`` (:data:`PATHS`)."""
    crel = prof[0]
    cap = prof[1]
    if code == Code.NUM_REL_RET:
        return float(crel[n])
    if code == Code.MAP or code == Code.GM_MAP:
        return cap[n] / nrel if nrel else 0.0
    if code == Code.RPREC:
        return crel[min(nrel, n)] / nrel if nrel else 0.0
    if code == Code.RECIP_RANK:
        return 1.0 / (first + 1) if first >= 0 else 0.0
    if code == Code.P:
        return crel[min(k, n)] / k
    if code == Code.RECALL:
        return crel[min(k, n)] / nrel if nrel else 0.0
    if code == Code.RPREC_MULT:
        cut = int(math.floor(p * nrel + 0.9))
        return crel[min(cut, n)] / cut if cut > 0 else 0.0
    if code == Code.MAP_CUT:
        return cap[min(k, n)] / nrel if nrel else 0.0
    if code == Code.RELATIVE_P:
        d = min(k, nrel)
        return crel[min(k, n)] / d if d else 0.0
    if code == Code.SUCCESS:
        return 1.0 if crel[min(k, n)] > 0 else 0.0
    if code == Code.RECIP_RANK_CUT:
        return 1.0 / (first + 1) if first >= 0 and first < k else 0.0
    if code == Code.HITS:
        return float(crel[min(k, n)])
    if code == Code.SET_P_CUT:
        d = min(k, n)
        return crel[d] / d if d > 0 else 0.0
    if code == Code.F1:
        r = crel[min(k, n)]
        if r == 0 or nrel == 0:
            return 0.0
        prec = r / k
        rec = r / nrel
        return 2.0 * prec * rec / (prec + rec)
    nrr = crel[n]  # the set measures
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


@njit(**JIT)
def _running_dcg(values, start, count, exp_gain, floor, out):
    """out[i]: DCG of values[start:start + i] (i <= count) as a ranking, gain = grade (or
    2^grade - 1) for grades > 0 and >= floor, discount log2(rank + 1)."""
    dcg = 0.0
    out[0] = 0.0
    for i in range(count):
        g = values[start + i]
        if g > 0 and g >= floor:
            gain = (2.0**g - 1.0) if exp_gain else float(g)
            dcg += gain / math.log2(i + 2.0)
        out[i + 1] = dcg


@njit(**JIT)
def _dcg_profile(lab, st, s, e, d, grades, gs, gd, exp_gain, floor, lg, prof):
    """prof[0, i]: DCG of the top i (i <= d); prof[1, i]: DCG of the best i judged grades
    (i <= gd); grades below ``floor`` gain 0 (a measure's ``rel``). (``st``, ``e`` and
    ``lg``, which the expected pass's profiles read, are not read here.)"""
    _running_dcg(lab, s, d, exp_gain, floor, prof[0])
    _running_dcg(grades, gs, gd, exp_gain, floor, prof[1])


@njit(**JIT)
def _dcg_kind(code):
    """A DCG slot's gain (1: 2^grade - 1, 0: the grade) and whether it is normalised by the
    ideal DCG: the dispatch of ``PATH_DCG``, shared by both passes (:data:`PATHS`)."""
    if code == Code.NDCG_CUT:
        return 0, True
    if code == Code.NDCG_BURGES or code == Code.NDCG_BURGES_CUT:
        return 1, True
    if code == Code.DCG:
        return 0, False
    if code == Code.DCG_BURGES:
        return 1, False
    return -1, False


PATHS = {PATH_REL: (_from_rel_profile,), PATH_REL_FULL: (_from_rel_profile,),
         PATH_DCG: (_dcg_kind,), PATH_MODEL: (_one_model,), PATH_OWN: (_one,)}
"""The trec pass's dispatch functions by kernel path (the registry's ``Family.trec``),
checked against the registry when this module is imported."""
check_paths("trec", PATHS)


def implemented_codes() -> frozenset[int]:
    """The family codes the trec pass computes: those of the families that declare a path
    of it (each checked against its dispatch function, see :data:`PATHS`); the planner
    refuses the others (``relstring``).

    Examples
    --------
    >>> int(Code.NDCG_CUT) in implemented_codes()
    True
    """
    global _IMPLEMENTED
    if _IMPLEMENTED is None:
        _IMPLEMENTED = frozenset(f.code for f in FAMILIES if f.trec)
    return _IMPLEMENTED


_IMPLEMENTED: frozenset[int] | None = None

SERIAL_ROWS = 1 << 17
"""Batches of fewer ranked rows are scored by the serial variant of a pass (see
:func:`score_queries`): a parallel kernel costs more to compile and to start than such a
batch takes to score on one core."""

_PASSES: dict[tuple[bool, bool, bool], object] = {}
_NO_STARTS = np.zeros(0, dtype=np.bool_)
_NO_DISCOUNTS = np.zeros(0, dtype=np.float64)


def score_queries(labels, offsets, grades, gstart, gend, plan, out, n_threads=None, parallel=None):
    """Fill ``out[q, j]`` with slot ``j``'s value for query ``q``.

    Parameters
    ----------
    labels, offsets : the rankings (see module docstring).
    grades, gstart, gend : judged grades of query q are grades[gstart[q]:gend[q]], descending.
    plan : :class:`fasteval.measures.plan.Plan`
        The slots (from :func:`fasteval.measures.plan.plan_slots`).
    out : float64[n_queries, n_slots], preallocated.
    n_threads : one scratch area per thread; None: ``numba.get_num_threads()``, asked only
        for a parallel pass (the first call starts numba's thread pool, some 30 ms).
    parallel : run the pass over queries in parallel; None: when the batch has at least
        :data:`SERIAL_ROWS` ranked rows.

    Slots of the common families are answered from one scan per query (a running count and
    precision sum, a running DCG) up to the deepest cutoff asked, instead of one scan per
    slot; the others call their family function. Only the variant of the pass that a batch
    needs is compiled and loaded (:func:`build_pass`): without the family functions when
    every slot is answered from a profile, serial for a small batch.

    Examples
    --------
    >>> from fasteval.measures import parse_measures
    >>> from fasteval.measures.plan import plan_slots
    >>> labels = np.array([1, 0, 2], dtype=np.int32)
    >>> offsets = np.array([0, 3])
    >>> grades, gs, ge = np.array([2, 1, 0], dtype=np.int32), np.array([0]), np.array([3])
    >>> out = np.zeros((1, 2))
    >>> plan = plan_slots(parse_measures(["P@2", "bpref"]))
    >>> score_queries(labels, offsets, grades, gs, ge, plan, out, 1)
    >>> out.tolist()
    [[0.5, 0.5]]
    """
    if parallel is None:
        parallel = labels.shape[0] >= SERIAL_ROWS
    if not parallel:
        threads = 1
    else:
        threads = max(1, int(get_num_threads() if n_threads is None else n_threads))
    key = (plan.generic or plan.model, plan.model, bool(parallel))
    if key not in _PASSES:
        _PASSES[key] = build_pass(sys.modules[__name__], *key)
    prof, dcg, work, iwork, _ = pass_scratch(offsets, gstart, gend, plan, threads, 2)
    _PASSES[key](labels, offsets, _NO_STARTS, grades, gstart, gend, plan, out, prof, dcg, work,
                 iwork, _NO_DISCOUNTS)


def pass_scratch(offsets, gstart, gend, plan, threads, rel_rows):
    """The per-thread scratch of a pass (:func:`build_pass`), allocated here so that it
    outlives the parallel loop, which borrows it: ``(prof, dcg, work, iwork, longest)``,
    the relevance profile (``rel_rows`` rows as deep as a ranking reads it), the DCG
    profiles (of the ranking and of the ideal one), the user models' work arrays
    (``NEEDS_WORK``) and the length of the longest ranking or judgment list."""
    nq = offsets.shape[0] - 1
    longest = max(0, int(np.diff(offsets).max())) if nq > 0 else 0
    judged = max(0, int((gend[:nq] - gstart[:nq]).max())) if nq > 0 else 0
    rdepth = plan.rel_depth
    lr = 0 if rdepth == 0 else (longest if rdepth == FULL else min(longest, rdepth))
    ld = min(max(longest, judged), plan.dcg_depth)
    lw = max(longest, judged) if plan.work else 0
    return (np.empty((threads, rel_rows, lr + 1)), np.empty((threads, 2, ld + 1)),
            np.empty((threads, lw + 1)), np.empty((threads, lw + 1), dtype=np.int64),
            max(longest, judged))


@njit(inline="always", **JIT)
def _borrowed_plan(plan):
    """The plan with its arrays borrowed (:mod:`fasteval.kernels._borrow`): a family
    function reads them without reference counts."""
    return Plan(_borrow(plan.codes), _borrow(plan.modes), _borrow(plan.cuts),
                _borrow(plan.params), _borrow(plan.levels), _borrow(plan.vec),
                _borrow(plan.voff), _borrow(plan.cl), _borrow(plan.cv), _borrow(plan.coff),
                _borrow(plan.ol), _borrow(plan.og), _borrow(plan.ooff), plan.rel_depth,
                plan.dcg_depth, plan.compat, plan.ndocs, plan.work)


def build_pass(kit, generic: bool, model: bool, parallel: bool):
    """The score pass over queries (scratch from :func:`pass_scratch`), for either tie rule:
    one skeleton whose closure constants numba folds, and keys its cache on.

    ``kit``: the module whose kernels the pass calls, this one (the trec pass) or
    :mod:`fasteval.kernels.expected` (expected values over tie orderings); each has
    ``_rel_profile`` (a query's relevance profile), ``_from_rel_profile`` (the dispatch of
    ``PATH_REL`` and ``PATH_REL_FULL``), ``_dcg_profile`` (its DCG profiles) and ``_one``
    (the dispatch of ``PATH_OWN``), with the same arguments; :func:`_dcg_kind` (``PATH_DCG``)
    is shared, :func:`_one_model` (``PATH_MODEL``) is the trec pass's. ``generic``: slots
    of ``PATH_OWN`` call ``kit._one`` (most of the compile time; without it such slots
    would be NaN, so it is chosen whenever a slot needs it). ``model``: slots of
    :data:`MODE_MODEL` call ``_one_model`` (only with ``generic``: a job without such a
    slot never compiles :mod:`fasteval.kernels.cwl`). ``parallel``: a ``prange`` over
    queries, else one thread. Callers keep the variants they build (:data:`_PASSES`).
    """
    # the trec pass's family functions read the plan borrowed; the expected pass's _one
    # reads it as it is (a borrowed copy costs that pass 0.5 s of compile time)
    borrow = generic and kit is sys.modules[__name__]

    def _pass(labels, offsets, starts, grades, gstart, gend, plan, out, prof, dcg, work, iwork,
              lg):
        rdepth = plan.rel_depth
        ddepth = plan.dcg_depth
        labels, starts, grades = _borrow(labels), _borrow(starts), _borrow(grades)
        bplan = _borrowed_plan(plan) if borrow else plan  # (folded away where not)
        codes, modes, cuts = _borrow(plan.codes), _borrow(plan.modes), _borrow(plan.cuts)
        params, levels = _borrow(plan.params), _borrow(plan.levels)
        prof, dcg, lg = _borrow(prof), _borrow(dcg), _borrow(lg)
        work, iwork = _borrow(work), _borrow(iwork)
        for q in prange(offsets.shape[0] - 1):
            s = offsets[q]
            e = offsets[q + 1]
            n = e - s
            gs = gstart[q]
            ge = gend[q]
            dd = min(n, ddepth)
            gd = min(ge - gs, ddepth)
            tid = get_thread_id() if parallel else 0
            rel_level = -1  # level of the relevance profile in scratch (-1: none yet)
            nrel = 0
            first = -1
            dcg_exp = -1  # gain and floor of the DCG profiles in scratch (-1: none yet)
            dcg_floor = 0
            for j in range(codes.shape[0]):
                code = codes[j]
                mode = modes[j]
                if mode == MODE_REL:
                    level = levels[j]
                    if rel_level < 0 or level != rel_level:
                        d = n if rdepth == FULL else min(n, rdepth)
                        first = kit._rel_profile(labels, starts, s, e, d, level, prof[tid])
                        nrel = _num_rel(grades, gs, ge, level)
                        rel_level = level
                    out[q, j] = kit._from_rel_profile(code, cuts[j], params[j], n, nrel,
                                                      prof[tid], first)
                elif mode == MODE_DCG:
                    exp_gain, norm = _dcg_kind(code)
                    floor = levels[j]
                    if exp_gain != dcg_exp or floor != dcg_floor:
                        kit._dcg_profile(labels, starts, s, e, dd, grades, gs, gd, exp_gain == 1,
                                         floor, lg, dcg[tid])
                        dcg_exp = exp_gain
                        dcg_floor = floor
                    value = dcg[tid, 0, min(cuts[j], dd)]
                    if norm:
                        idcg = dcg[tid, 1, min(cuts[j], gd)]
                        value = value / idcg if idcg > 0.0 else 0.0
                    out[q, j] = value
                elif model and mode == MODE_MODEL:
                    out[q, j] = _one_model(bplan, j, labels, s, e, grades, gs, ge, work[tid],
                                           iwork[tid])
                elif generic:
                    out[q, j] = kit._one(bplan, j, labels, starts, s, e, grades, gs, ge, lg)

    kind = ("generic_model" if model else "generic") if generic else "profiles"
    rule = kit.__name__.rsplit(".", 1)[-1]  # each variant its own cache entry
    _pass.__qualname__ = f"_{rule}_pass_{kind}_{'parallel' if parallel else 'serial'}"
    _pass.__name__ = _pass.__qualname__
    return njit(cache=True, parallel=parallel, error_model="numpy")(_pass)
