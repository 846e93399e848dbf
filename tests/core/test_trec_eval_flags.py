"""trec_eval's flags on multi-query inputs, worked by hand from trec_eval 10's source.

Every expected value below is derived in the comment beside it from what trec_eval does
(``trec_eval.c``: the ``-c`` placeholder ranking and the names whose leftovers it clears;
``m_iprec_at_recall.c`` / ``m_11pt_avg.c``: ``num_rel_ret / num_ret`` before the walk;
9.0.8: a query missing from the run is not evaluated, and ``-c`` divides by the number of
qrels queries).
"""

from __future__ import annotations

import io
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fasteval
from fasteval.cli.trec_eval_cmd import parse_args, run_trec_eval


def _files(tmp_path: Path, qrels: str, run: str) -> tuple[str, str]:
    q = tmp_path / "qrels"
    r = tmp_path / "run"
    q.write_text(qrels)
    r.write_text(run)
    return str(q), str(r)


def te(tmp_path: Path, qrels: str, run: str, *flags: str) -> list[str]:
    """``fasteval trec-eval FLAGS QRELS RUN`` in-process: stdout lines (exit status 0)."""
    q, r = _files(tmp_path, qrels, run)
    buf = io.StringIO()
    assert run_trec_eval(parse_args([*flags, q, r]), out=buf) == 0
    return buf.getvalue().splitlines()


def line(name: str, qid: str, value: str) -> str:
    return f"{name:<22}\t{qid}\t{value}"


# two queries, each with one relevant document "a"; the run ranks "a" alone
QRELS_TWO = "q1 0 a 1\nq2 0 a 1\n"
RUN_TWO = "q1 Q0 a 1 2 r\nq2 Q0 a 1 1 r\n"


