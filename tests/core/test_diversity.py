"""Diversity measures over subtopic judgments (ndeval's definitions).

Oracles: cases worked by hand from the definitions (``fasteval.kernels.diversity``), values
that pyndeval 0.0.8 (ndeval.c 4.5 behind ir_measures' ``pyndeval`` provider) printed for a
fixed random case, and, where pyndeval is installed, a hypothesis differential test against it.
"""

from __future__ import annotations

import gzip
import io
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.diversity import DiversityEvaluator, evaluate_diversity, parse_diversity_measures
from fasteval.errors import InputError, ParameterError, UnknownMeasureError
from fasteval.io.subtopics import read_subtopic_qrels
from tests._profile import examples

LOG2_3 = math.log2(3)


def values(res: pl.DataFrame) -> dict[str, float]:
    return dict(res.select("measure", "value").rows())


# ------------------------------------------------------------------ hand-worked
# q1: subtopics s1 {d1, d2}, s2 {d1}, s3 {d3}; d4 judged, relevant to nothing. S = 3.
# Run d2, d1, d9 (unjudged), d3. alpha = 0.5: gains g = 1 (d2: s1), 1.5 (d1: s1 seen once
# -> 0.5, s2 -> 1), 0, 1 (d3: s3). Greedy ideal: d1 (2), d3 (1; d2 would give 0.5), d2 (0.5).
QRELS = {"q1": {"s1": {"d1": 1, "d2": 1, "d4": 0}, "s2": {"d1": 1}, "s3": {"d3": 1}}}
RUN = {"q1": {"d2": 4.0, "d1": 3.0, "d9": 2.0, "d3": 1.0}}


def test_hand_worked_values():
    disc = [1.0, 1 / LOG2_3, 0.5, 1 / math.log2(5), 1 / math.log2(6)]
    gains, ideal = [1.0, 1.5, 0.0, 1.0], [2.0, 1.0, 0.5]
    dcg = sum(g * d for g, d in zip(gains, disc, strict=False))
    idcg = sum(g * d for g, d in zip(ideal, disc, strict=False))
    err = sum(g / (i + 1) for i, g in enumerate(gains))
    ierr = sum(g / (i + 1) for i, g in enumerate(ideal))
    ideal_ideal_dcg = sum(3 * 0.5**i * disc[i] for i in range(5))
    ideal_ideal_err = sum(3 * 0.5**i / (i + 1) for i in range(5))
    nrbp = (1 + 1.5 * 0.5 + 1 * 0.125) * (1 - 0.5 * 0.5) / 3
    inrbp = (2 + 1 * 0.5 + 0.5 * 0.25) * (1 - 0.5 * 0.5) / 3
    # MAP-IA: s1 at ranks 1, 2 (1/1 + 2/2) / 2; s2 at rank 2 (1/2) / 1; s3 at rank 4 (1/4) / 1
    expected = {
        "alpha-nDCG@1": 1.0 / 2.0,
        "alpha-nDCG@2": (1 + 1.5 / LOG2_3) / (2 + 1 / LOG2_3),
        "alpha-nDCG@5": dcg / idcg,
        "alpha-DCG@5": dcg / ideal_ideal_dcg,
        "ERR-IA@5": err / ideal_ideal_err,
        "nERR-IA@5": err / ierr,
        "NRBP": nrbp,
        "nNRBP": nrbp / inrbp,
        "P-IA@5": (1 + 2 + 1) / (5 * 3),
        "strec@2": 2 / 3,
        "strec@5": 1.0,
        "MAP-IA": (1.0 + 0.5 + 0.25) / 3,
    }
    got = values(evaluate_diversity(QRELS, RUN, list(expected)))
    assert got == pytest.approx(expected, rel=1e-12)
    # the same figures as pyndeval 0.0.8 printed for this case
    assert got["alpha-nDCG@5"] == pytest.approx(0.825106, abs=1e-6)
    assert got["ERR-IA@5"] == pytest.approx(0.484115, abs=1e-6)
    assert got["nNRBP"] == pytest.approx(0.714286, abs=1e-6)


