"""fasteval.fuse against ranx.fuse (0.3.21) on seeded random runs without tied scores:
every method x normalisation combination ranx supports, with documents missing from some
runs, runs of different lengths and query-level variety.

Where the two differ by a documented choice (fasteval.fuse's Notes), the test asserts the
difference itself: CombMAX/CombMIN (ranx's -1e9 / 1e9 placeholders for a missing
document), Condorcet (compared on queries whose pairwise majority is a strict order;
elsewhere the documented path property is checked) and the Borda normalisation with rank
methods (refused here; ranx depends on set iteration order).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fasteval
from fasteval.errors import ParameterError
from fasteval.fusion.options import METHODS, NORMS, RANK_METHODS, WEIGHTED_METHODS
from tests._profile import FULL

ranx = pytest.importorskip("ranx")

PARAMS = {"rbc": {"phi": 0.7}, "gmnz": {"gamma": 0.4}, "rrf": {"k": 30}, "logn_isr": {"sigma": 0.2}}


def _runs(seed: int, n_queries: int = 12, pool: int = 14) -> list[dict]:
    """2 to 4 runs over the same queries (ranx requires it), 1 to pool-1 documents each,
    scores on different scales and signs (no ties: continuous draws)."""
    rng = np.random.default_rng(seed)
    n_runs = int(rng.integers(2, 5))
    runs = []
    for _ in range(n_runs):
        run = {}
        scale = float(rng.choice([0.01, 1.0, 50.0]))
        shift = float(rng.choice([0.0, 3.0, -2.0]))
        for q in range(n_queries):
            n = int(rng.integers(1, pool))
            docs = rng.choice(pool, size=n, replace=False)
            scores = rng.normal(size=n) * scale + shift
            run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        runs.append(run)
    return runs


def _combos():
    for m in METHODS:
        for n in NORMS:
            if n == "borda" and m in RANK_METHODS:
                continue
            yield m, n


def _covering() -> list[tuple[str, str]]:
    """Every method without normalisation and every normalisation of CombSUM and of RRF
    (ranx compiles each method and each norm on first use: seconds apiece)."""
    cover = [(m, "none") for m in METHODS] + [("sum", n) for n in NORMS] + [("rrf", n) for n in NORMS]
    return [c for c in dict.fromkeys(cover) if c in set(_combos())]


COMBOS = list(_combos()) if FULL else _covering()
"""Every method x norm in the full profile; a covering set in the quick one."""


def _ranked_order(run: dict, q: str, inverted: bool) -> list[str]:
    docs = run.get(q, {})
    return sorted(docs, key=lambda d: docs[d], reverse=not inverted)


def _condorcet_check(runs, weights, inverted, got, exp):
    """Compare queries whose majority relation (ranx's votes) is a strict order; check the
    path property elsewhere: each document is not beaten by the one after it."""
    compared = 0
    for q in runs[0]:
        orders = [_ranked_order(r, q, inverted) for r in runs]
        pos = [{d: i for i, d in enumerate(o)} for o in orders]
        cands = sorted({d for o in orders for d in o})
        w = weights or [1.0] * len(runs)

        def votes(x, y, w=w, pos=pos):  # ranx: x_votes over runs where x is above y (missing = 1e6)
            return sum(wi for wi, p in zip(w, pos, strict=True)
                       if p.get(x, 1_000_000) < p.get(y, 1_000_000))

        def beats(y, x, w=w, pos=pos):  # fasteval: more votes, a run lacking both abstains
            wy = sum(wi for wi, p in zip(w, pos, strict=True) if (y in p or x in p)
                     and p.get(y, 1_000_000) < p.get(x, 1_000_000))
            wx = sum(wi for wi, p in zip(w, pos, strict=True) if (y in p or x in p)
                     and p.get(x, 1_000_000) < p.get(y, 1_000_000))
            return wy > wx

        total = sum(w)
        strict = all((votes(x, y) >= total - votes(x, y)) != (votes(y, x) >= total - votes(y, x))
                     for x in cands for y in cands if x != y)
        ours = sorted(cands, key=lambda d: -got[(q, d)])
        if strict:
            wins = {x: sum(votes(x, y) >= total - votes(x, y) for y in cands if y != x)
                    for x in cands}
            transitive = sorted(wins.values()) == list(range(len(cands)))
            if transitive:
                for d in cands:
                    assert got[(q, d)] == exp[(q, d)], (q, d)
                compared += 1
                continue
        for a, b in zip(ours, ours[1:], strict=False):
            assert not beats(b, a), (q, a, b)
    return compared


@pytest.mark.deep
@pytest.mark.parametrize(("method", "norm"), COMBOS, ids=[f"{m}-{n}" for m, n in COMBOS])
def test_equal_to_ranx(method: str, norm: str) -> None:
    seed = 1000 * list(METHODS).index(method) + list(NORMS).index(norm)
    runs = _runs(seed)
    rng = np.random.default_rng(seed + 7)
    params = dict(PARAMS.get(method, {}))
    weights = None
    if method in WEIGHTED_METHODS:
        weights = [float(x) for x in rng.uniform(0.05, 1.0, len(runs))]
        params["weights"] = weights
    ours = fasteval.fuse(runs, method=method, norm=norm, weights=weights,
                         **PARAMS.get(method, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = ranx.fuse([ranx.Run(r) for r in runs], norm=None if norm == "none" else norm,
                        method=method, params=params).to_dict()
    got = {(q, d): s for q, d, s, _ in ours.rows()}
    exp = {(q, d): s for q, docs in ref.items() for d, s in docs.items()}
    assert set(got) == set(exp)
    if method in ("condorcet", "w_condorcet"):
        _condorcet_check(runs, weights, norm == "min-max-inverted", got, exp)
        return
    for key, value in got.items():
        want = exp[key]
        if method in ("max", "min") and value != pytest.approx(want, rel=1e-12, abs=1e-12):
            # ranx's placeholder for a run lacking the document beat every real score
            q, d = key
            assert want == (-1e9 if method == "max" else 1e9)
            assert any(d not in r[q] for r in runs)
            assert (value < -1e9) if method == "max" else (value > 1e9)
            continue
        assert value == pytest.approx(want, rel=1e-12, abs=1e-12), key


def test_condorcet_compared_on_strict_queries() -> None:
    """Three correlated runs that rank the same documents: most queries have a strict,
    transitive majority order, and those are compared with ranx (the rest have a cycle)."""
    rng = np.random.default_rng(5)
    base = rng.normal(size=(40, 6))  # correlated runs: fewer cycles
    runs = [{f"q{q}": {f"d{d}": float(s) for d, s in enumerate(base[q] + rng.normal(size=6))}
             for q in range(40)} for _ in range(3)]
    ours = fasteval.fuse(runs, method="condorcet", norm=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = ranx.fuse([ranx.Run(r) for r in runs], norm=None, method="condorcet").to_dict()
    got = {(q, d): s for q, d, s, _ in ours.rows()}
    exp = {(q, d): s for q, docs in ref.items() for d, s in docs.items()}
    assert _condorcet_check(runs, None, False, got, exp) >= 20


def test_ranking_matches_ranx_order_when_untied() -> None:
    """Ranks: score descending; ranx's order where its scores have no ties."""
    runs = _runs(3, n_queries=30)
    ours = fasteval.fuse(runs, method="mnz", norm="zmuv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = ranx.fuse([ranx.Run(r) for r in runs], norm="zmuv", method="mnz")
    for q, docs in ref.to_dict().items():
        expected = sorted(docs, key=lambda d: -docs[d])
        if len(set(docs.values())) == len(docs):
            got = ours.filter(ours["query_id"] == q).sort("rank")["doc_id"].to_list()
            assert got == expected


@pytest.mark.parametrize("method", sorted(RANK_METHODS))
def test_borda_norm_refused_with_rank_methods(method: str) -> None:
    runs = _runs(1, n_queries=2)
    with pytest.raises(ParameterError, match="norm must be not 'borda'"):
        fasteval.fuse(runs, method=method, norm="borda", weights=[1.0] * len(runs)
                      if method in WEIGHTED_METHODS else None, **PARAMS.get(method, {}))


def _tied_runs(seed: int) -> list[dict]:
    """2 to 8 runs of 1 to 4 queries over pools of 1 to 7 documents: integer scores (ties),
    runs whose scores are all equal, negative scores, single-document queries."""
    rng = np.random.default_rng(seed)
    runs = []
    n_q, pool = int(rng.integers(1, 5)), int(rng.integers(1, 8))
    for _ in range(int(rng.choice([2, 3, 5, 8]))):
        kind = int(rng.integers(0, 3))
        run = {}
        for q in range(n_q):
            n = int(rng.integers(1, pool + 1))
            docs = rng.choice(pool, size=n, replace=False)
            scores = (rng.integers(-3, 3, size=n) if kind == 0 else
                      np.full(n, int(rng.integers(-2, 3))) if kind == 1 else
                      rng.integers(0, 2, size=n) - 1.5)
            run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        runs.append(run)
    return runs


def _trec_ordered(runs: list[dict], inverted: bool) -> list[dict]:
    """The same rankings with distinct scores: score descending (ascending when inverted),
    ties by doc id descending, the order fasteval gives tied documents."""
    out = []
    for run in runs:
        new = {}
        for q, docs in run.items():
            order = sorted(docs, key=lambda d: (-docs[d] if inverted else docs[d], d),
                           reverse=True)
            new[q] = {d: float(len(order) - i) for i, d in enumerate(order)}
        out.append(new)
    return out


_TIED = [(m, n) for m, n in COMBOS if "condorcet" not in m]


@pytest.mark.deep
@pytest.mark.parametrize("seed", range(4 if FULL else 2))
def test_equal_to_ranx_with_tied_and_equal_scores(seed: int) -> None:
    """Tied, equal and negative scores, many runs, single-document queries: the score
    methods on score normalisations equal ranx on the runs as given (ties do not change
    them); where positions count (rank methods, rank and Borda normalisations) they equal
    ranx on the same rankings with ties ordered by doc id descending."""
    runs = _tied_runs(seed)
    rng = np.random.default_rng(seed)
    for method, norm in _TIED:
        params = dict(PARAMS.get(method, {}))
        weights = None
        if method in WEIGHTED_METHODS:
            weights = [float(x) for x in rng.choice([0.0, 0.3, 1.0, 2.5], len(runs))]
            weights[0] = max(weights[0], 1.0)
            params["weights"] = weights
        ours = fasteval.fuse(runs, method=method, norm=norm, weights=weights,
                             **PARAMS.get(method, {}))
        positional = method in RANK_METHODS or norm in ("rank", "borda")
        given = _trec_ordered(runs, norm == "min-max-inverted") if positional else runs
        ranx_norm = None if norm == "none" else norm
        if method in RANK_METHODS and norm not in ("rank", "borda"):
            ranx_norm = None  # the order is already normalised into the scores
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = ranx.fuse([ranx.Run(r) for r in given], norm=ranx_norm, method=method,
                            params=params).to_dict()
        got = {(q, d): s for q, d, s, _ in ours.rows()}
        exp = {(q, d): s for q, docs in ref.items() for d, s in docs.items()}
        assert set(got) == set(exp), (method, norm)
        for key, value in got.items():
            if method in ("max", "min") and exp[key] in (-1e9, 1e9):
                continue  # ranx's placeholder for a run lacking the document
            assert value == pytest.approx(exp[key], rel=1e-12, abs=1e-12), (method, norm, key)


@pytest.mark.parametrize("seed", range(3))
def test_query_missing_from_runs_equals_ranx_on_the_runs_that_hold_it(seed: int) -> None:
    """ranx requires every run to hold every query; here a run lacking a query adds
    nothing to it: each query's fused scores equal ranx's fusion of the runs that hold it
    (weights of those runs), for the methods without Borda points or Condorcet votes."""
    runs = _tied_runs(100 + seed)
    rng = np.random.default_rng(seed)
    queries = sorted({q for r in runs for q in r})
    for run in runs[1:]:
        for q in queries:
            if rng.random() < 0.4 and q in run:
                del run[q]
    runs = [r for r in runs if r]
    for method in METHODS:
        if "borda" in method or "condorcet" in method:
            continue
        for norm in ("min-max", "zmuv", "rank"):
            weights = ([float(x) for x in rng.uniform(0.1, 2.0, len(runs))]
                       if method in WEIGHTED_METHODS else None)
            ours = fasteval.fuse(runs, method=method, norm=norm, weights=weights,
                                 **PARAMS.get(method, {}))
            got = {(q, d): s for q, d, s, _ in ours.rows()}
            positional = method in RANK_METHODS or norm == "rank"
            for q in queries:
                held = [i for i, r in enumerate(runs) if q in r]
                if len(held) < 2:
                    continue
                sub = [{q: runs[i][q]} for i in held]
                params = dict(PARAMS.get(method, {}))
                if weights is not None:
                    params["weights"] = [weights[i] for i in held]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ref = ranx.fuse([ranx.Run(r) for r in
                                     (_trec_ordered(sub, False) if positional else sub)],
                                    norm=None if method in RANK_METHODS else norm,
                                    method=method, params=params).to_dict()[q]
                for d, want in ref.items():
                    if method in ("max", "min") and want in (-1e9, 1e9):
                        continue
                    assert got[(q, d)] == pytest.approx(want, rel=1e-12, abs=1e-12), \
                        (method, norm, q, d)
