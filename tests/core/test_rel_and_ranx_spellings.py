"""Per-measure relevance levels and the ranx / ir_measures spellings, against the tools
that define them (ranx, ir_measures) and against hand-worked values."""

from __future__ import annotations

import io
import math
import warnings
from pathlib import Path

import polars as pl
import pytest

import fasteval
from tests.core._gen import random_case, to_dicts

TREC = Path(__file__).resolve().parents[2] / "datasets" / "trec"

# ranx spellings whose numbers ranx computes itself: no cutoff = the whole ranking,
# -lN = relevance level N (binary measures: grade >= N relevant; gain measures: grades
# below N gain 0), rbp.N = persistence 0.N with the grade as gain
RANX_METRICS = [
    "hits@5", "hits", "hits@10-l3", "precision", "precision-l2", "precision@5-l2",
    "recall@10-l2", "f1", "f1-l2", "f1@10-l2", "map-l2", "map@10-l2", "mrr-l2", "mrr@5-l3",
    "hit_rate@5-l2", "r-precision-l2", "bpref-l2",
    "dcg@10", "dcg", "dcg@5-l2", "dcg_burges@10", "dcg_burges", "dcg_burges@3-l3",
    "ndcg@10-l2", "ndcg-l2", "ndcg_burges", "ndcg_burges@5", "ndcg_burges@10-l2",
    "ndcg_burges-l3", "rbp.5", "rbp.95", "rbp.8-l2", "rbp.9-l3",
]


def _common(seed: int):
    qrels, run = random_case(seed, ties=False, negative=False)
    common = set(qrels["query_id"].to_list()) & set(run["query_id"].to_list())
    keep = pl.col("query_id").is_in(list(common))
    return qrels.filter(keep), run.filter(keep)


def _by_query(results: pl.DataFrame, name: str) -> dict[str, float]:
    sub = results.filter(pl.col("measure") == name)
    return dict(zip(sub["query_id"].to_list(), sub["value"].to_list(), strict=True))


