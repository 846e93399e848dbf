"""compare(): every parameter validated (API and CLI) before any work, and non-finite or
null results refused with the row they are on."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from fasteval.cli import main
from fasteval.compare import compare, core
from fasteval.errors import InputError, ParameterError

RESULTS = {
    "a": pl.DataFrame({"query_id": [1, 2, 3, 4], "map": [0.2, 0.4, 0.6, 0.8]}),
    "b": pl.DataFrame({"query_id": [1, 2, 3, 4], "map": [0.1, 0.3, 0.2, 0.5]}),
}


@pytest.mark.parametrize("kwargs, fragment", [
    ({"n_resamples": 10**12}, "n_resamples must be an integer from 1 to 1_000_000_000"),
    ({"n_resamples": 0}, "n_resamples must be"),
    ({"seed": -1}, "seed must be an integer >= 0 or None"),
    ({"seed": True}, "seed must be"),
    ({"seed": 1.5}, "seed must be"),
    ({"alpha": float("nan")}, "alpha must be"),
    ({"ci": 1.0}, "ci must be"),
    # an empty list was a TypeError from numpy ("Cannot cast array data from dtype('O')")
    ({"measures": []}, r"measures must be at least one measure name, or None for all \(\['map'\]\)"),
    ({"measures": ()}, "measures must be at least one measure name"),
    # an unknown name is an error of mark_test, not of tests
    ({"tests": ["t", "sign"], "mark_test": "foo"},
     r"^mark_test must be one of the tests run \(\['t', 'sign'\]\), got 'foo'$"),
    ({"tests": ["t"], "mark_test": "wilcoxon"}, r"^mark_test must be one of the tests run"),
])
def test_bad_parameters_are_parameter_errors(kwargs, fragment):
    with pytest.raises(ParameterError, match=fragment):
        compare(RESULTS, **kwargs)


def test_bootstrap_too_large_for_memory_is_refused_before_allocating(monkeypatch):
    monkeypatch.setattr(core, "_memory_bytes", lambda: 2**30)  # a 1 GiB machine
    # 2 runs, 1 pair, 1 measure: 8 * (8 + 12) + 16 = 176 bytes per resample; half of 1 GiB / 176
    with pytest.raises(ParameterError, match="at most 3_050_402 here") as exc:
        compare(RESULTS, n_resamples=100_000_000, tests="bootstrap")
    assert "16.4 GiB" in str(exc.value)
    # the randomization test alone keeps no array per resample
    out = compare(RESULTS, n_resamples=2_000, tests="randomization", ci=None)
    assert out.tests["p_value"].to_list() == [0.125]  # exact: 2 of 16 sign flips


@pytest.mark.parametrize(("n_runs", "n_measures", "baseline", "ci_method"), [
    (2, 1, "r0", "t"), (4, 3, "r0", "t"), (6, 2, None, "percentile"), (10, 1, None, "bca"),
])
def test_bootstrap_memory_estimate_bounds_the_traced_peak(n_runs, n_measures, baseline,
                                                           ci_method):
    # the check refuses what needs more than half the memory, so its estimate must bound
    # the bootstrap's traced peak: one 1.3 to 1.5 times too low lets a 12 GiB estimate on a
    # 24 GiB machine allocate about 18 GiB
    import tracemalloc

    rng = np.random.default_rng(0)
    runs = {f"r{s}": pl.DataFrame({"query_id": range(50),
                                   **{f"m{k}": rng.uniform(0, 1, 50) for k in range(n_measures)}})
            for s in range(n_runs)}
    options = {"tests": "bootstrap", "baseline": baseline, "ci_method": ci_method}
    compare(runs, n_resamples=100, **options)  # compiled and imported outside the trace
    R = 100_000
    tracemalloc.start()
    try:
        compare(runs, n_resamples=R, **options)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    n_pairs = n_runs - 1 if baseline else n_runs * (n_runs - 1) // 2
    assert peak <= R * core.bootstrap_bytes(n_measures, n_runs, n_pairs), peak / R


def test_memory_refusal_without_bootstrap_test_names_the_interval(monkeypatch, tmp_path, capsys):
    """Without --test bootstrap the bootstrap is the confidence interval's: the refusal says
    so, and --ci none (ci=None) leaves it out."""
    monkeypatch.setattr(core, "_memory_bytes", lambda: 2**30)
    with pytest.raises(ParameterError, match=r"at most 3_050_402 here: .*; it computes the "
                       r"confidence intervals of the mean differences, which ci=None \(--ci "
                       r"none\) leaves out"):
        compare(RESULTS, n_resamples=100_000_000, tests="t")
    with pytest.raises(ParameterError) as exc:
        compare(RESULTS, n_resamples=100_000_000, tests=("t", "bootstrap"))
    assert "ci=None" not in str(exc.value)
    path = tmp_path / "r.parquet"
    pl.concat([t.with_columns(run_id=pl.lit(n)) for n, t in RESULTS.items()]).write_parquet(path)
    rc = main(["compare", "--results", str(path), "--test", "t", "--resamples", "1e8",
               "--ci", "none", "--format", "csv"])
    out = capsys.readouterr().out
    assert rc == 0
    row = pl.read_csv(out.encode()).row(0, named=True)
    assert (row["ci_low"], row["ci_high"]) == (None, None)
    assert row["p_value"] == pytest.approx(0.0576688856224373, rel=1e-12)  # scipy ttest_rel
    with pytest.raises(SystemExit) as stop:
        main(["compare", "--results", str(path), "--ci", "x"])
    assert stop.value.code == 2
    assert "argument --ci: expected a number or none, got 'x'" in capsys.readouterr().err


def test_numpy_float32_alpha_and_ci_are_numbers():
    import numpy as np

    # np.float32 is no Python float: "alpha must be a number between 0 and 1, got 0.05"
    out = compare(RESULTS, tests="t", alpha=np.float32(0.25), ci=np.float32(0.9), n_resamples=200)
    assert out.alpha == pytest.approx(0.25) and out.ci == pytest.approx(0.9)
    assert out.tests["significant"].to_list() == [True]  # p = 0.0577 <= 0.25
    with pytest.raises(ParameterError, match="alpha must be"):
        compare(RESULTS, alpha=np.bool_(True))


def test_seed_zero_and_none_are_accepted():
    a = compare(RESULTS, tests="bootstrap", n_resamples=500, seed=0)
    b = compare(RESULTS, tests="bootstrap", n_resamples=500, seed=0)
    assert a.tests["p_value"].to_list() == b.tests["p_value"].to_list()
    assert compare(RESULTS, tests="t", seed=None).tests.height == 1


@pytest.mark.parametrize("bad, word", [(float("inf"), "+inf"), (float("-inf"), "-inf"),
                                       (float("nan"), "NaN")])
@pytest.mark.parametrize("test", ["tukey", "t", "bootstrap"])
def test_non_finite_values_are_refused_with_their_row(bad, word, test):
    results = {"a": RESULTS["a"], "b": RESULTS["b"].with_columns(pl.Series("map", [0.1, bad, 0.2, 0.5]))}
    with pytest.raises(InputError) as exc:
        compare(results, tests=test)
    assert f"value is {word} for run 'b', query 2" in str(exc.value)
    # the row and column of the table given for run b (not of the long table built from both)
    assert (exc.value.source, exc.value.row, exc.value.column) == ("results['b']", 1, "map")


def test_non_finite_values_in_files_are_refused_at_their_file_line_and_column(tmp_path, capsys):
    # a text file by its 1-based line (header counted), a parquet file by its 0-based row
    good, bad = tmp_path / "bm25.csv", tmp_path / "dense.csv"
    good.write_text("query_id,map,P_5\nq1,0.5,0.2\nq2,0.3,0.4\nq3,0.1,0.0\n")
    bad.write_text("query_id,map,P_5\nq1,0.5,0.2\nq2,0.3,0.4\nq3,0.2,NaN\n")
    rc, out, err = _cli(["compare", "--results", str(good), str(bad), "--test", "t"], capsys)
    assert (rc, out) == (2, "")
    assert err == (f"fasteval: error: {bad}, line 4, column 'P_5': value is NaN for run 'dense', "
                   "query 'q3', measure 'P_5'; drop the row or use a finite number\n")
    long = tmp_path / "long.parquet"
    pl.DataFrame({"run_id": ["a", "b", "a", "b"], "query_id": ["1", "1", "2", "2"],
                  "measure": ["map"] * 4, "value": [0.1, 0.2, 0.3, float("-inf")]}).write_parquet(long)
    with pytest.raises(InputError) as exc:
        compare([good, long])
    assert (exc.value.source, exc.value.row, exc.value.column) == (str(long), 3, "value")
    assert "value is -inf for run 'b', query '2', measure 'map'" in str(exc.value)


def test_pandas_nan_and_na_are_missing():
    """pandas' missing value is NaN (a polars null becomes NaN in ``to_pandas()``, and a
    pivot fills holes with it): the query is missing for that run, as with pandas' NA."""
    pd = pytest.importorskip("pandas")
    a = RESULTS["a"].to_pandas()
    for missing in (float("nan"), None):
        b = pd.DataFrame({"query_id": [1, 2, 3, 4], "map": [0.1, missing, 0.2, 0.5]})
        if missing is None:
            b["map"] = pd.array([0.1, None, 0.2, 0.5], dtype="Float64")
        means = compare({"a": a, "b": b}, tests="t", ci=None).means
        assert means.select("n_used", "n_missing").rows() == [(3, 0), (3, 1)]
        assert means["mean"].to_list() == pytest.approx([(0.2 + 0.6 + 0.8) / 3, (0.1 + 0.2 + 0.5) / 3])
    polars_nan = pl.DataFrame({"query_id": [1, 2], "map": [0.1, float("nan")]})
    with pytest.raises(InputError, match="value is NaN for run 'b', query 2, measure 'map'"):
        compare({"a": RESULTS["a"], "b": polars_nan}, tests="t")


