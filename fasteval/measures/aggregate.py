"""How per-query values become one value per run: trec_eval's summary, in one place.

A measure aggregates by its family's ``aggregation``: ``"mean"`` (the mean over queries),
``"sum"`` (counts: ``num_ret``, ``num_rel``, ...) or ``"gm"`` (``gm_map``, ``gm_bpref``:
the geometric mean of ``max(value, MIN_GEO_MEAN)``, trec_eval's floor, as the exponential of
the mean of the logarithms).

Every aggregate rests on the *exact* sum of the values (of their logarithms for ``"gm"``),
rounded once to the nearest double (:class:`PartialSum`: the correctly rounded sum, as
:func:`math.fsum` gives it); a mean is that sum divided by the number of values. An
aggregate therefore depends neither on the order of the queries, nor on how the rows were
chunked or split between workers, nor on the engine: each part of the values gives a
:func:`partial` aggregate, partials merge exactly, and :func:`finish` rounds once. trec_eval
adds the values one after the other in its query order; the two can differ in the last bits
of a double, which never shows at trec_eval's printed precision (4 decimals) except for a
value at a rounding boundary of that precision.

:func:`summary` aggregates one array (the trec-eval command, preference judgments),
:func:`aggregate_long` a long table of results (:func:`fasteval.aggregate`),
:func:`table_partials` and :func:`finish_table` the measure columns of a wide table per run
(the batch driver; the Ray engine's workers send partials, its driver finishes them).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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


_NONE = np.empty(0)
_NONE.setflags(write=False)
_INF = math.inf


def _frozen(values: np.ndarray) -> np.ndarray:
    """``values`` as a read-only float64 array of its own."""
    out = np.array(values, dtype=np.float64)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class PartialSum:
    """The exact sum of some values, kept so that it merges with others and rounds once.

    ``partials`` are Shewchuk's non-overlapping partials of the finite values below
    ``2**969`` in magnitude (:mod:`fasteval.measures._sums`), ``big`` those of the larger
    ones times ``2**-1000`` (empty but for such values); nans and infinities are counted
    apart. Picklable: the Ray engine's workers send these.

    Attributes
    ----------
    partials, big : float64 arrays (read-only).
    count : int, the number of values (non-finite ones included).
    nan, pos_inf, neg_inf : int, how many of them are nan, +inf, -inf.
    neg_nan : int, how many of the nans have their sign bit set (x86's ``0 / 0``).

    Examples
    --------
    >>> a, b = PartialSum.of(np.array([1e16, 1.0])), PartialSum.of(np.array([-1e16]))
    >>> a.merge(b).total(), 1e16 + 1.0 - 1e16  # exact, then rounded once
    (1.0, 0.0)
    >>> PartialSum.merge_all([a, b, PartialSum.of(np.array([np.inf]))]).total()
    inf
    """

    partials: np.ndarray = field(default_factory=lambda: _NONE)
    big: np.ndarray = field(default_factory=lambda: _NONE)
    count: int = 0
    nan: int = 0
    pos_inf: int = 0
    neg_inf: int = 0
    neg_nan: int = 0

    def __post_init__(self) -> None:
        for name in ("partials", "big"):  # read-only float64, as the kernels hand them over
            a = getattr(self, name)
            if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and not a.flags.writeable):
                object.__setattr__(self, name, _frozen(a))

    def __reduce__(self) -> tuple:
        """Pickled as its fields, unpickled through ``__init__`` (arrays read-only again)."""
        return (type(self), (self.partials, self.big, self.count, self.nan, self.pos_inf,
                             self.neg_inf, self.neg_nan))

    @classmethod
    def of(cls, values: np.ndarray) -> PartialSum:
        """The exact sum of ``values`` (float64, any order).

        Examples
        --------
        >>> PartialSum.of(np.array([0.1, 0.2, 0.3])).total()
        0.6
        """
        return cls.by_group(values)[0]

    @classmethod
    def by_group(cls, values: np.ndarray, rows: tuple[np.ndarray, np.ndarray] | None = None,
                 valid: np.ndarray | None = None) -> list[PartialSum]:
        """The exact sum of each group of ``values``: ``rows`` from
        :func:`fasteval.measures._sums.group_rows` (None: one group of every value),
        ``valid`` False where a value is left out (a null).

        Examples
        --------
        >>> from fasteval.measures._sums import group_rows
        >>> v = np.array([1.0, 2.0, 4.0, 8.0])
        >>> parts = PartialSum.by_group(v, group_rows(np.array([1, 0, 1, 1]), 2),
        ...                             valid=np.array([True, True, True, False]))
        >>> [(p.total(), p.count) for p in parts]
        [(2.0, 1), (5.0, 2)]
        """
        from fasteval.measures import _sums

        s = _sums.group_sums(values, rows, valid)
        small, big = s.small.tolist(), s.big.tolist()
        return [
            cls(_frozen(small[s.small_at[g]:s.small_at[g + 1]]),
                _frozen(big[s.big_at[g]:s.big_at[g + 1]]) if s.big_at[g + 1] > s.big_at[g] else _NONE,
                *(int(c) for c in s.stats[g]))
            for g in range(len(s.stats))
        ]

    def merge(self, other: PartialSum) -> PartialSum:
        """The exact sum of the values of both.

        Examples
        --------
        >>> PartialSum.of(np.array([0.5])).merge(PartialSum.of(np.array([0.25]))).total()
        0.75
        """
        return PartialSum.merge_all([self, other])

    @classmethod
    def merge_all(cls, parts: Iterable[PartialSum]) -> PartialSum:
        """The exact sum of the values of all ``parts`` (none: the empty sum).

        Examples
        --------
        >>> PartialSum.merge_all([]).total(), PartialSum.merge_all([]).count
        (0.0, 0)
        """
        parts = list(parts)
        if len(parts) == 1:
            return parts[0]
        from fasteval.measures import _sums

        small = _sums.group_sums(np.concatenate([_NONE, *(p.partials for p in parts)]))
        big = np.concatenate([small.big, *(p.big for p in parts)])
        if len(big):  # the big partials of all, and the small ones grown past 2**969
            big = _sums.group_sums(big, scaled=True).big
        counts = [sum(getattr(p, f) for p in parts)
                  for f in ("count", "nan", "pos_inf", "neg_inf", "neg_nan")]
        return cls(_frozen(small.small), _frozen(big) if len(big) else _NONE, *counts)

    def total(self) -> float:
        """The exact sum of the values rounded once to the nearest double (half to even):
        nan with a nan (its sign bit set if that of any nan is: trec_eval's ``-nan``), nan
        with both infinities (``inf + -inf``: the machine's nan, ``-nan`` on x86), ±inf with
        an infinity or where the exact sum is beyond the largest double (IEEE rounding), 0.0
        for no values.

        Examples
        --------
        >>> import math
        >>> v = [1e300, 0.1, -1e300, 1e-300]
        >>> PartialSum.of(np.array(v)).total() == math.fsum(v) == 0.1
        True
        """
        if self.nan:
            return -math.nan if self.neg_nan else math.nan
        if self.pos_inf and self.neg_inf:
            return _INF - _INF  # computed here: the machine's own nan
        if self.pos_inf or self.neg_inf:
            return math.inf if self.pos_inf else -math.inf
        if not len(self.big):
            try:
                return math.fsum(self.partials)  # correctly rounded
            except OverflowError:  # (an intermediate sum of fsum's)
                pass
        from fasteval.measures import _sums

        return _sums.exact_total(self.partials, self.big)


def partial(values: np.ndarray, kind: str) -> PartialSum:
    """The partial aggregate of ``values`` (float64, one measure's per-query values, any
    order) for aggregation ``kind``: the exact sum of the values (``"mean"``, ``"sum"``) or
    of their :func:`log_floor` (``"gm"``). Merge partials with :meth:`PartialSum.merge_all`
    or hand them all to :func:`finish`.

    Examples
    --------
    >>> parts = [partial(np.array([0.5, 0.0]), "gm"), partial(np.array([1.0]), "gm")]
    >>> round(finish(parts, "gm"), 6) == round(summary(np.array([0.5, 0.0, 1.0]), "gm"), 6)
    True
    """
    return PartialSum.of(log_floor(values) if kind == "gm" else values)


def finish(parts: Sequence[PartialSum], kind: str) -> float:
    """The aggregate of the values behind the partial aggregates ``parts`` (:func:`partial`,
    all of one ``kind``): the sum for ``"sum"``, the mean (the sum over the count) for
    ``"mean"``, the exponential of the mean of the logarithms for ``"gm"``; 0.0 for no
    values.

    Examples
    --------
    >>> parts = [partial(np.array([0.5, 0.0]), "mean"), partial(np.array([1.0]), "mean")]
    >>> finish(parts, "mean"), finish([partial(np.array([2.0, 3.0]), "sum")], "sum")
    (0.5, 5.0)
    >>> finish([], "mean")
    0.0
    """
    merged = PartialSum.merge_all(parts)
    if merged.count == 0:
        return 0.0
    total = merged.total()
    if kind == "sum":
        return total
    if kind == "gm":
        return math.exp(total / merged.count)
    return total / merged.count


def summary(values: np.ndarray, kind: str) -> float:
    """The aggregate of one measure's per-query ``values`` (float64, any order); 0 for none:
    ``finish([partial(values, kind)], kind)``.

    Examples
    --------
    >>> v = np.array([0.5, 0.0, 1.0])
    >>> summary(v, "mean"), summary(v, "sum"), round(summary(v, "gm"), 6)
    (0.5, 1.5, 0.0171)
    >>> summary(np.array([0.1] * 10), "sum")  # added one after the other: 0.9999999999999999
    1.0
    """
    return finish([partial(np.asarray(values, dtype=np.float64), kind)], kind)


def _codes(column: pl.Series) -> tuple[np.ndarray, list[Any]]:
    """The code of each value of ``column`` (int64, 0 for the first value met, 1 for the
    next new one, ...) and the values in that order.

    Examples
    --------
    >>> codes, keys = _codes(pl.Series(["b", "b", "a", "b"]))
    >>> codes.tolist(), keys
    ([0, 0, 1, 0], ['b', 'a'])
    """
    ids = column.rle_id()  # one stretch of rows per value: the usual layout, and the cheapest
    stretches = int(ids[-1]) + 1 if len(ids) else 0
    if stretches * 8 <= len(ids) or stretches < 64:
        firsts = column.rle().struct.field("value")
        if firsts.n_unique() == stretches:
            return ids.cast(pl.Int64).to_numpy(), firsts.to_list()
    keys = column.unique(maintain_order=True)
    if keys.dtype == pl.Utf8 and not keys.has_nulls():
        codes = column.cast(pl.Enum(keys)).to_physical()
    else:
        codes = column.replace_strict(keys, pl.int_range(len(keys), eager=True))
    return codes.cast(pl.Int64).to_numpy(), keys.to_list()


def _floats(column: pl.Series) -> tuple[np.ndarray, np.ndarray | None]:
    """``column``'s values as float64 and, where it has nulls, the mask of the others."""
    valid = column.is_not_null().to_numpy() if column.null_count() else None
    return column.cast(pl.Float64).to_numpy(), valid


def table_partials(frame: pl.DataFrame, columns: Sequence[str],
                   by: str = "run_id") -> dict[tuple[Any, str], PartialSum]:
    """The partial aggregate (:func:`partial`, kind by :func:`aggregation_of`) of each of
    ``columns`` (per-query values, one column per measure) for each value of ``by``, nulls
    left out: keyed ``(value of by, column)``, the values of ``by`` in order of first
    appearance, each with ``columns`` in the given order.

    Examples
    --------
    >>> w = pl.DataFrame({"run_id": ["r", "s", "r"], "map": [0.5, 0.2, None]})
    >>> {k: (p.total(), p.count) for k, p in table_partials(w, ["map"]).items()}
    {('r', 'map'): (0.5, 1), ('s', 'map'): (0.2, 1)}
    """
    from fasteval.measures._sums import group_rows

    codes, keys = _codes(frame.get_column(by))
    rows = group_rows(codes, len(keys))
    per_column = []
    for name in columns:
        values, valid = _floats(frame.get_column(name))
        if aggregation_of(name) == "gm":
            values = log_floor(values)
        per_column.append(PartialSum.by_group(values, rows, valid))
    return {(key, name): per_column[j][g] for g, key in enumerate(keys)
            for j, name in enumerate(columns)}


def finish_table(parts: Mapping[tuple[Any, str], PartialSum],
                 run_dtype: pl.DataType = pl.Utf8) -> pl.DataFrame:
    """``(run_id, measure, value)`` rows of partial aggregates keyed ``(run, measure)``, in
    the mapping's order, each finished (:func:`finish`, kind by :func:`aggregation_of`);
    a key whose partial holds no value gives no row.

    Examples
    --------
    >>> finish_table({("r", "num_ret"): partial(np.array([3.0, 4.0]), "sum"),
    ...               ("r", "map"): PartialSum()}).rows()
    [('r', 'num_ret', 7.0)]
    """
    kinds: dict[str, str] = {}
    rows = [(run, m, finish([p], kinds.get(m) or kinds.setdefault(m, aggregation_of(m))))
            for (run, m), p in parts.items() if p.count]
    return pl.DataFrame(
        {"run_id": pl.Series([r[0] for r in rows], dtype=run_dtype),
         "measure": pl.Series([r[1] for r in rows], dtype=pl.Utf8),
         "value": pl.Series([r[2] for r in rows], dtype=pl.Float64)}
    )


def aggregate_long(results: pl.DataFrame) -> pl.DataFrame:
    """``(run_id, measure, value)`` per run and measure of a long table of per-query results
    (a Float64 ``value``), runs and measures in order of first appearance, nulls left out
    (a measure with no value for a run gives no row).

    Examples
    --------
    >>> res = pl.DataFrame({"run_id": ["r"] * 4, "query_id": ["a", "b"] * 2,
    ...     "measure": ["map", "map", "num_ret", "num_ret"], "value": [0.5, 1.0, 10.0, 20.0]})
    >>> aggregate_long(res).rows()
    [('r', 'map', 0.75), ('r', 'num_ret', 30.0)]
    """
    from fasteval.measures._sums import group_rows

    run_codes, runs = _codes(results.get_column("run_id"))
    measure_codes, measures = _codes(results.get_column("measure"))
    values, valid = _floats(results.get_column("value"))
    gm = np.array([aggregation_of(m) == "gm" for m in measures], dtype=bool)
    if gm.any():
        logs = gm[measure_codes]
        values = values.copy()
        values[logs] = log_floor(values[logs])
    width = max(len(measures), 1)
    rows = group_rows(run_codes * width + measure_codes, len(runs) * width)
    parts = PartialSum.by_group(values, rows, valid)
    return finish_table({(runs[g // width], measures[g % width]): p for g, p in enumerate(parts)},
                        results.schema["run_id"])
