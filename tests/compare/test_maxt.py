"""Randomization test: one-sided p-values and permutation max-T / Westfall-Young step-down."""

from __future__ import annotations

import itertools

import numba
import numpy as np
import pytest

from fasteval.compare.kernels import signflip_null
from fasteval.compare.randomization import signflip_test


def _oracle(y: np.ndarray):
    """All 2**n sign vectors: raw p (two-sided, greater), single-step and step-down max-T."""
    n = y.shape[1]
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=n)))
    T = signs @ y.T
    obs = y.sum(axis=1)
    q = (y * y).sum(axis=1)
    with np.errstate(all="ignore"):
        t = T * np.sqrt(n - 1) / np.sqrt(n * q - T**2)
        t_obs = obs * np.sqrt(n - 1) / np.sqrt(n * q - obs**2)
    raw = (np.abs(T) >= np.abs(obs) - 1e-9).mean(axis=0)
    greater = (T >= obs - 1e-9).mean(axis=0)
    mx = np.abs(t).max(axis=1)
    single = np.array([(mx >= abs(v) * (1 - 1e-9)).mean() for v in t_obs])
    order = np.argsort(-np.abs(t_obs))
    step = []
    for k in range(order.size):
        u = np.abs(t[:, order[k:]]).max(axis=1)
        step.append((u >= abs(t_obs[order[k]]) * (1 - 1e-9)).mean())
    step = np.maximum.accumulate(step)
    stepdown = np.empty_like(step)
    stepdown[order] = step
    return raw, greater, single, stepdown


def _data(seed: int, rows: int = 5, n: int = 11) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = np.round(rng.normal(0.02, 0.2, (rows, n)), 2)  # ties
    y[1] = y[0] + 0.01 * rng.normal(size=n)  # correlated comparisons
    y[2, :3] = 0.0
    return y


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_exact_enumeration_equals_oracle(seed):
    y = _data(seed)
    raw, greater, single, stepdown = _oracle(y)
    fam = [np.arange(y.shape[0])]
    _, p, adj_single = signflip_test(y, 0, None, exact=True, families=fam, correction="maxt")
    _, _, adj_step = signflip_test(y, 0, None, exact=True, families=fam, correction="stepdown")
    _, p_up, _ = signflip_test(y, 0, None, exact=True, alternative="greater")
    np.testing.assert_allclose(p, raw, atol=1e-15)
    np.testing.assert_allclose(p_up, greater, atol=1e-15)
    np.testing.assert_allclose(adj_single, single, atol=1e-15)
    np.testing.assert_allclose(adj_step, stepdown, atol=1e-15)
    assert np.all(adj_step <= adj_single + 1e-15) and np.all(adj_step >= p - 1e-15)


def test_two_sided_sampled_p_values_unchanged_from_kernel_driver():
    y = _data(4, rows=3, n=40)
    _, ext, total = signflip_null(y, 5000, np.random.default_rng(9), exact=False)
    _, p, _ = signflip_test(y, 5000, np.random.default_rng(9), exact=False)
    np.testing.assert_array_equal(p, (ext + 1.0) / (total + 1.0))


def test_sampled_maxt_close_to_exact():
    y = _data(5, rows=4, n=14)
    fam = [np.arange(4)]
    _, _, exact = signflip_test(y, 0, None, exact=True, families=fam, correction="stepdown")
    R = 30000
    _, _, sampled = signflip_test(
        y, R, np.random.default_rng(1), exact=False, families=fam, correction="stepdown"
    )
    se = np.sqrt(np.maximum(exact * (1 - exact), 1 / R) / R)
    assert np.all(np.abs(sampled - exact) <= 5 * se + 2 / R)


def test_familywise_error_under_the_null():
    """Four comparisons against one baseline on 12 queries, no effect: the share of data sets
    with any step-down-adjusted p <= 0.05 is at most 0.05 plus three standard errors."""
    rng = np.random.default_rng(12)
    reps, n = 300, 12
    hits = 0
    for _ in range(reps):
        base = rng.integers(0, 11, n) / 10
        runs = rng.integers(0, 11, (4, n)) / 10
        y = runs - base
        _, _, adj = signflip_test(
            y, 199, rng, exact=False, families=[np.arange(4)], correction="stepdown"
        )
        hits += adj.min() <= 0.05
    assert hits / reps <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps)


