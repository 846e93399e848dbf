"""``compare()``: paired significance tests, effect sizes and corrections for many runs."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import numpy as np
import polars as pl

from fasteval.compare import procedures
from fasteval.compare._data import Paired, load_results, pair_all
from fasteval.compare.corrections import correction_name
from fasteval.errors import InputError, ParameterError

#: test names in report order, and the spellings accepted for them
TESTS = ("t", "wilcoxon", "sign", "randomization", "bootstrap", "tukey", "randomized-tukey")
_TEST_ALIASES = {
    "t": "t",
    "ttest": "t",
    "t-test": "t",
    "student": "t",
    "paired-t": "t",
    "wilcoxon": "wilcoxon",
    "signed-rank": "wilcoxon",
    "sign": "sign",
    "sign-test": "sign",
    "randomization": "randomization",
    "randomisation": "randomization",
    "permutation": "randomization",
    "fisher": "randomization",
    "bootstrap": "bootstrap",
    "bootstrap-t": "bootstrap",
    "tukey": "tukey",
    "tukey-hsd": "tukey",
    "tukey_hsd": "tukey",
    "hsd": "tukey",
    "randomized-tukey": "randomized-tukey",
    "randomised-tukey": "randomized-tukey",
    "randomized_tukey": "randomized-tukey",
    "rtukey": "randomized-tukey",
    "randomized-hsd": "randomized-tukey",
}
TEST_LABELS = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "sign": "sign test",
    "randomization": "randomization test",
    "bootstrap": "paired bootstrap-t test",
    "tukey": "Tukey's HSD (topic-blocked two-way ANOVA)",
    "randomized-tukey": "randomised Tukey HSD",
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


def _same_measure(name: str, available: list[str]) -> str | None:
    """The name in ``available`` of the measure ``name`` spells in any dialect the parser
    knows (``ndcg@10`` finds ``ndcg_cut_10``, and ``nDCG@10`` the ``ndcg@10`` that
    ``fasteval eval -m ndcg@10`` wrote); None when none.

    Examples
    --------
    >>> _same_measure("nDCG@10", ["map", "ndcg@10"]), _same_measure("P@5", ["map"])
    ('ndcg@10', None)
    """
    import warnings

    from fasteval.measures import parse_measure

    def parsed(text: str):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return parse_measure(text)
        except Exception:  # noqa: BLE001 - a name unknown to the parser matches nothing
            return None

    wanted = parsed(name)
    if wanted is None:
        return None
    return next((a for a in available if parsed(a) == wanted), None)


def _resolve_measures(requested: Sequence[str] | str | None, available: list[str]) -> list[str]:
    if requested is None:
        return available
    if isinstance(requested, str):
        requested = [requested]
    requested = list(requested)
    if not requested:
        raise ParameterError("measures", f"at least one measure name, or None for all ({available})",
                             requested)
    out: list[str] = []
    for name in requested:
        if name in out:  # a measure asked for twice (or in two spellings) is compared once
            continue
        if name in available:
            out.append(name)
            continue
        same = _same_measure(name, available)
        if same is not None:
            if same not in out:
                out.append(same)
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
        any compared run has for that measure); ``ci_low, ci_high``: bootstrap interval of
        the run's mean (null without ``ci``).
    effects : polars.DataFrame
        One row per (measure, run, versus): ``n_queries, mean_run, mean_versus, mean_diff``
        (``run - versus``), ``ci_low, ci_high`` (bootstrap interval of the mean
        difference, ``ci_method``; null without ``ci``), effect sizes ``cohens_d`` (d_z: mean
        / sd of the differences), ``hedges_g`` (d_z with the small-sample correction),
        ``glass_delta`` (mean / sd of ``versus``), ``sakai_es`` (mean / sqrt of the two-way
        ANOVA residual variance), see :mod:`fasteval.compare.effects`; ``wins, ties,
        losses`` (queries where ``run`` is higher / equal / lower, ties by the rule of
        :mod:`fasteval.compare.ties`).
    tests : polars.DataFrame
        One row per (measure, run, versus, test): ``statistic, p_value, p_adjusted,
        significant`` (``p_adjusted <= alpha``), ``note`` (why a statistic is undefined, or
        that the test cannot reach significance with these queries; null otherwise).
    anova : polars.DataFrame
        Two-way ANOVA (system x topic) per measure: ``measure, source, ss, df, ms, f,
        p_value`` for the sources ``system``, ``topic`` and ``residual``.
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
    ci: float | None = 0.95
    """The confidence level of ``ci_low``/``ci_high`` (None: no interval was computed)."""
    alternative: str = "two-sided"
    ci_method: str = "t"
    zero_method: str = "wilcox"
    continuity: bool = False
    family: str = "report"
    anova: pl.DataFrame | None = field(repr=False, default=None)
    #: null distributions used per test ("exact" / "approx" / "sampled")
    test_methods: dict[str, tuple[str, ...]] = field(repr=False, default_factory=dict)

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




MAX_RESAMPLES = 10**9
"""Most resamples :func:`compare` accepts (the bootstrap's memory is checked as well)."""


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


def _real(value: object) -> bool:
    """A real number (numpy's float32 included), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_options(
    *,
    tests: Sequence[str] | str = ("t", "randomization", "bootstrap"),
    correction: str | None = "holm",
    alpha: float = 0.05,
    ci: float | None = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    missing: str = "drop",
    family: str = "report",
    exact: bool | str = "auto",
    mark_test: str | None = None,
    alternative: str = "two-sided",
    ci_method: str = "t",
    zero_method: str = "wilcox",
    continuity: bool = False,
) -> tuple[list[str], str, str]:
    """Validate :func:`compare`'s options (before any data is read or scored).

    Returns ``(tests, correction, mark_test)`` in canonical spelling.

    Raises
    ------
    ParameterError
        Naming the option, the constraint and the value.

    Examples
    --------
    >>> check_options(tests=["ttest", "hsd"])
    (['t', 'tukey'], 'holm', 't')
    >>> check_options(seed=-1)
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: seed must be an integer >= 0 or None, got -1
    """
    test_list = _test_names(tests)
    correction = correction_name(correction)
    if not (_real(alpha) and 0 < alpha < 1):
        raise ParameterError("alpha", "a number between 0 and 1", alpha)
    if ci is not None and not (_real(ci) and 0 < ci < 1):
        raise ParameterError("ci", "a number between 0 and 1, or None", ci)
    if (
        not isinstance(n_resamples, (int, np.integer))
        or isinstance(n_resamples, bool)
        or not 1 <= n_resamples <= MAX_RESAMPLES
    ):
        raise ParameterError("n_resamples", f"an integer from 1 to {MAX_RESAMPLES:_}", n_resamples)
    if seed is not None and (
        not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0
    ):
        raise ParameterError("seed", "an integer >= 0 or None", seed)
    if missing not in ("drop", "zero"):
        raise ParameterError("missing", "'drop' or 'zero'", missing)
    if family not in ("report", "measure"):
        raise ParameterError("family", "'report' or 'measure'", family)
    if exact not in ("auto", True, False):
        raise ParameterError("exact", "True, False or 'auto'", exact)
    if mark_test is None:
        mark_test = test_list[0]
    else:
        key = str(mark_test).lower()
        if key not in _TEST_ALIASES:
            raise ParameterError("mark_test", f"one of the tests run ({test_list})", mark_test)
        mark_test = _TEST_ALIASES[key]
        if mark_test not in test_list:
            raise ParameterError("mark_test", f"one of the tests run ({test_list})", mark_test)
    alternative, ci_method, _ = procedures.check_options(
        test_list, correction, family, alternative, ci_method, zero_method, continuity
    )
    if ci is not None:
        least = min_resamples(float(ci), alternative, ci_method)
        if n_resamples < least:
            raise ParameterError(
                "n_resamples",
                f"at least {least} for {ci!s} "
                f"{'two' if alternative == 'two-sided' else 'one'}-sided confidence intervals: "
                "each tail of an interval needs a resample beyond it (ci=None, --ci none, "
                "leaves the intervals out"
                + (f"; more than the {MAX_RESAMPLES:_} allowed: a lower ci"
                   if least > MAX_RESAMPLES else "") + ")",
                n_resamples,
            )
    return test_list, correction, mark_test


#: fewest resamples of a BCa interval: its bias correction reads the share of resampled
#: means below the observed one, which must be neither 0 nor 1 (all on one side has
#: probability about ``2 ** (1 - R)`` for symmetric differences)
BCA_MIN_RESAMPLES = 39


def min_resamples(ci: float, alternative: str = "two-sided", ci_method: str = "t") -> int:
    """Fewest bootstrap resamples whose order statistics reach a ``ci`` interval's tails.

    A tail of probability ``a`` (``(1 - ci) / 2`` for a two-sided interval, ``1 - ci`` for a
    one-sided one) is read from ``R`` resamples when ``(R + 1) * a >= 1`` (Davison and Hinkley
    1997, section 5.2): with fewer, a bound is an extreme resample. BCa intervals need
    :data:`BCA_MIN_RESAMPLES` at least (their bias correction is infinite when every
    resample falls on one side of the observed mean).

    Examples
    --------
    >>> min_resamples(0.95), min_resamples(0.95, "greater"), min_resamples(0.99)
    (39, 19, 199)
    >>> min_resamples(0.8, "greater"), min_resamples(0.8, "greater", "bca")
    (4, 39)
    """
    tail = (1.0 - ci) / 2.0 if alternative == "two-sided" else 1.0 - ci
    least = max(1, math.ceil(1.0 / tail - 1.0 - 1e-9))
    return max(least, BCA_MIN_RESAMPLES) if ci_method == "bca" else least


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
    alternative: str = "two-sided",
    ci_method: str = "t",
    zero_method: str = "wilcox",
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
    test_list, correction, mark_test = check_options(
        tests=tests, correction=correction, alpha=alpha, ci=ci, n_resamples=n_resamples,
        seed=seed, missing=missing, family=family, exact=exact, mark_test=mark_test,
        alternative=alternative, ci_method=ci_method, zero_method=zero_method,
        continuity=continuity,
    )

    alternative, ci_method, zero_method = procedures.check_options(
        test_list, correction, family, alternative, ci_method, zero_method, continuity
    )

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

    need_boot = "bootstrap" in test_list or ci is not None
    if need_boot:
        _check_bootstrap_memory(int(n_resamples), len(measure_list), len(systems), len(pairs),
                                for_ci="bootstrap" not in test_list)

    paired = pair_all(long, systems, measure_list, missing)
    for m in measure_list:
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

    out = procedures.run(
        paired,
        systems,
        measure_list,
        pi,
        pj,
        test_list,
        correction=correction,
        family=family,
        alpha=float(alpha),
        n_resamples=int(n_resamples),
        seed=seed,
        exact=exact,
        ci=ci,
        ci_method=ci_method,
        alternative=alternative,
        zero_method=zero_method,
        continuity=bool(continuity),
    )
    P = len(pairs)
    S = len(systems)

    names = np.array(systems, dtype=object)
    run_col = names[pi].tolist()
    vs_col = names[pj].tolist()
    effect_cols = ("cohens_d", "hedges_g", "glass_delta", "sakai_es")
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
            *effect_cols,
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
            "note",
        )
    }
    mean_rows: dict[str, list] = {
        k: []
        for k in (
            "run_id",
            "measure",
            "mean",
            "ci_low",
            "ci_high",
            "n_used",
            "n_present",
            "n_missing",
        )
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
            mean_rows["ci_low"].append(float(out.mean_low[m][s]) if m in out.mean_low else None)
            mean_rows["ci_high"].append(float(out.mean_high[m][s]) if m in out.mean_high else None)
            mean_rows["n_used"].append(n)
            mean_rows["n_present"].append(int(pm.n_present[s]))
            mean_rows["n_missing"].append(int(pm.n_union - pm.n_present[s]))
        md = (X[pi] - X[pj]).mean(axis=1) if n else np.zeros(P)
        eff_rows["measure"] += [m] * P
        eff_rows["run_id"] += run_col
        eff_rows["versus"] += vs_col
        eff_rows["n_queries"] += [n] * P
        eff_rows["mean_run"] += means[pi].tolist()
        eff_rows["mean_versus"] += means[pj].tolist()
        eff_rows["mean_diff"] += md.tolist()
        eff_rows["ci_low"] += out.ci_low[m].tolist() if m in out.ci_low else [None] * P
        eff_rows["ci_high"] += out.ci_high[m].tolist() if m in out.ci_high else [None] * P
        for k in effect_cols:
            eff_rows[k] += out.effects[m][k].tolist()
        eff_rows["wins"] += out.wins[m].tolist()
        eff_rows["ties"] += out.ties[m].tolist()
        eff_rows["losses"] += out.losses[m].tolist()
        for t in test_list:
            test_rows["measure"] += [m] * P
            test_rows["run_id"] += run_col
            test_rows["versus"] += vs_col
            test_rows["test"] += [t] * P
            test_rows["statistic"] += np.asarray(out.stat[t][m], dtype=np.float64).tolist()
            test_rows["p_value"] += out.p[t][m].tolist()
            test_rows["p_adjusted"] += out.adjusted[t][m].tolist()
            with np.errstate(invalid="ignore"):  # NaN (undefined) is never significant
                test_rows["significant"] += (out.adjusted[t][m] <= alpha).tolist()
            test_rows["note"] += out.notes[t][m]

    int_cols = {"n_queries", "wins", "ties", "losses", "n_used", "n_present", "n_missing"}

    def frame(rows: dict[str, list]) -> pl.DataFrame:
        schema = {
            k: (
                pl.Utf8
                if k in ("measure", "run_id", "versus", "test", "note")
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
        ci=float(ci) if ci is not None else None,
        alternative=alternative,
        ci_method=ci_method,
        zero_method=zero_method,
        continuity=bool(continuity),
        family=family,
        anova=out.anova,
        test_methods={t: tuple(sorted(v)) for t, v in out.methods.items()},
    )
