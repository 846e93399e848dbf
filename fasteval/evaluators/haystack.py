"""Haystack integration: importing this module registers fasteval's evaluators.

The evaluators' ``to_dict()`` writes ``type: fasteval.evaluators.haystack.<Class>``;
when Haystack loads such a pipeline file it imports this module, which imports
Haystack (already loaded at that point) and adds every fasteval evaluator to
Haystack's component registry.  Haystack only deserializes trusted modules, so
load with ``allowed_modules=["fasteval"]``.

Examples
--------
>>> from haystack import Pipeline  # doctest: +SKIP
>>> from fasteval.evaluators import DocumentMAPEvaluator  # doctest: +SKIP
>>> pipe = Pipeline()  # doctest: +SKIP
>>> pipe.add_component("map", DocumentMAPEvaluator())  # doctest: +SKIP
>>> Pipeline.loads(pipe.dumps(), allowed_modules=["fasteval"])  # doctest: +SKIP
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

register_with_haystack(
    AnswerExactMatchEvaluator,
    AnswerF1Evaluator,
    DocumentMAPEvaluator,
    DocumentMRREvaluator,
    DocumentNDCGEvaluator,
    DocumentRecallEvaluator,
)

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
