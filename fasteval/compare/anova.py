"""Topic-blocked designs: two-way ANOVA, Tukey HSD on its residual, Sakai's randomised HSD.

IR experiments run every system on the same topics, so the scores form a systems x topics
table with one value per cell. The model ``x[s, t] = mu + system[s] + topic[t] + error``
(two-way ANOVA without replication, topic as a block factor) removes the large topic
effect from the error term; treating systems as independent groups (one-way ANOVA) leaves
it in, and the one-way Tukey HSD then almost never rejects.

* :func:`two_way_anova`: sums of squares, degrees of freedom, mean squares, F and p for
  the system and topic factors; the residual mean square ``V_E`` with
  ``(S - 1)(n - 1)`` degrees of freedom.
* :func:`tukey_blocked`: Tukey's HSD on that residual (Carterette 2012, Sakai 2018):
  ``q = (mean_i - mean_j) / sqrt(V_E / n)``, p-value from the studentized range
  distribution with ``S`` groups and ``(S - 1)(n - 1)`` degrees of freedom. With ``S = 2``
  it is the paired t-test (``q = sqrt(2) t``).
* :func:`randomized_tukey`: Sakai's randomised Tukey HSD (after Carterette 2012): each
  resample permutes the ``S`` scores of every topic among the systems independently and
  records the range ``max_s mean_s - min_s mean_s`` of the permuted system means; the
  p-value of a pair is ``(#{range* >= |mean_i - mean_j|} + 1) / (R + 1)``. One set of
  permutations serves every pair, and the p-values are family-wise over all pairs.

Randomness as in :mod:`fasteval.compare.kernels` (a resample's permutations come from its
key's SplitMix64 stream), so p-values do not depend on the number of threads.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from fasteval._jit import njit
from fasteval.compare.kernels import _GOLDEN, _LOW32, _S32, _mix

#: fixed resample blocks of the kernel (results do not depend on the thread count)
_N_BLOCKS = 16


def two_way_anova(x: np.ndarray) -> dict[str, float]:
    """Two-way ANOVA without replication of a systems x topics table.

    Parameters
    ----------
    x : ndarray, shape (S, n)
        Scores of ``S`` systems on ``n`` topics.

    Returns
    -------
    dict
        ``ss_system, ss_topic, ss_residual, ss_total``, ``df_system, df_topic,
        df_residual``, ``ms_system, ms_topic, ms_residual`` (``V_E``), ``f_system,
        f_topic, p_system, p_topic``. F and p are NaN when the residual is zero up to
        rounding (an additive table: the F ratios are undefined). The sums of squares are
        computed on the table scaled by a power of two (exact) so that its largest magnitude
        is below 1, then scaled back: F and p do not depend on the scale of the scores
        (scores near 1e300 or 1e-300 give the F of the same table near 1), while a sum of
        squares that double precision cannot hold is ``inf`` or 0.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.2, 0.4, 0.9], [0.3, 0.4, 0.8], [0.5, 0.6, 1.0]])
    >>> a = two_way_anova(x)
    >>> round(a["ms_residual"], 6), a["df_residual"], round(a["f_system"], 4)
    (0.003333, 4, 12.0)
    """
    from scipy import stats

    x = np.asarray(x, dtype=np.float64)
    S, n = x.shape
    e = power_of_two(x)
    x = np.ldexp(x, -e)
    grand = x.mean()
    sys_mean = x.mean(axis=1)
    top_mean = x.mean(axis=0)
    resid = x - sys_mean[:, None] - top_mean[None, :] + grand
    ss_sys = float(n * ((sys_mean - grand) ** 2).sum())
    ss_top = float(S * ((top_mean - grand) ** 2).sum())
    ss_res = float((resid**2).sum())
    df_sys, df_top = S - 1, n - 1
    df_res = df_sys * df_top
    out: dict[str, float] = {
        "ss_system": ss_sys, "ss_topic": ss_top, "ss_residual": ss_res,
        "ss_total": float(((x - grand) ** 2).sum()),
        "df_system": df_sys, "df_topic": df_top, "df_residual": df_res,
    }
    with np.errstate(all="ignore"):
        out["ms_system"] = ss_sys / df_sys if df_sys else np.nan
        out["ms_topic"] = ss_top / df_top if df_top else np.nan
        out["ms_residual"] = ss_res / df_res if df_res else np.nan
    flat = residual_is_zero(x, ss_res)
    for name in ("system", "topic"):
        f = out[f"ms_{name}"] / out["ms_residual"] if df_res and not flat else np.nan
        df1 = out[f"df_{name}"]
        out[f"f_{name}"] = float(f)
        out[f"p_{name}"] = float(stats.f.sf(f, df1, df_res)) if f == f else np.nan
    if e:  # back to the scores' scale (squares: twice the exponent)
        with np.errstate(over="ignore"):
            for k in ("ss_system", "ss_topic", "ss_residual", "ss_total",
                      "ms_system", "ms_topic", "ms_residual"):
                out[k] = float(np.ldexp(out[k], 2 * e))
    return out


def power_of_two(x: np.ndarray) -> int:
    """Exponent ``e`` with ``max|x| * 2**-e`` in ``[0.5, 1)`` (0 for an empty or zero table).

    Scaling by ``2**-e`` is exact, so statistics that do not depend on the scale (t, F,
    effect sizes, ranks) computed on the scaled scores equal those of the scores, without
    the overflow of squaring values near 1e300 or the underflow of squaring values near
    1e-300.

    Examples
    --------
    >>> import numpy as np
    >>> power_of_two(np.array([0.5, 0.75])), power_of_two(np.array([3.0])), power_of_two(np.zeros(2))
    (0, 2, 0)
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return 0
    top = float(np.abs(x).max())
    if not (top > 0 and np.isfinite(top)):
        return 0
    return int(np.frexp(top)[1])


