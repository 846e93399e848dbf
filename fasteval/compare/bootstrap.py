"""Paired bootstrap: studentized (bootstrap-t) test and confidence intervals.

The test (Sakai 2006, after Efron and Tibshirani's bootstrap-t). For the differences
``d`` of one comparison (``n`` queries) with mean ``m`` and standard deviation ``s``, the
observed statistic is the paired ``t = m / (s / sqrt(n))``. Each resample draws ``n``
queries with replacement and computes ``t* = (m* - m) / (s* / sqrt(n))`` from its own mean
and standard deviation: resampling from the data shifted to mean 0, as the null hypothesis
asks. The two-sided p-value is ``(#{|t*| >= |t|} + 1) / (R + 1)`` (one-sided: ``t* >= t``
or ``t* <= t``). Dividing by each resample's own spread is what keeps the test near its
nominal level with few queries, where the unstudentized (shift) bootstrap rejects a true
null far too often.

A resample whose differences are all equal has no spread: its ``t*`` is ``+-inf`` (counted
as extreme) unless its mean equals ``m`` (``t* = 0``). Such resamples have probability
``sum_g (n_g / n) ** n`` over the groups ``g`` of equal differences, a floor under the p-value
that no number of resamples removes: with three queries or fewer it exceeds 0.05, and
:func:`min_pvalue` reports it so that a report can say the test cannot reach significance.
The reported p-value is ``max((ext + 1) / (R + 1), floor)``.

Undefined cases: one query (no spread), or differences that are all equal and not all zero
(zero variance: ``t`` would be a ratio of rounding noise); both give a NaN statistic and
p-value. Differences that are all zero (one query included) give ``t = 0, p = 1``.

Confidence intervals of a mean (of the differences, or of one run's scores), level ``L``:

* ``"t"`` (bootstrap-t, default): ``[m - q*(1 - a/2) se, m - q*(a/2) se]`` with
  ``q*`` the quantiles of ``t*`` and ``se = s / sqrt(n)``. Where the resamples without
  spread (``t* = +-inf``, probability ``sum_g (n_g / n) ** n`` as above) outnumber a tail's
  share ``a / 2``, that tail's quantile is infinite and so is the bound: with 3 queries or
  fewer a 95% interval is ``(-inf, inf)`` (3 distinct values: ``3 / 27`` of the resamples
  have no spread; 4 values: ``4 / 256``, below ``0.025``), where ``"bca"`` and
  ``"percentile"`` give finite bounds;
* ``"bca"``: bias-corrected and accelerated percentile interval (Efron 1987); the bias
  correction ``z0 = Phi^-1((#{m* < m} + #{m* = m} / 2) / R)``, the acceleration from the
  jackknife, ``a = sum(e**3) / (6 * sum(e**2) ** 1.5)`` with ``e = d - m``; resamples that
  all fall on one side of ``m`` leave ``z0`` infinite, a :class:`ParameterError` on
  ``n_resamples`` (:func:`fasteval.compare.settings.min_resamples` gives the count
  :func:`fasteval.compare.compare` asks for, which makes this all but impossible);
* ``"percentile"``: quantiles of the resampled means ``m*``.

Quantiles are numpy's default (linear interpolation between order statistics). The
resampled sums come from single-precision products (:mod:`fasteval.compare.kernels`);
the order statistics an interval is read from are drawn again from their keys and
recomputed in double precision, so a bound that is exactly 0 in the data is reported as 0.
One-sided intervals (``alternative="greater"`` / ``"less"``) put the whole ``1 - L`` in one
tail and leave the other bound infinite.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fasteval.compare import kernels
from fasteval.errors import ParameterError
from fasteval.options import Alternative, CiMethod

_CI_ALIASES = {"t": "t", "bootstrap-t": "t", "studentized": "t", "bca": "bca",
               "percentile": "percentile", "pct": "percentile"}
#: relative tolerance for "equal" when comparing resampled statistics with observed ones
_REL = 1e-6


def check_ci_method(ci_method: CiMethod) -> str:
    """Canonical interval name: ``"t"``, ``"bca"`` or ``"percentile"``.

    Examples
    --------
    >>> check_ci_method("BCa"), check_ci_method("bootstrap-t")
    ('bca', 't')
    """
    key = ci_method.lower() if isinstance(ci_method, str) else ci_method
    if key not in _CI_ALIASES:
        raise ParameterError("ci_method", "'t' (bootstrap-t), 'bca' or 'percentile'", ci_method)
    return _CI_ALIASES[key]


def min_pvalue(d: np.ndarray, alternative: Alternative = "two-sided") -> float:
    """Smallest p-value the bootstrap-t test can give for these differences.

    The probability that a resample draws only from one group of equal differences whose
    value differs from the mean (in the tested direction): such a resample has no spread
    and counts as extreme, whatever the data.

    Parameters
    ----------
    d : ndarray, shape (n,)
        Tie-merged differences (:func:`fasteval.compare.ties.snap`).
    alternative : {"two-sided", "greater", "less"}

    Examples
    --------
    >>> import numpy as np
    >>> round(min_pvalue(np.array([0.3, 0.1])), 3)  # either query drawn twice
    0.5
    >>> round(min_pvalue(np.array([0.3, 0.1, 0.2])), 3)  # the middle one equals the mean
    0.074
    >>> min_pvalue(np.linspace(0, 1, 10)) < 1e-8
    True
    """
    d = np.asarray(d, dtype=np.float64)
    n = d.size
    if n == 0:
        return 1.0
    values, counts = np.unique(d, return_counts=True)
    mean = d.mean()
    tol = 1e-12 * max(1.0, float(np.abs(d).max()))
    dev = values - mean
    if alternative == "greater":
        use = dev > tol
    elif alternative == "less":
        use = dev < -tol
    else:
        use = np.abs(dev) > tol
    return float(np.sum((counts[use] / n) ** n))


@dataclass(frozen=True)
class BootstrapResult:
    """Per-row outcome of :func:`paired_bootstrap` (rows of ``d``, then rows of ``x``)."""

    statistic: np.ndarray  # observed paired t of each difference row (NaN: undefined)
    p_value: np.ndarray
    min_p: np.ndarray  # floor of the p-value (see min_pvalue)
    ci_low: np.ndarray  # interval of each difference row's mean
    ci_high: np.ndarray
    mean_low: np.ndarray  # interval of each score row's mean
    mean_high: np.ndarray


def _levels(level: float, alternative: Alternative) -> tuple[float | None, float | None]:
    if alternative == "greater":
        return 1.0 - level, None
    if alternative == "less":
        return None, level
    return (1.0 - level) / 2.0, (1.0 + level) / 2.0


def _quantile_positions(q: float, r: int) -> tuple[int, int, float]:
    pos = q * (r - 1)
    lo = int(np.floor(pos))
    hi = min(r - 1, lo + 1)
    return lo, hi, pos - lo


class _Rows:
    """The series of one block of rows (differences or scores) and their resampled sums."""

    def __init__(self, values: np.ndarray, const: np.ndarray):
        self.values = values  # (rows, n)
        n = values.shape[1]
        self.n = n
        self.mean = values.mean(axis=1) if n else np.zeros(values.shape[0])
        self.e = values - self.mean[:, None]
        with np.errstate(all="ignore"):
            self.sd = values.std(axis=1, ddof=1) if n > 1 else np.full(values.shape[0], np.nan)
        self.const = const
        self.scale = np.abs(self.e).max(axis=1) if n else np.zeros(values.shape[0])

    def studentize(self, s1: np.ndarray, s2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(m* - m, t*)`` per resample and row from the resampled sums of the deviations
        ``s1 = sum c e`` and of their squares ``s2 = sum c e**2``."""
        n = self.n
        m = s1 / n
        ms = s2 / n  # mean square deviation from the observed mean
        var = (ms - m * m) * (n / (n - 1)) if n > 1 else np.zeros_like(m)
        flat = var <= _REL * ms  # no spread (up to the products' rounding)
        with np.errstate(all="ignore"):
            t = m / np.sqrt(np.maximum(var, 0.0) / n)
        zero_mean = np.abs(m) <= _REL * np.maximum(self.scale, 1e-300)
        t = np.where(flat, np.where(zero_mean, 0.0, np.copysign(np.inf, m)), t)
        return m, t


