"""Differential tests against ranx and ir_measures where their definitions agree with
trec_eval, plus tests that document where they do not."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

import fasteval
from tests._data import IR_MEASURES
from tests.core._gen import random_case, to_dicts

RANX_METRICS = [
    "ndcg@10", "map@100", "map", "mrr", "mrr@10", "precision@5", "recall@100", "hit_rate@10",
    "r-precision", "f1@10", "ndcg_burges@10", "ndcg",
]


def _common(seed: int, **gen):
    qrels, run = random_case(seed, ties=False, negative=False, **gen)
    common = set(qrels["query_id"].to_list()) & set(run["query_id"].to_list())
    qrels = qrels.filter(pl.col("query_id").is_in(list(common)))
    run = run.filter(pl.col("query_id").is_in(list(common)))
    return qrels, run


@pytest.mark.parametrize("seed", range(4))
def test_matches_ranx_without_ties(seed: int) -> None:
    ranx = pytest.importorskip("ranx")
    qrels, run = _common(seed)
    qd, rd = to_dicts(qrels, run)
    rrun = ranx.Run(rd)
    want = ranx.evaluate(ranx.Qrels(qd), rrun, RANX_METRICS, return_mean=False)
    ours = fasteval.evaluate(qrels, run, RANX_METRICS)
    checked = 0
    for metric in RANX_METRICS:
        sub = ours.filter(pl.col("measure") == metric)  # named as asked
        got = dict(zip(sub["query_id"].to_list(), sub["value"].to_list(), strict=True))
        for qid, v in zip(rrun.keys(), want[metric], strict=True):
            assert math.isclose(got[qid], float(v), abs_tol=1e-9), (metric, qid, got[qid], v)
            checked += 1
    assert checked > 200


def test_ranx_breaks_ties_differently() -> None:
    """Documented difference: ranx orders equal scores by its own (stable, input/sort) order,
    trec_eval by doc id descending. Same data, two answers; fasteval follows trec_eval."""
    ranx = pytest.importorskip("ranx")
    qd = {"q1": {"a": 1, "b": 0}}
    rd = {"q1": {"a": 0.5, "b": 0.5}}
    ranx_p1 = float(ranx.evaluate(ranx.Qrels(qd), ranx.Run(rd), "precision@1"))
    ours = fasteval.evaluate(qd, rd, "P@1")["value"][0]
    assert ours == 0.0  # "b" > "a": the nonrelevant doc ranks first under trec_eval's rule
    assert ranx_p1 == 1.0  # ranx ranks "a" first
    assert fasteval.evaluate(qd, rd, "P@1", tie_break="input")["value"][0] == ranx_p1


@pytest.mark.parametrize("seed", range(3))
def test_matches_ir_measures(seed: int) -> None:
    irm = pytest.importorskip("ir_measures")
    # ir_measures' own Judged provider orders equal scores its own way: compare on untied runs
    # (its pytrec_eval-backed measures agree with ties too; see test_oracle_pytrec_eval.py)
    qrels, run = random_case(seed, negative=False, ties=False)
    qd, rd = to_dicts(qrels, run)
    names = ["Judged@10", "Judged@5", "nDCG@10", "AP", "RR@10", "P(rel=2)@5", "R@20",
             "Success@5", "Rprec", "Bpref", "NumRelRet"]
    ours = fasteval.evaluate(qrels, run, names)
    got = {(str(q), m): v for q, m, v in ours.select("query_id", "measure", "value").iter_rows()}
    checked = 0
    for name in names:
        canon = name  # the results name each measure as asked
        for m in irm.iter_calc([irm.parse_measure(name)], qd, rd):
            if m.query_id not in rd:
                # ir_measures reports qrels queries absent from the run (as 0); fasteval
                # leaves them out unless complete=True (trec_eval's -c)
                assert m.value == 0.0
                continue
            assert math.isclose(got[(m.query_id, canon)], m.value, abs_tol=1e-9), (name, m)
            checked += 1
    assert checked > 100


def test_ir_measures_expected_values_cwl() -> None:
    """Numbers ir_measures asserts (from cwl_eval) that follow trec_eval semantics."""
    spec = json.loads((IR_MEASURES / "expected_values.json").read_text())["cwl"]
    qrels = fasteval.read_qrels(IR_MEASURES / spec["qrels"])
    run = fasteval.read_run(IR_MEASURES / spec["run"])
    values = spec["trec_eval_compatible"]["values"]
    names = {"rbp_p0.9": "rbp"}
    res = fasteval.evaluate(qrels, run, [names.get(n, n) for n in values])
    got = {(q, m): v for q, m, v in res.select("query_id", "measure", "value").iter_rows()}
    for name, per_q in values.items():
        for qid, v in per_q.items():
            assert abs(got[(qid, names.get(name, name))] - v) < spec["tolerance"] + 5e-5, (
                name, qid)


IR_NAMES = [
    "nDCG@10", "nDCG", "AP", "AP@10", "RR", "RR@10", "P@5", "P(rel=2)@5", "R@20", "R@100", "Rprec",
    "Bpref", "Success@10", "Judged@10", "Judged", "NumRet", "NumRel", "NumRelRet", "NumRet(rel=2)",
    "NumQ", "SetP", "SetR", "SetF", "SetAP", "IPrec@0.5", "IPrec@0.0", "infAP", "RBP(rel=2)",
    "RBP(p=0.5, rel=1)", "INST(max_rel=3)", "INSQ(max_rel=3)", "BPM(max_rel=3)@10",
    "SDCG(max_rel=3)@10", "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@10", "NERR10(max_rel=3)",
    "NERR11(max_rel=3)", "Compat", "Compat(p=0.8)", "Compat(normalize=False)",
    "P(judged_only=True)@5", "SetP(relative=True)", "nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7})@10",
    "nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7})", "AP(rel=2)", "RR(rel=2)",
]
RANX_NAMES = [
    "ndcg@10", "ndcg", "map", "map@10", "mrr", "mrr@10", "precision@5", "precision", "recall@100",
    "hit_rate@10", "hits@10", "hits", "r-precision", "f1@10", "f1", "ndcg_burges@10",
    "ndcg_burges", "dcg@10", "dcg", "dcg_burges@10", "bpref", "rbp.95", "rbp.8", "ndcg@10-l2",
    "map-l2", "mrr-l2", "precision@5-l2", "hits@10-l2", "recall@10-l2", "f1-l2", "dcg@10-l2",
    "rbp.95-l2", "r-precision-l2", "hit_rate@5-l3",  # bpref-l2: see the test after the next
]


def test_every_shared_name_agrees_on_untied_runs() -> None:
    """Per-query values under each name both libraries accept with fasteval's meaning, on
    untied runs with graded labels, unjudged documents and no negative grades (ties and
    negative grades are the differences docs/trec_eval.md's *Where the peers disagree* notes)."""
    irm = pytest.importorskip("ir_measures")
    ranx = pytest.importorskip("ranx")
    qrels, run = _common(104, n_queries=60)
    qd, rd = to_dicts(qrels, run)
    # two spellings of one measure in one call are refused: the parsed (canonical) measures,
    # each spelling then looked up under its canonical name
    ours = fasteval.evaluate(qrels, run, fasteval.parse_measures(IR_NAMES + RANX_NAMES))
    got = {(str(q), m): v for q, m, v in ours.select("query_id", "measure", "value").iter_rows()}
    checked = 0
    for name in IR_NAMES:  # one at a time: pytrec_eval's provider mixes up nDCG with gains=
        canon = fasteval.parse_measure(name).name
        for m in irm.iter_calc([irm.parse_measure(name)], qd, rd):
            assert math.isclose(got[(m.query_id, canon)], m.value, abs_tol=1e-6), (m, canon)
            checked += 1
    rrun = ranx.Run(rd)
    for name in RANX_NAMES:
        canon = fasteval.parse_measure(name).name
        want = ranx.evaluate(ranx.Qrels(qd), rrun, [name], return_mean=False)
        for qid, v in zip(rrun.keys(), want, strict=True):
            assert math.isclose(got[(qid, canon)], float(v), abs_tol=1e-6), (name, qid)
            checked += 1
    assert checked > 3000


def test_ranx_bpref_at_a_level_is_zero_once_a_query_has_nothing_at_it() -> None:
    """ranx 0.3's bpref-l2 gives 0 to every query when one query has no document of grade
    >= 2 (alone, each query gets trec_eval's value, which fasteval gives in both cases)."""
    ranx = pytest.importorskip("ranx")
    qd = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2, "d": 0, "e": 2}}
    rd = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 3.0, "d": 2.0, "e": 1.0}}
    both = ranx.evaluate(ranx.Qrels(qd), ranx.Run(rd), "bpref-l2", return_mean=False)
    alone = ranx.evaluate(ranx.Qrels({"q2": qd["q2"]}), ranx.Run({"q2": rd["q2"]}), "bpref-l2")
    ours = fasteval.evaluate(qd, rd, "bpref-l2")
    assert ours["value"].to_list() == [0.0, 0.5] and float(alone) == 0.5
    assert list(both) == [0.0, 0.0]


