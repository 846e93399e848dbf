"""``fasteval.fuse`` and ``fasteval.optimize_fusion``."""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from fasteval.errors import ParameterError, check_flag
from fasteval.fusion.layout import FusionInput, RunsInput, load_runs, prepare_fusion
from fasteval.fusion.options import (
    PARAMETERS,
    RANGES,
    WEIGHTED_METHODS,
    FusionSpec,
    check_weights,
    method_name,
    norm_name,
    resolve,
)

__all__ = ["fuse", "optimize_fusion", "FusionSearch"]


def _runs_of(runs: RunsInput) -> list[tuple[str, pl.DataFrame]]:
    loaded = load_runs(runs)
    if len(loaded) < 2:
        raise ParameterError("runs", "at least two runs", len(loaded))
    return loaded


# long: the docstring is the reference of every method, normalisation and parameter
def fuse(
    runs: RunsInput,
    method: str = "rrf",
    norm: str | None = "min-max",
    weights: Sequence[float] | dict[str, float] | None = None,
    *,
    k: float | None = None,
    phi: float | None = None,
    gamma: float | None = None,
    sigma: float | None = None,
    rank: bool = True,
) -> pl.DataFrame:
    """Fuse several runs into one, as ranx's ``fuse`` does.

    Parameters
    ----------
    runs
        Two or more runs: a sequence of runs (tables with ``query_id``, ``doc_id``,
        ``score``; paths; ``{qid: {docid: score}}`` dicts; ranx ``Run`` objects), a mapping
        ``{name: run}``, or one table with a ``run_id`` column.
    method : str
        ranx's names, case-insensitive (aliases in parentheses):

        * score methods, on the normalised scores of the runs that hold a document:
          ``"sum"`` (CombSUM), ``"mnz"`` (CombMNZ: sum x number of runs holding it),
          ``"anz"`` (CombANZ: sum / that number), ``"max"``, ``"min"``, ``"med"``
          (median), ``"gmnz"`` (CombGMNZ: sum x number ** ``gamma``);
        * weighted: ``"wsum"`` (weighted sum; ranx's default method), ``"wmnz"`` (sum x the
          weights of the runs holding it), ``"mixed"`` (weighted sum x sqrt(number));
        * rank methods, on each run's positions ``i`` (0 first): ``"rrf"`` (the default; sum of
          1 / (``k`` + i + 1)), ``"isr"`` (sum of 1 / (i + 1)**2, x number), ``"log_isr"``
          (the same sum x log(number)), ``"logn_isr"`` (x log(number + ``sigma``)),
          ``"rbc"`` (sum of (1 - ``phi``) ``phi`` ** i), ``"bordafuse"`` (``borda``:
          n - i points, n the query's documents in all runs; a run lacking a document
          gives it the mean of the points it did not give), ``"w_bordafuse"``,
          ``"condorcet"`` and ``"w_condorcet"`` (Condorcet-fuse: documents sorted by
          pairwise majority of the runs, each scoring n - position).
    norm : str or None
        Score normalisation, per run and query, before fusing: ``"min-max"`` (default),
        ``"max"``, ``"sum"``, ``"zmuv"`` (z-score), ``"rank"`` (1 - i/m, m the run's
        documents), ``"borda"`` (1 - i/n; a document the run lacks gets the mean of the
        rest), ``"min-max-inverted"`` (lower scores first), or None. Denominators are
        at least 1e-9, as in ranx.
    weights : sequence or mapping, optional
        One number >= 0 per run (a mapping by run name when the runs are named); required
        by the weighted methods, refused by the others. A sequence follows the runs' order;
        for one table with a ``run_id`` column, the order in which its run ids first appear
        (a mapping ``{run_id: weight}`` does not depend on the row order).
    k, phi, gamma, sigma : float, optional
        ``k`` (``rrf``, default 60, > 0), ``phi`` (``rbc``, required, 0 < phi < 1),
        ``gamma`` (``gmnz``, required, >= 0), ``sigma`` (``logn_isr``, default 0.01, in
        [0, 1]). A parameter given to a method that does not use it is an error.
    rank : bool
        Add a ``rank`` column (1 for each query's first document).

    Returns
    -------
    polars.DataFrame
        ``query_id``, ``doc_id``, ``score`` (Float64) [, ``rank`` (Int64)]: every document
        of any run, each query's by score descending, ties by doc id descending byte-wise
        (trec_eval's order; integer ids compare as their decimal text). Queries come in
        order of first appearance (the first run's first).

    Notes
    -----
    The values are ranx's (0.3.21) on inputs without tied scores: the same formulas, the
    sums taken in run order. Where ranx leaves the result to chance, or to a placeholder,
    a rule is fixed instead: docs/fusion.md, *Where fasteval decides what ranx leaves open*.

    Raises
    ------
    ParameterError
        See :func:`fasteval.fusion.options.resolve`; fewer than two runs.
    InputError
        A run with a null id, a null, NaN or infinite score, or a document twice for a query;
        a fused score that is not a finite number (NaN, or past the float64 range).

    Examples
    --------
    >>> import fasteval
    >>> bm25 = {"q1": {"d1": 12.0, "d2": 9.5, "d3": 7.0}}
    >>> dense = {"q1": {"d3": 0.91, "d4": 0.85, "d1": 0.40}}
    >>> fasteval.fuse([bm25, dense], method="rrf").rows()
    [('q1', 'd3', 0.032266458495966696, 1), ('q1', 'd1', 0.032266458495966696, 2), ('q1', 'd4', 0.016129032258064516, 3), ('q1', 'd2', 0.016129032258064516, 4)]
    >>> fasteval.fuse({"bm25": bm25, "dense": dense}, method="wsum", norm="min-max",
    ...               weights={"bm25": 0.3, "dense": 0.7}).get_column("doc_id").to_list()
    ['d3', 'd4', 'd1', 'd2']
    """
    rank = check_flag("rank", rank)
    spec = resolve(method, norm, weights, n_runs=None, k=k, phi=phi, gamma=gamma, sigma=sigma)
    loaded = _runs_of(runs)
    if spec.weights is not None or isinstance(weights, dict):
        spec = resolve(method, norm, weights, n_runs=len(loaded), names=[n for n, _ in loaded],
                       k=k, phi=phi, gamma=gamma, sigma=sigma)
    prepared = prepare_fusion(loaded, spec.norm)
    return prepared.table(prepared.combine(spec), rank=rank)


