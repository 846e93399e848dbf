"""Haystack integration: importing this module registers every fasteval evaluator with Haystack.

``to_dict()`` writes each class's own module (``fasteval.evaluators.document_evaluators.
DocumentMAPEvaluator``...), and the classes enter Haystack's component registry by
themselves (see :mod:`fasteval.evaluators.base`), so this module is not needed to load
pipeline files. It stays for files written by earlier versions, whose ``type`` names
``fasteval.evaluators.haystack.<Class>``: Haystack imports this module when it meets such a
name, and every evaluator is then registered under it too. Haystack only deserializes
trusted modules, so load with ``allowed_modules=["fasteval"]``.

Examples
--------
>>> from haystack import Pipeline  # doctest: +SKIP
>>> old = "components:\\n  map:\\n    type: fasteval.evaluators.haystack.DocumentMAPEvaluator\\n"  # doctest: +SKIP
>>> Pipeline.loads(old, allowed_modules=["fasteval"]).get_component("map")  # doctest: +SKIP
DocumentMAPEvaluator(document_comparison_field='content')
"""

from __future__ import annotations

import importlib

from fasteval.evaluators.answers import AnswerExactMatchEvaluator, AnswerF1Evaluator
from fasteval.evaluators.base import register_with_haystack
from fasteval.evaluators.document_evaluators import (
    DocumentMAPEvaluator,
    DocumentMRREvaluator,
    DocumentNDCGEvaluator,
    DocumentRecallEvaluator,
)

__all__ = [
    "AnswerExactMatchEvaluator",
    "AnswerF1Evaluator",
    "DocumentMAPEvaluator",
    "DocumentMRREvaluator",
    "DocumentNDCGEvaluator",
    "DocumentRecallEvaluator",
]

register_with_haystack(*[globals()[_name] for _name in __all__])

# Evaluators written in sibling modules (SAS, LLM judges): register those that import.
for _module, _names in (
    ("fasteval.evaluators.sas", ("SASEvaluator",)),
    ("fasteval.evaluators.llm", ("LLMEvaluator", "FaithfulnessEvaluator", "ContextRelevanceEvaluator")),
):
    try:
        _mod = importlib.import_module(_module)
    except ImportError:
        continue
    for _name in _names:
        _cls = getattr(_mod, _name, None)
        if isinstance(_cls, type):
            register_with_haystack(_cls)
            globals()[_name] = _cls
            __all__.append(_name)