def test_greedy_ideal_breaks_ties_by_the_larger_doc_id():
    """ndeval's greedy ideal: among equal gains the larger id wins (d over a, then c over a),
    giving ideal gains 2, 1.5, 1.5, 0.5; a run can beat that ideal (values above 1), as in ndeval.
    Preferring the smaller id would give 2, 2, 1, 0.5 and alpha-nDCG@3 below 1."""
    docs = {"a": {1, 3}, "b": {1}, "c": {0, 2}, "d": {0, 3}}
    qrels = {"q": {s: {d: 1 for d, ss in docs.items() if s in ss} for s in range(4)}}
    run = {"q": {"a": 3.0, "c": 2.0, "d": 1.0}}
    got = values(evaluate_diversity(qrels, run, ["alpha-nDCG@3", "nERR-IA@3", "nNRBP", "alpha-nDCG@4"]))
    dcg3 = 2 + 2 / LOG2_3 + 1 * 0.5
    ideal = [2.0, 1.5, 1.5, 0.5]
    assert got["alpha-nDCG@3"] == pytest.approx(dcg3 / (2 + 1.5 / LOG2_3 + 1.5 * 0.5), rel=1e-12)
    assert got["nERR-IA@3"] == pytest.approx((2 + 2 / 2 + 1 / 3) / (2 + 1.5 / 2 + 1.5 / 3), rel=1e-12)
    ideal_dcg4 = sum(g * d for g, d in zip(ideal, [1, 1 / LOG2_3, 0.5, 1 / math.log2(5)], strict=True))
    assert got["alpha-nDCG@4"] == pytest.approx(dcg3 / ideal_dcg4, rel=1e-12)
    # pyndeval 0.0.8 on the same case
    assert got["alpha-nDCG@3"] == pytest.approx(1.017710467450658, rel=1e-12)
    assert got["nERR-IA@3"] == pytest.approx(1.0256410256410258, rel=1e-12)
    assert got["nNRBP"] == pytest.approx(1.0196078431372548, rel=1e-12)


def test_alpha_and_beta_parameters():
    # alpha = 1: a subtopic counts once; beta = 0: NRBP sees only rank 1
    got = values(evaluate_diversity(QRELS, RUN, ["alpha-nDCG(alpha=1)@2", "NRBP(alpha=1,beta=0)"]))
    # gains 1 (d2: s1), 1 (d1: s2 only new); ideal d1 (2), d3 (1)
    assert got["alpha-nDCG(alpha=1)@2"] == pytest.approx((1 + 1 / LOG2_3) / (2 + 1 / LOG2_3))
    assert got["NRBP(alpha=1,beta=0)"] == pytest.approx(1 * (1 - 0) / 3)


def test_a_parameter_given_twice_is_refused():
    """As fasteval.evaluate's parser: alpha=0.5,alpha=0.6 is not silently the last one."""
    for name in ("alpha-nDCG(alpha=0.5, alpha=0.6)@5", "NRBP(beta=0.2,alpha=0.3,BETA=0.4)"):
        with pytest.raises(ParameterError, match=r"parameters of .* must be each given once "
                           r"\((alpha|beta) is given twice\)"):
            parse_diversity_measures(name)
    got = values(evaluate_diversity(QRELS, RUN, ["alpha-nDCG(alpha=0.6)@5"]))
    assert got["alpha-nDCG(alpha=0.6)@5"] == pytest.approx(0.8173916043498267, rel=1e-12)


def test_queries_without_relevant_documents_and_missing_queries():
    qrels = {"q1": QRELS["q1"], "q2": {"s1": {"x": 0}}, "q3": {"s1": {"y": 1}}}
    run = {"q1": RUN["q1"], "q2": {"x": 1.0}, "q9": {"y": 1.0}}
    res = evaluate_diversity(qrels, run, ["alpha-nDCG@5", "nNRBP", "strec@5"])
    by = {(q, m): v for _, q, m, v in res.rows()}
    assert {q for q, _ in by} == {"q1", "q2"}  # q9 is not judged, q3 not in the run
    assert by[("q2", "alpha-nDCG@5")] == 0.0 and by[("q2", "strec@5")] == 0.0
    assert math.isnan(by[("q2", "nNRBP")])  # ndeval's 0 / 0
    full = evaluate_diversity(qrels, run, ["alpha-nDCG@5", "nNRBP"], complete=True)
    filled = {m: v for _, q, m, v in full.rows() if q == "q3"}
    assert filled == {"alpha-nDCG@5": 0.0, "nNRBP": 0.0}  # ndeval -c: a missing topic is 0
    ev = DiversityEvaluator(qrels, "strec@1")
    ev.evaluate(run)
    assert ev.report.dropped_not_in_qrels == 1 and ev.report.missing_from_run == 1


