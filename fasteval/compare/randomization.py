"""Sign-flip randomization test: one-sided alternatives and permutation max-T corrections.

Fisher's randomization test of a paired comparison flips the sign of each query's
difference at random; the p-value is the share of sign vectors whose sum is at least as
extreme as the observed one. All comparisons share the same sign vectors
(:func:`fasteval.compare.kernels.signflip_sums`), which is what the permutation
corrections need: the joint null distribution of every comparison of a family is there.

* **max-T, single step** (``"maxt"``): the adjusted p-value of a comparison is the share of
  sign vectors whose largest ``|t*|`` over the family reaches its observed ``|t|``. With a
  baseline the family is the many-to-one comparisons against it, which makes this a
  Dunnett-style test (the permutation analogue of Dunnett's procedure).
* **Westfall-Young step-down max-T** (``"stepdown"``): comparisons ordered by observed
  ``|t|``, the k-th is compared with the largest ``|t*|`` among itself and the less
  significant ones, and the adjusted p-values are made monotone. Never larger than the
  single-step values, and it controls the family-wise error rate in the strong sense
  (under subset pivotality, which sign flips of paired differences have).

Both adjustments are monotone in the observed ``|t|``, not in the unadjusted p-values: each
comparison's own sign-flip distribution of ``t`` has its own shape (few distinct values with
few non-zero differences, heavy tails with skewed ones), so a comparison with a larger
``|t|`` may have the larger unadjusted p-value and still the smaller adjusted one (Holm's
and the other p-value corrections of :mod:`fasteval.compare.corrections` follow the
unadjusted p-values instead).

``t`` is the paired t statistic, a monotone function of ``|sum|`` within one comparison
(``t = T sqrt(n - 1) / sqrt(n sum(d**2) - T**2)`` for the signed sum ``T``; the sum of squares
does not change under sign flips), so each comparison's own p-value is that of the mean
difference, and the max over comparisons is taken on a common scale.

One-sided alternatives count ``T* >= T`` (``"greater"``) or ``T* <= T`` (``"less"``).
Sampled p-values are ``(b + 1) / (R + 1)``; exact ones (all ``2**n`` sign vectors) ``b / 2**n``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fasteval.compare import kernels
from fasteval.options import Alternative

CORRECTIONS = ("maxt", "stepdown")


def _t_of_sum(total: np.ndarray, sumsq: np.ndarray, n: int) -> np.ndarray:
    """Paired t from the signed sum ``T`` and the invariant ``sum(d**2)`` (broadcasting)."""
    with np.errstate(all="ignore"):
        den = np.sqrt(np.maximum(n * sumsq - total * total, 0.0))
        t = total * np.sqrt(max(n - 1, 0)) / den
    t = np.where(den > 1e-12 * np.sqrt(n * sumsq), t, np.copysign(np.inf, total))
    return np.where(total == 0, 0.0, t)


def signflip_test(
    y: np.ndarray,
    n_resamples: int,
    rng: np.random.Generator | None,
    *,
    exact: bool,
    alternative: Alternative = "two-sided",
    families: Sequence[np.ndarray] | None = None,
    correction: str | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Randomization p-values of many comparisons sharing one set of sign vectors.

    Parameters
    ----------
    y : ndarray, shape (n_series, n)
        Per-query differences, one row per comparison.
    n_resamples : int
        Random sign vectors (ignored when ``exact``).
    rng : numpy.random.Generator
        Source of one 64-bit key per sign vector (as :func:`kernels.signflip_null`: the same
        generator state gives the same sign vectors and the same two-sided p-values).
    exact : bool
        Enumerate all ``2**n`` sign vectors (``n <= 30``).
    alternative : {"two-sided", "greater", "less"}
    families : list of int arrays, optional
        Row indices of each family for ``correction``.
    correction : {"maxt", "stepdown"}, optional
        Permutation max-T adjustment within each family.

    Returns
    -------
    mean : ndarray
        Observed mean difference of each row.
    p : ndarray
        Unadjusted p-values.
    p_adjusted : ndarray or None
        Max-T adjusted p-values (``None`` without ``correction``).

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([[1.0, 2.0, 3.0], [1.0, -2.0, 0.5]])
    >>> m, p, adj = signflip_test(y, 0, None, exact=True, families=[np.array([0, 1])],
    ...                           correction="maxt")
    >>> p.tolist(), adj.tolist()
    ([0.25, 1.0], [0.25, 1.0])
    >>> signflip_test(y, 0, None, exact=True, alternative="greater")[1].tolist()
    [0.125, 0.625]
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    n = y.shape[1]
    tally = _Tally(y, alternative, families, correction)
    for sums in _sign_sums(y, n_resamples, rng, exact):
        tally(sums)
    if exact:
        total = 1 << n
        p = tally.extreme / total
    else:
        total = n_resamples
        p = (tally.extreme + 1.0) / (total + 1.0)
    p = np.minimum(p, 1.0)
    return tally.observed / max(n, 1), p, tally.adjusted(p, total, exact)


class _Tally:
    """Over the sign vectors: how often each row's sum is at least as extreme as observed,
    and, with a max-T ``correction``, how often each family's largest ``t*`` reaches each
    comparison's observed ``t``."""

    def __init__(self, y: np.ndarray, alternative: Alternative,
                 families: Sequence[np.ndarray] | None, correction: str | None):
        n_series, self.n = y.shape
        self.alternative, self.correction = alternative, correction
        self.observed = np.empty(n_series)
        kernels.signflip_observed(y, self.observed)
        self.slack = 1e-11 * np.abs(y).sum(axis=1)
        self.sumsq = (y * y).sum(axis=1)
        # a sum within rounding of 0 is 0: its t is 0, tied with every other zero sum
        zeroed = np.where(np.abs(self.observed) <= self.slack, 0.0, self.observed)
        self.t_obs = _t_of_sum(zeroed, self.sumsq, self.n)
        self.extreme = np.zeros(n_series, dtype=np.int64)
        fams = [np.asarray(f, dtype=np.int64) for f in families] if correction else []
        # most significant first
        self.orders = [f[np.argsort(-_oriented(self.t_obs[f], alternative), kind="stable")]
                       for f in fams]
        self.counts = [np.zeros(order.size, dtype=np.int64) for order in self.orders]

    def __call__(self, out: np.ndarray) -> None:
        """Count one chunk of sign vectors' sums (``out``: one row per vector)."""
        alternative, observed, slack = self.alternative, self.observed, self.slack
        T = out[:, : observed.size]
        if alternative == "greater":
            self.extreme += (T >= observed - slack).sum(axis=0)
        elif alternative == "less":
            self.extreme += (T <= observed + slack).sum(axis=0)
        else:
            self.extreme += (np.abs(T) >= np.abs(observed) - slack).sum(axis=0)
        if not self.orders:
            return
        T = np.where(np.abs(T) <= slack, 0.0, T)
        tstar = _oriented(_t_of_sum(T, self.sumsq, self.n), alternative)
        for order, counts in zip(self.orders, self.counts, strict=True):
            sub = tstar[:, order]
            ref = _oriented(self.t_obs[order], alternative)
            with np.errstate(invalid="ignore"):  # inf - inf in the branch not taken
                ref = np.where(np.isfinite(ref), ref - 1e-9 * np.abs(ref), ref)
            if self.correction == "stepdown":
                run = np.maximum.accumulate(sub[:, ::-1], axis=1)[:, ::-1]
            else:
                run = np.repeat(sub.max(axis=1, keepdims=True), order.size, axis=1)
            counts += (run >= ref).sum(axis=0)

    def adjusted(self, p: np.ndarray, total: int, exact: bool) -> np.ndarray | None:
        """The max-T adjusted p-values (None without a correction)."""
        if not self.orders:
            return None
        adjusted = np.full(p.size, np.nan)
        for order, counts in zip(self.orders, self.counts, strict=True):
            adj = counts / total if exact else (counts + 1.0) / (total + 1.0)
            if self.correction == "stepdown":
                adj = np.maximum.accumulate(adj)
            adjusted[order] = np.minimum(1.0, np.maximum(adj, p[order]))
        return adjusted


