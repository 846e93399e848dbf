"""Peer spellings (ir_measures, ranx) that fasteval accepts, refuses or reads as its own
measure: RBP@k, SetRelP, judged_only=False, the exact-key rule with a cutoff, and
canonical names that parse back to the same measure for every alias of the registry."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.errors import UnknownMeasureError
from fasteval.measures import FAMILIES, parse_measure, parse_measures
from tests._profile import examples

# q1: grades 1, 0, unjudged, 2, 3, unpooled, unpooled (max grade 3: trec_eval's rbp
# rescales the gains to g / 3); q2: 2, unpooled, 1 (gains g / 2)
QRELS = {"q1": {"a": 1, "b": 0, "c": 2, "d": 1, "e": 3}, "q2": {"x": 1, "y": 2}}
RUN = {"q1": {"a": 0.9, "b": 0.8, "u": 0.7, "c": 0.6, "e": 0.5, "f": 0.4, "g": 0.3},
       "q2": {"y": 0.5, "z": 0.4, "x": 0.3}}


def _rbp(gains: list[float], p: float, k: int) -> float:
    return (1 - p) * sum(g * p**i for i, g in enumerate(gains[:k]))


def _values(measure: str, qrels=QRELS, run=RUN) -> dict[str, float]:
    out = fasteval.evaluate(qrels, run, measure)
    return dict(out.select("query_id", "value").iter_rows())


@pytest.mark.parametrize(("name", "p", "k"), [
    ("RBP@3", 0.8, 3), ("RBP(p=0.5)@5", 0.5, 5), ("RBP(cutoff=1)", 0.8, 1),
    ("rbp_cut@2", 0.9, 2), ("rbp_cut_4(p=0.6)", 0.6, 4), ("RBP@1000", 0.8, 1000)])
def test_rbp_at_k_is_trec_eval_rbp_of_the_top_k(name: str, p: float, k: int) -> None:
    want = {"q1": _rbp([1 / 3, 0, 0, 2 / 3, 1, 0, 0], p, k), "q2": _rbp([1, 0, 1 / 2], p, k)}
    got = _values(name)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)
    # the whole ranking: the same as RBP without a cutoff
    if k == 1000:
        assert got == pytest.approx(_values("RBP"), rel=1e-12)


def test_rbp_at_k_names() -> None:
    assert parse_measure("RBP@10").name == "rbp_cut_10(p=0.8)"
    assert parse_measure("RBP(p=0.5)@10") == parse_measure("rbp_cut_10(p=0.5)")
    assert parse_measure("rbp_cut@10").name == "rbp_cut_10"  # p = 0.9, as trec_eval's rbp
    assert parse_measure("RBP(cutoff=10)") == parse_measure("RBP@10")
    assert [m.name for m in parse_measures("rbp_cut.5,10")] == ["rbp_cut_5", "rbp_cut_10"]


def test_rbp_at_k_agrees_with_ir_measures_trectools_on_binary_judgments() -> None:
    """ir_measures computes RBP@k only with its trectools provider: on binary judgments
    without ties it equals fasteval's; on graded ones it scores the grade itself (the
    docs/trec_eval.md, *Where the peers disagree*)."""
    irm = pytest.importorskip("ir_measures")
    pytest.importorskip("trectools")
    binary = {q: {d: int(g > 0) for d, g in docs.items()} for q, docs in QRELS.items()}
    for name in ("RBP@3", "RBP(p=0.5)@2", "RBP@1", "RBP"):
        want = {m.query_id: m.value for m in irm.trectools.iter_calc(
            [irm.parse_measure(name)], binary, RUN)}
        assert _values(name, binary) == pytest.approx(want, rel=1e-12)
    graded = {m.query_id: m.value for m in irm.trectools.iter_calc(
        [irm.parse_measure("RBP")], QRELS, RUN)}
    assert _values("rbp.8") == pytest.approx(graded, rel=1e-12)  # the grade as gain
    assert _values("RBP")["q1"] == pytest.approx(graded["q1"] / 3, rel=1e-12)


def test_rbp_expected_over_ties_is_trectools_weight_averaging() -> None:
    """trectools averages the weights of tied documents: tie_break="expected" where no
    tie group crosses rank k (nor, as trectools' groups do, the end of a query)."""
    irm = pytest.importorskip("ir_measures")
    pytest.importorskip("trectools")
    qrels = {"q1": {"a": 1, "b": 0, "c": 1, "d": 1, "e": 1}, "q2": {"x": 1, "y": 1}}
    run = {"q1": {"a": 0.9, "b": 0.8, "u": 0.8, "c": 0.8, "e": 0.5, "f": 0.5, "g": 0.3},
           "q2": {"y": 0.7, "z": 0.7, "x": 0.3}}
    for name in ("RBP", "RBP@4", "RBP@7", "RBP(p=0.5)@4", "RBP(p=0.5)"):
        want = {m.query_id: m.value for m in irm.trectools.iter_calc(
            [irm.parse_measure(name)], qrels, run)}
        got = fasteval.evaluate(qrels, run, name, tie_break="expected")
        assert dict(got.select("query_id", "value").iter_rows()) == pytest.approx(want)
    # a tie group across k: b, u (unjudged), c at ranks 2-4 gain 1/3 each, two of them read
    got = fasteval.evaluate(qrels, run, "RBP@3", tie_break="expected")
    assert got["value"][0] == pytest.approx(0.2 * (1 + (0.8 + 0.64) / 3), rel=1e-12)
    # the trec rule: u (unjudged), c, b (doc id descending) at ranks 2-4
    assert _values("RBP@3", qrels, run)["q1"] == pytest.approx(0.2 * (1 + 0.64), rel=1e-12)


@pytest.mark.parametrize(("name", "why"), [
    ("RBP(rel=2)@10", "rbp_cut has no relevance level"),
    ("RBP@10-l2", "rbp_cut has no relevance level"),
    ("RBP(residual=True)@10", "residual= does not apply to rbp_cut"),
    ("RBP(gains={2: 1})@10", "not rbp_cut"),
    ("RBP@0", "the cutoff must be a positive integer, got '0'"),
    ("RBP@2.5", "the cutoff must be a positive integer, got '2.5'"),
    # ranx writes rbp.95 (and accepts rbp@95): trec_eval's rbp takes no cutoff, and the
    # lower-case family key is not read as ir_measures' RBP@k
    ("rbp@95", r"rbp takes no cutoff; RBP@k is rbp_cut_k \(ranx's persistence is written "
               r"rbp.95\)"),
    ("P@5(rel=2)", r"arguments go before the cutoff: P\(rel=2\)@5"),
    ("nDCG@10(dcg='exp-log2')", r"arguments go before the cutoff: nDCG\(dcg='exp-log2'\)@10"),
    ("AP(judged_only=True)", r"judged_only=True applies to P only \(P\(judged_only=True\)@k\)"),
    ("AP(judged_only=maybe)", "judged_only must be True or False, got 'maybe'"),
    ("P(recall=5)", r"recall= applies to IPrec only"),
    ("IPrec(recall=0.5)@0.5", r"the recall level is given twice \(recall= and @\)"),
    ("SDCG(dcg='exp-log2', max_rel=3)@10", "SDCG's dcg must be 'log2', got 'exp-log2'"),
    ("AP(dcg='log2')", "dcg= applies to nDCG only"),
])
def test_refused_spellings_say_why(name: str, why: str) -> None:
    with pytest.raises(UnknownMeasureError, match=why):
        parse_measures(name)


@pytest.mark.parametrize(("peer", "ours"), [
    ("SetRelP", "set_relative_P"), ("SetRelP(rel=2)", "set_relative_P(rel=2)"),
    ("AP(judged_only=False)", "map"), ("nDCG(judged_only=false)@10", "ndcg_cut_10"),
    ("RR(judged_only=False, rel=2)@10", "recip_rank_cut_10(rel=2)"),
    ("P(judged_only=False)@5", "P_5"), ("P(judged_only=True)@5", "P_judged_5"),
    ("IPrec(recall=0.5)", "iprec_at_recall_0.50"),
    ("IPrec(rel=2, recall=.25)", "iprec_at_recall_0.25(rel=2)"),
    ("SDCG(dcg='log2', max_rel=3)@10", "sdcg_10(max_rel=3)"),
])
def test_more_ir_measures_spellings(peer: str, ours: str) -> None:
    assert parse_measure(peer).name == ours


@pytest.mark.parametrize(("name", "want"), [
    ("SetRelP", {"q1": 3 / 4, "q2": 1.0}),
    # q1: relevant at ranks 1, 4, 5 of 4 relevant: recall 0.5 first reached at rank 4
    ("IPrec(recall=0.5)", {"q1": 3 / 5, "q2": 1.0}),
])
def test_new_spellings_agree_with_ir_measures(name: str, want: dict) -> None:
    irm = pytest.importorskip("ir_measures")
    theirs = {m.query_id: m.value for m in irm.iter_calc([irm.parse_measure(name)],
                                                         QRELS, RUN)}
    assert _values(name) == pytest.approx(theirs, rel=1e-12)
    assert theirs == pytest.approx(want, rel=1e-12)


def test_exact_family_key_with_a_cutoff() -> None:
    """A family key spelled exactly names its family with a cutoff too; an alias spelled
    alike in another case does not take it over (no family changes meaning)."""
    from fasteval.measures.parser import _ALIASES, _WRITTEN

    checked = 0
    for fam in FAMILIES:
        key = fam.key.lower()
        if key not in _ALIASES or _ALIASES[key][1] is None:
            continue
        name = fam.sample().split("@")[0] + "@7"
        checked += 1
        if (fam.key, True) in _WRITTEN:  # the alias is spelled as the key (map@k)
            assert parse_measure(name).family == _ALIASES[key][1]
        elif fam.cutoff:
            assert parse_measure(name).family == fam.key
        else:
            with pytest.raises(UnknownMeasureError, match=f"{fam.key} takes no cutoff"):
                parse_measure(name)
    assert checked >= 10


def _alias_spellings() -> list[str]:
    out = []
    for fam in FAMILIES:
        args = [f"{o.name}=3" for o in fam.options if o.required]
        suffix = f"({', '.join(args)})" if args else ""
        for alias in fam.aliases:
            name = alias.name.removesuffix("@k") + suffix
            if alias.cut:
                name += "@0.5" if fam.params == "float_cuts" else "@7"
            out.append(name)
    return out


@pytest.mark.parametrize("name", _alias_spellings())
def test_every_alias_round_trips(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ms = parse_measures(name)
    for m in ms:
        assert parse_measure(m.name) == m, (name, m.name)
        assert parse_measure(m.name).name == m.name


_SPELLING = st.sampled_from(_alias_spellings())


@settings(max_examples=examples(150), deadline=None)
@given(_SPELLING, st.sampled_from(["", "(rel=2)", "(p=0.5)", "(cutoff=3)", "-l1"]))
def test_alias_with_arguments_round_trips_or_is_refused(name: str, extra: str) -> None:
    """An alias with one more argument either parses to measures whose names parse back
    to them, or is refused with UnknownMeasureError naming the spelling."""
    if extra.startswith("("):
        head, cut = (name.split("@", 1) + [None])[:2]
        if head.endswith(")"):
            spelled = head[:-1] + ", " + extra[1:]
        else:
            spelled = head + extra
        spelled += f"@{cut}" if cut else ""
    else:
        spelled = name + extra
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ms = parse_measures(spelled)
    except UnknownMeasureError as exc:
        assert repr(spelled) in str(exc)
        return
    for m in ms:
        assert parse_measure(m.name) == m, (spelled, m.name)


def test_rbp_at_k_property_against_whole_rbp() -> None:
    """rbp_cut_k rises with k to rbp (gains >= 0) on random graded cases."""
    from tests.core._gen import random_case

    qrels, run = random_case(5, ties=True, negative=True)
    names = ["rbp_cut_1", "rbp_cut_3", "rbp_cut_10", "rbp_cut_1000", "rbp"]
    res = fasteval.evaluate(qrels, run, names)
    by_q: dict = {}
    for q, m, v in res.select("query_id", "measure", "value").iter_rows():
        by_q.setdefault(q, {})[m] = v
    assert len(by_q) > 10
    for vals in by_q.values():
        seq = [vals[n] for n in names]
        assert all(a <= b + 1e-15 for a, b in zip(seq, seq[1:], strict=False)), seq
        assert math.isclose(seq[-2], seq[-1], rel_tol=1e-12, abs_tol=1e-15)
