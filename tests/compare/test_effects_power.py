"""Effect sizes (hand-worked and scipy) and topic-set size design (statsmodels)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from fasteval.compare.anova import two_way_anova
from fasteval.compare.effects import effect_sizes, hedges_j
from fasteval.compare.power import pilot_variance, power, topic_set_size
from fasteval.errors import InputError, ParameterError

stats = pytest.importorskip("scipy.stats")


def test_effect_sizes_hand_worked():
    a = np.array([[0.5, 0.6, 0.9, 0.4, 0.7]])
    b = np.array([[0.4, 0.6, 0.5, 0.3, 0.5]])
    d = a - b  # 0.1, 0, 0.4, 0.1, 0.2: mean 0.16, sd 0.151658
    e = effect_sizes(a, b, d, residual_variance=0.01)
    sd_d = math.sqrt(((d - 0.16) ** 2).sum() / 4)
    assert e["cohens_d"][0] == pytest.approx(0.16 / sd_d, rel=1e-12)
    j = math.gamma(2) / (math.sqrt(2) * math.gamma(1.5))  # J(4)
    assert e["hedges_g"][0] == pytest.approx(0.16 / sd_d * j, rel=1e-12)
    assert e["glass_delta"][0] == pytest.approx(0.16 / b.std(ddof=1), rel=1e-12)
    assert e["sakai_es"][0] == pytest.approx(1.6, rel=1e-12)


def test_hedges_j_exact_and_approximation():
    for df in (2, 5, 10, 50, 200):
        approx = 1 - 3 / (4 * df - 1)
        assert abs(hedges_j(df) - approx) < 0.02 / df
    assert math.isnan(hedges_j(1))


def test_sakai_es_with_two_runs_is_sqrt2_dz():
    rng = np.random.default_rng(1)
    x = rng.uniform(size=(2, 25))
    ve = two_way_anova(x)["ms_residual"]
    d = x[:1] - x[1:]
    e = effect_sizes(x[:1], x[1:], d, ve)
    assert e["sakai_es"][0] == pytest.approx(math.sqrt(2) * e["cohens_d"][0], rel=1e-12)


def test_zero_variance_effects_are_undefined():
    a = np.array([[0.5, 0.6, 0.7, 0.8]])
    b = np.array([[0.1, 0.2, 0.3, 0.4]])
    d = np.full((1, 4), 0.4)  # tie-merged differences: all equal
    e = effect_sizes(a, b, d)
    assert math.isnan(e["cohens_d"][0]) and math.isnan(e["hedges_g"][0])
    assert e["glass_delta"][0] == pytest.approx(0.4 / b.std(ddof=1))
    same = effect_sizes(a, a, np.zeros((1, 4)))
    assert same["cohens_d"][0] == 0.0 and same["hedges_g"][0] == 0.0


def test_sakai_es_undefined_when_the_two_way_residual_is_rounding_noise():
    from fasteval.compare import compare

    # a constant shift: the residual is 0 in exact arithmetic, about 1e-33 in float64
    runs = {"a": pl.DataFrame({"query_id": [1, 2, 3, 4], "map": [0.3, 0.4, 0.5, 0.6]}),
            "b": pl.DataFrame({"query_id": [1, 2, 3, 4], "map": [0.1, 0.2, 0.3, 0.4]}),
            "c": pl.DataFrame({"query_id": [1, 2, 3, 4], "map": [0.2, 0.3, 0.4, 0.5]})}
    cmp = compare(runs, tests=["t"], ci=None)
    assert math.isnan(cmp.effects["sakai_es"][0])  # not a ratio of rounding noise (~1e15)
    assert cmp.effects["glass_delta"][0] == pytest.approx(0.2 / np.std([.1, .2, .3, .4], ddof=1))
    same = compare({"a": runs["a"], "b": runs["a"]}, tests=["t"], ci=None)
    assert same.effects["sakai_es"].to_list() == [0.0]
    # one run off the shift: a real residual, ES_E = mean difference / sqrt(V_E)
    runs["c"] = pl.DataFrame({"query_id": [1, 2, 3, 4], "map": [0.2, 0.3, 0.4, 0.7]})
    x = np.array([[0.3, 0.4, 0.5, 0.6], [0.1, 0.2, 0.3, 0.4], [0.2, 0.3, 0.4, 0.7]])
    resid = x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + x.mean()
    ve = (resid**2).sum() / (2 * 3)
    es = compare(runs, tests=["t"], ci=None).effects["sakai_es"].to_list()
    # pairs (a, b), (a, c), (b, c); means 0.45, 0.25, 0.4
    assert es == pytest.approx([0.2 / math.sqrt(ve), 0.05 / math.sqrt(ve),
                                -0.15 / math.sqrt(ve)], rel=1e-9)


def _t_power_by_integration(n: int, min_diff: float, sd: float, alpha: float) -> float:
    """Two-sided paired t power from the definition T = (Z + nc) / sqrt(V / df), V ~ chi2(df):
    the normal tails integrated over the chi-square density."""
    from scipy import integrate

    df = n - 1
    nc = math.sqrt(n) * min_diff / sd
    c = stats.t.ppf(1 - alpha / 2, df)

    def f(v):
        s = c * math.sqrt(v / df)
        return stats.chi2.pdf(v, df) * (stats.norm.sf(s - nc) + stats.norm.cdf(-s - nc))

    return integrate.quad(f, 0, np.inf, limit=200)[0]


@pytest.mark.parametrize(
    ("n", "min_diff", "sd", "alpha"),
    [(50, 0.2, 0.1, 0.05), (10, 0.3, 0.1, 0.05), (4, 0.2834, 0.0521, 0.05),
     (9, 0.1274, 0.0574, 0.01)],
)
def test_two_sided_t_power_finite_for_large_effects(n, min_diff, sd, alpha):
    # scipy's nct.cdf is NaN this far in the left tail; the power is a number near 1
    got = power(n, min_diff, sd, alpha=alpha)
    assert got == pytest.approx(_t_power_by_integration(n, min_diff, sd, alpha), abs=1e-9)


@pytest.mark.parametrize(
    ("min_diff", "sd", "alpha", "target", "expected"),
    [(0.28338560247587463, 0.05213695882770769, 0.05, 0.99, 4),  # n = 2 has power 0.45
     (0.12739730885619177, 0.05741768360916444, 0.01, 0.99, 9),
     (0.2699860029978068, 0.08412211686762543, 0.01, 0.8, 5)],
)
def test_topic_set_size_where_power_nears_one(min_diff, sd, alpha, target, expected):
    n = topic_set_size(min_diff, sd, alpha=alpha, power=target)
    assert n == expected
    assert _t_power_by_integration(n, min_diff, sd, alpha) >= target
    assert _t_power_by_integration(n - 1, min_diff, sd, alpha) < target


@pytest.mark.parametrize(
    ("min_diff", "sd", "alpha", "target", "alternative"),
    [
        (0.05, 0.15, 0.05, 0.8, "two-sided"),
        (0.1, 0.2, 0.05, 0.8, "two-sided"),
        (0.02, 0.1, 0.01, 0.9, "two-sided"),
        (0.05, 0.2, 0.05, 0.8, "greater"),
        (0.3, 0.2, 0.05, 0.8, "two-sided"),
    ],
)
def test_topic_set_size_equals_statsmodels(min_diff, sd, alpha, target, alternative):
    smp = pytest.importorskip("statsmodels.stats.power")
    es = min_diff / sd
    ref = smp.TTestPower().solve_power(
        effect_size=es,
        alpha=alpha,
        power=target,
        alternative="larger" if alternative == "greater" else "two-sided",
    )
    n = topic_set_size(min_diff, sd, alpha=alpha, power=target, alternative=alternative)
    assert n == max(2, math.ceil(ref - 1e-9))
    got = power(n, min_diff, sd, alpha=alpha, alternative=alternative)
    assert got == pytest.approx(
        smp.TTestPower().power(
            effect_size=es,
            nobs=n,
            alpha=alpha,
            alternative="larger" if alternative == "greater" else "two-sided",
        ),
        abs=1e-10,
    )
    assert got >= target and (
        n == 2 or power(n - 1, min_diff, sd, alpha=alpha, alternative=alternative) < target
    )


@pytest.mark.parametrize(("m", "n"), [(3, 20), (5, 50), (10, 30)])
def test_anova_power_equals_statsmodels_ftest(m, n):
    smp = pytest.importorskip("statsmodels.stats.power")
    min_diff, sd = 0.08, 0.1
    lam = n * min_diff**2 / (2 * sd**2)
    df1, df2 = m - 1, (m - 1) * (n - 1)
    f = math.sqrt(lam / (df1 + df2 + 1))
    # statsmodels' FTestPower takes the denominator df first (its documented quirk)
    ref = smp.FTestPower().power(effect_size=f, df_num=df2, df_denom=df1, alpha=0.05)
    assert power(n, min_diff, sd, design="anova", n_systems=m) == pytest.approx(ref, abs=1e-10)
    need = topic_set_size(min_diff, sd, design="anova", n_systems=m)
    assert power(need, min_diff, sd, design="anova", n_systems=m) >= 0.8
    assert power(need - 1, min_diff, sd, design="anova", n_systems=m) < 0.8


def test_pilot_variance_from_results():
    smf = pytest.importorskip("statsmodels.formula.api")
    rng = np.random.default_rng(3)
    topic = rng.uniform(0.2, 0.8, 30)
    runs = {
        f"r{k}": pl.DataFrame(
            {
                "query_id": list(range(30)),
                "ndcg_cut_10": np.clip(topic + rng.normal(0, 0.1, 30), 0, 1),
            }
        )
        for k in range(4)
    }
    out = pilot_variance(runs, "ndcg@10")
    row = out.row(0, named=True)
    long = pl.concat(
        [df.with_columns(pl.lit(k).alias("run")) for k, df in runs.items()]
    ).to_pandas()
    fit = smf.ols("ndcg_cut_10 ~ C(run) + C(query_id)", long).fit()
    assert row["residual_variance"] == pytest.approx(fit.mse_resid, rel=1e-10)
    assert row["sd_diff"] == pytest.approx(math.sqrt(2 * fit.mse_resid), rel=1e-10)
    assert (row["n_runs"], row["n_topics"]) == (4, 30)


def test_power_parameter_errors():
    with pytest.raises(ParameterError, match="min_diff must be a finite number > 0, got -0.1"):
        topic_set_size(-0.1, 0.2)
    with pytest.raises(ParameterError, match="sd must be"):
        power(10, 0.1, float("inf"))
    with pytest.raises(ParameterError, match="n_systems must be an integer from 2 to 10000"):
        power(10, 0.1, 0.2, design="anova")
    with pytest.raises(ParameterError, match="power must be a number between 0 and 1"):
        topic_set_size(0.1, 0.2, power=1.5)
    with pytest.raises(ParameterError, match="n_topics"):
        power(1, 0.1, 0.2)
    with pytest.raises(ParameterError, match="min_diff must be large enough"):
        topic_set_size(1e-6, 1.0, max_topics=1000)
    with pytest.raises(InputError, match="two pilot runs"):
        pilot_variance({"a": pl.DataFrame({"query_id": [1, 2], "map": [0.1, 0.2]})})


@pytest.mark.parametrize("sd", [1e-12, 2.3e-16])
def test_power_is_one_where_scipy_overflows(sd):
    """A tiny sd (a pilot of near-identical runs) puts the noncentrality past what scipy's
    nct/ncf evaluate (NaN there); the power is 1."""
    assert power(2, 0.05, sd) == 1.0
    assert power(2, 0.05, sd, alternative="greater") == 1.0
    assert power(2, 0.05, sd, design="anova", n_systems=3) == 1.0
    # ordinary values unchanged (statsmodels TTestPower, effect size 1, 5 topics)
    assert power(5, 0.05, 0.05) == pytest.approx(0.40138991737179536, rel=1e-9)


def test_max_topics_is_checked_as_itself():
    """max_topics=1 was reported as 'n_topics must be an integer >= 2, got 1'."""
    for bad in (1, 0, True, 2.5):
        with pytest.raises(ParameterError, match=f"max_topics must be an integer >= 2, got {bad}"):
            topic_set_size(0.1, 0.2, max_topics=bad)
    assert topic_set_size(0.1, 0.2, max_topics=34) == 34


def test_n_systems_refused_with_the_t_design():
    with pytest.raises(ParameterError, match="n_systems must be None for design='t'"):
        topic_set_size(0.05, 0.2, n_systems=3)
    assert topic_set_size(0.05, 0.2) == 128


def test_pilot_of_runs_shifted_by_a_constant_has_zero_variance(tmp_path, capsys):
    """Identical pilot runs (or runs shifted by one constant) have residuals of rounding
    noise: V_E is 0, and the command refuses them instead of printing power nan."""
    from fasteval.cli import main

    rng = np.random.default_rng(0)
    a = rng.uniform(size=20)
    runs = {"a": pl.DataFrame({"query_id": list(range(20)), "map": a}),
            "b": pl.DataFrame({"query_id": list(range(20)), "map": a}),
            "c": pl.DataFrame({"query_id": list(range(20)), "map": a + 0.1})}
    row = pilot_variance(runs).row(0, named=True)
    assert (row["residual_variance"], row["sd_diff"]) == (0.0, 0.0)
    path = tmp_path / "pilot.parquet"
    pl.concat([t.with_columns(run_id=pl.lit(k)) for k, t in runs.items()]).write_parquet(path)
    assert main(["power", "--results", str(path), "--min-diff", "0.05"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fasteval: error: results: measure 'map': the pilot runs have no "
                          "residual variance") and err.count("\n") == 1
    assert main(["power", "--sd", "0.2", "--min-diff", "0.05", "--systems", "3"]) == 2
    assert "--systems must be used with --design anova only, got 3" in capsys.readouterr().err
    assert main(["power", "--results", str(path), "--sd", "0.2", "--min-diff", "0.05"]) == 2
    assert "--results/--sd must be exactly one of them, got 'both'" in capsys.readouterr().err


def test_numpy_numbers_are_accepted_for_alpha_and_power():
    """alpha and power took Python int/float only: np.float32(0.05) was refused as 'alpha
    must be a number between 0 and 1' (min_diff and sd took numpy numbers already)."""
    assert topic_set_size(0.05, 0.15, alpha=np.float32(0.05), power=np.float32(0.8)) == 73
    assert power(73, 0.05, 0.15, alpha=np.float32(0.05)) == pytest.approx(0.8023, abs=1e-4)
    with pytest.raises(ParameterError, match="alpha must be a number between 0 and 1, got True"):
        topic_set_size(0.05, 0.15, alpha=True)
    with pytest.raises(ParameterError, match="power must be a number between 0 and 1, got '0.8'"):
        topic_set_size(0.05, 0.15, power="0.8")
