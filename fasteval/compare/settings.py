"""The options of :func:`fasteval.compare.compare`, checked once into a :class:`CompareOptions`.

:func:`check_options` refuses a bad option before any data is read or scored, naming the
option, what it takes and the value received; the procedures receive the canonical
:class:`CompareOptions` it returns.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import get_args

import numpy as np

from fasteval.compare.bootstrap import check_ci_method
from fasteval.compare.corrections import correction_name
from fasteval.compare.randomization import CORRECTIONS as PERMUTATION_CORRECTIONS
from fasteval.compare.wilcoxon import check_alternative, check_zero_method
from fasteval.errors import ParameterError
from fasteval.options import (
    Alternative,
    CiMethod,
    CompareTest,
    CorrectionFamily,
    Missing,
    ZeroMethod,
    check_choice,
)

#: test names in report order, and the spellings accepted for them
TESTS: tuple[str, ...] = get_args(CompareTest)
_TEST_ALIASES = {
    "t": "t", "ttest": "t", "t-test": "t", "student": "t", "paired-t": "t",
    "wilcoxon": "wilcoxon", "signed-rank": "wilcoxon",
    "sign": "sign", "sign-test": "sign",
    "randomization": "randomization", "randomisation": "randomization",
    "permutation": "randomization", "fisher": "randomization",
    "bootstrap": "bootstrap", "bootstrap-t": "bootstrap",
    "tukey": "tukey", "tukey-hsd": "tukey", "tukey_hsd": "tukey", "hsd": "tukey",
    "randomized-tukey": "randomized-tukey", "randomised-tukey": "randomized-tukey",
    "randomized_tukey": "randomized-tukey", "rtukey": "randomized-tukey",
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
#: tests whose p-values are already family-wise over every pair of runs (no correction)
FAMILYWISE = ("tukey", "randomized-tukey")

MAX_RESAMPLES = 10**9
"""Most resamples :func:`compare` accepts (the bootstrap's memory is checked as well)."""

#: fewest resamples of a BCa interval: its bias correction reads the share of resampled
#: means below the observed one, which must be neither 0 nor 1 (all on one side has
#: probability about ``2 ** (1 - R)`` for symmetric differences)
BCA_MIN_RESAMPLES = 39


@dataclass(frozen=True)
class CompareOptions:
    """:func:`fasteval.compare.compare`'s options, checked and in canonical spelling
    (:func:`check_options`); see :func:`~fasteval.compare.compare` for each."""

    tests: tuple[str, ...] = ("t", "randomization", "bootstrap")
    correction: str = "holm"
    alpha: float = 0.05
    ci: float | None = 0.95
    n_resamples: int = 10_000
    seed: int | None = 0
    missing: str = "drop"
    family: CorrectionFamily = "report"
    exact: bool | str = "auto"
    mark_test: str = "t"
    alternative: Alternative = "two-sided"
    ci_method: CiMethod = "t"
    zero_method: ZeroMethod = "wilcox"
    continuity: bool = False

    @property
    def need_bootstrap(self) -> bool:
        """Whether the bootstrap runs: for its test, or for the intervals."""
        return "bootstrap" in self.tests or self.ci is not None


def _test_names(tests: str | Sequence[str]) -> list[str]:
    tests = [tests] if isinstance(tests, str) else tests
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


def is_real(value: object) -> bool:
    """A real number (numpy's float32 included), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def is_count(value: object) -> bool:
    """An integer (numpy's included), not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _check_numbers(alpha: object, ci: object, n_resamples: object, seed: object) -> None:
    if not (is_real(alpha) and 0 < alpha < 1):
        raise ParameterError("alpha", "a number between 0 and 1", alpha)
    if ci is not None and not (is_real(ci) and 0 < ci < 1):
        raise ParameterError("ci", "a number between 0 and 1, or None", ci)
    if not is_count(n_resamples) or not 1 <= n_resamples <= MAX_RESAMPLES:
        raise ParameterError("n_resamples", f"an integer from 1 to {MAX_RESAMPLES:_}", n_resamples)
    if seed is not None and (not is_count(seed) or seed < 0):
        raise ParameterError("seed", "an integer >= 0 or None", seed)


def _mark_test(mark_test: str | None, tests: list[str]) -> str:
    if mark_test is None:
        return tests[0]
    name = _TEST_ALIASES.get(str(mark_test).lower())
    if name not in tests:  # an alias of a test not run is named canonically
        raise ParameterError("mark_test", f"one of the tests run ({tests})", name or mark_test)
    return name


def _check_together(tests: list[str], correction: str, alternative: Alternative) -> None:
    """Refuse the options that exclude each other."""
    if alternative != "two-sided" and any(t in FAMILYWISE for t in tests):
        raise ParameterError(
            "alternative", "'two-sided' when a Tukey HSD test is among the tests", alternative
        )
    if correction in PERMUTATION_CORRECTIONS and tests != ["randomization"]:
        raise ParameterError(
            "correction",
            f"used with tests=['randomization'] only ({correction!r} adjusts through the "
            "sign flips the randomization test shares across comparisons)",
            correction,
        )


def _check_interval_resamples(ci: float, n_resamples: int, alternative: Alternative,
                              ci_method: CiMethod) -> None:
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


def check_options(
    *,
    tests: Sequence[str] | str = ("t", "randomization", "bootstrap"),
    correction: str | None = "holm",
    alpha: float = 0.05,
    ci: float | None = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    missing: str = "drop",
    family: CorrectionFamily = "report",
    exact: bool | str = "auto",
    mark_test: str | None = None,
    alternative: Alternative = "two-sided",
    ci_method: CiMethod = "t",
    zero_method: ZeroMethod = "wilcox",
    continuity: bool = False,
) -> CompareOptions:
    """:func:`fasteval.compare.compare`'s options checked (before any data is read or
    scored), in canonical spelling.

    Raises
    ------
    ParameterError
        Naming the option, the constraint and the value.

    Examples
    --------
    >>> opts = check_options(tests=["ttest", "hsd"], ci_method="BCa")
    >>> opts.tests, opts.correction, opts.mark_test, opts.ci_method
    (('t', 'tukey'), 'holm', 't', 'bca')
    >>> check_options(seed=-1)
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: seed must be an integer >= 0 or None, got -1
    """
    test_list = _test_names(tests)
    correction = correction_name(correction)
    _check_numbers(alpha, ci, n_resamples, seed)
    check_choice("missing", Missing, missing)
    check_choice("family", CorrectionFamily, family)
    if exact not in ("auto", True, False):
        raise ParameterError("exact", "True, False or 'auto'", exact)
    mark = _mark_test(mark_test, test_list)
    alternative = check_alternative(alternative)
    ci_method = check_ci_method(ci_method)
    zero_method = check_zero_method(zero_method)
    if not isinstance(continuity, (bool, np.bool_)):
        raise ParameterError("continuity", "True or False", continuity)
    _check_together(test_list, correction, alternative)
    if ci is not None:
        _check_interval_resamples(ci, n_resamples, alternative, ci_method)
    return CompareOptions(
        tests=tuple(test_list), correction=correction, alpha=float(alpha),
        ci=None if ci is None else float(ci), n_resamples=int(n_resamples), seed=seed,
        missing=missing, family=family, exact=exact, mark_test=mark, alternative=alternative,
        ci_method=ci_method, zero_method=zero_method, continuity=bool(continuity),
    )


def min_resamples(ci: float, alternative: Alternative = "two-sided", ci_method: CiMethod = "t") -> int:
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
