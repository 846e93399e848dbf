"""compare(): p-values against scipy and full enumeration, corrections, effects, determinism."""

from __future__ import annotations

import itertools

import numba
import numpy as np
import polars as pl
import pytest

from fasteval.compare import adjust_pvalues, compare
from fasteval.compare.kernels import bootstrap_counts, bootstrap_totals, signflip_null
from fasteval.compare.ties import differences
from fasteval.errors import FastevalError, InputError, ParameterError

stats = pytest.importorskip("scipy.stats")


def runs_frame(scores: dict[str, np.ndarray], measure: str = "map") -> pl.DataFrame:
    parts = [
        pl.DataFrame(
            {
                "run_id": name,
                "query_id": [f"q{i:04d}" for i in range(len(v))],
                "measure": measure,
                "value": np.asarray(v, dtype=np.float64),
            }
        )
        for name, v in scores.items()
    ]
    return pl.concat(parts)


def pvals(cmp, test: str, col: str = "p_value") -> dict[tuple[str, str, str], float]:
    t = cmp.tests.filter(pl.col("test") == test)
    return {(r["measure"], r["run_id"], r["versus"]): r[col] for r in t.iter_rows(named=True)}


@pytest.fixture(scope="module")
def three_runs():
    rng = np.random.default_rng(7)
    n = 80
    base = rng.uniform(size=n)
    a = base
    b = np.clip(base + rng.normal(0.03, 0.1, n), 0, 1)
    c = np.round(np.clip(base + rng.normal(-0.01, 0.1, n), 0, 1), 1)  # ties with a
    c[:5] = a[:5]  # some zero differences
    return {"a": a, "b": b, "c": c}


@pytest.mark.parametrize("n", [8, 80])
def test_t_and_wilcoxon_equal_scipy(n):
    rng = np.random.default_rng(n)
    a = rng.uniform(size=n)
    b = np.clip(a + rng.normal(0.05, 0.2, n), 0, 1)
    c = np.round(a + rng.normal(0, 0.2, n), 1)
    c[:2] = a[:2]
    cmp = compare(runs_frame({"a": a, "b": b, "c": c}), tests=["t", "wilcoxon"], correction="none")
    t = pvals(cmp, "t")
    w = pvals(cmp, "wilcoxon")
    tstat = pvals(cmp, "t", "statistic")
    arrays = {"a": a, "b": b, "c": c}
    assert len(t) == 3
    for (_, x, y), p in t.items():
        ref = stats.ttest_rel(arrays[x], arrays[y])
        assert abs(p - ref.pvalue) <= 1e-12
        assert abs(tstat[("map", x, y)] - ref.statistic) <= 1e-12 * max(1, abs(ref.statistic))
        # scipy on the tie-merged differences (a and b given apart split the ties)
        ref_w = stats.wilcoxon(differences(arrays[x], arrays[y])).pvalue
        assert abs(w[("map", x, y)] - ref_w) <= 1e-12


def _enumerate_p(d: np.ndarray) -> float:
    """Independent oracle: all 2**n sign vectors, dyadic inputs so sums are exact."""
    n = d.size
    obs = abs(d.sum())
    count = 0
    for signs in itertools.product((-1.0, 1.0), repeat=n):
        count += abs(np.dot(signs, d)) >= obs
    return count / 2**n


@pytest.mark.parametrize("n", [1, 3, 7, 12])
def test_randomization_exact_equals_full_enumeration(n):
    rng = np.random.default_rng(100 + n)
    # multiples of 1/16: every partial sum is exact, so ties are exact ties
    a = rng.integers(0, 17, n) / 16
    b = rng.integers(0, 17, n) / 16
    b[: n // 3] = a[: n // 3]
    cmp = compare(runs_frame({"a": a, "b": b}), tests="randomization", n_resamples=4096)
    p = pvals(cmp, "randomization")[("map", "a", "b")]
    assert p == _enumerate_p(a - b)


def test_randomization_exact_matches_scipy_exact():
    rng = np.random.default_rng(3)
    a = rng.uniform(size=10)
    b = rng.uniform(size=10)
    cmp = compare(runs_frame({"a": a, "b": b}), tests="randomization", n_resamples=2000)
    ref = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=np.inf,
    )
    assert abs(pvals(cmp, "randomization")[("map", "a", "b")] - ref.pvalue) <= 1e-12


