"""Random consistent preference judgments vs a direct reference built from the definitions.

The reference enumerates preferences as explicit (preferred, other) pairs per judgment
group (transitive closure for multi-sub-group groups) and classifies each by where the
two documents are ranked; it shares no code with the numba kernel. The Rnonrel measures
follow trec_eval's counting quirks and are pinned by the conformance files instead.
"""

from __future__ import annotations

import itertools

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasteval.prefs import evaluate_prefs
from tests._profile import examples

DOCS = [f"d{i}" for i in range(7)]


@st.composite
def topic(draw):
    rows = []
    for g in range(draw(st.integers(1, 3))):
        level = {d: draw(st.integers(0, 3)) for d in DOCS}  # hidden order keeps the group consistent
        for s in range(draw(st.integers(1, 3))):
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=5, unique=True))
            rows += [(f"g{g}", f"s{s}", d, float(level[d])) for d in docs]
    ret = draw(st.lists(st.sampled_from(DOCS + ["x1", "x2"]), max_size=8, unique=True))
    scores = [float(draw(st.integers(0, 3))) for _ in ret]
    return rows, list(zip(ret, scores, strict=True))


def reference(rows, run):
    order = [d for d, _ in sorted(run, key=lambda t: (-t[1], t[0]))]
    pos = {d: i for i, d in enumerate(order)}
    groups: dict[str, dict[str, list]] = {}
    for g, s, d, r in rows:
        groups.setdefault(g, {}).setdefault(s, []).append((d, r))
    pc: dict[tuple[str, str], int] = {}
    tot = dict(fr=0, pr=0, fi=0, pi=0, no=0)
    avg = dict(all=0.0, ret=0.0, imp=0.0)
    for g in sorted(groups):
        subs = groups[g]
        edges = {(a, b) for lst in subs.values() for (a, ra), (b, rb) in itertools.permutations(lst, 2) if ra > rb}
        if len(subs) > 1:
            changed = True
            while changed:
                new = {(a, c) for (a, b) in edges for (b2, c) in edges if b == b2 and a != c}
                changed = not new <= edges
                edges |= new
        c = dict(fr=0, pr=0, fi=0, pi=0, no=0)
        for a, b in edges:
            pc[(a, b)] = pc.get((a, b), 0) + 1
            ra, rb = a in pos, b in pos
            if ra and rb:
                c["pr"] += 1
                c["fr"] += pos[a] < pos[b]
            elif ra:
                c["fi"] += 1
                c["pi"] += 1
            elif rb:
                c["pi"] += 1
            else:
                c["no"] += 1
        for k in tot:
            tot[k] += c[k]
        if c["pr"] + c["pi"] + c["no"]:
            avg["all"] += (c["fr"] + c["fi"]) / (c["pr"] + c["pi"] + c["no"])
        if c["pr"]:
            avg["ret"] += c["fr"] / c["pr"]
        if c["pr"] + c["pi"]:
            avg["imp"] += (c["fr"] + c["fi"]) / (c["pr"] + c["pi"])
    ng = len(groups)
    blocks = {1: [0.0, 0], 2: [0.0, 0], 3: [0.0, 0]}
    for a, b in {tuple(sorted(p)) for p in pc}:
        ab, ba = pc.get((a, b), 0), pc.get((b, a), 0)
        if a in pos and b in pos:
            hi, lo = (a, b) if pos[a] < pos[b] else (b, a)
            blocks[1][0] += pc.get((hi, lo), 0) / (ab + ba)
            blocks[1][1] += 1
        elif a in pos or b in pos:
            r, u = (a, b) if a in pos else (b, a)
            blocks[2][0] += pc.get((r, u), 0) / (ab + ba)
            blocks[2][1] += 1
        else:
            blocks[3][1] += 1

    def ratio(x, y):
        return x / y if y else 0.0

    poss = tot["pr"] + tot["pi"] + tot["no"]
    s12, n12 = blocks[1][0] + blocks[2][0], blocks[1][1] + blocks[2][1]
    return {
        "prefs_num_prefs_poss": poss,
        "prefs_num_prefs_ful": tot["fr"] + tot["fi"],
        "prefs_num_prefs_ful_ret": tot["fr"],
        "prefs_simp": ratio(tot["fr"] + tot["fi"], poss),
        "prefs_simp_ret": ratio(tot["fr"], tot["pr"]),
        "prefs_simp_imp": ratio(tot["fr"] + tot["fi"], tot["pr"] + tot["pi"]),
        "prefs_avgjg": avg["all"] / ng,
        "prefs_avgjg_ret": avg["ret"] / ng,
        "prefs_avgjg_imp": avg["imp"] / ng,
        "prefs_pair_ret": ratio(*blocks[1]),
        "prefs_pair_imp": ratio(s12, n12),
        "prefs_pair": ratio(s12, n12 + blocks[3][1]),
    }


def frames(rows, run, qid="q"):
    j = pl.DataFrame(
        {"query_id": [qid] * len(rows), "jg": [r[0] for r in rows], "jsg": [r[1] for r in rows],
         "doc_id": [r[2] for r in rows], "rel_level": [r[3] for r in rows]},
        schema={"query_id": pl.Utf8, "jg": pl.Utf8, "jsg": pl.Utf8, "doc_id": pl.Utf8, "rel_level": pl.Float64},
    )
    r = pl.DataFrame(
        {"query_id": [qid] * (len(run) + 1), "doc_id": [d for d, _ in run] + ["zz_pad"],
         "score": [s for _, s in run] + [-1.0]},
        schema={"query_id": pl.Utf8, "doc_id": pl.Utf8, "score": pl.Float64},
    )
    return j, r


@settings(max_examples=examples(150), deadline=None)
@given(topic())
def test_matches_reference(t):
    rows, run = t
    j, r = frames(rows, run)
    got = {m: v for m, q, v in evaluate_prefs(j, r) if q == "q"}
    want = reference(rows, run)
    for m, v in want.items():
        assert got[m] == pytest.approx(v, rel=1e-12, abs=1e-12), m


@settings(max_examples=examples(60), deadline=None)
@given(topic(), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(t, rnd):
    rows, run = t
    j, r = frames(rows, run)
    base = evaluate_prefs(j, r)
    perm_j = j.sample(fraction=1.0, shuffle=True, seed=rnd.randint(0, 10**6))
    perm_r = r.sample(fraction=1.0, shuffle=True, seed=rnd.randint(0, 10**6))
    assert evaluate_prefs(perm_j, perm_r) == base


@settings(max_examples=examples(60), deadline=None)
@given(topic())
def test_values_in_range(t):
    rows, run = t
    j, r = frames(rows, run)
    for m, _, v in evaluate_prefs(j, r):
        if m.startswith("prefs_num") or m == "num_q":
            assert isinstance(v, int) and v >= 0
        else:
            assert 0.0 <= v <= 1.0, (m, v)
