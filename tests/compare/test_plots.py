"""Plots: files written, family / recall-level detection from measure names."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from fasteval.compare import compare
from fasteval.compare.plots import (
    cutoff_families,
    plot_cutoff_curves,
    plot_pr_curves,
    recall_levels,
)
from fasteval.errors import InputError, ParameterError

pytest.importorskip("matplotlib")
pytest.importorskip("scipy")

PNG = b"\x89PNG\r\n\x1a\n"


def test_family_detection_any_spelling():
    names = [
        "ndcg_cut_1",
        "ndcg_cut_10",
        "ndcg_cut_100",
        "P_5",
        "P_10",
        "ndcg@3",
        "ndcg@20",
        "map",
        "recip_rank",
        "iprec_at_recall_0.00",
        "iprec_at_recall_1.00",
        "success_1",
    ]
    fams = cutoff_families(names)
    assert fams == {
        "ndcg_cut": [(1, "ndcg_cut_1"), (10, "ndcg_cut_10"), (100, "ndcg_cut_100")],
        "P": [(5, "P_5"), (10, "P_10")],
        "ndcg": [(3, "ndcg@3"), (20, "ndcg@20")],
    }
    assert recall_levels(names) == [(0.0, "iprec_at_recall_0.00"), (1.0, "iprec_at_recall_1.00")]
    assert recall_levels(["IPrec@0.5", "IPrec@0.25"]) == [(0.25, "IPrec@0.25"), (0.5, "IPrec@0.5")]


@pytest.fixture(scope="module")
def results():
    rng = np.random.default_rng(0)
    n = 25
    parts = []
    for run, shift in (("bm25", 0.0), ("dense", 0.1)):
        base = rng.uniform(0.1, 0.7, n)
        names = [f"ndcg_cut_{k}" for k in (1, 5, 10, 100)] + [
            f"iprec_at_recall_{lv:.2f}" for lv in np.linspace(0, 1, 11)
        ]
        for i, m in enumerate(names):
            v = np.clip(base + shift + 0.01 * i, 0, 1)
            parts.append(
                pl.DataFrame({"run_id": run, "query_id": np.arange(n), "measure": m, "value": v})
            )
    return pl.concat(parts)


def test_plots_write_png_and_svg(tmp_path, results):
    cmp = compare(results, measures=["ndcg_cut_10", "ndcg_cut_100"], tests="t")
    outs = [
        cmp.plot("differences", tmp_path / "d.png"),
        cmp.plot("distributions", tmp_path / "b.png"),
        plot_cutoff_curves(results, tmp_path / "c.png"),
        plot_pr_curves(results, tmp_path / "pr.svg"),
    ]
    for out in outs[:3]:
        assert out.read_bytes()[:8] == PNG
    svg = outs[3].read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "bm25" in svg and "dense" in svg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.png", "c.png", "d.png", "pr.svg"]


def test_cutoff_curves_from_comparison_means(tmp_path, results):
    cmp = compare(results, tests="t")  # every measure: families present in cmp.means
    assert cmp.plot("cutoffs", tmp_path / "c.png").stat().st_size > 1000


def test_plot_errors(tmp_path, results):
    cmp = compare(results, measures=["ndcg_cut_10"], tests="t")
    with pytest.raises(InputError, match="cutoff family"):
        plot_cutoff_curves(results.filter(pl.col("measure") == "ndcg_cut_10"), tmp_path / "x.png")
    with pytest.raises(InputError, match="iprec"):
        plot_pr_curves(results.filter(pl.col("measure") == "ndcg_cut_10"), tmp_path / "x.png")
    with pytest.raises(ParameterError, match="kind"):
        cmp.plot("violin", tmp_path / "x.png")
    with pytest.raises(ParameterError, match="path"):
        cmp.plot("differences", tmp_path / "x.gif")
    with pytest.raises(ParameterError, match="measure"):
        cmp.plot("differences", tmp_path / "x.png", measure="map")
    assert not list(tmp_path.iterdir())


def _svg_texts(path) -> list[str]:
    """The text elements of an SVG written with text as text (svg.fonttype none)."""
    import xml.etree.ElementTree as ET

    return ["".join(e.itertext()) for e in ET.parse(path).iter("{http://www.w3.org/2000/svg}text")]


@pytest.mark.parametrize("kind", ["differences", "distributions", "cutoffs", "pr"])
def test_run_names_are_drawn_literally(tmp_path, kind):
    """Dollar signs are text, not mathtext (which refused ``$\\frac{x$`` and drew
    ``b_$x^2$`` as math), and a run named ``_bm25`` keeps its legend entry (matplotlib
    leaves out labels starting with ``_``)."""
    import matplotlib

    from fasteval.compare.plots import PLOTS

    names = ["a$\\frac{x$", "b_$x^2$", "_bm25"]
    measures = ["ndcg_cut_5", "ndcg_cut_10", "iprec_at_recall_0.00", "iprec_at_recall_1.00"]
    rng = np.random.default_rng(3)
    long = pl.concat(
        pl.DataFrame({"run_id": name, "query_id": np.arange(6), "measure": m,
                      "value": rng.uniform(0, 1, 6)})
        for name in names for m in measures
    )
    source = long if kind in ("cutoffs", "pr") else compare(long, tests="t", n_resamples=100)
    path = tmp_path / "plot.svg"
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        PLOTS[kind](source, path)
    texts = _svg_texts(path)
    if kind == "differences":  # panel titles name each pair
        assert "a$\\frac{x$ - b_$x^2$" in texts and "b_$x^2$ - _bm25" in texts
    else:  # tick labels or legend entries name each run
        assert all(name in texts for name in names), texts


def test_characters_the_font_lacks_are_one_warning_per_plot(tmp_path, capsys):
    # matplotlib warns once per missing character and drawing pass (two passes with a tight
    # bounding box), 2 x 5 lines for a run named in Japanese; one warning names them all
    import warnings

    import matplotlib

    from fasteval.cli import main
    from fasteval.compare.plots import plot_distributions

    runs = {"検索モデル": pl.DataFrame({"query_id": [1, 2, 3], "map": [0.1, 0.2, 0.3]}),
            "bm25": pl.DataFrame({"query_id": [1, 2, 3], "map": [0.2, 0.2, 0.5]})}
    cmp = compare(runs, tests="t", ci=None)
    with matplotlib.rc_context({"font.family": "DejaVu Sans"}), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot_distributions(cmp, tmp_path / "d.png")
    assert (tmp_path / "d.png").read_bytes().startswith(PNG)
    texts = [str(w.message) for w in caught]
    assert texts == [f"{tmp_path / 'd.png'}: the plot's font (DejaVu Sans) has no glyph for 5 "
                     "character(s) of the names (検索モデル), drawn as empty boxes; set "
                     "matplotlib's font.family to a font that has them"]
    wide = tmp_path / "res.parquet"
    pl.concat([df.with_columns(run_id=pl.lit(name)) for name, df in runs.items()]).write_parquet(wide)
    with matplotlib.rc_context({"font.family": "DejaVu Sans"}):
        assert main(["compare", "--results", str(wide), "--test", "t", "--plot",
                     f"differences={tmp_path / 'x.svg'}"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no glyph for 5 character(s) of the names (検索モデル)" in err


def test_plots_leave_the_session_s_matplotlib_backend_alone(tmp_path):
    # plotting does not call matplotlib.use("Agg"), even when pyplot is not yet imported: a
    # notebook (ipykernel sets MPLBACKEND to its inline backend) keeps showing its own plots
    import subprocess
    import sys

    script = (
        "import matplotlib, polars as pl\n"
        "from fasteval.compare import compare\n"
        "r = {'a': pl.DataFrame({'query_id': [1, 2, 3], 'map': [0.1, 0.2, 0.3]}),\n"
        "     'b': pl.DataFrame({'query_id': [1, 2, 3], 'map': [0.2, 0.2, 0.5]})}\n"
        "c = compare(r, tests='t', ci=None)\n"
        f"c.plot('distributions', {str(tmp_path / 'a.png')!r})\n"
        f"c.plot('differences', {str(tmp_path / 'b.svg')!r})\n"
        "import matplotlib.pyplot as plt\n"
        "print(matplotlib.get_backend(), len(plt.get_fignums()))\n"
    )
    env = {**__import__("os").environ, "MPLBACKEND": "svg"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out == "svg 0\n"
    assert (tmp_path / "a.png").read_bytes().startswith(PNG)
    assert b"<svg" in (tmp_path / "b.svg").read_bytes()[:400]
