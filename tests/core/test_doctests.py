"""The runnable examples in the core modules' docstrings."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "fasteval", "fasteval.errors", "fasteval.io.atomic", "fasteval.measures.measure",
    "fasteval.measures.parser", "fasteval.prepare", "fasteval.evaluation",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
