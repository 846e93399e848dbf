"""`fasteval trec-eval` as a command: exit statuses, one-line errors, stdin, flags."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "datasets" / "trec"


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fasteval", "trec-eval", *args], capture_output=True, text=True,
        input=stdin, timeout=300,
    )


def test_getopt_style_flags_and_measure_list() -> None:
    out = cli("-mP.5,10", "-mndcg_cut.10", str(DATA / "qrels.test"), str(DATA / "results.test"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "P_5                   \tall\t0.2667",
        "P_10                  \tall\t0.3000",
        "ndcg_cut_10           \tall\t0.3016",
    ]


def test_run_from_stdin() -> None:
    text = (DATA / "results.test").read_text()
    out = cli("-m", "map", str(DATA / "qrels.test"), "-", stdin=text)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "map                   \tall\t0.1785\n"


def test_missing_topic_without_c_exits_4(tmp_path: Path) -> None:
    run = tmp_path / "run"
    lines = [x for x in (DATA / "results.test").read_text().splitlines() if x.startswith("301")]
    run.write_text("\n".join(lines) + "\n")
    out = cli("-m", "map", str(DATA / "qrels.test"), str(run))
    assert out.returncode == 4
    assert "302" in out.stderr
    ok = cli("-c", "-m", "map", "-m", "num_q", str(DATA / "qrels.test"), str(run))
    assert ok.returncode == 0
    assert "num_q                 \tall\t3" in ok.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-x", "a", "b"], "trec-eval option"),
        (["-m", "ndgc", "q", "r"], "did you mean"),
        (["only-one-file"], "exactly two files"),
        (["-M", "zero", "q", "r"], "-M must be an integer"),
    ],
)
def test_bad_usage_is_one_line(args: list[str], needle: str) -> None:
    out = cli(*args)
    assert out.returncode == 2
    assert needle in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    out = cli(str(tmp_path / "nope.qrels"), str(DATA / "results.test"))
    assert out.returncode == 2
    assert "nope.qrels" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def _in_process(*args: str) -> str:
    import io

    from fasteval.cli.trec_eval_cmd import parse_args, run_trec_eval

    buf = io.StringIO()
    assert run_trec_eval(parse_args(list(args)), out=buf) == 0
    return buf.getvalue()


def test_nosummary_prints_the_per_query_lines_only() -> None:
    # trec_eval -n (--nosummary): summary_flag = 0, so every print_final step (runid, num_q
    # and the 'all' lines) prints nothing; -q's per-topic lines are unchanged
    qrels, run = str(DATA / "qrels.test"), str(DATA / "results.test")
    full = _in_process("-q", "-m", "map", "-m", "P.5", qrels, run).splitlines()
    assert _in_process("-q", "-n", "-m", "map", "-m", "P.5", qrels, run).splitlines() == [
        line for line in full if "\tall\t" not in line
    ] == [
        "map                   \t301\t0.0324",
        "P_5                   \t301\t0.0000",
        "map                   \t302\t0.4175",
        "P_5                   \t302\t0.8000",
        "map                   \t303\t0.0858",
        "P_5                   \t303\t0.0000",
    ]
    assert _in_process("-n", qrels, run) == ""  # no -q: nothing at all
    # trec_eval's long option names, and unique abbreviations of them (getopt_long)
    assert _in_process("--query_eval_wanted", "--nosum", "--measure=map", "--measure", "P.5",
                       qrels, run).splitlines() == _in_process(
        "-q", "-n", "-m", "map", "-m", "P.5", qrels, run).splitlines()
    assert _in_process("--Max_retrieved_per_topic=5", "--level_for_rel", "1", "-m", "num_ret",
                       qrels, run) == "num_ret               \tall\t15\n"


def test_nosummary_with_prefs_and_qrels_jg() -> None:
    from tests._data import trec_eval_file

    prefs = _in_process("-q", "-n", "-R", "prefs", "-m", "prefs_simp",
                        str(trec_eval_file("prefs.test")),
                        str(trec_eval_file("prefs.results.test"))).splitlines()
    assert len(prefs) == 24 and not any("\tall\t" in line for line in prefs)  # 24 topics
    jg = _in_process("-q", "-n", "-R", "qrels_jg", "-m", "qrels_jg",
                     str(trec_eval_file("qrels.123")), str(DATA / "results.test")).splitlines()
    assert jg and not any("\tall\t" in line for line in jg)
    assert jg[0].startswith("map_avgjg             \t301\t")


def test_duplicate_document_error_names_no_api_option(tmp_path: Path) -> None:
    # the readers' advice is the Python API's (duplicates='keep_best'), which this command
    # has no flag for: trec_eval quits on a duplicate, and so does the drop-in
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q 0 a 1\nq 0 b 0\n")
    run.write_text("q Q0 a 1 2 t\nq Q0 a 2 1 t\n")
    out = cli("-m", "map", str(qrels), str(run))
    assert out.returncode == 2
    assert out.stderr == (f"fasteval: error: {run}, line 2: duplicate (query_id, doc_id) pair "
                          "('q', 'a'); a document is ranked once per query (trec_eval stops "
                          "here too)\n")
    qrels.write_text("q 0 a 1\nq 0 a 0\n")
    run.write_text("q Q0 a 1 2 t\n")
    out = cli("-m", "map", str(qrels), str(run))
    assert out.returncode == 2
    assert "judged once per query" in out.stderr and "keep_best" not in out.stderr


def test_no_topic_in_both_files_stops_like_trec_eval(tmp_path: Path, capsys) -> None:
    # 9.0.8 loops over the run's topics and stops (exit 7) when none of them is judged, -c
    # or not: no summary of zeros over num_q 0 (or over the qrels topics with -c)
    from fasteval.cli.trec_eval_cmd import parse_args, run_trec_eval

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1\n2 0 c 1\n")
    run.write_text("7 Q0 a 1 0.5 r\n")
    for flags in ([], ["-c"], ["-q", "-c", "-m", "all_trec"], ["-n", "-q"]):
        buf = io.StringIO()
        status = run_trec_eval(parse_args(["--compat", "9", *flags, str(qrels), str(run)]),
                               out=buf)
        assert (status, buf.getvalue()) == (7, ""), flags
        assert capsys.readouterr().err == (
            "trec_eval: No queries with both results and relevance info\n")
    # 10.0 loops over the qrels' topics: the first one the run lacks stops it (exit 4), and
    # -c scores every one of them against its placeholder ranking
    buf = io.StringIO()
    assert run_trec_eval(parse_args(["-m", "map", str(qrels), str(run)]), out=buf) == 4
    assert capsys.readouterr().err == "trec_eval: result qid '1' not found in qrels\n"
    assert _in_process("-c", "-q", "-m", "map", str(qrels), str(run)).splitlines() == [
        "map                   \t1\t0.0000",
        "map                   \t2\t0.0000",
        "map                   \tall\t0.0000",
    ]


def test_qrels_jg_topics_the_run_lacks(tmp_path: Path, capsys) -> None:
    # -R qrels_jg goes through trec_eval's same topic loop as -R qrels
    from fasteval.cli.trec_eval_cmd import parse_args, run_trec_eval

    qrels, run = tmp_path / "qrels_jg", tmp_path / "run"
    qrels.write_text("1 0 a 1\n1 1 b 1\n2 0 c 1\n")  # topic 1: two judgment groups
    run.write_text("1 Q0 a 1 0.5 r\n")
    base = ["-q", "-m", "map_avgjg", "-m", "num_q", "-R", "qrels_jg"]
    files = [str(qrels), str(run)]
    buf = io.StringIO()
    assert run_trec_eval(parse_args([*base, *files]), out=buf) == 4  # 10.0 without -c
    assert (buf.getvalue(), capsys.readouterr().err) == (
        "", "trec_eval: result qid '2' not found in qrels\n")
    # map per group: 1 (a at rank 1) and 0 (b not retrieved); 10.0 -c prints topic 2 as 0
    assert _in_process("-c", *base, *files).splitlines() == [
        "map_avgjg             \t1\t0.5000",
        "map_avgjg             \t2\t0.0000",
        "num_q                 \tall\t2",
        "map_avgjg             \tall\t0.2500",
    ]
    # 9.0.8 prints the evaluated topic only; -c divides by both qrels topics
    assert _in_process("--compat", "9", "-c", *base, *files).splitlines() == [
        "map_avgjg             \t1\t0.5000",
        "num_q                 \tall\t2",
        "map_avgjg             \tall\t0.2500",
    ]
    assert _in_process("--compat", "9", *base, *files).splitlines() == [
        "map_avgjg             \t1\t0.5000",
        "num_q                 \tall\t1",
        "map_avgjg             \tall\t0.5000",
    ]
    run.write_text("7 Q0 a 1 0.5 r\n")
    buf = io.StringIO()
    assert run_trec_eval(parse_args(["--compat", "9", "-c", *base, *files]), out=buf) == 7
    assert capsys.readouterr().err == (
        "trec_eval: No queries with both results and relevance info\n")


def test_set_nickname_and_nickname_parameters(tmp_path: Path) -> None:
    # trec_eval's nickname "set" (measures.c set_names), in trec_eval's table order; a
    # -m name.params of a member sets its parameters; a nickname's own ".params" are ignored
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    run.write_text("1 Q0 a 1 0.5 r1\n1 Q0 b 2 0.5 r1\n2 Q0 c 1 1 r2\n")
    files = [str(qrels), str(run)]
    want = [
        "runid                 \tall\tr2",
        "num_q                 \tall\t2",
        "num_ret               \tall\t3",
        "num_rel               \tall\t2",
        "num_rel_ret           \tall\t2",
        "utility               \tall\t0.5000",  # (0 + 1) / 2: q1 1 - 1, q2 1
        "set_P                 \tall\t0.7500",
        "set_relative_P        \tall\t1.0000",
        "set_recall            \tall\t1.0000",
        "set_map               \tall\t0.7500",
        "set_F                 \tall\t0.8333",  # (2/3 + 1) / 2
    ]
    assert _in_process("-m", "set", *files).splitlines() == want
    assert _in_process("--compat", "9", "-m", "set.1", *files).splitlines() == want
    got = _in_process("-mset_F.0.5", "-m", "set", *files).splitlines()
    assert got[-1] == "set_F_0.5             \tall\t0.8000"  # 1.5PR/(0.5P+R): 0.6 and 1
    # official.5 is official: runid included
    with pytest.warns(UserWarning, match="ignores the parameters of the set official"):
        first = _in_process("-m", "official.5", *files).splitlines()[0]
    assert first == "runid                 \tall\tr2"