@pytest.mark.parametrize("shift", [0.0, 0.04, 0.08])
def test_randomization_monte_carlo_agrees_with_scipy(shift):
    rng = np.random.default_rng(11)
    n, R = 40, 20000
    a = rng.uniform(size=n)
    b = np.clip(a - shift + rng.normal(0, 0.15, n), 0, 1)
    cmp = compare(runs_frame({"a": a, "b": b}), tests="randomization", n_resamples=R, seed=5)
    p = pvals(cmp, "randomization")[("map", "a", "b")]
    ref = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=R,
        random_state=1,
    ).pvalue
    # two independent Monte-Carlo estimates: 5 standard errors of their difference
    se = np.sqrt(2 * max(ref, 1 / R) * (1 - min(ref, 1 - 1 / R)) / R)
    assert abs(p - ref) <= 5 * se + 1e-4


def test_signflip_kernel_exact_counts_random_values():
    rng = np.random.default_rng(0)
    y = rng.normal(size=(4, 11))
    y[1, :4] = 0.0
    obs, ext, total = signflip_null(y, 0, None, exact=True)
    S = np.array(list(itertools.product((-1.0, 1.0), repeat=11)))
    T = S @ y.T
    ref = (np.abs(T) >= np.abs(y.sum(axis=1)) * (1 - 1e-9)).sum(axis=0)
    assert total == 2**11
    np.testing.assert_allclose(obs, y.sum(axis=1), rtol=1e-13)
    assert ext.tolist() == ref.tolist()


def test_bootstrap_counts_are_uniform_multinomial():
    n, R = 37, 4000
    keys = np.random.default_rng(1).bit_generator.random_raw(R).astype(np.uint64)
    tot = np.empty((R, n), dtype=np.float32)
    bootstrap_counts(keys, tot)
    assert np.all(tot.sum(axis=1) == n)  # n draws per resample
    assert np.all(tot == np.round(tot)) and tot.min() >= 0
    # each count is Binomial(n, 1/n): mean 1, variance (n-1)/n
    var = tot.var(axis=0).mean()
    assert abs(var - (n - 1) / n) < 0.05
    per_query = tot.mean(axis=0)
    assert np.all(np.abs(per_query - 1.0) < 5 * np.sqrt((n - 1) / n / R))
    # the totals are these counts times the series (same keys from the same generator)
    y = np.random.default_rng(2).uniform(size=(3, n))
    obs, totals = bootstrap_totals(y, R, np.random.default_rng(1))
    np.testing.assert_allclose(obs, y.sum(axis=1), rtol=1e-15)
    np.testing.assert_allclose(totals, tot.astype(np.float64) @ y.T, rtol=1e-6)


