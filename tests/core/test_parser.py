"""The measure grammar: dialects map to the same measure; canonical names round-trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import fasteval
from fasteval.errors import UnknownMeasureError
from fasteval.measures import FAMILIES, Measure, parse_measure, parse_measures

SAME = [
    ("ndcg_cut_10", "nDCG@10", "ndcg@10"),
    ("P_5", "P@5", "precision@5"),
    ("map", "AP", "map"),
    ("map_cut_100", "AP@100", "map@100"),
    ("recip_rank", "RR", "mrr"),
    ("recall_100", "R@100", "recall@100"),
    ("Rprec", "Rprec", "r-precision"),
    ("success_10", "Success@10", "hit_rate@10"),
    ("ndcg_burges_cut_10", "nDCG(dcg='exp-log2')@10", "ndcg_burges@10"),
    ("iprec_at_recall_0.50", "IPrec@0.5", "iprec_at_recall_0.50"),
]


@pytest.mark.parametrize("names", SAME)
def test_dialects_agree(names) -> None:
    parsed = {parse_measure(n) for n in names}
    assert len(parsed) == 1
    assert parse_measure(names[0]).name == names[0]


def test_lists_and_sets() -> None:
    assert [m.name for m in parse_measures("P.5,7,3")] == ["P_3", "P_5", "P_7"]
    assert [m.name for m in parse_measures("ndcg_cut.10,20,23.4")] == [
        "ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]
    official = parse_measures("official")
    assert official[0].name == "num_q" and official[-1].name == "P_1000"
    assert len([m for m in parse_measures("all_trec")]) == 99


def test_relevance_override_and_params() -> None:
    m = parse_measure("P(rel=2)@5")
    assert (m.family, m.cutoff, m.rel) == ("P", 5, 2)
    assert parse_measure("ndcg.1=3,2=9,4=4.5").gains == ((1, 3.0), (2, 9.0), (4, 4.5))
    assert parse_measure("utility.2,-1,0,0").vector == (2.0, -1.0, 0.0, 0.0)


@pytest.mark.parametrize("bad", ["ndgc@10", "P@0", "P@x", "foo", "Rprec@10", "map(rel=x)",
                                 "nDCG(dcg='exp')@10", "P(judged_only=True)@5"])
def test_unknown_names_error_clearly(bad: str) -> None:
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure(bad)
    assert repr(bad) in str(info.value)


def test_suggestions() -> None:
    with pytest.raises(UnknownMeasureError, match="did you mean 'ndcg@10'"):
        parse_measure("ndgc@10")


members = st.sampled_from(
    [m for f in FAMILIES for m in parse_measures(f.key)]
    + parse_measures(["P(rel=2)@5", "ndcg.1=3,2=9", "utility.2,-1,0,0", "rbp.p=0.8",
                      "11pt_avg..25,.5,.75", "set_F.0.5", "relstring.20"])
)


@given(members)
def test_canonical_names_round_trip(m: Measure) -> None:
    assert parse_measure(m.name) == m
    assert fasteval.parse_measure(str(m)) == m
