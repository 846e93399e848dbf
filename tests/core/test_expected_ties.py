"""Expected values over tie orderings (``fasteval.kernels.expected``) against brute force:
the mean of trec_eval's value over every ordering of the tied documents, each ordering
scored by ``fasteval.evaluate(tie_break="input")``."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.kernels import expected as E
from fasteval.measures import parse_measures
from tests._profile import examples

MEASURES = [
    "P_1", "P_2", "P_3", "P_5", "P_10", "recall_1", "recall_3", "recall_5", "recip_rank", "map",
    "Rprec", "ndcg", "ndcg_cut_1", "ndcg_cut_2", "ndcg_cut_3", "ndcg_cut_5", "ndcg_cut_10",
    "success_1", "success_2", "success_3", "success_5", "map_cut_2", "map_cut_4",
    "relative_P_3", "F1_3", "hits", "hits_3", "dcg_3", "dcg", "ndcg_burges",
    "ndcg_burges_cut_3", "dcg_burges", "recip_rank_cut_2", "recip_rank_cut_4", "judged_3",
    "unj_3", "num_rel_ret", "num_ret", "num_rel", "set_P", "set_recall", "set_relative_P",
    "set_map", "set_F", "num_nonrel_judged_ret", "Rprec_mult_0.50", "Rprec_mult_1.80",
    "ndcg_1=5,2=1", "ndcg(rel=2)", "ndcg_cut_3(rel=2)", "P_3(rel=2)", "map(rel=2)",
    "recip_rank(rel=3)", "ndcg_burges_cut_3(rel=2)", "rbp", "RBP", "rbp(rel=2)", "rbp_raw",
    "rbp.95", "rbp_1=3,2=0.5", "rbp_1=0.5", "rbp_p=0.5", "set_judged", "set_P_cut_3",
    "set_P_cut_10", "set_P_cut_2(rel=2)",
]
"""Every family with an expected kernel, with cutoffs inside and beyond the rankings."""

LABELS = st.sampled_from([-2, -1, 0, 0, 1, 1, 2, 3])


def _orderings(groups: list[list[int]]):
    """Every distinct label sequence of the groups' orderings (all equally likely: each
    stands for the same number of document permutations)."""
    per_group = [sorted(set(itertools.permutations(g))) for g in groups]
    for combo in itertools.product(*per_group):
        yield [lab for part in combo for lab in part]


def _tables(orderings: list[list[int]], extra: list[int]):
    """One query per ordering: docs d0.. in the order given (label -1: not in the qrels;
    -2: judged -1), plus judged documents x0.. that the ranking misses."""
    qrels, run = [], []
    for o, labels in enumerate(orderings):
        q = f"q{o:06d}"
        for i, lab in enumerate(labels):
            run.append((q, f"d{i}", float(len(labels) - i)))
            if lab != -1:
                qrels.append((q, f"d{i}", -1 if lab == -2 else lab))
        for j, g in enumerate(extra):
            qrels.append((q, f"x{j}", g))
        if not any(r[0] == q for r in qrels):
            qrels.append((q, "nothing", 0))
    qt = pl.DataFrame(qrels, schema={"query_id": pl.Utf8, "doc_id": pl.Utf8,
                                     "relevance": pl.Int64}, orient="row")
    rt = pl.DataFrame(run, schema={"query_id": pl.Utf8, "doc_id": pl.Utf8,
                                   "score": pl.Float64}, orient="row")
    return qt, rt


def _brute(groups: list[list[int]], extra: list[int], measures: list[str],
           relevance_level: int) -> np.ndarray:
    orderings = list(_orderings(groups))
    qrels, run = _tables(orderings, extra)
    res = fasteval.evaluate(qrels, run, measures, tie_break="input",
                            relevance_level=relevance_level)
    wide = res.pivot(on="measure", index="query_id", values="value").sort("query_id")
    return wide.select(measures).to_numpy().mean(axis=0)  # columns named as asked


def _kernel(groups: list[list[int]], extra: list[int], measures: list[str],
            relevance_level: int, parallel: bool = False) -> np.ndarray:
    labels = np.array([lab for g in groups for lab in g], dtype=np.int32)
    starts = np.array([i == 0 for g in groups for i in range(len(g))], dtype=bool)
    judged = sorted([lab for lab in labels.tolist() if lab >= 0] + extra, reverse=True)
    grades = np.array(judged, dtype=np.int32)
    parsed = parse_measures(measures)
    plan = E.plan_expected(parsed, relevance_level, sorted(set(judged)))
    out = np.full((1, len(parsed)), np.nan)
    E.score_expected(labels, np.array([0, len(labels)], dtype=np.int64), starts, grades,
                     np.array([0]), np.array([len(grades)]), plan, out, 2, parallel=parallel)
    return out[0]


@st.composite
def tied_query(draw):
    sizes = draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    assume(sum(sizes) <= 8)
    groups = [draw(st.lists(LABELS, min_size=s, max_size=s)) for s in sizes]
    count = math.prod(len(set(itertools.permutations(g))) for g in groups)
    assume(count <= 3000)
    extra = draw(st.lists(st.sampled_from([0, 1, 2, 3]), max_size=3))
    return groups, extra


@settings(max_examples=examples(150), deadline=None)
@given(case=tied_query(), level=st.sampled_from([1, 1, 2]))
def test_expected_equals_mean_over_orderings(case, level):
    groups, extra = case
    got = _kernel(groups, extra, MEASURES, level)
    want = _brute(groups, extra, MEASURES, level)
    names = [m.name for m in parse_measures(MEASURES)]
    bad = {n: (g, w) for n, g, w in zip(names, got, want, strict=True)
           if not abs(g - w) <= 1e-12}
    assert not bad, (groups, extra, level, bad)


def test_hand_worked_example():
    # ranks 1-3 tied: one relevant (grade 2) among three, then a relevant (grade 1) alone;
    # num_rel = 2 (the qrels also judge a grade-0 document)
    groups = [[2, 0, -1], [1]]
    got = dict(zip(["P_1", "P_3", "recip_rank", "map", "success_1", "ndcg_cut_1"],
                   _kernel(groups, [0], ["P_1", "P_3", "recip_rank", "map", "success_1",
                                         "ndcg_cut_1"], 1), strict=True))
    assert got["P_1"] == pytest.approx(1 / 3)
    assert got["P_3"] == pytest.approx(1 / 3)
    assert got["recip_rank"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    # AP: the grade-2 document at rank 1, 2 or 3 adds 1/rank; the rank-4 one adds 2/4
    assert got["map"] == pytest.approx(((1 + 1 / 2 + 1 / 3) / 3 + 2 / 4) / 2)
    assert got["success_1"] == pytest.approx(1 / 3)
    assert got["ndcg_cut_1"] == pytest.approx((2 / 3) / 2)  # mean gain 2/3 over ideal 2


def test_no_ties_equal_trec_values_bit_for_bit():
    groups = [[2], [0], [-1], [1], [-2], [3], [0], [1]]
    got = _kernel(groups, [2, 0], MEASURES, 1)
    want = _brute(groups, [2, 0], MEASURES, 1)
    names = [m.name for m in parse_measures(MEASURES)]
    exact = {"F1_3"}  # 2r / (k + R) here, 2PR / (P + R) there: equal up to rounding
    for n, g, w in zip(names, got, want, strict=True):
        if n in exact:
            assert g == pytest.approx(w, abs=1e-15)
        else:
            assert g == w, n


def test_parallel_pass_equals_serial():
    rng = np.random.default_rng(7)
    groups_per_query = []
    for _ in range(40):
        n = int(rng.integers(1, 30))
        cuts = sorted(set(rng.integers(1, n + 1, size=int(rng.integers(0, 6))).tolist()) - {n})
        labels = rng.choice([-2, -1, 0, 0, 1, 2, 3], size=n).astype(np.int32)
        groups_per_query.append(np.split(labels, cuts))
    labels = np.concatenate([np.concatenate(g) for g in groups_per_query]).astype(np.int32)
    starts = np.concatenate([np.concatenate([np.arange(len(p)) == 0 for p in g])
                             for g in groups_per_query])
    offsets = np.cumsum([0] + [sum(len(p) for p in g) for g in groups_per_query])
    grades = np.sort(rng.choice([0, 1, 2, 3], size=40 * 5).astype(np.int32))[::-1].copy()
    gs = np.arange(40) * 5
    ge = gs + 5
    parsed = parse_measures(MEASURES)
    plan = E.plan_expected(parsed, 1, [0, 1, 2, 3])
    a = np.zeros((40, len(parsed)))
    b = np.zeros((40, len(parsed)))
    E.score_expected(labels, offsets, starts, grades, gs, ge, plan, a, 2, parallel=False)
    E.score_expected(labels, offsets, starts, grades, gs, ge, plan, b, 2, parallel=True)
    assert np.array_equal(a, b)
    assert not np.isnan(a).any()


def test_tie_starts_and_truncate_groups():
    perm = np.array([0, 1, 2, 3, 4, 5], dtype=np.int64)
    offsets = np.array([0, 4, 6], dtype=np.int64)
    key = np.array([0.5, 0.9, 0.5, -0.0, 1.0, 0.0])
    st_ = E.tie_starts(perm, offsets, key)
    # query 0 scores descending: 0.9 | 0.5 0.5 | -0.0 ; query 1: 1.0 | 0.0
    assert st_.tolist() == [True, True, False, True, True, True]
    labels = np.array([1, -1, 0, 2, -2, 1], dtype=np.int32)
    lab, off, st2, split = E.truncate_groups(labels, offsets, st_, 2**62, True)
    assert lab.tolist() == [1, 0, 2, 1] and off.tolist() == [0, 3, 4]
    assert st2.tolist() == [True, True, True, True] and split == -1
    # a cut inside the tie of query 0 is reported; one between groups is not
    assert E.truncate_groups(labels, offsets, st_, 2, False)[3] == 0
    assert E.truncate_groups(labels, offsets, st_, 3, False)[3] == -1
    # unjudged document first in its group: the next kept one starts the group
    lab, off, st3, _ = E.truncate_groups(np.array([-1, 1, 0], np.int32), np.array([0, 3]),
                                         np.array([True, False, True]), 2**62, True)
    assert lab.tolist() == [1, 0] and st3.tolist() == [True, True]


def test_count_ties():
    labels = np.array([1, 1, 0, 2, 0, 0, 1, 0, -1, -2, 1], dtype=np.int32)
    starts = np.array([True, False, True, True, False, True, True, True, False, False, True])
    # query 0: tie of equal grades (harmless); query 1: a 2 tied with a 0 (matters);
    # query 2: a judged non-relevant document tied with unjudged ones (harmless to P, AP..)
    tied, mattered = E.count_ties(labels, np.array([0, 3, 7, 11]), starts)
    assert (tied, mattered) == (3, 1)


def test_unsupported_families_listed():
    assert E.unsupported_families(["bpref", "P", "infAP"]) == ["bpref", "infAP"]


# --- prepare side: tie groups of real runs --------------------------------------------


def _starts_by_polars(pq, run: pl.DataFrame, batch) -> list[bool]:
    """Tie starts computed independently: each batch query's scores sorted descending."""
    ids = pq.query_ids.gather(batch.qidx).to_list()
    out: list[bool] = []
    by_q = {}
    for q, s in run.select("query_id", "score").iter_rows():
        by_q.setdefault(q, []).append(s)
    for q in ids:
        scores = sorted(by_q.get(q, []), reverse=True)
        out += [i == 0 or scores[i] != scores[i - 1] for i in range(len(scores))]
    return out


