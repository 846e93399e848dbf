"""The fusion layout: runs read and checked, ids interned once, every query's rows of all
runs ranked, their documents interned to candidates and their scores normalised
(:func:`prepare_fusion` -> :class:`FusionInput`); then any method's fused scores
(:meth:`FusionInput.combine`) and the fused run (:meth:`FusionInput.table`).

A weight search prepares once and combines many times (:func:`fasteval.optimize_fusion`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from fasteval.errors import InputError, ParameterError
from fasteval.fusion.options import NORMS, FusionSpec
from fasteval.kernels import fusion as KF
from fasteval.kernels.groups import gather_slices, group_runs
from fasteval.prepare.qrels import run_heads
from fasteval.prepare.tables import check_columns, check_run_table
from fasteval.prepare.threads import on_threads, split_parts
from fasteval.prepare.views import id_column, readonly

RunsInput = Sequence[Any] | Mapping[str, Any] | pl.DataFrame


class _FileRun(str):
    """The name of a run read from a file or stream, carrying the locator that turns a row
    of its table into the file's line (``where``), so that errors found while fusing name
    the line, as the readers do."""

    where: Any


def _located(name: str, row: int) -> dict[str, int]:
    """``InputError`` location keywords for ``row`` of the run called ``name``."""
    where = getattr(name, "where", None)
    return where(row) if where is not None else {"row": row}


def load_runs(runs: RunsInput) -> list[tuple[str, pl.DataFrame]]:
    """``(name, table)`` for each run: a sequence of runs (tables, paths, ``{qid: {docid:
    score}}`` dicts, ranx ``Run`` objects), a mapping ``{name: run}``, or one table with a
    ``run_id`` column (one run per value, in order of appearance)."""
    from fasteval.io.readers import is_path, load_source, read_run

    def one(obj: Any, name: str) -> tuple[str, pl.DataFrame]:
        if isinstance(obj, pl.DataFrame) and {"query_id", "doc_id", "score"} <= set(obj.columns):
            return _single(name, obj)
        if type(obj).__module__.split(".")[0] == "ranx" and hasattr(obj, "to_dict"):
            obj = obj.to_dict()
        if is_path(obj) or callable(getattr(obj, "read", None)):
            table, where, _ = load_source(obj, "run", None, {})  # repeats are found on the hashed ids
            located = _FileRun(name)
            located.where = where
            return _single(located, table)
        try:
            table = read_run(obj, duplicates="ignore")
        except InputError as exc:  # read_run names the kind of object: say which run it is
            raise exc.at(source=name) from None
        return _single(name, table)

    def _single(name: str, table: pl.DataFrame) -> tuple[str, pl.DataFrame]:
        """One run: a table whose run_id column names several runs would be fused as one."""
        if "run_id" in table.columns:
            ids = table.get_column("run_id").unique(maintain_order=True)
            if len(ids) > 1:
                shown = ", ".join(repr(v) for v in ids.head(3).to_list())
                raise InputError(
                    f"holds {len(ids)} runs (run_id {shown}{', ...' if len(ids) > 3 else ''}); "
                    "each input is one run (split it by run_id: one file or table per run)",
                    source=str(name), column="run_id")
        return name, table

    if isinstance(runs, pl.DataFrame):
        check_columns(runs, ("query_id", "doc_id", "score", "run_id"), "runs")
        check_run_table(runs, "runs")
        parts = runs.partition_by("run_id", maintain_order=True, as_dict=True)
        return [(str(k[0]), v) for k, v in parts.items()]
    if isinstance(runs, Mapping):
        names = [str(k) for k in runs]
        if len(set(names)) < len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise InputError(f"run name(s) {twice} given twice (keys equal as text)",
                             source="runs")
        return [one(v, n) for n, v in zip(names, runs.values(), strict=True)]
    if isinstance(runs, str | bytes) or not isinstance(runs, Sequence):
        raise ParameterError("runs", "a sequence of runs, a mapping {name: run} or a table "
                             "with a run_id column", type(runs).__name__)
    out = []
    for i, obj in enumerate(runs):
        name = os.fspath(obj) if isinstance(obj, str | os.PathLike) else f"run{i + 1}"
        out.append(one(obj, str(name)))
    return out


def _harmonize(cols: list[pl.Series]) -> list[pl.Series]:
    """Integer ids stay integers only if every run has integer ids; else all are text."""
    if all(c.dtype.is_integer() for c in cols):
        return [c.cast(pl.Int64) for c in cols]
    return [c.cast(pl.Utf8) for c in cols]


@dataclass
class FusionInput:
    """Runs prepared for fusion (see :mod:`fasteval.kernels.fusion` for the layout)."""

    names: list[str]
    norm: str
    query_ids: pl.Series  # distinct query ids, in order of first appearance (run order)
    doc_ids: pl.Series  # the runs' doc ids end to end (row r of the layout)
    docs: tuple  # the kernels' view of doc_ids (see id_column)
    seg: np.ndarray  # int64 [nq * R + 1]
    ent_row: np.ndarray  # int64 [entries]
    ent_val: np.ndarray  # float64 [entries]: normalised scores
    ent_cand: np.ndarray  # int32 [entries]
    cand_off: np.ndarray  # int64 [nq + 1]
    cand_row: np.ndarray  # int64 [candidates]: row of each candidate's doc id
    cuts: np.ndarray  # parts of whole queries, one kernel call each

    @property
    def n_runs(self) -> int:
        return len(self.names)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def combine(self, spec: FusionSpec) -> np.ndarray:
        """Fused score of every candidate (flat, query by query, candidates in order of
        first appearance)."""
        if spec.norm != self.norm:
            raise ParameterError("norm", f"{self.norm!r} (the runs were prepared for it)",
                                 spec.norm)
        from fasteval.fusion.options import METHODS

        fused = np.empty(len(self.cand_row), dtype=np.float64)
        weights = spec.weight_array(self.n_runs)
        code = METHODS[spec.method]
        borda = self.norm == "borda"

        def part(i: int) -> None:
            KF.combine_queries(int(self.cuts[i]), int(self.cuts[i + 1]), self.n_runs, self.seg,
                               self.ent_val, self.ent_cand, self.cand_off, code, borda, weights,
                               float(spec.k), float(spec.phi), float(spec.gamma),
                               float(spec.sigma), self.cand_row, self.docs, fused)

        on_threads(part, range(len(self.cuts) - 1))
        bad = np.flatnonzero(~np.isfinite(fused))
        if len(bad):  # sums or powers past the float64 limit, from finite scores
            c = int(bad[0])
            q = int(np.searchsorted(self.cand_off, c, side="right") - 1)
            value = float(fused[c])
            what = ("is not a number: its runs' scores (norm {norm}), combined by {method}, "
                    "reach both +inf and -inf in float64" if math.isnan(value) else
                    "overflows float64 ({value}): combining its runs' scores (norm {norm}) by "
                    "{method} passes the largest float64")
            hint = ("; scale the scores down or normalise them" if spec.method != "gmnz" else
                    "; scale the scores down, normalise them or lower gamma")
            raise InputError(
                f"the fused score of document {self.doc_ids[int(self.cand_row[c])]!r} for query "
                f"{self.query_ids[q]!r} "
                + what.format(value=value, norm=repr(spec.norm), method=repr(spec.method))
                + hint, source="runs", column="score")
        return fused

    def candidates(self) -> pl.DataFrame:
        """``query_id``, ``doc_id`` of every candidate, in the order of :meth:`combine`."""
        counts = np.diff(self.cand_off)
        qidx = np.repeat(np.arange(self.n_queries, dtype=np.int64), counts)
        return pl.DataFrame({"query_id": self.query_ids.gather(qidx),
                             "doc_id": self.doc_ids.gather(self.cand_row)})

    def table(self, fused: np.ndarray, rank: bool = True) -> pl.DataFrame:
        """The fused run: ``query_id``, ``doc_id``, ``score`` (and ``rank``, from 1), each
        query's documents by score descending, ties by doc id descending (the trec rule)."""
        out_row = np.empty(len(fused), dtype=np.int64)
        out_score = np.empty(len(fused), dtype=np.float64)

        def part(i: int) -> None:
            KF.order_queries(int(self.cuts[i]), int(self.cuts[i + 1]), self.cand_off, fused,
                             self.cand_row, self.docs, out_row, out_score)

        on_threads(part, range(len(self.cuts) - 1))
        counts = np.diff(self.cand_off)
        qidx = np.repeat(np.arange(self.n_queries, dtype=np.int64), counts)
        cols = {"query_id": self.query_ids.gather(qidx), "doc_id": self.doc_ids.gather(out_row),
                "score": pl.Series("score", out_score, dtype=pl.Float64)}
        if rank:
            pos = np.arange(len(fused), dtype=np.int64) - np.repeat(self.cand_off[:-1], counts)
            cols["rank"] = pl.Series("rank", pos + 1, dtype=pl.Int64)
        return pl.DataFrame(cols)


