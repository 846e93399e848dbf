"""The statistics of :func:`fasteval.compare.compare`: every test, interval and effect size.

:func:`run` takes the paired score matrices and the checked options
(:class:`~fasteval.compare.settings.CompareOptions`) and returns per-measure arrays (one
value per compared pair, or per run); :mod:`fasteval.compare.core` builds the tables. What each procedure computes is documented in its module:
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
from fasteval.compare.settings import FAMILYWISE, PERMUTATION_CORRECTIONS, CompareOptions
from fasteval.compare.ties import snap, tolerance
from fasteval.errors import ParameterError
from fasteval.options import Alternative

_ANOVA_SCHEMA = {"measure": pl.Utf8, "source": pl.Utf8, "ss": pl.Float64, "df": pl.Int64,
                 "ms": pl.Float64, "f": pl.Float64, "p_value": pl.Float64}


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

    @classmethod
    def empty(cls, tests: tuple[str, ...], measures: list[str], n_pairs: int) -> Outcome:
        return cls({t: {} for t in tests}, {t: {} for t in tests}, {t: {} for t in tests},
                   {t: {m: [None] * n_pairs for m in measures} for t in tests},
                   methods={t: set() for t in tests})

    def note(self, test: str, m: str, k: int, text: str) -> None:
        """Add ``text`` to the note of comparison ``k`` of ``test`` on measure ``m``."""
        prev = self.notes[test][m][k]
        self.notes[test][m][k] = text if prev is None else f"{prev}; {text}"


@dataclass(frozen=True)
class _Scaled:
    """One measure's scores scaled by ``2 ** -scale`` and the differences of the pairs."""

    scores: np.ndarray  # (runs, queries)
    scale: int
    ds: np.ndarray  # tie-merged differences, one row per pair
    const: np.ndarray  # every difference equal
    zero: np.ndarray  # every difference zero


def _scaled(scores: np.ndarray, pi: np.ndarray, pj: np.ndarray) -> _Scaled:
    """Every statistic is computed on the scores scaled by a power of two (exact) to a
    largest magnitude in [0.5, 1): squares of scores near 1e300 (1e-300) would overflow
    (underflow); values in the scores' units are scaled back."""
    scale = _anova.power_of_two(scores)
    X = np.ldexp(scores, -scale)
    A, B = X[pi], X[pj]
    ds = snap(A - B, tolerance(A, B))
    const = np.all(ds == ds[:, :1], axis=1) if X.shape[1] else np.ones(pi.size, dtype=bool)
    return _Scaled(X, scale, ds, const, ~np.any(ds != 0, axis=1))


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


def _ttest(a: np.ndarray, b: np.ndarray, alternative: Alternative) -> tuple[np.ndarray, np.ndarray]:
    from scipy import stats

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.ttest_rel(a, b, axis=-1, alternative=alternative)
    stat = np.atleast_1d(np.asarray(res.statistic, dtype=np.float64)).copy()
    p = np.atleast_1d(np.asarray(res.pvalue, dtype=np.float64)).copy()
    return stat, p


