"""Run a coroutine to completion from synchronous code, inside or outside an event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_POLL_SECONDS = 0.1  # how often a waiting caller looks for a pending Ctrl-C
_lock = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """The process-wide event loop (in a daemon thread) that runs synchronous judge calls.

    One long-lived loop means HTTP clients, connection pools and the async clients inside
    Haystack generators stay usable from one ``run()`` call to the next.
    """
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed() or not _loop.is_running():
            loop = asyncio.new_event_loop()
            started = threading.Event()
            loop.call_soon(started.set)
            thread = threading.Thread(target=loop.run_forever, name="fasteval-judge-loop", daemon=True)
            thread.start()
            started.wait()
            _loop = loop
        return _loop


def run_sync(factory: Callable[[], Awaitable[T]]) -> T:
    """Run ``factory()`` on fasteval's background event loop and wait for the result.

    Works the same from a plain script and from code that already runs an event loop
    (Jupyter, an async web handler): the coroutine never runs on the caller's loop, so there
    is no "event loop is already running" error. Ctrl-C cancels the coroutine.

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
    loop = background_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        # Called from a coroutine on the background loop itself: blocking it would deadlock.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="fasteval-judge") as pool:
            return pool.submit(lambda: asyncio.run(factory())).result()  # type: ignore[arg-type]
    future = asyncio.run_coroutine_threadsafe(factory(), loop)  # type: ignore[arg-type]
    try:
        # Waiting in short slices keeps Ctrl-C prompt: a SIGINT that the kernel hands to
        # another thread (polars', numba's, the loop's) does not wake a blocked lock wait,
        # and Python raises KeyboardInterrupt only when the main thread runs again.
        while not future.done():
            concurrent.futures.wait([future], timeout=_POLL_SECONDS)
        return future.result()
    except BaseException:
        future.cancel()
        raise
