"""Report rendering: marks, bold best, LaTeX structure, HTML/Markdown, atomic files."""

from __future__ import annotations

import html.parser
import re
import shutil
import subprocess

import numpy as np
import polars as pl
import pytest

from fasteval.compare import compare
from fasteval.compare.report import cells, details_text, latex_escape, render
from fasteval.errors import ParameterError

pytest.importorskip("scipy")


@pytest.fixture(scope="module")
def ordered():
    """Runs with a clear order: top > mid > low (each gap large vs the noise)."""
    rng = np.random.default_rng(0)
    n = 40
    base = rng.uniform(0.2, 0.5, n)
    runs = {
        "mid_run": base + 0.15 + rng.normal(0, 0.02, n),
        "top&best": base + 0.30 + rng.normal(0, 0.02, n),
        "low#1": base + rng.normal(0, 0.02, n),
    }
    parts = []
    for name, v in runs.items():
        for m, f in (("ndcg_cut_10", 1.0), ("map", 0.8)):
            parts.append(
                pl.DataFrame(
                    {"run_id": name, "query_id": np.arange(n), "measure": m, "value": v * f}
                )
            )
    return pl.concat(parts)


def test_letters_mark_significantly_better_runs(ordered):
    c = cells(compare(ordered, tests="t"))
    assert c["rows"] == ["mid_run", "top&best", "low#1"]
    assert c["labels"] == ["mid_run (a)", "top&best (b)", "low#1 (c)"]
    marks = [[cell[2] for cell in row] for row in c["grid"]]
    assert marks == [["c", "c"], ["ac", "ac"], ["", ""]]
    best = [[cell[1] for cell in row] for row in c["grid"]]
    assert best == [[False, False], [True, True], [False, False]]


def test_daggers_against_baseline(ordered):
    c = cells(compare(ordered, baseline="mid_run", tests="randomization", n_resamples=2000))
    marks = [[cell[2] for cell in row] for row in c["grid"]]
    assert marks == [["", ""], ["†", "†"], ["‡", "‡"]]
    assert "† / ‡: significantly better / worse than the baseline mid_run" in c["notes"][0]


def _small_wins_one_big_loss(n_loss: int) -> dict:
    """``new`` beats ``base`` by 0.01 on most queries and loses by 0.5+ on ``n_loss``: the
    sign and signed-rank tests favour ``new`` while its mean is lower."""
    n = 20
    base = np.linspace(0.6, 0.9, n)
    d = np.full(n, 0.01)
    d[:n_loss] = -0.5 - 0.1 * np.arange(n_loss)
    return {"base": pl.DataFrame({"query_id": np.arange(n), "map": base}),
            "new": pl.DataFrame({"query_id": np.arange(n), "map": base + d})}


@pytest.mark.parametrize(
    ("test", "alternative"),
    [("sign", "two-sided"), ("sign", "greater"), ("wilcoxon", "two-sided"),
     ("wilcoxon", "greater")],
)
def test_marks_follow_the_direction_the_test_found(test, alternative):
    # 18 wins, 2 losses, mean difference -0.046: a significant sign or signed-rank test
    # says new is better (one-sided: the alternative says so); marking by the mean
    # difference called new significantly worse than the baseline
    runs = _small_wins_one_big_loss(2)
    cmp = compare(runs, baseline="base", tests=test, alternative=alternative, ci=None)
    row = cmp.tests.row(0, named=True)
    assert row["significant"] and row["p_value"] < 0.01
    assert cmp.effects["mean_diff"][0] == pytest.approx(-0.046)
    c = cells(cmp)
    assert [row[0][2] for row in c["grid"]] == ["", "†"]
    assert [row[0][2] for row in cells(cmp, marks="letters")["grid"]] == ["", "a"]
    if alternative == "two-sided":  # all pairs: run base, versus new
        pairs = cells(compare(runs, tests=test, ci=None))
        assert [row[0][2] for row in pairs["grid"]] == ["", "a"]


