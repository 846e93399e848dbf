"""Topic-set size design: how many topics a test collection needs (Sakai 2014, 2016).

Given the variance of a measure across topics (estimated from a pilot collection), the
smallest difference worth detecting, the significance level and the power wanted, find
the smallest number of topics ``n`` at which the test reaches that power.

* ``design="t"`` (paired t-test, two systems): differences with standard deviation
  ``sd``; the test statistic follows a noncentral t with ``n - 1`` degrees of freedom and
  noncentrality ``sqrt(n) * min_diff / sd``. Power is the probability of rejecting with
  the two-sided (or one-sided) critical value.
* ``design="anova"`` (``n_systems = m`` systems, topic-blocked two-way ANOVA F test):
  ``min_diff`` is the minimum detectable range (the best and the worst system differ by
  it, the others in between: the least favourable case); with per-score error variance
  ``sigma2`` the noncentrality is ``n * min_diff**2 / (2 * sigma2)``, and F has ``m - 1``
  and ``(m - 1)(n - 1)`` degrees of freedom.

Variance from a pilot (:func:`pilot_variance`): the residual variance ``V_E`` of the
two-way (system x topic) ANOVA of the pilot runs on their common topics. ``sigma2 = V_E``
for the ANOVA design; the variance of a paired difference is ``2 V_E`` (with two pilot
runs, exactly the variance of their differences).

Examples
--------
>>> topic_set_size(0.05, sd=0.15)  # paired t, alpha = 0.05, power 0.8
73
>>> round(power(73, 0.05, sd=0.15), 3)
0.802
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from fasteval.compare.settings import is_count, is_real
from fasteval.errors import InputError, ParameterError
from fasteval.options import Alternative, Design, check_choice

MAX_SYSTEMS = 10_000
"""Most systems the ANOVA design takes: past it scipy's noncentral F (and its chi-square
limit) lose accuracy, down to powers below alpha from about 1e12 systems."""

_F_LIMIT_DF = 1e9
"""Denominator degrees of freedom past which the ANOVA power is taken from F's chi-square
limit (scipy's noncentral F loses accuracy from about 1e10; the limit is within 4e-7 of
it at 1e9 for up to :data:`MAX_SYSTEMS` systems)."""


def _finite(value: float) -> bool:
    """Finite as a float64 (an integer past float64's range is not)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _check(
    min_diff: float,
    sd: float | None,
    alpha: float,
    design: str,
    n_systems: int | None,
    alternative: Alternative,
) -> None:
    for name, v in (("min_diff", min_diff), ("sd", sd)):
        if name == "sd" and v is None:
            continue
        if (
            not isinstance(v, (int, float, np.floating, np.integer))
            or isinstance(v, bool)
            or not _finite(v)
            or v <= 0
        ):
            raise ParameterError(name, "a finite number > 0", v)
    if not (is_real(alpha) and 0 < alpha < 1):
        raise ParameterError("alpha", "a number between 0 and 1", alpha)
    check_choice("design", Design, design)
    if design == "anova":
        if not is_count(n_systems) or not 2 <= n_systems <= MAX_SYSTEMS:
            raise ParameterError("n_systems", f"an integer from 2 to {MAX_SYSTEMS} for "
                                 "design='anova'", n_systems)
        if alternative != "two-sided":
            raise ParameterError("alternative", "'two-sided' for design='anova'", alternative)
    elif n_systems is not None:
        raise ParameterError("n_systems", "None for design='t' (two systems; n_systems is "
                             "the ANOVA design's)", n_systems)
    check_choice("alternative", Alternative, alternative)