def test_bootstrap_pvalue_and_ci_agree_with_numpy_bootstrap():
    """Bootstrap-t p-value and percentile interval against an independent numpy bootstrap
    (other draws: agreement within Monte-Carlo error)."""
    rng = np.random.default_rng(2)
    n, R = 50, 20000
    a = rng.uniform(size=n)
    b = np.clip(a - 0.05 + rng.normal(0, 0.2, n), 0, 1)
    cmp = compare(
        runs_frame({"a": a, "b": b}),
        tests="bootstrap",
        n_resamples=R,
        ci=0.9,
        ci_method="percentile",
    )
    d = a - b
    idx = np.random.default_rng(9).integers(0, n, size=(R, n))
    means = d[idx].mean(axis=1)
    t_star = (means - d.mean()) / (d[idx].std(axis=1, ddof=1) / np.sqrt(n))
    t_obs = d.mean() / (d.std(ddof=1) / np.sqrt(n))
    ref_p = (1 + (np.abs(t_star) >= abs(t_obs)).sum()) / (R + 1)
    p = pvals(cmp, "bootstrap")[("map", "a", "b")]
    assert pvals(cmp, "bootstrap", "statistic")[("map", "a", "b")] == pytest.approx(t_obs)
    se = np.sqrt(2 * ref_p * (1 - ref_p) / R)
    assert abs(p - ref_p) <= 5 * se + 1e-4
    eff = cmp.effects.row(0, named=True)
    lo, hi = np.quantile(means, [0.05, 0.95])
    sd = d.std(ddof=1) / np.sqrt(n)
    assert abs(eff["ci_low"] - lo) < 0.1 * sd and abs(eff["ci_high"] - hi) < 0.1 * sd
    assert eff["ci_low"] < d.mean() < eff["ci_high"]


def test_tukey_is_topic_blocked(three_runs):
    """Tukey's HSD on the two-way ANOVA residual (statsmodels' residual mean square and the
    studentized range distribution), not scipy's one-way tukey_hsd."""
    smf = pytest.importorskip("statsmodels.formula.api")
    frame = runs_frame(three_runs)
    cmp = compare(frame, tests=["tukey", "randomized-tukey"], n_resamples=2000)
    fit = smf.ols("value ~ C(run_id) + C(query_id)", frame.to_pandas()).fit()
    n = len(three_runs["a"])
    means = {k: v.mean() for k, v in three_runs.items()}
    for (_, x, y), p in pvals(cmp, "tukey").items():
        q = (means[x] - means[y]) / np.sqrt(fit.mse_resid / n)
        assert pvals(cmp, "tukey", "statistic")[("map", x, y)] == pytest.approx(q, rel=1e-10)
        assert p == pytest.approx(stats.studentized_range.sf(abs(q), 3, fit.df_resid), rel=1e-8)
    assert set(pvals(cmp, "tukey", "p_adjusted").values()) == set(pvals(cmp, "tukey").values())
    rt = pvals(cmp, "randomized-tukey")
    assert rt == pvals(cmp, "randomized-tukey", "p_adjusted")  # family-wise already
    anova = cmp.anova.filter(pl.col("source") == "residual").row(0, named=True)
    assert anova["ms"] == pytest.approx(fit.mse_resid, rel=1e-10)


def test_adjusted_pvalues_hand_computed():
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.20])
    # sorted: 0.005, 0.01, 0.03, 0.04, 0.20 (m = 5)
    # Holm: 5*.005=.025, 4*.01=.04, 3*.03=.09, 2*.04=.08->.09, 1*.2=.2
    # BH:   .2*5/5=.2, .04*5/4=.05, .03*5/3=.05, .01*5/2=.025, .005*5/1=.025 (running min from top)
    np.testing.assert_allclose(
        adjust_pvalues(p, "holm"), [0.04, 0.09, 0.09, 0.025, 0.20], atol=1e-15
    )
    np.testing.assert_allclose(
        adjust_pvalues(p, "bonferroni"), [0.05, 0.2, 0.15, 0.025, 1.0], atol=1e-15
    )
    np.testing.assert_allclose(
        adjust_pvalues(p, "bh"), [0.025, 0.05, 0.05, 0.025, 0.20], atol=1e-15
    )
    np.testing.assert_allclose(adjust_pvalues(p, "none"), p)
    np.testing.assert_allclose(
        adjust_pvalues(p, "bh"), stats.false_discovery_control(p), atol=1e-15
    )
    with_nan = adjust_pvalues([0.01, np.nan, 0.02], "holm")
    assert np.isnan(with_nan[1]) and with_nan[[0, 2]].tolist() == [0.02, 0.02]
    with pytest.raises(ParameterError, match="correction must be one of holm, bonferroni, sidak"):
        adjust_pvalues(p, "hommel")