@pytest.mark.parametrize("small", [True, False])
@pytest.mark.parametrize("int_ids", [False, True])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_prepare_marks_tie_groups(monkeypatch, seed, int_ids, small):
    from fasteval import prepare as P
    from tests.core._gen import random_case

    if not small:
        monkeypatch.setattr(P.small, "SMALL_ROWS", -1)
    qrels, run = random_case(seed, n_queries=25, int_ids=int_ids)
    if seed == 3:  # the usual dump: judged queries in order, each in rank order already
        # (tie_starts reads them in place, without grouping or sorting)
        run = run.filter(pl.col("query_id").is_in(qrels["query_id"].unique().implode()))
        run = run.sort(["query_id", "score"], descending=[False, True])
        import fasteval.kernels.expected as E

        perms = []
        real = E.tie_starts
        monkeypatch.setattr(E, "tie_starts", lambda p, *a: perms.append(len(p)) or real(p, *a))
    else:  # queries interleaved, rows in no order
        run = run.sample(fraction=1.0, shuffle=True, seed=seed)
    pq = P.prepare_qrels(qrels)
    batch = P.prepare_run(pq, run, tie_break="expected")
    trec = P.prepare_run(pq, run)
    assert np.array_equal(batch.labels, trec.labels)
    assert np.array_equal(batch.offsets, trec.offsets)
    assert np.array_equal(batch.qidx, trec.qidx)
    assert batch.tie_starts.tolist() == _starts_by_polars(pq, run, batch)
    if seed == 3:  # read in place
        assert perms == [0]
    assert batch.report.tied_queries >= batch.report.ties_mattered > 0
    # -J keeps the groups (a dropped document's group goes on with the others); -c fills
    full = P.prepare_run(pq, run, tie_break="expected", judged_only=True, complete=True)
    ref = P.prepare_run(pq, run, judged_only=True, complete=True)
    assert np.array_equal(full.labels, ref.labels)
    assert np.array_equal(full.offsets, ref.offsets)
    assert np.array_equal(full.present, ref.present)
    assert full.report.filled == ref.report.filled
    starts = np.array(_starts_by_polars(pq, run, batch))
    keep = batch.labels >= 0
    group = np.cumsum(starts)  # group number of each position (groups never span queries)
    kept = group[keep]
    want = np.r_[True, kept[1:] != kept[:-1]]
    assert full.tie_starts[full.present.repeat(np.diff(full.offsets))].tolist() == \
        want.tolist()


