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