def test_null_ids_in_results_are_refused():
    long = pl.DataFrame({"run_id": ["a", "a", None, "b"], "query_id": [1, 2, 1, 2],
                         "measure": ["map"] * 4, "value": [0.1, 0.2, 0.3, 0.4]})
    with pytest.raises(InputError) as exc:
        compare(long)
    assert (exc.value.row, exc.value.column) == (2, "run_id")


def test_mapping_keys_that_name_one_run_are_refused_as_such():
    # 1 and "1" are both run "1": it read as "2 rows for run '1', query 1, measure 'map'"
    with pytest.raises(InputError, match=r"two runs named '1' \(keys 1 and '1'\); give each run "
                                         "a distinct name"):
        compare({1: RESULTS["a"], "1": RESULTS["b"], "b": RESULTS["b"]})


def _cli(argv, capsys):
    rc = main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.fixture
def result_file(tmp_path):
    path = tmp_path / "res.parquet"
    pl.concat([df.with_columns(pl.lit(name).alias("run_id")) for name, df in RESULTS.items()]) \
        .select("run_id", "query_id", "map").write_parquet(path)
    return path


@pytest.mark.parametrize("extra, fragment", [
    (["--resamples", "1e12"], "--resamples must be an integer from 1 to 1_000_000_000"),
    (["--resamples", "1000000000000"], "--resamples must be an integer from 1"),
    (["--resamples", "1.5"], "--resamples must be a whole number"),
    (["--seed", "-1"], "--seed must be an integer >= 0"),
    (["--alpha", "2"], "--alpha must be"),
    (["--digits", "-1"], "--digits must be an integer from 0 to 17"),
])
def test_cli_parameter_errors_are_one_line_exit_2(result_file, capsys, extra, fragment):
    rc, out, err = _cli(["compare", "--results", str(result_file), *extra], capsys)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and fragment in err


