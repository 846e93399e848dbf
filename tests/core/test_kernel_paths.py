"""Each registry row names its kernel path in both passes; the dispatch functions of those
paths and the rows are checked against each other (``registry.check_paths``)."""

from __future__ import annotations

import dataclasses

import pytest

import fasteval
from fasteval.errors import ParameterError
from fasteval.kernels import expected, ranking
from fasteval.measures import registry
from fasteval.measures.registry import FAMILIES, PATH_REL, check_paths, family

EXPECTED_FAMILIES = [
    "F1", "P", "Rprec", "Rprec_mult", "dcg", "dcg_burges", "gm_map", "hits", "judged", "map",
    "map_cut", "ndcg", "ndcg_burges", "ndcg_burges_cut", "ndcg_cut", "num_nonrel_judged_ret",
    "num_q", "num_rel", "num_rel_ret", "num_ret", "rbp", "rbp_cut", "rbp_raw", "recall",
    "recip_rank", "recip_rank_cut", "relative_P", "set_F", "set_P", "set_P_cut", "set_judged",
    "set_map", "set_recall", "set_relative_P", "success", "unj"]


def test_every_path_has_its_branch_and_no_other() -> None:
    """For every family, the dispatch function of each path it declares names its constant,
    and no dispatch function names a family that declares none of its paths."""
    check_paths("trec", ranking.PATHS)
    check_paths("expected", expected.PATHS)
    assert [f.key for f in FAMILIES if not f.trec] == ["relstring"]
    assert sorted(f.key for f in FAMILIES if f.expected) == EXPECTED_FAMILIES


def test_a_path_without_its_branch_fails_loudly(monkeypatch) -> None:
    wrong = dataclasses.replace(family("bpref"), trec=(PATH_REL,))
    monkeypatch.setattr(registry, "FAMILIES", tuple(
        wrong if f.key == "bpref" else f for f in FAMILIES))
    with pytest.raises(RuntimeError, match=(
            r"bpref declares the trec path 'rel', but fasteval\.kernels\.ranking\."
            r"_from_rel_profile has no branch on Code\.BPREF")):
        check_paths("trec", ranking.PATHS)


def test_a_branch_of_an_undeclared_path_fails_loudly(monkeypatch) -> None:
    monkeypatch.setitem(registry._BY_CONST, "NDCG", dataclasses.replace(family("ndcg"),
                                                                        expected=""))
    with pytest.raises(RuntimeError, match=(
            r"fasteval\.kernels\.expected\._one branches on Code\.NDCG, but ndcg declares no "
            r"expected path it serves \(own\)")):
        check_paths("expected", expected.PATHS)


def test_expected_refusal_names_the_families_with_a_path() -> None:
    with pytest.raises(ParameterError) as err:
        fasteval.Evaluator({"q": {"a": 1}}, ["map", "bpref"], tie_break="expected")
    assert str(err.value) == (
        "measures with tie_break='expected' must be of the families with an expected value "
        f"({', '.join(EXPECTED_FAMILIES)}), got ['bpref']")
    assert expected.unsupported_families(EXPECTED_FAMILIES) == []
