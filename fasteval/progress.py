"""Progress on stderr for every command: tqdm, drawn only when a job runs long enough.

One :class:`Progress` serves the batch evaluation, the dataset generator, the SAS encoder
and the LLM judge, with one behaviour:

* it writes to stderr (or the ``stream`` given), never to stdout;
* it stays silent for jobs shorter than ``delay`` seconds, and always when disabled
  (``--quiet``, ``progress_bar=False``);
* on a terminal it draws a tqdm bar, redrawn in place at most every ``interval`` seconds;
* elsewhere (a log file, a pipe, a notebook's captured stderr) it writes plain lines
  without carriage returns, one every ``log_interval`` seconds and one at the end.

tqdm is imported at the first draw, so a short job never loads it.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO

from fasteval._words import one_line

LOG_INTERVAL = 10.0
"""Seconds between two lines when stderr is not a terminal."""


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is an open terminal.

    Examples
    --------
    >>> import io
    >>> is_terminal(io.StringIO())
    False
    """
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class _Lines:
    """A file for tqdm that turns each redraw into one plain line (no ``\\r``), skipping a
    line equal to the one before (the final draw repeats the last one)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.last = ""

    def write(self, s: str) -> None:
        line = s.replace("\r", "").strip()
        if line and line != self.last:
            self.last = line
            self.stream.write(line + "\n")

    def flush(self) -> None:
        self.stream.flush()


_SCALED = 100_000
"""Totals from which counts are shown scaled (``2.50M/9.56M``), below as written."""

_TQDM: Any = None


def _tqdm_class() -> Any:
    """tqdm's bar class without its monitor thread (imported on first use)."""
    global _TQDM
    if _TQDM is None:
        from tqdm import tqdm

        class _Bar(tqdm):  # type: ignore[misc, valid-type]
            monitor_interval = 0  # no monitor thread: every draw comes from an update

        _TQDM = _Bar
    return _TQDM


class Progress:
    """Progress of a job over ``total`` units, drawn by tqdm on stderr.

    Parameters
    ----------
    total : int or None
        Expected count of ``unit`` (None: unknown, no percentage or ETA).
    desc : str
        Label before the bar.
    unit : str
        What is counted (``"rows"``, ``"queries"``, ``"texts"``).
    enabled : bool or None
        False (``--quiet``) never draws; True or None draws once ``delay`` has passed.
    stream : file, optional
        Where to draw (default: ``sys.stderr`` as it is when the bar is created).
    delay : float
        Seconds before the first draw: shorter jobs stay silent.
    interval : float
        Least seconds between two redraws on a terminal.
    log_interval : float
        Least seconds between two lines elsewhere.
    terminal : bool, optional
        Draw as on a terminal (True) or as log lines (False); default: whether ``stream``
        is a terminal.

    Examples
    --------
    >>> import io
    >>> log = io.StringIO()
    >>> with Progress(total=10, unit="rows", stream=log, delay=0, log_interval=0) as bar:
    ...     bar.update(10, queries=2)
    >>> line = log.getvalue().splitlines()[-1]
    >>> "100%" in line and "10/10" in line and "2 queries" in line and "\\r" not in log.getvalue()
    True
    >>> quiet = io.StringIO()
    >>> with Progress(total=10, stream=quiet, enabled=False) as bar:
    ...     bar.update(10)
    >>> quiet.getvalue(), bar.n
    ('', 10)
    """

    def __init__(
        self,
        total: int | None = None,
        desc: str | None = None,
        unit: str = "rows",
        *,
        enabled: bool | None = True,
        stream: TextIO | None = None,
        delay: float = 2.0,
        interval: float = 0.2,
        log_interval: float = LOG_INTERVAL,
        terminal: bool | None = None,
    ) -> None:
        self.total = int(total) if total else None
        self.desc = None if desc is None else one_line(desc)  # (a name: one line, no escape codes)
        self.unit = unit
        self.enabled = enabled is not False
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = is_terminal(self.stream) if terminal is None else bool(terminal)
        self.delay = float(delay)
        self.interval = float(interval) if self.terminal else float(log_interval)
        self.n = 0
        self.queries = 0
        self.start = time.time()  # tqdm's clock
        self._bar: Any = None
        self._closed = False
        self._shown = (-1, -1)  # the counts last drawn
        self._next = self.start + self.delay  # the first draw, then each refresh

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, n: int = 0, queries: int = 0) -> None:
        """Add ``n`` units (and ``queries``, shown beside them) done since the last call
        (the batch driver's ``progress(rows, queries)`` callback)."""
        self.n += int(n)
        self.queries += int(queries)
        self._maybe_draw()

    def update_to(self, done: int) -> None:
        """Set the count of units done so far."""
        self.n = int(done)
        self._maybe_draw()

    def _maybe_draw(self) -> None:
        if not self.enabled or self._closed:
            return
        now = time.time()
        if now < self._next:
            return
        self._next = now + self.interval
        if self._bar is None:
            self._open()
        bar = self._bar
        if self.queries:
            bar.set_postfix_str(f"{self.queries} queries", refresh=False)
        bar.n = self.n
        bar.refresh()
        bar.last_print_n, bar.last_print_t = self.n, now
        self._shown = (self.n, self.queries)

    def _open(self) -> None:
        log = not self.terminal
        bar = _tqdm_class()(
            total=self.total, desc=self.desc, unit=f" {self.unit}",
            unit_scale=(self.total or _SCALED) >= _SCALED,
            file=_Lines(self.stream) if log else self.stream, ascii=True if log else None,
            dynamic_ncols=not log, leave=True, delay=float("inf"),  # drawn by us, not at init
        )
        bar.start_t = bar.last_print_t = self.start  # the job's start, not the first draw's
        bar.delay = 0.0
        self._bar = bar

    def close(self) -> None:
        """Draw the final state and end the line, if anything was drawn (off a terminal,
        only when the counts moved since the last line)."""
        self._closed = True
        bar, self._bar = self._bar, None
        if bar is None:
            return
        if self.queries:
            bar.set_postfix_str(f"{self.queries} queries", refresh=False)
        bar.n = self.n
        if not self.terminal and self._shown == (self.n, self.queries):
            bar.leave = False  # a log already holds the last state: no second line
        bar.close()


