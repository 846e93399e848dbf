"""``fasteval compare --plot``: a plot never changes the statistics. The measures a plot
draws beyond the compared ones are evaluated for the plot alone (never tested, never in the
multiple-testing family); a plot that cannot be drawn is refused before anything is read or
written, naming the measures it needs."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import fasteval
from fasteval.cli import main
from fasteval.compare import plots

stats = pytest.importorskip("scipy.stats")
pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def trec(tmp_path_factory):
    d = tmp_path_factory.mktemp("trec")
    rng = np.random.default_rng(1)
    rel = {}
    with open(d / "qrels.txt", "w") as f:
        for q in range(15):
            for doc in range(25):
                if rng.uniform() < 0.25 or doc == q:
                    rel[(q, doc)] = g = int(rng.integers(1, 3))
                    f.write(f"q{q} 0 d{doc} {g}\n")
    for name, noise in (("bm25", 1.5), ("dense", 0.4), ("splade", 0.9)):
        with open(d / f"{name}.txt", "w") as f:
            for q in range(15):
                scored = sorted(((rel.get((q, doc), 0) + rng.normal(0, noise), doc)
                                 for doc in range(25)), reverse=True)
                for rank, (s, doc) in enumerate(scored[:12]):
                    f.write(f"q{q} Q0 d{doc} {rank + 1} {s:.6f} {name}\n")
    return d


def _holm(p: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (the oracle)."""
    order = np.argsort(p, kind="stable")
    out = np.empty(len(p))
    running = 0.0
    for i, k in enumerate(order):
        running = max(running, min(1.0, (len(p) - i) * p[k]))
        out[k] = running
    return out.tolist()


