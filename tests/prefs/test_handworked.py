"""Tiny hand-worked cases for every preference measure, plus input/parameter errors."""

from __future__ import annotations

import polars as pl
import pytest

from fasteval.errors import InputError, ParameterError, UnknownMeasureError
from fasteval.prefs import ALL_PREFS, PREFS_MEASURES, evaluate_prefs, format_trec_lines


def J(rows):
    """rows: (qid, jg, jsg, doc, rel)."""
    q, jg, jsg, d, r = zip(*rows, strict=True)
    return pl.DataFrame(
        {"query_id": list(q), "jg": list(jg), "jsg": list(jsg), "doc_id": list(d), "rel_level": [float(x) for x in r]}
    )


def R(rows):
    """rows: (qid, doc, score)."""
    q, d, s = zip(*rows, strict=True)
    return pl.DataFrame({"query_id": list(q), "doc_id": list(d), "score": [float(x) for x in s]})


def per_topic(lines, qid):
    return {m: v for m, q, v in lines if q == qid}


def test_single_group_three_levels():
    # a(2) > b(1) > c(0); run ranks b above a, c not retrieved.
    # a>b both retrieved, violated; a>c and b>c implied-fulfilled.
    lines = evaluate_prefs(J([("q", "u", "s", "a", 2), ("q", "u", "s", "b", 1), ("q", "u", "s", "c", 0)]),
                           R([("q", "b", 2), ("q", "a", 1)]))
    v = per_topic(lines, "q")
    assert v["prefs_num_prefs_poss"] == 3
    assert v["prefs_num_prefs_ful"] == 2
    assert v["prefs_num_prefs_ful_ret"] == 0
    assert v["prefs_simp"] == pytest.approx(2 / 3)
    assert v["prefs_simp_ret"] == 0.0
    assert v["prefs_simp_imp"] == pytest.approx(2 / 3)
    # pairs: (b,a) 0/1, (b,c) 1, (a,c) 1
    assert v["prefs_pair"] == pytest.approx(2 / 3)
    assert v["prefs_pair_ret"] == 0.0
    assert v["prefs_pair_imp"] == pytest.approx(2 / 3)
    assert v["prefs_avgjg"] == pytest.approx(2 / 3)
    assert v["prefs_avgjg_ret"] == 0.0
    assert v["prefs_avgjg_imp"] == pytest.approx(2 / 3)
    # R=2 relevant, N=1 nonrel: add R*(R-N)=2 possible, num_rel_ret*(R-N)=2 fulfilled -> 4/5
    assert v["prefs_avgjg_Rnonrel"] == pytest.approx(4 / 5)
    # retrieved: R=2, N=0 -> ful 0+2*2, poss 1+num_rel*2 -> 4/5
    assert v["prefs_avgjg_Rnonrel_ret"] == pytest.approx(4 / 5)


def test_groups_disagree_simp_pair_avgjg_differ():
    # u1: a>b, a>c ; u2: b>a.  Run: a, b, c.
    rows = [("q", "u1", "s", "a", 1), ("q", "u1", "s", "b", 0), ("q", "u1", "s", "c", 0),
            ("q", "u2", "s", "b", 1), ("q", "u2", "s", "a", 0)]
    lines = evaluate_prefs(J(rows), R([("q", "a", 3), ("q", "b", 2), ("q", "c", 1)]))
    v = per_topic(lines, "q")
    assert v["prefs_num_prefs_poss"] == 3 and v["prefs_num_prefs_ful"] == 2
    assert v["prefs_simp"] == pytest.approx(2 / 3)
    assert v["prefs_pair"] == pytest.approx((1 / 2 + 1) / 2)  # pair (a,b) 1 of 2, pair (a,c) 1 of 1
    assert v["prefs_avgjg"] == pytest.approx((1 + 0) / 2)
    # u1: R=1 < N=2 -> trec_eval recount: a vs first nonrel b (fulfilled), and the quirk of
    # pairing the last class with itself: b vs b, c vs b (possible) -> 1/3. u2: R=N=1 -> 0/1.
    assert v["prefs_avgjg_Rnonrel"] == pytest.approx((1 / 3 + 0) / 2)


