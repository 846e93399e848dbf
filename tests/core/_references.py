"""Reference implementation of every measure family: the table the oracle tests read.

One row per family (``tests/core/test_references.py`` fails for a registry family
without one). ``tool`` is the independent implementation the values are checked against,
per query, on random cases (:func:`tests.core._gen.random_case`):

* ``pytrec_eval``: trec_eval 9.0.8's C code (fasteval runs with ``compat=9``); ties
  broken as trec_eval breaks them, so cases have ties.
* ``ranx`` / ``ir_measures``: their own code (ir_measures' providers: its Judged
  provider, cwl_eval for RBP(rel=k) and the C/W/L measures, its compat provider for
  Compat, pytrec_eval for nDCG(gains)@k, gdeval for ERR and exponential nDCG). Cases
  without ties where the tool orders them its own way (``ties=False``).
* ``gdeval``: gdeval.pl (shipped with ir_measures), run through ir_measures; it reads
  numeric topic ids only and prints five decimals.
* ``trectools``: ir_measures' trectools provider (outside its default pipeline), the one
  that computes RBP without rel= and RBP@k; on binary judgments (it scores the grade
  itself where trec_eval's rbp rescales it to [0, 1]) without ties (it averages the
  weights of tied documents) and leaves out queries without a relevant document in the
  top k (fasteval gives them 0).
* ``hand``: no tool computes it; ``test`` names the tests with hand-worked values (or
  trec_eval 10's own outputs, vendored under tests/data/conformance).
"""

from __future__ import annotations

from typing import NamedTuple


class Ref(NamedTuple):
    """One family's reference (see the module docstring)."""

    tool: str
    ours: str = ""
    theirs: str = ""
    ties: bool = True
    tol: float = 1e-9
    via: str = ""  # "log": the tool reports log(max(value, 1e-5)) per query (gm_*)
    test: str = ""  # hand: the test(s) holding the worked values


def _pt(ours: str, theirs: str | None = None, **kw) -> Ref:
    return Ref("pytrec_eval", ours, theirs or ours, **kw)


def _rx(ours: str, theirs: str | None = None) -> Ref:
    return Ref("ranx", ours, theirs or ours, ties=False)


def _ir(ours: str, theirs: str | None = None, **kw) -> Ref:
    return Ref("ir_measures", ours, theirs or ours, ties=kw.pop("ties", False), **kw)


def _tt(ours: str, theirs: str) -> Ref:
    return Ref("trectools", ours, theirs, ties=False)


def _gd(ours: str, theirs: str) -> Ref:
    return Ref("gdeval", ours, theirs, ties=True, tol=5.1e-6)


_CONFORMANCE = "tests/conformance/test_trec_eval_cases.py"

REFERENCES: dict[str, tuple[Ref, ...]] = {
    "num_q": (_pt("num_q"),),
    "num_ret": (_pt("num_ret"),),
    "num_rel": (_pt("num_rel"),),
    "num_rel_ret": (_pt("num_rel_ret"),),
    "map": (_pt("map"),),
    "gm_map": (_pt("gm_map", via="log"),),
    "Rprec": (_pt("Rprec"),),
    "bpref": (_pt("bpref"),),
    "recip_rank": (_pt("recip_rank"),),
    "iprec_at_recall": (_pt("iprec_at_recall_0.30"),),
    "P": (_pt("P_5"),),
    "relstring": (Ref("hand", test="tests/core/test_trec_eval_flags.py"),),
    "recall": (_pt("recall_10"),),
    "infAP": (_pt("infAP"),),
    "gm_bpref": (_pt("gm_bpref", via="log"),),
    "Rprec_mult": (_pt("Rprec_mult_0.60"),),
    "utility": (_pt("utility"),),
    "11pt_avg": (_pt("11pt_avg"),),
    "binG": (_pt("binG"),),
    "G": (_pt("G"),),
    "ndcg": (_pt("ndcg"), _ir("nDCG(gains={0:0,1:1,2:5,3:2})")),
    "ndcg_rel": (_pt("ndcg_rel"),),
    "Rndcg": (_pt("Rndcg"),),
    "ndcg_cut": (_pt("ndcg_cut_10"), _ir("nDCG(gains={0:0,1:1,2:5,3:2})@10", ties=True)),
    "map_cut": (_pt("map_cut_10"),),
    "relative_P": (_pt("relative_P_5"),),
    "success": (_pt("success_5"),),
    "set_P": (_pt("set_P"),),
    "set_relative_P": (_pt("set_relative_P"), _ir("SetP(relative=True)")),
    "set_recall": (_pt("set_recall"),),
    "set_map": (_pt("set_map"),),
    "set_F": (_pt("set_F"),),
    "num_nonrel_judged_ret": (_pt("num_nonrel_judged_ret"),),
    "rbp": (_ir("RBP(rel=2)", ties=False), _ir("RBP(rel=1,p=0.99)"),
            _tt("RBP", "RBP"), _tt("rbp", "RBP(p=0.9)"), Ref("hand", test=_CONFORMANCE)),
    "rbp_resid": (Ref("hand", test=_CONFORMANCE),),
    "unj": (Ref("hand", test=_CONFORMANCE),),
    "ndcg_burges": (_rx("ndcg_burges"),),
    "ndcg_burges_cut": (_rx("ndcg_burges@10"), _gd("ndcg_burges_cut_10", "nDCG(dcg='exp-log2')@10")),
    "recip_rank_cut": (_rx("mrr@10"), _ir("RR@10")),
    "F1": (_rx("f1@10"),),
    "judged": (_ir("Judged@10"),),
    "hits": (_rx("hits@10"), _rx("hits")),
    "dcg": (_rx("dcg@10"),),
    "dcg_burges": (_rx("dcg_burges@10"),),
    "rbp_raw": (_rx("rbp.95"),),
    "rbp_cut": (_tt("RBP@10", "RBP@10"), _tt("rbp_cut_5(p=0.5)", "RBP(p=0.5)@5"),
                Ref("hand", test="tests/core/test_peer_spellings.py")),
    "err": (_gd("err_10", "ERR@10"), _gd("err_5", "ERR@5"),
            Ref("hand", test="tests/core/test_more_measures.py")),
    "set_judged": (_ir("Judged"),),
    "set_P_cut": (Ref("hand", test="tests/core/test_more_measures.py"),),
    "P_judged": (_ir("P(judged_only=True)@5", ties=True), _ir("P(judged_only=True,rel=2)@10")),
    "inst": (_ir("INST(max_rel=3)"), _ir("INST(T=2.0,max_rel=2)")),
    "insq": (_ir("INSQ(max_rel=3)"), _ir("INSQ(T=3.0,max_rel=2)")),
    "bpm": (_ir("BPM(max_rel=3)@10"), _ir("BPM(T=2.0,max_rel=2)@5")),
    "sdcg": (_ir("SDCG(max_rel=3)@10"), _ir("SDCG(min_rel=1,max_rel=2)@20")),
    "nerr8": (_ir("NERR8(max_rel=3)@10"),),
    "nerr9": (_ir("NERR9(max_rel=3)@10"),),
    "nerr10": (_ir("NERR10(max_rel=3)"), _ir("NERR10(p=0.5,max_rel=2)")),
    "nerr11": (_ir("NERR11(max_rel=3)"), _ir("NERR11(T=2.0,max_rel=2)")),
    "compat": (_ir("Compat"), _ir("Compat(p=0.8)")),
    "compat_raw": (_ir("Compat(normalize=False)"),),
}