def test_options_max_docs_judged_only_relevance_level_ties():
    # max_docs=2 keeps d2, d1: strec@5 = 2/3; judged_only drops d9: d3 moves to rank 3
    assert values(evaluate_diversity(QRELS, RUN, "strec@5", max_docs=2))["strec@5"] == pytest.approx(2 / 3)
    j = values(evaluate_diversity(QRELS, RUN, ["P-IA@3", "alpha-nDCG@3"], judged_only=True))
    assert j["P-IA@3"] == pytest.approx(4 / 9)
    # relevance_level=2: nothing is relevant -> 0
    graded = {"q1": {"s1": {"d1": 2, "d2": 1}, "s2": {"d2": 1}}}
    got = values(evaluate_diversity(graded, {"q1": {"d2": 2.0, "d1": 1.0}}, ["strec@1", "strec@2"],
                                    relevance_level=2))
    assert got == {"strec@1": 0.0, "strec@2": 1.0}
    # equal scores: trec_eval's rule, doc id descending, puts d2 (s1 and s2) first;
    # tie_break="input" keeps d1 (s1 only) first
    tied = {"q1": {"d1": 1.0, "d2": 1.0}}
    assert values(evaluate_diversity(graded, tied, "strec@1"))["strec@1"] == 1.0
    assert values(evaluate_diversity(graded, tied, "strec@1", tie_break="input"))["strec@1"] == 0.5
    with pytest.raises(ParameterError, match="tie_break"):
        evaluate_diversity(graded, tied, "strec@1", tie_break="expected")


def test_cutoffs_beyond_the_ranking_and_beyond_ndeval_depth():
    got = values(evaluate_diversity(QRELS, RUN, ["P-IA@10", "strec@30", "alpha-nDCG@30", "alpha-nDCG@5"]))
    assert got["P-IA@10"] == pytest.approx(4 / 30)  # k in the denominator, as ndeval
    assert got["strec@30"] == 1.0
    assert got["alpha-nDCG@30"] == got["alpha-nDCG@5"]  # nothing after rank 4 on either side


def test_huge_cutoffs_cost_the_ranking_not_the_cutoff():
    """Cutoffs far past the ranking: the run's and the ideal's sums stop at their last
    rank; P-IA divides by the cutoff; alpha-DCG and ERR-IA divide by the "ideal ideal"
    ranking's sum to the cutoff (scratch of the cutoff's size made @10**8 take GBs)."""
    qrels = {"q1": {"s1": {"d1": 1, "d2": 1}, "s2": {"d2": 1}}}
    run = {"q1": {"d2": 4.0, "d1": 3.0}}
    k = 100_000_000
    got = values(evaluate_diversity(qrels, run, [f"alpha-nDCG@{k}", f"ERR-IA@{k}", f"P-IA@{k}",
                                                 f"strec@{k}", f"alpha-DCG(alpha=1)@{k}"]))
    assert got[f"alpha-nDCG@{k}"] == 1.0  # d2 (gain 2) then d1 (0.5) is the greedy ideal
    # ERR-IA: (2 + 0.5 / 2) / (2 * sum of 0.5**i / (i + 1)) = 2.25 / (2 * 2 ln 2)
    assert got[f"ERR-IA@{k}"] == pytest.approx(2.25 / (4 * math.log(2)), rel=1e-12)
    assert got[f"P-IA@{k}"] == pytest.approx(3 / (2 * k), rel=1e-12)
    assert got[f"strec@{k}"] == 1.0
    # alpha = 1: only the first document of a subtopic gains: (2 + 0) / (2 * 1)
    assert got[f"alpha-DCG(alpha=1)@{k}"] == 1.0
    small = values(evaluate_diversity(qrels, run, ["alpha-DCG(alpha=0)@3", "ERR-IA@3"]))
    # alpha = 0: gains 2 and 1 over 2 * (1 + 1/log2(3) + 1/2); ERR-IA: 2.25 / (2 * 4/3)
    assert small["alpha-DCG(alpha=0)@3"] == pytest.approx(
        (2 + 1 / LOG2_3) / (2 * (1 + 1 / LOG2_3 + 0.5)), rel=1e-12)
    assert small["ERR-IA@3"] == pytest.approx(2.25 / (2 * (1 + 0.25 + 0.25 / 3)), rel=1e-12)


def test_integer_ids_runs_and_aggregate():
    qrels = pl.DataFrame({"query_id": [1, 1, 1, 2], "subtopic": [1, 2, 2, 1], "doc_id": [10, 10, 11, 10],
                          "relevance": [1, 1, 1, 1]})
    run = pl.DataFrame({"query_id": [1, 1, 2, 1, 1, 2], "doc_id": [11, 10, 10, 10, 11, 12],
                        "score": [2.0, 1.0, 1.0, 2.0, 1.0, 3.0], "run_id": ["a", "a", "a", "b", "b", "b"]})
    res = evaluate_diversity(qrels, run, ["strec@1", "alpha-nDCG@2"])
    assert res.schema["query_id"] == pl.Int64
    means = {(r, m): v for r, m, v in fasteval.aggregate(res).rows()}
    # run a: q1 strec@1 = 1/2 (11 covers s2), q2 = 1; run b: q1 = 1 (10 covers both), q2 = 0 (12)
    assert means[("a", "strec@1")] == 0.75 and means[("b", "strec@1")] == 0.5
    assert means[("b", "alpha-nDCG@2")] == pytest.approx((1.0 + 0.0) / 2)
    text = evaluate_diversity(qrels, run.with_columns(pl.col("doc_id").cast(pl.Utf8)), ["strec@1"])
    assert text["value"].to_list() == res.filter(pl.col("measure") == "strec@1")["value"].to_list()