def test_partial_order_transitive_closure():
    # sub-group s1: a>b ; s2: b>c  =>  a>c is implied by transitivity (3 preferences).
    rows = [("q", "u", "s1", "a", 2), ("q", "u", "s1", "b", 1), ("q", "u", "s2", "b", 2), ("q", "u", "s2", "c", 1)]
    v = per_topic(evaluate_prefs(J(rows), R([("q", "a", 1)])), "q")
    assert v["prefs_num_prefs_poss"] == 3
    assert v["prefs_num_prefs_ful"] == 2  # a>b, a>c implied-fulfilled; b>c neither retrieved
    assert v["prefs_num_prefs_ful_ret"] == 0
    assert v["prefs_simp"] == pytest.approx(2 / 3)
    assert v["prefs_simp_imp"] == pytest.approx(1.0)
    assert v["prefs_simp_ret"] == 0.0
    # reversed ranking violates all three
    v = per_topic(evaluate_prefs(J(rows), R([("q", "c", 3), ("q", "b", 2), ("q", "a", 1)])), "q")
    assert v["prefs_num_prefs_poss"] == 3 and v["prefs_num_prefs_ful"] == 0
    assert v["prefs_simp_ret"] == 0.0


def test_partial_order_duplicate_preference_counted_once():
    # a>b stated in two sub-groups of ONE judgment group: one preference.
    rows = [("q", "u", "s1", "a", 2), ("q", "u", "s1", "b", 1), ("q", "u", "s2", "a", 5), ("q", "u", "s2", "b", 3)]
    v = per_topic(evaluate_prefs(J(rows), R([("q", "a", 2), ("q", "b", 1)])), "q")
    assert v["prefs_num_prefs_poss"] == 1 and v["prefs_num_prefs_ful_ret"] == 1


def test_ties_in_score_break_by_docno_ascending():
    # equal scores: "a" ranks above "b" (strcmp ascending in form_prefs_counts.c)
    run = R([("q", "a", 1.0), ("q", "b", 1.0)])
    v = per_topic(evaluate_prefs(J([("q", "u", "s", "b", 1), ("q", "u", "s", "a", 0)]), run), "q")
    assert v["prefs_num_prefs_ful_ret"] == 0
    v = per_topic(evaluate_prefs(J([("q", "u", "s", "a", 1), ("q", "u", "s", "b", 0)]), run), "q")
    assert v["prefs_num_prefs_ful_ret"] == 1


def test_max_docs_cuts_after_ranking():
    j = J([("q", "u", "s", "a", 1), ("q", "u", "s", "b", 0)])
    run = R([("q", "b", 5), ("q", "a", 1)])  # b first
    v = per_topic(evaluate_prefs(j, run, max_docs=1), "q")
    # only b retrieved: a>b is implied and not fulfilled
    assert v["prefs_num_prefs_ful"] == 0 and v["prefs_simp_imp"] == 0.0 and v["prefs_pair_imp"] == 0.0


def test_summary_mean_and_count_sums():
    j = J([("q1", "u", "s", "a", 1), ("q1", "u", "s", "b", 0), ("q2", "u", "s", "a", 1), ("q2", "u", "s", "b", 0)])
    run = R([("q1", "a", 2), ("q1", "b", 1), ("q2", "a", 1), ("q2", "b", 2)])
    lines = evaluate_prefs(j, run, run_id="RUN")
    s = per_topic(lines, "all")
    assert s["runid"] == "RUN" and s["num_q"] == 2
    assert s["prefs_num_prefs_poss"] == 2 and s["prefs_num_prefs_ful"] == 1
    assert s["prefs_simp"] == pytest.approx(0.5)
    assert [m for m, q, _ in lines if q == "q1"] == list(PREFS_MEASURES)
    assert [m for m, q, _ in lines if q == "all"] == list(ALL_PREFS)
    assert [q for _, q, _ in lines][::14][:2] == ["q1", "q2"]


def test_topics_in_strcmp_order_and_no_per_query():
    j = J([(q, "u", "s", d, r) for q in ("2", "10", "1.5") for d, r in (("a", 1), ("b", 0))])
    run = R([(q, "a", 1) for q in ("2", "10", "1.5")])
    lines = evaluate_prefs(j, run, measures=["prefs_simp"])
    assert [q for _, q, _ in lines] == ["1.5", "10", "2", "all"]
    assert [q for _, q, _ in evaluate_prefs(j, run, measures=["prefs_simp"], per_query=False)] == ["all"]


def test_measure_selection_follows_print_order():
    j = J([("q", "u", "s", "a", 1), ("q", "u", "s", "b", 0)])
    run = R([("q", "a", 1)])
    lines = evaluate_prefs(j, run, measures=["prefs_pair", "prefs_num_prefs_poss"], per_query=False)
    assert [m for m, _, _ in lines] == ["prefs_num_prefs_poss", "prefs_pair"]
    lines = evaluate_prefs(j, run, measures=["prefs"], per_query=False)  # the 'prefs' nickname
    assert [m for m, _, _ in lines] == ["num_q", *PREFS_MEASURES[:6]]
    with pytest.raises(UnknownMeasureError, match="prefs_simp"):
        evaluate_prefs(j, run, measures=["prefs_smip"])