def test_ranx_bpref_is_nan_without_judged_nonrelevant_documents() -> None:
    """ranx 0.3's bpref is NaN for a query whose qrels list no nonrelevant document (qrels
    of relevant documents only, as anserini's CACM qrels); trec_eval's is the fraction of
    relevant documents retrieved, with no nonrelevant one to rank above them."""
    ranx = pytest.importorskip("ranx")
    qd = {"q1": {"a": 1, "c": 1, "e": 1}, "q2": {"a": 1, "b": 0}}
    rd = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7}, "q2": {"a": 0.9, "b": 0.8}}
    theirs = ranx.evaluate(ranx.Qrels(qd), ranx.Run(rd), "bpref", return_mean=False)
    assert math.isnan(theirs[0]) and theirs[1] == 1.0
    assert fasteval.evaluate(qd, rd, "bpref")["value"].to_list() == [2 / 3, 1.0]


def test_ir_measures_compat_ideal_ties_unretrieved_with_score_zero() -> None:
    """ir_measures' Compat ranks unretrieved relevant documents as if scored 0, keeping
    the qrels' order among equal scores: a relevant document retrieved at score 0 (or
    below) can fall behind an unretrieved one in its ideal ranking. fasteval's ideal lists
    retrieved documents of a grade first, in ranking order (docs/measures.md, *Compatibility*)."""
    irm = pytest.importorskip("ir_measures")
    qd = {"q": {"u": 1, "r": 1}}
    # ranking [r]; fasteval's ideal [r, u]: RBO to depth 2 = (1 + 0.95 * 1/2) / norm
    norm = (1 + 0.95) * 0.05  # the ideal's own overlap, (1 - p) * (1 + p)
    ours = (1 + 0.95 * 0.5) * 0.05 / norm
    theirs = (0 + 0.95 * 0.5) * 0.05 / norm  # ideal [u, r]: nothing shared at depth 1
    for score, want_irm in ((0.5, ours), (0.0, theirs), (-0.0, theirs), (-0.5, theirs)):
        rd = {"q": {"r": score}}
        (m,) = irm.iter_calc([irm.parse_measure("Compat")], qd, rd)
        assert math.isclose(m.value, want_irm, rel_tol=1e-12), score
        got = fasteval.evaluate(qd, rd, "Compat")["value"].to_list()
        assert got == pytest.approx([ours], rel=1e-12), score