@pytest.mark.parametrize("method, sm", [
    ("holm", "holm"), ("bonferroni", "bonferroni"), ("sidak", "sidak"),
    ("holm-sidak", "holm-sidak"), ("hochberg", "simes-hochberg"), ("bh", "fdr_bh"),
    ("by", "fdr_by"), ("fdr_by", "fdr_by"), ("holm_sidak", "holm-sidak"),
])
def test_adjusted_pvalues_equal_statsmodels(method, sm):
    """Every correction against statsmodels' multipletests: random p-values, ties, tiny
    values (Sidak's 1 - (1 - p)**m without cancellation), one p-value, NaN left out."""
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(11)
    cases = [rng.uniform(0, 1, 17), np.round(rng.uniform(0, 0.2, 12), 2), np.full(6, 0.03),
             rng.uniform(0, 1e-14, 9), np.array([0.04]), np.array([0.0, 1.0, 0.5, 0.5])]
    for p in cases:
        np.testing.assert_allclose(adjust_pvalues(p, method),
                                   multitest.multipletests(p, method=sm)[1], rtol=1e-12, atol=0)
    p = np.array([0.01, np.nan, 0.04, 0.03, np.nan])
    out = adjust_pvalues(p, method)
    assert np.isnan(out[[1, 4]]).all()
    np.testing.assert_allclose(out[[0, 2, 3]], multitest.multipletests(p[[0, 2, 3]], method=sm)[1],
                               rtol=1e-12)


def test_compare_by_correction_per_measure_equals_statsmodels(three_runs):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    frame = pl.concat([runs_frame(three_runs, m).with_columns(pl.col("value") * f)
                       for m, f in (("map", 1.0), ("ndcg", 0.7))])
    cmp = compare(frame, tests="t", correction="by", family="measure", ci=None)
    for m in ("map", "ndcg"):
        rows = cmp.tests.filter(pl.col("measure") == m)
        np.testing.assert_allclose(
            rows["p_adjusted"].to_numpy(),
            multitest.multipletests(rows["p_value"].to_numpy(), method="fdr_by")[1], rtol=1e-12)
    assert "Benjamini-Yekutieli correction within each measure" in cmp.table("text")


@pytest.mark.parametrize("bad", [-0.5, 1.5, np.inf])
def test_adjusted_pvalues_refuse_values_outside_0_1(bad):
    # Holm gave -1.5 for -0.5 (and capped 1.5 at 1): garbage out, silently
    with pytest.raises(ParameterError, match=r"pvalues\[1\] must be a p-value from 0 to 1"):
        adjust_pvalues([0.2, bad, 0.01], "holm")
    with pytest.raises(ParameterError, match="pvalues must be an array of numbers"):
        adjust_pvalues(["x"], "bh")
    assert adjust_pvalues([0.0, 1.0, np.nan], "bonferroni")[:2].tolist() == [0.0, 1.0]


def test_correction_applied_across_report(three_runs):
    frame = pl.concat(
        [
            runs_frame(three_runs, "map"),
            runs_frame({k: v**2 for k, v in three_runs.items()}, "P_10"),
        ]
    )
    cmp = compare(frame, tests="t", correction="holm")
    t = cmp.tests
    assert t.height == 6  # 3 pairs x 2 measures
    np.testing.assert_allclose(
        t["p_adjusted"].to_numpy(), adjust_pvalues(t["p_value"].to_numpy(), "holm")
    )
    per_measure = compare(frame, tests="t", correction="bonferroni", family="measure").tests
    np.testing.assert_allclose(
        per_measure["p_adjusted"].to_numpy(), np.minimum(1, 3 * per_measure["p_value"].to_numpy())
    )


