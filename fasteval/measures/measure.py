"""The :class:`Measure` value: a family plus its parameters, with one canonical name."""

from __future__ import annotations

from dataclasses import dataclass

from fasteval.measures.registry import (
    FLOAT,
    FLOAT_CUTS,
    GAINS,
    INT_CUTS,
    LENGTH,
    NONE,
    VECTOR,
    Family,
    family,
)


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
        Relevance level for this measure, overriding the evaluation's ``relevance_level``.
    text : str, optional
        Parameter text as written in trec_eval's ``-m name.params`` (part of the name).

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
    """

    family: str
    cutoff: int | None = None
    param: float | None = None
    vector: tuple[float, ...] | None = None
    gains: tuple[tuple[int, float], ...] | None = None
    rel: int | None = None
    text: str | None = None

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
        if kind == FLOAT_CUTS:
            return f"{self.family}_{self.param:.2f}"
        if kind in (VECTOR, GAINS, FLOAT, LENGTH):
            return self.family if self.text is None else f"{self.family}_{self.text}"
        raise AssertionError(kind)  # pragma: no cover - registry invariant

    @property
    def name(self) -> str:
        """Canonical name (round-trips through :func:`fasteval.parse_measure`)."""
        base = self.base_name
        return base if self.rel is None else f"{base}(rel={self.rel})"

    @property
    def aggregation(self) -> str:
        """``"mean"``, ``"sum"`` or ``"gm"``."""
        return self.spec.agg

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Measure({self.name!r})"
