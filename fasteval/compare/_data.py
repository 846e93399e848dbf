"""Per-query results in, paired score matrices out.

Accepted inputs (all end up as one long table ``run_id, query_id, measure, value``):

* a polars (or pandas) DataFrame in long form (``run_id, query_id, measure, value``) or wide
  form (``run_id, query_id`` and one column per measure, as ``fasteval eval --wide`` writes);
* a path (parquet, CSV/TSV, JSON lines) or a list of paths; a file without ``run_id`` takes
  its file stem as the run name;
* a mapping ``{run_name: per-query table or path}``; the key names the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from fasteval.errors import InputError, ParameterError

_KEYS = ("run_id", "query_id", "measure", "value")


def _read_file(path: str | os.PathLike[str]) -> pl.DataFrame:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(2, "No such file or directory", str(p))
    suffix = (
        "".join(p.suffixes[-2:]).lower()
        if p.suffix.lower() in {".gz", ".zst"}
        else p.suffix.lower()
    )
    if suffix in {".parquet", ".pq"}:
        return pl.read_parquet(p)
    if suffix in {".csv", ".csv.gz"}:
        return pl.read_csv(p)
    if suffix in {".tsv", ".tsv.gz"}:
        return pl.read_csv(p, separator="\t")
    if suffix in {".jsonl", ".ndjson"}:
        return pl.read_ndjson(p)
    raise InputError(
        f"unknown results format {p.suffix!r}; expected .parquet, .csv, .tsv or .jsonl",
        source=str(p),
    )


def _as_frame(obj: Any, source: str) -> pl.DataFrame:
    if isinstance(obj, pl.LazyFrame):
        return obj.collect()
    if isinstance(obj, pl.DataFrame):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return _read_file(obj)
    if type(obj).__module__.startswith("pandas"):
        return pl.from_pandas(obj.reset_index() if obj.index.name else obj)
    raise InputError(
        f"expected a polars/pandas DataFrame, a path or a mapping, got {type(obj).__name__}",
        source=source,
    )


def _normalize(df: pl.DataFrame, source: str, run_name: str | None) -> pl.DataFrame:
    """One table (long or wide) -> long ``run_id, query_id, measure, value``."""
    cols = set(df.columns)
    if "query_id" not in cols:
        raise InputError(f"missing column 'query_id' (columns: {df.columns})", source=source)
    if run_name is not None:
        df = df.with_columns(pl.lit(run_name).alias("run_id"))
    elif "run_id" not in cols:
        raise InputError(
            "missing column 'run_id' (name the runs with a mapping {name: table})", source=source
        )
    if {"measure", "value"} <= cols:
        long = df.select(_KEYS)
    else:
        measure_cols = [c for c in df.columns if c not in ("run_id", "query_id")]
        if not measure_cols:
            raise InputError(
                "no measure columns: expected long form (measure, value) or wide form "
                "(one column per measure)",
                source=source,
            )
        for c in measure_cols:
            if not df.schema[c].is_numeric():
                raise InputError(
                    f"measure column has type {df.schema[c]}, expected numbers",
                    source=source,
                    column=c,
                )
        long = df.unpivot(
            index=["run_id", "query_id"],
            on=measure_cols,
            variable_name="measure",
            value_name="value",
        )
    value_dtype = long.schema["value"]
    if not (value_dtype.is_numeric() or value_dtype == pl.Null):
        raise InputError(
            f"values have type {value_dtype}, expected numbers", source=source, column="value"
        )
    qdt = long.schema["query_id"]
    qcast = pl.col("query_id").cast(pl.Int64 if qdt.is_integer() else pl.Utf8)
    return long.select(
        pl.col("run_id").cast(pl.Utf8),
        qcast,
        pl.col("measure").cast(pl.Utf8),
        pl.col("value").cast(pl.Float64),
    )


def load_results(results: Any) -> pl.DataFrame:
    """Read per-query results in any accepted form into one long table.

    Rows with a null value are dropped (they count as missing). Raises
    :class:`~fasteval.errors.InputError` for NaN values and duplicated
    ``(run_id, query_id, measure)`` rows.

    Examples
    --------
    >>> import polars as pl
    >>> wide = pl.DataFrame({"query_id": ["q1", "q2"], "map": [0.5, 0.25]})
    >>> load_results({"bm25": wide}).sort("query_id").rows()
    [('bm25', 'q1', 'map', 0.5), ('bm25', 'q2', 'map', 0.25)]
    """
    parts: list[pl.DataFrame] = []
    if isinstance(results, Mapping):
        if not results:
            raise InputError("the mapping of runs is empty", source="results")
        for name, table in results.items():
            src = str(table) if isinstance(table, (str, os.PathLike)) else f"results[{name!r}]"
            parts.append(_normalize(_as_frame(table, src), src, str(name)))
    elif isinstance(results, (str, os.PathLike)):
        df = _as_frame(results, str(results))
        stem = None if "run_id" in df.columns else Path(results).stem
        parts.append(_normalize(df, str(results), stem))
    elif (
        isinstance(results, Iterable)
        and not isinstance(results, (pl.DataFrame, pl.LazyFrame))
        and not type(results).__module__.startswith("pandas")
    ):
        items = list(results)
        if not items:
            raise InputError("the list of result files is empty", source="results")
        for item in items:
            parts.append(load_results(item))
    else:
        parts.append(_normalize(_as_frame(results, "results"), "results", None))
    if len(parts) > 1:
        kinds = {p.schema["query_id"] for p in parts}
        if len(kinds) > 1:
            parts = [p.with_columns(pl.col("query_id").cast(pl.Utf8)) for p in parts]
    long = pl.concat(parts) if len(parts) > 1 else parts[0]
    long = long.filter(pl.col("value").is_not_null())
    nan_rows = long.with_row_index("_row").filter(pl.col("value").is_nan())
    if nan_rows.height:
        r = nan_rows.row(0, named=True)
        raise InputError(
            f"value is NaN for run {r['run_id']!r}, query {r['query_id']!r}, measure "
            f"{r['measure']!r}; drop the row or use a number",
            source="results",
            row=int(r["_row"]),
            column="value",
        )
    dup = long.group_by("run_id", "query_id", "measure").len().filter(pl.col("len") > 1)
    if dup.height:
        r = dup.sort("run_id", "query_id", "measure").row(0, named=True)
        raise InputError(
            f"{r['len']} rows for run {r['run_id']!r}, query {r['query_id']!r}, measure "
            f"{r['measure']!r}; expected one",
            source="results",
        )
    return long


@dataclass(frozen=True)
class Paired:
    """Scores of one measure, one row per system, one column per paired query."""

    measure: str
    query_ids: pl.Series
    scores: np.ndarray  # (n_systems, n_queries) float64
    n_present: np.ndarray  # (n_systems,) queries each system has a value for
    n_union: int  # queries any system has a value for


def pair(long: pl.DataFrame, systems: list[str], measure: str, missing: str) -> Paired:
    """Pair the queries of ``measure`` across ``systems``.

    ``missing="drop"`` keeps the queries every system has; ``missing="zero"`` keeps every
    query any system has and scores the absent ones 0.

    Examples
    --------
    >>> import polars as pl
    >>> long = pl.DataFrame({"run_id": ["a", "a", "b"], "query_id": ["1", "2", "1"],
    ...                      "measure": ["map"] * 3, "value": [0.5, 1.0, 0.25]})
    >>> p = pair(long, ["a", "b"], "map", "drop")
    >>> p.scores.tolist(), p.n_present.tolist(), p.n_union
    ([[0.5], [0.25]], [2, 1], 2)
    >>> pair(long, ["a", "b"], "map", "zero").scores.tolist()
    [[0.5, 1.0], [0.25, 0.0]]
    """
    sub = long.filter(pl.col("measure") == measure)
    wide = sub.pivot(on="run_id", index="query_id", values="value", aggregate_function=None)
    for s in systems:
        if s not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Float64).alias(s))
    wide = wide.select(["query_id", *systems]).sort("query_id")
    n_union = wide.height
    n_present = np.array([wide.height - wide[s].null_count() for s in systems], dtype=np.int64)
    if missing == "drop":
        wide = wide.drop_nulls(systems)
    elif missing == "zero":
        wide = wide.fill_null(0.0)
    else:
        raise ParameterError("missing", "'drop' or 'zero'", missing)
    scores = (
        wide.select(systems).to_numpy().T.astype(np.float64, copy=True)
        if wide.height
        else np.zeros((len(systems), 0))
    )
    return Paired(measure, wide["query_id"], np.ascontiguousarray(scores), n_present, n_union)