def test_max_docs_between_groups_is_kept_inside_refused():
    from fasteval import prepare as P

    pq = P.prepare_qrels(pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"],
                                       "relevance": [1, 0, 1]}))
    run = pl.DataFrame({"query_id": ["q"] * 4, "doc_id": ["a", "b", "c", "d"],
                        "score": [3.0, 2.0, 2.0, 1.0]})
    b = P.prepare_run(pq, run, tie_break="expected", max_docs=3)
    assert b.labels.tolist() == [1, 1, 0] and b.tie_starts.tolist() == [True, True, False]
    with pytest.raises(fasteval.errors.ParameterError, match="query 'q' has equal scores"):
        P.prepare_run(pq, run, tie_break="expected", max_docs=2)


def test_keep_best_duplicates_then_ties():
    from fasteval import prepare as P

    pq = P.prepare_qrels(pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"],
                                       "relevance": [1, 0]}))
    run = pl.DataFrame({"query_id": ["q"] * 4, "doc_id": ["a", "b", "a", "c"],
                        "score": [1.0, 2.0, 2.0, 0.5]})
    b = P.prepare_run(pq, run, tie_break="expected", duplicates="keep_best")
    assert b.report.deduplicated_rows == 1
    assert b.labels.tolist() == [0, 1, -1] and b.tie_starts.tolist() == [True, False, True]


