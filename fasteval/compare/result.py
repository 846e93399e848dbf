"""The tables and settings of a comparison (:class:`ComparisonResult`), which the reports
and plots read; :class:`fasteval.compare.Comparison` adds the renderers."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from fasteval.compare._data import Paired
from fasteval.options import Alternative


@dataclass(frozen=True)
class ComparisonResult:
    """The outcome of :func:`~fasteval.compare.compare`.

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
    alternative: Alternative = "two-sided"
    ci_method: str = "t"
    zero_method: str = "wilcox"
    continuity: bool = False
    family: str = "report"
    anova: pl.DataFrame | None = field(repr=False, default=None)
    #: null distributions used per test ("exact" / "approx" / "sampled")
    test_methods: dict[str, tuple[str, ...]] = field(repr=False, default_factory=dict)

    def to_frame(self) -> pl.DataFrame:
        """Tests joined with effect sizes: one row per (measure, run, versus, test)."""
        return self.tests.join(
            self.effects, on=["measure", "run_id", "versus"], how="left", maintain_order="left"
        )
