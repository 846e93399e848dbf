"""trec_eval's gain list for the nDCG family: sorted by glibc's merge sort with a comparator
that truncates the gains' difference to an int, walked from the top (gain_init.c, m_ndcg.c).
Gains less than 1 apart compare equal, so the ideal ranking of ``ndcg.1=0.5`` depends on the
typed order and on the topic's largest grade; a level named twice gives retrieved documents
the gain of its first entry in the sorted list. The expected values are worked by hand from
those rules."""

from __future__ import annotations

import math
import subprocess
import sys

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.measures.gains import (
    IDEAL_VARIANTS,
    consistent,
    glibc_sort,
    ideal_order,
    results_gains,
    trec_gain_list,
)
from tests._profile import examples

L3 = math.log2(3)
# topic 1: a=2, b=1, c=0, d=1; the run ranks b, a, d (c not retrieved)
QRELS = pl.DataFrame({"query_id": ["1"] * 4 + ["2"] * 2, "doc_id": ["a", "b", "c", "d", "x", "y"],
                      "relevance": [2, 1, 0, 1, 1, 0]})
RUN = pl.DataFrame({"query_id": ["1"] * 3 + ["2"] * 2, "doc_id": ["b", "a", "d", "x", "y"],
                    "score": [3.0, 2.0, 1.0, 2.0, 1.0]})


def _values(measure: str, **options) -> dict[str, float]:
    out = fasteval.evaluate(QRELS, RUN, [measure], **options)
    return dict(zip(out["query_id"].to_list(), out["value"].to_list(), strict=True))


@pytest.mark.parametrize(("measure", "topic1", "topic2"), [
    # list [1:0.5, 0:0, 2:2] stays in that order (0.5 - 0 truncates to 0): the walk takes
    # grade 2, then stops at grade 0 (gain 0, documents c) before grade 1
    ("ndcg.1=0.5", (0.5 + 2 / L3 + 0.5 / 2) / 2.0, 0.0),
    # [2:0.5, 0:0, 1:1]: grade 1 (b, d), then grade 0 stops it; grade 2 never counts
    ("ndcg.2=0.5", (1 + 0.5 / L3 + 1 / 2) / (1 + 1 / L3), 1.0),
    # [1:0.5, 2:0.9, 0:0]: the top entry has gain 0, so the ideal DCG is 0
    ("ndcg.1=0.5,2=0.9", 0.0, 0.0),
    # [0:0, 1:1.5, 2:2]: sorted as by gain
    ("ndcg.1=1.5", (1.5 + 2 / L3 + 1.5 / 2) / (2 + 1.5 / L3 + 1.5 / 2), 1.0),
    # grade 1 named twice: the ideal takes the first pair (5), retrieved documents the
    # first in sorted order (2)
    ("ndcg.1=5,1=2", (2 + 2 / L3 + 2 / 2) / (5 + 5 / L3 + 2 / 2), 2 / 5),
    ("ndcg", (1 + 2 / L3 + 1 / 2) / (2 + 1 / L3 + 1 / 2), 1.0),
])
def test_trec_eval_gain_order(measure: str, topic1: float, topic2: float) -> None:
    got = _values(measure)
    # topic 2 (grades 1 and 0) with ndcg.1=0.5: list [1:0.5, 0:0] has gain 0 on top
    assert got["1"] == pytest.approx(topic1, rel=1e-12)
    assert got["2"] == pytest.approx(topic2, rel=1e-12)
    expected = _values(measure, tie_break="expected")  # no ties: the same values
    assert expected["1"] == pytest.approx(topic1, rel=1e-12)
    assert expected["2"] == pytest.approx(topic2, rel=1e-12)


def test_cli_prints_trec_eval_values(tmp_path) -> None:
    q = tmp_path / "qrels"
    r = tmp_path / "run"
    q.write_text("1 0 a 2\n1 0 b 1\n1 0 c 0\n1 0 d 1\n")
    r.write_text("1 Q0 b 1 3 t\n1 Q0 a 2 2 t\n1 Q0 d 3 1 t\n")
    text = subprocess.run([sys.executable, "-m", "fasteval", "trec-eval", "-m", "ndcg.1=0.5",
                           str(q), str(r)], capture_output=True, text=True, check=True).stdout
    assert text.split() == ["ndcg_1=0.5", "all", "1.0059"]


def test_the_other_gain_families_take_the_topic_order() -> None:
    # Rndcg, ndcg_rel and G walk the same list: topic 2 has no positive ideal gain, and
    # Rndcg divides by no change of ideal gain (0 / 0, printed nan by trec_eval too)
    for name in ("ndcg_rel.1=0.5", "G.1=0.5"):
        assert _values(name)["2"] == 0.0
    assert math.isnan(_values("Rndcg.1=0.5")["2"])
    cut = _values("nDCG(gains={1: 0.5})@2")
    assert cut["1"] == pytest.approx((0.5 + 2 / L3) / 2.0, rel=1e-12)


def test_glibc_merge_sort_and_its_comparator() -> None:
    entries = trec_gain_list([(1, 0.5), (2, 0.9)], 3)
    assert entries == [(1, 0.5, True), (2, 0.9, True), (0, 0.0, True)]
    assert [e[0] for e in glibc_sort(entries)] == [1, 2, 0]
    assert [e[0] for e in glibc_sort(trec_gain_list([(1, 1.5)], 3))] == [0, 1, 2]
    assert [e[0] for e in glibc_sort(trec_gain_list([(3, -2.0), (1, 7.0)], 4))] == [3, 0, 2, 1]


def test_consistent_gains_keep_one_order() -> None:
    assert consistent([(1, 3.0), (2, 9.0), (4, 4.5)], 4)  # 4.5: 1.5 from grade 3's gain
    assert not consistent([(1, 3.0), (2, 3.5)], 2)  # typed gains 0.5 apart
    assert not consistent([(1, 2.5)], 3)  # 2.5 against grades 2 and 3
    assert consistent([(1, 2.5)], 1)  # grades 0 and 1: level 1 is named
    assert consistent([], 10**12)
    levels, gains = ideal_order([(1, 3.0), (2, 9.0)], [0, 1, 2, 3])
    assert levels == [2, 3, 1, 0] and gains == [9.0, 3.0, 3.0, 0.0]
    levels, _ = ideal_order([(1, 0.5)], [0, 1, 2])
    assert levels[0] == IDEAL_VARIANTS and levels[1] == 3 and levels[2:5] == [0, 1, 2]
    assert results_gains([(1, 5.0), (1, 2.0)], [0, 1]) == {1: 2.0}
    assert results_gains([(1, 2.0), (1, 2.0)], [0, 1]) == {1: 2.0}


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(-3, 12)), max_size=4),
       st.integers(0, 4))
def test_whole_number_gains_sort_by_gain(pairs, top) -> None:
    """With whole-number gains the merge sort is a sort by gain (ties in list order), so
    one order serves every topic."""
    typed = [(lv, float(g)) for lv, g in pairs]
    assert consistent(typed, top)
    ordered = glibc_sort(trec_gain_list(typed, top + 1))
    assert [e[1] for e in ordered] == sorted(e[1] for e in ordered)
