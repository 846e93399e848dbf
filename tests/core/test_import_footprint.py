"""What a fresh process loads: `import fasteval` and everyday small jobs stay off heavy modules.

Each case runs in a subprocess (a fresh ``sys.modules``) and lists the modules it loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests._data import SHIPPED_TREC

QRELS = str(SHIPPED_TREC / "qrels.test")
RUN = str(SHIPPED_TREC / "results.test")

# never needed to score a small TREC job: optional extras, other commands' packages, the
# progress renderer (a short job draws nothing) and the engine for clusters
HEAVY = (
    "tqdm", "scipy.stats", "pandas", "matplotlib", "torch", "transformers",
    "sentence_transformers", "haystack", "httpx", "ray", "pytrec_eval", "ranx",
    "fasteval.compare", "fasteval.sas", "fasteval.judge", "fasteval.evaluators",
    "fasteval.fusion", "fasteval.prefs", "fasteval.datasets", "fasteval.batch.ray_engine",
)


def _loaded(code: str) -> set[str]:
    """Modules loaded by ``code`` in a fresh interpreter (after it ran)."""
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)), file=sys.__stdout__)\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _under(mods: set[str], prefixes) -> list[str]:
    return sorted(m for m in mods if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_import_fasteval_loads_only_the_lazy_package():
    mods = _loaded("import fasteval")
    assert _under(mods, ["fasteval"]) == ["fasteval", "fasteval._lazy"]
    assert not _under(mods, ["polars", "numba", "numpy", "pyarrow", *HEAVY])


@pytest.mark.parametrize("command", [
    ["eval", QRELS, RUN, "-m", "ndcg@10", "-m", "map", "--quiet"],
    ["eval", QRELS, RUN, "-m", "P@5", "-q", "--format", "trec"],
    ["trec-eval", "-m", "map", QRELS, RUN],
], ids=["eval", "eval-per-query", "trec-eval"])
def test_small_jobs_load_nothing_heavy(command):
    code = ("import contextlib, io\nfrom fasteval.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main({command!r}) == 0")
    mods = _loaded(code)
    assert not _under(mods, HEAVY)
    if command[0] == "trec-eval":  # scored in memory: nothing of the out-of-core driver
        assert not _under(mods, ["fasteval.batch"])
    else:  # the driver the command runs on, without the rest of the package
        assert _under(mods, ["fasteval.batch"]) == [
            "fasteval.batch", "fasteval.batch.api", "fasteval.batch.discover",
            "fasteval.batch.driver", "fasteval.batch.sinks", "fasteval.batch.warm"]


def test_jobs_import_no_pyarrow(tmp_path):
    """polars reads the files and exports its string views (the Arrow C stream interface):
    neither a TREC text job nor a parquet job imports pyarrow (50-60 ms of every start)."""
    import polars as pl

    qrels = tmp_path / "q.parquet"
    run = tmp_path / "r.parquet"
    pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "a doc id past twelve bytes", "d3"],
                  "relevance": [1, 0, 2]}).write_parquet(qrels)
    pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "a doc id past twelve bytes", "d9"],
                  "score": [2.0, 1.0, 0.5]}).write_parquet(run)
    for command in (["eval", QRELS, RUN, "-m", "ndcg@10", "--quiet"],
                    ["eval", str(qrels), str(run), "-m", "ndcg@10", "--no-qrels-cache", "--quiet"]):
        code = ("import contextlib, io\nfrom fasteval.cli import main\n"
                f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main({command!r}) == 0")
        mods = _loaded(code)
        assert "fasteval.kernels.ranking" in mods  # the job did score
        assert not _under(mods, ["pyarrow"]), command


def test_the_command_skips_numbas_probes_only(tmp_path):
    """Under ``configure_process`` (the ``fasteval`` command) numba's import-time probes do not
    import scipy or yaml; other imports of them work, and yaml is imported for numba when a
    ``.numba_config.yaml`` is there to read."""
    code = ("import fasteval.runtime, sys\nfasteval.runtime.configure_process()\nimport numba\n"
            "print(sorted(m for m in ('scipy', 'yaml') if m in sys.modules))\n"
            "import scipy, yaml\nprint('imported', scipy.__name__, yaml.__name__)\n")
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path).stdout.split("\n")
    assert out[:2] == ["[]", "imported scipy yaml"]
    (tmp_path / ".numba_config.yaml").write_text("")
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path).stdout.split("\n")
    assert out[0] == "['yaml']"


def test_qrels_restore_path_imports_no_numba():
    """A qrels cache hit is restored on the job's thread while the warm-up thread imports
    numba: the prepared-qrels types and the restore itself import neither numba nor the
    kernels."""
    mods = _loaded("import fasteval.prepare, fasteval.batch.qrels_cache\n"
                   "from fasteval.prepare import PreparedQrels, prepare_run")
    assert not _under(mods, ["numba", "fasteval.kernels"])
