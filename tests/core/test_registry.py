"""The registry drives the parser, the planner, the kernels' dispatch and the docs."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import fasteval
from fasteval.errors import FastevalError, ParameterError, UnknownMeasureError
from fasteval.kernels import ranking
from fasteval.measures import BY_KEY, FAMILIES, Measure, known_names, parse_measure, parse_measures
from fasteval.measures.plan import plan_slots
from fasteval.measures.registry import FLOAT_CUTS, LENGTH, Code, by_code, measure_table

MEASURES_PAGE = Path(__file__).resolve().parents[2] / "docs" / "measures.md"


def test_docs_measure_table_is_the_registry() -> None:
    text = MEASURES_PAGE.read_text(encoding="utf-8")
    m = re.search(r"<!-- BEGIN GENERATED: measures -->\n(.*?)\n<!-- END GENERATED: measures -->",
                  text, re.S)
    assert m is not None, "docs/measures.md lacks the measure table markers"
    assert m.group(1) == measure_table(), (
        "docs/measures.md's measure table is stale: run `python -m fasteval._docs`")


def test_every_family_has_a_kernel() -> None:
    done = ranking.implemented_codes()
    missing = [f.key for f in FAMILIES if f.params != LENGTH and f.code not in done]
    assert missing == []


def test_codes_and_constants() -> None:
    assert len({f.code for f in FAMILIES}) == len(FAMILIES)
    for f in FAMILIES:
        assert Code[f.const] == f.code and by_code(f.code) is f


def test_a_family_without_a_kernel_is_refused_when_planning(monkeypatch) -> None:
    monkeypatch.setitem(BY_KEY, "bpref", dataclasses.replace(BY_KEY["bpref"], trec=()))
    with pytest.raises(UnknownMeasureError, match="bpref"):
        plan_slots(parse_measures(["P@5", "bpref"]))
    with pytest.raises(UnknownMeasureError, match="no kernel"):
        fasteval.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["bpref"])


def test_every_alias_parses_to_its_family() -> None:
    for f in FAMILIES:
        for alias in f.aliases:
            cut = "0.5" if f.params == FLOAT_CUTS else "10"
            required = [f"{o.name}=3" for o in f.options if o.required]
            args = f"({', '.join(required)})" if required else ""
            name = alias.name.removesuffix("@k") + args + (f"@{cut}" if alias.cut else "")
            for spelling in (name, name.lower(), name.upper()):
                if spelling in BY_KEY and spelling != f.key:
                    continue  # a family key wins over an alias spelled alike (F1 vs f1)
                head = spelling.split("@")[0]
                if alias.cut and head in BY_KEY and head != alias.name.removesuffix("@k"):
                    continue  # with a cutoff too (rbp@10 is trec_eval's rbp, not RBP@10)
                got = parse_measures(spelling)
                assert {m.family for m in got} == {f.key}, (spelling, got)
                if alias.p is not None and spelling != f.key:
                    assert {m.param for m in got} == {alias.p}


def test_every_cutoff_family_takes_at_k() -> None:
    for f in FAMILIES:
        if f.cutoff:
            required = tuple((o.name, 3.0) for o in f.options if o.required)
            assert parse_measure(f.sample(7)) == Measure(f.key, cutoff=7, options=required)
            assert f.sample((f.default or (10,))[0]) in known_names()


def test_parameter_ranges_come_from_the_registry() -> None:
    for f in FAMILIES:
        if f.param is None:
            continue
        bad = [v for v in (-1.0, 0.0, 1.0, 2.0) if not f.param.ok(v)]
        for v in bad:
            with pytest.raises(ParameterError, match=re.escape(f"{f.key}'s {f.param.name}")):
                fasteval.Evaluator({"q": {"a": 1}}, [Measure(f.key, param=v)])


def test_plan_is_typed_and_numba_takes_it() -> None:
    plan = plan_slots(parse_measures(["P@5", "map", "ndcg@3", "bpref", "utility"]), 1, 3)
    assert plan.codes.dtype == np.int64 and plan.params.dtype == np.float64
    assert plan.rel_depth == -1 and plan.dcg_depth == 3 and plan.generic
    labels = np.array([1, 0, 2, -1], dtype=np.int32)
    grades = np.array([2, 1, 0], dtype=np.int32)
    out = np.zeros((1, 5))
    ranking.score_queries(labels, np.array([0, 4]), grades, np.array([0]), np.array([3]),
                          plan, out, 1)
    assert out[0, 0] == pytest.approx(2 / 5) and out[0, 1] == pytest.approx((1 + 2 / 3) / 2)
    assert out[0, 4] == 2 - 2  # utility 1,-1,0,0: 2 relevant retrieved, 2 not


def test_suggestions_come_from_the_registry() -> None:
    with pytest.raises(FastevalError, match="did you mean.*'hits@10'"):
        parse_measure("hitz@10")