def test_identical_runs_give_p_one_and_zero_effect():
    rng = np.random.default_rng(4)
    a = rng.uniform(size=30)
    cmp = compare(
        runs_frame({"a": a, "b": a.copy()}),
        tests=["t", "wilcoxon", "randomization", "bootstrap"],
        n_resamples=500,
    )
    assert cmp.tests["p_value"].to_list() == [1.0] * 4
    assert cmp.tests["p_adjusted"].to_list() == [1.0] * 4
    e = cmp.effects.row(0, named=True)
    assert e["mean_diff"] == 0 and e["cohens_d"] == 0 and e["ci_low"] == 0 and e["ci_high"] == 0
    assert (e["wins"], e["ties"], e["losses"]) == (0, 30, 0)


def test_one_query_zero_difference_is_p_one_and_nonzero_is_undefined_with_a_note():
    every = ["t", "wilcoxon", "randomization", "bootstrap", "tukey", "randomized-tukey"]
    same = compare(runs_frame({"a": np.array([0.5]), "b": np.array([0.5]),
                               "c": np.array([0.2])}), tests=every, n_resamples=100)
    rows = {(r["run_id"], r["versus"], r["test"]): r for r in same.tests.iter_rows(named=True)}
    for t in every:  # a and b are equal: statistic 0, p 1 in every test, as for n >= 2
        r = rows[("a", "b", t)]
        assert (r["statistic"], r["p_value"], r["note"]) == (0.0, 1.0, None), t
    for t in ("t", "bootstrap", "tukey"):  # a vs c: no spread with one query
        r = rows[("a", "c", t)]
        assert np.isnan(r["statistic"]) and np.isnan(r["p_value"]), t
        assert r["note"].startswith("1 paired query: no "), t
    assert rows[("a", "c", "randomization")]["p_value"] == 1.0


def test_constant_shift_has_expected_sign():
    rng = np.random.default_rng(5)
    a = rng.uniform(0, 0.8, size=40)
    cmp = compare(
        runs_frame({"up": a + 0.125, "base": a}),
        baseline="base",
        tests=["t", "randomization", "bootstrap"],
        n_resamples=2000,
    )
    e = cmp.effects.row(0, named=True)
    assert e["run_id"] == "up" and e["versus"] == "base"
    assert e["mean_diff"] == pytest.approx(0.125)
    assert (e["wins"], e["ties"], e["losses"]) == (40, 0, 0)
    # every difference is 0.125 up to rounding: t and d_z would be ratios of rounding noise
    assert np.isnan(e["cohens_d"]) and np.isnan(e["hedges_g"])
    t = cmp.tests.filter(pl.col("test") == "t").row(0, named=True)
    assert np.isnan(t["statistic"]) and np.isnan(t["p_value"]) and not t["significant"]
    assert "zero variance" in t["note"]
    boot = cmp.tests.filter(pl.col("test") == "bootstrap").row(0, named=True)
    assert np.isnan(boot["p_value"]) and "zero variance" in boot["note"]
    assert pvals(cmp, "randomization")[("map", "up", "base")] == pytest.approx(1 / 2001)
    assert e["ci_low"] == pytest.approx(0.125) and e["ci_high"] == pytest.approx(0.125)
    rng2 = np.random.default_rng(6)
    noisy = a - 0.125 + rng2.normal(0, 0.01, 40)
    down = compare(runs_frame({"down": noisy, "base": a}), baseline="base", tests="t")
    assert down.effects["mean_diff"][0] < 0 and down.effects["cohens_d"][0] < 0
    assert pvals(down, "t", "statistic")[("map", "down", "base")] < 0


def test_same_pvalues_with_one_and_two_threads():
    rng = np.random.default_rng(6)
    scores = {k: rng.uniform(size=3000) for k in "abcd"}
    frame = pl.concat(
        [runs_frame(scores, "map"), runs_frame({k: v / 2 for k, v in scores.items()}, "P_5")]
    )
    previous = numba.get_num_threads()
    try:
        out = []
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            c = compare(frame, tests=["randomization", "bootstrap"], n_resamples=3000, seed=42)
            out.append(c.to_frame())
    finally:
        numba.set_num_threads(previous)
    assert out[0].equals(out[1])
    assert numba.get_num_threads() == previous


