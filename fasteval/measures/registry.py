"""The measure registry: one declaration per measure family.

A *family* is what trec_eval calls a measure (``P``, ``ndcg_cut``, ``map``); a
:class:`Measure` is one concrete, parameterised member of it (``P_10``). The
registry drives everything else: the parser (canonical names, ``@k`` for every cutoff
family, the aliases of every dialect, named parameters and their defaults), the plan
handed to the kernels (family codes, profiles, what a family needs from the qrels),
the checks of parameter values, output order (trec_eval's internal table order),
aggregation, the "did you mean" suggestions, the docs' measures table and the
parametrised tests.

Adding a measure takes three touches:

1. one :class:`Family` row here (name, code, aliases, parameters, aggregation, needs, and
   the kernel path of each pass: ``trec`` and ``expected``);
2. its branch on the named constant ``Code.<NAME>`` (derived from this table) in the
   dispatch function of each path the row declares (:data:`fasteval.kernels.ranking.PATHS`,
   :data:`fasteval.kernels.expected.PATHS`); :func:`check_paths`, run when the kernels are
   imported, fails loudly, naming the family, the path and the function, where a row and
   the dispatch functions disagree (never a silent NaN);
3. one row in the reference table of the tests (``tests/core/_references.py``).

Codes are stable numbers: never renumber or reuse one (numba's cached kernels hold
them as constants).
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field

from fasteval.errors import ParameterError

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
REL_BINARY = "binary"  # graded without rel; with rel, C/W/L's gain 1 iff grade >= rel (ir_measures RBP)
REL_NONE = "none"  # rel does not apply (it is refused)

# the kernel paths of a pass: how it answers a family, each path one dispatch function that
# branches on the family's Code constant (see check_paths)
PATH_REL = "rel"  # read off the relevance profile, to the slot's cutoff
PATH_REL_FULL = "rel_full"  # read off the relevance profile of the whole ranking
PATH_DCG = "dcg"  # read off the DCG profiles (of the ranking and of the ideal one), to the cutoff
PATH_MODEL = "model"  # a user-model function (fasteval.kernels.cwl); the trec pass only
PATH_OWN = "own"  # its own family function

# what a family's kernel needs from the qrels beyond the query's judged grades
NEEDS_LEVELS = "levels"  # the distinct judged grades: the ideal order of custom gains
NEEDS_MAX_GRADE = "max_grade"  # the largest judged grade (checked against a parameter)
NEEDS_WORK = "work"  # per-thread scratch as long as the longest ranking or judgment list

# dialects of the aliases
TREC_EVAL = "trec_eval"
IR_MEASURES = "ir_measures"
RANX = "ranx"
FASTEVAL = "fasteval"
DIALECTS = (TREC_EVAL, IR_MEASURES, RANX, FASTEVAL)


@dataclass(frozen=True)
class Alias:
    """One spelling of a family in a dialect.

    Attributes
    ----------
    name : str
        As the dialect writes it; a trailing ``@k`` marks the spelling with a cutoff
        (``nDCG@k``), which stands for the family's cutoff member. Matched in any case.
    dialect : str
        ``"trec_eval"``, ``"ir_measures"``, ``"ranx"`` or ``"fasteval"``.
    p : float, optional
        The spelling's own default for the family's parameter (ir_measures' ``RBP`` has
        p = 0.8 where trec_eval's ``rbp`` has 0.9).

    Examples
    --------
    >>> Alias("nDCG@k", IR_MEASURES).key, Alias("nDCG@k", IR_MEASURES).cut
    ('ndcg', True)
    """

    name: str
    dialect: str
    p: float | None = None

    @property
    def cut(self) -> bool:
        """Whether the spelling takes a cutoff (``@k``)."""
        return self.name.endswith("@k")

    @property
    def key(self) -> str:
        """The lower-case spelling without ``@k``: what the parser matches."""
        return self.name.removesuffix("@k").lower()


def _aliases(dialect: str, *names: str, p: float | None = None) -> tuple[Alias, ...]:
    return tuple(Alias(n, dialect, p) for n in names)


def ir(*names: str, p: float | None = None) -> tuple[Alias, ...]:
    """ir_measures spellings."""
    return _aliases(IR_MEASURES, *names, p=p)


def rx(*names: str) -> tuple[Alias, ...]:
    """ranx spellings."""
    return _aliases(RANX, *names)


def fe(*names: str) -> tuple[Alias, ...]:
    """fasteval's own extra spellings (any-case forms, ``family@k`` of a plain family)."""
    return _aliases(FASTEVAL, *names)


@dataclass(frozen=True)
class Param:
    """The one number a family takes besides its cutoff (``p``, ``beta``).

    Attributes
    ----------
    name : str
        Its keyword in names (``RBP(p=0.5)``, ``SetF(beta=2)``).
    default : float
        Its value when none is given.
    lo, hi : float, optional
        Bounds; ``open_lo`` / ``open_hi`` exclude them.
    integer : bool
        Whole numbers only.
    required : bool
        No default: a name without it is refused (``max_rel`` of the C/W/L measures).
    flag : bool
        A yes/no option, written ``True`` / ``False`` (stored as 1.0 / 0.0).
    above : str, optional
        Another option of the family that this one must exceed (its value as given, or
        its default): ``max_rel`` is above ``min_rel``.

    Examples
    --------
    >>> Param("p", 0.9, lo=0.0, hi=1.0, open_lo=True, open_hi=True).constraint
    'a number between 0 and 1 (exclusive)'
    >>> Param("beta", 1.0, lo=0.0).check("set_F", -1.0)
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: set_F's beta must be a number >= 0, got -1.0
    """

    name: str
    default: float
    lo: float | None = None
    hi: float | None = None
    open_lo: bool = False
    open_hi: bool = False
    integer: bool = False
    required: bool = False
    flag: bool = False
    above: str | None = None

    @property
    def constraint(self) -> str:
        """The allowed values, in words."""
        if self.flag:
            return "True or False"
        what = "an integer" if self.integer else "a number"
        lo, hi = _g(self.lo), _g(self.hi)
        if self.lo is not None and self.hi is not None:
            if self.open_lo and self.open_hi:
                return f"{what} between {lo} and {hi} (exclusive)"
            if not self.open_lo and not self.open_hi:
                return f"{what} from {lo} to {hi}"
            return (f"{what} {'>' if self.open_lo else '>='} {lo} and "
                    f"{'<' if self.open_hi else '<='} {hi}")
        if self.lo is not None:
            return f"{what} {'>' if self.open_lo else '>='} {lo}"
        if self.hi is not None:
            return f"{what} {'<' if self.open_hi else '<='} {hi}"
        return "an integer" if self.integer else "a finite number"

    def ok(self, value: float) -> bool:
        """Whether ``value`` lies in the range."""
        if self.flag:
            return value in (0.0, 1.0)
        if self.integer and value != int(value):
            return False
        if self.lo is not None and (value <= self.lo if self.open_lo else value < self.lo):
            return False
        return not (self.hi is not None and (value >= self.hi if self.open_hi else value > self.hi))

    def check(self, family: str, value: float) -> None:
        """Raise :class:`~fasteval.errors.ParameterError` unless ``value`` is allowed."""
        if not self.ok(value):
            raise ParameterError(f"{family}'s {self.name}", self.constraint, value)


def _g(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


@dataclass(frozen=True)
class Family:
    """Declaration of one measure family.

    Attributes
    ----------
    key : str
        trec_eval's name (or our name for peer extras); canonical names start with it.
    code : int
        Stable kernel number; :class:`Code` names it (``Code.NDCG_CUT``) for the kernels.
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
    aliases : tuple of Alias
        Spellings in the other dialects (ir_measures, ranx, fasteval's any-case forms).
    param : Param, optional
        The number the family takes (``p``, ``beta``), with its default and range.
    trec : tuple of str
        The kernel paths of the trec pass (:mod:`fasteval.kernels.ranking`), the first
        the one its members take: ``PATH_REL``, ``PATH_REL_FULL``, ``PATH_DCG`` (read off a
        per-query profile), ``PATH_MODEL`` (a user-model function of
        :mod:`fasteval.kernels.cwl`, compiled only into the passes of plans that use one) or
        ``PATH_OWN`` (its own family function). A further ``PATH_OWN`` takes the members
        with custom gains, a further ``PATH_MODEL`` those with a binary ``rel``
        (``REL_BINARY``). Empty: no kernel (``relstring``).
    expected : str
        The kernel path of the tie-aware expected pass (:mod:`fasteval.kernels.expected`):
        ``PATH_REL``, ``PATH_REL_FULL``, ``PATH_DCG`` or ``PATH_OWN``; empty: the family
        has no expected value (refused with ``tie_break="expected"``).
    needs : frozenset of str
        What its kernel needs from the qrels beyond the query's grades: ``NEEDS_LEVELS``
        (the distinct judged grades, for the ideal order of custom gains),
        ``NEEDS_MAX_GRADE`` (the largest grade, which must not exceed the parameter),
        ``NEEDS_WORK`` (the user-model path's per-thread scratch as long as a ranking or
        judgment list).
    bounded : bool
        Values lie in [0, 1] (False for counts, ``utility``, DCG and grade-gain RBP).
    switches : tuple of (argument, family key[, value])
        Boolean arguments that select another family when given ``value`` (True unless
        given): ``SetP(relative=True)`` is ``set_relative_P``, ``Compat(normalize=False)``
        is ``compat_raw``.
    options : tuple of Param
        Further named numbers of the family's members, in the order the kernel reads them
        (the plan's ``vec`` of the slot): the C/W/L gain scale ``min_rel`` / ``max_rel``
        and ``residual``. A member stores only the values that differ from the default.
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
    aliases: tuple[Alias, ...] = ()
    param: Param | None = None
    trec: tuple[str, ...] = ()
    expected: str = ""
    needs: frozenset[str] = frozenset()
    bounded: bool = True
    switches: tuple[tuple, ...] = ()
    options: tuple[Param, ...] = ()

    @property
    def const(self) -> str:
        """The name of the family's constant in :class:`Code` (``ndcg_cut`` -> ``NDCG_CUT``)."""
        name = re.sub(r"\W", "_", self.key).upper()
        return f"F{name}" if name[0].isdigit() else name

    def paths(self, rule: str) -> tuple[str, ...]:
        """The kernel paths the family declares for the pass of ``rule`` (``"trec"`` or
        ``"expected"``).

        Examples
        --------
        >>> family("ndcg_cut").paths("trec"), family("bpref").paths("expected")
        (('dcg', 'own'), ())
        """
        if rule == "trec":
            return self.trec
        return (self.expected,) if self.expected else ()

    @property
    def cutoff(self) -> bool:
        """Whether members take a rank cutoff (``family@k``)."""
        return self.params in (INT_CUTS, OPT_CUT)

    def sample(self, cutoff: int | None = None) -> str:
        """A name of one member that parses: the key, with ``@cutoff`` when given (or when
        the family has no default cutoff) and its required options (``max_rel=3``); the
        tests and the suggestions draw members from it.

        Examples
        --------
        >>> family("P").sample(), family("bpm").sample(), family("inst").sample(5)
        ('P', 'bpm(max_rel=3)@10', 'inst(max_rel=3)')
        """
        args = [f"{o.name}=3" for o in self.options if o.required]
        name = self.key + (f"({', '.join(args)})" if args else "")
        if cutoff is None and self.params == INT_CUTS and not self.default:
            cutoff = 10
        if cutoff is not None and self.cutoff:
            name += f"@{cutoff}"
        return name

    def switch(self, argument: str) -> tuple[str, bool] | None:
        """The family that ``argument`` selects and the value that selects it (None: the
        family has no such switch).

        Examples
        --------
        >>> family("set_P").switch("relative")
        ('set_relative_P', True)
        """
        for sw in self.switches:
            if sw[0] == argument:
                return sw[1], (sw[2] if len(sw) > 2 else True)
        return None

    def option(self, name: str) -> Param | None:
        """The option called ``name`` (case-insensitive), if the family has one."""
        for o in self.options:
            if o.name.lower() == name.lower():
                return o
        return None


_OT = frozenset({"official", "all_trec"})
_V10 = frozenset({"all_trec", "v10"})
_X = frozenset({"extra"})
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_RPREC_MULT = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
_LV = frozenset({NEEDS_LEVELS})
_WORK = frozenset({NEEDS_WORK})
_R, _RF, _D, _M, _O = PATH_REL, PATH_REL_FULL, PATH_DCG, PATH_MODEL, PATH_OWN
_P01 = Param("p", 0.9, lo=0.0, hi=1.0, open_lo=True, open_hi=True)
_P95 = Param("p", 0.95, lo=0.0, hi=1.0, open_lo=True, open_hi=True)
_T = Param("T", 1.0, lo=0.0, hi=1e9, open_lo=True)
_T_INST = Param("T", 1.0, lo=0.5, hi=1e9)
"""INST's T: from 0.5 every continuation probability lies in [0, 1] (below it, rankings
with many relevant documents overflow)."""
_RESIDUAL = Param("residual", 0.0, flag=True)
_CWL = (Param("min_rel", 0.0, integer=True),
        Param("max_rel", math.nan, integer=True, required=True, above="min_rel"), _RESIDUAL)
"""Options of the C/W/L families: the grade scale (a grade g gains
(clip(g, min_rel, max_rel) - min_rel) / (max_rel - min_rel)) and the residual switch."""
_CWL_DOC = ("gains scaled to [0, 1] by min_rel (0) and max_rel (required); expected utility "
            "per document over cwl_eval's 1000 ranks (unjudged and missing ranks gain 0); "
            "residual=True: the rise when they gain 1.")

# In trec_eval's internal table order (te_trec_measures[]), which is the output order.
FAMILIES: tuple[Family, ...] = (
    Family("num_q", 0, NONE, bounded=False, agg="sum", integer=True, scope="summary", sets=_OT,
           doc="Number of topics evaluated.", rel=REL_NONE, aliases=ir("NumQ"),
           trec=(_O,), expected=_O),
    Family("num_ret", 1, NONE, bounded=False, agg="sum", integer=True, sets=_OT,
           doc="Number of documents retrieved (after max_docs); with rel=k, the retrieved "
               "documents of grade >= k (ir_measures' NumRet(rel=k): num_rel_ret(rel=k)).",
           aliases=ir("NumRet") + fe("num_ret"), trec=(_O,), expected=_O),
    Family("num_rel", 2, NONE, bounded=False, agg="sum", integer=True, sets=_OT,
           doc="Number of judged documents with grade >= relevance_level.",
           aliases=ir("NumRel") + fe("num_rel"), trec=(_O,), expected=_O),
    Family("num_rel_ret", 3, NONE, bounded=False, agg="sum", integer=True, sets=_OT,
           doc="Number of relevant documents retrieved.", trec=(_RF,), expected=_O,
           aliases=ir("NumRelRet") + fe("num_rel_ret")),
    Family("map", 4, NONE, sets=_OT, trec=(_RF,), expected=_RF, aliases=ir("AP") + rx("map"),
           doc="Average precision: sum of precision at each relevant retrieved doc / num_rel."),
    Family("gm_map", 5, NONE, agg="gm", scope="summary", sets=_OT, trec=(_RF,), expected=_RF,
           doc="Average precision aggregated by geometric mean (floor 1e-5)."),
    Family("Rprec", 6, NONE, sets=_OT, doc="Precision after num_rel documents.", trec=(_RF,), expected=_RF,
           aliases=ir("Rprec") + rx("r-precision") + fe("r_precision")),
    Family("bpref", 7, NONE, sets=_OT, aliases=ir("Bpref") + rx("bpref"),
           doc="Binary preference: relevant docs penalised by judged nonrelevant docs above them.",
           trec=(_O,)),
    Family("recip_rank", 8, NONE, sets=_OT, doc="1 / rank of the first relevant document.",
           trec=(_RF,), expected=_RF, aliases=ir("RR") + rx("mrr") + fe("recip_rank")),
    Family("iprec_at_recall", 9, FLOAT_CUTS, _RECALL_POINTS, sets=_OT,
           doc="Interpolated precision at recall levels.", aliases=ir("IPrec@k"), trec=(_O,)),
    Family("P", 10, INT_CUTS, _CUTS, sets=_OT, doc="Precision at k (relevant in top k / k).",
           trec=(_R,), expected=_R, aliases=ir("P", "P@k") + rx("precision@k"),
           switches=(("judged_only", "P_judged"),)),
    Family("relstring", 11, LENGTH, (10,), scope="query",
           doc="Relevance labels of the top documents as a string (trec-eval output only).",
           rel=REL_NONE, trec=()),
    Family("recall", 12, INT_CUTS, _CUTS, doc="Recall at k (relevant in top k / num_rel).",
           trec=(_R,), expected=_R, aliases=ir("R", "R@k", "SetR@k") + rx("recall@k") + fe("recall")),
    Family("infAP", 13, NONE, doc="Inferred average precision (Yilmaz & Aslam).",
           aliases=ir("infAP"), trec=(_O,)),
    Family("gm_bpref", 14, NONE, agg="gm", scope="summary",
           doc="bpref aggregated by geometric mean (floor 1e-5).", trec=(_O,)),
    Family("Rprec_mult", 15, FLOAT_CUTS, _RPREC_MULT, doc="Precision at x * num_rel documents.",
           trec=(_RF,), expected=_RF),
    Family("utility", 16, VECTOR, (1.0, -1.0, 0.0, 0.0), bounded=False,
           doc="p1*rel_ret + p2*nonrel_ret + p3*rel_notret + p4*nonrel_notret.", trec=(_O,)),
    Family("11pt_avg", 17, VECTOR, _RECALL_POINTS,
           doc="Interpolated precision averaged over recall points.", trec=(_O,)),
    Family("binG", 18, NONE, doc="Binary G: mean over relevant docs of 1/log2(2 + nonrel above).",
           aliases=fe("binG"), trec=(_O,)),
    Family("G", 19, GAINS, doc="Normalised gain G (trec_eval experimental).", rel=REL_FLOOR,
           needs=_LV, trec=(_O,)),
    Family("ndcg", 20, GAINS,
           doc="nDCG over the whole ranking, gain = grade (or given gains), discount log2(rank+1).",
           rel=REL_FLOOR, needs=_LV, aliases=ir("nDCG") + rx("ndcg"), trec=(_O,), expected=_O),
    Family("ndcg_rel", 21, GAINS, doc="nDCG averaged over relevant documents.", rel=REL_FLOOR,
           needs=_LV, trec=(_O,)),
    Family("Rndcg", 22, GAINS, doc="nDCG averaged at the R-level boundaries.", rel=REL_FLOOR,
           needs=_LV, trec=(_O,)),
    Family("ndcg_cut", 23, INT_CUTS, _CUTS, doc="nDCG at k, gain = grade.", rel=REL_FLOOR,
           trec=(_D, _O), expected=_D, aliases=ir("nDCG@k") + rx("ndcg@k")),
    Family("map_cut", 24, INT_CUTS, _CUTS, doc="Average precision over the top k / num_rel.",
           trec=(_R,), expected=_R, aliases=ir("AP@k") + rx("map@k")),
    Family("relative_P", 25, INT_CUTS, _CUTS, doc="Relevant in top k / min(k, num_rel).",
           trec=(_R,), expected=_R),
    Family("success", 26, INT_CUTS, (1, 5, 10), doc="1 if a relevant doc is in the top k.",
           trec=(_R,), expected=_R, aliases=ir("Success@k") + rx("hit_rate@k") + fe("success", "hitrate@k")),
    Family("set_P", 27, NONE, doc="Relevant retrieved / retrieved.", trec=(_RF,), expected=_O,
           aliases=ir("SetP") + rx("precision"), switches=(("relative", "set_relative_P"),)),
    Family("set_relative_P", 28, NONE, doc="Relevant retrieved / min(retrieved, num_rel).",
           trec=(_RF,), expected=_O, aliases=ir("SetRelP")),
    Family("set_recall", 29, NONE, doc="Relevant retrieved / num_rel.", trec=(_RF,), expected=_O,
           aliases=ir("SetR") + fe("setrecall")),
    Family("set_map", 30, NONE, doc="set_P * set_recall.", trec=(_RF,), expected=_O, aliases=ir("SetAP")),
    Family("set_F", 31, FLOAT, (1.0,), doc="F-measure of set precision and recall (beta).",
           trec=(_RF,), expected=_O, param=Param("beta", 1.0, lo=0.0), aliases=ir("SetF") + rx("f1")),
    Family("num_nonrel_judged_ret", 32, NONE, bounded=False, agg="sum", integer=True,
           doc="Judged nonrelevant documents retrieved.", trec=(_O,), expected=_O),
    Family("rbp", 33, GAINS, sets=_V10, rel=REL_BINARY, param=_P01, needs=_LV,
           doc="Rank-biased precision, p = 0.9 (gains scaled to [0,1]); with rel=k, "
               "gain 1 for grades >= k, else 0, over cwl_eval's 1000 ranks (ir_measures' "
               "RBP(rel=k)); residual=True (with rel): the rise when unjudged and missing "
               "ranks gain 1.",
           aliases=ir("RBP", p=0.8), options=(_RESIDUAL,), trec=(_O, _M), expected=_O),
    Family("rbp_resid", 34, GAINS, sets=_V10, param=_P01, rel=REL_NONE,
           doc="RBP residual due to unjudged documents, p = 0.9 (trec_eval's rbp_resid.p=0.5 "
               "sets p, named rbp_resid_p=0.5; grades play no part).", trec=(_O,)),
    Family("unj", 35, INT_CUTS, (5, 10, 20), sets=_V10,
           doc="Fraction of the top k that is unjudged or not in the pool.", rel=REL_NONE,
           aliases=fe("unj@k"), trec=(_O,), expected=_O),
    # --- peer extras (not in trec_eval) ---
    Family("ndcg_burges", 40, NONE, sets=_X, rel=REL_FLOOR, aliases=rx("ndcg_burges"),
           doc="nDCG with exponential gain 2^grade - 1 (Burges), whole ranking.",
           trec=(_D,), expected=_D),
    Family("ndcg_burges_cut", 41, INT_CUTS, (10,), sets=_X, rel=REL_FLOOR, trec=(_D,), expected=_D,
           aliases=rx("ndcg_burges@k"),
           doc="nDCG@k with exponential gain 2^grade - 1 (Burges); gdeval's nDCG@k "
               "(ir_measures' nDCG(dcg='exp-log2')@k)."),
    Family("recip_rank_cut", 42, INT_CUTS, (10,), sets=_X, trec=(_R,), expected=_R,
           aliases=ir("RR@k") + rx("mrr@k") + fe("recip_rank@k"),
           doc="Reciprocal rank of the first relevant document within the top k (else 0)."),
    Family("F1", 43, INT_CUTS, (10,), sets=_X, doc="Harmonic mean of P@k and recall@k.",
           trec=(_R,), expected=_R, aliases=rx("f1@k")),
    Family("judged", 44, INT_CUTS, (10,), sets=_X, rel=REL_NONE, aliases=ir("Judged@k"),
           doc="Fraction of the top k that is judged (ir_measures' Judged@k; a negative grade "
               "counts as unjudged, as in trec_eval's unj, where ir_measures counts it as judged).",
           trec=(_O,), expected=_O),
    Family("hits", 45, OPT_CUT, bounded=False, sets=_X, trec=(_R,), expected=_R, aliases=rx("hits", "hits@k"),
           doc="Number of relevant documents in the top k (whole ranking without k; ranx's hits)."),
    Family("dcg", 46, OPT_CUT, bounded=False, sets=_X, rel=REL_FLOOR, trec=(_D,), expected=_D, aliases=rx("dcg", "dcg@k"),
           doc="DCG of the top k (whole ranking without k), gain = grade, discount log2(rank+1) "
               "(ranx's dcg)."),
    Family("dcg_burges", 47, OPT_CUT, bounded=False, sets=_X, rel=REL_FLOOR, trec=(_D,), expected=_D,
           aliases=rx("dcg_burges", "dcg_burges@k"),
           doc="DCG of the top k (whole ranking without k), gain 2^grade - 1 (ranx's dcg_burges)."),
    Family("rbp_raw", 48, FLOAT, (0.9,), bounded=False, sets=_X, rel=REL_FLOOR, param=_P01,
           doc="Rank-biased precision with the grade itself as gain, not rescaled "
               "(ranx's rbp.95: p = 0.95): (1 - p) * sum of grade * p^(rank - 1).",
           trec=(_O,), expected=_O),
    Family("rbp_cut", 63, INT_CUTS, (), sets=_X, rel=REL_NONE, param=_P01, needs=_LV,
           aliases=ir("RBP@k", p=0.8),
           doc="rbp of the top k: trec_eval's gains (rescaled to [0,1] as in rbp), "
               "(1 - p) * sum over ranks r <= k of gain * p^(r - 1) (ir_measures' RBP@k, "
               "p = 0.8).", trec=(_O,), expected=_O),
    Family("err", 49, OPT_CUT, sets=_X, rel=REL_NONE, aliases=ir("ERR@k"),
           param=Param("gmax", 4.0, lo=1.0, hi=62.0, integer=True),
           needs=frozenset({NEEDS_MAX_GRADE}),
           doc="Expected reciprocal rank of the top k (Chapelle et al. 2009): sum over ranks r "
               "of R(g_r)/r * prod_{i<r}(1 - R(g_i)), R(g) = (2^g - 1) / 2^gmax; gmax = 4 as in "
               "gdeval (ir_measures' ERR@k); a larger grade needs ERR(gmax=...).", trec=(_O,)),
    Family("P_judged", 51, INT_CUTS, (10,), sets=_X,
           doc="Precision at k over the judged documents only: unjudged ones are skipped "
               "(ir_measures' P(judged_only=True)@k, trec_eval's -J for one measure).", trec=(_O,)),
    Family("set_P_cut", 52, INT_CUTS, (10,), sets=_X, trec=(_R,), expected=_R, aliases=ir("SetP@k"),
           doc="set_P of the top k: relevant in the top k / the number retrieved there "
               "(min(k, retrieved)); = set_P with max_docs=k."),
    Family("set_judged", 50, NONE, sets=_X, rel=REL_NONE, aliases=ir("Judged"),
           doc="Fraction of the retrieved documents that are judged (ir_measures' Judged; a "
               "negative grade counts as unjudged, as in Judged@k).", trec=(_O,), expected=_O),
    # --- C/W/L measures (cwl_eval's definitions; fasteval.kernels.cwl) ---
    Family("inst", 53, NONE, sets=_X, trec=(_M,), rel=REL_NONE, aliases=ir("INST"), param=_T_INST,
           options=_CWL,
           doc="INST (Moffat et al. 2015), C/W/L: continue from rank i with probability "
               "((i + 2T - G_i - 1) / (i + 2T - G_i))^2, G_i the gain up to i; " + _CWL_DOC),
    Family("insq", 54, NONE, sets=_X, trec=(_M,), rel=REL_NONE, aliases=ir("INSQ"), param=_T, options=_CWL,
           doc="INSQ (Moffat et al. 2012), C/W/L: continue from rank i with probability "
               "((i + 2T - 1) / (i + 2T))^2; " + _CWL_DOC),
    Family("bpm", 55, INT_CUTS, (), sets=_X, trec=(_M,), rel=REL_NONE, aliases=ir("BPM@k"), param=_T,
           options=_CWL,
           doc="Bejeweled Player Model, static (Zhang et al. 2017), C/W/L: continue while the "
               "gain so far is below T and fewer than k documents were seen; " + _CWL_DOC),
    Family("sdcg", 56, INT_CUTS, (), sets=_X, trec=(_M,), rel=REL_NONE, aliases=ir("SDCG@k"), options=_CWL,
           doc="Scaled DCG@k, C/W/L: DCG@k of the scaled gains over the DCG@k of k fully "
               "relevant documents; " + _CWL_DOC),
    Family("nerr8", 57, INT_CUTS, (), sets=_X, trec=(_M,), rel=REL_NONE, aliases=ir("NERR8@k"), options=_CWL,
           doc="Not-quite ERR, eq. 8 (Azzopardi et al. 2021), C/W/L: continue from rank i < k "
               "with probability 1 - g_i; " + _CWL_DOC),
    Family("nerr9", 58, INT_CUTS, (), sets=_X, trec=(_M,), rel=REL_NONE, aliases=ir("NERR9@k"), options=_CWL,
           doc="Not-quite ERR, eq. 9, C/W/L: continue from rank i < k with probability "
               "i / (i + 1) * (1 - g_i); " + _CWL_DOC),
    Family("nerr10", 59, NONE, sets=_X, trec=(_M,), rel=REL_NONE, aliases=ir("NERR10"), options=_CWL,
           param=Param("p", 0.9, lo=0.0, hi=1.0, open_lo=True, open_hi=True),
           doc="Not-quite ERR, eq. 10, C/W/L: continue with probability p * (1 - g_i); "
               + _CWL_DOC),
    Family("nerr11", 60, NONE, sets=_X, trec=(_M,), rel=REL_NONE, aliases=ir("NERR11"), param=_T,
           options=_CWL,
           doc="Not-quite ERR, eq. 11, C/W/L: continue with probability "
               "((i + 2T - 1) / (i + 2T))^2 * (1 - g_i); " + _CWL_DOC),
    Family("compat", 61, NONE, sets=_X, trec=(_M,), aliases=ir("Compat"), param=_P95, needs=_WORK,
           switches=(("normalize", "compat_raw", False),),
           doc="Compatibility (Clarke, Vtyurina and Smucker 2020): rank-biased overlap (p) of "
               "the ranking with the ideal one (grades >= rel descending, equal grades in the "
               "ranking's order, then the unretrieved), to depth max(retrieved, relevant), "
               "divided by the ideal ranking's own overlap."),
    Family("compat_raw", 62, NONE, sets=_X, trec=(_M,), param=_P95, needs=_WORK,
           switches=(("normalize", "compat", True),),
           doc="Compatibility without the normalisation: the rank-biased overlap with the "
               "ideal ranking (ir_measures' Compat(normalize=False))."),
)

BY_KEY: dict[str, Family] = {f.key: f for f in FAMILIES}
ORDER: dict[str, int] = {f.key: i for i, f in enumerate(FAMILIES)}

Code = enum.IntEnum("Code", {f.const: f.code for f in FAMILIES})
"""Every family's kernel number by name (``Code.NDCG_CUT == 23``): the kernels compare a
slot's code with these (numba folds them into constants)."""
Code.__module__ = __name__


def family(key: str) -> Family:
    """Return the family declared under ``key`` (trec_eval spelling)."""
    return BY_KEY[key]


def by_code(code: int) -> Family:
    """Return the family whose kernel number is ``code``.

    Examples
    --------
    >>> by_code(Code.NDCG_CUT).key
    'ndcg_cut'
    """
    return _BY_CODE[int(code)]


_BY_CODE: dict[int, Family] = {f.code: f for f in FAMILIES}


def _check_registry() -> None:
    """Invariants of the table (run at import: a bad row fails every test at once)."""
    if len(_BY_CODE) != len(FAMILIES) or len({f.const for f in FAMILIES}) != len(FAMILIES):
        raise RuntimeError("measure registry: codes and constant names must be unique")
    plain: dict[str, str] = {}
    cut: dict[str, str] = {}
    for f in FAMILIES:
        for a in f.aliases:
            table = cut if a.cut else plain
            if table.setdefault(a.key, f.key) != f.key:
                raise RuntimeError(f"measure registry: alias {a.name!r} names two families")
            if a.cut and f.params not in (INT_CUTS, OPT_CUT, FLOAT_CUTS):
                raise RuntimeError(f"measure registry: {f.key} takes no cutoff ({a.name!r})")
        if not set(f.trec) <= _PATHS or f.expected not in _PATHS - {PATH_MODEL} | {""}:
            raise RuntimeError(f"measure registry: {f.key} names an unknown kernel path")


_PATHS = {PATH_REL, PATH_REL_FULL, PATH_DCG, PATH_MODEL, PATH_OWN}
_check_registry()
_BY_CONST: dict[str, Family] = {f.const: f for f in FAMILIES}


def _code_names(func: object) -> set[str]:
    """The :class:`Code` constants that a dispatch function (a numba kernel or its Python
    function) names."""
    return set(getattr(func, "py_func", func).__code__.co_names) & _BY_CONST.keys()


def _where(func: object) -> str:
    func = getattr(func, "py_func", func)
    return f"{func.__module__}.{func.__qualname__}"


def check_paths(rule: str, dispatch: dict[str, tuple]) -> None:
    """Check a pass's dispatch functions against the rows: for every family, a function of
    each path it declares for the pass of ``rule`` (``"trec"`` or ``"expected"``, see
    :meth:`Family.paths`) names its :class:`Code` constant, and no function names the
    constant of a family that declares none of the paths the function serves.

    ``dispatch`` maps each path of the pass to its dispatch functions. Each kernels module
    runs this on its own table when it is imported, so a wrong row or a missing branch
    fails every job at once, never as a NaN.

    Raises
    ------
    RuntimeError
        Naming the family, the path and the function to edit.

    Examples
    --------
    >>> def one(code):
    ...     return 1.0 if code == Code.NUM_Q else 0.0
    >>> check_paths("expected", {PATH_OWN: (one,)})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    RuntimeError: measure registry: num_ret declares the expected path 'own', but ...one has no \
branch on Code.NUM_RET: add one there, or change the row
    """
    for fam in FAMILIES:
        for path in fam.paths(rule):
            funcs = dispatch.get(path, ())
            if not any(fam.const in _code_names(f) for f in funcs):
                where = " or ".join(map(_where, funcs)) or f"the {rule} pass (no such path)"
                raise RuntimeError(
                    f"measure registry: {fam.key} declares the {rule} path {path!r}, but "
                    f"{where} has no branch on Code.{fam.const}: add one there, or change the row")
    for func in dict.fromkeys(f for funcs in dispatch.values() for f in funcs):
        served = {p for p, funcs in dispatch.items() if func in funcs}
        for name in sorted(_code_names(func)):
            fam = _BY_CONST[name]
            if not served & set(fam.paths(rule)):
                raise RuntimeError(
                    f"measure registry: {_where(func)} branches on Code.{name}, but "
                    f"{fam.key} declares no {rule} path it serves ({', '.join(sorted(served))}): "
                    f"declare one in its row, or remove the branch")


def _member(f: Family) -> str:
    """A family's members as canonical names (``P_k``, ``hits`` / ``hits_k``), with its
    parameter and default."""
    if f.params == INT_CUTS:
        text = f"`{f.key}_k`"
    elif f.params == OPT_CUT:
        text = f"`{f.key}`, `{f.key}_k`"
    elif f.params == FLOAT_CUTS:
        text = f"`{f.key}_x`"
    elif f.params == LENGTH:
        text = f"`{f.key}_n`"
    else:
        text = f"`{f.key}`"
    extra = [] if f.param is None else [f"{f.param.name} = {f.param.default:g}"]
    for o in f.options:
        extra.append(f"{o.name} required" if o.required else
                     f"{o.name} = {bool(o.default) if o.flag else format(o.default, 'g')}")
    return text + (f" ({'; '.join(extra)})" if extra else "")


def measure_table() -> str:
    """The measures table of docs/measures.md (Markdown), one row per family, from this registry.

    Columns: canonical members, the ir_measures and ranx spellings (and fasteval's own
    extra ones), how queries aggregate, and the definition. A test keeps the docs'
    copy equal to it.

    Examples
    --------
    >>> measure_table().splitlines()[2].startswith("| `num_q` (trec_eval) | `NumQ` |")
    True
    """
    rows = ["| measure | ir_measures | ranx | also | summary | definition |",
            "|---|---|---|---|---|---|"]
    agg = {"mean": "mean", "sum": "sum", "gm": "geometric mean"}
    for f in FAMILIES:
        cols = []
        for dialect in (IR_MEASURES, RANX, FASTEVAL):
            names = [f"`{a.name}`" + ("" if a.p is None else f" (p = {a.p:g})")
                     for a in f.aliases if a.dialect == dialect]
            cols.append(", ".join(names))
        where = "" if "extra" in f.sets else " (trec_eval)"
        rows.append(f"| {_member(f)}{where} | {cols[0]} | {cols[1]} | {cols[2]} | "
                    f"{agg[f.agg]} | {f.doc.replace('|', '/')} |")
    return "\n".join(rows)
