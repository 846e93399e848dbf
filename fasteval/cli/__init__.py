"""Command line: ``fasteval eval | trec-eval | compare | power | fuse | sas | judge | datasets | warmup``.

Each subcommand lives in its own module with two functions,
``add_parser(subparsers)`` and ``run(args) -> int``. Modules are imported only
when their subcommand is used, so ``fasteval --help`` and ``import fasteval`` stay fast.
User errors are printed as one line on stderr, exit status 2, no traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

from fasteval.io.files import STDIN

# subcommand name -> module (relative to fasteval.cli), one-line help
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("eval_cmd", "score one or more runs against qrels"),
    "trec-eval": ("trec_eval_cmd", "drop-in replacement for the trec_eval 10 command line"),
    "compare": ("compare_cmd", "compare retrievers with paired significance tests"),
    "power": ("power_cmd", "topic-set size: topics needed to detect a difference"),
    "fuse": ("fuse_cmd", "fuse runs into one (RRF, CombSUM, CombMNZ, Borda, Condorcet, weighted sums...)"),
    "sas": ("sas_cmd", "semantic answer similarity of predictions against gold answers"),
    "judge": ("judge_cmd", "LLM-judged faithfulness / context relevance"),
    "datasets": ("datasets_cmd", "generate synthetic benchmark datasets"),
    "warmup": ("warmup_cmd", "compile the kernels once (after installing), so the first job does not pay"),
}


def add_command(subparsers, name: str, description: str | None = None) -> argparse.ArgumentParser:
    """The parser of subcommand ``name`` (its module's ``add_parser`` calls this), with the
    one-line help of :data:`SUBCOMMANDS`: ``fasteval --help`` shows the same text whether
    or not the command's module is loaded.

    Examples
    --------
    >>> sub = argparse.ArgumentParser(prog="fasteval").add_subparsers()
    >>> add_command(sub, "power", "Topic-set size.").description
    'Topic-set size.'
    """
    return subparsers.add_parser(name, help=SUBCOMMANDS[name][1], description=description)



def stdin_once(paths: list[str], what: str) -> None:
    """Refuse ``paths`` that name standard input more than once: it can be read once.

    Examples
    --------
    >>> stdin_once(["-", "run.txt"], "RUN")
    >>> stdin_once(["-", "-"], "RUN")
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: RUN must be read from standard input ('-') at most once, got ['-', '-']
    """
    from fasteval.errors import ParameterError

    if paths.count(STDIN) > 1:
        raise ParameterError(what, "read from standard input ('-') at most once", paths)


def check_format_agrees(fmt: str | None, output: str, named: str | None) -> None:
    """Refuse a ``--format`` that contradicts the format ``-o``'s suffix names: parquet
    bytes under ``res.csv`` (or CSV under ``res.trec``) would be misread by every later
    reader of the file. ``named``: the format the suffix names, ``"any text"`` for a name
    that holds any text format (``.txt``), None for a suffix that names none (any format).

    Examples
    --------
    >>> check_format_agrees("trec", "res.txt", "any text"), check_format_agrees("csv", "res.out", None)
    (None, None)
    >>> check_format_agrees("parquet", "res.csv", "csv")
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: --format must be csv, the format the suffix of -o 'res.csv' names (or -o without that suffix), got 'parquet'
    """
    from fasteval.errors import ParameterError

    if fmt is None or named is None or fmt == named or (named == "any text" and fmt != "parquet"):
        return
    wanted = "a text format" if named == "any text" else named
    raise ParameterError("--format", f"{wanted}, the format the suffix of -o {output!r} names (or -o "
                         "without that suffix)", fmt)


def input_source(path: str):
    """What a reader is given for ``path``: ``sys.stdin`` for ``-``, else the path."""
    return sys.stdin if path == STDIN else path


@contextlib.contextmanager
def worded(advice: Mapping[str, str]) -> Iterator[None]:
    """Re-raise an :class:`fasteval.errors.InputError` of the block with its advice in a
    command's terms (``advice``: :data:`fasteval.errors.ADVICE` key -> text, see
    :meth:`fasteval.errors.InputError.reworded`); other errors pass unchanged.

    Examples
    --------
    >>> from fasteval.errors import InputError
    >>> try:
    ...     with worded({"keep_best_run": "use --keep-best-duplicates"}):
    ...         raise InputError("document repeated", source="r.txt", advice="keep_best_run")
    ... except InputError as exc:
    ...     print(exc)
    r.txt: document repeated; use --keep-best-duplicates
    """
    from fasteval.errors import InputError

    try:
        yield
    except InputError as exc:
        reworded = exc.reworded(advice)
        if reworded is exc:
            raise
        raise reworded from None


def console_main() -> NoReturn:
    """The ``fasteval`` program: :func:`main` in a process tuned for evaluating.

    The command owns its process, so it applies :func:`fasteval.runtime.configure_process`
    (allocators that keep freed memory, passive OpenMP threads, no BLAS pool or probe; a
    value set in the environment wins), and it ends the process without tearing the
    interpreter down (:func:`_exit_now`): by then every output file is complete and renamed
    into place, and freeing gigabytes of arrays and unloading the modules one by one took
    most of a second after a large job.
    """
    try:
        from fasteval.runtime import configure_process

        configure_process()
        _stand_in_closed_streams()
        abort_on_sigterm()
    except KeyboardInterrupt:  # Ctrl-C while the process starts, before any command runs
        print("fasteval: interrupted", file=sys.stderr)
        _exit_now(130)
    try:
        status = main()
    except SystemExit:  # argparse's --help or usage error: its text may meet a closed pipe
        _flush_stdout_or_die()
        raise
    except BrokenPipeError:  # (argparse's help, written by _Parser._print_message)
        _die_of_sigpipe()
    finally:  # (a stopped job: outputs whose own cleanup did not run)
        _abort_open_outputs()
    if status == PIPE_CLOSED:
        _die_of_sigpipe()
    _exit_now(status)


PIPE_CLOSED = 128 + 13
"""The status of a command whose standard output is a pipe that its reader closed
(``fasteval trec-eval ... | head -1``): a Unix tool's when SIGPIPE kills it, as trec_eval's.
The ``fasteval`` program then ends by that signal itself (:func:`_die_of_sigpipe`)."""


def _die_of_sigpipe() -> NoReturn:
    """End the process at once, quietly, killed by ``SIGPIPE`` as a Unix tool whose output
    pipe was closed is (a shell reports 141); where there is no such signal, exit 141."""
    import signal

    _abort_open_outputs()
    if hasattr(signal, "SIGPIPE") and hasattr(os, "kill"):
        try:
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGPIPE)
        except (OSError, ValueError):  # (not the main thread, or no such signal here)
            pass
    os._exit(PIPE_CLOSED)


def _stdout_reader_gone() -> bool:
    """Whether standard output is a pipe (or socket) whose reader is gone, the place of a
    ``BrokenPipeError`` (not a connection the command made, whose end is an error); True
    where that cannot be told (no descriptor, no ``poll``).

    Examples
    --------
    >>> import io, contextlib
    >>> with contextlib.redirect_stdout(io.StringIO()):  # no descriptor: taken as gone
    ...     gone = _stdout_reader_gone()
    >>> gone
    True
    """
    import io
    import select
    import stat

    try:
        fd = sys.stdout.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return True
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return False
    if not hasattr(select, "poll"):
        return True
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))


def _flush_stdout_or_die() -> None:
    """Flush standard output; a pipe its reader closed ends the process as SIGPIPE would."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _die_of_sigpipe()
    except (AttributeError, OSError, ValueError):  # reported by whoever wrote it
        pass