def test_seed_controls_resampling(three_runs):
    frame = runs_frame(three_runs)
    a = compare(frame, tests=["randomization", "bootstrap"], n_resamples=300, seed=1).to_frame()
    b = compare(frame, tests=["randomization", "bootstrap"], n_resamples=300, seed=1).to_frame()
    c = compare(frame, tests=["randomization", "bootstrap"], n_resamples=300, seed=2).to_frame()
    assert a.equals(b)
    assert not a.equals(c)


def test_row_order_does_not_matter(three_runs):
    frame = runs_frame(three_runs)
    # queries shuffled within each run (runs keep their order of appearance)
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=3).sort("run_id", maintain_order=True)
    assert not shuffled["query_id"].equals(frame["query_id"])
    kw = {"tests": ["t", "randomization", "bootstrap"], "n_resamples": 400}
    x = compare(frame, **kw).to_frame()
    y = compare(shuffled, **kw).to_frame()
    assert x.equals(y)


def test_missing_queries_drop_and_zero():
    a = {"q1": 0.5, "q2": 0.7, "q3": 0.9, "q4": 0.1}
    b = {"q1": 0.4, "q2": 0.6, "q4": 0.3}
    frame = pl.DataFrame(
        {
            "run_id": ["a"] * 4 + ["b"] * 3,
            "query_id": list(a) + list(b),
            "measure": ["map"] * 7,
            "value": list(a.values()) + list(b.values()),
        }
    )
    drop = compare(frame, tests="t")
    assert drop.means.select("run_id", "n_used", "n_present", "n_missing").rows() == [
        ("a", 3, 4, 0),
        ("b", 3, 3, 1),
    ]
    assert drop.effects["mean_diff"][0] == pytest.approx((0.1 + 0.1 - 0.2) / 3)
    zero = compare(frame, tests="t", missing="zero")
    assert zero.effects["n_queries"][0] == 4
    assert zero.effects["mean_diff"][0] == pytest.approx((0.1 + 0.1 + 0.9 - 0.2) / 4)
    assert "missing queries per run (dropped): a 0, b 1" in drop.table()
    assert "(scored 0)" in zero.table()


def test_input_forms_agree(tmp_path, three_runs):
    long = runs_frame(three_runs)
    wide = long.pivot(on="measure", index=["run_id", "query_id"], values="value")
    mapping = {k: wide.filter(pl.col("run_id") == k).drop("run_id") for k in three_runs}
    long.write_parquet(tmp_path / "all.parquet")
    files = []
    for k, df in mapping.items():
        df.write_csv(tmp_path / f"{k}.csv")
        files.append(tmp_path / f"{k}.csv")
    kw = {"tests": ["t", "randomization"], "n_resamples": 200}
    ref = compare(long, **kw).to_frame()
    for form in (wide, mapping, str(tmp_path / "all.parquet"), files, long.to_pandas()):
        assert compare(form, **kw).to_frame().equals(ref)


def test_module_is_callable(three_runs):
    import fasteval.compare as mod

    assert mod(runs_frame(three_runs), tests="t").tests.height == 3