# --- API and CLI --------------------------------------------------------------------------


@st.composite
def tied_runs(draw):
    """A few queries of at most 6 documents with tied scores; some judged, some not."""
    qrels, run = [], []
    for q in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 6))
        scores = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=n, max_size=n))
        for i, s in enumerate(scores):
            run.append((f"q{q}", f"d{i}", s))
            lab = draw(LABELS)
            if lab != -1:
                qrels.append((f"q{q}", f"d{i}", -1 if lab == -2 else lab))
        for j, g in enumerate(draw(st.lists(st.sampled_from([0, 1, 2]), min_size=1,
                                            max_size=2))):
            qrels.append((f"q{q}", f"x{j}", g))
    qrels.append(("qmissing", "z", 1))  # in the qrels only (complete=True fills it)
    return qrels, run


def _api_brute(qrels, run, measures, **opts) -> dict[tuple[str, str], float]:
    """Mean of each query's values over every ordering of its tied documents, each
    ordering scored by tie_break="input" (the options applied to each ordering)."""
    by_q: dict[str, list] = {}
    for q, d, s in run:
        by_q.setdefault(q, []).append((d, s))
    qrows, rrows, origin = [], [], {}
    for q, docs in by_q.items():
        groups = {}
        for d, s in docs:
            groups.setdefault(s, []).append(d)
        parts = [list(itertools.permutations(groups[s])) for s in sorted(groups, reverse=True)]
        for k, combo in enumerate(itertools.product(*parts)):
            name = f"{q}|{k}"
            origin[name] = q
            order = [d for part in combo for d in part]
            rrows += [(name, d, float(len(order) - i)) for i, d in enumerate(order)]
            qrows += [(name, d, g) for qq, d, g in qrels if qq == q]
    qt = pl.DataFrame(qrows, schema={"query_id": pl.Utf8, "doc_id": pl.Utf8,
                                     "relevance": pl.Int64}, orient="row")
    rt = pl.DataFrame(rrows, schema={"query_id": pl.Utf8, "doc_id": pl.Utf8,
                                     "score": pl.Float64}, orient="row")
    res = fasteval.evaluate(qt, rt, measures, tie_break="input", **opts)
    res = res.with_columns(pl.col("query_id").replace_strict(origin).alias("query_id"))
    mean = res.group_by("query_id", "measure").agg(pl.col("value").mean())
    return {(q, m): v for q, m, v in mean.iter_rows()}


