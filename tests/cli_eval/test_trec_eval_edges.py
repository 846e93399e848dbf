"""`fasteval trec-eval` on the edges a trec_eval user meets, and `fasteval eval --format trec`
printing the same lines."""

from __future__ import annotations

import io
import re
import threading
import warnings
from pathlib import Path

import pytest

from fasteval.cli import main
from fasteval.cli.trec_eval_cmd import parse_args, run_trec_eval
from fasteval.errors import InputError, ParameterError, UnknownMeasureError
from tests._data import fifo_feeding, trec_eval_file


def _trec_eval(*args: str) -> str:
    buf = io.StringIO()
    assert run_trec_eval(parse_args(list(args)), out=buf) == 0
    return buf.getvalue()


@pytest.mark.parametrize("measures", [["-m", "map_avgjg"], ["-m", "P_avgjg.5", "-m", "P.5"],
                                      ["-m", "qrels_jg"], ["-q", "-m", "Rprec_mult_avgjg"]])
def test_judgment_group_measures_need_qrels_jg(measures: list[str]) -> None:
    # trec_eval computes map_avgjg, P_avgjg and Rprec_mult_avgjg from qrels_jg judgments
    # only and stops on plain qrels; asked for with plain qrels they are an error, not a
    # silent gap in the output (exit 0, no line)
    files = [str(trec_eval_file("qrels.test")), str(trec_eval_file("results.test"))]
    with pytest.raises(ParameterError, match=r"-R must be qrels_jg with -m .*avgjg.*got 'qrels'"):
        _trec_eval(*measures, *files)
    # with qrels_jg judgments they are computed
    jg = _trec_eval("-R", "qrels_jg", "-m", "map_avgjg", str(trec_eval_file("qrels.123")),
                    str(trec_eval_file("results.test")))
    assert jg.startswith("map_avgjg             \tall\t")