# ------------------------------------------------------------------ names
def test_names_aliases_and_canonical_spelling():
    names = [m.name for m in parse_diversity_measures([
        "alpha-nDCG@10", "alpha_nDCG@10", "a-ndcg@10", "ALPHA_NDCG(alpha=0.5)@10", "alpha_nDCG(alpha=0.7)@20",
        "alpha_DCG@5", "ERR_IA@20", "nERR-IA@20", "NRBP", "nrbp(beta=0.8)", "nNRBP(alpha=0.6,beta=0.9)",
        "P_IA@5", "StRecall@10", "s-recall@10", "subtopic_recall@5", "AP_IA", "MAP-IA",
    ])]
    assert names == [
        "alpha-nDCG@10", "alpha-nDCG(alpha=0.7)@20", "alpha-DCG@5", "ERR-IA@20", "nERR-IA@20", "NRBP",
        "NRBP(beta=0.8)", "nNRBP(alpha=0.6,beta=0.9)", "P-IA@5", "strec@10", "strec@5", "MAP-IA",
    ]


@pytest.mark.parametrize(("name", "error", "match"), [
    ("alpha-nDCG", ParameterError, "@k"),
    ("NRBP@10", ParameterError, "whole ranking"),
    ("strec@0", ParameterError, "from 1 to 2147483647, got '0'"),
    ("strec@x", ParameterError, "from 1 to 2147483647, got 'x'"),
    ("strec@2147483648", ParameterError, "from 1 to 2147483647, got '2147483648'"),
    ("alpha-nDCG@10000000000000000000000", ParameterError, "from 1 to 2147483647"),
    ("strec@\u00b2", ParameterError, "from 1 to 2147483647"),
    ("alpha-nDCG(alpha=1.5)@10", ParameterError, "between 0 and 1"),
    ("alpha-nDCG(alpha=x)@10", ParameterError, "between 0 and 1"),
    ("P-IA(alpha=0.3)@10", ParameterError, "none"),
    ("alpha-nDCG(rel=2)@10", ParameterError, "relevance level"),
    ("alpha-ndgc@10", UnknownMeasureError, "did you mean"),
    ("ndcg@10", UnknownMeasureError, "fasteval.evaluate"),
])
def test_bad_names(name, error, match):
    with pytest.raises(error, match=match):
        parse_diversity_measures(name)


def test_evaluate_points_to_evaluate_diversity():
    with pytest.raises(UnknownMeasureError, match="evaluate_diversity"):
        fasteval.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, ["alpha-nDCG@10"])
    with pytest.raises(UnknownMeasureError, match="did you mean"):
        fasteval.parse_measures(["ndcg@10x"])


# ------------------------------------------------------------------ reading subtopic qrels
TEXT = b"# TREC Web track diversity qrels\n1 1 clueweb-a 1\n1 2 clueweb-a 2\n\n1 2  clueweb-b\t0\n2 1 x 1\n"


def test_read_trec_text_plain_gzip_and_stream(tmp_path):
    expected = [("1", "1", "clueweb-a", 1), ("1", "2", "clueweb-a", 2), ("1", "2", "clueweb-b", 0),
                ("2", "1", "x", 1)]
    plain = tmp_path / "qrels.diversity.txt"
    plain.write_bytes(TEXT)
    packed = tmp_path / "qrels.diversity.txt.gz"
    packed.write_bytes(gzip.compress(TEXT))
    for src in (plain, str(packed), io.BytesIO(TEXT)):
        assert read_subtopic_qrels(src).rows() == expected
    cr = tmp_path / "mac.txt"
    cr.write_bytes(TEXT.replace(b"\n", b"\r"))
    assert read_subtopic_qrels(cr).rows() == expected


def test_read_tables(tmp_path):
    frame = pl.DataFrame({"qid": [1, 1], "iteration": ["a", "b"], "docno": ["d1", "d1"], "rel": [1, 0]})
    assert read_subtopic_qrels(frame).columns == ["query_id", "subtopic", "doc_id", "relevance"]
    frame.write_parquet(tmp_path / "s.parquet")
    frame.write_csv(tmp_path / "s.csv")
    frame.write_ndjson(tmp_path / "s.jsonl")
    got = [read_subtopic_qrels(tmp_path / f"s.{ext}").rows() for ext in ("parquet", "jsonl")]
    assert got[0] == got[1] == [(1, "a", "d1", 1), (1, "b", "d1", 0)]
    assert read_subtopic_qrels(tmp_path / "s.csv").rows() == [("1", "a", "d1", 1), ("1", "b", "d1", 0)]
    assert read_subtopic_qrels(frame.to_pandas()).rows() == got[0]
    assert read_subtopic_qrels(frame.to_arrow()).rows() == got[0]
    renamed = frame.rename({"iteration": "facet_name"})
    assert read_subtopic_qrels(renamed, subtopic_col="facet_name").height == 2


