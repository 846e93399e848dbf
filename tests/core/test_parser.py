"""The measure grammar: dialects map to the same measure; canonical names round-trip."""

from __future__ import annotations

import math
import re
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

import fasteval
from fasteval.errors import FastevalError, ParameterError, UnknownMeasureError
from fasteval.measures import FAMILIES, Measure, known_names, parse_measure, parse_measures
from fasteval.measures.registry import FLOAT_CUTS, INT_CUTS, OPT_CUT, REL_NONE

SAME = [
    ("ndcg_cut_10", "nDCG@10", "ndcg@10"),
    ("P_5", "P@5", "precision@5"),
    ("map", "AP", "map"),
    ("map_cut_100", "AP@100", "map@100"),
    ("recip_rank", "RR", "mrr"),
    ("recall_100", "R@100", "recall@100"),
    ("Rprec", "Rprec", "r-precision"),
    ("success_10", "Success@10", "hit_rate@10"),
    ("ndcg_burges_cut_10", "nDCG(dcg='exp-log2')@10", "ndcg_burges@10"),
    ("iprec_at_recall_0.50", "IPrec@0.5", "iprec_at_recall@0.5"),
    ("relative_P_5", "relative_P@5", "relative_P.5"),
    ("map_cut_10", "map_cut@10", "map_cut.10"),
    ("recip_rank_cut_10", "recip_rank_cut@10", "RR@10"),
    ("set_P", "SetP", "precision"),
    ("hits_10", "hits@10", "hits.10"),
    ("num_rel_ret(rel=2)", "NumRet(rel=2)", "num_ret(rel=2)"),
    ("ndcg_cut_10(rel=2)", "ndcg@10-l2", "nDCG(rel=2)@10"),
    ("rbp_raw_0.95", "rbp.95", "rbp_raw.0.95"),
    ("rbp_p=0.8", "RBP", "RBP(p=0.8)"),
    ("rbp_p=0.5(rel=1)", "RBP(p=0.5,rel=1)", "rbp.p=0.5-l1"),
    ("P_judged_5", "P(judged_only=True)@5", "P_judged@5", "P(judged_only=true, cutoff=5)"),
    ("set_relative_P", "SetP(relative=True)", "setp(relative=1)"),
    ("err_20", "ERR@20", "err@20", "ERR(gmax=4)@20", "err_20(gmax=4)"),
    ("err_20(gmax=6)", "ERR(gmax=6)@20", "err(gmax=6)@20"),
    ("set_judged", "Judged", "JUDGED"),
    ("set_P_cut_5", "SetP@5", "set_P_cut@5"),
    ("ndcg_0=0,2=5.5", "nDCG(gains={0: 0, 2: 5.5})", "ndcg.0=0,2=5.5", "nDCG(gains={0:0.0,2:5.5})"),
]


@pytest.mark.parametrize("names", SAME)
def test_dialects_agree(names) -> None:
    parsed = {parse_measure(n) for n in names}
    assert len(parsed) == 1
    assert parse_measure(names[0]).name == names[0]


