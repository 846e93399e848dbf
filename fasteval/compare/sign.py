"""The sign test: how often one run beats the other, against a fair coin.

Each query whose (tie-merged, :mod:`fasteval.compare.ties`) difference is not zero is a
win or a loss; ties are left out. Under the null hypothesis a win and a loss are equally
likely, so the number of wins ``w`` among ``n = w + l`` non-tied queries is binomial
``B(n, 1/2)``. The p-value is exact:

* ``greater`` (the run scores higher): ``P(X >= w)``;
* ``less``: ``P(X <= w)``;
* ``two-sided``: twice the smaller tail, at most 1 (the distribution is symmetric, so this
  is also the sum of the probabilities of outcomes no more likely than ``w``, the rule of
  :func:`scipy.stats.binomtest`).

The statistic is ``w``. It ignores how large the differences are, so it has less power
than the t, Wilcoxon or randomization tests on the same queries; its only assumption is
that the queries are independent.
"""

from __future__ import annotations

import numpy as np

from fasteval.options import Alternative


def sign_test(wins: np.ndarray, losses: np.ndarray,
              alternative: Alternative = "two-sided") -> tuple[np.ndarray, np.ndarray]:
    """Statistic (the wins) and exact p-value of each comparison.

    Parameters
    ----------
    wins, losses : numpy.ndarray
        Per comparison: queries where the run scores higher / lower than the other.
    alternative : {"two-sided", "greater", "less"}

    Returns
    -------
    (statistic, p_value) : float64 arrays; a comparison without a win or a loss gets
    statistic 0 and p-value 1.

    Examples
    --------
    >>> s, p = sign_test(np.array([9, 5, 0]), np.array([1, 5, 0]))
    >>> s.tolist(), [round(v, 6) for v in p.tolist()]
    ([9.0, 5.0, 0.0], [0.021484, 1.0, 1.0])
    >>> sign_test(np.array([9]), np.array([1]), "greater")[1].round(6).tolist()
    [0.010742]
    """
    from scipy.stats import binom

    w = np.asarray(wins, dtype=np.int64)
    n = w + np.asarray(losses, dtype=np.int64)
    upper = binom.sf(w - 1, n, 0.5)  # P(X >= w)
    lower = binom.cdf(w, n, 0.5)  # P(X <= w)
    if alternative == "greater":
        p = upper
    elif alternative == "less":
        p = lower
    else:
        p = np.minimum(1.0, 2.0 * np.minimum(upper, lower))
    p = np.where(n == 0, 1.0, p)
    return w.astype(np.float64), np.asarray(p, dtype=np.float64)


def smallest_p(nonzero: np.ndarray, alternative: Alternative = "two-sided") -> np.ndarray:
    """The smallest p-value the test can give with ``nonzero`` untied queries.

    Examples
    --------
    >>> smallest_p(np.array([4, 10])).tolist()
    [0.125, 0.001953125]
    """
    n = np.asarray(nonzero, dtype=np.int64)
    return np.minimum(1.0, np.ldexp(2.0 if alternative == "two-sided" else 1.0, -n))