def test_ir_measures_scores_missing_queries_as_zero() -> None:
    """A qrels query the run lacks: ir_measures scores it 0 (NumRel and NumQ too) and
    averages it in; fasteval leaves it out unless complete=True, whose means are
    ir_measures' (num_rel and num_q count the query); ranx refuses the run."""
    irm = pytest.importorskip("ir_measures")
    ranx = pytest.importorskip("ranx")
    qd = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    rd = {"q1": {"a": 1.0, "b": 0.5, "z": 0.2}}
    for name, q1 in (("AP", 1.0), ("P@2", 0.5), ("nDCG@10", 1.0), ("NumRet", 3.0),
                     ("NumRel", 1.0)):
        measure = irm.parse_measure(name)
        theirs = {m.query_id: m.value for m in irm.iter_calc([measure], qd, rd)}
        assert theirs == {"q1": q1, "q2": 0.0}, name
        default = fasteval.evaluate(qd, rd, name)
        assert default["query_id"].to_list() == ["q1"] and default["value"][0] == q1
        filled = fasteval.evaluate(qd, rd, name, complete=True)
        want_q2 = 1.0 if name == "NumRel" else 0.0  # num_rel keeps q2's judgment
        assert dict(zip(filled["query_id"], filled["value"], strict=True)) == {
            "q1": q1, "q2": want_q2}, name
        if name != "NumRel":  # a mean (or a sum of counts): the same aggregate
            want = list(irm.calc_aggregate([measure], qd, rd).values())[0]
            assert fasteval.aggregate(filled)["value"][0] == pytest.approx(want), name
    with pytest.raises(AssertionError, match="make_comparable"):
        ranx.evaluate(ranx.Qrels(qd), ranx.Run(rd), "map")


