"""Realistic synthetic retrieval benchmarks, generated in chunks with bounded memory.

A generated benchmark has the awkward features of real evaluation dumps:

* graded qrels (0-3) with a few negative labels (in the pool, unjudged),
  judged documents that no run retrieved, and queries with no relevant document;
* several runs of differing quality, with score ties (some runs round their scores),
  unjudged documents, queries answered with fewer than ``depth`` documents;
* queries missing on either side: some qrels queries are absent from a run,
  some run queries have no qrels;
* string ids (``"q0000042"``, ``"d0001234567"``) or integer ids.

Everything is drawn block by block (a block is :data:`BLOCK_QUERIES` queries) from a
random generator seeded with ``(seed, block)``, so the output depends only on the
parameters and the seed -- not on how many rows are written per row group -- and a
million-query dump is produced with memory bounded by one block.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from fasteval import _stop
from fasteval.errors import ParameterError, check_flag

COMPRESSIONS = ("zstd", "snappy", "lz4", "gzip", "brotli", "none")
"""Parquet codecs :func:`write_synth` writes with."""

BLOCK_QUERIES = 4096
"""Queries drawn per random block (fixes the output for a given seed)."""

# per-run quality (signal weight) and score rounding (None = full precision floats);
# cycled when more runs are asked for than listed here.
_RUN_PROFILES: tuple[tuple[float, int | None], ...] = (
    (3.0, None),  # strong
    (1.5, 2),  # medium, scores rounded to 2 decimals -> ties
    (0.8, None),  # weak
    (1.2, 1),  # medium-weak, heavy ties
    (0.0, None),  # random
)


_CELL_BYTES = 160
"""Peak bytes per (query, candidate) cell of a block: its float and integer matrices (about
110 measured with tracemalloc), with headroom."""

_ROW_BYTES = 64
"""Bytes per generated row (ids as string views or integers, the score or grade), with
headroom for the copies made while a row group is assembled."""


def _integer(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def available_memory() -> int | None:
    """Bytes this process can still allocate: the system's available memory (Linux's
    ``MemAvailable``), less where a cgroup limit leaves less; None where unknown.

    Examples
    --------
    >>> m = available_memory()
    >>> m is None or m > 0
    True
    """
    avail: int | None = None
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, AttributeError):
            return None
    try:  # cgroup v2: the container's limit less what it uses
        with open("/sys/fs/cgroup/memory.max") as fh:
            limit = fh.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current") as fh:
                used = int(fh.read().strip())
            avail = min(avail, max(int(limit) - used, 0))
    except (OSError, ValueError):
        pass
    return avail


def check_memory(spec: SynthSpec, *, in_memory: bool = False,
                 rows_per_group: int | None = None) -> None:
    """Refuse, before anything is drawn, a spec whose generation would not fit in the
    available memory (:func:`available_memory`): one block (``depth`` or ``judged``), the
    whole dataset (``in_memory``, :func:`generate`: ``queries``), or the rows
    :func:`write_synth` buffers per row group (``rows_per_group``).

    Raises
    ------
    ParameterError
        Naming the parameter that makes it too large, with the estimate and what is
        available.

    Examples
    --------
    >>> check_memory(SynthSpec(queries=10, depth=10**12))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: depth must be small enough for one block of 10 queries to fit in memory (about ... GiB needed, ... GiB available), got 1000000000000
    """
    avail = available_memory()
    nq = min(BLOCK_QUERIES, spec.queries)
    block = nq * spec.candidates * _CELL_BYTES + nq * (spec.depth * spec.runs + spec.judged + 1) * _ROW_BYTES
    rows = spec.queries * (spec.depth * spec.runs + spec.judged + 1)
    needs = [(block, "depth" if spec.candidates > spec.judged + 1 else "judged",
              f"one block of {nq} queries")]
    if in_memory:
        needs.append((block + rows * _ROW_BYTES, "queries", "the whole dataset"))
    if rows_per_group is not None:
        per_file = spec.queries * max(spec.depth, spec.judged + 1)
        buffered = (spec.runs + 1) * min(rows_per_group, per_file) * _ROW_BYTES * 2
        needs.append((block + buffered, "rows_per_group",
                      f"{spec.runs + 1} row groups and one block"))
    if avail is None:
        return
    for need, param, what in needs:
        if need > avail:
            raise ParameterError(
                param, f"small enough for {what} to fit in memory (about "
                f"{need / 2**30:.1f} GiB needed, {avail / 2**30:.1f} GiB available)",
                getattr(spec, param, rows_per_group))


@dataclass(frozen=True)
class SynthSpec:
    """Parameters of a synthetic benchmark.

    Parameters
    ----------
    queries : int
        Number of query ids drawn (the union of qrels and run queries).
    depth : int
        Documents retrieved per query (most queries; a few return fewer).
    runs : int
        Number of runs, of differing quality.
    seed : int
        Seed; the same spec gives byte-identical tables.
    int_ids : bool
        Integer query and doc ids instead of strings.
    judged : int
        Judged documents per query in the pool (about a quarter of them relevant: ~5 by default).
    """

    queries: int
    depth: int = 100
    runs: int = 3
    seed: int = 0
    int_ids: bool = False
    judged: int = 20

    def __post_init__(self) -> None:
        for name in ("queries", "depth", "runs"):
            value = getattr(self, name)
            if not _integer(value) or value < 1:
                raise ParameterError(name, "a positive integer", value)
        if self.queries > 2**63:  # query ids 0 .. queries - 1 are int64
            raise ParameterError("queries", f"at most {2**63} (query ids are 64-bit integers)",
                                 self.queries)
        for name in ("judged", "seed"):  # numpy's generators take seeds >= 0 only
            value = getattr(self, name)
            if not _integer(value) or value < 0:
                raise ParameterError(name, "a non-negative integer", value)
        object.__setattr__(self, "int_ids", check_flag("int_ids", self.int_ids))  # "no" is truthy

    @property
    def candidates(self) -> int:
        """Candidate documents per query that runs rank (judged pool included)."""
        return max(self.depth + self.depth // 2, self.judged + 1)

    @property
    def corpus(self) -> int:
        """Size of the document id space; windows of it are shared between queries."""
        return max(10 * self.candidates, min(self.queries * self.candidates // 4, 50_000_000))

    def run_names(self) -> list[str]:
        """Names of the runs, ``run_0 .. run_{R-1}``."""
        return [f"run_{r}" for r in range(self.runs)]


def _ids(values: np.ndarray, prefix: str, width: int, int_ids: bool) -> pl.Series:
    s = pl.Series(values.astype(np.int64))
    if int_ids:
        return s
    return pl.select(pl.lit(prefix) + s.cast(pl.Utf8).str.zfill(width)).to_series()


def _block(spec: SynthSpec, block: int) -> tuple[pl.DataFrame, list[pl.DataFrame]]:
    """Draw one block of queries: ``(qrels rows, one table per run)``."""
    rng = np.random.default_rng([spec.seed, block])
    q0 = block * BLOCK_QUERIES
    nq = min(BLOCK_QUERIES, spec.queries - q0)
    c = spec.candidates
    qidx = np.arange(q0, q0 + nq, dtype=np.int64)
    # each query owns a window of the corpus: docs shared across queries, unique within one
    base = rng.integers(0, spec.corpus, size=nq)
    docs = (base[:, None] + np.arange(c)[None, :]) % spec.corpus  # (nq, c)
    grade = _grades(rng, spec, nq)
    qrels = _qrels(rng, spec, qidx, base, docs, grade)
    return qrels, [_run(rng, spec, r, qidx, docs, grade) for r in range(spec.runs)]


def _id_columns(spec: SynthSpec, queries: np.ndarray, docs: np.ndarray) -> dict[str, pl.Series]:
    """The ``query_id`` and ``doc_id`` columns of query and document numbers."""
    return {"query_id": _ids(queries, "q", max(7, len(str(spec.queries))), spec.int_ids),
            "doc_id": _ids(docs, "d", len(str(spec.corpus)), spec.int_ids)}


def _grades(rng: np.random.Generator, spec: SynthSpec, nq: int) -> np.ndarray:
    """The hidden "true" grade (0-3) of every candidate, ``(nq, candidates)``."""
    c = spec.candidates
    # graded relevance of the judged pool (first `judged` candidates), hidden "true" grade
    # of every candidate (unjudged candidates can be relevant too: incomplete pools)
    # the judged pool is richer in relevant documents (~25 %) than the rest (~4 %), as pools are
    u_raw = rng.random((nq, c))
    judged = min(spec.judged, c)
    scale = np.full(c, 0.4)
    scale[:judged] = 2.5
    u = u_raw / scale[None, :]
    grade = np.zeros((nq, c), dtype=np.int64)
    grade[u < 0.10] = 1
    grade[u < 0.05] = 2
    grade[u < 0.02] = 3
    easy = rng.random(nq) < 0.15  # some queries have many relevant documents
    grade[easy, : c // 3] = np.maximum(grade[easy, : c // 3], (u_raw[easy, : c // 3] < 0.2).astype(np.int64))
    return grade


def _qrels(rng: np.random.Generator, spec: SynthSpec, qidx: np.ndarray, base: np.ndarray, docs: np.ndarray,
           grade: np.ndarray) -> pl.DataFrame:
    """The block's qrels: the judged pool's grades, some queries left out or with nothing
    relevant, a few unjudged labels, and relevant documents no run retrieves."""
    nq, c = grade.shape
    judged = min(spec.judged, c)
    # which queries exist on which side
    side = rng.random(nq)
    in_qrels = side >= 0.02  # 2% of queries: run only, no qrels
    norel = (side >= 0.02) & (side < 0.04)  # 2%: judged but nothing relevant

    qg = grade[:, :judged].copy()
    qg[norel] = 0
    neg = rng.random((nq, judged)) < 0.02  # in the pool, not judged
    qg[neg] = -1
    # extra judged relevant docs that no run can retrieve: up to 50 past the candidate
    # window, never so far that they wrap around the corpus into it (a small corpus)
    extra = (rng.random(nq) < 0.3) & in_qrels & ~norel
    extra_doc = (base + c + rng.integers(0, min(50, spec.corpus - c), size=nq)) % spec.corpus
    extra_grade = rng.integers(1, 4, size=nq)

    keep = np.repeat(in_qrels[:, None], judged, axis=1)
    qrels_q = np.concatenate([np.repeat(qidx, judged)[keep.ravel()], qidx[extra]])
    qrels_d = np.concatenate([docs[:, :judged].ravel()[keep.ravel()], extra_doc[extra]])
    qrels_r = np.concatenate([qg.ravel()[keep.ravel()], extra_grade[extra]])
    return pl.DataFrame({**_id_columns(spec, qrels_q, qrels_d), "relevance": pl.Series(qrels_r, dtype=pl.Int64)})


def _run(rng: np.random.Generator, spec: SynthSpec, r: int, qidx: np.ndarray, docs: np.ndarray,
         grade: np.ndarray) -> pl.DataFrame:
    """Run ``r`` of the block: each query's top ``depth`` candidates by a noisy score of its
    quality, some queries missing or answered with fewer documents."""
    nq, c = grade.shape
    quality, rounding = _RUN_PROFILES[r % len(_RUN_PROFILES)]
    quality *= 1.0 + 0.1 * (r // len(_RUN_PROFILES))
    present = rng.random(nq) >= 0.02  # 2% of queries missing from this run
    noise = rng.standard_normal((nq, c))
    score = quality * grade + noise
    # top `depth` candidates per query, in score order
    top = np.argpartition(-score, spec.depth - 1, axis=1)[:, : spec.depth]
    top_score = np.take_along_axis(score, top, axis=1)
    order = np.argsort(-top_score, axis=1, kind="stable")
    top = np.take_along_axis(top, order, axis=1)
    top_score = np.take_along_axis(top_score, order, axis=1)
    # scores as a retriever would emit them: positive, some runs rounded (ties)
    top_score = 10.0 + top_score
    if rounding is not None:
        top_score = np.round(top_score, rounding)
    # 5% of queries return fewer documents
    short = rng.random(nq) < 0.05
    lengths = np.where(short, rng.integers(1, spec.depth + 1, size=nq), spec.depth)
    mask = (np.arange(spec.depth)[None, :] < lengths[:, None]) & present[:, None]
    run_q = np.repeat(qidx, spec.depth)[mask.ravel()]
    run_d = np.take_along_axis(docs, top, axis=1).ravel()[mask.ravel()]
    score_col = pl.Series(top_score.ravel()[mask.ravel()], dtype=pl.Float64)
    return pl.DataFrame({**_id_columns(spec, run_q, run_d), "score": score_col})


def iter_blocks(spec: SynthSpec):
    """Yield ``(qrels, [run_0, run_1, ...])`` data frames block by block.

    Examples
    --------
    >>> qrels, runs = next(iter_blocks(SynthSpec(queries=3, depth=5, runs=2, seed=1)))
    >>> qrels.columns, runs[0].columns
    (['query_id', 'doc_id', 'relevance'], ['query_id', 'doc_id', 'score'])
    """
    check_memory(spec)
    n_blocks = -(-spec.queries // BLOCK_QUERIES)
    for b in range(n_blocks):
        yield _block(spec, b)


def generate(spec: SynthSpec) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    """Generate a benchmark in memory (for small specs and tests).

    Examples
    --------
    >>> qrels, runs = generate(SynthSpec(queries=50, depth=10, runs=2, seed=7))
    >>> sorted(runs), qrels.get_column("relevance").min() >= -1
    (['run_0', 'run_1'], True)
    """
    check_memory(spec, in_memory=True)
    qparts: list[pl.DataFrame] = []
    rparts: list[list[pl.DataFrame]] = [[] for _ in range(spec.runs)]
    for qrels, runs in iter_blocks(spec):
        qparts.append(qrels)
        for r, df in enumerate(runs):
            rparts[r].append(df)
    names = spec.run_names()
    return pl.concat(qparts), {names[r]: pl.concat(rparts[r]) for r in range(spec.runs)}


def write_synth(spec: SynthSpec, out: str | os.PathLike[str], *, rows_per_group: int = 1_000_000,
                compression: str = "zstd", progress=None) -> dict[str, Path]:
    """Write a benchmark as parquet under ``out``: ``qrels.parquet`` and ``runs/<name>.parquet``.

    Run rows are sorted by query, then by descending score, as dumps usually are. Qrels
    rows are in query order within each block of :data:`BLOCK_QUERIES` queries, except
    that the block's extra relevant judgments (documents no run can retrieve) follow its
    other judgments, so a query's judgments may be split in two runs of rows (the layout
    that :func:`fasteval.prepare.prepare_qrels` reaches through a row order). Each file is
    written to a temporary name and renamed when complete; a job that fails or is stopped
    leaves no temporary file and removes the folders it made (``out``, ``out/runs``) while
    they are empty. A spec that would not fit in memory is refused first
    (:func:`check_memory`).

    Parameters
    ----------
    spec : SynthSpec
        What to generate.
    out : path
        Output directory (created).
    rows_per_group : int
        Parquet row-group size (does not change the data). Up to this many rows of every
        file are held in memory before they are written.
    compression : {"zstd", "snappy", "lz4", "gzip", "brotli", "none"}
        Parquet compression codec (does not change the data). ``"zstd"`` gives the
        smallest files; ``"snappy"`` (pyarrow's default) and ``"lz4"`` read about twice
        as fast.
    progress : callable, optional
        Called as ``progress(queries_done)`` after each block.

    Returns
    -------
    dict
        ``{"qrels": path, "run_0": path, ...}``.

    Examples
    --------
    >>> import tempfile
    >>> paths = write_synth(SynthSpec(queries=20, depth=5, runs=2), tempfile.mkdtemp())
    >>> sorted(paths)
    ['qrels', 'run_0', 'run_1']
    """
    from fasteval.io.atomic import atomic_path

    targets = _targets(spec, out, rows_per_group=rows_per_group, compression=compression)
    with contextlib.ExitStack() as stack:
        tmps = {k: stack.enter_context(atomic_path(p)) for k, p in targets.items()}
        _write_blocks(spec, tmps, rows_per_group=rows_per_group, compression=compression, progress=progress)
    return targets


def _targets(spec: SynthSpec, out: str | os.PathLike[str], *, rows_per_group: Any,
             compression: Any) -> dict[str, Path]:
    """Check :func:`write_synth`'s options and its folder; the file of each table."""
    if compression not in COMPRESSIONS:
        raise ParameterError("compression", f"one of {COMPRESSIONS}", compression)
    if not _integer(rows_per_group) or rows_per_group < 1:
        raise ParameterError("rows_per_group", "a positive integer", rows_per_group)
    check_memory(spec, rows_per_group=rows_per_group)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ParameterError("out", "a directory (created when missing)", str(out))
    if out.is_symlink() and not out.exists():
        raise ParameterError("out", "a directory (created when missing), not a symbolic link "
                             f"to the missing {os.readlink(out)!r}", str(out))
    targets = {"qrels": out / "qrels.parquet"}
    for name in spec.run_names():
        targets[name] = out / "runs" / f"{name}.parquet"
    runs_dir = out / "runs"
    if runs_dir.is_dir():  # a run of an earlier dataset would be read with this one's
        stale = sorted(p.name for p in runs_dir.glob("*.parquet") if p not in targets.values())
        if stale:
            raise ParameterError(
                "out", f"a directory whose runs/ holds no other parquet files (it holds "
                f"{', '.join(stale[:3])}{', ...' if len(stale) > 3 else ''}: they would be "
                "read as runs of this dataset; remove them or choose another directory)",
                str(out))
    return targets


def _write_blocks(spec: SynthSpec, tmps: dict[str, Path], *, rows_per_group: int, compression: str,
                  progress: Any) -> None:
    """Draw the blocks and write each table to its file in ``tmps``, ``rows_per_group`` rows
    a row group."""
    import pyarrow.parquet as pq

    writers: dict[str, pq.ParquetWriter] = {}
    buffers: dict[str, list[pl.DataFrame]] = {k: [] for k in tmps}
    counts = dict.fromkeys(tmps, 0)

    def flush(key: str, final: bool = False) -> None:
        if not buffers[key] or (counts[key] < rows_per_group and not final):
            return
        table = pl.concat(buffers[key]).to_arrow()
        if key not in writers:
            writers[key] = pq.ParquetWriter(str(tmps[key]), table.schema, compression=compression)
        writers[key].write_table(table, row_group_size=rows_per_group)
        buffers[key].clear()
        counts[key] = 0

    done = 0
    for qrels, runs in iter_blocks(spec):
        _stop.check()  # a SIGTERM that compiled code swallowed stops the job here
        parts = {"qrels": qrels, **dict(zip(spec.run_names(), runs, strict=True))}
        for key, df in parts.items():
            buffers[key].append(df)
            counts[key] += df.height
            flush(key)
        done += BLOCK_QUERIES
        if progress is not None:
            progress(min(done, spec.queries))
    for key in tmps:
        flush(key, final=True)
        if key not in writers:  # nothing at all (cannot happen with queries >= 1 but be safe)
            empty = (qrels if key == "qrels" else runs[0]).clear().to_arrow()
            writers[key] = pq.ParquetWriter(str(tmps[key]), empty.schema, compression=compression)
        writers[key].close()