def test_lists_and_sets() -> None:
    assert [m.name for m in parse_measures("P.5,7,3")] == ["P_3", "P_5", "P_7"]
    # trec_eval's P (and recall) alone is the cutoff set, in every spelling that is its name
    assert [m.name for m in parse_measures("P")][:2] == ["P_5", "P_10"]
    assert len(parse_measures("recall")) == 9 and len(parse_measures("P")) == 9
    # C atol, as trec_eval's -m reads it, only in the trec-eval command's syntax
    assert [m.name for m in parse_measures("ndcg_cut.10,20,23.4", trec_eval_syntax=True)] == [
        "ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]
    official = parse_measures("official")
    assert official[0].name == "num_q" and official[-1].name == "P_1000"
    assert len([m for m in parse_measures("all_trec")]) == 99


def test_relevance_override_and_params() -> None:
    m = parse_measure("P(rel=2)@5")
    assert (m.family, m.cutoff, m.rel) == ("P", 5, 2)
    assert parse_measure("ndcg.1=3,2=9,4=4.5").gains == ((1, 3.0), (2, 9.0), (4, 4.5))
    assert parse_measure("utility.2,-1,0,0").vector == (2.0, -1.0, 0.0, 0.0)


@pytest.mark.parametrize("bad", ["ndgc@10", "P@0", "P@x", "foo", "Rprec@10", "map(rel=x)",
                                 "nDCG(dcg='exp')@10", "P(judged_only=maybe)@5",
                                 "map(judged_only=True)", "P(gains={1: 2})@10",
                                 "ERR(gmax=4)", "SetP@0",
                                 # trec_eval refuses these too
                                 "P.5,5", "P.0", "P.", "P.5,", "ndcg.1", "ndcg.1=3,",
                                 "ndcg.1==3", "utility.1,-1,0", "iprec_at_recall.0.5,0.5",
                                 # a parameter that is not a number (trec_eval: 0)
                                 "P.x", "set_F.beta", "ndcg.1=x",
                                 # canonical spellings take no parameters where trec_eval has none
                                 "map_5", "rbp_resid_0.5",
                                 # no relevance level to set; set twice
                                 "unj(rel=2)@10", "judged@10-l2", "num_q-l1", "rbp_resid-l2",
                                 "P(rel=2)@5-l3", "hit_rate"])
def test_unknown_names_error_clearly(bad: str) -> None:
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure(bad)
    assert repr(bad) in str(info.value)


def test_suggestions() -> None:
    with pytest.raises(UnknownMeasureError, match="did you mean 'ndcg@10'"):
        parse_measure("ndgc@10")
    with pytest.raises(UnknownMeasureError, match="did you mean 'relative_P@5'"):
        parse_measure("relativeP@5")


def _suggestions(message: str) -> list[str]:
    m = re.search(r"did you mean (.*)\?$", message)
    return re.findall(r"'([^']*)'", m.group(1)) if m else []


def test_every_known_name_parses() -> None:
    """known_names() is where suggestions come from: each of them must parse."""
    names = known_names()
    assert {"relative_P@5", "map_cut@10", "ndcg_cut@10", "recip_rank_cut@10", "hits@10",
            "rbp_resid", "hit_rate@10"} <= set(names)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in names:
            assert parse_measures(name), name


_NAME_CHARS = "PRabcdeghiklmnoprstuyFGJ_.@,=-()0123456789"


@given(st.one_of(st.text(_NAME_CHARS, min_size=1, max_size=24),
                 st.sampled_from(known_names()).map(lambda n: n[:-1] + "x")))
def test_suggestions_always_parse(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            parse_measures(name)
        except UnknownMeasureError as exc:
            for hint in _suggestions(str(exc)):
                assert parse_measures(hint), (name, hint)


_CUT_FAMILIES = [f.key for f in FAMILIES if f.params in (INT_CUTS, OPT_CUT)
                 and f.sample() in (f.key, f"{f.key}@10")]  # no required option
_FRACTION_FAMILIES = [f.key for f in FAMILIES if f.params == FLOAT_CUTS]


@given(st.sampled_from(_CUT_FAMILIES), st.integers(1, 10**6))
def test_at_k_is_the_trec_eval_member(family: str, k: int) -> None:
    at = parse_measure(f"{family}@{k}")
    assert at == parse_measure(f"{family}_{k}") == parse_measure(f"{family}.{k}")
    assert (at.family, at.cutoff, at.name) == (family, k, f"{family}_{k}")


@given(st.sampled_from(_FRACTION_FAMILIES), st.integers(0, 200))
def test_at_fraction_is_the_trec_eval_member(family: str, hundredths: int) -> None:
    x = hundredths / 100
    at = parse_measure(f"{family}@{x}")
    assert at == parse_measure(f"{family}.{x}") == parse_measure(f"{family}_{x:.2f}")
    assert at.param == x


# trec_eval 10's -m parameter syntax, one row per kind of family:
# (spelling, canonical names, (family, cutoff, param, vector, gains) of the first member)
TREC_PARAMS = [
    ("P.5,10", ["P_5", "P_10"], ("P", 5, None, None, None)),
    ("P.10,5", ["P_5", "P_10"], ("P", 5, None, None, None)),  # sorted
    ("ndcg_cut.5", ["ndcg_cut_5"], ("ndcg_cut", 5, None, None, None)),
    ("success.1,5", ["success_1", "success_5"], ("success", 1, None, None, None)),
    ("unj.3", ["unj_3"], ("unj", 3, None, None, None)),
    ("iprec_at_recall..10,.5", ["iprec_at_recall_0.10", "iprec_at_recall_0.50"],
     ("iprec_at_recall", None, 0.1, None, None)),
    ("Rprec_mult.2.0,0.5", ["Rprec_mult_0.50", "Rprec_mult_2.00"],
     ("Rprec_mult", None, 0.5, None, None)),
    ("utility.2,-1,0,0", ["utility_2,-1,0,0"], ("utility", None, None, (2.0, -1.0, 0.0, 0.0), None)),
    ("11pt_avg..25,.5,.75", ["11pt_avg_.25,.5,.75"],
     ("11pt_avg", None, None, (0.25, 0.5, 0.75), None)),
    ("set_F.0.5", ["set_F_0.5"], ("set_F", None, 0.5, None, None)),
    ("set_F.0.5,3", ["set_F_0.5,3"], ("set_F", None, 0.5, None, None)),  # the first one
    ("relstring.20", ["relstring_20"], ("relstring", 20, None, None, None)),
    ("ndcg.1=3,2=9,4=4.5", ["ndcg_1=3,2=9,4=4.5"],
     ("ndcg", None, None, None, ((1, 3.0), (2, 9.0), (4, 4.5)))),
    ("Rndcg.0=1", ["Rndcg_0=1"], ("Rndcg", None, None, None, ((0, 1.0),))),
    ("rbp.p=0.5", ["rbp_p=0.5"], ("rbp", None, 0.5, None, None)),
    ("rbp.p=0.5,2=1", ["rbp_p=0.5,2=1"], ("rbp", None, 0.5, None, ((2, 1.0),))),
]


@pytest.mark.parametrize(("spelling", "names", "first"), TREC_PARAMS)
def test_trec_eval_parameter_syntax(spelling: str, names: list[str], first: tuple) -> None:
    got = parse_measures(spelling)
    assert [m.name for m in got] == names
    m = got[0]
    assert (m.family, m.cutoff, m.param, m.vector, m.gains) == first
    for x in got:  # each canonical name reads back as the same measure
        assert parse_measure(x.name) == x


@pytest.mark.parametrize(("spelling", "family"), [("map.5", "map"), ("num_q.1", "num_q")])
def test_parameters_of_a_family_without_any_are_ignored(spelling: str, family: str) -> None:
    """trec_eval 10 accepts `-m map.5` and ignores the list; fasteval does the same, and
    says so."""
    with pytest.warns(UserWarning, match="trec_eval ignores"):
        assert parse_measures(spelling) == [Measure(family)]


def test_rbp_resid_takes_p_as_trec_eval_10() -> None:
    """trec_eval 10 reads `-m rbp_resid.p=0.5` as p = 0.5 and prints `rbp_resid_p=0.5`
    (tests/data/realruns/expected/cacm-bm25.v10.e7e693e7.out.gz); a level=gain pair is
    ignored (a residual has no gains), with a warning."""
    (m,) = parse_measures("rbp_resid.p=0.5")
    assert (m.name, m.param, m.gains) == ("rbp_resid_p=0.5", 0.5, None)
    assert parse_measure(m.name) == m
    assert parse_measures("rbp_resid") == [Measure("rbp_resid")]
    with pytest.warns(UserWarning, match="'1' of rbp_resid"):
        (g,) = parse_measures("rbp_resid.1=3")
    assert (g.name, g.param, g.gains) == ("rbp_resid_1=3", None, None)


@pytest.mark.parametrize("name", ["official", "all_trec"])
def test_parameters_of_a_set_are_ignored(name: str) -> None:
    """trec_eval 10 accepts `-m official.5` and ignores the list: the whole set."""
    with pytest.warns(UserWarning, match=f"the set {name}"):
        assert parse_measures(f"{name}.5") == parse_measures(name)
    with pytest.raises(UnknownMeasureError, match="must not be empty"):
        parse_measures(f"{name}.")


def test_ignored_pair_names_warn() -> None:
    with pytest.warns(UserWarning, match="'x'"):
        m = parse_measure("ndcg.1=3,x=2")
    assert (m.gains, m.name) == (((1, 3.0),), "ndcg_1=3,x=2")


def test_relevance_levels() -> None:
    assert parse_measure("ndcg@10-l2") == parse_measure("nDCG(rel=2)@10")
    assert parse_measure("precision@5-l3") == parse_measure("P(rel=3)@5")
    assert parse_measure("r-precision-l2").name == "Rprec(rel=2)"
    assert parse_measure("rbp.8-l2") == Measure("rbp_raw", param=0.8, rel=2, text="0.8")
    # NumRet(rel=k) counts retrieved documents of grade >= k: num_rel_ret at level k
    assert parse_measure("NumRet(rel=2)") == Measure("num_rel_ret", rel=2)
    assert Measure("num_ret", rel=3) == Measure("num_rel_ret", rel=3)
    assert parse_measure("NumRet") == Measure("num_ret")
    for fam in (f.key for f in FAMILIES if f.rel == REL_NONE):
        with pytest.raises(ParameterError, match="rel must be unset"):
            Measure(fam, rel=1)
    with pytest.raises(ParameterError, match="rel must be an integer >= 0, got -1"):
        Measure("P", cutoff=5, rel=-1)
    with pytest.raises(FastevalError, match="family"):
        Measure("no_such_family")


def test_dialect_collisions() -> None:
    """Where the dialects spell different measures alike, trec_eval's meaning wins."""
    assert len(parse_measures("recall")) == 9  # trec_eval; ranx's bare recall is set_recall
    assert parse_measure("rbp") == Measure("rbp")  # trec_eval: p = 0.9
    assert parse_measure("RBP").param == 0.8  # ir_measures' default
    assert parse_measure("rbp.5") == Measure("rbp_raw", param=0.5, text="0.5")  # ranx
    assert parse_measure("hits") == Measure("hits")  # whole ranking (ranx)


members = st.sampled_from(
    [m for f in FAMILIES for m in parse_measures(f.sample())]
    + parse_measures(["P(rel=2)@5", "ndcg.1=3,2=9", "utility.2,-1,0,0", "rbp.p=0.8",
                      "11pt_avg..25,.5,.75", "set_F.0.5", "relstring.20", "hits@5-l2",
                      "dcg_burges@3", "rbp.95-l3", "RBP(rel=2)", "NumRet(rel=2)",
                      "ndcg-l2", "ndcg_burges-l3", "dcg"])
)


@given(members)
def test_canonical_names_round_trip(m: Measure) -> None:
    assert parse_measure(m.name) == m
    assert fasteval.parse_measure(str(m)) == m


@pytest.mark.parametrize(("spelling", "trec_eval_reads"), [
    ("ndcg_cut.10,20,23.4", ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]),
    ("ndcg_cut.1e9", ["ndcg_cut_1"]),
    ("P.5x", ["P_5"]),
    ("relstring.2.5", ["relstring_2.5"]),
    ("iprec_at_recall.0.5x", ["iprec_at_recall_0.50"]),
])
def test_c_number_reading_only_in_trec_eval_syntax(spelling: str,
                                                    trec_eval_reads: list[str]) -> None:
    """trec_eval's -m reads a parameter with atol/atof (its leading number); fasteval does
    so in the trec-eval command only, and elsewhere refuses a parameter that is not a
    number as written rather than quietly use another measure."""
    assert [m.name for m in parse_measures(spelling, trec_eval_syntax=True)] == trec_eval_reads
    with pytest.raises(UnknownMeasureError):
        parse_measures(spelling)


@pytest.mark.parametrize("spelling", ["P_5.5", "ndcg_cut_1e9", "P_5x"])
def test_canonical_names_take_integers_only(spelling: str) -> None:
    """Canonical names are not trec_eval's -m syntax: no atol there, in either mode
    (trec_eval itself refuses -m P_5.5: 'P_5' is no measure)."""
    for syntax in (False, True):
        with pytest.raises(UnknownMeasureError):
            parse_measures(spelling, trec_eval_syntax=syntax)


def test_the_commands_print_a_warning_on_one_line(capsys) -> None:
    from pathlib import Path

    from fasteval.cli import main

    trec = Path(__file__).resolve().parents[2] / "datasets" / "trec"
    qrels, run = str(trec / "qrels.test"), str(trec / "results.test")
    assert main(["trec-eval", "-m", "map.5", qrels, run]) == 0
    out, err = capsys.readouterr()
    assert err == ("fasteval: warning: measure 'map.5': trec_eval ignores the parameters of "
                   "map ('5'), and so does fasteval\n")
    assert out.startswith("map ")


@given(st.floats(0.5, 1e9, allow_nan=False), st.sampled_from(["INST", "INSQ", "NERR11"]))
def test_named_numbers_keep_every_digit_in_the_name(t: float, family: str) -> None:
    """A named number is written as it parses back: INST(T=1.2345678) and INST(T=1.23457)
    are two measures with two names (six significant digits merged them)."""
    m = parse_measure(f"{family}(T={t!r}, max_rel=3)")
    assert parse_measure(m.name) == m and m.param in (t, None)


@pytest.mark.parametrize(("spelling", "name"), [
    ("INST(T=1.2345678, max_rel=3)", "inst(T=1.2345678, max_rel=3)"),
    ("INSQ(T=1234567, max_rel=3)", "insq(T=1234567, max_rel=3)"),
    ("Compat(p=0.9512345)", "compat(p=0.9512345)"),
    ("NERR10(p=0.123456789, max_rel=2)", "nerr10(p=0.123456789, max_rel=2)"),
])
def test_named_numbers_round_trip(spelling: str, name: str) -> None:
    m = parse_measure(spelling)
    assert m.name == name and parse_measure(name) == m


@pytest.mark.parametrize(("spelling", "name", "trec_eval_prints"), [
    ("iprec_at_recall.0.505", "iprec_at_recall_0.505", "iprec_at_recall_0.51"),
    ("iprec_at_recall@0.501", "iprec_at_recall_0.501", "iprec_at_recall_0.50"),
    ("Rprec_mult@1.234", "Rprec_mult_1.234", "Rprec_mult_1.23"),
    ("iprec_at_recall@0.5", "iprec_at_recall_0.50", "iprec_at_recall_0.50"),
    # trec_eval writes "%s_%3.2f" into strlen(name) + 10 bytes: 8 characters of the number
    ("Rprec_mult.123456.789", "Rprec_mult_123456.789", "Rprec_mult_123456.7"),
    ("Rprec_mult.123456", "Rprec_mult_123456.00", "Rprec_mult_123456.0"),
])
def test_fractions_name_what_they_measure(spelling: str, name: str, trec_eval_prints: str) -> None:
    """A fraction with more than two decimals keeps them in its name (trec_eval's %.2f name
    gave iprec_at_recall@0.501 the name of iprec_at_recall@0.5, a different measure);
    base_name stays what trec_eval prints."""
    m = parse_measure(spelling)
    assert (m.name, m.base_name) == (name, trec_eval_prints)
    assert parse_measure(name) == m


def test_two_fractions_alike_to_two_decimals_are_two_rows() -> None:
    # two relevant documents: recall 0.75 needs round(1.5) = 2 of them, 0.749 one
    out = fasteval.evaluate({"q": {"a": 1, "b": 1}},
                            {"q": {"a": 3.0, "x": 2.0, "y": 1.0, "b": 0.5}},
                            ["iprec_at_recall@0.75", "iprec_at_recall@0.749"])
    assert out.select("measure", "value").rows() == [
        ("iprec_at_recall@0.75", 0.5), ("iprec_at_recall@0.749", 1.0)]
    assert [parse_measure(m).name for m in out["measure"]] == [
        "iprec_at_recall_0.75", "iprec_at_recall_0.749"]


def test_rbp_gains_are_part_of_the_name() -> None:
    """RBP(gains={...}) scores with the gains: its name says so (rbp_p=0.8 alone names RBP
    without them)."""
    m = parse_measure("RBP(gains={2: 1, 3: 0.5})")
    assert m.name == "rbp_p=0.8,2=1,3=0.5" and m.gains == ((2, 1.0), (3, 0.5))
    assert parse_measure(m.name) == m
    assert parse_measure("RBP(gains={2: 1}, p=0.5)") == parse_measure("rbp.p=0.5,2=1")
    assert parse_measure("RBP(gains={2: 1}, rel=2)").name == "rbp_p=0.8,2=1(rel=2)"


@pytest.mark.parametrize("bad", ["P@²", "rbp.²", "P@١٠", "P.١٠", "P(rel=1_0)@5", "P(rel=١)@5",
                                 "RBP(p=0_5)", "iprec_at_recall@1_0", "ERR(gmax=٥)@10",
                                 "nDCG(gains={٢: 1})", "ndcg@10-l١", "iprec_at_recall@٠.٥"])
def test_numbers_are_ascii_as_written(bad: str) -> None:
    """Digits of other scripts and Python's 1_0 are no numbers in a name: int() would read
    them (P(rel=1_0)@5 as P(rel=10)@5) or raise its own ValueError (P@²)."""
    for syntax in (False, True):
        with pytest.raises(UnknownMeasureError) as info:
            parse_measures(bad, trec_eval_syntax=syntax)
        assert repr(bad) in str(info.value)


def test_trec_eval_cutoffs_saturate_as_atol_does() -> None:
    """trec_eval reads -m P.99999999999999999999 with atol, which saturates at LONG_MAX:
    P_9223372036854775807; the negative one is refused as a cutoff <= 0."""
    big = parse_measures("P.99999999999999999999,5", trec_eval_syntax=True)
    assert [m.name for m in big] == ["P_5", "P_9223372036854775807"]
    with pytest.raises(UnknownMeasureError, match="cutoffs must be positive integers"):
        parse_measures("P.-99999999999999999999", trec_eval_syntax=True)
    with pytest.raises(UnknownMeasureError, match="must not repeat"):
        parse_measures("P.99999999999999999999,99999999999999999998", trec_eval_syntax=True)


def test_trec_eval_command_prints_saturated_cutoffs_and_short_fraction_names(capsys) -> None:
    from pathlib import Path

    from fasteval.cli import main

    trec = Path(__file__).resolve().parents[2] / "datasets" / "trec"
    qrels, run = str(trec / "qrels.test"), str(trec / "results.test")
    assert main(["trec-eval", "-m", "P.99999999999999999999", "-m", "Rprec_mult.123456.789",
                 "-m", "iprec_at_recall.0.5,0.501", qrels, run]) == 0
    names = [line.split("\t")[0].rstrip() for line in capsys.readouterr().out.splitlines()]
    assert names == ["iprec_at_recall_0.50", "iprec_at_recall_0.50", "P_9223372036854775807",
                     "Rprec_mult_123456.7"]


_TEXT_NAMED = st.one_of(
    st.builds(lambda b: Measure("set_F", param=b), st.floats(0.0, 1e6).filter(lambda b: b != 1)),
    st.builds(lambda p: Measure("rbp_raw", param=p),
              st.floats(0.01, 0.99).filter(lambda p: p != 0.9)),
    st.builds(lambda p: Measure("rbp", param=p), st.floats(0.01, 0.99)),
    st.builds(lambda v: Measure("utility", vector=tuple(v)),
              st.lists(st.floats(-5, 5), min_size=4, max_size=4).filter(
                  lambda v: tuple(v) != (1.0, -1.0, 0.0, 0.0))),
    st.builds(lambda fam, g: Measure(fam, gains=tuple(g)),
              st.sampled_from(["ndcg", "G", "ndcg_rel", "Rndcg", "rbp"]),
              st.lists(st.tuples(st.integers(0, 4), st.floats(0, 100)), min_size=1, max_size=3)),
)


@given(_TEXT_NAMED)
def test_parameters_set_without_text_are_named(m: Measure) -> None:
    """A member built with parameters but no trec_eval text is named by them
    (Measure("set_F", param=0.25) is set_F_0.25): its name is not the default member's
    and parses back to it."""
    assert m.name != m.family
    assert parse_measure(m.name) == m


def test_two_measures_of_one_family_have_two_names() -> None:
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}}
    run = {"q1": {"a": 1.0, "b": 0.5, "c": 0.2, "d": 0.1}}
    res = fasteval.evaluate(qrels, run, [Measure("set_F", param=0.25), Measure("set_F"),
                                         Measure("rbp_raw", param=0.5), Measure("rbp_raw")])
    got = dict(zip(res["measure"].to_list(), res["value"].to_list(), strict=True))
    # set precision 2/4, recall 2/2; trec_eval's F_x = (x + 1) P R / (x P + R) (pytrec_eval:
    # set_F.0.25 is 5/9 here)
    assert got["set_F_0.25"] == pytest.approx(5 / 9)
    assert got["set_F"] == pytest.approx(2 * 0.5 / 1.5)
    # grades 1, 0, 2, unjudged: (1 - p) * sum of grade * p^(rank - 1)
    assert got["rbp_raw_0.5"] == pytest.approx(0.5 * (1 + 2 * 0.25))
    assert got["rbp_raw"] == pytest.approx(0.1 * (1 + 2 * 0.81))