def test_same_with_one_and_two_threads():
    y = np.random.default_rng(3).normal(size=(20, 500))
    fam = [np.arange(10), np.arange(10, 20)]
    previous = numba.get_num_threads()
    out = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            _, p, adj = signflip_test(
                y, 3000, np.random.default_rng(4), exact=False, families=fam, correction="maxt"
            )
            out.append(np.concatenate([p, adj]))
    finally:
        numba.set_num_threads(previous)
    assert np.array_equal(out[0], out[1])


@pytest.mark.parametrize("n", [5, 10, 20, 50])
def test_null_calibration_randomization_and_t(n):
    """1,000 null data sets with P@10-like ties: rejection rates at 0.05 within three
    binomial standard errors (at most, where the discrete test is conservative: with 5
    queries its smallest p-value is 2/32, at 10 tied differences make its null lumpy)."""
    from scipy import stats

    rng = np.random.default_rng(500 + n)
    reps = 1000
    y = (rng.integers(0, 11, (reps, n)) - rng.integers(0, 11, (reps, n))) / 10
    band = 3 * np.sqrt(0.05 * 0.95 / reps)
    _, p, _ = signflip_test(y, 999, rng, exact=2**n <= 999)
    rate = float(np.mean(p <= 0.05))
    assert rate <= 0.05 + band
    if n >= 20:  # below that the lumpy null distribution of tied data keeps it conservative
        assert rate >= 0.05 - band
    with np.errstate(all="ignore"):
        pt = stats.ttest_1samp(y, 0.0, axis=1).pvalue
    ok = ~np.isnan(pt)
    rate_t = float(np.mean(pt[ok] <= 0.05))
    assert abs(rate_t - 0.05) <= band


def _integer_maxt(units: np.ndarray, alternative: str) -> tuple[np.ndarray, np.ndarray]:
    """Single-step and step-down max-T of integer differences, in exact integer arithmetic.

    ``t`` is a monotone function of ``T / sqrt(n q - T**2)``; comparing two such values
    across comparisons is done on ``sign(T) T**2 / (n q - T**2)`` as a fraction (infinite
    when the denominator is 0).
    """
    from fractions import Fraction

    n = units.shape[1]
    signs = np.array(list(itertools.product((-1, 1), repeat=n)), dtype=np.int64)
    T = signs @ units.T
    obs = units.sum(axis=1)
    q = (units * units).sum(axis=1)

    def key(total: int, qq: int) -> Fraction | float:
        den = n * qq - total * total
        if total == 0:
            return Fraction(0)
        if den == 0:
            return float("inf") if total > 0 else float("-inf")
        v = Fraction(total * total, den)
        return v if total > 0 else -v

    def orient(v):
        return abs(v) if alternative == "two-sided" else (v if alternative == "greater" else -v)

    t_obs = [orient(key(int(obs[c]), int(q[c]))) for c in range(units.shape[0])]
    t_star = [[orient(key(int(T[r, c]), int(q[c]))) for c in range(units.shape[0])]
              for r in range(T.shape[0])]
    rows = units.shape[0]
    single = np.array([np.mean([max(row) >= t_obs[c] for row in t_star]) for c in range(rows)])
    order = sorted(range(rows), key=lambda c: t_obs[c], reverse=True)
    step = []
    for k in range(rows):
        rest = order[k:]
        step.append(np.mean([max(row[c] for c in rest) >= t_obs[order[k]] for row in t_star]))
    step = np.maximum.accumulate(step)
    stepdown = np.empty(rows)
    stepdown[order] = step
    return single, stepdown


@pytest.mark.parametrize("alternative", ["greater", "two-sided", "less"])
def test_maxt_comparison_with_zero_sum_equals_integer_oracle(alternative):
    # the first comparison's differences sum to 0, which float64 gives as 5.6e-17: its t
    # is 0 (tied with every zero sum of the flips), not a tiny positive number
    units = np.array([[1, 2, -3, 0, 1, -1], [2, -1, 1, 3, -2, 1], [1, 1, 1, -2, 0, 1]])
    y = units / 10
    assert y[0].sum() != 0.0
    single, stepdown = _integer_maxt(units, alternative)
    fam = [np.arange(3)]
    _, p, adj_single = signflip_test(y, 0, None, exact=True, alternative=alternative,
                                     families=fam, correction="maxt")
    _, _, adj_step = signflip_test(y, 0, None, exact=True, alternative=alternative,
                                   families=fam, correction="stepdown")
    np.testing.assert_allclose(adj_single, np.maximum(single, p), atol=1e-15)
    np.testing.assert_allclose(adj_step, np.maximum(stepdown, p), atol=1e-15)
    if alternative == "greater":  # the zero-sum comparison: every flip reaches t* >= 0
        assert adj_single.tolist() == [1.0, 38 / 64, 47 / 64]
