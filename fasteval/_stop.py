"""A stop asked for by a signal, seen again by the loops that run long.

The ``fasteval`` command turns SIGTERM into ``SystemExit`` in the main thread
(:func:`fasteval.cli.abort_on_sigterm`). Python raises it wherever the main thread is when
the signal arrives, and there it can be lost: code of a compiled extension that is running
at that moment (an import of a Cython module, a callback inside a C library) may clear the
exception and carry on, and the job would then run to its end as if never stopped. So the
handler also records the stop here, and the loops of long jobs (the blocks of
``datasets synth``, the chunks of a batch job) call :func:`check` once per step: a stop
that was lost is raised again there, at a point where unwinding removes the job's partial
outputs as usual.
"""

from __future__ import annotations

_signal: int | None = None


def request(signum: int) -> None:
    """Record that signal ``signum`` asked the process to stop."""
    global _signal
    _signal = signum


def check() -> None:
    """Raise ``SystemExit(128 + signum)`` if a signal asked the process to stop.

    Examples
    --------
    >>> check()  # nothing asked for a stop
    """
    if _signal is not None:
        raise SystemExit(128 + _signal)