@pytest.mark.parametrize("kwargs", [
    {"family": "set_F", "param": 0.95, "text": "0.5"},
    {"family": "relstring", "cutoff": 7, "text": "20"},
    {"family": "utility", "vector": (1.0, 2.0, 3.0, 4.0), "text": "1,-1,0,0"},
])
def test_parameter_text_must_name_the_parameters(kwargs: dict) -> None:
    with pytest.raises(ParameterError, match="text"):
        Measure(**kwargs)


def test_rbp_residual_without_rel_is_refused_when_built_directly() -> None:
    """rbp(residual=True) without rel= is no name the parser reads; built by hand it was
    scored as plain rbp under another name."""
    with pytest.raises(ParameterError, match="residual"):
        fasteval.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}},
                          [Measure("rbp", options=(("residual", 1.0),))])


@pytest.mark.parametrize(("name", "suggested"), [
    ("ndcg＠10", "ndcg@10"),  # fullwidth commercial at
    ("ｎDCG@10", "nDCG@10"),  # fullwidth n
    ("P@５", "P@5"),  # fullwidth digit
    ("GM_MAP", "gm_map"),  # case
    ("NUM_Q", "num_q"),
])
def test_lookalike_and_case_names_suggest_the_name(name: str, suggested: str) -> None:
    """A name written with Unicode compatibility characters, or in another case, is refused
    (never read as another measure) with the name it looks like first among the hints."""
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure(name)
    assert _suggestions(str(info.value))[0] == suggested
    assert parse_measures(suggested)