@pytest.mark.parametrize("seed", range(4))
def test_ranx_spellings_match_ranx(seed: int) -> None:
    ranx = pytest.importorskip("ranx")
    qrels, run = _common(seed)
    qd, rd = to_dicts(qrels, run)
    assert {v for q in qd.values() for v in q.values()} == {0, 1, 2, 3}  # graded
    rrun = ranx.Run(rd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's cast warnings inside ranx
        want = ranx.evaluate(ranx.Qrels(qd), rrun, RANX_METRICS, return_mean=False)
    ours = fasteval.evaluate(qrels, run, RANX_METRICS)
    checked = 0
    for metric in RANX_METRICS:
        got = _by_query(ours, metric)  # results carry the names asked for
        for qid, v in zip(rrun.keys(), want[metric], strict=True):
            assert math.isclose(got[qid], float(v), rel_tol=1e-12, abs_tol=1e-12), (
                metric, qid, got[qid], v)
            checked += 1
    assert checked == len(RANX_METRICS) * len(rrun.keys())


IR_MEASURES = ["NumRet(rel=1)", "NumRet(rel=2)", "NumRet(rel=3)", "NumRet", "NumRelRet",
               "RBP(rel=1)", "RBP(rel=2)", "RBP(p=0.5,rel=1)", "RBP(p=0.95,rel=3)"]


@pytest.mark.parametrize("seed", range(3))
def test_num_ret_and_rbp_levels_match_ir_measures(seed: int) -> None:
    irm = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")  # ir_measures computes RBP(rel=k) with cwl_eval
    qrels, run = random_case(seed, ties=False, negative=False)
    qd, rd = to_dicts(qrels, run)
    ours = fasteval.evaluate(qrels, run, IR_MEASURES)
    got = {(str(q), m): v for q, m, v in ours.select("query_id", "measure", "value").iter_rows()}
    checked = 0
    for name in IR_MEASURES:
        for m in irm.iter_calc([irm.parse_measure(name)], qd, rd):
            if m.query_id not in rd:
                continue  # ir_measures scores qrels queries missing from the run (as 0)
            assert math.isclose(got[(m.query_id, name)], m.value, abs_tol=1e-12), (name, m)
            checked += 1
    assert checked > 150


def test_num_ret_with_rel_matches_ir_measures_aggregate() -> None:
    """The issue's check: NumRet(rel=k) summed over queries is the number of retrieved
    documents of grade >= k (it was the whole run: rel was ignored)."""
    irm = pytest.importorskip("ir_measures")
    qrels, run = random_case(7, ties=False, negative=False)
    qd, rd = to_dicts(qrels, run)
    names = ["NumRet(rel=2)", "NumRet"]
    want = irm.calc_aggregate([irm.parse_measure(n) for n in names], qd, rd)
    agg = fasteval.aggregate(fasteval.evaluate(qrels, run, names))
    got = dict(zip(agg["measure"].to_list(), agg["value"].to_list(), strict=True))
    # named as asked, and summed as the counts they name
    assert got["NumRet(rel=2)"] == want[irm.parse_measure("NumRet(rel=2)")]
    assert got["NumRet"] == want[irm.parse_measure("NumRet")]
    assert got["NumRet(rel=2)"] < got["NumRet"]


# Hand-worked: the ranking is d1 (grade 2), d2 (grade 1), d4 (not judged), d5 (grade 3);
# d3 (grade 0) is judged but not retrieved.
QRELS = {"q1": {"d1": 2, "d2": 1, "d3": 0, "d5": 3}}
RUN = {"q1": {"d1": 0.9, "d2": 0.8, "d4": 0.7, "d5": 0.6}}
L3, L5 = math.log2(3.0), math.log2(5.0)
HAND = [
    ("hits@2", 2.0),
    ("hits", 3.0),
    ("hits-l2", 2.0),
    ("NumRet(rel=2)", 2.0),  # d1, d5
    ("NumRet", 4.0),
    ("precision", 3 / 4),
    ("dcg@3", 2 + 1 / L3),
    ("dcg", 2 + 1 / L3 + 3 / L5),
    ("dcg@3-l2", 2.0),
    ("dcg_burges@3", 3 + 1 / L3),
    ("dcg_burges", 3 + 1 / L3 + 7 / L5),
    # ideal top 3 at level 2: grades 3, 2 -> 3 + 2 / log2(3)
    ("ndcg@3-l2", 2 / (3 + 2 / L3)),
    ("ndcg-l2", (2 + 3 / L5) / (3 + 2 / L3)),
    ("ndcg_burges-l3", (7 / L5) / 7),
    # RBP, p = 0.5: ranx's grade-as-gain, ir_measures' binary at rel, trec_eval's rescaled
    ("rbp.5", 0.5 * (2 + 1 * 0.5 + 3 * 0.125)),
    ("rbp.5-l2", 0.5 * (2 + 3 * 0.125)),
    ("RBP(p=0.5,rel=2)", 0.5 * (1 + 0.125)),
    ("RBP(p=0.5,rel=1)", 0.5 * (1 + 0.5 + 0.125)),
    ("rbp.p=0.5", 0.5 * (2 / 3 + 1 / 3 * 0.5 + 1 * 0.125)),  # gains / 3 (max grade)
]


@pytest.mark.parametrize(("name", "value"), HAND)
def test_hand_worked(name: str, value: float) -> None:
    res = fasteval.evaluate(QRELS, RUN, [name])
    # the name as asked; trec_eval's name.param form carries trec_eval's name, as it prints it
    assert res["measure"][0] == ("rbp_p=0.5" if name == "rbp.p=0.5" else name)
    assert math.isclose(res["value"][0], value, rel_tol=1e-12), (name, res["value"][0], value)


def test_evaluation_level_does_not_floor_gains() -> None:
    """relevance_level (trec_eval -l) leaves nDCG / DCG gains alone, as trec_eval does;
    only a measure's own rel (ranx's -lN) floors them."""
    plain = fasteval.evaluate(QRELS, RUN, ["ndcg@3", "dcg", "rbp"], relevance_level=2)
    base = fasteval.evaluate(QRELS, RUN, ["ndcg@3", "dcg", "rbp"])
    assert plain["value"].to_list() == base["value"].to_list()
    assert fasteval.evaluate(QRELS, RUN, ["hits"], relevance_level=2)["value"][0] == 2.0


def _trec_eval(*flags: str) -> str:
    from fasteval.cli.trec_eval_cmd import parse_args, run_trec_eval

    buf = io.StringIO()
    args = [*flags, str(TREC / "qrels.test"), str(TREC / "results.test")]
    assert run_trec_eval(parse_args(args), out=buf) == 0
    return buf.getvalue()


def test_trec_eval_command_computes_rbp_resid_at_the_given_p() -> None:
    """trec_eval 10 reads -m rbp_resid.p=0.5 as p = 0.5 and prints rbp_resid_p=0.5."""
    got = [line.split("\t") for line in _trec_eval("-q", "-m", "rbp_resid.p=0.5").splitlines()]
    base = [line.split("\t") for line in _trec_eval("-q", "-m", "rbp_resid").splitlines()]
    assert {name for name, _, _ in got} == {"rbp_resid_p=0.5       "}
    assert [q for _, q, _ in got] == [q for _, q, _ in base]
    assert got[-1][2] != base[-1][2]  # computed at p = 0.5, not 0.9


@pytest.mark.parametrize(("name", "p"), [("rbp_resid", 0.9), ("rbp_resid.p=0.5", 0.5),
                                         ("rbp_resid.p=0.25", 0.25)])
def test_rbp_resid_hand_worked_at_p(name: str, p: float) -> None:
    """Ranks 1-3: judged relevant, outside the pool, judged nonrelevant. trec_eval's
    residual: p^3 (the ranks past the ranking) + (1 - p) * p (the unjudged rank 2)."""
    qrels = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "c"], "relevance": [1, 0]})
    run = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    got = fasteval.evaluate(qrels, run, [name])["value"][0]
    assert got == pytest.approx(p**3 + (1 - p) * p, abs=1e-15)


