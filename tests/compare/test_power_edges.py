"""Topic-set size design at the edges of float64 and of scipy's distributions: tiny alpha,
topic counts past int64, effects that overflow; checked against statsmodels and the normal
and chi-square limits of t and F."""

from __future__ import annotations

import math

import pytest

from fasteval.cli import main
from fasteval.compare.power import MAX_SYSTEMS, power, topic_set_size
from fasteval.errors import ParameterError

stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize("alpha", [1e-17, 1e-20])
def test_one_sided_power_at_tiny_alpha_equals_statsmodels(alpha):
    # 1 - alpha rounds to 1 below about 1e-16: a critical value from ppf(1 - alpha) was
    # infinite and the power 0; statsmodels takes it from the upper tail (isf)
    smp = pytest.importorskip("statsmodels.stats.power")
    ref = smp.TTestPower().power(effect_size=2.0, nobs=30, alpha=alpha, alternative="larger")
    got = power(30, 0.2, 0.1, alpha=alpha, alternative="greater")
    assert ref > 0
    assert got == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("alpha", [1e-17, 1e-20])
def test_two_sided_power_at_tiny_alpha_is_both_one_sided_tails(alpha):
    smp = pytest.importorskip("statsmodels.stats.power")
    tt = smp.TTestPower()
    ref = (tt.power(effect_size=2.0, nobs=30, alpha=alpha / 2, alternative="larger")
           + tt.power(effect_size=-2.0, nobs=30, alpha=alpha / 2, alternative="larger"))
    assert power(30, 0.2, 0.1, alpha=alpha) == pytest.approx(ref, rel=1e-9)
    # the topic-set size follows it: never the ParameterError of a power stuck at 0
    n = topic_set_size(0.2, 0.1, alpha=alpha)
    assert power(n, 0.2, 0.1, alpha=alpha) >= 0.8 > power(n - 1, 0.2, 0.1, alpha=alpha)


def test_t_power_past_int64_topics_is_the_normal_limit():
    # n = 1e18 topics and a difference of 1e-9 sd: noncentrality exactly 1; with 1e18 - 1
    # degrees of freedom t is the standard normal to far below float64's resolution
    z = stats.norm.isf(0.025)
    ref = stats.norm.sf(z - 1.0) + stats.norm.sf(z + 1.0)
    assert power(10**18, 1e-9, 1.0) == pytest.approx(ref, rel=1e-9)
    assert power(2**70, 0.1, 1.0) == 1.0  # was a TypeError from scipy's int64 path
    assert power(10**30, 0.1, 1.0, design="anova", n_systems=3) == 1.0


@pytest.mark.parametrize("n", [10**12, 10**18, 10**20])
def test_anova_power_past_scipy_ncf_range_is_the_chi_square_limit(n):
    # scipy's noncentral F drifts past ~1e10 denominator df (0.84 for 0.0896 at 1e18,
    # 19.05 at 1e20); F * df1 tends to noncentral chi-square with df1 and lam
    m = 3
    lam = n * (1e-9) ** 2 / 2
    ref = stats.ncx2.sf(stats.chi2.isf(0.05, m - 1), m - 1, lam)
    got = power(n, 1e-9, 1.0, design="anova", n_systems=m)
    assert 0 <= got <= 1
    assert got == pytest.approx(ref, rel=1e-6)


def test_anova_power_is_continuous_where_it_switches_to_the_limit():
    # just below and above 1e9 denominator degrees of freedom (m = 11: df2 = 10 (n - 1))
    below = power(10**8, 3e-4, 1.0, design="anova", n_systems=11)
    above = power(10**8 + 2, 3e-4, 1.0, design="anova", n_systems=11)
    smp = pytest.importorskip("statsmodels.stats.power")
    n, m = 10**8, 11
    df1, df2 = m - 1, (m - 1) * (n - 1)
    lam = n * (3e-4) ** 2 / 2
    ref = smp.FTestPower().power(effect_size=math.sqrt(lam / (df1 + df2 + 1)), df_num=df2,
                                 df_denom=df1, alpha=0.05)
    assert below == pytest.approx(ref, abs=1e-8)
    assert above == pytest.approx(below, abs=1e-6)


def test_effects_that_overflow_float64_have_power_one():
    # min_diff**2 overflowed (OverflowError) and sd**2 underflowed to 0 (ZeroDivisionError)
    assert power(10, 1e200, 1.0, design="anova", n_systems=3) == 1.0
    assert power(10, 1.0, 1e-200, design="anova", n_systems=3) == 1.0
    assert power(10, 1.0, 5e-324) == 1.0
    assert topic_set_size(1e200, 1.0, design="anova", n_systems=3) == 2


