"""``fasteval warmup`` compiles (or loads) every variant of the score pass and the preparation kernels, so that the first real job finds them in numba's cache."""

from __future__ import annotations

import numba
import pytest

from fasteval.cli import main
from tests._data import SHIPPED_TREC


@pytest.mark.slow
def test_warmup_loads_every_score_pass_variant(capsys):
    from fasteval.kernels import ranking
    from fasteval.kernels.groups import run_heads
    from fasteval.kernels.ids import id_keys
    from fasteval.kernels.qrels_index import index_qrels
    from fasteval.kernels.rank import rank_and_label

    assert main(["warmup"]) == 0
    err = capsys.readouterr().err
    assert "TREC text tokenizer" in err and "jobs in" in err
    variants = {(False, False), (True, False), (True, True)}  # profiles, generic, + user models
    assert set(ranking._PASSES) == {(g, m, p) for g, m in variants for p in (False, True)}
    from fasteval.kernels import expected

    assert set(expected._PASSES) == {False, True}  # tie_break="expected", serial and parallel
    assert expected._tie_starts.signatures
    for kernel in (rank_and_label, index_qrels, run_heads, id_keys):
        assert isinstance(kernel, numba.core.registry.CPUDispatcher)
        assert kernel.signatures, kernel  # compiled or loaded (one id-column type for both kinds)


_PYTHON_ENTRIES = '''
import json, sys
import polars as pl
import fasteval
from fasteval.evaluators import Document as D, DocumentNDCGEvaluator, DocumentRecallEvaluator, evaluate_rag
from fasteval._jit import compiled
sub = {"q1": {"s1": {"d1": 1, "d2": 1}, "s2": {"d1": 1}}}
fasteval.evaluate_diversity(sub, {"q1": {"d2": 4.0, "d1": 3.0, "d9": 2.0}}, ["alpha-nDCG@5", "nNRBP"])
gt, ret = [[D(content="France", score=1.0), D(content="Paris", score=0.5)]], [[D(content="Paris")]]
DocumentNDCGEvaluator().run(ground_truth_documents=gt, retrieved_documents=ret)
DocumentRecallEvaluator(mode="multi_hit").run(ground_truth_documents=gt, retrieved_documents=ret)
evaluate_rag(pl.DataFrame({"retrieved": [["a", "b"]], "ground_truth": [["a"]]}))
fasteval.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": 1.0}}, ["map", "ndcg@10"],
                  tie_break="expected")
print(json.dumps(compiled()))
'''
"""The API entry points that are not commands: diversity, the Haystack evaluators,
evaluate_rag and expected values over ties; prints the kernels it compiled."""


@pytest.mark.slow
def test_no_command_compiles_after_warmup(tmp_path):
    """With an empty numba cache, ``fasteval warmup`` then every command (and the API entry
    points above): none prints the compile notice, none compiles a kernel."""
    import json
    import os
    import subprocess
    import sys

    from fasteval._jit import NOTICE

    root = SHIPPED_TREC.parent.parent
    env = {k: v for k, v in os.environ.items() if k != "FASTEVAL_QUIET"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    notice = NOTICE.split("(", 1)[0]

    def fasteval(*argv: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "fasteval", *argv], capture_output=True,
                              text=True, env=env, cwd=root, timeout=900)
        assert proc.returncode == 0, (argv, proc.stderr)
        assert notice not in proc.stderr and notice not in proc.stdout, (argv, proc.stderr)
        return proc.stdout

    fasteval("warmup", "--quiet")
    q, r = str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test")
    fasteval("datasets", "synth", "--queries", "60", "--depth", "20", "--runs", "3",
             "--out", str(tmp_path / "synth"), "--quiet")
    sq, runs = str(tmp_path / "synth" / "qrels.parquet"), sorted((tmp_path / "synth" / "runs").iterdir())
    r0, r1, r2 = (str(p) for p in runs)
    prefs = tmp_path / "prefs.txt"
    prefs.write_text("301 u s FR940202-2-00150 2\n301 u s FR940202-2-00151 1\n301 u s x 0\n")
    pq = str(tmp_path / "pq.parquet")
    for argv in (
        ["eval", q, r], ["eval", q, r, "-m", "ndcg@10", "-m", "bpref", "-m", "RBP(rel=1)", "-q"],
        ["eval", q, r, "-m", "map", "-m", "P@10", "--tie-break", "expected"],
        ["eval", sq, r0, r1, r2, "-m", "ndcg@10", "-q", "-o", pq],
        ["trec-eval", q, r], ["trec-eval", "-q", "-m", "all_trec", q, r],
        ["trec-eval", "-c", "-J", "-M", "50", "-l", "2", q, r],
        ["trec-eval", "-q", "-m", "all_prefs", "-R", "qrels_prefs", q, r],
        ["trec-eval", "-m", "all_prefs", "-R", "prefs", str(prefs), r],
        ["compare", sq, r0, r1, r2, "-m", "ndcg@10", "--baseline", "run_0"],
        ["compare", "--results", pq, "--test", "t", "--test", "wilcoxon", "--test", "sign",
         "--test", "bootstrap", "--test", "tukey", "--test", "randomized-tukey", "--ci-method", "bca"],
        ["compare", "--results", pq, "--baseline", "run_0", "--test", "randomization",
         "--correction", "stepdown"],
        ["power", "--results", pq, "-m", "ndcg@10", "--min-diff", "0.05"],
        ["fuse", r0, r1, "-m", "rrf", "-o", str(tmp_path / "f.parquet")],
        ["fuse", r, r, "-m", "wsum", "--norm", "zmuv", "-w", "0.3,0.7", "-o", str(tmp_path / "f.trec")],
    ):
        fasteval(*argv)
    proc = subprocess.run([sys.executable, "-c", _PYTHON_ENTRIES], capture_output=True, text=True,
                          env=env, cwd=root, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == [] and notice not in proc.stderr, proc.stderr