def test_judged_only_with_two_queries_does_not_crash() -> None:
    """-J without -M once computed s + (largest int64) and crashed from the second query on.
    Run in a child process: a crash must fail this test, not kill the test runner."""
    code = (
        "import fasteval\n"
        "r = fasteval.evaluate({'q1': {'a': 1}, 'q2': {'a': 1}, 'q3': {'b': 1}},"
        " {'q1': {'a': 2.0, 'x': 1.0}, 'q2': {'a': 1.0}, 'q3': {'y': 1.0, 'b': 0.5}},"
        " ['map', 'num_ret'], judged_only=True)\n"
        "print(r.get_column('value').to_list())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    # x and y are unjudged: dropped; each query keeps its one relevant document
    assert out.stdout.strip() == "[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]"


def test_judged_only_summary(tmp_path: Path) -> None:
    assert te(tmp_path, QRELS_TWO, RUN_TWO, "-J", "-m", "map") == [line("map", "all", "1.0000")]


def test_max_docs_beyond_int64_means_no_limit(tmp_path: Path) -> None:
    # trec_eval reads -M with atol, which saturates: the same as no limit
    out = te(tmp_path, QRELS_TWO, RUN_TWO, "-M", "99999999999999999999", "-m", "num_ret")
    assert out == [line("num_ret", "all", "2")]


def test_empty_ranking_after_J_is_nan_for_interpolated_precision(tmp_path: Path) -> None:
    # q2's only document is unjudged: -J leaves it nothing, and trec_eval computes
    # num_rel_ret / num_ret = 0 / 0 (x86: -nan) for the recall points whose cutoff is 0
    # documents (0.0 always); a point needing >= 1 relevant document is 0 (cutoff > 0 =
    # num_rel_ret). 11pt_avg adds the NaN of point 0.0, so it is -nan too, as is the mean.
    qrels = "q1 0 a 1\nq2 0 b 1\nq2 0 c 1\n"
    run = "q1 Q0 a 1 1 r\nq2 Q0 z 1 1 r\n"
    out = te(tmp_path, qrels, run, "-q", "-J", "-m", "iprec_at_recall.0,0.5", "-m", "11pt_avg",
             "-m", "num_ret", "-m", "P.1")
    assert out == [
        line("num_ret", "q1", "1"),
        line("iprec_at_recall_0.00", "q1", "1.0000"),
        line("iprec_at_recall_0.50", "q1", "1.0000"),
        line("P_1", "q1", "1.0000"),
        line("11pt_avg", "q1", "1.0000"),
        line("num_ret", "q2", "0"),
        line("iprec_at_recall_0.00", "q2", "  -nan"),
        line("iprec_at_recall_0.50", "q2", "0.0000"),  # lround(0.5 * 2) = 1 > 0
        line("P_1", "q2", "0.0000"),
        line("11pt_avg", "q2", "  -nan"),
        line("num_ret", "all", "1"),
        line("iprec_at_recall_0.00", "all", "  -nan"),
        line("iprec_at_recall_0.50", "all", "0.5000"),
        line("P_1", "all", "0.5000"),
        line("11pt_avg", "all", "  -nan"),
    ]


def test_api_gives_the_same_nan() -> None:
    res = fasteval.evaluate({"q1": {"a": 1}, "q2": {"b": 1}},
                            {"q1": {"a": 1.0}, "q2": {"z": 1.0}},
                            ["iprec_at_recall_0.00", "P@1"], judged_only=True)
    keys = zip(res["query_id"], res["measure"], strict=True)
    values = dict(zip(keys, res["value"], strict=True))
    assert values[("q1", "iprec_at_recall_0.00")] == 1.0
    assert math.isnan(values[("q2", "iprec_at_recall_0.00")])
    assert values[("q2", "P@1")] == 0.0


def test_filled_query_c_and_J(tmp_path: Path) -> None:
    # -c: q2 is scored against trec_eval's placeholder document, which -J removes: an empty
    # ranking, so -nan for recall point 0.0 (q2 has no relevant document: every cutoff is 0)
    qrels = "q1 0 a 1\nq2 0 b 0\n"
    run = "q1 Q0 a 1 1 r\n"
    out = te(tmp_path, qrels, run, "-q", "-c", "-J", "-m", "iprec_at_recall.0", "-m", "map")
    assert out == [
        line("map", "q1", "1.0000"),
        line("iprec_at_recall_0.00", "q1", "1.0000"),
        line("map", "q2", "0.0000"),
        line("iprec_at_recall_0.00", "q2", "  -nan"),
        line("map", "all", "0.5000"),
        line("iprec_at_recall_0.00", "all", "  -nan"),
    ]
    # without -J the placeholder stays: 0 / 1 = 0
    out = te(tmp_path, qrels, run, "-q", "-c", "-m", "iprec_at_recall.0")
    assert out[1:] == [line("iprec_at_recall_0.00", "q2", "0.0000"),
                       line("iprec_at_recall_0.00", "all", "0.5000")]


def test_compat9_complete_missing_query_contributes_zero(tmp_path: Path) -> None:
    # 9.0.8 does not evaluate q2 (missing from the run) but -c divides by the 2 qrels
    # queries: Rndcg = (1 + 0) / 2. Evaluating q2 (no relevant document) would give NaN.
    qrels = "q1 0 a 1\nq2 0 b 0\n"
    run = "q1 Q0 a 1 1 r\n"
    out = te(tmp_path, qrels, run, "-q", "-c", "-l", "0", "-m", "Rndcg", "--compat", "9")
    assert out == [line("Rndcg", "q1", "1.0000"), line("Rndcg", "all", "0.5000")]
    # gm_map: the missing query adds log(0.00001): exp((log 1 + log 1e-5) / 2)
    out = te(tmp_path, qrels, run, "-c", "-m", "gm_map", "--compat", "9")
    assert out == [line("gm_map", "all", f"{math.sqrt(0.00001):6.4f}")]


def test_compat9_api_zeroes_filled_queries() -> None:
    res = fasteval.evaluate({"q1": {"a": 1}, "q2": {"b": 0}}, {"q1": {"a": 1.0}},
                            ["Rndcg", "num_rel", "num_q", "P@1"], complete=True, compat=9,
                            relevance_level=0)
    q2 = res.filter(res["query_id"] == "q2")
    assert dict(zip(q2["measure"], q2["value"], strict=True)) == {
        "Rndcg": 0.0, "num_rel": 1.0, "num_q": 1.0, "P@1": 0.0}


def test_complete_parameterised_relstring_and_utility_keep_placeholder(tmp_path: Path) -> None:
    # trec_eval 10 clears the placeholder's leftovers for the names "relstring" and
    # "utility" only. relstring.20 is named relstring_20: q2's string stays "-" (the
    # placeholder is not in the pool). utility.1,-1,0,0 = 1*0 - 1*1 + 0 + 0 = -1.
    qrels = "q1 0 a 1\nq2 0 b 0\n"
    run = "q1 Q0 a 1 1 r\n"
    out = te(tmp_path, qrels, run, "-q", "-c", "-m", "relstring.20", "-m", "utility.1,-1,0,0")
    assert out == [
        line("relstring_20", "q1", "'1'"),
        line("utility_1,-1,0,0", "q1", "1.0000"),
        line("relstring_20", "q2", "'-'"),
        line("utility_1,-1,0,0", "q2", "-1.0000"),
        line("utility_1,-1,0,0", "all", "0.0000"),
    ]
    # the plain names are cleared: '' and 0
    out = te(tmp_path, qrels, run, "-q", "-c", "-m", "relstring", "-m", "utility")
    assert out[2:4] == [line("relstring", "q2", "''"), line("utility", "q2", "0.0000")]
    # -J removes the placeholder: '' and 1*0 - 1*0 + 2*num_rel(q1 has one) ...
    qrels3 = "q1 0 a 1\nq2 0 b 1\n"
    out = te(tmp_path, qrels3, run, "-q", "-c", "-J", "-m", "relstring.20",
             "-m", "utility.1,-1,2,0")
    # q2: num_ret 0, num_rel 1: 2 * (1 - 0) = 2
    assert out[2:] == [
        line("relstring_20", "q2", "''"),
        line("utility_1,-1,2,0", "q2", "2.0000"),
        line("utility_1,-1,2,0", "all", "1.5000"),
    ]


def test_api_keeps_intended_zero_for_parameterised_utility() -> None:
    res = fasteval.evaluate({"q1": {"a": 1}, "q2": {"b": 0}}, {"q1": {"a": 1.0}},
                            ["utility.1,-1,0,0", "num_ret", "rbp_resid", "unj@5"],
                            complete=True)
    q2 = res.filter(res["query_id"] == "q2")
    assert q2["value"].to_list() == [0.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("flags", [[], ["-c"], ["-J"], ["-c", "-J"], ["-M", "1", "-J", "-c"]])
def test_batch_fill_matches_in_memory(flags: list[str]) -> None:
    """The chunked path fills missing queries (Evaluator.fill_missing) as prepare_run does."""
    complete = "-c" in flags
    judged_only = "-J" in flags
    max_docs = 1 if "-M" in flags else None
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 0}}
    run = {"q1": {"a": 1.0, "z": 2.0}}
    measures = ["iprec_at_recall_0.00", "11pt_avg", "num_ret", "utility", "P@5"]
    ev = fasteval.Evaluator(qrels, measures, complete=complete, judged_only=judged_only,
                            max_docs=max_docs)
    whole = ev.evaluate(run, run_id="r")
    filled = ev.fill_missing(["q1"], "r")
    if complete:
        got = whole.filter(whole["query_id"] != "q1")
        a = got["value"].to_numpy()
        b = filled["value"].to_numpy()
        assert got["measure"].to_list() == filled["measure"].to_list()
        assert np.array_equal(np.isnan(a), np.isnan(b))
        assert np.array_equal(a[~np.isnan(a)], b[~np.isnan(b)])
        expect_nan = judged_only  # no placeholder under -J: 0 / 0
        assert bool(np.isnan(b[0])) == expect_nan
    else:
        assert whole["query_id"].unique().to_list() == ["q1"]


