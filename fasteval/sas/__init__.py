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

from fasteval._lazy import lazy_exports

# Names load from their modules on first access: importing this package runs none of its
# modules, so a tool that imports the package and then one of its files by path (pytest's
# ``--import-mode=importlib --doctest-modules fasteval/sas/model.py``) keeps one copy of that
# module, with one ``LoadedModel`` class and one model cache.
_EXPORTS: dict[str, str] = {
    "EncodeStats": "fasteval.sas.encode",
    "default_model_path": "fasteval.sas.model",
    "load_model": "fasteval.sas.model",
    "sas": "fasteval.sas.core",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports("fasteval.sas", globals(), _EXPORTS)


class _CallableModule(types.ModuleType):
    """``fasteval.sas`` names both this package and the function; make the package callable too.

    ``import fasteval.sas`` binds the package as the attribute ``fasteval.sas``; calling it
    then still runs :func:`fasteval.sas.core.sas`.
    """

    def __call__(self, *args, **kwargs):
        from fasteval.sas.core import sas

        return sas(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
