"""``compare()``: paired significance tests, effect sizes and corrections for many runs."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

import numpy as np
import polars as pl

from fasteval.compare import procedures
from fasteval.compare._data import Paired, load_results, pair_all
from fasteval.compare.effects import EFFECT_LABELS
from fasteval.compare.names import resolve_measures
from fasteval.compare.plots import PLOTS
from fasteval.compare.report import render, write
from fasteval.compare.result import ComparisonResult
from fasteval.compare.settings import (  # noqa: F401 - names of this module's API
    BCA_MIN_RESAMPLES,
    MAX_RESAMPLES,
    TEST_LABELS,
    TESTS,
    CompareOptions,
    check_options,
    min_resamples,
)
from fasteval.errors import InputError, ParameterError
from fasteval.options import Alternative, CiMethod, CorrectionFamily, Missing, ZeroMethod


class Comparison(ComparisonResult):
    """The outcome of :func:`compare`: the tables of
    :class:`~fasteval.compare.result.ComparisonResult` (``means``, ``effects``, ``tests``,
    ``anova``) and their renderers."""

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
        return render(self, format, **options)

    def write(
        self, path: str | os.PathLike[str], format: str | None = None, **options: Any
    ) -> None:
        """Write the report atomically; the format follows the suffix unless given.

        ``.csv`` / ``.parquet`` hold the long table of tests joined with effects;
        ``.md``, ``.tex``, ``.html``, ``.txt`` the rendered means table.
        """
        write(self, path, format, **options)

    def plot(self, kind: str, path: str | os.PathLike[str], **options: Any) -> Any:
        """Write a plot: ``differences``, ``distributions``, ``cutoffs`` or ``pr``.

        See :mod:`fasteval.compare.plots`; needs matplotlib (the ``plot`` extra).
        """
        if kind not in PLOTS:
            raise ParameterError("kind", f"one of {', '.join(PLOTS)}", kind)
        return PLOTS[kind](self, path, **options)

    def __str__(self) -> str:
        return self.table("text")


def _memory_bytes() -> int:
    """Physical memory of the machine (0 if unknown)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 0


def bootstrap_bytes(n_measures: int, n_systems: int, n_pairs: int) -> int:
    """Bytes per resample the bootstrap holds at its peak (an upper bound).

    Per resample (:func:`fasteval.compare.bootstrap.paired_bootstrap`), for each measure:
    the resampled sums of every run and of the squared deviations of every run and pair
    difference, the pairs' resampled sums, the means and t statistics of every run and
    pair, and the temporaries of studentizing them (float64 each; 8 per pair and 6 per run
    at the peak, as traced), plus the resample's key.

    Examples
    --------
    >>> bootstrap_bytes(1, 2, 1)  # two runs, one measure
    176
    """
    return 8 * n_measures * (8 * n_pairs + 6 * n_systems) + 16


