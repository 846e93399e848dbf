"""Preference-judgment evaluation (trec_eval ``-R prefs`` / ``-R qrels_prefs``, ``-m all_prefs``).

Examples
--------
>>> from fasteval.prefs import PREFS_MEASURES
>>> PREFS_MEASURES[:3]
('prefs_num_prefs_poss', 'prefs_num_prefs_ful', 'prefs_num_prefs_ful_ret')
"""

from fasteval.prefs.evaluate import (
    ALL_PREFS,
    PLACEHOLDER_DOCNO,
    PREFS_COUNT_MEASURES,
    PREFS_MEASURES,
    PREFS_OFFICIAL,
    evaluate_prefs,
    evaluate_prefs_table,
    format_trec_lines,
)
from fasteval.prefs.readers import judgments_from_frame, read_prefs, read_qrels_prefs

__all__ = [
    "ALL_PREFS",
    "PLACEHOLDER_DOCNO",
    "PREFS_COUNT_MEASURES",
    "PREFS_MEASURES",
    "PREFS_OFFICIAL",
    "evaluate_prefs",
    "evaluate_prefs_table",
    "format_trec_lines",
    "judgments_from_frame",
    "read_prefs",
    "read_qrels_prefs",
]
