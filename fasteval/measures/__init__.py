"""Measures: the registry of families, the :class:`Measure` value and the name parser."""

from fasteval.measures.measure import Measure
from fasteval.measures.parser import (
    known_names,
    parse_labelled,
    parse_measure,
    parse_measures,
    trec_order,
)
from fasteval.measures.registry import BY_KEY, FAMILIES, Family

__all__ = [
    "BY_KEY",
    "FAMILIES",
    "Family",
    "Measure",
    "known_names",
    "parse_labelled",
    "parse_measure",
    "parse_measures",
    "trec_order",
]
