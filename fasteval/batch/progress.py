"""A small terminal progress bar: rows and queries per second, ETA.

It draws on stderr only when stderr is a terminal, only after the job has run for
``delay`` seconds (short jobs stay silent), and never when disabled (``--quiet``).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _rate(n: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= div:
            return f"{n / div:.1f}{unit}"
    return f"{n:.0f}"


def _clock(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """Progress of a batch job over ``total`` units (rows or queries).

    Parameters
    ----------
    total : int or None
        Expected total in ``unit`` (None: unknown, no ETA).
    unit : str
        What ``total`` counts (``"rows"`` or ``"queries"``).
    enabled : bool
        False (``--quiet``) never draws.
    stream : file, optional
        Where to draw (stderr).
    delay : float
        Seconds before the first draw.

    Examples
    --------
    >>> import io
    >>> buf = io.StringIO()
    >>> with Progress(total=10, unit="rows", stream=buf, delay=0, force=True) as bar:
    ...     bar.update(rows=10, queries=2)
    >>> "100%" in buf.getvalue()
    True
    """

    def __init__(
        self,
        total: int | None = None,
        unit: str = "rows",
        *,
        enabled: bool = True,
        stream: TextIO | None = None,
        delay: float = 2.0,
        interval: float = 0.2,
        force: bool = False,
    ) -> None:
        self.total = total
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.enabled = bool(enabled) and (force or bool(isatty()))
        self.delay = delay
        self.interval = interval
        self.rows = 0
        self.queries = 0
        self.start = time.perf_counter()
        self._last = 0.0
        self._drawn = False

    def __enter__(self) -> Progress:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(final=exc[0] is None)

    @property
    def done(self) -> int:
        return self.rows if self.unit == "rows" else self.queries

    def update(self, rows: int = 0, queries: int = 0) -> None:
        """Add ``rows`` and ``queries`` processed since the last call."""
        self.rows += int(rows)
        self.queries += int(queries)
        self._maybe_draw()

    def update_to(self, done: int) -> None:
        """Set the count of ``unit`` done so far."""
        if self.unit == "rows":
            self.rows = int(done)
        else:
            self.queries = int(done)
        self._maybe_draw()

    def _maybe_draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        elapsed = now - self.start
        if not force and (elapsed < self.delay or now - self._last < self.interval):
            return
        self._last = now
        self._draw(elapsed)

    def _draw(self, elapsed: float) -> None:
        el = max(elapsed, 1e-9)
        parts = []
        if self.total:
            frac = min(self.done / self.total, 1.0)
            width = 24
            fill = int(frac * width)
            parts.append(f"{frac * 100:3.0f}% [{'#' * fill}{'.' * (width - fill)}]")
        if self.rows:
            parts.append(f"{_rate(self.rows)} rows {_rate(self.rows / el)}/s")
        if self.queries:
            parts.append(f"{_rate(self.queries)} queries {_rate(self.queries / el)}/s")
        parts.append(_clock(elapsed))
        if self.total and 0 < self.done < self.total:
            parts.append(f"ETA {_clock(elapsed * (self.total - self.done) / self.done)}")
        self.stream.write("\r" + "  ".join(parts) + "\033[K")
        self.stream.flush()
        self._drawn = True

    def close(self, final: bool = True) -> None:
        """Draw the last state (if anything was drawn, or ``final`` on a drawn bar) and end the line."""
        if not self.enabled:
            return
        if self._drawn or (final and time.perf_counter() - self.start >= self.delay):
            self._draw(time.perf_counter() - self.start)
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
