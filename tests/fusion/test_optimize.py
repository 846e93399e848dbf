"""fasteval.optimize_fusion: the grid, the choice (ranx's last best), scores from fasteval's
own evaluate, and agreement with ranx.optimize_fusion."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest

import fasteval
from fasteval.errors import ParameterError
from fasteval.fusion import weight_grid


def _data(seed: int, n_q: int = 25, n_runs: int = 2):
    rng = np.random.default_rng(seed)
    qrels, runs = {}, [{} for _ in range(n_runs)]
    for q in range(n_q):
        rel = {f"d{d}": int(rng.integers(0, 3)) for d in rng.choice(20, 8, replace=False)}
        qrels[f"q{q}"] = rel
        for r in range(n_runs):
            docs = rng.choice(20, 10, replace=False)
            runs[r][f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, rng.normal(size=10),
                                                                  strict=True)}
    return qrels, runs


def test_weight_grid() -> None:
    g = weight_grid(3, 0.1)
    assert len(g) == 66 and all(abs(sum(w) - 1) < 1e-12 for w in g)
    assert g[0] == (0.0, 0.0, 1.0) and g[-1] == (1.0, 0.0, 0.0)
    ranx_opt = pytest.importorskip("ranx.fusion_optimization.optimize_weights")
    theirs = [tuple(map(float, w)) for w in
              ranx_opt.get_trial_configs(ranx_opt.get_possible_weights(0.1), 3)]
    assert set(theirs) < set(g)  # ranx's float sum drops four, e.g. (0.2, 0.7, 0.1)
    assert set(g) - set(theirs) == {(0.2, 0.7, 0.1), (0.3, 0.6, 0.1), (0.6, 0.3, 0.1),
                                    (0.7, 0.2, 0.1)}
    assert [w for w in g if w in set(theirs)] == list(theirs)  # same order
    assert weight_grid(2, 0.1) == [tuple(map(float, w)) for w in
                                   ranx_opt.get_trial_configs(ranx_opt.get_possible_weights(0.1), 2)]
    with pytest.raises(ParameterError, match="step"):
        weight_grid(2, 0.3)


def test_best_is_the_last_maximum_and_scores_are_fasteval_evaluate() -> None:
    qrels, runs = _data(1)
    best = fasteval.optimize_fusion(qrels, runs, method="wsum", metric="ndcg@10", step=0.25)
    assert best.trials.height == 5
    assert best.metric == "ndcg_cut_10"
    scores = best.trials.get_column("score").to_list()
    for w, s in zip(weight_grid(2, 0.25), scores, strict=True):
        fused = fasteval.fuse(runs, method="wsum", weights=list(w))
        want = fasteval.aggregate(fasteval.evaluate(qrels, fused, "ndcg@10"))["value"][0]
        assert s == pytest.approx(want, abs=1e-15)
    top = max(scores)
    last = max(i for i, s in enumerate(scores) if s == top)
    assert best.weights == weight_grid(2, 0.25)[last]
    assert best.score == top
    assert best.run.equals(fasteval.fuse(runs, method="wsum", weights=list(best.weights)))


def test_scalar_grids_and_custom_grid() -> None:
    qrels, runs = _data(2)
    rrf = fasteval.optimize_fusion(qrels, runs, method="rrf", metric="map")
    assert rrf.trials.height == 10 and set(rrf.params) == {"k"}
    assert rrf.params["k"] in [float(k) for k in range(10, 101, 10)]
    rbc = fasteval.optimize_fusion(qrels, runs, method="rbc", metric="map", grid=[0.5, 0.9])
    assert rbc.trials.get_column("params").to_list() == ["0.5", "0.9"]
    assert rbc.run.equals(fasteval.fuse(runs, method="rbc", phi=rbc.params["phi"]))
    w = fasteval.optimize_fusion(qrels, {"a": runs[0], "b": runs[1]}, method="wsum",
                                 grid=[{"a": 1.0, "b": 0.0}, [0.5, 0.5]])
    assert w.trials.height == 2


def test_errors() -> None:
    qrels, runs = _data(3, n_q=3)
    with pytest.raises(ParameterError, match="parameters to search"):
        fasteval.optimize_fusion(qrels, runs, method="sum")
    with pytest.raises(ParameterError, match="0 < phi < 1"):
        fasteval.optimize_fusion(qrels, runs, method="rbc", grid=[0.5, 1.0])
    with pytest.raises(ParameterError, match="one number per run"):
        fasteval.optimize_fusion(qrels, runs, method="wsum", grid=[[1.0]])
    with pytest.raises(ParameterError, match="at least one setting"):
        fasteval.optimize_fusion(qrels, runs, method="rrf", grid=[])
    # a string was iterated character by character ("k must be a number > 0, got '1'")
    for grid in ("10", 10):
        with pytest.raises(ParameterError, match=r"grid must be an iterable of settings \(weight "
                           r"vectors, or numbers\), got " + repr(grid)):
            fasteval.optimize_fusion(qrels, runs, method="rrf", grid=grid)


def _untied_top(run: pl.DataFrame, depth: int = 11) -> bool:
    """No tied scores among any query's first ``depth`` documents (where ranx's order of
    ties, which is arbitrary, could change ndcg@10)."""
    top = run.filter(pl.col("rank") <= depth)
    return top.select(pl.struct("query_id", "score").is_duplicated().any()).item() is False


def _ranx_optimize(qrels, runs, method: str, norm: str | None, step: float):
    """ranx's ``optimize_fusion`` for ndcg@10 at ``step``: ``(best, report)``."""
    ranx = pytest.importorskip("ranx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ranx.optimize_fusion(
            ranx.Qrels(qrels), [ranx.Run(r) for r in runs], norm=norm, method=method,
            metric="ndcg@10", show_progress=False, return_optimization_report=True, step=step)


