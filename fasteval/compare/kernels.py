"""Resampling kernels: sign-flip randomization and paired bootstrap over a matrix of series.

Both tests reduce to sums ``out[r, c] = sum_q w[r, q] * y[c, q]`` for every resample ``r``
and every series ``c`` (one series per measure x system pair, or per measure x system), with
``w`` random signs (randomization) or bootstrap counts. All series of a resample are
computed in one pass over the query axis.

* Sign flips (:func:`signflip_sums`): the queries are cut into groups of 8; for each group
  a table holds the 256 signed sums ``±y[c, q0] ± ... ± y[c, q0+7]`` of all series, so a
  resample costs one table row per 8 queries, and the rows of 4 groups are summed before
  they reach the running sum. The entry of the complementary sign pattern is the exact
  negation, so ``T(-s) == -T(s)`` bit for bit, the all-plus pattern reproduces the observed
  sum bit for bit (:func:`signflip_observed` sums in the same order), and ties survive
  exactly. Sums are double precision; more than 8 series are padded with zero series to a
  multiple of 16 so the inner loop runs whole SIMD blocks.
* Bootstrap (:func:`bootstrap_totals`): per resample, ``n`` uniform query indices are
  counted into a small ``uint8`` histogram (parallel over resamples) and widened into a
  float32 count matrix, which is multiplied into the centred series with single-precision
  BLAS in fixed row blocks, BLAS limited to one thread (its idle workers would otherwise
  spin against the numba threads), the blocks run side by side on a small thread pool.

Determinism: every random number derives from a seeded :class:`numpy.random.Generator` in
the calling thread: one 64-bit key per resample (sign-flip and bootstrap alike) that seeds
that resample's SplitMix64 stream, expanded inside the parallel kernels (its 64-bit outputs
are the sign words of a sign-flip resample, or pairs of 32-bit index draws of a bootstrap
resample). A resample's sum depends only on its own key and is accumulated in a fixed order
(fixed query partitions, fixed BLAS row blocks), so the same seed gives bit-identical
statistics whatever ``numba.get_num_threads()`` or the BLAS thread count is. (Keys rather
than draws from the Generator itself: drawing 10^9 indices or bits in one thread costs
seconds, expanding keys inside the parallel kernels does not.)
"""

from __future__ import annotations

import contextlib

import numpy as np
from numba import prange

from fasteval._jit import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_S8 = np.uint64(8)
_S16 = np.uint64(16)
_S24 = np.uint64(24)
_BYTE = np.uint64(255)

#: fixed query partition count (summation order does not depend on the thread count)
_N_PARTS = 16
#: sign-flip kernel call size: partial sums of one part (resamples x series doubles) stay in L2
_FLIP_CELLS = 1 << 17
CHUNK_FLIP = 512
#: bootstrap count-matrix budget (float32 cells) and resamples per chunk bounds
_BOOT_CELLS = 1 << 25
CHUNK_BOOT = 512