def test_no_marks_when_nothing_is_significant():
    rng = np.random.default_rng(1)
    v = rng.uniform(size=20)
    frame = pl.concat(
        [
            pl.DataFrame({"run_id": r, "query_id": np.arange(20), "measure": "map", "value": x})
            for r, x in (("a", v), ("b", v[::-1].copy()))
        ]
    )
    c = cells(compare(frame, tests="t"))
    assert [cell[2] for row in c["grid"] for cell in row] == ["", ""]


def test_mean_values_and_digits(ordered):
    cmp = compare(ordered, tests="t")
    c = cells(cmp, digits=2)
    means = ordered.group_by("run_id", "measure").agg(pl.col("value").mean())
    expected = means.filter((pl.col("run_id") == "low#1") & (pl.col("measure") == "map"))["value"][
        0
    ]
    assert c["grid"][2][1][0] == f"{expected:.2f}"


def _latex_rows(tex: str) -> list[str]:
    body = tex[tex.index("\\midrule") + len("\\midrule") : tex.index("\\bottomrule")]
    return [r.strip() for r in body.strip().split("\n")]


def test_latex_booktabs_structure(ordered):
    tex = render(compare(ordered, tests="t"), "latex", caption=False, names="canonical")
    assert tex.startswith("% Superscript letters")  # the notes as comments
    lines = [ln for ln in tex.splitlines() if not ln.startswith("%")]
    assert lines[0] == "\\begin{tabular}{lrr}" and lines[-1] == "\\end{tabular}"
    order = [lines.index(x) for x in ("\\toprule", "\\midrule", "\\bottomrule")]
    assert order == sorted(order) and order[0] == 1
    n_cols = len(re.search(r"\\begin\{tabular\}\{([lrc]+)\}", tex)[1])
    header = lines[2]
    rows = _latex_rows(tex)
    assert len(rows) == 3
    for row in [header, *rows]:
        assert row.endswith("\\\\")
        assert len(re.split(r"(?<!\\)&", row)) == n_cols
    # escaping: no bare specials outside math
    text = re.sub(r"\$[^$]*\$", "", "\n".join(lines))  # drop math
    text = re.sub(r"\\[_&#%${}]", "", text).replace(" & ", " ")  # drop escapes, separators
    assert not re.search(r"[_&#%$]", text)
    assert "ndcg\\_cut\\_10" in header and "top\\&best (b)" in tex and "low\\#1" in tex
    assert "\\textbf{" in rows[1] and "$^{ac}$" in rows[1]
    assert tex.count("{") == tex.count("}")


def test_latex_caption_names_and_alignment(ordered):
    cmp = compare(ordered, tests="t")
    tex = render(cmp, "latex", label="tab:runs")
    lines = tex.splitlines()
    assert lines[:2] == ["\\begin{table}[t]", "\\centering"] and lines[-1] == "\\end{table}"
    caption = lines[2]
    assert caption.startswith("\\caption{Mean nDCG@10 and MAP of 3 runs. Superscript letters")
    assert "paired t-test, Holm correction over all 6 comparisons of the report" in caption
    assert "$\\alpha$ = 0.05" in caption and "40 queries paired" in caption
    assert lines[3] == "\\label{tab:runs}"
    assert "Run & nDCG@10 & MAP \\\\" in lines
    rows = _latex_rows(tex)
    # every cell ends with the phantom of its column's widest mark ("ac"), marks are
    # zero-width, and bold values overlay a phantom of the regular-weight value
    for row in rows:
        for cell in row.removesuffix(" \\\\").split(" & ")[1:]:
            assert cell.endswith("\\phantom{$^{ac}$}")
            value = re.match(r"(?:\\rlap\{\\textbf\{)?([0-9.]+)", cell)[1]
            if "textbf" in cell:
                assert cell.startswith(
                    f"\\rlap{{\\textbf{{{value}}}$^{{ac}}$}}\\phantom{{{value}}}"
                )
    assert "\\rlap{$^{c}$}" in rows[0]
    one_sided = render(
        compare(ordered, tests="t", alternative="greater", family="measure"), "latex"
    )
    assert "within each measure (3 comparisons)" in one_sided
    assert "one-sided (greater)" in one_sided


