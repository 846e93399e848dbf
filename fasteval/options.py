"""The named choices of fasteval's options, each declared once as a ``Literal`` alias.

An alias types the keyword that takes it, lists its values for the command line
(``choices=get_args(TieBreak)``) and the docs, and :func:`check_choice` refuses any other
value with a :class:`~fasteval.errors.ParameterError` naming the option, the values it takes
and the value received.

Examples
--------
>>> from typing import get_args
>>> get_args(Alternative)
('two-sided', 'greater', 'less')
>>> check_choice("missing", Missing, "zero")
'zero'
"""

from __future__ import annotations

from typing import Literal, TypeVar, get_args

from fasteval.errors import ParameterError

#: how equal scores are ordered when a run is ranked (without the expected value over orders)
RankedTieBreak = Literal["trec", "rank", "input"]
#: how equal scores are ordered: :func:`fasteval.evaluate`'s ``tie_break``
TieBreak = Literal[RankedTieBreak, "expected"]
#: a document twice in one query's ranking: an error, or keep its best row
Duplicates = Literal["error", "keep_best"]
#: the readers' policy for a repeated judgment or ranked document ("ignore": keep every row)
ReadDuplicates = Literal[Duplicates, "ignore"]
#: the trec_eval version matched
Compat = Literal[9, 10]
#: where runs are scored: in this process, or on Ray Data
Engine = Literal["local", "ray"]
#: the formats a table is written in (:func:`fasteval.io.writers.write_table`)
WriteFormat = Literal["parquet", "csv", "tsv", "json", "jsonl", "trec"]

#: the sidedness of a paired test or interval (``"greater"``: ``run`` scores higher)
Alternative = Literal["two-sided", "greater", "less"]
#: the tests of :func:`fasteval.compare.compare`, in report order
CompareTest = Literal["t", "wilcoxon", "sign", "randomization", "bootstrap", "tukey",
                      "randomized-tukey"]
#: multiple-testing corrections (the last two: permutation max-T)
Correction = Literal["holm", "bonferroni", "sidak", "holm-sidak", "hochberg", "bh", "by", "maxt",
                     "stepdown", "none"]
#: the family a correction counts: every comparison of the report, or those of a measure
CorrectionFamily = Literal["report", "measure"]
#: queries absent from some run: dropped from every run, or scored 0
Missing = Literal["drop", "zero"]
#: the bootstrap's confidence intervals: bootstrap-t, BCa, percentile
CiMethod = Literal["t", "bca", "percentile"]
#: Wilcoxon's zero differences: dropped before ranking, or ranked (Pratt)
ZeroMethod = Literal["wilcox", "pratt"]
#: the design of a topic-set size: a paired t-test, or a one-way ANOVA of several systems
Design = Literal["t", "anova"]
#: the report's significance marks
Marks = Literal["letters", "dagger", "none"]
#: measure names in a report: as papers write them, or canonical
MeasureNames = Literal["display", "canonical"]

T = TypeVar("T")


def either(alias: object) -> str:
    """The values of ``alias`` in words: ``'a', 'b' or 'c'``.

    Examples
    --------
    >>> either(Missing), either(Alternative)
    ("'drop' or 'zero'", "'two-sided', 'greater' or 'less'")
    """
    words = [repr(v) for v in get_args(alias)]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def check_choice(parameter: str, alias: object, value: T, constraint: str | None = None, *,
                 given: object = None) -> T:
    """``value`` when it is one of ``alias``'s values; else a :class:`ParameterError` on
    ``parameter`` whose constraint is ``constraint`` (default: the values in words,
    :func:`either`), naming ``given`` (the value as the user spelled it, when ``value`` is
    its normalised spelling) or ``value``.

    Examples
    --------
    >>> check_choice("family", CorrectionFamily, "measure")
    'measure'
    >>> check_choice("family", CorrectionFamily, "run")
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: family must be 'report' or 'measure', got 'run'
    """
    if value not in get_args(alias):
        raise ParameterError(parameter, either(alias) if constraint is None else constraint,
                             value if given is None else given)
    return value