@pytest.mark.parametrize(("flag", "first"), [
    ("P.5,10", "P_5"), ("ndcg_cut.5", "ndcg_cut_5"), ("rbp.p=0.5", "rbp_p=0.5"),
    ("utility.1,-1,0,0", "utility_1,-1,0,0"), ("success.1,5", "success_1"),
    ("set_F.0.5", "set_F_0.5"),
])
def test_trec_eval_command_parameter_syntax(flag: str, first: str) -> None:
    lines = _trec_eval("-m", flag).splitlines()
    assert lines[0].split("\t")[0].strip() == first


@pytest.mark.parametrize(("flags", "names"), [
    # trec_eval 10: a measure takes the parameters of its first -m name.params
    (["-m", "P.5", "-m", "P.10"], ["P_5"]),
    (["-m", "P.5", "-m", "P"], ["P_5"]),
    (["-m", "P", "-m", "P.10,20"], ["P_10", "P_20"]),
    (["-m", "official", "-m", "P.5"], ["P_5"]),
    (["-m", "P.5", "-m", "official"], ["P_5"]),
    # fasteval's own spellings add members, whatever a name.params of the family says
    (["-m", "P_5", "-m", "P_10"], ["P_5", "P_10"]),
    (["-m", "P_5", "-m", "P.10"], ["P_5", "P_10"]),
    (["-m", "P.10", "-m", "P@5"], ["P_5", "P_10"]),
    (["-m", "P.5", "-m", "P_5"], ["P_5"]),
    (["-m", "P_2", "-m", "official"],
     ["P_2", "P_5", "P_10", "P_15", "P_20", "P_30", "P_100", "P_200", "P_500", "P_1000"]),
])
def test_trec_eval_command_first_parameters_win(flags: list[str], names: list[str]) -> None:
    lines = _trec_eval(*flags).splitlines()
    assert [ln.split("\t")[0].strip() for ln in lines if ln.startswith("P_")] == names


def test_trec_eval_command_relstring_length() -> None:
    """relstring.N prints the first N labels; trec_eval's relstring.0 prints ''."""
    lines = _trec_eval("-q", "-m", "relstring.0").splitlines()
    assert lines[0] == "relstring_0           \t301\t''"
    first = _trec_eval("-q", "-m", "relstring.3").splitlines()[0]
    assert first.endswith("\t'" + _trec_eval("-q", "-m", "relstring").splitlines()[0]
                          .split("'")[1][:3] + "'")
