"""Wilcoxon signed-rank test on tie-merged paired differences, with its behaviour pinned.

What is computed, whatever scipy version is installed (scipy is used only for the normal
distribution and for ranking):

* **Differences**: ``d = run - versus`` computed once, rounding ties merged
  (:mod:`fasteval.compare.ties`), so equal metric differences are equal ranks.
* **Zeros** (``zero_method``): ``"wilcox"`` (default) drops zero differences before ranking;
  ``"pratt"`` ranks them with the others and then leaves their ranks out of both sums.
* **Ranks**: mid-ranks of ``|d|`` for tied magnitudes.
* **Statistic**: ``W+`` is the sum of the ranks of the positive differences. The reported
  statistic is ``min(W+, W-)`` for the two-sided test and ``W+`` for a one-sided one
  (scipy's convention).
* **Null distribution** (``method``):

  - ``"exact"``: the exact conditional distribution of ``W+`` given the ranks (every sign
    pattern of the non-zero differences equally likely), enumerated by dynamic
    programming over the doubled mid-ranks, so it is exact with ties and with Pratt's
    zeros (up to :data:`MAX_EXACT` non-zero differences);
  - ``"approx"``: normal approximation with mean ``sum(r) / 2`` and variance
    ``sum(r**2) / 4`` over the non-zero ranks ``r`` (the tie- and zero-corrected variance),
    with a continuity correction of 1/2 towards the mean when ``correction=True``;
  - ``"auto"`` (default): exact when there are at most 50 queries and no ties and no
    zeros; the exact conditional distribution when there are at most 13 queries; the
    normal approximation otherwise (the rule of ``scipy.stats.wilcoxon`` since 1.15, whose
    permutation test for 13 queries or fewer enumerates the same conditional
    distribution).

* **p-value**: one-sided tail of the distribution, or ``min(1, 2 * smaller tail)``.
  A comparison whose differences are all zero gets ``W = 0, p = 1``.
"""

from __future__ import annotations

import numpy as np

from fasteval.errors import ParameterError
from fasteval.options import Alternative, ZeroMethod, check_choice

#: most non-zero differences for the exact distribution (its table has ~n**2 entries and
#: takes ~n**3 / 2 operations to build: about a second at this size)
MAX_EXACT = 1000
METHODS = ("auto", "exact", "approx")
_METHOD_ALIASES = {"auto": "auto", "exact": "exact", "approx": "approx", "asymptotic": "approx",
                   "normal": "approx"}


def check_zero_method(zero_method: str) -> str:
    """Validate ``zero_method`` (``"wilcox"`` or ``"pratt"``).

    Examples
    --------
    >>> check_zero_method("Pratt")
    'pratt'
    """
    key = zero_method.lower() if isinstance(zero_method, str) else zero_method
    return check_choice("zero_method", ZeroMethod, key, given=zero_method)


def check_method(method: str | bool) -> str:
    """Validate the null-distribution choice: ``"auto"``, ``"exact"``/``True`` or
    ``"approx"``/``False``.

    Examples
    --------
    >>> check_method(True), check_method("asymptotic")
    ('exact', 'approx')
    """
    if method is True:
        return "exact"
    if method is False:
        return "approx"
    key = method.lower() if isinstance(method, str) else method
    if key not in _METHOD_ALIASES:
        raise ParameterError("method", "'auto', 'exact' (True) or 'approx' (False)", method)
    return _METHOD_ALIASES[key]


def check_alternative(alternative: Alternative) -> str:
    """Validate ``alternative`` (``"two-sided"``, ``"greater"`` or ``"less"``).

    Examples
    --------
    >>> check_alternative("greater")
    'greater'
    """
    key = alternative.lower() if isinstance(alternative, str) else alternative
    if key in ("two_sided", "twosided"):
        key = "two-sided"
    return check_choice("alternative", Alternative, key, given=alternative)


def _midranks(x: np.ndarray) -> np.ndarray:
    """Mid-ranks (1-based) of ``x``; exact equality defines ties."""
    from scipy.stats import rankdata

    return rankdata(x, method="average")


