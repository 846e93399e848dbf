"""Aggregates from exact sums (``fasteval/measures/aggregate.py``, ``measures/_sums.py``):
the total of a :class:`PartialSum` is the correctly rounded exact sum, whatever the order of
the values and however they were split, checked against :func:`math.fsum` and exact
rational arithmetic (:class:`fractions.Fraction`)."""

from __future__ import annotations

import math
import pickle
import struct
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasteval.batch.driver import aggregate_wide
from fasteval.measures import _sums
from fasteval.measures.aggregate import (
    MIN_GEO_MEAN,
    PartialSum,
    aggregate_long,
    finish,
    partial,
    summary,
    table_partials,
)
from tests._profile import examples

SPECIAL = [1e300, -1e300, 1e-300, -1e-300, 0.1, -0.1, 1.0, 1e16, -1e16, 2.0**-1074,
           -(2.0**-1074), 1.7976931348623157e308, -1.7976931348623157e308, 2.0**969, 0.0]
"""Values that stress an exact sum: cancellation, subnormals, the largest doubles."""

finite = st.one_of(
    st.sampled_from(SPECIAL),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1.0, max_value=1.0),
    st.builds(lambda m, e: math.ldexp(m, e), st.floats(-1.0, 1.0), st.integers(-1074, 1023)),
)
arrays = st.lists(finite, max_size=60)


def exact(values) -> float:
    """The exact sum rounded to the nearest double (half to even), ±inf past the largest:
    :func:`math.fsum`, or rational arithmetic where fsum overflows on the way."""
    try:
        return math.fsum(values)
    except OverflowError:
        total = sum((Fraction(v) for v in values), Fraction(0))
        try:
            return float(total)
        except OverflowError:
            return math.inf if total > 0 else -math.inf


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


@settings(max_examples=examples(400), deadline=None)
@given(arrays)
def test_total_is_the_correctly_rounded_exact_sum(values):
    assert bits(PartialSum.of(np.array(values, dtype=float)).total()) == bits(exact(values))


@settings(max_examples=examples(300), deadline=None)
@given(arrays, st.lists(st.integers(0, 60), max_size=6), st.randoms(use_true_random=False))
def test_split_merged_and_permuted_give_the_same_bits(values, cuts, rnd):
    whole = PartialSum.of(np.array(values, dtype=float)).total()
    bounds = sorted({min(c, len(values)) for c in cuts} | {0, len(values)})
    parts = [PartialSum.of(np.array(values[a:b], dtype=float)) for a, b in zip(bounds, bounds[1:], strict=False)]
    rnd.shuffle(parts)
    assert bits(PartialSum.merge_all(parts).total()) == bits(whole)
    folded = PartialSum()  # merged two at a time, as a driver receiving parts one by one
    for p in parts:
        folded = folded.merge(p)
    assert bits(folded.total()) == bits(whole)
    assert folded.count == len(values)
    shuffled = list(values)
    rnd.shuffle(shuffled)
    assert bits(PartialSum.of(np.array(shuffled, dtype=float)).total()) == bits(whole)


@settings(max_examples=examples(200), deadline=None)
@given(arrays, st.lists(st.sampled_from([math.nan, -math.nan, math.inf, -math.inf]), max_size=3),
       st.randoms(use_true_random=False))
def test_nan_and_infinities_are_counted_apart(values, special, rnd):
    """A nan gives nan, negative (trec_eval's ``-nan``) where any nan is; both infinities
    give ``inf + -inf`` as the machine computes it; one infinity gives it, in any order."""
    mixed = values + special
    rnd.shuffle(mixed)
    p = PartialSum.of(np.array(mixed, dtype=float))
    nans = [v for v in special if math.isnan(v)]
    negative = [v for v in nans if math.copysign(1.0, v) < 0]
    assert (p.count, p.nan, p.pos_inf, p.neg_inf, p.neg_nan) == (
        len(mixed), len(nans), special.count(math.inf), special.count(-math.inf), len(negative))
    got = p.total()
    if nans:
        assert math.isnan(got) and (math.copysign(1.0, got) < 0) == bool(negative)
    elif math.inf in special and -math.inf in special:
        inf = math.inf
        assert bits(got) == bits(inf + -inf)
    elif special:
        assert got == special[0]
    else:
        assert bits(got) == bits(exact(values))


def test_overflow_on_the_way_stays_exact():
    """Partial sums past the largest double neither corrupt the result nor make it depend on
    the order: the exact sum is rounded, and only an exact sum out of range gives ±inf."""
    big = 1.7976931348623157e308
    for values, want in (([big, big, -big], big), ([big, big, -big, -big, 0.5], 0.5),
                         ([big, big], math.inf), ([-big, -big, 1.0], -math.inf),
                         ([big, 2.0**970, -(2.0**970)], big),
                         ([2.0**1023, 2.0**970], 2.0**1023),  # a tie: to even
                         ([2.0**1023, 2.0**970, 2.0**-1074], 2.0**1023 + 2.0**971)):
        for order in (values, values[::-1]):
            assert PartialSum.of(np.array(order)).total() == want, order
            halves = [PartialSum.of(np.array(order[:1])), PartialSum.of(np.array(order[1:]))]
            assert PartialSum.merge_all(halves).total() == want, order


