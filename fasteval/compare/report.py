"""Render a :class:`~fasteval.compare.Comparison` as a paper-style table.

Rows are runs, columns are measures, cells are means over the paired queries. Marks come
from the comparison's ``mark_test`` (adjusted p-values against ``alpha``):

* ``marks="letters"``: each run gets a letter (a, b, c, ..., z, aa, ab, ...); a cell carries
  the letters of the runs it is significantly better than (separated by commas when there
  are more than 26 runs, whose labels can have two letters).
* ``marks="dagger"`` (needs a baseline): ``†`` significantly better than the baseline,
  ``‡`` significantly worse.
* ``marks="none"``.

Which run of a significant comparison is the better one: the one the alternative names for
a one-sided test; for a two-sided one, the run with more wins (sign test), the larger
signed-rank sum (Wilcoxon) or the higher mean (the other tests).

The best mean per column is bold (``*`` after the value in plain text). Column headers
show measures as papers write them (``nDCG@10``, ``MAP``; :mod:`fasteval.compare.names`)
unless ``names="canonical"``. Every format states how the marks were made (test,
correction and its family, alpha, sidedness, queries paired and missing): below the table
in text, Markdown and HTML, in the caption of the LaTeX table (a ``table`` float; with
``caption=False`` a bare ``tabular`` with the notes as ``%`` comments). LaTeX cells keep
their decimal points aligned: marks are set in a zero-width box followed by a phantom of
the column's widest mark, and a bold value overlays a phantom of the same value in the
regular weight.
"""

from __future__ import annotations

import html
import os
import re
import unicodedata
from pathlib import Path

import polars as pl

from fasteval._words import counted, one_line
from fasteval.compare.result import ComparisonResult
from fasteval.compare.settings import TEST_LABELS
from fasteval.errors import ParameterError
from fasteval.options import Marks, MeasureNames, check_choice

FORMATS = ("text", "markdown", "latex", "html", "csv", "parquet")
SUFFIX_FORMATS = {  # file suffix -> report format (also used by `fasteval compare -o`)
    ".txt": "text", ".md": "markdown", ".tex": "latex", ".html": "html", ".htm": "html",
    ".csv": "csv", ".parquet": "parquet", ".pq": "parquet",
}
_CORRECTION_LABEL = {
    "holm": "Holm", "bonferroni": "Bonferroni", "sidak": "Sidak", "holm-sidak": "Holm-Sidak",
    "hochberg": "Hochberg", "bh": "Benjamini-Hochberg", "by": "Benjamini-Yekutieli",
    "maxt": "permutation max-T (single-step)", "stepdown": "Westfall-Young step-down max-T",
    "none": "no",
}


