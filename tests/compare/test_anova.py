"""Topic-blocked ANOVA, Tukey HSD on its residual and Sakai's randomised Tukey HSD."""

from __future__ import annotations

import itertools

import numba
import numpy as np
import polars as pl
import pytest

from fasteval.compare.anova import randomized_tukey, residual_is_zero, tukey_blocked, two_way_anova

stats = pytest.importorskip("scipy.stats")


def _table(rng: np.random.Generator, S: int, n: int, effect: float = 0.0) -> np.ndarray:
    topic = rng.uniform(0.1, 0.7, n)  # a large topic effect, as in IR
    x = topic[None, :] + rng.normal(0, 0.08, (S, n))
    x[0] += effect
    return np.round(np.clip(x, 0, 1), 2)  # ties


def test_two_way_anova_equals_statsmodels():
    smf = pytest.importorskip("statsmodels.formula.api")
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(1)
    x = _table(rng, 4, 15, 0.05)
    ours = two_way_anova(x)
    S, n = x.shape
    df = pl.DataFrame(
        {
            "value": x.reshape(-1),
            "system": np.repeat(np.arange(S), n).astype(str),
            "topic": np.tile(np.arange(n), S).astype(str),
        }
    ).to_pandas()
    table = sm.stats.anova_lm(smf.ols("value ~ C(system) + C(topic)", df).fit(), typ=2)
    assert ours["ss_system"] == pytest.approx(table.loc["C(system)", "sum_sq"], rel=1e-10)
    assert ours["ss_topic"] == pytest.approx(table.loc["C(topic)", "sum_sq"], rel=1e-10)
    assert ours["ss_residual"] == pytest.approx(table.loc["Residual", "sum_sq"], rel=1e-10)
    assert ours["df_residual"] == table.loc["Residual", "df"] == (S - 1) * (n - 1)
    assert ours["f_system"] == pytest.approx(table.loc["C(system)", "F"], rel=1e-10)
    assert ours["p_system"] == pytest.approx(table.loc["C(system)", "PR(>F)"], rel=1e-9)
    assert ours["p_topic"] == pytest.approx(table.loc["C(topic)", "PR(>F)"], rel=1e-9)


def test_tukey_blocked_against_statsmodels_residual_and_paired_t():
    smf = pytest.importorskip("statsmodels.formula.api")
    rng = np.random.default_rng(2)
    x = _table(rng, 5, 12, 0.06)
    S, n = x.shape
    df = pl.DataFrame(
        {
            "value": x.reshape(-1),
            "system": np.repeat(np.arange(S), n).astype(str),
            "topic": np.tile(np.arange(n), S).astype(str),
        }
    ).to_pandas()
    fit = smf.ols("value ~ C(system) + C(topic)", df).fit()
    pi, pj = np.triu_indices(S, 1)
    q, p, ve = tukey_blocked(x, pi, pj)
    assert ve == pytest.approx(fit.mse_resid, rel=1e-10)
    means = x.mean(axis=1)
    ref_q = (means[pi] - means[pj]) / np.sqrt(fit.mse_resid / n)
    np.testing.assert_allclose(q, ref_q, rtol=1e-10)
    ref_p = stats.studentized_range.sf(np.abs(ref_q), S, fit.df_resid)
    np.testing.assert_allclose(p, ref_p, rtol=1e-8)
    # two systems: Tukey's q is sqrt(2) t and the p-values are the paired t-test's
    q2, p2, _ = tukey_blocked(x[:2], np.array([0]), np.array([1]))
    t = stats.ttest_rel(x[0], x[1])
    assert q2[0] == pytest.approx(np.sqrt(2) * t.statistic, rel=1e-10)
    assert p2[0] == pytest.approx(t.pvalue, rel=1e-6)


def test_tukey_blocked_zero_residual_is_undefined():
    x = np.array([[0.1, 0.2, 0.3], [0.5, 0.6, 0.7], [0.1, 0.2, 0.3]])  # additive exactly
    assert residual_is_zero(x)
    q, p, _ = tukey_blocked(x, np.array([0, 0]), np.array([1, 2]))
    assert np.isnan(q[0]) and np.isnan(p[0]) and q[1] == 0.0 and p[1] == 1.0


