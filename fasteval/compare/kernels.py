"""Resampling kernels: sign-flip randomization and paired bootstrap over a matrix of series.

Both tests reduce to sums ``out[r, c] = sum_q w[r, q] * y[c, q]`` for every resample ``r``
and every series ``c`` (one series per measure x system pair, or per measure x system), with
``w`` random signs (randomization) or bootstrap counts. All series of a resample are
computed in one pass over the query axis.

* Sign flips: the queries are cut into groups of 4; for each group a table holds the 16
  signed sums ``±y[c, q0] ± ... ± y[c, q0+3]`` of all series (summed left to right), so a
  resample costs one table lookup (a vector add over the series) per 4 queries. The entry of
  the complementary sign pattern is the exact negation, so ``T(-s) == -T(s)`` bit for bit and ties
  (queries with zero difference) survive exactly.
* Bootstrap: per resample, ``n`` query indices are turned into counts (parallel over
  resamples), and the count matrix is multiplied into the centred series with
  single-precision BLAS (see :func:`bootstrap_totals`); the BLAS product does not depend on
  the numba thread count.

Determinism: every random number comes from a seeded :class:`numpy.random.Generator`
drawn in the calling thread before the parallel loop (sign bits as raw 64-bit words, one
64-bit key per bootstrap resample that seeds that resample's index stream). A resample's sum
depends only on its own bits or key and is accumulated in a fixed order (fixed query
partitions, summed in order), so the same seed gives bit-identical statistics whatever
``numba.get_num_threads()`` is. (The bootstrap index stream is SplitMix64 keyed per resample
rather than indices drawn by the Generator itself: drawing 10^9 indices in one thread costs
seconds, expanding keys inside the parallel kernel does not.)
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)

#: query groups (of 4) per sign-flip table block; fixed query partition count
_GROUPS_PER_BLOCK = 32
_N_PARTS = 16
#: resamples per sign-flip kernel call (bounds the memory of the transposed sign bits)
CHUNK_FLIP = 512
#: bootstrap count-matrix budget (float32 cells) and resamples per chunk bounds
_BOOT_CELLS = 1 << 25
CHUNK_BOOT = 512


@njit(cache=True, parallel=True)
def signflip_sums(y, sbytes, out):  # pragma: no cover - compiled
    """``out[r, c] = sum_q s[r, q] * y[c, q]``, ``s = +1`` where the sign bit is set, else ``-1``.

    ``sbytes[j, r]`` holds the sign bits of queries ``8j .. 8j+7`` (bit ``k`` -> query
    ``8j+k``) for resample ``r``. Queries are split into ``_N_PARTS`` fixed parts summed in
    order, so results do not depend on the number of threads. Summation order (mirrored
    exactly by :func:`signflip_observed`): within a group of 4 queries left to right, groups
    left to right within a part, parts left to right.
    """
    n_series, n = y.shape
    n_res = sbytes.shape[1]
    n_groups = (n + 3) // 4
    per_part = (n_groups + _N_PARTS - 1) // _N_PARTS
    per_part += per_part % 2  # parts start on a byte boundary
    partial = np.zeros((_N_PARTS, n_res, n_series))
    tabs = np.empty((_N_PARTS, _GROUPS_PER_BLOCK, 16, n_series))
    for p in prange(_N_PARTS):
        g_lo = min(n_groups, p * per_part)
        g_hi = min(n_groups, g_lo + per_part)
        for b0 in range(g_lo, g_hi, _GROUPS_PER_BLOCK):
            bn = min(_GROUPS_PER_BLOCK, g_hi - b0)
            for g in range(bn):
                # entry e: prefix sums over queries 4j..4j+3, bit k of e -> sign of query k
                q0 = (b0 + g) * 4
                for c in range(n_series):
                    tabs[p, g, 0, c] = -y[c, q0]
                    tabs[p, g, 1, c] = y[c, q0]
                width = 2
                for k in range(1, 4):
                    q = q0 + k
                    if q < n:
                        for e in range(width):
                            for c in range(n_series):
                                v = tabs[p, g, e, c]
                                tabs[p, g, e + width, c] = v + y[c, q]
                                tabs[p, g, e, c] = v - y[c, q]
                    else:
                        for e in range(width):
                            for c in range(n_series):
                                tabs[p, g, e + width, c] = tabs[p, g, e, c]
                    width *= 2
            for r in range(n_res):
                for g in range(bn):
                    j = b0 + g
                    e = (sbytes[j >> 1, r] >> ((j & 1) * 4)) & 15
                    for c in range(n_series):
                        partial[p, r, c] += tabs[p, g, e, c]
    for r in prange(n_res):
        for c in range(n_series):
            acc = 0.0
            for p in range(_N_PARTS):
                acc += partial[p, r, c]
            out[r, c] = acc


@njit(cache=True)
def signflip_observed(y, out):  # pragma: no cover - compiled
    """``out[c] = sum_q y[c, q]`` in exactly the order :func:`signflip_sums` uses."""
    n_series, n = y.shape
    n_groups = (n + 3) // 4
    per_part = (n_groups + _N_PARTS - 1) // _N_PARTS
    per_part += per_part % 2
    for c in range(n_series):
        total = 0.0
        for p in range(_N_PARTS):
            g_lo = min(n_groups, p * per_part)
            g_hi = min(n_groups, g_lo + per_part)
            part = 0.0
            for j in range(g_lo, g_hi):
                q0 = j * 4
                v = y[c, q0]
                for q in range(q0 + 1, min(n, q0 + 4)):
                    v = v + y[c, q]
                part += v
            total += part
        out[c] = total


@njit(cache=True, inline="always")
def _mix(z):  # pragma: no cover - compiled
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def _draw_counts(key, n, counts):  # pragma: no cover - compiled
    """Multinomial(n, uniform) counts from a SplitMix64 stream seeded by ``key``.

    Each index uses 32 random bits mapped to ``[0, n)`` by Lemire's multiply-and-reject,
    which is exactly uniform.
    """
    n64 = np.uint64(n)
    thresh = ((np.uint64(1) << _S32) - n64) % n64
    for q in range(n):
        counts[q] = 0
    state = key
    spare = np.uint64(0)
    have = False
    i = 0
    while i < n:
        if have:
            u = spare
            have = False
        else:
            state += _GOLDEN
            z = _mix(state)
            u = z >> _S32
            spare = z & _LOW32
            have = True
        prod = u * n64
        if (prod & _LOW32) < thresh:
            continue
        counts[np.int64(prod >> _S32)] += 1
        i += 1


@njit(cache=True, parallel=True)
def bootstrap_counts(keys, counts):  # pragma: no cover - compiled
    """``counts[r]`` = multinomial(n, uniform) counts of resample ``r``, drawn from ``keys[r]``."""
    n = counts.shape[1]
    for r in prange(keys.shape[0]):
        _draw_counts(keys[r], n, counts[r])


def _transpose_bytes(words: np.ndarray, n_bytes: int) -> np.ndarray:
    """(m, n_words) uint64 sign words -> (n_bytes, m) uint8, byte ``j`` = queries 8j..8j+7."""
    b = words.view(np.uint8).reshape(words.shape[0], -1)[:, :n_bytes]
    if np.little_endian is False:  # pragma: no cover - big-endian hosts
        b = words.byteswap().view(np.uint8).reshape(words.shape[0], -1)[:, :n_bytes]
    return np.ascontiguousarray(b.T)


def signflip_null(
    y: np.ndarray, n_resamples: int, rng: np.random.Generator | None, *, exact: bool
) -> tuple[np.ndarray, np.ndarray, int]:
    """Observed sign-flip statistics and how many sign vectors reach them.

    Parameters
    ----------
    y : ndarray, shape (n_series, n)
        Per-query differences, one row per comparison.
    n_resamples : int
        Random sign vectors to draw (ignored when ``exact``).
    rng : numpy.random.Generator
        Source of the sign bits (64 raw bits at a time, drawn here before the kernel).
    exact : bool
        Enumerate all ``2**n`` sign vectors instead (``n <= 30``).

    Returns
    -------
    observed : ndarray, shape (n_series,)
        ``sum_q y[c, q]``.
    extreme : ndarray of int64, shape (n_series,)
        Number of sign vectors with ``|T| >= |observed|`` (less a tolerance of
        ``1e-11 * sum_q |y[c, q]|`` so ties that differ only by rounding count as ties).
    total : int
        Number of sign vectors examined.

    Examples
    --------
    >>> import numpy as np
    >>> obs, ext, tot = signflip_null(np.array([[1.0, 2.0, 3.0]]), 0, None, exact=True)
    >>> obs.tolist(), ext.tolist(), tot
    ([6.0], [2], 8)
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    n_series, n = y.shape
    n_bytes = max(1, (n + 7) // 8)
    n_words = max(1, (n + 63) // 64)
    observed = np.empty(n_series)
    signflip_observed(y, observed)
    threshold = np.abs(observed) - 1e-11 * np.abs(y).sum(axis=1)
    extreme = np.zeros(n_series, dtype=np.int64)
    if exact:
        if n > 30:
            raise ValueError(f"exact enumeration needs n <= 30 queries, got {n}")
        total = 1 << n
        for start in range(0, total, CHUNK_FLIP * 8):
            stop = min(total, start + CHUNK_FLIP * 8)
            words = np.arange(start, stop, dtype=np.uint64).reshape(-1, 1)
            out = np.empty((stop - start, n_series))
            signflip_sums(y, _transpose_bytes(words, n_bytes), out)
            extreme += (np.abs(out) >= threshold).sum(axis=0)
        return observed, extreme, total
    if rng is None:
        raise ValueError("rng is required unless exact=True")
    for start in range(0, n_resamples, CHUNK_FLIP):
        m = min(CHUNK_FLIP, n_resamples - start)
        words = rng.bit_generator.random_raw(m * n_words).astype(np.uint64, copy=False)
        out = np.empty((m, n_series))
        signflip_sums(y, _transpose_bytes(words.reshape(m, n_words), n_bytes), out)
        extreme += (np.abs(out) >= threshold).sum(axis=0)
    return observed, extreme, n_resamples


def bootstrap_totals(
    y: np.ndarray, n_resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Observed totals and bootstrap totals ``sum_q count[r, q] * y[c, q]``.

    One 64-bit key per resample is drawn from ``rng`` here; a parallel kernel expands each
    key into that resample's ``n`` uniform query indices (as counts). Since every count row
    sums to ``n``, ``total = n * mean + sum_q count[q] * (y[q] - mean)``: the centred
    series are multiplied by the count matrix with single-precision BLAS (the centred sums
    are small, so their rounding error is tiny next to the Monte-Carlo error), and the
    ``n * mean`` part is added in double precision. Returns ``(observed (n_series,), totals
    (n_resamples, n_series))``; divide by ``n`` for means.

    Examples
    --------
    >>> import numpy as np
    >>> obs, tot = bootstrap_totals(np.array([[2.0, 2.0, 2.0]]), 5, np.random.default_rng(0))
    >>> obs.tolist(), tot[:, 0].tolist()
    ([6.0], [6.0, 6.0, 6.0, 6.0, 6.0])
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    n_series, n = y.shape
    observed = y.sum(axis=1)
    keys = rng.bit_generator.random_raw(n_resamples).astype(np.uint64, copy=False)
    out = np.empty((n_resamples, n_series))
    if n == 0 or n_resamples == 0:
        out[:] = 0.0
        return observed, out
    mean = observed / n
    yt = np.ascontiguousarray((y - mean[:, None]).T, dtype=np.float32)
    chunk = max(1, min(CHUNK_BOOT, n_resamples, max(16, _BOOT_CELLS // n)))
    counts = np.empty((chunk, n), dtype=np.float32)
    for start in range(0, n_resamples, chunk):
        stop = min(n_resamples, start + chunk)
        w = counts[: stop - start]
        bootstrap_counts(keys[start:stop], w)
        out[start:stop] = observed + (w @ yt).astype(np.float64)
    return observed, out
