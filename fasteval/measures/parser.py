"""One grammar for measure names in three dialects.

* trec_eval: ``P_5``, ``ndcg_cut_10``, ``map``, ``P.5,10`` (a list), ``ndcg.1=3,2=9``,
  ``utility_2,-1,0,0``, named sets ``all_trec`` and ``official``;
* ir_measures: ``nDCG@10``, ``P(rel=2)@5``, ``AP``, ``RR@10``, ``R@100``, ``Judged@10``,
  ``nDCG(dcg='exp-log2')@10``, ``IPrec@0.5``, ``RBP(p=0.8)``;
* ranx: ``ndcg@10``, ``map@100``, ``mrr``, ``recall@100``, ``precision@5``,
  ``hit_rate@10``, ``r-precision``, ``f1@10``, ``ndcg_burges@10``.

Grammar::

    measure  := base [ "(" args ")" ] [ "@" cutoff ]
    base     := trec_family [ ("_" | ".") params ]  |  alias
    args     := key "=" value { "," key "=" value }
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable

from fasteval.errors import UnknownMeasureError
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
    ORDER,
    VECTOR,
)

_FORM = re.compile(r"^(?P<base>[^()@]+?)\s*(?:\((?P<args>[^()]*)\))?\s*(?:@\s*(?P<cut>[0-9.]+))?$")

# alias (lower case) -> (family without cutoff, family with cutoff)
_ALIASES: dict[str, tuple[str | None, str | None]] = {
    "p": ("P", "P"),
    "precision": ("P", "P"),
    "ap": ("map", "map_cut"),
    "map": ("map", "map_cut"),
    "rr": ("recip_rank", "recip_rank_cut"),
    "mrr": ("recip_rank", "recip_rank_cut"),
    "recip_rank": ("recip_rank", "recip_rank_cut"),
    "ndcg": ("ndcg", "ndcg_cut"),
    "ndcg_burges": ("ndcg_burges", "ndcg_burges_cut"),
    "r": ("recall", "recall"),
    "recall": ("recall", "recall"),
    "rprec": ("Rprec", None),
    "r-precision": ("Rprec", None),
    "r_precision": ("Rprec", None),
    "bpref": ("bpref", None),
    "infap": ("infAP", None),
    "success": ("success", "success"),
    "hit_rate": (None, "success"),
    "hitrate": (None, "success"),
    "f1": ("set_F", "F1"),
    "judged": (None, "judged"),
    "numq": ("num_q", None),
    "numret": ("num_ret", None),
    "numrel": ("num_rel", None),
    "numrelret": ("num_rel_ret", None),
    "num_ret": ("num_ret", None),
    "num_rel": ("num_rel", None),
    "num_rel_ret": ("num_rel_ret", None),
    "setp": ("set_P", None),
    "setr": ("set_recall", None),
    "setrecall": ("set_recall", None),
    "setf": ("set_F", None),
    "setap": ("set_map", None),
    "iprec": (None, "iprec_at_recall"),
    "rbp": ("rbp", None),
    "bing": ("binG", None),
    "unj": (None, "unj"),
}

SETS = ("all_trec", "official")


def _atol(text: str) -> int:
    """C ``atol``: leading integer part of the text (``"23.4"`` -> 23)."""
    m = re.match(r"\s*([+-]?\d+)", text)
    if m is None:
        raise ValueError(text)
    return int(m.group(1))


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(t) for t in text.split(",") if t != "")


def _fail(name: str, why: str | None = None) -> UnknownMeasureError:
    close = difflib.get_close_matches(name, known_names(), n=4, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    why = f" ({why})" if why else ""
    return UnknownMeasureError(f"measure {name!r} is not known{why}{hint}")


def known_names() -> list[str]:
    """Names offered as suggestions: family keys, default members, aliases and sets."""
    names = set(BY_KEY) | set(_ALIASES) | set(SETS)
    for fam in FAMILIES:
        if fam.params == INT_CUTS:
            names.update(f"{fam.key}_{k}" for k in fam.default)
            names.update(f"{fam.key}@{k}" for k in fam.default)
    names.update(f"{a}@10" for a, (_, cut) in _ALIASES.items() if cut)
    return sorted(names)


def _family_with_params(fam_key: str, text: str | None, name: str) -> list[Measure]:
    """Members of a trec_eval family given the parameter text after ``_`` or ``.``."""
    fam = BY_KEY[fam_key]
    kind = fam.params
    try:
        if kind == NONE:
            if text:
                raise _fail(name, f"{fam_key} takes no parameters")
            return [Measure(fam_key)]
        if kind == INT_CUTS:
            cuts = fam.default if not text else tuple(_atol(t) for t in text.split(",") if t)
            if any(k <= 0 for k in cuts):
                raise _fail(name, "cutoffs must be positive integers")
            return [Measure(fam_key, cutoff=k) for k in sorted(set(cuts))]
        if kind == FLOAT_CUTS:
            vals = fam.default if not text else _floats(text)
            return [Measure(fam_key, param=float(v)) for v in sorted(set(vals))]
        if kind == VECTOR:
            if not text:
                return [Measure(fam_key, vector=tuple(float(v) for v in fam.default))]
            vec = _floats(text)
            if fam_key == "utility" and len(vec) != 4:
                raise _fail(name, "utility takes exactly 4 coefficients")
            return [Measure(fam_key, vector=vec, text=text)]
        if kind == FLOAT:
            if not text:
                return [Measure(fam_key, param=float(fam.default[0]))]
            return [Measure(fam_key, param=float(text), text=text)]
        if kind == LENGTH:
            if not text:
                return [Measure(fam_key, cutoff=int(fam.default[0]))]
            return [Measure(fam_key, cutoff=_atol(text), text=text)]
        if kind == GAINS:
            if not text:
                return [Measure(fam_key)]
            gains: list[tuple[int, float]] = []
            p = None
            for item in text.split(","):
                if "=" not in item:
                    raise _fail(name, "gains are written level=gain")
                key, val = item.split("=", 1)
                if key == "p" and fam_key == "rbp":
                    p = float(val)
                    continue
                gains.append((int(key), float(val)))
            return [Measure(fam_key, gains=tuple(gains) or None, param=p, text=text)]
    except (ValueError, TypeError) as exc:
        if isinstance(exc, UnknownMeasureError):
            raise
        raise _fail(name, f"cannot read parameters {text!r}") from None
    raise AssertionError(kind)  # pragma: no cover


def _split_trec(name: str) -> tuple[str, str | None, str] | None:
    """Split a trec_eval spelling into (family, parameter text, separator)."""
    if name in BY_KEY:
        return name, None, ""
    best = None
    for key in BY_KEY:
        for sep in ("_", "."):
            if name.startswith(key + sep) and (best is None or len(key) > len(best[0])):
                best = (key, name[len(key) + 1 :], sep)
    return best


def _parse_args(args: str, name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in args.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise _fail(name, f"argument {item!r} is not key=value")
        k, v = item.split("=", 1)
        out[k.strip().lower()] = v.strip().strip("'\"")
    return out


def parse_measures(names: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse measure names (any dialect) into a de-duplicated list of :class:`Measure`.

    trec_eval lists (``P.5,10``), bare trec_eval families (``P`` = all default cutoffs) and
    the sets ``all_trec`` / ``official`` expand to several measures. The result keeps the
    order of first appearance; use :func:`trec_order` for trec_eval's output order.

    Examples
    --------
    >>> [m.name for m in parse_measures(["ndcg@10", "nDCG@10", "ndcg_cut_10", "P.5,10"])]
    ['ndcg_cut_10', 'P_5', 'P_10']
    >>> parse_measures("mrr")[0].name
    'recip_rank'
    """
    if isinstance(names, (str, Measure)):
        names = [names]
    out: list[Measure] = []
    seen: set[Measure] = set()
    for item in names:
        for m in _parse_one(item):
            if m not in seen:
                seen.add(m)
                out.append(m)
    return out


