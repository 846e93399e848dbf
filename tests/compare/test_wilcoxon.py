"""Wilcoxon signed-rank test: tie-merged differences, pinned zero handling and null distribution."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fasteval.compare.ties import differences, snap, tolerance
from fasteval.compare.wilcoxon import (
    exact_distribution,
    signed_rank,
    signed_rank_batch,
    signed_rank_rows,
)
from fasteval.errors import ParameterError

stats = pytest.importorskip("scipy.stats")

A = np.array(
    [0.1, 0.8, 0.8, 1, 0.9, 1, 0.8, 0.4, 0.8, 0.4, 0.6, 1, 0.2, 1, 0.9, 0.9, 0.8, 0.9, 0, 0.9]
)
B = np.array(
    [0.4, 0.6, 1, 0.7, 0.6, 0.7, 0.5, 0.8, 0.4, 0.6, 0.6, 0, 0.1, 0.8, 0.7, 0.5, 0.6, 0, 0.3, 0.6]
)


def _enumerate(d: np.ndarray, zero_method: str, alternative: str) -> tuple[float, float]:
    """Oracle: W+ and its p-value over all 2**k sign patterns of the non-zero differences."""
    if zero_method == "wilcox":
        x = d[d != 0]
        r = stats.rankdata(np.abs(x))
    else:
        r = stats.rankdata(np.abs(d))[d != 0]
        x = d[d != 0]
    w = r[x > 0].sum()
    signs = np.array(list(itertools.product((0.0, 1.0), repeat=x.size)))
    W = signs @ r
    ge = np.mean(W >= w - 1e-9)
    le = np.mean(W <= w + 1e-9)
    p = {"greater": ge, "less": le, "two-sided": min(1.0, 2 * min(ge, le))}[alternative]
    return w, p


def _p_at_p10(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """P@10-like pairs: multiples of 0.1, many tied and zero differences."""
    a = rng.integers(0, 11, n) / 10
    b = np.clip(a + rng.integers(-3, 4, n) / 10, 0, 1)
    return a, b


def test_issue_repro_ties_merged_before_ranking():
    raw = stats.wilcoxon(A, B)  # a and b apart: 0.2 vs 0.19999999999999998 split the ties
    assert raw.statistic == 41.5 and round(raw.pvalue, 4) == 0.0305
    d = differences(A, B)
    w, p, how = signed_rank(d)
    assert (w, how) == (47.0, "approx")
    assert p == pytest.approx(0.05112009074976879, abs=1e-15)
    ref = stats.wilcoxon(np.round(A - B, 10))  # rounded by hand: the same test in scipy
    assert w == ref.statistic and abs(p - ref.pvalue) < 1e-15
    w_exact, p_exact, how = signed_rank(d, method="exact")
    assert how == "exact"
    _, p_enum = _enumerate(d, "wilcox", "two-sided")
    assert p_exact == pytest.approx(p_enum, abs=1e-14)
    assert round(p_exact, 7) == 0.0511017


@pytest.mark.parametrize("n", [8, 20, 35, 70])
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
def test_auto_equals_scipy_on_merged_differences(n, zero_method):
    """``method="auto"`` is scipy >= 1.15's rule; at 13 queries or fewer with ties scipy runs
    a permutation test over all 2**n sign patterns (slow there, so checked at n = 8)."""
    rng = np.random.default_rng(1000 + n)
    for rep in range(4):
        a, b = _p_at_p10(rng, n)
        if rep == 3:  # no ties, no zeros: the classical exact distribution
            a, b = rng.uniform(size=n), rng.uniform(size=n)
        d = differences(a, b)
        if not np.any(d):
            continue
        for alternative in ("two-sided", "greater", "less"):
            for correction in (False, True):
                if n <= 13 and rep < 3 and correction:
                    continue  # no normal approximation, nothing to correct
                w, p, _ = signed_rank(
                    d, zero_method=zero_method, correction=correction, alternative=alternative
                )
                ref = stats.wilcoxon(
                    d, zero_method=zero_method, correction=correction, alternative=alternative
                )
                assert w == pytest.approx(float(ref.statistic), abs=1e-9)
                assert p == pytest.approx(float(ref.pvalue), abs=1e-12), (alternative, correction)


@pytest.mark.parametrize("n", [4, 9, 14])
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_conditional_equals_full_enumeration(n, zero_method, alternative):
    rng = np.random.default_rng(n)
    a, b = _p_at_p10(rng, n)
    d = differences(a, b)
    d[0] = 0.0  # at least one zero
    if not np.any(d):
        d[1] = 0.1
    w_plus, p_ref = _enumerate(d, zero_method, alternative)
    w, p, how = signed_rank(d, zero_method=zero_method, method="exact", alternative=alternative)
    assert how == "exact"
    assert p == pytest.approx(p_ref, abs=1e-13)
    if alternative != "two-sided":
        assert w == w_plus


def test_exact_distribution_sums_to_one_and_is_symmetric():
    r2 = np.array([3, 3, 4, 8, 11, 11])  # doubled mid-ranks with ties
    dist = exact_distribution(r2)
    assert dist.sum() == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(dist, dist[::-1], atol=1e-16)
    assert dist[0] == 2.0**-6 and dist[-1] == 2.0**-6


def test_tie_rule_merges_rounding_noise_only():
    a = np.array([0.8, 0.3, 0.5, 0.7, 0.1 + 0.2, 0.4])
    b = np.array([0.6, 0.1, 0.7, 0.5, 0.3, 0.4 + 3e-13])
    d = differences(a, b)
    assert np.unique(np.abs(d[:4])).size == 1  # four 0.2 differences, all tied
    assert d[4] == 0.0  # 0.1 + 0.2 - 0.3: rounding noise is a zero
    assert d[5] == 0.0  # 3e-13 <= 1e-12 * 0.8
    # tolerance is relative to the largest score of the comparison
    assert tolerance(a, b) == pytest.approx(0.8e-12)


def test_tie_rule_threshold():
    a = np.array([0.8, 0.4, 0.4])
    b = np.array([0.6, 0.4 + 5e-13, 0.4 + 2e-12])
    d = snap(a - b, tolerance(a, b))
    assert d[1] == 0.0  # 5e-13 <= 8e-13
    assert d[2] != 0.0  # 2e-12 > 8e-13



def _snap_reference(d: np.ndarray, tol: float) -> np.ndarray:
    """The tie rule of fasteval.compare.ties, one difference at a time."""
    order = sorted(range(d.size), key=lambda k: abs(d[k]))
    out = np.empty(d.size)
    low = None
    prev = None
    for k in order:
        m = abs(d[k])
        if prev is None or m - prev > tol:
            low = m
        prev = m
        v = 0.0 if low <= tol else low
        out[k] = 0.0 if v == 0.0 else np.copysign(v, d[k])
    return out


def test_snap_table_equals_the_rule_row_by_row():
    rng = np.random.default_rng(11)
    a = np.round(rng.random((30, 17)) * 5) / 5 + rng.choice([0.0, 1e-16, -2e-16], (30, 17))
    b = np.round(rng.random((30, 17)) * 5) / 5
    b[0] = a[0]
    tol = tolerance(a, b)
    got = snap(a - b, tol)
    for k in range(a.shape[0]):
        want = _snap_reference(a[k] - b[k], tol[k])
        assert got[k].view(np.int64).tolist() == want.view(np.int64).tolist()
        assert snap(a[k] - b[k], tol[k]).view(np.int64).tolist() == want.view(np.int64).tolist()

def test_all_zero_and_rows():
    stat, p, how = signed_rank_rows(np.array([[0.0, 0.0], [0.1, 0.2]]))
    assert stat.tolist() == [0.0, 0.0] and p.tolist() == [1.0, 0.5] and how == ["none", "exact"]


@pytest.mark.parametrize("n", [5, 10, 20, 50])
def test_null_calibration(n):
    """Rejection rate at alpha = 0.05 under the null, P@10-like ties: at most alpha plus
    three binomial standard errors (the test is discrete, so conservative at small n)."""
    rng = np.random.default_rng(77 + n)
    reps = 800
    rejected = 0
    for _ in range(reps):
        a = rng.integers(0, 11, n) / 10
        b = rng.integers(0, 11, n) / 10  # same distribution: the null holds
        _, p, _ = signed_rank(differences(a, b))
        rejected += p <= 0.05
    rate = rejected / reps
    band = 3 * np.sqrt(0.05 * 0.95 / reps)
    assert rate <= 0.05 + band
    if n >= 20:
        assert rate >= 0.05 - band


def test_parameter_errors():
    d = np.array([0.1, 0.2])
    with pytest.raises(
        ParameterError, match="zero_method must be 'wilcox' or 'pratt', got 'zsplit'"
    ):
        signed_rank(d, zero_method="zsplit")
    with pytest.raises(ParameterError, match="method"):
        signed_rank(d, method="permutation")
    with pytest.raises(ParameterError, match="alternative"):
        signed_rank(d, alternative="bigger")


def test_exact_refused_when_too_large():
    d = np.arange(1, 1100, dtype=float)
    with pytest.raises(ParameterError, match="exact must be False or 'auto' for the Wilcoxon"):
        signed_rank(d, method="exact")
    assert signed_rank(d)[2] == "approx"


@pytest.mark.parametrize("n", [1, 6, 13, 14, 30, 51])
def test_batch_equals_signed_rank_bit_for_bit(n):
    """The whole-table path (ranks, sums and tails as arrays, one exact distribution per
    multiset of ranks) gives each row's signed_rank values exactly, and the floor is the
    p-value of the row's differences all moved to the extreme side."""
    rng = np.random.default_rng(n)
    d = np.round(rng.normal(0, 1, (12, n)) * 3) / 3  # ties and zeros
    d[0] = 0.0
    d[1] = d[1, 0]
    d[2, : n // 2] = 0.0
    d[3] = np.arange(1, n + 1) * rng.choice([-1.0, 1.0], n)  # no ties, no zeros
    d[4] = -d[3]
    if n > 1:
        d[5, 0] = np.nan  # a row with a NaN goes through signed_rank
    for zm, cont, method, alt in itertools.product(
        ("wilcox", "pratt"), (False, True), ("auto", "exact", "approx"),
        ("two-sided", "greater", "less"),
    ):
        rows = d if method == "approx" else d[np.isfinite(d).all(axis=1)]
        kw = dict(zero_method=zm, correction=cont, alternative=alt)
        with np.errstate(invalid="ignore"):
            stat, p, how, floor = signed_rank_batch(rows, method=method, **kw)
        for k, row in enumerate(rows):
            with np.errstate(invalid="ignore"):
                w1, p1, h1 = signed_rank(row, method=method, **kw)
            assert how[k] == h1
            np.testing.assert_array_equal(stat[k], w1)
            np.testing.assert_array_equal(p[k], p1)
            if h1 == "none":
                assert floor[k] == 1.0
                continue
            extreme = -np.abs(row) if alt == "less" else np.abs(row)
            with np.errstate(invalid="ignore"):
                f1 = signed_rank(extreme, method=h1, **kw)[1]
            np.testing.assert_array_equal(floor[k], f1)


def test_batch_refuses_exact_when_too_large_like_signed_rank():
    d = np.vstack([np.zeros(1100), np.arange(1.0, 1101.0)])
    with pytest.raises(ParameterError, match="more than 1000 non-zero differences .1100 here"):
        signed_rank_batch(d, method="exact")