def _sign_sums(y: np.ndarray, n_resamples: int, rng: np.random.Generator | None,
               exact: bool):
    """Every row's signed sums under the sign vectors, chunk by chunk (one row of a chunk
    per vector): all ``2**n`` vectors when ``exact``, else ``n_resamples`` drawn from
    ``rng``."""
    n_series, n = y.shape
    padded = kernels._pad_series(n_series)
    yk = y if padded == n_series else np.concatenate([y, np.zeros((padded - n_series, n))])
    if exact:
        if n > 30:
            raise ValueError(f"exact enumeration needs n <= 30 queries, got {n}")
        total = 1 << n
        chunk = kernels.flip_chunk(padded)
        for start in range(0, total, chunk):
            stop = min(total, start + chunk)
            words = np.arange(start, stop, dtype=np.uint64).reshape(1, -1)
            out = np.empty((stop - start, padded))
            kernels.signflip_sums(yk, words, out)
            yield out
        return
    if rng is None:
        raise ValueError("rng is required unless exact=True")
    n_words = max(1, (n + 63) // 64)
    calls = -(-n_resamples // kernels.flip_chunk(padded))
    chunk = -(-n_resamples // calls)
    words = np.empty((n_words, chunk), dtype=np.uint64)
    out = np.empty((chunk, padded))
    for start in range(0, n_resamples, chunk):
        m = min(chunk, n_resamples - start)
        # each chunk's keys drawn in turn: the same stream as drawing them all at once,
        # without 8 bytes per resample held (8 GB for 10**9 resamples)
        keys = rng.bit_generator.random_raw(m).astype(np.uint64, copy=False)
        w = words if m == chunk else np.empty((n_words, m), dtype=np.uint64)
        kernels.sign_words(keys, w)
        kernels.signflip_sums(yk, w, out[:m])
        yield out[:m]


def _oriented(t: np.ndarray, alternative: Alternative) -> np.ndarray:
    """Larger is more extreme: ``|t|``, ``t`` or ``-t``."""
    if alternative == "greater":
        return t
    if alternative == "less":
        return -t
    return np.abs(t)