@pytest.mark.parametrize("name", ["", "   ", "\t\n"])
def test_an_empty_name_says_so(name: str) -> None:
    with pytest.raises(UnknownMeasureError, match="must not be empty"):
        parse_measure(name)


@pytest.mark.parametrize(("name", "what"), [
    ("P@" + "1" * 5000, "cutoffs"),
    ("P." + "1" * 5000, "parameters"),
    ("P(rel=" + "1" * 5000 + ")@5", "relevance levels"),
    ("ndcg@10-l" + "2" * 5000, "relevance levels"),
    ("nDCG(gains={" + "1" * 5000 + ": 2})", "grades"),
    ("ndcg." + "1" * 5000 + "=2", "levels"),
])
def test_numbers_too_long_for_python_are_name_errors(name: str, what: str) -> None:
    """Digits past Python's int conversion limit (4300) were its ValueError (a traceback in
    the commands); now the name error, quoting an excerpt of the name."""
    with pytest.raises(UnknownMeasureError, match=f"{what} must be integers of at most 19 "
                                                  "digits, got one of 5000 digits") as info:
        parse_measure(name)
    assert len(str(info.value)) < 400 and f"({len(name)} characters)" in str(info.value)


def test_trec_eval_syntax_saturates_any_number_of_digits() -> None:
    assert parse_measures("P." + "9" * 5000, trec_eval_syntax=True) == [
        Measure("P", cutoff=2**63 - 1)]