@dataclass
class FusionSearch:
    """The outcome of :func:`optimize_fusion`.

    Attributes
    ----------
    method, norm, metric : str
        Canonical names.
    params : dict
        The best parameters: ``{"weights": (...)}`` (in the runs' order, as :func:`fuse`
        reads a sequence of weights), ``{"k": ...}``, ``{"phi": ...}``,
        ``{"gamma": ...}`` or ``{"sigma": ...}``.
    score : float
        The metric's mean over the evaluated queries with those parameters.
    run : polars.DataFrame
        The fused run with them (as :func:`fuse` returns it).
    trials : polars.DataFrame
        Every setting tried, in order: ``trial``, ``params`` (text), ``score``.
    """

    method: str
    norm: str
    metric: str
    params: dict[str, Any]
    score: float
    run: pl.DataFrame
    trials: pl.DataFrame = field(repr=False)

    @property
    def weights(self) -> tuple[float, ...] | None:
        """The best weights (None for a method without weights)."""
        return self.params.get("weights")


def weight_grid(n_runs: int, step: float) -> list[tuple[float, ...]]:
    """Every weight vector of ``n_runs`` multiples of ``step`` that sum to 1, in the order
    of ``itertools.product`` (ranx's order).

    ranx keeps the vectors whose float sum is exactly 1.0, which drops some (0.2 + 0.7 + 0.1
    is 0.9999999999999999: four of 66 for three runs at 0.1); the sum is taken in whole
    steps here, so none is dropped.

    Examples
    --------
    >>> weight_grid(2, 0.25)
    [(0.0, 1.0), (0.25, 0.75), (0.5, 0.5), (0.75, 0.25), (1.0, 0.0)]
    """
    if isinstance(step, bool) or not isinstance(step, int | float) or not 0 < step <= 1:
        raise ParameterError("step", "a number, 0 < step <= 1, that divides 1", step)
    n = round(1 / step)
    if abs(n * step - 1) > 1e-9:
        raise ParameterError("step", "a number, 0 < step <= 1, that divides 1", step)
    return [tuple(a / n for a in combo) for combo in itertools.product(range(n + 1), repeat=n_runs)
            if sum(combo) == n]


_GRIDS: dict[str, list[float]] = {
    "k": [float(x) for x in range(10, 101, 10)],
    "phi": [x / 100 for x in range(1, 100)],
    "gamma": [x / 100 for x in range(1, 101)],
    "sigma": [x / 100 for x in range(1, 101)],
}
"""ranx's default grids: k 10..100 by 10; phi, gamma and sigma 0.01..1.00 by 0.01 (phi
stops at 0.99: at 1 every RBC score is 0)."""

