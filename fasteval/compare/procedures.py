"""The statistics of :func:`fasteval.compare.compare`: every test, interval and effect size.

:func:`run` takes the paired score matrices and returns per-measure arrays (one value per
compared pair, or per run); :mod:`fasteval.compare.core` validates the options and builds
the tables. What each procedure computes is documented in its module:
:mod:`~fasteval.compare.ties` (equal differences), :mod:`~fasteval.compare.wilcoxon`,
:mod:`~fasteval.compare.sign`,
:mod:`~fasteval.compare.randomization`, :mod:`~fasteval.compare.bootstrap`,
:mod:`~fasteval.compare.anova`, :mod:`~fasteval.compare.effects`.

Conventions shared by all tests:

* A comparison whose differences are all zero (tie rule of :mod:`~fasteval.compare.ties`)
  gets statistic 0 and p-value 1 in every test.
* A statistic that divides by a spread that is zero (paired t and bootstrap-t with every
  difference equal, Tukey HSD with a zero two-way residual) is undefined: NaN statistic
  and p-value, and a note, never a ratio of rounding noise.
* ``significant`` is ``p_adjusted <= alpha`` (statsmodels' ``multipletests`` rejects at
  ``<=`` too), NaN never significant.
* When the smallest p-value a test can produce with the comparison's queries exceeds
  ``alpha`` (randomization and exact Wilcoxon with few non-zero differences, the bootstrap
  with few queries), or a sampled test's ``1 / (n_resamples + 1)`` does (randomization,
  bootstrap, randomised Tukey HSD), the comparison's note says that the test cannot reach
  significance and which of the two prevents it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from fasteval.compare import anova as _anova
from fasteval.compare import bootstrap as _boot
from fasteval.compare import randomization as _rand
from fasteval.compare import sign as _sign
from fasteval.compare import wilcoxon as _wil
from fasteval.compare._data import Paired
from fasteval.compare.corrections import adjust_pvalues
from fasteval.compare.effects import effect_sizes
from fasteval.compare.ties import snap, tolerance
from fasteval.errors import ParameterError

#: tests whose p-values are already family-wise over every pair of runs (no correction)
FAMILYWISE = ("tukey", "randomized-tukey")
#: corrections that need the randomization test's joint null distribution
PERMUTATION_CORRECTIONS = _rand.CORRECTIONS


@dataclass
class Outcome:
    """Per-measure arrays produced by :func:`run` (pairs in the order of ``pi, pj``)."""

    stat: dict[str, dict[str, np.ndarray]]
    p: dict[str, dict[str, np.ndarray]]
    adjusted: dict[str, dict[str, np.ndarray]]
    notes: dict[str, dict[str, list[str | None]]]
    ci_low: dict[str, np.ndarray] = field(default_factory=dict)
    ci_high: dict[str, np.ndarray] = field(default_factory=dict)
    mean_low: dict[str, np.ndarray] = field(default_factory=dict)
    mean_high: dict[str, np.ndarray] = field(default_factory=dict)
    effects: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    wins: dict[str, np.ndarray] = field(default_factory=dict)
    ties: dict[str, np.ndarray] = field(default_factory=dict)
    losses: dict[str, np.ndarray] = field(default_factory=dict)
    anova: pl.DataFrame | None = None
    methods: dict[str, set[str]] = field(default_factory=dict)


def check_options(
    tests: list[str],
    correction: str,
    family: str,
    alternative: str,
    ci_method: str,
    zero_method: str,
    continuity: bool,
) -> tuple[str, str, str]:
    """Validate the options this module adds; returns canonical
    ``(alternative, ci_method, zero_method)``.

    Examples
    --------
    >>> check_options(["t"], "holm", "report", "greater", "BCa", "pratt", False)
    ('greater', 'bca', 'pratt')
    """
    alternative = _wil.check_alternative(alternative)
    ci_method = _boot.check_ci_method(ci_method)
    zero_method = _wil.check_zero_method(zero_method)
    if not isinstance(continuity, (bool, np.bool_)):
        raise ParameterError("continuity", "True or False", continuity)
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
    return alternative, ci_method, zero_method


def _groups(paired: dict[str, Paired], measures: list[str]) -> list[list[str]]:
    """Measures whose paired query sets coincide (one resampling pass per group)."""
    groups: list[list[str]] = []
    for m in measures:
        for g in groups:
            if np.array_equal(paired[g[0]].columns, paired[m].columns):
                g.append(m)
                break
        else:
            groups.append([m])
    return groups


def _ttest(a: np.ndarray, b: np.ndarray, alternative: str) -> tuple[np.ndarray, np.ndarray]:
    from scipy import stats

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.ttest_rel(a, b, axis=-1, alternative=alternative)
    stat = np.atleast_1d(np.asarray(res.statistic, dtype=np.float64)).copy()
    p = np.atleast_1d(np.asarray(res.pvalue, dtype=np.float64)).copy()
    return stat, p


def _fmt_p(p: float) -> str:
    return f"{p:.3g}"


def run(
    paired: dict[str, Paired],
    systems: list[str],
    measures: list[str],
    pi: np.ndarray,
    pj: np.ndarray,
    tests: list[str],
    *,
    correction: str,
    family: str,
    alpha: float,
    n_resamples: int,
    seed: int | None,
    exact: bool | str,
    ci: float | None,
    ci_method: str = "t",
    alternative: str = "two-sided",
    zero_method: str = "wilcox",
    continuity: bool = False,
) -> Outcome:
    """Run every requested test on every measure; see the module notes.

    Examples
    --------
    >>> import numpy as np, polars as pl
    >>> from fasteval.compare._data import Paired
    >>> x = np.array([[0.5, 0.6, 0.7, 0.8], [0.1, 0.2, 0.3, 0.4]])
    >>> pm = Paired("map", pl.Series([1, 2, 3, 4]), x, np.array([4, 4]), 4, np.arange(4))
    >>> out = run({"map": pm}, ["a", "b"], ["map"], np.array([0]), np.array([1]), ["t"],
    ...           correction="holm", family="report", alpha=0.05, n_resamples=100, seed=0,
    ...           exact="auto", ci=None)
    >>> out.stat["t"]["map"].tolist(), out.notes["t"]["map"]
    ([nan], ['every query has the same difference (0.4): zero variance, the statistic is undefined'])
    """
    S = len(systems)
    P = pi.size
    stat: dict[str, dict[str, np.ndarray]] = {t: {} for t in tests}
    pv: dict[str, dict[str, np.ndarray]] = {t: {} for t in tests}
    adj: dict[str, dict[str, np.ndarray]] = {t: {} for t in tests}
    notes: dict[str, dict[str, list[str | None]]] = {
        t: {m: [None] * P for m in measures} for t in tests
    }
    out = Outcome(stat, pv, adj, notes)
    out.methods = {t: set() for t in tests}

    def note(t: str, m: str, k: int, text: str) -> None:
        prev = notes[t][m][k]
        notes[t][m][k] = text if prev is None else f"{prev}; {text}"

    seq = np.random.SeedSequence(seed)
    flip_ss, boot_ss, perm_ss = seq.spawn(3)
    rng_flip = np.random.Generator(np.random.PCG64(flip_ss))
    rng_boot = np.random.Generator(np.random.PCG64(boot_ss))
    rng_perm = np.random.Generator(np.random.PCG64(perm_ss))
    need_boot = "bootstrap" in tests or ci is not None
    level = 0.95 if ci is None else float(ci)

    # every statistic is computed on the scores scaled by a power of two (exact) to a
    # largest magnitude in [0.5, 1): squares of scores near 1e300 (1e-300) would overflow
    # (underflow); values in the scores' units are scaled back
    scale = {m: _anova.power_of_two(paired[m].scores) for m in measures}
    Xs = {m: np.ldexp(paired[m].scores, -scale[m]) for m in measures}

    # per measure: differences, tie-merged differences, constant / all-zero flags
    snapped: dict[str, np.ndarray] = {}
    const: dict[str, np.ndarray] = {}
    zero: dict[str, np.ndarray] = {}
    anova_rows = []
    ve: dict[str, float] = {}
    for m in measures:
        X = Xs[m]
        A, B = X[pi], X[pj]
        ds = snap(A - B, tolerance(A, B))
        snapped[m] = ds
        n = X.shape[1]
        zero[m] = ~np.any(ds != 0, axis=1)
        const[m] = np.all(ds == ds[:, :1], axis=1) if n else np.ones(P, dtype=bool)
        out.wins[m] = (ds > 0).sum(axis=1)
        out.ties[m] = (ds == 0).sum(axis=1)
        out.losses[m] = (ds < 0).sum(axis=1)
        a = _anova.two_way_anova(X) if n >= 2 else None
        ve[m] = a["ms_residual"] if a is not None else float("nan")
        if a is not None and _anova.residual_is_zero(X):
            ve[m] = 0.0  # rounding noise, not a variance: ES_E is undefined
        if a is not None:
            sq = 2 * scale[m]  # sums of squares in the squared units of the scores
            with np.errstate(over="ignore"):
                a = {**a, **{k: float(np.ldexp(a[k], sq)) for k in
                             ("ss_system", "ss_topic", "ss_residual", "ms_system", "ms_topic",
                              "ms_residual")}}
            for src in ("system", "topic"):
                anova_rows.append(
                    (
                        m,
                        src,
                        a[f"ss_{src}"],
                        a[f"df_{src}"],
                        a[f"ms_{src}"],
                        a[f"f_{src}"],
                        a[f"p_{src}"],
                    )
                )
            anova_rows.append(
                (m, "residual", a["ss_residual"], a["df_residual"], a["ms_residual"], None, None)
            )
        out.effects[m] = effect_sizes(A, B, ds, ve[m] if S >= 2 else None)
    out.anova = pl.DataFrame(
        anova_rows,
        schema={
            "measure": pl.Utf8,
            "source": pl.Utf8,
            "ss": pl.Float64,
            "df": pl.Int64,
            "ms": pl.Float64,
            "f": pl.Float64,
            "p_value": pl.Float64,
        },
        orient="row",
    )

    # resampling procedures, one pass per group of measures sharing their queries
    groups = _groups(paired, measures)
    fam_rand: dict[str, np.ndarray] = {}
    if correction in PERMUTATION_CORRECTIONS and family == "report" and len(groups) > 1:
        raise ParameterError(
            "family",
            f"'measure' with correction={correction!r} when measures pair different queries",
            family,
        )
    for g in groups:
        n = Xs[g[0]].shape[1]
        Xg = np.stack([Xs[m] for m in g])  # (M, S, n)
        D = (Xg[:, pi, :] - Xg[:, pj, :]).reshape(len(g) * P, n)
        if "randomization" in tests:
            use_exact = (2**n <= n_resamples) if exact == "auto" else bool(exact)
            if use_exact and n > 30:
                raise ParameterError("exact", "False or 'auto' for more than 30 queries", exact)
            fams = None
            if correction in PERMUTATION_CORRECTIONS:
                if family == "report":
                    fams = [np.arange(len(g) * P)]
                else:
                    fams = [np.arange(k * P, (k + 1) * P) for k in range(len(g))]
            mean, p, padj = _rand.signflip_test(
                D,
                n_resamples,
                rng_flip,
                exact=use_exact,
                alternative=alternative,
                families=fams,
                correction=correction if fams else None,
            )
            out.methods["randomization"].add("exact" if use_exact else "sampled")
            for k, m in enumerate(g):
                sl = slice(k * P, (k + 1) * P)
                stat["randomization"][m] = np.ldexp(mean[sl], scale[m])
                pv["randomization"][m] = p[sl]
                if padj is not None:
                    fam_rand[m] = padj[sl]
                nz = (snapped[m] != 0).sum(axis=1)
                floor = np.ldexp(2.0 if alternative == "two-sided" else 1.0, -nz)
                _floor_notes(note, "randomization", m, floor, zero[m], alpha, n,
                             None if use_exact else n_resamples)
        if need_boot:
            keys = rng_boot.bit_generator.random_raw(n_resamples).astype(np.uint64, copy=False)
            Dsn = np.concatenate([snapped[m] for m in g])
            res = _boot.paired_bootstrap(
                D,
                Dsn,
                Xg.reshape(len(g) * S, n),
                keys,
                level=level,
                ci_method=ci_method,
                alternative=alternative,
                pairs=(
                    (np.arange(len(g))[:, None] * S + pi[None, :]).reshape(-1),
                    (np.arange(len(g))[:, None] * S + pj[None, :]).reshape(-1),
                ),
            )
            for k, m in enumerate(g):
                sl = slice(k * P, (k + 1) * P)
                if ci is not None:
                    out.ci_low[m] = np.ldexp(res.ci_low[sl], scale[m])
                    out.ci_high[m] = np.ldexp(res.ci_high[sl], scale[m])
                    out.mean_low[m] = np.ldexp(res.mean_low[k * S : (k + 1) * S], scale[m])
                    out.mean_high[m] = np.ldexp(res.mean_high[k * S : (k + 1) * S], scale[m])
                if "bootstrap" in tests:
                    stat["bootstrap"][m] = res.statistic[sl]
                    pv["bootstrap"][m] = res.p_value[sl]
                    _undefined_notes(note, "bootstrap", m, np.ldexp(snapped[m], scale[m]),
                                     const[m], zero[m], n)
                    _floor_notes(note, "bootstrap", m, res.min_p[sl], zero[m], alpha, n,
                                 n_resamples)

    for m in measures:
        X = Xs[m]
        n = X.shape[1]
        A, B = X[pi], X[pj]
        if "t" in tests:
            s, p = _ttest(A, B, alternative)
            undefined = (const[m] | (n < 2)) & ~zero[m]
            s = np.where(zero[m], 0.0, s)
            p = np.where(zero[m], 1.0, p)
            s[undefined] = np.nan
            p[undefined] = np.nan
            stat["t"][m], pv["t"][m] = s, p
            _undefined_notes(note, "t", m, np.ldexp(snapped[m], scale[m]), const[m], zero[m], n)
        if "wilcoxon" in tests:
            wmethod = "auto" if exact == "auto" else bool(exact)
            s, p, how, floor = _wil.signed_rank_batch(
                snapped[m],
                zero_method=zero_method,
                correction=continuity,
                method=wmethod,
                alternative=alternative,
            )
            stat["wilcoxon"][m], pv["wilcoxon"][m] = s, p
            out.methods["wilcoxon"].update(h for h in how if h != "none")
            _floor_notes(note, "wilcoxon", m, floor, zero[m], alpha, n)
        if "sign" in tests:
            stat["sign"][m], pv["sign"][m] = _sign.sign_test(out.wins[m], out.losses[m],
                                                             alternative)
            floor = _sign.smallest_p(out.wins[m] + out.losses[m], alternative)
            _floor_notes(note, "sign", m, floor, zero[m], alpha, n)
        if "tukey" in tests:
            if S < 2 or n < 2:
                q = np.where(zero[m], 0.0, np.nan)
                p = np.where(zero[m], 1.0, np.nan)
                for k in np.flatnonzero(~zero[m]):
                    note("tukey", m, k, f"{n} paired quer{'y' if n == 1 else 'ies'}: "
                         "no residual degrees of freedom, the statistic is undefined")
            else:
                q, p, _ = _anova.tukey_blocked(X, pi, pj)
            stat["tukey"][m], pv["tukey"][m] = q, p
            if n >= 2 and _anova.residual_is_zero(X):
                for k in np.flatnonzero(np.isnan(q)):
                    note(
                        "tukey",
                        m,
                        int(k),
                        "the two-way ANOVA residual is zero: the statistic is undefined",
                    )
        if "randomized-tukey" in tests:
            diff, p = _anova.randomized_tukey(X, pi, pj, n_resamples, rng_perm)
            stat["randomized-tukey"][m] = np.ldexp(diff, scale[m])
            pv["randomized-tukey"][m] = p
            # one topic: every permutation has the observed range (p = 1)
            _floor_notes(note, "randomized-tukey", m, np.full(P, 1.0 if n == 1 else 0.0),
                         zero[m], alpha, n, n_resamples)

    # multiple-testing corrections
    for t in tests:
        if t in FAMILYWISE or correction == "none":
            adj[t] = {m: pv[t][m].copy() for m in measures}
        elif correction in PERMUTATION_CORRECTIONS:
            adj[t] = {m: fam_rand[m] for m in measures}
        elif family == "report":
            flat = adjust_pvalues(np.concatenate([pv[t][m] for m in measures]), correction)
            for k, m in enumerate(measures):
                adj[t][m] = flat[k * P : (k + 1) * P]
        else:
            adj[t] = {m: adjust_pvalues(pv[t][m], correction) for m in measures}
    return out


def _undefined_notes(note, test, m, ds, const, zero, n) -> None:
    for k in range(ds.shape[0]):
        if zero[k]:
            continue
        if n < 2:
            note(
                test,
                m,
                k,
                f"{n} paired quer{'y' if n == 1 else 'ies'}: no spread, the statistic is undefined",
            )
        elif const[k] and not zero[k]:
            note(
                test,
                m,
                k,
                f"every query has the same difference ({ds[k, 0]:.6g}): zero variance, "
                "the statistic is undefined",
            )


def _floor_notes(note, test, m, floor, zero, alpha, n, n_resamples=None) -> None:
    """Note the comparisons whose smallest attainable p-value exceeds ``alpha``: ``floor``
    from the queries, and ``1 / (R + 1)`` of a sampled test's ``n_resamples`` R; the note
    names what sets the larger one."""
    sampled = 1.0 / (n_resamples + 1.0) if n_resamples is not None else 0.0
    for k in range(floor.size):
        least = max(float(floor[k]), sampled)
        if zero[k] or least <= alpha:
            continue
        if float(floor[k]) >= sampled:
            what = "this query" if n == 1 else f"these {n} queries"
        else:
            what = f"{n_resamples} resample{'s' * (n_resamples != 1)}"
        note(test, m, k,
             f"cannot reach p <= {alpha:g} with {what} (smallest attainable p = {_fmt_p(least)})")
