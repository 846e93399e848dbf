"""Semantic answer similarity (SAS) at scale.

``sas()`` embeds each distinct text once (predictions and golds deduplicated together,
length-sorted batches, tokenization overlapped with the model), joins the vectors back to the
rows and scores every (prediction, gold) pair as a row-wise dot product of unit vectors.
Cross-encoders score each distinct pair once. Models load from local files only.

Examples
--------
>>> from fasteval.sas import sas
>>> out = sas(["The capital of France is Paris."], ["Paris is France's capital."])  # doctest: +SKIP
>>> round(out["sas"][0], 2) > 0.8  # doctest: +SKIP
True
"""

from __future__ import annotations

import sys
import types

from fasteval.sas.core import sas
from fasteval.sas.encode import EncodeStats
from fasteval.sas.model import default_model_path, load_model

__all__ = ["EncodeStats", "default_model_path", "load_model", "sas"]


class _CallableModule(types.ModuleType):
    """``fasteval.sas`` names both this package and the function; make the package callable too.

    ``import fasteval.sas`` binds the package as the attribute ``fasteval.sas``; calling it
    then still runs :func:`sas`.
    """

    def __call__(self, *args, **kwargs):
        return sas(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