def run(
    paired: dict[str, Paired],
    systems: list[str],
    measures: list[str],
    pi: np.ndarray,
    pj: np.ndarray,
    opts: CompareOptions,
) -> Outcome:
    """Run every requested test on every measure; see the module notes.

    Examples
    --------
    >>> import numpy as np, polars as pl
    >>> from fasteval.compare._data import Paired
    >>> from fasteval.compare.settings import check_options
    >>> x = np.array([[0.5, 0.6, 0.7, 0.8], [0.1, 0.2, 0.3, 0.4]])
    >>> pm = Paired("map", pl.Series([1, 2, 3, 4]), x, np.array([4, 4]), 4, np.arange(4))
    >>> out = run({"map": pm}, ["a", "b"], ["map"], np.array([0]), np.array([1]),
    ...           check_options(tests="t", n_resamples=100, ci=None))
    >>> out.stat["t"]["map"].tolist(), out.notes["t"]["map"]
    ([nan], ['every query has the same difference (0.4): zero variance, the statistic is undefined'])
    """
    out = Outcome.empty(opts.tests, measures, pi.size)
    flip_ss, boot_ss, perm_ss = np.random.SeedSequence(opts.seed).spawn(3)
    rng_flip, rng_boot, rng_perm = (np.random.Generator(np.random.PCG64(ss))
                                    for ss in (flip_ss, boot_ss, perm_ss))
    sc = {m: _scaled(paired[m].scores, pi, pj) for m in measures}
    _describe(out, sc, pi, pj, len(systems))
    # resampling procedures, one pass per group of measures sharing their queries
    groups = _groups(paired, measures)
    if opts.correction in PERMUTATION_CORRECTIONS and opts.family == "report" and len(groups) > 1:
        raise ParameterError(
            "family",
            f"'measure' with correction={opts.correction!r} when measures pair different queries",
            opts.family,
        )
    fam_rand: dict[str, np.ndarray] = {}
    for g in groups:
        Xg = np.stack([sc[m].scores for m in g])  # (M, S, n)
        D = (Xg[:, pi, :] - Xg[:, pj, :]).reshape(len(g) * pi.size, Xg.shape[2])
        if "randomization" in opts.tests:
            fam_rand.update(_randomization(out, g, D, sc, opts, rng_flip))
        if opts.need_bootstrap:
            _bootstrap(out, g, D, Xg, sc, pi, pj, opts, rng_boot)
    for m in measures:
        for name, test in _PER_MEASURE:
            if name in opts.tests:
                test(out, m, sc[m], pi, pj, opts, rng_perm)
    _correct(out, measures, pi.size, opts, fam_rand)
    return out


def _describe(out: Outcome, sc: dict[str, _Scaled], pi: np.ndarray, pj: np.ndarray,
              n_systems: int) -> None:
    """Wins, ties and losses, the two-way ANOVA and the effect sizes of every measure."""
    anova_rows: list[tuple] = []
    for m, s in sc.items():
        out.wins[m] = (s.ds > 0).sum(axis=1)
        out.ties[m] = (s.ds == 0).sum(axis=1)
        out.losses[m] = (s.ds < 0).sum(axis=1)
        ve = _anova_rows(m, s, anova_rows)
        out.effects[m] = effect_sizes(s.scores[pi], s.scores[pj], s.ds,
                                      ve if n_systems >= 2 else None)
    out.anova = pl.DataFrame(anova_rows, schema=_ANOVA_SCHEMA, orient="row")


def _anova_rows(m: str, s: _Scaled, rows: list[tuple]) -> float:
    """Append measure ``m``'s two-way ANOVA rows (in the scores' units) to ``rows``; returns
    the residual variance of the scaled scores (NaN with fewer than two queries)."""
    if s.scores.shape[1] < 2:
        return float("nan")
    a = _anova.two_way_anova(s.scores)
    ve = a["ms_residual"]
    if _anova.residual_is_zero(s.scores):
        ve = 0.0  # rounding noise, not a variance: ES_E is undefined
    sq = 2 * s.scale  # sums of squares in the squared units of the scores
    with np.errstate(over="ignore"):
        a = {**a, **{k: float(np.ldexp(a[k], sq)) for k in
                     ("ss_system", "ss_topic", "ss_residual", "ms_system", "ms_topic",
                      "ms_residual")}}
    for src in ("system", "topic"):
        rows.append((m, src, a[f"ss_{src}"], a[f"df_{src}"], a[f"ms_{src}"], a[f"f_{src}"],
                     a[f"p_{src}"]))
    rows.append((m, "residual", a["ss_residual"], a["df_residual"], a["ms_residual"], None, None))
    return ve


