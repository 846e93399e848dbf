"""The two test profiles: ``quick`` (the README's test command) and ``full``.

``quick`` keeps every oracle and property but runs each generated test on fewer cases;
``full`` (``FASTEVAL_TESTS=full``, which ``.ci/run`` also runs) gives every property its
full example count, every random sweep its full size, and runs the tests marked ``slow``
(the bounds-checked kernels, kill tests, the large fuzz). Tests size themselves with
:func:`examples` / :func:`cases`; ``tests/conftest.py`` marks them for ``-m deep``.
"""

from __future__ import annotations

import os

FULL = os.environ.get("FASTEVAL_TESTS", "quick").strip().lower() == "full"
"""Whether this run is the ``full`` profile."""


def examples(full: int, quick: int | None = None) -> int:
    """Hypothesis examples for a property: ``full`` in the full profile, else ``quick``
    (default a quarter of ``full``, at least 10)."""
    if FULL:
        return full
    return quick if quick is not None else max(10, full // 4)


def cases(full: int, quick: int | None = None) -> int:
    """Random cases for a sweep written as a loop: ``full`` in the full profile, else
    ``quick`` (default a fifth of ``full``, at least 20)."""
    if FULL:
        return full
    return quick if quick is not None else max(20, full // 5)
