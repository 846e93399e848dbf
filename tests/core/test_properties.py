"""Hypothesis properties over the registry: row order, value ranges, cutoff locality."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.measures import FAMILIES, parse_measures
from fasteval.measures.registry import LENGTH
from tests._profile import examples

# every numeric family of the registry with its default parameters, and at a small cutoff
ALL = parse_measures(
    [f.sample() for f in FAMILIES if f.params != LENGTH]
    + [f.sample(3) for f in FAMILIES if f.cutoff]
    + ["RBP(rel=1, residual=True)", "INST(max_rel=2, residual=True)",
       "SDCG(min_rel=1, max_rel=3, residual=True)@3", "nDCG(gains={0: 0, 1: 2, 2: 1})@3"]
)
BOUNDED = {f.key for f in FAMILIES if f.bounded}
COUNTS = {f.key for f in FAMILIES if f.integer}


@st.composite
def cases(draw):
    n_docs = draw(st.integers(1, 12))
    docs = [f"d{i}" for i in range(n_docs)]
    labels = draw(st.lists(st.sampled_from([-1, 0, 0, 1, 2, 3, None]), min_size=n_docs,
                           max_size=n_docs))
    qrels = [("q", d, g) for d, g in zip(docs, labels, strict=True) if g is not None]
    if not qrels:
        qrels = [("q", "judged", 1)]
    retrieved = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
    scores = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=len(retrieved),
                           max_size=len(retrieved)))
    qdf = pl.DataFrame(qrels, schema=["query_id", "doc_id", "relevance"], orient="row")
    rdf = pl.DataFrame({"query_id": ["q"] * len(retrieved), "doc_id": retrieved,
                        "score": scores})
    return qdf, rdf


def _values(qrels, run, measures=ALL, **kw):
    res = fasteval.evaluate(qrels, run, measures, **kw)
    return dict(zip(res["measure"].to_list(), res["value"].to_list(), strict=True))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(case, rnd) -> None:
    qrels, run = case
    perm_q = list(range(qrels.height))
    perm_r = list(range(run.height))
    rnd.shuffle(perm_q)
    rnd.shuffle(perm_r)
    a = _values(qrels, run)
    b = _values(qrels[perm_q], run[perm_r])
    for k in a:
        assert a[k] == b[k] or (np.isnan(a[k]) and np.isnan(b[k])), k


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_values_in_range(case) -> None:
    qrels, run = case
    for name, v in _values(qrels, run).items():
        family = fasteval.parse_measure(name).family
        if family in BOUNDED and not np.isnan(v):
            assert -1e-12 <= v <= 1 + 1e-12, (name, v)
        if family in COUNTS:
            assert v >= 0 and v == int(v)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.integers(1, 5))
def test_unjudged_docs_below_cutoff_do_not_change_cutoff_measures(case, k) -> None:
    qrels, run = case
    at_k = parse_measures([f.sample(k) for f in FAMILIES if f.cutoff])
    base = _values(qrels, run, at_k)
    low = float(run["score"].min()) - 1.0
    extra = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["zz1", "zz2", "zz3"],
                          "score": [low, low - 1, low - 2]})
    more = _values(qrels, pl.concat([run, extra]), at_k)
    # the extra docs are unjudged and rank below everything: nothing in the top k changes
    # while at least k docs were already retrieved
    if run.height >= k:
        assert base == more


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.booleans(), st.sampled_from([9, 10]), st.integers(0, 2))
def test_filled_query_is_zero_in_every_measure(case, judged_only, compat, level) -> None:
    """complete=True: a qrels query the run lacks is 0 in every family (residuals too),
    except num_q (1) and num_rel (its judgments); -J leaves it empty, where trec_eval's
    interpolated precision is 0 / 0 (NaN)."""
    qrels, run = case
    qrels = pl.concat([qrels, pl.DataFrame({"query_id": ["m"] * 2, "doc_id": ["d0", "x"],
                                            "relevance": [2, 0]})])
    res = fasteval.evaluate(qrels, run, ALL, complete=True, judged_only=judged_only,
                            compat=compat, relevance_level=level)
    filled = res.filter(pl.col("query_id") == "m")
    assert filled.height == len(ALL)
    nan_ok = {"iprec_at_recall", "11pt_avg"} if judged_only and compat == 10 else set()
    for name, v in filled.select("measure", "value").iter_rows():
        family = fasteval.parse_measure(name).family
        if family == "num_q":
            assert v == 1.0
        elif family == "num_rel":
            assert v == (2.0 if level == 0 else 1.0), name
        elif family in nan_ok and np.isnan(v):
            continue
        else:
            assert v == 0.0, (name, v)
