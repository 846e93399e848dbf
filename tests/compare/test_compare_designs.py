"""compare() end to end: the issue's repros, degenerate inputs, new options and designs."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from fasteval.compare import compare
from fasteval.compare.ties import differences
from fasteval.errors import ParameterError

stats = pytest.importorskip("scipy.stats")

A = [0.1, 0.8, 0.8, 1, 0.9, 1, 0.8, 0.4, 0.8, 0.4, 0.6, 1, 0.2, 1, 0.9, 0.9, 0.8, 0.9, 0, 0.9]
B = [0.4, 0.6, 1, 0.7, 0.6, 0.7, 0.5, 0.8, 0.4, 0.6, 0.6, 0, 0.1, 0.8, 0.7, 0.5, 0.6, 0, 0.3, 0.6]


def runs(**scores) -> dict[str, pl.DataFrame]:
    return {
        k: pl.DataFrame({"query_id": list(range(len(v))), "P_10": np.asarray(v, dtype=float)})
        for k, v in scores.items()
    }


def row(cmp, test: str) -> dict:
    return cmp.tests.filter(pl.col("test") == test).row(0, named=True)


def test_wilcoxon_issue_repro():
    cmp = compare(runs(a=A, b=B), tests="wilcoxon", baseline="b")
    r = row(cmp, "wilcoxon")
    assert r["statistic"] == 47.0 and r["p_value"] == pytest.approx(0.0511201, abs=1e-7)
    assert not r["significant"]
    exact = row(compare(runs(a=A, b=B), tests="wilcoxon", exact=True), "wilcoxon")
    assert exact["p_value"] == pytest.approx(0.0511017, abs=1e-7)
    pratt = row(compare(runs(a=A, b=B), tests="wilcoxon", zero_method="pratt"), "wilcoxon")
    ref = stats.wilcoxon(differences(np.array(A), np.array(B)), zero_method="pratt")
    assert (pratt["statistic"], pratt["p_value"]) == (52.0, pytest.approx(ref.pvalue, abs=1e-15))
    cc = row(compare(runs(a=A, b=B), tests="wilcoxon", continuity=True), "wilcoxon")
    ref = stats.wilcoxon(differences(np.array(A), np.array(B)), correction=True)
    assert cc["p_value"] == pytest.approx(ref.pvalue, abs=1e-15)
    assert cmp.test_methods["wilcoxon"] == ("approx",)


def test_zero_variance_differences_are_undefined():
    cmp = compare(
        runs(a=[0.5, 0.6, 0.7, 0.8], b=[0.1, 0.2, 0.3, 0.4]),
        tests=["t", "wilcoxon", "randomization", "bootstrap"],
        n_resamples=2000,
    )
    t = row(cmp, "t")
    assert np.isnan(t["statistic"]) and np.isnan(t["p_value"]) and not t["significant"]
    assert t["note"].startswith("every query has the same difference (0.4)")
    e = cmp.effects.row(0, named=True)
    assert np.isnan(e["cohens_d"]) and np.isnan(e["hedges_g"])
    assert e["ci_low"] == pytest.approx(0.4) and e["ci_high"] == pytest.approx(0.4)
    assert (e["wins"], e["ties"], e["losses"]) == (4, 0, 0)
    # rank and sign-flip tests stay defined, and say that 4 queries cannot reach 0.05
    for test in ("wilcoxon", "randomization"):
        r = row(cmp, test)
        assert r["p_value"] == 0.125 and "cannot reach p <= 0.05" in r["note"]
    assert not cmp.tests["significant"].any()


def test_bootstrap_with_one_and_two_queries():
    one = row(compare(runs(a=[0.5], b=[0.2]), tests="bootstrap"), "bootstrap")
    assert np.isnan(one["p_value"]) and "1 paired query" in one["note"]
    assert not one["significant"]
    two = row(compare(runs(a=[0.5, 0.3], b=[0.2, 0.2]), tests="bootstrap"), "bootstrap")
    assert 0.5 <= two["p_value"] < 0.52
    assert "cannot reach p <= 0.05" in two["note"] and "smallest attainable p = 0.5" in two["note"]
    t = row(compare(runs(a=[0.5, 0.3], b=[0.2, 0.2]), tests="t"), "t")
    assert t["p_value"] == pytest.approx(stats.ttest_rel([0.5, 0.3], [0.2, 0.2]).pvalue)


def test_significant_is_p_at_most_alpha_like_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    # exact randomization, 5 queries all positive: p = 2 / 32 exactly
    cmp = compare(
        runs(a=[0.5, 0.6, 0.7, 0.8, 0.9], b=[0.25, 0.5, 0.5, 0.5, 0.75]),
        tests="randomization",
        alpha=0.0625,
        correction="none",
    )
    r = row(cmp, "randomization")
    assert r["p_value"] == 0.0625 and r["significant"]
    reject = multitest.multipletests([0.0625], alpha=0.0625, method="bonferroni")[0]
    assert bool(reject[0]) is True
    # and after a correction: the same decisions as statsmodels
    rng = np.random.default_rng(3)
    scores = {k: np.round(rng.uniform(size=30), 1) for k in "abcde"}
    scores["a"] = np.clip(scores["a"] + 0.2, 0, 1)
    for method, sm in (("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")):
        c = compare(runs(**scores), tests="t", correction=method, alpha=0.05)
        p = c.tests["p_value"].to_numpy()
        rej, adj, _, _ = multitest.multipletests(p, alpha=0.05, method=sm)
        np.testing.assert_allclose(c.tests["p_adjusted"].to_numpy(), adj, atol=1e-15)
        assert c.tests["significant"].to_list() == rej.tolist()


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_one_sided_alternatives(alternative):
    rng = np.random.default_rng(4)
    a = np.round(rng.uniform(size=25), 2)
    b = np.clip(a - 0.04 + np.round(rng.normal(0, 0.1, 25), 2), 0, 1)
    cmp = compare(
        runs(a=a, b=b),
        tests=["t", "wilcoxon", "randomization", "bootstrap"],
        alternative=alternative,
        n_resamples=4000,
    )
    assert row(cmp, "t")["p_value"] == pytest.approx(
        stats.ttest_rel(a, b, alternative=alternative).pvalue, rel=1e-12
    )
    assert row(cmp, "wilcoxon")["p_value"] == pytest.approx(
        stats.wilcoxon(differences(a, b), alternative=alternative).pvalue, rel=1e-12
    )
    two = compare(runs(a=a, b=b), tests=["randomization", "bootstrap"], n_resamples=4000)
    for test in ("randomization", "bootstrap"):
        if alternative == "greater":  # the observed direction: about half the two-sided p
            assert row(cmp, test)["p_value"] < row(two, test)["p_value"]
        else:
            assert row(cmp, test)["p_value"] > 0.5
    e = cmp.effects.row(0, named=True)
    assert (e["ci_high"] == np.inf) if alternative == "greater" else (e["ci_low"] == -np.inf)


def test_effect_sizes_and_system_intervals_in_tables():
    rng = np.random.default_rng(5)
    x = {k: np.round(rng.uniform(size=40), 2) for k in "abc"}
    cmp = compare(runs(**x), tests="t", baseline="a", n_resamples=2000, ci_method="bca")
    e = cmp.effects.filter(pl.col("run_id") == "b").row(0, named=True)
    d = x["b"] - x["a"]
    assert e["cohens_d"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    assert e["glass_delta"] == pytest.approx(d.mean() / x["a"].std(ddof=1), rel=1e-12)
    ve = cmp.anova.filter(pl.col("source") == "residual")["ms"][0]
    assert e["sakai_es"] == pytest.approx(d.mean() / np.sqrt(ve), rel=1e-12)
    m = cmp.means.filter(pl.col("run_id") == "c").row(0, named=True)
    assert m["ci_low"] < m["mean"] < m["ci_high"]
    assert cmp.ci_method == "bca"


def test_maxt_and_stepdown_through_compare():
    rng = np.random.default_rng(6)
    base = np.round(rng.uniform(size=14), 1)
    x = {
        "base": base,
        **{f"r{k}": np.clip(base + rng.normal(0.05 * k, 0.15, 14), 0, 1) for k in range(4)},
    }
    kw = {"baseline": "base", "tests": "randomization", "exact": True}
    raw = compare(runs(**x), correction="none", **kw).tests["p_value"].to_numpy()
    single = compare(runs(**x), correction="maxt", **kw).tests["p_adjusted"].to_numpy()
    step = compare(runs(**x), correction="stepdown", **kw).tests["p_adjusted"].to_numpy()
    assert np.all(raw <= step + 1e-15) and np.all(step <= single + 1e-15)
    assert step.min() < single.max()


def test_option_errors():
    r = runs(a=[0.1, 0.2, 0.3], b=[0.2, 0.2, 0.1])
    with pytest.raises(ParameterError, match="alternative must be 'two-sided', 'greater' or"):
        compare(r, alternative="up")
    with pytest.raises(ParameterError, match="when a Tukey HSD test is among the tests"):
        compare(r, tests=["t", "tukey"], alternative="greater")
    with pytest.raises(
        ParameterError, match="correction must be used with tests=\\['randomization'\\]"
    ):
        compare(r, tests=["t", "randomization"], correction="stepdown")
    with pytest.raises(ParameterError, match="ci_method must be"):
        compare(r, ci_method="normal")
    with pytest.raises(
        ParameterError, match="zero_method must be 'wilcox' or 'pratt', got 'zsplit'"
    ):
        compare(r, tests="wilcoxon", zero_method="zsplit")
    with pytest.raises(ParameterError, match="continuity must be True or False"):
        compare(r, continuity="yes")
    two = pl.concat(
        [
            pl.DataFrame(
                {"run_id": k, "query_id": [1, 2, 3], "measure": "map", "value": [0.1, 0.2, v]}
            )
            for k, v in (("a", 0.3), ("b", 0.4))
        ]
        + [
            pl.DataFrame({"run_id": k, "query_id": [1, 2], "measure": "P_5", "value": [0.1, v]})
            for k, v in (("a", 0.3), ("b", 0.4))
        ]
    )
    with pytest.raises(ParameterError, match="family must be 'measure' with correction='maxt'"):
        compare(two, tests="randomization", correction="maxt")
    assert (
        compare(two, tests="randomization", correction="maxt", family="measure").tests.height == 2
    )