def test_missing_topic_error_and_complete_placeholder():
    j = J([("q1", "u", "s", "a", 1), ("q1", "u", "s", "b", 0), ("q2", "u", "s", "a", 1), ("q2", "u", "s", "b", 0)])
    run = R([("q1", "a", 2)])
    with pytest.raises(InputError, match="q2"):
        evaluate_prefs(j, run)
    lines = evaluate_prefs(j, run, complete=True)
    v = per_topic(lines, "q2")
    assert v["prefs_num_prefs_poss"] == 1 and v["prefs_num_prefs_ful"] == 0
    assert v["prefs_simp"] == 0.0 and v["prefs_pair"] == 0.0
    s = per_topic(lines, "all")
    assert s["num_q"] == 2 and s["prefs_simp"] == pytest.approx(0.5)


def test_run_topics_without_judgments_are_ignored():
    j = J([("q", "u", "s", "a", 1), ("q", "u", "s", "b", 0)])
    run = R([("q", "a", 1), ("zz", "a", 1)])
    assert per_topic(evaluate_prefs(j, run), "all")["num_q"] == 1


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([("q", "u", "s", "a", 1), ("q", "u", "s", "a", 0)], "two different rel_levels"),
        ([("q", "u", "s1", "a", 1), ("q", "u", "s1", "b", 2), ("q", "u", "s2", "a", 0), ("q", "u", "s2", "b", 3)],
         "rel_level 0"),
        ([("q", "u", "s1", "a", 2), ("q", "u", "s1", "b", 1), ("q", "u", "s2", "b", 2), ("q", "u", "s2", "a", 1)],
         "inconsistent"),
    ],
)
def test_inconsistent_judgments_raise(rows, match):
    with pytest.raises(InputError, match=match):
        evaluate_prefs(J(rows), R([("q", "a", 1)]))


def test_bad_inputs(tmp_path):
    run = R([("q", "a", 1)])
    p = tmp_path / "p.txt"
    p.write_text("q u s a 1\nq u s b\n")
    with pytest.raises(InputError, match=r"line 2"):
        evaluate_prefs(p, run)
    p.write_text("q u s a 1\n\nq u s b 0\n")
    with pytest.raises(InputError, match=r"line 2.*blank"):
        evaluate_prefs(p, run)
    p.write_text("q u s a x1\n")
    with pytest.raises(InputError, match=r"line 1.*not a number"):
        evaluate_prefs(p, run)
    p.write_text("q u s a nan\n")
    with pytest.raises(InputError, match=r"line 1.*not a number"):
        evaluate_prefs(p, run)
    with pytest.raises(InputError, match="NaN"):
        evaluate_prefs(J([("q", "u", "s", "a", float("nan"))]), run)
    p.write_text("")
    with pytest.raises(InputError, match="empty"):
        evaluate_prefs(p, run)
    with pytest.raises(InputError, match="not found"):
        evaluate_prefs(tmp_path / "nope", run)
    p.write_text("q u s a 1\nq u s b 0\n")
    with pytest.raises(ParameterError):
        evaluate_prefs(p, run, mode="qrels")
    with pytest.raises(ParameterError):
        evaluate_prefs(p, run, max_docs=-1)
    with pytest.raises(InputError, match="twice"):
        evaluate_prefs(p, R([("q", "a", 1), ("q", "a", 2)]))
    with pytest.raises(InputError, match="score"):
        evaluate_prefs(p, pl.DataFrame({"query_id": ["q"], "doc_id": ["a"]}))


def test_files_comments_and_run_path(tmp_path):
    p = tmp_path / "prefs"
    p.write_text("# header\nq u s d#1 1\n# mid\nq u s d2 0\n")
    r = tmp_path / "run"
    r.write_text("q Q0 d#1 1 2.0 T1\n  # comment\n\nq Q0 d2 2 1.0 T2\n")
    lines = evaluate_prefs(p, r)
    assert ("runid", "all", "T2") in lines
    assert per_topic(lines, "q")["prefs_num_prefs_ful_ret"] == 1
    out = format_trec_lines(lines)
    assert "prefs_num_prefs_ful_ret\tq\t1\n" in out and "prefs_simp            \tq\t1.0000\n" in out