def _check_run(name: str, t: pl.DataFrame) -> None:
    """A run's columns, ids and scores (finite: the normalisations need them)."""
    check_columns(t, ("query_id", "doc_id", "score"), name)
    check_run_table(t, name, run_id=False)
    s = t.get_column("score")
    if s.dtype.is_float() and s.is_infinite().any():
        row = int(s.is_infinite().arg_max())
        raise InputError(f"score is {s[row]!r}; fusion needs finite scores", source=name,
                         column="score", **_located(name, row))


def _repeated(row: int, bases: np.ndarray, qcols: list[pl.Series], dcols: list[pl.Series],
              names: list[str]) -> InputError:
    """The error for a document twice in one query of a run (``row``: one of its rows in the
    runs' concatenated columns, which start at ``bases``), naming the repeat as read_run."""
    r = int(np.searchsorted(bases, row, side="right") - 1)
    local = row - int(bases[r])
    q, d = qcols[r][local], dcols[r][local]
    local = int(((qcols[r] == q) & (dcols[r] == d)).arg_true()[1])
    return InputError(
        f"document {dcols[r][local]!r} appears more than once for query "
        f"{qcols[r][local]!r}", source=names[r], column="doc_id", **_located(names[r], local))


def prepare_fusion(runs: list[tuple[str, pl.DataFrame]], norm: str) -> FusionInput:
    """Intern, group, rank, match and normalise the runs (``norm``: a canonical name).

    Raises
    ------
    InputError
        A run lacks a column, has a null id, a null, NaN or infinite score, or holds a
        document twice for one query.
    """
    names = [n for n, _ in runs]
    tables = [t for _, t in runs]
    for name, t in runs:
        _check_run(name, t)
    sizes = np.array([t.height for t in tables], dtype=np.int64)
    bases = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    qcols = _harmonize([t.get_column("query_id") for t in tables])
    dcols = _harmonize([t.get_column("doc_id") for t in tables])
    scores = np.concatenate([np.zeros(0)] + [t.get_column("score").cast(pl.Float64).to_numpy()
                                             for t in tables]).astype(np.float64, copy=False)
    code = NORMS[norm]
    key = -scores if code == KF.NORM_MIN_MAX_INVERTED else scores
    # queries: the first row of every run of equal ids, interned across runs
    heads = [run_heads(c) if len(c) else np.zeros(0, dtype=np.int64) for c in qcols]
    head_ids = pl.concat([c.gather(h) for c, h in zip(qcols, heads, strict=True)])
    codes, firsts = KF.intern_ids(id_column(head_ids))
    query_ids = head_ids.gather(firsts)
    nq = len(firsts)
    n_runs = len(tables)
    perms = []
    run_off = np.empty((n_runs, nq + 1), dtype=np.int64)
    pos = 0
    h0 = 0
    for r in range(n_runs):
        h = heads[r]
        perm, off = group_runs(h, int(sizes[r]), codes[h0:h0 + len(h)], nq)
        h0 += len(h)
        perms.append(perm + bases[r])
        run_off[r] = off + pos
        pos += len(perm)
    ent_row, seg = KF.stitch(np.concatenate([np.zeros(0, dtype=np.int64)] + perms), run_off, nq)
    doc_ids = pl.concat(dcols, rechunk=False) if dcols else pl.Series("doc_id", [], pl.Utf8)
    docs = id_column(doc_ids)
    n_ent = len(ent_row)
    ent_val = np.empty(n_ent, dtype=np.float64)
    ent_cand = np.empty(n_ent, dtype=np.int32)
    ncand = np.zeros(nq, dtype=np.int64)
    cand_first = np.empty(n_ent, dtype=np.int64)
    dup_at = np.full(nq, -1, dtype=np.int64)
    cuts = split_parts(seg[n_runs::n_runs], nq) if nq else np.zeros(1, dtype=np.int64)
    key = readonly(key)
    scores = readonly(scores)

    def part(i: int) -> None:
        KF.prepare_queries(int(cuts[i]), int(cuts[i + 1]), n_runs, seg, ent_row, key, scores,
                           docs, code, ent_val, ent_cand, ncand, cand_first, dup_at)

    on_threads(part, range(len(cuts) - 1))
    bad = np.flatnonzero(dup_at >= 0)
    if len(bad):
        raise _repeated(int(ent_row[dup_at[bad[0]]]), bases, qcols, dcols, names)
    cand_off = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(ncand, out=cand_off[1:])
    starts = seg[:-1:n_runs] if nq else np.zeros(0, dtype=np.int64)
    first = gather_slices(cand_first, starts, ncand) if nq else np.zeros(0, dtype=np.int64)
    cand_row = ent_row[first]
    return FusionInput(names=names, norm=norm, query_ids=query_ids.rename("query_id"),
                       doc_ids=doc_ids.rename("doc_id"), docs=docs, seg=seg, ent_row=ent_row,
                       ent_val=ent_val, ent_cand=ent_cand, cand_off=cand_off, cand_row=cand_row,
                       cuts=cuts)