def test_zscores_missing_pair_and_off_mean_zero_deviation_are_trec_evals_missing_value(tmp_path):
    """``te_convert_to_zscore``: a (query, measure) pair absent from the file, a query absent
    from it, and a zero deviation with the value off the mean all give -1000000; a zero
    deviation at the mean gives 0; the summary averages (or sums) what is printed."""
    qrels = "q1 0 a 1\nq1 0 b 0\nq2 0 a 1\nq3 0 c 1\n"
    run = "q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\nq2 Q0 b 1 1 r\nq3 Q0 c 1 1 r\n"
    z = tmp_path / "z"
    z.write_text("q1 P_1 0.5 0.25\nq1 num_ret 2 0\nq2 num_ret 5 0\nq2 P_1 0 0\n")
    got = te(tmp_path, qrels, run, "-q", "-m", "P.1", "-m", "num_ret", "-Z", str(z))
    missing = "-1000000.0000"
    assert got == [
        "Z" + line("num_ret", "q1", "0.0000"),  # zero deviation, at the mean
        "Z" + line("P_1", "q1", "2.0000"),  # (1 - 0.5) / 0.25
        "Z" + line("num_ret", "q2", missing),  # zero deviation, 1 is not 5
        "Z" + line("P_1", "q2", "0.0000"),  # zero deviation, 0 is the mean
        "Z" + line("num_ret", "q3", missing),  # q3 is not in the file
        "Z" + line("P_1", "q3", missing),
        "Z" + line("num_ret", "all", "-2000000.0000"),  # a sum, as num_ret's summary is
        "Z" + line("P_1", "all", "-333332.6667"),  # (2 + 0 - 1000000) / 3
    ]


def test_zscores_with_complete_recount_num_rel(tmp_path):
    """-c's summary of num_rel (``te_calc_avg_num_rel``) replaces the accumulated values by
    the count of grade > 0 judgments in the whole qrels, z-scores or not: trec_eval -Z -c
    prints that count, as a double."""
    qrels = "q1 0 a 1\nq1 0 b 2\nq2 0 a 1\nq3 0 c 0\n"
    run = "q1 Q0 a 1 2 r\nq3 Q0 c 1 1 r\n"
    z = tmp_path / "z"
    z.write_text("q1 num_rel 1 1\nq2 num_rel 1 0\nq3 num_rel 0 0\n")
    got = te(tmp_path, qrels, run, "-q", "-c", "-m", "num_rel", "-Z", str(z))
    assert got == [
        "Z" + line("num_rel", "q1", "1.0000"),  # (2 - 1) / 1
        "Z" + line("num_rel", "q2", "0.0000"),  # zero deviation at the mean
        "Z" + line("num_rel", "q3", "0.0000"),
        "Z" + line("num_rel", "all", "3.0000"),  # the recount, not the sum of z-scores (1)
    ]
    # the same recount without -Z (an integer there)
    assert te(tmp_path, qrels, run, "-c", "-m", "num_rel") == [line("num_rel", "all", "3")]