def exact_distribution(ranks2: np.ndarray) -> np.ndarray:
    """Null probabilities of ``2 W+`` for doubled ranks ``ranks2`` (non-negative integers).

    ``out[k]`` is the probability that the doubled ranks with a plus sign sum to ``k`` when
    every sign is + or - with probability 1/2 independently.

    Examples
    --------
    >>> import numpy as np
    >>> (exact_distribution(np.array([2, 4, 6])) * 8).tolist()  # ranks 1, 2, 3
    [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    """
    ranks2 = np.asarray(ranks2, dtype=np.int64)
    total = int(ranks2.sum())
    dist = np.zeros(total + 1)
    dist[0] = 1.0
    top = 0
    for r in np.sort(ranks2):
        r = int(r)
        if r == 0:
            continue
        # new[k] = (old[k] + old[k - r]) / 2, over the reachable range only
        dist[r : top + r + 1] += dist[: top + 1]
        dist[: top + r + 1] *= 0.5
        top += r
    return dist


def signed_rank(
    d: np.ndarray,
    *,
    zero_method: str = "wilcox",
    correction: bool = False,
    method: str | bool = "auto",
    alternative: Alternative = "two-sided",
) -> tuple[float, float, str]:
    """Wilcoxon signed-rank test of one series of tie-merged differences.

    Parameters
    ----------
    d : ndarray, shape (n,)
        Differences ``run - versus``, ties already merged (:func:`fasteval.compare.ties.snap`).
    zero_method : {"wilcox", "pratt"}
        Drop zeros before ranking, or rank them and leave their ranks out of the sums.
    correction : bool
        Continuity correction of the normal approximation.
    method : {"auto", "exact", "approx"}
        Null distribution (see the module notes).
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: the run scores higher than ``versus``.

    Returns
    -------
    statistic : float
        ``min(W+, W-)`` (two-sided) or ``W+``.
    p_value : float
    method : str
        ``"exact"`` or ``"approx"``: the null distribution used (``"none"`` when every
        difference is zero).

    Examples
    --------
    The tie-aware test on twenty P@10-like pairs (normal approximation, as ``"auto"``
    chooses with ties and 20 queries):

    >>> import numpy as np
    >>> from fasteval.compare.ties import differences
    >>> a = np.array([.1, .8, .8, 1, .9, 1, .8, .4, .8, .4, .6, 1, .2, 1, .9, .9, .8, .9, 0, .9])
    >>> b = np.array([.4, .6, 1, .7, .6, .7, .5, .8, .4, .6, .6, 0, .1, .8, .7, .5, .6, 0, .3, .6])
    >>> w, p, how = signed_rank(differences(a, b))
    >>> float(w), round(p, 4), how
    (47.0, 0.0511, 'approx')
    >>> w, p, how = signed_rank(differences(a, b), method="exact")
    >>> float(w), round(p, 6), how  # all 2**19 sign patterns of the non-zero differences
    (47.0, 0.051102, 'exact')
    """
    zero_method = check_zero_method(zero_method)
    method = check_method(method)
    alternative = check_alternative(alternative)
    d = np.asarray(d, dtype=np.float64)
    nonzero = d != 0
    if not nonzero.any():
        return 0.0, 1.0, "none"
    ranked = np.abs(d[nonzero]) if zero_method == "wilcox" else np.abs(d)
    ranks = _midranks(ranked)
    if zero_method != "wilcox":
        ranks = ranks[nonzero]
    w_plus = float(ranks[d[nonzero] > 0].sum())
    total = float(ranks.sum())
    if method == "auto":
        method = _auto_method(d.size, np.unique(ranked).size < ranked.size, nonzero.all())
    if method == "exact":
        _check_exact_size(ranks.size)
        ranks2 = np.rint(2.0 * ranks).astype(np.int64)
        p = _exact_p(exact_distribution(ranks2), w_plus, alternative)
    else:
        sd = float(np.sqrt((ranks**2).sum() / 4.0))
        p = float(_approx_p(np.float64(w_plus - total / 2.0), sd, correction, alternative))
    stat = min(w_plus, total - w_plus) if alternative == "two-sided" else w_plus
    return float(stat), float(min(1.0, p)), method


def _auto_method(n: int, has_ties: bool, all_nonzero: bool) -> str:
    """The null distribution ``method="auto"`` takes (see the module notes)."""
    if n > 50:
        return "approx"
    if not has_ties and all_nonzero:
        return "exact"
    return "exact" if n <= 13 else "approx"


def _check_exact_size(count: int) -> None:
    if count > MAX_EXACT:
        raise ParameterError(
            "exact",
            f"False or 'auto' for the Wilcoxon test with more than {MAX_EXACT} non-zero "
            f"differences ({count} here; the normal approximation is accurate there)",
            True,
        )