def power(
    n_topics: int,
    min_diff: float,
    sd: float,
    *,
    alpha: float = 0.05,
    design: Design = "t",
    n_systems: int | None = None,
    alternative: Alternative = "two-sided",
) -> float:
    """Power of the test with ``n_topics`` topics to detect a difference of ``min_diff``.

    Parameters
    ----------
    n_topics : int
        Number of topics (at least 2).
    min_diff : float
        Difference (``design="t"``) or range of system means (``"anova"``) to detect.
    sd : float
        Standard deviation of a paired difference (``"t"``) or of the ANOVA error
        (``"anova"``, ``sqrt(V_E)``).
    alpha : float
        Significance level.
    design : {"t", "anova"}
    n_systems : int, optional
        Number of systems (``"anova"``), at most :data:`MAX_SYSTEMS`.
    alternative : {"two-sided", "greater", "less"}
        ``"t"`` only; one-sided tests put all of ``alpha`` in the direction of the effect.

    Returns
    -------
    float

    Examples
    --------
    >>> round(power(20, 0.1, sd=0.2), 4)
    0.5645
    >>> round(power(50, 0.1, sd=0.1, design="anova", n_systems=5), 4)
    0.9876
    """
    from scipy import stats

    _check(min_diff, sd, alpha, design, n_systems, alternative)
    if not isinstance(n_topics, (int, np.integer)) or isinstance(n_topics, bool) or n_topics < 2:
        raise ParameterError("n_topics", "an integer >= 2", n_topics)
    n = int(n_topics)
    # float64 throughout: scipy's integer paths stop at int64 (a TypeError for more topics)
    # and Python floats raise on overflow where numpy's give inf
    d, s = np.float64(min_diff), np.float64(sd)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        effect = d / s  # inf where it overflows: power 1 (see _certain)
    # critical values from the upper tail (isf, as statsmodels): 1 - alpha rounds to 1 for
    # alpha below about 1e-16, where ppf would give an infinite critical value and power 0
    if design == "t":
        df = np.float64(n - 1)
        nc = np.sqrt(np.float64(n)) * effect
        if alternative == "two-sided":
            crit = _critical(stats.t.isf(alpha / 2, df), alpha, "n_topics", n)
            # the lower tail P(T < -crit) as the upper tail of -T (noncentrality -nc):
            # scipy's nct.cdf returns NaN far in the left tail (large nc)
            return _certain(stats.nct.sf(crit, df, nc) + stats.nct.sf(crit, df, -nc), nc, "n_topics", n)
        crit = _critical(stats.t.isf(alpha, df), alpha, "n_topics", n)
        return _certain(stats.nct.sf(crit, df, nc), nc, "n_topics", n)
    m = np.float64(n_systems)  # type: ignore[arg-type]
    df1, df2 = m - 1, (m - 1) * np.float64(n - 1)
    with np.errstate(over="ignore"):
        lam = np.float64(n) * effect**2 / 2
    big = ("n_systems", n_systems) if n_systems > n else ("n_topics", n)  # type: ignore[operator]
    if df2 > _F_LIMIT_DF:
        # scipy's ncf drifts past about 1e10 denominator degrees of freedom (0.84 for 0.09
        # at 1e18, 19 at 1e20); F * df1 is noncentral chi-square there to within O(df1/df2)
        crit = _critical(stats.chi2.isf(alpha, df1), alpha, *big)
        return _certain(stats.ncx2.sf(crit, df1, lam), lam, *big)
    crit = _critical(stats.f.isf(alpha, df1, df2), alpha, *big)
    return _certain(stats.ncf.sf(crit, df1, df2, lam), lam, *big)


def _critical(crit: float, alpha: float, param: str, value: object) -> float:
    """The test's critical value, refused where scipy's quantile gives none: NaN for
    degrees of freedom past about 1e20 (``param``), -inf for alpha below about 1e-290."""
    if math.isnan(crit):
        raise ParameterError(param, "small enough for scipy's distributions to give the test's "
                             "critical value (they gave NaN)", value)
    if not math.isfinite(crit):  # negative for a one-sided alpha past 0.5: a valid test
        raise ParameterError("alpha", "large enough for scipy to give the test's critical value "
                             f"(it gave {crit})", alpha)
    return float(crit)


def _certain(p: float, noncentrality: float, param: str, value: object) -> float:
    """``p``, or 1 where scipy's noncentral distributions give NaN for a noncentrality far
    past the point where the power is 1 in float64 (t: about 1e10; F: about 1e22); any
    other NaN (degrees of freedom past about 1e20) is refused, naming ``param``."""
    p = float(p)
    if math.isnan(p):
        if noncentrality > 1e6:
            return 1.0
        raise ParameterError(param, "small enough for scipy's noncentral distributions to give "
                             "a power (they gave NaN)", value)
    return p