def _abort_open_outputs() -> None:
    """Drop the outputs the command neither committed nor dropped
    (:func:`fasteval.io.atomic.abort_open`), if it made any."""
    atomic = sys.modules.get("fasteval.io.atomic")
    if atomic is not None:
        atomic.abort_open()


def abort_on_sigterm() -> None:
    """Turn SIGTERM into ``SystemExit(143)`` (in the main thread), so that a job stopped
    by ``kill`` or a scheduler unwinds as after Ctrl-C: outputs being written are
    removed (:func:`fasteval.io.atomic.atomic_path`), none is left half-written and no
    temporary file stays behind."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    from fasteval import _stop

    def handler(signum, frame):
        _stop.request(signum)  # raised again by the long loops if this one is lost
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


class _ClosedStream:
    """A standard stream whose descriptor was closed when the process started
    (``fasteval eval ... >&-``), where Python leaves ``sys.stdout`` or ``sys.stderr`` None.

    Standard output raises ``OSError(EBADF)`` on the first write, so that a command that
    prints its results fails with one line on standard error instead of a traceback;
    standard error (``discard=True``) drops what is written to it, as there is nowhere to
    report anything, and the exit status still tells.

    Examples
    --------
    >>> _ClosedStream(discard=True).write("fasteval: error: ...\\n")
    21
    >>> _ClosedStream(discard=False).write("map 0.25\\n")
    Traceback (most recent call last):
    ...
    OSError: [Errno 9] Bad file descriptor
    """

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, *, discard: bool) -> None:
        self.discard = discard

    def write(self, text: str) -> int:
        if self.discard:
            return len(text)
        import errno

        raise OSError(errno.EBADF, os.strerror(errno.EBADF))

    def flush(self) -> None:
        """Nothing is buffered."""

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        import errno

        raise OSError(errno.EBADF, os.strerror(errno.EBADF))


def _stand_in_closed_streams() -> None:
    """Put a :class:`_ClosedStream` where standard output or error cannot be written: its
    descriptor was closed when the process started (``>&-``: Python leaves the stream None)
    or is open for reading only (a shell wrapper's script left on it). A closed descriptor
    is first opened on the null device, so that no file the job opens takes its number and
    receives what a library prints to it."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            import fcntl

            writable = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY
        except ImportError:  # (no fcntl: Windows) trust what Python found
            writable = getattr(sys, name) is not None
        except OSError:  # closed
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            writable = False
        if not writable or getattr(sys, name) is None:
            setattr(sys, name, _ClosedStream(discard=name == "stderr"))


def _exit_now(status: int) -> NoReturn:
    """Flush the standard streams and logging, then end the process with ``status`` at
    once (``os._exit``): no interpreter teardown. Only for the console entry point, after
    the command has finished (files closed, results renamed into place)."""
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            if stream is sys.stdout:
                _die_of_sigpipe()
        except (OSError, ValueError):  # closed stream: nothing more can be written
            status = status or 1
    os._exit(status)


class _Parser(argparse.ArgumentParser):
    """argparse's parser with usage errors on one line (``fasteval eval: error: ...``),
    pointing to ``--help`` instead of printing the usage above it; exit status 2.

    Examples
    --------
    >>> _Parser(prog="fasteval x").error("argument -l: invalid int value: '1.5'")
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def _print_message(self, message: str, file: Any = None) -> None:
        """argparse's, except that a closed output pipe is raised, not ignored (the
        program then ends as SIGPIPE ends a Unix tool)."""
        if message:
            try:
                (file or sys.stderr).write(message)
            except BrokenPipeError:
                raise
            except (AttributeError, OSError):
                pass


def _load(name: str):
    module, _ = SUBCOMMANDS[name]
    return importlib.import_module(f"fasteval.cli.{module}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fasteval`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "trec-eval":
        # trec_eval's own flag grammar (getopt style: -l2, -mP.5) is parsed by the module itself.
        return _guard(lambda: _load("trec-eval").main(argv[1:]))
    parser = _Parser(prog="fasteval", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, (_, help_text) in SUBCOMMANDS.items():
        if name == chosen:
            _load(name).add_parser(sub)
        else:
            sub.add_parser(name, help=help_text)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    from fasteval.progress import quiet

    with quiet(bool(getattr(args, "quiet", False))):  # --quiet: no compile notice either
        return _guard(lambda: _load(args.command).run(args), command=args.command)


_MEMORY_ADVICE = {"eval": " (try --memory-limit or --max-rows-per-chunk)"}
"""What to try when a command runs out of memory, for the commands that have a knob."""


def _guard(fn, command: str | None = None) -> int:
    """Run a subcommand; a user error, a failed read or write (a full disk, a missing file)
    or a number out of range is one line on stderr and exit status 2, never a traceback.
    Standard output is flushed here, so that a write that fails is reported too. A warning
    is one line on stderr too (``fasteval: warning: ...``)."""
    import warnings

    shown = warnings.showwarning
    warnings.showwarning = _one_line_warning
    _WARNED.clear()
    try:
        return _run_guarded(fn, _MEMORY_ADVICE.get(command or "", ""))
    finally:
        warnings.showwarning = shown


_WARNED: set[str] = set()
"""The warnings a command has printed: each is printed once, whichever of the places that
check the same input (a measure name is parsed by the command and by the evaluator) warns."""


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` of the commands: the message alone, on one line, once."""
    from fasteval._words import one_line

    text = one_line(" ".join(str(message).split()))
    if text in _WARNED:
        return
    _WARNED.add(text)
    print(f"fasteval: warning: {text}", file=sys.stderr if file is None else file)