#: longest rows :func:`signed_rank_batch` ranks as a whole table: its rank sums are exact up
#: to here (sums of squared half-integer ranks stay below 2**51), so they equal the
#: per-row sums of :func:`signed_rank` bit for bit; longer rows go through that function
_BATCH_MAX_N = 100_000
#: about this many cells per block of rows (bounds the temporary arrays)
_BLOCK_CELLS = 1 << 21


def signed_rank_rows(
    d: np.ndarray,
    *,
    zero_method: str = "wilcox",
    correction: bool = False,
    method: str | bool = "auto",
    alternative: Alternative = "two-sided",
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """:func:`signed_rank` for every row of ``d`` (shape ``(rows, n)``).

    Examples
    --------
    >>> import numpy as np
    >>> stat, p, how = signed_rank_rows(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]))
    >>> stat.tolist(), p.tolist(), how
    ([0.0, 0.0], [0.25, 1.0], ['exact', 'none'])
    """
    stat, p, how, _ = signed_rank_batch(
        d, zero_method=zero_method, correction=correction, method=method,
        alternative=alternative,
    )
    return stat, p, how


def signed_rank_batch(
    d: np.ndarray,
    *,
    zero_method: str = "wilcox",
    correction: bool = False,
    method: str | bool = "auto",
    alternative: Alternative = "two-sided",
) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """:func:`signed_rank` for every row of ``d`` (shape ``(rows, n)``), and the smallest
    p-value each row's ranks can give.

    The ranks, rank sums and normal tails of all rows are computed as arrays (the values
    are those of :func:`signed_rank`, bit for bit: mid-ranks and their sums are exact, and
    the same operations follow); the exact distribution is built once per multiset of
    ranks. ``floor[k]`` is the p-value of row ``k`` with every non-zero difference moved to
    the extreme side (all positive; all negative for ``alternative="less"``), under the
    null distribution the row used; 1 for a row of zeros.

    Examples
    --------
    >>> import numpy as np
    >>> stat, p, how, floor = signed_rank_batch(np.array([[1.0, -2.0, 3.0], [0.0, 0.0, 0.0]]))
    >>> stat.tolist(), p.tolist(), how, floor.tolist()
    ([2.0, 0.0], [0.75, 1.0], ['exact', 'none'], [0.25, 1.0])
    """
    zero_method = check_zero_method(zero_method)
    method = check_method(method)
    alternative = check_alternative(alternative)
    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    rows, n = d.shape
    stat = np.zeros(rows)
    p = np.ones(rows)
    floor = np.ones(rows)
    how = ["none"] * rows
    dists: dict[bytes, np.ndarray] = {}
    opts = (zero_method, correction, alternative)
    if n > _BATCH_MAX_N:
        for k in range(rows):
            _one_row(d[k], method, opts, stat, p, floor, how, k)
        return stat, p, how, floor
    step = max(1, _BLOCK_CELLS // max(n, 1))
    for lo in range(0, rows, step):
        hi = min(rows, lo + step)
        _block(d[lo:hi], lo, method, opts, stat, p, floor, how, dists)
    return stat, p, how, floor


def _one_row(dk, method, opts, stat, p, floor, how, k) -> None:
    """Row ``k`` through :func:`signed_rank` (rows with non-finite values, very long rows)."""
    zero_method, correction, alternative = opts
    stat[k], p[k], how[k] = signed_rank(
        dk, zero_method=zero_method, correction=correction, method=method,
        alternative=alternative,
    )
    if how[k] != "none":
        extreme = np.abs(dk)
        if alternative == "less":
            extreme = -extreme
        floor[k] = signed_rank(
            extreme, zero_method=zero_method, correction=correction, method=how[k],
            alternative=alternative,
        )[1]


def _block(d, lo, method, opts, stat, p, floor, how, dists) -> None:
    """Rows ``lo, lo + 1, ...`` of the outputs from the block of differences ``d``."""
    zero_method, correction, alternative = opts
    rows, n = d.shape
    finite = np.isfinite(d).all(axis=1)
    nonzero = d != 0
    active = nonzero.any(axis=1) & finite
    for k in np.flatnonzero(~finite):
        _one_row(d[k], method, opts, stat, p, floor, how, lo + int(k))
    if not active.any():
        return
    ranks, has_ties, n_zero = _row_ranks(d, nonzero, zero_method)
    total = ranks.sum(axis=1)
    w_plus = np.where(d > 0, ranks, 0.0).sum(axis=1)
    sumsq = (ranks**2).sum(axis=1)
    if method == "auto":
        if n > 50:
            exact = np.zeros(rows, dtype=bool)
        else:
            exact = (~has_ties & (n_zero == 0)) | (n <= 13)
    else:
        exact = np.full(rows, method == "exact")
    exact &= active
    approx = active & ~exact
    counts = n - n_zero
    if exact.any():
        big = exact & (counts > MAX_EXACT)
        if big.any():
            _check_exact_size(int(counts[np.argmax(big)]))
    # the extreme sign pattern: every non-zero difference positive (negative for "less")
    w_floor = np.zeros(rows) if alternative == "less" else total
    for k in np.flatnonzero(exact):
        ranks2 = np.rint(2.0 * ranks[k][nonzero[k]]).astype(np.int64)
        key = np.sort(ranks2).tobytes()
        dist = dists.get(key)
        if dist is None:
            dist = dists[key] = exact_distribution(ranks2)
        p[lo + k] = _exact_p(dist, float(w_plus[k]), alternative)
        floor[lo + k] = _exact_p(dist, float(w_floor[k]), alternative)
        how[lo + k] = "exact"
    if approx.any():
        sel = np.flatnonzero(approx)
        mean = total[sel] / 2.0
        sd = np.sqrt(sumsq[sel] / 4.0)
        p[lo + sel] = _approx_p(w_plus[sel] - mean, sd, correction, alternative)
        floor[lo + sel] = _approx_p(w_floor[sel] - mean, sd, correction, alternative)
        for k in sel:
            how[lo + k] = "approx"
    sel = np.flatnonzero(active)
    w_minus = total - w_plus
    st = np.minimum(w_plus, w_minus) if alternative == "two-sided" else w_plus
    stat[lo + sel] = st[sel]


def _row_ranks(d: np.ndarray, nonzero: np.ndarray,
               zero_method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mid-ranks of ``|d|`` within each row (ties: equal values, as scipy's rankdata), 0 for
    zero differences; whether a row has ties among the ranked values; its zero count."""
    rows, n = d.shape
    a = np.abs(d)
    # flat positions of each row's values in ascending order
    order = np.argsort(a, axis=1, kind="stable")
    order += (np.arange(rows) * n)[:, None]
    order = order.reshape(-1)
    srt = a.reshape(-1)[order].reshape(rows, n)
    starts = np.ones((rows, n), dtype=bool)
    starts[:, 1:] = srt[:, 1:] != srt[:, :-1]
    # tie groups (never across rows): flat first and last sorted positions, as integers
    first = np.flatnonzero(starts)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = rows * n - 1
    twice = first + last - 2 * (first // n) * n  # 2 * mid-rank - 2, within the row
    ranks = np.empty(rows * n)
    ranks[order] = (twice / 2.0 + 1.0)[np.cumsum(starts.reshape(-1)) - 1]
    ranks = ranks.reshape(rows, n)
    n_zero = n - nonzero.sum(axis=1)
    if zero_method == "wilcox":
        # zeros rank below every non-zero |d|: dropping them lowers the others by their count
        ranks -= n_zero[:, None]
        has_ties = (~starts[:, 1:] & (srt[:, 1:] != 0)).any(axis=1)
    else:
        has_ties = (~starts[:, 1:]).any(axis=1)
    ranks[~nonzero] = 0.0
    return ranks, has_ties, n_zero


def _exact_p(dist: np.ndarray, w_plus: float, alternative: Alternative) -> float:
    """p-value of ``W+ = w_plus`` under the exact distribution ``dist`` of ``2 W+``."""
    k = int(round(2.0 * w_plus))
    cdf = float(dist[: k + 1].sum())
    sf = float(dist[k:].sum())
    if alternative == "greater":
        p = sf
    elif alternative == "less":
        p = cdf
    else:
        p = 2.0 * min(cdf, sf)
    return min(1.0, p)


def _approx_p(diff: np.ndarray, sd: np.ndarray, correction: bool, alternative: Alternative) -> np.ndarray:
    """Normal-approximation p-values of ``W+ - mean = diff`` with standard deviation ``sd``."""
    from scipy.stats import norm

    if correction:
        if alternative == "greater":
            diff = diff - 0.5
        elif alternative == "less":
            diff = diff + 0.5
        else:
            diff = diff - 0.5 * np.sign(diff)
    z = diff / sd
    if alternative == "greater":
        p = norm.sf(z)
    elif alternative == "less":
        p = norm.cdf(z)
    else:
        p = 2.0 * norm.sf(np.abs(z))
    return np.minimum(1.0, np.asarray(p, dtype=np.float64))