def test_a_full_list_is_compacted_and_stays_exact():
    """Values one bit apart in magnitude over the whole range of doubles would need more
    partials than a group keeps: compacting keeps the list bounded and the sum exact."""
    rng = np.random.default_rng(5)
    v = np.array([math.ldexp(1.0 + 2.0**-52, e) for e in range(-1000, 960, 7)])
    v = np.concatenate([v, -v[::3], 3 * v, [2.0**-1074] * 5])
    rng.shuffle(v)
    s = _sums.group_sums(v)
    assert len(s.small) <= _sums.CAPACITY
    assert PartialSum.of(v).total() == exact(v.tolist())


def test_groups_with_nulls_and_any_row_order():
    rng = np.random.default_rng(11)
    values = rng.standard_normal(5000) * 10.0 ** rng.integers(-30, 30, 5000)
    codes = rng.integers(0, 7, 5000)
    valid = rng.random(5000) < 0.8
    for c in (codes, np.sort(codes)):  # a counting sort of the rows, or their stretches
        parts = PartialSum.by_group(values, _sums.group_rows(c, 8), valid)
        for g, p in enumerate(parts):
            keep = (c == g) & valid
            assert (p.count, p.total()) == (keep.sum(), exact(values[keep].tolist()))
    assert PartialSum.by_group(values, _sums.group_rows(codes, 8), valid)[7].count == 0


def test_partial_sum_pickles():
    p = PartialSum.of(np.array([1e300, 0.1, 2.0**1000, math.inf, 1e-300]))
    back = pickle.loads(pickle.dumps(p))
    assert (back.count, back.nan, back.pos_inf, back.neg_inf, back.neg_nan) == (5, 0, 1, 0, 0)
    assert back.partials.tolist() == p.partials.tolist() and back.big.tolist() == p.big.tolist()
    q = PartialSum.of(np.array([1e300, 0.1, 2.0**1000, 1e-300]))
    assert pickle.loads(pickle.dumps(q)).total() == exact([1e300, 0.1, 2.0**1000, 1e-300])
    for arrays in (p, back, PartialSum(np.array([0.5]), [2.0])):
        for a in (arrays.partials, arrays.big):
            with pytest.raises(ValueError):
                a[:] = 1.0  # read-only, unpickled or made by hand too


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 1e-7, 1.0, 0.1, 1 / 3])),
                min_size=1, max_size=80),
       st.integers(1, 4))
def test_summary_kinds_against_exact_sums(values, parts):
    v = np.array(values)
    n = len(values)
    assert summary(v, "sum") == math.fsum(values)
    assert summary(v, "mean") == math.fsum(values) / n
    logs = np.log(np.maximum(v, MIN_GEO_MEAN))
    assert summary(v, "gm") == math.exp(math.fsum(logs.tolist()) / n)
    pieces = np.array_split(v, parts)
    for kind in ("sum", "mean", "gm"):
        assert finish([partial(p, kind) for p in pieces], kind) == summary(v, kind)


def test_summary_of_nothing_is_zero():
    assert [summary(np.array([]), k) for k in ("mean", "sum", "gm")] == [0.0, 0.0, 0.0]


def test_tables_aggregate_the_same_in_any_row_order():
    """The wide and long aggregates equal the exact sums per run, in any row order: runs
    in order of first appearance, measures as given (wide) or as met (long), nulls left
    out, a measure with no value for a run without a row."""
    rng = np.random.default_rng(3)
    n = 3000
    wide = pl.DataFrame({
        "run_id": rng.choice(["b", "a", "c"], n), "query_id": [f"q{i}" for i in range(n)],
        "map": rng.random(n) / 7, "num_ret": rng.integers(0, 1000, n).astype(float),
        "gm_map": np.where(rng.random(n) < 0.2, 0.0, rng.random(n)),
        "P_10": pl.Series(rng.random(n)).scatter(list(range(0, n, 5)), None),
    }).with_columns(pl.when(pl.col("run_id") == "c").then(None).otherwise(pl.col("P_10")).alias("P_10"))
    names = ["map", "num_ret", "gm_map", "P_10"]
    got = aggregate_wide(wide, names)
    kinds = {"map": "mean", "num_ret": "sum", "gm_map": "gm", "P_10": "mean"}
    want = []
    for run in wide.get_column("run_id").unique(maintain_order=True).to_list():
        for m in names:
            v = wide.filter(pl.col("run_id") == run).get_column(m).drop_nulls().to_numpy()
            if len(v):
                total = math.fsum((np.log(np.maximum(v, MIN_GEO_MEAN)) if m == "gm_map" else v).tolist())
                value = total if kinds[m] == "sum" else total / len(v)
                want.append((run, m, math.exp(value) if m == "gm_map" else value))
    assert got.rows() == want
    shuffled = wide.sample(fraction=1.0, shuffle=True, seed=1)
    first = shuffled.get_column("run_id").unique(maintain_order=True).to_list()
    again = dict(((r, m), v) for r, m, v in aggregate_wide(shuffled, names).rows())
    assert again == {(r, m): v for r, m, v in want}
    runs = aggregate_wide(shuffled, names).get_column("run_id")
    assert runs.unique(maintain_order=True).to_list() == first
    assert runs.rle().struct.field("len").to_list() == [3 if r == "c" else 4 for r in first]
    long = shuffled.unpivot(index=["run_id", "query_id"], on=names, variable_name="measure",
                            value_name="value")
    assert dict(((r, m), v) for r, m, v in aggregate_long(long).rows()) == again
    parts = table_partials(shuffled, names)
    assert list(parts)[:len(names)] == [(first[0], m) for m in names]