def _run_guarded(fn, memory_advice: str = "") -> int:
    from fasteval.errors import FastevalError, first_line

    try:
        status = int(fn() or 0)
    except FastevalError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        print("fasteval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError as exc:  # standard output's reader is gone: stop, quietly
        return PIPE_CLOSED if _stdout_reader_gone() else _fail(_os_error_text(exc))
    except OSError as exc:
        return _fail(_os_error_text(exc))
    except OverflowError as exc:
        return _fail(f"a number is out of range ({first_line(exc)})")
    except MemoryError:
        return _fail(f"out of memory{memory_advice}")
    except Exception as exc:
        polars = sys.modules.get("polars")
        if polars is not None and isinstance(exc, polars.exceptions.InvalidOperationError):
            return _fail(first_line(exc))  # a value that does not fit its type (an id above 2^63...)
        raise
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return PIPE_CLOSED
    except OSError as exc:
        return _fail(_os_error_text(exc, "standard output"))
    return status


def _fail(message: str) -> int:
    """Print ``message`` as the one error line (names in it escaped: :func:`fasteval._words.one_line`)."""
    from fasteval._words import one_line

    print(f"fasteval: error: {one_line(message)}", file=sys.stderr)
    return 2


def _os_error_text(exc: OSError, place: str | None = None) -> str:
    """``file: reason`` of an operating-system error (``place`` when it names no file)."""
    from fasteval.io.atomic import describe_os_error

    where = [str(os.fspath(f)) for f in (exc.filename, exc.filename2) if f is not None]
    place = " -> ".join(where) if where else place
    return f"{place}: {describe_os_error(exc)}" if place else describe_os_error(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
