"""``compare()``: paired significance tests, effect sizes and corrections for many runs."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import numpy as np
import polars as pl

from fasteval.compare import kernels
from fasteval.compare._data import Paired, load_results, pair_all
from fasteval.compare.corrections import adjust_pvalues, correction_name
from fasteval.errors import InputError, ParameterError

#: test names in report order, and the spellings accepted for them
TESTS = ("t", "wilcoxon", "randomization", "bootstrap", "tukey")
_TEST_ALIASES = {
    "t": "t",
    "ttest": "t",
    "t-test": "t",
    "student": "t",
    "paired-t": "t",
    "wilcoxon": "wilcoxon",
    "signed-rank": "wilcoxon",
    "randomization": "randomization",
    "randomisation": "randomization",
    "permutation": "randomization",
    "fisher": "randomization",
    "bootstrap": "bootstrap",
    "tukey": "tukey",
    "tukey-hsd": "tukey",
    "tukey_hsd": "tukey",
    "hsd": "tukey",
}
TEST_LABELS = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomization": "randomization test",
    "bootstrap": "paired bootstrap test",
    "tukey": "Tukey's HSD",
}


def _test_names(tests: str | Sequence[str]) -> list[str]:
    if isinstance(tests, str):
        tests = [tests]
    out: list[str] = []
    for t in tests:
        key = str(t).lower()
        if key not in _TEST_ALIASES:
            raise ParameterError("tests", f"names from {', '.join(TESTS)}", t)
        name = _TEST_ALIASES[key]
        if name not in out:
            out.append(name)
    if not out:
        raise ParameterError("tests", "at least one test name", list(tests))
    return out


def _resolve_measures(requested: Sequence[str] | str | None, available: list[str]) -> list[str]:
    if requested is None:
        return available
    if isinstance(requested, str):
        requested = [requested]
    out = []
    for name in requested:
        if name in available:
            out.append(name)
            continue
        canonical = None
        try:  # accept any dialect the measure parser knows ("ndcg@10" for "ndcg_cut_10")
            from fasteval.measures import parse_measure

            canonical = parse_measure(name).name
        except Exception:  # parser missing or name unknown to it: fall through
            canonical = None
        if canonical in available:
            out.append(canonical)
            continue
        raise ParameterError("measures", f"measures present in the results ({available})", name)
    return out


@dataclass(frozen=True)
class Comparison:
    """The outcome of :func:`compare`.

    Attributes
    ----------
    means : polars.DataFrame
        ``run_id, measure, mean, n_used, n_present, n_missing``: mean over the paired queries,
        how many queries were paired, how many the run has, how many it lacks (of the queries
        any compared run has for that measure).
    effects : polars.DataFrame
        One row per (measure, run, versus): ``n_queries, mean_run, mean_versus, mean_diff``
        (``run - versus``), ``ci_low, ci_high`` (bootstrap percentile interval of the mean
        difference; null without bootstrap), ``cohens_d`` (paired: mean / sd of the
        differences), ``wins, ties, losses`` (queries where ``run`` is higher / equal / lower).
    tests : polars.DataFrame
        One row per (measure, run, versus, test): ``statistic, p_value, p_adjusted,
        significant`` (``p_adjusted < alpha``).
    """

    means: pl.DataFrame
    effects: pl.DataFrame
    tests: pl.DataFrame
    systems: tuple[str, ...]
    measures: tuple[str, ...]
    baseline: str | None
    test_names: tuple[str, ...]
    mark_test: str
    correction: str
    alpha: float
    n_resamples: int
    seed: int | None
    missing: str
    paired: dict[str, Paired] = field(repr=False, default_factory=dict)
    ci: float = 0.95

    def table(self, format: str = "text", **options: Any) -> str:
        """Render the means table (see :func:`fasteval.compare.report.render`).

        Examples
        --------
        >>> import polars as pl
        >>> r = {"a": pl.DataFrame({"query_id": [1, 2, 3], "map": [0.2, 0.4, 0.6]}),
        ...      "b": pl.DataFrame({"query_id": [1, 2, 3], "map": [0.1, 0.3, 0.2]})}
        >>> print(compare(r, tests="t").table("markdown").splitlines()[2])
        | a (a) | **0.4000** |
        """
        from fasteval.compare.report import render

        return render(self, format, **options)

    def write(
        self, path: str | os.PathLike[str], format: str | None = None, **options: Any
    ) -> None:
        """Write the report atomically; the format follows the suffix unless given.

        ``.csv`` / ``.parquet`` hold the long table of tests joined with effects;
        ``.md``, ``.tex``, ``.html``, ``.txt`` the rendered means table.
        """
        from fasteval.compare.report import write

        write(self, path, format, **options)

    def plot(self, kind: str, path: str | os.PathLike[str], **options: Any) -> Any:
        """Write a plot: ``differences``, ``distributions``, ``cutoffs`` or ``pr``.

        See :mod:`fasteval.compare.plots`; needs matplotlib (the ``plot`` extra).
        """
        from fasteval.compare.plots import PLOTS

        if kind not in PLOTS:
            raise ParameterError("kind", f"one of {', '.join(PLOTS)}", kind)
        return PLOTS[kind](self, path, **options)

    def to_frame(self) -> pl.DataFrame:
        """Tests joined with effect sizes: one row per (measure, run, versus, test)."""
        return self.tests.join(
            self.effects, on=["measure", "run_id", "versus"], how="left", maintain_order="left"
        )

    def __str__(self) -> str:
        return self.table("text")


def _ttest(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from scipy import stats

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.ttest_rel(a, b, axis=-1)
    stat = np.atleast_1d(np.asarray(res.statistic, dtype=np.float64)).copy()
    p = np.atleast_1d(np.asarray(res.pvalue, dtype=np.float64)).copy()
    same = np.all(a == b, axis=-1)
    stat[same] = 0.0
    p[same] = 1.0
    return stat, p


def _wilcoxon(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from scipy import stats

    stat = np.full(a.shape[0], np.nan)
    p = np.full(a.shape[0], np.nan)
    for k in range(a.shape[0]):
        if np.all(a[k] == b[k]):
            stat[k], p[k] = 0.0, 1.0
            continue
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = stats.wilcoxon(a[k], b[k])
        stat[k], p[k] = float(res.statistic), float(res.pvalue)
    return stat, p


def compare(
    results: Any,
    baseline: str | None = None,
    *,
    measures: Sequence[str] | str | None = None,
    tests: Sequence[str] | str = ("t", "randomization", "bootstrap"),
    correction: str | None = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    missing: str = "drop",
    exact: bool | str = "auto",
    ci: float | None = 0.95,
    family: str = "report",
    mark_test: str | None = None,
) -> Comparison:
    """Compare runs on per-query results with paired significance tests and effect sizes.

    Parameters
    ----------
    results : DataFrame, path, list of paths, or mapping
        Per-query results: a long table ``run_id, query_id, measure, value`` (what
        :func:`fasteval.evaluate` returns), a wide one (``run_id, query_id`` + one column per
        measure), a parquet/CSV/JSONL file of either (``fasteval eval`` output; without
        ``run_id`` the file stem names the run), or ``{run_name: per-query table}``.
    baseline : str, optional
        Compare every other run against this one (a run named after its file, such as
        ``bm25.txt``, may be given by its stem, ``bm25``). Without it, every pair of runs is compared
        (``run`` is the earlier run in input order, ``versus`` the later).
    measures : str or list of str, optional
        Measures to compare (default: all in the results, in order of appearance).
    tests : str or sequence of str
        Any of ``"t"`` (Student's paired t-test, :func:`scipy.stats.ttest_rel`),
        ``"wilcoxon"`` (:func:`scipy.stats.wilcoxon`), ``"randomization"`` (Fisher's
        sign-flip permutation test on the mean difference), ``"bootstrap"`` (paired
        bootstrap test: resampled mean differences shifted to the null), ``"tukey"``
        (Tukey's HSD over all runs per measure, :func:`scipy.stats.tukey_hsd`; it treats runs
        as independent groups and is already family-wise, so ``correction`` leaves it alone).
    correction : {"holm", "bonferroni", "bh", "none"}
        Multiple-testing correction across the comparisons of the report (per test).
    alpha : float
        Significance level for the ``significant`` column and the report's marks.
    n_resamples : int
        Sign-flip and bootstrap resamples.
    seed : int or None
        Seed of the :class:`numpy.random.Generator` the resampling draws come from. The same
        seed gives the same p-values whatever the number of numba threads.
    missing : {"drop", "zero"}
        ``"drop"`` pairs only queries every run has (per measure); ``"zero"`` pairs every
        query any run has, scoring the absent ones 0.
    exact : bool or "auto"
        Randomization test by full enumeration of the ``2**n`` sign flips. ``"auto"``: when
        ``2**n <= n_resamples``.
    ci : float or None
        Level of the bootstrap confidence interval of the mean difference (computed from
        the bootstrap resamples; ``None`` skips it, and the resampling too unless
        ``"bootstrap"`` is among ``tests``).
    family : {"report", "measure"}
        Correction family: all comparisons of the report, or those of each measure.
    mark_test : str, optional
        Test whose adjusted p-values drive the report's marks (default: first in ``tests``).

    Returns
    -------
    Comparison
        ``means``, ``effects``, ``tests`` tables and renderers (``table``, ``write``).

    Examples
    --------
    >>> import polars as pl
    >>> runs = {
    ...     "bm25": pl.DataFrame({"query_id": [1, 2, 3, 4], "map": [0.1, 0.2, 0.3, 0.4]}),
    ...     "dense": pl.DataFrame({"query_id": [1, 2, 3, 4], "map": [0.2, 0.4, 0.3, 0.6]}),
    ... }
    >>> cmp = compare(runs, baseline="bm25", tests=["t", "randomization"])
    >>> cmp.effects.select("run_id", "versus", "mean_diff", "wins", "ties", "losses").rows()
    [('dense', 'bm25', 0.125, 3, 1, 0)]
    >>> cmp.tests.filter(pl.col("test") == "randomization")["p_value"].to_list()  # exact: 2**4 flips
    [0.25]
    """
    test_list = _test_names(tests)
    correction = correction_name(correction)
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ParameterError("alpha", "a number between 0 and 1", alpha)
    if ci is not None and not (isinstance(ci, (int, float)) and 0 < ci < 1):
        raise ParameterError("ci", "a number between 0 and 1, or None", ci)
    if (
        not isinstance(n_resamples, (int, np.integer))
        or isinstance(n_resamples, bool)
        or n_resamples < 1
    ):
        raise ParameterError("n_resamples", "a positive integer", n_resamples)
    if missing not in ("drop", "zero"):
        raise ParameterError("missing", "'drop' or 'zero'", missing)
    if family not in ("report", "measure"):
        raise ParameterError("family", "'report' or 'measure'", family)
    if exact not in ("auto", True, False):
        raise ParameterError("exact", "True, False or 'auto'", exact)
    if mark_test is None:
        mark_test = test_list[0]
    else:
        mark_test = _test_names([mark_test])[0]
        if mark_test not in test_list:
            raise ParameterError("mark_test", f"one of the tests run ({test_list})", mark_test)

    long = load_results(results)
    systems = long.get_column("run_id").unique(maintain_order=True).to_list()
    if len(systems) < 2:
        raise InputError(f"need at least two runs to compare, got {systems}", source="results")
    available = long.get_column("measure").unique(maintain_order=True).to_list()
    measure_list = _resolve_measures(measures, available)
    if baseline is not None:
        if baseline not in systems:
            # "bm25" for a run named after its file, "bm25.txt"
            stems = [s for s in systems if PurePath(s).stem == baseline]
            if len(stems) != 1:
                raise ParameterError("baseline", f"one of the runs {systems}", baseline)
            baseline = stems[0]
        b = systems.index(baseline)
        pairs = [(i, b) for i in range(len(systems)) if i != b]
    else:
        pairs = [(i, j) for i in range(len(systems)) for j in range(i + 1, len(systems))]
    pi = np.array([p[0] for p in pairs])
    pj = np.array([p[1] for p in pairs])

    paired = pair_all(long, systems, measure_list, missing)
    for m in measure_list:
        pm = paired[m]
        if pm.scores.shape[1] == 0:
            absent = [s for s, k in zip(systems, pm.n_present, strict=False) if k == 0]
            raise InputError(
                f"measure {m!r}: no query has a value for every run"
                + (f" (no values at all for {absent})" if absent else "")
                + "; use missing='zero' to score absent queries 0",
                source="results",
            )

    # group measures whose paired query sets coincide: one kernel pass per group
    groups: list[list[str]] = []
    for m in measure_list:
        for g in groups:
            if np.array_equal(paired[g[0]].columns, paired[m].columns):
                g.append(m)
                break
        else:
            groups.append([m])

    seq = np.random.SeedSequence(seed)
    flip_ss, boot_ss = seq.spawn(2)
    rng_flip = np.random.Generator(np.random.PCG64(flip_ss))
    rng_boot = np.random.Generator(np.random.PCG64(boot_ss))
    need_boot = "bootstrap" in test_list or ci is not None

    P = len(pairs)
    S = len(systems)
    res_p: dict[str, dict[str, np.ndarray]] = {t: {} for t in test_list}
    res_stat: dict[str, dict[str, np.ndarray]] = {t: {} for t in test_list}
    ci_lo: dict[str, np.ndarray] = {}
    ci_hi: dict[str, np.ndarray] = {}
    for g in groups:
        n = paired[g[0]].scores.shape[1]
        X = np.stack([paired[m].scores for m in g])  # (M, S, n)
        D = (X[:, pi, :] - X[:, pj, :]).reshape(len(g) * P, n)
        if "randomization" in test_list:
            use_exact = (2**n <= n_resamples) if exact == "auto" else bool(exact)
            if use_exact and n > 30:
                raise ParameterError("exact", "False or 'auto' for more than 30 queries", exact)
            obs, ext, total = kernels.signflip_null(D, n_resamples, rng_flip, exact=use_exact)
            pv = ext / total if use_exact else (ext + 1.0) / (total + 1.0)
            pv = np.minimum(pv, 1.0).reshape(len(g), P)
            for k, m in enumerate(g):
                res_p["randomization"][m] = pv[k]
                res_stat["randomization"][m] = obs.reshape(len(g), P)[k] / n
        if need_boot:
            if S < P:  # resample the runs' scores, difference afterwards
                _, tot = kernels.bootstrap_totals(X.reshape(len(g) * S, n), n_resamples, rng_boot)
                tot = tot.reshape(n_resamples, len(g), S)
                boot_d = (tot[:, :, pi] - tot[:, :, pj]) / n  # (R, M, P)
            else:
                _, tot = kernels.bootstrap_totals(D, n_resamples, rng_boot)
                boot_d = tot.reshape(n_resamples, len(g), P) / n
            Dg = D.reshape(len(g), P, n)
            obs_d = Dg.mean(axis=2)
            boot_d[:, ~np.any(Dg != 0, axis=2)] = 0.0  # identical on every paired query
            level = 0.95 if ci is None else ci
            lo, hi = np.quantile(boot_d, [(1 - level) / 2, (1 + level) / 2], axis=0)
            # bootstrap totals carry ~1e-7 relative error (single-precision products)
            tol = 1e-6 * np.abs(Dg).mean(axis=2)
            ext = (np.abs(boot_d - obs_d) >= np.abs(obs_d) - tol).sum(axis=0)
            pv = np.minimum(1.0, (ext + 1.0) / (n_resamples + 1.0))
            for k, m in enumerate(g):
                if ci is not None:
                    ci_lo[m], ci_hi[m] = lo[k], hi[k]
                if "bootstrap" in test_list:
                    res_p["bootstrap"][m] = pv[k]
                    res_stat["bootstrap"][m] = obs_d[k]

    for m in measure_list:
        X = paired[m].scores
        A, B = X[pi], X[pj]
        if "t" in test_list:
            res_stat["t"][m], res_p["t"][m] = _ttest(A, B)
        if "wilcoxon" in test_list:
            res_stat["wilcoxon"][m], res_p["wilcoxon"][m] = _wilcoxon(A, B)
        if "tukey" in test_list:
            from scipy import stats

            if X.shape[1] < 2:
                res_stat["tukey"][m] = np.full(P, np.nan)
                res_p["tukey"][m] = np.full(P, np.nan)
            else:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    th = stats.tukey_hsd(*X)
                tp = np.asarray(th.pvalue)[pi, pj].astype(np.float64)
                same = np.all(A == B, axis=1)
                tp[same] = 1.0  # all runs identical: scipy gives 0/0
                ts = np.asarray(th.statistic)[pi, pj].astype(np.float64)
                ts[same] = 0.0
                res_stat["tukey"][m] = ts
                res_p["tukey"][m] = tp

    # corrections
    adj: dict[str, dict[str, np.ndarray]] = {t: {} for t in test_list}
    for t in test_list:
        if t == "tukey" or correction == "none":
            adj[t] = {m: res_p[t][m].copy() for m in measure_list}
        elif family == "report":
            flat = adjust_pvalues(np.concatenate([res_p[t][m] for m in measure_list]), correction)
            for k, m in enumerate(measure_list):
                adj[t][m] = flat[k * P : (k + 1) * P]
        else:
            adj[t] = {m: adjust_pvalues(res_p[t][m], correction) for m in measure_list}

    names = np.array(systems, dtype=object)
    run_col = names[pi].tolist()
    vs_col = names[pj].tolist()
    eff_rows: dict[str, list] = {
        k: []
        for k in (
            "measure",
            "run_id",
            "versus",
            "n_queries",
            "mean_run",
            "mean_versus",
            "mean_diff",
            "ci_low",
            "ci_high",
            "cohens_d",
            "wins",
            "ties",
            "losses",
        )
    }
    test_rows: dict[str, list] = {
        k: []
        for k in (
            "measure",
            "run_id",
            "versus",
            "test",
            "statistic",
            "p_value",
            "p_adjusted",
            "significant",
        )
    }
    mean_rows: dict[str, list] = {
        k: [] for k in ("run_id", "measure", "mean", "n_used", "n_present", "n_missing")
    }
    for m in measure_list:
        pm = paired[m]
        X = pm.scores
        n = X.shape[1]
        means = X.mean(axis=1)
        for s in range(S):
            mean_rows["run_id"].append(systems[s])
            mean_rows["measure"].append(m)
            mean_rows["mean"].append(float(means[s]))
            mean_rows["n_used"].append(n)
            mean_rows["n_present"].append(int(pm.n_present[s]))
            mean_rows["n_missing"].append(int(pm.n_union - pm.n_present[s]))
        d = X[pi] - X[pj]
        md = d.mean(axis=1)
        with np.errstate(all="ignore"):
            sd = d.std(axis=1, ddof=1) if n > 1 else np.full(P, np.nan)
            cd = np.where(sd > 0, md / sd, np.where(md == 0, 0.0, np.copysign(np.inf, md)))
        if n < 2:
            cd = np.where(md == 0, 0.0, np.nan)
        eff_rows["measure"] += [m] * P
        eff_rows["run_id"] += run_col
        eff_rows["versus"] += vs_col
        eff_rows["n_queries"] += [n] * P
        eff_rows["mean_run"] += means[pi].tolist()
        eff_rows["mean_versus"] += means[pj].tolist()
        eff_rows["mean_diff"] += md.tolist()
        eff_rows["ci_low"] += ci_lo[m].tolist() if m in ci_lo else [None] * P
        eff_rows["ci_high"] += ci_hi[m].tolist() if m in ci_hi else [None] * P
        eff_rows["cohens_d"] += cd.tolist()
        eff_rows["wins"] += (d > 0).sum(axis=1).tolist()
        eff_rows["ties"] += (d == 0).sum(axis=1).tolist()
        eff_rows["losses"] += (d < 0).sum(axis=1).tolist()
        for t in test_list:
            test_rows["measure"] += [m] * P
            test_rows["run_id"] += run_col
            test_rows["versus"] += vs_col
            test_rows["test"] += [t] * P
            test_rows["statistic"] += np.asarray(res_stat[t][m], dtype=np.float64).tolist()
            test_rows["p_value"] += res_p[t][m].tolist()
            test_rows["p_adjusted"] += adj[t][m].tolist()
            test_rows["significant"] += (adj[t][m] < alpha).tolist()

    int_cols = {"n_queries", "wins", "ties", "losses", "n_used", "n_present", "n_missing"}

    def frame(rows: dict[str, list]) -> pl.DataFrame:
        schema = {
            k: (
                pl.Utf8
                if k in ("measure", "run_id", "versus", "test")
                else pl.Int64
                if k in int_cols
                else pl.Boolean
                if k == "significant"
                else pl.Float64
            )
            for k in rows
        }
        return pl.DataFrame(rows, schema=schema)

    return Comparison(
        means=frame(mean_rows),
        effects=frame(eff_rows),
        tests=frame(test_rows),
        systems=tuple(systems),
        measures=tuple(measure_list),
        baseline=baseline,
        test_names=tuple(test_list),
        mark_test=mark_test,
        correction=correction,
        alpha=float(alpha),
        n_resamples=int(n_resamples),
        seed=seed,
        missing=missing,
        paired=paired,
        ci=float(ci) if ci is not None else 0.95,
    )
