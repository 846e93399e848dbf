"""Every registry family against its reference implementation (tests/core/_references.py):
per-query values on random cases, ties included where the tool breaks them as trec_eval."""

from __future__ import annotations

import importlib
import math
import warnings
from pathlib import Path

import polars as pl
import pytest

import fasteval
from fasteval.measures import FAMILIES, parse_measure
from tests.core._gen import random_case, to_dicts
from tests.core._references import REFERENCES, Ref

ROOT = Path(__file__).resolve().parents[2]
SEEDS = (11, 12)
_TOOLS = {"pytrec_eval": "pytrec_eval", "ranx": "ranx", "ir_measures": "ir_measures",
          "gdeval": "ir_measures", "trectools": "trectools"}


def test_every_family_has_a_reference() -> None:
    assert set(REFERENCES) == {f.key for f in FAMILIES}
    for key, refs in REFERENCES.items():
        assert refs, key
        for ref in refs:
            if ref.tool == "hand":
                assert ref.test and (ROOT / ref.test.split("::")[0]).is_file(), (key, ref)
            else:
                assert ref.tool in _TOOLS, (key, ref)
                assert parse_measure(ref.ours).family == key, (key, ref.ours)


_ROWS = [pytest.param(ref, id=f"{key}-{ref.tool}-{ref.ours}")
         for key, refs in REFERENCES.items() for ref in refs if ref.tool != "hand"]


def _case(ref: Ref, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    qrels, run = random_case(seed, ties=ref.ties, negative=ref.tool in ("pytrec_eval", "gdeval"),
                             int_ids=ref.tool == "gdeval")
    common = set(qrels["query_id"].to_list()) & set(run["query_id"].to_list())
    keep = pl.col("query_id").is_in(list(common))
    if ref.tool == "trectools":  # binary judgments (see _references)
        qrels = qrels.with_columns((pl.col("relevance") > 0).cast(pl.Int64))
    return qrels.filter(keep), run.filter(keep)


def _theirs(ref: Ref, qrels: pl.DataFrame, run: pl.DataFrame) -> dict[str, float]:
    qd, rd = to_dicts(qrels, run)
    if ref.tool == "pytrec_eval":
        import pytrec_eval

        fam = ref.theirs.rsplit("_", 1)[0] if ref.theirs not in {f.key for f in FAMILIES} else (
            ref.theirs)
        got = pytrec_eval.RelevanceEvaluator(qd, {fam}).evaluate(rd)
        return {q: v[ref.theirs] for q, v in got.items()}
    if ref.tool == "ranx":
        import ranx

        rrun = ranx.Run(rd)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numba's cast warnings inside ranx
            vals = ranx.evaluate(ranx.Qrels(qd), rrun, ref.theirs, return_mean=False)
        return {q: float(v) for q, v in zip(rrun.keys(), vals, strict=True)}
    import ir_measures as irm

    provider = {"gdeval": irm.gdeval, "trectools": irm.trectools}.get(ref.tool, irm)
    out = {}
    for m in provider.iter_calc([irm.parse_measure(ref.theirs)], qd, rd):
        if m.query_id in rd:
            out[m.query_id] = m.value
    return out


@pytest.mark.parametrize("ref", _ROWS)
def test_matches_reference(ref: Ref) -> None:
    pytest.importorskip(_TOOLS[ref.tool])
    checked = 0
    for seed in SEEDS:
        qrels, run = _case(ref, seed)
        want = _theirs(ref, qrels, run)
        res = fasteval.evaluate(qrels, run, [ref.ours],
                                compat=9 if ref.tool == "pytrec_eval" else 10)
        got = {str(q): v for q, v in res.select("query_id", "value").iter_rows()}
        if ref.tool in ("gdeval", "trectools"):  # they leave out topics without a
            assert set(want) <= set(got)  # relevant document (in the top k)
            if ref.tool == "trectools":
                assert all(got[q] == 0.0 for q in set(got) - set(want)), ref
        else:
            assert set(want) == set(got), (ref, set(want) ^ set(got))
        for qid, v in want.items():
            ours = got[qid]
            if ref.via == "log":
                ours = math.log(max(ours, 1e-5))
            assert math.isclose(ours, v, rel_tol=1e-9, abs_tol=ref.tol), (ref, qid, ours, v)
            checked += 1
    assert checked >= 20


def test_hand_references_name_real_tests() -> None:
    for refs in REFERENCES.values():
        for ref in refs:
            if ref.tool == "hand":
                module = ref.test.removesuffix(".py").replace("/", ".")
                assert importlib.util.find_spec(module) is not None, ref
