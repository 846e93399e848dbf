"""Multiple-testing corrections: Holm, Bonferroni, Benjamini-Hochberg, none.

The permutation max-T corrections (``"maxt"``, ``"stepdown"``) are named here too, but they
need the joint null distribution of a family, which only :func:`fasteval.compare.compare`
has (through the randomization test's shared sign flips,
:mod:`fasteval.compare.randomization`); :func:`adjust_pvalues` refuses them.
"""

from __future__ import annotations

import numpy as np

from fasteval.errors import ParameterError

CORRECTIONS = ("holm", "bonferroni", "bh", "maxt", "stepdown", "none")
_ALIASES = {
    "holm": "holm",
    "holm-bonferroni": "holm",
    "bonferroni": "bonferroni",
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
    """Canonical correction name (``holm``, ``bonferroni``, ``bh``, ``maxt``, ``stepdown`` or
    ``none``).

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
    method : {"holm", "bonferroni", "bh", "none"}
        Holm's step-down, Bonferroni, Benjamini-Hochberg (false discovery rate), or none.

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
    """
    method = correction_name(method)
    if method in ("maxt", "stepdown"):
        raise ParameterError(
            "method",
            "holm, bonferroni, bh or none (max-T needs the permutation distribution: "
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
    order = np.argsort(q, kind="stable")
    sorted_p = q[order]
    if method == "holm":
        adj = np.maximum.accumulate((m - np.arange(m)) * sorted_p)
    else:  # bh
        adj = np.minimum.accumulate((m / np.arange(1, m + 1) * sorted_p)[::-1])[::-1]
    adj = np.minimum(1.0, adj)
    res = np.empty(m)
    res[order] = adj
    out[ok] = res
    return out
