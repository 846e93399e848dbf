"""Exceptions raised for bad user input.

Every message follows one pattern: *what* is wrong, *where* (file, line or row,
column or parameter) and *what was expected* / *what was received*.
"""

from __future__ import annotations


class FastevalError(ValueError):
    """Base class for errors caused by user input (bad files, bad parameters)."""


class InputError(FastevalError):
    """A data file or table does not have the expected shape or content.

    Parameters
    ----------
    message : str
        What is wrong and what was expected.
    source : str, optional
        File path or a description of the in-memory input (``"run"``, ``"qrels"``).
    line : int, optional
        1-based line number in a text file.
    row : int, optional
        0-based row index in a table.
    column : str, optional
        Column name (or field position) concerned.

    Examples
    --------
    >>> str(InputError("score is not a number: 'abc'", source="run.txt", line=3, column="score"))
    "run.txt, line 3, column 'score': score is not a number: 'abc'"
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        row: int | None = None,
        column: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.row = row
        self.column = column
        where = []
        if source is not None:
            where.append(str(source))
        if line is not None:
            where.append(f"line {line}")
        if row is not None:
            where.append(f"row {row}")
        if column is not None:
            where.append(f"column {column!r}")
        text = f"{', '.join(where)}: {message}" if where else message
        super().__init__(text)


class DuplicateJudgmentError(InputError):
    """A (query, document) pair judged twice in one qrels table."""


class ModelNotFoundError(FastevalError, OSError):
    """A model (for SAS) is neither a local folder nor in the Hugging Face cache.

    Also an ``OSError``, the class Haystack's ``SASEvaluator`` (through transformers) raises
    for a model it cannot load, so ``except OSError`` code written for Haystack still catches it.

    Examples
    --------
    >>> isinstance(ModelNotFoundError("model 'x' was not found"), (ValueError, OSError))
    True
    """


class ParameterError(FastevalError):
    """A keyword argument or CLI option has an invalid value.

    Examples
    --------
    >>> str(ParameterError("max_docs", "a positive integer", -3))
    'max_docs must be a positive integer, got -3'
    """

    def __init__(self, parameter: str, constraint: str, value: object) -> None:
        self.parameter = parameter
        self.constraint = constraint
        self.value = value
        super().__init__(f"{parameter} must be {constraint}, got {value!r}")


def check_flag(parameter: str, value: object) -> bool:
    """``value`` as a bool when it is one (Python's or numpy's), else a
    :class:`ParameterError`: a switch given ``"no"`` or ``2`` is refused, not read as true.

    Examples
    --------
    >>> check_flag("complete", True)
    True
    >>> check_flag("complete", "no")
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: complete must be True or False, got 'no'
    """
    kind = type(value)
    if isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_")):
        return bool(value)
    raise ParameterError(parameter, "True or False", value)


class OutputError(FastevalError):
    """An output cannot be written where it was asked to go (a directory, a full disk, a
    parent that is a file, no permission).

    Parameters
    ----------
    target : str
        The output as given (``"-"`` is standard output).
    problem : str
        What is wrong and what was expected.

    Examples
    --------
    >>> str(OutputError("results", "is a directory; expected a file path (or - for standard output)"))
    "output 'results' is a directory; expected a file path (or - for standard output)"
    """

    def __init__(self, target: str, problem: str) -> None:
        self.target = target
        self.problem = problem
        where = "standard output" if target == "-" else f"output {target!r}"
        super().__init__(f"{where} {problem}")


class UnknownMeasureError(FastevalError):
    """A measure name that the parser does not understand."""


class DataWarning(UserWarning):
    """Input data was accepted but altered (for example duplicate rows dropped).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn(DataWarning("run: dropped 2 duplicate rows"))
    >>> caught[0].category.__name__
    'DataWarning'
    """
