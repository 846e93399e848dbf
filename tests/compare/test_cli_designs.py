"""``fasteval compare`` options for the new procedures, and ``fasteval power``."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from fasteval.cli import main
from fasteval.compare import compare
from fasteval.compare.power import pilot_variance, topic_set_size

pytest.importorskip("scipy")


@pytest.fixture(scope="module")
def results_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("res")
    rng = np.random.default_rng(1)
    topic = rng.uniform(0.2, 0.7, 25)
    parts = []
    for k, shift in (("bm25", 0.0), ("dense", 0.08), ("splade", 0.04)):
        for measure in ("ndcg_cut_10", "P_10"):
            v = np.round(np.clip(topic + shift + rng.normal(0, 0.1, 25), 0, 1), 1)
            parts.append(
                pl.DataFrame(
                    {
                        "run_id": k,
                        "query_id": [f"q{i}" for i in range(25)],
                        "measure": measure,
                        "value": v,
                    }
                )
            )
    path = d / "per_query.parquet"
    pl.concat(parts).write_parquet(path)
    return path


def _cli(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_compare_new_options_match_python_api(results_file, tmp_path, capsys):
    argv = [
        "compare", "--results", str(results_file), "--baseline", "bm25",
        "--test", "wilcoxon", "--test", "bootstrap", "--alternative", "greater",
        "--ci-method", "bca", "--zero-method", "pratt", "--continuity",
        "--resamples", "500", "--format", "csv",
    ]  # fmt: skip
    rc, out, err = _cli(argv, capsys)
    assert rc == 0, err
    got = pl.read_csv(out.encode())
    ref = compare(
        str(results_file), baseline="bm25", tests=["wilcoxon", "bootstrap"],
        alternative="greater", ci_method="bca", zero_method="pratt", continuity=True,
        n_resamples=500,
    ).to_frame()  # fmt: skip
    np.testing.assert_allclose(got["p_value"].to_numpy(), ref["p_value"].to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(got["ci_low"].to_numpy(), ref["ci_low"].to_numpy(), rtol=1e-12)
    assert "hedges_g" in got.columns and "note" in got.columns


def test_compare_maxt_and_latex_options(results_file, tmp_path, capsys):
    out_tex = tmp_path / "t.tex"
    argv = [
        "compare", "--results", str(results_file), "--baseline", "bm25",
        "--test", "randomization", "--correction", "stepdown", "--family", "measure",
        "--resamples", "999", "-o", str(out_tex), "--label", "tab:x",
    ]  # fmt: skip
    rc, _, err = _cli(argv, capsys)
    assert rc == 0, err
    tex = out_tex.read_text()
    assert "\\label{tab:x}" in tex and "Run & nDCG@10 & P@10" in tex
    assert "Westfall-Young step-down max-T correction within each measure" in tex
    rc, _, err = _cli([*argv[:-2], "--no-caption", "--names", "canonical"], capsys)
    tex = out_tex.read_text()
    assert tex.startswith("% ") and "ndcg\\_cut\\_10" in tex and "\\caption" not in tex
    rc, _, err = _cli([*argv[:9], "--test", "t"], capsys)
    assert rc == 2 and "--correction must be used with tests=['randomization']" in err
    rc, _, err = _cli(
        ["compare", "no-qrels.txt", "no-run.txt", "-m", "P@5", "--test", "tukey",
         "--alternative", "less"],
        capsys,
    )  # fmt: skip
    assert rc == 2 and "--alternative must be 'two-sided' when a Tukey HSD test" in err


def test_power_from_pilot_and_from_sd(results_file, capsys):
    rc, out, err = _cli(
        ["power", "--results", str(results_file), "-m", "ndcg@10", "--min-diff", "0.05",
         "--min-diff", "0.1", "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert rc == 0, err
    table = pl.read_csv(out.encode())
    sd = pilot_variance(str(results_file), "ndcg_cut_10")["sd_diff"][0]
    assert table["measure"].to_list() == ["ndcg_cut_10"] * 2
    assert table["topics"].to_list() == [topic_set_size(0.05, sd), topic_set_size(0.1, sd)]
    assert all(p >= 0.8 for p in table["power"])
    rc, out, _ = _cli(["power", "--sd", "0.2", "--min-diff", "0.1", "--topics", "20"], capsys)
    assert rc == 0 and out.splitlines()[1].split() == ["-", "0.2", "0.1", "0.05", "0.565", "20"]
    rc, out, _ = _cli(
        ["power", "--sd", "0.1", "--min-diff", "0.1", "--design", "anova", "--systems", "5"],
        capsys,
    )
    assert rc == 0 and out.splitlines()[1].split()[-1] == "26"


def test_power_errors(capsys):
    rc, _, err = _cli(["power", "--min-diff", "0.1"], capsys)
    assert rc == 2 and "--results/--sd must be exactly one of them" in err
    rc, _, err = _cli(["power", "--sd", "-1", "--min-diff", "0.1"], capsys)
    assert rc == 2 and "--sd must be a finite number > 0, got -1.0" in err
    rc, _, err = _cli(["power", "--sd", "0.1", "--min-diff", "0.1", "--design", "anova"], capsys)
    assert rc == 2 and "--systems must be an integer from 2 to 10000" in err


@pytest.mark.parametrize("extra, message", [
    (["--topics", "1"], "error: --topics must be an integer >= 2, got 1"),
    (["--alpha", "1.5"], "error: --alpha must be a number between 0 and 1, got 1.5"),
    (["--power", "1"], "error: --power must be a number between 0 and 1, got 1.0"),
    (["--min-diff", "0"], "error: --min-diff must be a finite number > 0, got 0.0"),
    (["--design", "anova", "--systems", "3", "--alternative", "less"],
     "error: --alternative must be 'two-sided' for design='anova', got 'less'"),
])
def test_power_errors_name_the_options(capsys, extra, message):
    """The API's names (n_topics, alpha, min_diff...) are worded as the command's options."""
    rc, _, err = _cli(["power", "--sd", "0.1", "--min-diff", "0.1", *extra], capsys)
    assert rc == 2 and message in err


def test_power_pilot_that_overflows(tmp_path, capsys):
    """A pilot whose variance overflows is an error about the pilot, not '--sd must be a
    finite number > 0, got inf' (no --sd was given)."""
    path = tmp_path / "pilot.parquet"
    pl.DataFrame({"run_id": ["a", "a", "b", "b"], "query_id": ["q1", "q2", "q1", "q2"],
                  "measure": "map", "value": [1e308, 0.0, 0.0, 1e308]}).write_parquet(path)
    rc, _, err = _cli(["power", "--results", str(path), "--min-diff", "0.1"], capsys)
    assert rc == 2
    assert "results: measure 'map': the pilot runs' standard deviation overflows" in err
