"""Run a coroutine to completion from synchronous code, inside or outside an event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def run_sync(factory: Callable[[], Awaitable[T]]) -> T:
    """Run ``factory()`` on a fresh event loop and return its result.

    From a plain script this is ``asyncio.run``. When an event loop is already running in
    this thread (Jupyter, an async web handler), the coroutine runs on a new loop in a
    helper thread and this call blocks until it finishes, so synchronous ``run()`` methods
    work everywhere.

    Examples
    --------
    >>> async def answer():
    ...     return 42
    >>> run_sync(answer)
    42
    >>> async def inside_a_loop():
    ...     return run_sync(answer)
    >>> asyncio.run(inside_a_loop())
    42
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())  # type: ignore[arg-type]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="fasteval-judge") as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()  # type: ignore[arg-type]