def residual_is_zero(x: np.ndarray, ss_res: float | None = None) -> bool:
    """True when the two-way residuals are zero up to rounding (``|r| <= 1e-11 max|x|``).

    Examples
    --------
    >>> import numpy as np
    >>> residual_is_zero(np.array([[0.1, 0.2, 0.3], [0.5, 0.6, 0.7]]))  # a constant shift
    True
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return True
    resid = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    return bool(np.abs(resid).max() <= 1e-11 * max(np.abs(x).max(), 1e-300))


def tukey_blocked(
    x: np.ndarray, pi: np.ndarray, pj: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float]:
    """Tukey's HSD with topic as a block factor, for the pairs ``(pi[k], pj[k])``.

    Returns ``(q, p, V_E)``: the signed studentized range statistic of each pair, its
    p-value (family-wise over all ``S`` systems) and the residual variance. Pairs of equal
    means get ``q = 0, p = 1``; with a zero residual (up to rounding) the other pairs get
    NaN: the statistic is undefined.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.2, 0.4, 0.9], [0.3, 0.4, 0.8], [0.5, 0.6, 1.0]])
    >>> q, p, ve = tukey_blocked(x, np.array([0, 0, 1]), np.array([1, 2, 2]))
    >>> np.round(q, 3).tolist(), np.round(p, 4).tolist()
    ([0.0, -6.0, -6.0], [1.0, 0.0286, 0.0286])
    """
    from scipy import stats

    x = np.asarray(x, dtype=np.float64)
    S, n = x.shape
    a = two_way_anova(x)
    ve = a["ms_residual"]
    means = x.mean(axis=1)
    diff = means[pi] - means[pj]
    same = np.abs(diff) <= 1e-12 * max(np.abs(x).max(), 1e-300)
    if n < 2 or residual_is_zero(x):
        q = np.where(same, 0.0, np.nan)
        p = np.where(same, 1.0, np.nan)
        return q, p, float(ve) if n >= 2 else float("nan")
    q = diff / np.sqrt(ve / n)
    # one numerical integration per distinct |q| (pairs of runs with equal mean gaps share
    # it), none for the pairs of equal means
    p = np.ones(q.size)
    gaps, where = np.unique(np.abs(q[~same]), return_inverse=True)
    if gaps.size:
        tail = stats.studentized_range.sf(gaps, S, a["df_residual"])
        p[~same] = np.minimum(1.0, np.asarray(tail, dtype=np.float64))[where.reshape(-1)]
    q = np.where(same, 0.0, q)
    p = np.where(same, 1.0, p)
    return q, p, float(ve)


@njit(cache=True, inline="always")
def _bounded(state, bound):  # pragma: no cover - compiled
    """A uniform integer in ``[0, bound)`` from the SplitMix64 stream (Lemire's method,
    32-bit draws, rejection of the biased few); returns ``(value, new state)``."""
    b = np.uint64(bound)
    thresh = ((np.uint64(1) << _S32) - b) % b
    while True:
        state += _GOLDEN
        u = _mix(state) & _LOW32
        prod = u * b
        if (prod & _LOW32) >= thresh:
            return np.int64(prod >> _S32), state


#: resamples per :func:`permuted_ranges` call of :func:`randomized_tukey`
_TUKEY_CHUNK = 1 << 16


@njit(cache=True, parallel=True)
def permuted_ranges(x, keys, out):  # pragma: no cover - compiled
    """``out[r]``: range of the system sums after permuting every topic's scores.

    ``x`` is ``(S, n)`` (C order), one 64-bit key per resample. Within a resample the
    topics are visited in order; each topic's scores are shuffled (Fisher-Yates, draws from
    the resample's SplitMix64 stream) and added to the running sums.
    """
    S, n = x.shape
    R = keys.shape[0]
    per = (R + _N_BLOCKS - 1) // _N_BLOCKS
    for blk in prange(_N_BLOCKS):
        perm = np.empty(S, dtype=np.int64)
        sums = np.empty(S)
        for r in range(blk * per, min(R, (blk + 1) * per)):
            state = keys[r]
            sums[:] = 0.0
            for t in range(n):
                for s in range(S):
                    perm[s] = s
                for i in range(S - 1, 0, -1):
                    j, state = _bounded(state, i + 1)
                    tmp = perm[i]
                    perm[i] = perm[j]
                    perm[j] = tmp
                for s in range(S):
                    sums[s] += x[perm[s], t]
            lo = sums[0]
            hi = sums[0]
            for s in range(1, S):
                v = sums[s]
                if v < lo:
                    lo = v
                if v > hi:
                    hi = v
            out[r] = hi - lo


def randomized_tukey(
    x: np.ndarray, pi: np.ndarray, pj: np.ndarray, n_resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Sakai's randomised Tukey HSD for the pairs ``(pi[k], pj[k])``.

    Parameters
    ----------
    x : ndarray, shape (S, n)
        Scores of ``S`` systems on ``n`` topics.
    pi, pj : ndarray of int
        System indices of each pair.
    n_resamples : int
        Permutation resamples (one set serves every pair).
    rng : numpy.random.Generator
        Source of one 64-bit key per resample.

    Returns
    -------
    diff : ndarray
        ``mean_i - mean_j`` of each pair (the statistic).
    p : ndarray
        ``(#{range* >= |diff|} + 1) / (R + 1)``; ties up to ``1e-11 * sum_t max_s |x|``
        count as reaching the observed difference.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4]])
    >>> randomized_tukey(x, np.array([0]), np.array([1]), 99, np.random.default_rng(0))
    (array([0.]), array([1.]))
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    S, n = x.shape
    sums = x.sum(axis=1)
    obs = np.abs(sums[pi] - sums[pj])
    tol = 1e-11 * np.abs(x).max(axis=0).sum()
    # resamples in chunks (keys drawn in turn: the same stream as all at once), each chunk's
    # ranges counted against every pair, so memory does not grow with n_resamples
    ext = np.zeros(obs.size, dtype=np.int64)
    ranges = np.empty(min(n_resamples, _TUKEY_CHUNK))
    for start in range(0, n_resamples, _TUKEY_CHUNK):
        m = min(_TUKEY_CHUNK, n_resamples - start)
        keys = rng.bit_generator.random_raw(m).astype(np.uint64, copy=False)
        part = ranges[:m]
        permuted_ranges(x, keys, part)
        part.sort()
        ext += m - np.searchsorted(part, obs - tol, side="left")
    p = np.minimum(1.0, (ext + 1.0) / (n_resamples + 1.0))
    return (sums[pi] - sums[pj]) / n, p