@pytest.mark.parametrize("extra, line", [
    (["--ci", "1"], "--ci must be a number between 0 and 1, or none, got 1.0"),
    (["--seed", "-1"], "--seed must be an integer >= 0, got -1"),
])
def test_cli_parameter_errors_speak_of_the_command_s_values(result_file, capsys, extra, line):
    # the API's "or None" is "none" for --ci and nothing for --seed (which takes no None)
    rc, out, err = _cli(["compare", "--results", str(result_file), *extra], capsys)
    assert (rc, out, err) == (2, "", f"fasteval: error: {line}\n")


def test_cli_accepts_resamples_in_e_notation(result_file, capsys):
    rc, out, _ = _cli(["compare", "--results", str(result_file), "--resamples", "2e3",
                       "--test", "bootstrap", "--format", "csv"], capsys)
    rc2, out2, _ = _cli(["compare", "--results", str(result_file), "--resamples", "2000",
                         "--test", "bootstrap", "--format", "csv"], capsys)
    assert rc == rc2 == 0 and out == out2


def test_cli_inf_in_results_with_tukey_is_one_line(tmp_path, capsys):
    path = tmp_path / "res.csv"
    path.write_text("run_id,query_id,map\na,1,0.2\na,2,0.4\nb,1,0.1\nb,2,inf\n")
    rc, _, err = _cli(["compare", "--results", str(path), "--test", "tukey"], capsys)
    assert rc == 2 and err.count("\n") == 1 and "value is +inf for run 'b', query '2'" in err