def paired_bootstrap(
    d: np.ndarray,
    d_snapped: np.ndarray,
    x: np.ndarray,
    keys: np.ndarray,
    *,
    level: float = 0.95,
    ci_method: CiMethod = "t",
    alternative: Alternative = "two-sided",
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
) -> BootstrapResult:
    """Bootstrap-t test and intervals for many comparisons sharing one set of resamples.

    Parameters
    ----------
    d : ndarray, shape (rows, n)
        Paired differences ``run - versus`` (one row per comparison).
    d_snapped : ndarray, shape (rows, n)
        The same with rounding ties merged (:func:`fasteval.compare.ties.snap`): decides
        "all differences equal" and the p-value floor.
    x : ndarray, shape (score_rows, n)
        Per-query scores whose means get an interval too (one row per run; may be empty).
    keys : ndarray of uint64
        One key per resample (the resample's query counts are drawn from it).
    level : float
        Confidence level of the intervals.
    ci_method : {"t", "bca", "percentile"}
    alternative : {"two-sided", "greater", "less"}
    pairs : (ndarray, ndarray), optional
        Rows of ``x`` whose difference each row of ``d`` is (``d[k] = x[pairs[0][k]] -
        x[pairs[1][k]]``). The resampled sums of the differences are then those of the
        scores, subtracted: only the squared deviations of the differences (and of the
        scores, for bootstrap-t intervals) need their own products, which is most of the
        cost with many comparisons.

    Returns
    -------
    BootstrapResult

    Examples
    --------
    >>> import numpy as np
    >>> keys = np.random.default_rng(0).bit_generator.random_raw(2000).astype(np.uint64)
    >>> d = np.array([[0.3, 0.1], [0.3, 0.3]])
    >>> r = paired_bootstrap(d, d, np.empty((0, 2)), keys)
    >>> r.min_p.tolist()  # two queries: half the resamples draw one query twice
    [0.5, 0.0]
    >>> [round(v, 1) for v in r.p_value.tolist()]  # constant differences: undefined
    [0.5, nan]
    """
    ci_method = check_ci_method(ci_method)
    d = np.ascontiguousarray(d, dtype=np.float64)
    x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1, d.shape[1])
    rows, n = d.shape
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    const_d = np.all(d_snapped == d_snapped[:, :1], axis=1) if n else np.ones(rows, dtype=bool)
    xtol = 1e-12 * np.abs(x).max(axis=1) if n else np.zeros(x.shape[0])
    const_x = np.ptp(x, axis=1) <= xtol if n else np.ones(x.shape[0], dtype=bool)
    D = _Rows(d, const_d)
    X = _Rows(x, const_x)
    resampled = _resampled(D, X, keys, ci_method == "t" and x.shape[0] > 0, pairs)
    t_obs, p, floor = _test(D, d_snapped, resampled[1], keys.size, alternative)
    bounds = _intervals(D, X, resampled, keys, level, ci_method, alternative)
    return BootstrapResult(t_obs, p, floor, bounds[:rows, 0].copy(), bounds[:rows, 1].copy(),
                           bounds[rows:, 0].copy(), bounds[rows:, 1].copy())


