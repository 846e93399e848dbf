"""Compare retrieval runs: paired significance tests, effect sizes, reports and plots.

``fasteval.compare`` is both this package and the :func:`compare` function: calling the
module calls the function, so ``fasteval.compare(results)`` works however it was imported.

Examples
--------
>>> import polars as pl
>>> from fasteval.compare import compare
>>> runs = {"a": pl.DataFrame({"query_id": [1, 2, 3], "map": [0.5, 0.6, 0.7]}),
...         "b": pl.DataFrame({"query_id": [1, 2, 3], "map": [0.4, 0.6, 0.5]})}
>>> compare(runs, baseline="b", tests="t").effects["mean_diff"].round(4).to_list()
[0.1]
"""

from __future__ import annotations

import sys
import types

from fasteval.compare.core import TESTS, Comparison, compare
from fasteval.compare.corrections import adjust_pvalues
from fasteval.compare.power import pilot_variance, power, topic_set_size

__all__ = [
    "TESTS",
    "Comparison",
    "adjust_pvalues",
    "compare",
    "pilot_variance",
    "power",
    "topic_set_size",
]


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