def test_a_long_name_is_quoted_in_part() -> None:
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure("x" * 100_000)
    message = str(info.value)
    assert len(message) < 200 and "(100000 characters)" in message


def test_a_grade_written_twice_in_gains_is_the_dict_ir_measures_reads() -> None:
    """nDCG(gains={1: 2, 1: 5}) is the Python dict {1: 5} in ir_measures; it was read as
    trec_eval's ndcg.1=2,1=5 (ideal ranked by gain 2, documents scored with 2), another
    measure."""
    m = parse_measure("nDCG(gains={0: 0, 1: 2, 2: 3, 1: 5})")
    assert m == parse_measure("ndcg.0=0,1=5,2=3") and m.name == "ndcg_0=0,1=5,2=3"
    assert parse_measure("nDCG(gains={1: 2, 1: 5})@10").gains == ((1, 5.0),)
    irm = pytest.importorskip("ir_measures")
    qrels = {"q1": {"a": 1, "b": 2, "c": 0}}
    run = {"q1": {"a": 0.1, "b": 0.9, "c": 0.5}}
    # gains a = 5, b = 2, c = 0: DCG 2 + 5 / log2(4), ideal 5 + 2 / log2(3)
    want = (2 + 5 / 2) / (5 + 2 / math.log2(3))
    ours = fasteval.evaluate(qrels, run, ["nDCG(gains={1: 2, 1: 5})"])["value"][0]
    peer = irm.calc_aggregate([irm.parse_measure("nDCG(gains={1: 2, 1: 5})")], qrels, run)
    assert ours == pytest.approx(want) and float(next(iter(peer.values()))) == pytest.approx(want)


