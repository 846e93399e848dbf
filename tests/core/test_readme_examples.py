"""The README's ``>>>`` examples run and print what the README says."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import fasteval

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_examples() -> None:
    # a code fence closes an example's expected output, as a blank line does for doctest
    text = re.sub(r"(?m)^\s*```.*$", "", README.read_text(encoding="utf-8"))
    test = doctest.DocTestParser().get_doctest(text, {"fasteval": fasteval}, "README.md",
                                               str(README), 0)
    assert test.examples, "README.md holds no >>> example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} README examples failed"