def test_plots_leave_tests_corrections_and_marks_unchanged(trec, tmp_path, capsys, monkeypatch):
    d = trec
    runs = [str(d / f"{n}.txt") for n in ("bm25", "dense", "splade")]
    base = ["compare", str(d / "qrels.txt"), *runs, "-m", "ndcg@10", "-m", "map",
            "--test", "t", "--ci", "none"]
    assert main([*base, "-o", str(tmp_path / "plain.md"), "--details", str(tmp_path / "plain.csv")]) == 0
    drawn = {}

    def keep(kind):
        def draw(source, path):
            drawn[kind] = source
            return plots.PLOTS[kind].__wrapped__(source, path)
        draw.__wrapped__ = plots.PLOTS[kind]
        return draw

    for kind in ("cutoffs", "pr"):
        monkeypatch.setitem(plots.PLOTS, kind, keep(kind))
    argv = [*base, "-o", str(tmp_path / "plot.md"), "--details", str(tmp_path / "plot.csv"),
            "--plot", f"cutoffs={tmp_path / 'c.png'}", "--plot", f"pr={tmp_path / 'p.png'}",
            "--plot", f"differences={tmp_path / 'd.png'}"]
    assert main(argv) == 0, capsys.readouterr().err
    plain, plotted = pl.read_csv(tmp_path / "plain.csv"), pl.read_csv(tmp_path / "plot.csv")
    assert plotted.equals(plain)  # p-values, corrected p-values, significance: identical
    assert (tmp_path / "plot.md").read_text() == (tmp_path / "plain.md").read_text()  # marks
    for name in ("c.png", "p.png", "d.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
    # real values: scipy's paired t-test on the per-query scores, Holm over the 6 comparisons
    # (2 measures x 3 pairs): the plots' 12 cutoffs and 11 recall levels are not in the family
    per_query = fasteval.evaluate(fasteval.read_qrels(d / "qrels.txt"),
                                  {n: fasteval.read_run(d / f"{n}.txt") for n in
                                   ("bm25", "dense", "splade")}, ["ndcg@10", "map"])
    assert plain.height == 6
    want = []
    for row in plain.iter_rows(named=True):
        x, y = ((per_query.filter((pl.col("run_id") == r) & (pl.col("measure") == row["measure"]))
                 .sort("query_id").get_column("value").to_numpy()) for r in (row["run_id"], row["versus"]))
        want.append(stats.ttest_rel(x, y).pvalue)
    assert plain.get_column("p_value").to_list() == pytest.approx(want, rel=1e-9)
    assert plain.get_column("p_adjusted").to_list() == pytest.approx(_holm(want), rel=1e-9)
    # the cutoffs plot drew nDCG at k = 1 .. 1000 (its value at 10 the tested one), the pr
    # plot the eleven recall levels
    cut = drawn["cutoffs"]  # (one evaluation for both plots: each draws its own measures)
    assert sorted(set(cut.get_column("measure")) - set(plots.plot_measures("pr", []))) == sorted(
        f"ndcg_cut_{k}" for k in plots.PLOT_CUTOFFS)
    at10 = cut.filter(pl.col("measure") == "ndcg_cut_10").sort("run_id", "query_id")
    tested = per_query.filter(pl.col("measure") != "map").sort("run_id", "query_id")
    assert at10.get_column("value").to_list() == tested.get_column("value").to_list()
    assert plots.recall_levels(drawn["pr"].get_column("measure").unique().to_list())[::5] == [
        (0.0, "iprec_at_recall_0.00"), (0.5, "iprec_at_recall_0.50"), (1.0, "iprec_at_recall_1.00")]


def test_a_cutoffs_plot_without_a_cutoff_measure_names_what_it_needs(trec, tmp_path, capsys):
    d = trec
    rc = main(["compare", str(d / "qrels.txt"), str(d / "bm25.txt"), str(d / "dense.txt"),
               "-m", "map", "-m", "Rprec", "-o", str(tmp_path / "r.md"), "--details",
               str(tmp_path / "det.csv"), "--plot", f"cutoffs={tmp_path / 'c.png'}"])
    out, err = capsys.readouterr()
    assert (rc, out) == (2, "")
    assert err == ("fasteval: error: --plot cutoffs must be drawn from a compared measure that "
                   "has a rank cutoff (e.g. -m ndcg@10 or -m P@10; the plot evaluates it at "
                   "cutoffs 1 to 1000 for itself), got ['map', 'Rprec']\n")
    assert list(tmp_path.iterdir()) == []


def test_results_files_plot_what_they_hold_outside_the_tested_family(trec, tmp_path, capsys):
    d = trec
    per_query = fasteval.evaluate(
        fasteval.read_qrels(d / "qrels.txt"),
        {n: fasteval.read_run(d / f"{n}.txt") for n in ("bm25", "dense")},
        ["map", "ndcg_cut_5", "ndcg_cut_10", "ndcg_cut_20"])
    per_query.write_parquet(tmp_path / "res.parquet")
    base = ["compare", "--results", str(tmp_path / "res.parquet"), "-m", "map", "--test", "t",
            "--ci", "none", "--format", "csv"]
    assert main(base) == 0
    plain = capsys.readouterr().out
    assert main([*base, "--plot", f"cutoffs={tmp_path / 'c.png'}"]) == 0
    assert capsys.readouterr().out == plain  # one comparison (map), with or without the plot
    row = pl.read_csv(plain.encode()).row(0, named=True)
    x, y = ((per_query.filter((pl.col("run_id") == r) & (pl.col("measure") == "map"))
             .sort("query_id").get_column("value").to_numpy()) for r in (row["run_id"], row["versus"]))
    assert row["p_value"] == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-9)
    assert row["p_adjusted"] == row["p_value"]
    # files without what a plot draws: refused before the comparison, nothing written
    rc = main([*base[:-2], "-o", str(tmp_path / "r.md"), "--plot", f"pr={tmp_path / 'p.png'}"])
    out, err = capsys.readouterr()
    assert (rc, out) == (2, "")
    assert err == ("fasteval: error: --plot pr must be used with --results files holding "
                   "iprec_at_recall_0.00 .. iprec_at_recall_1.00 (from fasteval eval -q -m "
                   "iprec_at_recall), got ['map', 'ndcg_cut_5', 'ndcg_cut_10', 'ndcg_cut_20']\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.png", "res.parquet"]


def test_plot_measures():
    assert plots.plot_measures("cutoffs", ["P@7", "map"]) == [
        f"P_{k}" for k in sorted({*plots.PLOT_CUTOFFS, 7})]
    assert plots.plot_measures("cutoffs", ["P(rel=2)@5"])[:2] == ["P_1(rel=2)", "P_3(rel=2)"]
    assert plots.plot_measures("pr", ["map"])[::5] == [
        "iprec_at_recall_0.00", "iprec_at_recall_0.50", "iprec_at_recall_1.00"]
    assert plots.plot_measures("distributions", ["ndcg@10"]) == []