QUIET_ENV = "FASTEVAL_QUIET"
"""Environment variable that, set to anything but ``""`` or ``"0"``, silences
:func:`note` for the whole process (the compile notice of
:mod:`fasteval._jit`)."""

_quiet_depth = 0
"""How many :func:`quiet` blocks are open (a command run with ``--quiet``)."""


def is_quiet() -> bool:
    """Whether one-line notes on stderr (:func:`note`) are silenced: inside a
    :func:`quiet` block or with ``FASTEVAL_QUIET`` set (not ``0``).

    Examples
    --------
    >>> with quiet():
    ...     is_quiet()
    True
    """
    import os

    return _quiet_depth > 0 or os.environ.get(QUIET_ENV, "") not in ("", "0")


@contextlib.contextmanager
def quiet(enabled: bool = True) -> Iterator[None]:
    """Silence :func:`note` inside the block when ``enabled`` (a command's ``--quiet``).

    Examples
    --------
    >>> import io
    >>> err = io.StringIO()
    >>> with quiet():
    ...     note("compiling", stream=err)
    >>> err.getvalue()
    ''
    """
    global _quiet_depth
    if not enabled:
        yield
        return
    _quiet_depth += 1
    try:
        yield
    finally:
        _quiet_depth -= 1


def note(text: str, stream: TextIO | None = None) -> None:
    """Write ``text`` as one line on stderr (or ``stream``), flushed, unless
    :func:`is_quiet`. Line breaks and other control characters in ``text`` are escaped,
    so the note stays one line; a closed or missing stream is ignored.

    Examples
    --------
    >>> import io
    >>> err = io.StringIO()
    >>> note("fasteval: two\\nlines", stream=err)
    >>> err.getvalue()
    'fasteval: two\\\\nlines\\n'
    """
    if is_quiet():
        return
    line = one_line(text)
    out = sys.stderr if stream is None else stream
    try:
        out.write(line + "\n")
        out.flush()
    except (AttributeError, OSError, ValueError):  # no stderr, or closed: nowhere to say it
        pass
