"""C/W/L measures, residuals, Compatibility and nDCG(gains)@k: hand-worked values,
cwl_eval itself (residuals, 1,000-rank horizon), parsing rules and properties.

Per-query agreement with ir_measures on random cases is in tests/core/test_references.py
(rows in tests/core/_references.py)."""

from __future__ import annotations

import logging
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.errors import ParameterError, UnknownMeasureError
from fasteval.measures import Measure, parse_measure, parse_measures
from tests._profile import examples

CWL = ["INST(max_rel=3)", "INST(T=2.5,max_rel=2)", "INSQ(max_rel=3)", "INSQ(T=0.5,max_rel=3)",
       "BPM(max_rel=3)@10", "BPM(T=2,max_rel=2)@5", "SDCG(max_rel=3)@10",
       "SDCG(min_rel=1,max_rel=3)@1200", "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@20",
       "NERR10(max_rel=3)", "NERR10(p=0.5,max_rel=2)", "NERR11(max_rel=3)",
       "NERR11(T=2,max_rel=2)", "RBP(rel=1)", "RBP(rel=2,p=0.99)"]


def _values(qrels, run, names, **kw) -> dict[tuple[str, str], float]:
    """Values by (query, canonical name); the results name each measure as asked."""
    res = fasteval.evaluate(qrels, run, names, **kw)
    return {(str(q), parse_measure(m).name): v
            for q, m, v in res.select("query_id", "measure", "value").iter_rows()}


def _table(qrels: dict, run: dict) -> tuple[pl.DataFrame, pl.DataFrame]:
    q = pl.DataFrame([(a, b, c) for a, d in qrels.items() for b, c in d.items()],
                     schema=["query_id", "doc_id", "relevance"], orient="row")
    r = pl.DataFrame([(a, b, c) for a, d in run.items() for b, c in d.items()],
                     schema=["query_id", "doc_id", "score"], orient="row")
    return q, r


# --------------------------------------------------------------------------- hand-worked

def test_sdcg_hand_worked() -> None:
    qrels, run = _table({"q": {"a": 1, "b": 0}}, {"q": {"a": 2.0, "b": 1.0}})
    got = _values(qrels, run, ["SDCG(max_rel=1)@2", "SDCG(max_rel=2)@2", "SDCG(max_rel=1)@1"])
    # C/W/L weights over two ranks: 1 and log2(2) / log2(3)
    assert got[("q", "sdcg_2(max_rel=1)")] == pytest.approx(1 / (1 + 1 / math.log2(3)), rel=1e-14)
    assert got[("q", "sdcg_2(max_rel=2)")] == pytest.approx(0.5 / (1 + 1 / math.log2(3)), rel=1e-14)
    assert got[("q", "sdcg_1(max_rel=1)")] == 1.0


def test_rbp_residual_hand_worked() -> None:
    # ranks: relevant, unjudged; worst case 1 * (1 - p) / (1 - p^1000) = 0.5; best case 1
    qrels, run = _table({"q": {"a": 1}}, {"q": {"a": 2.0, "x": 1.0}})
    got = _values(qrels, run, ["RBP(rel=1,p=0.5)", "RBP(rel=1,p=0.5,residual=True)"])
    assert got[("q", "rbp_p=0.5(rel=1)")] == pytest.approx(0.5, rel=1e-15)
    assert got[("q", "rbp_p=0.5(residual=True, rel=1)")] == pytest.approx(0.5, rel=1e-15)


def test_empty_and_unjudged_rankings() -> None:
    # only unjudged documents: every C/W/L measure is 0, and its residual is 1
    qrels, run = _table({"q": {"a": 3}}, {"q": {"x": 1.0, "y": 0.5}})
    names = [n.replace(")", ",residual=True)", 1) for n in CWL]
    got = _values(qrels, run, CWL + names)
    for (_, m), v in got.items():
        assert v == pytest.approx(1.0 if "residual=True" in m else 0.0, abs=1e-12), m


