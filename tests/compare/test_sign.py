"""Sign test: exact binomial p-values against scipy, wins read from tie-merged differences."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasteval.compare import compare
from fasteval.compare.sign import sign_test, smallest_p
from fasteval.compare.ties import differences
from fasteval.errors import ParameterError
from tests._profile import examples

stats = pytest.importorskip("scipy.stats")


def _frame(scores: dict[str, np.ndarray]) -> pl.DataFrame:
    return pl.concat([
        pl.DataFrame({"run_id": name, "query_id": [f"q{i:03d}" for i in range(len(v))],
                      "measure": "P_10", "value": np.asarray(v, dtype=np.float64)})
        for name, v in scores.items()
    ])


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(0, 400), st.integers(0, 400),
       st.sampled_from(["two-sided", "greater", "less"]))
def test_p_value_equals_scipy_binomtest(wins, losses, alternative):
    s, p = sign_test(np.array([wins]), np.array([losses]), alternative)
    assert s[0] == wins
    if wins + losses == 0:
        assert p[0] == 1.0
        return
    want = stats.binomtest(wins, wins + losses, 0.5, alternative=alternative).pvalue
    assert p[0] == pytest.approx(want, rel=1e-10, abs=1e-300)


def test_hand_worked_values():
    # 9 wins, 1 loss: P(X >= 9) = (10 + 1) / 1024
    s, p = sign_test(np.array([9, 1, 5]), np.array([1, 9, 5]), "greater")
    assert p.tolist() == [11 / 1024, 1023 / 1024, 638 / 1024]
    assert sign_test(np.array([9]), np.array([1]))[1].tolist() == [22 / 1024]
    assert smallest_p(np.array([1, 3, 11])).tolist() == [1.0, 0.25, 2.0 ** -10]
    assert smallest_p(np.array([3]), "less").tolist() == [0.125]


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_compare_counts_wins_on_tie_merged_differences(alternative):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 11, 60) / 10
    b = np.clip(a + rng.integers(-2, 3, 60) / 10, 0, 1)
    a_noisy = a + 1e-15 * (rng.random(60) < 0.3)  # rounding noise: a tie, not a win
    cmp = compare(_frame({"a": a_noisy, "b": b}), tests=["sign"], correction="none",
                  alternative=alternative)
    row = cmp.tests.row(0, named=True)
    d = differences(a_noisy, b)
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    assert wins == int(((a - b) > 1e-9).sum()) and losses == int(((a - b) < -1e-9).sum())
    assert (row["test"], row["statistic"]) == ("sign", float(wins))
    want = stats.binomtest(wins, wins + losses, 0.5, alternative=alternative).pvalue
    assert row["p_value"] == pytest.approx(want, rel=1e-10)
    e = cmp.effects.row(0, named=True)
    assert (e["wins"], e["losses"]) == (wins, losses)


def test_identical_runs_and_few_queries():
    same = compare(_frame({"a": np.full(5, 0.5), "b": np.full(5, 0.5)}), tests=["sign"])
    r = same.tests.row(0, named=True)
    assert (r["statistic"], r["p_value"], r["note"]) == (0.0, 1.0, None)
    few = compare(_frame({"a": np.array([0.9, 0.8, 0.7, 0.5]), "b": np.array([0.1, 0.2, 0.3, 0.5])}),
                  tests=["sign"])
    r = few.tests.row(0, named=True)
    assert r["p_value"] == 0.25  # 3 wins of 3: the smallest p three queries allow
    assert "cannot reach p <= 0.05" in r["note"] and "smallest attainable p = 0.25" in r["note"]


def test_names_accepted_and_refused():
    frame = _frame({"a": np.array([0.9, 0.8, 0.7]), "b": np.array([0.1, 0.2, 0.3])})
    for name in ("sign", "Sign", "sign-test"):
        assert compare(frame, tests=[name]).tests["test"].to_list() == ["sign"]
    with pytest.raises(ParameterError, match="sign"):
        compare(frame, tests=["signs"])


def test_cli_sign_column(tmp_path, capsys):
    from fasteval.cli import main

    rng = np.random.default_rng(11)
    a = rng.uniform(size=40)
    frame = _frame({"x": a, "y": np.clip(a - 0.1, 0, 1)})
    path = tmp_path / "per_query.parquet"
    frame.write_parquet(path)
    assert main(["compare", "--results", str(path), "--test", "sign", "--baseline", "y"]) == 0
    out = capsys.readouterr().out
    assert "sign test" in out and "p(sign)" in out


def test_one_query_report_wording():
    frame = pl.DataFrame({"run_id": ["a", "b"], "query_id": ["q", "q"], "measure": "map",
                          "value": [0.5, 0.2]})
    cmp = compare(frame, tests=["sign"])
    assert cmp.tests["note"].to_list() == [
        "cannot reach p <= 0.05 with this query (smallest attainable p = 1)"]
    text = cmp.table("text")
    assert "1 query paired;" in text
    assert "1 comparison has too few queries for the test to reach p <= 0.05." in text