def _resampled(D: _Rows, X: _Rows, keys: np.ndarray, x_sq: bool,
               pairs: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, ...]:
    """``(m* - m, t*)`` of every difference row, then of every score row, per resample
    (``t*`` of the score rows only with ``x_sq``: bootstrap-t intervals need their spread)."""
    rows, xr = D.values.shape[0], X.values.shape[0]
    if pairs is not None:
        # series: scores (centred), their squares if needed, squared difference deviations
        series = np.concatenate([X.e, X.e**2] if x_sq else [X.e])
        series = np.concatenate([series, D.e**2])
        _, tot = kernels.bootstrap_totals_from_keys(series, keys)
        sx = tot[:, :xr]
        sd1 = sx[:, pairs[0]] - sx[:, pairs[1]]
        sd2 = tot[:, xr * (2 if x_sq else 1) :]
    else:
        series = np.concatenate([D.e, D.e**2, X.e] + ([X.e**2] if x_sq else []))
        _, tot = kernels.bootstrap_totals_from_keys(series, keys)
        sd1, sd2 = tot[:, :rows], tot[:, rows : 2 * rows]
        sx = tot[:, 2 * rows : 2 * rows + xr]
    mD, tD = D.studentize(sd1, sd2)
    if x_sq:
        sx2 = tot[:, xr : 2 * xr] if pairs is not None else tot[:, 2 * rows + xr :]
        mX, tX = X.studentize(sx, sx2)
    else:
        mX, tX = sx / max(D.n, 1), np.zeros_like(sx)
    return mD, tD, mX, tX