def test_latex_escape_all_specials():
    assert latex_escape("a_b&c%d$e#f{g}h~i^j\\k") == (
        "a\\_b\\&c\\%d\\$e\\#f\\{g\\}h\\textasciitilde{}i\\textasciicircum{}j\\textbackslash{}k"
    )
    # OT1 (LaTeX's default encoding) prints < > | in text as ¡ ¿ and an em dash
    assert latex_escape("<b>dense</b>|x") == (
        "\\textless{}b\\textgreater{}dense\\textless{}/b\\textgreater{}\\textbar{}x")


def _multiline_names() -> dict:
    rng = np.random.default_rng(2)
    return {name: pl.DataFrame({"query_id": np.arange(8), "map": rng.uniform(size=8)})
            for name in ("two\n\nlines", "a<b>c", "x\r\ny")}


def test_line_breaks_in_names_keep_the_latex_and_markdown_tables_whole(tmp_path):
    cmp = compare(_multiline_names(), tests="t", ci=None)
    assert latex_escape("two\n\nlines") == "two  lines"  # a blank line ends a paragraph
    bare = render(cmp, "latex", caption=False)
    assert all(ln.startswith("%") or not ln.startswith(("lines", " ")) for ln in bare.splitlines())
    assert "two  lines (a)" in bare and "% " in bare and "two  lines 0" in bare
    md = render(cmp, "markdown").split("\n\n")[0].splitlines()
    assert md[2:] == ["| two<br><br>lines (a) | 0.3797 |", "| a\\<b>c (b) | 0.4753 |",
                      "| x<br>y (c) | **0.5941** |"]
    if shutil.which("pdflatex") is None:
        return
    doc = ("\\documentclass{article}\\usepackage{booktabs}\\begin{document}\n"
           + render(cmp, "latex") + "\\end{document}\n")
    (tmp_path / "t.tex").write_text(doc)
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
                          cwd=tmp_path, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stdout[-2000:]  # was: Paragraph ended before ...


def test_latex_note_with_less_or_equal():
    """The notes' '<=' becomes $\\leq$ (not an escaped '<' followed by '=')."""
    two = {"a": pl.DataFrame({"query_id": [1, 2], "map": [0.5, 0.6]}),
           "b": pl.DataFrame({"query_id": [1, 2], "map": [0.25, 0.3]})}
    tex = render(compare(two, tests="randomization", ci=None), "latex")
    assert "too few queries for the test to reach p $\\leq$ 0.05." in tex
    assert "textless" not in tex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
def test_latex_compiles(tmp_path, ordered):  # pragma: no cover - optional
    tex = render(compare(ordered, baseline="low#1", tests="t"), "latex")
    bare = render(
        compare(ordered, tests=["randomization"], n_resamples=200), "latex", caption=False
    )
    doc = (
        "\\documentclass{article}\\usepackage{booktabs}\\begin{document}\n"
        + tex
        + bare
        + "\\end{document}\n"
    )
    (tmp_path / "t.tex").write_text(doc)
    proc = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout[-2000:]


def test_markdown_table(ordered):
    md = render(compare(ordered, tests="t"), "markdown")
    lines = md.splitlines()
    assert lines[0] == "| run | nDCG@10 | MAP |"
    assert lines[1] == "|:---|---:|---:|"
    assert lines[3].startswith("| top&best (b) | **") and "<sup>ac</sup>" in lines[3]
    assert all(ln.count("|") == 4 for ln in lines[:5])