def test_complete_fills_missing_queries_with_zero_residuals(tmp_path) -> None:
    """complete=True (-c): a qrels query the run lacks is 0 in every measure, residuals
    included, as trec_eval clears its own residual (rbp_resid) for the placeholder: in
    memory, chunked (fill_missing) and under -J (no placeholder at all)."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"x": 2.0, "a": 1.0}}
    names = [n.replace(")", ",residual=True)", 1) for n in CWL] + ["rbp_resid", "unj@10"]
    for opts in ({}, {"judged_only": True}, {"compat": 9}):
        res = fasteval.evaluate(qrels, run, CWL + names, complete=True, **opts)
        filled = res.filter(pl.col("query_id") == "q2")
        assert filled.height == len(CWL + names)
        assert filled["value"].to_list() == [0.0] * filled.height, opts
        # q1 keeps its residuals (an unjudged document at rank 1, the ranks past its end)
        kept = res.filter((pl.col("query_id") == "q1")
                          & pl.col("measure").str.contains("residual=True", literal=True))
        assert kept.height == len(CWL) and (kept["value"] > 0).all(), opts
    pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]}
                 ).write_parquet(tmp_path / "q.parquet")
    pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["x", "a"], "score": [2.0, 1.0]}
                 ).write_parquet(tmp_path / "r.parquet")
    from fasteval.batch.api import evaluate_files

    chunked = evaluate_files(tmp_path / "q.parquet", tmp_path / "r.parquet", names,
                             max_rows_per_chunk=1, complete=True).per_query
    assert chunked.filter(pl.col("query_id") == "q2")["value"].to_list() == [0.0] * len(names)


def test_insq_with_all_relevant_is_one() -> None:
    docs = {f"d{i}": 1 for i in range(1000)}
    qrels, run = _table({"q": docs}, {"q": {d: -float(i) for i, d in enumerate(docs)}})
    got = _values(qrels, run, ["INSQ(max_rel=1)", "INST(max_rel=1)", "NERR10(max_rel=1)",
                               "INSQ(max_rel=1,residual=True)"])
    assert got[("q", "insq(max_rel=1)")] == pytest.approx(1.0, rel=1e-14)
    assert got[("q", "inst(max_rel=1)")] == pytest.approx(1.0, rel=1e-14)
    assert got[("q", "nerr10(max_rel=1)")] == 1.0  # stops at rank 1
    assert got[("q", "insq(max_rel=1, residual=True)")] == pytest.approx(0.0, abs=1e-14)


def test_compat_hand_worked() -> None:
    # ideal: a (grade 2), then b, c (grade 1; b retrieved, so first); ranking: b, x, a
    qrels, run = _table({"q": {"a": 2, "b": 1, "c": 1, "z": 0}}, {"q": {"b": 3.0, "x": 2.0, "a": 1.0}})
    p = 0.95
    overlap = p / 2 + 2 * p * p / 3  # depth 1: none; depth 2: b; depth 3: b and a
    got = _values(qrels, run, ["Compat", "Compat(normalize=False)", "Compat(p=0.5)"])
    assert got[("q", "compat")] == pytest.approx(overlap / (1 + p + p * p), rel=1e-14)
    assert got[("q", "compat_raw")] == pytest.approx(overlap / (1 + p + p * p), rel=1e-14)
    # the ideal ranking itself scores 1; normalised and raw differ when it is shorter
    qrels, run = _table({"q": {"a": 2, "b": 1}}, {"q": {"a": 3.0, "b": 2.0, "x": 1.0}})
    got = _values(qrels, run, ["Compat", "Compat(normalize=False)"])
    assert got[("q", "compat")] == pytest.approx(1.0, rel=1e-14)
    raw = (1 + p + p * p * 2 / 3) / (1 + p + p * p)
    assert got[("q", "compat_raw")] == pytest.approx(raw, rel=1e-14)


def test_compat_level_and_no_relevant() -> None:
    qrels, run = _table({"q": {"a": 2, "b": 1}, "r": {"a": 0}}, {"q": {"b": 2.0, "a": 1.0},
                                                                   "r": {"a": 1.0}})
    got = _values(qrels, run, ["Compat(rel=2)", "Compat"])
    # at level 2 the ideal ranking is [a]: overlap 0 at depth 1, 1 at depth 2
    p = 0.95
    assert got[("q", "compat(rel=2)")] == pytest.approx((p / 2) / (1 + p / 2), rel=1e-14)
    assert got[("r", "compat")] == 0.0


def test_ndcg_gains_at_k_hand_worked() -> None:
    qrels, run = _table({"q": {"a": 2, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}})
    got = _values(qrels, run, ["nDCG(gains={1: 3, 2: 1})@1", "nDCG(gains={1: 3, 2: 1})@2",
                               "nDCG(gains={1: 1, 2: 2})@2", "ndcg@2"])
    assert got[("q", "ndcg_cut_1(gains={1:3,2:1})")] == pytest.approx(1 / 3, rel=1e-15)
    dcg = 1 + 3 / math.log2(3)
    assert got[("q", "ndcg_cut_2(gains={1:3,2:1})")] == pytest.approx(dcg / (3 + 1 / math.log2(3)))
    assert got[("q", "ndcg_cut_2(gains={1:1,2:2})")] == got[("q", "ndcg_cut_2")] == 1.0


# --------------------------------------------------------------------------- cwl_eval itself

def _cwl_eval(qd: dict, rd: dict, kind: str, arg: float, lo: int, hi: int | None,
              rel: int | None) -> dict[str, tuple[float, float]]:
    """(value, residual) per query from cwl_eval's own classes, as ir_measures calls them."""
    from cwl.ruler import cwl_ruler
    from cwl.ruler.ranking import RankingMaker
    from ir_measures.providers.cwl_eval import IrmQrelHandler

    logging.getLogger("cwl").disabled = True
    handler = IrmQrelHandler(rel, None if rel is not None else lo, hi)
    for q, docs in qd.items():
        for d, g in docs.items():
            handler.put_value(q, d, max(g, 0))
    make = {"INST": cwl_ruler.INSTCWLMetric, "INSQ": cwl_ruler.INSQCWLMetric,
            "NERR10": cwl_ruler.NERReq10CWLMetric, "NERR11": cwl_ruler.NERReq11CWLMetric,
            "RBP": cwl_ruler.RBPCWLMetric, "SDCG": cwl_ruler.NDCGCWLMetric,
            "NERR8": cwl_ruler.NERReq8CWLMetric, "NERR9": cwl_ruler.NERReq9CWLMetric}
    out = {}
    for q, docs in rd.items():
        if q not in qd:
            continue
        maker = RankingMaker(q, handler, min_gain=0.0, max_gain=1.0, cost_dict=None,
                             max_cost=1.0, min_cost=1.0, max_n=1000)
        for d, _ in sorted(docs.items(), key=lambda t: -t[1]):
            maker.add(d, "_")
        if kind == "BPM":
            metric = cwl_ruler.BPMCWLMetric(arg[0], arg[1])
        else:
            metric = make[kind](arg)
        metric.residuals = True
        value = metric.measure(maker.get_ranking())
        out[q] = (value, metric.residual_expected_utility)
    return out