def test_qrels_prefs_from_frame_and_file(tmp_path):
    q = tmp_path / "qrels"
    q.write_text("q 0 a 2\nq 0 b 1\nq 0 c 0\n")
    run = R([("q", "c", 3), ("q", "a", 2), ("q", "b", 1)])
    from_file = evaluate_prefs(q, run, mode="qrels_prefs")
    frame = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    assert evaluate_prefs(frame, run, mode="qrels_prefs") == from_file
    v = per_topic(from_file, "q")
    # ranking c, a, b: a>b ok, a>c no, b>c no
    assert v["prefs_num_prefs_ful_ret"] == 1 and v["prefs_num_prefs_poss"] == 3


def test_partial_order_rnonrel_recount():
    # One judgment group, two sub-groups: s1 a(1) b(0) c(0); s2 a(1) d(0) e(1).
    # Preferences: a>b, a>c, a>d, e>d.  Run: b, a, c  ->  docids b0 a1 c2 | d3 e4 (unretrieved).
    rows = [("q", "u", "s1", "a", 1), ("q", "u", "s1", "b", 0), ("q", "u", "s1", "c", 0),
            ("q", "u", "s2", "a", 1), ("q", "u", "s2", "d", 0), ("q", "u", "s2", "e", 1)]
    v = per_topic(evaluate_prefs(J(rows), R([("q", "b", 3), ("q", "a", 2), ("q", "c", 1)])), "q")
    assert v["prefs_num_prefs_poss"] == 4 and v["prefs_num_prefs_ful"] == 2
    assert v["prefs_simp_ret"] == pytest.approx(1 / 2) and v["prefs_simp_imp"] == pytest.approx(2 / 3)
    # R=2 < N=3: nonrelevant docs from the 3rd one in docid order (d) are dropped:
    # a>b (violated), a>c (fulfilled) remain -> 1/2.
    assert v["prefs_avgjg_Rnonrel"] == pytest.approx(1 / 2)
    # retrieved: R=1 < N=2; trec_eval looks for the (num_rel + 1) = 3rd retrieved nonrel doc
    # (none), so nothing is dropped: a>b violated, a>c fulfilled -> 1/2 (not 0).
    assert v["prefs_avgjg_Rnonrel_ret"] == pytest.approx(1 / 2)


def test_repeated_line_in_one_subgroup_counts_twice():
    # trec_eval keeps both copies of a repeated (doc, rel_level) line in an equivalence class
    rows = [("q", "u", "s", "a", 1), ("q", "u", "s", "a", 1), ("q", "u", "s", "b", 0)]
    v = per_topic(evaluate_prefs(J(rows), R([("q", "a", 2), ("q", "b", 1)])), "q")
    assert v["prefs_num_prefs_poss"] == 2 and v["prefs_num_prefs_ful_ret"] == 2
    assert v["prefs_pair"] == 1.0  # one document pair


def test_table_output_matches_lines(tmp_path):
    from fasteval.prefs import evaluate_prefs_table

    r = tmp_path / "run"
    r.write_text("q Q0 a 1 2.0 RUNX\nq Q0 b 2 1.0 RUNX\n")
    j = J([("q", "u", "s", "a", 1), ("q", "u", "s", "b", 0), ("q", "u", "s", "c", 0)])
    t = evaluate_prefs_table(j, r)
    assert t.columns == ["run_id", "query_id", "measure", "value"]
    assert t.get_column("measure").to_list() == list(PREFS_MEASURES)
    assert set(t.get_column("run_id").to_list()) == {"RUNX"}
    lines = {m: v for m, q, v in evaluate_prefs(j, r) if q == "q"}
    assert dict(zip(t.get_column("measure"), t.get_column("value"), strict=True)) == pytest.approx(lines)


def test_cr_only_files_are_read_line_by_line(tmp_path):
    """Old-Mac line endings (CR only): every record is read, none swallowed into one line."""
    from fasteval.prefs.readers import read_prefs, read_trec_run_minimal

    run = tmp_path / "run.txt"
    run.write_bytes(b"q1 Q0 d1 1 2.5 tagA\rq1 Q0 d2 2 1.5 tagB\r")
    table, tag = read_trec_run_minimal(run)
    assert table.rows() == [("q1", "d1", 2.5), ("q1", "d2", 1.5)]
    assert tag == "tagB"
    prefs = tmp_path / "prefs.txt"
    prefs.write_bytes(b"q1 j1 s1 d1 2\rq1 j1 s1 d2 1\r")
    assert read_prefs(prefs).height == 2