def test_cli_run_given_twice_is_refused(tmp_path, capsys):
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 1.0 r\nq2 Q0 c 1 1.0 r\n")
    (tmp_path / "s.txt").write_text("q1 Q0 c 1 1.0 s\nq2 Q0 b 1 1.0 s\n")
    argv = ["compare", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), str(tmp_path / "s.txt"),
            str(tmp_path / "r.txt"), "-m", "P@1", "--test", "t"]
    rc, _, err = _cli(argv, capsys)
    assert rc == 2 and err.count("\n") == 1 and "given twice" in err


def test_a_measure_asked_for_twice_is_compared_once(capsys):
    """-m map -m map (or ndcg@10 and ndcg_cut_10) ended in polars' "`old` input for
    `replace` must not contain duplicates"."""
    long = pl.concat([t.with_columns(run_id=pl.lit(n)).rename({"map": "ndcg_cut_10"})
                      for n, t in RESULTS.items()])
    once = compare(long, measures="ndcg_cut_10", tests="t", ci=None)
    twice = compare(long, measures=["ndcg@10", "ndcg_cut_10", "ndcg_cut_10"], tests="t", ci=None)
    assert twice.measures == ("ndcg_cut_10",)
    assert twice.tests["p_value"].to_list() == once.tests["p_value"].to_list()
    assert once.tests["p_value"][0] == pytest.approx(0.0576688856224373, rel=1e-12)


def test_no_interval_no_ci_column_in_the_details():
    """ci=None (--ci none): the comparison says no level, and the details have no CI column
    (they had a '95% CI' column of '-')."""
    from fasteval.compare.report import details_text

    with_ci, without = compare(RESULTS, tests="t"), compare(RESULTS, tests="t", ci=None)
    assert (with_ci.ci, without.ci) == (0.95, None)
    assert "95% CI" in details_text(with_ci).splitlines()[0]
    header = details_text(without).splitlines()[0].split()
    assert header[:4] == ["measure", "run", "versus", "diff"] and "CI" not in header
    assert without.tests["p_value"].to_list() == with_ci.tests["p_value"].to_list()


def test_cli_empty_results_on_standard_input_is_one_clear_line(capsys, monkeypatch):
    # standard input is read as results (as eval reads a run from it); empty, it is one line
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    rc, _, err = _cli(["compare", "--results", "-"], capsys)
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith("fasteval: error: -: no lines; expected per-query results")


def test_cli_too_few_resamples_for_the_intervals_is_one_line(result_file, capsys):
    rc, out, err = _cli(["compare", "--results", str(result_file), "--resamples", "38",
                         "--ci-method", "bca"], capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "--resamples must be at least 39 for 0.95 two-sided confidence intervals" in err
    assert err.rstrip().endswith("got 38")
    rc, out, _ = _cli(["compare", "--results", str(result_file), "--resamples", "10",
                       "--ci", "none", "--format", "csv"], capsys)
    assert rc == 0 and out
