"""Plots for comparisons (matplotlib, the ``plot`` extra), written to PNG or SVG.

* :func:`plot_differences` - sorted per-query differences of each run against the other.
* :func:`plot_distributions` - per-query score distributions per run (box plots).
* :func:`plot_cutoff_curves` - mean of a cutoff family (``ndcg_cut_1 .. ndcg_cut_100``,
  ``P_5 .. P_1000``, ``ndcg@1 .. ndcg@100``) against the cutoff, one line per run.
* :func:`plot_pr_curves` - interpolated precision at the eleven (or more) recall levels
  (``iprec_at_recall_0.00 .. iprec_at_recall_1.00``), one line per run.

Family and cutoff are read from the measure names present: the family is the part before
the last ``_`` or ``@``, the cutoff the trailing integer (recall levels: the trailing
decimal number of an ``iprec`` family).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from fasteval.errors import InputError, ParameterError, require_extra

_CUTOFF = re.compile(r"^(?P<family>.+?)[_@](?P<k>\d+)(?P<options>\(.*\))?$")
_RECALL = re.compile(r"^(?P<family>.*iprec.*?)[_@](?P<level>\d*\.\d+|[01])$", re.IGNORECASE)


def cutoff_families(names: list[str]) -> dict[str, list[tuple[int, str]]]:
    """Group measure names into cutoff families with at least two cutoffs.

    Examples
    --------
    >>> cutoff_families(["ndcg_cut_5", "ndcg_cut_10", "P@5", "P@10", "map", "P@20"])
    {'ndcg_cut': [(5, 'ndcg_cut_5'), (10, 'ndcg_cut_10')], 'P': [(5, 'P@5'), (10, 'P@10'), (20, 'P@20')]}
    >>> cutoff_families(["P_5(rel=2)", "P_10(rel=2)", "P_10"])
    {'P(rel=2)': [(5, 'P_5(rel=2)'), (10, 'P_10(rel=2)')]}
    """
    fams: dict[str, list[tuple[int, str]]] = {}
    for name in names:
        if _RECALL.match(name):
            continue
        m = _CUTOFF.match(name)
        if m:
            fams.setdefault(m["family"] + (m["options"] or ""), []).append((int(m["k"]), name))
    return {f: sorted(v) for f, v in fams.items() if len(v) >= 2}


def recall_levels(names: list[str]) -> list[tuple[float, str]]:
    """Interpolated-precision measures and their recall levels, sorted by level.

    Examples
    --------
    >>> recall_levels(["iprec_at_recall_0.10", "map", "iprec_at_recall_0.00"])
    [(0.0, 'iprec_at_recall_0.00'), (0.1, 'iprec_at_recall_0.10')]
    """
    out = []
    for name in names:
        m = _RECALL.match(name)
        if m:
            out.append((float(m["level"]), name))
    return sorted(out)


def check_path(path: str | os.PathLike[str], name: str = "path") -> str:
    """The image format of a plot file (``png``, ``svg`` or ``pdf``, from its suffix).

    Examples
    --------
    >>> check_path("diff.PNG")
    'png'
    """
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in ("png", "svg", "pdf"):
        raise ParameterError(name, "a .png, .svg or .pdf file", str(path))
    return fmt


PLOT_CUTOFFS = (1, 3, 5, 10, 15, 20, 30, 50, 100, 200, 500, 1000)
"""The cutoffs at which a ``cutoffs`` plot of scored runs draws each measure with a cutoff
(besides the measure's own)."""


def plot_measures(kind: str, measures: Sequence[str]) -> list[str]:
    """What plot ``kind`` draws for runs scored with ``measures``: the measures to evaluate
    for the plot alone, never compared nor counted in a multiple-testing correction.

    * ``differences`` and ``distributions`` draw the compared measures: none.
    * ``pr`` draws ``iprec_at_recall_0.00 .. 1.00``, whatever the compared measures.
    * ``cutoffs`` draws each measure that has a rank cutoff (``ndcg@10``, ``P_5``) at
      :data:`PLOT_CUTOFFS` and its own cutoff; with no such measure it is refused: a
      :class:`~fasteval.errors.ParameterError` naming the measures it needs.

    Parameters
    ----------
    kind : str
        A key of :data:`PLOTS`.
    measures : sequence of str
        The compared measures, in any spelling the measure parser knows.

    Returns
    -------
    list of str
        Canonical measure names (empty: the plot draws the comparison itself).

    Examples
    --------
    >>> plot_measures("cutoffs", ["map", "ndcg@10"])[:4]
    ['ndcg_cut_1', 'ndcg_cut_3', 'ndcg_cut_5', 'ndcg_cut_10']
    >>> len(plot_measures("pr", ["map"])), plot_measures("differences", ["map"])
    (11, [])
    >>> plot_measures("cutoffs", ["map"])
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: --plot cutoffs must be drawn from a compared measure that has a rank cutoff (e.g. -m ndcg@10 or -m P@10; the plot evaluates it at cutoffs 1 to 1000 for itself), got ['map']
    """
    import dataclasses

    from fasteval.measures import parse_measures

    if kind not in PLOTS:
        raise ParameterError("kind", f"one of {', '.join(PLOTS)}", kind)
    if kind == "pr":
        return [m.name for m in parse_measures(["iprec_at_recall"])]
    if kind != "cutoffs":
        return []
    out: dict[str, None] = {}
    for m in parse_measures(list(measures)):
        if m.cutoff is None or not _CUTOFF.match(m.name):
            continue
        for k in sorted({*PLOT_CUTOFFS, m.cutoff}):
            out[dataclasses.replace(m, cutoff=k, text=None).name] = None
    if not out:
        raise ParameterError(
            "--plot cutoffs", "drawn from a compared measure that has a rank cutoff (e.g. "
            f"-m ndcg@10 or -m P@10; the plot evaluates it at cutoffs {PLOT_CUTOFFS[0]} to "
            f"{PLOT_CUTOFFS[-1]} for itself)", list(measures))
    return list(out)


def check_data(kind: str, names: list[str]) -> None:
    """Raise the :class:`InputError` that plot ``kind`` would raise for results holding the
    measures ``names`` (``cutoffs`` needs a cutoff family, ``pr`` two recall levels), so that
    a command can refuse before it writes anything."""
    if kind == "cutoffs" and not cutoff_families(names):
        raise InputError(
            "no cutoff family with two or more cutoffs (e.g. ndcg_cut_5, ndcg_cut_10) in the results",
            source="results",
        )
    if kind == "pr" and len(recall_levels(names)) < 2:
        raise InputError(
            "no interpolated precision measures (iprec_at_recall_0.00 .. 1.00) in the results",
            source="results",
        )


def require_plotting(who: str = "plotting") -> None:
    """Refuse a plot up front where matplotlib (the ``plot`` extra) is not installed: a
    :class:`~fasteval.errors.MissingExtraError` (also an ``ImportError``) saying
    ``pip install ".[plot]"``, before anything is computed or written.

    Examples
    --------
    >>> require_plotting()  # matplotlib installed: nothing happens
    """
    require_extra("plot", who)


def _literal(text: object) -> str:
    """A name as matplotlib draws it literally: ``$`` escaped (a pair of them would start
    mathtext, which renders ``a_$x^2$`` as math and refuses ``$\\frac$``).

    Examples
    --------
    >>> print(_literal("cost$ and $x^2$"))
    cost\\$ and \\$x^2\\$
    """
    return str(text).replace("$", "\\$")


def _legend(ax: Any, lines: list[Any], labels: list[str]) -> None:
    """A legend of every line, given explicitly: matplotlib leaves out the lines whose own
    label starts with ``_`` (a run named ``_bm25`` would be missing)."""
    ax.legend(lines, [_literal(x) for x in labels], fontsize=8)


def _figure(**options: Any) -> Any:
    """A bare :class:`matplotlib.figure.Figure`: drawn straight to its file, outside pyplot,
    so that plotting neither imports pyplot nor chooses matplotlib's backend for the
    process (a notebook's inline plots keep working) nor leaves a figure open."""
    require_plotting()
    from matplotlib.figure import Figure

    return Figure(**options)


_GLYPH = re.compile(r"^Glyph (?P<code>\d+) .*missing from font\(s\) (?P<font>.+?)\.?$")


def _save(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``fig`` atomically. matplotlib's warnings of characters its font lacks (one per
    character and drawing pass: two dozen lines for one CJK run name) become one warning
    naming the file, the font and the characters."""
    import warnings

    from fasteval.io.atomic import atomic_path

    target = Path(path)
    fmt = check_path(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with atomic_path(target) as tmp:
            fig.savefig(tmp, format=fmt, dpi=150, bbox_inches="tight")
    chars: dict[str, None] = {}
    fonts: dict[str, None] = {}
    for w in caught:
        m = _GLYPH.match(str(w.message))
        if m is None:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            continue
        chars[chr(int(m["code"]))] = None
        fonts[m["font"]] = None
    if chars:
        shown = "".join(list(chars)[:20]) + (f" and {len(chars) - 20} more" if len(chars) > 20
                                             else "")
        warnings.warn(
            f"{target}: the plot's font ({', '.join(fonts)}) has no glyph for {len(chars)} "
            f"character(s) of the names ({shown}), drawn as empty boxes; set matplotlib's "
            "font.family to a font that has them",
            UserWarning,
            stacklevel=3,
        )
    return target


def _means(source: Any) -> tuple[list[str], list[str], dict[tuple[str, str], float]]:
    """The measures and the runs (in order of appearance) and ``{(run_id, measure): mean}``
    of a Comparison or anything compare() accepts."""
    from fasteval.compare.result import ComparisonResult

    if isinstance(source, ComparisonResult):
        means = source.means.select("run_id", "measure", "mean")
    else:
        from fasteval.compare._data import load_results

        means = load_results(source).group_by("run_id", "measure", maintain_order=True).agg(
            pl.col("value").mean().alias("mean"))
    return (means["measure"].unique(maintain_order=True).to_list(),
            means["run_id"].unique(maintain_order=True).to_list(),
            {(r, m): v for r, m, v in means.iter_rows()})


def _grid(k: int, width: float = 4.0, height: float = 3.2):
    cols = min(k, 3)
    rows = math.ceil(k / cols)
    fig = _figure(figsize=(width * cols, height * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax in axes.flat[k:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:k])


def plot_differences(cmp: Any, path: str | os.PathLike[str], measure: str | None = None) -> Path:
    """Sorted per-query differences (``run - versus``) for every comparison of one measure.

    Examples
    --------
    >>> import polars as pl, tempfile, pathlib
    >>> from fasteval.compare import compare
    >>> r = {"a": pl.DataFrame({"query_id": [1, 2, 3], "map": [0.5, 0.6, 0.2]}),
    ...      "b": pl.DataFrame({"query_id": [1, 2, 3], "map": [0.4, 0.6, 0.5]})}
    >>> out = plot_differences(compare(r, tests="t"), pathlib.Path(tempfile.mkdtemp()) / "d.png")
    >>> out.stat().st_size > 0
    True
    """
    require_plotting()
    measure = _pick_measure(cmp, measure)
    pm = cmp.paired[measure]
    eff = cmp.effects.filter(pl.col("measure") == measure)
    fig, axes = _grid(eff.height)
    for ax, r in zip(axes, eff.iter_rows(named=True), strict=True):
        i, j = cmp.systems.index(r["run_id"]), cmp.systems.index(r["versus"])
        d = np.sort(pm.scores[i] - pm.scores[j])[::-1]
        x = np.arange(d.size)
        colors = np.where(d > 0, "#1b7837", np.where(d < 0, "#b2182b", "#999999"))
        if d.size <= 400:
            ax.bar(x, d, width=1.0, color=colors, linewidth=0)
        else:
            ax.fill_between(x, d, 0, where=d > 0, color="#1b7837", step="mid", linewidth=0)
            ax.fill_between(x, d, 0, where=d < 0, color="#b2182b", step="mid", linewidth=0)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_title(_literal(f"{r['run_id']} - {r['versus']}"), fontsize=10)
        ax.set_xlabel(
            f"queries, sorted (wins {r['wins']}, ties {r['ties']}, losses {r['losses']})",
            fontsize=8,
        )
        ax.set_ylabel(_literal(f"\u0394 {measure}"), fontsize=9)
        ax.set_xlim(-0.5, max(d.size - 0.5, 0.5))
    fig.suptitle(_literal(f"Per-query differences: {measure}"), fontsize=11)
    return _save(fig, path)


def _pick_measure(cmp: Any, measure: str | None) -> str:
    if measure is None:
        return cmp.measures[0]
    if measure not in cmp.measures:
        raise ParameterError("measure", f"one of {list(cmp.measures)}", measure)
    return measure


def plot_distributions(
    cmp: Any, path: str | os.PathLike[str], measures: list[str] | None = None
) -> Path:
    """Box plots (with the mean as a diamond) of per-query scores per run, one panel per measure."""
    require_plotting()
    chosen = list(cmp.measures) if measures is None else [_pick_measure(cmp, m) for m in measures]
    fig, axes = _grid(len(chosen), width=max(4.0, 0.9 * len(cmp.systems) + 1.5))
    for ax, m in zip(axes, chosen, strict=True):
        scores = cmp.paired[m].scores
        ax.boxplot(list(scores), showmeans=True, meanprops={"marker": "D", "markersize": 4})
        ax.set_xticks(
            range(1, len(cmp.systems) + 1), [_literal(s) for s in cmp.systems], rotation=30,
            ha="right", fontsize=8,
        )
        ax.set_title(_literal(m), fontsize=10)
        ax.set_ylabel("per-query score", fontsize=9)
    fig.suptitle("Per-query score distributions", fontsize=11)
    return _save(fig, path)


def plot_cutoff_curves(
    source: Any, path: str | os.PathLike[str], families: list[str] | None = None
) -> Path:
    """Mean measure at each cutoff, one line per run, one panel per cutoff family."""
    require_plotting()
    names, runs, lookup = _means(source)
    fams = cutoff_families(names)
    if families is not None:
        missing = [f for f in families if f not in fams]
        if missing:
            raise ParameterError("families", f"cutoff families present ({sorted(fams)})", missing)
        fams = {f: fams[f] for f in families}
    if not fams:
        check_data("cutoffs", [])
    fig, axes = _grid(len(fams), width=4.5)
    for ax, (fam, items) in zip(axes, fams.items(), strict=True):
        ks = [k for k, _ in items]
        lines = []
        for run in runs:
            ys = [lookup.get((run, name), np.nan) for _, name in items]
            lines += ax.plot(ks, ys, marker="o", markersize=3)
        if ks[-1] / max(ks[0], 1) >= 20:
            ax.set_xscale("log")
        if len(ks) <= 12:
            ax.set_xticks(ks, [str(k) for k in ks])
            ax.minorticks_off()
        ax.set_xlabel("cutoff k", fontsize=9)
        ax.set_ylabel(_literal(f"mean {fam}@k"), fontsize=9)
        ax.set_title(_literal(fam), fontsize=10)
        ax.grid(alpha=0.3)
        _legend(ax, lines, runs)
    return _save(fig, path)


def plot_pr_curves(source: Any, path: str | os.PathLike[str]) -> Path:
    """Interpolated precision-recall curves (mean over queries), one line per run."""
    require_plotting()
    names, runs, lookup = _means(source)
    levels = recall_levels(names)
    if len(levels) < 2:
        check_data("pr", [])
    fig = _figure(figsize=(5, 4), layout="constrained")
    ax = fig.subplots()
    xs = [lv for lv, _ in levels]
    lines = []
    for run in runs:
        lines += ax.plot(
            xs, [lookup.get((run, n), np.nan) for _, n in levels], marker="o", markersize=3
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_title("Precision-recall")
    ax.grid(alpha=0.3)
    _legend(ax, lines, runs)
    return _save(fig, path)


PLOTS = {
    "differences": plot_differences,
    "distributions": plot_distributions,
    "cutoffs": plot_cutoff_curves,
    "pr": plot_pr_curves,
}
