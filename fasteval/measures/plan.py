"""The plan of a score pass: measures turned into the typed arrays the kernels read.

:func:`plan_slots` reads everything from the registry (each family's code, profile,
parameter default and needs), so a new family needs no line here. The kernels take the
:class:`Plan` as one argument (a named tuple of arrays and numbers, which numba passes
as a struct: no boxing cost per call, one type for its cache).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from fasteval.errors import ParameterError, UnknownMeasureError
from fasteval.measures.gains import ideal_order, results_gains
from fasteval.measures.measure import Measure
from fasteval.measures.registry import (
    BY_KEY,
    GAINS,
    NEEDS_LEVELS,
    NEEDS_MAX_GRADE,
    NEEDS_WORK,
    PROFILE_DCG,
    PROFILE_MODEL,
    PROFILE_REL,
    PROFILE_REL_FULL,
    REL_BINARY,
    VECTOR,
)

MODE_FAMILY = 0
"""A slot answered by its family's kernel function (``ranking._one``)."""
MODE_REL = 1
"""A slot read off the relevance profile (running relevant count and precision sum)."""
MODE_DCG = 2
"""A slot read off the running DCG profiles (of the ranking and of the ideal one)."""
MODE_MODEL = 3
"""A slot answered by a user-model function of :mod:`fasteval.kernels.cwl` (C/W/L measures,
Compatibility): compiled into the score pass only when a plan has such a slot."""
FULL = -1
"""Profile depth: the whole ranking."""

_MODES = {PROFILE_REL: MODE_REL, PROFILE_REL_FULL: MODE_REL, PROFILE_DCG: MODE_DCG,
          PROFILE_MODEL: MODE_MODEL}


class Plan(NamedTuple):
    """Per-slot parameters of one score pass (slot ``j`` = the ``j``-th measure).

    Attributes
    ----------
    codes : int64[m]
        Family code (:class:`fasteval.measures.registry.Code`).
    modes : int64[m]
        :data:`MODE_FAMILY`, :data:`MODE_REL`, :data:`MODE_DCG` or :data:`MODE_MODEL`.
    cuts : int64[m]
        Rank cutoff (0: none; a huge one for an optional cutoff left out).
    params : float64[m]
        The family's number (``p``, ``beta``, a recall fraction), its default if unset.
    levels : int64[m]
        Relevance level (see :meth:`fasteval.measures.Measure.level`).
    vec, voff : float64[], int64[m + 1]
        Vector parameters (``utility``, ``11pt_avg``) of slot j: ``vec[voff[j]:voff[j+1]]``.
    cl, cv, coff : int64[], float64[], int64[m + 1]
        Custom gains (level, gain) of slot j: ``[coff[j]:coff[j+1]]``.
    ol, og, ooff : int64[], float64[], int64[m + 1]
        The ideal ranking's levels, with their gains, of slot j: ``[ooff[j]:ooff[j+1]]``,
        sorted by gain, descending, or one such order per largest grade
        (:func:`fasteval.measures.gains.ideal_order`).
    rel_depth, dcg_depth : int
        How deep the relevance / DCG profiles go: the deepest cutoff asked, :data:`FULL`
        for the whole ranking, 0 when no slot reads that profile.
    compat : int
        10 or 9 (trec_eval version rules for recall-point rounding).
    ndocs : float
        Collection size (trec_eval ``-N``), used by ``utility``.
    work : int
        1 when a slot's family needs per-thread scratch as long as the longest ranking or
        judgment list (``NEEDS_WORK``), else 0.
    """

    codes: np.ndarray
    modes: np.ndarray
    cuts: np.ndarray
    params: np.ndarray
    levels: np.ndarray
    vec: np.ndarray
    voff: np.ndarray
    cl: np.ndarray
    cv: np.ndarray
    coff: np.ndarray
    ol: np.ndarray
    og: np.ndarray
    ooff: np.ndarray
    rel_depth: int
    dcg_depth: int
    compat: int
    ndocs: float
    work: int = 0

    @property
    def generic(self) -> bool:
        """Whether some slot needs its family's kernel function (no profile answers it)."""
        return bool((self.modes == MODE_FAMILY).any())

    @property
    def model(self) -> bool:
        """Whether some slot needs a user-model function (:data:`MODE_MODEL`)."""
        return bool((self.modes == MODE_MODEL).any())


def needs(measures: Iterable[Measure]) -> frozenset[str]:
    """What the measures' kernels need from the qrels (union of the families' ``needs``).

    Examples
    --------
    >>> from fasteval.measures import parse_measures
    >>> sorted(needs(parse_measures(["ndcg", "P@5"])))
    ['levels']
    """
    out: set[str] = set()
    for m in measures:
        out |= BY_KEY[m.family].needs
        if m.gains:  # custom gains order the ideal ranking by gain (nDCG(gains=...)@k)
            out.add(NEEDS_LEVELS)
    return frozenset(out)