def topic_set_size(
    min_diff: float,
    sd: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    design: Design = "t",
    n_systems: int | None = None,
    alternative: Alternative = "two-sided",
    max_topics: int = 10**7,
) -> int:
    """Smallest number of topics at which the test reaches ``power``.

    Parameters are those of :func:`power` (``power`` is the target, e.g. 0.8).

    Raises
    ------
    ParameterError
        For invalid parameters, or when more than ``max_topics`` topics would be needed.

    Examples
    --------
    >>> topic_set_size(0.1, sd=0.2)
    34
    >>> topic_set_size(0.1, sd=0.1, design="anova", n_systems=5)
    26
    """
    _check(min_diff, sd, alpha, design, n_systems, alternative)
    if not (is_real(power) and 0 < power < 1):
        raise ParameterError("power", "a number between 0 and 1", power)
    if not isinstance(max_topics, (int, np.integer)) or isinstance(max_topics, bool) \
            or max_topics < 2:
        raise ParameterError("max_topics", "an integer >= 2", max_topics)
    target = float(power)
    kw: dict[str, Any] = {
        "alpha": alpha,
        "design": design,
        "n_systems": n_systems,
        "alternative": alternative,
    }

    def pw(n: int) -> float:
        return globals()["power"](n, min_diff, sd, **kw)

    lo, hi = 2, 2
    while pw(hi) < target:
        lo = hi + 1
        hi *= 2
        if hi > max_topics:
            if pw(max_topics) < target:
                raise ParameterError(
                    "min_diff",
                    f"large enough to be detected with at most {max_topics} topics "
                    f"(power {pw(max_topics):.3f} there)",
                    min_diff,
                )
            hi = max_topics
            break
    while lo < hi:  # power grows with the number of topics
        mid = (lo + hi) // 2
        if pw(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    return hi


def pilot_variance(results: Any, measures: Any = None) -> pl.DataFrame:
    """Variance estimates for topic-set size design from pilot per-query results.

    Parameters
    ----------
    results : DataFrame, path, list of paths or mapping
        Per-query results of two or more pilot runs (anything :func:`fasteval.compare`
        reads).
    measures : str or list of str, optional
        Measures to use (default: all).

    Returns
    -------
    polars.DataFrame
        ``measure, n_runs, n_topics, residual_variance`` (``V_E`` of the two-way ANOVA over
        the topics every run has; exactly 0 where the residuals are zero up to rounding:
        runs that differ by one constant on every topic) and ``sd_diff`` (``sqrt(2 V_E)``,
        the standard deviation of a paired difference).

    Examples
    --------
    >>> import polars as pl
    >>> pilot = {"a": pl.DataFrame({"query_id": [1, 2, 3], "map": [0.2, 0.5, 0.6]}),
    ...          "b": pl.DataFrame({"query_id": [1, 2, 3], "map": [0.3, 0.4, 0.9]})}
    >>> [round(v, 6) if isinstance(v, float) else v for v in pilot_variance(pilot).row(0)]
    ['map', 2, 3, 0.02, 0.2]
    """
    from fasteval.compare._data import load_results, pair_all
    from fasteval.compare.anova import residual_is_zero, two_way_anova
    from fasteval.compare.names import resolve_measures

    long = load_results(results)
    systems = long.get_column("run_id").unique(maintain_order=True).to_list()
    if len(systems) < 2:
        raise InputError(
            f"need at least two pilot runs to estimate the residual variance, got {systems}",
            source="results",
        )
    available = long.get_column("measure").unique(maintain_order=True).to_list()
    names = resolve_measures(measures, available)
    paired = pair_all(long, systems, names, "drop")
    rows = []
    for m in names:
        x = paired[m].scores
        if x.shape[1] < 2:
            raise InputError(
                f"measure {m!r}: {x.shape[1]} topic(s) common to every pilot run; need 2 or more",
                source="results",
            )
        ve = 0.0 if residual_is_zero(x) else two_way_anova(x)["ms_residual"]
        rows.append((m, len(systems), int(x.shape[1]), ve, math.sqrt(2 * ve)))
    schema = {"measure": pl.Utf8, "n_runs": pl.Int64, "n_topics": pl.Int64,
              "residual_variance": pl.Float64, "sd_diff": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row")
