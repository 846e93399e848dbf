"""A base install (no extras): ``eval``, ``compare`` (tests, corrections, tables) work; every
optional part (plots, sas, judge, ray, haystack) is refused before any work, with one line
naming the extra's install line, exit status 2 and no output written.

A missing package is simulated in a fresh process: a finder put first on ``sys.meta_path``
answers "No module named ..." for the blocked packages, as when they are not installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import polars as pl
import pytest

_WRAPPER = """
import sys
blocked = set(sys.argv[1].split(","))
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Blocked())
mode, rest = sys.argv[2], sys.argv[3:]
if mode == "cli":
    sys.argv = ["fasteval", *rest]
    from fasteval.cli import console_main
    console_main()
else:
    exec(rest[0])
"""


def _without(blocked: list[str], *argv: str, code: str | None = None):
    """Run ``fasteval ARGV`` (or Python ``code``) where ``blocked`` cannot be imported."""
    args = ["py", code] if code is not None else ["cli", *argv]
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, ",".join(blocked), *args],
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def _trec(tmp_path):
    """Six queries; P@1 of run a is 1 on q1..q5, of run b on q1, q2 (hand-worked)."""
    (tmp_path / "qrels.txt").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(1, 7)))
    for name, hits in (("a", {1, 2, 3, 4, 5}), ("b", {1, 2})):
        rows = []
        for i in range(1, 7):
            top = f"d{i}" if i in hits else "x"
            rows += [f"q{i} Q0 {top} 1 2.0 {name}\n", f"q{i} Q0 y{i} 2 1.0 {name}\n"]
        (tmp_path / f"{name}.txt").write_text("".join(rows))
    return [str(tmp_path / n) for n in ("qrels.txt", "a.txt", "b.txt")]


def test_compare_runs_without_the_plot_extra_and_gives_real_values(tmp_path):
    stats = pytest.importorskip("scipy.stats")
    rc, out, err = _without(["matplotlib"], "compare", *_trec(tmp_path), "-m", "P_1", "-m",
                            "recip_rank", "--baseline", "b", "--test", "t", "--ci", "none",
                            "--format", "csv")
    assert rc == 0, err
    got = pl.read_csv(out.encode()).sort("measure")
    # a - b per query: P@1 and RR both 0, 0, 1, 1, 1, 0 (run a's misses rank d6 nowhere: RR 0)
    p = stats.ttest_rel([1, 1, 1, 1, 1, 0], [1, 1, 0, 0, 0, 0]).pvalue
    assert got.get_column("measure").to_list() == ["P_1", "recip_rank"]
    assert got.get_column("p_value").to_list() == pytest.approx([p, p], rel=1e-12)
    assert got.get_column("p_adjusted").to_list() == pytest.approx([2 * p, 2 * p], rel=1e-12)


def test_compare_plot_without_matplotlib_is_one_line_and_writes_nothing(tmp_path):
    files = _trec(tmp_path)
    rc, out, err = _without(["matplotlib"], "compare", *files, "-m", "P@1", "--test", "t",
                            "-o", str(tmp_path / "r.md"), "--plot", f"differences={tmp_path / 'd.png'}")
    assert (rc, out) == (2, "")
    assert err == 'fasteval: error: --plot needs matplotlib: pip install ".[plot]"\n'
    assert not (tmp_path / "r.md").exists() and not (tmp_path / "d.png").exists()


class _Counting(BaseHTTPRequestHandler):
    requests = 0

    def do_POST(self):  # noqa: N802 - http.server's name
        type(self).requests += 1
        self.send_response(500)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_judge_without_httpx_sends_nothing_and_writes_nothing(tmp_path):
    src = tmp_path / "rag.parquet"
    pl.DataFrame({"question": ["q1", "q2"], "contexts": [["c1"], ["c2"]],
                  "answer": ["a1", "a2"]}).write_parquet(src)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        rc, out, err = _without(
            ["httpx"], "judge", "faithfulness", str(src), "-o", str(tmp_path / "out.parquet"),
            "--base-url", f"http://127.0.0.1:{server.server_address[1]}/v1", "--model", "m")
    finally:
        server.shutdown()
        server.server_close()
    assert (rc, out) == (2, "")
    assert err == 'fasteval: error: fasteval judge needs httpx: pip install ".[llm]"\n'
    assert _Counting.requests == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rag.parquet"]


def test_judge_client_and_evaluator_refuse_at_construction_without_httpx():
    code = (
        "from fasteval.errors import MissingExtraError\n"
        "from fasteval.evaluators import FaithfulnessEvaluator\n"
        "try:\n"
        "    FaithfulnessEvaluator()\n"
        "except MissingExtraError as exc:\n"
        "    print(isinstance(exc, ImportError), exc.extra, exc)\n"
    )
    rc, out, err = _without(["httpx", "haystack"], code=code)
    assert rc == 0, err
    assert out == 'True llm OpenAIChatClient needs httpx: pip install ".[llm]"\n'


def test_sas_without_its_backend_is_one_line_and_writes_nothing(tmp_path):
    src = tmp_path / "answers.csv"
    src.write_text("prediction,gold\nParis,Paris\n")
    rc, out, err = _without(["torch", "transformers", "sentence_transformers"], "sas", str(src),
                            "-o", str(tmp_path / "out.parquet"), "--quiet")
    assert (rc, out) == (2, "")
    assert err == ("fasteval: error: fasteval sas needs torch, transformers, sentence-transformers: "
                   "pip install torch (the CPU or CUDA build you want) first, then "
                   'pip install ".[sas]"\n')
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv"]


def test_eval_engine_ray_without_ray_is_one_line_and_writes_nothing(tmp_path):
    qrels, a, _ = _trec(tmp_path)
    rc, out, err = _without(["ray"], "eval", qrels, a, "-m", "map", "--engine", "ray",
                            "-o", str(tmp_path / "out.parquet"))
    assert (rc, out) == (2, "")
    assert err == 'fasteval: error: engine="ray" needs Ray Data: pip install ".[ray]"\n'
    assert not (tmp_path / "out.parquet").exists()


def test_haystack_registration_without_haystack_names_the_extra():
    code = (
        "from fasteval.errors import MissingExtraError\n"
        "from fasteval.evaluators import DocumentNDCGEvaluator, Document\n"
        "out = DocumentNDCGEvaluator().run(ground_truth_documents=[[Document(content='a')]],\n"
        "    retrieved_documents=[[Document(content='b'), Document(content='a')]])\n"
        "print(round(out['score'], 4))\n"  # the evaluators themselves need no Haystack
        "try:\n"
        "    import fasteval.evaluators.haystack\n"
        "except MissingExtraError as exc:\n"
        "    print(isinstance(exc, ImportError), exc)\n"
    )
    rc, out, err = _without(["haystack"], code=code)
    assert rc == 0, err
    # 1 / log2(3): the relevant document at rank 2 of an ideal ranking with it at rank 1
    assert out.splitlines() == ["0.6309", "True registering evaluators with Haystack needs "
                                'haystack-ai: pip install ".[haystack]"']


def test_missing_extra_error_is_one_line_in_the_python_api():
    from fasteval.errors import MissingExtraError, require_extra

    with pytest.raises(MissingExtraError) as info:
        require_extra("plot", "plotting", ["fasteval_no_such_module"])
    assert str(info.value) == 'plotting needs fasteval_no_such_module: pip install ".[plot]"'
    assert isinstance(info.value, ImportError) and isinstance(info.value, ValueError)
    assert json.dumps(str(info.value)).count("\\n") == 0