def scalar_grid(param: str, step: float | None) -> list[float]:
    """The values of ``k``, ``phi``, ``gamma`` or ``sigma`` that :func:`optimize_fusion` tries,
    as ranx's optimisers space them.

    ``k``: 10 to 100 by ``step`` (a whole number, default 10). The others: ranx's
    ``round(x, d)`` for ``x`` in ``numpy.arange(0.01, 1 + step, step)``, ``d`` the decimals
    of ``step`` (default 0.01), keeping the values the method accepts (ranx's grid at step
    0.1 is 0.0, 0.1, ..., 1.0: phi drops 0 and 1, sigma a last value past 1).

    Examples
    --------
    >>> scalar_grid("k", 30), scalar_grid("gamma", 0.25)
    ([10.0, 40.0, 70.0, 100.0], [0.01, 0.26, 0.51, 0.76, 1.01])
    >>> scalar_grid("phi", 0.2)
    [0.2, 0.4, 0.6, 0.8]
    """
    if step is None:
        return list(_GRIDS[param])
    if param == "k":
        if isinstance(step, bool) or not isinstance(step, numbers.Integral) or step < 1:
            raise ParameterError("step", "a whole number >= 1 for method 'rrf' (k from 10 to "
                                 "100 by step)", step)
        return [float(x) for x in range(10, 101, int(step))]
    if (isinstance(step, bool) or not isinstance(step, numbers.Real)
            or not 0 < float(step) <= 1):
        raise ParameterError("step", f"a number, 0 < step <= 1, for {param}", step)
    import numpy as np

    text = repr(float(step))
    digits = len(text.split(".")[1]) if "." in text and "e" not in text else 12
    values: list[float] = []
    for x in np.arange(0.01, 1.0 + float(step), float(step)):
        v = float(round(float(x), digits))
        if RANGES[param][1](v) and v not in values:
            values.append(v)
    if not values:
        raise ParameterError("step", f"a number that leaves some {param} on the grid", step)
    return values


def optimize_fusion(
    qrels: Any,
    runs: RunsInput,
    method: str = "wsum",
    norm: str | None = "min-max",
    metric: str = "ndcg@10",
    *,
    step: float | None = None,
    grid: Iterable[Any] | None = None,
    **eval_options: Any,
) -> FusionSearch:
    """Search a fusion method's parameters on training qrels, as ranx's ``optimize_fusion``
    does: a grid search, scored by ``metric``'s mean over queries with
    :class:`fasteval.Evaluator`.

    The runs are prepared (ranked, matched, normalised) once; each setting then costs one
    pass of the fusion kernel and one evaluation.

    Parameters
    ----------
    qrels
        Relevance judgments (table, path or dict), as for :func:`fasteval.evaluate`.
    runs, method, norm
        As for :func:`fuse`. The method must have something to search: weights (``wsum``,
        ``wmnz``, ``mixed``, ``w_bordafuse``, ``w_condorcet``), ``k`` (``rrf``), ``phi``
        (``rbc``), ``gamma`` (``gmnz``) or ``sigma`` (``logn_isr``).
    metric : str or Measure
        One measure, named in any dialect fasteval reads (``"ndcg@10"``, ``"map"``,
        ``"P@5"``); a name that stands for several measures (trec_eval's ``"P"`` or
        ``"recall"``, its nine cutoffs) is refused.
    step : float, optional
        The grid's spacing, as in ranx. Weights: every vector of multiples of ``step`` that
        sums to 1 (:func:`weight_grid`; 66 vectors for three runs at the default 0.1);
        ``k``: 10 to 100 by ``step`` (default 10); ``phi``, ``gamma``, ``sigma``: from 0.01
        by ``step`` (default 0.01; :func:`scalar_grid`). Refused together with ``grid``.
    grid : iterable, optional
        The settings to try instead: weight vectors for the weighted methods, numbers for
        the others. Default: :func:`weight_grid` or :func:`scalar_grid` (at the default
        steps, k 10..100 by 10; phi 0.01..0.99, gamma and sigma 0.01..1 by 0.01).
    **eval_options
        Passed to :class:`fasteval.Evaluator` (``relevance_level``, ``complete``...).

    Returns
    -------
    FusionSearch
        The best setting (ties: the last one tried, as ranx's ``>=``), its score, the fused
        run and every trial.

    Examples
    --------
    >>> import fasteval
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d5": 1}}
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 0.0}, "q2": {"d4": 3.0, "d5": 2.0, "d6": 0.0}}
    >>> b = {"q1": {"d2": 3.0, "d3": 2.0, "d1": 0.0}, "q2": {"d5": 3.0, "d6": 2.0, "d4": 0.0}}
    >>> best = fasteval.optimize_fusion(qrels, [a, b], method="wsum", metric="mrr", step=0.5)
    >>> best.trials.get_column("score").round(4).to_list()  # weights (0, 1), (.5, .5), (1, 0)
    [0.6667, 0.75, 0.75]
    >>> best.weights, best.score  # the last of the best
    ((1.0, 0.0), 0.75)
    """
    m, n = method_name(method), norm_name(norm)
    _check_search(grid, metric, step)
    loaded = _runs_of(runs)
    names = [name for name, _ in loaded]
    param, settings = _settings(m, method, len(loaded), names, step, grid)
    specs: list[FusionSpec] = [resolve(m, n, **{param: s}, n_runs=len(loaded), names=names)
                               for s in settings]
    evaluator = _one_measure(qrels, metric, eval_options)
    prepared: FusionInput = prepare_fusion(loaded, n)
    best_i, best, trials = _search(prepared, specs, evaluator, param)
    return FusionSearch(method=m, norm=n, metric=evaluator.measures[0].name,  # canonical
                        params=specs[best_i].params, score=best,
                        run=prepared.table(prepared.combine(specs[best_i])), trials=trials)