@pytest.mark.parametrize(("name", "why"), [
    ("nDCG(gains={0: 0}, gains={1: 1})", "the argument gains is given twice"),
    ("P(rel=2')@5", "rel must be an integer"),
    ("RBP(p='0.5)", "p must be a number"),
])
def test_repeated_gains_and_unmatched_quotes_are_refused(name: str, why: str) -> None:
    """The second gains= was dropped without a word; a quote on one side only was
    stripped."""
    with pytest.raises(UnknownMeasureError, match=re.escape(why)):
        parse_measure(name)


def _in_range(spec) -> st.SearchStrategy[float]:
    """Values a family's Param allows (flags True/False, integers, open or closed ranges)."""
    if spec.flag:
        return st.sampled_from([0.0, 1.0])
    lo = spec.lo if spec.lo is not None else -1e6
    hi = spec.hi if spec.hi is not None else 1e6
    if spec.integer:
        return st.integers(int(math.ceil(lo)), min(int(hi), 10**6)).map(float).filter(spec.ok)
    return st.floats(lo, min(hi, 1e9), allow_nan=False).filter(spec.ok)


@st.composite
def _random_members(draw) -> Measure:
    """A member of any family with random parameters: cutoff, rel, its named number and
    its options, each drawn from what the registry allows."""
    from fasteval.measures.registry import LENGTH, NONE

    fam = draw(st.sampled_from([f for f in FAMILIES if f.params != LENGTH]))
    kw: dict = {}
    if fam.cutoff and (fam.params == INT_CUTS or draw(st.booleans())):
        kw["cutoff"] = draw(st.integers(1, 2**63 - 1))
    if fam.params == FLOAT_CUTS:
        kw["param"] = draw(st.floats(-2, 2, allow_nan=False))
    elif fam.param is not None and fam.params in (NONE, INT_CUTS, OPT_CUT) and draw(
            st.booleans()):
        kw["param"] = draw(_in_range(fam.param))
    if fam.rel != REL_NONE and draw(st.booleans()):
        kw["rel"] = draw(st.integers(0, 2**31 - 1))
    options = []
    for o in fam.options:
        if o.required or draw(st.booleans()):
            value = draw(_in_range(o))
            if o.name == "max_rel":
                low = int(dict(options).get("min_rel", 0)) + 1
                value = float(draw(st.integers(low, low + 10**6)))
            options.append((o.name, value))
    try:
        m = Measure(fam.key, options=tuple(options), **kw)
        m.check_options()
    except ParameterError:
        from hypothesis import assume

        assume(False)
    return m


