"""Per-query results from text: trec_eval -q output and fasteval eval's text table."""

from __future__ import annotations

import gzip

import polars as pl
import pytest

import fasteval
from fasteval.cli import main
from fasteval.compare._data import load_results, read_text_results
from fasteval.errors import InputError
from tests._data import SHIPPED_TREC

QRELS, RUN = SHIPPED_TREC / "qrels.test", SHIPPED_TREC / "results.test"


def _run_cli(argv, capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(argv))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


@pytest.fixture(scope="module")
def per_query() -> pl.DataFrame:
    return fasteval.evaluate(fasteval.read_qrels(QRELS), {"results.test": fasteval.read_run(RUN)},
                             ["map", "P@10", "num_ret"])


def _rounded(df: pl.DataFrame) -> list[tuple]:
    return sorted((r, q, m, round(v, 4)) for r, q, m, v in df.select(
        "run_id", "query_id", "measure", "value").rows())


def test_trec_eval_q_output_reads_as_the_per_query_values_it_prints(tmp_path, capsys, per_query):
    """trec-eval -q (no runid line with -m: the run takes the file's stem; relstring lines,
    text, are left out) and eval -q --format trec (a runid line naming the run, then the
    summary lines, which are not per-query values)."""
    a = tmp_path / "bm25.trec"
    rc, out, _ = _run_cli(["trec-eval", "-q", "-m", "map", "-m", "P.10", "-m", "num_ret", "-m",
                           "relstring", str(QRELS), str(RUN)], capsys)
    assert rc == 0 and "relstring" in out
    a.write_text(out)
    got = load_results([a])
    # trec-eval prints trec_eval's names (P_10), evaluate the names asked for (P@10)
    trec_names = {"P@10": "P_10"}
    assert _rounded(got) == sorted(("bm25", q, trec_names.get(m, m), v)
                                   for _, q, m, v in _rounded(per_query))
    b = tmp_path / "b.eval"
    rc, _, _ = _run_cli(["eval", str(QRELS), str(RUN), "-m", "map", "-m", "P@10", "-m", "num_ret",
                         "-q", "--format", "trec", "-o", str(b), "--quiet"], capsys)
    assert rc == 0 and "runid" in b.read_text() and "\tall\t" in b.read_text()
    assert _rounded(load_results([b])) == _rounded(per_query)


def test_text_table_of_eval_q_reads_long_and_wide(tmp_path, capsys, per_query):
    for wide in ([], ["--wide"]):
        path = tmp_path / f"t{len(wide)}.txt"
        rc, _, _ = _run_cli(["eval", str(QRELS), str(RUN), "-m", "map", "-m", "P@10", "-m",
                             "num_ret", "-q", "-o", str(path), "--quiet", *wide], capsys)
        assert rc == 0
        assert _rounded(load_results([path])) == _rounded(per_query)


def test_runid_lines_name_the_per_query_lines_before_them():
    text = (b"map  \t1\t0.5\nmap  \t2\t0.25\nrunid\tall\tbm25\nmap  \tall\t0.375\n"
            b"map  \t1\t0.75\nmap  \t2\t1.0\nrunid\tall\tdense\nmap  \tall\t0.875\n")
    got = read_text_results(text, "two.trec")
    assert got.rows() == [("bm25", "1", "map", 0.5), ("bm25", "2", "map", 0.25),
                          ("dense", "1", "map", 0.75), ("dense", "2", "map", 1.0)]
    # per-query lines after the last runid line belong to no named run: the file's stem
    tail = read_text_results(text + b"map\t3\t0.1\n", "/x/two.trec")
    assert tail.row(-1) == ("two", "3", "map", 0.1)


def test_compare_reads_trec_eval_outputs_given_gzipped_too(tmp_path):
    lines = {"bm25": [0.1, 0.2, 0.3, 0.4], "dense": [0.3, 0.2, 0.5, 0.9]}
    paths = []
    for name, values in lines.items():
        text = "".join(f"ndcg_cut_10\t{q}\t{v:.4f}\n" for q, v in enumerate(values, 1))
        p = tmp_path / f"{name}.trec.gz"
        p.write_bytes(gzip.compress(text.encode()))
        paths.append(p)
    c = fasteval.compare(paths, tests="t", ci=None)
    assert c.systems == ("bm25", "dense")
    assert abs(c.effects.get_column("mean_diff")[0]) == pytest.approx(0.225)
    assert c.means.get_column("mean").to_list() == pytest.approx([0.25, 0.475])


@pytest.mark.parametrize(("text", "message", "line"), [
    (b"map\t1\t0.5\nmap\t2\n", "2 fields where trec_eval -q output has 3", 2),
    (b"map\t1\t0.5\n\nmap\t2\tabc\n", "value is not a number: 'abc'", 3),
    (b"runid\tall\tbm25\nmap\tall\t0.5\n", "summary lines only", None),
    (b"\n  \n", "no lines", None),
    (b"run_id query_id measure value\nbm25 1 map\n", "3 fields where the header has 4", 2),
    (b"query_id map map\n1 0.5 0.5\n", "names column 'map' twice", 1),
    (b"query_id map\n1 x\n", "value is not a number: 'x'", 2),
])
def test_malformed_text_results_name_the_line(tmp_path, text, message, line):
    path = tmp_path / "r.txt"
    path.write_bytes(text)
    with pytest.raises(InputError, match=message) as exc:
        load_results([path])
    assert exc.value.line == line
    assert str(path) in str(exc.value)


def test_unknown_suffix_lists_the_text_formats(tmp_path, capsys):
    path = tmp_path / "r.out"
    path.write_text("map\t1\t0.5\n")
    (tmp_path / "s.out").write_text("map\t1\t0.5\n")
    rc, _, err = _run_cli(["compare", "--results", str(path), str(tmp_path / "s.out")], capsys)
    assert rc == 2 and ".trec, .eval or .txt" in err and len(err.strip().splitlines()) == 1
