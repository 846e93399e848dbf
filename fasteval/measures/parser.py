"""One grammar for measure names in three dialects.

* trec_eval: ``P``, ``map``, ``P.5,10`` (a list), ``ndcg_cut.10``, ``ndcg.1=3,2=9``,
  ``rbp.p=0.5``, ``utility.2,-1,0,0``, ``relstring.20``, ``success.1,5``, named sets
  ``all_trec`` and ``official``; fasteval's canonical names (``P_5``, ``ndcg_cut_10``,
  ``rbp_p=0.5``) and ``<family>@k`` for every cutoff family (``relative_P@5``);
* ir_measures: ``nDCG@10``, ``P(rel=2)@5``, ``AP``, ``RR@10``, ``R@100``, ``Judged@10``,
  ``nDCG(dcg='exp-log2')@10``, ``IPrec@0.5`` (``IPrec(recall=0.5)``), ``RBP(p=0.8, rel=2)``,
  ``RBP@10``, ``NumRet(rel=2)``, ``SetRelP``;
* ranx: ``ndcg@10``, ``map@100``, ``mrr``, ``precision@5``, ``precision``, ``hits@10``,
  ``dcg@10``, ``dcg_burges@10``, ``hit_rate@10``, ``r-precision``, ``f1@10``,
  ``ndcg_burges@10``, ``rbp.95`` and the relevance-level suffix ``-lN`` (``ndcg@10-l2``).

Grammar::

    measure  := base [ "(" args ")" ] [ "@" cutoff ] [ "-l" level ]
    base     := family "." params        (trec_eval: the name is everything before the
                                          first ".", the rest its parameter list)
              | family [ "_" params ]    (canonical names)
              | alias                    (ir_measures / ranx names, any case)
    args     := key "=" value { "," key "=" value }

trec_eval's parameter lists, by kind of family (what trec_eval 10 does with ``-m``):

* cutoffs (``P.5,10``): integers, sorted; a cutoff <= 0 or a repeated one is an error
  (``fasteval trec-eval`` reads each with C's ``atol``, as trec_eval does: ``23.4`` is
  23; elsewhere it is an error);
* fractions (``iprec_at_recall.0.1,0.5``): numbers, sorted; a repeated one is an error;
* number lists (``utility.1,-1,0,0``, ``11pt_avg.0.2,0.5``, ``set_F.0.5``,
  ``relstring.20``): numbers; ``set_F`` and ``relstring`` use the first, ``utility``
  needs four; the name keeps the text as written (``utility_1,-1,0,0``);
* ``level=value`` pairs (``ndcg.1=3,2=9``, ``rbp.p=0.5``, ``rbp_resid.p=0.5``): integer
  levels set gains (not of ``rbp_resid``, which has none), ``p`` sets rbp's and
  rbp_resid's persistence; other names are ignored (with a warning), as trec_eval ignores
  them; the name keeps the text as written (``rbp_resid_p=0.5``);
* families without parameters (``map.5``) and the sets
  (``official.5``): trec_eval accepts the list and ignores it, and so does fasteval (with
  a warning): the measure is the plain family (or the set), named as trec_eval prints it.

Where trec_eval reads a parameter that is not a number as 0 (C ``atof``), fasteval
refuses it. Where the dialects spell different measures alike, trec_eval's meaning wins:
``recall`` alone is trec_eval's family (``recall_5`` ... ``recall_1000``), not ranx's
whole-ranking recall (``set_recall``); ``rbp`` is trec_eval's (p = 0.9), ``RBP``
ir_measures' (p = 0.8).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import re
import sys
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar

from fasteval.errors import FastevalError, ParameterError, UnknownMeasureError
from fasteval.measures.measure import Measure
from fasteval.measures.registry import (
    BY_KEY,
    FAMILIES,
    FLOAT,
    FLOAT_CUTS,
    GAINS,
    INT_CUTS,
    LENGTH,
    NONE,
    OPT_CUT,
    ORDER,
    VECTOR,
)

_FORM = re.compile(
    r"^(?P<base>[^()@\s](?:[^()@]*?[^()@\s])?)\s*(?:\((?P<args>[^()]*)\)\s*)?"
    r"(?:@\s*(?P<cut>[^()@\s]+?))?(?:-l(?P<level>[0-9]+))?$"
)
"""base [(args)] [@cut] [-lN], spaces around the parts. Written so that a name has one way
to match (the base ends with a non-space, no two spans of spaces meet): a name that does
not match fails in linear time (spaces between two spans took cubic time to refuse)."""

def _alias_table() -> tuple[dict[str, tuple[str | None, str | None]], dict[str, float],
                            set[tuple[str, bool]]]:
    """From the registry: alias (lower case) -> (family without cutoff, family with
    cutoff); the spellings with their own parameter default (ir_measures' ``RBP``); and
    the spellings as written, with cutoff or not (``("RBP", True)``)."""
    table: dict[str, list[str | None]] = {}
    own_p: dict[str, float] = {}
    written: set[tuple[str, bool]] = set()
    for fam in FAMILIES:
        for alias in fam.aliases:
            table.setdefault(alias.key, [None, None])[1 if alias.cut else 0] = fam.key
            if alias.p is not None:
                own_p[alias.key] = alias.p
            written.add((alias.name.removesuffix("@k"), alias.cut))
    return {k: (v[0], v[1]) for k, v in table.items()}, own_p, written


_ALIASES, _ALIAS_P, _WRITTEN = _alias_table()

SETS = ("all_trec", "official")

DEFAULT_SET = "official"
"""The measures trec_eval prints when none is named (``trec_eval`` without ``-m``): the
default of ``fasteval trec-eval`` and ``fasteval eval``."""


class _Bad(Exception):
    """A name the grammar refuses; :func:`_parse_one` turns it into UnknownMeasureError."""

    def __init__(self, why: str | None = None) -> None:
        super().__init__(why)
        self.why = why


_LONG = re.compile(r"\s*([+-]?[0-9]+)")
_DOUBLE = re.compile(r"\s*([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_INT = re.compile(r"[+-]?[0-9]+")
"""An integer as a name writes it: ASCII digits only (no ``1_0``, no other scripts)."""
_INT64_MAX = 2**63 - 1


_C_NUMBERS: ContextVar[bool] = ContextVar("_C_NUMBERS", default=False)
"""True while :func:`parse_measures` reads names for ``fasteval trec-eval``
(``trec_eval_syntax=True``): a ``.params`` list is then read as C's ``atol`` / ``atof``
read it (a leading number, the rest ignored: ``ndcg_cut.23.4`` is ``ndcg_cut_23``), so
that the command prints what trec_eval prints. Everywhere else a parameter must be a
number as written: ``ndcg_cut.1e9`` and ``P_5.5`` are errors, not ``ndcg_cut_1`` and
``P_5``."""


def _c_long(item: str, lenient: bool = False) -> int:
    """An integer parameter; with ``lenient``, C ``atol`` (``"23.4"`` -> 23)."""
    m = _LONG.match(item)
    if m is None or not (lenient or m.end() == len(item)):
        raise _Bad(f"parameters must be integers, got {item!r}")
    digits = m.group(1).lstrip("+-").lstrip("0")
    if lenient and len(digits) > 19:  # past any long: atol saturates
        value = -_INT64_MAX - 1 if m.group(1).startswith("-") else _INT64_MAX
    else:
        value = _whole(m.group(1), "parameters")
    if lenient:  # atol saturates (glibc): 99999999999999999999 is LONG_MAX
        return min(max(value, -_INT64_MAX - 1), _INT64_MAX)
    return value


def _whole(text: str, what: str) -> int:
    """An integer written in ASCII digits; one too long for Python to convert (past 4300
    digits) is refused as a name error, not raised as Python's ValueError."""
    try:
        return int(text)
    except ValueError:
        raise _Bad(f"{what} must be integers of at most 19 digits, got one of "
                   f"{len(text.lstrip('+-'))} digits") from None


def _c_double(item: str, lenient: bool = False) -> float:
    """A number parameter; with ``lenient``, C ``atof`` (``".25x"`` -> 0.25)."""
    m = _DOUBLE.match(item)
    if m is None or not (lenient or m.end() == len(item)):
        raise _Bad(f"parameters must be numbers, got {item!r}")
    return float(m.group(1))


def _warn(message: str) -> None:
    """Warn at the line that called into this module."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame, level = frame.f_back, level + 1
    warnings.warn(message, UserWarning, stacklevel=level)


def _ignored(name: str, what: str) -> None:
    """Warn, at the caller's line, of parameters that trec_eval accepts and ignores."""
    _warn(f"measure {name!r}: trec_eval ignores {what}, and so does fasteval")


def _sorted_unique(values: list, kind: str) -> list:
    out = sorted(values)
    for a, b in zip(out, out[1:], strict=False):
        if a == b:
            raise _Bad(f"{kind} must not repeat, got {a!r} twice")
    return out


def _family_with_params(fam_key: str, text: str | None, name: str, sep: str) -> list[Measure]:
    """Members of a family given the parameter text after ``.`` (trec_eval) or ``_``."""
    fam = BY_KEY[fam_key]
    kind = fam.params
    if text is None:
        return _defaults(fam_key)
    if text == "":
        raise _Bad(f"parameters after {fam_key + sep!r} must not be empty")
    items = text.split(",")
    lenient = sep == "." and _C_NUMBERS.get()
    if kind == NONE:
        if sep != ".":
            raise _Bad(f"{fam_key} takes no parameters")
        _ignored(name, f"the parameters of {fam_key} ({text!r})")
        return [Measure(fam_key)]
    if kind in (INT_CUTS, OPT_CUT):
        cuts = _sorted_unique([_c_long(t, lenient) for t in items], "cutoffs")
        if cuts[0] <= 0:
            raise _Bad(f"cutoffs must be positive integers, got {cuts[0]}")
        return [Measure(fam_key, cutoff=k) for k in cuts]
    if kind == FLOAT_CUTS:
        vals = _sorted_unique([_finite(_c_double(t, lenient)) for t in items], "fractions")
        return [Measure(fam_key, param=v) for v in vals]
    if kind == GAINS:
        return [_gains(fam_key, text, name, sep)]
    vals = [_finite(_c_double(t, lenient)) for t in items]
    if kind == VECTOR:
        if fam_key == "utility" and len(vals) != 4:
            raise _Bad(f"utility takes exactly 4 coefficients, got {len(vals)}")
        if (fam_key == "11pt_avg" and sep == "."
                and any(b < a for a, b in zip(vals, vals[1:], strict=False))):
            # trec_eval matches the points in one pass that assumes them ascending: on
            # others its average (which fasteval gives too) mixes in the top interpolated
            # precision for the points the pass leaves
            _warn(f"measure {name!r}: the recall points are not in ascending order; trec_eval's "
                  "value, given here too, is then not the mean of their interpolated "
                  "precisions (write them ascending for that mean)")
        return [Measure(fam_key, vector=tuple(vals), text=text)]
    if kind == FLOAT:
        return [Measure(fam_key, param=vals[0], text=text)]
    if kind == LENGTH:
        if not lenient and vals[0] != int(vals[0]):
            raise _Bad(f"the length must be an integer, got {items[0]!r}")
        return [Measure(fam_key, cutoff=int(vals[0]), text=text)]
    raise AssertionError(kind)  # pragma: no cover - registry invariant


def _defaults(fam_key: str) -> list[Measure]:
    """The members a bare family name stands for (trec_eval: every default cutoff)."""
    fam = BY_KEY[fam_key]
    kind = fam.params
    if kind == INT_CUTS:
        if not fam.default:
            raise _Bad(f"{fam_key} needs a cutoff, e.g. {fam_key}@10")
        return [Measure(fam_key, cutoff=k) for k in fam.default]
    if kind == FLOAT_CUTS:
        return [Measure(fam_key, param=float(v)) for v in fam.default]
    if kind == VECTOR:
        return [Measure(fam_key, vector=tuple(float(v) for v in fam.default))]
    if kind == LENGTH:
        return [Measure(fam_key, cutoff=int(fam.default[0]))]
    return [Measure(fam_key)]  # NONE, OPT_CUT (whole ranking), GAINS, FLOAT (default)


def _gains(fam_key: str, text: str, name: str, sep: str) -> Measure:
    """``level=value`` pairs, checked as trec_eval checks them; ranx's ``rbp.95``."""
    if fam_key == "rbp" and sep == "." and re.fullmatch("[0-9]+", text):
        p = float(f"0.{text}")  # ranx: rbp.95 is p = 0.95, gains = grades
        return Measure("rbp_raw", param=p, text=repr(p))
    # trec_eval: '=' and ',' alternate, starting with '=' and ending with it
    seps = re.sub(r"[^=,]", "", text)
    if not seps or seps[-1] != "=" or "==" in seps or ",," in seps or seps[0] != "=":
        raise _Bad(f"parameters must be level=value pairs, got {text!r}")
    gains: list[tuple[int, float]] = []
    p = None
    ignored = []
    for item in text.split(","):
        key, val = item.split("=", 1)
        value = _finite(_c_double(val))
        if _INT.fullmatch(key) and fam_key != "rbp_resid":  # (a residual has no gains)
            gains.append((_whole(key, "levels"), value))
        elif key == "p" and fam_key in ("rbp", "rbp_resid"):
            p = value  # the last one, as trec_eval
        else:
            ignored.append(key)
    if ignored:
        _ignored(name, f"the parameter name(s) {', '.join(map(repr, ignored))} of {fam_key}")
    return Measure(fam_key, gains=tuple(gains) or None, param=p, text=text)


def _finite(x: float) -> float:
    if math.isnan(x) or math.isinf(x):
        raise _Bad(f"parameters must be finite numbers, got {x!r}")
    return x


def _split_underscore(base: str) -> tuple[str, str] | None:
    """A canonical ``family_params`` spelling: the longest family key followed by ``_``."""
    key = max((k for k in BY_KEY if base.startswith(k + "_")), key=len, default=None)
    return None if key is None else (key, base[len(key) + 1 :])


def _parse_args(args: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in args.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise _Bad(f"arguments must be key=value, got {item!r}")
        k, v = item.split("=", 1)
        key = k.strip().lower()
        if not key:
            raise _Bad(f"arguments must be key=value, got {item!r}")
        if key in out:
            raise _Bad(f"the argument {k.strip()} is given twice")
        v = v.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
            v = v[1:-1]
        out[key] = v
    return out


def _with_cutoff(fam_key: str, cut_text: str) -> Measure:
    """``family@cut``: a rank cutoff, or a fraction for iprec_at_recall / Rprec_mult."""
    if BY_KEY[fam_key].params == FLOAT_CUTS:
        return Measure(fam_key, param=_number(f"the cutoff of {fam_key}", cut_text))
    if not re.fullmatch("[0-9]+", cut_text) or _whole(cut_text, "cutoffs") <= 0:
        raise _Bad(f"the cutoff must be a positive integer, got {cut_text!r}")
    return Measure(fam_key, cutoff=_whole(cut_text, "cutoffs"))


_CUT_KINDS = (INT_CUTS, OPT_CUT, FLOAT_CUTS)


def _base_measures(base: str, cut_text: str | None, name: str) -> tuple[list[Measure], str]:
    """The measures a base name (and ``@cut``) stands for, and the alias used ("" if none)."""
    key = base.lower()
    if cut_text is not None:
        # a family key spelled exactly wins over an alias spelled alike in another case
        # (rbp@95 is not RBP@95)
        exact = base in BY_KEY and (base, True) not in _WRITTEN
        if not exact and key in _ALIASES and _ALIASES[key][1] is not None:
            return [_with_cutoff(_ALIASES[key][1], cut_text)], key
        if base in BY_KEY and BY_KEY[base].params in _CUT_KINDS:
            return [_with_cutoff(base, cut_text)], ""
        if base in BY_KEY or key in _ALIASES:
            hint = ""
            if key in _ALIASES and _ALIASES[key][1] is not None:
                spelled = next(a.name for a in BY_KEY[_ALIASES[key][1]].aliases
                               if a.cut and a.key == key)
                hint = f"; {spelled} is {_ALIASES[key][1]}_k"
            if key == "rbp":
                hint += " (ranx's persistence is written rbp.95)"
            raise _Bad(f"{base} takes no cutoff{hint}")
        raise _Bad()
    head, dot, params = base.partition(".")
    if dot and head in BY_KEY:  # trec_eval's -m name.params
        return _family_with_params(head, params, name, "."), ""
    if base in BY_KEY:
        return _defaults(base), ""
    if key in _ALIASES:
        plain, with_cut = _ALIASES[key]
        if plain is None:
            raise _Bad(f"{base} needs a cutoff, e.g. {base}@10")
        return _defaults(plain), key
    split = _split_underscore(base)
    if split is not None:
        return _family_with_params(split[0], split[1], name, "_"), ""
    raise _Bad()


def _parse_one(item: str | Measure) -> list[Measure]:
    if isinstance(item, Measure):
        return [item]
    if not isinstance(item, str):
        raise UnknownMeasureError(f"measure must be a string or Measure, got {item!r}")
    name = item.strip()
    try:
        return _parse_name(name)
    except _Bad as bad:
        raise _unknown(name, bad.why) from None


def _parse_name(name: str) -> list[Measure]:
    if name in SETS:
        return _expand_set(name)
    base, dot, params = name.partition(".")
    if dot and base in SETS:  # official.5: trec_eval accepts a set's list and ignores it
        if not params:
            raise _Bad(f"parameters after {base + '.'!r} must not be empty")
        _ignored(name, f"the parameters of the set {base} ({params!r})")
        return _expand_set(base)
    m = _FORM.match(name)
    if m is None:
        late = re.fullmatch(r"([^()@]+)@([^()@]+)\(([^()]*)\)", name)
        if late:  # P@5(rel=2): ir_measures writes the arguments before the cutoff
            base, cut, args = (t.strip() for t in late.groups())
            raise _Bad(f"arguments go before the cutoff: {base}({args})@{cut}")
        raise _Bad()
    base, cut_text = m.group("base").strip(), m.group("cut")
    args, gains, rel = _arguments(m)
    dcg = args.pop("dcg", None)
    p = args.pop("p", None)
    beta = args.pop("beta", None)
    cut_text = _cutoff_arguments(args, base, cut_text)
    if "gains" in args:  # not a {grade: gain} dict (that was taken out above)
        raise _Bad(f"gains must be {{grade: gain, ...}}, got {args['gains']!r}")
    unknown = sorted(k for k in args if k not in _NAMED_ARGS)
    if unknown:
        raise _Bad(f"unsupported argument(s) {', '.join(unknown)}")
    if dcg is not None:
        base = _dcg_family(base, dcg)
    measures, alias = _base_measures(base, cut_text, name)
    if gains is not None:
        measures = [_with_gains(x, gains) for x in measures]
    if alias in _ALIAS_P and p is None:
        p = repr(_ALIAS_P[alias])
    if p is not None:
        measures = [_with_p(x, p) for x in measures]
    if beta is not None:
        if any(x.family != "set_F" for x in measures):
            raise _Bad("beta= applies to SetF only")
        b = _number("beta", beta)
        measures = [Measure("set_F", param=b, text=repr(b)) for _ in measures]
    # an option another must exceed goes first (min_rel before max_rel): each step checks
    for key, text in sorted(args.items(), key=lambda kv: kv[0] not in _BOUNDING_OPTIONS):
        measures = [_with_named(x, key, text) for x in measures]
    if rel is not None:
        if rel < 0:
            raise _Bad(f"rel must be an integer >= 0, got {rel}")
        try:
            measures = [dataclasses.replace(x, rel=rel) for x in measures]
        except FastevalError as exc:
            raise _Bad(str(exc)) from None
    for x in measures:
        missing = x.missing_options()
        if missing:
            raise _Bad(f"{x.family} needs {', '.join(k + '=' for k in missing)} (the top grade "
                       f"of the relevance scale, e.g. {base}(max_rel=3))")
        if x.family == "rbp" and x.rel is None and dict(x.options).get("residual"):
            raise _Bad("residual=True applies to RBP with rel= (binary gains), e.g. "
                           "RBP(rel=1, residual=True); trec_eval's residual is rbp_resid")
    return measures


def _arguments(m: re.Match) -> tuple[dict[str, str], str | None, int | None]:
    """The named arguments of a name matched by ``_FORM``, its ``gains={...}`` text, and
    its relevance level (``rel=`` or trec_eval's ``-l`` suffix, not both)."""
    args_text = m.group("args")
    gains = None
    if args_text and _GAINS_ARG.search(args_text):  # ir_measures' nDCG(gains={0: 0, 2: 5})
        if len(_GAINS_ARG.findall(args_text)) > 1:
            raise _Bad("the argument gains is given twice")
        gains = _GAINS_ARG.search(args_text).group(1)
        args_text = _GAINS_ARG.sub("", args_text)
    args = _parse_args(args_text) if args_text else {}
    rel = None
    if "rel" in args:
        text = args.pop("rel")
        if not _INT.fullmatch(text):
            raise _Bad(f"rel must be an integer, got {text!r}")
        rel = _whole(text, "relevance levels")
    if m.group("level") is not None:
        if rel is not None:
            raise _Bad("the relevance level is given twice (rel= and -l)")
        rel = _whole(m.group("level"), "relevance levels")
    return args, gains, rel


def _cutoff_arguments(args: dict[str, str], base: str, cut_text: str | None) -> str | None:
    """The cutoff text, from ``@`` or from the ``cutoff=`` (or IPrec's ``recall=``) argument,
    which is taken out of ``args``; given twice is an error."""
    cutoff_arg = args.pop("cutoff", None)
    if cutoff_arg is not None:
        if cut_text is not None:
            raise _Bad("the cutoff is given twice (cutoff= and @)")
        cut_text = cutoff_arg
    recall_arg = args.pop("recall", None)  # ir_measures' IPrec(recall=0.5): IPrec@0.5
    if recall_arg is not None:
        key = base.lower()
        fam = _ALIASES[key][1] if key in _ALIASES else (base if base in BY_KEY else None)
        if fam is None or BY_KEY[fam].params != FLOAT_CUTS:
            raise _Bad("recall= applies to IPrec only (the recall level: IPrec(recall=0.5) "
                       "is IPrec@0.5)")
        if cut_text is not None:
            raise _Bad("the recall level is given twice (recall= and @)")
        cut_text = recall_arg
    return cut_text


def _dcg_family(base: str, dcg: str) -> str:
    """The family name of ``base`` with ir_measures' ``dcg=`` argument (``exp-log2``: Burges'
    gains), refused where it does not apply."""
    if base.lower() == "sdcg":  # SDCG's one discount (ir_measures)
        if dcg != "log2":
            raise _Bad(f"SDCG's dcg must be 'log2', got {dcg!r}")
    elif base.lower() != "ndcg":
        raise _Bad("dcg= applies to nDCG only (and SDCG's dcg='log2', its default)")
    elif dcg in ("exp-log2", "exp_log2", "burges"):
        return "ndcg_burges"
    elif dcg != "log2":
        raise _Bad(f"dcg must be 'log2' or 'exp-log2', got {dcg!r}")
    return base


_NAMED_ARGS = frozenset(
    {f.param.name.lower() for f in FAMILIES if f.param is not None}
    | {sw[0] for f in FAMILIES for sw in f.switches}
    | {o.name.lower() for f in FAMILIES for o in f.options}
)
"""Arguments that the registry's families name: their parameter (``gmax``), a switch to
another family (``relative``) or an option (``max_rel``)."""

_TRUE = {"true": True, "1": True, "false": False, "0": False}

_BOUNDING_OPTIONS = frozenset(o.above.lower() for f in FAMILIES for o in f.options if o.above)
"""Options that another option of a family must exceed (``min_rel``)."""

_GAINS_ARG = re.compile(r"gains\s*=\s*\{([^{}]*)\}\s*,?", re.I)


def _with_gains(x: Measure, text: str) -> Measure:
    """``x`` with ir_measures' ``gains={grade: gain, ...}``: trec_eval's ``level=gain``
    pairs of a gain family (``nDCG(gains={0: 0, 1: 1, 2: 3})`` is ``ndcg.0=0,1=1,2=3``;
    grades not listed keep their own value as gain)."""
    pairs = _gain_pairs(text)
    if x.family == "ndcg_cut":  # nDCG(gains={...})@k: trec_eval's gain rules, cut at k
        return dataclasses.replace(x, gains=tuple(pairs))
    if BY_KEY[x.family].params != GAINS:
        raise _Bad(f"gains= applies to nDCG (and G, ndcg_rel, Rndcg), not {x.family}")
    items = ",".join(f"{lv}={repr(g).removesuffix('.0')}" for lv, g in pairs)
    return _family_with_params(x.family, items, x.family, ".")[0]


def _gain_pairs(text: str) -> list[tuple[int, float]]:
    """ir_measures' ``{grade: gain, ...}`` as (grade, gain) pairs, in the order given; a
    grade written twice is one pair, as in the Python dict ir_measures reads (where the
    first place and the last gain count: ``{1: 2, 1: 5}`` is ``{1: 5}``)."""
    pairs: dict[int, float] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, val = item.partition(":")
        if not sep or not _INT.fullmatch(key.strip()):
            raise _Bad(f"gains must be {{grade: gain, ...}} with integer grades, got {item!r}")
        pairs[_whole(key.strip(), "grades")] = _number("gain", val.strip())
    if not pairs:
        raise _Bad("gains must not be empty")
    return list(pairs.items())


def _with_named(x: Measure, key: str, text: str) -> Measure:
    """``x`` with a named argument of its family: a switch (``SetP(relative=True)``) or its
    parameter (``ERR(gmax=5)@10``)."""
    fam = BY_KEY[x.family]
    switch = fam.switch(key)
    if switch is not None:
        other, when = switch
        return dataclasses.replace(x, family=other) if _flag(key, text) == when else x
    opt = fam.option(key)
    if opt is not None:
        value = float(_flag(key, text)) if opt.flag else _number(key, text)
        try:
            return dataclasses.replace(x, options=x.options + ((opt.name, value),))
        except FastevalError as exc:
            raise _Bad(str(exc)) from None
    if key == "judged_only":  # ir_measures' judged_only: its default is every measure's
        if not _flag(key, text):
            return x
        raise _Bad("judged_only=True applies to P only (P(judged_only=True)@k); "
                   "evaluate(..., judged_only=True) applies it to every measure "
                   "(trec_eval's -J)")
    if fam.param is None or fam.param.name.lower() != key or fam.params not in (
            NONE, INT_CUTS, OPT_CUT):
        raise _Bad(f"{key}= does not apply to {fam.key}")
    try:
        return dataclasses.replace(x, param=_number(key, text))
    except FastevalError as exc:
        raise _Bad(str(exc)) from None


def _flag(key: str, text: str) -> bool:
    """A True/False argument (``True``, ``1``, ``False``, ``0``, any case)."""
    if text.lower() not in _TRUE:
        raise _Bad(f"{key} must be True or False, got {text!r}")
    return _TRUE[text.lower()]


def _number(what: str, text: str) -> float:
    """A number as a name writes it (``0.5``, ``.5``, ``1e-3``; ASCII, no ``1_0``)."""
    if _DOUBLE.fullmatch(text) is None or text != text.strip():
        if text.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise _Bad(f"{what} must be a finite number, got {text!r}")
        raise _Bad(f"{what} must be a number, got {text!r}")
    return _finite(float(text))


def _with_p(x: Measure, p: str) -> Measure:
    value = _number("p", p)
    if x.family == "rbp":  # the name keeps the gains: RBP(gains={2: 1}) is rbp_p=0.8,2=1
        pairs = "".join(f",{lv}={repr(g).removesuffix('.0')}" for lv, g in x.gains or ())
        return Measure("rbp", param=value, gains=x.gains, text=f"p={value!r}{pairs}",
                       options=x.options)
    if x.family == "rbp_raw":
        return Measure("rbp_raw", param=value, text=repr(value))
    fam = BY_KEY[x.family]
    if fam.param is not None and fam.param.name == "p":
        return _with_named(x, "p", p)
    raise _Bad(f"p= does not apply to {x.family}")


def _unknown(name: str, why: str | None = None) -> UnknownMeasureError:
    if not name:
        return UnknownMeasureError("measure names must not be empty, got ''")
    close = _suggest(name) if len(name) <= _LONG_NAME else []
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    parts = _list_in_one(name)
    if parts:
        hint = f"; several measures are separate names: {parts!r}"
    if is_diversity_name(name):
        hint = ("; it is a diversity measure, computed from subtopic judgments by "
                "fasteval.evaluate_diversity")
    why = f" ({_QUOTED_LONG.sub(lambda m: _excerpt(m.group(1)), why)})" if why else ""
    return UnknownMeasureError(f"measure {_excerpt(name)} is not known{why}{hint}")


_LONG_NAME = 200
"""Names longer than this get no suggestions (no known name is near one) and are quoted
in part."""

_QUOTED_LONG = re.compile("'([^']{" + str(_LONG_NAME + 1) + ",})'")


def _excerpt(text: str) -> str:
    """``text`` quoted, or for a long one its start and end quoted with its length."""
    if len(text) <= _LONG_NAME:
        return repr(text)
    return f"{text[:60]!r}...{text[-20:]!r} ({len(text)} characters)"


def _list_in_one(name: str) -> list[str] | None:
    """The names of ``"P@5,P@10"`` (a comma-separated list given as one name) when each
    of them parses; else None."""
    parts = [t.strip() for t in name.split(",")]
    if len(parts) < 2 or len(name) > _LONG_NAME:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for part in parts:
            try:
                _parse_name(part)
            except (_Bad, FastevalError):
                return None
    return parts


def _suggest(name: str) -> list[str]:
    """Up to four known names close to ``name``: its compatibility form first when that
    parses (``ndcg＠10``, fullwidth, is ``ndcg@10``), then names close to it in any case
    (``GM_MAP``: ``gm_map``)."""
    out = []
    plain = unicodedata.normalize("NFKC", name).strip()
    if plain != name and plain.isascii():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                _parse_name(plain)
                out.append(plain)
            except (_Bad, FastevalError):
                pass
    names = known_names()
    lower: dict[str, str] = {}
    for n in names:
        lower.setdefault(n.lower(), n)
    for n in (difflib.get_close_matches(name, names, n=4, cutoff=0.6)
              + [lower[c] for c in difflib.get_close_matches(name.lower(), list(lower), n=4,
                                                             cutoff=0.6)]):
        if n not in out:
            out.append(n)
    return out[:4]


DIVERSITY_SPELLINGS: dict[str, str] = {
    "alpha-ndcg": "alpha-nDCG", "a-ndcg": "alpha-nDCG", "alpha-dcg": "alpha-DCG",
    "a-dcg": "alpha-DCG", "err-ia": "ERR-IA", "nerr-ia": "nERR-IA", "nrbp": "NRBP",
    "nnrbp": "nNRBP", "p-ia": "P-IA", "precision-ia": "P-IA", "strec": "strec",
    "strecall": "strec", "s-recall": "strec", "subtopic-recall": "strec", "map-ia": "MAP-IA",
    "ap-ia": "MAP-IA",
}
"""Spellings of :mod:`fasteval.diversity`'s measures (lower case, ``_`` read as ``-``) and
their canonical names (ndeval's): the parser refers such a name to that module."""
DIVERSITY_NAME = re.compile(r"^\s*(?P<base>[A-Za-z][A-Za-z_\-]*)\s*(?:\((?P<params>[^()]*)\)\s*)?"
                            r"(?:@\s*(?P<cut>[^\s]+)\s*)?$")
"""A diversity measure's name: its base, ``(parameters)`` and ``@cutoff``."""


def is_diversity_name(name: object) -> bool:
    """Whether ``name`` spells one of :mod:`fasteval.diversity`'s measures (its base name;
    parameters and cutoff are checked when that module parses it).

    Examples
    --------
    >>> is_diversity_name("ERR_IA@20"), is_diversity_name("ndcg@10")
    (True, False)
    """
    match = DIVERSITY_NAME.match(name) if isinstance(name, str) else None
    return match is not None and match.group("base").lower().replace("_", "-") in DIVERSITY_SPELLINGS


@functools.lru_cache(maxsize=1)
def _known() -> tuple[str, ...]:
    candidates = set(SETS)
    for fam in FAMILIES:
        candidates.add(fam.key)
        candidates.add(fam.sample())
        if fam.params in (INT_CUTS, OPT_CUT):
            ks = fam.default or (10,)
            candidates.update(f"{fam.key}_{k}" for k in ks)
            candidates.update(f"{fam.key}@{k}" for k in ks)
            candidates.update(fam.sample(k) for k in ks)
        elif fam.params == FLOAT_CUTS:
            candidates.add(f"{fam.key}@0.5")
    for alias, (_plain, with_cut) in _ALIASES.items():
        candidates.add(alias)
        if with_cut is not None:
            cut = "0.5" if BY_KEY[with_cut].params == FLOAT_CUTS else "10"
            candidates.add(f"{alias}@{cut}")
    ok = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in sorted(candidates):
            try:
                _parse_name(c)
            except _Bad:
                continue
            ok.append(c)
    return tuple(ok)


def known_names() -> list[str]:
    """Names offered as suggestions: family keys, default members, ``family@k``, aliases
    and sets; every one of them parses.

    Examples
    --------
    >>> "relative_P@5" in known_names() and "hit_rate" not in known_names()
    True
    """
    return list(_known())


def parse_measures(names: str | Measure | Iterable[str | Measure], *,
                   trec_eval_syntax: bool = False) -> list[Measure]:
    """Parse measure names (any dialect) into a de-duplicated list of :class:`Measure`.

    trec_eval lists (``P.5,10``), bare trec_eval families (``P`` = all default cutoffs) and
    the sets ``all_trec`` / ``official`` expand to several measures. The result keeps the
    order of first appearance; use :func:`trec_order` for trec_eval's output order.
    ``trec_eval_syntax=True`` reads ``.params`` lists with C's ``atol``/``atof``, as
    trec_eval's ``-m`` does (``ndcg_cut.23.4`` is ``ndcg_cut_23``); by default a
    parameter must be a number as written.

    Examples
    --------
    >>> [m.name for m in parse_measures(["ndcg@10", "nDCG@10", "ndcg_cut_10", "P.5,10"])]
    ['ndcg_cut_10', 'P_5', 'P_10']
    >>> parse_measures("mrr")[0].name
    'recip_rank'
    >>> [m.name for m in parse_measures(["precision", "hits@10-l2", "NumRet(rel=2)"])]
    ['set_P', 'hits_10(rel=2)', 'num_rel_ret(rel=2)']
    """
    names = _items(names)
    token = _C_NUMBERS.set(trec_eval_syntax)
    try:
        return list(dict.fromkeys(m for item in names for m in _parse_one(item)))
    finally:
        _C_NUMBERS.reset(token)


def _items(names: str | Measure | Iterable[str | Measure]) -> list[str | Measure]:
    """The names asked for, as a list (one name or Measure is a list of one)."""
    if isinstance(names, (str, Measure)):
        return [names]
    if isinstance(names, (bytes, Mapping)) or not isinstance(names, Iterable):
        # bytes would be read as numbers, a mapping as its keys
        raise UnknownMeasureError(
            f"measures must be a name, a Measure or a list of them, got {type(names).__name__}")
    return list(names)


def parse_labelled(names: str | Measure | Iterable[str | Measure], *,
                   trec_eval_syntax: bool = False) -> list[tuple[str, Measure]]:
    """Parse measure names into ``(label, measure)`` pairs: the label is the name as asked.

    The label of a name that gives one measure is that name as written (stripped, each run
    of blanks inside it written as one space, so that it fits on one line and in one field
    of trec_eval's tab-separated lines): ``ndcg@10`` stays ``ndcg@10``, ``nDCG@10``
    ``nDCG@10``, ``mrr`` ``mrr``. A :class:`Measure` given itself is labelled by its
    canonical name, as are the members of trec_eval's ``-m`` lists and of names that give
    several: ``P.10`` and ``ndcg_cut.5,10`` (``name.params``: ``P_10``, ``ndcg_cut_5``...,
    as trec_eval prints them), ``P``, ``official``, ``all_trec``. The pairs keep the order
    of first appearance, one per measure:

    * the same name twice is asked once;
    * a member of a list or set also named by its own spelling takes that spelling as its
      label (``official`` with ``P@10``: ``P@10`` among ``P_5``, ``P_15``...);
    * two different names of one measure (``ndcg@10`` and ``ndcg_cut_10``) are a
      :class:`~fasteval.errors.ParameterError` naming both: the results would carry one
      of them only.

    Examples
    --------
    >>> [(label, m.name) for label, m in parse_labelled(["ndcg@10", " mrr ", "P.5,10"])]
    [('ndcg@10', 'ndcg_cut_10'), ('mrr', 'recip_rank'), ('P_5', 'P_5'), ('P_10', 'P_10')]
    >>> [label for label, _ in parse_labelled(["P.5,10", "P@10", "P@10", "ndcg_cut.3", "rbp.95"])]
    ['P_5', 'P@10', 'ndcg_cut_3', 'rbp.95']
    >>> parse_labelled(["ndcg@10", "ndcg_cut_10"])
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: measures must be one name per measure (both are ndcg_cut_10; results carry the name asked for), got ['ndcg@10', 'ndcg_cut_10']
    """
    items = _items(names)
    token = _C_NUMBERS.set(trec_eval_syntax)
    try:
        return label_measures(items, _parse_one, as_written=lambda item: not _trec_list(item))
    finally:
        _C_NUMBERS.reset(token)


def _trec_list(name: str | Measure) -> bool:
    """Whether ``name`` is trec_eval's ``-m name.params`` (``P.10``, ``map.5``, ``official.5``),
    whose members carry trec_eval's names (ranx's ``rbp.95`` is a name of its own).

    Examples
    --------
    >>> [_trec_list(n) for n in ("P.10", " ndcg_cut.5,10", "rbp.95", "rbp.8-l2", "P@10")]
    [True, True, False, False, False]
    """
    if not isinstance(name, str):
        return False
    head, dot, params = name.strip().partition(".")
    return bool(dot) and (head in BY_KEY or head in SETS) and not (
        head == "rbp" and _RANX_RBP.fullmatch(params.strip()) is not None)


_RANX_RBP = re.compile(r"[0-9]+(-l[0-9]+)?")
"""The part after ``rbp.`` of ranx's RBP names (``rbp.95``, ``rbp.8-l2``)."""


_M = TypeVar("_M")
_BLANKS = re.compile(r"\s+")


def label_measures(items: Iterable[Any], parse_one: Callable[[Any], list[_M]],
                   canonical: Callable[[_M], str] = lambda m: m.name,
                   as_written: Callable[[Any], bool] = lambda item: True,
                   ) -> list[tuple[str, _M]]:
    """``(label, measure)`` pairs of ``items`` by the rules of :func:`parse_labelled`;
    ``parse_one`` gives the measures of one item, ``canonical`` a measure's own name (the
    label of a measure given as an object, and what tells two measures apart);
    ``as_written(item)`` False: the item's measures carry their canonical names, as the
    members of a list do. Diversity measures (:mod:`fasteval.diversity`) are labelled by
    the same rules.

    Examples
    --------
    >>> label_measures(["a ", "A", "b"], lambda x: [x.strip().lower()], str)
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: measures must be one name per measure (both are a; results carry the name asked for), got ['a', 'A']
    """
    found: dict[str, list] = {}  # canonical name -> [label, measure, named by itself]
    for item in items:
        ms = parse_one(item)
        if len(ms) != 1 or not as_written(item):
            for m in ms:
                found.setdefault(canonical(m), [canonical(m), m, False])
            continue
        m = ms[0]
        key = canonical(m)
        label = _BLANKS.sub(" ", item.strip()) if isinstance(item, str) else key
        entry = found.get(key)
        if entry is None:
            found[key] = [label, m, True]
        elif not entry[2]:
            entry[0], entry[2] = label, True
        elif entry[0] != label:
            raise ParameterError("measures", f"one name per measure (both are {key}; results "
                                 "carry the name asked for)", [entry[0], label])
    return [(label, m) for label, m, _ in found.values()]


def parse_measure(name: str | Measure) -> Measure:
    """Parse one measure name; errors when it names several (``P.5,10``, ``all_trec``).

    Examples
    --------
    >>> parse_measure("P(rel=2)@5")
    Measure('P_5(rel=2)')
    >>> parse_measure("ndcg_cut_10") == parse_measure("ndcg@10") == parse_measure("ndcg_cut@10")
    True
    >>> parse_measure("rbp.95"), parse_measure("RBP(rel=2)")
    (Measure('rbp_raw_0.95'), Measure('rbp_p=0.8(rel=2)'))
    """
    ms = _parse_one(name)
    if len(ms) != 1:
        raise UnknownMeasureError(
            f"measure {name!r} names {len(ms)} measures; use parse_measures for lists"
        )
    return ms[0]


def _expand_set(name: str) -> list[Measure]:
    want = "official" if name == "official" else "all_trec"
    return [m for f in FAMILIES if want in f.sets for m in _defaults(f.key)]


def trec_order(measures: Iterable[Measure]) -> list[Measure]:
    """Sort measures into trec_eval's output order (internal table order, then parameters)."""

    def key(m: Measure):
        return (ORDER[m.family], m.cutoff or 0, m.param or 0.0, m.name)

    return sorted(measures, key=key)


# FLOAT_CUTS members are named with %.2f; GAINS and VECTOR keep their text.
__all__ = ["parse_measure", "parse_measures", "parse_labelled", "label_measures", "trec_order",
           "known_names", "SETS", "DEFAULT_SET", "GAINS"]
