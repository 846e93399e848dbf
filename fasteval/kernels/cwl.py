"""C/W/L measures and Compatibility: per-query functions called by the score pass.

C/W/L (Moffat et al.; Azzopardi, Thomas and Moffat 2019) describes a measure by the
probability ``c_i`` that a user who has read rank ``i`` goes on to rank ``i + 1``. The
weight of rank ``i`` is ``W_i = P_i / sum_j P_j`` with ``P_1 = 1`` and
``P_{i+1} = P_i * c_i``, and the measure is the expected utility per document,
``sum_i W_i * g_i``. As in ``cwl_eval`` (the reference implementation, which
``ir_measures`` runs for these measures) the ranking is read to a horizon of
:data:`HORIZON` ranks: ranks beyond the ranking, and unjudged documents, gain 0; with
``residual`` the value is how much the measure rises when they gain 1 instead.

Gains come from the labels of :mod:`fasteval.kernels.ranking`: a judged grade ``v`` (a
negative one counts as 0) gains ``(clip(v, lo, hi) - lo) / (hi - lo)``; with a binary
level (``RBP(rel=k)``), 1 when ``v >= k``.

The ranks past the end of the ranking are summed in closed form where the continuation
has one (geometric for RBP and NERR10, telescoping squares for INSQ, INST and NERR11,
through the trigamma function), so that a query costs its ranking's length, not the
horizon.
"""

from __future__ import annotations

import math

from fasteval._jit import JIT, njit
from fasteval.measures.registry import Code

HORIZON = 1000
"""Ranks a C/W/L user model reads (cwl_eval's default depth): longer rankings are cut."""

@njit(**JIT)
def _trigamma(x):
    """psi_1(x) = sum_{j>=0} 1 / (x + j)^2 for x > 0 (recurrence to x >= 10, then the
    asymptotic series; relative error below 1e-15)."""
    acc = 0.0
    while x < 10.0:
        acc += 1.0 / (x * x)
        x += 1.0
    z = 1.0 / (x * x)
    series = 1.0 / 6.0 + z * (-1.0 / 30.0 + z * (1.0 / 42.0 + z * (
        -1.0 / 30.0 + z * (5.0 / 66.0 + z * (-691.0 / 2730.0 + z * (7.0 / 6.0))))))
    return acc + 1.0 / x + z / 2.0 + series * z / x


@njit(**JIT)
def _inv_squares(a, b):
    """sum_{x = a, a + 1, ..., < b} 1 / x^2 (a > 0; b - a a whole number)."""
    if b - a <= 32.0 or a > 1e4:  # (far out, psi_1(a) - psi_1(b) would cancel)
        total = 0.0
        x = a
        while x < b - 0.5:
            total += 1.0 / (x * x)
            x += 1.0
        return total
    return _trigamma(a) - _trigamma(b)


@njit(**JIT)
def geometric_tail(p, geo, rest):
    """sum_{j < rest} p * geo^j: the weights of ``rest`` ranks from one of weight ``p`` on,
    each ``geo`` times the one before (0 <= geo < 1)."""
    if geo == 0.0:
        return p
    return p * (1.0 - geo**rest) / (1.0 - geo)


@njit(**JIT)
def _cont(code, i, g, cum, t, k):
    """c_i: the probability of going on from rank ``i`` (1-based) with gain ``g`` there
    and ``cum`` gained up to it (``t``: T or p; ``k``: the cutoff)."""
    if code == Code.RBP:
        return t
    if code == Code.INST:
        y = 1.0 - 1.0 / (i + 2.0 * t - cum)
        return y * y
    if code == Code.INSQ:
        y = 1.0 - 1.0 / (i + 2.0 * t)
        return y * y
    if code == Code.BPM:
        return 1.0 if cum < t and i < k else 0.0
    if code == Code.SDCG:
        return math.log(i + 1.0) / math.log(i + 2.0) if i < k else 0.0
    if code == Code.NERR8:
        return 1.0 - g if i < k else 0.0
    if code == Code.NERR9:
        return i / (i + 1.0) * (1.0 - g) if i < k else 0.0
    if code == Code.NERR10:
        return t * (1.0 - g)
    # NERR11
    y = 1.0 - 1.0 / (i + 2.0 * t)
    return y * y * (1.0 - g)


@njit(**JIT)
def _gain(v, lo, hi, level, u):
    """Gain of label ``v``: ``u`` if unjudged; binary at ``level`` >= 0; else scaled."""
    if v == -1:
        return u
    if v < 0:
        v = 0
    if level >= 0:
        return 1.0 if v >= level else 0.0
    if v <= lo:  # most documents: no division
        return 0.0
    if v >= hi:
        return 1.0
    return (v - lo) / (hi - lo)