class _Collect(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_html_table(ordered):
    out = render(compare(ordered, tests="t"), "html")
    p = _Collect()
    p.feed(out)
    assert p.tags.count("table") == 1 and p.tags.count("tr") == 4
    assert p.tags.count("td") == 6 and p.tags.count("b") == 2
    assert "top&best (b)" in p.text  # escaped in the source, restored by the parser
    assert "top&amp;best" in out


def test_text_table_and_details(ordered):
    cmp = compare(ordered, tests=["t", "bootstrap"], n_resamples=500)
    text = render(cmp, "text")
    assert text.splitlines()[0].split() == ["run", "nDCG@10", "MAP"]
    canonical = render(cmp, "text", names="canonical")
    assert canonical.splitlines()[0].split() == ["run", "ndcg_cut_10", "map"]
    assert "*^ac" in text
    det = details_text(cmp)
    head = det.splitlines()[0].split()
    assert head[:4] == ["measure", "run", "versus", "diff"]
    assert head[6:11] == ["d_z", "g", "delta", "ES", "W/T/L"]
    assert len(det.splitlines()) == 1 + 6 + 2  # header, rows, blank line, legend
    assert "40/0/0" in det and "Hedges' g" in det.splitlines()[-1]


def test_write_files_atomically(tmp_path, ordered):
    cmp = compare(ordered, tests=["t", "randomization"], n_resamples=300)
    for name in ("r.csv", "r.parquet", "r.md", "r.tex", "r.html", "r.txt"):
        cmp.write(tmp_path / name)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["r.csv", "r.parquet", "r.md", "r.tex", "r.html", "r.txt"]
    )  # no temporary files left behind
    frame = cmp.to_frame()
    assert pl.read_parquet(tmp_path / "r.parquet").equals(frame)
    back = pl.read_csv(tmp_path / "r.csv")
    assert back.height == frame.height == 12
    np.testing.assert_allclose(back["p_value"].to_numpy(), frame["p_value"].to_numpy(), rtol=1e-12)
    assert (tmp_path / "r.tex").read_text() == render(cmp, "latex")
    with pytest.raises(ParameterError, match="format"):
        cmp.write(tmp_path / "r.docx")
    with pytest.raises(ParameterError, match="marks"):
        render(cmp, "text", marks="dagger")  # no baseline


def test_letters_past_z_are_separated():
    """With more than 26 runs the labels run on to aa, ab...; a cell's marks are joined by
    commas ('a,b,...,z,aa'), not run together ('...yzaa' reads as y, z, a, a or y, za, a)."""
    rng = np.random.default_rng(0)
    base = rng.uniform(size=10)
    runs = {f"r{i:02d}": pl.DataFrame({"query_id": list(range(10)),
                                       "map": base + 0.05 * i + 0.001 * rng.normal(size=10)})
            for i in range(28)}
    c = cells(compare(runs, tests="t", ci=None, correction="none"))
    letters = [chr(ord("a") + i) for i in range(26)]
    assert c["labels"][26:] == ["r26 (aa)", "r27 (ab)"]
    assert c["grid"][27][0][2] == ",".join([*letters, "aa"])
    assert c["grid"][1][0][2] == "a" and c["grid"][0][0][2] == ""
    few = cells(compare(dict(list(runs.items())[:3]), tests="t", ci=None, correction="none"))
    assert few["grid"][2][0][2] == "ab"


def _markup_runs() -> pl.DataFrame:
    rng = np.random.default_rng(4)
    n = 12
    names = ["base|*x*", "_b_ `c` [d](e) <i> &amp; ~~s~~", "检索系统"]
    return pl.concat(
        pl.DataFrame({"run_id": name, "query_id": np.arange(n), "measure": "map",
                      "value": rng.uniform(0, 1, n) + 0.5 * k})
        for k, name in enumerate(names)
    )


def _md_rows(tokens) -> list[list[tuple[str, set[str]]]]:
    """Table rows parsed by markdown-it: per cell its plain text and its inline token kinds."""
    rows, current, cell = [], [], None
    for t in tokens:
        if t.type == "tr_open":
            current = []
        elif t.type in ("th_open", "td_open"):
            cell = ("", set())
        elif t.type == "inline" and cell is not None:
            cell = ("".join(c.content for c in t.children if c.type == "text"),
                    {c.type for c in t.children})
        elif t.type in ("th_close", "td_close"):
            current.append(cell)
            cell = None
        elif t.type == "tr_close":
            rows.append(current)
    return rows