@pytest.mark.parametrize(("method", "key", "norm"), [("wsum", "weights", "min-max"),
                                                      ("gmnz", "gamma", "zmuv")])
def test_trial_scores_equal_ranx_report(method: str, key: str, norm: str) -> None:
    """Each trial's ndcg@10 equals ranx's optimisation report wherever the fused run has no
    ties near the cutoff; the best setting is the same when every trial is compared."""
    qrels, runs = _data(4, n_q=30)
    best, report = _ranx_optimize(qrels, runs, method, norm, 0.1)
    # ranx's grids at step 0.1: weights (0, 1)...(1, 0); gamma round(0.01 + 0.1 i, 1)
    settings = (weight_grid(2, 0.1) if key == "weights" else
                [round(x, 1) for x in np.arange(0.01, 1.1, 0.1)])
    ours = fasteval.optimize_fusion(qrels, runs, method=method, norm=norm, metric="ndcg@10",
                                    grid=None if key == "weights" else settings)
    assert ours.trials.height == len(report.results)
    compared = 0
    for i, theirs in enumerate(report.results):
        params = {key: list(settings[i]) if key == "weights" else settings[i]}
        if _untied_top(fasteval.fuse(runs, method=method, norm=norm, **params)):
            assert ours.trials["score"][i] == pytest.approx(float(theirs), abs=1e-12)
            compared += 1
    assert compared >= len(report.results) - 3
    if compared == len(report.results):
        assert ours.params[key] == (tuple(map(float, best[key])) if key == "weights"
                                    else best[key])


@pytest.mark.parametrize(("method", "key", "step", "norm"), [
    ("rrf", "k", 20, "min-max"), ("gmnz", "gamma", 0.1, "zmuv"), ("rbc", "phi", 0.1, "min-max"),
    ("rbc", "phi", 0.25, None)])
def test_step_spaces_the_scalar_grids_as_ranx(method: str, key: str, step: float,
                                              norm: str | None) -> None:
    """``step`` spaces k, phi, gamma and sigma as ranx's optimisers do (it was ignored for
    them: rrf with step=20 tried k 10..100 by 10). The grid is ranx's, less the values the
    method refuses (phi 0 and 1); trial scores equal ranx's report where the fused run has
    no ties near the cutoff, and the best setting is ranx's."""
    qrels, runs = _data(4, n_q=30)
    best, report = _ranx_optimize(qrels, runs, method, norm, step)
    theirs = {float(c): float(r) for c, r in zip(report.configs, report.results, strict=True)}
    ours = fasteval.optimize_fusion(qrels, runs, method=method, norm=norm, metric="ndcg@10",
                                    step=step)
    grid = [float(p) for p in ours.trials["params"]]
    assert grid == [v for v in theirs if key != "phi" or 0 < v < 1]
    assert grid == fasteval.fusion.scalar_grid(key, step)
    compared = 0
    for value, score in zip(grid, ours.trials["score"], strict=True):
        if _untied_top(fasteval.fuse(runs, method=method, norm=norm, **{key: value})):
            assert score == pytest.approx(theirs[value], abs=1e-12)
            compared += 1
    # the rank methods tie documents that two runs place alike: their scores are compared
    # where no such tie reaches the cutoff, and the best setting always
    assert compared >= (0 if method in ("rrf", "rbc") else 2)
    assert ours.params[key] == float(best[key])


def test_step_and_metric_errors() -> None:
    qrels, runs = _data(3, n_q=3)
    with pytest.raises(ParameterError, match=r"^step must be a whole number >= 1 for method "
                       r"'rrf' \(k from 10 to 100 by step\), got 2\.5$"):
        fasteval.optimize_fusion(qrels, runs, method="rrf", step=2.5)
    with pytest.raises(ParameterError, match=r"^step must be not given with grid"):
        fasteval.optimize_fusion(qrels, runs, method="wsum", step=0.5, grid=[[0.5, 0.5]])
    with pytest.raises(ParameterError, match=r"^step must be a number that leaves some phi"):
        fasteval.optimize_fusion(qrels, runs, method="rbc", step=1.0)
    # trec_eval's "recall" is nine measures: the first (recall_5) was optimised silently
    with pytest.raises(ParameterError, match=r"^metric must be one measure \(a name with a "
                       r"cutoff such as 'recall_5'\), not 9: \['recall_5', .*got 'recall'$"):
        fasteval.optimize_fusion(qrels, runs, metric="recall")
    with pytest.raises(ParameterError, match=r"^metric must be one measure name"):
        fasteval.optimize_fusion(qrels, runs, metric=["map", "P@5"])
    assert fasteval.optimize_fusion(qrels, runs, metric=fasteval.parse_measures("map")[0],
                                    step=0.5).metric == "map"
