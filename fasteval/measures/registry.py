"""The measure registry: one declaration per measure family.

A *family* is what trec_eval calls a measure (``P``, ``ndcg_cut``, ``map``); a
:class:`Measure` is one concrete, parameterised member of it (``P_10``). The
registry drives parsing, output order (trec_eval's internal table order),
aggregation, docs and the parametrised tests.

Adding a measure means: one :class:`Family` row here, one branch (or one
parameter of an existing branch) in :mod:`fasteval.kernels.ranking`, and one
row in the reference-comparison table of the tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# kinds of parameters a family takes
NONE = "none"  # no parameters: map, bpref
INT_CUTS = "int_cuts"  # list of rank cutoffs: P_5, ndcg_cut_10
FLOAT_CUTS = "float_cuts"  # list of fractions, one measure each: iprec_at_recall_0.10
VECTOR = "vector"  # one measure whose parameters are a list: utility, 11pt_avg
GAINS = "gains"  # one measure with optional level=gain pairs: ndcg, G
FLOAT = "float"  # one measure with one float parameter: set_F (beta)
LENGTH = "length"  # relstring (string-valued, trec-eval output only)
OPT_CUT = "opt_cut"  # one measure, an optional rank cutoff (none: the whole ranking): hits, dcg

# what a measure's own relevance level (``rel=``, ranx's ``-lN``) means for a family
REL_LEVEL = "level"  # relevant iff grade >= rel; unset: the evaluation's relevance_level
REL_FLOOR = "floor"  # graded gains; grades below rel gain 0 (ranx); unset: no floor
REL_BINARY = "binary"  # graded without rel; with rel, gain 1 iff grade >= rel (ir_measures RBP)
REL_NONE = "none"  # rel does not apply (it is refused)


@dataclass(frozen=True)
class Family:
    """Declaration of one measure family.

    Attributes
    ----------
    key : str
        trec_eval's name (or our name for peer extras).
    code : int
        Kernel branch number in :mod:`fasteval.kernels.ranking`.
    params : str
        Parameter kind (see module constants).
    default : tuple
        Default parameters (cutoffs, fractions, vector).
    agg : str
        ``"mean"``, ``"sum"`` (counts) or ``"gm"`` (geometric mean, floor 1e-5).
    integer : bool
        Printed as an integer by trec_eval.
    scope : str
        ``"both"``, ``"summary"`` (trec_eval prints only the summary) or ``"query"``.
    sets : frozenset[str]
        Named sets the family belongs to: ``official``, ``all_trec``, ``v10`` (new in 10.0),
        ``extra`` (not in trec_eval; peer measures).
    doc : str
        One-line definition.
    rel : str
        What a measure's own relevance level means for the family: ``REL_LEVEL``,
        ``REL_FLOOR``, ``REL_BINARY`` or ``REL_NONE`` (see the module constants).
    """

    key: str
    code: int
    params: str
    default: tuple = ()
    agg: str = "mean"
    integer: bool = False
    scope: str = "both"
    sets: frozenset[str] = field(default_factory=lambda: frozenset({"all_trec"}))
    doc: str = ""
    rel: str = REL_LEVEL


_T = frozenset({"all_trec"})
_OT = frozenset({"official", "all_trec"})
_V10 = frozenset({"all_trec", "v10"})
_X = frozenset({"extra"})
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_RPREC_MULT = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

# In trec_eval's internal table order (te_trec_measures[]), which is the output order.
FAMILIES: tuple[Family, ...] = (
    Family("num_q", 0, NONE, agg="sum", integer=True, scope="summary", sets=_OT,
           doc="Number of topics evaluated.", rel=REL_NONE),
    Family("num_ret", 1, NONE, agg="sum", integer=True, sets=_OT,
           doc="Number of documents retrieved (after max_docs); with rel=k, the retrieved "
               "documents of grade >= k (ir_measures' NumRet(rel=k): num_rel_ret(rel=k))."),
    Family("num_rel", 2, NONE, agg="sum", integer=True, sets=_OT,
           doc="Number of judged documents with grade >= relevance_level."),
    Family("num_rel_ret", 3, NONE, agg="sum", integer=True, sets=_OT,
           doc="Number of relevant documents retrieved."),
    Family("map", 4, NONE, sets=_OT,
           doc="Average precision: sum of precision at each relevant retrieved doc / num_rel."),
    Family("gm_map", 5, NONE, agg="gm", scope="summary", sets=_OT,
           doc="Average precision aggregated by geometric mean (floor 1e-5)."),
    Family("Rprec", 6, NONE, sets=_OT, doc="Precision after num_rel documents."),
    Family("bpref", 7, NONE, sets=_OT,
           doc="Binary preference: relevant docs penalised by judged nonrelevant docs above them."),
    Family("recip_rank", 8, NONE, sets=_OT, doc="1 / rank of the first relevant document."),
    Family("iprec_at_recall", 9, FLOAT_CUTS, _RECALL_POINTS, sets=_OT,
           doc="Interpolated precision at recall levels."),
    Family("P", 10, INT_CUTS, _CUTS, sets=_OT, doc="Precision at k (relevant in top k / k)."),
    Family("relstring", 11, LENGTH, (10,), scope="query",
           doc="Relevance labels of the top documents as a string (trec-eval output only).",
           rel=REL_NONE),
    Family("recall", 12, INT_CUTS, _CUTS, doc="Recall at k (relevant in top k / num_rel)."),
    Family("infAP", 13, NONE, doc="Inferred average precision (Yilmaz & Aslam)."),
    Family("gm_bpref", 14, NONE, agg="gm", scope="summary",
           doc="bpref aggregated by geometric mean (floor 1e-5)."),
    Family("Rprec_mult", 15, FLOAT_CUTS, _RPREC_MULT, doc="Precision at x * num_rel documents."),
    Family("utility", 16, VECTOR, (1.0, -1.0, 0.0, 0.0),
           doc="p1*rel_ret + p2*nonrel_ret + p3*rel_notret + p4*nonrel_notret."),
    Family("11pt_avg", 17, VECTOR, _RECALL_POINTS,
           doc="Interpolated precision averaged over recall points."),
    Family("binG", 18, NONE, doc="Binary G: mean over relevant docs of 1/log2(2 + nonrel above)."),
    Family("G", 19, GAINS, doc="Normalised gain G (trec_eval experimental).", rel=REL_FLOOR),
    Family("ndcg", 20, GAINS,
           doc="nDCG over the whole ranking, gain = grade (or given gains), discount log2(rank+1).",
           rel=REL_FLOOR),
    Family("ndcg_rel", 21, GAINS, doc="nDCG averaged over relevant documents.", rel=REL_FLOOR),
    Family("Rndcg", 22, GAINS, doc="nDCG averaged at the R-level boundaries.", rel=REL_FLOOR),
    Family("ndcg_cut", 23, INT_CUTS, _CUTS, doc="nDCG at k, gain = grade.", rel=REL_FLOOR),
    Family("map_cut", 24, INT_CUTS, _CUTS, doc="Average precision over the top k / num_rel."),
    Family("relative_P", 25, INT_CUTS, _CUTS, doc="Relevant in top k / min(k, num_rel)."),
    Family("success", 26, INT_CUTS, (1, 5, 10), doc="1 if a relevant doc is in the top k."),
    Family("set_P", 27, NONE, doc="Relevant retrieved / retrieved."),
    Family("set_relative_P", 28, NONE, doc="Relevant retrieved / min(retrieved, num_rel)."),
    Family("set_recall", 29, NONE, doc="Relevant retrieved / num_rel."),
    Family("set_map", 30, NONE, doc="set_P * set_recall."),
    Family("set_F", 31, FLOAT, (1.0,), doc="F-measure of set precision and recall (beta)."),
    Family("num_nonrel_judged_ret", 32, NONE, agg="sum", integer=True,
           doc="Judged nonrelevant documents retrieved."),
    Family("rbp", 33, GAINS, sets=_V10, rel=REL_BINARY,
           doc="Rank-biased precision, p = 0.9 (gains scaled to [0,1]); with rel=k, "
               "gain 1 for grades >= k, else 0 (ir_measures' RBP(rel=k))."),
    Family("rbp_resid", 34, NONE, sets=_V10, doc="RBP residual due to unjudged documents (p = 0.9).",
           rel=REL_NONE),
    Family("unj", 35, INT_CUTS, (5, 10, 20), sets=_V10,
           doc="Fraction of the top k that is unjudged or not in the pool.", rel=REL_NONE),
    # --- peer extras (not in trec_eval) ---
    Family("ndcg_burges", 40, NONE, sets=_X, rel=REL_FLOOR,
           doc="nDCG with exponential gain 2^grade - 1 (Burges), whole ranking."),
    Family("ndcg_burges_cut", 41, INT_CUTS, (10,), sets=_X, rel=REL_FLOOR,
           doc="nDCG@k with exponential gain 2^grade - 1 (Burges)."),
    Family("recip_rank_cut", 42, INT_CUTS, (10,), sets=_X,
           doc="Reciprocal rank of the first relevant document within the top k (else 0)."),
    Family("F1", 43, INT_CUTS, (10,), sets=_X, doc="Harmonic mean of P@k and recall@k."),
    Family("judged", 44, INT_CUTS, (10,), sets=_X, rel=REL_NONE,
           doc="Fraction of the top k that is judged (ir_measures' Judged@k)."),
    Family("hits", 45, OPT_CUT, sets=_X,
           doc="Number of relevant documents in the top k (whole ranking without k; ranx's hits)."),
    Family("dcg", 46, OPT_CUT, sets=_X, rel=REL_FLOOR,
           doc="DCG of the top k (whole ranking without k), gain = grade, discount log2(rank+1) "
               "(ranx's dcg)."),
    Family("dcg_burges", 47, OPT_CUT, sets=_X, rel=REL_FLOOR,
           doc="DCG of the top k (whole ranking without k), gain 2^grade - 1 (ranx's dcg_burges)."),
    Family("rbp_raw", 48, FLOAT, (0.9,), sets=_X, rel=REL_FLOOR,
           doc="Rank-biased precision with the grade itself as gain, not rescaled "
               "(ranx's rbp.95: p = 0.95): (1 - p) * sum of grade * p^(rank - 1)."),
)

BY_KEY: dict[str, Family] = {f.key: f for f in FAMILIES}
ORDER: dict[str, int] = {f.key: i for i, f in enumerate(FAMILIES)}


def family(key: str) -> Family:
    """Return the family declared under ``key`` (trec_eval spelling)."""
    return BY_KEY[key]
