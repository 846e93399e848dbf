"""Whatever ``fasteval eval -q`` writes, ``compare --results`` reads back to the same
table: every output format (long and wide) x one member of every measure family, named by
its canonical name (some hold spaces, commas, brackets and '=': ``INST(T=2, max_rel=3)``)."""

from __future__ import annotations

import math

import polars as pl
import pytest

import fasteval
from fasteval.cli import main
from fasteval.compare._data import load_results
from fasteval.measures import parse_measures
from fasteval.measures.registry import FAMILIES
from tests._data import SHIPPED_TREC

QRELS = str(SHIPPED_TREC / "qrels.test")
RUN = str(SHIPPED_TREC / "results.test")
NAMES = list(dict.fromkeys([
    *(parse_measures([f.sample()])[0].name for f in FAMILIES if f.key != "relstring"),
    *(m.name for m in parse_measures(["INST(T=2, max_rel=3)", "nDCG(gains={0: 0, 1: 1, 2: 3})@10",
                                       "ndcg.1=3,2=9", "utility.1,-1,0,0", "RBP(p=0.8, rel=2)",
                                       "set_F.0.5"]))]))
"""One member of every numeric family (relstring is text), by canonical name, and names holding spaces, commas,
braces, colons and '='."""


SUMMARY_ONLY = {"num_q", "gm_map", "gm_bpref"}
"""What trec_eval -q (and ``--format trec``) prints only on the summary lines."""


@pytest.fixture(scope="module")
def expected() -> pl.DataFrame:
    return fasteval.evaluate(QRELS, {"results.test": RUN}, NAMES)


@pytest.mark.parametrize(("suffix", "flags"), [
    (".parquet", []), (".csv", []), (".tsv", []), (".json", []), (".jsonl", []), (".trec", []),
    (".txt", []), (".txt", ["--wide"]), (".parquet", ["--wide"]), (".csv", ["--wide"])])
def test_every_family_round_trips_through_every_format(tmp_path, capsys, expected, suffix,
                                                        flags) -> None:
    out = tmp_path / f"res{suffix}"
    argv = ["eval", QRELS, RUN, "-q", "-o", str(out), "--quiet", *flags]
    assert main([*argv, *(a for m in NAMES for a in ("-m", m))]) == 0, capsys.readouterr().err
    got = load_results([out]).with_columns(pl.col("query_id").cast(pl.Utf8))
    # trec_eval -q's lines: num_q and the geometric means only on the summary ("all") lines
    written = [n for n in NAMES if suffix != ".trec" or n not in SUMMARY_ONLY]
    assert sorted(got["measure"].unique().to_list()) == sorted(written)
    want = expected.filter(pl.col("measure").is_in(written)).with_columns(
        pl.col("query_id").cast(pl.Utf8))
    key = ["run_id", "query_id", "measure"]
    joined = want.join(got, on=key, how="full", coalesce=True)
    assert joined.height == want.height == got.height
    digits = 4 if suffix in (".trec", ".txt") else 12  # text tables print 4 decimals
    for name, w, g in joined.select("measure", "value", "value_right").iter_rows():
        if w is None or math.isnan(w):
            assert g is None or math.isnan(g), (name, w, g)
        else:
            assert g is not None and abs(w - g) < 10 ** -digits, (name, w, g)
