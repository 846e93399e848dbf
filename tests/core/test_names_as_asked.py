"""Results carry the measure names the user wrote: ``ndcg@10`` stays
``ndcg@10`` in every dialect, a Measure object and trec_eval's lists and sets carry trec_eval's
names, two spellings of one measure are refused; ``fasteval eval`` without ``-m`` prints
trec_eval's default set with trec_eval's values; labels round-trip through every output
format of ``fasteval eval`` into ``compare --results``."""

from __future__ import annotations

import io
import json

import polars as pl
import pytest

import fasteval
from fasteval.cli import main
from fasteval.compare._data import load_results
from fasteval.errors import ParameterError
from fasteval.measures import parse_labelled
from tests._data import SHIPPED_TREC, read_text, trec_eval_file

QRELS = str(SHIPPED_TREC / "qrels.test")
RUN = str(SHIPPED_TREC / "results.test")

# each dialect's spelling, and the canonical name of the measure it spells
DIALECTS = {
    "trec_eval": {"ndcg_cut_10": "ndcg_cut_10", "recip_rank": "recip_rank", "P_5": "P_5",
                  "num_rel_ret": "num_rel_ret"},
    "ir_measures": {"nDCG@10": "ndcg_cut_10", "RR": "recip_rank", "P(rel=2)@5": "P_5(rel=2)",
                    "NumRelRet": "num_rel_ret"},
    "ranx": {"ndcg@10": "ndcg_cut_10", "mrr": "recip_rank", "precision@5": "P_5",
             "hits@10-l2": "hits_10(rel=2)"},
}


@pytest.fixture(scope="module")
def tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    return fasteval.read_qrels(QRELS), fasteval.read_run(RUN)


@pytest.fixture(scope="module")
def canonical(tables) -> dict[tuple[str, str], float]:
    """Every measure of DIALECTS scored under its canonical name (Measure objects)."""
    names = sorted({c for spellings in DIALECTS.values() for c in spellings.values()})
    res = fasteval.evaluate(*tables, [fasteval.parse_measure(n) for n in names])
    assert sorted(res["measure"].unique().to_list()) == names  # objects: canonical names
    return {(q, m): v for q, m, v in res.select("query_id", "measure", "value").iter_rows()}


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_each_dialect_names_its_results_as_asked(tables, canonical, dialect: str) -> None:
    spellings = DIALECTS[dialect]
    res = fasteval.evaluate(*tables, list(spellings))
    assert res["measure"].unique(maintain_order=True).to_list() == list(spellings)
    for (q, label), v in {(q, m): v for q, m, v in
                          res.select("query_id", "measure", "value").iter_rows()}.items():
        assert v == canonical[(q, spellings[label])], (q, label)
    assert res.height == 3 * len(spellings)  # three topics, one row per measure each
    ev = fasteval.Evaluator(tables[0], list(spellings))
    assert ev.labels == ev.measure_names == list(spellings)
    assert [m.name for m in ev.measures] == list(spellings.values())
    assert ev.evaluate(tables[1]).equals(res)


def test_aggregate_keeps_the_names_and_aggregates_as_the_measure_named(tables) -> None:
    res = fasteval.evaluate(*tables, ["NumRelRet", "mrr", "gm_map"])
    agg = dict(fasteval.aggregate(res).select("measure", "value").iter_rows())
    assert list(agg) == ["NumRelRet", "mrr", "gm_map"]
    # the trec_eval 10 summary of this pair (tests/data/conformance/trec_eval/out.test)
    assert agg["NumRelRet"] == 131.0  # summed, as num_rel_ret
    assert round(agg["mrr"], 4) == 0.4064  # the mean
    assert round(agg["gm_map"], 4) == 0.1051  # the geometric mean


