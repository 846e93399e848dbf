"""Fusion methods, score normalisations and their parameters: names, aliases, checks.

Every method and normalisation has ranx's name as its canonical name; the aliases are
the spellings of the literature (``combsum``, ``CombMNZ``, ``borda``, ``z-score``...).
Names are read case-insensitively, with ``-`` and ``_`` alike.
:func:`resolve` turns the user's choices into a checked :class:`FusionSpec` (a
:class:`fasteval.errors.ParameterError` names the first wrong one), before any run is read.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fasteval.errors import ParameterError
from fasteval.kernels import fusion as KF

METHODS: dict[str, int] = {
    "sum": KF.M_SUM,
    "mnz": KF.M_MNZ,
    "anz": KF.M_ANZ,
    "max": KF.M_MAX,
    "min": KF.M_MIN,
    "med": KF.M_MED,
    "gmnz": KF.M_GMNZ,
    "rrf": KF.M_RRF,
    "isr": KF.M_ISR,
    "log_isr": KF.M_LOG_ISR,
    "logn_isr": KF.M_LOGN_ISR,
    "rbc": KF.M_RBC,
    "bordafuse": KF.M_BORDA,
    "w_bordafuse": KF.M_W_BORDA,
    "condorcet": KF.M_CONDORCET,
    "w_condorcet": KF.M_W_CONDORCET,
    "wsum": KF.M_WSUM,
    "wmnz": KF.M_WMNZ,
    "mixed": KF.M_MIXED,
}
"""Canonical method name (ranx's) -> kernel code."""

_METHOD_ALIASES: dict[str, str] = {
    **{f"comb{m}": m for m in ("sum", "mnz", "anz", "max", "min", "med", "gmnz")},
    **{f"comb_{m}": m for m in ("sum", "mnz", "anz", "max", "min", "med", "gmnz")},
    "reciprocal_rank_fusion": "rrf",
    "inverse_square_rank": "isr",
    "logisr": "log_isr",
    "lognisr": "logn_isr",
    "rank_biased_centroids": "rbc",
    "borda": "bordafuse",
    "borda_fuse": "bordafuse",
    "weighted_bordafuse": "w_bordafuse",
    "weighted_borda": "w_bordafuse",
    "condorcet_fuse": "condorcet",
    "weighted_condorcet": "w_condorcet",
    "weighted_sum": "wsum",
    "w_sum": "wsum",
    "weighted_mnz": "wmnz",
}

RANK_METHODS = frozenset({"rrf", "isr", "log_isr", "logn_isr", "rbc", "bordafuse", "w_bordafuse",
                          "condorcet", "w_condorcet"})
"""Methods that read each run's ranking (positions), not its scores."""

WEIGHTED_METHODS = frozenset({"wsum", "wmnz", "mixed", "w_bordafuse", "w_condorcet"})
"""Methods that take one weight per run (required, as in ranx)."""

NORMS: dict[str, int] = {
    "none": KF.NORM_NONE,
    "min-max": KF.NORM_MIN_MAX,
    "max": KF.NORM_MAX,
    "sum": KF.NORM_SUM,
    "zmuv": KF.NORM_ZMUV,
    "rank": KF.NORM_RANK,
    "borda": KF.NORM_BORDA,
    "min-max-inverted": KF.NORM_MIN_MAX_INVERTED,
}
"""Canonical normalisation name (ranx's; ``"none"`` for ranx's ``None``) -> kernel code."""

_NORM_ALIASES: dict[str, str] = {
    "minmax": "min-max",
    "z-score": "zmuv",
    "zscore": "zmuv",
    "standard": "zmuv",
    "minmax-inverted": "min-max-inverted",
}
"""Aliases of the normalisations, written with ``-`` (:func:`norm_name` reads ``_`` as ``-``)."""

PARAMETERS: dict[str, tuple[str, ...]] = {
    "gmnz": ("gamma",),
    "rrf": ("k",),
    "logn_isr": ("sigma",),
    "rbc": ("phi",),
}
"""The scalar parameters of each method that has some."""

DEFAULTS: dict[str, float] = {"k": 60, "sigma": 0.01}
"""Defaults where ranx has one; ``phi`` (RBC) and ``gamma`` (CombGMNZ) must be given."""

RANGES: dict[str, tuple[str, Callable[[float], bool]]] = {
    "k": ("a number > 0", lambda x: x > 0),
    "phi": ("a number, 0 < phi < 1", lambda x: 0 < x < 1),
    "gamma": ("a number >= 0", lambda x: x >= 0),
    "sigma": ("a number, 0 <= sigma <= 1", lambda x: 0 <= x <= 1),
}
"""Each method parameter's accepted values: the constraint's words and its test."""


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def method_name(method: str) -> str:
    """The canonical name of a fusion method.

    Examples
    --------
    >>> method_name("CombMNZ"), method_name("reciprocal-rank-fusion"), method_name("borda")
    ('mnz', 'rrf', 'bordafuse')
    """
    if isinstance(method, str):
        k = _key(method)
        k = _METHOD_ALIASES.get(k, k)
        if k in METHODS:
            return k
    raise ParameterError("method", f"one of {sorted(METHODS)} (or an alias such as combsum, "
                         "combmnz, borda)", method)


def norm_name(norm: str | None) -> str:
    """The canonical name of a score normalisation (``None`` is ``"none"``).

    Examples
    --------
    >>> norm_name("z-score"), norm_name(None), norm_name("MinMax")
    ('zmuv', 'none', 'min-max')
    """
    if norm is None:
        return "none"
    if isinstance(norm, str):
        k = _key(norm).replace("_", "-")
        k = _NORM_ALIASES.get(k, k)
        if k in NORMS:
            return k
    raise ParameterError("norm", f"one of {sorted(NORMS)} or None (z-score and minmax are "
                         "aliases)", norm)


@dataclass(frozen=True)
class FusionSpec:
    """A checked choice of method, normalisation and parameters."""

    method: str
    norm: str
    weights: tuple[float, ...] | None
    k: float = 60.0
    phi: float = 0.5
    gamma: float = 1.0
    sigma: float = 0.01

    @property
    def params(self) -> dict[str, object]:
        """The parameters the method uses (``weights`` as a tuple), for reports."""
        out: dict[str, object] = {}
        if self.weights is not None:
            out["weights"] = self.weights
        for p in PARAMETERS.get(self.method, ()):
            out[p] = getattr(self, p)
        return out

    def weight_array(self, n_runs: int) -> np.ndarray:
        """One weight per run for the kernels (ones for the unweighted methods)."""
        if self.weights is None:
            return np.ones(n_runs, dtype=np.float64)
        return np.asarray(self.weights, dtype=np.float64)


def _real(name: str, value: object, constraint: str, ok) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(name, constraint, value)
    x = float(value)
    if not math.isfinite(x) or not ok(x):
        raise ParameterError(name, constraint, value)
    return x


def check_weights(weights: object, n_runs: int | None, names: Sequence[str] | None = None
                  ) -> tuple[float, ...]:
    """One finite weight >= 0 per run, not all zero (a mapping is matched to run names).

    Examples
    --------
    >>> check_weights([0.3, 0.7], 2)
    (0.3, 0.7)
    >>> check_weights([1.0], 2)
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: weights must be one number per run (2 runs), got [1.0]
    """
    if isinstance(weights, Mapping):
        if names is None and n_runs is None:  # a check before the runs are read: values only
            return check_weights(list(weights.values()), None)
        if names is None:
            raise ParameterError("weights", "a sequence (the runs are not named)", weights)
        by_name = {str(k): v for k, v in weights.items()}  # runs are named str(key)
        missing = [n for n in names if n not in by_name]
        extra = [k for k in by_name if k not in set(names)]
        if missing or extra or len(by_name) < len(weights):
            raise ParameterError("weights", f"one weight for each run name {list(names)}",
                                 dict(weights))
        weights = [by_name[n] for n in names]
    if isinstance(weights, str | bytes) or not isinstance(weights, Sequence | np.ndarray):
        raise ParameterError("weights", "a sequence of numbers, one per run", weights)
    values = list(weights)
    if n_runs is not None and len(values) != n_runs:
        raise ParameterError("weights", f"one number per run ({n_runs} runs)", weights)
    out = tuple(_real("weights", w, "finite numbers >= 0, one per run", lambda x: x >= 0)
                for w in values)
    if out and not any(out):
        raise ParameterError("weights", "not all zero", weights)
    return out


def resolve(method: str, norm: str | None, weights: object = None, *, n_runs: int | None = None,
            names: Sequence[str] | None = None, k: object = None, phi: object = None,
            gamma: object = None, sigma: object = None) -> FusionSpec:
    """Check a fusion request and return it as a :class:`FusionSpec`.

    Raises
    ------
    ParameterError
        An unknown method or normalisation; weights missing for a weighted method, given
        to another, of the wrong length or not finite numbers >= 0 (not all zero); a
        parameter given to a method that does not use it, or out of range (``k > 0``,
        ``0 < phi < 1``, ``gamma >= 0``, ``0 <= sigma <= 1``); ``norm="borda"`` with a
        method that reads rankings (ranx orders the documents it adds arbitrarily there).

    Examples
    --------
    >>> resolve("RRF", "min-max").params
    {'k': 60.0}
    >>> resolve("rbc", None)
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: phi must be given for method 'rbc' (a number, 0 < phi < 1), got None
    """
    m = method_name(method)
    n = norm_name(norm)
    given = {"k": k, "phi": phi, "gamma": gamma, "sigma": sigma}
    uses = PARAMETERS.get(m, ())
    for p, value in given.items():
        if value is not None and p not in uses:
            users = sorted(x for x, ps in PARAMETERS.items() if p in ps)
            raise ParameterError(p, f"used only by method {' / '.join(map(repr, users))}, not "
                                 f"{m!r}", value)
    if m in WEIGHTED_METHODS:
        if weights is None:
            raise ParameterError("weights", f"given for method {m!r} (one number per run)", None)
        w: tuple[float, ...] | None = check_weights(weights, n_runs, names)
    elif weights is not None:
        raise ParameterError("weights", f"used only by methods {sorted(WEIGHTED_METHODS)}, not "
                             f"{m!r}", weights)
    else:
        w = None
    if n == "borda" and m in RANK_METHODS:
        raise ParameterError("norm", f"not 'borda' with method {m!r}, which reads rankings (the "
                             "documents a Borda normalisation adds to a run have no rank)", norm)
    values: dict[str, float] = {}
    if m == "rbc" and phi is None:
        raise ParameterError("phi", f"given for method 'rbc' ({RANGES['phi'][0]})", None)
    if m == "gmnz" and gamma is None:
        raise ParameterError("gamma", f"given for method 'gmnz' ({RANGES['gamma'][0]}; 1 gives "
                             "CombMNZ)", None)
    for param in uses:
        value = given[param] if given[param] is not None else DEFAULTS[param]
        values[param] = _real(param, value, *RANGES[param])
    return FusionSpec(method=m, norm=n, weights=w, **values)
