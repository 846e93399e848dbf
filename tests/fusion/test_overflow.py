"""Fusion of finite scores near the float64 limit: the score normalisations give the values
of their formulas (ranx's min-max, sum and z-score give NaN or 0 there, from an
overflowing range, sum or square), and a fused score that is not a number is an error."""

from __future__ import annotations

import pytest

import fasteval
from fasteval.errors import InputError

SMALL = {"q1": {"d2": 1.0, "d3": 0.5}}


def _scores(run) -> dict[str, float]:
    return {d: s for _, d, s, _ in run.rows()}


def test_min_max_of_a_range_past_float64() -> None:
    # range 2e308 overflows: (1e308 - -1e308) / inf was NaN (ranx 0.3.21 gives NaN too)
    huge = {"q1": {"d1": 1e308, "d2": -1e308, "d4": 0.0}}
    got = _scores(fasteval.fuse([huge, SMALL], method="sum", norm="min-max"))
    assert got == {"d1": 1.0, "d2": 1.0, "d3": 0.0, "d4": 0.5}
    inv = _scores(fasteval.fuse([huge, SMALL], method="sum", norm="min-max-inverted"))
    assert inv == {"d1": 0.0, "d2": 1.0 + 0.0, "d3": 1.0, "d4": 0.5}


def test_sum_and_zmuv_past_float64() -> None:
    huge = {"q1": {"d1": 1e308, "d2": 1e308, "d4": -1e308}}
    # sum: (x - min) / (sum - min n) = 2e308 / 4e308 for d1 and d2 (was NaN)
    got = _scores(fasteval.fuse([huge, SMALL], method="max", norm="sum"))
    assert got == {"d1": 0.5, "d2": 1.0, "d3": 0.0, "d4": 0.0}
    # z-score: mean 1e308 / 3, sd 2e308 * sqrt(2) / 3 (the sum of the scores was inf)
    z = _scores(fasteval.fuse([huge, SMALL], method="max", norm="zmuv"))
    assert z["d1"] == pytest.approx(2 ** -0.5, rel=1e-12)
    assert z["d2"] == pytest.approx(1.0, rel=1e-12)
    assert z["d4"] == pytest.approx(-(2 ** 0.5), rel=1e-12)
    # all equal: standard deviation 0, every score 0 (was NaN)
    same = _scores(fasteval.fuse([{"q1": {"d1": 1e308, "d2": 1e308}}, SMALL], method="sum",
                                 norm="zmuv"))
    assert same == {"d1": 0.0, "d2": 1.0, "d3": -1.0}


def test_squares_past_float64_in_zmuv() -> None:
    # scores of 1e160: the squared deviations overflow (sd was inf, every score 0)
    got = _scores(fasteval.fuse([{"q1": {"a": 1e160, "b": -1e160}}, {"q1": {"c": 1.0}}],
                                method="sum", norm="zmuv"))
    assert got == {"a": 1.0, "b": -1.0, "c": 0.0}


def test_scaled_runs_fuse_alike() -> None:
    """min-max, sum and z-score do not change when a run's scores are scaled by 1e300."""
    a = {"q1": {"d1": 3.0, "d2": -1.5, "d3": 0.25, "d4": 2.0}}
    big = {"q1": {d: s * 1e300 for d, s in a["q1"].items()}}
    b = {"q1": {"d2": 0.9, "d5": 0.1, "d1": 0.3}}
    for norm in ("min-max", "sum", "zmuv", "min-max-inverted"):
        one = fasteval.fuse([a, b], method="mnz", norm=norm)
        two = fasteval.fuse([big, b], method="mnz", norm=norm)
        assert one.select("doc_id", "rank").equals(two.select("doc_id", "rank")), norm
        assert two["score"].to_list() == pytest.approx(one["score"].to_list(), rel=1e-13), norm


