"""DEVELOPING.md's "Adding a measure" walk, done: its three edits (a registry row, a kernel
branch, a reference row) in a copy of the package add a measure that evaluates; a row naming
the wrong kernel path fails when the kernels are imported, naming what to fix.

The copies run with numba's JIT disabled (nothing compiles: the kernels run as Python).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ROW = '''    Family("first_rel", 64, NONE, sets=_X, bounded=False, trec=({path},),
           doc="Rank of the first relevant document (0: none retrieved)."),
'''
BRANCH = '''    if code == Code.FIRST_REL:
        return first + 1.0 if first >= 0 else 0.0
'''
REFERENCE = '''    "first_rel": (Ref("hand", test="tests/core/test_add_a_measure.py"),),
'''

CHECK = '''
import json
import fasteval
from fasteval.errors import ParameterError
from fasteval.measures import FAMILIES
from _references import REFERENCES

assert fasteval.__file__.startswith(sys.argv[1]), fasteval.__file__
assert set(REFERENCES) == {f.key for f in FAMILIES}  # test_references' first check
qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1}, "q3": {"z": 2, "w": 0}}
run = {"q1": {"b": 3.0, "a": 2.0, "c": 1.0}, "q2": {"y": 1.0},
       "q3": {"w": 2.0, "v": 1.5, "z": 1.0}}
res = fasteval.evaluate(qrels, run, ["first_rel", "first_rel(rel=2)", "RR"])
got = {(r["query_id"], r["measure"]): r["value"] for r in res.to_dicts()}
refused = ""
try:
    fasteval.evaluate(qrels, run, ["first_rel"], tie_break="expected")
except ParameterError as exc:
    refused = str(exc)
print(json.dumps([sorted(map(list, got.items())), refused]))
'''


def _package(tmp: Path, path: str, branch_in: str) -> Path:
    """A copy of fasteval and the reference table with the walk's three edits; the row
    declares ``trec=(path,)`` and the branch goes in ``ranking.<branch_in>``."""
    shutil.copytree(ROOT / "fasteval", tmp / "fasteval",
                    ignore=shutil.ignore_patterns("__pycache__"))
    registry = tmp / "fasteval" / "measures" / "registry.py"
    text = registry.read_text()
    end = text.index("\n)\n\nBY_KEY")
    registry.write_text(text[:end + 1] + ROW.format(path=path) + text[end + 1:])
    ranking = tmp / "fasteval" / "kernels" / "ranking.py"
    text = ranking.read_text()
    body = text.index(f"def {branch_in}(")
    at = text.index("\n    return np.nan\n", body) + 1
    ranking.write_text(text[:at] + BRANCH + text[at:])
    refs = (ROOT / "tests" / "core" / "_references.py").read_text()
    end = refs.rindex("\n}\n")
    (tmp / "_references.py").write_text(refs[:end + 1] + REFERENCE + refs[end + 1:])
    return tmp


def _run(tmp: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "FASTEVAL_QUIET": "1",
           "PYTHONPATH": str(tmp)}
    return subprocess.run([sys.executable, "-c", "import sys\n" + CHECK, str(tmp)], env=env,
                          cwd=tmp, capture_output=True, text=True, timeout=300)


def test_the_three_edits_add_a_measure(tmp_path):
    import json

    done = _run(_package(tmp_path, "_RF", "_from_rel_profile"))
    assert done.returncode == 0, done.stderr
    values, refused = json.loads(done.stdout.splitlines()[-1])
    got = {tuple(key): value for key, value in values}
    # q1: b (0), a (1), c (2); q2: nothing relevant retrieved; q3: w (0), v (unjudged), z (2)
    assert got[("q1", "first_rel")] == 2.0 and got[("q1", "first_rel(rel=2)")] == 3.0
    assert got[("q2", "first_rel")] == 0.0 and got[("q3", "first_rel")] == 3.0
    for q in ("q1", "q3"):  # 1 / RR where something relevant is retrieved
        assert got[(q, "first_rel")] == 1.0 / got[(q, "RR")]
    assert "first_rel" in refused and "tie_break='expected'" in refused


def test_a_row_naming_the_wrong_path_fails_at_import(tmp_path):
    # the row says "read off the relevance profile", the branch went into the family function
    done = _run(_package(tmp_path, "_RF", "_one"))
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: measure registry: first_rel declares the trec path "
                           "'rel_full', but fasteval.kernels.ranking._from_rel_profile has no "
                           "branch on Code.FIRST_REL"), done.stderr