@settings(max_examples=examples(60), deadline=None)
@given(case=tied_runs(), judged_only=st.booleans(), complete=st.booleans(),
       level=st.sampled_from([1, 2]))
def test_evaluate_expected_equals_brute_force(case, judged_only, complete, level):
    qrels, run = case
    measures = ["P@1", "P@3", "recall@2", "recip_rank", "map", "Rprec", "ndcg", "ndcg@2",
                "success@1", "num_ret", "num_rel_ret", "judged@2"]
    qt = pl.DataFrame(qrels, schema={"query_id": pl.Utf8, "doc_id": pl.Utf8,
                                     "relevance": pl.Int64}, orient="row")
    rt = pl.DataFrame(run, schema={"query_id": pl.Utf8, "doc_id": pl.Utf8,
                                   "score": pl.Float64}, orient="row")
    opts = {"judged_only": judged_only, "relevance_level": level}
    ev = fasteval.Evaluator(qt, measures, tie_break="expected", complete=complete, **opts)
    got = ev.evaluate(rt)
    want = _api_brute(qrels, run, measures, **opts)
    trec = fasteval.evaluate(qt, rt, measures, complete=complete, **opts)
    assert got.select("query_id", "measure").equals(trec.select("query_id", "measure"))
    for q, m, v in got.select("query_id", "measure", "value").iter_rows():
        if q == "qmissing":  # filled by complete=True: as the trec rule scores it
            continue
        assert abs(v - want[(q, m)]) <= 1e-12, (q, m, v, want[(q, m)])
    filled = got.filter(pl.col("query_id") == "qmissing")["value"].to_list()
    assert filled == trec.filter(pl.col("query_id") == "qmissing")["value"].to_list()


def test_evaluate_refuses_measures_without_expected_value():
    qrels = {"q1": {"a": 1}}
    with pytest.raises(fasteval.errors.ParameterError, match=r"\['bpref', 'infAP'\]"):
        fasteval.Evaluator(qrels, ["map", "bpref", "infAP"], tie_break="expected")


def test_custom_gains_with_a_cutoff_are_refused_not_ignored():
    """The expected DCG profile gains the grade itself: nDCG(gains=...)@k would silently be
    plain nDCG@k, so it is refused; custom gains without a cutoff have an expected value."""
    qrels = {"q1": {"a": 1, "b": 2, "c": 0, "d": 1}}
    run = {"q1": {"a": 1.0, "b": 0.5, "c": 0.5, "d": 0.2}}
    with pytest.raises(fasteval.errors.ParameterError, match=r"without custom gains"):
        fasteval.evaluate(qrels, run, ["nDCG(gains={0: 0, 1: 10, 2: 1})@2"], tie_break="expected")
    gained = fasteval.evaluate(qrels, run, ["nDCG(gains={0: 0, 1: 10, 2: 1})"],
                               tie_break="expected")["value"].item()
    plain = fasteval.evaluate(qrels, run, ["ndcg"], tie_break="expected")["value"].item()
    # b and c tie at ranks 2-3: the mean of the two orders, gains 10 / 1 for grades 1 / 2
    dcg = 10 + (1 / 2) * (1 / 1.584962500721156 + 0 + 1 / 2 + 0) + 10 / 2.321928094887362
    idcg = 10 + 10 / 1.584962500721156 + 1 / 2
    assert gained == pytest.approx(dcg / idcg)
    assert gained != pytest.approx(plain)