def test_reader_errors(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"1 1 a 1\n1 1 b\n")
    with pytest.raises(InputError, match=r"line 2.*exactly 4"):
        read_subtopic_qrels(bad)
    bad.write_bytes(b"1 1 a 1\n# c\n1 1 b x\n")
    with pytest.raises(InputError, match=r"line 3.*integer"):
        read_subtopic_qrels(bad)
    bad.write_bytes(b"1 1 a 1\n1 1 a 2\n")
    with pytest.raises(InputError, match=r"line 2.*duplicate"):
        read_subtopic_qrels(bad)
    with pytest.warns(fasteval.DataWarning, match="dropped 1"):
        assert read_subtopic_qrels(bad, duplicates="keep_best").rows() == [("1", "1", "a", 2)]
    with pytest.raises(InputError, match="no subtopic column"):
        read_subtopic_qrels(pl.DataFrame({"query_id": [1], "doc_id": ["a"], "relevance": [1]}))
    with pytest.raises(InputError, match="file not found"):
        read_subtopic_qrels(tmp_path / "missing.txt")
    with pytest.raises(ParameterError, match="TREC text"):
        read_subtopic_qrels(io.BytesIO(TEXT), subtopic_col="x")
    with pytest.raises(InputError, match="null"):
        read_subtopic_qrels(pl.DataFrame({"query_id": [1, None], "subtopic": [1, 1], "doc_id": ["a", "b"],
                                          "relevance": [1, 1]}))