_MARKUP = {"em_open", "strong_open", "code_inline", "link_open", "html_inline", "s_open"}


def test_markdown_cells_and_notes_show_run_names_literally():
    """markdown-it (CommonMark + GitHub tables) reads every run name back as plain text:
    one cell per column, no emphasis, code, link, HTML tag, entity or strikethrough."""
    markdown_it = pytest.importorskip("markdown_it")
    frame = _markup_runs()
    names = frame["run_id"].unique(maintain_order=True).to_list()
    cmp = compare(frame, baseline=names[0], tests="t", n_resamples=100)
    parser = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])
    tokens = parser.parse(render(cmp, "markdown"))
    rows = _md_rows(tokens)
    assert [len(r) for r in rows] == [2, 2, 2, 2]
    assert [r[0][0] for r in rows] == ["run", *names]
    assert all(not r[0][1] & _MARKUP for r in rows)
    notes = [t for t in tokens if t.type == "inline" and "missing queries" in t.content]
    assert len(notes) == 1
    assert not {c.type for c in notes[0].children} & _MARKUP
    text = "".join(c.content for c in notes[0].children if c.type == "text")
    assert all(f"{name} 0" in text for name in names)
    baseline_note = [t for t in tokens if t.type == "inline" and "baseline" in t.content]
    assert "".join(c.content for c in baseline_note[0].children
                   if c.type == "text").count(f"baseline {names[0]} (") == 1


def test_text_tables_align_wide_characters():
    """Columns line up in display cells (wcwidth as the oracle): CJK run names take two."""
    wcwidth = pytest.importorskip("wcwidth")
    from fasteval.compare.report import display_width

    for s in ["bm25", "检索系统", "ｆｕｌｌ", "e\u0301", "a\u200bb", "a\u00adb", "한국어", "混合 run"]:
        assert display_width(s) == wcwidth.wcswidth(s), s
    frame = _markup_runs()
    cmp = compare(frame, tests="t", n_resamples=100)
    table = render(cmp, "text").splitlines()
    assert len({wcwidth.wcswidth(line) for line in table[:5]}) == 1, table[:5]
    details = details_text(cmp).splitlines()
    assert len({wcwidth.wcswidth(line) for line in details[:4]}) == 1, details[:4]
    # the diff column ends at the same display column on every line (header included)
    ends = {wcwidth.wcswidth(line[: line.index(tok) + len(tok)])
            for line, tok in zip(details[:4], ["diff", *(
                f"{d:+.4f}" for d in cmp.effects["mean_diff"].to_list())], strict=True)}
    assert len(ends) == 1, details[:4]


def test_text_tables_keep_one_line_per_run_with_control_characters():
    """A line break, tab or escape sequence in a run name is written as an escape: the table
    keeps one line per run and its columns, and the details one line per comparison."""
    rng = np.random.default_rng(2)
    names = ["line1\nline2", "tab\there", "red\x1b[31m", "sep\u2028x"]
    frame = pl.concat(
        pl.DataFrame({"run_id": name, "query_id": np.arange(8), "measure": "map",
                      "value": rng.uniform(0, 1, 8)})
        for name in names
    )
    cmp = compare(frame, tests="t", n_resamples=100)
    table = render(cmp, "text").splitlines()
    shown = ["line1\\nline2", "tab\\there", "red\\x1b[31m", "sep\\u2028x"]
    assert [line.split(" (")[0] for line in table[2:6]] == shown
    assert len({len(line) for line in table[:6]}) == 1
    details = details_text(cmp).splitlines()
    assert len(details[: details.index("")]) == 1 + 6  # header and the 6 pairs
    assert all(line.isprintable() for line in table + details)