_RESIDUAL_CASES = [
    ("INST(T=1.5,max_rel=3)", "INST", 1.5, 0, 3, None),
    ("INSQ(max_rel=2)", "INSQ", 1.0, 0, 2, None),
    ("BPM(T=2,max_rel=3)@8", "BPM", (2.0, 8), 0, 3, None),
    ("SDCG(min_rel=1,max_rel=3)@10", "SDCG", 10, 1, 3, None),
    ("NERR8(max_rel=3)@10", "NERR8", 10, 0, 3, None),
    ("NERR9(max_rel=2)@30", "NERR9", 30, 0, 2, None),
    ("NERR10(p=0.8,max_rel=3)", "NERR10", 0.8, 0, 3, None),
    ("NERR11(T=0.7,max_rel=3)", "NERR11", 0.7, 0, 3, None),
    ("RBP(rel=2,p=0.95)", "RBP", 0.95, 0, None, 2),
]


def _long_case(seed: int, n_queries: int = 6, depth: int = 1300) -> tuple[dict, dict]:
    """Rankings past cwl_eval's 1,000-rank horizon, some short; unjudged and negative."""
    rng = np.random.default_rng(seed)
    qd: dict = {}
    rd: dict = {}
    for q in range(n_queries):
        n = int(rng.choice([0, 3, 40, 999, 1000, depth]))
        docs = [f"d{i}" for i in range(max(n, 50))]
        qd[f"q{q}"] = {d: int(rng.choice([-1, 0, 0, 1, 2, 3])) for d in docs
                       if rng.random() < 0.7}
        if n:
            scores = rng.permutation(n).astype(float) + 0.5
            rd[f"q{q}"] = {d: float(s) for d, s in zip(docs[:n], scores, strict=True)}
    return qd, rd