def plan_slots(measures: list[Measure], relevance_level: int = 1,
               grades: Iterable[int] | int = (), *, compat: int = 10,
               num_docs: float = 0.0) -> Plan:
    """Turn measures into the :class:`Plan` of :func:`fasteval.kernels.ranking.score_queries`.

    Parameters
    ----------
    measures : list of Measure
        The slots, in output order.
    relevance_level : int
        Level of the measures that do not set their own ``rel``.
    grades : iterable of int, or int
        The distinct judged grades (>= 0) of the qrels
        (:meth:`fasteval.prepare.PreparedQrels.judged_levels`), or the largest grade, meaning
        every grade from 0 to it; needed by families that declare ``needs`` (see
        :func:`needs`). The gain measures' ideal order lists only these grades and the
        levels of custom gains: its size (and the kernels' walk through it) follows the
        number of distinct grades, not the largest one. Levels absent from a query's
        judgments are skipped by the kernel, so both spellings give the same values.
    compat, num_docs : see :class:`Plan`.

    Raises
    ------
    UnknownMeasureError
        A family that no kernel computes (never a silent NaN).
    ParameterError
        A grade above what a family allows (``NEEDS_MAX_GRADE``).

    Examples
    --------
    >>> from fasteval.measures import parse_measures
    >>> plan = plan_slots(parse_measures(["ndcg"]), 1, [0, 1, 10**12])
    >>> plan.ol.tolist(), plan.og.tolist()
    ([1000000000000, 1, 0], [1000000000000.0, 1.0, 0.0])
    >>> plan_slots(parse_measures(["P@5", "map@100"])).rel_depth
    100
    """
    from fasteval.kernels.ranking import implemented_codes

    if isinstance(grades, (int, np.integer)):
        grades = range(int(grades) + 1)
    judged = [int(g) for g in grades]
    done = implemented_codes()
    m = len(measures)
    codes = np.zeros(m, dtype=np.int64)
    modes = np.zeros(m, dtype=np.int64)
    cuts = np.zeros(m, dtype=np.int64)
    params = np.zeros(m, dtype=np.float64)
    levels = np.zeros(m, dtype=np.int64)
    vec: list[float] = []
    voff = [0]
    cl: list[int] = []
    cv: list[float] = []
    coff = [0]
    ol: list[int] = []
    og: list[float] = []
    ooff = [0]
    rel_depth = 0
    dcg_depth = 0
    work = 0
    for j, meas in enumerate(measures):
        fam = BY_KEY[meas.family]
        if fam.code not in done:
            raise UnknownMeasureError(
                f"measure {meas.name!r} has no kernel (family {fam.key!r}, code {fam.code})")
        codes[j] = fam.code
        modes[j] = mode = _MODES.get(fam.profile, MODE_FAMILY)
        if meas.gains and mode == MODE_DCG:  # custom gains: the family function
            modes[j] = mode = MODE_FAMILY
        if fam.rel == REL_BINARY and meas.rel is not None:  # RBP(rel=k): C/W/L's
            modes[j] = mode = MODE_MODEL
        if NEEDS_WORK in fam.needs:
            work = 1
        meas.check_options()
        cuts[j] = meas.depth
        levels[j] = meas.level(relevance_level)
        if meas.param is not None:
            params[j] = meas.param
        elif fam.param is not None:
            params[j] = fam.param.default
        if mode == MODE_REL:
            full = fam.profile == PROFILE_REL_FULL or rel_depth == FULL
            rel_depth = FULL if full else max(rel_depth, int(cuts[j]))
        elif mode == MODE_DCG:
            dcg_depth = max(dcg_depth, int(cuts[j]))
        if NEEDS_MAX_GRADE in fam.needs and judged and max(judged) > params[j]:
            raise ParameterError(f"{meas.name}'s {fam.param.name if fam.param else 'maximum'}",
                                 f">= the largest grade in the qrels ({max(judged)})",
                                 params[j])
        if fam.params == VECTOR:
            vec.extend(meas.vector or fam.default)
        elif fam.options:  # in the family's order, defaults filled in
            vec.extend(meas.option(o.name) for o in fam.options)
        voff.append(len(vec))
        custom = meas.gain_overrides(judged)
        ideal = (fam.params == GAINS and NEEDS_LEVELS in fam.needs) or bool(meas.gains)
        if ideal:  # trec_eval's gain list (see fasteval.measures.gains)
            typed = list(meas.gains or ())
            named = {lv for lv, _ in typed}
            typed += [(lv, g) for lv, g in sorted(custom.items()) if lv not in named]  # rel floor
            custom = results_gains(typed, judged)
            levels_j, gains_j = ideal_order(typed, judged)
            ol.extend(levels_j)
            og.extend(gains_j)
        for lv, g in custom.items():
            cl.append(lv)
            cv.append(g)
        coff.append(len(cl))
        ooff.append(len(ol))
    return Plan(
        codes=codes,
        modes=modes,
        cuts=cuts,
        params=params,
        levels=levels,
        vec=np.asarray(vec, dtype=np.float64),
        voff=np.asarray(voff, dtype=np.int64),
        cl=np.asarray(cl, dtype=np.int64),
        cv=np.asarray(cv, dtype=np.float64),
        coff=np.asarray(coff, dtype=np.int64),
        ol=np.asarray(ol, dtype=np.int64),
        og=np.asarray(og, dtype=np.float64),
        ooff=np.asarray(ooff, dtype=np.int64),
        rel_depth=int(rel_depth),
        dcg_depth=int(dcg_depth),
        compat=int(compat),
        ndocs=float(num_docs),
        work=work,
    )
