"""The :class:`Measure` value: a family plus its parameters, with one canonical name."""

from __future__ import annotations

import math
import numbers
import operator
import re
from dataclasses import dataclass

from fasteval.errors import ParameterError
from fasteval.measures.registry import (
    BY_KEY,
    FLOAT,
    FLOAT_CUTS,
    GAINS,
    INT_CUTS,
    LENGTH,
    NONE,
    OPT_CUT,
    REL_BINARY,
    REL_FLOOR,
    REL_NONE,
    VECTOR,
    Family,
    family,
)

_NAMED = (NONE, INT_CUTS, OPT_CUT)
"""Kinds whose :class:`~fasteval.measures.registry.Param` is written as a named argument
(``err_10(gmax=5)``); the others keep trec_eval's spellings (``set_F_0.5``, ``rbp_p=0.5``)."""

WHOLE_RANKING = 2**62
"""Kernel cutoff of an :data:`~fasteval.measures.registry.OPT_CUT` measure without one."""


@dataclass(frozen=True, order=False)
class Measure:
    """One concrete measure, e.g. ``P_10`` or ``ndcg_cut_10(rel=2)``.

    Build measures with :func:`fasteval.parse_measure`; the canonical :attr:`name`
    parses back to an equal value.

    Parameters
    ----------
    family : str
        Family key (trec_eval spelling), see :mod:`fasteval.measures.registry`.
    cutoff : int, optional
        Rank cutoff for cutoff families (``P``, ``ndcg_cut``, ...).
    param : float, optional
        Fraction for ``iprec_at_recall``/``Rprec_mult``, beta for ``set_F``, p for ``rbp``.
    vector : tuple of float, optional
        Coefficients of ``utility`` or recall points of ``11pt_avg``.
    gains : tuple of (int, float) pairs, optional
        Gain overrides per relevance grade (``ndcg``, ``G``, ``ndcg_rel``, ``Rndcg``, ``rbp``).
    rel : int, optional
        Relevance level for this measure, overriding the evaluation's ``relevance_level``
        (binary measures: relevant iff grade >= rel). On gain measures (nDCG, DCG,
        ``rbp_raw``) grades below it gain 0, as ranx's ``-lN``; ``rbp`` with ``rel``
        gives gain 1 to grades >= rel, else 0 (ir_measures' ``RBP(rel=k)``).
        ``num_ret`` with ``rel`` is ``num_rel_ret`` at that level (ir_measures'
        ``NumRet(rel=k)``); families without a relevance level refuse it.
    text : str, optional
        Parameter text as written in trec_eval's ``-m name.params`` (part of the name);
        left out, it is written from the parameters (``Measure("set_F", param=0.5)`` is
        ``set_F_0.5``). A text must name the parameters the measure has.
    options : tuple of (str, float) pairs, optional
        The family's further named numbers (:attr:`Family.options`): the C/W/L gain scale
        ``min_rel`` / ``max_rel`` and ``residual`` (1.0 for True). Only values that differ
        from the default are kept, in the family's order.

    Examples
    --------
    >>> from fasteval import parse_measure
    >>> m = parse_measure("nDCG@10")
    >>> m.name
    'ndcg_cut_10'
    >>> parse_measure(m.name) == m
    True
    >>> parse_measure("P(rel=2)@5").name
    'P_5(rel=2)'
    >>> Measure("num_ret", rel=2).name
    'num_rel_ret(rel=2)'
    >>> parse_measure("INST(T=2, max_rel=3)").name
    'inst(T=2, max_rel=3)'
    """

    family: str
    cutoff: int | None = None
    param: float | None = None
    vector: tuple[float, ...] | None = None
    gains: tuple[tuple[int, float], ...] | None = None
    rel: int | None = None
    text: str | None = None
    options: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        spec = BY_KEY.get(self.family)
        if spec is None:
            raise ParameterError("family", "a registered measure family", self.family)
        _normal_numbers(self)
        if self.cutoff is not None:
            if spec.params not in (INT_CUTS, OPT_CUT, LENGTH):
                raise ParameterError(f"{self.family}'s cutoff", "unset: the family takes none",
                                     self.cutoff)
            try:  # an int, or numpy's (made a plain int): not a bool, nor a float
                cutoff = None if isinstance(self.cutoff, bool) else operator.index(self.cutoff)
            except TypeError:
                cutoff = None
            if cutoff is None:
                raise ParameterError(f"{self.family}'s cutoff", "an integer", self.cutoff)
            object.__setattr__(self, "cutoff", cutoff)
        if self.rel is not None:
            if isinstance(self.rel, bool) or not isinstance(self.rel, int) or self.rel < 0:
                raise ParameterError("rel", "an integer >= 0", self.rel)
            if self.family == "num_ret":  # retrieved documents of grade >= rel
                object.__setattr__(self, "family", "num_rel_ret")
            elif spec.rel == REL_NONE:
                raise ParameterError(
                    "rel", f"unset: {self.family} has no relevance level", self.rel)
        if self.gains is not None and not self.gains:
            object.__setattr__(self, "gains", None)
        _check_fields(self, spec)
        if spec.params in _NAMED and spec.param is not None and self.param is not None:
            # a named parameter (``ERR(gmax=5)@10``): its default is the same measure
            value = float(self.param)
            object.__setattr__(self, "param", None if value == spec.param.default else value)
        if spec.params == FLOAT and self.param is None:
            object.__setattr__(self, "param", float(spec.default[0]))
        if spec.params == VECTOR and self.vector is None:
            object.__setattr__(self, "vector", tuple(float(v) for v in spec.default))
        if spec.params == LENGTH and self.cutoff is None:
            object.__setattr__(self, "cutoff", int(spec.default[0]))
        if self.options:
            object.__setattr__(self, "options", _normal_options(spec, self.options))
        if spec.params in (VECTOR, GAINS, FLOAT, LENGTH):
            _name_the_parameters(self, spec)

    def option(self, name: str) -> float:
        """The value of the family option ``name`` (its default when not given; NaN for a
        required one left out).

        Examples
        --------
        >>> from fasteval import parse_measure
        >>> m = parse_measure("SDCG(max_rel=3)@10")
        >>> m.option("min_rel"), m.option("max_rel"), m.option("residual")
        (0.0, 3.0, 0.0)
        """
        spec = self.spec.option(name)
        if spec is None:
            raise ParameterError("option", f"one of {self.family}'s options", name)
        return dict(self.options).get(spec.name, spec.default)

    def missing_options(self) -> list[str]:
        """The required options left out (``max_rel`` of a C/W/L measure)."""
        given = dict(self.options)
        return [o.name for o in self.spec.options if o.required and o.name not in given]

    def check_options(self) -> None:
        """Raise :class:`~fasteval.errors.ParameterError` for a required option left out
        (a measure built without the parser, which refuses such names itself).

        Examples
        --------
        >>> Measure("inst").check_options()
        Traceback (most recent call last):
        ...
        fasteval.errors.ParameterError: inst's max_rel must be given (the top grade of the relevance scale), got None
        """
        missing = self.missing_options()
        if missing:
            raise ParameterError(f"{self.name}'s {missing[0]}",
                                 "given (the top grade of the relevance scale)", None)
        if self.family == "rbp" and self.rel is None and dict(self.options).get("residual"):
            raise ParameterError(f"{self.name}'s residual",
                                 "False without rel= (residual=True applies to binary gains, "
                                 "RBP(rel=1, residual=True); trec_eval's residual is rbp_resid)",
                                 True)

    @property
    def spec(self) -> Family:
        """The family declaration."""
        return family(self.family)

    @property
    def base_name(self) -> str:
        """The name without the ``(rel=N)`` suffix: exactly what trec_eval prints."""
        kind = self.spec.params
        if kind == NONE:
            return self.family
        if kind == INT_CUTS:
            return f"{self.family}_{self.cutoff}"
        if kind == OPT_CUT:
            return self.family if self.cutoff is None else f"{self.family}_{self.cutoff}"
        if kind == FLOAT_CUTS:  # trec_eval: "%s_%3.2f" into strlen(family) + 10 bytes
            return f"{self.family}_{self.param:3.2f}"[: len(self.family) + 9]
        if kind in (VECTOR, GAINS, FLOAT, LENGTH):
            return self.family if self.text is None else f"{self.family}_{self.text}"
        raise AssertionError(kind)  # pragma: no cover - registry invariant

    @property
    def name(self) -> str:
        """Canonical name (round-trips through :func:`fasteval.parse_measure`)."""
        args = []
        if self.spec.params in _NAMED and self.spec.param is not None and self.param is not None:
            args.append(f"{self.spec.param.name}={_num(self.param)}")
        if self.gains is not None and self.spec.params != GAINS:
            pairs = ",".join(f"{lv}:{_num(g)}" for lv, g in self.gains)
            args.append(f"gains={{{pairs}}}")
        for key, value in self.options:
            opt = self.spec.option(key)
            args.append(f"{key}={bool(value)}" if opt is not None and opt.flag
                        else f"{key}={_num(value)}")
        if self.rel is not None:
            args.append(f"rel={self.rel}")
        return self._key_name + (f"({', '.join(args)})" if args else "")

    @property
    def _key_name(self) -> str:
        """:attr:`base_name`, or where trec_eval's two decimals of a fraction lose some of
        it (``iprec_at_recall.0.505`` prints as ``iprec_at_recall_0.51``), the fraction as
        it parses back (``iprec_at_recall_0.505``)."""
        if self.spec.params == FLOAT_CUTS:
            short = f"{self.param:.2f}"
            return f"{self.family}_{short if float(short) == self.param else _num(self.param)}"
        return self.base_name

    @property
    def depth(self) -> int:
        """Rank cutoff handed to the kernels (0: none; the whole ranking for an optional
        cutoff left out)."""
        if self.cutoff is not None:
            return self.cutoff
        return WHOLE_RANKING if self.spec.params == OPT_CUT else 0

    def level(self, relevance_level: int) -> int:
        """Relevance level handed to the kernels.

        ``rel`` when given; else the evaluation's ``relevance_level``, except for the
        gain measures that read the level as a floor (0: none) and ``rbp`` (-1: graded).

        Examples
        --------
        >>> from fasteval import parse_measure
        >>> [parse_measure(n).level(2) for n in ("P@5", "P(rel=3)@5", "ndcg@10", "rbp")]
        [2, 3, 0, -1]
        """
        if self.rel is not None:
            return self.rel
        mode = self.spec.rel
        if mode == REL_BINARY:
            return -1
        if mode == REL_FLOOR and self.spec.params != GAINS:
            return 0
        return relevance_level

    def gain_overrides(self, judged: list[int]) -> dict[int, float]:
        """Custom gains per grade: the given ``gains`` (the first one of a level), over gain 0
        for the judged grades below ``rel`` (a gain-family floor). The nDCG family applies
        them through trec_eval's gain list (:mod:`fasteval.measures.gains`).

        Examples
        --------
        >>> from fasteval import parse_measure
        >>> parse_measure("ndcg(rel=2)").gain_overrides([0, 1, 2, 3])
        {0: 0.0, 1: 0.0}
        >>> parse_measure("ndcg.1=5").gain_overrides([0, 1, 2])
        {1: 5.0}
        """
        out: dict[int, float] = {}
        for lv, g in self.gains or ():
            out.setdefault(lv, g)
        gain_family = self.spec.params == GAINS or self.gains is not None
        if self.rel is not None and gain_family and self.spec.rel == REL_FLOOR:
            floor = {lv: 0.0 for lv in judged if lv < self.rel}
            out = floor | out
        return out

    @property
    def aggregation(self) -> str:
        """``"mean"``, ``"sum"`` or ``"gm"``."""
        return self.spec.agg

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Measure({self.name!r})"


