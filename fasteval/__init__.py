"""fasteval: vectorized batch scoring for retrieval and RAG evaluation.

The public API is imported lazily, so ``import fasteval`` stays fast and the
heavy optional parts (sentence-transformers, LLM clients, plotting) load only
when used.

Examples
--------
>>> import fasteval
>>> qrels = {"q1": {"d1": 1, "d2": 0}}
>>> run = {"q1": {"d1": 0.9, "d2": 0.5}}
>>> fasteval.evaluate(qrels, run, ["P@1"]).get_column("value").to_list()
[1.0]
"""

from __future__ import annotations

from fasteval._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # io
    "read_qrels": "fasteval.io.readers",
    "read_run": "fasteval.io.readers",
    "scan_qrels": "fasteval.io.readers",
    "scan_run": "fasteval.io.readers",
    "write_table": "fasteval.io.writers",
    # measures
    "parse_measure": "fasteval.measures",
    "parse_measures": "fasteval.measures",
    "Measure": "fasteval.measures",
    # evaluation
    "evaluate": "fasteval.batch.engine",
    "aggregate": "fasteval.evaluation",
    "Evaluator": "fasteval.evaluation",
    # diversity (subtopic judgments, ndeval's measures)
    "evaluate_diversity": "fasteval.diversity",
    "DiversityEvaluator": "fasteval.diversity",
    "read_subtopic_qrels": "fasteval.io.subtopics",
    # preference judgments (trec_eval -R prefs / qrels_prefs)
    "evaluate_prefs": "fasteval.prefs",
    "read_prefs": "fasteval.prefs",
    # comparison
    "compare": "fasteval.compare",
    "Comparison": "fasteval.compare",
    "adjust_pvalues": "fasteval.compare",
    "topic_set_size": "fasteval.compare",
    # rank fusion
    "fuse": "fasteval.fusion",
    "optimize_fusion": "fasteval.fusion",
    # semantic answer similarity
    "sas": "fasteval.sas",
    # process-wide settings, opt-in (the fasteval command applies them)
    "configure_process": "fasteval.runtime",
    # errors
    "FastevalError": "fasteval.errors",
    "InputError": "fasteval.errors",
    "ParameterError": "fasteval.errors",
    "UnknownMeasureError": "fasteval.errors",
    "DataWarning": "fasteval.errors",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("fasteval", globals(), _EXPORTS)
