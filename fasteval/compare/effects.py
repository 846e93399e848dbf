"""Standardized effect sizes of paired comparisons, each named for what it divides by.

For a comparison of ``run`` against ``versus`` over ``n`` paired queries, with differences
``d = run - versus`` (mean ``m``):

* ``cohens_d`` — Cohen's ``d_z``: ``m / sd(d)``, the paired (within-topic) effect that the
  paired t-test tests (``t = d_z sqrt(n)``).
* ``hedges_g`` — Hedges' ``g``: ``d_z`` times the exact small-sample bias correction
  ``J(n - 1)``, ``J(v) = Gamma(v / 2) / (sqrt(v / 2) Gamma((v - 1) / 2))``
  (about ``1 - 3 / (4 v - 1)``); undefined below three queries.
* ``glass_delta`` — Glass's ``Delta``: ``m / sd(versus)``, the difference in units of the
  spread of the control's (baseline's) scores across topics.
* ``sakai_es`` — Sakai's ``ES_E``: ``m / sqrt(V_E)`` with ``V_E`` the residual variance of
  the two-way (system x topic) ANOVA of all runs compared on that measure
  (:func:`fasteval.compare.anova.two_way_anova`), the effect size Sakai pairs with the
  topic-blocked Tukey HSD; with two runs ``V_E = var(d) / 2``.

Standard deviations use ``n - 1``. A zero standard deviation (differences all equal up to
rounding, or a control with one score everywhere) makes the ratio undefined: NaN, or 0 when
the mean difference is 0 too, never a number made of rounding noise.
"""

from __future__ import annotations

import math

import numpy as np

#: effect-size columns in the effects table, with the words a report uses for them
EFFECT_LABELS = {
    "cohens_d": "Cohen's d_z (mean difference / sd of the differences)",
    "hedges_g": "Hedges' g (d_z with the small-sample correction J(n-1))",
    "glass_delta": "Glass's Delta (mean difference / sd of the versus run's scores)",
    "sakai_es": "Sakai's ES_E (mean difference / sqrt of the two-way ANOVA residual variance)",
}


def hedges_j(df: int) -> float:
    """Exact small-sample correction ``J(df)`` of Hedges (1981); NaN for ``df < 2``.

    Examples
    --------
    >>> round(hedges_j(9), 6), round(1 - 3 / (4 * 9 - 1), 6)
    (0.913875, 0.914286)
    """
    if df < 2:
        return float("nan")
    return math.exp(math.lgamma(df / 2) - 0.5 * math.log(df / 2) - math.lgamma((df - 1) / 2))


def _ratio(num: np.ndarray, den: np.ndarray, const: np.ndarray, zero: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        out = num / den
    out = np.where(const, np.nan, out)
    return np.where(zero, 0.0, out)


def effect_sizes(
    a: np.ndarray,
    b: np.ndarray,
    d_snapped: np.ndarray,
    residual_variance: float | np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Effect sizes of the comparisons ``a[k]`` vs ``b[k]`` (rows over paired queries).

    Parameters
    ----------
    a, b : ndarray, shape (rows, n)
        Scores of ``run`` and ``versus``.
    d_snapped : ndarray, shape (rows, n)
        ``a - b`` with rounding ties merged (:func:`fasteval.compare.ties.snap`): decides
        "all differences equal" (then ``d_z`` and ``g`` are undefined).
    residual_variance : float or ndarray, optional
        ``V_E`` of the two-way ANOVA the comparisons belong to (``sakai_es``; NaN without).
        Give 0 for a residual that is zero up to rounding
        (:func:`fasteval.compare.anova.residual_is_zero`): ``sakai_es`` is then NaN, or 0
        for a zero mean difference.

    Returns
    -------
    dict of ndarray
        ``cohens_d, hedges_g, glass_delta, sakai_es``.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[0.5, 0.6, 0.9, 0.4]])
    >>> b = np.array([[0.4, 0.6, 0.5, 0.3]])
    >>> e = effect_sizes(a, b, a - b)
    >>> {k: round(float(v[0]), 4) for k, v in e.items() if k != "sakai_es"}
    {'cohens_d': 0.866, 'hedges_g': 0.6267, 'glass_delta': 1.1619}
    >>> effect_sizes(a + 0.1, a, np.full((1, 4), 0.1))["cohens_d"].tolist()  # zero variance
    [nan]
    """
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(b, dtype=np.float64))
    d = a - b
    rows, n = d.shape
    m = d.mean(axis=1) if n else np.zeros(rows)
    zero_mean = ~np.any(d_snapped != 0, axis=1)
    const = np.all(d_snapped == d_snapped[:, :1], axis=1) if n else np.ones(rows, dtype=bool)
    with np.errstate(all="ignore"):
        sd_d = d.std(axis=1, ddof=1) if n > 1 else np.full(rows, np.nan)
        sd_b = b.std(axis=1, ddof=1) if n > 1 else np.full(rows, np.nan)
    dz = _ratio(m, sd_d, const | (n < 2), zero_mean)
    g = dz * hedges_j(n - 1)
    g = np.where(zero_mean, 0.0, g)
    b_const = np.ptp(b, axis=1) <= 1e-12 * np.abs(b).max(axis=1) if n else np.ones(rows, bool)
    glass = _ratio(m, sd_b, b_const | (n < 2), zero_mean)
    if residual_variance is None:
        es = np.full(rows, np.nan)
    else:
        ve = np.broadcast_to(np.asarray(residual_variance, dtype=np.float64), (rows,))
        with np.errstate(all="ignore"):  # (the square root of a negative ve too)
            es = _ratio(m, np.sqrt(ve), ~(ve > 0), zero_mean)
    return {"cohens_d": dz, "hedges_g": g, "glass_delta": glass, "sakai_es": es}