@given(_random_members())
def test_every_family_round_trips_with_random_parameters(m: Measure) -> None:
    assert parse_measure(m.name) == m
    assert parse_measure(str(m)) == m


def test_a_vector_family_built_bare_is_its_default_member() -> None:
    """Measure("utility") and the name "utility" are one measure (they were two, listed
    twice under one name)."""
    assert Measure("utility") == parse_measure("utility")
    assert Measure("11pt_avg") == parse_measure("11pt_avg")
    res = fasteval.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0, "b": 0.5}},
                            ["utility", Measure("utility")])
    assert res["measure"].to_list() == ["utility"] and res["value"].to_list() == [0.0]


@pytest.mark.parametrize(("kwargs", "what"), [
    ({"family": "map", "param": 0.5}, "map's parameter"),
    ({"family": "P", "cutoff": 5, "gains": ((1, 2.0),)}, "P's gains"),
    ({"family": "P", "cutoff": 5, "vector": (1.0,)}, "P's vector"),
    ({"family": "P", "cutoff": 5, "text": "x"}, "P's text"),
    ({"family": "utility", "vector": ()}, "utility's vector"),
])
def test_parameters_a_family_does_not_take_are_refused(kwargs: dict, what: str) -> None:
    """Measure("map", param=0.5) was a measure named map, unequal to map and scored as
    it; a family's parameters are the ones it takes."""
    with pytest.raises(ParameterError, match=re.escape(what)):
        Measure(**kwargs)


