"""The ``>>>`` examples of the README and of the pages in ``docs/`` run and print what
they say."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

import fasteval

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _examples(page: Path) -> doctest.DocTest:
    # a code fence closes an example's expected output, as a blank line does for doctest
    text = re.sub(r"(?m)^\s*```.*$", "", page.read_text(encoding="utf-8"))
    name = page.relative_to(ROOT).as_posix()
    return doctest.DocTestParser().get_doctest(text, {"fasteval": fasteval}, name, str(page), 0)


def test_the_docs_hold_examples() -> None:
    counts = {p.name: len(_examples(p).examples) for p in PAGES}
    assert counts["measures.md"] > 0 and counts["fusion.md"] > 0, counts


@pytest.mark.parametrize("page", [p for p in PAGES if _examples(p).examples],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_examples(page: Path) -> None:
    test = _examples(page)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {test.name} failed"
