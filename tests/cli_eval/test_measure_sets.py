"""trec_eval's measure sets (``all_trec``, ``official``) in ``fasteval.evaluate`` and
``fasteval eval``: a set gives its numeric members; ``relstring`` (text, printed by
``fasteval trec-eval``) is refused only when named itself."""

from __future__ import annotations

import pytest

import fasteval
from fasteval.cli import main
from fasteval.errors import ParameterError

QRELS = "datasets/trec/qrels.test"
RUN = "datasets/trec/results.test"


def _numeric(name: str) -> list[str]:
    return [m.name for m in fasteval.parse_measures(name) if m.family != "relstring"]


def test_all_trec_gives_its_numeric_members():
    res = fasteval.evaluate(QRELS, RUN, "all_trec")
    names = list(dict.fromkeys(res["measure"].to_list()))
    assert names == _numeric("all_trec")
    assert len(names) == 98  # all 99 but relstring


def test_sets_beside_other_names_and_from_a_generator():
    res = fasteval.evaluate(QRELS, RUN, (m for m in ["official", "ndcg@10"]))
    names = list(dict.fromkeys(res["measure"].to_list()))
    assert names == _numeric("official") + ["ndcg@10"]  # a set's members, then as asked


@pytest.mark.parametrize("measures", [["relstring"], ["map", "relstring.5"],
                                      ["all_trec", "relstring"]])
def test_relstring_named_itself_is_refused(measures):
    with pytest.raises(ParameterError, match="relstring is printed by `fasteval trec-eval`"):
        fasteval.Evaluator(QRELS, measures)


def test_cli_eval_all_trec(capsys):
    assert main(["eval", QRELS, RUN, "-m", "all_trec", "--quiet", "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [r.split(",")[1] for r in rows] == _numeric("all_trec")
    assert main(["eval", QRELS, RUN, "-m", "relstring", "--quiet"]) == 2
    assert "relstring is printed" in capsys.readouterr().err
