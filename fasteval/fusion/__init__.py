"""Rank fusion: several runs into one (CombSUM and its family, RRF, ISR, RBC, Borda,
Condorcet, weighted sums), with ranx's score normalisations, and a grid search of a
method's weights or parameter on training qrels.

One job per module:

* :mod:`fasteval.fusion.options`: method and normalisation names, parameter checks;
* :mod:`fasteval.fusion.layout`: the runs prepared once (ids interned, rankings,
  candidates, normalised scores) and the fused run built from them;
* :mod:`fasteval.fusion.api`: :func:`fuse` and :func:`optimize_fusion`.

The kernels are in :mod:`fasteval.kernels.fusion`.

Examples
--------
>>> from fasteval.fusion import fuse
>>> a = {"q1": {"d1": 2.0, "d2": 1.0}}
>>> b = {"q1": {"d2": 5.0, "d3": 4.0}}
>>> fuse([a, b], method="mnz", norm="min-max").rows()
[('q1', 'd2', 2.0, 1), ('q1', 'd1', 1.0, 2), ('q1', 'd3', 0.0, 3)]
"""

from __future__ import annotations

from fasteval.fusion.api import FusionSearch, fuse, optimize_fusion, scalar_grid, weight_grid
from fasteval.fusion.options import METHODS, NORMS

__all__ = ["FusionSearch", "METHODS", "NORMS", "fuse", "optimize_fusion", "scalar_grid",
           "weight_grid"]