def test_randomized_tukey_against_full_enumeration():
    """3 systems x 3 topics: all (3!)**3 = 216 within-topic permutations equally likely."""
    x = np.array([[0.9, 0.7, 0.8], [0.3, 0.6, 0.2], [0.5, 0.4, 0.55]])
    pi, pj = np.array([0, 0, 1]), np.array([1, 2, 2])
    perms = list(itertools.permutations(range(3)))
    ranges = []
    for combo in itertools.product(perms, repeat=3):
        xs = np.stack([x[list(pm), t] for t, pm in enumerate(combo)], axis=1)
        mu = xs.mean(axis=1)
        ranges.append(mu.max() - mu.min())
    ranges = np.array(ranges)
    means = x.mean(axis=1)
    exact = [
        (ranges >= abs(means[i] - means[j]) - 1e-12).mean() for i, j in zip(pi, pj, strict=True)
    ]
    R = 40000
    diff, p = randomized_tukey(x, pi, pj, R, np.random.default_rng(3))
    np.testing.assert_allclose(diff, means[pi] - means[pj], rtol=1e-12)
    for got, ref in zip(p, exact, strict=True):
        assert abs(got - ref) <= 5 * np.sqrt(ref * (1 - ref) / R) + 1 / R


def test_randomized_tukey_two_systems_is_the_randomization_test():
    rng = np.random.default_rng(4)
    x = np.round(rng.uniform(size=(2, 10)), 1)
    d = x[0] - x[1]
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=10)))
    exact = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-9)
    R = 40000
    _, p = randomized_tukey(x, np.array([0]), np.array([1]), R, np.random.default_rng(5))
    assert abs(p[0] - exact) <= 5 * np.sqrt(exact * (1 - exact) / R) + 1 / R


def test_randomized_tukey_same_with_one_and_two_threads():
    x = _table(np.random.default_rng(6), 6, 200, 0.02)
    pi, pj = np.triu_indices(6, 1)
    previous = numba.get_num_threads()
    out = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            out.append(randomized_tukey(x, pi, pj, 3000, np.random.default_rng(7))[1])
    finally:
        numba.set_num_threads(previous)
    assert np.array_equal(out[0], out[1])


@pytest.mark.parametrize("n", [5, 10, 20, 50])
def test_familywise_error_under_the_null(n):
    """Five systems, no system effect, a large topic effect: the share of data sets with any
    pair rejected at 0.05 stays within three binomial standard errors of at most 0.05
    (the blocked HSD rejects when the largest |q| reaches the 0.95 studentized-range
    quantile, which is what its p-value <= 0.05 means)."""
    rng = np.random.default_rng(100 + n)
    reps = 300
    pi, pj = np.triu_indices(5, 1)
    crit = stats.studentized_range.ppf(0.95, 5, 4 * (n - 1))
    any_blocked = any_rand = 0
    for _ in range(reps):
        x = _table(rng, 5, n)
        a = two_way_anova(x)
        mu = x.mean(axis=1)
        any_blocked += (mu.max() - mu.min()) / np.sqrt(a["ms_residual"] / n) >= crit
        any_rand += randomized_tukey(x, pi, pj, 199, rng)[1].min() <= 0.05
    band = 3 * np.sqrt(0.05 * 0.95 / reps)
    assert any_blocked / reps <= 0.05 + band
    assert any_rand / reps <= 0.05 + band
    if n >= 10:
        assert any_blocked / reps >= 0.05 - band


def test_blocked_tukey_has_power_where_one_way_has_none():
    """Effect 0.08 on one of five systems, 30 topics: the topic-blocked HSD detects it most of
    the time, the one-way HSD (topic variance left in the error) almost never."""
    rng = np.random.default_rng(11)
    S, n, reps = 5, 30, 100
    crit_blocked = stats.studentized_range.ppf(0.95, S, (S - 1) * (n - 1))
    crit_oneway = stats.studentized_range.ppf(0.95, S, S * (n - 1))
    hits_blocked = hits_oneway = 0
    for _ in range(reps):
        x = _table(rng, S, n, 0.08)
        diff = abs(x[0].mean() - x[1].mean())
        hits_blocked += diff / np.sqrt(two_way_anova(x)["ms_residual"] / n) >= crit_blocked
        msw = x.var(axis=1, ddof=1).mean()
        hits_oneway += diff / np.sqrt(msw / n) >= crit_oneway
    assert hits_blocked >= 60 and hits_oneway <= 10


def test_tukey_blocked_p_values_are_scipys_per_pair():
    """One integration per distinct |q| serves every pair with that gap: each p-value is
    exactly scipy's studentized_range.sf of the pair's own q."""
    rng = np.random.default_rng(5)
    x = np.round(rng.random((7, 9)) * 4) / 4  # grid scores: many pairs share a mean gap
    x[3] = x[1]  # equal means: q = 0, p = 1
    pi, pj = np.triu_indices(7, 1)
    q, p, _ = tukey_blocked(x, pi, pj)
    assert np.unique(np.abs(q)).size < q.size
    ref = stats.studentized_range.sf(np.abs(q), 7, 6 * 8)
    same = q == 0
    assert same[(pi == 1) & (pj == 3)].all() and (p[same] == 1.0).all()
    np.testing.assert_array_equal(p[~same], np.minimum(1.0, ref[~same]))