def _test(D: _Rows, d_snapped: np.ndarray, tD: np.ndarray, R: int,
          alternative: Alternative) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The observed t, the p-value and its floor (:func:`min_pvalue`) of every row."""
    rows, n = D.values.shape
    with np.errstate(all="ignore"):
        t_obs = D.mean / (D.sd / np.sqrt(n))
    floor = np.array([min_pvalue(d_snapped[k], alternative) for k in range(rows)])
    slack = _REL * np.abs(t_obs)
    with np.errstate(invalid="ignore"):  # NaN t (undefined rows) count nothing
        if alternative == "greater":
            ext = (tD >= (t_obs - slack)).sum(axis=0)
        elif alternative == "less":
            ext = (tD <= (t_obs + slack)).sum(axis=0)
        else:
            ext = (np.abs(tD) >= (np.abs(t_obs) - slack)).sum(axis=0)
    p = np.minimum(1.0, np.maximum((ext + 1.0) / (R + 1.0), floor))
    all_zero = ~np.any(d_snapped != 0, axis=1)
    undefined = (D.const | (n < 2)) & ~all_zero
    t_obs = np.where(all_zero, 0.0, t_obs)
    p = np.where(all_zero, 1.0, p)
    t_obs[undefined] = np.nan
    p[undefined] = np.nan
    return t_obs, p, floor


def _intervals(D: _Rows, X: _Rows, resampled: tuple[np.ndarray, ...], keys: np.ndarray,
               level: float, ci_method: CiMethod, alternative: Alternative) -> np.ndarray:
    """``(low, high)`` of every difference row's mean, then of every score row's."""
    mD, tD, mX, tX = resampled
    rows, n = D.values.shape
    R = keys.size
    ql, qh = _levels(level, alternative)
    plan: list[tuple[_Rows, int, np.ndarray, np.ndarray, int]] = [
        (D, k, mD[:, k], tD[:, k], k) for k in range(rows)
    ] + [(X, k, mX[:, k], tX[:, k], 2 * rows + k) for k in range(X.values.shape[0])]
    wanted: list[tuple[int, str, int, int, float]] = []  # (plan index, bound, r_lo, r_hi, w)
    bounds = np.full((len(plan), 2), np.nan)
    for i, (blk, k, m, t, _) in enumerate(plan):
        if blk.const[k] or n < 2:
            if blk.const[k]:
                bounds[i] = blk.mean[k]
            if ql is None:
                bounds[i, 0] = -np.inf
            if qh is None:
                bounds[i, 1] = np.inf
            continue
        stat = t if ci_method == "t" else m
        qs = _bca_levels(blk, k, m, ql, qh, R) if ci_method == "bca" else (ql, qh)
        for side, q in enumerate(qs):
            if q is None:
                bounds[i, side] = -np.inf if side == 0 else np.inf
                continue
            if ci_method == "t":
                q = 1.0 - q  # the lower bound comes from the upper quantile of t*
            lo, hi, w = _quantile_positions(q, R)
            order = np.argpartition(stat, (lo, hi))
            wanted.append((i, "lu"[side], int(order[lo]), int(order[hi]), w))
    if wanted:
        _exact_bounds(bounds, plan, wanted, D, X, keys, ci_method)
    return bounds


def _exact_bounds(bounds: np.ndarray, plan: list, wanted: list, D: _Rows, X: _Rows,
                  keys: np.ndarray, ci_method: CiMethod) -> None:
    """The ``wanted`` bounds, from the resamples they are read from, recomputed in double
    precision."""
    rows, n = D.values.shape
    ids = np.unique([w[2] for w in wanted] + [w[3] for w in wanted])
    raw = np.concatenate([D.values, X.values])
    sq = np.concatenate([D.e**2, X.e**2])
    exact = kernels.exact_totals(np.concatenate([raw, sq]), keys[ids])  # (k, 2 * all)
    n_all = raw.shape[0]
    where = {int(r): j for j, r in enumerate(ids)}
    for i, side, r_lo, r_hi, w in wanted:
        blk, k, _, _, col = plan[i]
        row = col if col < 2 * rows else col - rows  # row among [d; x]
        vals = []
        for r in (r_lo, r_hi):
            tot_raw = exact[where[r], row]
            if ci_method == "t":
                s1 = np.array([tot_raw - n * blk.mean[k]])
                s2 = np.array([exact[where[r], n_all + row]])
                vals.append(float(blk.studentize(s1, s2)[1][0]))
            else:
                vals.append(tot_raw / n)
        v0, v1 = sorted(vals)
        if w == 0 or v0 == v1:
            q_val = v0
        elif np.isinf(v0) or np.isinf(v1):  # no interpolating towards infinity
            q_val = v0 if w < 0.5 else v1
        else:
            q_val = v0 + w * (v1 - v0)
        if ci_method == "t":
            se = blk.sd[k] / np.sqrt(n)
            bound = blk.mean[k] - q_val * se  # se > 0: an infinite quantile stays infinite
        else:
            bound = q_val
        bounds[i, 0 if side == "l" else 1] = bound


def _bca_levels(
    blk: _Rows, k: int, m: np.ndarray, ql: float | None, qh: float | None, R: int
) -> tuple[float | None, float | None]:
    """BCa-adjusted quantile levels of one row.

    Raises
    ------
    ParameterError
        When every resampled mean lies on one side of the observed one (too few resamples:
        the bias correction ``z0`` is infinite).
    """
    from scipy.stats import norm

    tol = _REL * max(blk.scale[k], 1e-300)
    below = float((m < -tol).sum()) + 0.5 * float((np.abs(m) <= tol).sum())
    z0 = float(norm.ppf(below / R))
    if not np.isfinite(z0):
        raise ParameterError(
            "n_resamples",
            "enough resamples for a BCa interval: every resampled mean fell on one side of "
            "the observed mean, so the bias correction is infinite",
            R,
        )
    e = blk.e[k]
    ss = float((e**2).sum())
    a = float((e**3).sum()) / (6.0 * ss**1.5) if ss > 0 else 0.0
    out: list[float | None] = []
    for q in (ql, qh):
        if q is None:
            out.append(None)
            continue
        z = z0 + float(norm.ppf(q))
        out.append(float(norm.cdf(z0 + z / (1.0 - a * z))))
    return out[0], out[1]
