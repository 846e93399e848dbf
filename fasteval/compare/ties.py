"""Paired differences computed once, with ties that floating-point rounding split merged back.

Two runs that score a query 0.8 and 0.6 differ by ``0.20000000000000007``; two that score it
0.3 and 0.1 differ by ``0.19999999999999998``. Both differences are 0.2, and a rank test must
treat them as tied. The rule used by every test and count in :mod:`fasteval.compare` that
depends on exact equality of differences (Wilcoxon's ranks, ties and zeros; wins / ties /
losses; "every difference is the same", which makes the t statistic undefined):

* the differences ``d = run - versus`` of one comparison are computed once, in float64;
* ``tol = 1e-12 * max |score|`` over both runs' scores of that comparison
  (:data:`REL_TOL`); magnitudes ``|d|`` are sorted, and a magnitude joins the tie group of
  the next smaller one when it exceeds it by at most ``tol``;
* every magnitude of a group becomes the group's smallest magnitude, a group whose smallest
  magnitude is at most ``tol`` becomes 0, and each difference keeps its sign.

Metric values are ratios of small integers or sums of a few logarithms, so two differences
that are equal in exact arithmetic differ by a few units in the last place (about
``1e-16``), and two that are not equal differ by far more than ``1e-12``.
"""

from __future__ import annotations

import numpy as np

#: tie tolerance relative to the largest absolute score of a comparison
REL_TOL = 1e-12


def tolerance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Tie tolerance of each comparison: ``REL_TOL * max(|a|, |b|)`` along the last axis.

    Examples
    --------
    >>> import numpy as np
    >>> tolerance(np.array([[0.5, 1.0]]), np.array([[0.25, 2.0]])).tolist()
    [2e-12]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape[-1] == 0:
        return np.zeros(a.shape[:-1])
    return REL_TOL * np.maximum(np.abs(a).max(axis=-1), np.abs(b).max(axis=-1))


def snap(d: np.ndarray, tol: np.ndarray | float) -> np.ndarray:
    """Differences with near-equal magnitudes merged into exact ties (see the module notes).

    Parameters
    ----------
    d : ndarray, shape (n,) or (rows, n)
        Paired differences, one comparison per row.
    tol : float or ndarray of shape (rows,)
        Tie tolerance per row (:func:`tolerance`).

    Returns
    -------
    ndarray
        Same shape as ``d``: each magnitude replaced by the smallest magnitude of its tie
        group (0 for the group at zero), sign kept.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([0.8, 0.3, 0.5, 0.1])
    >>> b = np.array([0.6, 0.1, 0.7, 0.1 + 1e-16])
    >>> (a - b).tolist()
    [0.20000000000000007, 0.19999999999999998, -0.19999999999999996, -9.71445146547012e-17]
    >>> snap(a - b, tolerance(a, b)).tolist()
    [0.19999999999999996, 0.19999999999999996, -0.19999999999999996, 0.0]
    """
    d = np.asarray(d, dtype=np.float64)
    one = d.ndim == 1
    rows = d.reshape(1, -1) if one else d
    tol = np.broadcast_to(np.asarray(tol, dtype=np.float64), rows.shape[:1])
    n = rows.shape[1]
    if n == 0:
        return d.copy()
    mag = np.abs(rows)
    # flat positions of each row's magnitudes in ascending order
    order = np.argsort(mag, axis=1, kind="stable")
    order += (np.arange(rows.shape[0]) * n)[:, None]
    order = order.reshape(-1)
    sorted_mag = mag.reshape(-1)[order].reshape(rows.shape)
    start = np.ones(rows.shape, dtype=bool)
    start[:, 1:] = (sorted_mag[:, 1:] - sorted_mag[:, :-1]) > tol[:, None]
    # each tie group (never across rows) takes its smallest magnitude, 0 within tol of 0
    first = np.flatnonzero(start)
    low = sorted_mag.reshape(-1)[first]
    low[low <= tol[first // n]] = 0.0
    merged = np.empty(rows.size)
    merged[order] = low[np.cumsum(start.reshape(-1)) - 1]
    merged = merged.reshape(rows.shape)
    out = np.copysign(merged, rows)
    out[merged == 0.0] = 0.0  # no -0.0
    return out.reshape(d.shape)


def differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a - b`` along the last axis with rounding ties merged (:func:`snap`).

    Examples
    --------
    >>> import numpy as np
    >>> differences(np.array([0.3, 0.8]), np.array([0.1, 0.6])).tolist()
    [0.19999999999999998, 0.19999999999999998]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return snap(a - b, tolerance(a, b))
