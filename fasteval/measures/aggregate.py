"""How per-query values become one value per run: trec_eval's summary, in one place.

A measure aggregates by its family's ``aggregation``: ``"mean"`` (the mean over queries),
``"sum"`` (counts: ``num_ret``, ``num_rel``, ...) or ``"gm"`` (``gm_map``, ``gm_bpref``:
the geometric mean of ``max(value, MIN_GEO_MEAN)``, trec_eval's floor). Values are added
one after the other in query order, as trec_eval adds them, so that an aggregate does not
depend on how the rows were chunked or laid out. :func:`summary` computes it in numpy (the
trec-eval command, preference judgments), :func:`agg_expr` in polars (tables of results).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl

from fasteval.measures.parser import parse_measure

MIN_GEO_MEAN = 0.00001
"""trec_eval's ``MIN_GEO_MEAN``: the floor of a value under a geometric mean."""


def aggregation_of(name: str) -> str:
    """How the measure ``name`` (a label in any dialect) aggregates: mean, sum or gm.

    Names the parser does not know (a column another tool added) are averaged.

    Examples
    --------
    >>> aggregation_of("mrr"), aggregation_of("num_ret"), aggregation_of("gm_map")
    ('mean', 'sum', 'gm')
    >>> aggregation_of("my_metric")
    'mean'
    """
    try:
        with warnings.catch_warnings():  # parsed once already: its warnings were given then
            warnings.simplefilter("ignore")
            return parse_measure(name).aggregation
    except Exception:  # noqa: BLE001 - unknown names (e.g. evaluator outputs) average
        return "mean"


def log_floor(values: np.ndarray) -> np.ndarray:
    """``ln(max(value, MIN_GEO_MEAN))``: the scale on which a geometric mean averages.

    Examples
    --------
    >>> log_floor(np.array([1.0, 0.0])).round(4).tolist()
    [0.0, -11.5129]
    """
    return np.log(np.maximum(values, MIN_GEO_MEAN))


def summary(values: np.ndarray, kind: str) -> float:
    """The aggregate of one measure's per-query ``values`` (float64, query order); 0 for none.

    Examples
    --------
    >>> v = np.array([0.5, 0.0, 1.0])
    >>> summary(v, "mean"), summary(v, "sum"), round(summary(v, "gm"), 6)
    (0.5, 1.5, 0.0171)
    """
    if len(values) == 0:
        return 0.0
    if kind == "sum":
        return float(np.cumsum(values)[-1])
    if kind == "gm":
        return math.exp(float(np.cumsum(log_floor(values))[-1]) / len(values))
    return float(np.cumsum(values)[-1]) / len(values)


def agg_expr(kind: str, column: str = "value") -> pl.Expr:
    """:func:`summary` as a polars aggregation of ``column`` (nulls left out).

    Examples
    --------
    >>> df = pl.DataFrame({"value": [0.5, 0.0, 1.0]})
    >>> df.select(agg_expr("mean"), agg_expr("sum").alias("s")).rows()
    [(0.5, 1.5)]
    """
    values = pl.col(column).drop_nulls()
    if kind == "sum":
        return values.sum()
    if kind == "gm":
        logs = values.clip(lower_bound=MIN_GEO_MEAN).log()
        return (logs.cum_sum().last() / values.count()).exp()
    return values.cum_sum().last() / values.count()


def aggregate_long(results: pl.DataFrame) -> pl.DataFrame:
    """``(run_id, measure, value)`` per run and measure of a long table of per-query results
    (a Float64 ``value``), runs and measures in order of first appearance.

    Examples
    --------
    >>> res = pl.DataFrame({"run_id": ["r"] * 4, "query_id": ["a", "b"] * 2,
    ...     "measure": ["map", "map", "num_ret", "num_ret"], "value": [0.5, 1.0, 10.0, 20.0]})
    >>> aggregate_long(res).rows()
    [('r', 'map', 0.75), ('r', 'num_ret', 30.0)]
    """
    kinds = {
        name: aggregation_of(name) for name in results.get_column("measure").unique().to_list()
    }
    frames = []
    for kind in ("mean", "sum", "gm"):
        names = [n for n, k in kinds.items() if k == kind]
        if not names:
            continue
        sub = results.filter(pl.col("measure").is_in(names))
        frames.append(
            sub.group_by(["run_id", "measure"], maintain_order=True).agg(
                agg_expr(kind).alias("value")
            )
        )
    if not frames:
        return pl.DataFrame(
            schema={"run_id": pl.Utf8, "measure": pl.Utf8, "value": pl.Float64}
        )
    out = pl.concat(frames)
    order = {n: i for i, n in enumerate(results.get_column("measure").unique(maintain_order=True))}
    runs = {n: i for i, n in enumerate(results.get_column("run_id").unique(maintain_order=True))}
    return (
        out.with_columns(
            pl.col("run_id").replace_strict(runs, return_dtype=pl.Int64).alias("__r"),
            pl.col("measure").replace_strict(order, return_dtype=pl.Int64).alias("__m"),
        )
        .sort(["__r", "__m"])
        .drop("__r", "__m")
    )
