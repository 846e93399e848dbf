"""trec_eval's gain list for the nDCG family (ndcg, ndcg_rel, Rndcg, G, nDCG(gains)@k).

For each topic trec_eval lists the ``level=gain`` pairs as typed, then every level from 0 to
the topic's largest grade that no pair names, with its grade as gain; it sorts the list by
gain with glibc's ``qsort`` and a comparator that returns the gains' difference converted to
an ``int``. The ideal ranking walks the sorted list from the top: a level's documents (held
by the first pair that names it) at its gain, levels without documents skipped, and the walk
ends at the first level with documents and a gain <= 0, or at once when the top entry's gain
is <= 0. A retrieved document's gain is that of the first entry of its level in the sorted
list.

While every two gains differ by 0 or by at least 1, the comparator is an order, the sort is
by gain, and one list serves every topic. Gains that differ by less than 1 (``ndcg.1=0.5``:
0.5 against level 0's gain 0) compare as equal, so the sorted order depends on the typed
order and on how many levels the topic has; glibc sorts such small arrays with a stable
top-down merge sort, reproduced here, and the plan then holds one ideal order per largest
grade (see :data:`IDEAL_VARIANTS`).
"""

from __future__ import annotations

from collections.abc import Sequence

IDEAL_VARIANTS = -(1 << 62)
"""First entry of a slot's ideal-order levels when they hold one order per largest grade:
``[IDEAL_VARIANTS, v, g_1..g_v, o_0..o_v, data...]``, the orders of topics whose largest
grade is g_i (ascending; a topic takes the last g_i <= its own) at ``data[o_{i-1}:o_i]``."""

MAX_VARIANT_GRADE = 1000
"""Largest grade for which per-topic orders are built (trec_eval itself lists every level
from 0 to the largest grade); above it the gain-descending order is used."""

Entry = tuple[int, float, bool]
"""(level, gain, holds the level's documents)."""


def trec_gain_list(typed: Sequence[tuple[int, float]], n_levels: int) -> list[Entry]:
    """trec_eval's unsorted gain list of a topic with levels 0 to ``n_levels - 1``.

    Examples
    --------
    >>> trec_gain_list([(1, 0.5)], 3)
    [(1, 0.5, True), (0, 0.0, True), (2, 2.0, True)]
    >>> trec_gain_list([(1, 5.0), (1, 2.0)], 2)
    [(1, 5.0, True), (1, 2.0, False), (0, 0.0, True)]
    """
    named: set[int] = set()
    out: list[Entry] = []
    for level, gain in typed:
        out.append((level, float(gain), level not in named and 0 <= level < n_levels))
        named.add(level)
    out.extend((i, float(i), True) for i in range(n_levels) if i not in named)
    return out


def _compare(a: float, b: float) -> int:
    """trec_eval's comparator: the difference converted to an int (truncated toward 0)."""
    return int(a - b)


def glibc_sort(entries: list[Entry]) -> list[Entry]:
    """``entries`` sorted as glibc's ``qsort`` sorts them with trec_eval's comparator: a
    top-down merge sort, the first half of n entries being n // 2, an entry of the first
    half taken while it compares <= 0.

    Examples
    --------
    >>> [e[0] for e in glibc_sort(trec_gain_list([(1, 0.5)], 3))]
    [1, 0, 2]
    """
    if len(entries) <= 1:
        return list(entries)
    half = len(entries) // 2
    a, b = glibc_sort(entries[:half]), glibc_sort(entries[half:])
    out: list[Entry] = []
    i = j = 0
    while i < len(a) and j < len(b):
        if _compare(a[i][1], b[j][1]) <= 0:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]


def consistent(typed: Sequence[tuple[int, float]], max_grade: int) -> bool:
    """Whether every two gains of the lists (typed gains, and the grades 0 to ``max_grade``
    that no pair names) differ by 0 or by at least 1, so that trec_eval's comparator orders
    them by gain.

    Examples
    --------
    >>> consistent([(1, 3.0), (2, 9.0)], 4), consistent([(1, 0.5)], 2)
    (True, False)
    """
    gains = sorted({float(g) for _, g in typed})
    named = {lv for lv, _ in typed}
    for a, b in zip(gains, gains[1:], strict=False):
        if b - a < 1.0:
            return False
    for g in gains:
        for level in (int(g // 1), int(g // 1) + 1):
            if 0 <= level <= max_grade and level not in named and 0.0 < abs(g - level) < 1.0:
                return False
    return True


def ideal_order(typed: Sequence[tuple[int, float]], judged: Sequence[int]) -> tuple[
        list[int], list[float]]:
    """The slot's ideal-order levels and gains (the plan's ``ol``/``og`` block): one order
    sorted by gain (descending; ties by level, descending) when the gains are
    :func:`consistent`, else one order per largest grade, led by :data:`IDEAL_VARIANTS`.
    Only levels that may hold documents are listed (judged grades, each once).

    Examples
    --------
    >>> ideal_order([(1, 3.0)], [0, 1, 2])
    ([1, 2, 0], [3.0, 2.0, 0.0])
    >>> levels, gains = ideal_order([(1, 0.5)], [0, 1, 2])
    >>> levels[:2] == [IDEAL_VARIANTS, 3]
    True
    """
    judged_set = {int(g) for g in judged}
    top = max(judged_set, default=0)
    if consistent(typed, top) or top > MAX_VARIANT_GRADE:
        gains = {lv: float(lv) for lv in judged_set}
        first: dict[int, float] = {}
        for lv, g in typed:
            first.setdefault(lv, float(g))
        gains.update(first)
        pairs = sorted(gains.items(), key=lambda t: (-t[1], -t[0]))
        return [lv for lv, _ in pairs], [g for _, g in pairs]
    keys = sorted(judged_set | {0})
    levels: list[int] = []
    values: list[float] = []
    offsets = [0]
    for key in keys:
        ordered = glibc_sort(trec_gain_list(typed, key + 1))
        if ordered and ordered[-1][1] > 0.0:  # else the walk ends before it starts
            for lv, g, holds in reversed(ordered):
                if holds and lv in judged_set:
                    levels.append(lv)
                    values.append(g)
        offsets.append(len(levels))
    head = [IDEAL_VARIANTS, len(keys), *keys, *offsets]
    return head + levels, [0.0] * len(head) + values


def results_gains(typed: Sequence[tuple[int, float]], judged: Sequence[int]) -> dict[int, float]:
    """The gain of a retrieved document of each named level: that of the first entry of
    the level in trec_eval's sorted list (for the largest grade). Differs from the typed
    gain only for a level named twice.

    Examples
    --------
    >>> results_gains([(1, 5.0), (1, 2.0), (2, 7.0)], [0, 1, 2])
    {1: 2.0, 2: 7.0}
    """
    top = max((int(g) for g in judged), default=0)
    if consistent(typed, top) or top > MAX_VARIANT_GRADE:
        out: dict[int, tuple[float, int]] = {}
        for i, (lv, g) in enumerate(typed):  # by gain, then typed order
            if lv not in out or (float(g), i) < out[lv]:
                out[lv] = (float(g), i)
        return {lv: g for lv, (g, _) in out.items()}
    found: dict[int, float] = {}
    named = {lv for lv, _ in typed}
    for lv, g, _ in glibc_sort(trec_gain_list(typed, top + 1)):
        if lv in named:
            found.setdefault(lv, g)
    return {lv: found[lv] for lv in dict.fromkeys(lv for lv, _ in typed)}
