"""A small progress bar on stderr, silent unless stderr is a terminal (or asked for)."""

from __future__ import annotations

import sys
import time


class Progress:
    """Count items done out of ``total``; redraw at most ten times a second.

    Parameters
    ----------
    total : int
        Number of items.
    label : str
        Text before the bar.
    enabled : bool, optional
        ``None`` (default) shows the bar only when stderr is a terminal and ``total`` is large.

    Examples
    --------
    >>> bar = Progress(10, "embedding", enabled=False)
    >>> bar.update(10); bar.done
    10
    >>> bar.close()
    """

    MIN_ITEMS = 2048

    def __init__(self, total: int, label: str = "", enabled: bool | None = None, stream=None) -> None:
        self.total = int(total)
        self.label = label
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.wanted(enabled, total, self.stream)
        self._t0 = time.perf_counter()
        self._last = 0.0

    @classmethod
    def wanted(cls, enabled: bool | None, total: int, stream=None) -> bool:
        """Whether to draw: ``enabled`` if given, else a terminal and at least MIN_ITEMS items."""
        if enabled is not None:
            return bool(enabled)
        stream = stream if stream is not None else sys.stderr
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        return tty and total >= cls.MIN_ITEMS

    def update(self, n: int) -> None:
        """Add ``n`` finished items."""
        self.done += n
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last >= 0.1 or self.done >= self.total:
            self._last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        frac = self.done / self.total if self.total else 1.0
        width = 30
        filled = int(width * frac)
        rate = self.done / max(now - self._t0, 1e-9)
        self.stream.write(
            f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
            f"{self.done}/{self.total} {rate:,.0f}/s"
        )
        self.stream.flush()

    def close(self) -> None:
        """Finish the line (when drawing)."""
        if self.enabled:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()