# ------------------------------------------------------------------ against ndeval (pyndeval)
def make_case(seed: int = 20, n_queries: int = 30) -> tuple[list[tuple], list[tuple]]:
    """Random subtopic qrels (grades 0-2) and a run with distinct scores (pyndeval breaks
    ties its own way), one run query the judgments lack."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(n_queries):
        qid = f"q{q}"
        n_sub = int(rng.integers(1, 7))
        docs = [f"d{d}" for d in rng.choice(60, size=int(rng.integers(3, 25)), replace=False)]
        for s in range(1, n_sub + 1):
            for d in docs:
                if rng.random() < 0.35:
                    qrels.append((qid, str(s), d, int(rng.integers(0, 3))))
        ranked = rng.choice(60, size=int(rng.integers(0, 30)), replace=False)
        scores = rng.permutation(len(ranked)) + rng.random()
        run.extend((qid, f"d{d}", float(sc)) for d, sc in zip(ranked, scores, strict=True))
    run.append(("qx", "d1", 1.0))
    return qrels, run


def as_tables(qrels: list[tuple], run: list[tuple]) -> tuple[pl.DataFrame, pl.DataFrame]:
    return (pl.DataFrame(qrels, schema=["query_id", "subtopic", "doc_id", "relevance"], orient="row"),
            pl.DataFrame(run, schema=["query_id", "doc_id", "score"], orient="row"))


# Means over the 28 evaluated queries of make_case(), as pyndeval 0.0.8 computes them
PYNDEVAL_MEANS = {
    "alpha-nDCG@5": 0.08983884790547295, "alpha-nDCG@10": 0.14469995581962802,
    "alpha-nDCG@20": 0.17019863785098016, "alpha-DCG@10": 0.12307278361352038,
    "ERR-IA@10": 0.08927769985227883, "ERR-IA@20": 0.09578095710246251,
    "nERR-IA@5": 0.07685148523726293, "nERR-IA@20": 0.1111745518138596,
    "NRBP": 0.06014486614440102, "nNRBP": 0.0683195397856609, "P-IA@5": 0.03928571428571429,
    "P-IA@20": 0.03354166666666668, "strec@5": 0.1904761904761905, "strec@10": 0.3696428571428571,
    "MAP-IA": 0.05162378692586971,
}
# the same with alpha=0.8, beta=0.7
PYNDEVAL_MEANS_08 = {
    "alpha-nDCG(alpha=0.8)@10": 0.16868467329179712, "NRBP(alpha=0.8,beta=0.7)": 0.10903975856485847,
    "nNRBP(alpha=0.8,beta=0.7)": 0.11702250041373854, "nERR-IA(alpha=0.8)@10": 0.11635232830216416,
}


@pytest.mark.parametrize("expected", [PYNDEVAL_MEANS, PYNDEVAL_MEANS_08])
def test_random_case_matches_pyndeval_printed_means(expected):
    qrels, run = as_tables(*make_case())
    res = evaluate_diversity(qrels, run, list(expected))
    assert res.get_column("query_id").n_unique() == 28
    got = dict(fasteval.aggregate(res).select("measure", "value").rows())
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


_NDEVAL = ["alpha-nDCG@2", "alpha-nDCG@5", "alpha-nDCG@20", "alpha-DCG@3", "alpha-DCG@20", "ERR-IA@2",
           "ERR-IA@10", "nERR-IA@1", "nERR-IA@7", "NRBP", "nNRBP", "P-IA@1", "P-IA@20", "strec@1",
           "strec@20", "MAP-IA"]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n_queries=st.integers(1, 12),
       alpha=st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]), beta=st.sampled_from([0.0, 0.5, 0.8]))
def test_differential_against_pyndeval(seed, n_queries, alpha, beta):
    pyndeval = pytest.importorskip("pyndeval")
    qrels, run = make_case(seed, n_queries)
    if not qrels:
        return
    names = [f"{m.split('@')[0]}(alpha={alpha},beta={beta})" if m in ("NRBP", "nNRBP") else
             (m.replace("@", f"(alpha={alpha})@") if not m.startswith(("P-IA", "strec")) and m != "MAP-IA" else m)
             for m in _NDEVAL]
    q, r = as_tables(qrels, run)
    mine = {(qid, m): v for _, qid, m, v in evaluate_diversity(q, r, names).rows()}
    theirs = pyndeval.ndeval(qrels, run, _NDEVAL, alpha=alpha, beta=beta)
    assert {qid for qid, _ in mine} == set(theirs)
    for qid, row in theirs.items():
        for plain, name in zip(_NDEVAL, names, strict=True):
            ref = row[plain]
            if plain in ("alpha-DCG@1", "ERR-IA@1"):
                continue  # ndeval leaves these unnormalised
            got = mine[(qid, name)]  # results carry the names asked for
            assert (math.isnan(got) and math.isnan(ref)) or got == pytest.approx(ref, rel=1e-9, abs=1e-12), \
                (qid, plain, got, ref)


# ------------------------------------------------------------------ properties
@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_greedy_ideal_ranking_scores_one(seed):
    """Ranking the judged documents in the greedy ideal order gives alpha-nDCG, nERR-IA and
    nNRBP of exactly 1 (at alpha = 0.5 every gain is a sum of powers of two)."""
    qrels, _ = make_case(seed, 6)
    q, _ = as_tables(qrels, [])
    run_rows = []
    for qid in q.get_column("query_id").unique().to_list():
        rel = q.filter((pl.col("query_id") == qid) & (pl.col("relevance") >= 1))
        docs = {d: set(rel.filter(pl.col("doc_id") == d)["subtopic"].to_list()) for d in rel["doc_id"].unique()}
        gain: dict[str, float] = {}
        order = []
        while len(order) < len(docs):
            left = sorted(d for d in docs if d not in order)
            best = max(left, key=lambda d: (sum(gain.get(s, 1.0) for s in docs[d]), d))
            order.append(best)
            for s in docs[best]:
                gain[s] = gain.get(s, 1.0) * 0.5
        run_rows += [(qid, d, float(len(order) - i)) for i, d in enumerate(order)]
    if not run_rows:
        return
    run = pl.DataFrame(run_rows, schema=["query_id", "doc_id", "score"], orient="row")
    res = evaluate_diversity(q, run, ["alpha-nDCG@3", "alpha-nDCG@30", "nERR-IA@10", "nNRBP"])
    assert res["value"].to_list() == [1.0] * res.height


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_bounds_and_monotone_cutoffs(seed):
    q, r = as_tables(*make_case(seed, 8))
    if q.height == 0:
        return
    names = ["strec@1", "strec@5", "strec@20", "P-IA@5", "alpha-DCG@5", "alpha-DCG@20", "ERR-IA@5",
             "ERR-IA@20", "NRBP", "MAP-IA"]
    wide = evaluate_diversity(q, r, names).pivot(on="measure", index="query_id", values="value")
    for name in names:
        assert wide[name].is_between(0.0, 1.0).all(), name
    assert (wide["strec@1"] <= wide["strec@5"]).all() and (wide["strec@5"] <= wide["strec@20"]).all()
    # renumbering the subtopics (reversing their order) changes nothing (MAP-IA sums its
    # subtopics in another order: equal to rounding)
    renamed = q.with_columns((100 - pl.col("subtopic").cast(pl.Int64)).alias("subtopic"))
    again = evaluate_diversity(renamed, r, names).pivot(on="measure", index="query_id", values="value")
    assert again.drop("MAP-IA").equals(wide.drop("MAP-IA"))
    assert again["MAP-IA"].to_list() == pytest.approx(wide["MAP-IA"].to_list(), rel=1e-14)


def _hostile_case(seed: int) -> tuple[list[tuple], list[tuple]]:
    """Judgments with negative grades, documents judged 0 for every subtopic, queries whose
    every judgment is non-relevant, subtopic ids shared across queries, queries of the run
    without judgments; runs with tied, equal and negative scores."""
    rng = np.random.default_rng(seed)
    qrels, run, seen = [], [], set()
    for q in range(int(rng.integers(1, 6))):
        qid, kind = f"q{q}", int(rng.integers(0, 5))
        docs = [f"d{d}" for d in rng.choice(15, size=int(rng.integers(1, 10)), replace=False)]
        if kind != 4:  # kind 4: no judgments, only run rows
            for s in range(int(rng.integers(1, 5))):
                sid = str(int(rng.integers(0, 1000))) if rng.random() < 0.3 else f"s{s}"
                for d in docs:
                    if rng.random() < 0.5 and (qid, sid, d) not in seen:
                        seen.add((qid, sid, d))
                        grades = [-1, 0] if kind == 3 else [-2, -1, 0, 0, 1, 2, 3]
                        qrels.append((qid, sid, d, int(rng.choice(grades))))
        n = int(rng.integers(0, 12))
        ranked = rng.choice(15, size=n, replace=False)
        scores = rng.integers(-2, 2, size=n).astype(float) if rng.random() < 0.5 else rng.normal(size=n)
        run.extend((qid, f"d{d}", float(s)) for d, s in zip(ranked, scores, strict=True))
    return qrels, run


def _trec_order(run: list[tuple]) -> list[tuple]:
    """Distinct scores in fasteval's order (score descending, ties by doc id descending):
    pyndeval breaks ties by doc id ascending."""
    by: dict[str, list] = {}
    for q, d, s in run:
        by.setdefault(q, []).append((s, d))
    out = []
    for q, rows in by.items():
        rows.sort(reverse=True)
        out.extend((q, d, float(len(rows) - i)) for i, (_, d) in enumerate(rows))
    return out


@pytest.mark.parametrize("relevance_level", [1, 2, 0, -1])
def test_hostile_judgments_and_ties_match_pyndeval(relevance_level):
    """pyndeval (ndeval.c) on the same rankings, ties ordered as fasteval orders them."""
    pyndeval = pytest.importorskip("pyndeval")
    compared = 0
    for seed in range(60):
        qrels, run = _hostile_case(seed)
        if not qrels or not run:
            continue
        rng = np.random.default_rng(seed)
        alpha, beta = float(rng.choice([0.0, 0.5, 0.8, 1.0])), float(rng.choice([0.0, 0.5, 1.0]))
        names = [f"{m}(alpha={alpha},beta={beta})" if m in ("NRBP", "nNRBP") else
                 (m.replace("@", f"(alpha={alpha})@") if not m.startswith(("P-IA", "strec"))
                  and m != "MAP-IA" else m) for m in _NDEVAL]
        q, r = as_tables(qrels, run)
        mine = {(qid, m): v for _, qid, m, v in
                evaluate_diversity(q, r, names, relevance_level=relevance_level).rows()}
        theirs = pyndeval.RelevanceEvaluator(qrels, _NDEVAL, relevance_level=relevance_level,
                                             alpha=alpha, beta=beta).evaluate(_trec_order(run))
        assert {qid for qid, _ in mine} == set(theirs), seed
        for qid, row in theirs.items():
            for plain, name in zip(_NDEVAL, names, strict=True):
                got, ref = mine[(qid, name)], row[plain]  # named as asked
                assert (math.isnan(got) and math.isnan(ref)) or \
                    got == pytest.approx(ref, rel=1e-9, abs=1e-12), (seed, qid, plain, got, ref)
                compared += 1
    assert compared > 500


def test_duplicates_keep_best_applies_to_the_judgments():
    """The duplicate-judgment error says "pass duplicates='keep_best'", but
    evaluate_diversity(..., duplicates='keep_best') applied it to the run only and raised
    the same error; it now keeps each triple's highest judgment, as pyndeval scores the
    deduplicated judgments."""
    qrels = [("q1", "s1", "a", 0), ("q1", "s1", "a", 2), ("q1", "s2", "b", 1),
             ("q1", "s2", "b", -1), ("q1", "s3", "c", 1)]
    run = [("q1", "a", 1.0), ("q1", "b", 0.5), ("q1", "c", 0.2)]
    q, r = as_tables(qrels, run)
    names = ["strec@1", "strec@2", "alpha-nDCG@2", "ERR-IA@3", "MAP-IA"]
    with pytest.raises(InputError, match=r"duplicate \(query_id, subtopic, doc_id\) triple "
                       r"\('q1', 's1', 'a'\); pass duplicates='keep_best'"):
        evaluate_diversity(q, r, names)
    with pytest.warns(fasteval.errors.DataWarning, match="dropped 2 duplicate"):
        got = dict(evaluate_diversity(q, r, names, duplicates="keep_best")
                   .select("measure", "value").rows())
    best = [("q1", "s1", "a", 2), ("q1", "s2", "b", 1), ("q1", "s3", "c", 1)]
    pyndeval = pytest.importorskip("pyndeval")
    assert got == pytest.approx(pyndeval.ndeval(best, run, names)["q1"], rel=1e-12)
    # the same as reading the judgments with keep_best first
    with pytest.warns(fasteval.errors.DataWarning):
        kept = read_subtopic_qrels(q, duplicates="keep_best")
    assert got == dict(evaluate_diversity(kept, r, names).select("measure", "value").rows())


# Six documents over subtopics 1, 4, 5, 7, 10, 12: at alpha = 0.3 two documents' gains are
# equal sums in exact arithmetic whose float values depend on the order the subtopics are
# summed in, and that decides the greedy ideal ranking.
_ORDER_CASE = [("q1", "7", "d0", 1), ("q1", "4", "d0", 1), ("q1", "1", "d0", 1),
               ("q1", "7", "d1", 1), ("q1", "4", "d1", 1), ("q1", "10", "d1", 1),
               ("q1", "7", "d2", 1), ("q1", "4", "d2", 1), ("q1", "12", "d2", 1),
               ("q1", "5", "d3", 1), ("q1", "7", "d4", 1), ("q1", "4", "d4", 1),
               ("q1", "1", "d4", 1), ("q1", "5", "d4", 1), ("q1", "12", "d4", 1),
               ("q1", "5", "d5", 1), ("q1", "12", "d5", 1)]
_ORDER_NAMES = ["alpha-nDCG(alpha=0.3)@5", "nERR-IA(alpha=0.3)@5", "nNRBP(alpha=0.3)", "MAP-IA"]


def test_subtopics_are_summed_in_ndeval_numeric_order():
    """ndeval numbers subtopics (natural numbers) and sums a document's gains in that
    order, whether the ids are read as numbers or as text: summing in text order ("10"
    before "4") picks another greedy ideal ranking (alpha-nDCG@5 0.8337, not 0.8336)."""
    run = pl.DataFrame([("q1", f"d{d}", float(6 - d)) for d in range(6)],
                       schema=["query_id", "doc_id", "score"], orient="row")
    text = pl.DataFrame(_ORDER_CASE, schema=["query_id", "subtopic", "doc_id", "relevance"],
                        orient="row")
    numbers = text.with_columns(pl.col("subtopic").cast(pl.Int64))
    as_text = evaluate_diversity(text, run, _ORDER_NAMES)
    as_numbers = evaluate_diversity(numbers, run, _ORDER_NAMES)
    assert as_text.get_column("value").to_list() == as_numbers.get_column("value").to_list()
    assert as_text.get_column("value")[0] == pytest.approx(0.8336402689276875, rel=1e-12)


def test_subtopic_order_matches_ndeval_via_pyndeval():
    """pyndeval numbers subtopics in order of first appearance; a leading unjudged query
    naming 1..12 makes that ndeval's numeric order, and the values then agree exactly."""
    pyndeval = pytest.importorskip("pyndeval")
    run = [("q1", f"d{d}", float(6 - d)) for d in range(6)]
    numbering = [("zz", str(i), "dx", 0) for i in range(1, 13)]
    plain = ["alpha-nDCG@5", "nERR-IA@5", "nNRBP", "MAP-IA"]
    ref = pyndeval.RelevanceEvaluator(numbering + _ORDER_CASE, plain, alpha=0.3).evaluate(run)["q1"]
    q, r = as_tables(_ORDER_CASE, run)
    got = dict(evaluate_diversity(q, r, _ORDER_NAMES).select("measure", "value").rows())
    for p, name in zip(plain, _ORDER_NAMES, strict=True):
        assert got[parse_diversity_measures(name)[0].name] == pytest.approx(ref[p], rel=1e-14), p


@pytest.mark.parametrize(("ids", "order"), [
    (["10", "9", "2"], ["2", "9", "10"]),  # numbers: by value
    (["a", "10", "01", "9", "1"], ["01", "1", "9", "10", "a"]),  # then text, ids that are not numbers last
])
def test_subtopics_are_numbered_by_value_then_text(ids, order):
    """Subtopic i of ``ids`` has i + 1 relevant documents, so the per-subtopic counts in
    numbering order show the order."""
    from fasteval.diversity import _prepare_subtopics

    rows = [("q1", s, f"d{j}", 1) for i, s in enumerate(ids) for j in range(i + 1)]
    table = pl.DataFrame(rows, schema=["query_id", "subtopic", "doc_id", "relevance"], orient="row")
    counts = _prepare_subtopics(table, 1).nrel_sub.tolist()
    assert counts == [ids.index(s) + 1 for s in order]