def test_lists_and_sets_carry_trec_eval_names(tables) -> None:
    def labels(measures) -> list[str]:
        return fasteval.Evaluator(tables[0], measures).labels

    assert labels(["P"]) == ["P_5", "P_10", "P_15", "P_20", "P_30", "P_100", "P_200", "P_500",
                             "P_1000"]
    assert labels(["P.5,10", "ndcg_cut.3", "iprec_at_recall.0"]) == [
        "P_5", "P_10", "ndcg_cut_3", "iprec_at_recall_0.00"]
    assert labels(["rbp.95"]) == ["rbp.95"]  # ranx's spelling, not a trec_eval list
    # a member also named by its own spelling takes that name, in the set's place
    official = labels(["official", "P@10"])
    assert official[official.index("P_5") + 1] == "P@10" and "P_10" not in official
    assert labels(["P@10", "P"])[:2] == ["P@10", "P_5"]
    assert labels([fasteval.parse_measure("ndcg@10"), "mrr"]) == ["ndcg_cut_10", "mrr"]


@pytest.mark.parametrize(("measures", "both"), [
    (["ndcg@10", "ndcg_cut_10"], ["ndcg@10", "ndcg_cut_10"]),
    (["nDCG@10", "map", "ndcg@10"], ["nDCG@10", "ndcg@10"]),
    (["RR", "mrr"], ["RR", "mrr"]),
    ([fasteval.parse_measure("P_5"), "P@5"], ["P_5", "P@5"]),
])
def test_two_spellings_of_one_measure_are_refused(tables, measures, both) -> None:
    canon = fasteval.parse_measure(both[1]).name
    message = (f"measures must be one name per measure (both are {canon}; results carry the "
               f"name asked for), got {both!r}")
    with pytest.raises(ParameterError) as exc:
        fasteval.evaluate(*tables, measures)
    assert str(exc.value) == message
    with pytest.raises(ParameterError, match="one name per measure"):
        fasteval.Evaluator(tables[0], measures)


def test_one_name_repeated_is_one_column(tables) -> None:
    res = fasteval.evaluate(*tables, ["ndcg@10", " ndcg@10 ", "map", "ndcg@10"])
    assert res["measure"].unique(maintain_order=True).to_list() == ["ndcg@10", "map"]
    assert res.height == 6


def test_blanks_inside_a_name_are_one_space() -> None:
    pairs = parse_labelled(["RBP(rel=2,\tp=0.5)", "P( rel=2 )@5", "  P @ 3\n"])
    assert [label for label, _ in pairs] == ["RBP(rel=2, p=0.5)", "P( rel=2 )@5", "P @ 3"]
    assert [m.name for _, m in pairs] == ["rbp_p=0.5(rel=2)", "P_5(rel=2)", "P_3"]