def _check_search(grid: Any, metric: Any, step: float | None) -> None:
    """:func:`optimize_fusion`'s checks of ``grid``, ``metric`` and ``step``."""
    from fasteval.measures.measure import Measure

    if grid is not None and (isinstance(grid, str | bytes) or not isinstance(grid, Iterable)):
        raise ParameterError("grid", "an iterable of settings (weight vectors, or numbers)", grid)
    if not isinstance(metric, str | Measure):
        raise ParameterError("metric", "one measure name (a string such as 'ndcg@10')", metric)
    if step is not None and grid is not None:
        raise ParameterError("step", "not given with grid (it spaces the default grid)", step)


def _one_measure(qrels: Any, metric: Any, eval_options: dict[str, Any]) -> Any:
    """The :class:`fasteval.Evaluator` of ``metric``, which must name one measure."""
    from fasteval.evaluation import Evaluator

    evaluator = Evaluator(qrels, [metric], **eval_options)
    if len(evaluator.measure_names) != 1:
        raise ParameterError("metric", "one measure (a name with a cutoff such as "
                             f"'{evaluator.measure_names[0]}'), not "
                             f"{len(evaluator.measure_names)}: {evaluator.measure_names}", metric)
    return evaluator


def _settings(m: str, method: Any, n_runs: int, names: list[str], step: float | None,
              grid: Iterable[Any] | None) -> tuple[str, list[Any]]:
    """The parameter :func:`optimize_fusion` searches for method ``m`` and its settings."""
    if m in WEIGHTED_METHODS:
        settings: list[Any] = (weight_grid(n_runs, 0.1 if step is None else step)
                               if grid is None else
                               [check_weights(w, n_runs, names) for w in grid])
        param = "weights"
    elif m in PARAMETERS:
        param = PARAMETERS[m][0]
        settings = scalar_grid(param, step) if grid is None else list(grid)
    else:
        raise ParameterError("method", "a method with parameters to search (weighted methods, "
                             "rrf, rbc, gmnz, logn_isr)", method)
    if not settings:
        raise ParameterError("grid", "at least one setting", grid)
    return param, settings


def _search(prepared: FusionInput, specs: list[FusionSpec], evaluator: Any,
            param: str) -> tuple[int, float, pl.DataFrame]:
    """Each setting's fused run scored by the evaluator's one measure, averaged over queries:
    the best setting (ties: the last), its score and the trials."""
    from fasteval.evaluation import aggregate

    measure = evaluator.measure_names[0]
    cands = prepared.candidates()
    best_i = -1
    best = -math.inf
    scores: list[float] = []
    for i, spec in enumerate(specs):
        table = cands.with_columns(pl.Series("score", prepared.combine(spec), dtype=pl.Float64))
        agg = aggregate(evaluator.evaluate(table, run_id="fused"))
        value = agg.filter(pl.col("measure") == measure).get_column("value")
        score = float(value[0]) if len(value) else math.nan
        scores.append(score)
        if score >= best:
            best, best_i = score, i
    if best_i < 0:
        raise ParameterError("qrels", "judgments for some query of the runs (no setting could "
                             "be scored)", "no overlap")
    trials = pl.DataFrame({
        "trial": list(range(len(specs))),
        "params": [repr(s.params[param]) for s in specs],
        "score": scores,
    })
    return best_i, best, trials