def _randomization(out: Outcome, g: list[str], D: np.ndarray, sc: dict[str, _Scaled],
                   opts: CompareOptions, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The sign-flip test of a group of measures; returns their max-T adjusted p-values
    (none without a permutation correction)."""
    n = D.shape[1]
    P = D.shape[0] // len(g)
    use_exact = (2**n <= opts.n_resamples) if opts.exact == "auto" else bool(opts.exact)
    if use_exact and n > 30:
        raise ParameterError("exact", "False or 'auto' for more than 30 queries", opts.exact)
    fams = None
    if opts.correction in PERMUTATION_CORRECTIONS:
        fams = ([np.arange(len(g) * P)] if opts.family == "report"
                else [np.arange(k * P, (k + 1) * P) for k in range(len(g))])
    mean, p, padj = _rand.signflip_test(
        D, opts.n_resamples, rng, exact=use_exact, alternative=opts.alternative,
        families=fams, correction=opts.correction if fams else None,
    )
    out.methods["randomization"].add("exact" if use_exact else "sampled")
    adjusted = {}
    for k, m in enumerate(g):
        sl = slice(k * P, (k + 1) * P)
        out.stat["randomization"][m] = np.ldexp(mean[sl], sc[m].scale)
        out.p["randomization"][m] = p[sl]
        if padj is not None:
            adjusted[m] = padj[sl]
        nz = (sc[m].ds != 0).sum(axis=1)
        floor = np.ldexp(2.0 if opts.alternative == "two-sided" else 1.0, -nz)
        _floor_notes(out, "randomization", m, floor, sc[m].zero, opts.alpha, n,
                     None if use_exact else opts.n_resamples)
    return adjusted


def _bootstrap(out: Outcome, g: list[str], D: np.ndarray, Xg: np.ndarray,
               sc: dict[str, _Scaled], pi: np.ndarray, pj: np.ndarray, opts: CompareOptions,
               rng: np.random.Generator) -> None:
    """The bootstrap-t test and the intervals of a group of measures."""
    M, S, n = Xg.shape
    P = pi.size
    keys = rng.bit_generator.random_raw(opts.n_resamples).astype(np.uint64, copy=False)
    first = np.arange(M)[:, None] * S  # each measure's first row of the stacked scores
    res = _boot.paired_bootstrap(
        D, np.concatenate([sc[m].ds for m in g]), Xg.reshape(M * S, n), keys,
        level=0.95 if opts.ci is None else opts.ci, ci_method=opts.ci_method,
        alternative=opts.alternative,
        pairs=((first + pi[None, :]).reshape(-1), (first + pj[None, :]).reshape(-1)),
    )
    for k, m in enumerate(g):
        s, sl, rs = sc[m], slice(k * P, (k + 1) * P), slice(k * S, (k + 1) * S)
        if opts.ci is not None:
            out.ci_low[m] = np.ldexp(res.ci_low[sl], s.scale)
            out.ci_high[m] = np.ldexp(res.ci_high[sl], s.scale)
            out.mean_low[m] = np.ldexp(res.mean_low[rs], s.scale)
            out.mean_high[m] = np.ldexp(res.mean_high[rs], s.scale)
        if "bootstrap" in opts.tests:
            out.stat["bootstrap"][m] = res.statistic[sl]
            out.p["bootstrap"][m] = res.p_value[sl]
            _undefined_notes(out, "bootstrap", m, np.ldexp(s.ds, s.scale), s.const, s.zero, n)
            _floor_notes(out, "bootstrap", m, res.min_p[sl], s.zero, opts.alpha, n,
                         opts.n_resamples)


def _t(out: Outcome, m: str, s: _Scaled, pi, pj, opts: CompareOptions, rng) -> None:
    n = s.scores.shape[1]
    st, p = _ttest(s.scores[pi], s.scores[pj], opts.alternative)
    undefined = (s.const | (n < 2)) & ~s.zero
    st = np.where(s.zero, 0.0, st)
    p = np.where(s.zero, 1.0, p)
    st[undefined] = np.nan
    p[undefined] = np.nan
    out.stat["t"][m], out.p["t"][m] = st, p
    _undefined_notes(out, "t", m, np.ldexp(s.ds, s.scale), s.const, s.zero, n)


def _wilcoxon(out: Outcome, m: str, s: _Scaled, pi, pj, opts: CompareOptions, rng) -> None:
    st, p, how, floor = _wil.signed_rank_batch(
        s.ds, zero_method=opts.zero_method, correction=opts.continuity,
        method="auto" if opts.exact == "auto" else bool(opts.exact),
        alternative=opts.alternative,
    )
    out.stat["wilcoxon"][m], out.p["wilcoxon"][m] = st, p
    out.methods["wilcoxon"].update(h for h in how if h != "none")
    _floor_notes(out, "wilcoxon", m, floor, s.zero, opts.alpha, s.scores.shape[1])


def _sign_test(out: Outcome, m: str, s: _Scaled, pi, pj, opts: CompareOptions, rng) -> None:
    out.stat["sign"][m], out.p["sign"][m] = _sign.sign_test(out.wins[m], out.losses[m],
                                                            opts.alternative)
    floor = _sign.smallest_p(out.wins[m] + out.losses[m], opts.alternative)
    _floor_notes(out, "sign", m, floor, s.zero, opts.alpha, s.scores.shape[1])


def _tukey(out: Outcome, m: str, s: _Scaled, pi, pj, opts: CompareOptions, rng) -> None:
    X = s.scores
    S, n = X.shape
    if S < 2 or n < 2:
        q = np.where(s.zero, 0.0, np.nan)
        p = np.where(s.zero, 1.0, np.nan)
        for k in np.flatnonzero(~s.zero):
            out.note("tukey", m, k, f"{n} paired quer{'y' if n == 1 else 'ies'}: "
                     "no residual degrees of freedom, the statistic is undefined")
    else:
        q, p, _ = _anova.tukey_blocked(X, pi, pj)
    out.stat["tukey"][m], out.p["tukey"][m] = q, p
    if n >= 2 and _anova.residual_is_zero(X):
        for k in np.flatnonzero(np.isnan(q)):
            out.note("tukey", m, int(k),
                     "the two-way ANOVA residual is zero: the statistic is undefined")


def _randomized_tukey(out: Outcome, m: str, s: _Scaled, pi, pj, opts: CompareOptions,
                      rng) -> None:
    n = s.scores.shape[1]
    diff, p = _anova.randomized_tukey(s.scores, pi, pj, opts.n_resamples, rng)
    out.stat["randomized-tukey"][m] = np.ldexp(diff, s.scale)
    out.p["randomized-tukey"][m] = p
    # one topic: every permutation has the observed range (p = 1)
    _floor_notes(out, "randomized-tukey", m, np.full(pi.size, 1.0 if n == 1 else 0.0),
                 s.zero, opts.alpha, n, opts.n_resamples)


#: the tests run per measure, in the order they run
_PER_MEASURE = (("t", _t), ("wilcoxon", _wilcoxon), ("sign", _sign_test), ("tukey", _tukey),
                ("randomized-tukey", _randomized_tukey))


def _correct(out: Outcome, measures: list[str], P: int, opts: CompareOptions,
             fam_rand: dict[str, np.ndarray]) -> None:
    """The multiple-testing corrections: ``out.adjusted`` from ``out.p``."""
    pv, adj, correction = out.p, out.adjusted, opts.correction
    for t in opts.tests:
        if t in FAMILYWISE or correction == "none":
            adj[t] = {m: pv[t][m].copy() for m in measures}
        elif correction in PERMUTATION_CORRECTIONS:
            adj[t] = {m: fam_rand[m] for m in measures}
        elif opts.family == "report":
            flat = adjust_pvalues(np.concatenate([pv[t][m] for m in measures]), correction)
            for k, m in enumerate(measures):
                adj[t][m] = flat[k * P : (k + 1) * P]
        else:
            adj[t] = {m: adjust_pvalues(pv[t][m], correction) for m in measures}


def _undefined_notes(out, test, m, ds, const, zero, n) -> None:
    """Note the comparisons whose statistic is undefined: too few queries, or no spread."""
    for k in range(ds.shape[0]):
        if zero[k]:
            continue
        if n < 2:
            out.note(test, m, k, f"{n} paired quer{'y' if n == 1 else 'ies'}: no spread, the "
                     "statistic is undefined")
        elif const[k]:
            out.note(test, m, k, f"every query has the same difference ({ds[k, 0]:.6g}): zero "
                     "variance, the statistic is undefined")


def _floor_notes(out, test, m, floor, zero, alpha, n, n_resamples=None) -> None:
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
        out.note(test, m, k,
                 f"cannot reach p <= {alpha:g} with {what} (smallest attainable p = {least:.3g})")
