"""The documentation: generated parts equal to their generator, a short README whose
Quickstart CI can run, links that lead somewhere, install lines that work from a clone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from fasteval import _docs

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, ROOT / "DEVELOPING.md", *sorted((ROOT / "docs").glob("*.md"))]
REGENERATE = "run `python -m fasteval._docs` in the repository root and commit the result"

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"(?ms)^\s*```.*?^\s*```")


def _prose(text: str) -> str:
    """Markdown without its code blocks and code spans (links there are not links)."""
    return re.sub(r"`[^`\n]*`", "", _FENCE.sub("", text))


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for m in re.finditer(r"(?m)^#{1,6}\s+(.*?)\s*#*\s*$", text):
        slug = _slug(m.group(1))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_generated_parts_are_current() -> None:
    stale = _docs.regenerate(ROOT, check=True)
    assert stale == [], f"generated documentation is stale ({', '.join(stale)}): {REGENERATE}"


def test_generated_parts_are_present() -> None:
    text = {p.name: p.read_text(encoding="utf-8") for p in PAGES}
    for page, part in (("measures.md", "measures"), ("cli.md", "cli")):
        assert f"<!-- BEGIN GENERATED: {part} -->" in text[page], (
            f"docs/{page} lacks its generated {part} part")
    # each table is made once, from the code, never pasted into a second page
    for part in _docs.PARTS:
        where = [n for n, t in text.items() if f"<!-- BEGIN GENERATED: {part} -->" in t]
        assert len(where) == 1, (part, where)


def test_generated_reference_covers_every_command_and_family() -> None:
    from fasteval.cli import SUBCOMMANDS
    from fasteval.measures.registry import FAMILIES

    cli = _docs.cli_part()
    for name in SUBCOMMANDS:
        assert f"## `fasteval {name}`" in cli, name
    assert "### `fasteval datasets synth`" in cli
    assert "| `--memory-limit` | `SIZE` |" in cli
    assert len(_docs.measures_part().splitlines()) == len(FAMILIES) + 2


def test_regenerate_command(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "m.md"
    page.parent.mkdir()
    page.write_text("x\n<!-- BEGIN GENERATED: measures -->\nold\n<!-- END GENERATED: measures -->\ny\n")
    run = [sys.executable, "-m", "fasteval._docs"]
    check = subprocess.run([*run, "--check", str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 1 and "stale: docs/m.md: measures" in check.stdout
    assert subprocess.run([*run, str(tmp_path)], capture_output=True).returncode == 0
    text = page.read_text()
    assert text.startswith("x\n<!-- BEGIN GENERATED: measures -->\n| measure |")
    assert text.endswith("<!-- END GENERATED: measures -->\ny\n")
    assert subprocess.run([*run, "--check", str(tmp_path)]).returncode == 0


def test_unknown_part_is_refused(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("<!-- BEGIN GENERATED: nope -->\n<!-- END GENERATED: nope -->\n")
    with pytest.raises(ValueError, match="unknown generated part 'nope'"):
        _docs.regenerate(tmp_path, check=True)


def test_readme_is_short_and_keeps_the_quickstart() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250, "README.md is over 250 lines: move detail to docs/"
    # .ci/run runs line 2 of the Quickstart's first code block as the test command
    m = re.search(r"(?ms)^## Quickstart\n.*?^```\w*\n(.*?)^```", text)
    assert m is not None, "README lacks a ## Quickstart code block"
    lines = [line for line in m.group(1).splitlines() if line.strip()]
    assert len(lines) == 2, lines
    assert lines[0].startswith("pip install . && fasteval eval datasets/trec/")
    assert "pytest" in lines[1]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_lead_somewhere(page: Path) -> None:
    broken = []
    for target in _LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target} (no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest})")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no heading #{anchor} in {dest.name})")
    assert broken == [], f"{page.relative_to(ROOT)}: broken links: {broken}"


def test_docs_link_every_page() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    for page in (ROOT / "docs").glob("*.md"):
        if page.name != "index.md":
            assert f"({page.name})" in index, f"docs/index.md does not link {page.name}"
            assert f"(docs/{page.name})" in readme, f"README.md does not link docs/{page.name}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_install_lines_work_from_a_clone(page: Path) -> None:
    """fasteval is not on a package index: extras are installed from the clone,
    ``pip install ".[sas]"``, never ``pip install "fasteval[sas]"``. Generated parts count
    too: they quote the commands' help texts (fix those in ``fasteval/cli``, regenerate)."""
    bad = [line.strip() for line in page.read_text(encoding="utf-8").splitlines()
           if re.search(r"pip install\b.*\bfasteval\[|pip install\s+['\"]?fasteval\b", line)]
    assert bad == [], f"{page.relative_to(ROOT)}: install lines that need a package index: {bad}"