@pytest.mark.parametrize(("name", "kind", "arg", "lo", "hi", "rel"), _RESIDUAL_CASES,
                         ids=[c[0] for c in _RESIDUAL_CASES])
def test_values_and_residuals_match_cwl_eval(name, kind, arg, lo, hi, rel) -> None:
    pytest.importorskip("cwl")
    pytest.importorskip("ir_measures")
    checked = 0
    for seed in (1, 2):
        qd, rd = _long_case(seed)
        want = _cwl_eval(qd, rd, kind, arg, lo, hi, rel)
        qrels, run = _table(qd, rd)
        resid = name.replace(")", ",residual=True)", 1)
        got = fasteval.evaluate(qrels, run, [name, resid])
        by = {(q, m): v for q, m, v in got.select("query_id", "measure", "value").iter_rows()}
        m_value, m_resid = name, resid  # the results name them as asked
        for q, (v, r) in want.items():
            assert by[(q, m_value)] == pytest.approx(v, rel=1e-10, abs=1e-13), (q, name)
            assert by[(q, m_resid)] == pytest.approx(r, rel=1e-10, abs=1e-13), (q, resid)
            checked += 1
    assert checked >= 8


def test_trigamma_tail() -> None:
    scipy_special = pytest.importorskip("scipy.special")
    from fasteval.kernels.cwl import _inv_squares, _trigamma

    for x in (0.01, 0.5, 1.0, 2.0 / 3.0, 7.3, 10.0, 123.4, 1e4):
        assert _trigamma(x) == pytest.approx(float(scipy_special.polygamma(1, x)), rel=2e-15)
    for a, n in ((0.5, 999), (2.0, 40), (13.25, 500), (1000.0, 1), (2e9, 1000), (5e3, 900)):
        direct = math.fsum(1.0 / (a + i) ** 2 for i in range(n))
        assert _inv_squares(a, a + n) == pytest.approx(direct, rel=1e-13)


# --------------------------------------------------------------------------- names, errors

def test_names_and_round_trips() -> None:
    assert parse_measure("INST(T=2, max_rel=3)").name == "inst(T=2, max_rel=3)"
    assert parse_measure("inst(max_rel=3,T=1)").name == "inst(max_rel=3)"  # T = 1 is the default
    assert parse_measure("BPM(max_rel=3, T=2)@10").name == "bpm_10(T=2, max_rel=3)"
    assert parse_measure("NERR10(p=0.8,max_rel=3,residual=True)").name == (
        "nerr10(p=0.8, max_rel=3, residual=True)")
    assert parse_measure("Compat(normalize=False)") == parse_measure("compat_raw")
    assert parse_measure("compat_raw(normalize=True)") == parse_measure("Compat")
    assert parse_measure("nDCG(gains={0: 0, 2: 5})@10").name == "ndcg_cut_10(gains={0:0,2:5})"
    for name in ["inst(min_rel=1, max_rel=3, residual=True)", "sdcg_5(max_rel=2)",
                 "compat_raw(p=0.8)", "rbp_p=0.8(residual=True, rel=1)",
                 "ndcg_cut_10(gains={0:0,1:2.5})"]:
        m = parse_measure(name)
        assert m.name == name and parse_measure(m.name) == m


def test_grade_scale_in_either_order() -> None:
    """max_rel is checked against the min_rel given, wherever it is written."""
    a = parse_measure("INST(max_rel=-1, min_rel=-3)")
    b = parse_measure("INST(min_rel=-3, max_rel=-1)")
    assert a == b and a.name == "inst(min_rel=-3, max_rel=-1)"
    assert (a.option("min_rel"), a.option("max_rel")) == (-3.0, -1.0)
    direct = Measure("inst", options=(("max_rel", -1), ("min_rel", -3)))
    assert direct == a
    with pytest.raises(ParameterError, match=r"max_rel must be an integer > min_rel \(-1\), got -2"):
        Measure("inst", options=(("max_rel", -2), ("min_rel", -1)))