def _check_bootstrap_memory(n_resamples: int, n_measures: int, n_systems: int,
                            n_pairs: int, for_ci: bool = False) -> None:
    """Refuse a bootstrap whose arrays cannot fit in memory (before allocating them):
    :func:`bootstrap_bytes` per resample, against half the machine's memory."""
    per_resample = bootstrap_bytes(n_measures, n_systems, n_pairs)
    need = n_resamples * per_resample
    memory = _memory_bytes()
    if memory and need > memory // 2:
        most = max(1, memory // 2 // per_resample)
        raise ParameterError(
            "n_resamples",
            f"at most {most:_} here: the bootstrap of {n_measures} measure(s) and {n_pairs} "
            f"pair(s) would need {need / 2**30:.1f} GiB ({memory / 2**30:.0f} GiB of memory)"
            + ("; it computes the confidence intervals of the mean differences, which ci=None "
               "(--ci none) leaves out" if for_ci else ""),
            n_resamples,
        )


# long: the public function's docstring documents its 17 options; the body is short
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
    missing: Missing = "drop",
    exact: bool | str = "auto",
    ci: float | None = 0.95,
    family: CorrectionFamily = "report",
    mark_test: str | None = None,
    alternative: Alternative = "two-sided",
    ci_method: CiMethod = "t",
    zero_method: ZeroMethod = "wilcox",
    continuity: bool = False,
) -> Comparison:
    """Compare runs on per-query results with paired significance tests and effect sizes.

    Parameters
    ----------
    results : DataFrame, path, list of paths, or mapping
        Per-query results: a long table ``run_id, query_id, measure, value`` (what
        :func:`fasteval.evaluate` returns), a wide one (``run_id, query_id`` + one column per
        measure), a parquet/CSV/JSONL file of either, or a directory of parquet parts
        (``fasteval eval`` output, ``--engine ray`` included; without ``run_id`` the file
        stem names the run), or ``{run_name: per-query table}``.
    baseline : str, optional
        Compare every other run against this one (a run named after its file, such as
        ``bm25.txt``, may be given by its stem, ``bm25``). Without it, every pair of runs is compared
        (``run`` is the earlier run in input order, ``versus`` the later).
    measures : str or list of str, optional
        Measures to compare (default: all in the results, in order of appearance).
    tests : str or sequence of str
        Any of ``"t"`` (Student's paired t-test, :func:`scipy.stats.ttest_rel`),
        ``"wilcoxon"`` (signed-rank test on tie-merged differences,
        :mod:`fasteval.compare.wilcoxon`), ``"sign"`` (exact binomial test on the wins and
        losses, :mod:`fasteval.compare.sign`), ``"randomization"`` (Fisher's sign-flip
        permutation test on the mean difference), ``"bootstrap"`` (studentized paired
        bootstrap-t test, :mod:`fasteval.compare.bootstrap`), ``"tukey"`` (Tukey's HSD on the
        residual of the topic-blocked two-way ANOVA of all runs), ``"randomized-tukey"``
        (Sakai's randomised Tukey HSD, :mod:`fasteval.compare.anova`). The two HSD tests are
        family-wise over all pairs of runs already, so ``correction`` leaves them alone.
    correction : str or None
        ``"holm"`` (default), ``"bonferroni"``, ``"sidak"``, ``"holm-sidak"``, ``"hochberg"``,
        ``"bh"``, ``"by"``, ``"maxt"``, ``"stepdown"`` or ``"none"`` (None).
        Multiple-testing correction within each ``family`` (per test); the first seven as
        statsmodels' ``multipletests`` computes them (:mod:`fasteval.compare.corrections`).
        ``"maxt"`` (single-step permutation max-T; Dunnett-style with a baseline) and
        ``"stepdown"`` (Westfall-Young step-down max-T) use the randomization test's shared
        sign flips (:mod:`fasteval.compare.randomization`) and need
        ``tests=["randomization"]``.
    alpha : float
        Significance level for the ``significant`` column and the report's marks.
    n_resamples : int
        Sign-flip and bootstrap resamples, 1 to :data:`MAX_RESAMPLES`; the bootstrap's
        arrays must also fit in half the machine's memory (checked before any work). With
        ``ci``, at least :func:`min_resamples` (39 for two-sided 95% intervals, 19 for
        one-sided ones), so that each tail of an interval has a resample beyond it; 39 at
        least for BCa intervals.
    seed : int or None
        Seed (>= 0) of the :class:`numpy.random.Generator` the resampling draws come from.
        The same seed gives the same p-values whatever the number of numba threads.
    missing : {"drop", "zero"}
        ``"drop"`` pairs only queries every run has (per measure); ``"zero"`` pairs every
        query any run has, scoring the absent ones 0. A run without any value of a
        measure is an error either way (the measure was not computed for it).
    exact : bool or "auto"
        Exact null distributions. Randomization test: full enumeration of the ``2**n`` sign
        flips (``"auto"``: when ``2**n <= n_resamples``). Wilcoxon: ``True`` the exact
        conditional distribution given the tied ranks, ``False`` the normal approximation,
        ``"auto"`` the rule of :mod:`fasteval.compare.wilcoxon`.
    ci : float or None
        Level of the bootstrap confidence intervals of the mean differences and of each
        run's mean (computed from the bootstrap resamples; ``None`` skips them, and the
        resampling too unless ``"bootstrap"`` is among ``tests``).
    family : {"report", "measure"}
        Correction family: all comparisons of the report, or those of each measure.
    mark_test : str, optional
        Test whose adjusted p-values drive the report's marks (default: first in ``tests``).
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: ``run`` scores higher than ``versus``. Applies to the t, Wilcoxon,
        randomization and bootstrap tests and to the intervals (one-sided intervals leave
        one bound infinite); the HSD tests are two-sided only.
    ci_method : {"t", "bca", "percentile"}
        Bootstrap interval: bootstrap-t (default), BCa, or percentile.
    zero_method : {"wilcox", "pratt"}
        Wilcoxon's zero differences: dropped before ranking, or ranked and left out of the
        sums (Pratt).
    continuity : bool
        Continuity correction of Wilcoxon's normal approximation.

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

    Differences that are all equal leave the t statistic undefined, and four queries are too
    few for the randomization test to reach 0.05:

    >>> runs = {"a": pl.DataFrame({"query_id": [1, 2, 3, 4], "map": [0.5, 0.6, 0.7, 0.8]}),
    ...         "b": pl.DataFrame({"query_id": [1, 2, 3, 4], "map": [0.1, 0.2, 0.3, 0.4]})}
    >>> for row in compare(runs, tests=["t", "randomization"]).tests.iter_rows(named=True):
    ...     print(row["test"], row["statistic"], row["p_value"], row["note"])
    t nan nan every query has the same difference (0.4): zero variance, the statistic is undefined
    randomization 0.4 0.125 cannot reach p <= 0.05 with these 4 queries (smallest attainable p = 0.125)
    """
    opts = check_options(
        tests=tests, correction=correction, alpha=alpha, ci=ci, n_resamples=n_resamples,
        seed=seed, missing=missing, family=family, exact=exact, mark_test=mark_test,
        alternative=alternative, ci_method=ci_method, zero_method=zero_method,
        continuity=continuity,
    )
    return compare_checked(results, baseline, measures, opts)