def test_empty_gains_are_no_gains() -> None:
    assert Measure("ndcg_cut", cutoff=10, gains=()) == parse_measure("ndcg@10")
    assert Measure("ndcg", gains=()) == parse_measure("ndcg")


@pytest.mark.parametrize(("kwargs", "what"), [
    ({"family": "set_F", "param": "0.5"}, "set_F's parameter must be a finite number"),
    ({"family": "iprec_at_recall", "param": "0.5"}, "iprec_at_recall's parameter"),
    ({"family": "rbp", "param": math.nan}, "rbp's parameter must be a finite number"),
    ({"family": "utility", "vector": ("a", 1, 2, 3)}, "utility's vector"),
    ({"family": "ndcg", "gains": (("a", 1.0),)}, "(integer level, number) pairs"),
    ({"family": "iprec_at_recall"}, "iprec_at_recall's fraction must be a number"),
])
def test_measure_fields_of_the_wrong_type_are_parameter_errors(kwargs: dict, what: str) -> None:
    """Text for a number was kept (set_F's beta '0.5'), crashed the name (a TypeError or
    ValueError from formatting) or named a measure that no name parses to (rbp_p=nan)."""
    with pytest.raises(ParameterError, match=re.escape(what)):
        Measure(**kwargs)


def test_measure_numbers_are_normalised() -> None:
    import numpy as np

    m = Measure("ndcg", gains=[(np.int64(1), 2)])
    assert m == parse_measure("ndcg.1=2") and {m: 1}[parse_measure("ndcg_1=2")] == 1
    assert Measure("set_F", param=np.float64(0.5)) == parse_measure("SetF(beta=0.5)")


@pytest.mark.parametrize(("name", "parts"), [
    ("P@5,P@10", ["P@5", "P@10"]),
    ("ndcg@10, map", ["ndcg@10", "map"]),
])
def test_a_list_in_one_name_says_so(name: str, parts: list[str]) -> None:
    with pytest.raises(UnknownMeasureError,
                       match=re.escape(f"several measures are separate names: {parts!r}")):
        parse_measure(name)
    assert parse_measures(parts)


@pytest.mark.parametrize(("name", "why"), [
    ("nDCG(gains=)", "gains must be {grade: gain, ...}, got ''"),
    ("nDCG(gains=5)", "gains must be {grade: gain, ...}, got '5'"),
    ("P(=2)@5", "arguments must be key=value, got '=2'"),
])
def test_malformed_arguments_say_what_is_wrong(name: str, why: str) -> None:
    """gains= without a {...} was an 'unsupported argument', an argument without a key
    'unsupported argument(s) ' (an empty name)."""
    with pytest.raises(UnknownMeasureError, match=re.escape(why)):
        parse_measure(name)


@pytest.mark.parametrize("name", ["P" + " " * 20_000 + "x(", "RBP(p=" + "1" * 50_000 + "x)",
                                  "alpha-nDCG" + " " * 20_000 + "x("])
def test_hostile_names_are_refused_in_linear_time(name: str) -> None:
    """Spaces between two optional parts of the grammar (and digits between two of a
    number) took cubic (quadratic) time to refuse: 2,000 spaces ran for 90 s."""
    import time

    start = time.perf_counter()
    with pytest.raises(UnknownMeasureError):
        parse_measure(name)
    assert time.perf_counter() - start < 5