def _num(x: float) -> str:
    """A number as it parses back (``5`` for 5.0, ``0.25``)."""
    text = repr(float(x))
    return text.removesuffix(".0") if "e" not in text else text


def _number(value: object, what: str) -> float:
    """``value`` as a finite float (a Python or numpy number; not text, not a bool)."""
    out = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
    if not math.isfinite(out):
        raise ParameterError(what, "a finite number", value)
    return out


def _normal_numbers(m: Measure) -> None:
    """``param``, ``vector`` and ``gains`` as the floats (and integer levels) the name and
    the kernels use, in tuples (a list of gains made the measure unhashable)."""
    if m.param is not None:
        object.__setattr__(m, "param", _number(m.param, f"{m.family}'s parameter"))
    if m.vector is not None:
        if isinstance(m.vector, (str, bytes)):
            raise ParameterError(f"{m.family}'s vector", "a list of numbers", m.vector)
        object.__setattr__(m, "vector", tuple(_number(v, f"{m.family}'s vector")
                                              for v in m.vector))
    if m.gains is not None:
        pairs = []
        for pair in m.gains:
            try:
                level, gain = pair
                level = None if isinstance(level, bool) else operator.index(level)
            except (TypeError, ValueError):
                level = None
            if level is None:
                raise ParameterError(f"{m.family}'s gains", "(integer level, number) pairs",
                                     m.gains)
            pairs.append((level, _number(gain, f"{m.family}'s gains")))
        object.__setattr__(m, "gains", tuple(pairs))


