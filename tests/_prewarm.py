"""Fill numba's cache with ranx's kernels from a second process while the tests start.

On a machine whose cache is empty (a fresh clone), minutes of a test run are numba
compiling, and compiling is single-threaded: a third of it is ranx's kernels (ranx is the
oracle of many tests). ``tests/conftest.py`` starts this module once per session of many
tests, at low priority, so that ranx compiles on the core the tests leave idle, and holds
every test whose module mentions ranx until it has finished: no two processes ever compile
the same kernel at once (numba's cache index is not safe for that), and the tests load
ranx's kernels from the cache. Nothing is printed; ``FASTEVAL_TEST_PREWARM=0`` turns it off.

    python -m tests._prewarm        # what conftest runs
"""

from __future__ import annotations

import os
import warnings

_RANX_METRICS = [
    "hits", "hits@5", "hit_rate@5", "precision", "precision@5", "recall@10", "f1", "f1@10",
    "r-precision", "mrr", "mrr@5", "map", "map@10", "ndcg", "ndcg@10", "ndcg_burges",
    "ndcg_burges@10", "dcg", "dcg@10", "dcg_burges", "dcg_burges@10", "bpref", "rbp.8",
    "hits@5-l2", "map-l2", "ndcg@10-l2", "bpref-l2", "f1-l2",
]
"""The ranx metrics the oracle tests use (a cutoff or level is an argument, not a compile)."""


def _ranx() -> None:
    import ranx

    from fasteval.fusion.options import METHODS, NORMS, RANK_METHODS

    qrels = ranx.Qrels({"q1": {"d1": 2, "d2": 1, "d3": 0}, "q2": {"d4": 1}})
    runs = [ranx.Run({"q1": {"d1": 0.9, "d2": 0.5, "d5": 0.1}, "q2": {"d4": 0.3, "d6": 0.2}}),
            ranx.Run({"q1": {"d2": 3.0, "d3": 1.0}, "q2": {"d6": 2.0, "d4": 1.0}})]
    ranx.evaluate(qrels, runs[0], _RANX_METRICS, return_mean=False)
    ranx.evaluate(qrels, runs[0], _RANX_METRICS)
    params = {"rbc": {"phi": 0.7}, "gmnz": {"gamma": 0.4}, "rrf": {"k": 30},
              "logn_isr": {"sigma": 0.2}}
    for method in METHODS:
        for norm in NORMS:
            if norm == "borda" and method in RANK_METHODS:
                continue
            p = dict(params.get(method, {}))
            if method.startswith("w") or method == "mixed":
                p["weights"] = [0.4, 0.6]
            try:
                ranx.fuse(runs, norm=None if norm == "none" else norm, method=method, params=p)
            except Exception:  # noqa: BLE001 - a combination ranx refuses compiles nothing
                pass


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            _ranx()
        except ImportError:  # the oracles are not installed: nothing of theirs to compile
            pass


if __name__ == "__main__":
    os.environ.setdefault("FASTEVAL_QUIET", "1")
    main()