def test_evaluate_example_and_report():
    qrels = {"q1": {"a": 1, "b": 0, "c": 0}, "q2": {"x": 1}}
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.5}, "q2": {"x": 2.0, "y": 2.0}}
    ev = fasteval.Evaluator(qrels, ["P@1", "recip_rank"], tie_break="expected")
    res = ev.evaluate(run)
    assert res["value"].to_list() == pytest.approx([1 / 3, (1 + 1 / 2 + 1 / 3) / 3, 1 / 2,
                                                   3 / 4])
    assert (ev.report.tied_queries, ev.report.ties_mattered) == (2, 2)
    trec = fasteval.evaluate(qrels, run, ["P@1", "recip_rank"])["value"].to_list()
    assert trec == pytest.approx([0.0, 1 / 3, 0.0, 1 / 2])  # c, b, a and y, x first


def test_cli_tie_break_expected(tmp_path, capsys):
    from fasteval.cli import main

    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 0\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0 t\nq1 Q0 c 3 1.0 t\n")
    rc = main(["eval", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "P@1",
               "--tie-break", "expected", "--format", "csv"])
    out, err = capsys.readouterr()
    assert rc == 0
    assert "0.333333" in out
    assert "1 query with tied scores, 1 of them tied between different grades" in err
    rc = main(["eval", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "bpref",
               "--tie-break", "expected", "--quiet"])
    out, err = capsys.readouterr()
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "bpref" in err


def test_cli_chunked_parquet_equals_in_memory(tmp_path, capsys):
    """The batch driver scores query-aligned chunks: the same values and tie counts."""
    from fasteval.cli import main
    from tests.core._gen import random_case

    qrels, run = random_case(11, n_queries=40, pool=20, depth=20)
    run = run.sort(["query_id", "score"], descending=[False, True])
    qrels.write_parquet(tmp_path / "qrels.parquet")
    run.write_parquet(tmp_path / "run.parquet")
    out = tmp_path / "out.parquet"
    measures = ["map", "ndcg@5", "P@3", "recip_rank"]
    rc = main(["eval", str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet"),
               *[a for m in measures for a in ("-m", m)], "-q", "-o", str(out),
               "--tie-break", "expected", "--max-rows-per-chunk", "50", "--quiet",
               "--log-json"])
    assert rc == 0
    ev = fasteval.Evaluator(qrels, measures, tie_break="expected")
    want = ev.evaluate(run, run_id="run")
    got = pl.read_parquet(out)
    key = ["query_id", "measure"]
    joined = want.join(got, on=key, suffix="_cli")
    assert joined.height == want.height == got.height
    assert (joined["value"] - joined["value_cli"]).abs().max() <= 1e-15
    assert ev.report.ties_mattered > 0
    import json

    log = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert log["report"]["tied_queries"] == ev.report.tied_queries
    assert log["report"]["ties_mattered"] == ev.report.ties_mattered


def test_every_set_measure_has_an_expected_value():
    # docs/measures.md lists every count and set measure (num_*, set_*), Judged (set_judged) and
    # SetP@k (set_P_cut) included
    families = {f.key for f in fasteval.measures.FAMILIES
                if f.key.startswith(("num_", "set_"))}
    assert E.unsupported_families(sorted(families)) == []
    qrels = {"q1": {"a": 1, "b": 0, "c": -1}}
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 0.5}}
    res = fasteval.evaluate(qrels, run, ["Judged", "SetP@2", "SetP@10"], tie_break="expected")
    # 2 of 5 judged (c's negative grade is unjudged); one relevant among four tied at the
    # top: 1/4 of it expected at each of ranks 1-2; all five retrieved within 10
    assert res["value"].to_list() == pytest.approx([2 / 5, (2 / 4) / 2, 1 / 5])