def _pad_series(n_series: int) -> int:
    """Series count the sign-flip kernel runs with (whole 16-lane blocks above 8 series)."""
    if n_series <= 8:
        return n_series
    return -(-n_series // 16) * 16


def flip_chunk(n_series: int) -> int:
    """Resamples per :func:`signflip_sums` call for ``n_series`` series."""
    return max(CHUNK_FLIP, min(8192, _FLIP_CELLS // max(1, n_series)))


@njit(cache=True)
def _flip_table(y, q0, tab, half):  # pragma: no cover - compiled
    """Fill ``tab[e * n_series + c]`` with the signed sum of ``y[c, q0 .. q0+7]``, bit ``k`` of
    ``e`` the sign of query ``q0+k`` (all zero when ``q0 >= n``).

    Summation order: ``(±y0 ± y1 ± y2 ± y3) + (±y4 ± y5 ± y6 ± y7)``, each half left to
    right. The entry of the complementary pattern is the exact negation. ``half`` is
    scratch for the two 16-entry half tables.
    """
    n_series, n = y.shape
    if q0 >= n:
        tab[:] = 0.0
        return
    for h in range(2):
        base = h * 16 * n_series
        qh = q0 + 4 * h
        for c in range(n_series):
            v = y[c, qh] if qh < n else 0.0
            half[base + c] = -v
            half[base + n_series + c] = v
        width = 2
        for k in range(1, 4):
            q = qh + k
            hi = base + width * n_series
            for e in range(width):
                lo = base + e * n_series
                for c in range(n_series):
                    yk = y[c, q] if q < n else 0.0
                    v = half[lo + c]
                    half[hi + e * n_series + c] = v + yk
                    half[lo + c] = v - yk
            width *= 2
    upper = 16 * n_series
    for e_hi in range(16):
        b_hi = upper + e_hi * n_series
        for e_lo in range(16):
            b_lo = e_lo * n_series
            dst = (e_hi * 16 + e_lo) * n_series
            for c in range(n_series):
                tab[dst + c] = half[b_lo + c] + half[b_hi + c]


@njit(cache=True, parallel=True)
def signflip_sums(y, words, out):  # pragma: no cover - compiled
    """``out[r, c] = sum_q s[r, q] * y[c, q]``, ``s = +1`` where the sign bit is set, else ``-1``.

    ``words[w, r]`` holds the sign bits of queries ``64w .. 64w+63`` of resample ``r`` (bit
    ``b`` -> query ``64w+b``; resamples side by side, so a pass over the resamples reads
    one contiguous row). For each group of 8 queries a table holds the 256 signed
    sums of its queries (all series); a resample then costs one table row per group, and
    the rows of 4 groups are summed before they are added to the running sum. Queries are
    split into ``_N_PARTS`` fixed parts, so results do not depend on the number of threads.
    Summation order (mirrored exactly by :func:`signflip_observed`): within a group of 8
    queries as in :func:`_flip_table`; groups ``a, b, c, d`` of a quad as
    ``(a + b) + (c + d)``; quads left to right within a part; parts left to right.
    """
    n_series, n = y.shape
    n_res = words.shape[1]
    n_groups = (n + 7) // 8
    per_part = _part_groups(n_groups)
    partial = np.zeros((_N_PARTS, n_res * n_series))
    tabs = np.empty((_N_PARTS, 4 * 256 * n_series))
    halves = np.empty((_N_PARTS, 32 * n_series))
    for p in prange(_N_PARTS):
        tab = tabs[p]
        acc = partial[p]
        for j in range(p * per_part, min(n_groups, (p + 1) * per_part), 4):
            for k in range(4):
                _flip_table(
                    y, (j + k) * 8, tab[k * 256 * n_series : (k + 1) * 256 * n_series], halves[p]
                )
            # j is a multiple of 4: the quad's 4 sign bytes lie in one word (any byte of a
            # group past the end selects a zero row)
            wrow = words[j >> 3]
            shift = np.uint64(8 * (j & 7))
            for r in range(n_res):
                w = wrow[r] >> shift
                b0 = np.int64(w & _BYTE) * n_series
                b1 = (256 + np.int64((w >> _S8) & _BYTE)) * n_series
                b2 = (512 + np.int64((w >> _S16) & _BYTE)) * n_series
                b3 = (768 + np.int64((w >> _S24) & _BYTE)) * n_series
                a = r * n_series
                for c in range(n_series):
                    acc[a + c] += (tab[b0 + c] + tab[b1 + c]) + (tab[b2 + c] + tab[b3 + c])
    for r in prange(n_res):
        for c in range(n_series):
            total = 0.0
            for p in range(_N_PARTS):
                total += partial[p, r * n_series + c]
            out[r, c] = total


@njit(cache=True)
def _part_groups(n_groups):  # pragma: no cover - compiled
    """Groups of 8 queries per part: a multiple of 4 (whole quads)."""
    per_part = (n_groups + _N_PARTS - 1) // _N_PARTS
    return (per_part + 3) // 4 * 4


@njit(cache=True)
def signflip_observed(y, out):  # pragma: no cover - compiled
    """``out[c] = sum_q y[c, q]`` in exactly the order :func:`signflip_sums` uses."""
    n_series, n = y.shape
    n_groups = (n + 7) // 8
    per_part = _part_groups(n_groups)
    v = np.zeros(4)
    for c in range(n_series):
        total = 0.0
        for p in range(_N_PARTS):
            part = 0.0
            for j in range(p * per_part, min(n_groups, (p + 1) * per_part), 4):
                for k in range(4):
                    q0 = (j + k) * 8
                    v[k] = 0.0
                    if q0 < n:
                        s = y[c, q0]
                        for q in range(q0 + 1, q0 + 4):
                            s = s + (y[c, q] if q < n else 0.0)
                        t = y[c, q0 + 4] if q0 + 4 < n else 0.0
                        for q in range(q0 + 5, q0 + 8):
                            t = t + (y[c, q] if q < n else 0.0)
                        v[k] = s + t
                part += (v[0] + v[1]) + (v[2] + v[3])
            total += part
        out[c] = total


@njit(cache=True, inline="always")
def _mix(z):  # pragma: no cover - compiled
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True, inline="always")
def _take(u, n64, thresh, counts, i):  # pragma: no cover - compiled
    """Lemire's multiply-and-reject: 32 random bits -> an exactly uniform index in ``[0, n)``."""
    prod = u * n64
    if (prod & _LOW32) >= thresh:
        counts[np.int64(prod >> _S32)] += 1
        return i + 1
    return i


@njit(cache=True)
def _draw_counts(key, n, counts):  # pragma: no cover - compiled
    """Add multinomial(n, uniform) counts from the SplitMix64 stream seeded by ``key`` to
    ``counts`` (zeroed first). Each 64-bit output gives two 32-bit index draws."""
    n64 = np.uint64(n)
    thresh = ((np.uint64(1) << _S32) - n64) % n64
    counts[:] = 0
    state = key
    i = 0
    while i < n:
        state += _GOLDEN
        z = _mix(state)
        i = _take(z >> _S32, n64, thresh, counts, i)
        if i < n:
            i = _take(z & _LOW32, n64, thresh, counts, i)


@njit(cache=True, parallel=True)
def bootstrap_counts(keys, counts):  # pragma: no cover - compiled
    """``counts[r]`` = multinomial(n, uniform) counts of resample ``r``, drawn from ``keys[r]``.

    The draws go into a per-block ``uint8`` histogram (small enough to stay in cache) that is
    then widened into the float32 row; a resample whose histogram wrapped (some query drawn
    256 times or more, which needs ``n >= 256`` and is astronomically rare) is drawn again
    from the same key straight into its float32 row, so counts are exact either way.
    """
    m, n = counts.shape
    n_blocks = 16
    per = (m + n_blocks - 1) // n_blocks
    for b in prange(n_blocks):
        buf = np.empty(n, dtype=np.uint8)
        for r in range(b * per, min(m, (b + 1) * per)):
            _draw_counts(keys[r], n, buf)
            row = counts[r]
            total = 0
            for q in range(n):
                v = buf[q]
                total += v
                row[q] = v
            if total != n:  # a uint8 cell wrapped
                _draw_counts(keys[r], n, row)


@njit(cache=True, parallel=True)
def sign_words(keys, words):  # pragma: no cover - compiled
    """``words[w, r]``: output ``w`` of the SplitMix64 stream seeded by ``keys[r]`` (the signs
    of queries ``64w .. 64w+63`` of resample ``r``)."""
    for r in prange(keys.shape[0]):
        state = keys[r]
        for w in range(words.shape[0]):
            state += _GOLDEN
            words[w, r] = _mix(state)


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
        Source of one 64-bit key per resample (drawn here, before the parallel kernels);
        the key seeds the resample's SplitMix64 stream of sign words.
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
    n_words = max(1, (n + 63) // 64)
    observed = np.empty(n_series)
    signflip_observed(y, observed)
    threshold = np.abs(observed) - 1e-11 * np.abs(y).sum(axis=1)
    padded = _pad_series(n_series)
    if padded > n_series:  # zero series: the kernel's inner loop runs whole SIMD blocks
        y = np.concatenate([y, np.zeros((padded - n_series, n))])
    extreme = np.zeros(n_series, dtype=np.int64)
    if exact:
        if n > 30:
            raise ValueError(f"exact enumeration needs n <= 30 queries, got {n}")
        total = 1 << n
        chunk = flip_chunk(padded)
        for start in range(0, total, chunk):
            stop = min(total, start + chunk)
            words = np.arange(start, stop, dtype=np.uint64).reshape(1, -1)
            out = np.empty((stop - start, padded))
            signflip_sums(y, words, out)
            extreme += (np.abs(out[:, :n_series]) >= threshold).sum(axis=0)
        return observed, extreme, total
    if rng is None:
        raise ValueError("rng is required unless exact=True")
    keys = rng.bit_generator.random_raw(n_resamples).astype(np.uint64, copy=False)
    calls = -(-n_resamples // flip_chunk(padded))
    chunk = -(-n_resamples // calls)  # balanced calls
    words = np.empty((n_words, chunk), dtype=np.uint64)
    out = np.empty((chunk, padded))
    for start in range(0, n_resamples, chunk):
        m = min(chunk, n_resamples - start)
        w = words if m == chunk else np.empty((n_words, m), dtype=np.uint64)
        sign_words(keys[start : start + m], w)
        signflip_sums(y, w, out[:m])
        extreme += (np.abs(out[:m, :n_series]) >= threshold).sum(axis=0)
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
    keys = rng.bit_generator.random_raw(n_resamples).astype(np.uint64, copy=False)
    return bootstrap_totals_from_keys(y, keys)


def bootstrap_totals_from_keys(y: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bootstrap_totals` with the resamples' 64-bit keys given (one per resample).

    The same key always gives the same counts (:func:`bootstrap_counts`), so a resample can
    be drawn again later, e.g. to recompute it in double precision
    (:func:`exact_totals`).
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    n_series, n = y.shape
    observed = y.sum(axis=1)
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    n_resamples = keys.size
    out = np.empty((n_resamples, n_series))
    if n == 0 or n_resamples == 0:
        out[:] = 0.0
        return observed, out
    mean = observed / n
    yt = np.ascontiguousarray((y - mean[:, None]).T, dtype=np.float32)
    chunk = max(1, min(CHUNK_BOOT, n_resamples, max(16, _BOOT_CELLS // n)))
    counts = np.empty((chunk, n), dtype=np.float32)
    with _single_threaded_blas() as pool:
        for start in range(0, n_resamples, chunk):
            stop = min(n_resamples, start + chunk)
            w = counts[: stop - start]
            bootstrap_counts(keys[start:stop], w)
            prod = np.empty((stop - start, n_series), dtype=np.float32)
            # fixed row blocks, each a single-threaded sgemm: the same products whatever
            # the number of workers or BLAS threads
            blocks = [
                (a, min(stop - start, a + _GEMM_ROWS)) for a in range(0, stop - start, _GEMM_ROWS)
            ]
            if pool is None:
                for a, b in blocks:
                    np.matmul(w[a:b], yt, out=prod[a:b])
            else:
                jobs = [pool.submit(np.matmul, w[a:b], yt, out=prod[a:b]) for a, b in blocks]
                for job in jobs:
                    job.result()
            out[start:stop] = observed + prod.astype(np.float64)
    return observed, out


def exact_totals(y: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``sum_q count[r, q] * y[c, q]`` in double precision for the resamples of ``keys``.

    The counts are those :func:`bootstrap_totals_from_keys` draws from the same keys; use
    it for the few resamples a result is read from (a confidence bound), where the
    single-precision products of the fast path would leave an error of ~1e-7.

    Examples
    --------
    >>> import numpy as np
    >>> keys = np.random.default_rng(0).bit_generator.random_raw(4).astype(np.uint64)
    >>> y = np.array([[0.1, 0.2, 0.3]])
    >>> _, fast = bootstrap_totals_from_keys(y, keys)
    >>> bool(np.allclose(exact_totals(y, keys), fast, rtol=1e-6))
    True
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    keys = np.ascontiguousarray(keys, dtype=np.uint64).reshape(-1)
    counts = np.empty((keys.size, y.shape[1]), dtype=np.float32)
    if keys.size and y.shape[1]:
        bootstrap_counts(keys, counts)
    return counts.astype(np.float64) @ y.T


#: rows of the count matrix per sgemm call (fixed, so products do not depend on threads)
_GEMM_ROWS = 128


@contextlib.contextmanager
def _single_threaded_blas():
    """BLAS limited to one thread (its idle workers would otherwise spin against the numba
    threads drawing counts) plus a pool of ``numba.get_num_threads()`` workers that run the
    fixed row blocks of the product side by side; yields ``None`` (run inline) when
    threadpoolctl is missing or one thread is wanted."""
    import numba

    workers = numba.get_num_threads()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        yield None
        return
    with threadpool_limits(limits=1, user_api="blas"):
        if workers <= 1:
            yield None
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            yield pool
