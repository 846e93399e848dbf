"""Bootstrap-t test and intervals against a float64 numpy reference on the same resamples."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from fasteval.compare.bootstrap import check_ci_method, min_pvalue, paired_bootstrap
from fasteval.compare.kernels import bootstrap_counts
from fasteval.compare.ties import differences
from fasteval.errors import ParameterError

stats = pytest.importorskip("scipy.stats")


def _keys(R: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).bit_generator.random_raw(R).astype(np.uint64)


def _counts(keys: np.ndarray, n: int) -> np.ndarray:
    c = np.empty((keys.size, n), dtype=np.float32)
    bootstrap_counts(keys, c)
    return c.astype(np.float64)


def _reference(v: np.ndarray, counts: np.ndarray, level: float, method: str):
    """Textbook bootstrap-t / percentile / BCa in float64 from explicit resample counts."""
    R, n = counts.shape
    m, s = v.mean(), v.std(ddof=1)
    se = s / np.sqrt(n)
    ms = counts @ v / n
    var = (counts * (v[None, :] - ms[:, None]) ** 2).sum(axis=1) / (n - 1)
    with np.errstate(all="ignore"):
        ts = (ms - m) / np.sqrt(var / n)
    flat = var <= 1e-20
    ts[flat] = np.where(np.abs(ms[flat] - m) < 1e-12, 0.0, np.sign(ms[flat] - m) * np.inf)
    a = (1 - level) / 2
    if method == "t":
        hi_q, lo_q = np.quantile(ts, [1 - a, a])
        lo, hi = m - hi_q * se, m - lo_q * se
    elif method == "percentile":
        lo, hi = np.quantile(ms, [a, 1 - a])
    else:
        below = (ms < m - 1e-12).sum() + 0.5 * (np.abs(ms - m) <= 1e-12).sum()
        z0 = stats.norm.ppf(below / R)
        e = v - m
        acc = (e**3).sum() / (6 * (e**2).sum() ** 1.5)
        z = stats.norm.ppf([a, 1 - a])
        lo, hi = np.quantile(ms, stats.norm.cdf(z0 + (z0 + z) / (1 - acc * (z0 + z))))
    p = (1 + (np.abs(ts) >= abs(m / se) * (1 - 1e-9)).sum()) / (R + 1)
    return lo, hi, p, m / se


@pytest.mark.parametrize("method", ["t", "percentile", "bca"])
@pytest.mark.parametrize("n", [7, 25, 120])
def test_equals_float64_reference_on_same_resamples(method, n):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 11, n) / 10  # P@10-like: ties in scores and differences
    b = np.clip(a + rng.integers(-4, 4, n) / 10, 0, 1)
    R = 3000
    keys = _keys(R, n)
    counts = _counts(keys, n)
    d = a - b
    res = paired_bootstrap(
        d[None], differences(a, b)[None], np.stack([a, b]), keys, level=0.9, ci_method=method
    )
    lo, hi, p, t = _reference(d, counts, 0.9, method)
    assert res.statistic[0] == pytest.approx(stats.ttest_rel(a, b).statistic, rel=1e-12)
    assert res.statistic[0] == pytest.approx(t, rel=1e-12)
    assert abs(res.p_value[0] - max(p, res.min_p[0])) <= 2 / (R + 1)
    assert res.ci_low[0] == pytest.approx(lo, abs=1e-12)
    assert res.ci_high[0] == pytest.approx(hi, abs=1e-12)
    for k, v in enumerate((a, b)):  # per-run intervals of the mean
        lo, hi, _, _ = _reference(v, counts, 0.9, method)
        assert res.mean_low[k] == pytest.approx(lo, abs=1e-12)
        assert res.mean_high[k] == pytest.approx(hi, abs=1e-12)


def test_bca_agrees_with_scipy_bootstrap():
    rng = np.random.default_rng(5)
    d = np.round(rng.gamma(1.0, 0.1, 40) - 0.05, 2)  # skewed, ties
    R = 20000
    res = paired_bootstrap(d[None], d[None], np.empty((0, 40)), _keys(R), ci_method="bca")
    ref = stats.bootstrap((d,), np.mean, n_resamples=R, method="BCa", random_state=3)
    se = d.std(ddof=1) / np.sqrt(d.size)
    assert abs(res.ci_low[0] - ref.confidence_interval.low) < 0.1 * se
    assert abs(res.ci_high[0] - ref.confidence_interval.high) < 0.1 * se


def test_exact_bounds_are_not_rounding_noise():
    # resamples that draw only the zero differences have mean exactly 0
    d = np.array([[0.0, 0.0, 0.3]])
    res = paired_bootstrap(d, d, np.array([[0.1, 0.1, 0.1]]), _keys(4000), ci_method="percentile")
    assert res.ci_low[0] == 0.0 and res.ci_high[0] == pytest.approx(0.3, abs=1e-16)
    mean = np.mean([0.1, 0.1, 0.1])  # a constant run: [mean, mean], the table's mean
    assert res.mean_low[0] == mean and res.mean_high[0] == mean


def test_small_samples_cannot_claim_significance():
    keys = _keys(10000)
    one = paired_bootstrap(np.array([[0.3]]), np.array([[0.3]]), np.empty((0, 1)), keys)
    assert np.isnan(one.statistic[0]) and np.isnan(one.p_value[0])
    two = paired_bootstrap(np.array([[0.3, 0.1]]), np.array([[0.3, 0.1]]), np.empty((0, 2)), keys)
    assert two.min_p[0] == 0.5 and 0.5 <= two.p_value[0] < 0.52
    d3 = np.array([[0.3, 0.1, 0.25]])
    three = paired_bootstrap(d3, d3, np.empty((0, 3)), keys)
    assert three.min_p[0] == pytest.approx(3 / 27) and three.p_value[0] >= 3 / 27
    assert min_pvalue(np.array([0.3, 0.1, 0.25]), "greater") == pytest.approx(2 / 27)


def test_zero_variance_is_undefined_and_identical_is_one():
    keys = _keys(500)
    d = np.array([[0.4, 0.4, 0.4, 0.4], [0.0, 0.0, 0.0, 0.0]])
    res = paired_bootstrap(d, d, np.empty((0, 4)), keys)
    assert np.isnan(res.statistic[0]) and np.isnan(res.p_value[0])
    assert res.statistic[1] == 0.0 and res.p_value[1] == 1.0
    assert res.ci_low.tolist() == [0.4, 0.0] and res.ci_high.tolist() == [0.4, 0.0]


@pytest.mark.parametrize("n", [5, 10, 20, 50])
def test_null_calibration_and_coverage(n):
    """1,000 null data sets (P@10-like differences of two runs from one distribution) share
    999 resamples: rejection rate at 0.05 within three binomial standard errors (at most, at
    n = 5, where the test is conservative), bootstrap-t coverage of the true mean 0 likewise."""
    rng = np.random.default_rng(40 + n)
    reps = 1000
    a = rng.integers(0, 11, (reps, n)) / 10
    b = rng.integers(0, 11, (reps, n)) / 10
    d = differences(a, b)
    res = paired_bootstrap(a - b, d, np.empty((0, n)), _keys(999, n), level=0.95)
    ok = ~np.isnan(res.p_value)
    rate = float(np.mean(res.p_value[ok] <= 0.05))
    band = 3 * np.sqrt(0.05 * 0.95 / reps)
    assert rate <= 0.05 + band
    if n >= 10:
        assert rate >= 0.05 - band
    cover = float(np.mean((res.ci_low[ok] <= 0) & (0 <= res.ci_high[ok])))
    assert abs(cover - 0.95) <= band or (n == 5 and cover >= 0.95 - 2 * band)


def test_one_sided():
    rng = np.random.default_rng(8)
    d = rng.normal(0.05, 0.2, 30)
    keys = _keys(4000)
    two = paired_bootstrap(d[None], d[None], np.empty((0, 30)), keys)
    up = paired_bootstrap(d[None], d[None], np.empty((0, 30)), keys, alternative="greater")
    down = paired_bootstrap(d[None], d[None], np.empty((0, 30)), keys, alternative="less")
    assert up.p_value[0] < two.p_value[0] < down.p_value[0]
    assert up.ci_high[0] == np.inf and down.ci_low[0] == -np.inf
    assert up.ci_low[0] > two.ci_low[0] and down.ci_high[0] < two.ci_high[0]


def test_same_result_with_one_and_two_threads():
    rng = np.random.default_rng(9)
    d = rng.normal(0, 1, (6, 300))
    previous = numba.get_num_threads()
    out = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            r = paired_bootstrap(d, d, d[:2], _keys(2000), ci_method="bca")
            out.append(np.concatenate([r.p_value, r.ci_low, r.ci_high, r.mean_low]))
    finally:
        numba.set_num_threads(previous)
    assert np.array_equal(out[0], out[1])


def test_ci_method_names():
    assert check_ci_method("studentized") == "t"
    with pytest.raises(ParameterError, match="ci_method must be"):
        check_ci_method("abc")


@pytest.mark.parametrize("method", ["t", "bca"])
def test_differences_from_score_sums_equal_direct(method):
    """With ``pairs`` the differences' resampled sums come from the runs' sums: the same
    test and intervals as resampling the differences themselves (up to the single-precision
    products, far below Monte-Carlo error)."""
    rng = np.random.default_rng(10)
    x = np.round(rng.uniform(size=(4, 60)), 2)
    a, b = np.array([0, 1, 2, 0]), np.array([3, 3, 3, 1])
    d = x[a] - x[b]
    ds = differences(x[a], x[b])
    keys = _keys(3000)
    direct = paired_bootstrap(d, ds, x, keys, ci_method=method)
    derived = paired_bootstrap(d, ds, x, keys, ci_method=method, pairs=(a, b))
    assert np.abs(direct.p_value - derived.p_value).max() <= 2 / 3001
    np.testing.assert_allclose(derived.ci_low, direct.ci_low, atol=1e-12)
    np.testing.assert_allclose(derived.ci_high, direct.ci_high, atol=1e-12)
    np.testing.assert_allclose(derived.mean_low, direct.mean_low, atol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy's NaN interval
def test_bca_with_every_resample_on_one_side_is_a_parameter_error():
    """One resample (or a few on one side of the mean) leave BCa's z0 infinite, where
    scipy.stats.bootstrap returns NaN with a warning: here it is an error on n_resamples."""
    d = np.array([[0.3, -0.1, 0.25, 0.05, 0.4]])
    keys = _keys(1)
    counts = _counts(keys, 5)
    assert counts @ d[0] / 5 != d[0].mean()  # the single resample is on one side
    with pytest.warns(stats.DegenerateDataWarning):  # scipy's answer: NaN
        ref = stats.bootstrap((d[0],), np.mean, n_resamples=1, method="BCa", random_state=0)
    assert np.isnan(ref.confidence_interval.low)
    with pytest.raises(ParameterError, match=r"^n_resamples must be enough resamples for a "
                                             r"BCa interval.*got 1$"):
        paired_bootstrap(d, d, np.empty((0, 5)), keys, ci_method="bca")
    # t and percentile intervals of one resample stay what they are: that resample
    for method in ("t", "percentile"):
        r = paired_bootstrap(d, d, np.empty((0, 5)), keys, ci_method=method)
        assert r.ci_low[0] == pytest.approx(r.ci_high[0])


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95, 0.99])
def test_compare_asks_for_a_resample_beyond_each_tail(level, alternative):
    """compare() refuses fewer resamples than (R + 1) * tail >= 1 (Davison and Hinkley)
    whenever it computes intervals, and gives finite BCa bounds from that count on."""
    import polars as pl

    from fasteval.compare import compare
    from fasteval.compare.core import min_resamples

    tail = (1 - level) / (2 if alternative == "two-sided" else 1)
    least = next(R for R in range(1, 10_000) if (R + 1) * tail >= 1 - 1e-12)
    assert min_resamples(level, alternative) == least
    least = max(least, 39)  # BCa: a bias correction from resamples on both sides
    assert min_resamples(level, alternative, "bca") == least
    rng = np.random.default_rng(7)
    runs = {k: pl.DataFrame({"query_id": range(25), "map": rng.uniform(0, 1, 25)})
            for k in ("a", "b")}
    kw = {"tests": "t", "ci": level, "alternative": alternative, "ci_method": "bca"}
    if least > 1:
        with pytest.raises(ParameterError, match=rf"^n_resamples must be at least {least} for "
                                                 rf"{level:g} .*got {least - 1}$"):
            compare(runs, n_resamples=least - 1, **kw)
    cmp = compare(runs, n_resamples=least, **kw)
    lo, hi = cmp.effects.row(0, named=True)["ci_low"], cmp.effects.row(0, named=True)["ci_high"]
    assert lo == lo and hi == hi and lo <= hi
    assert compare(runs, n_resamples=1, tests="t", ci=None).effects["ci_low"].is_null().all()


def test_bootstrap_t_interval_is_infinite_with_three_queries_only():
    """Resamples without spread (one repeated value) are 3/27 of the resamples of three
    queries, more than the 2.5% tail, so the bootstrap-t bounds are infinite; four queries
    (4/256) give finite ones, and BCa and percentile intervals are always finite."""
    import polars as pl

    from fasteval.compare import compare

    for n, infinite in ((3, True), (4, False)):
        r = {"a": pl.DataFrame({"query_id": range(n), "m": [0.1, 0.5, 0.2, 0.9][:n]}),
             "b": pl.DataFrame({"query_id": range(n), "m": [0.3, 0.2, 0.6, 0.4][:n]})}
        for method in ("t", "bca", "percentile"):
            low, high = compare(r, baseline="b", tests="t", ci_method=method).effects.select(
                "ci_low", "ci_high").row(0)
            assert (low == -np.inf and high == np.inf) is (infinite and method == "t"), method
            assert low < high
