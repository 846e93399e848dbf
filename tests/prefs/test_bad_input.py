"""Preference judgments and runs given as tables: text that is not a number is an
InputError naming the table, row and column (it was polars' InvalidOperationError)."""

from __future__ import annotations

import polars as pl
import pytest

import fasteval
from fasteval.errors import InputError

PREFS = pl.DataFrame({"query_id": ["q1", "q1"], "jg": ["1", "1"], "jsg": ["1", "1"],
                      "doc_id": ["d1", "d2"], "rel_level": [2.0, 1.0]})
RUN = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]})


def _value(rows, measure):
    return next(v for m, q, v in rows if m == measure and q == "q1")


def test_text_rel_level_is_an_input_error() -> None:
    bad = PREFS.with_columns(pl.Series("rel_level", ["2", "high"]))
    with pytest.raises(InputError, match=r"judgments, row 1, column 'rel_level': 'high' is not a "
                                         "number"):
        fasteval.evaluate_prefs(bad, RUN, mode="prefs")


def test_text_score_is_an_input_error() -> None:
    bad = RUN.with_columns(pl.Series("score", ["2.0", "abc"]))
    with pytest.raises(InputError, match=r"run, row 1, column 'score': 'abc' is not a number"):
        fasteval.evaluate_prefs(PREFS, bad, mode="prefs")


def test_numeric_text_reads_as_numbers() -> None:
    text = fasteval.evaluate_prefs(PREFS.with_columns(pl.col("rel_level").cast(pl.Utf8)),
                                   RUN.with_columns(pl.col("score").cast(pl.Utf8)), mode="prefs")
    # d1 (preferred) above d2: the one preference is fulfilled
    assert _value(text, "prefs_simp") == 1.0
    assert text == fasteval.evaluate_prefs(PREFS, RUN, mode="prefs")
