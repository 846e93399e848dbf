"""11pt_avg as trec_eval computes it: one reverse walk matching the recall points from the
last to the first (m_11pt_avg.c), summed in that order."""

from __future__ import annotations

import random
import warnings

import pytest

import fasteval
from tests._data import trec_eval_file


def _per_query(measure: str, **options) -> dict[str, float]:
    qrels = fasteval.read_qrels(trec_eval_file("qrels.test"))
    run = fasteval.read_run(trec_eval_file("results.test"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fasteval.evaluate(qrels, run, measure, **options)
    return {q: v for _, q, _, v in res.rows()}


def test_points_out_of_order_give_trec_eval_value() -> None:
    """On topic 302, 11pt_avg.0.5,0.25: the walk's pointer starts at 0.25 and passes 0.5's
    cutoff before reaching 0.25's, so 0.5 is left to the end and adds the top interpolated
    precision: trec_eval 10 prints 0.8958 there. The ascending points give the mean of
    iprec_at_recall_0.25 and _0.50 (0.7917 and 0.5417)."""
    unsorted = _per_query("11pt_avg.0.5,0.25")
    ascending = _per_query("11pt_avg.0.25,0.5")
    assert f"{unsorted['302']:.4f}" == "0.8958"
    assert f"{ascending['302']:.4f}" == "0.6667"
    assert ascending["302"] == pytest.approx((0.7916666666666666 + 0.5416666666666666) / 2)


def test_unsorted_points_warn() -> None:
    with pytest.warns(UserWarning, match="not in ascending order; trec_eval's value"):
        fasteval.parse_measures(["11pt_avg.0.5,0.25"])


def test_same_bits_as_trec_eval_9_summation() -> None:
    """pytrec_eval (trec_eval 9.0.8 inside) sums the points from the last to the first:
    ``compat=9`` gives its values bit for bit on random runs with ties and negative labels."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(5)
    qrels: dict = {}
    run: dict = {}
    for q in range(200):
        docs = [f"d{i}" for i in range(60)]
        qrels[f"q{q}"] = {d: rng.choice([0, 0, 1, 2, -1]) for d in rng.sample(docs, rng.randint(1, 40))}
        run[f"q{q}"] = {d: float(rng.randint(0, 8)) for d in rng.sample(docs, rng.randint(1, 60))}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"11pt_avg"}).evaluate(run)
    got = {q: v for _, q, _, v in fasteval.evaluate(qrels, run, "11pt_avg", compat=9).rows()}
    assert {q: ref[q]["11pt_avg"] for q in ref} == got