def test_eval_trec_format_prints_nan_as_trec_eval(tmp_path: Path, capsys) -> None:
    # -J -c: topic 2 retrieves only an unjudged document, so its ranking is empty and
    # iprec_at_recall_0.00 is C's 0.0 / 0.0, printed by %6.4f as "  -nan" (width 6)
    (tmp_path / "q").write_text("1 0 a 1\n2 0 b 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 1.0 t\n2 Q0 z 1 1.0 t\n")
    files = [str(tmp_path / "q"), str(tmp_path / "r")]
    ref = _trec_eval("-J", "-q", "-m", "iprec_at_recall.0", *files).splitlines()
    assert ref == ["iprec_at_recall_0.00  \t1\t1.0000", "iprec_at_recall_0.00  \t2\t  -nan",
                   "iprec_at_recall_0.00  \tall\t  -nan"]
    assert main(["eval", *files, "-J", "-q", "-m", "iprec_at_recall.0", "--format", "trec",
                 "--quiet"]) == 0
    got = capsys.readouterr().out.splitlines()
    assert got[:2] == ref[:2] and got[3:] == ref[2:]  # then runid, then the summary line
    assert main(["eval", *files, "-J", "-m", "iprec_at_recall.0", "--format", "trec",
                 "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == ref[2:]


def test_unsorted_11pt_avg_points_warn() -> None:
    # trec_eval's 11pt_avg matches its points in one pass that assumes them ascending
    # (m_11pt_avg.c): 11pt_avg.0.5,0.25 gives 0.8958 on topic 302, as here, not the mean of
    # the two points' interpolated precision (0.6667); the order is warned of
    files = [str(trec_eval_file("qrels.test")), str(trec_eval_file("results.test"))]
    with pytest.warns(UserWarning, match=r"'11pt_avg\.0\.5,0\.25': the recall points are not "
                                         r"in ascending order"):
        got = _trec_eval("-q", "-m", "11pt_avg.0.5,0.25", *files).splitlines()
    assert got[1] == "11pt_avg_0.5,0.25     \t302\t0.8958"
    points = _trec_eval("-q", "-m", "iprec_at_recall.0.25,0.5", *files).splitlines()
    assert points[2:4] == ["iprec_at_recall_0.25  \t302\t0.7917",
                           "iprec_at_recall_0.50  \t302\t0.5417"]  # (0.7917 + 0.5417) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ascending = _trec_eval("-q", "-m", "11pt_avg.0.25,0.5", *files).splitlines()
    assert ascending[1] == "11pt_avg_0.25,0.5     \t302\t0.6667"


@pytest.mark.parametrize("measure", ["rbp", "rbp.p=0.5", "rbp_resid", "unj.5", "unj@10"])
def test_compat9_refuses_the_measures_9_0_8_lacks(measure: str) -> None:
    # trec_eval 9.0.8 has no rbp, rbp_resid or unj ("illegal measure"); asked for by name
    # under --compat 9 they are refused, not left out of the output without a word
    files = [str(trec_eval_file("qrels.test")), str(trec_eval_file("results.test"))]
    with pytest.raises(ParameterError, match=r"--compat 9 must be a measure trec_eval 9\.0\.8 "
                                             r"has \((rbp|rbp_resid|unj) came with trec_eval 10\)"):
        _trec_eval("--compat", "9", "-m", measure, "-m", "P.5", *files)
    # all_trec leaves them out under --compat 9 (94 summary lines, as 9.0.8 prints)
    lines = _trec_eval("--compat", "9", "-m", "all_trec", *files).splitlines()
    assert len(lines) == 94
    assert not [ln for ln in lines if ln.startswith(("rbp", "unj"))]
    assert _trec_eval("-m", measure, *files).startswith(measure.partition(".")[0][:3])


@pytest.mark.parametrize(("fmt", "judgments", "run_keep", "missing"), [
    ("prefs", "prefs.test", lambda q: q != "3.EC.B", "3.EC.B"),
    ("qrels_prefs", "qrels.test", lambda q: q == "302", "301"),
])
def test_preference_topics_the_run_lacks_stop_as_with_qrels(tmp_path: Path, capsys, fmt,
                                                            judgments, run_keep, missing) -> None:
    # trec_eval 10 loops over the judged topics for -R prefs and qrels_prefs as for -R qrels:
    # without -c the first one the run lacks stops it with trec_eval's status 4 and message
    # (not a fasteval error, status 2); with -c it is scored against the placeholder ranking
    source = trec_eval_file("prefs.results.test" if fmt == "prefs" else "results.test")
    run = tmp_path / "run"
    run.write_text("".join(ln for ln in source.read_text().splitlines(keepends=True)
                           if run_keep(ln.split()[0])))
    args = ["-R", fmt, "-m", "all_prefs", str(trec_eval_file(judgments)), str(run)]
    buf = io.StringIO()
    assert run_trec_eval(parse_args(["-q", *args]), out=buf) == 4
    assert buf.getvalue() == ""
    assert capsys.readouterr().err == f"trec_eval: result qid '{missing}' not found in qrels\n"
    lines = _trec_eval("-q", "-c", *args).splitlines()
    assert f"prefs_num_prefs_ful   \t{missing}\t0" in lines


def test_judgment_group_measures_in_trec_eval_order_first_parameters_win() -> None:
    # trec_eval prints map_avgjg, P_avgjg, Rprec_mult_avgjg in its table order whatever the
    # -m order (not in -m order), and a key.params sets the parameters once, over qrels_jg's
    # defaults (P_avgjg_5 once, without the nine default cutoffs beside it)
    files = [str(trec_eval_file("qrels.123")), str(trec_eval_file("results.test"))]
    want = {ln.split("\t")[0].rstrip(): ln for ln in
            trec_eval_file("out.test.qrels_jg").read_text().splitlines() if "\tall\t" in ln}
    got = _trec_eval("-R", "qrels_jg", "-m", "P_avgjg.10,5", "-m", "Rprec_mult_avgjg.0.2",
                     "-m", "map_avgjg", "-m", "P_avgjg.20", "-m", "num_q", *files).splitlines()
    assert got == [want[n] for n in ("num_q", "map_avgjg", "P_avgjg_5", "P_avgjg_10",
                                     "Rprec_mult_avgjg_0.20")]
    got = _trec_eval("-R", "qrels_jg", "-m", "qrels_jg", "-m", "P_avgjg.5", *files).splitlines()
    assert [ln.split("\t")[0].rstrip() for ln in got if ln.startswith("P_avgjg")] == ["P_avgjg_5"]
    assert len(got) == 2 + 1 + 1 + 10  # runid, num_q, map_avgjg, P_avgjg_5, Rprec_mult_avgjg
    # errors and warnings name the measure as written, not its base (P.0, map.3)
    with pytest.raises(UnknownMeasureError, match=r"'P_avgjg\.0' is not known"):
        _trec_eval("-R", "qrels_jg", "-m", "P_avgjg.0", *files)
    with pytest.warns(UserWarning, match=r"'map_avgjg\.3': trec_eval ignores the parameters "
                                         r"of map_avgjg \('3'\)"):
        _trec_eval("-R", "qrels_jg", "-m", "map_avgjg.3", *files)


def test_qrels_jg_without_m_says_what_to_pass() -> None:
    # without -m the default set (official) is asked for, which qrels_jg judgments do not
    # give; the message says 'no -m', not "-m" values the user never typed (num_ret, ...)
    files = [str(trec_eval_file("qrels.123")), str(trec_eval_file("results.test"))]
    with pytest.raises(ParameterError, match=r"^-R qrels_jg must be used with -m qrels_jg .*"
                                             r"got 'no -m'$"):
        _trec_eval("-R", "qrels_jg", *files)


def test_obsolete_o_flag_is_accepted_and_ignored() -> None:
    # trec_eval 10 still takes -o (Output_old_results_format) and ignores it
    files = [str(trec_eval_file("qrels.test")), str(trec_eval_file("results.test"))]
    assert _trec_eval("-o", "-m", "P.5", *files) == _trec_eval("-m", "P.5", *files)
    assert _trec_eval("-oq", "-m", "P.5", *files).splitlines()[0] == "P_5                   \t301\t0.0000"


@pytest.mark.parametrize(("fmt", "judgments", "run", "measure"), [
    ("prefs", "prefs.test", "prefs.results.test", "prefs_simp"),
    ("qrels_prefs", "qrels.test", "results.test", "prefs_simp"),
    ("qrels_jg", "qrels.123", "results.test", "map_avgjg"),
])
def test_zscores_with_other_judgment_formats_are_refused(fmt, judgments, run, measure) -> None:
    # -Z converts -R qrels measures only: with another format it is refused rather than
    # printing the plain values, unprefixed, without a word
    files = [str(trec_eval_file(judgments)), str(trec_eval_file(run))]
    z = str(trec_eval_file("zscores_file"))
    with pytest.raises(ParameterError, match=rf"^-Z must be used with -R qrels \(z-scores of "
                                             rf"-R {fmt} measures are not computed\)"):
        _trec_eval("-R", fmt, "-m", measure, "-Z", z, *files)
    assert _trec_eval("-R", fmt, "-m", measure, *files).startswith(f"{measure:<22}\tall\t")


def test_duplicate_below_the_max_docs_cut_is_no_error(tmp_path: Path) -> None:
    # trec_eval looks for a document ranked twice among each topic's top -M documents only
    # (form_res_rels.c sorts, cuts at -M, then checks): 'c' twice at ranks 3 and 4 stops
    # it from -M 4 on, not with -M 2 or 3 (a duplicate below the cut is no error)
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 x 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n2 Q0 x 1 1 r\n"
                                "1 Q0 c 4 0.5 last\n")
    files = [str(tmp_path / "q"), str(tmp_path / "r")]
    got = _trec_eval("-q", "-M", "3", "-m", "num_ret", "-m", "P.3", "-m", "runid", *files)
    assert got.splitlines() == [
        "num_ret               \t1\t3", "P_3                   \t1\t0.6667",
        "num_ret               \t2\t1", "P_3                   \t2\t0.3333",
        "runid                 \tall\tlast",  # the last line's tag, though that line is cut
        "num_ret               \tall\t4", "P_3                   \tall\t0.5000"]
    for flags in (["-M", "4"], []):
        with pytest.raises(InputError, match=r"r, line 5: duplicate \(query_id, doc_id\) pair "
                                             r"\('1', 'c'\)"):
            _trec_eval(*flags, "-m", "P.3", *files)


@pytest.mark.parametrize("how", ["stdin", "fifo"])
def test_duplicate_below_the_max_docs_cut_from_stdin_or_fifo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    # a run that can be read only once (standard input, a FIFO) is judged as the same run
    # in a file: 'c' twice at ranks 3 and 4 is no error with -M 3 (trec_eval checks the top
    # -M only) and stops it from -M 4 on, the error naming the source and line
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 x 1\n")
    run = b"1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n2 Q0 x 1 1 r\n1 Q0 c 4 0.5 last\n"
    (tmp_path / "r").write_bytes(run)
    flags = ["-q", "-M", "3", "-m", "num_ret", "-m", "P.3", "-m", "runid", str(tmp_path / "q")]

    def source() -> tuple[str, threading.Thread | None]:
        if how == "stdin":
            monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(run), encoding="utf-8"))
            return "-", None
        return fifo_feeding(tmp_path / f"fifo{len(list(tmp_path.iterdir()))}", run)

    want = _trec_eval(*flags, str(tmp_path / "r"))
    assert want.splitlines()[:2] == ["num_ret               \t1\t3", "P_3                   \t1\t0.6667"]
    path, t = source()
    assert _trec_eval(*flags, path) == want
    if t is not None:
        t.join()
    path, t = source()
    name = "-" if how == "stdin" else path  # a stream without a name is named by its path
    with pytest.raises(InputError, match=rf"^{re.escape(name)}, line 5: duplicate \(query_id, "
                                         r"doc_id\) pair \('1', 'c'\)"):
        _trec_eval("-M", "4", "-m", "P.3", str(tmp_path / "q"), path)
    if t is not None:
        t.join()


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_duplicate_in_a_topic_without_judgments_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    # trec_eval checks for a document ranked twice only in the topics it evaluates (those
    # with judgments, form_res_rels.c): 'x' twice in topic 9, which the qrels lack, is no
    # error; a duplicate in a judged topic is, named at its own line (6), not at topic 9's
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    run = "1 Q0 a 1 2 r\n9 Q0 x 1 1 r\n9 Q0 x 2 0.5 r\n1 Q0 b 2 1 r\n2 Q0 c 1 1 last\n"
    (tmp_path / "r").write_text(run)
    (tmp_path / "r2").write_text(run + "1 Q0 a 3 0.1 r\n")

    def path(name: str) -> str:
        if how == "file":
            return str(tmp_path / name)
        data = (tmp_path / name).read_bytes()
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
        return "-"

    got = _trec_eval("-q", "-m", "num_ret", "-m", "P.2", "-m", "runid", str(tmp_path / "q"),
                     path("r"))
    assert got.splitlines() == [
        "num_ret               \t1\t2", "P_2                   \t1\t0.5000",
        "num_ret               \t2\t1", "P_2                   \t2\t0.5000",
        "runid                 \tall\tlast",
        "num_ret               \tall\t3", "P_2                   \tall\t0.5000"]
    name = str(tmp_path / "r2") if how == "file" else "-"
    with pytest.raises(InputError, match=rf"^{re.escape(name)}, line 6: duplicate \(query_id, "
                                         r"doc_id\) pair \('1', 'a'\)"):
        _trec_eval("-m", "num_ret", str(tmp_path / "q"), path("r2"))
    # below the -M cut the judged duplicate is no error either
    assert _trec_eval("-M", "2", "-m", "num_ret", str(tmp_path / "q"), path("r2")) == (
        "num_ret               \tall\t3\n")
    # the line is counted as the reader counts lines: comments, blank lines, old-Mac
    # (CR-only) line ends
    (tmp_path / "r3").write_bytes(("# c\r\r" + run + "1 Q0 a 3 0.1 r\n").replace("\n", "\r")
                                  .encode())
    with pytest.raises(InputError, match=r", line 8: duplicate \(query_id, doc_id\) pair "
                                         r"\('1', 'a'\)"):
        _trec_eval("-m", "num_ret", str(tmp_path / "q"), path("r3"))
    # judgment groups (-R qrels_jg) follow the same rule (form_res_rels_jg.c)
    assert _trec_eval("-R", "qrels_jg", "-m", "num_q", str(tmp_path / "q"), path("r")) == (
        "num_q                 \tall\t2\n")
    with pytest.raises(InputError, match=rf"^{re.escape(name)}, line 6: duplicate"):
        _trec_eval("-R", "qrels_jg", "-m", "num_q", str(tmp_path / "q"), path("r2"))