IR_TREC_NAMES = [
    "nDCG@10", "nDCG", "AP", "AP@10", "AP(rel=2)", "AP(rel=2)@10", "RR", "RR(rel=2)", "P@5",
    "P(rel=2)@5", "P(rel=3)@10", "R@10", "R(rel=2)@10", "Rprec", "Rprec(rel=2)", "Bpref",
    "Bpref(rel=2)", "infAP", "infAP(rel=2)", "Success@5", "Success(rel=2)@10", "SetP",
    "SetP(rel=2)", "SetR(rel=2)", "SetF(beta=0.5)", "SetAP(rel=2)", "SetRelP(rel=2)",
    "NumRet(rel=2)", "NumRelRet(rel=2)", "IPrec@0.3", "IPrec(rel=2)@0.7", "P(judged_only=True)@5",
    "P(judged_only=True, rel=2)@10", "nDCG(gains={0: 0, 1: 5, 2: 1, 3: 2})",
    "nDCG(gains={0: 0, 1: 2, 1: 5})@10", "MAP", "MRR", "NDCG@10", "BPref", "RPrec",
    "Precision@5", "Recall@10",
]


@pytest.mark.parametrize("seed", [0, 3])
def test_pytrec_eval_backed_names_agree_on_tied_runs_with_negative_grades(seed: int) -> None:
    """ir_measures' names that its pytrec_eval provider computes order ties as trec_eval
    does (doc id descending) and treat a negative grade as unjudged, so they agree on runs
    with many ties too; pytrec_eval is trec_eval 9 (compat=9: its recall points) and scores
    a qrels query missing from the run as 0 (complete=True)."""
    irm = pytest.importorskip("ir_measures")
    qrels, run = random_case(seed, ties=True, negative=True)
    qd, rd = to_dicts(qrels, run)
    # several spellings of one measure (AP, MAP): the parsed, canonically named measures
    ours = fasteval.evaluate(qrels, run, fasteval.parse_measures(IR_TREC_NAMES), complete=True,
                             compat=9)
    got = {(str(q), m): v for q, m, v in ours.select("query_id", "measure", "value").iter_rows()}
    checked = 0
    for name in IR_TREC_NAMES:
        canon = fasteval.parse_measure(name).name
        for m in irm.iter_calc([irm.parse_measure(name)], qd, rd):
            assert math.isclose(got[(m.query_id, canon)], m.value, abs_tol=1e-9), (name, m)
            checked += 1
    assert checked > 900


@pytest.mark.parametrize(("names", "order"), [
    (["RR@5", "RR(rel=2)@10", "Judged@5", "Judged@10"], "doc id ascending"),
    (["INST(max_rel=3)", "NERR10(max_rel=3)", "BPM(max_rel=3)@10", "RBP(rel=2)"], "row order"),
])
def test_ir_measures_other_providers_tie_orders(names: list[str], order: str) -> None:
    """docs/trec_eval.md: msmarco (RR@k) and judged (Judged@k) order tied documents by doc id
    ascending, cwl_eval (C/W/L, RBP(rel=k)) in the run's row order; with the run's rows
    sorted so, tie_break="input" gives their values on a tied run whose rows are shuffled."""
    irm = pytest.importorskip("ir_measures")
    qrels, run = _common_tied(1)
    shuffled = run.sample(fraction=1.0, shuffle=True, seed=7)
    qd, rd = to_dicts(qrels, shuffled)
    if order == "doc id ascending":
        ranked = shuffled.sort(["query_id", "score", "doc_id"], descending=[False, True, False])
    else:  # by score, ties kept in row order
        ranked = (shuffled.with_row_index("row")
                  .sort(["query_id", "score", "row"], descending=[False, True, False])
                  .drop("row"))
    ours = fasteval.evaluate(qrels, ranked, names, tie_break="input")
    trec = fasteval.evaluate(qrels, ranked, names)
    got = {(str(q), m): v for q, m, v in ours.select("query_id", "measure", "value").iter_rows()}
    differs = 0
    for name in names:
        canon = name  # the results name each measure as asked
        for m in irm.iter_calc([irm.parse_measure(name)], qd, rd):
            assert math.isclose(got[(m.query_id, canon)], m.value, abs_tol=1e-9), (name, m)
        sub = trec.filter(pl.col("measure") == canon)
        differs += sum(not math.isclose(got[(str(q), canon)], v, abs_tol=1e-9)
                       for q, v in sub.select("query_id", "value").iter_rows())
    assert differs > 10  # the ties matter: trec_eval's order gives other values


def _common_tied(seed: int):
    qrels, run = random_case(seed, ties=True, negative=False)
    common = set(qrels["query_id"].to_list()) & set(run["query_id"].to_list())
    return (qrels.filter(pl.col("query_id").is_in(list(common))),
            run.filter(pl.col("query_id").is_in(list(common))))