def _letter(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(ord("a") + r) + s
    return s


def cells(
    cmp: ComparisonResult, marks: Marks | None = None, digits: int = 4,
    names: MeasureNames = "display",
) -> dict:
    """The table as plain data: row labels, column names, and per cell value/best/marks.

    Examples
    --------
    >>> import polars as pl
    >>> from fasteval.compare import compare
    >>> r = {"a": pl.DataFrame({"query_id": list(range(8)), "map": [0.9] * 8}),
    ...      "b": pl.DataFrame({"query_id": list(range(8)), "map": [0.1] * 8})}
    >>> c = cells(compare(r, tests="randomization"))
    >>> c["rows"], c["grid"][0][0], c["grid"][1][0]
    (['a', 'b'], ('0.9000', True, 'b'), ('0.1000', False, ''))
    >>> c["columns"]
    ['MAP']
    """
    check_choice("names", MeasureNames, names)
    if marks is None:
        marks = "dagger" if cmp.baseline is not None else "letters"
    check_choice("marks", Marks, marks)
    if marks == "dagger" and cmp.baseline is None:
        raise ParameterError("marks", "'letters' or 'none' without a baseline", marks)
    if not isinstance(digits, int) or isinstance(digits, bool) or not 0 <= digits <= 17:
        raise ParameterError("digits", "an integer from 0 to 17", digits)
    letters = {s: _letter(i) for i, s in enumerate(cmp.systems)}
    sep = "," if len(cmp.systems) > 26 else ""
    means = {(r["run_id"], r["measure"]): r["mean"] for r in cmp.means.iter_rows(named=True)}
    sig = cmp.tests.filter((pl.col("test") == cmp.mark_test) & pl.col("significant"))
    sig = sig.join(
        cmp.effects.select("measure", "run_id", "versus", "mean_diff", "wins", "losses"),
        on=["measure", "run_id", "versus"],
        how="left",
    )
    better: dict[tuple[str, str], set[str]] = {}
    for r in sig.iter_rows(named=True):
        way = _direction(cmp, r)
        if way > 0:
            better.setdefault((r["run_id"], r["measure"]), set()).add(r["versus"])
        elif way < 0:
            better.setdefault((r["versus"], r["measure"]), set()).add(r["run_id"])
    top = {m: max(means[(t, m)] for t in cmp.systems) for m in cmp.measures}
    tol = {m: _tie_tolerance(cmp, m, means) for m in cmp.measures}
    fmt = {m: _number_format([means[(t, m)] for t in cmp.systems], digits)
           for m in cmp.measures}
    grid = []
    for s in cmp.systems:
        row = []
        for m in cmp.measures:
            v = means[(s, m)]
            best = v >= top[m] - tol[m]
            beats = better.get((s, m), set())
            if marks == "letters":  # past z the labels have two letters: "a,ab", not "aab"
                mk = sep.join(letters[t] for t in cmp.systems if t in beats)
            elif marks == "dagger" and s != cmp.baseline:
                if cmp.baseline in beats:
                    mk = "†"
                elif s in better.get((cmp.baseline, m), set()):
                    mk = "‡"
                else:
                    mk = ""
            else:
                mk = ""
            row.append((format(v, fmt[m]), best, mk))
        grid.append(row)
    labels = [f"{s} ({letters[s]})" if marks == "letters" else s for s in cmp.systems]
    return {
        "rows": list(cmp.systems),
        "labels": labels,
        "columns": _headers(cmp.measures, names),
        "grid": grid,
        "marks": marks,
        "notes": _notes(cmp, marks),
    }


#: largest magnitude a column of means shows in fixed-point notation
FIXED_MAX = 1e9


def _number_format(values: list[float], digits: int) -> str:
    """Format of one column of means: ``digits`` decimals, or, when the column's largest
    magnitude is not 0 but rounds to 0 at ``digits`` decimals, or reaches
    :data:`FIXED_MAX` (where fixed-point digits would be rounding noise), scientific
    notation with ``digits`` decimals.

    Examples
    --------
    >>> _number_format([0.25, 0.0], 4), _number_format([2e-9, 1e-9], 4), _number_format([3e300], 2)
    ('.4f', '.4e', '.2e')
    """
    top = max((abs(v) for v in values if v == v and abs(v) != float("inf")), default=0.0)
    if top >= FIXED_MAX or (top > 0 and round(top, digits) == 0):
        return f".{digits}e"
    return f".{digits}f"


def _tie_tolerance(cmp: ComparisonResult, measure: str, means: dict) -> float:
    """How far below the best mean another mean is still as good: the tie rule of
    :mod:`fasteval.compare.ties` (``REL_TOL`` times the largest absolute score), so that
    runs whose means differ only by the order of summation (``0.1 + 0.2 + 0.3`` against
    ``0.3 + 0.2 + 0.1``) are both best."""
    from fasteval.compare.ties import REL_TOL

    pm = cmp.paired.get(measure)
    if pm is not None and pm.scores.size:
        scale = float(abs(pm.scores).max())
    else:
        scale = max(abs(means[(t, measure)]) for t in cmp.systems)
    return REL_TOL * scale


def _direction(cmp: ComparisonResult, r: dict) -> float:
    """Which run a significant comparison ``r`` finds better: > 0 ``run``, < 0 ``versus``.

    A one-sided test's alternative says it (``"greater"``: ``run``). A two-sided test goes
    the way of what it tests: the sign test the wins against the losses, the Wilcoxon test
    ``W+`` against ``W-``, the other tests the mean difference. (Nine small wins and one
    large loss are a significant sign test in favour of ``run`` with a negative mean
    difference.)
    """
    if cmp.alternative == "greater":
        return 1.0
    if cmp.alternative == "less":
        return -1.0
    if cmp.mark_test == "sign":
        return float(r["wins"] - r["losses"])
    if cmp.mark_test == "wilcoxon" and r["measure"] in cmp.paired:
        from fasteval.compare.ties import differences
        from fasteval.compare.wilcoxon import signed_rank

        x = cmp.paired[r["measure"]].scores
        i, j = cmp.systems.index(r["run_id"]), cmp.systems.index(r["versus"])
        d = differences(x[i], x[j])
        w_plus, w_minus = (
            signed_rank(v, zero_method=cmp.zero_method, method="approx", alternative="greater")[0]
            for v in (d, -d)
        )
        return w_plus - w_minus
    return r["mean_diff"]


def _headers(measures: tuple[str, ...], names: str) -> list[str]:
    """Column headers: display names, or canonical ones where two would coincide."""
    if names == "canonical":
        return list(measures)
    from fasteval.compare.names import display_name

    shown = [display_name(m) for m in measures]
    return [m if shown.count(d) > 1 else d for m, d in zip(measures, shown, strict=True)]


def _how(cmp: ComparisonResult) -> str:
    """Test, correction with its family, alpha and sidedness, in words."""
    test = cmp.mark_test
    parts = [TEST_LABELS[test]]
    rows = cmp.tests.filter(pl.col("test") == test)
    n_tests = rows.height
    per_measure = n_tests // max(1, len(cmp.measures))
    # a comparison without a p-value (undefined statistic) is not in its correction's family
    defined = rows.filter(pl.col("p_value").is_not_nan())
    if test in ("tukey", "randomized-tukey"):
        parts.append("family-wise over all pairs of runs per measure")
    elif cmp.correction != "none":
        if cmp.family == "report" and defined.height < n_tests:
            family = (f"over the {defined.height} of the report's {n_tests} comparisons that "
                      "have a p-value")
        elif cmp.family == "report":
            family = (
                f"over all {n_tests} comparisons of the report" if n_tests > 1 else "(1 comparison)"
            )
        elif defined.height < n_tests:
            family = "within each measure (its comparisons that have a p-value)"
        else:
            family = f"within each measure ({per_measure} comparison{'s' * (per_measure > 1)})"
        parts.append(f"{_CORRECTION_LABEL[cmp.correction]} correction {family}")
    else:
        parts.append("no correction")
    parts.append(f"alpha = {cmp.alpha:g}")
    if cmp.alternative != "two-sided":
        parts.append(f"one-sided ({cmp.alternative})")
    return ", ".join(parts)


def _notes(cmp: ComparisonResult, marks: str) -> list[str]:
    how = _how(cmp)
    notes = []
    if marks == "letters":
        notes.append(
            f"Superscript letters: significantly better than the run with that letter ({how})."
        )
    elif marks == "dagger":
        notes.append(
            f"† / ‡: significantly better / worse than the baseline {cmp.baseline} ({how})."
        )
    notes.append("Best mean per column in bold.")
    used = cmp.means.group_by("measure", maintain_order=True).agg(pl.col("n_used").first())
    counts = sorted(set(used["n_used"].to_list()))
    paired = (
        f"{counted(counts[0], 'query', 'queries')} paired"
        if len(counts) == 1
        else "queries paired per measure: " + ", ".join(f"{m} {n}" for m, n in used.iter_rows())
    )
    miss = cmp.means.group_by("run_id", maintain_order=True).agg(pl.col("n_missing").max())
    missing_txt = ", ".join(f"{r} {k}" for r, k in miss.iter_rows())
    verb = "scored 0" if cmp.missing == "zero" else "dropped"
    notes.append(f"{paired}; missing queries per run ({verb}): {missing_txt}.")
    if "note" in cmp.tests.columns:
        flagged = cmp.tests.filter((pl.col("test") == cmp.mark_test) & pl.col("note").is_not_null())
        undefined = flagged.filter(pl.col("note").str.contains("undefined")).height
        unreachable = flagged.filter(pl.col("note").str.contains("cannot reach")).height
        if undefined:
            notes.append(
                f"{_comparisons(undefined)} an undefined statistic (zero variance or too few "
                "queries): not marked."
            )
        if unreachable:
            notes.append(
                f"{_comparisons(unreachable)} too few queries for the test to reach "
                f"p <= {cmp.alpha:g}."
            )
    return notes


def _comparisons(n: int) -> str:
    """``1 comparison has``, ``2 comparisons have``."""
    return f"{n} comparison has" if n == 1 else f"{n} comparisons have"


def display_width(s: str) -> int:
    """Columns ``s`` takes in a terminal: wide and fullwidth characters (CJK) two, combining
    marks and format characters (zero-width space and joiner) none, the others one.

    Examples
    --------
    >>> display_width("bm25"), display_width("检索"), display_width("e\u0301")
    (4, 4, 1)
    """
    width = 0
    for ch in s:
        if ch != "\u00ad" and (unicodedata.combining(ch)
                                or unicodedata.category(ch) in ("Mn", "Me", "Cf")):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _pad(s: str, width: int, right: bool) -> str:
    """``s`` padded with spaces to ``width`` display columns (:func:`display_width`)."""
    fill = " " * max(0, width - display_width(s))
    return fill + s if right else s + fill


def _text(c: dict) -> str:
    header = ["run", *map(one_line, c["columns"])]
    body = []
    for label, row in zip(c["labels"], c["grid"], strict=False):
        out = [one_line(label)]
        for v, best, mk in row:
            sup = mk if c["marks"] == "dagger" else f"^{mk}" if mk else ""
            out.append(v + ("*" if best else "") + sup)
        body.append(out)
    widths = [max(display_width(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        return "  ".join(
            _pad(x, w, right=i > 0) for i, (x, w) in enumerate(zip(r, widths, strict=False))
        ).rstrip()

    rule = "-" * display_width(line(header))
    notes = [one_line(n.replace("in bold", "marked *")) for n in c["notes"]]
    return "\n".join([line(header), rule, *map(line, body), rule, *notes]) + "\n"


#: characters Markdown (CommonMark and GitHub's tables) reads as markup inside a line: cell
#: separators, emphasis, code, links, HTML tags and entities, strikethrough
_MD_SPECIAL = frozenset("\\|*_`[]<~")
#: an ampersand that starts an HTML entity (``&amp;``, ``&#35;``): escaped; others stay bare
_MD_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")


def _md_escape(s: str) -> str:
    """Text as Markdown shows it literally, in a table cell or a paragraph: the markup
    characters backslash-escaped, and a line break as ``<br>`` (a newline would end the
    table row).

    Examples
    --------
    >>> print(_md_escape("a|b*<i> _x_ `c` [d](e) &amp; R&D ~~s~~\\n2"))
    a\\|b\\*\\<i> \\_x\\_ \\`c\\` \\[d\\](e) \\&amp; R&D \\~\\~s\\~\\~<br>2
    """
    s = _MD_ENTITY.sub(r"\\&", "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in s))
    return one_line(s.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>"))


def _markdown(c: dict) -> str:
    lines = [
        "| " + " | ".join(["run", *map(_md_escape, c["columns"])]) + " |",
        "|" + "|".join([":---", *["---:"] * len(c["columns"])]) + "|",
    ]
    for label, row in zip(c["labels"], c["grid"], strict=False):
        out = [_md_escape(label)]
        for v, best, mk in row:
            out.append((f"**{v}**" if best else v) + (f"<sup>{mk}</sup>" if mk else ""))
        lines.append("| " + " | ".join(out) + " |")
    return "\n".join(lines) + "\n\n" + "\n".join(map(_md_escape, c["notes"])) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    # a blank line would end the paragraph inside a cell or the caption (an error)
    "\n": " ", "\r": " ",
    # text-mode glyphs of the default OT1 encoding: < > | print as ¡ ¿ and an em dash
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
}


def latex_escape(s: str) -> str:
    r"""Escape LaTeX's special characters; other control characters are written as
    :func:`fasteval._words.one_line` writes them, their backslash escaped too.

    Examples
    --------
    >>> latex_escape("ndcg_cut_10 & P@5")
    'ndcg\\_cut\\_10 \\& P@5'
    """
    return "".join(_LATEX_SPECIAL.get(ch) or one_line(ch).replace("\\", _LATEX_SPECIAL["\\"])
                   for ch in s)


def _latex_mark(mk: str) -> str:
    return "$^{" + mk.replace("†", "\\dagger").replace("‡", "\\ddagger") + "}$"


def _latex_text(text: str) -> str:
    return (
        latex_escape(text)
        .replace("†", "$\\dagger$")
        .replace("‡", "$\\ddagger$")
        .replace("alpha = ", "$\\alpha$ = ")
        .replace("\\textless{}=", "$\\leq$")
    )


def _latex(c: dict, caption: bool = True, label: str | None = None) -> str:
    lines = [] if caption else ["% " + _latex_text(n) for n in c["notes"]]
    body = ["\\begin{tabular}{l" + "r" * len(c["columns"]) + "}", "\\toprule"]
    body.append(" & ".join(["Run", *map(latex_escape, c["columns"])]) + " \\\\")
    body.append("\\midrule")
    widest = [
        max((row[j][2] for row in c["grid"]), key=len, default="") for j in range(len(c["columns"]))
    ]
    for label_text, row in zip(c["labels"], c["grid"], strict=False):
        out = [latex_escape(label_text)]
        for j, (v, best, mk) in enumerate(row):
            # every cell of a column has the same width: the value (bold overlaid on a
            # regular-weight phantom, its mark in the overlay after the wider digits) plus
            # the phantom of the column's widest mark; marks themselves take no width
            mark = _latex_mark(mk) if mk else ""
            tail = f"\\phantom{{{_latex_mark(widest[j])}}}" if widest[j] else ""
            if best:
                cell = f"\\rlap{{\\textbf{{{v}}}{mark}}}\\phantom{{{v}}}"
            else:
                cell = v + (f"\\rlap{{{mark}}}" if mark else "")
            out.append(cell + tail)
        body.append(" & ".join(out) + " \\\\")
    body.append("\\bottomrule")
    body.append("\\end{tabular}")
    if not caption:
        return "\n".join(lines + body) + "\n"
    cols = c["columns"]
    what = cols[0] if len(cols) == 1 else ", ".join(cols[:-1]) + " and " + cols[-1]
    text = f"Mean {what} of {len(c['rows'])} runs. " + " ".join(c["notes"])
    out = ["\\begin{table}[t]", "\\centering", f"\\caption{{{_latex_text(text)}}}"]
    if label:
        out.append(f"\\label{{{label}}}")
    return "\n".join(out + body + ["\\end{table}"]) + "\n"


def _html(c: dict) -> str:
    def e(text: str) -> str:  # (control characters written as escapes first)
        return html.escape(one_line(text))
    head = "".join(f"<th>{e(x)}</th>" for x in ["run", *c["columns"]])
    rows = []
    for label, row in zip(c["labels"], c["grid"], strict=False):
        tds = [f"<th>{e(label)}</th>"]
        for v, best, mk in row:
            cell = f"<b>{v}</b>" if best else v
            if mk:
                cell += f"<sup>{e(mk)}</sup>"
            tds.append(f'<td style="text-align:right">{cell}</td>')
        rows.append("<tr>" + "".join(tds) + "</tr>")
    notes = "".join(f"<p>{e(n)}</p>" for n in c["notes"])
    return ('<table class="fasteval-compare">\n<thead><tr>' + head + "</tr></thead>\n<tbody>\n"
            + "\n".join(rows) + "\n</tbody>\n</table>\n" + notes + "\n")


def render(
    cmp: ComparisonResult,
    format: str = "text",
    *,
    marks: Marks | None = None,
    digits: int = 4,
    names: MeasureNames = "display",
    caption: bool = True,
    label: str | None = None,
) -> str:
    """Render the means table as ``text``, ``markdown``, ``latex`` (booktabs) or ``html``.

    ``csv`` / ``parquet`` are files: use :func:`write`. ``names``: ``"display"`` headers
    (``nDCG@10``) or ``"canonical"`` ones (``ndcg_cut_10``). LaTeX: ``caption=True`` gives
    a ``table`` float whose caption carries the notes (``label`` adds ``\\label``);
    ``caption=False`` a bare ``tabular`` with the notes as comments. Needs ``booktabs``.
    Means have ``digits`` decimals; a column whose largest mean would round to 0 or reaches
    1e9 is in scientific notation (``2.5000e-09``), with ``digits`` decimals too.

    Examples
    --------
    >>> import polars as pl
    >>> from fasteval.compare import compare
    >>> r = {"a": pl.DataFrame({"query_id": [1, 2], "P_5": [0.2, 0.4]}),
    ...      "b": pl.DataFrame({"query_id": [1, 2], "P_5": [0.2, 0.2]})}
    >>> tex = render(compare(r, baseline="b", tests="t"), "latex").splitlines()
    >>> print(tex[-5])
    a & \\rlap{\\textbf{0.3000}}\\phantom{0.3000} \\\\
    >>> print(tex[2][:60])
    \\caption{Mean P@5 of 2 runs. $\\dagger$ / $\\ddagger$: signifi
    """
    fmt = format.lower()
    c = cells(cmp, marks, digits, names)
    if fmt == "text":
        return _text(c)
    if fmt in ("markdown", "md"):
        return _markdown(c)
    if fmt in ("latex", "tex"):
        return _latex(c, caption=caption, label=label)
    if fmt == "html":
        return _html(c)
    raise ParameterError("format", "one of text, markdown, latex, html", format)


def write(
    cmp: ComparisonResult,
    path: str | os.PathLike[str],
    format: str | None = None,
    **options: object,
) -> None:
    """Write a report atomically (format from ``format`` or the file suffix).

    ``csv`` and ``parquet`` hold :meth:`Comparison.to_frame` (tests joined with effects);
    the other formats hold :func:`render`'s output.
    """
    from fasteval.io.atomic import atomic_path

    fmt = (format or SUFFIX_FORMATS.get(Path(path).suffix.lower(), "")).lower()
    if fmt == "md":
        fmt = "markdown"
    if fmt == "tex":
        fmt = "latex"
    if fmt not in FORMATS:
        raise ParameterError(
            "format", f"one of {', '.join(FORMATS)} (or a known file suffix)", format or str(path)
        )
    with atomic_path(path) as tmp:
        if fmt == "csv":
            cmp.to_frame().write_csv(tmp)
        elif fmt == "parquet":
            cmp.to_frame().write_parquet(tmp)
        else:
            tmp.write_text(render(cmp, fmt, **options), encoding="utf-8")


def details_text(cmp: ComparisonResult, digits: int = 4) -> str:
    """Plain-text list of every comparison: mean difference, CI, effect sizes, W/T/L, p-values.

    Effect sizes: ``d_z`` (Cohen's, paired), ``g`` (Hedges'), ``delta`` (Glass's, sd of
    ``versus``), ``ES`` (Sakai's, two-way ANOVA residual); a legend and the comparisons'
    notes (undefined statistics, tests that cannot reach significance) follow the list.

    Examples
    --------
    >>> import polars as pl
    >>> from fasteval.compare import compare
    >>> r = {"a": pl.DataFrame({"query_id": [1, 2, 3], "map": [0.5, 0.6, 0.2]}),
    ...      "b": pl.DataFrame({"query_id": [1, 2, 3], "map": [0.4, 0.6, 0.5]})}
    >>> print(details_text(compare(r, tests="t")).splitlines()[0])
    measure  run  versus     diff       95% CI    d_z      g  delta     ES  W/T/L    p(t)  p(t) adj
    """
    wide = cmp.effects
    for t in cmp.test_names:
        sub = cmp.tests.filter(pl.col("test") == t).select(
            "measure",
            "run_id",
            "versus",
            pl.col("p_value").alias(f"p({t})"),
            pl.col("p_adjusted").alias(f"p({t}) adj"),
        )
        wide = wide.join(sub, on=["measure", "run_id", "versus"], how="left", maintain_order="left")

    # a measure's differences and bounds in the notation of its means (:func:`cells`)
    fmt = {m: _number_format(g.get_column("mean").to_list(), digits)
           for (m,), g in cmp.means.group_by("measure", maintain_order=True)}

    def num(v: float | None, m: str) -> str:
        return "-" if v is None or v != v else format(v, fmt[m])

    def pv(v: float | None) -> str:
        if v is None or v != v:
            return "-"
        return f"{v:.2e}" if v < 10 ** (-digits) else f"{v:.{digits}f}"

    effect_cols = [
        (k, h) for k, h in (("cohens_d", "d_z"), ("hedges_g", "g"), ("glass_delta", "delta"),
                            ("sakai_es", "ES")) if k in cmp.effects.columns
    ]
    with_ci = cmp.ci is not None  # ci=None (--ci none): no interval, no column
    header = ["measure", "run", "versus", "diff", *([f"{100 * cmp.ci:g}% CI"] if with_ci else [])]
    header += [h for _, h in effect_cols] + ["W/T/L"]
    for t in cmp.test_names:
        header += [f"p({t})", f"p({t}) adj"]
    rows = []
    for r in wide.iter_rows(named=True):
        m = r["measure"]
        ci = "-" if r["ci_low"] is None else f"[{num(r['ci_low'], m)}, {num(r['ci_high'], m)}]"
        row = [one_line(m), one_line(r["run_id"]), one_line(r["versus"]),
               format(r["mean_diff"], "+" + fmt[m]), *([ci] if with_ci else [])]
        for k, _ in effect_cols:
            v = r[k]
            row.append("-" if v is None or v != v else f"{v:+.2f}")
        row.append(f"{r['wins']}/{r['ties']}/{r['losses']}")
        for t in cmp.test_names:
            row += [pv(r[f"p({t})"]), pv(r[f"p({t}) adj"])]
        rows.append(row)
    widths = [max(display_width(x[i]) for x in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(
            _pad(x, w, right=i >= 3) for i, (x, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in [header, *rows]
    ]
    legend = [
        "d_z: Cohen's d of the paired differences; g: Hedges' g (d_z, small-sample corrected); "
        "delta: Glass's Delta (sd of versus); ES: Sakai's ES_E (sqrt of the two-way ANOVA "
        "residual variance)."
    ]
    if "note" in cmp.tests.columns:
        for r in cmp.tests.filter(pl.col("note").is_not_null()).iter_rows(named=True):
            legend.append(one_line(f"{r['measure']} {r['run_id']} vs {r['versus']}, {r['test']}: "
                                 f"{r['note']}"))
    return "\n".join(lines + [""] + legend) + "\n"
