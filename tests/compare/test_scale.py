"""compare() on scores near the ends of double precision: the statistics of a table equal
those of the same table scaled to magnitudes near 1 (t, F and effect sizes do not depend on
the unit), and values in the scores' units come back in those units."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from fasteval.compare import compare
from fasteval.compare.anova import two_way_anova

stats = pytest.importorskip("scipy.stats")

TESTS = ["t", "wilcoxon", "sign", "randomization", "bootstrap", "tukey", "randomized-tukey"]
A = np.array([1.0, 2.0, 3.0, 5.0, 4.5, 2.5])
B = np.array([1.0, 1.0, 1.0, 1.0, 2.0, 3.0])


def runs(unit: float) -> dict[str, pl.DataFrame]:
    return {
        "a": pl.DataFrame({"query_id": np.arange(A.size), "m": A * unit}),
        "b": pl.DataFrame({"query_id": np.arange(B.size), "m": B * unit}),
    }


@pytest.mark.parametrize("unit", [2.0**1000, 2.0**-1000])
def test_statistics_do_not_depend_on_the_unit(unit: float) -> None:
    ref = compare(runs(1.0), baseline="b", tests=TESTS, n_resamples=999)
    got = compare(runs(unit), baseline="b", tests=TESTS, n_resamples=999)
    # the oracle: scipy's paired t-test on the table in units near 1
    t = stats.ttest_rel(A, B)
    row = got.tests.filter(pl.col("test") == "t").row(0, named=True)
    assert row["statistic"] == pytest.approx(t.statistic, rel=1e-12)
    assert row["p_value"] == pytest.approx(t.pvalue, rel=1e-12)
    assert row["note"] is None
    # every test: the same p-values; statistics in the scores' units scaled by the unit
    for r0, r1 in zip(ref.tests.iter_rows(named=True), got.tests.iter_rows(named=True),
                      strict=True):
        assert r1["p_value"] == r0["p_value"], r0["test"]
        in_units = r0["test"] in ("randomization", "randomized-tukey")
        assert r1["statistic"] == r0["statistic"] * (unit if in_units else 1.0), r0["test"]
    for col in ("cohens_d", "hedges_g", "glass_delta", "sakai_es"):
        assert got.effects[col][0] == ref.effects[col][0]
    for col in ("mean_diff", "ci_low", "ci_high"):
        assert got.effects[col][0] == ref.effects[col][0] * unit
    for col in ("mean", "ci_low", "ci_high"):
        assert got.means[col].to_list() == [v * unit for v in ref.means[col].to_list()]
    anova, anova_ref = got.anova, ref.anova
    assert anova["f"].to_list()[:2] == anova_ref["f"].to_list()[:2]
    assert anova["p_value"].to_list()[:2] == anova_ref["p_value"].to_list()[:2]


def test_two_way_anova_of_tiny_scores() -> None:
    x = np.array([[1e-300, 2e-300, 3e-300, 4e-300], [0.0, 0.0, 1e-300, 1e-300]])
    got = two_way_anova(x)
    ref = two_way_anova(x * 1e300)
    assert got["f_system"] == pytest.approx(ref["f_system"], rel=1e-12)
    assert got["p_system"] == pytest.approx(ref["p_system"], rel=1e-12)
    assert got["ss_residual"] == 0.0  # 1e-600 is below double precision