@pytest.mark.parametrize(("name", "match"), [
    ("INST", "needs max_rel="),
    ("INST(max_rel=-2, min_rel=-1)", "max_rel must be an integer > min_rel"),
    ("SDCG(max_rel=0)@5", r"max_rel must be an integer > min_rel \(0\), got 0"),
    ("SDCG@10", "needs max_rel="),
    ("BPM(max_rel=3)", "needs a cutoff"),
    ("INST(max_rel=2, min_rel=2)", "max_rel must be an integer > min_rel"),
    ("INST(max_rel=2.5)", "max_rel must be an integer"),
    ("INST(max_rel=3, residual=yes)", "residual must be True or False"),
    ("RBP(residual=True)", "applies to RBP with rel="),
    ("P(max_rel=3)@5", "unsupported|does not apply"),
    ("Compat(normalize=perhaps)", "normalize must be True or False"),
    ("P(gains={1: 2})@10", "gains= applies to nDCG"),
    ("INST(max_rel=3, max_rel=4)", "max_rel is given twice"),
    ("P(rel=1, rel=2)@5", "rel is given twice"),
])
def test_bad_names(name: str, match: str) -> None:
    with pytest.raises(UnknownMeasureError, match=match):
        parse_measures(name)


def test_bad_values_when_evaluating() -> None:
    qrels, run = _table({"q": {"a": 1}}, {"q": {"a": 1.0}})
    with pytest.raises(ParameterError, match="max_rel must be given"):
        fasteval.evaluate(qrels, run, [Measure("inst")])
    with pytest.raises(ParameterError, match="inst's T must be"):
        fasteval.evaluate(qrels, run, ["INST(T=0, max_rel=2)"])
    with pytest.raises(ParameterError, match="inst's T must be a number from 0.5 to 1e"):
        fasteval.evaluate(qrels, run, ["INST(T=0.2, max_rel=2)"])
    with pytest.raises(ParameterError, match="insq's T must be a number > 0 and <= 1e"):
        fasteval.evaluate(qrels, run, ["INSQ(T=1e300, max_rel=2)"])
    with pytest.raises(ParameterError, match="nerr10's p must be"):
        fasteval.evaluate(qrels, run, ["NERR10(p=1, max_rel=2)"])
    with pytest.raises(ParameterError, match="option"):
        Measure("inst", options=(("max_gain", 3),))
    with pytest.raises(ParameterError, match="tie_break='expected'"):
        fasteval.evaluate(qrels, run, ["INST(max_rel=2)"], tie_break="expected")


# --------------------------------------------------------------------------- properties

@st.composite
def _cases(draw):
    n = draw(st.integers(0, 15))
    grades = draw(st.lists(st.sampled_from([None, -1, 0, 1, 2, 3]), min_size=n, max_size=n))
    qrels = {f"d{i}": g for i, g in enumerate(grades) if g is not None} or {"j": 1}
    run = {f"d{i}": float(n - i) for i in range(n)} or {"zz": 1.0}
    return _table({"q": qrels}, {"q": run})


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_value_and_residual_bound_the_best_case(case) -> None:
    qrels, run = case
    resid = [n.replace(")", ",residual=True)", 1) for n in CWL]
    got = _values(qrels, run, CWL + resid)
    for low_name, res_name in zip(CWL, resid, strict=True):
        low = got[("q", parse_measure(low_name).name)]
        res = got[("q", parse_measure(res_name).name)]
        assert -1e-12 <= low <= 1 + 1e-12 and -1e-12 <= res <= 1 + 1e-12, low_name
        assert low + res <= 1 + 1e-12, low_name


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases(), st.integers(1, 5))
def test_unjudged_documents_at_the_end_change_only_the_residual(case, extra) -> None:
    qrels, run = case
    more = pl.concat([run, pl.DataFrame({"query_id": ["q"] * extra,
                                         "doc_id": [f"u{i}" for i in range(extra)],
                                         "score": [-1.0 - i for i in range(extra)]})])
    a = _values(qrels, run, CWL)
    b = _values(qrels, more, CWL)
    for k, v in a.items():  # unjudged ranks gain 0, as the ranks past the ranking do
        assert b[k] == pytest.approx(v, rel=1e-12, abs=1e-15), k
