"""Haystack-compatible evaluators computed by fasteval's columnar engine.

Drop-in replacements for haystack-ai's evaluator components: same constructor
arguments, ``run`` inputs, outputs and errors; plain Python classes that also
work inside a ``haystack.Pipeline`` and serialize with ``to_dict`` /
``from_dict``.  Importing this package is light: each class loads on first use
(the SAS and LLM evaluators with their heavier dependencies).

Examples
--------
>>> from fasteval.evaluators import Document, DocumentNDCGEvaluator
>>> out = DocumentNDCGEvaluator().run(
...     ground_truth_documents=[[Document(content="France", score=1.0),
...                              Document(content="Paris", score=0.5)]],
...     retrieved_documents=[[Document(content="France"), Document(content="Germany"),
...                           Document(content="Paris")]])
>>> round(out["individual_scores"][0], 4)
0.9502
"""

from __future__ import annotations

from fasteval._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Document": "fasteval.evaluators.documents",
    "normalize_text": "fasteval.evaluators.documents",
    "RecallMode": "fasteval.evaluators.document_evaluators",
    "DocumentRecallEvaluator": "fasteval.evaluators.document_evaluators",
    "DocumentMRREvaluator": "fasteval.evaluators.document_evaluators",
    "DocumentMAPEvaluator": "fasteval.evaluators.document_evaluators",
    "DocumentNDCGEvaluator": "fasteval.evaluators.document_evaluators",
    "evaluate_documents": "fasteval.evaluators.document_evaluators",
    "evaluate_rag": "fasteval.evaluators.rag",
    "RagReport": "fasteval.evaluators.rag",
    "AnswerExactMatchEvaluator": "fasteval.evaluators.answers",
    "AnswerF1Evaluator": "fasteval.evaluators.answers",
    "normalize_answer": "fasteval.evaluators.answers",
    "SASEvaluator": "fasteval.evaluators.sas",
    "LLMEvaluator": "fasteval.evaluators.llm",
    "FaithfulnessEvaluator": "fasteval.evaluators.llm",
    "ContextRelevanceEvaluator": "fasteval.evaluators.llm",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("fasteval.evaluators", globals(), _EXPORTS)