def compare_checked(results: Any, baseline: str | None, measures: Sequence[str] | str | None,
                    opts: CompareOptions) -> Comparison:
    """:func:`compare` with options checked already (:func:`check_options`).

    Examples
    --------
    >>> import polars as pl
    >>> runs = {"a": pl.DataFrame({"query_id": [1, 2], "map": [0.5, 0.75]}),
    ...         "b": pl.DataFrame({"query_id": [1, 2], "map": [0.4, 0.5]})}
    >>> compare_checked(runs, "b", None, check_options(tests="t")).effects["mean_diff"].to_list()
    [0.175]
    """
    long = load_results(results)
    systems = long.get_column("run_id").unique(maintain_order=True).to_list()
    if len(systems) < 2:
        raise InputError(f"need at least two runs to compare, got {systems}", source="results")
    available = long.get_column("measure").unique(maintain_order=True).to_list()
    measure_list = resolve_measures(measures, available)
    baseline = _baseline(baseline, systems)
    if baseline is not None:
        b = systems.index(baseline)
        pairs = [(i, b) for i in range(len(systems)) if i != b]
    else:
        pairs = [(i, j) for i in range(len(systems)) for j in range(i + 1, len(systems))]
    pi = np.array([p[0] for p in pairs])
    pj = np.array([p[1] for p in pairs])
    if opts.need_bootstrap:
        _check_bootstrap_memory(opts.n_resamples, len(measure_list), len(systems), len(pairs),
                                for_ci="bootstrap" not in opts.tests)
    paired = pair_all(long, systems, measure_list, opts.missing)
    _check_paired(paired, systems, measure_list)
    out = procedures.run(paired, systems, measure_list, pi, pj, opts)
    return Comparison(
        means=_means_table(paired, systems, measure_list, out),
        effects=_effects_table(paired, systems, measure_list, (pi, pj), out),
        tests=_tests_table(systems, measure_list, (pi, pj), out, opts),
        systems=tuple(systems), measures=tuple(measure_list), baseline=baseline,
        test_names=opts.tests, mark_test=opts.mark_test, correction=opts.correction,
        alpha=opts.alpha, n_resamples=opts.n_resamples, seed=opts.seed, missing=opts.missing,
        paired=paired, ci=opts.ci, alternative=opts.alternative, ci_method=opts.ci_method,
        zero_method=opts.zero_method, continuity=opts.continuity, family=opts.family,
        anova=out.anova, test_methods={t: tuple(sorted(v)) for t, v in out.methods.items()},
    )


def _baseline(baseline: str | None, systems: list[str]) -> str | None:
    """The run named ``baseline``: a run named after its file (``bm25.txt``) may be given
    by its stem (``bm25``)."""
    if baseline is None or baseline in systems:
        return baseline
    stems = [s for s in systems if PurePath(s).stem == baseline]
    if len(stems) != 1:
        raise ParameterError("baseline", f"one of the runs {systems}", baseline)
    return stems[0]


def _check_paired(paired: dict[str, Paired], systems: list[str], measures: list[str]) -> None:
    """Refuse a measure some run has no value of, or no query every run has."""
    for m in measures:
        pm = paired[m]
        absent = [s for s, k in zip(systems, pm.n_present, strict=False) if k == 0]
        if absent:  # not a missing query: the measure was not computed for that run
            raise InputError(
                f"measure {m!r}: no values at all for run(s) {absent}; compare the measures "
                "every run has (measures=..., -m)",
                source="results",
            )
        if pm.scores.shape[1] == 0:
            raise InputError(
                f"measure {m!r}: no query has a value for every run; use missing='zero' "
                "(--missing zero) to score absent queries 0",
                source="results",
            )


