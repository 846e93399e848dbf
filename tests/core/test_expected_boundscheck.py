"""The expected-value kernels under numba's bounds checking (see ``test_boundscheck.py``
for the method): a subprocess with ``NUMBA_BOUNDSCHECK=1``, its own numba cache and the
kernels compiled serially evaluates every measure that has an expected value with
``tie_break="expected"`` under -J / -c / -l, and calls the tie kernels directly; its
results must equal this process's."""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import fasteval

ROOT = Path(__file__).resolve().parents[2]

MEASURES = ["P@1", "P@5", "P@30", "recall@5", "recip_rank", "map", "gm_map", "Rprec", "ndcg",
            "ndcg@3", "ndcg@50", "success@1", "success@10", "map@5", "relative_P@5", "F1@5",
            "hits", "hits@3", "dcg@5", "ndcg_burges", "ndcg_burges@5", "dcg_burges",
            "recip_rank_cut@3", "judged@5", "unj_5", "num_rel_ret", "num_ret", "num_rel",
            "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
            "num_nonrel_judged_ret", "Rprec_mult_1.20", "ndcg_1=3,2=0.5", "ndcg(rel=2)", "rbp",
            "RBP", "rbp(rel=2)", "rbp_raw", "rbp_1=3,2=0.5", "RBP@3", "rbp_cut_20"]
OPTIONS = list(itertools.product((False, True), (False, True), (1, 2)))  # -J, -c, -l


def data() -> tuple[pl.DataFrame, pl.DataFrame]:
    from tests.core._gen import random_case

    return random_case(5, n_queries=15, pool=15, depth=14)


def evaluate_all(qrels: pl.DataFrame, run: pl.DataFrame) -> pl.DataFrame:
    frames = []
    for judged_only, complete, level in OPTIONS:
        res = fasteval.evaluate(qrels, run, MEASURES, tie_break="expected",
                                judged_only=judged_only, complete=complete,
                                relevance_level=level, max_docs=10**6)
        frames.append(res.with_columns(pl.lit(f"{judged_only}/{complete}/{level}")
                                       .alias("run_id")))
    return pl.concat(frames)


def kernels_direct() -> list[list]:
    from fasteval.kernels import expected as E

    perm = np.array([3, 0, 2, 1, 4], dtype=np.int64)
    offsets = np.array([0, 4, 5], dtype=np.int64)
    key = np.array([0.5, 0.5, 0.9, 0.5, 0.1])
    st = E.tie_starts(perm, offsets, key)
    labels = np.array([1, -1, 0, 2, -2], dtype=np.int32)
    lab, off, st2, split = E.truncate_groups(labels, offsets, st, 3, True)
    return [st.tolist(), lab.tolist(), off.tolist(), st2.tolist(), [int(split)],
            [int(x) for x in E.count_ties(labels, offsets, st)]]


SCRIPT = """
import sys
from pathlib import Path
from numba.core import config
if config.BOUNDSCHECK != 1:
    sys.exit("NUMBA_BOUNDSCHECK is not in effect")
import json
import numba
import numpy as np

_njit = numba.njit


def serial_njit(*args, **kwargs):
    kwargs.pop("parallel", None)  # prange runs as range
    return _njit(*args, **kwargs)


numba.njit = serial_njit  # before fasteval's kernels are defined
try:
    numba.njit(lambda a: a[3])(np.zeros(2))
    sys.exit("an out-of-bounds read did not raise")
except IndexError:
    pass
from tests.core import test_expected_boundscheck as t
out = Path(sys.argv[1])
t.evaluate_all(*t.data()).write_parquet(out / "results.parquet")
(out / "direct.json").write_text(json.dumps(t.kernels_direct()))
"""


@pytest.mark.slow
def test_expected_kernels_under_boundscheck(tmp_path: Path) -> None:
    import json

    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "IndexError" not in proc.stderr
    got = pl.read_parquet(tmp_path / "results.parquet")
    want = evaluate_all(*data())
    assert got.select("run_id", "query_id", "measure").equals(
        want.select("run_id", "query_id", "measure"))
    bad = [(r, q, m, a, b) for (r, q, m, a), b in zip(got.iter_rows(), want["value"], strict=True)
           if not (a == b or (math.isnan(a) and math.isnan(b)))]
    assert not bad, bad[:10]
    assert json.loads((tmp_path / "direct.json").read_text()) == kernels_direct()
