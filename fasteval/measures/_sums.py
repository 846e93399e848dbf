"""Exact sums of float64 values: Shewchuk's non-overlapping partials, in numba.

The sum of a group of values is kept exactly as a short list of *partials*: doubles whose
bits do not overlap, in increasing magnitude, adding up to the exact (real-number) sum of
the values. A value is added by walking the list with an error-free two-sum (Knuth's: the
rounded sum and its exact rounding error), keeping each nonzero error as a partial and
appending the last rounded sum: Shewchuk's algorithm, the one behind :func:`math.fsum`.
Partials of two groups added together are the partials of the union, so the exact sum,
rounded once at the end, depends neither on the order of the values nor on how they were
split.

Two things keep every step exact:

* **No overflow.** Values of magnitude ``2**969`` or more are kept apart, multiplied by
  ``2**-1000`` (exact: the products are normal numbers, at least ``2**-31``), in a second
  list (``big``). The exact sum is ``small + 2**1000 * big``. Neither list comes near
  ``2**1023``: a rounded sum is at most ``1 + 2**-53`` times the sum of the magnitudes
  added, so one step (at most 64 two-sums) multiplies the total magnitude of a list by at
  most ``1 + 2**-46``, and after fewer than ``2**46`` values (merged partials included)
  a list's partials add up, in magnitude, to less than ``e`` times the values' (``e <
  2**2``): below ``2**46 * 2**969 * 2**2`` for the small list.
* **A bounded list.** A group keeps at most :data:`CAPACITY` partials. When its list is
  full it is *compacted*: replaced by ``s1, s2, ...``, where ``s1`` is the correctly
  rounded sum of the list, ``s2`` that of what remains (the list with ``-s1`` added, an
  exact residual), and so on until nothing remains. Each ``s`` is at most half an ulp of
  the one before (``|s[k+1]| <= 2**-53 |s[k]|``), so the ``s`` do not overlap and, between
  ``2**1023`` and the smallest subnormal ``2**-1074`` (2098 binades), there are at most
  40 of them: a compacted list always has room for more.

Non-finite values (nan, +inf, -inf) are counted, never added; so are nans whose sign bit is
set (the nan of ``0 / 0`` on x86, which trec_eval prints as ``-nan``).

This module imports numba (through :mod:`fasteval._jit`, whose ``njit`` loads cached
kernels quickly and copes with a read-only install): :mod:`fasteval.measures.aggregate`
imports it when it first sums, never at its own import. It is the one import from
``measures`` up into ``kernels``, declared in ``pyproject.toml``'s import contracts.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from fasteval._jit import njit

CAPACITY = 64
"""Partials a group keeps before its list is compacted (a compacted list holds at most 40)."""

BIG = 2.0**969
"""Values at least this large (in magnitude) are summed scaled, in the ``big`` list."""

DOWN = 2.0**-1000
"""The scale of the ``big`` list: a value ``x`` there is kept as ``x * DOWN``."""


@njit(cache=True, nogil=True)
def _grow(buf, base, n, x):
    """Add ``x`` to the ``n`` partials ``buf[base:base + n]`` exactly; return their new count
    (at most ``n + 1``)."""
    i = 0
    for j in range(n):
        y = buf[base + j]
        hi = x + y
        t = hi - x
        lo = (x - (hi - t)) + (y - t)  # Knuth's two-sum: hi + lo == x + y exactly
        if lo != 0.0:
            buf[base + i] = lo
            i += 1
        x = hi
    if x != 0.0:
        buf[base + i] = x
        i += 1
    return i


@njit(cache=True, nogil=True)
def _rounded(buf, base, n):
    """The correctly rounded sum (half to even) of the ``n`` non-overlapping partials at
    ``buf[base:]``, as :func:`math.fsum` rounds its partials."""
    if n == 0:
        return 0.0
    n -= 1
    hi = buf[base + n]
    lo = 0.0
    while n > 0:
        x = hi
        n -= 1
        y = buf[base + n]
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            break
    if n > 0 and ((lo < 0.0 and buf[base + n - 1] < 0.0) or (lo > 0.0 and buf[base + n - 1] > 0.0)):
        y = lo * 2.0  # lo is half an ulp and the partials below go past it: away from hi
        x = hi + y
        if y == x - hi:
            hi = x
    return hi


@njit(cache=True, nogil=True)
def _compact(buf, base, n, scratch):
    """Replace the ``n`` partials at ``buf[base:]`` by their successive roundings (see the
    module docstring); return the new count (at most 40)."""
    for j in range(n):
        scratch[j] = buf[base + j]
    m = n
    k = 0
    while m > 0:
        s = _rounded(scratch, 0, m)
        scratch[scratch.shape[0] - 1 - k] = s  # the roundings, from the top of scratch down
        k += 1
        m = _grow(scratch, 0, m, -s)
    for j in range(k):  # increasing magnitude: the last rounding first
        buf[base + j] = scratch[scratch.shape[0] - k + j]
    return k


@njit(cache=True, nogil=True)
def _fold(values, order, starts, valid, scaled, parts, sizes, stats):
    """Add group ``g``'s values (rows ``order[starts[g]:starts[g + 1]]``, or rows
    ``starts[g]:starts[g + 1]`` when ``order`` is empty; those ``valid`` marks, all where it
    is empty) to its partials ``parts[g, 0]`` (small) and ``parts[g, 1]`` (big, scaled),
    ``sizes[g]`` of them; count values, nans, +infs and -infs in ``stats[g]``. ``scaled``:
    the values are partials of a ``big`` list already (added to it as they are)."""
    cap = parts.shape[2]
    flat = parts.reshape(-1)
    scratch = np.empty(cap + 96)  # n + k residual partials below k roundings, k <= 40
    gather = order.shape[0] > 0
    masked = valid.shape[0] > 0
    for g in range(starts.shape[0] - 1):
        base = g * 2 * cap
        n = sizes[g, 0]
        count = 0
        for r in range(starts[g], starts[g + 1]):
            row = order[r] if gather else r
            if masked and not valid[row]:
                continue
            count += 1
            x = values[row]
            if x - x != 0.0:  # nan or an infinity
                stats[g, 1 if x != x else 2 if x > 0.0 else 3] += 1
                if x != x and math.copysign(1.0, x) < 0.0:
                    stats[g, 4] += 1  # a nan with its sign bit set (x86's 0 / 0)
            elif scaled or abs(x) >= BIG:
                _big(flat, base + cap, cap, sizes[g], x if scaled else x * DOWN, scratch)
            else:  # _grow, written out here: as a call, this loop takes twice as long
                if n == cap:
                    n = _compact(flat, base, n, scratch)
                i = 0
                for j in range(n):
                    y = flat[base + j]
                    hi = x + y
                    t = hi - x
                    lo = (x - (hi - t)) + (y - t)
                    if lo != 0.0:
                        flat[base + i] = lo
                        i += 1
                    x = hi
                if x != 0.0:
                    flat[base + i] = x
                    i += 1
                n = i
        sizes[g, 0] = n
        stats[g, 0] += count


@njit(cache=True, nogil=True)
def _big(flat, base, cap, size, x, scratch):
    """Add the scaled value ``x`` to a group's big partials (``flat[base:base + cap]``,
    ``size[1]`` of them), compacting a full list first."""
    n = size[1]
    if n == cap:
        n = _compact(flat, base, n, scratch)
    size[1] = _grow(flat, base, n, x)


@njit(cache=True, nogil=True)
def _group_rows(codes, n_groups):
    """``(order, starts)``: group ``g``'s rows are ``order[starts[g]:starts[g + 1]]`` (row
    order within a group: a counting sort), or ``starts[g]:starts[g + 1]`` with ``order``
    empty where the codes never decrease."""
    starts = np.zeros(n_groups + 1, np.int64)
    grouped = True
    for r in range(codes.shape[0]):
        starts[codes[r] + 1] += 1
        if r and codes[r] < codes[r - 1]:
            grouped = False
    for g in range(n_groups):
        starts[g + 1] += starts[g]
    if grouped:
        return np.empty(0, np.int64), starts
    fill = starts.copy()
    order = np.empty(codes.shape[0], np.int64)
    for r in range(codes.shape[0]):
        order[fill[codes[r]]] = r
        fill[codes[r]] += 1
    return order, starts


class Sums(NamedTuple):
    """Exact sums of groups of values (:func:`group_sums`): group ``g``'s small partials are
    ``small[small_at[g]:small_at[g + 1]]``, its big ones (scaled, see the module docstring)
    ``big[big_at[g]:big_at[g + 1]]``; ``stats[g]``: its values, nans, +infs, -infs and
    negative nans (sign bit set)."""

    small: np.ndarray
    small_at: np.ndarray
    big: np.ndarray
    big_at: np.ndarray
    stats: np.ndarray


GROUPS_AT_ONCE = 4096
"""Groups summed in one call of the kernel (each holds a buffer of ``2 * CAPACITY`` doubles)."""


def _readonly(values: np.ndarray, dtype: type) -> np.ndarray:
    """``values`` as a contiguous array of ``dtype``, a read-only view (no copy where it is
    one already): the kernels read their inputs only, and numba types a read-only array
    apart from a writable one, so every caller hands over the one kind (one compilation)."""
    view = np.ascontiguousarray(values, dtype=dtype).view()
    view.flags.writeable = False
    return view


def group_rows(codes: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows of each group of ``codes`` (``0 .. n_groups - 1``), for :func:`group_sums`:
    ``(order, starts)``, group ``g``'s rows ``order[starts[g]:starts[g + 1]]``, or
    ``starts[g]:starts[g + 1]`` with ``order`` empty where the codes never decrease.

    Examples
    --------
    >>> [a.tolist() for a in group_rows(np.array([0, 0, 1]), 2)]
    [[], [0, 2, 3]]
    >>> [a.tolist() for a in group_rows(np.array([1, 0, 1]), 2)]
    [[1, 0, 2], [0, 1, 3]]
    """
    return _group_rows(_readonly(codes, np.int64), n_groups)


