"""Differential test against pytrec_eval (trec_eval 9.x C code) on random runs with many
score ties, graded and negative labels, unjudged documents and queries missing on either
side. pytrec_eval embeds the 9.x recall-point rounding, so fasteval runs with compat=9."""

from __future__ import annotations

import math

import pytest

import fasteval
from tests.core._gen import PYTREC_FAMILIES, random_case, to_dicts

pytrec_eval = pytest.importorskip("pytrec_eval")

FAMILIES = PYTREC_FAMILIES


def _compare(seed: int, level: int, **gen) -> int:
    qrels, run = random_case(seed, **gen)
    qd, rd = to_dicts(qrels, run)
    ev = pytrec_eval.RelevanceEvaluator(qd, set(FAMILIES), relevance_level=level)
    want = ev.evaluate(rd)
    ours = fasteval.evaluate(
        qrels, run, FAMILIES, relevance_level=level, compat=9
    )
    got = {(str(q), m): v for q, m, v in ours.select("query_id", "measure", "value").iter_rows()}
    checked = 0
    assert {str(q) for q, _ in got} == set(want)
    for qid, values in want.items():
        for name, v in values.items():
            if (qid, name) not in got:
                continue
            g = got[(qid, name)]
            assert math.isclose(g, v, rel_tol=0, abs_tol=1e-9) or (
                math.isnan(g) and math.isnan(v)
            ), (seed, qid, name, g, v)
            checked += 1
    return checked


@pytest.mark.parametrize("seed", range(8))
def test_matches_pytrec_eval_with_ties(seed: int) -> None:
    assert _compare(seed, 1) > 1000


@pytest.mark.parametrize("seed", range(3))
def test_matches_pytrec_eval_relevance_level_2(seed: int) -> None:
    assert _compare(100 + seed, 2) > 1000


def test_matches_pytrec_eval_integer_ids() -> None:
    # integer doc ids: ties break on the decimal spelling, as trec_eval sees them
    assert _compare(7, 1, int_ids=True) > 1000


@pytest.mark.parametrize("seed", range(4))
def test_scores_equal_in_float32_tie_under_compat_9(seed: int) -> None:
    """pytrec_eval (9.x code) holds scores as C floats: scores that differ only past single
    precision tie and are ordered by doc id. compat=9 does the same; compat=10 reads
    doubles, as trec_eval 10 does, and so ranks them apart."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    rows, qrels = [], []
    for q in range(40):
        base = rng.choice([1.0, 0.5, 12.25, -3.0, 1e-30])
        for d in range(12):  # clusters of scores a few double ulps apart, distinct as doubles
            score = float(base) * (1 + int(rng.integers(0, 6)) * 1e-9) + float(rng.integers(0, 3))
            rows.append((f"q{q}", f"d{d:02d}", score))
            qrels.append((f"q{q}", f"d{d:02d}", int(rng.integers(-1, 3))))
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    qr = pl.DataFrame(qrels, schema=["query_id", "doc_id", "relevance"], orient="row")
    qd, rd = to_dicts(qr, run)
    measures = ["map", "recip_rank", "P_5", "ndcg_cut_5", "bpref", "Rprec"]
    want = pytrec_eval.RelevanceEvaluator(qd, set(measures)).evaluate(rd)
    got = fasteval.evaluate(qr, run, measures, compat=9)
    for q, m, v in got.select("query_id", "measure", "value").iter_rows():
        assert math.isclose(v, want[q][m], abs_tol=1e-12), (seed, q, m, v, want[q][m])
    doubles = fasteval.evaluate(qr, run, measures, compat=10)
    assert doubles.get_column("value").to_list() != got.get_column("value").to_list()


def test_gm_per_query_is_the_value_where_pytrec_eval_gives_its_log() -> None:
    """Per query, pytrec_eval reports gm_map / gm_bpref as trec_eval keeps them inside,
    ln(max(value, 1e-5)); fasteval's per-query value is AP (bpref) itself, and the
    aggregate is trec_eval's geometric mean of the floored values (docs/evaluate.md, *Results out*)."""
    qd = {"q": {"a": 1, "b": 1, "c": 0}, "r": {"x": 1}}
    rd = {"q": {"a": 1.0, "b": 0.5, "c": 0.7, "d": 2.0}, "r": {"y": 1.0}}
    theirs = pytrec_eval.RelevanceEvaluator(qd, {"gm_map", "gm_bpref", "map", "bpref"}).evaluate(rd)
    res = fasteval.evaluate(qd, rd, ["gm_map", "gm_bpref"])
    ours = {(q, m): v for q, m, v in res.select("query_id", "measure", "value").iter_rows()}
    for q in qd:
        for gm, base in (("gm_map", "map"), ("gm_bpref", "bpref")):
            assert ours[(q, gm)] == theirs[q][base]  # q: (1/2 + 2/4) / 2; r: 0
            assert theirs[q][gm] == math.log(max(theirs[q][base], 1e-5))
    summary = dict(fasteval.aggregate(res).select("measure", "value").iter_rows())
    assert summary["gm_map"] == pytest.approx(math.exp((math.log(0.5) + math.log(1e-5)) / 2))
