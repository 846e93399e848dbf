"""The kernels under numba's bounds checking: an out-of-bounds index raises IndexError
instead of reading or writing past an array.

A subprocess runs with ``NUMBA_BOUNDSCHECK=1`` and its own ``NUMBA_CACHE_DIR`` (so neither
cache sees the other's machine code), evaluates every trec_eval measure and the extras on
small multi-query data under every combination of -J / -M / -c / -l / compat, and runs
``trec-eval -q -c -J -M`` once, preparing the tables with the kernels (not polars' small-table
path). Its results must equal this process's (normal build, small tables prepared by polars)
and, for compat 9, pytrec_eval's.

The subprocess compiles the kernels without ``parallel`` (``prange`` runs as ``range``): in
numba 0.68 a bounds-check failure inside a ``prange`` body is not raised (the loop reads
on, or the call ends in SystemError), while serial code raises IndexError. The loop bodies
are the same code either way. Compiling afresh takes most of a minute, hence ``slow``.
"""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import fasteval
from fasteval.cli.trec_eval_cmd import parse_args, run_trec_eval
from tests.core._gen import PYTREC_FAMILIES, FuzzCase, pytrec_expected, random_case

ROOT = Path(__file__).resolve().parents[2]

OPTIONS = list(itertools.product(
    (False, True),  # judged_only
    (None, 1, 5),  # max_docs
    (False, True),  # complete
    (1, 2),  # relevance_level
    (9, 10),  # compat
))
EXTRAS = ["ndcg_burges", "ndcg_burges_cut.3,10", "recip_rank_cut.3", "F1.3", "judged.3", "hits",
          "hits.3", "dcg", "dcg.3", "dcg_burges.3", "rbp_raw.0.8", "INST(max_rel=3)",
          "INSQ(max_rel=2, residual=True)", "BPM(T=2, max_rel=3)@3", "SDCG(max_rel=3)@5",
          "NERR8(max_rel=3)@5", "NERR9(max_rel=3)@5", "NERR10(max_rel=3)", "NERR11(max_rel=3)",
          "RBP(rel=1, residual=True)", "Compat", "Compat(normalize=False, rel=2)",
          "nDCG(gains={0: 0, 1: 2, 2: 1})@3", "RBP@3", "rbp_cut.5"]
CLI_FLAGS = ["-q", "-c", "-J", "-M5", "-l2", "-m", "all_trec"]


def data() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Text ids, some longer than the 12 bytes an Arrow string view holds inline; ties,
    grades -1..3, queries missing on either side, a query that -J leaves empty."""
    qrels, run = random_case(3, n_queries=12, pool=15, depth=12)
    long = pl.when(pl.col("doc_id").str.len_bytes() % 2 == 0).then(
        pl.col("doc_id") + "-a-longer-document-id").otherwise(pl.col("doc_id"))
    qrels = pl.concat([qrels.with_columns(long),
                       pl.DataFrame({"query_id": ["qJ"], "doc_id": ["judged"], "relevance": [1]})])
    run = pl.concat([run.with_columns(long),
                     pl.DataFrame({"query_id": ["qJ", "qJ"], "doc_id": ["x", "y"],
                                   "score": [1.0, 1.0]})])
    return qrels, run


def measures() -> list:
    return [m for m in fasteval.parse_measures(["all_trec", *EXTRAS]) if m.family != "relstring"]


def evaluate_all(qrels: pl.DataFrame, run: pl.DataFrame) -> pl.DataFrame:
    frames = []
    for judged_only, max_docs, complete, level, compat in OPTIONS:
        opts = dict(judged_only=judged_only, complete=complete, relevance_level=level,
                    compat=compat)
        if max_docs is not None:
            opts["max_docs"] = max_docs
        res = fasteval.evaluate(qrels, run, measures(), **opts)
        key = f"{judged_only}/{max_docs}/{complete}/{level}/{compat}"
        frames.append(res.with_columns(pl.lit(key).alias("run_id")))
    # several runs in one call
    frames.append(fasteval.evaluate(qrels, {"a": run, "b": run.head(40)}, measures(),
                                    judged_only=True, max_docs=3))
    return pl.concat(frames)


def trec_eval_text(qrels_path: Path, run_path: Path) -> str:
    import io

    buf = io.StringIO()
    assert run_trec_eval(parse_args([*CLI_FLAGS, str(qrels_path), str(run_path)]), out=buf) == 0
    return buf.getvalue()


def write_trec(qrels: pl.DataFrame, run: pl.DataFrame, where: Path) -> tuple[Path, Path]:
    q, r = where / "qrels", where / "run"
    q.write_text("".join(f"{a} 0 {b} {c}\n" for a, b, c in qrels.iter_rows()))
    r.write_text("".join(f"{a} Q0 {b} 0 {c!r} tag\n" for a, b, c in run.iter_rows()))
    return q, r


SCRIPT = """
import sys
from pathlib import Path
from numba.core import config
if config.BOUNDSCHECK != 1:
    sys.exit("NUMBA_BOUNDSCHECK is not in effect")