def group_sums(values: np.ndarray, rows: tuple[np.ndarray, np.ndarray] | None = None,
               valid: np.ndarray | None = None, scaled: bool = False) -> Sums:
    """The exact sums of ``values`` per group, as partials.

    Parameters
    ----------
    values : float64 array.
    rows : the groups' rows (:func:`group_rows`); None: one group of every row.
    valid : bool array, False where a value is left out (a null); None: every value.
    scaled : the values are partials of ``big`` lists (see the module docstring).

    Examples
    --------
    >>> s = group_sums(np.array([0.1, 0.2, 1e300 * 1e10, 0.3]))
    >>> math.fsum(s.small) == math.fsum([0.1, 0.2, 0.3]), s.stats.tolist()
    (True, [[4, 0, 1, 0, 0]])
    >>> group_sums(np.array([1.0, 2.0, 4.0]), group_rows(np.array([1, 0, 1]), 2)).small.tolist()
    [2.0, 5.0]
    """
    values = _readonly(values, np.float64)
    if rows is None:
        rows = (np.empty(0, np.int64), np.array([0, len(values)], np.int64))
    order, starts = _readonly(rows[0], np.int64), _readonly(rows[1], np.int64)
    mask = _readonly(np.empty(0, np.bool_) if valid is None else valid, np.bool_)
    small, small_n, big, big_n, stats = [], [], [], [], []
    for g0 in range(0, len(starts) - 1, GROUPS_AT_ONCE):
        g1 = min(len(starts) - 1, g0 + GROUPS_AT_ONCE)
        parts = np.zeros((g1 - g0, 2, CAPACITY))
        sizes = np.zeros((g1 - g0, 2), np.int64)
        stats.append(np.zeros((g1 - g0, 5), np.int64))
        _fold(values, order, starts[g0:g1 + 1], mask, scaled, parts, sizes, stats[-1])
        kept = np.arange(CAPACITY) < sizes[:, :, None]  # each group's partials, in group order
        small.append(parts[:, 0][kept[:, 0]])
        big.append(parts[:, 1][kept[:, 1]])
        small_n.append(sizes[:, 0])
        big_n.append(sizes[:, 1])

    def cat(arrays: list[np.ndarray], empty: np.ndarray) -> np.ndarray:
        return np.concatenate(arrays) if arrays else empty

    return Sums(cat(small, np.empty(0)), np.cumsum(cat([[0], *small_n], None)),
                cat(big, np.empty(0)), np.cumsum(cat([[0], *big_n], None)),
                cat(stats, np.zeros((0, 5), np.int64)))


def exact_total(small: np.ndarray, big: np.ndarray) -> float:
    """``small.sum() + 2**1000 * big.sum()`` computed exactly, rounded once (half to
    even); ±inf where that overflows, as IEEE rounding gives.

    Examples
    --------
    >>> exact_total(np.array([1.0]), np.array([2.0**23]))  # 2**1023 + 1, rounded
    8.98846567431158e+307
    >>> exact_total(np.array([]), np.array([2.0**23, 2.0**23]))  # 2**1024: overflows
    inf
    """
    scale = 2000  # every partial times 2**2000 is an integer (none is below 2**-1074)
    total = 0
    for values, shift in ((small, 0), (big, 1000)):
        for v in values.tolist():
            num, den = v.as_integer_ratio()
            total += num << (scale + shift - den.bit_length() + 1)
    try:
        return total / (1 << scale)  # int / int: correctly rounded
    except OverflowError:
        return math.inf if total > 0 else -math.inf