def parse_measure(name: str | Measure) -> Measure:
    """Parse one measure name; errors when it names several (``P.5,10``, ``all_trec``).

    Examples
    --------
    >>> parse_measure("P(rel=2)@5")
    Measure('P_5(rel=2)')
    >>> parse_measure("ndcg_cut_10") == parse_measure("ndcg@10")
    True
    """
    ms = _parse_one(name)
    if len(ms) != 1:
        raise UnknownMeasureError(
            f"measure {name!r} names {len(ms)} measures; use parse_measures for lists"
        )
    return ms[0]


def _expand_set(name: str) -> list[Measure]:
    fams = [f for f in FAMILIES if ("official" if name == "official" else "all_trec") in f.sets]
    out: list[Measure] = []
    for f in fams:
        out.extend(_family_with_params(f.key, None, name))
    return out


def _parse_one(item: str | Measure) -> list[Measure]:
    if isinstance(item, Measure):
        return [item]
    if not isinstance(item, str):
        raise UnknownMeasureError(f"measure must be a string or Measure, got {item!r}")
    name = item.strip()
    if name in SETS:
        return _expand_set(name)
    m = _FORM.match(name)
    if m is None:
        raise _fail(name)
    base, args_text, cut_text = m.group("base").strip(), m.group("args"), m.group("cut")
    args = _parse_args(args_text, name) if args_text else {}
    rel = None
    if "rel" in args:
        try:
            rel = int(args.pop("rel"))
        except ValueError:
            raise _fail(name, "rel must be an integer") from None
    dcg = args.pop("dcg", None)
    p = args.pop("p", None)
    beta = args.pop("beta", None)
    cutoff_arg = args.pop("cutoff", None)
    if cutoff_arg is not None and cut_text is None:
        cut_text = cutoff_arg
    if args:
        raise _fail(name, f"unsupported argument(s) {', '.join(sorted(args))}")

    measures: list[Measure]
    if cut_text is None and (split := _split_trec(base)) is not None and (
        base in BY_KEY or split[1] is not None
    ):
        fam_key, text, _sep = split
        measures = _family_with_params(fam_key, text, name)
    else:
        key = base.lower()
        if key not in _ALIASES:
            raise _fail(name)
        plain, with_cut = _ALIASES[key]
        if dcg is not None:
            if key != "ndcg":
                raise _fail(name, "dcg= applies to nDCG only")
            if dcg in ("exp-log2", "exp_log2", "burges"):
                plain, with_cut = "ndcg_burges", "ndcg_burges_cut"
            elif dcg not in ("log2",):
                raise _fail(name, f"dcg must be 'log2' or 'exp-log2', got {dcg!r}")
        if cut_text is not None:
            if with_cut is None:
                raise _fail(name, f"{base} takes no cutoff")
            fam = BY_KEY[with_cut]
            if fam.params == FLOAT_CUTS:
                measures = [Measure(with_cut, param=float(cut_text))]
            else:
                try:
                    k = int(cut_text)
                except ValueError:
                    raise _fail(name, "the cutoff must be a positive integer") from None
                if k <= 0:
                    raise _fail(name, "the cutoff must be a positive integer")
                measures = [Measure(with_cut, cutoff=k)]
        else:
            if plain is None:
                raise _fail(name, f"{base} needs a cutoff, e.g. {base}@10")
            measures = _family_with_params(plain, None, name)
    if p is not None:
        if any(x.family != "rbp" for x in measures):
            raise _fail(name, "p= applies to RBP only")
        measures = [Measure("rbp", param=float(p), gains=x.gains, text=f"p={p}") for x in measures]
    if beta is not None:
        if any(x.family != "set_F" for x in measures):
            raise _fail(name, "beta= applies to SetF only")
        measures = [Measure("set_F", param=float(beta), text=str(float(beta))) for x in measures]
    if rel is not None:
        if rel < 0:
            raise _fail(name, "rel must be >= 0")
        measures = [
            Measure(x.family, x.cutoff, x.param, x.vector, x.gains, rel, x.text) for x in measures
        ]
    for x in measures:
        if x.param is not None and (math.isnan(x.param) or math.isinf(x.param)):
            raise _fail(name, "parameter must be finite")
    return measures


def trec_order(measures: Iterable[Measure]) -> list[Measure]:
    """Sort measures into trec_eval's output order (internal table order, then parameters)."""

    def key(m: Measure):
        return (ORDER[m.family], m.cutoff or 0, m.param or 0.0, m.name)

    return sorted(measures, key=key)


# FLOAT_CUTS members are named with %.2f; GAINS and VECTOR keep their text.
__all__ = ["parse_measure", "parse_measures", "trec_order", "known_names", "SETS", "GAINS"]