def test_runs_with_equal_means_are_all_best():
    """Means equal in exact arithmetic (fractions.Fraction as the oracle) but summed in
    another order are both bold; a mean larger by 1e-9 is bold alone."""
    from fractions import Fraction

    rng = np.random.default_rng(7)
    values = np.round(rng.uniform(0, 1, 50), 2)
    shuffled = rng.permutation(values)
    assert sum(map(Fraction, values)) == sum(map(Fraction, shuffled))
    frame = pl.concat(
        pl.DataFrame({"run_id": name, "query_id": np.arange(50), "measure": "map", "value": v})
        for name, v in (("a", values), ("b", shuffled), ("c", values * 0.5))
    )
    cmp = compare(frame, tests="t", n_resamples=100)
    mean_a, mean_b = cmp.means["mean"][:2]
    assert mean_a != mean_b  # the float means differ by the summation order
    grid = cells(cmp)["grid"]
    assert [row[0][1] for row in grid] == [True, True, False]
    bumped = frame.with_columns(
        pl.when((pl.col("run_id") == "b") & (pl.col("query_id") == 0))
        .then(pl.col("value") + 50e-9).otherwise(pl.col("value")).alias("value"))
    grid = cells(compare(bumped, tests="t", n_resamples=100))["grid"]
    assert [row[0][1] for row in grid] == [False, True, False]


def test_caption_counts_the_family_the_correction_used():
    # c - base has the same difference on every query: no t p-value, so Holm adjusts the
    # other two alone (family of 2), and the caption counts 2, not "over all 3 comparisons"
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    q = [1, 2, 3, 4, 5]
    x = {"base": [0.2, 0.4, 0.3, 0.6, 0.1], "a": [0.3, 0.45, 0.5, 0.65, 0.3],
         "b": [0.1, 0.5, 0.2, 0.6, 0.2], "c": [0.3, 0.5, 0.4, 0.7, 0.2]}
    runs = {k: pl.DataFrame({"query_id": q, "map": v}) for k, v in x.items()}
    cmp = compare(runs, baseline="base", tests="t", ci=None)
    p = [stats.ttest_rel(x[r], x["base"]).pvalue for r in ("a", "b")]
    adjusted = cmp.tests["p_adjusted"].to_numpy()
    np.testing.assert_allclose(adjusted[:2], multipletests(p, method="holm")[1], rtol=1e-12)
    assert np.isnan(adjusted[2])
    text = render(cmp, "text")
    assert ("(paired t-test, Holm correction over the 2 of the report's 3 comparisons that have "
            "a p-value, alpha = 0.05)") in text
    by_measure = compare(runs, baseline="base", tests="t", ci=None, family="measure")
    assert "Holm correction within each measure (its comparisons that have a p-value)" in \
        render(by_measure, "text")
    defined = compare({k: runs[k] for k in ("base", "a", "b")}, baseline="base", tests="t", ci=None)
    assert "Holm correction over all 2 comparisons of the report, alpha" in render(defined, "text")


def test_means_that_fixed_point_notation_cannot_show_are_in_scientific_notation():
    r = {
        "a": pl.DataFrame({"query_id": [1, 2, 3, 4], "big": [1e300, 2e300, 3e300, 4e300],
                           "tiny": [1e-9, 2e-9, 3e-9, 4e-9], "map": [0.1, 0.2, 0.3, 0.4]}),
        "b": pl.DataFrame({"query_id": [1, 2, 3, 4], "big": [1e300] * 4,
                           "tiny": [1e-9, 1e-9, 1.5e-9, 1e-9], "map": [0.1] * 4}),
    }
    cmp = compare(r, baseline="b", tests="t", ci=None)
    lines = cmp.table("markdown").splitlines()
    assert lines[2] == "| a | **2.5000e+300** | **2.5000e-09** | **0.2500** |"
    assert lines[3] == "| b | 1.0000e+300 | 1.1250e-09 | 0.1000 |"
    rows = [line.split() for line in details_text(cmp).splitlines()[1:4]]
    assert [row[3] for row in rows] == ["+1.5000e+300", "+1.3750e-09", "+0.1500"]