_MEANS_SCHEMA = {"run_id": pl.Utf8, "measure": pl.Utf8, "mean": pl.Float64, "ci_low": pl.Float64,
                 "ci_high": pl.Float64, "n_used": pl.Int64, "n_present": pl.Int64,
                 "n_missing": pl.Int64}
_EFFECTS = tuple(EFFECT_LABELS)
_EFFECTS_SCHEMA = {"measure": pl.Utf8, "run_id": pl.Utf8, "versus": pl.Utf8,
                   "n_queries": pl.Int64, **dict.fromkeys(("mean_run", "mean_versus", "mean_diff",
                                                           "ci_low", "ci_high", *_EFFECTS),
                                                          pl.Float64),
                   "wins": pl.Int64, "ties": pl.Int64, "losses": pl.Int64}
_TESTS_SCHEMA = {"measure": pl.Utf8, "run_id": pl.Utf8, "versus": pl.Utf8, "test": pl.Utf8,
                 "statistic": pl.Float64, "p_value": pl.Float64, "p_adjusted": pl.Float64,
                 "significant": pl.Boolean, "note": pl.Utf8}


def _means_table(paired: dict[str, Paired], systems: list[str], measures: list[str],
                 out: procedures.Outcome) -> pl.DataFrame:
    rows = []
    for m in measures:
        pm = paired[m]
        means = pm.scores.mean(axis=1)
        low, high = out.mean_low.get(m), out.mean_high.get(m)
        rows += [(name, m, float(means[s]), None if low is None else float(low[s]),
                  None if high is None else float(high[s]), pm.scores.shape[1],
                  int(pm.n_present[s]), int(pm.n_union - pm.n_present[s]))
                 for s, name in enumerate(systems)]
    return pl.DataFrame(rows, schema=_MEANS_SCHEMA, orient="row")


def _effects_table(paired: dict[str, Paired], systems: list[str], measures: list[str],
                   pairs: tuple[np.ndarray, np.ndarray], out: procedures.Outcome) -> pl.DataFrame:
    pi, pj = pairs
    P = pi.size
    names = np.array(systems, dtype=object)
    cols: dict[str, list] = {k: [] for k in _EFFECTS_SCHEMA}
    for m in measures:
        X = paired[m].scores
        n = X.shape[1]
        means = X.mean(axis=1)
        none = [None] * P
        values = {"measure": [m] * P, "run_id": names[pi].tolist(),
                  "versus": names[pj].tolist(), "n_queries": [n] * P,
                  "mean_run": means[pi].tolist(), "mean_versus": means[pj].tolist(),
                  "mean_diff": ((X[pi] - X[pj]).mean(axis=1) if n else np.zeros(P)).tolist(),
                  "ci_low": out.ci_low[m].tolist() if m in out.ci_low else none,
                  "ci_high": out.ci_high[m].tolist() if m in out.ci_high else none,
                  **{k: out.effects[m][k].tolist() for k in _EFFECTS},
                  "wins": out.wins[m].tolist(), "ties": out.ties[m].tolist(),
                  "losses": out.losses[m].tolist()}
        for k, v in values.items():
            cols[k] += v
    return pl.DataFrame(cols, schema=_EFFECTS_SCHEMA)


def _tests_table(systems: list[str], measures: list[str], pairs: tuple[np.ndarray, np.ndarray],
                 out: procedures.Outcome, opts: CompareOptions) -> pl.DataFrame:
    pi, pj = pairs
    P = pi.size
    names = np.array(systems, dtype=object)
    cols: dict[str, list] = {k: [] for k in _TESTS_SCHEMA}
    for m in measures:
        for t in opts.tests:
            with np.errstate(invalid="ignore"):  # NaN (undefined) is never significant
                significant = (out.adjusted[t][m] <= opts.alpha).tolist()
            values = {"measure": [m] * P, "run_id": names[pi].tolist(),
                      "versus": names[pj].tolist(), "test": [t] * P,
                      "statistic": np.asarray(out.stat[t][m], dtype=np.float64).tolist(),
                      "p_value": out.p[t][m].tolist(), "p_adjusted": out.adjusted[t][m].tolist(),
                      "significant": significant, "note": out.notes[t][m]}
            for k, v in values.items():
                cols[k] += v
    return pl.DataFrame(cols, schema=_TESTS_SCHEMA)