def test_diversity_results_carry_the_names_asked() -> None:
    qrels = pl.DataFrame({"query_id": [1, 1, 1], "subtopic": [1, 2, 2],
                          "doc_id": ["a", "a", "b"], "relevance": [1, 1, 1]})
    run = pl.DataFrame({"query_id": [1, 1], "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    res = fasteval.evaluate_diversity(qrels, run, ["a-ndcg@2", "ERR_IA@2"])
    assert res.select("measure", pl.col("value").round(4)).rows() == [
        ("a-ndcg@2", 0.8406), ("ERR_IA@2", 0.7)]
    with pytest.raises(ParameterError, match=r"both are alpha-nDCG@2.*\['a-ndcg@2', 'alpha-nDCG@2'\]"):
        fasteval.evaluate_diversity(qrels, run, ["a-ndcg@2", "alpha-nDCG@2"])


def test_evaluate_files_names_as_asked(tmp_path) -> None:
    from fasteval.batch.api import evaluate_files

    res = evaluate_files(QRELS, RUN, ["mrr", "nDCG@10"], out=tmp_path / "pq.parquet", wide=True)
    assert pl.read_parquet(tmp_path / "pq.parquet").columns == ["run_id", "query_id", "mrr",
                                                               "nDCG@10"]
    assert res.aggregate["measure"].to_list() == ["mrr", "nDCG@10"]
    assert round(res.aggregate["value"][0], 4) == 0.4064


def _cli(argv: list[str], capsys) -> str:
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_eval_without_m_is_trec_eval_default_set(capsys) -> None:
    """trec_eval 10 without -m on its own test pair (its quicktest, vendored as out.test):
    the same lines, names and values; only runid names the run file, not its tag."""
    want = read_text(trec_eval_file("out.test")).splitlines()
    got = _cli(["eval", QRELS, RUN, "--format", "trec", "--quiet"], capsys).splitlines()
    assert got[0] == want[0].replace("STANDARD", "results.test")
    assert got[1:] == want[1:] and len(got) == 30
    table = _cli(["eval", QRELS, RUN, "--quiet", "--format", "csv"], capsys)
    names = pl.read_csv(io.StringIO(table))["measure"].to_list()
    assert names == [m.name for m in fasteval.parse_measures("official")]


def test_eval_cli_names_as_asked_and_trec_eval_keeps_its_names(capsys) -> None:
    out = _cli(["eval", QRELS, RUN, "-m", "ndcg@10", "-m", "mrr", "-m", "P.5", "--quiet",
                "--format", "json"], capsys)
    rows = json.loads(out)
    assert [r["measure"] for r in rows] == ["ndcg@10", "mrr", "P_5"]
    assert round(rows[1]["value"], 4) == 0.4064 and round(rows[2]["value"], 4) == 0.2667
    lines = _cli(["trec-eval", "-m", "ndcg@10", "-m", "recip_rank", QRELS, RUN], capsys)
    # trec_eval's names, in trec_eval's order
    assert [ln.split("\t")[0].strip() for ln in lines.splitlines()] == ["recip_rank", "ndcg_cut_10"]
    assert main(["eval", QRELS, RUN, "-m", "mrr", "-m", "RR", "--quiet"]) == 2
    assert capsys.readouterr().err == (
        "fasteval: error: -m/--measure must be one name per measure (both are recip_rank; "
        "results carry the name asked for), got ['mrr', 'RR']\n")


ODD = ["nDCG@10", "RBP(rel=1, p=0.5)", "P(rel=1)@5"]


@pytest.mark.parametrize(("suffix", "flags"), [
    (".parquet", []), (".csv", []), (".json", []), (".trec", []), (".txt", []),
    (".txt", ["--wide"]), (".parquet", ["--wide"]), (".csv", ["--wide"])])
def test_labels_round_trip_into_compare_results(tmp_path, capsys, suffix, flags) -> None:
    other = tmp_path / "other.test"  # a second run: results.test with its scores reversed
    other.write_text("".join(
        f"{q} Q0 {d} {r} {-float(s)} other\n"
        for q, _, d, r, s, *_ in (ln.split() for ln in open(RUN))))
    out = tmp_path / f"res{suffix}"
    args = ["eval", QRELS, RUN, str(other), "-q", "-o", str(out), "--quiet", *flags]
    _cli([*args, *(a for m in ODD for a in ("-m", m))], capsys)
    got = load_results([out])
    assert got["measure"].unique(maintain_order=True).to_list() == ODD
    want = fasteval.evaluate(QRELS, {"results.test": RUN, "other.test": str(other)}, ODD)
    digits = 4 if suffix in (".trec", ".txt") else 12
    key = ["run_id", "query_id", "measure"]
    joined = want.join(got.with_columns(pl.col("query_id").cast(pl.Utf8)), on=key, how="left")
    assert joined.height == want.height == 2 * 3 * len(ODD)
    assert (joined["value"] - joined["value_right"]).abs().max() < 10 ** -digits
    # compare finds each measure under another spelling of it
    report = _cli(["compare", "--results", str(out), "-m", "ndcg_cut_10", "-m", "RBP(p=0.5,rel=1)",
                   "--test", "t", "--format", "csv", "--names", "canonical"], capsys)
    assert "nDCG@10,results.test,other.test,t," in report
    assert '"RBP(rel=1, p=0.5)",results.test,other.test,t,' in report