def test_bad_input_raises():
    good = runs_frame({"a": [0.1, 0.2], "b": [0.2, 0.3]})
    with pytest.raises(ParameterError, match="tests"):
        compare(good, tests="anova")
    with pytest.raises(ParameterError, match="baseline"):
        compare(good, baseline="zzz")
    with pytest.raises(ParameterError, match="n_resamples"):
        compare(good, n_resamples=0)
    with pytest.raises(ParameterError, match="missing"):
        compare(good, missing="ignore")
    with pytest.raises(ParameterError, match="measures"):
        compare(good, measures=["ndcg_cut_10"])
    with pytest.raises(InputError, match="at least two runs"):
        compare(runs_frame({"a": [0.1, 0.2]}))
    dup = pl.concat([good, good.head(1)])
    with pytest.raises(InputError, match="2 rows for run 'a'"):
        compare(dup)
    nan = good.with_columns(
        pl.when(pl.col("query_id") == "q0001")
        .then(float("nan"))
        .otherwise(pl.col("value"))
        .alias("value")
    )
    with pytest.raises(InputError, match="NaN"):
        compare(nan)
    disjoint = pl.DataFrame(
        {"run_id": ["a", "b"], "query_id": ["1", "2"], "measure": ["map"] * 2, "value": [0.1, 0.2]}
    )
    with pytest.raises(InputError, match="no query has a value for every run"):
        compare(disjoint)
    # a run without any value of a measure did not compute it: not scored 0 on every query
    # (--missing zero made it a run of zeros, significantly worse than the other)
    other = pl.DataFrame({"run_id": ["a", "a", "b", "b"], "query_id": ["1", "2"] * 2,
                          "measure": ["map", "map", "ndcg", "ndcg"], "value": [0.1, 0.2] * 2})
    for missing in ("drop", "zero"):
        with pytest.raises(InputError, match=r"measure 'map': no values at all for run\(s\) "
                           r"\['b'\]; compare the measures every run has"):
            compare(other, tests="t", missing=missing)
    with pytest.raises(FastevalError):
        compare(pl.DataFrame({"query_id": ["1"], "map": [0.1]}))


def test_public_api_entry_points(three_runs):
    import fasteval

    frame = runs_frame(three_runs)
    a = fasteval.compare(frame, tests="t").to_frame()
    from fasteval import compare as from_package

    assert from_package(frame, tests="t").to_frame().equals(a)


def test_ci_none_skips_interval_and_tukey_identical():
    rng = np.random.default_rng(8)
    a = 0.5 + rng.normal(0, 0.01, size=12)
    b = a + 0.1 + rng.normal(0, 0.01, size=12)
    cmp = compare(runs_frame({"a": a, "b": b, "c": a.copy()}), tests=["t", "tukey"], ci=None)
    assert cmp.effects["ci_low"].null_count() == 3
    tk = pvals(cmp, "tukey")
    assert tk[("map", "a", "c")] == 1.0
    assert tk[("map", "a", "b")] < 0.05


def test_baseline_by_file_stem():
    rng = np.random.default_rng(9)
    a = rng.uniform(size=10)
    frame = runs_frame({"bm25.txt": a, "dense.txt": a + 0.05, "dense.run": a})
    cmp = compare(frame, baseline="bm25", tests="t")
    assert cmp.baseline == "bm25.txt"
    assert set(cmp.effects["versus"].to_list()) == {"bm25.txt"}
    with pytest.raises(ParameterError, match="baseline"):
        compare(frame, baseline="dense", tests="t")  # ambiguous stem


def test_too_few_resamples_to_reach_alpha_is_noted_for_every_sampled_test():
    # 10 resamples: p >= 1/11 whatever the data; every sampled test's note (randomization,
    # bootstrap, randomised HSD) names the resamples, not the 40 queries
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, 40)
    runs = {"a": pl.DataFrame({"query_id": range(40), "map": base + 0.3}),
            "b": pl.DataFrame({"query_id": range(40), "map": base + rng.normal(0, 0.05, 40)})}
    tests = ["randomization", "bootstrap", "randomized-tukey"]
    cmp = compare(runs, tests=tests, n_resamples=10, ci=None)
    assert cmp.tests["p_value"].to_list() == [1 / 11] * 3  # every resample less extreme
    assert cmp.tests["note"].to_list() == [
        "cannot reach p <= 0.05 with 10 resamples (smallest attainable p = 0.0909)"] * 3
    assert compare(runs, tests=tests, n_resamples=19, ci=None).tests["note"].to_list() == [None] * 3
    one = {k: v.head(1) for k, v in runs.items()}  # one query: p = 1 with any resamples
    notes = compare(one, tests=tests, n_resamples=1000, ci=None).tests["note"].to_list()
    assert notes[0] == notes[2] == ("cannot reach p <= 0.05 with this query (smallest "
                                    "attainable p = 1)")