def test_out_of_range_parameters_are_refused_naming_them():
    with pytest.raises(ParameterError, match=r"min_diff must be a finite number > 0, got 1000"):
        power(10, 10**400, 1.0)  # was an OverflowError from math.isfinite
    with pytest.raises(ParameterError, match=r"sd must be a finite number > 0"):
        power(10, 0.1, -(10**400))
    with pytest.raises(ParameterError, match=rf"n_systems must be an integer from 2 to {MAX_SYSTEMS}"):
        power(10, 0.1, 1.0, design="anova", n_systems=MAX_SYSTEMS + 1)
    with pytest.raises(ParameterError, match=r"alpha must be large enough for scipy .* got 1e-300"):
        power(10, 0.1, 1.0, alpha=1e-300)  # t's isf gives -inf there: power 2.0 came out
    assert 0 < power(10, 0.1, 1.0, design="anova", n_systems=MAX_SYSTEMS) < 1


def test_cli_power_refuses_too_many_systems(capsys):
    rc = main(["power", "--sd", "0.1", "--min-diff", "0.05", "--design", "anova",
               "--systems", str(10**30)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and "--systems must be an integer from 2 to 10000" in err


def test_cli_topics_past_int64_is_one_line(capsys):
    # the printed table holds topics as Int64: polars' ComputeError and a traceback before
    assert main(["power", "--sd", "0.1", "--min-diff", "0.05", "--topics", str(2**63)]) == 2
    err = capsys.readouterr().err
    assert err == f"fasteval: error: --topics must be an integer from 2 to {2**63 - 1}, got {2**63}\n"
    assert main(["power", "--sd", "0.1", "--min-diff", "0.05", "--topics", str(2**63 - 1),
                 "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == f"-,0.1,0.05,0.05,1.0,{2**63 - 1}"


def test_power_equals_statsmodels_on_a_random_grid():
    smp = pytest.importorskip("statsmodels.stats.power")
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(1)
    for _ in range(60):
        n = int(rng.integers(2, 2000))
        alpha = float(10 ** rng.uniform(-6, -0.3))
        d, sd = float(rng.uniform(0.001, 0.5)), float(rng.uniform(0.05, 1))
        alt = ("two-sided", "greater")[int(rng.integers(0, 2))]
        ref = smp.TTestPower().power(effect_size=d / sd, nobs=n, alpha=alpha,
                                     alternative="larger" if alt == "greater" else alt)
        if math.isnan(ref):  # statsmodels' two-sided lower tail (nct.cdf) is NaN far out
            ref = sum(smp.TTestPower().power(effect_size=e, nobs=n, alpha=alpha / 2,
                                             alternative="larger") for e in (d / sd, -d / sd))
        assert power(n, d, sd, alpha=alpha, alternative=alt) == pytest.approx(ref, abs=1e-12)
        m = int(rng.integers(2, 50))
        lam = n * d**2 / (2 * sd**2)
        df1, df2 = m - 1, (m - 1) * (n - 1)
        ref = smp.FTestPower().power(effect_size=math.sqrt(lam / (df1 + df2 + 1)), df_num=df2,
                                     df_denom=df1, alpha=alpha)
        got = power(n, d, sd, alpha=alpha, design="anova", n_systems=m)
        # statsmodels' ncf.sf is NaN for a large noncentrality, where the power is 1
        assert got == pytest.approx(ref, abs=1e-12) if not math.isnan(ref) else got > 1 - 1e-9


@pytest.mark.parametrize("alpha", [0.5, 0.7, 0.95])
def test_one_sided_alpha_past_one_half_equals_statsmodels(alpha):
    # the critical value is 0 or negative there: a valid (if odd) test, not an error
    smp = pytest.importorskip("statsmodels.stats.power")
    ref = smp.TTestPower().power(effect_size=0.3, nobs=12, alpha=alpha, alternative="larger")
    assert power(12, 0.03, 0.1, alpha=alpha, alternative="greater") == pytest.approx(ref, abs=1e-12)


def test_power_with_topics_is_refused(capsys) -> None:
    """--topics prints the power at N topics: a --power given with it is refused, not
    ignored."""
    assert main(["power", "--sd", "0.2", "--min-diff", "0.05", "--topics", "50", "--power", "0.9"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("fasteval: error: --power must be left out with --topics (which prints "
                           "the power at N topics), got 0.9")
    assert main(["power", "--sd", "0.2", "--min-diff", "0.05", "--topics", "50"]) == 0
    assert capsys.readouterr().out.split()[-2:] == [f"{power(50, 0.05, 0.2):.3f}", "50"]
    assert main(["power", "--sd", "0.2", "--min-diff", "0.05", "--power", "0.9"]) == 0
    assert capsys.readouterr().out.split()[-1] == str(topic_set_size(0.05, 0.2, power=0.9))