import numba
import numpy as np

_njit = numba.njit


def serial_njit(*args, **kwargs):
    kwargs.pop("parallel", None)  # prange runs as range
    return _njit(*args, **kwargs)


numba.njit = serial_njit  # before fasteval's kernels are defined
try:  # the checks are compiled in: a read past the end raises
    numba.njit(lambda a: a[3])(np.zeros(2))
    sys.exit("an out-of-bounds read did not raise")
except IndexError:
    pass
from fasteval.prepare import small
small.SMALL_ROWS = -1  # the preparation kernels too: polars prepares small tables otherwise
from tests.core import test_boundscheck as t
out = Path(sys.argv[1])
qrels, run = t.data()
t.evaluate_all(qrels, run).write_parquet(out / "results.parquet")
(out / "trec_eval.txt").write_text(t.trec_eval_text(*t.write_trec(qrels, run, out)))
from fasteval.kernels import groups, ids, qrels_index, rank, ranking
kernels = [f for m in (groups, ids, qrels_index, rank, ranking) for f in vars(m).values()
           if isinstance(f, numba.core.registry.CPUDispatcher)]
assert len(kernels) > 20 and not any(f.targetoptions.get("parallel") for f in kernels)
"""


def _equal(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.slow
def test_kernels_under_boundscheck(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "IndexError" not in proc.stderr

    qrels, run = data()
    got = pl.read_parquet(tmp_path / "results.parquet")
    want = evaluate_all(qrels, run)
    assert got.select("run_id", "query_id", "measure").equals(
        want.select("run_id", "query_id", "measure"))
    bad = [(r, q, m, a, b) for (r, q, m, a), b in zip(got.iter_rows(), want["value"], strict=True)
           if not _equal(a, b)]
    assert not bad, bad[:10]
    assert (tmp_path / "trec_eval.txt").read_text() == trec_eval_text(
        *write_trec(qrels, run, tmp_path))

    # compat 9, the queries both sides hold: trec_eval 9.0.8's C code (pytrec_eval) agrees
    case = FuzzCase(qrels.rows(), run.rows(), False)
    checked = 0
    for judged_only, max_docs, complete, level, compat in OPTIONS:
        if compat != 9:
            continue
        expected = pytrec_expected(case, PYTREC_FAMILIES, level, judged_only, max_docs, False)
        key = f"{judged_only}/{max_docs}/{complete}/{level}/{compat}"
        for q, m, v in got.filter(pl.col("run_id") == key).select(
                "query_id", "measure", "value").iter_rows():
            if q in expected and m in expected[q]:
                assert math.isclose(v, expected[q][m], abs_tol=1e-9) or (
                    math.isnan(v) and math.isnan(expected[q][m])), (key, q, m, v, expected[q][m])
                checked += 1
    assert checked > 10000