def test_compat9_preferences_leave_out_the_topics_the_run_lacks(tmp_path: Path) -> None:
    # 9.0.8 loops over the run's topics: a judged topic the run lacks is not evaluated nor
    # printed (no error without -c, no placeholder line with -c); -c divides the means by
    # every judged topic; the counts leave it out
    run = tmp_path / "run"
    run.write_text("".join(ln for ln in trec_eval_file("prefs.results.test").read_text()
                           .splitlines(keepends=True) if ln.split()[0] != "3.EC.B"))
    files = [str(trec_eval_file("prefs.test")), str(run)]

    def table(*flags: str) -> dict[tuple[str, str], str]:
        text = _trec_eval(*flags, "-q", "-R", "prefs", "-m", "all_prefs", *files)
        return {(ln.split("\t")[0].rstrip(), ln.split("\t")[1]): ln.split("\t")[2]
                for ln in text.splitlines()}

    v10 = table("-c")  # every judged topic, 3.EC.B against the placeholder
    assert v10[("prefs_num_prefs_poss", "3.EC.B")] == "1"
    for flags, n in ((["--compat", "9"], 23), (["--compat", "9", "-c"], 24)):
        v9 = table(*flags)
        topics = {q for _, q in v9} - {"all"}
        assert len(topics) == 23 and "3.EC.B" not in topics
        assert {k: v for k, v in v9.items() if k[1] != "all"} == {
            k: v for k, v in v10.items() if k[1] not in ("all", "3.EC.B")}
        assert v9[("num_q", "all")] == str(n)
        assert v9[("prefs_num_prefs_poss", "all")] == str(int(v10[("prefs_num_prefs_poss", "all")]) - 1)
        simp = sum(float(v) for (m, q), v in v9.items() if m == "prefs_simp" and q != "all")
        assert abs(float(v9[("prefs_simp", "all")]) - simp / n) < 1e-3


def test_eval_prints_a_measure_warning_once(capsys) -> None:
    """The command and the evaluator both parse the measure names: its warning is one line,
    not one per parse (three)."""
    files = [str(trec_eval_file("qrels.test")), str(trec_eval_file("results.test"))]
    assert main(["eval", *files, "-m", "11pt_avg.0.5,0.25", "-m", "P.5", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("the recall points are not in ascending order") == 1
    assert main(["eval", *files, "-m", "11pt_avg.0.5,0.25", "--quiet"]) == 0  # a new command warns again
    assert capsys.readouterr().err.count("not in ascending order") == 1
