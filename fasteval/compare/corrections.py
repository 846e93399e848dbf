"""Multiple-testing corrections: Holm, Bonferroni, Sidak, Holm-Sidak, Hochberg,
Benjamini-Hochberg, Benjamini-Yekutieli, none (statsmodels' ``multipletests`` values).

Family-wise error rate: Bonferroni and Holm under any dependence, Sidak and Holm-Sidak
for independent or positively dependent tests, Hochberg's step-up under positive
dependence. False discovery rate: Benjamini-Hochberg under independence or positive
regression dependence, Benjamini-Yekutieli (BH times ``sum(1/k, k=1..m)``) under any
dependence (comparisons that share a baseline run are dependent).

The permutation max-T corrections (``"maxt"``, ``"stepdown"``) are named here too, but they
need the joint null distribution of a family, which only :func:`fasteval.compare.compare`
has (through the randomization test's shared sign flips,
:mod:`fasteval.compare.randomization`); :func:`adjust_pvalues` refuses them.
"""

from __future__ import annotations

from typing import get_args

import numpy as np

from fasteval.errors import ParameterError
from fasteval.options import Correction

CORRECTIONS = get_args(Correction)
_ALIASES = {
    "holm": "holm",
    "holm-bonferroni": "holm",
    "bonferroni": "bonferroni",
    "sidak": "sidak",
    "šidák": "sidak",
    "holm-sidak": "holm-sidak",
    "holm_sidak": "holm-sidak",
    "hochberg": "hochberg",
    "simes-hochberg": "hochberg",
    "by": "by",
    "fdr_by": "by",
    "benjamini-yekutieli": "by",
    "bh": "bh",
    "fdr_bh": "bh",
    "benjamini-hochberg": "bh",
    "fdr": "bh",
    "maxt": "maxt",
    "max-t": "maxt",
    "dunnett": "maxt",
    "stepdown": "stepdown",
    "step-down": "stepdown",
    "westfall-young": "stepdown",
    "none": "none",
    None: "none",
}


def correction_name(method: str | None) -> str:
    """Canonical correction name (``holm``, ``bonferroni``, ``sidak``, ``holm-sidak``,
    ``hochberg``, ``bh``, ``by``, ``maxt``, ``stepdown`` or ``none``; statsmodels' spellings
    ``fdr_bh``, ``fdr_by``, ``holm_sidak`` too).

    Examples
    --------
    >>> correction_name("Benjamini-Hochberg")
    'bh'
    """
    key = method.lower() if isinstance(method, str) else method
    if key not in _ALIASES:
        raise ParameterError("correction", f"one of {', '.join(CORRECTIONS)}", method)
    return _ALIASES[key]


def adjust_pvalues(pvalues: np.ndarray, method: str | None = "holm") -> np.ndarray:
    """Adjust a family of p-values for multiple comparisons.

    NaN p-values are left as NaN and do not count towards the family size; a value outside
    ``[0, 1]`` is a :class:`~fasteval.errors.ParameterError`.

    Parameters
    ----------
    pvalues : array_like
        Unadjusted p-values of one family.
    method : {"holm", "bonferroni", "sidak", "holm-sidak", "hochberg", "bh", "by", "none"}
        Holm's step-down, Bonferroni, Sidak, Holm's step-down with Sidak's levels,
        Hochberg's step-up, Benjamini-Hochberg or Benjamini-Yekutieli (false discovery
        rate), or none (see the module notes).

    Returns
    -------
    ndarray
        Adjusted p-values (capped at 1), in the input order.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "bh").round(4).tolist()
    [0.03, 0.04, 0.04]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "hochberg").round(4).tolist()
    [0.03, 0.04, 0.04]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "by").round(4).tolist()
    [0.055, 0.0733, 0.0733]
    """
    method = correction_name(method)
    if method in ("maxt", "stepdown"):
        raise ParameterError(
            "method",
            "holm, bonferroni, sidak, holm-sidak, hochberg, bh, by or none (max-T needs the "
            "permutation distribution: "
            f"compare(..., tests=['randomization'], correction={method!r}))",
            method,
        )
    try:
        p = np.asarray(pvalues, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("pvalues", "an array of numbers from 0 to 1", pvalues) from None
    bad = ~np.isnan(p) & ~((p >= 0) & (p <= 1))
    if bad.any():
        k = int(np.flatnonzero(bad.reshape(-1))[0])
        raise ParameterError(
            f"pvalues[{k}]", "a p-value from 0 to 1 (NaN: no test)", float(p.reshape(-1)[k])
        )
    out = p.copy()
    ok = ~np.isnan(p)
    q = p[ok]
    m = q.size
    if m == 0 or method == "none":
        return out
    if method == "bonferroni":
        out[ok] = np.minimum(1.0, q * m)
        return out
    if method == "sidak":  # 1 - (1 - p) ** m without cancellation for small p
        with np.errstate(divide="ignore"):  # p = 1: log1p(-1) = -inf, adjusted 1
            out[ok] = np.minimum(1.0, -np.expm1(m * np.log1p(-q)))
        return out
    order = np.argsort(q, kind="stable")
    sorted_p = q[order]
    if method == "holm":
        adj = np.maximum.accumulate((m - np.arange(m)) * sorted_p)
    elif method == "holm-sidak":
        with np.errstate(divide="ignore"):
            adj = np.maximum.accumulate(-np.expm1((m - np.arange(m)) * np.log1p(-sorted_p)))
    elif method == "hochberg":
        adj = np.minimum.accumulate(((m - np.arange(m)) * sorted_p)[::-1])[::-1]
    else:  # bh, by
        scale = m * (np.sum(1.0 / np.arange(1, m + 1)) if method == "by" else 1.0)
        adj = np.minimum.accumulate((scale / np.arange(1, m + 1) * sorted_p)[::-1])[::-1]
    adj = np.minimum(1.0, adj)
    res = np.empty(m)
    res[order] = adj
    out[ok] = res
    return out