@njit(**JIT)
def _utility(code, lab, s, e, k, t, lo, hi, level, u):
    """Expected utility per document, unjudged and missing ranks gaining ``u``."""
    n = min(e - s, HORIZON)
    num = 0.0
    den = 0.0
    p = 1.0  # P_i
    cum = 0.0
    for i in range(1, n + 1):
        g = _gain(lab[s + i - 1], lo, hi, level, u)
        cum += g
        num += p * g
        den += p
        if i == HORIZON:
            return num / den
        p *= _cont(code, i, g, cum, t, k)
        if p == 0.0:
            return num / den
    # ranks n + 1 .. HORIZON gain u; p is P_{n+1}
    m = n + 1
    rest = HORIZON - n  # their number (> 0)
    geo = -1.0  # a constant continuation, if the tail has one
    a = 0.0  # else c_i = ((i + a - 1) / (i + a))^2 * f, with f 0 or 1
    if code == Code.RBP:
        geo = t
    elif code == Code.NERR10:
        geo = t * (1.0 - u)
    elif code == Code.INSQ or (code == Code.NERR11 and u == 0.0):
        a = 2.0 * t
    elif code == Code.NERR11:
        geo = 0.0
    elif code == Code.INST:
        if u == 0.0:
            a = 2.0 * t - cum
        else:  # i - cum stays n - cum: c is constant
            x = n + 2.0 * t - cum
            geo = ((x - 1.0) / x) ** 2
    else:  # BPM, SDCG, NERR8, NERR9: stop at the cutoff; read the ranks one by one
        for i in range(m, HORIZON + 1):
            cum += u
            num += p * u
            den += p
            if i == HORIZON:
                break
            p *= _cont(code, i, u, cum, t, k)
            if p == 0.0:
                break
        return num / den
    if geo >= 0.0:
        tail = geometric_tail(p, geo, rest)
    else:
        # P_j = P_m * ((m - 1 + a) / (j - 1 + a))^2 for j >= m
        b = m - 1 + a
        tail = p * b * b * _inv_squares(b, b + rest)
    num += u * tail
    den += tail
    return num / den


@njit(**JIT)
def cwl_value(code, lab, s, e, k, t, lo, hi, level, residual):
    """A C/W/L measure of the ranking ``lab[s:e]`` (see the module docstring).

    ``level`` >= 0: binary gains at it (``RBP(rel=k)``); else gains scaled by ``lo`` and
    ``hi``. ``residual``: the rise of the measure when unjudged and missing ranks gain 1.
    """
    low = _utility(code, lab, s, e, k, t, lo, hi, level, 0.0)
    if not residual:
        return low
    return _utility(code, lab, s, e, k, t, lo, hi, level, 1.0) - low


@njit(**JIT)
def _first_of(grades, gs, ge, g):
    """Index of the first grade equal to ``g`` in the descending ``grades[gs:ge]``."""
    lo = gs
    hi = ge
    while lo < hi:
        mid = (lo + hi) // 2
        if grades[mid] > g:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(**JIT)
def compat(lab, s, e, grades, gs, nrel, level, p, normalize, prefix, seen):
    """Compatibility (Clarke, Vtyurina and Smucker 2020) of the ranking ``lab[s:e]``.

    The ideal ranking lists the ``nrel`` judged documents of grade >= ``level`` (the first
    of the descending ``grades[gs:]``) by grade, equal
    grades in the order the ranking has them (unretrieved ones last). With ``d`` the
    larger of the two lengths and ``O_i`` the overlap of the top ``i`` of both, the value
    is ``sum_{i<=d} p^(i-1) O_i / i`` over ``sum_{i<=d} p^(i-1)`` (rank-biased overlap),
    or, normalised, over the same sum for the ideal ranking against itself.

    A retrieved relevant document counts in ``O_i`` from ``i = max(its rank, its ideal
    rank)`` on, so the sum is taken per document from the prefix sums of
    ``p^(i-1) / i`` (``prefix``, scratch of at least ``d + 1``); ``seen`` (scratch of at
    least the number of relevant documents) counts the documents of each grade met so far,
    at the grade's first ideal rank.
    """
    n = e - s
    if nrel == 0:
        return 0.0
    d = max(n, nrel)
    prefix[0] = 0.0
    w = 1.0
    weights = 0.0  # sum_{i < d} p^i
    top = 0.0  # sum_{i < nrel} p^i
    for i in range(d):
        prefix[i + 1] = prefix[i] + w / (i + 1.0)
        weights += w
        if i < nrel:
            top += w
        w *= p
    for i in range(nrel):
        seen[i] = 0
    total = 0.0
    for i in range(n):
        v = lab[s + i]
        if v >= level:
            first = _first_of(grades, gs, gs + nrel, v) - gs
            ideal = first + seen[first]
            seen[first] += 1
            total += prefix[d] - prefix[max(i, ideal)]
    if normalize:
        best = top + nrel * (prefix[d] - prefix[nrel])
        return total / best
    return total / weights
