"""Fail when an installed direct dependency is not the version a new user would get.

A new user's ``pip install ".[dev]"`` resolves every requirement to the newest release
``pyproject.toml`` allows; a machine that installed earlier keeps what it has, so a suite
can pass here and fail there. This asks pip what it would install now
(``pip install --dry-run --upgrade --upgrade-strategy eager --report``) and lists each
direct dependency (the base requirements and the ``dev`` extra) whose installed version
differs. torch is held at the installed build, or the README's, (``-c``): its newest
release on an index is a CUDA build of several GB, and the README installs a chosen build
first.

    python .ci/drift.py            # exit 1 with the list when something differs
    python .ci/drift.py --upgrade  # first install the newest allowed versions, then check
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements() -> list[str]:
    """The base requirements and those of the ``dev`` extra, as ``pyproject.toml`` writes
    them (the project itself is left out: an editable install stays editable)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return list(project["dependencies"]) + list(project["optional-dependencies"]["dev"])


def direct_dependencies() -> set[str]:
    """Canonical names of :func:`requirements`."""
    return {_canon(re.match(r"[A-Za-z0-9_.\-]+", r.strip()).group(0)) for r in requirements()}


def _constraints(tmp: Path) -> list[str]:
    """``-c file`` holding torch at its installed version, or when it is absent at the
    version the README's Quickstart installs."""
    try:
        version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        pinned = re.search(r"torch==([0-9][0-9A-Za-z.+]*)", (ROOT / "README.md").read_text())
        if pinned is None:
            return []
        version = pinned.group(1)
    path = tmp / "constraints.txt"
    path.write_text(f"torch=={version}\n")
    return ["-c", str(path)]


def _pip(args: list[str]) -> None:
    cmd = [sys.executable, "-m", "pip", *args]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"drift: {' '.join(cmd)} failed ({done.returncode})")


def resolved(tmp: Path) -> dict[str, str]:
    """What pip would install now for ``.[dev]``'s requirements: canonical name -> version."""
    report = tmp / "report.json"
    _pip(["install", "--dry-run", "--upgrade", "--upgrade-strategy", "eager", "--quiet",
          "--report", str(report), *_constraints(tmp), *requirements()])
    items = json.loads(report.read_text())["install"]
    return {_canon(i["metadata"]["name"]): i["metadata"]["version"] for i in items}


def drift(tmp: Path) -> list[str]:
    """``name installed -> newest`` for each direct dependency pip would change."""
    wanted = resolved(tmp)
    lines = []
    for name in sorted(direct_dependencies() & wanted.keys()):
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = "not installed"
        if have != wanted[name]:
            lines.append(f"{name} {have} -> {wanted[name]}")
    return lines


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "--upgrade" in argv:
            _pip(["install", "--upgrade", "--upgrade-strategy", "eager", "--quiet",
                  *_constraints(tmp), *requirements()])
        lines = drift(tmp)
    if lines:
        print("drift: installed direct dependencies differ from what a new user gets:")
        print("\n".join(f"  {line}" for line in lines))
        return 1
    print(f"drift: none ({len(direct_dependencies())} direct dependencies checked)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