def test_fused_score_that_is_not_a_number_is_an_error() -> None:
    with pytest.raises(InputError, match=r"'d1' for query 'q1' is not a number.*'wsum'"):
        fasteval.fuse([{"q1": {"d1": 1e308, "d2": 1.0}}, {"q1": {"d1": -1e308}}], method="wsum",
                      norm=None, weights=[2.0, 2.0])


@pytest.mark.parametrize(("kwargs", "runs", "value"), [
    # 1e308 + 1e308 (ranx: inf)
    ({"method": "sum", "norm": None}, [{"q1": {"d1": 1e308}}, {"q1": {"d1": 1e308}}], "inf"),
    ({"method": "wsum", "norm": "min-max", "weights": [1e308, 1e308]},
     [{"q1": {"d1": 1.0, "d2": 0.0}}, {"q1": {"d1": 1.0, "d3": 0.0}}], "inf"),
    # 2 * 2 ** 2000 (ranx with gamma=2000.0: inf)
    ({"method": "gmnz", "norm": "min-max", "gamma": 2000},
     [{"q1": {"d1": 1.0, "d2": 0.0}}, {"q1": {"d1": 1.0, "d3": 0.0}}], "inf"),
    # max normalisation of a run whose scores are all negative: x / 1e-9 (ranx: -inf)
    ({"method": "sum", "norm": "max"}, [{"q1": {"d1": -1e300, "d2": -1.0}}, SMALL], "-inf"),
])
def test_fused_score_past_float64_is_an_error(kwargs, runs, value) -> None:
    """A fused score past the float64 range was returned as +/-inf (ranx's value), a number
    no formula gives for finite scores; it is an error naming the document and query."""
    with pytest.raises(InputError, match=rf"'d1' for query 'q1' overflows float64 \({value}\)"
                       rf".*by '{kwargs['method']}'"):
        fasteval.fuse(runs, **kwargs)


def test_fused_score_past_float64_agrees_with_ranx_overflowing() -> None:
    """The refused cases are those where ranx's own value overflows (inf)."""
    ranx = pytest.importorskip("ranx")
    runs = [{"q1": {"d1": 1e308, "d2": 0.5}}, {"q1": {"d1": 1e308, "d4": 0.1}}]
    for method, params in (("sum", None), ("mnz", None)):
        ref = ranx.fuse([ranx.Run(r) for r in runs], norm=None, method=method,
                        params=params).to_dict()
        assert ref["q1"]["d1"] == float("inf")
        with pytest.raises(InputError, match="overflows float64"):
            fasteval.fuse(runs, method=method, norm=None)
    gm = ranx.fuse([ranx.Run(r) for r in runs], method="gmnz", params={"gamma": 2000.0})
    assert gm.to_dict()["q1"]["d1"] == float("inf")
    # just below the limit the values are ranx's
    ok = [{"q1": {"d1": 8e307, "d2": 0.5}}, {"q1": {"d1": 8e307, "d4": 0.1}}]
    got = _scores(fasteval.fuse(ok, method="sum", norm=None))
    ref = ranx.fuse([ranx.Run(r) for r in ok], norm=None, method="sum").to_dict()["q1"]
    assert got == ref


@pytest.mark.parametrize(("method", "expected"), [("anz", 1.25e308), ("med", 1.25e308)])
def test_mean_and_median_past_an_overflowing_sum_are_exact(method, expected) -> None:
    """CombANZ's mean and an even count's median are in range when their sum is not
    (1e308 + 1.5e308): the value is the mean / midpoint itself (ranx's sum-first formula
    gives inf), not an error."""
    runs = [{"q1": {"d1": 1e308, "d2": 0.5}}, {"q1": {"d1": 1.5e308, "d2": 0.25}}]
    got = _scores(fasteval.fuse(runs, method=method, norm=None))
    assert got["d1"] == expected
    assert got["d2"] == 0.375  # in range: the usual formula
    three = [*runs, {"q1": {"d1": 1e308}}]
    assert _scores(fasteval.fuse(three, method="anz", norm=None))["d1"] == pytest.approx(
        1e308 / 3 + 1.5e308 / 3 + 1e308 / 3, rel=1e-15)