def _check_fields(m: Measure, spec: Family) -> None:
    """Refuse parameters that ``m``'s family does not take (``Measure("map", param=0.5)``
    was named ``map`` and compared unequal to it)."""
    kind = spec.params
    unset = "unset: the family takes none"
    if kind == FLOAT_CUTS and m.param is None:
        raise ParameterError(f"{m.family}'s fraction", f"a number ({m.family}@0.5)", None)
    if m.param is not None and kind not in (FLOAT_CUTS, FLOAT) and spec.param is None:
        raise ParameterError(f"{m.family}'s parameter", unset, m.param)
    if m.vector is not None and (kind != VECTOR or not m.vector):
        raise ParameterError(f"{m.family}'s vector", "a non-empty list of numbers"
                             if kind == VECTOR else unset, m.vector)
    if m.gains is not None and kind != GAINS and m.family != "ndcg_cut":
        raise ParameterError(f"{m.family}'s gains", unset, m.gains)
    if m.text is not None and kind not in (VECTOR, GAINS, FLOAT, LENGTH):
        raise ParameterError(f"{m.family}'s text", unset, m.text)


_LEADING_NUMBER = re.compile(r"\s*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _leading(item: str) -> float | None:
    """The number ``item`` starts with, as C's ``atof`` reads it (None: no number)."""
    m = _LEADING_NUMBER.match(item)
    return None if m is None else float(m.group(0))


def _name_the_parameters(m: Measure, spec: Family) -> None:
    """Give a member of a family named by its parameter text (``set_F_0.5``,
    ``utility_1,-1,0,0``, ``ndcg_1=5``, ``rbp_p=0.5``, ``relstring_20``) the text of
    parameters set without one, so that its name tells it from the family's default;
    refuse a text that names other parameters than the member has."""
    kind = spec.params
    if m.text is None:
        text = None
        if kind == FLOAT and m.param != float(spec.default[0]):
            text = _num(m.param)
        elif kind == LENGTH and m.cutoff != int(spec.default[0]):
            text = str(m.cutoff)
        elif (kind == VECTOR and m.vector is not None
              and tuple(m.vector) != tuple(float(v) for v in spec.default)):
            text = ",".join(_num(v) for v in m.vector)
        elif kind == GAINS and (m.gains or m.param is not None):
            items = [f"p={_num(m.param)}"] if m.param is not None else []
            items += [f"{lv}={_num(g)}" for lv, g in m.gains or ()]
            text = ",".join(items)
        if text is not None:
            object.__setattr__(m, "text", text)
        return
    if kind == GAINS:
        return
    read = [_leading(t) for t in m.text.split(",")]
    if kind == FLOAT:
        agrees = read[0] is not None and read[0] == m.param
    elif kind == LENGTH:
        agrees = read[0] is not None and int(read[0]) == m.cutoff
    else:
        agrees = m.vector is not None and tuple(read) == tuple(m.vector)
    if not agrees:
        value = {FLOAT: m.param, LENGTH: m.cutoff}.get(kind, m.vector)
        raise ParameterError(f"{m.family}'s text", "the parameters the measure has "
                             f"({value!r})", m.text)


def _normal_options(spec: Family, options) -> tuple[tuple[str, float], ...]:
    """Options checked against the family, defaults left out, in the family's order."""
    given: dict[str, float] = {}
    for key, value in dict(options).items():
        opt = spec.option(key)
        if opt is None:
            allowed = ", ".join(o.name for o in spec.options) or "none"
            raise ParameterError(f"{spec.key}'s option", f"one of: {allowed}", key)
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ParameterError(f"{spec.key}'s {opt.name}", opt.constraint, value) from None
        if value != value or value in (float("inf"), float("-inf")):
            raise ParameterError(f"{spec.key}'s {opt.name}", opt.constraint, value)
        opt.check(spec.key, value)
        given[opt.name] = value
    out = tuple((o.name, given[o.name]) for o in spec.options
                if o.name in given and (o.required or given[o.name] != o.default))
    for o in spec.options:  # declared orderings between options (max_rel above min_rel)
        if o.above is None or o.name not in given:
            continue
        low = spec.option(o.above)
        floor = given.get(o.above, low.default if low is not None else math.nan)
        if not given[o.name] > floor:
            what = "an integer" if o.integer else "a number"
            raise ParameterError(f"{spec.key}'s {o.name}", f"{what} > {o.above} ({floor:g})",
                                 _g_value(given[o.name], o.integer))
    return out


def _g_value(value: float, integer: bool) -> float | int:
    """``value`` as the user wrote it: an integer option's whole number as an int."""
    return int(value) if integer and value == int(value) else value
