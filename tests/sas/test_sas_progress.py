"""The progress bar: silent off a terminal, counts and rate when drawn."""

from __future__ import annotations

import io

from fasteval.sas.progress import Progress


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_silent_when_not_a_terminal():
    stream = io.StringIO()
    bar = Progress(10_000, "embedding", stream=stream)
    bar.update(10_000)
    bar.close()
    assert stream.getvalue() == "" and bar.done == 10_000


def test_terminal_default_depends_on_size():
    assert Progress(Progress.MIN_ITEMS, stream=FakeTTY()).enabled
    assert not Progress(Progress.MIN_ITEMS - 1, stream=FakeTTY()).enabled
    assert Progress(5, enabled=True, stream=io.StringIO()).enabled


def test_draws_counts_and_finishes_line():
    stream = FakeTTY()
    bar = Progress(4, "embedding", enabled=True, stream=stream)
    bar.update(2)
    bar.update(2)
    bar.close()
    text = stream.getvalue()
    assert text.endswith("\n")
    last = text.strip().split("\r")[-1]
    assert last.startswith("embedding [" + "#" * 30 + "] 4/4 ")
