"""Counts in messages, with the noun in the number the count asks for."""

from __future__ import annotations


def counted(count: int, one: str, many: str | None = None) -> str:
    """``count`` and its noun: ``one`` for exactly 1, else ``many`` (default ``one + "s"``).

    Examples
    --------
    >>> counted(1, "query", "queries"), counted(0, "query", "queries"), counted(2, "row")
    ('1 query', '0 queries', '2 rows')
    """
    return f"{count} {one if count == 1 else (many or one + 's')}"
